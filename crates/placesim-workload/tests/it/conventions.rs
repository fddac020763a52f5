//! The SWF conventions, pinned.

use placesim_core::ResourceDefs;
use placesim_workload::{SkipReason, SwfOptions, read_trace};
use std::path::Path;

fn line(id: i64, submit: i64, run: i64, alloc: i64, req: i64, est: i64, status: i64) -> String {
    format!("{id} {submit} -1 {run} {alloc} -1 -1 {req} {est} -1 {status} 1 1 -1 1 -1 -1 -1\n")
}

#[test]
fn sizes_estimates_skips_and_machine_size_follow_the_documented_rules() {
    let text = [
        "; MaxNodes: 8\n; MaxProcs: 16 (batch)\n".to_owned(),
        line(1, 0, 10, 4, 8, 100, 1), // size = requested 8; estimate 100
        line(2, 1, 10, 4, -1, -1, 1), // size = allocated 4; estimate = run time 10
        line(3, 2, 10, -1, -1, 50, 1), // no size: skipped
        line(4, 3, -1, 4, 4, 50, 5),  // negative run time: skipped
        line(5, 4, 10, 32, 32, 50, 1), // larger than 16: skipped
        line(6, 5, 10, 2, 2, 50, 2),  // partial execution: skipped
        line(7, -1, 10, 2, 2, 50, 1), // no submit time: skipped
    ]
    .concat();
    let t = read_trace(
        text.as_bytes(),
        Path::new("t.swf"),
        &SwfOptions::default(),
        &ResourceDefs::default(),
    )
    .unwrap();
    assert_eq!(t.procs, 16, "MaxProcs wins over MaxNodes");
    assert_eq!(t.records, 7);
    let jobs: Vec<(u64, u32, u64)> = t
        .workload
        .jobs()
        .iter()
        .map(|j| (j.source_id, j.size, j.estimate.as_secs()))
        .collect();
    assert_eq!(jobs, vec![(1, 8, 100), (2, 4, 10)]);
    for (reason, n) in [
        (SkipReason::NoSize, 1),
        (SkipReason::NegativeRuntime, 1),
        (SkipReason::TooLarge, 1),
        (SkipReason::PartialExecution, 1),
        (SkipReason::NegativeSubmit, 1),
        (SkipReason::BadLine, 0),
    ] {
        assert_eq!(t.skipped.get(reason), n, "{reason:?}");
    }
    // --procs overrides the header: now job 5 fits.
    let opts = SwfOptions {
        procs: Some(32),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    let t = read_trace(
        text.as_bytes(),
        Path::new("t.swf"),
        &opts,
        &ResourceDefs::default(),
    )
    .unwrap();
    assert_eq!((t.procs, t.workload.jobs().len()), (32, 3));
}

#[test]
fn unsorted_submits_are_sorted_stably_by_submit_time() {
    let text = [
        line(1, 10, 5, 1, 1, 5, 1),
        line(2, 3, 5, 1, 1, 5, 1),
        line(3, 10, 5, 1, 1, 5, 1),
        line(4, 3, 5, 1, 1, 5, 1),
    ]
    .concat();
    let opts = SwfOptions {
        procs: Some(4),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    let t = read_trace(
        text.as_bytes(),
        Path::new("t.swf"),
        &opts,
        &ResourceDefs::default(),
    )
    .unwrap();
    assert!(t.resorted);
    let order: Vec<u64> = t.workload.jobs().iter().map(|j| j.source_id).collect();
    assert_eq!(order, vec![2, 4, 1, 3]);
}

#[test]
fn requests_are_interned_per_size() {
    let text = [
        line(1, 0, 5, 2, 2, 5, 1),
        line(2, 1, 5, 3, 3, 5, 1),
        line(3, 2, 5, 2, 2, 5, 1),
    ]
    .concat();
    let opts = SwfOptions {
        procs: Some(4),
        skip_bad_lines: false,
        keep_field: None,
        keep_extended: false,
    };
    let t = read_trace(
        text.as_bytes(),
        Path::new("t.swf"),
        &opts,
        &ResourceDefs::default(),
    )
    .unwrap();
    assert_eq!(t.workload.requests().len(), 2);
    let jobs = t.workload.jobs();
    assert_eq!(jobs[0].request, jobs[2].request);
    assert_eq!(
        t.workload
            .request_of(placesim_core::JobId(1))
            .total(placesim_core::ConsumableIdx::NCPUS),
        3
    );
}
