//! The scenario's runtime model for one workload: β and ε drawn per job from the seed.

use crate::Scenario;
use placesim_core::{RuntimeModel, Workload};
use placesim_workload::generate::{purpose, stream_seed};
use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};

impl Scenario {
    /// The kernel's runtime model for `workload` on this scenario's cluster.
    ///
    /// - β: the first sensitivity class a job matches chooses it with the class's fraction,
    ///   by a hash of (sensitivity seed, class, job position), so one job's draw does not
    ///   depend on any other; chosen jobs get the class's β, all others 0.
    /// - ε: LogNormal(0, σ), drawn in job order from the noise stream; 1 when σ = 0.
    pub fn runtime_model(&self, workload: &Workload) -> RuntimeModel {
        let cfg = &self.runtime;
        let sensitivity_seed = stream_seed(self.run.seed, purpose::SENSITIVITY);
        let beta = workload
            .jobs()
            .iter()
            .enumerate()
            .map(|(i, job)| {
                cfg.classes
                    .iter()
                    .enumerate()
                    .find(|(_, c)| c.filter.matches(job))
                    .filter(|(k, c)| crate::requests::draw(sensitivity_seed, *k, i) < c.fraction)
                    .map_or(0.0, |(_, c)| c.beta)
            })
            .collect();
        let noise = match LogNormal::new(0.0, cfg.noise_sigma) {
            Ok(dist) if cfg.noise_sigma > 0.0 => {
                let mut rng =
                    rand_pcg::Pcg64Mcg::seed_from_u64(stream_seed(self.run.seed, purpose::NOISE));
                (0..workload.jobs().len())
                    .map(|_| dist.sample(&mut rng))
                    .collect()
            }
            _ => Vec::new(),
        };
        RuntimeModel::new(&self.cluster, cfg.settings, beta, noise)
    }
}
