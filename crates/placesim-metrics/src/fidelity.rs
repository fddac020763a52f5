//! How close a replay comes to what really happened (site-inputs.md §10): each job's
//! simulated start against its recorded one, the waits' two-week moving averages compared as
//! published Slurm-simulator validations compare them, and whether jobs were placed where
//! they really ran: on the same vnodes, and in the same placement set.

use crate::JobSink;
use placesim_core::{AttrValue, Cluster, ResourceId, VnodeId, Workload};
use std::collections::HashMap;

/// One job as it really ran, in the run's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Its number in the trace (`job_id`).
    pub job_id: u64,
    /// Its first start, simulated seconds; negative for a job already running at time 0.
    pub first_start_s: i64,
    /// The vnodes it ran on.
    pub vnodes: Vec<VnodeId>,
}

/// The comparison, as summary.parquet's `fidelity_*` and `placement_*` columns hold it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fidelity {
    /// Jobs that started both in the run and in the record (jobs running at time 0 left
    /// out: the run starts them where and when the record says).
    pub jobs_compared: u64,
    /// Jobs of the run or of the record that are not compared: never started in the run, or
    /// missing from the other side.
    pub jobs_not_compared: u64,
    /// Simulated start − recorded start over the compared jobs, seconds: the 10th, 50th and
    /// 90th percentiles (nearest rank, ceil(q·n), as the summary's other percentiles) and
    /// the mean of its absolute value.
    pub start_error_p10_s: Option<f64>,
    /// The median.
    pub start_error_p50_s: Option<f64>,
    /// The 90th percentile.
    pub start_error_p90_s: Option<f64>,
    /// Mean |simulated start − recorded start|.
    pub start_error_mean_abs_s: Option<f64>,
    /// Mean of simulated wait − recorded wait (the same as the mean start error: both
    /// waits are from the same submission).
    pub wait_error_mean_s: Option<f64>,
    /// The mean absolute percentage error of the two-week moving-average wait, percent.
    pub wait_mape_2w: Option<f64>,
    /// Share of compared jobs with a recorded placement that ran on exactly its vnodes.
    pub placement_same_vnodes: Option<f64>,
    /// Share of compared jobs recorded inside one set of the topology key that the run
    /// placed inside that same set.
    pub placement_same_set: Option<f64>,
    /// Compared jobs whose recorded vnodes span sets of the key (left out of the share).
    pub placement_recorded_spanning: u64,
    /// The same agreement for every key that forms sets (each string or string-array
    /// resource some vnode has), in resource-definition order: agreement.parquet.
    pub per_key: Vec<KeyAgreement>,
}

/// Placement agreement over the sets of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAgreement {
    /// The key (a resource's name).
    pub key: String,
    /// Compared jobs with recorded vnodes all inside one set of the key.
    pub recorded_in_one_set: u64,
    /// Of those, the jobs the run placed inside that same set.
    pub same_set: u64,
    /// Compared jobs whose recorded vnodes span sets of the key, or lack it.
    pub recorded_spanning: u64,
}

impl KeyAgreement {
    /// The share of jobs recorded in one set that the run placed in the same set.
    pub fn same_set_share(&self) -> Option<f64> {
        (self.recorded_in_one_set > 0)
            .then(|| self.same_set as f64 / self.recorded_in_one_set as f64)
    }
}

/// Half the window of the moving average: one week.
const HALF_WINDOW_S: u64 = 7 * 86_400;

/// MAPE of the two-week moving averages: for each hour from a week after the first
/// submission to a week before the last, the mean wait of the jobs submitted within a week
/// either side, simulated against recorded, |s − r| / r; hours whose recorded mean is 0 are
/// left out. Over less than two weeks, the one window of every job. `jobs` are (submit,
/// simulated wait, recorded wait), sorted by submit.
fn moving_average_mape(jobs: &[(u64, f64, f64)]) -> Option<f64> {
    let (first, last) = (jobs.first()?.0, jobs.last()?.0);
    let mut prefix_sim = Vec::with_capacity(jobs.len() + 1);
    let mut prefix_rec = Vec::with_capacity(jobs.len() + 1);
    let (mut s, mut r) = (0.0, 0.0);
    prefix_sim.push(0.0);
    prefix_rec.push(0.0);
    for &(_, sim, rec) in jobs {
        s += sim;
        r += rec;
        prefix_sim.push(s);
        prefix_rec.push(r);
    }
    let mean = |from: usize, to: usize| -> Option<(f64, f64)> {
        let n = (to - from) as f64;
        (to > from).then(|| {
            (
                (prefix_sim[to] - prefix_sim[from]) / n,
                (prefix_rec[to] - prefix_rec[from]) / n,
            )
        })
    };
    let mut errors = Vec::new();
    let mut push = |(sim, rec): (f64, f64)| {
        if rec > 0.0 {
            errors.push((sim - rec).abs() / rec);
        }
    };
    if last - first < 2 * HALF_WINDOW_S {
        if let Some(m) = mean(0, jobs.len()) {
            push(m);
        }
    } else {
        let (mut lo, mut hi) = (0, 0);
        let mut middle = first + HALF_WINDOW_S;
        while middle + HALF_WINDOW_S <= last {
            while lo < jobs.len() && jobs[lo].0 < middle - HALF_WINDOW_S {
                lo += 1;
            }
            while hi < jobs.len() && jobs[hi].0 < middle + HALF_WINDOW_S {
                hi += 1;
            }
            if let Some(m) = mean(lo, hi) {
                push(m);
            }
            middle += 3_600;
        }
    }
    (!errors.is_empty()).then(|| 100.0 * errors.iter().sum::<f64>() / errors.len() as f64)
}

/// The values of `key` every vnode of `vnodes` has (a string's value, a string array's
/// values): the sets of that key they all lie in; empty when they span sets or lack it.
fn shared_values(cluster: &Cluster, key: ResourceId, vnodes: &[VnodeId]) -> Vec<String> {
    let values = |v: VnodeId| -> Vec<String> {
        match cluster.vnode(v).attr(key) {
            Some(AttrValue::Str(s)) => vec![s.clone()],
            Some(AttrValue::StrArray(a)) => a.clone(),
            _ => Vec::new(),
        }
    };
    let Some((&first, rest)) = vnodes.split_first() else {
        return Vec::new();
    };
    let mut shared = values(first);
    for &v in rest {
        let these = values(v);
        shared.retain(|x| these.contains(x));
        if shared.is_empty() {
            break;
        }
    }
    shared
}

/// Under `key`: `None` when the `recorded` vnodes are not all inside one set, else whether
/// the `simulated` ones are inside one of the same sets.
fn set_agreement(
    cluster: &Cluster,
    key: ResourceId,
    recorded: &[VnodeId],
    simulated: &[VnodeId],
) -> Option<bool> {
    let recorded_sets = shared_values(cluster, key, recorded);
    if recorded_sets.is_empty() {
        return None;
    }
    let simulated_sets = shared_values(cluster, key, simulated);
    Some(simulated_sets.iter().any(|s| recorded_sets.contains(s)))
}

/// Compares the run in `sink` with `recorded`; placement needs the run's vnodes
/// (`exec_vnode` kept), and set agreement a `key`.
pub fn fidelity(
    workload: &Workload,
    sink: &JobSink,
    recorded: &[Recorded],
    cluster: &Cluster,
    key: Option<ResourceId>,
) -> Fidelity {
    let by_id: HashMap<u64, usize> = workload
        .jobs()
        .iter()
        .enumerate()
        .map(|(i, j)| (j.source_id, i))
        .collect();
    let mut f = Fidelity::default();
    let mut errors: Vec<f64> = Vec::new();
    let mut waits: Vec<(u64, f64, f64)> = Vec::new();
    let (mut same_vnodes, mut with_vnodes) = (0u64, 0u64);
    let (mut same_set, mut in_one_set) = (0u64, 0u64);
    let mut seen = vec![false; workload.jobs().len()];
    // Every key whose values form sets on this cluster; not `vnode`, whose sets are single
    // vnodes (the same vnodes say that).
    let keys: Vec<ResourceId> = (0..cluster.resources().all().len())
        .map(|i| ResourceId(i as u16))
        .filter(|&k| {
            cluster.resources().def(k).name != "vnode"
                && matches!(
                    cluster.resources().def(k).kind,
                    placesim_core::ResourceKind::String | placesim_core::ResourceKind::StringArray
                )
                && (0..cluster.n_vnodes())
                    .any(|v| cluster.vnode(VnodeId::from_index(v)).attr(k).is_some())
        })
        .collect();
    f.per_key = keys
        .iter()
        .map(|&k| KeyAgreement {
            key: cluster.resources().def(k).name.clone(),
            recorded_in_one_set: 0,
            same_set: 0,
            recorded_spanning: 0,
        })
        .collect();
    for r in recorded {
        let Some(&i) = by_id.get(&r.job_id) else {
            f.jobs_not_compared += 1;
            continue;
        };
        seen[i] = true;
        if r.first_start_s < 0 {
            // Already running at time 0: placed by the record itself.
            continue;
        }
        let Some((start, _)) = sink.span(i) else {
            f.jobs_not_compared += 1;
            continue;
        };
        f.jobs_compared += 1;
        let submit = workload.jobs()[i].submit.as_secs();
        let error = start.as_secs() as f64 - r.first_start_s as f64;
        errors.push(error);
        waits.push((
            submit,
            (start.as_secs() - submit) as f64,
            (r.first_start_s as f64 - submit as f64).max(0.0),
        ));
        let Some(simulated) = sink.vnodes_of(i) else {
            continue;
        };
        if r.vnodes.is_empty() {
            continue;
        }
        with_vnodes += 1;
        let mut a = simulated.clone();
        let mut b = r.vnodes.clone();
        a.sort_unstable();
        a.dedup();
        b.sort_unstable();
        b.dedup();
        same_vnodes += u64::from(a == b);
        if let Some(key) = key {
            match set_agreement(cluster, key, &r.vnodes, &simulated) {
                None => f.placement_recorded_spanning += 1,
                Some(same) => {
                    in_one_set += 1;
                    same_set += u64::from(same);
                }
            }
        }
        for (&k, agreement) in keys.iter().zip(&mut f.per_key) {
            match set_agreement(cluster, k, &r.vnodes, &simulated) {
                None => agreement.recorded_spanning += 1,
                Some(same) => {
                    agreement.recorded_in_one_set += 1;
                    agreement.same_set += u64::from(same);
                }
            }
        }
    }
    f.jobs_not_compared += seen.iter().filter(|s| !**s).count() as u64;
    if !errors.is_empty() {
        let n = errors.len() as f64;
        f.start_error_mean_abs_s = Some(errors.iter().map(|e| e.abs()).sum::<f64>() / n);
        f.wait_error_mean_s = Some(waits.iter().map(|(_, s, r)| s - r).sum::<f64>() / n);
        let mut sample = crate::summary::Sample::new(&mut errors);
        f.start_error_p10_s = Some(sample.nearest_rank(0.1));
        f.start_error_p50_s = Some(sample.nearest_rank(0.5));
        f.start_error_p90_s = Some(sample.nearest_rank(0.9));
    }
    waits.sort_by_key(|w| w.0);
    f.wait_mape_2w = moving_average_mape(&waits);
    f.placement_same_vnodes = (with_vnodes > 0).then(|| same_vnodes as f64 / with_vnodes as f64);
    f.placement_same_set = (in_one_set > 0).then(|| same_set as f64 / in_one_set as f64);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_moving_average_error_is_over_two_week_windows() {
        // Under two weeks: one window. Simulated mean 150, recorded 100: 50 %.
        let short = [(0, 100.0, 50.0), (3_600, 200.0, 150.0)];
        assert_eq!(moving_average_mape(&short), Some(50.0));
        // Three weeks, one job a day, simulated waits twice the recorded ones: 100 % in every
        // window; a recorded mean of 0 gives no window, hence none at all.
        let days: Vec<(u64, f64, f64)> = (0..22).map(|d| (d * 86_400, 20.0, 10.0)).collect();
        assert_eq!(moving_average_mape(&days), Some(100.0));
        let zero: Vec<(u64, f64, f64)> = (0..22).map(|d| (d * 86_400, 20.0, 0.0)).collect();
        assert_eq!(moving_average_mape(&zero), None);
        // Windows slide: the first week's jobs weigh only in the first windows. Jobs 0..7
        // wait 10 recorded and 10 simulated; jobs 7..=21 wait 10 recorded and 30 simulated.
        let shift: Vec<(u64, f64, f64)> = (0..22)
            .map(|d| (d * 86_400, if d < 7 { 10.0 } else { 30.0 }, 10.0))
            .collect();
        let mape = moving_average_mape(&shift).unwrap_or(0.0);
        assert!(mape > 100.0 && mape < 200.0, "{mape}");
    }
}
