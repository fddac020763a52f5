//! The outages of a scenario: those listed, and those its MTBF/MTTR models draw.

use crate::{Scenario, ScenarioError};
use placesim_core::{Outage, SimTime, Workload};
use placesim_workload::generate::{purpose, stream_seed};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp};

impl Scenario {
    /// Every outage of this scenario for a run of `workload`: the listed ones, then, for each
    /// model, each vnode's alternation of exponential up times (mean MTBF) and down times
    /// (mean MTTR) from time 0 until the horizon, the last submit plus the longest walltime
    /// request (later outages could only delay jobs that run past every estimate). Each
    /// vnode draws from its own stream of the run's seed, so adding a model for one class
    /// leaves the others' outages unchanged. Times are whole seconds, each stretch at least 1.
    ///
    /// Refused past [`MAX_OUTAGES`]: an MTBF of a second over a year of a large cluster would
    /// otherwise draw more outages than memory holds.
    pub fn outages(&self, workload: &Workload) -> Result<Vec<Outage>, ScenarioError> {
        let mut outages = self.failures.outages.clone();
        let jobs = workload.jobs();
        let horizon = jobs.last().map_or(0, |j| j.submit.as_secs())
            + jobs.iter().map(|j| j.estimate.as_secs()).max().unwrap_or(0);
        let base = stream_seed(self.run.seed, purpose::FAILURES);
        for model in &self.failures.models {
            let (Ok(up), Ok(down)) = (
                Exp::new(1.0 / model.mtbf_s as f64),
                Exp::new(1.0 / model.mttr_s as f64),
            ) else {
                continue;
            };
            for &vnode in &model.vnodes {
                let mut rng =
                    rand_pcg::Pcg64Mcg::seed_from_u64(stream_seed(base, vnode.index() as u64));
                let mut draw = |d: &Exp<f64>| (d.sample(&mut rng).round() as u64).max(1);
                let mut t = 0u64;
                loop {
                    t = t.saturating_add(draw(&up));
                    if t >= horizon {
                        break;
                    }
                    let back = t.saturating_add(draw(&down));
                    if outages.len() >= MAX_OUTAGES {
                        return Err(ScenarioError::TooManyOutages {
                            path: self.path.clone(),
                            class: model.class.clone(),
                            horizon_s: horizon,
                        });
                    }
                    outages.push(Outage {
                        vnode,
                        down: SimTime(t),
                        up: SimTime(back),
                    });
                    t = back;
                }
            }
        }
        Ok(outages)
    }
}

/// The most outages a run may have, listed and drawn: ten million, some 240 MB.
pub const MAX_OUTAGES: usize = 10_000_000;
