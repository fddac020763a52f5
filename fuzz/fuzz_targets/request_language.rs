//! Any text as a requests file, and each line as a request and its parts: see `placesim_fuzz::request_language` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::request_language(data);
});
