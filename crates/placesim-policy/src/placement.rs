//! Placement policies: which vnodes a request takes.

mod first_fit;
mod moab;
mod pbs;

pub use first_fit::{FirstFit, filter_holds};
pub use moab::{MinLoss, MoabNodeSets, NodeSetPlus, NodeSetSettings, PriorityType};
pub use pbs::{PbsPsets, PsetSettings};
