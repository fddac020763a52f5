//! [`PlacementSpec`], a placement built for one cluster.

use crate::placement::{FirstFit, MoabNodeSets, PbsPsets, PbsTimeline, PlacementKind};
use placesim_core::{ClusterState, PlacementPolicy};

/// A placement policy built for one cluster (its sets made up front), cloned into each run.
#[derive(Debug, Clone)]
pub enum PlacementSpec {
    /// First fit, no grouping (boxed too: its buffers make it the largest).
    FirstFit(Box<FirstFit>),
    /// PBS placement sets (boxed: they carry their sets and first fit's buffers).
    Pbs(Box<PbsPsets>),
    /// Moab node sets (boxed, as PBS's).
    Moab(Box<MoabNodeSets>),
    /// PBS placement sets whose settings change during the run (a timeline's `qmgr` events).
    PbsTimeline(Box<PbsTimeline>),
}

impl PlacementSpec {
    /// A fresh instance for one run over `state`, with the groups it reads registered there.
    pub fn instance(&self, state: &mut ClusterState) -> Box<dyn PlacementPolicy> {
        match self {
            PlacementSpec::FirstFit(f) => f.clone(),
            PlacementSpec::Pbs(p) => {
                p.track(state);
                p.clone()
            }
            PlacementSpec::Moab(m) => {
                m.track(state);
                m.clone()
            }
            PlacementSpec::PbsTimeline(p) => {
                p.track(state);
                p.clone()
            }
        }
    }

    /// The vnode sets its runs read from the state's tallies (none for first fit).
    pub fn tracked_sets(&self) -> Vec<Vec<placesim_core::VnodeId>> {
        match self {
            PlacementSpec::FirstFit(_) => Vec::new(),
            PlacementSpec::Pbs(p) => p.tracked_sets(),
            PlacementSpec::Moab(m) => m.tracked_sets(),
            PlacementSpec::PbsTimeline(p) => p.tracked_sets(),
        }
    }

    /// The placement itself, for what it says of requests before any run (its name, what it
    /// cannot honour) without building a state to run it on.
    pub fn policy(&self) -> &dyn PlacementPolicy {
        match self {
            PlacementSpec::FirstFit(f) => f.as_ref(),
            PlacementSpec::Pbs(p) => p.as_ref(),
            PlacementSpec::Moab(m) => m.as_ref(),
            PlacementSpec::PbsTimeline(p) => p.as_ref(),
        }
    }

    /// The first fit this placement places by within its sets, in its vnode order (plain
    /// first fit for Moab's node sets): how jobs inside a reservation are placed.
    pub fn first_fit(&self) -> FirstFit {
        match self {
            PlacementSpec::FirstFit(f) => f.as_ref().clone(),
            PlacementSpec::Pbs(p) => p.first_fit().clone(),
            PlacementSpec::Moab(_) => FirstFit::default(),
            PlacementSpec::PbsTimeline(p) => p.first_fit().clone(),
        }
    }

    /// Which placement this is.
    pub fn kind(&self) -> PlacementKind {
        match self {
            PlacementSpec::FirstFit(_) => PlacementKind::FirstFit,
            PlacementSpec::Pbs(_) | PlacementSpec::PbsTimeline(_) => PlacementKind::Pbs,
            PlacementSpec::Moab(_) => PlacementKind::Moab,
        }
    }
}
