//! The closed set of events and their total order.
//!
//! Order of events: by time; at one instant by class, in the order of [`Event`]'s variants
//! (job ends, reservations ending, reservations starting, wake-ups, vnodes coming back, vnodes
//! going down, jobs deleted, reservations requested, submits), and within a class by insertion order (the queue's events), or by
//! reservation, vnode and job (the sorted lists of reservations, outages and submits). After all events of one instant, the kernel runs one scheduling pass.

use crate::ids::{JobId, VnodeId};
use crate::time::SimTime;
use priority_queue::PriorityQueue;
use std::cmp::Reverse;
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher for events (an enum over 32-bit ids). The event queue hashes
/// only to find an event to cancel, so SipHash's resistance to crafted keys buys nothing here,
/// and a fixed hasher keeps runs reproducible.
#[derive(Debug, Default, Clone, Copy)]
pub struct EventHasher(u64);

impl EventHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for EventHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    #[inline]
    fn write_isize(&mut self, x: isize) {
        self.add(x as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Everything that can happen in a run, in the order events at one instant are applied:
/// the variants' order is that order ([`Event::class_rank`]; the derived `Ord` follows it,
/// then the ids).
///
/// Job ends and wake-ups are pushed into the [`EventQueue`] as the run goes; submits, site
/// reservations and vnode outages are known up front, so the kernel keeps them in sorted lists and merges
/// them with the queue by the same key, which keeps a million-job trace out of the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// A running job finishes, or is killed at its walltime. First, so that anything else at
    /// the instant sees the resources it frees.
    JobEnd(JobId),
    /// A site reservation's window closes (its index in the run's list): its vnodes come
    /// back. Before reservations start, so that one ending as another begins on the same
    /// vnodes makes room for it (windows are half-open).
    ReservationEnd(u32),
    /// A site reservation's window opens: the kernel takes its vnodes, which the policies
    /// kept free for it.
    ReservationStart(u32),
    /// A scheduling policy asked for a pass at this instant (see
    /// [`crate::SchedulingPolicy::wakeup`]); nothing else happens.
    Wakeup,
    /// A vnode comes back into service (the last of its overlapping outages ended). Before
    /// vnodes go down, so that a vnode whose outages abut stays down throughout.
    VnodeUp(VnodeId),
    /// A vnode goes out of service: its jobs are requeued or killed.
    VnodeDown(VnodeId),
    /// A job is deleted (`qdel`, a scenario's timeline): taken out of the queue, or killed if
    /// it runs.
    JobDeleted(JobId),
    /// A reservation is deleted (`pbs_rdel`, a scenario's timeline; the index of its name in
    /// the run's list of deletions): every occurrence not ended is gone, with its queue and
    /// that queue's jobs.
    ReservationDeleted(u32),
    /// A reservation is requested of the scheduler (its index in the run's list of
    /// requests): the next pass confirms or denies it. Before job submits, so that a job
    /// submitted to its queue at the same instant finds it submitted.
    ReservationRequested(u32),
    /// A job arrives in the queue. Last, so that it sees every change of the instant.
    JobSubmit(JobId),
}

impl Event {
    /// The rank of the event's class at one instant: lower goes first. It is the variant's
    /// position in the enum.
    pub fn class_rank(self) -> u8 {
        match self {
            Event::JobEnd(_) => 0,
            Event::ReservationEnd(_) => 1,
            Event::ReservationStart(_) => 2,
            Event::Wakeup => 3,
            Event::VnodeUp(_) => 4,
            Event::VnodeDown(_) => 5,
            Event::JobDeleted(_) => 6,
            Event::ReservationDeleted(_) => 7,
            Event::ReservationRequested(_) => 8,
            Event::JobSubmit(_) => 9,
        }
    }
}

/// The total order key: time, class rank, insertion sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// When.
    pub time: SimTime,
    /// [`Event::class_rank`].
    pub class: u8,
    /// Insertion order, for FIFO among equals.
    pub seq: u64,
}

/// Pending internal events. Keyed by the event itself, so an event can be cancelled
/// (a job end when its node fails) in O(log n).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: PriorityQueue<Event, Reverse<EventKey>, BuildHasherDefault<EventHasher>>,
    seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `time`. Scheduling an event that is already pending moves it.
    pub fn push(&mut self, time: SimTime, event: Event) {
        let key = EventKey {
            time,
            class: event.class_rank(),
            seq: self.seq,
        };
        self.seq += 1;
        self.heap.push(event, Reverse(key));
    }

    /// The earliest pending event's key.
    pub fn peek_key(&self) -> Option<EventKey> {
        self.heap.peek().map(|(_, Reverse(k))| *k)
    }

    /// Removes and returns the earliest pending event.
    pub fn pop(&mut self) -> Option<(EventKey, Event)> {
        self.heap.pop().map(|(e, Reverse(k))| (k, e))
    }

    /// Cancels a pending event; returns whether it was pending.
    pub fn cancel(&mut self, event: &Event) -> bool {
        self.heap.remove(event).is_some()
    }

    /// How many events are pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_class_then_insertion() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Event::JobSubmit(JobId(1)));
        q.push(SimTime(5), Event::JobEnd(JobId(2)));
        q.push(SimTime(3), Event::JobEnd(JobId(3)));
        q.push(SimTime(5), Event::JobEnd(JobId(4)));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Event::JobEnd(JobId(3)),
                Event::JobEnd(JobId(2)),
                Event::JobEnd(JobId(4)),
                Event::JobSubmit(JobId(1)),
            ]
        );
    }

    /// At one instant, events come out in the order of `Event`'s variants, whatever the
    /// order they were pushed in.
    #[test]
    fn one_instant_follows_the_variants_order() {
        let mut q = EventQueue::default();
        let pushed = [
            Event::JobSubmit(JobId(0)),
            Event::VnodeDown(VnodeId(1)),
            Event::VnodeUp(VnodeId(2)),
            Event::Wakeup,
            Event::ReservationStart(0),
            Event::ReservationEnd(1),
            Event::JobEnd(JobId(3)),
        ];
        for e in pushed {
            q.push(SimTime(7), e);
        }
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let mut expected = pushed.to_vec();
        expected.reverse();
        assert_eq!(order, expected);
        // The derived order, which sorts the outage list, is the same.
        let mut sorted = pushed.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, expected);
    }

    #[test]
    fn cancelled_event_never_pops() {
        let mut q = EventQueue::default();
        q.push(SimTime(1), Event::JobEnd(JobId(0)));
        q.push(SimTime(2), Event::JobEnd(JobId(1)));
        assert!(q.cancel(&Event::JobEnd(JobId(0))));
        assert!(!q.cancel(&Event::JobEnd(JobId(0))));
        assert_eq!(
            q.pop().map(|(k, e)| (k.time, e)),
            Some((SimTime(2), Event::JobEnd(JobId(1))))
        );
        assert!(q.is_empty());
    }
}
