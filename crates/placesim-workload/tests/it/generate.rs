//! The synthetic workload models against their analytic values and their reference code.
//!
//! - Lublin & Feitelson: statistics of large samples against the model's exact distributions,
//!   computed here from the published parameters and the rules of `m_lublin99.c` (not from
//!   the generator's code), each with a tolerance of about four of its own standard errors.
//! - Tsafrir et al.: the estimate distribution against `est_model.cc`'s own output
//!   (`tests/data/est_model_reference.txt`), and its head shares against the model.

use placesim_workload::SwfRecord;
use placesim_workload::generate::special::gamma_cdf;
use placesim_workload::generate::{
    BATCH_TYPE, GeneratorSpec, INTERACTIVE_TYPE, StreamParams, Streams, generate, lublin, tsafrir,
};
use rand::SeedableRng;
use std::collections::BTreeMap;

fn typeless(jobs: usize, procs: u64, seed: u64) -> Vec<SwfRecord> {
    let spec = GeneratorSpec {
        streams: Streams::Typeless(StreamParams::TYPELESS),
        ..GeneratorSpec::lublin(jobs)
    };
    generate(&spec, procs, seed).unwrap().1
}

/// The published model (batch and interactive) on `procs` processors, over several seeds.
fn published(jobs_per_seed: usize, procs: u64, seeds: &[u64]) -> Vec<SwfRecord> {
    seeds
        .iter()
        .flat_map(|&seed| {
            generate(&GeneratorSpec::lublin(jobs_per_seed), procs, seed)
                .unwrap()
                .1
        })
        .collect()
}

/// P(X < x) for the two-stage uniform U(lo, med) w.p. `uprob`, else U(med, hi).
fn two_stage_cdf(x: f64, lo: f64, med: f64, hi: f64, uprob: f64) -> f64 {
    let uniform = |x: f64, a: f64, b: f64| {
        let (a, b) = (a.min(b), a.max(b));
        if b == a {
            if x > a { 1.0 } else { 0.0 }
        } else {
            ((x - a) / (b - a)).clamp(0.0, 1.0)
        }
    };
    uprob * uniform(x, lo, med) + (1.0 - uprob) * uniform(x, med, hi)
}

/// The exact size distribution of one stream on `procs` processors, by the rules of
/// `m_lublin99.c`: UMed and UHi shifted by log₂(P) − 7; serial w.p. SerialProb; par rounded
/// w.p. Pow2Prob; size round(2^par), at most round(2^UHi) (GridSim's clamp).
fn size_pmf(p: &StreamParams, procs: u64) -> BTreeMap<u32, f64> {
    let shift = (procs as f64).log2() - 7.0;
    let (lo, med, hi) = (p.ulow, p.umed + shift, p.uhi + shift);
    let largest = ((2f64.powf(hi) + 0.5).floor() as u32).min(procs as u32);
    let cdf = |x: f64| two_stage_cdf(x, lo, med, hi, p.uprob);
    let mut pmf = BTreeMap::new();
    let mut add = |size: u32, mass: f64| *pmf.entry(size.min(largest)).or_insert(0.0) += mass;
    add(1, p.serial_prob);
    let pow2 = p.pow2_prob.min(1.0 - p.serial_prob);
    for k in 0..=(hi.ceil() as u32 + 1) {
        let kf = f64::from(k);
        add(1 << k, pow2 * (cdf(kf + 0.5) - cdf(kf - 0.5)));
    }
    let other = 1.0 - p.serial_prob - pow2;
    for m in 1..=(2f64.powf(hi).ceil() as u32 + 1) {
        let below = if m == 1 {
            f64::NEG_INFINITY
        } else {
            (f64::from(m) - 0.5).log2()
        };
        add(m, other * (cdf((f64::from(m) + 0.5).log2()) - cdf(below)));
    }
    pmf
}

/// Mean and standard deviation of log₂ size over parallel jobs, and the share of powers of
/// two among them, with its standard deviation per job.
fn parallel_stats(pmf: &BTreeMap<u32, f64>) -> (f64, f64, f64) {
    let parallel: f64 = pmf.iter().filter(|(n, _)| **n > 1).map(|(_, q)| q).sum();
    let moment = |f: &dyn Fn(f64) -> f64| {
        pmf.iter()
            .filter(|(n, _)| **n > 1)
            .map(|(n, q)| q * f(f64::from(*n).log2()))
            .sum::<f64>()
            / parallel
    };
    let mean = moment(&|x| x);
    let var = moment(&|x| x * x) - mean * mean;
    let pow2: f64 = pmf
        .iter()
        .filter(|(n, _)| **n > 1 && n.is_power_of_two())
        .map(|(_, q)| q)
        .sum::<f64>()
        / parallel;
    (mean, var.sqrt(), pow2)
}

/// P(runtime ≤ r) for one stream: ⌊e^h⌋ with h the hyper-gamma of the job's size, conditioned
/// on h ≤ 12 (the whole mixture drawn again above 12).
fn runtime_cdf(p: &StreamParams, pmf: &BTreeMap<u32, f64>, r: u64) -> f64 {
    let x = ((r + 1) as f64).ln().min(12.0);
    pmf.iter()
        .map(|(&n, &q)| {
            let short = p.short_branch_prob(n);
            let f = |x: f64| {
                short * gamma_cdf(x, p.a1, p.b1) + (1.0 - short) * gamma_cdf(x, p.a2, p.b2)
            };
            q * f(x) / f(12.0)
        })
        .sum()
}

/// The streams of the published model, with their SWF field 15.
fn published_streams() -> [(&'static str, i64, StreamParams); 2] {
    [
        ("batch", BATCH_TYPE, StreamParams::BATCH),
        ("interactive", INTERACTIVE_TYPE, StreamParams::INTERACTIVE),
    ]
}

#[test]
fn sizes_follow_the_model_at_any_machine_size() {
    for procs in [128u64, 1024, 100] {
        let records = published(60_000, procs, &[1, 2, 3]);
        // The mixture, given how many parallel jobs each stream had.
        let (mut mix_n, mut mix_mean, mut mix_var, mut mix_pow2, mut mix_pow2_var) =
            (0.0, 0.0, 0.0, 0.0, 0.0);
        let mut all_logs = Vec::new();
        for (name, job_type, params) in published_streams() {
            let sizes: Vec<u32> = records
                .iter()
                .filter(|r| r.queue == job_type)
                .map(|r| r.requested_procs as u32)
                .collect();
            let pmf = size_pmf(&params, procs);
            let n = sizes.len() as f64;
            // Kolmogorov–Smirnov distance against the exact CDF (1.95/√n: the 0.1% level).
            let mut sorted = sizes.clone();
            sorted.sort_unstable();
            let (mut cum, mut ks) = (0.0, 0f64);
            for (&size, &q) in &pmf {
                cum += q;
                let below = sorted.partition_point(|&s| s <= size) as f64 / n;
                ks = ks.max((below - cum).abs());
            }
            assert!(
                ks < 1.95 / n.sqrt(),
                "P = {procs}, {name}: KS distance {ks:.4} over {n} jobs"
            );
            assert_eq!(
                sorted.last().copied(),
                pmf.keys().next_back().copied(),
                "P = {procs}, {name}: the largest job"
            );
            let (mean, sd, pow2) = parallel_stats(&pmf);
            let logs: Vec<f64> = sizes
                .iter()
                .filter(|&&s| s > 1)
                .map(|&s| f64::from(s).log2())
                .collect();
            let n_par = logs.len() as f64;
            let got_mean = logs.iter().sum::<f64>() / n_par;
            assert!(
                (got_mean - mean).abs() < 4.0 * sd / n_par.sqrt(),
                "P = {procs}, {name}: mean log2 size of parallel jobs {got_mean:.3}, model {mean:.3}"
            );
            let got_pow2 = logs.iter().filter(|l| l.fract() == 0.0).count() as f64 / n_par;
            let pow2_sd = (pow2 * (1.0 - pow2)).sqrt();
            assert!(
                (got_pow2 - pow2).abs() < 4.0 * pow2_sd / n_par.sqrt(),
                "P = {procs}, {name}: power-of-two share of parallel jobs {got_pow2:.4}, model {pow2:.4}"
            );
            mix_n += n_par;
            mix_mean += n_par * mean;
            mix_var += n_par * sd * sd;
            mix_pow2 += n_par * pow2;
            mix_pow2_var += n_par * pow2 * (1.0 - pow2);
            all_logs.extend(logs);
        }
        let got_mean = all_logs.iter().sum::<f64>() / mix_n;
        let got_pow2 = all_logs.iter().filter(|l| l.fract() == 0.0).count() as f64 / mix_n;
        let (mean, pow2) = (mix_mean / mix_n, mix_pow2 / mix_n);
        assert!(
            (got_mean - mean).abs() < 4.0 * mix_var.sqrt() / mix_n,
            "P = {procs}: mean log2 size of parallel jobs {got_mean:.3}, model {mean:.3}"
        );
        assert!(
            (got_pow2 - pow2).abs() < 4.0 * mix_pow2_var.sqrt() / mix_n,
            "P = {procs}: power-of-two share {got_pow2:.4}, model {pow2:.4}"
        );
        eprintln!(
            "P = {procs}: mean log2 size of parallel jobs {got_mean:.3} (model {mean:.3}), power-of-two share {got_pow2:.4} (model {pow2:.4})"
        );
    }
}

#[test]
fn the_published_mixture_has_the_models_headline_figures() {
    // The model at P = 128 with its stream mixture (batch 14.97% of arrivals, from the mean
    // inter-arrival e^g, g ~ Gamma(aarr·arar, barr) below 13, of each stream): mean log2 size
    // of parallel jobs 2.75, a power-of-two share of 0.835, and a median runtime of 18 s.
    let batch_share = 0.149_725;
    let (batch, interactive) = (StreamParams::BATCH, StreamParams::INTERACTIVE);
    let (b, i) = (size_pmf(&batch, 128), size_pmf(&interactive, 128));
    let parallel = |pmf: &BTreeMap<u32, f64>| -> f64 {
        pmf.iter().filter(|(n, _)| **n > 1).map(|(_, q)| q).sum()
    };
    let (wb, wi) = (
        batch_share * parallel(&b),
        (1.0 - batch_share) * parallel(&i),
    );
    let ((mb, _, pb), (mi, _, pi)) = (parallel_stats(&b), parallel_stats(&i));
    let mean = (wb * mb + wi * mi) / (wb + wi);
    let pow2 = (wb * pb + wi * pi) / (wb + wi);
    assert!((mean - 2.755).abs() < 0.001, "{mean}");
    assert!((pow2 - 0.835).abs() < 0.001, "{pow2}");
    let cdf = |r: u64| {
        batch_share * runtime_cdf(&batch, &b, r)
            + (1.0 - batch_share) * runtime_cdf(&interactive, &i, r)
    };
    assert!(cdf(17) < 0.5 && cdf(18) >= 0.5, "{} {}", cdf(17), cdf(18));
}

#[test]
fn median_runtimes_follow_the_model() {
    for procs in [128u64, 1024] {
        let records = published(60_000, procs, &[4, 5]);
        let n_all = records.len() as f64;
        // The mixture's CDF at the model's 18 s (P = 128) or its P = 1024 median, given the
        // observed count of each stream.
        let mix_at = if procs == 128 { 18 } else { 35 };
        let mut mix_model = 0.0;
        for (name, job_type, params) in published_streams() {
            let runtimes: Vec<u64> = records
                .iter()
                .filter(|r| r.queue == job_type)
                .map(|r| r.run_time as u64)
                .collect();
            let pmf = size_pmf(&params, procs);
            let median = (1..)
                .find(|&r| runtime_cdf(&params, &pmf, r) >= 0.5)
                .unwrap();
            let n = runtimes.len() as f64;
            // The share at or below the model's median, against the model's.
            let model = runtime_cdf(&params, &pmf, median);
            let got = runtimes.iter().filter(|&&r| r <= median).count() as f64 / n;
            let mut sorted = runtimes.clone();
            sorted.sort_unstable();
            assert!(
                (got - model).abs() < 4.0 * (model * (1.0 - model) / n).sqrt(),
                "P = {procs}, {name}: {got:.4} of runtimes ≤ {median} s, model {model:.4} (sample median {} s)",
                sorted[sorted.len() / 2]
            );
            eprintln!(
                "P = {procs}, {name}: median runtime {} s, model {median} s",
                sorted[sorted.len() / 2]
            );
            mix_model += n / n_all * runtime_cdf(&params, &pmf, mix_at);
        }
        let got = records
            .iter()
            .filter(|r| r.run_time as u64 <= mix_at)
            .count() as f64
            / n_all;
        let mut sorted: Vec<i64> = records.iter().map(|r| r.run_time).collect();
        sorted.sort_unstable();
        assert!(
            (got - mix_model).abs() < 4.0 * (mix_model * (1.0 - mix_model) / n_all).sqrt(),
            "P = {procs}: {got:.4} of runtimes ≤ {mix_at} s, model {mix_model:.4}"
        );
        eprintln!(
            "P = {procs}: median runtime {} s, {got:.4} of runtimes ≤ {mix_at} s (model {mix_model:.4})",
            sorted[sorted.len() / 2]
        );
    }
}

#[test]
fn field_15_carries_the_job_type_as_m_lublin99_writes_it() {
    let (_, records) = generate(&GeneratorSpec::lublin(20_000), 256, 5).unwrap();
    let batch = records.iter().filter(|r| r.queue == 1).count();
    let interactive = records.iter().filter(|r| r.queue == 0).count();
    assert_eq!(batch + interactive, 20_000);
    assert!(
        batch > 1_000 && interactive > 10_000,
        "{batch} batch, {interactive} interactive"
    );
    assert!(typeless(1_000, 256, 5).iter().all(|r| r.queue == 0));
    assert!(
        records
            .windows(2)
            .all(|w| w[0].submit_time <= w[1].submit_time)
    );
}

/// The arrival density over the day: each half hour's weight spread evenly over it.
fn circular_mean_hour(times: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (mut x, mut y) = (0.0, 0.0);
    for (second_of_day, weight) in times {
        let angle = second_of_day / 86_400.0 * std::f64::consts::TAU;
        x += weight * angle.cos();
        y += weight * angle.sin();
    }
    y.atan2(x).rem_euclid(std::f64::consts::TAU) / std::f64::consts::TAU * 24.0
}

#[test]
fn the_daily_cycle_holds_to_the_end_of_a_long_trace() {
    // An integer clock (as `m_lublin99.c` keeps) loses about half a second per job against the
    // day's buckets: 100,000 typeless jobs would end some 14 hours off the cycle, and the
    // published model's 85,000 interactive jobs some 11 hours. The batch stream's mean hour
    // is too noisy over 100,000 jobs to see its 2 hours.
    let typeless_jobs = typeless(100_000, 128, 6);
    let published_jobs = published(100_000, 128, &[6]);
    for (name, records, params) in [
        ("typeless", &typeless_jobs, StreamParams::TYPELESS),
        ("interactive", &published_jobs, StreamParams::INTERACTIVE),
    ] {
        let w = params.daily_weights();
        let model = circular_mean_hour(
            (0..48 * 30).map(|i| (f64::from(i) * 60.0 + 30.0, w[i as usize / 30])),
        );
        let submits: Vec<i64> = records
            .iter()
            .filter(|r| r.queue == INTERACTIVE_TYPE)
            .map(|r| r.submit_time)
            .collect();
        let tenth = submits.len() / 10;
        for (part, slice) in [
            ("first", &submits[..tenth]),
            ("last", &submits[submits.len() - tenth..]),
        ] {
            let got = circular_mean_hour(slice.iter().map(|&t| ((t % 86_400) as f64, 1.0)));
            let off = (got - model + 12.0).rem_euclid(24.0) - 12.0;
            assert!(
                off.abs() < 1.5,
                "{name}, {part} tenth of {} jobs: mean hour of arrival {got:.2}, model {model:.2}",
                submits.len()
            );
        }
    }
}

/// One distribution `est_model.cc` printed: (jobs, maximum), then each (estimate, jobs).
type ReferenceCase = ((usize, u64), Vec<(u64, usize)>);

/// The reference distributions `est_model.cc` printed.
fn est_model_reference() -> Vec<ReferenceCase> {
    let text = include_str!("../data/est_model_reference.txt");
    let mut cases: Vec<ReferenceCase> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            ["case", jobs, max] => {
                cases.push(((jobs.parse().unwrap(), max.parse().unwrap()), vec![]))
            }
            [time, count] => cases
                .last_mut()
                .unwrap()
                .1
                .push((time.parse().unwrap(), count.parse().unwrap())),
            _ => panic!("bad reference line {line}"),
        }
    }
    cases
}

#[test]
fn the_estimate_distribution_is_est_model_ccs() {
    let cases = est_model_reference();
    assert_eq!(cases.len(), 4);
    for ((jobs, max), reference) in cases {
        for seed in [1, 2] {
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
            let bins = tsafrir::histogram(jobs, max, &mut rng).unwrap();
            let times = |b: &[(u64, usize)]| -> Vec<u64> { b.iter().map(|x| x.0).collect() };
            let counts = |b: &[(u64, usize)]| -> Vec<usize> {
                let mut c: Vec<usize> = b.iter().map(|x| x.1).collect();
                c.sort_unstable();
                c
            };
            let ours: Vec<(u64, usize)> = bins.iter().map(|b| (b.estimate_s, b.jobs)).collect();
            assert_eq!(
                times(&ours),
                times(&reference),
                "{jobs} jobs, max {max}: values"
            );
            assert_eq!(
                counts(&ours),
                counts(&reference),
                "{jobs} jobs, max {max}: counts"
            );
            // The maximum is the most popular value.
            let top = ours.iter().max_by_key(|b| b.1).unwrap();
            assert_eq!(top.0, max, "{jobs} jobs, max {max}");
        }
    }
}

#[test]
fn estimates_cover_runtimes_and_have_the_models_head() {
    let records = published(60_000, 128, &[7]);
    let n = records.len() as f64;
    assert!(records.iter().all(|r| r.requested_time >= r.run_time));
    let max = 48 * 3600;
    let (m, h) = (60, 3600);
    // The 20 head values for a maximum of 48 h: the maximum, the 15 joint values, then 45 h
    // (5 h multiples) and 40, 30, 20 h (10 h multiples) counting down from it.
    let head = [
        5 * m,
        10 * m,
        15 * m,
        20 * m,
        30 * m,
        h,
        2 * h,
        3 * h,
        4 * h,
        5 * h,
        6 * h,
        8 * h,
        10 * h,
        12 * h,
        18 * h,
        20 * h,
        30 * h,
        40 * h,
        45 * h,
        max,
    ];
    let on_head = records
        .iter()
        .filter(|r| head.contains(&r.requested_time))
        .count() as f64
        / n;
    let at_max = records.iter().filter(|r| r.requested_time == max).count() as f64 / n;
    // Rank 1 takes 89% less ranks 2..20 of 14.0491·e^(−0.177531x) + 0.462513 %.
    let max_share = (89.0
        - (2..=20)
            .map(|x| 14.0491 * (-0.177531 * f64::from(x)).exp() + 0.462513)
            .sum::<f64>())
        / 100.0;
    // The counts are rounded per value and then made to sum to the jobs: off by at most one
    // job per value, so at most K/N in any share.
    let k = tsafrir::distinct_estimates(records.len()) as f64;
    assert!((on_head - 0.89).abs() <= k / n, "head share {on_head:.4}");
    assert!(
        (at_max - max_share).abs() <= k / n,
        "share at the maximum {at_max:.4}, model {max_share:.4}"
    );
    eprintln!(
        "estimates: head share {on_head:.4} (model 0.89), maximum's share {at_max:.4} (model {max_share:.4})"
    );
    let mut distinct: Vec<i64> = records.iter().map(|r| r.requested_time).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len() as f64, k);
}

#[test]
fn the_estimate_models_limits_give_its_errors() {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0);
    assert_eq!(
        tsafrir::assign(&mut [10, 20], 3599, &mut rng)
            .unwrap_err()
            .to_string(),
        "the maximum estimate 3599 s is below one hour (3600 s), the least the estimate model of Tsafrir et al. accepts"
    );
    // 1,000 jobs of an hour cannot all have estimates of at least an hour when only the
    // maximum's share of the model does.
    let mut long = vec![3600u64; 1000];
    assert_eq!(
        tsafrir::assign(&mut long, 3600, &mut rng)
            .unwrap_err()
            .to_string(),
        "the estimate model cannot give every job an estimate at least its runtime: 1000 jobs run 3600 s or longer, but only 320 of its estimates are that long; raise the maximum estimate (3600 s)"
    );
    assert_eq!(tsafrir::distinct_estimates(20), 10);
    assert_eq!(tsafrir::distinct_estimates(1000), 35);
    assert_eq!(tsafrir::distinct_estimates(100_000), 378);
    assert_eq!(tsafrir::distinct_estimates(1_000_000), 565);
}

#[test]
fn the_same_seed_gives_the_same_workload_and_another_seed_does_not() {
    let a = typeless(5_000, 64, 1);
    assert_eq!(a, typeless(5_000, 64, 1));
    assert_ne!(a, typeless(5_000, 64, 2));
}

#[test]
fn bad_parameters_are_refused() {
    let mut p = StreamParams::TYPELESS;
    p.a1 = -1.0;
    let spec = GeneratorSpec {
        streams: Streams::Typeless(p),
        ..GeneratorSpec::lublin(10)
    };
    assert_eq!(
        generate(&spec, 64, 0).unwrap_err().to_string(),
        "Lublin model parameter a1/b1 = -1 is invalid: gamma shape and scale must be positive and finite"
    );
    let mut p = StreamParams::BATCH;
    p.uprob = 1.5;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0);
    assert_eq!(
        lublin::generate(Streams::Batch(p), 10, 64, &mut rng)
            .unwrap_err()
            .to_string(),
        "Lublin model parameter uprob = 1.5 is invalid: a probability from 0 to 1"
    );
}

#[test]
fn a_target_load_scales_arrivals_and_keeps_jobs_and_the_daily_cycle() {
    let plain = GeneratorSpec {
        streams: Streams::Typeless(StreamParams::TYPELESS),
        ..GeneratorSpec::lublin(50_000)
    };
    let loaded = GeneratorSpec {
        load: Some(0.8),
        ..plain
    };
    let (_, a) = generate(&plain, 4096, 3).unwrap();
    let (_, b) = generate(&loaded, 4096, 3).unwrap();
    // The same jobs, arriving at other times.
    let shape = |r: &[placesim_workload::SwfRecord]| -> Vec<(i64, i64)> {
        r.iter().map(|x| (x.requested_procs, x.run_time)).collect()
    };
    assert_eq!(shape(&a), shape(&b));
    let load = |r: &[placesim_workload::SwfRecord]| {
        let work: f64 = r
            .iter()
            .map(|x| x.requested_procs as f64 * x.run_time as f64)
            .sum();
        let span = (r.last().unwrap().submit_time - r[0].submit_time) as f64;
        work / (4096.0 * span)
    };
    assert!(
        (load(&a) - 0.8).abs() > 0.15,
        "the published rate gives another load: {}",
        load(&a)
    );
    assert!((load(&b) - 0.8).abs() < 0.04, "offered load {}", load(&b));
    // The daily cycle keeps its shape.
    let w = StreamParams::TYPELESS.daily_weights();
    let mut hist = [0f64; 48];
    for r in &b {
        hist[((r.submit_time / 1800) % 48) as usize] += 1.0;
    }
    let tv: f64 = hist
        .iter()
        .zip(&w)
        .map(|(h, w)| (h / b.len() as f64 - w / 48.0).abs())
        .sum::<f64>()
        / 2.0;
    assert!(tv < 0.04, "total variation from the daily cycle {tv}");
}
