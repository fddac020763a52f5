//! `placesim demo`: FCFS against EASY on the shipped KTH-SP2 trace, with a report.

use crate::cli::DemoArgs;
use crate::run::{execute_reported, print_figures, report_trace};
use anyhow::Context as _;
use placesim_policy::Discipline;
use placesim_workload::{SwfOptions, TraceFormat};
use std::path::Path;
use std::time::Instant;

/// The demo's trace, embedded so that the demo runs from any directory.
const KTH_SP2: &[u8] = include_bytes!("../../../workloads/KTH-SP2-1996-2.1-cln.swf.gz");
const KTH_NAME: &str = "KTH-SP2-1996-2.1-cln.swf.gz";

pub(crate) fn demo_command(args: &DemoArgs) -> anyhow::Result<()> {
    let _warm = placesim_metrics::warm_up();
    let resources = placesim_core::ResourceDefs::default();
    let reader = std::io::BufReader::new(flate2_reader(KTH_SP2));
    let path = Path::new("workloads").join(KTH_NAME);
    let trace = TraceFormat::Swf
        .read(reader, &path, &SwfOptions::default(), &resources)
        .context("reading the embedded KTH-SP2 trace")?;
    report_trace(&trace);
    let mut plan = placesim_run::plain_plan(
        trace,
        1,
        Discipline::Fcfs,
        "KTH-SP2-1996-2.1-cln".to_owned(),
    )?;
    // The demo compares the two textbook disciplines, whatever else the list holds.
    for policy in [Discipline::Fcfs, Discipline::EASY] {
        let started = Instant::now();
        let out = args.out.join(policy.to_string());
        plan.discipline = policy;
        let summary = execute_reported(&plan, placesim_run::Clock::Timed, &out)?;
        print_figures(&summary, started.elapsed());
    }
    let table = placesim_analysis::report(&args.out)?;
    println!("{table}");
    // The comparison report over the same files: the table with the window metrics, and the
    // HTML with its plots.
    let html = args.out.join("report.html");
    let (_, comparison) = placesim_analysis::html_report(&args.out, &html)?;
    println!("{comparison}");
    println!(
        "Results: {}/*/jobs.parquet, summary.parquet, timeseries.parquet; reports: {} and {}",
        args.out.display(),
        args.out.join("report.md").display(),
        html.display()
    );
    Ok(())
}

fn flate2_reader(bytes: &'static [u8]) -> impl std::io::Read {
    placesim_workload::swf::gunzip(bytes)
}
