//! How placement changes a job's runtime: p = p_trace × H × C × ε.
//!
//! - H, the speed factor: reference speed / speed of the slowest allocated vnode (a parallel
//!   job runs at the pace of its slowest node), or / the ncpus-weighted mean speed for jobs
//!   treated as load-balanced.
//! - C, the communication factor: 1 + β·X, with X = 1 − Σ_k (a_k / n)² the fraction of the
//!   job's processor pairs in different groups of the topology key (a_k: ncpus in group k,
//!   n: all its ncpus); or 1 + min(α·(S − 1), cap) with S the groups spanned.
//! - ε, the noise, and β, the job's communication sensitivity, are drawn per job by whoever
//!   builds the model, from explicit seeds: the kernel draws nothing.
//!
//! Schedulers never see any of this; they plan with estimates.

use crate::cluster::Cluster;
use crate::ids::{JobId, ResourceId, VnodeId};
use crate::resource::{AttrValue, ConsumableIdx};
use crate::state::Allocation;
use crate::time::SimDuration;

/// The form of the communication factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CommForm {
    /// C = 1 + β·X, X the cross-group pair fraction.
    PairFraction,
    /// C = 1 + min(α·(S − 1), cap) for communication-sensitive jobs (β > 0), 1 for the
    /// others: Slurm's `--switches` view, where only the count of groups matters.
    GroupsSpanned {
        /// α, per extra group.
        alpha: f64,
        /// The largest penalty.
        cap: f64,
    },
}

/// What the model made of one job's placement, for the sink.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    /// H.
    pub speed_factor: f64,
    /// C.
    pub comm_factor: f64,
    /// ε.
    pub noise: f64,
    /// Distinct groups of the topology key among the job's vnodes (1 without a key).
    pub groups_spanned: u32,
    /// (fastest − slowest) / slowest speed among the job's vnodes.
    pub speed_spread: f64,
}

impl Stretch {
    /// No stretch at all: what a run without a runtime model records.
    pub const NONE: Stretch = Stretch {
        speed_factor: 1.0,
        comm_factor: 1.0,
        noise: 1.0,
        groups_spanned: 1,
        speed_spread: 0.0,
    };

    /// The stretched runtime, rounded to the nearest second.
    pub fn apply(&self, runtime: SimDuration) -> SimDuration {
        let factor = self.speed_factor * self.comm_factor * self.noise;
        if factor == 1.0 {
            return runtime;
        }
        SimDuration((runtime.as_secs() as f64 * factor).round() as u64)
    }
}

/// A runtime model for one run on one cluster, with each job's β and ε already drawn.
#[derive(Debug, Clone)]
pub struct RuntimeModel {
    speed_reference: f64,
    balanced: bool,
    comm: CommForm,
    /// Per vnode, its group along the topology key (dense ids), if there is a key.
    group_of: Option<Vec<u32>>,
    n_groups: usize,
    beta: Vec<f64>,
    noise: Vec<f64>,
}

/// Settings of a [`RuntimeModel`] that are not per job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuntimeSettings {
    /// s_ref; `None` means the slowest vnode's speed, so trace runtimes never shrink.
    pub speed_reference: Option<f64>,
    /// Use the ncpus-weighted mean speed instead of the slowest.
    pub balanced: bool,
    /// The topology key (switch by default), if any.
    pub topology: Option<ResourceId>,
    /// The communication factor's form.
    pub comm: CommForm,
}

impl RuntimeModel {
    /// A model for `cluster` with per-job sensitivities `beta` and noise factors `noise`
    /// (indexed by [`JobId`]; a missing entry reads as β = 0, ε = 1).
    pub fn new(
        cluster: &Cluster,
        settings: RuntimeSettings,
        beta: Vec<f64>,
        noise: Vec<f64>,
    ) -> RuntimeModel {
        let slowest = cluster
            .vnodes()
            .iter()
            .map(|v| v.speed)
            .fold(f64::INFINITY, f64::min);
        let (group_of, n_groups) = match settings.topology {
            Some(key) => {
                let mut names: Vec<&str> = Vec::new();
                let groups = cluster
                    .vnodes()
                    .iter()
                    .map(|v| {
                        let name = match v.attr(key) {
                            Some(AttrValue::Str(s)) => s.as_str(),
                            Some(AttrValue::StrArray(items)) => {
                                items.first().map_or("", String::as_str)
                            }
                            _ => "",
                        };
                        match names.iter().position(|n| *n == name) {
                            Some(i) => i as u32,
                            None => {
                                names.push(name);
                                (names.len() - 1) as u32
                            }
                        }
                    })
                    .collect();
                (Some(groups), names.len())
            }
            None => (None, 1),
        };
        RuntimeModel {
            speed_reference: settings.speed_reference.unwrap_or(slowest),
            balanced: settings.balanced,
            comm: settings.comm,
            group_of,
            n_groups,
            beta,
            noise,
        }
    }

    /// The reference speed in use.
    pub fn speed_reference(&self) -> f64 {
        self.speed_reference
    }

    /// What the model makes of `job` running on `allocation`. `scratch` holds one counter
    /// per group between calls, so the computation allocates nothing.
    pub fn stretch(
        &self,
        cluster: &Cluster,
        job: JobId,
        allocation: &Allocation,
        scratch: &mut Vec<u64>,
    ) -> Stretch {
        let n_cons = cluster.resources().n_consumables();
        let (mut slowest, mut fastest) = (f64::INFINITY, 0.0f64);
        let (mut weighted, mut n) = (0.0, 0u64);
        scratch.clear();
        scratch.resize(self.n_groups, 0);
        let mut groups_spanned = 0u32;
        for (v, amounts) in allocation.parts(n_cons) {
            let vnode = cluster.vnode(v);
            let ncpus = amounts[ConsumableIdx::NCPUS.index()];
            slowest = slowest.min(vnode.speed);
            fastest = fastest.max(vnode.speed);
            weighted += vnode.speed * ncpus as f64;
            n += ncpus;
            if let Some(groups) = &self.group_of {
                let g = groups[v.index()] as usize;
                if scratch[g] == 0 {
                    groups_spanned += 1;
                }
                // Vnodes holding no ncpus (exclhost's extra vnodes) still mark their group.
                scratch[g] += ncpus.max(1);
            }
        }
        if !slowest.is_finite() {
            return Stretch::NONE;
        }
        let pace = if self.balanced && n > 0 {
            weighted / n as f64
        } else {
            slowest
        };
        let beta = self.beta.get(job.index()).copied().unwrap_or(0.0);
        let comm_factor = if beta == 0.0 || groups_spanned <= 1 {
            1.0
        } else {
            match self.comm {
                CommForm::PairFraction => {
                    let total: u64 = scratch.iter().sum();
                    let same: f64 = scratch
                        .iter()
                        .map(|&a| (a as f64 / total as f64).powi(2))
                        .sum();
                    1.0 + beta * (1.0 - same)
                }
                CommForm::GroupsSpanned { alpha, cap } => {
                    1.0 + (alpha * f64::from(groups_spanned - 1)).min(cap)
                }
            }
        };
        Stretch {
            speed_factor: self.speed_reference / pace,
            comm_factor,
            noise: self.noise.get(job.index()).copied().unwrap_or(1.0),
            groups_spanned: groups_spanned.max(1),
            speed_spread: (fastest - slowest) / slowest,
        }
    }

    /// The group of `v` along the topology key, if there is one.
    pub fn group_of(&self, v: VnodeId) -> Option<u32> {
        self.group_of.as_ref().map(|g| g[v.index()])
    }
}
