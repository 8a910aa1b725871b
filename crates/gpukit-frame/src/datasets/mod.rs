//! Generated data sets for lessons and benchmarks (nothing is downloaded).

pub mod pageviews;
mod splitmix;
pub mod timeseries;
