//! The kernel: the clock, the event loop, and the application of policy decisions.

use crate::event::{Event, EventQueue};
use crate::ids::{JobId, VnodeId};
use crate::invariants::{Invariants, Stop};
use crate::job::Workload;
use crate::outage::{NodeFailurePolicy, Outage, Service};
use crate::policy::{Decision, RunningJob, RunningLog, SchedContext, SchedulingPolicy};
use crate::reservation::{ReservationQueue, ReservationRequest, SiteReservation};
use crate::runtime::{RuntimeModel, Stretch};
use crate::settled::{Facts, SetPartition};
use crate::sink::{EndReason, JobOutcome, MetricsSink};
use crate::state::{AllocationError, ClusterState, StateView};
use crate::time::SimTime;

/// What happens to a job that runs past its walltime request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalltimePolicy {
    /// It is killed at start + estimate, as batch systems do. The default.
    #[default]
    Kill,
    /// It runs to its full runtime (for model studies).
    Overrun,
}

/// When the scheduler runs a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cycles {
    /// At every instant at which a job is submitted or ends (or a vnode changes, or a policy
    /// asked to be woken): the default, and the most a scheduler could do.
    #[default]
    EventExact,
    /// PBS: a cycle on every submit and every end, and also every `scheduler_iteration`
    /// (counted from the first submit), when jobs wait.
    PbsIteration(crate::SimDuration),
    /// Maui/Moab simulation mode: an iteration only every `RMPOLLINTERVAL` (counted from the
    /// first submit), so that a job waits at least until the next one; a policy's wake-up is
    /// moved to the iteration after it.
    MoabPoll(crate::SimDuration),
}

impl Cycles {
    /// The next periodic cycle strictly after `now`, for a run whose first submit is
    /// `origin`; `None` when cycles are event-exact (or the period is 0).
    fn next_tick(self, origin: SimTime, now: SimTime) -> Option<SimTime> {
        let every = match self {
            Cycles::EventExact => return None,
            Cycles::PbsIteration(every) | Cycles::MoabPoll(every) => every.as_secs(),
        };
        if every == 0 {
            return None;
        }
        let since = now.as_secs().saturating_sub(origin.as_secs());
        let ticks = since / every + 1;
        Some(SimTime(
            origin.as_secs().saturating_add(ticks.saturating_mul(every)),
        ))
    }

    /// Whether a pass runs at `now`, when something happened then.
    fn passes_at(self, origin: SimTime, now: SimTime) -> bool {
        match self {
            Cycles::MoabPoll(every) if every.as_secs() > 0 => {
                now.as_secs().saturating_sub(origin.as_secs()) % every.as_secs() == 0
            }
            _ => true,
        }
    }
}

/// Settings of one run that are not the cluster, the workload or the policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// What happens at the walltime.
    pub walltime: WalltimePolicy,
    /// When passes run.
    pub cycles: Cycles,
}

/// How far a run has got, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The simulated clock.
    pub now: SimTime,
    /// Events processed so far.
    pub events: u64,
    /// Jobs that have ended so far.
    pub jobs_ended: u64,
    /// Jobs in the workload.
    pub jobs_total: u64,
}

/// Counters of a finished run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunStats {
    /// Events processed (submits, ends, vnodes going down or up, wake-ups).
    pub events: u64,
    /// Scheduling passes run.
    pub passes: u64,
    /// Jobs that ended.
    pub jobs_ended: u64,
    /// Jobs that were killed at their walltime.
    pub jobs_killed: u64,
    /// Jobs still waiting when no event was left: the policy never started them.
    pub never_started: Vec<JobId>,
    /// The clock when the last event was processed.
    pub last_event: SimTime,
    /// The longest the queue got.
    pub max_queue_len: usize,
    /// Times a vnode failure sent a job back to the queue.
    pub requeues: u64,
    /// Jobs ended by a vnode failure ([`NodeFailurePolicy::Kill`]).
    pub jobs_failed: u64,
    /// Core-seconds of runs cut short by vnode failures.
    pub lost_core_seconds: u64,
    /// ncpus × seconds that vnodes were down, from the first submit to the last event.
    pub down_ncpu_seconds: u64,
    /// ncpus × seconds of the whole cluster over the same window.
    pub capacity_ncpu_seconds: u64,
    /// Jobs the server refused at submission, over a limit on jobs queued or running
    /// ([`Simulation::with_queued_limits`]): they never waited.
    pub rejected: Vec<JobId>,
    /// Jobs deleted while they waited: those of a reservation's queue still waiting when its
    /// window closed.
    pub deleted: Vec<JobId>,
}

impl RunStats {
    /// The share of the cluster's ncpu-seconds in service, from the first submit to the last
    /// event (1 without outages).
    pub fn availability(&self) -> f64 {
        if self.capacity_ncpu_seconds == 0 {
            1.0
        } else {
            1.0 - self.down_ncpu_seconds as f64 / self.capacity_ncpu_seconds as f64
        }
    }
}

/// A run that went wrong. These mean a policy bug, never bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A policy tried to start a job that is not waiting.
    #[error("at {now}: policy `{policy}` started job {job}, which is not waiting")]
    NotWaiting {
        /// The clock.
        now: SimTime,
        /// The policy.
        policy: String,
        /// The job.
        job: JobId,
    },
    /// A policy proposed resources that are not free.
    #[error("at {now}: policy `{policy}` gave job {job} an invalid allocation: {source}")]
    InvalidAllocation {
        /// The clock.
        now: SimTime,
        /// The policy.
        policy: String,
        /// The job.
        job: JobId,
        /// What was wrong.
        source: AllocationError,
    },
    /// A policy's allocation does not count what the job's request counts against run
    /// limits, so that the job would escape (or be held by) limits it is not under.
    #[error(
        "at {now}: policy `{policy}` started job {job} without counting it against its run limits as its request says"
    )]
    WrongLimitDraws {
        /// The clock.
        now: SimTime,
        /// The policy.
        policy: String,
        /// The job.
        job: JobId,
    },
    /// A policy's allocation does not match the job's request totals.
    #[error("at {now}: policy `{policy}` gave job {job} {got} ncpus, the request totals {want}")]
    WrongSize {
        /// The clock.
        now: SimTime,
        /// The policy.
        policy: String,
        /// The job.
        job: JobId,
        /// What the allocation holds.
        got: u64,
        /// What the request asks.
        want: u64,
    },
    /// An invariant check failed (`--check-invariants`, and every debug build): a bug in the
    /// kernel, the state or a policy.
    #[error("at {now}, {event}: invariant broken: {detail}")]
    Invariant {
        /// The clock.
        now: SimTime,
        /// The event being processed.
        event: String,
        /// What broke, with the state involved.
        detail: String,
    },
    /// A site reservation's vnodes were not free at its start: a policy let a job overlap it.
    #[error("at {now}: reservation {name} could not take its vnodes: {source}")]
    Reservation {
        /// The clock.
        now: SimTime,
        /// The reservation.
        name: String,
        /// What was wrong.
        source: AllocationError,
    },
    /// A policy started a job of a reservation's queue while the reservation's window was
    /// not open.
    #[error(
        "at {now}: policy `{policy}` started job {job} outside the window of reservation {name}"
    )]
    ReservationClosed {
        /// The clock.
        now: SimTime,
        /// The policy.
        policy: String,
        /// The job.
        job: JobId,
        /// The reservation.
        name: String,
    },
    /// A vnode could not be taken out of service (the kernel's own bug).
    #[error("at {now}: vnode {vnode} could not go down: {source}")]
    Outage {
        /// The clock.
        now: SimTime,
        /// The vnode.
        vnode: VnodeId,
        /// What was wrong.
        source: AllocationError,
    },
}

const NOT_RUNNING: u32 = u32::MAX;
/// Marks a `running_slot` that indexes `inside` rather than `running`.
const INSIDE: u32 = 1 << 31;
const PROGRESS_EVERY: u64 = 1 << 14;

/// One run: a workload replayed on a cluster under a policy.
#[derive(Debug)]
pub struct Simulation<'w> {
    workload: &'w Workload,
    config: RunConfig,
    state: ClusterState,
    events: EventQueue,
    next_arrival: usize,
    now: SimTime,
    /// Waiting jobs are `queue[queue_head..]`: a started prefix is dropped by moving the head.
    queue: Vec<JobId>,
    queue_head: usize,
    running: Vec<RunningJob>,
    /// Where `running` changed, for the policies that keep something per running job.
    running_log: RunningLog,
    /// Beside each running job, what only the kernel may know: whether it will be killed,
    /// and how its placement stretched it.
    running_fate: Vec<(EndReason, Stretch)>,
    running_slot: Vec<u32>,
    runtime_model: Option<&'w RuntimeModel>,
    stretch_scratch: Vec<u64>,
    comments: Vec<(JobId, std::sync::Arc<str>)>,
    /// The top-job estimates of the pass, on their way from the policy to the sink.
    estimates: Vec<crate::TopJobEstimate>,
    priorities: Vec<(JobId, f64)>,
    started: Vec<bool>,
    stats: RunStats,
    /// Per limit checked at submission: the room left, and the server's reply to a job it
    /// refuses.
    queued_room: Vec<u64>,
    queued_texts: Vec<std::sync::Arc<str>>,
    /// Queue length when the previous pass ended.
    settled_queue_len: usize,
    /// Whether a job ended (or a wake-up came) since the previous pass.
    freed_since_last_pass: bool,
    /// The latest wake-up put in the event queue, so that passes asking for the same
    /// instant again add no more events.
    pending_wakeup: Option<SimTime>,
    /// Vnodes going down and coming back, and site reservations starting and ending, in the
    /// order they apply, merged with the event queue like arrivals; `next_timed_event` is the
    /// next.
    timed_events: Vec<(SimTime, Event)>,
    next_timed_event: usize,
    on_failure: NodeFailurePolicy,
    /// Per vnode: outages in force (overlapping outages nest), and since when it is down.
    down_count: Vec<u32>,
    down_since: Vec<SimTime>,
    /// Per job (sized only once a failure happens): requeues and core-seconds lost.
    requeues: Vec<u32>,
    lost_core_seconds: Vec<u64>,
    /// The independent checks, when on.
    invariants: Option<Invariants>,
    /// What settled instants report, when a set watch is on.
    facts: Option<Facts>,
    /// Jobs already running when the run begins, with where they run: each starts there
    /// at its submission, before any pass, and runs for its runtime as given.
    preplaced: std::collections::HashMap<JobId, crate::Allocation>,
    /// The site's reservations, by start; events name them by index here.
    reservations: Vec<SiteReservation>,
    /// Those not yet ended, by start: what policies see.
    open_reservations: Vec<SiteReservation>,
    /// Per reservation (as `reservations`): whether it was deleted, so that its start and end
    /// events do nothing.
    reservation_deleted: Vec<bool>,
    /// The names of the reservations the timeline deletes, by deletion index.
    reservation_deletions: Vec<std::sync::Arc<str>>,
    /// The timeline's notes, by time, and the next to report ([`Self::with_site_notes`]).
    site_notes: Vec<(SimTime, crate::SiteEvent, std::sync::Arc<str>)>,
    next_site_note: usize,
    /// The reservations with a queue of their own not yet ended, with their universes while
    /// open: what policies see.
    reservation_queues: Vec<ReservationQueue>,
    /// Per PBS queue index: whether it is a reservation's queue.
    reservation_queue: Vec<bool>,
    /// Jobs running inside reservations, apart from `running` (which calendars read: what
    /// these hold is their reservation's), with their fates; `running_slot` marks theirs with
    /// [`INSIDE`].
    inside: Vec<RunningJob>,
    inside_fate: Vec<(EndReason, Stretch)>,
    /// Reservations requested of the scheduler, by index; and those submitted and not yet
    /// answered, in submission order (what policies see).
    requests: Vec<ReservationRequest>,
    pending_requests: Vec<(u32, ReservationRequest)>,
    /// The last pass's answers, on their way from the policy.
    answers: Vec<(u32, Option<crate::Allocation>)>,
}

impl<'w> Simulation<'w> {
    /// A run at time zero with an idle cluster.
    pub fn new(workload: &'w Workload, state: ClusterState, config: RunConfig) -> Self {
        let n = workload.jobs().len();
        let invariants = cfg!(debug_assertions).then(|| Invariants::new(state.cluster(), n));
        Simulation {
            workload,
            config,
            state,
            events: EventQueue::default(),
            next_arrival: 0,
            now: SimTime::ZERO,
            queue: Vec::new(),
            queue_head: 0,
            running: Vec::new(),
            running_log: RunningLog::default(),
            running_fate: Vec::new(),
            running_slot: vec![NOT_RUNNING; n],
            runtime_model: None,
            stretch_scratch: Vec::new(),
            comments: Vec::new(),
            estimates: Vec::new(),
            priorities: Vec::new(),
            started: vec![false; n],
            stats: RunStats::default(),
            queued_room: Vec::new(),
            queued_texts: Vec::new(),
            settled_queue_len: 0,
            freed_since_last_pass: true,
            pending_wakeup: None,
            timed_events: Vec::new(),
            next_timed_event: 0,
            on_failure: NodeFailurePolicy::Requeue,
            down_count: Vec::new(),
            down_since: Vec::new(),
            requeues: Vec::new(),
            lost_core_seconds: Vec::new(),
            invariants,
            facts: None,
            preplaced: std::collections::HashMap::new(),
            reservations: Vec::new(),
            open_reservations: Vec::new(),
            reservation_deleted: Vec::new(),
            reservation_deletions: Vec::new(),
            site_notes: Vec::new(),
            next_site_note: 0,
            reservation_queues: Vec::new(),
            reservation_queue: Vec::new(),
            inside: Vec::new(),
            inside_fate: Vec::new(),
            requests: Vec::new(),
            pending_requests: Vec::new(),
            answers: Vec::new(),
        }
    }

    /// Jobs already running when the period begins (a site's machine is never empty): each
    /// of `jobs` starts on its allocation at its submission (t = 0 for a scenario's), before
    /// any pass, and runs for its runtime, which no runtime model stretches. Its allocation
    /// must carry its request's limit draws; the kernel checks it as any start, and an
    /// allocation the cluster cannot hold stops the run with [`SimError::InvalidAllocation`].
    pub fn with_running_at_start(mut self, jobs: Vec<(JobId, crate::Allocation)>) -> Self {
        self.preplaced = jobs.into_iter().collect();
        self
    }

    /// Reports every settled instant to [`MetricsSink::instant_settled`], with the free
    /// ncpus of each of `sets`, which the state keeps current from now on.
    pub fn with_set_watch(mut self, sets: &SetPartition) -> Self {
        self.facts = Some(Facts::new(sets, &mut self.state));
        self
    }

    /// Turns the invariant checks on or off (on by default in debug builds): at every event
    /// the kernel checks, against its own tally kept apart from the state, that no vnode is
    /// oversubscribed and the state's free amounts agree, that no job starts before its
    /// submit or outside the set its placement names (unless it spanned), that the clock
    /// never runs backwards, and at the end that every job ended exactly once or never
    /// started. A broken invariant stops the run with [`SimError::Invariant`].
    pub fn with_invariant_checks(mut self, on: bool) -> Self {
        self.invariants =
            on.then(|| Invariants::new(self.state.cluster(), self.workload.jobs().len()));
        self
    }

    /// Takes vnodes out of service during `outages`; a job running on a vnode that goes down
    /// is requeued or killed, as `on_failure` says. Outages with `up <= down` are ignored.
    pub fn with_outages(mut self, outages: &[Outage], on_failure: NodeFailurePolicy) -> Self {
        self.timed_events.extend(crate::outage::events(outages));
        self.timed_events.sort_unstable();
        self.next_timed_event = 0;
        self.on_failure = on_failure;
        let n_vnodes = self.state.cluster().n_vnodes();
        self.down_count = vec![0; n_vnodes];
        self.down_since = vec![SimTime::ZERO; n_vnodes];
        self
    }

    /// Holds the vnodes of the site's `reservations` over their windows: each is taken at its
    /// start and given back at its end, and policies see those not yet ended
    /// ([`SchedContext::reservations`]) to keep other jobs off them. A reservation whose
    /// vnodes are not free at its start stops the run with [`SimError::Reservation`]: the
    /// policies or the reservations' own checks let something overlap it.
    pub fn with_reservations(mut self, mut reservations: Vec<SiteReservation>) -> Self {
        reservations.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
        for (i, r) in reservations.iter().enumerate() {
            if r.end > r.start {
                self.timed_events
                    .push((r.start, Event::ReservationStart(i as u32)));
                self.timed_events
                    .push((r.end, Event::ReservationEnd(i as u32)));
            }
        }
        self.timed_events.sort_unstable();
        self.next_timed_event = 0;
        // One entry per queue, following its reservation's windows (a standing reservation's
        // occurrences share its queue), from the first.
        for r in &reservations {
            self.add_queue_entry(r);
        }
        self.open_reservations = reservations.clone();
        self.reservation_deleted = vec![false; reservations.len()];
        self.reservations = reservations;
        self
    }

    /// Reservations requested of the scheduler over the run: each is submitted at its time,
    /// and the next pass (one runs then, even with no job waiting) confirms it on vnodes or
    /// denies it ([`SchedulingPolicy::drain_confirmations`]); a confirmed one is held from its
    /// start to its end like the reservations of [`Self::with_reservations`]. A job submitted
    /// to a requested reservation's queue before it is confirmed is refused (its queue is not
    /// enabled yet), as is one submitted to the queue of a denied or ended one.
    pub fn with_reservation_requests(mut self, requests: Vec<ReservationRequest>) -> Self {
        for (i, r) in requests.iter().enumerate() {
            self.timed_events
                .push((r.submit, Event::ReservationRequested(i as u32)));
            if let Some(q) = r.queue {
                self.mark_reservation_queue(q);
            }
        }
        self.timed_events.sort_unstable();
        self.next_timed_event = 0;
        self.requests = requests;
        self
    }

    /// Holds the reservation request `i` confirmed on `allocation` from now on: its start and
    /// end become events, policies see it, and its queue gets its entry.
    fn confirm(&mut self, i: u32, allocation: crate::Allocation) {
        let request = &self.requests[i as usize];
        let mut allocation = allocation;
        allocation.label = Some(request.name.clone());
        allocation.limit_draws = None;
        let reservation = SiteReservation {
            name: request.name.clone(),
            start: request.start,
            end: request.end,
            allocation: std::sync::Arc::new(allocation),
            queue: request.queue,
            access: Default::default(),
        };
        let index = self.reservations.len() as u32;
        self.events
            .push(reservation.start, Event::ReservationStart(index));
        self.events
            .push(reservation.end, Event::ReservationEnd(index));
        let at = self
            .open_reservations
            .partition_point(|r| r.start <= reservation.start);
        self.open_reservations.insert(at, reservation.clone());
        self.add_queue_entry(&reservation);
        self.reservations.push(reservation);
        self.reservation_deleted.push(false);
    }

    /// Gives reservation `r`'s queue, if it has one, its entry (one per queue: a standing
    /// reservation's occurrences share it, which follows their windows from the first).
    fn add_queue_entry(&mut self, r: &SiteReservation) {
        let Some(q) = r.queue else {
            return;
        };
        self.mark_reservation_queue(q);
        if !self.reservation_queues.iter().any(|e| e.queue == q) {
            self.reservation_queues.push(ReservationQueue {
                name: r.name.clone(),
                queue: q,
                start: r.start,
                end: r.end,
                universe: None,
            });
        }
    }

    /// Notes that PBS queue `q` is a reservation's.
    fn mark_reservation_queue(&mut self, q: u32) {
        let q = q as usize;
        if self.reservation_queue.len() <= q {
            self.reservation_queue.resize(q + 1, false);
        }
        self.reservation_queue[q] = true;
    }

    /// Reports the timeline's `notes` to the sink at their times
    /// ([`MetricsSink::site_event`]): what the kernel need not act on itself (a setting a
    /// placement reads by the clock, a cycle it already runs), so that the outputs list every
    /// entry of the timeline in its place. Notes after the last instant of the run are not
    /// reported, as no later entry is replayed.
    pub fn with_site_notes(
        mut self,
        mut notes: Vec<(SimTime, crate::SiteEvent, std::sync::Arc<str>)>,
    ) -> Self {
        notes.sort_by_key(|n| n.0);
        self.site_notes = notes;
        self
    }

    /// A site's timeline: `deletions`, each job deleted at its time (`qdel`: taken out of
    /// the queue, or killed if it runs; one already gone is told `qdel: Unknown Job Id`), and
    /// `cycles`, extra scheduling passes. Each deletion counts as something freed, so the
    /// next pass plans afresh (a deleted top job's reservation is gone).
    pub fn with_timeline(mut self, deletions: &[(SimTime, JobId)], cycles: &[SimTime]) -> Self {
        for &(at, job) in deletions {
            self.timed_events.push((at, Event::JobDeleted(job)));
        }
        self.timed_events.sort_unstable();
        self.next_timed_event = 0;
        for &at in cycles {
            self.events.push(at, Event::Wakeup);
        }
        self
    }

    /// Deletes the reservations named in `deletions` at their times (`pbs_rdel`): every
    /// occurrence not ended then, confirmed or requested, is gone; one open gives its vnodes
    /// back at once; its queue's jobs are deleted, those running killed
    /// ([`EndReason::ReservationDeleted`]).
    pub fn with_reservation_deletions(
        mut self,
        deletions: &[(SimTime, std::sync::Arc<str>)],
    ) -> Self {
        for (i, (at, name)) in deletions.iter().enumerate() {
            self.timed_events
                .push((*at, Event::ReservationDeleted(i as u32)));
            self.reservation_deletions.push(name.clone());
        }
        self.timed_events.sort_unstable();
        self.next_timed_event = 0;
        self
    }

    /// Deletion `k` of the timeline: the reservation of that name is gone from now on (see
    /// [`Self::with_reservation_deletions`]).
    fn delete_reservation(&mut self, k: u32, sink: &mut dyn MetricsSink) -> Result<(), SimError> {
        let name = self.reservation_deletions[k as usize].clone();
        let now = self.now;
        // Even one still to come frees room: jobs kept off it may start now.
        self.freed_since_last_pass = true;
        self.pending_requests.retain(|(_, r)| r.name != name);
        let doomed: Vec<usize> = (0..self.reservations.len())
            .filter(|&i| {
                let r = &self.reservations[i];
                r.name == name && r.end > now && !self.reservation_deleted[i]
            })
            .collect();
        let mut queue = None;
        for i in doomed {
            self.reservation_deleted[i] = true;
            let r = &self.reservations[i];
            queue = queue.or(r.queue);
            if r.start <= now && r.is_held() {
                let allocation = r.allocation.clone();
                self.state.release(&allocation);
                self.check(
                    || format!("the deletion of reservation {i}"),
                    |inv, state| inv.give(state, &allocation),
                )?;
            }
        }
        // Its queue goes with it: the jobs running inside an open occurrence (in its universe,
        // apart from the state) and those waiting, before its first window too.
        if let Some(q) = queue
            && self.reservation_queues.iter().any(|e| e.queue == q)
        {
            self.close_reservation_queue(q, None, EndReason::ReservationDeleted, sink)?;
        }
        // Those of other names stay; this name's are all deleted (the ended ones are gone).
        self.open_reservations.retain(|r| r.name != name);
        sink.reservation_deleted(now, &name);
        sink.site_event(now, crate::SiteEvent::ReservationDeleted, &name);
        Ok(())
    }

    /// The reservation queue entry `job` runs in, if its queue is a reservation's.
    fn inside_entry(&self, job: JobId) -> Option<usize> {
        let q = self.workload.request_of(job).queue?;
        if !self
            .reservation_queue
            .get(q as usize)
            .copied()
            .unwrap_or(false)
        {
            return None;
        }
        self.reservation_queues.iter().position(|r| r.queue == q)
    }

    /// Limits the server checks when a job is submitted (PBS `max_queued`): `values`, and
    /// `texts`, its reply to a job it refuses, per limit. A job whose request counts against
    /// one ([`crate::Request::queued_draws`]) with no room left is refused: it is told why,
    /// never waits, and is listed in [`RunStats::rejected`]. An accepted job holds its room
    /// until it ends.
    pub fn with_queued_limits(mut self, values: &[u64], texts: Vec<std::sync::Arc<str>>) -> Self {
        self.queued_room = values.to_vec();
        self.queued_texts = texts;
        self
    }

    /// Stretches runtimes by `model`: each job runs its trace runtime × H × C × ε, where
    /// the factors depend on the vnodes it got. Without a model, jobs run their trace runtime.
    pub fn with_runtime_model(mut self, model: &'w RuntimeModel) -> Self {
        self.runtime_model = Some(model);
        self
    }

    /// The current state of the cluster.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// Runs until no event is left, reporting progress now and then.
    pub fn run(
        mut self,
        policy: &mut dyn SchedulingPolicy,
        sink: &mut dyn MetricsSink,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<RunStats, SimError> {
        let mut decisions = Vec::new();
        let jobs = self.workload.jobs();
        let first_submit = jobs.first().map_or(SimTime::ZERO, |j| j.submit);
        loop {
            let next_end = self.events.peek_key().map(|k| k.time);
            let next_submit = jobs.get(self.next_arrival).map(|j| j.submit);
            // Outages matter only while there is work: a waiting job may need a vnode back.
            let work_left =
                next_end.is_some() || next_submit.is_some() || self.queue_head < self.queue.len();
            let next_outage = self
                .timed_events
                .get(self.next_timed_event)
                .map(|&(time, _)| time)
                .filter(|_| work_left);
            let Some(now) = [next_end, next_submit, next_outage]
                .into_iter()
                .flatten()
                .min()
            else {
                break;
            };
            self.check(|| "the next instant".to_owned(), |inv, _| inv.tick(now))?;
            self.now = now;
            self.state.set_now(now);
            while let Some((at, kind, text)) = self.site_notes.get(self.next_site_note)
                && *at <= now
            {
                sink.site_event(*at, *kind, text);
                self.next_site_note += 1;
            }
            // Every event of the instant, in `Event`'s order, from the three sources.
            while let Some(event) = self.next_event_at(now) {
                self.dispatch(event, first_submit, sink)?;
            }
            let cycles = self.config.cycles;
            let idle_passes = policy.passes_when_idle();
            if self.queue_head < self.queue.len()
                || idle_passes
                || !self.pending_requests.is_empty()
            {
                let passes = cycles.passes_at(first_submit, now);
                if passes {
                    self.pass(policy, &mut decisions, sink)?;
                    let wanted = policy.wakeup();
                    // Under Moab's polling a wake-up waits for the iteration after it.
                    let wanted = match cycles {
                        Cycles::MoabPoll(_) => wanted.and_then(|t| {
                            cycles.next_tick(first_submit, SimTime(t.as_secs().saturating_sub(1)))
                        }),
                        _ => wanted,
                    };
                    self.schedule_wakeup(wanted);
                }
                // Jobs still wait: the next periodic cycle is an event of its own, while it can
                // change something (a pass was skipped now, or jobs run or are still to come;
                // otherwise a job that can never run would tick for ever).
                let may_change =
                    !passes || !self.running.is_empty() || self.next_arrival < jobs.len();
                // A policy that passes when idle also wants the periodic cycles while jobs
                // run.
                let ticks = (self.queue_head < self.queue.len() && may_change)
                    || (idle_passes && !self.running.is_empty());
                if ticks {
                    self.schedule_wakeup(cycles.next_tick(first_submit, now));
                }
            }
            if let Some(facts) = &self.facts {
                let head = self.queue.get(self.queue_head);
                sink.instant_settled(&facts.settled(
                    now,
                    &self.state,
                    head.map(|&j| self.workload.ncpus_of(j)),
                    self.queue.len() - self.queue_head,
                ));
            }
            if self.stats.events % PROGRESS_EVERY < 2 {
                progress(self.progress());
            }
        }
        progress(self.progress());
        self.stats.never_started = self.queue.split_off(self.queue_head);
        self.stats.last_event = self.now;
        let waiting = std::mem::take(&mut self.stats.never_started);
        // Jobs the server refused never started either.
        let not_run = [
            &waiting[..],
            &self.stats.rejected[..],
            &self.stats.deleted[..],
        ]
        .concat();
        self.check(
            || "the end of the run".to_owned(),
            |inv, _| inv.finish(&not_run),
        )?;
        self.stats.never_started = waiting;
        // Vnodes still down count until the last event.
        for v in 0..self.down_count.len() {
            if self.down_count[v] > 0 {
                self.add_down_time(VnodeId::from_index(v));
            }
        }
        let window = self.now.as_secs().saturating_sub(first_submit.as_secs());
        self.stats.capacity_ncpu_seconds = self
            .state
            .cluster()
            .capacity_total(crate::resource::ConsumableIdx::NCPUS)
            .saturating_mul(window);
        Ok(self.stats)
    }

    /// Puts the policy's wake-up in the event queue unless one at or before it is still
    /// ahead (when that one comes, the policy is asked again).
    fn schedule_wakeup(&mut self, wanted: Option<SimTime>) {
        let Some(at) = wanted.filter(|&t| t > self.now) else {
            return;
        };
        let covered = self
            .pending_wakeup
            .is_some_and(|pending| pending > self.now && pending <= at);
        if !covered {
            self.events.push(at, Event::Wakeup);
            self.pending_wakeup = Some(at);
        }
    }

    fn progress(&self) -> Progress {
        Progress {
            now: self.now,
            events: self.stats.events,
            jobs_ended: self.stats.jobs_ended,
            jobs_total: self.workload.jobs().len() as u64,
        }
    }

    /// Runs one invariant check, if checks are on; `event` names what was being done.
    fn check(
        &mut self,
        event: impl FnOnce() -> String,
        f: impl FnOnce(&mut Invariants, &ClusterState) -> Result<(), String>,
    ) -> Result<(), SimError> {
        match self.invariants.as_mut() {
            Some(inv) => f(inv, &self.state).map_err(|detail| SimError::Invariant {
                now: self.now,
                event: event(),
                detail,
            }),
            None => Ok(()),
        }
    }

    /// Takes the first event at `now` from the event queue, the outage list and the
    /// arrivals: the one whose class comes first in [`Event`]'s order (each class has one
    /// source, and each source is in order within its classes).
    fn next_event_at(&mut self, now: SimTime) -> Option<Event> {
        let queued = self
            .events
            .peek_key()
            .filter(|k| k.time == now)
            .map(|k| k.class);
        let outage = self
            .timed_events
            .get(self.next_timed_event)
            .filter(|&&(time, _)| time == now)
            .map(|&(_, event)| event);
        let arrival = self
            .workload
            .jobs()
            .get(self.next_arrival)
            .filter(|j| j.submit == now)
            .map(|_| Event::JobSubmit(JobId::from_index(self.next_arrival)));
        let first_stream = match (outage, arrival) {
            (Some(o), Some(a)) if a.class_rank() < o.class_rank() => Some(a),
            (Some(o), _) => Some(o),
            (None, a) => a,
        };
        match (queued, first_stream) {
            (Some(class), Some(e)) if e.class_rank() < class => {}
            (Some(_), _) => return self.events.pop().map(|(_, event)| event),
            (None, None) => return None,
            (None, Some(_)) => {}
        }
        match first_stream {
            Some(Event::JobSubmit(_)) => self.next_arrival += 1,
            Some(_) => self.next_timed_event += 1,
            None => {}
        }
        first_stream
    }

    fn dispatch(
        &mut self,
        event: Event,
        first_submit: SimTime,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        self.stats.events += 1;
        if let Event::ReservationStart(i) | Event::ReservationEnd(i) = event
            && !self.reservation_deleted[i as usize]
        {
            let kind = if matches!(event, Event::ReservationStart(_)) {
                crate::SiteEvent::ReservationStart
            } else {
                crate::SiteEvent::ReservationEnd
            };
            sink.site_event(self.now, kind, &self.reservations[i as usize].name);
        }
        match event {
            Event::JobSubmit(id) => {
                sink.job_submitted(self.now, id);
                if let Some(allocation) = self.preplaced.remove(&id) {
                    // It was queued and started before the period: it holds its queued
                    // room without being checked against it.
                    if let Some(draws) = &self.workload.request_of(id).queued_draws {
                        for d in draws.iter() {
                            if let Some(room) = self.queued_room.get_mut(d.limit as usize) {
                                *room = room.saturating_sub(d.amount);
                            }
                        }
                    }
                    if let Some(facts) = &mut self.facts {
                        facts.enqueued(self.workload.ncpus_of(id));
                    }
                    let who = || "the jobs running at the start".to_owned();
                    return self.start_job(id, allocation, &who, Ok(()), false, sink);
                }
                if let Some(q) = self.workload.request_of(id).queue
                    && self
                        .reservation_queue
                        .get(q as usize)
                        .copied()
                        .unwrap_or(false)
                    && !self.reservation_queues.iter().any(|e| e.queue == q)
                {
                    // Its reservation awaits confirmation (its queue is not enabled yet), or
                    // was denied or has ended, and its queue with it.
                    let unconfirmed = self
                        .pending_requests
                        .iter()
                        .any(|(_, r)| r.queue == Some(q));
                    let reply = if unconfirmed {
                        "qsub: Queue is not enabled"
                    } else {
                        "qsub: Unknown queue"
                    };
                    sink.job_comment(self.now, id, &std::sync::Arc::from(reply));
                    self.stats.rejected.push(id);
                    return Ok(());
                }
                if let Some(draws) = &self.workload.request_of(id).queued_draws {
                    let room = &mut self.queued_room;
                    let short = draws
                        .iter()
                        .find(|d| d.amount > room.get(d.limit as usize).copied().unwrap_or(0));
                    if let Some(short) = short {
                        let reply = self.queued_texts.get(short.limit as usize).cloned();
                        let reply = reply.unwrap_or_else(|| std::sync::Arc::from("qsub: refused"));
                        sink.job_comment(self.now, id, &reply);
                        self.stats.rejected.push(id);
                        return Ok(());
                    }
                    for d in draws.iter() {
                        room[d.limit as usize] -= d.amount;
                    }
                }
                self.queue.push(id);
                self.count_queued(id);
                self.stats.max_queue_len = self
                    .stats
                    .max_queue_len
                    .max(self.queue.len() - self.queue_head);
            }
            // A policy's own deadline passed: its next pass must look at every waiting job, as
            // after a job end.
            Event::Wakeup => self.freed_since_last_pass = true,
            Event::JobEnd(id) => {
                let (run, reason, stretch) = self.end_running(id)?;
                self.stats.jobs_killed += u64::from(reason == EndReason::WalltimeKilled);
                self.report_end(id, run.start, reason, stretch, sink);
            }
            Event::ReservationStart(i) | Event::ReservationEnd(i)
                if self.reservation_deleted[i as usize] => {}
            Event::ReservationDeleted(k) => self.delete_reservation(k, sink)?,
            // A Moab reservation holds nothing: policies keep the jobs it blocks off its
            // nodes over its window (its end may let them start, below).
            Event::ReservationStart(i) if !self.reservations[i as usize].is_held() => {}
            Event::ReservationStart(i) => {
                let r = &self.reservations[i as usize];
                self.state
                    .allocate(&r.allocation)
                    .map_err(|source| SimError::Reservation {
                        now: self.now,
                        name: r.name.to_string(),
                        source,
                    })?;
                let allocation = r.allocation.clone();
                if let Some(q) = r.queue
                    && let Some(entry) = self.reservation_queues.iter_mut().find(|e| e.queue == q)
                {
                    entry.universe = Some(self.state.universe(&allocation));
                    (entry.start, entry.end) = (r.start, r.end);
                }
                self.check(
                    || format!("the start of reservation {i}"),
                    |inv, state| inv.take(state, &allocation, "a reservation"),
                )?;
            }
            Event::ReservationEnd(i) => {
                if let Some(q) = self.reservations[i as usize].queue {
                    // The next window of the same queue, if any: a standing reservation's
                    // next occurrence.
                    let next = self
                        .reservations
                        .iter()
                        .filter(|r| r.queue == Some(q) && r.start >= self.now)
                        .map(|r| (r.start, r.end))
                        .min();
                    self.close_reservation_queue(q, next, EndReason::ReservationEnded, sink)?;
                }
                self.freed_since_last_pass = true;
                let now = self.now;
                self.open_reservations.retain(|r| r.open_at(now));
                if self.reservations[i as usize].is_held() {
                    let allocation = self.reservations[i as usize].allocation.clone();
                    self.state.release(&allocation);
                    self.check(
                        || format!("the end of reservation {i}"),
                        |inv, state| inv.give(state, &allocation),
                    )?;
                }
            }
            Event::VnodeUp(v) => self.vnode_up(v, sink)?,
            Event::VnodeDown(v) => self.vnode_down(v, first_submit, sink)?,
            Event::JobDeleted(id) => self.delete(id, sink)?,
            Event::ReservationRequested(i) => {
                let request = self.requests[i as usize].clone();
                self.pending_requests.push((i, request));
            }
        }
        Ok(())
    }

    /// A window of the reservation with queue `q` closes: its running jobs are killed and
    /// its universe is gone. With a `next` window (a standing reservation's next occurrence)
    /// its waiting jobs stay for it; after the last, they are deleted with the queue (PBS
    /// deletes every job of an advance reservation's queue at its end,
    /// reservations-and-partitions.md §1.6, and a standing one's queued jobs stay between
    /// occurrences, §2.3).
    /// `reason` is why its running jobs end, and why its waiting ones are deleted.
    fn close_reservation_queue(
        &mut self,
        q: u32,
        next: Option<(SimTime, SimTime)>,
        reason: EndReason,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        let mut victims: Vec<JobId> = self
            .inside
            .iter()
            .map(|r| r.job)
            .filter(|&j| self.workload.request_of(j).queue == Some(q))
            .collect();
        victims.sort_unstable();
        for id in victims {
            self.events.cancel(&Event::JobEnd(id));
            let (run, _, stretch) = self.end_running(id)?;
            self.report_end(id, run.start, reason, stretch, sink);
        }
        if let Some((start, end)) = next
            && let Some(entry) = self.reservation_queues.iter_mut().find(|e| e.queue == q)
        {
            entry.universe = None;
            (entry.start, entry.end) = (start, end);
            return Ok(());
        }
        let name = self
            .reservation_queues
            .iter()
            .find(|e| e.queue == q)
            .map(|e| e.name.clone());
        let name = name.as_deref().unwrap_or("?");
        let text: std::sync::Arc<str> =
            std::sync::Arc::from(if reason == EndReason::ReservationDeleted {
                format!("Job deleted: reservation {name} was deleted (pbs_rdel)")
            } else {
                format!("Job deleted: the period of reservation {name} ended")
            });
        let workload = self.workload;
        self.delete_waiting(|j| workload.request_of(j).queue == Some(q), &text, sink);
        self.reservation_queues.retain(|e| e.queue != q);
        Ok(())
    }

    /// Deletes the waiting jobs `doomed` picks, each told `text`: out of the queue (the
    /// jobs the last pass saw fewer by those among them), counted in what the queue no
    /// longer holds, and listed in [`RunStats::deleted`]; how many.
    fn delete_waiting(
        &mut self,
        doomed: impl Fn(JobId) -> bool,
        text: &std::sync::Arc<str>,
        sink: &mut dyn MetricsSink,
    ) -> usize {
        let waiting = &self.queue[self.queue_head..];
        let deleted: Vec<JobId> = waiting.iter().copied().filter(|&j| doomed(j)).collect();
        if deleted.is_empty() {
            return 0;
        }
        let seen = self.settled_queue_len.min(waiting.len());
        self.settled_queue_len -= waiting[..seen].iter().filter(|&&j| doomed(j)).count();
        let mut tail = self.queue.split_off(self.queue_head);
        tail.retain(|&j| !doomed(j));
        self.queue.extend(tail);
        for &id in &deleted {
            sink.job_comment(self.now, id, text);
            self.leave_queue(id);
            self.stats.deleted.push(id);
        }
        deleted.len()
    }

    /// `qdel` of job `id`: a waiting job leaves the queue, a running one is killed; one
    /// already gone (or not yet submitted) is told so.
    fn delete(&mut self, id: JobId, sink: &mut dyn MetricsSink) -> Result<(), SimError> {
        self.freed_since_last_pass = true;
        if self.running_slot[id.index()] != NOT_RUNNING {
            self.events.cancel(&Event::JobEnd(id));
            let (run, _, stretch) = self.end_running(id)?;
            self.report_end(id, run.start, EndReason::Deleted, stretch, sink);
            return Ok(());
        }
        let text: std::sync::Arc<str> = std::sync::Arc::from("Job deleted by qdel");
        if self.delete_waiting(|j| j == id, &text, sink) == 0 {
            sink.job_comment(self.now, id, &std::sync::Arc::from("qdel: Unknown Job Id"));
        }
        Ok(())
    }

    /// Job `id` leaves the queue without starting (deleted): it no longer counts in what
    /// the queue holds, and gives back its room under the limits on queued jobs.
    fn leave_queue(&mut self, id: JobId) {
        let request = self.workload.request_of(id);
        if let Some(draws) = &request.limit_draws {
            self.state.count_queued_draws(draws, false);
        }
        if let Some(draws) = &request.queued_draws {
            for d in draws.iter() {
                if let Some(room) = self.queued_room.get_mut(d.limit as usize) {
                    *room += d.amount;
                }
            }
        }
        if let Some(facts) = &mut self.facts {
            facts.dequeued(self.workload.ncpus_of(id));
        }
    }

    /// Job `id`, running (in the cluster or inside a reservation), ends now for good: taken
    /// off and its resources given back, checked against the independent tally.
    fn end_running(&mut self, id: JobId) -> Result<(RunningJob, EndReason, Stretch), SimError> {
        let inside = self.running_slot[id.index()] & INSIDE != 0;
        let (run, reason, stretch) = self.take_running(id);
        self.check(
            || format!("the end of job {id}"),
            |inv, state| {
                if inside {
                    inv.end_inside(id)
                } else {
                    inv.stop(state, id, &run.allocation, Stop::Ended)
                }
            },
        )?;
        Ok((run, reason, stretch))
    }

    /// Takes job `id` off the running list and gives its resources back.
    fn take_running(&mut self, id: JobId) -> (RunningJob, EndReason, Stretch) {
        let slot = self.running_slot[id.index()];
        debug_assert_ne!(slot, NOT_RUNNING, "job {id} ended without running");
        if slot & INSIDE != 0 {
            return self.take_inside(id, (slot & !INSIDE) as usize);
        }
        let run = self.running.swap_remove(slot as usize);
        let (reason, stretch) = self.running_fate.swap_remove(slot as usize);
        if let Some(moved) = self.running.get(slot as usize) {
            self.running_slot[moved.job.index()] = slot;
            self.running_log.wrote(slot as usize, self.running.len());
        }
        self.running_log
            .wrote(self.running.len(), self.running.len());
        self.running_slot[id.index()] = NOT_RUNNING;
        self.state.release(&run.allocation);
        if let Some(facts) = &mut self.facts {
            facts.stopped(self.workload.ncpus_of(id));
        }
        self.freed_since_last_pass = true;
        (run, reason, stretch)
    }

    /// Takes job `id`, running inside a reservation at `slot` of `inside`, off it, and gives
    /// its resources back to its reservation.
    fn take_inside(&mut self, id: JobId, slot: usize) -> (RunningJob, EndReason, Stretch) {
        let run = self.inside.swap_remove(slot);
        let (reason, stretch) = self.inside_fate.swap_remove(slot);
        if let Some(moved) = self.inside.get(slot) {
            self.running_slot[moved.job.index()] = slot as u32 | INSIDE;
        }
        self.running_slot[id.index()] = NOT_RUNNING;
        let q = self.workload.request_of(id).queue;
        if let Some(universe) = self
            .reservation_queues
            .iter_mut()
            .find(|e| Some(e.queue) == q)
            .and_then(|e| e.universe.as_mut())
        {
            universe.release(&run.allocation);
        }
        if let Some(facts) = &mut self.facts {
            facts.stopped(self.workload.ncpus_of(id));
        }
        self.freed_since_last_pass = true;
        (run, reason, stretch)
    }

    /// Tells the sink job `id` ended now, and why.
    fn report_end(
        &mut self,
        id: JobId,
        start: SimTime,
        reason: EndReason,
        stretch: Stretch,
        sink: &mut dyn MetricsSink,
    ) {
        self.stats.jobs_ended += 1;
        if let Some(draws) = &self.workload.request_of(id).queued_draws {
            for d in draws.iter() {
                if let Some(room) = self.queued_room.get_mut(d.limit as usize) {
                    *room += d.amount;
                }
            }
        }
        sink.job_ended(
            self.workload.job(id),
            &JobOutcome {
                job: id,
                start,
                end: self.now,
                reason,
                stretch,
                requeues: self.requeues.get(id.index()).copied().unwrap_or(0),
                lost_core_seconds: self.lost_core_seconds.get(id.index()).copied().unwrap_or(0),
            },
        );
    }

    /// The last outage in force on `v` ended: it takes jobs again.
    fn vnode_up(&mut self, v: VnodeId, sink: &mut dyn MetricsSink) -> Result<(), SimError> {
        self.freed_since_last_pass = true;
        let count = &mut self.down_count[v.index()];
        *count -= 1;
        if *count > 0 {
            return Ok(());
        }
        let name = self.state.cluster().vnode(v).name();
        sink.site_event(self.now, crate::SiteEvent::VnodeUp, name);
        self.add_down_time(v);
        self.state.set_up(v);
        if let Some(facts) = &mut self.facts {
            facts.vnode_service(&self.state, v, Service::Up);
        }
        let outage = crate::state::down_allocation(self.state.cluster(), v);
        self.check(
            || format!("vnode {v} coming back"),
            |inv, state| inv.give(state, &outage),
        )
    }

    /// An outage of `v` began: unless one was already in force, its jobs are requeued or
    /// killed and it is taken out of service.
    fn vnode_down(
        &mut self,
        v: VnodeId,
        first_submit: SimTime,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        self.freed_since_last_pass = true;
        let count = &mut self.down_count[v.index()];
        *count += 1;
        if *count > 1 {
            return Ok(());
        }
        let name = self.state.cluster().vnode(v).name();
        sink.site_event(self.now, crate::SiteEvent::VnodeDown, name);
        let mut victims: Vec<JobId> = self
            .running
            .iter()
            .filter(|r| r.allocation.holds(v))
            .map(|r| r.job)
            .collect();
        victims.sort_unstable();
        for id in victims {
            self.events.cancel(&Event::JobEnd(id));
            let (run, _, stretch) = self.take_running(id);
            let stop = match self.on_failure {
                NodeFailurePolicy::Kill => Stop::Ended,
                NodeFailurePolicy::Requeue => Stop::Requeued,
            };
            self.check(
                || format!("vnode {v} going down under job {id}"),
                |inv, state| inv.stop(state, id, &run.allocation, stop),
            )?;
            let n_cons = self.state.cluster_consumables();
            let ncpus = run
                .allocation
                .total(n_cons, crate::resource::ConsumableIdx::NCPUS);
            let lost = ncpus.saturating_mul(self.now.as_secs() - run.start.as_secs());
            let n_jobs = self.workload.jobs().len();
            if self.requeues.is_empty() {
                self.requeues = vec![0; n_jobs];
                self.lost_core_seconds = vec![0; n_jobs];
            }
            let job_lost = &mut self.lost_core_seconds[id.index()];
            *job_lost = job_lost.saturating_add(lost);
            self.stats.lost_core_seconds = self.stats.lost_core_seconds.saturating_add(lost);
            match self.on_failure {
                NodeFailurePolicy::Requeue => {
                    self.requeues[id.index()] += 1;
                    self.stats.requeues += 1;
                    self.started[id.index()] = false;
                    // Back in its place by submit time: the queue is in job order.
                    let at = self.queue_head
                        + self.queue[self.queue_head..].partition_point(|&j| j < id);
                    self.queue.insert(at, id);
                    self.count_queued(id);
                    sink.job_requeued(
                        self.now,
                        id,
                        self.requeues[id.index()],
                        self.lost_core_seconds[id.index()],
                    );
                }
                NodeFailurePolicy::Kill => {
                    self.stats.jobs_failed += 1;
                    self.report_end(id, run.start, EndReason::VnodeFailed, stretch, sink);
                }
            }
        }
        self.down_since[v.index()] = self.now.max(first_submit);
        self.state.set_down(v).map_err(|source| SimError::Outage {
            now: self.now,
            vnode: v,
            source,
        })?;
        if let Some(facts) = &mut self.facts {
            facts.vnode_service(&self.state, v, Service::Down);
        }
        let outage = crate::state::down_allocation(self.state.cluster(), v);
        self.check(
            || format!("vnode {v} going down"),
            |inv, state| inv.take(state, &outage, "an outage"),
        )
    }

    /// Counts job `id`, just put in the queue (submitted or requeued), in what the queue
    /// holds: its limits' waiting draws and the settled-instant facts.
    fn count_queued(&mut self, id: JobId) {
        if let Some(draws) = &self.workload.request_of(id).limit_draws {
            self.state.count_queued_draws(draws, true);
        }
        if let Some(facts) = &mut self.facts {
            facts.enqueued(self.workload.ncpus_of(id));
        }
    }

    /// Adds the time `v` has been down so far to the run's down ncpu-seconds.
    fn add_down_time(&mut self, v: VnodeId) {
        let since = self.down_since[v.index()];
        let secs = self.now.as_secs().saturating_sub(since.as_secs());
        let down = self.state.cluster().ncpus_capacity(v).saturating_mul(secs);
        self.stats.down_ncpu_seconds = self.stats.down_ncpu_seconds.saturating_add(down);
    }

    /// Drops started jobs from the queue, keeping order: a started prefix costs O(1), other
    /// starts cost a compaction from the first of them on.
    fn remove_started(&mut self, mut n_started: usize) {
        let started = &self.started;
        while self.queue_head < self.queue.len() && started[self.queue[self.queue_head].index()] {
            self.queue_head += 1;
            n_started -= 1;
        }
        if n_started == 0 {
            // Every start was in the prefix: nothing else to look for.
        } else if let Some(first) = self.queue[self.queue_head..]
            .iter()
            .position(|j| started[j.index()])
        {
            let from = self.queue_head + first;
            let mut kept = from;
            for read in from..self.queue.len() {
                let job = self.queue[read];
                if !started[job.index()] {
                    self.queue[kept] = job;
                    kept += 1;
                }
            }
            self.queue.truncate(kept);
        }
        if self.queue_head > 4096 && self.queue_head * 2 > self.queue.len() {
            self.queue.drain(..self.queue_head);
            self.queue_head = 0;
        }
    }

    /// Starts `job` now on `allocation`: checks it against the job's request (its ncpus and
    /// limits) and the state, then holds it until its end, which it schedules. `who` names
    /// what decided the start, for errors; `inside` is the placement's own check of where it
    /// put the job (with invariant checks on); `stretchable`, whether the runtime model
    /// applies to it.
    fn start_job(
        &mut self,
        job: JobId,
        allocation: crate::Allocation,
        who: &dyn Fn() -> String,
        inside: Result<(), String>,
        stretchable: bool,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        let n_cons = self.state.cluster_consumables();
        let want = self
            .workload
            .request_of(job)
            .total(crate::resource::ConsumableIdx::NCPUS);
        let got = allocation.total(n_cons, crate::resource::ConsumableIdx::NCPUS);
        if got != want {
            return Err(SimError::WrongSize {
                now: self.now,
                policy: who(),
                job,
                got,
                want,
            });
        }
        if let Some(entry) = self.inside_entry(job) {
            return self.start_inside(job, entry, allocation, who, stretchable, sink);
        }
        if allocation.limit_draws != self.workload.request_of(job).limit_draws {
            return Err(SimError::WrongLimitDraws {
                now: self.now,
                policy: who(),
                job,
            });
        }
        self.state
            .allocate(&allocation)
            .map_err(|source| SimError::InvalidAllocation {
                now: self.now,
                policy: who(),
                job,
                source,
            })?;
        self.started[job.index()] = true;
        if let Some(facts) = &mut self.facts {
            facts.started(want);
        }
        let j = self.workload.job(job);
        if self.invariants.is_some() {
            self.check(
                || format!("the start of job {job}"),
                |inv, state| {
                    inside?;
                    inv.start(state, job, j.submit, &allocation)
                },
            )?;
        }
        let (reason, runs_for, stretch) = self.fate(job, &allocation, stretchable);
        self.running_fate.push((reason, stretch));
        // Saturating: a runtime model may stretch a runtime without bound.
        let end = SimTime(self.now.as_secs().saturating_add(runs_for.as_secs()));
        self.events.push(end, Event::JobEnd(job));
        sink.job_started(j, job, self.now, &allocation);
        self.running_slot[job.index()] = self.running.len() as u32;
        self.running_log
            .wrote(self.running.len(), self.running.len() + 1);
        self.running.push(RunningJob {
            job,
            start: self.now,
            estimated_end: SimTime(self.now.as_secs().saturating_add(j.estimate.as_secs())),
            allocation,
        });
        Ok(())
    }

    /// Starts `job` inside the reservation of queue entry `entry`, on `allocation` of its
    /// universe: only while its window is open, under no run limit, its estimated end cut to
    /// the window's end, where it is killed if still running.
    fn start_inside(
        &mut self,
        job: JobId,
        entry: usize,
        allocation: crate::Allocation,
        who: &dyn Fn() -> String,
        stretchable: bool,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        let now = self.now;
        let e = &mut self.reservation_queues[entry];
        let Some(universe) = e.universe.as_mut() else {
            return Err(SimError::ReservationClosed {
                now,
                policy: who(),
                job,
                name: e.name.to_string(),
            });
        };
        universe
            .allocate(&allocation)
            .map_err(|source| SimError::InvalidAllocation {
                now,
                policy: who(),
                job,
                source,
            })?;
        let window_end = e.end;
        self.started[job.index()] = true;
        let want = self
            .workload
            .request_of(job)
            .total(crate::resource::ConsumableIdx::NCPUS);
        if let Some(facts) = &mut self.facts {
            facts.started(want);
        }
        let j = self.workload.job(job);
        self.check(
            || format!("the start of job {job}"),
            |inv, _| inv.start_inside(job, j.submit),
        )?;
        let (reason, runs_for, stretch) = self.fate(job, &allocation, stretchable);
        self.inside_fate.push((reason, stretch));
        let end = SimTime(now.as_secs().saturating_add(runs_for.as_secs()));
        self.events.push(end, Event::JobEnd(job));
        sink.job_started(j, job, now, &allocation);
        self.running_slot[job.index()] = self.inside.len() as u32 | INSIDE;
        let estimated_end = SimTime(now.as_secs().saturating_add(j.estimate.as_secs()));
        self.inside.push(RunningJob {
            job,
            start: now,
            estimated_end: estimated_end.min(window_end),
            allocation,
        });
        Ok(())
    }

    /// How job `job` started on `allocation` will end: killed at its walltime or finished,
    /// after how long, and how the runtime model stretched it (when `stretchable`).
    fn fate(
        &mut self,
        job: JobId,
        allocation: &crate::Allocation,
        stretchable: bool,
    ) -> (EndReason, crate::SimDuration, Stretch) {
        let j = self.workload.job(job);
        let stretch = match self.runtime_model.filter(|_| stretchable) {
            Some(model) => model.stretch(job, allocation, &mut self.stretch_scratch),
            None => Stretch::NONE,
        };
        let actual = stretch.apply(j.runtime);
        if self.config.walltime == WalltimePolicy::Kill && actual > j.estimate {
            (EndReason::WalltimeKilled, j.estimate, stretch)
        } else {
            (EndReason::Finished, actual, stretch)
        }
    }

    fn pass(
        &mut self,
        policy: &mut dyn SchedulingPolicy,
        decisions: &mut Vec<Decision>,
        sink: &mut dyn MetricsSink,
    ) -> Result<(), SimError> {
        self.stats.passes += 1;
        decisions.clear();
        let ctx = SchedContext {
            now: self.now,
            state: &self.state,
            workload: self.workload,
            queue: &self.queue[self.queue_head..],
            running: &self.running,
            running_log: Some(&self.running_log),
            fresh_from: self.settled_queue_len,
            freed_since_last_pass: self.freed_since_last_pass,
            reservations: &self.open_reservations,
            reservation_queues: &self.reservation_queues,
            reservation_requests: &self.pending_requests,
            start_gate: None,
            estimate_vnodes: sink.reads_estimated_vnodes(),
        };
        policy.schedule(&ctx, decisions);
        policy.drain_comments(&mut self.comments);
        for (job, text) in self.comments.drain(..) {
            sink.job_comment(self.now, job, &text);
        }
        policy.drain_estimates(&mut self.estimates);
        for estimate in self.estimates.drain(..) {
            sink.job_estimated(self.now, &estimate);
        }
        policy.drain_confirmations(&mut self.answers);
        let answers = std::mem::take(&mut self.answers);
        for (i, allocation) in &answers {
            self.pending_requests.retain(|(k, _)| k != i);
            let request = self.requests[*i as usize].clone();
            sink.reservation_answered(self.now, &request, allocation.as_ref());
            if let Some(allocation) = allocation {
                self.confirm(*i, allocation.clone());
            }
        }
        self.answers = answers;
        self.answers.clear();
        policy.drain_priorities(&mut self.priorities);
        for (job, priority) in self.priorities.drain(..) {
            sink.job_priority(self.now, job, priority);
        }
        self.freed_since_last_pass = false;
        if decisions.is_empty() {
            self.settled_queue_len = self.queue.len() - self.queue_head;
            return Ok(());
        }
        let n_started = decisions.len();
        for decision in decisions.drain(..) {
            match decision {
                Decision::Start { job, allocation } => {
                    if self.started[job.index()] || self.next_arrival <= job.index() {
                        return Err(SimError::NotWaiting {
                            now: self.now,
                            policy: policy.name(),
                            job,
                        });
                    }
                    let inside = || policy.check_start(self.workload.request_of(job), &allocation);
                    let inside = if self.invariants.is_some() {
                        inside()
                    } else {
                        Ok(())
                    };
                    if let Some(draws) = &self.workload.request_of(job).limit_draws {
                        self.state.count_queued_draws(draws, false);
                    }
                    self.start_job(job, allocation, &|| policy.name(), inside, true, sink)?;
                }
            }
        }
        self.remove_started(n_started);
        self.settled_queue_len = self.queue.len() - self.queue_head;
        Ok(())
    }
}

/// What the kernel's own tests run on.
#[cfg(test)]
mod test_support {
    use crate::cluster::{Cluster, ClusterBuilder};
    use crate::ids::RequestId;
    use crate::job::Job;
    use crate::resource::ResourceDefs;
    use crate::time::{SimDuration, SimTime};

    /// One vnode with one ncpu.
    pub(super) fn one_vnode_cluster() -> Cluster {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let h = b.add_host("h");
        b.add_vnode("v", h, 1.0, &[1, 0, 0], Vec::new())
            .expect("a valid vnode");
        b.build().expect("a valid cluster")
    }

    /// A job of request 0 submitted at `submit`, running (and estimated at) 10 s.
    pub(super) fn ten_second_job(submit: u64) -> Job {
        Job::new(
            submit,
            SimTime(submit),
            SimDuration(10),
            SimDuration(10),
            1,
            RequestId(0),
        )
    }
}

#[cfg(test)]
mod wakeup_tests {
    use super::test_support::{one_vnode_cluster, ten_second_job};
    use super::*;
    use crate::request::Request;
    use crate::sink::VecSink;

    /// Never starts anything; asks for a pass at each of `wanted` still ahead, and records
    /// when it was asked to schedule.
    struct Alarm {
        wanted: Vec<SimTime>,
        passes: Vec<SimTime>,
    }

    impl SchedulingPolicy for Alarm {
        fn name(&self) -> String {
            "alarm".into()
        }
        fn schedule(&mut self, ctx: &SchedContext<'_>, _decisions: &mut Vec<Decision>) {
            self.passes.push(ctx.now);
            assert!(ctx.freed_since_last_pass || ctx.fresh_from < ctx.queue.len());
        }
        fn wakeup(&self) -> Option<SimTime> {
            let last = self.passes.last().copied().unwrap_or(SimTime::ZERO);
            self.wanted.iter().copied().filter(|&t| t > last).min()
        }
    }

    /// The kernel passes at each wanted instant once, however often it is asked for, and
    /// not for instants already past; the run then ends with the job never started.
    #[test]
    fn a_policy_wakeup_is_one_pass_at_that_instant() {
        let cluster = one_vnode_cluster();
        let workload = Workload::new(
            vec![ten_second_job(0), ten_second_job(5)],
            vec![Request::processors(2, 3)],
        )
        .unwrap();
        let mut policy = Alarm {
            wanted: vec![SimTime(3), SimTime(40), SimTime(40), SimTime(90)],
            passes: Vec::new(),
        };
        let stats = Simulation::new(
            &workload,
            ClusterState::new(cluster),
            RunConfig {
                cycles: Cycles::EventExact,
                walltime: WalltimePolicy::Kill,
            },
        )
        .run(&mut policy, &mut VecSink::default(), &mut |_| {})
        .unwrap();
        assert_eq!(
            policy.passes,
            [0, 3, 5, 40, 90].map(SimTime).to_vec(),
            "a pass at each submit and at each wanted instant"
        );
        // Two submits and three wake-ups: asking again at 0 and 3 for 40 added nothing.
        assert_eq!(stats.events, 5);
        assert_eq!(stats.never_started.len(), 2);
    }
}

#[cfg(test)]
mod invariant_tests {
    use super::test_support::{one_vnode_cluster, ten_second_job};
    use super::*;
    use crate::request::Request;
    use crate::request::Sharing;
    use crate::sink::VecSink;
    use crate::state::Allocation;

    /// Starts every waiting job on vnode 0, and says its start lies outside the set it names.
    struct Outsider;

    impl SchedulingPolicy for Outsider {
        fn name(&self) -> String {
            "outsider".into()
        }
        fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
            for &job in ctx.queue {
                let mut allocation = Allocation::new(Sharing::Shared);
                allocation.add(VnodeId(0), &[1, 0, 0]);
                decisions.push(Decision::Start { job, allocation });
            }
        }
        fn check_start(&self, _request: &Request, _allocation: &Allocation) -> Result<(), String> {
            Err("vnode v0 of the allocation lies outside its set switch=B".to_owned())
        }
    }

    /// A start the policy's own check rejects stops the run, naming the event; with the checks
    /// off the same run goes through.
    #[test]
    fn a_start_outside_its_set_stops_the_run() {
        let cluster = one_vnode_cluster();
        let workload =
            Workload::new(vec![ten_second_job(5)], vec![Request::processors(1, 3)]).unwrap();
        let run = |checks: bool| {
            Simulation::new(
                &workload,
                ClusterState::new(cluster.clone()),
                RunConfig {
                    cycles: Cycles::EventExact,
                    walltime: WalltimePolicy::Kill,
                },
            )
            .with_invariant_checks(checks)
            .run(&mut Outsider, &mut VecSink::default(), &mut |_| {})
        };
        assert_eq!(
            run(true).unwrap_err().to_string(),
            "at 5s, the start of job 0: invariant broken: vnode v0 of the allocation lies outside its set switch=B"
        );
        assert_eq!(run(false).unwrap().jobs_ended, 1);
    }
}
