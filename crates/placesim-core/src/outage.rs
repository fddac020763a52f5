//! Vnode outages: when vnodes leave and rejoin service, and what happens to their jobs.

use crate::event::Event;
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

/// Whether a vnode is in service, for the books that count what is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Service {
    /// It went down.
    Down,
    /// It came back.
    Up,
}

/// The events of `outages` (each a [`Event::VnodeDown`] and a [`Event::VnodeUp`]), sorted as
/// the kernel applies them: by time, then in [`Event`]'s class order (vnodes coming back
/// before vnodes going down), then by vnode. Outages that end before they start are dropped.
pub(crate) fn events(outages: &[Outage]) -> Vec<(SimTime, Event)> {
    let mut events: Vec<(SimTime, Event)> = outages
        .iter()
        .filter(|o| o.up > o.down)
        .flat_map(|o| {
            [
                (o.down, Event::VnodeDown(o.vnode)),
                (o.up, Event::VnodeUp(o.vnode)),
            ]
        })
        .collect();
    // By time, then by `Event`'s order: its class, then the vnode.
    events.sort_unstable();
    events
}
