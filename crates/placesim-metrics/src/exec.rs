//! Where jobs ran, kept compactly while the run goes on and written in PBS's `exec_vnode`
//! syntax: `(v1:ncpus=2:mem=4gb)+(v2:ncpus=2)`.
//!
//! A big job holds thousands of vnodes, mostly consecutive ones with the same amounts; keeping
//! each allocation as runs of such vnodes costs a few words per job instead of one entry per
//! vnode, and the text is made only when its row group is written, by the thread that writes
//! it ([`ExecGroup`]).

use crate::strings::StringColumn;
use placesim_core::{Allocation, Cluster, ResourceKind, VnodeId};
use polars::prelude::{Column, PolarsResult};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// What the text needs from the cluster: vnode names, and the consumables' names and kinds in
/// the order allocations list their amounts.
#[derive(Debug, Clone)]
pub(crate) struct ExecNames {
    /// Each vnode's chunk as far as its amounts, after the `+` that joins it to the one
    /// before: `+(name` (the first chunk of a job leaves out the `+`).
    chunk_starts: Vec<String>,
    consumables: Vec<(String, ResourceKind)>,
}

impl ExecNames {
    pub(crate) fn of(cluster: &Cluster) -> ExecNames {
        let defs = cluster.resources();
        ExecNames {
            chunk_starts: (0..cluster.n_vnodes())
                .map(|v| format!("+({}", cluster.vnode(VnodeId::from_index(v)).name))
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
    /// The amounts interned last: most runs take what the one before took.
    last: Option<u32>,
    /// The runs made last ([`ExecStore::fill`]).
    scratch: Vec<Run>,
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
        if let Some(last) = self.last
            && self.amounts_of(last) == amounts
        {
            return last;
        }
        let id = match self.ids.get(amounts) {
            Some(&id) => id,
            None => {
                let id = (self.amounts.len() / self.width.max(1)) as u32;
                self.amounts.extend_from_slice(amounts);
                self.ids.insert(amounts.into(), id);
                id
            }
        };
        self.last = Some(id);
        id
    }

    /// The amounts interned as `id`.
    fn amounts_of(&self, id: u32) -> &[u64] {
        let start = id as usize * self.width;
        &self.amounts[start..start + self.width]
    }

    /// `allocation` as runs, in its own chunk order.
    pub(crate) fn runs(&mut self, allocation: &Allocation) -> Runs {
        self.fill(allocation).into()
    }

    /// `allocation` as runs, made in a buffer the store keeps: to be compared with runs kept
    /// before, and only then, if they differ, kept themselves.
    pub(crate) fn fill(&mut self, allocation: &Allocation) -> &[Run] {
        let mut runs = std::mem::take(&mut self.scratch);
        runs.clear();
        // The allocation's runs are maximal already: each is one run here.
        runs.extend(allocation.runs(self.width).map(|(run, amounts)| Run {
            first: run.first.0,
            count: run.count,
            amounts: self.intern(amounts),
        }));
        self.scratch = runs;
        &self.scratch
    }

    /// Appends `runs` to `out` in PBS's syntax, one chunk per vnode; amounts of 0 are left out,
    /// sizes in the largest exact unit.
    pub(crate) fn write(&self, names: &ExecNames, runs: &[Run], out: &mut String) {
        write_runs(
            &mut AmountTexts::new(names, self.width, &self.amounts),
            runs,
            out,
        );
    }

    /// The runs of `jobs` (one entry per job, in row order), with only the amounts they name,
    /// so that their text can be made on another thread while this store keeps growing.
    pub(crate) fn group<'r>(
        &self,
        names: &Arc<ExecNames>,
        jobs: impl ExactSizeIterator<Item = Option<&'r Runs>>,
    ) -> ExecGroup {
        let mut group = ExecGroup {
            names: Arc::clone(names),
            width: self.width,
            amounts: Vec::new(),
            runs: Vec::new(),
            ends: Vec::with_capacity(jobs.len()),
        };
        // Store index to the group's own: a group names few distinct amounts, and most runs
        // the same as the run before.
        let mut local: HashMap<u32, u32> = HashMap::new();
        let mut last: Option<(u32, u32)> = None;
        for runs in jobs {
            let Some(runs) = runs else {
                group.ends.push(None);
                continue;
            };
            for run in runs.iter() {
                let amounts = match last {
                    Some((stored, own)) if stored == run.amounts => own,
                    _ => {
                        let next = local.len() as u32;
                        let own = *local.entry(run.amounts).or_insert_with(|| {
                            group
                                .amounts
                                .extend_from_slice(self.amounts_of(run.amounts));
                            next
                        });
                        last = Some((run.amounts, own));
                        own
                    }
                };
                group.runs.push(Run { amounts, ..*run });
            }
            group.ends.push(Some(group.runs.len()));
        }
        group
    }
}

/// The allocations of a row group's jobs, taken from the [`ExecStore`] as runs: their text, tens
/// of kilobytes for a job of thousands of vnodes, is made by the thread that writes the group,
/// not by the simulation's.
#[derive(Debug)]
pub(crate) struct ExecGroup {
    names: Arc<ExecNames>,
    width: usize,
    /// The amounts the runs name, `width` per index.
    amounts: Vec<u64>,
    runs: Vec<Run>,
    /// Per job, where its runs end in `runs`; `None` for a job with none.
    ends: Vec<Option<usize>>,
}

impl ExecGroup {
    /// The group's column `name`: each job's vnodes in PBS's syntax, null for a job with none
    /// (all nulls if no job has any).
    pub(crate) fn column(&self, name: &str) -> PolarsResult<Column> {
        let mut column = StringColumn::with_capacity(self.ends.len());
        let mut amounts = AmountTexts::new(&self.names, self.width, &self.amounts);
        let mut from = 0;
        for end in &self.ends {
            match *end {
                Some(end) => {
                    let runs = &self.runs[from..end];
                    from = end;
                    column.push_written(|out| write_runs(&mut amounts, runs, out))?;
                }
                None => column.push_null(),
            }
        }
        column.finish(name)
    }
}

/// The text that ends a chunk for each amount vector of a table, made the first time it is
/// needed: `:ncpus=2:mem=4gb)`, amounts of 0 left out, sizes in the largest exact unit.
struct AmountTexts<'a> {
    names: &'a ExecNames,
    width: usize,
    amounts: &'a [u64],
    texts: Vec<Option<String>>,
}

impl<'a> AmountTexts<'a> {
    /// For `amounts`, `width` per index.
    fn new(names: &'a ExecNames, width: usize, amounts: &'a [u64]) -> AmountTexts<'a> {
        AmountTexts {
            names,
            width,
            amounts,
            texts: Vec::new(),
        }
    }

    /// The text for the amounts of index `id`.
    fn get(&mut self, id: u32) -> &str {
        let id = id as usize;
        if self.texts.len() <= id {
            self.texts.resize(id + 1, None);
        }
        let (names, width, amounts) = (self.names, self.width, self.amounts);
        self.texts[id].get_or_insert_with(|| {
            let mut text = String::new();
            let of_id = &amounts[id * width..(id + 1) * width];
            for ((name, kind), &amount) in names.consumables.iter().zip(of_id) {
                if amount == 0 {
                    continue;
                }
                let _ = write!(text, ":{name}=");
                let _ = placesim_core::write_amount(&mut text, *kind, amount);
            }
            text.push(')');
            text
        })
    }
}

/// Appends `runs`, whose amounts `amounts` renders (with its vnode names), to `out` in PBS's
/// syntax: one chunk per vnode, joined by `+`.
fn write_runs(amounts: &mut AmountTexts<'_>, runs: &[Run], out: &mut String) {
    let names = amounts.names;
    let chunk_start = |v: u32| {
        names
            .chunk_starts
            .get(v as usize)
            .map_or("+(?", String::as_str)
    };
    let mut first_chunk = true;
    for run in runs {
        let end = amounts.get(run.amounts);
        let mut vnodes = run.first..run.first + run.count;
        if first_chunk && let Some(v) = vnodes.next() {
            // The job's first chunk joins nothing: its `+` is left out.
            out.push_str(&chunk_start(v)[1..]);
            out.push_str(end);
            first_chunk = false;
        }
        for v in vnodes {
            out.push_str(chunk_start(v));
            out.push_str(end);
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
