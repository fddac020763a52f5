//! How placement changes a job's runtime: p = p_trace × H × C × ε.
//!
//! - H, the speed factor: reference speed / speed of the slowest allocated vnode (a parallel
//!   job runs at the pace of its slowest node), or / the ncpus-weighted mean speed for jobs
//!   treated as load-balanced.
//! - C, the communication factor: 1 + β·X, with X = 1 − Σ_k (a_k / n)² the fraction of the
//!   job's processor pairs in different sets of the topology key (a_k: ncpus in set k,
//!   n: all its ncpus); or 1 + min(α·(S − 1), cap) with S the sets spanned.
//! - ε, the noise, and β, the job's communication sensitivity, are drawn per job by whoever
//!   builds the model, from explicit seeds: the kernel draws nothing.
//!
//! Schedulers never see any of this; they plan with estimates.

use crate::cluster::Cluster;
use crate::ids::{JobId, ResourceId, VnodeId};
use crate::resource::ConsumableIdx;
use crate::state::Allocation;
use crate::time::SimDuration;

/// The form of the communication factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CommForm {
    /// C = 1 + β·X, X the cross-set pair fraction.
    PairFraction,
    /// C = 1 + min(α·(S − 1), cap) for communication-sensitive jobs (β > 0), 1 for the
    /// others: Slurm's `--switches` view, where only the count of sets matters.
    SetsSpanned {
        /// α, per extra set.
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
    /// Distinct sets of the topology key among the job's vnodes (1 without a key).
    pub sets_spanned: u32,
    /// (fastest − slowest) / slowest speed among the job's vnodes.
    pub speed_spread: f64,
    /// X = 1 − Σ_k (a_k / n)²: the share of rank pairs that cross a set boundary
    /// (a_k: the job's ncpus in set k of the topology key; 0 without a key).
    pub cross_set_pairs: f64,
}

impl Stretch {
    /// No stretch at all: what a run without a runtime model records.
    pub const NONE: Stretch = Stretch {
        speed_factor: 1.0,
        comm_factor: 1.0,
        noise: 1.0,
        sets_spanned: 1,
        speed_spread: 0.0,
        cross_set_pairs: 0.0,
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
    /// Per vnode, its set along the topology key (dense ids), if there is a key.
    set_of_vnode: Option<Vec<u32>>,
    n_sets: usize,
    /// Per vnode, its speed: read densely on every start.
    speeds: Vec<f64>,
    /// The stretches of consecutive vnodes with the same speed and set: a run of an
    /// allocation is read a stretch at a time, not a vnode at a time.
    same_until: crate::stretch::StretchKeys,
    /// Every vnode has the same speed and at most one set: H is the same for every job and
    /// C is 1, so a start costs nothing beyond the per-job lookups.
    uniform: Option<f64>,
    /// Consumable slots per allocation part.
    n_cons: usize,
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
        let (set_of_vnode, n_sets) = match settings.topology {
            Some(key) => {
                let sets = crate::settled::SetPartition::by_key(cluster, key);
                let n = sets.len();
                (Some(sets.set_of), n)
            }
            None => (None, 1),
        };
        let speeds: Vec<f64> = cluster.vnodes().iter().map(|v| v.speed).collect();
        let uniform = (n_sets <= 1 && speeds.iter().all(|&s| s == slowest)).then_some(slowest);
        let speed_and_set: Vec<(u64, u32)> = speeds
            .iter()
            .enumerate()
            .map(|(v, s)| (s.to_bits(), set_of_vnode.as_ref().map_or(0, |g| g[v])))
            .collect();
        RuntimeModel {
            same_until: crate::stretch::StretchKeys::of_values(&speed_and_set),
            n_cons: cluster.resources().n_consumables(),
            speeds,
            uniform,
            speed_reference: settings.speed_reference.unwrap_or(slowest),
            balanced: settings.balanced,
            comm: settings.comm,
            set_of_vnode,
            n_sets,
            beta,
            noise,
        }
    }

    /// The reference speed in use.
    pub fn speed_reference(&self) -> f64 {
        self.speed_reference
    }

    /// What the model makes of `job` running on `allocation`. `scratch` holds one counter
    /// per set between calls, so the computation allocates nothing.
    pub fn stretch(&self, job: JobId, allocation: &Allocation, scratch: &mut Vec<u64>) -> Stretch {
        if let Some(speed) = self.uniform {
            if allocation.is_empty() {
                return Stretch::NONE;
            }
            return Stretch {
                speed_factor: self.speed_reference / speed,
                comm_factor: 1.0,
                noise: self.noise.get(job.index()).copied().unwrap_or(1.0),
                sets_spanned: 1,
                speed_spread: 0.0,
                cross_set_pairs: 0.0,
            };
        }
        let n_cons = self.n_cons;
        let (mut slowest, mut fastest) = (f64::INFINITY, 0.0f64);
        let (mut weighted, mut n) = (0.0, 0u64);
        scratch.clear();
        scratch.resize(self.n_sets, 0);
        let mut sets_spanned = 0u32;
        // A run, a stretch of the same speed and set at a time: min, max and the counts are
        // exact whatever the grouping. The ncpus-weighted mean speed adds one term per vnode,
        // in order, so that its rounding is that of the plain sum.
        for (run, amounts) in allocation.runs(n_cons) {
            let ncpus = amounts[ConsumableIdx::NCPUS.index()];
            let range = run.indices();
            let mut from = range.start;
            while from < range.end {
                let to = range.end.min(self.same_until.until(from));
                let count = (to - from) as u64;
                let speed = self.speeds[from];
                slowest = slowest.min(speed);
                fastest = fastest.max(speed);
                if self.balanced {
                    for _ in 0..count {
                        weighted += speed * ncpus as f64;
                    }
                }
                n += ncpus * count;
                if let Some(sets) = &self.set_of_vnode {
                    let g = sets[from] as usize;
                    if scratch[g] == 0 {
                        sets_spanned += 1;
                    }
                    // Vnodes holding no ncpus (exclhost's extra vnodes) still mark their set.
                    scratch[g] += ncpus.max(1) * count;
                }
                from = to;
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
        let cross_set_pairs = if sets_spanned <= 1 {
            0.0
        } else {
            let total: u64 = scratch.iter().sum();
            let same: f64 = scratch
                .iter()
                .map(|&a| (a as f64 / total as f64).powi(2))
                .sum();
            1.0 - same
        };
        let beta = self.beta.get(job.index()).copied().unwrap_or(0.0);
        let comm_factor = if beta == 0.0 || sets_spanned <= 1 {
            1.0
        } else {
            match self.comm {
                CommForm::PairFraction => 1.0 + beta * cross_set_pairs,
                CommForm::SetsSpanned { alpha, cap } => {
                    1.0 + (alpha * f64::from(sets_spanned - 1)).min(cap)
                }
            }
        };
        Stretch {
            speed_factor: self.speed_reference / pace,
            comm_factor,
            noise: self.noise.get(job.index()).copied().unwrap_or(1.0),
            sets_spanned: sets_spanned.max(1),
            speed_spread: (fastest - slowest) / slowest,
            cross_set_pairs,
        }
    }

    /// The set of `v` along the topology key, if there is one.
    pub fn set_of_vnode(&self, v: VnodeId) -> Option<u32> {
        self.set_of_vnode.as_ref().map(|g| g[v.index()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::request::Sharing;
    use crate::resource::{AttrValue, ResourceDefs, ResourceKind};

    /// Two vnodes of `speeds`, each on switch `s`; a job holding both.
    fn case(speeds: [f64; 2], switches: [&str; 2], reference: Option<f64>) -> Stretch {
        let mut defs = ResourceDefs::default();
        let switch = defs
            .define("switch", ResourceKind::String, false)
            .unwrap_or(ResourceId(0));
        let mut b = ClusterBuilder::new(defs);
        for i in 0..2 {
            let h = b.add_host(format!("h{i}"));
            let attrs = vec![(switch, AttrValue::Str(switches[i].into()))];
            let _ = b.add_vnode(format!("v{i}"), h, speeds[i], &[1, 0, 0], attrs);
        }
        let Ok(cluster) = b.build() else {
            return Stretch::NONE;
        };
        let settings = RuntimeSettings {
            speed_reference: reference,
            balanced: false,
            topology: Some(switch),
            comm: CommForm::PairFraction,
        };
        let model = RuntimeModel::new(&cluster, settings, vec![0.4], vec![1.25]);
        let mut alloc = Allocation::new(Sharing::Shared);
        alloc.add(VnodeId(0), &[1, 0, 0]);
        alloc.add(VnodeId(1), &[1, 0, 0]);
        model.stretch(JobId(0), &alloc, &mut Vec::new())
    }

    /// The plain definition of the factors' inputs, one vnode at a time in allocation order:
    /// slowest and fastest speed, the ncpus-weighted speed sum, the ncpus, and per set the
    /// ncpus held (a vnode without ncpus counting 1).
    fn plain_inputs(
        model: &RuntimeModel,
        alloc: &Allocation,
        n_cons: usize,
    ) -> (f64, f64, f64, u64, Vec<u64>) {
        let (mut slowest, mut fastest, mut weighted, mut n) = (f64::INFINITY, 0.0f64, 0.0, 0);
        let mut per_set = vec![0; model.n_sets];
        for (v, amounts) in alloc.parts(n_cons) {
            let (speed, ncpus) = (model.speeds[v.index()], amounts[0]);
            slowest = slowest.min(speed);
            fastest = fastest.max(speed);
            weighted += speed * ncpus as f64;
            n += ncpus;
            if let Some(g) = model.set_of_vnode(v) {
                per_set[g as usize] += ncpus.max(1);
            }
        }
        (slowest, fastest, weighted, n, per_set)
    }

    /// Reading an allocation a run and a stretch of equal speed and set at a time gives the
    /// factors the plain per-vnode definition gives, on random clusters (speeds and switches
    /// in stretches and mixed) and allocations, with the slowest or the balanced pace.
    #[test]
    fn stretches_of_runs_give_the_per_vnode_factors() {
        let mut rng = crate::test_rng::Lcg(5);
        let mut below = |n: u64| rng.below(n);
        let mut defs = ResourceDefs::default();
        let switch = defs
            .define("switch", ResourceKind::String, false)
            .unwrap_or(ResourceId(0));
        for round in 0..40 {
            let mut b = ClusterBuilder::new(defs.clone());
            let n = 20 + below(80) as usize;
            let stretch = 1 + below(12) as usize;
            for i in 0..n {
                let h = b.add_host(format!("h{i}"));
                let speed = [1.0, 1.3, 2.0][(i / stretch + below(2) as usize * (i % 2)) % 3];
                let attrs = vec![(switch, AttrValue::Str(format!("s{}", i / stretch % 4)))];
                let _ = b.add_vnode(format!("v{i}"), h, speed, &[4, 0, 0], attrs);
            }
            let Ok(cluster) = b.build() else {
                panic!("a valid cluster");
            };
            for balanced in [false, true] {
                let settings = RuntimeSettings {
                    speed_reference: None,
                    balanced,
                    topology: Some(switch),
                    comm: CommForm::PairFraction,
                };
                let model = RuntimeModel::new(&cluster, settings, vec![0.7], vec![1.0]);
                let mut alloc = Allocation::new(Sharing::Shared);
                for _ in 0..1 + below(4) {
                    let (first, count, ncpus) = (below(n as u64), 1 + below(30), below(3));
                    for v in first..(first + count).min(n as u64) {
                        let v = VnodeId(v as u32);
                        if !alloc.holds(v) {
                            alloc.push(v, &[ncpus, 0, 0]);
                        }
                    }
                }
                let got = model.stretch(JobId(0), &alloc, &mut Vec::new());
                let (slowest, fastest, weighted, ncpus, per_set) = plain_inputs(&model, &alloc, 3);
                let pace = if balanced && ncpus > 0 {
                    weighted / ncpus as f64
                } else {
                    slowest
                };
                let spanned = per_set.iter().filter(|&&x| x > 0).count() as u32;
                let total: u64 = per_set.iter().sum();
                let pairs = if spanned <= 1 {
                    0.0
                } else {
                    1.0 - per_set
                        .iter()
                        .map(|&a| (a as f64 / total as f64).powi(2))
                        .sum::<f64>()
                };
                let at = format!("round {round}, balanced {balanced}");
                assert_eq!(got.speed_factor, model.speed_reference / pace, "{at}");
                assert_eq!(got.speed_spread, (fastest - slowest) / slowest, "{at}");
                assert_eq!(got.sets_spanned, spanned.max(1), "{at}");
                assert_eq!(got.cross_set_pairs, pairs, "{at}");
            }
        }
    }

    /// The shortcut for uniform clusters gives what the general pass gives.
    #[test]
    fn uniform_clusters_take_the_shortcut_with_the_same_result() {
        let uniform = case([2.0, 2.0], ["a", "a"], Some(1.0));
        assert_eq!(
            uniform,
            Stretch {
                speed_factor: 0.5,
                comm_factor: 1.0,
                noise: 1.25,
                sets_spanned: 1,
                speed_spread: 0.0,
                cross_set_pairs: 0.0,
            }
        );
        // Nearly uniform (a second switch) goes through the general pass: X = 1/2, β = 0.4.
        let split = case([2.0, 2.0], ["a", "b"], Some(1.0));
        assert_eq!((split.speed_factor, split.sets_spanned), (0.5, 2));
        assert!((split.comm_factor - 1.2).abs() < 1e-12);
        assert_eq!(split.cross_set_pairs, 0.5);
        let mixed = case([2.0, 1.0], ["a", "a"], None);
        assert_eq!((mixed.speed_factor, mixed.speed_spread), (1.0, 1.0));
    }
}
