//! Any text as a sweep file over a small valid base scenario: see `placesim_fuzz::sweep_file` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A directory of this process's own holding the base scenario, made once.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("placesim-fuzz-sweep-{}", std::process::id()));
        placesim_fuzz::sweep_base(&dir);
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::sweep_file(data, dir());
});
