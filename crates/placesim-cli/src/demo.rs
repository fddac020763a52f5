//! `placesim demo`: the question placesim exists for, answered on shipped data in seconds.
//! The shipped KTH-SP2 trace on a cluster of three node generations, without grouping and
//! under PBS placement sets and Moab node sets (`scenarios/demo-sweep.toml` over
//! `scenarios/demo.toml`), three replicates each; then a short answer, the comparison table
//! and the HTML report.

use crate::cli::DemoArgs;
use anyhow::Context as _;
use placesim_analysis::Comparison;
use placesim_metrics::schema::summary;
use placesim_run::{Shard, Sweep};
use std::time::Instant;

/// The demo's inputs, embedded so that the demo runs from any directory; written under
/// `OUT/inputs/` as they sit in the repository, so the sweep can be run again from there.
const INPUTS: [(&str, &[u8]); 3] = [
    (
        "scenarios/demo.toml",
        include_bytes!("../../../scenarios/demo.toml"),
    ),
    (
        "scenarios/demo-sweep.toml",
        include_bytes!("../../../scenarios/demo-sweep.toml"),
    ),
    (
        "workloads/KTH-SP2-1996-2.1-cln.swf.gz",
        include_bytes!("../../../workloads/KTH-SP2-1996-2.1-cln.swf.gz"),
    ),
];

/// What each configuration of the sweep is, in words, by its label.
const DESCRIPTIONS: [(&str, &str); 5] = [
    ("config=none", "no grouping (EASY, first fit)"),
    ("config=pbs-model", "PBS placement sets on model"),
    ("config=moab-bestfit", "Moab ONEOF node sets, BESTFIT"),
    ("config=moab-minloss", "Moab ONEOF node sets, MINLOSS"),
    (
        "config=pbs-model-greedy",
        "PBS placement sets, greedy (PBS's default)",
    ),
];

pub(crate) fn demo_command(args: &DemoArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let _warm = placesim_metrics::warm_up();
    let inputs = args.out.join("inputs");
    for (rel, bytes) in INPUTS {
        let path = inputs.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    let sweep = Sweep::load(&inputs.join("scenarios/demo-sweep.toml"))?;
    let runs = sweep.shard(Shard::ALL);
    eprintln!(
        "placesim: demo: KTH-SP2 on three node generations, {} configurations × 3 replicates",
        DESCRIPTIONS.len()
    );
    let totals = sweep.execute(&runs, &args.out, None, &|_| {})?;
    let html = args.out.join("report.html");
    let (comparison, table) = placesim_analysis::html_report(&args.out, &html)?;
    print!("{}", headline(&comparison));
    println!();
    print!("{table}");
    println!(
        "Report: {}; results: {}/config=*/replicate=*/*.parquet; inputs: {}",
        html.display(),
        args.out.display(),
        inputs.display()
    );
    eprintln!(
        "placesim: demo: {} runs, {} jobs, in {:.1} s on {} threads",
        totals.runs,
        totals.jobs,
        started.elapsed().as_secs_f64(),
        totals.threads
    );
    Ok(())
}

/// The short answer: each configuration against the first (no grouping), in work per hour,
/// mean wait and the share of jobs mixing node generations.
pub(crate) fn headline(c: &Comparison) -> String {
    let Some(base) = c.configs.first() else {
        return String::new();
    };
    let work = c.changes_against_first(summary::WORK_CORE_HOURS_PER_HOUR.def.name);
    let wait = c.changes_against_first(summary::WINDOW_WAIT_MEAN_S.def.name);
    let described = |config: &str| {
        DESCRIPTIONS
            .iter()
            .find(|(label, _)| *label == config)
            .map_or(config, |(_, words)| words)
            .to_owned()
    };
    let mut out = format!(
        "Against {}, means of {} replicates:\n",
        described(&base.config),
        base.runs
    );
    for (i, (work, wait)) in work.iter().zip(&wait).enumerate() {
        out += &format!(
            "  {:<42} work per hour {} %, mean wait {} %, jobs mixing generations {:.0} % → {:.0} %\n",
            described(&work.name),
            signed(work.percent, 1),
            signed(wait.percent, 0),
            100.0 * c.speeds_mixed.first().copied().unwrap_or(0.0),
            100.0 * c.speeds_mixed.get(i + 1).copied().unwrap_or(0.0),
        );
    }
    out
}

/// `+4.0` or `−73`: a change with its sign, the minus as a minus sign.
pub(crate) fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{value:+.decimals$}");
    text.replacen('-', "−", 1)
}
