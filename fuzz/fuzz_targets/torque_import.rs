//! Any text as each of a Torque/Moab site's files (`placesim import torque-moab`): as the
//! node list (`server_priv/nodes`, `pbsnodes -a`, a Maui resource trace), as `moab.cfg`, and
//! as the jobs (accounting logs, a Maui workload trace or Moab's workload event records)
//! beside the import crate's Torque fixture, it imports or is refused with an error, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placesim_import::{ImportOptions, TorqueInputs, files, import_torque_moab};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/placesim-import/tests/data/torque")
        .join(name)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let p = Path::new("fuzz");
    let _ = files::parse_torque_nodes(p, text);
    let _ = files::parse_moab_cfg(p, text);
    let dir = std::env::temp_dir().join(format!("placesim-fuzz-torque-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let file = dir.join("input");
    if std::fs::write(&file, text).is_err() {
        return;
    }
    let site = TorqueInputs {
        nodes: fixture("nodes"),
        moab_cfg: Some(fixture("moab.cfg")),
        accounting: vec![fixture("accounting/20170405")],
    };
    let maui = TorqueInputs {
        nodes: fixture("resources.trace"),
        moab_cfg: None,
        accounting: vec![fixture("workload.trace")],
    };
    for skip_bad_records in [false, true] {
        let options = ImportOptions { skip_bad_records };
        for inputs in [
            TorqueInputs {
                nodes: file.clone(),
                ..site.clone()
            },
            TorqueInputs {
                moab_cfg: Some(file.clone()),
                ..site.clone()
            },
            TorqueInputs {
                accounting: vec![file.clone()],
                ..site.clone()
            },
            TorqueInputs {
                accounting: vec![file.clone()],
                ..maui.clone()
            },
        ] {
            let _ = import_torque_moab(&inputs, options);
        }
    }
});
