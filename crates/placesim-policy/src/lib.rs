//! Scheduling and placement policies for the placesim kernel.
//!
//! A queue discipline ([`queue::Fcfs`], [`queue::Easy`]) decides which waiting jobs start; it
//! asks a placement policy ([`placement::FirstFit`]) where each would go. Any discipline
//! composes with any placement. Policies read the kernel's state through copy-on-write scratch
//! views and return decisions; they never change the state themselves.

pub mod placement;
pub mod queue;
pub mod spec;

pub use spec::{PolicySpec, UnknownPolicy};
