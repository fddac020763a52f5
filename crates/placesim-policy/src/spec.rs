//! Typed selection of a policy by name, for the CLI and scenario files.

use crate::placement::{FirstFit, MoabNodeSets, PbsPsets};
use crate::queue::{Easy, Fcfs};
use placesim_core::{ClusterState, PlacementPolicy, SchedulingPolicy};
use std::fmt;
use std::str::FromStr;

/// A queue discipline with its placement, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicySpec {
    /// First come, first served, with first-fit placement.
    Fcfs,
    /// EASY backfilling, with first-fit placement.
    Easy,
}

impl PolicySpec {
    /// Every policy, in a stable order.
    pub const ALL: [PolicySpec; 2] = [PolicySpec::Fcfs, PolicySpec::Easy];

    /// A fresh policy instance for one run, with first-fit placement.
    pub fn build(self) -> Box<dyn SchedulingPolicy> {
        self.build_with(Box::new(FirstFit::default()))
    }

    /// A fresh policy instance for one run, with `placement`.
    pub fn build_with(self, placement: Box<dyn PlacementPolicy>) -> Box<dyn SchedulingPolicy> {
        match self {
            PolicySpec::Fcfs => Box::new(Fcfs::new(placement)),
            PolicySpec::Easy => Box::new(Easy::new(placement)),
        }
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicySpec::Fcfs => "fcfs",
            PolicySpec::Easy => "easy",
        })
    }
}

/// A policy name that is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown policy `{}`: expected one of fcfs, easy", self.0)
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for PolicySpec {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicySpec::ALL
            .into_iter()
            .find(|p| p.to_string() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

/// A placement policy built for one cluster (its sets made up front), cloned into each run.
#[derive(Debug, Clone)]
pub enum PlacementSpec {
    /// First fit, no grouping.
    FirstFit,
    /// PBS placement sets.
    Pbs(PbsPsets),
    /// Moab node sets.
    Moab(MoabNodeSets),
}

impl PlacementSpec {
    /// A fresh instance for one run over `state`, with the groups it reads registered there.
    pub fn instance(&self, state: &mut ClusterState) -> Box<dyn PlacementPolicy> {
        match self {
            PlacementSpec::FirstFit => Box::new(FirstFit::default()),
            PlacementSpec::Pbs(p) => {
                p.track(state);
                Box::new(p.clone())
            }
            PlacementSpec::Moab(m) => {
                m.track(state);
                Box::new(m.clone())
            }
        }
    }

    /// What the placement adds to the policy's name in output rows (nothing for first fit).
    pub fn suffix(&self) -> &'static str {
        match self {
            PlacementSpec::FirstFit => "",
            PlacementSpec::Pbs(_) => "+pbs-psets",
            PlacementSpec::Moab(_) => "+moab-nodesets",
        }
    }
}
