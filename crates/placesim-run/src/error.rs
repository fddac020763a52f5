//! What can stop a run or a sweep.
//!
//! Each variant's text names the file, the run or the flag it is about, and quotes its cause,
//! so that a front end prints it as it is.

use std::path::PathBuf;

/// A run or a sweep could not be planned, executed or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The scenario file is wrong, or its workload could not be read.
    #[error(transparent)]
    Scenario(#[from] placesim_scenario::ScenarioError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] placesim_workload::SwfError),
    /// A scenario or sweep file is not text, or could not be read.
    #[error(transparent)]
    Text(#[from] placesim_workload::TextError),
    /// A recorded file (`[workload] recorded`) cannot be read.
    #[error(transparent)]
    RecordedFile(#[from] placesim_workload::recorded::RecordedError),
    /// A recorded job ran on a vnode the scenario's cluster lacks.
    #[error("{}: job {job} ran on vnode `{vnode}`, which the scenario's cluster lacks", path.display())]
    Recorded {
        /// The recorded file.
        path: std::path::PathBuf,
        /// The job.
        job: u64,
        /// The vnode.
        vnode: String,
    },
    /// A recorded job's `exec_vnode` does not read against the scenario's resources.
    #[error("{}: job {job}: exec_vnode {message}", path.display())]
    RecordedExecVnode {
        /// The recorded file.
        path: std::path::PathBuf,
        /// The job.
        job: u64,
        /// What is wrong.
        message: String,
    },
    /// The record cannot be replayed as it stands (`--as-recorded`): a job of the workload
    /// without a start in it, or an allocation its vnodes or the job's request refuse.
    #[error("{}: job {job}: {message}", path.display())]
    RecordNotReplayable {
        /// The recorded file.
        path: std::path::PathBuf,
        /// The job's number.
        job: u64,
        /// What is wrong.
        message: String,
    },
    /// `--as-recorded` was asked of a run with no record.
    #[error(
        "--as-recorded replays what really happened, and this scenario has no `[workload] recorded` file (an imported site's has one)"
    )]
    NoRecord,
    /// The results could not be written.
    #[error(transparent)]
    Metrics(#[from] placesim_metrics::MetricsError),
    /// A file could not be read or written, or a directory made.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done: `reading`, `writing`, `creating`, `renaming`.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The machine a plain replay asks for cannot be built.
    #[error("building the machine: {0}")]
    Machine(#[source] placesim_core::ClusterError),
    /// A job asks for something the placement cannot do; refused before the run starts.
    #[error(
        "{}: job {job} asks for {what}, which the {placement} placement cannot honour",
        path.display()
    )]
    Unsupported {
        /// The scenario file.
        path: PathBuf,
        /// The job's id in the trace.
        job: u64,
        /// What it asks for.
        what: &'static str,
        /// The placement's name.
        placement: String,
    },
    /// A timeline entry names what the workload does not have.
    #[error("{}:{line}: key `event.qdel`: {message}", path.display())]
    Timeline {
        /// The scenario file.
        path: PathBuf,
        /// The entry's line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A reservation request asks for something the placement cannot do; refused before the
    /// run starts.
    #[error(
        "{}: reservation {name} asks for {what}, which the {placement} placement cannot honour",
        path.display()
    )]
    UnsupportedReservation {
        /// The scenario file.
        path: PathBuf,
        /// The reservation.
        name: String,
        /// What it asks for.
        what: &'static str,
        /// The placement's name.
        placement: String,
    },
    /// The run took more samples than a run may; nothing was written.
    #[error("simulating {trace}: {source}")]
    Samples {
        /// The trace replayed.
        trace: String,
        /// How many, and where.
        #[source]
        source: placesim_metrics::TooManySamples,
    },
    /// The kernel stopped the run: a policy's decision broke an invariant.
    #[error("simulating {trace} under {policy}: {source}")]
    Simulation {
        /// The trace replayed.
        trace: String,
        /// The discipline.
        policy: String,
        /// The kernel's error.
        #[source]
        source: placesim_core::SimError,
    },
    /// A sweep file, or a run it makes, is wrong.
    #[error("{}: {message}", path.display())]
    Sweep {
        /// The sweep file (or the base scenario, for its TOML).
        path: PathBuf,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The shard asked for does not exist.
    #[error("{0}")]
    Shard(String),
    /// One run of a sweep failed.
    #[error("run {run}: {source}")]
    SweepRun {
        /// The run's partitions, `axis=label, ..., replicate=k`.
        run: String,
        /// Why.
        #[source]
        source: Box<RunError>,
    },
    /// One run of a sweep panicked: a bug.
    #[error("run {run}: panicked")]
    Panicked {
        /// The run's partitions.
        run: String,
    },
    /// The sweep's thread pool could not start.
    #[error("starting the thread pool: {0}")]
    ThreadPool(#[source] rayon::ThreadPoolBuildError),
}

impl RunError {
    /// An I/O error while doing `what` to `path`.
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| RunError::Io { what, path, source }
    }
}
