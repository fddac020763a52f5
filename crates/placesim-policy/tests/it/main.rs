//! Integration tests of the queue disciplines and placement, through the real kernel.

// Test helpers unwrap what the test itself set up.
#![allow(clippy::unwrap_used)]

mod common;
mod indirect;
mod mixed;
mod moab_reservations;
mod nodesets;
mod order;
mod outages;
mod placement;
mod psets;
mod real_traces;
mod requests;
mod reservation;
mod runtime;
mod schedules;
mod site_reservations;
