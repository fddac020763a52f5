//! `placesim import pbs`: a PBS site's files to a scenario, written, then loaded back to
//! check that it runs.

use crate::cli::ImportPbsArgs;
use anyhow::{Context, bail};
use placesim_import::{ImportOptions, PbsInputs};

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
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    for (name, contents) in &imported.files {
        let path = args.out.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
    }
    // What was written must load and its workload read: anything the scenario layer refuses
    // is the import's fault, and is caught here rather than at the first run.
    let scenario_path = args.out.join("scenario.toml");
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
        args.out.join("import-report.md").display()
    );
    Ok(())
}
