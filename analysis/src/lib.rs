//! Reports over placesim results: reads the Parquet files back with polars and compares runs,
//! as a terminal table, a Markdown table and a self-contained HTML report with SVG plots
//! ([`compare`], [`render_html`]).
//!
//! Reading the files back (rather than reusing in-memory summaries) means the report shows
//! exactly what the Parquet output holds.

mod compare;
mod explain;
mod export;
mod html;
pub mod picture;
mod stats;
pub mod svg;

pub use compare::{
    Comparison, ConfigRow, FIDELITY, METRICS, Metric, RunDir, SizeClassRow, compare, compare_over,
    discover,
};
pub use explain::explain;
pub use export::pbs_accounting;
pub use html::{render_html, render_terminal};
pub use stats::{MeanCi, t_975};

use placesim_metrics::schema::summary;
use polars::prelude::*;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Reading or rendering a report failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A file system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A Parquet file could not be read, or lacks a column the report needs.
    #[error("{}: {source}", path.display())]
    Polars {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: PolarsError,
    },
    /// The run has no job of that number.
    #[error("{}: no job {job_id}", path.display())]
    NoJob {
        /// The jobs.parquet read.
        path: PathBuf,
        /// The job asked for.
        job_id: u64,
    },
    /// No run was found under the directory.
    #[error("{}: no */summary.parquet found", .0.display())]
    NoRuns(PathBuf),
}

/// One run's headline figures, as read from its summary.parquet.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// Scenario name.
    pub scenario: String,
    /// Policy name.
    pub policy: String,
    /// Seed.
    pub seed: u64,
    /// Jobs run.
    pub jobs_run: u64,
    /// Records skipped, all reasons.
    pub skipped: u64,
    /// Utilization.
    pub utilization: f64,
    /// Mean wait, seconds.
    pub wait_mean_s: f64,
    /// Median wait, seconds.
    pub wait_median_s: f64,
    /// 95th percentile wait, seconds.
    pub wait_p95_s: f64,
    /// Mean bounded slowdown.
    pub bsd_mean: f64,
    /// Makespan, seconds.
    pub makespan_s: u64,
    /// Throughput, jobs per hour.
    pub throughput_jobs_per_hour: f64,
}

pub(crate) fn polars_err(path: &Path) -> impl Fn(PolarsError) -> ReportError + '_ {
    move |source| ReportError::Polars {
        path: path.to_owned(),
        source,
    }
}

fn u64_at(df: &DataFrame, name: &str) -> PolarsResult<u64> {
    df.column(name)?
        .cast(&DataType::UInt64)?
        .u64()?
        .get(0)
        .ok_or_else(|| PolarsError::ComputeError(format!("column `{name}` is null").into()))
}

fn f64_at(df: &DataFrame, name: &str) -> PolarsResult<f64> {
    df.column(name)?
        .cast(&DataType::Float64)?
        .f64()?
        .get(0)
        .ok_or_else(|| PolarsError::ComputeError(format!("column `{name}` is null").into()))
}

fn str_at(df: &DataFrame, name: &str) -> PolarsResult<String> {
    let col = df.column(name)?.as_materialized_series().clone();
    col.str()?
        .get(0)
        .map(str::to_owned)
        .ok_or_else(|| PolarsError::ComputeError(format!("column `{name}` is null").into()))
}

/// Reads one summary.parquet.
pub fn read_summary(path: &Path) -> Result<RunRow, ReportError> {
    let file = fs::File::open(path).map_err(|source| ReportError::Io {
        path: path.to_owned(),
        source,
    })?;
    let df = ParquetReader::new(file)
        .finish()
        .map_err(polars_err(path))?;
    let row = (|| -> PolarsResult<RunRow> {
        let skipped = df
            .get_column_names()
            .iter()
            .filter(|n| n.starts_with("skipped_"))
            .map(|n| u64_at(&df, n))
            .sum::<PolarsResult<u64>>()?;
        Ok(RunRow {
            scenario: str_at(&df, summary::SCENARIO.name)?,
            policy: str_at(&df, summary::POLICY.name)?,
            seed: u64_at(&df, summary::SEED.name)?,
            jobs_run: u64_at(&df, summary::JOBS_RUN.name)?,
            skipped,
            utilization: f64_at(&df, summary::UTILIZATION.name)?,
            wait_mean_s: f64_at(&df, summary::WAIT_MEAN_S.name)?,
            wait_median_s: f64_at(&df, summary::WAIT_MEDIAN_S.name)?,
            wait_p95_s: f64_at(&df, summary::WAIT_P95_S.name)?,
            bsd_mean: f64_at(&df, summary::BSD_MEAN.name)?,
            makespan_s: u64_at(&df, summary::MAKESPAN_S.name)?,
            throughput_jobs_per_hour: f64_at(&df, summary::THROUGHPUT_JOBS_PER_HOUR.name)?,
        })
    })();
    row.map_err(polars_err(path))
}

/// A u64 column of `df`, nulls kept.
pub(crate) fn u64_column(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<u64>>> {
    Ok(df.column(name)?.u64()?.iter().collect())
}

/// A numeric column of `df` as f64, nulls kept.
pub(crate) fn f64_column(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<f64>>> {
    let column = df.column(name)?.cast(&DataType::Float64)?;
    let ca = column.f64()?;
    Ok((0..ca.len()).map(|i| ca.get(i)).collect())
}

/// A boolean column of `df`, a null read as false.
pub(crate) fn bool_column(df: &DataFrame, name: &str) -> PolarsResult<Vec<bool>> {
    Ok(df
        .column(name)?
        .bool()?
        .iter()
        .map(|b| b.unwrap_or(false))
        .collect())
}

/// A string column of `df`, nulls kept.
pub(crate) fn str_column(df: &DataFrame, name: &str) -> PolarsResult<Vec<Option<String>>> {
    Ok(df
        .column(name)?
        .str()?
        .iter()
        .map(|s| s.map(str::to_owned))
        .collect())
}

/// Where one job ran, as jobs.parquet records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlacement {
    /// The job's number in the trace.
    pub job_id: u64,
    /// When it started, seconds (null for a job that never started).
    pub start_s: Option<u64>,
    /// When it ended, seconds.
    pub end_s: Option<u64>,
    /// Its placement set, as the placement named it (null under first fit).
    pub placement_set: Option<String>,
    /// Its vnodes in PBS's `exec_vnode` syntax (null unless the run kept them).
    pub exec_vnode: Option<String>,
    /// Whether it was already running at t = 0.
    pub running_at_start: bool,
}

/// Reads where every job of a run ran, from its jobs.parquet, in row order: what a picture of
/// placement over time is drawn from.
pub fn read_placements(path: &Path) -> Result<Vec<JobPlacement>, ReportError> {
    use placesim_metrics::schema::jobs;
    let df = read_columns(
        path,
        &[
            jobs::JOB_ID.name,
            jobs::START_S.name,
            jobs::END_S.name,
            jobs::PLACEMENT_SET.name,
            jobs::EXEC_VNODE.name,
            jobs::RUNNING_AT_START.name,
        ],
    )?;
    let rows = || -> PolarsResult<Vec<JobPlacement>> {
        let at_start = bool_column(&df, jobs::RUNNING_AT_START.name)?;
        let u64s = |name: &str| u64_column(&df, name);
        let strs = |name: &str| str_column(&df, name);
        let (ids, starts, ends) = (
            u64s(jobs::JOB_ID.name)?,
            u64s(jobs::START_S.name)?,
            u64s(jobs::END_S.name)?,
        );
        let (sets, execs) = (
            strs(jobs::PLACEMENT_SET.name)?,
            strs(jobs::EXEC_VNODE.name)?,
        );
        let mut out = Vec::with_capacity(df.height());
        for i in 0..df.height() {
            out.push(JobPlacement {
                job_id: ids[i].ok_or_else(|| PolarsError::ComputeError("a null job_id".into()))?,
                start_s: starts[i],
                end_s: ends[i],
                placement_set: sets[i].clone(),
                exec_vnode: execs[i].clone(),
                running_at_start: at_start[i],
            });
        }
        Ok(out)
    };
    rows().map_err(polars_err(path))
}

/// Whether a run's jobs.parquet names any job's vnodes: read from its `exec_vnode` column
/// alone, so that a run that did not keep them costs the report almost nothing.
pub(crate) fn any_exec_vnode(path: &Path) -> Result<bool, ReportError> {
    use placesim_metrics::schema::jobs;
    let df = read_columns(path, &[jobs::EXEC_VNODE.name])?;
    let column = df.column(jobs::EXEC_VNODE.name).map_err(polars_err(path))?;
    Ok(column.null_count() < column.len())
}

/// The `columns` of the Parquet file at `path`, an error naming the file if it cannot be
/// opened, read, or lacks one of them.
pub(crate) fn read_columns(path: &Path, columns: &[&str]) -> Result<DataFrame, ReportError> {
    let file = fs::File::open(path).map_err(|source| ReportError::Io {
        path: path.to_owned(),
        source,
    })?;
    ParquetReader::new(file)
        .with_columns(Some(columns.iter().map(|c| (*c).to_owned()).collect()))
        .finish()
        .map_err(polars_err(path))
}

/// Reads every `*/summary.parquet` directly under `dir`, in directory-name order.
pub fn read_runs(dir: &Path) -> Result<Vec<RunRow>, ReportError> {
    let entries = fs::read_dir(dir).map_err(|source| ReportError::Io {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path().join("summary.parquet"))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(ReportError::NoRuns(dir.to_owned()));
    }
    paths.iter().map(|p| read_summary(p)).collect()
}

const HEADERS: [&str; 9] = [
    "policy",
    "jobs",
    "skipped",
    "utilization",
    "mean wait (s)",
    "median wait (s)",
    "p95 wait (s)",
    "mean BSD",
    "makespan (s)",
];

fn cells(r: &RunRow) -> [String; 9] {
    [
        r.policy.clone(),
        r.jobs_run.to_string(),
        r.skipped.to_string(),
        format!("{:.4}", r.utilization),
        format!("{:.1}", r.wait_mean_s),
        format!("{:.1}", r.wait_median_s),
        format!("{:.1}", r.wait_p95_s),
        format!("{:.2}", r.bsd_mean),
        r.makespan_s.to_string(),
    ]
}

/// The runs as an aligned plain-text table, one row per run.
pub fn render_table(rows: &[RunRow]) -> String {
    let body: Vec<[String; 9]> = rows.iter().map(cells).collect();
    let mut widths = HEADERS.map(str::len);
    for r in &body {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i == 0 {
                let _ = write!(out, "{c:<w$}");
            } else {
                let _ = write!(out, "  {c:>w$}");
            }
        }
        out.push('\n');
    };
    line(&mut out, &HEADERS.map(str::to_owned));
    for r in &body {
        line(&mut out, r);
    }
    out
}

/// The runs as a Markdown report with a title naming the scenario.
pub fn render_markdown(rows: &[RunRow]) -> String {
    let mut out = String::new();
    let scenario = rows.first().map_or("", |r| r.scenario.as_str());
    let _ = writeln!(out, "# placesim report: {scenario}\n");
    let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(HEADERS.len()));
    for r in rows {
        let _ = writeln!(out, "| {} |", cells(r).join(" | "));
    }
    let _ = writeln!(
        out,
        "\nWait is start − submit; BSD is bounded slowdown with τ = 10 s; utilization is \
         Σ size × runtime / (processors × makespan). See docs/output-schema.md."
    );
    out
}

/// Reads every run under `dir`, writes `dir/report.md`, and returns the plain-text table.
pub fn report(dir: &Path) -> Result<String, ReportError> {
    let rows = read_runs(dir)?;
    let md_path = dir.join("report.md");
    fs::write(&md_path, render_markdown(&rows)).map_err(|source| ReportError::Io {
        path: md_path,
        source,
    })?;
    Ok(render_table(&rows))
}

/// Compares every run under `dir` (at any depth), writes the HTML report to `html`, and
/// returns the comparison and its terminal table.
pub fn html_report(dir: &Path, html: &Path) -> Result<(Comparison, String), ReportError> {
    html_report_over(dir, html, None, None)
}

/// As [`html_report`], with the placement pictures over `window` (seconds, [start, end)),
/// and, with `explain`, that job explained for each configuration's first run.
pub fn html_report_over(
    dir: &Path,
    html: &Path,
    window: Option<(u64, u64)>,
    explain: Option<u64>,
) -> Result<(Comparison, String), ReportError> {
    let comparison = compare_over(dir, window, explain)?;
    fs::write(html, render_html(&comparison)).map_err(|source| ReportError::Io {
        path: html.to_owned(),
        source,
    })?;
    let table = render_terminal(&comparison);
    Ok((comparison, table))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(policy: &str, wait: f64) -> RunRow {
        RunRow {
            scenario: "s".into(),
            policy: policy.into(),
            seed: 0,
            jobs_run: 12,
            skipped: 3,
            utilization: 0.5,
            wait_mean_s: wait,
            wait_median_s: 1.0,
            wait_p95_s: 2.0,
            bsd_mean: 1.25,
            makespan_s: 99,
            throughput_jobs_per_hour: 1.0,
        }
    }

    #[test]
    fn table_aligns_columns_and_markdown_has_a_row_per_run() {
        let rows = [row("easy", 10.0), row("fcfs", 12345.6)];
        let table = render_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{table}");
        assert!(lines[2].starts_with("fcfs") && lines[2].contains("12345.6"));
        let md = render_markdown(&rows);
        assert!(md.starts_with("# placesim report: s\n"));
        assert!(
            md.contains("| easy | 12 | 3 | 0.5000 | 10.0 | 1.0 | 2.0 | 1.25 | 99 |"),
            "{md}"
        );
    }
}
