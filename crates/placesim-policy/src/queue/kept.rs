//! Reservation states kept between passes.
//!
//! A pass of backfilling with a reservation depth needs, for each reservation, the state of
//! the cluster at its start: the unoccupied cluster less every allocation held then. Built
//! from scratch at every pass, that costs every running job's vnodes per reservation per
//! pass, and between two passes almost nothing changes (one job ended, one arrived). So each
//! reservation's view is kept with a list of what it holds, and the next pass brings it to
//! what it must hold by giving back and taking only the difference.
//!
//! The view reads through to the unoccupied cluster ([`ClusterState::unoccupied_copy`]),
//! which changes only with outages, so a kept view stays meaningful from pass to pass; when
//! the unoccupied cluster is made again, every kept view starts over.

use placesim_core::{
    Allocation, ClusterState, JobId, PlacementPolicy, Request, Scratch, ScratchBuf, SimTime,
};
use std::collections::HashMap;
use std::sync::Arc;

use super::calendar::place_on;

/// Something that holds resources in a reservation's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Holder {
    /// A job holding its allocation from this start: running, or starting in this pass. A job
    /// holds the same vnodes for as long as it runs, so the pair names an allocation.
    Job(JobId, SimTime),
    /// A job's reservation from this start. Its vnodes may differ from pass to pass, and
    /// move within one.
    Reservation(JobId, SimTime),
}

/// A placement asked of a kept view, with the answer, valid while the view is unchanged.
#[derive(Debug)]
struct Memo {
    version: u64,
    job: JobId,
    relaxed: bool,
    allocation: Option<Allocation>,
}

/// What a kept view holds, beside its buffer.
#[derive(Debug, Default)]
pub(crate) struct Book {
    /// The holders the view holds, sorted, each with its allocation.
    content: Vec<(Holder, Arc<Allocation>)>,
    /// The serial of the unoccupied cluster the content was built over.
    base_serial: u64,
    /// Bumped at every change of the view.
    version: u64,
    memo: Option<Memo>,
}

/// A reservation view kept between passes: its buffer and its book.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    buf: ScratchBuf,
    book: Book,
}

/// The allocations of running jobs shared by the kept views, so that a job held in several
/// views is copied once, and dropped when no view holds it.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    jobs: HashMap<(JobId, SimTime), Arc<Allocation>>,
}

impl Shared {
    /// The shared copy of `allocation`, held by `holder`.
    fn of(&mut self, holder: Holder, allocation: &Allocation) -> Arc<Allocation> {
        match holder {
            Holder::Job(job, start) => self
                .jobs
                .entry((job, start))
                .or_insert_with(|| Arc::new(allocation.clone()))
                .clone(),
            Holder::Reservation(..) => Arc::new(allocation.clone()),
        }
    }

    /// Drops the copies no view holds any more.
    pub(crate) fn prune(&mut self) {
        self.jobs.retain(|_, a| Arc::strong_count(a) > 1);
    }
}

/// The unoccupied cluster the views read through to, with a serial that changes whenever it is
/// made again (an outage began or ended).
#[derive(Debug, Default)]
pub(crate) struct Unoccupied {
    state: Option<ClusterState>,
    serial: u64,
}

impl Unoccupied {
    /// The unoccupied copy of `state`, made again if it is stale, and its serial.
    pub(crate) fn of(&mut self, state: &ClusterState) -> (&ClusterState, u64) {
        if self.state.is_none() || super::idle_is_stale(&self.state, state, true) {
            self.serial += 1;
        }
        let serial = self.serial;
        (super::idle_of(&mut self.state, state, true), serial)
    }
}

/// A kept view opened for a pass.
pub(crate) struct View<'s> {
    pub(crate) scratch: Scratch<'s>,
    book: &'s mut Book,
}

impl<'s> View<'s> {
    /// Opens `kept` over `unoccupied` (whose serial is `serial`): as the last pass left it,
    /// or empty (equal to `unoccupied`) if that was over another unoccupied cluster.
    pub(crate) fn open(unoccupied: &'s ClusterState, serial: u64, kept: &'s mut Kept) -> Self {
        let Kept { buf, book } = kept;
        let scratch = if book.base_serial == serial {
            Scratch::resume(unoccupied, buf)
        } else {
            book.content.clear();
            book.base_serial = serial;
            book.version += 1;
            Scratch::new(unoccupied, buf)
        };
        View { scratch, book }
    }

    /// Takes `allocation` for `holder`.
    pub(crate) fn take(&mut self, shared: &mut Shared, holder: Holder, allocation: &Allocation) {
        self.scratch.take(allocation);
        let slot = self.book.content.partition_point(|(h, _)| *h < holder);
        debug_assert!(
            self.book
                .content
                .get(slot)
                .is_none_or(|(h, _)| *h != holder),
            "{holder:?} is held twice"
        );
        let shared = shared.of(holder, allocation);
        self.book.content.insert(slot, (holder, shared));
        self.book.version += 1;
    }

    /// Gives back what `holder` holds, and returns it.
    pub(crate) fn give(&mut self, holder: Holder) -> Option<Arc<Allocation>> {
        let slot = self
            .book
            .content
            .binary_search_by(|(h, _)| h.cmp(&holder))
            .ok();
        debug_assert!(slot.is_some(), "{holder:?} is not held");
        let (_, allocation) = self.book.content.remove(slot?);
        self.scratch.give(&allocation);
        self.book.version += 1;
        Some(allocation)
    }

    /// Makes the view hold exactly `desired` (sorted by holder, each once): gives back what it
    /// holds and should not, then takes what it should and does not. What both hold is left
    /// alone, unless a reservation's vnodes differ.
    pub(crate) fn sync(&mut self, shared: &mut Shared, desired: &[(Holder, &Allocation)]) {
        let content = std::mem::take(&mut self.book.content);
        let mut kept: Vec<(Holder, Arc<Allocation>)> = Vec::with_capacity(desired.len());
        let mut to_take: Vec<(Holder, &Allocation)> = Vec::new();
        let mut given = false;
        let mut old = content.into_iter().peekable();
        for &(holder, allocation) in desired {
            while let Some((_, a)) = old.next_if(|(h, _)| *h < holder) {
                self.scratch.give(&a);
                given = true;
            }
            match old.next_if(|(h, _)| *h == holder) {
                Some((h, a)) if matches!(h, Holder::Job(..)) || same_holding(&a, allocation) => {
                    kept.push((h, a));
                }
                Some((_, a)) => {
                    self.scratch.give(&a);
                    given = true;
                    to_take.push((holder, allocation));
                }
                None => to_take.push((holder, allocation)),
            }
        }
        for (_, a) in old {
            self.scratch.give(&a);
            given = true;
        }
        // Everything given back first: a vnode may pass from a holder that left to one that
        // came.
        for &(holder, allocation) in &to_take {
            self.scratch.take(allocation);
            kept.push((holder, shared.of(holder, allocation)));
        }
        if given || !to_take.is_empty() {
            kept.sort_unstable_by_key(|(h, _)| *h);
            self.book.version += 1;
        }
        self.book.content = kept;
    }

    /// Where `request` (job `job`'s, relaxed or not) goes in this view. The answer is kept
    /// while the view is unchanged, when the placement's answers depend only on the state: a
    /// reservation that stays where it was from pass to pass is then not placed again.
    pub(crate) fn place(
        &mut self,
        placement: &mut dyn PlacementPolicy,
        job: JobId,
        request: &Request,
        relaxed: bool,
    ) -> Option<Allocation> {
        let version = self.book.version;
        if let Some(memo) = &self.book.memo
            && memo.version == version
            && memo.job == job
            && memo.relaxed == relaxed
        {
            return memo.allocation.clone();
        }
        let allocation = place_on(placement, request, &self.scratch, relaxed);
        if placement.depends_only_on_state() {
            self.book.memo = Some(Memo {
                version,
                job,
                relaxed,
                allocation: allocation.clone(),
            });
        }
        allocation
    }
}

/// Whether two allocations hold the same amounts on the same vnodes in the same way.
fn same_holding(a: &Allocation, b: &Allocation) -> bool {
    a.same_holding(b)
}
