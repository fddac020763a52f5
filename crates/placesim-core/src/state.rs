//! The mutable state of a cluster during a run, and copy-on-write scratch views of it.
//!
//! [`ClusterState`] is owned by the kernel and changed only when the kernel applies a validated
//! decision or a job ends. Policies read it, and do their what-if reasoning (the jobs they are
//! about to start in this pass, the resources that will be free at a reservation's shadow time)
//! on a [`Scratch`], which reads through to the real state and copies a vnode's row only when
//! it changes it. Resetting a scratch costs a bitset copy, not a copy of every vnode.

use crate::bitset::Bitset;
use crate::cluster::Cluster;
use crate::ids::VnodeId;
use crate::request::Sharing;
use crate::reservation::Affinity;
use crate::resource::ConsumableIdx;
use crate::stretch::StretchKeys;
use crate::time::SimTime;
use std::sync::Arc;

/// The part of a vnode's row after its free amounts: the number of jobs on it.
const JOBS: usize = 0;
/// Flags: bit 0 = held exclusively by a job.
const FLAGS: usize = 1;
const FLAG_EXCLUSIVE: u64 = 1;
const EXTRA: usize = 2;

/// Resources taken by one job: runs of consecutive vnodes, each vnode of a run giving the same
/// amounts.
///
/// Stored as runs rather than one entry per vnode because a job of thousands of vnodes is
/// usually a few runs (first fit takes free vnodes in order; a placement set is a stretch of
/// the cluster), and every start and end, in the real state and in every what-if view, then
/// costs work per run for the totals and a tight loop over the run's rows, not a list of
/// thousands of entries built, copied and walked one by one (issue 20). The runs are kept
/// maximal: a part that continues the last run with the same amounts extends it, so two
/// allocations of the same vnodes and amounts in the same order are equal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    /// The runs, in the order their vnodes were chosen; no vnode is in two.
    runs: Vec<VnodeRun>,
    /// The amounts each vnode of a run gives, `n_consumables` per run, row-major.
    run_amounts: Vec<u64>,
    /// How many vnodes the runs hold.
    n_vnodes: usize,
    /// How the vnodes are held.
    pub sharing: Sharing,
    /// Where a placement policy put the job, for the output: a placement set (`switch=A`),
    /// `spanned`, or none for placement without sets. Only text: checks read `within`.
    pub label: Option<Arc<str>>,
    /// What the placement promises about the vnodes, by its own set indices.
    pub within: Within,
    /// What the job counts against run limits (PBS `max_run`, `max_run_res`), held while it
    /// runs exactly as its vnodes are, so that every what-if view and calendar sees a limit's
    /// room come back when the job ends. `None` for a job under no limit.
    pub limit_draws: Option<Arc<[LimitDraw]>>,
}

/// One thing a job counts against a run limit: the limit (an index into the state's
/// limits, [`ClusterState::set_run_limits`]) and how much of it the job takes (1 for a
/// count of jobs, the requested amount for a limit on a resource).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LimitDraw {
    /// The limit.
    pub limit: u32,
    /// How much of it the job takes.
    pub amount: u64,
}

/// What a placement with sets promises about an allocation's vnodes, by the indices of its
/// own sets: what the invariant checks and bindings read, so no label text is parsed back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Within {
    /// No promise: a placement without sets, or a job that spans by the placement's rules.
    #[default]
    Anywhere,
    /// Inside the placement's set with this index.
    Set(u32),
    /// Chosen for the placement's set with this index, but may borrow vnodes outside it
    /// (Moab's MINLOSS by speed).
    Borrowing(u32),
    /// Inside the union of the placement's sets with these indices (Moab's ANYOF,
    /// SPANEVENLY).
    Sets(Arc<[u32]>),
}

/// `count` consecutive vnodes from `first` (by id, which is first-fit order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VnodeRun {
    /// The first vnode.
    pub first: VnodeId,
    /// How many vnodes, at least one.
    pub count: u32,
}

impl VnodeRun {
    /// The vnodes' indices.
    #[inline]
    pub fn indices(self) -> std::ops::Range<usize> {
        let first = self.first.index();
        first..first + self.count as usize
    }

    /// The vnodes, in order.
    #[inline]
    pub fn vnodes(self) -> impl Iterator<Item = VnodeId> {
        self.indices().map(VnodeId::from_index)
    }
}

/// An allocation's parts one vnode at a time, each addressable by its position: what a search
/// that may come back to a vnode (more chunks on it) builds before it becomes an
/// [`Allocation`], whose runs cannot be added to in place.
#[derive(Debug, Clone, Default)]
pub struct PartsBuilder {
    vnodes: Vec<VnodeId>,
    amounts: Vec<u64>,
    width: usize,
}

impl PartsBuilder {
    /// Empties the builder for parts of `width` amounts each, keeping its buffers.
    pub fn clear(&mut self, width: usize) {
        self.vnodes.clear();
        self.amounts.clear();
        self.width = width;
    }

    /// Appends a part on a vnode not in the builder yet; returns its position.
    pub fn push(&mut self, v: VnodeId, amounts: impl IntoIterator<Item = u64>) -> usize {
        self.vnodes.push(v);
        self.amounts.extend(amounts);
        self.vnodes.len() - 1
    }

    /// The amounts of the part at `pos`, to add more to.
    pub fn amounts_mut(&mut self, pos: usize) -> &mut [u64] {
        &mut self.amounts[pos * self.width..(pos + 1) * self.width]
    }

    /// Appends the parts, in order, to `alloc` (none of their vnodes in it yet).
    pub fn append_to(&self, alloc: &mut Allocation) {
        for (&v, amounts) in self
            .vnodes
            .iter()
            .zip(self.amounts.chunks_exact(self.width.max(1)))
        {
            alloc.push(v, amounts);
        }
    }
}

impl Allocation {
    /// An empty allocation holding its vnodes as `sharing` says; parts are added with
    /// [`Allocation::add`], [`Allocation::push`] or [`Allocation::push_run`].
    pub fn new(sharing: Sharing) -> Self {
        Allocation {
            sharing,
            ..Allocation::default()
        }
    }

    /// An allocation of `parts`, in order; a vnode named twice has its amounts added.
    pub fn from_parts<'a>(
        sharing: Sharing,
        parts: impl IntoIterator<Item = (VnodeId, &'a [u64])>,
    ) -> Self {
        let mut a = Allocation::new(sharing);
        for (v, amounts) in parts {
            a.add(v, amounts);
        }
        a
    }

    /// Adds `amounts` (one per slot) on `v`, adding them to what an earlier part on the same
    /// vnode gives. O(runs); a search that knows `v` is new uses [`Allocation::push`].
    pub fn add(&mut self, v: VnodeId, amounts: &[u64]) {
        let n = amounts.len();
        let Some(i) = self
            .runs
            .iter()
            .position(|r| r.indices().contains(&v.index()))
        else {
            self.push(v, amounts);
            return;
        };
        if amounts.iter().all(|&a| a == 0) {
            return;
        }
        // Split the run around v: [first, v), v with the sum, (v, end).
        let run = self.runs[i];
        let old: Vec<u64> = self.run_amounts[i * n..(i + 1) * n].to_vec();
        let sum: Vec<u64> = old.iter().zip(amounts).map(|(a, b)| a + b).collect();
        let before = (v.index() - run.first.index()) as u32;
        let after = run.count - before - 1;
        let mut pieces: Vec<(VnodeRun, &[u64])> = Vec::with_capacity(3);
        if before > 0 {
            pieces.push((
                VnodeRun {
                    first: run.first,
                    count: before,
                },
                &old,
            ));
        }
        pieces.push((VnodeRun { first: v, count: 1 }, &sum));
        if after > 0 {
            pieces.push((
                VnodeRun {
                    first: VnodeId::from_index(v.index() + 1),
                    count: after,
                },
                &old,
            ));
        }
        let amounts_of_pieces: Vec<u64> = pieces.iter().flat_map(|p| p.1.iter().copied()).collect();
        self.runs
            .splice(i..=i, pieces.iter().map(|p| p.0))
            .for_each(drop);
        self.run_amounts
            .splice(i * n..(i + 1) * n, amounts_of_pieces)
            .for_each(drop);
    }

    /// Appends `amounts` on `v`, which the caller knows holds no part yet: extends the last
    /// run when `v` follows it with the same amounts.
    #[inline]
    pub fn push(&mut self, v: VnodeId, amounts: &[u64]) {
        self.push_run(VnodeRun { first: v, count: 1 }, amounts);
    }

    /// Makes room for `runs` more runs of `n_consumables` amounts each, so that pushing them
    /// allocates once rather than growing the lists run by run.
    pub fn reserve_runs(&mut self, runs: usize, n_consumables: usize) {
        self.runs.reserve(runs);
        self.run_amounts.reserve(runs * n_consumables);
    }

    /// Appends `run`, each of its vnodes giving `amounts`; none of them holds a part yet.
    pub fn push_run(&mut self, run: VnodeRun, amounts: &[u64]) {
        if run.count == 0 {
            return;
        }
        self.n_vnodes += run.count as usize;
        let n = amounts.len();
        if let Some(last) = self.runs.last_mut()
            && last.first.index() + last.count as usize == run.first.index()
            && self.run_amounts[self.run_amounts.len() - n..]
                .iter()
                .zip(amounts)
                .all(|(a, b)| a == b)
        {
            last.count += run.count;
            return;
        }
        self.runs.push(run);
        self.run_amounts.extend_from_slice(amounts);
    }

    /// How many vnodes it holds.
    #[inline]
    pub fn n_vnodes(&self) -> usize {
        self.n_vnodes
    }

    /// Whether it holds no vnode.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n_vnodes == 0
    }

    /// The vnodes, in the order they were chosen.
    pub fn vnodes(&self) -> impl Iterator<Item = VnodeId> + '_ {
        self.runs.iter().flat_map(|r| r.vnodes())
    }

    /// Whether it holds a part on `v`. O(runs).
    pub fn holds(&self, v: VnodeId) -> bool {
        self.runs.iter().any(|r| r.indices().contains(&v.index()))
    }

    /// The runs, each with the amounts every one of its vnodes gives.
    #[inline]
    pub fn runs(&self, n_consumables: usize) -> impl Iterator<Item = (VnodeRun, &[u64])> {
        self.runs
            .iter()
            .copied()
            .zip(self.run_amounts.chunks_exact(n_consumables.max(1)))
    }

    /// The runs of vnodes, without their amounts.
    #[inline]
    pub fn vnode_runs(&self) -> &[VnodeRun] {
        &self.runs
    }

    /// The parts: each vnode with the amounts taken from it.
    #[inline]
    pub fn parts(&self, n_consumables: usize) -> impl Iterator<Item = (VnodeId, &[u64])> {
        self.runs(n_consumables)
            .flat_map(|(run, amounts)| run.vnodes().map(move |v| (v, amounts)))
    }

    /// The total of one consumable over all vnodes.
    pub fn total(&self, n_consumables: usize, c: ConsumableIdx) -> u64 {
        self.runs(n_consumables)
            .map(|(run, a)| u64::from(run.count) * a[c.index()])
            .sum()
    }

    /// Whether `other` holds the same amounts on the same vnodes in the same order, held the
    /// same way (labels, set promises and limit draws aside).
    pub fn same_holding(&self, other: &Allocation) -> bool {
        self.runs == other.runs
            && self.run_amounts == other.run_amounts
            && self.sharing == other.sharing
    }

    /// Makes `into` equal to this allocation, reusing its buffers (a derived `clone_from`
    /// would allocate anew).
    pub fn copy_into(&self, into: &mut Allocation) {
        into.runs.clone_from(&self.runs);
        into.run_amounts.clone_from(&self.run_amounts);
        into.n_vnodes = self.n_vnodes;
        into.sharing = self.sharing;
        into.label.clone_from(&self.label);
        into.within.clone_from(&self.within);
        into.limit_draws.clone_from(&self.limit_draws);
    }

    /// How many amounts each run carries, given the consumables: what a well-formed
    /// allocation's storage must match.
    fn shape_ok(&self, n_consumables: usize) -> bool {
        self.run_amounts.len() == self.runs.len() * n_consumables
    }
}

/// Why the kernel refused to apply an allocation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllocationError {
    /// The vnode id is not in the cluster.
    #[error("vnode {0} does not exist")]
    UnknownVnode(VnodeId),
    /// The vnode cannot take a new job (busy, or held exclusively).
    #[error("vnode {0} is not eligible for a new job")]
    NotEligible(VnodeId),
    /// An exclusive allocation asked for a vnode that holds another job.
    #[error("vnode {0} holds another job, so it cannot be taken exclusively")]
    NotEmpty(VnodeId),
    /// More of a consumable than is free.
    #[error("vnode {vnode} has {free} of consumable slot {slot} free, {asked} asked")]
    Oversubscribed {
        /// The vnode.
        vnode: VnodeId,
        /// The consumable slot.
        slot: usize,
        /// What is free.
        free: u64,
        /// What was asked.
        asked: u64,
    },
    /// The same vnode appears twice.
    #[error("vnode {0} appears twice in one allocation")]
    DuplicateVnode(VnodeId),
    /// A run limit has less room than the allocation counts against it.
    #[error("run limit {limit} has room for {room}, {asked} asked")]
    OverLimit {
        /// The limit.
        limit: u32,
        /// Its room left.
        room: u64,
        /// What the allocation counts against it.
        asked: u64,
    },
    /// The allocation counts against a run limit the state does not have.
    #[error("run limit {0} does not exist")]
    UnknownLimit(u32),
    /// The amount vector has the wrong length.
    #[error("allocation has {got} amounts for {runs} runs of vnodes, expected {per} per run")]
    Shape {
        /// Amounts given.
        got: usize,
        /// Runs given.
        runs: usize,
        /// Consumables per run.
        per: usize,
    },
}

/// Every tracked set's tallies as a view keeps them, set after set: each the free amount of
/// each consumable on its vnodes that can take a job, then how many such vnodes it has
/// ([`StateView::tracked_sets_free`]).
#[derive(Debug, Clone, Copy)]
pub struct SetTallies<'a> {
    all: &'a [u64],
    /// Numbers per set: the consumables and the vnode count.
    width: usize,
}

impl<'a> SetTallies<'a> {
    /// Set `set`'s tallies: the consumables' free amounts, then the vnode count.
    #[inline]
    pub fn of(&self, set: usize) -> &'a [u64] {
        &self.all[set * self.width..(set + 1) * self.width]
    }

    /// Set `set`'s free amount of consumable `slot`, read alone: a search that asks it of
    /// every set reads one number per set, where [`Self::of`] makes a slice of each.
    #[inline]
    pub fn free_of(&self, set: usize, slot: ConsumableIdx) -> u64 {
        self.all[set * self.width + slot.index()]
    }
}

/// Read access shared by the real state and scratch views, so one placement search serves both.
pub trait StateView {
    /// The cluster being viewed.
    fn cluster(&self) -> &Cluster;
    /// Free amount of slot `c` on `v`.
    fn free(&self, v: VnodeId, c: ConsumableIdx) -> u64;
    /// Jobs currently on `v`.
    fn n_jobs(&self, v: VnodeId) -> u64;
    /// Vnodes that can take a new job: not held exclusively and not job-busy
    /// (PBS: a vnode whose ncpus are all assigned is job-busy).
    fn eligible(&self) -> &Bitset;
    /// Free amount of slot `c` summed over all vnodes.
    fn free_total(&self, c: ConsumableIdx) -> u64;
    /// How many vnodes are held exclusively. Their free amounts count in [`Self::free_total`]
    /// but no other job can use them.
    fn exclusive_vnodes(&self) -> u64;
    /// How many vnodes are held exclusively with something left free that no other job can
    /// use: [`Self::exclusive_vnodes`] but the vnodes out of service, which an outage holds
    /// whole (when no vnode shares a pool), so the free totals are exact without them.
    fn exclusive_with_room(&self) -> u64;
    /// A tracked set's tallies: the free amount of each consumable on its vnodes that can take
    /// a job, then how many such vnodes it has (see [`ClusterState::track_sets`]).
    fn tracked_set_free(&self, set: usize) -> &[u64] {
        self.tracked_sets_free().of(set)
    }
    /// Every tracked set's tallies, each as [`Self::tracked_set_free`] gives it: for a search
    /// that reads every set's, so that where the view keeps them is looked up once rather than
    /// per set.
    fn tracked_sets_free(&self) -> SetTallies<'_>;
    /// The room left under run limit `limit` (see [`ClusterState::set_run_limits`]): its
    /// value less what running (or, in a view, taken) jobs count against it.
    fn limit_room(&self, limit: u32) -> u64;

    /// The first of `draws` that the room left under its limit cannot cover, if any.
    fn short_limit(&self, draws: &[LimitDraw]) -> Option<LimitDraw> {
        draws
            .iter()
            .copied()
            .find(|d| d.amount > self.limit_room(d.limit))
    }

    /// Whether `alloc`, made in another state, could be taken here as it is: each of its
    /// vnodes can take its part, and each run limit it counts against has the room. What a
    /// calendar asks of a reservation when something else is to be taken before it.
    fn has_room_for(&self, alloc: &Allocation) -> bool {
        let n_cons = self.cluster().resources().n_consumables();
        alloc
            .runs(n_cons)
            .all(|(run, amounts)| self.run_fits(run.indices(), amounts, alloc.sharing))
            && alloc
                .limit_draws
                .as_deref()
                .is_none_or(|draws| self.short_limit(draws).is_none())
            && pool_shortfall(self, alloc).is_none()
    }

    /// [`StateView::has_room_for`] of `alloc` in a view that had room for it just before
    /// `taken` was taken: only the vnodes `taken` holds and the run limits it counts against
    /// changed, so only `alloc`'s parts on those vnodes, and its limits, are asked again. A
    /// backfill candidate of a few vnodes is checked against a top job's reservation of
    /// thousands at the cost of the candidate's. Where vnodes share a pool, taking changes
    /// vnodes outside `taken`, and the whole of `alloc` is asked.
    fn has_room_after_taking(&self, alloc: &Allocation, taken: &Allocation) -> bool {
        if !self.cluster().pools().is_empty() {
            return self.has_room_for(alloc);
        }
        let n_cons = self.cluster().resources().n_consumables();
        let parts_fit = taken.vnode_runs().iter().all(|t| {
            let t = t.indices();
            alloc.runs(n_cons).all(|(run, amounts)| {
                let a = run.indices();
                self.run_fits(
                    a.start.max(t.start)..a.end.min(t.end),
                    amounts,
                    alloc.sharing,
                )
            })
        });
        let room = parts_fit
            && alloc
                .limit_draws
                .as_deref()
                .is_none_or(|draws| self.short_limit(draws).is_none());
        debug_assert_eq!(room, self.has_room_for(alloc), "{alloc:?} after {taken:?}");
        room
    }

    /// Whether every vnode of `range` can take a chunk needing `amounts` with this sharing,
    /// each ignoring the others: [`Self::fits_chunk`] for each. A view that knows stretches of
    /// vnodes with one row answers for each stretch at once.
    fn run_fits(&self, range: std::ops::Range<usize>, amounts: &[u64], sharing: Sharing) -> bool {
        each_fits(self, range, amounts, sharing)
    }

    /// Whether `v` can take a chunk needing `amounts` with this sharing, ignoring other chunks.
    #[inline]
    fn fits_chunk(&self, v: VnodeId, amounts: &[u64], sharing: Sharing) -> bool {
        if !self.eligible().contains(v.index()) {
            return false;
        }
        if sharing.is_exclusive() && self.n_jobs(v) > 0 {
            return false;
        }
        amounts
            .iter()
            .enumerate()
            .all(|(c, &a)| a <= self.free(v, ConsumableIdx(c as u8)))
    }
}

/// Sets of vnodes (placement sets, node sets) whose free capacity the state keeps current,
/// so that a policy reads a set's free amounts in O(consumables) instead of summing its
/// vnodes. As PBS counts set metadata, a vnode that cannot take a job (job-busy or held
/// exclusively) contributes nothing free.
#[derive(Debug, Clone, Default)]
pub struct SetIndex {
    /// Per vnode, its signature (vnodes in exactly the same sets share one), by stretches of
    /// consecutive vnodes with the same one.
    signatures: StretchKeys,
    /// Per signature, its sets: `ids[offsets[s]..offsets[s + 1]]`.
    offsets: Vec<u32>,
    ids: Vec<u32>,
    n_sets: usize,
}

impl SetIndex {
    /// Indexes `sets` (each a list of vnodes; a vnode may be in several) over `n_vnodes`.
    pub fn new(n_vnodes: usize, sets: &[Vec<VnodeId>]) -> SetIndex {
        let mut per_vnode: Vec<Vec<u32>> = vec![Vec::new(); n_vnodes];
        for (g, members) in sets.iter().enumerate() {
            for v in members {
                if let Some(list) = per_vnode.get_mut(v.index())
                    && list.last() != Some(&(g as u32))
                {
                    list.push(g as u32);
                }
            }
        }
        let mut known: std::collections::HashMap<&[u32], u32> = std::collections::HashMap::new();
        let mut signature = Vec::with_capacity(n_vnodes);
        let mut offsets = vec![0];
        let mut ids = Vec::new();
        for (v, list) in per_vnode.iter().enumerate() {
            // Sets are mostly stretches of consecutive vnodes: a vnode in the sets of the one
            // before it has its signature, told without hashing its list (a hash per vnode
            // was 5 ms of building psets-bench.toml's 16,384, before its run could start).
            if v > 0 && per_vnode[v - 1] == *list {
                signature.push(signature[v - 1]);
                continue;
            }
            let next = known.len() as u32;
            let sig = *known.entry(list.as_slice()).or_insert_with(|| {
                ids.extend_from_slice(list);
                offsets.push(ids.len() as u32);
                next
            });
            signature.push(sig);
        }
        SetIndex {
            signatures: StretchKeys::new(&signature),
            offsets,
            ids,
            n_sets: sets.len(),
        }
    }

    /// How many sets there are.
    pub fn len(&self) -> usize {
        self.n_sets
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n_sets == 0
    }

    /// `v`'s signature: equal for two vnodes exactly when they are in the same sets.
    #[inline]
    fn signature(&self, v: VnodeId) -> u32 {
        self.signatures.key(v.index()).unwrap_or(u32::MAX)
    }

    /// Where the stretch of consecutive vnodes in exactly the sets `v` is in ends: the first
    /// vnode after `v` in other sets (or the number of vnodes).
    #[inline]
    fn same_sets_until(&self, v: usize) -> usize {
        self.signatures.until(v)
    }

    /// The sets of signature `sig`.
    #[inline]
    fn sets_of(&self, sig: u32) -> &[u32] {
        let s = sig as usize;
        match (self.offsets.get(s), self.offsets.get(s + 1)) {
            (Some(&a), Some(&b)) => &self.ids[a as usize..b as usize],
            _ => &[],
        }
    }

    #[inline]
    fn of(&self, v: VnodeId) -> &[u32] {
        self.sets_of(self.signature(v))
    }
}

/// The kernel's record of what is free where.
#[derive(Debug, Clone)]
pub struct ClusterState {
    cluster: Cluster,
    width: usize,
    rows: Vec<u64>,
    eligible: Bitset,
    free_total: Vec<u64>,
    /// A validation's copy of an allocation's runs, sorted, when they are not in vnode order.
    sorted_runs: Vec<VnodeRun>,
    exclusive_vnodes: u64,
    /// How many down vnodes [`Self::exclusive_vnodes`] counts whose outage holds all of
    /// them (every down vnode, when no vnode shares a pool).
    down_held_whole: u64,
    sets: SetIndex,
    /// Per set: the free amount of each consumable, then the count of free vnodes.
    tracked_set_free: Vec<u64>,
    /// Vnodes out of service. A down vnode holds an exclusive allocation of its whole
    /// capacity, so placement, free totals and set tallies all see it as taken.
    down: Bitset,
    /// How many vnodes `down` holds: whether any is down is asked at every pass.
    n_down: usize,
    /// What the whole-stretch form of [`apply`] and [`Self::validate`] may assume of rows
    /// without reading them ([`Marks`]).
    marks: Marks,
    /// Bumped at every vnode going down or up: what-if states built earlier are stale.
    outage_epoch: u64,
    /// Tallies kept for the kernel's reports of settled instants, when it watches a partition
    /// of the vnodes.
    watch: Option<Box<Watch>>,
    /// Per run limit: its value (shared: copies of the state do not copy it).
    limit_values: Arc<[u64]>,
    /// Per run limit: the room left under it.
    limit_room: Vec<u64>,
    /// Per run limit: what the jobs waiting in the queue would draw from it, all together
    /// (the kernel counts jobs in and out of the queue): when the room covers it, no limit
    /// can hold back any waiting job in a pass ([`ClusterState::limits_slack`]).
    queued_draws: Vec<u64>,
    /// The kernel's clock: the instant this state is at. A placement whose settings change
    /// over a run's timeline reads it to know which are in force ([`ClusterState::now`]).
    now: SimTime,
    /// In one scheduler's view of a partitioned cluster, the vnodes outside its partition:
    /// nothing free there, in this view and in the idle copies made of it.
    outside: Option<Arc<Bitset>>,
    /// Where `eligible` changed lately: what a scratch view's copy of it needs to be brought
    /// up to date ([`ScratchBuf::own_eligibility`]).
    eligibility_log: EligibilityLog,
}

/// Which [`ClusterState`] a scratch view's copy of the eligibility was taken from: a number
/// no other state has, a new one for every copy of a state, as a copy changes on its own.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct StateId(u64);

impl StateId {
    fn fresh() -> StateId {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        StateId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// The words of a state's eligibility bits changed since a point, so that a scratch view
/// that copied the bits before brings its copy up to date by copying those words (and the
/// ones it changed itself) rather than all of them. A pass that starts a job used to copy the
/// whole bitset into its view: 11.7 KB for CEA-Curie's 93,312 vnodes, at every such pass.
/// The log keeps at most [`EligibilityLog::KEPT`] ranges; a view whose point is older copies
/// everything, as before.
#[derive(Debug)]
struct EligibilityLog {
    state: StateId,
    /// How many ranges were logged before `ranges` and forgotten.
    forgotten: u64,
    /// Word ranges, as `(first, end)`.
    ranges: Vec<(u32, u32)>,
}

impl Clone for EligibilityLog {
    /// A copy of a state is another state: its log starts afresh, under a new id.
    fn clone(&self) -> Self {
        EligibilityLog::new()
    }
}

impl EligibilityLog {
    const KEPT: usize = 1024;

    fn new() -> EligibilityLog {
        EligibilityLog {
            state: StateId::fresh(),
            forgotten: 0,
            ranges: Vec::new(),
        }
    }

    /// The point the log has reached.
    fn position(&self) -> (StateId, u64) {
        (self.state, self.forgotten + self.ranges.len() as u64)
    }

    /// The word ranges changed since `point`, if this log still has them all.
    fn since(&self, (state, position): (StateId, u64)) -> Option<&[(u32, u32)]> {
        let from = position.checked_sub(self.forgotten)?;
        (state == self.state)
            .then(|| self.ranges.get(usize::try_from(from).ok()?..))
            .flatten()
    }

    /// The bits of vnodes `vnodes` may have changed.
    fn record(&mut self, vnodes: std::ops::Range<usize>) {
        if self.ranges.len() == Self::KEPT {
            self.forgotten += Self::KEPT as u64;
            self.ranges.clear();
        }
        let words = Bitset::words_of(vnodes);
        self.ranges.push((words.start as u32, words.end as u32));
    }

    /// Any bit may have changed: every earlier point is forgotten.
    fn forget_all(&mut self) {
        self.forgotten = self.position().1 + 1;
        self.ranges.clear();
    }
}

/// What the kernel reports after every instant, kept by the same loop that applies
/// allocations (so it costs a few instructions per vnode already in cache): per set of a
/// partition, the ncpus that a new job could use (on vnodes up and not held exclusively), and
/// the ncpus of idle vnodes (no job, up). Only the real state keeps it, not scratch views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// Per vnode, its set, by stretches of consecutive vnodes in the same one (shared: cloning
    /// a state does not copy it).
    set_of: std::sync::Arc<StretchKeys>,
    /// Per set, the free ncpus new jobs could use.
    pub set_free: Vec<u64>,
    /// ncpus of vnodes with no job that are up.
    pub idle_ncpus: u64,
    /// Bumped by every allocation taken or given back that changes a set's free ncpus.
    pub version: u64,
}

impl Watch {
    /// Where the stretch of consecutive vnodes in `v`'s set ends.
    #[inline]
    fn same_set_until(&self, v: usize) -> usize {
        self.set_of.until(v)
    }
}

/// What a state knows of some of its rows without reading them, so that a run of a job's
/// equal parts over a stretch of vnodes with the same capacities can be taken or given back
/// as one (issue 20): every row of such a stretch changes the same way, from a row known
/// before to one known after; its eligibility, set tallies and watch change by the count of
/// vnodes. Each mark is set only where its condition holds (one may be clear where it holds
/// too: the plain per-vnode loop then does the same work).
///
/// Where a mark says what the whole row is (`derived`: pristine, or held whole by its single
/// job, or held by it for all its ncpus and nothing else), the row is read from the mark and its stored copy may be stale: a take of whole
/// vnodes and a give that leaves them pristine write no row at all, and only the per-vnode
/// loop and copies into scratch views bring a stored row up to date ([`Marks::derived_row`]).
#[derive(Debug, Clone)]
struct Marks {
    /// The vnode's row is its capacity, with no job and no flag.
    pristine: Bitset,
    /// One job holds the vnode, and took it while it was pristine: its row is its capacity
    /// less that job's part, flagged exclusive if the job is.
    single: Bitset,
    /// Single, and its job holds all of it: nothing free, one job, flagged exclusive if
    /// `full_excl` says so.
    full: Bitset,
    /// Single, and its job holds all its ncpus and nothing else (a job asking ncpus alone, on
    /// vnodes with memory): its capacities with no ncpus free, one job, flagged exclusive if
    /// `full_excl` says so. Kept only where some vnode has more than ncpus (elsewhere such a
    /// vnode is `full`).
    ncpus_only: Bitset,
    /// Of the `full` and `ncpus_only` vnodes, those whose job holds them exclusively.
    full_excl: Bitset,
    /// Pristine, full or ncpus-only: the row is the mark's, not the stored one.
    derived: Bitset,
    /// The rows the marks read, shared by copies.
    rows: DerivedRows,
    /// A full vnode's row, shared and exclusive, in the first `width` slots.
    full_rows: [[u64; WHOLE_STRETCH_WIDTH]; 2],
    width: usize,
    /// Whether the marks are kept at all ([`Marks::kept_for`]).
    kept: bool,
}

/// The widest row (consumables, then the job count and flags) the whole-stretch form
/// handles; a cluster with more consumables always takes the per-vnode loop.
const WHOLE_STRETCH_WIDTH: usize = 16;

/// Per vnode, the rows [`Marks`] read rather than the stored ones, built once per cluster
/// and shared by every state of it (its idle copies too).
#[derive(Debug, Clone)]
struct DerivedRows {
    /// Its pristine row: capacities, no job, no flag.
    idle: Arc<[u64]>,
    /// Its ncpus-only rows (capacities with no ncpus free, one job), shared then exclusive:
    /// two rows per vnode, the shared ones first. Only where marks are kept and some vnode
    /// has more than ncpus.
    ncpus_only: Option<Arc<[u64]>>,
}

impl DerivedRows {
    fn new(cluster: &Cluster) -> DerivedRows {
        let width = cluster.resources().n_consumables() + EXTRA;
        let n = cluster.n_vnodes();
        let mut idle = Vec::with_capacity(n * width);
        for v in 0..n {
            idle.extend_from_slice(cluster.capacity(VnodeId::from_index(v)));
            idle.extend_from_slice(&[0; EXTRA]);
        }
        let ncpus = ConsumableIdx::NCPUS.index();
        // Read only by marks, and only when a vnode has more than ncpus (else such a take
        // leaves nothing free, and the vnode is `full`).
        let needed = Marks::kept_for(cluster)
            && (0..n).any(|v| {
                let cap = cluster.capacity(VnodeId::from_index(v));
                cap.iter().enumerate().any(|(c, &a)| c != ncpus && a > 0)
            });
        let ncpus_only = needed.then(|| {
            let n_cons = width - EXTRA;
            let mut rows = Vec::with_capacity(2 * n * width);
            for flags in [0, FLAG_EXCLUSIVE] {
                for row in idle.chunks_exact(width) {
                    let at = rows.len();
                    rows.extend_from_slice(row);
                    rows[at + ncpus] = 0;
                    rows[at + n_cons + JOBS] = 1;
                    rows[at + n_cons + FLAGS] = flags;
                }
            }
            Arc::from(rows)
        });
        DerivedRows {
            idle: Arc::from(idle),
            ncpus_only,
        }
    }
}

impl Marks {
    /// Whether a cluster's states keep marks at all: not where indirect resources share pools
    /// (a job on one member changes the rows of the others), nor where rows are wider than
    /// the whole-stretch form handles.
    fn kept_for(cluster: &Cluster) -> bool {
        cluster.pools().is_empty()
            && cluster.resources().n_consumables() + EXTRA <= WHOLE_STRETCH_WIDTH
    }

    /// The marks of an idle cluster whose rows are `rows`: every vnode pristine.
    fn idle(cluster: &Cluster, rows: DerivedRows) -> Marks {
        let n = cluster.n_vnodes();
        let n_cons = cluster.resources().n_consumables();
        let width = n_cons + EXTRA;
        let kept = Marks::kept_for(cluster);
        let mut pristine = Bitset::new(n);
        let mut full_rows = [[0; WHOLE_STRETCH_WIDTH]; 2];
        if kept {
            pristine.set_range(0..n, true);
            for (row, flags) in full_rows.iter_mut().zip([0, FLAG_EXCLUSIVE]) {
                row[n_cons + JOBS] = 1;
                row[n_cons + FLAGS] = flags;
            }
        }
        Marks {
            derived: pristine.clone(),
            pristine,
            single: Bitset::new(n),
            full: Bitset::new(n),
            ncpus_only: Bitset::new(n),
            full_excl: Bitset::new(n),
            rows,
            full_rows,
            width,
            kept,
        }
    }

    /// The row of a `derived` vnode `i`.
    #[inline]
    fn derived_row(&self, i: usize) -> &[u64] {
        let excl = usize::from(self.full_excl.contains(i));
        if self.pristine.contains(i) {
            &self.rows.idle[i * self.width..(i + 1) * self.width]
        } else if self.full.contains(i) {
            &self.full_rows[excl][..self.width]
        } else {
            // Only ncpus-only vnodes are derived otherwise, and only where the rows exist.
            let rows = self.rows.ncpus_only.as_deref().unwrap_or_default();
            let at = (excl * self.pristine.len() + i) * self.width;
            &rows[at..at + self.width]
        }
    }

    /// Clears every mark on `range`, whose stored rows were written by other means.
    fn forget(&mut self, range: std::ops::Range<usize>) {
        self.set(range, [false; 6]);
    }

    /// Sets the marks of every vnode of `range`: pristine, single, full, ncpus-only, full and
    /// exclusive, derived.
    fn set(&mut self, range: std::ops::Range<usize>, on: [bool; 6]) {
        let sets = [
            &mut self.pristine,
            &mut self.single,
            &mut self.full,
            &mut self.ncpus_only,
            &mut self.full_excl,
            &mut self.derived,
        ];
        Bitset::set_ranges(sets, on, range);
    }

    /// Whether a run of equal parts on `range` can be applied in the whole-stretch form
    /// ([`WholeStretch`]): the vnodes have the same capacities, and a take finds them all
    /// pristine and eligible, a give all single and equally eligible.
    fn allow(
        &self,
        cluster: &Cluster,
        eligible: &Bitset,
        range: std::ops::Range<usize>,
        dir: Direction,
    ) -> bool {
        match dir {
            Direction::Take => {
                self.pristine_stretch(cluster, range.clone()) && eligible.contains_range(range)
            }
            Direction::Give => {
                self.alike(cluster, range.clone())
                    && self.single.contains_range(range.clone())
                    && (eligible.contains_range(range.clone()) || eligible.none_in_range(range))
            }
        }
    }

    /// Whether the vnodes of `range` have the same capacities and are all pristine.
    fn pristine_stretch(&self, cluster: &Cluster, range: std::ops::Range<usize>) -> bool {
        self.alike(cluster, range.clone()) && self.pristine.contains_range(range)
    }

    /// Whether marks are kept and the vnodes of `range` have the same capacities.
    fn alike(&self, cluster: &Cluster, range: std::ops::Range<usize>) -> bool {
        self.kept && cluster.same_capacity_until(range.start) >= range.end
    }

    /// Sets the marks of a stretch the whole-stretch form applied, and says whether its
    /// stored rows must be written: a take leaves its vnodes single (and full or ncpus-only,
    /// with no row to write, when `stretch` leaves nothing free or takes only all the ncpus),
    /// a give pristine (no row to write).
    fn after_whole(&mut self, range: std::ops::Range<usize>, stretch: &WholeStretch) -> bool {
        match stretch.dir {
            Direction::Take => {
                let full = stretch.leaves_nothing_free();
                let ncpus_only =
                    !full && self.rows.ncpus_only.is_some() && stretch.takes_ncpus_only();
                let derived = full || ncpus_only;
                let excl = derived && stretch.exclusive;
                self.set(range, [false, true, full, ncpus_only, excl, derived]);
                !derived
            }
            Direction::Give => {
                self.set(range, [true, false, false, false, false, true]);
                false
            }
        }
    }

    /// Brings vnode `i`'s stored `row` up to date if the marks hold it.
    #[inline]
    fn materialize(&self, i: usize, row: &mut [u64]) {
        if self.derived.contains(i) {
            row.copy_from_slice(self.derived_row(i));
        }
    }

    /// Sets the marks of vnode `i` after the per-vnode loop changed its (stored) row: a take
    /// leaves it single if it was pristine (and never pristine); a give leaves it pristine if
    /// its row is its capacity again (and never single). Either way its stored row is its row.
    #[inline]
    fn after_part(&mut self, i: usize, dir: Direction, row: &[u64], cap: &[u64]) {
        self.full.set(i, false);
        self.ncpus_only.set(i, false);
        self.full_excl.set(i, false);
        match dir {
            Direction::Take => {
                let was = self.pristine.contains(i);
                self.pristine.set(i, false);
                self.derived.set(i, false);
                self.single.set(i, was);
            }
            Direction::Give => {
                let n_cons = cap.len();
                let idle =
                    row[n_cons + JOBS] == 0 && row[n_cons + FLAGS] == 0 && row[..n_cons] == *cap;
                self.pristine.set(i, idle);
                self.derived.set(i, idle);
                self.single.set(i, false);
            }
        }
    }
}

/// How [`apply`] learns which runs take the whole-stretch form.
enum Stretches<'a> {
    /// The real state: its own marks decide, and every change keeps them.
    Kept(&'a mut Marks),
    /// A scratch view: decided by the view per run, in the allocation's order. It copies
    /// and writes no row for such a run: each one's row after it is pushed to `after_rows`,
    /// once per run, and the view reads the run's rows there ([`ScratchBuf::patterns`]).
    Decided {
        whole: &'a [bool],
        after_rows: &'a mut Vec<[u64; WHOLE_STRETCH_WIDTH]>,
    },
}

/// A run's rows before and after it is applied in the whole-stretch form ([`Marks`]).
struct WholeStretch {
    before: [u64; WHOLE_STRETCH_WIDTH],
    after: [u64; WHOLE_STRETCH_WIDTH],
    eligible_before: bool,
    eligible_after: bool,
    dir: Direction,
    exclusive: bool,
    n_cons: usize,
}

impl WholeStretch {
    /// A stretch to be [`set`](Self::set) before use: `apply` keeps one and sets it in place
    /// for each run that takes the form (a run is often a few vnodes, and two rows of
    /// [`WHOLE_STRETCH_WIDTH`] words moved per run showed in the profile).
    const UNSET: WholeStretch = WholeStretch {
        before: [0; WHOLE_STRETCH_WIDTH],
        after: [0; WHOLE_STRETCH_WIDTH],
        eligible_before: false,
        eligible_after: false,
        dir: Direction::Take,
        exclusive: false,
        n_cons: 0,
    };

    /// Makes this the stretch of vnodes of capacities `cap` that the run's `amounts` are
    /// taken from while pristine, or given back to while single, and whether they were
    /// eligible before. Only the rows' first `cap.len() + EXTRA` words are written (and
    /// read).
    fn set(
        &mut self,
        cap: &[u64],
        amounts: &[u64],
        exclusive: bool,
        dir: Direction,
        eligible_before: bool,
    ) {
        let n_cons = cap.len();
        let (idle, held) = match dir {
            Direction::Take => (&mut self.before, &mut self.after),
            Direction::Give => (&mut self.after, &mut self.before),
        };
        copy_short(&mut idle[..n_cons], cap);
        idle[n_cons + JOBS] = 0;
        idle[n_cons + FLAGS] = 0;
        write_held_row(held, cap, amounts, exclusive);
        self.eligible_before = eligible_before;
        self.eligible_after = row_eligible(&self.after, n_cons, cap[ConsumableIdx::NCPUS.index()]);
        self.dir = dir;
        self.exclusive = exclusive;
        self.n_cons = n_cons;
    }

    /// Whether a take leaves nothing free on the vnodes.
    fn leaves_nothing_free(&self) -> bool {
        self.after[..self.n_cons].iter().all(|&free| free == 0)
    }

    /// Whether a take takes all of the vnodes' ncpus and nothing else.
    fn takes_ncpus_only(&self) -> bool {
        let ncpus = ConsumableIdx::NCPUS.index();
        self.after[ncpus] == 0
            && (0..self.n_cons).all(|c| c == ncpus || self.after[c] == self.before[c])
    }

    /// Writes the rows of `range` (where `write`), sets their eligibility, and adds what the
    /// eligible ones offered `before` and `after` (free amounts, then their count) and to
    /// `usable`, as the per-vnode loop ([`Segment::apply`]) would vnode by vnode.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        write: bool,
        rows: &mut [u64],
        width: usize,
        eligible: &mut Bitset,
        range: std::ops::Range<usize>,
        before: &mut [u64],
        after: &mut [u64],
        usable: &mut Usable,
        cap_ncpus: u64,
    ) {
        let count = (range.end - range.start) as u64;
        if write {
            fill_rows(
                &mut rows[range.start * width..range.end * width],
                &self.after[..width],
            );
        }
        eligible.set_range(range, self.eligible_after);
        let n_cons = width - EXTRA;
        for (row, offered, sums, side) in [
            (&self.before, self.eligible_before, before, Side::Before),
            (&self.after, self.eligible_after, after, Side::After),
        ] {
            if offered {
                for (sum, &free) in sums.iter_mut().zip(&row[..n_cons]) {
                    *sum += free * count;
                }
                sums[n_cons] += count;
                usable.add_many(side, row[ConsumableIdx::NCPUS.index()], cap_ncpus, count);
            }
        }
    }
}

/// Writes into `held` the row of a vnode of capacities `cap` that one job took `amounts` of
/// while it was pristine (exclusively or not): its first `cap.len() + EXTRA` words.
fn write_held_row(held: &mut [u64], cap: &[u64], amounts: &[u64], exclusive: bool) {
    let n_cons = cap.len();
    for ((slot, &c), &a) in held.iter_mut().zip(cap).zip(amounts) {
        *slot = c - a;
    }
    held[n_cons + JOBS] = 1;
    held[n_cons + FLAGS] = if exclusive { FLAG_EXCLUSIVE } else { 0 };
}

/// Copies `src` into `dst` of the same length, a row or a row's consumables: with the length
/// known to the compiler for the common ones, so that the copy is a few moves rather than a
/// call to `memcpy`, which cost more than the copy where it ran once per run of an allocation
/// (a pattern's row was copied whole, 16 words, where its first few are read).
#[inline]
fn copy_short(dst: &mut [u64], src: &[u64]) {
    macro_rules! fixed {
        ($($n:literal),*) => {
            match src.len() {
                $($n => dst[..$n].copy_from_slice(&src[..$n]),)*
                _ => dst.copy_from_slice(src),
            }
        };
    }
    fixed!(1, 2, 3, 4, 5, 6)
}

/// Writes `pattern` into every row of `rows` (rows of `pattern.len()` words), with the row
/// width known to the compiler for the common widths.
fn fill_rows(rows: &mut [u64], pattern: &[u64]) {
    fn fill<const W: usize>(rows: &mut [u64], pattern: &[u64]) {
        let mut p = [0; W];
        p.copy_from_slice(pattern);
        for row in rows.chunks_exact_mut(W) {
            row.copy_from_slice(&p);
        }
    }
    match pattern.len() {
        3 => fill::<3>(rows, pattern),
        4 => fill::<4>(rows, pattern),
        5 => fill::<5>(rows, pattern),
        6 => fill::<6>(rows, pattern),
        _ => {
            for row in rows.chunks_exact_mut(pattern.len()) {
                row.copy_from_slice(pattern);
            }
        }
    }
}

fn row_eligible(row: &[u64], n_cons: usize, cap_ncpus: u64) -> bool {
    let exclusive = row[n_cons + FLAGS] & FLAG_EXCLUSIVE != 0;
    let job_busy = cap_ncpus > 0 && row[ConsumableIdx::NCPUS.index()] == 0;
    !exclusive && !job_busy
}

impl ClusterState {
    /// An idle cluster: everything free.
    pub fn new(cluster: Cluster) -> Self {
        let derived = DerivedRows::new(&cluster);
        Self::idle_with(cluster, derived)
    }

    /// An idle cluster whose marks read `derived`, shared with the states of the same cluster
    /// made before.
    fn idle_with(cluster: Cluster, derived: DerivedRows) -> Self {
        let n_cons = cluster.resources().n_consumables();
        let width = n_cons + EXTRA;
        let rows = derived.idle.to_vec();
        let mut eligible = Bitset::new(cluster.n_vnodes());
        for v in 0..cluster.n_vnodes() {
            let cap_ncpus = cluster.ncpus_capacity(VnodeId::from_index(v));
            eligible.set(v, row_eligible(&rows[v * width..], n_cons, cap_ncpus));
        }
        // Everything is free: the cluster's totals, which count a shared pool once.
        let free_total = (0..n_cons)
            .map(|c| cluster.capacity_total(ConsumableIdx(c as u8)))
            .collect();
        let n_vnodes = cluster.n_vnodes();
        let marks = Marks::idle(&cluster, derived);
        ClusterState {
            cluster,
            width,
            marks,
            rows,
            eligible,
            free_total,
            sorted_runs: Vec::new(),
            exclusive_vnodes: 0,
            down_held_whole: 0,
            sets: SetIndex::default(),
            tracked_set_free: Vec::new(),
            down: Bitset::new(n_vnodes),
            n_down: 0,
            outage_epoch: 0,
            watch: None,
            now: SimTime(0),
            outside: None,
            limit_values: Arc::from(Vec::new()),
            limit_room: Vec::new(),
            queued_draws: Vec::new(),
            eligibility_log: EligibilityLog::new(),
        }
    }

    /// Sets the run limits jobs count against ([`LimitDraw`]), each with its value, all with
    /// full room. Set before any job runs; copies of the state made later keep them.
    pub fn set_run_limits(&mut self, values: &[u64]) {
        self.limit_values = Arc::from(values);
        self.limit_room = values.to_vec();
        self.queued_draws = vec![0; values.len()];
    }

    /// Counts a job's `draws` into (`queued`) or out of the waiting jobs' draws.
    pub fn count_queued_draws(&mut self, draws: &[LimitDraw], queued: bool) {
        for d in draws {
            if let Some(total) = self.queued_draws.get_mut(d.limit as usize) {
                *total = if queued {
                    total.saturating_add(d.amount)
                } else {
                    total.saturating_sub(d.amount)
                };
            }
        }
    }

    /// Whether none of the limits `draws` count against can hold back a waiting job now or
    /// at any time a pass calendars: each one's room covers what every waiting job would
    /// draw from it, so whichever of them start or are calendared, the others still fit
    /// (room only comes back as jobs end). A discipline may then decide such a job on totals
    /// as if it were under no limit; the decisions are the same.
    pub fn limits_slack(&self, draws: &[LimitDraw]) -> bool {
        draws.iter().all(|d| {
            let limit = d.limit as usize;
            match (self.limit_room.get(limit), self.queued_draws.get(limit)) {
                (Some(room), Some(queued)) => room >= queued,
                _ => false,
            }
        })
    }

    /// The run limits' values.
    pub fn run_limits(&self) -> &[u64] {
        &self.limit_values
    }

    /// Keeps a [`Watch`] of the partition `set_of` (a set per vnode, `n_sets` sets) from now
    /// on, replacing any before.
    pub fn watch_sets(&mut self, set_of: &[u32], n_sets: usize) {
        let mut watch = Watch {
            set_of: std::sync::Arc::new(StretchKeys::new(set_of)),
            set_free: vec![0; n_sets],
            idle_ncpus: 0,
            version: 0,
        };
        for v in 0..self.cluster.n_vnodes() {
            let vnode = VnodeId::from_index(v);
            let free = self.usable_ncpus(vnode);
            if let Some(set) = watch.set_of.key(v) {
                watch.set_free[set as usize] += free;
            }
            let cap = self.cluster.ncpus_capacity(vnode);
            if cap > 0 && free == cap {
                watch.idle_ncpus += cap;
            }
        }
        self.watch = Some(Box::new(watch));
    }

    /// The set watch's tallies, if [`ClusterState::watch_sets`] was called.
    pub fn watch(&self) -> Option<&Watch> {
        self.watch.as_deref()
    }

    /// The ncpus of `v` a new job could use: its free ncpus if it can take a job, else 0.
    fn usable_ncpus(&self, v: VnodeId) -> u64 {
        if self.eligible.contains(v.index()) {
            self.free(v, ConsumableIdx::NCPUS)
        } else {
            0
        }
    }

    /// The instant the kernel is at: the time of the scheduling pass a policy decides in, also
    /// in the what-if views of later times it builds from this state (the settings in force
    /// are the pass's).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Moves the clock to `now`: the kernel's state at each instant, and a copy a policy keeps
    /// (its idle cluster, [`Self::unoccupied_copy`]) at each pass it serves, so that a view
    /// built over the copy answers [`Self::now`] with the pass's time, and a placement whose
    /// rules change over time (a `qmgr` event) places by the rules of the pass, whichever
    /// state its view was built from.
    pub fn set_now(&mut self, now: SimTime) {
        self.now = now;
    }

    /// Keeps the free capacity of `sets` current from now on (see [`SetIndex`]); set
    /// `i` is `sets[i]`. Replaces any sets tracked before. Scratch views made after this
    /// call see the sets too.
    pub fn track_sets(&mut self, sets: &[Vec<VnodeId>]) {
        self.sets = SetIndex::new(self.cluster.n_vnodes(), sets);
        self.retally();
    }

    /// The same cluster with nothing running, tracking the same sets: what "could this ever
    /// run" questions are asked of.
    pub fn idle_copy(&self) -> ClusterState {
        let mut idle = ClusterState::idle_with(self.cluster.clone(), self.marks.rows.clone());
        idle.now = self.now;
        if let Some(outside) = &self.outside {
            idle.mask(outside.clone());
        }
        idle.sets = self.sets.clone();
        idle.limit_values = self.limit_values.clone();
        idle.limit_room = self.limit_values.to_vec();
        idle.retally();
        idle
    }

    /// The same cluster as a reservation's jobs see it (reservations-and-partitions.md §1.4):
    /// nothing free but what `allocation` holds, each of its vnodes with only the amounts it
    /// holds there, tracking the same sets and under no run limit. A reservation's own queue
    /// runs its jobs in it.
    pub fn universe(&self, allocation: &Allocation) -> ClusterState {
        let mut universe = self.idle_copy();
        universe.limit_values = Arc::from(Vec::new());
        universe.limit_room = Vec::new();
        let n_cons = self.width - EXTRA;
        let width = self.width;
        for row in universe.rows.chunks_exact_mut(width) {
            row.fill(0);
        }
        universe.marks.forget(0..self.cluster.n_vnodes());
        for (v, amounts) in allocation.parts(n_cons) {
            let row = &mut universe.rows[v.index() * width..(v.index() + 1) * width];
            for (slot, &a) in row.iter_mut().zip(amounts) {
                *slot = slot.saturating_add(a);
            }
        }
        universe.free_total = vec![0; n_cons];
        for v in 0..self.cluster.n_vnodes() {
            let row = &universe.rows[v * width..(v + 1) * width];
            for (t, &a) in universe.free_total.iter_mut().zip(&row[..n_cons]) {
                *t += a;
            }
            let cap = self.cluster.ncpus_capacity(VnodeId::from_index(v));
            let eligible = row_eligible(row, n_cons, cap)
                && (cap > 0 || allocation.holds(VnodeId::from_index(v)));
            universe.eligible.set(v, eligible);
        }
        universe.eligibility_log.forget_all();
        universe.retally();
        universe
    }

    /// This state as one scheduler of several sees it (PBS multi-schedulers,
    /// reservations-and-partitions.md §4): the vnodes in `outside` have nothing free and
    /// are not eligible, so no placement and no total reasons with them; inside, everything is
    /// as here, with `sets` tracked instead of this state's. The scheduler's policy must see
    /// only the running jobs on its own vnodes, whose releases never touch the others. Idle
    /// copies of the view (a calendar's starting point) are masked the same way.
    pub fn partition_view(&self, outside: &Arc<Bitset>, sets: &SetIndex) -> ClusterState {
        let mut view = ClusterState {
            cluster: self.cluster.clone(),
            width: self.width,
            rows: self.rows.clone(),
            marks: self.marks.clone(),
            eligible: self.eligible.clone(),
            free_total: self.free_total.clone(),
            sorted_runs: Vec::new(),
            exclusive_vnodes: self.exclusive_vnodes,
            down_held_whole: self.down_held_whole,
            sets: sets.clone(),
            tracked_set_free: Vec::new(),
            down: self.down.clone(),
            n_down: self.n_down,
            outage_epoch: self.outage_epoch,
            watch: None,
            limit_values: self.limit_values.clone(),
            limit_room: self.limit_room.clone(),
            queued_draws: self.queued_draws.clone(),
            now: self.now,
            outside: None,
            eligibility_log: EligibilityLog::new(),
        };
        view.mask(outside.clone());
        view
    }

    /// Brings a view made by [`ClusterState::partition_view`] up to date with `real`, the
    /// state it was made from: `given` are the allocations on its vnodes given back since,
    /// `taken` those taken since. O(changes), not O(vnodes); outages (a new
    /// [`ClusterState::outage_epoch`]) need a new view.
    pub fn follow<'a>(
        &mut self,
        real: &ClusterState,
        given: impl IntoIterator<Item = &'a Allocation>,
        taken: impl IntoIterator<Item = &'a Allocation>,
    ) -> Result<(), AllocationError> {
        for a in given {
            self.release(a);
        }
        for a in taken {
            self.allocate(a)?;
        }
        self.now = real.now;
        self.limit_room.clone_from(&real.limit_room);
        self.queued_draws.clone_from(&real.queued_draws);
        Ok(())
    }

    /// Leaves nothing on the vnodes of `outside`: nothing free, no job, not held, not eligible,
    /// not down (no calendar gives anything back there); and recounts the totals and tallies.
    fn mask(&mut self, outside: Arc<Bitset>) {
        let n_cons = self.width - EXTRA;
        let width = self.width;
        for v in outside.iter() {
            let row = &mut self.rows[v * width..(v + 1) * width];
            self.marks.materialize(v, row);
            if row[n_cons + FLAGS] & FLAG_EXCLUSIVE != 0 {
                self.exclusive_vnodes -= 1;
                if self.down.contains(v) && self.cluster.pools().is_empty() {
                    self.down_held_whole -= 1;
                }
            }
            for (t, a) in self.free_total.iter_mut().zip(&row[..n_cons]) {
                *t -= *a;
            }
            row.fill(0);
            self.marks.forget(v..v + 1);
            self.eligible.set(v, false);
            if self.down.contains(v) {
                self.n_down -= 1;
            }
            self.down.set(v, false);
        }
        self.outside = Some(outside);
        self.eligibility_log.forget_all();
        self.retally();
    }

    /// The same cluster with no job running, but the vnodes down now still down: the state a
    /// calendar of estimated ends starts from (an outage has no estimated end).
    pub fn unoccupied_copy(&self) -> ClusterState {
        let mut copy = self.idle_copy();
        for v in self.down.iter() {
            copy.apply(
                &down_allocation(&self.cluster, VnodeId::from_index(v)),
                Direction::Take,
            );
            copy.down.set(v, true);
            copy.n_down += 1;
            if self.cluster.pools().is_empty() {
                copy.down_held_whole += 1;
            }
        }
        copy.outage_epoch = self.outage_epoch;
        copy
    }

    /// Takes `v` out of service. Its jobs must have been taken off first.
    pub fn set_down(&mut self, v: VnodeId) -> Result<(), AllocationError> {
        if self.down.contains(v.index()) {
            return Err(AllocationError::NotEligible(v));
        }
        self.allocate(&down_allocation(&self.cluster, v))?;
        self.down.set(v.index(), true);
        self.n_down += 1;
        if self.cluster.pools().is_empty() {
            self.down_held_whole += 1;
        }
        self.outage_epoch += 1;
        Ok(())
    }

    /// Puts `v`, down before, back in service.
    pub fn set_up(&mut self, v: VnodeId) {
        if self.down.contains(v.index()) {
            self.release(&down_allocation(&self.cluster, v));
            self.down.set(v.index(), false);
            self.n_down -= 1;
            if self.cluster.pools().is_empty() {
                self.down_held_whole -= 1;
            }
            self.outage_epoch += 1;
        }
    }

    /// Whether `v` is out of service.
    pub fn is_down(&self, v: VnodeId) -> bool {
        self.down.contains(v.index())
    }

    /// The vnodes out of service.
    pub fn down(&self) -> &Bitset {
        &self.down
    }

    /// Whether any vnode is out of service, in O(1).
    pub fn any_down(&self) -> bool {
        debug_assert_eq!(self.n_down, self.down.count());
        self.n_down > 0
    }

    /// Counts vnodes going down or up: a state with the same count has the same outages.
    pub fn outage_epoch(&self) -> u64 {
        self.outage_epoch
    }

    /// Recomputes every set tally from the rows.
    fn retally(&mut self) {
        let n_cons = self.width - EXTRA;
        let mut tallies = vec![0; self.sets.len() * (n_cons + 1)];
        for v in self.eligible.iter().map(VnodeId::from_index) {
            tally_add(&mut tallies, &self.sets, v, self.row(v), n_cons);
        }
        self.tracked_set_free = tallies;
    }

    /// The sets being tracked.
    pub fn tracked_sets(&self) -> &SetIndex {
        &self.sets
    }

    /// `v`'s row: the marks' where they hold it, else the stored one.
    #[inline]
    fn row(&self, v: VnodeId) -> &[u64] {
        let i = v.index();
        if self.marks.derived.contains(i) {
            self.marks.derived_row(i)
        } else {
            &self.rows[i * self.width..(i + 1) * self.width]
        }
    }

    /// Writes the rows of `range` into `into` (rows of the same width, indexed alike): the
    /// stored rows in one copy where no mark holds any of them, else row by row.
    fn copy_rows(&self, range: std::ops::Range<usize>, into: &mut [u64]) {
        let w = self.width;
        let into = &mut into[range.start * w..range.end * w];
        if self.marks.derived.none_in_range(range.clone()) {
            into.copy_from_slice(&self.rows[range.start * w..range.end * w]);
        } else {
            for (i, row) in range.zip(into.chunks_exact_mut(w)) {
                row.copy_from_slice(self.row(VnodeId::from_index(i)));
            }
        }
    }

    /// How many consumable slots each amount vector has.
    pub fn cluster_consumables(&self) -> usize {
        self.width - EXTRA
    }

    /// Checks an allocation against the state without applying it.
    pub fn validate(&mut self, alloc: &Allocation) -> Result<(), AllocationError> {
        let n_cons = self.width - EXTRA;
        if !alloc.shape_ok(n_cons) {
            return Err(AllocationError::Shape {
                got: alloc.run_amounts.len(),
                runs: alloc.runs.len(),
                per: n_cons,
            });
        }
        for d in alloc.limit_draws.iter().flat_map(|d| d.iter()) {
            let Some(&room) = self.limit_room.get(d.limit as usize) else {
                return Err(AllocationError::UnknownLimit(d.limit));
            };
            if d.amount > room {
                return Err(AllocationError::OverLimit {
                    limit: d.limit,
                    room,
                    asked: d.amount,
                });
            }
        }
        let n_vnodes = self.cluster.n_vnodes();
        // No vnode twice: the runs, in vnode order, must not overlap (checked per run, not
        // per vnode; allocations are mostly in vnode order already).
        let mut runs = alloc.vnode_runs();
        if !runs.is_sorted_by_key(|r| r.first) {
            self.sorted_runs.clear();
            self.sorted_runs.extend_from_slice(runs);
            self.sorted_runs.sort_unstable_by_key(|r| r.first);
            runs = &self.sorted_runs;
        }
        if let Some(w) = runs
            .windows(2)
            .find(|w| w[0].indices().end > w[1].first.index())
        {
            return Err(AllocationError::DuplicateVnode(w[1].first));
        }
        for (run, amounts) in alloc.runs(n_cons) {
            if run.first.index() >= n_vnodes {
                return Err(AllocationError::UnknownVnode(run.first));
            }
            if run.first.index() + run.count as usize > n_vnodes {
                return Err(AllocationError::UnknownVnode(VnodeId::from_index(n_vnodes)));
            }
            // The first vnode that cannot take the job is looked for only when there is one.
            if !self.eligible.contains_range(run.indices())
                && let Some(i) = self.eligible.first_absent(run.indices())
            {
                return Err(AllocationError::NotEligible(VnodeId::from_index(i)));
            }
            // Vnodes of the same capacities, all pristine, hold no job and have all of it free
            // (their eligibility was checked above).
            if self.marks.pristine_stretch(&self.cluster, run.indices())
                && amounts
                    .iter()
                    .zip(self.cluster.stretch_capacity(run.first))
                    .all(|(asked, cap)| asked <= cap)
            {
                continue;
            }
            for i in run.indices() {
                let v = VnodeId::from_index(i);
                let row = self.row(v);
                if alloc.sharing.is_exclusive() && row[n_cons + JOBS] > 0 {
                    return Err(AllocationError::NotEmpty(v));
                }
                for (slot, (&asked, &free)) in amounts.iter().zip(row).enumerate() {
                    if asked > free {
                        return Err(AllocationError::Oversubscribed {
                            vnode: v,
                            slot,
                            free,
                            asked,
                        });
                    }
                }
            }
        }
        if let Some((pool, free, asked)) = pool_shortfall(self, alloc) {
            return Err(AllocationError::Oversubscribed {
                vnode: pool.members[0],
                slot: pool.consumable.index(),
                free,
                asked,
            });
        }
        Ok(())
    }

    /// Validates and applies an allocation: the job now holds these resources.
    pub fn allocate(&mut self, alloc: &Allocation) -> Result<(), AllocationError> {
        self.validate(alloc)?;
        self.apply(alloc, Direction::Take);
        Ok(())
    }

    /// Gives an allocation's resources back. The caller guarantees it was allocated before.
    pub fn release(&mut self, alloc: &Allocation) {
        self.apply(alloc, Direction::Give);
    }

    fn apply(&mut self, alloc: &Allocation, dir: Direction) {
        let totals = Totals {
            free_total: &mut self.free_total,
            exclusive_vnodes: &mut self.exclusive_vnodes,
            limit_room: &mut self.limit_room,
        };
        apply_totals(totals, alloc, dir);
        let books = Books {
            rows: &mut self.rows,
            width: self.width,
            eligible: &mut self.eligible,
            sets: &self.sets,
            tracked_set_free: &mut self.tracked_set_free,
            watch: self.watch.as_deref_mut(),
        };
        let stretches = Stretches::Kept(&mut self.marks);
        apply(books, &self.cluster, alloc, dir, stretches);
        // A shared pool's other members change too: any bit may have.
        if self.cluster.pools().is_empty() {
            for run in alloc.vnode_runs() {
                self.eligibility_log.record(run.indices());
            }
        } else {
            self.eligibility_log.forget_all();
        }
    }
}

impl StateView for ClusterState {
    #[inline]
    fn cluster(&self) -> &Cluster {
        &self.cluster
    }
    #[inline]
    fn free(&self, v: VnodeId, c: ConsumableIdx) -> u64 {
        self.row(v)[c.index()]
    }
    #[inline]
    fn n_jobs(&self, v: VnodeId) -> u64 {
        self.row(v)[self.width - EXTRA + JOBS]
    }
    #[inline]
    fn eligible(&self) -> &Bitset {
        &self.eligible
    }
    #[inline]
    fn free_total(&self, c: ConsumableIdx) -> u64 {
        self.free_total[c.index()]
    }
    #[inline]
    fn exclusive_vnodes(&self) -> u64 {
        self.exclusive_vnodes
    }
    #[inline]
    fn exclusive_with_room(&self) -> u64 {
        self.exclusive_vnodes - self.down_held_whole
    }
    #[inline]
    fn tracked_sets_free(&self) -> SetTallies<'_> {
        SetTallies {
            all: &self.tracked_set_free,
            width: self.width - EXTRA + 1,
        }
    }
    #[inline]
    fn limit_room(&self, limit: u32) -> u64 {
        self.limit_room.get(limit as usize).copied().unwrap_or(0)
    }
}

/// What an outage holds on `v`: all of it, exclusively; but none of a pool it shares (an
/// indirect resource), which its other members go on using: the pool is one amount, and the
/// jobs on them may hold part of it.
pub(crate) fn down_allocation(cluster: &Cluster, v: VnodeId) -> Allocation {
    let mut a = Allocation::new(Sharing::Excl);
    if cluster.pools().is_empty() {
        a.push(v, cluster.capacity(v));
        return a;
    }
    let amounts: Vec<u64> = cluster
        .capacity(v)
        .iter()
        .enumerate()
        .map(|(c, &cap)| {
            if cluster.pool_of(v, ConsumableIdx(c as u8)).is_some() {
                0
            } else {
                cap
            }
        })
        .collect();
    a.push(v, &amounts);
    a
}

/// How many vnodes an allocation holds exclusively.
fn exclusive_count(alloc: &Allocation) -> u64 {
    if alloc.sharing.is_exclusive() {
        alloc.n_vnodes() as u64
    } else {
        0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Take,
    Give,
}

/// Takes or gives back one vnode's part of an allocation on its row (not the free totals,
/// which a run changes at once), and says whether the vnode is eligible afterwards.
#[inline]
fn apply_part(
    row: &mut [u64],
    amounts: &[u64],
    exclusive: bool,
    dir: Direction,
    cap_ncpus: u64,
) -> bool {
    let n_cons = amounts.len();
    let (free, extra) = row.split_at_mut(n_cons);
    match dir {
        Direction::Take => {
            for (f, &a) in free.iter_mut().zip(amounts) {
                *f -= a;
            }
            extra[JOBS] += 1;
            if exclusive {
                extra[FLAGS] |= FLAG_EXCLUSIVE;
            }
        }
        Direction::Give => {
            for (f, &a) in free.iter_mut().zip(amounts) {
                *f += a;
            }
            extra[JOBS] -= 1;
            if exclusive {
                extra[FLAGS] &= !FLAG_EXCLUSIVE;
            }
        }
    }
    row_eligible(row, n_cons, cap_ncpus)
}

/// Adds a free vnode's amounts and itself to the tallies of its sets.
fn tally_add(
    tracked_set_free: &mut [u64],
    sets: &SetIndex,
    v: VnodeId,
    row: &[u64],
    n_cons: usize,
) {
    let w = n_cons + 1;
    for &g in sets.of(v) {
        let t = &mut tracked_set_free[g as usize * w..(g as usize + 1) * w];
        for (slot, &free) in t.iter_mut().zip(&row[..n_cons]) {
            *slot += free;
        }
        t[n_cons] += 1;
    }
}

/// Everything an allocation changes, in the real state or a scratch view: borrowed together so
/// that one routine keeps them in step for both.
struct Books<'a> {
    rows: &'a mut [u64],
    width: usize,
    eligible: &'a mut Bitset,
    sets: &'a SetIndex,
    tracked_set_free: &'a mut [u64],
    watch: Option<&'a mut Watch>,
}

/// The counts an allocation changes that a pass reads before it reads any vnode (whether a
/// job fits by the free ncpus, whether any vnode is held exclusively, a run limit's room):
/// kept apart from [`Books`] so that a scratch view can change them at once and leave the
/// rows for later ([`Scratch::take_deferred`]).
struct Totals<'a> {
    free_total: &'a mut [u64],
    exclusive_vnodes: &'a mut u64,
    limit_room: &'a mut [u64],
}

/// Takes or gives back `alloc` in the totals: per consumable, each run's amounts times its
/// vnodes; the exclusive count; each run limit's draw.
fn apply_totals(totals: Totals<'_>, alloc: &Allocation, dir: Direction) {
    let Totals {
        free_total,
        exclusive_vnodes,
        limit_room,
    } = totals;
    match dir {
        Direction::Take => *exclusive_vnodes += exclusive_count(alloc),
        Direction::Give => *exclusive_vnodes -= exclusive_count(alloc),
    }
    for d in alloc.limit_draws.iter().flat_map(|d| d.iter()) {
        let room = &mut limit_room[d.limit as usize];
        match dir {
            Direction::Take => *room -= d.amount,
            Direction::Give => *room += d.amount,
        }
    }
    // Summed over the runs first, in a loop made for the number of consumables, then applied
    // once: a start or end is a few runs, and this is asked at each of them in the real state
    // and in a pass's view.
    let n_cons = free_total.len();
    let mut on_stack = [0u64; DELTA_SLOTS];
    let mut on_heap = Vec::new();
    let sums: &mut [u64] = if n_cons <= DELTA_SLOTS {
        &mut on_stack[..n_cons]
    } else {
        on_heap.resize(n_cons, 0);
        &mut on_heap
    };
    match n_cons {
        1 => run_sums::<1>(alloc, sums),
        2 => run_sums::<2>(alloc, sums),
        3 => run_sums::<3>(alloc, sums),
        4 => run_sums::<4>(alloc, sums),
        _ => {
            for (run, amounts) in alloc.runs(n_cons) {
                let count = u64::from(run.count);
                for (sum, &a) in sums.iter_mut().zip(amounts) {
                    *sum += a * count;
                }
            }
        }
    }
    for (t, &sum) in free_total.iter_mut().zip(sums.iter()) {
        match dir {
            Direction::Take => *t -= sum,
            Direction::Give => *t += sum,
        }
    }
}

/// Per consumable, what `alloc`'s runs of `N` consumables give in all, added to `sums` (`N`
/// long).
fn run_sums<const N: usize>(alloc: &Allocation, sums: &mut [u64]) {
    let sums = &mut sums[..N];
    for (run, amounts) in alloc.runs.iter().zip(alloc.run_amounts.chunks_exact(N)) {
        let count = u64::from(run.count);
        for c in 0..N {
            sums[c] += amounts[c] * count;
        }
    }
}

/// How many set-tally slots (consumables + the vnode count) the accumulators hold on the
/// stack; a cluster with more consumables accumulates on the heap.
const DELTA_SLOTS: usize = 9;

/// Takes or gives back a whole allocation, keeping the rows, the eligibility bits, the set
/// tallies and the watch in step ([`apply_totals`] keeps the totals). Shared by the real state
/// and scratch views, so that both account identically.
///
/// It goes run by run, and splits each run into segments of vnodes that are in the same
/// tracked sets and the same watched set ([`SetIndex::same_sets_until`],
/// [`Watch::same_set_until`]): a segment's rows are changed in one tight loop that sums what
/// its eligible vnodes offered before and after, and the tallies and the watch change once
/// per segment, by the difference. A job of thousands of one-ncpu vnodes taken in first-fit
/// order is then a few runs and segments, and the loop over its rows touches nothing else
/// (issue 20). A run over vnodes of the same capacities that `stretches` finds all pristine
/// (a take) or all single (a give) takes the whole-stretch form ([`Marks`]): its rows go from
/// one known row to another (written only where the marks do not hold them), and everything
/// else changes by the count.
fn apply(
    books: Books<'_>,
    cluster: &Cluster,
    alloc: &Allocation,
    dir: Direction,
    mut stretches: Stretches<'_>,
) {
    let Books {
        rows,
        width,
        eligible,
        sets,
        tracked_set_free,
        mut watch,
    } = books;
    let n_cons = width - EXTRA;
    let w = n_cons + 1;
    // Before and after: the free amounts and the count of a segment's eligible vnodes.
    let mut on_stack = [0u64; 2 * DELTA_SLOTS];
    let mut on_heap = vec![0; if 2 * w <= on_stack.len() { 0 } else { 2 * w }];
    let exclusive = alloc.sharing.is_exclusive();
    let caps = cluster.ncpus_capacities();
    let mut stretch = WholeStretch::UNSET;
    let mut watch_changed = false;
    for (k, (run, amounts)) in alloc.runs(n_cons).enumerate() {
        let range = run.indices();
        let whole = match &stretches {
            Stretches::Kept(marks) => marks.allow(cluster, eligible, range.clone(), dir),
            Stretches::Decided { whole, .. } => whole.get(k).copied().unwrap_or(false),
        };
        if whole {
            stretch.set(
                cluster.stretch_capacity(run.first),
                amounts,
                exclusive,
                dir,
                eligible.contains(range.start),
            );
            if let Stretches::Decided { after_rows, .. } = &mut stretches {
                after_rows.push(stretch.after);
            }
        }
        let mut from = range.start;
        while from < range.end {
            let mut to = range.end;
            if !sets.is_empty() {
                to = to.min(sets.same_sets_until(from));
            }
            if let Some(w) = watch.as_deref() {
                to = to.min(w.same_set_until(from));
            }
            // Zeroed whole on the stack: a fill of the array's known size is a few stores,
            // where one of `2 * w` words was a call to `memset` at every segment.
            let sums: &mut [u64] = if on_heap.is_empty() {
                on_stack = [0; 2 * DELTA_SLOTS];
                &mut on_stack[..2 * w]
            } else {
                on_heap.fill(0);
                &mut on_heap
            };
            let (before, after) = sums.split_at_mut(w);
            let mut usable = Usable::default();
            let marks = match &mut stretches {
                Stretches::Kept(marks) if marks.kept => Some(&mut **marks),
                _ => None,
            };
            let segment = Segment {
                rows,
                width,
                caps,
                amounts,
                exclusive,
                dir,
                marks,
                cluster,
            };
            // The loop is made for the number of consumables and for what is kept (set
            // tallies, the watch), so that it does only the work this state needs.
            macro_rules! shaped {
                ($($n:literal),*) => {
                    match (n_cons, !sets.is_empty(), watch.is_some()) {
                        $(
                            ($n, true, true) => segment.apply::<$n, true, true>(eligible, from..to, before, after, &mut usable),
                            ($n, true, false) => segment.apply::<$n, true, false>(eligible, from..to, before, after, &mut usable),
                            ($n, false, true) => segment.apply::<$n, false, true>(eligible, from..to, before, after, &mut usable),
                            ($n, false, false) => segment.apply::<$n, false, false>(eligible, from..to, before, after, &mut usable),
                        )*
                        // Sums and the watch's counts computed here are read only if kept.
                        _ => segment.apply::<0, true, true>(eligible, from..to, before, after, &mut usable),
                    }
                };
            }
            if whole {
                let write = match &mut stretches {
                    Stretches::Kept(marks) => marks.after_whole(from..to, &stretch),
                    Stretches::Decided { .. } => false,
                };
                let (before, after) = (&mut before[..], &mut after[..]);
                stretch.apply(
                    write,
                    rows,
                    width,
                    eligible,
                    from..to,
                    before,
                    after,
                    &mut usable,
                    caps[from],
                );
            } else {
                shaped!(1, 2, 3, 4)
            }
            if !sets.is_empty() {
                for &g in sets.of(VnodeId::from_index(from)) {
                    let t = &mut tracked_set_free[g as usize * w..(g as usize + 1) * w];
                    for ((slot, &b), &a) in t.iter_mut().zip(before.iter()).zip(after.iter()) {
                        *slot = *slot + a - b;
                    }
                }
            }
            if let Some(w) = watch.as_deref_mut()
                && usable.changed()
            {
                if let Some(set) = w.set_of.key(from) {
                    let set = &mut w.set_free[set as usize];
                    *set = *set + usable.ncpus[1] - usable.ncpus[0];
                }
                w.idle_ncpus = w.idle_ncpus + usable.idle[1] - usable.idle[0];
                watch_changed = true;
            }
            from = to;
        }
    }
    if watch_changed && let Some(w) = watch {
        w.version += 1;
    }
    // Shared pools: what a part takes from its vnode's mirror, every other member's mirror
    // loses too (their eligibility, which reads ncpus, does not change; the totals count the
    // pool once, as taken above).
    let Some(parts) = pooled_parts(cluster, alloc) else {
        return;
    };
    for (v, a, pool) in parts {
        let c = pool.consumable.index();
        for &u in pool.members.iter().filter(|&&u| u != v) {
            let slot = &mut rows[u.index() * width + c];
            match dir {
                Direction::Take => *slot -= a,
                Direction::Give => *slot += a,
            }
            if !sets.is_empty() && eligible.contains(u.index()) {
                for &g in sets.of(u) {
                    let t = &mut tracked_set_free[g as usize * w + c];
                    match dir {
                        Direction::Take => *t -= a,
                        Direction::Give => *t += a,
                    }
                }
            }
        }
    }
}

/// Whether every vnode of `range` can take a chunk needing `amounts` with this sharing in
/// `view`, asked vnode by vnode: the definition of [`StateView::run_fits`].
fn each_fits(
    view: &(impl StateView + ?Sized),
    range: std::ops::Range<usize>,
    amounts: &[u64],
    sharing: Sharing,
) -> bool {
    range
        .map(VnodeId::from_index)
        .all(|v| view.fits_chunk(v, amounts, sharing))
}

/// The first shared pool that cannot hold what `alloc`'s parts on its members take together,
/// with what it has free and what they ask (each part may fit its vnode's view of the pool
/// alone).
fn pool_shortfall(
    view: &(impl StateView + ?Sized),
    alloc: &Allocation,
) -> Option<(crate::cluster::Pool, u64, u64)> {
    let cluster = view.cluster();
    let n_cons = cluster.resources().n_consumables();
    pooled_parts(cluster, alloc)?.find_map(|(v, _, pool)| {
        let asked: u64 = alloc
            .parts(n_cons)
            .filter(|(u, _)| pool.members.contains(u))
            .map(|(_, amounts)| amounts[pool.consumable.index()])
            .sum();
        let free = view.free(v, pool.consumable);
        (asked > free).then(|| (pool.clone(), free, asked))
    })
}

/// The parts of `alloc` that take from a shared pool: (vnode, amount, pool), one per pooled
/// consumable a part takes some of; `None` when the cluster has no indirect resource, so that
/// the callers, asked at every start and end, skip their pool pass at that one test (an
/// iterator over no parts still cost a call for each).
fn pooled_parts<'a>(
    cluster: &'a Cluster,
    alloc: &'a Allocation,
) -> Option<impl Iterator<Item = (VnodeId, u64, &'a crate::cluster::Pool)> + 'a> {
    if cluster.pools().is_empty() {
        return None;
    }
    let n_cons = cluster.resources().n_consumables();
    Some(alloc.parts(n_cons).flat_map(move |(v, amounts)| {
        amounts.iter().enumerate().filter_map(move |(c, &a)| {
            let pool = cluster.pool_of(v, ConsumableIdx(c as u8))?;
            (a > 0).then_some((v, a, pool))
        })
    }))
}

/// One run's part of an allocation applied to a stretch of its vnodes: see [`apply`].
struct Segment<'r> {
    rows: &'r mut [u64],
    width: usize,
    caps: &'r [u64],
    amounts: &'r [u64],
    exclusive: bool,
    dir: Direction,
    /// The state's marks, kept vnode by vnode (the real state's, where it keeps them).
    marks: Option<&'r mut Marks>,
    cluster: &'r Cluster,
}

impl Segment<'_> {
    /// Applies the amounts to the rows of `range`, sets their eligibility, and sums what the
    /// eligible ones offered `before` and `after` (free amounts, then their count) when `SUMS`,
    /// and the ncpus they offered new jobs into `usable` when `USABLE`. `N` is the number of
    /// consumables when it is small, so the loops over them unroll; 0 reads it from the
    /// amounts.
    #[inline]
    fn apply<const N: usize, const SUMS: bool, const USABLE: bool>(
        self,
        eligible: &mut Bitset,
        range: std::ops::Range<usize>,
        before: &mut [u64],
        after: &mut [u64],
        usable: &mut Usable,
    ) {
        let n_cons = if N == 0 { self.amounts.len() } else { N };
        let amounts = &self.amounts[..n_cons];
        let (before, after) = (&mut before[..n_cons + 1], &mut after[..n_cons + 1]);
        let Segment {
            rows,
            width,
            caps,
            exclusive,
            dir,
            mut marks,
            cluster,
            ..
        } = self;
        eligible.update_range(range, |i, was| {
            let row = &mut rows[i * width..(i + 1) * width];
            if let Some(marks) = marks.as_deref() {
                marks.materialize(i, row);
            }
            let cap_ncpus = caps[i];
            if was {
                offer::<SUMS, USABLE>(row, cap_ncpus, before, usable, Side::Before);
            }
            let ok = apply_part(row, amounts, exclusive, dir, cap_ncpus);
            if let Some(marks) = marks.as_deref_mut() {
                marks.after_part(i, dir, row, cluster.capacity(VnodeId::from_index(i)));
            }
            if ok {
                offer::<SUMS, USABLE>(row, cap_ncpus, after, usable, Side::After);
            }
            ok
        });
    }
}

/// Adds what an eligible vnode's `row` offers to a segment's sums (its free amounts, then
/// one vnode) when `SUMS`, and its ncpus to `usable` on `side` when `USABLE`.
#[inline(always)]
fn offer<const SUMS: bool, const USABLE: bool>(
    row: &[u64],
    cap_ncpus: u64,
    sums: &mut [u64],
    usable: &mut Usable,
    side: Side,
) {
    let n_cons = sums.len() - 1;
    if SUMS {
        for (sum, &free) in sums.iter_mut().zip(&row[..n_cons]) {
            *sum += free;
        }
        sums[n_cons] += 1;
    }
    if USABLE {
        usable.add(side, row[ConsumableIdx::NCPUS.index()], cap_ncpus);
    }
}

/// Before or after a segment's change.
#[derive(Debug, Clone, Copy)]
enum Side {
    Before = 0,
    After = 1,
}

/// What a segment's vnodes offered new jobs before and after a change, for the watch: the
/// ncpus of eligible vnodes, and the ncpus of idle ones (eligible with every ncpu free), each
/// by [`Side`].
#[derive(Debug, Default)]
struct Usable {
    ncpus: [u64; 2],
    idle: [u64; 2],
}

impl Usable {
    #[inline]
    fn add(&mut self, side: Side, free_ncpus: u64, cap_ncpus: u64) {
        self.ncpus[side as usize] += free_ncpus;
        if cap_ncpus > 0 && free_ncpus == cap_ncpus {
            self.idle[side as usize] += cap_ncpus;
        }
    }

    /// [`Self::add`] for `count` vnodes alike.
    #[inline]
    fn add_many(&mut self, side: Side, free_ncpus: u64, cap_ncpus: u64, count: u64) {
        self.ncpus[side as usize] += free_ncpus * count;
        if cap_ncpus > 0 && free_ncpus == cap_ncpus {
            self.idle[side as usize] += cap_ncpus * count;
        }
    }

    fn changed(&self) -> bool {
        self.ncpus[0] != self.ncpus[1] || self.idle[0] != self.idle[1]
    }
}

/// The buffers behind a [`Scratch`], kept by a policy between passes so that a scratch view
/// costs no allocation.
#[derive(Debug, Clone, Default)]
pub struct ScratchBuf {
    /// Vnodes whose rows this generation has copied, so copies and resets cost O(changes).
    touched: Vec<u32>,
    /// Per vnode, where the view reads its row ([`ScratchBuf::here`]): `generation` in
    /// `rows`, `generation + 1 + k` in `patterns[k]`, anything else in the base.
    stamp: Vec<u32>,
    /// This view's generation: a multiple of [`PATTERN_SLOTS`]` + 1`, never 0 once used, so
    /// that every stamp of an earlier generation reads as the base.
    generation: u32,
    rows: Vec<u64>,
    /// The row after each whole stretch this view applied, a run of vnodes whose rows it
    /// neither copied nor wrote (the vnodes in `pattern_ranges[k]` read `patterns[k]`): a
    /// whole stretch costs a stamp per vnode, not a row.
    patterns: Vec<[u64; WHOLE_STRETCH_WIDTH]>,
    pattern_ranges: Vec<std::ops::Range<usize>>,
    /// Per pattern slot, how many vnodes of its range still read it (the others were brought
    /// in): a stretch is given back whole only while all do.
    pattern_readers: Vec<u32>,
    /// Pattern slots no vnode reads any more: their stretch was given back whole to rows
    /// equal to the base's ([`ScratchBuf::restorable`]), and its range emptied. A view kept
    /// between passes (a reservation's, `queue/kept.rs`) is never reset, and takes and gives
    /// back the same stretches pass after pass: without reuse its slots would run out and
    /// every later stretch be written row by row.
    vacant_slots: Vec<u32>,
    /// The vnodes whose rows this generation changed (its own or a pattern's): what the
    /// whole-stretch test asks, a word at a time rather than a stamp per vnode. Cleared at
    /// reset where it was set, from `touched` and `pattern_ranges`.
    changed: Bitset,
    /// The view's eligibility, once it differs from the base's (`eligible_own`): a pass that
    /// starts nothing copies none of it.
    eligible: Bitset,
    eligible_own: bool,
    /// What `eligible` holds while the view does not own its eligibility: a base's bits at
    /// a point of its log, but on the words of `eligible_dirty`, which the view changed when
    /// it last owned them; none when unknown.
    eligible_point: Option<(StateId, u64)>,
    eligible_dirty: Vec<(u32, u32)>,
    /// How many times the view's eligibility was brought up to date by the words changed
    /// alone (the tests check that the shortcut is taken).
    eligible_partial_copies: u64,
    free_total: Vec<u64>,
    exclusive_vnodes: u64,
    /// The view's set tallies, once it has changed them (`set_free_own`); until then they are
    /// the base's, read there: most views of a pass change nothing, and copying the tallies
    /// of every set at every reset was a thirtieth of `nodesets-bench.toml`'s simulation.
    tracked_set_free: Vec<u64>,
    set_free_own: bool,
    /// Per run limit, copied on write as rows are (a site may have a limit per user, many
    /// more than a pass changes): its room here when `limit_stamp` is this generation's,
    /// else the base's.
    limit_room: Vec<u64>,
    limit_stamp: Vec<u32>,
    limits_touched: Vec<u32>,
    /// The job being placed's affinity for the reserved vnodes it may use, by vnode; every
    /// other vnode is [`Affinity::Unreserved`] to it.
    affinity: Vec<(VnodeId, Affinity)>,
    /// Per run of the allocation being applied, whether it takes the whole-stretch form.
    whole: Vec<bool>,
    /// Per run in the whole-stretch form, in order: where its vnodes read their rows after it.
    whole_slots: Vec<WholeSlot>,
    /// The rows after the whole-stretch runs, in order, as `apply` leaves them.
    after_rows: Vec<[u64; WHOLE_STRETCH_WIDTH]>,
    /// A take already in the totals but not yet in the rows ([`Scratch::take_deferred`]),
    /// when `has_pending`; kept between uses for its buffers.
    pending: Allocation,
    has_pending: bool,
}

/// How many whole stretches a scratch view reads from patterns at once; later ones are written
/// row by row until a slot is vacated. (A stamp holds the generation and the pattern's slot.)
const PATTERN_SLOTS: u32 = 4095;

/// Where the vnodes of a run a scratch view applies whole read their rows after it.
#[derive(Debug, Clone, Copy)]
enum WholeSlot {
    /// The pattern in this slot.
    Pattern(usize),
    /// The base, as the first of them (they were given back to the base's rows).
    Base(usize),
}

/// Where a scratch view reads a vnode's row.
enum RowHere {
    /// Its own copy, in `rows`.
    Own,
    /// A whole stretch's row, `patterns[k]`.
    Pattern(usize),
    /// The base state's row: the view has not changed it.
    Base,
}

impl ScratchBuf {
    #[inline]
    fn here(&self, i: usize) -> RowHere {
        match self.stamp[i].wrapping_sub(self.generation) {
            0 => RowHere::Own,
            d if d <= PATTERN_SLOTS => RowHere::Pattern(d as usize - 1),
            _ => RowHere::Base,
        }
    }

    /// Makes the vnodes of `range` read `patterns[k]`.
    fn read_from_pattern(&mut self, range: std::ops::Range<usize>, k: usize) {
        self.stamp[range.clone()].fill(self.generation + 1 + k as u32);
        self.changed.set_range(range, true);
    }

    /// Whether there is a pattern slot for one more whole stretch.
    fn slot_available(&self) -> bool {
        !self.vacant_slots.is_empty() || self.pattern_ranges.len() < PATTERN_SLOTS as usize
    }

    /// A slot for a whole stretch over `range`, whose vnodes read it from now on (its row is
    /// written once `apply` has made it).
    fn claim_slot(&mut self, range: std::ops::Range<usize>) -> usize {
        let readers = range.len() as u32;
        let k = match self.vacant_slots.pop() {
            Some(k) => {
                self.pattern_ranges[k as usize] = range.clone();
                self.pattern_readers[k as usize] = readers;
                k as usize
            }
            None => {
                self.pattern_ranges.push(range.clone());
                self.pattern_readers.push(readers);
                self.patterns.push([0; WHOLE_STRETCH_WIDTH]);
                self.pattern_ranges.len() - 1
            }
        };
        self.read_from_pattern(range, k);
        k
    }

    /// The slot `range` reads whole, if giving back `amounts` (exclusively or not) there
    /// leaves rows equal to the base's: every vnode of `range`, and no other, reads one
    /// pattern, that pattern is the row a take of `amounts` leaves on pristine vnodes, and
    /// the base's vnodes there are pristine and eligible. Such a stretch was taken whole
    /// over the base (a running job, a reservation, in a reservation's view over the
    /// unoccupied cluster), and giving it back returns its vnodes to the base's rows: a
    /// stamp each, no row copied or written.
    fn restorable(
        &self,
        base: &ClusterState,
        range: std::ops::Range<usize>,
        amounts: &[u64],
        exclusive: bool,
    ) -> Option<usize> {
        let RowHere::Pattern(k) = self.here(range.start) else {
            return None;
        };
        if self.pattern_ranges[k] != range
            || self.pattern_readers[k] as usize != range.len()
            || !base.marks.pristine_stretch(&base.cluster, range.clone())
            || !base.eligible.contains_range(range.clone())
        {
            return None;
        }
        let mut held_row = [0; WHOLE_STRETCH_WIDTH];
        write_held_row(
            &mut held_row,
            base.cluster
                .stretch_capacity(VnodeId::from_index(range.start)),
            amounts,
            exclusive,
        );
        let held = held_row[..base.width] == self.patterns[k][..base.width];
        debug_assert!(
            (self.stamp[range].iter()).all(|&s| s == self.generation + 1 + k as u32),
            "every vnode of a pattern's range reads it while its count of readers is whole"
        );
        held.then_some(k)
    }

    /// Makes the vnodes of `range`, which read slot `k`, read the base again, and frees the
    /// slot.
    fn read_from_base(&mut self, range: std::ops::Range<usize>, k: usize) {
        // Stamp 0 is before every generation (which is never 0 once used).
        self.stamp[range.clone()].fill(0);
        self.changed.set_range(range.clone(), false);
        self.pattern_ranges[k] = range.start..range.start;
        self.pattern_readers[k] = 0;
        self.vacant_slots.push(k as u32);
    }

    /// Whether no row of `range` has been changed in this view.
    fn unchanged(&self, range: std::ops::Range<usize>) -> bool {
        let unchanged = self.changed.none_in_range(range.clone());
        debug_assert_eq!(
            unchanged,
            self.stamp[range]
                .iter()
                .all(|&s| s.wrapping_sub(self.generation) > PATTERN_SLOTS)
        );
        unchanged
    }

    /// Makes `range`'s rows this view's own, copying each one not yet its own from where
    /// the view reads it (runs from the base in one copy), so that they can be written.
    fn bring_in(&mut self, base: &ClusterState, range: std::ops::Range<usize>) {
        let w = base.width;
        let mut i = range.start;
        while i < range.end {
            match self.here(i) {
                RowHere::Own => i += 1,
                RowHere::Pattern(k) => {
                    self.rows[i * w..(i + 1) * w].copy_from_slice(&self.patterns[k][..w]);
                    self.pattern_readers[k] -= 1;
                    self.stamp[i] = self.generation;
                    self.touched.push(i as u32);
                    i += 1;
                }
                RowHere::Base => {
                    let from = i;
                    while i < range.end && matches!(self.here(i), RowHere::Base) {
                        self.stamp[i] = self.generation;
                        self.touched.push(i as u32);
                        i += 1;
                    }
                    self.changed.set_range(from..i, true);
                    base.copy_rows(from..i, &mut self.rows);
                }
            }
        }
    }

    /// Makes the view's eligibility its own, equal to `base`'s, before the view changes it.
    /// When the buffer still holds `base`'s bits of a point its log reaches, only the words
    /// changed since, there and here, are copied.
    fn own_eligibility(&mut self, base: &ClusterState) {
        if self.eligible_own {
            return;
        }
        // Past a range per 16 words, one copy of the whole costs less than many small ones.
        let few = |changed: &&[(u32, u32)]| {
            (self.eligible_dirty.len() + changed.len()) * 16 <= base.eligible.len() / 64
        };
        let changed = self
            .eligible_point
            .filter(|_| self.eligible.len() == base.eligible.len())
            .and_then(|point| base.eligibility_log.since(point))
            .filter(few);
        match changed {
            Some(changed) => {
                for &(first, end) in self.eligible_dirty.iter().chain(changed) {
                    (self.eligible).copy_words_from(&base.eligible, first as usize..end as usize);
                }
                self.eligible_partial_copies += 1;
            }
            None => self.eligible.copy_from(&base.eligible),
        }
        self.eligible_dirty.clear();
        self.eligible_point = Some(base.eligibility_log.position());
        self.eligible_own = true;
        debug_assert!(
            self.eligible == base.eligible,
            "a view's eligibility brought up to date differs from its base's"
        );
    }

    /// Notes that the view may change the eligibility of `vnodes`, which it owns.
    fn dirty_eligibility(&mut self, vnodes: std::ops::Range<usize>) {
        if self.eligible_dirty.len() == EligibilityLog::KEPT {
            // A view kept for long: its bits are brought up to date whole next time.
            self.eligible_point = None;
            self.eligible_dirty.clear();
        }
        let words = Bitset::words_of(vnodes);
        (self.eligible_dirty).push((words.start as u32, words.end as u32));
    }

    /// The eligibility of the view this buffer holds over `base`.
    #[inline]
    fn eligible_over<'b>(&'b self, base: &'b ClusterState) -> &'b Bitset {
        if self.eligible_own {
            &self.eligible
        } else {
            &base.eligible
        }
    }
}

/// A copy-on-write what-if view of a [`ClusterState`].
///
/// Reads fall through to the real state until a vnode's row is first changed here; a new
/// scratch (or [`Scratch::reset`]) forgets every change in O(vnodes / 64).
#[derive(Debug)]
pub struct Scratch<'a> {
    base: &'a ClusterState,
    buf: &'a mut ScratchBuf,
}

impl<'a> Scratch<'a> {
    /// A scratch view equal to `base`.
    pub fn new(base: &'a ClusterState, buf: &'a mut ScratchBuf) -> Self {
        let n = base.cluster.n_vnodes();
        if buf.stamp.len() != n {
            buf.stamp = vec![0; n];
            buf.changed = Bitset::new(n);
            buf.rows = vec![0; n * base.width];
            buf.generation = 0;
        }
        let mut s = Scratch { base, buf };
        s.reset();
        s
    }

    /// A scratch view that keeps the changes `buf` already holds: the view it was last used
    /// for, again. `base` must equal the state that view read through to (the same state, or
    /// an identical copy of it), or the result means nothing. A view kept this way between
    /// passes is brought up to date by applying only what changed since, instead of being
    /// rebuilt from its base at the cost of every allocation it holds. A buffer never used
    /// (or sized for another cluster) gives a view equal to `base`.
    pub fn resume(base: &'a ClusterState, buf: &'a mut ScratchBuf) -> Self {
        let n = base.cluster.n_vnodes();
        if buf.stamp.len() != n || buf.generation == 0 {
            return Scratch::new(base, buf);
        }
        Scratch { base, buf }
    }

    /// The real state this view reads through to.
    pub fn base(&self) -> &'a ClusterState {
        self.base
    }

    /// Forgets every change: the view equals the real state again.
    pub fn reset(&mut self) {
        let step = PATTERN_SLOTS + 1;
        let n_limits = self.base.limit_room.len();
        if self.buf.limit_stamp.len() != n_limits {
            self.buf.limit_stamp = vec![0; n_limits];
            self.buf.limit_room = vec![0; n_limits];
        }
        // A generation's stamps reach `generation + PATTERN_SLOTS`; once the next would not
        // fit, every stamp is cleared and the count starts again.
        match self.buf.generation.checked_add(2 * step) {
            Some(_) => self.buf.generation += step,
            None => {
                self.buf.stamp.fill(0);
                self.buf.limit_stamp.fill(0);
                self.buf.generation = step;
            }
        }
        for &i in &self.buf.touched {
            self.buf.changed.set(i as usize, false);
        }
        for range in &self.buf.pattern_ranges {
            self.buf.changed.set_range(range.clone(), false);
        }
        self.buf.has_pending = false;
        self.buf.touched.clear();
        self.buf.patterns.clear();
        self.buf.pattern_ranges.clear();
        self.buf.pattern_readers.clear();
        self.buf.vacant_slots.clear();
        self.buf.limits_touched.clear();
        self.buf.eligible_own = false;
        self.buf.free_total.clone_from(&self.base.free_total);
        self.buf.exclusive_vnodes = self.base.exclusive_vnodes;
        self.buf.set_free_own = false;
        self.buf.affinity.clear();
    }

    /// Tells the placement which vnodes the job it is about to place may use under a Moab
    /// reservation, and with which affinity (sorted by vnode, each once): a property of the
    /// job and its window, not of the state, which this view carries so that a placement
    /// asked on it can take the vnodes in Moab's tiers (moab-node-sets.md R11) and weigh
    /// AFFINITY (R10). [`Self::reset`] forgets it; [`Self::copy_from`] copies it.
    pub fn set_affinity(&mut self, affinity: Vec<(VnodeId, Affinity)>) {
        debug_assert!(affinity.windows(2).all(|w| w[0].0 < w[1].0));
        self.buf.affinity = affinity;
    }

    /// The reserved vnodes the job being placed may use, with its affinity for each, by
    /// vnode ([`Self::set_affinity`]); empty when no reservation concerns it.
    pub fn affinity(&self) -> &[(VnodeId, Affinity)] {
        &self.buf.affinity
    }

    /// The job being placed's affinity for vnode `v`.
    pub fn affinity_of(&self, v: VnodeId) -> Affinity {
        match self.buf.affinity.binary_search_by_key(&v, |&(w, _)| w) {
            Ok(i) => self.buf.affinity[i].1,
            Err(_) => Affinity::Unreserved,
        }
    }

    /// Makes this view read through to `base` instead, equal to it: `base` must be a state of
    /// the same cluster (for instance its idle copy), so that a what-if state far from the real
    /// one is built from whichever is nearer.
    pub fn reset_to(&mut self, base: &'a ClusterState) {
        debug_assert_eq!(base.cluster.n_vnodes(), self.base.cluster.n_vnodes());
        debug_assert_eq!(base.width, self.base.width);
        self.base = base;
        self.reset();
    }

    /// Makes this view equal to another scratch view over the same state, which must be
    /// settled ([`Self::settle`]).
    pub fn copy_from(&mut self, other: &Scratch<'_>) {
        debug_assert!(
            std::ptr::eq(self.base, other.base),
            "copy_from needs views over the same state"
        );
        debug_assert!(other.is_settled(), "copy_from needs a settled view");
        self.reset();
        let w = self.base.width;
        self.buf.patterns.clone_from(&other.buf.patterns);
        self.buf
            .pattern_ranges
            .clone_from(&other.buf.pattern_ranges);
        self.buf
            .pattern_readers
            .clone_from(&other.buf.pattern_readers);
        self.buf.vacant_slots.clone_from(&other.buf.vacant_slots);
        for k in 0..self.buf.pattern_ranges.len() {
            let range = self.buf.pattern_ranges[k].clone();
            self.buf.read_from_pattern(range, k);
        }
        // Rows were touched mostly in runs of consecutive vnodes: one copy per run. (A row
        // of a pattern's range that the other view then wrote is its own there, and here.)
        let touched = &other.buf.touched;
        let mut k = 0;
        while k < touched.len() {
            let first = touched[k] as usize;
            let mut end = first + 1;
            self.buf.stamp[first] = self.buf.generation;
            k += 1;
            while k < touched.len() && touched[k] as usize == end {
                self.buf.stamp[end] = self.buf.generation;
                end += 1;
                k += 1;
            }
            self.buf.changed.set_range(first..end, true);
            self.buf.rows[first * w..end * w].copy_from_slice(&other.buf.rows[first * w..end * w]);
        }
        self.buf.touched.clone_from(&other.buf.touched);
        self.buf.eligible_own = other.buf.eligible_own;
        if other.buf.eligible_own {
            self.buf.eligible.copy_from(&other.buf.eligible);
            self.buf.eligible_point = other.buf.eligible_point;
            (self.buf.eligible_dirty).clone_from(&other.buf.eligible_dirty);
        }
        self.buf.free_total.clone_from(&other.buf.free_total);
        self.buf.exclusive_vnodes = other.buf.exclusive_vnodes;
        self.buf.set_free_own = other.buf.set_free_own;
        if other.buf.set_free_own {
            self.buf
                .tracked_set_free
                .clone_from(&other.buf.tracked_set_free);
        }
        for &l in &other.buf.limits_touched {
            let l = l as usize;
            self.buf.limit_stamp[l] = self.buf.generation;
            self.buf.limit_room[l] = other.buf.limit_room[l];
        }
        self.buf
            .limits_touched
            .clone_from(&other.buf.limits_touched);
        self.buf.affinity.clone_from(&other.buf.affinity);
    }

    #[inline]
    fn row(&self, v: VnodeId) -> &[u64] {
        debug_assert!(
            self.is_settled(),
            "a scratch view's rows read before it was settled"
        );
        let w = self.base.width;
        match self.buf.here(v.index()) {
            RowHere::Own => &self.buf.rows[v.index() * w..(v.index() + 1) * w],
            RowHere::Pattern(k) => &self.buf.patterns[k][..w],
            RowHere::Base => self.base.row(v),
        }
    }

    /// Takes or gives back `alloc` in this view's totals, copying each run limit's room on
    /// its first write.
    fn apply_totals(&mut self, alloc: &Allocation, dir: Direction) {
        let buf = &mut *self.buf;
        for d in alloc.limit_draws.iter().flat_map(|d| d.iter()) {
            let l = d.limit as usize;
            if buf.limit_stamp[l] != buf.generation {
                buf.limit_stamp[l] = buf.generation;
                buf.limits_touched.push(d.limit);
                buf.limit_room[l] = self.base.limit_room[l];
            }
        }
        let totals = Totals {
            free_total: &mut buf.free_total,
            exclusive_vnodes: &mut buf.exclusive_vnodes,
            limit_room: &mut buf.limit_room,
        };
        apply_totals(totals, alloc, dir);
    }

    /// Takes or gives back `alloc` in everything but the totals: the rows, the eligibility and
    /// the set tallies.
    fn apply_rows(&mut self, alloc: &Allocation, dir: Direction) {
        // Copy on write: bring every row the allocation touches into this view first, each
        // stretch of rows not yet copied in one copy (a run's rows are consecutive). A run on
        // rows this view has not changed reads the base's marks: in the whole-stretch form,
        // its rows are neither copied nor written; its vnodes are stamped to read the row
        // after it, in a pattern slot. A give of a stretch read whole from a pattern that
        // leaves the base's rows makes its vnodes read the base again.
        let buf = &mut *self.buf;
        let n_cons = self.base.cluster.resources().n_consumables();
        let exclusive = alloc.sharing.is_exclusive();
        buf.own_eligibility(self.base);
        buf.whole.clear();
        buf.whole_slots.clear();
        for (run, amounts) in alloc.runs(n_cons) {
            let range = run.indices();
            buf.dirty_eligibility(range.clone());
            let restored = match dir {
                Direction::Give => buf.restorable(self.base, range.clone(), amounts, exclusive),
                Direction::Take => None,
            };
            if let Some(k) = restored {
                buf.whole.push(true);
                buf.whole_slots.push(WholeSlot::Base(range.start));
                buf.read_from_base(range, k);
                continue;
            }
            let whole = buf.slot_available()
                && buf.unchanged(range.clone())
                && (self.base.marks).allow(
                    &self.base.cluster,
                    buf.eligible_over(self.base),
                    range.clone(),
                    dir,
                );
            buf.whole.push(whole);
            if whole {
                let k = buf.claim_slot(range);
                buf.whole_slots.push(WholeSlot::Pattern(k));
            } else {
                buf.bring_in(self.base, range);
            }
        }
        // A shared pool's other members change too: their rows come in as well, and their
        // eligibility may change.
        if let Some(parts) = pooled_parts(&self.base.cluster, alloc) {
            for (_, _, pool) in parts {
                for &u in &pool.members {
                    buf.bring_in(self.base, u.index()..u.index() + 1);
                    buf.dirty_eligibility(u.index()..u.index() + 1);
                }
            }
        }
        let buf = &mut *self.buf;
        if !buf.set_free_own {
            buf.tracked_set_free.clone_from(&self.base.tracked_set_free);
            buf.set_free_own = true;
        }
        let books = Books {
            rows: &mut buf.rows,
            width: self.base.width,
            eligible: &mut buf.eligible,
            sets: &self.base.sets,
            tracked_set_free: &mut buf.tracked_set_free,
            watch: None,
        };
        buf.after_rows.clear();
        let stretches = Stretches::Decided {
            whole: &buf.whole,
            after_rows: &mut buf.after_rows,
        };
        apply(books, &self.base.cluster, alloc, dir, stretches);
        debug_assert_eq!(buf.after_rows.len(), buf.whole_slots.len());
        let w = self.base.width;
        for (row, slot) in buf.after_rows.iter().zip(&buf.whole_slots) {
            match *slot {
                WholeSlot::Pattern(k) => copy_short(&mut buf.patterns[k][..w], &row[..w]),
                WholeSlot::Base(v) => debug_assert_eq!(
                    &row[..w],
                    self.base.row(VnodeId::from_index(v)),
                    "a stretch given back to read the base must leave the base's rows"
                ),
            }
        }
    }

    /// Takes `alloc` in this view (a job this pass is about to start).
    ///
    /// # Panics
    /// In debug builds, if the view has less free than `alloc` takes: a placement search
    /// only proposes what fits.
    pub fn take(&mut self, alloc: &Allocation) {
        self.settle();
        self.apply_totals(alloc, Direction::Take);
        self.apply_rows(alloc, Direction::Take);
    }

    /// Gives `alloc` back in this view (a running job that will have ended).
    pub fn give(&mut self, alloc: &Allocation) {
        self.settle();
        self.apply_totals(alloc, Direction::Give);
        self.apply_rows(alloc, Direction::Give);
    }

    /// Takes `alloc` in this view's totals now ([`StateView::free_total`],
    /// [`StateView::exclusive_vnodes`], [`StateView::limit_room`]) and in its rows only when
    /// they are next read ([`Self::settle`]). A pass's last start is most often followed only
    /// by questions the totals answer (the next job needs more ncpus than are free) before the
    /// view is reset: on CEA-Curie under EASY, 85 % of starts are the last of their pass, and
    /// their rows would be written for nothing.
    ///
    /// Until the view is settled, reading its rows, eligibility or set tallies is a bug
    /// (checked in debug builds): a caller that asks a placement settles first.
    ///
    /// # Panics
    /// As [`Self::take`].
    pub fn take_deferred(&mut self, alloc: &Allocation) {
        self.settle();
        self.apply_totals(alloc, Direction::Take);
        alloc.copy_into(&mut self.buf.pending);
        self.buf.has_pending = true;
    }

    /// Applies to the rows the take [`Self::take_deferred`] left for later, if any: after
    /// this, every read of the view sees it.
    pub fn settle(&mut self) {
        if !self.buf.has_pending {
            return;
        }
        self.buf.has_pending = false;
        let pending = std::mem::take(&mut self.buf.pending);
        self.apply_rows(&pending, Direction::Take);
        self.buf.pending = pending;
    }

    /// Whether a deferred take still waits to be applied to the rows.
    pub fn is_settled(&self) -> bool {
        !self.buf.has_pending
    }
}

impl Scratch<'_> {
    /// [`ClusterState::limits_slack`] of the state this view was opened on, as the pass
    /// began.
    pub fn limits_slack(&self, draws: &[LimitDraw]) -> bool {
        self.base.limits_slack(draws)
    }
}

impl StateView for Scratch<'_> {
    #[inline]
    fn cluster(&self) -> &Cluster {
        &self.base.cluster
    }
    #[inline]
    fn free(&self, v: VnodeId, c: ConsumableIdx) -> u64 {
        self.row(v)[c.index()]
    }
    #[inline]
    fn n_jobs(&self, v: VnodeId) -> u64 {
        self.row(v)[self.base.width - EXTRA + JOBS]
    }
    #[inline]
    fn eligible(&self) -> &Bitset {
        debug_assert!(
            self.is_settled(),
            "a scratch view's eligibility read before it was settled"
        );
        self.buf.eligible_over(self.base)
    }
    #[inline]
    fn free_total(&self, c: ConsumableIdx) -> u64 {
        self.buf.free_total[c.index()]
    }
    #[inline]
    fn exclusive_vnodes(&self) -> u64 {
        self.buf.exclusive_vnodes
    }
    #[inline]
    fn exclusive_with_room(&self) -> u64 {
        // A view takes and gives jobs' allocations, never outages: the base's are its own.
        self.buf.exclusive_vnodes - self.base.down_held_whole
    }
    #[inline]
    fn tracked_sets_free(&self) -> SetTallies<'_> {
        debug_assert!(
            self.is_settled(),
            "a scratch view's set tallies read before it was settled"
        );
        let all = if self.buf.set_free_own {
            &self.buf.tracked_set_free
        } else {
            &self.base.tracked_set_free
        };
        SetTallies {
            all,
            width: self.base.width - EXTRA + 1,
        }
    }
    /// Asks each stretch of vnodes that read one row once: a stretch the view has not changed
    /// where the base's vnodes are pristine (with the same capacities), and a stretch read
    /// from one pattern. A reservation's vnodes in its own view are mostly such stretches,
    /// and a calendar asks whether it still has room there after every change before it.
    fn run_fits(&self, range: std::ops::Range<usize>, amounts: &[u64], sharing: Sharing) -> bool {
        let fits = self.eligible().contains_range(range.clone()) && {
            let cluster = &self.base.cluster;
            let n_cons = self.base.width - EXTRA;
            let row_fits = |row: &[u64]| {
                !(sharing.is_exclusive() && row[n_cons + JOBS] > 0)
                    && amounts.iter().zip(row).all(|(&a, &free)| a <= free)
            };
            let mut i = range.start;
            let mut fits = true;
            while fits && i < range.end {
                let end = match self.buf.here(i) {
                    RowHere::Base => {
                        let end = (self.buf.changed)
                            .first_present(i..range.end)
                            .unwrap_or(range.end);
                        fits = if self.base.marks.pristine_stretch(cluster, i..end) {
                            row_fits(self.base.row(VnodeId::from_index(i)))
                        } else {
                            (i..end).all(|j| row_fits(self.base.row(VnodeId::from_index(j))))
                        };
                        end
                    }
                    RowHere::Pattern(k) => {
                        let stamp = self.buf.stamp[i];
                        let alike = self.buf.stamp[i..range.end]
                            .iter()
                            .take_while(|&&s| s == stamp)
                            .count();
                        fits = row_fits(&self.buf.patterns[k][..self.base.width]);
                        i + alike
                    }
                    RowHere::Own => {
                        fits = row_fits(self.row(VnodeId::from_index(i)));
                        i + 1
                    }
                };
                i = end;
            }
            fits
        };
        debug_assert_eq!(
            fits,
            each_fits(self, range.clone(), amounts, sharing),
            "run_fits of {range:?} must be fits_chunk of each of its vnodes"
        );
        fits
    }

    #[inline]
    fn limit_room(&self, limit: u32) -> u64 {
        let l = limit as usize;
        match self.buf.limit_stamp.get(l) {
            Some(&stamp) if stamp == self.buf.generation => self.buf.limit_room[l],
            Some(_) => self.base.limit_room[l],
            None => 0,
        }
    }
}

#[cfg(test)]
mod group_tests {
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::resource::ResourceDefs;

    /// What the tallies must be: free amounts and count of the set's eligible vnodes.
    fn brute(view: &impl StateView, members: &[VnodeId]) -> Vec<u64> {
        let mut t = vec![0u64; 4];
        for &v in members {
            if view.eligible().contains(v.index()) {
                for (c, slot) in t.iter_mut().enumerate().take(3) {
                    *slot += view.free(v, ConsumableIdx(c as u8));
                }
                t[3] += 1;
            }
        }
        t
    }

    /// `n` vnodes of capacities `caps` (ncpus, mem, ngpus), each on a host of its own.
    pub(super) fn one_vnode_hosts(n: usize, caps: &[u64; 3]) -> Cluster {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        for i in 0..n {
            let h = b.add_host(format!("h{i}"));
            b.add_vnode(format!("v{i}"), h, 1.0, caps, Vec::new())
                .unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn group_tallies_follow_every_take_and_give() {
        let cluster = one_vnode_hosts(12, &[4, 8, 1]);
        // Overlapping sets, as string_array sets make them.
        let sets: Vec<Vec<VnodeId>> = vec![
            (0..6).map(VnodeId).collect(),
            (4..12).map(VnodeId).collect(),
            vec![VnodeId(1), VnodeId(5), VnodeId(9)],
        ];
        let mut state = ClusterState::new(cluster);
        state.track_sets(&sets);
        // The set watch over a partition: thirds of the vnodes.
        let thirds: Vec<u32> = (0..12u32).map(|v| v / 4).collect();
        state.watch_sets(&thirds, 3);
        let watched = |state: &ClusterState| {
            let mut fresh = state.clone();
            fresh.watch_sets(&thirds, 3);
            let (w, f) = (state.watch().unwrap(), fresh.watch().unwrap());
            (
                w.set_free.clone(),
                w.idle_ncpus,
                f.set_free.clone(),
                f.idle_ncpus,
            )
        };
        let mut rng = crate::test_rng::Lcg(7);
        let mut next = |n: u64| rng.below(n);
        let mut held: Vec<Allocation> = Vec::new();
        for step in 0..400 {
            if next(3) == 0 && !held.is_empty() {
                let a = held.swap_remove(next(held.len() as u64) as usize);
                state.release(&a);
            } else {
                let v = VnodeId(next(12) as u32);
                let sharing = if next(4) == 0 {
                    Sharing::Excl
                } else {
                    Sharing::Shared
                };
                let mut a = Allocation::new(sharing);
                a.add(v, &[1 + next(2), next(3), 0]);
                if state.allocate(&a).is_ok() {
                    held.push(a);
                }
            }
            for (g, members) in sets.iter().enumerate() {
                assert_eq!(
                    state.tracked_set_free(g),
                    &brute(&state, members)[..],
                    "step {step}, set {g}"
                );
            }
            // Kept in step with every change, it equals a watch counted afresh.
            let (kept_free, kept_idle, fresh_free, fresh_idle) = watched(&state);
            assert_eq!(
                (kept_free, kept_idle),
                (fresh_free, fresh_idle),
                "step {step}"
            );
            // Outages too: a vnode with no job goes down and comes back.
            if step % 50 == 0 {
                let idle = (0..12)
                    .map(VnodeId)
                    .find(|&v| state.n_jobs(v) == 0 && !state.is_down(v));
                if let Some(v) = idle {
                    state.set_down(v).unwrap();
                    let (kept_free, kept_idle, fresh_free, fresh_idle) = watched(&state);
                    assert_eq!((kept_free, kept_idle), (fresh_free, fresh_idle), "down {v}");
                    state.set_up(v);
                }
            }
        }
        // A scratch view starts equal, and follows its own takes and gives.
        let mut buf = ScratchBuf::default();
        let mut view = Scratch::new(&state, &mut buf);
        for a in held.iter().take(5) {
            view.give(a);
        }
        for (g, members) in sets.iter().enumerate() {
            assert_eq!(
                view.tracked_set_free(g),
                &brute(&view, members)[..],
                "scratch, set {g}"
            );
        }
        view.reset();
        for (g, members) in sets.iter().enumerate() {
            assert_eq!(
                view.tracked_set_free(g),
                &brute(&state, members)[..],
                "reset, set {g}"
            );
        }
    }
}

#[cfg(test)]
mod run_tests {
    //! The run-based allocation against the plain per-vnode definition.
    use super::group_tests::one_vnode_hosts;
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::resource::ResourceDefs;

    use crate::test_rng::Lcg as Rng;

    /// The plain definition: each vnode's free amounts, jobs and exclusivity, changed one
    /// vnode at a time; everything else is computed from them when asked.
    #[derive(Clone)]
    struct Plain {
        caps: Vec<Vec<u64>>,
        free: Vec<Vec<u64>>,
        jobs: Vec<u64>,
        exclusive: Vec<bool>,
        /// Out of service: held whole by an outage.
        down: Vec<bool>,
    }

    /// A cluster of `n` vnodes, four to a host, each with the capacities `cap_of` draws, and
    /// those capacities.
    fn random_cluster(
        rng: &mut Rng,
        n: usize,
        cap_of: impl Fn(&mut Rng) -> Vec<u64>,
    ) -> (Cluster, Vec<Vec<u64>>) {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let mut caps = Vec::new();
        for i in 0..n {
            let h = b.add_host(format!("h{}", i / 4));
            let cap = cap_of(rng);
            b.add_vnode(format!("v{i}"), h, 1.0, &cap, Vec::new())
                .unwrap();
            caps.push(cap);
        }
        (b.build().unwrap(), caps)
    }

    impl Plain {
        /// Vnodes of these capacities with nothing held and nothing down.
        fn idle(caps: Vec<Vec<u64>>) -> Plain {
            let n = caps.len();
            Plain {
                free: caps.clone(),
                caps,
                jobs: vec![0; n],
                exclusive: vec![false; n],
                down: vec![false; n],
            }
        }
        fn eligible(&self, v: usize) -> bool {
            let job_busy = self.caps[v][0] > 0 && self.free[v][0] == 0;
            !self.exclusive[v] && !job_busy
        }
        fn fits(&self, a: &Allocation) -> bool {
            let mut seen = vec![false; self.free.len()];
            a.parts(3).all(|(v, amounts)| {
                let v = v.index();
                let first = !std::mem::replace(&mut seen[v], true);
                first
                    && self.eligible(v)
                    && (!a.sharing.is_exclusive() || self.jobs[v] == 0)
                    && amounts.iter().zip(&self.free[v]).all(|(a, f)| a <= f)
            })
        }
        fn apply(&mut self, a: &Allocation, take: bool) {
            for (v, amounts) in a.parts(3) {
                let v = v.index();
                for (f, &x) in self.free[v].iter_mut().zip(amounts) {
                    if take { *f -= x } else { *f += x }
                }
                if take {
                    self.jobs[v] += 1;
                } else {
                    self.jobs[v] -= 1;
                }
                if a.sharing.is_exclusive() {
                    self.exclusive[v] = take;
                }
            }
        }
        /// Free amounts then the count of eligible vnodes among `members`.
        fn tally(&self, members: &[VnodeId]) -> Vec<u64> {
            let mut t = vec![0; 4];
            for v in members
                .iter()
                .map(|v| v.index())
                .filter(|&v| self.eligible(v))
            {
                for (slot, &free) in t.iter_mut().zip(&self.free[v]) {
                    *slot += free;
                }
                t[3] += 1;
            }
            t
        }
    }

    /// Checks every view of `view` against the plain definition.
    fn agree(view: &impl StateView, plain: &Plain, sets: &[Vec<VnodeId>], at: &str) {
        for v in 0..plain.free.len() {
            let id = VnodeId::from_index(v);
            let free: Vec<u64> = (0..3).map(|c| view.free(id, ConsumableIdx(c))).collect();
            assert_eq!(free, plain.free[v], "{at}: free on vnode {v}");
            assert_eq!(view.n_jobs(id), plain.jobs[v], "{at}: jobs on vnode {v}");
            assert_eq!(
                view.eligible().contains(v),
                plain.eligible(v),
                "{at}: vnode {v}"
            );
        }
        agree_on_totals(view, plain, at);
        for (g, members) in sets.iter().enumerate() {
            assert_eq!(
                view.tracked_set_free(g),
                &plain.tally(members)[..],
                "{at}: set {g}"
            );
        }
    }

    /// Checks the totals of `view` (what a pass asks before any vnode) against the plain
    /// definition.
    fn agree_on_totals(view: &impl StateView, plain: &Plain, at: &str) {
        for c in 0..3 {
            let total: u64 = plain.free.iter().map(|f| f[c]).sum();
            assert_eq!(
                view.free_total(ConsumableIdx(c as u8)),
                total,
                "{at}: total {c}"
            );
        }
        let exclusive = plain.exclusive.iter().filter(|&&e| e).count() as u64;
        assert_eq!(view.exclusive_vnodes(), exclusive, "{at}: exclusive vnodes");
        let with_room = (0..plain.exclusive.len())
            .filter(|&v| plain.exclusive[v] && !plain.down[v])
            .count() as u64;
        assert_eq!(
            view.exclusive_with_room(),
            with_room,
            "{at}: exclusive with room"
        );
    }

    /// Checks the state's marks against its rows: a pristine vnode's row is its capacity with
    /// no job and no flag; a single one's is its capacity less the part of the one allocation
    /// of `held` on it (or of its outage), flagged as that allocation is.
    fn marks_hold(state: &ClusterState, held: &[Allocation], at: &str) {
        let n_cons = state.cluster_consumables();
        for v in 0..state.cluster.n_vnodes() {
            let id = VnodeId::from_index(v);
            let row = state.row(id);
            let cap = state.cluster.capacity(id);
            if state.marks.pristine.contains(v) {
                assert_eq!(&row[..n_cons], cap, "{at}: pristine vnode {v}");
                assert_eq!(&row[n_cons..], &[0, 0], "{at}: pristine vnode {v}");
            }
            if state.marks.single.contains(v) {
                let outage = down_allocation(&state.cluster, id);
                let holders: Vec<&Allocation> = held
                    .iter()
                    .filter(|a| a.holds(id))
                    .chain(state.is_down(id).then_some(&outage))
                    .collect();
                assert_eq!(holders.len(), 1, "{at}: single vnode {v}");
                let (_, part) = holders[0].parts(n_cons).find(|(u, _)| *u == id).unwrap();
                let expected: Vec<u64> = cap.iter().zip(part).map(|(c, p)| c - p).collect();
                assert_eq!(&row[..n_cons], &expected[..], "{at}: single vnode {v}");
                let flags = u64::from(holders[0].sharing.is_exclusive());
                assert_eq!(&row[n_cons..], &[1, flags], "{at}: single vnode {v}");
            }
        }
    }

    /// How many vnodes of `a` the view reads from a whole stretch's pattern.
    fn patterned(view: &Scratch<'_>, a: &Allocation) -> usize {
        a.vnode_runs()
            .iter()
            .flat_map(|r| r.indices())
            .filter(|&i| matches!(view.buf.here(i), RowHere::Pattern(_)))
            .count()
    }

    /// How many runs of `a` the state would apply in the whole-stretch form.
    fn whole_runs(state: &ClusterState, a: &Allocation, dir: Direction) -> usize {
        a.vnode_runs()
            .iter()
            .filter(|r| (state.marks).allow(&state.cluster, &state.eligible, r.indices(), dir))
            .count()
    }

    /// A random allocation of a few runs (whole runs of consecutive vnodes with one amount
    /// each, as first fit makes them, and single vnodes), possibly exclusive.
    fn random_allocation(rng: &mut Rng, plain: &Plain) -> Allocation {
        let n = plain.free.len() as u64;
        let sharing = if rng.below(5) == 0 {
            Sharing::Excl
        } else {
            Sharing::Shared
        };
        let mut a = Allocation::new(sharing);
        for _ in 0..1 + rng.below(4) {
            let first = rng.below(n);
            let longest = if rng.below(2) == 0 { 1 } else { 24 };
            let count = 1 + rng.below(longest);
            // Some runs take their first vnode whole.
            let amounts = match rng.below(3) {
                0 => [
                    plain.caps[first as usize][0],
                    plain.caps[first as usize][1],
                    plain.caps[first as usize][2],
                ],
                _ => [1 + rng.below(2), rng.below(3), rng.below(2)],
            };
            for v in first..(first + count).min(n) {
                if !a.holds(VnodeId(v as u32)) {
                    a.push(VnodeId(v as u32), &amounts);
                }
            }
        }
        a
    }

    /// A scheduler's view of its partition kept up to date by `follow` (the allocations on
    /// its vnodes given back and taken since) against the view made anew from the state, and
    /// against the definition: nothing free and nothing eligible outside; idle copies of it
    /// are masked the same way.
    #[test]
    fn a_followed_partition_view_is_the_view_made_anew() {
        let mut rng = Rng(29);
        let n = 60;
        let mut state = ClusterState::new(one_vnode_hosts(n, &[2, 8, 1]));
        // The partition: vnodes 20..45; its own sets, overlapping the boundary.
        let members = |v: usize| (20..45).contains(&v);
        let mut outside = Bitset::new(n);
        for v in (0..n).filter(|&v| !members(v)) {
            outside.set(v, true);
        }
        let outside = Arc::new(outside);
        let sets: Vec<Vec<VnodeId>> = vec![
            (15..30).map(VnodeId::from_index).collect(),
            (30..50).map(VnodeId::from_index).collect(),
        ];
        let index = SetIndex::new(n, &sets);
        let mut view = state.partition_view(&outside, &index);
        let mut held: Vec<(Allocation, bool)> = Vec::new();
        for step in 0..400 {
            let (mut given, mut taken) = (Vec::new(), Vec::new());
            for _ in 0..1 + rng.below(3) {
                if rng.below(3) == 0 && !held.is_empty() {
                    let (a, inside) = held.swap_remove(rng.below(held.len() as u64) as usize);
                    state.release(&a);
                    // Taken and given back since the last pass: the view never sees it.
                    match taken.iter().position(|t| *t == a) {
                        Some(i) => {
                            taken.swap_remove(i);
                        }
                        None if inside => given.push(a),
                        None => {}
                    }
                } else {
                    let first = rng.below(n as u64 - 4) as u32;
                    let mut a = Allocation::new(if rng.below(4) == 0 {
                        Sharing::Excl
                    } else {
                        Sharing::Shared
                    });
                    for v in first..first + 1 + rng.below(4) as u32 {
                        a.push(VnodeId(v), &[1, rng.below(4), 0]);
                    }
                    // A scheduler places only on its own vnodes, or only outside them.
                    let inside = a.vnodes().all(|v| members(v.index()));
                    let outside_only = a.vnodes().all(|v| !members(v.index()));
                    if (inside || outside_only) && state.allocate(&a).is_ok() {
                        if inside {
                            taken.push(a.clone());
                        }
                        held.push((a, inside));
                    }
                }
            }
            view.follow(&state, &given, &taken).unwrap();
            let fresh = state.partition_view(&outside, &index);
            let at = format!("step {step}");
            for v in 0..n {
                let id = VnodeId::from_index(v);
                for c in 0..3 {
                    let free = view.free(id, ConsumableIdx(c));
                    assert_eq!(free, fresh.free(id, ConsumableIdx(c)), "{at}: vnode {v}");
                    let expected = if members(v) {
                        state.free(id, ConsumableIdx(c))
                    } else {
                        0
                    };
                    assert_eq!(free, expected, "{at}: vnode {v} against the state");
                }
                assert_eq!(view.n_jobs(id), fresh.n_jobs(id), "{at}: jobs on {v}");
                let eligible = view.eligible().contains(v);
                assert_eq!(eligible, fresh.eligible().contains(v), "{at}: vnode {v}");
                assert!(
                    members(v) || !eligible,
                    "{at}: vnode {v} outside is eligible"
                );
            }
            for c in 0..3 {
                let c = ConsumableIdx(c);
                assert_eq!(view.free_total(c), fresh.free_total(c), "{at}: total");
            }
            for g in 0..sets.len() {
                assert_eq!(
                    view.tracked_set_free(g),
                    fresh.tracked_set_free(g),
                    "{at}: set {g}"
                );
            }
            assert_eq!(view.exclusive_vnodes(), fresh.exclusive_vnodes(), "{at}");
        }
        // An idle copy of the view has only the partition free.
        let idle = view.idle_copy();
        let free: u64 = (0..n)
            .map(|v| idle.free(VnodeId::from_index(v), ConsumableIdx::NCPUS))
            .sum();
        assert_eq!(free, 25 * 2);
        assert_eq!(idle.free_total(ConsumableIdx::NCPUS), 25 * 2);
    }

    /// A take left for later ([`Scratch::take_deferred`]) is in the totals at once, and in
    /// everything once settled; a reset forgets it; an eager take or give after it applies it
    /// first, in order.
    #[test]
    fn a_deferred_take_is_in_the_totals_at_once_and_in_the_rows_once_settled() {
        let mut rng = Rng(5);
        let mut deferred = [0; 3];
        for round in 0..10 {
            let n = 30 + rng.below(60) as usize;
            let (cluster, caps) = random_cluster(&mut rng, n, |rng| {
                if rng.below(4) == 0 {
                    vec![4, 16, 1]
                } else {
                    vec![1, 4, 0]
                }
            });
            let mut state = ClusterState::new(cluster);
            let sets: Vec<Vec<VnodeId>> = (0..n)
                .step_by(8)
                .map(|s| (s..(s + 8).min(n)).map(VnodeId::from_index).collect())
                .collect();
            state.track_sets(&sets);
            let mut plain = Plain::idle(caps);
            // Some jobs already run in the base.
            for _ in 0..6 {
                let a = random_allocation(&mut rng, &plain);
                if plain.fits(&a) {
                    state.allocate(&a).unwrap();
                    plain.apply(&a, true);
                }
            }
            let base = plain.clone();
            let mut buf = ScratchBuf::default();
            let mut view = Scratch::new(&state, &mut buf);
            let mut what_if = plain.clone();
            let mut taken: Vec<Allocation> = Vec::new();
            for step in 0..40 {
                let at = format!("round {round}, step {step}");
                match rng.below(6) {
                    // A give while a take waits: the take goes first.
                    0 if !taken.is_empty() => {
                        let a = taken.swap_remove(rng.below(taken.len() as u64) as usize);
                        view.give(&a);
                        what_if.apply(&a, false);
                        agree(&view, &what_if, &sets, &at);
                    }
                    // A reset forgets the waiting take with everything else.
                    1 if !view.is_settled() => {
                        view.reset();
                        taken.clear();
                        what_if = base.clone();
                        deferred[2] += 1;
                        agree(&view, &what_if, &sets, &at);
                    }
                    _ => {
                        let a = random_allocation(&mut rng, &what_if);
                        if !what_if.fits(&a) {
                            continue;
                        }
                        // The rows as before: a take waiting from an earlier step is
                        // applied when this one is.
                        let waiting = !view.is_settled();
                        view.take_deferred(&a);
                        what_if.apply(&a, true);
                        taken.push(a);
                        assert!(!view.is_settled(), "{at}");
                        agree_on_totals(&view, &what_if, &at);
                        deferred[usize::from(waiting)] += 1;
                        if rng.below(2) == 0 {
                            view.settle();
                            agree(&view, &what_if, &sets, &at);
                        }
                    }
                }
            }
            view.settle();
            agree(&view, &what_if, &sets, &format!("round {round}, end"));
        }
        // Deferred takes after a settled view, after a waiting one, and resets that dropped one.
        assert!(deferred.iter().all(|&k| k >= 5), "{deferred:?}");
    }

    /// Reading a view's rows while a take waits is a bug that debug builds catch.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a scratch view's eligibility read before it was settled")]
    fn reading_a_view_with_a_waiting_take_is_caught() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let h = b.add_host("h0".to_owned());
        b.add_vnode("v0".to_owned(), h, 1.0, &[1, 4, 0], Vec::new())
            .unwrap();
        let state = ClusterState::new(b.build().unwrap());
        let mut buf = ScratchBuf::default();
        let mut view = Scratch::new(&state, &mut buf);
        let mut a = Allocation::new(Sharing::Shared);
        a.push(VnodeId::from_index(0), &[1, 0, 0]);
        view.take_deferred(&a);
        assert_eq!(view.free_total(ConsumableIdx::NCPUS), 0);
        let _ = view.eligible();
    }

    #[test]
    fn run_based_apply_gives_the_plain_per_vnode_state_and_tallies() {
        let mut rng = Rng(11);
        // Runs applied in the whole-stretch form: taken, given back, then in scratch views;
        // and vnodes held whole (shared, exclusive) whose rows the marks hold, summed by step.
        let mut whole = [0; 4];
        let mut full_seen = [0; 3];
        // Vnodes of a scratch view's whole stretch that a later take brought in.
        let mut patterned_brought_in = 0;
        // Runs of a scratch view's whole stretches given back to read the base again.
        let mut restored = 0;
        // Allocations a scratch view had no room for, and room for.
        let mut room_for = [0; 2];
        // For the allocations only asked about, so that the others are drawn as before.
        let mut other_rng = Rng(29);
        // Reservations found without room, and with room, after a take in a scratch view.
        let mut room_after = [0; 2];
        for round in 0..20 {
            // Vnodes of a few shapes: mostly one-ncpu, some wider, some without ncpus; and
            // some two-ncpu ones, which runs of one-ncpu parts span beside one-ncpu vnodes,
            // so that the per-vnode loop also takes and gives back pristine and single ones.
            let n = 40 + rng.below(160) as usize;
            let (cluster, caps) = random_cluster(&mut rng, n, |rng| match rng.below(7) {
                0 => vec![4, 16, 1],
                1 => vec![0, 8, 0],
                2 => vec![2, 4, 0],
                _ => vec![1, 4, 0],
            });
            // Overlapping sets: stretches (switches), a stride (a string_array value), all.
            let stretch = 1 + rng.below(40) as usize;
            let mut sets: Vec<Vec<VnodeId>> = (0..n)
                .step_by(stretch)
                .map(|s| (s..(s + stretch).min(n)).map(VnodeId::from_index).collect())
                .collect();
            // A stride splits runs at every vnode; without it, at the stretches' ends only.
            if round % 2 == 0 {
                sets.push((0..n).step_by(3).map(VnodeId::from_index).collect());
            }
            sets.push((0..n).map(VnodeId::from_index).collect());
            let mut state = ClusterState::new(cluster);
            state.track_sets(&sets);
            let quarter = (n / 4).max(1);
            let watch_of: Vec<u32> = (0..n).map(|v| (v / quarter) as u32).collect();
            let n_watch = (n - 1) / quarter + 1;
            state.watch_sets(&watch_of, n_watch);
            let mut plain = Plain::idle(caps);
            let mut held: Vec<Allocation> = Vec::new();
            for step in 0..300 {
                let at = format!("round {round}, step {step}");
                match rng.below(10) {
                    0..=2 if !held.is_empty() => {
                        let a = held.swap_remove(rng.below(held.len() as u64) as usize);
                        whole[1] += whole_runs(&state, &a, Direction::Give);
                        state.release(&a);
                        plain.apply(&a, false);
                    }
                    3 => {
                        // An outage: a vnode with no job goes down, or one down comes back.
                        let v = VnodeId::from_index(rng.below(n as u64) as usize);
                        if state.is_down(v) {
                            state.set_up(v);
                            plain.apply(&down_allocation(state.cluster(), v), false);
                            plain.down[v.index()] = false;
                        } else if plain.jobs[v.index()] == 0 {
                            state.set_down(v).unwrap();
                            plain.apply(&down_allocation(state.cluster(), v), true);
                            plain.down[v.index()] = true;
                        }
                    }
                    _ => {
                        let a = random_allocation(&mut rng, &plain);
                        // The kernel's check refuses exactly what the plain definition does.
                        assert_eq!(state.allocate(&a).is_ok(), plain.fits(&a), "{at}: {a:?}");
                        if plain.fits(&a) {
                            state.release(&a);
                            marks_hold(&state, &held, &at);
                            // The same with one of its vnodes named again, out of order.
                            let mut twice = a.clone();
                            let again = a.vnodes().nth(rng.below(a.n_vnodes() as u64) as usize);
                            twice.push(again.unwrap(), &[0, 0, 0]);
                            assert!(!plain.fits(&twice));
                            assert_eq!(
                                state.allocate(&twice),
                                Err(AllocationError::DuplicateVnode(again.unwrap())),
                                "{at}"
                            );
                            whole[0] += whole_runs(&state, &a, Direction::Take);
                            state.allocate(&a).unwrap();
                            plain.apply(&a, true);
                            held.push(a);
                        }
                    }
                }
                agree(&state, &plain, &sets, &at);
                marks_hold(&state, &held, &at);
                assert_eq!(state.any_down(), plain.down.contains(&true), "{at}");
                full_seen[0] += state.marks.full.count();
                full_seen[1] += state.marks.full_excl.count();
                full_seen[2] += state.marks.ncpus_only.count();
                let mut fresh = state.clone();
                fresh.watch_sets(&watch_of, n_watch);
                let (kept, counted) = (state.watch().unwrap(), fresh.watch().unwrap());
                assert_eq!(
                    (&kept.set_free, kept.idle_ncpus),
                    (&counted.set_free, counted.idle_ncpus),
                    "{at}: watch"
                );
            }
            // A scratch view follows its own takes and gives the same way. A whole stretch
            // there is read from its pattern until a later take or give on its vnodes
            // brings them in; a copy of the view reads the same.
            let mut buf = ScratchBuf::default();
            let mut view = Scratch::new(&state, &mut buf);
            let mut what_if = plain.clone();
            for a in held.iter().take(12) {
                view.give(a);
                whole[3] += view.buf.whole.iter().filter(|&&w| w).count();
                what_if.apply(a, false);
            }
            let mut taken = Vec::new();
            for _ in 0..20 {
                let a = random_allocation(&mut rng, &what_if);
                // A view answers room by stretches (base, pattern, own rows) as the plain
                // definition does vnode by vnode.
                assert_eq!(
                    view.has_room_for(&a),
                    what_if.fits(&a),
                    "round {round}: {a:?}"
                );
                room_for[usize::from(what_if.fits(&a))] += 1;
                if what_if.fits(&a) {
                    patterned_brought_in += patterned(&view, &a);
                    view.take(&a);
                    whole[2] += view.buf.whole.iter().filter(|&&w| w).count();
                    what_if.apply(&a, true);
                    taken.push(a);
                }
            }
            // A reservation the view has room for, asked again after a take (elsewhere, or
            // on its first vnode) by the vnodes the take changed alone.
            for _ in 0..20 {
                let Some(reserved) = (0..30)
                    .map(|_| random_allocation(&mut rng, &what_if))
                    .find(|r| what_if.fits(r))
                else {
                    continue;
                };
                let a = if rng.below(2) == 0 {
                    random_allocation(&mut rng, &what_if)
                } else {
                    let mut a = Allocation::new(Sharing::Shared);
                    a.push(reserved.vnode_runs()[0].first, &[1, rng.below(2), 0]);
                    a
                };
                if what_if.fits(&a) {
                    view.take(&a);
                    what_if.apply(&a, true);
                    let room = view.has_room_after_taking(&reserved, &a);
                    assert_eq!(room, what_if.fits(&reserved), "round {round}: {reserved:?}");
                    room_after[usize::from(room)] += 1;
                    taken.push(a);
                }
            }
            agree(&view, &what_if, &sets, &format!("round {round}, scratch"));
            let mut copy_buf = ScratchBuf::default();
            let mut copy = Scratch::new(&state, &mut copy_buf);
            copy.copy_from(&view);
            agree(
                &copy,
                &what_if,
                &sets,
                &format!("round {round}, scratch copy"),
            );
            for a in taken.iter().rev() {
                patterned_brought_in += patterned(&copy, a);
                copy.give(a);
                restored += copy
                    .buf
                    .whole_slots
                    .iter()
                    .filter(|s| matches!(s, WholeSlot::Base(_)))
                    .count();
                what_if.apply(a, false);
            }
            agree(
                &copy,
                &what_if,
                &sets,
                &format!("round {round}, copy given back"),
            );
            // Taken again, in slots given back: as a reservation's view kept between passes.
            for a in &taken {
                assert!(copy.has_room_for(a), "round {round}: {a:?}");
                copy.take(a);
                what_if.apply(a, true);
                let b = random_allocation(&mut other_rng, &what_if);
                assert_eq!(
                    copy.has_room_for(&b),
                    what_if.fits(&b),
                    "round {round}: {b:?}"
                );
            }
            agree(
                &copy,
                &what_if,
                &sets,
                &format!("round {round}, copy taken again"),
            );
        }
        // Both forms were exercised, often, and patterns were read and then brought in.
        assert!(
            whole[0] > 200 && whole[1] > 200 && whole[2] > 10 && whole[3] > 2,
            "{whole:?}"
        );
        assert!(patterned_brought_in > 10, "{patterned_brought_in}");
        assert!(restored > 10, "{restored}");
        assert!(room_for.iter().all(|&n| n > 10), "{room_for:?}");
        assert!(room_after.iter().all(|&n| n > 10), "{room_after:?}");
        assert!(full_seen.iter().all(|&n| n > 100), "{full_seen:?}");
    }

    #[test]
    fn a_view_brings_its_eligibility_up_to_date_by_the_words_changed() {
        // 4,096 one-ncpu vnodes: 64 words of eligibility bits.
        let mut state = ClusterState::new(one_vnode_hosts(4096, &[1, 4, 0]));
        let take = |first: u32, count: u32| {
            let mut a = Allocation::new(Sharing::Shared);
            for v in first..first + count {
                a.add(VnodeId(v), &[1, 0, 0]);
            }
            a
        };
        let eligible = |view: &Scratch<'_>| -> Vec<usize> {
            (0..4096)
                .filter(|&v| !view.eligible().contains(v))
                .collect()
        };
        let mut buf = ScratchBuf::default();
        let mut view = Scratch::new(&state, &mut buf);
        view.take(&take(10, 3));
        assert_eq!(eligible(&view), vec![10, 11, 12]);
        assert_eq!(buf.eligible_partial_copies, 0, "the first copy is whole");
        // The state changes between passes; the next view forgets its own take.
        state.allocate(&take(300, 2)).unwrap();
        let mut view = Scratch::new(&state, &mut buf);
        view.take(&take(4000, 1));
        assert_eq!(eligible(&view), vec![300, 301, 4000]);
        assert_eq!(buf.eligible_partial_copies, 1);
        // A copy of the state is another state: the view copies its bits whole.
        let mut copy = state.clone();
        copy.release(&take(300, 2));
        let mut view = Scratch::new(&copy, &mut buf);
        view.take(&take(0, 1));
        assert_eq!(eligible(&view), vec![0]);
        assert_eq!(buf.eligible_partial_copies, 1);
        // Past the log's reach, whole again; then partial once more.
        for _ in 0..=EligibilityLog::KEPT / 2 {
            copy.allocate(&take(400, 1)).unwrap();
            copy.release(&take(400, 1));
        }
        let mut view = Scratch::new(&copy, &mut buf);
        view.take(&take(1, 1));
        assert_eq!(eligible(&view), vec![1]);
        assert_eq!(buf.eligible_partial_copies, 1);
        copy.allocate(&take(4095, 1)).unwrap();
        let mut view = Scratch::new(&copy, &mut buf);
        view.give(&take(4095, 1));
        view.take(&take(2, 2));
        assert_eq!(eligible(&view), vec![2, 3]);
        assert_eq!(buf.eligible_partial_copies, 2);
    }

    /// A scratch view reads at most [`PATTERN_SLOTS`] whole stretches from patterns at once
    /// and writes the rest row by row; a stretch given back to the base vacates its slot for
    /// the next; stamps of a generation before the count started again read as the base.
    #[test]
    fn scratch_patterns_past_their_slots_and_across_the_generation_wrap() {
        let n = PATTERN_SLOTS as usize + 100;
        let state = ClusterState::new(one_vnode_hosts(n, &[1, 4, 0]));
        let one = |v: usize| {
            let mut a = Allocation::new(Sharing::Shared);
            a.push(VnodeId::from_index(v), &[1, 2, 0]);
            a
        };
        let mut buf = ScratchBuf::default();
        let mut view = Scratch::new(&state, &mut buf);
        let mut whole = 0;
        for v in 0..n {
            view.take(&one(v));
            whole += view.buf.whole.iter().filter(|&&w| w).count();
        }
        assert_eq!(whole, PATTERN_SLOTS as usize);
        assert_eq!(view.buf.patterns.len(), PATTERN_SLOTS as usize);
        assert_eq!(view.buf.touched.len(), 100);
        for v in [0, PATTERN_SLOTS as usize - 1, PATTERN_SLOTS as usize, n - 1] {
            let id = VnodeId::from_index(v);
            assert_eq!(
                (view.free(id, ConsumableIdx::NCPUS), view.n_jobs(id)),
                (0, 1),
                "vnode {v}"
            );
            assert_eq!(view.row(id)[1], 2, "vnode {v}'s memory");
            assert!(!view.eligible().contains(v), "vnode {v}");
        }
        assert_eq!(view.free_total(ConsumableIdx::NCPUS), 0);
        // Given back whole, a stretch reads the base again and frees its slot, which the
        // next whole stretch takes: a view kept between passes does not run out of slots.
        view.give(&one(0));
        assert!(matches!(view.buf.here(0), RowHere::Base));
        assert_eq!(view.buf.vacant_slots, [0]);
        for _ in 0..2 * PATTERN_SLOTS {
            view.take(&one(0));
            assert!(matches!(view.buf.here(0), RowHere::Pattern(0)));
            assert_eq!(view.free(VnodeId(0), ConsumableIdx::NCPUS), 0);
            view.give(&one(0));
            assert!(matches!(view.buf.here(0), RowHere::Base));
            assert_eq!(view.free(VnodeId(0), ConsumableIdx::NCPUS), 1);
            assert!(view.eligible().contains(0));
        }
        assert_eq!(view.buf.patterns.len(), PATTERN_SLOTS as usize);
        // A give of other amounts than the pattern's holds is not a return to the base.
        view.take(&one(0));
        let mut half = Allocation::new(Sharing::Shared);
        half.push(VnodeId(0), &[1, 1, 0]);
        view.give(&half);
        assert!(matches!(view.buf.here(0), RowHere::Own));
        assert_eq!(view.row(VnodeId(0))[1], 3, "vnode 0's memory");
        // The last generation before the count starts again, then the first after.
        view.buf.generation = u32::MAX - 2 * (PATTERN_SLOTS + 1);
        view.reset();
        view.take(&one(7));
        assert!(matches!(view.buf.here(7), RowHere::Pattern(0)));
        assert_eq!(view.free(VnodeId(7), ConsumableIdx::NCPUS), 0);
        view.reset();
        assert_eq!(view.buf.generation, PATTERN_SLOTS + 1);
        for v in [0, 7, n - 1] {
            assert!(matches!(view.buf.here(v), RowHere::Base), "vnode {v}");
            assert_eq!(view.free(VnodeId::from_index(v), ConsumableIdx::NCPUS), 1);
        }
    }

    #[test]
    fn runs_are_maximal_and_a_vnode_added_twice_splits_its_run() {
        let mut a = Allocation::new(Sharing::Shared);
        for v in [3, 4, 5, 6] {
            a.push(VnodeId(v), &[1, 0]);
        }
        a.push(VnodeId(7), &[2, 0]);
        a.push(VnodeId(1), &[2, 0]);
        assert_eq!(a.n_vnodes(), 6);
        let runs: Vec<(u32, u32, Vec<u64>)> = a
            .runs(2)
            .map(|(r, x)| (r.first.0, r.count, x.to_vec()))
            .collect();
        assert_eq!(
            runs,
            vec![(3, 4, vec![1, 0]), (7, 1, vec![2, 0]), (1, 1, vec![2, 0])]
        );
        // A second part on vnode 4 splits its run in three, adding the amounts there.
        a.add(VnodeId(4), &[1, 5]);
        let parts: Vec<(u32, Vec<u64>)> = a.parts(2).map(|(v, x)| (v.0, x.to_vec())).collect();
        assert_eq!(
            parts,
            vec![
                (3, vec![1, 0]),
                (4, vec![2, 5]),
                (5, vec![1, 0]),
                (6, vec![1, 0]),
                (7, vec![2, 0]),
                (1, vec![2, 0])
            ]
        );
        assert_eq!(a.vnode_runs().len(), 5);
        assert_eq!(a.n_vnodes(), 6);
        assert_eq!(a.total(2, ConsumableIdx::NCPUS), 9);
        // The same parts pushed one by one make the same allocation.
        let b = Allocation::from_parts(
            Sharing::Shared,
            parts.iter().map(|(v, x)| (VnodeId(*v), &x[..])),
        );
        assert_eq!(a, b);
    }
}

#[cfg(test)]
mod slack_tests {
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::resource::ResourceDefs;

    /// A limit is slack while its room covers every waiting job's draw: waiting jobs come
    /// and go, and running ones take room; a limit not set is never slack.
    #[test]
    fn a_limit_is_slack_while_its_room_covers_the_waiting_jobs() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let h = b.add_host("h");
        b.add_vnode("v", h, 1.0, &[4, 0, 0], Vec::new())
            .expect("a valid vnode");
        let mut state = ClusterState::new(b.build().expect("a valid cluster"));
        let draw = |amount| [LimitDraw { limit: 0, amount }];
        assert!(!state.limits_slack(&draw(1)), "no limits set");
        state.set_run_limits(&[3]);
        state.count_queued_draws(&draw(2), true);
        assert!(state.limits_slack(&draw(2)));
        state.count_queued_draws(&draw(2), true);
        assert!(
            !state.limits_slack(&draw(2)),
            "4 waiting against a room of 3"
        );
        state.count_queued_draws(&draw(2), false);
        assert!(state.limits_slack(&draw(2)));
        // A running job's draw takes room.
        let mut running = Allocation::new(Sharing::Shared);
        running.add(VnodeId(0), &[1, 0, 0]);
        running.limit_draws = Some(std::sync::Arc::from(draw(2).as_slice()));
        state.allocate(&running).expect("room for it");
        assert!(!state.limits_slack(&draw(2)), "room 1 against 2 waiting");
        assert!(
            !state.limits_slack(&[LimitDraw {
                limit: 7,
                amount: 1
            }]),
            "no limit 7"
        );
    }
}
