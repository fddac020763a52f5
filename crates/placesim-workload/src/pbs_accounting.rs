//! PBS accounting logs (`$PBS_HOME/server_priv/accounting/YYYYMMDD`; site-inputs.md §3):
//! one record per line, `MM/DD/YYYY hh:mm:ss;<type>;<id>;<text>`, the text `key=value` pairs
//! separated by spaces outside quotes.
//!
//! The line stamp is local time and repeats or skips at DST changes, so records are taken in
//! file order and every time is read from the epoch fields of the text (`ctime`, `start`,
//! `end`), never from the stamp. The quoting is asymmetric in PBS (`accounting.c`): `account=`
//! is always double-quoted, `project=` and `Resource_List.*` values only when they hold a
//! space (with `'` when they also hold `"`), and `user=`, `group=`, `jobname=` and `queue=`
//! never; so the line is split on its first three `;` only, and the text on spaces outside
//! quotes only.

use std::collections::{BTreeMap, HashMap};

/// One record of an accounting log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcctRecord {
    /// The line's local-time stamp, as written (kept for messages, never for times).
    pub stamp: String,
    /// The record type: `Q`, `S`, `E`, `R`, `D`, `A`, ... (acct.h).
    pub kind: char,
    /// The job (or reservation) id, as written: `2994.pbs`, `1234[7].srv`.
    pub id: String,
    /// The text's `key=value` pairs in written order, quotes taken off. An `A` record's text
    /// (a reason in words) is one pair with an empty key.
    pub attrs: Vec<(String, String)>,
}

impl AcctRecord {
    /// The value of `key`, if the record has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a line is not a record, and where (1-based column, in characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: {message}")]
pub struct AcctLineError {
    /// Where in the line.
    pub column: usize,
    /// What was expected.
    pub message: String,
}

/// Parses one line of an accounting log.
pub fn parse_record(line: &str) -> Result<AcctRecord, AcctLineError> {
    let err = |at: usize, message: String| AcctLineError {
        column: line[..at].chars().count() + 1,
        message,
    };
    let mut fields = line.splitn(4, ';');
    let (Some(stamp), Some(kind), Some(id), Some(text)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(err(
            line.len(),
            "expected `MM/DD/YYYY hh:mm:ss;<type>;<id>;<text>`: fewer than four `;`-separated fields"
                .to_owned(),
        ));
    };
    let mut chars = kind.chars();
    let (Some(k), None) = (chars.next(), chars.next()) else {
        return Err(err(
            stamp.len() + 1,
            format!("expected a one-letter record type, found `{kind}`"),
        ));
    };
    let text_at = stamp.len() + kind.len() + id.len() + 3;
    let attrs = if k == 'A' {
        vec![(String::new(), text.to_owned())]
    } else {
        split_text(text).map_err(|(at, message)| err(text_at + at, message))?
    };
    Ok(AcctRecord {
        stamp: stamp.to_owned(),
        kind: k,
        id: id.to_owned(),
        attrs,
    })
}

/// The `key=value` pairs of a record's text: split on spaces outside quotes, a value's
/// enclosing quotes (`"` or `'`) taken off. Errors give the byte offset in `text`.
fn split_text(text: &str) -> Result<Vec<(String, String)>, (usize, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        if bytes[pos] == b' ' {
            pos += 1;
            continue;
        }
        let start = pos;
        let Some(eq) = text[pos..].find(['=', ' ']).map(|i| pos + i) else {
            return Err((start, format!("`{}`: expected key=value", &text[start..])));
        };
        if bytes[eq] != b'=' {
            return Err((start, format!("`{}`: expected key=value", &text[start..eq])));
        }
        let key = &text[start..eq];
        pos = eq + 1;
        let value = match bytes.get(pos) {
            Some(&q @ (b'"' | b'\'')) => {
                let close = text[pos + 1..]
                    .find(q as char)
                    .map(|i| pos + 1 + i)
                    .ok_or_else(|| {
                        (
                            pos,
                            format!("the value of `{key}` opens a quote that does not close"),
                        )
                    })?;
                let value = &text[pos + 1..close];
                pos = close + 1;
                value
            }
            _ => {
                let end = text[pos..].find(' ').map_or(text.len(), |i| pos + i);
                let value = &text[pos..end];
                pos = end;
                value
            }
        };
        out.push((key.to_owned(), value.to_owned()));
    }
    Ok(out)
}

/// One job as its records tell it, ready to become a replay job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AcctJob {
    /// Its id, as written.
    pub id: String,
    /// `user=`, `group=`, `project=` (or none), `account=` (or none).
    pub user: String,
    /// Its group.
    pub group: String,
    /// Its project, if any.
    pub project: Option<String>,
    /// Its account, if any.
    pub account: Option<String>,
    /// The queue it ran in (`queue=` of its `S`/`E` record, after routing), else the last
    /// one seen.
    pub queue: String,
    /// Arrival: `ctime`, stable across routing and holds.
    pub ctime: u64,
    /// When it became eligible (`etime`), if written.
    pub etime: Option<u64>,
    /// `Resource_List.select` and `Resource_List.place`, as asked.
    pub select: Option<String>,
    /// Its place, if given.
    pub place: Option<String>,
    /// `Resource_List.nodes`, an old-style node spec (Torque's request, or a PBS job's from
    /// before select).
    pub nodes: Option<String>,
    /// `Resource_List.procs`: Torque's and Moab's count of processors anywhere, a request
    /// of its own when the job gives neither `select` nor `nodes`.
    pub procs: Option<String>,
    /// `Resource_List.nodeset`: a Moab node-set request (`ONEOF:FEATURE:a:b`, Moab's `-l
    /// nodeset=`), where a Torque log carries it.
    pub nodeset: Option<String>,
    /// `Resource_List.walltime`, seconds: the scheduler's estimate.
    pub walltime_s: Option<u64>,
    /// The first run's start (`start=` of the first `S`).
    pub first_start: Option<u64>,
    /// The last run's start and the end (`E`).
    pub last_start: Option<u64>,
    /// When it ended (`end=` of `E`), if it did.
    pub end: Option<u64>,
    /// Where it ran (`exec_vnode` of its last `S`, else of `E`); for a Torque job, which
    /// has none, made from its `exec_host` ([`exec_vnode_of_exec_host`]).
    pub exec_vnode: Option<String>,
    /// A Torque `exec_host` that does not read, with why: the job's `exec_vnode` is unknown.
    pub bad_exec_host: Option<String>,
    /// `Exit_status` of `E`.
    pub exit_status: Option<i64>,
    /// Requeues seen (`R` records).
    pub requeues: u32,
    /// Deleted (`D`) before it ever started.
    pub deleted_while_queued: bool,
    /// Deleted (`D`) while it ran.
    pub deleted_while_running: bool,
}

impl AcctJob {
    /// Where a Torque job ran, from its `exec_host`, the only place Torque records it.
    fn take_exec_host(&mut self, exec_host: &str) {
        match exec_vnode_of_exec_host(exec_host) {
            Ok(x) => {
                self.exec_vnode = Some(x);
                self.bad_exec_host = None;
            }
            Err(why) => {
                self.exec_vnode = None;
                self.bad_exec_host = Some(why);
            }
        }
    }
}

/// PBS's `exec_vnode` for an `exec_host`, one part per host in the order hosts first
/// appear, each with the number of processors the job had there: Torque writes cores
/// (`n01/0-7+n02/0,2,4-6`, or one `host/core` per core in older versions) and PBS a count
/// (`c1/0*13`: from slot 0, 13 processors; `c1/3`: one). Torque has no `exec_vnode`, and a
/// host is its one vnode, so this is where the job ran as the replay sees vnodes.
pub fn exec_vnode_of_exec_host(exec_host: &str) -> Result<String, String> {
    let expected = || {
        format!(
            "exec_host `{exec_host}`: expected host/cores joined by `+`, such as `n01/0-7+n02/0-7` or `c1/0*13`"
        )
    };
    let mut hosts: Vec<(&str, u64)> = Vec::new();
    for part in exec_host.split('+') {
        let (host, slots) = part.trim().split_once('/').ok_or_else(expected)?;
        if host.is_empty() {
            return Err(expected());
        }
        let count = match slots.split_once('*') {
            Some((first, n)) => {
                first.parse::<u64>().map_err(|_| expected())?;
                n.parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(expected)?
            }
            None => {
                let mut count = 0u64;
                for range in slots.split(',') {
                    let (a, b) = range.split_once('-').unwrap_or((range, range));
                    let (a, b) = (a.parse::<u64>(), b.parse::<u64>());
                    let (Ok(a), Ok(b)) = (a, b) else {
                        return Err(expected());
                    };
                    if b < a {
                        return Err(expected());
                    }
                    count = count.saturating_add(b - a + 1);
                }
                count
            }
        };
        match hosts.iter_mut().find(|(h, _)| *h == host) {
            Some((_, n)) => *n = n.saturating_add(count),
            None => hosts.push((host, count)),
        }
    }
    Ok(hosts
        .iter()
        .map(|(h, n)| format!("({h}:ncpus={n})"))
        .collect::<Vec<_>>()
        .join("+"))
}

/// What a log's quirks did, counted (site-inputs.md §3.7): nothing is dropped unsaid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AcctCounts {
    /// Records read, by type: PBS's and Torque's letters (`E`), Maui's job states'
    /// initials, Moab's object types and events (`job jobstart`, `rsv`).
    pub records: BTreeMap<String, u64>,
    /// Jobs requeued at least once (`R`): replayed from their first start, with the last
    /// run's duration.
    pub requeued: u64,
    /// Jobs deleted before they started (`D` and no `S`).
    pub deleted_while_queued: u64,
    /// Jobs deleted while running (`D`, then `E`): real runs.
    pub deleted_while_running: u64,
    /// Jobs with a second `Q` (a routing queue moved them).
    pub routed: u64,
    /// Subjobs of arrays (`1234[7].srv`), replayed as jobs.
    pub array_subjobs: u64,
    /// Array parents (`1234[].srv`), whose records are not jobs of their own.
    pub array_parents: u64,
    /// Jobs held or dependent (`etime` after `ctime`).
    pub held_or_dependent: u64,
    /// Jobs that started but have no `E` in the logs.
    pub unfinished: u64,
    /// Jobs (not subjobs, whose parent's `Q` tells their arrival) whose first record seen is
    /// an `S`, `E` or `R`: they arrived before the logs begin.
    pub started_before_logs: u64,
}

impl AcctCounts {
    /// Counts one record of type `kind`, allocating only for a type not seen before (a
    /// million-record log has a handful of types).
    pub fn count_record(&mut self, kind: &str) {
        match self.records.get_mut(kind) {
            Some(n) => *n += 1,
            None => {
                self.records.insert(kind.to_owned(), 1);
            }
        }
    }
}

/// PBS's `[[hh:]mm:]ss` duration, seconds.
fn duration_s(text: &str) -> Option<u64> {
    let mut total: u64 = 0;
    for part in text.split(':') {
        let n: u64 = part.parse().ok()?;
        total = total.checked_mul(60)?.checked_add(n)?;
    }
    Some(total)
}

/// Assembles jobs from `records`, in file order: one job per job id, array parents set
/// aside (their subjobs are the jobs), each quirk counted.
pub fn assemble_jobs(records: &[AcctRecord]) -> (Vec<AcctJob>, AcctCounts) {
    let mut assembler = JobAssembler::default();
    for r in records {
        assembler.push(r);
    }
    assembler.finish()
}

/// [`assemble_jobs`] one record at a time, so that a reader keeps jobs, not records: a
/// million-record log is read in the memory of its jobs.
#[derive(Debug, Default)]
pub struct JobAssembler {
    counts: AcctCounts,
    index: HashMap<String, usize>,
    jobs: Vec<AcctJob>,
    queued_seen: Vec<u32>,
    first_kind: Vec<char>,
    parents: std::collections::HashSet<String>,
}

impl JobAssembler {
    /// Takes the next record in file order; the index of the job it belongs to (in the
    /// order [`JobAssembler::finish`] returns them), if it belongs to one.
    pub fn push(&mut self, r: &AcctRecord) -> Option<usize> {
        self.counts.count_record(r.kind.encode_utf8(&mut [0; 4]));
        if !matches!(r.kind, 'Q' | 'S' | 'E' | 'R' | 'D') {
            return None;
        }
        if r.id.contains("[]") {
            if !self.parents.contains(r.id.as_str()) {
                self.parents.insert(r.id.clone());
            }
            return None;
        }
        let i = match self.index.get(r.id.as_str()) {
            Some(&i) => i,
            None => {
                self.jobs.push(AcctJob {
                    id: r.id.clone(),
                    ..AcctJob::default()
                });
                self.queued_seen.push(0);
                self.first_kind.push(r.kind);
                self.index.insert(r.id.clone(), self.jobs.len() - 1);
                self.jobs.len() - 1
            }
        };
        let job = &mut self.jobs[i];
        let num = |key: &str| r.get(key).and_then(|v| v.parse::<u64>().ok());
        if r.kind != 'D' {
            if let Some(u) = r.get("user") {
                job.user = u.to_owned();
            }
            if let Some(g) = r.get("group") {
                job.group = g.to_owned();
            }
            if let Some(p) = r.get("project") {
                job.project = Some(p.to_owned());
            }
            if let Some(a) = r.get("account") {
                job.account = Some(a.to_owned());
            }
            if let Some(q) = r.get("queue") {
                job.queue = q.to_owned();
            }
            if let Some(c) = num("ctime") {
                job.ctime = c;
            }
            if let Some(e) = num("etime") {
                job.etime = Some(e);
            }
            if let Some(s) = r.get("Resource_List.select") {
                job.select = Some(s.to_owned());
            }
            if let Some(p) = r.get("Resource_List.place") {
                job.place = Some(p.to_owned());
            }
            if let Some(n) = r.get("Resource_List.nodes") {
                job.nodes = Some(n.to_owned());
            }
            if let Some(p) = r.get("Resource_List.procs") {
                job.procs = Some(p.to_owned());
            }
            if let Some(n) = r.get("Resource_List.nodeset") {
                job.nodeset = Some(n.to_owned());
            }
            if let Some(w) = r.get("Resource_List.walltime").and_then(duration_s) {
                job.walltime_s = Some(w);
            }
        }
        match r.kind {
            'Q' => self.queued_seen[i] += 1,
            'S' => {
                if let Some(s) = num("start") {
                    job.first_start.get_or_insert(s);
                    job.last_start = Some(s);
                }
                if let Some(x) = r.get("exec_vnode") {
                    job.exec_vnode = Some(x.to_owned());
                } else if let Some(h) = r.get("exec_host") {
                    job.take_exec_host(h);
                }
            }
            'R' => job.requeues += 1,
            'E' => {
                job.end = num("end");
                if let Some(s) = num("start") {
                    job.first_start.get_or_insert(s);
                    job.last_start = Some(s);
                }
                if job.exec_vnode.is_none() && job.bad_exec_host.is_none() {
                    match (r.get("exec_vnode"), r.get("exec_host")) {
                        (Some(x), _) => job.exec_vnode = Some(x.to_owned()),
                        (None, Some(h)) => job.take_exec_host(h),
                        (None, None) => {}
                    }
                }
                job.exit_status = r.get("Exit_status").and_then(|v| v.parse().ok());
            }
            'D' => {
                if job.first_start.is_none() {
                    job.deleted_while_queued = true;
                } else {
                    job.deleted_while_running = true;
                }
            }
            _ => {}
        }
        Some(i)
    }

    /// The jobs, in order of their first record, and the counts.
    pub fn finish(self) -> (Vec<AcctJob>, AcctCounts) {
        let mut counts = self.counts;
        for (i, job) in self.jobs.iter().enumerate() {
            counts.requeued += u64::from(job.requeues > 0);
            counts.routed += u64::from(self.queued_seen[i] > 1);
            counts.array_subjobs += u64::from(job.id.contains('['));
            counts.held_or_dependent += u64::from(job.etime.is_some_and(|e| e > job.ctime));
            counts.deleted_while_queued += u64::from(job.deleted_while_queued);
            counts.deleted_while_running += u64::from(job.deleted_while_running);
            counts.unfinished += u64::from(job.first_start.is_some() && job.end.is_none());
            // A subjob has no Q of its own: its parent's tells its arrival.
            let is_subjob = job.id.contains('[');
            counts.started_before_logs +=
                u64::from(!is_subjob && matches!(self.first_kind[i], 'S' | 'E' | 'R'));
        }
        counts.array_parents = self.parents.len() as u64;
        (self.jobs, counts)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn exec_host_in_each_form_becomes_exec_vnode() {
        for (exec_host, exec_vnode) in [
            ("n01/0-3+n02/0-3", "(n01:ncpus=4)+(n02:ncpus=4)"),
            ("n05/7+n05/6+n05/5+n06/0", "(n05:ncpus=3)+(n06:ncpus=1)"),
            ("n03/0,2-3", "(n03:ncpus=3)"),
            ("c1/0*13+c2/0*13", "(c1:ncpus=13)+(c2:ncpus=13)"),
            ("crhtc65/24", "(crhtc65:ncpus=1)"),
        ] {
            assert_eq!(
                exec_vnode_of_exec_host(exec_host).as_deref(),
                Ok(exec_vnode)
            );
        }
        for bad in ["n01", "/0-3", "n01/3-1", "n01/a", "n01/0*0", "n01/0-3+"] {
            assert_eq!(
                exec_vnode_of_exec_host(bad),
                Err(format!(
                    "exec_host `{bad}`: expected host/cores joined by `+`, such as `n01/0-7+n02/0-7` or `c1/0*13`"
                ))
            );
        }
    }
    use super::*;

    /// Real lines (site-inputs.md §3.6): a PBS Pro 5-node exclusive job's `E`, NCAR Casper's
    /// `E` with a quoted account, and an `S` with `resource_assigned`.
    const XDMOD_E: &str = "01/26/2016 00:00:37;E;2994.pbs;user=anonuser group=anongroup project=_pbs_project_default jobname=anonjob queue=workq ctime=1453756297 qtime=1453756297 etime=1453756297 start=1453766281 exec_host=c1/0*13+c2/0*13+c3/0*13+c4/0*13+c5/0*13 exec_vnode=(c1:ncpus=13)+(c2:ncpus=13)+(c3:ncpus=13)+(c4:ncpus=13)+(c5:ncpus=13) Resource_List.ncpus=65 Resource_List.nodect=5 Resource_List.place=scatter:excl Resource_List.select=5:ncpus=13 Resource_List.walltime=00:02:43 session=17927 end=1453766437 Exit_status=0 resources_used.cpupercent=0 resources_used.cput=00:00:00 resources_used.mem=664kb resources_used.ncpus=65 resources_used.vmem=10704kb resources_used.walltime=00:00:00 run_count=1";
    const CASPER_E: &str = "02/11/2026 20:12:21;E;2281314.casper-pbs;user=vanderwb group=csgteam account=\"SCSG0001\" project=_pbs_project_default jobname=qcmd queue=htc ctime=1770865912 qtime=1770865912 etime=1770865912 start=1770865936 exec_host=crhtc65/24 exec_vnode=(crhtc65:ncpus=1:mem=10485760kb) Resource_List.mem=10gb Resource_List.ncpus=1 Resource_List.place=scatter Resource_List.select=1:ncpus=1:mem=10GB:ompthreads=1 Resource_List.walltime=01:00:00 session=0 end=1770865941 Exit_status=0 eligible_time=00:00:26 run_count=1";

    #[test]
    fn real_lines_give_their_fields() {
        let r = parse_record(XDMOD_E).unwrap();
        assert_eq!((r.kind, r.id.as_str()), ('E', "2994.pbs"));
        assert_eq!(r.get("Resource_List.select"), Some("5:ncpus=13"));
        assert_eq!(r.get("end"), Some("1453766437"));
        let r = parse_record(CASPER_E).unwrap();
        assert_eq!(r.get("account"), Some("SCSG0001"));
        let (jobs, counts) = assemble_jobs(&[
            parse_record(XDMOD_E).unwrap(),
            parse_record(CASPER_E).unwrap(),
        ]);
        let j = &jobs[0];
        assert_eq!(
            (j.ctime, j.first_start, j.end, j.walltime_s),
            (1453756297, Some(1453766281), Some(1453766437), Some(163))
        );
        assert_eq!(j.place.as_deref(), Some("scatter:excl"));
        assert_eq!(
            j.exec_vnode.as_deref(),
            Some("(c1:ncpus=13)+(c2:ncpus=13)+(c3:ncpus=13)+(c4:ncpus=13)+(c5:ncpus=13)")
        );
        assert_eq!(jobs[1].account.as_deref(), Some("SCSG0001"));
        assert_eq!(counts.started_before_logs, 2);
        assert_eq!(counts.records.get("E"), Some(&2));
    }

    /// A value with a space is quoted (PBS quotes `project` and `Resource_List` values only
    /// then), an `A` record's text is words, and a broken line says where.
    #[test]
    fn quotes_words_and_broken_lines() {
        let r = parse_record(
            "01/01/2020 00:00:00;Q;7.s;user=u group=g project=\"two words\" queue=q ctime=5",
        )
        .unwrap();
        assert_eq!(r.get("project"), Some("two words"));
        assert_eq!(r.get("ctime"), Some("5"));
        let r = parse_record("01/01/2020 00:00:00;A;7.s;Job deleted by server").unwrap();
        assert_eq!(
            r.attrs,
            [(String::new(), "Job deleted by server".to_owned())]
        );
        assert_eq!(
            parse_record("01/01/2020 00:00:00;E;7.s")
                .unwrap_err()
                .to_string(),
            "column 26: expected `MM/DD/YYYY hh:mm:ss;<type>;<id>;<text>`: fewer than four `;`-separated fields"
        );
        assert_eq!(
            parse_record("01/01/2020 00:00:00;E;7.s;user=u project=\"open")
                .unwrap_err()
                .to_string(),
            "column 42: the value of `project` opens a quote that does not close"
        );
        assert_eq!(
            parse_record("01/01/2020 00:00:00;EE;7.s;user=u")
                .unwrap_err()
                .to_string(),
            "column 21: expected a one-letter record type, found `EE`"
        );
    }

    /// The quirks of §3.7, each counted: a requeue (R, then a second S: the first start is
    /// kept, the last run's start too), a delete while queued, a delete while running, a
    /// routing queue (a second Q, the job's queue the one it ran in), an array parent and its
    /// subjob, a hold (etime after ctime), and a job still running when the logs end.
    #[test]
    fn quirks_are_counted() {
        let lines = [
            "d;Q;1.s;user=u group=g queue=route ctime=10 etime=10",
            "d;Q;1.s;user=u group=g queue=work ctime=10 etime=12",
            "d;S;1.s;user=u group=g queue=work ctime=10 etime=12 start=20 exec_vnode=(n1:ncpus=1) Resource_List.select=1:ncpus=1 Resource_List.walltime=1:00",
            "d;R;1.s;user=u group=g queue=work ctime=10 start=20 end=30 Exit_status=-11",
            "d;S;1.s;user=u group=g queue=work ctime=10 start=40 exec_vnode=(n2:ncpus=1)",
            "d;E;1.s;user=u group=g queue=work ctime=10 start=40 end=70 Exit_status=0 run_count=2",
            "d;Q;2.s;user=u group=g queue=work ctime=11",
            "d;D;2.s;requestor=u@h",
            "d;Q;3.s;user=u group=g queue=work ctime=12",
            "d;S;3.s;user=u group=g queue=work ctime=12 start=13",
            "d;D;3.s;requestor=u@h",
            "d;E;3.s;user=u group=g queue=work ctime=12 start=13 end=15 Exit_status=271",
            "d;Q;4[].s;user=u group=g queue=work ctime=14 array_indices=1-2",
            "d;S;4[1].s;user=u group=g queue=work ctime=14 start=15",
            "d;E;4[1].s;user=u group=g queue=work ctime=14 start=15 end=16",
            "d;E;4[].s;user=u group=g queue=work ctime=14 end=16",
            "d;S;5.s;user=u group=g queue=work ctime=15 start=16",
        ];
        let records: Vec<AcctRecord> = lines.iter().map(|l| parse_record(l).unwrap()).collect();
        let (jobs, counts) = assemble_jobs(&records);
        let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
        assert_eq!(ids, ["1.s", "2.s", "3.s", "4[1].s", "5.s"]);
        let j1 = &jobs[0];
        assert_eq!(
            (
                j1.queue.as_str(),
                j1.first_start,
                j1.last_start,
                j1.end,
                j1.requeues
            ),
            ("work", Some(20), Some(40), Some(70), 1)
        );
        assert_eq!(j1.exec_vnode.as_deref(), Some("(n2:ncpus=1)"));
        assert_eq!(j1.walltime_s, Some(60));
        assert_eq!(
            counts,
            AcctCounts {
                records: [("Q", 5), ("S", 5), ("R", 1), ("E", 4), ("D", 2)]
                    .map(|(k, n)| (k.to_owned(), n))
                    .into(),
                requeued: 1,
                deleted_while_queued: 1,
                deleted_while_running: 1,
                routed: 1,
                array_subjobs: 1,
                array_parents: 1,
                held_or_dependent: 1,
                unfinished: 1,
                started_before_logs: 1,
            }
        );
    }
}
