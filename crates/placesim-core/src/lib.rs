//! The placesim simulation kernel.
//!
//! This crate holds the model of a run and nothing that touches the outside world: simulated
//! time ([`SimTime`]), newtype ids, typed resources, vnodes and hosts ([`Cluster`]), the mutable
//! [`ClusterState`] with its copy-on-write [`Scratch`] views, jobs and their lowered
//! [`Request`]s, the closed [`Event`] enum with its total order, the decision traits
//! ([`SchedulingPolicy`], [`PlacementPolicy`]), the [`MetricsSink`] trait, and the
//! [`Simulation`] loop that ties them together.
//!
//! Guarantees:
//! - Time is integer seconds; at one instant every job end is processed before every submit,
//!   then one scheduling pass runs.
//! - Nothing here does I/O, reads a clock, or draws a random number without an explicit seed.
//! - A decision that would oversubscribe a vnode is refused with [`SimError`].

pub mod bitset;
pub mod cluster;
pub mod event;
pub mod ids;
mod invariants;
pub mod job;
pub mod names;
pub mod outage;
pub mod policy;
pub mod request;
pub mod reservation;
pub mod resource;
pub mod runtime;
pub mod settled;
pub mod sim;
pub mod sink;
pub mod state;
mod stretch;
#[cfg(test)]
mod test_rng;
pub mod time;

pub use bitset::Bitset;
pub use cluster::{Cluster, ClusterBuilder, ClusterError, MAX_VNODES, Pool, Vnode};
pub use event::{Event, EventKey, EventQueue};
pub use ids::{HostId, JobId, RequestId, ResourceId, VnodeId};
pub use job::{Job, LimitDraws, Workload, WorkloadError};
pub use names::UnknownName;
pub use outage::{NodeFailurePolicy, Outage};
pub use policy::{
    Decision, LogMark, PlacementPolicy, Relaxation, RelaxationLasts, RelaxationWait, RunningJob,
    RunningLog, SchedContext, SchedulingPolicy, SetConstraints, StartGate, TopJobEstimate,
};
pub use request::{
    Arrangement, Chunk, Constraint, FilterExpr, HostList, HostListForm, NodeSetAttribute,
    NodeSetPolicy, NodeSetRequest, NodeSetValue, Request, RequestFeature, Sharing, SpeedValue,
    chunks_total, chunks_totals_into,
};
pub use reservation::{
    Acl, AclEntry, AclModifier, Affinity, Credential, Credentials, ReservationAccess,
    ReservationQueue, ReservationRequest, SiteReservation,
};
pub use resource::{
    AttrValue, CmpOp, ConsumableIdx, ResourceDef, ResourceDefs, ResourceError, ResourceKind,
    decimal, write_amount,
};
pub use runtime::{CommForm, RuntimeModel, RuntimeSettings, Stretch};
pub use settled::{InstantFacts, SetPartition, SettledInstant};
pub use sim::{Cycles, Progress, RunConfig, RunStats, SimError, Simulation, WalltimePolicy};
pub use sink::{EndReason, JobOutcome, MetricsSink, SiteEvent, VecSink};
pub use state::{
    Allocation, AllocationError, ClusterState, LimitDraw, PartsBuilder, Scratch, ScratchBuf,
    SetIndex, SetTallies, StateView, VnodeRun, Within,
};
pub use time::{SimDuration, SimTime};
