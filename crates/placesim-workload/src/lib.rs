//! Workloads for placesim: reading and writing the Standard Workload Format (SWF) of the
//! Parallel Workloads Archive, and turning trace records into the kernel's jobs. Front ends
//! read workloads through [`TraceFormat`], the one entry point for every input format.
//!
//! The conventions that simulators disagree on are pinned in [`swf::convert`] and in the
//! project README; every record ends up as a job or as a counted skip with a reason.

pub mod generate;
pub mod pbs_accounting;
pub mod recorded;
mod source;
pub mod swf;
mod text;

pub use source::TraceFormat;
pub use swf::convert::{SkipCounts, SkipReason, SwfOptions, Trace, load_trace, read_trace};
pub use swf::{
    MAX_PROCS, MAX_SECONDS, SwfError, SwfErrorKind, SwfHeader, SwfReader, SwfRecord, open,
    write_swf,
};
pub use text::{TextError, read_text};
