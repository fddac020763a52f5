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

/// One waiting job: ncpus, submit time, estimate, PBS queue.
type Waiting = (u32, u64, u64, Option<u32>);

/// A workload of `jobs`, each of its ncpus in chunks of one, running as long as its estimate.
fn waiting_workload(jobs: &[Waiting]) -> Workload {
    let mut requests = Vec::new();
    let jobs: Vec<Job> = jobs
        .iter()
        .enumerate()
        .map(|(i, &(n, submit, estimate, queue))| {
            let mut r = Request::processors(n, 3);
            r.queue = queue;
            requests.push(r);
            Job::new(
                i as u64 + 1,
                SimTime(submit),
                SimDuration(estimate),
                SimDuration(estimate),
                n,
                RequestId(i as u32),
            )
        })
        .collect();
    Workload::new(jobs, requests).unwrap()
}

/// One pass of `ordered` at `now` over `jobs`, all waiting, in submission order: the queue the
/// discipline saw, and the pass's comments.
fn pass_at(
    ordered: &mut Ordered<Seen>,
    jobs: &[Waiting],
    now: u64,
) -> (Vec<u32>, Vec<(u32, String)>) {
    let workload = waiting_workload(jobs);
    let state = ClusterState::new(Cluster::homogeneous(64, 1).unwrap());
    let queue: Vec<JobId> = (0..workload.jobs().len() as u32).map(JobId).collect();
    let ctx = crate::common::first_pass_at(now, &state, &workload, &queue, &[]);
    ordered.schedule(&ctx, &mut Vec::new());
    let mut comments = Vec::new();
    ordered.drain_comments(&mut comments);
    let seen = ordered.inner().0.last().cloned().unwrap();
    let comments = comments
        .into_iter()
        .map(|(j, t)| (j.0, t.to_string()))
        .collect();
    (seen, comments)
}

/// Jobs `(ncpus, estimate, queue)`, all waiting, submitted at 0, 1, 2, ...: the queue the
/// discipline sees under `order` at 10.
fn seen(jobs: &[(u32, u64, Option<u32>)], order: JobOrder) -> Vec<u32> {
    let waiting: Vec<Waiting> = jobs
        .iter()
        .enumerate()
        .map(|(i, &(n, estimate, queue))| (n, i as u64, estimate, queue))
        .collect();
    pass_at(&mut Ordered::new(Seen::default(), order), &waiting, 10).0
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
        ..JobOrder::default()
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
        ..JobOrder::default()
    };
    assert_eq!(seen(&jobs, order), [5, 0, 3, 1, 6, 2, 4]);
}

mod formula {
    use super::*;
    use placesim_policy::queue::{Formula, Term, TermValues};

    /// One job of 4 ncpus, 8 GiB (in KiB, as PBS holds sizes), a walltime of 3,600 s,
    /// submitted at 100.
    fn one_job() -> Workload {
        let request = Request::from_chunks(vec![placesim_core::Chunk::new(1, vec![4, 8 << 20, 0])]);
        let job = Job::new(
            1,
            SimTime(100),
            SimDuration(3600),
            SimDuration(3600),
            4,
            RequestId(0),
        );
        Workload::new(vec![job], vec![request]).unwrap()
    }

    fn terms(name: &str) -> Result<Term, String> {
        match name {
            "ncpus" => Ok(Term::Resource(ConsumableIdx::NCPUS)),
            "mem" => Ok(Term::Resource(ConsumableIdx::MEM)),
            "walltime" => Ok(Term::Walltime),
            "eligible_time" => Ok(Term::EligibleTime),
            "queue_priority" => Ok(Term::QueuePriority),
            "job_priority" => Ok(Term::JobPriority),
            other => Err(format!("unknown term `{other}`")),
        }
    }

    fn value(text: &str) -> f64 {
        let w = one_job();
        let f = Formula::parse(text, &terms).unwrap_or_else(|e| panic!("{text}: {e}"));
        f.value(&TermValues {
            queue_priority: 7,
            ..TermValues::at(&w, JobId(0), SimTime(1000))
        })
    }

    fn error(text: &str) -> String {
        Formula::parse(text, &terms).unwrap_err().to_string()
    }

    /// Python's arithmetic, as PBS evaluates the formula.
    #[test]
    fn arithmetic_follows_python() {
        assert_eq!(value("2 + 3 * 4"), 14.0);
        assert_eq!(value("(2 + 3) * 4"), 20.0);
        assert_eq!(value("-2**2"), -4.0);
        assert_eq!(value("2**3**2"), 512.0);
        assert_eq!(value("2**-1"), 0.5);
        assert_eq!(value("7 // 2"), 3.0);
        assert_eq!(value("-7 // 2"), -4.0);
        assert_eq!(value("-7 % 3"), 2.0);
        assert_eq!(value("7 % -3"), -2.0);
        assert_eq!(value("7 / 2"), 3.5);
        assert_eq!(value("1e3 + 2.5E-1 + 1_000"), 2000.25);
        assert_eq!(value("min(3, 1, 2) + max(4, 5) + abs(-6)"), 12.0);
        // A failure is 0, as PBS uses.
        assert_eq!(value("ncpus / (walltime - 3600)"), 0.0);
        assert_eq!(value("5 % 0"), 0.0);
    }

    /// The terms: requested totals (mem in KiB), walltime, time since submission, queue
    /// priority.
    #[test]
    fn terms_are_the_jobs() {
        assert_eq!(value("ncpus"), 4.0);
        assert_eq!(value("mem / 1024 / 1024"), 8.0);
        assert_eq!(value("walltime / 3600"), 1.0);
        assert_eq!(value("eligible_time"), 900.0);
        assert_eq!(value("queue_priority"), 7.0);
        // A job without a priority has PBS's default, 0.
        assert_eq!(value("job_priority + 1"), 1.0);
        let dynamic = |t: &str| Formula::parse(t, &terms).unwrap().is_dynamic();
        assert!(dynamic("ncpus + eligible_time / 60"));
        assert!(!dynamic("ncpus * walltime"));
    }

    /// What is refused, with the column.
    #[test]
    fn bad_formulas_are_refused_with_the_column() {
        assert_eq!(
            error("ncpus +"),
            "column 8: expected a number, a term or `(`, found the end"
        );
        assert_eq!(
            error("2 3"),
            "column 3: expected an operator or the end of the formula"
        );
        assert_eq!(error("ncpus * foo"), "column 9: unknown term `foo`");
        assert_eq!(error("(ncpus"), "column 7: expected `)`");
        assert_eq!(
            error("min(1)"),
            "column 1: `min` takes two arguments or more"
        );
        assert_eq!(
            error("ncpus ^ 2"),
            "column 7: expected an operator or the end of the formula"
        );
        let nested = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(Formula::parse(&nested(100), &terms).map(|_| ()), Ok(()));
        assert_eq!(
            error(&nested(101)),
            "column 101: the formula nests more than 100 deep"
        );
        assert_eq!(
            error(&"-".repeat(200)),
            "column 102: the formula nests more than 100 deep"
        );
    }

    /// `job_sort_formula`, higher first: ncpus × walltime. J2 (80), then J0 and J3 (60
    /// each, by submission), then J1 (40).
    #[test]
    fn a_static_formula_orders_higher_first() {
        let f = Formula::parse("ncpus * walltime", &terms).unwrap();
        let order = JobOrder {
            formula: Some(std::sync::Arc::new(f)),
            ..JobOrder::default()
        };
        let jobs = [(2, 30, None), (4, 10, None), (8, 10, None), (6, 10, None)];
        assert_eq!(seen(&jobs, order), [2, 0, 3, 1]);
    }
}

/// A formula over `eligible_time` is evaluated at every pass: `eligible_time * ncpus`. At 10,
/// J0 (1 ncpu, since 0) and J1 (10 ncpus, since 9) tie at 10 and go by submission; at 20, J1
/// (110) is ahead of J0 (20).
#[test]
fn a_formula_over_eligible_time_reorders_as_time_passes() {
    let terms = |name: &str| match name {
        "ncpus" => Ok(placesim_policy::queue::Term::Resource(ConsumableIdx::NCPUS)),
        "eligible_time" => Ok(placesim_policy::queue::Term::EligibleTime),
        other => Err(format!("unknown term `{other}`")),
    };
    let f = placesim_policy::queue::Formula::parse("eligible_time * ncpus", &terms).unwrap();
    let mut ordered = Ordered::new(
        Seen::default(),
        JobOrder {
            formula: Some(std::sync::Arc::new(f)),
            ..JobOrder::default()
        },
    );
    let jobs = [(1, 0, 10, None), (10, 9, 10, None)];
    assert_eq!(pass_at(&mut ordered, &jobs, 10).0, [0, 1]);
    assert_eq!(pass_at(&mut ordered, &jobs, 20).0, [1, 0]);
}

/// `job_sort_formula_threshold`: a job whose value is at or below it is not run and not seen
/// by the discipline, with PBS's comment, told once while it stays under.
#[test]
fn jobs_at_or_under_the_threshold_are_not_run() {
    let terms = |name: &str| match name {
        "ncpus" => Ok(placesim_policy::queue::Term::Resource(ConsumableIdx::NCPUS)),
        other => Err(format!("unknown term `{other}`")),
    };
    let f = placesim_policy::queue::Formula::parse("ncpus", &terms).unwrap();
    let mut ordered = Ordered::new(
        Seen::default(),
        JobOrder {
            formula: Some(std::sync::Arc::new(f)),
            threshold: Some(2.0),
            ..JobOrder::default()
        },
    );
    let jobs = [
        (1, 0, 10, None),
        (4, 1, 10, None),
        (2, 2, 10, None),
        (3, 3, 10, None),
    ];
    let (queue, comments) = pass_at(&mut ordered, &jobs, 10);
    assert_eq!(queue, [1, 3]);
    let text = "Not Running: Job is under job_sort_formula threshold value".to_owned();
    assert_eq!(comments, [(0, text.clone()), (2, text)]);
    let (queue, comments) = pass_at(&mut ordered, &jobs, 11);
    assert_eq!(queue, [1, 3]);
    assert!(comments.is_empty());
}

/// Whether a pass would decide alike with the jobs after a place in any order
/// (`SchedulingPolicy::decides_alike_in_any_order_after`, which lets a fairshare pass stand
/// rather than run again): EASY says so only from after its head, which another order could
/// change; greedy, which has no head, from anywhere; FCFS never. On 4 vnodes with nothing
/// running, the queue `[2, 4, 1]` ncpus: EASY starts the first, is blocked at the second (its
/// head, at place 1), and backfills the third if it ends in time.
#[test]
fn easy_decides_alike_in_another_order_only_after_its_head() {
    use placesim_policy::queue::Discipline;
    let workload = waiting_workload(&[(2, 0, 100, None), (4, 1, 100, None), (1, 2, 50, None)]);
    let state = ClusterState::new(Cluster::homogeneous(4, 1).unwrap());
    let queue: Vec<JobId> = (0..3).map(JobId).collect();
    let ctx = crate::common::first_pass_at(10, &state, &workload, &queue, &[]);
    let alike_after = |discipline: Discipline| {
        let mut policy = discipline.build();
        let mut decisions = Vec::new();
        policy.schedule(&ctx, &mut decisions);
        let started: Vec<u32> = decisions
            .iter()
            .map(|Decision::Start { job, .. }| job.0)
            .collect();
        let alike: Vec<bool> = (0..=3)
            .map(|place| policy.decides_alike_in_any_order_after(place))
            .collect();
        (started, alike)
    };
    assert_eq!(
        alike_after(Discipline::EASY),
        (vec![0, 2], vec![false, false, true, true]),
        "EASY: the head is the job at place 1"
    );
    assert_eq!(
        alike_after(Discipline::Greedy),
        (vec![0, 2], vec![true; 4]),
        "greedy"
    );
    assert_eq!(
        alike_after(Discipline::Fcfs),
        (vec![0], vec![false; 4]),
        "FCFS"
    );
}

/// A pass that an outer adapter takes back leaves no trace in Moab's throttling. `Ordered`
/// does that under fairshare when a start moves the jobs after it: the trial's comments are
/// dropped, the pass is retracted and run again on the new order. The run again must say what a
/// run on that order alone says, and so must the pass after it. Job 1 is over `MAXJOB` from
/// the start of the pass (its user's job 0 runs): the trial tells it so, and the run again
/// must tell it again, as its message went with the trial.
#[test]
fn throttling_forgets_a_retracted_pass() {
    use placesim_core::{Allocation, RunningJob, Sharing, VnodeId};
    use placesim_policy::queue::{Discipline, MoabLimits, SoftHard, Throttled};
    let workload = waiting_workload(&[(4, 0, 100, None); 4]);
    let mut jobs = workload.jobs().to_vec();
    // Jobs 0 and 1 are user 0's, jobs 2 and 3 user 1's.
    for (job, user) in jobs.iter_mut().zip([0, 0, 1, 1]) {
        job.set_user(Some(user));
    }
    let workload = Workload::new(jobs, workload.requests().to_vec()).unwrap();
    let mut settings = MoabLimits::default();
    settings.limits[0].insert(
        "DEFAULT".to_owned(),
        [Some(SoftHard::new(1, 1)), None, None],
    );
    let settings = std::sync::Arc::new(settings);
    let mut state = ClusterState::new(Cluster::homogeneous(64, 1).unwrap());
    let mut allocation = Allocation::new(Sharing::Shared);
    for v in 0..4 {
        allocation.add(VnodeId(v), &[1, 0, 0]);
    }
    state.allocate(&allocation).unwrap();
    let running = [RunningJob {
        job: JobId(0),
        start: SimTime(0),
        estimated_end: SimTime(100),
        allocation,
    }];
    let pass = |policy: &mut Throttled<Box<dyn SchedulingPolicy>>, queue: &[u32], now: u64| {
        let queue: Vec<JobId> = queue.iter().map(|&j| JobId(j)).collect();
        let ctx = crate::common::first_pass_at(now, &state, &workload, &queue, &running);
        let mut decisions = Vec::new();
        policy.schedule(&ctx, &mut decisions);
        let mut comments = Vec::new();
        policy.drain_comments(&mut comments);
        let started: Vec<u32> = decisions
            .iter()
            .map(|Decision::Start { job, .. }| job.0)
            .collect();
        let said: Vec<(u32, String)> = comments
            .into_iter()
            .map(|(j, t)| (j.0, t.to_string()))
            .collect();
        (started, said)
    };
    let held = |job: u32, user: u32, level: &str| {
        (
            job,
            format!(
                "job {} violates active {level} MAXJOB limit of 1 for user {user}  (R: 1, U: 1)",
                job + 1
            ),
        )
    };
    let mut taken_back = Throttled::new(Discipline::EASY.build(), settings.clone());
    let mut alone = Throttled::new(Discipline::EASY.build(), settings);
    // The trial on the first order tells job 1 why it waits, and is taken back.
    let (started, said) = pass(&mut taken_back, &[1, 2, 3], 10);
    assert_eq!(started, [2]);
    assert!(said.contains(&held(1, 0, "HARD")), "{said:?}");
    taken_back.retract_pass();
    // Run again on another order.
    let again = pass(&mut taken_back, &[2, 3, 1], 10);
    let reference = pass(&mut alone, &[2, 3, 1], 10);
    assert_eq!(reference.0, [2]);
    assert!(
        reference.1.contains(&held(1, 0, "HARD")),
        "{:?}",
        reference.1
    );
    assert_eq!(again, reference, "the run again");
    assert_eq!(
        pass(&mut taken_back, &[2, 3, 1], 20),
        pass(&mut alone, &[2, 3, 1], 20),
        "the next pass"
    );
}
