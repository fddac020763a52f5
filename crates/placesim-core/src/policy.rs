//! The decision interfaces: a scheduling policy decides which waiting jobs start, a placement
//! policy decides on which vnodes a request goes.
//!
//! Both are decision processes: they read a view of the run and return decisions; the kernel
//! validates each decision against the real state and applies it. A policy never sees the
//! event queue and never changes [`ClusterState`].

use crate::ids::JobId;
use crate::job::Workload;
use crate::request::{Request, RequestFeature};
use crate::state::{Allocation, ClusterState, Scratch};
use crate::time::SimTime;
use std::sync::Arc;

/// A job that is running, as policies see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningJob {
    /// The job.
    pub job: JobId,
    /// When it started.
    pub start: SimTime,
    /// start + estimate: when schedulers must assume it ends. Never the true end.
    pub estimated_end: SimTime,
    /// What it holds.
    pub allocation: Allocation,
}

/// Which positions of the kernel's running list have changed, in order, so that a policy
/// that keeps something per running job between passes (a calendar's list of ends) reads
/// only what changed since it last looked, not the whole list at every pass.
///
/// A start writes the position it appends; an end writes the position its job leaves (the
/// last job moves there) and the old last position, now past the list's end. A reader keeps
/// the [`RunningLog::mark`] it last read up to. The log forgets its oldest positions once it
/// holds more than the running list would need rebuilding from, so a reader that has not
/// looked for long is told to read the whole list again ([`RunningLog::since`] gives `None`).
#[derive(Debug)]
pub struct RunningLog {
    /// Which log this is: a mark read from another (a policy used again in another run) is
    /// not taken for one of this log's.
    id: u64,
    /// How many positions were logged before `positions[0]`.
    forgotten: u64,
    positions: Vec<u32>,
}

/// Where a reader stopped reading a [`RunningLog`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogMark {
    log: u64,
    logged: u64,
}

/// The next [`RunningLog`]'s id.
static NEXT_RUNNING_LOG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Default for RunningLog {
    fn default() -> Self {
        RunningLog {
            id: NEXT_RUNNING_LOG.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            forgotten: 0,
            positions: Vec::new(),
        }
    }
}

impl RunningLog {
    /// Positions logged beyond this many times the running list's length (plus a constant)
    /// are forgotten: reading the whole list again costs about as much as reading them.
    const KEEP_PER_RUNNING: usize = 2;
    const KEEP_AT_LEAST: usize = 1024;

    /// Where the log stands: what a reader that has read everything remembers.
    pub fn mark(&self) -> LogMark {
        LogMark {
            log: self.id,
            logged: self.forgotten + self.positions.len() as u64,
        }
    }

    /// The positions logged after `mark` (a position may come more than once, and may lie
    /// past the list's end), or `None` when the log no longer reaches back to it or `mark`
    /// is another log's.
    pub fn since(&self, mark: LogMark) -> Option<&[u32]> {
        if mark.log != self.id {
            return None;
        }
        let from = usize::try_from(mark.logged.checked_sub(self.forgotten)?).ok()?;
        self.positions.get(from..)
    }

    /// Logs a write of `position`, with the running list now `running_len` long.
    pub(crate) fn wrote(&mut self, position: usize, running_len: usize) {
        let keep = Self::KEEP_AT_LEAST + Self::KEEP_PER_RUNNING * running_len;
        if self.positions.len() >= keep {
            self.forgotten += self.positions.len() as u64;
            self.positions.clear();
        }
        self.positions.push(position as u32);
    }
}

/// A top job's estimate: when a pass calendared it to start, and on which vnodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopJobEstimate {
    /// The job.
    pub job: JobId,
    /// When it would start.
    pub start: SimTime,
    /// Where, when the pass placed it on vnodes; `None` when it reasoned on ncpus totals
    /// (any free vnodes would do). Shared with the policy's own record of the pass, so that
    /// reporting an estimate at every pass copies no vnode list.
    pub allocation: Option<std::sync::Arc<Allocation>>,
}

/// What an adapter around a discipline may ask of its pass: to end the pass at once, before
/// it starts a job that would make the pass one the adapter throws away. An adapter that runs
/// the discipline's pass again when a start breaks one of its rules (Moab's throttling limits)
/// learns so as that start is about to be made, rather than after the pass has placed every
/// job behind it for nothing.
pub trait StartGate: std::fmt::Debug {
    /// Whether the pass ends before starting `job` as the next of `decisions` (its starts so
    /// far, in the order made). Asked only where the pass starts jobs in queue order with
    /// nothing calendared before them (the queue heads that fit), so that every start before
    /// `job` comes before it in the queue too. A pass told to end returns at once, with no
    /// estimates; the adapter throws it away ([`SchedulingPolicy::retract_pass`]). A pass that
    /// would leave other state behind for the next than a whole pass does (deeper
    /// backfilling's kept reservations, a relaxed placement's anchored waits) does not ask:
    /// a gate saves work, and never changes what the adapter decides.
    fn stops_before(&self, job: JobId, decisions: &[Decision]) -> bool;
}

/// What a scheduling pass may read.
#[derive(Debug, Clone, Copy)]
pub struct SchedContext<'a> {
    /// The current instant.
    pub now: SimTime,
    /// What is free where.
    pub state: &'a ClusterState,
    /// Every job and request of the run.
    pub workload: &'a Workload,
    /// Waiting jobs, in queue order (submit time, then source order).
    pub queue: &'a [JobId],
    /// Running jobs, in no particular order.
    pub running: &'a [RunningJob],
    /// Where `running` changed: the kernel's log of its list, or `None` when `running` is
    /// another list (a wrapper's own, which it may rebuild at will).
    pub running_log: Option<&'a RunningLog>,
    /// Where in `queue` the jobs that arrived since the previous pass begin: jobs before it
    /// were in the queue when the previous pass ended.
    pub fresh_from: usize,
    /// Whether any job ended (or a policy's wake-up came) since the previous pass. When none
    /// did, nothing was freed and a policy may keep conclusions about the older jobs.
    pub freed_since_last_pass: bool,
    /// The site's reservations not yet ended, by start: those open now hold their vnodes in
    /// `state`; every one still to come must be kept free of jobs that would overlap it.
    pub reservations: &'a [crate::SiteReservation],
    /// The reservations not yet ended that have a queue of their own: a waiting job of that
    /// queue starts only inside its reservation's universe while the window is open, placed
    /// there, never in `state` (and is never in `running`).
    pub reservation_queues: &'a [crate::ReservationQueue],
    /// Reservations requested and not yet confirmed or denied, in submission order, with
    /// their indices in the run's list of requests: a pass confirms or denies each
    /// ([`SchedulingPolicy::drain_confirmations`]).
    pub reservation_requests: &'a [(u32, crate::ReservationRequest)],
    /// An adapter's gate on the queue heads' starts ([`StartGate`]); `None` from the kernel.
    pub start_gate: Option<&'a dyn StartGate>,
    /// Whether the top-job estimates' vnodes are read ([`crate::MetricsSink::reads_estimated_vnodes`]).
    /// When they are not, a pass reports each estimate without them
    /// ([`TopJobEstimate::allocation`] `None`), and copies no vnode list for it.
    pub estimate_vnodes: bool,
}

/// A decision a scheduling pass returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Start a waiting job now on these resources.
    Start {
        /// The job.
        job: JobId,
        /// Where it runs.
        allocation: Allocation,
    },
}

/// A queue discipline: which jobs start now.
pub trait SchedulingPolicy: Send {
    /// A short name for output rows, e.g. `easy`.
    fn name(&self) -> String;

    /// Appends this pass's decisions to `decisions`, in the order they must be applied.
    /// Decisions are applied one after another, so a policy must account for its own earlier
    /// decisions of the pass (a [`Scratch`] view does that).
    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>);

    /// Moves the job comments of the last pass into `out`: why a job did not start, in the
    /// scheduler's own words (PBS's "Not Running: ...", "Can Never Run: ..."). The kernel
    /// hands them to the sink. The default has none.
    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        let _ = out;
    }

    /// A policy wrapped around this one has just commented `job` (a limit, a priority
    /// threshold): the job's last comment is no longer this policy's, so a comment this
    /// policy would leave out as a repeat of its own last one is news again. The default
    /// keeps no such memory.
    fn comment_superseded(&mut self, job: JobId) {
        let _ = job;
    }

    /// Whether this policy wants a pass at every instant something happens (a submit, an
    /// end, a periodic cycle while jobs run) even when no job waits, as PBS runs a cycle
    /// then: PBS's fairshare accrues running jobs' usage at each cycle. The default wants
    /// passes only while jobs wait.
    fn passes_when_idle(&self) -> bool {
        false
    }

    /// Whether the last pass, which started and calendared no job from `place` on in its
    /// queue, would have made the same decisions and estimates with the jobs from there on
    /// in any other order, and said the same of each of them: only its comments on those
    /// jobs would have come in their new order, after every comment on the jobs before. So
    /// an adapter that finds the jobs after a pass's last decision out of order (PBS's
    /// fairshare order, sorted again as the pass goes) may keep the pass and put those
    /// comments in order, rather than run it again. The default: not known, so the pass is
    /// run again.
    fn decides_alike_in_any_order_after(&self, place: usize) -> bool {
        let _ = place;
        false
    }

    /// The last pass's decisions were not applied and its comments were not shown: forget
    /// what it noted to tell only once (a job that can never run), so that the next pass
    /// tells it again. A policy that runs another's pass several times per instant (PBS's
    /// fairshare order) calls it for each run it drops. The default has nothing to forget.
    fn retract_pass(&mut self) {}

    /// Moves the top-job estimates of the last pass into `out`: for each job the pass
    /// calendared, when and where it would start (PBS's `estimated.start_time` and
    /// `estimated.exec_vnode`). The kernel hands them to the sink. The default has none.
    fn drain_estimates(&mut self, out: &mut Vec<TopJobEstimate>) {
        let _ = out;
    }

    /// Moves the last pass's answers to reservation requests into `out`: each request (by
    /// its index in the run's list) with the vnodes it is confirmed on, or `None` when it is
    /// denied. The kernel holds a confirmed one as a [`crate::SiteReservation`] from then on.
    /// The default answers none.
    fn drain_confirmations(&mut self, out: &mut Vec<(u32, Option<Allocation>)>) {
        let _ = out;
    }

    /// Moves the job priorities of the last pass into `out`: the value each waiting job was
    /// ordered by (PBS's `job_sort_formula`), reported when it changed. The kernel hands them
    /// to the sink. The default has none.
    fn drain_priorities(&mut self, out: &mut Vec<(JobId, f64)>) {
        let _ = out;
    }

    /// The next instant at which this policy wants a pass even if no job arrives or ends (an
    /// anchored NODESETDELAY running out), asked after each pass. The default wants none.
    fn wakeup(&self) -> Option<SimTime> {
        None
    }

    /// For the kernel's invariant checks: whether `allocation`, which this policy chose for
    /// `request`, lies inside the set its label names (or spans by its own rules). The
    /// default finds nothing wrong.
    fn check_start(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        let _ = (request, allocation);
        Ok(())
    }
}

/// A placement rule: where a request would go in a given (possibly what-if) state.
pub trait PlacementPolicy: Send {
    /// A short name for output rows, e.g. `first-fit`.
    fn name(&self) -> String;

    /// The vnodes `request` would take in `view`, or `None` if it does not fit there now.
    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation>;

    /// The parts of the request language beyond plain chunks that this policy honours.
    fn supports(&self) -> &'static [RequestFeature];

    /// What part of `request` this policy cannot honour, if any, so that a run refuses such a
    /// request before it starts instead of placing it wrongly. The default names the first
    /// feature it uses that [`Self::supports`] does not list.
    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        request
            .first_unsupported(self.supports())
            .map(RequestFeature::describe)
    }

    /// Why the last [`Self::place`] that returned `None` did, as a job comment in the
    /// scheduler's words, if the policy says. The default says nothing.
    fn refusal(&self) -> Option<Arc<str>> {
        None
    }

    /// Whether [`Self::refusal`] says anything, so that a discipline asks for a blocked job's
    /// reason even where a cheaper test already told it the job does not fit.
    fn explains_refusals(&self) -> bool {
        false
    }

    /// Whether, in `view`, `place` succeeds exactly when the view's free totals cover the
    /// request's totals, and taking the request lowers the totals by exactly its totals. When
    /// it holds for the jobs involved, queue disciplines may reason on totals alone and place
    /// vnodes only for the jobs they start. The default, `false`, is always safe. It reads
    /// only the view's totals, never a vnode: a pass asks it of a view whose last take may not
    /// be in the rows yet ([`Scratch::take_deferred`]).
    fn fits_by_totals(&self, request: &Request, view: &Scratch<'_>) -> bool {
        let _ = (request, view);
        false
    }

    /// The request's half of deciding fit on totals where a run limit can bind: whether, in
    /// any view where [`Self::totals_decide_view`] holds, `place` succeeds exactly when the
    /// view's free totals cover the request's totals and each run limit this placement holds
    /// the request to has room for its draw ([`crate::StateView::short_limit`]), taking the
    /// totals and the draws and nothing else. A discipline that carries each limit's room
    /// through its calendar beside the totals (EASY) may then reason on the two, where
    /// [`Self::fits_by_totals`] leaves a limit that can bind to the vnodes. It depends on the
    /// request alone, so a discipline may remember it per request: EASY asks it of every
    /// candidate of every pass. The default, `false`, is always safe.
    fn totals_decide_request(&self, request: &Request) -> bool {
        let _ = request;
        false
    }

    /// The view's half of [`Self::totals_decide_request`]: whether `view` is one where its
    /// answer holds. Like [`Self::fits_by_totals`], it reads only the view's totals. The
    /// default, `false`, is always safe.
    fn totals_decide_view(&self, view: &Scratch<'_>) -> bool {
        let _ = view;
        false
    }

    /// Whether [`Self::place`]'s answer depends only on the request and the state of the view
    /// (not on the time, nor on earlier calls), so that a discipline may reuse an answer for
    /// the same request in the same state. The default, `false`, is always safe.
    fn depends_only_on_state(&self) -> bool {
        false
    }

    /// For the kernel's invariant checks: whether `allocation`, which this placement chose for
    /// `request`, lies inside the set its label names (a job that spanned passes). The
    /// default finds nothing wrong.
    fn check_within_label(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        let _ = (request, allocation);
        Ok(())
    }

    /// The set constraints this policy may relax or bind (Moab node sets), which the
    /// disciplines honour; `None`, the default, for a placement without any.
    fn constraints(&mut self) -> Option<&mut dyn SetConstraints> {
        None
    }
}

/// What a placement with set constraints that can be dropped after a bounded wait or that
/// bind a job for good (Moab node sets: NODESETPLUS DELAY and SPANEVENLY, VARATTR) offers the
/// queue disciplines, through [`PlacementPolicy::constraints`].
pub trait SetConstraints {
    /// Whether `request` has a constraint this policy may drop after a bounded wait: the
    /// discipline then compares the earliest start with [`PlacementPolicy::place`] against the
    /// earliest with [`Self::place_relaxed`], and waits for the first only while it is within
    /// the relaxation's delay of the second.
    fn relaxation(&self, request: &Request) -> Option<Relaxation>;

    /// Where `request` would go in `view` with its droppable constraint dropped.
    fn place_relaxed(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation>;

    /// What starting `request` on `allocation` binds the job to for good, if anything: a Moab
    /// VARATTR value, which the job keeps across a requeue.
    fn binding(&self, request: &Request, allocation: &Allocation) -> Option<Arc<str>>;

    /// Where `request` goes in `view` once an earlier start bound it to `bound` (see
    /// [`Self::binding`]).
    fn place_bound(
        &mut self,
        request: &Request,
        view: &Scratch<'_>,
        bound: &str,
    ) -> Option<Allocation>;
}

/// A constraint a placement may drop after a bounded wait (see
/// [`SetConstraints::relaxation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Relaxation {
    /// How much later than the relaxed start the constrained start may be.
    pub delay: crate::time::SimDuration,
    /// Whether dropping the constraint is for good or decided again at every pass.
    pub lasts: RelaxationLasts,
    /// What the wait of `delay` is measured against.
    pub wait: RelaxationWait,
}

/// How long a dropped constraint stays dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelaxationLasts {
    /// Decided again at every pass (NODESETPLUS DELAY): a job that could not start relaxed
    /// gets its constraint back at the next pass.
    EachPass,
    /// For good (SPANEVENLY erases the job's node sets).
    ForGood,
}

/// What a relaxation's wait is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelaxationWait {
    /// The constrained start may be at most `delay` after the earliest relaxed start, both
    /// predicted from estimated ends.
    FromEarliestRelaxed,
    /// The constrained start may be at most `delay` after now, if the job could start
    /// relaxed at all.
    FromNow,
    /// Slurm's `--switches` model: the wait starts the first time the job could run relaxed
    /// now, and the constraint is dropped once `delay` has passed since then, instead of
    /// being predicted from estimated ends.
    Anchored,
}

impl<P: SchedulingPolicy + ?Sized> SchedulingPolicy for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        (**self).schedule(ctx, decisions);
    }
    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        (**self).drain_comments(out);
    }
    fn comment_superseded(&mut self, job: JobId) {
        (**self).comment_superseded(job);
    }
    fn drain_estimates(&mut self, out: &mut Vec<TopJobEstimate>) {
        (**self).drain_estimates(out);
    }
    fn drain_confirmations(&mut self, out: &mut Vec<(u32, Option<Allocation>)>) {
        (**self).drain_confirmations(out);
    }
    fn retract_pass(&mut self) {
        (**self).retract_pass();
    }
    fn decides_alike_in_any_order_after(&self, place: usize) -> bool {
        (**self).decides_alike_in_any_order_after(place)
    }
    fn passes_when_idle(&self) -> bool {
        (**self).passes_when_idle()
    }
    fn drain_priorities(&mut self, out: &mut Vec<(JobId, f64)>) {
        (**self).drain_priorities(out);
    }
    fn wakeup(&self) -> Option<SimTime> {
        (**self).wakeup()
    }
    fn check_start(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        (**self).check_start(request, allocation)
    }
}

impl<P: PlacementPolicy + ?Sized> PlacementPolicy for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        (**self).place(request, view)
    }
    fn fits_by_totals(&self, request: &Request, view: &Scratch<'_>) -> bool {
        (**self).fits_by_totals(request, view)
    }
    fn totals_decide_request(&self, request: &Request) -> bool {
        (**self).totals_decide_request(request)
    }
    fn totals_decide_view(&self, view: &Scratch<'_>) -> bool {
        (**self).totals_decide_view(view)
    }
    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        (**self).unsupported(request)
    }
    fn refusal(&self) -> Option<Arc<str>> {
        (**self).refusal()
    }
    fn explains_refusals(&self) -> bool {
        (**self).explains_refusals()
    }
    fn depends_only_on_state(&self) -> bool {
        (**self).depends_only_on_state()
    }
    fn check_within_label(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        (**self).check_within_label(request, allocation)
    }
    fn supports(&self) -> &'static [RequestFeature] {
        (**self).supports()
    }
    fn constraints(&mut self) -> Option<&mut dyn SetConstraints> {
        (**self).constraints()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader sees the positions written after its mark, in order, repeats included; once
    /// the log has forgotten past a mark, or the mark is another log's, it is told to read the
    /// whole list.
    #[test]
    fn the_running_log_gives_what_changed_since_a_mark() {
        let mut log = RunningLog::default();
        let start = log.mark();
        assert_eq!(log.since(start), Some(&[][..]));
        log.wrote(0, 1);
        log.wrote(1, 2);
        let middle = log.mark();
        // The job at 0 ends: the job at 1 moves there, and position 1 is past the end.
        log.wrote(0, 1);
        log.wrote(1, 1);
        assert_eq!(log.since(start), Some(&[0, 1, 0, 1][..]));
        assert_eq!(log.since(middle), Some(&[0, 1][..]));
        assert_eq!(RunningLog::default().since(middle), None);
        // With one job running, the log keeps KEEP_AT_LEAST + 2 positions, then forgets them.
        let keep = RunningLog::KEEP_AT_LEAST + RunningLog::KEEP_PER_RUNNING;
        for _ in log.positions.len()..keep {
            log.wrote(0, 1);
        }
        let full = log.mark();
        assert_eq!(log.since(middle).map(<[u32]>::len), Some(keep - 2));
        log.wrote(0, 1);
        assert_eq!(log.since(middle), None);
        assert_eq!(log.since(full), Some(&[0][..]));
    }
}
