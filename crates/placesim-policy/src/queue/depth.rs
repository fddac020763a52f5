//! Backfilling with a reservation depth: the first N jobs that cannot start get a reservation,
//! re-planned from scratch at every pass (PBS `strict_ordering` with `backfill_depth N`, Moab
//! `RESERVATIONDEPTH N` under CURRENTHIGHEST); conservative backfilling is N = every waiting
//! job. The definition is `queue-disciplines.md` §1.3.

use super::calendar::{Calendar, End, allocation_at};
use super::kept::{Holder, Kept, Shared, Unoccupied, View};
use super::{Order, PbsComment, Runnable, calendar_request, reserved, start, start_heads};
use placesim_core::{
    Allocation, ClusterState, ConsumableIdx, Decision, JobId, PlacementPolicy, SchedContext,
    SchedulingPolicy, Scratch, ScratchBuf, SimTime, StateView,
};
use std::ops::ControlFlow;
use std::sync::Arc;

/// How many reservations a pass makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// At most this many (1 is EASY; 0 only beside queues with a depth of their own).
    Jobs(u32),
    /// One for every waiting job that cannot start: conservative backfilling.
    All,
}

impl Depth {
    fn limit(self) -> usize {
        match self {
            Depth::Jobs(n) => n as usize,
            Depth::All => usize::MAX,
        }
    }
}

/// A reservation a pass made: the job, when it would start, and where it would go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The job.
    pub job: JobId,
    /// When it would start: the earliest instant at which it can be placed for its whole
    /// estimate, given the running jobs and the reservations made before it.
    pub start: SimTime,
    /// When it would end: start + estimate.
    pub end: SimTime,
    /// The vnodes it would take, on the vnode form of the pass; `None` when the pass reasoned
    /// on ncpus totals (the vnodes are then any that are free).
    pub allocation: Option<Arc<Allocation>>,
}

/// Backfilling with a reservation depth.
///
/// At each pass:
/// 1. Queue heads start while they fit (a job that can never run is passed over).
/// 2. The profile holds every running job until start + estimate (a job already past its
///    estimate counts as ending now, as EASY counts it).
/// 3. Every later job, in queue order: if it can be placed now without making any reservation
///    of this pass impossible, it starts now; otherwise, while fewer than N reservations have
///    been made, it gets one at the earliest time at which it can be placed for its whole
///    estimate; otherwise it waits. A job that can never run, or that no time fits (a vnode
///    down now that it needs), gets none and does not use one up.
///
/// A reservation's vnodes are not fixed: a job may start on some of them if the reservation
/// can still be placed at its time elsewhere (EASY's rule, which makes N = 1 EASY exactly).
/// Reservations are checked at their start instants, in order of start: at each, everything
/// that holds resources then must fit together, and a reservation that no longer fits where it
/// was is placed again there; if it cannot be, the job that caused it does not start (or the
/// time tried for a new reservation is passed over).
///
/// Two forms, the same decisions:
/// - **on totals**, when the placement says fit is decided by ncpus totals for every job of the
///   pass ([`PlacementPolicy::fits_by_totals`]) and has no set constraints: the profile is a
///   count of free ncpus over time, and vnodes are placed only for the jobs that start;
/// - **on vnodes** otherwise: each reservation keeps the state at its start, and each job that
///   may start is checked against them.
///
/// On a homogeneous cluster of one-ncpu vnodes both are the count-based definition: fixed
/// intervals on identical unit resources can always be given vnodes when the counts allow
/// (interval graphs are perfect), and checking them in start order finds such vnodes.
#[derive(Debug)]
pub struct Backfill<P> {
    placement: P,
    depth: Depth,
    /// Moab HIGHEST: a job that got a reservation keeps one until it runs.
    kept: bool,
    /// Per job: whether it got a reservation in an earlier pass (used when `kept`).
    reserved_before: Vec<bool>,
    /// Per job: whether it holds a reservation of the last pass (the jobs of `planned`).
    planned_now: Vec<bool>,
    /// The jobs flagged in `planned_now`.
    flagged: Vec<JobId>,
    totals_allowed: bool,
    /// Per PBS queue (by index): its own `backfill_depth`, if it has one.
    queue_depths: Vec<Option<u32>>,
    runnable: Runnable,
    now_buf: ScratchBuf,
    /// One view per reservation of the vnode form, kept between passes.
    pool: Vec<Kept>,
    /// The running jobs' allocations the kept views hold, copied once.
    shared: Shared,
    /// The unoccupied cluster the kept views read through to.
    unoccupied: Unoccupied,
    calendar: Calendar,
    profile: Profile,
    /// The reservations of the last pass, in the order they were made.
    planned: Vec<Planned>,
    /// Whether the last pass ran on totals to its end, so that `profile` and `planned` are
    /// what it left (see [`Backfill::carried_over`]).
    carry: bool,
    /// Whether every pass runs by the plain definition ([`Backfill::by_definition`]).
    by_definition: bool,
    /// Whether the plain pass goes without its two shortcuts
    /// ([`Backfill::by_definition_exhaustive`]): it checks every later top job again after a
    /// start or a new top job, not only those the change reaches, and asks the placement at
    /// every instant a top job's search tries, not only where the ncpus free then could take
    /// it.
    exhaustive: bool,
    /// Behind the plain pass's views.
    window_buf: ScratchBuf,
    /// Behind the state at each time a top job's search near site reservations tries.
    shadow_buf: ScratchBuf,
    /// Behind the state at each later top job's start when a start or a new top job is
    /// checked against them: a walk of its own, made while the search's is still under way.
    recheck_buf: ScratchBuf,
}

impl<P: PlacementPolicy> Backfill<P> {
    /// Backfilling with `depth` reservations, placing jobs with `placement`.
    pub fn new(placement: P, depth: Depth) -> Self {
        Backfill {
            placement,
            depth,
            kept: false,
            reserved_before: Vec::new(),
            planned_now: Vec::new(),
            flagged: Vec::new(),
            totals_allowed: true,
            queue_depths: Vec::new(),
            runnable: Runnable::default(),
            now_buf: ScratchBuf::default(),
            pool: Vec::new(),
            shared: Shared::default(),
            unoccupied: Unoccupied::default(),
            calendar: Calendar::new(false),
            profile: Profile::default(),
            planned: Vec::new(),
            carry: false,
            by_definition: false,
            exhaustive: false,
            window_buf: ScratchBuf::default(),
            shadow_buf: ScratchBuf::default(),
            recheck_buf: ScratchBuf::default(),
        }
    }

    /// The same discipline with every pass by its plain definition, on vnodes, without the
    /// totals form, the kept views or the carried-over passes (what runs anyway while site
    /// reservations are to come): the reference the shortcuts are tested against.
    pub fn by_definition(placement: P, depth: Depth) -> Self {
        let mut backfill = Backfill::new(placement, depth);
        backfill.by_definition = true;
        backfill
    }

    /// [`Backfill::by_definition`] without the plain pass's own two shortcuts: after a start
    /// or a new top job it checks every later top job again, where the plain pass checks only
    /// those whose start the change reaches (`recheck`), and a top job's search asks the
    /// placement at every instant it tries, where the plain pass first checks that the ncpus
    /// free then, less the top jobs' holding vnodes then, reach the job's. The reference those
    /// shortcuts are tested against.
    pub fn by_definition_exhaustive(placement: P, depth: Depth) -> Self {
        let mut backfill = Backfill::by_definition(placement, depth);
        backfill.exhaustive = true;
        backfill
    }

    /// The same discipline always on vnodes, never on totals: the reference the totals form
    /// is tested against.
    pub fn on_vnodes(placement: P, depth: Depth) -> Self {
        let mut backfill = Backfill::new(placement, depth);
        backfill.totals_allowed = false;
        backfill
    }

    /// The same discipline under Moab's `RESERVATIONPOLICY HIGHEST`: a job that got a
    /// reservation gets one in every later pass until it runs, whatever the depth; such jobs
    /// count toward the depth when they come first.
    pub fn keeping_reservations(mut self) -> Self {
        self.kept = true;
        self
    }

    /// The same discipline with PBS queues that have a `backfill_depth` of their own
    /// (`queue_depths`, by queue index): a queue's jobs count their top jobs against its
    /// depth, the other jobs against the server's; in a queue of depth 0, nothing after a
    /// job that cannot start starts (its strict order), while the other queues go on.
    pub fn with_queue_depths(mut self, queue_depths: Vec<Option<u32>>) -> Self {
        self.queue_depths = queue_depths;
        self
    }

    /// The reservations the last pass made, in the order it made them.
    pub fn planned(&self) -> &[Planned] {
        &self.planned
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Backfill<P> {
    fn name(&self) -> String {
        match self.depth {
            Depth::Jobs(1) => "easy".to_owned(),
            Depth::Jobs(n) => format!("easy-depth{n}"),
            Depth::All => "conservative".to_owned(),
        }
    }

    super::comments_wakeups_and_checks!();

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.pass(ctx, decisions);
        self.runnable.estimates.extend(self.planned.iter().map(|p| {
            placesim_core::TopJobEstimate {
                job: p.job,
                start: p.start,
                allocation: p
                    .allocation
                    .as_ref()
                    .filter(|_| ctx.estimate_vnodes)
                    .cloned(),
            }
        }));
        self.runnable
            .record_bindings(ctx, &mut self.placement, decisions);
    }
}

/// A reservation of the vnode form while its pass runs.
struct Held {
    job: JobId,
    start: SimTime,
    end: SimTime,
    allocation: Allocation,
    relaxed: bool,
    /// Index into the pass's views: the state at `start` with everything held then except
    /// this reservation and the ones after it in start order.
    state: usize,
}

impl Held {
    fn holder(&self) -> Holder {
        Holder::Reservation(self.job, self.start)
    }
}

/// What a tentative admission changed, to undo it if a reservation cannot be kept.
enum Undo {
    /// Something was taken for this holder in view `.0`.
    Took(usize, Holder),
    /// What this holder held in view `.0` was given back.
    Gave(usize, Holder, Arc<Allocation>),
    /// Reservation `.0` moved from these vnodes.
    Moved(usize, Allocation),
}

impl<P: PlacementPolicy> Backfill<P> {
    fn pass(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        // The view now borrows its buffer for the pass, beside the rest of `self`.
        let mut now_buf = std::mem::take(&mut self.now_buf);
        self.pass_with(ctx, decisions, &mut now_buf);
        self.now_buf = now_buf;
    }

    fn pass_with(
        &mut self,
        ctx: &SchedContext<'_>,
        decisions: &mut Vec<Decision>,
        now_buf: &mut ScratchBuf,
    ) {
        let mut now_view = Scratch::new(ctx.state, now_buf);
        let carry = std::mem::replace(&mut self.carry, false);
        // Deeper backfilling keeps its reservations and their views from pass to pass (and
        // under Moab's `RESERVATIONPOLICY HIGHEST`, which jobs had one): a pass ended early
        // would leave them other than a whole one does, so it never asks an adapter's gate.
        let ctx = &SchedContext {
            start_gate: None,
            ..*ctx
        };
        let Some((head_pos, head_relaxed)) = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            decisions,
            Order::Strict,
        ) else {
            return;
        };
        if head_pos >= ctx.queue.len() {
            self.planned.clear();
            return;
        }
        // A carried-over pass does not know which queues the last one blocked.
        let carry = carry && self.queue_depths.iter().all(Option::is_none);
        if self.by_definition || reserved::needed(ctx, reserved::Reach::AllEstimates) {
            self.pass_by_definition(ctx, head_pos, &mut now_view, decisions);
        } else if carry && self.carried_over(ctx, head_pos, head_relaxed, &now_view, decisions) {
            let from = ctx.fresh_from.max(head_pos + 1);
            self.pass_on_totals(ctx, head_pos, from, &mut now_view, decisions);
            self.carry = true;
        } else {
            self.replan(ctx, head_pos, head_relaxed, &mut now_view, decisions);
        }
        // The flags of the last pass's reservations are cleared as this pass's are set.
        let jobs = ctx.workload.jobs().len();
        if self.planned_now.len() != jobs {
            self.planned_now = vec![false; jobs];
        }
        for &job in &self.flagged {
            self.planned_now[job.index()] = false;
        }
        self.flagged.clear();
        for planned in &self.planned {
            self.planned_now[planned.job.index()] = true;
            self.flagged.push(planned.job);
        }
        if self.kept {
            if self.reserved_before.len() != jobs {
                self.reserved_before = vec![false; jobs];
            }
            for planned in &self.planned {
                self.reserved_before[planned.job.index()] = true;
            }
        }
    }

    /// The pass from scratch after step 1, on totals or on vnodes.
    fn replan(
        &mut self,
        ctx: &SchedContext<'_>,
        head_pos: usize,
        head_relaxed: bool,
        now_view: &mut Scratch<'_>,
        decisions: &mut Vec<Decision>,
    ) {
        self.planned.clear();
        let ends = self.calendar.ends_now(ctx, decisions);
        let free_now = now_view.free_total(ConsumableIdx::NCPUS);
        self.profile.build(ctx.now, free_now, ends);
        let on_totals = self.totals_allowed
            && !head_relaxed
            && self.placement.constraints().is_none()
            && ctx.queue[head_pos..].iter().all(|&job| {
                self.runnable.known_never(ctx, job)
                    || self
                        .placement
                        .fits_by_totals(&calendar_request(ctx.workload.request_of(job)), now_view)
            });
        if on_totals {
            self.pass_on_totals(ctx, head_pos, head_pos, now_view, decisions);
            self.carry = true;
        } else {
            let unoccupied = self.unoccupied.of(ctx.state);
            let mut pass = VnodePass {
                ctx,
                placement: &mut self.placement,
                runnable: &mut self.runnable,
                profile: &mut self.profile,
                planned: &mut self.planned,
                pool: &mut self.pool,
                shared: &mut self.shared,
                ends: ends.to_vec(),
                held: Vec::new(),
                quota: Quota::of(
                    self.depth,
                    &self.queue_depths,
                    self.kept,
                    &self.reserved_before,
                ),
            };
            pass.run(unoccupied, head_pos, head_relaxed, now_view, decisions);
        }
    }

    /// Whether this pass may start from where the last one (on totals) left off, scanning
    /// only the jobs that arrived since: nothing was freed in between (no end, outage or
    /// wake-up), every running job's estimated end is still ahead, the blocked head is an
    /// older job and nothing started ahead of it, and totals still decide for the head and
    /// the new jobs.
    ///
    /// Then the last pass's decisions for the older jobs stand: the running jobs and their
    /// estimated ends are the same, so the profile from now on is the one it left, whose
    /// steps (running ends, and reservations, which start at such ends or at the ends of
    /// other reservations) all lie after now; an older job's window now `[now, now + e)`
    /// covers the one it had (the profile was flat until now) and more, so it fits no better;
    /// and its reservation is again the earliest of the same candidate times. The profile is
    /// trimmed to now, and the reservations are kept.
    fn carried_over(
        &mut self,
        ctx: &SchedContext<'_>,
        head_pos: usize,
        head_relaxed: bool,
        now_view: &Scratch<'_>,
        decisions: &[Decision],
    ) -> bool {
        let usable = !ctx.freed_since_last_pass
            && decisions.is_empty()
            && !head_relaxed
            && head_pos < ctx.fresh_from
            // Every new job comes after every job that holds a reservation (always so in
            // submission order; a sorted queue may put one before): the reservations were made
            // in the order the plain pass would make them.
            && ctx.queue[ctx.fresh_from..]
                .iter()
                .all(|j| !self.planned_now.get(j.index()).copied().unwrap_or(false))
            && ctx.running.iter().all(|r| r.estimated_end > ctx.now)
            && ctx.queue[head_pos..]
                .iter()
                .enumerate()
                .filter(|&(k, _)| k == 0 || head_pos + k >= ctx.fresh_from)
                .all(|(_, &job)| {
                    self.runnable.known_never(ctx, job)
                        || self.placement.fits_by_totals(
                            &calendar_request(ctx.workload.request_of(job)),
                            now_view,
                        )
                });
        if usable {
            self.profile.trim_to(ctx.now);
            debug_assert_eq!(
                self.profile.min_over(ctx.now, SimTime(ctx.now.0 + 1)),
                now_view.free_total(ConsumableIdx::NCPUS),
                "the carried profile must start at what is free now"
            );
        }
        usable
    }

    /// The pass on ncpus totals: the profile is all there is to reserve in. Jobs before
    /// `scan_from` (but the head) are not looked at: a carried-over pass.
    fn pass_on_totals(
        &mut self,
        ctx: &SchedContext<'_>,
        head_pos: usize,
        scan_from: usize,
        now_view: &mut Scratch<'_>,
        decisions: &mut Vec<Decision>,
    ) {
        let mut quota = Quota::of(
            self.depth,
            &self.queue_depths,
            self.kept,
            &self.reserved_before,
        );
        for planned in &self.planned {
            quota.took(ctx, planned.job);
        }
        for (pos, &job) in ctx.queue.iter().enumerate().skip(scan_from) {
            if self.runnable.known_never(ctx, job) {
                continue;
            }
            if quota.blocked(ctx, job) {
                self.runnable.comment(job, PbsComment::StrictOrder);
                continue;
            }
            let need = ctx.workload.ncpus_of(job);
            let estimate = ctx.workload.job(job).estimate;
            let end = ctx.now + estimate;
            // The head was tried in step 1 and did not fit.
            if pos > head_pos && need <= now_view.free_total(ConsumableIdx::NCPUS) {
                // It fits now (totals decide): only the reservations may hold it back.
                if self.profile.min_over(ctx.now, end) < need {
                    self.runnable.comment(job, PbsComment::Conflict);
                } else if let Some(allocation) =
                    self.runnable
                        .place_plain(ctx, &mut self.placement, job, now_view)
                {
                    self.profile.hold(ctx.now, end, need);
                    start(job, allocation, now_view, decisions);
                    continue;
                }
            }
            quota.could_not_start(ctx, job);
            if !quota.allows(ctx, job) {
                // Only starts remain possible (and kept reservations), and no start once
                // nothing is free now.
                if now_view.free_total(ConsumableIdx::NCPUS) == 0 && quota.exhausted() {
                    break;
                }
                continue;
            }
            if !self.runnable.can_ever_run(ctx, &mut self.placement, job) {
                continue;
            }
            if let Some(at) = self.profile.earliest(need, estimate.as_secs()) {
                quota.took(ctx, job);
                self.profile.hold(at, at + estimate, need);
                self.planned.push(Planned {
                    job,
                    start: at,
                    end: at + estimate,
                    allocation: None,
                });
            }
        }
    }
}

/// One pass on vnodes.
struct VnodePass<'p, 'c, P> {
    ctx: &'p SchedContext<'c>,
    placement: &'p mut P,
    runnable: &'p mut Runnable,
    profile: &'p mut Profile,
    planned: &'p mut Vec<Planned>,
    pool: &'p mut Vec<Kept>,
    shared: &'p mut Shared,
    /// Running jobs and this pass's starts by estimated end.
    ends: Vec<End>,
    /// The reservations, in start order (ties in the order they were made).
    held: Vec<Held>,
    quota: Quota<'p>,
}

/// Which jobs may still get a reservation in a pass. PBS counts top jobs per queue for the
/// queues with a `backfill_depth` of their own, and for the server for all other jobs
/// (openpbs `should_backfill_with_job`, queue-disciplines.md §2.3).
struct Quota<'a> {
    /// The server's depth, for jobs of queues without their own.
    limit: usize,
    /// Per PBS queue (by index): its own depth, if it has one.
    queue_limits: &'a [Option<u32>],
    /// The reservations made so far in this pass: the server's count, then one per queue.
    made: Vec<usize>,
    /// Under HIGHEST: per job, whether it got a reservation in an earlier pass.
    kept: Option<&'a [bool]>,
    /// Per queue with a depth of 0: whether one of its jobs could not start in this pass, so
    /// that the queue's later jobs would break its strict order.
    blocked: Vec<bool>,
}

impl<'a> Quota<'a> {
    /// The quota of `depth` (and the queues' own), keeping the reservations of the jobs in
    /// `reserved_before` when `kept` (HIGHEST).
    fn of(
        depth: Depth,
        queue_limits: &'a [Option<u32>],
        kept: bool,
        reserved_before: &'a [bool],
    ) -> Quota<'a> {
        Quota {
            limit: depth.limit(),
            queue_limits,
            made: vec![0; 1 + queue_limits.len()],
            kept: kept.then_some(reserved_before),
            blocked: vec![false; queue_limits.len()],
        }
    }

    /// The queue of `job` if it has a depth of its own, with that depth.
    fn own_queue(&self, ctx: &SchedContext<'_>, job: JobId) -> Option<(usize, u32)> {
        let q = ctx.workload.request_of(job).queue? as usize;
        Some((q, (*self.queue_limits.get(q)?)?))
    }

    /// The count `job`'s reservation goes in, and its limit.
    fn counter(&self, ctx: &SchedContext<'_>, job: JobId) -> (usize, usize) {
        match self.own_queue(ctx, job) {
            Some((q, depth)) => (1 + q, depth as usize),
            None => (0, self.limit),
        }
    }

    /// Whether `job` may get a reservation now.
    fn allows(&self, ctx: &SchedContext<'_>, job: JobId) -> bool {
        let (counter, limit) = self.counter(ctx, job);
        self.made[counter] < limit
            || self
                .kept
                .is_some_and(|kept| kept.get(job.index()) == Some(&true))
    }

    /// Counts a reservation made for `job`.
    fn took(&mut self, ctx: &SchedContext<'_>, job: JobId) {
        let (counter, _) = self.counter(ctx, job);
        self.made[counter] += 1;
    }

    /// Whether no job at all may get a reservation any more.
    fn exhausted(&self) -> bool {
        self.kept.is_none()
            && self.made[0] >= self.limit
            && self
                .queue_limits
                .iter()
                .zip(&self.made[1..])
                .all(|(limit, &made)| limit.is_none_or(|l| made >= l as usize))
    }

    /// The most reservations a pass over `waiting` jobs can make.
    fn most(&self, waiting: usize) -> usize {
        if self.kept.is_some() {
            return waiting;
        }
        let queues: usize = self
            .queue_limits
            .iter()
            .flatten()
            .map(|&d| d as usize)
            .sum();
        self.limit.saturating_add(queues).min(waiting)
    }

    /// Whether `job` is in a queue of depth 0 where an earlier job could not start: it would
    /// break the queue's strict order.
    fn blocked(&self, ctx: &SchedContext<'_>, job: JobId) -> bool {
        self.own_queue(ctx, job)
            .is_some_and(|(q, depth)| depth == 0 && self.blocked[q])
    }

    /// Notes that `job` could not start: in a queue of depth 0, the jobs after it wait.
    fn could_not_start(&mut self, ctx: &SchedContext<'_>, job: JobId) {
        if let Some((q, 0)) = self.own_queue(ctx, job) {
            self.blocked[q] = true;
        }
    }
}

impl<P: PlacementPolicy> VnodePass<'_, '_, P> {
    fn run(
        &mut self,
        unoccupied: (&ClusterState, u64),
        head_pos: usize,
        head_relaxed: bool,
        now_view: &mut Scratch<'_>,
        decisions: &mut Vec<Decision>,
    ) {
        let ctx = self.ctx;
        // Each reservation's view is kept between passes, the k-th made in a pass in the k-th
        // of the pool: the next pass's k-th reservation is usually the same job at the same
        // time, whose view then needs only what changed. A view is opened only when a
        // reservation is tried in it.
        let most = self.quota.most(ctx.queue.len() - head_pos);
        if self.pool.len() < most {
            self.pool.resize_with(most, Kept::default);
        }
        let mut pool = std::mem::take(self.pool);
        let mut states: Vec<View<'_>> = Vec::new();
        let mut unused = pool[..most].iter_mut();
        let mut spare: Option<View<'_>> = None;
        for (pos, &job) in ctx.queue.iter().enumerate().skip(head_pos) {
            if self.runnable.known_never(ctx, job) {
                continue;
            }
            if self.quota.blocked(ctx, job) {
                self.runnable.comment(job, PbsComment::StrictOrder);
                continue;
            }
            let need = ctx.workload.ncpus_of(job);
            let estimate = ctx.workload.job(job).estimate;
            let end = ctx.now + estimate;
            let mut relaxed = if pos == head_pos {
                head_relaxed
            } else {
                self.runnable.erased(job)
            };
            // The head was tried in step 1 and did not fit.
            if pos > head_pos
                && need <= now_view.free_total(ConsumableIdx::NCPUS)
                && self.profile.min_over(ctx.now, end) >= need
            {
                let placed =
                    self.runnable
                        .place_now(ctx, self.placement, job, now_view, decisions, false);
                relaxed = placed.relaxed;
                if let Some(allocation) = placed.allocation {
                    let holder = Holder::Job(job, ctx.now);
                    if !self.admit(&mut states, None, ctx.now, end, holder, &allocation) {
                        self.runnable.comment(job, PbsComment::Conflict);
                    } else {
                        self.profile.hold(ctx.now, end, need);
                        let index = ctx.running.len() + decisions.len();
                        let slot = self.ends.partition_point(|e| e.0 <= end);
                        self.ends.insert(slot, (end, job, index, need));
                        start(job, allocation, now_view, decisions);
                        continue;
                    }
                }
            }
            self.quota.could_not_start(ctx, job);
            if !self.quota.allows(ctx, job) {
                if now_view.free_total(ConsumableIdx::NCPUS) == 0 && self.quota.exhausted() {
                    break;
                }
                continue;
            }
            if !self.runnable.can_ever_run(ctx, self.placement, job) {
                continue;
            }
            let mut state = match spare.take() {
                Some(state) => state,
                None => {
                    let Some(kept) = unused.next() else {
                        continue;
                    };
                    View::open(unoccupied.0, unoccupied.1, kept)
                }
            };
            match self.reserve(&mut states, job, relaxed, decisions, &mut state) {
                Some((at, allocation)) => {
                    self.quota.took(ctx, job);
                    self.profile.hold(at, at + estimate, need);
                    let slot = self.held.partition_point(|h| h.start <= at);
                    self.held.insert(
                        slot,
                        Held {
                            job,
                            start: at,
                            end: at + estimate,
                            allocation,
                            relaxed,
                            state: states.len(),
                        },
                    );
                    states.push(state);
                }
                None => spare = Some(state),
            }
        }
        // In the order they were made (their states were made in that order).
        let mut made = std::mem::take(&mut self.held);
        made.sort_by_key(|h| h.state);
        self.planned.extend(made.into_iter().map(|h| Planned {
            job: h.job,
            start: h.start,
            end: h.end,
            allocation: Some(Arc::new(h.allocation)),
        }));
        // The views borrow the pool until here (their last use above).
        *self.pool = pool;
        self.shared.prune();
    }

    /// The earliest time at which `job` can be placed for its whole estimate, given the
    /// profile, and its vnodes then; `state` ends as the state at that time, without the job.
    fn reserve<'s>(
        &mut self,
        states: &mut [View<'s>],
        job: JobId,
        relaxed: bool,
        decisions: &[Decision],
        state: &mut View<'s>,
    ) -> Option<(SimTime, Allocation)> {
        let ctx = self.ctx;
        let need = ctx.workload.ncpus_of(job);
        let estimate = ctx.workload.job(job).estimate;
        let request = calendar_request(ctx.workload.request_of(job));
        // The instants at which the state changes: running jobs and this pass's starts end,
        // reservations start and end.
        let mut changes: Vec<(SimTime, Change)> = Vec::new();
        for (k, e) in self.ends.iter().enumerate() {
            changes.push((e.0, Change::End(k)));
        }
        for (k, h) in self.held.iter().enumerate() {
            changes.push((h.start, Change::ReservationStart(k)));
            changes.push((h.end, Change::ReservationEnd(k)));
        }
        // At one instant, what ends is given back before what starts is taken.
        changes.sort_unstable_by_key(|&(t, c)| (t, c.rank()));
        let mut times: Vec<SimTime> = vec![ctx.now];
        times.extend(
            changes
                .iter()
                .filter(|(t, c)| *t > ctx.now && !matches!(c, Change::ReservationStart(_)))
                .map(|&(t, _)| t),
        );
        times.dedup();
        // The view is brought to the first time worth placing at by what differs from what it
        // held, then moved forward change by change.
        let mut next: Option<usize> = None;
        for at in times {
            if self.profile.min_over(at, at + estimate) < need {
                continue;
            }
            match next {
                None => {
                    let desired = held_at(ctx, &self.ends, &self.held, at, decisions);
                    state.sync(self.shared, &desired);
                    next = Some(changes.partition_point(|c| c.0 <= at));
                }
                Some(ref mut next) => {
                    while let Some(&(t, change)) = changes.get(*next) {
                        if t > at {
                            break;
                        }
                        match change {
                            Change::End(k) => {
                                state.give(end_holder(ctx, &self.ends[k]));
                            }
                            Change::ReservationStart(k) => {
                                let h = &self.held[k];
                                state.take(self.shared, h.holder(), &h.allocation);
                            }
                            Change::ReservationEnd(k) => {
                                state.give(self.held[k].holder());
                            }
                        }
                        *next += 1;
                    }
                }
            }
            let Some(allocation) = state.place(self.placement, job, &request, relaxed) else {
                continue;
            };
            let holder = Holder::Reservation(job, at);
            if self.admit(states, Some(at), at, at + estimate, holder, &allocation) {
                return Some((at, allocation));
            }
        }
        None
    }

    /// Whether an allocation held over `[start, end)` by `holder` leaves every reservation
    /// placeable at its time; if so, its effect is kept (taken in the views of the
    /// reservations it overlaps, and any reservation that had to move moved), else everything
    /// is undone. `new_at` is the start of a new reservation being tried (placed after the
    /// reservations that start no later), `None` for a job starting now (placed before all of
    /// them).
    fn admit(
        &mut self,
        states: &mut [View<'_>],
        new_at: Option<SimTime>,
        start: SimTime,
        end: SimTime,
        holder: Holder,
        allocation: &Allocation,
    ) -> bool {
        let ctx = self.ctx;
        let first = match new_at {
            Some(at) => self.held.partition_point(|h| h.start <= at),
            None => 0,
        };
        let mut undo: Vec<Undo> = Vec::new();
        // Reservations this admission moved.
        let mut moved: Vec<usize> = Vec::new();
        let mut ok = true;
        for r in first..self.held.len() {
            let at = self.held[r].start;
            let s = self.held[r].state;
            // The moved reservations that hold vnodes then leave their old vnodes before
            // anything is taken: the new allocation may lie on them.
            let active_moved: Vec<usize> = moved
                .iter()
                .copied()
                .filter(|&m| {
                    let h = &self.held[m];
                    h.start <= at && at < h.end
                })
                .collect();
            for &m in &active_moved {
                let was = self.held[m].holder();
                if let Some(old) = states[s].give(was) {
                    undo.push(Undo::Gave(s, was, old));
                }
            }
            let overlaps = start <= at && at < end;
            if overlaps {
                states[s].take(self.shared, holder, allocation);
                undo.push(Undo::Took(s, holder));
            }
            for &m in &active_moved {
                let h = &self.held[m];
                states[s].take(self.shared, h.holder(), &h.allocation);
                undo.push(Undo::Took(s, h.holder()));
            }
            let changed = overlaps || !active_moved.is_empty();
            if !changed {
                continue;
            }
            let h = &self.held[r];
            // The view had room for the reservation before this admission: it was placed
            // there, and every change to the view since was checked here. If only `allocation`
            // was taken, only the reservation's parts on its vnodes need asking again.
            let room = if active_moved.is_empty() {
                states[s]
                    .scratch
                    .has_room_after_taking(&h.allocation, allocation)
            } else {
                states[s].scratch.has_room_for(&h.allocation)
            };
            if room {
                continue;
            }
            let (job, relaxed) = (h.job, h.relaxed);
            let request = calendar_request(ctx.workload.request_of(job));
            let Some(elsewhere) = states[s].place(self.placement, job, &request, relaxed) else {
                ok = false;
                break;
            };
            let old = std::mem::replace(&mut self.held[r].allocation, elsewhere);
            undo.push(Undo::Moved(r, old));
            moved.push(r);
        }
        if !ok {
            for step in undo.into_iter().rev() {
                match step {
                    Undo::Took(s, holder) => {
                        states[s].give(holder);
                    }
                    Undo::Gave(s, holder, a) => states[s].take(self.shared, holder, &a),
                    Undo::Moved(r, old) => self.held[r].allocation = old,
                }
            }
        }
        ok
    }
}

/// The holder of entry `e` of the ends list: a running job from its start, or a job this pass
/// starts, from now.
fn end_holder(ctx: &SchedContext<'_>, e: &End) -> Holder {
    let start = ctx.running.get(e.2).map_or(ctx.now, |r| r.start);
    Holder::Job(e.1, start)
}

/// What holds resources at `at` in a pass: the running jobs and the pass's starts (`ends`)
/// that end after it, and the reservations made so far (`held`) in force then; sorted by
/// holder.
fn held_at<'d>(
    ctx: &'d SchedContext<'_>,
    ends: &[End],
    held: &'d [Held],
    at: SimTime,
    decisions: &'d [Decision],
) -> Vec<(Holder, &'d Allocation)> {
    let first = ends.partition_point(|e| e.0 <= at);
    let mut desired: Vec<(Holder, &Allocation)> = ends[first..]
        .iter()
        .map(|e| (end_holder(ctx, e), allocation_at(ctx, decisions, e.2)))
        .chain(
            held.iter()
                .filter(|h| h.start <= at && at < h.end)
                .map(|h| (h.holder(), &h.allocation)),
        )
        .collect();
    desired.sort_unstable_by_key(|(h, _)| *h);
    desired
}

/// A change of the state at an instant, for the reservation walk.
#[derive(Debug, Clone, Copy)]
enum Change {
    /// Entry of the ends list.
    End(usize),
    /// Reservation (by index in start order) begins.
    ReservationStart(usize),
    /// Reservation ends.
    ReservationEnd(usize),
}

impl Change {
    fn rank(self) -> u8 {
        match self {
            Change::End(_) | Change::ReservationEnd(_) => 0,
            Change::ReservationStart(_) => 1,
        }
    }
}

/// Free ncpus over time, as steps: `steps[i].1` are free from `steps[i].0` until the next
/// step's time (the last for ever). Built from the running jobs' estimated ends; reservations
/// and this pass's starts are held in it.
#[derive(Debug, Default)]
struct Profile {
    steps: Vec<(SimTime, u64)>,
}

impl Profile {
    /// Free ncpus `free_now` now, and each entry of `ends` (sorted) given back at its time.
    fn build(&mut self, now: SimTime, free_now: u64, ends: &[End]) {
        self.steps.clear();
        self.steps.push((now, free_now));
        let mut free = free_now;
        for &(t, _, _, ncpus) in ends {
            let t = t.max(now);
            free += ncpus;
            match self.steps.last_mut() {
                Some(last) if last.0 == t => last.1 = free,
                _ => self.steps.push((t, free)),
            }
        }
    }

    /// The index of the step in force at `t`.
    fn at(&self, t: SimTime) -> usize {
        self.steps.partition_point(|s| s.0 <= t).saturating_sub(1)
    }

    /// The fewest ncpus free at any instant of `[from, to)`.
    fn min_over(&self, from: SimTime, to: SimTime) -> u64 {
        let mut least = u64::MAX;
        for &(t, free) in &self.steps[self.at(from)..] {
            if t >= to && t > from {
                break;
            }
            least = least.min(free);
        }
        least
    }

    /// The earliest step time at which `need` ncpus are free for `duration_s` seconds.
    fn earliest(&self, need: u64, duration_s: u64) -> Option<SimTime> {
        let mut i = 0;
        'candidates: while i < self.steps.len() {
            let t = self.steps[i].0;
            let until = SimTime(t.0.saturating_add(duration_s));
            let mut j = i;
            while j < self.steps.len() && (j == i || self.steps[j].0 < until) {
                if self.steps[j].1 < need {
                    i = j + 1;
                    continue 'candidates;
                }
                j += 1;
            }
            return Some(t);
        }
        None
    }

    /// Drops what lies before `now`: the step in force then starts now.
    fn trim_to(&mut self, now: SimTime) {
        let first = self.at(now);
        self.steps.drain(..first);
        if let Some(step) = self.steps.first_mut() {
            step.0 = step.0.max(now);
        }
    }

    /// Takes `need` ncpus over `[from, to)`: only the steps there are visited (the steps are
    /// in time order), where every step was, and conservative backfilling holds a window for
    /// every waiting job at every pass.
    ///
    /// One search finds where the window starts; its end is where the walk over it stops
    /// (three searches of the steps were a fifth of conservative backfilling on CTC-SP2).
    fn hold(&mut self, from: SimTime, to: SimTime, need: u64) {
        debug_assert!(from <= to, "a window ends before it starts");
        let mut j = self.split(from);
        let first = j;
        while j < self.steps.len() && self.steps[j].0 < to {
            self.steps[j].1 -= need;
            j += 1;
        }
        // The window ends at a step boundary too: the last step it took from goes on after it
        // with what it had before.
        if j > first && self.steps.get(j).is_none_or(|s| s.0 != to) {
            let free = self.steps[j - 1].1 + need;
            self.steps.insert(j, (to, free));
        }
    }

    /// Makes `t` a step boundary; returns the index of the first step at or after `t`.
    fn split(&mut self, t: SimTime) -> usize {
        let i = self.steps.partition_point(|s| s.0 <= t);
        if i == 0 {
            return 0;
        }
        if self.steps[i - 1].0 != t {
            let free = self.steps[i - 1].1;
            self.steps.insert(i, (t, free));
            return i;
        }
        i - 1
    }
}

/// A top job's reservation in the plain pass ([`Backfill::pass_by_definition`]).
struct Top {
    job: JobId,
    start: SimTime,
    end: SimTime,
    allocation: Allocation,
    /// The order reservations were made in.
    made: usize,
}

impl<P: PlacementPolicy> Backfill<P> {
    /// The pass after step 1 by the plain definition (queue-disciplines.md §1.3), on vnodes,
    /// with every job and reservation kept off the site's reservations ([`reserved`]): what
    /// runs while site reservations are to come, and the reference the pass's shortcuts are
    /// tested against ([`Backfill::by_definition`]).
    ///
    /// A later job starts now if it fits its window now and every reservation of the pass
    /// still fits at its start, on its vnodes or others (each checked in start order in the
    /// state then: what runs, the site's reservations open then, and the pass's reservations
    /// before it); otherwise, within the quota, it gets a reservation at the first instant
    /// (now, an estimated end, the end of a reservation) at which it fits its window and
    /// leaves every later reservation placeable, as in the optimised pass.
    fn pass_by_definition(
        &mut self,
        ctx: &SchedContext<'_>,
        head_pos: usize,
        now_view: &mut Scratch<'_>,
        decisions: &mut Vec<Decision>,
    ) {
        self.planned.clear();
        let mut quota = Quota::of(
            self.depth,
            &self.queue_depths,
            self.kept,
            &self.reserved_before,
        );
        let mut tops: Vec<Top> = Vec::new();
        let mut made = 0;
        let mut buf = std::mem::take(&mut self.window_buf);
        // The instants a top job's search tries, in order: now, what runs gives back (the
        // running jobs' and this pass's starts' estimated ends, and the site reservations'
        // ends) and the top jobs' ends. Kept as the pass starts jobs and places top jobs,
        // where each search sorted them all again.
        let mut instants = reserved::release_times(ctx, decisions);
        instants.insert(0, ctx.now);
        let add_instant = |instants: &mut Vec<SimTime>, t: SimTime| {
            if let Err(at) = instants.binary_search(&t) {
                instants.insert(at, t);
            }
        };
        for (pos, &job) in ctx.queue.iter().enumerate().skip(head_pos) {
            if self.runnable.known_never(ctx, job) {
                continue;
            }
            if quota.blocked(ctx, job) {
                self.runnable.comment(job, PbsComment::StrictOrder);
                continue;
            }
            let estimate = ctx.workload.job(job).estimate;
            // The head was tried in step 1 and did not fit.
            if pos > head_pos {
                let placed = self.runnable.place_now_kept_off(
                    ctx,
                    &mut self.placement,
                    job,
                    now_view,
                    decisions,
                    false,
                );
                if let Some(allocation) = placed.allocation {
                    start(job, allocation, now_view, decisions);
                    now_view.settle();
                    match recheck(
                        &mut self.placement,
                        ctx,
                        decisions,
                        now_view,
                        &tops,
                        0,
                        // It is in the state now whatever its estimate: a top job starting
                        // now sees it even if it ends at once.
                        (!self.exhaustive).then(|| {
                            (ctx.now + estimate).max(SimTime(ctx.now.as_secs().saturating_add(1)))
                        }),
                        (&mut buf, &mut self.recheck_buf),
                    ) {
                        Some(moves) => {
                            for (r, a) in moves {
                                tops[r].allocation = a;
                            }
                            add_instant(&mut instants, ctx.now + estimate);
                            continue;
                        }
                        None => {
                            if let Some(Decision::Start { allocation, .. }) = decisions.pop() {
                                now_view.give(&allocation);
                            }
                            self.runnable.comment(job, PbsComment::Conflict);
                        }
                    }
                } else if placed.conflict {
                    self.runnable.comment(job, PbsComment::Conflict);
                }
            }
            quota.could_not_start(ctx, job);
            if !quota.allows(ctx, job) || !self.runnable.can_ever_run(ctx, &mut self.placement, job)
            {
                continue;
            }
            let request = calendar_request(ctx.workload.request_of(job));
            now_view.settle();
            let now_view = &*now_view;
            let placement = &mut self.placement;
            let exhaustive = self.exhaustive;
            // The ncpus each top job holds, and the job's: at an instant where the ncpus free,
            // less those of the top jobs holding vnodes then, fall short of the job's, no
            // placement can take it (the top jobs' holds are taken from that state first), and
            // most instants of a long plan are such.
            let ncpus = ConsumableIdx::NCPUS;
            let n_cons = ctx.state.cluster_consumables();
            let top_ncpus: Vec<(SimTime, SimTime, u64)> = tops
                .iter()
                .map(|t| (t.start, t.end, t.allocation.total(n_cons, ncpus)))
                .collect();
            let need = request.total(ncpus);
            // Where this job's reservation ends, and the tops that must move for it, where it
            // found one.
            let moves = reserved::first_at_states(
                ctx,
                decisions,
                now_view,
                &instants,
                &mut self.shadow_buf,
                |at, state| {
                    if !exhaustive {
                        let held: u64 = top_ncpus
                            .iter()
                            .filter(|&&(start, end, _)| start <= at && at < end)
                            .map(|&(_, _, n)| n)
                            .sum();
                        if state.free_total(ncpus) < held.saturating_add(need) {
                            return ControlFlow::Continue(());
                        }
                    }
                    let Some(allocation) = reserved::place_on_state_at(
                        ctx,
                        decisions,
                        Some(job),
                        state,
                        at,
                        at + estimate,
                        &mut buf,
                        tops.iter().map(|t| (t.start, t.end, &t.allocation)),
                        |view| placement.place(&request, view),
                    ) else {
                        return ControlFlow::Continue(());
                    };
                    let slot = tops.partition_point(|t| t.start <= at);
                    tops.insert(
                        slot,
                        Top {
                            job,
                            start: at,
                            end: at + estimate,
                            allocation,
                            made,
                        },
                    );
                    let checked = recheck(
                        placement,
                        ctx,
                        decisions,
                        now_view,
                        &tops,
                        slot + 1,
                        (!exhaustive).then_some(at + estimate),
                        (&mut buf, &mut self.recheck_buf),
                    );
                    match checked {
                        Some(moves) => ControlFlow::Break((at + estimate, moves)),
                        None => {
                            tops.remove(slot);
                            ControlFlow::Continue(())
                        }
                    }
                },
            );
            if let Some((end, moves)) = moves {
                for (r, a) in moves {
                    tops[r].allocation = a;
                }
                add_instant(&mut instants, end);
                quota.took(ctx, job);
                made += 1;
            }
        }
        self.window_buf = buf;
        tops.sort_by_key(|t| t.made);
        self.planned = tops
            .into_iter()
            .map(|t| Planned {
                job: t.job,
                start: t.start,
                end: t.end,
                allocation: Some(Arc::new(t.allocation)),
            })
            .collect();
    }
}

/// Whether every reservation of `tops` from `from` on still fits at its start, each in the
/// state then with the reservations before it and kept off the site's reservations; the ones
/// that must move, with where `placement` puts them. `tops` are in start order, so the states
/// at their starts are walked one from the next ([`reserved::first_at_states`]); `bufs` back
/// each one's window and the walk.
///
/// `reach`: when the change that calls for the check (a job started now, or a top job before
/// `from` placed) holds vnodes only until then, a top job starting at or after the latest of
/// that and the ends of the top jobs moved before it sees the state it was placed in (what
/// ends by its start is given back by then, and its window reads only what holds vnodes past
/// its start), so it keeps its vnodes, as would each after it: the check ends there. `None`
/// checks every one.
#[allow(clippy::too_many_arguments)]
fn recheck<P: PlacementPolicy>(
    placement: &mut P,
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    now_view: &Scratch<'_>,
    tops: &[Top],
    from: usize,
    reach: Option<SimTime>,
    (buf, base_buf): (&mut ScratchBuf, &mut ScratchBuf),
) -> Option<Vec<(usize, Allocation)>> {
    // The tops moved so far, with where to: the others hold their own vnodes.
    let mut moves: Vec<(usize, Allocation)> = Vec::new();
    let starts: Vec<SimTime> = tops[from..].iter().map(|t| t.start).collect();
    let mut r = from;
    let mut reach = reach;
    let stuck =
        reserved::first_at_states(ctx, decisions, now_view, &starts, base_buf, |at, state| {
            if reach.is_some_and(|until| at >= until) {
                return ControlFlow::Break(false);
            }
            let request = calendar_request(ctx.workload.request_of(tops[r].job));
            let kept = &tops[r].allocation;
            let Some(placed) = reserved::place_on_state_at(
                ctx,
                decisions,
                Some(tops[r].job),
                state,
                at,
                tops[r].end,
                buf,
                tops[..r].iter().enumerate().map(|(k, t)| {
                    let held = moves.iter().find(|(m, _)| *m == k).map(|(_, a)| a);
                    (t.start, t.end, held.unwrap_or(&t.allocation))
                }),
                |view| {
                    if view.has_room_for(kept) {
                        Some(kept.clone())
                    } else {
                        placement.place(&request, view)
                    }
                },
            ) else {
                return ControlFlow::Break(true);
            };
            if placed != *kept {
                reach = reach.map(|until| until.max(tops[r].end));
                moves.push((r, placed));
            }
            r += 1;
            ControlFlow::Continue(())
        });
    (stuck != Some(true)).then_some(moves)
}

#[cfg(test)]
mod tests {
    use super::*;
    use placesim_core::SimDuration;

    /// The step profile's hold by its definition: both ends made boundaries, then every step
    /// of the window less `need`.
    fn hold_by_definition(steps: &mut Vec<(SimTime, u64)>, from: SimTime, to: SimTime, need: u64) {
        for t in [from, to] {
            let i = steps.partition_point(|s| s.0 <= t);
            if i > 0 && steps[i - 1].0 != t {
                let free = steps[i - 1].1;
                steps.insert(i, (t, free));
            }
        }
        for step in steps.iter_mut().filter(|s| s.0 >= from && s.0 < to) {
            step.1 -= need;
        }
    }

    /// Windows held on random profiles, as conservative backfilling holds them (from `now`
    /// or a step's time, where `earliest` finds room), and windows ending on, between and
    /// past the steps, or where they start: the same steps as by the definition.
    #[test]
    fn holding_a_window_gives_the_steps_of_its_definition() {
        let mut rng = placesim_testkit::Lcg(7);
        for _ in 0..2000 {
            let now = SimTime(rng.below(50));
            let mut ends = Vec::new();
            let mut t = now.0;
            for _ in 0..rng.below(8) {
                t += rng.below(20);
                ends.push((SimTime(t), JobId(0), 0, 1 + rng.below(4)));
            }
            let free_now = rng.below(4);
            let mut profile = Profile::default();
            profile.build(now, free_now, &ends);
            let mut expected = profile.steps.clone();
            for _ in 0..rng.below(6) {
                let need = 1 + rng.below(3);
                let duration = rng.below(40);
                let from = match rng.below(3) {
                    0 => Some(now),
                    1 => Some(profile.steps[rng.below(profile.steps.len() as u64) as usize].0),
                    _ => profile.earliest(need, duration),
                };
                let Some(from) = from else { continue };
                // Only a window with room is held.
                if profile.min_over(from, from + SimDuration(duration)) < need {
                    continue;
                }
                let to = from + SimDuration(duration);
                profile.hold(from, to, need);
                hold_by_definition(&mut expected, from, to, need);
                assert_eq!(
                    profile.steps, expected,
                    "hold of {need} over [{from:?}, {to:?})"
                );
            }
        }
    }
}
