//! Placement policies: which vnodes a request takes.

mod first_fit;
mod moab;
mod pbs;

pub use first_fit::{FirstFit, filter_holds};
pub use moab::{
    DelayMode, DelayReference, MinLoss, MoabNodeSets, NodeSetPlus, NodeSetSettings, PriorityType,
};
pub use pbs::{PbsPsets, PsetSettings};

use placesim_core::{Allocation, Chunk, FilterExpr, Request};

/// The first placement `place` finds over `request`'s alternatives: each node_filter
/// alternative in turn (seed 003), and under each, each select specification (`||`, seed
/// 001). Every placement tries them in this order.
pub(crate) fn first_alternative(
    request: &Request,
    mut place: impl FnMut(&[Chunk], Option<&FilterExpr>) -> Option<Allocation>,
) -> Option<Allocation> {
    if request.node_filter.is_empty() {
        return request.selects().find_map(|chunks| place(chunks, None));
    }
    request
        .node_filter
        .iter()
        .find_map(|f| request.selects().find_map(|chunks| place(chunks, Some(f))))
}
