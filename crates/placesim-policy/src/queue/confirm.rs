//! Confirming reservations the way PBS's scheduler does (reservations-and-partitions.md
//! §1.3): at the first pass after a reservation is requested, before any job, in submission
//! order.
//!
//! The calendar a reservation is confirmed against holds the running jobs until their
//! estimated ends (hard walltimes) and the reservations already confirmed, including those
//! confirmed earlier in the same pass, and no top job (PBS plans those later in the cycle).
//! The vnodes are chosen by the run's placement, as for a job, at the reservation's start,
//! for its whole window ([`super::reserved`]); with none, it is denied, with no retry. A pass
//! that confirmed one starts no job (openpbs `fifo.cpp`: the cycle ends), so the next pass
//! schedules jobs around it.

use super::reserved;
use placesim_core::{
    Allocation, Decision, JobId, PlacementPolicy, Request, SchedContext, SchedulingPolicy, Scratch,
    ScratchBuf, SiteReservation,
};
use std::sync::Arc;

/// A discipline under a scheduler that confirms reservation requests first.
#[derive(Debug)]
pub struct ConfirmingReservations<S, P> {
    inner: S,
    placement: P,
    answers: Vec<(u32, Option<Allocation>)>,
    now_buf: ScratchBuf,
    window_buf: ScratchBuf,
}

impl<S: SchedulingPolicy, P: PlacementPolicy> ConfirmingReservations<S, P> {
    /// `inner` for the jobs; `placement` finds a reservation's vnodes.
    pub fn new(inner: S, placement: P) -> Self {
        ConfirmingReservations {
            inner,
            placement,
            answers: Vec::new(),
            now_buf: ScratchBuf::default(),
            window_buf: ScratchBuf::default(),
        }
    }

    /// Answers the pass's requests; whether any was confirmed.
    fn confirm(&mut self, ctx: &SchedContext<'_>) -> bool {
        let mut confirmed: Vec<SiteReservation> = ctx.reservations.to_vec();
        let mut any = false;
        let now_view = Scratch::new(ctx.state, &mut self.now_buf);
        for (i, r) in ctx.reservation_requests {
            // A window already open or past cannot be confirmed.
            let placed = (r.start >= ctx.now)
                .then(|| {
                    let calendar = SchedContext {
                        reservations: &confirmed,
                        ..*ctx
                    };
                    // The pool is the vnodes a job of no queue may use.
                    let request = Request {
                        queue: None,
                        ..r.request.clone()
                    };
                    let placement = &mut self.placement;
                    reserved::place_in_window(
                        &calendar,
                        &[],
                        None,
                        &now_view,
                        r.start,
                        r.end,
                        &mut self.window_buf,
                        |view| placement.place(&request, view),
                    )
                })
                .flatten();
            if let Some(allocation) = &placed {
                any = true;
                let at = confirmed.partition_point(|c| c.start <= r.start);
                confirmed.insert(
                    at,
                    SiteReservation {
                        name: r.name.clone(),
                        start: r.start,
                        end: r.end,
                        allocation: std::sync::Arc::new(allocation.clone()),
                        queue: r.queue,
                        access: Default::default(),
                    },
                );
            }
            self.answers.push((*i, placed));
        }
        any
    }
}

impl<S: SchedulingPolicy, P: PlacementPolicy> SchedulingPolicy for ConfirmingReservations<S, P> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        if !ctx.reservation_requests.is_empty() && self.confirm(ctx) {
            return;
        }
        self.inner.schedule(ctx, decisions);
    }

    fn drain_confirmations(&mut self, out: &mut Vec<(u32, Option<Allocation>)>) {
        out.append(&mut self.answers);
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        self.inner.drain_comments(out);
    }

    fn retract_pass(&mut self) {
        self.inner.retract_pass();
    }

    super::pass_on_to_inner!(
        comment_superseded,
        passes_when_idle,
        drain_estimates,
        drain_priorities,
        wakeup,
        check_start,
    );
}
