//! PBS placement sets, as OpenPBS implements them (../shared/spec/pbs-placement-sets.md), plus
//! the design extensions of seeds 000, 001 and 003.
//!
//! For a request, in order:
//! 1. **Node array.** A job in a queue with associated vnodes may use only those; any other job
//!    only the vnodes associated with no queue (the three association rules, §2.2).
//! 2. **Whole-pool check** (§1.6): the request's totals against the array's free amounts, then
//!    its totals. Failing the first: "Not Running: Insufficient amount of resource: ...";
//!    failing both: "Can Never Run: ...".
//! 3. **Pool** (§2.1): the job's `place=group=R` sets (even with node_group_enable off), else
//!    the queue's pool (its own key, or the server key over its vnodes), else the server's
//!    pool (server key over unassociated vnodes), else none: first fit over the array.
//!    A pool is one flat list of `res=value` sets over all its keys; string_array values put a
//!    vnode in several sets; vnodes lacking a key form `res=""` unless only_explicit_psets.
//! 4. **Order** (§1.3): ascending total ncpus, total mem, free ncpus, free mem; stable, so
//!    creation order breaks ties. Sets are sorted at every evaluation, on the state evaluated
//!    (which is how PBS re-sorts after every run and at every simulated event).
//! 5. **Fit** (§1.4, §1.5): the job runs in the first set that fits dynamically (aggregate
//!    checks on free amounts and free vnodes) and where first-fit placement on its vnodes
//!    succeeds. Otherwise, if some set fits statically (the same checks on totals), the job
//!    waits ("Not Running: Placement set X has too few free resources", X the last set
//!    examined). Otherwise it spans its node array, or with do_not_span_psets never runs
//!    ("Can Never Run: can't fit in the largest placement set, and can't span psets").
//!
//! Extensions (not in OpenPBS; labelled in the output):
//! - `||` alternatives (seed 001): each select specification through steps 2-5 in turn, the
//!   first that places wins. Calendaring uses only the first (the queue discipline asks so).
//! - node_filter (seed 003): each top-level `or` alternative restricts the vnodes considered,
//!   one after another.
//! - per-chunk `group=R` (seed 000): each chunk complex with a set goes in the first set of R
//!   (over the job's node array, sorted as in step 4) where it fits, complexes without one go
//!   anywhere in the array; if a complex fits no set even statically, the whole job is placed
//!   as if it had no per-chunk sets (its pool, then spanning): the tiered spanning.
//!
//! Set metadata is read from the state's set tallies (registered with
//! [`PbsPsets::sets`]), so a decision costs O(sets) plus the first-fit walk inside the
//! chosen set, not O(vnodes).

use super::first_fit::filter_holds;
use super::{BuiltPool, BuiltSet, FirstFit, PoolSource};
use placesim_core::{
    Allocation, Arrangement, Chunk, Cluster, ClusterState, ConsumableIdx, FilterExpr,
    PlacementPolicy, Request, RequestFeature, ResourceId, Scratch, ScratchBuf, SetTallies,
    StateView, VnodeId, Within, chunks_totals_into,
};
use std::collections::HashSet;
use std::sync::Arc;

/// The PBS settings a placement-set policy needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PsetSettings {
    /// Server `node_group_enable`: gates the server and queue keys (not `place=group`).
    pub node_group_enable: bool,
    /// Server `node_group_key`.
    pub server_key: Vec<ResourceId>,
    /// Each queue's own `node_group_key`, by queue index.
    pub queue_keys: Vec<Vec<ResourceId>>,
    /// Per vnode, the queue it is associated with.
    pub vnode_queue: Vec<Option<usize>>,
    /// Scheduler `do_not_span_psets`.
    pub do_not_span: bool,
    /// Scheduler `only_explicit_psets`.
    pub only_explicit: bool,
    /// Resources that jobs name in `place=group=` or a per-chunk `group=`: their sets are
    /// built up front, over every node array.
    pub job_keys: Vec<ResourceId>,
    /// Scheduler `node_sort_key`: the order first fit tries vnodes in, inside every set and
    /// node array too; cluster order when none.
    pub node_order: Option<Arc<[VnodeId]>>,
    /// Scheduler `node_sort_key` on unused or assigned amounts: the order, made again from
    /// the view at each placement, inside every set too (it takes over from `node_order`).
    pub node_sort: Option<Arc<super::NodeSort>>,
    /// The vnodes this scheduler schedules, by index (a PBS multi-scheduler's partition, or
    /// the default scheduler's vnodes in no partition); `None`: every vnode. Its node arrays
    /// and sets hold only these, so that a job wider than them Can Never Run, as in PBS,
    /// where each scheduler knows only its own vnodes.
    pub universe: Option<Arc<[bool]>>,
}

/// One placement set (or node array): its vnodes, its totals, and its tally set.
#[derive(Debug, Clone)]
struct SetInfo {
    name: Arc<str>,
    set: usize,
    vnodes: Vec<VnodeId>,
    /// Capacity per consumable over all member vnodes.
    total: Vec<u64>,
}

/// What a search reads of every set of its pool, per set, kept apart from [`SetInfo`] (88
/// bytes a set, its name and lists behind pointers): a search reads these for all of them and
/// the rest only for the sets with room. Reading every set's `SetInfo` waited on memory: the
/// first load from each took 11 % of the search's `perf` samples on `psets-bench.toml`.
#[derive(Debug, Clone, Copy)]
struct SetKeys {
    /// The ncpus and mem of the set's `total`, PBS's first keys of a set's order.
    total_order: (u64, u64),
    /// Its tallies' index in the state ([`SetInfo::set`]).
    set: usize,
}

/// A set's place in PBS's order of a pool: total ncpus, total mem, free ncpus, free mem, then
/// its index (creation order), all ascending.
type SetOrder = (u64, u64, u64, u64, usize);

/// PBS placement sets over first-fit placement. See the module docs for the algorithm.
#[derive(Debug, Clone)]
pub struct PbsPsets {
    first_fit: FirstFit,
    /// Per vnode: its place in `node_sort_key`'s order, when there is one.
    rank: Option<Vec<u32>>,
    settings: PsetSettings,
    /// How many tally sets the arrays and sets use (their `set` ids are 0..this).
    n_sets: usize,
    /// Node arrays: 0 the unassociated vnodes; then one per queue with vnodes.
    arrays: Vec<SetInfo>,
    /// Per queue: its array.
    array_of_queue: Vec<usize>,
    /// Whether the unassociated array is the whole cluster (first fit may then skip lists).
    array0_is_all: bool,
    sets: Vec<SetInfo>,
    /// Per set of `sets`, what a search reads of every set.
    set_keys: Vec<SetKeys>,
    /// The server pool (over array 0), if any. Pools are shared lists: a placement takes its
    /// pool's sets along while it changes the policy, and copying them was one allocation per
    /// placement.
    server_pool: Option<Pool>,
    /// Per queue, its pool, if any.
    queue_pools: Vec<Option<Pool>>,
    /// `place=group=R` and per-chunk pools: (R, array) to sets.
    job_pools: Vec<((ResourceId, usize), Pool)>,
    refusal: Option<Refusal>,
    /// The text of the last refusal asked for: a job that cannot run is refused for the
    /// same reason pass after pass, and its comment was formatted anew each time (a
    /// twenty-fifth of `scenarios/psets-bench.toml`'s time).
    refusal_text: LastRefusal,
    spanned: Arc<str>,
    order: Vec<std::cmp::Reverse<SetOrder>>,
    /// A search's sets with room for the job's ncpus, gathered without a branch per set.
    roomy: Vec<usize>,
    totals: Vec<u64>,
    local: ScratchBuf,
    /// The cluster's resource definitions, to name resources in comments.
    defs: placesim_core::ResourceDefs,
}

/// A pool: the indices of its sets, and the most ncpus any of them has in all. A job that
/// asks for more fits in none of them, now or ever, and is told so at once, where a search
/// walked every set twice to find that none was large enough.
#[derive(Debug, Default)]
struct PoolSets {
    sets: Box<[usize]>,
    largest_ncpus: u64,
}

type Pool = Arc<PoolSets>;

/// What a set offers a request: free (or total) amounts and vnodes.
struct Offer<'a> {
    amounts: &'a [u64],
    vnodes: u64,
}

/// `key` kept in `largest` if it is larger than what `largest` holds (the last set a search
/// examines, found set by set). Compared and assigned in place: `largest.max(Some(key))` chose
/// between two copies on the stack and read the choice back, a stall at every set.
#[inline(always)]
fn keep_larger(largest: &mut Option<SetOrder>, key: SetOrder) {
    if largest.is_none_or(|l| key > l) {
        *largest = Some(key);
    }
}

/// A set's free offer without a node filter: its tallies, read from every set's as the view
/// keeps them ([`StateView::tracked_sets_free`], looked up once for a whole search).
#[inline(always)]
fn tallied_offer<'a>(set: usize, tallies: SetTallies<'a>, n_cons: usize) -> Offer<'a> {
    let t = tallies.of(set);
    Offer {
        amounts: &t[..n_cons],
        vnodes: t[n_cons],
    }
}

impl PbsPsets {
    /// The first fit it places by within a set.
    pub fn first_fit(&self) -> &FirstFit {
        &self.first_fit
    }

    /// Builds every set the settings can ask for on `cluster`.
    pub fn new(cluster: &Cluster, settings: PsetSettings) -> PbsPsets {
        PbsPsets::numbered_from(cluster, settings, 0)
    }

    /// As [`PbsPsets::new`], with its sets tracked in the state from tally `first_set` on:
    /// the settings of a later period of a timeline, whose sets are tracked beside the
    /// earlier periods' ([`super::PbsTimeline`]).
    pub(crate) fn numbered_from(
        cluster: &Cluster,
        settings: PsetSettings,
        first_set: usize,
    ) -> PbsPsets {
        let n = cluster.n_vnodes();
        let all: Vec<VnodeId> = (0..n)
            .filter(|&i| {
                settings
                    .universe
                    .as_ref()
                    .is_none_or(|u| u.get(i).copied().unwrap_or(false))
            })
            .map(VnodeId::from_index)
            .collect();
        let vq = |v: &VnodeId| settings.vnode_queue.get(v.index()).copied().flatten();
        // Each vnode's place in the node order, to sort every set's members by.
        let rank: Option<Vec<u32>> = settings.node_order.as_ref().map(|order| {
            let mut rank = vec![0u32; n];
            for (r, v) in order.iter().enumerate() {
                rank[v.index()] = r as u32;
            }
            rank
        });
        let mut p = PbsPsets {
            first_fit: match &settings.node_sort {
                Some(sort) => FirstFit::sorted_by_free(sort.clone()),
                None => FirstFit::in_order(settings.node_order.clone()),
            },
            rank,
            n_sets: first_set,
            arrays: Vec::new(),
            array_of_queue: Vec::new(),
            array0_is_all: false,
            sets: Vec::new(),
            set_keys: Vec::new(),
            server_pool: None,
            queue_pools: Vec::new(),
            job_pools: Vec::new(),
            refusal: None,
            refusal_text: LastRefusal::default(),
            spanned: Arc::from("spanned"),
            order: Vec::new(),
            roomy: Vec::new(),
            totals: Vec::new(),
            local: ScratchBuf::default(),
            defs: cluster.resources().clone(),
            settings: settings.clone(),
        };
        let unassoc: Vec<VnodeId> = all.iter().copied().filter(|v| vq(v).is_none()).collect();
        p.array0_is_all = unassoc.len() == n;
        p.add_array(cluster, "all", unassoc);
        for q in 0..settings.queue_keys.len() {
            let own: Vec<VnodeId> = all.iter().copied().filter(|v| vq(v) == Some(q)).collect();
            let idx = if own.is_empty() {
                0
            } else {
                p.add_array(cluster, "queue", own)
            };
            p.array_of_queue.push(idx);
        }
        if settings.node_group_enable && !settings.server_key.is_empty() {
            p.server_pool = Some(p.add_pool(cluster, &settings.server_key, 0));
        }
        for q in 0..settings.queue_keys.len() {
            let has_vnodes = p.array_of_queue[q] != 0;
            let key = if settings.queue_keys[q].is_empty() {
                &settings.server_key
            } else {
                &settings.queue_keys[q]
            };
            let pool = (settings.node_group_enable
                && (has_vnodes || !settings.queue_keys[q].is_empty())
                && !key.is_empty())
            .then(|| p.add_pool(cluster, key, p.array_of_queue[q]));
            p.queue_pools.push(pool);
        }
        for &r in &settings.job_keys {
            for a in 0..p.arrays.len() {
                let pool = p.add_pool(cluster, &[r], a);
                p.job_pools.push(((r, a), pool));
            }
        }
        p
    }

    /// The vnode sets whose free capacity the state must track for this policy, by set
    /// id: every node array and every set.
    pub fn tracked_sets(&self) -> Vec<Vec<VnodeId>> {
        self.tracked_sets_from(0)
    }

    /// The tracked sets from tally `first` on (the ones before belong to earlier periods).
    pub(crate) fn tracked_sets_from(&self, first: usize) -> Vec<Vec<VnodeId>> {
        let mut sets = vec![Vec::new(); self.n_sets - first];
        for info in self.arrays.iter().chain(&self.sets) {
            sets[info.set - first].clone_from(&info.vnodes);
        }
        sets
    }

    /// How many tallies its sets take, from 0 (those of earlier periods included).
    pub(crate) fn tally_end(&self) -> usize {
        self.n_sets
    }

    /// Every pool of sets this policy built, as its runs use them: the server's, each
    /// queue's, then the job keys' over each node array.
    pub fn pools(&self) -> Vec<BuiltPool<'_>> {
        let sets_of = |pool: &PoolSets| -> Vec<BuiltSet<'_>> {
            pool.sets
                .iter()
                .map(|&i| BuiltSet {
                    name: &self.sets[i].name,
                    vnodes: &self.sets[i].vnodes,
                })
                .collect()
        };
        let mut pools = Vec::new();
        if let Some(pool) = &self.server_pool {
            pools.push(BuiltPool {
                source: PoolSource::Server,
                keys: self.settings.server_key.clone(),
                sets: sets_of(pool),
            });
        }
        for (q, pool) in self.queue_pools.iter().enumerate() {
            if let Some(pool) = pool {
                let own = &self.settings.queue_keys[q];
                pools.push(BuiltPool {
                    source: PoolSource::Queue(q),
                    keys: if own.is_empty() {
                        self.settings.server_key.clone()
                    } else {
                        own.clone()
                    },
                    sets: sets_of(pool),
                });
            }
        }
        for ((key, array), pool) in &self.job_pools {
            let queue = (*array != 0)
                .then(|| self.array_of_queue.iter().position(|a| a == array))
                .flatten();
            pools.push(BuiltPool {
                source: PoolSource::JobKey { queue },
                keys: vec![*key],
                sets: sets_of(pool),
            });
        }
        pools
    }

    /// Registers this policy's sets with `state`, before the run: set metadata is read from
    /// the state's tallies.
    pub fn track(&self, state: &mut ClusterState) {
        state.track_sets(&self.tracked_sets());
    }

    fn info(&mut self, cluster: &Cluster, name: String, mut vnodes: Vec<VnodeId>) -> SetInfo {
        if let Some(rank) = &self.rank {
            vnodes.sort_by_key(|v| rank[v.index()]);
        }
        let n_cons = cluster.resources().n_consumables();
        let mut total = vec![0u64; n_cons];
        for &v in &vnodes {
            for (t, a) in total.iter_mut().zip(cluster.capacity(v)) {
                *t += a;
            }
        }
        self.n_sets += 1;
        SetInfo {
            name: Arc::from(name),
            set: self.n_sets - 1,
            vnodes,
            total,
        }
    }

    fn add_array(&mut self, cluster: &Cluster, name: &str, vnodes: Vec<VnodeId>) -> usize {
        let info = self.info(cluster, name.to_owned(), vnodes);
        self.arrays.push(info);
        self.arrays.len() - 1
    }

    /// The sets `keys` form over array `a`, in creation order: keys in order, values by first
    /// appearance.
    fn add_pool(&mut self, cluster: &Cluster, keys: &[ResourceId], a: usize) -> Pool {
        let members = self.arrays[a].vnodes.clone();
        let mut pool = Vec::new();
        for &key in keys {
            let key_name = cluster.resources().def(key).name.clone();
            for (value, vnodes) in
                cluster.sets_by(key, members.iter().copied(), self.settings.only_explicit)
            {
                let name = if value.is_empty() {
                    format!("{key_name}=\"\"")
                } else {
                    format!("{key_name}={value}")
                };
                let info = self.info(cluster, name, vnodes);
                let of = |c: ConsumableIdx| info.total.get(c.index()).copied().unwrap_or(0);
                self.set_keys.push(SetKeys {
                    total_order: (of(ConsumableIdx::NCPUS), of(ConsumableIdx::MEM)),
                    set: info.set,
                });
                self.sets.push(info);
                pool.push(self.sets.len() - 1);
            }
        }
        let largest_ncpus = pool
            .iter()
            .map(|&s| self.set_keys[s].total_order.0)
            .max()
            .unwrap_or(0);
        Arc::new(PoolSets {
            sets: pool.into(),
            largest_ncpus,
        })
    }

    fn job_pool(&self, key: ResourceId, array: usize) -> Option<&Pool> {
        self.job_pools
            .iter()
            .find(|((r, a), _)| *r == key && *a == array)
            .map(|(_, p)| p)
    }

    fn refuse(&mut self, why: Refusal) {
        self.refusal = Some(why);
    }

    /// The four aggregate checks of §1.4 against one offer (free or total); `self.totals`
    /// holds the request's totals.
    #[inline]
    fn fits(
        &self,
        cluster: &Cluster,
        set: &SetInfo,
        offer: &Offer<'_>,
        request: &Request,
        chunks: &[Chunk],
    ) -> bool {
        self.shortfall(cluster, set, offer, request, chunks)
            .is_none()
    }

    /// The first of the four aggregate checks that `offer` (free or total) fails, in PBS's
    /// order (`resresv_can_fit_nodepart`, queue-disciplines.md §2.8): at least one vnode;
    /// for scatter, a vnode per chunk; the job-wide consumable totals; each chunk's
    /// non-consumables against the union of the set's values. Inlined: a search asks it of
    /// every set, and most answers come from the first tests.
    #[inline]
    fn shortfall(
        &self,
        cluster: &Cluster,
        set: &SetInfo,
        offer: &Offer<'_>,
        request: &Request,
        chunks: &[Chunk],
    ) -> Option<Shortfall> {
        if offer.vnodes == 0 {
            return Some(Shortfall::Nodes);
        }
        if matches!(
            request.arrangement,
            Arrangement::Scatter | Arrangement::VScatter
        ) && offer.vnodes < chunks.iter().map(|c| u64::from(c.count)).sum()
        {
            return Some(Shortfall::Nodes);
        }
        if let Some(slot) = self
            .totals
            .iter()
            .zip(offer.amounts)
            .position(|(need, have)| need > have)
        {
            return Some(Shortfall::Amount(slot));
        }
        chunks.iter().enumerate().find_map(|(c, chunk)| {
            chunk
                .constraints
                .iter()
                .position(|k| {
                    !set.vnodes
                        .iter()
                        .any(|&v| k.matches(cluster.vnode(v).attr(k.resource)))
                })
                .map(|k| Shortfall::Value(c, k))
        })
    }

    /// A set's free offer in `view`: its tallies, read where the view keeps them, or with a
    /// node filter, a sum over the vnodes that pass it, made in `buf`.
    fn free_offer<'a>(
        &self,
        set: &SetInfo,
        view: &'a Scratch<'_>,
        filter: Option<&FilterExpr>,
        buf: &'a mut Vec<u64>,
    ) -> Offer<'a> {
        let n_cons = view.cluster().resources().n_consumables();
        match filter {
            None => tallied_offer(set.set, view.tracked_sets_free(), n_cons),
            Some(f) => {
                buf.clear();
                buf.resize(n_cons, 0);
                let mut n = 0;
                for &v in &set.vnodes {
                    if view.eligible().contains(v.index()) && filter_holds(f, view, v) {
                        for (c, slot) in buf.iter_mut().enumerate() {
                            *slot += view.free(v, ConsumableIdx(c as u8));
                        }
                        n += 1;
                    }
                }
                Offer {
                    amounts: buf,
                    vnodes: n,
                }
            }
        }
    }

    /// One select specification on one node array: steps 2 to 5, or the per-chunk extension.
    fn place_select(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        array: usize,
        filter: Option<&FilterExpr>,
    ) -> Option<Allocation> {
        let cluster = view.cluster();
        chunks_totals_into(chunks, &mut self.totals);
        // Step 2: the whole-pool check.
        let arr = &self.arrays[array];
        let mut free = Vec::new();
        let now = self.free_offer(arr, view, filter, &mut free);
        if let Some(now_short) = self.shortfall(cluster, arr, &now, request, chunks) {
            // The totals' first failure wins, as "never"; else the one now.
            let ever = Offer {
                amounts: &arr.total,
                vnodes: arr.vnodes.len() as u64,
            };
            let refusal = match self.shortfall(cluster, arr, &ever, request, chunks) {
                Some(short) => self.insufficient(cluster, arr, short, chunks, &arr.total, true),
                None => self.insufficient(cluster, arr, now_short, chunks, now.amounts, false),
            };
            self.refuse(refusal);
            return None;
        }
        if chunks.iter().any(|c| c.group.is_some()) {
            return self.place_per_chunk(request, chunks, view, array, filter);
        }
        let pool = match request.group {
            Some(key) => self.job_pool(key, array).cloned(),
            None => match request.queue.map(|q| q as usize) {
                Some(q) if self.queue_pools.get(q).is_some_and(Option::is_some) => {
                    self.queue_pools[q].clone()
                }
                // A queue with vnodes but no pool gets no grouping; others the server's.
                Some(q) if self.array_of_queue.get(q).is_some_and(|&a| a != 0) => None,
                _ => self.server_pool.clone(),
            },
        };
        match pool {
            None => self.place_on_array(request, chunks, view, array, filter, None),
            Some(sets) => self.place_in_pool(request, chunks, view, array, filter, &sets),
        }
    }

    /// First fit over the whole node array, with `label`.
    fn place_on_array(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        array: usize,
        filter: Option<&FilterExpr>,
        label: Option<Arc<str>>,
    ) -> Option<Allocation> {
        let within =
            (array != 0 || !self.array0_is_all).then(|| self.arrays[array].vnodes.as_slice());
        let placed = self
            .first_fit
            .place_within(chunks, request, filter, view, within);
        match placed {
            Some(mut a) => {
                a.label = label;
                Some(a)
            }
            None => {
                self.refuse(Refusal::NoResources);
                None
            }
        }
    }

    /// Steps 4 and 5 over one pool.
    fn place_in_pool(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        array: usize,
        filter: Option<&FilterExpr>,
        pool: &PoolSets,
    ) -> Option<Allocation> {
        match self.search_pool(request, chunks, view, filter, pool) {
            Search::Placed(a) => return Some(a),
            Search::Wait(last) => {
                self.refuse(Refusal::SetTooSmall(last));
                return None;
            }
            Search::NoStaticFit => {}
        }
        if self.settings.do_not_span {
            self.refuse(Refusal::CantSpan);
            return None;
        }
        let spanned = self.spanned.clone();
        self.place_on_array(request, chunks, view, array, filter, Some(spanned))
    }

    /// Walks `pool` in PBS's order on `view`: the first set that fits dynamically and where
    /// first fit places `chunks` (the allocation labelled with the set); otherwise whether some
    /// set fits statically, with the last set examined.
    fn search_pool(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        filter: Option<&FilterExpr>,
        pool: &PoolSets,
    ) -> Search {
        let cluster = view.cluster();
        let (ncpus, mem) = (ConsumableIdx::NCPUS.index(), ConsumableIdx::MEM.index());
        // PBS tries the sets in its order (ascending total ncpus, total mem, free ncpus, free
        // mem, then creation) and places on the first whose free offer passes the aggregate
        // checks and where first fit succeeds. The offers do not change while it searches, so
        // the sets that fail the checks are left out first, and the rest are taken in that
        // order as they are needed (a heap), not all sorted.
        // A set with fewer ncpus in all than asked fits neither now nor ever (free is at
        // most total): it is passed over at once, and a job larger than every set of the
        // pool is told so at once. The last set examined is looked for only among the
        // others, so the largest set is not one passed over.
        let need_ncpus = self.totals.get(ncpus).copied().unwrap_or(0);
        if need_ncpus > pool.largest_ncpus {
            return Search::NoStaticFit;
        }
        let too_small = |keys: &SetKeys| keys.total_order.0 < need_ncpus;
        // A set's place in the order, from its free ncpus and mem.
        let order_of = |keys: &SetKeys, free_ncpus: u64, free_mem: u64, s: usize| -> SetOrder {
            (
                keys.total_order.0,
                keys.total_order.1,
                free_ncpus,
                free_mem,
                s,
            )
        };
        let mut free = Vec::new();
        let mut candidates = std::mem::take(&mut self.order);
        candidates.clear();
        let n_cons = cluster.resources().n_consumables();
        let tallies = view.tracked_sets_free();
        // With a node filter an offer is a sum over the set's vnodes, made once: the last
        // set examined is found on the way. Without, it is found only if nothing is placed
        // (below), so that a search reads of each set only its free ncpus, and the whole
        // offer of those with enough: a slice of every set's tallies, and its key made and
        // compared with the largest so far, at every set of every search, kept the search at
        // 13.9 % of psets-bench.toml's simulation thread (7.6 % without, with the gathering
        // below).
        let mut last_filtered = None;
        match filter {
            None => {
                // The sets with enough ncpus free (most sets of most searches have too few,
                // and fail the totals check) are gathered without a branch: which have room
                // is as good as random to the branch predictor, whose misses were a fifth of
                // the search's time.
                // Every slot read below is written first: the buffer only grows.
                let mut roomy = std::mem::take(&mut self.roomy);
                if roomy.len() < pool.sets.len() {
                    roomy.resize(pool.sets.len(), 0);
                }
                let mut n_roomy = 0;
                for &s in &pool.sets {
                    let keys = self.set_keys[s];
                    roomy[n_roomy] = s;
                    let has_room = !too_small(&keys)
                        & (tallies.free_of(keys.set, ConsumableIdx::NCPUS) >= need_ncpus);
                    n_roomy += usize::from(has_room);
                }
                for &s in &roomy[..n_roomy] {
                    let keys = self.set_keys[s];
                    let now = tallied_offer(keys.set, tallies, n_cons);
                    if self.fits(cluster, &self.sets[s], &now, request, chunks) {
                        let key = order_of(&keys, now.amounts[ncpus], now.amounts[mem], s);
                        candidates.push(std::cmp::Reverse(key));
                    }
                }
                self.roomy = roomy;
            }
            Some(_) => {
                for &s in &pool.sets {
                    let keys = self.set_keys[s];
                    if too_small(&keys) {
                        continue;
                    }
                    let now = self.free_offer(&self.sets[s], view, filter, &mut free);
                    let key = order_of(&keys, now.amounts[ncpus], now.amounts[mem], s);
                    keep_larger(&mut last_filtered, key);
                    if now.amounts[ncpus] >= need_ncpus
                        && self.fits(cluster, &self.sets[s], &now, request, chunks)
                    {
                        candidates.push(std::cmp::Reverse(key));
                    }
                }
            }
        }
        let mut in_order = std::collections::BinaryHeap::from(candidates);
        let mut placed = None;
        while let Some(std::cmp::Reverse((.., s))) = in_order.pop() {
            let (first_fit, set) = (&mut self.first_fit, &self.sets[s]);
            if let Some(mut a) =
                first_fit.place_within(chunks, request, filter, view, Some(&set.vnodes))
            {
                a.label = Some(set.name.clone());
                a.within = Within::Set(s as u32);
                placed = Some(a);
                break;
            }
        }
        self.order = in_order.into_vec();
        if let Some(a) = placed {
            return Search::Placed(a);
        }
        // Nothing placed: PBS went through every set, and reports the last (the largest)
        // if any set could ever take the job.
        let can_fit = pool.sets.iter().any(|&s| {
            if too_small(&self.set_keys[s]) {
                return false;
            }
            let set = &self.sets[s];
            let ever = Offer {
                amounts: &set.total,
                vnodes: set.vnodes.len() as u64,
            };
            self.fits(cluster, set, &ever, request, chunks)
        });
        if !can_fit {
            return Search::NoStaticFit;
        }
        let last = match filter {
            Some(_) => last_filtered,
            None => {
                let mut last = None;
                for &s in &pool.sets {
                    let keys = self.set_keys[s];
                    if too_small(&keys) {
                        continue;
                    }
                    let key = order_of(
                        &keys,
                        tallies.free_of(keys.set, ConsumableIdx::NCPUS),
                        tallies.free_of(keys.set, ConsumableIdx::MEM),
                        s,
                    );
                    keep_larger(&mut last, key);
                }
                last
            }
        };
        match last {
            Some((.., s)) => Search::Wait(s),
            None => Search::NoStaticFit,
        }
    }

    /// The per-chunk extension (seed 000), with tiered spanning.
    fn place_per_chunk(
        &mut self,
        request: &Request,
        chunks: &[Chunk],
        view: &Scratch<'_>,
        array: usize,
        filter: Option<&FilterExpr>,
    ) -> Option<Allocation> {
        let cluster = view.cluster();
        let n_cons = cluster.resources().n_consumables();
        let mut buf = std::mem::take(&mut self.local);
        let mut local = Scratch::new(view.base(), &mut buf);
        local.copy_from(view);
        let mut whole = Allocation::new(request.sharing);
        let mut names: Vec<String> = Vec::new();
        let mut outcome = Tier::Placed;
        for chunk in chunks {
            let one = std::slice::from_ref(chunk);
            chunks_totals_into(one, &mut self.totals);
            let placed = match chunk.group {
                None => {
                    let (first_fit, arrays) = (&mut self.first_fit, &self.arrays);
                    let within = (array != 0 || !self.array0_is_all)
                        .then(|| arrays[array].vnodes.as_slice());
                    first_fit
                        .place_within(one, request, filter, &local, within)
                        .map(|a| (a, "any".to_owned()))
                }
                Some(key) => {
                    let pool = self.job_pool(key, array).cloned().unwrap_or_default();
                    match self.search_pool(request, one, &local, filter, &pool) {
                        Search::Placed(a) => {
                            let name = a.label.as_deref().unwrap_or("").to_owned();
                            Some((a, name))
                        }
                        Search::Wait(_) => {
                            outcome = Tier::Wait;
                            None
                        }
                        Search::NoStaticFit => {
                            outcome = Tier::Span;
                            None
                        }
                    }
                }
            };
            match placed {
                Some((a, name)) => {
                    local.take(&a);
                    for (v, amounts) in a.parts(n_cons) {
                        whole.add(v, amounts);
                    }
                    names.push(name);
                }
                None => {
                    if matches!(outcome, Tier::Placed) {
                        outcome = Tier::Wait;
                    }
                    break;
                }
            }
        }
        self.local = buf;
        match outcome {
            Tier::Placed => {
                whole.label = Some(Arc::from(format!("per-chunk: {}", names.join("+"))));
                Some(whole)
            }
            Tier::Wait => {
                self.refuse(Refusal::ChunkSetsTooSmall);
                None
            }
            Tier::Span => {
                // Tiered spanning: the whole job as if it had no per-chunk sets.
                let plain: Vec<Chunk> = chunks
                    .iter()
                    .map(|c| Chunk {
                        group: None,
                        ..c.clone()
                    })
                    .collect();
                self.place_select(request, &plain, view, array, filter)
            }
        }
    }
}

/// What a walk over a pool found.
enum Search {
    /// Placed in a set.
    Placed(Allocation),
    /// Nothing now, but some set fits statically; the last set examined.
    Wait(usize),
    /// No set fits even statically.
    NoStaticFit,
}

/// What became of the per-chunk placement.
enum Tier {
    Placed,
    Wait,
    Span,
}

/// Which of the whole-pool checks failed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortfall {
    /// Too few vnodes: none (free), or fewer than scatter's chunks.
    Nodes,
    /// The job's total of consumable `.0` is more than offered.
    Amount(usize),
    /// Condition `.1` of chunk `.0`, on a non-consumable, matches no vnode.
    Value(usize, usize),
}

/// Why the last placement failed; the text is built only when asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    /// The whole-pool check: too few vnodes.
    Nodes { never: bool },
    /// The whole-pool check: consumable `slot` short, with requested, available and total
    /// (available is the total when `never`, as PBS prints it).
    Amount {
        slot: usize,
        r: u64,
        a: u64,
        t: u64,
        never: bool,
    },
    /// The whole-pool check: a non-consumable's requested value, and the values the pool has,
    /// as PBS prints them: `vnode (foo != n1,n2)`.
    Value { text: Arc<str>, never: bool },
    /// Some set fits statically; this set was the last examined.
    SetTooSmall(usize),
    /// No set fits statically and spanning is off.
    CantSpan,
    /// First fit failed on the node array.
    NoResources,
    /// A per-chunk complex's sets have too few free resources now.
    ChunkSetsTooSmall,
}

/// The last refusal a policy explained, with its text. Behind a lock only because a
/// sweep's plan, which holds the policy it copies for each run, is shared by its threads; a
/// copy starts with none.
#[derive(Debug, Default)]
struct LastRefusal(std::sync::Mutex<Option<(Refusal, Arc<str>)>>);

impl Clone for LastRefusal {
    fn clone(&self) -> Self {
        LastRefusal::default()
    }
}

/// The most bytes of a pool's values a comment shows: PBS prints them into a buffer of
/// `MAX_LOG_SIZE` (1024) bytes (openpbs `src/scheduler/config.h`, `check.cpp`).
const MAX_VALUES_TEXT: usize = 1023;

impl PbsPsets {
    /// The refusal for the first failed whole-pool check `short` of array `arr`, offering
    /// `offered` (free amounts, or totals when `never`).
    fn insufficient(
        &self,
        cluster: &Cluster,
        arr: &SetInfo,
        short: Shortfall,
        chunks: &[Chunk],
        offered: &[u64],
        never: bool,
    ) -> Refusal {
        match short {
            Shortfall::Nodes => Refusal::Nodes { never },
            Shortfall::Amount(slot) => Refusal::Amount {
                slot,
                r: self.totals[slot],
                a: offered.get(slot).copied().unwrap_or(0),
                t: arr.total.get(slot).copied().unwrap_or(0),
                never,
            },
            Shortfall::Value(c, k) => {
                let k = &chunks[c].constraints[k];
                let name = &cluster.resources().def(k.resource).name;
                // Distinct values in order of first appearance, up to the buffer: a pool of a
                // million vnodes, each its own `vnode` value, costs one pass that stops early.
                let mut seen: HashSet<String> = HashSet::new();
                let mut values = String::new();
                for &v in &arr.vnodes {
                    let Some(value) = cluster.vnode(v).attr(k.resource) else {
                        continue;
                    };
                    let text = value.to_string();
                    if seen.contains(&text) {
                        continue;
                    }
                    if values.len() + text.len() + 1 > MAX_VALUES_TEXT {
                        break;
                    }
                    if !values.is_empty() {
                        values.push(',');
                    }
                    values.push_str(&text);
                    seen.insert(text);
                }
                Refusal::Value {
                    text: Arc::from(format!("{name} ({} != {values})", k.value)),
                    never,
                }
            }
        }
    }
}

impl PbsPsets {
    /// PBS's comment text for a refusal.
    fn text(&self, why: &Refusal) -> String {
        let prefix = |never: bool| {
            if never {
                "Can Never Run"
            } else {
                "Not Running"
            }
        };
        match why {
            Refusal::Nodes { never: true } => {
                "Can Never Run: Not enough total nodes available".to_owned()
            }
            Refusal::Nodes { never: false } => {
                "Not Running: Not enough free nodes available".to_owned()
            }
            Refusal::Amount {
                slot,
                r,
                a,
                t,
                never,
            } => {
                // Put together piece by piece: made for most candidates a pass refuses, it
                // was 3 % of psets-bench's instructions through `format!`.
                let def = self.defs.def(self.defs.consumables()[*slot]);
                let mut text = String::with_capacity(96);
                text.push_str(prefix(*never));
                text.push_str(": Insufficient amount of resource: ");
                text.push_str(&def.name);
                for (label, amount) in [(" (R: ", r), (" A: ", a), (" T: ", t)] {
                    text.push_str(label);
                    let _ = placesim_core::write_amount(&mut text, def.kind, *amount);
                }
                text.push(')');
                text
            }
            Refusal::Value { text, never } => {
                format!("{}: Insufficient amount of resource: {text}", prefix(*never))
            }
            Refusal::SetTooSmall(s) => format!(
                "Not Running: Placement set {} has too few free resources",
                self.sets.get(*s).map_or("", |x| &*x.name)
            ),
            Refusal::CantSpan => {
                "Can Never Run: can't fit in the largest placement set, and can't span psets".to_owned()
            }
            Refusal::NoResources => "Not Running: No available resources on nodes".to_owned(),
            Refusal::ChunkSetsTooSmall => "Not Running: a chunk complex's placement sets have too few free resources (per-chunk group extension)".to_owned(),
        }
    }
}

impl PlacementPolicy for PbsPsets {
    fn name(&self) -> String {
        "pbs-psets".to_owned()
    }

    fn supports(&self) -> &'static [RequestFeature] {
        &[RequestFeature::PlacementSets]
    }

    /// Beyond the features, every key a job names must be one the sets were built for.
    fn unsupported(&self, request: &Request) -> Option<&'static str> {
        if let Some(feature) = request.first_unsupported(self.supports()) {
            return Some(feature.describe());
        }
        let keys = request
            .group
            .into_iter()
            .chain(request.selects().flatten().filter_map(|c| c.group));
        for key in keys {
            if !self.settings.job_keys.contains(&key) {
                return Some("a group= key the placement-set policy was not built with");
            }
        }
        None
    }

    fn refusal(&self) -> Option<Arc<str>> {
        let why = self.refusal.as_ref()?;
        // Only this policy's own thread asks: the lock is never contended, nor poisoned
        // (nothing panics while it is held).
        let mut last = (self.refusal_text.0)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match &*last {
            Some((said, text)) if said == why => Some(text.clone()),
            _ => {
                let text: Arc<str> = Arc::from(self.text(why));
                *last = Some((why.clone(), text.clone()));
                Some(text)
            }
        }
    }

    fn explains_refusals(&self) -> bool {
        true
    }

    /// Set order, fit and first fit all read only the view.
    fn depends_only_on_state(&self) -> bool {
        true
    }

    /// A job labelled with a set runs inside it; `spanned` and per-chunk jobs may span. A set
    /// this policy does not have holds nothing (another period's, [`super::PbsTimeline`]).
    fn check_within_label(
        &self,
        _request: &Request,
        allocation: &Allocation,
    ) -> Result<(), String> {
        super::within_sets(allocation, |i| match self.sets.get(i as usize) {
            Some(set) => (&*set.name, set.vnodes.as_slice()),
            None => ("(a set of another period)", &[]),
        })
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        self.refusal = None;
        let array = request
            .queue
            .and_then(|q| self.array_of_queue.get(q as usize).copied())
            .unwrap_or(0);
        super::first_alternative(request, |chunks, filter| {
            self.place_select(request, chunks, view, array, filter)
        })
    }
}
