//! What the cluster looked like over time: the integrals behind loss of capacity, the
//! head-blocked idle fraction, set fragmentation and the free-space fragmentation index
//! (metrics-and-models §1.3–§1.4), and samples of it at a fixed simulated interval.
//!
//! The kernel reports each settled instant ([`SettledInstant`]); between two instants the
//! cluster does not change, so every integral here is an exact sum of constant pieces: when
//! an instant arrives, the one before it held from its time until now. Amounts are ncpus: a
//! "node" of the formulas is a processor, as in the SWF traces.

use placesim_core::{InstantFacts, SettledInstant, SimDuration, SimTime};

/// When the integrals are measured and how often the cluster is sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OccupancyConfig {
    /// t₀: integrals and samples start here (the first instant when `None`).
    pub window_start: Option<SimTime>,
    /// t₁: integrals and samples stop here (the last event when `None`, or when later).
    pub window_end: Option<SimTime>,
    /// Δt: a sample every this often from t₀; none when `None`.
    pub sample_every: Option<SimDuration>,
}

impl OccupancyConfig {
    /// The whole run, sampled every `every`.
    pub fn whole_run(every: Option<SimDuration>) -> OccupancyConfig {
        OccupancyConfig {
            window_start: None,
            window_end: None,
            sample_every: every,
        }
    }
}

/// The integrals over the window [t₀, t₁], in ncpu-seconds or seconds; [`crate::RunSummary`]
/// turns them into fractions (see docs/output-schema.md).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OccupancyStats {
    /// t₀.
    pub window_start: SimTime,
    /// t₁ (never before t₀).
    pub window_end: SimTime,
    /// N: the cluster's ncpus.
    pub capacity_ncpus: u64,
    /// ∫ ncpus held by jobs dt.
    pub job_ncpu_seconds: u128,
    /// ∫ e(t) δ(t) dt: ncpus of idle up vnodes while jobs wait (the numerator of LoC).
    pub idle_while_waiting_ncpu_seconds: u128,
    /// The same, counted only while some waiting job asks for at most e(t) ncpus
    /// (LoC_frag, Cobalt's variant).
    pub idle_while_fitting_ncpu_seconds: u128,
    /// ∫ 1[head blocked] F(t) dt (the numerator of B).
    pub head_blocked_free_ncpu_seconds: u128,
    /// ∫ 1[F ≥ n_h ∧ max f_k < n_h] dt (E_set in seconds).
    pub set_blocked_seconds: u64,
    /// ∫ 1[F ≥ n_h ∧ max f_k < n_h] F(t) dt (E_set in ncpu-seconds).
    pub set_blocked_free_ncpu_seconds: u128,
    /// ∫ Φ dt over the time with F > 0.
    pub fragmentation_seconds: f64,
    /// ∫ L dt over the time with F > 0.
    pub largest_free_share_seconds: f64,
    /// The time with F > 0 (the denominator of Φ's and L's means).
    pub free_seconds: u64,
    /// ∫ queue length dt.
    pub queue_job_seconds: u128,
}

impl OccupancyStats {
    /// x / (N (t₁ − t₀)): an ncpu-second integral as a share of the window's capacity (0 for
    /// an empty window).
    pub fn of_capacity(&self, x: u128) -> f64 {
        let capacity = self.capacity_ncpus as f64 * self.span_s() as f64;
        if capacity > 0.0 {
            x as f64 / capacity
        } else {
            0.0
        }
    }

    /// x / (t₁ − t₀): a time integral as a time average (0 for an empty window).
    pub fn per_second(&self, x: f64) -> f64 {
        let span = self.span_s();
        if span > 0 { x / span as f64 } else { 0.0 }
    }

    /// x over the time with F > 0: a mean of a shape of the free space, `None` when nothing
    /// was ever free.
    pub fn while_free(&self, x: f64) -> Option<f64> {
        (self.free_seconds > 0).then(|| x / self.free_seconds as f64)
    }

    /// t₁ − t₀, seconds.
    pub fn span_s(&self) -> u64 {
        self.window_end
            .as_secs()
            .saturating_sub(self.window_start.as_secs())
    }
}

/// The cluster at one sampled instant (the state in force from the last instant before it),
/// as the sink keeps it; the free ncpus per set come beside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// When, seconds.
    pub time: u64,
    /// ncpus held by jobs.
    pub job_ncpus: u64,
    /// ncpus of vnodes that are down.
    pub down_ncpus: u64,
    /// F: ncpus free on vnodes that can take a job (up, not held exclusively).
    pub free_ncpus: u64,
    /// Jobs waiting.
    pub queue_len: u64,
    /// Whether the queue's head is waiting (the queue is not empty after the pass).
    pub head_blocked: bool,
    /// Φ = 1 − Σ f_k² / F², `None` when F = 0.
    pub fragmentation: Option<f64>,
    /// L = max f_k / F, `None` when F = 0.
    pub largest_free_share: Option<f64>,
}

/// One settled instant as the integrals need it: the kernel's facts, and what they derive
/// from the per-set free ncpus (recomputed only when those changed).
#[derive(Debug, Clone, Default)]
struct Held {
    facts: InstantFacts,
    /// F, max f_k, Σ f_k², and the f_k they came from (kept for samples).
    free_total: u64,
    largest_free: u64,
    free_sq: u128,
    set_free: Vec<u64>,
    set_free_version: Option<u64>,
}

impl Held {
    /// Φ = 1 − Σ f_k² / F², `None` when F = 0.
    fn fragmentation(&self) -> Option<f64> {
        (self.free_total > 0).then(|| {
            let f = self.free_total as f64;
            (1.0 - self.free_sq as f64 / (f * f)).max(0.0)
        })
    }

    /// L = max f_k / F, `None` when F = 0.
    fn largest_free_share(&self) -> Option<f64> {
        (self.free_total > 0).then(|| self.largest_free as f64 / self.free_total as f64)
    }

    /// Takes `instant`'s facts; F, max f_k and Σ f_k² only if the sets' free ncpus changed,
    /// and the f_k themselves only if `for_samples`.
    fn update(&mut self, instant: &SettledInstant<'_>, for_samples: bool) {
        self.facts = instant.facts;
        if self.set_free_version == Some(instant.set_free_version) {
            return;
        }
        self.set_free_version = Some(instant.set_free_version);
        let (mut total, mut largest, mut sq) = (0u64, 0u64, 0u128);
        for &f in instant.set_free_ncpus {
            total += f;
            largest = largest.max(f);
            sq += u128::from(f) * u128::from(f);
        }
        self.free_total = total;
        self.largest_free = largest;
        self.free_sq = sq;
        if for_samples {
            self.set_free.clear();
            self.set_free.extend_from_slice(instant.set_free_ncpus);
        }
    }
}

/// The integrals and samples of one run, fed one settled instant at a time.
#[derive(Debug, Clone)]
pub(crate) struct Occupancy {
    config: OccupancyConfig,
    /// The last instant seen, if any.
    held: Option<Held>,
    /// The next sample's time.
    next_sample: Option<SimTime>,
    /// Samples taken so far.
    samples_taken: u64,
    /// The first sample time refused for going over [`MAX_SAMPLES`], if any.
    refused_at: Option<SimTime>,
    stats: OccupancyStats,
}

/// The most samples one run may take: a year sampled every 30 s, a century hourly. Samples
/// are kept until the run ends, so a trace with a span of 10¹² s (which SWF allows) at the
/// default hourly Δt would otherwise take all the memory there is; past this the run fails
/// with [`TooManySamples`].
pub const MAX_SAMPLES: u64 = 1_000_000;

/// A run would take more than [`MAX_SAMPLES`] samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "timeseries.parquet would hold more than {limit} samples: at one every {every_s} s the run reached its limit at simulated time {at_s} s; set a larger Δt ([metrics] sample_every, or --sample-every), or 0 for no samples"
)]
pub struct TooManySamples {
    /// [`MAX_SAMPLES`].
    pub limit: u64,
    /// Δt, seconds.
    pub every_s: u64,
    /// The time of the first sample refused, seconds.
    pub at_s: u64,
}

impl Occupancy {
    /// Integrals over a cluster of `capacity_ncpus`, measured as `config` says.
    pub(crate) fn new(config: OccupancyConfig, capacity_ncpus: u64) -> Occupancy {
        Occupancy {
            config,
            held: None,
            next_sample: None,
            samples_taken: 0,
            refused_at: None,
            stats: OccupancyStats {
                capacity_ncpus,
                ..OccupancyStats::default()
            },
        }
    }

    /// A new instant: the one before it held until now, so it is added to the integrals
    /// (within the window) and sampled where samples fall; then `instant` is held.
    pub(crate) fn settle(
        &mut self,
        instant: &SettledInstant<'_>,
        emit: &mut dyn FnMut(&Sample, &[u64]),
    ) {
        let now = instant.facts.time;
        let Some(held) = &mut self.held else {
            let start = self.config.window_start.unwrap_or(now);
            self.stats.window_start = start;
            self.next_sample = self.config.sample_every.map(|_| start);
            let mut held = Held::default();
            held.update(instant, self.config.sample_every.is_some());
            self.held = Some(held);
            return;
        };
        let last = held.facts.time;
        let end_cap = self.config.window_end.unwrap_or(SimTime(u64::MAX));
        let from = last.max(self.stats.window_start);
        let to = now.min(end_cap);
        if to > from {
            integrate(&mut self.stats, held, to.as_secs() - from.as_secs());
        }
        if let (Some(every), Some(mut at)) = (self.config.sample_every, self.next_sample) {
            let every = every.as_secs().max(1);
            while at < now && at < end_cap {
                if self.samples_taken == MAX_SAMPLES {
                    // Refused: skip to the first sample time at or after now without a loop
                    // over the gap (it may be 10¹² s long).
                    self.refused_at.get_or_insert(at);
                    let behind = now.as_secs() - at.as_secs();
                    at = SimTime(at.as_secs().saturating_add(behind.div_ceil(every) * every));
                    break;
                }
                if at >= last {
                    self.samples_taken += 1;
                    let sample = Sample {
                        time: at.as_secs(),
                        job_ncpus: held.facts.job_ncpus,
                        down_ncpus: held.facts.down_ncpus,
                        free_ncpus: held.free_total,
                        queue_len: held.facts.queue_len,
                        head_blocked: held.facts.head_ncpus.is_some(),
                        fragmentation: held.fragmentation(),
                        largest_free_share: held.largest_free_share(),
                    };
                    emit(&sample, &held.set_free);
                }
                at = SimTime(at.as_secs().saturating_add(every));
            }
            self.next_sample = Some(at);
        }
        held.update(instant, self.config.sample_every.is_some());
    }

    /// Whether the run went over [`MAX_SAMPLES`], and where.
    pub(crate) fn too_many_samples(&self) -> Option<TooManySamples> {
        let (every, at) = (self.config.sample_every?, self.refused_at?);
        Some(TooManySamples {
            limit: MAX_SAMPLES,
            every_s: every.as_secs().max(1),
            at_s: at.as_secs(),
        })
    }

    /// The integrals, once the run ended at `last_event`.
    pub(crate) fn finish(&self, last_event: SimTime) -> OccupancyStats {
        let mut stats = self.stats;
        stats.window_end = self
            .config
            .window_end
            .unwrap_or(last_event)
            .min(last_event)
            .max(stats.window_start);
        stats
    }
}

/// Adds `held`, in force for `secs`, to the integrals.
fn integrate(s: &mut OccupancyStats, held: &Held, secs: u64) {
    let dt = u128::from(secs);
    let shape = held.fragmentation().zip(held.largest_free_share());
    let facts = &held.facts;
    s.job_ncpu_seconds += u128::from(facts.job_ncpus) * dt;
    s.queue_job_seconds += u128::from(facts.queue_len) * dt;
    if facts.queue_len > 0 {
        let idle = u128::from(facts.idle_ncpus) * dt;
        s.idle_while_waiting_ncpu_seconds += idle;
        let smallest = facts.smallest_waiting_ncpus.unwrap_or(u64::MAX);
        if smallest <= facts.idle_ncpus {
            s.idle_while_fitting_ncpu_seconds += idle;
        }
    }
    if let Some(n_h) = facts.head_ncpus {
        s.head_blocked_free_ncpu_seconds += u128::from(held.free_total) * dt;
        if held.free_total >= n_h && held.largest_free < n_h {
            s.set_blocked_seconds += secs;
            s.set_blocked_free_ncpu_seconds += u128::from(held.free_total) * dt;
        }
    }
    if let Some((phi, l)) = shape {
        s.fragmentation_seconds += phi * secs as f64;
        s.largest_free_share_seconds += l * secs as f64;
        s.free_seconds += secs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a test expects of one sample.
    #[derive(Debug, PartialEq)]
    struct Seen {
        time: u64,
        free_ncpus: u64,
        set_free_ncpus: Vec<u64>,
        head_blocked: bool,
    }

    /// The instants the kernel reports for a hand-computed run on four one-ncpu vnodes, v0,
    /// v1 on switch A and v2, v3 on switch B: at 0, X on v0 and Y on v2, a 2-ncpu job waits
    /// behind two 1-ncpu jobs that started (F = 2, one free ncpu per switch:
    /// set-fragmented); at 10 Y ends and the waiting job takes v2, v3; the run ends at 30.
    /// Samples every 10 s.
    fn run(window_start: Option<SimTime>) -> (OccupancyStats, Vec<Seen>) {
        let config = OccupancyConfig {
            window_start,
            window_end: None,
            sample_every: Some(SimDuration(10)),
        };
        let mut m = Occupancy::new(config, 4);
        let mut samples = Vec::new();
        let mut record = |s: &Sample, set_free: &[u64]| {
            samples.push(Seen {
                time: s.time,
                free_ncpus: s.free_ncpus,
                set_free_ncpus: set_free.to_vec(),
                head_blocked: s.head_blocked,
            });
        };
        let at =
            |time, job_ncpus, idle_ncpus, waiting: Option<u64>, set_free, version| SettledInstant {
                facts: InstantFacts {
                    time: SimTime(time),
                    job_ncpus,
                    down_ncpus: 0,
                    idle_ncpus,
                    queue_len: u64::from(waiting.is_some()),
                    head_ncpus: waiting,
                    smallest_waiting_ncpus: waiting,
                },
                set_free_ncpus: set_free,
                set_free_version: version,
            };
        m.settle(&at(0, 2, 2, Some(2), &[1, 1], 1), &mut record);
        m.settle(&at(10, 3, 1, None, &[1, 0], 2), &mut record);
        m.settle(&at(30, 3, 1, None, &[1, 0], 2), &mut record);
        (m.finish(SimTime(30)), samples)
    }

    #[test]
    fn integrals_match_a_hand_computed_run() {
        let (s, samples) = run(None);
        assert_eq!((s.window_start, s.window_end), (SimTime(0), SimTime(30)));
        assert_eq!(s.capacity_ncpus, 4);
        // [0,10): X, Y = 2 ncpus; [10,30): X and the 2-ncpu job = 3.
        assert_eq!(s.job_ncpu_seconds, 2 * 10 + 3 * 20);
        // [0,10): v1 and v3 idle while a job waits, and it would fit them by count.
        assert_eq!(s.idle_while_waiting_ncpu_seconds, 20);
        assert_eq!(s.idle_while_fitting_ncpu_seconds, 20);
        assert_eq!(s.head_blocked_free_ncpu_seconds, 20);
        // F = 2 ≥ n_h = 2 but no switch has 2 free: set-fragmented for 10 s.
        assert_eq!(s.set_blocked_seconds, 10);
        assert_eq!(s.set_blocked_free_ncpu_seconds, 20);
        // Φ = 1 − (1 + 1)/4 = 0.5 on [0,10), 0 on [10,30) (F = 1, all on A).
        assert_eq!(s.fragmentation_seconds, 5.0);
        // L = 1/2 then 1.
        assert_eq!(s.largest_free_share_seconds, 5.0 + 20.0);
        assert_eq!(s.free_seconds, 30);
        assert_eq!(s.queue_job_seconds, 10);
        assert_eq!(
            samples,
            [
                Seen {
                    time: 0,
                    free_ncpus: 2,
                    set_free_ncpus: vec![1, 1],
                    head_blocked: true
                },
                Seen {
                    time: 10,
                    free_ncpus: 1,
                    set_free_ncpus: vec![1, 0],
                    head_blocked: false
                },
                Seen {
                    time: 20,
                    free_ncpus: 1,
                    set_free_ncpus: vec![1, 0],
                    head_blocked: false
                },
            ]
        );
    }

    #[test]
    fn a_warm_up_leaves_its_time_out_of_integrals_and_samples() {
        let (s, samples) = run(Some(SimTime(5)));
        assert_eq!((s.window_start, s.window_end), (SimTime(5), SimTime(30)));
        assert_eq!(s.job_ncpu_seconds, 2 * 5 + 3 * 20);
        assert_eq!(s.set_blocked_seconds, 5);
        assert_eq!(s.queue_job_seconds, 5);
        let times: Vec<u64> = samples.iter().map(|s| s.time).collect();
        assert_eq!(times, [5, 15, 25]);
    }
}
