//! Integration tests of the metrics crate, as one test binary: each binary links polars, so one
//! rather than two saves a link and about 90 MB of target directory in a debug build.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

mod metrics;
mod schema;
