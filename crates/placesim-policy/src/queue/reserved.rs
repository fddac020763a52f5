//! Keeping jobs off site reservations' vnodes (reservations-and-partitions.md §1.5).
//!
//! PBS checks every vnode a job would take against its calendar (`check_resources_for_node`,
//! openpbs node_info.cpp): walking the events between the job's start and its end in time
//! order, it takes a reservation's amounts at its start, gives back what a running job or a
//! reservation holds at its end, and at each reservation start the job's chunk must still fit
//! on what is left; a reservation or a job that is exclusive on the vnode refuses any overlap.
//!
//! Here that walk is made once per vnode and per window, before placing: the lowest amount
//! the vnode keeps at any reservation start inside the window is all the job may take there,
//! so the difference is taken from the view the placement searches (a vnode an exclusive
//! reservation will take, wholly). The placement then finds, among the vnodes as the window
//! leaves them, exactly the vnodes PBS's check lets through, for any placement and request;
//! and what it returns fits the view it was asked on, since only amounts were taken away.

use super::calendar::allocation_at;
use placesim_core::{
    Affinity, Allocation, ConsumableIdx, Decision, JobId, ReservationAccess, SchedContext, Scratch,
    ScratchBuf, Sharing, SimDuration, SimTime, SiteReservation, StateView, VnodeId,
};
use std::ops::ControlFlow;

/// What a window takes from a view so that a job placed in it keeps off the reservations that
/// start before it ends: the amounts per vnode it may not use, and the vnodes it may not use
/// at all.
#[derive(Debug, Default)]
pub(crate) struct WindowHolds {
    /// The amounts each vnode must keep for reservations, held shared (a vnode that keeps
    /// anything for one also counts a holder, so an exclusive job keeps off it too).
    pub(crate) kept: Allocation,
    /// Vnodes an exclusive reservation takes within the window, or a Moab reservation that
    /// does not admit the job: held exclusively, with all they have free.
    pub(crate) barred: Allocation,
    /// The vnodes of Moab reservations that admit the job, with its affinity for each.
    pub(crate) affinity: Vec<(VnodeId, Affinity)>,
}

impl WindowHolds {
    /// Takes the holds in `view`, and tells it the job's affinities.
    pub(crate) fn take_in(&self, view: &mut Scratch<'_>) {
        if !self.kept.is_empty() {
            view.take(&self.kept);
        }
        if !self.barred.is_empty() {
            view.take(&self.barred);
        }
        if !self.affinity.is_empty() {
            view.set_affinity(self.affinity.clone());
        }
    }
}

/// What the Moab reservations over `[at, until)` (known by now) mean to `job`: the vnodes of
/// those that do not admit it, which it may not use at all, and its affinity for the vnodes
/// of those that do (reservations-and-partitions.md §5.3, §5.4). Under several reservations a
/// vnode is the job's only if each admits it, with the affinity of the last; one that blocks
/// it wins.
fn moab_access(
    ctx: &SchedContext<'_>,
    job: Option<JobId>,
    at: SimTime,
    until: SimTime,
) -> (Vec<VnodeId>, Vec<(VnodeId, Affinity)>) {
    let mut blocked: Vec<VnodeId> = Vec::new();
    // (vnode, which reservation, affinity): the last reservation's affinity wins.
    let mut admitted: Vec<(VnodeId, usize, Affinity)> = Vec::new();
    let Some(job) = job else {
        return (blocked, Vec::new());
    };
    let who = ctx.workload.credentials(job);
    for (i, r) in ctx.reservations.iter().enumerate() {
        if r.start >= until {
            break;
        }
        let ReservationAccess::Acl { acl, known_from } = &r.access else {
            continue;
        };
        if *known_from > ctx.now || !r.overlaps(at, until) {
            continue;
        }
        match acl.admits(&who) {
            None => blocked.extend(r.allocation.vnodes()),
            Some(affinity) => admitted.extend(r.allocation.vnodes().map(|v| (v, i, affinity))),
        }
    }
    blocked.sort_unstable();
    blocked.dedup();
    admitted.sort_unstable_by_key(|&(v, i, _)| (v, std::cmp::Reverse(i)));
    admitted.dedup_by_key(|&mut (v, _, _)| v);
    let affinity = admitted
        .into_iter()
        .filter(|(v, _, _)| blocked.binary_search(v).is_err())
        .map(|(v, _, a)| (v, a))
        .collect();
    (blocked, affinity)
}

/// Whether any site reservation is still to come or open: the only case in which a
/// discipline needs windows at all (a run without reservations takes none of this path).
pub(crate) fn any(ctx: &SchedContext<'_>) -> bool {
    !ctx.reservations.is_empty()
}

/// How far past the calendar's end a discipline's windows reach (see [`needed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The longest estimate waiting: EASY, whose one top job fits by the calendar's end.
    Longest,
    /// The waiting jobs' estimates added up: top jobs planned one after another.
    AllEstimates,
}

/// Whether a pass whose every window ends within `reach` of the calendar's end may meet a
/// site reservation, so that a discipline must plan it by its plain definition: one is open
/// now (what it holds comes back at its end, which the shortcuts' calendars do not know), or
/// one starts before the horizon. The horizon is when everything running now has ended by
/// its estimate, or a job started now would have, whichever is later, plus the reach: a top
/// job fits by then at the latest (the cluster is as empty then as it will get). Without
/// reservations it reads nothing else: the queue is walked only when one is to come.
pub(crate) fn needed(ctx: &SchedContext<'_>, reach: Reach) -> bool {
    if ctx.reservations.is_empty() {
        return false;
    }
    if ctx.reservations.iter().any(|r| r.start <= ctx.now) {
        return true;
    }
    let estimates = ctx
        .queue
        .iter()
        .map(|&j| ctx.workload.job(j).estimate.as_secs());
    let (longest, all) = estimates.fold((0u64, 0u64), |(longest, all), e| {
        (longest.max(e), all.saturating_add(e))
    });
    let reach = match reach {
        Reach::Longest => longest,
        Reach::AllEstimates => all,
    };
    let ends = ctx.running.iter().map(|r| r.estimated_end);
    let calendar_end = ends.fold(ctx.now + SimDuration(longest), SimTime::max);
    let horizon = SimTime(calendar_end.as_secs().saturating_add(reach));
    ctx.reservations.iter().any(|r| r.start < horizon)
}

/// The reservations not yet ended that start by `at` (those open then or before), in start
/// order. `ctx.reservations` is sorted by start, so they are its prefix, found by bisection:
/// a standing reservation keeps its whole series there, and every placement near one asks
/// this, so walking the series took most of a pass's time (`scenarios/moab-reservations.toml`).
fn started_by<'c>(ctx: &SchedContext<'c>, at: SimTime) -> &'c [SiteReservation] {
    let reservations = ctx.reservations;
    &reservations[..reservations.partition_point(|r| r.start <= at)]
}

/// The reservations that start after `at` and before `until`, in start order (see
/// [`started_by`]).
fn starting_within<'c>(
    ctx: &SchedContext<'c>,
    at: SimTime,
    until: SimTime,
) -> &'c [SiteReservation] {
    let reservations = ctx.reservations;
    let from = reservations.partition_point(|r| r.start <= at);
    let to = from + reservations[from..].partition_point(|r| r.start < until);
    &reservations[from..to]
}

/// The jobs held in a view that will be given back: the running jobs and this pass's starts,
/// each with its estimated end (not before now) and its own allocation. The site's
/// reservations are given back apart, by the callers that read them.
pub(crate) fn releases<'a>(
    ctx: &'a SchedContext<'_>,
    decisions: &'a [Decision],
) -> impl Iterator<Item = (SimTime, &'a Allocation)> + 'a {
    (0..ctx.running.len() + decisions.len()).map(move |i| {
        let end = match ctx.running.get(i) {
            Some(run) => run.estimated_end.max(ctx.now),
            None => match &decisions[i - ctx.running.len()] {
                Decision::Start { job, .. } => ctx.now + ctx.workload.job(*job).estimate,
            },
        };
        (end, allocation_at(ctx, decisions, i))
    })
}

/// The holds a job placed in `view`, which is the state at `at`, must keep for the
/// reservations that start in `(at, until)`; `None` when none does. `held_then` lists what
/// `view` holds that is given back before `until` (jobs by estimated end); the reservations
/// open at `at` are read from `ctx` and must be held in `view` too.
pub(crate) fn window_holds<'a>(
    ctx: &SchedContext<'a>,
    view: &Scratch<'_>,
    job: Option<JobId>,
    at: SimTime,
    until: SimTime,
    held_then: impl Iterator<Item = (SimTime, &'a Allocation)>,
) -> Option<WindowHolds> {
    let starting: Vec<&SiteReservation> = starting_within(ctx, at, until)
        .iter()
        .filter(|r| r.is_held())
        .collect();
    let (blocked, affinity) = moab_access(ctx, job, at, until);
    if starting.is_empty() && blocked.is_empty() && affinity.is_empty() {
        return None;
    }
    let n_cons = ctx.state.cluster_consumables();
    // The events on the vnodes concerned, one list for all: (vnode, time, 0 = give / 1 =
    // take, amounts, barred). The amounts are the allocations' own: a standing reservation
    // on many vnodes starts several times inside a long job's window, and a list and a copy
    // of its amounts per vnode and event made every placement near it mostly allocation.
    type Step<'s> = (VnodeId, SimTime, u8, &'s [u64], bool);
    let mut steps: Vec<Step<'_>> = Vec::new();
    for r in &starting {
        let exclusive = r.allocation.sharing.is_exclusive();
        for (v, amounts) in r.allocation.parts(n_cons) {
            steps.push((v, r.start, 1, amounts, exclusive));
            if r.end < until {
                steps.push((v, r.end, 0, amounts, false));
            }
        }
    }
    // What ends in the window matters only on the vnodes a reservation starting in it takes,
    // and not on those one takes exclusively, nor on those Moab's ACLs bar: the job may use
    // none of them, whatever is given back (a maintenance window's hosts, most often).
    let mut concerned: Vec<VnodeId> = steps.iter().map(|s| s.0).collect();
    concerned.sort_unstable();
    concerned.dedup();
    let mut taken_whole: Vec<VnodeId> = steps.iter().filter(|s| s.4).map(|s| s.0).collect();
    taken_whole.sort_unstable();
    concerned
        .retain(|v| taken_whole.binary_search(v).is_err() && blocked.binary_search(v).is_err());
    let mut gives = |end: SimTime, allocation: &'a Allocation| {
        if concerned.is_empty() || end <= at || end >= until {
            return;
        }
        for (v, amounts) in allocation.parts(n_cons) {
            if concerned.binary_search(&v).is_ok() {
                steps.push((v, end, 0, amounts, false));
            }
        }
    };
    for (end, allocation) in held_then {
        gives(end, allocation);
    }
    for r in started_by(ctx, at).iter().filter(|r| r.is_held()) {
        gives(r.end, &r.allocation);
    }
    let mut holds = WindowHolds {
        kept: Allocation::new(Sharing::Shared),
        barred: Allocation::new(Sharing::Excl),
        affinity,
    };
    let free_of = |v: VnodeId| -> Vec<u64> {
        (0..n_cons)
            .map(|c| view.free(v, ConsumableIdx(c as u8)))
            .collect()
    };
    for &v in &blocked {
        holds.barred.push(v, &free_of(v));
    }
    steps.retain(|s| blocked.binary_search(&s.0).is_err());
    // Vnode by vnode, in order; at one instant, what ends gives back before what starts
    // takes (half-open windows). Events alike in both may come in any order: the takes'
    // lowest point and the gives' sum do not depend on it.
    steps.sort_unstable_by_key(|s| (s.0, s.1, s.2));
    let mut avail = vec![0i128; n_cons];
    let mut lowest = vec![0i128; n_cons];
    let mut kept = vec![0u64; n_cons];
    for list in steps.chunk_by(|a, b| a.0 == b.0) {
        let v = list[0].0;
        let free_now = |c: usize| view.free(v, ConsumableIdx(c as u8));
        for c in 0..n_cons {
            avail[c] = i128::from(free_now(c));
            lowest[c] = avail[c];
        }
        let mut barred = false;
        for &(_, _, kind, amounts, exclusive) in list {
            barred |= exclusive;
            for c in 0..n_cons {
                if kind == 1 {
                    avail[c] -= i128::from(amounts[c]);
                    lowest[c] = lowest[c].min(avail[c]);
                } else {
                    avail[c] += i128::from(amounts[c]);
                }
            }
        }
        if barred {
            holds.barred.push(v, &free_of(v));
            continue;
        }
        for c in 0..n_cons {
            // The job may take what the vnode keeps free at worst (never below 0), no more.
            let free = free_now(c);
            let usable = u64::try_from(lowest[c].clamp(0, i128::from(free))).unwrap_or(0);
            kept[c] = free - usable;
        }
        holds.kept.push(v, &kept);
    }
    Some(holds)
}

/// Makes `view` the state at `at` (after now) as the calendar sees it: `now_view` with what
/// ends by then (jobs by estimated end, reservations open now) given back, and the
/// reservations open then taken.
pub(crate) fn state_at(
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    now_view: &Scratch<'_>,
    at: SimTime,
    view: &mut Scratch<'_>,
) {
    view.copy_from(now_view);
    for (end, allocation) in releases(ctx, decisions) {
        if end <= at {
            view.give(allocation);
        }
    }
    // Only one started by `at` (or by now) is given back or taken.
    for r in started_by(ctx, at.max(ctx.now))
        .iter()
        .filter(|r| r.is_held() && differs_from_now(ctx, r, at))
    {
        if r.start <= ctx.now {
            view.give(&r.allocation);
        } else {
            view.take(&r.allocation);
        }
    }
}

/// Whether the calendar's state at `t` (not before now) differs from now's by `r`: one open
/// now has been given back if it has ended by then; one still to come is held while it is
/// open. [`state_at`] builds a state from now's by it, [`first_at_states`] one from the last.
fn differs_from_now(ctx: &SchedContext<'_>, r: &SiteReservation, t: SimTime) -> bool {
    if r.start <= ctx.now {
        r.end <= t
    } else {
        r.start <= t && t < r.end
    }
}

/// The instants after now at which something held is given back: the estimated ends of the
/// running jobs and this pass's starts, and the ends of the reservations. A job kept off
/// reservations can first start at one of them (or now): between two, what is free only
/// shrinks as reservations start, and its window only reaches further.
pub(crate) fn release_times(ctx: &SchedContext<'_>, decisions: &[Decision]) -> Vec<SimTime> {
    let mut times: Vec<SimTime> = releases(ctx, decisions)
        .map(|(end, _)| end)
        .chain(ctx.reservations.iter().map(|r| r.end))
        .filter(|&t| t > ctx.now)
        .collect();
    times.sort_unstable();
    times.dedup();
    times
}

/// Where a job would go if it started at `at` (now, or a later instant) and ran until
/// `until`, kept off the reservations that start before then: `place` asked on the state at
/// `at` ([`state_at`]) less what the window keeps ([`window_holds`]). `buf` backs the view.
#[allow(clippy::too_many_arguments)]
pub(crate) fn place_in_window(
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    job: Option<JobId>,
    now_view: &Scratch<'_>,
    at: SimTime,
    until: SimTime,
    buf: &mut ScratchBuf,
    place: impl FnOnce(&Scratch<'_>) -> Option<Allocation>,
) -> Option<Allocation> {
    let mut view = Scratch::new(ctx.state, buf);
    if at > ctx.now {
        state_at(ctx, decisions, now_view, at, &mut view);
    } else {
        view.copy_from(now_view);
    }
    keep_off_and_place(
        ctx,
        decisions,
        job,
        &mut view,
        at,
        until,
        std::iter::empty(),
        place,
    )
}

/// `visit` given each of `times` (ascending) in turn with the state then as the calendar sees
/// it ([`state_at`]; `now_view` itself at a time not after now), until it breaks, with what
/// it broke with. Each state after now is built from the one before it rather than from now:
/// what ends in between is given back, and the reservations that open or end in between are
/// taken or given. The states are the same (a view's amounts add up whatever the order of its
/// gives and takes), so is what `visit` finds; but a search over many times costs what
/// changes between them, not every running job at each time (a top job near a standing
/// reservation is tried at tens of times a pass). `base_buf` backs the states.
pub(crate) fn first_at_states<R>(
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    now_view: &Scratch<'_>,
    times: &[SimTime],
    base_buf: &mut ScratchBuf,
    mut visit: impl FnMut(SimTime, &Scratch<'_>) -> ControlFlow<R>,
) -> Option<R> {
    debug_assert!(times.is_sorted(), "the times of a walk come in order");
    let mut base = Scratch::new(ctx.state, base_buf);
    base.copy_from(now_view);
    let mut ends: Vec<(SimTime, &Allocation)> = releases(ctx, decisions).collect();
    ends.sort_by_key(|&(end, _)| end);
    let mut given = 0;
    let mut before = ctx.now;
    for &at in times {
        if at <= ctx.now {
            if let ControlFlow::Break(found) = visit(at, now_view) {
                return Some(found);
            }
            continue;
        }
        while let Some(&(_, allocation)) = ends.get(given).filter(|&&(end, _)| end <= at) {
            base.give(allocation);
            given += 1;
        }
        // What [`state_at`] does with a reservation at `before` and at `at`, undone and done:
        // where the two differ from now's by it, whether it is given back (one open now that
        // has ended since, one to come that has ended since it opened) or taken (one to come
        // that has opened). Gives first, so that no take finds less than the state at `at` has.
        let started = started_by(ctx, at);
        let given_back = |r: &SiteReservation| {
            let differs = differs_from_now(ctx, r, at);
            (differs_from_now(ctx, r, before) != differs).then_some(differs == (r.start <= ctx.now))
        };
        for r in started.iter().filter(|r| r.is_held()) {
            if given_back(r) == Some(true) {
                base.give(&r.allocation);
            }
        }
        for r in started.iter().filter(|r| r.is_held()) {
            if given_back(r) == Some(false) {
                base.take(&r.allocation);
            }
        }
        before = at;
        base.settle();
        if let ControlFlow::Break(found) = visit(at, &base) {
            return Some(found);
        }
    }
    None
}

/// [`place_in_window`] on `state`, the state at `at` ([`first_at_states`]), copied into the
/// view `buf` backs, with more holders than the running jobs, this pass's starts and the
/// site's reservations: `holds`, each `(start, end, vnodes)` (a discipline's own top-job
/// reservations), taken in the state at `at` when they hold vnodes then, and given back in the
/// window when they end in it. Those that start after `at` are the discipline's own business.
#[allow(clippy::too_many_arguments)]
pub(crate) fn place_on_state_at<'h>(
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    job: Option<JobId>,
    state: &Scratch<'_>,
    at: SimTime,
    until: SimTime,
    buf: &mut ScratchBuf,
    holds: impl Iterator<Item = (SimTime, SimTime, &'h Allocation)> + Clone,
    place: impl FnOnce(&Scratch<'_>) -> Option<Allocation>,
) -> Option<Allocation> {
    let mut view = Scratch::new(ctx.state, buf);
    view.copy_from(state);
    keep_off_and_place(ctx, decisions, job, &mut view, at, until, holds, place)
}

/// `place` asked on `view`, the state at `at`, with the holds active then taken and what the
/// window `[at, until)` keeps for the site's reservations taken too.
#[allow(clippy::too_many_arguments)]
fn keep_off_and_place<'h>(
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    job: Option<JobId>,
    view: &mut Scratch<'_>,
    at: SimTime,
    until: SimTime,
    holds: impl Iterator<Item = (SimTime, SimTime, &'h Allocation)> + Clone,
    place: impl FnOnce(&Scratch<'_>) -> Option<Allocation>,
) -> Option<Allocation> {
    let active = holds.filter(move |&(start, end, _)| start <= at && at < end);
    for (_, _, allocation) in active.clone() {
        view.take(allocation);
    }
    let still_held = releases(ctx, decisions)
        .filter(|&(end, _)| end > at)
        .chain(active.map(|(_, end, allocation)| (end, allocation)));
    if let Some(holds) = window_holds(ctx, view, job, at, until, still_held) {
        holds.take_in(view);
    }
    place(view)
}
