//! A generated workload made on a thread of its own while the rest of the scenario loads.
//!
//! Generating a workload does not need the cluster, only its total ncpus and the seed, and on
//! a big cluster the two take about as long as each other: `nodesets-bench.toml`'s 16,384
//! vnodes are built in about 14 ms, its 100,000 jobs generated in about 31 ms (three Lublin
//! passes, the later scaled by the load the earlier gave). So a single run starts generating
//! from what the file declares, before the cluster is built, and the plan takes the jobs if
//! they were made for what the run asks: the same generator, the built cluster's total ncpus
//! and the run's seed. Otherwise (a declared total that the built cluster does not have, a
//! seed changed after loading) it generates them again, so what a run gets never depends on
//! the guess, only how soon it gets it.

use placesim_workload::generate::{GenerateError, GeneratedJobs, GeneratorSpec};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// What generating gives: the jobs, their records made as they are read.
pub(crate) type Generated = Result<GeneratedJobs, GenerateError>;

/// A workload being generated on its own thread (or generated already), with what it was
/// asked for. Clones share it: the first to take it has it.
#[derive(Clone)]
pub struct Pregenerated(Arc<Mutex<Option<Generating>>>);

/// The thread, and what it generates for.
struct Generating {
    spec: GeneratorSpec,
    machine_procs: u64,
    seed: u64,
    thread: JoinHandle<Generated>,
}

impl std::fmt::Debug for Pregenerated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pregenerated")
    }
}

impl Pregenerated {
    /// Starts generating `spec` on `machine_procs` with `seed`; `None` if no thread could be
    /// started (the plan then generates as it would have).
    pub(crate) fn start(spec: GeneratorSpec, machine_procs: u64, seed: u64) -> Option<Self> {
        let thread = std::thread::Builder::new()
            .name("placesim-generate".into())
            .spawn(move || placesim_workload::generate::generate_jobs(&spec, machine_procs, seed))
            .ok()?;
        Some(Pregenerated(Arc::new(Mutex::new(Some(Generating {
            spec,
            machine_procs,
            seed,
            thread,
        })))))
    }

    /// The workload, waited for, if it was generated for `spec` on `machine_procs` with
    /// `seed` and not taken before. A thread that panicked gives nothing here: generating
    /// again then panics where it always did.
    pub(crate) fn take(
        &self,
        spec: &GeneratorSpec,
        machine_procs: u64,
        seed: u64,
    ) -> Option<Generated> {
        let mut slot = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let asked = slot
            .as_ref()
            .is_some_and(|g| g.spec == *spec && g.machine_procs == machine_procs && g.seed == seed);
        if !asked {
            return None;
        }
        slot.take()?.thread.join().ok()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Scenario, TraceTexts, load_scenario, load_scenario_generating};
    use std::path::Path;

    /// A cluster of every kind of entry (12 + 2 + 40 ncpus), and 300 generated jobs.
    const MIXED: &str = "[run]\nseed = 1\n[[class]]\nname = \"c\"\ncount = 3\nncpus = 4\n\
        [[vnode]]\nname = \"v\"\nncpus = 2\n[cluster]\n[[cluster.generation]]\nname = \"g\"\n\
        count = 5\nncpus = 8\n[workload.generator]\njobs = 300\nload = 0.7\n";

    fn jobs_of(scenario: &Scenario) -> Vec<placesim_core::Job> {
        let loaded = scenario
            .workload_with(&TraceTexts::new())
            .expect("a workload");
        loaded.trace.workload.jobs().to_vec()
    }

    /// Whether the workload generated while loading is still there, not taken by a run.
    fn left(scenario: &Scenario) -> bool {
        let pregenerated = scenario
            .pregenerated
            .as_ref()
            .expect("started while loading");
        pregenerated.0.lock().expect("not poisoned").is_some()
    }

    fn plain(seed: u64) -> Vec<placesim_core::Job> {
        let mut scenario = load_scenario(MIXED, Path::new("test.toml")).expect("a scenario");
        assert!(scenario.pregenerated.is_none());
        scenario.run.seed = seed;
        jobs_of(&scenario)
    }

    /// The run takes the jobs generated while the cluster was built (the ncpus the entries
    /// declare are the cluster's), and they are the jobs it would have generated itself.
    #[test]
    fn a_run_takes_the_jobs_generated_while_loading() {
        let scenario =
            load_scenario_generating(MIXED, Path::new("test.toml"), None).expect("a scenario");
        assert_eq!(
            scenario
                .cluster
                .capacity_total(placesim_core::ConsumableIdx::NCPUS),
            54
        );
        assert!(left(&scenario));
        assert_eq!(jobs_of(&scenario), plain(1));
        assert!(!left(&scenario), "taken by the run");
    }

    /// A seed given at loading is the one generated for, and the run with that seed takes
    /// the jobs; a run whose seed changed again generates its own, and leaves them.
    #[test]
    fn the_jobs_are_taken_only_for_the_seed_they_were_generated_with() {
        let mut scenario =
            load_scenario_generating(MIXED, Path::new("test.toml"), Some(9)).expect("a scenario");
        scenario.run.seed = 3;
        let other = jobs_of(&scenario);
        assert!(left(&scenario), "generated for seed 9, not 3");
        assert_eq!(other, plain(3));
        scenario.run.seed = 9;
        let nine = jobs_of(&scenario);
        assert!(!left(&scenario));
        assert_eq!(nine, plain(9));
        assert_ne!(nine, other);
    }
}
