//! The per-run summary, computed in plain Rust so that it can be printed without polars.

use crate::sink::JobSink;
use placesim_core::{RunStats, Workload};

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
    /// Simulated events processed.
    pub events: u64,
    /// Scheduling passes run.
    pub passes: u64,
    /// Wall-clock figures, if measured.
    pub timing: Option<Timing>,
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
        let mut waits = Vec::with_capacity(workload.jobs().len());
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
            waits.push(wait);
            bsd_sum += bounded_slowdown(wait, run);
            busy += u128::from(job.size) * u128::from(run);
            first_submit = first_submit.min(submit);
            last_end = last_end.max(end.as_secs());
        }
        let n = waits.len();
        let makespan = if n == 0 { 0 } else { last_end - first_submit };
        waits.sort_unstable();
        let mean = |sum: f64| if n == 0 { 0.0 } else { sum / n as f64 };
        let wait_sum: f64 = waits.iter().map(|&w| w as f64).sum();
        RunSummary {
            records,
            jobs_run: n as u64,
            jobs_killed: stats.jobs_killed,
            jobs_never_started: stats.never_started.len() as u64,
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
            wait_mean_s: mean(wait_sum),
            wait_median_s: median(&waits),
            wait_p95_s: nearest_rank(&waits, 0.95),
            bsd_mean: mean(bsd_sum),
            throughput_jobs_per_hour: if makespan == 0 {
                0.0
            } else {
                n as f64 * 3600.0 / makespan as f64
            },
            events: stats.events,
            passes: stats.passes,
            timing,
            meta,
        }
    }

    /// Events per wall second, if timed.
    pub fn events_per_second(&self) -> Option<f64> {
        self.timing
            .map(|t| self.events as f64 / t.wall_seconds.max(1e-9))
    }

    /// Jobs per wall second, if timed.
    pub fn jobs_per_second(&self) -> Option<f64> {
        self.timing
            .map(|t| self.jobs_run as f64 / t.wall_seconds.max(1e-9))
    }
}

/// max((wait + run) / max(run, τ), 1).
pub(crate) fn bounded_slowdown(wait: u64, run: u64) -> f64 {
    ((wait + run) as f64 / run.max(BSD_TAU_SECS) as f64).max(1.0)
}

fn median(sorted: &[u64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0,
    }
}

/// The value at rank ceil(q·n) (1-based) of a sorted list.
fn nearest_rank(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64
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
        assert_eq!(median(&[1, 2, 3, 10]), 2.5);
        assert_eq!(median(&[1, 2, 3]), 2.0);
        let v: Vec<u64> = (1..=20).collect();
        assert_eq!(nearest_rank(&v, 0.95), 19.0);
        assert_eq!(nearest_rank(&[7], 0.95), 7.0);
    }
}
