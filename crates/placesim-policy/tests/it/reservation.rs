//! The EASY reservation is computed with the placement policy: its time and its vnodes.

use crate::common::first_pass_at;
use placesim_core::{
    Allocation, Cluster, ClusterState, Decision, Job, JobId, Request, RequestId, RunningJob,
    SchedContext, SchedulingPolicy, Sharing, SimDuration, SimTime, VnodeId, Workload,
};
use placesim_policy::placement::FirstFit;
use placesim_policy::queue::Easy;
use placesim_testkit::Replay;

fn job(submit: u64, estimate: u64, request: u32) -> Job {
    Job::new(
        0,
        SimTime(submit),
        SimDuration(estimate),
        SimDuration(estimate),
        0,
        RequestId(request),
    )
}

fn on(vnodes: &[u32]) -> Allocation {
    let mut a = Allocation::new(Sharing::Shared);
    for &v in vnodes {
        a.add(VnodeId(v), &[1, 0, 0]);
    }
    a
}

/// A cluster of `n_vnodes` single-processor vnodes on which job `i` (from job 0 on) has run
/// since 0 on the vnodes `held[i].0`, estimated to end at `held[i].1`: the state and the
/// running list.
fn running_on(n_vnodes: u64, held: &[(&[u32], u64)]) -> (ClusterState, Vec<RunningJob>) {
    let mut state = ClusterState::new(Cluster::homogeneous(n_vnodes, 1).unwrap());
    let running = (0u32..)
        .zip(held)
        .map(|(id, &(vnodes, end))| {
            let allocation = on(vnodes);
            state.allocate(&allocation).unwrap();
            RunningJob {
                job: JobId(id),
                start: SimTime(0),
                estimated_end: SimTime(end),
                allocation,
            }
        })
        .collect();
    (state, running)
}

/// Four single-processor vnodes. A holds v0, v1 until 100 (estimated); B holds v2 until 50.
/// The head H needs 2: at B's end (50) v2 and v3 are free, so H is reserved there on {v2, v3}.
/// Candidate L (1 processor, long) fits now on v3 but would leave only v2 free at 50: refused.
/// Candidate S (1 processor, ends by 40) is backfilled on v3.
#[test]
fn reservation_is_at_the_first_end_that_frees_enough_and_names_its_vnodes() {
    let requests = vec![Request::processors(1, 3), Request::processors(2, 3)];
    let jobs = vec![
        job(0, 100, 1),  // A
        job(0, 50, 0),   // B
        job(1, 10, 1),   // H
        job(2, 1000, 0), // L
        job(3, 37, 0),   // S
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let (state, running) = running_on(4, &[(&[0, 1], 100), (&[2], 50)]);
    let queue = [JobId(2), JobId(3), JobId(4)];
    let ctx = first_pass_at(3, &state, &workload, &queue, &running);
    let mut easy = Easy::new(FirstFit::default());
    let r = easy.reservation(&ctx).expect("the head is blocked");
    assert_eq!((r.job, r.start), (JobId(2), SimTime(50)));
    assert_eq!(
        r.allocation.vnodes().collect::<Vec<_>>(),
        vec![VnodeId(2), VnodeId(3)]
    );
    let expected = vec![Decision::Start {
        job: JobId(4),
        allocation: on(&[3]),
    }];
    let mut decisions = Vec::new();
    easy.schedule(&ctx, &mut decisions);
    assert_eq!(decisions, expected);
    // The same pass in the vnode form (a placement that never vouches for totals).
    let mut easy = Easy::new(crate::common::VnodesOnly(FirstFit::default()));
    let mut decisions = Vec::new();
    easy.schedule(&ctx, &mut decisions);
    assert_eq!(decisions, expected);
}

/// Same machine, but the head needs all 4 processors and A's estimate ends first (at 30):
/// the reservation waits for the later end of B (60), when every vnode is free.
#[test]
fn reservation_waits_for_the_end_at_which_the_head_can_be_placed() {
    let requests = vec![
        Request::processors(1, 3),
        Request::processors(2, 3),
        Request::processors(4, 3),
    ];
    let jobs = vec![job(0, 30, 1), job(0, 60, 0), job(1, 10, 2)];
    let workload = Workload::new(jobs, requests).unwrap();
    let (state, running) = running_on(4, &[(&[0, 1], 30), (&[2], 60)]);
    let queue = [JobId(2)];
    let ctx = first_pass_at(1, &state, &workload, &queue, &running);
    let mut easy = Easy::new(FirstFit::default());
    let r = easy.reservation(&ctx).expect("blocked");
    assert_eq!(r.start, SimTime(60));
    assert_eq!(
        r.allocation.vnodes().collect::<Vec<_>>(),
        (0..4).map(VnodeId).collect::<Vec<_>>()
    );
    let mut decisions = Vec::new();
    easy.schedule(&ctx, &mut decisions);
    assert!(decisions.is_empty());
}

/// What [`shared_vnode_run`] gives: the jobs, their vnodes and their start times (the last,
/// for a job started again), every start and end in the kernel's order, and the shortcuts
/// taken.
type SharedRun = (
    Vec<(JobId, u64, Allocation)>,
    Vec<(bool, JobId, u64)>,
    placesim_policy::queue::Shortcuts,
);

/// A generated workload (Lublin jobs, Tsafrir estimates, offered load 0.9) on 64 four-ncpu
/// vnodes in four switch sets, so vnodes are shared by several jobs; every fifth job asks for
/// its vnodes exclusively. With `outages`, a vnode goes down for a while 40 times over the
/// run, and the jobs on it go back to the queue.
fn shared_vnode_run(placement: &str, shortcuts: bool, outages: bool) -> SharedRun {
    use crate::common::{CheckingSink, VnodesOnly};
    use placesim_core::PlacementPolicy;
    use placesim_policy::placement::{PbsPsets, PsetSettings};
    use placesim_workload::generate::{GeneratorSpec, generate};
    let spec = GeneratorSpec {
        load: Some(0.9),
        ..GeneratorSpec::lublin(1500)
    };
    let (_, records) = generate(&spec, 256, 5).unwrap();
    let mut requests: Vec<Request> = Vec::new();
    let mut jobs = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let mut request = Request::processors(r.allocated_procs as u32, 3);
        if i % 5 == 0 {
            request.sharing = Sharing::Excl;
        }
        let id = requests
            .iter()
            .position(|x| *x == request)
            .unwrap_or_else(|| {
                requests.push(request);
                requests.len() - 1
            });
        let mut job = job(r.submit_time as u64, r.requested_time as u64, id as u32);
        job.runtime = SimDuration(r.run_time as u64);
        jobs.push(job);
    }
    let workload = Workload::new(jobs, requests).unwrap();
    let s = placesim_scenario::load_scenario(
        "[cluster]\nswitches_of = 16\n[[cluster.generation]]\nname = \"n\"\ncount = 64\nncpus = 4\n\
         [pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n",
        std::path::Path::new("t.toml"),
    )
    .unwrap();
    let switch = s.cluster.resources().lookup("switch").unwrap();
    let mut state = ClusterState::new(s.cluster.clone());
    let policy: Box<dyn PlacementPolicy> = if placement == "pbs" {
        let p = PbsPsets::new(
            &s.cluster,
            PsetSettings {
                node_group_enable: true,
                server_key: vec![switch],
                ..PsetSettings::default()
            },
        );
        p.track(&mut state);
        Box::new(p)
    } else {
        // Never vouches for totals, so every reservation is found on vnodes.
        Box::new(VnodesOnly(placesim_policy::placement::FirstFit::default()))
    };
    let mut easy = if shortcuts {
        Easy::new(policy)
    } else {
        Easy::without_shortcuts(policy)
    };
    let mut sink = CheckingSink::default();
    let span = workload.jobs().last().map_or(0, |j| j.submit.as_secs());
    let down: Vec<placesim_core::Outage> = (0..40)
        .filter(|_| outages)
        .map(|k| {
            let at = span * k / 40;
            placesim_core::Outage {
                vnode: placesim_core::VnodeId((k as u32 * 7) % 64),
                down: SimTime(at),
                up: SimTime(at + span / 100),
            }
        })
        .collect();
    Replay::from_state(&workload, state)
        .outages(&down, placesim_core::NodeFailurePolicy::Requeue)
        .run(&mut easy, &mut sink);
    if outages {
        assert!(!sink.started_twice.is_empty(), "no job was started again");
    } else {
        assert_eq!(sink.first_oversubscription(&s.cluster), None);
    }
    let starts = sink
        .starts
        .into_iter()
        .map(|(j, (t, a))| (j, t, a))
        .collect();
    (starts, sink.log, easy.shortcuts())
}

/// Building the shadow state from the idle cluster, keeping it between passes, reusing the
/// last reservation, bringing the list of ends up to date from the kernel's log and building
/// the shadow state only when a backfill first reads it are shortcuts: on shared and exclusive
/// vnodes, with and without placement sets, with and without outages (which make the idle
/// cluster again, and start jobs again on other vnodes), every job starts at the same time on
/// the same vnodes as with the plain walk. Each shortcut is taken many times, so the
/// comparison is not vacuous.
#[test]
fn reservation_shortcuts_change_no_decision() {
    for (placement, outages) in [
        ("pbs", false),
        ("first-fit", false),
        ("pbs", true),
        ("first-fit", true),
    ] {
        let (fast, fast_log, taken) = shared_vnode_run(placement, true, outages);
        let (plain, plain_log, none) = shared_vnode_run(placement, false, outages);
        let placement = format!("{placement}, outages {outages}");
        assert_eq!(fast.len(), 1500, "{placement}: every job starts");
        assert!(
            fast == plain && fast_log == plain_log,
            "{placement}: the shortcuts changed a decision: first difference at {:?}",
            fast.iter().zip(&plain).find(|(a, b)| a != b)
        );
        assert!(
            taken.idle_builds > 5
                && taken.kept_syncs > 50
                && taken.reuses > 50
                && taken.ends_from_log > 50
                && taken.late_views > 10,
            "{placement}: shortcuts taken {taken:?}"
        );
        assert_eq!(
            (
                none.idle_builds,
                none.kept_syncs,
                none.reuses,
                none.ends_from_log
            ),
            (0, 0, 0, 0)
        );
    }
}

/// Six single-processor vnodes; A holds v0, v1, v2 until 30 (estimated). At t = 3 the queue is
/// H (4 processors), K (all 6), C (1, long); each estimate 10 except C's 1000.
///
/// Depth 2: H is reserved at 30 on {v0..v3}, and K after it, at 40, on every vnode. C fits now
/// on v3 (first fit) and runs past 30: H could move to {v0, v1, v2, v4}, but K could not be
/// placed at 40. C waits.
///
/// Depth 1 (EASY): only H is reserved. C takes v3, and H moves to {v0, v1, v2, v4}.
#[test]
fn reservations_hold_their_vnodes_at_their_time_and_move_when_a_backfill_takes_some() {
    use placesim_policy::queue::{Backfill, Depth, Planned};
    let requests = vec![
        Request::processors(1, 3),
        Request::processors(2, 3),
        Request::processors(3, 3),
        Request::processors(4, 3),
        Request::processors(6, 3),
    ];
    let jobs = vec![
        job(0, 30, 2),   // A
        job(1, 10, 3),   // H
        job(2, 10, 4),   // K
        job(3, 1000, 0), // C
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let (state, running) = running_on(6, &[(&[0, 1, 2], 30)]);
    let queue = [JobId(1), JobId(2), JobId(3)];
    let ctx = first_pass_at(3, &state, &workload, &queue, &running);
    let planned = |job: u32, start: u64, vnodes: &[u32]| Planned {
        job: JobId(job),
        start: SimTime(start),
        end: SimTime(start + 10),
        allocation: Some(std::sync::Arc::new(on(vnodes))),
    };

    let mut depth2 = Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(2));
    let mut decisions = Vec::new();
    depth2.schedule(&ctx, &mut decisions);
    assert!(decisions.is_empty(), "{decisions:?}");
    assert_eq!(
        depth2.planned(),
        [
            planned(1, 30, &[0, 1, 2, 3]),
            planned(2, 40, &[0, 1, 2, 3, 4, 5])
        ]
    );

    let mut depth1 = Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(1));
    let mut decisions = Vec::new();
    depth1.schedule(&ctx, &mut decisions);
    assert_eq!(
        decisions,
        vec![Decision::Start {
            job: JobId(3),
            allocation: on(&[3]),
        }]
    );
    assert_eq!(depth1.planned(), [planned(1, 30, &[0, 1, 2, 4])]);
    // EASY's own pass agrees.
    let mut easy = Easy::new(FirstFit::default());
    let mut easy_decisions = Vec::new();
    easy.schedule(&ctx, &mut easy_decisions);
    assert_eq!(easy_decisions, decisions);

    // On totals the same decisions, and the reservations without vnodes.
    let mut on_totals = Backfill::new(FirstFit::default(), Depth::Jobs(2));
    let mut decisions = Vec::new();
    on_totals.schedule(&ctx, &mut decisions);
    assert!(decisions.is_empty());
    let times: Vec<(JobId, SimTime, bool)> = on_totals
        .planned()
        .iter()
        .map(|p| (p.job, p.start, p.allocation.is_none()))
        .collect();
    assert_eq!(
        times,
        [(JobId(1), SimTime(30), true), (JobId(2), SimTime(40), true)]
    );
}

/// Moab's HIGHEST against CURRENTHIGHEST, at depth 1. Four single-processor vnodes; A holds v0
/// until 50 (estimated); X needs all 4 for 10, Y needs 3 for 100.
///
/// First pass, v3 down: X can never be reserved while it is down (the calendar does not know
/// when it comes back), so it uses no slot, and Y is reserved at 50. Second pass, v3 back: X
/// is reserved at 50 on every vnode, and Y, which would fit now, would still run then: it does
/// not start. Under CURRENTHIGHEST X's is the one reservation; under HIGHEST Y keeps one too,
/// after X's, at 60.
#[test]
fn highest_keeps_a_reservation_that_currenthighest_gives_up() {
    use placesim_policy::queue::{Backfill, Depth};
    let requests = vec![
        Request::processors(1, 3),
        Request::processors(3, 3),
        Request::processors(4, 3),
    ];
    let jobs = vec![job(0, 50, 0), job(1, 10, 2), job(1, 100, 1)];
    let workload = Workload::new(jobs, requests).unwrap();
    let (up, running) = running_on(4, &[(&[0], 50)]);
    let mut down = up.clone();
    down.set_down(VnodeId(3)).unwrap();
    let queue = [JobId(1), JobId(2)];
    let ctx = |state| first_pass_at(2, state, &workload, &queue, &running);
    let reserved = |policy: &Backfill<FirstFit>| -> Vec<(JobId, SimTime)> {
        policy.planned().iter().map(|p| (p.job, p.start)).collect()
    };
    let mut current = Backfill::new(FirstFit::default(), Depth::Jobs(1));
    let mut highest = Backfill::new(FirstFit::default(), Depth::Jobs(1)).keeping_reservations();
    for policy in [&mut current, &mut highest] {
        let mut decisions = Vec::new();
        policy.schedule(&ctx(&down), &mut decisions);
        assert!(decisions.is_empty());
        assert_eq!(reserved(policy), [(JobId(2), SimTime(50))]);
        policy.schedule(&ctx(&up), &mut decisions);
        assert!(decisions.is_empty(), "{decisions:?}");
    }
    assert_eq!(reserved(&current), [(JobId(1), SimTime(50))]);
    assert_eq!(
        reserved(&highest),
        [(JobId(1), SimTime(50)), (JobId(2), SimTime(60))]
    );
}

/// PBS queues with a `backfill_depth` of their own (queue-disciplines.md §2.3): four
/// one-processor vnodes, A holds v0..v2 until 10 (estimated), v3 is free; a pass at 1.
mod queue_depths {
    use super::*;
    use placesim_policy::queue::{Backfill, Depth, Discipline};

    /// `n` processors, in PBS queue `queue`.
    fn in_queue(n: u32, queue: Option<u32>) -> Request {
        let mut r = Request::processors(n, 3);
        r.queue = queue;
        r
    }

    /// What a pass said: its starts, its top jobs (job, start) and its comments.
    type Said = (Vec<Decision>, Vec<(JobId, SimTime)>, Vec<(JobId, String)>);

    /// The pass's starts, reservations (job, start) and comments, for the policy `policy`
    /// over the jobs `queued` (request, estimate), after A.
    fn pass(
        policy: &mut dyn SchedulingPolicy,
        requests: Vec<Request>,
        queued: &[(u32, u64)],
    ) -> Said {
        let mut jobs = vec![job(0, 10, 0)];
        jobs.extend(queued.iter().map(|&(r, e)| job(1, e, r)));
        let mut requests = requests;
        requests.insert(0, Request::processors(3, 3));
        let shift = |j: &mut Job| j.request = RequestId(j.request.0 + 1);
        jobs.iter_mut().skip(1).for_each(shift);
        let workload = Workload::new(jobs, requests).unwrap();
        let (state, running) = running_on(4, &[(&[0, 1, 2], 10)]);
        let queue: Vec<JobId> = (1..=queued.len() as u32).map(JobId).collect();
        let ctx = first_pass_at(1, &state, &workload, &queue, &running);
        let mut decisions = Vec::new();
        policy.schedule(&ctx, &mut decisions);
        let mut estimates = Vec::new();
        policy.drain_estimates(&mut estimates);
        let mut comments = Vec::new();
        policy.drain_comments(&mut comments);
        (
            decisions,
            estimates.iter().map(|e| (e.job, e.start)).collect(),
            comments
                .into_iter()
                .map(|(j, t)| (j, t.to_string()))
                .collect(),
        )
    }

    /// Queue 0 has depth 1, the server 1. J1 (queue 0, 4 processors) is calendared against
    /// queue 0's count, so J2 (no queue of its own, 4 processors) still gets the server's
    /// top job, at J1's end; J3 (queue 0) gets none. With the server's count alone, J1 takes
    /// the only top job.
    #[test]
    fn a_queue_with_its_own_depth_counts_its_own_top_jobs() {
        let requests = || vec![in_queue(4, Some(0)), in_queue(4, None)];
        let queued = [(0, 10), (1, 10), (0, 10)];
        for on_vnodes in [false, true] {
            let build = |depths: Vec<Option<u32>>| {
                let b = if on_vnodes {
                    Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(1))
                } else {
                    Backfill::new(FirstFit::default(), Depth::Jobs(1))
                };
                b.with_queue_depths(depths)
            };
            let (starts, tops, _) = pass(&mut build(vec![Some(1)]), requests(), &queued);
            assert!(starts.is_empty());
            assert_eq!(
                tops,
                [(JobId(1), SimTime(10)), (JobId(2), SimTime(20))],
                "on vnodes: {on_vnodes}"
            );
            let (_, tops, _) = pass(&mut build(vec![None]), requests(), &queued);
            assert_eq!(tops, [(JobId(1), SimTime(10))], "on vnodes: {on_vnodes}");
        }
    }

    /// Queue 1 has depth 0: J1 (queue 1, 2 processors) cannot start and gets no top job, and
    /// J2 (queue 1, 1 processor), which fits now, would break the queue's strict order; J3
    /// (no queue of its own) starts on v3. Without the queue's depth, J1 is calendared and
    /// J2, which ends before it, is backfilled.
    #[test]
    fn a_queue_of_depth_zero_keeps_its_own_jobs_in_strict_order() {
        let requests = || {
            vec![
                in_queue(2, Some(1)),
                in_queue(1, Some(1)),
                in_queue(1, None),
            ]
        };
        let queued = [(0, 10), (1, 5), (2, 5)];
        for on_vnodes in [false, true] {
            let build = |depths: Vec<Option<u32>>| {
                let b = if on_vnodes {
                    Backfill::on_vnodes(FirstFit::default(), Depth::Jobs(1))
                } else {
                    Backfill::new(FirstFit::default(), Depth::Jobs(1))
                };
                b.with_queue_depths(depths)
            };
            let (starts, tops, comments) =
                pass(&mut build(vec![None, Some(0)]), requests(), &queued);
            assert_eq!(
                starts,
                [Decision::Start {
                    job: JobId(3),
                    allocation: on(&[3])
                }],
                "on vnodes: {on_vnodes}"
            );
            assert!(tops.is_empty());
            assert_eq!(
                comments,
                [(
                    JobId(2),
                    "Not Running: Job would break strict sorted order".to_owned()
                )]
            );
            let (starts, tops, _) = pass(&mut build(vec![]), requests(), &queued);
            assert_eq!(
                starts,
                [Decision::Start {
                    job: JobId(2),
                    allocation: on(&[3])
                }]
            );
            assert_eq!(tops, [(JobId(1), SimTime(10))]);
        }
    }

    /// Server depth 0 is strict order; a queue with a depth above 0 turns backfilling back
    /// on. J1 (no queue of its own) then gets no top job and blocks nothing; J2 (queue 0) is
    /// calendared at 10; J3 (1 processor, ends by 6) starts. Under strict order alone,
    /// nothing starts.
    #[test]
    fn a_queue_depth_turns_backfilling_back_on_under_server_depth_zero() {
        let requests = || vec![in_queue(4, None), in_queue(4, Some(0)), in_queue(1, None)];
        let queued = [(0, 10), (1, 10), (2, 5)];
        let mut fcfs_with_queue =
            Discipline::Fcfs.build_for(Box::new(FirstFit::default()), &[Some(1)]);
        let (starts, tops, _) = pass(fcfs_with_queue.as_mut(), requests(), &queued);
        assert_eq!(
            starts,
            [Decision::Start {
                job: JobId(3),
                allocation: on(&[3])
            }]
        );
        assert_eq!(tops, [(JobId(2), SimTime(10))]);
        let mut fcfs = Discipline::Fcfs.build_for(Box::new(FirstFit::default()), &[Some(0)]);
        let (starts, tops, _) = pass(fcfs.as_mut(), requests(), &queued);
        assert!(starts.is_empty());
        assert!(tops.is_empty());
    }
}

/// Thirteen single-processor vnodes. A holds v0..v3 until 100 (estimated), B holds v4..v9
/// until 200; v10..v12 are free. The head H needs 5: at 100, v0..v3 and v10..v12 are free, so
/// it is reserved there on {v0..v3, v10}. A first pass at 1 finds that; a second at 2, with
/// nothing changed, reuses it and leaves the shadow state unbuilt. Then S (1 processor, ends
/// by 52) starts on v10, and L (1 processor, long) is the first backfill to run past 100: the
/// shadow state is built only now, from the state now (A and S given back, cheaper than
/// taking B on the idle cluster), so S, which ends by then, must be given back too. L takes
/// v11 and leaves 6 free at 100; so L2 (1 processor, long) still leaves the head its 5, and
/// starts on v12. A shadow state that still held S would have had 5 free after L, and L2
/// would have waited.
#[test]
fn a_shadow_state_built_late_gives_back_the_starts_since_its_walk() {
    use crate::common::VnodesOnly;
    let requests = vec![
        Request::processors(1, 3),
        Request::processors(4, 3),
        Request::processors(5, 3),
        Request::processors(6, 3),
    ];
    let jobs = vec![
        job(0, 100, 1),  // A
        job(0, 200, 3),  // B
        job(1, 10, 2),   // H
        job(2, 50, 0),   // S
        job(2, 1000, 0), // L
        job(2, 1000, 0), // L2
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let (state, running) = running_on(13, &[(&[0, 1, 2, 3], 100), (&[4, 5, 6, 7, 8, 9], 200)]);
    let first = [JobId(2)];
    let second = [JobId(2), JobId(3), JobId(4), JobId(5)];
    let start = |job: u32, vnode: u32| Decision::Start {
        job: JobId(job),
        allocation: on(&[vnode]),
    };
    let passes = |mut easy: Easy<VnodesOnly<FirstFit>>| {
        let mut decisions = Vec::new();
        easy.schedule(
            &first_pass_at(1, &state, &workload, &first, &running),
            &mut decisions,
        );
        assert_eq!(decisions, []);
        let ctx = SchedContext {
            fresh_from: 1,
            freed_since_last_pass: false,
            ..first_pass_at(2, &state, &workload, &second, &running)
        };
        easy.schedule(&ctx, &mut decisions);
        assert_eq!(decisions, [start(3, 10), start(4, 11), start(5, 12)]);
        easy.shortcuts()
    };
    let taken = passes(Easy::new(VnodesOnly(FirstFit::default())));
    assert_eq!(
        (
            taken.reuses,
            taken.late_views,
            taken.late_views_after_starts
        ),
        (1, 1, 1)
    );
    let plain = passes(Easy::without_shortcuts(VnodesOnly(FirstFit::default())));
    assert_eq!((plain.reuses, plain.late_views), (0, 0));
}

/// A pass taken back and run again at the same instant (as PBS fairshare does when a start
/// changes the order of the jobs after it) reads nothing in the calendar that the pass taken
/// back left. Six single-processor vnodes; R holds v0 and v1 until 100. At 1, X (1 processor,
/// ends by 51) and Y (1 processor, ends by 6) start on the first free vnodes, and the head H
/// (3 processors) is reserved at 6, when Y has ended, on the three vnodes X does not hold
/// then. Run with the queue X, Y, H (X on v2, H on v3, v4, v5), taken back, and run again
/// with Y, X, H: X is on v3, and H is reserved on v2, v4 and v5, as a fresh EASY and the plain
/// walk find. A calendar that kept X's vnodes of the run taken back, in its shadow view or
/// with the head's vnodes, would reserve H on v3 again.
#[test]
fn a_pass_run_again_at_the_same_instant_reads_nothing_of_the_pass_taken_back() {
    use crate::common::VnodesOnly;
    use placesim_core::TopJobEstimate;
    let requests = vec![
        Request::processors(1, 3),
        Request::processors(3, 3),
        Request::processors(2, 3),
    ];
    let jobs = vec![
        job(0, 100, 2), // R
        job(1, 50, 0),  // X
        job(1, 5, 0),   // Y
        job(1, 10, 1),  // H
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let (state, running) = running_on(6, &[(&[0, 1], 100)]);
    let (x, y, h) = (JobId(1), JobId(2), JobId(3));
    let first = [x, y, h];
    let again = [y, x, h];
    let pass = |easy: &mut Easy<VnodesOnly<FirstFit>>, queue: &[JobId]| {
        let mut decisions = Vec::new();
        easy.schedule(
            &first_pass_at(1, &state, &workload, queue, &running),
            &mut decisions,
        );
        let mut estimates: Vec<TopJobEstimate> = Vec::new();
        easy.drain_estimates(&mut estimates);
        let estimates: Vec<_> = estimates
            .into_iter()
            .map(|e| {
                let vnodes = e.allocation.map(|a| a.vnodes().map(|v| v.0).collect());
                (e.job, e.start, vnodes)
            })
            .collect();
        (decisions, estimates)
    };
    let start = |job: JobId, vnode: u32| Decision::Start {
        job,
        allocation: on(&[vnode]),
    };
    let mut easy = Easy::new(VnodesOnly(FirstFit::default()));
    assert_eq!(
        pass(&mut easy, &first),
        (
            vec![start(x, 2), start(y, 3)],
            vec![(h, SimTime(6), Some(vec![3, 4, 5]))]
        )
    );
    easy.retract_pass();
    let expected = (
        vec![start(y, 2), start(x, 3)],
        vec![(h, SimTime(6), Some(vec![2, 4, 5]))],
    );
    assert_eq!(pass(&mut easy, &again), expected);
    let shortcuts = easy.shortcuts();
    assert_eq!((shortcuts.idle_builds, shortcuts.kept_syncs), (1, 1));
    let mut fresh = Easy::new(VnodesOnly(FirstFit::default()));
    assert_eq!(pass(&mut fresh, &again), expected);
    let mut plain = Easy::without_shortcuts(VnodesOnly(FirstFit::default()));
    assert_eq!(pass(&mut plain, &again), expected);
}
