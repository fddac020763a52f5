//! Any text given to the PBS accounting reader: see `placesim_fuzz::pbs_accounting` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::pbs_accounting(data);
});
