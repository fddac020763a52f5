//! Any text as a sweep file over a small valid base scenario: loading it returns the grid or
//! an error naming the sweep or the base, never panics, and never builds a grid past the
//! limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A directory holding `base.toml`, made once per process.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("placesim-fuzz-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(
            dir.join("base.toml"),
            "[[class]]\nname = \"n\"\ncount = 4\nncpus = 2\n[workload.generator]\njobs = 20\nstreams = \"typeless\"\n",
        )
        .expect("base scenario");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let path = dir().join("fuzz.sweep.toml");
    std::fs::write(&path, data).expect("write input");
    match placesim_run::Sweep::load(&path) {
        Ok(sweep) => assert!(sweep.runs.len() as u64 <= placesim_run::MAX_SWEEP_RUNS),
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("fuzz.sweep.toml") || text.contains("base.toml"), "{text}");
        }
    }
});
