use crate::load_file;
use placesim_core::{ConsumableIdx, VnodeId};
use placesim_scenario::{Discipline, PriorityType, describe, hostlist};

#[test]
fn color_shape_check_prints_the_seed_000_sets() {
    let s = load_file("color-shape.toml");
    assert_eq!(s.cluster.n_vnodes(), 8);
    assert!(s.pbs.psets.node_group_enable);
    let text = describe(&s);
    for line in [
        "  color (server node_group_key, enabled):",
        "    color=blue: 4 vnodes node[1-4]; 4 ncpus, 16gb mem",
        "    color=red: 4 vnodes node[5-8]; 4 ncpus, 16gb mem",
        "  shape (for place=group= or group=):",
        "    shape=square: 4 vnodes node[1-2,5-6]; 4 ncpus, 16gb mem",
        "    shape=triangle: 4 vnodes node[3-4,7-8]; 4 ncpus, 16gb mem",
        "  blue-square: 2 vnodes node[1-2]; ncpus=1, mem=4gb, ngpus=0, speed=1, color=blue, shape=square",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
}

#[test]
fn two_switch_has_the_seed_002_sets_and_a_runnable_workload() {
    let s = load_file("two-switch.toml");
    let defs = s.cluster.resources();
    let switch = defs.lookup("switch").unwrap();
    let all = (0..s.cluster.n_vnodes()).map(VnodeId::from_index);
    let sets = s.cluster.sets_by(switch, all, false);
    let sizes: Vec<(&str, usize)> = sets.iter().map(|(v, m)| (v.as_str(), m.len())).collect();
    assert_eq!(sizes, vec![("Switch1", 10), ("Switch2", 14)]);
    assert_eq!(s.cluster.capacity_total(ConsumableIdx::NCPUS), 192);
    assert_eq!(s.run.discipline, Discipline::EASY);
    let w = s.workload().unwrap();
    // Every record is a job (KTH-SP2 fits in 192 ncpus), and the rules took their share.
    assert_eq!(w.trace.workload.jobs().len(), 27992);
    assert_eq!(w.trace.skipped.total(), 0);
    assert!(
        w.by_rule[0] > 5000 && w.by_rule[1] > 1000,
        "{:?}",
        w.by_rule
    );
}

#[test]
fn moab_nested_lists_sets_smallest_first() {
    let s = load_file("moab-nested.toml");
    assert_eq!(s.cluster.n_vnodes(), 16);
    assert!(!s.moab.nodesets.is_optional);
    assert_eq!(s.moab.nodesets.priority_type, PriorityType::FirstFit);
    assert_eq!(s.moab.list.len(), 15);
    let text = describe(&s);
    let order: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("moab node sets"))
        .skip(1)
        .map(|l| l.trim().split(':').next().unwrap())
        .collect();
    assert_eq!(
        order,
        s.moab.list.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(text.contains("    quad1b: 4 vnodes n[5-8]\n"), "{text}");
    assert!(text.contains("    sixteen: 16 vnodes n[1-16]\n"), "{text}");
}

#[test]
fn hostlists_compress_ranges_and_keep_odd_names() {
    assert_eq!(
        hostlist(&["n1", "n2", "n3", "n7", "m", "n9"]),
        "n[1-3,7,9],m"
    );
    assert_eq!(hostlist(&["a01", "a02"]), "a01,a02");
    assert_eq!(hostlist(&["x5"]), "x5");
}

#[test]
fn moab_procspeed_lists_one_set_per_speed_slowest_first() {
    let s = load_file("moab-procspeed.toml");
    assert_eq!(s.moab.nodesets.priority_type, PriorityType::BestResource);
    let text = describe(&s);
    let sets: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("moab node sets"))
        .skip(1)
        .take(3)
        .collect();
    assert_eq!(
        sets,
        [
            "    procspeed=1: 144 vnodes g[11-19,110-199,1100-1144]",
            "    procspeed=1.5: 144 vnodes g[21-29,210-299,2100-2144]",
            "    procspeed=2.25: 142 vnodes g[31-39,310-399,3100-3142]",
        ]
    );
}
