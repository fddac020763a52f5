//! Queue disciplines: which waiting jobs start now.
//!
//! [`Discipline`] is the one list of them: the command line's `--policy` values and help, the
//! scenario's `run.discipline` values and its error messages, and the policy built for a run
//! all derive from it. A new discipline is a module here and a variant of it.

mod calendar;
mod confirm;
mod depth;
mod easy;
mod fairshare;
mod fcfs;
mod formula;
mod greedy;
mod inside;
mod kept;
mod moab_fairshare;
mod order;
mod partitioned;
mod recorded;
mod reserved;
mod throttle;

pub use calendar::Shortcuts;
pub use confirm::ConfirmingReservations;
pub use depth::{Backfill, Depth, Planned};
pub use easy::{Easy, Reservation};
pub use fairshare::{
    Fairshare, FairshareEntity, FairshareSettings, FairshareTree, MAX_TREE_DEPTH,
    MAX_TREE_ENTITIES, TreeError, UsageRate,
};
pub use fcfs::Fcfs;
pub use formula::{Formula, FormulaError, MAX_FORMULA_DEPTH, Term, TermValues};
pub use greedy::Greedy;
pub use inside::{InReservations, QUEUE_NOT_STARTED};
pub use moab_fairshare::{
    CREDENTIALS, MoabCredential, MoabCredentials, MoabFairshare, MoabFairshareSettings, Target,
    TargetMode,
};
pub use order::{JobOrder, Ordered, SortKey, SortLine};
pub use partitioned::{Partition, Partitioned};
pub use recorded::AsRecorded;
pub use throttle::{CredentialLimits, LIMIT_KINDS, LimitKind, MoabLimits, SoftHard, Throttled};

use calendar::{Calendar, place_on};
use placesim_core::{
    Allocation, ClusterState, ConsumableIdx, Decision, JobId, PlacementPolicy, RelaxationLasts,
    RelaxationWait, Request, SchedContext, SchedulingPolicy, Scratch, ScratchBuf,
};
use std::borrow::Cow;
use std::sync::Arc;

/// A queue discipline, by the name users give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Discipline {
    /// First come, first served: strict order, nothing backfilled.
    Fcfs,
    /// Backfilling with a reservation for each of the first `depth` jobs that cannot start
    /// (at least 1), re-planned at every pass. `depth` 1 is EASY.
    Easy {
        /// The number of reservations a pass makes.
        depth: u32,
        /// Whether a job that got a reservation keeps one in every later pass until it runs,
        /// beyond the depth (Moab `RESERVATIONPOLICY HIGHEST`); otherwise only the current
        /// first `depth` blocked jobs hold one (CURRENTHIGHEST, and PBS).
        kept: bool,
    },
    /// Every job that fits now starts, in queue order; nothing is reserved.
    Greedy,
    /// Backfilling with a reservation for every waiting job, re-planned at every pass.
    Conservative,
}

impl Discipline {
    /// EASY: backfilling with one reservation.
    pub const EASY: Discipline = Discipline::Easy {
        depth: 1,
        kept: false,
    };

    /// Every discipline, in the order listings and messages show them (`easy` with its
    /// default depth, 1).
    pub const ALL: [Discipline; 4] = [
        Discipline::Fcfs,
        Discipline::EASY,
        Discipline::Greedy,
        Discipline::Conservative,
    ];

    /// The name on the command line and in scenario files.
    pub const fn name(self) -> &'static str {
        match self {
            Discipline::Fcfs => "fcfs",
            Discipline::Easy { .. } => "easy",
            Discipline::Greedy => "greedy",
            Discipline::Conservative => "conservative",
        }
    }

    /// The name in output rows: the name, with the depth when it is not 1 (`easy-depth4`).
    pub fn label(self) -> String {
        match self {
            Discipline::Easy { depth, kept } => {
                let mut label = "easy".to_owned();
                if depth != 1 {
                    label += &format!("-depth{depth}");
                }
                if kept {
                    label += "-highest";
                }
                label
            }
            _ => self.name().to_owned(),
        }
    }

    /// One line for `--help`.
    pub const fn help(self) -> &'static str {
        match self {
            Discipline::Fcfs => "first come, first served: the head of the queue blocks the rest",
            Discipline::Easy { .. } => {
                "backfilling: the first N jobs that cannot start get reservations (N = \
                 --backfill-depth, 1 = EASY), later jobs start if they delay none"
            }
            Discipline::Greedy => {
                "greedy: every job that fits now starts, in queue order; nothing is reserved \
                 (PBS's default, strict_ordering false)"
            }
            Discipline::Conservative => {
                "conservative backfilling: every waiting job gets a reservation, re-planned at \
                 every pass; a job starts only if it delays none"
            }
        }
    }

    /// This discipline with `depth` reservations per pass: 0 is strict order ([`Self::Fcfs`]).
    /// Only backfilling ([`Self::Easy`]) has a depth; for the others the error says so.
    pub fn with_backfill_depth(self, depth: u32) -> Result<Discipline, String> {
        match self {
            Discipline::Easy { .. } if depth == 0 => Ok(Discipline::Fcfs),
            Discipline::Easy { kept, .. } => Ok(Discipline::Easy { depth, kept }),
            other => Err(format!(
                "a backfill depth goes with discipline easy, not {}",
                other.name()
            )),
        }
    }

    /// The PBS scheduler `backfill_depth` that names this discipline under `strict_ordering`,
    /// if PBS has one for it.
    pub const fn pbs_backfill_depth(self) -> Option<u32> {
        match self {
            Discipline::Fcfs => Some(0),
            Discipline::Easy { depth, kept: false } => Some(depth),
            Discipline::Easy { kept: true, .. } => None,
            Discipline::Greedy | Discipline::Conservative => None,
        }
    }

    /// A fresh instance for one run, asking `placement` where jobs go.
    pub fn build_with(self, placement: Box<dyn PlacementPolicy>) -> Box<dyn SchedulingPolicy> {
        match self {
            Discipline::Fcfs => Box::new(Fcfs::new(placement)),
            // EASY keeps its own pass, with the shortcuts of one reservation; the general
            // pass equals it at depth 1 (tested on whole traces).
            Discipline::Easy {
                depth: 0 | 1,
                kept: false,
            } => Box::new(Easy::new(placement)),
            Discipline::Easy { depth, kept } => {
                let backfill = Backfill::new(placement, Depth::Jobs(depth.max(1)));
                Box::new(if kept {
                    backfill.keeping_reservations()
                } else {
                    backfill
                })
            }
            Discipline::Greedy => Box::new(Greedy::new(placement)),
            Discipline::Conservative => Box::new(Backfill::new(placement, Depth::All)),
        }
    }

    /// A fresh instance for one run, asking `placement` where jobs go, with PBS queues that
    /// have a `backfill_depth` of their own (`queue_depths`, by queue index; PBS's rules,
    /// queue-disciplines.md §2.3):
    /// - under backfilling, a queue's jobs count their top jobs against its depth, and all
    ///   other jobs against the discipline's;
    /// - a queue of depth 0 keeps strict order among its own jobs only;
    /// - under strict order (server depth 0), a queue with a depth above 0 turns backfilling
    ///   back on, and the jobs of the other queues get no top job;
    /// - greedy (no `strict_ordering`) calendars nothing, whatever the depths.
    pub fn build_for(
        self,
        placement: Box<dyn PlacementPolicy>,
        queue_depths: &[Option<u32>],
    ) -> Box<dyn SchedulingPolicy> {
        if queue_depths.iter().all(Option::is_none) {
            return self.build_with(placement);
        }
        let depths = queue_depths.to_vec();
        let backfill = match self {
            Discipline::Greedy => return self.build_with(placement),
            Discipline::Fcfs if depths.iter().flatten().all(|&d| d == 0) => {
                return self.build_with(placement);
            }
            Discipline::Fcfs => Backfill::new(placement, Depth::Jobs(0)),
            Discipline::Easy { depth, kept } => {
                let backfill = Backfill::new(placement, Depth::Jobs(depth));
                if kept {
                    backfill.keeping_reservations()
                } else {
                    backfill
                }
            }
            Discipline::Conservative => Backfill::new(placement, Depth::All),
        };
        Box::new(backfill.with_queue_depths(depths))
    }

    /// A fresh instance for one run with first-fit placement.
    pub fn build(self) -> Box<dyn SchedulingPolicy> {
        self.build_with(Box::new(crate::placement::FirstFit::default()))
    }
}

placesim_core::named_list!(Discipline, "discipline");

/// The `SchedulingPolicy` methods every discipline here shares, for a type with a
/// `runnable: Runnable` and a `placement`: the pass's comments and wake-up come from the
/// runnable bookkeeping, and a start lies where its placement's own check says.
macro_rules! comments_wakeups_and_checks {
    () => {
        fn drain_comments(&mut self, out: &mut Vec<(placesim_core::JobId, std::sync::Arc<str>)>) {
            self.runnable.drain_comments(out);
        }

        fn comment_superseded(&mut self, job: placesim_core::JobId) {
            self.runnable.superseded(job);
        }

        fn drain_estimates(&mut self, out: &mut Vec<placesim_core::TopJobEstimate>) {
            out.append(&mut self.runnable.estimates);
        }

        fn retract_pass(&mut self) {
            self.runnable.retract();
        }

        fn wakeup(&self) -> Option<placesim_core::SimTime> {
            self.runnable.next_wakeup
        }

        fn check_start(
            &self,
            request: &placesim_core::Request,
            allocation: &placesim_core::Allocation,
        ) -> Result<(), String> {
            self.placement.check_within_label(request, allocation)
        }
    };
}
use comments_wakeups_and_checks;

/// The [`SchedulingPolicy`] methods a wrapper around a discipline (its `inner` field) passes
/// on unchanged, by name: what the wrapper neither adds to nor takes from.
macro_rules! pass_on_to_inner {
    ($($method:ident),+ $(,)?) => {
        $($crate::queue::pass_on_to_inner!(@one $method);)+
    };
    (@one comment_superseded) => {
        fn comment_superseded(&mut self, job: placesim_core::JobId) {
            self.inner.comment_superseded(job);
        }
    };
    (@one passes_when_idle) => {
        fn passes_when_idle(&self) -> bool {
            self.inner.passes_when_idle()
        }
    };
    (@one drain_estimates) => {
        fn drain_estimates(&mut self, out: &mut Vec<placesim_core::TopJobEstimate>) {
            self.inner.drain_estimates(out);
        }
    };
    (@one drain_priorities) => {
        fn drain_priorities(&mut self, out: &mut Vec<(placesim_core::JobId, f64)>) {
            self.inner.drain_priorities(out);
        }
    };
    (@one wakeup) => {
        fn wakeup(&self) -> Option<placesim_core::SimTime> {
            self.inner.wakeup()
        }
    };
    (@one check_start) => {
        fn check_start(
            &self,
            request: &placesim_core::Request,
            allocation: &placesim_core::Allocation,
        ) -> Result<(), String> {
            self.inner.check_start(request, allocation)
        }
    };
}
use pass_on_to_inner;

/// The relaxation of `request` under `placement`'s set constraints, if it has one.
fn relaxation_of(
    placement: &mut dyn PlacementPolicy,
    request: &Request,
) -> Option<placesim_core::Relaxation> {
    placement.constraints()?.relaxation(request)
}

/// Ids found so far for small numbers (users' and groups'), each at its slot: what fairshare
/// and throttling name by a number is found again without writing the name out and hashing
/// it. Numbers are small in practice; a slot past [`ByNumber::KEPT`] is not kept, and its
/// owner is looked up by name every time.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByNumber(Vec<u32>);

impl ByNumber {
    /// Slots below this are kept.
    const KEPT: usize = 1 << 20;
    /// No id at a slot.
    const EMPTY: u32 = u32::MAX;

    /// The id kept at `slot`, if any.
    #[inline]
    pub(crate) fn get(&self, slot: usize) -> Option<u32> {
        self.0.get(slot).copied().filter(|&id| id != Self::EMPTY)
    }

    /// Keeps `id` at `slot`, unless the slot is past those kept.
    pub(crate) fn keep(&mut self, slot: usize, id: u32) {
        if slot >= Self::KEPT {
            return;
        }
        if self.0.len() <= slot {
            self.0.resize(slot + 1, Self::EMPTY);
        }
        self.0[slot] = id;
    }
}

/// One trial of `inner`'s pass over `queue` at this instant, for an adapter that may run it
/// again at the same instant (fairshare's re-sorting, throttling's skips): its decisions go to
/// `run` and its top-job estimates to `estimates`, both cleared first. `shortcuts` (where the
/// new jobs begin, and whether anything was freed) is given for a first trial whose queue is
/// as the discipline last saw it; any other trial looks at every job. `gate` is the adapter's
/// own ([`placesim_core::StartGate`]): one from outside is not passed on, as the queue's order
/// is this adapter's.
pub(crate) fn trial_pass<S: SchedulingPolicy + ?Sized>(
    inner: &mut S,
    ctx: &SchedContext<'_>,
    queue: &[JobId],
    shortcuts: Option<(usize, bool)>,
    gate: Option<&dyn placesim_core::StartGate>,
    run: &mut Vec<Decision>,
    estimates: &mut Vec<placesim_core::TopJobEstimate>,
) {
    run.clear();
    estimates.clear();
    let (fresh_from, freed_since_last_pass) = shortcuts.unwrap_or((0, true));
    let pass = SchedContext {
        queue,
        fresh_from,
        freed_since_last_pass,
        start_gate: gate,
        ..*ctx
    };
    inner.schedule(&pass, run);
    inner.drain_estimates(estimates);
}

/// Takes back a trial that does not stand: its comments are dropped (into `scratch`, left
/// empty) and the discipline forgets the pass ([`SchedulingPolicy::retract_pass`]).
pub(crate) fn drop_trial<S: SchedulingPolicy + ?Sized>(
    inner: &mut S,
    scratch: &mut Vec<(JobId, Arc<str>)>,
) {
    inner.drain_comments(scratch);
    scratch.clear();
    inner.retract_pass();
}

/// The request a reservation is calendared with: only the first select specification of a
/// request with `||` alternatives (seed 001).
pub(crate) fn calendar_request(request: &Request) -> Cow<'_, Request> {
    if request.alternatives.is_empty() {
        Cow::Borrowed(request)
    } else {
        Cow::Owned(Request {
            alternatives: Vec::new(),
            ..request.clone()
        })
    }
}

/// Remembers, per request, whether it can be placed on the cluster when nothing runs (a job
/// whose request cannot can never run, so it must never hold up the queue), and collects the
/// comments of a pass: why a blocked head waits, and why a job can never run (once per job).
#[derive(Debug, Default)]
pub(crate) struct Runnable {
    empty: Option<ClusterState>,
    buf: ScratchBuf,
    /// Per request id: 0 unknown, 1 can run, 2 never.
    verdict: Vec<u8>,
    /// Per request id, for the outages of `calendar_epoch`: 0 unknown, 1 fits where the
    /// calendar's walk ends (nothing running, the vnodes down now still down), 2 does not.
    calendar_verdict: Vec<u8>,
    /// The outage epoch `calendar_verdict` was found for.
    calendar_epoch: u64,
    /// Per request id found never to run: why, in the placement's words.
    never_reason: Vec<Option<Arc<str>>>,
    /// Per job: whether its never-run comment was given.
    told: Vec<bool>,
    /// The jobs whose never-run comment this pass gave, to forget if the pass is retracted.
    told_in_pass: Vec<JobId>,
    /// This pass's comments, for [`placesim_core::SchedulingPolicy::drain_comments`].
    pub(crate) comments: Vec<(JobId, Arc<str>)>,
    /// Per job: the [`PbsComment`] (its index + 1) this bookkeeping last handed over for the
    /// job, with nothing said about the job since, or 0. Strict order and backfill comment
    /// every job behind the head at every pass; one that repeats the job's last comment is
    /// not made at all, rather than made and then found a repeat by the sink (on CTC-SP2
    /// under FCFS that was 95 % of the run).
    said: Vec<u8>,
    /// The `said` entries the last drain changed, with their values before, put back if
    /// its pass is retracted.
    said_before: Vec<(JobId, u8)>,
    /// The texts of [`PbsComment`]s, made once.
    pbs_texts: Vec<Arc<str>>,
    /// This pass's top-job estimates, for
    /// [`placesim_core::SchedulingPolicy::drain_estimates`].
    pub(crate) estimates: Vec<placesim_core::TopJobEstimate>,
    /// Per job: whether its relaxable constraint was dropped for good (SPANEVENLY).
    erased: Vec<bool>,
    /// Per job: when an anchored relaxation's wait began.
    anchor: Vec<Option<placesim_core::SimTime>>,
    /// The earliest anchored deadline still ahead, found in this pass: when to wake up.
    pub(crate) next_wakeup: Option<placesim_core::SimTime>,
    /// For relaxation decisions: earliest starts with and without the constraint; its idle
    /// state (the vnodes down still down) is also where [`Self::calendarable`] places.
    calendar: Calendar,
    /// Behind the view a job is placed in when site reservations start within its window.
    window_buf: ScratchBuf,
    /// Per job (sized at the first binding): what an earlier start bound it to (a Moab
    /// VARATTR value), honoured when a requeued job is placed again.
    bound: Vec<Option<Arc<str>>>,
}

/// Where a job goes now, and on which footing.
pub(crate) struct PlacedNow {
    /// The vnodes, if it fits now.
    pub(crate) allocation: Option<Allocation>,
    /// Whether it is placed (or waits) with its relaxable constraint dropped.
    pub(crate) relaxed: bool,
    /// Why it does not fit, in the placement's words.
    pub(crate) why: Option<Arc<str>>,
    /// Whether it does not fit only because it would overlap a site reservation: PBS's
    /// `RESERVATION_CONFLICT` then, not the placement's reason.
    pub(crate) conflict: bool,
}

/// A PBS comment the discipline itself gives (the placement gives the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PbsComment {
    /// `RESERVATION_CONFLICT`: the job fits now but would delay a top job.
    Conflict,
    /// `STRICT_ORDERING`: a job before it in the queue cannot run, and nothing is backfilled.
    StrictOrder,
}

impl PbsComment {
    const ALL: [PbsComment; 2] = [PbsComment::Conflict, PbsComment::StrictOrder];

    /// PBS's text (openpbs `job_info.cpp` `fctt`), with its `Not Running: ` prefix.
    pub(crate) const fn text(self) -> &'static str {
        match self {
            PbsComment::Conflict => "Not Running: Job would conflict with reservation or top job",
            PbsComment::StrictOrder => "Not Running: Job would break strict sorted order",
        }
    }
}

impl Runnable {
    /// Comments `comment` on `job` this pass. The text is one shared string, so a sink can
    /// tell a repeat by pointer.
    pub(crate) fn comment(&mut self, job: JobId, comment: PbsComment) {
        if self.pbs_texts.is_empty() {
            self.pbs_texts = PbsComment::ALL.map(|c| Arc::from(c.text())).to_vec();
        }
        if self.said(job, comment) {
            return;
        }
        let text = self.pbs_texts[comment as usize].clone();
        self.comments.push((job, text));
    }

    /// Whether `comment` is the last thing this bookkeeping said about `job`, with nothing
    /// said about it since: saying it again would be a repeat.
    pub(crate) fn said(&self, job: JobId, comment: PbsComment) -> bool {
        self.said.get(job.index()) == Some(&(comment as u8 + 1))
    }

    /// Moves this pass's comments into `out`, noting which of them were [`PbsComment`]s, so
    /// that the next pass does not repeat them.
    pub(crate) fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        self.said_before.clear();
        for (job, text) in &self.comments {
            let said = self
                .pbs_texts
                .iter()
                .position(|t| Arc::ptr_eq(t, text))
                .map_or(0, |k| k as u8 + 1);
            if self.said.len() <= job.index() {
                self.said.resize(job.index() + 1, 0);
            }
            let before = std::mem::replace(&mut self.said[job.index()], said);
            self.said_before.push((*job, before));
        }
        out.append(&mut self.comments);
    }

    /// Something else (a wrapper's comment) was said about `job` since this bookkeeping's
    /// last comment on it: its next comment is news again.
    pub(crate) fn superseded(&mut self, job: JobId) {
        if let Some(said) = self.said.get_mut(job.index()) {
            *said = 0;
        }
    }

    /// Comments once that `job` can never run.
    pub(crate) fn tell_never(&mut self, ctx: &SchedContext<'_>, job: JobId) {
        if self.told.len() != ctx.workload.jobs().len() {
            self.told = vec![false; ctx.workload.jobs().len()];
        }
        if std::mem::replace(&mut self.told[job.index()], true) {
            return;
        }
        self.told_in_pass.push(job);
        let request = ctx.workload.job(job).request.index();
        let reason = self
            .never_reason
            .get(request)
            .cloned()
            .flatten()
            .unwrap_or_else(|| {
                Arc::from("Can Never Run: the request does not fit on the empty cluster")
            });
        self.comments.push((job, reason));
    }

    /// Forgets the last pass: its comments, its estimates, and which never-run comments it
    /// gave ([`placesim_core::SchedulingPolicy::retract_pass`]).
    pub(crate) fn retract(&mut self) {
        for job in self.told_in_pass.drain(..) {
            self.told[job.index()] = false;
        }
        for (job, before) in self.said_before.drain(..).rev() {
            self.said[job.index()] = before;
        }
        self.comments.clear();
        self.estimates.clear();
    }

    /// Whether `job` is already known never to run: a queue scan passes it over without
    /// trying to place it.
    pub(crate) fn known_never(&self, ctx: &SchedContext<'_>, job: JobId) -> bool {
        let request_id = ctx.workload.job(job).request.index();
        self.verdict.get(request_id) == Some(&2)
    }

    /// Records what this pass's starts bind their jobs to
    /// ([`placesim_core::SetConstraints::binding`]); a job keeps its first binding.
    pub(crate) fn record_bindings(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        decisions: &[Decision],
    ) {
        let Some(constraints) = placement.constraints() else {
            return;
        };
        for Decision::Start { job, allocation } in decisions {
            let Some(binding) = constraints.binding(ctx.workload.request_of(*job), allocation)
            else {
                continue;
            };
            if self.bound.len() != ctx.workload.jobs().len() {
                self.bound = vec![None; ctx.workload.jobs().len()];
            }
            self.bound[job.index()].get_or_insert(binding);
        }
    }

    /// Where `job` goes in `view` by its request alone (no relaxation), honouring a binding;
    /// the view is settled first ([`Scratch::settle`]).
    pub(crate) fn place_plain(
        &self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
        view: &mut Scratch<'_>,
    ) -> Option<Allocation> {
        view.settle();
        let request = ctx.workload.request_of(job);
        match self.bound_to(job) {
            Some(bound) => match placement.constraints() {
                Some(constraints) => constraints.place_bound(request, view, bound),
                None => placement.place(request, view),
            },
            None => placement.place(request, view),
        }
    }

    /// What an earlier start bound `job` to, if anything.
    fn bound_to(&self, job: JobId) -> Option<&str> {
        self.bound.get(job.index()).and_then(Option::as_deref)
    }

    /// Whether `job` is placed with its relaxable constraint dropped for good.
    pub(crate) fn erased(&self, job: JobId) -> bool {
        self.erased.get(job.index()).copied().unwrap_or(false)
    }

    /// Where `job` goes in `now_view`, honouring a relaxation (NODESETPLUS DELAY or
    /// SPANEVENLY): when its own placement fails now, the constraint is dropped if the
    /// earliest start with it is more than the relaxation's delay after the earliest start
    /// without it, or now for [`RelaxationWait::FromNow`] (or it has none); SPANEVENLY drops
    /// it for good.
    /// An anchored relaxation instead drops it once `delay` has passed since the job could
    /// first have run without it, and asks for a wake-up at that instant. `cheap_first`
    /// tries the ncpus total before placing.
    pub(crate) fn place_now(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
        now_view: &mut Scratch<'_>,
        decisions: &[Decision],
        cheap_first: bool,
    ) -> PlacedNow {
        let request = ctx.workload.request_of(job);
        if self.bound_to(job).is_some() {
            // A bound job goes where its binding says, or waits: no relaxation.
            let allocation = self.place_plain(ctx, placement, job, now_view);
            return PlacedNow {
                why: allocation.is_none().then(|| placement.refusal()).flatten(),
                allocation,
                relaxed: false,
                conflict: false,
            };
        }
        let relaxed = self.erased(job);
        let (allocation, asked) = if cheap_first && !relaxed {
            match try_place(ctx, placement, now_view, job) {
                Some(placed) => (placed, true),
                None => (None, false),
            }
        } else {
            now_view.settle();
            (place_on(placement, request, now_view, relaxed), true)
        };
        // The placement's reason is about the last request it was asked to place: none when
        // the totals turned this one away before it was asked.
        let why = if allocation.is_none() && asked {
            placement.refusal()
        } else {
            None
        };
        let rx = relaxation_of(placement, request);
        let Some(rx) = rx.filter(|_| allocation.is_none() && !relaxed) else {
            return PlacedNow {
                allocation,
                relaxed,
                why,
                conflict: false,
            };
        };
        now_view.settle();
        let relaxed_now = place_on(placement, request, now_view, true);
        let drop_constraint = if rx.wait == RelaxationWait::Anchored {
            // The wait starts the first time the job could run without the constraint; once
            // it has lasted `delay`, the constraint is gone (the job also reserves without it).
            if self.anchor.len() != ctx.workload.jobs().len() {
                self.anchor = vec![None; ctx.workload.jobs().len()];
            }
            let anchor = match self.anchor[job.index()] {
                Some(anchor) => Some(anchor),
                None if relaxed_now.is_some() => Some(ctx.now),
                None => None,
            };
            self.anchor[job.index()] = anchor;
            anchor.is_some_and(|anchor| {
                let deadline = anchor + rx.delay;
                if ctx.now < deadline {
                    self.next_wakeup = Some(self.next_wakeup.map_or(deadline, |t| t.min(deadline)));
                }
                ctx.now >= deadline
            })
        } else {
            let (mut walk, mut shadow) = self.calendar.open(ctx.state);
            let strict =
                walk.earliest(ctx, placement, job, false, now_view, &mut shadow, decisions);
            let relaxed_at = if relaxed_now.is_some() {
                Some(ctx.now)
            } else {
                walk.earliest(ctx, placement, job, true, now_view, &mut shadow, decisions)
            };
            let reference = if rx.wait == RelaxationWait::FromNow {
                relaxed_at.map(|_| ctx.now)
            } else {
                relaxed_at
            };
            match (strict, reference) {
                (Some(s), Some(r)) => s > r + rx.delay,
                (None, Some(_)) => true,
                (_, None) => false,
            }
        };
        if !drop_constraint {
            return PlacedNow {
                allocation: None,
                relaxed: false,
                why,
                conflict: false,
            };
        }
        if rx.lasts == RelaxationLasts::ForGood {
            if self.erased.len() != ctx.workload.jobs().len() {
                self.erased = vec![false; ctx.workload.jobs().len()];
            }
            self.erased[job.index()] = true;
        }
        PlacedNow {
            why: relaxed_now.is_none().then(|| placement.refusal()).flatten(),
            allocation: relaxed_now,
            relaxed: true,
            conflict: false,
        }
    }

    /// [`Self::place_now`] for a job that would run from now until its estimated end, kept
    /// off the site reservations that start before then ([`reserved`]): placed in `now_view`
    /// less what their windows keep. A job that fits only by overlapping one waits with PBS's
    /// conflict comment. Without reservations to come, exactly [`Self::place_now`].
    pub(crate) fn place_now_kept_off(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
        now_view: &mut Scratch<'_>,
        decisions: &[Decision],
        cheap_first: bool,
    ) -> PlacedNow {
        let holds = reserved::any(ctx)
            .then(|| {
                now_view.settle();
                reserved::window_holds(
                    ctx,
                    now_view,
                    Some(job),
                    ctx.now,
                    ctx.now + ctx.workload.job(job).estimate,
                    reserved::releases(ctx, decisions),
                )
            })
            .flatten();
        let Some(holds) = holds else {
            return self.place_now(ctx, placement, job, now_view, decisions, cheap_first);
        };
        let mut buf = std::mem::take(&mut self.window_buf);
        let mut placed = {
            let mut window = Scratch::new(ctx.state, &mut buf);
            window.copy_from(now_view);
            holds.take_in(&mut window);
            self.place_now(ctx, placement, job, &mut window, decisions, cheap_first)
        };
        self.window_buf = buf;
        if placed.allocation.is_none() {
            placed.conflict = self.place_plain(ctx, placement, job, now_view).is_some();
        }
        placed
    }

    /// Whether a calendar can find `job` a start time: whether it fits the cluster with
    /// nothing running but the vnodes down now still down, where releasing every running job
    /// and reservation at its estimated end leads (a scheduler does not know when a vnode
    /// comes back). PBS finds no start time for a job that does not, and the job uses no
    /// top-job slot (queue-disciplines.md §2.4, step 4), so a later job may take it. With
    /// every vnode up, this is [`Self::can_ever_run`].
    pub(crate) fn calendarable(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
    ) -> bool {
        if !ctx.state.any_down() {
            return self.can_ever_run(ctx, placement, job);
        }
        let epoch = ctx.state.outage_epoch();
        if self.calendar_epoch != epoch
            || self.calendar_verdict.len() != ctx.workload.requests().len()
        {
            self.calendar_epoch = epoch;
            self.calendar_verdict = vec![0; ctx.workload.requests().len()];
        }
        let request_id = ctx.workload.job(job).request.index();
        if self.calendar_verdict[request_id] == 0 {
            let idle = self.calendar.idle(ctx.state);
            let view = Scratch::new(idle, &mut self.buf);
            let fits = fits_idle(placement, ctx.workload.request_of(job), &view);
            self.calendar_verdict[request_id] = if fits { 1 } else { 2 };
        }
        self.calendar_verdict[request_id] == 1
    }

    pub(crate) fn can_ever_run(
        &mut self,
        ctx: &SchedContext<'_>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
    ) -> bool {
        let request_id = ctx.workload.job(job).request.index();
        if self.verdict.len() != ctx.workload.requests().len() {
            self.verdict = vec![0; ctx.workload.requests().len()];
        }
        if self.verdict[request_id] == 0 {
            let empty = idle_of(&mut self.empty, ctx.state, false);
            let view = Scratch::new(empty, &mut self.buf);
            let fits = fits_idle(placement, ctx.workload.request_of(job), &view);
            self.verdict[request_id] = if fits { 1 } else { 2 };
            if !fits {
                self.never_reason
                    .resize(ctx.workload.requests().len(), None);
                self.never_reason[request_id] = placement.refusal();
            }
        }
        self.verdict[request_id] == 1
    }
}

/// Whether `request` can be placed on `idle`, a state with nothing running, with its
/// relaxable constraint dropped if it must be: whether a job could ever run there.
fn fits_idle(placement: &mut dyn PlacementPolicy, request: &Request, idle: &Scratch<'_>) -> bool {
    placement.place(request, idle).is_some()
        || (relaxation_of(placement, request).is_some()
            && place_on(placement, request, idle, true).is_some())
}

/// The idle copy of `state` kept in `slot`: with nothing running and, when `keep_outages`,
/// the vnodes down now still down (what estimated ends lead to), else all up (what "could
/// this ever run" is asked of). Made on first use, and again if the cluster, its tracked
/// sets or (when kept) its outages are not the ones it was made from; its clock is `state`'s,
/// so that a view built over it places by the rules in force now.
pub(crate) fn idle_of<'a>(
    slot: &'a mut Option<ClusterState>,
    state: &ClusterState,
    keep_outages: bool,
) -> &'a ClusterState {
    idle_made(slot, state, keep_outages).0
}

/// [`idle_of`], and whether this call made the copy (anew, or for the first time).
pub(crate) fn idle_made<'a>(
    slot: &'a mut Option<ClusterState>,
    state: &ClusterState,
    keep_outages: bool,
) -> (&'a ClusterState, bool) {
    if idle_is_stale(slot, state, keep_outages) {
        *slot = None;
    }
    let made = slot.is_none();
    let idle = slot.get_or_insert_with(|| {
        if keep_outages {
            state.unoccupied_copy()
        } else {
            state.idle_copy()
        }
    });
    idle.set_now(state.now());
    (idle, made)
}

/// Whether the idle copy in `slot` was made from another cluster, other tracked sets or (when
/// `keep_outages`) other outages than `state`'s. An empty slot is not stale.
pub(crate) fn idle_is_stale(
    slot: &Option<ClusterState>,
    state: &ClusterState,
    keep_outages: bool,
) -> bool {
    let n_vnodes = placesim_core::StateView::cluster(state).n_vnodes();
    slot.as_ref().is_some_and(|e| {
        placesim_core::StateView::cluster(e).n_vnodes() != n_vnodes
            || e.tracked_sets().len() != state.tracked_sets().len()
            || (keep_outages && e.outage_epoch() != state.outage_epoch())
    })
}

/// Starts queue heads in order while they fit, taking each from `scratch` and appending a
/// decision; a job that can never run is passed over. In [`Order::Strict`], stops at the
/// first job that could run but does not fit now and returns its position (the queue length
/// if there is none) and whether it waits with its relaxable constraint dropped: step 1 of
/// FCFS. In [`Order::Calendared`], likewise past the jobs no calendar can place: step 1 of
/// EASY and of deeper backfilling. In [`Order::AnyThatFits`], goes on past it (greedy).
/// `None` when the context's [`placesim_core::StartGate`] ends the pass before a start: the
/// caller returns at once.
pub(crate) fn start_heads(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    runnable: &mut Runnable,
    scratch: &mut Scratch<'_>,
    decisions: &mut Vec<Decision>,
    order: Order,
) -> Option<(usize, bool)> {
    // A placement that explains itself is asked even when the totals already say no, so
    // that the blocked head gets its reason.
    let cheap_first = !placement.explains_refusals();
    // A placement that relaxes its constraints anchors a job's wait at a pass that could have
    // placed it without them: the gate is not asked, so that a pass always reaches the same
    // jobs, and anchors the same waits, as it would run whole.
    let gate = ctx.start_gate.filter(|_| placement.constraints().is_none());
    runnable.next_wakeup = None;
    runnable.told_in_pass.clear();
    runnable.said_before.clear();
    let from = match order {
        Order::Strict | Order::Calendared => 0,
        Order::AnyThatFits { from } => from,
    };
    for (pos, &job) in ctx.queue.iter().enumerate().skip(from) {
        if runnable.known_never(ctx, job) {
            runnable.tell_never(ctx, job);
            continue;
        }
        let placed =
            runnable.place_now_kept_off(ctx, placement, job, scratch, decisions, cheap_first);
        if let Some(allocation) = placed.allocation {
            if gate.is_some_and(|gate| gate.stops_before(job, decisions)) {
                return None;
            }
            start(job, allocation, scratch, decisions);
            continue;
        }
        if runnable.can_ever_run(ctx, placement, job) {
            if placed.conflict {
                runnable.comment(job, PbsComment::Conflict);
            } else if let Some(why) = placed.why {
                runnable.comments.push((job, why));
            }
            let heads = match order {
                Order::Strict => true,
                // A job no calendar can place (it needs vnodes that are down) takes no
                // top-job slot: the next blocked job may.
                Order::Calendared => runnable.calendarable(ctx, placement, job),
                Order::AnyThatFits { .. } => false,
            };
            if heads {
                return Some((pos, placed.relaxed));
            }
            continue;
        }
        runnable.tell_never(ctx, job);
    }
    Some((ctx.queue.len(), false))
}

/// How far a pass that starts queue heads goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Up to the first job that cannot start now (it heads the queue for what follows).
    Strict,
    /// Up to the first job that cannot start now and that a calendar can place (it heads the
    /// queue and gets the first top-job slot); a job that cannot start and needs vnodes that
    /// are down is passed over, as PBS passes over a top job it finds no start time for.
    Calendared,
    /// Through the whole queue from position `from`, starting every job that fits.
    AnyThatFits {
        /// Where the scan begins.
        from: usize,
    },
}

/// Where `job` would go in `scratch` now, trying the cheap ncpus total first: `None` when the
/// total turned it away before the placement was asked (leaving a deferred take unapplied,
/// [`Scratch::take_deferred`]), else the placement's answer.
pub(crate) fn try_place(
    ctx: &SchedContext<'_>,
    placement: &mut dyn PlacementPolicy,
    scratch: &mut Scratch<'_>,
    job: JobId,
) -> Option<Option<Allocation>> {
    if ctx.workload.ncpus_of(job)
        > placesim_core::StateView::free_total(scratch, ConsumableIdx::NCPUS)
    {
        return None;
    }
    scratch.settle();
    Some(placement.place(ctx.workload.request_of(job), scratch))
}

/// Takes `allocation` in the scratch view and records the decision to start `job` on it. The
/// take reaches the view's rows only when a later placement in the pass reads them
/// ([`Scratch::take_deferred`]): most often none does.
pub(crate) fn start(
    job: JobId,
    allocation: Allocation,
    scratch: &mut Scratch<'_>,
    decisions: &mut Vec<Decision>,
) {
    scratch.take_deferred(&allocation);
    decisions.push(Decision::Start { job, allocation });
}
