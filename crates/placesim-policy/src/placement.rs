//! Placement policies: which vnodes a request takes.

mod first_fit;
mod pbs;

pub use first_fit::{FirstFit, filter_holds};
pub use pbs::{PbsPsets, PsetSettings};
