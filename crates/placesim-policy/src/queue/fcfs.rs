//! First come, first served.

use super::start_heads;
use placesim_core::{
    Decision, PlacementPolicy, SchedContext, SchedulingPolicy, Scratch, ScratchBuf,
};

/// Starts queue heads in order while they fit, and stops at the first that does not: no job
/// ever overtakes another.
#[derive(Debug)]
pub struct Fcfs<P> {
    placement: P,
    buf: ScratchBuf,
}

impl<P: PlacementPolicy> Fcfs<P> {
    /// FCFS placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Fcfs {
            placement,
            buf: ScratchBuf::default(),
        }
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Fcfs<P> {
    fn name(&self) -> String {
        "fcfs".to_owned()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let mut scratch = Scratch::new(ctx.state, &mut self.buf);
        start_heads(ctx, &mut self.placement, &mut scratch, decisions);
    }
}
