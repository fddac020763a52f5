//! Comparing runs: a results directory (one run, the demo's runs side by side, or a sweep's
//! hive-partitioned dataset) read back with polars, runs grouped by configuration, means and
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

/// What the report shows of a run measured against what really happened (summary.parquet's
/// fidelity columns; docs/import.md), in order.
pub const FIDELITY: [Metric; 8] = [
    m(summary::FIDELITY_JOBS.def.name, "jobs compared", 0, true),
    m(
        summary::START_ERROR_P50_S.def.name,
        "median start error (s)",
        0,
        true,
    ),
    m(
        summary::START_ERROR_MEAN_ABS_S.def.name,
        "mean |start error| (s)",
        0,
        true,
    ),
    m(
        summary::WAIT_ERROR_MEAN_S.def.name,
        "mean wait error (s)",
        0,
        false,
    ),
    m(
        summary::WAIT_MAPE_2W.def.name,
        "2-week wait MAPE (%)",
        1,
        true,
    ),
    m(
        summary::PLACEMENT_SAME_VNODES.def.name,
        "same vnodes",
        3,
        true,
    ),
    m(summary::PLACEMENT_SAME_SET.def.name, "same set", 3, true),
    m(
        summary::PLACEMENT_RECORDED_SPANNING.def.name,
        "recorded spanning",
        0,
        false,
    ),
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
    /// Per configuration whose runs were measured against a record: per entry of
    /// [`FIDELITY`], the mean and interval over those runs.
    pub fidelity: Vec<(String, Vec<MeanCi>)>,
    /// Per configuration whose runs wrote agreement.parquet: each key's share of jobs placed
    /// in the set they really ran in, mean and interval over the runs, keys in file order.
    pub agreement: Vec<(String, Vec<(String, MeanCi)>)>,
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

/// The `columns` of `file` in every run, each with its run's configuration, read eagerly: the
/// report's groupings are small enough to do by hand, and polars' lazy engine would bring its
/// streaming engine and with it a network stack placesim never uses (issue 20).
fn read_all<'r>(
    runs: &'r [RunDir],
    file: &str,
    columns: &[&str],
) -> Result<Vec<(&'r RunDir, PathBuf, DataFrame)>, ReportError> {
    runs.iter()
        .map(|r| {
            let path = r.dir.join(file);
            let df = crate::read_columns(&path, columns)?;
            Ok((r, path, df))
        })
        .collect()
}

use crate::f64_column as f64s;
use crate::polars_err;

/// A string column, nulls as empty strings.
fn strs(df: &DataFrame, name: &str) -> PolarsResult<Vec<String>> {
    Ok(crate::str_column(df, name)?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}

/// Values grouped by key, the groups in order of the keys' first appearance (polars'
/// `group_by_stable`).
struct Grouped<K, V> {
    keys: Vec<K>,
    values: Vec<V>,
    index: std::collections::HashMap<K, usize>,
}

impl<K: Eq + std::hash::Hash + Clone, V: Default> Grouped<K, V> {
    fn new() -> Self {
        Grouped {
            keys: Vec::new(),
            values: Vec::new(),
            index: std::collections::HashMap::new(),
        }
    }

    /// The group of `key`, a new one at the end if it is the first time.
    fn entry(&mut self, key: K) -> &mut V {
        let next = self.keys.len();
        let i = *self.index.entry(key.clone()).or_insert(next);
        if i == next {
            self.keys.push(key);
            self.values.push(V::default());
        }
        &mut self.values[i]
    }

    fn into_iter(self) -> impl Iterator<Item = (K, V)> {
        self.keys.into_iter().zip(self.values)
    }
}

/// Two measures' values present in one group (waits.parquet's jobs and mean waits, or a
/// sample's utilizations and Φs over replicates).
type TwoSeries = (Vec<f64>, Vec<f64>);

/// The mean of the values present, `None` without any.
fn mean_of(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
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
    // Each run's jobs and timeseries files are checked first, so that one missing is named
    // as missing beside its summary (a read error names its file anyway).
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
    }
    // Per configuration: its runs, its first run's policy and scenario, and per metric the
    // values its runs have.
    #[derive(Default)]
    struct Runs {
        count: usize,
        policy: String,
        scenario: String,
        values: Vec<Vec<f64>>,
    }
    let mut summaries: Grouped<String, Runs> = Grouped::new();
    for (run, path, df) in read_all(&runs, "summary.parquet", &columns)? {
        let mut read = || -> PolarsResult<()> {
            let policies = strs(&df, summary::POLICY.def.name)?;
            let scenarios = strs(&df, summary::SCENARIO.def.name)?;
            let metrics = METRICS
                .iter()
                .map(|m| f64s(&df, m.column))
                .collect::<PolarsResult<Vec<_>>>()?;
            let group = summaries.entry(run.config.clone());
            for row in 0..df.height() {
                if group.count == 0 {
                    group.policy.clone_from(&policies[row]);
                    group.scenario.clone_from(&scenarios[row]);
                    group.values = vec![Vec::new(); METRICS.len()];
                }
                group.count += 1;
                for (values, column) in group.values.iter_mut().zip(&metrics) {
                    values.extend(column[row]);
                }
            }
            Ok(())
        };
        read().map_err(polars_err(&path))?;
    }
    // Each configuration's scenario, in order of first appearance, each once.
    let mut configs: Vec<ConfigRow> = Vec::new();
    let mut scenarios = Vec::new();
    for (config, group) in summaries.into_iter() {
        scenarios.push(group.scenario);
        configs.push(ConfigRow {
            config,
            policy: group.policy,
            runs: group.count,
            metrics: (0..METRICS.len())
                .map(|m| MeanCi::of(group.values.get(m).map_or(&[][..], Vec::as_slice)))
                .collect(),
        });
    }
    let scenarios = distinct(scenarios);
    configs.sort_by_key(|r| index_of(&r.config));
    let size_classes = size_class_rows(&runs)?;
    let groups = group_rows(&runs)?;
    // Sets spanned and node speeds mixed, from one scan of the jobs.
    let mut sets_spanned = vec![[0.0; 4]; order.len()];
    let mut speeds_mixed = vec![0.0; order.len()];
    for (run, path, df) in read_all(
        &runs,
        "jobs.parquet",
        &[jobs::SETS_SPANNED.name, jobs::SPEED_SPREAD.name],
    )? {
        let (spanned, spread) = (|| {
            Ok::<_, PolarsError>((
                f64s(&df, jobs::SETS_SPANNED.name)?,
                f64s(&df, jobs::SPEED_SPREAD.name)?,
            ))
        })()
        .map_err(polars_err(&path))?;
        let k = index_of(&run.config);
        for (s, spread) in spanned.into_iter().zip(spread) {
            let Some(s) = s else { continue };
            let bucket = (s as usize).clamp(1, 4) - 1;
            sets_spanned[k][bucket] += 1.0;
            if spread.is_some_and(|x| x > 0.0) {
                speeds_mixed[k] += 1.0;
            }
        }
    }
    for (row, mixed) in sets_spanned.iter_mut().zip(&mut speeds_mixed) {
        let total: f64 = row.iter().sum();
        if total > 0.0 {
            row.iter_mut().for_each(|x| *x /= total);
            *mixed /= total;
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
    let (utilization, fragmentation) = time_series(&runs, &order)?;
    let fidelity = fidelity_rows(&runs, &order);
    let agreement = agreement_rows(&runs, &order);
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
        fidelity,
        agreement,
    })
}

/// Each configuration's placement agreement per key (agreement.parquet), over its runs;
/// runs without the file, and keys with no job recorded in one set, add nothing.
fn agreement_rows(runs: &[RunDir], order: &[String]) -> Vec<(String, Vec<(String, MeanCi)>)> {
    use placesim_metrics::schema::agreement;
    let mut per_config: Vec<Vec<(String, Vec<f64>)>> = vec![Vec::new(); order.len()];
    for r in runs {
        let Some(k) = order.iter().position(|c| *c == r.config) else {
            continue;
        };
        let path = r.dir.join("agreement.parquet");
        let Ok(df) = crate::read_columns(&path, &[agreement::KEY.name, agreement::SAME_SET.name])
        else {
            continue;
        };
        let (Ok(keys), Ok(shares)) = (
            strs(&df, agreement::KEY.name),
            f64s(&df, agreement::SAME_SET.name),
        ) else {
            continue;
        };
        for (key, share) in keys.into_iter().zip(shares) {
            let Some(share) = share else { continue };
            match per_config[k].iter_mut().find(|(name, _)| *name == key) {
                Some((_, values)) => values.push(share),
                None => per_config[k].push((key, vec![share])),
            }
        }
    }
    order
        .iter()
        .zip(per_config)
        .filter(|(_, keys)| !keys.is_empty())
        .map(|(config, keys)| {
            let keys = keys
                .into_iter()
                .map(|(key, values)| (key, MeanCi::of(&values)))
                .collect();
            (config.clone(), keys)
        })
        .collect()
}

/// The fidelity figures of each configuration whose runs were measured against a record.
/// Runs from before the columns existed, or never measured (null), add nothing.
fn fidelity_rows(runs: &[RunDir], order: &[String]) -> Vec<(String, Vec<MeanCi>)> {
    let columns: Vec<&str> = FIDELITY.iter().map(|m| m.column).collect();
    let mut values: Vec<Vec<Vec<f64>>> = vec![vec![Vec::new(); FIDELITY.len()]; order.len()];
    for r in runs {
        let Some(k) = order.iter().position(|c| *c == r.config) else {
            continue;
        };
        let Ok(df) = crate::read_columns(&r.dir.join("summary.parquet"), &columns) else {
            continue;
        };
        for (i, column) in columns.iter().enumerate() {
            if let Ok(v) = f64s(&df, column) {
                values[k][i].extend(v.into_iter().flatten());
            }
        }
    }
    order
        .iter()
        .zip(values)
        .filter(|(_, v)| !v[0].is_empty())
        .map(|(config, v)| (config.clone(), v.iter().map(|x| MeanCi::of(x)).collect()))
        .collect()
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
fn size_class_rows(runs: &[RunDir]) -> Result<Vec<SizeClassRow>, ReportError> {
    /// One group's jobs that ran, and their waits and slowdowns present.
    #[derive(Default)]
    struct Jobs {
        ran: u64,
        waits: Vec<f64>,
        slowdowns: Vec<f64>,
    }
    let mut groups: Grouped<(String, String), Jobs> = Grouped::new();
    for (run, path, df) in read_all(
        runs,
        "jobs.parquet",
        &[
            jobs::SIZE_CLASS.name,
            jobs::WAIT_S.name,
            jobs::BOUNDED_SLOWDOWN.name,
        ],
    )? {
        let mut read = || -> PolarsResult<()> {
            let classes = strs(&df, jobs::SIZE_CLASS.name)?;
            let waits = f64s(&df, jobs::WAIT_S.name)?;
            let slowdowns = f64s(&df, jobs::BOUNDED_SLOWDOWN.name)?;
            for ((class, wait), slowdown) in classes.into_iter().zip(waits).zip(slowdowns) {
                let Some(wait) = wait else { continue };
                let group = groups.entry((run.config.clone(), class));
                group.ran += 1;
                group.waits.push(wait);
                group.slowdowns.extend(slowdown);
            }
            Ok(())
        };
        read().map_err(polars_err(&path))?;
    }
    let quantiles = |values: &mut Vec<f64>, n: u64| {
        values.sort_by(f64::total_cmp);
        Quantiles {
            q: [0.1, 0.25, 0.5, 0.75, 0.9].map(|q| crate::stats::quantile_nearest(values, q)),
            mean: mean_of(values).unwrap_or(0.0),
            n,
        }
    };
    Ok(groups
        .into_iter()
        .map(|((config, size_class), mut group)| SizeClassRow {
            config,
            size_class,
            wait: quantiles(&mut group.waits, group.ran),
            bsd: quantiles(&mut group.slowdowns, group.ran),
        })
        .collect())
}

/// Waits by user and by queue per configuration, averaged over its runs; runs from before
/// waits.parquet are left out.
fn group_rows(runs: &[RunDir]) -> Result<Vec<GroupRow>, ReportError> {
    use placesim_metrics::schema::waits;
    let with: Vec<RunDir> = runs
        .iter()
        .filter(|r| r.dir.join("waits.parquet").is_file())
        .cloned()
        .collect();
    // Per (configuration, by, key): its jobs and its mean wait in each run that has them.
    let mut groups: Grouped<(String, String, String), TwoSeries> = Grouped::new();
    for (run, path, df) in read_all(
        &with,
        "waits.parquet",
        &[
            waits::BY.name,
            waits::KEY.name,
            waits::JOBS.name,
            waits::WAIT_MEAN_S.name,
        ],
    )? {
        let mut read = || -> PolarsResult<()> {
            let (by, keys) = (strs(&df, waits::BY.name)?, strs(&df, waits::KEY.name)?);
            let jobs = f64s(&df, waits::JOBS.name)?;
            let wait = f64s(&df, waits::WAIT_MEAN_S.name)?;
            for (((by, key), jobs), wait) in by.into_iter().zip(keys).zip(jobs).zip(wait) {
                let (all_jobs, all_waits) = groups.entry((run.config.clone(), by, key));
                all_jobs.extend(jobs);
                all_waits.extend(wait);
            }
            Ok(())
        };
        read().map_err(polars_err(&path))?;
    }
    Ok(groups
        .into_iter()
        .map(|((config, by, key), (jobs, waits))| GroupRow {
            config,
            by,
            key,
            jobs: mean_of(&jobs).unwrap_or(0.0),
            wait_mean_s: mean_of(&waits).unwrap_or(0.0),
        })
        .collect())
}

/// Points per line of the time-series plots, at most.
const POINTS: u64 = 60;

type Lines = Vec<Vec<(f64, f64)>>;

/// Utilization and Φ over time per configuration: averaged over replicates at each sample
/// (polars), then over bins of equal time from the configuration's first sample, so each line
/// has at most [`POINTS`] points.
fn time_series(runs: &[RunDir], order: &[String]) -> Result<(Lines, Lines), ReportError> {
    /// Per sample time: the utilizations and Φs of the replicates that have them.
    type Samples = std::collections::BTreeMap<u64, TwoSeries>;
    let mut per_config: Vec<Samples> = vec![Samples::new(); order.len()];
    for (run, path, df) in read_all(
        runs,
        "timeseries.parquet",
        &[
            timeseries::TIME_S.name,
            timeseries::SET.name,
            timeseries::UTILIZATION.name,
            timeseries::FRAGMENTATION.name,
        ],
    )? {
        let Some(k) = order.iter().position(|c| *c == run.config) else {
            continue;
        };
        let mut read = || -> PolarsResult<()> {
            let times = crate::u64_column(&df, timeseries::TIME_S.name)?;
            let sets = df.column(timeseries::SET.name)?;
            let u = f64s(&df, timeseries::UTILIZATION.name)?;
            let phi = f64s(&df, timeseries::FRAGMENTATION.name)?;
            for (row, time) in times.into_iter().enumerate() {
                // The whole cluster's rows only (a set's rows name their set).
                let Some(time) = time.filter(|_| sets.get(row).is_ok_and(|v| v.is_null())) else {
                    continue;
                };
                let (us, phis) = per_config[k].entry(time).or_default();
                us.extend(u[row]);
                phis.extend(phi[row]);
            }
            Ok(())
        };
        read().map_err(polars_err(&path))?;
    }
    let mut util = vec![Vec::new(); order.len()];
    let mut frag = vec![Vec::new(); order.len()];
    for (k, samples) in per_config.iter().enumerate() {
        let (Some(first), Some(last)) = (samples.keys().next(), samples.keys().next_back()) else {
            continue;
        };
        let (first, last) = (*first as f64, *last as f64);
        let bin = ((last - first) / POINTS as f64).ceil().max(1.0);
        let points = |pick: fn(&TwoSeries) -> &Vec<f64>| {
            samples
                .iter()
                .map(move |(t, values)| (Some(*t as f64), mean_of(pick(values))))
        };
        util[k] = binned(first, bin, points(|v| &v.0));
        frag[k] = binned(first, bin, points(|v| &v.1));
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
