//! What the cluster looked like over time: the integrals behind loss of capacity, the
//! head-blocked idle fraction, set fragmentation and the free-space fragmentation index
//! (metrics-and-models §1.3–§1.4), and samples of it at a fixed simulated interval.
//!
//! The state keeps the free ncpus of each set and the idle ncpus current as allocations are
//! applied ([`crate::state::Watch`]); the kernel tells the monitor about jobs joining and
//! leaving the queue and about vnodes going down or up, and has it read the state and the
//! queue once each instant is settled. Between two instants the cluster does not change, so
//! every integral is an exact sum of constant pieces. Amounts are ncpus: a "node" of the
//! formulas is a processor, as in the SWF traces.

use crate::cluster::Cluster;
use crate::ids::{ResourceId, VnodeId};
use crate::outage::Service;
use crate::resource::{AttrValue, ConsumableIdx};
use crate::state::{ClusterState, StateView};
use crate::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// A partition of the vnodes into the sets fragmentation is measured over (the values of
/// one resource, e.g. `switch`), with the sets' names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetPartition {
    /// Per vnode, its set (dense ids in order of first appearance).
    pub set_of: Vec<u32>,
    /// Per set, the value that names it (`""` for vnodes without the resource).
    pub names: Vec<String>,
}

impl SetPartition {
    /// Every vnode in one set, named `""`: the partition without a key.
    pub fn whole(cluster: &Cluster) -> SetPartition {
        SetPartition {
            set_of: vec![0; cluster.n_vnodes()],
            names: vec![String::new()],
        }
    }

    /// The vnodes grouped by their value of `key` (a string array's first item; vnodes
    /// without it form the set `""`).
    pub fn by_key(cluster: &Cluster, key: ResourceId) -> SetPartition {
        let mut names: Vec<String> = Vec::new();
        let set_of = cluster
            .vnodes()
            .iter()
            .map(|v| {
                let name = match v.attr(key) {
                    Some(AttrValue::Str(s)) => s.as_str(),
                    Some(AttrValue::StrArray(items)) => items.first().map_or("", String::as_str),
                    _ => "",
                };
                match names.iter().position(|n| n == name) {
                    Some(i) => i as u32,
                    None => {
                        names.push(name.to_owned());
                        (names.len() - 1) as u32
                    }
                }
            })
            .collect();
        SetPartition { set_of, names }
    }

    /// How many sets there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether there are no sets (an empty cluster).
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// What the monitor measures and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorConfig {
    /// The sets of §1.4.
    pub sets: SetPartition,
    /// t₀: integrals and samples start here (the first submit when `None`).
    pub window_start: Option<SimTime>,
    /// t₁: integrals and samples stop here (the last event when `None`, or when later).
    pub window_end: Option<SimTime>,
    /// Δt: a [`Sample`] every this often from t₀; none when `None`.
    pub sample_every: Option<SimDuration>,
}

impl MonitorConfig {
    /// Sets `sets` over the whole run, sampled every `every`.
    pub fn whole_run(sets: SetPartition, every: Option<SimDuration>) -> MonitorConfig {
        MonitorConfig {
            sets,
            window_start: None,
            window_end: None,
            sample_every: every,
        }
    }
}

/// The cluster at one sampled instant (the state in force from the last event before it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample<'a> {
    /// When.
    pub time: SimTime,
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
    /// f_k per set, indexed like [`SetPartition::names`].
    pub set_free_ncpus: &'a [u64],
}

/// The integrals over the window [t₀, t₁], in ncpu-seconds or seconds. The metrics crate
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

/// The monitor's running state; lives in the kernel. The per-set free ncpus and the idle
/// ncpus are kept by the state itself ([`crate::state::Watch`]), in the loop that applies
/// allocations; the monitor reads them once per instant.
#[derive(Debug, Clone)]
pub(crate) struct Monitor {
    config: MonitorConfig,
    down_ncpus: u64,
    job_ncpus: u64,
    /// Waiting jobs' ncpus, as a multiset.
    waiting: BTreeMap<u64, u32>,
    queue_len: u64,
    head_ncpus: Option<u64>,
    /// Settled at the end of the last instant: F, Σ f_k², max f_k, idle ncpus, and the
    /// watch's version they were computed from.
    free_total: u64,
    free_sq: u128,
    largest_free: u64,
    idle_ncpus: u64,
    seen_version: Option<u64>,
    /// The last instant seen, and the next sample's time.
    last: Option<SimTime>,
    next_sample: Option<SimTime>,
    stats: OccupancyStats,
}

impl Monitor {
    /// A monitor of `config`'s sets; has `state` keep their tallies from now on.
    pub(crate) fn new(config: MonitorConfig, state: &mut ClusterState) -> Monitor {
        state.watch_sets(config.sets.set_of.clone().into(), config.sets.len());
        let mut m = Monitor {
            down_ncpus: 0,
            job_ncpus: 0,
            waiting: BTreeMap::new(),
            queue_len: 0,
            head_ncpus: None,
            free_total: 0,
            free_sq: 0,
            largest_free: 0,
            idle_ncpus: 0,
            seen_version: None,
            last: None,
            next_sample: None,
            stats: OccupancyStats {
                capacity_ncpus: state.cluster().capacity_total(ConsumableIdx::NCPUS),
                ..OccupancyStats::default()
            },
            config,
        };
        m.settle(state, None, 0);
        m
    }

    /// A vnode went down or came back.
    pub(crate) fn vnode_service(&mut self, state: &ClusterState, v: VnodeId, change: Service) {
        let cap = state.cluster().ncpus_capacity(v);
        match change {
            Service::Down => self.down_ncpus += cap,
            Service::Up => self.down_ncpus -= cap,
        }
    }

    /// A job of `ncpus` joined the queue (submitted or requeued).
    pub(crate) fn enqueued(&mut self, ncpus: u64) {
        *self.waiting.entry(ncpus).or_insert(0) += 1;
    }

    /// A job of `ncpus` left the queue and started.
    pub(crate) fn started(&mut self, ncpus: u64) {
        if let Some(count) = self.waiting.get_mut(&ncpus) {
            *count -= 1;
            if *count == 0 {
                self.waiting.remove(&ncpus);
            }
        }
        self.job_ncpus += ncpus;
    }

    /// A running job of `ncpus` stopped (ended, killed or requeued).
    pub(crate) fn stopped(&mut self, ncpus: u64) {
        self.job_ncpus -= ncpus;
    }

    /// The instant is settled: the queue after the pass, its head's ncpus if any.
    pub(crate) fn settle(
        &mut self,
        state: &ClusterState,
        head_ncpus: Option<u64>,
        queue_len: usize,
    ) {
        self.head_ncpus = head_ncpus;
        self.queue_len = queue_len as u64;
        let Some(watch) = state.watch() else {
            return;
        };
        self.idle_ncpus = watch.idle_ncpus;
        if self.seen_version == Some(watch.version) {
            return;
        }
        self.seen_version = Some(watch.version);
        let (mut total, mut largest, mut sq) = (0u64, 0u64, 0u128);
        for &f in &watch.set_free {
            total += f;
            largest = largest.max(f);
            sq += u128::from(f) * u128::from(f);
        }
        self.free_total = total;
        self.largest_free = largest;
        self.free_sq = sq;
    }

    fn fragmentation(&self) -> Option<f64> {
        (self.free_total > 0).then(|| {
            let f = self.free_total as f64;
            (1.0 - self.free_sq as f64 / (f * f)).max(0.0)
        })
    }

    fn largest_free_share(&self) -> Option<f64> {
        (self.free_total > 0).then(|| self.largest_free as f64 / self.free_total as f64)
    }

    /// The clock moves to `now`: the settled state held over [last, now). Adds it to the
    /// integrals (within the window) and emits the samples that fall in it.
    pub(crate) fn advance(
        &mut self,
        now: SimTime,
        state: &ClusterState,
        emit: &mut dyn FnMut(&Sample<'_>),
    ) {
        let Some(last) = self.last else {
            let start = self.config.window_start.unwrap_or(now);
            self.stats.window_start = start;
            self.next_sample = self.config.sample_every.map(|_| start);
            self.last = Some(now);
            return;
        };
        let end_cap = self.config.window_end.unwrap_or(SimTime(u64::MAX));
        let from = last.max(self.stats.window_start);
        let to = now.min(end_cap);
        if to > from {
            self.integrate(to.as_secs() - from.as_secs());
        }
        if let (Some(every), Some(mut at)) = (self.config.sample_every, self.next_sample) {
            let every = every.as_secs().max(1);
            while at < now && at < end_cap {
                if at >= last {
                    emit(&Sample {
                        time: at,
                        job_ncpus: self.job_ncpus,
                        down_ncpus: self.down_ncpus,
                        free_ncpus: self.free_total,
                        queue_len: self.queue_len,
                        head_blocked: self.head_ncpus.is_some(),
                        fragmentation: self.fragmentation(),
                        largest_free_share: self.largest_free_share(),
                        set_free_ncpus: state.watch().map_or(&[], |w| &w.set_free),
                    });
                }
                at = SimTime(at.as_secs().saturating_add(every));
            }
            self.next_sample = Some(at);
        }
        self.last = Some(now);
    }

    fn integrate(&mut self, secs: u64) {
        let dt = u128::from(secs);
        let shape = self.fragmentation().zip(self.largest_free_share());
        let s = &mut self.stats;
        s.job_ncpu_seconds += u128::from(self.job_ncpus) * dt;
        s.queue_job_seconds += u128::from(self.queue_len) * dt;
        if self.queue_len > 0 {
            let idle = u128::from(self.idle_ncpus) * dt;
            s.idle_while_waiting_ncpu_seconds += idle;
            let smallest = self.waiting.keys().next().copied().unwrap_or(u64::MAX);
            if smallest <= self.idle_ncpus {
                s.idle_while_fitting_ncpu_seconds += idle;
            }
        }
        if let Some(n_h) = self.head_ncpus {
            s.head_blocked_free_ncpu_seconds += u128::from(self.free_total) * dt;
            if self.free_total >= n_h && self.largest_free < n_h {
                s.set_blocked_seconds += secs;
                s.set_blocked_free_ncpu_seconds += u128::from(self.free_total) * dt;
            }
        }
        if let Some((phi, l)) = shape {
            s.fragmentation_seconds += phi * secs as f64;
            s.largest_free_share_seconds += l * secs as f64;
            s.free_seconds += secs;
        }
    }

    /// The integrals, once the run ended at `last_event`.
    pub(crate) fn finish(mut self, last_event: SimTime) -> OccupancyStats {
        let end = self
            .config
            .window_end
            .unwrap_or(last_event)
            .min(last_event)
            .max(self.stats.window_start);
        self.stats.window_end = end;
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::request::Sharing;
    use crate::resource::{ResourceDefs, ResourceKind};
    use crate::state::Allocation;

    /// Four one-ncpu vnodes: v0, v1 on switch A, v2, v3 on switch B.
    fn two_switches() -> (ClusterState, SetPartition) {
        let mut defs = ResourceDefs::default();
        let switch = defs
            .define("switch", ResourceKind::String, false)
            .expect("a fresh resource");
        let mut b = ClusterBuilder::new(defs);
        for (i, s) in ["A", "A", "B", "B"].iter().enumerate() {
            let h = b.add_host(format!("h{i}"));
            let attrs = vec![(switch, AttrValue::Str((*s).into()))];
            b.add_vnode(format!("v{i}"), h, 1.0, &[1, 0, 0], attrs)
                .expect("a valid vnode");
        }
        let cluster = b.build().expect("a valid cluster");
        let sets = SetPartition::by_key(&cluster, switch);
        (ClusterState::new(cluster), sets)
    }

    fn on(vnodes: &[usize]) -> Allocation {
        let mut a = Allocation::new(Sharing::Shared);
        for &v in vnodes {
            a.add(VnodeId::from_index(v), &[1, 0, 0]);
        }
        a
    }

    fn take(state: &mut ClusterState, m: &mut Monitor, a: &Allocation) {
        state.allocate(a).expect("free vnodes");
        m.started(a.vnodes.len() as u64);
    }

    /// Hand-computed run: at 0, X on v0 and Y on v2, a 2-ncpu job waits (F = 2, one free
    /// ncpu per switch: set-fragmented); at 10 Y ends and the waiting job takes v2, v3; the
    /// run ends at 30. Samples every 10 s.
    /// What a test expects of one sample.
    #[derive(Debug, PartialEq)]
    struct Seen {
        time: u64,
        free_ncpus: u64,
        set_free_ncpus: Vec<u64>,
        head_blocked: bool,
    }

    fn run(window_start: Option<SimTime>) -> (OccupancyStats, Vec<Seen>) {
        let (mut state, sets) = two_switches();
        assert_eq!(sets.names, ["A", "B"]);
        let config = MonitorConfig {
            sets,
            window_start,
            window_end: None,
            sample_every: Some(SimDuration(10)),
        };
        let mut m = Monitor::new(config, &mut state);
        let mut samples = Vec::new();
        let mut record = |s: &Sample<'_>| {
            samples.push(Seen {
                time: s.time.as_secs(),
                free_ncpus: s.free_ncpus,
                set_free_ncpus: s.set_free_ncpus.to_vec(),
                head_blocked: s.head_blocked,
            });
        };
        m.advance(SimTime(0), &state, &mut record);
        let (x, y, waiting) = (on(&[0]), on(&[2]), on(&[2, 3]));
        m.enqueued(1);
        m.enqueued(1);
        m.enqueued(2);
        take(&mut state, &mut m, &x);
        take(&mut state, &mut m, &y);
        m.settle(&state, Some(2), 1);
        assert_eq!(m.fragmentation(), Some(0.5));
        m.advance(SimTime(10), &state, &mut record);
        state.release(&y);
        m.stopped(1);
        take(&mut state, &mut m, &waiting);
        m.settle(&state, None, 0);
        m.advance(SimTime(30), &state, &mut record);
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
