//! Placement policies: which vnodes a request takes.

mod first_fit;

pub use first_fit::FirstFit;
