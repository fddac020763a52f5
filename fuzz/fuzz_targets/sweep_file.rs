//! Any text as a sweep file over a small valid base scenario: see `placesim_fuzz::sweep_file` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

/// A directory of this process's own for the files a check writes.
fn scratch(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("placesim-fuzz-{what}-{}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::sweep_file(data, &scratch("sweep"));
});
