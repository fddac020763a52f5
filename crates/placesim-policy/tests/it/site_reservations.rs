//! Site reservations (PBS advance and maintenance reservations on named vnodes): jobs kept off
//! their vnodes for their windows under greedy, FCFS and EASY, with PBS's conflict comment, and
//! EASY's and greedy's schedules equal to an independent interval-based reference on random
//! workloads.

use crate::common::{Seen, workload_of};
use placesim_core::{
    Allocation, Cluster, ClusterBuilder, JobId, ResourceDefs, SchedulingPolicy, Sharing, SimTime,
    SiteReservation, VnodeId,
};
use placesim_policy::placement::FirstFit;
use placesim_policy::queue::{Backfill, Depth, Easy, Fcfs, Greedy};
use placesim_testkit::{Lcg, Replay};
use std::sync::Arc;

/// `n` vnodes `n1`, `n2`, ... of `ncpus` each, one host each.
fn cluster(n: usize, ncpus: u64) -> Cluster {
    let mut b = ClusterBuilder::new(ResourceDefs::default());
    for i in 1..=n {
        let h = b.add_host(format!("n{i}"));
        b.add_vnode(format!("n{i}"), h, 1.0, &[ncpus, 0, 0], Vec::new())
            .expect("a vnode");
    }
    b.build().expect("a cluster")
}

/// A reservation of all of vnodes `vnodes` (ids from 0), `ncpus` each, over `[start, end)`.
fn reservation(
    name: &str,
    vnodes: &[u32],
    ncpus: u64,
    start: u64,
    end: u64,
    sharing: Sharing,
) -> SiteReservation {
    let mut allocation = Allocation::new(sharing);
    for &v in vnodes {
        allocation.push(VnodeId(v), &[ncpus, 0, 0]);
    }
    SiteReservation {
        name: Arc::from(name),
        start: SimTime(start),
        end: SimTime(end),
        allocation: Arc::new(allocation),
        queue: None,
        access: Default::default(),
    }
}

fn run(
    cluster: Cluster,
    jobs: &[(u64, u64, u64, &str)],
    reservations: &[SiteReservation],
    policy: &mut dyn SchedulingPolicy,
) -> Seen {
    let workload = workload_of(cluster.resources(), jobs);
    let mut seen = Seen::default();
    Replay::on(&workload, cluster)
        .reservations(reservations)
        .run(policy, &mut seen);
    seen
}

const CONFLICT: &str = "Not Running: Job would conflict with reservation or top job";

/// Greedy (PBS's default): a job whose window would overlap the reservation on n1, n2 takes
/// n3, n4 instead; a short job backfills around it on n1, n2, ending before it starts; a job
/// that fits only by overlapping it waits with PBS's conflict comment, and starts when A
/// ends.
#[test]
fn greedy_keeps_jobs_off_a_reservation_and_backfills_around_it() {
    let r = reservation("R1", &[0, 1], 4, 100, 200, Sharing::Shared);
    let jobs = [
        (0, 150, 150, "select=2:ncpus=4"), // J1: would run into R1 on n1, n2
        (0, 50, 50, "select=2:ncpus=4"),   // J2: ends by 100, fits before R1
        (0, 100, 100, "select=1:ncpus=4"), // J3: nothing free now; at 50 only n1, n2
    ];
    let seen = run(
        cluster(4, 4),
        &jobs,
        &[r],
        &mut Greedy::new(FirstFit::default()),
    );
    assert_eq!(
        seen.starts,
        ["J1@0 on [2, 3]", "J2@0 on [0, 1]", "J3@150 on [2]"]
    );
    assert_eq!(seen.comments, [format!("50: J3: {CONFLICT}")]);
}

/// A shared reservation of part of a vnode leaves the rest to jobs that overlap it; an
/// exclusive job keeps off any vnode a reservation holds during its window.
#[test]
fn a_shared_reservation_leaves_its_vnodes_rest_and_an_exclusive_job_keeps_off() {
    let r = reservation("R1", &[0], 2, 10, 20, Sharing::Shared);
    let jobs = [
        (0, 30, 30, "select=1:ncpus=2"), // J1: overlaps R1, and n1 keeps 2
        (0, 30, 30, "select=1:ncpus=1 place=excl"), // J2: exclusive: not n1 while R1 is
        (0, 30, 30, "select=1:ncpus=1"), // J3: n1 keeps 2 for R1 until 20
    ];
    let seen = run(
        cluster(2, 4),
        &jobs,
        &[r],
        &mut Greedy::new(FirstFit::default()),
    );
    assert_eq!(seen.starts, ["J1@0 on [0]", "J2@0 on [1]", "J3@20 on [0]"]);
    assert_eq!(seen.comments, [format!("0: J3: {CONFLICT}")]);
}

/// What a job holding part of a vnode gives back before a shared reservation of it starts
/// counts in a window that reaches the reservation: J2 may take the 2 ncpus J1 leaves on n1,
/// as J1 ends (by its estimate, at 50) before R1 takes 2 at 60. J3 finds no room: n1 is full
/// until J1 ends, and what J1 gives back R1 takes at 60; it starts when J2 and R1 end.
#[test]
fn what_ends_before_a_shared_reservation_is_given_back_in_a_window() {
    let r = reservation("R1", &[0], 2, 60, 100, Sharing::Shared);
    let jobs = [
        (0, 50, 50, "select=1:ncpus=2"),   // J1: ends before R1
        (0, 100, 100, "select=1:ncpus=2"), // J2: beside J1, then beside R1
        (0, 100, 100, "select=1:ncpus=1"), // J3: no room on n1 until J1 ends
    ];
    let seen = run(
        cluster(1, 4),
        &jobs,
        &[r],
        &mut Greedy::new(FirstFit::default()),
    );
    assert_eq!(seen.starts, ["J1@0 on [0]", "J2@0 on [0]", "J3@100 on [0]"]);
}

/// FCFS: the head that would overlap an exclusive reservation waits for its end; nothing
/// behind it starts.
#[test]
fn fcfs_head_waits_out_an_exclusive_reservation() {
    let r = reservation("M1", &[0], 1, 5, 15, Sharing::Excl);
    let jobs = [
        (0, 10, 10, "select=2:ncpus=1"), // J1: n1 is reserved from 5
        (0, 1, 1, "select=1:ncpus=1"),   // J2: behind it
    ];
    let seen = run(
        cluster(2, 1),
        &jobs,
        &[r],
        &mut Fcfs::new(FirstFit::default()),
    );
    assert_eq!(seen.starts, ["J1@15 on [0, 1]", "J2@25 on [0]"]);
    assert_eq!(
        seen.comments,
        [
            format!("0: J1: {CONFLICT}"),
            "0: J2: Not Running: Job would break strict sorted order".to_owned(),
        ]
    );
}

/// EASY: the head's shadow time is the reservation's end, the first instant its window fits;
/// a short job runs on n1 before the reservation starts, a long one would delay the head and
/// waits with the conflict comment, and one that ends by the shadow time backfills.
#[test]
fn easy_shadow_time_is_a_reservation_end() {
    let r = reservation("R1", &[0], 1, 10, 30, Sharing::Excl);
    let jobs = [
        (0, 20, 20, "select=1:ncpus=1"), // J1: keeps off n1 (R1 from 10): n2
        (0, 10, 10, "select=4:ncpus=1"), // J2: the head
        (0, 10, 10, "select=1:ncpus=1"), // J3: on n1, ends as R1 starts
        (0, 40, 40, "select=1:ncpus=1"), // J4: would run past the shadow time
        (0, 25, 25, "select=1:ncpus=1"), // J5: ends by it
    ];
    let seen = run(
        cluster(4, 1),
        &jobs,
        &[r],
        &mut Easy::new(FirstFit::default()),
    );
    assert_eq!(
        seen.starts,
        [
            "J1@0 on [1]",
            "J3@0 on [0]",
            "J5@0 on [2]",
            "J2@30 on [0, 1, 2, 3]",
            "J4@40 on [0]",
        ]
    );
    assert_eq!(seen.estimates[0], "0: J2 at 30 on [0, 1, 2, 3]");
    assert_eq!(seen.comments, [format!("0: J4: {CONFLICT}")]);
}

/// A sink that does not read the estimates' vnodes gets the same estimates without them, from
/// EASY and from conservative backfilling (which calendars every job), and the same schedule.
#[test]
fn estimates_come_without_vnodes_to_a_sink_that_does_not_read_them() {
    let r = reservation("R1", &[0], 1, 10, 30, Sharing::Excl);
    let jobs = [
        (0, 20, 20, "select=1:ncpus=1"),
        (0, 10, 10, "select=4:ncpus=1"),
        (0, 10, 10, "select=1:ncpus=1"),
        (0, 40, 40, "select=1:ncpus=1"),
        (0, 25, 25, "select=1:ncpus=1"),
    ];
    let workload = workload_of(cluster(4, 1).resources(), &jobs);
    let seen = |policy: &mut dyn SchedulingPolicy, unread: bool| {
        let mut seen = Seen {
            estimated_vnodes_unread: unread,
            ..Seen::default()
        };
        Replay::on(&workload, cluster(4, 1))
            .reservations(std::slice::from_ref(&r))
            .run(policy, &mut seen);
        seen
    };
    let without_vnodes = |estimates: &[String]| -> Vec<String> {
        estimates
            .iter()
            .map(|e| e.split(" on ").next().unwrap_or_default().to_owned() + " on []")
            .collect()
    };
    let easy = seen(&mut Easy::new(FirstFit::default()), true);
    let read = seen(&mut Easy::new(FirstFit::default()), false);
    assert_eq!(read.estimates[0], "0: J2 at 30 on [0, 1, 2, 3]");
    assert_eq!(easy.estimates, without_vnodes(&read.estimates));
    assert_eq!((easy.starts, easy.comments), (read.starts, read.comments));
    let conservative = seen(&mut Backfill::new(FirstFit::default(), Depth::All), true);
    let read = seen(&mut Backfill::new(FirstFit::default(), Depth::All), false);
    assert_eq!(
        read.estimates[..2],
        ["0: J2 at 30 on [0, 1, 2, 3]", "0: J4 at 40 on [0]"]
    );
    assert_eq!(conservative.estimates, without_vnodes(&read.estimates));
    assert_eq!(
        (conservative.starts, conservative.comments),
        (read.starts, read.comments)
    );
}

/// A policy that ignores reservations: the kernel refuses to let a reservation start on a
/// vnode a job holds.
#[test]
fn a_reservation_whose_vnodes_are_taken_stops_the_run() {
    struct Blind;
    impl SchedulingPolicy for Blind {
        fn name(&self) -> String {
            "blind".to_owned()
        }
        fn schedule(
            &mut self,
            ctx: &placesim_core::SchedContext<'_>,
            decisions: &mut Vec<placesim_core::Decision>,
        ) {
            for &job in ctx.queue {
                let mut allocation = Allocation::new(Sharing::Shared);
                allocation.push(VnodeId(0), &[1, 0, 0]);
                decisions.push(placesim_core::Decision::Start { job, allocation });
            }
        }
    }
    let cluster = cluster(1, 1);
    let workload = workload_of(cluster.resources(), &[(0, 10, 10, "select=1:ncpus=1")]);
    let r = reservation("R7", &[0], 1, 5, 15, Sharing::Shared);
    let error = placesim_core::Simulation::new(
        &workload,
        placesim_core::ClusterState::new(cluster),
        placesim_core::RunConfig {
            walltime: placesim_core::WalltimePolicy::Kill,
            cycles: placesim_core::Cycles::EventExact,
        },
    )
    .with_reservations(vec![r])
    .run(&mut Blind, &mut Seen::default(), &mut |_| {})
    .expect_err("the reservation cannot start");
    assert_eq!(
        error.to_string(),
        "at 5s: reservation R7 could not take its vnodes: vnode 0 is not eligible for a new job"
    );
}

/// One start of the reference: job index, time, vnodes.
type RefStart = (usize, u64, Vec<usize>);

/// An independent reference on one-ncpu vnodes, by intervals: a vnode is usable for a job
/// over `[t, t + e)` when no job holds it at `t` (running jobs by estimated end for times
/// after now) and no reservation's window meets `[t, t + e)`; first fit takes the first
/// usable vnodes. EASY's shadow is the first estimated end or reservation end at which the
/// head finds enough; a later job starts if it has enough now and ends by the shadow, or the
/// head keeps its vnodes (or finds others) at the shadow with the job's held.
fn reference(
    n_vnodes: usize,
    jobs: &[(u64, u64, u64, usize)],
    reservations: &[(usize, u64, u64)],
    easy: bool,
) -> Vec<RefStart> {
    let mut busy_until = vec![0u64; n_vnodes]; // true end
    let mut est_until = vec![0u64; n_vnodes]; // estimated end
    let mut queue: Vec<usize> = Vec::new();
    let mut starts = Vec::new();
    let mut times: Vec<u64> = jobs.iter().map(|j| j.0).collect();
    times.extend(reservations.iter().flat_map(|r| [r.1, r.2]));
    let mut next = 0;
    let reserved = |v: usize, from: u64, until: u64| {
        reservations
            .iter()
            .any(|&(rv, s, e)| rv == v && s < until && from < e)
    };
    loop {
        times.retain(|&t| t >= next);
        times.sort_unstable();
        times.dedup();
        let Some(&now) = times.first() else { break };
        next = now + 1;
        for (i, j) in jobs.iter().enumerate() {
            if j.0 == now {
                queue.push(i);
            }
        }
        if queue.is_empty() {
            continue;
        }
        let usable_now =
            |v: usize, e: u64, busy: &[u64]| busy[v] <= now && !reserved(v, now, now + e);
        let mut started_now = Vec::new();
        let mut k = 0;
        // Step 1 (and greedy's whole scan).
        while k < queue.len() {
            let (_, _, e, need) = jobs[queue[k]];
            let free: Vec<usize> = (0..n_vnodes)
                .filter(|&v| usable_now(v, e, &busy_until))
                .take(need)
                .collect();
            if free.len() == need {
                for &v in &free {
                    busy_until[v] = now + jobs[queue[k]].1;
                    est_until[v] = now + e;
                }
                started_now.push(queue[k]);
                starts.push((queue[k], now, free));
                times.push(now + jobs[queue[k]].1);
                queue.remove(k);
            } else if easy {
                break;
            } else {
                k += 1;
            }
        }
        if easy && !queue.is_empty() {
            let head = queue[0];
            let (_, _, he, hneed) = jobs[head];
            // Held at `t` by a job still running now, until its estimated end.
            let usable_at = |v: usize, t: u64, busy: &[u64], est: &[u64], held: &[usize]| {
                (busy[v] <= now || est[v] <= t) && !held.contains(&v) && !reserved(v, t, t + he)
            };
            let mut cands: Vec<u64> = (0..n_vnodes)
                .filter(|&v| busy_until[v] > now)
                .map(|v| est_until[v])
                .chain(reservations.iter().map(|r| r.2))
                .filter(|&t| t > now)
                .collect();
            cands.sort_unstable();
            cands.dedup();
            let found = cands.into_iter().find_map(|t| {
                let vs: Vec<usize> = (0..n_vnodes)
                    .filter(|&v| usable_at(v, t, &busy_until, &est_until, &[]))
                    .take(hneed)
                    .collect();
                (vs.len() == hneed).then_some((t, vs))
            });
            if let Some((shadow, mut head_vnodes)) = found {
                let mut k = 1;
                while k < queue.len() {
                    let j = queue[k];
                    let (_, run, e, need) = jobs[j];
                    let free: Vec<usize> = (0..n_vnodes)
                        .filter(|&v| usable_now(v, e, &busy_until))
                        .take(need)
                        .collect();
                    if free.len() < need {
                        k += 1;
                        continue;
                    }
                    if now + e > shadow && head_vnodes.iter().any(|v| free.contains(v)) {
                        let vs: Vec<usize> = (0..n_vnodes)
                            .filter(|&v| usable_at(v, shadow, &busy_until, &est_until, &free))
                            .take(hneed)
                            .collect();
                        if vs.len() < hneed {
                            k += 1;
                            continue;
                        }
                        head_vnodes = vs;
                    }
                    for &v in &free {
                        busy_until[v] = now + run;
                        est_until[v] = now + e;
                    }
                    starts.push((j, now, free));
                    times.push(now + run);
                    queue.remove(k);
                }
            }
        }
    }
    starts.sort();
    starts
}

/// Greedy, EASY and the general backfilling pass at depth 1 (which runs by its plain
/// definition while reservations are to come) on random workloads and reservations over
/// one-ncpu vnodes give exactly the reference's starts and vnodes.
#[test]
fn greedy_and_easy_match_the_interval_reference() {
    let mut rng = Lcg(17);
    for case in 0..120 {
        let n_vnodes = 2 + rng.below(5) as usize;
        let n_jobs = 1 + rng.below(14) as usize;
        let mut jobs: Vec<(u64, u64, u64, usize)> = (0..n_jobs)
            .map(|_| {
                let estimate = 1 + rng.below(30);
                let runtime = 1 + rng.below(estimate);
                (
                    rng.below(40),
                    runtime,
                    estimate,
                    1 + rng.below(n_vnodes as u64) as usize,
                )
            })
            .collect();
        jobs.sort_by_key(|j| j.0);
        let mut resv: Vec<(usize, u64, u64)> = Vec::new();
        for _ in 0..rng.below(4) {
            let v = rng.below(n_vnodes as u64) as usize;
            let start = 1 + rng.below(50);
            let end = start + 1 + rng.below(25);
            if resv
                .iter()
                .all(|&(w, s, e)| w != v || e <= start || end <= s)
            {
                resv.push((v, start, end));
            }
        }
        let cluster = cluster(n_vnodes, 1);
        let texts: Vec<String> = jobs
            .iter()
            .map(|j| format!("select={}:ncpus=1", j.3))
            .collect();
        let with_text: Vec<(u64, u64, u64, &str)> = jobs
            .iter()
            .zip(&texts)
            .map(|(j, t)| (j.0, j.1, j.2, t.as_str()))
            .collect();
        let site: Vec<SiteReservation> = resv
            .iter()
            .enumerate()
            .map(|(i, &(v, s, e))| {
                reservation(&format!("R{i}"), &[v as u32], 1, s, e, Sharing::Excl)
            })
            .collect();
        for (name, easy) in [("greedy", false), ("easy", true), ("depth 1", true)] {
            let mut policy: Box<dyn SchedulingPolicy> = match name {
                "greedy" => Box::new(Greedy::new(FirstFit::default())),
                "easy" => Box::new(Easy::new(FirstFit::default())),
                _ => Box::new(Backfill::new(FirstFit::default(), Depth::Jobs(1))),
            };
            let seen = run(cluster.clone(), &with_text, &site, policy.as_mut());
            let mut got: Vec<String> = seen.starts.clone();
            got.sort();
            let mut want: Vec<String> = reference(n_vnodes, &jobs, &resv, easy)
                .into_iter()
                .map(|(j, t, vs)| format!("J{}@{t} on {vs:?}", j + 1))
                .collect();
            want.sort();
            assert_eq!(
                got, want,
                "case {case} ({name}): jobs {jobs:?}, reservations {resv:?}"
            );
        }
        // Deeper: the pass switches to its plain definition only while a reservation is
        // within reach, and gives the plain definition's starts throughout.
        for depth in [Depth::Jobs(2), Depth::All] {
            let mut fast = Backfill::new(FirstFit::default(), depth);
            let mut plain = Backfill::by_definition(FirstFit::default(), depth);
            let got = run(cluster.clone(), &with_text, &site, &mut fast).starts;
            let want = run(cluster.clone(), &with_text, &site, &mut plain).starts;
            assert_eq!(
                got, want,
                "case {case} ({depth:?}): jobs {jobs:?}, reservations {resv:?}"
            );
        }
    }
}

/// The plain pass's two shortcuts near site reservations (after a start or a new top job only
/// the top jobs whose start the change reaches are checked again; a top job's search asks
/// the placement only where the ncpus free then, less the top jobs', could take it) give
/// the same starts, vnodes, comments and top-job estimates as the pass without them, on
/// random workloads of multi-ncpu jobs with long queues and shared and exclusive
/// reservations.
#[test]
fn the_plain_pass_shortcuts_decide_as_the_exhaustive_pass() {
    let mut rng = Lcg(29);
    let mut compared_tops = 0;
    for case in 0..150 {
        let n_vnodes = 2 + rng.below(4) as usize;
        let mut jobs: Vec<(u64, u64, u64, String)> = (0..4 + rng.below(30))
            .map(|_| {
                // Some estimate nothing: such a job still holds its vnodes now.
                let estimate = rng.below(40);
                (
                    rng.below(60),
                    rng.below(estimate + 1),
                    estimate,
                    format!(
                        "select={}:ncpus={}",
                        1 + rng.below(n_vnodes as u64),
                        1 + rng.below(4)
                    ),
                )
            })
            .collect();
        jobs.sort_by_key(|j| j.0);
        let with_text: Vec<(u64, u64, u64, &str)> =
            jobs.iter().map(|j| (j.0, j.1, j.2, j.3.as_str())).collect();
        // Each on a vnode of its own, so that they never overlap one another.
        let first = rng.below(n_vnodes as u64) as u32;
        let site: Vec<SiteReservation> = (0..1 + rng.below(n_vnodes.min(3) as u64) as u32)
            .map(|i| {
                let start = 1 + rng.below(80);
                let sharing = if rng.below(2) == 0 {
                    Sharing::Excl
                } else {
                    Sharing::Shared
                };
                reservation(
                    &format!("R{i}"),
                    &[(first + i) % n_vnodes as u32],
                    1 + rng.below(4),
                    start,
                    start + 1 + rng.below(30),
                    sharing,
                )
            })
            .collect();
        for depth in [Depth::Jobs(3), Depth::All] {
            let mut plain = Backfill::by_definition(FirstFit::default(), depth);
            let mut exhaustive = Backfill::by_definition_exhaustive(FirstFit::default(), depth);
            let got = run(cluster(n_vnodes, 4), &with_text, &site, &mut plain);
            let want = run(cluster(n_vnodes, 4), &with_text, &site, &mut exhaustive);
            compared_tops += want.estimates.len();
            let context = format!("case {case} ({depth:?}): jobs {jobs:?}, reservations {site:?}");
            assert_eq!(got.starts, want.starts, "{context}");
            assert_eq!(got.comments, want.comments, "{context}");
            assert_eq!(got.estimates, want.estimates, "{context}");
        }
    }
    // The cases make top jobs enough for the shortcuts to have been taken.
    assert!(compared_tops > 10_000, "{compared_tops} top-job estimates");
}

/// What a run with reservation queues reported: starts, ends with their reasons, comments,
/// and the jobs deleted or refused.
/// The workload of `jobs` (submit, runtime, estimate, request, PBS queue).
fn workload_in_queues(
    cluster: &Cluster,
    jobs: &[(u64, u64, u64, &str, Option<u32>)],
) -> placesim_core::Workload {
    let plain: Vec<(u64, u64, u64, &str)> = jobs.iter().map(|j| (j.0, j.1, j.2, j.3)).collect();
    let base = workload_of(cluster.resources(), &plain);
    let mut requests: Vec<placesim_core::Request> = base.requests().to_vec();
    for (request, job) in requests.iter_mut().zip(jobs) {
        request.queue = job.4;
    }
    placesim_core::Workload::new(base.jobs().to_vec(), requests).expect("workload")
}

fn run_inside(
    cluster: Cluster,
    jobs: &[(u64, u64, u64, &str, Option<u32>)],
    reservations: &[SiteReservation],
) -> (Seen, Vec<String>, placesim_core::RunStats) {
    let workload = workload_in_queues(&cluster, jobs);
    let mut sink = Seen::default();
    let mut policy = placesim_policy::queue::InReservations::new(
        Greedy::new(FirstFit::default()),
        FirstFit::default(),
    );
    let stats = Replay::on(&workload, cluster)
        .reservations(reservations)
        .run(&mut policy, &mut sink);
    let ends = std::mem::take(&mut sink.ends);
    (sink, ends, stats)
}

/// Jobs of a reservation's queue wait for its window with PBS's comment, run inside it on
/// what it holds (two share n1), are killed when it closes, and those still waiting then are
/// deleted; a job submitted to its queue after it ended is refused; a job of no queue keeps
/// off the reservation's vnode.
#[test]
fn jobs_of_a_reservations_queue_run_inside_it() {
    let mut r = reservation("R1", &[0], 4, 10, 50, Sharing::Shared);
    r.queue = Some(0);
    let jobs = [
        (0, 20, 20, "select=1:ncpus=2", Some(0)), // J1: inside, 10..30
        (0, 100, 100, "select=1:ncpus=2", Some(0)), // J2: inside, killed at 50
        (0, 100, 100, "select=1:ncpus=4", None),  // J3: keeps off n1: n2
        (5, 10, 10, "select=1:ncpus=4", Some(0)), // J4: never room inside: deleted
        (60, 10, 10, "select=1:ncpus=1", Some(0)), // J5: R1 is gone: refused
    ];
    let (seen, ends, stats) = run_inside(cluster(2, 4), &jobs, &[r]);
    assert_eq!(seen.starts, ["J3@0 on [1]", "J1@10 on [0]", "J2@10 on [0]"]);
    assert_eq!(
        ends,
        [
            "J1@30 Finished",
            "J2@50 ReservationEnded",
            "J3@100 Finished",
        ]
    );
    assert_eq!(
        seen.comments,
        [
            "0: J1: Not Running: Queue not started.",
            "0: J2: Not Running: Queue not started.",
            "5: J1: Not Running: Queue not started.",
            "5: J2: Not Running: Queue not started.",
            "5: J4: Not Running: Queue not started.",
            "10: J4: Not Running: No available resources on nodes",
            "30: J4: Not Running: No available resources on nodes",
            "50: J4: Job deleted: the period of reservation R1 ended",
            "60: J5: qsub: Unknown queue",
        ]
    );
    assert_eq!(stats.deleted, [JobId(3)]);
    assert_eq!(stats.rejected, [JobId(4)]);
}

/// Conservative backfilling: every waiting job gets a reservation, kept off the site's. On
/// three one-ncpu vnodes with n1 reserved over [10, 40): J1 (2 vnodes, 30 s) keeps off n1 and
/// runs on n2, n3; J2 (3 vnodes) can first have all three at 40, when R1 ends; J3 (1 vnode,
/// 50 s) fits on n1 now only by overlapping R1, and its first window that leaves J2's
/// reservation in place starts when J2 ends, at 50; J4 (1 vnode, 10 s) runs on n1 before R1
/// starts.
#[test]
fn conservative_reserves_around_a_site_reservation() {
    let r = reservation("R1", &[0], 1, 10, 40, Sharing::Excl);
    let jobs = [
        (0, 30, 30, "select=2:ncpus=1"),
        (0, 10, 10, "select=3:ncpus=1"),
        (0, 50, 50, "select=1:ncpus=1"),
        (0, 10, 10, "select=1:ncpus=1"),
    ];
    let seen = run(
        cluster(3, 1),
        &jobs,
        &[r],
        &mut Backfill::new(FirstFit::default(), Depth::All),
    );
    assert_eq!(
        seen.starts,
        [
            "J1@0 on [1, 2]",
            "J4@0 on [0]",
            "J2@40 on [0, 1, 2]",
            "J3@50 on [0]"
        ]
    );
    assert_eq!(
        &seen.estimates[..2],
        ["0: J2 at 40 on [0, 1, 2]", "0: J3 at 50 on [0]"]
    );
    assert_eq!(seen.comments, [format!("0: J3: {CONFLICT}")]);
}

/// A standing reservation's occurrences share its queue: J1 runs in the first occurrence
/// [10, 20) and is killed at its end; J2 and J3, submitted between occurrences, wait (`Queue
/// not started.`) and run in the second [30, 40), J3 once J2 has ended and until it is
/// killed; J4, never started, is deleted only after the last occurrence.
#[test]
fn a_standing_reservations_second_occurrence_runs_the_jobs_that_waited() {
    let occurrence = |start: u64| {
        let mut r = reservation("S1", &[0], 2, start, start + 10, Sharing::Shared);
        r.queue = Some(0);
        r
    };
    let jobs = [
        (0, 15, 15, "select=1:ncpus=2", Some(0)), // J1: 10..20, killed
        (22, 5, 5, "select=1:ncpus=1", Some(0)),  // J2: 30..35
        (25, 10, 10, "select=1:ncpus=2", Some(0)), // J3: 35..40, killed
        (36, 5, 5, "select=1:ncpus=1", Some(0)),  // J4: no room beside J3: deleted
    ];
    let (seen, ends, stats) = run_inside(cluster(2, 2), &jobs, &[occurrence(10), occurrence(30)]);
    assert_eq!(
        seen.starts,
        ["J1@10 on [0]", "J2@30 on [0]", "J3@35 on [0]"]
    );
    assert_eq!(
        ends,
        [
            "J1@20 ReservationEnded",
            "J2@35 Finished",
            "J3@40 ReservationEnded"
        ]
    );
    assert_eq!(
        seen.comments,
        [
            "0: J1: Not Running: Queue not started.",
            "22: J2: Not Running: Queue not started.",
            "25: J2: Not Running: Queue not started.",
            "25: J3: Not Running: Queue not started.",
            "30: J3: Not Running: No available resources on nodes",
            "36: J4: Not Running: No available resources on nodes",
            "40: J4: Job deleted: the period of reservation S1 ended",
        ]
    );
    assert_eq!(stats.deleted, [JobId(3)]);
}

/// Reservations requested of the scheduler are confirmed at the first pass after their
/// submission, in submission order, against the running jobs' estimated ends and the
/// reservations already confirmed: R1 [50, 150) cannot have n1 (J1 holds it until 100) and
/// is confirmed on n2; R2, the same window, finds n2 taken by R1 and is denied. The pass that
/// confirmed starts no job, so J2, which could have run on n2 from 10 to 40, waits for J1's
/// end.
#[test]
fn the_scheduler_confirms_requested_reservations_first() {
    let cluster = cluster(2, 4);
    let jobs = [
        (0, 100, 100, "select=1:ncpus=4"), // J1
        (10, 30, 30, "select=1:ncpus=4"),  // J2
    ];
    let workload = workload_of(cluster.resources(), &jobs);
    let request = |name: &str| placesim_core::ReservationRequest {
        name: Arc::from(name),
        submit: SimTime(10),
        start: SimTime(50),
        end: SimTime(150),
        request: placesim_request::parse_and_lower("select=1:ncpus=4", cluster.resources())
            .expect("a request"),
        queue: None,
    };
    let mut sink = Seen::default();
    let mut policy = placesim_policy::queue::ConfirmingReservations::new(
        Greedy::new(FirstFit::default()),
        FirstFit::default(),
    );
    Replay::on(&workload, cluster.clone())
        .reservation_requests(&[request("R1"), request("R2")])
        .run(&mut policy, &mut sink);
    assert_eq!(sink.answers, ["10: R1 confirmed on [1]", "10: R2 denied"]);
    assert_eq!(sink.starts, ["J1@0 on [0]", "J2@100 on [0]"]);
}

/// The timeline's `qdel`: under EASY on two one-ncpu vnodes, J1 runs on n1 until 100; J2
/// (2 vnodes) is the top job with its reservation at 100 (on totals: no vnodes named); J3
/// (1 vnode, 200 s) would delay it and waits. J2 deleted at 10 releases its reservation: J3
/// starts at once on n2. J1 deleted at 20 is killed, and deleted again at 30 is told it is
/// unknown.
#[test]
fn a_qdel_of_a_queued_top_job_releases_its_reservation() {
    let cluster = cluster(2, 1);
    let jobs = [
        (0, 100, 100, "select=1:ncpus=1"), // J1
        (0, 10, 10, "select=2:ncpus=1"),   // J2: the top job
        (0, 200, 200, "select=1:ncpus=1"), // J3
    ];
    let workload = workload_of(cluster.resources(), &jobs);
    let mut log = Seen::default();
    let stats = Replay::on(&workload, cluster)
        .deletions(&[
            (SimTime(10), JobId(1)),
            (SimTime(20), JobId(0)),
            (SimTime(30), JobId(0)),
        ])
        .run(&mut Easy::new(FirstFit::default()), &mut log);
    assert_eq!(log.starts, ["J1@0 on [0]", "J3@10 on [1]"]);
    assert_eq!(log.estimates, ["0: J2 at 100 on []"]);
    assert_eq!(log.ends, ["J1@20 Deleted", "J3@210 Finished"]);
    assert_eq!(
        log.comments,
        [
            format!("0: J3: {CONFLICT}"),
            "10: J2: Job deleted by qdel".to_owned(),
            "30: J1: qdel: Unknown Job Id".to_owned(),
        ]
    );
    assert_eq!(stats.deleted, [JobId(1)]);
}

/// The timeline's `rdel`: R1 (n1, [10, 50), with a queue) is deleted at 30 while open: J1,
/// running inside it, is killed, J4, waiting in its queue, is deleted, and n1 comes back at
/// once, so J3 (kept off both reservations until then) starts there. R2 (n2, [100, 200)) is
/// deleted at 40 before it opens, and J5, kept off it, starts at once.
#[test]
fn a_deleted_reservation_gives_its_vnodes_back_and_takes_its_queue_with_it() {
    let mut r1 = reservation("R1", &[0], 4, 10, 50, Sharing::Shared);
    r1.queue = Some(0);
    let r2 = reservation("R2", &[1], 4, 100, 200, Sharing::Shared);
    let jobs = [
        (0, 100, 100, "select=1:ncpus=2", Some(0)), // J1: inside R1 from 10
        (0, 5, 5, "select=1:ncpus=4", None),        // J2: n1 before R1, ends at 5
        (1, 150, 150, "select=1:ncpus=4", None),    // J3: overlaps R1 and R2
        (15, 10, 10, "select=1:ncpus=4", Some(0)),  // J4: no room beside J1
        (35, 100, 100, "select=1:ncpus=4", None),   // J5: overlaps R2
    ];
    let workload = workload_in_queues(&cluster(2, 4), &jobs);
    let mut seen = Seen::default();
    let mut policy = placesim_policy::queue::InReservations::new(
        Greedy::new(FirstFit::default()),
        FirstFit::default(),
    );
    let stats = Replay::on(&workload, cluster(2, 4))
        .reservations(&[r1, r2])
        .reservation_deletions(&[
            (SimTime(30), Arc::from("R1")),
            (SimTime(40), Arc::from("R2")),
        ])
        .run(&mut policy, &mut seen);
    assert_eq!(
        seen.starts,
        [
            "J2@0 on [0]",
            "J1@10 on [0]",
            "J3@30 on [0]",
            "J5@40 on [1]"
        ]
    );
    assert_eq!(
        seen.ends,
        [
            "J2@5 Finished",
            "J1@30 ReservationDeleted",
            "J5@140 Finished",
            "J3@180 Finished"
        ]
    );
    assert!(
        seen.comments
            .contains(&"30: J4: Job deleted: reservation R1 was deleted (pbs_rdel)".to_owned()),
        "{:?}",
        seen.comments
    );
    assert_eq!(stats.deleted, [JobId(3)]);
}
