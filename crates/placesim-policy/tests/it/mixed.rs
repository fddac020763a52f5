//! Workloads that mix request shapes: EASY's totals shortcut, its switch to the vnode form part
//! way through a pass, and the pure vnode form must all make the same decisions.

use crate::common::{CheckingSink, VnodesOnly};
use placesim_core::{
    Arrangement, Chunk, Cluster, ClusterBuilder, Job, Request, RequestId, ResourceDefs,
    SchedulingPolicy, Sharing, SimDuration, SimTime, Workload,
};
use placesim_policy::placement::FirstFit;
use placesim_policy::queue::Easy;
use placesim_testkit::{Lcg, Replay};

/// 8 hosts of two vnodes with 2 ncpus each: 32 ncpus.
fn cluster() -> Cluster {
    let mut b = ClusterBuilder::new(ResourceDefs::default());
    for h in 0..8 {
        let host = b.add_host(format!("h{h}"));
        for v in 0..2 {
            b.add_vnode(format!("h{h}v{v}"), host, 1.0, &[2, 0, 0], Vec::new())
                .unwrap();
        }
    }
    b.build().unwrap()
}

fn request(chunks: u32, ncpus: u64, arrangement: Arrangement, sharing: Sharing) -> Request {
    Request {
        arrangement,
        sharing,
        ..Request::from_chunks(vec![Chunk::new(chunks, vec![ncpus, 0, 0])])
    }
}

/// Half the jobs ask for single-ncpu chunks (fit decided by totals); the rest for two-ncpu
/// chunks, exclusive vnodes, or one chunk per host.
fn workload(seed: u64, n: usize) -> Workload {
    let mut rng = Lcg(seed);
    let mut requests = Vec::new();
    let mut jobs = Vec::new();
    let mut submit = 0;
    for _ in 0..n {
        submit += rng.below(40);
        let size = 1 + rng.below(12) as u32;
        let r = match rng.below(8) {
            0..=3 => request(size, 1, Arrangement::Free, Sharing::Shared),
            4 | 5 => request(size.div_ceil(2), 2, Arrangement::Free, Sharing::Shared),
            6 => request(size.min(8), 1, Arrangement::Free, Sharing::Excl),
            _ => request(size.min(8), 1, Arrangement::Scatter, Sharing::Shared),
        };
        requests.push(r);
        let runtime = 1 + rng.below(600);
        let estimate = if rng.below(5) == 0 {
            runtime / 2 + 1
        } else {
            runtime + rng.below(900)
        };
        jobs.push(Job::new(
            jobs.len() as u64 + 1,
            SimTime(submit),
            SimDuration(runtime),
            SimDuration(estimate),
            size,
            RequestId::from_index(requests.len() - 1),
        ));
    }
    Workload::new(jobs, requests).unwrap()
}

/// One start as the kernel reported it.
#[derive(Debug, PartialEq, Eq)]
struct Start {
    job: u32,
    time: u64,
    vnodes: Vec<u32>,
    amounts: Vec<u64>,
}

/// Every start, with its vnodes and amounts, in the order the kernel reported them.
fn decisions(workload: &Workload, policy: &mut dyn SchedulingPolicy) -> Vec<Start> {
    let cluster = cluster();
    let mut sink = CheckingSink::default();
    let stats = Replay::on(workload, cluster.clone()).run(policy, &mut sink);
    assert!(stats.never_started.is_empty());
    assert_eq!(sink.first_oversubscription(&cluster), None);
    sink.log
        .iter()
        .filter(|(is_start, _, _)| *is_start)
        .map(|&(_, id, t)| {
            let a = &sink.starts[&id].1;
            Start {
                job: id.0,
                time: t,
                vnodes: a.vnodes().map(|v| v.0).collect(),
                amounts: a
                    .parts(cluster.resources().n_consumables())
                    .flat_map(|(_, x)| x.iter().copied())
                    .collect(),
            }
        })
        .collect()
}

#[test]
fn easy_decides_the_same_on_totals_and_on_vnodes_for_mixed_requests() {
    for seed in [1, 2, 3, 4] {
        let w = workload(seed, 1500);
        let mixed = decisions(&w, &mut Easy::new(FirstFit::default()));
        let on_vnodes = decisions(&w, &mut Easy::new(VnodesOnly(FirstFit::default())));
        assert_eq!(mixed.len(), 1500);
        let first_diff = mixed.iter().zip(&on_vnodes).position(|(a, b)| a != b);
        assert_eq!(first_diff, None, "seed {seed}: first differing start");
        // Backfilling happened: some job started before a job submitted ahead of it.
        assert!(
            mixed.windows(2).any(|p| p[1].job < p[0].job),
            "seed {seed}: no out-of-order start"
        );
    }
}
