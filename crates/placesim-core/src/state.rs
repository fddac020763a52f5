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
use crate::resource::ConsumableIdx;
use std::sync::Arc;

/// The part of a vnode's row after its free amounts: the number of jobs on it.
const JOBS: usize = 0;
/// Flags: bit 0 = held exclusively by a job.
const FLAGS: usize = 1;
const FLAG_EXCLUSIVE: u64 = 1;
const EXTRA: usize = 2;

/// Resources taken by one job, vnode by vnode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    /// The vnodes, each once, in the order they were chosen.
    pub vnodes: Vec<VnodeId>,
    /// Amounts taken from each vnode, `n_consumables` per vnode, row-major.
    pub amounts: Vec<u64>,
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

impl Allocation {
    /// An empty allocation holding its vnodes as `sharing` says; parts are added with
    /// [`Allocation::add`].
    pub fn new(sharing: Sharing) -> Self {
        Allocation {
            vnodes: Vec::new(),
            amounts: Vec::new(),
            sharing,
            label: None,
            within: Within::Anywhere,
            limit_draws: None,
        }
    }

    /// Adds `amounts` (one per slot) on `v`, merging with an earlier part on the same vnode.
    pub fn add(&mut self, v: VnodeId, amounts: &[u64]) {
        let n = amounts.len();
        if let Some(pos) = self.vnodes.iter().rposition(|&x| x == v) {
            for (a, b) in self.amounts[pos * n..(pos + 1) * n].iter_mut().zip(amounts) {
                *a += b;
            }
        } else {
            self.vnodes.push(v);
            self.amounts.extend_from_slice(amounts);
        }
    }

    /// The parts: each vnode with the amounts taken from it.
    #[inline]
    pub fn parts(&self, n_consumables: usize) -> impl Iterator<Item = (VnodeId, &[u64])> {
        self.vnodes
            .iter()
            .copied()
            .zip(self.amounts.chunks_exact(n_consumables.max(1)))
    }

    /// The total of one consumable over all vnodes.
    pub fn total(&self, n_consumables: usize, c: ConsumableIdx) -> u64 {
        self.parts(n_consumables).map(|(_, a)| a[c.index()]).sum()
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
    #[error("allocation has {got} amounts for {vnodes} vnodes, expected {per} per vnode")]
    Shape {
        /// Amounts given.
        got: usize,
        /// Vnodes given.
        vnodes: usize,
        /// Consumables per vnode.
        per: usize,
    },
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
    /// A tracked set's tallies: the free amount of each consumable on its vnodes that can take
    /// a job, then how many such vnodes it has (see [`ClusterState::track_sets`]).
    fn tracked_set_free(&self, set: usize) -> &[u64];
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
            .parts(n_cons)
            .all(|(v, amounts)| self.fits_chunk(v, amounts, alloc.sharing))
            && alloc
                .limit_draws
                .as_deref()
                .is_none_or(|draws| self.short_limit(draws).is_none())
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
    /// Per vnode, its signature: vnodes in exactly the same sets share one.
    signature: Vec<u32>,
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
        let mut known: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
        let mut signature = Vec::with_capacity(n_vnodes);
        let mut offsets = vec![0];
        let mut ids = Vec::new();
        for list in per_vnode {
            let next = known.len() as u32;
            let sig = *known.entry(list).or_insert_with_key(|list| {
                ids.extend_from_slice(list);
                offsets.push(ids.len() as u32);
                next
            });
            signature.push(sig);
        }
        SetIndex {
            signature,
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
        self.signature.get(v.index()).copied().unwrap_or(u32::MAX)
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
    /// Per vnode, the validation round that last saw it: finds duplicates without allocating.
    seen: Vec<u32>,
    round: u32,
    exclusive_vnodes: u64,
    sets: SetIndex,
    /// Per set: the free amount of each consumable, then the count of free vnodes.
    tracked_set_free: Vec<u64>,
    /// Vnodes out of service. A down vnode holds an exclusive allocation of its whole
    /// capacity, so placement, free totals and set tallies all see it as taken.
    down: Bitset,
    /// Bumped at every vnode going down or up: what-if states built earlier are stale.
    outage_epoch: u64,
    /// Tallies kept for the kernel's reports of settled instants, when it watches a partition
    /// of the vnodes.
    watch: Option<Box<Watch>>,
    /// Per run limit: its value (shared: copies of the state do not copy it).
    limit_values: Arc<[u64]>,
    /// Per run limit: the room left under it.
    limit_room: Vec<u64>,
}

/// What the kernel reports after every instant, kept by the same loop that applies
/// allocations (so it costs a few instructions per vnode already in cache): per set of a
/// partition, the ncpus that a new job could use (on vnodes up and not held exclusively), and
/// the ncpus of idle vnodes (no job, up). Only the real state keeps it, not scratch views.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    /// Per vnode, its set (shared: cloning a state does not copy it).
    set_of: std::sync::Arc<[u32]>,
    /// Per set, the free ncpus new jobs could use.
    pub set_free: Vec<u64>,
    /// ncpus of vnodes with no job that are up.
    pub idle_ncpus: u64,
    /// Bumped whenever a set's free ncpus change.
    pub version: u64,
}

fn row_eligible(row: &[u64], n_cons: usize, cap_ncpus: u64) -> bool {
    let exclusive = row[n_cons + FLAGS] & FLAG_EXCLUSIVE != 0;
    let job_busy = cap_ncpus > 0 && row[ConsumableIdx::NCPUS.index()] == 0;
    !exclusive && !job_busy
}

impl ClusterState {
    /// An idle cluster: everything free.
    pub fn new(cluster: Cluster) -> Self {
        let n_cons = cluster.resources().n_consumables();
        let width = n_cons + EXTRA;
        let mut rows = Vec::with_capacity(cluster.n_vnodes() * width);
        let mut eligible = Bitset::new(cluster.n_vnodes());
        let mut free_total = vec![0u64; n_cons];
        for v in 0..cluster.n_vnodes() {
            let cap = cluster.capacity(VnodeId::from_index(v));
            rows.extend_from_slice(cap);
            rows.extend_from_slice(&[0; EXTRA]);
            for (t, a) in free_total.iter_mut().zip(cap) {
                *t += a;
            }
            eligible.set(v, row_eligible(&rows[v * width..], n_cons, cap[0]));
        }
        let seen = vec![0; cluster.n_vnodes()];
        let n_vnodes = cluster.n_vnodes();
        ClusterState {
            cluster,
            width,
            rows,
            eligible,
            free_total,
            seen,
            round: 0,
            exclusive_vnodes: 0,
            sets: SetIndex::default(),
            tracked_set_free: Vec::new(),
            down: Bitset::new(n_vnodes),
            outage_epoch: 0,
            watch: None,
            limit_values: Arc::from(Vec::new()),
            limit_room: Vec::new(),
        }
    }

    /// Sets the run limits jobs count against ([`LimitDraw`]), each with its value, all with
    /// full room. Set before any job runs; copies of the state made later keep them.
    pub fn set_run_limits(&mut self, values: &[u64]) {
        self.limit_values = Arc::from(values);
        self.limit_room = values.to_vec();
    }

    /// The run limits' values.
    pub fn run_limits(&self) -> &[u64] {
        &self.limit_values
    }

    /// Keeps a [`Watch`] of the partition `set_of` (a set per vnode, `n_sets` sets) from now
    /// on, replacing any before.
    pub fn watch_sets(&mut self, set_of: std::sync::Arc<[u32]>, n_sets: usize) {
        let mut watch = Watch {
            set_of,
            set_free: vec![0; n_sets],
            idle_ncpus: 0,
            version: 0,
        };
        for v in 0..self.cluster.n_vnodes() {
            let vnode = VnodeId::from_index(v);
            let free = self.usable_ncpus(vnode);
            if let Some(&set) = watch.set_of.get(v) {
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
        let mut idle = ClusterState::new(self.cluster.clone());
        idle.sets = self.sets.clone();
        idle.limit_values = self.limit_values.clone();
        idle.limit_room = self.limit_values.to_vec();
        idle.retally();
        idle
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
        self.outage_epoch += 1;
        Ok(())
    }

    /// Puts `v`, down before, back in service.
    pub fn set_up(&mut self, v: VnodeId) {
        if self.down.contains(v.index()) {
            self.release(&down_allocation(&self.cluster, v));
            self.down.set(v.index(), false);
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

    /// Counts vnodes going down or up: a state with the same count has the same outages.
    pub fn outage_epoch(&self) -> u64 {
        self.outage_epoch
    }

    /// Recomputes every set tally from the rows.
    fn retally(&mut self) {
        let n_cons = self.width - EXTRA;
        self.tracked_set_free = vec![0; self.sets.len() * (n_cons + 1)];
        for v in 0..self.cluster.n_vnodes() {
            let v = VnodeId::from_index(v);
            let row = &self.rows[v.index() * self.width..(v.index() + 1) * self.width];
            if self.eligible.contains(v.index()) {
                tally(
                    &mut self.tracked_set_free,
                    &self.sets,
                    v,
                    row,
                    n_cons,
                    Tally::Add,
                );
            }
        }
    }

    /// The sets being tracked.
    pub fn tracked_sets(&self) -> &SetIndex {
        &self.sets
    }

    #[inline]
    fn row(&self, v: VnodeId) -> &[u64] {
        &self.rows[v.index() * self.width..(v.index() + 1) * self.width]
    }

    /// How many consumable slots each amount vector has.
    pub fn cluster_consumables(&self) -> usize {
        self.width - EXTRA
    }

    /// Checks an allocation against the state without applying it.
    pub fn validate(&mut self, alloc: &Allocation) -> Result<(), AllocationError> {
        let n_cons = self.width - EXTRA;
        if alloc.amounts.len() != alloc.vnodes.len() * n_cons {
            return Err(AllocationError::Shape {
                got: alloc.amounts.len(),
                vnodes: alloc.vnodes.len(),
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
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.seen.fill(0);
            self.round = 1;
        }
        for (v, amounts) in alloc.parts(n_cons) {
            if v.index() >= self.cluster.n_vnodes() {
                return Err(AllocationError::UnknownVnode(v));
            }
            if self.seen[v.index()] == self.round {
                return Err(AllocationError::DuplicateVnode(v));
            }
            self.seen[v.index()] = self.round;
            if !self.eligible.contains(v.index()) {
                return Err(AllocationError::NotEligible(v));
            }
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
        let books = Books {
            rows: &mut self.rows,
            width: self.width,
            eligible: &mut self.eligible,
            free_total: &mut self.free_total,
            exclusive_vnodes: &mut self.exclusive_vnodes,
            sets: &self.sets,
            tracked_set_free: &mut self.tracked_set_free,
            watch: self.watch.as_deref_mut(),
            limit_room: &mut self.limit_room,
        };
        apply(books, &self.cluster, alloc, dir);
    }
}

impl StateView for ClusterState {
    #[inline]
    fn cluster(&self) -> &Cluster {
        &self.cluster
    }
    #[inline]
    fn free(&self, v: VnodeId, c: ConsumableIdx) -> u64 {
        self.rows[v.index() * self.width + c.index()]
    }
    #[inline]
    fn n_jobs(&self, v: VnodeId) -> u64 {
        self.rows[v.index() * self.width + self.width - EXTRA + JOBS]
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
    fn tracked_set_free(&self, set: usize) -> &[u64] {
        let w = self.width - EXTRA + 1;
        &self.tracked_set_free[set * w..(set + 1) * w]
    }
    #[inline]
    fn limit_room(&self, limit: u32) -> u64 {
        self.limit_room.get(limit as usize).copied().unwrap_or(0)
    }
}

/// What an outage holds on `v`: all of it, exclusively.
pub(crate) fn down_allocation(cluster: &Cluster, v: VnodeId) -> Allocation {
    let mut a = Allocation::new(Sharing::Excl);
    a.add(v, cluster.capacity(v));
    a
}

/// How many vnodes an allocation holds exclusively.
fn exclusive_count(alloc: &Allocation) -> u64 {
    if alloc.sharing.is_exclusive() {
        alloc.vnodes.len() as u64
    } else {
        0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Take,
    Give,
}

/// Takes or gives back one part of an allocation on one vnode's row, and says whether the
/// vnode is eligible afterwards. Shared by the real state and scratch views so both account
/// identically.
fn apply_part(
    row: &mut [u64],
    amounts: &[u64],
    sharing: Sharing,
    dir: Direction,
    free_total: &mut [u64],
    cap_ncpus: u64,
) -> bool {
    let n_cons = free_total.len();
    let (free, extra) = row.split_at_mut(n_cons);
    match dir {
        Direction::Take => {
            for ((f, t), &a) in free.iter_mut().zip(free_total.iter_mut()).zip(amounts) {
                *f -= a;
                *t -= a;
            }
            extra[JOBS] += 1;
            if sharing.is_exclusive() {
                extra[FLAGS] |= FLAG_EXCLUSIVE;
            }
        }
        Direction::Give => {
            for ((f, t), &a) in free.iter_mut().zip(free_total.iter_mut()).zip(amounts) {
                *f += a;
                *t += a;
            }
            extra[JOBS] -= 1;
            if sharing.is_exclusive() {
                extra[FLAGS] &= !FLAG_EXCLUSIVE;
            }
        }
    }
    row_eligible(row, n_cons, cap_ncpus)
}

/// Which way a vnode moves the tallies of its sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tally {
    /// It became free: its amounts and itself join the tallies.
    Add,
    /// It stopped being free: they leave them.
    Remove,
}

/// Adds (or removes) a free vnode's amounts and itself to the tallies of its sets.
fn tally(
    tracked_set_free: &mut [u64],
    sets: &SetIndex,
    v: VnodeId,
    row: &[u64],
    n_cons: usize,
    direction: Tally,
) {
    let w = n_cons + 1;
    for &g in sets.of(v) {
        let t = &mut tracked_set_free[g as usize * w..(g as usize + 1) * w];
        for (slot, &free) in t.iter_mut().zip(&row[..n_cons]) {
            match direction {
                Tally::Add => *slot += free,
                Tally::Remove => *slot -= free,
            }
        }
        match direction {
            Tally::Add => t[n_cons] += 1,
            Tally::Remove => t[n_cons] -= 1,
        }
    }
}

/// Everything an allocation changes, in the real state or a scratch view: borrowed together so
/// that one routine keeps them in step for both.
struct Books<'a> {
    rows: &'a mut [u64],
    width: usize,
    eligible: &'a mut Bitset,
    free_total: &'a mut [u64],
    exclusive_vnodes: &'a mut u64,
    sets: &'a SetIndex,
    tracked_set_free: &'a mut [u64],
    watch: Option<&'a mut Watch>,
    limit_room: &'a mut [u64],
}

/// How many set-tally slots (consumables + the vnode count) the batched update handles.
const DELTA_SLOTS: usize = 9;

/// Takes or gives back a whole allocation, keeping the eligibility bits, the free totals, the
/// exclusive count and the set tallies in step. Shared by the real state and scratch views,
/// so that both account identically.
///
/// Consecutive vnodes of an allocation usually belong to the same sets (one set), so their
/// tally changes are summed in a local delta and written to the sets once per run of
/// vnodes with the same sets, instead of once per vnode. The delta uses wrapping
/// arithmetic: it may go below zero in between, and the tallies it lands on never do.
fn apply(books: Books<'_>, cluster: &Cluster, alloc: &Allocation, dir: Direction) {
    let Books {
        rows,
        width,
        eligible,
        free_total,
        exclusive_vnodes,
        sets,
        tracked_set_free,
        mut watch,
        limit_room,
    } = books;
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
    let n_cons = free_total.len();
    let w = n_cons + 1;
    let tracking = !sets.is_empty();
    let batched = tracking && w <= DELTA_SLOTS;
    let mut delta = [0u64; DELTA_SLOTS];
    let mut pending = u32::MAX;
    for (v, amounts) in alloc.parts(n_cons) {
        let row = &mut rows[v.index() * width..(v.index() + 1) * width];
        let was = eligible.contains(v.index());
        if batched {
            let sig = sets.signature(v);
            if sig != pending {
                flush(tracked_set_free, sets.sets_of(pending), &mut delta[..w]);
                pending = sig;
            }
            if was {
                for (d, &free) in delta.iter_mut().zip(&row[..n_cons]) {
                    *d = d.wrapping_sub(free);
                }
                delta[n_cons] = delta[n_cons].wrapping_sub(1);
            }
        } else if tracking && was {
            tally(tracked_set_free, sets, v, row, n_cons, Tally::Remove);
        }
        let cap_ncpus = cluster.ncpus_capacity(v);
        let before = if was {
            row[ConsumableIdx::NCPUS.index()]
        } else {
            0
        };
        let ok = apply_part(row, amounts, alloc.sharing, dir, free_total, cap_ncpus);
        eligible.set(v.index(), ok);
        if let Some(w) = watch.as_deref_mut() {
            let after = if ok {
                row[ConsumableIdx::NCPUS.index()]
            } else {
                0
            };
            if after != before {
                let set = &mut w.set_free[w.set_of[v.index()] as usize];
                *set = *set + after - before;
                w.version += 1;
                if cap_ncpus > 0 && after == cap_ncpus {
                    w.idle_ncpus += cap_ncpus;
                } else if cap_ncpus > 0 && before == cap_ncpus {
                    w.idle_ncpus -= cap_ncpus;
                }
            }
        }
        if batched {
            if ok {
                for (d, &free) in delta.iter_mut().zip(&row[..n_cons]) {
                    *d = d.wrapping_add(free);
                }
                delta[n_cons] = delta[n_cons].wrapping_add(1);
            }
        } else if tracking && ok {
            tally(tracked_set_free, sets, v, row, n_cons, Tally::Add);
        }
    }
    if batched {
        flush(tracked_set_free, sets.sets_of(pending), &mut delta[..w]);
    }
}

/// Adds a (wrapping) delta to the tallies of `sets`, and clears it.
fn flush(tracked_set_free: &mut [u64], sets: &[u32], delta: &mut [u64]) {
    let w = delta.len();
    for &g in sets {
        let t = &mut tracked_set_free[g as usize * w..(g as usize + 1) * w];
        for (slot, &d) in t.iter_mut().zip(delta.iter()) {
            *slot = slot.wrapping_add(d);
        }
    }
    delta.fill(0);
}

/// The buffers behind a [`Scratch`], kept by a policy between passes so that a scratch view
/// costs no allocation.
#[derive(Debug, Clone, Default)]
pub struct ScratchBuf {
    /// Vnodes whose rows this generation has copied, so copies and resets cost O(changes).
    touched: Vec<u32>,
    stamp: Vec<u32>,
    generation: u32,
    rows: Vec<u64>,
    eligible: Bitset,
    free_total: Vec<u64>,
    exclusive_vnodes: u64,
    tracked_set_free: Vec<u64>,
    limit_room: Vec<u64>,
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
        self.buf.generation = self.buf.generation.wrapping_add(1);
        if self.buf.generation == 0 {
            self.buf.stamp.fill(0);
            self.buf.generation = 1;
        }
        self.buf.touched.clear();
        self.buf.eligible.copy_from(&self.base.eligible);
        self.buf.free_total.clone_from(&self.base.free_total);
        self.buf.exclusive_vnodes = self.base.exclusive_vnodes;
        self.buf
            .tracked_set_free
            .clone_from(&self.base.tracked_set_free);
        self.buf.limit_room.clone_from(&self.base.limit_room);
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

    /// Makes this view equal to another scratch view over the same state.
    pub fn copy_from(&mut self, other: &Scratch<'_>) {
        debug_assert!(
            std::ptr::eq(self.base, other.base),
            "copy_from needs views over the same state"
        );
        self.reset();
        let w = self.base.width;
        for &v in &other.buf.touched {
            let v = v as usize;
            self.buf.rows[v * w..(v + 1) * w].copy_from_slice(&other.buf.rows[v * w..(v + 1) * w]);
            self.buf.stamp[v] = self.buf.generation;
        }
        self.buf.touched.clone_from(&other.buf.touched);
        self.buf.eligible.copy_from(&other.buf.eligible);
        self.buf.free_total.clone_from(&other.buf.free_total);
        self.buf.exclusive_vnodes = other.buf.exclusive_vnodes;
        self.buf
            .tracked_set_free
            .clone_from(&other.buf.tracked_set_free);
        self.buf.limit_room.clone_from(&other.buf.limit_room);
    }

    #[inline]
    fn row(&self, v: VnodeId) -> &[u64] {
        let w = self.base.width;
        if self.buf.stamp[v.index()] == self.buf.generation {
            &self.buf.rows[v.index() * w..(v.index() + 1) * w]
        } else {
            self.base.row(v)
        }
    }

    fn row_mut(&mut self, v: VnodeId) -> &mut [u64] {
        let w = self.base.width;
        let range = v.index() * w..(v.index() + 1) * w;
        if self.buf.stamp[v.index()] != self.buf.generation {
            self.buf.rows[range.clone()].copy_from_slice(self.base.row(v));
            self.buf.stamp[v.index()] = self.buf.generation;
            self.buf.touched.push(v.0);
        }
        &mut self.buf.rows[range]
    }

    fn apply(&mut self, alloc: &Allocation, dir: Direction) {
        // Copy on write: bring every row the allocation touches into this view first.
        for &v in &alloc.vnodes {
            self.row_mut(v);
        }
        let buf = &mut *self.buf;
        let books = Books {
            rows: &mut buf.rows,
            width: self.base.width,
            eligible: &mut buf.eligible,
            free_total: &mut buf.free_total,
            exclusive_vnodes: &mut buf.exclusive_vnodes,
            sets: &self.base.sets,
            tracked_set_free: &mut buf.tracked_set_free,
            watch: None,
            limit_room: &mut buf.limit_room,
        };
        apply(books, &self.base.cluster, alloc, dir);
    }

    /// Takes `alloc` in this view (a job this pass is about to start).
    ///
    /// # Panics
    /// In debug builds, if the view has less free than `alloc` takes: a placement search
    /// only proposes what fits.
    pub fn take(&mut self, alloc: &Allocation) {
        self.apply(alloc, Direction::Take);
    }

    /// Gives `alloc` back in this view (a running job that will have ended).
    pub fn give(&mut self, alloc: &Allocation) {
        self.apply(alloc, Direction::Give);
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
        &self.buf.eligible
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
    fn tracked_set_free(&self, set: usize) -> &[u64] {
        let w = self.base.width - EXTRA + 1;
        &self.buf.tracked_set_free[set * w..(set + 1) * w]
    }
    #[inline]
    fn limit_room(&self, limit: u32) -> u64 {
        self.buf
            .limit_room
            .get(limit as usize)
            .copied()
            .unwrap_or(0)
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

    #[test]
    fn group_tallies_follow_every_take_and_give() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        for i in 0..12 {
            let h = b.add_host(format!("h{i}"));
            b.add_vnode(format!("v{i}"), h, 1.0, &[4, 8, 1], Vec::new())
                .unwrap();
        }
        let cluster = b.build().unwrap();
        // Overlapping sets, as string_array sets make them.
        let sets: Vec<Vec<VnodeId>> = vec![
            (0..6).map(VnodeId).collect(),
            (4..12).map(VnodeId).collect(),
            vec![VnodeId(1), VnodeId(5), VnodeId(9)],
        ];
        let mut state = ClusterState::new(cluster);
        state.track_sets(&sets);
        // The set watch over a partition: thirds of the vnodes.
        let thirds: std::sync::Arc<[u32]> = (0..12u32).map(|v| v / 4).collect();
        state.watch_sets(thirds.clone(), 3);
        let watched = |state: &ClusterState| {
            let mut fresh = state.clone();
            fresh.watch_sets(thirds.clone(), 3);
            let (w, f) = (state.watch().unwrap(), fresh.watch().unwrap());
            (
                w.set_free.clone(),
                w.idle_ncpus,
                f.set_free.clone(),
                f.idle_ncpus,
            )
        };
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
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
