//! Placement policies: which vnodes a request takes.
//!
//! [`PlacementKind`] is the one list of them, by the names scenario files use.

mod first_fit;
mod limited;
mod moab;
mod pbs;
mod timeline;

pub use first_fit::{FirstFit, NodeSort, NodeSortBy, NodeSortLine, filter_holds};
pub use limited::Limited;
pub use moab::{
    DelayMode, DelayReference, MinLoss, MoabNodeSets, NodeSetOptions, NodeSetPlus, NodeSetSettings,
    PriorityType,
};
pub use pbs::{PbsPsets, PsetSettings};
pub use timeline::PbsTimeline;

use placesim_core::{Allocation, Chunk, FilterExpr, Request};

/// A placement policy, by the name a scenario's `run.placement` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlacementKind {
    /// `first-fit`: chunks on the first vnodes that fit, in cluster order, with no grouping.
    FirstFit,
    /// `pbs`: PBS placement sets from `[pbs]` and the jobs' `place=group=` (first fit inside
    /// a set).
    Pbs,
    /// `moab`: Moab node sets from `[moab]`, class defaults and the jobs' `nodeset=`.
    Moab,
}

impl PlacementKind {
    /// Every placement, in the order listings and messages show them.
    pub const ALL: [PlacementKind; 3] = [
        PlacementKind::FirstFit,
        PlacementKind::Pbs,
        PlacementKind::Moab,
    ];

    /// The name in scenario files.
    pub const fn name(self) -> &'static str {
        match self {
            PlacementKind::FirstFit => "first-fit",
            PlacementKind::Pbs => "pbs",
            PlacementKind::Moab => "moab",
        }
    }

    /// What the placement adds to the discipline's name in output rows (nothing for first
    /// fit, so plain replays keep the discipline's name).
    pub const fn policy_suffix(self) -> &'static str {
        match self {
            PlacementKind::FirstFit => "",
            PlacementKind::Pbs => "+pbs-psets",
            PlacementKind::Moab => "+moab-nodesets",
        }
    }
}

placesim_core::named_list!(PlacementKind, "placement");

/// Where a pool of sets comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolSource {
    /// The server's `node_group_key`, over the vnodes associated with no queue.
    Server,
    /// A queue's pool (by index): its own `node_group_key`, or the server's over its vnodes.
    Queue(usize),
    /// The sets a job's `place=group=` or per-chunk `group=` asks for, over the node array
    /// of the jobs of queue `queue` (its associated vnodes), or of jobs of no such queue
    /// (`None`: the vnodes associated with no queue).
    JobKey {
        /// The queue whose node array the sets divide, if it has associated vnodes.
        queue: Option<usize>,
    },
    /// Moab's node sets, in NODESETLIST order (every feature set when the list is empty).
    NodeSets,
}

/// A pool of sets a placement built, as its runs use them: what `placesim check` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltPool<'a> {
    /// Where it comes from.
    pub source: PoolSource,
    /// The keys that divide it (none for Moab's node sets).
    pub keys: Vec<placesim_core::ResourceId>,
    /// Its sets, in the placement's creation order.
    pub sets: Vec<BuiltSet<'a>>,
}

/// One set a placement built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltSet<'a> {
    /// Its name, as job labels and comments give it: `switch=s1`, a Moab feature.
    pub name: &'a str,
    /// Its vnodes, in cluster order.
    pub vnodes: &'a [placesim_core::VnodeId],
}

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

/// For invariant checks: whether every vnode of `allocation` lies where its
/// [`placesim_core::Within`] promises, `set(i)` giving the placement's set `i` as (name,
/// vnodes in any order: PBS's sets keep `node_sort_key`'s order, cluster order otherwise).
pub(crate) fn within_sets<'a>(
    allocation: &Allocation,
    set: impl Fn(u32) -> (&'a str, &'a [placesim_core::VnodeId]),
) -> Result<(), String> {
    use placesim_core::Within;
    let ids: &[u32] = match &allocation.within {
        Within::Anywhere | Within::Borrowing(_) => return Ok(()),
        Within::Set(i) => std::slice::from_ref(i),
        Within::Sets(ids) => ids,
    };
    // Each set's members in ascending order, sorted here only when the set is not already.
    let members: Vec<std::borrow::Cow<'_, [placesim_core::VnodeId]>> = ids
        .iter()
        .map(|&i| {
            let vnodes = set(i).1;
            if vnodes.is_sorted() {
                std::borrow::Cow::Borrowed(vnodes)
            } else {
                let mut sorted = vnodes.to_vec();
                sorted.sort_unstable();
                std::borrow::Cow::Owned(sorted)
            }
        })
        .collect();
    for v in allocation.vnodes() {
        if !members.iter().any(|m| m.binary_search(&v).is_ok()) {
            let names: Vec<&str> = ids.iter().map(|&i| set(i).0).collect();
            return Err(format!(
                "vnode {v} of the allocation lies outside its set {}",
                names.join("+")
            ));
        }
    }
    Ok(())
}
