//! Placement policies: which vnodes a request takes.

mod first_fit;
mod moab;
mod pbs;

pub use first_fit::{FirstFit, filter_holds};
pub use moab::{
    DelayMode, DelayReference, MinLoss, MoabNodeSets, NodeSetOptions, NodeSetPlus, NodeSetSettings,
    PriorityType,
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

/// For invariant checks: whether every vnode of `allocation` lies in one of the sets named
/// `names`, given every set as (name, vnodes in ascending order).
pub(crate) fn within_named_sets<'a>(
    allocation: &Allocation,
    names: &[&str],
    sets: impl Iterator<Item = (&'a str, &'a [placesim_core::VnodeId])> + Clone,
) -> Result<(), String> {
    for &v in &allocation.vnodes {
        let inside = sets
            .clone()
            .any(|(name, vnodes)| names.contains(&name) && vnodes.binary_search(&v).is_ok());
        if !inside {
            return Err(format!(
                "vnode {v} of the allocation lies outside its set {}",
                names.join("+")
            ));
        }
    }
    Ok(())
}
