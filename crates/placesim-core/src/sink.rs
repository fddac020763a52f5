//! Where per-job results go. The trait lives here; implementations (Parquet) live in the
//! metrics crate, so the kernel stays free of I/O.

use crate::ids::JobId;
use crate::job::Job;
use crate::runtime::Stretch;
use crate::state::Allocation;
use crate::time::SimTime;
use std::sync::Arc;

/// How one job ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobOutcome {
    /// The job.
    pub job: JobId,
    /// When it started.
    pub start: SimTime,
    /// When it ended.
    pub end: SimTime,
    /// Why it ended.
    pub reason: EndReason,
    /// What the runtime model made of its placement ([`Stretch::NONE`] without a model).
    pub stretch: Stretch,
    /// How often a vnode failure sent it back to the queue.
    pub requeues: u32,
    /// The core-seconds of its runs cut short by vnode failures (ncpus × time run).
    pub lost_core_seconds: u64,
}

/// Why a job ended: one of three, so a job is never both killed and failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EndReason {
    /// It ran its (stretched) runtime to the end.
    #[default]
    Finished,
    /// It was killed at its walltime (start + estimate) before it finished.
    WalltimeKilled,
    /// A vnode it ran on went down (under [`crate::NodeFailurePolicy::Kill`]).
    VnodeFailed,
    /// It ran inside a reservation whose window closed first (PBS deletes a reservation's
    /// jobs at its end).
    ReservationEnded,
    /// It was deleted while it ran (`qdel`).
    Deleted,
    /// It ran inside a reservation that was deleted (`pbs_rdel` deletes the reservation's
    /// queue and its jobs).
    ReservationDeleted,
}

/// Receives results as the run produces them. Sinks buffer; writing happens after the run,
/// outside the kernel, so the callbacks cannot fail.
pub trait MetricsSink {
    /// A job started on `allocation`. Most sinks only need ends; the default ignores starts.
    fn job_started(&mut self, job: &Job, id: JobId, start: SimTime, allocation: &Allocation) {
        let _ = (job, id, start, allocation);
    }

    /// A job ended (finished or was killed).
    fn job_ended(&mut self, job: &Job, outcome: &JobOutcome);

    /// A reservation request was answered: confirmed on `allocation`, or denied (`None`).
    /// The default ignores it.
    fn reservation_answered(
        &mut self,
        now: SimTime,
        request: &crate::ReservationRequest,
        allocation: Option<&Allocation>,
    ) {
        let _ = (now, request, allocation);
    }

    /// The reservation `name` was deleted (`pbs_rdel`): its occurrences not ended by `now`
    /// are gone. The default ignores it.
    fn reservation_deleted(&mut self, now: SimTime, name: &str) {
        let _ = (now, name);
    }

    /// A vnode failure sent a running job back to the queue; `requeues` and
    /// `lost_core_seconds` are its totals so far. The default ignores requeues (the job's
    /// end reports the same totals, if it ends).
    fn job_requeued(&mut self, now: SimTime, id: JobId, requeues: u32, lost_core_seconds: u64) {
        let _ = (now, id, requeues, lost_core_seconds);
    }

    /// A job was submitted: it joins the queue at `now`. The default ignores submits.
    fn job_submitted(&mut self, now: SimTime, id: JobId) {
        let _ = (now, id);
    }

    /// A pass at `now` calendared a top job ([`crate::SchedulingPolicy::drain_estimates`]).
    /// The default ignores estimates.
    fn job_estimated(&mut self, now: SimTime, estimate: &crate::TopJobEstimate) {
        let _ = (now, estimate);
    }

    /// Whether [`Self::job_estimated`] reads an estimate's vnodes. When it does not, a pass
    /// reports its estimates without them ([`crate::SchedContext::estimate_vnodes`]): a copy
    /// of the top job's vnode list at every pass that nobody reads. The default, `true`, is
    /// always safe.
    fn reads_estimated_vnodes(&self) -> bool {
        true
    }

    /// An instant is settled: what the cluster and the queue are from now until the next
    /// instant ([`crate::Simulation::with_set_watch`]). The default ignores it.
    fn instant_settled(&mut self, instant: &crate::settled::SettledInstant<'_>) {
        let _ = instant;
    }

    /// The scheduler commented on a waiting job (why it did not start). The default ignores
    /// comments.
    fn job_comment(&mut self, now: SimTime, id: JobId, text: &Arc<str>) {
        let _ = (now, id, text);
    }

    /// A pass at `now` ordered a waiting job by this priority
    /// ([`crate::SchedulingPolicy::drain_priorities`]). The default ignores priorities.
    fn job_priority(&mut self, now: SimTime, id: JobId, priority: f64) {
        let _ = (now, id, priority);
    }

    /// Something happened to the site rather than to one job, at `at`: a reservation's window
    /// opened or closed, a reservation was deleted, a vnode went down or came back, or a
    /// timeline entry changed a setting or ran a cycle; `subject` names what (the
    /// reservation, the vnode, the command). The default ignores it.
    fn site_event(&mut self, at: SimTime, kind: SiteEvent, subject: &str) {
        let _ = (at, kind, subject);
    }
}

/// What happened to the site ([`MetricsSink::site_event`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiteEvent {
    /// A reservation's window opened.
    ReservationStart,
    /// A reservation's window closed.
    ReservationEnd,
    /// A reservation was deleted (`pbs_rdel`).
    ReservationDeleted,
    /// A vnode went out of service.
    VnodeDown,
    /// A vnode came back into service.
    VnodeUp,
    /// A timeline entry changed a setting (`qmgr`).
    Setting,
    /// A timeline entry ran one more scheduling cycle.
    Cycle,
}

impl SiteEvent {
    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            SiteEvent::ReservationStart => "reservation start",
            SiteEvent::ReservationEnd => "reservation end",
            SiteEvent::ReservationDeleted => "reservation deleted",
            SiteEvent::VnodeDown => "vnode down",
            SiteEvent::VnodeUp => "vnode up",
            SiteEvent::Setting => "setting",
            SiteEvent::Cycle => "cycle",
        }
    }
}

/// A sink that keeps every outcome in memory, for tests and small runs.
#[derive(Debug, Clone, Default)]
pub struct VecSink {
    /// Outcomes in the order jobs ended.
    pub outcomes: Vec<JobOutcome>,
}

impl MetricsSink for VecSink {
    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        self.outcomes.push(*outcome);
    }
}

impl<S: MetricsSink + ?Sized> MetricsSink for &mut S {
    fn job_started(&mut self, job: &Job, id: JobId, start: SimTime, allocation: &Allocation) {
        (**self).job_started(job, id, start, allocation);
    }
    fn job_ended(&mut self, job: &Job, outcome: &JobOutcome) {
        (**self).job_ended(job, outcome);
    }
    fn job_comment(&mut self, now: SimTime, id: JobId, text: &Arc<str>) {
        (**self).job_comment(now, id, text);
    }
    fn job_requeued(&mut self, now: SimTime, id: JobId, requeues: u32, lost_core_seconds: u64) {
        (**self).job_requeued(now, id, requeues, lost_core_seconds);
    }
    fn job_submitted(&mut self, now: SimTime, id: JobId) {
        (**self).job_submitted(now, id);
    }
    fn job_estimated(&mut self, now: SimTime, estimate: &crate::TopJobEstimate) {
        (**self).job_estimated(now, estimate);
    }
    fn reads_estimated_vnodes(&self) -> bool {
        (**self).reads_estimated_vnodes()
    }
    fn job_priority(&mut self, now: SimTime, id: JobId, priority: f64) {
        (**self).job_priority(now, id, priority);
    }
    fn instant_settled(&mut self, instant: &crate::settled::SettledInstant<'_>) {
        (**self).instant_settled(instant);
    }
    fn reservation_answered(
        &mut self,
        now: SimTime,
        request: &crate::ReservationRequest,
        allocation: Option<&Allocation>,
    ) {
        (**self).reservation_answered(now, request, allocation);
    }
    fn reservation_deleted(&mut self, now: SimTime, name: &str) {
        (**self).reservation_deleted(now, name);
    }
    fn site_event(&mut self, at: SimTime, kind: SiteEvent, subject: &str) {
        (**self).site_event(at, kind, subject);
    }
}
