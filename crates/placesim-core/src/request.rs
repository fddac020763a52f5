//! The lowered resource request that policies consume.
//!
//! Request *syntax* (PBS select/place, node_filter, Moab nodeset) is parsed elsewhere
//! (`placesim-request`) and lowered into this form, so that no policy ever sees request text.
//! Amounts are per chunk, in each consumable's base unit (counts, or KiB for sizes), indexed by
//! [`crate::resource::ConsumableIdx`]; resources are named by [`ResourceId`].

use crate::ids::ResourceId;
use crate::resource::{AttrValue, CmpOp, ConsumableIdx};
use crate::time::SimDuration;

/// A condition on a vnode's non-consumable resource that a chunk needs (`model=skylake`,
/// `color!=green`, `speed>=2`). Plain PBS knows only `=`; the other operators are the
/// extension of design seed 001.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// The non-consumable resource.
    pub resource: ResourceId,
    /// How the vnode's value is compared with `value`.
    pub op: CmpOp,
    /// The requested value, of the resource's kind.
    pub value: AttrValue,
}

impl Constraint {
    /// Whether a vnode whose value of the resource is `have` (None when unset) satisfies this.
    pub fn matches(&self, have: Option<&AttrValue>) -> bool {
        self.op.matches(have, &self.value)
    }
}

/// `N` identical chunks, each needing the same amounts on one vnode.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// How many chunks of this shape.
    pub count: u32,
    /// What each chunk needs, one amount per consumable slot.
    pub amounts: Vec<u64>,
    /// Conditions every vnode holding one of these chunks must meet.
    pub constraints: Vec<Constraint>,
    /// Per-chunk grouping (extension, seed 000): every chunk of this complex goes in one
    /// placement set of this resource.
    pub group: Option<ResourceId>,
}

impl Chunk {
    /// `count` chunks needing `amounts`, with no conditions and no grouping.
    pub fn new(count: u32, amounts: Vec<u64>) -> Chunk {
        Chunk {
            count,
            amounts,
            constraints: Vec::new(),
            group: None,
        }
    }
}

/// How chunks may be spread over vnodes (PBS `place=` arrangement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Arrangement {
    /// Any vnodes; several chunks may share a vnode while amounts allow. PBS's default.
    #[default]
    Free,
    /// Every chunk on one host.
    Pack,
    /// At most one chunk per host.
    Scatter,
    /// At most one chunk per vnode.
    VScatter,
}

/// Whether the job's vnodes may be shared with other jobs (PBS `place=` sharing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sharing {
    /// Vnodes may hold other jobs while amounts allow.
    #[default]
    Shared,
    /// Every chosen vnode must hold no other job, and holds no other job while this one runs.
    Excl,
    /// As `Excl`, and every vnode of each chosen host is the job's too.
    ExclHost,
}

impl Sharing {
    /// Whether vnodes held this way admit no other job.
    #[inline]
    pub fn is_exclusive(self) -> bool {
        self != Sharing::Shared
    }
}

/// Which Moab node-set policy a job asks for (`nodeset=POLICY:...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSetPolicy {
    /// All of the job's nodes in one set.
    OneOf,
    /// The job's nodes from the union of the listed sets.
    AnyOf,
    /// One set, taken from the first that matches (≡ ONEOF by default).
    FirstOf,
}

/// What Moab node sets are built from (`nodeset=...:ATTRIBUTE:...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeSetAttribute {
    /// Node features: a string_array resource (`features` by convention).
    Feature,
    /// Generic variable attributes: `name=value` or `name` (one set per value).
    VarAttr,
    /// Processor speed (Maui's PROCSPEED): one set per speed, the vnode's relative `speed`.
    ProcSpeed,
    /// Moab reservations: one set per listed reservation, its host list's vnodes
    /// (membership ignores the reservation's window, and grants no access: R5's \[DEC\]).
    Reservation,
    /// Classes (Moab's source): one set per class, the vnodes that carry it.
    Class,
}

/// A vnode speed as a node-set value: positive and finite, so that it can be compared and
/// hashed exactly (two values are one set only when they are the same number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpeedValue(u64);

impl SpeedValue {
    /// `speed` as a value, or `None` unless it is positive and finite.
    pub fn new(speed: f64) -> Option<SpeedValue> {
        // Positive finite doubles order as their bit patterns do, so the derived order is the
        // order of speeds.
        (speed.is_finite() && speed > 0.0).then(|| SpeedValue(speed.to_bits()))
    }

    /// The speed.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// One entry of a node-set list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeSetValue {
    /// A feature name (FEATURE).
    Feature(String),
    /// `name=value`: the nodes with that value (VARATTR).
    VarAttrValue(ResourceId, String),
    /// `name`: one set per distinct value (VARATTR).
    VarAttrAny(ResourceId),
    /// The vnodes of exactly this speed (PROCSPEED).
    ProcSpeed(SpeedValue),
    /// The vnodes of the Moab reservation of this name (RESERVATION).
    Reservation(String),
    /// The vnodes that carry this class (CLASS).
    Class(String),
}

/// A job's own Moab node-set request (`-l nodeset=`, `nodesetisoptional=`, `nodesetdelay=`).
/// Fields left `None` fall back to the class default and then the global parameters, field by
/// field (the spec's rule R3).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NodeSetRequest {
    /// The policy, if the job gave one.
    pub policy: Option<NodeSetPolicy>,
    /// The attribute, if the job gave one.
    pub attribute: Option<NodeSetAttribute>,
    /// The list of sets; empty means every value.
    pub values: Vec<NodeSetValue>,
    /// `nodesetisoptional`, if the job gave it.
    pub is_optional: Option<bool>,
    /// `nodesetdelay`, if the job gave it.
    pub delay: Option<SimDuration>,
}

impl NodeSetRequest {
    /// This request's fields over `default`'s, field by field: what a job's own node-set
    /// fields make of its class's DEFAULT.NODESET (a job that gives only
    /// `nodesetisoptional` keeps the class's policy, attribute and list).
    pub fn over(self, default: &NodeSetRequest) -> NodeSetRequest {
        NodeSetRequest {
            policy: self.policy.or(default.policy),
            attribute: self.attribute.or(default.attribute),
            values: if self.values.is_empty() {
                default.values.clone()
            } else {
                self.values
            },
            is_optional: self.is_optional.or(default.is_optional),
            delay: self.delay.or(default.delay),
        }
    }
}

/// A node_filter expression (extension, seed 003), evaluated per vnode.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterExpr {
    /// `res OP value` over the vnode's available or assigned amount or property.
    Compare {
        /// The resource.
        resource: ResourceId,
        /// Whether it reads `resources_assigned` (true) or `resources_available` (false).
        assigned: bool,
        /// The operator.
        op: CmpOp,
        /// The value compared against.
        value: AttrValue,
    },
    /// Both hold.
    And(Box<FilterExpr>, Box<FilterExpr>),
    /// Either holds.
    Or(Box<FilterExpr>, Box<FilterExpr>),
    /// It does not hold.
    Not(Box<FilterExpr>),
}

/// How a Moab host list binds a job (`hostlist=`; Moab's resource manager extension HOSTLIST).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostListForm {
    /// `hostlist=a+b`: exactly these hosts, every one of them used.
    Exact,
    /// `hostlist=*a+b`: only these hosts, not necessarily all.
    Subset,
}

/// A Moab job's explicit host list, which bypasses node sets (the spec's R4b).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostList {
    /// Exact or subset.
    pub form: HostListForm,
    /// The host names, in the order given.
    pub hosts: std::sync::Arc<[String]>,
}

/// A job's request: chunks in select order plus how to place them.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Chunk complexes of the first (preferred) select specification, placed in this order
    /// with no backtracking, as PBS does.
    pub chunks: Vec<Chunk>,
    /// Further select specifications joined by `||` (extension, seed 001), tried in order
    /// after `chunks`. Only the first is used to calendar the job.
    pub alternatives: Vec<Vec<Chunk>>,
    /// How chunks are spread.
    pub arrangement: Arrangement,
    /// Whether vnodes are shared.
    pub sharing: Sharing,
    /// `place=group=R`: the job's own placement-set key.
    pub group: Option<ResourceId>,
    /// node_filter alternatives, split at top-level `or` and tried one by one (seed 003);
    /// empty when the job has no filter.
    pub node_filter: Vec<FilterExpr>,
    /// The job's Moab node-set request, if any.
    pub nodeset: Option<NodeSetRequest>,
    /// The job's Moab host list, if any.
    pub hostlist: Option<HostList>,
    /// The PBS queue the job is in (an index into the scenario's queues), which decides the
    /// vnodes it may use and its placement pool; none for the default queue.
    pub queue: Option<u32>,
    /// The Moab class the job is in (an index into the scenario's `[[moab.class]]`), whose
    /// DEFAULT.NODESET and limits apply to it and which is its class credential; none for
    /// no class.
    pub class: Option<u32>,
    /// What a job with this request counts against run limits, which depends on the job's
    /// user, group, project and queue as well as on its amounts: jobs that differ there get
    /// requests of their own ([`crate::Workload::with_limit_draws`]). `None` under no limit.
    pub limit_draws: Option<std::sync::Arc<[crate::state::LimitDraw]>>,
    /// What a job with this request counts, from its submission to its end, against the
    /// limits the server checks when it is submitted (PBS `max_queued`); `None` under none.
    pub queued_draws: Option<std::sync::Arc<[crate::state::LimitDraw]>>,
}

/// A part of the request language that not every placement can honour: each placement
/// declares the ones it supports ([`crate::PlacementPolicy::supports`]), and a run refuses a
/// request that uses another before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFeature {
    /// `place=group=R` or a per-chunk `group=R`: PBS placement sets.
    PlacementSets,
    /// `nodeset=...`: Moab node sets.
    NodeSets,
    /// `hostlist=...`: a Moab host list.
    HostList,
}

impl RequestFeature {
    /// Every feature, in the order a refusal names the first one missing.
    pub const ALL: [RequestFeature; 3] = [
        RequestFeature::PlacementSets,
        RequestFeature::NodeSets,
        RequestFeature::HostList,
    ];

    /// What it is, as a refusal names it.
    pub const fn describe(self) -> &'static str {
        match self {
            RequestFeature::PlacementSets => "placement sets (place=group= or a per-chunk group=)",
            RequestFeature::NodeSets => "Moab node sets (nodeset=)",
            RequestFeature::HostList => "Moab host lists (hostlist=)",
        }
    }
}

impl Request {
    /// Whether this request uses `feature`.
    pub fn uses(&self, feature: RequestFeature) -> bool {
        match feature {
            RequestFeature::PlacementSets => {
                self.group.is_some() || self.chunks_or_alternatives_group()
            }
            RequestFeature::NodeSets => self.nodeset.is_some(),
            RequestFeature::HostList => self.hostlist.is_some(),
        }
    }

    /// The first feature this request uses that is not in `supported`, if any.
    pub fn first_unsupported(&self, supported: &[RequestFeature]) -> Option<RequestFeature> {
        RequestFeature::ALL
            .into_iter()
            .find(|&f| self.uses(f) && !supported.contains(&f))
    }

    /// A request of these chunk complexes, `place=free:shared`, with nothing else.
    pub fn from_chunks(chunks: Vec<Chunk>) -> Request {
        Request {
            chunks,
            alternatives: Vec::new(),
            arrangement: Arrangement::Free,
            sharing: Sharing::Shared,
            group: None,
            node_filter: Vec::new(),
            nodeset: None,
            hostlist: None,
            queue: None,
            class: None,
            limit_draws: None,
            queued_draws: None,
        }
    }

    /// `select=n:ncpus=1`: the plain SWF job of `n` processors, with `n_consumables` slots.
    pub fn processors(n: u32, n_consumables: usize) -> Request {
        let mut amounts = vec![0; n_consumables];
        amounts[ConsumableIdx::NCPUS.index()] = 1;
        Request::from_chunks(vec![Chunk::new(n, amounts)])
    }

    /// Whether this is a plain request: one select specification, no conditions, no grouping,
    /// no filter, no node set. Every placement policy can place a plain request.
    pub fn is_plain(&self) -> bool {
        self.alternatives.is_empty()
            && self.queue.is_none()
            && self.group.is_none()
            && self.node_filter.is_empty()
            && self.nodeset.is_none()
            && self
                .chunks
                .iter()
                .all(|c| c.constraints.is_empty() && c.group.is_none())
    }

    /// Whether any chunk complex of any select specification has a per-chunk `group=`.
    pub fn chunks_or_alternatives_group(&self) -> bool {
        self.selects().flatten().any(|c| c.group.is_some())
    }

    /// The select specifications in the order they are tried: `chunks`, then the alternatives.
    pub fn selects(&self) -> impl Iterator<Item = &[Chunk]> {
        std::iter::once(self.chunks.as_slice()).chain(self.alternatives.iter().map(Vec::as_slice))
    }

    /// The total of one consumable over the chunks of the first select specification: what
    /// the job takes from the cluster when it runs as first asked.
    pub fn total(&self, c: ConsumableIdx) -> u64 {
        chunks_total(&self.chunks, c)
    }

    /// Totals of every consumable over the first select specification, written into `out`.
    pub fn totals_into(&self, out: &mut Vec<u64>) {
        chunks_totals_into(&self.chunks, out);
    }
}

/// The total of one consumable over `chunks`.
pub fn chunks_total(chunks: &[Chunk], c: ConsumableIdx) -> u64 {
    chunks
        .iter()
        .map(|ch| u64::from(ch.count) * ch.amounts[c.index()])
        .sum()
}

/// Totals of every consumable over `chunks`, written into `out` (cleared first).
pub fn chunks_totals_into(chunks: &[Chunk], out: &mut Vec<u64>) {
    out.clear();
    let n = chunks.first().map_or(0, |c| c.amounts.len());
    out.resize(n, 0);
    for ch in chunks {
        for (o, a) in out.iter_mut().zip(&ch.amounts) {
            *o += u64::from(ch.count) * a;
        }
    }
}
