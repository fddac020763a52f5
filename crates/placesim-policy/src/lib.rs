//! Scheduling and placement policies for the placesim kernel.
//!
//! A queue discipline ([`queue::Fcfs`], [`queue::Easy`]) decides which waiting jobs start; it
//! asks a placement policy ([`placement::FirstFit`]) where each would go. Any discipline
//! composes with any placement. [`Discipline`] and [`PlacementKind`] list them by name, once
//! for the command line, scenario files and output rows. Policies read the kernel's state
//! through copy-on-write scratch views and return decisions; they never change the state
//! themselves.
//!
//! Replaying three jobs on four processors under EASY: the third job is backfilled because it
//! ends before the blocked second job could start.
//!
//! ```
//! use placesim_core::{
//!     Cluster, ClusterState, Job, Request, RequestId, RunConfig, SimDuration, SimTime,
//!     Simulation, VecSink, WalltimePolicy, Workload,
//! };
//! use placesim_policy::Discipline;
//!
//! let job = |submit, runtime, estimate, request| {
//!     Job::new(0, SimTime(submit), SimDuration(runtime), SimDuration(estimate), 0, RequestId(request))
//! };
//! // Request 0 is `select=3:ncpus=1`, request 1 is `select=1:ncpus=1`; 3 consumable slots.
//! let requests = vec![Request::processors(3, 3), Request::processors(1, 3)];
//! let jobs = vec![job(0, 100, 100, 0), job(1, 50, 50, 0), job(2, 10, 10, 1)];
//! let workload = Workload::new(jobs, requests)?;
//! let state = ClusterState::new(Cluster::homogeneous(4, 1)?);
//! let config = RunConfig {
//!     walltime: WalltimePolicy::Kill,
//!     cycles: placesim_core::Cycles::EventExact,
//! };
//! let mut sink = VecSink::default();
//! let mut easy = Discipline::EASY.build();
//! Simulation::new(&workload, state, config).run(easy.as_mut(), &mut sink, &mut |_| {})?;
//! let mut starts: Vec<(u32, u64)> = sink.outcomes.iter().map(|o| (o.job.0, o.start.0)).collect();
//! starts.sort();
//! assert_eq!(starts, vec![(0, 0), (1, 100), (2, 2)]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod limits;
pub mod placement;
pub mod queue;
pub mod spec;

pub use placement::PlacementKind;
pub use placesim_core::UnknownName;
pub use queue::Discipline;
pub use spec::PlacementSpec;
