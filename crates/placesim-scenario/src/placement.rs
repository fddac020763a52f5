//! The placement policy a scenario asks for, built with its settings.

use crate::Scenario;
use placesim_core::{ResourceId, SimTime, Workload};
use placesim_policy::placement::{FirstFit, MoabNodeSets, PbsPsets, PbsTimeline, PsetSettings};
use placesim_policy::{PlacementKind, PlacementSpec};

impl Scenario {
    /// The placement `run.placement` names, with its sets built for this cluster and the
    /// requests of `workload` (the keys its jobs name in `group=`, the values in `nodeset=`).
    pub fn placement(&self, workload: &Workload) -> PlacementSpec {
        if self.partitions.is_empty() {
            return self.placement_with(workload, &self.pbs.psets);
        }
        // The default scheduler schedules the vnodes in no partition.
        let mut universe = vec![true; self.cluster.n_vnodes()];
        for v in self.partitions.iter().flat_map(|p| &p.vnodes) {
            universe[v.index()] = false;
        }
        let psets = PsetSettings {
            universe: Some(universe.into()),
            ..self.pbs.psets.clone()
        };
        self.placement_with(workload, &psets)
    }

    /// The placement of the scheduler of `partition` (`[[pbs.sched]]`): the run's, with that
    /// scheduler's `do_not_span_psets`, `only_explicit_psets` and `node_sort_key`.
    pub fn partition_placement(
        &self,
        workload: &Workload,
        partition: &crate::SchedPartition,
    ) -> PlacementSpec {
        let mut universe = vec![false; self.cluster.n_vnodes()];
        for v in &partition.vnodes {
            universe[v.index()] = true;
        }
        let psets = PsetSettings {
            universe: Some(universe.into()),
            do_not_span: partition.do_not_span,
            only_explicit: partition.only_explicit,
            node_order: partition.node_order.clone(),
            node_sort: partition.node_sort.clone(),
            ..self.pbs.psets.clone()
        };
        self.placement_with(workload, &psets)
    }

    fn placement_with(&self, workload: &Workload, psets: &PsetSettings) -> PlacementSpec {
        match self.run.placement {
            PlacementKind::FirstFit => PlacementSpec::FirstFit(Box::new(match &psets.node_sort {
                Some(sort) => FirstFit::sorted_by_free(sort.clone()),
                None => FirstFit::in_order(psets.node_order.clone()),
            })),
            PlacementKind::Pbs => {
                let job_keys = group_keys(workload);
                let with_job_keys = |settings: &PsetSettings| PsetSettings {
                    job_keys: job_keys.clone(),
                    ..settings.clone()
                };
                let initial = with_job_keys(psets);
                if self.timeline.pset_changes.is_empty() {
                    PlacementSpec::Pbs(Box::new(PbsPsets::new(&self.cluster, initial)))
                } else {
                    let periods = std::iter::once((SimTime(0), initial))
                        .chain(
                            self.timeline
                                .pset_changes
                                .iter()
                                .map(|(at, settings)| (*at, with_job_keys(settings))),
                        )
                        .collect();
                    PlacementSpec::PbsTimeline(Box::new(PbsTimeline::new(&self.cluster, periods)))
                }
            }
            PlacementKind::Moab => PlacementSpec::Moab(Box::new(MoabNodeSets::new(
                &self.cluster,
                self.moab.nodesets.clone(),
                workload.requests(),
            ))),
        }
    }
}

/// The keys `workload`'s jobs name in `place=group=` or a per-chunk `group=`, in order of
/// first appearance: the PBS placement builds their sets up front.
fn group_keys(workload: &Workload) -> Vec<ResourceId> {
    let mut keys: Vec<ResourceId> = Vec::new();
    for r in workload.requests() {
        let named = r
            .group
            .into_iter()
            .chain(r.selects().flatten().filter_map(|c| c.group));
        for k in named {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys
}
