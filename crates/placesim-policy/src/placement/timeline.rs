//! PBS placement sets whose settings change during a run: a timeline's `qmgr` events
//! (`set server node_group_key = ...`), which PBS's scheduler reads at its next cycle.
//!
//! Each period's placement is built up front with its own sets, all tracked in the state side
//! by side (period k's tallies after period k−1's), so a change costs nothing at run time.
//! Which period is in force is read from the state's clock ([`ClusterState::now`]): a pass
//! decides, and computes its top jobs' reservations, with the settings of its own instant, as
//! PBS's cycle does; jobs started earlier keep the vnodes they got.

use super::{FirstFit, PbsPsets, PsetSettings};
use placesim_core::{
    Allocation, Cluster, ClusterState, PlacementPolicy, Request, RequestFeature, Scratch, SimTime,
    VnodeId,
};
use std::sync::Arc;

/// PBS placement sets under settings that change at given instants. See the module docs.
#[derive(Debug, Clone)]
pub struct PbsTimeline {
    /// From when each period's settings hold, in time order; the first from 0.
    periods: Vec<(SimTime, PbsPsets)>,
    /// The period of the last placement, whose refusal is the one to report.
    last: usize,
}

impl PbsTimeline {
    /// The placement for `changes`: the settings in force from each instant on, the first
    /// from 0 (later ones sorted by time by the caller).
    pub fn new(cluster: &Cluster, changes: Vec<(SimTime, PsetSettings)>) -> PbsTimeline {
        let mut periods: Vec<(SimTime, PbsPsets)> = Vec::with_capacity(changes.len());
        for (from, settings) in changes {
            let first_set = periods.last().map_or(0, |(_, p)| p.tally_end());
            periods.push((from, PbsPsets::numbered_from(cluster, settings, first_set)));
        }
        PbsTimeline { periods, last: 0 }
    }

    /// The placement at the start of the run: what `placesim check` describes, and whose
    /// first fit jobs inside reservations use.
    pub fn initial(&self) -> &PbsPsets {
        &self.periods[0].1
    }

    /// The first fit every period places by within a set (the node order does not change).
    pub fn first_fit(&self) -> &FirstFit {
        self.initial().first_fit()
    }

    /// Every period's sets, side by side.
    pub fn tracked_sets(&self) -> Vec<Vec<VnodeId>> {
        let mut sets = Vec::new();
        let mut first = 0;
        for (_, p) in &self.periods {
            sets.extend(p.tracked_sets_from(first));
            first = p.tally_end();
        }
        sets
    }

    /// Registers every period's sets with `state`, before the run.
    pub fn track(&self, state: &mut ClusterState) {
        state.track_sets(&self.tracked_sets());
    }

    /// The period in force at `now`.
    fn period_at(&self, now: SimTime) -> usize {
        self.periods
            .partition_point(|(from, _)| *from <= now)
            .saturating_sub(1)
    }
}

impl PlacementPolicy for PbsTimeline {
    fn name(&self) -> String {
        self.initial().name()
    }

    fn supports(&self) -> &'static [RequestFeature] {
        self.initial().supports()
    }

    /// Every period is built with the same job keys, so the first speaks for all.
    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        self.initial().unsupported(request)
    }

    fn refusal(&self) -> Option<Arc<str>> {
        self.periods[self.last].1.refusal()
    }

    fn explains_refusals(&self) -> bool {
        true
    }

    /// A placement depends on the clock too: the same state may place otherwise after a
    /// change.
    fn depends_only_on_state(&self) -> bool {
        false
    }

    /// A job started under any period's sets is labelled by that period's.
    fn check_within_label(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        let mut first_error = None;
        for (_, p) in &self.periods {
            match p.check_within_label(request, allocation) {
                Ok(()) => return Ok(()),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or_default())
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        self.last = self.period_at(view.base().now());
        self.periods[self.last].1.place(request, view)
    }
}
