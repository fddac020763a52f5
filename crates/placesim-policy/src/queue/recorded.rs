//! The record itself as a run: each job starts when and where it really started, so that
//! what a site really did is measured by every metric a simulated run is (utilization and
//! waits over time, fragmentation, sets), beside what another configuration would do.

use super::reserved;
use placesim_core::{
    Allocation, Decision, JobId, PlacementPolicy, SchedContext, SchedulingPolicy, Scratch,
    ScratchBuf, SimTime, StateView,
};

/// Starts each job at its recorded start on its recorded vnodes. A job whose recorded
/// vnodes are not free at that instant (its run there overlapped another's in the record, a
/// requeued job replayed from its first start with its last run's length) waits until they
/// are; a job recorded without vnodes is placed by the run's placement at its recorded
/// start. A job whose run until its estimated end would overlap a site reservation on its
/// vnodes waits too (the kernel holds a reservation's vnodes for it), as PBS kept it off.
#[derive(Debug)]
pub struct AsRecorded<P> {
    placement: P,
    /// Per job index: its recorded start and, if the record has them, its vnodes.
    recorded: Vec<Option<(SimTime, Option<Allocation>)>>,
    buf: ScratchBuf,
    window_buf: ScratchBuf,
    next_wakeup: Option<SimTime>,
}

impl<P: PlacementPolicy> AsRecorded<P> {
    /// Replays `recorded` (job, start, vnodes) over a workload of `n_jobs` jobs, placing
    /// jobs recorded without vnodes with `placement`.
    pub fn new(
        placement: P,
        n_jobs: usize,
        recorded: impl IntoIterator<Item = (JobId, SimTime, Option<Allocation>)>,
    ) -> Self {
        let mut by_job = vec![None; n_jobs];
        for (job, start, allocation) in recorded {
            if let Some(slot) = by_job.get_mut(job.index()) {
                *slot = Some((start, allocation));
            }
        }
        AsRecorded {
            placement,
            recorded: by_job,
            buf: ScratchBuf::default(),
            window_buf: ScratchBuf::default(),
            next_wakeup: None,
        }
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for AsRecorded<P> {
    fn name(&self) -> String {
        "recorded".to_owned()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let mut scratch = Scratch::new(ctx.state, &mut self.buf);
        let mut next: Option<SimTime> = None;
        for &job in ctx.queue {
            let Some((start, allocation)) = self.recorded.get(job.index()).and_then(Option::as_ref)
            else {
                continue;
            };
            if *start > ctx.now {
                next = Some(next.map_or(*start, |n| n.min(*start)));
                continue;
            }
            let placement = &mut self.placement;
            let mut place = |view: &Scratch<'_>| match allocation {
                Some(a) if view.has_room_for(a) => Some(a.clone()),
                Some(_) => None,
                None => placement.place(ctx.workload.request_of(job), view),
            };
            let allocation = if reserved::any(ctx) {
                let until = ctx.now + ctx.workload.job(job).estimate;
                reserved::place_in_window(
                    ctx,
                    decisions,
                    Some(job),
                    &scratch,
                    ctx.now,
                    until,
                    &mut self.window_buf,
                    place,
                )
            } else {
                place(&scratch)
            };
            if let Some(allocation) = allocation {
                scratch.take(&allocation);
                decisions.push(Decision::Start { job, allocation });
            }
        }
        self.next_wakeup = next;
    }

    fn wakeup(&self) -> Option<SimTime> {
        self.next_wakeup
    }
}
