//! User runtime estimates: Tsafrir, Etsion & Feitelson 2005, "Modeling User Runtime
//! Estimates" (../shared/spec/metrics-and-models.md §2.5), as its reference implementation
//! `est_model.cc` gives it, step for step, without user-supplied bins.
//!
//! Estimates are modal: a few round values take most jobs, and the maximum is the most popular.
//! 1. **K distinct values** ([`distinct_estimates`]): piecewise linear in the job count N
//!    through (0,0), (20,10), (200,20), (1000,35), (10⁴,90), (7·10⁴,340), (2.5·10⁵,565), and
//!    565 beyond (`get_binnum`).
//! 2. **The head** ([`head_times`]): the maximum, the 15 "joint" values below it (5, 15, 10,
//!    20, 30 min; 1, 2, 3, 4, 5, 6, 8, 10, 12, 18 h), then multiples of 200 h, 100 h, 50 h,
//!    10 h, 5 h, 2 h, 1 h, 20 min, 10 min, 5 min counting down from the maximum, until there
//!    are 20 (`gen_head_bintim`).
//! 3. **Head popularity** ([`head_shares_percent`]): rank x = 2..20 takes
//!    14.0491·e^(−0.177531x) + 0.462513 % of jobs, rank 1 the rest of 89 % (`gen_head_binsiz`).
//! 4. **Which head value has which rank** ([`time_rank_to_popularity_rank`]): the maximum has
//!    rank 1; the others draw ranks from the ranks seen at the same time rank in four archive
//!    logs (SDSC, CTC, KTH, BLUE), each rank forced once its latest time rank in those logs is
//!    reached, otherwise the better of two random picks (`gen_head_timrnk_poprnk_map`).
//! 5. **The tail** ([`tail_times`], [`tail_shares_percent`]): K − 20 values at relative times
//!    (a−1)x/(a−x) of the maximum, x = i/(K − 20), a = 1 + 12.1039·K^(−0.6026), on whole
//!    minutes, moved by +30, −30, +20, −20, +10 or −10 s off a value already taken; their
//!    shares 795.6·x^(−2.267) for popularity ranks x ≥ 21, scaled to the other 11 %, matched to
//!    the times at random (`gen_tail_bintim`, `gen_tail_binsiz`, `gen_tail_map`).
//! 6. **Jobs per value** ([`histogram`]): max(1, round(share · N)), then made to sum to N by
//!    the code's four passes: proportional, ±1 per value, down to 1, down to 0, largest values
//!    first (`est_gen_dist`, `adjust_njobs`).
//! 7. **Assignment** ([`assign`]): runtimes above the maximum are cut to it; jobs by runtime,
//!    longest first, each take an estimate drawn uniformly from those left that are at least
//!    its runtime (`est_assign`, `shuffle`). If the k-th longest runtime exceeds the k-th
//!    largest estimate no assignment exists, and the model fails, as the C code does.
//!
//! Where the C code leaves an order unspecified (`std::sort` of equal sizes, equal runtimes),
//! ties go to the shorter estimate and to the earlier job. The C code refuses a maximum below
//! one hour; between one hour and 100 minutes the head has fewer than 20 values (there are not
//! 20 round values below the maximum), and the head values take the shares of their ranks in
//! the order of those ranks (the C code would read past its array there).

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use std::collections::BTreeSet;

const MINUTE_S: u64 = 60;
const HOUR_S: u64 = 3600;

/// The smallest maximum estimate the model accepts (`gen_head_bintim`).
pub const MIN_MAX_ESTIMATE_S: u64 = HOUR_S;

/// How many values make the head of the distribution.
pub const HEAD_VALUES: usize = 20;

/// The share of jobs, in percent, on the head values (`binsiz_head_sum`).
pub const HEAD_PERCENT: f64 = 89.0;

/// The 15 values in the top 20 of all four logs the model was fitted on, in the code's order.
pub const JOINT_ESTIMATES_S: [u64; 15] = [
    5 * MINUTE_S,
    15 * MINUTE_S,
    10 * MINUTE_S,
    20 * MINUTE_S,
    30 * MINUTE_S,
    HOUR_S,
    2 * HOUR_S,
    3 * HOUR_S,
    4 * HOUR_S,
    5 * HOUR_S,
    6 * HOUR_S,
    8 * HOUR_S,
    10 * HOUR_S,
    12 * HOUR_S,
    18 * HOUR_S,
];

/// Multiples that complete the head, counting down from the maximum, in the code's order.
const ROUND_MULTIPLES_S: [u64; 10] = [
    200 * HOUR_S,
    100 * HOUR_S,
    50 * HOUR_S,
    10 * HOUR_S,
    5 * HOUR_S,
    2 * HOUR_S,
    HOUR_S,
    20 * MINUTE_S,
    10 * MINUTE_S,
    5 * MINUTE_S,
];

/// `TIMRNK_TO_POPRNK`: for each top-20 time rank (0 is the maximum, then ascending time), the
/// popularity rank of that value in SDSC-106, CTC, KTH (4 h) and BLUE.
const TIME_RANK_TO_POPULARITY_RANK: [[usize; 4]; HEAD_VALUES] = [
    [3, 1, 1, 1],
    [1, 3, 4, 6],
    [4, 4, 10, 5],
    [17, 2, 14, 3],
    [13, 12, 20, 7],
    [7, 9, 2, 2],
    [8, 8, 3, 18],
    [18, 18, 7, 19],
    [2, 6, 12, 4],
    [6, 7, 6, 11],
    [16, 11, 19, 20],
    [10, 20, 5, 9],
    [5, 16, 18, 10],
    [15, 5, 16, 14],
    [14, 14, 9, 13],
    [19, 13, 17, 16],
    [11, 10, 15, 15],
    [12, 15, 13, 17],
    [9, 17, 8, 8],
    [20, 19, 11, 12],
];

/// The points of the linear model of K in N (`BINUM_LINEAR`).
const DISTINCT_BY_JOBS: [(u64, u64); 7] = [
    (0, 0),
    (20, 10),
    (200, 20),
    (1000, 35),
    (10_000, 90),
    (70_000, 340),
    (250_000, 565),
];

/// Why no estimates could be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    /// The model needs a maximum of at least an hour.
    #[error(
        "the maximum estimate {max_estimate_s} s is below one hour (3600 s), the least the estimate model of Tsafrir et al. accepts"
    )]
    MaxEstimateTooSmall {
        /// The maximum given.
        max_estimate_s: u64,
    },
    /// More long runtimes than long estimates.
    #[error(
        "the estimate model cannot give every job an estimate at least its runtime: {jobs} jobs run {runtime_s} s or longer, but only {estimates} of its estimates are that long; raise the maximum estimate ({max_estimate_s} s)"
    )]
    RuntimesTooLong {
        /// A runtime, seconds, that too many jobs reach.
        runtime_s: u64,
        /// How many jobs run that long or longer.
        jobs: usize,
        /// How many estimates are that long or longer.
        estimates: usize,
        /// The maximum estimate, seconds.
        max_estimate_s: u64,
    },
}

/// One value of the estimate distribution and how many jobs have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EstimateBin {
    /// The estimate, seconds.
    pub estimate_s: u64,
    /// How many jobs.
    pub jobs: usize,
}

/// K, the number of distinct estimates for `n` jobs (`get_binnum`, linear model).
pub fn distinct_estimates(n: usize) -> usize {
    let n = n as u64;
    let (last_jobs, last_values) = DISTINCT_BY_JOBS[DISTINCT_BY_JOBS.len() - 1];
    if n > last_jobs {
        return last_values as usize;
    }
    let Some(k) = DISTINCT_BY_JOBS.iter().position(|&(jobs, _)| n <= jobs) else {
        return last_values as usize;
    };
    if k == 0 {
        return 0;
    }
    let (x0, y0) = DISTINCT_BY_JOBS[k - 1];
    let (x1, y1) = DISTINCT_BY_JOBS[k];
    let slope = (y1 - y0) as f64 / (x1 - x0) as f64;
    (y0 as f64 + ((n - x0) as f64 * slope).round()) as usize
}

/// The head values: the maximum first, then the others in ascending order
/// (`gen_head_bintim`). At most [`HEAD_VALUES`].
pub fn head_times(max_estimate_s: u64) -> Vec<u64> {
    let mut head = Vec::with_capacity(HEAD_VALUES);
    head.push(max_estimate_s);
    head.extend(JOINT_ESTIMATES_S.iter().filter(|&&v| v < max_estimate_s));
    'multiples: for &multiple in &ROUND_MULTIPLES_S {
        let start = max_estimate_s / multiple * multiple;
        let mut value = start;
        while value > 0 {
            if head.len() == HEAD_VALUES {
                break 'multiples;
            }
            if !head.contains(&value) {
                head.push(value);
            }
            value -= multiple;
        }
    }
    head[1..].sort_unstable();
    head
}

/// The shares, in percent, of popularity ranks 1..=`values`, largest first
/// (`gen_head_binsiz`): ranks 2.. from the exponential model, rank 1 the rest of 89 %.
pub fn head_shares_percent(values: usize) -> Vec<f64> {
    let mut shares: Vec<f64> = (1..values)
        .map(|i| 14.0491 * (-0.177531 * (i + 1) as f64).exp() + 0.462513)
        .collect();
    let ranked: f64 = shares.iter().sum();
    shares.insert(0, HEAD_PERCENT - ranked);
    shares.sort_unstable_by(|a, b| b.total_cmp(a));
    shares
}

/// The popularity rank (1-based) of each of the 20 head time ranks
/// (`gen_head_timrnk_poprnk_map`, without user bins).
pub fn time_rank_to_popularity_rank(rng: &mut Pcg64Mcg) -> [usize; HEAD_VALUES] {
    // The latest time rank at which each popularity rank appears in any of the four logs.
    let mut due_by = [0usize; HEAD_VALUES + 1];
    for (time_rank, row) in TIME_RANK_TO_POPULARITY_RANK.iter().enumerate() {
        for &rank in row {
            due_by[rank] = due_by[rank].max(time_rank);
        }
    }
    let mut chosen = [false; HEAD_VALUES + 1];
    let mut pool: Vec<usize> = Vec::with_capacity(HEAD_VALUES * 4);
    let mut mapping = [0usize; HEAD_VALUES];
    for (time_rank, row) in TIME_RANK_TO_POPULARITY_RANK.iter().enumerate() {
        pool.extend(row.iter().filter(|&&rank| !chosen[rank]));
        let rank = if time_rank == 0 {
            // The maximum is the most popular.
            1
        } else if let Some(due) = (1..=HEAD_VALUES).find(|&r| due_by[r] <= time_rank && !chosen[r])
        {
            due
        } else {
            // FAVOR_SMALL = 2: the smaller of two picks, each uniform over the pool (whose
            // duplicates weigh a rank seen in several logs).
            let first = pool[rng.random_range(0..pool.len())];
            let second = pool[rng.random_range(0..pool.len())];
            first.min(second)
        };
        mapping[time_rank] = rank;
        chosen[rank] = true;
        pool.retain(|&r| r != rank);
    }
    mapping
}

/// The tail values, ascending, avoiding `taken` (`gen_tail_bintim`).
pub fn tail_times(
    max_estimate_s: u64,
    shape_a: f64,
    taken: &BTreeSet<u64>,
    values: usize,
) -> Vec<u64> {
    const OFFSETS_S: [i64; 7] = [0, 30, -30, 20, -20, 10, -10];
    let mut tail = BTreeSet::new();
    for i in 1..=values {
        let x = i as f64 / values as f64;
        let relative = (shape_a - 1.0) * x / (shape_a - x);
        let seconds = ((relative * max_estimate_s as f64 / 60.0).round() * 60.0) as i64;
        let free = OFFSETS_S.iter().map(|off| seconds + off).find(|&s| {
            s > 0
                && (s as u64) < max_estimate_s
                && !tail.contains(&(s as u64))
                && !taken.contains(&(s as u64))
        });
        if let Some(s) = free {
            tail.insert(s as u64);
        }
    }
    tail.into_iter().collect()
}

/// The tail shares, in percent, largest first, summing to 100 − 89 (`gen_tail_binsiz`).
pub fn tail_shares_percent(values: usize) -> Vec<f64> {
    let raw: Vec<f64> = (0..values)
        .map(|i| 795.6 * ((HEAD_VALUES + 1 + i) as f64).powf(-2.267))
        .collect();
    let sum: f64 = raw.iter().sum();
    let scale = (100.0 - HEAD_PERCENT) / sum;
    // Already descending in rank.
    raw.into_iter().map(|v| v * scale).collect()
}

/// The estimate distribution for `jobs` jobs (`est_gen_dist`): each value with its number of
/// jobs, by ascending value, the counts summing to `jobs`.
pub fn histogram(
    jobs: usize,
    max_estimate_s: u64,
    rng: &mut Pcg64Mcg,
) -> Result<Vec<EstimateBin>, EstimateError> {
    if max_estimate_s < MIN_MAX_ESTIMATE_S {
        return Err(EstimateError::MaxEstimateTooSmall { max_estimate_s });
    }
    if jobs == 0 {
        return Ok(Vec::new());
    }
    let distinct = distinct_estimates(jobs);
    let shape_a = 1.0 + 12.1039 * (distinct as f64).powf(-0.6026);
    // The head: each time rank's value takes the share of its popularity rank.
    let head = head_times(max_estimate_s);
    let head_shares = head_shares_percent(head.len());
    let ranks = time_rank_to_popularity_rank(rng);
    // Fewer than 20 head values: their ranks, in order, index the shares.
    let mut order: Vec<usize> = (0..head.len()).collect();
    order.sort_by_key(|&time_rank| ranks[time_rank]);
    let mut percent_by_time: Vec<(u64, f64)> = Vec::with_capacity(distinct.max(head.len()));
    for (share_index, &time_rank) in order.iter().enumerate() {
        percent_by_time.push((head[time_rank], head_shares[share_index]));
    }
    // The tail, matched to its shares at random.
    let taken: BTreeSet<u64> = head.iter().copied().collect();
    let mut tail = tail_times(
        max_estimate_s,
        shape_a,
        &taken,
        distinct.saturating_sub(head.len()),
    );
    let mut tail_shares = tail_shares_percent(tail.len());
    shuffle(&mut tail, rng);
    shuffle(&mut tail_shares, rng);
    percent_by_time.extend(tail.into_iter().zip(tail_shares));
    percent_by_time.sort_unstable_by_key(|&(time, _)| time);
    let mut bins: Vec<EstimateBin> = percent_by_time
        .iter()
        .map(|&(estimate_s, percent)| EstimateBin {
            estimate_s,
            jobs: ((percent * jobs as f64 / 100.0).round() as usize).max(1),
        })
        .collect();
    equalize(&mut bins, jobs);
    Ok(bins)
}

/// Fisher–Yates, as `random_shuffle` permutes.
fn shuffle<T>(items: &mut [T], rng: &mut Pcg64Mcg) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// `adjust_njobs`: makes the counts sum to `jobs`, taking or giving from the largest values
/// first, in up to four passes: proportionally, one each, down to one, down to zero.
fn equalize(bins: &mut [EstimateBin], jobs: usize) {
    let total: usize = bins.iter().map(|b| b.jobs).sum();
    let adding = jobs > total;
    let mut diff = jobs.abs_diff(total);
    if diff == 0 {
        return;
    }
    let proportion = diff as f64 / total as f64;
    for attempt in 0.. {
        if diff == 0 {
            break;
        }
        // Largest first; equal sizes by ascending value (the C sort leaves their order open).
        let mut by_size: Vec<usize> = (0..bins.len()).collect();
        by_size.sort_by(|&a, &b| bins[b].jobs.cmp(&bins[a].jobs));
        let mut left = diff;
        for index in by_size {
            let count = bins[index].jobs;
            if count == 0 {
                continue;
            }
            let mut adjust = match attempt {
                0 => (proportion * count as f64).ceil() as usize,
                1 => 1,
                2 => count - 1,
                _ => count,
            };
            if !adding {
                adjust = adjust.min(count);
                if adjust == count && attempt < 3 {
                    adjust -= 1;
                }
            }
            adjust = adjust.min(left);
            if adding {
                bins[index].jobs += adjust;
            } else {
                bins[index].jobs -= adjust;
            }
            left -= adjust;
            if left == 0 {
                break;
            }
        }
        diff = left;
    }
}

/// Gives each job an estimate (`est_gen_dist` then `est_assign`); `runtimes` above the maximum
/// are cut to it. Returns the estimates, in job order.
pub fn assign(
    runtimes: &mut [u64],
    max_estimate_s: u64,
    rng: &mut Pcg64Mcg,
) -> Result<Vec<u64>, EstimateError> {
    let bins = histogram(runtimes.len(), max_estimate_s, rng)?;
    for runtime in runtimes.iter_mut() {
        *runtime = (*runtime).min(max_estimate_s);
    }
    // Every estimate, largest first.
    let mut estimates: Vec<u64> = Vec::with_capacity(runtimes.len());
    for bin in bins.iter().rev() {
        estimates.extend(std::iter::repeat_n(bin.estimate_s, bin.jobs));
    }
    // Jobs by runtime, longest first; equal runtimes in job order.
    let mut jobs: Vec<usize> = (0..runtimes.len()).collect();
    jobs.sort_by(|&a, &b| runtimes[b].cmp(&runtimes[a]));
    if let Some(k) = (0..jobs.len()).find(|&k| runtimes[jobs[k]] > estimates[k]) {
        let runtime_s = runtimes[jobs[k]];
        return Err(EstimateError::RuntimesTooLong {
            runtime_s,
            jobs: jobs.partition_point(|&j| runtimes[j] >= runtime_s),
            estimates: estimates.partition_point(|&e| e >= runtime_s),
            max_estimate_s,
        });
    }
    let mut assigned = vec![0u64; runtimes.len()];
    let mut hi = 0;
    for (j, &job) in jobs.iter().enumerate() {
        // The estimates from j to hi are all at least this runtime (estimates before j are
        // taken).
        hi = hi.max(j);
        while hi + 1 < estimates.len() && runtimes[job] <= estimates[hi + 1] {
            hi += 1;
        }
        let k = rng.random_range(j..=hi);
        assigned[job] = estimates[k];
        estimates.swap(j, k);
    }
    Ok(assigned)
}
