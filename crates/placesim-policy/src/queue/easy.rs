//! EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), with the reservation computed by the
//! placement policy.

use super::calendar::{
    Calendar, End, Shortcuts, Walk, allocation_at, first_time_where, first_time_with, place_on,
};
use super::{Order, PbsComment, Runnable, calendar_request, reserved, start, start_heads};
use placesim_core::{
    Allocation, ConsumableIdx, Decision, JobId, LimitDraw, PlacementPolicy, SchedContext,
    SchedulingPolicy, Scratch, ScratchBuf, SimTime, StateView,
};
use std::ops::ControlFlow;

/// The reservation EASY holds for the first job that cannot start: when, and on which vnodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The job it is for.
    pub job: JobId,
    /// The shadow time: the earliest estimated end of running jobs at which the job can be
    /// placed.
    pub start: SimTime,
    /// The vnodes it would take then.
    pub allocation: Allocation,
}

/// EASY backfilling.
///
/// 1. Start queue heads while they fit (a job that can never run is passed over).
/// 2. For the first head that does not fit, find its reservation: release running jobs in order
///    of estimated end (start + estimate) into a what-if view, and try to place the head after
///    each distinct end time. The first success gives the shadow time and the vnodes.
/// 3. Scan the rest of the queue in order. Start a job if it fits now and either its estimated
///    end is no later than the shadow time, or the head can still be placed at the shadow time
///    with this job's resources taken (the vnode form of "uses no more than `extra`").
///
/// On a homogeneous machine this is exactly count-based EASY: the head still fits at the shadow
/// time after a long job takes k processors exactly when k ≤ extra.
///
/// Shortcuts that change no decision:
/// - The reservation is computed only once some candidate fits now.
/// - When no job has ended since the previous pass, only newly arrived jobs are scanned:
///   nothing was freed, the shadow time is the same, and `now + estimate ≤ shadow` only gets
///   harder as time passes, so every older candidate would be refused again.
/// - When the placement policy says fit is decided by totals for the head and a candidate
///   ([`PlacementPolicy::totals_decide_request`]), the shadow time and the extra test are
///   computed on ncpus totals and on the rooms of the run limits the head draws on, and vnodes
///   are placed only for the jobs that start. A candidate for which it does not hold switches
///   the rest of the pass to the vnode form.
/// - In the vnode form, the reservation walk starts where the ncpus free reach the head's need,
///   builds that state from the idle cluster when fewer vnodes are held then than released by
///   then, and reuses the previous pass's vnodes for the same head in the same state (see
///   [`Easy::without_shortcuts`] for the reference without these).
#[derive(Debug)]
pub struct Easy<P> {
    placement: P,
    runnable: Runnable,
    now_buf: ScratchBuf,
    /// The head's reservation walk.
    calendar: Calendar,
    /// The job whose estimate the last pass reported.
    estimated: Option<JobId>,
    /// Behind the views of the head's window when site reservations are to come.
    window_buf: ScratchBuf,
    /// Behind the state at each time the head's search near site reservations tries.
    shadow_buf: ScratchBuf,
    /// On the totals form, per run-limit draw of the head: its limit's room at the shadow
    /// time, after this pass's long backfills.
    head_rooms: Vec<u64>,
    /// Per request id, whether the placement decides it on totals
    /// ([`PlacementPolicy::totals_decide_request`]): 0 not asked yet, 1 yes, 2 no.
    on_totals: Vec<u8>,
    /// Where in its queue the last pass found the first job that does not start (the head),
    /// if it found one.
    last_head: Option<usize>,
}

/// The reservation as a pass holds it: on totals, or on vnodes in the shadow view.
enum Held {
    /// Not computed yet.
    Unknown,
    /// Shadow time and the ncpus free then, after the long backfills of this pass.
    Totals { time: SimTime, free_ncpus: u64 },
    /// The shadow time; the shadow view holds the state then. The head's vnodes are the
    /// memo's, or `moved` once a long backfill has made the head move.
    Vnodes {
        start: SimTime,
        moved: Option<Allocation>,
    },
}

impl<P: PlacementPolicy> Easy<P> {
    /// EASY placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Easy {
            placement,
            runnable: Runnable::default(),
            now_buf: ScratchBuf::default(),
            calendar: Calendar::new(true),
            estimated: None,
            window_buf: ScratchBuf::default(),
            shadow_buf: ScratchBuf::default(),
            head_rooms: Vec::new(),
            on_totals: Vec::new(),
            last_head: None,
        }
    }

    /// EASY with every reservation found by the plain walk from the state now: no shadow
    /// state built from the idle cluster, no reservation reused. The reference the shortcuts
    /// are tested against; the decisions are the same, only slower.
    pub fn without_shortcuts(placement: P) -> Self {
        let mut easy = Easy::new(placement);
        easy.calendar = Calendar::new(false);
        easy
    }

    /// The shortcuts' setting and how often each was taken so far.
    pub fn shortcuts(&self) -> Shortcuts {
        self.calendar.shortcuts
    }

    /// The reservation the first blocked job of `ctx`'s queue gets after step 1, with its
    /// vnodes, as step 2 computes it.
    pub fn reservation(&mut self, ctx: &SchedContext<'_>) -> Option<Reservation> {
        let mut decisions = Vec::new();
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let (head_pos, relaxed) = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            &mut decisions,
            Order::Calendared,
        )?;
        let head = *ctx.queue.get(head_pos)?;
        let (mut walk, mut shadow_view) = self.calendar.open(ctx.state);
        let start = walk.earliest(
            ctx,
            &mut self.placement,
            head,
            relaxed,
            &mut now_view,
            &mut shadow_view,
            &decisions,
        )?;
        Some(Reservation {
            job: head,
            start,
            allocation: self.calendar.found().clone(),
        })
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Easy<P> {
    fn name(&self) -> String {
        "easy".to_owned()
    }

    super::comments_wakeups_and_checks!();

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.last_head = None;
        self.pass(ctx, decisions);
        self.runnable
            .record_bindings(ctx, &mut self.placement, decisions);
    }

    /// Once the head is found, each later job is refused or started against the state its
    /// predecessors' starts leave; with no start after `place`, every job from there on is
    /// refused against one state whatever their order, and the reservation, found from the
    /// state after the heads and this pass's starts before `place`, is the same whichever of
    /// them asks for it first (its form too: on vnodes once any of them is not decided on
    /// totals). A head at or after `place` could be another job in another order.
    fn decides_alike_in_any_order_after(&self, place: usize) -> bool {
        self.last_head.is_some_and(|head| head < place)
    }
}

impl<P: PlacementPolicy> Easy<P> {
    /// One scheduling pass; [`SchedulingPolicy::schedule`] then records the starts' bindings.
    fn pass(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        if reserved::needed(ctx, reserved::Reach::Longest) {
            self.pass_kept_off(ctx, decisions);
            return;
        }
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let Some((head_pos, head_relaxed)) = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            decisions,
            Order::Calendared,
        ) else {
            return;
        };
        let Some(&head) = ctx.queue.get(head_pos) else {
            return;
        };
        self.last_head = Some(head_pos);
        let scan_from = if ctx.freed_since_last_pass {
            head_pos + 1
        } else {
            (head_pos + 1).max(ctx.fresh_from)
        };
        let min_need = ctx.workload.min_request_ncpus();
        let head_request = calendar_request(ctx.workload.request_of(head));
        let head_need = ctx.workload.ncpus_of(head);
        let head_draws = head_request.limit_draws.as_deref().unwrap_or(&[]);
        let head_needs = HeadNeed {
            job: head,
            relaxed: head_relaxed,
            ncpus: head_need,
            draws: head_draws,
        };
        let head_by_totals = !head_relaxed
            && self.placement.totals_decide_view(&now_view)
            && self.placement.totals_decide_request(&head_request);
        let (mut walk, mut shadow_view) = self.calendar.open(ctx.state);
        let mut held = Held::Unknown;
        for &job in &ctx.queue[scan_from..] {
            let free_now = now_view.free_total(ConsumableIdx::NCPUS);
            if min_need > 0 && free_now == 0 {
                break;
            }
            let need = ctx.workload.ncpus_of(job);
            if need > free_now || self.runnable.known_never(ctx, job) {
                continue;
            }
            let request = ctx.workload.request_of(job);
            let draws = request.limit_draws.as_deref().unwrap_or(&[]);
            if now_view.short_limit(draws).is_some() {
                // Over a limit of its own: the limits' placement would refuse it whatever the
                // head needs, and PBS checks limits before the vnodes. Passed over without a
                // comment, where PBS would give the limit's text (docs/scenarios.md says why).
                continue;
            }
            let by_totals = head_by_totals
                && self.placement.totals_decide_view(&now_view)
                && on_totals(&mut self.on_totals, &self.placement, ctx, job);
            // Computed on totals when this candidate's fit is decided there and nothing is
            // held yet; otherwise the pass switches to (or starts in) the vnode form. This
            // pass's long backfills count as running jobs that end after the shadow time; the
            // head fits at that time (they were admitted on that condition), so the search
            // stops before releasing them.
            let switch = !by_totals && matches!(held, Held::Totals { .. });
            if matches!(held, Held::Unknown) || switch {
                let found = reserve(
                    by_totals,
                    &mut walk,
                    &mut shadow_view,
                    ctx,
                    decisions,
                    &mut self.placement,
                    head_needs,
                    &mut now_view,
                    &mut self.head_rooms,
                );
                // The head can run on the empty cluster, so releasing every running job always
                // finds a reservation; if it ever does not, backfill nothing more.
                let Some(found) = found else { break };
                held = found;
            }
            match &mut held {
                Held::Unknown => {
                    debug_assert!(false, "reservation used before it was computed");
                    break;
                }
                Held::Totals { time, free_ncpus } => {
                    let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= *time;
                    if !ends_by_shadow
                        && (need + head_need > *free_ncpus
                            || !leaves_room(head_draws, &self.head_rooms, draws))
                    {
                        // It fits now (totals decide, and it is within the free ncpus).
                        self.runnable.comment(job, PbsComment::Conflict);
                        continue;
                    }
                    let Some(allocation) =
                        self.runnable
                            .place_plain(ctx, &mut self.placement, job, &mut now_view)
                    else {
                        continue;
                    };
                    if !ends_by_shadow {
                        *free_ncpus -= need;
                        take_draws(head_draws, &mut self.head_rooms, draws);
                    }
                    start(job, allocation, &mut now_view, decisions);
                }
                Held::Vnodes {
                    start: shadow,
                    moved,
                } => {
                    let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= *shadow;
                    // A job running past the shadow time must leave the head's ncpus free
                    // then: a necessary condition, checked before any vnode-level work.
                    if !ends_by_shadow && need + head_need > walk.shadow_free(&shadow_view) {
                        continue;
                    }
                    let placed = self.runnable.place_now(
                        ctx,
                        &mut self.placement,
                        job,
                        &mut now_view,
                        decisions,
                        false,
                    );
                    let Some(allocation) = placed.allocation else {
                        continue;
                    };
                    if !ends_by_shadow {
                        walk.shadow_view(ctx, decisions, &mut now_view, &mut shadow_view);
                        walk.take_in_shadow(ctx, &mut shadow_view, job, &allocation);
                        let head_vnodes = moved.as_ref().unwrap_or(walk.found());
                        // The shadow view had room for the head's vnodes before the take.
                        if !shadow_view.has_room_after_taking(head_vnodes, &allocation) {
                            let elsewhere = place_on(
                                &mut self.placement,
                                &head_request,
                                &shadow_view,
                                head_relaxed,
                            );
                            match elsewhere {
                                Some(a) => *moved = Some(a),
                                None => {
                                    walk.give_in_shadow(ctx, &mut shadow_view, job, &allocation);
                                    self.runnable.comment(job, PbsComment::Conflict);
                                    continue;
                                }
                            }
                        }
                    }
                    start(job, allocation, &mut now_view, decisions);
                }
            }
        }
        // The head's reservation is its top-job estimate, computed here as the scan would have
        // when no candidate needed it. When nothing was freed since the pass that reported the
        // same head's estimate, and no job that arrived since sorts before it (a queue in
        // another order than submission may start one ahead of it), it stands (EASY's
        // guarantee: backfills never move the shadow time) and is not computed again.
        if !ctx.freed_since_last_pass
            && head_pos < ctx.fresh_from
            && matches!(held, Held::Unknown)
            && self.estimated == Some(head)
        {
            return;
        }
        self.estimated = Some(head);
        if matches!(held, Held::Unknown)
            && let Some(found) = reserve(
                head_by_totals,
                &mut walk,
                &mut shadow_view,
                ctx,
                decisions,
                &mut self.placement,
                head_needs,
                &mut now_view,
                &mut self.head_rooms,
            )
        {
            held = found;
        }
        let estimate = match held {
            Held::Unknown => None,
            Held::Totals { time, .. } => Some((time, None)),
            Held::Vnodes { start, moved } => Some((
                start,
                ctx.estimate_vnodes
                    .then(|| moved.unwrap_or_else(|| walk.found().clone())),
            )),
        };
        if let Some((start, allocation)) = estimate {
            self.runnable.estimates.push(placesim_core::TopJobEstimate {
                job: head,
                start,
                allocation: allocation.map(std::sync::Arc::new),
            });
        }
    }
}

impl<P: PlacementPolicy> Easy<P> {
    /// One pass while site reservations are to come, by EASY's plain definition with every
    /// job kept off them ([`reserved`]); none of the shortcuts of [`Self::pass`], whose
    /// reasoning on totals and on the state at estimated ends alone does not see reservations.
    ///
    /// 1. Heads start while they fit their windows.
    /// 2. The shadow time is the first instant after now at which something is given back
    ///    (an estimated end, a reservation's end) where the head fits its window.
    /// 3. Each later job starts if it fits its window now and either ends by the shadow time
    ///    or leaves the head its window then, with this job held until its estimated end; a
    ///    job that fits now only by overlapping a reservation or the head's window gets PBS's
    ///    conflict comment.
    fn pass_kept_off(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        self.estimated = None;
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let Some((head_pos, _)) = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            decisions,
            Order::Calendared,
        ) else {
            return;
        };
        let Some(&head) = ctx.queue.get(head_pos) else {
            return;
        };
        self.last_head = Some(head_pos);
        let head_request = calendar_request(ctx.workload.request_of(head));
        let head_estimate = ctx.workload.job(head).estimate;
        now_view.settle();
        let window_buf = &mut self.window_buf;
        let placement = &mut self.placement;
        let shadow = reserved::first_at_states(
            ctx,
            decisions,
            &now_view,
            &reserved::release_times(ctx, decisions),
            &mut self.shadow_buf,
            |t, state| {
                reserved::place_on_state_at(
                    ctx,
                    decisions,
                    Some(head),
                    state,
                    t,
                    t + head_estimate,
                    window_buf,
                    std::iter::empty(),
                    |view| placement.place(&head_request, view),
                )
                .map_or(ControlFlow::Continue(()), |a| ControlFlow::Break((t, a)))
            },
        );
        let Some((shadow, mut head_vnodes)) = shadow else {
            return;
        };
        for &job in &ctx.queue[head_pos + 1..] {
            if self.runnable.known_never(ctx, job) {
                continue;
            }
            let placed = self.runnable.place_now_kept_off(
                ctx,
                &mut self.placement,
                job,
                &mut now_view,
                decisions,
                false,
            );
            let Some(allocation) = placed.allocation else {
                if placed.conflict {
                    self.runnable.comment(job, PbsComment::Conflict);
                }
                continue;
            };
            let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= shadow;
            start(job, allocation, &mut now_view, decisions);
            if !ends_by_shadow {
                now_view.settle();
                let still = reserved::place_in_window(
                    ctx,
                    decisions,
                    Some(head),
                    &now_view,
                    shadow,
                    shadow + head_estimate,
                    &mut self.window_buf,
                    |view| {
                        if view.has_room_for(&head_vnodes) {
                            Some(head_vnodes.clone())
                        } else {
                            self.placement.place(&head_request, view)
                        }
                    },
                );
                let Some(moved) = still else {
                    if let Some(Decision::Start { allocation, .. }) = decisions.pop() {
                        now_view.give(&allocation);
                    }
                    self.runnable.comment(job, PbsComment::Conflict);
                    continue;
                };
                head_vnodes = moved;
            }
        }
        self.runnable.estimates.push(placesim_core::TopJobEstimate {
            job: head,
            start: shadow,
            allocation: ctx
                .estimate_vnodes
                .then(|| std::sync::Arc::new(head_vnodes)),
        });
    }
}

/// Whether `placement` decides `job`'s request on totals
/// ([`PlacementPolicy::totals_decide_request`]), remembered per request id in `known`.
fn on_totals<P: PlacementPolicy>(
    known: &mut Vec<u8>,
    placement: &P,
    ctx: &SchedContext<'_>,
    job: JobId,
) -> bool {
    let n_requests = ctx.workload.requests().len();
    if known.len() != n_requests {
        known.clear();
        known.resize(n_requests, 0);
    }
    let id = ctx.workload.job(job).request.index();
    if known[id] == 0 {
        let yes = placement.totals_decide_request(ctx.workload.request_of(job));
        known[id] = if yes { 1 } else { 2 };
    }
    known[id] == 1
}

/// The head, and what it needs on the totals form: its ncpus, and its draws on run limits.
#[derive(Clone, Copy)]
struct HeadNeed<'a> {
    job: JobId,
    /// Whether it waits with its relaxable constraint dropped.
    relaxed: bool,
    ncpus: u64,
    draws: &'a [LimitDraw],
}

/// The head's reservation at the first estimated end where it fits: on totals (`on_totals`,
/// with the rooms of the limits it draws on left in `rooms`), or on vnodes, found by `walk`
/// in `shadow_view`. `None` when releasing every running job does not make room.
#[allow(clippy::too_many_arguments)]
fn reserve<'s>(
    on_totals: bool,
    walk: &mut Walk<'s>,
    shadow_view: &mut Scratch<'s>,
    ctx: &SchedContext<'s>,
    decisions: &[Decision],
    placement: &mut dyn PlacementPolicy,
    head: HeadNeed<'_>,
    now_view: &mut Scratch<'_>,
    rooms: &mut Vec<u64>,
) -> Option<Held> {
    if on_totals {
        let (time, free_ncpus) = shadow_by_totals(walk, ctx, decisions, head, now_view, rooms)?;
        return Some(Held::Totals { time, free_ncpus });
    }
    let start = walk.earliest(
        ctx,
        placement,
        head.job,
        head.relaxed,
        now_view,
        shadow_view,
        decisions,
    )?;
    Some(Held::Vnodes { start, moved: None })
}

/// Step 2 on totals: the first estimated end at which the ncpus free reach the head's need and
/// each run limit the head draws on has room for its draw, with the ncpus free then. `walk`'s
/// ends are filled first. `rooms` is left with each of the head's draws' limit room then:
/// the room now in `now_view`, and the draws of every job ending by then given back.
fn shadow_by_totals(
    walk: &mut Walk<'_>,
    ctx: &SchedContext<'_>,
    decisions: &[Decision],
    head: HeadNeed<'_>,
    now_view: &Scratch<'_>,
    rooms: &mut Vec<u64>,
) -> Option<(SimTime, u64)> {
    walk.fill_ends(ctx, decisions);
    let ends: &[End] = walk.ends;
    let free_now = now_view.free_total(ConsumableIdx::NCPUS);
    rooms.clear();
    rooms.extend(head.draws.iter().map(|d| now_view.limit_room(d.limit)));
    let found = if head.draws.is_empty() {
        first_time_with(ends, head.ncpus, free_now)
    } else {
        first_time_where(
            ends,
            free_now,
            rooms,
            |rooms, end| {
                let ending = allocation_at(ctx, decisions, end.2);
                if let Some(draws) = ending.limit_draws.as_deref() {
                    for (h, room) in head.draws.iter().zip(rooms.iter_mut()) {
                        *room += drawn_from(draws, h.limit);
                    }
                }
            },
            |rooms, avail| {
                avail >= head.ncpus && head.draws.iter().zip(rooms).all(|(h, &r)| h.amount <= r)
            },
        )
    };
    found.map(|(i, avail)| (ends[i - 1].0, avail))
}

/// How much of limit `limit` `draws` take.
fn drawn_from(draws: &[LimitDraw], limit: u32) -> u64 {
    draws
        .iter()
        .filter(|d| d.limit == limit)
        .map(|d| d.amount)
        .sum()
}

/// Whether the head's draws still fit their rooms at the shadow time (`rooms`, one per draw)
/// once a job drawing `draws` holds them then.
fn leaves_room(head_draws: &[LimitDraw], rooms: &[u64], draws: &[LimitDraw]) -> bool {
    head_draws
        .iter()
        .zip(rooms)
        .all(|(h, &room)| h.amount.saturating_add(drawn_from(draws, h.limit)) <= room)
}

/// Takes a job's `draws` from the rooms the head's draws have at the shadow time.
fn take_draws(head_draws: &[LimitDraw], rooms: &mut [u64], draws: &[LimitDraw]) {
    for (h, room) in head_draws.iter().zip(rooms) {
        *room = room.saturating_sub(drawn_from(draws, h.limit));
    }
}
