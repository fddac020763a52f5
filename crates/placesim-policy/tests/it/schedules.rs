//! Tiny traces whose schedules were worked out by hand; every start is asserted.

use crate::common::{Ran, VnodesOnly, schedule, schedule_with, swf_line, trace_from_text};
use placesim_policy::Discipline;
use placesim_policy::placement::FirstFit;
use placesim_policy::queue::{Backfill, Depth};

/// 4 processors.
/// J1 t=0 size 2 run 10 est 20; J2 t=0 size 4 run 5 est 5; J3 t=1 size 1 run 3 est 3;
/// J4 t=2 size 2 run 4 est 100.
///
/// FCFS: J1 starts at 0; J2 needs all 4 and waits for J1 (ends 10), runs 10–15; J3 and J4
/// queue behind it and start at 15.
///
/// EASY: J2's shadow time is J1's estimated end, 20, with extra = 4 − 4 = 0. J3 fits now
/// (2 free) and ends by 4 ≤ 20: backfilled at 1. J4 (t=2) does not fit (1 free); at 4 it fits
/// but would end at 104 > 20 and uses 2 > extra 0: not backfilled. J1 really ends at 10, J2
/// starts then; J4 starts when J2 ends at 15.
/// (The shared hand-worked trace, placesim-testkit's `HAND_TRACE`.)
fn trace_blocking_head() -> String {
    placesim_testkit::HAND_TRACE.to_owned()
}

#[test]
fn fcfs_never_overtakes() {
    let t = trace_from_text(&trace_blocking_head(), 4);
    assert_eq!(
        schedule(&t, Discipline::Fcfs),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 15),
            Ran::finished(3, 15, 18),
            Ran::finished(4, 15, 19)
        ]
    );
}

#[test]
fn easy_backfills_only_what_ends_by_the_shadow_time_when_extra_is_zero() {
    let t = trace_blocking_head();
    let t = trace_from_text(&t, 4);
    assert_eq!(
        schedule(&t, Discipline::EASY),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 15),
            Ran::finished(3, 1, 4),
            Ran::finished(4, 15, 19)
        ]
    );
}

/// Greedy on the same trace reserves nothing: J3 starts at 1 beside J1 (2 free); J4 (t=2,
/// size 2) finds 1 free, and starts at 4 when J3 ends, ahead of J2, which needs all 4 and
/// starts only when J1 ends at 10 (J4 ended at 8).
#[test]
fn greedy_starts_whatever_fits_and_reserves_nothing() {
    let t = trace_from_text(&trace_blocking_head(), 4);
    assert_eq!(
        schedule(&t, Discipline::Greedy),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 15),
            Ran::finished(3, 1, 4),
            Ran::finished(4, 4, 8)
        ]
    );
}

/// 4 processors. J1 t=0 size 3 run 10 est 10; J2 t=1 size 2 (blocked: 1 free) → shadow 10,
/// free then 4, extra = 2. J3 t=2 size 1 run 100: fits now, ends after the shadow, but
/// 1 ≤ extra: backfilled at 2 (extra becomes 1). J4 t=3 size 1: nothing free until 10. At 10 J1
/// ends: J2 starts (2 of 3 free), then J4 as the next head (1 free).
#[test]
fn easy_backfills_long_jobs_into_extra() {
    let text = [
        swf_line(1, 0, 10, 3, 10),
        swf_line(2, 1, 10, 2, 10),
        swf_line(3, 2, 100, 1, 100),
        swf_line(4, 3, 100, 1, 100),
    ]
    .concat();
    let t = trace_from_text(&text, 4);
    assert_eq!(
        schedule(&t, Discipline::EASY),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 20),
            Ran::finished(3, 2, 102),
            Ran::finished(4, 10, 110)
        ]
    );
    // FCFS on the same trace: J3 and J4 wait behind J2, then all three fit at 10.
    assert_eq!(
        schedule(&t, Discipline::Fcfs),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 20),
            Ran::finished(3, 10, 110),
            Ran::finished(4, 10, 110)
        ]
    );
}

/// 2 processors. A t=0 size 2 run 10. B and C are submitted at 10, the instant A ends, B first
/// in the file. Ends are processed before submits, so B sees both processors free and starts
/// at 10; C (size 1) then has nothing free and starts when B ends at 15, under both
/// disciplines (C's estimate 20 ends after B's shadow at 15 and extra is 0).
#[test]
fn ends_come_before_submits_at_one_instant_and_line_order_breaks_ties() {
    let text = [
        swf_line(1, 0, 10, 2, 10),
        swf_line(2, 10, 5, 2, 5),
        swf_line(3, 10, 1, 1, 20),
    ]
    .concat();
    let t = trace_from_text(&text, 2);
    let expected = vec![
        Ran::finished(1, 0, 10),
        Ran::finished(2, 10, 15),
        Ran::finished(3, 15, 16),
    ];
    assert_eq!(schedule(&t, Discipline::Fcfs), expected);
    assert_eq!(schedule(&t, Discipline::EASY), expected);
}

/// 2 processors. K t=0 size 1 runs 50 but asked for 30: killed at 30. L t=0 size 2 waits for K.
/// M t=0 size 1 run 5 est 5: under FCFS it waits behind L (starts when L ends at 40); under
/// EASY L's shadow is 30 and M ends by 5 ≤ 30, so M is backfilled at 0.
#[test]
fn job_is_killed_at_its_walltime() {
    let text = [
        swf_line(1, 0, 50, 1, 30),
        swf_line(2, 0, 10, 2, 10),
        swf_line(3, 0, 5, 1, 5),
    ]
    .concat();
    let t = trace_from_text(&text, 2);
    assert_eq!(
        schedule(&t, Discipline::Fcfs),
        vec![
            Ran::killed(1, 0, 30),
            Ran::finished(2, 30, 40),
            Ran::finished(3, 40, 45)
        ]
    );
    assert_eq!(
        schedule(&t, Discipline::EASY),
        vec![
            Ran::killed(1, 0, 30),
            Ran::finished(2, 30, 40),
            Ran::finished(3, 0, 5)
        ]
    );
}

/// A missing estimate (field 9 = -1) becomes the run time, so the job is never killed, and a
/// size of -1 in field 8 falls back to field 5.
#[test]
fn missing_estimate_and_requested_size_fall_back() {
    let text = "1 0 -1 40 2 -1 -1 -1 -1 -1 1 1 1 -1 1 -1 -1 -1\n2 0 -1 5 1 -1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1\n";
    let t = trace_from_text(text, 2);
    let j = &t.workload.jobs()[0];
    assert_eq!((j.size, j.estimate.as_secs()), (2, 40));
    assert_eq!(
        schedule(&t, Discipline::EASY),
        vec![Ran::finished(1, 0, 40), Ran::finished(2, 40, 45)]
    );
}

/// 4 processors; every estimate is exact.
/// J1 t=0 size 3 run 10; J2 t=0 size 2 run 10; J3 t=0 size 4 run 10; J4 t=1 size 1 run 30.
///
/// EASY: J1 starts at 0 (1 free). J2 is the head: shadow 10 (J1's end), extra 4 − 2 = 2. J3
/// gets nothing. J4 (t=1) fits in the 1 free and runs past 10, but 1 ≤ extra: backfilled, 1–31.
/// At 10 J2 starts (10–20); J3 needs all 4 and waits for J4: 31–41.
///
/// Depth 2 (and conservative): J2 is reserved [10, 20) and J3 [20, 30). J4 over [1, 31) would
/// hold 1 processor at 20, when J3 needs all 4: it waits. At 10 J2 starts; J3 is reserved at
/// 20 again, and J4 (2 free now) still clashes with it; J4's own reservation is at 30, after
/// J3. At 20 J3 starts (20–30), at 30 J4 (30–60).
fn trace_second_reservation() -> String {
    [
        swf_line(1, 0, 10, 3, 10),
        swf_line(2, 0, 10, 2, 10),
        swf_line(3, 0, 10, 4, 10),
        swf_line(4, 1, 30, 1, 30),
    ]
    .concat()
}

#[test]
fn a_second_reservation_blocks_what_easy_backfills() {
    let t = trace_from_text(&trace_second_reservation(), 4);
    let easy = vec![
        Ran::finished(1, 0, 10),
        Ran::finished(2, 10, 20),
        Ran::finished(3, 31, 41),
        Ran::finished(4, 1, 31),
    ];
    let deep = vec![
        Ran::finished(1, 0, 10),
        Ran::finished(2, 10, 20),
        Ran::finished(3, 20, 30),
        Ran::finished(4, 30, 60),
    ];
    assert_eq!(schedule(&t, Discipline::EASY), easy);
    let depth = |n| Discipline::EASY.with_backfill_depth(n).expect("easy");
    assert_eq!(schedule(&t, depth(1)), easy);
    assert_eq!(schedule(&t, depth(2)), deep);
    assert_eq!(schedule(&t, depth(4)), deep);
    assert_eq!(schedule(&t, Discipline::Conservative), deep);
    // The vnode form gives the same schedules.
    for (n, expected) in [(1, &easy), (2, &deep)] {
        let mut on_vnodes = Backfill::on_vnodes(VnodesOnly(FirstFit::default()), Depth::Jobs(n));
        assert_eq!(&schedule_with(&t, &mut on_vnodes), expected, "depth {n}");
    }
    let mut on_vnodes = Backfill::on_vnodes(FirstFit::default(), Depth::All);
    assert_eq!(schedule_with(&t, &mut on_vnodes), deep);
    // Backfill off: strict order.
    assert_eq!(
        schedule(&t, depth(0)),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 10, 20),
            Ran::finished(3, 20, 30),
            Ran::finished(4, 30, 60),
        ]
    );
}

/// The shared hand-worked trace: J4's reservation (after J2's) holds nothing back, so every
/// depth gives EASY's schedule.
#[test]
fn every_depth_is_easy_when_one_job_is_blocked_at_a_time() {
    let t = trace_from_text(&trace_blocking_head(), 4);
    let easy = schedule(&t, Discipline::EASY);
    for n in [2, 3] {
        let d = Discipline::EASY.with_backfill_depth(n).expect("easy");
        assert_eq!(schedule(&t, d), easy, "depth {n}");
    }
}

/// Scheduler cycles on the shared hand-worked trace under FCFS (event-exact: J1 0–10, J2
/// 10–15, J3 15–18, J4 15–19).
///
/// PBS's cycles (on every submit and end, and every 7 s here) give the same schedule: the
/// extra cycles find nothing new. Moab's polling every 7 s passes only at 0, 7, 14, 21, ...:
/// J1 starts at 0; J1's end at 10 waits for the iteration at 14, where J2 starts (14–19); J2's
/// end at 19 waits for 21, where J3 (21–24) and J4 (21–25) start.
#[test]
fn scheduler_cycles_delay_starts_to_the_next_iteration() {
    use placesim_core::{Cluster, Cycles, SimDuration, VecSink};
    let t = trace_from_text(&trace_blocking_head(), 4);
    let under = |cycles: Cycles| -> Vec<Ran> {
        let mut sink = VecSink::default();
        let mut fcfs = Discipline::Fcfs.build();
        placesim_testkit::Replay::on(&t.workload, Cluster::homogeneous(4, 1).unwrap())
            .cycles(cycles)
            .run(fcfs.as_mut(), &mut sink);
        let mut rows: Vec<Ran> = sink
            .outcomes
            .iter()
            .map(|o| {
                let job = t.workload.job(o.job).source_id;
                Ran::finished(job, o.start.as_secs(), o.end.as_secs())
            })
            .collect();
        rows.sort();
        rows
    };
    let exact = schedule(&t, Discipline::Fcfs);
    assert_eq!(under(Cycles::EventExact), exact);
    assert_eq!(under(Cycles::PbsIteration(SimDuration(7))), exact);
    assert_eq!(
        under(Cycles::MoabPoll(SimDuration(7))),
        vec![
            Ran::finished(1, 0, 10),
            Ran::finished(2, 14, 19),
            Ran::finished(3, 21, 24),
            Ran::finished(4, 21, 25),
        ]
    );
}
