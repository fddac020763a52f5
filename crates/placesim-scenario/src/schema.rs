//! The TOML schema of a scenario file, as serde reads it: every table refuses unknown keys.
//! Values that later checks may refuse carry their span, so errors can name their line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioToml {
    /// The scenario's name in output rows [default: the file name without `.toml`].
    pub name: Option<String>,
    /// The run: discipline, placement, walltime, seed.
    #[serde(default)]
    pub run: RunToml,
    /// Custom resources, as `qmgr create resource` defines them.
    #[serde(default)]
    pub resource: Vec<ResourceToml>,
    /// Vnode classes.
    #[serde(default)]
    pub class: Vec<NodeToml>,
    /// Vnodes listed one by one.
    #[serde(default)]
    pub vnode: Vec<NodeToml>,
    /// A generated cluster: node generations in racks and under switches.
    pub cluster: Option<ClusterToml>,
    /// The runtime model.
    pub runtime: Option<RuntimeToml>,
    /// PBS server, scheduler and queue settings.
    #[serde(default)]
    pub pbs: PbsToml,
    /// Moab node-set parameters and classes.
    #[serde(default)]
    pub moab: MoabToml,
    /// The workload and how its jobs become requests.
    pub workload: Option<WorkloadToml>,
    /// Vnode outages and what they do to jobs.
    #[serde(default)]
    pub failures: FailuresToml,
    /// Jobs already running at t = 0.
    #[serde(default)]
    pub running: Vec<RunningToml>,
    /// Reservations the site confirmed on named vnodes.
    #[serde(default)]
    pub reservation: Vec<ReservationToml>,
    /// The site's timeline: what happens at given times.
    #[serde(default)]
    pub event: Vec<EventToml>,
    /// Sampling and the measurement window.
    #[serde(default)]
    pub metrics: MetricsToml,
}

/// `[metrics]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MetricsToml {
    /// Δt of timeseries.parquet [default: 1 hour]; 0 for no samples.
    pub sample_every: Option<Spanned<toml::Value>>,
    /// Trimmed from the start: a duration after the first submit, or `"N%"` of the jobs.
    pub warmup: Option<Spanned<toml::Value>>,
    /// Trimmed from the end: a duration before the last submit, or `"N%"` of the jobs.
    pub cooldown: Option<Spanned<toml::Value>>,
    /// Whether jobs.parquet names every job's vnodes [default: false].
    #[serde(default)]
    pub exec_vnode: bool,
}

/// `[failures]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FailuresToml {
    /// `requeue` [default] or `kill`.
    pub on_failure: Option<Spanned<String>>,
    /// Outages listed one by one.
    #[serde(default)]
    pub outage: Vec<OutageToml>,
    /// Outages drawn from an MTBF/MTTR model, per class.
    #[serde(default)]
    pub model: Vec<FailureModelToml>,
}

/// `[[failures.outage]]`: one vnode, or every vnode of a class, down from `down` to `up`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageToml {
    /// A vnode name.
    pub vnode: Option<Spanned<String>>,
    /// A class name.
    pub class: Option<Spanned<String>>,
    /// When it goes down, `[[[DD:]HH:]MM:]SS` or seconds of simulated time.
    pub down: Spanned<toml::Value>,
    /// When it comes back.
    pub up: Spanned<toml::Value>,
}

/// `[[failures.model]]`: each vnode of `class` fails after exponential times with mean
/// `mtbf` and is repaired after exponential times with mean `mttr`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureModelToml {
    /// A class name.
    pub class: Spanned<String>,
    /// Mean time between failures, per vnode.
    pub mtbf: Spanned<toml::Value>,
    /// Mean time to repair.
    pub mttr: Spanned<toml::Value>,
}

/// `[run]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RunToml {
    /// `fcfs`, `easy`, `greedy` or `conservative`.
    pub discipline: Option<Spanned<String>>,
    /// Reservations per pass under `easy` (0 is strict order) [default: 1].
    pub backfill_depth: Option<Spanned<u32>>,
    /// `first-fit`.
    pub placement: Option<Spanned<String>>,
    /// `kill` or `overrun`.
    pub walltime: Option<Spanned<String>>,
    /// `event-exact`, `pbs` or `moab`.
    pub cycles: Option<Spanned<String>>,
    /// The run's seed.
    #[serde(default)]
    pub seed: u64,
}

/// `[[resource]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceToml {
    /// Its name.
    pub name: Spanned<String>,
    /// long, float, size, string, string_array or boolean.
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// Whether jobs consume it [default: false].
    #[serde(default)]
    pub consumable: bool,
}

/// `[[class]]` (`count` vnodes alike) or `[[vnode]]` (one vnode): the same keys, except that
/// a class has `count`, `names` and `vnodes_per_host`, and a vnode may name its `host`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeToml {
    /// The class or vnode name; a class's vnodes are `{name}{i}` (from 1) unless `names` is
    /// given.
    pub name: Spanned<String>,
    /// How many vnodes (classes only).
    pub count: Option<Spanned<u32>>,
    /// Explicit vnode names, one per vnode (classes only).
    pub names: Option<Spanned<Vec<String>>>,
    /// Vnodes per host (classes only) [default: 1]; hosts are `{name}-h{j}` when above 1.
    pub vnodes_per_host: Option<Spanned<u32>>,
    /// The host (single vnodes only) [default: the vnode's own name].
    pub host: Option<Spanned<String>>,
    /// ncpus [default: 1].
    #[serde(default = "one")]
    pub ncpus: u32,
    /// mem, as a size string ("256gb") [default: 0].
    pub mem: Option<Spanned<String>>,
    /// ngpus [default: 0].
    #[serde(default)]
    pub ngpus: u32,
    /// Relative speed [default: 1.0].
    #[serde(default = "unit_speed")]
    pub speed: f64,
    /// The PBS queue the vnode is associated with.
    pub queue: Option<Spanned<String>>,
    /// The PBS partition the vnode is in (a `[[pbs.sched]]` serves it); none: the default
    /// scheduler's.
    pub partition: Option<Spanned<String>>,
    /// PBS's vnode `priority`, which `node_sort_key` calls `sort_priority` [default: 0].
    #[serde(default)]
    pub sort_priority: i64,
    /// Other resources: consumable amounts and non-consumable properties.
    #[serde(default)]
    pub resources: BTreeMap<String, Spanned<toml::Value>>,
}

fn unit_speed() -> f64 {
    1.0
}

/// `[pbs]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PbsToml {
    /// Server `node_group_enable`.
    #[serde(default)]
    pub node_group_enable: bool,
    /// Server `node_group_key`: one resource or a list.
    #[serde(default)]
    pub node_group_key: Vec<Spanned<String>>,
    /// Every vnode's `sharing`: how it and a job's `place` decide exclusivity.
    pub vnode_sharing: Option<Spanned<String>>,
    /// Scheduler `do_not_span_psets`.
    #[serde(default)]
    pub do_not_span_psets: bool,
    /// Scheduler `only_explicit_psets`.
    #[serde(default)]
    pub only_explicit_psets: bool,
    /// Scheduler `strict_ordering`: with `backfill_depth`, another way to name the discipline.
    pub strict_ordering: Option<Spanned<bool>>,
    /// `scheduler_iteration`: the period of PBS's cycles under `run.cycles = "pbs"`.
    pub scheduler_iteration: Option<Spanned<toml::Value>>,
    /// Scheduler `backfill_depth`: 0 is strict order (FCFS), N is N top jobs (1 is EASY).
    pub backfill_depth: Option<Spanned<u32>>,
    /// Scheduler `opt_backfill_fuzzy`: only `off` (exact top-job times) is modelled; read so
    /// that another value is refused with a message saying so.
    pub opt_backfill_fuzzy: Option<Spanned<String>>,
    /// Scheduler `node_sort_key` lines, in order: `"<sort_priority|resource> HIGH|LOW
    /// [total]"` [default: `sort_priority HIGH`, PBS's].
    pub node_sort_key: Option<Spanned<Vec<Spanned<String>>>>,
    /// Scheduler `job_sort_key` lines, in order: `"<resource|walltime> HIGH|LOW"`.
    #[serde(default)]
    pub job_sort_key: Vec<Spanned<String>>,
    /// Scheduler `by_queue`: queues visited by descending priority [default: true].
    pub by_queue: Option<bool>,
    /// Scheduler `round_robin`: queues of one priority take turns [default: false].
    #[serde(default)]
    pub round_robin: bool,
    /// Server `job_sort_formula`: a Python arithmetic expression over a job's terms.
    pub job_sort_formula: Option<Spanned<String>>,
    /// Scheduler `job_sort_formula_threshold`: jobs at or below it are not run.
    pub job_sort_formula_threshold: Option<Spanned<f64>>,
    /// Scheduler `fair_share`: order jobs by their entities' usage along the fairshare tree.
    #[serde(default)]
    pub fair_share: bool,
    /// The fairshare tree, a file in PBS's `resource_group` format (relative to the
    /// scenario).
    pub resource_group: Option<Spanned<String>>,
    /// Scheduler `unknown_shares`: the shares of the `unknown` group [default: 0].
    pub unknown_shares: Option<u64>,
    /// Scheduler `fairshare_entity`: euser, egroup, Account_Name or queue [default: euser].
    pub fairshare_entity: Option<Spanned<String>>,
    /// Scheduler `fairshare_usage_res`: what a job accrues [default: cput].
    pub fairshare_usage_res: Option<Spanned<String>>,
    /// Scheduler `fairshare_decay_time` [default: 24:00:00].
    pub fairshare_decay_time: Option<Spanned<toml::Value>>,
    /// Scheduler `fairshare_decay_factor` [default: 0.5].
    pub fairshare_decay_factor: Option<Spanned<f64>>,
    /// Scheduler `fairshare_enforce_no_shares`: a job whose entity has no share never runs.
    #[serde(default)]
    pub fairshare_enforce_no_shares: bool,
    /// Server `max_run`: running jobs per user, group, project or overall, in PBS's form
    /// `"[u:PBS_GENERIC=2], [u:alice=5], [o:PBS_ALL=100]"`.
    pub max_run: Option<Spanned<String>>,
    /// Server `max_run_res.<resource>`: a consumable's requested amount over running jobs,
    /// per entity, in the same form.
    #[serde(default)]
    pub max_run_res: std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
    /// Server `max_queued`: jobs queued or running per entity, in the same form; the server
    /// refuses a job at submission over it.
    pub max_queued: Option<Spanned<String>>,
    /// Server `max_queued_res.<resource>`: a consumable's requested amount over jobs queued
    /// or running, per entity.
    #[serde(default)]
    pub max_queued_res: std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
    /// Server `default_chunk.<resource>`: what each chunk gets when neither it nor its
    /// queue's `default_chunk` names the resource.
    #[serde(default)]
    pub default_chunk: BTreeMap<String, Spanned<toml::Value>>,
    /// Server `resources_default.<resource>`: job-wide defaults (`walltime`, `place`) for a
    /// job that does not give them, after its queue's.
    #[serde(default)]
    pub resources_default: BTreeMap<String, Spanned<toml::Value>>,
    /// Queues.
    #[serde(default)]
    pub queue: Vec<QueueToml>,
    /// Schedulers besides the default one (PBS multi-schedulers), each serving a partition.
    #[serde(default)]
    pub sched: Vec<SchedToml>,
}

/// `[[pbs.sched]]`: a scheduler of its own (`qmgr -c "create sched NAME partition=P"`), with
/// its own settings, which sees only its partition's vnodes and queues.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedToml {
    /// Its name.
    pub name: Spanned<String>,
    /// The partition it serves.
    pub partition: Spanned<String>,
    /// Its `strict_ordering` [default: false].
    #[serde(default)]
    pub strict_ordering: bool,
    /// Its `backfill_depth` under strict ordering [default: 1].
    pub backfill_depth: Option<Spanned<u32>>,
    /// Its `do_not_span_psets` [default: false].
    #[serde(default)]
    pub do_not_span_psets: bool,
    /// Its `only_explicit_psets` [default: false].
    #[serde(default)]
    pub only_explicit_psets: bool,
    /// Its own sched_config's `node_sort_key` lines, as `[pbs] node_sort_key` [default:
    /// `sort_priority HIGH`, PBS's sched_config default].
    pub node_sort_key: Option<Spanned<Vec<Spanned<String>>>>,
    /// Its own sched_config's `job_sort_key` lines, as `[pbs] job_sort_key` [default: none].
    #[serde(default)]
    pub job_sort_key: Vec<Spanned<String>>,
}

/// `[[pbs.queue]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueToml {
    /// The queue's name, as vnodes' `queue` refers to it.
    pub name: Spanned<String>,
    /// The queue's own `node_group_key`.
    #[serde(default)]
    pub node_group_key: Vec<Spanned<String>>,
    /// The partition the queue is in; none: the default scheduler's.
    pub partition: Option<Spanned<String>>,
    /// SWF queue numbers (field 15) whose jobs go to this queue.
    #[serde(default)]
    pub swf_queues: Vec<u32>,
    /// The queue's own `backfill_depth`: its jobs count their top jobs against it, not the
    /// server's; 0 is strict order inside the queue.
    pub backfill_depth: Option<Spanned<u32>>,
    /// The queue's `priority`: with `by_queue`, higher-priority queues' jobs go first.
    #[serde(default)]
    pub priority: i64,
    /// The queue's `max_run`, as the server's, over the queue's jobs.
    pub max_run: Option<Spanned<String>>,
    /// The queue's `max_run_res.<resource>`, as the server's, over the queue's jobs.
    #[serde(default)]
    pub max_run_res: std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
    /// The queue's `max_queued`, as the server's, over the queue's jobs.
    pub max_queued: Option<Spanned<String>>,
    /// The queue's `max_queued_res.<resource>`, as the server's, over the queue's jobs.
    #[serde(default)]
    pub max_queued_res: std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
    /// The queue's `default_chunk.<resource>`: what each chunk of its jobs gets when it does
    /// not name the resource, before the server's.
    #[serde(default)]
    pub default_chunk: BTreeMap<String, Spanned<toml::Value>>,
    /// The queue's `resources_default.<resource>`: job-wide defaults (`walltime`, `place`)
    /// for its jobs that do not give them, before the server's.
    #[serde(default)]
    pub resources_default: BTreeMap<String, Spanned<toml::Value>>,
}

/// `[moab]`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MoabToml {
    /// RMPOLLINTERVAL: the period of iterations under `run.cycles = "moab"`.
    pub rmpoll_interval: Option<Spanned<toml::Value>>,
    /// RESERVATIONDEPTH: priority reservations per pass [default: 1].
    pub reservation_depth: Option<Spanned<u32>>,
    /// RESERVATIONPOLICY: CURRENTHIGHEST, HIGHEST or NEVER [default: CURRENTHIGHEST].
    pub reservation_policy: Option<Spanned<String>>,
    /// NODEACCESSPOLICY: SHARED or SINGLEJOB [default: SHARED].
    pub node_access_policy: Option<Spanned<String>>,
    /// NODESETPOLICY: ONEOF, ANYOF or FIRSTOF.
    pub nodeset_policy: Option<Spanned<String>>,
    /// NODESETATTRIBUTE: FEATURE, VARATTR or PROCSPEED.
    pub nodeset_attribute: Option<Spanned<String>>,
    /// NODESETLIST.
    #[serde(default)]
    pub nodeset_list: Vec<Spanned<String>>,
    /// The string_array resource that holds node features [default: `features`].
    pub feature_resource: Option<Spanned<String>>,
    /// The string_array resource that holds the classes a node carries, for CLASS node sets
    /// [default: `classes`, when defined].
    pub class_resource: Option<Spanned<String>>,
    /// NODESETISOPTIONAL [default: true].
    pub nodeset_is_optional: Option<Spanned<bool>>,
    /// NODESETDELAY, `[[[DD:]HH:]MM:]SS` or seconds.
    pub nodeset_delay: Option<Spanned<toml::Value>>,
    /// NODESETPRIORITYTYPE [default: FIRSTFIT].
    pub nodeset_priority_type: Option<Spanned<String>>,
    /// NODESETTOLERANCE [default: 0].
    #[serde(default)]
    pub nodeset_tolerance: f64,
    /// NODESETPLUS: DELAY or SPANEVENLY.
    pub nodeset_plus: Option<Spanned<String>>,
    /// SCHEDCFG FLAGS=AllowPerJobNodeSetIsOptional.
    #[serde(default)]
    pub allow_per_job_nodeset_is_optional: bool,
    /// Option: FIRSTOF ignores NODESETPRIORITYTYPE and takes sets in list order.
    #[serde(default)]
    pub firstof_forces_firstfit: bool,
    /// Option: what MINLOSS means on feature and VARATTR sets [default: last-feasible].
    pub minloss: Option<Spanned<String>>,
    /// Option: what NODESETDELAY counts from under NODESETPLUS DELAY
    /// [default: earliest-unconstrained].
    pub delay_reference: Option<Spanned<String>>,
    /// Option: how NODESETPLUS DELAY is timed [default: predictive].
    pub delay_mode: Option<Spanned<String>>,
    /// Option (Q4): a job's own `nodesetisoptional=true` skips node sets altogether.
    #[serde(default)]
    pub job_optional_skips_sets: bool,
    /// Option (Q8): NODESETDELAY > 0 makes sets mandatory when its line comes after
    /// NODESETISOPTIONAL, as moab.cfg's order decides, instead of an explicit
    /// NODESETISOPTIONAL always winning.
    #[serde(default)]
    pub isoptional_config_order: bool,
    /// Option (Q2): MINLOSS by speed keeps every vnode at or above the base speed.
    #[serde(default)]
    pub tolerance_unbounded: bool,
    /// Option: dropping the sets under NODESETPLUS DELAY is for good.
    #[serde(default)]
    pub delay_sticky: bool,
    /// Option (Q5): a mandatory job that cannot be allocated inside a feasible set spans.
    #[serde(default)]
    pub mandatory_fallback: bool,
    /// Option: SPANEVENLY takes sets in list order, not priority-type order.
    #[serde(default)]
    pub spanevenly_list_order: bool,
    /// Option: a job's own `nodesetdelay=` is ignored even with the per-job flag.
    #[serde(default)]
    pub refuse_per_job_delay: bool,
    /// Classes with a DEFAULT.NODESET.
    #[serde(default)]
    pub class: Vec<MoabClassToml>,
    /// Job priority: the component and subcomponent weights and caps of moab.cfg.
    pub priority: Option<Spanned<MoabPriorityToml>>,
    /// Fairshare: FSPOLICY, FSINTERVAL, FSDEPTH, FSDECAY and the credentials' FSTARGETs.
    pub fairshare: Option<Spanned<MoabFairshareToml>>,
    /// Throttling limits: the credentials' MAXJOB, MAXPROC and MAXPS.
    pub limits: Option<Spanned<MoabLimitsToml>>,
    /// Standing (SRCFG) and administrative (`mrsvctl -c`) reservations.
    #[serde(default)]
    pub reservation: Vec<MoabReservationToml>,
    /// The weekday of t = 0: what a standing reservation's DAYS and weekly periods count
    /// from [default: SUN].
    pub day0: Option<Spanned<String>>,
    /// The local time of day at t = 0, `HH:MM:SS` [default: midnight]: an imported site's
    /// t = 0 is its first record, not a midnight.
    pub time0: Option<Spanned<String>>,
}

/// `[[running]]`: a job already running at t = 0, where and until when.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunningToml {
    /// Its job number in the outputs; no trace job may have it.
    pub id: Spanned<u64>,
    /// Its vnodes and amounts, in PBS's `exec_vnode` syntax.
    pub exec_vnode: Spanned<String>,
    /// When it ends: seconds, or `[[[DD:]HH:]MM:]SS`, after t = 0.
    pub end: Spanned<toml::Value>,
    /// When the scheduler expects it to end (its walltime's end) [default: `end`].
    pub estimated_end: Option<Spanned<toml::Value>>,
    /// Its user (SWF field 12's number).
    pub user: Option<u32>,
    /// Its group (SWF field 13's number).
    pub group: Option<u32>,
    /// Its project.
    pub project: Option<String>,
    /// Its PBS queue or Moab class, by name.
    pub queue: Option<Spanned<String>>,
}

/// `[[event]]`: one change of the site at a time: a job deleted, a vnode taken offline or
/// back online, an extra scheduling cycle. Exactly one of the kinds is given.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventToml {
    /// When: seconds, or `[[[DD:]HH:]MM:]SS`, after t = 0.
    pub at: Spanned<toml::Value>,
    /// `qdel`: the job (its number in the trace) deleted then.
    pub qdel: Option<Spanned<u64>>,
    /// `pbsnodes -o`: the vnode taken out of service then.
    pub offline: Option<Spanned<String>>,
    /// `pbsnodes -r`: the vnode put back in service then.
    pub online: Option<Spanned<String>>,
    /// `qmgr -c "create node"`: the vnode (defined with the others) joins the cluster then;
    /// until then it is out of service.
    pub add: Option<Spanned<String>>,
    /// One more scheduling cycle then (`true`).
    pub cycle: Option<Spanned<bool>>,
    /// A `qmgr` command setting a placement-set attribute then
    /// (`set server node_group_key = switch`).
    pub qmgr: Option<Spanned<String>>,
    /// `pbs_rdel`: the `[[reservation]]` of that name deleted then.
    pub rdel: Option<Spanned<String>>,
}

/// `[[reservation]]`: a reservation confirmed on named vnodes (PBS's `resv_nodes`), or a
/// maintenance reservation of whole hosts, over a window.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReservationToml {
    /// Its name (PBS's id, `R123` or `M4`); no two may share one.
    pub name: Spanned<String>,
    /// When its window opens: seconds, or `[[[DD:]HH:]MM:]SS`, after t = 0.
    pub start: Spanned<toml::Value>,
    /// When it closes, the same way; or give `duration`.
    pub end: Option<Spanned<toml::Value>>,
    /// How long it lasts, instead of `end`.
    pub duration: Option<Spanned<toml::Value>>,
    /// Its vnodes and amounts, in PBS's `exec_vnode` syntax (`(n1:ncpus=8)+(n2:ncpus=8)`).
    pub nodes: Option<Spanned<String>>,
    /// Instead of `nodes`: whole hosts, every vnode of each with all it has, held
    /// exclusively (a maintenance reservation, `pbs_rsub --hosts`).
    pub hosts: Option<Spanned<Vec<String>>>,
    /// Whether its vnodes are held exclusively (`place=excl`) [default: false; true with
    /// `hosts`].
    pub exclusive: Option<Spanned<bool>>,
    /// A standing reservation's recurrence rule (`pbs_rsub -r`): `FREQ=DAILY;COUNT=10`.
    pub recurrence: Option<Spanned<String>>,
    /// Instead of `nodes` or `hosts`: what it asks the scheduler for (`pbs_rsub -l`), its
    /// select and place, confirmed or denied at the first pass after `submit`.
    pub request: Option<Spanned<String>>,
    /// When it is requested [default: 0], with `request`.
    pub submit: Option<Spanned<toml::Value>>,
}

/// `[[moab.reservation]]`: a Moab reservation on whole hosts, which blocks the jobs its ACL
/// does not admit and lets those it admits use its hosts with the ACL's affinity.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoabReservationToml {
    /// Its name (SRCFG[name], or the id `mrsvctl` gives); no two may share one.
    pub name: Spanned<String>,
    /// HOSTLIST (`-h`): the hosts it reserves, whole.
    pub hostlist: Spanned<Vec<String>>,
    /// An administrative reservation's start (`-s`): seconds, or `[[[DD:]HH:]MM:]SS`, after
    /// t = 0.
    pub start: Option<Spanned<toml::Value>>,
    /// Its end (`-e`), or give `duration` (`-d`).
    pub end: Option<Spanned<toml::Value>>,
    /// Its duration (`-d`).
    pub duration: Option<Spanned<toml::Value>>,
    /// A standing reservation's PERIOD: DAY, WEEK or INFINITY.
    pub period: Option<Spanned<String>>,
    /// DAYS, for PERIOD=DAY: the weekdays it is active [default: every day].
    pub days: Option<Spanned<Vec<String>>>,
    /// STARTTIME: its offset in the period (`HH:MM:SS` for a day, `DD:HH:MM:SS` for a week,
    /// day 0 = Sunday) [default: 0].
    pub starttime: Option<Spanned<String>>,
    /// ENDTIME, the same way [default: the period's end].
    pub endtime: Option<Spanned<String>>,
    /// DEPTH: how many periods ahead it is reserved [default: 2].
    pub depth: Option<Spanned<u32>>,
    /// USERLIST: user numbers, each with an optional modifier (`!` not, `*` required) and
    /// affinity (`+` positive, the default; `=` neutral; `-` negative).
    #[serde(default)]
    pub userlist: Vec<Spanned<String>>,
    /// GROUPLIST: group numbers, the same way.
    #[serde(default)]
    pub grouplist: Vec<Spanned<String>>,
    /// ACCOUNTLIST: projects, the same way.
    #[serde(default)]
    pub accountlist: Vec<Spanned<String>>,
    /// CLASSLIST: classes of `[[moab.class]]`, the same way.
    #[serde(default)]
    pub classlist: Vec<Spanned<String>>,
}

/// `[moab.limits]`: Moab's throttling limits, per credential as moab.cfg writes them after
/// `USERCFG[name]` and the like: `"MAXJOB=2,4 MAXPROC=64"` (`[<soft>,]<hard>` each).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MoabLimitsToml {
    /// USERCFG[name], by user number (`DEFAULT` for every user without its own).
    #[serde(default)]
    pub user: std::collections::BTreeMap<String, Spanned<String>>,
    /// GROUPCFG[name], by group number.
    #[serde(default)]
    pub group: std::collections::BTreeMap<String, Spanned<String>>,
    /// ACCOUNTCFG[name], by project.
    #[serde(default)]
    pub account: std::collections::BTreeMap<String, Spanned<String>>,
    /// CLASSCFG[name], by Moab class.
    #[serde(default)]
    pub class: std::collections::BTreeMap<String, Spanned<String>>,
}

/// `[moab.fairshare]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoabFairshareToml {
    /// FSPOLICY: DEDICATEDPS or DEDICATEDPES, with a trailing `%` for the percent form.
    pub policy: Spanned<String>,
    /// FSINTERVAL [default: 24:00:00].
    pub interval: Option<Spanned<toml::Value>>,
    /// FSDEPTH [default: 7].
    pub depth: Option<Spanned<u32>>,
    /// FSDECAY [default: 1.0].
    pub decay: Option<Spanned<f64>>,
    /// USERCFG[name] FSTARGET, by user number (`DEFAULT` for the rest): `"20"`, `"20+"`
    /// (floor) or `"20-"` (ceiling).
    #[serde(default)]
    pub user: std::collections::BTreeMap<String, Spanned<String>>,
    /// GROUPCFG[name] FSTARGET, by group number.
    #[serde(default)]
    pub group: std::collections::BTreeMap<String, Spanned<String>>,
    /// ACCOUNTCFG[name] FSTARGET, by project.
    #[serde(default)]
    pub account: std::collections::BTreeMap<String, Spanned<String>>,
    /// CLASSCFG[name] FSTARGET, by Moab class.
    #[serde(default)]
    pub class: std::collections::BTreeMap<String, Spanned<String>>,
}

/// `[moab.priority]`: Moab's priority weights and caps, by their moab.cfg names in lower
/// case. Unset weights take Moab's defaults: component weights 1, subcomponent weights 0 but
/// QUEUETIMEWEIGHT 1 (FIFO); caps 0 (none).
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MoabPriorityToml {
    /// SERVWEIGHT.
    pub servweight: Option<f64>,
    /// SERVCAP.
    pub servcap: Option<f64>,
    /// QUEUETIMEWEIGHT.
    pub queuetimeweight: Option<f64>,
    /// QUEUETIMECAP.
    pub queuetimecap: Option<f64>,
    /// XFACTORWEIGHT.
    pub xfactorweight: Option<f64>,
    /// XFACTORCAP.
    pub xfactorcap: Option<f64>,
    /// XFMINWCLIMIT, in seconds [default: 120, Maui's source].
    pub xfminwclimit: Option<f64>,
    /// RESWEIGHT.
    pub resweight: Option<f64>,
    /// RESCAP.
    pub rescap: Option<f64>,
    /// PROCWEIGHT.
    pub procweight: Option<f64>,
    /// PROCCAP.
    pub proccap: Option<f64>,
    /// MEMWEIGHT (per MB).
    pub memweight: Option<f64>,
    /// MEMCAP.
    pub memcap: Option<f64>,
    /// WALLTIMEWEIGHT (per second of requested walltime).
    pub walltimeweight: Option<f64>,
    /// WALLTIMECAP.
    pub walltimecap: Option<f64>,
    /// PSWEIGHT (per processor-second requested).
    pub psweight: Option<f64>,
    /// PSCAP.
    pub pscap: Option<f64>,
    /// CREDWEIGHT: the credential component's weight [default: 1].
    pub credweight: Option<f64>,
    /// CREDCAP.
    pub credcap: Option<f64>,
    /// USERWEIGHT, GROUPWEIGHT, ACCOUNTWEIGHT, CLASSWEIGHT [default: 0].
    pub userweight: Option<f64>,
    /// GROUPWEIGHT.
    pub groupweight: Option<f64>,
    /// ACCOUNTWEIGHT.
    pub accountweight: Option<f64>,
    /// CLASSWEIGHT.
    pub classweight: Option<f64>,
    /// USERCFG[name] PRIORITY, by user number (`DEFAULT` for the rest).
    #[serde(default)]
    pub user_priority: std::collections::BTreeMap<String, f64>,
    /// GROUPCFG[name] PRIORITY, by group number.
    #[serde(default)]
    pub group_priority: std::collections::BTreeMap<String, f64>,
    /// ACCOUNTCFG[name] PRIORITY, by project.
    #[serde(default)]
    pub account_priority: std::collections::BTreeMap<String, f64>,
    /// CLASSCFG[name] PRIORITY, by Moab class.
    #[serde(default)]
    pub class_priority: std::collections::BTreeMap<String, f64>,
    /// FSWEIGHT: the fairshare component's weight [default: 1].
    pub fsweight: Option<f64>,
    /// FSCAP.
    pub fscap: Option<f64>,
    /// FSUSERWEIGHT [default: 0].
    pub fsuserweight: Option<f64>,
    /// FSGROUPWEIGHT [default: 0].
    pub fsgroupweight: Option<f64>,
    /// FSACCOUNTWEIGHT [default: 0].
    pub fsaccountweight: Option<f64>,
    /// FSCLASSWEIGHT [default: 0].
    pub fsclassweight: Option<f64>,
    /// ENABLENEGJOBPRIORITY: priorities below 1 are kept, not raised to 1.
    #[serde(default)]
    pub enablenegjobpriority: bool,
}

/// `[[moab.class]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoabClassToml {
    /// The class name.
    pub name: String,
    /// `DEFAULT.NODESET=POLICY:ATTR[:v,...]`.
    pub default_nodeset: Option<Spanned<String>>,
    /// SWF queue numbers (field 15) whose jobs are of this class.
    #[serde(default)]
    pub swf_queues: Vec<u32>,
}

/// `[cluster]`: "N nodes in racks of R under switches of S", by generations.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterToml {
    /// N, if given: must equal the sum of the generations' counts.
    pub nodes: Option<Spanned<u32>>,
    /// R: nodes per rack; vnodes get `rack = "rack1"`, ...
    pub racks_of: Option<Spanned<u32>>,
    /// S: nodes per switch; vnodes get `switch = "switch1"`, ...
    pub switches_of: Option<Spanned<u32>>,
    /// Node generations, in order: the same keys as a `[[class]]`; vnodes also get
    /// `model = <generation name>`.
    #[serde(default)]
    pub generation: Vec<NodeToml>,
}

/// `[runtime]`: p = p_trace × H × C × ε.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeToml {
    /// `slowest`, `fastest`, or a speed [default: slowest].
    pub speed_reference: Option<Spanned<toml::Value>>,
    /// Treat jobs as load-balanced: the mean speed sets the pace.
    #[serde(default)]
    pub balanced: bool,
    /// The topology key [default: `switch` when defined]; `""` for none.
    pub topology: Option<Spanned<String>>,
    /// `pairs` (1 + β·X) or `groups` (1 + min(α·(S − 1), cap)) [default: pairs].
    pub comm: Option<Spanned<String>>,
    /// α [default: 0.1].
    pub alpha: Option<f64>,
    /// The cap on α·(S − 1) [default: 0.4].
    pub alpha_cap: Option<f64>,
    /// σ of the lognormal noise ε [default: 0, off].
    #[serde(default)]
    pub noise_sigma: f64,
    /// Job classes by communication sensitivity, first match [default: half of all jobs,
    /// chosen at random, with β = 0.2].
    #[serde(default)]
    pub class: Vec<RuntimeClassToml>,
}

/// `[[runtime.class]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeClassToml {
    /// β for the chosen jobs.
    pub beta: Spanned<f64>,
    /// The share of matching jobs chosen at random [default: 1].
    pub fraction: Option<Spanned<f64>>,
    /// Smallest size matched.
    pub size_min: Option<u32>,
    /// Largest size matched.
    pub size_max: Option<u32>,
    /// SWF queues matched.
    #[serde(default)]
    pub queues: Vec<u32>,
    /// SWF users matched.
    #[serde(default)]
    pub users: Vec<u32>,
}

/// `[workload.generator]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorToml {
    /// `lublin` [default].
    pub model: Option<Spanned<String>>,
    /// How many jobs.
    pub jobs: Spanned<u64>,
    /// `batch+interactive` [default], `batch`, `interactive` or `typeless`.
    pub streams: Option<Spanned<String>>,
    /// The largest estimate, `[[[DD:]HH:]MM:]SS` or seconds [default: 48:00:00].
    pub max_estimate: Option<Spanned<toml::Value>>,
    /// A target offered load on the cluster [default: the published arrival rate].
    pub load: Option<Spanned<f64>>,
    /// Overrides of the batch stream's parameters.
    pub batch: Option<StreamToml>,
    /// Overrides of the interactive stream's parameters.
    pub interactive: Option<StreamToml>,
    /// Overrides of the typeless stream's parameters.
    pub typeless: Option<StreamToml>,
}

/// Overrides of one Lublin stream's parameters; each left out keeps its published value.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct StreamToml {
    pub serial_prob: Option<f64>,
    pub pow2_prob: Option<f64>,
    pub ulow: Option<f64>,
    pub umed: Option<f64>,
    pub uhi: Option<f64>,
    pub uprob: Option<f64>,
    pub a1: Option<f64>,
    pub b1: Option<f64>,
    pub a2: Option<f64>,
    pub b2: Option<f64>,
    pub pa: Option<f64>,
    pub pb: Option<f64>,
    pub aarr: Option<f64>,
    pub barr: Option<f64>,
    pub arar: Option<f64>,
    pub anum: Option<f64>,
    pub bnum: Option<f64>,
}

/// `[workload]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadToml {
    /// A trace, plain or gzipped, relative to the scenario file (or a generator).
    pub trace: Option<Spanned<String>>,
    /// The trace's format [default: swf].
    pub format: Option<Spanned<String>>,
    /// A synthetic workload (or a trace).
    pub generator: Option<Spanned<GeneratorToml>>,
    /// Count malformed trace lines as skipped.
    #[serde(default)]
    pub skip_bad_lines: bool,
    /// How sizes become requests: `ncpus` (N chunks of one ncpu) or `nodes`
    /// (ceil(N/P) chunks of P ncpus, scatter:excl) [default: ncpus].
    pub size_mapping: Option<Spanned<String>>,
    /// Whether the size mapping asks for SWF field 10's memory (KiB per processor): `trace`
    /// or `none` [default: trace].
    pub memory: Option<Spanned<String>>,
    /// P for `size_mapping = "nodes"` [default: the largest ncpus of any vnode].
    pub procs_per_node: Option<u32>,
    /// A file of explicit requests: `JOB_ID REQUEST` per line.
    pub requests_file: Option<Spanned<String>>,
    /// What really happened to the jobs (`placesim import pbs` writes `recorded.tsv`): a
    /// run is measured against it.
    pub recorded: Option<Spanned<String>>,
    /// An extended SWF field (19 or later) holding each job's request.
    pub request_field: Option<Spanned<i64>>,
    /// Multiplies every job's time since the first submit: below 1 compresses arrivals and
    /// raises the offered load [default: 1].
    pub arrival_scale: Option<Spanned<f64>>,
    /// Rules giving requests to chosen jobs, tried in order.
    #[serde(default)]
    pub rule: Vec<RuleToml>,
}

/// `[[workload.rule]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleToml {
    /// The request template: `{n}` is the job's size, `{nodes}` ceil(n / P), `{ppn}` P.
    pub request: Spanned<String>,
    /// Smallest size matched.
    pub size_min: Option<u32>,
    /// Largest size matched.
    pub size_max: Option<u32>,
    /// SWF queue numbers matched (field 15).
    #[serde(default)]
    pub queues: Vec<u32>,
    /// SWF user numbers matched (field 12).
    #[serde(default)]
    pub users: Vec<u32>,
    /// SWF group numbers matched (field 13).
    #[serde(default)]
    pub groups: Vec<u32>,
    /// SWF partition numbers matched (field 16).
    #[serde(default)]
    pub partitions: Vec<u32>,
    /// The fraction of matching jobs chosen at random with the scenario seed [default: 1].
    pub fraction: Option<Spanned<f64>>,
    /// PBS's `job_priority` (qsub -p) for the jobs the rule chooses.
    pub job_priority: Option<i64>,
    /// The project (PBS `project`, qsub -P) of the jobs the rule chooses.
    pub project: Option<String>,
    /// The PBS queue or Moab class (qsub -q), by name, of the jobs the rule chooses.
    pub queue: Option<Spanned<String>>,
}

fn one() -> u32 {
    1
}
