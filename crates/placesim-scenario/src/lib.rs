//! Scenario files: one TOML file that says everything about a run.
//!
//! A scenario defines the resources (as `qmgr create resource` does), the vnodes (by classes
//! with counts, or one by one, with hosts of several vnodes), the PBS server, scheduler and
//! queue settings, the Moab node-set parameters and classes, the workload and the rules that
//! turn its jobs into requests, and the run (queue discipline, placement, walltime, seed).
//!
//! [`load_scenario`] reads the text with serde, refusing unknown keys, then checks every
//! reference (resources, queues, keys, requests). Any error names the file, the line and
//! column, and the key, and says what was expected. [`Scenario::workload`] reads the trace and
//! gives every job its request; [`describe`] renders what `placesim check` prints.

mod build;
mod describe;
mod failures;
mod placement;
mod pregenerate;
mod requests;
mod reservations_fit;
mod runtime;
mod schema;

pub use build::{MAX_GENERATED_JOBS, load_scenario, load_scenario_generating, toml_syntax_error};
pub use describe::{describe, hostlist};
pub use failures::MAX_OUTAGES;
pub use placesim_policy::placement::{
    DelayMode, DelayReference, MinLoss, NodeSetOptions, NodeSetPlus, PriorityType,
};
pub use placesim_policy::placement::{NodeSetSettings, PsetSettings};
pub use placesim_policy::{Discipline, PlacementKind};
pub use pregenerate::Pregenerated;
pub use requests::{RequestLine, ScenarioWorkload, SizeMapping, TraceTexts, parse_requests_file};

use placesim_core::{
    Cluster, NodeFailurePolicy, NodeSetRequest, Outage, ResourceId, RuntimeSettings, SimDuration,
    VnodeId, WalltimePolicy,
};
use placesim_workload::generate::GeneratorSpec;
use std::path::PathBuf;

/// A checked scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name, for output rows.
    pub name: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The run settings.
    pub run: RunSettings,
    /// The cluster its vnodes form.
    pub cluster: Cluster,
    /// The vnode classes, in file order, then one entry per single vnode.
    pub classes: Vec<NodeClass>,
    /// PBS settings.
    pub pbs: PbsSettings,
    /// Moab settings.
    pub moab: MoabSettings,
    /// The workload, if the scenario has one (`check` needs none).
    pub workload: Option<WorkloadSettings>,
    /// The runtime model.
    pub runtime: RuntimeConfig,
    /// Vnode outages.
    pub failures: FailureSettings,
    /// Sampling and the measurement window.
    pub metrics: MetricsSettings,
    /// Jobs already running at t = 0 (`[[running]]`).
    pub running: Vec<RunningAtStart>,
    /// Reservations the site confirmed on named vnodes (`[[reservation]]`), in file order.
    pub reservations: Vec<placesim_core::SiteReservation>,
    /// Reservations requested of the scheduler (`[[reservation]]` with `request`), in file
    /// order.
    pub reservation_requests: Vec<placesim_core::ReservationRequest>,
    /// The timeline's deletions and extra cycles (`[[event]]`; its vnodes taken offline and
    /// back are among `failures.outages`).
    pub timeline: Timeline,
    /// The schedulers of `[[pbs.sched]]`, besides the default one (which has what is in no
    /// partition, under `run` and `[pbs]`).
    pub partitions: Vec<SchedPartition>,
    /// The generated workload, being made since before the cluster was built
    /// ([`load_scenario_generating`]); `None` from [`load_scenario`].
    pub pregenerated: Option<Pregenerated>,
}

/// A PBS scheduler of its own (`[[pbs.sched]]`) and the partition it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedPartition {
    /// The scheduler's name.
    pub scheduler: String,
    /// The partition's name.
    pub partition: String,
    /// The partition's vnodes.
    pub vnodes: Vec<placesim_core::VnodeId>,
    /// The partition's queues, by index in `pbs.queues`.
    pub queues: Vec<u32>,
    /// Its discipline: greedy, or under `strict_ordering` backfilling `backfill_depth` deep.
    pub discipline: Discipline,
    /// Its `do_not_span_psets`.
    pub do_not_span: bool,
    /// Its `only_explicit_psets`.
    pub only_explicit: bool,
    /// The order its first fit tries vnodes in, by its own `node_sort_key`, when fixed and
    /// not cluster order.
    pub node_order: Option<std::sync::Arc<[placesim_core::VnodeId]>>,
    /// Its `node_sort_key`, when it reads what is free or taken now.
    pub node_sort: Option<std::sync::Arc<placesim_policy::placement::NodeSort>>,
    /// The order it walks its jobs in: the server's, with its own `job_sort_key`.
    pub order: placesim_policy::queue::JobOrder,
}

/// What a scenario's `[[event]]`s do besides outages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Each `qdel`: when, the job's number in the trace, and the line of its entry.
    pub deletions: Vec<(placesim_core::SimTime, u64, usize)>,
    /// Each extra scheduling cycle's time.
    pub cycles: Vec<placesim_core::SimTime>,
    /// The placement-set settings in force from each time a `qmgr` event changes them, in
    /// time order (several changes at one time make one entry).
    pub pset_changes: Vec<(placesim_core::SimTime, PsetSettings)>,
    /// Each `pbs_rdel`: when, and the reservation's name.
    pub reservation_deletions: Vec<(placesim_core::SimTime, std::sync::Arc<str>)>,
    /// The vnodes added during the run (`add`): each with when it joins.
    pub added: Vec<(placesim_core::VnodeId, placesim_core::SimTime)>,
    /// What the outputs list of the entries the kernel does not act on itself: each `qmgr`
    /// command and each extra cycle, at its time.
    pub notes: Vec<(
        placesim_core::SimTime,
        placesim_core::SiteEvent,
        std::sync::Arc<str>,
    )>,
}

/// `[metrics]`: how often timeseries.parquet samples the cluster, and what is trimmed from
/// the measurement window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricsSettings {
    /// Δt in seconds; `None` for no samples.
    pub sample_every: Option<u64>,
    /// Trimmed from the start.
    pub warmup: Trim,
    /// Trimmed from the end.
    pub cooldown: Trim,
    /// Whether jobs.parquet names every job's vnodes (`exec_vnode`, `estimated_exec_vnode`).
    /// Off by default: a job of thousands of vnodes has tens of kilobytes of them.
    pub exec_vnode: bool,
}

impl Default for MetricsSettings {
    fn default() -> Self {
        MetricsSettings {
            sample_every: Some(3600),
            warmup: Trim::None,
            cooldown: Trim::None,
            exec_vnode: false,
        }
    }
}

/// A warm-up or cool-down: how much of a run the statistics leave out (metrics-and-models
/// §1.5, §7.1: drop the first and last 5 % of jobs, or a day).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Trim {
    /// Nothing: the window runs from the first submit to the last event.
    #[default]
    None,
    /// Seconds after the first submit (warm-up) or before the last submit (cool-down).
    Seconds(u64),
    /// A share of the jobs, by submit order: the window starts at the submit of the first job
    /// kept (warm-up) or ends at the submit of the last one kept (cool-down).
    JobShare(f64),
}

impl Trim {
    /// What a trim is written as, for error messages.
    pub const EXPECTED: &str =
        "expected a duration [[[DD:]HH:]MM:]SS or a share of the jobs \"N%\" (below 50%)";

    /// Parses `"5%"` (a share of the jobs), a duration `[[[DD:]HH:]MM:]SS`, or `"0"`.
    pub fn parse(text: &str) -> Option<Trim> {
        let text = text.trim();
        if let Some(pct) = text.strip_suffix('%') {
            let p: f64 = pct.trim().parse().ok()?;
            return (0.0..50.0).contains(&p).then_some(if p == 0.0 {
                Trim::None
            } else {
                Trim::JobShare(p / 100.0)
            });
        }
        let secs = placesim_request::parse_duration(text)?;
        Some(if secs == 0 {
            Trim::None
        } else {
            Trim::Seconds(secs)
        })
    }
}

/// What a run measures, resolved for its cluster and workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measurement {
    /// The sets fragmentation is measured over.
    pub sets: placesim_core::SetPartition,
    /// t₀: the window's start (the first instant when `None`).
    pub window_start: Option<placesim_core::SimTime>,
    /// t₁: the window's end (the last event when `None`).
    pub window_end: Option<placesim_core::SimTime>,
    /// Δt of the samples; none when `None`.
    pub sample_every: Option<SimDuration>,
}

impl MetricsSettings {
    /// What a run of `workload` on `cluster` measures: the sets are the runtime model's
    /// topology groups (`topology`; the whole cluster without one), the window is trimmed as
    /// set, samples every Δt.
    pub fn measurement(
        &self,
        cluster: &Cluster,
        topology: Option<ResourceId>,
        workload: &placesim_core::Workload,
    ) -> Measurement {
        let sets = match topology {
            Some(key) => placesim_core::SetPartition::by_key(cluster, key),
            None => placesim_core::SetPartition::whole(cluster),
        };
        let jobs = workload.jobs();
        let submit_at = |i: usize| jobs.get(i).map(|j| j.submit);
        let n = jobs.len();
        let window_start = match self.warmup {
            Trim::None => None,
            Trim::Seconds(s) => {
                submit_at(0).map(|t| placesim_core::SimTime(t.as_secs().saturating_add(s)))
            }
            Trim::JobShare(f) => submit_at((f * n as f64).floor() as usize),
        };
        let window_end = match self.cooldown {
            Trim::None => None,
            Trim::Seconds(s) => n
                .checked_sub(1)
                .and_then(submit_at)
                .map(|t| placesim_core::SimTime(t.as_secs().saturating_sub(s))),
            Trim::JobShare(f) => {
                let kept = n - (f * n as f64).floor() as usize;
                kept.checked_sub(1).and_then(submit_at)
            }
        };
        Measurement {
            sets,
            window_start,
            window_end,
            sample_every: self.sample_every.map(SimDuration),
        }
    }
}

/// Vnode outages of a scenario, and what they do to running jobs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FailureSettings {
    /// Requeue or kill the jobs of a vnode that goes down.
    pub on_failure: NodeFailurePolicy,
    /// Outages listed in the file.
    pub outages: Vec<Outage>,
    /// MTBF/MTTR models: the vnodes, mean seconds between failures, mean seconds to repair.
    pub models: Vec<FailureModel>,
}

/// Outages drawn for each vnode of a class.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureModel {
    /// The class, as the scenario names it.
    pub class: String,
    /// The class's vnodes.
    pub vnodes: Vec<VnodeId>,
    /// Mean time between failures, seconds.
    pub mtbf_s: u64,
    /// Mean time to repair, seconds.
    pub mttr_s: u64,
}

/// The runtime model of a scenario: the kernel's settings, and how per-job β and ε are drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    /// H and C settings.
    pub settings: RuntimeSettings,
    /// σ of the lognormal noise; 0 turns it off.
    pub noise_sigma: f64,
    /// Communication-sensitivity classes, first match; a job matching none has β = 0.
    pub classes: Vec<SensitivityClass>,
}

/// Jobs of a class get β with probability `fraction`.
#[derive(Debug, Clone, PartialEq)]
pub struct SensitivityClass {
    /// Which jobs.
    pub filter: JobFilter,
    /// The share of matching jobs chosen, by a hash of (seed, class, job).
    pub fraction: f64,
    /// β.
    pub beta: f64,
}

/// Which jobs a rule or class matches: by size, SWF queue and SWF user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFilter {
    /// Smallest size matched.
    pub size_min: u32,
    /// Largest size matched.
    pub size_max: u32,
    /// SWF queues matched (all when empty).
    pub queues: Vec<u32>,
    /// SWF users matched (all when empty).
    pub users: Vec<u32>,
    /// SWF groups matched (all when empty).
    pub groups: Vec<u32>,
    /// SWF partitions matched (all when empty).
    pub partitions: Vec<u32>,
}

impl JobFilter {
    /// Whether `job` matches.
    pub fn matches(&self, job: &placesim_core::Job) -> bool {
        (self.size_min..=self.size_max).contains(&job.size)
            && (self.queues.is_empty() || job.queue().is_some_and(|q| self.queues.contains(&q)))
            && (self.users.is_empty() || job.user().is_some_and(|u| self.users.contains(&u)))
            && (self.groups.is_empty() || job.group().is_some_and(|g| self.groups.contains(&g)))
            && (self.partitions.is_empty()
                || job
                    .partition()
                    .is_some_and(|p| self.partitions.contains(&p)))
    }
}

/// The run: which discipline, which placement, walltime handling and the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSettings {
    /// The queue discipline.
    pub discipline: Discipline,
    /// The placement policy.
    pub placement: PlacementKind,
    /// What happens at a job's walltime.
    pub walltime: WalltimePolicy,
    /// When the scheduler runs a pass.
    pub cycles: placesim_core::Cycles,
    /// The scenario seed: every random choice derives from it.
    pub seed: u64,
}

/// Vnodes that came from one `[[class]]` or `[[vnode]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeClass {
    /// The class (or vnode) name.
    pub name: String,
    /// Its vnodes, consecutive in cluster order.
    pub vnodes: Vec<VnodeId>,
}

/// PBS's job-wide `resources_default` that placesim models (reservations-and-partitions.md
/// §8.1): the walltime of a job that asks for none, and the place of one that gives none.
/// Every job here has a select, whose chunks carry their own resources.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobDefaults {
    /// `resources_default.walltime`, s: the estimate of a job whose trace gives no requested
    /// time (SWF field 9), instead of its runtime.
    pub walltime_s: Option<u64>,
    /// `resources_default.place`.
    pub place: Option<placesim_request::ast::Place>,
}

/// PBS server, scheduler and queue settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PbsSettings {
    /// The placement-set settings, as the PBS placement takes them (`job_keys` empty: they
    /// come from the workload's requests), with each queue's `node_group_key` by index in
    /// `queues` and each vnode's queue.
    pub psets: PsetSettings,
    /// Every vnode's `sharing` (`default_shared` unless given): with each job's `place`, it
    /// decides whether the job holds its vnodes exclusively.
    pub vnode_sharing: placesim_request::VnodeSharing,
    /// Queues, in file order.
    pub queues: Vec<QueueSettings>,
    /// The order of the queue: `job_sort_key`, `by_queue` with the queues' priorities,
    /// `round_robin`.
    pub order: placesim_policy::queue::JobOrder,
    /// Run limits: the server's `max_run` and `max_run_res`, then each queue's.
    pub limits: Vec<placesim_policy::limits::LimitSetting>,
    /// `node_sort_key` when it reads what is free or taken now (first-fit placement sorts
    /// the vnodes again at each placement); a fixed order is in `psets.node_order`.
    pub node_sort: Option<std::sync::Arc<placesim_policy::placement::NodeSort>>,
    /// The server's `default_chunk`: the resources a chunk gets when neither it nor its
    /// queue's `default_chunk` names them.
    pub default_chunk: Vec<placesim_request::Term>,
    /// The server's `resources_default`: what a job that gives no walltime or place gets
    /// when its queue's does not say.
    pub resources_default: JobDefaults,
}

/// One PBS queue.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSettings {
    /// Its name.
    pub name: String,
    /// SWF queue numbers whose jobs it receives.
    pub swf_queues: Vec<u32>,
    /// Its own `backfill_depth` (under `strict_ordering`): its jobs' top jobs are counted
    /// against it rather than the server's.
    pub backfill_depth: Option<u32>,
    /// Its `default_chunk`: the resources its jobs' chunks get when they do not name them.
    pub default_chunk: Vec<placesim_request::Term>,
    /// Its `resources_default`: what its jobs that give no walltime or place get, before the
    /// server's.
    pub resources_default: JobDefaults,
}

impl Scenario {
    /// What a queue name means here: the PBS queue and the Moab class of that name; `None`
    /// when it names neither.
    pub fn named_queue(&self, name: &str) -> Option<NamedQueue> {
        NamedQueue::find(
            name,
            self.pbs.queues.iter().map(|q| q.name.as_str()),
            self.moab.classes.iter().map(|c| c.name.as_str()),
        )
    }

    /// The Moab class a job of SWF queue `swf_queue` (field 15) is in: the first
    /// `[[moab.class]]` listing it in `swf_queues`, else none.
    pub fn moab_class_of(&self, swf_queue: Option<u32>) -> Option<usize> {
        let q = swf_queue?;
        self.moab
            .classes
            .iter()
            .position(|class| class.swf_queues.contains(&q))
    }

    /// The PBS queue a job of SWF queue `swf_queue` (field 15) is in: the first
    /// `[[pbs.queue]]` listing it in `swf_queues`, else none (the default queue).
    pub fn pbs_queue_of(&self, swf_queue: Option<u32>) -> Option<usize> {
        let q = swf_queue?;
        self.pbs
            .queues
            .iter()
            .position(|queue| queue.swf_queues.contains(&q))
    }
}

/// Moab node-set parameters (moab.cfg) and classes.
#[derive(Debug, Clone, PartialEq)]
pub struct MoabSettings {
    /// The node-set parameters, as the Moab placement takes them (NODESETLIST resolved).
    pub nodesets: NodeSetSettings,
    /// NODESETLIST, as written.
    pub list: Vec<String>,
    /// Classes with a DEFAULT.NODESET.
    pub classes: Vec<MoabClass>,
    /// The job order Moab's priority weights give (`[moab.priority]`); submission order when
    /// none is set.
    pub order: placesim_policy::queue::JobOrder,
    /// NODEACCESSPOLICY SINGLEJOB: a vnode runs one job at a time, so every job's request
    /// holds its vnodes exclusively.
    pub single_job: bool,
    /// Throttling limits (`[moab.limits]`), if any are set.
    pub limits: Option<std::sync::Arc<placesim_policy::queue::MoabLimits>>,
}

/// A Moab class with its default node set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoabClass {
    /// The class name.
    pub name: String,
    /// `DEFAULT.NODESET`.
    pub default_nodeset: Option<NodeSetRequest>,
    /// SWF queue numbers whose jobs are of this class.
    pub swf_queues: Vec<u32>,
}

/// Where the jobs come from.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadSource {
    /// An SWF trace.
    Trace(PathBuf),
    /// A synthetic workload for the scenario's cluster, seeded by the scenario seed.
    Generator(Box<GeneratorSpec>),
}

/// Where the jobs come from and how they become requests.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSettings {
    /// The trace or the generator.
    pub source: WorkloadSource,
    /// The trace's format (a generated workload is made as SWF).
    pub format: placesim_workload::TraceFormat,
    /// Count malformed lines as skipped.
    pub skip_bad_lines: bool,
    /// The default request of a job of size N.
    pub size_mapping: SizeMapping,
    /// Whether the size mapping puts SWF field 10 (KiB per processor) into a job's request
    /// (`memory = "trace"`, the default), with where the setting is, for an error about it.
    pub memory_from_trace: Option<SourcePosition>,
    /// P in request templates (`{ppn}`, `{nodes}` = ceil(N/P)).
    pub procs_per_node: u32,
    /// Explicit requests per job id.
    pub requests_file: Option<PathBuf>,
    /// What really happened to the jobs, to measure a run against
    /// (`placesim_workload::recorded`).
    pub recorded: Option<PathBuf>,
    /// The extended SWF field (19 or later) that holds each job's request, where its line
    /// has one.
    pub request_field: Option<usize>,
    /// Rules tried in order; the first that matches gives the request.
    pub rules: Vec<Rule>,
    /// Submit times become first + (submit − first) × this (1: as recorded).
    pub arrival_scale: f64,
}

/// A line and column of the scenario file (both from 1), kept for an error found later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePosition {
    /// The line.
    pub line: usize,
    /// The column, in characters.
    pub column: usize,
}

/// A request rule: which jobs, and the request template they get.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The template, with `{n}`, `{nodes}` and `{ppn}`, and the job's own `{mem}`,
    /// `{mem_per_node}` and `{fieldN}` ([`JobPlaceholders`]).
    pub template: String,
    /// Which of the job's own values the template reads: a job without one of them is not
    /// matched by the rule.
    pub reads: JobPlaceholders,
    /// Line of the template in the scenario file, for errors.
    pub line: usize,
    /// Which jobs.
    pub filter: JobFilter,
    /// Fraction of matching jobs chosen, by a hash of the seed, the rule and the job.
    pub fraction: f64,
    /// PBS's `job_priority` for the jobs it chooses.
    pub job_priority: Option<i64>,
    /// The project of the jobs it chooses.
    pub project: Option<std::sync::Arc<str>>,
    /// The queue or class it puts the jobs it chooses in, instead of their SWF queue's.
    pub queue: Option<NamedQueue>,
}

/// The values of its own a job gives a rule's template: its memory (SWF field 10) and the
/// fields of its line after the 18th (extended SWF).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobPlaceholders {
    /// `{mem}` (KiB per processor, as `<n>kb`) or `{mem_per_node}` (`{ppn}` times it).
    pub memory: bool,
    /// `{fieldN}`: field N, 19 or later, as written.
    pub fields: Vec<usize>,
}

impl JobPlaceholders {
    /// What `template` reads, or the first `{fieldN}` whose N is not a field after the 18th.
    pub fn of(template: &str) -> Result<JobPlaceholders, String> {
        let mut reads = JobPlaceholders {
            memory: template.contains("{mem}") || template.contains("{mem_per_node}"),
            fields: Vec::new(),
        };
        let mut rest = template;
        while let Some(at) = rest.find("{field") {
            let after = &rest[at + "{field".len()..];
            let Some(end) = after.find('}') else { break };
            let digits = &after[..end];
            match digits.parse::<usize>() {
                Ok(n) if n >= 19 => {
                    if !reads.fields.contains(&n) {
                        reads.fields.push(n);
                    }
                }
                _ => {
                    return Err(format!(
                        "`{{field{digits}}}`: expected a field after the 18th, such as {{field19}}: the standard fields are the job's size, queue, user, group and memory"
                    ));
                }
            }
            rest = &after[end..];
        }
        Ok(reads)
    }

    /// Whether it reads anything of the job's own: then the rule's text is the job's.
    pub fn any(&self) -> bool {
        self.memory || !self.fields.is_empty()
    }
}

/// Where a job runs: each vnode with its amounts (one per consumable).
pub type VnodeAmounts = Vec<(placesim_core::VnodeId, Vec<u64>)>;

/// A job already running when the run begins (`[[running]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningAtStart {
    /// Its job number in the outputs.
    pub id: u64,
    /// The line of its `id` in the scenario file, for errors found with the trace.
    pub line: usize,
    /// Where it runs: each vnode with its amounts (one per consumable), in written order.
    pub vnodes: VnodeAmounts,
    /// Its `exec_vnode` as written, for its request's text.
    pub exec_vnode: String,
    /// When it ends, seconds after t = 0.
    pub end_s: u64,
    /// When the scheduler expects it to end, seconds after t = 0.
    pub estimated_end_s: u64,
    /// Its user, group and project.
    pub user: Option<u32>,
    /// Its group.
    pub group: Option<u32>,
    /// Its project.
    pub project: Option<std::sync::Arc<str>>,
    /// Its queue or class.
    pub queue: Option<NamedQueue>,
}

/// Where a queue name (qsub -q) puts a job: the PBS queue and the Moab class of that name
/// (either may be none; a name must be one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedQueue {
    /// The `[[pbs.queue]]` of that name.
    pub pbs: Option<usize>,
    /// The `[[moab.class]]` of that name.
    pub class: Option<usize>,
}

impl NamedQueue {
    /// `name` among the PBS queues' and the Moab classes' names, in their order.
    pub(crate) fn find<'a>(
        name: &str,
        mut queues: impl Iterator<Item = &'a str>,
        mut classes: impl Iterator<Item = &'a str>,
    ) -> Option<NamedQueue> {
        let pbs = queues.position(|q| q == name);
        let class = classes.position(|c| c == name);
        (pbs.is_some() || class.is_some()).then_some(NamedQueue { pbs, class })
    }
}

/// Why a scenario was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScenarioError {
    /// A key of the file is wrong: where, which key, and what was expected.
    #[error(
        "{}:{line}:{column}: {}{message}",
        path.display(),
        if key.is_empty() { String::new() } else { format!("key `{key}`: ") }
    )]
    At {
        /// The scenario file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The key (dotted where it helps).
        key: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] placesim_workload::SwfError),
    /// The failure models draw more outages than a run may have.
    #[error(
        "{}: [[failures.model]] for class `{class}` takes the run past {} outages before the horizon of {horizon_s} s; give a longer mtbf",
        path.display(),
        failures::MAX_OUTAGES
    )]
    TooManyOutages {
        /// The scenario file.
        path: PathBuf,
        /// The class of the model that went over.
        class: String,
        /// The horizon of the draws, seconds.
        horizon_s: u64,
    },
    /// The generator's parameters are wrong.
    #[error("{}: [workload.generator]: {source}", path.display())]
    Generator {
        /// The scenario file.
        path: PathBuf,
        /// Why.
        source: placesim_workload::generate::GenerateError,
    },
    /// A text input is not text, or could not be read.
    #[error(transparent)]
    Text(#[from] placesim_workload::TextError),
    /// A requests file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a requests file is wrong.
    #[error("{}:{line}: {message}", path.display())]
    RequestsFile {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}
