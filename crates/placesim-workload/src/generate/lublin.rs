//! Lublin & Feitelson 2003, "The workload on parallel supercomputers: modeling the
//! characteristics of rigid jobs", as its reference code `m_lublin99.c` implements it, with its
//! published parameters (../shared/spec/metrics-and-models.md §2.1).
//!
//! - **Size**: serial with probability SerialProb; otherwise log₂ size `par` from a two-stage
//!   uniform (U(ULow, UMed) with probability UProb, else U(UMed, UHi)), rounded to an integer
//!   (a power of two) when the same draw that chose "parallel" also falls within a further
//!   Pow2Prob; size = round(2^par).
//! - **Machine size**: the published parameters are for P = 128. On a machine of P processors
//!   UMed and UHi *of every stream* move by log₂(P) − 7 and ULow stays, as the code's comments
//!   prescribe ("UHi is the log2 of the system size" is the batch stream's UHi = 7; the
//!   interactive stream's published UHi is 5.5, so its jobs stay smaller). A job is at most
//!   round(2^UHi) of its stream, as GridSim's port clamps it: on a machine that is not a power
//!   of two, a power-of-two batch job rounded above P is cut to P. A size below 1 (only on
//!   machines under 8 processors, where the shifted range goes below 0) becomes 1.
//! - **Runtime**: log runtime is hyper-gamma, Gamma(a1, b1) with probability
//!   p = clamp(pa·size + pb, 0, 1), else Gamma(a2, b2) (shape, scale); the whole hyper-gamma is
//!   drawn again, branch included, while above 12; runtime = ⌊e^value⌋ seconds, as the C code's
//!   conversion to an integer gives it. pa < 0, so larger jobs run longer.
//! - **Arrivals**: log inter-arrival ~ Gamma(aarr·arar, barr), redrawn while above 13, gives
//!   exp(g)/1800 "points"; 48 half-hour buckets weighted by a gamma density (anum, bnum) over
//!   i = 11..58 mapped to bucket (i−1) mod 48 (normalised to mean 1) consume points at their
//!   weight per half hour, which warps arrivals onto the daily cycle.
//! - **The clock** is kept in floating point and rounded to whole seconds only when a submit
//!   time is written. `m_lublin99.c` adds each inter-arrival to an integer clock, which drops
//!   about half a second per job while the position within the day's buckets is kept exactly;
//!   over 100,000 jobs the submit times fall hours behind the daily cycle. placesim does not
//!   copy that drift (a test checks the cycle at the end of a long trace).
//! - Batch and interactive jobs are two independent streams, merged in time order (a batch job
//!   goes first only if it arrives strictly earlier, as in the C code). SWF field 15 carries the
//!   job type as `m_lublin99.c` writes it: 1 batch, 0 interactive; the typeless model writes 0,
//!   as the C code does when it makes every job interactive.

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
    /// Two-stage uniform: the middle, for a machine of 128 processors (shifted with the
    /// machine's size).
    pub umed: f64,
    /// Two-stage uniform: the high end, for a machine of 128 processors (shifted with the
    /// machine's size): log₂ 128 = 7 for batch and typeless jobs, 5.5 for interactive ones.
    pub uhi: f64,
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
}

impl StreamParams {
    /// Batch jobs, as published.
    pub const BATCH: StreamParams = StreamParams {
        serial_prob: 0.2927,
        pow2_prob: 0.6686,
        ulow: 1.2,
        umed: 5.0,
        uhi: 7.0,
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
        umed: 3.0,
        uhi: 5.5,
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
        umed: 4.5,
        uhi: 7.0,
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

    /// The published machine size of the parameters: 128 processors, log₂ 7.
    pub const PUBLISHED_LOG2_PROCS: f64 = 7.0;

    /// How far UMed and UHi move on a machine of `machine_procs` processors: log₂(P) − 7.
    pub fn size_shift(machine_procs: u64) -> f64 {
        (machine_procs.max(1) as f64).log2() - Self::PUBLISHED_LOG2_PROCS
    }

    /// (ULow, UMed, UHi) of the two-stage uniform on a machine of `machine_procs` processors.
    pub fn size_range(&self, machine_procs: u64) -> (f64, f64, f64) {
        let shift = Self::size_shift(machine_procs);
        (self.ulow, self.umed + shift, self.uhi + shift)
    }

    /// The largest job of this stream on a machine of `machine_procs` processors:
    /// round(2^UHi), as GridSim clamps it, and never more than the machine.
    pub fn max_size(&self, machine_procs: u64) -> u32 {
        let (_, _, uhi) = self.size_range(machine_procs);
        size_of_exponent(uhi)
            .min(machine_procs.max(1))
            .min(u64::from(u32::MAX)) as u32
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
    /// Submit time, seconds (the stream's clock rounded to the nearest second).
    pub submit: u64,
    /// Processors.
    pub size: u32,
    /// Runtime, seconds (at least 1).
    pub runtime: u64,
    /// The job type as `m_lublin99.c` writes it in SWF field 15: [`BATCH_TYPE`] or
    /// [`INTERACTIVE_TYPE`].
    pub job_type: i64,
}

/// SWF field 15 of a batch job, as `m_lublin99.c` writes it.
pub const BATCH_TYPE: i64 = 1;
/// SWF field 15 of an interactive (or typeless) job, as `m_lublin99.c` writes it.
pub const INTERACTIVE_TYPE: i64 = 0;

/// One stream's generator state.
struct Stream {
    params: StreamParams,
    job_type: i64,
    ulow: f64,
    umed: f64,
    uhi: f64,
    max_size: u32,
    weights: [f64; 48],
    short: Gamma<f64>,
    long: Gamma<f64>,
    arrival: Gamma<f64>,
    /// The clock of this stream, seconds, unrounded.
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
    fn new(params: StreamParams, job_type: i64, machine_procs: u64) -> Result<Stream, ModelError> {
        const PROBABILITY: &str = "a probability from 0 to 1";
        const LOG2_SIZE: &str = "a log2 size from 0 to 64";
        for (name, value, range, expected) in [
            ("serial_prob", params.serial_prob, 0.0..=1.0, PROBABILITY),
            ("pow2_prob", params.pow2_prob, 0.0..=1.0, PROBABILITY),
            ("uprob", params.uprob, 0.0..=1.0, PROBABILITY),
            ("ulow", params.ulow, 0.0..=64.0, LOG2_SIZE),
            ("umed", params.umed, 0.0..=64.0, LOG2_SIZE),
            ("uhi", params.uhi, 0.0..=64.0, LOG2_SIZE),
            // Positive and finite.
            (
                "anum",
                params.anum,
                f64::MIN_POSITIVE..=f64::MAX,
                "a positive daily-cycle gamma shape",
            ),
            (
                "bnum",
                params.bnum,
                f64::MIN_POSITIVE..=f64::MAX,
                "a positive daily-cycle gamma scale",
            ),
        ] {
            if !range.contains(&value) {
                return Err(ModelError {
                    name,
                    value,
                    expected,
                });
            }
        }
        let weights = params.daily_weights();
        if !weights.iter().any(|&w| w > 0.0) {
            return Err(ModelError {
                name: "anum",
                value: params.anum,
                expected: "a daily cycle with weight in hours 11 to 58 (anum × bnum there)",
            });
        }
        let (ulow, umed, uhi) = params.size_range(machine_procs);
        Ok(Stream {
            ulow,
            umed,
            uhi,
            max_size: params.max_size(machine_procs),
            weights,
            short: gamma("a1/b1", params.a1, params.b1)?,
            long: gamma("a2/b2", params.a2, params.b2)?,
            arrival: gamma("aarr/barr", params.aarr * params.arar, params.barr)?,
            params,
            job_type,
            t: 0.0,
        })
    }

    /// `calc_number_of_nodes`: one uniform decides serial, power of two or other.
    fn size(&self, rng: &mut Pcg64Mcg) -> u32 {
        let p = &self.params;
        let u: f64 = rng.random();
        if u <= p.serial_prob {
            return 1;
        }
        // two_stage_uniform: U(ULow, UMed) with probability UProb, else U(UMed, UHi). The C
        // code draws a + (b − a)·u whichever end is larger, and so does this.
        let (a, b) = if rng.random::<f64>() <= p.uprob {
            (self.ulow, self.umed)
        } else {
            (self.umed, self.uhi)
        };
        let mut par = a + (b - a) * rng.random::<f64>();
        if u <= p.serial_prob + p.pow2_prob {
            par = floor(par + 0.5);
        }
        size_of_exponent(par).min(u64::from(self.max_size)) as u32
    }

    /// `time_from_nodes`: the hyper-gamma, drawn whole again (branch included) while its
    /// value is above 12, then ⌊e^value⌋.
    fn runtime(&self, rng: &mut Pcg64Mcg, size: u32) -> u64 {
        let short_prob = self.params.short_branch_prob(size);
        loop {
            let short = rng.random::<f64>() <= short_prob;
            let dist = if short { &self.short } else { &self.long };
            let v = dist.sample(rng);
            if v <= 12.0 {
                // The cast truncates, which for a positive number is the floor: without a
                // call to libm's `floor`.
                return (v.exp() as u64).max(1);
            }
        }
    }

    /// Advances the clock by one warped inter-arrival, its points scaled by `scale`.
    fn advance(&mut self, rng: &mut Pcg64Mcg, scale: f64) {
        let mut g = self.arrival.sample(rng);
        while g > 13.0 {
            g = self.arrival.sample(rng);
        }
        let mut points = g.exp() / 1800.0 * scale;
        // Bounded: every day has positive weight in total (checked in `new`), so points run
        // out.
        loop {
            // The clock is never negative, so truncation is its floor, without a call to
            // libm's `floor` (which the baseline x86-64 target has no instruction for).
            let half_hours = (self.t / 1800.0) as u64;
            let bucket = (half_hours % 48) as usize;
            let bucket_end = (half_hours as f64 + 1.0) * 1800.0;
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

/// ⌊2^`par` + 0.5⌋, at least 1: a size from its exponent, as the C code rounds it. 2^par + 0.5
/// is positive, so the cast's truncation is the floor, without a call to libm's `floor`; a
/// NaN casts to 0 and so comes out 1, and a number past u64 saturates, as `floor` and a
/// cast would give.
fn size_of_exponent(par: f64) -> u64 {
    ((2f64.powf(par) + 0.5) as u64).max(1)
}

/// `x.floor()`, without a call to libm's `floor`, which the baseline x86-64 target has no
/// instruction for (it was called for most jobs in each of a load's three passes): a
/// non-negative number below 2^53 truncates to its floor, and every other takes `floor`.
fn floor(x: f64) -> f64 {
    if (0.0..9_007_199_254_740_992.0).contains(&x) {
        (x as u64) as f64
    } else {
        x.floor()
    }
}

/// `t.round() as u64` for a clock (never negative), without a call to libm's `round`: half
/// away from zero, from the whole seconds and the fraction, exact below 2^52 (where the
/// fraction is the exact difference) and for every whole number above.
fn round_clock(t: f64) -> u64 {
    let whole = t as u64;
    if t - whole as f64 >= 0.5 {
        whole.saturating_add(1)
    } else {
        whole
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
    let mut jobs = Vec::new();
    generate_scaled_into(
        streams,
        n_jobs,
        machine_procs,
        rng,
        arrival_scale,
        &mut jobs,
    )?;
    Ok(jobs)
}

/// [`generate_scaled`] into `jobs`, cleared first: the passes that look for the scale of a
/// load generate into the same memory, already touched, where a fresh list of 100,000 jobs
/// costs a page fault per 4 KiB (a fifth of such a pass).
pub fn generate_scaled_into(
    streams: Streams,
    n_jobs: usize,
    machine_procs: u64,
    rng: &mut Pcg64Mcg,
    arrival_scale: f64,
    jobs: &mut Vec<LublinJob>,
) -> Result<(), ModelError> {
    let mut list = match streams {
        Streams::BatchAndInteractive(b, i) => vec![
            Stream::new(b, BATCH_TYPE, machine_procs)?,
            Stream::new(i, INTERACTIVE_TYPE, machine_procs)?,
        ],
        Streams::Batch(b) => vec![Stream::new(b, BATCH_TYPE, machine_procs)?],
        Streams::Interactive(i) => vec![Stream::new(i, INTERACTIVE_TYPE, machine_procs)?],
        Streams::Typeless(t) => vec![Stream::new(t, INTERACTIVE_TYPE, machine_procs)?],
    };
    for s in &mut list {
        s.advance(rng, arrival_scale);
    }
    jobs.clear();
    jobs.reserve(n_jobs);
    while jobs.len() < n_jobs {
        // The stream whose next arrival comes first; the batch stream (listed first) only if
        // strictly earlier, as `arrive` in the C code chooses.
        let next = match list.as_slice() {
            [batch, interactive] if batch.t >= interactive.t => 1,
            _ => 0,
        };
        let s = &mut list[next];
        let size = s.size(rng);
        let runtime = s.runtime(rng, size);
        jobs.push(LublinJob {
            submit: round_clock(s.t),
            size,
            runtime,
            job_type: s.job_type,
        });
        s.advance(rng, arrival_scale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{floor, round_clock};

    /// The two shortcuts against libm's `floor` and `round` on the edges: halves, the last
    /// numbers below the halves, 2^52 and 2^53 and their neighbours, the top of u64, the
    /// infinities, NaN and negatives, and numbers spread over the clock's range.
    #[test]
    fn floor_and_round_clock_are_libms() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            0.49999999999999994,
            1.5,
            2.5,
            -0.3,
            -0.5,
            -0.7,
            -1.5,
            4503599627370495.5,
            4503599627370496.0,
            4503599627370497.0,
            9007199254740991.0,
            9007199254740992.0,
            9007199254740994.0,
            18446744073709549568.0,
            18446744073709551616.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
        ];
        let mut x = 0.123_456_789f64;
        for _ in 0..100_000 {
            x = (x * 1.000_37 + 0.618_033_988_7) % 1.0e9;
            values.push(x);
            values.push(x.trunc() + 0.5);
            values.push(-x);
        }
        for v in values {
            let (ours, libm) = (floor(v), v.floor());
            assert!(
                ours == libm || (ours.is_nan() && libm.is_nan()),
                "floor({v})"
            );
            assert_eq!(round_clock(v), v.round() as u64, "round({v})");
        }
    }
}
