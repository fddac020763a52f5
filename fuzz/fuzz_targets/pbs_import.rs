//! Any text as each of a PBS site's files: see `placesim_fuzz::pbs_import` for what is checked.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

/// The project's root, where the import crate's fixture sites are.
fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// A directory of this process's own for the files a check writes.
fn scratch(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("placesim-fuzz-{what}-{}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    placesim_fuzz::pbs_import(data, &repo(), &scratch("import"));
});
