//! The in-memory sink: a few bytes per job, filled as jobs end.

use placesim_core::{Allocation, Job, JobId, JobOutcome, MetricsSink, SimTime, Workload};
use std::collections::HashMap;
use std::sync::Arc;

/// Buffers each job's start, end, kill flag and runtime-model factors by job id, so rows come out in submit order
/// whatever order jobs end in.
#[derive(Debug, Clone)]
pub struct JobSink {
    pub(crate) start: Vec<u64>,
    pub(crate) end: Vec<u64>,
    pub(crate) killed: Vec<bool>,
    pub(crate) ended: Vec<bool>,
    /// What the runtime model made of each job's placement, kept in f32 (a few bytes a job).
    pub(crate) speed_factor: Vec<f32>,
    pub(crate) comm_factor: Vec<f32>,
    pub(crate) noise: Vec<f32>,
    pub(crate) speed_spread: Vec<f32>,
    pub(crate) groups_spanned: Vec<u32>,
    /// Per job, where it was placed (a placement set, `spanned`), as an index into `texts`;
    /// 0 for none.
    pub(crate) label: Vec<u32>,
    /// Per job, the scheduler's last comment before it started (or ever, if it never did).
    pub(crate) comment: Vec<u32>,
    /// Distinct labels and comments; entry 0 is unused.
    pub(crate) texts: Vec<Arc<str>>,
    text_ids: HashMap<Arc<str>, u32>,
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
            speed_factor: vec![1.0; n],
            comm_factor: vec![1.0; n],
            noise: vec![1.0; n],
            speed_spread: vec![0.0; n],
            groups_spanned: vec![1; n],
            label: vec![0; n],
            comment: vec![0; n],
            texts: vec![Arc::from("")],
            text_ids: HashMap::new(),
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

impl JobSink {
    fn intern(&mut self, text: &Arc<str>) -> u32 {
        if let Some(&id) = self.text_ids.get(text) {
            return id;
        }
        self.texts.push(text.clone());
        let id = (self.texts.len() - 1) as u32;
        self.text_ids.insert(text.clone(), id);
        id
    }

    /// A job's label or comment text, if any.
    pub(crate) fn text(&self, id: u32) -> Option<&str> {
        (id != 0).then(|| &*self.texts[id as usize])
    }
}

impl MetricsSink for JobSink {
    fn job_started(&mut self, _job: &Job, id: JobId, _start: SimTime, allocation: &Allocation) {
        if let Some(label) = &allocation.label {
            self.label[id.index()] = self.intern(label);
        }
    }

    fn job_comment(&mut self, id: JobId, text: &Arc<str>) {
        // A comment after the start would be about another run; only waiting jobs get them.
        if !self.ended[id.index()] {
            self.comment[id.index()] = self.intern(text);
        }
    }

    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        let i = outcome.job.index();
        self.start[i] = outcome.start.as_secs();
        self.end[i] = outcome.end.as_secs();
        self.killed[i] = outcome.killed;
        self.ended[i] = true;
        let st = &outcome.stretch;
        self.speed_factor[i] = st.speed_factor as f32;
        self.comm_factor[i] = st.comm_factor as f32;
        self.noise[i] = st.noise as f32;
        self.speed_spread[i] = st.speed_spread as f32;
        self.groups_spanned[i] = st.groups_spanned;
    }
}
