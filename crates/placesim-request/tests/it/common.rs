use placesim_core::{ResourceDefs, ResourceKind};

/// The built-ins plus the resources the design documents use.
pub fn defs() -> ResourceDefs {
    let mut d = ResourceDefs::default();
    for (name, kind, consumable) in [
        ("color", ResourceKind::String, false),
        ("shape", ResourceKind::String, false),
        ("model", ResourceKind::String, false),
        ("switch", ResourceKind::String, false),
        ("features", ResourceKind::StringArray, false),
        ("bigmem", ResourceKind::Boolean, false),
        ("speed", ResourceKind::Float, false),
        ("gen", ResourceKind::Long, false),
        ("scratch", ResourceKind::Size, false),
        ("licenses", ResourceKind::Float, true),
    ] {
        d.define(name, kind, consumable).unwrap();
    }
    d
}
