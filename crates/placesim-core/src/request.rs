//! The lowered resource request that policies consume.
//!
//! Request *syntax* (PBS select/place, Moab nodeset) is parsed elsewhere and lowered into this
//! form, so that no policy ever sees request text. Amounts are per chunk, in each consumable's
//! base unit (counts, or KiB for sizes), indexed by [`crate::resource::ConsumableIdx`].

use crate::resource::ConsumableIdx;

/// `N` identical chunks, each needing the same amounts on one vnode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Chunk {
    /// How many chunks of this shape.
    pub count: u32,
    /// What each chunk needs, one amount per consumable slot.
    pub amounts: Vec<u64>,
}

/// How chunks may be spread over vnodes (PBS `place=` arrangement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Arrangement {
    /// Any vnodes; several chunks may share a vnode while amounts allow. PBS's default.
    #[default]
    Free,
    /// At most one chunk per host.
    Scatter,
    /// At most one chunk per vnode.
    VScatter,
}

/// Whether the job's vnodes may be shared with other jobs (PBS `place=` sharing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Sharing {
    /// Vnodes may hold other jobs while amounts allow.
    #[default]
    Shared,
    /// Every chosen vnode must hold no other job, and holds no other job while this one runs.
    Excl,
}

/// A job's request: chunks in select order plus how to place them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Request {
    /// Chunk complexes, placed in this order with no backtracking, as PBS does.
    pub chunks: Vec<Chunk>,
    /// How chunks are spread.
    pub arrangement: Arrangement,
    /// Whether vnodes are shared.
    pub sharing: Sharing,
}

impl Request {
    /// `select=n:ncpus=1`: the plain SWF job of `n` processors, with `n_consumables` slots.
    pub fn processors(n: u32, n_consumables: usize) -> Request {
        let mut amounts = vec![0; n_consumables];
        amounts[ConsumableIdx::NCPUS.index()] = 1;
        Request {
            chunks: vec![Chunk { count: n, amounts }],
            arrangement: Arrangement::Free,
            sharing: Sharing::Shared,
        }
    }

    /// The total of one consumable over all chunks: what the job takes from the cluster.
    pub fn total(&self, c: ConsumableIdx) -> u64 {
        self.chunks
            .iter()
            .map(|ch| u64::from(ch.count) * ch.amounts[c.index()])
            .sum()
    }

    /// Totals of every consumable, written into `out` (cleared first).
    pub fn totals_into(&self, out: &mut Vec<u64>) {
        out.clear();
        let n = self.chunks.first().map_or(0, |c| c.amounts.len());
        out.resize(n, 0);
        for ch in &self.chunks {
            for (o, a) in out.iter_mut().zip(&ch.amounts) {
                *o += u64::from(ch.count) * a;
            }
        }
    }
}
