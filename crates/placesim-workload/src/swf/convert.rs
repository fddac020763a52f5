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
    convert(&mut SwfReader::new(reader, path), path, opts, resources)
}

/// The trace [`read_trace`] reads from the SWF text [`super::write_swf`] writes of `header`
/// and `records`, without the text: a generated workload replays as the file `placesim gen`
/// writes, and its 100,000 lines were written on one core and parsed on the other (about a
/// fifth of psets-bench's time before its run). The records go through the reader's checks
/// of ranges, at the line numbers the text would give them, and the header through its
/// reading of comments. A header comment with a line break (which the text would split) or a
/// float field that is not finite (whose text the reader refuses) sends the whole workload
/// through the text instead. `path` names it in errors. The records are walked twice (for
/// the floats, then converted), so a generator's can be made as they are read
/// ([`crate::generate::GeneratedJobs::records`]) rather than held in a list.
pub fn read_written<I>(
    header: SwfHeader,
    records: I,
    path: &Path,
    opts: &SwfOptions,
    resources: &ResourceDefs,
) -> Result<Trace, SwfError>
where
    I: IntoIterator<Item = SwfRecord>,
    I::IntoIter: Clone,
{
    let records = records.into_iter();
    let text_only = header.comments.iter().any(|c| c.contains('\n'))
        || records
            .clone()
            .any(|r| !r.avg_cpu_time.is_finite() || !r.used_memory_kib.is_finite());
    if text_only {
        let records = records.collect();
        return read_trace(super::written_swf(header, records), path, opts, resources);
    }
    let mut read = SwfHeader::default();
    for comment in &header.comments {
        read.note_comment(comment);
    }
    let mut written = Written {
        line: header.comments.len() as u64,
        header: read,
        records,
        path,
    };
    convert(&mut written, path, opts, resources)
}

/// Where [`convert`] takes its records from: the reader of SWF text, or records in memory
/// as the reader would read their text ([`read_written`]).
trait RecordSource {
    /// The next record, or the error its line gives.
    fn next_record(&mut self) -> Option<Result<SwfRecord, SwfError>>;
    /// The fields after the 18th of the last record's line, if any.
    fn extra_fields(&self) -> Option<&str>;
    /// The header comments read so far.
    fn header(&self) -> &SwfHeader;
    /// The number of the last line read.
    fn line(&self) -> u64;
}

impl<R: BufRead> RecordSource for SwfReader<R> {
    fn next_record(&mut self) -> Option<Result<SwfRecord, SwfError>> {
        self.next().map(|item| item.map(|(_, record)| record))
    }
    fn extra_fields(&self) -> Option<&str> {
        SwfReader::extra_fields(self)
    }
    fn header(&self) -> &SwfHeader {
        SwfReader::header(self)
    }
    fn line(&self) -> u64 {
        SwfReader::line(self)
    }
}

/// Records in memory, each at the line its text would take after the header's.
struct Written<'p, I> {
    header: SwfHeader,
    records: I,
    line: u64,
    path: &'p Path,
}

impl<I: Iterator<Item = SwfRecord>> RecordSource for Written<'_, I> {
    fn next_record(&mut self) -> Option<Result<SwfRecord, SwfError>> {
        let record = self.records.next()?;
        self.line += 1;
        Some(match super::read::check_record_ranges(&record) {
            Ok(()) => Ok(record),
            Err(kind) => Err(SwfError {
                path: self.path.to_owned(),
                line: Some(self.line),
                kind,
            }),
        })
    }
    fn extra_fields(&self) -> Option<&str> {
        None
    }
    fn header(&self) -> &SwfHeader {
        &self.header
    }
    fn line(&self) -> u64 {
        self.line
    }
}

/// The trace of the records `reader` gives.
fn convert(
    reader: &mut impl RecordSource,
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
    let mut jobs: Vec<Job> = Vec::new();
    let mut requests: Vec<Request> = Vec::new();
    // Looked up for every record (100,000 on psets-bench, 312,807 on CEA-Curie): foldhash
    // rather than SipHash, which was a tenth of converting psets-bench's generated jobs.
    let mut request_of_size: HashMap<u32, RequestId, foldhash::fast::FixedState> =
        HashMap::default();
    let mut skipped = SkipCounts::default();
    let mut bad_lines = Vec::new();
    let mut records = 0u64;
    let mut procs: Option<u64> = opts.procs;
    let mut resorted = false;
    let mut kept_field = HashMap::new();
    let mut extended = HashMap::new();
    let n_cons = resources.n_consumables();

    while let Some(item) = reader.next_record() {
        let record = match item {
            Ok(record) => record,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{GeneratorSpec, generate};

    /// Both ways of reading records: through their SWF text, and without it.
    fn both(
        header: &SwfHeader,
        records: &[SwfRecord],
        opts: &SwfOptions,
    ) -> (Result<Trace, SwfError>, Result<Trace, SwfError>) {
        let (path, defs) = (Path::new("g.swf"), ResourceDefs::default());
        let text = super::super::written_swf(header.clone(), records.to_vec());
        let through_text = read_trace(text, path, opts, &defs);
        let direct = read_written(header.clone(), records.to_vec(), path, opts, &defs);
        (through_text, direct)
    }

    fn opts(procs: Option<u64>) -> SwfOptions {
        SwfOptions {
            procs,
            skip_bad_lines: false,
            keep_field: None,
            keep_extended: false,
        }
    }

    /// A generated workload (two streams, a load target, so jobs are re-timed) reads the same
    /// without its text: every job, request, header comment and count, with the machine's
    /// size given and taken from the header's `MaxProcs`.
    #[test]
    fn generated_records_read_as_their_text_reads() {
        let spec = GeneratorSpec {
            load: Some(0.7),
            ..GeneratorSpec::lublin(3000)
        };
        let (header, records) = generate(&spec, 512, 11).unwrap();
        for procs in [Some(512), None] {
            let (text, direct) = both(&header, &records, &opts(procs));
            let (text, direct) = (text.unwrap(), direct.unwrap());
            assert_eq!(text.workload.jobs().len(), 3000);
            assert_eq!(format!("{text:?}"), format!("{direct:?}"));
        }
    }

    /// A record out of range is refused with the text's message, at the text's line (after
    /// the header's comments).
    #[test]
    fn a_record_out_of_range_is_refused_at_the_line_its_text_would_take() {
        let spec = GeneratorSpec::lublin(20);
        let (header, mut records) = generate(&spec, 64, 3).unwrap();
        records[6].run_time = i64::MAX;
        let (text, direct) = both(&header, &records, &opts(Some(64)));
        let (text, direct) = (text.unwrap_err(), direct.unwrap_err());
        assert_eq!(direct.to_string(), text.to_string());
        assert_eq!(direct.line, Some(header.comments.len() as u64 + 7));
    }

    /// A comment with a line break, which the text splits into a comment and a malformed
    /// line, and a float the reader refuses send the workload through the text: the same
    /// errors.
    #[test]
    fn what_the_text_would_change_goes_through_the_text() {
        let spec = GeneratorSpec::lublin(20);
        let (mut header, records) = generate(&spec, 64, 3).unwrap();
        header.comments.push("two\nlines".to_owned());
        let (text, direct) = both(&header, &records, &opts(Some(64)));
        assert_eq!(
            direct.unwrap_err().to_string(),
            text.unwrap_err().to_string()
        );
        let (header, mut records) = generate(&spec, 64, 3).unwrap();
        records[2].avg_cpu_time = f64::NAN;
        let (text, direct) = both(&header, &records, &opts(Some(64)));
        assert_eq!(
            direct.unwrap_err().to_string(),
            text.unwrap_err().to_string()
        );
    }
}
