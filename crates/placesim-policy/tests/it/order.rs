//! PBS's job order (queue-disciplines.md §2.2), as the discipline inside [`Ordered`] sees the
//! queue: queues by descending priority with `by_queue`, queues of one priority taking turns
//! with `round_robin`, then `job_sort_key`, then submission order.

use placesim_core::{
    Cluster, ClusterState, ConsumableIdx, Decision, Job, JobId, Request, RequestId, SchedContext,
    SchedulingPolicy, SimDuration, SimTime, Workload,
};
use placesim_policy::queue::{JobOrder, Ordered, SortKey, SortLine};

/// Records the queue each pass sees, and starts nothing.
#[derive(Default)]
struct Seen(Vec<Vec<u32>>);

impl SchedulingPolicy for Seen {
    fn name(&self) -> String {
        "seen".to_owned()
    }
    fn schedule(&mut self, ctx: &SchedContext<'_>, _: &mut Vec<Decision>) {
        self.0.push(ctx.queue.iter().map(|j| j.0).collect());
    }
}

/// Jobs `(ncpus, estimate, queue)`, all waiting, in submission order; the queue the
/// discipline sees under `order`.
fn seen(jobs: &[(u32, u64, Option<u32>)], order: JobOrder) -> Vec<u32> {
    let mut requests = Vec::new();
    let jobs: Vec<Job> = jobs
        .iter()
        .enumerate()
        .map(|(i, &(n, estimate, queue))| {
            let mut r = Request::processors(n, 3);
            r.queue = queue;
            requests.push(r);
            Job {
                source_id: i as u64 + 1,
                submit: SimTime(i as u64),
                runtime: SimDuration(estimate),
                estimate: SimDuration(estimate),
                size: n,
                request: RequestId(i as u32),
                user: None,
                group: None,
                queue: None,
                partition: None,
            }
        })
        .collect();
    let workload = Workload::new(jobs, requests).unwrap();
    let state = ClusterState::new(Cluster::homogeneous(64, 1).unwrap());
    let queue: Vec<JobId> = (0..workload.jobs().len() as u32).map(JobId).collect();
    let ctx = SchedContext {
        now: SimTime(10),
        state: &state,
        workload: &workload,
        queue: &queue,
        running: &[],
        fresh_from: 0,
        freed_since_last_pass: true,
    };
    let mut ordered = Ordered::new(Seen::default(), order);
    ordered.schedule(&ctx, &mut Vec::new());
    ordered.into_inner().0.pop().unwrap()
}

fn line(key: SortKey, high_first: bool) -> SortLine {
    SortLine { key, high_first }
}

const NCPUS: SortKey = SortKey::Resource(ConsumableIdx::NCPUS);

/// Several keys in order: ncpus HIGH first, ties by walltime LOW, then submission order.
#[test]
fn job_sort_keys_apply_in_order_then_submission() {
    let jobs = [
        (2, 50, None),
        (8, 100, None),
        (2, 10, None),
        (8, 100, None),
        (4, 5, None),
    ];
    let order = JobOrder {
        keys: vec![line(NCPUS, true), line(SortKey::Walltime, false)],
        by_queue: true,
        ..JobOrder::default()
    };
    assert_eq!(seen(&jobs, order), [1, 3, 4, 2, 0]);
}

/// `by_queue`: queue 1 (priority 20) before queue 0 (priority 10) before the default queue
/// (priority 0, after the listed queues); within each, the sort key. Without `by_queue`, the
/// key alone.
#[test]
fn by_queue_visits_queues_by_descending_priority() {
    let jobs = [
        (1, 10, None),
        (4, 10, Some(0)),
        (2, 10, Some(1)),
        (8, 10, None),
        (1, 10, Some(1)),
        (2, 10, Some(0)),
    ];
    let order = |by_queue| JobOrder {
        keys: vec![line(NCPUS, true)],
        by_queue,
        round_robin: false,
        queue_priority: vec![10, 20],
    };
    assert_eq!(seen(&jobs, order(true)), [2, 4, 1, 5, 3, 0]);
    assert_eq!(seen(&jobs, order(false)), [3, 1, 2, 5, 0, 4]);
}

/// `round_robin`: queues 0 and 1 share priority 5 and take turns, one job each, queue 0
/// first; queue 2 (priority 9) goes before both; the default queue (priority 0) last.
#[test]
fn round_robin_interleaves_queues_of_one_priority() {
    let jobs = [
        (1, 10, Some(0)),
        (1, 10, Some(0)),
        (1, 10, Some(0)),
        (1, 10, Some(1)),
        (1, 10, None),
        (1, 10, Some(2)),
        (1, 10, Some(1)),
    ];
    let order = JobOrder {
        keys: Vec::new(),
        by_queue: true,
        round_robin: true,
        queue_priority: vec![5, 5, 9],
    };
    assert_eq!(seen(&jobs, order), [5, 0, 3, 1, 6, 2, 4]);
}
