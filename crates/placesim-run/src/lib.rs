//! Runs and sweeps as library values: a validated [`Plan`] (a loaded workload, a built
//! cluster, discipline and placement, the runtime model, outages and the metrics settings),
//! its execution into Parquet files ([`execute`]), and sweeps of scenario variants run in
//! parallel ([`Sweep`]).
//!
//! Nothing here prints: progress goes through callbacks, and what a front end reports (how a
//! trace's records were accounted for, how requests were assigned, what the run cost) comes
//! back in the values. Every failure is a [`RunError`] that names the file or run it is
//! about.

mod error;
mod execute;
mod plan;
mod sweep;

pub use error::RunError;
pub use execute::{Clock, Executed, Output, execute};
pub use plan::{
    Plan, RequestSources, plain_plan, plan_of_scenario, read_scenario, read_scenario_for_run,
    trace_stem,
};
pub use sweep::{MAX_SWEEP_RUNS, Shard, Sweep, SweepRun, SweepTotals};

use std::path::Path;

/// Writes `bytes` to `path` through a temporary name beside it (`path` + `.tmp`), then renames
/// it into place, so that no reader ever sees half a file: the sweep's marks and lists, and
/// `placesim gen`'s outputs.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).map_err(RunError::io("writing", &tmp))?;
    std::fs::rename(&tmp, path).map_err(RunError::io("renaming", &tmp))
}
