//! The in-memory sink: a few bytes per job, filled as jobs end.

use placesim_core::{Job, JobOutcome, MetricsSink, SimTime, Workload};

/// Buffers each job's start, end and kill flag by job id, so rows come out in submit order
/// whatever order jobs end in.
#[derive(Debug, Clone)]
pub struct JobSink {
    pub(crate) start: Vec<u64>,
    pub(crate) end: Vec<u64>,
    pub(crate) killed: Vec<bool>,
    pub(crate) ended: Vec<bool>,
}

impl JobSink {
    /// A sink for every job of `workload`.
    pub fn new(workload: &Workload) -> Self {
        let n = workload.jobs().len();
        JobSink {
            start: vec![0; n],
            end: vec![0; n],
            killed: vec![false; n],
            ended: vec![false; n],
        }
    }

    /// How many jobs have ended.
    pub fn n_ended(&self) -> usize {
        self.ended.iter().filter(|&&e| e).count()
    }

    /// The start and end of job `idx`, if it ended.
    pub fn span(&self, idx: usize) -> Option<(SimTime, SimTime)> {
        self.ended[idx].then(|| (SimTime(self.start[idx]), SimTime(self.end[idx])))
    }
}

impl MetricsSink for JobSink {
    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        let i = outcome.job.index();
        self.start[i] = outcome.start.as_secs();
        self.end[i] = outcome.end.as_secs();
        self.killed[i] = outcome.killed;
        self.ended[i] = true;
    }
}
