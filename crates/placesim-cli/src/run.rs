//! `placesim run`, and the machinery it shares with the demo: load, simulate, write, report.

use crate::cli::{MachineArgs, RunArgs, WalltimeArg};
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use placesim_core::PlacementPolicy;
use placesim_core::{Cluster, ClusterState, Progress, RunConfig, Simulation, WalltimePolicy};
use placesim_metrics::{
    JobSink, RunMeta, RunSummary, StreamingJobSink, Timing, write_run, write_summary,
    write_timeseries,
};
use placesim_policy::Discipline;
use placesim_policy::PlacementSpec;
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
    apply_metrics_args(&mut plan.metrics, args)?;
    let summary = execute(&plan, !args.no_timing, &args.out)?;
    print!("{}", placesim_analysis::render_table(&[row_of(&summary)]));
    print_figures(&summary, started.elapsed());
    Ok(())
}

/// A validated run: everything `execute` needs, built before the first event.
pub(crate) struct Plan {
    pub trace: Trace,
    pub cluster: Cluster,
    pub policy: Discipline,
    pub config: RunConfig,
    pub name: String,
    pub seed: u64,
    /// Stretches runtimes by placement; none for a plain trace replay.
    pub runtime: Option<placesim_core::RuntimeModel>,
    /// The placement: first fit, PBS placement sets or Moab node sets.
    pub placement: PlacementSpec,
    /// Vnode outages, and what they do to running jobs.
    pub outages: Vec<placesim_core::Outage>,
    pub on_failure: placesim_core::NodeFailurePolicy,
    /// Check the kernel's invariants at every event (always, in debug builds).
    pub check_invariants: bool,
    /// Samples and the measurement window.
    pub metrics: placesim_scenario::MetricsSettings,
    /// The sets fragmentation is measured over: the runtime model's topology key.
    pub topology: Option<placesim_core::ResourceId>,
    /// One run of a sweep: print nothing, show no progress bar (the sweep shows its own), and
    /// keep to one thread (jobs.parquet is written after the run, not streamed by a helper
    /// thread), since the sweep runs one simulation per core.
    pub in_sweep: bool,
}

fn walltime_of(arg: WalltimeArg) -> WalltimePolicy {
    match arg {
        WalltimeArg::Kill => WalltimePolicy::Kill,
        WalltimeArg::Overrun => WalltimePolicy::Overrun,
    }
}

/// `run --trace`: the plain SWF machine.
fn trace_plan(args: &RunArgs) -> anyhow::Result<Plan> {
    let (Some(path), Some(policy)) = (&args.trace, args.policy) else {
        anyhow::bail!("give --scenario FILE, or both --trace FILE and --policy");
    };
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

/// A plain replay of `trace` on its machine (`procs_per_node` processors per vnode, first
/// fit, no runtime model, no outages), walltimes killed, seed 0.
pub(crate) fn plain_plan(
    trace: Trace,
    procs_per_node: u64,
    policy: Discipline,
    name: String,
) -> anyhow::Result<Plan> {
    let cluster =
        Cluster::homogeneous(trace.procs, procs_per_node).context("building the machine")?;
    Ok(Plan {
        name,
        cluster,
        policy,
        config: RunConfig {
            walltime: WalltimePolicy::Kill,
        },
        seed: 0,
        trace,
        runtime: None,
        placement: PlacementSpec::FirstFit,
        outages: Vec::new(),
        on_failure: placesim_core::NodeFailurePolicy::default(),
        check_invariants: false,
        metrics: placesim_scenario::MetricsSettings::default(),
        topology: None,
        in_sweep: false,
    })
}

/// `run --scenario`: cluster, workload, requests and discipline from the scenario file.
fn scenario_plan(path: &Path, args: &RunArgs) -> anyhow::Result<Plan> {
    let mut scenario = crate::check::load(path)?;
    // The seed drives everything random in a scenario: generation, rules, β and ε.
    if let Some(seed) = args.seed {
        scenario.run.seed = seed;
    }
    let policy = args.policy;
    let texts = placesim_scenario::TraceTexts::new();
    let mut plan = plan_of_scenario(scenario, path, policy, &texts, true)?;
    if let Some(name) = &args.name {
        plan.name = name.clone();
    }
    if let Some(walltime) = args.machine.walltime {
        plan.config.walltime = walltime_of(walltime);
    }
    Ok(plan)
}

/// The plan of a loaded scenario (read from `path`): its workload, placement, discipline
/// (unless `policy` overrides it), runtime model and outages. Traces already in `texts` are
/// parsed from there. `verbose` reports the trace.
pub(crate) fn plan_of_scenario(
    scenario: placesim_scenario::Scenario,
    path: &Path,
    policy: Option<Discipline>,
    texts: &placesim_scenario::TraceTexts,
    verbose: bool,
) -> anyhow::Result<Plan> {
    let loaded = scenario.workload_with(texts)?;
    let trace = loaded.trace;
    if verbose {
        report_trace(&trace);
    }
    if verbose && (loaded.from_file > 0 || !loaded.by_rule.is_empty()) {
        eprintln!(
            "placesim: requests: {} from the requests file, by rule {:?}, the rest by size",
            loaded.from_file, loaded.by_rule
        );
    }
    let spec = scenario.placement(&trace.workload);
    let placement: Box<dyn PlacementPolicy> =
        spec.instance(&mut ClusterState::new(scenario.cluster.clone()));
    let placement_name = placement.name();
    for (i, request) in trace.workload.requests().iter().enumerate() {
        if let Some(what) = placement.unsupported(request) {
            let job = trace
                .workload
                .jobs()
                .iter()
                .find(|j| j.request.index() == i)
                .map_or(0, |j| j.source_id);
            anyhow::bail!(
                "{}: job {job} asks for {what}, which the {placement_name} placement cannot honour",
                path.display()
            );
        }
    }
    let policy = policy.unwrap_or(scenario.run.discipline);
    let runtime = Some(scenario.runtime_model(&trace.workload));
    let outages = scenario.outages(&trace.workload);
    if verbose && !outages.is_empty() {
        eprintln!("placesim: {} vnode outages", outages.len());
    }
    Ok(Plan {
        outages,
        on_failure: scenario.failures.on_failure,
        check_invariants: false,
        metrics: scenario.metrics,
        topology: scenario.runtime.settings.topology,
        in_sweep: false,
        name: scenario.name.clone(),
        cluster: scenario.cluster,
        policy,
        config: RunConfig {
            walltime: scenario.run.walltime,
        },
        seed: scenario.run.seed,
        runtime,
        trace,
        placement: spec,
    })
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
    Ok(())
}

/// The trace's file name without `.gz` and `.swf`: the default scenario name.
pub(crate) fn trace_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    name.strip_suffix(".swf").unwrap_or(name).to_owned()
}

fn swf_options(machine: &MachineArgs) -> SwfOptions {
    SwfOptions {
        procs: machine.procs,
        skip_bad_lines: machine.skip_bad_lines,
    }
}

/// Reads a trace file and reports what was skipped.
fn load(path: &Path, machine: &MachineArgs) -> anyhow::Result<Trace> {
    let resources = placesim_core::ResourceDefs::default();
    let trace = placesim_workload::load_trace(path, &swf_options(machine), &resources)?;
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

/// Replays a plan, writes the Parquet files into `out`, returns the summary.
pub(crate) fn execute(plan: &Plan, timed: bool, out: &Path) -> anyhow::Result<RunSummary> {
    let Plan {
        trace,
        policy,
        config,
        ..
    } = plan;
    let (policy, config, cluster) = (*policy, *config, plan.cluster.clone());
    let mut state = ClusterState::new(cluster.clone());
    let (scenario, seed) = (plan.name.as_str(), plan.seed);
    let workload = &trace.workload;
    // The placement is part of the policy's name when it is not plain first fit.
    let policy_name = format!("{policy}{}", plan.placement.kind().policy_suffix());
    let meta = RunMeta {
        scenario: scenario.to_owned(),
        policy: policy_name,
        seed,
        trace: trace.path.display().to_string(),
        procs: cluster.capacity_total(placesim_core::ConsumableIdx::NCPUS),
    };
    let mut policy_impl = policy.build_with(plan.placement.instance(&mut state));
    let bar = LazyBar::new(workload.jobs().len() as u64);
    let mut simulation = Simulation::new(workload, state, config);
    if let Some(model) = &plan.runtime {
        simulation = simulation.with_runtime_model(model);
    }
    if !plan.outages.is_empty() {
        simulation = simulation.with_outages(&plan.outages, plan.on_failure);
    }
    if plan.check_invariants {
        simulation = simulation.with_invariant_checks(true);
    }
    let monitor = plan
        .metrics
        .monitor_config(&cluster, plan.topology, workload);
    let sets = monitor.sets.clone();
    simulation = simulation.with_monitor(monitor);
    let skipped: Vec<_> = trace.skipped.iter().map(|(r, n)| (r.name(), n)).collect();
    let summarise = |sink: &JobSink, stats: &placesim_core::RunStats, wall: Duration| {
        let timing = timed.then_some(Timing {
            wall_seconds: wall.as_secs_f64(),
        });
        RunSummary::compute(
            meta.clone(),
            workload,
            sink,
            stats,
            trace.records,
            skipped.clone(),
            timing,
        )
    };
    let simulating = || format!("simulating {} under {policy}", trace.path.display());
    let writing;
    let summary = if plan.in_sweep {
        // One thread: the sweep runs one simulation per core.
        let mut sink = JobSink::new(workload);
        sink.set_sets(&sets, &cluster);
        let started = Instant::now();
        let stats = simulation
            .run(policy_impl.as_mut(), &mut sink, &mut |_| {})
            .with_context(simulating)?;
        let summary = summarise(&sink, &stats, started.elapsed());
        writing = Instant::now();
        write_run(out, workload, &sink, &summary)?;
        summary
    } else {
        // jobs.parquet is written while the run goes on, a row group at a time.
        let mut streaming = StreamingJobSink::new(out, meta.clone(), workload)?;
        streaming.sink_mut().set_sets(&sets, &cluster);
        let started = Instant::now();
        let stats = simulation
            .run(policy_impl.as_mut(), &mut streaming, &mut |p| bar.update(p))
            .with_context(simulating)?;
        let wall = started.elapsed();
        bar.finish();
        writing = Instant::now();
        // The summary is computed and written while the last row groups of jobs.parquet
        // encode.
        let (_, summary) = streaming.finish_with(|sink| {
            let summary = summarise(sink, &stats, wall);
            write_timeseries(out, &summary.meta, sink)?;
            write_summary(out, &summary).map(|()| summary)
        })?;
        summary?
    };
    if plan.in_sweep {
        return Ok(summary);
    }
    eprintln!(
        "placesim: results written to {} in {:.3} s after the simulation",
        out.display(),
        writing.elapsed().as_secs_f64()
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
    Ok(summary)
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
