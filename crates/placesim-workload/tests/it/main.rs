//! Integration tests of the SWF reader: conventions, and bad input with exact messages.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

mod bad_input;
mod conventions;
mod generate;
