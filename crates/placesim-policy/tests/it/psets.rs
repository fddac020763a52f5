//! PBS placement sets: the seed documents' examples, every outcome of the spec's §1.7 table,
//! pool precedence, only_explicit_psets, string_array overlap, queue association, the exact
//! comment texts, and a reservation in the set that frees first. Each asserts the set and the
//! vnodes chosen.

use placesim_core::{
    Allocation, ClusterState, PlacementPolicy, Request, Scratch, ScratchBuf, Sharing, StateView,
};
use placesim_policy::placement::{PbsPsets, PsetSettings};
use placesim_scenario::{Scenario, load_scenario};
use placesim_testkit::Replay;
use std::path::Path;

const COLOR_SHAPE: &str = "
[[resource]]
name = \"color\"
type = \"string\"
[[resource]]
name = \"shape\"
type = \"string\"
[[class]]
name = \"bs\"
count = 2
names = [\"node1\", \"node2\"]
resources = { color = \"blue\", shape = \"square\" }
[[class]]
name = \"bt\"
count = 2
names = [\"node3\", \"node4\"]
resources = { color = \"blue\", shape = \"triangle\" }
[[class]]
name = \"rs\"
count = 2
names = [\"node5\", \"node6\"]
resources = { color = \"red\", shape = \"square\" }
[[class]]
name = \"rt\"
count = 2
names = [\"node7\", \"node8\"]
resources = { color = \"red\", shape = \"triangle\" }
[pbs]
node_group_enable = true
node_group_key = [\"color\"]
";

/// The two-switch cluster of seed 002: 10 vnodes on Switch1, 14 on Switch2, 8 ncpus each.
fn two_switch(extra: &str) -> String {
    format!(
        "[[resource]]\nname = \"switch\"\ntype = \"string\"\n\
         [[class]]\nname = \"a\"\ncount = 10\nncpus = 8\nmem = \"32gb\"\nresources = {{ switch = \"Switch1\" }}\n\
         [[class]]\nname = \"b\"\ncount = 14\nncpus = 8\nmem = \"32gb\"\nresources = {{ switch = \"Switch2\" }}\n\
         [pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n{extra}"
    )
}

fn scenario(text: &str) -> Scenario {
    load_scenario(text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// The policy for `s`, with `job_keys` usable in `place=group=` and per-chunk `group=`.
fn psets(s: &Scenario, job_keys: &[&str]) -> PbsPsets {
    let defs = s.cluster.resources();
    PbsPsets::new(
        &s.cluster,
        PsetSettings {
            job_keys: job_keys.iter().map(|k| defs.lookup(k).unwrap()).collect(),
            ..s.pbs.psets.clone()
        },
    )
}

/// A trace job `i` submitted at `submit`, running (and estimated) `runtime_s`, asking
/// request `r`.
fn trace_job(i: u64, submit: u64, runtime_s: u64, r: u32) -> placesim_core::Job {
    placesim_core::Job::new(
        i,
        placesim_core::SimTime(submit),
        placesim_core::SimDuration(runtime_s),
        placesim_core::SimDuration(runtime_s),
        0,
        placesim_core::RequestId(r),
    )
}

/// Starts each `(job, estimated end)` at 0 where `p` places it in `state`, in order: the
/// running jobs of a hand-made pass.
fn started_at_zero(
    p: &mut PbsPsets,
    workload: &placesim_core::Workload,
    state: &mut ClusterState,
    jobs: &[(u32, u64)],
) -> Vec<placesim_core::RunningJob> {
    let mut buf = ScratchBuf::default();
    jobs.iter()
        .map(|&(j, end)| {
            let job = placesim_core::JobId(j);
            let a = p
                .place(workload.request_of(job), &Scratch::new(state, &mut buf))
                .unwrap();
            state.allocate(&a).unwrap();
            placesim_core::RunningJob {
                job,
                start: placesim_core::SimTime(0),
                estimated_end: placesim_core::SimTime(end),
                allocation: a,
            }
        })
        .collect()
}

/// A state of `s` where other jobs hold all of each named vnode, with `p`'s groups tracked.
fn state(s: &Scenario, p: &PbsPsets, busy: &[&str]) -> ClusterState {
    let mut state = ClusterState::new(s.cluster.clone());
    p.track(&mut state);
    for name in busy {
        let v = s.cluster.vnode_by_name(name).unwrap();
        let mut a = Allocation::new(Sharing::Shared);
        a.add(v, s.cluster.capacity(v));
        state.allocate(&a).unwrap();
    }
    state
}

/// Where a job went: its vnodes by name, and the set its label names.
#[derive(Debug, PartialEq, Eq)]
struct Placed {
    vnodes: Vec<String>,
    set: String,
}

/// What placing `text` (in PBS queue `queue`) gives: where it went, or the comment.
fn place(
    s: &Scenario,
    p: &mut PbsPsets,
    st: &ClusterState,
    text: &str,
    queue: Option<u32>,
) -> Result<Placed, String> {
    let mut request: Request = placesim_request::parse_and_lower(text, s.cluster.resources())
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    request.queue = queue;
    let mut buf = ScratchBuf::default();
    let view = Scratch::new(st, &mut buf);
    match p.place(&request, &view) {
        // Every placement lies where its set label promises (what debug runs check at each
        // start), whatever order the set keeps its vnodes in.
        Some(a) if p.check_within_label(&request, &a).is_err() => {
            panic!("{text}: {:?}", p.check_within_label(&request, &a))
        }
        Some(a) => Ok(Placed {
            vnodes: a
                .vnodes()
                .map(|v| s.cluster.vnode(v).name().to_owned())
                .collect(),
            set: a.label.as_deref().unwrap_or("").to_owned(),
        }),
        None => Err(p.refusal().as_deref().unwrap_or("").to_owned()),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn seed_000_example_1_per_chunk_group_beside_an_ungrouped_complex() {
    let s = scenario(COLOR_SHAPE);
    let mut p = psets(&s, &["shape", "color"]);
    let st = state(&s, &p, &[]);
    // shape=square and shape=triangle tie on every key: creation order puts square first.
    // The ungrouped complex goes anywhere the job may run: the next free vnodes.
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1:group=shape+2:ncpus=1",
            None
        ),
        Ok(Placed {
            vnodes: names(&["node1", "node2", "node3", "node4"]),
            set: "per-chunk: shape=square+any".into()
        })
    );
}

#[test]
fn seed_000_example_2_complexes_with_different_groups() {
    let s = scenario(COLOR_SHAPE);
    let mut p = psets(&s, &["shape", "color"]);
    let st = state(&s, &p, &[]);
    // color=blue takes node1-2; then shape=square has 2 free ncpus (node5-6) against
    // triangle's 4, so the best fit, square, comes first.
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1:group=color+2:ncpus=1:group=shape",
            None
        ),
        Ok(Placed {
            vnodes: names(&["node1", "node2", "node5", "node6"]),
            set: "per-chunk: color=blue+shape=square".into()
        })
    );
}

#[test]
fn seed_000_example_3_same_group_may_land_in_different_sets() {
    let s = scenario(COLOR_SHAPE);
    let mut p = psets(&s, &["color"]);
    // With node3 and node4 busy, blue has 2 free, red 4: the first complex fills blue, and
    // the second, which no longer fits there, goes to red. place=group=color could not.
    let st = state(&s, &p, &["node3", "node4"]);
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1:group=color+2:ncpus=1:group=color",
            None
        ),
        Ok(Placed {
            vnodes: names(&["node1", "node2", "node5", "node6"]),
            set: "per-chunk: color=blue+color=red".into()
        })
    );
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=2:ncpus=1+2:ncpus=1 place=group=color",
            None
        ),
        Ok(Placed {
            vnodes: names(&["node5", "node6", "node7", "node8"]),
            set: "color=red".into()
        })
    );
}

#[test]
fn seed_002_select_4_ncpus_8_lands_in_switch_2() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    // Four running jobs leave 3 free vnodes on Switch1 and 6 on Switch2.
    let busy = [
        "a1", "a2", "a3", "a4", "a5", "a6", "a7", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8",
    ];
    let st = state(&s, &p, &busy);
    assert_eq!(
        place(&s, &mut p, &st, "select=4:ncpus=8", None),
        Ok(Placed {
            vnodes: names(&["b9", "b10", "b11", "b12"]),
            set: "switch=Switch2".into()
        })
    );
}

#[test]
fn outcome_runs_in_the_first_set_in_sort_order() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    // Switch1 is smaller, so it comes first and takes the job when it fits.
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=8", None),
        Ok(Placed {
            vnodes: names(&["a1", "a2"]),
            set: "switch=Switch1".into()
        })
    );
}

#[test]
fn outcome_waits_when_some_set_fits_statically_whatever_do_not_span() {
    for span in ["false", "true"] {
        let s = scenario(&two_switch(&format!("do_not_span_psets = {span}\n")));
        let mut p = psets(&s, &[]);
        // 12 vnodes fit Switch2 (14) statically, but only 10 of its vnodes are free now;
        // Switch1 (10 vnodes) cannot hold 12 even empty.
        let st = state(&s, &p, &["b1", "b2", "b3", "b4"]);
        assert_eq!(
            place(&s, &mut p, &st, "select=12:ncpus=8", None),
            Err("Not Running: Placement set switch=Switch2 has too few free resources".into()),
            "do_not_span_psets = {span}"
        );
    }
}

#[test]
fn outcome_spans_or_can_never_run_when_no_set_fits_statically() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    let Placed { vnodes, set: label } = place(&s, &mut p, &st, "select=16:ncpus=8", None).unwrap();
    assert_eq!(label, "spanned");
    assert_eq!(vnodes.len(), 16);
    assert_eq!(
        &vnodes[..11],
        &names(&[
            "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "b1"
        ])[..]
    );
    let s = scenario(&two_switch("do_not_span_psets = true\n"));
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=16:ncpus=8", None),
        Err("Can Never Run: can't fit in the largest placement set, and can't span psets".into())
    );
}

#[test]
fn the_whole_pool_check_comes_first_with_pbs_texts() {
    let s = scenario(&two_switch("do_not_span_psets = true\n"));
    let mut p = psets(&s, &[]);
    // Larger than the whole machine: the whole-pool message wins over CANT_SPAN_PSET.
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=25:ncpus=8", None),
        Err("Can Never Run: Insufficient amount of resource: ncpus (R: 200 A: 192 T: 192)".into())
    );
    let busy: Vec<String> = (1..=14).map(|i| format!("b{i}")).collect();
    let busy: Vec<&str> = busy.iter().map(String::as_str).collect();
    let st = state(&s, &p, &busy);
    assert_eq!(
        place(&s, &mut p, &st, "select=11:ncpus=8", None),
        Err("Not Running: Insufficient amount of resource: ncpus (R: 88 A: 80 T: 192)".into())
    );
}

/// PBS checks a pool in this order, and the first failure is the comment
/// (`resresv_can_fit_nodepart`, queue-disciplines.md §2.8): a free vnode, a vnode per
/// scatter chunk, the consumable totals, then each chunk's non-consumables; against totals
/// first for "Can Never Run", then against what is free for "Not Running".
#[test]
fn the_whole_pool_checks_go_in_pbs_order() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    let all: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|c| (1..=14).map(move |i| format!("{c}{i}")))
        .filter(|n| s.cluster.vnode_by_name(n).is_some())
        .collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    // No vnode free: the node count comes before the ncpus the job would also lack.
    let full = state(&s, &p, &all);
    assert_eq!(
        place(&s, &mut p, &full, "select=1:ncpus=8", None),
        Err("Not Running: Not enough free nodes available".into())
    );
    // More scatter chunks than vnodes, though the ncpus would do.
    let empty = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &empty, "select=25:ncpus=1 place=scatter", None),
        Err("Can Never Run: Not enough total nodes available".into())
    );
    // More scatter chunks than free vnodes: 23 free of 24.
    let one_busy = state(&s, &p, &["a1"]);
    assert_eq!(
        place(
            &s,
            &mut p,
            &one_busy,
            "select=24:ncpus=1 place=scatter",
            None
        ),
        Err("Not Running: Not enough free nodes available".into())
    );
    // Never: the available amount printed is the total, and sizes carry their unit.
    assert_eq!(
        place(&s, &mut p, &one_busy, "select=1:ncpus=1:mem=769gb", None),
        Err(
            "Can Never Run: Insufficient amount of resource: mem (R: 769gb A: 768gb T: 768gb)"
                .into()
        )
    );
    // Consumables before non-consumables.
    assert_eq!(
        place(
            &s,
            &mut p,
            &one_busy,
            "select=1:ncpus=193:switch=Switch3",
            None
        ),
        Err("Can Never Run: Insufficient amount of resource: ncpus (R: 193 A: 192 T: 192)".into())
    );
    // A value no vnode has: PBS's non-consumable form, with the pool's values.
    assert_eq!(
        place(
            &s,
            &mut p,
            &one_busy,
            "select=1:ncpus=1:switch=Switch3",
            None
        ),
        Err(
            "Can Never Run: Insufficient amount of resource: switch (Switch3 != Switch1,Switch2)"
                .into()
        )
    );
    // PBS's own example (pbs_allpart.py): a vnode that does not exist.
    let names = all.join(",");
    assert_eq!(
        place(&s, &mut p, &one_busy, "select=1:ncpus=1:vnode=foo", None),
        Err(format!(
            "Can Never Run: Insufficient amount of resource: vnode (foo != {names})"
        ))
    );
}

#[test]
fn pool_precedence_job_group_then_queue_then_server() {
    let text = format!(
        "{}[[pbs.queue]]\nname = \"q\"\nnode_group_key = [\"shape\"]\n",
        COLOR_SHAPE
    );
    let s = scenario(&text);
    let mut p = psets(&s, &["shape", "color"]);
    let st = state(&s, &p, &[]);
    // Server pool (color) for the default queue.
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1", None).map(|x| x.set),
        Ok("color=blue".into())
    );
    // The queue's own key beats the server's.
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1", Some(0)).map(|x| x.set),
        Ok("shape=square".into())
    );
    // place=group beats both.
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=3:ncpus=1 place=group=color",
            Some(0)
        )
        .map(|x| x.set),
        Ok("color=blue".into())
    );
    // With node_group_enable off, only place=group groups.
    let s = scenario(&text.replace("node_group_enable = true", "node_group_enable = false"));
    let mut p = psets(&s, &["shape"]);
    let st = state(&s, &p, &[]);
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1", Some(0)).map(|x| x.set),
        Ok(String::new())
    );
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1 place=group=shape", None),
        Ok(Placed {
            vnodes: names(&["node1", "node2", "node5"]),
            set: "shape=square".into()
        })
    );
}

#[test]
fn vnodes_lacking_the_key_and_only_explicit_psets() {
    let text = two_switch("[[vnode]]\nname = \"loose\"\nncpus = 128\n");
    let s = scenario(&text);
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    // The vnode without a switch forms switch="" (128 ncpus, sorted after 80 and 112).
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=120", None),
        Ok(Placed {
            vnodes: names(&["loose"]),
            set: "switch=\"\"".into()
        })
    );
    let s = scenario(&text.replace(
        "node_group_key = [\"switch\"]",
        "node_group_key = [\"switch\"]\nonly_explicit_psets = true",
    ));
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    // Now it is in no set: no set holds 120 ncpus even empty, and spanning reaches it.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=120", None),
        Ok(Placed {
            vnodes: names(&["loose"]),
            set: "spanned".into()
        })
    );
    // The aggregate trap of §1.4: a 64-ncpu chunk "statically fits" Switch2 (112 ncpus in
    // all, though no vnode has more than 8), so the job waits rather than span to `loose`.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=64", None),
        Err("Not Running: Placement set switch=Switch2 has too few free resources".into())
    );
}

#[test]
fn string_array_values_put_a_vnode_in_several_sets() {
    let text = "[[resource]]\nname = \"net\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"x\"\ncount = 2\nresources = { net = [\"A\"] }\n\
        [[class]]\nname = \"y\"\ncount = 1\nresources = { net = [\"A\", \"B\"] }\n\
        [[class]]\nname = \"z\"\ncount = 2\nresources = { net = [\"B\"] }\n\
        [pbs]\nnode_group_enable = true\nnode_group_key = [\"net\"]\n";
    let s = scenario(text);
    let mut p = psets(&s, &[]);
    // y1 is in both: net=A = {x1, x2, y1}, net=B = {y1, z1, z2}.
    let st = state(&s, &p, &["x1", "x2"]);
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=1", None),
        Ok(Placed {
            vnodes: names(&["y1"]),
            set: "net=A".into()
        })
    );
    let st = state(&s, &p, &["y1"]);
    assert_eq!(
        place(&s, &mut p, &st, "select=2:ncpus=1", None),
        Ok(Placed {
            vnodes: names(&["x1", "x2"]),
            set: "net=A".into()
        })
    );
    assert_eq!(
        place(&s, &mut p, &st, "select=3:ncpus=1", None),
        Err("Not Running: Placement set net=B has too few free resources".into())
    );
}

#[test]
fn queue_association_rules() {
    let text = two_switch("[[pbs.queue]]\nname = \"big\"\n[[pbs.queue]]\nname = \"other\"\n")
        .replace(
            "name = \"b\"\ncount = 14\n",
            "name = \"b\"\ncount = 14\nqueue = \"big\"\n",
        );
    let s = scenario(&text);
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    // Rule 1: a job of `big` uses only big's vnodes (Switch2), in the server key's sets.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=8", Some(0)),
        Ok(Placed {
            vnodes: names(&["b1"]),
            set: "switch=Switch2".into()
        })
    );
    // Rules 2 and 3: a job of a queue without vnodes, or of no queue, never gets big's.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=8", Some(1)).map(|x| x.vnodes),
        Ok(names(&["a1"]))
    );
    assert_eq!(
        place(&s, &mut p, &st, "select=11:ncpus=8", None),
        Err("Can Never Run: Insufficient amount of resource: ncpus (R: 88 A: 80 T: 80)".into())
    );
}

#[test]
fn extensions_alternatives_conditions_and_node_filters() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    // `||`: a first alternative that fits no vnode, then the second, in its set.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=16||2:ncpus=8", None),
        Ok(Placed {
            vnodes: names(&["a1", "a2"]),
            set: "switch=Switch1".into()
        })
    );
    // A condition no Switch1 vnode meets: the sets' union check skips Switch1.
    assert_eq!(
        place(&s, &mut p, &st, "select=1:ncpus=8:switch!=Switch1", None),
        Ok(Placed {
            vnodes: names(&["b1"]),
            set: "switch=Switch2".into()
        })
    );
    // node_filter alternatives: the first matches no vnode, the second only Switch2's.
    assert_eq!(
        place(
            &s,
            &mut p,
            &st,
            "select=1:ncpus=8 node_filter=\"switch==none or switch==Switch2\"",
            None
        ),
        Ok(Placed {
            vnodes: names(&["b1"]),
            set: "switch=Switch2".into()
        })
    );
}

#[test]
fn a_reservation_goes_in_the_set_that_frees_first() {
    use placesim_core::{JobId, SimTime, VecSink, Workload};
    use placesim_policy::queue::Easy;
    // Both switches full: Switch1's jobs end at 100, Switch2's at 50. The head (10 vnodes)
    // fits either; it is reserved at 50 in Switch2, though Switch1 sorts first.
    let s = scenario(&two_switch(""));
    let p = psets(&s, &[]);
    let defs = s.cluster.resources();
    let req = |t: &str| placesim_request::parse_and_lower(t, defs).unwrap();
    let requests = vec![
        req("select=10:ncpus=8 place=group=switch"),
        req("select=14:ncpus=8"),
        req("select=10:ncpus=8"),
    ];
    // Job 1 fills Switch1 until 100, job 2 Switch2 until 50; job 3 waits.
    let jobs = vec![
        trace_job(1, 0, 100, 2),
        trace_job(2, 0, 50, 1),
        trace_job(3, 1, 10, 2),
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let mut state = ClusterState::new(s.cluster.clone());
    p.track(&mut state);
    let mut easy = Easy::new(p);
    let mut sink = VecSink::default();
    Replay::from_state(&workload, state.clone()).run(&mut easy, &mut sink);
    sink.outcomes.sort_by_key(|o| o.job);
    assert_eq!(sink.outcomes[2].start, SimTime(50));
    // And the reservation itself, computed at t = 1.
    let mut sim_state = state;
    let mut p2 = psets(&s, &[]);
    let running = started_at_zero(&mut p2, &workload, &mut sim_state, &[(0, 100), (1, 50)]);
    let ctx = crate::common::first_pass_at(1, &sim_state, &workload, &[JobId(2)], &running);
    let r = Easy::new(p2).reservation(&ctx).unwrap();
    assert_eq!(r.start, SimTime(50));
    assert_eq!(r.allocation.label.as_deref(), Some("switch=Switch2"));
    let names: Vec<&str> = r
        .allocation
        .vnodes()
        .map(|v| s.cluster.vnode(v).name())
        .collect();
    assert_eq!(&names[..3], &["b1", "b2", "b3"]);
    assert!(sim_state.eligible().iter().count() == 0);
}

/// A top job no set can hold even empty is calendared spanning, as it would run (spec §6:
/// "if no set statically fits and spanning is allowed, the calendared placement spans
/// too"). Switch1 (10 vnodes) is busy until 100, Switch2 (14) until 50. J3 asks 16 vnodes:
/// it is estimated at 100 on a1–a10 and b1–b6, `spanned`. Under depth 2, J4 (4 vnodes,
/// 10 s) is the second top job: at 50 Switch2 is free and J3's vnodes are not held until
/// 100, so it is estimated at 50 on b1–b4, in `switch=Switch2`.
#[test]
fn a_top_job_no_set_can_hold_is_calendared_spanning() {
    use placesim_core::{JobId, SchedulingPolicy, SimTime, Workload};
    use placesim_policy::queue::{Backfill, Depth, Easy};
    let s = scenario(&two_switch(""));
    let defs = s.cluster.resources();
    let req = |t: &str| placesim_request::parse_and_lower(t, defs).unwrap();
    let requests = vec![
        req("select=10:ncpus=8 place=group=switch"),
        req("select=14:ncpus=8"),
        req("select=16:ncpus=8"),
        req("select=4:ncpus=8"),
    ];
    let jobs = vec![
        trace_job(1, 0, 100, 0),
        trace_job(2, 0, 50, 1),
        trace_job(3, 1, 10, 2),
        trace_job(4, 1, 10, 3),
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let mut state = ClusterState::new(s.cluster.clone());
    let mut p = psets(&s, &[]);
    p.track(&mut state);
    let running = started_at_zero(&mut p, &workload, &mut state, &[(0, 100), (1, 50)]);
    let ctx = crate::common::first_pass_at(1, &state, &workload, &[JobId(2), JobId(3)], &running);
    let names = |a: &placesim_core::Allocation| -> Vec<String> {
        a.vnodes()
            .map(|v| s.cluster.vnode(v).name().to_owned())
            .collect()
    };
    let spanning: Vec<String> = (1..=10)
        .map(|i| format!("a{i}"))
        .chain((1..=6).map(|i| format!("b{i}")))
        .collect();
    let easy = Easy::new(psets(&s, &[])).reservation(&ctx).unwrap();
    assert_eq!(easy.start, SimTime(100));
    assert_eq!(easy.allocation.label.as_deref(), Some("spanned"));
    assert_eq!(names(&easy.allocation), spanning);
    let mut depth2 = Backfill::new(psets(&s, &[]), Depth::Jobs(2));
    let mut decisions = Vec::new();
    depth2.schedule(&ctx, &mut decisions);
    assert!(decisions.is_empty(), "{decisions:?}");
    let planned: Vec<(JobId, SimTime, String, Vec<String>)> = depth2
        .planned()
        .iter()
        .map(|p| {
            let a = p.allocation.as_deref().unwrap();
            (
                p.job,
                p.start,
                a.label.as_deref().unwrap_or("").to_owned(),
                names(a),
            )
        })
        .collect();
    assert_eq!(
        planned,
        [
            (JobId(2), SimTime(100), "spanned".to_owned(), spanning),
            (
                JobId(3),
                SimTime(50),
                "switch=Switch2".to_owned(),
                vec!["b1".into(), "b2".into(), "b3".into(), "b4".into()]
            ),
        ]
    );
}

#[test]
fn ctc_sp2_on_switch_sets_with_and_without_placement_sets() {
    use crate::common::CheckingSink;

    use placesim_policy::placement::FirstFit;
    use placesim_policy::queue::Easy;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/CTC-SP2-1996-3.1-cln.swf.gz");
    if !path.is_file() {
        eprintln!(
            "skipped: {} is absent (../shared/traces is not beside the project)",
            path.display()
        );
        return;
    }
    let trace = placesim_workload::load_trace(
        &path,
        &placesim_workload::SwfOptions::default(),
        &placesim_core::ResourceDefs::default(),
    )
    .unwrap();
    // CTC-SP2's 430 processors as one-ncpu vnodes under switches of 64: 6 sets of 64, one of 46.
    let s = scenario(&format!(
        "[cluster]\nswitches_of = 64\n[[cluster.generation]]\nname = \"n\"\ncount = {}\n\
         [pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n",
        trace.procs
    ));
    let n = trace.workload.jobs().len();
    let mut starts = Vec::new();
    for with_sets in [false, true] {
        let mut state = ClusterState::new(s.cluster.clone());
        let p = psets(&s, &[]);
        let mut sink = CheckingSink::default();
        let stats = if with_sets {
            p.track(&mut state);
            Replay::from_state(&trace.workload, state).run(&mut Easy::new(p), &mut sink)
        } else {
            let mut first_fit = Easy::new(FirstFit::default());
            Replay::from_state(&trace.workload, state).run(&mut first_fit, &mut sink)
        };
        // Every job is accounted for: it ran, or never started (and has a comment then).
        assert_eq!(sink.ends.len() + stats.never_started.len(), n);
        assert_eq!(n as u64 + trace.skipped.total(), trace.records);
        assert!(sink.started_twice.is_empty() && sink.ended_twice.is_empty());
        assert_eq!(sink.first_oversubscription(&s.cluster), None);
        if with_sets {
            // Every job ran in its set, or spanned; the label says which.
            let switch = s.cluster.resources().lookup("switch").unwrap();
            let mut in_sets = 0;
            for (start, alloc) in sink.starts.values() {
                let label = alloc
                    .label
                    .as_deref()
                    .unwrap_or_else(|| panic!("unlabelled start at {start}"));
                if label == "spanned" {
                    continue;
                }
                let value = label.strip_prefix("switch=").unwrap();
                for v in alloc.vnodes() {
                    let have = s.cluster.vnode(v).attr(switch);
                    assert_eq!(
                        have,
                        Some(&placesim_core::AttrValue::Str(value.into())),
                        "job at {start} outside {label}"
                    );
                }
                in_sets += 1;
            }
            assert!(in_sets > n / 2, "{in_sets} of {n} jobs in one set");
        }
        starts.push(
            sink.starts
                .iter()
                .map(|(j, (t, _))| (*j, *t))
                .collect::<Vec<_>>(),
        );
    }
    // Placement sets change the schedule.
    assert_ne!(starts[0], starts[1]);
}

/// The invariant check reads the set an allocation was placed in from its typed record, not
/// from the label text: a start placed in Switch1 that also holds a Switch2 vnode is caught,
/// naming the set (and b1 by its index, 10), even with its label rewritten; one that spanned
/// may go anywhere.
#[test]
fn the_set_check_reads_the_placement_record_not_the_label() {
    let s = scenario(&two_switch(""));
    let mut p = psets(&s, &[]);
    let st = state(&s, &p, &[]);
    let request = placesim_request::parse_and_lower("select=2:ncpus=8", s.cluster.resources())
        .expect("a valid request");
    let mut buf = ScratchBuf::default();
    let view = Scratch::new(&st, &mut buf);
    let mut a = p.place(&request, &view).expect("fits in Switch1");
    assert_eq!(a.within, placesim_core::Within::Set(0));
    assert_eq!(p.check_within_label(&request, &a), Ok(()));
    let b1 = s.cluster.vnode_by_name("b1").expect("b1");
    a.push(b1, &[1, 0, 0]);
    a.label = Some("spanned".into());
    assert_eq!(
        p.check_within_label(&request, &a),
        Err("vnode 10 of the allocation lies outside its set switch=Switch1".to_owned())
    );
    a.within = placesim_core::Within::Anywhere;
    assert_eq!(p.check_within_label(&request, &a), Ok(()));
}

/// A planned reservation as the test reads it: job, start, set label, vnode names.
type Planned = (
    placesim_core::JobId,
    placesim_core::SimTime,
    Option<String>,
    Vec<String>,
);

/// One depth-2 pass at time 1 on the two-switch cluster: Switch1 held by a job of 10 vnodes
/// until `switch1_until`, Switch2 by one of 14 until `switch2_until`; jobs 2 and 3 (10 vnodes,
/// 10 s each) wait. Returns the reservations it planned, and checks it starts nothing.
fn two_top_jobs_planned(switch1_until: u64, switch2_until: u64) -> Vec<Planned> {
    use placesim_core::{JobId, SchedulingPolicy, Workload};
    use placesim_policy::queue::{Backfill, Depth};
    let s = scenario(&two_switch(""));
    let defs = s.cluster.resources();
    let req = |t: &str| placesim_request::parse_and_lower(t, defs).unwrap();
    let requests = vec![req("select=10:ncpus=8"), req("select=14:ncpus=8")];
    let jobs = vec![
        trace_job(1, 0, switch1_until, 0),
        trace_job(2, 0, switch2_until, 1),
        trace_job(3, 0, 10, 0),
        trace_job(4, 0, 10, 0),
    ];
    let workload = Workload::new(jobs, requests).unwrap();
    let mut p = psets(&s, &[]);
    let mut sim_state = state(&s, &p, &[]);
    let running = started_at_zero(
        &mut p,
        &workload,
        &mut sim_state,
        &[(0, switch1_until), (1, switch2_until)],
    );
    let ctx =
        crate::common::first_pass_at(1, &sim_state, &workload, &[JobId(2), JobId(3)], &running);
    let mut depth2 = Backfill::new(p, Depth::Jobs(2));
    let mut decisions = Vec::new();
    depth2.schedule(&ctx, &mut decisions);
    assert!(decisions.is_empty());
    depth2
        .planned()
        .iter()
        .map(|p| {
            let a = p
                .allocation
                .as_ref()
                .expect("placement sets plan on vnodes");
            let names = a
                .vnodes()
                .map(|v| s.cluster.vnode(v).name().to_owned())
                .collect();
            (p.job, p.start, a.label.as_deref().map(str::to_owned), names)
        })
        .collect()
}

/// The first ten vnodes of class `class`: `a1`…`a10` or `b1`…`b10`.
fn first_ten(class: &str) -> Vec<String> {
    (1..=10).map(|i| format!("{class}{i}")).collect()
}

/// Top-job estimates with placement sets: both switches full, Switch1's jobs until 100 and
/// Switch2's until 50. Two jobs of 10 vnodes wait. At depth 2 the first is reserved in
/// Switch2 at 50 (for 10 s), and the second in Switch2 again when that reservation ends, at
/// 60: earlier than Switch1 frees, at 100 (the earliest time first, pbs-placement-sets §6).
#[test]
fn second_top_job_is_reserved_in_the_set_that_frees_first_after_the_first() {
    use placesim_core::{JobId, SimTime};
    let switch2 = Some("switch=Switch2".to_owned());
    assert_eq!(
        two_top_jobs_planned(100, 50),
        vec![
            (JobId(2), SimTime(50), switch2.clone(), first_ten("b")),
            (JobId(3), SimTime(60), switch2, first_ten("b")),
        ]
    );
}

/// Two top jobs at the same time take disjoint sets (`TestNodeBuckets.test_psets_calendaring`):
/// both switches free at 50, the first job is reserved in the smaller, Switch1, by the usual
/// set order, and the second, at the same time, in Switch2.
#[test]
fn two_top_jobs_at_one_time_take_disjoint_sets() {
    use placesim_core::{JobId, SimTime};
    assert_eq!(
        two_top_jobs_planned(50, 50),
        vec![
            (
                JobId(2),
                SimTime(50),
                Some("switch=Switch1".to_owned()),
                first_ten("a")
            ),
            (
                JobId(3),
                SimTime(50),
                Some("switch=Switch2".to_owned()),
                first_ten("b")
            ),
        ]
    );
}

/// Three classes: `a` (2 vnodes of 4 ncpus, priority 1), `b` (2 of 8, priority 5), `c` (2 of
/// 4, priority 5), on switches `S1` (a, b) and `S2` (c).
fn three_priorities(pbs: &str) -> Scenario {
    scenario(&format!(
        "[[resource]]\nname = \"switch\"\ntype = \"string\"\n\
         [[class]]\nname = \"a\"\ncount = 2\nncpus = 4\nsort_priority = 1\nresources = {{ switch = \"S1\" }}\n\
         [[class]]\nname = \"b\"\ncount = 2\nncpus = 8\nsort_priority = 5\nresources = {{ switch = \"S1\" }}\n\
         [[class]]\nname = \"c\"\ncount = 2\nncpus = 4\nsort_priority = 5\nresources = {{ switch = \"S2\" }}\n\
         [pbs]\n{pbs}"
    ))
}

/// PBS's `node_sort_key` orders the vnodes first fit tries: by default `sort_priority HIGH`
/// (b1, b2, c1, c2, then a1, a2, ties in cluster order); with `ncpus LOW` then
/// `sort_priority HIGH`, c1, c2, a1, a2, b1, b2. Under first fit alone and inside placement
/// sets (switch S1 holds a and b: b first).
#[test]
fn node_sort_key_orders_the_vnodes_first_fit_tries() {
    use placesim_policy::placement::FirstFit;
    let first_fit = |s: &Scenario, text: &str| {
        let request = placesim_request::parse_and_lower(text, s.cluster.resources()).unwrap();
        let state = state(s, &psets(s, &[]), &[]);
        let mut buf = ScratchBuf::default();
        let mut ff = FirstFit::in_order(s.pbs.psets.node_order.clone());
        let a = ff.place(&request, &Scratch::new(&state, &mut buf)).unwrap();
        a.vnodes()
            .map(|v| s.cluster.vnode(v).name().to_owned())
            .collect::<Vec<_>>()
    };
    let by_priority = three_priorities("");
    assert_eq!(
        first_fit(&by_priority, "select=5:ncpus=1 place=vscatter"),
        names(&["b1", "b2", "c1", "c2", "a1"])
    );
    let by_size = three_priorities("node_sort_key = [\"ncpus LOW\", \"sort_priority HIGH\"]\n");
    assert_eq!(
        first_fit(&by_size, "select=5:ncpus=1 place=vscatter"),
        names(&["c1", "c2", "a1", "a2", "b1"])
    );
    // No priority set: cluster order, and no order is kept.
    let plain = scenario("[[class]]\nname = \"n\"\ncount = 2\n");
    assert_eq!(plain.pbs.psets.node_order, None);
    // Inside a placement set: S1 (16+8 = 24 ncpus) sorts after S2 (8), which is too small for
    // 3 vnodes; in S1, b before a.
    let sets = three_priorities("node_group_enable = true\nnode_group_key = [\"switch\"]\n");
    let mut p = psets(&sets, &[]);
    let st = state(&sets, &p, &[]);
    assert_eq!(
        place(&sets, &mut p, &st, "select=3:ncpus=1 place=vscatter", None),
        Ok(Placed {
            vnodes: names(&["b1", "b2", "a1"]),
            set: "switch=S1".into()
        })
    );
}

/// A timeline's `qmgr` turns the server's node_group_key on at 100: J1 (at 0) was placed by
/// first fit over the whole cluster and keeps n1 and n2; J2 (at 200, after J1 ended) goes to
/// the set A = {n1, n3}. Without the event J2 takes n1 and n2 too; with the key from the
/// start J1 is in A as well.
#[test]
fn a_node_group_key_turned_on_mid_run_changes_later_placements_only() {
    use crate::common::CheckingSink;
    use placesim_core::JobId;
    use placesim_policy::queue::Easy;
    let run = |pbs: &str, events: &str| -> Vec<(u64, Vec<String>)> {
        let s = scenario(&format!(
            "[run]\nplacement = \"pbs\"\n\
             [[resource]]\nname = \"switch\"\ntype = \"string\"\n\
             [[vnode]]\nname = \"n1\"\nresources = {{ switch = \"A\" }}\n\
             [[vnode]]\nname = \"n2\"\nresources = {{ switch = \"B\" }}\n\
             [[vnode]]\nname = \"n3\"\nresources = {{ switch = \"A\" }}\n\
             [[vnode]]\nname = \"n4\"\nresources = {{ switch = \"B\" }}\n\
             [pbs]\nnode_group_enable = true\n{pbs}{events}"
        ));
        let jobs = [
            (0, 50, 50, "select=2:ncpus=1"),
            (200, 50, 50, "select=2:ncpus=1"),
        ];
        let workload = crate::common::workload_of(s.cluster.resources(), &jobs);
        let mut state = ClusterState::new(s.cluster.clone());
        let placement = s.placement(&workload).instance(&mut state);
        let mut sink = CheckingSink::default();
        Replay::from_state(&workload, state).run(&mut Easy::new(placement), &mut sink);
        (0..jobs.len())
            .map(|i| {
                let (t, a) = &sink.starts[&JobId(i as u32)];
                let names = a
                    .vnodes()
                    .map(|v| s.cluster.vnode(v).name().to_owned())
                    .collect();
                (*t, names)
            })
            .collect()
    };
    let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    let turned_on = "[[event]]\nat = 100\nqmgr = \"set server node_group_key = switch\"\n";
    assert_eq!(
        run("", turned_on),
        [(0, names(&["n1", "n2"])), (200, names(&["n1", "n3"]))]
    );
    assert_eq!(
        run("", ""),
        [(0, names(&["n1", "n2"])), (200, names(&["n1", "n2"]))]
    );
    assert_eq!(
        run("node_group_key = [\"switch\"]\n", ""),
        [(0, names(&["n1", "n3"])), (200, names(&["n1", "n3"]))]
    );
    // And back off at 150: J2 is placed by first fit again.
    let off = "[[event]]\nat = 150\nqmgr = \"unset server node_group_key\"\n";
    assert_eq!(
        run("", &format!("{turned_on}{off}")),
        [(0, names(&["n1", "n2"])), (200, names(&["n1", "n2"]))]
    );
}

/// EASY's reservation walk builds its shadow state from the state now, from the idle cluster,
/// or from the view the last pass left, whichever is nearest; a timeline's placement asks the
/// view's state for the time, to place by the rules in force. On `psets-timeline.toml` (KTH-SP2,
/// 27,992 jobs; the server's `node_group_key` is set on day 69) the shortcuts decide as the plain
/// walk, which builds every view from the state now, and the event changes the schedule. (The
/// idle cluster once kept the clock of when it was made: a reservation on a view built from it
/// after day 69 was placed by the rules of before, and hundreds of jobs started otherwise.)
#[test]
fn reservations_follow_a_timeline_whichever_side_their_view_is_built_from() {
    use crate::common::CheckingSink;
    use placesim_policy::queue::Easy;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/psets-timeline.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let starts = |text: &str, shortcuts: bool| {
        let s = load_scenario(text, &path).unwrap_or_else(|e| panic!("{e}"));
        let loaded = s.workload().unwrap_or_else(|e| panic!("{e}"));
        let workload = &loaded.trace.workload;
        let mut state = ClusterState::new(s.cluster.clone());
        let placement = s.placement(workload).instance(&mut state);
        let mut easy = if shortcuts {
            Easy::new(placement)
        } else {
            Easy::without_shortcuts(placement)
        };
        let mut sink = CheckingSink::default();
        Replay::from_state(workload, state).run(&mut easy, &mut sink);
        assert_eq!(sink.starts.len(), workload.jobs().len());
        (sink.starts, easy.shortcuts())
    };
    let (fast, taken) = starts(&text, true);
    let (plain, _) = starts(&text, false);
    let differing = fast
        .iter()
        .filter(|&(j, a)| plain.get(j) != Some(a))
        .count();
    assert_eq!(differing, 0, "jobs started otherwise by the shortcuts");
    assert!(
        taken.idle_builds > 50 && taken.kept_syncs > 1000,
        "shortcuts taken {taken:?}"
    );
    let event = "[[event]]\nat = \"69:00:00:00\"\nqmgr = \"set server node_group_key = switch\"\n";
    assert!(text.contains(event));
    let (without_event, _) = starts(&text.replace(event, ""), true);
    assert!(fast != without_event, "the event changes nothing");
}

/// The set search against its plain definition (spec §1.7; queue-disciplines.md §2.8), on
/// random states of five switches of one-ncpu vnodes (3, 6, 6, 9 and 4 of them; the second's
/// have twice the mem, so it comes after the third of the same size), with and without a
/// node filter on a random colour: of the sets with enough free ncpus, the first in the
/// order (total ncpus, total mem, free ncpus, free mem, creation) takes the job on its first
/// free vnodes; else, if some set is large enough, the job waits, named with the last set of
/// that order; else it spans, on the cluster's first free vnodes. With a node filter the
/// free amounts count only the vnodes that pass it, and the totals all of them (placesim's
/// extension). Asserts the vnodes, the set and the comment of every case, and the search's
/// shortcuts (a job larger than every set told at once, the sets with room gathered before
/// any is read whole, the last set looked for only when nothing is placed) with them.
#[test]
fn the_set_search_matches_its_plain_definition_on_random_states() {
    const SIZES: [usize; 5] = [3, 6, 6, 9, 4];
    const MEM_GB: [u64; 5] = [4, 8, 4, 4, 4];
    let mut rng = placesim_testkit::Lcg(0x5e7_5ea2c);
    let mut compared = [0u32; 3];
    for _cluster in 0..4 {
        let mut text = String::from(
            "[[resource]]\nname = \"switch\"\ntype = \"string\"\n\
             [[resource]]\nname = \"color\"\ntype = \"string\"\n\
             [pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n",
        );
        // Per vnode, in the cluster's order: its switch and whether it is red.
        let mut vnodes: Vec<(usize, bool)> = Vec::new();
        for (sw, &size) in SIZES.iter().enumerate() {
            for k in 0..size {
                let red = rng.below(2) == 0;
                text += &format!(
                    "[[class]]\nname = \"c{sw}_{k}\"\ncount = 1\nnames = [\"s{sw}v{k}\"]\n\
                     ncpus = 1\nmem = \"{}gb\"\n\
                     resources = {{ switch = \"S{sw}\", color = \"{}\" }}\n",
                    MEM_GB[sw],
                    if red { "red" } else { "blue" }
                );
                vnodes.push((sw, red));
            }
        }
        let s = scenario(&text);
        let mut p = psets(&s, &[]);
        let name_of = |v: usize| format!("s{}v{}", vnodes[v].0, v - first_of(&SIZES, vnodes[v].0));
        for _state in 0..150 {
            let busy_share = rng.below(4);
            let free: Vec<bool> = vnodes.iter().map(|_| rng.below(4) >= busy_share).collect();
            let busy: Vec<String> = (0..vnodes.len())
                .filter(|&v| !free[v])
                .map(name_of)
                .collect();
            let busy: Vec<&str> = busy.iter().map(String::as_str).collect();
            let st = state(&s, &p, &busy);
            for filtered in [false, true] {
                let passes = |v: usize| free[v] && (!filtered || vnodes[v].1);
                let free_total = (0..vnodes.len()).filter(|&v| passes(v)).count();
                if free_total == 0 {
                    continue;
                }
                let n = 1 + rng.below(free_total as u64) as usize;
                let request = if filtered {
                    format!("select={n}:ncpus=1 node_filter=\"color==red\"")
                } else {
                    format!("select={n}:ncpus=1")
                };
                // Each set's place in PBS's order.
                let key = |sw: usize| {
                    let free_here = (0..vnodes.len())
                        .filter(|&v| vnodes[v].0 == sw && passes(v))
                        .count() as u64;
                    let size = SIZES[sw] as u64;
                    (
                        size,
                        size * MEM_GB[sw],
                        free_here,
                        free_here * MEM_GB[sw],
                        sw,
                    )
                };
                let first_free = |within: Option<usize>| -> Vec<String> {
                    (0..vnodes.len())
                        .filter(|&v| passes(v) && within.is_none_or(|sw| vnodes[v].0 == sw))
                        .take(n)
                        .map(name_of)
                        .collect()
                };
                let with_room = (0..SIZES.len())
                    .filter(|&sw| key(sw).2 >= n as u64)
                    .min_by_key(|&sw| key(sw));
                let large_enough = (0..SIZES.len()).filter(|&sw| SIZES[sw] >= n);
                let expected = match (with_room, large_enough.max_by_key(|&sw| key(sw))) {
                    (Some(sw), _) => {
                        compared[0] += 1;
                        Ok(Placed {
                            vnodes: first_free(Some(sw)),
                            set: format!("switch=S{sw}"),
                        })
                    }
                    (None, Some(last)) => {
                        compared[1] += 1;
                        Err(format!(
                            "Not Running: Placement set switch=S{last} has too few free resources"
                        ))
                    }
                    (None, None) => {
                        compared[2] += 1;
                        Ok(Placed {
                            vnodes: first_free(None),
                            set: "spanned".into(),
                        })
                    }
                };
                assert_eq!(
                    place(&s, &mut p, &st, &request, None),
                    expected,
                    "{request} with {busy:?} busy"
                );
            }
        }
    }
    // Every outcome was met, often.
    assert!(compared.iter().all(|&c| c >= 50), "{compared:?}");
}

/// The index of switch `sw`'s first vnode in the cluster's order.
fn first_of(sizes: &[usize], sw: usize) -> usize {
    sizes[..sw].iter().sum()
}
