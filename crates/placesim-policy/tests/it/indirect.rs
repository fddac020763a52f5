//! PBS's indirect resources (reservations-and-partitions.md §7): a consumable one vnode
//! points at on another (`naccelerators = "@vnA_0"`) is one pool, which a chunk on either
//! takes from; a non-consumable pointed at reads the target's value, for matching and for
//! placement-set keys.

use crate::common::{CheckingSink, workload_of};
use placesim_core::{
    Allocation, AllocationError, ClusterState, ConsumableIdx, JobId, Sharing, StateView,
};
use placesim_scenario::{Scenario, load_scenario};
use placesim_testkit::Replay;
use std::path::Path;

/// Host A with vnA_0 (4 ncpus, one accelerator, on switch s1) and vnA_1 (4 ncpus, pointing at
/// vnA_0's accelerator and switch); host B with vnB_0 (4 ncpus, its own accelerator, switch
/// s2).
fn site(extra: &str) -> Scenario {
    let text = format!(
        "[[resource]]\nname = \"naccelerators\"\ntype = \"long\"\nconsumable = true\n\
         [[resource]]\nname = \"switch\"\ntype = \"string\"\n\
         [[vnode]]\nname = \"vnA_0\"\nhost = \"A\"\nncpus = 4\n\
         resources = {{ naccelerators = 1, switch = \"s1\" }}\n\
         [[vnode]]\nname = \"vnA_1\"\nhost = \"A\"\nncpus = 4\n\
         resources = {{ naccelerators = \"@vnA_0\", switch = \"@vnA_0\" }}\n\
         [[vnode]]\nname = \"vnB_0\"\nhost = \"B\"\nncpus = 4\n\
         resources = {{ naccelerators = 1, switch = \"s2\" }}\n{extra}"
    );
    load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// A job's start, and per vnode its name, ncpus and accelerators.
type Start = (u64, Vec<(String, u64, u64)>);

/// The accelerator on host A is one: job 1, on vnA_1 because vnA_0's ncpus are all taken,
/// uses it up, so job 2 takes vnB_0's; job 3 waits for job 1 to give A's back, although
/// vnA_1 has free ncpus, and `exec_vnode` names the vnode the chunk went on.
#[test]
fn an_indirect_consumable_is_one_pool_for_both_vnodes() {
    let s = site("");
    let jobs = [
        (0, 100, 100, "select=1:ncpus=4"),
        (0, 50, 50, "select=1:ncpus=1:naccelerators=1"),
        (0, 60, 60, "select=1:ncpus=1:naccelerators=1"),
        (0, 30, 30, "select=1:ncpus=1:naccelerators=1"),
    ];
    let workload = workload_of(s.cluster.resources(), &jobs);
    let mut sink = CheckingSink::default();
    Replay::on(&workload, s.cluster.clone()).run(
        &mut placesim_policy::queue::Easy::new(placesim_policy::placement::FirstFit::default()),
        &mut sink,
    );
    let acc = s
        .cluster
        .resources()
        .consumable_idx(s.cluster.resources().lookup("naccelerators").unwrap())
        .unwrap();
    let starts: Vec<Start> = (0..jobs.len())
        .map(|i| {
            let (t, a) = &sink.starts[&JobId(i as u32)];
            let parts = a
                .parts(s.cluster.resources().n_consumables())
                .map(|(v, amounts)| {
                    (
                        s.cluster.vnode(v).name().to_owned(),
                        amounts[ConsumableIdx::NCPUS.index()],
                        amounts[acc.index()],
                    )
                })
                .collect();
            (*t, parts)
        })
        .collect();
    let on = |t: u64, v: &str, ncpus: u64, acc: u64| (t, vec![(v.to_owned(), ncpus, acc)]);
    assert_eq!(
        starts,
        [
            on(0, "vnA_0", 4, 0),
            on(0, "vnA_1", 1, 1),
            on(0, "vnB_0", 1, 1),
            // Both accelerators are in use until job 1 ends at 50.
            on(50, "vnA_1", 1, 1),
        ]
    );
}

/// The state counts the pool once, mirrors it on both vnodes, and refuses an allocation
/// whose parts on the two vnodes take more than it has together; an outage of the pointing
/// vnode leaves the pool to its target.
#[test]
fn the_state_keeps_the_pool_once() {
    let s = site("");
    let defs = s.cluster.resources();
    let acc = defs
        .consumable_idx(defs.lookup("naccelerators").unwrap())
        .unwrap();
    let n_cons = defs.n_consumables();
    let v = |name: &str| s.cluster.vnode_by_name(name).unwrap();
    let part = |a: &mut Allocation, name: &str, ncpus: u64, accelerators: u64| {
        let mut amounts = vec![0; n_cons];
        amounts[ConsumableIdx::NCPUS.index()] = ncpus;
        amounts[acc.index()] = accelerators;
        a.push(v(name), &amounts);
    };
    let mut state = ClusterState::new(s.cluster.clone());
    assert_eq!(state.free_total(acc), 2);
    assert_eq!(s.cluster.capacity_total(acc), 2);
    let mut both = Allocation::new(Sharing::Shared);
    part(&mut both, "vnA_0", 1, 1);
    part(&mut both, "vnA_1", 1, 1);
    assert!(matches!(
        state.allocate(&both),
        Err(AllocationError::Oversubscribed {
            free: 1,
            asked: 2,
            ..
        })
    ));
    let mut one = Allocation::new(Sharing::Shared);
    part(&mut one, "vnA_1", 1, 1);
    state.allocate(&one).unwrap();
    assert_eq!(
        (state.free(v("vnA_0"), acc), state.free(v("vnA_1"), acc)),
        (0, 0)
    );
    assert_eq!(state.free_total(acc), 1);
    state.release(&one);
    assert_eq!(
        (state.free(v("vnA_0"), acc), state.free(v("vnA_1"), acc)),
        (1, 1)
    );
    state.set_down(v("vnA_1")).unwrap();
    assert_eq!(state.free(v("vnA_0"), acc), 1);
    assert_eq!(state.free_total(acc), 2);
}

/// A non-consumable pointed at reads the target's value: vnA_1 is in switch s1 with vnA_0,
/// as a placement set keyed on it shows.
#[test]
fn an_indirect_non_consumable_reads_the_target() {
    let s = site("[pbs]\nnode_group_enable = true\nnode_group_key = [\"switch\"]\n");
    let switch = s.cluster.resources().lookup("switch").unwrap();
    let pointing = s.cluster.vnode_by_name("vnA_1").unwrap();
    assert_eq!(
        s.cluster
            .vnode(pointing)
            .attr(switch)
            .map(ToString::to_string),
        Some("s1".to_owned())
    );
    let placement = placesim_policy::placement::PbsPsets::new(&s.cluster, s.pbs.psets.clone());
    let sets = crate::common::set_members(&placement.pools()[0], &s.cluster);
    assert_eq!(
        sets,
        [
            (
                "switch=s1".to_owned(),
                vec!["vnA_0".to_owned(), "vnA_1".to_owned()]
            ),
            ("switch=s2".to_owned(), vec!["vnB_0".to_owned()]),
        ]
    );
}

/// What PBS's server refuses (`fix_indirectness`), refused at the value with its words.
#[test]
fn bad_indirect_resources_are_refused_with_pbs_words() {
    let one = |value: &str| {
        let text = format!(
            "[[resource]]\nname = \"naccelerators\"\ntype = \"long\"\nconsumable = true\n\
             [[vnode]]\nname = \"a\"\nncpus = 4\nresources = {{ naccelerators = 1 }}\n\
             [[vnode]]\nname = \"b\"\nncpus = 4\nresources = {{ naccelerators = {value} }}\n\
             [[vnode]]\nname = \"c\"\nncpus = 4\nresources = {{ naccelerators = \"@b\" }}\n"
        );
        match load_scenario(&text, Path::new("t.toml")) {
            Ok(_) => panic!("loaded {value}"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        one("\"@zz\""),
        "t.toml:12:31: key `vnode.resources.naccelerators`: `@zz`: Unknown node `zz`"
    );
    // c points at b, which points at a: two levels.
    assert_eq!(
        one("\"@a\""),
        "t.toml:12:31: key `vnode.resources.naccelerators`: `@a`: invalid multi-level indirect reference for resource naccelerators"
    );
    assert_eq!(
        one("\"@b\""),
        "t.toml:12:31: key `vnode.resources.naccelerators`: `@b`: invalid multi-level indirect reference for resource naccelerators"
    );
    assert_eq!(
        one("0"),
        "t.toml:16:31: key `vnode.resources.naccelerators`: `@b`: indirect target undefined on node for resource naccelerators: `b` has none (for `c`)"
    );
}

/// What indirect resources do not go with yet is refused at its first entry: PBS's
/// reservations (which would hold a shared pool on each of their vnodes) and scheduler
/// partitions.
#[test]
fn indirect_resources_refuse_what_they_do_not_go_with_yet() {
    let base = "[[resource]]\nname = \"naccelerators\"\ntype = \"long\"\nconsumable = true\n\
                [[vnode]]\nname = \"a\"\nncpus = 4\nresources = { naccelerators = 1 }\n\
                [[vnode]]\nname = \"b\"\nncpus = 4\nresources = { naccelerators = \"@a\" }\n";
    let error = |extra: &str| match load_scenario(&format!("{base}{extra}"), Path::new("t.toml")) {
        Ok(_) => panic!("loaded {extra}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        error("[[reservation]]\nname = \"M1\"\nstart = 10\nduration = 10\nhosts = [\"a\"]\n"),
        "t.toml:14:8: key `reservation`: reservations and indirect resources (`@vnode`) together are not modelled yet: a reservation would hold a shared pool on each of its vnodes"
    );
    assert_eq!(
        error("[[pbs.sched]]\nname = \"s1\"\npartition = \"P1\"\n"),
        "t.toml:14:8: key `pbs.sched`: scheduler partitions go with PBS's placement and job order; not yet with indirect resources (`@vnode`)"
    );
}
