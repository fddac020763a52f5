//! The runtime model through the real kernel: H from the slowest vnode, C from the groups
//! spanned, walltime kills of stretched jobs, and schedulers planning with estimates only.

use crate::common::trace_from_text;
use placesim_core::{
    Allocation, AttrValue, ClusterBuilder, ClusterState, CommForm, EndReason, JobId, ResourceDefs,
    ResourceKind, RuntimeModel, RuntimeSettings, Sharing, VecSink, VnodeId, WalltimePolicy,
    Workload,
};
use placesim_policy::Discipline;
use placesim_testkit::Replay;

/// Four single-vnode hosts: v0, v1 of speed 1 on switch A; v2, v3 of speed 2 on switch B.
fn cluster() -> placesim_core::Cluster {
    let mut defs = ResourceDefs::default();
    let switch = defs.define("switch", ResourceKind::String, false).unwrap();
    let mut b = ClusterBuilder::new(defs);
    for (i, (speed, sw)) in [(1.0, "A"), (1.0, "A"), (2.0, "B"), (2.0, "B")]
        .into_iter()
        .enumerate()
    {
        let h = b.add_host(format!("v{i}"));
        b.add_vnode(
            format!("v{i}"),
            h,
            speed,
            &[1, 0, 0],
            vec![(switch, AttrValue::Str(sw.into()))],
        )
        .unwrap();
    }
    b.build().unwrap()
}

fn settings(comm: CommForm) -> RuntimeSettings {
    let switch = cluster().resources().lookup("switch");
    RuntimeSettings {
        speed_reference: None,
        balanced: false,
        topology: switch,
        comm,
    }
}

/// Runs `workload` under FCFS on `state` with `model`, returning (start, end, outcome) by job.
fn run(
    workload: &Workload,
    state: ClusterState,
    model: &RuntimeModel,
    walltime: WalltimePolicy,
) -> Vec<placesim_core::JobOutcome> {
    let mut sink = VecSink::default();
    let mut policy = Discipline::Fcfs.build();
    Replay::from_state(workload, state)
        .walltime(walltime)
        .runtime_model(model)
        .run(policy.as_mut(), &mut sink);
    sink.outcomes.sort_by_key(|o| o.job);
    sink.outcomes
}

/// Reads jobs from SWF lines with the cluster's resource definitions (4 processors).
fn workload(lines: &str) -> Workload {
    let trace = trace_from_text(&format!("; MaxProcs: 4\n{lines}"), 4);
    let requests: Vec<_> = trace
        .workload
        .requests()
        .iter()
        .map(|r| {
            placesim_core::Request::processors(
                r.total(placesim_core::ConsumableIdx::NCPUS) as u32,
                3,
            )
        })
        .collect();
    Workload::new(trace.workload.jobs().to_vec(), requests).unwrap()
}

#[test]
fn the_slowest_vnode_sets_the_pace_and_fast_vnodes_shorten_jobs() {
    // Two jobs of 2 processors, runtime 100: the first gets v0 and v1 (speed 1), the second
    // v2 and v3 (speed 2). The reference is the slowest class, 1.
    let w = workload(
        "1 0 -1 100 2 -1 -1 2 1000 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 0 -1 100 2 -1 -1 2 1000 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.2; 2],
        Vec::new(),
    );
    let out = run(
        &w,
        ClusterState::new(cluster()),
        &model,
        WalltimePolicy::Kill,
    );
    assert_eq!((out[0].start.0, out[0].end.0), (0, 100));
    assert_eq!(out[0].stretch.speed_factor, 1.0);
    assert_eq!((out[1].start.0, out[1].end.0), (0, 50));
    assert_eq!(out[1].stretch.speed_factor, 0.5);
    assert_eq!(out[1].stretch.speed_spread, 0.0);
    // Both stay inside one switch: no communication penalty.
    assert_eq!(out[0].stretch.comm_factor, 1.0);
    assert_eq!(out[1].stretch.sets_spanned, 1);
}

/// A state where another job holds v1 and v3, so a 2-processor job gets v0 (A) and v2 (B).
fn split_state() -> ClusterState {
    let mut state = ClusterState::new(cluster());
    let mut held = Allocation::new(Sharing::Shared);
    held.add(VnodeId(1), &[1, 0, 0]);
    held.add(VnodeId(3), &[1, 0, 0]);
    state.allocate(&held).unwrap();
    state
}

#[test]
fn spanning_switches_costs_beta_times_the_cross_pair_fraction() {
    let w = workload("1 0 -1 100 2 -1 -1 2 1000 -1 1 1 1 -1 1 -1 -1 -1\n");
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.2],
        Vec::new(),
    );
    let out = run(&w, split_state(), &model, WalltimePolicy::Kill);
    // Slowest of v0 (1) and v2 (2) is 1: H = 1. X = 1 − (½² + ½²) = ½, C = 1 + 0.2·½ = 1.1.
    let s = out[0].stretch;
    assert_eq!((s.speed_factor, s.sets_spanned), (1.0, 2));
    assert!((s.comm_factor - 1.1).abs() < 1e-12);
    assert_eq!(s.speed_spread, 1.0);
    assert_eq!(out[0].end.0, 110);
    // An insensitive job (β = 0) pays nothing for the same placement.
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.0],
        Vec::new(),
    );
    assert_eq!(
        run(&w, split_state(), &model, WalltimePolicy::Kill)[0]
            .end
            .0,
        100
    );
    // The groups form: 1 + min(α·(S − 1), cap) = 1 + min(0.3, 0.25).
    let groups = CommForm::SetsSpanned {
        alpha: 0.3,
        cap: 0.25,
    };
    let model = RuntimeModel::new(&cluster(), settings(groups), vec![0.2], Vec::new());
    assert_eq!(
        run(&w, split_state(), &model, WalltimePolicy::Kill)[0]
            .end
            .0,
        125
    );
}

#[test]
fn a_stretched_job_is_killed_at_its_estimate_or_overruns_on_request() {
    // Estimate 105 < the stretched 110.
    let w = workload("1 0 -1 100 2 -1 -1 2 105 -1 1 1 1 -1 1 -1 -1 -1\n");
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.2],
        Vec::new(),
    );
    let killed = run(&w, split_state(), &model, WalltimePolicy::Kill);
    assert_eq!(
        (killed[0].end.0, killed[0].reason),
        (105, EndReason::WalltimeKilled)
    );
    let overrun = run(&w, split_state(), &model, WalltimePolicy::Overrun);
    assert_eq!(
        (overrun[0].end.0, overrun[0].reason),
        (110, EndReason::Finished)
    );
}

#[test]
fn noise_multiplies_and_load_balanced_jobs_use_the_mean_speed() {
    let w = workload("1 0 -1 100 2 -1 -1 2 1000 -1 1 1 1 -1 1 -1 -1 -1\n");
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.0],
        vec![1.5],
    );
    let out = run(&w, split_state(), &model, WalltimePolicy::Kill);
    assert_eq!((out[0].end.0, out[0].stretch.noise), (150, 1.5));
    let balanced = RuntimeSettings {
        balanced: true,
        ..settings(CommForm::PairFraction)
    };
    let model = RuntimeModel::new(&cluster(), balanced, vec![0.0], Vec::new());
    // Mean speed of v0 (1) and v2 (2) is 1.5: H = 1 / 1.5, runtime 66.67 → 67.
    assert_eq!(
        run(&w, split_state(), &model, WalltimePolicy::Kill)[0]
            .end
            .0,
        67
    );
}

#[test]
fn schedulers_plan_with_estimates_not_stretched_runtimes() {
    // Job 1 (2 procs) will really run 50 s on the fast vnodes but estimates 1000; job 2
    // needs all 4 processors. EASY reserves for job 2 at job 1's *estimated* end; job 3
    // (1 proc, estimate 900) ends before that, so it backfills: the reservation did not move
    // to the true end at 50.
    let w = workload(
        "1 0 -1 100 2 -1 -1 2 1000 -1 1 1 1 -1 1 -1 -1 -1\n\
         2 1 -1 100 4 -1 -1 4 1000 -1 1 1 1 -1 1 -1 -1 -1\n\
         3 2 -1 100 1 -1 -1 1 900 -1 1 1 1 -1 1 -1 -1 -1\n",
    );
    // Hold v0 and v1 until t = 0 only: start from an empty cluster where job 1 lands on v0, v1.
    let model = RuntimeModel::new(
        &cluster(),
        settings(CommForm::PairFraction),
        vec![0.0; 3],
        Vec::new(),
    );
    let mut sink = VecSink::default();
    let mut easy = Discipline::EASY.build();
    Replay::on(&w, cluster())
        .runtime_model(&model)
        .run(easy.as_mut(), &mut sink);
    sink.outcomes.sort_by_key(|o| o.job);
    let starts: Vec<u64> = sink.outcomes.iter().map(|o| o.start.0).collect();
    // Job 1 on v0, v1 (speed 1) ends at 100; job 3 backfills at 2 on v2 (speed 2, ends 52);
    // job 2 starts when all four are free, at 100.
    assert_eq!(starts, vec![0, 100, 2]);
    assert_eq!(sink.outcomes[2].end.0, 52);
    assert_eq!(sink.outcomes[0].job, JobId(0));
}
