//! Generated data sets for lessons and benchmarks (nothing is downloaded).

pub mod pageviews;
pub mod timeseries;
