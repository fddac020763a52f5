//! How `[moab]` parameters combine.

use placesim_scenario::load_scenario;
use std::path::Path;

fn is_optional(moab: &str) -> bool {
    let text = format!("[[class]]\nname = \"n\"\ncount = 2\n[moab]\n{moab}");
    load_scenario(&text, Path::new("t.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .moab
        .nodesets
        .is_optional
}

/// NODESETDELAY > 0 makes sets mandatory when NODESETISOPTIONAL is not given. When both are,
/// the explicit NODESETISOPTIONAL wins (the spec's choice, Q8); with
/// `isoptional_config_order`, the line that comes later does, as in moab.cfg.
#[test]
fn nodeset_delay_and_is_optional_explicit_or_in_config_order() {
    assert!(is_optional(""));
    assert!(!is_optional("nodeset_delay = 60\n"));
    assert!(is_optional("nodeset_delay = 0\n"));
    assert!(is_optional(
        "nodeset_is_optional = true\nnodeset_delay = 60\n"
    ));
    assert!(is_optional(
        "nodeset_delay = 60\nnodeset_is_optional = true\n"
    ));
    let ordered = "isoptional_config_order = true\n";
    assert!(!is_optional(&format!(
        "{ordered}nodeset_is_optional = true\nnodeset_delay = 60\n"
    )));
    assert!(is_optional(&format!(
        "{ordered}nodeset_delay = 60\nnodeset_is_optional = true\n"
    )));
    assert!(is_optional(&format!(
        "{ordered}nodeset_is_optional = true\nnodeset_delay = 0\n"
    )));
    assert!(!is_optional(&format!(
        "{ordered}nodeset_delay = 60\nnodeset_is_optional = false\n"
    )));
}

/// `check` lists the node sets the Moab placement builds, as a run uses them: the vnode
/// named GLOBAL belongs to every feature set (Moab's global node), so it is listed in each.
#[test]
fn check_lists_the_global_vnode_in_every_feature_set() {
    let text = "[[resource]]\nname = \"features\"\ntype = \"string_array\"\n\
        [[class]]\nname = \"a\"\ncount = 2\nresources = { features = [\"fa\"] }\n\
        [[class]]\nname = \"b\"\ncount = 2\nresources = { features = [\"fb\"] }\n\
        [[vnode]]\nname = \"GLOBAL\"\n\
        [moab]\nnodeset_policy = \"ONEOF\"\nnodeset_attribute = \"FEATURE\"\n";
    let s = load_scenario(text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"));
    let out = placesim_scenario::describe(&s);
    let sets: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("moab node sets"))
        .skip(1)
        .collect();
    assert_eq!(
        sets,
        [
            "    fa: 3 vnodes a[1-2],GLOBAL",
            "    fb: 3 vnodes b[1-2],GLOBAL"
        ],
        "{out}"
    );
}

/// Moab's priority (queue-disciplines.md §3.2): each subcomponent weighted and capped, each
/// component weighted and capped, the total clipped to [1, 1e9]. A job of 4 ncpus and 1 h
/// requested, queued 900 s: QUEUETIME 15 min, XFACTOR (900 + 3600) / 3600 = 1.25, PROC 4.
#[test]
fn priority_weights_and_caps_as_moab_computes_them() {
    use placesim_core::{
        Chunk, ConsumableIdx, Job, JobId, Request, RequestId, SimDuration, SimTime, Workload,
    };
    use placesim_policy::queue::TermValues;
    let job = Job::new(
        1,
        SimTime(100),
        SimDuration(3600),
        SimDuration(3600),
        4,
        RequestId(0),
    );
    let mut amounts = vec![0; 3];
    amounts[ConsumableIdx::NCPUS.index()] = 4;
    let workload = Workload::new(
        vec![job],
        vec![Request::from_chunks(vec![Chunk::new(1, amounts)])],
    )
    .unwrap();
    let priority = |table: &str| {
        let text = format!("[[class]]\nname = \"n\"\ncount = 2\n[moab.priority]\n{table}");
        let s = load_scenario(&text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"));
        let formula = s.moab.order.formula.expect("a priority formula");
        formula.value(&TermValues::at(&workload, JobId(0), SimTime(1000)))
    };
    // Moab's defaults: minutes queued.
    assert_eq!(priority(""), 15.0);
    assert_eq!(
        priority("xfactorweight = 10\nprocweight = 2\n"),
        15.0 + 12.5 + 8.0
    );
    // Subcomponent and component caps.
    assert_eq!(priority("queuetimecap = 10\n"), 10.0);
    assert_eq!(priority("xfactorweight = 10\nservcap = 20\n"), 20.0);
    assert_eq!(
        priority("servweight = 2\nprocweight = 3\nrescap = 5\n"),
        35.0
    );
    // Clipped to 1 unless negative priorities are enabled.
    assert_eq!(priority("queuetimeweight = -1\n"), 1.0);
    assert_eq!(
        priority("queuetimeweight = -1\nenablenegjobpriority = true\n"),
        -15.0
    );
    // XFMINWCLIMIT raises a short walltime's denominator: (900 + 3600) / 9000 = 0.5.
    assert_eq!(
        priority("queuetimeweight = 0\nxfactorweight = 10\nxfminwclimit = 9000\n"),
        5.0
    );
}
