//! Jobs of a reservation's own queue (reservations-and-partitions.md §1.4): they run only
//! inside their reservation, on what it holds, while its window is open.
//!
//! PBS schedules them in the same cycle as every other job, but their universe is the
//! reservation's vnodes with the reservation's amounts, and inside it there is no calendar,
//! no top job and no strict order: each job that fits starts. [`InReservations`] wraps the
//! run's discipline: the discipline gets the queue without these jobs, and the jobs of each
//! open reservation are then started in queue order wherever first fit puts them in the
//! reservation's universe ([`placesim_core::ReservationQueue::universe`]).

use placesim_core::{
    Decision, JobId, PlacementPolicy, Request, SchedContext, SchedulingPolicy, Scratch, ScratchBuf,
};
use std::sync::Arc;

/// PBS's comment on a job whose reservation's window has not opened (openpbs
/// `job_info.cpp`, `QUEUE_NOT_STARTED`).
pub const QUEUE_NOT_STARTED: &str = "Not Running: Queue not started.";

/// The comment on a job that does not fit in its open reservation when the placement gives
/// no reason of its own (PBS's when its node search finds nothing).
const NO_RESOURCES: &str = "Not Running: No available resources on nodes";

/// A discipline, with the jobs of reservations' queues taken out of its queue and started
/// inside their reservations.
#[derive(Debug)]
pub struct InReservations<S, P> {
    inner: S,
    /// Places jobs inside a reservation: the run's first fit, in its vnode order (a job's
    /// own `place=group` is not honoured there yet).
    first_fit: P,
    /// The queue the discipline sees this pass.
    main: Vec<JobId>,
    buf: ScratchBuf,
    comments: Vec<(JobId, Arc<str>)>,
    not_started: Arc<str>,
    no_resources: Arc<str>,
}

impl<S: SchedulingPolicy, P: PlacementPolicy> InReservations<S, P> {
    /// `inner` for every job outside reservations; `first_fit` places the jobs inside.
    pub fn new(inner: S, first_fit: P) -> Self {
        InReservations {
            inner,
            first_fit,
            main: Vec::new(),
            buf: ScratchBuf::default(),
            comments: Vec::new(),
            not_started: Arc::from(QUEUE_NOT_STARTED),
            no_resources: Arc::from(NO_RESOURCES),
        }
    }
}

impl<S: SchedulingPolicy, P: PlacementPolicy> SchedulingPolicy for InReservations<S, P> {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        if ctx.reservation_queues.is_empty() {
            self.inner.schedule(ctx, decisions);
            return;
        }
        let queue_of = |job: JobId| ctx.workload.request_of(job).queue;
        let inside = |job: JobId| {
            queue_of(job).is_some_and(|q| ctx.reservation_queues.iter().any(|r| r.queue == q))
        };
        self.main.clear();
        let mut fresh_from = 0;
        for (pos, &job) in ctx.queue.iter().enumerate() {
            if !inside(job) {
                if pos < ctx.fresh_from {
                    fresh_from += 1;
                }
                self.main.push(job);
            }
        }
        let main = SchedContext {
            queue: &self.main,
            fresh_from,
            ..*ctx
        };
        self.inner.schedule(&main, decisions);
        for r in ctx.reservation_queues {
            let jobs = ctx
                .queue
                .iter()
                .copied()
                .filter(|&j| queue_of(j) == Some(r.queue));
            let Some(universe) = &r.universe else {
                for job in jobs {
                    self.comments.push((job, self.not_started.clone()));
                }
                continue;
            };
            let mut view = Scratch::new(universe, &mut self.buf);
            for job in jobs {
                let request: &Request = ctx.workload.request_of(job);
                match self.first_fit.place(request, &view) {
                    Some(allocation) => {
                        view.take(&allocation);
                        decisions.push(Decision::Start { job, allocation });
                    }
                    None => {
                        let why = self.first_fit.refusal();
                        let why = why.unwrap_or_else(|| self.no_resources.clone());
                        self.comments.push((job, why));
                    }
                }
            }
        }
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        self.inner.drain_comments(out);
        out.append(&mut self.comments);
    }

    fn retract_pass(&mut self) {
        self.comments.clear();
        self.inner.retract_pass();
    }

    super::pass_on_to_inner!(
        comment_superseded,
        passes_when_idle,
        drain_estimates,
        drain_priorities,
        wakeup,
        check_start,
    );
}
