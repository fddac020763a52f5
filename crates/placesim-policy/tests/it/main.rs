//! Integration tests of the queue disciplines and placement, through the real kernel.

mod common;
mod placement;
mod real_traces;
mod reservation;
mod schedules;
