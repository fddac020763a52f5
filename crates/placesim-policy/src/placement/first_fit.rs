//! First fit over vnodes in cluster order (or PBS's `node_sort_key` order), as PBS places
//! chunks inside a set.

use placesim_core::{
    Affinity, Allocation, Arrangement, AttrValue, Chunk, ConsumableIdx, FilterExpr, HostId,
    PartsBuilder, PlacementPolicy, Request, RequestFeature, Scratch, Sharing, StateView, VnodeId,
    VnodeRun, chunks_totals_into,
};
use std::sync::Arc;

/// Places chunk complexes in select order, each chunk on the first eligible vnode (in cluster
/// order) that can hold it, with no backtracking: the greedy single pass PBS makes.
///
/// Under `place=free` several chunks may share a vnode while amounts allow; `scatter` allows one
/// chunk per host, `vscatter` one per vnode. Under `excl` a chosen vnode must hold no other job.
#[derive(Debug, Clone, Default)]
pub struct FirstFit {
    /// Per vnode: the position in the allocation being built, valid when the stamp matches.
    slot: Vec<u32>,
    slot_stamp: Vec<u32>,
    /// Per host: whether the allocation being built already uses it, valid when stamped.
    host_stamp: Vec<u32>,
    generation: u32,
    totals: Vec<u64>,
    /// The vnodes a restricted search walks, kept between calls to save the allocation.
    list: Vec<usize>,
    /// The parts the greedy walk gives, vnode by vnode (a vnode may take several chunks),
    /// before they become the allocation's runs; kept between calls.
    parts: PartsBuilder,
    /// The runs the one-ncpu walk finds (first vnode, vnodes, ncpus each), before they become
    /// the allocation's: counted first, the allocation's lists are made once at their size
    /// rather than grown run by run (on CEA-Curie the growth was 2.6 % of all instructions);
    /// kept between calls.
    staged_runs: Vec<(usize, u32, u64)>,
    /// The order vnodes are tried in when not cluster order (PBS's `node_sort_key`).
    order: Option<Arc<[VnodeId]>>,
    /// PBS's `node_sort_key` when it reads what is free or taken now: the order is made
    /// again from the view at each placement.
    by_free: Option<Arc<NodeSort>>,
    /// Per shared pool (indirect resources): what the allocation being built takes from it,
    /// on any of its members.
    pool_taken: Vec<u64>,
}

/// `within` (or every vnode, in order) taken in the affinity tiers of the job being placed,
/// each tier in `within`'s order: positive, neutral, unreserved, negative
/// (moab-node-sets.md R11): reserved nodes a job is welcome on go first, and those of a
/// reservation that admits it only as a last resort after every other.
fn in_tiers(view: &Scratch<'_>, within: Option<&[VnodeId]>) -> Vec<VnodeId> {
    let affinity = view.affinity();
    let mut tiers: [Vec<VnodeId>; 4] = Default::default();
    let tier = |a: Affinity| match a {
        Affinity::Positive => 0,
        Affinity::Neutral => 1,
        Affinity::Unreserved => 2,
        Affinity::Negative => 3,
    };
    match within {
        Some(list) => {
            for &v in list {
                tiers[tier(view.affinity_of(v))].push(v);
            }
        }
        None => {
            // Every vnode in order: the listed ones in their tiers, the rest unreserved.
            let mut listed = affinity.iter().peekable();
            for v in (0..view.cluster().n_vnodes()).map(VnodeId::from_index) {
                match listed.next_if(|&&(w, _)| w == v) {
                    Some(&(_, a)) => tiers[tier(a)].push(v),
                    None => tiers[2].push(v),
                }
            }
        }
    }
    tiers.concat()
}

/// What one `node_sort_key` line sorts vnodes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeSortBy {
    /// `sort_priority`: the vnode's `priority`.
    Priority,
    /// A consumable's `total` (`resources_available`).
    Total(ConsumableIdx),
    /// A consumable's `unused` amount: what is free now.
    Unused(ConsumableIdx),
    /// A consumable's `assigned` amount: what jobs hold now.
    Assigned(ConsumableIdx),
}

/// One `node_sort_key` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSortLine {
    /// What it sorts by.
    pub by: NodeSortBy,
    /// `HIGH`: descending.
    pub high_first: bool,
}

/// PBS's `node_sort_key` lines, applied in turn; ties keep cluster order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSort {
    /// The lines.
    pub lines: Vec<NodeSortLine>,
    /// Per vnode: its `priority` (`sort_priority`).
    pub priority: Arc<[i64]>,
}

impl NodeSort {
    /// Whether a line reads what is free or taken, which changes with every start.
    pub fn is_dynamic(&self) -> bool {
        self.lines
            .iter()
            .any(|l| matches!(l.by, NodeSortBy::Unused(_) | NodeSortBy::Assigned(_)))
    }

    fn value(&self, view: &impl StateView, v: VnodeId, by: NodeSortBy) -> i128 {
        match by {
            NodeSortBy::Priority => i128::from(self.priority.get(v.index()).copied().unwrap_or(0)),
            NodeSortBy::Total(c) => i128::from(view.cluster().capacity(v)[c.index()]),
            NodeSortBy::Unused(c) => i128::from(view.free(v, c)),
            NodeSortBy::Assigned(c) => {
                i128::from(view.cluster().capacity(v)[c.index()]) - i128::from(view.free(v, c))
            }
        }
    }

    /// Every vnode in this order, in `view`.
    pub fn order(&self, view: &impl StateView) -> Vec<VnodeId> {
        let n = view.cluster().n_vnodes();
        let mut order: Vec<VnodeId> = (0..n).map(VnodeId::from_index).collect();
        self.sort(view, &mut order);
        order
    }

    /// Sorts `vnodes` into this order in `view`, vnodes that tie keeping their places (PBS
    /// sorts a placement set's vnodes again this way after each start).
    pub fn sort(&self, view: &impl StateView, vnodes: &mut [VnodeId]) {
        vnodes.sort_by(|&a, &b| {
            self.lines
                .iter()
                .map(|l| {
                    let (x, y) = (self.value(view, a, l.by), self.value(view, b, l.by));
                    if l.high_first { y.cmp(&x) } else { x.cmp(&y) }
                })
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }
}

impl FirstFit {
    /// First fit trying vnodes in `order` (every vnode once) instead of cluster order: PBS's
    /// `node_sort_key`.
    pub fn in_order(order: Option<Arc<[VnodeId]>>) -> FirstFit {
        FirstFit {
            order,
            ..FirstFit::default()
        }
    }

    /// First fit trying vnodes in the order `sort` gives in the view of each placement: PBS's
    /// `node_sort_key` on `unused` or `assigned` amounts, which PBS sorts again after every
    /// start.
    pub fn sorted_by_free(sort: Arc<NodeSort>) -> FirstFit {
        FirstFit {
            by_free: Some(sort),
            ..FirstFit::default()
        }
    }

    fn begin(&mut self, n_vnodes: usize, n_hosts: usize) {
        if self.slot.len() != n_vnodes || self.host_stamp.len() != n_hosts {
            self.slot = vec![0; n_vnodes];
            self.slot_stamp = vec![0; n_vnodes];
            self.host_stamp = vec![0; n_hosts];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slot_stamp.fill(0);
            self.host_stamp.fill(0);
            self.generation = 1;
        }
    }
}

impl PlacementPolicy for FirstFit {
    fn name(&self) -> String {
        "first-fit".to_owned()
    }

    /// Exact for plain `place=free:shared` requests whose chunks each need one ncpu and
    /// nothing else, while no vnode is held exclusively: every vnode with a free ncpu is then
    /// eligible and can take a chunk, so N chunks fit exactly when N ncpus are free.
    fn fits_by_totals(&self, request: &Request, view: &Scratch<'_>) -> bool {
        self.totals_decide_view(view) && self.totals_decide_request(request)
    }

    /// Plain `place=free:shared` requests whose chunks each need one ncpu and nothing else.
    /// First fit holds a request to no run limit (`Limited` around it does).
    fn totals_decide_request(&self, request: &Request) -> bool {
        request.arrangement == Arrangement::Free
            && request.sharing == Sharing::Shared
            && request.is_plain()
            && single_ncpu_chunks(&request.chunks)
    }

    /// While no vnode is held exclusively.
    fn totals_decide_view(&self, view: &Scratch<'_>) -> bool {
        view.exclusive_with_room() == 0
    }

    /// First fit reads only the view.
    fn depends_only_on_state(&self) -> bool {
        true
    }

    /// Plain chunks only: no grouping of any kind.
    fn supports(&self) -> &'static [RequestFeature] {
        &[]
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        super::first_alternative(request, |chunks, filter| {
            self.place_within(chunks, request, filter, view, None)
        })
    }
}

impl FirstFit {
    /// Places `chunks` with `request`'s arrangement and sharing on `within` only (vnodes in
    /// first-fit order), or on the whole cluster: what a placement-set policy does inside a
    /// set, or when a job spans its pool.
    pub fn place_within(
        &mut self,
        chunks: &[Chunk],
        request: &Request,
        filter: Option<&FilterExpr>,
        view: &Scratch<'_>,
        within: Option<&[VnodeId]>,
    ) -> Option<Allocation> {
        let shape = Shape {
            chunks,
            arrangement: request.arrangement,
            sharing: request.sharing,
            filter,
        };
        self.place_shape(&shape, view, within)
    }

    /// Places one select specification under the request's arrangement and sharing, on
    /// `within` if given.
    fn place_shape(
        &mut self,
        shape: &Shape<'_>,
        view: &Scratch<'_>,
        within: Option<&[VnodeId]>,
    ) -> Option<Allocation> {
        // Without a list of its own, a search walks the configured node order, if any: made
        // from this view when it reads what is free, which also orders a given list (a
        // placement set's vnodes), as PBS sorts each set's nodes again after each start.
        let order = match (&self.by_free, within) {
            (Some(sort), None) => Some(Arc::from(sort.order(view))),
            (Some(sort), Some(list)) => {
                let mut list = list.to_vec();
                sort.sort(view, &mut list);
                Some(Arc::from(list))
            }
            _ => self.order.clone(),
        };
        let within = if self.by_free.is_some() {
            order.as_deref()
        } else {
            within.or(order.as_deref())
        };
        // The aggregate check first: it rejects most jobs that cannot start in O(consumables).
        chunks_totals_into(shape.chunks, &mut self.totals);
        for (c, &need) in self.totals.iter().enumerate() {
            if need > view.free_total(ConsumableIdx(c as u8)) {
                return None;
            }
        }
        let tiered = (!view.affinity().is_empty()).then(|| in_tiers(view, within));
        let within = tiered.as_deref().or(within);
        let cluster = view.cluster();
        let ncpus = self.totals[ConsumableIdx::NCPUS.index()];
        let alloc = Allocation::new(shape.sharing);
        if shape.arrangement == Arrangement::Pack {
            // Every chunk on one host: hosts in order of their first vnode, the first that
            // takes them all wins.
            let Some(vnodes) = within else {
                return (0..cluster.hosts().len()).find_map(|h| {
                    let vnodes = cluster.host_vnodes(HostId::from_index(h));
                    if vnodes.is_empty() {
                        return None;
                    }
                    self.place_chunks(shape, view, alloc.clone(), Some(vnodes))
                });
            };
            // Within a set: its vnodes grouped by host, hosts in order of first appearance.
            let mut hosts: Vec<(HostId, Vec<VnodeId>)> = Vec::new();
            for &v in vnodes {
                let h = cluster.vnode(v).host;
                match hosts.iter_mut().find(|(x, _)| *x == h) {
                    Some((_, list)) => list.push(v),
                    None => hosts.push((h, vec![v])),
                }
            }
            return hosts
                .iter()
                .find_map(|(_, list)| self.place_chunks(shape, view, alloc.clone(), Some(list)));
        }
        if shape.arrangement == Arrangement::Free
            && shape.sharing == Sharing::Shared
            && shape.filter.is_none()
            && single_ncpu_chunks(shape.chunks)
            && shape.chunks.iter().all(|c| c.constraints.is_empty())
        {
            return match within {
                Some(list) => {
                    // The list's stretches of consecutive vnodes, each as its runs of eligible
                    // ones: a set of vnodes in cluster order is one stretch, walked a word at a
                    // time rather than a vnode at a time.
                    let eligible = view.eligible();
                    let candidates =
                        consecutive_stretches(list).flat_map(|stretch| eligible.runs_in(stretch));
                    single_ncpu_pass(ncpus, view, alloc, candidates, &mut self.staged_runs)
                }
                None => single_ncpu_pass(
                    ncpus,
                    view,
                    alloc,
                    view.eligible().runs(),
                    &mut self.staged_runs,
                ),
            };
        }
        self.place_chunks(shape, view, alloc, within)
    }

    /// The general greedy pass: chunk complexes in order, each chunk on the first vnode (of
    /// `within`, or of the cluster) that can hold it under the arrangement and sharing.
    fn place_chunks(
        &mut self,
        shape: &Shape<'_>,
        view: &Scratch<'_>,
        alloc: Allocation,
        within: Option<&[VnodeId]>,
    ) -> Option<Allocation> {
        let cluster = view.cluster();
        self.begin(cluster.n_vnodes(), cluster.hosts().len());
        let eligible = view.eligible();
        // A restricted search (one host, a node filter, whole empty hosts) walks a list made
        // once; the plain search walks the eligibility bitset a word at a time.
        let restricted =
            within.is_some() || shape.filter.is_some() || shape.sharing == Sharing::ExclHost;
        let mut list = std::mem::take(&mut self.list);
        list.clear();
        if restricted {
            let keep = |&i: &usize| {
                let v = VnodeId::from_index(i);
                eligible.contains(i)
                    && shape.filter.is_none_or(|f| filter_holds(f, view, v))
                    && (shape.sharing != Sharing::ExclHost || host_is_empty(view, v))
            };
            match within {
                Some(vnodes) => list.extend(vnodes.iter().map(|v| v.index()).filter(keep)),
                None => list.extend(eligible.iter().filter(keep)),
            }
        }
        let placed = self.greedy(shape, view, alloc, restricted.then_some(list.as_slice()));
        self.list = list;
        placed
    }

    /// The greedy walk of [`Self::place_chunks`] over `list` (restricted) or every eligible
    /// vnode.
    fn greedy(
        &mut self,
        shape: &Shape<'_>,
        view: &Scratch<'_>,
        mut alloc: Allocation,
        list: Option<&[usize]>,
    ) -> Option<Allocation> {
        let cluster = view.cluster();
        let n_cons = cluster.resources().n_consumables();
        let generation = self.generation;
        let eligible = view.eligible();
        let parts = &mut self.parts;
        parts.clear(n_cons);
        let pooled = !cluster.pools().is_empty();
        if pooled {
            self.pool_taken.clear();
            self.pool_taken.resize(cluster.pools().len(), 0);
        }
        for chunk in shape.chunks {
            let mut remaining = chunk.count;
            let iter: Box<dyn Iterator<Item = usize>> = match list {
                Some(list) => Box::new(list.iter().copied()),
                None => Box::new(eligible.iter()),
            };
            for idx in iter {
                if remaining == 0 {
                    break;
                }
                let v = VnodeId::from_index(idx);
                let taken_here =
                    (self.slot_stamp[idx] == generation).then(|| self.slot[idx] as usize);
                match shape.arrangement {
                    Arrangement::Free | Arrangement::Pack => {}
                    Arrangement::VScatter => {
                        if taken_here.is_some() {
                            continue;
                        }
                    }
                    Arrangement::Scatter => {
                        if self.host_stamp[cluster.vnode(v).host.index()] == generation {
                            continue;
                        }
                    }
                }
                if shape.sharing.is_exclusive() && view.n_jobs(v) > 0 {
                    continue;
                }
                let vnode = cluster.vnode(v);
                if !chunk
                    .constraints
                    .iter()
                    .all(|c| c.matches(vnode.attr(c.resource)))
                {
                    continue;
                }
                // How many chunks of this shape still fit on v, given what this job took there.
                let mut fit = u64::from(remaining);
                for (c, &amount) in chunk.amounts.iter().enumerate() {
                    if amount == 0 {
                        continue;
                    }
                    let mut free = view.free(v, ConsumableIdx(c as u8));
                    // A shared pool has lost what this job took on any of its members.
                    let pool = if pooled {
                        cluster.pool_index(v, ConsumableIdx(c as u8))
                    } else {
                        None
                    };
                    if let Some(p) = pool {
                        free -= self.pool_taken[p];
                    } else if let Some(pos) = taken_here {
                        free -= parts.amounts_mut(pos)[c];
                    }
                    // Most chunks need one unit of a resource: skip the division then.
                    fit = fit.min(if amount == 1 { free } else { free / amount });
                }
                if matches!(
                    shape.arrangement,
                    Arrangement::Scatter | Arrangement::VScatter
                ) {
                    fit = fit.min(1);
                }
                if fit == 0 {
                    continue;
                }
                let n = fit as u32;
                remaining -= n;
                if pooled {
                    for (c, &amount) in chunk.amounts.iter().enumerate() {
                        if let Some(p) = cluster.pool_index(v, ConsumableIdx(c as u8)) {
                            self.pool_taken[p] += u64::from(n) * amount;
                        }
                    }
                }
                match taken_here {
                    Some(pos) => {
                        for (have, &amount) in parts.amounts_mut(pos).iter_mut().zip(&chunk.amounts)
                        {
                            *have += u64::from(n) * amount;
                        }
                    }
                    None => {
                        let pos = parts.push(v, chunk.amounts.iter().map(|&a| u64::from(n) * a));
                        self.slot[idx] = pos as u32;
                        self.slot_stamp[idx] = generation;
                    }
                }
                self.host_stamp[cluster.vnode(v).host.index()] = generation;
            }
            if remaining > 0 {
                return None;
            }
        }
        if shape.sharing == Sharing::ExclHost {
            // Every vnode of each chosen host is the job's, with nothing taken from the rest.
            let zeros = vec![0; n_cons];
            for h in 0..cluster.hosts().len() {
                if self.host_stamp[h] != generation {
                    continue;
                }
                for &v in cluster.host_vnodes(HostId::from_index(h)) {
                    if self.slot_stamp[v.index()] != generation {
                        self.slot_stamp[v.index()] = generation;
                        parts.push(v, zeros.iter().copied());
                    }
                }
            }
        }
        parts.append_to(&mut alloc);
        Some(alloc)
    }
}

/// One select specification with the request's placement: what one greedy pass places.
struct Shape<'a> {
    chunks: &'a [Chunk],
    arrangement: Arrangement,
    sharing: Sharing,
    filter: Option<&'a FilterExpr>,
}

/// The common shape: every chunk is one ncpu. Greedy first fit then takes free ncpus from
/// eligible vnodes in order (`candidates`: the cluster's, or a set's in its own order, as
/// ranges of consecutive eligible vnodes), and a later chunk complex resumes on the vnode where
/// the earlier one stopped: one pass over the merged count gives the very same vnodes and
/// amounts. A stretch of one-ncpu vnodes within a range is taken whole, without a step per
/// vnode (issue 20): each gives its one ncpu.
fn single_ncpu_pass(
    ncpus: u64,
    view: &Scratch<'_>,
    mut alloc: Allocation,
    candidates: impl Iterator<Item = std::ops::Range<usize>>,
    staged: &mut Vec<(usize, u32, u64)>,
) -> Option<Allocation> {
    let n_cons = view.cluster().resources().n_consumables();
    staged.clear();
    // The run being built: consecutive vnodes each giving `take` ncpus, staged whole when it
    // ends, so the allocation is made per run rather than per vnode.
    let (mut first, mut count, mut take) = (0usize, 0u32, 0u64);
    let push = |staged: &mut Vec<(usize, u32, u64)>, first: usize, count: u32, take: u64| {
        if count > 0 {
            staged.push((first, count, take));
        }
    };
    let mut remaining = ncpus;
    let cluster = view.cluster();
    let caps = cluster.ncpus_capacities();
    for range in candidates {
        let mut idx = range.start;
        while idx < range.end {
            // An eligible vnode of one ncpu has it free (a vnode whose ncpus are all taken is
            // job-busy): its row need not be read, nor those of the one-ncpu vnodes after it.
            let (free, vnodes) = if caps[idx] == 1 {
                debug_assert_eq!(view.free(VnodeId::from_index(idx), ConsumableIdx::NCPUS), 1);
                let stretch = range.end.min(cluster.same_capacity_until(idx)) - idx;
                (
                    1,
                    stretch.min(usize::try_from(remaining).unwrap_or(usize::MAX)),
                )
            } else {
                (view.free(VnodeId::from_index(idx), ConsumableIdx::NCPUS), 1)
            };
            if free == 0 {
                idx += 1;
                continue;
            }
            let here = free.min(remaining);
            if count > 0 && idx == first + count as usize && here == take {
                count += vnodes as u32;
            } else {
                push(staged, first, count, take);
                (first, count, take) = (idx, vnodes as u32, here);
            }
            remaining -= here * vnodes as u64;
            idx += vnodes;
            if remaining == 0 {
                push(staged, first, count, take);
                alloc.reserve_runs(staged.len(), n_cons);
                // On the stack for the usual few consumables: a vector here was a `calloc` and
                // a `free` per placement (26 M of nodesets-bench's 7.2 G instructions).
                let mut on_stack = [0u64; 8];
                let mut on_heap = Vec::new();
                let amounts: &mut [u64] = if n_cons <= on_stack.len() {
                    &mut on_stack[..n_cons.max(1)]
                } else {
                    on_heap.resize(n_cons, 0);
                    &mut on_heap
                };
                for &(first, count, take) in staged.iter() {
                    amounts[ConsumableIdx::NCPUS.index()] = take;
                    let run = VnodeRun {
                        first: VnodeId::from_index(first),
                        count,
                    };
                    alloc.push_run(run, &amounts[..n_cons]);
                }
                return Some(alloc);
            }
        }
    }
    None
}

/// `list`'s stretches of consecutive vnodes (each one more than the last), in its order, as
/// ranges of vnode indices; found as they are asked for, so a search that ends early reads
/// only the front of the list.
fn consecutive_stretches(list: &[VnodeId]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut rest = list;
    std::iter::from_fn(move || {
        let (first, _) = rest.split_first()?;
        let start = first.index();
        let len = rest
            .iter()
            .enumerate()
            .position(|(k, v)| v.index() != start + k)
            .unwrap_or(rest.len());
        rest = &rest[len..];
        Some(start..start + len)
    })
}

/// Whether every vnode of `v`'s host is free of jobs and eligible: what `exclhost` needs.
fn host_is_empty(view: &Scratch<'_>, v: VnodeId) -> bool {
    let cluster = view.cluster();
    cluster
        .host_vnodes(cluster.vnode(v).host)
        .iter()
        .all(|&w| view.n_jobs(w) == 0 && view.eligible().contains(w.index()))
}

/// Evaluates a node_filter on vnode `v` in `view`: `resources_available` is the capacity of a
/// consumable or the value of a property; `resources_assigned` is capacity minus free (a
/// property is never assigned, so it reads as unset).
pub fn filter_holds(expr: &FilterExpr, view: &impl StateView, v: VnodeId) -> bool {
    match expr {
        FilterExpr::And(a, b) => filter_holds(a, view, v) && filter_holds(b, view, v),
        FilterExpr::Or(a, b) => filter_holds(a, view, v) || filter_holds(b, view, v),
        FilterExpr::Not(a) => !filter_holds(a, view, v),
        FilterExpr::Compare {
            resource,
            assigned,
            op,
            value,
        } => {
            let cluster = view.cluster();
            let defs = cluster.resources();
            let have = match defs.consumable_idx(*resource) {
                Some(c) => {
                    let cap = cluster.capacity(v)[c.index()];
                    let amount = if *assigned {
                        cap - view.free(v, c)
                    } else {
                        cap
                    };
                    Some(AttrValue::from_amount(defs.def(*resource).kind, amount))
                }
                None if *assigned => None,
                None => cluster.vnode(v).attr(*resource).cloned(),
            };
            op.matches(have.as_ref(), value)
        }
    }
}

/// Whether every chunk needs exactly one ncpu and nothing else.
fn single_ncpu_chunks(chunks: &[Chunk]) -> bool {
    chunks.iter().all(|ch| {
        ch.amounts
            .iter()
            .enumerate()
            .all(|(c, &a)| a == u64::from(c == ConsumableIdx::NCPUS.index()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list's stretches: each maximal run of indices one more than the last, in the list's
    /// order, whatever that order is.
    #[test]
    fn a_list_is_cut_into_its_consecutive_stretches() {
        let list: Vec<VnodeId> = [4, 5, 6, 9, 10, 2, 3, 8, 7]
            .map(VnodeId::from_index)
            .to_vec();
        let stretches: Vec<_> = consecutive_stretches(&list).collect();
        assert_eq!(stretches, [4..7, 9..11, 2..4, 8..9, 7..8]);
        assert_eq!(consecutive_stretches(&[]).count(), 0);
    }
    use placesim_core::{Chunk, ClusterBuilder, ClusterState, ResourceDefs, ScratchBuf};

    use placesim_testkit::Lcg;

    /// The single-ncpu fast path and the general pass choose the same vnodes and amounts, on
    /// many partly used clusters of mixed vnode sizes, for one or several chunk complexes, on
    /// the whole cluster and within a set of vnodes in an order of its own.
    #[test]
    fn fast_path_agrees_with_the_general_pass() {
        let mut rng = Lcg(42);
        let (mut outcomes, mut within_outcomes) = ([0u32; 2], [0u32; 2]);
        for _ in 0..300 {
            let mut b = ClusterBuilder::new(ResourceDefs::default());
            let n_hosts = 1 + rng.below(6);
            for h in 0..n_hosts {
                let host = b.add_host(format!("h{h}"));
                for v in 0..1 + rng.below(3) {
                    let ncpus = rng.below(4);
                    b.add_vnode(format!("h{h}v{v}"), host, 1.0, &[ncpus, 0, 0], Vec::new())
                        .unwrap();
                }
            }
            let cluster = b.build().unwrap();
            let mut state = ClusterState::new(cluster.clone());
            // Occupy some ncpus with other jobs.
            for v in 0..cluster.n_vnodes() {
                let id = VnodeId::from_index(v);
                let cap = cluster.capacity(id)[0];
                let used = if cap == 0 { 0 } else { rng.below(cap + 1) };
                if used > 0 {
                    let mut a = Allocation::new(Sharing::Shared);
                    a.add(id, &[used, 0, 0]);
                    state.allocate(&a).unwrap();
                }
            }
            let n_complexes = 1 + rng.below(3);
            let request = Request {
                chunks: (0..n_complexes)
                    .map(|_| Chunk::new(1 + rng.below(5) as u32, vec![1, 0, 0]))
                    .collect(),
                ..Request::from_chunks(Vec::new())
            };
            let mut buf = ScratchBuf::default();
            let view = Scratch::new(&state, &mut buf);
            let mut ff = FirstFit::default();
            let fast = ff.place(&request, &view);
            let shape = Shape {
                chunks: &request.chunks,
                arrangement: Arrangement::Free,
                sharing: Sharing::Shared,
                filter: None,
            };
            let general = ff.place_chunks(&shape, &view, Allocation::new(Sharing::Shared), None);
            assert_eq!(
                fast.as_ref().map(|a| a.parts(3).collect::<Vec<_>>()),
                general.as_ref().map(|a| a.parts(3).collect::<Vec<_>>())
            );
            outcomes[usize::from(fast.is_some())] += 1;
            // Within a set: some of the vnodes, in an order of its own (a node_sort_key's).
            let mut list: Vec<VnodeId> = (0..cluster.n_vnodes())
                .filter(|_| rng.below(3) > 0)
                .map(VnodeId::from_index)
                .collect();
            for i in (1..list.len()).rev() {
                list.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let fast = ff.place_within(&request.chunks, &request, None, &view, Some(&list));
            let general =
                ff.place_chunks(&shape, &view, Allocation::new(Sharing::Shared), Some(&list));
            assert_eq!(
                fast.as_ref().map(|a| a.parts(3).collect::<Vec<_>>()),
                general.as_ref().map(|a| a.parts(3).collect::<Vec<_>>()),
                "within {list:?}"
            );
            within_outcomes[usize::from(fast.is_some())] += 1;
        }
        assert!(
            within_outcomes[0] > 30 && within_outcomes[1] > 30,
            "both outcomes are exercised within sets: {within_outcomes:?}"
        );
        assert!(
            outcomes[0] > 30 && outcomes[1] > 30,
            "both outcomes are exercised: {outcomes:?}"
        );
    }
}
