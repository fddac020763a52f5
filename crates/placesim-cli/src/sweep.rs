//! `placesim sweep`: a base scenario and a grid of changes to it, run in parallel (see
//! [`placesim_run::Sweep`]); this module shows the progress bar and prints the outcome.

use crate::cli::SweepArgs;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use placesim_run::{Shard, Sweep, SweepRun};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub(crate) fn sweep_command(args: &SweepArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let sweep = Sweep::load(&args.sweep)?;
    let name = &sweep.name;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(name));
    let shard = Shard::choose(args.shard.as_deref(), |name| std::env::var(name).ok())?;
    let mine = sweep.shard(shard);
    let todo: Vec<&SweepRun> = mine
        .iter()
        .copied()
        .filter(|r| !(args.resume && r.finished(&out)))
        .collect();
    eprintln!(
        "placesim: sweep {name}: {} runs, this shard ({} of {}) {}, {} to do{}",
        sweep.runs.len(),
        shard.index,
        shard.count,
        mine.len(),
        todo.len(),
        if args.resume { " (--resume)" } else { "" }
    );
    let bar = ProgressBar::with_draw_target(Some(todo.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40} {pos}/{len} runs [{elapsed_precise}, ETA {eta}] {msg}",
    ) {
        bar.set_style(style);
    }
    let jobs_done = AtomicU64::new(0);
    let totals = sweep.execute(&todo, &out, args.threads.map(usize::from), &|summary| {
        let done = jobs_done.fetch_add(summary.jobs_run, Ordering::Relaxed) + summary.jobs_run;
        bar.set_message(format!(
            "{:.0} jobs/s",
            done as f64 / started.elapsed().as_secs_f64().max(1e-9)
        ));
        bar.inc(1);
    });
    bar.finish_and_clear();
    let totals = totals?;
    let wall = started.elapsed().as_secs_f64();
    // The dataset as it stands (every finished run, this shard's and any other's), compared
    // by configuration: what `placesim report` prints.
    match placesim_analysis::compare(&out) {
        Ok(comparison) => print!("{}", placesim_analysis::render_terminal(&comparison)),
        // A shard with no run yet, anywhere: nothing to compare.
        Err(placesim_analysis::ReportError::NoRuns(_)) => {}
        Err(e) => return Err(e.into()),
    }
    eprintln!(
        "placesim: sweep {name}: {} runs in {wall:.3} s on {} threads, {} jobs ({:.0} jobs/s aggregate); results in {}",
        totals.runs,
        totals.threads,
        totals.jobs,
        totals.jobs as f64 / wall.max(1e-9),
        out.display()
    );
    Ok(())
}
