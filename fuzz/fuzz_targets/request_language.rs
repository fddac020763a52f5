//! Any text as a requests file, and each of its lines as a request, a Moab node-set, a size, a
//! duration and a boolean: every parser returns a value or an error naming the place, never
//! panics or overflows the stack; a request that parses prints to a form that parses back to
//! it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_core::{ResourceDefs, ResourceKind};
use placesim_request::{parse_bool, parse_duration, parse_nodeset, parse_request, parse_size};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut defs = ResourceDefs::default();
    for (name, kind, consumable) in [
        ("switch", ResourceKind::String, false),
        ("color", ResourceKind::String, false),
        ("features", ResourceKind::StringArray, false),
        ("bigmem", ResourceKind::Boolean, false),
        ("speed", ResourceKind::Float, false),
        ("scratch", ResourceKind::Size, false),
        ("licenses", ResourceKind::Float, true),
    ] {
        let _ = defs.define(name, kind, consumable);
    }
    if let Err(e) = placesim_scenario::parse_requests_file(text, Path::new("fuzz.req"), &defs) {
        assert!(e.to_string().starts_with("fuzz.req"), "{e}");
    }
    for line in text.lines() {
        let _ = (
            parse_nodeset(line, &defs),
            parse_size(line),
            parse_duration(line),
            parse_bool(line),
        );
        if let Ok(request) = parse_request(line, &defs) {
            let printed = request.to_string();
            assert_eq!(parse_request(&printed, &defs).as_ref(), Ok(&request), "{printed}");
            let _ = placesim_request::lower(&request, &defs);
        }
    }
});
