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
    /// Per job (sized only once a vnode failure touches a job): requeues, core-seconds lost,
    /// and whether a failure ended it.
    pub(crate) requeues: Vec<u32>,
    pub(crate) lost_core_seconds: Vec<u64>,
    pub(crate) failed: Vec<bool>,
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
            // Filled only once a job has something other than the default, so that plain runs
            // pay nothing for them.
            speed_factor: Vec::new(),
            comm_factor: Vec::new(),
            noise: Vec::new(),
            speed_spread: Vec::new(),
            groups_spanned: Vec::new(),
            requeues: Vec::new(),
            lost_core_seconds: Vec::new(),
            failed: Vec::new(),
            label: Vec::new(),
            comment: Vec::new(),
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

/// What the runtime model made of one job, as the sink keeps it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Factors {
    pub(crate) speed: f32,
    pub(crate) comm: f32,
    pub(crate) noise: f32,
    pub(crate) spread: f32,
    pub(crate) groups: u32,
}

impl Factors {
    /// A job without a runtime model.
    pub(crate) const NONE: Factors = Factors {
        speed: 1.0,
        comm: 1.0,
        noise: 1.0,
        spread: 0.0,
        groups: 1,
    };
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

    /// Job `i`'s label and comment ids (0 for none).
    pub(crate) fn notes(&self, i: usize) -> (u32, u32) {
        (
            self.label.get(i).copied().unwrap_or(0),
            self.comment.get(i).copied().unwrap_or(0),
        )
    }

    /// Job `i`'s requeues, core-seconds lost to vnode failures, and whether one ended it.
    pub(crate) fn failures(&self, i: usize) -> (u32, u64, bool) {
        (
            self.requeues.get(i).copied().unwrap_or(0),
            self.lost_core_seconds.get(i).copied().unwrap_or(0),
            self.failed.get(i).copied().unwrap_or(false),
        )
    }

    /// Job `i`'s runtime-model factors.
    pub(crate) fn factors(&self, i: usize) -> Factors {
        Factors {
            speed: self.speed_factor.get(i).copied().unwrap_or(1.0),
            comm: self.comm_factor.get(i).copied().unwrap_or(1.0),
            noise: self.noise.get(i).copied().unwrap_or(1.0),
            spread: self.speed_spread.get(i).copied().unwrap_or(0.0),
            groups: self.groups_spanned.get(i).copied().unwrap_or(1),
        }
    }

    /// Sets `v[i] = x`, first sizing `v` for every job when `x` is not the default.
    fn put<T: Copy + PartialEq>(v: &mut Vec<T>, n: usize, i: usize, x: T, default: T) {
        if v.is_empty() {
            if x == default {
                return;
            }
            v.resize(n, default);
        }
        v[i] = x;
    }
}

impl MetricsSink for JobSink {
    fn job_started(&mut self, _job: &Job, id: JobId, _start: SimTime, allocation: &Allocation) {
        // A requeued job starts again: its last start's label is the one kept.
        let x = allocation
            .label
            .as_ref()
            .map_or(0, |label| self.intern(label));
        let n = self.ended.len();
        Self::put(&mut self.label, n, id.index(), x, 0);
    }

    fn job_comment(&mut self, id: JobId, text: &Arc<str>) {
        // A comment after the start would be about another run; only waiting jobs get them.
        if !self.ended[id.index()] {
            let x = self.intern(text);
            let n = self.ended.len();
            Self::put(&mut self.comment, n, id.index(), x, 0);
        }
    }

    fn job_ended(&mut self, _job: &Job, outcome: &JobOutcome) {
        let i = outcome.job.index();
        self.start[i] = outcome.start.as_secs();
        self.end[i] = outcome.end.as_secs();
        self.killed[i] = outcome.killed;
        self.ended[i] = true;
        let st = &outcome.stretch;
        let n = self.ended.len();
        Self::put(&mut self.speed_factor, n, i, st.speed_factor as f32, 1.0);
        Self::put(&mut self.comm_factor, n, i, st.comm_factor as f32, 1.0);
        Self::put(&mut self.noise, n, i, st.noise as f32, 1.0);
        Self::put(&mut self.speed_spread, n, i, st.speed_spread as f32, 0.0);
        Self::put(&mut self.groups_spanned, n, i, st.groups_spanned, 1);
        Self::put(&mut self.requeues, n, i, outcome.requeues, 0);
        Self::put(
            &mut self.lost_core_seconds,
            n,
            i,
            outcome.lost_core_seconds,
            0,
        );
        Self::put(&mut self.failed, n, i, outcome.failed, false);
    }

    fn job_requeued(&mut self, id: JobId, requeues: u32, lost_core_seconds: u64) {
        let (n, i) = (self.ended.len(), id.index());
        Self::put(&mut self.requeues, n, i, requeues, 0);
        Self::put(&mut self.lost_core_seconds, n, i, lost_core_seconds, 0);
    }
}
