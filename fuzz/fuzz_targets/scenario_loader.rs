//! Any text given to the scenario loader: see `placesim_fuzz::scenario_loader` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::scenario_loader(data);
});
