//! Synthetic workloads: Lublin & Feitelson 2003 jobs with Tsafrir, Etsion & Feitelson 2005
//! estimates, written as standard SWF so that any simulator can read them.
//!
//! Generation is seeded: the same parameters, machine size and seed give the same records,
//! drawn from a PCG stream of their own (see [`stream_seed`]).

pub mod lublin;
pub mod special;
pub mod tsafrir;

pub use lublin::{BATCH_TYPE, INTERACTIVE_TYPE, LublinJob, ModelError, StreamParams, Streams};
pub use tsafrir::EstimateError;

use crate::swf::{SwfHeader, SwfRecord};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorSpec {
    /// The job streams and their parameters.
    pub streams: Streams,
    /// How many jobs.
    pub jobs: usize,
    /// The largest estimate users give, seconds (Tsafrir's one mandatory input).
    pub max_estimate_s: u64,
    /// A target offered load (Σ size × runtime over processors × the submit span); `None`
    /// keeps the published arrival rate. Lublin's sizes grow with the machine while its
    /// arrivals do not, so large machines need this to be anything but overloaded.
    pub load: Option<f64>,
}

impl GeneratorSpec {
    /// The published model: batch and interactive streams, estimates up to 48 h (above the
    /// model's longest runtime, e¹² s ≈ 45 h, so no runtime is cut).
    pub fn lublin(jobs: usize) -> GeneratorSpec {
        GeneratorSpec {
            streams: Streams::default(),
            jobs,
            max_estimate_s: 48 * 3600,
            load: None,
        }
    }
}

/// Why a workload could not be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerateError {
    /// A job model parameter is wrong.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The estimate model cannot cover the jobs.
    #[error(transparent)]
    Estimates(#[from] EstimateError),
}

/// A seed for one purpose, derived from the run's seed by SplitMix64, so that adding draws in
/// one purpose never shifts another.
pub fn stream_seed(seed: u64, purpose: u64) -> u64 {
    let mut z = seed ^ purpose.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The purpose tags of the seed streams.
pub mod purpose {
    /// Workload generation.
    pub const WORKLOAD: u64 = 1;
    /// Runtime noise ε.
    pub const NOISE: u64 = 2;
    /// Which jobs are communication-sensitive.
    pub const SENSITIVITY: u64 = 3;
    /// Vnode failures and repairs.
    pub const FAILURES: u64 = 4;
}

/// Σ size × runtime / (processors × (last submit − first submit)): the load the jobs offer.
pub fn offered_load(jobs: &[LublinJob], machine_procs: u64) -> f64 {
    let work: f64 = jobs
        .iter()
        .map(|j| f64::from(j.size) * j.runtime as f64)
        .sum();
    let span = match (jobs.first(), jobs.last()) {
        (Some(a), Some(b)) if b.submit > a.submit => (b.submit - a.submit) as f64,
        _ => return 0.0,
    };
    work / (machine_procs.max(1) as f64 * span)
}

/// Generates the SWF header and records for a machine of `machine_procs` processors.
pub fn generate(
    spec: &GeneratorSpec,
    machine_procs: u64,
    seed: u64,
) -> Result<(SwfHeader, Vec<SwfRecord>), GenerateError> {
    let jobs = generate_jobs(spec, machine_procs, seed)?;
    let records = jobs.records().collect();
    Ok((jobs.header, records))
}

/// A generated workload: its SWF header, and its jobs with their runtimes and estimates, from
/// which [`Self::records`] makes the SWF records one at a time. A run converts them as they
/// come, where a list of records would hold 144 bytes a job besides them.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedJobs {
    /// The SWF header [`generate`] gives.
    pub header: SwfHeader,
    jobs: Vec<lublin::LublinJob>,
    runtimes: Vec<u64>,
    estimates: Vec<u64>,
}

impl GeneratedJobs {
    /// The SWF records [`generate`] gives, in order.
    pub fn records(&self) -> impl ExactSizeIterator<Item = SwfRecord> + Clone + '_ {
        self.jobs
            .iter()
            .zip(self.runtimes.iter().zip(&self.estimates))
            .enumerate()
            .map(|(i, (j, (&run, &est)))| SwfRecord {
                job_number: i as i64 + 1,
                submit_time: j.submit as i64,
                wait_time: -1,
                run_time: run as i64,
                allocated_procs: i64::from(j.size),
                avg_cpu_time: -1.0,
                used_memory_kib: -1.0,
                requested_procs: i64::from(j.size),
                requested_time: est as i64,
                requested_memory_kib: -1,
                status: 1,
                user_id: -1,
                group_id: -1,
                executable: -1,
                queue: j.job_type,
                partition: -1,
                preceding_job: -1,
                think_time: -1,
            })
    }
}

/// [`generate`], with the records left to be made as they are read
/// ([`GeneratedJobs::records`]).
pub fn generate_jobs(
    spec: &GeneratorSpec,
    machine_procs: u64,
    seed: u64,
) -> Result<GeneratedJobs, GenerateError> {
    let seed_of_jobs = stream_seed(seed, purpose::WORKLOAD);
    let mut rng = Pcg64Mcg::seed_from_u64(seed_of_jobs);
    let mut jobs = lublin::generate(spec.streams, spec.jobs, machine_procs, &mut rng)?;
    if let Some(target) = spec.load.filter(|&l| l > 0.0 && l.is_finite()) {
        // The load is about inversely proportional to the scale; two corrections land within
        // a few percent of the target (the daily cycle's warp is not quite linear).
        let mut scale = 1.0;
        for _ in 0..2 {
            scale *= offered_load(&jobs, machine_procs) / target;
            rng = Pcg64Mcg::seed_from_u64(seed_of_jobs);
            lublin::generate_scaled_into(
                spec.streams,
                spec.jobs,
                machine_procs,
                &mut rng,
                scale,
                &mut jobs,
            )?;
        }
    }
    let mut runtimes: Vec<u64> = jobs.iter().map(|j| j.runtime).collect();
    let estimates = tsafrir::assign(&mut runtimes, spec.max_estimate_s, &mut rng)?;
    let header = SwfHeader {
        max_procs: Some(machine_procs),
        max_nodes: None,
        comments: vec![
            "Version: 2.2".to_owned(),
            "Computer: placesim synthetic machine".to_owned(),
            format!(
                "Note: generated by placesim: Lublin & Feitelson 2003 jobs, Tsafrir, Etsion & Feitelson 2005 estimates (max {} s), seed {seed}, offered load {:.3}",
                spec.max_estimate_s,
                offered_load(&jobs, machine_procs)
            ),
            format!("MaxJobs: {}", spec.jobs),
            format!("MaxRecords: {}", spec.jobs),
            format!("MaxProcs: {machine_procs}"),
            "Queues: field 15 is the job type as m_lublin99.c writes it: 1 batch, 0 interactive (and typeless)".to_owned(),
        ],
    };
    Ok(GeneratedJobs {
        header,
        jobs,
        runtimes,
        estimates,
    })
}
