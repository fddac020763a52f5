//! EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), with the reservation computed by the
//! placement policy.

use super::{Runnable, calendar_request, idle_of, start, start_heads};
use placesim_core::{
    Allocation, ClusterState, ConsumableIdx, Decision, JobId, PlacementPolicy, SchedContext,
    SchedulingPolicy, Scratch, ScratchBuf, SimTime, StateView,
};

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
///   ([`PlacementPolicy::fits_by_totals`]), the shadow time and the extra test are computed on
///   ncpus totals, and vnodes are placed only for the jobs that start. A candidate for which
///   it does not hold switches the rest of the pass to the vnode form.
/// - In the vnode form, the reservation walk starts where the ncpus free reach the head's need,
///   builds that state from the idle cluster when fewer vnodes are held then than released by
///   then, and reuses the previous pass's vnodes for the same head in the same state (see
///   [`Easy::without_shortcuts`] for the reference without these).
#[derive(Debug)]
pub struct Easy<P> {
    placement: P,
    runnable: Runnable,
    now_buf: ScratchBuf,
    shadow_buf: ScratchBuf,
    ends: Vec<End>,
    /// Per job: the ncpus its allocation holds, with the start it was read at.
    held: Vec<(SimTime, u64)>,
    /// The cluster with nothing running, to build shadow views from when that is nearer.
    idle: Option<ClusterState>,
    memo: Memo,
    shortcuts: Shortcuts,
}

/// Which reservation shortcuts are on, and how often each was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcuts {
    /// Whether shadow states may be built from the idle cluster, and reservations reused.
    pub enabled: bool,
    /// Shadow states built from the idle cluster.
    pub idle_builds: u64,
    /// Reservations reused from the previous pass.
    pub reuses: u64,
}

/// A running job (or one this pass starts) in order of estimated end: `(end, job, index,
/// ncpus held)`, where `index` counts `ctx.running` first, then the pass's decisions.
type End = (SimTime, JobId, usize, u64);

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

/// The head's last reservation placement, and the state it was placed in: the jobs still
/// holding resources at the shadow time, as `(estimated end, job)`. The state at the shadow
/// time is the idle cluster less those jobs' allocations, so the same head in the same state
/// gets the same vnodes from a placement whose answer depends only on the state
/// ([`PlacementPolicy::depends_only_on_state`]): reused instead of placed again. A big head
/// waits through many passes, and placing it costs O(its vnodes) each time.
#[derive(Debug, Default)]
struct Memo {
    head: Option<JobId>,
    still_held: Vec<(SimTime, JobId)>,
    allocation: Allocation,
}

impl<P: PlacementPolicy> Easy<P> {
    /// EASY placing jobs with `placement`.
    pub fn new(placement: P) -> Self {
        Easy {
            placement,
            runnable: Runnable::default(),
            now_buf: ScratchBuf::default(),
            shadow_buf: ScratchBuf::default(),
            ends: Vec::new(),
            held: Vec::new(),
            idle: None,
            memo: Memo::default(),
            shortcuts: Shortcuts {
                enabled: true,
                idle_builds: 0,
                reuses: 0,
            },
        }
    }

    /// EASY with every reservation found by the plain walk from the state now: no shadow
    /// state built from the idle cluster, no reservation reused. The reference the shortcuts
    /// are tested against; the decisions are the same, only slower.
    pub fn without_shortcuts(placement: P) -> Self {
        let mut easy = Easy::new(placement);
        easy.shortcuts.enabled = false;
        easy
    }

    /// The shortcuts' setting and how often each was taken so far.
    pub fn shortcuts(&self) -> Shortcuts {
        self.shortcuts
    }

    /// The reservation the first blocked job of `ctx`'s queue gets after step 1, with its
    /// vnodes, as step 2 computes it.
    pub fn reservation(&mut self, ctx: &SchedContext<'_>) -> Option<Reservation> {
        let mut decisions = Vec::new();
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let head_pos = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            &mut decisions,
        );
        let head = *ctx.queue.get(head_pos)?;
        let idle = idle_of(&mut self.idle, ctx.state);
        let mut shadow_view = Scratch::new(ctx.state, &mut self.shadow_buf);
        let mut walk = Walk {
            ends: &mut self.ends,
            held: &mut self.held,
            idle,
            memo: &mut self.memo,
            shortcuts: &mut self.shortcuts,
        };
        let start = reserve(
            ctx,
            &mut self.placement,
            &mut walk,
            head,
            &now_view,
            &mut shadow_view,
            &decisions,
        )?;
        Some(Reservation {
            job: head,
            start,
            allocation: self.memo.allocation.clone(),
        })
    }
}

impl<P: PlacementPolicy> SchedulingPolicy for Easy<P> {
    fn name(&self) -> String {
        "easy".to_owned()
    }

    fn drain_comments(&mut self, out: &mut Vec<(JobId, std::sync::Arc<str>)>) {
        out.append(&mut self.runnable.comments);
    }

    fn schedule(&mut self, ctx: &SchedContext<'_>, decisions: &mut Vec<Decision>) {
        let mut now_view = Scratch::new(ctx.state, &mut self.now_buf);
        let head_pos = start_heads(
            ctx,
            &mut self.placement,
            &mut self.runnable,
            &mut now_view,
            decisions,
        );
        let Some(&head) = ctx.queue.get(head_pos) else {
            return;
        };
        let scan_from = if ctx.freed_since_last_pass {
            head_pos + 1
        } else {
            (head_pos + 1).max(ctx.fresh_from)
        };
        let n_cons = ctx.state.cluster_consumables();
        let min_need = ctx.workload.min_request_ncpus();
        let head_request = calendar_request(ctx.workload.request_of(head));
        let head_need = ctx.workload.ncpus_of(head);
        let head_by_totals = self.placement.fits_by_totals(&head_request, &now_view);
        let idle = idle_of(&mut self.idle, ctx.state);
        let mut shadow_view = Scratch::new(ctx.state, &mut self.shadow_buf);
        let mut walk = Walk {
            ends: &mut self.ends,
            held: &mut self.held,
            idle,
            memo: &mut self.memo,
            shortcuts: &mut self.shortcuts,
        };
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
            let by_totals = head_by_totals && self.placement.fits_by_totals(request, &now_view);
            if matches!(held, Held::Unknown) && by_totals {
                fill_ends(&mut walk, ctx, decisions);
                let Some((time, free_ncpus)) = shadow_by_totals(walk.ends, head_need, free_now)
                else {
                    break;
                };
                held = Held::Totals { time, free_ncpus };
            }
            if !by_totals && !matches!(held, Held::Vnodes { .. }) {
                // Switch to (or start in) the vnode form. This pass's long backfills count as
                // running jobs that end after the shadow time; the head fits at that time (they
                // were admitted on that condition), so the search stops before releasing them.
                let found = reserve(
                    ctx,
                    &mut self.placement,
                    &mut walk,
                    head,
                    &now_view,
                    &mut shadow_view,
                    decisions,
                );
                // The head can run on the empty cluster, so releasing every running job always
                // finds a reservation; if it ever does not, backfill nothing more.
                let Some(start) = found else { break };
                held = Held::Vnodes { start, moved: None };
            }
            match &mut held {
                Held::Unknown => {
                    debug_assert!(false, "reservation used before it was computed");
                    break;
                }
                Held::Totals { time, free_ncpus } => {
                    let ends_by_shadow = ctx.now + ctx.workload.job(job).estimate <= *time;
                    if !ends_by_shadow && need + head_need > *free_ncpus {
                        continue;
                    }
                    let Some(allocation) = self.placement.place(request, &now_view) else {
                        continue;
                    };
                    if !ends_by_shadow {
                        *free_ncpus -= need;
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
                    if !ends_by_shadow
                        && need + head_need > shadow_view.free_total(ConsumableIdx::NCPUS)
                    {
                        continue;
                    }
                    let Some(allocation) = self.placement.place(request, &now_view) else {
                        continue;
                    };
                    if !ends_by_shadow {
                        shadow_view.take(&allocation);
                        let head_vnodes = moved.as_ref().unwrap_or(&walk.memo.allocation);
                        let still_fits = head_vnodes.parts(n_cons).all(|(v, amounts)| {
                            shadow_view.fits_chunk(v, amounts, head_vnodes.sharing)
                        });
                        if !still_fits {
                            match self.placement.place(&head_request, &shadow_view) {
                                Some(elsewhere) => *moved = Some(elsewhere),
                                None => {
                                    shadow_view.give(&allocation);
                                    continue;
                                }
                            }
                        }
                    }
                    start(job, allocation, &mut now_view, decisions);
                }
            }
        }
    }
}

/// Step 2 on totals: the first estimated end at which the ncpus free reach the head's need, and
/// the ncpus free then.
fn shadow_by_totals(ends: &[End], head_need: u64, free_now: u64) -> Option<(SimTime, u64)> {
    first_time_with(ends, head_need, free_now).map(|(i, avail)| (ends[i - 1].0, avail))
}

/// How many entries of `ends` must be released (a whole distinct end time at a time) before
/// the ncpus free, from `free_now`, reach `need`; and the ncpus free then.
fn first_time_with(ends: &[End], need: u64, free_now: u64) -> Option<(usize, u64)> {
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

/// What the reservation walk keeps between passes.
struct Walk<'a> {
    ends: &'a mut Vec<End>,
    held: &'a mut Vec<(SimTime, u64)>,
    idle: &'a ClusterState,
    memo: &'a mut Memo,
    shortcuts: &'a mut Shortcuts,
}

/// The allocation of entry `index` of the ends list.
fn allocation_at<'a>(
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

/// Step 2: the head's reservation: its shadow time, with its vnodes left in `walk.memo`.
/// `shadow_view` ends as the state at the shadow time.
///
/// Placing cannot succeed before the ncpus free reach the head's need, so the walk starts at
/// that time, found on totals. The state then is built from the nearer side: the view now with
/// the allocations released by then given back, or the idle cluster with the allocations still
/// held then taken (the same state: it depends only on what is held). A big head's shadow
/// time is late, when few jobs still run, so this costs the smaller of the two, not every
/// running job's vnodes. From there the walk gives back one end time at a time.
fn reserve<'s>(
    ctx: &SchedContext<'s>,
    placement: &mut dyn PlacementPolicy,
    walk: &mut Walk<'s>,
    head: JobId,
    now_view: &Scratch<'_>,
    shadow_view: &mut Scratch<'s>,
    decisions: &[Decision],
) -> Option<SimTime> {
    fill_ends(walk, ctx, decisions);
    let ends = &*walk.ends;
    let need = ctx.workload.ncpus_of(head);
    let request = calendar_request(ctx.workload.request_of(head));
    let free_now = now_view.free_total(ConsumableIdx::NCPUS);
    let (mut i, _avail) = first_time_with(ends, need, free_now)?;
    let vnodes_of = |range: &[End]| -> usize {
        range
            .iter()
            .map(|e| allocation_at(ctx, decisions, e.2).vnodes.len())
            .sum()
    };
    let enabled = walk.shortcuts.enabled;
    if enabled && vnodes_of(&ends[i..]) < vnodes_of(&ends[..i]) {
        walk.shortcuts.idle_builds += 1;
        shadow_view.reset_to(walk.idle);
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
    let memo = &mut *walk.memo;
    let same_state = enabled
        && memo.head == Some(head)
        && placement.depends_only_on_state()
        && memo.still_held.len() == ends.len() - i
        && memo
            .still_held
            .iter()
            .zip(&ends[i..])
            .all(|(&(end, job), e)| end == e.0 && job == e.1);
    if same_state {
        walk.shortcuts.reuses += 1;
        return Some(ends[i - 1].0);
    }
    let first = i;
    loop {
        if let Some(allocation) = placement.place(&request, shadow_view) {
            // Remembered only for a first-attempt success: then the state at `first` alone
            // decides it.
            memo.head = (i == first).then_some(head);
            memo.still_held.clear();
            memo.still_held.extend(ends[i..].iter().map(|e| (e.0, e.1)));
            memo.allocation = allocation;
            return Some(ends[i - 1].0);
        }
        let Some(next) = ends.get(i) else {
            memo.head = None;
            return None;
        };
        let t = next.0;
        while i < ends.len() && ends[i].0 == t {
            shadow_view.give(allocation_at(ctx, decisions, ends[i].2));
            i += 1;
        }
    }
}

/// Lists running jobs, and the jobs this pass has decided to start, by estimated end (ties by
/// job id), with the ncpus each holds (read from its allocation once per start).
/// A job already past its estimate (possible only when jobs may overrun) counts as ending now.
fn fill_ends(walk: &mut Walk<'_>, ctx: &SchedContext<'_>, decisions: &[Decision]) {
    let Walk { ends, held, .. } = walk;
    ends.clear();
    let n_cons = ctx.state.cluster_consumables();
    let jobs = ctx.workload.jobs().len();
    if held.len() != jobs {
        held.clear();
        held.resize(jobs, (SimTime(u64::MAX), 0));
    }
    let mut ncpus_held = |job: JobId, start: SimTime, allocation: &Allocation| {
        let entry = &mut held[job.index()];
        if entry.0 != start {
            *entry = (start, allocation.total(n_cons, ConsumableIdx::NCPUS));
        }
        entry.1
    };
    for (i, run) in ctx.running.iter().enumerate() {
        let ncpus = ncpus_held(run.job, run.start, &run.allocation);
        ends.push((run.estimated_end.max(ctx.now), run.job, i, ncpus));
    }
    for (i, d) in decisions.iter().enumerate() {
        let Decision::Start { job, allocation } = d;
        let end = ctx.now + ctx.workload.job(*job).estimate;
        let ncpus = ncpus_held(*job, ctx.now, allocation);
        ends.push((end, *job, ctx.running.len() + i, ncpus));
    }
    ends.sort_unstable();
}
