//! Where jobs ran, kept compactly while the run goes on and written in PBS's `exec_vnode`
//! syntax: `(v1:ncpus=2:mem=4gb)+(v2:ncpus=2)`.
//!
//! A big job holds thousands of vnodes, mostly consecutive ones with the same amounts; keeping
//! each allocation as runs of such vnodes costs a few words per job instead of one entry per
//! vnode, and the text is made only when its row group is written, by the thread that writes
//! it ([`ExecGroup`]).

use crate::parquet::Dictionary;
use crate::strings::StringColumn;
use placesim_core::{Allocation, Cluster, ResourceKind, VnodeId};
use polars::prelude::{Column, PolarsResult, polars_bail};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
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
                .map(|v| format!("+({}", cluster.vnode(VnodeId::from_index(v)).name()))
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
        let (distinct, keys) = self.distinct_texts()?;
        distinct.picked(&keys).finish(name)
    }

    /// The group's column as jobs.parquet stores it ([`crate::parquet`]): each distinct
    /// allocation's text once, in a dictionary, and per job the index of its own; none when no
    /// job has vnodes (the frame's nulls are then stored as polars stores them).
    ///
    /// Plain-encoded, psets-bench's texts came to 1.3 GB, which zstd took longer to compress
    /// than the simulation took to run; a dictionary holds 0.8 GB of them, made straight into
    /// its page.
    pub(crate) fn stored(&self) -> PolarsResult<Option<Dictionary>> {
        let mut dictionary = Dictionary::new();
        dictionary.keys = self.distinct(|amounts, runs| {
            if !dictionary.push_value(|out| write_runs(amounts, runs, out)) {
                polars_bail!(ComputeError: "a string value is over 4 GiB");
            }
            Ok(())
        })?;
        Ok(dictionary
            .keys
            .iter()
            .any(Option::is_some)
            .then_some(dictionary))
    }

    /// Each distinct allocation's text, in the order of first use, and per job the index of
    /// its own (none for a job with no vnodes).
    fn distinct_texts(&self) -> PolarsResult<(StringColumn, Vec<Option<u32>>)> {
        let mut distinct = StringColumn::with_capacity(self.ends.len());
        let keys = self.distinct(|amounts, runs| {
            let view = distinct.write(|out| write_runs(amounts, runs, out))?;
            distinct.push_view(view);
            Ok(())
        })?;
        Ok((distinct, keys))
    }

    /// Per job, the index of its allocation among the group's distinct ones, in the order of
    /// first use (none for a job with no vnodes); `write_new` writes each distinct one's text
    /// as it is first met.
    ///
    /// Jobs of the same size often land on the same vnodes (the first ones of a placement set):
    /// in psets-bench three in eight allocations of a row group repeat an earlier one. Their
    /// text is made once, and equal allocations are found by their runs, which are short,
    /// rather than by their texts, tens of kilobytes each.
    fn distinct(
        &self,
        mut write_new: impl FnMut(&mut AmountTexts<'_>, &[Run]) -> PolarsResult<()>,
    ) -> PolarsResult<Vec<Option<u32>>> {
        let mut keys = Vec::with_capacity(self.ends.len());
        let mut amounts = AmountTexts::new(&self.names, self.width, &self.amounts);
        // Runs are maximal and amounts interned, so equal runs are equal texts and the reverse.
        let mut made: HashMap<&[Run], u32> = HashMap::new();
        let mut from = 0;
        for end in &self.ends {
            keys.push(match *end {
                Some(end) => {
                    let runs = &self.runs[from..end];
                    from = end;
                    let next = made.len() as u32;
                    Some(match made.entry(runs) {
                        Entry::Occupied(made) => *made.get(),
                        Entry::Vacant(new) => {
                            write_new(&mut amounts, runs)?;
                            *new.insert(next)
                        }
                    })
                }
                None => None,
            });
        }
        Ok(keys)
    }
}

/// Where a text is written: a `String`, or the bytes of a Parquet page.
trait TextOut {
    fn push_str(&mut self, text: &str);
}

impl TextOut for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

impl TextOut for Vec<u8> {
    fn push_str(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
}

/// The texts of chunks for each amount vector of a table, made the first time they are needed.
struct AmountTexts<'a> {
    names: &'a ExecNames,
    width: usize,
    amounts: &'a [u64],
    of: Vec<OfAmounts>,
}

/// The texts of chunks with one amount vector.
#[derive(Debug, Clone, Default)]
struct OfAmounts {
    /// What ends each chunk: `:ncpus=2:mem=4gb)`, amounts of 0 left out, sizes in the largest
    /// exact unit.
    end: String,
    /// How many chunks with these amounts have been written one by one.
    one_by_one: usize,
    /// Once as many chunks have been written one by one as there are vnodes: every vnode's
    /// chunk, in vnode order, and where each starts. A run of consecutive vnodes is then one
    /// slice of it, copied at once, where writing it chunk by chunk takes two short copies a
    /// vnode (the bulk of a psets-bench run's writing). Made no earlier, its cost is at most
    /// that of the chunks already written.
    every_vnode: Option<(String, Vec<usize>)>,
}

impl<'a> AmountTexts<'a> {
    /// For `amounts`, `width` per index.
    fn new(names: &'a ExecNames, width: usize, amounts: &'a [u64]) -> AmountTexts<'a> {
        AmountTexts {
            names,
            width,
            amounts,
            of: Vec::new(),
        }
    }

    /// The texts for the amounts of index `id`.
    fn of(&mut self, id: u32) -> &mut OfAmounts {
        let id = id as usize;
        while self.of.len() <= id {
            let of_id = &self.amounts[self.of.len() * self.width..][..self.width];
            let mut end = String::new();
            for ((name, kind), &amount) in self.names.consumables.iter().zip(of_id) {
                if amount == 0 {
                    continue;
                }
                let _ = write!(end, ":{name}=");
                let _ = placesim_core::write_amount(&mut end, *kind, amount);
            }
            end.push(')');
            self.of.push(OfAmounts {
                end,
                ..OfAmounts::default()
            });
        }
        &mut self.of[id]
    }

    /// Appends `run`'s chunks to `out`, joined by `+`; `first` leaves out the `+` before the
    /// first of them (the job's first chunk joins nothing).
    fn write_run(&mut self, run: &Run, first: bool, out: &mut impl TextOut) {
        let starts = &self.names.chunk_starts;
        let (from, to) = (run.first as usize, run.first as usize + run.count as usize);
        let of = self.of(run.amounts);
        if of.every_vnode.is_none() && of.one_by_one >= starts.len() {
            let mut text = String::new();
            let mut at = Vec::with_capacity(starts.len() + 1);
            for start in starts {
                at.push(text.len());
                text.push_str(start);
                text.push_str(&of.end);
            }
            at.push(text.len());
            of.every_vnode = Some((text, at));
        }
        if let Some((text, at)) = &of.every_vnode
            && from < to
            && to < at.len()
        {
            let chunks = &text[at[from]..at[to]];
            out.push_str(if first { &chunks[1..] } else { chunks });
            return;
        }
        of.one_by_one += run.count as usize;
        for v in from..to {
            // A vnode the names lack cannot be in an allocation of the run's cluster.
            let start = starts.get(v).map_or("+(?", String::as_str);
            out.push_str(if first && v == from {
                &start[1..]
            } else {
                start
            });
            out.push_str(&of.end);
        }
    }
}

/// Appends `runs`, whose amounts `amounts` renders (with its vnode names), to `out` in PBS's
/// syntax: one chunk per vnode, joined by `+`.
fn write_runs(amounts: &mut AmountTexts<'_>, runs: &[Run], out: &mut impl TextOut) {
    let mut first = true;
    for run in runs.iter().filter(|run| run.count > 0) {
        amounts.write_run(run, first, out);
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use placesim_core::{ClusterBuilder, ResourceDefs, Sharing};

    /// The names of five vnodes `n0`..`n4` (ncpus, mem and one more consumable each), and an
    /// empty store for their allocations.
    fn five_vnodes() -> (ExecNames, ExecStore) {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        for i in 0..5 {
            let h = b.add_host(format!("h{i}"));
            b.add_vnode(format!("n{i}"), h, 1.0, &[4, 8 << 20, 1], Vec::new())
                .unwrap();
        }
        (ExecNames::of(&b.build().unwrap()), ExecStore::new(3))
    }

    #[test]
    fn runs_compress_consecutive_vnodes_and_print_every_chunk() {
        let (names, mut store) = five_vnodes();
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

    #[test]
    fn runs_written_from_every_vnodes_text_read_as_chunk_by_chunk() {
        let (names, mut store) = five_vnodes();
        // From the first vnode to the last, in two runs of different amounts.
        let mut a = Allocation::new(Sharing::Shared);
        a.add(VnodeId(3), &[1, 0, 0]);
        a.add(VnodeId(4), &[1, 0, 0]);
        for v in 0..3 {
            a.add(VnodeId(v), &[2, 4 << 20, 0]);
        }
        let runs = store.runs(&a);
        let mut texts = AmountTexts::new(&names, store.width, &store.amounts);
        let expected = "(n3:ncpus=1)+(n4:ncpus=1)+(n0:ncpus=2:mem=4gb)+(n1:ncpus=2:mem=4gb)+(n2:ncpus=2:mem=4gb)";
        // A run is written chunk by chunk until five chunks of its amounts have been, as many
        // as there are vnodes, and then as a slice: the two-vnode run from the fourth time on,
        // the three-vnode one from the third.
        for time in 0..4 {
            let mut text = String::new();
            write_runs(&mut texts, &runs, &mut text);
            assert_eq!(text, expected, "time {time}");
            let sliced: Vec<bool> = texts.of.iter().map(|of| of.every_vnode.is_some()).collect();
            assert_eq!(sliced, [time >= 3, time >= 2], "time {time}");
        }
    }
}
