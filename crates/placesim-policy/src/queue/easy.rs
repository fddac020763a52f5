//! EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), with the reservation computed by the
//! placement policy.

use super::{Runnable, start, start_heads};
use placesim_core::{
    Allocation, ConsumableIdx, Decision, JobId, PlacementPolicy, SchedContext, SchedulingPolicy,
    Scratch, ScratchBuf, SimTime, StateView,
};

/// The reservation EASY holds for the first job that cannot start: when, and on which vnodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The job it is for.
    pub job: JobId,
    /// The shadow time: the earliest estimated end of running jobs at which the job can be
    /// placed.
    pub start: SimTime,
    /// The vnodes it would take then.
    pub allocation: Allocation,
}

/// EASY backfilling.
///
/// 1. Start queue heads while they fit (a job that can never run is passed over).
/// 2. For the first head that does not fit, find its reservation: release running jobs in order
///    of estimated end (start + estimate) into a what-if view, and try to place the head after
///    each distinct end time. The first success gives the shadow time and the vnodes.
/// 3. Scan the rest of the queue in order. Start a job if it fits now and either its estimated
///    end is no later than the shadow time, or the head can still be placed at the shadow time
///    with this job's resources taken (the vnode form of "uses no more than `extra`").
///
/// On a homogeneous machine this is exactly count-based EASY: the head still fits at the shadow
/// time after a long job takes k processors exactly when k ≤ extra.
///
/// Two shortcuts change no decision. The reservation is computed only once some candidate fits
/// now. And when no job has ended since the previous pass, only newly arrived jobs are scanned:
/// nothing was freed, the shadow time is the same, and `now + estimate ≤ shadow` only gets
/// harder as time passes, so every older candidate would be refused again.
#[derive(Debug)]
pub struct Easy<P> {
    placement: P,
    runnable: Runnable,
    now_buf: ScratchBuf,
    shadow_buf: ScratchBuf,
    ends: Vec<(SimTime, JobId, usize)>,
    last_reservation: Option<Reservation>,
}

impl<P: PlacementPolicy> Easy<P> {
    /// EASY placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Easy {
            placement,
            runnable: Runnable::default(),
            now_buf: ScratchBuf::default(),
            shadow_buf: ScratchBuf::default(),
            ends: Vec::new(),
            last_reservation: None,
        }
    }

    /// The reservation of the last pass, as it stood after backfilling, if that pass needed one
    /// (a head was blocked and some later job fitted now).
    pub fn last_reservation(&self) -> Option<&Reservation> {
        self.last_reservation.as_ref()
    }

    /// The reservation the head of `ctx`'s queue would get after step 1, without backfilling.
    pub fn reservation(&mut self, ctx: &SchedContext<'_>) -> Option<Reservation> {
        let mut decisions = Vec::new();
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let head_pos = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            &mut decisions,
        );
        let head = *ctx.queue.get(head_pos)?;
        let mut shadow_view = Scratch::new(ctx.state, &mut self.shadow_buf);
        reserve(
            ctx,
            &mut self.placement,
            &mut self.ends,
            head,
            &now_view,
            &mut shadow_view,
            &decisions,
        )
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Easy<P> {
    fn name(&self) -> String {
        "easy".to_owned()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.last_reservation = None;
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let head_pos = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            decisions,
        );
        let Some(&head) = ctx.queue.get(head_pos) else {
            return;
        };
        let scan_from = if ctx.freed_since_last_pass {
            head_pos + 1
        } else {
            (head_pos + 1).max(ctx.fresh_from)
        };
        let n_cons = ctx.state.cluster_consumables();
        let min_need = ctx.workload.min_request_ncpus();
        let mut shadow_view = Scratch::new(ctx.state, &mut self.shadow_buf);
        let mut reservation: Option<Reservation> = None;
        for &job in &ctx.queue[scan_from..] {
            let free_now = now_view.free_total(ConsumableIdx::NCPUS);
            if min_need > 0 && free_now == 0 {
                break;
            }
            let need = ctx.workload.ncpus_of(job);
            if need > free_now {
                continue;
            }
            let r = match &mut reservation {
                Some(r) => r,
                None => {
                    let found = reserve(
                        ctx,
                        &mut self.placement,
                        &mut self.ends,
                        head,
                        &now_view,
                        &mut shadow_view,
                        decisions,
                    );
                    // The head can run on the empty cluster, so releasing every running job
                    // always finds a reservation; if it ever does not, backfill nothing.
                    let Some(found) = found else { break };
                    reservation.insert(found)
                }
            };
            let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= r.start;
            // A job running past the shadow time must leave the head's ncpus free then: a
            // necessary condition checked before any vnode-level work (exact on a homogeneous
            // machine, where it is "uses no more than extra").
            if !ends_by_shadow
                && need + ctx.workload.ncpus_of(head) > shadow_view.free_total(ConsumableIdx::NCPUS)
            {
                continue;
            }
            let Some(allocation) = self
                .placement
                .place(ctx.workload.request_of(job), &now_view)
            else {
                continue;
            };
            if !ends_by_shadow {
                shadow_view.take(&allocation);
                let still_fits = r
                    .allocation
                    .parts(n_cons)
                    .all(|(v, amounts)| shadow_view.fits_chunk(v, amounts, r.allocation.sharing));
                if !still_fits {
                    match self
                        .placement
                        .place(ctx.workload.request_of(head), &shadow_view)
                    {
                        Some(moved) => r.allocation = moved,
                        None => {
                            shadow_view.give(&allocation);
                            continue;
                        }
                    }
                }
            }
            start(job, allocation, &mut now_view, decisions);
        }
        self.last_reservation = reservation;
    }
}

/// Step 2: the head's reservation. `shadow_view` ends as the state at the shadow time.
fn reserve(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    ends: &mut Vec<(SimTime, JobId, usize)>,
    head: JobId,
    now_view: &Scratch<'_>,
    shadow_view: &mut Scratch<'_>,
    decisions: &[Decision],
) -> Option<Reservation> {
    fill_ends(ends, ctx, decisions);
    shadow_view.copy_from(now_view);
    let need = ctx.workload.ncpus_of(head);
    let mut i = 0;
    while i < ends.len() {
        let t = ends[i].0;
        while i < ends.len() && ends[i].0 == t {
            let idx = ends[i].2;
            let alloc = match ctx.running.get(idx) {
                Some(run) => &run.allocation,
                None => match &decisions[idx - ctx.running.len()] {
                    Decision::Start { allocation, .. } => allocation,
                },
            };
            shadow_view.give(alloc);
            i += 1;
        }
        if need > shadow_view.free_total(ConsumableIdx::NCPUS) {
            continue;
        }
        if let Some(allocation) = placement.place(ctx.workload.request_of(head), shadow_view) {
            return Some(Reservation {
                job: head,
                start: t,
                allocation,
            });
        }
    }
    None
}

/// Lists running jobs, and the jobs this pass has decided to start, by estimated end (ties by
/// job id), as `(end, job, index)` where `index` counts `ctx.running` first, then `decisions`.
/// A job already past its estimate (possible only when jobs may overrun) counts as ending now.
fn fill_ends(
    ends: &mut Vec<(SimTime, JobId, usize)>,
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
) {
    ends.clear();
    for (i, run) in ctx.running.iter().enumerate() {
        ends.push((run.estimated_end.max(ctx.now), run.job, i));
    }
    for (i, d) in decisions.iter().enumerate() {
        let Decision::Start { job, .. } = d;
        let end = ctx.now + ctx.workload.job(*job).estimate;
        ends.push((end, *job, ctx.running.len() + i));
    }
    ends.sort_unstable();
}
