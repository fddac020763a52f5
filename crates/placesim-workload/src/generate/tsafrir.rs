//! User runtime estimates: Tsafrir, Etsion & Feitelson 2005, "Modeling User Runtime
//! Estimates" (../shared/spec/metrics-and-models.md §2.5), after its reference `est_model.cc`.
//!
//! Estimates are modal: a few round values take most jobs, and the maximum is the most popular.
//! - K distinct values, piecewise linear in the job count N through (0,0), (20,10), (200,20),
//!   (1000,35), (10⁴,90), (7·10⁴,340), (2.5·10⁵,565), and beyond along the last segment.
//! - Popularity: the 20 most popular values take 89% of jobs; rank x = 2..20 takes
//!   14.0491·e^(−0.177531x) + 0.462513 %; rank 1, the maximum, the rest of the 89%; ranks ≥ 21
//!   share the other 11% as 795.6·x^(−2.267).
//! - Values: the maximum; the round values 5, 10, 15, 20, 30 min and 1, 2, 3, 4, 5, 6, 8, 10,
//!   12, 18 h below it; then values at relative times (a−1)x/(a−x) of the maximum, x = r/K,
//!   a = 1 + 12.1039·K^(−0.6026), rounded to the minute (to 5 min above 1 h, to 30 min above
//!   10 h).
//! - Assignment: jobs by runtime, longest first, each take an estimate drawn at random from
//!   the values left that are ≥ its runtime; a runtime above the maximum is cut to it.
//!
//! Two choices the paper leaves open, made here: which round value has which popularity rank
//! ([`ROUND_BY_POPULARITY`]: the order of the values most seen in the archive's logs), and what
//! a job gets when every value left is below its runtime (the smallest value ≥ its runtime,
//! reused). Both are deterministic under the seed.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;

/// Round values below the maximum, most popular first.
pub const ROUND_BY_POPULARITY: [u64; 15] = [
    3600, 1800, 7200, 600, 14400, 43200, 900, 300, 1200, 28800, 21600, 10800, 64800, 18000, 36000,
];

/// K, the number of distinct estimates for `n` jobs.
pub fn distinct_estimates(n: usize) -> usize {
    const POINTS: [(f64, f64); 7] = [
        (0.0, 0.0),
        (20.0, 10.0),
        (200.0, 20.0),
        (1000.0, 35.0),
        (1e4, 90.0),
        (7e4, 340.0),
        (2.5e5, 565.0),
    ];
    let x = n as f64;
    let seg = POINTS
        .windows(2)
        .find(|w| x <= w[1].0)
        .unwrap_or(&POINTS[5..7]);
    let (x0, y0, x1, y1) = (seg[0].0, seg[0].1, seg[1].0, seg[1].1);
    let k = y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    (k.round() as usize).clamp(1, n.max(1))
}

/// The share (fraction of jobs) of each popularity rank 1..=k.
pub fn shares(k: usize) -> Vec<f64> {
    let head_total = 0.89;
    let mut s = vec![0.0; k];
    let head = k.min(20);
    for (x, share) in s.iter_mut().enumerate().take(head).skip(1) {
        let x = (x + 1) as f64;
        *share = (14.0491 * (-0.177531 * x).exp() + 0.462513) / 100.0;
    }
    let rest: f64 = s[1..head].iter().sum();
    s[0] = head_total - rest;
    if k > 20 {
        let tail: Vec<f64> = (21..=k).map(|x| 795.6 * (x as f64).powf(-2.267)).collect();
        let sum: f64 = tail.iter().sum();
        for (t, v) in s[20..].iter_mut().zip(tail) {
            *t = v / sum * (1.0 - head_total);
        }
    }
    let total: f64 = s.iter().sum();
    s.iter().map(|v| v / total).collect()
}

/// The k estimate values, by popularity rank: the maximum, the round values below it, then
/// the model's relative times.
pub fn values(k: usize, max_estimate: u64) -> Vec<u64> {
    let mut v = vec![max_estimate];
    for &r in &ROUND_BY_POPULARITY {
        if v.len() < k && r < max_estimate {
            v.push(r);
        }
    }
    let a = 1.0 + 12.1039 * (k as f64).powf(-0.6026);
    let mut rank = 1;
    while v.len() < k && rank <= 4 * k {
        let x = rank as f64 / k as f64;
        let rel = if x < a { (a - 1.0) * x / (a - x) } else { 1.0 };
        let t = rel * max_estimate as f64;
        let unit = if t < 3600.0 {
            60.0
        } else if t < 36000.0 {
            300.0
        } else {
            1800.0
        };
        let t = ((t / unit).round() * unit).max(60.0) as u64;
        if t < max_estimate && !v.contains(&t) {
            v.push(t);
        }
        rank += 1;
    }
    // Values are whole minutes below the maximum; if the curve gave too few, fill downward.
    let mut fill = max_estimate.saturating_sub(60);
    while v.len() < k && fill >= 60 {
        if !v.contains(&fill) {
            v.push(fill);
        }
        fill -= 60;
    }
    v
}

/// Gives each job an estimate; `runtimes` may be cut to the maximum. Returns the estimates,
/// in job order.
pub fn assign(runtimes: &mut [u64], max_estimate: u64, rng: &mut Pcg64Mcg) -> Vec<u64> {
    let n = runtimes.len();
    for r in runtimes.iter_mut() {
        *r = (*r).min(max_estimate);
    }
    let k = distinct_estimates(n);
    let vals = values(k, max_estimate);
    let shares = shares(vals.len());
    // Counts by largest remainder, so they sum to n exactly.
    let raw: Vec<f64> = shares.iter().map(|s| s * n as f64).collect();
    let mut counts: Vec<usize> = raw.iter().map(|r| r.floor() as usize).collect();
    let mut left = n - counts.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..raw.len()).collect();
    order.sort_by(|&a, &b| {
        let fa = raw[a] - raw[a].floor();
        let fb = raw[b] - raw[b].floor();
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    for &i in order.iter().cycle().take(raw.len() * 2) {
        if left == 0 {
            break;
        }
        counts[i] += 1;
        left -= 1;
    }
    // Every estimate, longest first.
    let mut pool_sorted: Vec<u64> = Vec::with_capacity(n);
    for (v, c) in vals.iter().zip(&counts) {
        pool_sorted.extend(std::iter::repeat_n(*v, *c));
    }
    pool_sorted.sort_unstable_by(|a, b| b.cmp(a));
    let mut sorted_vals = vals.clone();
    sorted_vals.sort_unstable();
    let mut jobs: Vec<usize> = (0..n).collect();
    jobs.sort_by(|&a, &b| runtimes[b].cmp(&runtimes[a]).then(a.cmp(&b)));
    let mut estimates = vec![0u64; n];
    let mut available: Vec<u64> = Vec::new();
    let mut next = 0;
    for j in jobs {
        let r = runtimes[j];
        while next < pool_sorted.len() && pool_sorted[next] >= r {
            available.push(pool_sorted[next]);
            next += 1;
        }
        estimates[j] = if available.is_empty() {
            // Every value ≥ r is taken: reuse the smallest such value.
            let i = sorted_vals.partition_point(|&v| v < r);
            sorted_vals.get(i).copied().unwrap_or(max_estimate)
        } else {
            let i = rng.random_range(0..available.len());
            available.swap_remove(i)
        };
    }
    estimates
}
