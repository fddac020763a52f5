//! The calendar walk: the earliest estimated end of running jobs at which a job can be placed,
//! and where. EASY's reservation (step 2) and the relaxation decisions of NODESETPLUS DELAY and
//! SPANEVENLY both ask it.

use super::{calendar_request, idle_of};
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

/// What the walk keeps between passes.
#[derive(Debug)]
pub(crate) struct Calendar {
    ends: Vec<End>,
    /// Per job: the ncpus its allocation holds, with the start it was read at.
    slots: Slots,
    /// The cluster with nothing running (vnodes down now still down), to build shadow states
    /// from when that is nearer.
    idle: Option<ClusterState>,
    memo: Memo,
    pub(crate) shortcuts: Shortcuts,
    shadow_buf: ScratchBuf,
}

/// A calendar opened for one pass: its lists, and the idle state shadow views may be built on.
pub(crate) struct Walk<'a> {
    pub(crate) ends: &'a mut Vec<End>,
    slots: &'a mut Slots,
    idle: &'a ClusterState,
    memo: &'a mut Memo,
    shortcuts: &'a mut Shortcuts,
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
            slots: Slots::default(),
            idle: None,
            memo: Memo::default(),
            shortcuts: Shortcuts {
                enabled: shortcuts,
                idle_builds: 0,
                reuses: 0,
            },
            shadow_buf: ScratchBuf::default(),
        }
    }

    /// Where the walk over `state` ends: nothing running, the vnodes down now still down.
    pub(crate) fn idle(&mut self, state: &ClusterState) -> &ClusterState {
        idle_of(&mut self.idle, state, true)
    }

    /// Opens the calendar over `state`: the walk, and a shadow view for it to fill.
    pub(crate) fn open<'a>(&'a mut self, state: &'a ClusterState) -> (Walk<'a>, Scratch<'a>) {
        let idle = idle_of(&mut self.idle, state, true);
        let walk = Walk {
            ends: &mut self.ends,
            slots: &mut self.slots,
            idle,
            memo: &mut self.memo,
            shortcuts: &mut self.shortcuts,
        };
        (walk, Scratch::new(state, &mut self.shadow_buf))
    }

    /// The vnodes the last successful walk found.
    pub(crate) fn found(&self) -> &Allocation {
        &self.memo.allocation
    }

    /// The running jobs and this pass's starts by estimated end, as a walk lists them
    /// ([`Walk::fill_ends`]), without opening a walk (no idle state is made).
    pub(crate) fn ends_now(&mut self, ctx: &SchedContext<'_>, decisions: &[Decision]) -> &[End] {
        fill_ends(&mut self.ends, &mut self.slots, ctx, decisions);
        &self.ends
    }
}

/// How many entries of `ends` must be released (a whole distinct end time at a time) before
/// the ncpus free, from `free_now`, reach `need`; and the ncpus free then.
pub(crate) fn first_time_with(ends: &[End], need: u64, free_now: u64) -> Option<(usize, u64)> {
    let mut avail = free_now;
    let mut i = 0;
    while i < ends.len() {
        let t = ends[i].0;
        while i < ends.len() && ends[i].0 == t {
            avail += ends[i].3;
            i += 1;
        }
        if avail >= need {
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
    /// with its vnodes left in the calendar ([`Calendar::found`]). `shadow_view` ends as the
    /// state then.
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
        now_view: &Scratch<'_>,
        shadow_view: &mut Scratch<'s>,
        decisions: &[Decision],
    ) -> Option<SimTime> {
        self.fill_ends(ctx, decisions);
        let ends = &*self.ends;
        let need = ctx.workload.ncpus_of(job);
        let request = calendar_request(ctx.workload.request_of(job));
        let free_now = now_view.free_total(ConsumableIdx::NCPUS);
        let (mut i, _avail) = first_time_with(ends, need, free_now)?;
        let vnodes_of = |range: &[End]| -> usize {
            range
                .iter()
                .map(|e| allocation_at(ctx, decisions, e.2).n_vnodes())
                .sum()
        };
        let enabled = self.shortcuts.enabled;
        if enabled && vnodes_of(&ends[i..]) < vnodes_of(&ends[..i]) {
            self.shortcuts.idle_builds += 1;
            shadow_view.reset_to(self.idle);
            for e in &ends[i..] {
                shadow_view.take(allocation_at(ctx, decisions, e.2));
            }
        } else {
            shadow_view.reset_to(ctx.state);
            shadow_view.copy_from(now_view);
            for e in &ends[..i] {
                shadow_view.give(allocation_at(ctx, decisions, e.2));
            }
        }
        debug_assert_eq!(
            shadow_view.free_total(ConsumableIdx::NCPUS),
            _avail,
            "the state must be the idle cluster less what is held"
        );
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
        if same_state {
            self.shortcuts.reuses += 1;
            return Some(ends[i - 1].0);
        }
        let first = i;
        loop {
            if let Some(allocation) = place_on(placement, &request, shadow_view, relaxed) {
                // Remembered only for a first-attempt success: then the state at `first` alone
                // decides it.
                memo.key = (i == first).then_some((job, relaxed, ctx.state.outage_epoch()));
                memo.still_held.clear();
                memo.still_held.extend(ends[i..].iter().map(|e| (e.0, e.1)));
                memo.allocation = allocation;
                return Some(ends[i - 1].0);
            }
            let Some(next) = ends.get(i) else {
                memo.key = None;
                return None;
            };
            let t = next.0;
            while i < ends.len() && ends[i].0 == t {
                shadow_view.give(allocation_at(ctx, decisions, ends[i].2));
                i += 1;
            }
        }
    }

    /// Lists running jobs, and the jobs this pass has decided to start, by estimated end (ties
    /// by job id), with the ncpus each holds (read from its allocation once per start).
    /// A job already past its estimate (possible only when jobs may overrun) counts as ending
    /// now.
    pub(crate) fn fill_ends(&mut self, ctx: &SchedContext<'_>, decisions: &[Decision]) {
        fill_ends(self.ends, self.slots, ctx, decisions);
    }

    /// The vnodes the last successful walk found.
    pub(crate) fn found(&self) -> &Allocation {
        &self.memo.allocation
    }
}

/// Per job, what [`fill_ends`] keeps from one call to the next.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// The start the ncpus were read at.
    start: SimTime,
    /// The ncpus its allocation holds.
    ncpus: u64,
    /// The call in which it was last seen running, and where in `ctx.running`.
    running: u32,
    index: u32,
    /// The call in which it was last put in the list.
    listed: u32,
}

/// The per-job slots of [`fill_ends`], and the number of its current call.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    slots: Vec<Slot>,
    call: u32,
}

/// Fills `ends` with the running jobs, and the jobs this pass has decided to start, by
/// estimated end (ties by job id), with the ncpus each holds: read from its allocation once
/// per start and kept in `slots`, per job. A job already past its estimate (possible only when
/// jobs may overrun) counts as ending now.
///
/// Between two calls a few jobs end and a few start, so the list is not built and sorted
/// afresh: the entries of jobs still running (with the same start) are kept in their order,
/// the others dropped, the new ones appended, and a stable sort, which finds the kept prefix
/// already in order, merges them in O(n) plus the new ones' sort. The order is the same as a
/// full sort's: (end, job) is unique.
fn fill_ends(
    ends: &mut Vec<End>,
    slots: &mut Slots,
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
) {
    let n_cons = ctx.state.cluster_consumables();
    let jobs = ctx.workload.jobs().len();
    slots.call = slots.call.wrapping_add(1);
    if slots.slots.len() != jobs || slots.call == 0 {
        slots.slots.clear();
        let empty = Slot {
            start: SimTime(u64::MAX),
            ncpus: 0,
            running: 0,
            index: 0,
            listed: 0,
        };
        slots.slots.resize(jobs, empty);
        slots.call = 1;
        ends.clear();
    }
    let call = slots.call;
    let slots = &mut slots.slots;
    let ncpus_held = |slot: &mut Slot, start: SimTime, allocation: &Allocation| {
        if slot.start != start {
            slot.start = start;
            slot.ncpus = allocation.total(n_cons, ConsumableIdx::NCPUS);
        }
        slot.ncpus
    };
    for (i, run) in ctx.running.iter().enumerate() {
        let slot = &mut slots[run.job.index()];
        ncpus_held(slot, run.start, &run.allocation);
        slot.running = call;
        slot.index = i as u32;
    }
    // Kept: the jobs still running, each once, with their place in `ctx.running` and their end
    // now.
    ends.retain_mut(|e| {
        let slot = &mut slots[e.1.index()];
        if slot.running != call || slot.listed == call {
            return false;
        }
        slot.listed = call;
        let run = &ctx.running[slot.index as usize];
        *e = (
            run.estimated_end.max(ctx.now),
            run.job,
            slot.index as usize,
            slot.ncpus,
        );
        true
    });
    for (i, run) in ctx.running.iter().enumerate() {
        let slot = &mut slots[run.job.index()];
        if slot.listed != call {
            slot.listed = call;
            ends.push((run.estimated_end.max(ctx.now), run.job, i, slot.ncpus));
        }
    }
    for (i, d) in decisions.iter().enumerate() {
        let Decision::Start { job, allocation } = d;
        let end = ctx.now + ctx.workload.job(*job).estimate;
        let ncpus = ncpus_held(&mut slots[job.index()], ctx.now, allocation);
        ends.push((end, *job, ctx.running.len() + i, ncpus));
    }
    ends.sort_by_key(|e| (e.0, e.1));
}
