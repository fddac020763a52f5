//! Where jobs ran, kept compactly while the run goes on and written in PBS's `exec_vnode`
//! syntax: `(v1:ncpus=2:mem=4gb)+(v2:ncpus=2)`.
//!
//! A big job holds thousands of vnodes, mostly consecutive ones with the same amounts; keeping
//! each allocation as runs of such vnodes costs a few words per job instead of one entry per
//! vnode, and the text is made only when its row group is written.

use placesim_core::{Allocation, Cluster, ResourceKind, VnodeId};
use std::collections::HashMap;
use std::fmt::Write as _;

/// What the text needs from the cluster: vnode names, and the consumables' names and kinds in
/// the order allocations list their amounts.
#[derive(Debug, Clone)]
pub(crate) struct ExecNames {
    vnodes: Vec<String>,
    consumables: Vec<(String, ResourceKind)>,
}

impl ExecNames {
    pub(crate) fn of(cluster: &Cluster) -> ExecNames {
        let defs = cluster.resources();
        ExecNames {
            vnodes: (0..cluster.n_vnodes())
                .map(|v| cluster.vnode(VnodeId::from_index(v)).name.clone())
                .collect(),
            consumables: defs
                .consumables()
                .iter()
                .map(|&id| {
                    let def = defs.def(id);
                    (def.name.clone(), def.kind)
                })
                .collect(),
        }
    }
}

/// A run of consecutive vnodes that each take the same amounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    first: u32,
    count: u32,
    /// Index of the amounts in [`ExecStore`].
    amounts: u32,
}

impl Run {
    /// The vnodes of the run.
    pub(crate) fn vnodes(&self) -> impl Iterator<Item = VnodeId> + use<> {
        (self.first..self.first + self.count).map(VnodeId)
    }
}

/// An allocation as runs.
pub(crate) type Runs = Box<[Run]>;

/// The distinct per-vnode amounts seen, so that a run names its amounts by index.
#[derive(Debug, Clone, Default)]
pub(crate) struct ExecStore {
    width: usize,
    amounts: Vec<u64>,
    ids: HashMap<Box<[u64]>, u32>,
}

impl ExecStore {
    /// A store for allocations over `width` consumables.
    pub(crate) fn new(width: usize) -> ExecStore {
        ExecStore {
            width,
            ..ExecStore::default()
        }
    }

    /// How many consumables each amount vector has.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    fn intern(&mut self, amounts: &[u64]) -> u32 {
        if let Some(&id) = self.ids.get(amounts) {
            return id;
        }
        let id = (self.amounts.len() / self.width.max(1)) as u32;
        self.amounts.extend_from_slice(amounts);
        self.ids.insert(amounts.into(), id);
        id
    }

    /// `allocation` as runs, in its own chunk order.
    pub(crate) fn runs(&mut self, allocation: &Allocation) -> Runs {
        // The allocation's runs are maximal already: each is one run here.
        allocation
            .runs(self.width)
            .map(|(run, amounts)| Run {
                first: run.first.0,
                count: run.count,
                amounts: self.intern(amounts),
            })
            .collect()
    }

    /// Appends `runs` to `out` in PBS's syntax, one chunk per vnode; amounts of 0 are left out,
    /// sizes in the largest exact unit.
    pub(crate) fn write(&self, names: &ExecNames, runs: &[Run], out: &mut String) {
        let mut first_chunk = true;
        // Every vnode of a run takes the same amounts: their text is made once per run.
        let mut amounts_text = String::new();
        for run in runs {
            let start = run.amounts as usize * self.width;
            let amounts = &self.amounts[start..start + self.width];
            amounts_text.clear();
            for ((name, kind), &amount) in names.consumables.iter().zip(amounts) {
                if amount == 0 {
                    continue;
                }
                let _ = write!(amounts_text, ":{name}=");
                let _ = placesim_core::write_amount(&mut amounts_text, *kind, amount);
            }
            for v in run.first..run.first + run.count {
                if !first_chunk {
                    out.push('+');
                }
                first_chunk = false;
                out.push('(');
                out.push_str(names.vnodes.get(v as usize).map_or("?", String::as_str));
                out.push_str(&amounts_text);
                out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use placesim_core::{ClusterBuilder, ResourceDefs, Sharing};

    #[test]
    fn runs_compress_consecutive_vnodes_and_print_every_chunk() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        for i in 0..5 {
            let h = b.add_host(format!("h{i}"));
            b.add_vnode(format!("n{i}"), h, 1.0, &[4, 8 << 20, 1], Vec::new())
                .unwrap();
        }
        let cluster = b.build().unwrap();
        let names = ExecNames::of(&cluster);
        let mut store = ExecStore::new(3);
        let mut a = Allocation::new(Sharing::Shared);
        for v in [1, 2, 3] {
            a.add(VnodeId(v), &[2, 4 << 20, 0]);
        }
        a.add(VnodeId(4), &[1, 1536, 0]);
        a.add(VnodeId(0), &[2, 4 << 20, 0]);
        let runs = store.runs(&a);
        assert_eq!(runs.len(), 3);
        let mut text = String::new();
        store.write(&names, &runs, &mut text);
        assert_eq!(
            text,
            "(n1:ncpus=2:mem=4gb)+(n2:ncpus=2:mem=4gb)+(n3:ncpus=2:mem=4gb)+(n4:ncpus=1:mem=1536kb)+(n0:ncpus=2:mem=4gb)"
        );
    }
}
