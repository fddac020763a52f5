//! `placesim run`, and what it shares with the demo: reading input, executing a plan with a
//! progress bar, and printing what happened.

use crate::cli::{MachineArgs, RunArgs, WalltimeArg};
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use placesim_core::{Progress, WalltimePolicy};
use placesim_metrics::RunSummary;
use placesim_policy::Discipline;
use placesim_run::{Clock, Executed, Output, Plan, plain_plan, trace_stem};
use placesim_workload::{SwfOptions, Trace};
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) fn run_command(args: &RunArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut plan = match &args.scenario {
        Some(path) => scenario_plan(path, args)?,
        None => trace_plan(args)?,
    };
    // polars' one-time setup runs on the core the single-threaded simulation leaves idle.
    let _warm = placesim_metrics::warm_up();
    eprintln!(
        "placesim: input read in {:.3} s",
        started.elapsed().as_secs_f64()
    );
    plan.check_invariants |= args.check_invariants;
    plan.as_recorded = args.as_recorded;
    apply_metrics_args(&mut plan.metrics, args)?;
    let clock = if args.no_timing {
        Clock::Untimed
    } else {
        Clock::Timed
    };
    let summary = execute_reported(&plan, clock, &args.out)?;
    print!("{}", placesim_analysis::render_table(&[row_of(&summary)]));
    print_figures(&summary, started.elapsed());
    // The process ends here, and its memory goes back to the system at once: freeing the plan
    // piece by piece (a large cluster's names, the workload's jobs and requests) took 5 ms of
    // nodesets-bench.toml's run after its last line was printed. Nothing in a plan writes or
    // holds anything outside the process.
    std::mem::forget(plan);
    Ok(())
}

fn walltime_of(arg: WalltimeArg) -> WalltimePolicy {
    match arg {
        WalltimeArg::Kill => WalltimePolicy::Kill,
        WalltimeArg::Overrun => WalltimePolicy::Overrun,
    }
}

/// `discipline` with `--backfill-depth`, if given.
fn with_depth(discipline: Discipline, depth: Option<u32>) -> anyhow::Result<Discipline> {
    match depth {
        Some(depth) => discipline
            .with_backfill_depth(depth)
            .map_err(|e| anyhow::anyhow!("--backfill-depth {depth}: {e}")),
        None => Ok(discipline),
    }
}

/// `run --trace`: the plain SWF machine.
fn trace_plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let (Some(path), Some(policy)) = (&args.trace, args.policy) else {
        anyhow::bail!("give --scenario FILE, or both --trace FILE and --policy");
    };
    let policy = with_depth(policy, args.backfill_depth)?;
    let trace = load(path, &args.machine)?;
    let mut plan = plain_plan(
        trace,
        args.machine.procs_per_node.unwrap_or(1),
        policy,
        args.name.clone().unwrap_or_else(|| trace_stem(path)),
    )?;
    plan.config.walltime = walltime_of(args.machine.walltime.unwrap_or_default());
    plan.seed = args.seed.unwrap_or(0);
    Ok(plan)
}

/// `run --scenario`: cluster, workload, requests and discipline from the scenario file.
fn scenario_plan(path: &Path, args: &RunArgs) -> anyhow::Result<Plan> {
    let mut scenario = placesim_run::read_scenario_for_run(path, args.seed)?;
    // The seed drives everything random in a scenario: generation, rules, β and ε.
    if let Some(seed) = args.seed {
        scenario.run.seed = seed;
    }
    let texts = placesim_scenario::TraceTexts::new();
    let mut plan = placesim_run::plan_of_scenario(scenario, path, args.policy, &texts)?;
    plan.discipline = with_depth(plan.discipline, args.backfill_depth)?;
    report_trace(&plan.trace);
    let sources = &plan.request_sources;
    if sources.from_file > 0 || sources.from_field > 0 || !sources.by_rule.is_empty() {
        eprintln!(
            "placesim: requests: {} from the requests file, {} from their own SWF field, by rule {:?}, the rest by size",
            sources.from_file, sources.from_field, sources.by_rule
        );
    }
    if !plan.outages.is_empty() {
        eprintln!("placesim: {} vnode outages", plan.outages.len());
    }
    if let Some(name) = &args.name {
        plan.name = name.clone();
    }
    if let Some(walltime) = args.machine.walltime {
        plan.config.walltime = walltime_of(walltime);
    }
    Ok(plan)
}

/// `--sample-every`, `--warmup` and `--cooldown` over the scenario's `[metrics]`.
fn apply_metrics_args(
    metrics: &mut placesim_scenario::MetricsSettings,
    args: &RunArgs,
) -> anyhow::Result<()> {
    use placesim_scenario::Trim;
    if let Some(text) = &args.sample_every {
        let secs = placesim_request::parse_duration(text).with_context(|| {
            format!(
                "--sample-every: expected a duration [[[DD:]HH:]MM:]SS or seconds, found `{text}`"
            )
        })?;
        metrics.sample_every = (secs > 0).then_some(secs);
    }
    let trim = |text: &str, flag: &str| {
        Trim::parse(text).with_context(|| format!("{flag}: {}, found `{text}`", Trim::EXPECTED))
    };
    if let Some(text) = &args.warmup {
        metrics.warmup = trim(text, "--warmup")?;
    }
    if let Some(text) = &args.cooldown {
        metrics.cooldown = trim(text, "--cooldown")?;
    }
    metrics.exec_vnode |= args.exec_vnode;
    Ok(())
}

fn swf_options(machine: &MachineArgs) -> SwfOptions {
    SwfOptions {
        procs: machine.procs,
        skip_bad_lines: machine.skip_bad_lines,
        keep_field: None,
        keep_extended: false,
    }
}

/// Reads a trace file and reports what was skipped.
fn load(path: &Path, machine: &MachineArgs) -> anyhow::Result<Trace> {
    let resources = placesim_core::ResourceDefs::default();
    let trace = machine
        .format
        .load(path, &swf_options(machine), &resources)?;
    report_trace(&trace);
    Ok(trace)
}

/// Tells the user how the trace's records were accounted for.
pub(crate) fn report_trace(trace: &Trace) {
    let jobs = trace.workload.jobs().len();
    eprintln!(
        "placesim: {}: {} records: {} jobs, {} skipped ({}); machine of {} processors",
        trace.path.display(),
        trace.records,
        jobs,
        trace.skipped.total(),
        trace.skipped,
        trace.procs,
    );
    for msg in &trace.bad_lines {
        eprintln!("placesim: skipped bad line: {msg}");
    }
    if trace.resorted {
        eprintln!(
            "placesim: submit times were out of order; jobs were sorted stably by submit time"
        );
    }
}

/// Executes a lone run, `jobs.parquet` streamed, with a progress bar, and reports what it
/// wrote and what went wrong for jobs.
pub(crate) fn execute_reported(
    plan: &Plan,
    clock: Clock,
    out: &Path,
) -> anyhow::Result<RunSummary> {
    let bar = LazyBar::new(plan.trace.workload.jobs().len() as u64);
    let executed =
        placesim_run::execute(plan, clock, Output::Streamed(out), &mut |p| bar.update(p));
    bar.finish();
    let Executed { summary, writing } = executed?;
    eprintln!(
        "placesim: results written to {} in {:.3} s after the simulation",
        out.display(),
        writing.as_secs_f64()
    );
    if summary.requeues > 0 || summary.jobs_failed > 0 || summary.availability < 1.0 {
        eprintln!(
            "placesim: vnode failures: availability {:.4}, {} requeues, {} jobs failed, {} core-seconds lost",
            summary.availability, summary.requeues, summary.jobs_failed, summary.lost_core_s
        );
    }
    if summary.jobs_never_started > 0 {
        eprintln!(
            "placesim: {} jobs never started: the policy could not place them on this machine",
            summary.jobs_never_started
        );
    }
    if summary.jobs_rejected > 0 {
        eprintln!(
            "placesim: {} jobs refused at submission by max_queued limits (their comment says \
             which)",
            summary.jobs_rejected
        );
    }
    if summary.jobs_deleted > 0 {
        eprintln!(
            "placesim: {} jobs deleted while waiting: by the timeline's qdel, or their \
             reservation's window closed first (their comment says which)",
            summary.jobs_deleted
        );
    }
    if let Some(f) = &summary.fidelity {
        eprintln!("placesim: against the record: {}", fidelity_text(f));
    }
    Ok(summary)
}

/// How close the run came to what really happened, in one line.
fn fidelity_text(f: &placesim_metrics::Fidelity) -> String {
    let seconds = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{v:.0}"));
    let share =
        |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |v| format!("{:.1} %", 100.0 * v));
    format!(
        "{} jobs compared ({} not); start error median {} s (10th to 90th percentile {} to {} s), mean |error| {} s; 2-week moving-average wait error {}; same vnodes {}, same set {} ({} recorded spanning)",
        f.jobs_compared,
        f.jobs_not_compared,
        seconds(f.start_error_p50_s),
        seconds(f.start_error_p10_s),
        seconds(f.start_error_p90_s),
        seconds(f.start_error_mean_abs_s),
        f.wait_mape_2w
            .map_or_else(|| "-".to_owned(), |v| format!("{v:.1} %")),
        share(f.placement_same_vnodes),
        share(f.placement_same_set),
        f.placement_recorded_spanning,
    ) + &by_key_text(f)
}

/// The same set under every key with jobs recorded in one of its sets: `; same set by key:
/// switch 71.4 % of 7, rack 100.0 % of 7` (agreement.parquet), or nothing.
fn by_key_text(f: &placesim_metrics::Fidelity) -> String {
    let keys: Vec<String> = f
        .per_key
        .iter()
        .filter_map(|k| {
            let share = k.same_set_share()?;
            Some(format!(
                "{} {:.1} % of {}",
                k.key,
                100.0 * share,
                k.recorded_in_one_set
            ))
        })
        .collect();
    if keys.is_empty() {
        String::new()
    } else {
        format!("; same set by key: {}", keys.join(", "))
    }
}

/// The table row of a summary held in memory (the same figures summary.parquet holds).
pub(crate) fn row_of(s: &RunSummary) -> placesim_analysis::RunRow {
    placesim_analysis::RunRow {
        scenario: s.meta.scenario.clone(),
        policy: s.meta.policy.clone(),
        seed: s.meta.seed,
        jobs_run: s.jobs_run,
        skipped: s.skipped.iter().map(|(_, n)| n).sum(),
        utilization: s.utilization,
        wait_mean_s: s.wait_mean_s,
        wait_median_s: s.wait_median_s,
        wait_p95_s: s.wait_p95_s,
        bsd_mean: s.bsd_mean,
        makespan_s: s.makespan_s,
        throughput_jobs_per_hour: s.throughput_jobs_per_hour,
    }
}

/// Prints the speed figures: jobs/s and events/s of the simulation, and peak memory.
pub(crate) fn print_figures(summary: &RunSummary, process_wall: Duration) {
    let peak = peak_rss_bytes().map_or_else(
        || "unknown".to_owned(),
        |b| format!("{:.1} MiB", b as f64 / 1048576.0),
    );
    let speed = match summary.timing {
        Some(t) => {
            let sim_wall = t.wall_seconds.max(1e-9);
            format!(
                "simulated in {:.3} s ({:.0} jobs/s, {:.0} events/s)",
                t.wall_seconds,
                summary.jobs_run as f64 / sim_wall,
                summary.events as f64 / sim_wall,
            )
        }
        None => "simulated (not timed: --no-timing)".to_owned(),
    };
    eprintln!(
        "placesim: {} under {}: {} jobs, {} events {speed}; {:.3} s elapsed; peak memory {peak}",
        summary.meta.scenario,
        summary.meta.policy,
        summary.jobs_run,
        summary.events,
        process_wall.as_secs_f64(),
    );
}

/// The process's peak resident memory (VmHWM), where the OS reports it.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A progress bar that appears only on a terminal, and only once a run has taken a second.
struct LazyBar {
    bar: ProgressBar,
    started: Instant,
    shown: std::cell::Cell<bool>,
}

impl LazyBar {
    fn new(len: u64) -> Self {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {pos}/{len} jobs ended, {msg} [{elapsed_precise}, ETA {eta}]",
        ) {
            bar.set_style(style);
        }
        LazyBar {
            bar,
            started: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    fn update(&self, p: Progress) {
        if !self.shown.get()
            && self.started.elapsed() > Duration::from_secs(1)
            && std::io::stderr().is_terminal()
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown.set(true);
        }
        if self.shown.get() {
            self.bar.set_position(p.jobs_ended);
            self.bar.set_message(format!("t = {}", p.now));
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
