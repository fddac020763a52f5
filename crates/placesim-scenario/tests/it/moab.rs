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
