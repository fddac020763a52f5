//! PBS multi-schedulers (reservations-and-partitions.md §4): several schedulers, each with its
//! own settings, each seeing only its partition's vnodes, queues and jobs.
//!
//! [`Partitioned`] runs one policy per partition in a pass, the default scheduler's first (it
//! has the vnodes and queues of no partition). Each sees the state through
//! [`placesim_core::ClusterState::partition_view`] (nothing free outside its vnodes, its own
//! placement's sets tracked), the queue's jobs of its queues, and the running jobs on its
//! vnodes; so its calendar never releases anything outside. Partitions share no vnode and no
//! job, so their decisions of one pass never conflict, and applying them in partition order
//! is the same as PBS's schedulers each running their cycle.

use placesim_core::{
    Allocation, Bitset, ClusterState, Decision, JobId, Request, RunningJob, SchedContext,
    SchedulingPolicy, SetIndex, SimTime, TopJobEstimate,
};
use std::sync::Arc;

/// One scheduler: its partition's vnodes and queues, and its policy.
pub struct Partition {
    /// The scheduler's name (`default` for PBS's default scheduler).
    scheduler: String,
    /// Its vnodes.
    vnodes: Bitset,
    /// The other vnodes.
    outside: Arc<Bitset>,
    /// Whether a job's queue (`None`: the default queue) is one of its own.
    queues: Box<dyn Fn(Option<u32>) -> bool + Send>,
    /// The sets its placement reads, tracked in its view of the state.
    sets: SetIndex,
    /// Its policy: its discipline and placement with its settings.
    policy: Box<dyn SchedulingPolicy>,
    /// Its view of the state, kept up to date from pass to pass ([`Partition::follow`]).
    view: Option<ClusterState>,
    /// The running jobs on its vnodes, by job, as its view holds them.
    running: Vec<RunningJob>,
}

impl Partition {
    /// A scheduler over `vnodes` (the rest `outside`), for the jobs of the queues `queues`
    /// accepts, whose placement reads `sets`.
    pub fn new(
        scheduler: String,
        vnodes: Bitset,
        queues: Box<dyn Fn(Option<u32>) -> bool + Send>,
        sets: SetIndex,
        policy: Box<dyn SchedulingPolicy>,
    ) -> Partition {
        let mut outside = Bitset::new(vnodes.len());
        for v in (0..vnodes.len()).filter(|&v| !vnodes.contains(v)) {
            outside.set(v, true);
        }
        Partition {
            scheduler,
            vnodes,
            outside: Arc::new(outside),
            queues,
            sets,
            policy,
            view: None,
            running: Vec::new(),
        }
    }

    /// Brings its view up to date with `ctx.state`: the jobs that ended on its vnodes given
    /// back and those that started taken, in O(changes); made anew on the first pass and
    /// after an outage.
    fn follow(&mut self, ctx: &SchedContext<'_>) {
        let mut now: Vec<&RunningJob> = ctx
            .running
            .iter()
            .filter(|r| on(&self.vnodes, &r.allocation))
            .collect();
        now.sort_unstable_by_key(|r| r.job);
        let fresh = self
            .view
            .as_ref()
            .is_none_or(|v| v.outage_epoch() != ctx.state.outage_epoch());
        let mut followed = false;
        if !fresh && let Some(view) = &mut self.view {
            // Both lists by job: the ended are in the old only, the started in the new only.
            let old = &self.running;
            let given = old
                .iter()
                .filter(|r| now.binary_search_by_key(&r.job, |n| n.job).is_err())
                .map(|r| &r.allocation);
            let taken = now
                .iter()
                .filter(|n| old.binary_search_by_key(&n.job, |r| r.job).is_err())
                .map(|n| &n.allocation);
            followed = view.follow(ctx.state, given, taken).is_ok();
        }
        if !followed {
            self.view = Some(ctx.state.partition_view(&self.outside, &self.sets));
        }
        self.running.clear();
        self.running.extend(now.into_iter().cloned());
    }
}

impl std::fmt::Debug for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Partition")
            .field("scheduler", &self.scheduler)
            .field("vnodes", &self.vnodes.count())
            .finish_non_exhaustive()
    }
}

/// Several schedulers side by side. See the module docs.
#[derive(Debug)]
pub struct Partitioned {
    partitions: Vec<Partition>,
    queue: Vec<JobId>,
    /// One scheduler's decisions of the pass: a policy reads the decisions it is given as
    /// its own earlier ones (its calendar releases what they start), so it gets only its own.
    own: Vec<Decision>,
}

impl Partitioned {
    /// The schedulers, the default one first.
    pub fn new(partitions: Vec<Partition>) -> Self {
        Partitioned {
            partitions,
            queue: Vec::new(),
            own: Vec::new(),
        }
    }
}

/// Whether `allocation` lies on `vnodes` (its first vnode does: a scheduler places only on
/// its own).
fn on(vnodes: &Bitset, allocation: &Allocation) -> bool {
    allocation
        .vnodes()
        .next()
        .is_some_and(|v| vnodes.contains(v.index()))
}

impl SchedulingPolicy for Partitioned {
    fn name(&self) -> String {
        self.partitions
            .first()
            .map_or_else(String::new, |p| p.policy.name())
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        for part in &mut self.partitions {
            self.queue.clear();
            let mut fresh_from = 0;
            for (pos, &job) in ctx.queue.iter().enumerate() {
                if (part.queues)(ctx.workload.request_of(job).queue) {
                    if pos < ctx.fresh_from {
                        fresh_from += 1;
                    }
                    self.queue.push(job);
                }
            }
            if self.queue.is_empty() && !part.policy.passes_when_idle() {
                continue;
            }
            part.follow(ctx);
            let Some(view) = &part.view else { continue };
            let sub = SchedContext {
                state: view,
                queue: &self.queue,
                running: &part.running,
                running_log: None,
                fresh_from,
                ..*ctx
            };
            self.own.clear();
            part.policy.schedule(&sub, &mut self.own);
            decisions.append(&mut self.own);
        }
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, Arc<str>)>) {
        for part in &mut self.partitions {
            part.policy.drain_comments(out);
        }
    }

    fn comment_superseded(&mut self, job: JobId) {
        for part in &mut self.partitions {
            part.policy.comment_superseded(job);
        }
    }

    fn passes_when_idle(&self) -> bool {
        self.partitions.iter().any(|p| p.policy.passes_when_idle())
    }

    fn retract_pass(&mut self) {
        for part in &mut self.partitions {
            part.policy.retract_pass();
        }
    }

    fn drain_estimates(&mut self, out: &mut Vec<TopJobEstimate>) {
        for part in &mut self.partitions {
            part.policy.drain_estimates(out);
        }
    }

    fn drain_priorities(&mut self, out: &mut Vec<(JobId, f64)>) {
        for part in &mut self.partitions {
            part.policy.drain_priorities(out);
        }
    }

    fn wakeup(&self) -> Option<SimTime> {
        self.partitions
            .iter()
            .filter_map(|p| p.policy.wakeup())
            .min()
    }

    /// The scheduler whose vnodes the job got checks it.
    fn check_start(&self, request: &Request, allocation: &Allocation) -> Result<(), String> {
        match self.partitions.iter().find(|p| on(&p.vnodes, allocation)) {
            Some(part) => part.policy.check_start(request, allocation),
            None => Err("a job started outside every scheduler's partition".to_owned()),
        }
    }
}
