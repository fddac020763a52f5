//! The placement policy a scenario asks for, built with its settings.

use crate::Scenario;
use placesim_policy::placement::{MoabNodeSets, NodeSetSettings, PbsPsets, PsetSettings};
use placesim_policy::{PlacementKind, PlacementSpec};

impl Scenario {
    /// The placement `run.placement` names, with its sets built for this cluster and the
    /// requests of `workload` (the keys its jobs name in `group=`, the values in `nodeset=`).
    pub fn placement(&self, workload: &placesim_core::Workload) -> PlacementSpec {
        match self.run.placement {
            PlacementKind::FirstFit => PlacementSpec::FirstFit,
            PlacementKind::Pbs => {
                PlacementSpec::Pbs(PbsPsets::new(&self.cluster, pset_settings(self, workload)))
            }
            PlacementKind::Moab => PlacementSpec::Moab(MoabNodeSets::new(
                &self.cluster,
                nodeset_settings(self),
                workload.requests(),
            )),
        }
    }
}

/// The PBS settings of a scenario, with the keys its jobs name in `group=`.
pub fn pset_settings(s: &Scenario, workload: &placesim_core::Workload) -> PsetSettings {
    let mut job_keys: Vec<placesim_core::ResourceId> = Vec::new();
    for r in workload.requests() {
        let keys = r
            .group
            .into_iter()
            .chain(r.selects().flatten().filter_map(|c| c.group));
        for k in keys {
            if !job_keys.contains(&k) {
                job_keys.push(k);
            }
        }
    }
    PsetSettings {
        node_group_enable: s.pbs.node_group_enable,
        server_key: s.pbs.node_group_key.clone(),
        queue_keys: s
            .pbs
            .queues
            .iter()
            .map(|q| q.node_group_key.clone())
            .collect(),
        vnode_queue: s.vnode_queue.clone(),
        do_not_span: s.pbs.do_not_span_psets,
        only_explicit: s.pbs.only_explicit_psets,
        job_keys,
    }
}

/// The Moab settings of a scenario, as the node-set policy takes them.
pub fn nodeset_settings(s: &Scenario) -> NodeSetSettings {
    let m = &s.moab;
    NodeSetSettings {
        policy: m.policy,
        attribute: m.attribute,
        list: m.list_values.clone(),
        feature_resource: m.feature_resource,
        is_optional: m.is_optional,
        delay: m.delay,
        priority_type: m.priority_type,
        tolerance: m.tolerance,
        plus: m.plus,
        allow_per_job_is_optional: m.allow_per_job_is_optional,
        options: m.options,
    }
}
