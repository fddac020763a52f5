//! Queue disciplines: which waiting jobs start now.

mod easy;
mod fcfs;

pub use easy::{Easy, Reservation};
pub use fcfs::Fcfs;

use placesim_core::{Allocation, Decision, JobId, PlacementPolicy, SchedContext, Scratch};

/// Starts queue heads in order while they fit, taking each from `scratch` and appending a
/// decision. Returns the position of the first head that does not fit (the queue length if all
/// fit). Shared by every discipline, as step 1 of FCFS and of EASY.
pub(crate) fn start_heads(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    scratch: &mut Scratch<'_>,
    decisions: &mut Vec<Decision>,
) -> usize {
    for (pos, &job) in ctx.queue.iter().enumerate() {
        match placement.place(ctx.workload.request_of(job), scratch) {
            Some(allocation) => start(job, allocation, scratch, decisions),
            None => return pos,
        }
    }
    ctx.queue.len()
}

/// Takes `allocation` in the scratch view and records the decision to start `job` on it.
pub(crate) fn start(
    job: JobId,
    allocation: Allocation,
    scratch: &mut Scratch<'_>,
    decisions: &mut Vec<Decision>,
) {
    scratch.take(&allocation);
    decisions.push(Decision::Start { job, allocation });
}
