//! Lublin & Feitelson 2003, "The workload on parallel supercomputers: modeling the
//! characteristics of rigid jobs", as its reference code `m_lublin99.c` implements it, with its
//! published parameters (../shared/spec/metrics-and-models.md §2.1).
//!
//! - **Size**: serial with probability SerialProb; otherwise log₂ size from a two-stage
//!   uniform (U(ULow, UMed) with probability UProb, else U(UMed, UHi)), rounded to an integer
//!   (a power of two) for a further Pow2Prob of jobs; size = round(2^par), at most the machine.
//! - **Runtime**: log runtime is hyper-gamma, Gamma(a1, b1) with probability
//!   p = clamp(pa·size + pb, 0, 1), else Gamma(a2, b2) (shape, scale), redrawn while above 12;
//!   pa < 0, so larger jobs run longer.
//! - **Arrivals**: log inter-arrival ~ Gamma(aarr·arar, barr), redrawn while above 13, gives
//!   exp(g)/1800 "points"; 48 half-hour buckets weighted by a gamma density (anum, bnum) over
//!   i = 11..58 mapped to bucket (i−1) mod 48 (normalised to mean 1) consume points at their
//!   weight per half hour, which warps arrivals onto the daily cycle.
//! - Batch and interactive jobs are two independent streams, merged in time order; SWF
//!   field 15 (queue) records the stream: 1 batch, 2 interactive, 0 typeless.

use super::special::gamma_cdf;
use rand::RngExt;
use rand_distr::{Distribution, Gamma};
use rand_pcg::Pcg64Mcg;

/// The parameters of one job stream, named as in the paper and the code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamParams {
    /// Probability of a serial job.
    pub serial_prob: f64,
    /// Probability of a power-of-two job (added to `serial_prob` in the draw).
    pub pow2_prob: f64,
    /// Two-stage uniform of log₂ size: low end.
    pub ulow: f64,
    /// Two-stage uniform: the middle. `None` keeps the published UHi − UMed gap.
    pub umed: Option<f64>,
    /// Two-stage uniform: the published high end (log₂ 128); the machine's log₂ size is used.
    pub uhi_published: f64,
    /// Probability of the low stage.
    pub uprob: f64,
    /// Short-runtime gamma (shape, scale).
    pub a1: f64,
    /// Scale of the short-runtime gamma.
    pub b1: f64,
    /// Long-runtime gamma shape.
    pub a2: f64,
    /// Long-runtime gamma scale.
    pub b2: f64,
    /// Slope of the short-branch probability in size.
    pub pa: f64,
    /// Intercept of the short-branch probability.
    pub pb: f64,
    /// Inter-arrival gamma shape (before `arar`).
    pub aarr: f64,
    /// Inter-arrival gamma scale.
    pub barr: f64,
    /// Arrival-rate factor applied to the shape.
    pub arar: f64,
    /// Daily-cycle gamma shape.
    pub anum: f64,
    /// Daily-cycle gamma scale.
    pub bnum: f64,
    /// The published UMed, for the default gap.
    pub umed_published: f64,
}

impl StreamParams {
    /// Batch jobs, as published.
    pub const BATCH: StreamParams = StreamParams {
        serial_prob: 0.2927,
        pow2_prob: 0.6686,
        ulow: 1.2,
        umed: None,
        umed_published: 5.0,
        uhi_published: 7.0,
        uprob: 0.875,
        a1: 6.57,
        b1: 0.823,
        a2: 639.1,
        b2: 0.0156,
        pa: -0.003,
        pb: 0.6986,
        aarr: 6.0415,
        barr: 0.8531,
        arar: 1.0519,
        anum: 6.1271,
        bnum: 5.2740,
    };

    /// Interactive jobs, as published.
    pub const INTERACTIVE: StreamParams = StreamParams {
        serial_prob: 0.1541,
        pow2_prob: 0.625,
        ulow: 1.0,
        umed: None,
        umed_published: 3.0,
        uhi_published: 5.5,
        uprob: 0.705,
        a1: 3.8351,
        b1: 0.6605,
        a2: 7.073,
        b2: 0.6856,
        pa: -0.0118,
        pb: 0.9156,
        aarr: 6.5510,
        barr: 0.6621,
        arar: 0.9797,
        anum: 8.9186,
        bnum: 3.6680,
    };

    /// The whole sample, without job types, as published.
    pub const TYPELESS: StreamParams = StreamParams {
        serial_prob: 0.244,
        pow2_prob: 0.576,
        ulow: 0.8,
        umed: None,
        umed_published: 4.5,
        uhi_published: 7.0,
        uprob: 0.86,
        a1: 4.2,
        b1: 0.94,
        a2: 312.0,
        b2: 0.03,
        pa: -0.0054,
        pb: 0.78,
        aarr: 10.2303,
        barr: 0.4871,
        arar: 1.0225,
        anum: 8.1737,
        bnum: 3.9631,
    };

    /// UMed for a machine whose log₂ size is `uhi`: as set, or the published gap below UHi,
    /// kept at least ULow.
    pub fn umed_for(&self, uhi: f64) -> f64 {
        self.umed
            .unwrap_or(uhi - (self.uhi_published - self.umed_published))
            .max(self.ulow)
            .min(uhi)
    }

    /// The probability that a job of `size` takes the short-runtime branch.
    pub fn short_branch_prob(&self, size: u32) -> f64 {
        (self.pa * f64::from(size) + self.pb).clamp(0.0, 1.0)
    }

    /// The 48 half-hour weights of the daily cycle, normalised to mean 1.
    pub fn daily_weights(&self) -> [f64; 48] {
        let mut w = [0.0; 48];
        for i in 11..=58 {
            let x = f64::from(i);
            let p =
                gamma_cdf(x + 0.5, self.anum, self.bnum) - gamma_cdf(x - 0.5, self.anum, self.bnum);
            w[(i as usize - 1) % 48] += p;
        }
        let mean = w.iter().sum::<f64>() / 48.0;
        if mean > 0.0 {
            for x in &mut w {
                *x /= mean;
            }
        }
        w
    }
}

/// Which streams a workload has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Streams {
    /// Batch and interactive, merged (the paper's model).
    BatchAndInteractive(StreamParams, StreamParams),
    /// Batch only.
    Batch(StreamParams),
    /// Interactive only.
    Interactive(StreamParams),
    /// One typeless stream.
    Typeless(StreamParams),
}

impl Default for Streams {
    fn default() -> Self {
        Streams::BatchAndInteractive(StreamParams::BATCH, StreamParams::INTERACTIVE)
    }
}

/// One generated job, before estimates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LublinJob {
    /// Submit time, seconds.
    pub submit: u64,
    /// Processors.
    pub size: u32,
    /// Runtime, seconds (at least 1).
    pub runtime: u64,
    /// 1 batch, 2 interactive, 0 typeless.
    pub queue: i64,
}

/// One stream's generator state.
struct Stream {
    params: StreamParams,
    queue: i64,
    uhi: f64,
    umed: f64,
    weights: [f64; 48],
    short: Gamma<f64>,
    long: Gamma<f64>,
    arrival: Gamma<f64>,
    /// The clock of this stream, seconds.
    t: f64,
}

/// Errors in the model's parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Lublin model parameter {name} = {value} is invalid: {expected}")]
pub struct ModelError {
    /// The parameter.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// What it must be.
    pub expected: &'static str,
}

fn gamma(name: &'static str, shape: f64, scale: f64) -> Result<Gamma<f64>, ModelError> {
    Gamma::new(shape, scale).map_err(|_| ModelError {
        name,
        value: if shape > 0.0 { scale } else { shape },
        expected: "gamma shape and scale must be positive and finite",
    })
}

impl Stream {
    fn new(params: StreamParams, queue: i64, machine_procs: u64) -> Result<Stream, ModelError> {
        for (name, value) in [
            ("serial_prob", params.serial_prob),
            ("pow2_prob", params.pow2_prob),
            ("uprob", params.uprob),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(ModelError {
                    name,
                    value,
                    expected: "a probability from 0 to 1",
                });
            }
        }
        let uhi = (machine_procs.max(1) as f64).log2();
        Ok(Stream {
            uhi,
            umed: params.umed_for(uhi),
            weights: params.daily_weights(),
            short: gamma("a1/b1", params.a1, params.b1)?,
            long: gamma("a2/b2", params.a2, params.b2)?,
            arrival: gamma("aarr/barr", params.aarr * params.arar, params.barr)?,
            params,
            queue,
            t: 0.0,
        })
    }

    fn size(&self, rng: &mut Pcg64Mcg, machine_procs: u64) -> u32 {
        let p = &self.params;
        let u: f64 = rng.random();
        if u <= p.serial_prob {
            return 1;
        }
        let low = rng.random::<f64>() < p.uprob;
        let (a, b) = if low {
            (p.ulow.min(self.umed), self.umed)
        } else {
            (self.umed, self.uhi)
        };
        let mut par = a + (b - a) * rng.random::<f64>();
        if u <= p.serial_prob + p.pow2_prob {
            par = par.round();
        }
        let size = 2f64.powf(par).round().max(1.0);
        (size as u64).min(machine_procs.max(1)) as u32
    }

    fn runtime(&self, rng: &mut Pcg64Mcg, size: u32) -> u64 {
        let short = rng.random::<f64>() < self.params.short_branch_prob(size);
        let dist = if short { &self.short } else { &self.long };
        let mut v = dist.sample(rng);
        while v > 12.0 {
            v = dist.sample(rng);
        }
        (v.exp().round() as u64).max(1)
    }

    /// Advances the clock by one warped inter-arrival, its points scaled by `scale`.
    fn advance(&mut self, rng: &mut Pcg64Mcg, scale: f64) {
        let mut g = self.arrival.sample(rng);
        while g > 13.0 {
            g = self.arrival.sample(rng);
        }
        let mut points = g.exp() / 1800.0 * scale;
        // Bounded: every day has positive weight in total, so points run out.
        loop {
            let bucket = ((self.t / 1800.0).floor() as u64 % 48) as usize;
            let bucket_end = ((self.t / 1800.0).floor() + 1.0) * 1800.0;
            let w = self.weights[bucket];
            let capacity = w * (bucket_end - self.t) / 1800.0;
            if w > 0.0 && points <= capacity {
                self.t += points / w * 1800.0;
                return;
            }
            points -= capacity;
            self.t = bucket_end;
        }
    }
}

/// Generates `n_jobs` jobs for a machine of `machine_procs` processors, in submit order.
pub fn generate(
    streams: Streams,
    n_jobs: usize,
    machine_procs: u64,
    rng: &mut Pcg64Mcg,
) -> Result<Vec<LublinJob>, ModelError> {
    generate_scaled(streams, n_jobs, machine_procs, rng, 1.0)
}

/// As [`generate`], with every inter-arrival's points multiplied by `arrival_scale`: gaps
/// stretch (or shrink) in the warped time of the daily cycle, so the cycle keeps its shape
/// while the offered load changes by about 1 / `arrival_scale`. The draws are the same for any
/// scale, so sizes and runtimes do not change.
pub fn generate_scaled(
    streams: Streams,
    n_jobs: usize,
    machine_procs: u64,
    rng: &mut Pcg64Mcg,
    arrival_scale: f64,
) -> Result<Vec<LublinJob>, ModelError> {
    let mut list = match streams {
        Streams::BatchAndInteractive(b, i) => vec![
            Stream::new(b, 1, machine_procs)?,
            Stream::new(i, 2, machine_procs)?,
        ],
        Streams::Batch(b) => vec![Stream::new(b, 1, machine_procs)?],
        Streams::Interactive(i) => vec![Stream::new(i, 2, machine_procs)?],
        Streams::Typeless(t) => vec![Stream::new(t, 0, machine_procs)?],
    };
    for s in &mut list {
        s.advance(rng, arrival_scale);
    }
    let mut jobs = Vec::with_capacity(n_jobs);
    while jobs.len() < n_jobs {
        // The stream whose next arrival comes first (ties: the first stream).
        let next = (0..list.len())
            .min_by(|&a, &b| list[a].t.total_cmp(&list[b].t))
            .unwrap_or(0);
        let s = &mut list[next];
        let size = s.size(rng, machine_procs);
        let runtime = s.runtime(rng, size);
        jobs.push(LublinJob {
            submit: s.t.floor() as u64,
            size,
            runtime,
            queue: s.queue,
        });
        s.advance(rng, arrival_scale);
    }
    Ok(jobs)
}
