//! Maui's simulation-mode traces (site-inputs.md §7.2, §7.3), a second way into a Moab site:
//! the resource trace (one node a line, 21 fields) gives the nodes, and the workload trace
//! (one job a line, 44 fields) the jobs, each with its request, times, class, account,
//! allocated hosts and node-set request. Moab's workload event records (a record per job
//! event, the same fields four places on) are read into the same jobs. Both become what the
//! Torque import reads from a node list and accounting logs, so the same replay builds the
//! scenario.

use crate::files::{self, Object, at};
use crate::workload::ReadJobs;
use crate::{ImportError, ImportOptions};
use placesim_workload::pbs_accounting::{AcctCounts, AcctJob};
use std::path::Path;

/// A bracketed list as Maui writes it (`[fast][ethernet]`, `[batch:2]`), each item without
/// its `:count`; `[NONE]` and `-` are none.
fn bracketed(field: &str) -> Vec<&str> {
    field
        .split(['[', ']'])
        .map(|item| item.split(':').next().unwrap_or(item).trim())
        .filter(|item| !item.is_empty() && *item != "NONE" && *item != "-")
        .collect()
}

/// Reads a Maui resource trace into node objects under the names the Torque import uses:
/// processors as `np`, memory (MB) as `resources_available.mem`, features as properties,
/// relative speed as `speed`, and the event (`DEFINED`: down; `DRAINED`: offline) as
/// `state`.
pub(crate) fn parse_resource_trace(path: &Path, text: &str) -> Result<Vec<Object>, ImportError> {
    let mut nodes = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields.len() < 18 {
            return Err(at(
                path,
                line,
                format!(
                    "expected the 21 whitespace-separated fields of a Maui resource trace line, found {}",
                    fields.len()
                ),
            ));
        }
        if fields[0] != "COMPUTENODE" {
            return Err(at(
                path,
                line,
                format!("field 1: `{}`: expected COMPUTENODE", fields[0]),
            ));
        }
        let state = match fields[1] {
            "AVAILABLE" => "free",
            "DEFINED" => "down",
            "DRAINED" => "offline",
            other => {
                return Err(at(
                    path,
                    line,
                    format!("field 2: `{other}`: expected AVAILABLE, DEFINED or DRAINED"),
                ));
            }
        };
        let number = |k: usize, what: &str| -> Result<f64, ImportError> {
            fields[k]
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    at(
                        path,
                        line,
                        format!(
                            "field {} ({what}): `{}`: expected a number",
                            k + 1,
                            fields[k]
                        ),
                    )
                })
        };
        let procs = number(8, "processors")?;
        let memory_mb = number(6, "memory, MB")?;
        let speed = number(17, "relative speed")?;
        let mut attrs: Vec<(&str, String, usize)> = vec![
            ("np", format!("{}", procs as u64), line),
            ("state", state.to_owned(), line),
            ("speed", fields[17].to_owned(), line),
        ];
        if memory_mb > 0.0 {
            attrs.push((
                "resources_available.mem",
                format!("{}mb", memory_mb as u64),
                line,
            ));
        }
        let features = bracketed(fields[14]);
        if !features.is_empty() {
            attrs.push(("properties", features.join(","), line));
        }
        if speed <= 0.0 {
            return Err(at(
                path,
                line,
                format!(
                    "field 18 (relative speed): `{}`: expected a number above 0",
                    fields[17]
                ),
            ));
        }
        nodes.push(files::torque_object(
            path,
            fields[3].to_owned(),
            line,
            attrs.into_iter(),
        )?);
    }
    Ok(nodes)
}

/// Reads a Maui workload trace (file `file` of the import) into jobs: a job's request from
/// its nodes, tasks, tasks per node, dedicated processors per task and required features,
/// as an old-style node spec (`N:ppn=P:feature`, converted by PBS's rules like Torque's) or,
/// without a node count, as `T` chunks of its processors per task placed freely; where it
/// ran from its allocated hosts; its node set from field 42.
pub(crate) fn read_workload_trace(
    path: &Path,
    text: &str,
    file: usize,
    options: ImportOptions,
) -> Result<ReadJobs, ImportError> {
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, raw)| (i + 1, raw.trim()))
        .filter(|(_, content)| !content.is_empty() && !content.starts_with('#'));
    let event_format = lines
        .clone()
        .next()
        .is_some_and(|(_, first)| is_event_record(&first.split_whitespace().collect::<Vec<_>>()));
    let mut log = AcctCounts::default();
    let mut bad_lines = 0;
    let mut read = Vec::new();
    let mut utc_offsets = Vec::new();
    if event_format {
        let mut events = EventJobs::default();
        for (line, content) in lines {
            match events.push(content, line, &mut log) {
                Ok(()) => {}
                Err(_) if options.skip_bad_records => bad_lines += 1,
                Err(message) => return Err(at(path, line, message)),
            }
        }
        utc_offsets = std::mem::take(&mut events.utc_offsets);
        read = events.finish(&mut log);
    } else {
        for (line, content) in lines {
            let fields: Vec<&str> = content.split_whitespace().collect();
            let job = if is_event_record(&fields) {
                Err("a Moab workload event record in a Maui workload trace: expected every line in one format".to_owned())
            } else {
                trace_state(&fields).and_then(|state| workload_job(&fields, state))
            };
            match job {
                Ok(job) => {
                    log.count_record(job_state_letter(&job));
                    read.push((job, line));
                }
                Err(_) if options.skip_bad_records => bad_lines += 1,
                Err(message) => return Err(at(path, line, message)),
            }
        }
    }
    let mut jobs = Vec::with_capacity(read.len());
    let mut job_at = Vec::with_capacity(read.len());
    let mut span: Option<(i64, i64)> = None;
    for (job, line) in read {
        for t in [Some(job.ctime), job.first_start, job.end]
            .into_iter()
            .flatten()
        {
            let t = t as i64;
            span = Some(span.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
        }
        log.deleted_while_queued += u64::from(job.deleted_while_queued);
        log.deleted_while_running += u64::from(job.deleted_while_running);
        jobs.push(job);
        job_at.push((file, line));
    }
    let span = span.ok_or_else(|| {
        at(
            path,
            1,
            if event_format {
                "no job found: expected Moab workload event records (`job` objects)"
            } else {
                "no job found: expected Maui workload trace lines of 44 whitespace-separated fields"
            },
        )
    })?;
    Ok(ReadJobs {
        utc_offsets,
        jobs,
        job_at,
        span,
        log,
        bad_lines,
    })
}

/// Whether a line's fields are a Moab workload event record: the time `HH:MM:SS`, then the
/// epoch (Moab 9 adds `:eventID`), the object type, its id and the event.
fn is_event_record(fields: &[&str]) -> bool {
    fields.len() > 4
        && fields[0].split(':').count() == 3
        && fields[0].split(':').all(|p| p.parse::<u8>().is_ok())
        && fields[1]
            .split(':')
            .next()
            .is_some_and(|epoch| epoch.parse::<i64>().is_ok())
}

/// Moab's job events (the workload event record's field 5).
const JOB_EVENTS: [&str; 11] = [
    "jobsubmit",
    "jobstart",
    "jobend",
    "jobcancel",
    "jobfailure",
    "jobreject",
    "jobhold",
    "jobresume",
    "jobmigrate",
    "jobpreempt",
    "jobcheckpoint",
];

/// Moab 5.0+'s workload event records, read one line at a time into one job per job id:
/// each record carries the whole job as Moab knew it then, so a job is its last record,
/// with the first start kept from its first `jobstart` (a preempted job started again is
/// replayed from its first start, as a PBS requeue is). Records of other objects (nodes,
/// reservations, the scheduler) are counted by object type and otherwise left alone.
#[derive(Default)]
struct EventJobs {
    index: std::collections::HashMap<String, usize>,
    jobs: Vec<EventJob>,
    /// The site's UTC offsets, as `ReadJobs::utc_offsets`: each record's local time of day
    /// against its epoch.
    utc_offsets: Vec<(i64, i64)>,
}

/// One job's records so far.
struct EventJob {
    job: AcctJob,
    line: usize,
    first_start: Option<u64>,
    starts: u32,
}

impl EventJobs {
    fn push(&mut self, content: &str, line: usize, log: &mut AcctCounts) -> Result<(), String> {
        let fields: Vec<&str> = content.split_whitespace().collect();
        if !is_event_record(&fields) {
            return Err(format!(
                "expected a Moab workload event record: HH:MM:SS, epoch, object type, object id and event, then the object's fields (`{}` ...)",
                fields.first().copied().unwrap_or("")
            ));
        }
        if fields[2] != "job" {
            log.count_record(fields[2]);
            return Ok(());
        }
        self.note_utc_offset(fields[0], fields[1]);
        let event = fields[4];
        if !JOB_EVENTS.contains(&event) {
            return Err(format!(
                "field 5 (event): `{event}`: expected one of {}",
                JOB_EVENTS.join(", ")
            ));
        }
        log.count_record(&format!("job {event}"));
        // Fields 6 to 45 are Maui's 2 to 41, four places on; Maui's 42 (the set description)
        // is not in the event record (field 46 is the simulator's data).
        if fields.len() < 42 {
            return Err(format!(
                "expected at least the 42 whitespace-separated fields of a Moab workload event record (through field 42, the allocated hosts), found {}",
                fields.len()
            ));
        }
        let mut maui: Vec<&str> = Vec::with_capacity(42);
        maui.push(fields[3]);
        maui.extend(fields[5..].iter().take(40));
        maui.resize(42, "[NONE]");
        let state = match event {
            "jobend" | "jobfailure" => TraceState::Completed,
            "jobcancel" => TraceState::Removed,
            "jobreject" => TraceState::NotRun,
            _ => TraceState::Open,
        };
        let job = workload_job(&maui, state)?;
        let started = event == "jobstart" && job.first_start.is_some();
        match self.index.get(fields[3]) {
            Some(&k) => {
                let known = &mut self.jobs[k];
                known.first_start = known.first_start.or(job.first_start);
                known.starts += u32::from(started);
                known.job = job;
                known.line = line;
            }
            None => {
                self.index.insert(fields[3].to_owned(), self.jobs.len());
                self.jobs.push(EventJob {
                    first_start: job.first_start,
                    starts: u32::from(started),
                    job,
                    line,
                });
            }
        }
        Ok(())
    }

    /// Notes the UTC offset a record shows, its local `HH:MM:SS` against its epoch, rounded
    /// to a quarter hour, when it differs from the last. A time of day tells an offset only up
    /// to whole days: it is taken above −11 hours and at most +13 (Hawaii to New Zealand's
    /// summer), where nearly every site is.
    fn note_utc_offset(&mut self, time_of_day: &str, epoch: &str) {
        let seconds: Option<Vec<i64>> = time_of_day.split(':').map(|p| p.parse().ok()).collect();
        let (Some([h, m, s]), Some(t)) = (
            seconds
                .as_deref()
                .and_then(|p| <[i64; 3]>::try_from(p).ok()),
            epoch.split(':').next().and_then(|e| e.parse::<i64>().ok()),
        ) else {
            return;
        };
        let mut offset = (h * 3600 + m * 60 + s - t.rem_euclid(86_400)).rem_euclid(86_400);
        if offset > 13 * 3600 {
            offset -= 86_400;
        }
        let offset = (offset + 450).div_euclid(900) * 900;
        if self.utc_offsets.last().map(|o| o.1) != Some(offset) {
            self.utc_offsets.push((t, offset));
        }
    }

    /// The jobs with the line of each one's last record, in order of first appearance.
    fn finish(self, log: &mut AcctCounts) -> Vec<(AcctJob, usize)> {
        self.jobs
            .into_iter()
            .map(|mut e| {
                if e.job.first_start.is_some() {
                    e.job.first_start = e.first_start;
                }
                e.job.requeues = e.starts.saturating_sub(1);
                log.requeued += u64::from(e.job.requeues > 0);
                (e.job, e.line)
            })
            .collect()
    }
}

/// The report's record type for a trace job: its state's initial (`C` Completed, `R`
/// Removed, `N` NotRun).
fn job_state_letter(job: &AcctJob) -> &'static str {
    if job.deleted_while_queued || job.deleted_while_running {
        "R"
    } else if job.first_start.is_none() {
        "N"
    } else {
        "C"
    }
}

/// What a trace says of a job's run: Maui's final states, or (a Moab event record before
/// the job's end) a job still queued or running.
#[derive(Clone, Copy)]
enum TraceState {
    Completed,
    Removed,
    NotRun,
    Open,
}

/// A Maui trace line's state (field 7).
fn trace_state(f: &[&str]) -> Result<TraceState, String> {
    if f.len() < 42 {
        return Err(format!(
            "expected the 44 whitespace-separated fields of a Maui workload trace line, found {}",
            f.len()
        ));
    }
    match f[6] {
        "Completed" => Ok(TraceState::Completed),
        "Removed" => Ok(TraceState::Removed),
        "NotRun" => Ok(TraceState::NotRun),
        other => Err(format!(
            "field 7 (state): `{other}`: expected Completed, Removed or NotRun"
        )),
    }
}

/// A job from the fields of a Maui workload trace line (at least 42 of them), in `state`,
/// or what was expected.
fn workload_job(f: &[&str], state: TraceState) -> Result<AcctJob, String> {
    let whole = |k: usize, what: &str| -> Result<i64, String> {
        f[k].parse::<i64>().map_err(|_| {
            format!(
                "field {} ({what}): `{}`: expected a whole number",
                k + 1,
                f[k]
            )
        })
    };
    let nodes = whole(1, "nodes requested")?.max(0) as u64;
    let tasks = whole(2, "tasks requested")?;
    if tasks <= 0 {
        return Err(format!(
            "field 3 (tasks requested): `{}`: expected at least 1",
            f[2]
        ));
    }
    let tasks = tasks as u64;
    let walltime = whole(5, "wallclock limit, s")?;
    let (submit, start, end) = (
        whole(8, "submit time")?,
        whole(10, "start time")?,
        whole(11, "completion time")?,
    );
    let tasks_per_node = whole(22, "tasks per node")?;
    let procs_per_task = whole(31, "dedicated processors per task")?.max(1) as u64;
    let tasks_allocated = whole(21, "tasks allocated")?.max(0) as u64;
    let features = bracketed(f[19]);
    let class = bracketed(f[7]).first().map_or("batch", |c| *c).to_owned();
    let account = bracketed(f[25]).first().map(|a| (*a).to_owned());
    let started = start > 0;
    let (deleted_while_queued, deleted_while_running, runs) = match state {
        TraceState::Completed | TraceState::Open => (false, false, started),
        TraceState::Removed => (!started, started, started),
        TraceState::NotRun => (false, false, false),
    };
    let ended = runs && end > 0 && !matches!(state, TraceState::Open);
    // The request: N nodes of the tasks' processors (each node's share of the tasks), or
    // the tasks anywhere.
    let feature_spec: String = features.iter().map(|p| format!(":{p}")).collect();
    let (nodes_spec, select) = if nodes > 0 {
        let per_node = if tasks_per_node > 0 {
            tasks_per_node as u64
        } else {
            tasks.div_ceil(nodes)
        };
        let ppn = per_node.saturating_mul(procs_per_task);
        (Some(format!("{nodes}:ppn={ppn}{feature_spec}")), None)
    } else {
        let features: String = features.iter().map(|p| format!(":{p}=True")).collect();
        (
            None,
            Some(format!("{tasks}:ncpus={procs_per_task}{features}")),
        )
    };
    let exec_vnode = if runs {
        allocated(f[37], tasks_allocated.max(tasks), procs_per_task)
    } else {
        None
    };
    let nodeset = bracketed_free(f[41]);
    Ok(AcctJob {
        id: f[0].to_owned(),
        user: f[3].to_owned(),
        group: f[4].to_owned(),
        project: account,
        queue: class,
        ctime: submit.max(0) as u64,
        select,
        place: None,
        nodes: nodes_spec,
        nodeset,
        walltime_s: (walltime > 0).then_some(walltime as u64),
        first_start: runs.then_some(start as u64),
        last_start: runs.then_some(start as u64),
        end: ended.then_some(end as u64),
        exec_vnode,
        deleted_while_queued,
        deleted_while_running,
        ..AcctJob::default()
    })
}

/// A field that is `[NONE]`, `-` or empty as none, else as written.
fn bracketed_free(field: &str) -> Option<String> {
    (!matches!(field, "[NONE]" | "NONE" | "-" | "")).then(|| field.to_owned())
}

/// Where a job ran, as `exec_vnode`, from Maui's allocated hosts (`node001:node004`): a
/// host named once per task it ran, when the list has one name per task; otherwise the
/// `tasks` spread evenly over the hosts named, the first hosts taking one more when they do
/// not divide. Each task holds `procs_per_task` processors.
fn allocated(hosts: &str, tasks: u64, procs_per_task: u64) -> Option<String> {
    let named: Vec<&str> = hosts
        .split([':', ','])
        .filter(|h| !h.is_empty() && *h != "[NONE]")
        .collect();
    if named.is_empty() {
        return None;
    }
    let mut distinct: Vec<(&str, u64)> = Vec::new();
    for h in &named {
        match distinct.iter_mut().find(|(d, _)| d == h) {
            Some((_, n)) => *n += 1,
            None => distinct.push((h, 1)),
        }
    }
    if named.len() as u64 != tasks {
        let n = distinct.len() as u64;
        for (k, (_, count)) in distinct.iter_mut().enumerate() {
            *count = tasks / n + u64::from((k as u64) < tasks % n);
        }
    }
    Some(
        distinct
            .iter()
            .filter(|(_, count)| *count > 0)
            .map(|(h, count)| format!("({h}:ncpus={})", count.saturating_mul(procs_per_task)))
            .collect::<Vec<_>>()
            .join("+"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocated_hosts_become_exec_vnode() {
        assert_eq!(
            allocated("n1:n2", 2, 4).as_deref(),
            Some("(n1:ncpus=4)+(n2:ncpus=4)")
        );
        assert_eq!(
            allocated("n1:n1:n2", 3, 1).as_deref(),
            Some("(n1:ncpus=2)+(n2:ncpus=1)")
        );
        assert_eq!(
            allocated("n1:n2", 5, 1).as_deref(),
            Some("(n1:ncpus=3)+(n2:ncpus=2)")
        );
        assert_eq!(allocated("[NONE]", 5, 1), None);
    }

    /// The offsets a Moab event record's local time shows against its epoch (10:00 UTC), east
    /// and west of UTC and across midnight.
    #[test]
    fn event_records_show_the_site_s_utc_offset() {
        let mut events = EventJobs::default();
        for (local, epoch) in [
            ("10:00:00", "1491386400"),
            ("12:00:00", "1491386400:17"),
            ("00:30:00", "1491386400"),
            ("05:00:00", "1491404400"),
            ("05:00:00", "1491404401"),
        ] {
            events.note_utc_offset(local, epoch);
        }
        assert_eq!(
            events.utc_offsets,
            [
                (1491386400, 0),
                (1491386400, 7200),
                (1491386400, -34200),
                (1491404400, -36000)
            ]
        );
    }

    #[test]
    fn the_manuals_sample_line_reads() {
        let line = "SP02.2343.0 20 20 570 519 86400 Removed [batch:1] 887343658 889585185 889585185 889585411 ethernet R6000 AIX43 >= 256 >= 0 [NONE] 889584538 20 0 0 2 0 test.cmd 1001 6 678.08 0 1 0 0 0 0 0 [NONE] 0 [NONE] [NONE] [NONE] [NONE] [NONE]";
        let fields: Vec<&str> = line.split_whitespace().collect();
        let job = workload_job(&fields, trace_state(&fields).unwrap()).unwrap();
        assert_eq!(
            (job.nodes.as_deref(), job.queue.as_str(), job.user.as_str()),
            (Some("20:ppn=1"), "batch", "570")
        );
        assert_eq!(
            (job.ctime, job.first_start, job.end, job.walltime_s),
            (887343658, Some(889585185), Some(889585411), Some(86400))
        );
        assert!(job.deleted_while_running);
        assert_eq!(job.exec_vnode, None);
    }
}
