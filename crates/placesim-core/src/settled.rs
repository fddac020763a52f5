//! The facts the kernel reports about each settled instant: what jobs hold, what is down,
//! what is idle and free per set, and what waits. The formulas made of them (loss of
//! capacity, fragmentation, set fragmentation, samples) live in the metrics crate.
//!
//! The state keeps the free ncpus of each set and the idle ncpus current as allocations are
//! applied ([`crate::state::Watch`]), because only that loop sees every change cheaply; the
//! kernel keeps the rest as jobs join and leave the queue and vnodes go down or
//! come back, and reports a [`SettledInstant`] through [`crate::MetricsSink::instant_settled`]
//! once each instant's pass is done. Between two instants the cluster does not change.
//! Amounts are ncpus.

use crate::cluster::Cluster;
use crate::ids::{ResourceId, VnodeId};
use crate::outage::Service;
use crate::resource::AttrValue;
use crate::state::{ClusterState, StateView};
use crate::time::SimTime;
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
        let mut last = None;
        let set_of = cluster
            .vnodes()
            .iter()
            .map(|v| {
                let name = match v.attr(key) {
                    Some(AttrValue::Str(s)) => s.as_str(),
                    Some(AttrValue::StrArray(items)) => items.first().map_or("", String::as_str),
                    _ => "",
                };
                let set =
                    crate::cluster::index_near(&mut names, last, |n| n == name, || name.to_owned());
                last = Some(set);
                set as u32
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

/// The cluster and the queue as they stand from `facts.time` until the next instant:
/// reported once per instant, after its scheduling pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettledInstant<'a> {
    /// Everything but the per-set free ncpus.
    pub facts: InstantFacts,
    /// f_k: per set (indexed like [`SetPartition::names`]), the free ncpus new jobs could
    /// use (up vnodes not held exclusively).
    pub set_free_ncpus: &'a [u64],
    /// Changes whenever `set_free_ncpus` may have, so a reader can skip recomputing what it
    /// derives from them.
    pub set_free_version: u64,
}

/// The scalar facts of a settled instant, which a reader may keep as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstantFacts {
    /// The instant.
    pub time: SimTime,
    /// ncpus held by jobs.
    pub job_ncpus: u64,
    /// ncpus of vnodes that are down.
    pub down_ncpus: u64,
    /// e(t): ncpus of up vnodes that hold no job.
    pub idle_ncpus: u64,
    /// Jobs waiting.
    pub queue_len: u64,
    /// The ncpus of the job at the head of the queue, if any waits.
    pub head_ncpus: Option<u64>,
    /// The ncpus of the smallest waiting job, if any waits.
    pub smallest_waiting_ncpus: Option<u64>,
}

/// What the kernel keeps, beside the state's watch, to report settled instants.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    down_ncpus: u64,
    job_ncpus: u64,
    /// Waiting jobs' ncpus, as a multiset.
    waiting: BTreeMap<u64, u32>,
}

impl Facts {
    /// Facts about `state`, whose watch of `sets` starts now.
    pub(crate) fn new(sets: &SetPartition, state: &mut ClusterState) -> Facts {
        state.watch_sets(&sets.set_of, sets.len());
        Facts::default()
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

    /// A waiting job of `ncpus` left the queue without starting (deleted).
    pub(crate) fn dequeued(&mut self, ncpus: u64) {
        if let Some(count) = self.waiting.get_mut(&ncpus) {
            *count -= 1;
            if *count == 0 {
                self.waiting.remove(&ncpus);
            }
        }
    }

    /// A running job of `ncpus` stopped (ended, killed or requeued).
    pub(crate) fn stopped(&mut self, ncpus: u64) {
        self.job_ncpus -= ncpus;
    }

    /// The instant `time`, settled: the queue after the pass, its head's ncpus if any.
    pub(crate) fn settled<'s>(
        &self,
        time: SimTime,
        state: &'s ClusterState,
        head_ncpus: Option<u64>,
        queue_len: usize,
    ) -> SettledInstant<'s> {
        let (set_free_ncpus, idle_ncpus, set_free_version) =
            state.watch().map_or((&[][..], 0, 0), |w| {
                (&w.set_free[..], w.idle_ncpus, w.version)
            });
        SettledInstant {
            facts: InstantFacts {
                time,
                job_ncpus: self.job_ncpus,
                down_ncpus: self.down_ncpus,
                idle_ncpus,
                queue_len: queue_len as u64,
                head_ncpus,
                smallest_waiting_ncpus: self.waiting.keys().next().copied(),
            },
            set_free_ncpus,
            set_free_version,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClusterBuilder, ResourceDefs, ResourceKind};

    /// Sets by a key whose values come in runs and back again, with a vnode without one:
    /// each name is a set once, numbered in the order first met.
    #[test]
    fn sets_by_key_number_each_value_once_in_order_met() {
        let mut defs = ResourceDefs::default();
        let switch = defs.define("switch", ResourceKind::String, false).unwrap();
        let mut b = ClusterBuilder::new(defs);
        for (i, value) in [
            Some("s2"),
            Some("s2"),
            Some("s1"),
            None,
            Some("s2"),
            Some("s1"),
        ]
        .into_iter()
        .enumerate()
        {
            let h = b.add_host(format!("v{i}"));
            let attrs = value
                .map(|v| vec![(switch, AttrValue::Str(v.into()))])
                .unwrap_or_default();
            b.add_vnode(format!("v{i}"), h, 1.0, &[1, 0, 0], attrs)
                .unwrap();
        }
        let sets = SetPartition::by_key(&b.build().unwrap(), switch);
        assert_eq!(sets.names, ["s2", "s1", ""]);
        assert_eq!(sets.set_of, [0, 0, 1, 2, 0, 1]);
    }
}
