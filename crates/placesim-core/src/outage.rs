//! Vnode outages: when vnodes leave and rejoin service, and what happens to their jobs.

use crate::ids::VnodeId;
use crate::time::SimTime;

/// A vnode out of service from `down` until `up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Outage {
    /// The vnode.
    pub vnode: VnodeId,
    /// When it goes down.
    pub down: SimTime,
    /// When it comes back (after `down`).
    pub up: SimTime,
}

/// What happens to a job running on a vnode that goes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NodeFailurePolicy {
    /// It goes back to the queue, in its place by submit time, as PBS's node_fail_requeue
    /// does; the work done is lost. The default.
    #[default]
    Requeue,
    /// It ends there, failed.
    Kill,
}

/// One end of an outage, in the order the kernel applies them: by time, vnodes coming back
/// before vnodes going down, then by vnode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Edge {
    pub(crate) time: SimTime,
    /// `false` for up (sorts first), `true` for down.
    pub(crate) down: bool,
    pub(crate) vnode: VnodeId,
}

/// The edges of `outages`, sorted; outages that end before they start are dropped.
pub(crate) fn edges(outages: &[Outage]) -> Vec<Edge> {
    let mut edges: Vec<Edge> = outages
        .iter()
        .filter(|o| o.up > o.down)
        .flat_map(|o| {
            [
                Edge {
                    time: o.down,
                    down: true,
                    vnode: o.vnode,
                },
                Edge {
                    time: o.up,
                    down: false,
                    vnode: o.vnode,
                },
            ]
        })
        .collect();
    edges.sort_unstable();
    edges
}
