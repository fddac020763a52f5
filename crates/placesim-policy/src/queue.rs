//! Queue disciplines: which waiting jobs start now.

mod easy;
mod fcfs;

pub use easy::{Easy, Reservation};
pub use fcfs::Fcfs;

use placesim_core::{
    Allocation, ClusterState, ConsumableIdx, Decision, JobId, PlacementPolicy, SchedContext,
    Scratch, ScratchBuf,
};

/// Remembers, per request, whether it can be placed on the cluster when nothing runs. A job
/// whose request cannot can never run, so it must never hold up the queue.
#[derive(Debug, Default)]
pub(crate) struct Runnable {
    empty: Option<ClusterState>,
    buf: ScratchBuf,
    /// Per request id: 0 unknown, 1 can run, 2 never.
    verdict: Vec<u8>,
}

impl Runnable {
    /// Whether `job` is already known never to run: a queue scan passes it over without
    /// trying to place it.
    pub(crate) fn known_never(&self, ctx: &SchedContext<'_>, job: JobId) -> bool {
        let request_id = ctx.workload.job(job).request.index();
        self.verdict.get(request_id) == Some(&2)
    }

    pub(crate) fn can_ever_run(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
    ) -> bool {
        let request_id = ctx.workload.job(job).request.index();
        if self.verdict.len() != ctx.workload.requests().len() {
            self.verdict = vec![0; ctx.workload.requests().len()];
        }
        if self.verdict[request_id] == 0 {
            let cluster = placesim_core::StateView::cluster(ctx.state);
            let empty = match &mut self.empty {
                Some(e)
                    if placesim_core::StateView::cluster(e).n_vnodes() == cluster.n_vnodes() =>
                {
                    e
                }
                slot => slot.insert(ClusterState::new(cluster.clone())),
            };
            let view = Scratch::new(empty, &mut self.buf);
            let fits = placement
                .place(ctx.workload.request_of(job), &view)
                .is_some();
            self.verdict[request_id] = if fits { 1 } else { 2 };
        }
        self.verdict[request_id] == 1
    }
}

/// Starts queue heads in order while they fit, taking each from `scratch` and appending a
/// decision; a job that can never run is passed over. Returns the position of the first job
/// that could run but does not fit now (the queue length if there is none). Step 1 of FCFS and
/// of EASY.
pub(crate) fn start_heads(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    runnable: &mut Runnable,
    scratch: &mut Scratch<'_>,
    decisions: &mut Vec<Decision>,
) -> usize {
    for (pos, &job) in ctx.queue.iter().enumerate() {
        if runnable.known_never(ctx, job) {
            continue;
        }
        if let Some(allocation) = try_place(ctx, placement, scratch, job) {
            start(job, allocation, scratch, decisions);
            continue;
        }
        if runnable.can_ever_run(ctx, placement, job) {
            return pos;
        }
    }
    ctx.queue.len()
}

/// Where `job` would go in `scratch` now, trying the cheap ncpus total first.
pub(crate) fn try_place(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    scratch: &Scratch<'_>,
    job: JobId,
) -> Option<Allocation> {
    if ctx.workload.ncpus_of(job)
        > placesim_core::StateView::free_total(scratch, ConsumableIdx::NCPUS)
    {
        return None;
    }
    placement.place(ctx.workload.request_of(job), scratch)
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
