//! `placesim sweep`: a base scenario and a grid of changes to it, run in parallel.
//!
//! A sweep file names a base scenario and axes; each axis value is a TOML table merged into
//! the base scenario (tables merge key by key, anything else is replaced). Every combination
//! of one value per axis, times `replicates`, is a run. A run's id is a hash of its full
//! configuration (the merged scenario text and its replicate number), and its seed is drawn
//! from its id, so adding an axis value leaves the other runs' ids, seeds and results alone.
//! Runs go to `OUT/<axis>=<label>/.../replicate=<k>/` (hive partitions), each with its
//! `jobs.parquet`, `summary.parquet` and `run.toml` (the merged scenario and the run id).
//! Every file is written to a temporary name and renamed, and `run.toml` comes last, once
//! both tables are in place, so its presence marks a finished run: `--resume` skips those.
//! `OUT/configs.txt` lists the grid's cells in order, one per line, for `placesim report`.

use crate::cli::SweepArgs;
use crate::run::{Plan, execute, plan_of_scenario};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Deserialize;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The sweep file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepToml {
    /// The sweep's name: results go to `results/<name>` [default: the file name].
    name: Option<String>,
    /// The base scenario, relative to the sweep file.
    scenario: String,
    /// Runs per grid cell, each with its own seed [default: 1].
    #[serde(default = "one")]
    replicates: u32,
    /// The grid's axes, in order.
    #[serde(default)]
    axis: Vec<AxisToml>,
}

fn one() -> u32 {
    1
}

/// `[[axis]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisToml {
    name: String,
    value: Vec<ValueToml>,
}

/// `[[axis.value]]`: a label, and what it changes in the base scenario.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ValueToml {
    label: String,
    #[serde(default)]
    set: toml::Table,
}

/// One run of the grid.
struct SweepRun {
    /// `axis=label` per axis, then `replicate=k`.
    partitions: Vec<String>,
    /// The merged scenario, as written to `run.toml`.
    config: String,
    /// FNV-1a of the config and the replicate number.
    id: u64,
    /// The checked scenario, with its seed drawn from the id.
    scenario: placesim_scenario::Scenario,
}

/// FNV-1a, 64 bits: a stable hash (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Merges `changes` into `base`: tables key by key, other values replaced.
fn merge(base: &mut toml::Table, changes: &toml::Table) {
    for (key, value) in changes {
        match (base.get_mut(key), value) {
            (Some(toml::Value::Table(into)), toml::Value::Table(from)) => merge(into, from),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Reads the sweep file and checks every run's scenario, before any runs.
fn plan_sweep(path: &Path) -> anyhow::Result<(String, PathBuf, Vec<SweepRun>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let sweep: SweepToml =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let name = sweep.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(|| "sweep".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let dir = path.parent().unwrap_or(Path::new("."));
    let base_path = dir.join(&sweep.scenario);
    let base_text = std::fs::read_to_string(&base_path).with_context(|| {
        format!(
            "{}: key `scenario`: reading {}",
            path.display(),
            base_path.display()
        )
    })?;
    let base: toml::Table =
        toml::from_str(&base_text).map_err(|e| anyhow::anyhow!("{}: {e}", base_path.display()))?;
    if sweep.replicates == 0 {
        anyhow::bail!("{}: key `replicates`: expected at least 1", path.display());
    }
    for axis in &sweep.axis {
        let entry = format!("{}: axis `{}`", path.display(), axis.name);
        if axis.value.is_empty() {
            anyhow::bail!("{entry}: expected at least one [[axis.value]]");
        }
        let safe = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
        };
        if !safe(&axis.name) {
            anyhow::bail!("{entry}: the name must be letters, digits, - _ . or +");
        }
        for (i, v) in axis.value.iter().enumerate() {
            if !safe(&v.label) {
                anyhow::bail!(
                    "{entry}: value `{}`: the label must be letters, digits, - _ . or +",
                    v.label
                );
            }
            if axis.value[..i].iter().any(|w| w.label == v.label) {
                anyhow::bail!("{entry}: value `{}` is given twice", v.label);
            }
        }
    }
    // Every combination, the first axis varying slowest.
    let mut cells: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in &sweep.axis {
        cells = cells
            .into_iter()
            .flat_map(|cell| {
                (0..axis.value.len()).map(move |i| {
                    let mut next = cell.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    let mut runs = Vec::new();
    for cell in cells {
        let mut merged = base.clone();
        let mut partitions = Vec::new();
        for (axis, &i) in sweep.axis.iter().zip(&cell) {
            merge(&mut merged, &axis.value[i].set);
            partitions.push(format!("{}={}", axis.name, axis.value[i].label));
        }
        let config = toml::to_string(&merged)
            .map_err(|e| anyhow::anyhow!("{}: {}: {e}", path.display(), partitions.join(", ")))?;
        // One load per cell: replicates differ only in their seed.
        let cell_scenario = placesim_scenario::load_scenario(&config, &base_path).map_err(|e| {
            anyhow::anyhow!(
                "{}: the run {}: {e}",
                path.display(),
                if partitions.is_empty() {
                    "of the base scenario".to_owned()
                } else {
                    partitions.join(", ")
                }
            )
        })?;
        for k in 0..sweep.replicates {
            let id = fnv1a(format!("{config}\nreplicate={k}").as_bytes());
            let mut scenario = cell_scenario.clone();
            scenario.run.seed = placesim_workload::generate::stream_seed(
                id,
                placesim_workload::generate::purpose::WORKLOAD,
            );
            let mut parts = partitions.clone();
            parts.push(format!("replicate={k}"));
            runs.push(SweepRun {
                partitions: parts,
                config: config.clone(),
                id,
                scenario,
            });
        }
    }
    Ok((name, base_path, runs))
}

/// Which shard of the runs this process takes: `--shard K/N`, else a Slurm job array's
/// task (`SLURM_ARRAY_TASK_ID` less `SLURM_ARRAY_TASK_MIN`, of `SLURM_ARRAY_TASK_COUNT`),
/// else a PBS job array's (`PBS_ARRAY_INDEX` with `PLACESIM_SHARDS`), else all of them.
fn shard_of(arg: Option<&str>) -> anyhow::Result<(u64, u64)> {
    let parse = |text: &str, what: &str| -> anyhow::Result<u64> {
        text.trim()
            .parse()
            .with_context(|| format!("{what}: expected a whole number, found `{text}`"))
    };
    let env = |name: &str| std::env::var(name).ok();
    let (k, n) = if let Some(arg) = arg {
        let (k, n) = arg
            .split_once('/')
            .with_context(|| format!("--shard: expected K/N, found `{arg}`"))?;
        (parse(k, "--shard K")?, parse(n, "--shard N")?)
    } else if let (Some(id), Some(count)) =
        (env("SLURM_ARRAY_TASK_ID"), env("SLURM_ARRAY_TASK_COUNT"))
    {
        let min =
            env("SLURM_ARRAY_TASK_MIN").map_or(Ok(0), |m| parse(&m, "SLURM_ARRAY_TASK_MIN"))?;
        let id = parse(&id, "SLURM_ARRAY_TASK_ID")?;
        (
            id.saturating_sub(min),
            parse(&count, "SLURM_ARRAY_TASK_COUNT")?,
        )
    } else if let (Some(index), Some(count)) = (env("PBS_ARRAY_INDEX"), env("PLACESIM_SHARDS")) {
        (
            parse(&index, "PBS_ARRAY_INDEX")?,
            parse(&count, "PLACESIM_SHARDS")?,
        )
    } else {
        (0, 1)
    };
    if n == 0 || k >= n {
        anyhow::bail!("shard {k} of {n}: expected 0 <= K < N");
    }
    Ok((k, n))
}

/// Reads and decompresses each distinct trace the runs replay, once, so that runs parse it
/// from memory, each on its own core.
fn read_traces(runs: &[&SweepRun]) -> anyhow::Result<placesim_scenario::TraceTexts> {
    let mut texts = placesim_scenario::TraceTexts::new();
    for r in runs {
        let Some(placesim_scenario::WorkloadSettings {
            source: placesim_scenario::WorkloadSource::Trace(path),
            ..
        }) = &r.scenario.workload
        else {
            continue;
        };
        if texts.contains_key(path) {
            continue;
        }
        let mut text = Vec::new();
        placesim_workload::swf::open(path)?
            .read_to_end(&mut text)
            .with_context(|| format!("reading {}", path.display()))?;
        texts.insert(path.clone(), text.into());
    }
    Ok(texts)
}

/// Writes `text` to `path` through a temporary name.
fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {}", tmp.display()))
}

pub(crate) fn sweep_command(args: &SweepArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let (name, base_path, runs) = plan_sweep(&args.sweep)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&name));
    let (shard, shards) = shard_of(args.shard.as_deref())?;
    let mine: Vec<&SweepRun> = runs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as u64 % shards == shard)
        .map(|(_, r)| r)
        .collect();
    let dir_of = |r: &SweepRun| r.partitions.iter().fold(out.clone(), |d, p| d.join(p));
    let todo: Vec<&SweepRun> = mine
        .iter()
        .copied()
        .filter(|r| !(args.resume && dir_of(r).join("run.toml").is_file()))
        .collect();
    eprintln!(
        "placesim: sweep {name}: {} runs, this shard ({shard} of {shards}) {}, {} to do{}",
        runs.len(),
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
    // The grid's order, for reports (which otherwise order runs by path).
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut order: Vec<String> = Vec::new();
    for r in &runs {
        let config = r.partitions[..r.partitions.len() - 1].join(" ");
        if !order.contains(&config) {
            order.push(config);
        }
    }
    write_atomic(&out.join("configs.txt"), &(order.join("\n") + "\n"))?;
    let texts = read_traces(&todo)?;
    let jobs_done = AtomicU64::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.map_or(0, usize::from))
        .build()
        .context("starting the thread pool")?;
    let results: Vec<anyhow::Result<placesim_metrics::RunSummary>> = pool.install(|| {
        todo.par_iter()
            .map(|r| {
                let dir = dir_of(r);
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
                let mut plan: Plan =
                    plan_of_scenario(r.scenario.clone(), &base_path, None, &texts, false)?;
                plan.name = name.clone();
                plan.in_sweep = true;
                // Untimed, so that a sweep's files do not depend on the machine or threads.
                // On a thread of its own, which the rayon worker waits for: polars writes the
                // Parquet files through its own rayon pool, and a rayon worker waiting on
                // another pool takes up more of its own pool's work meanwhile, so runs would
                // nest inside runs and finish together at the end, one core idle.
                let summary =
                    std::thread::scope(|s| s.spawn(|| execute(&plan, false, &dir)).join())
                        .map_err(|_| anyhow::anyhow!("run {}: panicked", r.partitions.join(", ")))?
                        .with_context(|| format!("run {}", r.partitions.join(", ")))?;
                // Last: the mark of a finished run.
                write_atomic(
                    &dir.join("run.toml"),
                    &format!("# run id {:016x}\n{}", r.id, r.config),
                )?;
                let done =
                    jobs_done.fetch_add(summary.jobs_run, Ordering::Relaxed) + summary.jobs_run;
                bar.set_message(format!(
                    "{:.0} jobs/s",
                    done as f64 / started.elapsed().as_secs_f64().max(1e-9)
                ));
                bar.inc(1);
                Ok(summary)
            })
            .collect()
    });
    bar.finish_and_clear();
    for result in results {
        result?;
    }
    let wall = started.elapsed().as_secs_f64();
    // The dataset as it stands (every finished run, this shard's and any other's), compared
    // by configuration: what `placesim report` prints.
    match placesim_analysis::compare(&out) {
        Ok(comparison) => print!("{}", placesim_analysis::render_terminal(&comparison)),
        // A shard with no run yet, anywhere: nothing to compare.
        Err(placesim_analysis::ReportError::NoRuns(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let jobs = jobs_done.load(Ordering::Relaxed);
    eprintln!(
        "placesim: sweep {name}: {} runs in {wall:.3} s on {} threads, {jobs} jobs ({:.0} jobs/s aggregate); results in {}",
        todo.len(),
        pool.current_num_threads(),
        jobs as f64 / wall.max(1e-9),
        out.display()
    );
    Ok(())
}
