//! The accounting logs turned into a replay: one job per real job, as SWF with the job's own
//! request in a requests file, the jobs already running when the logs begin as `[[running]]`
//! entries, and what really happened beside them (site-inputs.md §3.7 for every policy).

use crate::files::at;
use crate::settings::{Scheduler, Site, SiteQueue};
use crate::{ImportError, ImportOptions};
use placesim_workload::pbs_accounting::{
    AcctCounts, AcctJob, AcctRecord, JobAssembler, parse_record,
};
use placesim_workload::recorded::exec_vnode_names;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a real job is not replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// Deleted (`D`) before it ever started: its withdrawal is not replayed yet.
    DeletedWhileQueued,
    /// Queued (or held) when the logs end, never started: no runtime to replay.
    NeverStarted,
    /// Neither `Resource_List.select` nor `Resource_List.nodes` nor (Torque)
    /// `Resource_List.procs`.
    NoSelect,
    /// Its select does not parse against the site's resources (`--skip-bad-records`).
    BadSelect,
    /// Its `exec_vnode` names a vnode the node list lacks, or does not parse
    /// (`--skip-bad-records`).
    BadExecVnode,
    /// Its start or end is missing or out of order.
    BadTimes,
    /// Its recorded allocation would over-fill a vnode together with the jobs already
    /// recorded on it (`--skip-bad-records`).
    Overlapping,
}

impl SkipReason {
    fn text(self) -> &'static str {
        match self {
            SkipReason::DeletedWhileQueued => {
                "deleted before it started (a withdrawal is not replayed yet)"
            }
            SkipReason::NeverStarted => "never started in the logs (no runtime to replay)",
            SkipReason::NoSelect => {
                "neither Resource_List.select nor Resource_List.nodes nor Resource_List.procs"
            }
            SkipReason::BadSelect => "its select does not fit the site's resources",
            SkipReason::BadExecVnode => {
                "its exec_vnode (or Torque exec_host) does not read, or names a vnode the node list lacks"
            }
            SkipReason::BadTimes => "its start and end are missing or out of order",
            SkipReason::Overlapping => {
                "its recorded allocation over-fills a vnode with the jobs already on it"
            }
        }
    }
}

/// Every count the import report gives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportCounts {
    /// The log's own counts: records by type and each quirk (`pbs_accounting`).
    pub log: AcctCounts,
    /// Lines skipped as malformed or of an unknown type (`--skip-bad-records`).
    pub bad_lines: u64,
    /// Jobs replayed from the trace.
    pub replayed: u64,
    /// Jobs running when the logs begin, replayed as `[[running]]` on their vnodes.
    pub running_at_start: u64,
    /// Jobs queued before the logs begin and started after: submitted at time 0.
    pub queued_at_start: u64,
    /// Started jobs without an end: replayed to their walltime (or to the logs' end).
    pub unfinished_at_end: u64,
    /// Jobs not replayed, by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// Chunk resources the scheduler does not match (`sched_config` `resources:`), taken
    /// out of the selects that asked for them: jobs per resource.
    pub resources_not_matched: BTreeMap<String, u64>,
    /// Vnodes down or offline in the node list and kept out of service for the whole replay.
    pub vnodes_out_of_service: u64,
    /// Vnodes down or offline in the node list on which a recorded job ran: kept in service.
    pub vnodes_out_of_service_but_used: u64,
    /// Queues jobs ran in that the server's settings do not list.
    pub queues_not_in_settings: u64,
    /// Jobs per queue replayed.
    pub jobs_per_queue: BTreeMap<String, u64>,
    /// Jobs whose request is an old-style `Resource_List.nodes`, converted to select and
    /// place by PBS's rules.
    pub nodes_converted: u64,
    /// Properties old-style specs name that the site did not define: defined as booleans
    /// (no vnode has them, so jobs asking for them cannot run).
    pub properties_defined: Vec<String>,
    /// Jobs whose request is Torque's `Resource_List.procs=N` alone: `select=N:ncpus=1`.
    pub procs_converted: u64,
    /// Jobs with their own Moab node-set request, replayed with it.
    pub nodesets_requested: u64,
    /// Jobs whose own node-set request placesim does not model (an attribute other than
    /// FEATURE or VARATTR, or a PBS site), replayed without it.
    pub nodesets_not_modelled: u64,
}

/// One job to replay.
struct ReplayJob {
    pbs_id: String,
    user: usize,
    group: usize,
    project: Option<String>,
    queue: String,
    submit_s: u64,
    ctime: i64,
    first_start: i64,
    start: i64,
    end: Option<i64>,
    runtime_s: u64,
    walltime_s: Option<u64>,
    ncpus: u64,
    request: String,
    exec_vnode: Option<String>,
    /// The recorded allocation: vnode (by its index in the node list) and amounts.
    held: Vec<(usize, Vec<u64>)>,
    /// The accounting file and line that named it, for messages.
    at: (usize, usize),
    running_at_start: bool,
    exit_ok: bool,
}

/// The workload, written.
pub(crate) struct Replay {
    pub accounting_files: Vec<PathBuf>,
    /// The epoch second that is simulated time 0.
    pub t0: i64,
    pub swf: String,
    pub requests: String,
    pub recorded: String,
    pub counts: ImportCounts,
    users: Numbers,
    groups: Numbers,
    queues_used: Vec<String>,
    pub extra_queues: Vec<SiteQueue>,
    running: Vec<String>,
    outages: Vec<String>,
    /// `[[reservation]]` entries, from `pbs_rstat -f`.
    reservations: Vec<String>,
    /// Reservations not written: id and why.
    pub reservations_skipped: Vec<(String, String)>,
    /// The site's UTC offsets (`ReadJobs::utc_offsets`), to read its local times by.
    pub utc_offsets: Vec<(i64, i64)>,
}

/// Names numbered from 1 in order of first appearance (users and groups: SWF carries
/// numbers).
#[derive(Debug, Default)]
pub(crate) struct Numbers {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Numbers {
    /// `name`'s number, a new one the first time.
    fn number(&mut self, name: &str) -> usize {
        if let Some(&n) = self.index.get(name) {
            return n;
        }
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), self.names.len());
        self.names.len()
    }

    /// `name`'s number, if it has one.
    fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

/// The ncpus a select asks for (its first alternative): Σ count × ncpus, a chunk without
/// `ncpus=` counting one, as PBS's default chunk gives it.
fn select_ncpus(select: &str) -> u64 {
    let first = select.split("||").next().unwrap_or(select);
    first
        .split('+')
        .map(|chunk| {
            let mut parts = chunk.split(':');
            let head = parts.next().unwrap_or("");
            let (count, rest): (u64, Vec<&str>) = match head.trim().parse::<u64>() {
                Ok(n) => (n, parts.collect()),
                Err(_) => (1, std::iter::once(head).chain(parts).collect()),
            };
            let ncpus = rest
                .iter()
                .find_map(|kv| kv.strip_prefix("ncpus="))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(1);
            count.saturating_mul(ncpus)
        })
        .fold(0u64, u64::saturating_add)
}

/// `select` without the chunk resources the scheduler does not match, and those removed.
fn matched_select(site: &Site, select: &str) -> (String, Vec<String>) {
    let mut removed = Vec::new();
    let chunks: Vec<String> = select
        .split('+')
        .map(|chunk| {
            chunk
                .split(':')
                .filter(|part| match part.split_once('=') {
                    Some((res, _)) if !site.matches_in_chunks(res.trim()) => {
                        if !removed.iter().any(|r| r == res.trim()) {
                            removed.push(res.trim().to_owned());
                        }
                        false
                    }
                    _ => true,
                })
                .collect::<Vec<_>>()
                .join(":")
        })
        .collect();
    (chunks.join("+"), removed)
}

/// The largest epoch second (about the year 36,800) or duration read as a time: what SWF
/// holds, and far from overflowing the arithmetic.
const MAX_EPOCH_S: i64 = placesim_workload::MAX_SECONDS;

/// Every record type PBS writes (acct.h), for telling an unknown one.
const RECORD_TYPES: &str = "QSsERDACTMazrucUYBFKkPpLe";

/// The time a record tells of: a `Q`'s `qtime`, an `S`'s `start`, an `E`'s or `R`'s `end`
/// (each else its `ctime`).
fn event_time(r: &AcctRecord) -> Option<i64> {
    let key = match r.kind {
        'Q' => "qtime",
        'S' | 's' => "start",
        'E' | 'R' => "end",
        _ => return None,
    };
    r.get(key)
        .or_else(|| r.get("ctime"))
        .and_then(|v| v.parse().ok())
        .filter(|t: &i64| (0..MAX_EPOCH_S).contains(t))
}

/// Jobs read from a site's records, before the replay is built from them.
pub(crate) struct ReadJobs {
    pub jobs: Vec<AcctJob>,
    /// Per job: the file (an index into the files read) and line to name in its errors.
    pub job_at: Vec<(usize, usize)>,
    /// The first and last epoch seconds the records give: time 0 and the logs' end.
    pub span: (i64, i64),
    pub log: AcctCounts,
    /// Lines skipped as malformed (`--skip-bad-records`).
    pub bad_lines: u64,
    /// The site's UTC offsets, from the logs' local-time line stamps against their records'
    /// own epoch fields: `(epoch, offset)` from each change on (a daylight-saving shift), to
    /// read other local times (`pbs_rstat`'s) by.
    pub utc_offsets: Vec<(i64, i64)>,
}

/// Reads the logs and builds the replay.
pub(crate) fn replay(
    site: &mut Site,
    files: &[PathBuf],
    options: ImportOptions,
) -> Result<Replay, ImportError> {
    let read = read_accounting(files, options)?;
    replay_jobs(site, files, read, options)
}

/// Reads accounting logs into jobs.
pub(crate) fn read_accounting(
    files: &[PathBuf],
    options: ImportOptions,
) -> Result<ReadJobs, ImportError> {
    let mut bad_lines = 0;
    // Records are read one line at a time and folded into jobs at once: the import holds
    // jobs, never the records (a million-record log in the memory of its jobs).
    let mut assembler = JobAssembler::default();
    // Per job (by its assembler index): the file and line of its last record naming its
    // select or exec_vnode, for messages.
    let mut job_at: Vec<(usize, usize)> = Vec::new();
    let mut span: Option<(i64, i64)> = None;
    let mut utc_offsets: Vec<(i64, i64)> = Vec::new();
    let mut buf = Vec::new();
    for (f, path) in files.iter().enumerate() {
        let mut reader = placesim_workload::open(path)?;
        let mut line_no = 0;
        loop {
            buf.clear();
            let n =
                std::io::BufRead::read_until(&mut reader, b'\n', &mut buf).map_err(|source| {
                    ImportError::Io {
                        path: path.clone(),
                        source,
                    }
                })?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let record = std::str::from_utf8(&buf)
                .map_err(|e| format!("column {}: not UTF-8", e.valid_up_to() + 1))
                .map(|l| l.trim_end_matches(['\n', '\r']))
                .and_then(|line| {
                    if line.trim().is_empty() {
                        return Ok(None);
                    }
                    let r = parse_record(line).map_err(|e| e.to_string())?;
                    if RECORD_TYPES.contains(r.kind) {
                        Ok(Some(r))
                    } else {
                        Err(format!(
                            "column {}: unknown record type `{}`: expected one of {RECORD_TYPES}",
                            r.stamp.chars().count() + 2,
                            r.kind
                        ))
                    }
                });
            let r = match record {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(_) if options.skip_bad_records => {
                    bad_lines += 1;
                    continue;
                }
                Err(message) => return Err(at(path, line_no, message)),
            };
            // Time 0 and the end: the first and last times the records' own epoch fields
            // give.
            if let Some(t) = event_time(&r) {
                span = Some(span.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
            }
            note_utc_offset(&r, &mut utc_offsets);
            if let Some(i) = assembler.push(&r) {
                if i >= job_at.len() {
                    job_at.resize(i + 1, (f, line_no));
                }
                // Torque's records name the request and the hosts as `nodes` and `exec_host`.
                let names_request_or_vnodes = [
                    "Resource_List.select",
                    "exec_vnode",
                    "Resource_List.nodes",
                    "exec_host",
                ]
                .into_iter()
                .any(|key| r.get(key).is_some());
                if names_request_or_vnodes {
                    job_at[i] = (f, line_no);
                }
            }
        }
    }
    let Some(span) = span else {
        let path = files.first().map_or_else(PathBuf::new, Clone::clone);
        return Err(at(
            &path,
            1,
            "no accounting record with a time found: expected `MM/DD/YYYY hh:mm:ss;<type>;<id>;<text>` lines",
        ));
    };
    let (jobs, log) = assembler.finish();
    Ok(ReadJobs {
        jobs,
        job_at,
        span,
        log,
        bad_lines,
        utc_offsets,
    })
}

/// Notes the UTC offset a start or end record shows (its line stamp, local time, against its
/// own `start=` or `end=` epoch field, written the same second), rounded to a quarter hour,
/// when it differs from the last noted.
fn note_utc_offset(r: &AcctRecord, offsets: &mut Vec<(i64, i64)>) {
    let key = match r.kind {
        'S' => "start",
        'E' => "end",
        _ => return,
    };
    let (Some(t), Some(wall)) = (
        r.get(key)
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|t| (0..MAX_EPOCH_S).contains(t)),
        crate::files::parse_stamp(&r.stamp),
    ) else {
        return;
    };
    let offset = (wall - t + 450).div_euclid(900) * 900;
    if offsets.last().map(|o| o.1) != Some(offset) {
        offsets.push((t, offset));
    }
}

/// The site's reservations (`pbs_rstat -f`) as `[[reservation]]` entries on their vnodes
/// (`resv_nodes`), their windows read in the site's local time (`utc_offsets`) and made
/// relative to `t0`; with the ones not written, each with why: not confirmed when the
/// snapshot was taken, ended before the logs begin, without a window or vnodes, on a vnode the
/// node list lacks or one out of service for the replay (`down`).
fn reservation_entries(
    site: &Site,
    t0: i64,
    utc_offsets: &[(i64, i64)],
    down: &[&str],
) -> (Vec<String>, Vec<(String, String)>) {
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    let Some((path, objects)) = &site.reservations else {
        return (written, skipped);
    };
    for o in objects {
        let state = o.value("reserve_state").unwrap_or("");
        let time = |key: &str| {
            o.value(key)
                .and_then(crate::files::parse_rstat_time)
                .map(|wall| epoch_of_local(wall, utc_offsets) - t0)
        };
        let nodes = o.value("resv_nodes");
        let parsed = nodes.map(|n| placesim_request::parse_exec_vnode(n, &site.defs));
        let why = match (state, time("reserve_start"), time("reserve_end"), &parsed) {
            ("RESV_CONFIRMED" | "RESV_RUNNING", Some(start), Some(end), Some(Ok(vnodes))) => {
                let unknown = vnodes
                    .iter()
                    .find(|e| !site.vnodes.iter().any(|v| v.name == e.vnode));
                let out_of_service = vnodes.iter().find(|e| down.contains(&e.vnode.as_str()));
                if end <= 0 {
                    "it ended before the logs begin".to_owned()
                } else if let Some(e) = unknown {
                    format!("its vnode `{}` is not in the node list", e.vnode)
                } else if let Some(e) = out_of_service {
                    format!(
                        "its vnode `{}` is out of service for the replay (a degraded reservation is not modelled)",
                        e.vnode
                    )
                } else {
                    let name = o.name.split('.').next().unwrap_or(&o.name);
                    let mut entry = format!(
                        "[[reservation]]    # {} in {}:{} ({state}), times in the site's local time
name = {}
start = {}
end = {end}
nodes = {}
",
                        o.name,
                        crate::settings::short(path),
                        o.line,
                        toml::Value::String(name.to_owned()),
                        start.max(0),
                        toml::Value::String(nodes.unwrap_or("").to_owned()),
                    );
                    if o.value("Resource_List.place")
                        .is_some_and(|p| p.split(':').any(|w| w == "excl" || w == "exclhost"))
                    {
                        entry.push_str(
                            "exclusive = true
",
                        );
                    }
                    match standing_rule(o) {
                        Ok(Some(rule)) => {
                            let _ = writeln!(entry, "recurrence = {}", toml::Value::String(rule));
                        }
                        Ok(None) => {}
                        Err(rule) => skipped.push((
                            format!("{} (its later occurrences)", o.name),
                            format!(
                                "its rule `{rule}` has parts a scenario does not take (only FREQ, INTERVAL, COUNT): only the occurrence shown is written"
                            ),
                        )),
                    }
                    written.push(entry);
                    continue;
                }
            }
            ("RESV_CONFIRMED" | "RESV_RUNNING", _, _, Some(Err(e))) => {
                format!("its resv_nodes do not read: {e}")
            }
            ("RESV_CONFIRMED" | "RESV_RUNNING", None, _, _)
            | ("RESV_CONFIRMED" | "RESV_RUNNING", _, None, _) => {
                "no reserve_start or reserve_end in `%a %b %d %H:%M:%S %Y`".to_owned()
            }
            ("RESV_CONFIRMED" | "RESV_RUNNING", _, _, None) => "no resv_nodes".to_owned(),
            ("", ..) => "no reserve_state".to_owned(),
            (other, ..) => format!("{other} when the snapshot was taken: not confirmed on vnodes"),
        };
        skipped.push((o.name.clone(), why));
    }
    (written, skipped)
}

/// A standing reservation's rule for the occurrences still to come after the one
/// `pbs_rstat` shows (`reserve_index` of `reserve_count`): `Ok(None)` for an advance
/// reservation or a last occurrence, and the rule as written (`Err`) when it has parts a
/// scenario does not take (only `FREQ`, `INTERVAL`, `COUNT`), when only that occurrence is
/// written.
fn standing_rule(o: &crate::files::Object) -> Result<Option<String>, String> {
    let Some(rule) = o.value("reserve_rrule") else {
        return Ok(None);
    };
    let number = |key: &str| o.value(key).and_then(|v| v.parse::<u64>().ok());
    let left = match (number("reserve_count"), number("reserve_index")) {
        (Some(count), Some(index)) => count.saturating_sub(index) + 1,
        _ => return Err(rule.to_owned()),
    };
    let parts: Vec<&str> = rule
        .split(';')
        .filter(|p| !p.is_empty() && !p.starts_with("COUNT="))
        .collect();
    let simple = parts
        .iter()
        .all(|p| p.starts_with("FREQ=") || p.starts_with("INTERVAL="));
    match (left > 1, simple) {
        (false, _) => Ok(None),
        (true, true) => Ok(Some(format!("{};COUNT={left}", parts.join(";")))),
        (true, false) => Err(rule.to_owned()),
    }
}

/// The epoch second of a local wall-clock time `wall`, by the UTC offset in force nearest to
/// it (`offsets` from the logs; UTC without any).
pub(crate) fn epoch_of_local(wall: i64, offsets: &[(i64, i64)]) -> i64 {
    let offset = offsets
        .iter()
        .min_by_key(|(t, offset)| (wall - offset - t).abs())
        .map_or(0, |o| o.1);
    wall - offset
}

/// Builds the replay of the jobs `read` from `files`: each job replayed, or skipped and
/// counted, its request checked against `site` (which gains the resources requests name).
pub(crate) fn replay_jobs(
    site: &mut Site,
    files: &[PathBuf],
    read: ReadJobs,
    options: ImportOptions,
) -> Result<Replay, ImportError> {
    let ReadJobs {
        jobs,
        job_at,
        span: (t0, t1),
        log,
        bad_lines,
        utc_offsets,
    } = read;
    let mut counts = ImportCounts {
        log,
        bad_lines,
        ..ImportCounts::default()
    };
    // Selects name PBS's own chunk resources the site's files need not show, and old-style
    // specs name properties: those the site lacks are defined before any request is checked
    // against the site's resources.
    for job in &jobs {
        for chunk in job.select.iter().flat_map(|s| s.split(['+', '|'])) {
            for (res, _) in chunk.split(':').filter_map(|part| part.split_once('=')) {
                if site.matches_in_chunks(res) {
                    site.define_builtin(res);
                }
            }
        }
    }
    // Each old-style spec converted once (for a job without a select), kept for the replay.
    let converted: Vec<Option<Result<placesim_request::ConvertedNodes, _>>> = jobs
        .iter()
        .map(|j| match (&j.select, &j.nodes) {
            (None, Some(nodes)) => Some(convert_nodes(site, nodes)),
            _ => None,
        })
        .collect();
    for c in converted.iter().flatten().flatten() {
        for p in &c.properties {
            // One the scheduler does not match is taken out of the request anyway.
            if site.defs.lookup(p).is_none() && site.matches_in_chunks(p) {
                site.define_property(p);
                counts.properties_defined.push(p.clone());
            }
        }
    }
    let site: &Site = site;
    let vnode_names: HashMap<&str, usize> = site
        .vnodes
        .iter()
        .enumerate()
        .map(|(i, v)| (v.name.as_str(), i))
        .collect();
    let mut used_vnodes = vec![false; site.vnodes.len()];
    let mut users = Numbers::default();
    let mut groups = Numbers::default();
    let mut replayed: Vec<ReplayJob> = Vec::new();
    let skip = |counts: &mut ImportCounts, reason| *counts.skipped.entry(reason).or_insert(0) += 1;
    for (index, job) in jobs.iter().enumerate() {
        let at_line = job_at.get(index).copied().unwrap_or((0, 0));
        let (path, line) = (files[at_line.0].as_path(), at_line.1);
        if job.deleted_while_queued {
            skip(&mut counts, SkipReason::DeletedWhileQueued);
            continue;
        }
        let (Some(first_start), Some(start)) = (job.first_start, job.last_start) else {
            skip(&mut counts, SkipReason::NeverStarted);
            continue;
        };
        let (select, place) = match (&job.select, &job.nodes, &converted[index]) {
            (Some(select), _, _) => (select.clone(), job.place.clone()),
            (None, Some(nodes), Some(c)) => match c {
                Ok(c) => {
                    counts.nodes_converted += 1;
                    (
                        c.select.clone(),
                        Some(job.place.clone().unwrap_or_else(|| c.place.clone())),
                    )
                }
                Err(_) if options.skip_bad_records => {
                    skip(&mut counts, SkipReason::BadSelect);
                    continue;
                }
                Err(e) => {
                    return Err(bad_job(
                        path,
                        line,
                        &job.id,
                        &format!("nodes `{nodes}`: {e}"),
                    ));
                }
            },
            // Torque's `procs=N`: N processors anywhere, one chunk each, placed freely.
            (None, None, _) if job.procs.as_deref().is_some_and(is_count) => {
                counts.procs_converted += 1;
                let procs = job.procs.as_deref().unwrap_or("1");
                (format!("{procs}:ncpus=1"), job.place.clone())
            }
            _ => {
                skip(&mut counts, SkipReason::NoSelect);
                continue;
            }
        };
        let (select, removed) = matched_select(site, &select);
        for r in removed {
            *counts.resources_not_matched.entry(r).or_insert(0) += 1;
        }
        let mut request = match &place {
            Some(place) => format!("select={select} place={place}"),
            None => format!("select={select}"),
        };
        if let Some(nodeset) = &job.nodeset {
            if site.scheduler == Scheduler::Moab
                && crate::torque::nodeset_not_modelled(nodeset).is_none()
            {
                counts.nodesets_requested += 1;
                request.push_str(&format!(" nodeset={nodeset}"));
            } else {
                counts.nodesets_not_modelled += 1;
            }
        }
        if let Err(e) = placesim_request::parse_request(&request, &site.defs) {
            if options.skip_bad_records {
                skip(&mut counts, SkipReason::BadSelect);
                continue;
            }
            return Err(bad_job(
                path,
                line,
                &job.id,
                &format!("request `{request}`: {e}"),
            ));
        }
        let mut held = Vec::new();
        if let Some(why) = &job.bad_exec_host {
            if options.skip_bad_records {
                skip(&mut counts, SkipReason::BadExecVnode);
                continue;
            }
            return Err(bad_job(path, line, &job.id, why));
        }
        if let Some(x) = &job.exec_vnode {
            let missing = exec_vnode_names(x)
                .into_iter()
                .find(|n| !vnode_names.contains_key(n.as_str()));
            let parsed = placesim_request::parse_exec_vnode(x, &site.defs);
            if let Ok(parts) = &parsed {
                held = parts
                    .iter()
                    .filter_map(|p| Some((*vnode_names.get(p.vnode.as_str())?, p.amounts.clone())))
                    .collect();
            }
            let unparsed = parsed.err();
            if missing.is_some() || unparsed.is_some() {
                if options.skip_bad_records {
                    skip(&mut counts, SkipReason::BadExecVnode);
                    continue;
                }
                let why = match (missing, unparsed) {
                    (Some(n), _) => {
                        format!("exec_vnode names vnode `{n}`, which the node list lacks")
                    }
                    (None, Some(e)) => format!("exec_vnode `{x}`: {e}"),
                    (None, None) => String::new(),
                };
                return Err(bad_job(path, line, &job.id, &why));
            }
            // Every vnode it names is in `held` now (a bare one with no amounts).
            for (i, _) in &held {
                used_vnodes[*i] = true;
            }
        }
        // Epoch seconds past MAX_EPOCH_S are not times (and would overflow the arithmetic).
        let epoch = |t: u64| i64::try_from(t).ok().filter(|t| *t < MAX_EPOCH_S);
        let (Some(first_start), Some(start), Some(ctime)) =
            (epoch(first_start), epoch(start), epoch(job.ctime))
        else {
            skip(&mut counts, SkipReason::BadTimes);
            continue;
        };
        let end = match job.end.map(epoch) {
            Some(None) => {
                skip(&mut counts, SkipReason::BadTimes);
                continue;
            }
            Some(Some(e)) => Some(e),
            None => None,
        };
        if end.is_some_and(|e| e < start) || start < first_start {
            skip(&mut counts, SkipReason::BadTimes);
            continue;
        }
        let walltime_s = job.walltime_s.filter(|w| *w < MAX_EPOCH_S as u64);
        let ncpus = select_ncpus(&select).max(1);
        if ncpus >= placesim_workload::MAX_PROCS as u64 {
            skip(&mut counts, SkipReason::BadSelect);
            continue;
        }
        let running_at_start = first_start < t0;
        let runtime_s = match end {
            Some(e) => (e - start) as u64,
            None => walltime_s.unwrap_or_else(|| (t1 - start).max(0) as u64),
        };
        if running_at_start && job.exec_vnode.is_none() {
            skip(&mut counts, SkipReason::BadExecVnode);
            continue;
        }
        counts.unfinished_at_end += u64::from(end.is_none());
        counts.queued_at_start += u64::from(!running_at_start && ctime < t0);
        replayed.push(ReplayJob {
            pbs_id: job.id.clone(),
            user: users.number(&job.user),
            group: groups.number(&job.group),
            project: job.project.clone().filter(|p| p != "_pbs_project_default"),
            queue: job.queue.clone(),
            submit_s: (ctime.max(t0) - t0) as u64,
            ctime,
            first_start,
            start,
            end,
            runtime_s,
            walltime_s,
            ncpus,
            request,
            exec_vnode: job.exec_vnode.clone(),
            held,
            at: at_line,
            running_at_start,
            exit_ok: job.exit_status.is_none_or(|s| s == 0),
        });
    }
    overlaps(site, files, &mut replayed, t1, options, &mut counts)?;
    // A scenario needs a job to replay: logs that only see jobs already running (or jobs not
    // replayed) give none.
    if replayed.iter().all(|j| j.running_at_start) {
        let not_replayed: Vec<String> = counts
            .skipped
            .iter()
            .map(|(reason, n)| format!("{n} {}", reason.text()))
            .collect();
        return Err(ImportError::NothingToReplay {
            path: files.first().cloned().unwrap_or_default(),
            files: files.len(),
            running: replayed.len() as u64,
            not_replayed: if not_replayed.is_empty() {
                "none".to_owned()
            } else {
                not_replayed.join(", ")
            },
        });
    }
    // Jobs in submission order (running ones first, at 0), numbered from 1 in that order.
    replayed.sort_by_key(|j| (!j.running_at_start, j.submit_s, j.ctime));
    let mut queues_used: Vec<String> = Vec::new();
    let mut extra_queues = Vec::new();
    for j in &replayed {
        if !queues_used.contains(&j.queue) {
            queues_used.push(j.queue.clone());
            if !site.queues.iter().any(|q| q.name == j.queue) {
                counts.queues_not_in_settings += 1;
                extra_queues.push(SiteQueue {
                    name: j.queue.clone(),
                    settings: Vec::new(),
                    origin: match site.scheduler {
                        Scheduler::Pbs => "a queue the logs name and the server's settings do not",
                        Scheduler::Moab => "a queue the logs name and moab.cfg's classes do not",
                    }
                    .to_owned(),
                });
            }
        }
        *counts.jobs_per_queue.entry(j.queue.clone()).or_insert(0) += 1;
    }
    let queue_number = |q: &str| {
        site.queues
            .iter()
            .map(|q| &q.name)
            .chain(extra_queues.iter().map(|q| &q.name))
            .position(|n| n == q)
            .map_or(-1, |i| i as i64 + 1)
    };
    let longest_walltime = replayed
        .iter()
        .filter_map(|j| j.walltime_s)
        .max()
        .unwrap_or(0);
    let horizon = (t1 - t0).max(0) as u64 + longest_walltime + 1;
    let mut swf = String::new();
    let mut requests = String::from(
        "# Each job's request as its accounting record gives it (qsub -P project -q queue).\n",
    );
    let mut recorded =
        String::from("job\tpbs_id\tctime_s\tfirst_start_s\tstart_s\tend_s\texec_vnode\n");
    let mut running = Vec::new();
    let _ = writeln!(
        swf,
        "; Written by placesim import pbs: one line per replayed job; time 0 is epoch {t0}."
    );
    let _ = writeln!(
        swf,
        "; MaxProcs: {}",
        site.vnodes.iter().map(|v| v.ncpus).sum::<u64>()
    );
    for (k, j) in replayed.iter().enumerate() {
        let number = k + 1;
        let rel = |t: i64| t - t0;
        let _ = writeln!(
            recorded,
            "{number}\t{}\t{}\t{}\t{}\t{}\t{}",
            j.pbs_id,
            rel(j.ctime),
            rel(j.first_start),
            rel(j.start),
            j.end.map_or_else(|| "-".to_owned(), |e| rel(e).to_string()),
            j.exec_vnode.as_deref().unwrap_or("-")
        );
        if j.running_at_start {
            counts.running_at_start += 1;
            let end = (j.start + j.runtime_s as i64 - t0).max(1);
            let estimated = j
                .walltime_s
                .map_or(end, |w| (j.start + w as i64 - t0).max(end));
            let mut entry = String::new();
            let _ = writeln!(
                entry,
                "[[running]]    # {} started at epoch {}, before the logs begin",
                j.pbs_id, j.start
            );
            let _ = writeln!(entry, "id = {number}");
            let _ = writeln!(
                entry,
                "exec_vnode = {}",
                toml::Value::String(j.exec_vnode.clone().unwrap_or_default())
            );
            let _ = writeln!(entry, "end = {end}");
            let _ = writeln!(entry, "estimated_end = {estimated}");
            let _ = writeln!(entry, "user = {}", j.user);
            let _ = writeln!(entry, "group = {}", j.group);
            if let Some(p) = &j.project {
                let _ = writeln!(entry, "project = {}", toml::Value::String(p.clone()));
            }
            let _ = writeln!(entry, "queue = {}", toml::Value::String(j.queue.clone()));
            running.push(entry);
            continue;
        }
        counts.replayed += 1;
        let _ = writeln!(
            swf,
            "{number} {} {} {} {} -1 -1 {} {} -1 {} {} {} -1 {} -1 -1 -1",
            j.submit_s,
            (j.first_start - j.ctime.max(t0)).max(0),
            j.runtime_s,
            j.ncpus,
            j.ncpus,
            j.walltime_s.map_or(-1, |w| w as i64),
            if j.exit_ok { 1 } else { 0 },
            j.user,
            j.group,
            queue_number(&j.queue),
        );
        let mut line = format!("{number}");
        if let Some(p) = &j.project {
            let _ = write!(line, " -P {p}");
        }
        let _ = writeln!(requests, "{line} -q {} {}", j.queue, j.request);
    }
    // Vnodes out of service when the node list was taken: out for the whole replay, unless
    // a recorded job ran on one (then its state changed within the period, and it is kept).
    let mut outages = Vec::new();
    for (i, v) in site.vnodes.iter().enumerate() {
        let Some(state) = &v.out_of_service else {
            continue;
        };
        if used_vnodes[i] {
            counts.vnodes_out_of_service_but_used += 1;
            continue;
        }
        counts.vnodes_out_of_service += 1;
        outages.push(format!(
            "[[failures.outage]]    # state = {state} in the node list\nvnode = {}\ndown = 0\nup = {horizon}\n",
            toml::Value::String(v.name.clone())
        ));
    }
    let down: Vec<&str> = site
        .vnodes
        .iter()
        .enumerate()
        .filter(|(i, v)| v.out_of_service.is_some() && !used_vnodes[*i])
        .map(|(_, v)| v.name.as_str())
        .collect();
    let (reservations, reservations_skipped) = reservation_entries(site, t0, &utc_offsets, &down);
    Ok(Replay {
        accounting_files: files.to_vec(),
        t0,
        reservations,
        reservations_skipped,
        utc_offsets,
        swf,
        requests,
        recorded,
        counts,
        users,
        groups,
        queues_used,
        extra_queues,
        running,
        outages,
    })
}

/// Whether `text` is a positive whole number.
fn is_count(text: &str) -> bool {
    text.parse::<u32>().is_ok_and(|n| n > 0)
}

/// An old-style node spec converted by PBS's rules, its names resolved against the site's
/// vnodes and hosts (without regard to case, as PBS compares them).
fn convert_nodes(
    site: &Site,
    nodes: &str,
) -> Result<placesim_request::ConvertedNodes, placesim_request::RequestError> {
    placesim_request::convert_nodespec(
        nodes,
        |name| {
            site.vnodes
                .iter()
                // A vnode's name stands for its host (on a one-vnode host they are one).
                .find(|v| v.name.eq_ignore_ascii_case(name) || v.host.eq_ignore_ascii_case(name))
                .map(|v| v.host.as_str())
                .map_or(
                    placesim_request::NodeName::Property,
                    placesim_request::NodeName::Host,
                )
        },
        site.defs.lookup("mpiprocs").is_some(),
    )
}

/// Each vnode's capacity per consumable slot, as the scenario will give it.
fn capacities(site: &Site) -> Vec<Vec<u64>> {
    let n = site.defs.n_consumables();
    site.vnodes
        .iter()
        .map(|v| {
            let mut cap = vec![0u64; n];
            cap[0] = v.ncpus;
            cap[1] = v
                .mem
                .as_deref()
                .and_then(placesim_request::parse_size)
                .map_or(0, |b| b.div_ceil(1024));
            cap[2] = v.ngpus;
            for (name, value) in &v.resources {
                let Some(slot) = site
                    .defs
                    .lookup(name)
                    .and_then(|id| site.defs.consumable_idx(id))
                else {
                    continue;
                };
                cap[slot.index()] = match value {
                    toml::Value::Integer(x) => u64::try_from(*x).unwrap_or(0),
                    toml::Value::Float(x) => (x * 1000.0).round().max(0.0) as u64,
                    toml::Value::String(s) => {
                        placesim_request::parse_size(s).map_or(0, |b| b.div_ceil(1024))
                    }
                    _ => 0,
                };
            }
            cap
        })
        .collect()
}

/// Recorded allocations hold no vnode beyond its capacity: each job's last run, from its
/// start to its end (to the logs' end when it has none), releases before takes at one
/// second. A job that would over-fill a vnode is an error naming it and a job already there,
/// or with `--skip-bad-records` a counted skip (it holds nothing).
fn overlaps(
    site: &Site,
    files: &[PathBuf],
    replayed: &mut Vec<ReplayJob>,
    t1: i64,
    options: ImportOptions,
    counts: &mut ImportCounts,
) -> Result<(), ImportError> {
    let cap = capacities(site);
    let mut used: Vec<Vec<u64>> = cap.iter().map(|c| vec![0; c.len()]).collect();
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); cap.len()];
    // (time, 0 release | 1 take, job)
    let mut events: Vec<(i64, u8, usize)> = Vec::with_capacity(2 * replayed.len());
    for (j, job) in replayed.iter().enumerate() {
        let end = job.end.unwrap_or(t1);
        // A run of no length holds nothing (and its release would sort before its take).
        if job.held.is_empty() || end <= job.start {
            continue;
        }
        events.push((job.start, 1, j));
        events.push((end, 0, j));
    }
    events.sort_unstable();
    let mut skipped = vec![false; replayed.len()];
    for (time, kind, j) in events {
        if skipped[j] {
            continue;
        }
        let job = &replayed[j];
        if kind == 0 {
            for (v, amounts) in &job.held {
                for (u, a) in used[*v].iter_mut().zip(amounts) {
                    *u -= a;
                }
                if let Some(p) = holders[*v].iter().position(|&h| h == j) {
                    holders[*v].swap_remove(p);
                }
            }
            continue;
        }
        let over = job.held.iter().find_map(|(v, amounts)| {
            let slot = (0..amounts.len()).find(|&c| used[*v][c] + amounts[c] > cap[*v][c])?;
            Some((*v, slot))
        });
        if let Some((v, slot)) = over {
            if options.skip_bad_records {
                skipped[j] = true;
                *counts.skipped.entry(SkipReason::Overlapping).or_insert(0) += 1;
                continue;
            }
            let name = &site.defs.def(site.defs.consumables()[slot]).name;
            let amount: u64 = job
                .held
                .iter()
                .filter(|(w, _)| *w == v)
                .map(|(_, a)| a[slot])
                .sum();
            let others: Vec<&str> = holders[v]
                .iter()
                .map(|&h| replayed[h].pbs_id.as_str())
                .collect();
            let path = files.get(job.at.0).map_or_else(PathBuf::new, Clone::clone);
            return Err(bad_job(
                &path,
                job.at.1,
                &job.pbs_id,
                &format!(
                    "exec_vnode takes {name} {amount} of vnode `{}` at epoch {time}, where {} of {} are held by {} (overlapping recorded allocations)",
                    site.vnodes[v].name,
                    used[v][slot],
                    cap[v][slot],
                    others.join(", ")
                ),
            ));
        }
        for (v, amounts) in &job.held {
            for (u, a) in used[*v].iter_mut().zip(amounts) {
                *u += a;
            }
            holders[*v].push(j);
        }
    }
    let mut k = 0;
    replayed.retain(|_| {
        k += 1;
        !skipped[k - 1]
    });
    Ok(())
}

fn bad_job(path: &Path, line: usize, id: &str, why: &str) -> ImportError {
    at(
        path,
        line,
        format!("job {id}: {why} (--skip-bad-records skips and counts such jobs)"),
    )
}

impl Replay {
    /// Whether any `[[reservation]]` is written (from `pbs_rstat -f`).
    pub(crate) fn has_reservations(&self) -> bool {
        !self.reservations.is_empty()
    }

    pub(crate) fn queue_used(&self, name: &str) -> bool {
        self.queues_used.iter().any(|q| q == name)
    }

    pub(crate) fn user_number(&self, name: &str) -> Option<usize> {
        self.users.get(name)
    }

    pub(crate) fn group_number(&self, name: &str) -> Option<usize> {
        self.groups.get(name)
    }

    /// A PBS limit (`[u:alice=4], [g:PBS_GENERIC=8]`) with user and group names as the
    /// replay's numbers; a name no replayed job has stays (it limits no job).
    pub(crate) fn numbered_limit(&self, limit: &str) -> String {
        limit
            .split(',')
            .map(|entry| {
                let e = entry.trim();
                let inner = e.trim_start_matches('[').trim_end_matches(']');
                let Some((kind_name, value)) = inner.split_once('=') else {
                    return e.to_owned();
                };
                let Some((kind, name)) = kind_name.split_once(':') else {
                    return e.to_owned();
                };
                let number = match kind.trim() {
                    _ if name.starts_with("PBS_") => None,
                    "u" => self.user_number(name.trim()),
                    "g" => self.group_number(name.trim()),
                    _ => None,
                };
                match number {
                    Some(n) => format!("[{}:{n}={}]", kind.trim(), value.trim()),
                    None => e.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The tables after the settings: `[[running]]`, `[[reservation]]`, outages,
    /// `[workload]`, `[metrics]`.
    pub(crate) fn write_workload_tables(&self, out: &mut String) {
        for r in self.running.iter().chain(&self.reservations) {
            out.push_str(r);
            out.push('\n');
        }
        if !self.outages.is_empty() {
            out.push_str("[failures]\non_failure = \"requeue\"\n\n");
            for o in &self.outages {
                out.push_str(o);
                out.push('\n');
            }
        }
        out.push_str("[runtime]    # the logs' runtimes are what the jobs took where they ran: replayed as they are\n[[runtime.class]]\nbeta = 0.0    # no job is stretched for spanning sets (a what-if may model it)\n\n");
        out.push_str("[workload]\ntrace = \"workload.swf\"    # the accounting logs' jobs\nrequests_file = \"requests.txt\"    # each job's select, place, queue and project\nrecorded = \"recorded.tsv\"    # what really happened: each run is measured against it\n\n");
        out.push_str(
            "[metrics]\nexec_vnode = true    # where each job ran, to compare with recorded.tsv\n",
        );
    }

    /// `ids.tsv`: the numbers the replay gives users and groups.
    pub(crate) fn ids_tsv(&self) -> String {
        let mut out = String::from("kind\tnumber\tname\n");
        for (kind, numbers) in [("user", &self.users), ("group", &self.groups)] {
            for (i, n) in numbers.names.iter().enumerate() {
                let _ = writeln!(out, "{kind}\t{}\t{n}", i + 1);
            }
        }
        out
    }
}

impl Site {
    /// The import report (Markdown).
    pub(crate) fn report(&self, replay: &Replay) -> String {
        let c = &replay.counts;
        let mut out =
            String::from("# Import report\n\n## Records\n\n| type | records |\n|---|---:|\n");
        for (k, n) in &c.log.records {
            let _ = writeln!(out, "| {k} | {n} |");
        }
        let _ = writeln!(
            out,
            "\nMalformed or unknown lines skipped: {}.\n",
            c.bad_lines
        );
        out.push_str("## Jobs\n\n| count | jobs |\n|---|---:|\n");
        for (name, n) in [
            ("replayed from the trace", c.replayed),
            (
                "running when the logs begin ([[running]])",
                c.running_at_start,
            ),
            (
                "queued before the logs begin (submitted at 0)",
                c.queued_at_start,
            ),
            (
                "unfinished when the logs end (run to their walltime)",
                c.unfinished_at_end,
            ),
            (
                "requeued (replayed from the first start, the last run's length)",
                c.log.requeued,
            ),
            (
                "deleted while running (real runs)",
                c.log.deleted_while_running,
            ),
            ("routed (a second Q)", c.log.routed),
            ("array subjobs (replayed as jobs)", c.log.array_subjobs),
            ("array parents (not jobs)", c.log.array_parents),
            (
                "held or dependent (etime after ctime)",
                c.log.held_or_dependent,
            ),
            (
                "old-style Resource_List.nodes converted to select and place",
                c.nodes_converted,
            ),
            (
                "Torque's Resource_List.procs=N alone, as select=N:ncpus=1",
                c.procs_converted,
            ),
            ("with their own Moab node-set request", c.nodesets_requested),
            (
                "with a node-set request not modelled (replayed without it)",
                c.nodesets_not_modelled,
            ),
        ] {
            let _ = writeln!(out, "| {name} | {n} |");
        }
        out.push_str("\n### Not replayed\n\n| reason | jobs |\n|---|---:|\n");
        for (reason, n) in &c.skipped {
            let _ = writeln!(out, "| {} | {n} |", reason.text());
        }
        if c.skipped.is_empty() {
            out.push_str("| (none) | 0 |\n");
        }
        out.push_str("\n### Jobs per queue\n\n| queue | jobs |\n|---|---:|\n");
        for (q, n) in &c.jobs_per_queue {
            let _ = writeln!(out, "| {q} | {n} |");
        }
        if !c.properties_defined.is_empty() {
            let _ = writeln!(
                out,
                "\nProperties old-style specs name and the site does not define, defined as booleans no vnode has (jobs asking for them cannot run): {}.",
                c.properties_defined.join(", ")
            );
        }
        if !c.resources_not_matched.is_empty() {
            out.push_str("\n### Chunk resources the scheduler does not match\n\nTaken out of the selects (not on sched_config's `resources:` line, so PBS ignores them when placing):\n\n| resource | jobs |\n|---|---:|\n");
            for (r, n) in &c.resources_not_matched {
                let _ = writeln!(out, "| {r} | {n} |");
            }
        }
        let _ = writeln!(
            out,
            "\n## Cluster\n\n{} vnodes on {} hosts, {} ncpus; {} resources defined. Down or offline in the node list: {} kept out of service for the whole replay, {} kept in service because recorded jobs ran on them.",
            self.vnodes.len(),
            {
                let mut hosts: Vec<&str> = self.vnodes.iter().map(|v| v.host.as_str()).collect();
                hosts.sort_unstable();
                hosts.dedup();
                hosts.len()
            },
            self.vnodes.iter().map(|v| v.ncpus).sum::<u64>(),
            self.resources.len(),
            c.vnodes_out_of_service,
            c.vnodes_out_of_service_but_used
        );
        if !self.node_attrs_unused.is_empty() {
            out.push_str("\nNode attributes not used: ");
            let list: Vec<String> = self
                .node_attrs_unused
                .iter()
                .map(|(k, n)| format!("{k} ({n})"))
                .collect();
            out.push_str(&list.join(", "));
            out.push_str(".\n");
        }
        if let Some((path, objects)) = &self.reservations {
            let _ = writeln!(
                out,
                "\n## Reservations\n\n{} read from {}: {} written as `[[reservation]]` on their vnodes, their windows read in the site's local time (the UTC offset the logs' line stamps show against their epoch fields).",
                objects.len(),
                crate::settings::short(path),
                replay.reservations.len()
            );
            if !replay.reservations_skipped.is_empty() {
                out.push_str("\n| reservation | not written because |\n|---|---|\n");
                for (id, why) in &replay.reservations_skipped {
                    let _ = writeln!(out, "| {id} | {why} |");
                }
            }
        }
        out.push_str("\n## Settings read\n\n| setting | value | from |\n|---|---|---|\n");
        for s in &self.pbs {
            let _ = writeln!(out, "| {} | `{}` | {} |", s.key, s.value, s.origin);
        }
        for (table, settings) in [
            ("", &self.limits),
            ("moab.", &self.moab),
            ("moab.priority.", &self.moab_priority),
            ("moab.fairshare.", &self.moab_fairshare),
        ] {
            for s in settings {
                let _ = writeln!(out, "| {table}{} | `{}` | {} |", s.key, s.value, s.origin);
            }
        }
        let credentials = self.numbered_credentials(replay);
        for (c, name) in &credentials {
            let _ = writeln!(
                out,
                "| {} as `{name}` | `{}` | {} |",
                c.text().split('=').next().unwrap_or_default(),
                c.value,
                c.origin
            );
        }
        let queue = match self.scheduler {
            Scheduler::Pbs => "queue",
            Scheduler::Moab => "class",
        };
        for q in &self.queues {
            for s in &q.settings {
                let _ = writeln!(
                    out,
                    "| {queue} {} {} | `{}` | {} |",
                    q.name, s.key, s.value, s.origin
                );
            }
        }
        if let Some(list) = &self.sched_resources {
            let _ = writeln!(
                out,
                "| resources (matched in chunks) | `{}` | sched_config |",
                list.join(", ")
            );
        }
        out.push_str("\n## Settings not modelled\n\n| setting | from | why |\n|---|---|---|\n");
        let unknown = self
            .moab_credentials
            .iter()
            .filter(|c| !credentials.iter().any(|(n, _)| std::ptr::eq(*n, *c)));
        for c in unknown {
            let _ = writeln!(
                out,
                "| {} | {} | no replayed job has this credential |",
                c.text(),
                c.origin
            );
        }
        let reservations = self.srcfg_entries(replay);
        let list_origin = self
            .moab
            .iter()
            .find(|s| s.key == "nodeset_list")
            .map_or("", |s| s.origin.as_str());
        let unwritten_sets: Vec<(String, String, String)> = self
            .reservation_sets_not_written(&reservations.names)
            .into_iter()
            .map(|name| {
                (
                    format!("NODESETLIST entry {name}"),
                    list_origin.to_owned(),
                    "a RESERVATION node set of a reservation not written: left out".to_owned(),
                )
            })
            .collect();
        let mut site_rows: Vec<(String, String, String)> = self
            .unserved_partitions()
            .into_iter()
            .map(|p| {
                (
                    format!("partition {p}"),
                    "the node list and queues".to_owned(),
                    "no scheduler in `qmgr list sched` serves it: its vnodes and queues are written as the default scheduler's".to_owned(),
                )
            })
            .collect();
        if let crate::settings::SharingSeen::Mixed([(a, sa), (b, sb)]) = self.vnode_sharing() {
            site_rows.push((
                format!("vnode sharing ({a} {sa}, {b} {sb}, ...)"),
                "the node list".to_owned(),
                "vnodes of different sharing are not modelled: jobs are placed as under default_shared, shared unless they ask excl".to_owned(),
            ));
        }
        if let Some(why) = self.partitions_left_out(replay) {
            let names: Vec<&str> = self.scheds.iter().map(|s| s.name.as_str()).collect();
            let from = self.scheds.first().map_or("", |s| s.origin.as_str());
            site_rows.push((
                format!("sched {}", names.join(", ")),
                from.to_owned(),
                why.to_owned(),
            ));
        }
        let rows = self
            .not_modelled
            .iter()
            .chain(&reservations.not_written)
            .chain(&unwritten_sets)
            .chain(&site_rows);
        let mut any = false;
        for (setting, from, why) in rows {
            let _ = writeln!(out, "| {setting} | {from} | {why} |");
            any = true;
        }
        if !any {
            out.push_str("| (none) | | |\n");
        }
        let unused: Vec<&str> = self
            .queues
            .iter()
            .filter(|q| !self.queue_written(replay, &q.name))
            .map(|q| q.name.as_str())
            .collect();
        if !unused.is_empty() {
            let _ = writeln!(
                out,
                "\nExecution queues no replayed job ran in and no vnode is associated with, not written (they change nothing): {}.",
                unused.join(", ")
            );
        }
        if let Some(q) = replay.extra_queues.first() {
            let settings = match self.scheduler {
                Scheduler::Pbs => "the server's settings",
                Scheduler::Moab => "moab.cfg's classes",
            };
            let _ = writeln!(
                out,
                "\n{} queue(s) the logs name are not in {settings} (first: {}); they are written with no settings.",
                replay.extra_queues.len(),
                q.name
            );
        }
        if self.scheduler == Scheduler::Moab {
            self.report_node_sets(&mut out);
            return out;
        }
        out.push_str("\n## Placement sets\n\n");
        let keys: Vec<String> = self
            .pbs
            .iter()
            .find(|s| s.key == "node_group_key")
            .and_then(|s| s.value.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let enabled = self
            .pbs
            .iter()
            .any(|s| s.key == "node_group_enable" && s.value.as_bool() == Some(true));
        if keys.is_empty() || !enabled {
            out.push_str(
                "node_group_enable is off or no node_group_key is set: no server placement sets.\n",
            );
        }
        for key in keys {
            let sets = self.sets_by(&key);
            let _ = writeln!(
                out,
                "Key `{key}`{}: {} sets\n\n| {key} | vnodes | ncpus |\n|---|---:|---:|",
                if enabled { "" } else { " (not enabled)" },
                sets.len()
            );
            write_set_rows(&mut out, sets);
        }
        out
    }

    /// The vnodes and ncpus of each value of resource `key` (a string or string array; a
    /// vnode without it is in the set of the empty value).
    fn sets_by(&self, key: &str) -> BTreeMap<String, (usize, u64)> {
        let mut sets: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        for v in &self.vnodes {
            let values: Vec<String> =
                match v.resources.iter().find(|(n, _)| *n == key).map(|(_, x)| x) {
                    Some(toml::Value::String(s)) => vec![s.clone()],
                    Some(toml::Value::Array(a)) => a
                        .iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect(),
                    _ => vec![String::new()],
                };
            for value in values {
                let e = sets.entry(value).or_insert((0, 0));
                e.0 += 1;
                e.1 += v.ncpus;
            }
        }
        sets
    }

    /// The report's Moab node sets: with FEATURE sets, one per feature NODESETLIST names
    /// (every feature when it names none), as the Moab placement builds them.
    fn report_node_sets(&self, out: &mut String) {
        out.push_str("\n## Node sets\n\n");
        let get = |key: &str| self.moab.iter().find(|s| s.key == key).map(|s| &s.value);
        let policy = get("nodeset_policy").and_then(|v| v.as_str());
        let attribute = get("nodeset_attribute").and_then(|v| v.as_str());
        let (Some(policy), Some("FEATURE")) = (policy, attribute) else {
            out.push_str(
                "No NODESETPOLICY with NODESETATTRIBUTE FEATURE: no global feature node sets.\n",
            );
            return;
        };
        let listed: Vec<String> = get("nodeset_list")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let mut sets = self.sets_by("features");
        sets.remove("");
        if !listed.is_empty() {
            sets = listed
                .iter()
                .map(|f| (f.clone(), sets.get(f).copied().unwrap_or((0, 0))))
                .collect();
        }
        let _ = writeln!(
            out,
            "{policy} over FEATURE: {} sets\n\n| feature | vnodes | ncpus |\n|---|---:|---:|",
            sets.len()
        );
        write_set_rows(out, sets);
    }
}

/// A table's rows of sets: value, vnodes, ncpus.
fn write_set_rows(out: &mut String, sets: BTreeMap<String, (usize, u64)>) {
    for (value, (n, ncpus)) in sets {
        let _ = writeln!(
            out,
            "| {} | {n} | {ncpus} |",
            if value.is_empty() { "(unset)" } else { &value }
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod reservation_times {
    use super::*;

    /// A site an hour east of UTC: its line stamps read an hour ahead of the records' epoch
    /// fields, so `pbs_rstat`'s local 03:00 is 02:00 UTC; across a daylight-saving change the
    /// offset nearest the time is used.
    #[test]
    fn local_times_are_read_by_the_offset_the_logs_show() {
        let mut offsets = Vec::new();
        for line in [
            "01/01/2026 01:01:00;S;1.pbs;start=1767225660",
            "01/01/2026 01:02:01;E;1.pbs;end=1767225720",
            "07/01/2026 02:00:00;S;2.pbs;start=1782864000",
        ] {
            note_utc_offset(&parse_record(line).unwrap(), &mut offsets);
        }
        assert_eq!(offsets, [(1767225660, 3600), (1782864000, 7200)]);
        let wall = crate::files::parse_rstat_time("Thu Jan 01 03:00:00 2026").unwrap();
        assert_eq!(epoch_of_local(wall, &offsets), 1767232800);
        let summer = crate::files::parse_rstat_time("Wed Jul 01 04:00:00 2026").unwrap();
        assert_eq!(epoch_of_local(summer, &offsets), 1782871200);
        assert_eq!(
            crate::files::parse_rstat_time("Thu Jan 01 25:00:00 2026"),
            None
        );
        assert_eq!(crate::files::parse_rstat_time("Thu Jan 01 03:00:00"), None);
        // Nothing a file says overflows: a year out of range is no time.
        assert_eq!(
            crate::files::parse_rstat_time("Thu Jan 01 03:00:00 9223372036854775807"),
            None
        );
        let huge = "01/01/99999999999 01:00:00;S;3.pbs;start=9223372036854775807";
        note_utc_offset(&parse_record(huge).unwrap(), &mut offsets);
        assert_eq!(offsets.len(), 2);
    }
}
