//! EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), with the reservation computed by the
//! placement policy.

use super::{start, start_heads};
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
/// 1. Start queue heads while they fit.
/// 2. For the first head that does not fit, find its reservation: release running jobs in order
///    of estimated end (start + estimate) into a what-if view, and try to place the head after
///    each distinct end time. The first success gives the shadow time and the vnodes. A head
///    that cannot be placed even on the emptied cluster can never run; it is passed over and
///    the next waiting job becomes the head.
/// 3. Scan the rest of the queue in order. Start a job if it fits now and either its estimated
///    end is no later than the shadow time, or the head can still be placed at the shadow time
///    with this job's resources taken (the vnode form of "uses no more than `extra`").
///
/// On a homogeneous machine this is exactly count-based EASY: the head still fits at the shadow
/// time after a long job takes k processors exactly when k ≤ extra.
#[derive(Debug)]
pub struct Easy<P> {
    placement: P,
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
            now_buf: ScratchBuf::default(),
            shadow_buf: ScratchBuf::default(),
            ends: Vec::new(),
            last_reservation: None,
        }
    }

    /// The reservation made in the last pass, if a head was blocked.
    pub fn last_reservation(&self) -> Option<&Reservation> {
        self.last_reservation.as_ref()
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Easy<P> {
    fn name(&self) -> String {
        "easy".to_owned()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.last_reservation = None;
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let mut head_pos = start_heads(ctx, &mut self.placement, &mut now_view, decisions);
        if head_pos == ctx.queue.len() {
            return;
        }
        let n_cons = ctx.state.cluster_consumables();

        fill_ends(&mut self.ends, ctx, decisions);

        let mut shadow_view = Scratch::new(ctx.state, &mut self.shadow_buf);
        let reservation = loop {
            let head = ctx.queue[head_pos];
            let request = ctx.workload.request_of(head);
            shadow_view.copy_from(&now_view);
            let mut found = None;
            let mut i = 0;
            while i < self.ends.len() {
                let t = self.ends[i].0;
                while i < self.ends.len() && self.ends[i].0 == t {
                    let idx = self.ends[i].2;
                    let alloc = match ctx.running.get(idx) {
                        Some(run) => &run.allocation,
                        None => match &decisions[idx - ctx.running.len()] {
                            Decision::Start { allocation, .. } => allocation,
                        },
                    };
                    shadow_view.give(alloc);
                    i += 1;
                }
                // Cheap aggregate test before a full placement search.
                if request.total(ConsumableIdx::NCPUS)
                    > shadow_view.free_total(ConsumableIdx::NCPUS)
                {
                    continue;
                }
                if let Some(allocation) = self.placement.place(request, &shadow_view) {
                    found = Some(Reservation {
                        job: head,
                        start: t,
                        allocation,
                    });
                    break;
                }
            }
            match found {
                Some(r) => break r,
                None => {
                    // Cannot be placed even when every running job has ended: it never runs,
                    // so it must not hold the queue. Look for the next head.
                    head_pos += 1;
                    let rest = &ctx.queue[head_pos..];
                    let Some(next) = rest.iter().position(|&job| {
                        match self
                            .placement
                            .place(ctx.workload.request_of(job), &now_view)
                        {
                            Some(allocation) => {
                                start(job, allocation, &mut now_view, decisions);
                                false
                            }
                            None => true,
                        }
                    }) else {
                        return;
                    };
                    head_pos += next;
                    // Jobs just started join the running set for the next head's shadow.
                    fill_ends(&mut self.ends, ctx, decisions);
                }
            }
        };

        // Step 3: backfill.
        let mut reserved = reservation.allocation.clone();
        let head_request = ctx.workload.request_of(reservation.job);
        let shadow = reservation.start;
        let min_need = ctx.workload.min_request_ncpus();
        for &job in &ctx.queue[head_pos + 1..] {
            if min_need > 0 && now_view.free_total(ConsumableIdx::NCPUS) == 0 {
                break;
            }
            let request = ctx.workload.request_of(job);
            let Some(allocation) = self.placement.place(request, &now_view) else {
                continue;
            };
            let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= shadow;
            if !ends_by_shadow {
                shadow_view.take(&allocation);
                let still_fits = reserved
                    .parts(n_cons)
                    .all(|(v, amounts)| shadow_view.fits_chunk(v, amounts, reserved.sharing));
                if !still_fits {
                    match self.placement.place(head_request, &shadow_view) {
                        Some(moved) => reserved = moved,
                        None => {
                            shadow_view.give(&allocation);
                            continue;
                        }
                    }
                }
            }
            start(job, allocation, &mut now_view, decisions);
        }
        self.last_reservation = Some(Reservation {
            allocation: reserved,
            ..reservation
        });
    }
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
