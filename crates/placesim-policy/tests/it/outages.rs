//! Vnode outages: requeue in submit order with lost work counted, or kill; waiting for a vnode
//! to come back; `||` alternatives evaluated again after a requeue (seed 001); down vnodes
//! count as assigned in PBS placement-set order and are not eligible for Moab node sets.

use placesim_core::{
    Allocation, ClusterState, Job, JobId, JobOutcome, MetricsSink, RunStats, SimTime, Workload,
};
use placesim_scenario::{Scenario, load_scenario};
use placesim_testkit::Replay;
use std::path::Path;

/// What a run reported, in order.
#[derive(Debug, Default)]
struct Record {
    starts: Vec<Started>,
    ends: Vec<JobOutcome>,
    requeued: Vec<Requeued>,
}

/// One start, as the sink saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Started {
    job: u32,
    time: u64,
    /// The vnode ids, `[0, 1]`.
    vnodes: String,
    /// The placement's label (empty for none).
    label: String,
}

impl Started {
    /// `J0@30 on [1]`: who started when, where.
    fn at(&self) -> String {
        format!("J{}@{} on {}", self.job, self.time, self.vnodes)
    }

    /// `J0@30 on [1] in rack=r1`: the same, with the set.
    fn in_set(&self) -> String {
        format!("{} in {}", self.at(), self.label)
    }
}

/// One requeue, with the job's totals so far.
#[derive(Debug, PartialEq, Eq)]
struct Requeued {
    job: u32,
    requeues: u32,
    lost_core_seconds: u64,
}

impl MetricsSink for Record {
    fn job_started(&mut self, _job: &Job, id: JobId, start: SimTime, a: &Allocation) {
        self.starts.push(Started {
            job: id.0,
            time: start.as_secs(),
            vnodes: format!("{:?}", a.vnodes().map(|v| v.0).collect::<Vec<_>>()),
            label: a.label.as_deref().unwrap_or("").to_owned(),
        });
    }
    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        self.ends.push(*outcome);
    }
    fn job_requeued(&mut self, _now: placesim_core::SimTime, id: JobId, requeues: u32, lost: u64) {
        self.requeued.push(Requeued {
            job: id.0,
            requeues,
            lost_core_seconds: lost,
        });
    }
}

fn scenario(text: &str) -> Scenario {
    load_scenario(text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// `jobs` (submit, runtime = estimate, request) as a workload on `s`'s resources.
fn workload_of(s: &Scenario, jobs: &[(u64, u64, &str)]) -> Workload {
    let jobs: Vec<_> = jobs.iter().map(|&(a, b, c)| (a, b, b, c)).collect();
    crate::common::workload_of(s.cluster.resources(), &jobs)
}

/// What a test expects of one job's end, in the order jobs ended.
#[derive(Debug, PartialEq, Eq)]
struct Ended {
    job: u32,
    start: u64,
    end: u64,
    requeues: u32,
    /// Core-seconds lost to vnode failures.
    lost: u64,
    reason: placesim_core::EndReason,
}

/// The ends `record` saw, in order.
fn ended(record: &Record) -> Vec<Ended> {
    record
        .ends
        .iter()
        .map(|o| Ended {
            job: o.job.0,
            start: o.start.as_secs(),
            end: o.end.as_secs(),
            requeues: o.requeues,
            lost: o.lost_core_seconds,
            reason: o.reason,
        })
        .collect()
}

/// Runs `jobs` on `s` with its placement, discipline and outages.
fn simulate(s: &Scenario, jobs: &[(u64, u64, &str)]) -> (Record, RunStats) {
    let workload = workload_of(s, jobs);
    let mut state = ClusterState::new(s.cluster.clone());
    let placement = s.placement(&workload).instance(&mut state);
    let mut policy = s.run.discipline.build_with(placement);
    let mut record = Record::default();
    let stats = Replay::from_state(&workload, state)
        .outages(&s.outages(&workload).unwrap(), s.failures.on_failure)
        .run(policy.as_mut(), &mut record);
    (record, stats)
}

/// Two 4-ncpu vnodes n1, n2 (ids 0, 1), and `more` scenario lines.
fn two_vnodes(more: &str) -> Scenario {
    scenario(&format!(
        "[[class]]\nname = \"n\"\ncount = 2\nnames = [\"n1\", \"n2\"]\nncpus = 4\n{more}"
    ))
}

const THREE_JOBS: [(u64, u64, &str); 3] = [
    (0, 100, "select=1:ncpus=4"),
    (1, 50, "select=1:ncpus=4"),
    (10, 10, "select=1:ncpus=4"),
];

/// n1 goes down at 30 under J0 (started at 0): J0 is requeued with 4 × 30 core-seconds lost,
/// and goes back ahead of J2 (submitted at 10, after J0), so it restarts first, on n2, when
/// J1 ends; J2 follows when J0 ends, n1 being still down.
#[test]
fn a_failed_vnode_requeues_its_job_in_submit_order() {
    let s = two_vnodes("[[failures.outage]]\nvnode = \"n1\"\ndown = 30\nup = 500\n");
    let (record, stats) = simulate(&s, &THREE_JOBS);
    let starts: Vec<String> = record.starts.iter().map(Started::at).collect();
    assert_eq!(
        starts,
        [
            "J0@0 on [0]",
            "J1@1 on [1]",
            "J0@51 on [1]",
            "J2@151 on [1]"
        ]
    );
    assert_eq!(
        record.requeued,
        [Requeued {
            job: 0,
            requeues: 1,
            lost_core_seconds: 120
        }]
    );
    use placesim_core::EndReason::Finished;
    assert_eq!(
        ended(&record),
        [
            Ended {
                job: 1,
                start: 1,
                end: 51,
                requeues: 0,
                lost: 0,
                reason: Finished
            },
            Ended {
                job: 0,
                start: 51,
                end: 151,
                requeues: 1,
                lost: 120,
                reason: Finished
            },
            Ended {
                job: 2,
                start: 151,
                end: 161,
                requeues: 0,
                lost: 0,
                reason: Finished
            },
        ]
    );
    assert_eq!((stats.requeues, stats.jobs_failed), (1, 0));
    assert_eq!(stats.lost_core_seconds, 120);
    // n1 down from 30 to the last event (161): 4 × 131 of 8 × 161 ncpu-seconds.
    assert_eq!(stats.down_ncpu_seconds, 524);
    assert_eq!(stats.capacity_ncpu_seconds, 1288);
    assert!((stats.availability() - (1.0 - 524.0 / 1288.0)).abs() < 1e-12);
}

/// With `on_failure = "kill"` J0 ends at 30, failed, and J2 takes n2 when J1 ends.
#[test]
fn a_failed_vnode_kills_its_job_when_asked() {
    let s = two_vnodes(
        "[failures]\non_failure = \"kill\"\n[[failures.outage]]\nvnode = \"n1\"\ndown = 30\nup = 500\n",
    );
    let (record, stats) = simulate(&s, &THREE_JOBS);
    use placesim_core::EndReason::{Finished, VnodeFailed};
    assert_eq!(
        ended(&record),
        [
            Ended {
                job: 0,
                start: 0,
                end: 30,
                requeues: 0,
                lost: 120,
                reason: VnodeFailed
            },
            Ended {
                job: 1,
                start: 1,
                end: 51,
                requeues: 0,
                lost: 0,
                reason: Finished
            },
            Ended {
                job: 2,
                start: 51,
                end: 61,
                requeues: 0,
                lost: 0,
                reason: Finished
            },
        ]
    );
    assert!(record.requeued.is_empty());
    assert_eq!(
        (stats.requeues, stats.jobs_failed, stats.jobs_ended),
        (0, 1, 3)
    );
}

/// A job that needs both vnodes waits while n1 is down (two overlapping outages, 0–100 and
/// 50–150, nest: n1 is back at 150), though no job runs and none arrives: the outage's end
/// alone starts it. A class outage takes down every vnode of the class.
#[test]
fn a_waiting_job_starts_when_the_vnode_comes_back() {
    let s = two_vnodes(
        "[[failures.outage]]\nvnode = \"n1\"\ndown = 0\nup = 100\n\
         [[failures.outage]]\nvnode = \"n1\"\ndown = \"00:00:50\"\nup = \"00:02:30\"\n",
    );
    let (record, stats) = simulate(&s, &[(0, 10, "select=2:ncpus=4")]);
    assert_eq!(record.starts[0].time, 150);
    assert_eq!(stats.down_ncpu_seconds, 4 * 150);
    let s = two_vnodes("[[failures.outage]]\nclass = \"n\"\ndown = 5\nup = 40\n");
    let (record, _) = simulate(
        &s,
        &[(0, 10, "select=1:ncpus=4"), (0, 10, "select=1:ncpus=4")],
    );
    let starts: Vec<String> = record.starts.iter().map(Started::at).collect();
    assert_eq!(
        starts,
        ["J0@0 on [0]", "J1@0 on [1]", "J0@40 on [0]", "J1@40 on [1]"]
    );
}

/// Seed 001: a requeued job with `||` alternatives is evaluated again against all of them. It
/// started on the first (a red vnode); the red vnode fails, and it restarts at once on the
/// second (blue).
#[test]
fn a_requeued_job_tries_every_alternative_again() {
    let s = scenario(
        "[[resource]]\nname = \"color\"\ntype = \"string\"\n\
         [[vnode]]\nname = \"red1\"\nncpus = 4\nresources = { color = \"red\" }\n\
         [[vnode]]\nname = \"blue1\"\nncpus = 4\nresources = { color = \"blue\" }\n\
         [run]\nplacement = \"pbs\"\n\
         [[failures.outage]]\nvnode = \"red1\"\ndown = 30\nup = 1000\n",
    );
    let (record, stats) = simulate(
        &s,
        &[(0, 100, "select=1:ncpus=4:color=red||1:ncpus=4:color=blue")],
    );
    let starts: Vec<String> = record.starts.iter().map(Started::at).collect();
    assert_eq!(starts, ["J0@0 on [0]", "J0@30 on [1]"]);
    assert_eq!(record.ends[0].end, SimTime(130));
    assert_eq!(stats.requeues, 1);
}

/// PBS: a down vnode counts as assigned in its set's metadata. Sets switch=s1 (n1, n2) and
/// switch=s2 (n3, n4) tie on totals; with n3 down, s2 has fewer free ncpus and goes first
/// (smallest first), so a 4-ncpu job lands on n4. All up, the tie goes to creation order: n1.
#[test]
fn pbs_down_vnodes_count_as_assigned_in_set_order() {
    let text = |outage: &str| {
        format!(
            "[[resource]]\nname = \"switch\"\ntype = \"string\"\n\
             [[class]]\nname = \"a\"\ncount = 2\nnames = [\"n1\", \"n2\"]\nncpus = 4\nresources = {{ switch = \"s1\" }}\n\
             [[class]]\nname = \"b\"\ncount = 2\nnames = [\"n3\", \"n4\"]\nncpus = 4\nresources = {{ switch = \"s2\" }}\n\
             [run]\nplacement = \"pbs\"\n[pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n{outage}"
        )
    };
    assert_eq!(
        first_start_all_up_and_with_one_down(text, "select=1:ncpus=4", "n3"),
        [pair("[0]", "switch=s1"), pair("[3]", "switch=s2")]
    );
}

fn pair(vnodes: &str, label: &str) -> (String, String) {
    (vnodes.to_owned(), label.to_owned())
}

/// The vnodes and label of a job submitted at 1 on the scenario `text` makes, with all vnodes
/// up, then with `vnode` down throughout.
fn first_start_all_up_and_with_one_down(
    text: impl Fn(&str) -> String,
    request: &str,
    vnode: &str,
) -> [(String, String); 2] {
    let down = format!("[[failures.outage]]\nvnode = \"{vnode}\"\ndown = 0\nup = 1000\n");
    [String::new(), down].map(|outage| {
        let (record, _) = simulate(&scenario(&text(&outage)), &[(1, 10, request)]);
        let Started { vnodes, label, .. } = &record.starts[0];
        (vnodes.clone(), label.clone())
    })
}

/// Moab: a down vnode is not eligible for node sets. Under BESTFIT 6 tasks go to C (n11, n12:
/// 8 tasks); with n11 down C holds 4, too few, and the job goes to the next best, A.
#[test]
fn moab_down_vnodes_are_not_eligible_for_sets() {
    let text = |outage: &str| {
        let mut t = String::from("[[resource]]\nname = \"features\"\ntype = \"string_array\"\n");
        for (set, names) in [
            ("A", "\"n1\", \"n2\", \"n3\", \"n4\""),
            ("B", "\"n5\", \"n6\", \"n7\", \"n8\", \"n9\", \"n10\""),
            ("C", "\"n11\", \"n12\""),
        ] {
            let count = names.split(',').count();
            t.push_str(&format!(
                "[[class]]\nname = \"{set}\"\ncount = {count}\nnames = [{names}]\nncpus = 4\nresources = {{ features = [\"{set}\"] }}\n"
            ));
        }
        t.push_str(
            "[run]\nplacement = \"moab\"\n[moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\n\
             nodeset_list = [\"A\", \"B\", \"C\"]\nnodeset_priority_type = \"BESTFIT\"\n",
        );
        t.push_str(outage);
        t
    };
    assert_eq!(
        first_start_all_up_and_with_one_down(text, "select=6:ncpus=1", "n11"),
        [pair("[10, 11]", "C"), pair("[0, 1]", "A")]
    );
}

/// The MTBF/MTTR model: outages per vnode of the class, within the horizon (last submit +
/// longest estimate), the same for the same seed, different for another, none elsewhere.
#[test]
fn mtbf_model_outages_are_seeded_per_vnode() {
    let text = |seed: u64| {
        format!(
            "[run]\nseed = {seed}\n\
             [[class]]\nname = \"flaky\"\ncount = 3\nncpus = 4\n\
             [[class]]\nname = \"solid\"\ncount = 1\nncpus = 4\n\
             [[failures.model]]\nclass = \"flaky\"\nmtbf = \"01:00:00\"\nmttr = 600\n"
        )
    };
    let jobs: Vec<(u64, u64, &str)> = (0..50)
        .map(|i| (i * 1000, 500, "select=1:ncpus=4"))
        .collect();
    let s = scenario(&text(1));
    let w = workload_of(&s, &jobs);
    let outages = s.outages(&w).unwrap();
    let horizon = 49_000 + 500;
    // About horizon / (mtbf + mttr) = 49,500 / 4,200 ≈ 12 per vnode.
    for v in 0..3u32 {
        let n = outages.iter().filter(|o| o.vnode.0 == v).count();
        assert!((4..=30).contains(&n), "vnode {v}: {n} outages");
    }
    assert!(outages.iter().all(|o| o.vnode.0 < 3));
    assert!(
        outages
            .iter()
            .all(|o| o.down.as_secs() < horizon && o.up > o.down)
    );
    assert_eq!(outages, scenario(&text(1)).outages(&w).unwrap());
    assert_ne!(outages, scenario(&text(2)).outages(&w).unwrap());
    let (_, stats) = simulate(&s, &jobs);
    assert!(stats.availability() < 1.0 && stats.availability() > 0.6);
}

/// Moab VARATTR: the value a job started with is bound to it (the spec's REQATTR binding)
/// and kept across a requeue. J0 starts in rack=r1 on n1; n1 fails at 10 while J1 holds n2,
/// the rest of r1. Free to choose again it would take rack=r2 at once; bound, it waits for
/// r1 and restarts on n2 when J1 ends at 100. A FEATURE job is not bound: it moves.
#[test]
fn a_requeued_varattr_job_keeps_its_value() {
    let text = |attribute: &str, list: &str| {
        format!(
            "[[resource]]\nname = \"rack\"\ntype = \"string\"\n\
             [[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
             [[class]]\nname = \"a\"\ncount = 2\nnames = [\"n1\", \"n2\"]\nncpus = 4\nresources = {{ rack = \"r1\", features = [\"r1\"] }}\n\
             [[class]]\nname = \"b\"\ncount = 2\nnames = [\"n3\", \"n4\"]\nncpus = 4\nresources = {{ rack = \"r2\", features = [\"r2\"] }}\n\
             [run]\nplacement = \"moab\"\n\
             [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"{attribute}\"\nnodeset_list = [{list}]\n\
             [[failures.outage]]\nvnode = \"n1\"\ndown = 10\nup = 1000\n"
        )
    };
    let jobs = [(0, 500, "select=4:ncpus=1"), (0, 100, "select=1:ncpus=4")];
    let starts = |s: &Scenario| {
        let (record, _) = simulate(s, &jobs);
        record
            .starts
            .iter()
            .map(Started::in_set)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        starts(&scenario(&text("VARATTR", "\"rack\""))),
        [
            "J0@0 on [0] in rack=r1",
            "J1@0 on [1] in rack=r1",
            "J0@100 on [1] in rack=r1"
        ]
    );
    assert_eq!(
        starts(&scenario(&text("FEATURE", "\"r1\", \"r2\""))),
        [
            "J0@0 on [0] in r1",
            "J1@0 on [1] in r1",
            "J0@10 on [2] in r2"
        ]
    );
}

/// A vnode the timeline adds (`add`) is out of service until then: under greedy (PBS's
/// default) a job that needs every vnode waits for it and starts when it joins, on it; a small
/// one starts at once beside it. (Under EASY the small one would wait too: no calendar can
/// place a head that needs a vnode out of service, and EASY then backfills nothing, as for
/// any outage.)
#[test]
fn a_job_waits_for_the_vnode_the_timeline_adds() {
    let s = load_scenario(
        "[[class]]\nname = \"n\"\ncount = 4\nncpus = 4\n[[event]]\nat = 100\nadd = \"n4\"\n",
        Path::new("t.toml"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let jobs = [
        (0, 50, 50, "select=4:ncpus=4"),
        (10, 20, 20, "select=1:ncpus=4"),
    ];
    let workload = crate::common::workload_of(s.cluster.resources(), &jobs);
    let mut sink = crate::common::CheckingSink::default();
    Replay::on(&workload, s.cluster.clone())
        .outages(
            &s.failures.outages,
            placesim_core::NodeFailurePolicy::Requeue,
        )
        .run(
            &mut placesim_policy::queue::Greedy::new(
                placesim_policy::placement::FirstFit::default(),
            ),
            &mut sink,
        );
    let starts: Vec<(u64, Vec<String>)> = (0..jobs.len())
        .map(|i| {
            let (t, a) = &sink.starts[&JobId(i as u32)];
            (
                *t,
                a.vnodes()
                    .map(|v| s.cluster.vnode(v).name().to_owned())
                    .collect(),
            )
        })
        .collect();
    let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        starts,
        [
            (100, names(&["n1", "n2", "n3", "n4"])),
            (10, names(&["n1"])),
        ]
    );
}
