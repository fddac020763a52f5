//! The per-run summary, computed in plain Rust so that it can be printed without polars.

use crate::OccupancyStats;
use crate::sink::JobSink;
use placesim_core::{RunStats, SimTime, Workload};

/// The τ of bounded slowdown, in seconds (Feitelson et al. 1997; Mu'alem & Feitelson 2001).
pub const BSD_TAU_SECS: u64 = 10;

/// What identifies a run in every output row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMeta {
    /// The scenario name (for a plain trace replay, the trace's file stem).
    pub scenario: String,
    /// The policy name, e.g. `easy`.
    pub policy: String,
    /// The run's seed.
    pub seed: u64,
    /// The workload's source.
    pub trace: String,
    /// Processors (total ncpus) of the machine.
    pub procs: u64,
}

/// Wall-clock measurements of a run. They vary from run to run, so they are kept apart from
/// the simulated results, and written as nulls when absent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Seconds of wall time the simulation took.
    pub wall_seconds: f64,
}

/// Skipped-record counts, as `(column suffix, count)`, in a fixed order.
pub type SkipColumn = (&'static str, u64);

/// One row of summary.parquet.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    /// Run identifiers.
    pub meta: RunMeta,
    /// Job records read from the trace.
    pub records: u64,
    /// Jobs that ran to their end (finished or killed).
    pub jobs_run: u64,
    /// Jobs killed at their walltime.
    pub jobs_killed: u64,
    /// Jobs that never started (the policy could not place them).
    pub jobs_never_started: u64,
    /// Jobs the server refused at submission (PBS `max_queued`, a reservation's queue gone).
    pub jobs_rejected: u64,
    /// Jobs deleted while they waited (a reservation's queue at its end).
    pub jobs_deleted: u64,
    /// Jobs ended by a vnode failure (when failures kill rather than requeue).
    pub jobs_failed: u64,
    /// Times a vnode failure sent a job back to the queue.
    pub requeues: u64,
    /// Core-seconds of runs cut short by vnode failures.
    pub lost_core_s: u64,
    /// 1 − down ncpu-seconds / (cluster ncpus × (last event − first submit)).
    pub availability: f64,
    /// Records skipped, by reason.
    pub skipped: Vec<SkipColumn>,
    /// max end − min submit over jobs run, seconds.
    pub makespan_s: u64,
    /// Σ size × (end − start) / (procs × makespan).
    pub utilization: f64,
    /// Mean wait, seconds.
    pub wait_mean_s: f64,
    /// Median wait, seconds (mean of the two middle values for an even count).
    pub wait_median_s: f64,
    /// 95th percentile wait, seconds (nearest rank).
    pub wait_p95_s: f64,
    /// Mean bounded slowdown with τ = 10 s.
    pub bsd_mean: f64,
    /// Jobs run per hour of makespan.
    pub throughput_jobs_per_hour: f64,
    /// The measurement window and what was measured in it.
    pub window: WindowMetrics,
    /// Simulated events processed.
    pub events: u64,
    /// Scheduling passes run.
    pub passes: u64,
    /// Wall-clock figures, if measured.
    pub timing: Option<Timing>,
    /// The waits of the window's jobs by user and by queue (waits.parquet), once
    /// [`RunSummary::with_groups`] computed them.
    pub groups: Vec<GroupWaits>,
    /// How close the run came to what really happened, for a run with a recorded file
    /// ([`RunSummary::with_fidelity`]).
    pub fidelity: Option<crate::Fidelity>,
}

/// The wait statistics of one group of jobs (one user's, one queue's) among those the window
/// measures: a fairness effect shows as groups waiting differently.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupWaits {
    /// What the jobs are grouped by: `user` or `queue`.
    pub by: &'static str,
    /// The group: a user's number (SWF field 12, `unknown` where none), a queue's name
    /// (`default` for jobs in none).
    pub key: String,
    /// Its jobs submitted in the window that ran.
    pub jobs: u64,
    /// Their wait: mean, median, 95th percentile (nearest rank), seconds.
    pub wait_mean_s: f64,
    /// Median wait, seconds.
    pub wait_median_s: f64,
    /// 95th percentile wait, seconds.
    pub wait_p95_s: f64,
    /// Their mean bounded slowdown.
    pub bsd_mean: f64,
}

/// The metrics over the measurement window [t₀, t₁] (the whole run unless a warm-up or a
/// cool-down is trimmed): job statistics over the jobs submitted in it, system metrics from
/// the occupancy integrals over it. Formulas in docs/output-schema.md.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowMetrics {
    /// t₀, seconds.
    pub start_s: u64,
    /// t₁, seconds.
    pub end_s: u64,
    /// Jobs submitted in [t₀, t₁] that ran: the population of the job statistics below.
    pub jobs: u64,
    /// Their wait: mean, median, 95th and 99th percentiles (nearest rank), seconds.
    pub wait_mean_s: f64,
    /// Median wait.
    pub wait_median_s: f64,
    /// 95th percentile wait.
    pub wait_p95_s: f64,
    /// 99th percentile wait.
    pub wait_p99_s: f64,
    /// Their bounded slowdown: mean, median, 95th and 99th percentiles.
    pub bsd_mean: f64,
    /// Median bounded slowdown.
    pub bsd_median: f64,
    /// 95th percentile bounded slowdown.
    pub bsd_p95: f64,
    /// 99th percentile bounded slowdown.
    pub bsd_p99: f64,
    /// Share of them killed at their walltime.
    pub killed_fraction: f64,
    /// Share of them spanning more than one set (S > 1).
    pub spanning_fraction: f64,
    /// Mean S.
    pub sets_spanned_mean: f64,
    /// Mean X.
    pub cross_set_pairs_mean: f64,
    /// Jobs ending in the window per hour.
    pub throughput_jobs_per_hour: f64,
    /// Work done in the window, in core-hours (trace runtime) per hour.
    pub work_core_hours_per_hour: f64,
    /// U_alloc: ncpus held by jobs, time-averaged, over the cluster's ncpus.
    pub utilization_allocated: f64,
    /// U_useful: work in trace-runtime ncpu-seconds over the cluster's ncpu-seconds.
    pub utilization_useful: f64,
    /// η = U_useful / U_alloc.
    pub efficiency: f64,
    /// The occupancy integrals over the window: the time-integral metrics (LoC, B, E_set, Φ,
    /// L, queue length) are their fractions, computed where summary.parquet declares them
    /// ([`crate::schema::summary`]).
    pub occupancy: OccupancyStats,
}

impl RunSummary {
    /// Computes the summary of a finished run.
    pub fn compute(
        meta: RunMeta,
        workload: &Workload,
        sink: &JobSink,
        stats: &RunStats,
        records: u64,
        skipped: Vec<SkipColumn>,
        timing: Option<Timing>,
    ) -> RunSummary {
        // The window first: each statistic's buffer is freed before the next is filled, so
        // the summary holds one sample of the jobs at a time (8 bytes a job), however many it
        // reports on. It runs while the last row groups encode, often the run's peak.
        let window = WindowMetrics::compute(workload, sink, stats, meta.procs);
        let mut n = 0usize;
        let mut bsd_sum = 0.0;
        let mut busy = 0u128;
        let mut first_submit = u64::MAX;
        let mut last_end = 0u64;
        for (i, job) in workload.jobs().iter().enumerate() {
            let Some((start, end)) = sink.span(i) else {
                continue;
            };
            let submit = job.submit.as_secs();
            let wait = start.as_secs() - submit;
            let run = end.as_secs() - start.as_secs();
            n += 1;
            bsd_sum += bounded_slowdown(wait, run);
            busy += u128::from(job.size) * u128::from(run);
            first_submit = first_submit.min(submit);
            last_end = last_end.max(end.as_secs());
        }
        let makespan = if n == 0 { 0 } else { last_end - first_submit };
        // Unless a warm-up or cool-down trims it, the window measures every job that ran
        // (its jobs are among them, so as many are the same): its statistics are these, over
        // the same waits in the same order, and are not ranked again (at a run's end, on the
        // way to the process's).
        let (wait_mean_s, wait_median_s, wait_p95_s, bsd_mean) = if window.jobs == n as u64 {
            (
                window.wait_mean_s,
                window.wait_median_s,
                window.wait_p95_s,
                window.bsd_mean,
            )
        } else {
            let mut waits: Vec<f64> = Window::EVERY_JOB
                .samples(workload, sink)
                .map(|(_, wait, _)| wait as f64)
                .collect();
            let mut waits = Sample::new(&mut waits);
            (
                waits.mean,
                waits.median(),
                waits.nearest_rank(0.95),
                mean_of_sum(bsd_sum, n),
            )
        };
        RunSummary {
            records,
            jobs_run: n as u64,
            jobs_killed: stats.jobs_killed,
            jobs_never_started: stats.never_started.len() as u64,
            jobs_rejected: stats.rejected.len() as u64,
            jobs_deleted: stats.deleted.len() as u64,
            jobs_failed: stats.jobs_failed,
            requeues: stats.requeues,
            lost_core_s: stats.lost_core_seconds,
            availability: stats.availability(),
            skipped,
            makespan_s: makespan,
            utilization: if makespan == 0 || meta.procs == 0 {
                0.0
            } else {
                busy as f64 / (meta.procs as f64 * makespan as f64)
            },
            wait_mean_s,
            wait_median_s,
            wait_p95_s,
            bsd_mean,
            throughput_jobs_per_hour: if makespan == 0 {
                0.0
            } else {
                n as f64 * 3600.0 / makespan as f64
            },
            window,
            events: stats.events,
            passes: stats.passes,
            timing,
            meta,
            groups: Vec::new(),
            fidelity: None,
        }
    }

    /// This summary with the comparison of the run with what really happened
    /// ([`crate::fidelity`]).
    pub fn with_fidelity(mut self, fidelity: crate::Fidelity) -> Self {
        self.fidelity = Some(fidelity);
        self
    }

    /// This summary with the waits of the window's jobs by user and by PBS queue
    /// (`queue_names`, by index): users by number, then `unknown`; queues in order, then
    /// `default`.
    pub fn with_groups(
        mut self,
        workload: &Workload,
        sink: &JobSink,
        queue_names: &[String],
    ) -> Self {
        let (t0, t1) = (self.window.start_s, self.window.end_s);
        let user = |i: usize| workload.jobs()[i].user().map_or(u64::MAX, u64::from);
        let user_text = |rank: u64| match rank {
            u64::MAX => "unknown".to_owned(),
            u => u.to_string(),
        };
        let queue = |i: usize| {
            workload
                .request_of(placesim_core::JobId(i as u32))
                .queue
                .filter(|&q| (q as usize) < queue_names.len())
                .map_or(u64::MAX, u64::from)
        };
        let queue_text = |rank: u64| match queue_names.get(rank as usize) {
            Some(name) if rank != u64::MAX => name.clone(),
            _ => "default".to_owned(),
        };
        let mut buffer = Vec::new();
        let window = Window { t0, t1 };
        for (by, rank, text) in [
            (
                "user",
                &user as &dyn Fn(usize) -> u64,
                &user_text as &dyn Fn(u64) -> String,
            ),
            ("queue", &queue, &queue_text),
        ] {
            let groups = match one_group(rank, workload.jobs().len()) {
                // Every job is in one group: its jobs in the window are the window's, whose
                // statistics are computed already (over the same waits in the same order).
                Some(r) if self.window.jobs > 0 => vec![GroupWaits {
                    by,
                    key: text(r),
                    jobs: self.window.jobs,
                    wait_mean_s: self.window.wait_mean_s,
                    wait_median_s: self.window.wait_median_s,
                    wait_p95_s: self.window.wait_p95_s,
                    bsd_mean: self.window.bsd_mean,
                }],
                Some(_) => Vec::new(),
                None => group_waits(by, rank, text, workload, sink, window, &mut buffer),
            };
            self.groups.extend(groups);
        }
        self
    }

    /// Events per wall second, if timed.
    pub fn events_per_second(&self) -> Option<f64> {
        self.timing
            .map(|t| self.events as f64 / t.wall_seconds.max(1e-9))
    }

    /// Records skipped for `reason` (0 if the summary does not list it).
    pub fn skipped_count(&self, reason: &str) -> u64 {
        self.skipped
            .iter()
            .find(|(r, _)| *r == reason)
            .map_or(0, |&(_, n)| n)
    }

    /// Jobs per wall second, if timed.
    pub fn jobs_per_second(&self) -> Option<f64> {
        self.timing
            .map(|t| self.jobs_run as f64 / t.wall_seconds.max(1e-9))
    }
}

impl WindowMetrics {
    fn compute(workload: &Workload, sink: &JobSink, stats: &RunStats, procs: u64) -> Self {
        let jobs = workload.jobs();
        let first_submit = jobs.first().map_or(0, |j| j.submit.as_secs());
        let occupancy = sink.occupancy(stats.last_event).unwrap_or(OccupancyStats {
            window_start: SimTime(first_submit),
            window_end: stats.last_event.max(SimTime(first_submit)),
            capacity_ncpus: procs,
            ..OccupancyStats::default()
        });
        let (t0, t1) = (
            occupancy.window_start.as_secs(),
            occupancy.window_end.as_secs(),
        );
        let span = t1.saturating_sub(t0);
        let (mut ended_in, mut useful) = (0u64, 0.0f64);
        for (i, job) in jobs.iter().enumerate() {
            let Some((start, end)) = sink.span(i) else {
                continue;
            };
            let (start, end) = (start.as_secs(), end.as_secs());
            let factors = sink.factors(i);
            // Work: the time run in the window, at the pace the runtime model allowed.
            let overlap = end.min(t1).saturating_sub(start.max(t0));
            let stretch =
                f64::from(factors.speed) * f64::from(factors.comm) * f64::from(factors.noise);
            useful += f64::from(job.size) * overlap as f64 / stretch.max(f64::MIN_POSITIVE);
            if end >= t0 && end <= t1 {
                ended_in += 1;
            }
        }
        // The job statistics, over the jobs the window measures.
        let window = Window { t0, t1 };
        let mut sample = Vec::with_capacity(jobs.len());
        let (mut killed, mut spanning, mut sets_sum, mut cross_sum) = (0u64, 0u64, 0u64, 0.0);
        for (i, wait, _) in window.samples(workload, sink) {
            let factors = sink.factors(i);
            sample.push(wait as f64);
            killed += u64::from(sink.killed(i));
            spanning += u64::from(factors.sets_spanned > 1);
            sets_sum += u64::from(factors.sets_spanned);
            cross_sum += f64::from(factors.cross);
        }
        let n = sample.len();
        let per_job = |x: f64| if n == 0 { 0.0 } else { x / n as f64 };
        // The waits' statistics, then the slowdowns' in the same buffer.
        let waits = Sample::new(&mut sample).statistics();
        sample.clear();
        sample.extend(window.samples(workload, sink).map(|(_, _, bsd)| bsd));
        let bsds = Sample::new(&mut sample).statistics();
        let capacity = occupancy.capacity_ncpus as f64 * span as f64;
        let per_second = |x: f64| occupancy.per_second(x);
        let utilization_allocated = occupancy.of_capacity(occupancy.job_ncpu_seconds);
        let utilization_useful = if capacity > 0.0 {
            useful / capacity
        } else {
            0.0
        };
        WindowMetrics {
            start_s: t0,
            end_s: t1,
            jobs: n as u64,
            wait_mean_s: waits.mean,
            wait_median_s: waits.median,
            wait_p95_s: waits.p95,
            wait_p99_s: waits.p99,
            bsd_mean: bsds.mean,
            bsd_median: bsds.median,
            bsd_p95: bsds.p95,
            bsd_p99: bsds.p99,
            killed_fraction: per_job(killed as f64),
            spanning_fraction: per_job(spanning as f64),
            sets_spanned_mean: per_job(sets_sum as f64),
            cross_set_pairs_mean: per_job(cross_sum),
            throughput_jobs_per_hour: per_second(ended_in as f64 * 3600.0),
            // Core-seconds per second = core-hours per hour.
            work_core_hours_per_hour: per_second(useful),
            utilization_allocated,
            utilization_useful,
            efficiency: if utilization_allocated > 0.0 {
                utilization_useful / utilization_allocated
            } else {
                0.0
            },
            occupancy,
        }
    }
}

/// max((wait + run) / max(run, τ), 1).
pub(crate) fn bounded_slowdown(wait: u64, run: u64) -> f64 {
    ((wait + run) as f64 / run.max(BSD_TAU_SECS) as f64).max(1.0)
}

/// A sample's mean (summed in the order given), median and nearest-rank percentiles: the
/// wait and slowdown statistics of every population the summary reports. Each statistic is
/// the value at one rank of the sorted sample, found by selection in the caller's buffer
/// (O(n) a rank rather than a sort's O(n log n); up to five samples of a run's jobs are ranked
/// at its end, on the path between the simulation's end and the process's, and a sample that
/// is the window's is not ranked again). Under `total_cmp`
/// the value at a rank is one and the same however the buffer is permuted, so every rank
/// reads what a sorted copy would hold there; the tests check this against a sort.
pub(crate) struct Sample<'a> {
    values: &'a mut [f64],
    pub(crate) mean: f64,
}

impl<'a> Sample<'a> {
    pub(crate) fn new(values: &'a mut [f64]) -> Sample<'a> {
        let mean = if values.is_empty() {
            0.0
        } else {
            values.iter().sum::<f64>() / values.len() as f64
        };
        Sample { values, mean }
    }

    /// The value at 0-based `index` of the sample sorted by `total_cmp`. The selection leaves
    /// the values before `index` no greater than it, which [`Self::median`] reads.
    fn at(&mut self, index: usize) -> f64 {
        *self.values.select_nth_unstable_by(index, f64::total_cmp).1
    }

    /// The median (the mean of the two middle values for an even count); 0 when empty.
    fn median(&mut self) -> f64 {
        let n = self.values.len();
        match n {
            0 => 0.0,
            n if n % 2 == 1 => self.at(n / 2),
            n => {
                let upper = self.at(n / 2);
                // The lower middle value is the largest of those the selection put before.
                let lower = self.values[..n / 2]
                    .iter()
                    .copied()
                    .max_by(f64::total_cmp)
                    .unwrap_or(upper);
                (lower + upper) / 2.0
            }
        }
    }

    /// The value at rank ceil(q·n) (1-based); 0 when empty.
    pub(crate) fn nearest_rank(&mut self, q: f64) -> f64 {
        let n = self.values.len();
        if n == 0 {
            return 0.0;
        }
        self.at(((q * n as f64).ceil() as usize).clamp(1, n) - 1)
    }

    /// What the window reports of a sample, read before its buffer is used again.
    fn statistics(&mut self) -> Statistics {
        Statistics {
            mean: self.mean,
            median: self.median(),
            p95: self.nearest_rank(0.95),
            p99: self.nearest_rank(0.99),
        }
    }
}

/// A sample's mean, median and 95th and 99th percentiles (nearest rank).
struct Statistics {
    mean: f64,
    median: f64,
    p95: f64,
    p99: f64,
}

/// A mean from its sum, 0 for an empty sample, as [`Sample`] gives it: every value summed
/// (waits and slowdowns are never −0, so a sum from 0 is the standard library's).
fn mean_of_sum(sum: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The measurement window, in seconds: the job statistics describe the jobs submitted in
/// [t0, t1] that ran.
#[derive(Clone, Copy)]
struct Window {
    t0: u64,
    t1: u64,
}

impl Window {
    /// A window of every job that ran, whenever it was submitted.
    const EVERY_JOB: Window = Window {
        t0: 0,
        t1: u64::MAX,
    };

    /// Each job the window measures, in job order: its index, wait and bounded slowdown.
    fn samples<'a>(
        self,
        workload: &'a Workload,
        sink: &'a JobSink,
    ) -> impl Iterator<Item = (usize, u64, f64)> + 'a {
        workload
            .jobs()
            .iter()
            .enumerate()
            .filter_map(move |(i, job)| {
                let (start, end) = sink.span(i)?;
                let submit = job.submit.as_secs();
                if submit < self.t0 || submit > self.t1 {
                    return None;
                }
                let (wait, run) = (start.as_secs() - submit, end.as_secs() - start.as_secs());
                Some((i, wait, bounded_slowdown(wait, run)))
            })
    }
}

/// The group (by `rank`) of every one of `n_jobs` jobs, if they are all in one: a synthetic
/// workload's jobs have no user, and most have no queue. Stops at the first job in another.
fn one_group(rank: &dyn Fn(usize) -> u64, n_jobs: usize) -> Option<u64> {
    if n_jobs == 0 {
        return None;
    }
    let first = rank(0);
    (1..n_jobs).all(|i| rank(i) == first).then_some(first)
}

/// The wait statistics of the window's jobs grouped by `rank` (a group's place among the
/// rows, which `text` names), in rank order. The waits are laid out group after group in
/// `buffer`, each group's in job order (a counting sort), so that all the groups' samples
/// take 8 bytes a job together rather than a growing vector each; each sum is taken in job
/// order, as a walk of the jobs meets them.
fn group_waits(
    by: &'static str,
    rank: &dyn Fn(usize) -> u64,
    text: &dyn Fn(u64) -> String,
    workload: &Workload,
    sink: &JobSink,
    window: Window,
    buffer: &mut Vec<f64>,
) -> Vec<GroupWaits> {
    /// A group's jobs, the sum of their slowdowns in job order, and where its next wait goes
    /// in `buffer`.
    #[derive(Default)]
    struct Group {
        jobs: usize,
        bsd_sum: f64,
        next: usize,
    }
    // One walk of the window's jobs: each job's group (numbered as first met) and wait, kept
    // for the layout below, rather than a second walk with a search of an ordered map per job.
    let mut number: std::collections::HashMap<u64, u32, foldhash::fast::FixedState> =
        Default::default();
    let mut groups: Vec<(u64, Group)> = Vec::new();
    let mut samples: Vec<(u32, u64)> = Vec::new();
    for (i, wait, bsd) in window.samples(workload, sink) {
        let r = rank(i);
        let g = *number.entry(r).or_insert_with(|| {
            groups.push((r, Group::default()));
            (groups.len() - 1) as u32
        });
        let group = &mut groups[g as usize].1;
        group.jobs += 1;
        group.bsd_sum += bsd;
        samples.push((g, wait));
    }
    // Laid out in rank order, each group's waits in job order.
    let mut in_order: Vec<usize> = (0..groups.len()).collect();
    in_order.sort_unstable_by_key(|&g| groups[g].0);
    let mut total = 0;
    for &g in &in_order {
        let group = &mut groups[g].1;
        group.next = total;
        total += group.jobs;
    }
    buffer.clear();
    buffer.resize(total, 0.0);
    for &(g, wait) in &samples {
        let group = &mut groups[g as usize].1;
        buffer[group.next] = wait as f64;
        group.next += 1;
    }
    // Each group's `next` now ends its waits.
    in_order
        .into_iter()
        .map(|g| {
            let (r, group) = &groups[g];
            let mut waits = Sample::new(&mut buffer[group.next - group.jobs..group.next]);
            GroupWaits {
                by,
                key: text(*r),
                jobs: group.jobs as u64,
                wait_mean_s: waits.mean,
                wait_median_s: waits.median(),
                wait_p95_s: waits.nearest_rank(0.95),
                bsd_mean: mean_of_sum(group.bsd_sum, group.jobs),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_slowdown_uses_tau_and_floor_of_one() {
        assert_eq!(bounded_slowdown(0, 100), 1.0);
        assert_eq!(bounded_slowdown(90, 10), 10.0);
        // A 2 s job that waited 18 s: (18 + 2) / max(2, 10) = 2.
        assert_eq!(bounded_slowdown(18, 2), 2.0);
        assert_eq!(bounded_slowdown(0, 0), 1.0);
    }

    #[test]
    fn quantiles() {
        let of = |v: &[u64]| {
            let mut values: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let mut sample = Sample::new(&mut values);
            (sample.mean, sample.median(), sample.nearest_rank(0.95))
        };
        assert_eq!(of(&[10, 2, 3, 1]).1, 2.5);
        assert_eq!(of(&[1, 2, 3]).1, 2.0);
        let v: Vec<u64> = (1..=20).rev().collect();
        assert_eq!(of(&v).2, 19.0);
        assert_eq!(of(&[7]).2, 7.0);
        assert_eq!(of(&[1, 2, 3, 10]).0, 4.0);
        assert_eq!(of(&[]), (0.0, 0.0, 0.0));
    }

    /// Selection reads at each rank what a sorted copy holds there, bit for bit: on random
    /// samples of every size up to 200, with many repeats, negative values and both zeros
    /// (which `total_cmp` orders, −0 first), the median and several nearest ranks equal the
    /// sorted definition's, asked in any order, and the mean is summed in the order given.
    #[test]
    fn ranks_by_selection_equal_a_sort() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in 0..200 {
            let values: Vec<f64> = (0..n)
                .map(|_| match next() % 5 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => (next() % 7) as f64,
                    3 => -((next() % 1000) as f64) / 8.0,
                    _ => (next() % 100_000) as f64 * 1.5,
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let rank = |q: f64| match n {
                0 => 0.0,
                n => sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
            };
            let median = match n {
                0 => 0.0,
                n if n % 2 == 1 => sorted[n / 2],
                n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
            };
            let mean = if n == 0 {
                0.0
            } else {
                values.iter().sum::<f64>() / n as f64
            };
            let mut buffer = values.clone();
            let mut sample = Sample::new(&mut buffer);
            assert_eq!(sample.mean.to_bits(), mean.to_bits(), "n {n}");
            for q in [0.99, 0.1, 0.5, 0.95, 0.01, 1.0] {
                assert_eq!(
                    sample.nearest_rank(q).to_bits(),
                    rank(q).to_bits(),
                    "n {n} q {q}"
                );
            }
            assert_eq!(sample.median().to_bits(), median.to_bits(), "n {n}");
            let mut buffer = values.clone();
            let stats = Sample::new(&mut buffer).statistics();
            assert_eq!(
                [stats.median, stats.p95, stats.p99].map(f64::to_bits),
                [median, rank(0.95), rank(0.99)].map(f64::to_bits),
                "n {n}"
            );
        }
    }
}
