//! Any text as a `job_sort_formula`: see `placesim_fuzz::job_sort_formula` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::job_sort_formula(data);
});
