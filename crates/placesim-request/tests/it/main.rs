//! The request language: every construct, every rule, round trips, and no panics.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

mod common;
mod fuzz;
mod invalid;
mod lowering;
mod parsing;
mod roundtrip;
