//! Metrics for placesim runs: a [`JobSink`] that buffers per-job results in columns during a
//! run, a [`RunSummary`] computed from them, and Parquet output (`jobs.parquet`,
//! `summary.parquet`, `timeseries.parquet`) written atomically with polars.
//!
//! Every column, with its unit and formula, is documented in `docs/output-schema.md`.

mod exec;
mod fidelity;
mod occupancy;
mod parquet;
pub mod schema;
mod sink;
mod strings;
mod summary;
mod write;

pub use fidelity::{Fidelity, KeyAgreement, Recorded, fidelity};
pub use occupancy::{MAX_SAMPLES, OccupancyConfig, OccupancyStats, TooManySamples};
pub use sink::JobSink;
pub use summary::{
    BSD_TAU_SECS, GroupWaits, RunMeta, RunSummary, SkipColumn, Timing, WindowMetrics,
};
pub use write::{
    EVENTS_PER_ROW_GROUP, JOBS_PER_ROW_GROUP, MetricsError, StreamingJobSink, events_frame,
    jobs_frame, summary_frame, timeseries_frame, vnodes_frame, waits_frame, warm_up, write_events,
    write_jobs, write_reservations, write_run, write_summary, write_timeseries, write_vnodes,
};
