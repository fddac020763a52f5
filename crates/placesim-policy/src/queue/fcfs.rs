//! First come, first served.

use super::{Order, PbsComment, Runnable, start_heads};
use placesim_core::{
    Decision, PlacementPolicy, SchedContext, SchedulingPolicy, Scratch, ScratchBuf,
};

/// Starts queue heads in order while they fit, and stops at the first that does not: no job
/// overtakes another, except that a job that can never run (its request does not fit even the
/// empty cluster) is passed over rather than blocking the queue forever.
#[derive(Debug)]
pub struct Fcfs<P> {
    placement: P,
    runnable: Runnable,
    buf: ScratchBuf,
}

impl<P: PlacementPolicy> Fcfs<P> {
    /// FCFS placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Fcfs {
            placement,
            runnable: Runnable::default(),
            buf: ScratchBuf::default(),
        }
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Fcfs<P> {
    fn name(&self) -> String {
        "fcfs".to_owned()
    }

    super::comments_wakeups_and_checks!();

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.pass(ctx, decisions);
        self.runnable
            .record_bindings(ctx, &mut self.placement, decisions);
    }
}

impl<P: PlacementPolicy> Fcfs<P> {
    /// One scheduling pass; [`SchedulingPolicy::schedule`] then records the starts' bindings.
    fn pass(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let mut scratch = Scratch::new(ctx.state, &mut self.buf);
        let Some((head_pos, _)) = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut scratch,
            decisions,
            Order::Strict,
        ) else {
            return;
        };
        // PBS's strict order: every job after the blocked one is told why it waits.
        for &job in ctx.queue.iter().skip(head_pos + 1) {
            if !self.runnable.said(job, PbsComment::StrictOrder)
                && !self.runnable.known_never(ctx, job)
            {
                self.runnable.comment(job, PbsComment::StrictOrder);
            }
        }
    }
}
