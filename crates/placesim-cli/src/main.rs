//! `placesim`: the command-line front end.
//!
//! Parsing happens in two stages: clap turns flags into [`cli::Cli`] (validation only), and
//! each command turns that into a validated plan (a loaded trace, a built cluster and policy)
//! before the first event runs. Only this crate prints, shows progress bars, or uses anyhow.

mod check;
mod cli;
mod demo;
mod gen_cmd;
mod run;
mod sweep;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Run(args) => run::run_command(&args),
        cli::Command::Demo(args) => demo::demo_command(&args),
        cli::Command::Check(args) => check::check_command(&args),
        cli::Command::Gen(args) => gen_cmd::gen_command(&args),
        cli::Command::Sweep(args) => sweep::sweep_command(&args),
        cli::Command::Report(args) => report_command(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("placesim: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `placesim report`: the comparison table on stdout, the HTML report beside the results.
fn report_command(args: &cli::ReportArgs) -> anyhow::Result<()> {
    let html = args
        .html
        .clone()
        .unwrap_or_else(|| args.results.join("report.html"));
    let (comparison, table) = placesim_analysis::html_report(&args.results, &html)?;
    print!("{table}");
    eprintln!(
        "placesim: {} runs in {} configurations compared; report: {}",
        comparison.runs,
        comparison.configs.len(),
        html.display()
    );
    Ok(())
}
