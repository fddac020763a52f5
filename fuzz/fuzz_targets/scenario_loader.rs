//! Any text given to the scenario loader: it must return a scenario or an error naming the
//! place, never panic; a scenario must describe itself and draw its outages.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_scenario::{describe, load_scenario};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match load_scenario(text, Path::new("fuzz.toml")) {
        Ok(scenario) => {
            let _ = describe(&scenario);
            let empty = placesim_core::Workload::new(Vec::new(), Vec::new());
            if let Ok(w) = empty {
                if let Err(e) = scenario.outages(&w) {
                    assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
                }
            }
        }
        Err(e) => {
            assert!(e.to_string().starts_with("fuzz.toml"), "{e}");
        }
    }
});
