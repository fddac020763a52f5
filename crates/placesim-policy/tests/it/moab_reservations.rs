//! Moab reservations (reservations-and-partitions.md §5) through the kernel: jobs a
//! reservation's ACL does not admit are kept off its hosts over its window, admitted jobs take
//! its hosts in affinity tiers, AFFINITY passes over a set with negative-affinity nodes,
//! RESERVATION node sets, and standing reservations' occurrences and DEPTH.

use crate::common::{CheckingSink, LabelledStart as Start};
use placesim_core::{ClusterState, Job, RequestId, SimDuration, SimTime, Workload};
use placesim_policy::placement::MoabNodeSets;
use placesim_scenario::{Scenario, load_scenario};
use placesim_testkit::Replay;
use std::path::Path;

/// Twelve 4-ncpu hosts n1..n12 with features A (n1-n4), B (n5-n10), C (n11-n12); classes
/// `batch` (0) and `interactive` (1); then `moab`, under `[moab]`, and `extra` after it.
fn cluster(moab: &str, extra: &str) -> Scenario {
    let mut text = String::from(
        "[run]\nplacement = \"moab\"\n[[resource]]\nname = \"features\"\ntype = \"string_array\"\n",
    );
    for i in 1..=12 {
        let feature = match i {
            1..=4 => "A",
            5..=10 => "B",
            _ => "C",
        };
        text.push_str(&format!(
            "[[class]]\nname = \"n{i}\"\ncount = 1\nnames = [\"n{i}\"]\nncpus = 4\n\
             resources = {{ features = [\"{feature}\"] }}\n"
        ));
    }
    text.push_str("[moab]\n");
    text.push_str(moab);
    text.push_str(
        "[[moab.class]]\nname = \"batch\"\nswf_queues = [1]\n\
         [[moab.class]]\nname = \"interactive\"\nswf_queues = [2]\n",
    );
    text.push_str(extra);
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

const ONEOF_ABC: &str = "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"A\", \"B\", \"C\"]\n";

/// A job: (submit, runtime, estimate, request, user, class index).
type Spec<'a> = (u64, u64, u64, &'a str, Option<u32>, Option<u32>);

/// Runs `jobs` under EASY with Moab's node sets and the scenario's reservations; returns
/// each job's start, its set label and the ncpus it took per vnode.
fn run(s: &Scenario, jobs: &[Spec<'_>]) -> Vec<Start> {
    let defs = s.cluster.resources();
    let mut requests = Vec::new();
    let mut list = Vec::new();
    for (i, &(submit, runtime, estimate, text, user, class)) in jobs.iter().enumerate() {
        let mut request =
            placesim_request::parse_and_lower(text, defs).unwrap_or_else(|e| panic!("{text}: {e}"));
        request.class = class;
        requests.push(request);
        let mut job = Job::new(
            i as u64 + 1,
            SimTime(submit),
            SimDuration(runtime),
            SimDuration(estimate),
            0,
            RequestId(i as u32),
        );
        job.set_user(user);
        list.push(job);
    }
    let workload = Workload::new(list, requests).unwrap();
    let p = MoabNodeSets::new(&s.cluster, s.moab.nodesets.clone(), workload.requests());
    let mut state = ClusterState::new(s.cluster.clone());
    p.track(&mut state);
    let mut sink = CheckingSink::default();
    Replay::from_state(&workload, state)
        .reservations(&s.reservations)
        .run(&mut placesim_policy::queue::Easy::new(p), &mut sink);
    assert_eq!(sink.first_oversubscription(&s.cluster), None);
    sink.labelled_starts(&s.cluster, jobs.len())
}

fn on(t: u64, label: &str, parts: &[(&str, u64)]) -> Start {
    (
        t,
        label.to_owned(),
        parts.iter().map(|&(n, c)| (n.to_owned(), c)).collect(),
    )
}

const BATCH: Option<u32> = Some(0);
const INTERACTIVE: Option<u32> = Some(1);

/// n1 and n2 reserved over [0, 1000) for the interactive class (positive affinity), batch
/// admitted as a last resort (negative).
const DAYTIME: &str = "[[moab.reservation]]\nname = \"daytime\"\nhostlist = [\"n1\", \"n2\"]\n\
                       start = 0\nend = 1000\nclasslist = [\"interactive+\", \"batch-\"]\n";

/// AFFINITY takes the first feasible set with no negative-affinity node for the job: a batch
/// job passes over A (n1, n2 reserved, batch `-`) for B; an interactive job takes A, on the
/// reserved hosts first (positive tier); a job of no class is kept off n1, n2 and still fits
/// A on n3; the next batch job again passes over A.
#[test]
fn affinity_passes_over_a_set_with_negative_affinity_nodes() {
    let s = cluster(
        &format!("{ONEOF_ABC}nodeset_priority_type = \"AFFINITY\"\n"),
        DAYTIME,
    );
    let jobs: [Spec<'_>; 4] = [
        (0, 100, 100, "select=4:ncpus=1", None, BATCH),
        (0, 100, 100, "select=2:ncpus=1", None, INTERACTIVE),
        (0, 100, 100, "select=4:ncpus=1", None, None),
        (0, 100, 100, "select=4:ncpus=1", None, BATCH),
    ];
    assert_eq!(
        run(&s, &jobs),
        vec![
            on(0, "B", &[("n5", 4)]),
            on(0, "A", &[("n1", 2)]),
            on(0, "A", &[("n3", 4)]),
            on(0, "B", &[("n6", 4)]),
        ]
    );
}

/// Under FIRSTFIT the batch job stays in A, but takes its hosts in affinity tiers: the
/// unreserved n3 and n4 before the negative-affinity n1 and n2, which it uses only when the
/// others are full; a neutral entry (`=`) puts the reserved hosts before the unreserved ones.
#[test]
fn admitted_jobs_take_hosts_in_affinity_tiers() {
    let s = cluster(ONEOF_ABC, DAYTIME);
    let jobs: [Spec<'_>; 2] = [
        (0, 100, 100, "select=6:ncpus=2", None, BATCH),
        (0, 100, 100, "select=1:ncpus=1", None, INTERACTIVE),
    ];
    assert_eq!(
        run(&s, &jobs),
        vec![
            // Taken in tier order: the unreserved hosts, then a negative one.
            on(0, "A", &[("n3", 4), ("n4", 4), ("n1", 4)]),
            on(0, "A", &[("n2", 1)]),
        ]
    );
    let neutral = DAYTIME.replace("batch-", "batch=");
    let s = cluster(ONEOF_ABC, &neutral);
    assert_eq!(
        run(&s, &jobs[..1]),
        vec![on(0, "A", &[("n1", 4), ("n2", 4), ("n3", 4)])]
    );
}

/// A system reservation (no ACL) of n1-n4 over [100, 200): a job ending before it starts
/// takes A; one whose window meets it is kept off A and takes B; one that needs A (only A
/// listed for it) waits for the reservation's end, while a short one backfills around it; a
/// `!` entry blocks the user it names even though the class is admitted.
#[test]
fn jobs_not_admitted_are_kept_off_the_window_and_backfill_around_it() {
    let maint = "[[moab.reservation]]\nname = \"maint\"\nhostlist = [\"n1\", \"n2\", \"n3\", \"n4\"]\n\
                 start = 100\nduration = 100\n";
    let mandatory = format!("{ONEOF_ABC}nodeset_is_optional = false\n");
    let s = cluster(&mandatory, maint);
    let jobs: [Spec<'_>; 4] = [
        (0, 50, 50, "select=4:ncpus=1", None, None),
        (0, 150, 150, "select=4:ncpus=1", None, None),
        (
            10,
            100,
            100,
            "select=16:ncpus=1 nodeset=ONEOF:FEATURE:A",
            None,
            None,
        ),
        (
            20,
            30,
            30,
            "select=4:ncpus=1 nodeset=ONEOF:FEATURE:A",
            None,
            None,
        ),
    ];
    assert_eq!(
        run(&s, &jobs),
        vec![
            on(0, "A", &[("n1", 4)]),
            on(0, "B", &[("n5", 4)]),
            on(200, "A", &[("n1", 4), ("n2", 4), ("n3", 4), ("n4", 4)]),
            on(20, "A", &[("n2", 4)]),
        ]
    );
    let admitted = format!("{maint}classlist = [\"batch\"]\nuserlist = [\"7!\"]\n");
    let s = cluster(&mandatory, &admitted);
    let jobs: [Spec<'_>; 2] = [
        (0, 150, 150, "select=4:ncpus=1", Some(6), BATCH),
        (0, 150, 150, "select=4:ncpus=1", Some(7), BATCH),
    ];
    assert_eq!(
        run(&s, &jobs),
        vec![on(0, "A", &[("n1", 4)]), on(0, "B", &[("n5", 4)])]
    );
}

/// A standing reservation of A, 1:00 to 2:00 every day: a job submitted on day 1 whose
/// window meets that day's occurrence is kept off A; with DEPTH 1, a job submitted late on
/// day 0 does not yet see day 1's occurrence (Moab creates it at midnight) and takes A, while
/// with the default DEPTH 2 it sees it and takes B.
#[test]
fn standing_occurrences_and_their_depth() {
    let standing = |depth: &str| {
        format!(
            "[[moab.reservation]]\nname = \"nightly\"\nhostlist = [\"n1\", \"n2\", \"n3\", \"n4\"]\n\
             period = \"DAY\"\nstarttime = \"1:00:00\"\nendtime = \"2:00:00\"\n{depth}"
        )
    };
    let jobs: [Spec<'_>; 2] = [
        (80_000, 20_000, 20_000, "select=4:ncpus=1", None, None),
        (88_400, 3_000, 3_000, "select=4:ncpus=1", None, None),
    ];
    let s = cluster(ONEOF_ABC, &standing("depth = 1\n"));
    assert_eq!(
        run(&s, &jobs),
        vec![on(80_000, "A", &[("n1", 4)]), on(88_400, "B", &[("n5", 4)])]
    );
    let s = cluster(ONEOF_ABC, &standing(""));
    assert_eq!(
        run(&s, &jobs),
        vec![on(80_000, "B", &[("n5", 4)]), on(88_400, "B", &[("n6", 4)])]
    );
}

/// NODESETATTRIBUTE RESERVATION: one set per listed reservation, its hosts, whatever its
/// window; a reservation that never meets the jobs' windows leaves them free to use it.
#[test]
fn reservation_node_sets() {
    let s = cluster(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"RESERVATION\"\n\
         nodeset_list = [\"r1\", \"r2\"]\nnodeset_priority_type = \"BESTFIT\"\n",
        "[[moab.reservation]]\nname = \"r1\"\nhostlist = [\"n1\", \"n2\"]\nstart = 100000\n\
         duration = 10\nuserlist = [\"7\"]\n\
         [[moab.reservation]]\nname = \"r2\"\nhostlist = [\"n[5-7]\"]\nstart = 100000\n\
         duration = 10\nuserlist = [\"7\"]\n",
    );
    let jobs: [Spec<'_>; 3] = [
        (0, 100, 100, "select=6:ncpus=1", None, None),
        (0, 100, 100, "select=10:ncpus=1", None, None),
        (0, 100, 100, "select=2:ncpus=1", None, None),
    ];
    assert_eq!(
        run(&s, &jobs),
        vec![
            // BESTFIT: r1 (8 tasks) before r2 (12).
            on(0, "r1", &[("n1", 4), ("n2", 2)]),
            on(0, "r2", &[("n5", 4), ("n6", 4), ("n7", 2)]),
            // r1 has 2 left, r2 2: the first of equals.
            on(0, "r1", &[("n2", 2)]),
        ]
    );
}
