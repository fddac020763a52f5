//! Moab node sets (../shared/spec/moab-node-sets.md, seed 004) as a placement policy.
//!
//! For a request, in order:
//! 1. **Effective settings** (R3, R4): the job's own `nodeset=` fields, else the global
//!    parameters, field by field (a class's DEFAULT.NODESET arrives as the job's own request,
//!    when the job asked for nothing). No policy, or VARATTR with no values: no node sets.
//! 2. **Candidate sets** (R5), in list order: one per listed feature (a feature no vnode has is
//!    dropped; the vnode named `GLOBAL` is in every feature set), one per `name=value`, one per
//!    value of a bare VARATTR `name`, one per listed PROCSPEED speed, one per listed
//!    reservation (its hosts' vnodes), one per listed class (the vnodes that carry it); an
//!    empty FEATURE or CLASS list is every feature or class, in order of first appearance over
//!    the vnodes, an empty PROCSPEED list every speed, slowest first, and an empty RESERVATION
//!    list every reservation in the scenario's order.
//! 3. **Size** (R1): the tasks of this job that fit on the set's eligible vnodes now, and
//!    those vnodes. A set is feasible when the tasks of every chunk complex fit (R1, §1.3).
//! 4. **Choice** (R10): FIRSTFIT the first feasible set; BESTFIT the fewest fitting tasks,
//!    WORSTFIT the most (ties to list order); AFFINITY the first feasible set with no eligible
//!    vnode for which the job has negative affinity (from the Moab reservations over its
//!    window, which the view carries), else the first feasible set; MINLOSS the last
//!    feasible set ([`MinLoss::LastFeasible`], as the source does), or by speed loss with
//!    NODESETTOLERANCE ([`MinLoss::Speed`], §5); BESTRESOURCE the first feasible set.
//!    PROCSPEED sets go through §5's algorithm under every priority type (BESTRESOURCE there
//!    being the fastest feasible set). FIRSTOF is ONEOF (R8) unless
//!    [`NodeSetOptions::firstof_forces_firstfit`]. ANYOF takes the union of the listed sets,
//!    each vnode once (R9).
//! 5. **Allocation** (R11): first fit inside the chosen set, in the job's affinity tiers
//!    (positive, neutral, unreserved, negative; first fit takes them so whenever the view
//!    carries affinities), each in ascending vnode index.
//! 6. **Mandatory or optional** (R12, R13): with no feasible set, a mandatory job waits; an
//!    optional one is placed by first fit over every vnode, labelled `spanned`.
//!
//! NODESETPLUS DELAY and SPANEVENLY (§7, §8) need time: the policy gives such a request a
//! [`Relaxation`], and the queue discipline compares the earliest start in a set with the
//! earliest start without sets (see `queue`).

use super::first_fit::filter_holds;
use super::{BuiltPool, BuiltSet, FirstFit, PoolSource};
use placesim_core::{
    Affinity, Allocation, Arrangement, Chunk, Cluster, ClusterState, ConsumableIdx, FilterExpr,
    HostId, HostList, HostListForm, NodeSetAttribute, NodeSetPolicy, NodeSetValue, PlacementPolicy,
    Relaxation, RelaxationLasts, RelaxationWait, Request, RequestFeature, ResourceId, Scratch,
    ScratchBuf, SetConstraints, SetTallies, Sharing, SimDuration, SpeedValue, StateView, VnodeId,
    Within,
};
use std::collections::HashMap;
use std::sync::Arc;

/// NODESETPRIORITYTYPE: which feasible set wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PriorityType {
    /// The first feasible set in list order (Moab's default).
    #[default]
    FirstFit,
    /// The feasible set with the fewest fitting tasks.
    BestFit,
    /// The feasible set with the most fitting tasks.
    WorstFit,
    /// See [`MinLoss`].
    MinLoss,
    /// The first feasible set without negative-affinity vnodes.
    Affinity,
    /// PROCSPEED sets: the fastest feasible set; other sets: the first feasible one (Maui's
    /// and Moab's source; the Moab 9 documentation does not list it).
    BestResource,
}

/// What MINLOSS means on feature and VARATTR sets (the spec's option `minloss_plain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MinLoss {
    /// The last feasible set, as Moab's and Maui's code do on plain sets \[default\].
    #[default]
    LastFeasible,
    /// The first feasible set.
    FirstFeasible,
    /// Maui's speed algorithm (§5): each set's speed is its slowest vnode's; a set may borrow
    /// vnodes from later sets up to NODESETTOLERANCE faster, and the set wasting the least
    /// speed (Σ speed difference × borrowed tasks) wins, first on ties.
    Speed,
}

/// NODESETPLUS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeSetPlus {
    /// Wait for a set only while that start is within NODESETDELAY of the start without sets.
    Delay,
    /// ANYOF jobs: one set, or the same share of tasks in each of k sets.
    SpanEvenly,
}

/// What NODESETDELAY is measured from under NODESETPLUS DELAY (the spec's option
/// `delay_reference`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DelayReference {
    /// The earliest start ignoring node sets: how long the set would delay the job \[default\].
    #[default]
    EarliestUnconstrained,
    /// Now.
    Now,
}

/// How NODESETPLUS DELAY is timed (the spec's option `delay_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DelayMode {
    /// Moab's: predicted from estimated ends and decided again at every pass \[default\].
    #[default]
    Predictive,
    /// Slurm's `--switches`: the clock starts the first time the job could run without sets,
    /// and after NODESETDELAY it runs without them.
    Anchored,
}

/// The moab.cfg parameters a node-set policy needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeSetSettings {
    /// NODESETPOLICY; node sets are off for jobs that give none either.
    pub policy: Option<NodeSetPolicy>,
    /// NODESETATTRIBUTE.
    pub attribute: Option<NodeSetAttribute>,
    /// NODESETLIST.
    pub list: Vec<NodeSetValue>,
    /// The string_array resource that holds node features.
    pub feature_resource: Option<ResourceId>,
    /// The string_array resource that holds the classes a node carries (CLASS sets).
    pub class_resource: Option<ResourceId>,
    /// NODESETISOPTIONAL (after NODESETDELAY's side effect).
    pub is_optional: bool,
    /// NODESETDELAY.
    pub delay: SimDuration,
    /// NODESETPRIORITYTYPE.
    pub priority_type: PriorityType,
    /// NODESETTOLERANCE.
    pub tolerance: f64,
    /// NODESETPLUS.
    pub plus: Option<NodeSetPlus>,
    /// SCHEDCFG FLAGS=AllowPerJobNodeSetIsOptional: jobs may set nodesetisoptional and
    /// nodesetdelay.
    pub allow_per_job_is_optional: bool,
    /// The Moab reservations' host lists, by name in the scenario's order: what RESERVATION
    /// sets are made of.
    pub reservations: Vec<(String, Vec<VnodeId>)>,
    /// The spec's recorded choices, each switchable.
    pub options: NodeSetOptions,
}

/// Where the spec records a choice it made, the choice is the default and the alternative
/// is one of these options (docs/scenarios.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeSetOptions {
    /// Option `firstof_forces_firstfit`: FIRSTOF ignores the priority type.
    pub firstof_forces_firstfit: bool,
    /// Option `minloss_plain`.
    pub minloss: MinLoss,
    /// Option `delay_reference`.
    pub delay_reference: DelayReference,
    /// Option `delay_mode`.
    pub delay_mode: DelayMode,
    /// Option (Q4): a job's own `nodesetisoptional=true` skips node sets altogether, as Moab's
    /// code does, instead of the best effort of global optional sets [default: false].
    pub job_optional_skips_sets: bool,
    /// Option (Q2): MINLOSS by speed keeps every vnode at or above the base speed, as Maui's
    /// final filter does in effect, instead of the documented upper bound `v·(1+tol)`
    /// [default: false].
    pub tolerance_unbounded: bool,
    /// Option: under NODESETPLUS DELAY, dropping the sets is for good once decided, instead
    /// of decided again at every pass [default: false].
    pub delay_sticky: bool,
    /// Option (Q5): when allocation inside a feasible set fails, a mandatory job falls back
    /// to every vnode, as Moab's pass 1 does, instead of waiting [default: false].
    pub mandatory_fallback: bool,
    /// Option: SPANEVENLY takes sets in list order instead of priority-type order
    /// [default: false].
    pub spanevenly_list_order: bool,
    /// Option: a job's own `nodesetdelay=` is ignored even with the per-job flag, as the
    /// Moab 9 documentation says users may not set it [default: false].
    pub refuse_per_job_delay: bool,
}

/// One node set.
#[derive(Debug, Clone)]
struct NodeSet {
    name: Arc<str>,
    vnodes: Vec<VnodeId>,
    /// Its slowest vnode's speed (MINLOSS by speed).
    speed: f64,
}

/// The settings in force for one request.
#[derive(Debug, Clone, Copy)]
struct Effective<'a> {
    policy: NodeSetPolicy,
    values: &'a [NodeSetValue],
    optional: bool,
    delay: SimDuration,
    /// What the sets are built from: VARATTR values bind the job to the chosen value, and
    /// PROCSPEED sets are chosen by §5's speed algorithm.
    attribute: NodeSetAttribute,
}

/// What [`MoabNodeSets::fit`] asks a request's fit on.
#[derive(Debug, Clone, Copy)]
enum FitOn<'a> {
    /// A node set, by index: its tallies serve the common shape.
    Set(usize),
    /// Any vnodes (ANYOF's union).
    Vnodes(&'a [VnodeId]),
}

/// Moab node sets over first-fit allocation. See the module docs.
#[derive(Debug, Clone)]
pub struct MoabNodeSets {
    settings: NodeSetSettings,
    first_fit: FirstFit,
    sets: Vec<NodeSet>,
    /// The sets each list value stands for, in order.
    by_value: HashMap<NodeSetValue, Vec<usize>>,
    /// Every feature set, in order of first appearance (FEATURE with an empty list).
    all_features: Vec<usize>,
    /// Every speed's set, slowest first (PROCSPEED with an empty list; R5's \[DEC\]: Maui's
    /// first-seen order would break §5's tolerance scan, which assumes ascending speeds).
    all_speeds: Vec<usize>,
    /// Every reservation's set, in the scenario's order (RESERVATION with an empty list).
    all_reservations: Vec<usize>,
    /// Every class's set, in order of first appearance over the vnodes (CLASS with an empty
    /// list).
    all_classes: Vec<usize>,
    /// Capacity per consumable over the whole cluster: a view with all of it free is idle.
    capacity: Vec<u64>,
    refusal: Option<Refusal>,
    /// Each refusal's comment, made once: a blocked job is told why at every pass it is
    /// asked about, and a string made per telling was a tenth of nodesets-bench's
    /// allocations.
    refusal_texts: [Arc<str>; 7],
    spanned: Arc<str>,
    local: ScratchBuf,
    candidates: Vec<usize>,
    /// The values and attribute `candidates` were filled for, when no set was bound: most
    /// requests ask the same node sets, and filling them again (a map lookup per value, a copy
    /// of the values) was asked at every placement.
    candidates_for: Option<(Vec<NodeSetValue>, NodeSetAttribute)>,
    union: Vec<VnodeId>,
    /// Whether the last ONEOF choice found a feasible set but could not allocate in it
    /// (Q5); read and cleared by the caller.
    failed_inside_feasible_set: bool,
    /// During [`SetConstraints::place_bound`]: the only set the job may use.
    bound: Option<Arc<str>>,
    /// Host ids by name, for host lists: made from `cluster` when a host list is first read
    /// (most runs have none, and a cluster may have a hundred thousand hosts).
    host_ids: std::sync::OnceLock<HashMap<String, HostId>>,
    cluster: Cluster,
    hostlist_label: Arc<str>,
}

/// Why the last placement failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Mandatory sets: none feasible now (`never`: not even on the idle cluster).
    NoSet { never: bool },
    /// No vnodes can take the job now (optional sets, or no sets).
    NoResources { never: bool },
    /// A host list: its hosts cannot take the job now (`never`: not even idle).
    HostList { never: bool },
    /// A host list names a host the cluster does not have.
    UnknownHost,
}

impl Refusal {
    /// Every refusal, at its [`Refusal::index`].
    const ALL: [Refusal; 7] = [
        Refusal::NoSet { never: false },
        Refusal::NoSet { never: true },
        Refusal::NoResources { never: false },
        Refusal::NoResources { never: true },
        Refusal::HostList { never: false },
        Refusal::HostList { never: true },
        Refusal::UnknownHost,
    ];

    /// Where the refusal is in [`Refusal::ALL`].
    fn index(self) -> usize {
        match self {
            Refusal::NoSet { never } => usize::from(never),
            Refusal::NoResources { never } => 2 + usize::from(never),
            Refusal::HostList { never } => 4 + usize::from(never),
            Refusal::UnknownHost => 6,
        }
    }

    /// The job's comment.
    fn text(self) -> &'static str {
        match self {
            Refusal::NoSet { never: false } => {
                "Not Running: cannot alloc nodeset: no node set can hold the job now"
            }
            Refusal::NoSet { never: true } => "Can Never Run: no node set could ever hold the job",
            Refusal::NoResources { never: false } => "Not Running: not enough free resources",
            Refusal::NoResources { never: true } => {
                "Can Never Run: the job does not fit on the cluster"
            }
            Refusal::HostList { never: false } => {
                "Not Running: the hosts of the job's host list cannot take it now"
            }
            Refusal::HostList { never: true } => {
                "Can Never Run: the hosts of the job's host list cannot take it"
            }
            Refusal::UnknownHost => {
                "Can Never Run: the job's host list names a host the cluster does not have"
            }
        }
    }
}

/// A request of the common shape ([`MoabNodeSets::tallied_tasks`]): its task count, and every
/// set's tallies in the view it is placed in.
#[derive(Clone, Copy)]
struct Tallied<'v> {
    count: u32,
    tallies: SetTallies<'v>,
}

/// How a set (or union) fits a request: tasks that fit, summed over chunk complexes, and
/// whether every complex fits.
#[derive(Debug, Clone, Copy)]
struct Fit {
    tasks: u64,
    feasible: bool,
}

impl MoabNodeSets {
    /// The cluster's host ids by name, made when first asked.
    fn host_ids(&self) -> &HashMap<String, HostId> {
        self.host_ids.get_or_init(|| {
            (self.cluster.hosts().iter().enumerate())
                .map(|(i, name)| (name.clone(), HostId::from_index(i)))
                .collect()
        })
    }

    /// Builds every set the settings and `requests` can ask for on `cluster`.
    pub fn new(cluster: &Cluster, settings: NodeSetSettings, requests: &[Request]) -> Self {
        let n_cons = cluster.resources().n_consumables();
        let mut capacity = vec![0u64; n_cons];
        for v in 0..cluster.n_vnodes() {
            for (t, a) in capacity
                .iter_mut()
                .zip(cluster.capacity(VnodeId::from_index(v)))
            {
                *t += a;
            }
        }
        let mut p = MoabNodeSets {
            first_fit: FirstFit::default(),
            sets: Vec::new(),
            by_value: HashMap::new(),
            all_features: Vec::new(),
            all_speeds: Vec::new(),
            all_reservations: Vec::new(),
            all_classes: Vec::new(),
            capacity,
            refusal: None,
            refusal_texts: Refusal::ALL.map(|r| Arc::from(r.text())),
            spanned: Arc::from("spanned"),
            local: ScratchBuf::default(),
            candidates: Vec::new(),
            candidates_for: None,
            union: Vec::new(),
            failed_inside_feasible_set: false,
            bound: None,
            host_ids: std::sync::OnceLock::new(),
            cluster: cluster.clone(),
            hostlist_label: Arc::from("hostlist"),
            settings,
        };
        let globals: Vec<VnodeId> = (0..cluster.n_vnodes())
            .map(VnodeId::from_index)
            .filter(|&v| cluster.vnode(v).name() == "GLOBAL")
            .collect();
        if let Some(r) = p.settings.feature_resource {
            let all = (0..cluster.n_vnodes()).map(VnodeId::from_index);
            for (value, vnodes) in cluster.sets_by(r, all, true) {
                let index = p.add_set(cluster, value.clone(), with_globals(vnodes, &globals));
                p.all_features.push(index);
                p.by_value.insert(NodeSetValue::Feature(value), vec![index]);
            }
        }
        let mut values: Vec<NodeSetValue> = p.settings.list.clone();
        let mut wants_speeds = p.settings.attribute == Some(NodeSetAttribute::ProcSpeed);
        for r in requests {
            if let Some(ns) = &r.nodeset {
                values.extend(ns.values.iter().cloned());
                wants_speeds |= ns.attribute == Some(NodeSetAttribute::ProcSpeed);
            }
        }
        wants_speeds |= values
            .iter()
            .any(|v| matches!(v, NodeSetValue::ProcSpeed(_)));
        let wants_classes = p.settings.attribute == Some(NodeSetAttribute::Class)
            || requests.iter().any(|r| {
                r.nodeset
                    .as_ref()
                    .is_some_and(|ns| ns.attribute == Some(NodeSetAttribute::Class))
            })
            || values.iter().any(|v| matches!(v, NodeSetValue::Class(_)));
        if wants_classes && let Some(r) = p.settings.class_resource {
            let all = (0..cluster.n_vnodes()).map(VnodeId::from_index);
            for (value, vnodes) in cluster.sets_by(r, all, true) {
                let index = p.add_set(cluster, format!("class={value}"), vnodes);
                p.all_classes.push(index);
                p.by_value.insert(NodeSetValue::Class(value), vec![index]);
            }
        }
        let wants_reservations = p.settings.attribute == Some(NodeSetAttribute::Reservation)
            || requests.iter().any(|r| {
                r.nodeset
                    .as_ref()
                    .is_some_and(|ns| ns.attribute == Some(NodeSetAttribute::Reservation))
            })
            || values
                .iter()
                .any(|v| matches!(v, NodeSetValue::Reservation(_)));
        if wants_reservations {
            for (name, vnodes) in p.settings.reservations.clone() {
                let mut members = vnodes;
                members.sort_unstable();
                members.dedup();
                let index = p.add_set(cluster, name.clone(), members);
                p.all_reservations.push(index);
                p.by_value
                    .insert(NodeSetValue::Reservation(name), vec![index]);
            }
        }
        if wants_speeds {
            // One pass over the vnodes, slowest speed first.
            let mut by_speed: std::collections::BTreeMap<SpeedValue, Vec<VnodeId>> =
                std::collections::BTreeMap::new();
            for v in (0..cluster.n_vnodes()).map(VnodeId::from_index) {
                if let Some(speed) = SpeedValue::new(cluster.vnode(v).speed) {
                    by_speed.entry(speed).or_default().push(v);
                }
            }
            for (speed, members) in by_speed {
                let index = p.add_set(cluster, format!("procspeed={}", speed.get()), members);
                p.all_speeds.push(index);
                p.by_value
                    .insert(NodeSetValue::ProcSpeed(speed), vec![index]);
            }
        }
        for value in values {
            if p.by_value.contains_key(&value) {
                continue;
            }
            let all = (0..cluster.n_vnodes()).map(VnodeId::from_index);
            let sets = match &value {
                // A feature or speed no vnode has, or a reservation the site does not have,
                // is dropped (R5).
                NodeSetValue::Feature(_)
                | NodeSetValue::ProcSpeed(_)
                | NodeSetValue::Reservation(_)
                | NodeSetValue::Class(_) => Vec::new(),
                NodeSetValue::VarAttrValue(r, wanted) => {
                    let members: Vec<VnodeId> = all
                        .filter(|&v| {
                            cluster
                                .vnode(v)
                                .attr(*r)
                                .is_some_and(|a| a.string_values().iter().any(|s| s == wanted))
                        })
                        .collect();
                    if members.is_empty() {
                        Vec::new()
                    } else {
                        let name = format!("{}={wanted}", cluster.resources().def(*r).name);
                        vec![p.add_set(cluster, name, members)]
                    }
                }
                NodeSetValue::VarAttrAny(r) => cluster
                    .sets_by(*r, all, true)
                    .into_iter()
                    .map(|(v, members)| {
                        let name = format!("{}={v}", cluster.resources().def(*r).name);
                        p.add_set(cluster, name, members)
                    })
                    .collect(),
            };
            p.by_value.insert(value, sets);
        }
        p
    }

    fn add_set(&mut self, cluster: &Cluster, name: String, vnodes: Vec<VnodeId>) -> usize {
        let speed = vnodes
            .iter()
            .map(|&v| cluster.vnode(v).speed)
            .fold(f64::INFINITY, f64::min);
        self.sets.push(NodeSet {
            name: Arc::from(name),
            vnodes,
            speed,
        });
        self.sets.len() - 1
    }

    /// The vnode sets whose free capacity the state must track: every set, by index.
    pub fn tracked_sets(&self) -> Vec<Vec<VnodeId>> {
        self.sets.iter().map(|s| s.vnodes.clone()).collect()
    }

    /// The node sets this policy built, in NODESETLIST order (when the list is empty, every
    /// feature set in order of first appearance, or every speed's set, slowest first), as its
    /// runs use them: feature sets include the GLOBAL vnode.
    pub fn pools(&self) -> Vec<BuiltPool<'_>> {
        let indices: Vec<usize> = if self.settings.list.is_empty() {
            self.every_set_of(self.settings.attribute).to_vec()
        } else {
            self.settings
                .list
                .iter()
                .filter_map(|v| self.by_value.get(v))
                .flatten()
                .copied()
                .collect()
        };
        vec![BuiltPool {
            source: PoolSource::NodeSets,
            keys: Vec::new(),
            sets: indices
                .into_iter()
                .map(|i| BuiltSet {
                    name: &self.sets[i].name,
                    vnodes: &self.sets[i].vnodes,
                })
                .collect(),
        }]
    }

    /// Every set of `attribute`, as an empty NODESETLIST stands for it: every speed's set,
    /// slowest first, every reservation's, every class's, or every feature's.
    fn every_set_of(&self, attribute: Option<NodeSetAttribute>) -> &[usize] {
        match attribute {
            Some(NodeSetAttribute::ProcSpeed) => &self.all_speeds,
            Some(NodeSetAttribute::Reservation) => &self.all_reservations,
            Some(NodeSetAttribute::Class) => &self.all_classes,
            _ => &self.all_features,
        }
    }

    /// Registers this policy's sets with `state`, before the run.
    pub fn track(&self, state: &mut ClusterState) {
        state.track_sets(&self.tracked_sets());
    }

    /// The settings in force for `request`, or `None` when node sets are off for it (a job
    /// with a host list skips them, R4b).
    fn effective<'a>(&'a self, request: &'a Request) -> Option<Effective<'a>> {
        if request.hostlist.is_some() {
            return None;
        }
        let job = request.nodeset.as_ref();
        let g = &self.settings;
        let policy = job.and_then(|n| n.policy).or(g.policy)?;
        let attribute = job.and_then(|n| n.attribute).or(g.attribute);
        let values: &[NodeSetValue] = match job {
            Some(n) if !n.values.is_empty() => &n.values,
            _ => &g.list,
        };
        // Without an attribute, the values say what they are.
        let attribute = attribute.unwrap_or_else(|| {
            values
                .iter()
                .find_map(|v| match v {
                    NodeSetValue::Feature(_) => None,
                    NodeSetValue::VarAttrValue(..) | NodeSetValue::VarAttrAny(_) => {
                        Some(NodeSetAttribute::VarAttr)
                    }
                    NodeSetValue::ProcSpeed(_) => Some(NodeSetAttribute::ProcSpeed),
                    NodeSetValue::Reservation(_) => Some(NodeSetAttribute::Reservation),
                    NodeSetValue::Class(_) => Some(NodeSetAttribute::Class),
                })
                .unwrap_or(NodeSetAttribute::Feature)
        });
        if attribute == NodeSetAttribute::VarAttr && values.is_empty() {
            // A VARATTR node set with no values: as if the job asked for none (R5).
            return None;
        }
        let allowed = |f: Option<bool>| f.filter(|_| g.allow_per_job_is_optional);
        if g.options.job_optional_skips_sets
            && allowed(job.and_then(|n| n.is_optional)) == Some(true)
        {
            return None;
        }
        let job_delay = job
            .and_then(|n| n.delay)
            .filter(|_| g.allow_per_job_is_optional && !g.options.refuse_per_job_delay);
        let optional = allowed(job.and_then(|n| n.is_optional))
            .or(job_delay.map(|d| d.0 == 0))
            .unwrap_or(g.is_optional);
        Some(Effective {
            policy,
            values,
            optional,
            delay: job_delay.unwrap_or(g.delay),
            attribute,
        })
    }

    /// The candidate sets of `values`, in list order, into `self.candidates` (every set of
    /// `attribute` when the list is empty); only the bound set, if the job is bound to one.
    fn fill_candidates(&mut self, values: &[NodeSetValue], attribute: NodeSetAttribute) {
        self.candidates.clear();
        if values.is_empty() {
            let mut candidates = std::mem::take(&mut self.candidates);
            candidates.extend_from_slice(self.every_set_of(Some(attribute)));
            self.candidates = candidates;
        } else {
            for value in values {
                if let Some(sets) = self.by_value.get(value) {
                    self.candidates.extend_from_slice(sets);
                }
            }
        }
        if let Some(bound) = &self.bound {
            let sets = &self.sets;
            self.candidates.retain(|&c| sets[c].name == *bound);
        }
    }

    /// The task count of a request of the common shape, one ncpu per task and nothing else,
    /// shared, without a node filter, with the tallies of every set in `view`: how it fits a
    /// set is read from the set's tallies. Asked once per search, not once per set
    /// ([`Self::fit`] is asked of every set), and so is where the view keeps its tallies.
    fn tallied_tasks<'v>(
        request: &Request,
        chunks: &[Chunk],
        filter: Option<&FilterExpr>,
        view: &'v Scratch<'_>,
    ) -> Option<Tallied<'v>> {
        let count = match chunks {
            [chunk]
                if filter.is_none()
                    && request.sharing == Sharing::Shared
                    && matches!(request.arrangement, Arrangement::Free | Arrangement::Pack)
                    && chunk.constraints.is_empty()
                    && chunk
                        .amounts
                        .iter()
                        .enumerate()
                        .all(|(c, &a)| a == u64::from(c == ConsumableIdx::NCPUS.index())) =>
            {
                chunk.count
            }
            _ => return None,
        };
        Some(Tallied {
            count,
            tallies: view.tracked_sets_free(),
        })
    }

    /// How `chunks` fit in `view` on what `on` names. `tallied` is [`Self::tallied_tasks`] of
    /// the request: with it, the fit on a node set is read from the set's tallies.
    #[inline]
    fn fit(
        &self,
        tallied: Option<Tallied<'_>>,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        on: FitOn<'_>,
    ) -> Fit {
        let vnodes = match on {
            FitOn::Set(s) => {
                // Set `s`'s tallies are the state's `s`th ([`Self::tracked_sets`]): read
                // without the set itself, which a search of every set waited on memory to
                // read for its index alone.
                if let Some(t) = tallied {
                    let tasks = t.tallies.of(s)[ConsumableIdx::NCPUS.index()];
                    return Fit {
                        tasks,
                        feasible: tasks >= u64::from(t.count),
                    };
                }
                &self.sets[s].vnodes
            }
            FitOn::Vnodes(vnodes) => vnodes,
        };
        Self::fit_on_vnodes(request, chunks, view, filter, vnodes)
    }

    /// [`Self::fit`] asked vnode by vnode: kept out of line, so that the tallied case, asked
    /// of every set of every search, is a few instructions where it is asked.
    #[inline(never)]
    fn fit_on_vnodes(
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        vnodes: &[VnodeId],
    ) -> Fit {
        let n_cons = view.cluster().resources().n_consumables();
        let cluster = view.cluster();
        let mut total = 0;
        let mut feasible = true;
        for chunk in chunks {
            let mut tasks = 0u64;
            for &v in vnodes {
                if !view.eligible().contains(v.index())
                    || (request.sharing.is_exclusive() && view.n_jobs(v) > 0)
                    || !chunk
                        .constraints
                        .iter()
                        .all(|k| k.matches(cluster.vnode(v).attr(k.resource)))
                    || filter.is_some_and(|f| !filter_holds(f, view, v))
                {
                    continue;
                }
                let mut here = u64::from(chunk.count);
                for (c, &need) in chunk.amounts.iter().enumerate().take(n_cons) {
                    if let Some(n) = view.free(v, ConsumableIdx(c as u8)).checked_div(need) {
                        here = here.min(n);
                    }
                }
                if matches!(
                    request.arrangement,
                    Arrangement::Scatter | Arrangement::VScatter
                ) {
                    here = here.min(1);
                }
                tasks += here;
            }
            feasible &= tasks >= u64::from(chunk.count);
            total += tasks;
        }
        Fit {
            tasks: total,
            feasible,
        }
    }

    /// Whether `view` has everything free: a refusal there means "never".
    fn idle(&self, view: &Scratch<'_>) -> bool {
        view.exclusive_with_room() == 0
            && self
                .capacity
                .iter()
                .enumerate()
                .all(|(c, &cap)| view.free_total(ConsumableIdx(c as u8)) == cap)
    }

    /// One select specification under one node filter.
    fn place_select(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        relaxed: bool,
    ) -> Option<Allocation> {
        if let Some(hostlist) = &request.hostlist {
            return self.on_hosts(request, hostlist, chunks, view, filter);
        }
        let effective = if relaxed {
            None
        } else {
            self.effective(request)
        };
        let Some(eff) = effective else {
            return self.anywhere(request, chunks, view, filter, None);
        };
        let (policy, optional, attribute) = (eff.policy, eff.optional, eff.attribute);
        let filled = self.bound.is_none()
            && self
                .candidates_for
                .as_ref()
                .is_some_and(|(values, a)| *a == attribute && values[..] == *eff.values);
        if !filled {
            let values = eff.values.to_vec();
            self.fill_candidates(&values, attribute);
            self.candidates_for = self.bound.is_none().then_some((values, attribute));
        }
        let plus = self.settings.plus;
        let placed = match policy {
            NodeSetPolicy::AnyOf if plus == Some(NodeSetPlus::SpanEvenly) => {
                self.span_evenly(request, chunks, view, filter)
            }
            NodeSetPolicy::AnyOf => self.any_of(request, chunks, view, filter),
            NodeSetPolicy::OneOf | NodeSetPolicy::FirstOf => {
                let first_fit_only = policy == NodeSetPolicy::FirstOf
                    && self.settings.options.firstof_forces_firstfit;
                let by_speed = attribute == NodeSetAttribute::ProcSpeed;
                self.one_of(request, chunks, view, filter, first_fit_only, by_speed)
            }
        };
        if placed.is_some() {
            return placed;
        }
        // Under DELAY or SPANEVENLY the fallback is the discipline's to choose (a relaxation).
        let timed = self.relaxation_of(request).is_some();
        let failed_inside = std::mem::take(&mut self.failed_inside_feasible_set);
        let may_span = self.bound.is_none()
            && (optional || (failed_inside && self.settings.options.mandatory_fallback));
        if !timed && may_span {
            let spanned = self.spanned.clone();
            return self.anywhere(request, chunks, view, filter, Some(spanned));
        }
        self.refusal = Some(Refusal::NoSet {
            never: self.idle(view),
        });
        None
    }

    /// A job with a host list, which skips node sets (R4b): first fit over the listed hosts'
    /// vnodes. An exact list must use every listed host: when first fit leaves one unused,
    /// the chunks are scattered over the hosts instead (one chunk per host first), and the
    /// job waits when that does not cover them either.
    fn on_hosts(
        &mut self,
        request: &Request,
        hostlist: &HostList,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
    ) -> Option<Allocation> {
        let cluster = view.cluster();
        let mut hosts = Vec::with_capacity(hostlist.hosts.len());
        for name in hostlist.hosts.iter() {
            let Some(&h) = self.host_ids().get(name) else {
                self.refusal = Some(Refusal::UnknownHost);
                return None;
            };
            hosts.push(h);
        }
        hosts.sort_unstable();
        hosts.dedup();
        let mut vnodes: Vec<VnodeId> = hosts
            .iter()
            .flat_map(|&h| cluster.host_vnodes(h).iter().copied())
            .collect();
        vnodes.sort_unstable();
        let covers = |a: &Allocation| {
            hostlist.form == HostListForm::Subset
                || hosts
                    .iter()
                    .all(|&h| a.vnodes().any(|v| cluster.vnode(v).host == h))
        };
        let mut placed = self
            .first_fit
            .place_within(chunks, request, filter, view, Some(&vnodes))
            .filter(&covers);
        if placed.is_none() && hostlist.form == HostListForm::Exact {
            let scattered = Request {
                arrangement: Arrangement::Scatter,
                ..request.clone()
            };
            placed = self
                .first_fit
                .place_within(chunks, &scattered, filter, view, Some(&vnodes))
                .filter(&covers);
        }
        match placed {
            Some(mut a) => {
                a.label = Some(self.hostlist_label.clone());
                Some(a)
            }
            None => {
                self.refusal = Some(Refusal::HostList {
                    never: self.idle(view),
                });
                None
            }
        }
    }

    /// First fit over every vnode.
    fn anywhere(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        label: Option<Arc<str>>,
    ) -> Option<Allocation> {
        match self
            .first_fit
            .place_within(chunks, request, filter, view, None)
        {
            Some(mut a) => {
                a.label = label;
                Some(a)
            }
            None => {
                self.refusal = Some(Refusal::NoResources {
                    never: self.idle(view),
                });
                None
            }
        }
    }

    /// ONEOF / FIRSTOF: the set the priority type chooses among the feasible ones (R6, R10);
    /// PROCSPEED sets (`by_speed`) by §5's algorithm.
    #[allow(clippy::too_many_arguments)]
    fn one_of(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        first_fit_only: bool,
        by_speed: bool,
    ) -> Option<Allocation> {
        let ptype = if first_fit_only {
            PriorityType::FirstFit
        } else {
            self.settings.priority_type
        };
        if by_speed
            || (ptype == PriorityType::MinLoss && self.settings.options.minloss == MinLoss::Speed)
        {
            return self.by_speed(request, chunks, view, filter, ptype);
        }
        let mut best: Option<(usize, u64)> = None;
        // AFFINITY's fallback when every feasible set has a negative-affinity vnode.
        let mut first_feasible: Option<(usize, u64)> = None;
        let tallied = Self::tallied_tasks(request, chunks, filter, view);
        for &s in &self.candidates {
            let fit = self.fit(tallied, request, chunks, view, filter, FitOn::Set(s));
            if !fit.feasible {
                continue;
            }
            if ptype == PriorityType::Affinity {
                first_feasible.get_or_insert((s, fit.tasks));
                if shuns(view, &self.sets[s].vnodes) {
                    continue;
                }
            }
            let better = match (best, ptype) {
                (None, _) => true,
                (Some((_, b)), PriorityType::BestFit) => fit.tasks < b,
                (Some((_, b)), PriorityType::WorstFit) => fit.tasks > b,
                (Some(_), PriorityType::MinLoss) => {
                    self.settings.options.minloss == MinLoss::LastFeasible
                }
                (
                    Some(_),
                    PriorityType::FirstFit | PriorityType::Affinity | PriorityType::BestResource,
                ) => false,
            };
            if better {
                best = Some((s, fit.tasks));
            }
            if matches!(
                ptype,
                PriorityType::FirstFit | PriorityType::Affinity | PriorityType::BestResource
            ) {
                break;
            }
        }
        let (s, _) = best.or(first_feasible)?;
        let (first_fit, set) = (&mut self.first_fit, &self.sets[s]);
        let placed = first_fit.place_within(chunks, request, filter, view, Some(&set.vnodes));
        self.failed_inside_feasible_set = placed.is_none();
        let mut a = placed?;
        a.label = Some(set.name.clone());
        a.within = Within::Set(s as u32);
        Some(a)
    }

    /// §5's algorithm over sets of (at least) one speed each, in list order: set i may borrow
    /// the tasks of the later sets up to NODESETTOLERANCE faster, which gives its effective
    /// size `eff` and its speed `loss`; among the sets whose `eff` holds the job, `ptype`
    /// chooses (MINLOSS the least loss, BESTFIT/WORSTFIT the smallest/largest `eff`,
    /// BESTRESOURCE the fastest, the others the first; ties to list order). The job is placed
    /// on the chosen set's and the borrowed sets' vnodes within the documented speed bound
    /// (unless [`NodeSetOptions::tolerance_unbounded`]).
    fn by_speed(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        ptype: PriorityType,
    ) -> Option<Allocation> {
        let need: u64 = chunks.iter().map(|c| u64::from(c.count)).sum();
        let tol = self.settings.tolerance.max(0.0);
        let tallied = Self::tallied_tasks(request, chunks, filter, view);
        let fits: Vec<u64> = self
            .candidates
            .iter()
            .map(|&s| {
                self.fit(tallied, request, chunks, view, filter, FitOn::Set(s))
                    .tasks
            })
            .collect();
        // (candidate, loss, effective tasks, speed, last borrowed candidate)
        let mut best: Option<(usize, f64, u64, f64, usize)> = None;
        for i in 0..self.candidates.len() {
            let v_i = self.sets[self.candidates[i]].speed;
            let (mut eff, mut loss, mut last) = (fits[i], 0.0, i);
            if tol > 0.0 {
                for (k, (&s, &fit_k)) in self.candidates.iter().zip(&fits).enumerate().skip(i + 1) {
                    let v_k = self.sets[s].speed;
                    if (v_k - v_i) / v_i > tol {
                        break;
                    }
                    if eff < need {
                        loss += (v_k - v_i) * fit_k.min(need - eff) as f64;
                    }
                    eff += fit_k;
                    last = k;
                }
            }
            if eff < need {
                continue;
            }
            let better = best.is_none_or(|(_, best_loss, best_eff, best_speed, _)| match ptype {
                PriorityType::MinLoss => loss < best_loss,
                PriorityType::BestFit => eff < best_eff,
                PriorityType::WorstFit => eff > best_eff,
                PriorityType::BestResource => v_i > best_speed,
                PriorityType::FirstFit | PriorityType::Affinity => false,
            });
            if better {
                best = Some((i, loss, eff, v_i, last));
            }
        }
        let (i, _, _, _, last) = best?;
        let v_i = self.sets[self.candidates[i]].speed;
        let unbounded = self.settings.options.tolerance_unbounded;
        let cluster = view.cluster();
        self.union.clear();
        for &s in &self.candidates[i..=last] {
            self.union
                .extend(self.sets[s].vnodes.iter().copied().filter(|&v| {
                    let speed = cluster.vnode(v).speed;
                    speed >= v_i && (unbounded || speed <= v_i * (1.0 + tol))
                }));
        }
        self.union.sort_unstable();
        self.union.dedup();
        let union = std::mem::take(&mut self.union);
        let placed = self
            .first_fit
            .place_within(chunks, request, filter, view, Some(&union));
        self.union = union;
        self.failed_inside_feasible_set = placed.is_none();
        let mut a = placed?;
        a.label = Some(self.sets[self.candidates[i]].name.clone());
        a.within = Within::Borrowing(self.candidates[i] as u32);
        Some(a)
    }

    /// The union of the candidate sets, each vnode once, in vnode order.
    fn fill_union(&mut self) {
        self.union.clear();
        for &s in &self.candidates {
            self.union.extend_from_slice(&self.sets[s].vnodes);
        }
        self.union.sort_unstable();
        self.union.dedup();
    }

    /// ANYOF: the union of the listed sets (R9).
    fn any_of(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
    ) -> Option<Allocation> {
        self.fill_union();
        let union = std::mem::take(&mut self.union);
        let placed = if self
            .fit(None, request, chunks, view, filter, FitOn::Vnodes(&union))
            .feasible
        {
            let placed = self
                .first_fit
                .place_within(chunks, request, filter, view, Some(&union));
            self.failed_inside_feasible_set = placed.is_none();
            placed
        } else {
            None
        };
        self.union = union;
        let mut a = placed?;
        let used = self.sets_used(&a);
        let names: Vec<&str> = used.iter().map(|&s| &*self.sets[s as usize].name).collect();
        a.label = Some(Arc::from(names.join("+")));
        a.within = Within::Sets(used.into());
        Some(a)
    }

    /// The listed sets an ANYOF allocation uses, each vnode counted in the first it is in, in
    /// list order.
    fn sets_used(&self, a: &Allocation) -> Vec<u32> {
        let mut used = vec![false; self.candidates.len()];
        for v in a.vnodes() {
            if let Some(i) = self
                .candidates
                .iter()
                .position(|&s| self.sets[s].vnodes.binary_search(&v).is_ok())
            {
                used[i] = true;
            }
        }
        self.candidates
            .iter()
            .zip(&used)
            .filter(|(_, u)| **u)
            .map(|(&s, _)| s as u32)
            .collect()
    }

    /// SPANEVENLY (R21): for k = 1, 2, ... dividing the task count, the first k sets (in
    /// priority-type order) that each still hold the share; exactly the share from each.
    fn span_evenly(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
    ) -> Option<Allocation> {
        // Evenness is counted in tasks; a request of several chunk shapes is split as a whole.
        let [chunk] = chunks else {
            return None;
        };
        let n = chunk.count;
        let tallied = Self::tallied_tasks(request, chunks, filter, view);
        let mut order: Vec<(u64, usize)> = self
            .candidates
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let fit = self.fit(tallied, request, chunks, view, filter, FitOn::Set(s));
                (fit.tasks, i)
            })
            .collect();
        let ptype = if self.settings.options.spanevenly_list_order {
            PriorityType::FirstFit
        } else {
            self.settings.priority_type
        };
        match ptype {
            PriorityType::BestFit => order.sort_by_key(|&(t, i)| (t, i)),
            PriorityType::WorstFit => order.sort_by_key(|&(t, i)| (std::cmp::Reverse(t), i)),
            _ => {}
        }
        let n_cons = view.cluster().resources().n_consumables();
        let mut buf = std::mem::take(&mut self.local);
        let mut result = None;
        for k in (1..=self.candidates.len() as u32).filter(|k| n % k == 0) {
            let share = Chunk {
                count: n / k,
                ..chunk.clone()
            };
            let mut local = Scratch::new(view.base(), &mut buf);
            local.copy_from(view);
            let mut whole = Allocation::new(request.sharing);
            let mut names = Vec::new();
            let mut ids = Vec::new();
            for &(_, i) in &order {
                let set = &self.sets[self.candidates[i]];
                let placed = self.first_fit.place_within(
                    std::slice::from_ref(&share),
                    request,
                    filter,
                    &local,
                    Some(&set.vnodes),
                );
                if let Some(a) = placed {
                    local.take(&a);
                    for (v, amounts) in a.parts(n_cons) {
                        whole.add(v, amounts);
                    }
                    names.push(&*set.name);
                    ids.push(self.candidates[i] as u32);
                    if names.len() == k as usize {
                        break;
                    }
                }
            }
            if names.len() == k as usize {
                whole.label = Some(Arc::from(names.join("+")));
                whole.within = Within::Sets(ids.into());
                result = Some(whole);
                break;
            }
        }
        self.local = buf;
        result
    }

    /// The relaxation (DELAY or SPANEVENLY) of `request`, if it has one.
    fn relaxation_of(&self, request: &Request) -> Option<Relaxation> {
        let eff = self.effective(request)?;
        match self.settings.plus? {
            NodeSetPlus::Delay if eff.delay.0 > 0 => Some(Relaxation {
                delay: eff.delay,
                lasts: if self.settings.options.delay_sticky {
                    RelaxationLasts::ForGood
                } else {
                    RelaxationLasts::EachPass
                },
                wait: match (
                    self.settings.options.delay_mode,
                    self.settings.options.delay_reference,
                ) {
                    (DelayMode::Anchored, _) => RelaxationWait::Anchored,
                    (DelayMode::Predictive, DelayReference::Now) => RelaxationWait::FromNow,
                    (DelayMode::Predictive, DelayReference::EarliestUnconstrained) => {
                        RelaxationWait::FromEarliestRelaxed
                    }
                },
            }),
            NodeSetPlus::SpanEvenly if eff.policy == NodeSetPolicy::AnyOf => Some(Relaxation {
                delay: eff.delay,
                lasts: RelaxationLasts::ForGood,
                wait: RelaxationWait::FromEarliestRelaxed,
            }),
            _ => None,
        }
    }

    fn place_any(
        &mut self,
        request: &Request,
        view: &Scratch<'_>,
        relaxed: bool,
    ) -> Option<Allocation> {
        self.refusal = None;
        super::first_alternative(request, |chunks, filter| {
            self.place_select(request, chunks, view, filter, relaxed)
        })
    }
}

/// Whether a set (its `vnodes`, in vnode order) has an eligible vnode for which the job being
/// placed has negative affinity: AFFINITY passes such a set over (R10; positive affinity is
/// not rewarded).
fn shuns(view: &Scratch<'_>, vnodes: &[VnodeId]) -> bool {
    view.affinity().iter().any(|&(v, affinity)| {
        affinity == Affinity::Negative
            && view.eligible().contains(v.index())
            && vnodes.binary_search(&v).is_ok()
    })
}

/// `vnodes` with the GLOBAL vnodes added, in vnode order.
fn with_globals(mut vnodes: Vec<VnodeId>, globals: &[VnodeId]) -> Vec<VnodeId> {
    vnodes.extend_from_slice(globals);
    vnodes.sort_unstable();
    vnodes.dedup();
    vnodes
}

impl PlacementPolicy for MoabNodeSets {
    fn name(&self) -> String {
        "moab-nodesets".to_owned()
    }

    fn supports(&self) -> &'static [RequestFeature] {
        &[RequestFeature::NodeSets, RequestFeature::HostList]
    }

    /// Beyond the features, a host list must name hosts the cluster has.
    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        if let Some(feature) = request.first_unsupported(self.supports()) {
            return Some(feature.describe());
        }
        let unknown = request
            .hostlist
            .as_ref()
            .is_some_and(|h| h.hosts.iter().any(|n| !self.host_ids().contains_key(n)));
        unknown.then_some("a host list (hostlist=) naming a host the cluster does not have")
    }

    fn refusal(&self) -> Option<Arc<str>> {
        self.refusal.map(|r| self.refusal_texts[r.index()].clone())
    }

    fn explains_refusals(&self) -> bool {
        true
    }

    /// Set sizes, the choice and first fit all read only the view.
    fn depends_only_on_state(&self) -> bool {
        true
    }

    /// A job labelled with sets (`A`, or `cu1+cu2` under ANYOF) runs inside them; `spanned`
    /// jobs may span, and MINLOSS by speed may borrow vnodes from other sets.
    fn check_within_label(
        &self,
        _request: &Request,
        allocation: &Allocation,
    ) -> Result<(), String> {
        super::within_sets(allocation, |i| {
            let set = &self.sets[i as usize];
            (&*set.name, set.vnodes.as_slice())
        })
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        self.place_any(request, view, false)
    }

    fn constraints(&mut self) -> Option<&mut dyn SetConstraints> {
        Some(self)
    }
}

/// NODESETPLUS DELAY and SPANEVENLY relax a job's sets; VARATTR binds it to a value.
impl SetConstraints for MoabNodeSets {
    fn relaxation(&self, request: &Request) -> Option<Relaxation> {
        self.relaxation_of(request)
    }

    fn place_relaxed(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        let mut a = self.place_any(request, view, true)?;
        a.label = Some(self.spanned.clone());
        Some(a)
    }

    /// A VARATTR job is bound to the value it started with (`name=value`), kept across a
    /// requeue (the spec's REQATTR binding).
    fn binding(&self, request: &Request, allocation: &Allocation) -> Option<Arc<str>> {
        let (Within::Set(s) | Within::Borrowing(s)) = allocation.within else {
            return None;
        };
        let varattr = self
            .effective(request)
            .is_some_and(|eff| eff.attribute == NodeSetAttribute::VarAttr);
        varattr.then(|| self.sets[s as usize].name.clone())
    }

    /// Only the bound set, and no spanning.
    fn place_bound(
        &mut self,
        request: &Request,
        view: &Scratch<'_>,
        bound: &str,
    ) -> Option<Allocation> {
        self.bound = Some(Arc::from(bound));
        let placed = self.place(request, view);
        self.bound = None;
        placed
    }
}

#[cfg(test)]
mod tests {
    use super::Refusal;

    /// A refusal's comment is read at its index: every refusal must be at its own, or a job
    /// would be told another refusal's words.
    #[test]
    fn each_refusal_is_at_its_index_with_its_own_words() {
        for (i, r) in Refusal::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
        let mut texts: Vec<&str> = Refusal::ALL.map(Refusal::text).to_vec();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), Refusal::ALL.len());
    }
}
