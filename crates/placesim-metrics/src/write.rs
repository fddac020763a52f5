//! Parquet output, written atomically: each file goes to a temporary name in the same
//! directory and is renamed into place, so a reader never sees half a file.

use crate::exec::ExecGroup;
use crate::parquet::{EncodedColumn, ParquetFile, RowGroupToWrite};
use crate::schema::{self, jobs, summary, timeseries};
use crate::sink::Factors;
use crate::sink::{EventKind, JobSink, sets_sampled};
use crate::strings::{StringColumn, bool_column, f64_column, shared_text_column, u64_column};
use crate::summary::{GroupWaits, RunMeta, RunSummary, bounded_slowdown};
use placesim_core::Workload;
use polars::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

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
        string_column(jobs::SCENARIO.name, &meta.scenario, len),
        string_column(jobs::POLICY.name, &meta.policy, len),
        Column::new_scalar(jobs::SEED.name.into(), Scalar::from(meta.seed), len),
    ]
}

/// Builds the jobs table: one row per job that ran, in submit order.
pub fn jobs_frame(meta: &RunMeta, workload: &Workload, sink: &JobSink) -> PolarsResult<DataFrame> {
    jobs_group(meta, workload, sink, 0..workload.jobs().len())?.frame()
}

/// A part of the jobs table as the simulation's thread makes it: every column but the vnode
/// texts, which [`JobsGroup::frame`] makes from their runs where the part is written. A job of
/// thousands of vnodes has tens of kilobytes of them, and the simulation need not wait for them.
struct JobsGroup {
    /// The columns, with the vnode texts null for now.
    frame: DataFrame,
    exec_vnode: Option<ExecGroup>,
    estimated_exec_vnode: Option<ExecGroup>,
}

impl JobsGroup {
    /// The vnode texts' groups, by column name.
    fn texts(self) -> (DataFrame, [(&'static str, Option<ExecGroup>); 2]) {
        (
            self.frame,
            [
                (jobs::EXEC_VNODE.name, self.exec_vnode),
                (jobs::ESTIMATED_EXEC_VNODE.name, self.estimated_exec_vnode),
            ],
        )
    }

    /// The whole table.
    fn frame(self) -> PolarsResult<DataFrame> {
        let (mut frame, texts) = self.texts();
        for (name, group) in texts {
            if let Some(group) = group {
                frame.replace(name, group.column(name)?)?;
            }
        }
        Ok(frame)
    }

    /// The row group as jobs.parquet stores it: the vnode texts made once per distinct
    /// allocation, into a dictionary compressed with zstd ([`ExecGroup::stored`]).
    fn row_group(self) -> PolarsResult<RowGroupToWrite> {
        let (frame, texts) = self.texts();
        let mut encoded = Vec::new();
        for (name, group) in texts {
            if let Some(values) = group.map(|g| g.stored()).transpose()?.flatten() {
                encoded.push(EncodedColumn { name, values });
            }
        }
        Ok(RowGroupToWrite { frame, encoded })
    }
}

/// The jobs table for the jobs whose ids lie in `ids`, less its vnode texts.
fn jobs_group(
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
    ids: std::ops::Range<usize>,
) -> PolarsResult<JobsGroup> {
    JobsRows::of(workload, sink, ids).group(meta)
}

/// What a row group of jobs.parquet reads of the workload and the sink, copied out on the
/// simulation's thread, so that the writer's thread makes the table: the columns cost polars'
/// builders a vector, a validity mask and a type check each (on HPC2N a sixteenth of the
/// simulation's thread), where the copies are plain.
struct JobsRows {
    jobs: Vec<placesim_core::Job>,
    /// Start and end, for each job that ran.
    ran: Vec<Option<(u64, u64)>>,
    killed: Vec<bool>,
    factors: Vec<Factors>,
    contiguity_runs: Vec<u32>,
    size_class: Vec<&'static str>,
    failures: Vec<(u32, u64, bool)>,
    /// Per job, whether it was running at the start; `None` when no job was.
    running_at_start: Option<Vec<bool>>,
    request_texts: Option<Arc<Vec<String>>>,
    /// Per job, its placement set's label and its comment.
    notes: Vec<[Option<Arc<str>>; 2]>,
    estimated: Vec<Option<u64>>,
    /// At submit and at start; `None` where the run kept none.
    priorities: [Option<Vec<Option<f64>>>; 2],
    exec_vnode: Option<ExecGroup>,
    estimated_exec_vnode: Option<ExecGroup>,
}

impl JobsRows {
    /// The rows of the jobs whose ids lie in `ids`.
    fn of(workload: &Workload, sink: &JobSink, ids: std::ops::Range<usize>) -> JobsRows {
        let priorities =
            |by: &Vec<Option<f64>>| (!by.is_empty()).then(|| ids.clone().map(|i| by[i]).collect());
        JobsRows {
            jobs: workload.jobs()[ids.clone()].to_vec(),
            ran: ids
                .clone()
                .map(|i| sink.span(i).map(|(s, e)| (s.as_secs(), e.as_secs())))
                .collect(),
            killed: ids.clone().map(|i| sink.killed(i)).collect(),
            factors: ids.clone().map(|i| sink.factors(i)).collect(),
            contiguity_runs: ids.clone().map(|i| sink.contiguity_runs(i)).collect(),
            size_class: workload.jobs()[ids.clone()]
                .iter()
                .map(|j| sink.size_class(j.size))
                .collect(),
            failures: ids.clone().map(|i| sink.failures(i)).collect(),
            running_at_start: (!sink.running_at_start.is_empty())
                .then(|| sink.running_at_start[ids.clone()].to_vec()),
            request_texts: sink.request_texts.clone(),
            notes: ids
                .clone()
                .map(|i| {
                    let (label, comment) = sink.notes(i);
                    [sink.text(label.into()), sink.text(comment.into())]
                })
                .collect(),
            estimated: ids.clone().map(|i| sink.estimated_start(i)).collect(),
            priorities: [
                priorities(&sink.priority_at_submit),
                priorities(&sink.priority_at_start),
            ],
            exec_vnode: sink.exec_group(ids.clone(), false),
            estimated_exec_vnode: sink.exec_group(ids, true),
        }
    }

    /// The table, less its vnode texts.
    fn group(self, meta: &RunMeta) -> PolarsResult<JobsGroup> {
        let jobs = &self.jobs;
        let n = jobs.len();
        let ran = &self.ran;
        // Columns are nullable only in row groups that hold a job that never started, and the
        // runtime-model and note columns are constants or nulls in groups where every job has
        // the default: the choice depends on the group's own jobs only, so a group comes out
        // the same whether it is written during the run or after it.
        let all_ran = ran.iter().all(Option::is_some);
        let per_run = |name: &str, f: &dyn Fn(usize, u64, u64) -> u64| -> Column {
            if all_ran {
                let v: Vec<u64> = ran
                    .iter()
                    .enumerate()
                    .map(|(k, r)| r.map_or(0, |(s, e)| f(k, s, e)))
                    .collect();
                Column::new(name.into(), v)
            } else {
                let v: Vec<Option<u64>> = ran
                    .iter()
                    .enumerate()
                    .map(|(k, r)| r.map(|(s, e)| f(k, s, e)))
                    .collect();
                Column::new(name.into(), v)
            }
        };
        let submit = |k: usize| jobs[k].submit.as_secs();
        let mut columns = id_columns(meta, n);
        columns.push(Column::new(
            jobs::JOB_ID.name.into(),
            jobs.iter().map(|j| j.source_id).collect::<Vec<u64>>(),
        ));
        columns.push(Column::new(
            jobs::SUBMIT_S.name.into(),
            jobs.iter()
                .map(|j| j.submit.as_secs())
                .collect::<Vec<u64>>(),
        ));
        columns.push(per_run(jobs::START_S.name, &|_, s, _| s));
        columns.push(per_run(jobs::END_S.name, &|_, _, e| e));
        columns.push(per_run(jobs::WAIT_S.name, &|k, s, _| s - submit(k)));
        columns.push(per_run(jobs::RUNTIME_S.name, &|_, s, e| e - s));
        columns.push(Column::new(
            jobs::TRACE_RUNTIME_S.name.into(),
            jobs.iter()
                .map(|j| j.runtime.as_secs())
                .collect::<Vec<u64>>(),
        ));
        columns.push(Column::new(
            jobs::ESTIMATE_S.name.into(),
            jobs.iter()
                .map(|j| j.estimate.as_secs())
                .collect::<Vec<u64>>(),
        ));
        columns.push(Column::new(
            jobs::SIZE.name.into(),
            jobs.iter().map(|j| j.size).collect::<Vec<u32>>(),
        ));
        let killed = self
            .killed
            .iter()
            .zip(ran)
            .map(|(&killed, r)| r.map(|_| killed));
        let bsd = ran
            .iter()
            .enumerate()
            .map(|(k, r)| r.map(|(s, e)| bounded_slowdown(s - submit(k), e - s)));
        if all_ran {
            columns.push(Column::new(
                jobs::KILLED.name.into(),
                killed.flatten().collect::<Vec<bool>>(),
            ));
            columns.push(Column::new(
                jobs::BOUNDED_SLOWDOWN.name.into(),
                bsd.flatten().collect::<Vec<f64>>(),
            ));
        } else {
            columns.push(Column::new(
                jobs::KILLED.name.into(),
                killed.collect::<Vec<Option<bool>>>(),
            ));
            columns.push(Column::new(
                jobs::BOUNDED_SLOWDOWN.name.into(),
                bsd.collect::<Vec<Option<f64>>>(),
            ));
        }
        // The runtime model's factors: H, C, ε, sets spanned, speed spread.
        let factors = &self.factors;
        let plain = all_ran && factors.iter().all(|f| *f == Factors::NONE);
        let factor = |name: &str, default: f64, pick: &dyn Fn(&Factors) -> f32| {
            if plain {
                return Column::new_scalar(name.into(), Scalar::from(default), n);
            }
            let v: Vec<Option<f64>> = factors
                .iter()
                .zip(ran)
                .map(|(f, r)| r.map(|_| f64::from(pick(f))))
                .collect();
            Column::new(name.into(), v)
        };
        columns.push(factor(jobs::SPEED_FACTOR.name, 1.0, &|f| f.speed));
        columns.push(factor(jobs::COMM_FACTOR.name, 1.0, &|f| f.comm));
        columns.push(factor(jobs::NOISE.name, 1.0, &|f| f.noise));
        columns.push(if plain {
            Column::new_scalar(jobs::SETS_SPANNED.name.into(), Scalar::from(1u32), n)
        } else {
            let v: Vec<Option<u32>> = factors
                .iter()
                .zip(ran)
                .map(|(f, r)| r.map(|_| f.sets_spanned))
                .collect();
            Column::new(jobs::SETS_SPANNED.name.into(), v)
        });
        columns.push(factor(jobs::SPEED_SPREAD.name, 0.0, &|f| f.spread));
        columns.push(factor(jobs::CROSS_SET_PAIRS.name, 0.0, &|f| f.cross));
        columns.push(Column::new(
            jobs::CONTIGUITY_RUNS.name.into(),
            self.contiguity_runs
                .iter()
                .zip(ran)
                .map(|(&runs, r)| r.map(|_| runs))
                .collect::<Vec<Option<u32>>>(),
        ));
        columns.push(shared_text_column(
            jobs::SIZE_CLASS.name,
            self.size_class.iter().map(|&class| Some(class)),
        )?);
        // Vnode failures: requeues and lost work (known for every job), and whether one ended
        // it.
        let failures = &self.failures;
        if failures.iter().all(|f| *f == (0, 0, false)) && all_ran {
            columns.push(Column::new_scalar(
                jobs::REQUEUES.name.into(),
                Scalar::from(0u32),
                n,
            ));
            columns.push(Column::new_scalar(
                jobs::LOST_CORE_S.name.into(),
                Scalar::from(0u64),
                n,
            ));
            columns.push(Column::new_scalar(
                jobs::FAILED.name.into(),
                Scalar::from(false),
                n,
            ));
        } else {
            columns.push(Column::new(
                jobs::REQUEUES.name.into(),
                failures.iter().map(|f| f.0).collect::<Vec<u32>>(),
            ));
            columns.push(Column::new(
                jobs::LOST_CORE_S.name.into(),
                failures.iter().map(|f| f.1).collect::<Vec<u64>>(),
            ));
            columns.push(Column::new(
                jobs::FAILED.name.into(),
                failures
                    .iter()
                    .zip(ran)
                    .map(|(f, r)| r.map(|_| f.2))
                    .collect::<Vec<Option<bool>>>(),
            ));
        }
        columns.push(match self.running_at_start {
            None => Column::new_scalar(jobs::RUNNING_AT_START.name.into(), Scalar::from(false), n),
            Some(running) => Column::new(jobs::RUNNING_AT_START.name.into(), running),
        });
        columns.push(match &self.request_texts {
            Some(texts) => shared_text_column(
                jobs::REQUEST.name,
                jobs.iter()
                    .map(|j| texts.get(j.request.index()).map(String::as_str)),
            )?,
            None => Column::full_null(jobs::REQUEST.name.into(), n, &DataType::String),
        });
        // Where each job was placed, and the scheduler's comment.
        for (name, pick) in [(jobs::PLACEMENT_SET.name, 0usize), (jobs::COMMENT.name, 1)] {
            columns.push(if self.notes.iter().all(|x| x[pick].is_none()) {
                Column::full_null(name.into(), n, &DataType::String)
            } else {
                shared_text_column(name, self.notes.iter().map(|x| x[pick].as_deref()))?
            });
        }
        let no_text = |name: &str| Column::full_null(name.into(), n, &DataType::String);
        columns.push(no_text(jobs::EXEC_VNODE.name));
        columns.push(if self.estimated.iter().all(Option::is_none) {
            Column::full_null(jobs::ESTIMATED_START_S.name.into(), n, &DataType::UInt64)
        } else {
            Column::new(jobs::ESTIMATED_START_S.name.into(), self.estimated)
        });
        columns.push(no_text(jobs::ESTIMATED_EXEC_VNODE.name));
        let entity = |name: &str, pick: fn(&placesim_core::Job) -> Option<u32>| {
            Column::new(
                name.into(),
                jobs.iter().map(pick).collect::<Vec<Option<u32>>>(),
            )
        };
        columns.push(entity(jobs::USER.name, |j| j.user()));
        columns.push(entity(jobs::GROUP.name, |j| j.group()));
        columns.push(if jobs.iter().all(|j| j.project().is_none()) {
            Column::full_null(jobs::PROJECT.name.into(), n, &DataType::String)
        } else {
            shared_text_column(
                jobs::PROJECT.name,
                jobs.iter().map(|j| j.project().map(|p| &**p)),
            )?
        });
        for (name, by) in [jobs::PRIORITY_AT_SUBMIT.name, jobs::PRIORITY_AT_START.name]
            .into_iter()
            .zip(self.priorities)
        {
            columns.push(match by {
                None => Column::full_null(name.into(), n, &DataType::Float64),
                Some(values) => Column::new(name.into(), values),
            });
        }
        Ok(JobsGroup {
            frame: schema::conform(jobs::ALL, DataFrame::new(n, columns)?)?,
            exec_vnode: self.exec_vnode,
            estimated_exec_vnode: self.estimated_exec_vnode,
        })
    }
}

/// Builds events.parquet's table: one row per thing the scheduler said or did, in order.
pub fn events_frame(
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> PolarsResult<DataFrame> {
    EventsChunk::of(workload, sink, sink.events.clone()).frame(meta)
}

/// Rows per row group of events.parquet, written (like jobs.parquet's) during the run.
pub const EVENTS_PER_ROW_GROUP: usize = 16_384;

/// A row group of events.parquet as the sink keeps it (24 bytes a row), with the job numbers
/// and the texts its rows name: taken on the simulation's thread, and turned into a table on
/// the writer's, so that building the table overlaps the simulation instead of holding it up.
struct EventsChunk {
    rows: Vec<crate::sink::EventRow>,
    /// Per row, its job's number in its source (what events.parquet's `job_id` shows), and
    /// whether it names a job: a site's event does not. Looked up when the rows are taken, so
    /// that no copy of every job's number is kept for the writer.
    job_ids: Vec<u64>,
    with_job: Vec<bool>,
    /// Per row, the text it names (rows name the sink's texts by index), taken with the
    /// rows: only those, since a copy of all the sink's texts per row group grew with the
    /// run (a run whose comments carry changing counts has millions of texts).
    texts: Vec<Option<Arc<str>>>,
}

impl EventsChunk {
    /// `rows`, taken from `sink`.
    fn of(workload: &Workload, sink: &JobSink, rows: Vec<crate::sink::EventRow>) -> EventsChunk {
        let (job_ids, with_job) = rows
            .iter()
            .map(|r| match workload.jobs().get(r.job as usize) {
                Some(job) => (job.source_id, true),
                None => (0, false),
            })
            .unzip();
        let texts = rows
            .iter()
            .map(|r| r.text_id().and_then(|id| sink.text(id)))
            .collect();
        EventsChunk {
            rows,
            job_ids,
            with_job,
            texts,
        }
    }

    /// The table.
    fn frame(self, meta: &RunMeta) -> PolarsResult<DataFrame> {
        let rows = &self.rows;
        let n = rows.len();
        let mut columns = id_columns(meta, n);
        // A site's event names no job: its id is null.
        columns.push(u64_column(
            schema::events::JOB_ID.name,
            self.job_ids,
            self.with_job,
        ));
        columns.push(u64_column(
            schema::events::TIME_S.name,
            rows.iter().map(|r| r.time).collect(),
            Vec::new(),
        ));
        columns.push(shared_text_column(
            schema::events::KIND.name,
            rows.iter().map(|r| Some(r.kind.name())),
        )?);
        columns.push(shared_text_column(
            schema::events::TEXT.name,
            self.texts.iter().map(|text| text.as_deref()),
        )?);
        columns.push(u64_column(
            schema::events::ESTIMATED_START_S.name,
            rows.iter().map(|r| r.value).collect(),
            rows.iter().map(|r| r.kind == EventKind::Estimate).collect(),
        ));
        schema::conform(schema::events::ALL, DataFrame::new(n, columns)?)
    }
}

/// Writes `events.parquet` into `dir`.
pub fn write_events(
    dir: &Path,
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> Result<(), MetricsError> {
    let n = sink.events.len();
    write_atomic(&dir.join("events.parquet"), |out| {
        let frames = row_group_ranges(n, EVENTS_PER_ROW_GROUP)
            .map(|rows| EventsChunk::of(workload, sink, sink.events[rows].to_vec()).frame(meta));
        write_row_groups(out, frames)
    })
}

/// Builds the one-row summary table: every declared column, computed by its declaration.
pub fn summary_frame(s: &RunSummary) -> PolarsResult<DataFrame> {
    // A skip reason without a declared column would be lost: refuse it.
    if let Some((reason, _)) = s.skipped.iter().find(|(r, _)| {
        !summary::ALL
            .iter()
            .any(|c| c.name.strip_prefix("skipped_") == Some(*r))
    }) {
        return Err(PolarsError::SchemaMismatch(
            format!("no declared column for records skipped as `{reason}`").into(),
        ));
    }
    let columns: Vec<Column> = summary::ALL
        .iter()
        .map(|c| (c.value)(s).column(c.name))
        .collect();
    schema::conform(summary::ALL, DataFrame::new(1, columns)?)
}

/// Writes a file through `write` into a temporary name beside `path`, then renames it into
/// place, so that no reader ever sees half a file.
fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> PolarsResult<()>,
) -> Result<(), MetricsError> {
    write_atomic_unless_abandoned(path, |out| write(out).map(|()| Written::Whole))
}

/// Whether a file was written whole or abandoned half way.
enum Written {
    Whole,
    Abandoned,
}

/// As [`write_atomic`], except that a file `write` abandons is removed, not renamed into
/// place: a run that fails leaves no partial Parquet behind.
fn write_atomic_unless_abandoned(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> PolarsResult<Written>,
) -> Result<(), MetricsError> {
    let mut out = create_temporary(path)?;
    let written = write(&mut out).map_err(polars_error_of(path));
    put_in_place(path, out, written)
}

/// Makes a polars error met writing `path` a [`MetricsError`] naming the file.
fn polars_error_of(path: &Path) -> impl Fn(PolarsError) -> MetricsError + Copy + '_ {
    move |source| MetricsError::Polars {
        path: path.to_owned(),
        source,
    }
}

/// The name `path` is written under until it is whole.
fn temporary_of(path: &Path) -> PathBuf {
    path.with_extension("parquet.tmp")
}

/// Creates the temporary file of `path` ([`temporary_of`]), buffered.
fn create_temporary(path: &Path) -> Result<std::io::BufWriter<fs::File>, MetricsError> {
    let tmp = temporary_of(path);
    let file = fs::File::create(&tmp).map_err(|source| MetricsError::Io { path: tmp, source })?;
    // The writer emits many small pieces (page and thrift headers): buffer them. Pages larger
    // than the buffer go straight through, so 64 KiB gathers the small pieces as well as a
    // larger buffer would, and a run writing several files at once does not keep a mebibyte
    // each (KTH-SP2's whole run has 28,000 jobs: 2 MiB is 75 bytes a job).
    Ok(std::io::BufWriter::with_capacity(1 << 16, file))
}

/// Flushes `out`, the temporary file of `path`, and renames it into place when `written`
/// says it is whole; otherwise removes it. The error returned is the writing's, else the
/// flush's, else the rename's.
fn put_in_place(
    path: &Path,
    out: std::io::BufWriter<fs::File>,
    written: Result<Written, MetricsError>,
) -> Result<(), MetricsError> {
    let tmp = temporary_of(path);
    let flushed = out.into_inner().map_err(|e| MetricsError::Io {
        path: tmp.clone(),
        source: e.into_error(),
    });
    match (written, flushed) {
        (Ok(Written::Whole), Ok(_)) => fs::rename(&tmp, path).map_err(|source| MetricsError::Io {
            path: path.to_owned(),
            source,
        }),
        (written, flushed) => {
            // Best effort: the error that matters is the one returned.
            let _ = fs::remove_file(&tmp);
            written.and(flushed).map(|_| ())
        }
    }
}

fn parquet_writer<W: std::io::Write>(out: W) -> ParquetWriter<W> {
    ParquetWriter::new(out)
        .with_compression(ParquetCompression::Snappy)
        .set_parallel(false)
}

/// Rows per row group of jobs.parquet: the table is built and written this many jobs at a
/// time, so its memory does not grow with the trace. Groups this small let most of the encoding
/// happen during the run (KTH-SP2: 3 ms faster whole-process than with 16,384).
pub const JOBS_PER_ROW_GROUP: usize = 8_192;

/// The ranges of rows (job ids, events, samples) that make a file's row groups: fixed
/// multiples of `per_group`, so a file is the same however it is written. An empty table
/// still gets one (empty) group, so the file has its schema.
fn row_group_ranges(n: usize, per_group: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..n.max(1))
        .step_by(per_group)
        .map(move |s| s..n.min(s + per_group))
}

/// The row groups of a table of `n` rows ([`row_group_ranges`]) from the first not handed
/// over yet, `sent` rows having been: what a streamed file sends when the run ends.
fn unsent_row_groups(
    n: usize,
    per_group: usize,
    sent: usize,
) -> impl Iterator<Item = std::ops::Range<usize>> {
    row_group_ranges(n, per_group).filter(move |r| r.start >= sent)
}

/// Writes row groups, in order, as one Parquet file: the one encoding path of every file
/// written as row groups.
fn write_row_groups<G: Into<RowGroupToWrite>>(
    out: &mut impl std::io::Write,
    groups: impl IntoIterator<Item = PolarsResult<G>>,
) -> PolarsResult<()> {
    let mut groups = groups.into_iter();
    let first: RowGroupToWrite = groups.next().ok_or_else(no_row_group)??.into();
    let mut file = ParquetFile::new(out, first.frame.schema())?;
    file.write(first)?;
    for group in groups {
        file.write(group?.into())?;
    }
    file.finish().map(|_| ())
}

/// The error of a file given no row group: it would have no schema.
fn no_row_group() -> PolarsError {
    PolarsError::NoData("no row group to write".into())
}

/// Writes `jobs.parquet` into `dir`, after the run.
pub fn write_jobs(
    dir: &Path,
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> Result<(), MetricsError> {
    let n = workload.jobs().len();
    write_atomic(&dir.join("jobs.parquet"), |out| {
        let frames = row_group_ranges(n, JOBS_PER_ROW_GROUP)
            .map(|ids| jobs_group(meta, workload, sink, ids).and_then(JobsGroup::row_group));
        write_row_groups(out, frames)
    })
}

/// A Parquet file written from the row groups handed to it, in order, by a thread of its own
/// ([`Streamed::start`]) or on the thread that hands them over ([`Streamed::here`]).
#[derive(Debug)]
struct Streamed {
    path: PathBuf,
    groups: Option<std::sync::mpsc::SyncSender<RowGroup>>,
    /// Joined by [`Streamed::finish`], or on drop (so that an abandoned file is removed
    /// before the process goes on to exit).
    writer: Option<std::thread::JoinHandle<Result<(), MetricsError>>>,
    /// The file, when it is written here rather than by a thread (boxed: an open Parquet file
    /// is most of a kilobyte, which a file written by a thread would carry for nothing).
    here: Option<Box<FileHere>>,
}

/// A Parquet file written on the thread that hands over its row groups, each as it comes: a
/// sweep runs a simulation per core, and a writer thread per file would take a share of
/// another run's core. A file never finished is removed when dropped.
struct FileHere {
    path: PathBuf,
    /// Opened at the first row group, whose schema the file takes.
    file: Option<ParquetFile<std::io::BufWriter<fs::File>>>,
    /// The first error met: no row group is written after it, and it is reported by
    /// [`FileHere::finish`].
    failed: Option<MetricsError>,
}

impl std::fmt::Debug for FileHere {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileHere")
            .field("path", &self.path)
            .field("open", &self.file.is_some())
            .field("failed", &self.failed)
            .finish()
    }
}

impl FileHere {
    fn new(path: PathBuf) -> FileHere {
        FileHere {
            path,
            file: None,
            failed: None,
        }
    }

    /// Writes a row group, unless an error came before.
    fn write(&mut self, group: PolarsResult<RowGroupToWrite>) {
        if self.failed.is_none()
            && let Err(e) = self.try_write(group)
        {
            self.failed = Some(e);
        }
    }

    fn try_write(&mut self, group: PolarsResult<RowGroupToWrite>) -> Result<(), MetricsError> {
        let polars = polars_error_of(&self.path);
        let group = group.map_err(polars)?;
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let out = create_temporary(&self.path)?;
                let file = ParquetFile::new(out, group.frame.schema()).map_err(polars)?;
                self.file.insert(file)
            }
        };
        file.write(group).map_err(polars)
    }

    /// Writes the footer and puts the file in place; a file given no row group is an error,
    /// as [`write_row_groups`] makes it. After an error met while writing its row groups the
    /// file is left open, for the drop to remove; one met writing the footer consumed the
    /// file, and what was written is removed here.
    fn finish(&mut self) -> Result<(), MetricsError> {
        if let Some(failed) = self.failed.take() {
            return Err(failed);
        }
        let polars = polars_error_of(&self.path);
        let Some(file) = self.file.take() else {
            return Err(polars(no_row_group()));
        };
        match file.finish() {
            Ok(out) => put_in_place(&self.path, out, Ok(Written::Whole)),
            Err(source) => {
                self.remove_temporary();
                Err(polars(source))
            }
        }
    }

    /// Removes what was written (best effort: the error that matters is the one reported).
    fn remove_temporary(&self) {
        let _ = fs::remove_file(temporary_of(&self.path));
    }
}

impl Drop for FileHere {
    /// Abandons a file never finished, or failed: what was written is removed.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            self.remove_temporary();
        }
    }
}

/// What builds a row group on the writer's thread.
type BuildRowGroup = Box<dyn FnOnce() -> PolarsResult<RowGroupToWrite> + Send>;

/// Work a writer thread does beside its own file, in its turn (see [`Aside`]).
type AsideTask = Box<dyn FnOnce() + Send>;

/// What the writer thread of a [`Streamed`] file receives.
enum RowGroup {
    /// The next row group, built on the writer's thread.
    Rows(BuildRowGroup),
    /// A task beside the file, done in order with the row groups.
    Aside(AsideTask),
    /// The last row group has been sent: the file is whole. Without it (the run failed and the
    /// sink was dropped) the file is abandoned and removed.
    End,
}

/// Which writer thread may work: one at a time while the simulation runs, so that the writers
/// of a run, between them, take at most the one core the simulation leaves, and never a share
/// of the simulation's own. (Three runnable threads on two cores would each get two thirds of
/// one, the simulation too.) Once the simulation has ended there is no share of it to keep,
/// and the last row groups of the files are encoded side by side.
#[derive(Debug, Default)]
struct Turns {
    turn: std::sync::Mutex<()>,
    /// The simulation has ended: a writer works without waiting for its turn.
    simulation_ended: std::sync::atomic::AtomicBool,
}

impl Turns {
    /// Waits for the calling writer's turn, or for none once the simulation has ended.
    fn take(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        if self
            .simulation_ended
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return None;
        }
        Some(self.turn.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Lets every writer work at once from its next row group on.
    fn end_simulation(&self) {
        self.simulation_ended
            .store(true, std::sync::atomic::Ordering::Release);
    }
}

/// The row groups a writer thread receives, each built, and then (by the caller) written, in
/// the thread's turn; the turn is given back before waiting for the next group, never held
/// while waiting.
struct InTurn<'t> {
    received: std::sync::mpsc::Receiver<RowGroup>,
    turns: &'t Turns,
    turn: Option<std::sync::MutexGuard<'t, ()>>,
    /// The last row group was received: the file is whole.
    ended: bool,
}

impl Iterator for InTurn<'_> {
    type Item = PolarsResult<RowGroupToWrite>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.turn = None;
            // A closed channel without the end: the run failed, and the file is abandoned.
            match self.received.recv().ok()? {
                RowGroup::Rows(build) => {
                    self.turn = self.turns.take();
                    return Some(build());
                }
                RowGroup::Aside(task) => {
                    let _turn = self.turns.take();
                    task();
                }
                RowGroup::End => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }
}

impl Streamed {
    /// Starts the writer of `path`, which holds at most `queued` row groups waiting.
    fn start(path: PathBuf, turns: Arc<Turns>, queued: usize) -> Streamed {
        let (groups, received) = std::sync::mpsc::sync_channel::<RowGroup>(queued);
        let target = path.clone();
        let writer = std::thread::spawn(move || {
            write_atomic_unless_abandoned(&target, |out| {
                let mut rows = InTurn {
                    received,
                    turns: &turns,
                    turn: None,
                    ended: false,
                };
                write_row_groups(out, &mut rows)?;
                Ok(if rows.ended {
                    Written::Whole
                } else {
                    Written::Abandoned
                })
            })
        });
        Streamed {
            path,
            groups: Some(groups),
            writer: Some(writer),
            here: None,
        }
    }

    /// Writes `path` on the calling thread, each row group as it is handed over.
    fn here(path: PathBuf) -> Streamed {
        Streamed {
            path: path.clone(),
            groups: None,
            writer: None,
            here: Some(Box::new(FileHere::new(path))),
        }
    }

    /// Hands over one row group that the writer's thread builds (a failure to build it is
    /// the writer's error, reported when it is joined); a file written here builds and writes
    /// it at once, and reports a failure when finished.
    fn send_built_there(&mut self, build: BuildRowGroup) {
        if let Some(here) = &mut self.here {
            here.write(build());
            return;
        }
        if let Some(g) = &self.groups {
            // The writer stopped: its own error is reported when it is joined.
            if g.send(RowGroup::Rows(build)).is_err() {
                self.groups = None;
            }
        }
    }

    /// Has the writer thread do `work` after the row groups handed over before, its result
    /// sent back to the [`Aside`]. A file written here, or a writer that has stopped (its
    /// own error is reported when it is joined), leaves the work to the calling thread, done
    /// at once.
    fn aside(
        &mut self,
        what: PathBuf,
        work: impl FnOnce() -> Result<(), MetricsError> + Send + 'static,
    ) -> Aside {
        let (sent, result) = std::sync::mpsc::sync_channel(1);
        let task: AsideTask = Box::new(move || {
            // The receiver is gone only when its holder gave up waiting.
            let _ = sent.send(work());
        });
        let unsent = match &self.groups {
            Some(g) => g.send(RowGroup::Aside(task)).err().map(|e| e.0),
            None => Some(RowGroup::Aside(task)),
        };
        if let Some(RowGroup::Aside(task)) = unsent {
            self.groups = None;
            task();
        }
        Aside { what, result }
    }

    /// Marks the file whole and waits for it.
    fn finish(mut self) -> Result<(), MetricsError> {
        if let Some(here) = &mut self.here {
            return here.finish();
        }
        if let Some(g) = self.groups.take() {
            // A writer that stopped reports its own error when joined.
            let _ = g.send(RowGroup::End);
        }
        let path = self.path.clone();
        match self.writer.take() {
            Some(writer) => writer.join().unwrap_or_else(|_| {
                Err(MetricsError::Io {
                    path,
                    source: std::io::Error::other("a Parquet writer thread panicked"),
                })
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Streamed {
    /// Abandons a file never finished: the writer sees its channel close without the end and
    /// removes what it wrote.
    fn drop(&mut self) {
        self.groups = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// A [`JobSink`] that writes `jobs.parquet`, `events.parquet` and, for a run that samples
/// sets, `timeseries.parquet` while the run goes on: as soon as every job of a row group has
/// ended (or a row group of events has happened, or of samples been taken), the group is built
/// and handed to a writer thread, so encoding overlaps the simulation on an otherwise idle
/// core ([`StreamingJobSink::on_this_thread`]: built and written at once, on the run's own
/// thread). The files, and `timeseries.parquet` written at the end otherwise, are byte-identical
/// to [`write_jobs`]'s, [`write_events`]'s and [`write_timeseries`]'s.
#[derive(Debug)]
pub struct StreamingJobSink<'w> {
    inner: JobSink,
    workload: &'w Workload,
    meta: RunMeta,
    /// Every job before this index has ended.
    frontier: usize,
    /// Row groups before this job index have been handed over.
    sent_upto: usize,
    /// How many event rows have been handed over; they have left the sink.
    events_sent: usize,
    /// How many samples have been handed over; they have left the sink too.
    samples_sent: usize,
    jobs: Streamed,
    events: Streamed,
    /// Started at the first row group of samples, and only for a run that samples sets: a
    /// run of one set has a row per sample, a few thousand rows written after the run as
    /// fast as handed over, for which a writer thread of its own is not worth its memory.
    timeseries: Option<Streamed>,
    /// Where the files go.
    dir: PathBuf,
    /// Which writer may work; all at once after the run ([`StreamingJobSink::finish_with`]).
    turns: Arc<Turns>,
    /// Whether the files are written on the simulation's thread, with no writer thread
    /// ([`StreamingJobSink::on_this_thread`]).
    writes_here: bool,
}

/// A file of a [`StreamingJobSink`]: written `here`, or by a writer thread that takes its
/// `turns` and holds at most `queued` row groups waiting.
fn streamed(path: PathBuf, turns: &Arc<Turns>, queued: usize, here: bool) -> Streamed {
    if here {
        Streamed::here(path)
    } else {
        Streamed::start(path, Arc::clone(turns), queued)
    }
}

impl<'w> StreamingJobSink<'w> {
    /// Starts writing `dir/jobs.parquet` and `dir/events.parquet` (creating `dir`) for a run
    /// of `workload`; `dir/timeseries.parquet` follows.
    pub fn new(dir: &Path, meta: RunMeta, workload: &'w Workload) -> Result<Self, MetricsError> {
        Self::writing(dir, meta, workload, false)
    }

    /// As [`StreamingJobSink::new`], but each row group is built and written on the calling
    /// thread (the simulation's) as soon as it is whole, with no writer thread: for a sweep,
    /// which runs a simulation on every core. The run's event rows and finished jobs leave
    /// memory as they come all the same: a sweep used to hold every event of a run until it
    /// ended (29.5 million rows, 700 MB, and their texts for a run under a Moab `MAXPS`
    /// limit on CTC-SP2). The files are the same as [`StreamingJobSink::new`]'s.
    pub fn on_this_thread(
        dir: &Path,
        meta: RunMeta,
        workload: &'w Workload,
    ) -> Result<Self, MetricsError> {
        Self::writing(dir, meta, workload, true)
    }

    fn writing(
        dir: &Path,
        meta: RunMeta,
        workload: &'w Workload,
        here: bool,
    ) -> Result<Self, MetricsError> {
        fs::create_dir_all(dir).map_err(|source| MetricsError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let turns = Arc::new(Turns::default());
        Ok(StreamingJobSink {
            inner: JobSink::new(workload),
            workload,
            meta,
            frontier: 0,
            sent_upto: 0,
            events_sent: 0,
            samples_sent: 0,
            jobs: streamed(dir.join("jobs.parquet"), &turns, 2, here),
            // Event groups are small (24 bytes a row): they may wait while a group of jobs
            // is written, rather than hold up the simulation.
            events: streamed(dir.join("events.parquet"), &turns, 8, here),
            timeseries: None,
            dir: dir.to_owned(),
            turns,
            writes_here: here,
        })
    }

    /// The per-job data so far, to set up what it measures before the run ([`JobSink::measure`]).
    pub fn sink_mut(&mut self) -> &mut JobSink {
        &mut self.inner
    }

    fn send(&mut self, ids: std::ops::Range<usize>) {
        let rows = JobsRows::of(self.workload, &self.inner, ids);
        let meta = self.meta.clone();
        let build: BuildRowGroup = Box::new(move || rows.group(&meta)?.row_group());
        self.jobs.send_built_there(build);
    }

    /// Hands over every whole row group of events not yet handed over.
    fn send_events(&mut self) {
        while self.inner.events.len() >= EVENTS_PER_ROW_GROUP {
            self.send_event_rows(EVENTS_PER_ROW_GROUP);
        }
    }

    /// Hands over the first `n` event rows the sink holds, to be made a table by the writer.
    /// They leave the sink: a long run's events are not all held at once (CEA-Curie's million
    /// rows were 25 MB of its peak).
    fn send_event_rows(&mut self, n: usize) {
        // The rows go as they are, not copied: the sink goes on with a fresh list holding the
        // rows after them (most often none).
        let after = if self.inner.events.len() > n {
            self.inner.events.split_off(n)
        } else {
            Vec::with_capacity(EVENTS_PER_ROW_GROUP)
        };
        let rows = std::mem::replace(&mut self.inner.events, after);
        self.events_sent += n;
        let chunk = EventsChunk::of(self.workload, &self.inner, rows);
        let meta = self.meta.clone();
        self.events.send_built_there(Box::new(move || {
            chunk.frame(&meta).map(RowGroupToWrite::from)
        }));
    }

    /// Hands over every whole row group of samples not yet handed over, when the samples
    /// have a row per set: psets-bench's 64 sets make a million rows, whose table, built
    /// after the run, held it up by 0.19 s.
    fn send_samples(&mut self) {
        if sets_sampled(&self.inner.set_names) == 0 {
            return;
        }
        while self.inner.samples.len() >= SAMPLES_PER_ROW_GROUP {
            self.send_sample_rows(SAMPLES_PER_ROW_GROUP);
        }
    }

    /// Hands over the first `n` samples the sink holds, with their per-set free ncpus, to be
    /// made a table by the writer; they leave the sink, as event rows do.
    fn send_sample_rows(&mut self, n: usize) {
        let k = sets_sampled(&self.inner.set_names);
        let n = n.min(self.inner.samples.len());
        let after = self.inner.samples.split_off(n);
        let samples = std::mem::replace(&mut self.inner.samples, after);
        let taken = (n * k).min(self.inner.sample_set_free.len());
        let after = self.inner.sample_set_free.split_off(taken);
        let set_free = std::mem::replace(&mut self.inner.sample_set_free, after);
        self.samples_sent += n;
        let names = Arc::clone(&self.inner.set_names);
        let ncpus = Arc::clone(&self.inner.set_ncpus);
        let meta = self.meta.clone();
        let (dir, turns, here) = (&self.dir, &self.turns, self.writes_here);
        let timeseries = self.timeseries.get_or_insert_with(|| {
            // Groups of samples are small but for their rows per set: they may wait while a
            // group of jobs is written, as event groups do.
            streamed(dir.join("timeseries.parquet"), turns, 8, here)
        });
        timeseries.send_built_there(Box::new(move || {
            timeseries_table(&meta, &names, &ncpus, &samples, &set_free).map(RowGroupToWrite::from)
        }));
    }

    /// Hands over the remaining row groups, waits for the files, and returns the per-job data
    /// (without its event rows, which went with their row groups).
    pub fn finish(self) -> Result<JobSink, MetricsError> {
        self.finish_with(|_| ()).map(|(sink, ())| sink)
    }

    /// As [`StreamingJobSink::finish`], running `during` on the per-job data while the writer
    /// threads encode the last row groups (the run's summary, say).
    pub fn finish_with<T>(
        mut self,
        during: impl FnOnce(&JobSink) -> T,
    ) -> Result<(JobSink, T), MetricsError> {
        self.turns.end_simulation();
        let n = self.workload.jobs().len();
        for ids in unsent_row_groups(n, JOBS_PER_ROW_GROUP, self.sent_upto) {
            self.send(ids);
        }
        let n_events = self.events_sent + self.inner.events.len();
        for rows in unsent_row_groups(n_events, EVENTS_PER_ROW_GROUP, self.events_sent) {
            self.send_event_rows(rows.len());
        }
        let streams_samples = sets_sampled(&self.inner.set_names) > 0;
        if streams_samples {
            let n_samples = self.samples_sent + self.inner.samples.len();
            for samples in unsent_row_groups(n_samples, SAMPLES_PER_ROW_GROUP, self.samples_sent) {
                self.send_sample_rows(samples.len());
            }
        }
        // A timeseries not streamed (a run of one set; psets-bench's year of hourly samples
        // took 5 ms to encode) is written beside `during` by the events writer, after its last
        // row group; its tables are made here, as they borrow the sink.
        let timeseries = match self.timeseries.take() {
            Some(streamed) => TimeseriesEnd::Streamed(streamed),
            None => {
                let path = self.dir.join("timeseries.parquet");
                let n = self.inner.samples.len();
                let frames: PolarsResult<Vec<DataFrame>> =
                    row_group_ranges(n, SAMPLES_PER_ROW_GROUP)
                        .map(|samples| timeseries_frame_range(&self.meta, &self.inner, samples))
                        .collect();
                TimeseriesEnd::Aside(self.events.aside(path.clone(), move || {
                    write_atomic(&path, |out| {
                        write_row_groups(out, frames?.into_iter().map(Ok))
                    })
                }))
            }
        };
        let out = during(&self.inner);
        let timeseries = match timeseries {
            TimeseriesEnd::Streamed(streamed) => streamed.finish(),
            TimeseriesEnd::Aside(written) => written.wait(),
        };
        let jobs = self.jobs.finish();
        let events = self.events.finish();
        jobs.and(events).and(timeseries).map(|()| (self.inner, out))
    }
}

impl placesim_core::MetricsSink for StreamingJobSink<'_> {
    fn job_started(
        &mut self,
        job: &placesim_core::Job,
        id: placesim_core::JobId,
        start: placesim_core::SimTime,
        allocation: &placesim_core::Allocation,
    ) {
        self.inner.job_started(job, id, start, allocation);
        self.send_events();
    }

    fn job_comment(
        &mut self,
        now: placesim_core::SimTime,
        id: placesim_core::JobId,
        text: &std::sync::Arc<str>,
    ) {
        self.inner.job_comment(now, id, text);
    }

    fn job_submitted(&mut self, now: placesim_core::SimTime, id: placesim_core::JobId) {
        self.inner.job_submitted(now, id);
        self.send_events();
    }

    fn job_estimated(
        &mut self,
        now: placesim_core::SimTime,
        estimate: &placesim_core::TopJobEstimate,
    ) {
        self.inner.job_estimated(now, estimate);
    }

    fn reads_estimated_vnodes(&self) -> bool {
        self.inner.reads_estimated_vnodes()
    }

    fn reservation_answered(
        &mut self,
        now: placesim_core::SimTime,
        request: &placesim_core::ReservationRequest,
        allocation: Option<&placesim_core::Allocation>,
    ) {
        self.inner.reservation_answered(now, request, allocation);
    }

    fn reservation_deleted(&mut self, now: placesim_core::SimTime, name: &str) {
        self.inner.reservation_deleted(now, name);
    }

    fn site_event(
        &mut self,
        at: placesim_core::SimTime,
        kind: placesim_core::SiteEvent,
        subject: &str,
    ) {
        self.inner.site_event(at, kind, subject);
    }

    fn job_priority(
        &mut self,
        now: placesim_core::SimTime,
        id: placesim_core::JobId,
        priority: f64,
    ) {
        self.inner.job_priority(now, id, priority);
    }

    fn instant_settled(&mut self, instant: &placesim_core::SettledInstant<'_>) {
        self.inner.instant_settled(instant);
        self.send_samples();
    }

    fn job_requeued(
        &mut self,
        now: placesim_core::SimTime,
        id: placesim_core::JobId,
        requeues: u32,
        lost_core_seconds: u64,
    ) {
        self.inner
            .job_requeued(now, id, requeues, lost_core_seconds);
    }

    fn job_ended(&mut self, job: &placesim_core::Job, outcome: &placesim_core::JobOutcome) {
        self.inner.job_ended(job, outcome);
        self.send_events();
        let n = self.workload.jobs().len();
        while self.frontier < n && self.inner.span(self.frontier).is_some() {
            self.frontier += 1;
        }
        while self.sent_upto + JOBS_PER_ROW_GROUP <= self.frontier {
            let ids = self.sent_upto..self.sent_upto + JOBS_PER_ROW_GROUP;
            self.sent_upto = ids.end;
            self.send(ids);
        }
    }
}

/// Writes `summary.parquet` and `waits.parquet` into `dir`, and `agreement.parquet` for a
/// run measured against a record.
pub fn write_summary(dir: &Path, summary: &RunSummary) -> Result<(), MetricsError> {
    write_atomic(&dir.join("waits.parquet"), |out| {
        let mut df = waits_frame(summary)?;
        parquet_writer(out).finish(&mut df).map(|_| ())
    })?;
    if let Some(fidelity) = &summary.fidelity {
        write_atomic(&dir.join("agreement.parquet"), |out| {
            let mut df = agreement_frame(summary, &fidelity.per_key)?;
            parquet_writer(out).finish(&mut df).map(|_| ())
        })?;
    }
    write_atomic(&dir.join("summary.parquet"), |out| {
        let mut df = summary_frame(summary)?;
        parquet_writer(out).finish(&mut df).map(|_| ())
    })
}

/// Builds the agreement table: a row per key of `per_key`.
pub fn agreement_frame(s: &RunSummary, per_key: &[crate::KeyAgreement]) -> PolarsResult<DataFrame> {
    use schema::agreement;
    let n = per_key.len();
    let count = |name: &str, f: fn(&crate::KeyAgreement) -> u64| {
        Column::new(name.into(), per_key.iter().map(f).collect::<Vec<u64>>())
    };
    let columns = vec![
        Column::new(
            agreement::SCENARIO.name.into(),
            vec![s.meta.scenario.as_str(); n],
        ),
        Column::new(
            agreement::POLICY.name.into(),
            vec![s.meta.policy.as_str(); n],
        ),
        Column::new(agreement::SEED.name.into(), vec![s.meta.seed; n]),
        Column::new(
            agreement::KEY.name.into(),
            per_key
                .iter()
                .map(|k| k.key.as_str())
                .collect::<Vec<&str>>(),
        ),
        count(agreement::RECORDED_IN_ONE_SET.name, |k| {
            k.recorded_in_one_set
        }),
        Column::new(
            agreement::SAME_SET.name.into(),
            per_key
                .iter()
                .map(crate::KeyAgreement::same_set_share)
                .collect::<Vec<Option<f64>>>(),
        ),
        count(agreement::RECORDED_SPANNING.name, |k| k.recorded_spanning),
    ];
    schema::conform(agreement::ALL, DataFrame::new(n, columns)?)
}

/// Builds the waits table: a row per group of [`RunSummary::groups`].
pub fn waits_frame(s: &RunSummary) -> PolarsResult<DataFrame> {
    use schema::waits;
    let g = &s.groups;
    let n = g.len();
    let text = |name: &str, f: fn(&GroupWaits) -> &str| {
        Column::new(name.into(), g.iter().map(f).collect::<Vec<&str>>())
    };
    let number = |name: &str, f: fn(&GroupWaits) -> f64| {
        Column::new(name.into(), g.iter().map(f).collect::<Vec<f64>>())
    };
    let columns = vec![
        Column::new(
            waits::SCENARIO.name.into(),
            vec![s.meta.scenario.as_str(); n],
        ),
        Column::new(waits::POLICY.name.into(), vec![s.meta.policy.as_str(); n]),
        Column::new(waits::SEED.name.into(), vec![s.meta.seed; n]),
        text(waits::BY.name, |g| g.by),
        text(waits::KEY.name, |g| g.key.as_str()),
        Column::new(
            waits::JOBS.name.into(),
            g.iter().map(|g| g.jobs).collect::<Vec<u64>>(),
        ),
        number(waits::WAIT_MEAN_S.name, |g| g.wait_mean_s),
        number(waits::WAIT_MEDIAN_S.name, |g| g.wait_median_s),
        number(waits::WAIT_P95_S.name, |g| g.wait_p95_s),
        number(waits::BSD_MEAN.name, |g| g.bsd_mean),
    ];
    schema::conform(waits::ALL, DataFrame::new(n, columns)?)
}

/// Builds the vnodes table: the cluster of the run, one row per vnode in cluster order.
pub fn vnodes_frame(meta: &RunMeta, sink: &JobSink) -> PolarsResult<DataFrame> {
    use schema::vnodes;
    // No rows when the sink measured no cluster.
    let empty: (&[placesim_core::Vnode], &[String]) = (&[], &[]);
    let (rows, hosts) = sink
        .cluster
        .as_ref()
        .map_or(empty, |c| (c.vnodes(), c.hosts()));
    let n = rows.len();
    let mut columns = id_columns(meta, n);
    columns.push(Column::new(
        vnodes::VNODE.name.into(),
        rows.iter().map(|r| r.name()).collect::<Vec<&str>>(),
    ));
    columns.push(Column::new(
        vnodes::HOST.name.into(),
        rows.iter()
            .map(|r| hosts[r.host.index()].as_str())
            .collect::<Vec<&str>>(),
    ));
    columns.push(Column::new(
        vnodes::SET.name.into(),
        sink.vnode_sets[..n]
            .iter()
            .map(|&set| sink.set_names.get(set as usize).map_or("", String::as_str))
            .collect::<Vec<&str>>(),
    ));
    columns.push(Column::new(
        vnodes::SPEED.name.into(),
        rows.iter().map(|r| r.speed).collect::<Vec<f64>>(),
    ));
    let ncpus: Vec<u64> = match &sink.cluster {
        Some(c) => (0..n)
            .map(|v| c.ncpus_capacity(placesim_core::VnodeId::from_index(v)))
            .collect(),
        None => Vec::new(),
    };
    columns.push(Column::new(vnodes::NCPUS.name.into(), ncpus));
    schema::conform(vnodes::ALL, DataFrame::new(n, columns)?)
}

/// Writes `vnodes.parquet` into `dir`.
pub fn write_vnodes(dir: &Path, meta: &RunMeta, sink: &JobSink) -> Result<(), MetricsError> {
    write_atomic(&dir.join("vnodes.parquet"), |out| {
        let mut df = vnodes_frame(meta, sink)?;
        parquet_writer(out).finish(&mut df).map(|_| ())
    })
}

/// Work handed to a writer thread beside its own file ([`Streamed::aside`]), whose result
/// arrives here. A writer thread keeps the memory its allocator took for the row groups it
/// encoded, so work done there uses memory the run already holds, where a thread of its own
/// would take more.
#[derive(Debug)]
struct Aside {
    /// The file the work writes, which its errors name.
    what: PathBuf,
    result: std::sync::mpsc::Receiver<Result<(), MetricsError>>,
}

impl Aside {
    /// Waits for the work's result.
    fn wait(self) -> Result<(), MetricsError> {
        self.result.recv().unwrap_or_else(|_| {
            Err(MetricsError::Io {
                path: self.what,
                source: std::io::Error::other("a Parquet writer thread panicked"),
            })
        })
    }
}

/// How `timeseries.parquet` is finished: by its own writer thread, which has had every row
/// group, or by another writer's, which writes it whole.
enum TimeseriesEnd {
    Streamed(Streamed),
    Aside(Aside),
}

/// Builds the reservations table: the site's reservations in order of start, each with the
/// jobs that ran inside it (a PBS reservation's queue's; those that started on a Moab
/// reservation's hosts in its window, which its ACL admitted).
pub fn reservations_frame(
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> PolarsResult<DataFrame> {
    use schema::reservations;
    let rows = &sink.reservations;
    let n = rows.len();
    // A job of a reservation's queue ran inside the window it started in (a standing
    // reservation's occurrences share the queue).
    let jobs: Vec<Vec<u64>> = rows
        .iter()
        .map(|r| {
            let Some(q) = r.queue else {
                let mut inside = r.inside.clone();
                inside.sort_unstable();
                return inside;
            };
            workload
                .jobs()
                .iter()
                .enumerate()
                .filter(|(i, _)| sink.ended.get(*i).copied().unwrap_or(false))
                .filter(|(i, _)| (r.start..r.end).contains(&sink.start[*i]))
                .filter(|(_, j)| workload.requests()[j.request.index()].queue == Some(q))
                .map(|(_, j)| j.source_id)
                .collect()
        })
        .collect();
    let mut columns = id_columns(meta, n);
    let text =
        |f: fn(&crate::sink::ReservationRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    columns.push(Column::new(
        reservations::RESERVATION.name.into(),
        text(|r| r.name.as_str()),
    ));
    columns.push(Column::new(
        reservations::START_S.name.into(),
        rows.iter().map(|r| r.start).collect::<Vec<u64>>(),
    ));
    columns.push(Column::new(
        reservations::END_S.name.into(),
        rows.iter().map(|r| r.end).collect::<Vec<u64>>(),
    ));
    columns.push(Column::new(
        reservations::STATE.name.into(),
        text(|r| r.state),
    ));
    columns.push(Column::new(
        reservations::EXCLUSIVE.name.into(),
        rows.iter().map(|r| r.exclusive).collect::<Vec<bool>>(),
    ));
    columns.push(Column::new(
        reservations::VNODES.name.into(),
        text(|r| r.vnodes.as_str()),
    ));
    columns.push(Column::new(
        reservations::ACL.name.into(),
        rows.iter()
            .map(|r| r.acl.as_deref())
            .collect::<Vec<Option<&str>>>(),
    ));
    columns.push(Column::new(
        reservations::NCPUS.name.into(),
        rows.iter().map(|r| r.ncpus).collect::<Vec<u64>>(),
    ));
    columns.push(Column::new(
        reservations::JOBS_RUN.name.into(),
        jobs.iter().map(|j| j.len() as u64).collect::<Vec<u64>>(),
    ));
    columns.push(Column::new(
        reservations::JOBS.name.into(),
        jobs.iter()
            .map(|j| {
                j.iter()
                    .map(u64::to_string)
                    .collect::<Vec<String>>()
                    .join(",")
            })
            .collect::<Vec<String>>(),
    ));
    schema::conform(reservations::ALL, DataFrame::new(n, columns)?)
}

/// Writes `reservations.parquet` into `dir`, for a run with reservations (none is written
/// for a run without).
pub fn write_reservations(
    dir: &Path,
    meta: &RunMeta,
    workload: &Workload,
    sink: &JobSink,
) -> Result<(), MetricsError> {
    if sink.reservations.is_empty() {
        return Ok(());
    }
    write_atomic(&dir.join("reservations.parquet"), |out| {
        let mut df = reservations_frame(meta, workload, sink)?;
        parquet_writer(out).finish(&mut df).map(|_| ())
    })
}

/// Creates `dir` if needed and writes the tables of a run into it.
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
    write_events(dir, &summary.meta, workload, sink)?;
    write_timeseries(dir, &summary.meta, sink)?;
    write_vnodes(dir, &summary.meta, sink)?;
    write_reservations(dir, &summary.meta, workload, sink)?;
    write_summary(dir, summary)
}

/// Samples per row group of timeseries.parquet: the table is built this many samples at a
/// time, so its memory stays small however many sets and samples there are.
const SAMPLES_PER_ROW_GROUP: usize = 2_048;

/// Builds the time-series table: per sample, a row for the whole cluster (`set` null), then,
/// with more than one set, a row per set.
pub fn timeseries_frame(meta: &RunMeta, sink: &JobSink) -> PolarsResult<DataFrame> {
    timeseries_frame_range(meta, sink, 0..sink.samples.len())
}

/// The time-series table of the samples of `range`, read from `sink`.
fn timeseries_frame_range(
    meta: &RunMeta,
    sink: &JobSink,
    range: std::ops::Range<usize>,
) -> PolarsResult<DataFrame> {
    let k = sets_sampled(&sink.set_names);
    let set_free = &sink.sample_set_free[range.start * k..range.end * k];
    timeseries_table(
        meta,
        &sink.set_names,
        &sink.set_ncpus,
        &sink.samples[range],
        set_free,
    )
}

/// The time-series table of `samples`, over the sets named `set_names` with `set_ncpus`,
/// whose per-set free ncpus are `set_free` (flattened, [`sets_sampled`] of them a sample).
fn timeseries_table(
    meta: &RunMeta,
    set_names: &[String],
    set_ncpus: &[u64],
    samples: &[crate::occupancy::Sample],
    set_free: &[u64],
) -> PolarsResult<DataFrame> {
    let k = sets_sampled(set_names);
    let n = samples.len() * (1 + k);
    let capacity = meta.procs;
    // Made from values and masks, and each set's name written once: a table of a sample per
    // hour over a long run and many sets is a million rows, which polars' builders took an
    // `Option` at a time, copying every name.
    let mut set = StringColumn::with_capacity(n);
    let set_views = set_names[..k]
        .iter()
        .map(|name| set.write(|out| out.push_str(name)))
        .collect::<PolarsResult<Vec<_>>>()?;
    let (mut time, mut free, mut ncpus) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    // The columns set on cluster rows only, and where fragmentation and the largest share are.
    let on_cluster_rows: Vec<bool> = (0..n).map(|row| row % (1 + k) == 0).collect();
    let (mut util, mut queue, mut down, mut blocked) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut frag, mut frag_valid, mut largest, mut largest_valid) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (i, row) in samples.iter().enumerate() {
        time.push(row.time);
        set.push_null();
        free.push(row.free_ncpus);
        ncpus.push(capacity);
        util.push(if capacity == 0 {
            0.0
        } else {
            row.job_ncpus as f64 / capacity as f64
        });
        queue.push(row.queue_len);
        down.push(row.down_ncpus);
        frag.push(row.fragmentation.unwrap_or_default());
        frag_valid.push(row.fragmentation.is_some());
        largest.push(row.largest_free_share.unwrap_or_default());
        largest_valid.push(row.largest_free_share.is_some());
        blocked.push(row.head_blocked);
        for s in 0..k {
            time.push(row.time);
            set.push_view(set_views[s]);
            free.push(set_free[i * k + s]);
            ncpus.push(set_ncpus[s]);
            util.push(0.0);
            queue.push(0);
            down.push(0);
            frag.push(0.0);
            frag_valid.push(false);
            largest.push(0.0);
            largest_valid.push(false);
            blocked.push(false);
        }
    }
    let mut columns = id_columns(meta, n);
    columns.extend([
        Column::new(timeseries::TIME_S.name.into(), time),
        set.finish(timeseries::SET.name)?,
        Column::new(timeseries::FREE_NCPUS.name.into(), free),
        Column::new(timeseries::NCPUS.name.into(), ncpus),
        f64_column(timeseries::UTILIZATION.name, util, on_cluster_rows.clone()),
        u64_column(
            timeseries::QUEUE_LENGTH.name,
            queue,
            on_cluster_rows.clone(),
        ),
        u64_column(timeseries::DOWN_NCPUS.name, down, on_cluster_rows.clone()),
        f64_column(timeseries::FRAGMENTATION.name, frag, frag_valid),
        f64_column(timeseries::LARGEST_FREE_SHARE.name, largest, largest_valid),
        bool_column(timeseries::HEAD_BLOCKED.name, blocked, on_cluster_rows),
    ]);
    schema::conform(timeseries::ALL, DataFrame::new(n, columns)?)
}

/// Writes `timeseries.parquet` into `dir` (empty when the run took no samples).
pub fn write_timeseries(dir: &Path, meta: &RunMeta, sink: &JobSink) -> Result<(), MetricsError> {
    let n = sink.samples.len();
    write_atomic(&dir.join("timeseries.parquet"), |out| {
        let frames = row_group_ranges(n, SAMPLES_PER_ROW_GROUP)
            .map(|samples| timeseries_frame_range(meta, sink, samples));
        write_row_groups(out, frames)
    })
}

/// Does polars' one-time setup (its thread pool, its shared zero buffer) on a helper thread, so
/// that it overlaps with reading the trace instead of delaying the first write. Purely a speed
/// measure: nothing is written anywhere.
pub fn warm_up() -> std::thread::JoinHandle<()> {
    std::thread::spawn(|| {
        let column = Column::full_null("warm".into(), 1, &DataType::UInt64);
        if let Ok(mut df) = DataFrame::new(1, vec![column]) {
            let _ = ParquetWriter::new(std::io::sink()).finish(&mut df);
        }
    })
}
