//! The order of the queue as PBS sorts it (queue-disciplines.md §2.2): queues by descending
//! priority with `by_queue` (interleaved within a priority with `round_robin`), then the
//! `job_sort_key` lines in order, then submission order. Every discipline walks the queue in
//! the order given to it, so this is an adapter around any of them: [`Ordered`].

use super::fairshare::{Fairshare, FairshareSettings};
use super::formula::{Formula, TermValues};
use super::moab_fairshare::{MoabCredentials, MoabFairshare, MoabFairshareSettings};
use placesim_core::{
    ConsumableIdx, Decision, JobId, SchedContext, SchedulingPolicy, SimTime, TopJobEstimate,
    Workload,
};
use std::sync::Arc;

/// What one `job_sort_key` line sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// The job's requested total of a consumable resource (`ncpus`, `mem`, ...).
    Resource(ConsumableIdx),
    /// The job's requested walltime (its estimate).
    Walltime,
    /// The job's own priority (`job_priority`; 0 when it has none).
    JobPriority,
    /// `fair_share_perc`: the share of the machine the fairshare tree gives the job's entity
    /// (`tree_percentage`). It can change as entities join the `unknown` group, so a queue
    /// with this key is sorted at every pass.
    FairsharePerc,
}

/// One `job_sort_key` line: a key, and whether higher values go first (`HIGH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortLine {
    /// The key.
    pub key: SortKey,
    /// `HIGH`: descending; `LOW`: ascending.
    pub high_first: bool,
}

/// PBS's job order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobOrder {
    /// `job_sort_key` lines, applied in order.
    pub keys: Vec<SortLine>,
    /// `by_queue`: queues are visited by descending priority (queues of one priority in file
    /// order, the default queue last), each queue's jobs together.
    pub by_queue: bool,
    /// `round_robin`: queues of the same priority take turns, one job each.
    pub round_robin: bool,
    /// Per PBS queue (by index): its priority. Jobs in no listed queue are in the default
    /// queue, of priority 0, which comes after the listed queues of its priority.
    pub queue_priority: Vec<i64>,
    /// `job_sort_formula`: higher values first, after the queues and before the sort keys.
    pub formula: Option<Arc<Formula>>,
    /// `job_sort_formula_threshold`: a job whose formula value is at or below it is not run.
    pub threshold: Option<f64>,
    /// The fairshare tree and its usage, kept when the queue is ordered by fairshare
    /// (`by_fairshare`) or the formula reads it.
    pub fairshare: Option<Arc<FairshareSettings>>,
    /// `fair_share`: the more deserving entity first, after the formula and before the sort
    /// keys.
    pub by_fairshare: bool,
    /// Moab's fairshare, which Moab's priority (the formula) reads.
    pub moab_fairshare: Option<Arc<MoabFairshareSettings>>,
    /// Moab's credential priorities, which Moab's priority reads.
    pub moab_credentials: Option<Arc<MoabCredentials>>,
    /// Per run limit (the state's): whether a job over it is not eligible, so that its
    /// `eligible_time` stops (PBS's `accrue_type`); `None` under no limit.
    pub ineligible_limits: Option<Arc<[bool]>>,
}

// The threshold is never NaN (a scenario refuses it), so equality is reflexive.
impl Eq for JobOrder {}

impl JobOrder {
    /// Whether the order is plain submission order, so that no adapter is needed: no sort
    /// key, and no queue but the default one to group by.
    pub fn is_submit_order(&self) -> bool {
        self.keys.is_empty()
            && self.formula.is_none()
            && !self.by_fairshare
            && !self.groups_by_queue()
    }

    /// Whether jobs are grouped by queue (`by_queue` or `round_robin`, with queues listed):
    /// with no queue listed, every job is in the default queue.
    fn groups_by_queue(&self) -> bool {
        (self.by_queue || self.round_robin) && !self.queue_priority.is_empty()
    }

    /// Whether jobs differ in [`Self::fair_key`] only by their entity's standing and their
    /// rank: no queue to group by and no formula's values.
    fn only_standing_and_rank(&self, values: &[f64]) -> bool {
        values.is_empty() && !self.groups_by_queue()
    }

    /// A job's queue as the order sees it: (priority, position among the queues).
    fn queue_of(&self, workload: &Workload, job: JobId) -> (i64, usize) {
        match workload.request_of(job).queue.map(|q| q as usize) {
            Some(q) if q < self.queue_priority.len() => (self.queue_priority[q], q),
            _ => (0, self.queue_priority.len()),
        }
    }

    /// The formula's value for `job` at `now`.
    fn formula_value(
        &self,
        formula: &Formula,
        workload: &Workload,
        job: JobId,
        pass: PassReadings<'_>,
        eligible_s: u64,
    ) -> f64 {
        formula.value(&TermValues {
            workload,
            job,
            now: pass.now,
            eligible_s,
            queue_priority: self.queue_of(workload, job).0,
            fairshare: pass.fair.map_or((0.0, 0.0), |f| f.terms(job)),
            moab_fairshare: pass.moab.map_or([0.0; 4], |m| m.factors(workload, job)),
            moab_credentials: self
                .moab_credentials
                .as_ref()
                .map_or([0.0; 4], |c| c.values(workload, job)),
        })
    }

    /// The value of `line` for `job`, oriented so that smaller goes first; the fairshare
    /// percentage reads `fair` (0 without it, as PBS gives a job with no group info).
    fn value(line: SortLine, workload: &Workload, job: JobId, fair: Option<&Fairshare>) -> i128 {
        let v = match line.key {
            SortKey::Resource(c) => i128::from(workload.request_of(job).total(c)),
            SortKey::Walltime => i128::from(workload.job(job).estimate.as_secs()),
            SortKey::JobPriority => i128::from(workload.job(job).priority().unwrap_or(0)),
            // A percentage is never negative nor NaN, so its bits order as it does.
            SortKey::FairsharePerc => i128::from(fair.map_or(0, |f| f.percentage(job).to_bits())),
        };
        if line.high_first { -v } else { v }
    }

    /// Whether a key reads the fairshare tree, so that the queue is sorted at every pass.
    fn keys_read_tree(&self) -> bool {
        self.keys.iter().any(|l| l.key == SortKey::FairsharePerc)
    }

    /// Two jobs by the `job_sort_key` lines in order, then by submission.
    fn keys_cmp(
        &self,
        workload: &Workload,
        fair: Option<&Fairshare>,
        a: JobId,
        b: JobId,
    ) -> std::cmp::Ordering {
        self.keys
            .iter()
            .map(|&line| {
                Self::value(line, workload, a, fair).cmp(&Self::value(line, workload, b, fair))
            })
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    }

    /// Where `job`'s queue puts it, smaller first: by descending priority, then (unless
    /// queues of one priority take turns) queue by queue; nothing without `by_queue`.
    fn queue_key(&self, workload: &Workload, job: JobId) -> (i128, usize) {
        if !self.groups_by_queue() {
            return (0, 0);
        }
        let (priority, position) = self.queue_of(workload, job);
        // Under round_robin, queues of one priority are interleaved later
        // ([`JobOrder::take_turns`]): here they only share their level.
        let position = if self.round_robin { 0 } else { position };
        (-i128::from(priority), position)
    }

    /// Every job's place in this order when it does not depend on which jobs wait or when
    /// (ranks by queue, a formula that does not change with time, the keys, then submission
    /// order), and each job's value of such a formula (empty without one).
    fn ranks(&self, workload: &Workload) -> (Vec<u32>, Vec<f64>) {
        let n = workload.jobs().len();
        let mut by: Vec<u32> = (0..n as u32).collect();
        let values: Vec<f64> = match &self.formula {
            Some(f) if !f.is_dynamic() => (0..n as u32)
                .map(|j| self.formula_value(f, workload, JobId(j), PassReadings::before_any(), 0))
                .collect(),
            _ => Vec::new(),
        };
        by.sort_by(|&a, &b| {
            self.queue_key(workload, JobId(a))
                .cmp(&self.queue_key(workload, JobId(b)))
                // Higher first; a formula that changes with time is applied at each pass.
                .then_with(|| match (values.get(a as usize), values.get(b as usize)) {
                    (Some(va), Some(vb)) => vb.total_cmp(va),
                    _ => std::cmp::Ordering::Equal,
                })
                .then_with(|| self.keys_cmp(workload, None, JobId(a), JobId(b)))
        });
        let mut rank = vec![0u32; n];
        for (r, &j) in by.iter().enumerate() {
            rank[j as usize] = r as u32;
        }
        (rank, values)
    }

    /// A job's place under fairshare (queue-disciplines.md §2.2), smaller first: by queue,
    /// then the formula's value (higher first), then its entity's standing (the more
    /// deserving first), then the sort keys and submission (the rank, which holds them).
    fn fair_key(
        &self,
        workload: &Workload,
        values: &[f64],
        ranks: &[u32],
        fair: &Fairshare,
        job: JobId,
    ) -> (i128, usize, u64, u32, u32) {
        let (priority, position) = self.queue_key(workload, job);
        // The value's bits, made to sort as the numbers do, then reversed: higher first.
        let value = values.get(job.index()).map_or(0, |v| {
            let bits = v.to_bits();
            let ascending = if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            };
            u64::MAX - ascending
        });
        (
            priority,
            position,
            value,
            fair.standing(job),
            ranks[job.index()],
        )
    }

    /// Two jobs in [`Self::fair_key`]'s order, with their entities compared along the tree
    /// rather than by standing: the same order (standings are ranks under that comparison),
    /// without ranking the entities first. Jobs differ in rank, so no two jobs are equal.
    #[inline]
    fn fair_cmp(
        &self,
        workload: &Workload,
        values: &[f64],
        ranks: &[u32],
        fair: &Fairshare,
        a: JobId,
        b: JobId,
    ) -> std::cmp::Ordering {
        // Most orders under fairshare have neither queues nor a formula: every pass compares
        // jobs many times, so those parts are skipped when they would tie anyway.
        if self.only_standing_and_rank(values) {
            return fair
                .compare_jobs(a, b)
                .then(ranks[a.index()].cmp(&ranks[b.index()]));
        }
        self.queue_key(workload, a)
            .cmp(&self.queue_key(workload, b))
            .then_with(|| match (values.get(a.index()), values.get(b.index())) {
                (Some(va), Some(vb)) => vb.total_cmp(va),
                _ => std::cmp::Ordering::Equal,
            })
            .then_with(|| fair.compare_jobs(a, b))
            .then(ranks[a.index()].cmp(&ranks[b.index()]))
    }

    /// Whether `jobs` are in [`Self::fair_cmp`]'s order, each before the next; with
    /// `only_top`, only the pairs with a job under that top group are asked (the others are
    /// known to be in order). Every pass asks it of its whole queue, and again after each
    /// job whose usage counts: where only standing and rank tell jobs apart, each job's
    /// entity is read once rather than once per pair it is in.
    #[allow(clippy::too_many_arguments)]
    fn in_fair_order(
        &self,
        workload: &Workload,
        values: &[f64],
        ranks: &[u32],
        fair: &Fairshare,
        jobs: &[JobId],
        only_top: Option<u32>,
    ) -> bool {
        let asked = |top_a: u32, top_b: u32| only_top.is_none_or(|t| top_a == t || top_b == t);
        if !self.only_standing_and_rank(values) {
            return jobs.is_sorted_by(|&a, &b| {
                !asked(fair.top_of(a), fair.top_of(b))
                    || self.fair_cmp(workload, values, ranks, fair, a, b).is_lt()
            });
        }
        let mut readings = jobs.iter().map(|&j| (fair.reading(j), ranks[j.index()]));
        let Some(mut before) = readings.next() else {
            return true;
        };
        readings.all(|next| {
            let in_order = !asked(before.0.top, next.0.top)
                || fair
                    .compare_readings(before.0, next.0)
                    .then(before.1.cmp(&next.1))
                    .is_lt();
            before = next;
            in_order
        })
    }

    /// `waiting` (sorted by rank) with the queues of each priority taking turns: the first
    /// job of each queue in queue order, then the second of each, and so on.
    fn take_turns(&self, workload: &Workload, waiting: &mut Vec<JobId>) {
        let mut out = Vec::with_capacity(waiting.len());
        let mut level_start = 0;
        while level_start < waiting.len() {
            let priority = self.queue_of(workload, waiting[level_start]).0;
            let level_end = level_start
                + waiting[level_start..]
                    .iter()
                    .position(|&j| self.queue_of(workload, j).0 != priority)
                    .unwrap_or(waiting.len() - level_start);
            // Each queue's jobs, in rank order, and the queues in queue order.
            let mut queues: Vec<(usize, Vec<JobId>)> = Vec::new();
            for &j in &waiting[level_start..level_end] {
                let position = self.queue_of(workload, j).1;
                match queues.iter_mut().find(|(p, _)| *p == position) {
                    Some((_, jobs)) => jobs.push(j),
                    None => queues.push((position, vec![j])),
                }
            }
            queues.sort_by_key(|(p, _)| *p);
            let longest = queues.iter().map(|(_, jobs)| jobs.len()).max().unwrap_or(0);
            for turn in 0..longest {
                out.extend(queues.iter().filter_map(|(_, jobs)| jobs.get(turn)));
            }
            level_start = level_end;
        }
        *waiting = out;
    }
}

/// A discipline walking the queue in a [`JobOrder`] rather than in submission order.
///
/// The discipline sees the waiting jobs sorted, and where the jobs that arrived since the last
/// pass begin in that order: the first of them, since every older job keeps its relative
/// order (the order of two jobs depends only on the jobs, except under `round_robin`, where
/// the whole queue counts as new). So a discipline's conclusions about the older jobs before
/// that point stay as valid as in submission order.
#[derive(Debug)]
pub struct Ordered<S> {
    inner: S,
    order: JobOrder,
    ranks: Vec<u32>,
    sorted: Vec<JobId>,
    /// Each job's formula value: computed once when the formula does not change with time,
    /// else at every pass for the waiting jobs.
    values: Vec<f64>,
    /// Per job: whether it is under the formula threshold (and was told so).
    under: Vec<bool>,
    /// Comments of this pass: the threshold's.
    comments: Vec<(JobId, Arc<str>)>,
    /// Priorities of this pass: the formula's value for each job seen for the first time and
    /// for each job started.
    priorities: Vec<(JobId, f64)>,
    /// Per job: whether its first priority was reported.
    reported: Vec<bool>,
    under_text: Arc<str>,
    /// Fairshare's usage over the run, when the order has it.
    fair: Option<Fairshare>,
    /// Moab fairshare's usage over the run, when the order has it.
    moab_fair: Option<MoabFairshare>,
    /// The top-job estimates of the pass that stood (under fairshare, the discipline's pass
    /// may run several times).
    estimates: Vec<TopJobEstimate>,
    /// Per job, under run limits: its eligible seconds up to `eligible_mark`, that instant,
    /// and whether it has been eligible since (PBS's `accrue_type`).
    eligible: Vec<Eligible>,
    /// The state after a pass's starts, for telling which jobs are over a limit then.
    after_pass: placesim_core::ScratchBuf,
    /// Under fairshare: the order the last pass stood on less the jobs it started (the jobs
    /// of the next pass that waited at this one), and per job whether it is in it.
    last_sorted: Vec<JobId>,
    in_last: Vec<bool>,
    /// Per job, set and cleared within a pass: whether it is in this pass's order, then,
    /// within each run of a fairshare pass, whether that run started or calendared it.
    queued: Vec<bool>,
    /// Lists a pass builds and drops, kept so that their memory serves every pass: the
    /// jobs a fairshare pass counted, and two lists of jobs for ordering.
    counted: Vec<JobId>,
    spare: [Vec<JobId>; 2],
    /// The jobs of a pass that kept the last pass's order ([`keep_last_order`]) that were
    /// not in it: the only ones that join `in_last` when the pass ends.
    fresh: Vec<JobId>,
    /// The waiting jobs with their places under fairshare, for sorting them by place: kept,
    /// so that a pass sorts without allocating.
    keyed: Vec<(u64, JobId)>,
    /// A fairshare pass's trial runs: their decisions, and the comments of those dropped.
    trial_decisions: Vec<Decision>,
    trial_comments: Vec<(JobId, Arc<str>)>,
    /// Whether a fairshare pass whose jobs after its last decision are found out of order
    /// is kept when the discipline says it would decide alike
    /// ([`SchedulingPolicy::decides_alike_in_any_order_after`]); false for the plain
    /// definition, which runs it again.
    keeps_passes_alike: bool,
    /// How many fairshare passes were so kept rather than run again.
    passes_kept_alike: u64,
}

/// What a formula's terms read at a pass besides the job: the time, and the fairshare
/// trees' usage then.
#[derive(Clone, Copy)]
struct PassReadings<'a> {
    now: SimTime,
    fair: Option<&'a Fairshare>,
    moab: Option<&'a MoabFairshare>,
}

impl PassReadings<'_> {
    /// For a formula that reads neither the time nor fairshare: nothing.
    fn before_any() -> Self {
        PassReadings {
            now: SimTime(0),
            fair: None,
            moab: None,
        }
    }
}

/// A job's eligible time, kept under run limits.
#[derive(Debug, Clone, Copy, Default)]
struct Eligible {
    accrued_s: u64,
    mark: Option<SimTime>,
    ineligible: bool,
}

impl<S: SchedulingPolicy> Ordered<S> {
    /// `inner`, walking the queue in `order`.
    pub fn new(inner: S, order: JobOrder) -> Self {
        Ordered {
            inner,
            ranks: Vec::new(),
            sorted: Vec::new(),
            values: Vec::new(),
            under: Vec::new(),
            comments: Vec::new(),
            priorities: Vec::new(),
            reported: Vec::new(),
            under_text: Arc::from("Not Running: Job is under job_sort_formula threshold value"),
            fair: order
                .fairshare
                .as_ref()
                .map(|f| Fairshare::new(FairshareSettings::clone(f))),
            estimates: Vec::new(),
            eligible: Vec::new(),
            after_pass: placesim_core::ScratchBuf::default(),
            last_sorted: Vec::new(),
            in_last: Vec::new(),
            queued: Vec::new(),
            counted: Vec::new(),
            spare: [Vec::new(), Vec::new()],
            fresh: Vec::new(),
            keyed: Vec::new(),
            trial_decisions: Vec::new(),
            trial_comments: Vec::new(),
            keeps_passes_alike: true,
            passes_kept_alike: 0,
            moab_fair: order
                .moab_fairshare
                .as_ref()
                .map(|f| MoabFairshare::new(MoabFairshareSettings::clone(f))),
            order,
        }
    }

    /// `inner` in `order` by the plain definition of a fairshare pass: whenever the jobs
    /// after a job it starts or calendars are found out of order, the pass is run again,
    /// even where the discipline would decide alike. The reference the kept passes are
    /// tested against; only slower.
    pub fn running_every_reordered_pass_again(inner: S, order: JobOrder) -> Self {
        Ordered {
            keeps_passes_alike: false,
            ..Ordered::new(inner, order)
        }
    }

    /// How many fairshare passes whose jobs after the last decision were found out of order
    /// were kept rather than run again, so far.
    pub fn passes_kept_alike(&self) -> u64 {
        self.passes_kept_alike
    }

    /// The discipline inside.
    pub fn inner(&self) -> &S {
        &self.inner
    }
}

/// The limits that stop eligibility, when a formula reads `eligible_time`. Asked at every
/// pass: the list is shared only when a formula reads it (`and` cloned it at every pass, a
/// count changed twice, whether a formula read it or not).
fn order_ineligible(order: &JobOrder) -> Option<Arc<[bool]>> {
    order
        .formula
        .as_ref()
        .filter(|f| f.is_dynamic())
        .and_then(|_| order.ineligible_limits.clone())
}

impl<S: SchedulingPolicy> Ordered<S> {
    /// After a pass: which waiting jobs are over a user, group or project limit in the state
    /// its starts leave, and so not eligible until the next pass (PBS sets `accrue_type` when
    /// a job cannot run for such a limit, after the whole-pool check, which comes first).
    fn mark_ineligible(&mut self, ctx: &SchedContext<'_>, started: &[Decision], stops: &[bool]) {
        use placesim_core::StateView;
        let mut view = placesim_core::Scratch::new(ctx.state, &mut self.after_pass);
        for Decision::Start { allocation, .. } in started {
            view.take(allocation);
        }
        let n_cons = ctx.state.cluster_consumables();
        for &j in ctx.queue {
            let Some(e) = self.eligible.get_mut(j.index()) else {
                continue;
            };
            let request = ctx.workload.request_of(j);
            let Some(draws) = request.limit_draws.as_deref() else {
                continue;
            };
            let totals_free = (0..n_cons).all(|c| {
                let c = ConsumableIdx(c as u8);
                request.total(c) <= view.free_total(c)
            });
            e.ineligible = totals_free
                && draws.iter().any(|d| {
                    stops.get(d.limit as usize).copied().unwrap_or(false)
                        && d.amount > view.limit_room(d.limit)
                });
        }
    }

    /// A pass under fairshare, whose order changes within the cycle: PBS re-sorts the jobs
    /// it has not yet looked at after each job it starts or calendars as a top job, whose
    /// requested usage then counts for its entity (openpbs `fifo.cpp`, `sort_again`). The
    /// discipline's pass is run on the sorted queue; at the first job it starts or
    /// calendars that changes the order of the jobs after it, those are re-sorted and the
    /// pass is run again on the new order (the jobs up to that one come out the same, as a
    /// job's fate depends only on those ahead of it). The pass that no such job changes
    /// stands: its decisions, comments and estimates are the cycle's; the others' are
    /// dropped and taken back ([`SchedulingPolicy::retract_pass`]). `last_order_kept`: the
    /// queue was sorted from the last pass's order ([`keep_last_order`]), so the jobs that
    /// waited then are in the same order now.
    fn schedule_fair(
        &mut self,
        ctx: &SchedContext<'_>,
        decisions: &mut Vec<Decision>,
        last_order_kept: bool,
    ) {
        let Some(fair) = self.fair.as_mut() else {
            return;
        };
        let (order, values, ranks) = (&self.order, &self.values, &self.ranks);
        // The first run may take the discipline's shortcuts for passes after which nothing
        // was freed when the jobs that waited then are in the same order now, as with a fixed
        // order; the runs that follow it at this instant may not.
        let n = ctx.workload.jobs().len();
        if self.in_last.len() != n {
            self.in_last = vec![false; n];
            self.queued = vec![false; n];
            self.last_sorted.clear();
        }
        let (in_last, queued, counted) = (&self.in_last, &mut self.queued, &mut self.counted);
        let stable = last_order_kept || {
            for &j in &self.sorted {
                queued[j.index()] = true;
            }
            let stable = self
                .sorted
                .iter()
                .filter(|j| in_last[j.index()])
                .eq(self.last_sorted.iter().filter(|j| queued[j.index()]));
            for &j in &self.sorted {
                queued[j.index()] = false;
            }
            stable
        };
        let mut first_run = stable.then(|| {
            let fresh = self
                .sorted
                .iter()
                .position(|j| !in_last[j.index()])
                .unwrap_or(self.sorted.len());
            (fresh, ctx.freed_since_last_pass)
        });
        // Jobs up to here are in PBS's order for good.
        let mut fixed = 0;
        let mut run = std::mem::take(&mut self.trial_decisions);
        let mut discarded = std::mem::take(&mut self.trial_comments);
        let mut kept_from = None;
        loop {
            super::trial_pass(
                &mut self.inner,
                ctx,
                &self.sorted,
                first_run.take(),
                None,
                &mut run,
                &mut self.estimates,
            );
            counted.clear();
            counted.extend(
                run.iter()
                    .map(|Decision::Start { job, .. }| *job)
                    .chain(self.estimates.iter().map(|e| e.job)),
            );
            // Marked, to be found in one walk of the order, which ends at the last of them.
            for &j in counted.iter() {
                queued[j.index()] = true;
            }
            let mut left = counted.len();
            let mut again = None;
            for e in fixed..self.sorted.len() {
                if left == 0 {
                    break;
                }
                let job = self.sorted[e];
                if !queued[job.index()] {
                    continue;
                }
                left -= 1;
                // The last job's usage would count for no comparison of this cycle: the
                // next one starts temporary usage again from usage.
                if e + 1 == self.sorted.len() || !fair.counted_in_cycle(ctx.workload, job) {
                    continue;
                }
                // Most often the jobs after it are still in order: one comparison per pair
                // tells, where sorting them again would take many. They were in order before
                // this job's usage counted, which changes only how the jobs under its top
                // group compare with others: only pairs with such a job can be out of order.
                let top = fair.top_of(job);
                let still_sorted = !order.round_robin
                    && order.in_fair_order(
                        ctx.workload,
                        values,
                        ranks,
                        fair,
                        &self.sorted[e + 1..],
                        Some(top),
                    );
                if still_sorted {
                    continue;
                }
                let rest = if order.round_robin {
                    fair.rank_entities(ctx.workload, &self.sorted[e + 1..]);
                    let mut rest = self.sorted[e + 1..].to_vec();
                    rest.sort_by_cached_key(|&j| {
                        order.fair_key(ctx.workload, values, ranks, fair, j)
                    });
                    order.take_turns(ctx.workload, &mut rest);
                    rest
                } else {
                    // The jobs under other top groups are still in order among themselves:
                    // only those under this job's move, so they are sorted and merged back.
                    let [moved, stayed] = &mut self.spare;
                    moved.clear();
                    stayed.clear();
                    for &j in &self.sorted[e + 1..] {
                        if fair.top_of(j) == top {
                            moved.push(j);
                        } else {
                            stayed.push(j);
                        }
                    }
                    let cmp = |a: JobId, b: JobId| {
                        order.fair_cmp(ctx.workload, values, ranks, fair, a, b)
                    };
                    // They were in order before, and often still are: the stable sort
                    // finds that in one comparison per pair (the order is total, so the
                    // result is the unstable sort's).
                    moved.sort_by(|&a, &b| cmp(a, b));
                    merge_sorted(stayed, moved, cmp)
                };
                if rest[..] != self.sorted[e + 1..] {
                    self.sorted.truncate(e + 1);
                    self.sorted.extend(rest);
                    // Nothing after this job was started or calendared: the discipline may
                    // say that the run would come out the same on the new order.
                    if left == 0
                        && self.keeps_passes_alike
                        && self.inner.decides_alike_in_any_order_after(e + 1)
                    {
                        kept_from = Some(e + 1);
                    } else {
                        again = Some(e + 1);
                    }
                    break;
                }
            }
            for &j in counted.iter() {
                queued[j.index()] = false;
            }
            let Some(now_fixed) = again else {
                break;
            };
            fixed = now_fixed;
            super::drop_trial(&mut self.inner, &mut discarded);
        }
        if let Some(from) = kept_from {
            self.passes_kept_alike += 1;
            // The run that stands walked the jobs from `from` on in their old order: its
            // comments on them are put in the new one, as a run on it would have said them.
            self.inner.drain_comments(&mut discarded);
            comments_in_order(
                &mut discarded,
                &self.sorted,
                from,
                &mut self.queued,
                &mut self.keyed,
            );
            self.comments.append(&mut discarded);
        }
        // What stood, less the jobs it started, is the order the next pass keeps if it
        // still holds. When this pass kept the last one, every job of that one waited now:
        // only its fresh jobs join, and the order is copied whole when nothing started (most
        // passes), rather than each job marked again.
        if last_order_kept {
            for &j in &self.fresh {
                self.in_last[j.index()] = true;
            }
        } else {
            self.forget_last_order();
            for &j in &self.sorted {
                self.in_last[j.index()] = true;
            }
        }
        for Decision::Start { job, .. } in &run {
            self.in_last[job.index()] = false;
        }
        self.last_sorted.clear();
        if run.is_empty() {
            self.last_sorted.extend_from_slice(&self.sorted);
        } else {
            let in_last = &self.in_last;
            self.last_sorted
                .extend(self.sorted.iter().filter(|j| in_last[j.index()]));
        }
        decisions.append(&mut run);
        (self.trial_decisions, self.trial_comments) = (run, discarded);
    }

    /// No order stands from the last pass (its jobs are no longer marked in `in_last`).
    fn forget_last_order(&mut self) {
        for &j in &self.last_sorted {
            self.in_last[j.index()] = false;
        }
        self.last_sorted.clear();
    }
}

/// Sorts `waiting` by `cmp` (a strict total order, so the result is the one sorted order)
/// from the order of the last pass, when that order still holds. `last` is the last pass's
/// order less the jobs it started, and `in_last` marks its jobs (it has a place per job of
/// the run). When every job of `last` still waits (as many of `waiting`'s jobs are marked),
/// `last` is checked by `in_order` (whether a list is in `cmp`'s order: one comparison per
/// pair), and the jobs new since are sorted and merged in. Returns false, leaving `waiting`
/// as it was, when a job of `last` no longer waits, the old jobs are out of order now, or
/// `in_last` does not cover the run's jobs (the first pass): sorting by keys then costs
/// fewer comparisons of paths than sorting by `cmp`.
fn keep_last_order(
    waiting: &mut Vec<JobId>,
    last: &[JobId],
    in_last: &[bool],
    jobs_in_run: usize,
    fresh: &mut Vec<JobId>,
    cmp: impl Fn(JobId, JobId) -> std::cmp::Ordering,
    in_order: impl Fn(&[JobId]) -> bool,
) -> bool {
    if in_last.len() != jobs_in_run {
        return false;
    }
    fresh.clear();
    fresh.extend(waiting.iter().copied().filter(|j| !in_last[j.index()]));
    // No job waits twice, so as many marked jobs as `last` holds are all of them.
    if waiting.len() - fresh.len() != last.len() || !in_order(last) {
        return false;
    }
    fresh.sort_unstable_by(|&a, &b| cmp(a, b));
    // Most passes add a job or two to a longer queue: each is placed by bisection.
    if fresh.len() * 8 < last.len() {
        waiting.clear();
        let mut rest = last;
        for &j in fresh.iter() {
            let at = rest.partition_point(|&k| cmp(k, j).is_lt());
            waiting.extend_from_slice(&rest[..at]);
            waiting.push(j);
            rest = &rest[at..];
        }
        waiting.extend_from_slice(rest);
    } else {
        merge_into(waiting, last, fresh, &cmp);
    }
    true
}

/// `comments`, said by a pass walking the jobs of `order` from `from` on in another order
/// than it, with those on these jobs put in `order`'s order after all others; a job's own
/// comments keep theirs. `marks` (one per job, all false) is left so; `places` is scratch.
fn comments_in_order(
    comments: &mut [(JobId, Arc<str>)],
    order: &[JobId],
    from: usize,
    marks: &mut [bool],
    places: &mut Vec<(u64, JobId)>,
) {
    for (job, _) in comments.iter() {
        marks[job.index()] = true;
    }
    places.clear();
    for (place, &job) in order.iter().enumerate().skip(from) {
        if marks[job.index()] {
            places.push((place as u64 + 1, job));
        }
    }
    for (job, _) in comments.iter() {
        marks[job.index()] = false;
    }
    if places.is_empty() {
        return;
    }
    places.sort_unstable_by_key(|&(_, job)| job);
    // Jobs before `from` sort first (0), in the order they were said.
    comments.sort_by_key(|(job, _)| {
        places
            .binary_search_by_key(job, |&(_, j)| j)
            .map_or(0, |i| places[i].0)
    });
}

/// Two lists, each sorted by `cmp`, merged into one so sorted (`a`'s job first between
/// equals).
fn merge_sorted(
    a: &[JobId],
    b: &[JobId],
    cmp: impl Fn(JobId, JobId) -> std::cmp::Ordering,
) -> Vec<JobId> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    merge_into(&mut out, a, b, cmp);
    out
}

/// [`merge_sorted`] into `out`, which is cleared first (its memory serves again).
fn merge_into(
    out: &mut Vec<JobId>,
    a: &[JobId],
    b: &[JobId],
    cmp: impl Fn(JobId, JobId) -> std::cmp::Ordering,
) {
    out.clear();
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        if cmp(x, y).is_le() {
            out.push(x);
            a.next();
        } else {
            out.push(y);
            b.next();
        }
    }
    out.extend(a);
    out.extend(b);
}

impl<S: SchedulingPolicy> SchedulingPolicy for Ordered<S> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let n = ctx.workload.jobs().len();
        if self.ranks.len() != n {
            (self.ranks, self.values) = self.order.ranks(ctx.workload);
            self.under = vec![false; n];
            self.reported = vec![false; n];
        }
        let ranks = &self.ranks;
        let order = &self.order;
        let dynamic = order.formula.as_ref().filter(|f| f.is_dynamic());
        // The tree's usage moves on at every cycle, before anything reads it.
        if let Some(fair) = &mut self.fair {
            fair.begin_cycle(ctx.workload, ctx.now.0, ctx.running, ctx.running_log);
            if order.formula.as_ref().is_some_and(|f| f.uses_fairshare()) {
                fair.compute_usage_factors();
            }
            fair.settle_queue(ctx.workload, ctx.queue);
        }
        if let Some(moab) = &mut self.moab_fair {
            moab.update(ctx.workload, ctx.now.0, ctx.running);
        }
        if let Some(f) = dynamic {
            self.values.resize(n, 0.0);
            if order.ineligible_limits.is_some() && self.eligible.len() != n {
                self.eligible = vec![Eligible::default(); n];
            }
            for &j in ctx.queue {
                let submit = ctx.workload.job(j).submit;
                // Eligible since submission, but for the time spent over a limit.
                let eligible_s = match self.eligible.get_mut(j.index()) {
                    Some(e) => {
                        let since = e.mark.unwrap_or(submit);
                        if !e.ineligible {
                            e.accrued_s += ctx.now.as_secs().saturating_sub(since.as_secs());
                        }
                        e.mark = Some(ctx.now);
                        e.accrued_s
                    }
                    None => ctx.now.as_secs().saturating_sub(submit.as_secs()),
                };
                let pass = PassReadings {
                    now: ctx.now,
                    fair: self.fair.as_ref(),
                    moab: self.moab_fair.as_ref(),
                };
                self.values[j.index()] = order.formula_value(f, ctx.workload, j, pass, eligible_s);
            }
        }
        self.sorted.clear();
        self.sorted.extend_from_slice(ctx.queue);
        // The threshold: a job at or below it is not run, nor seen by the discipline.
        if let (Some(_), Some(threshold)) = (&order.formula, order.threshold) {
            let (values, under, comments) = (&self.values, &mut self.under, &mut self.comments);
            let (text, inner) = (&self.under_text, &mut self.inner);
            self.sorted.retain(|&j| {
                let is_under = values[j.index()] <= threshold;
                if is_under && !under[j.index()] {
                    comments.push((j, text.clone()));
                    inner.comment_superseded(j);
                }
                under[j.index()] = is_under;
                !is_under
            });
        }
        let by_fairshare = self.fair.as_mut().filter(|_| order.by_fairshare);
        let mut last_order_kept = false;
        let fresh_from = if let Some(fair) = by_fairshare {
            let values = &self.values;
            let kept = !order.round_robin
                && keep_last_order(
                    &mut self.sorted,
                    &self.last_sorted,
                    &self.in_last,
                    n,
                    &mut self.fresh,
                    |a, b| order.fair_cmp(ctx.workload, values, ranks, fair, a, b),
                    |jobs| order.in_fair_order(ctx.workload, values, ranks, fair, jobs, None),
                );
            last_order_kept = kept;
            if !kept {
                fair.rank_entities(ctx.workload, &self.sorted);
                let fair = &*fair;
                if order.only_standing_and_rank(values) {
                    // The key's other parts are the same for every job: two numbers in one
                    // compare faster than the whole key. Each job's key differs (ranks do),
                    // so any sort gives the one order.
                    self.keyed.clear();
                    self.keyed.extend(self.sorted.iter().map(|&j| {
                        (
                            u64::from(fair.standing(j)) << 32 | u64::from(ranks[j.index()]),
                            j,
                        )
                    }));
                    self.keyed.sort_unstable_by_key(|&(key, _)| key);
                    self.sorted.clear();
                    self.sorted.extend(self.keyed.iter().map(|&(_, j)| j));
                } else {
                    self.sorted.sort_by_cached_key(|&j| {
                        order.fair_key(ctx.workload, values, ranks, fair, j)
                    });
                }
            }
            0
        } else if dynamic.is_some() || order.keys_read_tree() {
            let values = &self.values;
            let fair = self.fair.as_ref();
            let by_tree = order.keys_read_tree();
            self.sorted.sort_unstable_by(|&a, &b| {
                order
                    .queue_key(ctx.workload, a)
                    .cmp(&order.queue_key(ctx.workload, b))
                    .then_with(|| match (values.get(a.index()), values.get(b.index())) {
                        (Some(va), Some(vb)) => vb.total_cmp(va),
                        _ => std::cmp::Ordering::Equal,
                    })
                    .then_with(|| {
                        if by_tree {
                            order.keys_cmp(ctx.workload, fair, a, b)
                        } else {
                            ranks[a.index()].cmp(&ranks[b.index()])
                        }
                    })
            });
            0
        } else {
            self.sorted.sort_unstable_by_key(|j| ranks[j.index()]);
            let first_fresh = ctx.queue[ctx.fresh_from.min(ctx.queue.len())..]
                .iter()
                .map(|j| ranks[j.index()])
                .min();
            match first_fresh {
                Some(r) => self.sorted.partition_point(|j| ranks[j.index()] < r),
                None => self.sorted.len(),
            }
        };
        let fresh_from = if order.round_robin {
            order.take_turns(ctx.workload, &mut self.sorted);
            0
        } else {
            fresh_from
        };
        let before = decisions.len();
        if ctx.queue.is_empty() && !self.inner.passes_when_idle() {
            // A cycle with nothing waiting runs only for the usage it accrues (the kernel
            // passes only because this wrapper asks it to): the discipline, which the
            // kernel would not have asked, is not either, and the next pass finds every
            // job new, as it would have.
            self.forget_last_order();
        } else if self.order.by_fairshare {
            self.schedule_fair(ctx, decisions, last_order_kept);
        } else {
            let sorted = SchedContext {
                queue: &self.sorted,
                fresh_from,
                ..*ctx
            };
            self.inner.schedule(&sorted, decisions);
        }
        if let Some(stops) = &order_ineligible(&self.order) {
            self.mark_ineligible(ctx, &decisions[before..], stops);
        }
        if let Some(moab) = &mut self.moab_fair {
            moab.started(
                decisions[before..]
                    .iter()
                    .map(|Decision::Start { job, .. }| (*job, ctx.now.0)),
            );
        }
        if let Some(fair) = &mut self.fair {
            let started = decisions[before..]
                .iter()
                .map(|Decision::Start { job, .. }| *job);
            fair.end_cycle(ctx.workload, ctx.now.0, started);
        }
        if self.order.formula.is_some() {
            // Each job's first value, and its value in the pass that starts it.
            for &j in ctx.queue {
                if !std::mem::replace(&mut self.reported[j.index()], true) {
                    self.priorities.push((j, self.values[j.index()]));
                }
            }
            for Decision::Start { job, .. } in &decisions[before..] {
                self.priorities.push((*job, self.values[job.index()]));
            }
        }
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        out.append(&mut self.comments);
        self.inner.drain_comments(out);
    }

    fn comment_superseded(&mut self, job: JobId) {
        if let Some(under) = self.under.get_mut(job.index()) {
            *under = false;
        }
        self.inner.comment_superseded(job);
    }

    /// Under fairshare, as PBS: every cycle accrues the running jobs' usage.
    fn passes_when_idle(&self) -> bool {
        self.fair.is_some() || self.moab_fair.is_some() || self.inner.passes_when_idle()
    }

    fn retract_pass(&mut self) {
        self.comments.clear();
        self.estimates.clear();
        self.inner.retract_pass();
    }

    fn drain_estimates(&mut self, out: &mut Vec<TopJobEstimate>) {
        out.append(&mut self.estimates);
        self.inner.drain_estimates(out);
    }

    fn drain_priorities(&mut self, out: &mut Vec<(JobId, f64)>) {
        out.append(&mut self.priorities);
        self.inner.drain_priorities(out);
    }

    super::pass_on_to_inner!(wakeup, check_start);
}
