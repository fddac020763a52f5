//! Greedy: every job that fits now starts, in queue order, and nothing is reserved (PBS's
//! default pass, `strict_ordering` False).

use super::{Order, Runnable, start_heads};
use placesim_core::{
    Decision, PlacementPolicy, SchedContext, SchedulingPolicy, Scratch, ScratchBuf,
};

/// Scans the whole queue in order at every pass and starts each job its placement can place
/// now; a job that cannot waits without holding anything back, so a stream of small jobs may
/// delay a big one for ever (the price of not reserving).
#[derive(Debug)]
pub struct Greedy<P> {
    placement: P,
    runnable: Runnable,
    buf: ScratchBuf,
}

impl<P: PlacementPolicy> Greedy<P> {
    /// Greedy placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Greedy {
            placement,
            runnable: Runnable::default(),
            buf: ScratchBuf::default(),
        }
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Greedy<P> {
    fn name(&self) -> String {
        "greedy".to_owned()
    }

    super::comments_wakeups_and_checks!();

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        // When nothing was freed since the previous pass, the jobs that waited then still
        // cannot be placed (the state only filled up): only the new arrivals are tried.
        let from = if ctx.freed_since_last_pass {
            0
        } else {
            ctx.fresh_from
        };
        let mut scratch = Scratch::new(ctx.state, &mut self.buf);
        let ended = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut scratch,
            decisions,
            Order::AnyThatFits { from },
        )
        .is_none();
        if ended {
            return;
        }
        self.runnable
            .record_bindings(ctx, &mut self.placement, decisions);
    }

    /// Each job is tried against the state its predecessors' starts leave: with no start
    /// from `place` on, every job from there is refused against one state whatever their
    /// order.
    fn decides_alike_in_any_order_after(&self, place: usize) -> bool {
        let _ = place;
        true
    }
}
