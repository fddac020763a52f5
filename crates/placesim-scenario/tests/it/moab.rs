//! How `[moab]` parameters combine.

use placesim_scenario::load_scenario;
use std::path::Path;

fn is_optional(moab: &str) -> bool {
    let text = format!("[[class]]\nname = \"n\"\ncount = 2\n[moab]\n{moab}");
    load_scenario(&text, Path::new("t.toml"))
        .unwrap_or_else(|e| panic!("{e}"))
        .moab
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
