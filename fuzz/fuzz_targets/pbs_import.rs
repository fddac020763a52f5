//! Any text as each of a PBS site's files (`placesim import pbs`): the node list (text and
//! JSON), qmgr output, `list sched`, sched_config, resourcedef and `pbs_rstat -f` are read
//! or refused with an error, and as an accounting log, or as the reservations, beside the
//! import crate's fixture site it imports or is refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_import::{ImportOptions, PbsInputs, files, import_pbs};
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/placesim-import/tests/data/snap")
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let p = Path::new("fuzz");
    let _ = files::parse_pbsnodes(p, text);
    let _ = files::parse_qmgr(p, text);
    let _ = files::parse_list_sched(p, text);
    let _ = files::parse_sched_config(p, text);
    let _ = files::parse_resourcedef(p, text);
    let _ = files::parse_rstat(p, text);
    let dir = std::env::temp_dir().join(format!("placesim-fuzz-import-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let log = dir.join("log");
    if std::fs::write(&log, text).is_err() {
        return;
    }
    let Ok(mut inputs) = PbsInputs::from_snapshot(&fixture()) else {
        return;
    };
    let site_logs = std::mem::take(&mut inputs.accounting);
    for skip_bad_records in [false, true] {
        inputs.accounting = vec![log.clone()];
        let _ = import_pbs(&inputs, ImportOptions { skip_bad_records });
    }
    inputs.accounting = site_logs;
    inputs.reservations = Some(log.clone());
    let _ = import_pbs(&inputs, ImportOptions::default());
});
