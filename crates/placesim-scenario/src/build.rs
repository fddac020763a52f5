//! From TOML text to a checked [`Scenario`].

use crate::reservations_fit::{Holder, Misfit};
use crate::schema::{FailuresToml, GeneratorToml, MetricsToml, NodeToml, ScenarioToml, StreamToml};
use crate::{
    DelayMode, DelayReference, Discipline, FailureModel, FailureSettings, JobFilter,
    MetricsSettings, MinLoss, MoabClass, MoabSettings, NodeClass, NodeSetOptions, NodeSetPlus,
    NodeSetSettings, PbsSettings, PlacementKind, Pregenerated, PriorityType, PsetSettings,
    QueueSettings, Rule, RunSettings, RuntimeConfig, Scenario, ScenarioError, SensitivityClass,
    SizeMapping, Trim, WorkloadSettings, WorkloadSource,
};
use placesim_core::{
    AttrValue, ClusterBuilder, ClusterError, CommForm, ConsumableIdx, Cycles, MAX_VNODES,
    NodeFailurePolicy, NodeSetAttribute, NodeSetPolicy, NodeSetValue, Outage, ResourceDefs,
    ResourceId, ResourceKind, RuntimeSettings, SimDuration, SimTime, VnodeId, WalltimePolicy,
};
use placesim_policy::limits::{Counted, LimitError, LimitScope, LimitSetting, parse_limit};
use placesim_policy::placement::{NodeSort, NodeSortBy, NodeSortLine};
use placesim_policy::queue::{
    CredentialLimits, FairshareEntity, FairshareSettings, FairshareTree, Formula, JobOrder,
    LIMIT_KINDS, MoabCredentials, MoabFairshareSettings, MoabLimits, SoftHard, SortKey, SortLine,
    Target, TargetMode, Term, UsageRate,
};
use placesim_workload::TraceFormat;
use placesim_workload::generate::{GeneratorSpec, StreamParams, Streams, tsafrir};
use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

/// The resource a `node_group_key` names: defined, and a string or string_array.
fn node_group_key(defs: &ResourceDefs, name: &str) -> Result<ResourceId, String> {
    let id = defs
        .lookup(name)
        .ok_or_else(|| format!("unknown resource `{name}`: define it under [[resource]]"))?;
    let kind = defs.def(id).kind;
    if !kind.is_stringlike() {
        return Err(format!(
            "resource `{name}` is of type {kind}; a node_group_key must be a string or string_array resource"
        ));
    }
    Ok(id)
}

/// What a timeline's `qmgr` commands change, and may change.
struct TimelineContext<'a> {
    /// The placement-set settings at the start.
    psets: &'a PsetSettings,
    /// The PBS queues, which a command names.
    queues: &'a [QueueSettings],
    /// The run's placement: placement-set settings change only PBS's.
    placement: PlacementKind,
}

/// Reads and checks a scenario. `path` names the file in errors and anchors relative paths.
pub fn load_scenario(text: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    load(text, path, None)
}

/// [`load_scenario`] for a single run, whose generated workload (if it has one) starts being
/// made on a thread of its own before the cluster is built, for the ncpus the file declares
/// and the run's seed: `seed`, or the scenario's own when `None` (see [`Pregenerated`]).
/// The plan takes it if the cluster has those ncpus and the run that seed, and generates
/// again otherwise. Sweeps load a scenario per cell and change the seed per replicate: they
/// use [`load_scenario`].
pub fn load_scenario_generating(
    text: &str,
    path: &Path,
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    load(text, path, Some(seed))
}

/// Loads a scenario; with `generate_for`, starts its generated workload first, for that seed
/// (the scenario's own when `None`).
fn load(
    text: &str,
    path: &Path,
    generate_for: Option<Option<u64>>,
) -> Result<Scenario, ScenarioError> {
    let cx = Cx { text, path };
    let raw: ScenarioToml = toml::from_str(text).map_err(|e| toml_syntax_error(text, path, &e))?;
    let resources = cx.resources(&raw)?;
    // A generator that does not read is reported where loading reads it, in its turn.
    let pregenerated = generate_for.and_then(|seed| {
        let g = raw.workload.as_ref()?.generator.as_ref()?;
        let spec = cx.generator(g).ok()?;
        Pregenerated::start(
            spec,
            declared_ncpus(&raw).max(1),
            seed.unwrap_or(raw.run.seed),
        )
    });
    let queue_names: Vec<&Spanned<String>> = raw.pbs.queue.iter().map(|q| &q.name).collect();
    for (i, q) in queue_names.iter().enumerate() {
        if queue_names[..i].iter().any(|p| p.get_ref() == q.get_ref()) {
            return Err(cx.at(
                q,
                "pbs.queue.name",
                format!("queue `{}` is defined twice", q.get_ref()),
            ));
        }
    }
    let nodes = cx.cluster(&raw, resources, &queue_names)?;
    let run = cx.run(&raw)?;
    let server_order = cx.job_order(&raw, nodes.cluster.resources())?;
    let partitions = cx.partitions(&raw, &nodes, &run, &server_order)?;
    let Nodes {
        cluster,
        classes,
        vnode_queue,
        vnode_priority,
        ..
    } = nodes;
    let defs = cluster.resources().clone();
    let queue_keys = raw
        .pbs
        .queue
        .iter()
        .map(|q| cx.keys(&q.node_group_key, &defs, "pbs.queue.node_group_key"))
        .collect::<Result<_, ScenarioError>>()?;
    let node_order = cx.node_order(&raw, &cluster, &vnode_priority, &run)?;
    let pbs = PbsSettings {
        vnode_sharing: cx.vnode_sharing(&raw, &run)?,
        node_sort: node_order.by_free.clone(),
        psets: PsetSettings {
            node_group_enable: raw.pbs.node_group_enable,
            server_key: cx.keys(&raw.pbs.node_group_key, &defs, "pbs.node_group_key")?,
            queue_keys,
            vnode_queue,
            do_not_span: raw.pbs.do_not_span_psets,
            only_explicit: raw.pbs.only_explicit_psets,
            // The keys jobs name come with the workload (Scenario::placement).
            job_keys: Vec::new(),
            node_order: node_order.fixed,
            node_sort: node_order.by_free,
            // Set per scheduler when the scenario has partitions (Scenario::placement).
            universe: None,
        },
        queues: raw
            .pbs
            .queue
            .iter()
            .map(|q| {
                Ok(QueueSettings {
                    name: q.name.get_ref().clone(),
                    swf_queues: q.swf_queues.clone(),
                    backfill_depth: q.backfill_depth.as_ref().map(|d| *d.get_ref()),
                    default_chunk: cx.default_chunk(
                        &q.default_chunk,
                        &defs,
                        "pbs.queue.default_chunk",
                    )?,
                    resources_default: cx.resources_default(
                        &q.resources_default,
                        &defs,
                        "pbs.queue.resources_default",
                    )?,
                })
            })
            .collect::<Result<_, ScenarioError>>()?,
        default_chunk: cx.default_chunk(&raw.pbs.default_chunk, &defs, "pbs.default_chunk")?,
        resources_default: cx.resources_default(
            &raw.pbs.resources_default,
            &defs,
            "pbs.resources_default",
        )?,
        order: server_order,
        limits: cx.limits(&raw, &defs, &run)?,
    };
    if pbs.order.by_fairshare
        && (run.placement == PlacementKind::Moab
            || matches!(run.discipline, Discipline::Easy { kept: true, .. }))
    {
        let key = "fair_share";
        let at = text.find(key).unwrap_or(0);
        return Err(cx.error(
            at..at + key.len(),
            Some("pbs.fair_share"),
            "PBS's fairshare does not go with Moab's node sets or reservation policy HIGHEST"
                .to_owned(),
        ));
    }
    // Moab's processor equivalents weigh memory by the machine's memory per processor.
    let mem_per_ncpu = defs
        .lookup("mem")
        .and_then(|id| defs.consumable_idx(id))
        .map(|c| {
            let ncpus = cluster.capacity_total(ConsumableIdx::NCPUS).max(1) as f64;
            (c, cluster.capacity_total(c) as f64 / ncpus)
        });
    let moab_reservations =
        cx.moab_reservations(&raw, &cluster, run.placement == PlacementKind::Moab)?;
    let moab = cx.moab(&raw, &defs, mem_per_ncpu, &moab_reservations.hosts)?;
    if let Some(priority) = &raw.moab.priority
        && !pbs.order.is_submit_order()
    {
        return Err(cx.at(
            priority,
            "moab.priority",
            "[moab.priority] and PBS's job order (job_sort_key, job_sort_formula, queue \
             priorities) both order the queue: give one"
                .to_owned(),
        ));
    }
    let runtime = cx.runtime(&raw, &defs)?;
    let mut failures = cx.failures(&raw.failures, &cluster, &classes)?;
    let timeline = cx.timeline(
        &raw,
        &cluster,
        &mut failures.outages,
        TimelineContext {
            psets: &pbs.psets,
            queues: &pbs.queues,
            placement: run.placement,
        },
    )?;
    let metrics = cx.metrics(&raw.metrics)?;
    let running = cx.running(&raw, &cluster, &defs, pbs.vnode_sharing)?;
    // A vnode the timeline adds later is not there at t = 0 for a job to run on.
    for (job, entry) in running.iter().zip(&raw.running) {
        if let Some((v, at)) = timeline
            .added
            .iter()
            .find(|(v, _)| job.vnodes.iter().any(|(u, _)| u == v))
        {
            return Err(cx.at(
                &entry.exec_vnode,
                "running.exec_vnode",
                format!(
                    "vnode `{}` is added only at {} s (its [[event]]): no job runs on it at t = 0",
                    cluster.vnode(*v).name(),
                    at.as_secs()
                ),
            ));
        }
    }
    let (mut reservations, reservation_requests) = cx.reservations(
        &raw,
        &cluster,
        &defs,
        ReservationContext {
            running: &running,
            outages: &failures.outages,
            failure_models: !failures.models.is_empty(),
            run: &run,
            queues: &pbs.queues,
            indirect: !cluster.pools().is_empty(),
        },
    )?;
    reservations.extend(moab_reservations.occurrences);
    let max_ncpus = (0..cluster.n_vnodes())
        .map(|v| cluster.ncpus_capacity(placesim_core::VnodeId::from_index(v)))
        .max()
        .unwrap_or(1);
    let workload = match &raw.workload {
        None => None,
        Some(w) => Some(cx.workload(&raw, w, &defs, max_ncpus)?),
    };
    let name = raw.name.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(
            || "scenario".to_owned(),
            |s| s.to_string_lossy().into_owned(),
        )
    });
    Ok(Scenario {
        name,
        path: path.to_owned(),
        run,
        cluster,
        classes,
        pbs,
        moab,
        workload,
        runtime,
        failures,
        metrics,
        running,
        reservations,
        reservation_requests,
        timeline,
        partitions,
        pregenerated,
    })
}

/// The ncpus a scenario's vnode entries declare: each entry's `ncpus` times its vnodes (a
/// class's or generation's `count`, one for a `[[vnode]]`). What the built cluster totals when
/// the entries are sound; only a guess to start generating on, checked against the cluster.
fn declared_ncpus(raw: &ScenarioToml) -> u64 {
    node_entries(raw)
        .map(|(node, table)| {
            let vnodes = match table {
                "vnode" => 1,
                _ => node.count.as_ref().map_or(0, |c| u64::from(*c.get_ref())),
            };
            u64::from(node.ncpus).saturating_mul(vnodes)
        })
        .fold(0, u64::saturating_add)
}

/// A scenario's vnode entries in the order the cluster adds them, each with the table it
/// is under (which errors name): classes, single vnodes, then generations.
fn node_entries(raw: &ScenarioToml) -> impl Iterator<Item = (&NodeToml, &'static str)> {
    let generations = raw.cluster.as_ref().map_or(&[][..], |c| &c.generation[..]);
    raw.class
        .iter()
        .map(|c| (c, "class"))
        .chain(raw.vnode.iter().map(|v| (v, "vnode")))
        .chain(generations.iter().map(|g| (g, "cluster.generation")))
}

mod moab_reservations;

/// How far after t = 0 recurring reservations are expanded: three years, as PBS keeps a
/// standing reservation's occurrences (and Moab's, whose scheduler would go on creating
/// them, are cut there too; an INFINITY period ends there).
const RESERVATION_HORIZON_S: u64 = 3 * 365 * 86_400;

/// A scenario's reservations: those given on their vnodes (a standing one's occurrences each),
/// and those requested of the scheduler.
type Reservations = (
    Vec<placesim_core::SiteReservation>,
    Vec<placesim_core::ReservationRequest>,
);

/// What the rest of a scenario says that its reservations depend on.
struct ReservationContext<'a> {
    running: &'a [crate::RunningAtStart],
    /// The outages listed: none may take a vnode a reservation holds during its window.
    outages: &'a [Outage],
    /// Whether outages are drawn from models (known only when a run is planned).
    failure_models: bool,
    run: &'a RunSettings,
    /// The PBS queues: one named as a reservation is its queue.
    queues: &'a [crate::QueueSettings],
    /// Whether some vnodes share a consumable (PBS's indirect resources).
    indirect: bool,
}

impl ReservationContext<'_> {
    /// Why reservations cannot go with the rest of the scenario, if they cannot: what
    /// placesim does not model beside them yet.
    fn unmodelled(&self) -> Option<String> {
        if self.failure_models {
            return Some(
                "reservations and drawn vnode outages together are not modelled yet: a vnode \
                 down under a reservation degrades it (reservations-and-partitions.md §1.7)"
                    .to_owned(),
            );
        }
        if self.run.walltime == WalltimePolicy::Overrun {
            return Some(
                "reservations need jobs killed at their walltime (run.walltime = \"kill\"): a \
                 job running past it would overlap the reservations it was kept off"
                    .to_owned(),
            );
        }
        if self.indirect {
            return Some(
                "reservations and indirect resources (`@vnode`) together are not modelled \
                 yet: a reservation would hold a shared pool on each of its vnodes"
                    .to_owned(),
            );
        }
        if self.run.placement == PlacementKind::Moab {
            return Some(
                "these are PBS's reservations, for placement \"first-fit\" or \"pbs\"; \
                 Moab's (SRCFG, mrsvctl) are [[moab.reservation]]"
                    .to_owned(),
            );
        }
        None
    }
}

/// The order first fit tries vnodes in: made once, or made from the view at each placement.
struct NodeOrder {
    fixed: Option<Arc<[VnodeId]>>,
    by_free: Option<Arc<NodeSort>>,
}

/// A vnode's consumable capacities (one per slot), non-consumable properties, and indirect
/// resources (`"@target"`: the resource, the target's name, where the value is).
type NodeValues = (
    Vec<u64>,
    Vec<(ResourceId, AttrValue)>,
    Vec<(ResourceId, String, Range<usize>)>,
);

/// The vnodes of a scenario: the cluster, the entries they came from, and each vnode's queue.
struct Nodes {
    cluster: placesim_core::Cluster,
    classes: Vec<NodeClass>,
    vnode_queue: Vec<Option<usize>>,
    /// Per vnode: the `[[pbs.sched]]` serving its partition, if it has one.
    vnode_partition: Vec<Option<usize>>,
    /// Per vnode: its PBS `priority` (`sort_priority`).
    vnode_priority: Vec<i64>,
}

/// The labels a generated cluster gives its n-th node: rack and switch by position.
struct ClusterLabels {
    model: Option<ResourceId>,
    rack: Option<(ResourceId, u32)>,
    switch: Option<(ResourceId, u32)>,
}

impl ClusterLabels {
    fn new(c: Option<&crate::schema::ClusterToml>, defs: &ResourceDefs) -> Self {
        let per = |v: Option<&Spanned<u32>>, name: &str| {
            v.and_then(|v| defs.lookup(name).map(|id| (id, (*v.get_ref()).max(1))))
        };
        ClusterLabels {
            model: c.and_then(|_| defs.lookup("model")),
            rack: c.and_then(|c| per(c.racks_of.as_ref(), "rack")),
            switch: c.and_then(|c| per(c.switches_of.as_ref(), "switch")),
        }
    }

    fn label(&self, n: usize, attrs: &mut Vec<(ResourceId, AttrValue)>) {
        for (which, prefix) in [(self.rack, "rack"), (self.switch, "switch")] {
            if let Some((id, per)) = which {
                attrs.retain(|(a, _)| *a != id);
                attrs.push((
                    id,
                    AttrValue::Str(format!("{prefix}{}", n / per as usize + 1)),
                ));
            }
        }
    }
}

/// The spec's default sensitivity: half of all jobs, at random, with β = 0.2.
fn default_class() -> SensitivityClass {
    SensitivityClass {
        filter: filter(None, None, &[], &[], &[], &[]),
        fraction: 0.5,
        beta: 0.2,
    }
}

fn filter(
    size_min: Option<u32>,
    size_max: Option<u32>,
    queues: &[u32],
    users: &[u32],
    groups: &[u32],
    partitions: &[u32],
) -> JobFilter {
    JobFilter {
        size_min: size_min.unwrap_or(0),
        size_max: size_max.unwrap_or(u32::MAX),
        queues: queues.to_vec(),
        users: users.to_vec(),
        groups: groups.to_vec(),
        partitions: partitions.to_vec(),
    }
}

/// Published parameters with the scenario's overrides.
fn overrides(mut p: StreamParams, o: Option<&StreamToml>) -> StreamParams {
    let Some(o) = o else { return p };
    let set = |field: &mut f64, v: Option<f64>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut p.serial_prob, o.serial_prob);
    set(&mut p.pow2_prob, o.pow2_prob);
    set(&mut p.ulow, o.ulow);
    set(&mut p.umed, o.umed);
    set(&mut p.uhi, o.uhi);
    set(&mut p.uprob, o.uprob);
    set(&mut p.a1, o.a1);
    set(&mut p.b1, o.b1);
    set(&mut p.a2, o.a2);
    set(&mut p.b2, o.b2);
    set(&mut p.pa, o.pa);
    set(&mut p.pb, o.pb);
    set(&mut p.aarr, o.aarr);
    set(&mut p.barr, o.barr);
    set(&mut p.arar, o.arar);
    set(&mut p.anum, o.anum);
    set(&mut p.bnum, o.bnum);
    p
}

/// A TOML file's parse error as every placesim error names a place: `FILE:LINE:COLUMN: key
/// `KEY`: what was expected`, on one line (the TOML parser's own text draws the line).
pub fn toml_syntax_error(text: &str, path: &Path, e: &toml::de::Error) -> ScenarioError {
    let span = e.span().unwrap_or(0..0);
    Cx { text, path }.error(span, None, e.message().trim_end().to_owned())
}

/// The most jobs `[workload.generator]` may generate: many millions, within memory.
pub const MAX_GENERATED_JOBS: u64 = 50_000_000;

/// The source, for turning spans into lines and columns.
struct Cx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Cx<'_> {
    /// The line and column (both from 1, the column in characters) of byte `offset`.
    fn position(&self, offset: usize) -> (usize, usize) {
        let start = offset.min(self.text.len());
        let before = &self.text[..start];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (
            before.matches('\n').count() + 1,
            self.text[line_start..start].chars().count() + 1,
        )
    }

    /// An error at `span`. Without a key, the key is read from the line: the text before `=`,
    /// or the table header.
    fn error(&self, span: Range<usize>, key: Option<&str>, message: String) -> ScenarioError {
        let (line, column) = self.position(span.start);
        let start = span.start.min(self.text.len());
        let line_start = self.text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_text = self.text[line_start..].lines().next().unwrap_or("");
        let key = key.map_or_else(
            || {
                let t = line_text.trim();
                match t.split_once('=') {
                    Some((k, _)) => k.trim().to_owned(),
                    None => t.trim_matches(|c| c == '[' || c == ']').to_owned(),
                }
            },
            str::to_owned,
        );
        ScenarioError::At {
            path: self.path.to_owned(),
            line,
            column,
            key,
            message,
        }
    }

    fn at<T>(&self, spanned: &Spanned<T>, key: &str, message: String) -> ScenarioError {
        self.error(spanned.span(), Some(key), message)
    }

    /// `[pbs] vnode_sharing`: one of PBS's six values, not with Moab's placement (whose
    /// node sharing is `node_access_policy`).
    fn vnode_sharing(
        &self,
        raw: &ScenarioToml,
        run: &RunSettings,
    ) -> Result<placesim_request::VnodeSharing, ScenarioError> {
        let Some(given) = &raw.pbs.vnode_sharing else {
            return Ok(placesim_request::VnodeSharing::default());
        };
        let key = "pbs.vnode_sharing";
        if run.placement == PlacementKind::Moab {
            return Err(self.at(
                given,
                key,
                "vnode sharing is PBS's: Moab's node sharing is moab.node_access_policy".to_owned(),
            ));
        }
        placesim_request::VnodeSharing::from_name(given.get_ref()).ok_or_else(|| {
            self.at(
                given,
                key,
                format!(
                    "expected one of {}, found `{}`",
                    placesim_request::VnodeSharing::names(),
                    given.get_ref()
                ),
            )
        })
    }

    /// A `default_chunk` table as chunk terms (`Qlist=workq`, `mem=2gb`), each entry read
    /// as a chunk's resource; `nchunk` (a count for chunks written without one) is refused,
    /// as placesim's requests always have their count.
    fn default_chunk(
        &self,
        table: &std::collections::BTreeMap<String, Spanned<toml::Value>>,
        defs: &ResourceDefs,
        key: &str,
    ) -> Result<Vec<placesim_request::Term>, ScenarioError> {
        let mut terms = Vec::with_capacity(table.len());
        for (name, value) in table {
            let here = format!("{key}.{name}");
            if name == "nchunk" {
                return Err(self.at(
                    value,
                    &here,
                    "default_chunk.nchunk is not modelled: every request here gives its chunks' count"
                        .to_owned(),
                ));
            }
            let text = match value.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => if *b { "True" } else { "False" }.to_owned(),
                other => {
                    return Err(self.at(
                        value,
                        &here,
                        format!(
                            "expected a string, number or boolean, found {}",
                            other.type_str()
                        ),
                    ));
                }
            };
            let term = format!("{name}={text}");
            let parsed = placesim_request::parse_chunk_terms(&term, defs)
                .map_err(|e| self.at(value, &here, format!("`{term}`: {e}")))?;
            terms.extend(parsed);
        }
        Ok(terms)
    }

    /// A `resources_default` table: `walltime` (a duration) and `place` (as `place=` takes
    /// it); any other job-wide resource is refused, since every job here has a select whose
    /// chunks carry their resources (and `default_chunk` fills them).
    fn resources_default(
        &self,
        table: &std::collections::BTreeMap<String, Spanned<toml::Value>>,
        defs: &ResourceDefs,
        key: &str,
    ) -> Result<crate::JobDefaults, ScenarioError> {
        let mut out = crate::JobDefaults::default();
        for (name, value) in table {
            let here = format!("{key}.{name}");
            match name.as_str() {
                "walltime" => {
                    let s = self.duration(value, &here)?;
                    if s == 0 {
                        return Err(self.at(value, &here, "expected a walltime above 0".into()));
                    }
                    out.walltime_s = Some(s);
                }
                "place" => {
                    let text = value
                        .get_ref()
                        .as_str()
                        .filter(|t| !t.is_empty() && !t.contains(char::is_whitespace));
                    let Some(text) = text else {
                        return Err(self.at(
                            value,
                            &here,
                            "expected a place such as \"scatter:excl\"".into(),
                        ));
                    };
                    let place = placesim_request::parse_place(text, defs)
                        .map_err(|e| self.at(value, &here, format!("`{text}`: {e}")))?;
                    out.place = Some(place);
                }
                other => {
                    return Err(self.at(
                        value,
                        &here,
                        format!(
                            "job-wide `{other}` is not modelled: every job here has a select, \
                             whose chunks carry their resources (default_chunk fills them); \
                             resources_default takes walltime and place"
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn resources(&self, raw: &ScenarioToml) -> Result<ResourceDefs, ScenarioError> {
        let mut defs = ResourceDefs::default();
        let built_in = defs.all().len();
        let mut in_file = std::collections::HashSet::new();
        for r in &raw.resource {
            let Some(kind) = ResourceKind::from_name(r.kind.get_ref()) else {
                return Err(self.at(
                    &r.kind,
                    "resource.type",
                    format!(
                        "unknown type `{}`: expected long, float, size, string, string_array or boolean",
                        r.kind.get_ref()
                    ),
                ));
            };
            if r.name.get_ref() == "group" {
                return Err(self.at(
                    &r.name,
                    "resource.name",
                    "`group` is reserved for per-chunk grouping in select statements".into(),
                ));
            }
            let name = r.name.get_ref();
            if !in_file.insert(name.as_str()) {
                return Err(self.at(
                    &r.name,
                    "resource.name",
                    format!("resource `{name}` is defined twice"),
                ));
            }
            // A site's own definition of a built-in (its resourcedef lists ngpus, say) is
            // welcome when it says what the built-in is.
            match defs.lookup(name).filter(|id| id.index() < built_in) {
                Some(id) => {
                    let def = defs.def(id);
                    if def.kind != kind || def.consumable != r.consumable {
                        let what = |kind: ResourceKind, consumable: bool| {
                            format!(
                                "{} {kind}",
                                if consumable {
                                    "a consumable"
                                } else {
                                    "a non-consumable"
                                }
                            )
                        };
                        return Err(self.at(
                            &r.name,
                            "resource.name",
                            format!(
                                "`{name}` is built in as {}; this defines it as {}",
                                what(def.kind, def.consumable),
                                what(kind, r.consumable)
                            ),
                        ));
                    }
                }
                None => {
                    defs.define(name, kind, r.consumable)
                        .map_err(|e| self.at(&r.name, "resource.name", e.to_string()))?;
                }
            }
        }
        // A generated cluster labels its vnodes; define what it uses unless the file did.
        if let Some(c) = &raw.cluster {
            let mut wanted = vec![
                ("model", ResourceKind::String),
                ("features", ResourceKind::StringArray),
            ];
            if c.racks_of.is_some() {
                wanted.push(("rack", ResourceKind::String));
            }
            if c.switches_of.is_some() {
                wanted.push(("switch", ResourceKind::String));
            }
            for (name, kind) in wanted {
                if defs.lookup(name).is_none() {
                    // Not defined yet, so this cannot fail.
                    let _ = defs.define(name, kind, false);
                }
            }
        }
        Ok(defs)
    }

    fn cluster(
        &self,
        raw: &ScenarioToml,
        defs: ResourceDefs,
        queues: &[&Spanned<String>],
    ) -> Result<Nodes, ScenarioError> {
        let mut b = ClusterBuilder::new(defs.clone());
        let mut classes = Vec::new();
        let mut vnode_queue = Vec::new();
        let mut vnode_partition = Vec::new();
        let mut vnode_priority = Vec::new();
        // Looked up once or twice a vnode, and a cluster may have a hundred thousand: foldhash
        // rather than SipHash.
        let mut names: HashSet<String, foldhash::fast::FixedState> = HashSet::default();
        // Entries that name the same host form one host, as `pbsnodes` lists a multi-vnode
        // host's vnodes one by one.
        let mut hosts: std::collections::HashMap<
            String,
            placesim_core::HostId,
            foldhash::fast::FixedState,
        > = std::collections::HashMap::default();
        let entries = node_entries(raw);
        let labels = ClusterLabels::new(raw.cluster.as_ref(), &defs);
        if let Some(c) = &raw.cluster {
            self.check_generated(c)?;
        }
        let mut generated = 0usize;
        let mut indirect_pending = Vec::new();
        for (node, table) in entries {
            let (capacity, mut attrs, indirect) = self.node_values(node, &defs, table)?;
            let is_generation = table == "cluster.generation";
            if is_generation && let Some(model) = labels.model {
                attrs.retain(|(id, _)| *id != model);
                attrs.push((model, AttrValue::Str(node.name.get_ref().clone())));
            }
            let queue = match &node.queue {
                None => None,
                Some(q) => Some(
                    queues
                        .iter()
                        .position(|n| n.get_ref() == q.get_ref())
                        .ok_or_else(|| {
                            self.at(
                                q,
                                &format!("{table}.queue"),
                                format!(
                                    "unknown queue `{}`: define it under [[pbs.queue]]",
                                    q.get_ref()
                                ),
                            )
                        })?,
                ),
            };
            let partition = self.vnode_partition(raw, node, table, queue)?;
            let vnode_names = self.vnode_names(node, table, names.len())?;
            let per_host = node.vnodes_per_host.as_ref().map_or(1, |s| *s.get_ref());
            if per_host == 0 {
                let span = node.vnodes_per_host.as_ref().map_or(0..0, Spanned::span);
                return Err(self.error(
                    span,
                    Some(&format!("{table}.vnodes_per_host")),
                    "expected at least 1".into(),
                ));
            }
            // Every list grows by the entry's vnodes at once, not by doubling as they come.
            let n = vnode_names.len();
            b.reserve(n);
            names.reserve(n);
            hosts.reserve(n.div_ceil(per_host as usize));
            vnode_queue.reserve(n);
            vnode_partition.reserve(n);
            vnode_priority.reserve(n);
            let mut members = Vec::with_capacity(n);
            let mut host = None;
            for (i, name) in vnode_names.iter().enumerate() {
                if !names.insert(name.clone()) {
                    return Err(self.at(
                        &node.name,
                        &format!("{table}.name"),
                        format!("vnode name `{name}` is used twice"),
                    ));
                }
                if i % per_host as usize == 0 {
                    let host_name = match (&node.host, per_host) {
                        (Some(h), _) => h.get_ref().clone(),
                        (None, 1) => name.clone(),
                        (None, _) => {
                            format!("{}-h{}", node.name.get_ref(), i / per_host as usize + 1)
                        }
                    };
                    let id = *hosts
                        .entry(host_name)
                        .or_insert_with_key(|name| b.add_host(name.clone()));
                    host = Some(id);
                }
                let Some(h) = host else { continue };
                let mut attrs = attrs.clone();
                if is_generation {
                    labels.label(generated, &mut attrs);
                    generated += 1;
                }
                let v = b
                    .add_vnode(name.clone(), h, node.speed, &capacity, attrs)
                    .map_err(|e| self.at(&node.name, &format!("{table}.name"), e.to_string()))?;
                for (id, target, span) in &indirect {
                    let key = format!("{table}.resources.{}", defs.def(*id).name);
                    indirect_pending.push((v, *id, target.clone(), span.clone(), key));
                }
                members.push(v);
                vnode_queue.push(queue);
                vnode_partition.push(partition);
                vnode_priority.push(node.sort_priority);
            }
            classes.push(NodeClass {
                name: node.name.get_ref().clone(),
                vnodes: members,
            });
        }
        self.resolve_indirect(&mut b, &indirect_pending)?;
        let cluster = b.build().map_err(|e| {
            self.error(
                0..0,
                Some("class"),
                format!("{e}: give at least one [[class]] or [[vnode]]"),
            )
        })?;
        Ok(Nodes {
            cluster,
            classes,
            vnode_queue,
            vnode_partition,
            vnode_priority,
        })
    }

    /// The `[[pbs.sched]]` serving the partition `node` names, checked against its queue's:
    /// a queue's partition is its vnodes' (PBS refuses a vnode of another).
    fn vnode_partition(
        &self,
        raw: &ScenarioToml,
        node: &NodeToml,
        table: &str,
        queue: Option<usize>,
    ) -> Result<Option<usize>, ScenarioError> {
        let key = format!("{table}.partition");
        let partition = match &node.partition {
            None => None,
            Some(p) => Some(self.sched_serving(raw, p, &key)?),
        };
        if let Some(q) = queue {
            let queue_partition = raw.pbs.queue[q].partition.as_ref().map(Spanned::get_ref);
            let own = node.partition.as_ref().map(Spanned::get_ref);
            if own != queue_partition {
                let at = node.partition.as_ref().or(node.queue.as_ref());
                let span = at.map_or(node.name.span(), Spanned::span);
                let name = |p: Option<&String>| {
                    p.map_or_else(|| "no partition".to_owned(), |p| format!("partition `{p}`"))
                };
                let queue_key = format!("{table}.queue");
                return Err(self.error(
                    span,
                    Some(if node.partition.is_some() { &key } else { &queue_key }),
                    format!(
                        "its queue `{}` is in {}, and a queue's vnodes are in its partition: give the vnode {}",
                        raw.pbs.queue[q].name.get_ref(),
                        name(queue_partition),
                        name(queue_partition)
                    ),
                ));
            }
        }
        Ok(partition)
    }

    /// The index of the `[[pbs.sched]]` serving partition `p`.
    fn sched_serving(
        &self,
        raw: &ScenarioToml,
        p: &Spanned<String>,
        key: &str,
    ) -> Result<usize, ScenarioError> {
        raw.pbs
            .sched
            .iter()
            .position(|s| s.partition.get_ref() == p.get_ref())
            .ok_or_else(|| {
                self.at(
                    p,
                    key,
                    format!(
                        "no [[pbs.sched]] serves partition `{}`: a job there would never be scheduled",
                        p.get_ref()
                    ),
                )
            })
    }

    /// The schedulers of `[[pbs.sched]]`, each with its partition's vnodes and queues and its
    /// own settings; PBS's rules on their names and partitions checked, with PBS's texts.
    fn partitions(
        &self,
        raw: &ScenarioToml,
        nodes: &Nodes,
        run: &RunSettings,
        server_order: &JobOrder,
    ) -> Result<Vec<crate::SchedPartition>, ScenarioError> {
        let Some(first) = raw.pbs.sched.first() else {
            return Ok(Vec::new());
        };
        let refuse = |what: &str| {
            Err(self.at(
                &first.name,
                "pbs.sched",
                format!("scheduler partitions go with PBS's placement and job order; not yet with {what}"),
            ))
        };
        if run.placement == PlacementKind::Moab {
            return refuse("Moab's node sets");
        }
        if !raw.reservation.is_empty() {
            return refuse("reservations");
        }
        if raw.event.iter().any(|e| e.qmgr.is_some()) {
            return refuse("a timeline's qmgr changes");
        }
        if raw.pbs.fair_share {
            return refuse("fairshare");
        }
        if !nodes.cluster.pools().is_empty() {
            return refuse("indirect resources (`@vnode`)");
        }
        let mut partitions: Vec<crate::SchedPartition> = Vec::new();
        for (i, s) in raw.pbs.sched.iter().enumerate() {
            if s.name.get_ref() == "default"
                || raw.pbs.sched[..i]
                    .iter()
                    .any(|o| o.name.get_ref() == s.name.get_ref())
            {
                return Err(self.at(
                    &s.name,
                    "pbs.sched.name",
                    format!(
                        "scheduler `{}` is defined twice (`default` is PBS's own)",
                        s.name.get_ref()
                    ),
                ));
            }
            if s.partition.get_ref() == "pbs-default" {
                return Err(self.at(
                    &s.partition,
                    "pbs.sched.partition",
                    "Default partition name is not allowed".to_owned(),
                ));
            }
            if raw.pbs.sched[..i]
                .iter()
                .any(|o| o.partition.get_ref() == s.partition.get_ref())
            {
                return Err(self.at(
                    &s.partition,
                    "pbs.sched.partition",
                    "Partition is already associated with other scheduler".to_owned(),
                ));
            }
            let discipline = if s.strict_ordering {
                let depth = s.backfill_depth.as_ref().map_or(1, |d| *d.get_ref());
                Discipline::EASY.with_backfill_depth(depth).map_err(|e| {
                    let span = s
                        .backfill_depth
                        .as_ref()
                        .map_or(s.name.span(), Spanned::span);
                    self.error(span, Some("pbs.sched.backfill_depth"), e)
                })?
            } else {
                Discipline::Greedy
            };
            // Each scheduler has a sched_config of its own: PBS's default unless it says.
            let order = self.node_order_of(
                s.node_sort_key.as_ref(),
                "pbs.sched.node_sort_key",
                &nodes.cluster,
                &nodes.vnode_priority,
                run,
            )?;
            partitions.push(crate::SchedPartition {
                scheduler: s.name.get_ref().clone(),
                partition: s.partition.get_ref().clone(),
                vnodes: Vec::new(),
                queues: Vec::new(),
                discipline,
                do_not_span: s.do_not_span_psets,
                only_explicit: s.only_explicit_psets,
                node_order: order.fixed,
                node_sort: order.by_free,
                order: JobOrder {
                    keys: self.job_sort_keys(
                        &s.job_sort_key,
                        "pbs.sched.job_sort_key",
                        raw,
                        nodes.cluster.resources(),
                    )?,
                    ..server_order.clone()
                },
            });
        }
        for (v, p) in nodes.vnode_partition.iter().enumerate() {
            if let Some(p) = p {
                partitions[*p].vnodes.push(VnodeId::from_index(v));
            }
        }
        for (q, queue) in raw.pbs.queue.iter().enumerate() {
            if let Some(p) = &queue.partition {
                let s = self.sched_serving(raw, p, "pbs.queue.partition")?;
                partitions[s].queues.push(q as u32);
            }
        }
        Ok(partitions)
    }

    /// A generated cluster's counts must add up to `nodes`, and racks and switches hold at
    /// least one node.
    fn check_generated(&self, c: &crate::schema::ClusterToml) -> Result<(), ScenarioError> {
        for (v, key) in [
            (&c.racks_of, "cluster.racks_of"),
            (&c.switches_of, "cluster.switches_of"),
        ] {
            if let Some(v) = v
                && *v.get_ref() == 0
            {
                return Err(self.at(v, key, "expected at least 1 node".into()));
            }
        }
        let total: u64 = c
            .generation
            .iter()
            .map(|g| g.count.as_ref().map_or(0, |n| u64::from(*n.get_ref())))
            .sum();
        if let Some(nodes) = &c.nodes
            && u64::from(*nodes.get_ref()) != total
        {
            return Err(self.at(
                nodes,
                "cluster.nodes",
                format!(
                    "the generations' counts add up to {total}, not {}",
                    nodes.get_ref()
                ),
            ));
        }
        Ok(())
    }

    /// The names of an entry's vnodes; `table` is `class`, `vnode` or `cluster.generation`;
    /// `defined` vnodes come before it. Refused, before any is made, past
    /// [`placesim_core::MAX_VNODES`].
    fn vnode_names(
        &self,
        node: &NodeToml,
        table: &str,
        defined: usize,
    ) -> Result<Vec<String>, ScenarioError> {
        let name = node.name.get_ref();
        if table == "vnode" {
            for (key, present) in [
                ("count", node.count.is_some()),
                ("names", node.names.is_some()),
                ("vnodes_per_host", node.vnodes_per_host.is_some()),
            ] {
                if present {
                    return Err(self.at(
                        &node.name,
                        &format!("vnode.{key}"),
                        format!("`{key}` belongs to a [[class]], not a single [[vnode]]"),
                    ));
                }
            }
            return Ok(vec![name.clone()]);
        }
        if node.host.is_some() {
            return Err(self.at(
                &node.name,
                &format!("{table}.host"),
                "`host` belongs to a single [[vnode]]; a class uses vnodes_per_host".into(),
            ));
        }
        let Some(count) = &node.count else {
            return Err(self.at(
                &node.name,
                &format!("{table}.count"),
                "a class needs `count`, the number of its vnodes".into(),
            ));
        };
        let n = *count.get_ref() as usize;
        if defined.saturating_add(n) > MAX_VNODES {
            return Err(self.at(
                count,
                &format!("{table}.count"),
                ClusterError::TooManyVnodes {
                    requested: defined.saturating_add(n) as u64,
                }
                .to_string(),
            ));
        }
        match &node.names {
            Some(list) if list.get_ref().len() != n => Err(self.at(
                list,
                &format!("{table}.names"),
                format!(
                    "expected {n} names (the class count), found {}",
                    list.get_ref().len()
                ),
            )),
            Some(list) => Ok(list.get_ref().clone()),
            None => Ok((1..=n).map(|i| format!("{name}{i}")).collect()),
        }
    }

    /// The consumable capacities and non-consumable properties of a class or vnode.
    fn node_values(
        &self,
        node: &NodeToml,
        defs: &ResourceDefs,
        table: &str,
    ) -> Result<NodeValues, ScenarioError> {
        let mut capacity = vec![0u64; defs.n_consumables()];
        capacity[ConsumableIdx::NCPUS.index()] = u64::from(node.ncpus);
        capacity[ConsumableIdx::NGPUS.index()] = u64::from(node.ngpus);
        if let Some(mem) = &node.mem {
            let bytes = placesim_request::parse_size(mem.get_ref()).ok_or_else(|| {
                self.at(
                    mem,
                    &format!("{table}.mem"),
                    format!(
                        "malformed size `{}`: expected digits followed by b, kb, mb, gb or tb",
                        mem.get_ref()
                    ),
                )
            })?;
            capacity[ConsumableIdx::MEM.index()] = bytes.div_ceil(1024);
        }
        let mut attrs = Vec::new();
        let mut indirect = Vec::new();
        for (name, value) in &node.resources {
            let key = format!("{table}.resources.{name}");
            let id = defs.lookup(name).ok_or_else(|| {
                self.at(
                    value,
                    &key,
                    format!("unknown resource `{name}`: define it under [[resource]]"),
                )
            })?;
            if matches!(name.as_str(), "ncpus" | "mem" | "ngpus" | "host" | "vnode") {
                return Err(self.at(
                    value,
                    &key,
                    format!("`{name}` is set by its own key, not under resources"),
                ));
            }
            // PBS's indirect resource: the value lives on another vnode (resolved once every
            // vnode is known).
            if let Some(target) = value.get_ref().as_str().and_then(|s| s.strip_prefix('@')) {
                indirect.push((id, target.to_owned(), value.span()));
                continue;
            }
            let def = defs.def(id);
            let bad = |expected: &str| {
                self.at(
                    value,
                    &key,
                    format!(
                        "resource `{name}` is of type {}: expected {expected}, found {}",
                        def.kind,
                        value.get_ref().type_str()
                    ),
                )
            };
            let v = value.get_ref();
            let attr = match (def.kind, v) {
                (ResourceKind::String, toml::Value::String(s)) => AttrValue::Str(s.clone()),
                (ResourceKind::StringArray, toml::Value::String(s)) => {
                    AttrValue::StrArray(vec![s.clone()])
                }
                (ResourceKind::StringArray, toml::Value::Array(items)) => AttrValue::StrArray(
                    items
                        .iter()
                        .map(|x| {
                            x.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| bad("an array of strings"))
                        })
                        .collect::<Result<_, _>>()?,
                ),
                (ResourceKind::Boolean, toml::Value::Boolean(x)) => AttrValue::Bool(*x),
                (ResourceKind::Long, toml::Value::Integer(x)) => AttrValue::Long(*x),
                (ResourceKind::Float, toml::Value::Float(x)) => AttrValue::Float(*x),
                (ResourceKind::Float, toml::Value::Integer(x)) => AttrValue::Float(*x as f64),
                (ResourceKind::Size, toml::Value::String(s)) => AttrValue::SizeKib(
                    placesim_request::parse_size(s)
                        .ok_or_else(|| bad("a size such as \"256gb\""))?
                        .div_ceil(1024),
                ),
                (ResourceKind::String, _) => return Err(bad("a string")),
                (ResourceKind::StringArray, _) => {
                    return Err(bad("a string or an array of strings"));
                }
                (ResourceKind::Boolean, _) => return Err(bad("true or false")),
                (ResourceKind::Long, _) => return Err(bad("an integer")),
                (ResourceKind::Float, _) => return Err(bad("a number")),
                (ResourceKind::Size, _) => return Err(bad("a size such as \"256gb\"")),
            };
            match defs.consumable_idx(id) {
                Some(slot) => {
                    capacity[slot.index()] = match attr {
                        AttrValue::Long(x) if x >= 0 => x as u64,
                        AttrValue::SizeKib(k) => k,
                        AttrValue::Float(x) if x >= 0.0 => (x * 1000.0).round() as u64,
                        _ => return Err(bad("an amount of at least 0")),
                    }
                }
                None => attrs.push((id, attr)),
            }
        }
        Ok((capacity, attrs, indirect))
    }

    /// Resolves the indirect resources (`resources_available.R = @target`,
    /// reservations-and-partitions.md §7) once every vnode is added: a consumable becomes one
    /// pool shared with the target ([`ClusterBuilder::share`]); a non-consumable takes the
    /// target's value, so matching and placement-set keys see it. Refused as PBS's server
    /// refuses it, with its words: an unknown target, one without the resource, a reference
    /// of two levels.
    fn resolve_indirect(
        &self,
        b: &mut ClusterBuilder,
        pending: &[(VnodeId, ResourceId, String, Range<usize>, String)],
    ) -> Result<(), ScenarioError> {
        if pending.is_empty() {
            return Ok(());
        }
        let defs = b.resources().clone();
        let ids = b.vnode_ids_by_name();
        let mut resolved = Vec::with_capacity(pending.len());
        for (v, id, target, span, key) in pending {
            let t = ids.get(target.as_str()).copied().ok_or_else(|| {
                self.error(
                    span.clone(),
                    Some(key),
                    format!("`@{target}`: Unknown node `{target}`"),
                )
            })?;
            resolved.push((*v, *id, t));
        }
        let pointing: HashSet<(ResourceId, VnodeId)> =
            resolved.iter().map(|&(v, id, _)| (id, v)).collect();
        let targets: HashSet<(ResourceId, VnodeId)> =
            resolved.iter().map(|&(_, id, t)| (id, t)).collect();
        for (&(v, id, t), (_, _, target, span, key)) in resolved.iter().zip(pending) {
            let refuse =
                |why: String| self.error(span.clone(), Some(key), format!("`@{target}`: {why}"));
            let name = &defs.def(id).name;
            if t == v || pointing.contains(&(id, t)) || targets.contains(&(id, v)) {
                return Err(refuse(format!(
                    "invalid multi-level indirect reference for resource {name}"
                )));
            }
            match defs.consumable_idx(id) {
                Some(c) => b.share(v, c, t).map_err(|e| refuse(e.to_string()))?,
                None => b.copy_attr(v, id, t).map_err(|e| refuse(e.to_string()))?,
            }
        }
        Ok(())
    }

    /// Resolves node_group_key entries: defined, and string or string_array.
    fn keys(
        &self,
        keys: &[Spanned<String>],
        defs: &ResourceDefs,
        key: &str,
    ) -> Result<Vec<ResourceId>, ScenarioError> {
        keys.iter()
            .map(|k| node_group_key(defs, k.get_ref()).map_err(|e| self.at(k, key, e)))
            .collect()
    }

    /// The direction word of a PBS sort-key line (`job_sort_key`, `node_sort_key`): `HIGH`
    /// (descending, true) or `LOW`, in any case.
    fn sort_direction(
        &self,
        line: &Spanned<String>,
        key: &str,
        direction: &str,
    ) -> Result<bool, ScenarioError> {
        match direction.to_ascii_uppercase().as_str() {
            "HIGH" => Ok(true),
            "LOW" => Ok(false),
            other => Err(self.at(
                line,
                key,
                format!(
                    "`{}`: unknown direction `{other}`: expected HIGH or LOW",
                    line.get_ref()
                ),
            )),
        }
    }

    /// PBS's `node_sort_key`: the order first fit tries vnodes in, by `sort_priority` (the
    /// vnodes' `priority`) and resource amounts (`total`, or `unused` and `assigned` now),
    /// each HIGH or LOW, a stable sort of cluster order. PBS's default is `sort_priority
    /// HIGH`, which changes nothing until a vnode has a priority. An order of totals and
    /// priorities is made once (`None` when it is cluster order); one that reads what is free
    /// or taken is made at each placement, under first-fit placement only. Not under Moab's
    /// placement.
    fn node_order(
        &self,
        raw: &ScenarioToml,
        cluster: &placesim_core::Cluster,
        priority: &[i64],
        run: &RunSettings,
    ) -> Result<NodeOrder, ScenarioError> {
        self.node_order_of(
            raw.pbs.node_sort_key.as_ref(),
            "pbs.node_sort_key",
            cluster,
            priority,
            run,
        )
    }

    /// The order `node_sort_key` `lines` give (under `key`), or PBS's default,
    /// `sort_priority HIGH`.
    fn node_order_of(
        &self,
        lines: Option<&Spanned<Vec<Spanned<String>>>>,
        key: &str,
        cluster: &placesim_core::Cluster,
        priority: &[i64],
        run: &RunSettings,
    ) -> Result<NodeOrder, ScenarioError> {
        if let Some(lines) = lines
            && run.placement == PlacementKind::Moab
        {
            return Err(self.at(
                lines,
                key,
                "node_sort_key is PBS's: it goes with placement first-fit or pbs, not moab"
                    .to_owned(),
            ));
        }
        let defs = cluster.resources();
        let default = [Spanned::new(0..0, "sort_priority HIGH".to_owned())];
        let lines = lines.map_or(&default[..], |l| &l.get_ref()[..]);
        let mut sort = NodeSort {
            lines: Vec::new(),
            priority: Arc::from(priority),
        };
        for line in lines {
            let text = line.get_ref();
            let words: Vec<&str> = text.split_whitespace().collect();
            let (name, direction, amount) = match words[..] {
                [n, d] => (n, d, "total"),
                [n, d, a] => (n, d, a),
                _ => {
                    return Err(self.at(
                        line,
                        key,
                        format!(
                            "`{text}`: expected `<sort_priority|resource> HIGH|LOW \
                             [total|unused|assigned]`"
                        ),
                    ));
                }
            };
            let high_first = self.sort_direction(line, key, direction)?;
            let by = match name {
                "sort_priority" => NodeSortBy::Priority,
                resource => match defs.lookup(resource).and_then(|id| defs.consumable_idx(id)) {
                    Some(c) => match amount {
                        "total" => NodeSortBy::Total(c),
                        "unused" => NodeSortBy::Unused(c),
                        "assigned" => NodeSortBy::Assigned(c),
                        other => {
                            return Err(self.at(
                                line,
                                key,
                                format!(
                                    "`{text}`: unknown amount `{other}`: expected total, \
                                     unused or assigned"
                                ),
                            ));
                        }
                    },
                    None => {
                        return Err(self.at(
                            line,
                            key,
                            format!(
                                "`{text}`: `{resource}` is not sort_priority or a consumable \
                                 resource"
                            ),
                        ));
                    }
                },
            };
            sort.lines.push(NodeSortLine { by, high_first });
        }
        if sort.is_dynamic() {
            return Ok(NodeOrder {
                fixed: None,
                by_free: Some(Arc::new(sort)),
            });
        }
        // By priority alone over vnodes of one priority (the default, where none sets it),
        // every vnode ties and keeps its place: the cluster's order, found without making a
        // state of the cluster to sort them in.
        let by_priority_alone = (sort.lines.iter()).all(|l| matches!(l.by, NodeSortBy::Priority));
        let one_priority =
            priority.len() == cluster.n_vnodes() && priority.windows(2).all(|w| w[0] == w[1]);
        if by_priority_alone && one_priority {
            return Ok(NodeOrder {
                fixed: None,
                by_free: None,
            });
        }
        let order = sort.order(&placesim_core::ClusterState::new(cluster.clone()));
        let is_cluster_order = order.iter().enumerate().all(|(i, v)| v.index() == i);
        Ok(NodeOrder {
            fixed: (!is_cluster_order).then(|| Arc::from(order)),
            by_free: None,
        })
    }

    /// `job_sort_key` lines (under `key`): each `<resource> HIGH|LOW`, or PBS's other keys.
    fn job_sort_keys(
        &self,
        lines: &[Spanned<String>],
        key: &str,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
    ) -> Result<Vec<SortLine>, ScenarioError> {
        lines
            .iter()
            .map(|line| {
                let text = line.get_ref();
                let mut words = text.split_whitespace();
                let (Some(name), Some(direction), None) = (words.next(), words.next(), words.next())
                else {
                    return Err(self.at(line, key, format!("`{text}`: expected `<resource> HIGH` or `<resource> LOW`")));
                };
                let high_first = self.sort_direction(line, key, direction)?;
                let sort_key = match name {
                    "walltime" => SortKey::Walltime,
                    // `sort_priority` is PBS's old name for it.
                    "job_priority" | "sort_priority" => SortKey::JobPriority,
                    "fair_share_perc" if raw.pbs.fair_share => {
                        return Err(self.at(line, key, format!("`{text}`: not with fair_share = true, which already orders by the tree (PBS advises against both)")));
                    }
                    "fair_share_perc" => SortKey::FairsharePerc,
                    "preempt_priority" => {
                        return Err(self.at(line, key, format!("`{text}`: {name} is not modelled")));
                    }
                    resource => {
                        let consumable = defs.lookup(resource).and_then(|id| defs.consumable_idx(id));
                        match consumable {
                            Some(c) => SortKey::Resource(c),
                            None => {
                                return Err(self.at(line, key, format!("`{text}`: `{resource}` is not a consumable resource, walltime or a PBS sort key")));
                            }
                        }
                    }
                };
                Ok(SortLine { key: sort_key, high_first })
            })
            .collect()
    }

    /// PBS's job order: `[pbs] job_sort_key`, `by_queue` and `round_robin`, and the queues'
    /// priorities. A key PBS has and placesim does not read (per-job priorities, fairshare)
    /// is refused at the key, with a message.
    fn job_order(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
    ) -> Result<JobOrder, ScenarioError> {
        let keys = self.job_sort_keys(&raw.pbs.job_sort_key, "pbs.job_sort_key", raw, defs)?;
        let formula = raw
            .pbs
            .job_sort_formula
            .as_ref()
            .map(|text| {
                let term = |name: &str| formula_term(defs, name);
                Formula::parse(text.get_ref(), &term)
                    .map(Arc::new)
                    .map_err(|e| {
                        self.at(
                            text,
                            "pbs.job_sort_formula",
                            format!("`{}`: {e}", text.get_ref()),
                        )
                    })
            })
            .transpose()?;
        let threshold = match &raw.pbs.job_sort_formula_threshold {
            Some(t) if t.get_ref().is_nan() => {
                return Err(self.at(
                    t,
                    "pbs.job_sort_formula_threshold",
                    "expected a number, not nan".to_owned(),
                ));
            }
            Some(t) if formula.is_none() => {
                return Err(self.at(
                    t,
                    "pbs.job_sort_formula_threshold",
                    "a threshold goes with a job_sort_formula".to_owned(),
                ));
            }
            t => t.as_ref().map(|t| *t.get_ref()),
        };
        let reads_tree = formula.as_ref().is_some_and(|f| f.uses_fairshare())
            || keys.iter().any(|l| l.key == SortKey::FairsharePerc);
        let fairshare = self.fairshare(raw, defs, reads_tree)?.map(Arc::new);
        Ok(JobOrder {
            keys,
            by_queue: raw.pbs.by_queue.unwrap_or(true),
            round_robin: raw.pbs.round_robin,
            queue_priority: raw.pbs.queue.iter().map(|q| q.priority).collect(),
            formula,
            threshold,
            fairshare,
            by_fairshare: raw.pbs.fair_share,
            moab_fairshare: None,
            moab_credentials: None,
            // Set with the limits, once the workload knows which jobs count against which.
            ineligible_limits: None,
        })
    }

    /// PBS's fairshare settings (queue-disciplines.md §2.5), when `fair_share` is on or the
    /// formula reads the tree (`for_formula`); the other fairshare keys without either are
    /// refused, as they would do nothing.
    fn fairshare(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
        for_formula: bool,
    ) -> Result<Option<FairshareSettings>, ScenarioError> {
        let pbs = &raw.pbs;
        if !pbs.fair_share && !for_formula {
            let stray = [
                pbs.resource_group
                    .as_ref()
                    .map(|s| (s.span(), "pbs.resource_group")),
                pbs.fairshare_entity
                    .as_ref()
                    .map(|s| (s.span(), "pbs.fairshare_entity")),
                pbs.fairshare_usage_res
                    .as_ref()
                    .map(|s| (s.span(), "pbs.fairshare_usage_res")),
                pbs.fairshare_decay_time
                    .as_ref()
                    .map(|s| (s.span(), "pbs.fairshare_decay_time")),
                pbs.fairshare_decay_factor
                    .as_ref()
                    .map(|s| (s.span(), "pbs.fairshare_decay_factor")),
            ];
            if let Some((span, key)) = stray.into_iter().flatten().next() {
                return Err(self.error(
                    span,
                    Some(key),
                    "a fairshare setting without `fair_share = true`, a job_sort_formula \
                     that reads the tree or a fair_share_perc sort key does nothing"
                        .to_owned(),
                ));
            }
            return Ok(None);
        }
        if pbs.fairshare_enforce_no_shares {
            let key = "fairshare_enforce_no_shares";
            let at = self.text.find(key).unwrap_or(0);
            return Err(self.error(
                at..at + key.len(),
                Some("pbs.fairshare_enforce_no_shares"),
                "not modelled: jobs of entities with no share run as PBS runs them without it"
                    .to_owned(),
            ));
        }
        let unknown_shares = pbs.unknown_shares.unwrap_or(0);
        let tree = match &pbs.resource_group {
            None => FairshareTree::parse("", unknown_shares)
                .map_err(|e| self.error(0..0, Some("pbs.resource_group"), e.message))?,
            Some(file) => {
                let dir = self.path.parent().unwrap_or(Path::new("."));
                let path = dir.join(file.get_ref());
                let text = placesim_workload::read_text(&path).map_err(|e| match e {
                    placesim_workload::TextError::NotUtf8 {
                        path,
                        line,
                        column,
                        byte,
                    } => ScenarioError::At {
                        path,
                        line,
                        column,
                        key: "pbs.resource_group".into(),
                        message: format!("expected UTF-8 text, found the byte 0x{byte:02x}"),
                    },
                    placesim_workload::TextError::Io { source, .. } => self.at(
                        file,
                        "pbs.resource_group",
                        format!("cannot read {}: {source}", path.display()),
                    ),
                })?;
                FairshareTree::parse(&text, unknown_shares).map_err(|e| ScenarioError::At {
                    path: path.clone(),
                    line: e.line,
                    column: 1,
                    key: "pbs.resource_group".into(),
                    message: e.message,
                })?
            }
        };
        let entity = self
            .choice(
                pbs.fairshare_entity.as_ref(),
                "pbs.fairshare_entity",
                &[
                    ("euser", FairshareEntity::User),
                    ("egroup", FairshareEntity::Group),
                    ("Account_Name", FairshareEntity::Project),
                    ("queue", FairshareEntity::Queue),
                ],
            )?
            .unwrap_or(FairshareEntity::User);
        let usage = match &pbs.fairshare_usage_res {
            None => UsageRate {
                per_second_of: vec![ConsumableIdx::NCPUS],
                requested: false,
            },
            Some(text) => self.usage_rate(text, defs)?,
        };
        let decay_time_s = match &pbs.fairshare_decay_time {
            None => Some(86_400),
            Some(v) => Some(self.duration(v, "pbs.fairshare_decay_time")?),
        };
        let decay_factor = match &pbs.fairshare_decay_factor {
            None => 0.5,
            Some(f) if *f.get_ref() > 0.0 && *f.get_ref() < 1.0 => *f.get_ref(),
            Some(f) => {
                return Err(self.at(
                    f,
                    "pbs.fairshare_decay_factor",
                    format!(
                        "expected a number between 0 and 1 (exclusive), found {}",
                        f.get_ref()
                    ),
                ));
            }
        };
        Ok(Some(FairshareSettings {
            tree,
            entity,
            usage,
            decay_time_s,
            decay_factor,
            queue_names: pbs.queue.iter().map(|q| q.name.get_ref().clone()).collect(),
        }))
    }

    /// `fairshare_usage_res`: `cput` (a job's cpus busy for as long as it runs; jobs request
    /// none), `walltime`, or `walltime` multiplied by consumables (`ncpus*walltime`).
    fn usage_rate(
        &self,
        text: &Spanned<String>,
        defs: &ResourceDefs,
    ) -> Result<UsageRate, ScenarioError> {
        let key = "pbs.fairshare_usage_res";
        let value = text.get_ref().trim();
        if value == "cput" {
            return Ok(UsageRate {
                per_second_of: vec![ConsumableIdx::NCPUS],
                requested: false,
            });
        }
        let mut walltime = 0;
        let mut per_second_of = Vec::new();
        for factor in value.split('*').map(str::trim) {
            if factor == "walltime" {
                walltime += 1;
                continue;
            }
            match defs.lookup(factor).and_then(|id| defs.consumable_idx(id)) {
                Some(c) => per_second_of.push(c),
                None => {
                    return Err(self.at(
                        text,
                        key,
                        format!(
                            "`{value}`: `{factor}` is not walltime or a consumable resource; \
                             expected cput, walltime, or walltime times consumables \
                             (ncpus*walltime)"
                        ),
                    ));
                }
            }
        }
        if walltime != 1 {
            return Err(self.at(
                text,
                key,
                format!(
                    "`{value}`: expected cput, walltime, or walltime times consumables \
                     (ncpus*walltime), with walltime once"
                ),
            ));
        }
        Ok(UsageRate {
            per_second_of,
            requested: true,
        })
    }

    /// PBS's run limits: the server's `max_run` and `max_run_res.<resource>`, then each
    /// queue's. A resource limit is on a consumable, in its unit (sizes with b, kb, mb, gb,
    /// tb). Not beside Moab node sets, whose relaxed placements would pass them by.
    fn limits(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
        run: &RunSettings,
    ) -> Result<Vec<LimitSetting>, ScenarioError> {
        let mut settings = Vec::new();
        type Attributes<'r> = [(
            bool,
            &'r Option<Spanned<String>>,
            &'r std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
            &'static str,
        ); 2];
        let pbs = &raw.pbs;
        let server: Attributes<'_> = [
            (false, &pbs.max_run, &pbs.max_run_res, "max_run"),
            (true, &pbs.max_queued, &pbs.max_queued_res, "max_queued"),
        ];
        let scopes = std::iter::once((LimitScope::Server, server, "pbs")).chain(
            pbs.queue.iter().enumerate().map(|(q, queue)| {
                let attributes: Attributes<'_> = [
                    (false, &queue.max_run, &queue.max_run_res, "max_run"),
                    (true, &queue.max_queued, &queue.max_queued_res, "max_queued"),
                ];
                (
                    LimitScope::Queue(q as u32, queue.name.get_ref().clone()),
                    attributes,
                    "pbs.queue",
                )
            }),
        );
        for (scope, attributes, table) in scopes {
            for (at_submit, jobs, by_resource, attribute) in attributes {
                if let Some(text) = jobs {
                    let key = format!("{table}.{attribute}");
                    let amount = |s: &str| s.parse::<u64>().ok();
                    let entries = parse_limit(text.get_ref(), &amount, "a whole number of jobs")
                        .map_err(|e| self.in_value(text, &key, e))?;
                    settings.push(LimitSetting {
                        at_submit,
                        scope: scope.clone(),
                        counted: Counted::Jobs,
                        entries,
                    });
                }
                for (resource, text) in by_resource {
                    let key = format!("{table}.{attribute}_res.{}", resource.get_ref());
                    let consumable = defs
                        .lookup(resource.get_ref())
                        .and_then(|id| defs.consumable_idx(id).map(|c| (id, c)));
                    let Some((id, c)) = consumable else {
                        return Err(self.at(
                            resource,
                            &key,
                            format!(
                                "`{}` is not a consumable resource: a limit counts what jobs \
                                 request",
                                resource.get_ref()
                            ),
                        ));
                    };
                    let is_size = defs.def(id).kind == ResourceKind::Size;
                    let amount = |s: &str| {
                        if is_size {
                            // Held in KiB, as every size is.
                            placesim_request::parse_size(s).map(|bytes| bytes.div_ceil(1024))
                        } else {
                            s.parse::<u64>().ok()
                        }
                    };
                    let expected = if is_size {
                        "a size such as 64gb"
                    } else {
                        "a whole number"
                    };
                    let entries = parse_limit(text.get_ref(), &amount, expected)
                        .map_err(|e| self.in_value(text, &key, e))?;
                    settings.push(LimitSetting {
                        at_submit,
                        scope: scope.clone(),
                        counted: Counted::Resource(c, resource.get_ref().clone()),
                        entries,
                    });
                }
            }
        }
        if !settings.is_empty() && run.placement == PlacementKind::Moab {
            let first =
                raw.pbs
                    .max_run
                    .as_ref()
                    .or_else(|| raw.pbs.max_run_res.values().next())
                    .or_else(|| {
                        raw.pbs.queue.iter().find_map(|q| {
                            q.max_run.as_ref().or_else(|| q.max_run_res.values().next())
                        })
                    });
            if let Some(first) = first {
                return Err(self.at(
                    first,
                    "pbs.max_run",
                    "PBS run limits do not go with run.placement = \"moab\" (Moab's \
                     throttling limits are not modelled)"
                        .to_owned(),
                ));
            }
        }
        Ok(settings)
    }

    /// An error at `column` (from 1) of a string value's text: the value's span starts at its
    /// opening quote.
    fn in_value(&self, value: &Spanned<String>, key: &str, e: LimitError) -> ScenarioError {
        let start = value.span().start
            + 1
            + value
                .get_ref()
                .chars()
                .take(e.column - 1)
                .map(char::len_utf8)
                .sum::<usize>();
        self.error(start..start + 1, Some(key), e.message)
    }

    fn choice<T: Copy>(
        &self,
        value: Option<&Spanned<String>>,
        key: &str,
        options: &[(&str, T)],
    ) -> Result<Option<T>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        options
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(v.get_ref()))
            .map(|(_, t)| Some(*t))
            .ok_or_else(|| {
                let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
                self.at(
                    v,
                    key,
                    format!(
                        "unknown value `{}`: expected one of {}",
                        v.get_ref(),
                        names.join(", ")
                    ),
                )
            })
    }

    /// The entry of a policy-crate list (disciplines, placements) that `value` names.
    fn named<T: std::str::FromStr<Err = placesim_core::UnknownName>>(
        &self,
        value: Option<&Spanned<String>>,
        key: &str,
    ) -> Result<Option<T>, ScenarioError> {
        let Some(v) = value else { return Ok(None) };
        v.get_ref()
            .parse()
            .map(Some)
            .map_err(|e: placesim_core::UnknownName| {
                self.at(
                    v,
                    key,
                    format!("unknown value `{}`: expected one of {}", e.name, e.expected),
                )
            })
    }

    /// The discipline PBS's `strict_ordering` and `backfill_depth` name, if either is given.
    fn pbs_discipline(&self, raw: &ScenarioToml) -> Option<Named> {
        let (strict, depth) = (&raw.pbs.strict_ordering, &raw.pbs.backfill_depth);
        let settings = "[pbs] strict_ordering / backfill_depth";
        // Without strict ordering PBS starts every job that fits and reserves nothing:
        // backfill_depth then has no effect, as in PBS.
        if let Some(s) = strict.as_ref().filter(|s| !*s.get_ref()) {
            return Some(Named {
                discipline: Discipline::Greedy,
                span: s.span(),
                settings,
                value: "strict_ordering = false".to_owned(),
            });
        }
        match (strict, depth) {
            (_, Some(d)) => Some(Named {
                // A depth is always one of easy's, or 0 for strict order.
                discipline: Discipline::EASY
                    .with_backfill_depth(*d.get_ref())
                    .unwrap_or(Discipline::EASY),
                span: d.span(),
                settings,
                value: format!("backfill_depth = {}", d.get_ref()),
            }),
            // PBS's default backfill_depth is 1.
            (Some(s), None) => Some(Named {
                discipline: Discipline::EASY,
                span: s.span(),
                settings,
                value: "strict_ordering = true".to_owned(),
            }),
            (None, None) => None,
        }
    }

    /// The discipline Moab's `reservation_depth` and `reservation_policy` name, if either is
    /// given: CURRENTHIGHEST (the default) with depth N is backfilling N deep; HIGHEST also
    /// keeps a job's reservation until it runs; NEVER, or a depth of 0, reserves nothing,
    /// which is greedy (Moab's backfill pass then starts whatever fits, though in backfill
    /// window order rather than queue order).
    fn moab_discipline(&self, raw: &ScenarioToml) -> Result<Option<Named>, ScenarioError> {
        let (depth, policy) = (&raw.moab.reservation_depth, &raw.moab.reservation_policy);
        let kept = self.choice(
            policy.as_ref(),
            "moab.reservation_policy",
            &[
                ("CURRENTHIGHEST", Some(false)),
                ("HIGHEST", Some(true)),
                ("NEVER", None),
            ],
        )?;
        let depth_value = depth.as_ref().map_or(1, |d| *d.get_ref());
        let Some(span) = depth
            .as_ref()
            .map(Spanned::span)
            .or_else(|| policy.as_ref().map(Spanned::span))
        else {
            return Ok(None);
        };
        let discipline = match kept {
            Some(None) => Discipline::Greedy,
            _ if depth_value == 0 => Discipline::Greedy,
            kept => Discipline::Easy {
                depth: depth_value,
                kept: kept.flatten().unwrap_or(false),
            },
        };
        Ok(Some(Named {
            discipline,
            span,
            settings: "[moab] reservation_depth / reservation_policy",
            value: format!(
                "reservation_depth = {depth_value}, reservation_policy = {}",
                policy
                    .as_ref()
                    .map_or("CURRENTHIGHEST".to_owned(), |p| p.get_ref().to_uppercase())
            ),
        }))
    }

    fn run(&self, raw: &ScenarioToml) -> Result<RunSettings, ScenarioError> {
        let r = &raw.run;
        let mut named: Option<Discipline> = self.named(r.discipline.as_ref(), "run.discipline")?;
        if let Some(d) = &r.backfill_depth {
            let with_depth = named
                .unwrap_or(Discipline::EASY)
                .with_backfill_depth(*d.get_ref())
                .map_err(|e| self.at(d, "run.backfill_depth", e))?;
            named = Some(with_depth);
        }
        let from_schedulers: Vec<Named> = self
            .pbs_discipline(raw)
            .into_iter()
            .chain(self.moab_discipline(raw)?)
            .collect();
        if let [first, second] = &from_schedulers[..] {
            if first.discipline != second.discipline {
                return Err(self.error(
                    second.span.clone(),
                    None,
                    format!(
                        "{} ({}) names {}, but {} ({}) names {}",
                        second.settings,
                        second.value,
                        second.discipline.label(),
                        first.settings,
                        first.value,
                        first.discipline.label()
                    ),
                ));
            }
        }
        let from_scheduler = from_schedulers.first();
        let discipline = match (named, from_scheduler) {
            (Some(a), Some(b)) if a != b.discipline => {
                let (span, key, given) = match (&r.backfill_depth, &r.discipline) {
                    (Some(d), _) => (d.span(), "run.backfill_depth", d.get_ref().to_string()),
                    (None, Some(n)) => (n.span(), "run.discipline", n.get_ref().clone()),
                    (None, None) => (b.span.clone(), "run.discipline", a.label()),
                };
                return Err(self.error(
                    span,
                    Some(key),
                    format!(
                        "`{given}` contradicts {}, which name {} ({})",
                        b.settings,
                        b.discipline.label(),
                        b.value
                    ),
                ));
            }
            (Some(a), _) => a,
            (None, Some(b)) => b.discipline,
            (None, None) => Discipline::EASY,
        };
        if let Some(fuzzy) = &raw.pbs.opt_backfill_fuzzy
            && !fuzzy.get_ref().eq_ignore_ascii_case("off")
        {
            return Err(self.at(
                fuzzy,
                "pbs.opt_backfill_fuzzy",
                format!(
                    "opt_backfill_fuzzy `{}` is not modelled: top-job start times are exact, \
                     as PBS computes them with `off`",
                    fuzzy.get_ref()
                ),
            ));
        }
        // A queue's depth is PBS's: it counts top jobs under strict_ordering (and is ignored
        // without it, as the server's is).
        if let Some(d) = raw.pbs.queue.iter().find_map(|q| q.backfill_depth.as_ref())
            && matches!(
                discipline,
                Discipline::Conservative | Discipline::Easy { kept: true, .. }
            )
        {
            return Err(self.at(
                d,
                "pbs.queue.backfill_depth",
                format!(
                    "a queue's backfill_depth goes with PBS's strict_ordering (discipline easy \
                     or fcfs), not {}",
                    discipline.label()
                ),
            ));
        }
        Ok(RunSettings {
            discipline,
            placement: self
                .named(r.placement.as_ref(), "run.placement")?
                .unwrap_or(PlacementKind::FirstFit),
            walltime: self
                .choice(
                    r.walltime.as_ref(),
                    "run.walltime",
                    &[
                        ("kill", WalltimePolicy::Kill),
                        ("overrun", WalltimePolicy::Overrun),
                    ],
                )?
                .unwrap_or(WalltimePolicy::Kill),
            cycles: self.cycles(raw)?,
            seed: r.seed,
        })
    }

    /// `[run] cycles`: event-exact (the default), PBS's (every submit and end, and every
    /// `[pbs] scheduler_iteration`, 600 s by default) or Moab's (every `[moab]
    /// rmpoll_interval`, 60 s by default, and only then).
    fn cycles(&self, raw: &ScenarioToml) -> Result<Cycles, ScenarioError> {
        #[derive(Clone, Copy)]
        enum Kind {
            Exact,
            Pbs,
            Moab,
        }
        let kind = self
            .choice(
                raw.run.cycles.as_ref(),
                "run.cycles",
                &[
                    ("event-exact", Kind::Exact),
                    ("pbs", Kind::Pbs),
                    ("moab", Kind::Moab),
                ],
            )?
            .unwrap_or(Kind::Exact);
        let every = |value: &Option<Spanned<toml::Value>>, key: &str, default: u64| {
            let seconds = match value {
                Some(v) => self.duration(v, key)?,
                None => default,
            };
            match value {
                Some(v) if seconds == 0 => {
                    Err(self.at(v, key, "expected a period of at least 1 second".to_owned()))
                }
                _ => Ok(SimDuration(seconds)),
            }
        };
        let pbs = every(&raw.pbs.scheduler_iteration, "pbs.scheduler_iteration", 600)?;
        let moab = every(&raw.moab.rmpoll_interval, "moab.rmpoll_interval", 60)?;
        Ok(match kind {
            Kind::Exact => Cycles::EventExact,
            Kind::Pbs => Cycles::PbsIteration(pbs),
            Kind::Moab => Cycles::MoabPoll(moab),
        })
    }

    fn moab(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
        mem_per_ncpu: Option<(ConsumableIdx, f64)>,
        reservation_hosts: &[(String, Vec<VnodeId>)],
    ) -> Result<MoabSettings, ScenarioError> {
        let m = &raw.moab;
        let string_resource = |given: &Option<Spanned<String>>,
                               key: &str,
                               default: &str|
         -> Result<Option<ResourceId>, ScenarioError> {
            match given {
                Some(name) => Ok(Some(self.keys(std::slice::from_ref(name), defs, key)?[0])),
                None => Ok(defs
                    .lookup(default)
                    .filter(|&id| defs.def(id).kind.is_stringlike())),
            }
        };
        let feature_resource =
            string_resource(&m.feature_resource, "moab.feature_resource", "features")?;
        let class_resource = string_resource(&m.class_resource, "moab.class_resource", "classes")?;
        let delay = match &m.nodeset_delay {
            None => 0,
            Some(v) => match v.get_ref() {
                toml::Value::Integer(s) if *s >= 0 => *s as u64,
                toml::Value::String(s) => placesim_request::parse_duration(s).ok_or_else(|| {
                    self.at(
                        v,
                        "moab.nodeset_delay",
                        format!("expected a duration [[[DD:]HH:]MM:]SS or seconds, found `{s}`"),
                    )
                })?,
                other => {
                    return Err(self.at(
                        v,
                        "moab.nodeset_delay",
                        format!(
                            "expected a duration [[[DD:]HH:]MM:]SS or seconds, found {}",
                            other.type_str()
                        ),
                    ));
                }
            },
        };
        let classes = m
            .class
            .iter()
            .map(|c| {
                let default_nodeset = match &c.default_nodeset {
                    None => None,
                    Some(text) => {
                        let ns =
                            placesim_request::parse_nodeset(text.get_ref(), defs).map_err(|e| {
                                self.at(text, "moab.class.default_nodeset", e.to_string())
                            })?;
                        Some(placesim_request::lower_nodeset(&ns, defs))
                    }
                };
                Ok(MoabClass {
                    name: c.name.clone(),
                    default_nodeset,
                    swf_queues: c.swf_queues.clone(),
                })
            })
            .collect::<Result<_, ScenarioError>>()?;
        let attribute = self.choice(
            m.nodeset_attribute.as_ref(),
            "moab.nodeset_attribute",
            &[
                ("FEATURE", NodeSetAttribute::Feature),
                ("VARATTR", NodeSetAttribute::VarAttr),
                ("PROCSPEED", NodeSetAttribute::ProcSpeed),
                ("RESERVATION", NodeSetAttribute::Reservation),
                ("CLASS", NodeSetAttribute::Class),
            ],
        )?;
        let list_values = m
            .nodeset_list
            .iter()
            .map(|entry| match attribute {
                Some(NodeSetAttribute::VarAttr) => {
                    let text = format!("ONEOF:VARATTR:{}", entry.get_ref());
                    let parsed = placesim_request::parse_nodeset(&text, defs)
                        .map_err(|e| self.at(entry, "moab.nodeset_list", e.to_string()))?;
                    let lowered = placesim_request::lower_nodeset(&parsed, defs);
                    lowered.values.into_iter().next().ok_or_else(|| {
                        self.at(
                            entry,
                            "moab.nodeset_list",
                            format!(
                                "expected a VARATTR entry `name=value` or `name`, found `{}`",
                                entry.get_ref()
                            ),
                        )
                    })
                }
                Some(NodeSetAttribute::ProcSpeed) => placesim_request::parse_speed(entry.get_ref())
                    .map(NodeSetValue::ProcSpeed)
                    .ok_or_else(|| {
                        self.at(
                            entry,
                            "moab.nodeset_list",
                            format!(
                                "expected a PROCSPEED entry, a positive speed, found `{}`",
                                entry.get_ref()
                            ),
                        )
                    }),
                Some(NodeSetAttribute::Reservation) => {
                    let name = entry.get_ref();
                    if reservation_hosts.iter().any(|(n, _)| n == name) {
                        Ok(NodeSetValue::Reservation(name.clone()))
                    } else {
                        Err(self.at(
                            entry,
                            "moab.nodeset_list",
                            format!(
                                "unknown reservation `{name}`: expected a [[moab.reservation]] \
                                 name"
                            ),
                        ))
                    }
                }
                Some(NodeSetAttribute::Class) => Ok(NodeSetValue::Class(entry.get_ref().clone())),
                _ => Ok(NodeSetValue::Feature(entry.get_ref().clone())),
            })
            .collect::<Result<Vec<_>, ScenarioError>>()?;
        let nodesets = NodeSetSettings {
            policy: self.choice(
                m.nodeset_policy.as_ref(),
                "moab.nodeset_policy",
                &[
                    ("ONEOF", NodeSetPolicy::OneOf),
                    ("ANYOF", NodeSetPolicy::AnyOf),
                    ("FIRSTOF", NodeSetPolicy::FirstOf),
                ],
            )?,
            attribute,
            list: list_values,
            feature_resource,
            class_resource,
            reservations: reservation_hosts.to_vec(),
            // NODESETDELAY > 0 makes sets mandatory unless NODESETISOPTIONAL says otherwise.
            is_optional: match &m.nodeset_is_optional {
                // Q8: by default an explicit NODESETISOPTIONAL wins; in config order, a
                // later NODESETDELAY > 0 makes the sets mandatory again.
                Some(explicit) => {
                    let delay_after = m
                        .nodeset_delay
                        .as_ref()
                        .is_some_and(|d| d.span().start > explicit.span().start);
                    *explicit.get_ref() && !(m.isoptional_config_order && delay_after && delay > 0)
                }
                None => delay == 0,
            },
            delay: SimDuration(delay),
            priority_type: self
                .choice(
                    m.nodeset_priority_type.as_ref(),
                    "moab.nodeset_priority_type",
                    &[
                        ("FIRSTFIT", PriorityType::FirstFit),
                        ("BESTFIT", PriorityType::BestFit),
                        ("WORSTFIT", PriorityType::WorstFit),
                        ("MINLOSS", PriorityType::MinLoss),
                        ("AFFINITY", PriorityType::Affinity),
                        ("BESTRESOURCE", PriorityType::BestResource),
                    ],
                )?
                .unwrap_or(PriorityType::FirstFit),
            tolerance: m.nodeset_tolerance,
            plus: self.choice(
                m.nodeset_plus.as_ref(),
                "moab.nodeset_plus",
                &[
                    ("DELAY", NodeSetPlus::Delay),
                    ("SPANEVENLY", NodeSetPlus::SpanEvenly),
                ],
            )?,
            allow_per_job_is_optional: m.allow_per_job_nodeset_is_optional,
            options: NodeSetOptions {
                firstof_forces_firstfit: m.firstof_forces_firstfit,
                minloss: self
                    .choice(
                        m.minloss.as_ref(),
                        "moab.minloss",
                        &[
                            ("last-feasible", MinLoss::LastFeasible),
                            ("first-feasible", MinLoss::FirstFeasible),
                            ("speed", MinLoss::Speed),
                        ],
                    )?
                    .unwrap_or(MinLoss::LastFeasible),
                delay_reference: self
                    .choice(
                        m.delay_reference.as_ref(),
                        "moab.delay_reference",
                        &[
                            (
                                "earliest-unconstrained",
                                DelayReference::EarliestUnconstrained,
                            ),
                            ("now", DelayReference::Now),
                        ],
                    )?
                    .unwrap_or_default(),
                delay_mode: self
                    .choice(
                        m.delay_mode.as_ref(),
                        "moab.delay_mode",
                        &[
                            ("predictive", DelayMode::Predictive),
                            ("anchored", DelayMode::Anchored),
                        ],
                    )?
                    .unwrap_or_default(),
                job_optional_skips_sets: m.job_optional_skips_sets,
                tolerance_unbounded: m.tolerance_unbounded,
                delay_sticky: m.delay_sticky,
                mandatory_fallback: m.mandatory_fallback,
                spanevenly_list_order: m.spanevenly_list_order,
                refuse_per_job_delay: m.refuse_per_job_delay,
            },
        };
        Ok(MoabSettings {
            nodesets,
            list: m.nodeset_list.iter().map(|e| e.get_ref().clone()).collect(),
            classes,
            order: self.moab_order(raw, defs, mem_per_ncpu)?,
            single_job: self
                .choice(
                    m.node_access_policy.as_ref(),
                    "moab.node_access_policy",
                    &[("SHARED", false), ("SINGLEJOB", true)],
                )?
                .unwrap_or(false),
            limits: self.moab_limits(raw)?.map(std::sync::Arc::new),
        })
    }

    /// The job order of Moab's priority (queue-disciplines.md §3.2, Maui `MPriority.c`): the
    /// service component (QUEUETIME in minutes queued, XFACTOR) and the resource component
    /// (PROC, MEM in MB, WALLTIME and PS in seconds requested), each subcomponent capped,
    /// each component capped, the total clipped to [1, 1e9]; higher first, then submission.
    /// It is built as a `job_sort_formula`, whose evaluation it shares.
    fn moab_order(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
        mem_per_ncpu: Option<(ConsumableIdx, f64)>,
    ) -> Result<JobOrder, ScenarioError> {
        let Some(spanned) = &raw.moab.priority else {
            return Ok(JobOrder::default());
        };
        let p = spanned.get_ref();
        let number = |x: f64| format!("({x:?})");
        let capped = |cap: Option<f64>, expr: String| match cap {
            Some(c) if c > 0.0 => format!("min({expr}, {})", number(c)),
            _ => expr,
        };
        let weighted = |weight: f64, expr: String| format!("{} * {expr}", number(weight));
        let queuetime = capped(p.queuetimecap, "max(0, eligible_time / 60)".to_owned());
        let xfactor = capped(
            p.xfactorcap,
            format!(
                "(eligible_time + walltime) / max({}, walltime)",
                number(p.xfminwclimit.unwrap_or(120.0))
            ),
        );
        let serv = capped(
            p.servcap,
            format!(
                "({} + {})",
                weighted(p.queuetimeweight.unwrap_or(1.0), queuetime),
                weighted(p.xfactorweight.unwrap_or(0.0), xfactor)
            ),
        );
        let res = capped(
            p.rescap,
            format!(
                "({} + {} + {} + {})",
                weighted(
                    p.procweight.unwrap_or(0.0),
                    capped(p.proccap, "ncpus".to_owned())
                ),
                weighted(
                    p.memweight.unwrap_or(0.0),
                    capped(p.memcap, "(mem / 1024)".to_owned())
                ),
                weighted(
                    p.walltimeweight.unwrap_or(0.0),
                    capped(p.walltimecap, "walltime".to_owned())
                ),
                weighted(
                    p.psweight.unwrap_or(0.0),
                    capped(p.pscap, "(ncpus * walltime)".to_owned())
                ),
            ),
        );
        let fs_weights = [
            p.fsuserweight,
            p.fsgroupweight,
            p.fsaccountweight,
            p.fsclassweight,
        ]
        .map(|w| w.unwrap_or(0.0));
        let moab_fairshare = self.moab_fairshare(raw, mem_per_ncpu, &fs_weights)?;
        // A component over the four credentials: its terms `{prefix}_user`, ... weighted.
        let per_credential = |prefix: &str, weights: [f64; 4]| {
            let terms: Vec<String> = ["user", "group", "account", "class"]
                .iter()
                .zip(weights)
                .map(|(kind, w)| weighted(w, format!("{prefix}_{kind}")))
                .collect();
            format!("({})", terms.join(" + "))
        };
        let fs = capped(p.fscap, per_credential("fs", fs_weights));
        let cred_weights =
            [p.userweight, p.groupweight, p.accountweight, p.classweight].map(|w| w.unwrap_or(0.0));
        let cred = capped(p.credcap, per_credential("cred", cred_weights));
        let total = format!(
            "{} + {} + {} + {}",
            weighted(p.credweight.unwrap_or(1.0), cred),
            weighted(p.servweight.unwrap_or(1.0), serv),
            weighted(p.resweight.unwrap_or(1.0), res),
            weighted(p.fsweight.unwrap_or(1.0), fs)
        );
        let tables = [
            &p.user_priority,
            &p.group_priority,
            &p.account_priority,
            &p.class_priority,
        ];
        let moab_credentials = tables
            .iter()
            .any(|t| !t.is_empty())
            .then(|| MoabCredentials {
                priorities: tables.map(|t| t.iter().map(|(k, v)| (k.clone(), *v)).collect()),
                class_names: class_names(raw),
            });
        let clipped = if p.enablenegjobpriority {
            format!("min({total}, 1e9)")
        } else {
            format!("min(max({total}, 1), 1e9)")
        };
        // Moab's own terms, which PBS's formula does not have.
        let term = |name: &str| match name {
            "fs_user" => Ok(Term::MoabFairshare(0)),
            "fs_group" => Ok(Term::MoabFairshare(1)),
            "fs_account" => Ok(Term::MoabFairshare(2)),
            "fs_class" => Ok(Term::MoabFairshare(3)),
            "cred_user" => Ok(Term::MoabCredential(0)),
            "cred_group" => Ok(Term::MoabCredential(1)),
            "cred_account" => Ok(Term::MoabCredential(2)),
            "cred_class" => Ok(Term::MoabCredential(3)),
            other => formula_term(defs, other),
        };
        let formula = Formula::parse(&clipped, &term)
            .map_err(|e| self.at(spanned, "moab.priority", e.message))?;
        Ok(JobOrder {
            formula: Some(Arc::new(formula)),
            moab_fairshare: moab_fairshare.map(Arc::new),
            moab_credentials: moab_credentials.map(Arc::new),
            ..JobOrder::default()
        })
    }

    /// The PBS queue and Moab class `name` names (qsub -q), refused at `key` when it names
    /// neither.
    fn named_queue(
        &self,
        raw: &ScenarioToml,
        name: &Spanned<String>,
        key: &str,
    ) -> Result<crate::NamedQueue, ScenarioError> {
        crate::NamedQueue::find(
            name.get_ref(),
            raw.pbs.queue.iter().map(|q| q.name.get_ref().as_str()),
            raw.moab.class.iter().map(|c| c.name.as_str()),
        )
        .ok_or_else(|| self.at(name, key, unknown_queue(name.get_ref())))
    }

    /// The jobs running at t = 0 (`[[running]]`): each `exec_vnode` read and checked against
    /// the cluster (every vnode known, every amount a consumable's, no vnode holding more
    /// than it has, all of them together), each end after 0 and not after its estimated
    /// end, no id given twice, and no vnode held by two when `sharing` makes each exclusive.
    fn running(
        &self,
        raw: &ScenarioToml,
        cluster: &placesim_core::Cluster,
        defs: &ResourceDefs,
        sharing: placesim_request::VnodeSharing,
    ) -> Result<Vec<crate::RunningAtStart>, ScenarioError> {
        let n_cons = defs.n_consumables();
        let mut held = vec![0u64; cluster.n_vnodes() * n_cons];
        // Under vnode sharing that makes every job exclusive, each vnode's running job.
        let exclusive = sharing.effective(None).is_exclusive();
        let mut holder: Vec<Option<u64>> = vec![None; cluster.n_vnodes()];
        let mut ids = HashSet::new();
        raw.running
            .iter()
            .map(|r| {
                if !ids.insert(*r.id.get_ref()) {
                    return Err(self.at(
                        &r.id,
                        "running.id",
                        format!("job {} is given twice", r.id.get_ref()),
                    ));
                }
                let text = r.exec_vnode.get_ref();
                let parsed = placesim_request::parse_exec_vnode(text, defs).map_err(|e| {
                    self.at(
                        &r.exec_vnode,
                        "running.exec_vnode",
                        format!("`{text}`: {e}"),
                    )
                })?;
                let mut vnodes = Vec::with_capacity(parsed.len());
                for entry in parsed {
                    let v = cluster.vnode_by_name(&entry.vnode).ok_or_else(|| {
                        self.at(
                            &r.exec_vnode,
                            "running.exec_vnode",
                            format!("`{text}`: unknown vnode `{}`", entry.vnode),
                        )
                    })?;
                    if exclusive {
                        let id = *r.id.get_ref();
                        if let Some(other) = holder[v.index()].filter(|&o| o != id) {
                            return Err(self.at(
                                &r.exec_vnode,
                                "running.exec_vnode",
                                format!(
                                    "`{text}`: vnode `{}` also holds running job {other}, and \
                                     pbs.vnode_sharing makes each job exclusive",
                                    entry.vnode
                                ),
                            ));
                        }
                        holder[v.index()] = Some(id);
                    }
                    let capacity = cluster.capacity(v);
                    for (c, &amount) in entry.amounts.iter().enumerate() {
                        let slot = &mut held[v.index() * n_cons + c];
                        *slot = slot.saturating_add(amount);
                        if *slot > capacity[c] {
                            let name = &defs.def(defs.consumables()[c]).name;
                            return Err(self.at(
                                &r.exec_vnode,
                                "running.exec_vnode",
                                format!(
                                    "`{text}`: vnode `{}` has {} {name}; the jobs running at \
                                     the start would hold {}",
                                    entry.vnode, capacity[c], slot
                                ),
                            ));
                        }
                    }
                    vnodes.push((v, entry.amounts));
                }
                let end_s = self.duration(&r.end, "running.end")?;
                if end_s == 0 {
                    return Err(self.at(&r.end, "running.end", "expected a time after 0".into()));
                }
                let estimated_end_s = match &r.estimated_end {
                    None => end_s,
                    Some(e) => {
                        let s = self.duration(e, "running.estimated_end")?;
                        if s < end_s {
                            return Err(self.at(
                                e,
                                "running.estimated_end",
                                format!(
                                    "{s} s is before the job's end ({end_s} s): PBS would have \
                                     killed it at its walltime"
                                ),
                            ));
                        }
                        s
                    }
                };
                let queue = r
                    .queue
                    .as_ref()
                    .map(|name| self.named_queue(raw, name, "running.queue"))
                    .transpose()?;
                Ok(crate::RunningAtStart {
                    id: *r.id.get_ref(),
                    line: self.position(r.id.span().start).0,
                    vnodes,
                    exec_vnode: text.clone(),
                    end_s,
                    estimated_end_s,
                    user: r.user,
                    group: r.group,
                    project: r.project.as_deref().map(Arc::from),
                    queue,
                })
            })
            .collect()
    }

    /// The timeline (`[[event]]`), in order of time (entries at one time in file order): each
    /// entry one kind; a vnode taken `offline` is out of service until it is put back
    /// `online` (or for good), added to `outages`; `online` needs it offline then; a `qmgr`
    /// command changes the placement-set settings from then on.
    fn timeline(
        &self,
        raw: &ScenarioToml,
        cluster: &placesim_core::Cluster,
        outages: &mut Vec<Outage>,
        context: TimelineContext<'_>,
    ) -> Result<crate::Timeline, ScenarioError> {
        let mut psets = context.psets.clone();
        let mut timeline = crate::Timeline::default();
        let mut entries = Vec::with_capacity(raw.event.len());
        for e in &raw.event {
            entries.push((self.duration(&e.at, "event.at")?, e));
        }
        entries.sort_by_key(|(at, _)| *at);
        // Per vnode: since when it is offline; and the vnodes an entry named so far.
        let mut offline: std::collections::HashMap<VnodeId, u64> = Default::default();
        let mut named: HashSet<VnodeId> = HashSet::new();
        let vnode = |name: &Spanned<String>, key: &str| {
            cluster
                .vnode_by_name(name.get_ref())
                .ok_or_else(|| self.at(name, key, format!("unknown vnode `{}`", name.get_ref())))
        };
        for (at, e) in entries {
            let kinds = [
                e.qdel.is_some(),
                e.offline.is_some(),
                e.online.is_some(),
                e.cycle.is_some(),
                e.qmgr.is_some(),
                e.rdel.is_some(),
                e.add.is_some(),
            ];
            if kinds.iter().filter(|&&k| k).count() != 1 {
                return Err(self.at(
                    &e.at,
                    "event",
                    "expected exactly one of `qdel`, `offline`, `online`, `cycle`, `qmgr`, `rdel` \
                     and `add`"
                        .to_owned(),
                ));
            }
            for (name, key) in [(&e.offline, "event.offline"), (&e.online, "event.online")] {
                if let Some(name) = name {
                    named.insert(vnode(name, key)?);
                }
            }
            if let Some(job) = &e.qdel {
                let line = self.position(job.span().start).0;
                timeline.deletions.push((SimTime(at), *job.get_ref(), line));
            } else if let Some(name) = &e.offline {
                let v = vnode(name, "event.offline")?;
                if let Some(since) = offline.insert(v, at) {
                    return Err(self.at(
                        name,
                        "event.offline",
                        format!(
                            "vnode `{}` is already offline since {since} s",
                            name.get_ref()
                        ),
                    ));
                }
            } else if let Some(name) = &e.online {
                let v = vnode(name, "event.online")?;
                let Some(since) = offline.remove(&v) else {
                    return Err(self.at(
                        name,
                        "event.online",
                        format!("vnode `{}` is not offline at {at} s", name.get_ref()),
                    ));
                };
                if at > since {
                    outages.push(Outage {
                        vnode: v,
                        down: SimTime(since),
                        up: SimTime(at),
                    });
                }
            } else if let Some(name) = &e.add {
                // Added at `at`: defined with the others, out of service until then.
                let v = vnode(name, "event.add")?;
                if !named.insert(v) {
                    return Err(self.at(
                        name,
                        "event.add",
                        format!(
                            "vnode `{}` is in service before {at} s (an earlier entry names it): \
                             a vnode is added once, before any `offline` or `online` of it",
                            name.get_ref()
                        ),
                    ));
                }
                if at > 0 {
                    outages.push(Outage {
                        vnode: v,
                        down: SimTime(0),
                        up: SimTime(at),
                    });
                    timeline.added.push((v, SimTime(at)));
                }
            } else if let Some(cycle) = &e.cycle {
                if !*cycle.get_ref() {
                    return Err(self.at(
                        cycle,
                        "event.cycle",
                        "expected `true`: one more scheduling cycle".to_owned(),
                    ));
                }
                timeline.cycles.push(SimTime(at));
                timeline.notes.push((
                    SimTime(at),
                    placesim_core::SiteEvent::Cycle,
                    Arc::from("cycle"),
                ));
            } else if let Some(name) = &e.rdel {
                let known = raw
                    .reservation
                    .iter()
                    .map(|r| &r.name)
                    .chain(raw.moab.reservation.iter().map(|r| &r.name))
                    .any(|n| n.get_ref() == name.get_ref());
                if !known {
                    return Err(self.at(
                        name,
                        "event.rdel",
                        format!(
                            "pbs_rdel: Unknown Reservation Id: no [[reservation]] or [[moab.reservation]] is \
                             named `{}`",
                            name.get_ref()
                        ),
                    ));
                }
                timeline
                    .reservation_deletions
                    .push((SimTime(at), Arc::from(name.get_ref().as_str())));
            } else if let Some(command) = &e.qmgr {
                if context.placement != PlacementKind::Pbs {
                    return Err(self.at(
                        command,
                        "event.qmgr",
                        "a `qmgr` event changes PBS placement-set settings: it needs `placement = \"pbs\"` in [run]".to_owned(),
                    ));
                }
                self.qmgr(command, &mut psets, context.queues, cluster.resources())?;
                timeline.notes.push((
                    SimTime(at),
                    placesim_core::SiteEvent::Setting,
                    Arc::from(command.get_ref().trim()),
                ));
                match timeline.pset_changes.last_mut() {
                    Some((when, settings)) if when.0 == at => settings.clone_from(&psets),
                    _ => timeline.pset_changes.push((SimTime(at), psets.clone())),
                }
            }
        }
        let mut left: Vec<(VnodeId, u64)> = offline.into_iter().collect();
        left.sort();
        outages.extend(left.into_iter().map(|(v, since)| Outage {
            vnode: v,
            down: SimTime(since),
            up: SimTime(u64::MAX),
        }));
        Ok(timeline)
    }

    /// A timeline's `qmgr` command, applied to `psets`: `set` or `unset`, then `server`,
    /// `queue NAME` or `sched`, then the attribute, and for `set` `=` and its value. The
    /// attributes are the placement-set ones: the server's `node_group_enable` and
    /// `node_group_key`, a queue's `node_group_key`, the scheduler's `do_not_span_psets` and
    /// `only_explicit_psets`. An error names the word at fault, at its column.
    fn qmgr(
        &self,
        command: &Spanned<String>,
        psets: &mut PsetSettings,
        queues: &[QueueSettings],
        defs: &ResourceDefs,
    ) -> Result<(), ScenarioError> {
        const KEY: &str = "event.qmgr";
        let text = command.get_ref();
        // The string's first character is one past its opening quote.
        let base = command.span().start + 1;
        let mut words: Vec<(usize, &str)> = Vec::new();
        let mut start = None;
        for (i, c) in text
            .char_indices()
            .chain(std::iter::once((text.len(), ' ')))
        {
            let boundary = c.is_whitespace() || c == '=';
            match (start, boundary) {
                (Some(s), true) => {
                    words.push((s, &text[s..i]));
                    start = None;
                }
                (None, false) => start = Some(i),
                _ => {}
            }
            if c == '=' {
                words.push((i, "="));
            }
        }
        let end = (text.len(), "");
        let mut words = words.into_iter().chain(std::iter::repeat(end));
        let fail = |(at, _): (usize, &str), message: String| {
            self.error(base + at..base + at + 1, Some(KEY), message)
        };
        let verb = words.next().unwrap_or(end);
        let set = match verb.1 {
            "set" => true,
            "unset" => false,
            w => {
                return Err(fail(
                    verb,
                    format!("expected `set` or `unset`, found `{w}`"),
                ));
            }
        };
        let object = words.next().unwrap_or(end);
        enum Object {
            Server,
            Queue(usize),
            Sched,
        }
        let object = match object.1 {
            "server" => Object::Server,
            "sched" => Object::Sched,
            "queue" => {
                let name = words.next().unwrap_or(end);
                let Some(q) = queues.iter().position(|q| q.name == name.1) else {
                    return Err(fail(
                        name,
                        format!("unknown queue `{}`: define it under [[pbs.queue]]", name.1),
                    ));
                };
                Object::Queue(q)
            }
            w => {
                return Err(fail(
                    object,
                    format!("expected `server`, `queue NAME` or `sched`, found `{w}`"),
                ));
            }
        };
        let attribute = words.next().unwrap_or(end);
        let known = match object {
            Object::Server => "the server's node_group_enable and node_group_key",
            Object::Queue(_) => "a queue's node_group_key",
            Object::Sched => "the scheduler's do_not_span_psets and only_explicit_psets",
        };
        let value = if set {
            let equals = words.next().unwrap_or(end);
            if equals.1 != "=" {
                return Err(fail(
                    equals,
                    format!("expected `=` after `{}`", attribute.1),
                ));
            }
            let value = words.next().unwrap_or(end);
            if value.1.is_empty() {
                return Err(fail(value, "expected a value after `=`".to_owned()));
            }
            Some(value)
        } else {
            None
        };
        let extra = words.next().unwrap_or(end);
        if !extra.1.is_empty() {
            return Err(fail(
                extra,
                format!("unexpected `{}` after the command", extra.1),
            ));
        }
        let boolean = |value: Option<(usize, &str)>| match value {
            None => Ok(false),
            Some(v) => placesim_request::parse_bool(v.1)
                .ok_or_else(|| fail(v, format!("expected True or False, found `{}`", v.1))),
        };
        let keys = |value: Option<(usize, &str)>| -> Result<Vec<ResourceId>, ScenarioError> {
            let Some((at, list)) = value else {
                return Ok(Vec::new());
            };
            let mut keys = Vec::new();
            let mut offset = 0;
            for name in list.split(',') {
                let word = (at + offset, name);
                offset += name.len() + 1;
                keys.push(node_group_key(defs, name).map_err(|e| fail(word, e))?);
            }
            Ok(keys)
        };
        match (object, attribute.1) {
            (Object::Server, "node_group_enable") => psets.node_group_enable = boolean(value)?,
            (Object::Server, "node_group_key") => psets.server_key = keys(value)?,
            (Object::Queue(q), "node_group_key") => psets.queue_keys[q] = keys(value)?,
            (Object::Sched, "do_not_span_psets") => psets.do_not_span = boolean(value)?,
            (Object::Sched, "only_explicit_psets") => psets.only_explicit = boolean(value)?,
            (_, "") => return Err(fail(attribute, "expected an attribute".to_owned())),
            (_, name) => {
                return Err(fail(
                    attribute,
                    format!("unknown attribute `{name}`: a timeline sets {known}"),
                ));
            }
        }
        Ok(())
    }

    /// The reservations the site confirmed (`[[reservation]]`): each window read, its vnodes
    /// and amounts checked against the cluster (`nodes`), or whole hosts held exclusively
    /// (`hosts`), no name given twice; and at each reservation's start, everything held then
    /// (the reservations open then, the `[[running]]` jobs not yet ended) fits on every
    /// vnode, with no vnode shared with an exclusive holder. What placesim does not model
    /// beside reservations is refused at the first one.
    fn reservations(
        &self,
        raw: &ScenarioToml,
        cluster: &placesim_core::Cluster,
        defs: &ResourceDefs,
        settings: ReservationContext<'_>,
    ) -> Result<Reservations, ScenarioError> {
        let Some(first) = raw.reservation.first() else {
            return Ok((Vec::new(), Vec::new()));
        };
        if let Some(why) = settings.unmodelled() {
            return Err(self.at(&first.name, "reservation", why));
        }
        let n_cons = defs.n_consumables();
        let mut names = HashSet::new();
        let mut made = Vec::with_capacity(raw.reservation.len());
        let mut requested = Vec::new();
        for r in &raw.reservation {
            let name = r.name.get_ref();
            if name.is_empty() {
                return Err(self.at(&r.name, "reservation.name", "expected a name".to_owned()));
            }
            if !names.insert(name.as_str()) {
                return Err(self.at(
                    &r.name,
                    "reservation.name",
                    format!("reservation `{name}` is given twice"),
                ));
            }
            let (start, end) = self.window(
                "reservation",
                &r.name,
                &r.start,
                r.end.as_ref(),
                r.duration.as_ref(),
            )?;
            let queue = settings.queues.iter().position(|q| &q.name == name);
            if let Some(request) = &r.request {
                requested.push(self.reservation_request(r, request, start, end, defs, queue)?);
                continue;
            }
            if let Some(submit) = &r.submit {
                return Err(self.at(
                    submit,
                    "reservation.submit",
                    "a reservation given on its vnodes is confirmed from the start; `submit` \
                     goes with `request`"
                        .to_owned(),
                ));
            }
            let (mut allocation, key) =
                match (&r.nodes, &r.hosts) {
                    (Some(nodes), None) => {
                        let exclusive = r.exclusive.as_ref().is_some_and(|e| *e.get_ref());
                        let sharing = if exclusive {
                            placesim_core::Sharing::Excl
                        } else {
                            placesim_core::Sharing::Shared
                        };
                        let text = nodes.get_ref();
                        let bad = |message: String| {
                            self.at(nodes, "reservation.nodes", format!("`{text}`: {message}"))
                        };
                        let parsed = placesim_request::parse_exec_vnode(text, defs)
                            .map_err(|e| bad(e.to_string()))?;
                        let mut allocation = placesim_core::Allocation::new(sharing);
                        let mut part = vec![0u64; n_cons];
                        for entry in parsed {
                            let v = cluster
                                .vnode_by_name(&entry.vnode)
                                .ok_or_else(|| bad(format!("unknown vnode `{}`", entry.vnode)))?;
                            part.fill(0);
                            for (p, &a) in part.iter_mut().zip(&entry.amounts) {
                                *p = a;
                            }
                            allocation.add(v, &part);
                        }
                        (allocation, "reservation.nodes")
                    }
                    (None, Some(hosts)) => {
                        if r.exclusive.as_ref().is_some_and(|e| !*e.get_ref()) {
                            return Err(self.at(
                                hosts,
                                "reservation.exclusive",
                                "a reservation of whole hosts is exclusive".to_owned(),
                            ));
                        }
                        let mut allocation =
                            placesim_core::Allocation::new(placesim_core::Sharing::Excl);
                        for host in hosts.get_ref() {
                            let h = cluster.hosts().iter().position(|n| n == host).ok_or_else(
                                || {
                                    self.at(
                                        hosts,
                                        "reservation.hosts",
                                        format!("unknown host `{host}`"),
                                    )
                                },
                            )?;
                            for &v in cluster.host_vnodes(placesim_core::HostId::from_index(h)) {
                                if allocation.holds(v) {
                                    return Err(self.at(
                                        hosts,
                                        "reservation.hosts",
                                        format!("host `{host}` is given twice"),
                                    ));
                                }
                                allocation.push(v, cluster.capacity(v));
                            }
                        }
                        (allocation, "reservation.hosts")
                    }
                    (Some(nodes), Some(_)) => {
                        return Err(self.at(
                            nodes,
                            "reservation",
                            "give `nodes` or `hosts`, not both".to_owned(),
                        ));
                    }
                    (None, None) => {
                        return Err(self.at(
                            &r.name,
                            "reservation",
                            "expected `nodes` (its vnodes, as `exec_vnode` writes them) or `hosts`"
                                .to_owned(),
                        ));
                    }
                };
            allocation.label = Some(Arc::from(name.as_str()));
            if let Some(q) = queue {
                self.running_inside(r, name, q, start, &allocation, settings.running, cluster)?;
            }
            let span = match (&r.nodes, &r.hosts) {
                (Some(nodes), _) => nodes.span(),
                (_, Some(hosts)) => hosts.span(),
                _ => r.name.span(),
            };
            let starts = match &r.recurrence {
                None => vec![start],
                Some(rule) => self.occurrences(rule, start, end - start)?,
            };
            // One allocation for every occurrence of a standing reservation.
            let allocation = Arc::new(allocation);
            for occurrence in starts {
                made.push((
                    placesim_core::SiteReservation {
                        name: Arc::from(name.as_str()),
                        start: SimTime(occurrence),
                        end: SimTime(occurrence + (end - start)),
                        allocation: allocation.clone(),
                        queue: queue.map(|q| q as u32),
                        access: Default::default(),
                    },
                    span.clone(),
                    key,
                ));
            }
        }
        self.reservations_fit(&made, settings.running, cluster, defs)?;
        for (r, span, key) in &made {
            let down = settings
                .outages
                .iter()
                .find(|o| r.allocation.holds(o.vnode) && o.down < r.end && r.start < o.up);
            if let Some(o) = down {
                return Err(self.error(
                    span.clone(),
                    Some(key),
                    format!(
                        "reservation `{}` holds vnode `{}` while it is down ([{} s, {} s)): a \
                         degraded reservation is not modelled yet \
                         (reservations-and-partitions.md §1.7)",
                        r.name,
                        cluster.vnode(o.vnode).name(),
                        o.down.as_secs(),
                        o.up.as_secs()
                    ),
                ));
            }
        }
        Ok((made.into_iter().map(|(r, _, _)| r).collect(), requested))
    }

    /// A reservation's window, `[start, end)` in seconds after t = 0, from its `start` and its
    /// `end` or `duration` under `key` (`reservation`, `moab.reservation`); `name` is where
    /// a missing end is reported.
    fn window(
        &self,
        key: &str,
        name: &Spanned<String>,
        start: &Spanned<toml::Value>,
        end: Option<&Spanned<toml::Value>>,
        duration: Option<&Spanned<toml::Value>>,
    ) -> Result<(u64, u64), ScenarioError> {
        let start = self.duration(start, &format!("{key}.start"))?;
        let end = match (end, duration) {
            (Some(e), None) => {
                let end_key = format!("{key}.end");
                let end = self.duration(e, &end_key)?;
                if end <= start {
                    return Err(self.at(
                        e,
                        &end_key,
                        format!("expected a time after `start` ({start} s), found {end} s"),
                    ));
                }
                end
            }
            (None, Some(d)) => {
                let duration_key = format!("{key}.duration");
                let secs = self.duration(d, &duration_key)?;
                if secs == 0 {
                    return Err(self.at(
                        d,
                        &duration_key,
                        "expected a duration above 0".to_owned(),
                    ));
                }
                start.saturating_add(secs)
            }
            (Some(e), Some(_)) => {
                return Err(self.at(e, key, "give `end` or `duration`, not both".to_owned()));
            }
            (None, None) => {
                return Err(self.at(
                    name,
                    key,
                    "expected `end` or `duration`: when the window closes".to_owned(),
                ));
            }
        };
        Ok((start, end))
    }

    /// A reservation requested of the scheduler (`request`, and `submit` [default 0]): what
    /// it asks for, read and lowered like a job's request, submitted no later than its start;
    /// what goes only with a reservation given on its vnodes is refused.
    fn reservation_request(
        &self,
        r: &crate::schema::ReservationToml,
        request: &Spanned<String>,
        start: u64,
        end: u64,
        defs: &ResourceDefs,
        queue: Option<usize>,
    ) -> Result<placesim_core::ReservationRequest, ScenarioError> {
        let given = [
            r.nodes.as_ref().map(|n| (n.span(), "nodes")),
            r.hosts.as_ref().map(|h| (h.span(), "hosts")),
            r.exclusive.as_ref().map(|e| (e.span(), "exclusive")),
            r.recurrence.as_ref().map(|e| (e.span(), "recurrence")),
        ];
        if let Some((span, key)) = given.into_iter().flatten().next() {
            let why = match key {
                "exclusive" => "a requested reservation is exclusive by its place (`place=excl`)",
                "recurrence" => {
                    "a standing reservation confirmed by the scheduler is not modelled yet: \
                     give its vnodes (`nodes`)"
                }
                _ => {
                    "the scheduler chooses a requested reservation's vnodes: give `request` or \
                      `nodes`/`hosts`, not both"
                }
            };
            return Err(self.error(span, Some(&format!("reservation.{key}")), why.to_owned()));
        }
        let text = request.get_ref();
        let lowered = placesim_request::parse_and_lower(text, defs)
            .map_err(|e| self.at(request, "reservation.request", format!("`{text}`: {e}")))?;
        let submit = match &r.submit {
            None => 0,
            Some(s) => {
                let submit = self.duration(s, "reservation.submit")?;
                if submit > start {
                    return Err(self.at(
                        s,
                        "reservation.submit",
                        format!(
                            "expected a time no later than `start` ({start} s), found {submit} s"
                        ),
                    ));
                }
                submit
            }
        };
        Ok(placesim_core::ReservationRequest {
            name: Arc::from(r.name.get_ref().as_str()),
            submit: SimTime(submit),
            start: SimTime(start),
            end: SimTime(end),
            request: lowered,
            queue: queue.map(|q| q as u32),
        })
    }

    /// The starts of a standing reservation's occurrences, from its first at `start`, by its
    /// recurrence rule (reservations-and-partitions.md §2): `FREQ` HOURLY, DAILY or WEEKLY,
    /// `COUNT`, and `INTERVAL`, in seconds after t = 0. PBS expands the rule on the wall
    /// clock of the reservation's time zone; scenario times carry no date, so the parts that
    /// need one (`UNTIL`, `BYDAY`, `BYHOUR`) are refused with a message, and a day is 86,400 s
    /// (no daylight-saving shift). As PBS does, the duration may not exceed the frequency's
    /// period, and only the occurrences that start within three years of t = 0 are kept.
    fn occurrences(
        &self,
        rule: &Spanned<String>,
        start: u64,
        duration: u64,
    ) -> Result<Vec<u64>, ScenarioError> {
        let key = "reservation.recurrence";
        let bad = |message: String| self.at(rule, key, message);
        let (mut period, mut count, mut interval) = (None, None, 1u64);
        for part in rule.get_ref().split(';').filter(|p| !p.trim().is_empty()) {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("`{part}`: expected NAME=VALUE")))?;
            let number = || {
                value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(format!("`{part}`: expected a whole number above 0")))
            };
            match name.trim() {
                "FREQ" => {
                    period = Some(match value.trim() {
                        "HOURLY" => 3_600,
                        "DAILY" => 86_400,
                        "WEEKLY" => 604_800,
                        other => {
                            return Err(bad(format!(
                                "FREQ={other}: expected HOURLY, DAILY or WEEKLY (PBS's)"
                            )));
                        }
                    });
                }
                "COUNT" => count = Some(number()?),
                "INTERVAL" => interval = number()?,
                "UNTIL" | "BYDAY" | "BYHOUR" => {
                    return Err(bad(format!(
                        "{}: needs the calendar date and time zone of t = 0, which a scenario \
                         does not carry yet: give FREQ, COUNT and INTERVAL",
                        name.trim()
                    )));
                }
                "BYMONTHDAY" | "BYYEARDAY" | "BYSECOND" | "BYMINUTE" | "BYWEEKNO" | "BYSETPOS" => {
                    return Err(bad(format!("{}: PBS refuses it", name.trim())));
                }
                other => return Err(bad(format!("unknown rule part `{other}`"))),
            }
        }
        let period = period.ok_or_else(|| bad("expected FREQ".to_owned()))?;
        let count = count.ok_or_else(|| bad("expected COUNT: how many occurrences".to_owned()))?;
        if duration > period {
            return Err(bad(format!(
                "the duration ({duration} s) exceeds the frequency's period ({period} s), \
                 which pbs_rsub refuses"
            )));
        }
        let every = period.saturating_mul(interval);
        Ok((0..count)
            .map(|k| start.saturating_add(k.saturating_mul(every)))
            .take_while(|&t| t < RESERVATION_HORIZON_S)
            .collect())
    }

    /// Checks the `[[running]]` jobs of reservation `name`'s queue (`q`): they run inside it,
    /// so it must be open at t = 0, and together they must hold no more of a vnode than it
    /// does.
    #[allow(clippy::too_many_arguments)]
    fn running_inside(
        &self,
        r: &crate::schema::ReservationToml,
        name: &str,
        q: usize,
        start: u64,
        allocation: &placesim_core::Allocation,
        running: &[crate::RunningAtStart],
        cluster: &placesim_core::Cluster,
    ) -> Result<(), ScenarioError> {
        let inside: Vec<&crate::RunningAtStart> = running
            .iter()
            .filter(|j| j.queue.and_then(|n| n.pbs) == Some(q))
            .collect();
        let Some(first) = inside.first() else {
            return Ok(());
        };
        if start > 0 {
            return Err(self.at(
                &r.start,
                "reservation.start",
                format!(
                    "running job {} is in the queue of reservation `{name}`, which opens only \
                     at {start} s: a job running at t = 0 inside it needs it open then",
                    first.id
                ),
            ));
        }
        let n_cons = cluster.resources().n_consumables();
        let mut held: std::collections::HashMap<VnodeId, Vec<u64>> = Default::default();
        for job in &inside {
            for (v, amounts) in &job.vnodes {
                let slot = held.entry(*v).or_insert_with(|| vec![0; n_cons]);
                for (h, &a) in slot.iter_mut().zip(amounts) {
                    *h = h.saturating_add(a);
                }
                let own = allocation
                    .parts(n_cons)
                    .find(|(w, _)| w == v)
                    .map(|(_, a)| a.to_vec())
                    .unwrap_or_default();
                let fits = slot
                    .iter()
                    .enumerate()
                    .all(|(c, &h)| h <= own.get(c).copied().unwrap_or(0));
                if !fits {
                    return Err(self.at(
                        &r.name,
                        "reservation",
                        format!(
                            "running job {} of reservation `{name}`'s queue holds more of vnode \
                             `{}` than the reservation does (with the queue's other running jobs)",
                            job.id,
                            cluster.vnode(*v).name()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks, at each reservation's start, that everything held then fits with it on its
    /// vnodes: the other reservations open then and the `[[running]]` jobs not yet ended
    /// (until their true end, which is when the kernel gives their vnodes back). The first
    /// in the file's order that does not is refused; a sweep in start order finds it in time
    /// linear in the reservations' parts ([`crate::reservations_fit::first_misfit`]).
    fn reservations_fit(
        &self,
        made: &[(placesim_core::SiteReservation, Range<usize>, &str)],
        running: &[crate::RunningAtStart],
        cluster: &placesim_core::Cluster,
        defs: &ResourceDefs,
    ) -> Result<(), ScenarioError> {
        // A job running inside a reservation holds what the reservation holds.
        let queues: HashSet<u32> = made.iter().filter_map(|(r, _, _)| r.queue).collect();
        let outside: Vec<&crate::RunningAtStart> = running
            .iter()
            .filter(|j| {
                !j.queue
                    .and_then(|n| n.pbs)
                    .is_some_and(|q| queues.contains(&(q as u32)))
            })
            .collect();
        let reservations: Vec<&placesim_core::SiteReservation> =
            made.iter().map(|(r, _, _)| r).collect();
        let n_cons = defs.n_consumables();
        let Some((i, misfit)) =
            crate::reservations_fit::first_misfit(&reservations, &outside, cluster, n_cons)
        else {
            return Ok(());
        };
        let (r, span, key) = &made[i];
        let what = |h: Holder| match h {
            Holder::Reservation(k) => format!("reservation `{}`", reservations[k].name),
            Holder::Running(k) => format!("running job {}", outside[k].id),
        };
        let at = r.start.as_secs();
        let message = match misfit {
            Misfit::Shared { vnode, with } => format!(
                "reservation `{}` would share vnode `{}` with {} from {at} s, and one of them \
                 holds it exclusively",
                r.name,
                cluster.vnode(vnode).name(),
                what(with)
            ),
            Misfit::Short {
                vnode,
                consumable,
                asked,
                capacity,
                by,
                held,
            } => {
                let resource = &defs.def(defs.consumables()[consumable]).name;
                let held = if by.is_empty() {
                    String::new()
                } else {
                    let by: Vec<String> = by.into_iter().map(what).collect();
                    let verb = if by.len() == 1 { "holds" } else { "hold" };
                    format!("; {} {verb} {held} then", by.join(" and "))
                };
                format!(
                    "reservation `{}` needs {asked} {resource} of vnode `{}` from {at} s, which \
                     has {capacity}{held}",
                    r.name,
                    cluster.vnode(vnode).name()
                )
            }
        };
        Err(self.error(span.clone(), Some(key), message))
    }

    /// Moab's throttling limits (`[moab.limits]`): each credential's `MAXJOB`, `MAXPROC` and
    /// `MAXPS`, `[<soft>,]<hard>`, as moab.cfg writes them. A limit Moab has and placesim does
    /// not check is refused at its entry, with a message.
    fn moab_limits(&self, raw: &ScenarioToml) -> Result<Option<MoabLimits>, ScenarioError> {
        let Some(spanned) = &raw.moab.limits else {
            return Ok(None);
        };
        let l = spanned.get_ref();
        Ok(Some(MoabLimits {
            limits: self.credential_tables(
                "moab.limits",
                [&l.user, &l.group, &l.account, &l.class],
                parse_throttling,
            )?,
            class_names: class_names(raw),
        }))
    }

    /// Moab's fairshare (`[moab.fairshare]`, queue-disciplines.md §3.3): refused without a
    /// fairshare weight of the priority for a credential, since it would do nothing.
    fn moab_fairshare(
        &self,
        raw: &ScenarioToml,
        mem_per_ncpu: Option<(ConsumableIdx, f64)>,
        weights: &[f64; 4],
    ) -> Result<Option<MoabFairshareSettings>, ScenarioError> {
        let Some(spanned) = &raw.moab.fairshare else {
            return Ok(None);
        };
        let f = spanned.get_ref();
        let key = "moab.fairshare";
        if weights.iter().all(|&w| w == 0.0) {
            return Err(self.at(
                spanned,
                key,
                "fairshare does nothing without a weight for it in [moab.priority] \
                 (fsuserweight, fsgroupweight, fsaccountweight or fsclassweight)"
                    .to_owned(),
            ));
        }
        let policy = f.policy.get_ref().to_ascii_uppercase();
        let (base, percent_based) = match policy.strip_suffix('%') {
            Some(base) => (base, true),
            None => (policy.as_str(), false),
        };
        let processor_equivalents = match base {
            "DEDICATEDPS" => false,
            "DEDICATEDPES" => true,
            _ => {
                return Err(self.at(
                    &f.policy,
                    "moab.fairshare.policy",
                    format!(
                        "unknown value `{}`: expected DEDICATEDPS or DEDICATEDPES, with or \
                         without a trailing %",
                        f.policy.get_ref()
                    ),
                ));
            }
        };
        let interval_s = match &f.interval {
            None => 86_400,
            Some(v) => self.duration(v, "moab.fairshare.interval")?,
        };
        if interval_s == 0 {
            let span = f.interval.as_ref().map_or(0..0, Spanned::span);
            return Err(self.error(
                span,
                Some("moab.fairshare.interval"),
                "expected a positive duration".to_owned(),
            ));
        }
        let depth = match &f.depth {
            None => 7,
            Some(d) if (1..=32).contains(d.get_ref()) => *d.get_ref() as usize,
            Some(d) => {
                return Err(self.at(
                    d,
                    "moab.fairshare.depth",
                    format!("expected 1 to 32 windows, found {}", d.get_ref()),
                ));
            }
        };
        let decay = match &f.decay {
            None => 1.0,
            Some(d) if *d.get_ref() > 0.0 && *d.get_ref() <= 1.0 => *d.get_ref(),
            Some(d) => {
                return Err(self.at(
                    d,
                    "moab.fairshare.decay",
                    format!(
                        "expected a number above 0 and at most 1, found {}",
                        d.get_ref()
                    ),
                ));
            }
        };
        let target = |text: &str| {
            let t = text.trim();
            let (number, mode) = match t.as_bytes().last() {
                Some(b'+') => (&t[..t.len() - 1], TargetMode::Floor),
                Some(b'-') => (&t[..t.len() - 1], TargetMode::Ceiling),
                _ => (t, TargetMode::Target),
            };
            let percent = number
                .parse::<f64>()
                .ok()
                .filter(|p| p.is_finite() && *p >= 0.0 && *p <= 100.0)
                .ok_or_else(|| {
                    format!(
                        "`{t}`: expected a target percent from 0 to 100, optionally followed \
                         by + (floor) or - (ceiling)"
                    )
                })?;
            Ok(Target { percent, mode })
        };
        Ok(Some(MoabFairshareSettings {
            processor_equivalents,
            mem_per_ncpu,
            percent_based,
            interval_s,
            depth,
            decay,
            targets: self.credential_tables(
                "moab.fairshare",
                [&f.user, &f.group, &f.account, &f.class],
                target,
            )?,
            class_names: class_names(raw),
        }))
    }

    /// A `[moab.*]` section's four credential tables (user, group, account, class, in
    /// `CREDENTIALS` order), each entry read by `read`; an entry it refuses is refused at
    /// `{section}.{kind}`, with its message.
    fn credential_tables<T>(
        &self,
        section: &str,
        tables: [&std::collections::BTreeMap<String, Spanned<String>>; 4],
        read: impl Fn(&str) -> Result<T, String>,
    ) -> Result<[std::collections::HashMap<String, T>; 4], ScenarioError> {
        let mut out: [std::collections::HashMap<String, T>; 4] = Default::default();
        for ((table, kind), into) in tables
            .into_iter()
            .zip(["user", "group", "account", "class"])
            .zip(&mut out)
        {
            let key = format!("{section}.{kind}");
            for (who, text) in table {
                let value = read(text.get_ref()).map_err(|m| self.at(text, &key, m))?;
                into.insert(who.clone(), value);
            }
        }
        Ok(out)
    }

    /// A fraction in [0, 1] (1 when absent).
    fn fraction(&self, value: Option<&Spanned<f64>>, key: &str) -> Result<f64, ScenarioError> {
        let fraction = value.map_or(1.0, |f| *f.get_ref());
        if !(0.0..=1.0).contains(&fraction) {
            let span = value.map_or(0..0, Spanned::span);
            return Err(self.error(
                span,
                Some(key),
                format!("expected a fraction from 0 to 1, found {fraction}"),
            ));
        }
        Ok(fraction)
    }

    fn failures(
        &self,
        f: &FailuresToml,
        cluster: &placesim_core::Cluster,
        classes: &[NodeClass],
    ) -> Result<FailureSettings, ScenarioError> {
        let class_of = |name: &Spanned<String>, key: &str| {
            classes
                .iter()
                .find(|c| &c.name == name.get_ref())
                .map(|c| c.vnodes.clone())
                .ok_or_else(|| {
                    self.at(
                        name,
                        key,
                        format!(
                            "unknown class `{}`: define it under [[class]] or [[cluster.generation]]",
                            name.get_ref()
                        ),
                    )
                })
        };
        let mut outages = Vec::new();
        for o in &f.outage {
            let vnodes = match (&o.vnode, &o.class) {
                (Some(v), None) => vec![cluster.vnode_by_name(v.get_ref()).ok_or_else(|| {
                    self.at(
                        v,
                        "failures.outage.vnode",
                        format!("unknown vnode `{}`", v.get_ref()),
                    )
                })?],
                (None, Some(c)) => class_of(c, "failures.outage.class")?,
                (Some(v), Some(_)) => {
                    return Err(self.at(
                        v,
                        "failures.outage",
                        "give `vnode` or `class`, not both".to_owned(),
                    ));
                }
                (None, None) => {
                    return Err(self.at(
                        &o.down,
                        "failures.outage",
                        "expected `vnode` or `class`: which vnodes go down".to_owned(),
                    ));
                }
            };
            let down = self.duration(&o.down, "failures.outage.down")?;
            let up = self.duration(&o.up, "failures.outage.up")?;
            if up <= down {
                return Err(self.at(
                    &o.up,
                    "failures.outage.up",
                    format!("expected a time after `down` ({down} s), found {up} s"),
                ));
            }
            if outages.len().saturating_add(vnodes.len()) > crate::failures::MAX_OUTAGES {
                return Err(self.at(
                    &o.down,
                    "failures.outage",
                    format!(
                        "more than {} outages in all, placesim's limit",
                        crate::failures::MAX_OUTAGES
                    ),
                ));
            }
            outages.extend(vnodes.into_iter().map(|vnode| Outage {
                vnode,
                down: SimTime(down),
                up: SimTime(up),
            }));
        }
        let mut models = Vec::new();
        for m in &f.model {
            let positive = |v: &Spanned<toml::Value>, key: &str| {
                let secs = self.duration(v, key)?;
                if secs == 0 {
                    return Err(self.at(v, key, "expected a duration above 0".to_owned()));
                }
                Ok(secs)
            };
            models.push(FailureModel {
                class: m.class.get_ref().clone(),
                vnodes: class_of(&m.class, "failures.model.class")?,
                mtbf_s: positive(&m.mtbf, "failures.model.mtbf")?,
                mttr_s: positive(&m.mttr, "failures.model.mttr")?,
            });
        }
        Ok(FailureSettings {
            on_failure: self
                .choice(
                    f.on_failure.as_ref(),
                    "failures.on_failure",
                    &[
                        ("requeue", NodeFailurePolicy::Requeue),
                        ("kill", NodeFailurePolicy::Kill),
                    ],
                )?
                .unwrap_or_default(),
            outages,
            models,
        })
    }

    fn metrics(&self, m: &MetricsToml) -> Result<MetricsSettings, ScenarioError> {
        let mut settings = MetricsSettings {
            exec_vnode: m.exec_vnode,
            ..MetricsSettings::default()
        };
        if let Some(v) = &m.sample_every {
            let secs = self.duration(v, "metrics.sample_every")?;
            settings.sample_every = (secs > 0).then_some(secs);
        }
        let trim = |v: &Option<Spanned<toml::Value>>, key: &str| -> Result<Trim, ScenarioError> {
            let Some(v) = v else {
                return Ok(Trim::None);
            };
            let text = match v.get_ref() {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) if *i >= 0 => i.to_string(),
                other => other.type_str().to_owned(),
            };
            Trim::parse(&text)
                .ok_or_else(|| self.at(v, key, format!("{}, found `{text}`", Trim::EXPECTED)))
        };
        settings.warmup = trim(&m.warmup, "metrics.warmup")?;
        settings.cooldown = trim(&m.cooldown, "metrics.cooldown")?;
        Ok(settings)
    }

    /// A duration given as `[[[DD:]HH:]MM:]SS` or as whole seconds.
    fn duration(&self, v: &Spanned<toml::Value>, key: &str) -> Result<u64, ScenarioError> {
        match v.get_ref() {
            toml::Value::Integer(s) if *s >= 0 => Ok(*s as u64),
            toml::Value::String(s) => placesim_request::parse_duration(s).ok_or_else(|| {
                self.at(
                    v,
                    key,
                    format!("expected a duration [[[DD:]HH:]MM:]SS or seconds, found `{s}`"),
                )
            }),
            other => Err(self.at(
                v,
                key,
                format!(
                    "expected a duration [[[DD:]HH:]MM:]SS or seconds, found {}",
                    other.type_str()
                ),
            )),
        }
    }

    fn generator(&self, g: &Spanned<GeneratorToml>) -> Result<GeneratorSpec, ScenarioError> {
        let g = g.get_ref();
        self.choice(
            g.model.as_ref(),
            "workload.generator.model",
            &[("lublin", ())],
        )?;
        let jobs = *g.jobs.get_ref();
        if jobs == 0 {
            return Err(self.at(
                &g.jobs,
                "workload.generator.jobs",
                "expected at least 1 job".into(),
            ));
        }
        if jobs > MAX_GENERATED_JOBS {
            return Err(self.at(
                &g.jobs,
                "workload.generator.jobs",
                format!("{jobs} jobs is more than placesim's limit of {MAX_GENERATED_JOBS} generated jobs"),
            ));
        }
        let streams = self
            .choice(
                g.streams.as_ref(),
                "workload.generator.streams",
                &[
                    ("batch+interactive", 0u8),
                    ("batch", 1),
                    ("interactive", 2),
                    ("typeless", 3),
                ],
            )?
            .unwrap_or(0);
        let b = overrides(StreamParams::BATCH, g.batch.as_ref());
        let i = overrides(StreamParams::INTERACTIVE, g.interactive.as_ref());
        let t = overrides(StreamParams::TYPELESS, g.typeless.as_ref());
        let streams = match streams {
            1 => Streams::Batch(b),
            2 => Streams::Interactive(i),
            3 => Streams::Typeless(t),
            _ => Streams::BatchAndInteractive(b, i),
        };
        let max_estimate_s = match &g.max_estimate {
            Some(v) => {
                let seconds = self.duration(v, "workload.generator.max_estimate")?;
                if seconds < tsafrir::MIN_MAX_ESTIMATE_S {
                    return Err(self.at(
                        v,
                        "workload.generator.max_estimate",
                        format!(
                            "expected at least 01:00:00, the least maximum the estimate model of Tsafrir et al. accepts, found {seconds} s"
                        ),
                    ));
                }
                seconds
            }
            None => GeneratorSpec::lublin(1).max_estimate_s,
        };
        let load = match &g.load {
            Some(l) if !(*l.get_ref() > 0.0 && l.get_ref().is_finite()) => {
                return Err(self.at(
                    l,
                    "workload.generator.load",
                    format!("expected a positive load, found {}", l.get_ref()),
                ));
            }
            l => l.as_ref().map(|l| *l.get_ref()),
        };
        Ok(GeneratorSpec {
            streams,
            jobs: jobs as usize,
            max_estimate_s,
            load,
        })
    }

    fn runtime(
        &self,
        raw: &ScenarioToml,
        defs: &ResourceDefs,
    ) -> Result<RuntimeConfig, ScenarioError> {
        let default_topology = defs
            .lookup("switch")
            .filter(|&id| defs.def(id).kind.is_stringlike());
        let Some(r) = &raw.runtime else {
            return Ok(RuntimeConfig {
                settings: RuntimeSettings {
                    speed_reference: None,
                    balanced: false,
                    topology: default_topology,
                    comm: CommForm::PairFraction,
                },
                noise_sigma: 0.0,
                classes: vec![default_class()],
            });
        };
        let speed_reference = match &r.speed_reference {
            None => None,
            Some(v) => match v.get_ref() {
                toml::Value::String(s) if s == "slowest" => None,
                toml::Value::String(s) if s == "fastest" => Some(
                    raw.class
                        .iter()
                        .chain(&raw.vnode)
                        .map(|n| n.speed)
                        .fold(0.0, f64::max),
                ),
                toml::Value::Float(x) if *x > 0.0 && x.is_finite() => Some(*x),
                toml::Value::Integer(x) if *x > 0 => Some(*x as f64),
                _ => {
                    return Err(self.at(
                        v,
                        "runtime.speed_reference",
                        "expected slowest, fastest or a positive speed".into(),
                    ));
                }
            },
        };
        let topology = match &r.topology {
            None => default_topology,
            Some(t) if t.get_ref().is_empty() => None,
            Some(t) => Some(self.keys(std::slice::from_ref(t), defs, "runtime.topology")?[0]),
        };
        let comm = match self.choice(
            r.comm.as_ref(),
            "runtime.comm",
            &[("pairs", false), ("groups", true)],
        )? {
            Some(true) => CommForm::SetsSpanned {
                alpha: r.alpha.unwrap_or(0.1),
                cap: r.alpha_cap.unwrap_or(0.4),
            },
            _ => CommForm::PairFraction,
        };
        if !(r.noise_sigma >= 0.0 && r.noise_sigma.is_finite()) {
            return Err(self.error(
                0..0,
                Some("runtime.noise_sigma"),
                format!("expected σ ≥ 0, found {}", r.noise_sigma),
            ));
        }
        let classes = if r.class.is_empty() {
            vec![default_class()]
        } else {
            r.class
                .iter()
                .map(|c| {
                    let beta = *c.beta.get_ref();
                    if !(beta >= 0.0 && beta.is_finite()) {
                        return Err(self.at(
                            &c.beta,
                            "runtime.class.beta",
                            format!("expected β ≥ 0, found {beta}"),
                        ));
                    }
                    Ok(SensitivityClass {
                        filter: filter(c.size_min, c.size_max, &c.queues, &c.users, &[], &[]),
                        fraction: self.fraction(c.fraction.as_ref(), "runtime.class.fraction")?,
                        beta,
                    })
                })
                .collect::<Result<_, ScenarioError>>()?
        };
        Ok(RuntimeConfig {
            settings: RuntimeSettings {
                speed_reference,
                balanced: r.balanced,
                topology,
                comm,
            },
            noise_sigma: r.noise_sigma,
            classes,
        })
    }

    fn workload(
        &self,
        raw: &ScenarioToml,
        w: &crate::schema::WorkloadToml,
        defs: &ResourceDefs,
        max_ncpus: u64,
    ) -> Result<WorkloadSettings, ScenarioError> {
        let dir = self.path.parent().unwrap_or(Path::new(""));
        let ppn = w.procs_per_node.map_or(max_ncpus, u64::from).max(1) as u32;
        let size_mapping = match self.choice(
            w.size_mapping.as_ref(),
            "workload.size_mapping",
            &[("ncpus", false), ("nodes", true)],
        )? {
            Some(true) => SizeMapping::Nodes {
                procs_per_node: ppn,
            },
            _ => SizeMapping::Ncpus,
        };
        // Memory from the trace is on unless `memory = "none"`; an error about it points at
        // the `memory` key, or else at the trace.
        let memory_from_trace = match self.choice(
            w.memory.as_ref(),
            "workload.memory",
            &[("trace", true), ("none", false)],
        )? {
            Some(false) => None,
            _ => {
                let span = match (&w.memory, &w.trace) {
                    (Some(m), _) => m.span(),
                    (None, Some(t)) => t.span(),
                    (None, None) => 0..0,
                };
                let (line, column) = self.position(span.start);
                Some(crate::SourcePosition { line, column })
            }
        };
        let mut rules = Vec::new();
        for r in &w.rule {
            let fraction = self.fraction(r.fraction.as_ref(), "workload.rule.fraction")?;
            let reads = crate::JobPlaceholders::of(r.request.get_ref())
                .map_err(|m| self.at(&r.request, "workload.rule.request", m))?;
            let rule = Rule {
                template: r.request.get_ref().clone(),
                reads,
                line: self.position(r.request.span().start).0,
                filter: filter(
                    r.size_min,
                    r.size_max,
                    &r.queues,
                    &r.users,
                    &r.groups,
                    &r.partitions,
                ),
                fraction,
                job_priority: r.job_priority,
                project: r.project.as_deref().map(Arc::from),
                queue: r
                    .queue
                    .as_ref()
                    .map(|name| self.named_queue(raw, name, "workload.rule.queue"))
                    .transpose()?,
            };
            // A template must give a valid request for any size: check it with size 1, and
            // the job's own values as 1 (1 KiB of memory).
            let text = crate::requests::fill_job_values(
                &crate::requests::instantiate(&rule.template, 1, ppn),
                &rule.reads,
                ppn,
                |_| Some("1"),
                Some(1),
            )
            .unwrap_or_default();
            placesim_request::parse_request(&text, defs).map_err(|e| {
                self.at(
                    &r.request,
                    "workload.rule.request",
                    format!("request `{text}` (for a job of size 1): {e}"),
                )
            })?;
            rules.push(rule);
        }
        let source = match (&w.trace, &w.generator) {
            (Some(trace), None) => WorkloadSource::Trace(dir.join(trace.get_ref())),
            (None, Some(g)) => WorkloadSource::Generator(Box::new(self.generator(g)?)),
            (Some(trace), Some(_)) => {
                return Err(self.at(
                    trace,
                    "workload.trace",
                    "give either `trace` or [workload.generator], not both".into(),
                ));
            }
            (None, None) => {
                return Err(self.error(
                    0..0,
                    Some("workload"),
                    "expected `trace` or [workload.generator]".into(),
                ));
            }
        };
        let format = match (&w.format, &source) {
            (None, _) => TraceFormat::default(),
            (Some(f), WorkloadSource::Generator(_)) => {
                return Err(self.at(
                    f,
                    "workload.format",
                    "a generated workload has no format: give `format` with `trace`".into(),
                ));
            }
            (Some(_), WorkloadSource::Trace(_)) => self
                .named(w.format.as_ref(), "workload.format")?
                .unwrap_or_default(),
        };
        Ok(WorkloadSettings {
            source,
            format,
            skip_bad_lines: w.skip_bad_lines,
            size_mapping,
            memory_from_trace,
            procs_per_node: ppn,
            requests_file: w.requests_file.as_ref().map(|f| dir.join(f.get_ref())),
            recorded: w.recorded.as_ref().map(|f| dir.join(f.get_ref())),
            request_field: match &w.request_field {
                None => None,
                Some(f) => Some(
                    usize::try_from(*f.get_ref())
                        .ok()
                        .filter(|n| (19..=1000).contains(n))
                        .ok_or_else(|| {
                            self.at(
                                f,
                                "workload.request_field",
                                format!(
                                    "{}: expected a field after SWF's 18, from 19 to 1000",
                                    f.get_ref()
                                ),
                            )
                        })?,
                ),
            },
            rules,
            arrival_scale: match &w.arrival_scale {
                None => 1.0,
                Some(v) if *v.get_ref() > 0.0 && *v.get_ref() <= 1000.0 => *v.get_ref(),
                Some(v) => {
                    return Err(self.at(
                        v,
                        "workload.arrival_scale",
                        format!(
                            "expected a number above 0 and at most 1000, found {}",
                            v.get_ref()
                        ),
                    ));
                }
            },
        })
    }
}

/// A scheduler setting that names the discipline: which, where, and in the setting's words.
struct Named {
    discipline: Discipline,
    span: Range<usize>,
    /// The settings, as messages name them: `[pbs] strict_ordering / backfill_depth`.
    settings: &'static str,
    /// Their values: `backfill_depth = 0`.
    value: String,
}

/// Per SWF queue number: the name of the `[[moab.class]]` whose jobs come from it.
/// Why a queue name (qsub -q) is refused.
pub(crate) fn unknown_queue(name: &str) -> String {
    format!("unknown queue or class `{name}`: define it under [[pbs.queue]] or [[moab.class]]")
}

/// The `[[moab.class]]` names, by the index a request's `class` holds.
fn class_names(raw: &ScenarioToml) -> Vec<String> {
    raw.moab.class.iter().map(|c| c.name.clone()).collect()
}

/// One credential's throttling limits, as moab.cfg writes them: `MAXJOB=2,4 MAXPROC=64`, each
/// `NAME=[<soft>,]<hard>`; a soft value looser than the hard one, or none, is the hard one
/// (Maui's rule); 0 is no limit, as in Maui.
fn parse_throttling(text: &str) -> Result<CredentialLimits, String> {
    let mut limits: CredentialLimits = [None; 3];
    for word in text.split_whitespace() {
        let Some((name, value)) = word.split_once('=') else {
            return Err(format!(
                "`{word}`: expected NAME=VALUE, as MAXJOB=4 or MAXJOB=2,4"
            ));
        };
        let upper = name.to_ascii_uppercase();
        let Some(kind) = LIMIT_KINDS.iter().position(|k| k.name() == upper) else {
            return Err(format!(
                "`{word}`: {name} is not a limit placesim checks: expected MAXJOB, MAXPROC or MAXPS"
            ));
        };
        if limits[kind].is_some() {
            return Err(format!("`{word}`: {upper} is given twice"));
        }
        let number = |n: &str| {
            n.parse::<u64>().map_err(|_| {
                format!("`{word}`: expected [<soft>,]<hard>, whole numbers, as {upper}=2,4")
            })
        };
        limits[kind] = Some(match value.split_once(',') {
            Some((soft, hard)) => SoftHard::new(number(soft)?, number(hard)?),
            None => {
                let hard = number(value)?;
                SoftHard::new(hard, hard)
            }
        });
    }
    if limits.iter().all(Option::is_none) {
        return Err("expected at least one limit, as MAXJOB=4 or MAXJOB=2,4".to_owned());
    }
    Ok(limits)
}

/// A `job_sort_formula` term by its PBS name (Moab's priority is built from the same terms):
/// the terms placesim reads, or why a name is refused.
fn formula_term(defs: &ResourceDefs, name: &str) -> Result<Term, String> {
    match name {
        "walltime" => Ok(Term::Walltime),
        "eligible_time" => Ok(Term::EligibleTime),
        "queue_priority" => Ok(Term::QueuePriority),
        "job_priority" => Ok(Term::JobPriority),
        // `fair_share_perc` is PBS's deprecated name for it.
        "fairshare_perc" | "fair_share_perc" => Ok(Term::FairsharePerc),
        "fairshare_tree_usage" => Ok(Term::FairshareTreeUsage),
        "fairshare_factor" => Ok(Term::FairshareFactor),
        "accrue_type" => Err("accrue_type is not modelled".to_owned()),
        resource => defs
            .lookup(resource)
            .and_then(|id| defs.consumable_idx(id))
            .map(Term::Resource)
            .ok_or_else(|| {
                format!(
                    "unknown term `{resource}`: expected a consumable resource, walltime, \
                     eligible_time or queue_priority"
                )
            }),
    }
}
