//! `placesim check`: validate a scenario and show what it describes.

use crate::cli::CheckArgs;
use anyhow::Context as _;
use placesim_scenario::Scenario;
use std::path::Path;

/// Reads and checks a scenario file.
pub(crate) fn load(path: &Path) -> anyhow::Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading scenario {}", path.display()))?;
    Ok(placesim_scenario::load_scenario(&text, path)?)
}

pub(crate) fn check_command(args: &CheckArgs) -> anyhow::Result<()> {
    let scenario = load(&args.scenario)?;
    print!("{}", placesim_scenario::describe(&scenario));
    if let Some(w) = &scenario.workload {
        println!(
            "workload: {} ({} request rules{})",
            w.trace.display(),
            w.rules.len(),
            w.requests_file
                .as_ref()
                .map(|f| format!(", requests file {}", f.display()))
                .unwrap_or_default()
        );
    }
    println!("ok: {} is valid", args.scenario.display());
    Ok(())
}
