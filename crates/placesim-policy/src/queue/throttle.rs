//! Maui/Moab throttling limits (queue-disciplines.md §3.4; Maui's docs
//! `6.2throttlingpolicies.rst`, `MJob.c` `MJobCheckLimits`, `MPolicy.c`
//! `MPolicyCheckLimit`, `MSched.c` `MSchedProcessJobs`): `USERCFG`, `GROUPCFG`,
//! `ACCOUNTCFG` and `CLASSCFG` `MAXJOB`, `MAXPROC` and `MAXPS`, each `[<soft>,]<hard>`.
//!
//! Maui checks a job's limits against what its credentials' active jobs hold at that moment,
//! those started earlier in the same iteration included, and a job over a limit is skipped:
//! it neither starts nor gets a reservation, so it blocks nobody. The jobs within their soft
//! limits are scheduled first (started, reserved, backfilled); the jobs within only their hard
//! limits come after all of them, "scheduled and/or reserved as available resources allow"
//! (the throttling documentation). [`Throttled`] does this around any discipline, which sees
//! the jobs within soft limits, in order, then those within only hard limits.

use super::moab_fairshare::{CREDENTIALS, MoabCredential, credential_name};
use placesim_core::{
    Decision, JobId, RunningLog, SchedContext, SchedulingPolicy, StartGate, TopJobEstimate,
    Workload,
};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

/// A kind of throttling limit, in the order Maui checks them (`MJobCheckLimits`' `PList`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitKind {
    /// `MAXJOB`: jobs active at once.
    MaxJob,
    /// `MAXPROC`: processors (ncpus) their active jobs hold.
    MaxProc,
    /// `MAXPS`: outstanding processor-seconds: each active job's ncpus times what is left of
    /// its walltime, a job about to start counting its whole walltime.
    MaxPs,
}

/// The limit kinds in the order they are checked.
pub const LIMIT_KINDS: [LimitKind; 3] = [LimitKind::MaxJob, LimitKind::MaxProc, LimitKind::MaxPs];

impl LimitKind {
    /// Maui's name for it (`MPolicyType`).
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::MaxJob => "MAXJOB",
            LimitKind::MaxProc => "MAXPROC",
            LimitKind::MaxPs => "MAXPS",
        }
    }
}

/// One limit: its soft and hard values. Maui sets the soft one to the hard one when it is
/// not given or is less constraining, so `soft <= hard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftHard {
    /// Checked while the jobs within their soft limits are scheduled.
    pub soft: u64,
    /// Checked for the jobs scheduled after them.
    pub hard: u64,
}

impl SoftHard {
    /// `soft` and `hard`, the soft one no looser than the hard one (Maui's rule).
    pub fn new(soft: u64, hard: u64) -> Self {
        SoftHard {
            soft: soft.min(hard),
            hard,
        }
    }
}

/// The limits of one credential: per [`LIMIT_KINDS`] entry, its value if it has one.
pub type CredentialLimits = [Option<SoftHard>; 3];

/// Moab's throttling limits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MoabLimits {
    /// Per credential kind (in [`CREDENTIALS`] order): the limits by name, `DEFAULT` for each
    /// kind of limit a credential does not set itself (`MPolicyCheckLimit`'s precedence).
    pub limits: [HashMap<String, CredentialLimits>; 4],
    /// The Moab classes' names, by the index a request's `class` holds.
    pub class_names: Vec<String>,
}

/// Which limits a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Level {
    Soft,
    Hard,
}

/// Why a job is over a limit, in the terms of Maui's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Violation {
    level: Level,
    credential: u8,
    kind: u8,
    limit: u64,
    requested: u64,
    used: u64,
}

/// A message made for a violation.
type Told = (Violation, Arc<str>);

/// No credential of that kind.
const NONE: u32 = u32::MAX;

/// A discipline that skips the jobs over Moab's throttling limits (see the module's text).
#[derive(Debug)]
pub struct Throttled<S> {
    inner: S,
    settings: Arc<MoabLimits>,
    /// Interned credentials: (kind, name) → id.
    ids: HashMap<(usize, String), u32>,
    /// Per credential kind, for users and groups: the id of each number found so far, at
    /// the number, so that a job's is found without its name.
    by_number: [super::ByNumber; 4],
    /// Per credential id: its kind, name and limits (its own, else its kind's `DEFAULT`).
    credentials: Vec<(usize, String, CredentialLimits)>,
    /// Per job: its credentials' ids, once known.
    of_job: Vec<Option<[u32; 4]>>,
    /// Per job, once its credentials are known: whether every limit they have is the same at
    /// both levels, so that a job over its soft limits is over its hard ones for the same
    /// reason (the common form, a single value).
    levels_alike: Vec<bool>,
    /// Per credential id: what its active jobs hold, per limit kind.
    usage: Vec<[u64; 3]>,
    /// The credential ids the running jobs counted against at the last pass: the only ones
    /// whose usage is not zero before the next (when `usage` is counted anew at each pass).
    held: Vec<u32>,
    /// Whether some credential has a MAXPS limit, whose usage shrinks as time passes: `usage`
    /// is then counted anew at each pass. Otherwise it is kept between passes, and a pass
    /// counts only the running jobs that started or ended since the last.
    by_time: bool,
    /// The running list as `usage` counts it, by position, when it is kept between passes.
    counted: Vec<Option<JobId>>,
    /// Where the kernel's log of the running list stood when `counted` was brought up to
    /// date; `None` when `usage` is not kept.
    counted_mark: Option<placesim_core::LogMark>,
    /// Per job: the last violation it was told of, so that a reason is said once.
    told: Vec<Option<Violation>>,
    /// What `told` held before this pass changed it, in the order of the changes: a pass an
    /// outer adapter takes back ([`SchedulingPolicy::retract_pass`]) had its messages dropped,
    /// so the run after it must say them again.
    told_before: Vec<(JobId, Option<Violation>)>,
    /// Per job held back and level (soft, hard): the last message made for it, and for which
    /// violation. A job held back goes from one level's message to the other's as the jobs
    /// before it start and end, and is told the same texts again and again: they are made
    /// once (making them was a tenth of a run's instructions under a binding `MAXJOB`). A
    /// map, as most jobs are never held back: a slot for every job was 128 bytes each. It is
    /// looked up at every message told: foldhash rather than SipHash, and a job's texts leave
    /// it when the job starts, so that it holds the waiting jobs' only.
    texts: HashMap<(JobId, Level), Told, foldhash::fast::FixedState>,
    comments: Vec<(JobId, Arc<str>)>,
    estimates: Vec<TopJobEstimate>,
    /// Whether the last pass left every job where the discipline alone would have had it, so
    /// that the discipline's shortcuts for the next pass hold.
    last_untouched: bool,
    /// Whether the last pass ran the discipline more than once.
    last_reran: bool,
    /// The queue the discipline's pass that stood was given at the last pass.
    last_queue: Vec<JobId>,
    /// The jobs the last pass started, sorted: of the last queue, those no longer waiting.
    last_started: Vec<JobId>,
    /// Per job, within a trial: whether it is in the hard part.
    in_hard: Vec<bool>,
    /// Whether the pass takes its two shortcuts: a trial ends before the first start over a
    /// limit ([`LimitGate`]), rather than placing every job behind it before that start is
    /// found; and a job whose check at the last pass still holds is taken as it was found,
    /// held back or within its soft limits, without checking it again ([`Self::verdict_kept`]).
    /// False for the plain definition ([`Throttled::without_shortcuts`]).
    takes_shortcuts: bool,
    /// How many trials the gate ended early.
    trials_ended_early: u64,
    /// The lists a pass builds and drops, kept so that their memory serves every pass; boxed,
    /// so that a pass takes them out and puts them back as a pointer rather than copying
    /// nine lists' headers in and out (a copy at every pass under a binding `MAXJOB`).
    spare: Option<Box<Spare>>,
    /// Passes so far, this one included: what `usage_changed_at` and `held_at` count in.
    passes: u64,
    /// Per credential id, when `usage` is kept between passes: the last pass at whose start
    /// what it holds changed.
    usage_changed_at: Vec<u64>,
    /// The last pass at whose start `usage` was counted anew (any credential may have
    /// changed then).
    usage_counted_at: u64,
    /// Per job: the last pass at whose start it was checked against its limits, and what the
    /// check found ([`Verdict::stamp`]; 0: none). Held back at the last pass, with none of
    /// its credentials' holdings changed since, a job is over the same limit by the same
    /// amounts now, and was told so; within its soft limits then, it is within them now. The
    /// pass takes either verdict again without checking the job. Under a binding `MAXJOB`
    /// most of the queue is held back at most passes, and the rest within its limits.
    verdict_at: Vec<u64>,
    /// How many times a pass passed over a job so held.
    held_jobs_passed_over: u64,
    /// How many times a pass took a job as within its soft limits, as at the last pass,
    /// without checking it.
    within_jobs_taken_unchecked: u64,
}

/// The lists of a pass, between passes (empty).
#[derive(Debug, Default)]
struct Spare {
    undo: Vec<(u32, [u64; 3])>,
    soft: Vec<JobId>,
    hard: Vec<JobId>,
    queue: Vec<JobId>,
    run: Vec<Decision>,
    started: Vec<JobId>,
    reserved: Vec<JobId>,
    /// Per job of the soft and the hard part: whether it waited when the last pass ended.
    soft_waited: Vec<bool>,
    hard_waited: Vec<bool>,
}

impl<S: SchedulingPolicy> Throttled<S> {
    /// `inner`, under `settings`.
    pub fn new(inner: S, settings: Arc<MoabLimits>) -> Self {
        let by_time = settings.limits.iter().any(|table| {
            table.values().any(|limits| {
                limits
                    .iter()
                    .zip(LIMIT_KINDS)
                    .any(|(l, k)| k == LimitKind::MaxPs && l.is_some())
            })
        });
        Throttled {
            inner,
            settings,
            ids: HashMap::new(),
            by_number: Default::default(),
            credentials: Vec::new(),
            of_job: Vec::new(),
            levels_alike: Vec::new(),
            usage: Vec::new(),
            held: Vec::new(),
            by_time,
            counted: Vec::new(),
            counted_mark: None,
            told: Vec::new(),
            told_before: Vec::new(),
            texts: HashMap::default(),
            comments: Vec::new(),
            estimates: Vec::new(),
            last_untouched: false,
            last_reran: false,
            last_queue: Vec::new(),
            last_started: Vec::new(),
            in_hard: Vec::new(),
            takes_shortcuts: true,
            trials_ended_early: 0,
            spare: Some(Box::default()),
            passes: 0,
            usage_changed_at: Vec::new(),
            usage_counted_at: 0,
            verdict_at: Vec::new(),
            held_jobs_passed_over: 0,
            within_jobs_taken_unchecked: 0,
        }
    }

    /// `inner` under `settings` by the plain definition: each trial run to its end before
    /// its starts are checked, and every waiting job checked against its limits at every
    /// pass, where [`Throttled::new`] ends a trial at the first start over a limit and
    /// takes a job as its check at the last pass found it, held back for the same reason or
    /// within its soft limits, when that check still holds. The reference
    /// the shortcuts are tested against; the same decisions and comments, only slower.
    pub fn without_shortcuts(inner: S, settings: Arc<MoabLimits>) -> Self {
        Throttled {
            takes_shortcuts: false,
            ..Throttled::new(inner, settings)
        }
    }

    /// How many times so far a pass passed over a job held back for the same reason as at
    /// the last pass, rather than checking it again ([`Throttled::without_shortcuts`] never
    /// does).
    pub fn held_jobs_passed_over(&self) -> u64 {
        self.held_jobs_passed_over
    }

    /// How many times so far a pass took a job as within its soft limits because it was at
    /// the last pass and nothing it counts against changed since, rather than checking it
    /// again ([`Throttled::without_shortcuts`] never does).
    pub fn within_jobs_taken_unchecked(&self) -> u64 {
        self.within_jobs_taken_unchecked
    }

    /// How many trials so far ended before a queue head's start over a limit, rather than
    /// running whole ([`Throttled::without_shortcuts`] ends none).
    pub fn trials_ended_early(&self) -> u64 {
        self.trials_ended_early
    }

    /// The ids of `job`'s credentials ([`NONE`] for one it lacks, or that has no limit: what
    /// such a credential's jobs hold is checked against nothing, so it is not counted, and
    /// every check skips it).
    fn credentials_of(&mut self, workload: &Workload, job: JobId) -> [u32; 4] {
        if let Some(ids) = self.of_job[job.index()] {
            return ids;
        }
        let mut ids = [NONE; 4];
        for (k, kind) in CREDENTIALS.into_iter().enumerate() {
            if self.settings.limits[k].is_empty() {
                continue;
            }
            // A user or group is found by its number, without writing its name out.
            let number = match kind {
                MoabCredential::User => workload.job(job).user(),
                MoabCredential::Group => workload.job(job).group(),
                _ => None,
            }
            .map(|n| n as usize);
            let id = match number.and_then(|n| self.by_number[k].get(n)) {
                Some(id) => id,
                None => {
                    let Some(id) = self.intern(workload, job, k, kind) else {
                        continue;
                    };
                    if let Some(n) = number {
                        self.by_number[k].keep(n, id);
                    }
                    id
                }
            };
            if self.credentials[id as usize].2.iter().any(Option::is_some) {
                ids[k] = id;
            }
        }
        self.of_job[job.index()] = Some(ids);
        self.levels_alike[job.index()] = ids.iter().filter(|&&id| id != NONE).all(|&id| {
            self.credentials[id as usize]
                .2
                .iter()
                .flatten()
                .all(|l| l.soft == l.hard)
        });
        ids
    }

    /// The id of `job`'s credential of `kind` (the `k`th), interned by name with its limits
    /// the first time; `None` when the job has none of that kind.
    fn intern(
        &mut self,
        workload: &Workload,
        job: JobId,
        k: usize,
        kind: MoabCredential,
    ) -> Option<u32> {
        let name = credential_name(workload, job, kind, &self.settings.class_names)?;
        let next = self.credentials.len() as u32;
        let id = *self.ids.entry((k, name.clone())).or_insert(next);
        if id == next {
            let table = &self.settings.limits[k];
            let own = table.get(&name).copied().unwrap_or_default();
            let default = table.get("DEFAULT").copied().unwrap_or_default();
            let limits: CredentialLimits = std::array::from_fn(|l| own[l].or(default[l]));
            self.credentials.push((k, name, limits));
            self.usage.push([0; 3]);
            self.usage_changed_at.push(0);
        }
        Some(id)
    }

    /// The first limit `job` would go over at `level` if it started with `usage` held
    /// (`MJobCheckLimits`' order: user, group, account, class; MAXJOB, MAXPROC, MAXPS).
    fn violation(
        &self,
        workload: &Workload,
        job: JobId,
        usage: &[[u64; 3]],
        level: Level,
    ) -> Option<Violation> {
        let ids = self.of_job[job.index()]?;
        violation_of(&self.credentials, ids, workload, job, level, |id| {
            usage[id as usize]
        })
    }

    /// Maui's message for `v` (`MJobCheckLimits`), told once per reason.
    fn tell(&mut self, workload: &Workload, job: JobId, v: Violation) {
        if self.told[job.index()] == Some(v) {
            return;
        }
        self.set_told(job, Some(v));
        let text = match self.texts.get(&(job, v.level)) {
            Some((made_for, text)) if *made_for == v => text.clone(),
            _ => {
                let text = self.message(workload, job, v);
                self.texts.insert((job, v.level), (v, text.clone()));
                text
            }
        };
        self.comments.push((job, text));
        self.inner.comment_superseded(job);
    }

    /// Sets what `job` was last told of, remembering what it was for a retraction.
    #[inline]
    fn set_told(&mut self, job: JobId, told: Option<Violation>) {
        let before = std::mem::replace(&mut self.told[job.index()], told);
        if before != told {
            self.told_before.push((job, before));
        }
    }

    /// Maui's message for `v` about `job`.
    fn message(&self, workload: &Workload, job: JobId, v: Violation) -> Arc<str> {
        let ids = self.of_job[job.index()].unwrap_or([NONE; 4]);
        let name = self
            .credentials
            .get(ids[usize::from(v.credential)] as usize)
            .map_or("NONE", |c| c.1.as_str());
        let object = ["user", "group", "acct", "class"][usize::from(v.credential)];
        let level = match v.level {
            Level::Soft => "SOFT",
            Level::Hard => "HARD",
        };
        // Maui's text, with its double space (an empty multi-dimension credential).
        let text = format!(
            "job {} violates active {level} {} limit of {} for {object} {name}  (R: {}, U: {})",
            workload.job(job).source_id,
            LIMIT_KINDS[usize::from(v.kind)].name(),
            v.limit,
            v.requested,
            v.used
        );
        Arc::from(text)
    }

    /// Walks `part` in order, counting in `usage` the jobs the pass `started` (each entry's
    /// value before pushed on `undo`): the first job it started or `reserved` that is over a
    /// limit at `level` with the jobs before it counted, and why (the jobs before it are
    /// counted in `usage` then).
    #[allow(clippy::too_many_arguments)]
    fn first_over(
        &self,
        workload: &Workload,
        part: &[JobId],
        level: Level,
        usage: &mut [[u64; 3]],
        undo: &mut Vec<(u32, [u64; 3])>,
        started: &[JobId],
        reserved: &[JobId],
    ) -> Option<(usize, Violation)> {
        for (i, &j) in part.iter().enumerate() {
            let is_started = started.contains(&j);
            if is_started || reserved.contains(&j) {
                if let Some(v) = self.violation(workload, j, usage, level) {
                    return Some((i, v));
                }
            }
            if is_started {
                add(
                    usage,
                    self.of_job[j.index()].unwrap_or([NONE; 4]),
                    draw_of(workload, j),
                    Some(undo),
                );
            }
        }
        None
    }

    /// How many jobs at the head of `queue` (the pass's first queue) the discipline saw last
    /// time, in the same order, as the first of its queue then that still wait, each of them
    /// waiting when the last pass ended and every later job new since (`waited`: per job of
    /// `queue`, whether it did, as far as `ctx` tells); `None` otherwise. Its conclusions
    /// about those jobs then hold as they would with no limits, so its shortcuts may be
    /// taken. A job of the last queue that no longer waits, but for those the last pass
    /// started, ends the count: rare (a job deleted), it costs only the shortcuts.
    fn seen_before(&self, queue: &[JobId], waited: &[bool]) -> Option<usize> {
        let mut seen = 0;
        for &j in &self.last_queue {
            if self.last_started.binary_search(&j).is_ok() {
                continue;
            }
            if queue.get(seen) != Some(&j) {
                return None;
            }
            seen += 1;
        }
        let (before, after) = waited.split_at(seen);
        (before.iter().all(|&w| w) && !after.iter().any(|&w| w)).then_some(seen)
    }

    /// What credentials `ids` hold changed at the start of this pass.
    fn note_changed(&mut self, ids: [u32; 4]) {
        for id in ids.into_iter().filter(|&id| id != NONE) {
            self.usage_changed_at[id as usize] = self.passes;
        }
    }

    /// What `job`'s check at the last pass found, if it holds now: none of its credentials'
    /// holdings changed since, as counted between passes, and nothing else was said of it
    /// since. A job held back then is held back now for the same reason, which it was told;
    /// one within its soft limits then is within them now.
    fn verdict_kept(&self, job: JobId) -> Option<Verdict> {
        let stamp = self.verdict_at[job.index()];
        let (checked_at, verdict) = Verdict::of_stamp(stamp)?;
        (self.takes_shortcuts
            && checked_at + 1 == self.passes
            && self.usage_counted_at < self.passes
            && self.of_job[job.index()].is_some_and(|ids| {
                ids.iter()
                    .all(|&id| id == NONE || self.usage_changed_at[id as usize] < self.passes)
            }))
        .then_some(verdict)
    }

    /// Records what `job`'s check at this pass found.
    fn keep_verdict(&mut self, job: JobId, verdict: Verdict) {
        self.verdict_at[job.index()] = verdict.stamp(self.passes);
    }

    /// What each credential's active jobs hold at the start of the pass. Without MAXPS
    /// limits, what they held at the last pass, with the jobs that started or ended since
    /// counted in or out (found from the kernel's log of the running list); else, or when
    /// the log does not reach back, counted anew.
    fn usage_at_start(&mut self, ctx: &SchedContext<'_>) {
        let changed = match (ctx.running_log, self.counted_mark) {
            (Some(log), Some(mark)) => log.since(mark),
            _ => None,
        };
        if let Some(positions) = changed {
            for &p in positions {
                let p = p as usize;
                let now = ctx.running.get(p).map(|r| r.job);
                let before = self.counted.get(p).copied().flatten();
                // A position may be logged more than once: it is counted again once.
                if now == before {
                    continue;
                }
                if let Some(gone) = before {
                    let ids = self.credentials_of(ctx.workload, gone);
                    sub(&mut self.usage, ids, running_draw(ctx.workload, gone));
                    self.note_changed(ids);
                }
                if let Some(came) = now {
                    let ids = self.credentials_of(ctx.workload, came);
                    add(&mut self.usage, ids, running_draw(ctx.workload, came), None);
                    self.note_changed(ids);
                }
                if self.counted.len() <= p {
                    self.counted.resize(p + 1, None);
                }
                self.counted[p] = now;
            }
            self.counted.truncate(ctx.running.len());
            self.counted_mark = ctx.running_log.map(RunningLog::mark);
            #[cfg(debug_assertions)]
            {
                // What counting anew would give.
                let mut anew = vec![[0; 3]; self.usage.len()];
                for r in ctx.running {
                    let ids = self.of_job[r.job.index()].unwrap_or([NONE; 4]);
                    add(&mut anew, ids, running_draw(ctx.workload, r.job), None);
                }
                debug_assert_eq!(anew, self.usage, "usage kept between passes drifted");
            }
            return;
        }
        self.usage_counted_at = self.passes;
        if self.counted_mark.take().is_some() {
            // Kept between passes until now: any credential may hold something.
            self.usage.fill([0; 3]);
            self.held.clear();
        }
        // Most credentials have nothing running: only those that had are cleared.
        for id in self.held.drain(..) {
            self.usage[id as usize] = [0; 3];
        }
        for r in ctx.running {
            let ids = self.credentials_of(ctx.workload, r.job);
            let held = if self.by_time {
                let ncpus = ctx.workload.ncpus_of(r.job);
                let left_s = r.estimated_end.as_secs().saturating_sub(ctx.now.as_secs());
                [1, ncpus, ncpus.saturating_mul(left_s)]
            } else {
                running_draw(ctx.workload, r.job)
            };
            add(&mut self.usage, ids, held, None);
            self.held.extend(ids.into_iter().filter(|&id| id != NONE));
        }
        if !self.by_time {
            self.counted.clear();
            self.counted.extend(ctx.running.iter().map(|r| Some(r.job)));
            self.counted_mark = ctx.running_log.map(RunningLog::mark);
        }
    }
}

/// What a job's check against its limits at the start of a pass found, where the next pass
/// may take it again ([`Throttled::verdict_kept`]). A job over its soft limits but within its
/// hard ones is always checked again: its telling needs the violation itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Over a hard limit, and held back, told why.
    Held,
    /// Within its soft limits.
    Within,
}

impl Verdict {
    /// The verdict found at pass `pass` (from 1), kept in one number: the pass, then the
    /// verdict as its lowest bit, so that reading it back is one load per job.
    fn stamp(self, pass: u64) -> u64 {
        pass << 1 | u64::from(self == Verdict::Within)
    }

    /// The pass and verdict of a [`Verdict::stamp`]; `None` for 0, no verdict.
    fn of_stamp(stamp: u64) -> Option<(u64, Verdict)> {
        let verdict = if stamp & 1 == 1 {
            Verdict::Within
        } else {
            Verdict::Held
        };
        (stamp != 0).then_some((stamp >> 1, verdict))
    }
}

/// The first limit `job` (its credentials `ids`) would go over at `level` if it started
/// with its credentials holding what `held` says (per credential id, per limit kind), in
/// `MJobCheckLimits`' order: user, group, account, class; MAXJOB, MAXPROC, MAXPS.
fn violation_of(
    credentials: &[(usize, String, CredentialLimits)],
    ids: [u32; 4],
    workload: &Workload,
    job: JobId,
    level: Level,
    held: impl Fn(u32) -> [u64; 3],
) -> Option<Violation> {
    for (credential, &id) in ids.iter().enumerate() {
        if id == NONE {
            continue;
        }
        let limits = &credentials[id as usize].2;
        let mut usage = None;
        for (kind, limit) in limits.iter().enumerate() {
            let Some(limit) = limit else { continue };
            let limit = match level {
                Level::Soft => limit.soft,
                Level::Hard => limit.hard,
            };
            // A limit of 0 is none (`MPolicyCheckLimit`).
            if limit == 0 {
                continue;
            }
            let used = usage.get_or_insert_with(|| held(id))[kind];
            let requested = draw_of_kind(workload, job, kind);
            if used.saturating_add(requested) > limit {
                return Some(Violation {
                    level,
                    credential: credential as u8,
                    kind: kind as u8,
                    limit,
                    requested,
                    used,
                });
            }
        }
    }
    None
}

/// Ends a trial before the first queue head it would start over a limit ([`StartGate`]).
/// The heads start in queue order with nothing calendared before them, so that start is the
/// first one over a limit in its part that [`Throttled::first_over`] would find once the
/// trial had run to its end: the pass is run again either way, and every job behind it
/// would have been placed for nothing.
#[derive(Debug)]
struct LimitGate<'t> {
    workload: &'t Workload,
    credentials: &'t [(usize, String, CredentialLimits)],
    of_job: &'t [Option<[u32; 4]>],
    /// What each credential's active jobs hold at the start of the pass.
    usage: &'t [[u64; 3]],
    /// Per job: whether it is in the hard part (checked at the hard level).
    in_hard: &'t [bool],
    /// The job the trial ended before.
    stopped: Cell<Option<JobId>>,
}

impl StartGate for LimitGate<'_> {
    fn stops_before(&self, job: JobId, decisions: &[Decision]) -> bool {
        let Some(ids) = self.of_job.get(job.index()).copied().flatten() else {
            return false;
        };
        let level = if self.in_hard.get(job.index()).copied().unwrap_or(false) {
            Level::Hard
        } else {
            Level::Soft
        };
        // A credential holds what it held at the start, and what the trial's starts that
        // share it draw (as `first_over` counts them).
        let held = |id: u32| {
            let mut held = self.usage[id as usize];
            for Decision::Start { job: started, .. } in decisions {
                if self.of_job[started.index()].is_some_and(|theirs| theirs.contains(&id)) {
                    let draw = draw_of(self.workload, *started);
                    for (h, d) in held.iter_mut().zip(draw) {
                        *h = h.saturating_add(d);
                    }
                }
            }
            held
        };
        let over = violation_of(self.credentials, ids, self.workload, job, level, held).is_some();
        if over {
            self.stopped.set(Some(job));
        }
        over
    }
}

/// What a running job holds of its credentials' limits when no credential has a MAXPS
/// limit: itself and its ncpus (its processor-seconds left are read by no limit).
fn running_draw(workload: &Workload, job: JobId) -> [u64; 3] {
    [1, workload.ncpus_of(job), 0]
}

/// Takes back what [`add`] added for a job with credentials `ids`.
fn sub(usage: &mut [[u64; 3]], ids: [u32; 4], amounts: [u64; 3]) {
    for id in ids.into_iter().filter(|&id| id != NONE) {
        let u = &mut usage[id as usize];
        for k in 0..3 {
            u[k] = u[k].saturating_sub(amounts[k]);
        }
    }
}

/// What `job` adds to its credentials' usage when it starts.
fn draw_of(workload: &Workload, job: JobId) -> [u64; 3] {
    std::array::from_fn(|kind| draw_of_kind(workload, job, kind))
}

/// What `job` adds to its credentials' usage of the limit kind `kind` ([`LIMIT_KINDS`]) when
/// it starts: asked alone where a check reads one kind, as most jobs' credentials limit
/// only the count of jobs, which needs nothing of the job.
fn draw_of_kind(workload: &Workload, job: JobId, kind: usize) -> u64 {
    match LIMIT_KINDS.get(kind) {
        Some(LimitKind::MaxJob) => 1,
        Some(LimitKind::MaxProc) => workload.ncpus_of(job),
        Some(LimitKind::MaxPs) => workload
            .ncpus_of(job)
            .saturating_mul(workload.job(job).estimate.as_secs()),
        None => 0,
    }
}

/// Restores what [`add`] logged in `undo` (emptied), latest first.
fn take_back(usage: &mut [[u64; 3]], undo: &mut Vec<(u32, [u64; 3])>) {
    for (id, before) in undo.drain(..).rev() {
        usage[id as usize] = before;
    }
}

fn add(
    usage: &mut [[u64; 3]],
    ids: [u32; 4],
    amounts: [u64; 3],
    mut undo: Option<&mut Vec<(u32, [u64; 3])>>,
) {
    for id in ids.into_iter().filter(|&id| id != NONE) {
        if let Some(undo) = undo.as_deref_mut() {
            undo.push((id, usage[id as usize]));
        }
        let u = &mut usage[id as usize];
        for k in 0..3 {
            u[k] = u[k].saturating_add(amounts[k]);
        }
    }
}

impl<S: SchedulingPolicy> SchedulingPolicy for Throttled<S> {
    fn name(&self) -> String {
        self.inner.name()
    }

    /// The discipline's pass over the jobs within their soft limits, then those within only
    /// their hard limits. A job the pass starts or reserves that is over a limit once the
    /// jobs before it that started are counted is taken out (a job over its soft limit goes
    /// to the hard part), with every later job of its part that is over already, and the pass
    /// is run again: a job's fate depends only on the jobs ahead of it, so the jobs before it
    /// come out the same, and it ends as Maui's skip of that job.
    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let n = ctx.workload.jobs().len();
        if self.of_job.len() != n {
            self.of_job = vec![None; n];
            self.levels_alike = vec![false; n];
            self.told = vec![None; n];
            self.verdict_at = vec![0; n];
        }
        self.passes += 1;
        self.told_before.clear();
        // Every waiting job, not only those new since the last pass: an adapter outside may
        // have kept a job from the last pass (a job under PBS's formula threshold).
        for &j in ctx.queue {
            // Found once per job.
            if self.of_job[j.index()].is_none() {
                self.credentials_of(ctx.workload, j);
            }
        }
        self.usage_at_start(ctx);
        // Taken out for the pass (the checks below borrow `self` while reading it), and put
        // back at the end, so that its memory serves the next pass.
        let mut usage = std::mem::take(&mut self.usage);
        // What a trial's starts changed in `usage`, to take back before the next: cheaper
        // than a copy per trial when there are many credentials.
        let mut spare = self.spare.take().unwrap_or_default();
        let Spare {
            undo,
            soft,
            hard,
            queue,
            run,
            started,
            reserved,
            soft_waited,
            hard_waited,
        } = &mut *spare;
        // Per job given to the discipline, in each part: whether it waited when the last
        // pass ended.
        let before = ctx.fresh_from.min(ctx.queue.len());
        for (i, &j) in ctx.queue.iter().enumerate() {
            let soft_violation = match self.verdict_kept(j) {
                Some(Verdict::Held) => {
                    self.keep_verdict(j, Verdict::Held);
                    self.held_jobs_passed_over += 1;
                    continue;
                }
                Some(Verdict::Within) => {
                    self.within_jobs_taken_unchecked += 1;
                    None
                }
                None => self.violation(ctx.workload, j, &usage, Level::Soft),
            };
            match soft_violation {
                None => {
                    self.keep_verdict(j, Verdict::Within);
                    // Within its limits again: a later violation is news. Most jobs were
                    // told nothing: asked first, as a write at each costs more (ctc-maxjob
                    // +14 M instructions without the check).
                    if self.told[j.index()].is_some() {
                        self.set_told(j, None);
                    }
                    soft.push(j);
                    soft_waited.push(i < before);
                }
                Some(v) => {
                    let over_hard = if self.levels_alike[j.index()] {
                        Some(Violation {
                            level: Level::Hard,
                            ..v
                        })
                    } else {
                        self.violation(ctx.workload, j, &usage, Level::Hard)
                    };
                    match over_hard {
                        None => {
                            hard.push(j);
                            hard_waited.push(i < before);
                        }
                        Some(h) => {
                            self.tell(ctx.workload, j, h);
                            self.keep_verdict(j, Verdict::Held);
                            continue;
                        }
                    }
                    self.tell(ctx.workload, j, v);
                }
            }
        }
        let mut untouched = hard.is_empty() && soft.len() == ctx.queue.len();
        // What the discipline is given: the soft part, then the hard part (made again when a
        // trial moves a job).
        queue.extend(soft.iter().chain(&*hard));
        // The discipline's shortcuts hold when it is given what it would have been given with
        // no limits since its last pass, or the queue it saw then, as it stands now.
        let mut shortcuts = if untouched && self.last_untouched {
            Some((ctx.fresh_from, ctx.freed_since_last_pass))
        } else if self.last_reran {
            None
        } else {
            soft_waited.append(hard_waited);
            self.seen_before(queue, soft_waited)
                .map(|seen| (seen, ctx.freed_since_last_pass))
        };
        let mut reran = false;
        let mut discarded = Vec::new();
        if self.in_hard.len() != n {
            self.in_hard = vec![false; n];
        }
        loop {
            // The gate reads what the credentials hold at the start of the pass.
            take_back(&mut usage, undo);
            for &j in &*hard {
                self.in_hard[j.index()] = true;
            }
            let gate = LimitGate {
                workload: ctx.workload,
                credentials: &self.credentials,
                of_job: &self.of_job,
                usage: &usage,
                in_hard: &self.in_hard,
                stopped: Cell::new(None),
            };
            super::trial_pass(
                &mut self.inner,
                ctx,
                &*queue,
                shortcuts.take(),
                self.takes_shortcuts.then_some(&gate as &dyn StartGate),
                run,
                &mut self.estimates,
            );
            // The job the trial ended before counts as started: it is the first start over
            // a limit, as the whole trial would have found.
            let stopped = gate.stopped.get();
            self.trials_ended_early += u64::from(stopped.is_some());
            started.clear();
            started.extend(
                run.iter()
                    .map(|Decision::Start { job, .. }| *job)
                    .chain(stopped),
            );
            for &j in &*hard {
                self.in_hard[j.index()] = false;
            }
            reserved.clear();
            reserved.extend(self.estimates.iter().map(|e| e.job));
            let mut changed = false;
            // The soft part: a job over its soft limit now goes to the hard part, with every
            // later one over it already.
            if let Some((i, v)) = self.first_over(
                ctx.workload,
                &*soft,
                Level::Soft,
                &mut usage,
                undo,
                &*started,
                &*reserved,
            ) {
                self.tell(ctx.workload, soft[i], v);
                hard.push(soft[i]);
                for k in soft.split_off(i).into_iter().skip(1) {
                    match self.violation(ctx.workload, k, &usage, Level::Soft) {
                        None => soft.push(k),
                        Some(v) => {
                            self.tell(ctx.workload, k, v);
                            hard.push(k);
                        }
                    }
                }
                // Back in queue order: the queue's jobs that are in the hard part.
                for &k in &*hard {
                    self.in_hard[k.index()] = true;
                }
                hard.clear();
                hard.extend(ctx.queue.iter().filter(|k| self.in_hard[k.index()]));
                for &k in &*hard {
                    self.in_hard[k.index()] = false;
                }
                changed = true;
            }
            // The hard part: a job over its hard limit now is skipped, with every later one
            // over it already.
            if !changed {
                if let Some((i, v)) = self.first_over(
                    ctx.workload,
                    &*hard,
                    Level::Hard,
                    &mut usage,
                    undo,
                    &*started,
                    &*reserved,
                ) {
                    self.tell(ctx.workload, hard[i], v);
                    for k in hard.split_off(i).into_iter().skip(1) {
                        match self.violation(ctx.workload, k, &usage, Level::Hard) {
                            None => hard.push(k),
                            Some(v) => self.tell(ctx.workload, k, v),
                        }
                    }
                    changed = true;
                }
            }
            if !changed {
                debug_assert!(stopped.is_none(), "a trial the gate ended must not stand");
                break;
            }
            untouched = false;
            reran = true;
            super::drop_trial(&mut self.inner, &mut discarded);
            queue.clear();
            queue.extend(soft.iter().chain(&*hard));
        }
        take_back(&mut usage, undo);
        self.usage = usage;
        self.last_untouched = untouched;
        self.last_reran = reran;
        // The last queue is kept for the next pass, and the list it was made of serves again.
        std::mem::swap(&mut self.last_queue, queue);
        self.last_started.clear();
        self.last_started
            .extend(run.iter().map(|Decision::Start { job, .. }| *job));
        self.last_started.sort_unstable();
        // A job that started is told nothing more, so its texts go: the table holds the
        // waiting jobs' only and stays small enough to be found in the cache (a start an
        // outer adapter takes back leaves a job whose texts are made again if it is told).
        if !self.texts.is_empty() {
            for &job in &self.last_started {
                for level in [Level::Soft, Level::Hard] {
                    self.texts.remove(&(job, level));
                }
            }
        }
        decisions.append(run);
        for list in [soft, hard, queue, started, reserved] {
            list.clear();
        }
        soft_waited.clear();
        hard_waited.clear();
        self.spare = Some(spare);
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        out.append(&mut self.comments);
        self.inner.drain_comments(out);
    }

    fn comment_superseded(&mut self, job: JobId) {
        if let Some(told) = self.told.get_mut(job.index()) {
            *told = None;
        }
        // Told something else: held back again, it is told why again.
        if let Some(stamp) = self.verdict_at.get_mut(job.index()) {
            *stamp = 0;
        }
        self.inner.comment_superseded(job);
    }

    fn drain_estimates(&mut self, out: &mut Vec<TopJobEstimate>) {
        out.append(&mut self.estimates);
        self.inner.drain_estimates(out);
    }

    /// Forgets the pass: its comments and estimates, what its jobs were told (their messages
    /// went with its comments), and its number, so that the run after it counts as this pass.
    fn retract_pass(&mut self) {
        self.comments.clear();
        self.estimates.clear();
        for (job, before) in self.told_before.drain(..).rev() {
            self.told[job.index()] = before;
        }
        self.passes = self.passes.saturating_sub(1);
        self.inner.retract_pass();
    }

    super::pass_on_to_inner!(drain_priorities, passes_when_idle, wakeup, check_start);
}
