//! Sweeps: a base scenario and a grid of changes to it, run in parallel.
//!
//! A sweep file names a base scenario and axes; each axis value is a TOML table merged into
//! the base scenario (tables merge key by key, anything else is replaced). Every combination
//! of one value per axis, times `replicates`, is a run. A run's id is a hash of its full
//! configuration (the merged scenario text and its replicate number), and its seed is drawn
//! from its id, so adding an axis value leaves the other runs' ids, seeds and results alone.
//! Runs go to `OUT/<axis>=<label>/.../replicate=<k>/` (hive partitions), each with its
//! `jobs.parquet`, `summary.parquet` and `run.toml` (the merged scenario and the run id).
//! Every file is written to a temporary name and renamed, and `run.toml` comes last, once
//! both tables are in place, so its presence marks a finished run: resuming skips those.
//! `OUT/configs.txt` lists the grid's cells in order, one per line, for reports.

use crate::{Clock, Output, RunError, execute, plan_of_scenario, write_atomic};
use placesim_metrics::RunSummary;
use placesim_scenario::{Scenario, TraceTexts, WorkloadSettings, WorkloadSource};
use rayon::prelude::*;
use serde::Deserialize;
use std::io::Read as _;
use std::path::{Path, PathBuf};

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
#[derive(Debug, Clone)]
pub struct SweepRun {
    /// `axis=label` per axis, then `replicate=k`.
    pub partitions: Vec<String>,
    /// The merged scenario, as written to `run.toml`.
    pub config: String,
    /// FNV-1a of the config and the replicate number.
    pub id: u64,
    /// The checked scenario, with its seed drawn from the id.
    pub scenario: Scenario,
}

impl SweepRun {
    /// Its directory under the dataset's root `out`.
    pub fn dir(&self, out: &Path) -> PathBuf {
        self.partitions
            .iter()
            .fold(out.to_owned(), |d, p| d.join(p))
    }

    /// Whether it finished in an earlier sweep into `out` (its `run.toml` exists).
    pub fn finished(&self, out: &Path) -> bool {
        self.dir(out).join("run.toml").is_file()
    }

    fn label(&self) -> String {
        self.partitions.join(", ")
    }
}

/// A sweep file, read and checked: every run's scenario loaded, before any run.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// Its name: results go to `results/<name>` by default.
    pub name: String,
    /// The base scenario's file.
    pub base_path: PathBuf,
    /// Every run of the grid, the first axis varying slowest, replicates innermost.
    pub runs: Vec<SweepRun>,
}

/// Which of a sweep's runs this process takes: every `count`-th from the `index`-th.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K, from 0.
    pub index: u64,
    /// N, at least 1.
    pub count: u64,
}

/// What a sweep's execution did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepTotals {
    /// Runs executed.
    pub runs: usize,
    /// Jobs they simulated.
    pub jobs: u64,
    /// Threads the pool ran.
    pub threads: usize,
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

/// The most runs one sweep may have: far beyond any study (the headline experiment has 90),
/// and a bound on the grid, whose every run holds a scenario of its own.
pub const MAX_SWEEP_RUNS: u64 = 100_000;

impl Sweep {
    /// Reads the sweep file at `path` and checks every run's scenario.
    pub fn load(path: &Path) -> Result<Sweep, RunError> {
        let wrong = |message: String| RunError::Sweep {
            path: path.to_owned(),
            message,
        };
        let text = placesim_workload::read_text(path)?;
        let sweep: SweepToml = toml::from_str(&text)
            .map_err(|e| placesim_scenario::toml_syntax_error(&text, path, &e))?;
        let name = sweep.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map_or_else(|| "sweep".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        let dir = path.parent().unwrap_or(Path::new("."));
        let base_path = dir.join(&sweep.scenario);
        let base_text = placesim_workload::read_text(&base_path)
            .map_err(|e| wrong(format!("key `scenario`: {e}")))?;
        let base: toml::Table = toml::from_str(&base_text)
            .map_err(|e| placesim_scenario::toml_syntax_error(&base_text, &base_path, &e))?;
        if sweep.replicates == 0 {
            return Err(wrong("key `replicates`: expected at least 1".to_owned()));
        }
        for axis in &sweep.axis {
            let entry = format!("axis `{}`", axis.name);
            if axis.value.is_empty() {
                return Err(wrong(format!(
                    "{entry}: expected at least one [[axis.value]]"
                )));
            }
            let safe = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+'))
            };
            if !safe(&axis.name) {
                return Err(wrong(format!(
                    "{entry}: the name must be letters, digits, - _ . or +"
                )));
            }
            for (i, v) in axis.value.iter().enumerate() {
                if !safe(&v.label) {
                    return Err(wrong(format!(
                        "{entry}: value `{}`: the label must be letters, digits, - _ . or +",
                        v.label
                    )));
                }
                if axis.value[..i].iter().any(|w| w.label == v.label) {
                    return Err(wrong(format!(
                        "{entry}: value `{}` is given twice",
                        v.label
                    )));
                }
            }
        }
        // Refused before the grid is built: each run holds its own scenario.
        let runs_asked = sweep
            .axis
            .iter()
            .try_fold(u64::from(sweep.replicates), |n, axis| {
                n.checked_mul(axis.value.len() as u64)
            })
            .filter(|&n| n <= MAX_SWEEP_RUNS);
        if runs_asked.is_none() {
            return Err(wrong(format!(
                "the axes' values times the replicates make more than {MAX_SWEEP_RUNS} runs, placesim's limit for one sweep"
            )));
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
                .map_err(|e| wrong(format!("{}: {e}", partitions.join(", "))))?;
            // One load per cell: replicates differ only in their seed.
            let cell_scenario =
                placesim_scenario::load_scenario(&config, &base_path).map_err(|e| {
                    wrong(format!(
                        "the run {}: {e}",
                        if partitions.is_empty() {
                            "of the base scenario".to_owned()
                        } else {
                            partitions.join(", ")
                        }
                    ))
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
        Ok(Sweep {
            name,
            base_path,
            runs,
        })
    }

    /// The runs `shard` takes, in grid order.
    pub fn shard(&self, shard: Shard) -> Vec<&SweepRun> {
        self.runs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % shard.count == shard.index)
            .map(|(_, r)| r)
            .collect()
    }

    /// The grid's cells in order (each run's partitions less its replicate), one per line:
    /// what `configs.txt` holds.
    pub fn configs(&self) -> String {
        let mut order: Vec<String> = Vec::new();
        for r in &self.runs {
            let config = r.partitions[..r.partitions.len() - 1].join(" ");
            if !order.contains(&config) {
                order.push(config);
            }
        }
        order.join("\n") + "\n"
    }

    /// Runs `todo` (runs of this sweep) into the dataset under `out` on `threads` threads
    /// (all cores for `None`), one simulation per thread, untimed so that the files do not
    /// depend on the machine or the threads. Writes `configs.txt` first; `finished` is called
    /// after each run, from the thread that ran it. The first failed run's error is returned,
    /// once every run has ended.
    pub fn execute(
        &self,
        todo: &[&SweepRun],
        out: &Path,
        threads: Option<usize>,
        finished: &(dyn Fn(&RunSummary) + Sync),
    ) -> Result<SweepTotals, RunError> {
        std::fs::create_dir_all(out).map_err(RunError::io("creating", out))?;
        write_atomic(&out.join("configs.txt"), self.configs().as_bytes())?;
        let texts = read_traces(todo)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .build()
            .map_err(RunError::ThreadPool)?;
        let results: Vec<Result<u64, RunError>> = pool.install(|| {
            todo.par_iter()
                .map(|r| {
                    let summary = self.execute_one(r, out, &texts)?;
                    finished(&summary);
                    Ok(summary.jobs_run)
                })
                .collect()
        });
        let mut jobs = 0;
        for result in results {
            jobs += result?;
        }
        Ok(SweepTotals {
            runs: todo.len(),
            jobs,
            threads: pool.current_num_threads(),
        })
    }

    /// One run, into its partition of `out`, with `run.toml` written last.
    fn execute_one(
        &self,
        run: &SweepRun,
        out: &Path,
        texts: &TraceTexts,
    ) -> Result<RunSummary, RunError> {
        let in_run = |source: RunError| RunError::SweepRun {
            run: run.label(),
            source: Box::new(source),
        };
        let dir = run.dir(out);
        std::fs::create_dir_all(&dir).map_err(RunError::io("creating", &dir))?;
        let mut plan = plan_of_scenario(run.scenario.clone(), &self.base_path, None, texts)?;
        plan.name = self.name.clone();
        // On a thread of its own, which the rayon worker waits for: polars writes the Parquet
        // files through its own rayon pool, and a rayon worker waiting on another pool takes
        // up more of its own pool's work meanwhile, so runs would nest inside runs and finish
        // together at the end, one core idle.
        let executed = std::thread::scope(|s| {
            s.spawn(|| {
                execute(
                    &plan,
                    Clock::Untimed,
                    Output::OnRunThread(&dir),
                    &mut |_| {},
                )
            })
            .join()
        })
        .map_err(|_| RunError::Panicked { run: run.label() })?
        .map_err(in_run)?;
        // Last: the mark of a finished run.
        write_atomic(
            &dir.join("run.toml"),
            format!("# run id {:016x}\n{}", run.id, run.config).as_bytes(),
        )?;
        Ok(executed.summary)
    }
}

impl Shard {
    /// All runs.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// `--shard K/N` if given, else a Slurm job array's task (`SLURM_ARRAY_TASK_ID` less
    /// `SLURM_ARRAY_TASK_MIN`, over `SLURM_ARRAY_TASK_STEP`, of `SLURM_ARRAY_TASK_COUNT`: an
    /// array `--array=0-10:2` has the tasks 0, 2, ..., 10, shards 0 to 5), else a PBS job
    /// array's (`PBS_ARRAY_INDEX` with `PLACESIM_SHARDS`), else all runs. `env` reads a
    /// variable.
    pub fn choose(
        arg: Option<&str>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, RunError> {
        let parse = |text: &str, what: &str| -> Result<u64, RunError> {
            text.trim().parse().map_err(|_| {
                RunError::Shard(format!("{what}: expected a whole number, found `{text}`"))
            })
        };
        let (index, count) = if let Some(arg) = arg {
            let (k, n) = arg
                .split_once('/')
                .ok_or_else(|| RunError::Shard(format!("--shard: expected K/N, found `{arg}`")))?;
            (parse(k, "--shard K")?, parse(n, "--shard N")?)
        } else if let (Some(id), Some(count)) =
            (env("SLURM_ARRAY_TASK_ID"), env("SLURM_ARRAY_TASK_COUNT"))
        {
            let min =
                env("SLURM_ARRAY_TASK_MIN").map_or(Ok(0), |m| parse(&m, "SLURM_ARRAY_TASK_MIN"))?;
            let step = env("SLURM_ARRAY_TASK_STEP")
                .map_or(Ok(1), |s| parse(&s, "SLURM_ARRAY_TASK_STEP"))?;
            let id = parse(&id, "SLURM_ARRAY_TASK_ID")?;
            // Without the step, every other shard of an array with a step would be left out.
            if step == 0 || id < min || (id - min) % step != 0 {
                return Err(RunError::Shard(format!(
                    "SLURM_ARRAY_TASK_ID {id} is not a task of an array from \
                     SLURM_ARRAY_TASK_MIN {min} by SLURM_ARRAY_TASK_STEP {step}"
                )));
            }
            ((id - min) / step, parse(&count, "SLURM_ARRAY_TASK_COUNT")?)
        } else if let (Some(index), Some(count)) = (env("PBS_ARRAY_INDEX"), env("PLACESIM_SHARDS"))
        {
            (
                parse(&index, "PBS_ARRAY_INDEX")?,
                parse(&count, "PLACESIM_SHARDS")?,
            )
        } else {
            (0, 1)
        };
        if count == 0 || index >= count {
            return Err(RunError::Shard(format!(
                "shard {index} of {count}: expected 0 <= K < N"
            )));
        }
        Ok(Shard { index, count })
    }
}

/// Reads and decompresses each distinct trace the runs replay, once, so that runs parse it
/// from memory, each on its own core.
fn read_traces(runs: &[&SweepRun]) -> Result<TraceTexts, RunError> {
    let mut texts = TraceTexts::new();
    for r in runs {
        let Some(WorkloadSettings {
            source: WorkloadSource::Trace(path),
            ..
        }) = &r.scenario.workload
        else {
            continue;
        };
        if texts.contains_key(path) {
            continue;
        }
        let mut text = Vec::new();
        placesim_workload::open(path)?
            .read_to_end(&mut text)
            .map_err(RunError::io("reading", path))?;
        texts.insert(path.clone(), text.into());
    }
    Ok(texts)
}
