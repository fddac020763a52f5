//! The request language: every construct, every rule, round trips, and no panics.

mod common;
mod fuzz;
mod invalid;
mod lowering;
mod parsing;
mod roundtrip;
