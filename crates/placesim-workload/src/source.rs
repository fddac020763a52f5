//! The one entry point every front end reads workloads through: a [`TraceFormat`] reads a
//! file (plain or gzipped) or any buffered reader into a [`Trace`].
//!
//! The list of formats is the only one: the command line's `--format` and a scenario's
//! `workload.format` take their values from it. A new input format is a module of this crate
//! that turns its records into a [`Trace`], and a variant here.

use crate::swf::SwfError;
use crate::swf::convert::{SwfOptions, Trace};
use placesim_core::ResourceDefs;
use std::io::BufRead;
use std::path::Path;

/// A workload file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TraceFormat {
    /// The Standard Workload Format of the Parallel Workloads Archive.
    #[default]
    Swf,
}

impl TraceFormat {
    /// Every format, in the order listings and messages show them.
    pub const ALL: [TraceFormat; 1] = [TraceFormat::Swf];

    /// The name on the command line and in scenario files.
    pub const fn name(self) -> &'static str {
        match self {
            TraceFormat::Swf => "swf",
        }
    }

    /// One line for `--help`.
    pub const fn help(self) -> &'static str {
        match self {
            TraceFormat::Swf => {
                "Standard Workload Format (Parallel Workloads Archive), 18 fields a job"
            }
        }
    }

    /// Reads a workload in this format from `reader`; `path` names it in errors and output.
    pub fn read(
        self,
        reader: impl BufRead,
        path: &Path,
        opts: &SwfOptions,
        resources: &ResourceDefs,
    ) -> Result<Trace, SwfError> {
        match self {
            TraceFormat::Swf => crate::swf::convert::read_trace(reader, path, opts, resources),
        }
    }

    /// Opens the file at `path` (gzipped or plain, by its magic bytes) and reads it in this
    /// format.
    pub fn load(
        self,
        path: &Path,
        opts: &SwfOptions,
        resources: &ResourceDefs,
    ) -> Result<Trace, SwfError> {
        self.read(crate::swf::open(path)?, path, opts, resources)
    }
}

placesim_core::named_list!(TraceFormat, "format");
