//! The synthetic workload models against their analytic and published values, on large
//! samples, with stated tolerances (about 4 standard errors or better).

use placesim_workload::generate::{
    GeneratorSpec, StreamParams, Streams, generate, lublin, tsafrir,
};
use rand::SeedableRng;

fn typeless(jobs: usize, procs: u64, seed: u64) -> Vec<placesim_workload::SwfRecord> {
    let spec = GeneratorSpec {
        streams: Streams::Typeless(StreamParams::TYPELESS),
        ..GeneratorSpec::lublin(jobs)
    };
    generate(&spec, procs, seed).unwrap().1
}

/// P(par < x) for the two-stage uniform of log₂ size.
fn two_stage_cdf(x: f64, lo: f64, med: f64, hi: f64, uprob: f64) -> f64 {
    let seg = |x: f64, a: f64, b: f64| ((x - a) / (b - a)).clamp(0.0, 1.0);
    uprob * seg(x, lo, med) + (1.0 - uprob) * seg(x, med, hi)
}

#[test]
fn sizes_serial_share_and_power_of_two_emphasis() {
    let p = StreamParams::TYPELESS;
    let records = typeless(200_000, 128, 7);
    let n = records.len() as f64;
    let serial = records.iter().filter(|r| r.requested_procs == 1).count() as f64 / n;
    // Every parallel draw gives at least 2 processors, so P(serial) = SerialProb.
    assert!(
        (serial - p.serial_prob).abs() < 0.005,
        "serial share {serial}"
    );
    // Analytic share of powers of two among parallel jobs: the rounded draws (Pow2Prob), plus
    // the unrounded draws whose round(2^par) happens to be a power of two.
    let (lo, hi) = (p.ulow, 7.0);
    let med = p.umed_for(hi);
    let unrounded_pow2: f64 = (1..=7)
        .map(|k| {
            let m = f64::from(1u32 << k);
            two_stage_cdf((m + 0.5).log2(), lo, med, hi, p.uprob)
                - two_stage_cdf((m - 0.5).log2(), lo, med, hi, p.uprob)
        })
        .sum();
    let parallel = 1.0 - p.serial_prob;
    let expect = (p.pow2_prob + (parallel - p.pow2_prob) * unrounded_pow2) / parallel;
    let par: Vec<_> = records.iter().filter(|r| r.requested_procs > 1).collect();
    let pow2 = par
        .iter()
        .filter(|r| (r.requested_procs as u64).is_power_of_two())
        .count() as f64
        / par.len() as f64;
    assert!(
        (pow2 - expect).abs() < 0.006,
        "power-of-two share {pow2}, expected {expect}"
    );
    assert!(
        records
            .iter()
            .all(|r| (1..=128).contains(&r.requested_procs))
    );
}

#[test]
fn log_runtimes_are_hyper_gamma_and_grow_with_size() {
    let p = StreamParams::TYPELESS;
    let records = typeless(300_000, 128, 11);
    for (size, tolerance) in [(1i64, 0.05), (64, 0.12)] {
        let logs: Vec<f64> = records
            .iter()
            .filter(|r| r.requested_procs == size)
            .map(|r| (r.run_time as f64).ln())
            .collect();
        let q = p.short_branch_prob(size as u32);
        // E[ln runtime] = q·a1·b1 + (1 − q)·a2·b2 (truncation at 12 removes < 0.1% of mass).
        let expect = q * p.a1 * p.b1 + (1.0 - q) * p.a2 * p.b2;
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        assert!(
            (mean - expect).abs() < tolerance,
            "size {size}: mean ln runtime {mean} over {} jobs, expected {expect}",
            logs.len()
        );
    }
    assert!(
        records
            .iter()
            .all(|r| r.run_time >= 1 && r.run_time <= 162_755)
    );
}

#[test]
fn arrivals_follow_the_daily_cycle() {
    let p = StreamParams::TYPELESS;
    let records = typeless(200_000, 128, 3);
    let mut hist = [0f64; 48];
    for r in &records {
        hist[((r.submit_time / 1800) % 48) as usize] += 1.0;
    }
    let w = p.daily_weights();
    // In the long run, arrivals in a half hour are proportional to its weight.
    let tv: f64 = hist
        .iter()
        .zip(&w)
        .map(|(h, w)| (h / records.len() as f64 - w / 48.0).abs())
        .sum::<f64>()
        / 2.0;
    assert!(tv < 0.03, "total variation from the daily cycle {tv}");
    // The cycle is real: the busiest half hour has several times the quietest's arrivals.
    let (max, min) = hist
        .iter()
        .fold((0f64, f64::MAX), |(a, b), &h| (a.max(h), b.min(h)));
    assert!(max > 4.0 * min, "busiest {max}, quietest {min}");
    assert!(
        records
            .windows(2)
            .all(|w| w[0].submit_time <= w[1].submit_time)
    );
}

#[test]
fn batch_and_interactive_streams_are_merged_and_labelled() {
    let (_, records) = generate(&GeneratorSpec::lublin(50_000), 256, 5).unwrap();
    let batch = records.iter().filter(|r| r.queue == 1).count();
    let interactive = records.iter().filter(|r| r.queue == 2).count();
    assert_eq!(batch + interactive, 50_000);
    assert!(
        batch > 5_000 && interactive > 5_000,
        "{batch} batch, {interactive} interactive"
    );
    assert!(
        records
            .windows(2)
            .all(|w| w[0].submit_time <= w[1].submit_time)
    );
}

#[test]
fn estimates_are_modal_cover_runtimes_and_match_the_published_shares() {
    let records = typeless(100_000, 128, 9);
    let n = records.len();
    assert!(records.iter().all(|r| r.requested_time >= r.run_time));
    let mut distinct: Vec<i64> = records.iter().map(|r| r.requested_time).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let k = tsafrir::distinct_estimates(n);
    // 100,000 jobs lie between (7·10⁴, 340) and (2.5·10⁵, 565): 340 + 225 · 3/18 = 377.5.
    assert_eq!(k, 378);
    assert!(
        distinct.len() <= k && distinct.len() > k * 9 / 10,
        "{} of {k}",
        distinct.len()
    );
    let max = 48 * 3600;
    let at_max = records.iter().filter(|r| r.requested_time == max).count() as f64 / n as f64;
    let share = tsafrir::shares(k)[0];
    assert!(
        (at_max - share).abs() < 0.01,
        "share at the maximum {at_max}, model {share}"
    );
    // The 20 most popular values take 89% of jobs.
    let mut counts: Vec<usize> = distinct
        .iter()
        .map(|v| records.iter().filter(|r| r.requested_time == *v).count())
        .collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let head = counts[..20].iter().sum::<usize>() as f64 / n as f64;
    assert!((head - 0.89).abs() < 0.02, "top-20 share {head}");
}

#[test]
fn estimate_shares_sum_to_one_with_the_published_head() {
    let s = tsafrir::shares(400);
    assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((s[..20].iter().sum::<f64>() - 0.89).abs() < 1e-12);
    // Rank 2 gets 14.0491·e^(−0.355062) + 0.462513 = 10.31%.
    assert!((s[1] - 0.103_103).abs() < 1e-4, "{}", s[1]);
    assert_eq!(tsafrir::distinct_estimates(20), 10);
    assert_eq!(tsafrir::distinct_estimates(1000), 35);
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
