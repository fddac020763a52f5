//! Helpers: run an SWF text through the kernel, a sink that checks occupancy independently of
//! the kernel's own validation, and one that writes down what a run tells it.

use placesim_core::{
    Allocation, Cluster, ConsumableIdx, Job, JobId, JobOutcome, MetricsSink, ResourceDefs,
    RunStats, SchedulingPolicy, SimTime, TopJobEstimate, WalltimePolicy,
};
use placesim_policy::Discipline;
use placesim_testkit::Replay;
use placesim_workload::{SwfOptions, Trace, read_trace};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Reads an SWF text held in memory.
pub fn trace_from_text(text: &str, procs: u64) -> Trace {
    let opts = SwfOptions {
        procs: Some(procs),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    read_trace(
        text.as_bytes(),
        Path::new("test.swf"),
        &opts,
        &ResourceDefs::default(),
    )
    .expect("test trace reads")
}

/// Records every start with its allocation and every end, and checks occupancy at the end.
#[derive(Debug, Default)]
pub struct CheckingSink {
    pub starts: BTreeMap<JobId, (u64, Allocation)>,
    pub ends: BTreeMap<JobId, JobOutcome>,
    pub submit: BTreeMap<JobId, u64>,
    pub started_twice: Vec<JobId>,
    pub ended_twice: Vec<JobId>,
    /// Every start (true) and end (false) in the order the kernel reported them.
    pub log: Vec<(bool, JobId, u64)>,
}

impl MetricsSink for CheckingSink {
    fn job_started(
        &mut self,
        job: &Job,
        id: JobId,
        start: placesim_core::SimTime,
        allocation: &Allocation,
    ) {
        if self
            .starts
            .insert(id, (start.as_secs(), allocation.clone()))
            .is_some()
        {
            self.started_twice.push(id);
        }
        self.submit.insert(id, job.submit.as_secs());
        self.log.push((true, id, start.as_secs()));
    }
    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        if self.ends.insert(outcome.job, *outcome).is_some() {
            self.ended_twice.push(outcome.job);
        }
        self.log.push((false, outcome.job, outcome.end.as_secs()));
    }
}

/// A job's start, its set label, and the ncpus it took per vnode, in allocation order.
pub type LabelledStart = (u64, String, Vec<(String, u64)>);

impl CheckingSink {
    /// The starts of jobs `0..n` ([`LabelledStart`]), each of which must have started.
    pub fn labelled_starts(&self, cluster: &Cluster, n: usize) -> Vec<LabelledStart> {
        let n_cons = cluster.resources().n_consumables();
        (0..n)
            .map(|i| {
                let (t, a) = &self.starts[&JobId(i as u32)];
                let parts = a
                    .parts(n_cons)
                    .map(|(v, amounts)| (cluster.vnode(v).name().to_owned(), amounts[0]))
                    .collect();
                (*t, a.label.as_deref().unwrap_or("").to_owned(), parts)
            })
            .collect()
    }

    /// Replays the recorded starts and ends in the order the kernel reported them, checking
    /// that time never goes backwards, and returns the first `(time, vnode)` at which some vnode
    /// holds more ncpus than it has, if any.
    pub fn first_oversubscription(&self, cluster: &Cluster) -> Option<(u64, usize)> {
        let n_cons = cluster.resources().n_consumables();
        let mut used = vec![0u64; cluster.n_vnodes()];
        let mut clock = 0;
        for &(is_start, id, t) in &self.log {
            assert!(
                t >= clock,
                "the reported clock went back from {clock} to {t}"
            );
            clock = t;
            let alloc = &self.starts[&id].1;
            for (v, amounts) in alloc.parts(n_cons) {
                let a = amounts[ConsumableIdx::NCPUS.index()];
                if is_start {
                    used[v.index()] += a;
                    if used[v.index()] > cluster.capacity(v)[ConsumableIdx::NCPUS.index()] {
                        return Some((t, v.index()));
                    }
                } else {
                    used[v.index()] -= a;
                }
            }
        }
        None
    }
}

/// Runs a trace on `procs` single-processor vnodes and returns the sink and stats.
pub fn run(
    trace: &Trace,
    procs_per_node: u64,
    policy: &mut dyn SchedulingPolicy,
    walltime: WalltimePolicy,
) -> (CheckingSink, RunStats, Cluster) {
    let cluster = Cluster::homogeneous(trace.procs, procs_per_node).expect("cluster");
    let mut sink = CheckingSink::default();
    let stats = Replay::on(&trace.workload, cluster.clone())
        .walltime(walltime)
        .run(policy, &mut sink);
    (sink, stats, cluster)
}

/// What a test expects of one job that ran: its id in the trace, when it started and ended,
/// and whether it was killed at its walltime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ran {
    /// Its id in the trace.
    pub job: u64,
    /// When it started.
    pub start: u64,
    /// When it ended.
    pub end: u64,
    /// Whether it was killed at its walltime.
    pub killed: bool,
}

impl Ran {
    /// Job `job` ran from `start` to its end at `end`.
    pub fn finished(job: u64, start: u64, end: u64) -> Ran {
        Ran {
            job,
            start,
            end,
            killed: false,
        }
    }

    /// Job `job` ran from `start` until it was killed at its walltime at `end`.
    pub fn killed(job: u64, start: u64, end: u64) -> Ran {
        Ran {
            job,
            start,
            end,
            killed: true,
        }
    }
}

/// Every job of `trace` under `policy` on its machine, in source-id order.
pub fn schedule(trace: &Trace, policy: Discipline) -> Vec<Ran> {
    schedule_with(trace, policy.build().as_mut())
}

/// [`schedule`] under a policy built by hand.
pub fn schedule_with(trace: &Trace, policy: &mut dyn placesim_core::SchedulingPolicy) -> Vec<Ran> {
    let (sink, stats, cluster) = run(trace, 1, policy, WalltimePolicy::Kill);
    assert!(stats.never_started.is_empty());
    assert_eq!(sink.first_oversubscription(&cluster), None);
    let mut rows: Vec<Ran> = sink
        .ends
        .values()
        .map(|o| Ran {
            job: trace.workload.job(o.job).source_id,
            start: o.start.as_secs(),
            end: o.end.as_secs(),
            killed: o.reason == placesim_core::EndReason::WalltimeKilled,
        })
        .collect();
    rows.sort();
    rows
}

/// An SWF line with the fields that matter here; the rest are -1.
pub fn swf_line(id: u64, submit: u64, run: i64, size: i64, estimate: i64) -> String {
    format!("{id} {submit} -1 {run} {size} -1 -1 {size} {estimate} -1 1 1 1 -1 1 -1 -1 -1\n")
}

/// First fit that never vouches for totals, so disciplines must take their vnode-level path.
#[derive(Debug, Default)]
pub struct VnodesOnly<P>(pub P);

impl<P: placesim_core::PlacementPolicy> placesim_core::PlacementPolicy for VnodesOnly<P> {
    fn name(&self) -> String {
        format!("{}-vnodes-only", self.0.name())
    }
    fn place(
        &mut self,
        request: &placesim_core::Request,
        view: &placesim_core::Scratch<'_>,
    ) -> Option<Allocation> {
        self.0.place(request, view)
    }
    fn supports(&self) -> &'static [placesim_core::RequestFeature] {
        self.0.supports()
    }
    fn depends_only_on_state(&self) -> bool {
        self.0.depends_only_on_state()
    }
}

/// A workload of `jobs` (submit, runtime, estimate, request text) on the resources `defs`;
/// job i has source id i + 1 and request i.
pub fn workload_of(
    defs: &placesim_core::ResourceDefs,
    jobs: &[(u64, u64, u64, &str)],
) -> placesim_core::Workload {
    use placesim_core::{RequestId, SimDuration, SimTime};
    let requests = jobs
        .iter()
        .map(|j| placesim_request::parse_and_lower(j.3, defs).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let list = jobs
        .iter()
        .enumerate()
        .map(|(i, &(submit, runtime, estimate, _))| {
            Job::new(
                i as u64 + 1,
                SimTime(submit),
                SimDuration(runtime),
                SimDuration(estimate),
                0,
                RequestId(i as u32),
            )
        })
        .collect();
    placesim_core::Workload::new(list, requests).expect("a valid workload")
}

/// A placement's sets, each by name with its vnodes' names: what a placement test compares.
pub fn set_members(
    pool: &placesim_policy::placement::BuiltPool<'_>,
    cluster: &Cluster,
) -> Vec<(String, Vec<String>)> {
    pool.sets
        .iter()
        .map(|set| {
            (
                set.name.to_owned(),
                set.vnodes
                    .iter()
                    .map(|&v| cluster.vnode(v).name().to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// Starts (`J1@0 on [2, 3]`, job numbers from 1), ends with their reasons, comments and
/// estimates, in order.
#[derive(Debug, Default)]
pub struct Seen {
    pub starts: Vec<String>,
    pub ends: Vec<String>,
    pub comments: Vec<String>,
    pub estimates: Vec<String>,
    /// Reservation requests answered: `10: R1 confirmed on [1]`, `10: R2 denied`.
    pub answers: Vec<String>,
    /// Whether the estimates' vnodes go unread ([`MetricsSink::reads_estimated_vnodes`]).
    pub estimated_vnodes_unread: bool,
}

impl MetricsSink for Seen {
    fn job_started(&mut self, job: &Job, _id: JobId, start: SimTime, a: &Allocation) {
        let vnodes: Vec<u32> = a.vnodes().map(|v| v.0).collect();
        self.starts.push(format!(
            "J{}@{} on {vnodes:?}",
            job.source_id,
            start.as_secs()
        ));
    }
    fn job_ended(&mut self, job: &Job, outcome: &JobOutcome) {
        self.ends.push(format!(
            "J{}@{} {:?}",
            job.source_id,
            outcome.end.as_secs(),
            outcome.reason
        ));
    }
    fn job_comment(&mut self, now: SimTime, id: JobId, text: &Arc<str>) {
        self.comments
            .push(format!("{}: J{}: {text}", now.as_secs(), id.0 + 1));
    }
    fn reservation_answered(
        &mut self,
        now: SimTime,
        request: &placesim_core::ReservationRequest,
        allocation: Option<&Allocation>,
    ) {
        let answer = match allocation {
            Some(a) => format!(
                "confirmed on {:?}",
                a.vnodes().map(|v| v.0).collect::<Vec<_>>()
            ),
            None => "denied".to_owned(),
        };
        self.answers
            .push(format!("{}: {} {answer}", now.as_secs(), request.name));
    }
    fn reads_estimated_vnodes(&self) -> bool {
        !self.estimated_vnodes_unread
    }
    fn job_estimated(&mut self, now: SimTime, e: &TopJobEstimate) {
        let vnodes: Vec<u32> = e
            .allocation
            .iter()
            .flat_map(|a| a.vnodes().map(|v| v.0))
            .collect();
        self.estimates.push(format!(
            "{}: J{} at {} on {vnodes:?}",
            now.as_secs(),
            e.job.0 + 1,
            e.start.as_secs()
        ));
    }
}

/// The context of a pass at `now`, as the kernel gives it, that sees every job as new and
/// something freed.
pub fn first_pass_at<'a>(
    now: u64,
    state: &'a placesim_core::ClusterState,
    workload: &'a placesim_core::Workload,
    queue: &'a [JobId],
    running: &'a [placesim_core::RunningJob],
) -> placesim_core::SchedContext<'a> {
    placesim_core::SchedContext {
        now: SimTime(now),
        state,
        workload,
        queue,
        running,
        running_log: None,
        fresh_from: 0,
        freed_since_last_pass: true,
        reservations: &[],
        reservation_queues: &[],
        reservation_requests: &[],
        start_gate: None,
        estimate_vnodes: true,
    }
}
