//! Any bytes as a recorded.tsv: see `placesim_fuzz::recorded_file` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

/// A directory of this process's own for the file each input is written to.
fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("placesim-fuzz-recorded-{}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::recorded_file(data, &scratch());
});
