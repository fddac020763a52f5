//! The calendar walk: the earliest estimated end of running jobs at which a job can be placed,
//! and where. EASY's reservation (step 2) and the relaxation decisions of NODESETPLUS DELAY and
//! SPANEVENLY both ask it.

use super::{calendar_request, idle_made};
use placesim_core::{
    Allocation, ClusterState, ConsumableIdx, Decision, JobId, PlacementPolicy, Request,
    SchedContext, Scratch, ScratchBuf, SimTime, StateView,
};

/// Which calendar shortcuts are on, and how often each was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcuts {
    /// Whether shadow states may be built from the idle cluster, and placements reused.
    pub enabled: bool,
    /// Shadow states built from the idle cluster.
    pub idle_builds: u64,
    /// Placements reused from the previous walk.
    pub reuses: u64,
    /// Lists of ends brought up to date from the kernel's log of the running list, reading
    /// only the positions that changed ([`placesim_core::RunningLog`]).
    pub ends_from_log: u64,
    /// Shadow views a walk left unbuilt and a backfill read later.
    pub late_views: u64,
    /// Of those, the views built after the pass had started other jobs since the walk.
    pub late_views_after_starts: u64,
    /// Shadow views brought to the state they must be from the one the last pass left, by
    /// giving back and taking only the allocations that differ.
    pub kept_syncs: u64,
}

/// A running job (or one this pass starts) in order of estimated end: `(end, job, index,
/// ncpus held)`, where `index` counts `ctx.running` first, then the pass's decisions.
pub(crate) type End = (SimTime, JobId, usize, u64);

/// The last walk's placement, and the state it was placed in: the jobs still holding
/// resources then, as `(estimated end, job)`. That state is the idle cluster less those jobs'
/// allocations, so the same job (on the same footing) in the same state gets the same vnodes
/// from a placement whose answer depends only on the state
/// ([`PlacementPolicy::depends_only_on_state`]): reused instead of placed again. A big head
/// waits through many passes, and placing it costs O(its vnodes) each time.
#[derive(Debug, Default)]
struct Memo {
    /// The job, whether relaxed, and the outages in force ([`ClusterState::outage_epoch`]).
    key: Option<(JobId, bool, u64)>,
    still_held: Vec<(SimTime, JobId)>,
    allocation: Allocation,
}

/// One allocation a shadow view that reads through to the idle cluster holds: a running job's,
/// or a start of the pass that runs past the shadow time.
#[derive(Debug)]
struct Holding {
    /// Its entry's estimated end and job, the ends list's key.
    end: SimTime,
    job: JobId,
    /// When the job started: with the job, it names the allocation (a job started again after
    /// an outage holds another).
    start: SimTime,
    /// Whether the job was a start of a pass when this was taken, not yet a running job: a
    /// pass taken back and run again at the same instant may start it elsewhere.
    from_pass: bool,
    allocation: Allocation,
}

/// The shadow view as the last pass left it, kept between passes. Built from either side, a
/// view costs the vnodes of the jobs given back or taken; but from one pass to the next the
/// shadow time most often stays (the same head waits), and the jobs held past it are the same
/// but for a few that ended or started. So a view built from the idle cluster is kept, with
/// the list of what it holds, and the next pass gives back and takes only the difference
/// (`psets-bench.toml`: the nearer side costs about 4,000 vnodes a build, the difference
/// about 1,300). A view built from the state now reads through to that state, which the next
/// pass has changed: it is not kept.
#[derive(Debug, Default)]
struct KeptShadow {
    /// Whether the shadow view's buffer holds the idle cluster (as the calendar holds it)
    /// less exactly `held`.
    valid: bool,
    /// Sorted by end and job, as the ends list.
    held: Vec<Holding>,
    /// The list a sync makes, kept for its buffer.
    next: Vec<Holding>,
    /// What the next sync does ([`KeptShadow::plan`]).
    steps: Vec<Step>,
    /// Allocations no longer held, kept for their buffers.
    spare: Vec<Allocation>,
}

impl KeptShadow {
    /// A holding of `allocation`, in a spare allocation's buffers.
    fn holding(
        &mut self,
        (end, job): (SimTime, JobId),
        start: SimTime,
        from_pass: bool,
        allocation: &Allocation,
    ) -> Holding {
        let mut copy = self.spare.pop().unwrap_or_default();
        allocation.copy_into(&mut copy);
        Holding {
            end,
            job,
            start,
            from_pass,
            allocation: copy,
        }
    }

    /// Takes the allocation of `entry` of the ends list in `view`, and its holding.
    fn take_entry(
        &mut self,
        entry: &End,
        ctx: &SchedContext<'_>,
        decisions: &[Decision],
        view: &mut Scratch<'_>,
    ) -> Holding {
        let index = entry.2;
        let allocation = allocation_at(ctx, decisions, index);
        view.take(allocation);
        self.holding(
            (entry.0, entry.1),
            start_at(ctx, index),
            is_start_of_pass(ctx, index),
            allocation,
        )
    }

    /// The key of a start of this pass, `job`, and its place in `held` by that key.
    fn place_of_start(&self, ctx: &SchedContext<'_>, job: JobId) -> ((SimTime, JobId), usize) {
        let key = (ctx.now + ctx.workload.job(job).estimate, job);
        (key, self.held.partition_point(|h| (h.end, h.job) < key))
    }

    /// Forgets the first `n` holdings, keeping their allocations' buffers.
    fn forget_first(&mut self, n: usize) {
        self.spare
            .extend(self.held.drain(..n).map(|h| h.allocation));
    }

    /// What a sync to `held` (entries of the ends list) would do, kept in `self.steps`, and
    /// what it would cost: the vnodes of the holdings not in `held`, and of its entries not
    /// held. Both lists are by end and job.
    fn plan(&mut self, held: &[End], ctx: &SchedContext<'_>, decisions: &[Decision]) -> usize {
        let mut cost = 0;
        self.steps.clear();
        let (holdings, steps) = (&self.held, &mut self.steps);
        merge_holdings(holdings, held, ctx, decisions, |step| {
            cost += match step {
                Step::Both(..) => 0,
                Step::GiveBack(k) => holdings[k].allocation.n_vnodes(),
                Step::Take(e) => allocation_at(ctx, decisions, held[e].2).n_vnodes(),
            };
            steps.push(step);
        });
        cost
    }

    /// Makes the view, which holds the idle cluster less `self.held`, hold it less exactly
    /// `held`, as [`Self::plan`] for the same `held` found: gives back what it holds and should
    /// not, then (a vnode may pass from a job that left to one that came) takes what it should
    /// and does not.
    fn sync(
        &mut self,
        held: &[End],
        ctx: &SchedContext<'_>,
        decisions: &[Decision],
        shadow_view: &mut Scratch<'_>,
    ) {
        let steps = std::mem::take(&mut self.steps);
        let mut old = std::mem::take(&mut self.held);
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        for step in &steps {
            if let Step::GiveBack(k) = *step {
                let allocation = std::mem::take(&mut old[k].allocation);
                shadow_view.give(&allocation);
                self.spare.push(allocation);
            }
        }
        for step in &steps {
            match *step {
                Step::Both(k, e) => {
                    let h = &mut old[k];
                    let allocation = std::mem::take(&mut h.allocation);
                    next.push(Holding {
                        allocation,
                        from_pass: is_start_of_pass(ctx, held[e].2),
                        ..*h
                    });
                }
                Step::Take(e) => {
                    let holding = self.take_entry(&held[e], ctx, decisions, shadow_view);
                    next.push(holding);
                }
                Step::GiveBack(_) => {}
            }
        }
        old.clear();
        self.held = next;
        self.next = old;
        self.steps = steps;
    }
}

/// A step of the merge of a kept view's holdings with the entries it must hold.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Holding `.0` is entry `.1`'s, still to be held.
    Both(usize, usize),
    /// Holding `.0` is not to be held any more: given back.
    GiveBack(usize),
    /// Entry `.0` is not held yet: taken.
    Take(usize),
}

/// Walks `holdings` and `entries`, both by end and job, in that order, telling `step` of each.
/// A holding is an entry's when it is the same job from the same start and, if it was taken
/// for a start of a pass, on the same vnodes: a pass taken back and run again at the same
/// instant (PBS fairshare's order changed by a start) may start the job elsewhere.
fn merge_holdings(
    holdings: &[Holding],
    entries: &[End],
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    mut step: impl FnMut(Step),
) {
    let same = |h: &Holding, e: &End| {
        h.start == start_at(ctx, e.2)
            && (!h.from_pass || (h.allocation).same_holding(allocation_at(ctx, decisions, e.2)))
    };
    let (mut k, mut e) = (0, 0);
    while k < holdings.len() || e < entries.len() {
        let order = match (holdings.get(k), entries.get(e)) {
            (Some(h), Some(x)) => (h.end, h.job).cmp(&(x.0, x.1)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, _) => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Equal if same(&holdings[k], &entries[e]) => {
                step(Step::Both(k, e));
                k += 1;
                e += 1;
            }
            std::cmp::Ordering::Equal => {
                step(Step::GiveBack(k));
                step(Step::Take(e));
                k += 1;
                e += 1;
            }
            std::cmp::Ordering::Less => {
                step(Step::GiveBack(k));
                k += 1;
            }
            std::cmp::Ordering::Greater => {
                step(Step::Take(e));
                e += 1;
            }
        }
    }
}

/// How many times the vnodes given back on the side of the state now a build from the idle
/// cluster may cost and still be chosen: a view built from the idle cluster is kept, and the
/// passes after it bring it up to date by the difference alone, where one built from the state
/// now is built again at the next pass. Instructions of the whole process against 1×:
/// `psets-bench.toml` 7.207 G → 7.119 G at 4× (a probe build: 2× −55 M, 3× −92 M, 5× −95 M,
/// 10× −89 M), `nodesets-bench.toml` −1.3 %.
const IDLE_BUILD_WORTH: usize = 4;

/// [`idle_of`] for a calendar: a shadow view kept over the idle cluster is forgotten when that
/// is made again (the vnodes down changed).
fn idle_keeping<'a>(
    slot: &'a mut Option<ClusterState>,
    kept: &mut KeptShadow,
    state: &ClusterState,
) -> &'a ClusterState {
    let (idle, made) = idle_made(slot, state, true);
    if made {
        kept.valid = false;
    }
    idle
}

/// Whether entry `index` of the ends list is a start of this pass (the ends list numbers the
/// running jobs first, then the pass's starts), not a running job.
fn is_start_of_pass(ctx: &SchedContext<'_>, index: usize) -> bool {
    index >= ctx.running.len()
}

/// The start of the job at entry `index` of the ends list: a running job's, or now for a
/// start of this pass.
fn start_at(ctx: &SchedContext<'_>, index: usize) -> SimTime {
    ctx.running.get(index).map_or(ctx.now, |run| run.start)
}

/// What the walk keeps between passes.
#[derive(Debug)]
pub(crate) struct Calendar {
    ends: Vec<End>,
    /// What the next fill of `ends` starts from.
    kept: EndsKept,
    /// The cluster with nothing running (vnodes down now still down), to build shadow states
    /// from when that is nearer.
    idle: Option<ClusterState>,
    memo: Memo,
    pub(crate) shortcuts: Shortcuts,
    shadow_buf: ScratchBuf,
    /// The ends list as a walk that left its shadow view unbuilt saw it, copied when the list
    /// is filled again before the view is built (kept to reuse its buffer).
    pending_ends: Vec<End>,
    /// What the shadow view holds, when it is kept between passes.
    kept_shadow: KeptShadow,
}

/// A calendar opened for one pass: its lists, and the idle state shadow views may be built on.
pub(crate) struct Walk<'a> {
    pub(crate) ends: &'a mut Vec<End>,
    kept: &'a mut EndsKept,
    idle: &'a ClusterState,
    memo: &'a mut Memo,
    shortcuts: &'a mut Shortcuts,
    /// What the shadow view must hold if the last walk left it unbuilt.
    pending: Option<Pending>,
    pending_ends: &'a mut Vec<End>,
    kept_shadow: &'a mut KeptShadow,
}

/// A shadow state a walk found but did not build: a walk that reuses the last pass's answer
/// needs no view to find it, and most passes never read one (a backfill that ends by the
/// shadow time, or that the free ncpus then already refuse, does not). Building it costs
/// every vnode of the jobs given back or taken, so it is built when a pass first reads it
/// ([`Walk::shadow_view`]), or never.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// The view is the state once the first `released` entries of the ends list as the walk
    /// saw it are given back.
    released: usize,
    /// Whether that list was filled again since, and is read from `Walk::pending_ends`.
    copied: bool,
    /// The ncpus free then.
    free_ncpus: u64,
    /// How many decisions the pass had made at the walk. Every later one ends by the shadow
    /// time (one that did not would have read the view first), so the view holds none of them.
    decisions: usize,
}

impl Default for Calendar {
    fn default() -> Calendar {
        Calendar::new(true)
    }
}

impl Calendar {
    /// A calendar with the shortcuts on or off.
    pub(crate) fn new(shortcuts: bool) -> Calendar {
        Calendar {
            ends: Vec::new(),
            kept: EndsKept::default(),
            idle: None,
            memo: Memo::default(),
            shortcuts: Shortcuts {
                enabled: shortcuts,
                idle_builds: 0,
                reuses: 0,
                ends_from_log: 0,
                late_views: 0,
                late_views_after_starts: 0,
                kept_syncs: 0,
            },
            shadow_buf: ScratchBuf::default(),
            pending_ends: Vec::new(),
            kept_shadow: KeptShadow::default(),
        }
    }

    /// Where the walk over `state` ends: nothing running, the vnodes down now still down.
    pub(crate) fn idle(&mut self, state: &ClusterState) -> &ClusterState {
        idle_keeping(&mut self.idle, &mut self.kept_shadow, state)
    }

    /// Opens the calendar over `state`: the walk, and a shadow view for it to fill (the one
    /// the last pass left, when it is kept, which no pass reads before a walk has brought it
    /// up to date).
    pub(crate) fn open<'a>(&'a mut self, state: &'a ClusterState) -> (Walk<'a>, Scratch<'a>) {
        let idle = idle_keeping(&mut self.idle, &mut self.kept_shadow, state);
        let shadow = if self.kept_shadow.valid {
            Scratch::resume(idle, &mut self.shadow_buf)
        } else {
            Scratch::new(state, &mut self.shadow_buf)
        };
        let walk = Walk {
            ends: &mut self.ends,
            kept: &mut self.kept,
            idle,
            memo: &mut self.memo,
            shortcuts: &mut self.shortcuts,
            pending: None,
            pending_ends: &mut self.pending_ends,
            kept_shadow: &mut self.kept_shadow,
        };
        (walk, shadow)
    }

    /// The vnodes the last successful walk found.
    pub(crate) fn found(&self) -> &Allocation {
        &self.memo.allocation
    }

    /// The running jobs and this pass's starts by estimated end, as a walk lists them
    /// ([`Walk::fill_ends`]), without opening a walk (no idle state is made).
    pub(crate) fn ends_now(&mut self, ctx: &SchedContext<'_>, decisions: &[Decision]) -> &[End] {
        fill_ends(
            &mut self.ends,
            &mut self.kept,
            &mut self.shortcuts,
            ctx,
            decisions,
        );
        &self.ends
    }
}

/// How many entries of `ends` must be released (a whole distinct end time at a time) before
/// the ncpus free, from `free_now`, reach `need`; and the ncpus free then.
pub(crate) fn first_time_with(ends: &[End], need: u64, free_now: u64) -> Option<(usize, u64)> {
    first_time_where(ends, free_now, &mut (), |_, _| {}, |_, avail| avail >= need)
}

/// How many entries of `ends` must be released (a whole distinct end time at a time) before
/// `fits(state, avail)` holds, `avail` being the ncpus free from `free_now` and `release`
/// having been told of each entry released; and the ncpus free then.
pub(crate) fn first_time_where<S>(
    ends: &[End],
    free_now: u64,
    state: &mut S,
    release: impl Fn(&mut S, &End),
    fits: impl Fn(&S, u64) -> bool,
) -> Option<(usize, u64)> {
    let mut avail = free_now;
    let mut i = 0;
    while i < ends.len() {
        let t = ends[i].0;
        while i < ends.len() && ends[i].0 == t {
            avail += ends[i].3;
            release(state, &ends[i]);
            i += 1;
        }
        if fits(state, avail) {
            return Some((i, avail));
        }
    }
    None
}

/// The allocation of entry `index` of the ends list.
pub(crate) fn allocation_at<'a>(
    ctx: &'a SchedContext<'_>,
    decisions: &'a [Decision],
    index: usize,
) -> &'a Allocation {
    match ctx.running.get(index) {
        Some(run) => &run.allocation,
        None => match &decisions[index - ctx.running.len()] {
            Decision::Start { allocation, .. } => allocation,
        },
    }
}

/// Where `request` goes in `view`, on its own footing or relaxed.
pub(crate) fn place_on(
    placement: &mut dyn PlacementPolicy,
    request: &Request,
    view: &Scratch<'_>,
    relaxed: bool,
) -> Option<Allocation> {
    match (relaxed, placement.constraints()) {
        (true, Some(constraints)) => constraints.place_relaxed(request, view),
        _ => placement.place(request, view),
    }
}

impl<'s> Walk<'s> {
    /// The earliest estimated end after now at which `job` can be placed (relaxed or not),
    /// with its vnodes left in the calendar ([`Calendar::found`]). `shadow_view` is the state
    /// then, once [`Self::shadow_view`] has been asked for it: a walk that reuses the last
    /// pass's answer leaves it to be built.
    ///
    /// Placing cannot succeed before the ncpus free reach the job's need, so the walk starts
    /// at that time, found on totals. The state then is built from the nearer side: the view
    /// now with the allocations released by then given back, or the idle cluster with the
    /// allocations still held then taken (the same state: it depends only on what is held). A
    /// big job's time is late, when few jobs still run, so this costs the smaller of the two,
    /// not every running job's vnodes. From there the walk gives back one end time at a time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn earliest(
        &mut self,
        ctx: &SchedContext<'s>,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
        relaxed: bool,
        now_view: &mut Scratch<'_>,
        shadow_view: &mut Scratch<'s>,
        decisions: &[Decision],
    ) -> Option<SimTime> {
        // A new walk: the last one's view is not asked for any more.
        self.pending = None;
        self.fill_ends(ctx, decisions);
        let ends = &*self.ends;
        let need = ctx.workload.ncpus_of(job);
        let request = calendar_request(ctx.workload.request_of(job));
        let free_now = now_view.free_total(ConsumableIdx::NCPUS);
        let (mut i, avail) = first_time_with(ends, need, free_now)?;
        let enabled = self.shortcuts.enabled;
        let memo = &mut *self.memo;
        let same_state = enabled
            && memo.key == Some((job, relaxed, ctx.state.outage_epoch()))
            && placement.depends_only_on_state()
            && memo.still_held.len() == ends.len() - i
            && memo
                .still_held
                .iter()
                .zip(&ends[i..])
                .all(|(&(end, job), e)| end == e.0 && job == e.1);
        self.pending = Some(Pending {
            released: i,
            copied: false,
            free_ncpus: avail,
            decisions: decisions.len(),
        });
        if same_state {
            self.shortcuts.reuses += 1;
            // The reference builds every view, so that the lazy one is checked against it.
            if !enabled {
                self.build_pending(ctx, decisions, now_view, shadow_view);
            }
            return Some(self.ends[i - 1].0);
        }
        self.build_pending(ctx, decisions, now_view, shadow_view);
        let ends = &*self.ends;
        let memo = &mut *self.memo;
        let first = i;
        let found = loop {
            if let Some(allocation) = place_on(placement, &request, shadow_view, relaxed) {
                // Remembered only for a first-attempt success: then the state at `first` alone
                // decides it. And only when every job still holding then is running: a start
                // of this pass holds vnodes that a pass taken back and run again at this
                // instant (PBS fairshare's) may not give it, under the same end and job.
                let remembered =
                    i == first && !ends[i..].iter().any(|e| is_start_of_pass(ctx, e.2));
                memo.key = remembered.then_some((job, relaxed, ctx.state.outage_epoch()));
                memo.still_held.clear();
                memo.still_held.extend(ends[i..].iter().map(|e| (e.0, e.1)));
                memo.allocation = allocation;
                break Some(ends[i - 1].0);
            }
            let Some(next) = ends.get(i) else {
                memo.key = None;
                break None;
            };
            let t = next.0;
            while i < ends.len() && ends[i].0 == t {
                shadow_view.give(allocation_at(ctx, decisions, ends[i].2));
                i += 1;
            }
        };
        // A view kept between passes held the ends from `first` on, in order: it no longer
        // holds those given back.
        let kept = &mut *self.kept_shadow;
        if kept.valid && i > first {
            debug_assert!(
                (kept.held.iter().zip(&ends[first..i])).all(|(h, e)| (h.end, h.job) == (e.0, e.1))
            );
            kept.forget_first(i - first);
        }
        found
    }

    /// The ncpus free in the shadow view, without building it: while it is unbuilt the pass
    /// has taken nothing from it (a take builds it first), so the walk's count stands.
    pub(crate) fn shadow_free(&self, shadow_view: &Scratch<'_>) -> u64 {
        match &self.pending {
            Some(pending) => pending.free_ncpus,
            None => shadow_view.free_total(ConsumableIdx::NCPUS),
        }
    }

    /// Makes `shadow_view` the state at the last walk's shadow time, built now if that walk
    /// left it unbuilt; from then on the pass's takes and gives go to it.
    pub(crate) fn shadow_view(
        &mut self,
        ctx: &SchedContext<'s>,
        decisions: &[Decision],
        now_view: &mut Scratch<'_>,
        shadow_view: &mut Scratch<'s>,
    ) {
        if let Some(pending) = &self.pending {
            self.shortcuts.late_views += 1;
            if decisions.len() > pending.decisions {
                self.shortcuts.late_views_after_starts += 1;
            }
        }
        self.build_pending(ctx, decisions, now_view, shadow_view);
    }

    /// Builds the view a walk left pending, if any, from the nearest side: the view now with
    /// the allocations released by then (and the pass's starts since the walk, which all end
    /// by then) given back, the idle cluster with the allocations still held then taken, or
    /// the view the last pass left with only what differs from that given back and taken. The
    /// last two leave a view the next pass can keep, and are chosen while they cost less than
    /// [`IDLE_BUILD_WORTH`] times the first.
    fn build_pending(
        &mut self,
        ctx: &SchedContext<'s>,
        decisions: &[Decision],
        now_view: &mut Scratch<'_>,
        shadow_view: &mut Scratch<'s>,
    ) {
        let Some(Pending {
            released,
            copied,
            free_ncpus: _free,
            decisions: made,
        }) = self.pending.take()
        else {
            return;
        };
        let ends = if copied {
            &self.pending_ends[..]
        } else {
            &self.ends[..]
        };
        let vnodes_of = |indices: &mut dyn Iterator<Item = usize>| -> usize {
            indices
                .map(|index| allocation_at(ctx, decisions, index).n_vnodes())
                .sum()
        };
        let later = ctx.running.len() + made..ctx.running.len() + decisions.len();
        let enabled = self.shortcuts.enabled;
        let held = &ends[released..];
        let from_idle = vnodes_of(&mut held.iter().map(|e| e.2));
        let from_now = vnodes_of(&mut ends[..released].iter().map(|e| e.2).chain(later.clone()));
        // The two sides that leave a view to keep are worth more than the state now's.
        let worth_keeping = from_now.saturating_mul(IDLE_BUILD_WORTH);
        let kept = &mut *self.kept_shadow;
        if enabled && kept.valid && kept.plan(held, ctx, decisions) <= from_idle.min(worth_keeping)
        {
            self.shortcuts.kept_syncs += 1;
            kept.sync(held, ctx, decisions, shadow_view);
        } else if enabled && from_idle < worth_keeping {
            self.shortcuts.idle_builds += 1;
            shadow_view.reset_to(self.idle);
            kept.forget_first(kept.held.len());
            for e in held {
                let holding = kept.take_entry(e, ctx, decisions, shadow_view);
                kept.held.push(holding);
            }
            kept.valid = true;
        } else {
            kept.valid = false;
            shadow_view.reset_to(ctx.state);
            // Only this side reads the view's rows: a start it has not applied yet goes in now.
            now_view.settle();
            shadow_view.copy_from(now_view);
            for index in ends[..released].iter().map(|e| e.2).chain(later) {
                shadow_view.give(allocation_at(ctx, decisions, index));
            }
        }
        debug_assert_eq!(
            shadow_view.free_total(ConsumableIdx::NCPUS),
            _free,
            "the state must be the idle cluster less what is held"
        );
    }

    /// Takes in the shadow view the allocation of `job`, a start of this pass that runs past
    /// the shadow time; a view kept between passes notes it.
    pub(crate) fn take_in_shadow(
        &mut self,
        ctx: &SchedContext<'_>,
        shadow_view: &mut Scratch<'_>,
        job: JobId,
        allocation: &Allocation,
    ) {
        shadow_view.take(allocation);
        let kept = &mut *self.kept_shadow;
        if kept.valid {
            let (key, at) = kept.place_of_start(ctx, job);
            let holding = kept.holding(key, ctx.now, true, allocation);
            kept.held.insert(at, holding);
        }
    }

    /// Gives back in the shadow view what [`Self::take_in_shadow`] took for `job`.
    pub(crate) fn give_in_shadow(
        &mut self,
        ctx: &SchedContext<'_>,
        shadow_view: &mut Scratch<'_>,
        job: JobId,
        allocation: &Allocation,
    ) {
        shadow_view.give(allocation);
        let kept = &mut *self.kept_shadow;
        if kept.valid {
            let (key, at) = kept.place_of_start(ctx, job);
            debug_assert!(kept.held.get(at).is_some_and(|h| (h.end, h.job) == key));
            let holding = kept.held.remove(at);
            kept.spare.push(holding.allocation);
        }
    }

    /// Lists running jobs, and the jobs this pass has decided to start, by estimated end (ties
    /// by job id), with the ncpus each holds (its request's).
    /// A job already past its estimate (possible only when jobs may overrun) counts as ending
    /// now.
    pub(crate) fn fill_ends(&mut self, ctx: &SchedContext<'_>, decisions: &[Decision]) {
        if let Some(pending) = &mut self.pending
            && !pending.copied
        {
            self.pending_ends.clear();
            self.pending_ends.extend_from_slice(self.ends);
            pending.copied = true;
        }
        fill_ends(self.ends, self.kept, self.shortcuts, ctx, decisions);
    }

    /// The vnodes the last successful walk found.
    pub(crate) fn found(&self) -> &Allocation {
        &self.memo.allocation
    }
}

/// The order of the ends list: by estimated end, then by job, which makes every entry's key
/// distinct.
fn end_key(e: &End) -> (SimTime, JobId) {
    (e.0, e.1)
}

/// Where the kernel's log of the running list stood when [`fill_ends`] last filled the list,
/// and how long the running list was then: entries at later positions were that call's
/// starts, which the list holds again, where the kernel put them, once it has.
#[derive(Debug, Clone, Copy)]
struct Seen {
    mark: placesim_core::LogMark,
    running_len: usize,
}

/// What [`fill_ends`] keeps between calls beside the list. Nothing here is per job of the
/// workload (a table with a slot per job was 10 MB for CEA-Curie's 312,807 jobs, and reading
/// it at every pass was a cache miss per running job).
#[derive(Debug, Default)]
pub(crate) struct EndsKept {
    /// Per position in `ctx.running`, whether a kept entry of the list holds the job there
    /// (or, with the kernel's log, whether the position changed); all false between calls.
    claimed: Vec<bool>,
    /// What the list was last filled from; none when it was filled from another list than
    /// the kernel's.
    seen: Option<Seen>,
    /// The entries a fill adds, set aside while they are merged in.
    added: Vec<End>,
}

/// Fills `ends` with the running jobs, and the jobs this pass has decided to start, by
/// estimated end (ties by job id), with the ncpus each holds. A job already past its estimate
/// (possible only when jobs may overrun) counts as ending now.
///
/// The ncpus a job holds are its request's (`Workload::ncpus_of`): the kernel starts no job
/// on an allocation of any other size, so a kept entry's ncpus stay right.
///
/// Between two calls a few jobs end and a few start, so the list is not built and sorted
/// afresh. An entry is kept while the position of `ctx.running` it was made from has not
/// changed: the kernel's log says which positions did ([`placesim_core::RunningLog`]), so
/// only those are read; without the log (a wrapper's own running list, a log that no longer
/// reaches back, or the shortcuts off), an entry is kept when that position still holds its
/// job, which reads the whole list. A kept entry's end is its estimated end, or now if that
/// has passed: with the log, the larger of what it held and now, as the clock never goes back.
/// The jobs at changed positions (new, or moved: a job that ends takes another's place) and
/// this pass's starts are sorted and merged in ([`merge_added`]). The order is a full sort's,
/// as the keys are distinct.
fn fill_ends(
    ends: &mut Vec<End>,
    kept: &mut EndsKept,
    shortcuts: &mut Shortcuts,
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
) {
    let EndsKept {
        claimed,
        seen,
        added,
    } = kept;
    let running = ctx.running;
    let mut kept_in_order = None;
    let changed = match (ctx.running_log, *seen) {
        (Some(log), Some(last)) if shortcuts.enabled => {
            log.since(last.mark).map(|p| (p, last.running_len))
        }
        _ => None,
    };
    let entry = |i: usize, run: &placesim_core::RunningJob| {
        let ncpus = ctx.workload.ncpus_of(run.job);
        (run.estimated_end.max(ctx.now), run.job, i, ncpus)
    };
    match changed {
        Some((positions, last_len)) => {
            shortcuts.ends_from_log += 1;
            // `claimed` marks the changed positions, then is cleared where it was set.
            let width = running.len().max(last_len);
            if claimed.len() < width {
                claimed.resize(width, false);
            }
            for &p in positions {
                if let Some(mark) = claimed.get_mut(p as usize) {
                    *mark = true;
                }
            }
            let kept_below = last_len.min(running.len());
            remove_where(ends, |e| e.2 >= kept_below || claimed[e.2]);
            // The list is by end, so the kept entries whose end has passed are a prefix.
            for e in ends.iter_mut() {
                if e.0 >= ctx.now {
                    break;
                }
                e.0 = ctx.now;
            }
            kept_in_order = Some(ends.len());
            for &p in positions {
                let p = p as usize;
                if let Some(mark) = claimed.get_mut(p)
                    && std::mem::replace(mark, false)
                    && let Some(run) = running.get(p)
                {
                    ends.push(entry(p, run));
                }
            }
        }
        None => {
            claimed.clear();
            claimed.resize(running.len(), false);
            let mut n = 0;
            for k in 0..ends.len() {
                let (_, job, index, ncpus) = ends[k];
                let Some(run) = running.get(index) else {
                    continue;
                };
                if run.job != job || std::mem::replace(&mut claimed[index], true) {
                    continue;
                }
                ends[n] = (run.estimated_end.max(ctx.now), job, index, ncpus);
                n += 1;
            }
            ends.truncate(n);
            for (i, run) in running.iter().enumerate() {
                if !claimed[i] {
                    ends.push(entry(i, run));
                }
            }
            claimed.fill(false);
        }
    }
    for (i, d) in decisions.iter().enumerate() {
        let Decision::Start { job, .. } = d;
        let end = ctx.now + ctx.workload.job(*job).estimate;
        ends.push((end, *job, running.len() + i, ctx.workload.ncpus_of(*job)));
    }
    match kept_in_order {
        Some(kept) => merge_added(ends, kept, ctx.now, added),
        None => ends.sort_by_key(end_key),
    }
    *seen = ctx.running_log.map(|log| Seen {
        mark: log.mark(),
        running_len: running.len(),
    });
    #[cfg(debug_assertions)]
    check_ends(ends, ctx, decisions);
}

/// Removes the entries of `ends` that `dropped` holds for, keeping the others in order: the
/// kept entries between two dropped ones move in one copy. A fill drops a few entries of
/// hundreds, and a removal entry by entry wrote every entry after the first dropped one.
fn remove_where(ends: &mut Vec<End>, dropped: impl Fn(&End) -> bool) {
    let Some(first) = ends.iter().position(&dropped) else {
        return;
    };
    let (mut write, mut read) = (first, first + 1);
    while read < ends.len() {
        let start = read;
        while read < ends.len() && !dropped(&ends[read]) {
            read += 1;
        }
        ends.copy_within(start..read, write);
        write += read - start;
        // Past the dropped entry that ended the block, if any.
        read += 1;
    }
    ends.truncate(write);
}

/// Sorts `ends` by [`end_key`], when its first `kept` entries were in that order before
/// their ends were raised to `now` at the earliest: those raised are a prefix (the ends were
/// in order), sorted again among themselves by job; the entries after them, added by this
/// fill, are sorted and merged in from the back, through `added`: the kept entries after
/// each added one move in one copy, found by a binary search. A stable sort of the whole
/// list read every entry, and allocated its buffer, at every pass (a twentieth of
/// CEA-Curie's instructions).
fn merge_added(ends: &mut [End], kept: usize, now: SimTime, added: &mut Vec<End>) {
    let raised = ends[..kept].partition_point(|e| e.0 <= now);
    ends[..raised].sort_unstable_by_key(end_key);
    added.clear();
    added.extend_from_slice(&ends[kept..]);
    added.sort_unstable_by_key(end_key);
    // Fill from the back: the kept entries after the last added one move in one copy to the
    // end of the free places, found by a binary search, and the added one goes before them.
    // The kept entries not yet placed are `..next_kept`, the free places `..free_end`.
    let (mut next_kept, mut free_end) = (kept, ends.len());
    while let Some(last_added) = added.pop() {
        let key = end_key(&last_added);
        let from = ends[..next_kept].partition_point(|e| end_key(e) < key);
        let after = next_kept - from;
        ends.copy_within(from..next_kept, free_end - after);
        free_end -= after + 1;
        ends[free_end] = last_added;
        next_kept = from;
    }
}

/// The plain definition [`fill_ends`] must give: every running job and every start of the
/// pass, with its estimated end (now at the earliest), position and the ncpus its allocation
/// holds, sorted by end and job. Checked at every call in debug builds.
#[cfg(debug_assertions)]
fn check_ends(ends: &[End], ctx: &SchedContext<'_>, decisions: &[Decision]) {
    let n_cons = ctx.state.cluster_consumables();
    let ncpus = |a: &Allocation| a.total(n_cons, ConsumableIdx::NCPUS);
    let mut plain: Vec<End> = ctx
        .running
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let end = run.estimated_end.max(ctx.now);
            (end, run.job, i, ncpus(&run.allocation))
        })
        .collect();
    for (i, d) in decisions.iter().enumerate() {
        let Decision::Start { job, allocation } = d;
        let end = ctx.now + ctx.workload.job(*job).estimate;
        plain.push((end, *job, ctx.running.len() + i, ncpus(allocation)));
    }
    plain.sort_by_key(end_key);
    assert_eq!(ends, plain, "the kept ends list differs from a fresh sort");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subset of eight entries dropped leaves what `Vec::retain` leaves.
    #[test]
    fn removal_in_blocks_keeps_what_retain_keeps() {
        let entries: Vec<End> = (0..8)
            .map(|i| {
                (
                    SimTime(100 + i),
                    JobId::from_index(i as usize),
                    i as usize,
                    1,
                )
            })
            .collect();
        for mask in 0u32..256 {
            let dropped = |e: &End| mask & (1 << e.2) != 0;
            let mut blocks = entries.clone();
            remove_where(&mut blocks, dropped);
            let mut plain = entries.clone();
            plain.retain(|e| !dropped(e));
            assert_eq!(blocks, plain, "mask {mask:08b}");
        }
    }
}
