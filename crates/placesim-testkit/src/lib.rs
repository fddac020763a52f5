//! Test support for placesim's crates (a dev-dependency only): one way to set up a replay,
//! [`Replay`], instead of the kernel's set-up copied into every test, and the hand-worked
//! trace the tests of several crates share, [`HAND_TRACE`], and their deterministic generator,
//! [`Lcg`].

use placesim_core::{
    Cluster, ClusterState, MetricsSink, NodeFailurePolicy, Outage, ReservationRequest, RunConfig,
    RunStats, RuntimeModel, SchedulingPolicy, SetPartition, Simulation, SiteReservation,
    WalltimePolicy, Workload,
};
use placesim_workload::{SwfOptions, Trace, TraceFormat};
use std::path::Path;

/// The shared hand-worked trace (`workloads/hand-worked.swf`): 4 processors, 4 jobs; under
/// FCFS J1 runs [0,10), J2 [10,15), J3 [15,18) and J4 [15,19).
pub const HAND_TRACE: &str = include_str!("../../../workloads/hand-worked.swf");

/// [`HAND_TRACE`], read as a trace named `t.swf`.
pub fn hand_trace() -> Trace {
    trace(HAND_TRACE, 4)
}

/// `text` read as an SWF trace named `t.swf` on `procs` processors.
///
/// # Panics
/// If the text is not a valid trace: a test's own data is wrong.
pub fn trace(text: &str, procs: u64) -> Trace {
    let opts = SwfOptions {
        procs: Some(procs),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    let defs = placesim_core::ResourceDefs::default();
    TraceFormat::Swf
        .read(text.as_bytes(), Path::new("t.swf"), &opts, &defs)
        .unwrap_or_else(|e| panic!("a test trace: {e}"))
}

/// A replay set up for a test: walltimes killed unless said otherwise, no runtime model, no
/// outages, no set watch, no progress reports.
pub struct Replay<'w> {
    workload: &'w Workload,
    state: ClusterState,
    config: RunConfig,
    runtime_model: Option<&'w RuntimeModel>,
    outages: Vec<Outage>,
    on_failure: NodeFailurePolicy,
    sets: Option<SetPartition>,
    reservations: Vec<SiteReservation>,
    requests: Vec<ReservationRequest>,
    deletions: Vec<(placesim_core::SimTime, placesim_core::JobId)>,
    reservation_deletions: Vec<(placesim_core::SimTime, std::sync::Arc<str>)>,
    site_notes: Vec<(
        placesim_core::SimTime,
        placesim_core::SiteEvent,
        std::sync::Arc<str>,
    )>,
}

impl<'w> Replay<'w> {
    /// `workload` on an idle `cluster`.
    pub fn on(workload: &'w Workload, cluster: Cluster) -> Self {
        Replay::from_state(workload, ClusterState::new(cluster))
    }

    /// `workload` from `state` (with the sets a placement tracks registered, or jobs held).
    pub fn from_state(workload: &'w Workload, state: ClusterState) -> Self {
        Replay {
            workload,
            state,
            config: RunConfig {
                cycles: placesim_core::Cycles::EventExact,
                walltime: WalltimePolicy::Kill,
            },
            runtime_model: None,
            outages: Vec::new(),
            on_failure: NodeFailurePolicy::default(),
            sets: None,
            reservations: Vec::new(),
            requests: Vec::new(),
            deletions: Vec::new(),
            reservation_deletions: Vec::new(),
            site_notes: Vec::new(),
        }
    }

    /// What happens at a job's walltime.
    pub fn walltime(mut self, walltime: WalltimePolicy) -> Self {
        self.config.walltime = walltime;
        self
    }

    /// When the scheduler runs its passes.
    pub fn cycles(mut self, cycles: placesim_core::Cycles) -> Self {
        self.config.cycles = cycles;
        self
    }

    /// Runtimes stretched by `model`.
    pub fn runtime_model(mut self, model: &'w RuntimeModel) -> Self {
        self.runtime_model = Some(model);
        self
    }

    /// Vnodes down during `outages`, their jobs treated as `on_failure` says.
    pub fn outages(mut self, outages: &[Outage], on_failure: NodeFailurePolicy) -> Self {
        self.outages = outages.to_vec();
        self.on_failure = on_failure;
        self
    }

    /// Settled instants reported to the sink, with the free ncpus of `sets`.
    pub fn set_watch(mut self, sets: &SetPartition) -> Self {
        self.sets = Some(sets.clone());
        self
    }

    /// Site reservations held over their windows.
    pub fn reservations(mut self, reservations: &[SiteReservation]) -> Self {
        self.reservations = reservations.to_vec();
        self
    }

    /// Reservations requested of the scheduler during the run.
    pub fn reservation_requests(mut self, requests: &[ReservationRequest]) -> Self {
        self.requests = requests.to_vec();
        self
    }

    /// Jobs deleted (`qdel`) at their times.
    pub fn deletions(
        mut self,
        deletions: &[(placesim_core::SimTime, placesim_core::JobId)],
    ) -> Self {
        self.deletions = deletions.to_vec();
        self
    }

    /// Reservations deleted (`pbs_rdel`) at their times, by name.
    pub fn reservation_deletions(
        mut self,
        deletions: &[(placesim_core::SimTime, std::sync::Arc<str>)],
    ) -> Self {
        self.reservation_deletions = deletions.to_vec();
        self
    }

    /// Timeline entries reported to the sink at their times (settings, cycles).
    pub fn site_notes(
        mut self,
        notes: &[(
            placesim_core::SimTime,
            placesim_core::SiteEvent,
            std::sync::Arc<str>,
        )],
    ) -> Self {
        self.site_notes = notes.to_vec();
        self
    }

    /// Runs `policy` to the end into `sink`.
    ///
    /// # Panics
    /// If the kernel stops the run: in a test, a policy's bug.
    pub fn run(self, policy: &mut dyn SchedulingPolicy, sink: &mut dyn MetricsSink) -> RunStats {
        let mut simulation = Simulation::new(self.workload, self.state, self.config);
        if let Some(model) = self.runtime_model {
            simulation = simulation.with_runtime_model(model);
        }
        if !self.outages.is_empty() {
            simulation = simulation.with_outages(&self.outages, self.on_failure);
        }
        if let Some(sets) = &self.sets {
            simulation = simulation.with_set_watch(sets);
        }
        if !self.reservations.is_empty() {
            simulation = simulation.with_reservations(self.reservations);
        }
        if !self.requests.is_empty() {
            simulation = simulation.with_reservation_requests(self.requests);
        }
        if !self.deletions.is_empty() {
            simulation = simulation.with_timeline(&self.deletions, &[]);
        }
        if !self.reservation_deletions.is_empty() {
            simulation = simulation.with_reservation_deletions(&self.reservation_deletions);
        }
        if !self.site_notes.is_empty() {
            simulation = simulation.with_site_notes(self.site_notes);
        }
        simulation
            .run(policy, sink, &mut |_| {})
            .unwrap_or_else(|e| panic!("the run stopped: {e}"))
    }
}

/// The tests' deterministic generator, so they need no random-number crate: a 64-bit linear
/// congruential generator (Knuth's MMIX constants), read from its high bits.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

/// A directory of a test's own, removed with everything in it when dropped.
///
/// The tests need only this of a temporary-file crate; `tempfile` brought `rustix` with its
/// `std` feature, which turned on `bitflags`' `std` in test builds only, so every polars crate
/// built on `bitflags` was checked twice in CI (once for clippy's test targets, once for the
/// docs).
#[derive(Debug)]
pub struct TempDir {
    path: std::path::PathBuf,
}

impl TempDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort, as a temporary directory's removal always is: a failure leaves files
        // under the system's temporary directory, not a failed test.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A fresh, empty directory under the system's temporary directory, unique to this process
/// and call: named by the process id and a per-process count, and created with `create_dir`,
/// which fails rather than reuse a directory a test of an earlier process left behind (such a
/// name is skipped).
///
/// # Errors
/// If the system's temporary directory cannot take a new directory.
pub fn tempdir() -> std::io::Result<TempDir> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = base.join(format!("placesim-test-{}-{n}", std::process::id()));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(TempDir { path }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tempdir;

    #[test]
    fn temp_dirs_are_distinct_and_removed_with_their_files() {
        let (a, b) = (tempdir().expect("a dir"), tempdir().expect("another"));
        assert_ne!(a.path(), b.path());
        let kept = a.path().to_owned();
        std::fs::create_dir(kept.join("sub")).expect("a subdirectory");
        std::fs::write(kept.join("sub/f"), b"x").expect("a file");
        assert!(std::fs::read_dir(b.path()).expect("b").next().is_none());
        drop(a);
        assert!(!kept.exists());
        assert!(b.path().is_dir());
    }
}
