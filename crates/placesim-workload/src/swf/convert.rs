//! From SWF records to the kernel's jobs: the conventions, pinned.
//!
//! - size = field 8 (requested processors) if > 0, else field 5 (allocated processors).
//! - A record is skipped, and counted by reason, if its size is ≤ 0, its run time (field 4) is
//!   < 0, its size exceeds the machine, its submit time (field 2) is < 0, or it is a partial
//!   execution record (status 2, 3 or 4; the shipped traces have none).
//! - estimate = field 9 (requested time) if > 0, else the run time.
//! - The kernel kills a job at its estimate by default, so it runs min(run time, estimate).
//! - Jobs are ordered by (submit time, line order): a trace with unsorted submits is sorted
//!   stably.
//! - The machine has `--procs` processors if given, else the header's `MaxProcs:`, else its
//!   `MaxNodes:`.
//! - A malformed line is an error naming the file and line, unless `skip_bad_lines` is set, in
//!   which case it is counted as skipped with reason "bad line".

use super::read::SwfReader;
use super::{SwfError, SwfErrorKind, SwfHeader, SwfRecord};
use placesim_core::{Job, Request, RequestId, ResourceDefs, SimDuration, SimTime, Workload};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// How to read a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SwfOptions {
    /// The machine size, overriding the header.
    pub procs: Option<u64>,
    /// Count malformed lines as skipped instead of failing.
    pub skip_bad_lines: bool,
    /// Keep this field (19 or later, extended SWF) of each job line, by job number
    /// ([`Trace::kept_field`]).
    pub keep_field: Option<usize>,
    /// Keep every field after the 18th of each job line that has some, by job number
    /// ([`Trace::extended`]): for request rules that read them.
    pub keep_extended: bool,
}

/// Why a record did not become a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Neither field 8 nor field 5 is positive.
    NoSize,
    /// Field 4 is negative (unknown).
    NegativeRuntime,
    /// More processors than the machine has.
    TooLarge,
    /// Field 2 is negative (unknown).
    NegativeSubmit,
    /// Status 2, 3 or 4: one part of a checkpointed or swapped job.
    PartialExecution,
    /// The line is malformed (only with `skip_bad_lines`).
    BadLine,
}

impl SkipReason {
    /// Every reason, in report order.
    pub const ALL: [SkipReason; 6] = [
        SkipReason::NoSize,
        SkipReason::NegativeRuntime,
        SkipReason::TooLarge,
        SkipReason::NegativeSubmit,
        SkipReason::PartialExecution,
        SkipReason::BadLine,
    ];

    /// A stable snake_case name, used as a column suffix in summary.parquet.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::NoSize => "no_size",
            SkipReason::NegativeRuntime => "negative_runtime",
            SkipReason::TooLarge => "too_large",
            SkipReason::NegativeSubmit => "negative_submit",
            SkipReason::PartialExecution => "partial_execution",
            SkipReason::BadLine => "bad_line",
        }
    }
}

/// How many records were skipped, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SkipCounts([u64; 6]);

impl SkipCounts {
    /// Counts one skip.
    pub fn add(&mut self, reason: SkipReason) {
        self.0[reason as usize] += 1;
    }

    /// The count for one reason.
    pub fn get(&self, reason: SkipReason) -> u64 {
        self.0[reason as usize]
    }

    /// All skips.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `(reason, count)` for every reason, in report order.
    pub fn iter(&self) -> impl Iterator<Item = (SkipReason, u64)> + '_ {
        SkipReason::ALL.into_iter().map(|r| (r, self.get(r)))
    }
}

impl std::fmt::Display for SkipCounts {
    /// `too_large: 3, bad_line: 1`, listing only reasons that occurred.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (reason, n) in self.iter().filter(|(_, n)| *n > 0) {
            if !first {
                f.write_str(", ")?;
            }
            write!(f, "{}: {n}", reason.name())?;
            first = false;
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

/// A trace read into a workload.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The file it came from.
    pub path: PathBuf,
    /// Its header.
    pub header: SwfHeader,
    /// The machine size used.
    pub procs: u64,
    /// The jobs, in (submit, line) order, with one interned `select=N:ncpus=1` per size.
    pub workload: Workload,
    /// Job lines read (jobs + skipped).
    pub records: u64,
    /// Records that did not become jobs.
    pub skipped: SkipCounts,
    /// The first malformed lines skipped, as full messages (at most [`Trace::BAD_LINES_KEPT`]).
    pub bad_lines: Vec<String>,
    /// Whether the submits were out of order and had to be sorted.
    pub resorted: bool,
    /// The field [`SwfOptions::keep_field`] names, per job number, for the jobs whose line
    /// has it.
    pub kept_field: std::collections::HashMap<u64, Box<str>>,
    /// With [`SwfOptions::keep_extended`], the fields after the 18th, as written, per job
    /// number, for the jobs whose line has some.
    pub extended: std::collections::HashMap<u64, Box<str>>,
}

impl Trace {
    /// Field `n` (19 or later) of job `job`'s line, kept with [`SwfOptions::keep_extended`].
    pub fn extended_field(&self, job: u64, n: usize) -> Option<&str> {
        self.extended
            .get(&job)?
            .split_whitespace()
            .nth(n.checked_sub(19)?)
    }

    /// How many malformed-line messages are kept for the report.
    pub const BAD_LINES_KEPT: usize = 10;
}

/// Opens and reads a trace file, plain or gzipped.
pub fn load_trace(
    path: &Path,
    opts: &SwfOptions,
    resources: &ResourceDefs,
) -> Result<Trace, SwfError> {
    let reader = super::open(path)?;
    read_trace(reader, path, opts, resources)
}

/// Reads a trace from any buffered reader; `path` names it in errors.
pub fn read_trace(
    reader: impl BufRead,
    path: &Path,
    opts: &SwfOptions,
    resources: &ResourceDefs,
) -> Result<Trace, SwfError> {
    if opts.procs == Some(0) {
        return Err(SwfError {
            path: path.to_owned(),
            line: None,
            kind: SwfErrorKind::ZeroProcs,
        });
    }
    let mut reader = SwfReader::new(reader, path);
    let mut jobs: Vec<Job> = Vec::new();
    let mut requests: Vec<Request> = Vec::new();
    let mut request_of_size: HashMap<u32, RequestId> = HashMap::new();
    let mut skipped = SkipCounts::default();
    let mut bad_lines = Vec::new();
    let mut records = 0u64;
    let mut procs: Option<u64> = opts.procs;
    let mut resorted = false;
    let mut kept_field = HashMap::new();
    let mut extended = HashMap::new();
    let n_cons = resources.n_consumables();

    while let Some(item) = reader.next() {
        let record = match item {
            Ok((_, record)) => record,
            Err(e) if opts.skip_bad_lines && !matches!(e.kind, SwfErrorKind::Read { .. }) => {
                records += 1;
                skipped.add(SkipReason::BadLine);
                if bad_lines.len() < Trace::BAD_LINES_KEPT {
                    bad_lines.push(e.to_string());
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        records += 1;
        let all_extended: Option<Box<str>> = opts
            .keep_extended
            .then(|| reader.extra_fields())
            .flatten()
            .filter(|e| !e.trim().is_empty())
            .map(Box::from);
        let kept: Option<Box<str>> = opts.keep_field.and_then(|k| {
            let extra = reader.extra_fields()?;
            extra
                .split_whitespace()
                .nth(k.checked_sub(19)?)
                .map(Box::from)
        });
        let machine = match procs {
            Some(p) => p,
            None => {
                let header = reader.header();
                let p = header
                    .max_procs
                    .or(header.max_nodes)
                    .filter(|&p| p > 0)
                    .ok_or_else(|| SwfError {
                        path: path.to_owned(),
                        line: Some(reader.line()),
                        kind: SwfErrorKind::NoMachineSize,
                    })?;
                procs = Some(p);
                p
            }
        };
        let size = match classify(&record, machine) {
            Ok(size) => size,
            Err(reason) => {
                skipped.add(reason);
                continue;
            }
        };
        let request = *request_of_size.entry(size).or_insert_with(|| {
            requests.push(Request::processors(size, n_cons));
            RequestId::from_index(requests.len() - 1)
        });
        let runtime = SimDuration(record.run_time as u64);
        let estimate = if record.requested_time > 0 {
            SimDuration(record.requested_time as u64)
        } else {
            runtime
        };
        let submit = SimTime(record.submit_time as u64);
        if jobs.last().is_some_and(|last| last.submit > submit) {
            resorted = true;
        }
        if let Some(kept) = kept {
            kept_field.insert(record.job_number.max(0) as u64, kept);
        }
        if let Some(all) = all_extended {
            extended.insert(record.job_number.max(0) as u64, all);
        }
        let mut job = Job::new(
            record.job_number.max(0) as u64,
            submit,
            runtime,
            estimate,
            size,
            request,
        );
        job.estimate_requested = record.requested_time > 0;
        job.set_user(known(record.user_id));
        job.set_group(known(record.group_id));
        job.set_queue(known(record.queue));
        job.set_partition(known(record.partition));
        job.requested_memory_kib = u64::try_from(record.requested_memory_kib)
            .ok()
            .and_then(std::num::NonZeroU64::new);
        jobs.push(job);
    }
    let header = reader.header().clone();
    if records == 0 {
        return Err(SwfError {
            path: path.to_owned(),
            line: None,
            kind: SwfErrorKind::NoJobs,
        });
    }
    if jobs.is_empty() {
        return Err(SwfError {
            path: path.to_owned(),
            line: None,
            kind: SwfErrorKind::AllSkipped {
                records,
                reasons: skipped.to_string(),
            },
        });
    }
    if resorted {
        jobs.sort_by_key(|j| j.submit);
    }
    jobs.shrink_to_fit();
    let workload =
        Workload::new(jobs, requests).map_err(|e| unreachable_workload_error(path, e))?;
    Ok(Trace {
        path: path.to_owned(),
        header,
        procs: procs.unwrap_or(0),
        workload,
        records,
        skipped,
        bad_lines,
        resorted,
        kept_field,
        extended,
    })
}

/// The size of a record, or why it is skipped.
fn classify(r: &SwfRecord, machine: u64) -> Result<u32, SkipReason> {
    if matches!(r.status, 2..=4) {
        return Err(SkipReason::PartialExecution);
    }
    let size = if r.requested_procs > 0 {
        r.requested_procs
    } else {
        r.allocated_procs
    };
    if size <= 0 {
        return Err(SkipReason::NoSize);
    }
    if r.run_time < 0 {
        return Err(SkipReason::NegativeRuntime);
    }
    if r.submit_time < 0 {
        return Err(SkipReason::NegativeSubmit);
    }
    if size as u64 > machine {
        return Err(SkipReason::TooLarge);
    }
    u32::try_from(size).map_err(|_| SkipReason::TooLarge)
}

fn known(field: i64) -> Option<u32> {
    u32::try_from(field).ok()
}

/// The workload is built sorted and with valid request ids, so `Workload::new` cannot fail;
/// if it ever does, report it rather than panic.
fn unreachable_workload_error(path: &Path, e: placesim_core::WorkloadError) -> SwfError {
    SwfError {
        path: path.to_owned(),
        line: None,
        kind: SwfErrorKind::Workload(e),
    }
}
