//! Reservations a site made: PBS advance and maintenance reservations (and, later, standing
//! reservations' occurrences), confirmed on named vnodes for a window of time.
//!
//! These are not the top-job reservations a queue discipline plans afresh at every pass: a
//! site reservation is fixed before the run, on fixed vnodes, and every discipline must keep
//! other jobs off its vnodes for its window (PBS's calendar conflict check,
//! reservations-and-partitions.md §1.5). The kernel holds its vnodes from its start to its
//! end; policies see every reservation not yet ended in [`crate::SchedContext::reservations`].

use crate::state::Allocation;
use crate::time::SimTime;
use std::sync::Arc;

/// A reservation confirmed on named vnodes, held over `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteReservation {
    /// Its name as the site gives it (PBS's `R123`, `M4`), for outputs and errors.
    pub name: Arc<str>,
    /// When its window opens: the kernel takes its vnodes then.
    pub start: SimTime,
    /// When its window closes (after `start`): the kernel gives its vnodes back then.
    pub end: SimTime,
    /// The vnodes and amounts it holds (PBS's `resv_nodes`). Held exclusively
    /// (`place=excl`, a maintenance reservation's `exclhost`), no other job may share a vnode
    /// with it while their windows overlap; held shared, others may use what it leaves.
    pub allocation: Allocation,
    /// The PBS queue (by index) whose jobs run inside it, if any (PBS names a reservation's
    /// queue by its id: `qsub -q R123`): they wait until its window opens, run only on what
    /// it holds, are killed when it closes, and those still waiting then are deleted.
    pub queue: Option<u32>,
}

/// A reservation requested of the scheduler (`pbs_rsub -R start -E end -l select=...`): at
/// its submission it is unconfirmed, and the scheduler's next pass confirms it on vnodes that
/// can hold its request over its whole window, or denies it
/// (reservations-and-partitions.md §1.3).
#[derive(Debug, Clone, PartialEq)]
pub struct ReservationRequest {
    /// Its name (PBS's id).
    pub name: Arc<str>,
    /// When it is submitted.
    pub submit: SimTime,
    /// When its window opens.
    pub start: SimTime,
    /// When it closes.
    pub end: SimTime,
    /// What it asks for (its select and place), lowered.
    pub request: crate::Request,
    /// Its queue, as [`SiteReservation::queue`].
    pub queue: Option<u32>,
}

/// A reservation with a queue of its own, as the run goes: its window, and while it is open
/// the cluster as its jobs see it.
#[derive(Debug, Clone)]
pub struct ReservationQueue {
    /// The reservation's name.
    pub name: Arc<str>,
    /// Its queue, by index.
    pub queue: u32,
    /// When its window opens.
    pub start: SimTime,
    /// When it closes.
    pub end: SimTime,
    /// While the window is open: a state in which only what the reservation holds is free
    /// ([`crate::ClusterState::universe`]), less what its running jobs hold. `None` before
    /// and after.
    pub universe: Option<crate::ClusterState>,
}

impl SiteReservation {
    /// Whether its window is still to come or open at `now` (it has not ended).
    pub fn open_at(&self, now: SimTime) -> bool {
        self.end > now
    }

    /// Whether its window overlaps `[from, until)`: both are half-open, so a job ending at
    /// the reservation's start, or starting at its end, does not overlap it.
    pub fn overlaps(&self, from: SimTime, until: SimTime) -> bool {
        self.start < until && from < self.end
    }
}
