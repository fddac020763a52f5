//! Comparing runs: a results directory (one run, the demo's runs side by side, or a sweep's
//! hive-partitioned dataset) read lazily with polars, runs grouped by configuration, means and
//! 95 % confidence intervals over replicates.

use crate::ReportError;
use crate::stats::MeanCi;
use crate::svg::Quantiles;
use placesim_metrics::schema::{jobs, summary, timeseries};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// One run's directory and what it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    /// The directory holding its Parquet files.
    pub dir: PathBuf,
    /// Its configuration: the partitions of its path below the results directory except
    /// `replicate=`, joined by spaces (`placement=pbs discipline=easy`); for the demo's
    /// layout, the directory's name (`easy`).
    pub config: String,
}

/// Every directory under `root` (itself included) that holds a `summary.parquet`, in path
/// order.
pub fn discover(root: &Path) -> Result<Vec<RunDir>, ReportError> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|source| ReportError::Io {
            path: dir.clone(),
            source,
        })?;
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            }
        }
        if dir.join("summary.parquet").is_file() {
            found.push(dir);
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(ReportError::NoRuns(root.to_owned()));
    }
    Ok(found
        .into_iter()
        .map(|dir| {
            let parts: Vec<String> = dir
                .strip_prefix(root)
                .unwrap_or(&dir)
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .filter(|c| !c.starts_with("replicate="))
                .collect();
            let config = if parts.is_empty() {
                "run".to_owned()
            } else {
                parts.join(" ")
            };
            RunDir { dir, config }
        })
        .collect())
}

/// A summary.parquet column the report compares: its name, its heading, decimals shown, and
/// whether the terminal table shows it.
pub struct Metric {
    /// The column.
    pub column: &'static str,
    /// The heading.
    pub heading: &'static str,
    /// Decimals shown.
    pub decimals: usize,
    /// In the terminal table too (the HTML shows every metric).
    pub terminal: bool,
}

const fn m(column: &'static str, heading: &'static str, decimals: usize, terminal: bool) -> Metric {
    Metric {
        column,
        heading,
        decimals,
        terminal,
    }
}

/// What the report compares, in order (formulas in docs/output-schema.md).
pub const METRICS: [Metric; 20] = [
    m(summary::WINDOW_JOBS.def.name, "jobs", 0, false),
    m(
        summary::WINDOW_WAIT_MEAN_S.def.name,
        "mean wait (s)",
        0,
        true,
    ),
    m(
        summary::WINDOW_WAIT_P95_S.def.name,
        "p95 wait (s)",
        0,
        false,
    ),
    m(summary::WINDOW_BSD_MEAN.def.name, "mean BSD", 2, true),
    m(summary::WINDOW_BSD_P95.def.name, "p95 BSD", 1, false),
    m(summary::UTILIZATION_ALLOCATED.def.name, "U_alloc", 4, true),
    m(summary::UTILIZATION_USEFUL.def.name, "U_useful", 4, true),
    m(summary::EFFICIENCY.def.name, "η", 4, false),
    m(
        summary::WORK_CORE_HOURS_PER_HOUR.def.name,
        "work (core-h/h)",
        2,
        true,
    ),
    m(
        summary::WINDOW_THROUGHPUT_JOBS_PER_HOUR.def.name,
        "jobs/h",
        2,
        false,
    ),
    m(summary::MAKESPAN_S.def.name, "makespan (s)", 0, false),
    m(summary::LOSS_OF_CAPACITY.def.name, "LoC", 4, true),
    m(
        summary::LOSS_OF_CAPACITY_FRAG.def.name,
        "LoC_frag",
        4,
        false,
    ),
    m(summary::HEAD_BLOCKED_IDLE.def.name, "B", 4, false),
    m(summary::SET_FRAGMENTATION_TIME.def.name, "E_set", 4, true),
    m(summary::FRAGMENTATION_MEAN.def.name, "mean Φ", 4, true),
    m(
        summary::LARGEST_FREE_SHARE_MEAN.def.name,
        "mean L",
        4,
        false,
    ),
    m(summary::SPANNING_FRACTION.def.name, "spanning", 4, true),
    m(summary::SETS_SPANNED_MEAN.def.name, "mean S", 3, false),
    m(summary::KILLED_FRACTION.def.name, "killed", 4, false),
];

/// One configuration's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigRow {
    /// The configuration.
    pub config: String,
    /// The policy column of its runs.
    pub policy: String,
    /// Its runs (replicates).
    pub runs: usize,
    /// Per entry of [`METRICS`], the mean and interval over its runs.
    pub metrics: Vec<MeanCi>,
}

/// Per configuration and size class, the distribution of wait and bounded slowdown over all
/// its runs' jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeClassRow {
    /// The configuration.
    pub config: String,
    /// `serial`, `one set`, `multi-set` or `parallel`.
    pub size_class: String,
    /// Wait, seconds.
    pub wait: Quantiles,
    /// Bounded slowdown.
    pub bsd: Quantiles,
}

/// Per configuration, one user's or one queue's waits (waits.parquet), over its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRow {
    /// The configuration.
    pub config: String,
    /// `user` or `queue`.
    pub by: String,
    /// The user's number or the queue's name.
    pub key: String,
    /// Its jobs per run, on average.
    pub jobs: f64,
    /// Its mean wait, averaged over the runs, seconds.
    pub wait_mean_s: f64,
}

/// Everything the report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The results directory.
    pub root: PathBuf,
    /// The scenario names found.
    pub scenarios: Vec<String>,
    /// Runs read.
    pub runs: usize,
    /// Per configuration, in order of first appearance.
    pub configs: Vec<ConfigRow>,
    /// Wait and BSD by size class.
    pub size_classes: Vec<SizeClassRow>,
    /// Waits by user and by queue, from the runs that wrote waits.parquet.
    pub groups: Vec<GroupRow>,
    /// Per configuration: the share of its jobs spanning 1, 2, 3 and 4 or more sets.
    pub sets_spanned: Vec<[f64; 4]>,
    /// Per configuration: the share of its jobs that ran on vnodes of different speeds (node
    /// generations mixed: `speed_spread` > 0), over every run's started jobs.
    pub speeds_mixed: Vec<f64>,
    /// Per configuration whose runs kept their vnodes: where its first run's jobs ran over one
    /// window, the same for all (see [`crate::picture`]).
    pub pictures: Vec<(String, crate::picture::Picture)>,
    /// Per configuration, a job explained on its first run (`report --explain JOB`), as
    /// [`crate::explain`] writes it; empty unless asked for.
    pub explained: Vec<(String, String)>,
    /// Per configuration: (days since the window start, mean utilization over replicates).
    pub utilization: Vec<Vec<(f64, f64)>>,
    /// Per configuration: (days, mean Φ over replicates).
    pub fragmentation: Vec<Vec<(f64, f64)>>,
}

impl Comparison {
    /// Each configuration after the first, against the first, in summary `column` (one of
    /// [`METRICS`]): the change of its mean in percent of the first's mean, and its 95 %
    /// interval's half-width in percent of the first's mean. Empty for a column the report
    /// does not compare or with no configuration.
    pub fn changes_against_first(&self, column: &str) -> Vec<crate::svg::Change> {
        let (Some(i), Some(first)) = (
            METRICS.iter().position(|m| m.column == column),
            self.configs.first(),
        ) else {
            return Vec::new();
        };
        let base = first.metrics[i].mean;
        self.configs
            .iter()
            .skip(1)
            .map(|r| crate::svg::Change {
                name: r.config.clone(),
                percent: 100.0 * (r.metrics[i].mean / base - 1.0),
                half_width: r.metrics[i].half_width.map(|h| 100.0 * h / base),
            })
            .collect()
    }
}

/// `items` without repeats, each where it first appears.
pub(crate) fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// A lazy scan of one file. The configuration comes from [`discover`], so polars' own hive
/// parsing of the path is off.
fn scan(path: &Path) -> PolarsResult<LazyFrame> {
    let args = ScanArgsParquet {
        hive_options: HiveOptions::new_disabled(),
        ..ScanArgsParquet::default()
    };
    LazyFrame::scan_parquet(PlRefPath::new(path.to_string_lossy().as_ref()), args)
}

/// Scans `file` in every run, with the run's configuration as column `config`.
fn scan_all(runs: &[RunDir], file: &str, columns: &[&str]) -> PolarsResult<LazyFrame> {
    let frames = runs
        .iter()
        .map(|r| {
            let select: Vec<Expr> = columns.iter().map(|c| col(*c)).collect();
            Ok(scan(&r.dir.join(file))?
                .select(select)
                .with_column(lit(r.config.as_str()).alias("config")))
        })
        .collect::<PolarsResult<Vec<_>>>()?;
    concat(frames, UnionArgs::default())
}

use crate::f64_column as f64s;

fn strs(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    let s = df.column(name)?.as_materialized_series().clone();
    let ca = s.str()?;
    Ok((0..ca.len())
        .map(|i| ca.get(i).unwrap_or_default().to_owned())
        .collect())
}

/// Reads the runs under `root` and compares them.
pub fn compare(root: &Path) -> Result<Comparison, ReportError> {
    compare_over(root, None, None)
}

/// As [`compare`], with the placement pictures over `window` (seconds, [start, end)); by
/// default the busiest day of the first configuration's first run. With `explain`, that job
/// is explained for each configuration's first run ([`crate::explain`]).
pub fn compare_over(
    root: &Path,
    window: Option<(u64, u64)>,
    explain: Option<u64>,
) -> Result<Comparison, ReportError> {
    let runs = discover(root)?;
    let err = |source| ReportError::Polars {
        path: root.to_owned(),
        source,
    };
    // A sweep's grid order (configs.txt), then any other configuration in path order.
    let listed = std::fs::read_to_string(root.join("configs.txt")).unwrap_or_default();
    let order: Vec<String> = listed
        .lines()
        .map(str::to_owned)
        .filter(|c| runs.iter().any(|r| &r.config == c))
        .chain(runs.iter().map(|r| r.config.clone()))
        .collect();
    let order = distinct(order);
    let index_of = |config: &str| order.iter().position(|c| c == config).unwrap_or(0);
    let mut columns: Vec<&str> = METRICS.iter().map(|m| m.column).collect();
    columns.extend([summary::SCENARIO.def.name, summary::POLICY.def.name]);
    // Each run's files are checked on their own first, so that a missing file or column
    // names its file.
    for r in &runs {
        for file in ["jobs.parquet", "timeseries.parquet"] {
            let path = r.dir.join(file);
            if !path.is_file() {
                return Err(ReportError::Io {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "missing beside summary.parquet (a run from before placesim wrote it, or an interrupted copy)",
                    ),
                });
            }
        }
        let path = r.dir.join("summary.parquet");
        scan(&path)
            .and_then(|lf| {
                lf.select(columns.iter().map(|c| col(*c)).collect::<Vec<_>>())
                    .limit(0)
                    .collect()
            })
            .map_err(|source| ReportError::Polars { path, source })?;
    }
    let mut aggs: Vec<Expr> = vec![
        len().alias("runs"),
        col(summary::POLICY.def.name).first().alias("policy"),
        col(summary::SCENARIO.def.name).first().alias("scenario"),
    ];
    for metric in &METRICS {
        let c = metric.column;
        aggs.push(
            col(c)
                .cast(DataType::Float64)
                .mean()
                .alias(format!("{c}:mean")),
        );
        aggs.push(
            col(c)
                .cast(DataType::Float64)
                .std(1)
                .alias(format!("{c}:std")),
        );
        aggs.push(col(c).count().alias(format!("{c}:n")));
    }
    let summaries = scan_all(&runs, "summary.parquet", &columns)
        .map_err(err)?
        .group_by_stable([col("config")])
        .agg(aggs)
        .collect()
        .map_err(err)?;
    // Each configuration's scenario, in order of first appearance, each once.
    let scenarios = distinct(strs(&summaries, "scenario").map_err(err)?);
    let configs = (|| -> PolarsResult<Vec<ConfigRow>> {
        let names = strs(&summaries, "config")?;
        let policies = strs(&summaries, "policy")?;
        let counts = f64s(&summaries, "runs")?;
        let mut per_metric = Vec::new();
        for metric in &METRICS {
            let c = metric.column;
            per_metric.push((
                f64s(&summaries, &format!("{c}:mean"))?,
                f64s(&summaries, &format!("{c}:std"))?,
                f64s(&summaries, &format!("{c}:n"))?,
            ));
        }
        let mut rows: Vec<ConfigRow> = (0..names.len())
            .map(|i| ConfigRow {
                config: names[i].clone(),
                policy: policies[i].clone(),
                runs: counts[i].unwrap_or(0.0) as usize,
                metrics: per_metric
                    .iter()
                    .map(|(mean, std, n)| {
                        MeanCi::from_moments(
                            mean[i].unwrap_or(f64::NAN),
                            std[i],
                            n[i].unwrap_or(0.0) as usize,
                        )
                    })
                    .collect(),
            })
            .collect();
        rows.sort_by_key(|r| index_of(&r.config));
        Ok(rows)
    })()
    .map_err(err)?;
    let size_classes = size_class_rows(&runs).map_err(err)?;
    let groups = group_rows(&runs).map_err(err)?;
    // Sets spanned and node speeds mixed, from one scan of the jobs.
    let mut sets_spanned = vec![[0.0; 4]; order.len()];
    let mut speeds_mixed = vec![0.0; order.len()];
    let spans = scan_all(
        &runs,
        "jobs.parquet",
        &[jobs::SETS_SPANNED.name, jobs::SPEED_SPREAD.name],
    )
    .map_err(err)?
    .filter(col(jobs::SETS_SPANNED.name).is_not_null())
    .with_column(
        when(col(jobs::SETS_SPANNED.name).gt(lit(4u32)))
            .then(lit(4u32))
            .otherwise(col(jobs::SETS_SPANNED.name).cast(DataType::UInt32))
            .alias("s"),
    )
    .group_by([col("config"), col("s")])
    .agg([
        len().alias("jobs"),
        col(jobs::SPEED_SPREAD.name)
            .gt(lit(0.0))
            .cast(DataType::Float64)
            .sum()
            .alias("mixed"),
    ])
    .collect()
    .map_err(err)?;
    {
        let c = strs(&spans, "config").map_err(err)?;
        let s = f64s(&spans, "s").map_err(err)?;
        let j = f64s(&spans, "jobs").map_err(err)?;
        let m = f64s(&spans, "mixed").map_err(err)?;
        for (((c, s), j), m) in c.iter().zip(s).zip(j).zip(m) {
            let bucket = (s.unwrap_or(1.0) as usize).clamp(1, 4) - 1;
            sets_spanned[index_of(c)][bucket] += j.unwrap_or(0.0);
            speeds_mixed[index_of(c)] += m.unwrap_or(0.0);
        }
        for (row, mixed) in sets_spanned.iter_mut().zip(&mut speeds_mixed) {
            let total: f64 = row.iter().sum();
            if total > 0.0 {
                row.iter_mut().for_each(|x| *x /= total);
                *mixed /= total;
            }
        }
    }
    let pictures = pictures(&runs, &order, window)?;
    let mut explained = Vec::new();
    if let Some(job) = explain {
        for config in &order {
            if let Some(run) = runs.iter().find(|r| &r.config == config) {
                explained.push((config.clone(), crate::explain(&run.dir, job)?));
            }
        }
    }
    let (utilization, fragmentation) = time_series(&runs, &order).map_err(err)?;
    Ok(Comparison {
        root: root.to_owned(),
        scenarios,
        runs: runs.len(),
        configs,
        size_classes,
        groups,
        sets_spanned,
        speeds_mixed,
        pictures,
        explained,
        utilization,
        fragmentation,
    })
}

/// The placement picture of each configuration's first run, over `window` or the busiest day
/// of the first configuration's first run; configurations whose runs did not keep their
/// vnodes (no `exec_vnode`) or predate vnodes.parquet have none.
fn pictures(
    runs: &[RunDir],
    order: &[String],
    window: Option<(u64, u64)>,
) -> Result<Vec<(String, crate::picture::Picture)>, ReportError> {
    let mut out = Vec::new();
    let mut window = window;
    for config in order {
        let Some(run) = runs.iter().find(|r| &r.config == config) else {
            continue;
        };
        let vnodes_path = run.dir.join("vnodes.parquet");
        if !vnodes_path.is_file() {
            continue;
        }
        let jobs_path = run.dir.join("jobs.parquet");
        if !crate::any_exec_vnode(&jobs_path)? {
            continue;
        }
        let placements = crate::read_placements(&jobs_path)?;
        let cluster = crate::picture::read_vnodes(&vnodes_path)?;
        let w = *window.get_or_insert_with(|| crate::picture::busiest_day(&placements));
        out.push((
            config.clone(),
            crate::picture::picture(&cluster, &placements, w),
        ));
    }
    Ok(out)
}

/// Quantiles of wait and BSD per configuration and size class, over every job that ran.
fn size_class_rows(runs: &[RunDir]) -> PolarsResult<Vec<SizeClassRow>> {
    let qs = [0.1, 0.25, 0.5, 0.75, 0.9];
    let mut aggs = vec![len().alias("n")];
    for (c, short) in [(jobs::WAIT_S.name, "w"), (jobs::BOUNDED_SLOWDOWN.name, "b")] {
        for q in qs {
            aggs.push(
                col(c)
                    .cast(DataType::Float64)
                    .quantile(lit(q), QuantileMethod::Nearest)
                    .alias(format!("{short}{q}")),
            );
        }
        aggs.push(
            col(c)
                .cast(DataType::Float64)
                .mean()
                .alias(format!("{short}mean")),
        );
    }
    let df = scan_all(
        runs,
        "jobs.parquet",
        &[
            jobs::SIZE_CLASS.name,
            jobs::WAIT_S.name,
            jobs::BOUNDED_SLOWDOWN.name,
        ],
    )?
    .filter(col(jobs::WAIT_S.name).is_not_null())
    .group_by_stable([col("config"), col("size_class")])
    .agg(aggs)
    .collect()?;
    let configs = strs(&df, "config")?;
    let classes = strs(&df, "size_class")?;
    let n = f64s(&df, "n")?;
    let quantiles = |short: &str| -> PolarsResult<Vec<Quantiles>> {
        let cols = qs
            .iter()
            .map(|q| f64s(&df, &format!("{short}{q}")))
            .collect::<PolarsResult<Vec<_>>>()?;
        let mean = f64s(&df, &format!("{short}mean"))?;
        Ok((0..configs.len())
            .map(|i| Quantiles {
                q: [0, 1, 2, 3, 4].map(|k| cols[k][i].unwrap_or(0.0)),
                mean: mean[i].unwrap_or(0.0),
                n: n[i].unwrap_or(0.0) as u64,
            })
            .collect())
    };
    let (wait, bsd) = (quantiles("w")?, quantiles("b")?);
    Ok((0..configs.len())
        .map(|i| SizeClassRow {
            config: configs[i].clone(),
            size_class: classes[i].clone(),
            wait: wait[i],
            bsd: bsd[i],
        })
        .collect())
}

/// Waits by user and by queue per configuration, averaged over its runs; runs from before
/// waits.parquet are left out.
fn group_rows(runs: &[RunDir]) -> PolarsResult<Vec<GroupRow>> {
    use placesim_metrics::schema::waits;
    let with: Vec<RunDir> = runs
        .iter()
        .filter(|r| r.dir.join("waits.parquet").is_file())
        .cloned()
        .collect();
    if with.is_empty() {
        return Ok(Vec::new());
    }
    let df = scan_all(
        &with,
        "waits.parquet",
        &[
            waits::BY.name,
            waits::KEY.name,
            waits::JOBS.name,
            waits::WAIT_MEAN_S.name,
        ],
    )?
    .group_by_stable([col("config"), col(waits::BY.name), col(waits::KEY.name)])
    .agg([
        col(waits::JOBS.name)
            .cast(DataType::Float64)
            .mean()
            .alias("jobs"),
        col(waits::WAIT_MEAN_S.name).mean().alias("wait"),
    ])
    .collect()?;
    let (configs, by, keys) = (strs(&df, "config")?, strs(&df, "by")?, strs(&df, "key")?);
    let (jobs, wait) = (f64s(&df, "jobs")?, f64s(&df, "wait")?);
    Ok((0..configs.len())
        .map(|i| GroupRow {
            config: configs[i].clone(),
            by: by[i].clone(),
            key: keys[i].clone(),
            jobs: jobs[i].unwrap_or(0.0),
            wait_mean_s: wait[i].unwrap_or(0.0),
        })
        .collect())
}

/// Points per line of the time-series plots, at most.
const POINTS: u64 = 60;

type Lines = Vec<Vec<(f64, f64)>>;

/// Utilization and Φ over time per configuration: averaged over replicates at each sample
/// (polars), then over bins of equal time from the configuration's first sample, so each line
/// has at most [`POINTS`] points.
fn time_series(runs: &[RunDir], order: &[String]) -> PolarsResult<(Lines, Lines)> {
    let df = scan_all(
        runs,
        "timeseries.parquet",
        &[
            timeseries::TIME_S.name,
            timeseries::SET.name,
            timeseries::UTILIZATION.name,
            timeseries::FRAGMENTATION.name,
        ],
    )?
    .filter(col(timeseries::SET.name).is_null())
    .group_by([col("config"), col(timeseries::TIME_S.name)])
    .agg([
        col(timeseries::UTILIZATION.name).mean().alias("u"),
        col(timeseries::FRAGMENTATION.name).mean().alias("phi"),
    ])
    .sort(["config", "time_s"], SortMultipleOptions::default())
    .collect()?;
    let configs = strs(&df, "config")?;
    let t = f64s(&df, "time_s")?;
    let u = f64s(&df, "u")?;
    let phi = f64s(&df, "phi")?;
    let mut util = vec![Vec::new(); order.len()];
    let mut frag = vec![Vec::new(); order.len()];
    let mut from = 0;
    while from < configs.len() {
        let to = (from..configs.len())
            .find(|&i| configs[i] != configs[from])
            .unwrap_or(configs.len());
        if let Some(k) = order.iter().position(|c| *c == configs[from]) {
            let first = t[from].unwrap_or(0.0);
            let last = t[to - 1].unwrap_or(first);
            let bin = ((last - first) / POINTS as f64).ceil().max(1.0);
            util[k] = binned(first, bin, (from..to).map(|i| (t[i], u[i])));
            frag[k] = binned(first, bin, (from..to).map(|i| (t[i], phi[i])));
        }
        from = to;
    }
    Ok((util, frag))
}

/// Means of `points` over bins of `bin` seconds from `first`, as (days since `first`, mean);
/// points without a value are left out, and bins without any are gaps.
fn binned(
    first: f64,
    bin: f64,
    points: impl Iterator<Item = (Option<f64>, Option<f64>)>,
) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut current: Option<(f64, f64, u32)> = None;
    for (t, v) in points {
        let (Some(t), Some(v)) = (t, v) else {
            continue;
        };
        let start = first + ((t - first) / bin).floor() * bin;
        match &mut current {
            Some((s, sum, n)) if *s == start => {
                *sum += v;
                *n += 1;
            }
            _ => {
                if let Some((s, sum, n)) = current {
                    out.push(((s - first) / 86_400.0, sum / f64::from(n)));
                }
                current = Some((start, v, 1));
            }
        }
    }
    if let Some((s, sum, n)) = current {
        out.push(((s - first) / 86_400.0, sum / f64::from(n)));
    }
    out
}
