//! Parquet output, written atomically: each file goes to a temporary name in the same
//! directory and is renamed into place, so a reader never sees half a file.

use crate::sink::JobSink;
use crate::summary::{RunMeta, RunSummary, bounded_slowdown};
use placesim_core::Workload;
use polars::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

/// Writing results failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// polars could not build or encode a table.
    #[error("{}: {source}", path.display())]
    Polars {
        /// The file being written.
        path: PathBuf,
        /// The cause.
        source: PolarsError,
    },
}

fn string_column(name: &str, value: &str, len: usize) -> Column {
    let scalar = Scalar::new(DataType::String, AnyValue::StringOwned(value.into()));
    Column::new_scalar(name.into(), scalar, len)
}

fn id_columns(meta: &RunMeta, len: usize) -> Vec<Column> {
    vec![
        string_column("scenario", &meta.scenario, len),
        string_column("policy", &meta.policy, len),
        Column::new_scalar("seed".into(), Scalar::from(meta.seed), len),
    ]
}

/// Builds the jobs table: one row per job that ran, in submit order.
pub fn jobs_frame(meta: &RunMeta, workload: &Workload, sink: &JobSink) -> PolarsResult<DataFrame> {
    let n = sink.n_ended();
    let mut job_id = Vec::with_capacity(n);
    let mut submit = Vec::with_capacity(n);
    let mut start = Vec::with_capacity(n);
    let mut end = Vec::with_capacity(n);
    let mut wait = Vec::with_capacity(n);
    let mut runtime = Vec::with_capacity(n);
    let mut trace_runtime = Vec::with_capacity(n);
    let mut estimate = Vec::with_capacity(n);
    let mut size = Vec::with_capacity(n);
    let mut killed = Vec::with_capacity(n);
    let mut bsd = Vec::with_capacity(n);
    for (i, job) in workload.jobs().iter().enumerate() {
        let Some((s, e)) = sink.span(i) else { continue };
        let w = s.as_secs() - job.submit.as_secs();
        let r = e.as_secs() - s.as_secs();
        job_id.push(job.source_id);
        submit.push(job.submit.as_secs());
        start.push(s.as_secs());
        end.push(e.as_secs());
        wait.push(w);
        runtime.push(r);
        trace_runtime.push(job.runtime.as_secs());
        estimate.push(job.estimate.as_secs());
        size.push(job.size);
        killed.push(sink.killed[i]);
        bsd.push(bounded_slowdown(w, r));
    }
    let mut columns = id_columns(meta, n);
    columns.extend([
        Column::new("job_id".into(), job_id),
        Column::new("submit_s".into(), submit),
        Column::new("start_s".into(), start),
        Column::new("end_s".into(), end),
        Column::new("wait_s".into(), wait),
        Column::new("runtime_s".into(), runtime),
        Column::new("trace_runtime_s".into(), trace_runtime),
        Column::new("estimate_s".into(), estimate),
        Column::new("size".into(), size),
        Column::new("killed".into(), killed),
        Column::new("bounded_slowdown".into(), bsd),
    ]);
    DataFrame::new(n, columns)
}

/// Builds the one-row summary table.
pub fn summary_frame(s: &RunSummary) -> PolarsResult<DataFrame> {
    let mut columns = id_columns(&s.meta, 1);
    columns.push(Column::new("trace".into(), [s.meta.trace.as_str()]));
    columns.push(Column::new("procs".into(), [s.meta.procs]));
    columns.push(Column::new("records".into(), [s.records]));
    columns.push(Column::new("jobs_run".into(), [s.jobs_run]));
    columns.push(Column::new("jobs_killed".into(), [s.jobs_killed]));
    columns.push(Column::new(
        "jobs_never_started".into(),
        [s.jobs_never_started],
    ));
    for (reason, count) in &s.skipped {
        columns.push(Column::new(format!("skipped_{reason}").into(), [*count]));
    }
    columns.extend([
        Column::new("makespan_s".into(), [s.makespan_s]),
        Column::new("utilization".into(), [s.utilization]),
        Column::new("wait_mean_s".into(), [s.wait_mean_s]),
        Column::new("wait_median_s".into(), [s.wait_median_s]),
        Column::new("wait_p95_s".into(), [s.wait_p95_s]),
        Column::new("bsd_mean".into(), [s.bsd_mean]),
        Column::new(
            "throughput_jobs_per_hour".into(),
            [s.throughput_jobs_per_hour],
        ),
        Column::new("events".into(), [s.events]),
        Column::new("passes".into(), [s.passes]),
        Column::new("wall_seconds".into(), [s.timing.map(|t| t.wall_seconds)]),
        Column::new("events_per_second".into(), [s.events_per_second()]),
    ]);
    DataFrame::new(1, columns)
}

fn write_atomic(path: &Path, df: &mut DataFrame) -> Result<(), MetricsError> {
    let tmp = path.with_extension("parquet.tmp");
    let io = |source| MetricsError::Io {
        path: tmp.clone(),
        source,
    };
    let file = fs::File::create(&tmp).map_err(io)?;
    // The writer emits many small pieces (page and thrift headers): buffer them.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    ParquetWriter::new(&mut out)
        .with_compression(ParquetCompression::Snappy)
        .finish(df)
        .map_err(|source| MetricsError::Polars {
            path: path.to_owned(),
            source,
        })?;
    out.into_inner().map_err(|e| MetricsError::Io {
        path: tmp.clone(),
        source: e.into_error(),
    })?;
    fs::rename(&tmp, path).map_err(|source| MetricsError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Writes `jobs.parquet` into `dir`.
pub fn write_jobs(
    dir: &Path,
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> Result<(), MetricsError> {
    let path = dir.join("jobs.parquet");
    let mut df = jobs_frame(meta, workload, sink).map_err(|source| MetricsError::Polars {
        path: path.clone(),
        source,
    })?;
    write_atomic(&path, &mut df)
}

/// Writes `summary.parquet` into `dir`.
pub fn write_summary(dir: &Path, summary: &RunSummary) -> Result<(), MetricsError> {
    let path = dir.join("summary.parquet");
    let mut df = summary_frame(summary).map_err(|source| MetricsError::Polars {
        path: path.clone(),
        source,
    })?;
    write_atomic(&path, &mut df)
}

/// Creates `dir` if needed and writes both tables of a run into it.
pub fn write_run(
    dir: &Path,
    workload: &Workload,
    sink: &JobSink,
    summary: &RunSummary,
) -> Result<(), MetricsError> {
    fs::create_dir_all(dir).map_err(|source| MetricsError::Io {
        path: dir.to_owned(),
        source,
    })?;
    write_jobs(dir, &summary.meta, workload, sink)?;
    write_summary(dir, summary)
}
