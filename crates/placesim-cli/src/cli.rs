//! The command line, as clap sees it.

use clap::{Args, Parser, Subcommand, ValueEnum};
use placesim_policy::Discipline;
use placesim_workload::TraceFormat;
use std::path::PathBuf;

/// A discrete-event simulator of HPC batch scheduling, placement sets and node sets.
#[derive(Debug, Parser)]
#[command(name = "placesim", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay an SWF trace (plain or gzipped) under one policy and write Parquet results.
    Run(RunArgs),
    /// Placement sets and node sets on three node generations (shipped KTH-SP2): the short
    /// answer, the comparison and a report.
    Demo(DemoArgs),
    /// Validate a scenario file and print the cluster it describes and the sets it forms.
    Check(CheckArgs),
    /// Generate a synthetic workload (Lublin & Feitelson 2003, Tsafrir 2005 estimates) as SWF.
    Gen(GenArgs),
    /// Run a grid of scenario variants and seeds in parallel into a hive-partitioned dataset.
    Sweep(SweepArgs),
    /// Compare the runs under a results directory (a sweep's, the demo's, or one run's):
    /// means and 95 % CIs over replicates, as a table and a self-contained HTML report.
    Report(ReportArgs),
    /// Why a job waited: its request, where it ran, what the scheduler said about it in time
    /// order, and the queue ahead of it when it became a top job.
    Explain(ExplainArgs),
    /// Turn a real site's own files into a scenario and its workload, ready to run.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Write a run in another tool's format.
    #[command(subcommand)]
    Export(ExportCommand),
}

/// `placesim export`: the formats.
#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// PBS accounting records (Q, S and E per job), readable by PBS's own tools and by
    /// `placesim import pbs`.
    PbsAccounting(ExportPbsArgs),
}

/// The last second of 9999-12-31, UTC: the latest `--epoch` an accounting stamp can show.
const LAST_EPOCH_SECOND: u64 = 253_402_300_799;

/// `placesim export pbs-accounting`.
#[derive(Debug, Clone, Args)]
pub struct ExportPbsArgs {
    /// One run's directory (its jobs.parquet).
    pub run: PathBuf,
    /// The accounting file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// The epoch second simulated time 0 stands for (line stamps are written in UTC), at
    /// most the last second of the year 9999: PBS's stamps have four-digit years, and a
    /// larger epoch overflowed where a job's times were added to it.
    #[arg(long, default_value_t = 1_767_225_600,
          value_parser = clap::value_parser!(u64).range(..=LAST_EPOCH_SECOND))]
    pub epoch: u64,
    /// The queue every job is recorded in.
    #[arg(long, default_value = "workq")]
    pub queue: String,
}

/// `placesim import`: the site kinds.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// A PBS site: a `pbs_snapshot` directory (unpacked), or its files given one by one.
    Pbs(ImportPbsArgs),
    /// A Torque site scheduled by Moab: its node list, accounting logs and moab.cfg.
    TorqueMoab(ImportTorqueArgs),
}

/// `placesim import torque-moab`.
#[derive(Debug, Clone, Args)]
pub struct ImportTorqueArgs {
    /// The nodes: Torque's `server_priv/nodes`, `pbsnodes -a` text, or a Maui resource
    /// trace.
    #[arg(long)]
    pub nodes: PathBuf,
    /// The jobs: accounting logs (`server_priv/accounting/`, a directory read in file-name
    /// order, or one file), or one Maui workload trace or Moab workload event file.
    #[arg(long)]
    pub accounting: PathBuf,
    /// Moab's settings: `moab.cfg` (or Maui's `maui.cfg`).
    #[arg(long)]
    pub moab_cfg: Option<PathBuf>,
    /// Where to write scenario.toml, its workload and the import report.
    #[arg(long)]
    pub out: PathBuf,
    /// Skip and count malformed records and jobs whose request or hosts do not fit the site,
    /// instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_records: bool,
}

/// `placesim import pbs`.
#[derive(Debug, Clone, Args)]
pub struct ImportPbsArgs {
    /// The unpacked `pbs_snapshot` directory (node/, server/, scheduler/, sched_priv/,
    /// server_priv/accounting/); files given below replace its own.
    pub snapshot: Option<PathBuf>,
    /// Where to write scenario.toml, its workload and the import report.
    #[arg(long)]
    pub out: PathBuf,
    /// The vnodes: `pbsnodes -av -F json`, `pbsnodes -av` text or `qmgr print node`.
    #[arg(long)]
    pub nodes: Option<PathBuf>,
    /// Server and queue settings: `qmgr -c 'print server'`.
    #[arg(long)]
    pub server: Option<PathBuf>,
    /// Resource definitions: `server_priv/resourcedef` or `qmgr -c 'print resource'`.
    #[arg(long)]
    pub resources: Option<PathBuf>,
    /// Scheduler attributes: `qmgr -c 'list sched'`.
    #[arg(long)]
    pub sched: Option<PathBuf>,
    /// `sched_priv/sched_config`.
    #[arg(long)]
    pub sched_config: Option<PathBuf>,
    /// `sched_priv/resource_group`, the fairshare tree.
    #[arg(long)]
    pub resource_group: Option<PathBuf>,
    /// Reservations: `pbs_rstat -f`.
    #[arg(long)]
    pub reservations: Option<PathBuf>,
    /// Accounting logs: a directory (its files in name order) or one file.
    #[arg(long)]
    pub accounting: Option<PathBuf>,
    /// Skip and count malformed records and jobs whose request or vnodes do not fit the site,
    /// instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_records: bool,
}

/// `placesim explain`.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// One run's directory (holding its jobs.parquet and events.parquet).
    pub run: PathBuf,
    /// The job's number in the trace (SWF field 1).
    pub job: u64,
}

/// `placesim report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The results directory; every directory below it holding a summary.parquet is a run,
    /// grouped by its path's partitions other than `replicate=`.
    pub results: PathBuf,
    /// Where to write the HTML report [default: RESULTS/report.html].
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// The window of the placement pictures, START..END in simulated time, each seconds or
    /// `[[[DD:]HH:]MM:]SS` [default: the busiest day of the first configuration's first run].
    #[arg(long)]
    pub window: Option<String>,
    /// Explain this job (its number in the trace) in the report, for each configuration's
    /// first run, as `placesim explain` does.
    #[arg(long)]
    pub explain: Option<u64>,
}

/// `placesim sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// The sweep file (TOML): a base scenario, axes of changes to it, and replicates.
    pub sweep: PathBuf,
    /// Threads, one simulation each [default: one per core].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Skip runs that finished before (their run.toml, written last, exists).
    #[arg(long)]
    pub resume: bool,
    /// Run only shard K of N (0 <= K < N), runs taken round-robin [default: from
    /// SLURM_ARRAY_TASK_ID/COUNT, or PBS_ARRAY_INDEX with PLACESIM_SHARDS, else all].
    #[arg(long)]
    pub shard: Option<String>,
    /// Where the dataset goes [default: results/NAME].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `placesim gen`.
#[derive(Debug, Clone, Args)]
pub struct GenArgs {
    /// A scenario whose [workload.generator], cluster and seed to use; its requests go to a
    /// side file OUT.requests.
    #[arg(long, conflicts_with_all = ["jobs", "procs", "streams", "max_estimate", "load"])]
    pub scenario: Option<PathBuf>,
    /// How many jobs (without --scenario).
    #[arg(long, required_unless_present = "scenario")]
    pub jobs: Option<u64>,
    /// The machine's processors: sizes go up to it (without --scenario).
    #[arg(long, required_unless_present = "scenario", value_parser = clap::value_parser!(u64).range(1..))]
    pub procs: Option<u64>,
    /// Job streams (without --scenario).
    #[arg(long, value_enum, default_value_t = StreamsArg::BatchInteractive)]
    pub streams: StreamsArg,
    /// The largest user estimate, `[[[DD:]HH:]MM:]SS` (without --scenario) [default: 48:00:00].
    #[arg(long)]
    pub max_estimate: Option<String>,
    /// A target offered load, Σ size × runtime / (procs × submit span) (without --scenario)
    /// [default: the published arrival rate].
    #[arg(long)]
    pub load: Option<f64>,
    /// The seed [default: the scenario's, else 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// The SWF file to write; gzipped when it ends in .gz.
    #[arg(long)]
    pub out: PathBuf,
}

/// Which Lublin job streams to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StreamsArg {
    /// Batch and interactive, merged (the paper's model).
    BatchInteractive,
    /// Batch jobs only.
    Batch,
    /// Interactive jobs only.
    Interactive,
    /// The typeless whole-sample parameters.
    Typeless,
}

/// `placesim check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
}

/// `--policy`: the values and their help come from the policy crate's list of disciplines.
fn discipline_parser() -> impl clap::builder::TypedValueParser<Value = Discipline> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(Discipline::ALL.map(|d| PossibleValue::new(d.name()).help(d.help())))
        .try_map(|name| name.parse::<Discipline>())
}

/// What happens at a job's walltime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum WalltimeArg {
    /// Kill the job at start + estimate (runtime = min(run time, estimate)).
    #[default]
    Kill,
    /// Let the job run its full trace runtime.
    Overrun,
}

/// `--format`: the values and their help come from the workload crate's list of formats.
fn format_parser() -> impl clap::builder::TypedValueParser<Value = TraceFormat> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(TraceFormat::ALL.map(|f| PossibleValue::new(f.name()).help(f.help())))
        .try_map(|name| name.parse::<TraceFormat>())
}

/// How trace jobs become a machine and a workload.
#[derive(Debug, Clone, Args)]
pub struct MachineArgs {
    /// The trace's format (without --scenario; a scenario gives `workload.format`).
    #[arg(long, value_parser = format_parser(), default_value_t = TraceFormat::Swf)]
    pub format: TraceFormat,
    /// Processors in the machine [default: the trace header's MaxProcs, else MaxNodes].
    #[arg(long)]
    pub procs: Option<u64>,
    /// Processors per vnode; the last vnode takes the remainder [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub procs_per_node: Option<u64>,
    /// Count malformed trace lines as skipped instead of failing on the first.
    #[arg(long)]
    pub skip_bad_lines: bool,
    /// What happens at a job's walltime [default: kill, or the scenario's].
    #[arg(long, value_enum)]
    pub walltime: Option<WalltimeArg>,
}

/// `placesim run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// A scenario file (TOML): cluster, workload, requests, discipline and seed come from it.
    #[arg(long, conflicts_with_all = ["trace", "procs", "procs_per_node"])]
    pub scenario: Option<PathBuf>,
    /// The SWF trace, plain or gzipped (without --scenario).
    #[arg(long, required_unless_present = "scenario")]
    pub trace: Option<PathBuf>,
    /// The queue discipline [default with --scenario: the scenario's].
    #[arg(long, value_parser = discipline_parser(), required_unless_present = "scenario")]
    pub policy: Option<Discipline>,
    /// Reservations per pass under `easy`: the first N jobs that cannot start get one; 0 is
    /// strict order (fcfs) [default: 1, or the scenario's].
    #[arg(long, value_name = "N")]
    pub backfill_depth: Option<u32>,
    /// Where to write jobs.parquet, events.parquet, summary.parquet, timeseries.parquet and
    /// vnodes.parquet.
    #[arg(long)]
    pub out: PathBuf,
    /// The scenario name recorded in every row [default: the scenario's name, else the
    /// trace's file name, less .swf/.gz].
    #[arg(long)]
    pub name: Option<String>,
    /// The run's seed, recorded in every row [default: the scenario's, else 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the wall-clock columns of summary.parquet as nulls, so that the same input gives
    /// byte-identical files.
    #[arg(long)]
    pub no_timing: bool,
    /// Check the kernel's invariants at every event (no vnode oversubscribed, no start before
    /// submit or outside the chosen set, the clock never backwards, every job ended once);
    /// a broken one stops the run with the event and the state. Slower; on in debug builds.
    #[arg(long)]
    pub check_invariants: bool,
    /// Replay what really happened rather than schedule: each job of an imported site starts
    /// when and where its record says (`[workload] recorded`), so the site's own schedule is
    /// measured as a run, beside simulated configurations.
    #[arg(long, requires = "scenario", conflicts_with_all = ["policy", "backfill_depth"])]
    pub as_recorded: bool,
    /// Name every job's vnodes in jobs.parquet (`exec_vnode`, `estimated_exec_vnode`, in PBS's
    /// syntax); off by default, since a job of thousands of vnodes has tens of kilobytes of
    /// them [default: the scenario's `metrics.exec_vnode`].
    #[arg(long)]
    pub exec_vnode: bool,
    /// Δt of timeseries.parquet, `[[[DD:]HH:]MM:]SS` or seconds; 0 for no samples
    /// [default: the scenario's `metrics.sample_every`, else 1 hour].
    #[arg(long, value_name = "DURATION")]
    pub sample_every: Option<String>,
    /// Leave the start out of the measurement window: a duration after the first submit, or
    /// `N%` of the jobs [default: the scenario's `metrics.warmup`, else nothing].
    #[arg(long, value_name = "DURATION|N%")]
    pub warmup: Option<String>,
    /// Leave the end out of the measurement window: a duration before the last submit, or
    /// `N%` of the jobs [default: the scenario's `metrics.cooldown`, else nothing].
    #[arg(long, value_name = "DURATION|N%")]
    pub cooldown: Option<String>,
    /// Machine and trace conversion.
    #[command(flatten)]
    pub machine: MachineArgs,
}

/// `placesim demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Where to write the results and report.
    #[arg(long, default_value = "results/demo")]
    pub out: PathBuf,
}
