//! `placesim import pbs` and `placesim import torque-moab`: a site's files to a scenario,
//! written, then loaded back to check that it runs.

use crate::cli::{ImportPbsArgs, ImportTorqueArgs};
use anyhow::{Context, bail};
use placesim_import::{ImportOptions, Imported, PbsInputs, TorqueInputs};
use std::path::Path;

pub(crate) fn import_pbs_command(args: &ImportPbsArgs) -> anyhow::Result<()> {
    let mut inputs = match &args.snapshot {
        Some(dir) => PbsInputs::from_snapshot(dir)?,
        None => {
            let Some(nodes) = &args.nodes else {
                bail!("give a pbs_snapshot directory, or at least --nodes and --accounting");
            };
            PbsInputs {
                nodes: nodes.clone(),
                ..PbsInputs::default()
            }
        }
    };
    if let Some(p) = &args.nodes {
        inputs.nodes.clone_from(p);
    }
    for (given, slot) in [
        (&args.server, &mut inputs.server),
        (&args.resources, &mut inputs.resources),
        (&args.sched, &mut inputs.sched),
        (&args.sched_config, &mut inputs.sched_config),
        (&args.resource_group, &mut inputs.resource_group),
        (&args.reservations, &mut inputs.reservations),
    ] {
        if given.is_some() {
            slot.clone_from(given);
        }
    }
    if let Some(acct) = &args.accounting {
        inputs.accounting = placesim_import::accounting_files(acct)?;
    }
    if inputs.accounting.is_empty() {
        bail!("no accounting log: give a snapshot with server_priv/accounting/ or --accounting");
    }
    let imported = placesim_import::import_pbs(
        &inputs,
        ImportOptions {
            skip_bad_records: args.skip_bad_records,
        },
    )?;
    write_and_check(&imported, &args.out)
}

pub(crate) fn import_torque_command(args: &ImportTorqueArgs) -> anyhow::Result<()> {
    let inputs = TorqueInputs {
        nodes: args.nodes.clone(),
        moab_cfg: args.moab_cfg.clone(),
        accounting: placesim_import::accounting_files(&args.accounting)?,
    };
    if inputs.accounting.is_empty() {
        bail!("no accounting log in {}", args.accounting.display());
    }
    let imported = placesim_import::import_torque_moab(
        &inputs,
        ImportOptions {
            skip_bad_records: args.skip_bad_records,
        },
    )?;
    write_and_check(&imported, &args.out)
}

/// Writes what an import made into `out`, then loads the scenario and reads its workload.
fn write_and_check(imported: &Imported, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (name, contents) in &imported.files {
        let path = out.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
    }
    // What was written must load and its workload read: anything the scenario layer refuses
    // is the import's fault, and is caught here rather than at the first run.
    let scenario_path = out.join("scenario.toml");
    let scenario = placesim_run::read_scenario(&scenario_path)
        .with_context(|| "the imported scenario does not load (an import bug; please report it)")?;
    let workload = scenario
        .workload()
        .with_context(|| "the imported workload does not read (an import bug; please report it)")?;
    let c = &imported.counts;
    println!(
        "placesim: imported {} vnodes, {} jobs to replay and {} running at the start ({} not replayed, {} bad lines skipped) into {}",
        scenario.cluster.vnodes().len(),
        // The workload's jobs include those running at the start, its first ones.
        workload.trace.workload.jobs().len() - scenario.running.len(),
        c.running_at_start,
        c.skipped.values().sum::<u64>(),
        c.bad_lines,
        scenario_path.display()
    );
    println!(
        "Run it: placesim run --scenario {}; the import report: {}",
        scenario_path.display(),
        out.join("import-report.md").display()
    );
    println!(
        "What really happened, as a run to compare with: placesim run --scenario {} --as-recorded",
        scenario_path.display()
    );
    Ok(())
}
