//! Moab node sets: each policy under each priority type, VARATTR, the GLOBAL node, list order
//! and restriction, per-job overrides, optional vs mandatory, the nested example of seed 004,
//! DELAY and SPANEVENLY. Each asserts the set and the vnodes chosen.

use placesim_core::{
    Allocation, ClusterState, PlacementPolicy, Request, Scratch, ScratchBuf, Sharing,
};
use placesim_policy::placement::{MinLoss, MoabNodeSets, NodeSetSettings, PriorityType};
use placesim_scenario::{Scenario, load_scenario};
use placesim_testkit::Replay;
use std::path::Path;

/// 12 four-ncpu vnodes: A = n1-n4, B = n5-n10, C = n11-n12 (features), racks r1 = n1-n6,
/// r2 = n7-n12 (a string resource, for VARATTR).
fn abc(moab: &str) -> Scenario {
    let mut text = String::from(
        "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
         [[resource]]\nname = \"rack\"\ntype = \"string\"\n",
    );
    for i in 1..=12 {
        let feature = match i {
            1..=4 => "A",
            5..=10 => "B",
            _ => "C",
        };
        let rack = if i <= 6 { "r1" } else { "r2" };
        text.push_str(&format!(
            "[[class]]\nname = \"n{i}\"\ncount = 1\nnames = [\"n{i}\"]\nncpus = 4\n\
             resources = {{ features = [\"{feature}\"], rack = \"{rack}\" }}\n"
        ));
    }
    text.push_str("[moab]\n");
    text.push_str(moab);
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

const ONEOF_ABC: &str = "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"A\", \"B\", \"C\"]\n";

fn request(s: &Scenario, text: &str) -> Request {
    placesim_request::parse_and_lower(text, s.cluster.resources())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The policy for `s` with its settings changed by `tweak`, knowing `requests`' sets.
fn policy(
    s: &Scenario,
    requests: &[Request],
    tweak: impl FnOnce(&mut NodeSetSettings),
) -> MoabNodeSets {
    let mut settings = s.moab.nodesets.clone();
    tweak(&mut settings);
    MoabNodeSets::new(&s.cluster, settings, requests)
}

/// A state where other jobs hold `ncpus` on each named vnode, with `p`'s sets tracked.
fn state(s: &Scenario, p: &MoabNodeSets, busy: &[(&str, u64)]) -> ClusterState {
    let mut state = ClusterState::new(s.cluster.clone());
    p.track(&mut state);
    for &(name, ncpus) in busy {
        let v = s.cluster.vnode_by_name(name).unwrap();
        let mut a = Allocation::new(Sharing::Shared);
        a.add(v, &[ncpus, 0, 0]);
        state.allocate(&a).unwrap();
    }
    state
}

/// Where `text` goes: the vnodes with the ncpus taken on each, and the label; or the comment.
fn place(
    s: &Scenario,
    p: &mut MoabNodeSets,
    st: &ClusterState,
    text: &str,
) -> Result<(Vec<(String, u64)>, String), String> {
    let r = request(s, text);
    let mut buf = ScratchBuf::default();
    let view = Scratch::new(st, &mut buf);
    match p.place(&r, &view) {
        Some(a) => Ok((
            a.parts(3)
                .map(|(v, amounts)| (s.cluster.vnode(v).name().to_owned(), amounts[0]))
                .collect(),
            a.label.as_deref().unwrap_or("").to_owned(),
        )),
        None => Err(p.refusal().as_deref().unwrap_or("").to_owned()),
    }
}

fn on(list: &[(&str, u64)], label: &str) -> Result<(Vec<(String, u64)>, String), String> {
    Ok((
        list.iter().map(|&(n, c)| (n.to_owned(), c)).collect(),
        label.to_owned(),
    ))
}

/// n1 busy: A holds 12 free tasks, B 24, C 8.
const N1_BUSY: &[(&str, u64)] = &[("n1", 4)];

#[test]
fn oneof_under_each_priority_type() {
    let s = abc(ONEOF_ABC);
    let cases: [(PriorityType, MinLoss, &str, _, _); 7] = [
        // 6 tasks fit A (12), B (24) and C (8).
        (
            PriorityType::FirstFit,
            MinLoss::LastFeasible,
            "select=6:ncpus=1",
            on(&[("n2", 4), ("n3", 2)], "A"),
            "the first feasible set in list order",
        ),
        (
            PriorityType::BestFit,
            MinLoss::LastFeasible,
            "select=6:ncpus=1",
            on(&[("n11", 4), ("n12", 2)], "C"),
            "the fewest fitting tasks",
        ),
        (
            PriorityType::WorstFit,
            MinLoss::LastFeasible,
            "select=6:ncpus=1",
            on(&[("n5", 4), ("n6", 2)], "B"),
            "the most fitting tasks",
        ),
        (
            PriorityType::MinLoss,
            MinLoss::LastFeasible,
            "select=6:ncpus=1",
            on(&[("n11", 4), ("n12", 2)], "C"),
            "the last feasible set, as the source",
        ),
        (
            PriorityType::MinLoss,
            MinLoss::FirstFeasible,
            "select=6:ncpus=1",
            on(&[("n2", 4), ("n3", 2)], "A"),
            "the option: first feasible",
        ),
        (
            PriorityType::Affinity,
            MinLoss::LastFeasible,
            "select=6:ncpus=1",
            on(&[("n2", 4), ("n3", 2)], "A"),
            "no negative affinity anywhere: the first feasible",
        ),
        // 10 tasks do not fit C (8): BESTFIT takes A (12), the smallest that fits.
        (
            PriorityType::BestFit,
            MinLoss::LastFeasible,
            "select=10:ncpus=1",
            on(&[("n2", 4), ("n3", 4), ("n4", 2)], "A"),
            "C is too small now",
        ),
    ];
    for (ptype, minloss, text, want, why) in cases {
        let mut p = policy(&s, &[], |g| {
            g.priority_type = ptype;
            g.options.minloss = minloss;
        });
        let st = state(&s, &p, N1_BUSY);
        assert_eq!(
            place(&s, &mut p, &st, text),
            want,
            "{ptype:?} {minloss:?}: {why}"
        );
    }
}

#[test]
fn firstof_is_oneof_unless_the_option_forces_list_order() {
    let s = abc(&ONEOF_ABC.replace("ONEOF", "FIRSTOF"));
    let mut p = policy(&s, &[], |g| g.priority_type = PriorityType::BestFit);
    let st = state(&s, &p, N1_BUSY);
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("n11", 4), ("n12", 2)], "C")
    );
    let mut p = policy(&s, &[], |g| {
        g.priority_type = PriorityType::BestFit;
        g.options.firstof_forces_firstfit = true;
    });
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("n2", 4), ("n3", 2)], "A")
    );
}

#[test]
fn anyof_takes_the_union_each_vnode_once_and_may_span() {
    let s = abc(
        "nodeset_policy = \"ANYOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"C\", \"A\"]\n",
    );
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, N1_BUSY);
    // 18 tasks: A's 12 free and C's 8 are enough together; vnodes in index order; B unused.
    assert_eq!(
        place(&s, &mut p, &st, "select=18:ncpus=1"),
        on(
            &[("n2", 4), ("n3", 4), ("n4", 4), ("n11", 4), ("n12", 2)],
            "C+A"
        )
    );
    // 21 do not fit the union (20 free). Sets are optional by default, so the job spans.
    let (vnodes, label) = place(&s, &mut p, &st, "select=21:ncpus=1").unwrap();
    assert_eq!(label, "spanned");
    assert_eq!(vnodes[..2], [("n2".to_owned(), 4), ("n3".to_owned(), 4)]);
}

#[test]
fn the_list_restricts_and_orders_and_unknown_features_are_dropped() {
    let s = abc(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"nosuch\", \"C\", \"B\"]\nnodeset_is_optional = false\n",
    );
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, N1_BUSY);
    // FIRSTFIT in list order: C first; A is not listed.
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=1"),
        on(&[("n11", 2)], "C")
    );
    assert_eq!(
        place(&s, &mut p, &st, "select=10:ncpus=1"),
        on(&[("n5", 4), ("n6", 4), ("n7", 2)], "B")
    );
    // 30 tasks fit no listed set, and sets are mandatory: the job waits, and could never run.
    assert_eq!(
        place(&s, &mut p, &st, "select=30:ncpus=1"),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
    let idle = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &idle, "select=30:ncpus=1"),
        Err("Can Never Run: no node set could ever hold the job".to_owned())
    );
}

#[test]
fn an_empty_feature_list_is_every_feature_in_order_of_appearance() {
    let s = abc(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_priority_type = \"WORSTFIT\"\n",
    );
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, N1_BUSY);
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=1"),
        on(&[("n5", 1)], "B")
    );
}

#[test]
fn varattr_with_and_without_a_value() {
    let s = abc(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"VARATTR\"\nnodeset_priority_type = \"BESTFIT\"\n",
    );
    let with_value = request(&s, "select=2:ncpus=1 nodeset=ONEOF:VARATTR:rack=r2");
    let any_value = request(&s, "select=2:ncpus=1 nodeset=ONEOF:VARATTR:rack");
    let mut p = policy(&s, &[with_value, any_value], |_| {});
    // r1 = n1-n6 has 20 free after n1, r2 = n7-n12 has 24 but 12 of them busy here.
    let st = state(&s, &p, &[("n1", 4), ("n7", 4), ("n8", 4), ("n9", 4)]);
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1 nodeset=ONEOF:VARATTR:rack=r2"
        ),
        on(&[("n10", 2)], "rack=r2")
    );
    // Without a value, one set per value; BESTFIT takes r2 (12 free) over r1 (20).
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1 nodeset=ONEOF:VARATTR:rack"
        ),
        on(&[("n10", 2)], "rack=r2")
    );
    // A job whose own condition names another value can never use that set.
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1:rack=r1 nodeset=ONEOF:VARATTR:rack"
        )
        .map(|x| x.1),
        Ok("rack=r1".to_owned())
    );
    // VARATTR with no values anywhere: as if the job asked for no node sets (first fit).
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=1"),
        on(&[("n2", 2)], "")
    );
}

#[test]
fn the_global_vnode_is_in_every_feature_set() {
    let text = "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"a\"\ncount = 2\nnames = [\"a1\", \"a2\"]\nncpus = 2\nresources = { features = [\"A\"] }\n\
        [[class]]\nname = \"b\"\ncount = 2\nnames = [\"b1\", \"b2\"]\nncpus = 2\nresources = { features = [\"B\"] }\n\
        [[class]]\nname = \"g\"\ncount = 1\nnames = [\"GLOBAL\"]\nncpus = 2\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"A\", \"B\"]\nnodeset_is_optional = false\n";
    let s = load_scenario(text, Path::new("t.toml")).unwrap();
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[]);
    // 6 tasks: A's 4 ncpus and GLOBAL's 2.
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("a1", 2), ("a2", 2), ("GLOBAL", 2)], "A")
    );
}

#[test]
fn a_jobs_own_nodeset_overrides_the_global_policy_field_by_field() {
    let s = abc(ONEOF_ABC);
    let own = request(&s, "select=2:ncpus=1 nodeset=ONEOF:FEATURE:C");
    let mut p = policy(&s, &[own], |_| {});
    let st = state(&s, &p, N1_BUSY);
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=1 nodeset=ONEOF:FEATURE:C"),
        on(&[("n11", 2)], "C")
    );
    // Only the policy given: the global list (A first).
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=1 nodeset=ANYOF"),
        on(&[("n2", 2)], "A")
    );
    // nodesetisoptional needs the scheduler flag.
    let text = "select=30:ncpus=1 nodeset=ONEOF:FEATURE:A,B,C nodesetisoptional=false";
    assert_eq!(
        place(&s, &mut p, &st, text).map(|x| x.1),
        Ok("spanned".to_owned())
    );
    let mut p = policy(&s, &[], |g| g.allow_per_job_is_optional = true);
    assert_eq!(
        place(&s, &mut p, &st, text),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
}

/// A job's own `nodesetisoptional=true` (Q4): by default the best effort of optional sets
/// (BESTFIT picks C), with the option no node sets at all (first fit from n2, no label).
#[test]
fn a_jobs_own_optional_flag_is_best_effort_unless_the_option_skips_sets() {
    let s = abc(&format!(
        "{ONEOF_ABC}nodeset_priority_type = \"BESTFIT\"\nallow_per_job_nodeset_is_optional = true\n"
    ));
    let text = "select=6:ncpus=1 nodesetisoptional=true";
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, N1_BUSY);
    assert_eq!(
        place(&s, &mut p, &st, text),
        on(&[("n11", 4), ("n12", 2)], "C")
    );
    let mut p = policy(&s, &[], |g| g.options.job_optional_skips_sets = true);
    assert_eq!(
        place(&s, &mut p, &st, text),
        on(&[("n2", 4), ("n3", 2)], "")
    );
    // Without the job's flag, the option changes nothing.
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("n11", 4), ("n12", 2)], "C")
    );
}

/// Seed 004's nested sets: blades (2 nodes), quads (4), octets (8), sixteen, listed smallest
/// first under FIRSTFIT. A job goes in the smallest level that can hold it.
#[test]
fn seed_004_nested_node_sets() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/moab-nested.toml"),
    )
    .unwrap();
    let s = load_scenario(&text, Path::new("moab-nested.toml")).unwrap();
    let mut p = policy(&s, &[], |_| {});
    let ncpus = s.cluster.capacity(s.cluster.vnode_by_name("n1").unwrap())[0];
    let nodes = |k: u64| format!("select={}:ncpus=1", k * ncpus);
    let names = |a: &[(String, u64)]| a.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let idle = state(&s, &p, &[]);
    let got = place(&s, &mut p, &idle, &nodes(2)).unwrap();
    assert_eq!(
        (names(&got.0), got.1.as_str()),
        (vec!["n1".to_owned(), "n2".to_owned()], "blade1a")
    );
    let got = place(&s, &mut p, &idle, &nodes(3)).unwrap();
    assert_eq!(got.1, "quad1a");
    let got = place(&s, &mut p, &idle, &nodes(5)).unwrap();
    assert_eq!(got.1, "octet1");
    let got = place(&s, &mut p, &idle, &nodes(9)).unwrap();
    assert_eq!(got.1, "sixteen");
    // With n1 busy, a 2-node job takes the next blade; a 4-node job skips quad1a.
    let st = state(&s, &p, &[("n1", 1)]);
    let got = place(&s, &mut p, &st, &nodes(2)).unwrap();
    assert_eq!(
        (names(&got.0), got.1.as_str()),
        (vec!["n3".to_owned(), "n4".to_owned()], "blade1b")
    );
    let got = place(&s, &mut p, &st, &nodes(4)).unwrap();
    assert_eq!(
        (names(&got.0), got.1.as_str()),
        (
            vec![
                "n5".to_owned(),
                "n6".to_owned(),
                "n7".to_owned(),
                "n8".to_owned()
            ],
            "quad1b"
        )
    );
}

/// MINLOSS by speed (§5): sets at speeds 1.0, 1.2 and 2.0; tolerance 0.25 lets the slow set
/// borrow from the 1.2 set, not from the 2.0 set.
#[test]
fn minloss_by_speed_with_tolerance() {
    let text = "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"s\"\ncount = 2\nnames = [\"s1\", \"s2\"]\nncpus = 2\nspeed = 1.0\nresources = { features = [\"slow\"] }\n\
        [[class]]\nname = \"m\"\ncount = 2\nnames = [\"m1\", \"m2\"]\nncpus = 2\nspeed = 1.2\nresources = { features = [\"mid\"] }\n\
        [[class]]\nname = \"f\"\ncount = 4\nnames = [\"f1\", \"f2\", \"f3\", \"f4\"]\nncpus = 2\nspeed = 2.0\nresources = { features = [\"fast\"] }\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"slow\", \"mid\", \"fast\"]\n\
        nodeset_priority_type = \"MINLOSS\"\nminloss = \"speed\"\nnodeset_tolerance = 0.25\n";
    let s = load_scenario(text, Path::new("t.toml")).unwrap();
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[]);
    // 4 tasks: slow alone (loss 0).
    assert_eq!(
        place(&s, &mut p, &st, "select=4:ncpus=1").map(|x| x.1),
        Ok("slow".to_owned())
    );
    // 6 tasks: slow + 2 from mid (loss 0.2 × 2 = 0.4) against fast alone (loss 0): fast.
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("f1", 2), ("f2", 2), ("f3", 2)], "fast")
    );
    // 10 tasks: only fast (8) + nothing within tolerance fails; slow + mid = 8; none: no set.
    // With the fast set busy, 6 tasks must borrow: slow + mid within tolerance, label slow.
    let busy = state(&s, &p, &[("f1", 2), ("f2", 2), ("f3", 2)]);
    assert_eq!(
        place(&s, &mut p, &busy, "select=6:ncpus=1"),
        on(&[("s1", 2), ("s2", 2), ("m1", 2)], "slow")
    );
}

/// Q2: the set `slow` holds a vnode (x1) far faster than its speed. With the documented
/// upper bound MINLOSS may not use x1 (1.0 × 1.25 < 3.0), so 6 tasks do not fit in `slow` and
/// the optional job spans; Maui's unbounded filter keeps x1 and the job runs in `slow`.
#[test]
fn minloss_tolerance_upper_bound_or_unbounded() {
    let text = "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"s\"\ncount = 2\nnames = [\"s1\", \"s2\"]\nncpus = 2\nspeed = 1.0\nresources = { features = [\"slow\"] }\n\
        [[class]]\nname = \"x\"\ncount = 1\nnames = [\"x1\"]\nncpus = 2\nspeed = 3.0\nresources = { features = [\"slow\"] }\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"slow\"]\n\
        nodeset_priority_type = \"MINLOSS\"\nminloss = \"speed\"\nnodeset_tolerance = 0.25\n";
    let s = load_scenario(text, Path::new("t.toml")).unwrap();
    let all = [("s1", 2), ("s2", 2), ("x1", 2)];
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&all, "spanned")
    );
    let mut p = policy(&s, &[], |g| g.options.tolerance_unbounded = true);
    assert_eq!(place(&s, &mut p, &st, "select=6:ncpus=1"), on(&all, "slow"));
}

/// Q5: `select=1:ncpus=4+1:ncpus=3` with only n4 free in A: each chunk complex fits A on its
/// own, so A is feasible, but both cannot be allocated there. A mandatory job waits; with
/// the option it falls back to every vnode, as Moab's pass 1 does.
#[test]
fn mandatory_fallback_after_a_failed_allocation_in_a_feasible_set() {
    let s = abc(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"A\"]\n\
         nodeset_is_optional = false\n",
    );
    let busy = [("n1", 4), ("n2", 4), ("n3", 4)];
    let text = "select=1:ncpus=4+1:ncpus=3";
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &busy);
    assert_eq!(
        place(&s, &mut p, &st, text),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
    let mut p = policy(&s, &[], |g| g.options.mandatory_fallback = true);
    assert_eq!(
        place(&s, &mut p, &st, text),
        on(&[("n4", 4), ("n5", 3)], "spanned")
    );
    // No feasible set at all: still no fallback for a mandatory job.
    let st = state(&s, &p, &[("n1", 4), ("n2", 4), ("n3", 4), ("n4", 4)]);
    assert_eq!(
        place(&s, &mut p, &st, text),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
}

/// A job's own `nodesetdelay=` makes it mandatory (with the per-job flag) unless the option
/// follows the Moab 9 documentation and ignores it.
#[test]
fn per_job_nodeset_delay_counts_unless_refused() {
    let s = abc(&format!(
        "{ONEOF_ABC}allow_per_job_nodeset_is_optional = true\n"
    ));
    let text = "select=30:ncpus=1 nodesetdelay=100";
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, N1_BUSY);
    assert_eq!(
        place(&s, &mut p, &st, text),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
    let mut p = policy(&s, &[], |g| g.options.refuse_per_job_delay = true);
    assert_eq!(
        place(&s, &mut p, &st, text).map(|x| x.1),
        Ok("spanned".to_owned())
    );
}

/// Runs `jobs` (submit, runtime = estimate, request text) under EASY with `s`'s node sets;
/// returns each job's start and label (none if it never started), in job order.
fn simulate(s: &Scenario, jobs: &[(u64, u64, &str)]) -> Vec<Option<(u64, String)>> {
    let jobs: Vec<_> = jobs.iter().map(|&(a, b, c)| (a, b, b, c)).collect();
    simulate_estimated(s, &jobs)
}

/// Runs `jobs` (submit, runtime, estimate, request text) under EASY with `s`'s node sets,
/// checking that no vnode is oversubscribed.
fn run_easy(s: &Scenario, jobs: &[(u64, u64, u64, &str)]) -> crate::common::CheckingSink {
    let workload = crate::common::workload_of(s.cluster.resources(), jobs);
    let p = policy(s, workload.requests(), |_| {});
    let mut state = ClusterState::new(s.cluster.clone());
    p.track(&mut state);
    let mut sink = crate::common::CheckingSink::default();
    Replay::from_state(&workload, state).run(&mut placesim_policy::queue::Easy::new(p), &mut sink);
    assert_eq!(sink.first_oversubscription(&s.cluster), None);
    sink
}

/// As [`simulate`], with jobs as (submit, runtime, estimate, request text).
fn simulate_estimated(s: &Scenario, jobs: &[(u64, u64, u64, &str)]) -> Vec<Option<(u64, String)>> {
    use placesim_core::JobId;
    let sink = run_easy(s, jobs);
    (0..jobs.len())
        .map(|i| {
            let (t, a) = sink.starts.get(&JobId(i as u32))?;
            Some((*t, a.label.as_deref().unwrap_or("").to_owned()))
        })
        .collect()
}

/// Two sets of 8 ncpus (A = n1-n2, B = n3-n4) under ONEOF / FIRSTFIT with NODESETPLUS DELAY
/// and NODESETDELAY 100 s, plus `options` in `[moab]`.
fn two_sets_with_delay(options: &str) -> Scenario {
    let text = format!(
        "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"a\"\ncount = 2\nnames = [\"n1\", \"n2\"]\nncpus = 4\nresources = {{ features = [\"A\"] }}\n\
        [[class]]\nname = \"b\"\ncount = 2\nnames = [\"n3\", \"n4\"]\nncpus = 4\nresources = {{ features = [\"B\"] }}\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\nnodeset_list = [\"A\", \"B\"]\n\
        nodeset_plus = \"DELAY\"\nnodeset_delay = \"00:01:40\"\n{options}"
    );
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn at(t: u64, label: &str) -> Option<(u64, String)> {
    Some((t, label.to_owned()))
}

/// Jobs of 6 take most of each set; at t = 10 a job of 4 finds no set with 4 free, but 4 free
/// across both. It waits for A if A frees no later than 10 + 100, and spans at once if A frees
/// one second later.
#[test]
fn delay_expires_at_the_exact_simulated_second() {
    let s = two_sets_with_delay("");
    assert!(
        !s.moab.nodesets.is_optional,
        "NODESETDELAY > 0 makes sets mandatory"
    );
    for (a_ends, want) in [(110, at(110, "A")), (111, at(10, "spanned"))] {
        let starts = simulate(
            &s,
            &[
                (0, a_ends, "select=6:ncpus=1"),
                (0, 500, "select=6:ncpus=1"),
                (10, 50, "select=4:ncpus=1"),
            ],
        );
        assert_eq!(starts[0], at(0, "A"));
        assert_eq!(starts[1], at(0, "B"));
        assert_eq!(starts[2], want, "A frees at {a_ends}");
    }
}

/// The anchored option (Slurm's `--switches`): the job of 4 could run across both sets from
/// t = 10, so it waits for a set until 110 and then spans, at that very second, when no job
/// ends then; a set that frees before 110 still takes it. Predictive timing would span at 10.
#[test]
fn anchored_delay_waits_from_the_first_chance_to_span() {
    let s = two_sets_with_delay("delay_mode = \"anchored\"\n");
    for (a_ends, want) in [
        (80, at(80, "A")),
        (110, at(110, "A")),
        (150, at(110, "spanned")),
    ] {
        let starts = simulate(
            &s,
            &[
                (0, a_ends, "select=6:ncpus=1"),
                (0, 500, "select=6:ncpus=1"),
                (10, 50, "select=4:ncpus=1"),
            ],
        );
        assert_eq!(starts[2], want, "A frees at {a_ends}");
    }
}

/// `delay_reference`: at t = 10 the job of 4 (J3) can start without sets at 50 (when the job
/// of 2 on A ends) and in A at 140. Against the unconstrained start (50 + 100 >= 140) it keeps
/// its set and reserves A, so the job of 2 submitted at 11 backfills on B at once; against now
/// (10 + 100 < 140) it reserves without sets at 50, across A and B, which the job of 2 would
/// delay, so that one waits until 50, when J3, now able to span, is back within its delay and
/// reserves A; the job of 2 then takes A's two free ncpus (A still holds J3's 4 at 140).
#[test]
fn delay_reference_unconstrained_start_or_now() {
    for (reference, backfill) in [
        ("earliest-unconstrained", at(11, "B")),
        ("now", at(50, "A")),
    ] {
        let s = two_sets_with_delay(&format!("delay_reference = \"{reference}\"\n"));
        let starts = simulate(
            &s,
            &[
                (0, 140, "select=6:ncpus=1"),
                (0, 500, "select=6:ncpus=1"),
                (0, 50, "select=2:ncpus=1"),
                (10, 50, "select=4:ncpus=1"),
                (11, 100, "select=2:ncpus=1"),
            ],
        );
        assert_eq!(
            starts,
            vec![at(0, "A"), at(0, "B"), at(0, "A"), at(140, "A"), backfill],
            "delay_reference = {reference}"
        );
    }
}

/// Mandatory sets: a job that no set can hold now waits with a reservation in the set that
/// frees first, lower jobs backfill around it, and a job no set could ever hold never runs and
/// blocks nobody.
#[test]
fn mandatory_reservation_backfill_and_never() {
    let s = abc(&format!("{ONEOF_ABC}nodeset_is_optional = false\n"));
    let starts = simulate(
        &s,
        &[
            (0, 100, "select=14:ncpus=1"), // A (16): 2 left
            (0, 300, "select=20:ncpus=1"), // B (24): 4 left
            (1, 50, "select=30:ncpus=1"),  // no set could ever hold 30: never runs
            (2, 50, "select=10:ncpus=1"),  // no set has 10 now; A frees first (at 100)
            (3, 90, "select=3:ncpus=1"),   // B (A has 2): ends by 100, backfills
            (4, 200, "select=8:ncpus=1"),  // C: ends after 100, but the reservation is in A
            (5, 200, "select=2:ncpus=1"),  // A now, past 100: A still holds the head's 10 then
            (6, 200, "select=1:ncpus=1"),  // B now (1 left), past 100: B is not reserved
        ],
    );
    let at = |t: u64, label: &str| Some((t, label.to_owned()));
    assert_eq!(
        starts,
        vec![
            at(0, "A"),
            at(0, "B"),
            None,
            at(100, "A"),
            at(3, "B"),
            at(4, "C"),
            at(5, "A"),
            at(6, "B"),
        ]
    );
}

/// CTC-SP2 on three node generations of different speeds, each a FEATURE set, under ONEOF /
/// BESTFIT and under no node sets: no vnode oversubscribed, every job accounted for, every
/// start labelled with its set (all its vnodes in it) or `spanned`, and the schedules differ.
#[test]
fn ctc_sp2_on_heterogeneous_feature_sets_with_and_without_node_sets() {
    use crate::common::CheckingSink;

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if !root
        .join("../shared/traces/CTC-SP2-1996-3.1-cln.swf.gz")
        .is_file()
    {
        eprintln!("skipped: ../shared/traces is not beside the project");
        return;
    }
    let path = root.join("scenarios/moab-hetero.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut s = load_scenario(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    let loaded = s.workload().unwrap_or_else(|e| panic!("{e}"));
    let workload = &loaded.trace.workload;
    let n = workload.jobs().len();
    let features = s.cluster.resources().lookup("features").unwrap();
    let mut schedules = Vec::new();
    for placement in [
        placesim_scenario::PlacementKind::Moab,
        placesim_scenario::PlacementKind::FirstFit,
    ] {
        s.run.placement = placement;
        let mut state = ClusterState::new(s.cluster.clone());
        let policy = s.placement(workload).instance(&mut state);
        let model = s.runtime_model(workload);
        let mut sink = CheckingSink::default();
        let stats = Replay::from_state(workload, state)
            .runtime_model(&model)
            .run(&mut placesim_policy::queue::Easy::new(policy), &mut sink);
        assert_eq!(sink.ends.len() + stats.never_started.len(), n);
        assert!(sink.started_twice.is_empty() && sink.ended_twice.is_empty());
        assert_eq!(sink.first_oversubscription(&s.cluster), None);
        if placement == placesim_scenario::PlacementKind::Moab {
            let (mut in_sets, mut spanned) = (0, 0);
            for (start, alloc) in sink.starts.values() {
                let label = alloc.label.as_deref().unwrap_or("");
                if label == "spanned" {
                    spanned += 1;
                    continue;
                }
                assert!(
                    ["g1", "g2", "g3"].contains(&label),
                    "label {label:?} at {start}"
                );
                for v in alloc.vnodes() {
                    let values = s.cluster.vnode(v).attr(features).unwrap().string_values();
                    assert_eq!(values, [label.to_owned()], "job at {start} outside {label}");
                }
                in_sets += 1;
            }
            assert!(
                in_sets > n / 2 && spanned > 0,
                "{in_sets} in sets, {spanned} spanned"
            );
        }
        schedules.push(
            sink.starts
                .iter()
                .map(|(j, (t, _))| (*j, *t))
                .collect::<Vec<_>>(),
        );
    }
    assert_ne!(schedules[0], schedules[1]);
}

/// SPANEVENLY's even split, with the regression lines of the design note: four CUs of two
/// vnodes; 2 tasks in one CU, 3 across 3, 4 in 2 CUs if two have room (else across 4), 6
/// across 3.
/// Four computational units of two one-ncpu vnodes (cu1 = c1a, c1b; ...) under ANYOF /
/// SPANEVENLY, mandatory, with NODESETDELAY `delay_s`.
fn four_cus(delay_s: u64) -> Scenario {
    four_cus_with(delay_s, "")
}

/// As [`four_cus`], with more `[moab]` lines.
fn four_cus_with(delay_s: u64, moab: &str) -> Scenario {
    let mut text = String::from("[[resource]]\nname = \"features\"\ntype = \"string_array\"\n");
    for cu in 1..=4 {
        text.push_str(&format!(
            "[[class]]\nname = \"cu{cu}\"\ncount = 2\nnames = [\"c{cu}a\", \"c{cu}b\"]\n\
             resources = {{ features = [\"cu{cu}\"] }}\n"
        ));
    }
    text.push_str(&format!(
        "[moab]\nnodeset_policy = \"ANYOF\"\nnodeset_attribute = \"FEATURE\"\n\
         nodeset_list = [\"cu1\", \"cu2\", \"cu3\", \"cu4\"]\nnodeset_plus = \"SPANEVENLY\"\n\
         nodeset_delay = {delay_s}\nnodeset_is_optional = false\n{moab}",
    ));
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn spanevenly_splits_evenly() {
    let s = four_cus(600);
    let mut p = policy(&s, &[], |_| {});
    let idle = state(&s, &p, &[]);
    let vnodes = |r: Result<(Vec<(String, u64)>, String), String>| {
        let (list, label) = r.unwrap();
        (
            list.into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
                .join(","),
            label,
        )
    };
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        vnodes(place(&s, &mut p, &idle, "select=2:ncpus=1")),
        pair("c1a,c1b", "cu1")
    );
    assert_eq!(
        vnodes(place(&s, &mut p, &idle, "select=3:ncpus=1")),
        pair("c1a,c2a,c3a", "cu1+cu2+cu3")
    );
    assert_eq!(
        vnodes(place(&s, &mut p, &idle, "select=4:ncpus=1")),
        pair("c1a,c1b,c2a,c2b", "cu1+cu2")
    );
    assert_eq!(
        vnodes(place(&s, &mut p, &idle, "select=6:ncpus=1")),
        pair("c1a,c1b,c2a,c2b,c3a,c3b", "cu1+cu2+cu3")
    );
    // One vnode busy in each of cu1, cu2 and cu3: no two CUs have two free, so 4 go across 4.
    let st = state(&s, &p, &[("c1a", 1), ("c2a", 1), ("c3a", 1)]);
    assert_eq!(
        vnodes(place(&s, &mut p, &st, "select=4:ncpus=1")),
        pair("c1b,c2b,c3b,c4a", "cu1+cu2+cu3+cu4")
    );
    // 5 tasks with 5 free: no even split (k = 1 or 5 only), so the policy refuses; the
    // discipline may drop the sets for good (a relaxation).
    assert!(place(&s, &mut p, &st, "select=5:ncpus=1").is_err());
    let r = request(&s, "select=5:ncpus=1");
    let rx =
        placesim_core::SetConstraints::relaxation(&p, &r).expect("SPANEVENLY relaxes ANYOF jobs");
    assert_eq!(rx.lasts, placesim_core::RelaxationLasts::ForGood);
    assert_eq!(rx.delay.0, 600);
}

/// SPANEVENLY's erasure is for good. At t = 1 a job of 4 (J4) has 3 vnodes free; by the
/// estimates, 4 free come at 20 (c3a) but an even split (cu3 + cu4) only at 200, more than
/// NODESETDELAY 10 s later, so its node sets are erased. J3 ends early, at 15: 4 vnodes are
/// free and J4 spans at once by first fit, although the even split is now only 5 s away (at
/// 20, within the delay: sets not erased would wait for it). With a long delay its sets are
/// never erased and it takes cu3 + cu4 at 20.
#[test]
fn spanevenly_erasure_is_sticky() {
    let jobs = [
        (0, 1000, 1000, "select=2:ncpus=1 nodeset=ONEOF:FEATURE:cu1"),
        (0, 1000, 1000, "select=1:ncpus=1 nodeset=ONEOF:FEATURE:cu2"),
        (0, 20, 20, "select=1:ncpus=1 nodeset=ONEOF:FEATURE:cu3"),
        (0, 15, 200, "select=1:ncpus=1 nodeset=ONEOF:FEATURE:cu4"),
        (1, 50, 50, "select=4:ncpus=1"),
    ];
    let starts = simulate_estimated(&four_cus(10), &jobs);
    assert_eq!(
        starts[..4],
        [at(0, "cu1"), at(0, "cu2"), at(0, "cu3"), at(0, "cu4")]
    );
    assert_eq!(starts[4], at(15, "spanned"));
    let starts = simulate_estimated(&four_cus(600), &jobs);
    assert_eq!(starts[4], at(20, "cu3+cu4"));
}

/// The sticky option under DELAY: at t = 10 the job of 4 (J3) drops its set (A by the
/// estimates at 300, more than 100 s after 50, when it could span). J0 ends early, at 40, and
/// A has room: by default J3 takes A then; with the option its sets are gone and it spans.
#[test]
fn delay_fallback_is_decided_again_unless_sticky() {
    let jobs = [
        (0, 40, 300, "select=6:ncpus=1"),
        (0, 1000, 1000, "select=6:ncpus=1"),
        (0, 50, 50, "select=2:ncpus=1"),
        (10, 50, 50, "select=4:ncpus=1"),
    ];
    for (options, want) in [
        ("", at(40, "A")),
        ("delay_sticky = true\n", at(40, "spanned")),
    ] {
        let starts = simulate_estimated(&two_sets_with_delay(options), &jobs);
        assert_eq!(
            starts[..3],
            [at(0, "A"), at(0, "B"), at(0, "A")],
            "options: {options}"
        );
        assert_eq!(starts[3], want, "options: {options}");
    }
}

/// SPANEVENLY takes sets in priority-type order (BESTFIT: cu2, with one vnode free, first), or
/// in list order with the option.
#[test]
fn spanevenly_set_order_priority_type_or_list() {
    let text = "nodeset_priority_type = \"BESTFIT\"\n";
    let s = four_cus_with(600, text);
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[("c2a", 1)]);
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=1"),
        on(&[("c2b", 1)], "cu2")
    );
    let mut p = policy(&s, &[], |g| g.options.spanevenly_list_order = true);
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=1"),
        on(&[("c1a", 1)], "cu1")
    );
}

/// Optional against mandatory sets on the same jobs (the spec's §6): mandatory jobs always run
/// inside one set and may wait for it; optional jobs that find no set now span at once, so
/// they wait less.
#[test]
fn optional_and_mandatory_sets_on_the_same_workload() {
    let jobs: Vec<(u64, u64, String)> = (0..60u64)
        .map(|i| {
            (
                i * 7,
                40 + (i * 37) % 200,
                format!("select={}:ncpus=1", 2 + (i * 5) % 11),
            )
        })
        .collect();
    let jobs: Vec<(u64, u64, &str)> = jobs.iter().map(|(a, b, c)| (*a, *b, c.as_str())).collect();
    let waits = |optional: bool| {
        let s = abc(&format!("{ONEOF_ABC}nodeset_is_optional = {optional}\n"));
        let starts = simulate(&s, &jobs);
        let spanned = starts
            .iter()
            .filter(|x| x.as_ref().is_some_and(|(_, l)| l == "spanned"))
            .count();
        let wait: u64 = starts
            .iter()
            .zip(&jobs)
            .map(|(x, j)| x.as_ref().expect("every job fits a set").0 - j.0)
            .sum();
        (spanned, wait)
    };
    let (mandatory_spanned, mandatory_wait) = waits(false);
    let (optional_spanned, optional_wait) = waits(true);
    assert_eq!(mandatory_spanned, 0);
    assert!(optional_spanned > 0);
    assert!(
        optional_wait < mandatory_wait,
        "optional {optional_wait} s, mandatory {mandatory_wait} s"
    );
}

/// Vnodes at three speeds, two ncpus each: s1-s2 at 1.0, m1-m2 at 1.2, f1-f4 at 2.0; PROCSPEED
/// sets from `moab` (no list: one set per speed, slowest first).
fn three_speeds(moab: &str) -> Scenario {
    let text = format!(
        "[[class]]\nname = \"s\"\ncount = 2\nnames = [\"s1\", \"s2\"]\nncpus = 2\nspeed = 1.0\n\
        [[class]]\nname = \"m\"\ncount = 2\nnames = [\"m1\", \"m2\"]\nncpus = 2\nspeed = 1.2\n\
        [[class]]\nname = \"f\"\ncount = 4\nnames = [\"f1\", \"f2\", \"f3\", \"f4\"]\nncpus = 2\nspeed = 2.0\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"PROCSPEED\"\n{moab}"
    );
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// PROCSPEED sets (R5, §5) under BESTRESOURCE: the fastest feasible set, slower ones when it
/// is full; a job's own list restricts the speeds; under MINLOSS with a tolerance the least
/// wasted speed wins, borrowing from the next speed up; under FIRSTFIT the slowest feasible.
#[test]
fn procspeed_sets_under_bestresource_minloss_and_firstfit() {
    let s = three_speeds("nodeset_priority_type = \"BESTRESOURCE\"\n");
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=4:ncpus=1"),
        on(&[("f1", 2), ("f2", 2)], "procspeed=2")
    );
    // The fast set full: the fastest that still holds 4 tasks is 1.2.
    let fast_busy = state(&s, &p, &[("f1", 2), ("f2", 2), ("f3", 2), ("f4", 1)]);
    assert_eq!(
        place(&s, &mut p, &fast_busy, "select=4:ncpus=1"),
        on(&[("m1", 2), ("m2", 2)], "procspeed=1.2")
    );
    // A job's own speeds: 1.0 and 1.2 only, of which 1.2 is the faster.
    let own = "select=2:ncpus=1 nodeset=ONEOF:PROCSPEED:1:1.2";
    let mut p = policy(&s, &[request(&s, own)], |_| {});
    assert_eq!(
        place(&s, &mut p, &st, own),
        on(&[("m1", 2)], "procspeed=1.2")
    );

    let s = three_speeds("nodeset_priority_type = \"MINLOSS\"\nnodeset_tolerance = 0.25\n");
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[]);
    // 4 tasks: the slow set alone, with no loss, first.
    assert_eq!(
        place(&s, &mut p, &st, "select=4:ncpus=1"),
        on(&[("s1", 2), ("s2", 2)], "procspeed=1")
    );
    // 6 tasks: 1.0 borrowing two from 1.2 loses 0.2 × 2; 2.0 alone loses nothing.
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        on(&[("f1", 2), ("f2", 2), ("f3", 2)], "procspeed=2")
    );
    // The fast set busy: 1.0 borrows from 1.2 (within 25 %), never from 2.0.
    let busy = state(&s, &p, &[("f1", 2), ("f2", 2), ("f3", 2)]);
    assert_eq!(
        place(&s, &mut p, &busy, "select=6:ncpus=1"),
        on(&[("s1", 2), ("s2", 2), ("m1", 2)], "procspeed=1")
    );

    let s = three_speeds("");
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[("s1", 1)]);
    assert_eq!(
        place(&s, &mut p, &st, "select=4:ncpus=1"),
        on(&[("m1", 2), ("m2", 2)], "procspeed=1.2")
    );
}

/// A PROCSPEED list from the scenario, and the errors for speeds that are not numbers.
#[test]
fn procspeed_lists_and_their_errors() {
    let s = three_speeds("nodeset_list = [\"2\", \"1\"]\nnodeset_is_optional = false\n");
    let mut p = policy(&s, &[], |_| {});
    let st = state(&s, &p, &[("f1", 2), ("f2", 2), ("f3", 2)]);
    // 1.2 is not listed: the job takes 1.0 after the busy 2.0, and 6 tasks fit nowhere.
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1"),
        on(&[("s1", 2), ("s2", 1)], "procspeed=1")
    );
    assert_eq!(
        place(&s, &mut p, &st, "select=6:ncpus=1"),
        Err("Not Running: cannot alloc nodeset: no node set can hold the job now".to_owned())
    );
    let text = "[[class]]\nname = \"s\"\ncount = 1\nncpus = 2\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"PROCSPEED\"\nnodeset_list = [\"fast\"]\n";
    let err = load_scenario(text, Path::new("t.toml"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "t.toml:8:17: key `moab.nodeset_list`: expected a PROCSPEED entry, a positive speed, found `fast`"
    );
    let err = placesim_request::parse_and_lower(
        "select=1:ncpus=1 nodeset=ONEOF:PROCSPEED:1.5:-2",
        s.cluster.resources(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "column 46: PROCSPEED value `-2` is not a speed: expected a positive number"
    );
}

/// The same sets through EASY: jobs start in the fastest set free at their submit, and a
/// mandatory job too big for the sets still free waits for the fast set.
#[test]
fn procspeed_bestresource_through_a_run() {
    use placesim_core::JobId;
    let s = three_speeds("nodeset_priority_type = \"BESTRESOURCE\"\nnodeset_is_optional = false\n");
    let jobs = [
        (0, 100, 100, "select=8:ncpus=1"),
        (1, 50, 50, "select=3:ncpus=1"),
        (2, 50, 50, "select=8:ncpus=1"),
        (3, 10, 10, "select=1:ncpus=1"),
    ];
    let sink = run_easy(&s, &jobs);
    let starts: Vec<(u64, String, Vec<String>)> = (0..jobs.len())
        .map(|i| {
            let (t, a) = &sink.starts[&JobId(i as u32)];
            let vnodes = a
                .vnodes()
                .map(|v| s.cluster.vnode(v).name().to_owned())
                .collect();
            (*t, a.label.as_deref().unwrap_or("").to_owned(), vnodes)
        })
        .collect();
    let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        starts,
        vec![
            (
                0,
                "procspeed=2".to_owned(),
                names(&["f1", "f2", "f3", "f4"])
            ),
            (1, "procspeed=1.2".to_owned(), names(&["m1", "m2"])),
            (
                100,
                "procspeed=2".to_owned(),
                names(&["f1", "f2", "f3", "f4"])
            ),
            (3, "procspeed=1.2".to_owned(), names(&["m2"])),
        ]
    );
}

/// A job with a host list skips node sets (R4b): an exact list uses every listed host
/// (scattering when first fit would leave one out), a subset (`*`) only some; the job waits
/// while its hosts cannot take it, and can never run when they never could.
#[test]
fn hostlist_jobs_bypass_node_sets() {
    let s = abc(&format!("{ONEOF_ABC}nodeset_is_optional = false\n"));
    let texts = [
        "select=2:ncpus=1 hostlist=n5+n11",
        "select=8:ncpus=1 hostlist=n5+n11",
        "select=2:ncpus=1 hostlist=*n5+n11",
        "select=9:ncpus=1 hostlist=n5+n11",
        "select=1:ncpus=1 hostlist=n5+n99",
    ];
    let requests: Vec<Request> = texts.iter().map(|t| request(&s, t)).collect();
    let mut p = policy(&s, &requests, |_| {});
    let st = state(&s, &p, &[]);
    // n5 is in B and n11 in C: no set holds both, and the job runs on them anyway.
    assert_eq!(
        place(&s, &mut p, &st, texts[0]),
        on(&[("n5", 1), ("n11", 1)], "hostlist")
    );
    assert_eq!(
        place(&s, &mut p, &st, texts[1]),
        on(&[("n5", 4), ("n11", 4)], "hostlist")
    );
    assert_eq!(
        place(&s, &mut p, &st, texts[2]),
        on(&[("n5", 2)], "hostlist")
    );
    let n5_busy = state(&s, &p, &[("n5", 4)]);
    assert_eq!(
        place(&s, &mut p, &n5_busy, texts[0]),
        Err("Not Running: the hosts of the job's host list cannot take it now".to_owned())
    );
    assert_eq!(
        place(&s, &mut p, &n5_busy, texts[2]),
        on(&[("n11", 2)], "hostlist")
    );
    assert_eq!(
        place(&s, &mut p, &st, texts[3]),
        Err("Can Never Run: the hosts of the job's host list cannot take it".to_owned())
    );
    // A run refuses an unknown host before it starts; the policy alone says it never runs.
    assert_eq!(
        p.unsupported(&requests[4]),
        Some("a host list (hostlist=) naming a host the cluster does not have")
    );
    assert_eq!(p.unsupported(&requests[0]), None);
    assert_eq!(
        place(&s, &mut p, &st, texts[4]),
        Err("Can Never Run: the job's host list names a host the cluster does not have".to_owned())
    );
    let defs = s.cluster.resources();
    for (text, message) in [
        (
            "select=1 hostlist=^n1+n2",
            "column 19: superset host lists (`^`) are not modelled: give the exact hosts (`hostlist=a+b`) or a subset (`hostlist=*a+b`)",
        ),
        ("select=1 hostlist=n1+", "column 22: expected a host name"),
        (
            "select=1 hostlist=n1 hostlist=n2",
            "column 22: `hostlist` is given twice",
        ),
    ] {
        let err = placesim_request::parse_and_lower(text, defs).unwrap_err();
        assert_eq!(err.to_string(), message, "{text}");
    }
}

/// Through EASY: a host-list job waits for its host, reserved there, while a mandatory
/// node-set job backfills beside it in its set.
#[test]
fn hostlist_job_waits_for_its_host_through_a_run() {
    let s = abc(&format!("{ONEOF_ABC}nodeset_is_optional = false\n"));
    let jobs = [
        (0, 100, 100, "select=4:ncpus=1 hostlist=n1"),
        (1, 10, 10, "select=1:ncpus=1 hostlist=n1"),
        (2, 200, 200, "select=12:ncpus=1"),
        (3, 50, 50, "select=3:ncpus=1 hostlist=*n1+n12"),
    ];
    let sink = run_easy(&s, &jobs);
    let starts = sink.labelled_starts(&s.cluster, jobs.len());
    let on = |t: u64, label: &str, parts: &[(&str, u64)]| {
        (
            t,
            label.to_owned(),
            parts
                .iter()
                .map(|&(n, c)| (n.to_owned(), c))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        starts,
        vec![
            on(0, "hostlist", &[("n1", 4)]),
            // Reserved on n1 at 100, when job 0 ends.
            on(100, "hostlist", &[("n1", 1)]),
            // A still holds 12 free ncpus beside the busy n1: A, at once (it ends after 100
            // but does not touch n1, where job 1 is reserved).
            on(2, "A", &[("n2", 4), ("n3", 4), ("n4", 4)]),
            // A subset of n1 and n12: n12 has room now.
            on(3, "hostlist", &[("n12", 3)]),
        ]
    );
}

/// CLASS node sets (Moab's source): one set per class the vnodes carry (`classes`), named
/// `class=NAME`; an empty list is every class in order of first appearance, a listed class no
/// vnode carries is dropped, and a job may ask for its own.
#[test]
fn class_node_sets() {
    let mut text = String::from(
        "[[resource]]\nname = \"classes\"\ntype = \"string_array\"\n[run]\nplacement = \"moab\"\n",
    );
    for (i, classes) in [
        (1, "[\"batch\"]"),
        (2, "[\"batch\", \"debug\"]"),
        (3, "[\"debug\"]"),
        (4, "[\"debug\"]"),
    ] {
        text.push_str(&format!(
            "[[vnode]]\nname = \"n{i}\"\nncpus = 4\nresources = {{ classes = {classes} }}\n"
        ));
    }
    let s = |moab: &str| {
        load_scenario(&format!("{text}[moab]\n{moab}"), Path::new("t.toml"))
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let every = s(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"CLASS\"\n\
                   nodeset_priority_type = \"BESTFIT\"\n",
    );
    let p = policy(&every, &[], |_| {});
    let sets = crate::common::set_members(&p.pools()[0], &every.cluster);
    let names = |l: &[&str]| l.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        sets,
        [
            ("class=batch".to_owned(), names(&["n1", "n2"])),
            ("class=debug".to_owned(), names(&["n2", "n3", "n4"])),
        ]
    );
    let mut p = policy(&every, &[], |_| {});
    let st = state(&every, &p, &[]);
    // BESTFIT: batch (8 tasks) before debug (12).
    assert_eq!(
        place(&every, &mut p, &st, "select=6:ncpus=1"),
        on(&[("n1", 4), ("n2", 2)], "class=batch")
    );
    assert_eq!(
        place(&every, &mut p, &st, "select=9:ncpus=1"),
        on(&[("n2", 4), ("n3", 4), ("n4", 1)], "class=debug")
    );
    // A job's own list: debug only, then a class no vnode carries, which is dropped.
    let own = "select=2:ncpus=1 nodeset=ONEOF:CLASS:debug";
    let mut p = policy(&every, &[request(&every, own)], |_| {});
    let st = state(&every, &p, &[]);
    assert_eq!(
        place(&every, &mut p, &st, own),
        on(&[("n2", 2)], "class=debug")
    );
    let listed = s(
        "nodeset_policy = \"ONEOF\"\nnodeset_attribute = \"CLASS\"\n\
                    nodeset_list = [\"gpu\", \"debug\"]\n",
    );
    let p = policy(&listed, &[], |_| {});
    let names: Vec<&str> = p.pools()[0].sets.iter().map(|set| set.name).collect();
    assert_eq!(names, ["class=debug"]);
}
