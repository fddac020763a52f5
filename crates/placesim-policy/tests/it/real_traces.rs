//! Whole real traces, with invariants checked from the outside, and a comparison against an
//! independent count-based implementation of FCFS and EASY.

use crate::common::{CheckingSink, VnodesOnly, run};
use placesim_core::SchedulingPolicy;
use placesim_core::{ResourceDefs, WalltimePolicy};
use placesim_policy::Discipline;
use placesim_policy::placement::FirstFit;
use placesim_policy::queue::{Backfill, Depth, Easy};
use placesim_workload::{SwfOptions, Trace, load_trace};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(path: PathBuf) -> Trace {
    load_trace(&path, &SwfOptions::default(), &ResourceDefs::default()).expect("trace loads")
}

/// The shipped KTH trace, or a shared one when `../shared/traces` is beside the project.
fn shared(name: &str) -> Option<Trace> {
    let path = repo().join("../shared/traces").join(name);
    if path.is_file() {
        Some(load(path))
    } else {
        eprintln!(
            "skipped: {} is absent (../shared/traces is not beside the project)",
            path.display()
        );
        None
    }
}

fn kth() -> Trace {
    load(repo().join("workloads/KTH-SP2-1996-2.1-cln.swf.gz"))
}

/// KTH-SP2's first `n` jobs, as a trace of their own.
fn kth_first(n: usize) -> Trace {
    let whole = kth();
    let first: Vec<placesim_core::Job> = whole.workload.jobs()[..n].to_vec();
    Trace {
        workload: placesim_core::Workload::new(first, whole.workload.requests().to_vec())
            .expect("a prefix of a workload"),
        records: n as u64,
        skipped: Default::default(),
        ..whole
    }
}

/// Runs `trace` under `policy` and checks every invariant; returns the start times by job id.
fn check_invariants(trace: &Trace, policy: Discipline) -> Vec<u64> {
    check_invariants_with(trace, policy.build().as_mut())
}

/// EASY whose placement never vouches for totals: the vnode-level reservation path.
fn easy_on_vnodes() -> Easy<VnodesOnly<FirstFit>> {
    Easy::new(VnodesOnly(FirstFit::default()))
}

fn check_invariants_with(trace: &Trace, policy: &mut dyn SchedulingPolicy) -> Vec<u64> {
    let (sink, stats, cluster): (CheckingSink, _, _) = run(trace, 1, policy, WalltimePolicy::Kill);
    let n = trace.workload.jobs().len();
    // Every record is accounted for: run, or skipped with a reason.
    assert_eq!(n as u64 + trace.skipped.total(), trace.records);
    assert!(
        stats.never_started.is_empty(),
        "{} jobs never started",
        stats.never_started.len()
    );
    assert_eq!(sink.starts.len(), n);
    assert_eq!(sink.ends.len(), n);
    assert!(sink.started_twice.is_empty() && sink.ended_twice.is_empty());
    // No job starts before its submit, and each ends at start + min(runtime, estimate).
    for (id, (start, _)) in &sink.starts {
        let job = trace.workload.job(*id);
        assert!(
            *start >= job.submit.as_secs(),
            "job {} starts at {start} before its submit",
            job.source_id
        );
        let end = sink.ends[id].end.as_secs();
        assert_eq!(end - start, job.runtime.min(job.estimate).as_secs());
    }
    // No vnode holds more than it has at any instant.
    assert_eq!(sink.first_oversubscription(&cluster), None);
    (0..n)
        .map(|i| sink.starts[&placesim_core::JobId::from_index(i)].0)
        .collect()
}

/// Which count-based discipline the reference runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reference {
    /// Heads in order while they fit.
    Fcfs,
    /// Heads, then backfilling by the shadow time and extra.
    Easy,
    /// Every job that fits, in queue order.
    Greedy,
    /// `queue-disciplines.md` §1.3 on a count profile: the first N jobs that cannot start get
    /// reservations (`usize::MAX`: conservative).
    Depth(usize),
}

/// Textbook count-based FCFS / EASY (Mu'alem & Feitelson 2001) and greedy, written
/// independently of the crate: processors are a count, the shadow time is the first estimated
/// end at which enough processors are free (all ends at that instant counted), extra is the
/// surplus then; greedy starts every queued job whose size fits what is free, in order.
fn reference_starts(trace: &Trace, discipline: Reference) -> Vec<u64> {
    reference_starts_sorted(trace, discipline, &|_, _| 0)
}

/// A job's place in a sorted queue at an instant: `key(job index, now)`, smaller first.
type QueueKey<'a> = &'a dyn Fn(usize, u64) -> i64;

/// As [`reference_starts`], with the queue sorted at every event by `key(job, now)` (smaller
/// first), then by submission order: PBS's `job_sort_key` and `job_sort_formula` on a
/// count-based machine.
fn reference_starts_sorted(trace: &Trace, discipline: Reference, key: QueueKey<'_>) -> Vec<u64> {
    reference_starts_limited(trace, discipline, key, None)
}

/// How many of the `running` jobs are `user`'s: what a per-user limit on running jobs counts.
fn jobs_of_user(jobs: &[placesim_core::Job], running: &[usize], user: u32) -> u64 {
    running
        .iter()
        .filter(|&&r| jobs[r].user() == Some(user))
        .count() as u64
}

/// As [`reference_starts_sorted`], with each user (SWF field 12) allowed at most `per_user`
/// running jobs, counted like processors: a job holds its user's count over `[start,
/// estimated end)`, and a job fits only if its user's count stays within the limit over its
/// whole estimate, as its processors do (PBS's `max_run = [u:PBS_GENERIC=N]`). Not for the
/// textbook EASY, whose shadow time and extra know only processors (depth 1 is EASY).
fn reference_starts_limited(
    trace: &Trace,
    discipline: Reference,
    key: QueueKey<'_>,
    per_user: Option<u64>,
) -> Vec<u64> {
    assert!(per_user.is_none() || discipline != Reference::Easy);
    let jobs = trace.workload.jobs();
    let user_of = |j: usize| jobs[j].user().filter(|_| per_user.is_some());
    // Whether user `u` may start one more job beside the `running` ones.
    let user_ok = |j: usize, running: &[usize]| match (user_of(j), per_user) {
        (Some(u), Some(limit)) => jobs_of_user(jobs, running, u) < limit,
        _ => true,
    };
    let runs: Vec<u64> = jobs
        .iter()
        .map(|j| j.runtime.min(j.estimate).as_secs())
        .collect();
    let mut start = vec![u64::MAX; jobs.len()];
    let mut free = trace.procs;
    let mut ends: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut running: Vec<usize> = Vec::new();
    let mut queue: Vec<usize> = Vec::new();
    let mut next = 0;
    while next < jobs.len() || !ends.is_empty() {
        let (now, ended) = next_instant(jobs, &mut next, &mut ends, &mut queue);
        for j in ended {
            free += u64::from(jobs[j].size);
            running.retain(|&r| r != j);
        }
        queue.sort_by_key(|&j| (key(j, now), j));
        let launch = |j: usize,
                      start: &mut [u64],
                      free: &mut u64,
                      running: &mut Vec<usize>,
                      ends: &mut BinaryHeap<Reverse<(u64, usize)>>| {
            start[j] = now;
            *free -= u64::from(jobs[j].size);
            running.push(j);
            ends.push(Reverse((now + runs[j], j)));
        };
        if let Reference::Depth(depth) = discipline {
            let mut holds = Holds::of(running.iter().map(|&r| {
                let end = (start[r] + jobs[r].estimate.as_secs()).max(now);
                (now, end, u64::from(jobs[r].size), user_of(r))
            }));
            let user_room =
                |holds: &[Hold], from: u64, to: u64, j: usize| match (user_of(j), per_user) {
                    (Some(u), Some(limit)) => user_fits(limit, holds, from, to, u),
                    _ => true,
                };
            let mut made = 0;
            let mut keep: Vec<usize> = Vec::new();
            for &j in &queue {
                let (size, estimate) = (u64::from(jobs[j].size), jobs[j].estimate.as_secs());
                if count_fits(trace.procs, &holds.list, now, now + estimate, size)
                    && user_room(&holds.list, now, now + estimate, j)
                {
                    holds.push((now, now + estimate, size, user_of(j)));
                    launch(j, &mut start, &mut free, &mut running, &mut ends);
                    continue;
                }
                keep.push(j);
                if made < depth {
                    let at = holds.earliest_start(trace.procs, now, estimate, size, |t| {
                        user_room(&holds.list, t, t + estimate, j)
                    });
                    if let Some(at) = at {
                        holds.push((at, at + estimate, size, user_of(j)));
                        made += 1;
                    }
                }
            }
            queue = keep;
            continue;
        }
        if discipline == Reference::Greedy {
            let mut keep: Vec<usize> = Vec::new();
            for &j in &queue {
                if u64::from(jobs[j].size) <= free && user_ok(j, &running) {
                    launch(j, &mut start, &mut free, &mut running, &mut ends);
                } else {
                    keep.push(j);
                }
            }
            queue = keep;
            continue;
        }
        let mut i = 0;
        while i < queue.len()
            && u64::from(jobs[queue[i]].size) <= free
            && user_ok(queue[i], &running)
        {
            launch(queue[i], &mut start, &mut free, &mut running, &mut ends);
            i += 1;
        }
        let mut keep: Vec<usize> = Vec::new();
        if discipline == Reference::Easy && i < queue.len() {
            let head = queue[i];
            let need = u64::from(jobs[head].size);
            let mut by_end: Vec<(u64, usize)> = running
                .iter()
                .map(|&r| (start[r] + jobs[r].estimate.as_secs(), r))
                .collect();
            by_end.sort();
            let (mut avail, mut shadow, mut k) = (free, u64::MAX, 0);
            while k < by_end.len() {
                let t = by_end[k].0;
                while k < by_end.len() && by_end[k].0 == t {
                    avail += u64::from(jobs[by_end[k].1].size);
                    k += 1;
                }
                if avail >= need {
                    shadow = t.max(now);
                    break;
                }
            }
            let mut extra = avail - need;
            keep.push(head);
            for &j in &queue[i + 1..] {
                let size = u64::from(jobs[j].size);
                let by_shadow = now + jobs[j].estimate.as_secs() <= shadow;
                if size <= free && (by_shadow || size <= extra) {
                    if !by_shadow {
                        extra -= size;
                    }
                    launch(j, &mut start, &mut free, &mut running, &mut ends);
                } else {
                    keep.push(j);
                }
            }
        } else {
            keep.extend_from_slice(&queue[i..]);
        }
        queue = keep;
    }
    start
}

/// The next instant of a count-based reference (the earlier of the next end and the next
/// submission), with the jobs ending then taken off `ends` and returned, and the jobs
/// submitted then (from `next` on) added to `queue`.
fn next_instant(
    jobs: &[placesim_core::Job],
    next: &mut usize,
    ends: &mut BinaryHeap<Reverse<(u64, usize)>>,
    queue: &mut Vec<usize>,
) -> (u64, Vec<usize>) {
    let t_end = ends.peek().map_or(u64::MAX, |Reverse((t, _))| *t);
    let t_sub = jobs.get(*next).map_or(u64::MAX, |j| j.submit.as_secs());
    let now = t_end.min(t_sub);
    let mut ended = Vec::new();
    while let Some(&Reverse((t, j))) = ends.peek() {
        if t != now {
            break;
        }
        ends.pop();
        ended.push(j);
    }
    while *next < jobs.len() && jobs[*next].submit.as_secs() == now {
        queue.push(*next);
        *next += 1;
    }
    (now, ended)
}

/// A hold on the count-based machine: `[start, end)`, processors, and the user it counts for
/// under a per-user limit.
type Hold = (u64, u64, u64, Option<u32>);

/// Whether user `user` has room for one more job under `limit` over the whole of `[from,
/// to)` given the holds: as for processors, checking `from` and every start inside suffices.
fn user_fits(limit: u64, holds: &[Hold], from: u64, to: u64, user: u32) -> bool {
    let mine = |t: u64| {
        holds
            .iter()
            .filter(|h| h.3 == Some(user) && h.0 <= t && t < h.1)
            .count() as u64
    };
    std::iter::once(from)
        .chain(holds.iter().map(|h| h.0).filter(|&s| from < s && s < to))
        .all(|t| mine(t) < limit)
}

/// Whether `size` processors of `procs` are free over the whole of `[from, to)` given the
/// `holds` (`[start, end)`, processors): the use only rises where a hold starts, so checking
/// `from` and every start inside the interval suffices.
fn count_fits(procs: u64, holds: &[Hold], from: u64, to: u64, size: u64) -> bool {
    let used_at = |t: u64| -> u64 {
        holds
            .iter()
            .filter(|h| h.0 <= t && t < h.1)
            .map(|h| h.2)
            .sum()
    };
    std::iter::once(from)
        .chain(holds.iter().map(|h| h.0).filter(|&s| from < s && s < to))
        .all(|t| used_at(t) + size <= procs)
}

/// The holds of one pass of a count-based reference, with what [`Holds::earliest_start`]
/// needs kept sorted as they are added: the changes of the use over time, and the ends.
/// Sorting them afresh for every waiting job, or summing the holds afresh at every candidate
/// start, made conservative backfilling's reference take minutes on CTC-SP2.
struct Holds {
    list: Vec<Hold>,
    /// `(time, change of the processors in use)`, by time: each hold that is not empty rises
    /// at its start and falls at its end.
    changes: Vec<(u64, i64)>,
    /// Every hold's end, by time.
    ends: Vec<u64>,
}

impl Holds {
    fn of(holds: impl IntoIterator<Item = Hold>) -> Holds {
        let mut all = Holds {
            list: Vec::new(),
            changes: Vec::new(),
            ends: Vec::new(),
        };
        for h in holds {
            all.push(h);
        }
        all
    }

    fn push(&mut self, h: Hold) {
        self.list.push(h);
        if h.0 < h.1 {
            for change in [(h.0, h.2 as i64), (h.1, -(h.2 as i64))] {
                let at = self.changes.partition_point(|c| c.0 <= change.0);
                self.changes.insert(at, change);
            }
        }
        let at = self.ends.partition_point(|&e| e <= h.1);
        self.ends.insert(at, h.1);
    }

    /// The earliest of the candidate starts (`now` and every end of something held) at which
    /// `size` processors of `procs` are free for `estimate` ([`count_fits`]) and `also` holds.
    /// One sweep: the use at each candidate carries over from the one before, and the
    /// interval is read forward from there.
    fn earliest_start(
        &self,
        procs: u64,
        now: u64,
        estimate: u64,
        size: u64,
        also: impl Fn(u64) -> bool,
    ) -> Option<u64> {
        let changes = &self.changes;
        let room = procs as i64 - size as i64;
        // The candidates in time order: `now` among the ends.
        let (before, after) = self.ends.split_at(self.ends.partition_point(|&e| e < now));
        let candidates = before.iter().chain([&now]).chain(after).copied();
        let (mut next, mut used) = (0, 0i64);
        let mut last = None;
        for t in candidates {
            if last.replace(t) == Some(t) {
                continue;
            }
            while next < changes.len() && changes[next].0 <= t {
                used += changes[next].1;
                next += 1;
            }
            // The use at `t`, then at every later time a change comes inside the interval
            // (all of a time's changes applied before it is read).
            let mut inside = used;
            let mut free_throughout = inside <= room;
            let mut k = next;
            while free_throughout && k < changes.len() && changes[k].0 < t + estimate {
                let at = changes[k].0;
                while k < changes.len() && changes[k].0 == at {
                    inside += changes[k].1;
                    k += 1;
                }
                free_throughout = inside <= room;
            }
            if free_throughout && also(t) {
                return Some(t);
            }
        }
        None
    }
}

/// [`Holds::earliest_start`] against its definition: the first of `now` and the holds' ends,
/// sorted, at which [`count_fits`] (the use summed afresh at the start and at every start
/// inside) and the extra condition hold, on random holds (empty ones, shared times, ends before
/// `now`, empty intervals).
#[test]
fn earliest_start_is_the_first_candidate_where_the_use_summed_afresh_fits() {
    let mut rng = placesim_testkit::Lcg(0x2545_f491_4f6c_dd1d);
    let mut next = |n: u64| rng.below(n);
    let (mut found, mut at_now, mut cases) = (0, 0, 0);
    for _ in 0..20_000 {
        let list: Vec<Hold> = (0..next(9))
            .map(|_| {
                let start = next(20);
                (start, start + next(10), 1 + next(6), None)
            })
            .collect();
        let holds = Holds::of(list.iter().copied());
        let (now, estimate, size) = (next(15), next(12), next(13));
        let odd = next(4) == 0;
        let also = |t: u64| !odd || t % 2 == 1;
        let mut candidates: Vec<u64> = list.iter().map(|h| h.1).chain([now]).collect();
        candidates.sort_unstable();
        candidates.dedup();
        let expected = candidates
            .into_iter()
            .find(|&t| count_fits(10, &list, t, t + estimate, size) && also(t));
        assert_eq!(
            holds.earliest_start(10, now, estimate, size, also),
            expected,
            "{list:?} from {now} for {size} over {estimate} s (odd only: {odd})"
        );
        found += u64::from(expected.is_some());
        at_now += u64::from(expected == Some(now));
        cases += 1;
    }
    // Starts now, later and never are all common.
    assert!(
        at_now > cases / 10 && found - at_now > cases / 10,
        "{at_now}, {found}"
    );
    assert!(found < cases * 9 / 10, "{found} of {cases}");
}

/// That `ours` starts every job when `reference` does, naming the first job that differs.
fn assert_same_starts(ours: &[u64], reference: &[u64], what: &str) {
    let first_diff = ours.iter().zip(reference).position(|(a, b)| a != b);
    assert_eq!(
        first_diff, None,
        "{what}: first job index whose start differs"
    );
}

/// Runs `trace` under every discipline and form named, each against the count-based
/// reference for its definition: every invariant holds and every job starts when the
/// reference starts it.
fn assert_matches_reference(
    trace: &Trace,
    runs: Vec<(&str, Box<dyn SchedulingPolicy>, Reference)>,
) {
    for (name, mut policy, discipline) in runs {
        let ours = check_invariants_with(trace, policy.as_mut());
        let reference = reference_starts(trace, discipline);
        assert_same_starts(&ours, &reference, name);
    }
}

/// FCFS, EASY (its own pass, forced onto vnodes, and the general pass at depth 1 on totals
/// and on vnodes) and greedy.
fn classic() -> Vec<(&'static str, Box<dyn SchedulingPolicy>, Reference)> {
    vec![
        ("fcfs", Discipline::Fcfs.build(), Reference::Fcfs),
        ("easy", Discipline::EASY.build(), Reference::Easy),
        (
            "easy on vnodes",
            Box::new(easy_on_vnodes()),
            Reference::Easy,
        ),
        (
            "depth 1",
            Box::new(Backfill::new(FirstFit::default(), Depth::Jobs(1))),
            Reference::Easy,
        ),
        (
            "depth 1 on vnodes",
            Box::new(Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(1))),
            Reference::Easy,
        ),
        ("greedy", Discipline::Greedy.build(), Reference::Greedy),
    ]
}

/// Depth 2, depth 4 and conservative, each on totals, and depth 2 also on vnodes.
fn deeper() -> Vec<(&'static str, Box<dyn SchedulingPolicy>, Reference)> {
    vec![
        (
            "depth 2",
            Discipline::EASY
                .with_backfill_depth(2)
                .expect("easy")
                .build(),
            Reference::Depth(2),
        ),
        (
            "depth 2 on vnodes",
            Box::new(Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(2))),
            Reference::Depth(2),
        ),
        (
            "depth 4",
            Discipline::EASY
                .with_backfill_depth(4)
                .expect("easy")
                .build(),
            Reference::Depth(4),
        ),
        (
            "conservative",
            Discipline::Conservative.build(),
            Reference::Depth(usize::MAX),
        ),
    ]
}

#[test]
fn kth_under_fcfs_easy_and_greedy_keeps_every_invariant_and_matches_count_based_reference() {
    let trace = kth();
    assert_eq!((trace.records, trace.procs), (27_992, 100));
    assert_matches_reference(&trace, classic());
}

#[test]
fn kth_under_depth_2_4_and_conservative_matches_count_based_reference() {
    let trace = kth();
    assert_matches_reference(&trace, deeper());
    // Conservative on vnodes too: the vnode form's reservations, checked at their starts.
    assert_matches_reference(
        &trace,
        vec![(
            "conservative on vnodes",
            Box::new(Backfill::on_vnodes(FirstFit::default(), Depth::All)),
            Reference::Depth(usize::MAX),
        )],
    );
}

// The plain pass that runs while site reservations are to come (`Backfill::by_definition`), on
// KTH-SP2 without any: the count-based reference's schedules at depth 1, depth 2 and
// conservative. They are three tests so that the test threads share them. Conservative by
// definition recomputes the state at every candidate start of every waiting job; on the whole
// trace it alone took 65 s of a debug build, the crate's longest test by far, so it replays the
// first CONSERVATIVE_BY_DEFINITION_JOBS jobs. The calendar's conservative pass is checked on
// the whole of KTH-SP2 just above, and of CTC-SP2.
const CONSERVATIVE_BY_DEFINITION_JOBS: usize = 12_000;

/// Checks `Backfill::by_definition` at `depth` against the count-based reference's schedule.
fn assert_by_definition_matches(trace: &Trace, name: &str, depth: Depth, reference: Reference) {
    let policy = Box::new(Backfill::by_definition(FirstFit::default(), depth));
    assert_matches_reference(trace, vec![(name, policy, reference)]);
}

#[test]
fn kth_depth_1_by_definition_matches_count_based_reference() {
    let name = "depth 1 by definition";
    assert_by_definition_matches(&kth(), name, Depth::Jobs(1), Reference::Easy);
}

#[test]
fn kth_depth_2_by_definition_matches_count_based_reference() {
    let name = "depth 2 by definition";
    assert_by_definition_matches(&kth(), name, Depth::Jobs(2), Reference::Depth(2));
}

#[test]
fn kth_conservative_by_definition_matches_count_based_reference() {
    let trace = kth_first(CONSERVATIVE_BY_DEFINITION_JOBS);
    // The prefix still tells conservative from depth 2: the reference starts some job at
    // another time under each.
    assert_ne!(
        reference_starts(&trace, Reference::Depth(2)),
        reference_starts(&trace, Reference::Depth(usize::MAX)),
        "conservative and depth 2 give the same schedule on the prefix"
    );
    let name = "conservative by definition";
    assert_by_definition_matches(&trace, name, Depth::All, Reference::Depth(usize::MAX));
}

#[test]
fn ctc_sp2_from_shared_traces_keeps_every_invariant_and_matches_reference() {
    let Some(trace) = shared("CTC-SP2-1996-3.1-cln.swf.gz") else {
        return;
    };
    assert_eq!(trace.records, 77_222);
    assert_matches_reference(&trace, classic());
}

#[test]
fn ctc_sp2_under_depth_2_4_and_conservative_matches_count_based_reference() {
    let Some(trace) = shared("CTC-SP2-1996-3.1-cln.swf.gz") else {
        return;
    };
    assert_matches_reference(&trace, deeper());
}

#[test]
fn llnl_thunder_with_unsimulable_records_is_fully_accounted_for() {
    let Some(trace) = shared("LLNL-Thunder-2007-1.1-cln.swf.gz") else {
        return;
    };
    // Its submits go down 808 times, but only on records that are skipped anyway.
    assert!(!trace.resorted);
    assert_eq!(trace.records, 121_039);
    // 2,248 lines have neither a requested nor an allocated size; 1,190 have a negative run time.
    assert_eq!(
        trace.skipped.get(placesim_workload::SkipReason::NoSize),
        2_248
    );
    check_invariants(&trace, Discipline::EASY);
}

/// PBS's `job_sort_key` on KTH-SP2: every discipline and form, walking the queue sorted by
/// ncpus HIGH and, separately, by walltime LOW, equals the count-based reference kept sorted
/// by the same key. The disciplines' shortcuts for passes after which nothing was freed see
/// the sorted queue, where new jobs may land before older ones.
#[test]
fn kth_sorted_by_job_sort_key_matches_count_based_reference() {
    use placesim_core::ConsumableIdx;
    use placesim_policy::queue::{JobOrder, SortKey, SortLine};
    let trace = kth();
    let jobs = trace.workload.jobs();
    let size = |j: usize| i64::from(jobs[j].size);
    let estimate = |j: usize| jobs[j].estimate.as_secs() as i64;
    let by_estimate = |j: usize, _: u64| estimate(j);
    let orders: [(SortLine, QueueKey<'_>); 2] = [
        (
            SortLine {
                key: SortKey::Resource(ConsumableIdx::NCPUS),
                high_first: true,
            },
            &|j, _| -size(j),
        ),
        (
            SortLine {
                key: SortKey::Walltime,
                high_first: false,
            },
            &by_estimate,
        ),
    ];
    for (line, key) in orders {
        let order = JobOrder {
            keys: vec![line],
            by_queue: true,
            round_robin: false,
            queue_priority: Vec::new(),
            ..JobOrder::default()
        };
        assert_sorted_matches_reference(&trace, &order, key, &format!("{line:?}"));
    }
}

/// Every discipline and form of [`classic`] and [`deeper`], walking the queue in `order`,
/// against the count-based reference sorted by `key` (`label` names the order in messages).
fn assert_sorted_matches_reference(
    trace: &Trace,
    order: &placesim_policy::queue::JobOrder,
    key: QueueKey<'_>,
    label: &str,
) {
    for (name, policy, discipline) in classic().into_iter().chain(deeper()) {
        let mut ordered = placesim_policy::queue::Ordered::new(policy, order.clone());
        let ours = check_invariants_with(trace, &mut ordered);
        let reference = reference_starts_sorted(trace, discipline, key);
        assert_same_starts(&ours, &reference, &format!("{name} sorted by {label}"));
    }
}

/// PBS's `job_sort_formula` on KTH-SP2, higher first: one that does not change with time
/// (`walltime / ncpus`) and one that does (`eligible_time * ncpus`, evaluated at every pass).
/// Every discipline and form equals the count-based reference sorted by the same values at
/// every event.
#[test]
fn kth_sorted_by_job_sort_formula_matches_count_based_reference() {
    use placesim_core::ConsumableIdx;
    use placesim_policy::queue::{Formula, JobOrder, Term};
    let trace = kth();
    let jobs = trace.workload.jobs();
    let terms = |name: &str| match name {
        "ncpus" => Ok(Term::Resource(ConsumableIdx::NCPUS)),
        "walltime" => Ok(Term::Walltime),
        "eligible_time" => Ok(Term::EligibleTime),
        other => Err(format!("unknown term `{other}`")),
    };
    // Both are whole numbers here (walltime / ncpus is floored to keep the reference exact).
    let static_key =
        |j: usize, _: u64| -((jobs[j].estimate.as_secs() / u64::from(jobs[j].size)) as i64);
    let dynamic_key =
        |j: usize, now: u64| -(((now - jobs[j].submit.as_secs()) * u64::from(jobs[j].size)) as i64);
    let formulas: [(&str, QueueKey<'_>); 2] = [
        ("walltime // ncpus", &static_key),
        ("eligible_time * ncpus", &dynamic_key),
    ];
    for (text, key) in formulas {
        let order = JobOrder {
            formula: Some(std::sync::Arc::new(Formula::parse(text, &terms).unwrap())),
            by_queue: true,
            ..JobOrder::default()
        };
        assert_sorted_matches_reference(&trace, &order, key, text);
    }
}

/// PBS's `max_run = "[u:PBS_GENERIC=2]"` on KTH-SP2's first 6,000 jobs (the limit makes
/// long queues, which the conservative reference takes minutes over on the whole trace):
/// every discipline, with the limit held in
/// the cluster state and enforced by the limits' placement around first fit (EASY on totals,
/// carrying the head's limit room beside its ncpus; the others on vnodes, since a limit is
/// not among their totals), equals the count-based reference in which each user's running
/// jobs are held like processors (EASY is the reference's depth 1). The limit binds:
/// the same disciplines without it start jobs at other times.
#[test]
fn kth_under_a_per_user_run_limit_matches_count_based_reference() {
    use placesim_policy::limits::{
        Counted, Entity, LimitEntry, LimitScope, LimitSetting, apply_limits,
    };
    use placesim_policy::placement::Limited;
    let trace = kth_first(6_000);
    let per_user = 2;
    let settings = [LimitSetting {
        at_submit: false,
        scope: LimitScope::Server,
        counted: Counted::Jobs,
        entries: vec![LimitEntry {
            entity: Entity::User,
            name: None,
            value: per_user,
        }],
    }];
    let (workload, _, limits) = apply_limits(trace.workload.clone(), &settings);
    let limited = Trace {
        workload,
        path: trace.path.clone(),
        header: trace.header.clone(),
        bad_lines: trace.bad_lines.clone(),
        skipped: trace.skipped,
        kept_field: trace.kept_field.clone(),
        extended: trace.extended.clone(),
        ..trace
    };
    let placement = || Limited::new(FirstFit::default(), limits.run.texts.clone());
    let runs: Vec<(&str, Box<dyn SchedulingPolicy>, Reference)> = vec![
        (
            "fcfs",
            Discipline::Fcfs.build_with(Box::new(placement())),
            Reference::Fcfs,
        ),
        (
            "easy",
            Discipline::EASY.build_with(Box::new(placement())),
            Reference::Depth(1),
        ),
        (
            "greedy",
            Discipline::Greedy.build_with(Box::new(placement())),
            Reference::Greedy,
        ),
        (
            "depth 2",
            Box::new(Backfill::new(placement(), Depth::Jobs(2))),
            Reference::Depth(2),
        ),
        (
            "conservative",
            Box::new(Backfill::new(placement(), Depth::All)),
            Reference::Depth(usize::MAX),
        ),
    ];
    for (name, mut policy, discipline) in runs {
        let mut state = placesim_core::ClusterState::new(
            placesim_core::Cluster::homogeneous(limited.procs, 1).expect("cluster"),
        );
        state.set_run_limits(&limits.run.values);
        let mut sink = crate::common::CheckingSink::default();
        let stats = placesim_testkit::Replay::from_state(&limited.workload, state)
            .walltime(WalltimePolicy::Kill)
            .run(policy.as_mut(), &mut sink);
        assert!(stats.never_started.is_empty(), "{name}");
        let ours: Vec<u64> = (0..limited.workload.jobs().len())
            .map(|i| sink.starts[&placesim_core::JobId::from_index(i)].0)
            .collect();
        let reference = reference_starts_limited(&limited, discipline, &|_, _| 0, Some(per_user));
        assert_same_starts(&ours, &reference, name);
        let unlimited = reference_starts(&trace, discipline);
        assert_ne!(reference, unlimited, "{name}: the limit binds");
    }
}

/// PBS fairshare by its plain definition on a count-based machine, written independently of
/// the crate: every user is an entity of one share in the group `group_of` names (0 for all:
/// every user under `unknown`), each group with as many users and one share under the root
/// (so that of two entities the more deserving is the one whose group has less temporary
/// usage, then the one with less of its own), usage is `ncpus*walltime`, and a group's usage
/// is what its users' jobs add to it. At each instant with a submit or an end (a cycle): each
/// job running at the last cycle and still running adds its ncpus times the seconds since to
/// its user and its group; every usage decays once per `decay_s` passed since the first
/// cycle's clock, never below 1; temporary usage starts from usage. Then, until every waiting
/// job was looked at, the most deserving one (ties by submission) is looked at: it starts if
/// it fits over its whole estimate, else it gets a reservation at the earliest time it fits
/// while fewer than `depth` were made (`None`: greedy, never); a start or a reservation adds
/// its ncpus times its estimate to its user's and its group's temporary usage.
fn reference_fairshare(
    trace: &Trace,
    depth: Option<usize>,
    decay_s: u64,
    group_of: &dyn Fn(i64) -> i64,
) -> Vec<u64> {
    use std::collections::HashMap;
    let jobs = trace.workload.jobs();
    let user = |j: usize| jobs[j].user().map_or(-1, i64::from);
    // Users and groups in one map: a user by its number, a group by `GROUP` less its own.
    const GROUP: i64 = -(1 << 40);
    let path = |j: usize| [GROUP - group_of(user(j)), user(j)];
    let size = |j: usize| u64::from(jobs[j].size);
    let estimate = |j: usize| jobs[j].estimate.as_secs();
    let runs: Vec<u64> = jobs
        .iter()
        .map(|j| j.runtime.min(j.estimate).as_secs())
        .collect();
    let mut start = vec![u64::MAX; jobs.len()];
    let mut usage: HashMap<i64, f64> = HashMap::new();
    let mut last_running: Vec<(usize, f64)> = Vec::new();
    let mut last_decay: Option<u64> = None;
    let mut running: Vec<usize> = Vec::new();
    let mut queue: Vec<usize> = Vec::new();
    let mut next = 0;
    loop {
        let t_end = running.iter().map(|&r| start[r] + runs[r]).min();
        let t_sub = jobs.get(next).map(|j| j.submit.as_secs());
        let Some(now) = [t_end, t_sub].into_iter().flatten().min() else {
            break;
        };
        running.retain(|&r| start[r] + runs[r] != now);
        while next < jobs.len() && jobs[next].submit.as_secs() == now {
            queue.push(next);
            next += 1;
        }
        for &(j, used_then) in &last_running {
            if running.contains(&j) {
                let used_now = (size(j) * (now - start[j])) as f64;
                for node in path(j) {
                    *usage.entry(node).or_insert(1.0) += (used_now - used_then).max(0.0);
                }
            }
        }
        let clock = *last_decay.get_or_insert(now);
        let (mut t, mut decayed) = (now, false);
        while t - clock > decay_s {
            for u in usage.values_mut() {
                *u = (*u * 0.5).max(1.0);
            }
            t -= decay_s;
            decayed = true;
        }
        if decayed {
            last_decay = Some(now - (now - clock) % decay_s);
        }
        let mut temp = usage.clone();
        let mut holds = Holds::of(
            running
                .iter()
                .map(|&r| (now, (start[r] + estimate(r)).max(now), size(r), None)),
        );
        let mut made = 0;
        let mut left = queue.clone();
        while !left.is_empty() {
            let best = (0..left.len())
                .min_by(|&a, &b| {
                    let temp_of = |j: usize| path(j).map(|n| temp.get(&n).copied().unwrap_or(1.0));
                    let (ta, tb) = (temp_of(left[a]), temp_of(left[b]));
                    ta[0]
                        .total_cmp(&tb[0])
                        .then(ta[1].total_cmp(&tb[1]))
                        .then(left[a].cmp(&left[b]))
                })
                .expect("a job left");
            let j = left.remove(best);
            let (n, e) = (size(j), estimate(j));
            let counted = if count_fits(trace.procs, &holds.list, now, now + e, n) {
                holds.push((now, now + e, n, None));
                start[j] = now;
                running.push(j);
                queue.retain(|&q| q != j);
                true
            } else if depth.is_some_and(|d| made < d) {
                let at = holds.earliest_start(trace.procs, now, e, n, |_| true);
                if let Some(at) = at {
                    holds.push((at, at + e, n, None));
                    made += 1;
                }
                at.is_some()
            } else {
                false
            };
            if counted {
                for node in path(j) {
                    *temp.entry(node).or_insert(1.0) += (n * e) as f64;
                }
            }
        }
        last_running = running
            .iter()
            .map(|&r| (r, (size(r) * (now - start[r])) as f64))
            .collect();
    }
    start
}

/// PBS fairshare (one share per user, `ncpus*walltime`, decay every 2 days) on KTH-SP2's first
/// 6,000 jobs: greedy, EASY and depth 2, each walking the queue in fairshare order re-sorted
/// after every start and top job, equal the plain definition on a count-based machine. The
/// order binds: without fairshare the starts differ.
#[test]
fn kth_under_fairshare_matches_its_plain_definition() {
    use placesim_policy::queue::Ordered;
    let trace = kth_first(6_000);
    let decay_s = 2 * 86_400;
    let order = by_fairshare_over("", decay_s);
    let runs: Vec<(&str, Discipline, Option<usize>)> = vec![
        ("greedy", Discipline::Greedy, None),
        ("easy", Discipline::EASY, Some(1)),
        (
            "depth 2",
            Discipline::EASY.with_backfill_depth(2).expect("easy"),
            Some(2),
        ),
    ];
    for (name, discipline, depth) in runs {
        let mut policy = Ordered::new(discipline.build(), order.clone());
        let ours = check_invariants_with(&trace, &mut policy);
        let reference = reference_fairshare(&trace, depth, decay_s, &|_| 0);
        assert_same_starts(&ours, &reference, name);
        let unfair = check_invariants_with(&trace, discipline.build().as_mut());
        assert_ne!(ours, unfair, "{name}: fairshare changes the order");
    }
}

/// PBS fairshare over three groups of one share under the root, each with as many users of
/// one share (KTH-SP2's first 6,000 jobs have 104 users: one placeholder that never submits
/// fills the last group), so that a job's group's usage orders it first: greedy and EASY
/// equal the plain definition on a count-based machine. A group accrues while any of its
/// users runs, and is compared when a user of it with nothing running waits. The groups
/// bind: with every user under `unknown` the starts differ.
#[test]
fn kth_under_fairshare_in_groups_matches_its_plain_definition() {
    use placesim_policy::queue::Ordered;
    let trace = kth_first(6_000);
    let decay_s = 2 * 86_400;
    let users: Vec<u32> = trace
        .workload
        .jobs()
        .iter()
        .filter_map(|j| j.user())
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();
    assert_eq!(users.len(), 104, "the users of KTH-SP2's first 6,000 jobs");
    let groups = 3;
    let group_of = |user: i64| {
        let place = users.iter().position(|&u| i64::from(u) == user);
        place.map_or(-1, |p| (p % groups) as i64)
    };
    let mut tree: String = (0..groups)
        .map(|g| format!("grp{g} {} root 1\n", g + 1))
        .collect();
    for (p, u) in users.iter().enumerate() {
        tree += &format!("{u} {} grp{} 1\n", p + 10, p % groups);
    }
    tree += &format!("placeholder 9 grp{} 1\n", users.len() % groups);
    let order = by_fairshare_over(&tree, decay_s);
    let runs: Vec<(&str, Discipline, Option<usize>)> = vec![
        ("greedy", Discipline::Greedy, None),
        ("easy", Discipline::EASY, Some(1)),
    ];
    for (name, discipline, depth) in runs {
        let mut policy = Ordered::new(discipline.build(), order.clone());
        let ours = check_invariants_with(&trace, &mut policy);
        let reference = reference_fairshare(&trace, depth, decay_s, &group_of);
        assert_same_starts(&ours, &reference, name);
        let flat = reference_fairshare(&trace, depth, decay_s, &|_| 0);
        assert_ne!(ours, flat, "{name}: the groups change the order");
    }
}

/// A `resource_group` tree with a group of its own under the root for each user of `trace`,
/// the user under it, one share each.
fn group_per_user(trace: &Trace) -> String {
    let users: std::collections::BTreeSet<u32> = trace
        .workload
        .jobs()
        .iter()
        .filter_map(|j| j.user())
        .collect();
    users
        .iter()
        .map(|u| format!("g{u} {} root 1\n{u} {} g{u} 1\n", 2 * u + 10, 2 * u + 11))
        .collect()
}

/// PBS's order by fairshare over `tree` (its text), per user, on requested ncpus-seconds,
/// halved every `decay_s`.
fn by_fairshare_over(tree: &str, decay_s: u64) -> placesim_policy::queue::JobOrder {
    use placesim_policy::queue::{
        FairshareEntity, FairshareSettings, FairshareTree, JobOrder, UsageRate,
    };
    JobOrder {
        fairshare: Some(std::sync::Arc::new(FairshareSettings {
            tree: FairshareTree::parse(tree, 1).expect("a resource_group tree"),
            entity: FairshareEntity::User,
            usage: UsageRate {
                per_second_of: vec![placesim_core::ConsumableIdx::NCPUS],
                requested: true,
            },
            decay_time_s: Some(decay_s),
            decay_factor: 0.5,
            queue_names: Vec::new(),
        })),
        by_fairshare: true,
        ..JobOrder::default()
    }
}

/// A fairshare pass whose jobs after its last start or top job are found out of order is
/// kept rather than run again where the discipline says it would decide alike, with its
/// comments on those jobs put in the new order. Under greedy and EASY, on KTH-SP2's
/// first 6,000 jobs with every user under `unknown` and with a group of its own per user, on
/// one- and four-processor vnodes, the starts with their vnodes, the comments in their order
/// and the estimates (each one that says something new of its job, as the sink keeps them)
/// equal those of the plain definition, which runs every such pass again; passes are kept
/// in each.
#[test]
fn fairshare_passes_kept_alike_decide_as_passes_run_again() {
    use placesim_policy::queue::Ordered;
    let trace = kth_first(6_000);
    let groups = group_per_user(&trace);
    // Each estimate that says something new of its job: a repeat of its last is not news.
    let news = |estimates: &[String]| {
        let mut last = std::collections::HashMap::new();
        estimates
            .iter()
            .filter(|e| {
                let (job_at, rest) = e.split_once(" at ").expect("an estimate line");
                let job = job_at.split_once(": ").expect("a time").1;
                last.insert(job.to_owned(), rest.to_owned()).as_deref() != Some(rest)
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    for (tree_name, tree) in [("under unknown", ""), ("a group each", groups.as_str())] {
        let order = by_fairshare_over(tree, 86_400);
        for ncpus in [1, 4] {
            let cluster = placesim_core::Cluster::homogeneous(trace.procs.div_ceil(ncpus), ncpus)
                .expect("a cluster of the trace");
            for (name, discipline) in [("greedy", Discipline::Greedy), ("easy", Discipline::EASY)] {
                let told = |mut policy: Ordered<Box<dyn SchedulingPolicy>>| {
                    let mut sink = crate::common::Seen::default();
                    placesim_testkit::Replay::on(&trace.workload, cluster.clone())
                        .run(&mut policy, &mut sink);
                    (sink, policy.passes_kept_alike())
                };
                let (kept, n_kept) = told(Ordered::new(discipline.build(), order.clone()));
                let (again, n_again) = told(Ordered::running_every_reordered_pass_again(
                    discipline.build(),
                    order.clone(),
                ));
                let case = format!("{name}, {tree_name}, {ncpus} ncpus a vnode");
                assert!(n_kept > 0, "{case}: some pass is kept");
                assert_eq!(n_again, 0, "{case}: the reference runs every pass again");
                assert_eq!(kept.starts, again.starts, "{case}: starts");
                assert_eq!(kept.comments, again.comments, "{case}: comments");
                assert_eq!(
                    news(&kept.estimates),
                    news(&again.estimates),
                    "{case}: estimates"
                );
            }
        }
    }
}

/// That some job of a throttled run was held at a hard limit, and that the run (`ours`)
/// started, said and estimated what its plain definition (`plain`) did.
fn assert_throttled_alike(name: &str, ours: &crate::common::Seen, plain: &crate::common::Seen) {
    assert!(
        ours.comments
            .iter()
            .any(|c| c.contains("violates active HARD")),
        "{name}: some job is held at a hard limit"
    );
    assert_eq!(ours.starts, plain.starts, "{name}: starts");
    assert_eq!(ours.comments, plain.comments, "{name}: comments");
    assert_eq!(ours.estimates, plain.estimates, "{name}: estimates");
}

/// Moab's throttling inside PBS's fairshare order (`Ordered` over `Throttled`): `Ordered`
/// takes a pass back and runs it again when a start puts the jobs after it out of order, and
/// throttling's shortcuts (a trial ended at the first head over a limit, a job held back as at
/// the last pass passed over, the discipline's shortcuts passed on) must still give what its
/// plain definition gives there. On KTH-SP2's first 6,000 jobs with a group of its own per
/// user, under `MAXJOB=2,4` per user, greedy and EASY: the starts with their vnodes, the
/// comments in their order and the estimates equal those of `Throttled::without_shortcuts`
/// inside `Ordered::running_every_reordered_pass_again`.
#[test]
fn throttling_inside_fairshare_decides_as_its_plain_definition() {
    use placesim_policy::queue::{MoabLimits, Ordered, SoftHard, Throttled};
    let trace = kth_first(6_000);
    let groups = group_per_user(&trace);
    let order = by_fairshare_over(&groups, 86_400);
    let mut settings = MoabLimits::default();
    settings.limits[0].insert(
        "DEFAULT".to_owned(),
        [Some(SoftHard::new(2, 4)), None, None],
    );
    let settings = std::sync::Arc::new(settings);
    let cluster =
        placesim_core::Cluster::homogeneous(trace.procs, 1).expect("a cluster of the trace");
    for (name, discipline) in [("greedy", Discipline::Greedy), ("easy", Discipline::EASY)] {
        let told = |mut policy: Ordered<Box<dyn SchedulingPolicy>>| {
            let mut sink = crate::common::Seen::default();
            placesim_testkit::Replay::on(&trace.workload, cluster.clone())
                .run(&mut policy, &mut sink);
            sink
        };
        let ours = told(Ordered::new(
            Box::new(Throttled::new(discipline.build(), settings.clone())),
            order.clone(),
        ));
        let plain = told(Ordered::running_every_reordered_pass_again(
            Box::new(Throttled::without_shortcuts(
                discipline.build(),
                settings.clone(),
            )),
            order.clone(),
        ));
        assert_throttled_alike(name, &ours, &plain);
    }
}

/// Moab's soft and hard per-user MAXJOB by their plain definition on a count-based machine,
/// written independently of the crate (Maui's `MSchedProcessJobs`, with hard-limit jobs
/// "scheduled and/or reserved as available resources allow"). At each instant with a submit
/// or an end: each user's running jobs are counted; the waiting jobs within the soft limit
/// are taken in submission order, then the rest within the hard limit, in submission order,
/// joined by any job of the first part that the starts before it put over the soft limit. A
/// job over its part's limit, counting the starts so far, is skipped; otherwise it starts if
/// its processors fit over its whole estimate, else it gets a reservation at the earliest
/// time they do while fewer than `depth` were made (0: greedy). Limits are not calendared.
fn reference_moab_maxjob(trace: &Trace, depth: usize, soft: u64, hard: u64) -> Vec<u64> {
    let jobs = trace.workload.jobs();
    let runs: Vec<u64> = jobs
        .iter()
        .map(|j| j.runtime.min(j.estimate).as_secs())
        .collect();
    let mut start = vec![u64::MAX; jobs.len()];
    let mut ends: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut running: Vec<usize> = Vec::new();
    let mut queue: Vec<usize> = Vec::new();
    let mut next = 0;
    while next < jobs.len() || !ends.is_empty() {
        let (now, ended) = next_instant(jobs, &mut next, &mut ends, &mut queue);
        running.retain(|r| !ended.contains(r));
        let count = |running: &[usize], j: usize| {
            jobs[j].user().map_or(0, |u| jobs_of_user(jobs, running, u))
        };
        let within = |running: &[usize], j: usize, limit: u64| {
            jobs[j].user().is_none() || count(running, j) < limit
        };
        let mut holds = Holds::of(running.iter().map(|&r| {
            let end = (start[r] + jobs[r].estimate.as_secs()).max(now);
            (now, end, u64::from(jobs[r].size), None)
        }));
        let mut soft_part: Vec<usize> = Vec::new();
        let mut hard_part: Vec<usize> = Vec::new();
        for &j in &queue {
            if within(&running, j, soft) {
                soft_part.push(j);
            } else if within(&running, j, hard) {
                hard_part.push(j);
            }
        }
        let mut made = 0;
        let mut started_now: Vec<usize> = Vec::new();
        let mut consider =
            |j: usize,
             running: &mut Vec<usize>,
             holds: &mut Holds,
             start: &mut [u64],
             ends: &mut BinaryHeap<Reverse<(u64, usize)>>| {
                let (size, estimate) = (u64::from(jobs[j].size), jobs[j].estimate.as_secs());
                if count_fits(trace.procs, &holds.list, now, now + estimate, size) {
                    holds.push((now, now + estimate, size, None));
                    start[j] = now;
                    running.push(j);
                    ends.push(Reverse((now + runs[j], j)));
                    started_now.push(j);
                } else if made < depth {
                    let at = holds.earliest_start(trace.procs, now, estimate, size, |_| true);
                    if let Some(at) = at {
                        holds.push((at, at + estimate, size, None));
                        made += 1;
                    }
                }
            };
        for &j in &soft_part {
            if within(&running, j, soft) {
                consider(j, &mut running, &mut holds, &mut start, &mut ends);
            } else {
                hard_part.push(j);
            }
        }
        hard_part.sort_unstable();
        for &j in &hard_part {
            if within(&running, j, hard) {
                consider(j, &mut running, &mut holds, &mut start, &mut ends);
            }
        }
        queue.retain(|j| !started_now.contains(j));
    }
    start
}

/// Moab's `USERCFG[DEFAULT] MAXJOB=1,3` on KTH-SP2's first 6,000 jobs: greedy (RESERVATIONPOLICY
/// NEVER), EASY and depth 2, each with the throttling adapter around it, equal the count-based
/// plain definition above. The soft limit matters: with `MAXJOB=3` alone the starts differ.
#[test]
fn kth_under_moab_soft_and_hard_maxjob_matches_its_plain_definition() {
    use placesim_policy::queue::{MoabLimits, SoftHard, Throttled};
    let trace = kth_first(6_000);
    let limits = |soft: u64, hard: u64| {
        let mut settings = MoabLimits::default();
        settings.limits[0].insert(
            "DEFAULT".to_owned(),
            [Some(SoftHard::new(soft, hard)), None, None],
        );
        std::sync::Arc::new(settings)
    };
    for (name, depth, discipline) in [
        ("greedy", 0, Discipline::Greedy),
        ("easy", 1, Discipline::EASY),
        (
            "depth 2",
            2,
            Discipline::EASY.with_backfill_depth(2).expect("easy"),
        ),
    ] {
        let mut throttled = Throttled::new(discipline.build(), limits(1, 3));
        let ours = check_invariants_with(&trace, &mut throttled);
        let reference = reference_moab_maxjob(&trace, depth, 1, 3);
        assert_same_starts(&ours, &reference, name);
        let hard_only = reference_moab_maxjob(&trace, depth, 3, 3);
        assert_ne!(reference, hard_only, "{name}: the soft limit matters");
        let mut throttled = Throttled::new(discipline.build(), limits(3, 3));
        assert_eq!(
            check_invariants_with(&trace, &mut throttled),
            hard_only,
            "{name}, hard only"
        );
    }
}

/// Throttling's two shortcuts give the decisions, comments and estimates of its plain
/// definition ([`Throttled::without_shortcuts`]), under greedy, FCFS, EASY and depth 2, with
/// soft and hard limits on users and groups, on KTH-SP2's first 6,000 jobs: a trial that ends
/// at the first queue head started over a limit, rather than placing every job and finding
/// that start afterwards (taken under the first three; depth 2 keeps reservations from pass
/// to pass and never ends a trial early), and a job held back for the same reason as at the
/// last pass passed over without being checked again, or one within its soft limits then
/// taken as within them (both taken in each).
#[test]
fn throttled_shortcuts_decide_as_plain_throttling() {
    use placesim_policy::queue::{MoabLimits, SoftHard, Throttled};
    let trace = kth_first(6_000);
    let mut settings = MoabLimits::default();
    settings.limits[0].insert(
        "DEFAULT".to_owned(),
        [Some(SoftHard::new(2, 4)), Some(SoftHard::new(48, 64)), None],
    );
    settings.limits[1].insert(
        "DEFAULT".to_owned(),
        [None, Some(SoftHard::new(60, 90)), None],
    );
    let settings = std::sync::Arc::new(settings);
    let cluster =
        placesim_core::Cluster::homogeneous(trace.procs, 1).expect("a cluster of the trace");
    for (name, discipline, ends_early) in [
        ("greedy", Discipline::Greedy, true),
        ("fcfs", Discipline::Fcfs, true),
        ("easy", Discipline::EASY, true),
        (
            "depth 2",
            Discipline::EASY.with_backfill_depth(2).expect("easy"),
            false,
        ),
    ] {
        let told = |mut policy: Throttled<Box<dyn SchedulingPolicy>>| {
            let mut sink = crate::common::Seen::default();
            placesim_testkit::Replay::on(&trace.workload, cluster.clone())
                .run(&mut policy, &mut sink);
            (
                sink,
                policy.trials_ended_early(),
                (
                    policy.held_jobs_passed_over(),
                    policy.within_jobs_taken_unchecked(),
                ),
            )
        };
        let (early, ended_early, (passed_over, taken_unchecked)) =
            told(Throttled::new(discipline.build(), settings.clone()));
        let (whole, ended_whole, unchecked_whole) = told(Throttled::without_shortcuts(
            discipline.build(),
            settings.clone(),
        ));
        assert!(passed_over > 0, "{name}: some held job is passed over");
        assert!(
            taken_unchecked > 0,
            "{name}: some job within its limits is taken unchecked"
        );
        assert_eq!(
            unchecked_whole,
            (0, 0),
            "{name}: the reference checks every job"
        );
        assert_eq!(
            ended_early > 0,
            ends_early,
            "{name}: whether a trial ends early"
        );
        assert_eq!(
            ended_whole, 0,
            "{name}: the reference runs every trial whole"
        );
        assert_throttled_alike(name, &early, &whole);
    }
}
