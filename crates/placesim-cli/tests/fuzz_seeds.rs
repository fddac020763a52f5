//! The fuzz targets' checks (`fuzz/src/lib.rs`) on every seed in `fuzz/seeds/`, and on cuts
//! and bit flips of each: the fuzz crate builds only with the nightly toolchain and is not
//! part of the workspace, so this is what keeps its checks building with the crates they
//! call, and holds the inputs the fuzzers start from to the promises the fuzzers check.

#[path = "../../../fuzz/src/lib.rs"]
mod checks;

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory of the test's own for what a check writes, empty at the start.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("placesim-fuzz-seeds-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Each seed of `fuzz/seeds/<dir>`, whole, cut short at a third and at two thirds, and
/// with one byte's bits flipped in the middle (what a fuzzer's first mutations make of it):
/// `check` is run on every one. Returns how many seeds there were.
fn on_seeds(dir: &str, mut check: impl FnMut(&[u8])) -> usize {
    let seeds = repo().join("fuzz/seeds").join(dir);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&seeds)
        .unwrap_or_else(|e| panic!("{}: {e}", seeds.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    paths.sort();
    for path in &paths {
        let seed = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let n = seed.len();
        let mut flipped = seed.clone();
        if let Some(byte) = flipped.get_mut(n / 2) {
            *byte = !*byte;
        }
        for input in [&seed[..], &seed[..n / 3], &seed[..2 * n / 3], &flipped[..]] {
            check(input);
        }
    }
    paths.len()
}

/// Every target's seed directory holds seeds, and every seed passes its target's checks.
#[test]
fn every_fuzz_seed_passes_its_targets_checks() {
    let repo = repo();
    let sweep_dir = scratch("sweep");
    checks::sweep_base(&sweep_dir);
    let import_dir = scratch("import");
    let torque_dir = scratch("torque");
    let recorded_dir = scratch("recorded");
    let counts = [
        ("swf", on_seeds("swf", checks::swf_reader)),
        ("scenario", on_seeds("scenario", checks::scenario_loader)),
        ("requests", on_seeds("requests", checks::request_language)),
        (
            "sweep",
            on_seeds("sweep", |d| checks::sweep_file(d, &sweep_dir)),
        ),
        ("formula", on_seeds("formula", checks::job_sort_formula)),
        ("accounting", on_seeds("accounting", checks::pbs_accounting)),
        (
            "pbs_import",
            on_seeds("pbs_import", |d| checks::pbs_import(d, &repo, &import_dir)),
        ),
        (
            "torque",
            on_seeds("torque", |d| checks::torque_import(d, &repo, &torque_dir)),
        ),
        ("fairshare", on_seeds("fairshare", checks::fairshare_tree)),
        (
            "recorded",
            on_seeds("recorded", |d| checks::recorded_file(d, &recorded_dir)),
        ),
    ];
    for dir in [&sweep_dir, &import_dir, &torque_dir, &recorded_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
    for (dir, n) in counts {
        assert!(n > 0, "fuzz/seeds/{dir} holds no seed");
    }
}
