//! A real site's own inputs, turned into a placesim scenario (`placesim import pbs`).
//!
//! A PBS site already exports everything a replay needs with `pbs_snapshot`: the vnodes, the
//! resource definitions, the server, queue and scheduler settings, the fairshare tree and
//! the accounting logs (site-inputs.md §2). [`import_pbs`] reads them ([`files`] for the
//! settings files, `placesim_workload::pbs_accounting` for the logs) and writes a scenario a
//! user can read and run: `scenario.toml` with a comment on every setting saying where it
//! came from, the workload as SWF with each job's own request in a requests file, the jobs
//! already running when the logs begin as `[[running]]` entries, and what really happened
//! (`recorded.tsv`) beside it. Every record the logs hold becomes a job or a counted skip with
//! its reason, and every setting read is either written or named as not modelled, in the
//! import report.
//!
//! The import only writes text; it does not load what it wrote. The command line loads the
//! scenario afterwards, so that anything the scenario layer refuses is caught at once.

pub mod files;
mod maui;
mod settings;
mod srcfg;
mod torque;
mod workload;

pub use settings::Site;
pub use torque::TorqueInputs;
pub use workload::{ImportCounts, SkipReason};

use std::path::{Path, PathBuf};

/// Reading a site failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// A file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not valid UTF-8.
    #[error(transparent)]
    Text(#[from] placesim_workload::TextError),
    /// An accounting file cannot be opened or decompressed.
    #[error(transparent)]
    Open(#[from] placesim_workload::SwfError),
    /// A line does not say what its format says it must.
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The 1-based line (0 where the format has none, as JSON objects).
        line: usize,
        /// What was expected.
        message: String,
    },
    /// The logs hold no job a replay could submit.
    #[error("{} ({files} accounting file(s)): no job to replay: {running} were already running when the logs begin, and not replayed: {not_replayed}; give logs that cover a period in which jobs were submitted", path.display())]
    NothingToReplay {
        /// The first accounting file.
        path: PathBuf,
        /// How many were read.
        files: usize,
        /// Jobs running when the logs begin.
        running: u64,
        /// The jobs not replayed, by reason.
        not_replayed: String,
    },
    /// A file the import needs is absent.
    #[error("{what}: none of {} exists", candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Missing {
        /// What the file holds.
        what: &'static str,
        /// Where it was looked for.
        candidates: Vec<PathBuf>,
    },
}

/// The files of one PBS site: a `pbs_snapshot` directory's, or given one by one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PbsInputs {
    /// `pbsnodes -av -F json`, `pbsnodes -av` text or `qmgr -c 'print node @default'`.
    pub nodes: PathBuf,
    /// `qmgr -c 'print server'`: server and queue settings.
    pub server: Option<PathBuf>,
    /// `server_priv/resourcedef` or `qmgr -c 'print resource'`.
    pub resources: Option<PathBuf>,
    /// `qmgr -c 'list sched'` (or `print sched`).
    pub sched: Option<PathBuf>,
    /// `sched_priv/sched_config`.
    pub sched_config: Option<PathBuf>,
    /// `sched_priv/resource_group`.
    pub resource_group: Option<PathBuf>,
    /// Accounting log files, in the order they are read (by name: `YYYYMMDD` sorts by date).
    pub accounting: Vec<PathBuf>,
    /// `pbs_rstat -f`: the reservations.
    pub reservations: Option<PathBuf>,
}

impl PbsInputs {
    /// The files of an unpacked `pbs_snapshot` directory (site-inputs.md §2).
    pub fn from_snapshot(dir: &Path) -> Result<PbsInputs, ImportError> {
        let first = |what: &'static str, names: &[&str]| -> Result<PathBuf, ImportError> {
            let candidates: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
            candidates
                .iter()
                .find(|p| p.is_file())
                .cloned()
                .ok_or(ImportError::Missing { what, candidates })
        };
        let optional = |names: &[&str]| names.iter().map(|n| dir.join(n)).find(|p| p.is_file());
        Ok(PbsInputs {
            nodes: first(
                "the vnodes",
                &[
                    "node/pbsnodes_avFjson.out",
                    "node/pbsnodes_va.out",
                    "node/qmgr_pn_default.out",
                ],
            )?,
            server: optional(&["server/qmgr_ps.out"]),
            resources: optional(&["server_priv/resourcedef", "server/qmgr_pr.out"]),
            sched: optional(&["scheduler/qmgr_lsched.out"]),
            sched_config: optional(&["sched_priv/sched_config"]),
            resource_group: optional(&["sched_priv/resource_group"]),
            reservations: optional(&["reservation/pbs_rstat_f.out"]),
            accounting: accounting_files(&dir.join("server_priv/accounting"))?,
        })
    }
}

/// The files of an accounting directory sorted by name, or the file itself.
pub fn accounting_files(path: &Path) -> Result<Vec<PathBuf>, ImportError> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let entries = std::fs::read_dir(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// How the import treats records it cannot use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// A malformed accounting record, or a job whose select or `exec_vnode` does not fit the
    /// site, is skipped and counted instead of stopping the import.
    pub skip_bad_records: bool,
}

/// What an import writes: files by name (relative to the output directory) and the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// `scenario.toml`, `workload.swf`, `requests.txt`, `recorded.tsv`, `ids.tsv`, and
    /// `resource_group` when the site has one, with their contents.
    pub files: Vec<(String, String)>,
    /// The import report (Markdown), also among the files as `import-report.md`.
    pub report: String,
    /// The counts the report gives.
    pub counts: ImportCounts,
}

/// Imports a PBS site.
pub fn import_pbs(inputs: &PbsInputs, options: ImportOptions) -> Result<Imported, ImportError> {
    let mut site = Site::read(inputs)?;
    let replay = workload::replay(&mut site, &inputs.accounting, options)?;
    Ok(written(&site, replay))
}

/// Imports a Torque site scheduled by Moab: its logs are read as PBS's, whose layout Torque
/// shares.
pub fn import_torque_moab(
    inputs: &TorqueInputs,
    options: ImportOptions,
) -> Result<Imported, ImportError> {
    let mut site = Site::read_torque(inputs)?;
    let read = torque::read_jobs(inputs, options)?;
    let replay = workload::replay_jobs(&mut site, &inputs.accounting, read, options)?;
    Ok(written(&site, replay))
}

/// The files an import writes for `site` and its `replay`.
fn written(site: &Site, mut replay: workload::Replay) -> Imported {
    // What reads the replay first; then its big texts move out rather than being copied.
    let scenario = site.scenario_toml(&replay);
    let ids = replay.ids_tsv();
    let tree = site.resource_group_text(&replay);
    let report = site.report(&replay);
    let mut files = vec![
        ("scenario.toml".to_owned(), scenario),
        ("workload.swf".to_owned(), std::mem::take(&mut replay.swf)),
        (
            "requests.txt".to_owned(),
            std::mem::take(&mut replay.requests),
        ),
        (
            "recorded.tsv".to_owned(),
            std::mem::take(&mut replay.recorded),
        ),
        ("ids.tsv".to_owned(), ids),
    ];
    if let Some(tree) = tree {
        files.push(("resource_group".to_owned(), tree));
    }
    files.push(("import-report.md".to_owned(), report.clone()));
    Imported {
        files,
        report,
        counts: replay.counts,
    }
}
