//! The Standard Workload Format: 18 whitespace-separated numeric fields per job line, and
//! `;`-prefixed `Key: value` header comments.

pub mod convert;
mod read;
mod write;

pub(crate) use read::shown;
pub use read::{MAX_PROCS, MAX_SECONDS, SwfReader, gunzip, open, written_swf};
pub use write::write_swf;

use std::fmt;
use std::path::PathBuf;

/// One SWF job line, field by field. `-1` means unknown, exactly as in the file.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SwfRecord {
    /// Field 1: job number.
    pub job_number: i64,
    /// Field 2: submit time, seconds since the log start.
    pub submit_time: i64,
    /// Field 3: wait time in seconds.
    pub wait_time: i64,
    /// Field 4: run time in seconds.
    pub run_time: i64,
    /// Field 5: allocated processors.
    pub allocated_procs: i64,
    /// Field 6: average CPU time used, seconds per processor (may be fractional).
    pub avg_cpu_time: f64,
    /// Field 7: used memory, KiB per processor (may be fractional).
    pub used_memory_kib: f64,
    /// Field 8: requested processors.
    pub requested_procs: i64,
    /// Field 9: requested time (the user's estimate) in seconds.
    pub requested_time: i64,
    /// Field 10: requested memory, KiB per processor.
    pub requested_memory_kib: i64,
    /// Field 11: status (1 completed, 0 failed, 5 cancelled, 2/3/4 partial executions).
    pub status: i64,
    /// Field 12: user id.
    pub user_id: i64,
    /// Field 13: group id.
    pub group_id: i64,
    /// Field 14: executable number.
    pub executable: i64,
    /// Field 15: queue number.
    pub queue: i64,
    /// Field 16: partition number.
    pub partition: i64,
    /// Field 17: preceding job number.
    pub preceding_job: i64,
    /// Field 18: think time from the preceding job, seconds.
    pub think_time: i64,
}

/// The names of the 18 fields, for error messages and docs.
pub const FIELD_NAMES: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable number",
    "queue number",
    "partition number",
    "preceding job number",
    "think time",
];

/// What the header comments say that the simulator uses; every comment line is kept too.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SwfHeader {
    /// `MaxProcs:`, the leading integer.
    pub max_procs: Option<u64>,
    /// `MaxNodes:`, the leading integer.
    pub max_nodes: Option<u64>,
    /// Every header comment line, without the leading `;` and surrounding spaces.
    pub comments: Vec<String>,
}

/// What went wrong reading a trace, and where.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}", path.display(), match line { Some(n) => format!(":{n}"), None => String::new() })]
pub struct SwfError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, where one applies.
    pub line: Option<u64>,
    /// What was wrong.
    pub kind: SwfErrorKind,
}

/// The kinds of [`SwfError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwfErrorKind {
    /// The file could not be opened.
    #[error("cannot open: {0}")]
    Open(std::io::Error),
    /// Reading failed part way, which for a gzipped trace means corrupt or truncated data.
    #[error("reading failed after line {after_line}, the data is corrupt or truncated: {source}")]
    Read {
        /// The last line read whole.
        after_line: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// A job line does not have 18 fields.
    #[error("expected 18 whitespace-separated fields, found {0}")]
    FieldCount(usize),
    /// A field is not a number.
    #[error("field {field} ({name}): expected a number, found `{text}`")]
    NotANumber {
        /// 1-based field number.
        field: usize,
        /// The field's name.
        name: &'static str,
        /// What was there.
        text: String,
    },
    /// A field that must be whole has a fraction.
    #[error("field {field} ({name}): expected a whole number, found `{text}`")]
    NotAnInteger {
        /// 1-based field number.
        field: usize,
        /// The field's name.
        name: &'static str,
        /// What was there.
        text: String,
    },
    /// A field is beyond what any real trace holds, and beyond what the simulator can add up
    /// without overflowing (times up to 2^40 s, about 34,800 years; processors up to 2^31).
    #[error("field {field} ({name}): expected at most {max}, found {value}")]
    OutOfRange {
        /// 1-based field number.
        field: usize,
        /// The field's name.
        name: &'static str,
        /// What was there.
        value: i64,
        /// The largest value accepted.
        max: i64,
    },
    /// A line holds bytes that are not UTF-8 text.
    #[error("the line is not UTF-8 text")]
    NotText,
    /// Every job line was skipped, so there is nothing to simulate.
    #[error("all {records} job records were skipped ({reasons}); nothing to simulate")]
    AllSkipped {
        /// Job lines read.
        records: u64,
        /// The skip counts, as `reason: count` pairs.
        reasons: String,
    },
    /// The file has no job lines at all.
    #[error("no job records: the file is empty or holds only comments")]
    NoJobs,
    /// The machine size is unknown when the first job line arrives.
    #[error(
        "job record before any `MaxProcs:` or `MaxNodes:` header line; give the machine size with --procs"
    )]
    NoMachineSize,
    /// The jobs did not form a valid workload (a bug in the conversion, never bad input).
    #[error("internal error building the workload: {0}")]
    Workload(placesim_core::WorkloadError),
    /// A given machine size of zero.
    #[error("the machine has 0 processors; give a positive --procs")]
    ZeroProcs,
}

impl SwfRecord {
    /// The 18 fields in file order.
    fn fields(&self) -> [Field; 18] {
        [
            Field::Int(self.job_number),
            Field::Int(self.submit_time),
            Field::Int(self.wait_time),
            Field::Int(self.run_time),
            Field::Int(self.allocated_procs),
            Field::Float(self.avg_cpu_time),
            Field::Float(self.used_memory_kib),
            Field::Int(self.requested_procs),
            Field::Int(self.requested_time),
            Field::Int(self.requested_memory_kib),
            Field::Int(self.status),
            Field::Int(self.user_id),
            Field::Int(self.group_id),
            Field::Int(self.executable),
            Field::Int(self.queue),
            Field::Int(self.partition),
            Field::Int(self.preceding_job),
            Field::Int(self.think_time),
        ]
    }

    /// Appends the record as an SWF line of 18 fields, without its newline: the text
    /// [`fmt::Display`] gives. Integers, and floats with no fraction (which `Display` writes
    /// as integers), are written digit by digit, without the formatting machinery: a
    /// scenario's generated workload goes through this text, a line per job.
    pub fn push_line(&self, out: &mut String) {
        for (i, field) in self.fields().into_iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            match field {
                Field::Int(v) => push_int(out, v),
                // Exactly the integers below 2^53 print as `Display` prints them; -0 does not.
                Field::Float(v)
                    if v.fract() == 0.0
                        && v.abs() < 9.0e15
                        && !(v == 0.0 && v.is_sign_negative()) =>
                {
                    push_int(out, v as i64)
                }
                Field::Float(v) => {
                    use fmt::Write as _;
                    // Writing to a String cannot fail.
                    let _ = write!(out, "{v}");
                }
            }
        }
    }
}

/// A field of an SWF line as the record holds it.
enum Field {
    Int(i64),
    Float(f64),
}

/// Appends `v` in decimal.
fn push_int(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    out.push_str(placesim_core::decimal(&mut [0; 20], v.unsigned_abs()));
}

impl fmt::Display for SwfRecord {
    /// The record as an SWF line of 18 fields.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        self.push_line(&mut line);
        f.write_str(&line)
    }
}
