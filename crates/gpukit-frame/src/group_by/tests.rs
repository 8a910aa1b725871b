//! Frame-level tests of grouping against a host implementation.
