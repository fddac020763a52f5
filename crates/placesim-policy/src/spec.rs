//! Selection by name: the helpers [`crate::queue::Discipline`] and
//! [`crate::placement::PlacementKind`] share, and [`PlacementSpec`], a placement built for one
//! cluster.

use crate::placement::{FirstFit, MoabNodeSets, PbsPsets, PlacementKind};
use placesim_core::{ClusterState, PlacementPolicy};

/// A name that none of a list's entries has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{name}`: expected one of {expected}")]
pub struct UnknownName {
    /// What was looked for: `discipline`, `placement`.
    pub what: &'static str,
    /// The name given.
    pub name: String,
    /// The names there are, comma-separated.
    pub expected: String,
}

/// `Display` (the name) and `FromStr` (by name, the list's error) for a list type with
/// `ALL` and `name`: one implementation for [`crate::Discipline`] and
/// [`crate::PlacementKind`].
macro_rules! named_list {
    ($list:ty, $what:literal) => {
        impl std::fmt::Display for $list {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $list {
            type Err = $crate::spec::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $crate::spec::by_name(&Self::ALL, s, Self::name, $what)
            }
        }
    };
}
pub(crate) use named_list;

/// The entry of `all` whose `name` is `given` (ASCII case ignored, as scenario files always
/// matched).
pub(crate) fn by_name<T: Copy, const N: usize>(
    all: &[T; N],
    given: &str,
    name: fn(T) -> &'static str,
    what: &'static str,
) -> Result<T, UnknownName> {
    all.iter()
        .copied()
        .find(|&t| name(t).eq_ignore_ascii_case(given))
        .ok_or_else(|| UnknownName {
            what,
            name: given.to_owned(),
            expected: all.map(name).join(", "),
        })
}

/// A placement policy built for one cluster (its sets made up front), cloned into each run.
#[derive(Debug, Clone)]
pub enum PlacementSpec {
    /// First fit, no grouping.
    FirstFit(FirstFit),
    /// PBS placement sets.
    Pbs(PbsPsets),
    /// Moab node sets.
    Moab(MoabNodeSets),
}

impl PlacementSpec {
    /// A fresh instance for one run over `state`, with the groups it reads registered there.
    pub fn instance(&self, state: &mut ClusterState) -> Box<dyn PlacementPolicy> {
        match self {
            PlacementSpec::FirstFit(f) => Box::new(f.clone()),
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

    /// The placement itself, for what it says of requests before any run (its name, what it
    /// cannot honour) without building a state to run it on.
    pub fn policy(&self) -> &dyn PlacementPolicy {
        match self {
            PlacementSpec::FirstFit(f) => f,
            PlacementSpec::Pbs(p) => p,
            PlacementSpec::Moab(m) => m,
        }
    }

    /// Which placement this is.
    pub fn kind(&self) -> PlacementKind {
        match self {
            PlacementSpec::FirstFit(_) => PlacementKind::FirstFit,
            PlacementSpec::Pbs(_) => PlacementKind::Pbs,
            PlacementSpec::Moab(_) => PlacementKind::Moab,
        }
    }
}
