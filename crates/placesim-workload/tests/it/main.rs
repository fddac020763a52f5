//! Integration tests of the SWF reader: conventions, and bad input with exact messages.

mod bad_input;
mod conventions;
