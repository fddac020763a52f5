//! `placesim`: the command-line front end.
//!
//! Parsing happens in two stages: clap turns flags into [`cli::Cli`] (validation only), and
//! each command turns that into a validated plan (a loaded trace, a built cluster and policy)
//! before the first event runs. Only this crate prints, shows progress bars, or uses anyhow.

mod check;
mod cli;
mod demo;
mod gen_cmd;
mod import;
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
        cli::Command::Import(cli::ImportCommand::Pbs(args)) => import::import_pbs_command(&args),
        cli::Command::Import(cli::ImportCommand::TorqueMoab(args)) => {
            import::import_torque_command(&args)
        }
        cli::Command::Export(cli::ExportCommand::PbsAccounting(args)) => {
            placesim_analysis::pbs_accounting(&args.run, args.epoch, &args.queue)
                .map_err(anyhow::Error::from)
                .and_then(|text| {
                    std::fs::write(&args.out, text)
                        .map_err(|e| anyhow::anyhow!("writing {}: {e}", args.out.display()))
                })
        }
        cli::Command::Explain(args) => placesim_analysis::explain(&args.run, args.job)
            .map(|text| print!("{text}"))
            .map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("placesim: error: {}", chain_text(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each once: library errors already quote their cause in their
/// own text, so a cause the text so far holds is not repeated.
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// `placesim report`: the comparison table on stdout, the HTML report beside the results.
fn report_command(args: &cli::ReportArgs) -> anyhow::Result<()> {
    let html = args
        .html
        .clone()
        .unwrap_or_else(|| args.results.join("report.html"));
    let window = args.window.as_deref().map(parse_window).transpose()?;
    let (comparison, table) =
        placesim_analysis::html_report_over(&args.results, &html, window, args.explain)?;
    print!("{table}");
    eprintln!(
        "placesim: {} runs in {} configurations compared; report: {}",
        comparison.runs,
        comparison.configs.len(),
        html.display()
    );
    Ok(())
}

/// `START..END`, each seconds or `[[[DD:]HH:]MM:]SS`, START before END.
fn parse_window(text: &str) -> anyhow::Result<(u64, u64)> {
    let parsed = text.split_once("..").and_then(|(a, b)| {
        Some((
            placesim_request::parse_duration(a.trim())?,
            placesim_request::parse_duration(b.trim())?,
        ))
    });
    match parsed {
        Some((start, end)) if start < end => Ok((start, end)),
        _ => anyhow::bail!(
            "--window `{text}`: expected START..END, each seconds or [[[DD:]HH:]MM:]SS, START before END"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::chain_text;

    /// An error whose text quotes its cause, under a context that does not.
    #[derive(Debug, thiserror::Error)]
    #[error("out.parquet: {source}")]
    struct Quoting {
        source: std::io::Error,
    }

    #[test]
    fn causes_already_quoted_are_not_repeated() {
        let inner = Quoting {
            source: std::io::Error::other("disk full"),
        };
        let err = anyhow::Error::new(inner).context("writing results");
        assert_eq!(chain_text(&err), "writing results: out.parquet: disk full");
    }
}
