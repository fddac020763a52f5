//! Tiny traces whose schedules were worked out by hand; every start is asserted.

use crate::common::{Ran, schedule, swf_line, trace_from_text};
use placesim_policy::Discipline;

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
