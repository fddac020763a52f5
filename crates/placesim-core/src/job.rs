//! Jobs as the kernel sees them: when they arrive, what they ask for, how long they run.

use crate::ids::{JobId, RequestId};
use crate::request::Request;
use crate::resource::ConsumableIdx;
use crate::state::LimitDraw;
use crate::time::{SimDuration, SimTime};
use std::collections::HashMap;
use std::sync::Arc;

/// One job of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The job's number in its source (SWF field 1), for output rows.
    pub source_id: u64,
    /// When it is submitted.
    pub submit: SimTime,
    /// How long it ran in the trace (SWF field 4): what it would need on the reference machine.
    pub runtime: SimDuration,
    /// The user's walltime request (SWF field 9, or the runtime when absent): all that
    /// schedulers may use to plan.
    pub estimate: SimDuration,
    /// Whether `estimate` is the user's own request, rather than the runtime standing in for
    /// a request the trace does not give: a queue's `resources_default.walltime` replaces
    /// only the latter, as PBS gives it only to a job that asked for no walltime.
    pub estimate_requested: bool,
    /// Processors requested, for output rows and size classes.
    pub size: u32,
    /// Its resource request, interned in the workload's request table.
    pub request: RequestId,
    /// Its user, group, queue and partition (SWF fields 12, 13, 15 and 16), each 4 bytes
    /// rather than an `Option<u32>`'s 8; read and set through [`Job::user`] and the like.
    user: MaybeId,
    group: MaybeId,
    queue: MaybeId,
    partition: MaybeId,
    /// The memory it asked for, in KiB per processor (SWF field 10), when given: what a
    /// scenario's size mapping puts into its request.
    pub requested_memory_kib: Option<std::num::NonZeroU64>,
    /// Its priority and project, which only request rules and a site's import give, and
    /// which most workloads leave unset: kept apart, so that a job without them costs 8
    /// bytes for them rather than 32 (a workload holds every job for the whole run). Read
    /// and set through [`Job::priority`], [`Job::project`] and their setters.
    labels: Option<Box<JobLabels>>,
}

// A workload holds every job for the whole run (CEA-Curie's 312,807 of them): a field added
// here costs that many times over, and this says so at once.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Job>() == 80);

/// A number a trace may leave unknown, in 4 bytes: `u32::MAX` stands for unknown. SWF's
/// unknown is -1, and a number past `u32::MAX` was read as unknown already, so only that one
/// number, which no trace gives a user or a queue, joins them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MaybeId(u32);

impl MaybeId {
    const UNKNOWN: MaybeId = MaybeId(u32::MAX);

    fn new(id: Option<u32>) -> MaybeId {
        MaybeId(id.unwrap_or(u32::MAX))
    }

    fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

/// What only some jobs carry ([`Job::priority`], [`Job::project`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct JobLabels {
    priority: Option<i64>,
    project: Option<Arc<str>>,
}

impl Job {
    /// A job known only by what the kernel needs: its number in its source, its submit time,
    /// its runtime and estimate, its size and its request, with no user, group, queue,
    /// partition, priority or project (set the fields for those).
    pub fn new(
        source_id: u64,
        submit: SimTime,
        runtime: SimDuration,
        estimate: SimDuration,
        size: u32,
        request: RequestId,
    ) -> Job {
        Job {
            source_id,
            submit,
            runtime,
            estimate,
            estimate_requested: true,
            size,
            request,
            user: MaybeId::UNKNOWN,
            group: MaybeId::UNKNOWN,
            queue: MaybeId::UNKNOWN,
            partition: MaybeId::UNKNOWN,
            requested_memory_kib: None,
            labels: None,
        }
    }

    /// Its user (SWF field 12), if known.
    pub fn user(&self) -> Option<u32> {
        self.user.get()
    }

    /// Its group (SWF field 13), if known.
    pub fn group(&self) -> Option<u32> {
        self.group.get()
    }

    /// Its queue (SWF field 15), if known.
    pub fn queue(&self) -> Option<u32> {
        self.queue.get()
    }

    /// Its partition (SWF field 16), if known.
    pub fn partition(&self) -> Option<u32> {
        self.partition.get()
    }

    /// Sets (or clears) [`Job::user`]; `u32::MAX` reads back as unknown.
    pub fn set_user(&mut self, user: Option<u32>) {
        self.user = MaybeId::new(user);
    }

    /// Sets (or clears) [`Job::group`]; `u32::MAX` reads back as unknown.
    pub fn set_group(&mut self, group: Option<u32>) {
        self.group = MaybeId::new(group);
    }

    /// Sets (or clears) [`Job::queue`]; `u32::MAX` reads back as unknown.
    pub fn set_queue(&mut self, queue: Option<u32>) {
        self.queue = MaybeId::new(queue);
    }

    /// Sets (or clears) [`Job::partition`]; `u32::MAX` reads back as unknown.
    pub fn set_partition(&mut self, partition: Option<u32>) {
        self.partition = MaybeId::new(partition);
    }

    /// PBS's `job_priority` (qsub -p), from a request rule; none when unknown (PBS's default
    /// is 0).
    pub fn priority(&self) -> Option<i64> {
        self.labels.as_ref().and_then(|l| l.priority)
    }

    /// The job's project (PBS's `project`, Moab's account), from a request rule; none when
    /// unknown.
    pub fn project(&self) -> Option<&Arc<str>> {
        self.labels.as_ref().and_then(|l| l.project.as_ref())
    }

    /// Sets (or clears) [`Job::priority`].
    pub fn set_priority(&mut self, priority: Option<i64>) {
        self.set_labels(|l| l.priority = priority);
    }

    /// Sets (or clears) [`Job::project`].
    pub fn set_project(&mut self, project: Option<Arc<str>>) {
        self.set_labels(|l| l.project = project);
    }

    /// Changes the labels, keeping none at all when both are unset, so that two jobs with
    /// the same values compare equal however they were set.
    fn set_labels(&mut self, change: impl FnOnce(&mut JobLabels)) {
        let mut labels = self.labels.take().unwrap_or_default();
        change(&mut labels);
        if *labels != JobLabels::default() {
            self.labels = Some(labels);
        }
    }
}

/// Error assembling a workload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadError {
    /// Jobs must be given in submit order; the kernel merges them as a sorted stream.
    #[error(
        "job {index} (source id {source_id}) is submitted at {submit}, before the job ahead of it"
    )]
    Unsorted {
        /// Position in the job list.
        index: usize,
        /// Its source id.
        source_id: u64,
        /// Its submit time.
        submit: SimTime,
    },
    /// A job names a request that is not in the table.
    #[error("job {index} names request {request}, but the table has {n_requests}")]
    UnknownRequest {
        /// Position in the job list.
        index: usize,
        /// The request id.
        request: RequestId,
        /// Table size.
        n_requests: usize,
    },
    /// A request with no chunks cannot be placed.
    #[error("request {0} has no chunks")]
    EmptyRequest(RequestId),
}

/// Jobs in submit order (ties in source order) with their interned requests.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    jobs: Vec<Job>,
    requests: Vec<Request>,
    /// Total ncpus of each job's request, dense by job id: queue scans read this, not the jobs.
    job_ncpus: Vec<u64>,
    min_request_ncpus: u64,
}

impl Workload {
    /// Checks order and references. Job `i` gets [`JobId`] `i`.
    pub fn new(jobs: Vec<Job>, requests: Vec<Request>) -> Result<Self, WorkloadError> {
        for (index, pair) in jobs.windows(2).enumerate() {
            if pair[1].submit < pair[0].submit {
                return Err(WorkloadError::Unsorted {
                    index: index + 1,
                    source_id: pair[1].source_id,
                    submit: pair[1].submit,
                });
            }
        }
        for (index, job) in jobs.iter().enumerate() {
            if job.request.index() >= requests.len() {
                return Err(WorkloadError::UnknownRequest {
                    index,
                    request: job.request,
                    n_requests: requests.len(),
                });
            }
        }
        if let Some(i) = requests.iter().position(|r| r.chunks.is_empty()) {
            return Err(WorkloadError::EmptyRequest(RequestId::from_index(i)));
        }
        let request_ncpus: Vec<u64> = requests
            .iter()
            .map(|r| r.total(ConsumableIdx::NCPUS))
            .collect();
        let min_request_ncpus = request_ncpus.iter().copied().min().unwrap_or(0);
        let job_ncpus = jobs
            .iter()
            .map(|j| request_ncpus[j.request.index()])
            .collect();
        Ok(Workload {
            jobs,
            requests,
            job_ncpus,
            min_request_ncpus,
        })
    }

    /// The jobs, the workload given up: a workload made again from them (with other
    /// requests, say) needs no copy of them.
    pub fn into_jobs(self) -> Vec<Job> {
        self.jobs
    }

    /// All jobs; a job's [`JobId`] is its position.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// One job.
    pub fn job(&self, id: JobId) -> &Job {
        &self.jobs[id.index()]
    }

    /// The request table.
    pub fn requests(&self) -> &[Request] {
        &self.requests
    }

    /// The fewest ncpus any request asks for. When it is positive, a pass can stop looking
    /// for jobs to start as soon as no ncpus are free.
    pub fn min_request_ncpus(&self) -> u64 {
        self.min_request_ncpus
    }

    /// The total ncpus a job's request asks for: the cheapest test of whether it can fit.
    pub fn ncpus_of(&self, id: JobId) -> u64 {
        self.job_ncpus[id.index()]
    }

    /// The request of a job.
    pub fn request_of(&self, id: JobId) -> &Request {
        &self.requests[self.jobs[id.index()].request.index()]
    }

    /// A job's credentials, as a Moab reservation's ACL matches them.
    pub fn credentials(&self, id: JobId) -> crate::Credentials<'_> {
        let job = &self.jobs[id.index()];
        crate::Credentials {
            user: job.user(),
            group: job.group(),
            account: job.project().map(|p| &**p),
            class: self.request_of(id).class,
        }
    }

    /// This workload with each job's request carrying what it counts against run limits and
    /// against limits checked at submission: `draws[c]` for a job of class `class_of_job[i]
    /// = Some(c)`, each list in the order given (the order limits are checked in). The
    /// classes are distinct, so jobs that share a request but differ in class (another user,
    /// say) get requests of their own, and jobs that count the same share one, so that
    /// whatever a policy remembers per request stays true. A job of no class (`None`, past
    /// the end of `class_of_job`, or with no entry in `draws`) keeps its request. Also gives,
    /// for each request added (in order, after the old ones), the request it was copied
    /// from. The caller finds each job's class once per distinct job (a user's jobs of one
    /// shape share it), so a job here costs a look-up of two numbers, where comparing its
    /// lists by value cost a hash of each and a copy of both.
    pub fn with_limit_draws(
        self,
        class_of_job: &[Option<u32>],
        draws: &[LimitDraws],
    ) -> (Workload, Vec<RequestId>) {
        let Workload {
            mut jobs,
            mut requests,
            job_ncpus,
            min_request_ncpus,
        } = self;
        let mut interned: HashMap<(RequestId, u32), RequestId> = HashMap::new();
        let mut copied_from: Vec<RequestId> = Vec::new();
        for (job, &class) in jobs.iter_mut().zip(class_of_job) {
            let Some(class) = class else { continue };
            let Some(counted) = draws.get(class as usize) else {
                continue;
            };
            let next = RequestId::from_index(requests.len());
            let id = *interned
                .entry((job.request, class))
                .or_insert_with_key(|(old, _)| {
                    let mut request = requests[old.index()].clone();
                    request.limit_draws = counted.run.clone();
                    request.queued_draws = counted.queued.clone();
                    requests.push(request);
                    copied_from.push(*old);
                    next
                });
            job.request = id;
        }
        let workload = Workload {
            jobs,
            requests,
            job_ncpus,
            min_request_ncpus,
        };
        (workload, copied_from)
    }
}

/// What the jobs of one class count against ([`Workload::with_limit_draws`]): run limits and
/// limits checked at submission, each in the order they are checked; `None` for none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LimitDraws {
    /// Run limits (`max_run`, `max_run_res`).
    pub run: Option<Arc<[LimitDraw]>>,
    /// Limits checked at submission (`max_queued`, `max_queued_res`).
    pub queued: Option<Arc<[LimitDraw]>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job::new(
            1,
            SimTime(0),
            SimDuration(10),
            SimDuration(10),
            1,
            RequestId(0),
        )
    }

    /// The compact fields read back what was set: a known id, unknown, and `u32::MAX`, which
    /// stands for unknown; a job whose labels are set and cleared again equals one never
    /// given them.
    #[test]
    fn compact_fields_read_back_what_was_set() {
        let mut j = job();
        assert_eq!(
            (j.user(), j.group(), j.queue(), j.partition()),
            (None, None, None, None)
        );
        j.set_user(Some(7));
        j.set_group(Some(0));
        j.set_queue(Some(u32::MAX));
        j.set_partition(Some(u32::MAX - 1));
        assert_eq!(
            (j.user(), j.group(), j.queue(), j.partition()),
            (Some(7), Some(0), None, Some(u32::MAX - 1))
        );
        j.set_priority(Some(-5));
        j.set_project(Some("climate".into()));
        assert_eq!(
            (j.priority(), j.project().map(|p| &**p)),
            (Some(-5), Some("climate"))
        );
        j.set_priority(None);
        assert_eq!(j.project().map(|p| &**p), Some("climate"));
        j.set_project(None);
        j.set_user(None);
        j.set_group(None);
        j.set_partition(None);
        assert_eq!(j, job());
    }
}
