//! Whether a scenario's site reservations fit at their starts beside each other and the jobs
//! running when the run begins. The plain check of one reservation ([`misfit_at_start`])
//! walks everything that holds vnodes then; checking every reservation so is quadratic in
//! their number, and a standing reservation has up to three years of occurrences (26,280
//! hourly ones took 3.7 s to load). [`first_misfit`] sweeps the reservations in start order
//! with a tally per vnode of what is held, which tells in time linear in their parts which
//! reservations may not fit; only those get the plain check, whose findings (the message's
//! words) are the same as checking all in turn.

use crate::RunningAtStart;
use placesim_core::{Cluster, SiteReservation, VnodeId};
use std::collections::HashMap;

/// Something holding vnodes at a reservation's start besides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A reservation, by its place in the list checked.
    Reservation(usize),
    /// A running job, by its place in the list checked.
    Running(usize),
}

/// Why a reservation does not fit at its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Misfit {
    /// It would share `vnode` with `with` (the first holder there), and one of them holds
    /// it exclusively.
    Shared { vnode: VnodeId, with: Holder },
    /// It needs `asked` of the consumable at `consumable` on `vnode`, which has `capacity`;
    /// `by` (one entry per part held there) hold `held` of it then.
    Short {
        vnode: VnodeId,
        consumable: usize,
        asked: u64,
        capacity: u64,
        by: Vec<Holder>,
        held: u64,
    },
}

/// The plain check of `made[i]` at its start: on each of its vnodes, in its order, what the
/// other reservations open then (`start <= at < end`) and the `running` jobs not ended by
/// then hold; it may share no vnode with an exclusive holder (nor any, if exclusive itself),
/// and each consumable it needs must fit beside theirs. `running` are the jobs outside any
/// reservation (one inside holds what its reservation holds).
pub(crate) fn misfit_at_start(
    i: usize,
    made: &[&SiteReservation],
    running: &[&RunningAtStart],
    cluster: &Cluster,
    n_consumables: usize,
) -> Option<Misfit> {
    let r = made[i];
    let at = r.start;
    let reservations = made
        .iter()
        .enumerate()
        .filter(|&(k, o)| k != i && o.start <= at && at < o.end);
    let jobs = running
        .iter()
        .enumerate()
        .filter(|(_, j)| j.end_s > at.as_secs());
    for (v, amounts) in r.allocation.parts(n_consumables) {
        let mut on_v: Vec<(Holder, bool, &[u64])> = Vec::new();
        for (k, o) in reservations.clone() {
            let exclusive = o.allocation.sharing.is_exclusive();
            on_v.extend(
                o.allocation
                    .parts(n_consumables)
                    .filter(|&(w, _)| w == v)
                    .map(|(_, a)| (Holder::Reservation(k), exclusive, a)),
            );
        }
        for (k, j) in jobs.clone() {
            on_v.extend(
                j.vnodes
                    .iter()
                    .filter(|(w, _)| *w == v)
                    .map(|(_, a)| (Holder::Running(k), false, a.as_slice())),
            );
        }
        if let Some(&(first, _, _)) = on_v.first()
            && (r.allocation.sharing.is_exclusive() || on_v.iter().any(|h| h.1))
        {
            return Some(Misfit::Shared {
                vnode: v,
                with: first,
            });
        }
        for (c, (&asked, &capacity)) in amounts.iter().zip(cluster.capacity(v)).enumerate() {
            let held = on_v
                .iter()
                .map(|(_, _, a)| a.get(c).copied().unwrap_or(0))
                .fold(0u64, u64::saturating_add);
            if held.saturating_add(asked) > capacity {
                return Some(Misfit::Short {
                    vnode: v,
                    consumable: c,
                    asked,
                    capacity,
                    by: on_v.iter().map(|&(h, _, _)| h).collect(),
                    held,
                });
            }
        }
    }
    None
}

/// What is held on each vnode at one instant of the sweep: the amounts (exact: a sum of
/// any number of amounts fits in 128 bits), and how many parts, and exclusive parts, hold it.
struct Tally {
    n_consumables: usize,
    amounts: Vec<u128>,
    parts: Vec<u32>,
    exclusive: Vec<u32>,
}

impl Tally {
    fn new(n_vnodes: usize, n_consumables: usize) -> Self {
        Tally {
            n_consumables,
            amounts: vec![0; n_vnodes * n_consumables],
            parts: vec![0; n_vnodes],
            exclusive: vec![0; n_vnodes],
        }
    }

    /// A part on `v` of `amounts` joins (`joins`) or leaves. A vnode outside the cluster
    /// holds nothing the check reads.
    fn change(&mut self, v: VnodeId, amounts: &[u64], exclusive: bool, joins: bool) {
        let v = v.index();
        let Some(parts) = self.parts.get_mut(v) else {
            return;
        };
        let step = |n: &mut u32| *n = if joins { *n + 1 } else { *n - 1 };
        step(parts);
        if exclusive {
            step(&mut self.exclusive[v]);
        }
        let held = &mut self.amounts[v * self.n_consumables..(v + 1) * self.n_consumables];
        for (h, &a) in held.iter_mut().zip(amounts) {
            *h = if joins {
                *h + u128::from(a)
            } else {
                *h - u128::from(a)
            };
        }
    }

    fn reservation(&mut self, r: &SiteReservation, n_consumables: usize, joins: bool) {
        let exclusive = r.allocation.sharing.is_exclusive();
        for (v, a) in r.allocation.parts(n_consumables) {
            self.change(v, a, exclusive, joins);
        }
    }

    fn job(&mut self, j: &RunningAtStart, joins: bool) {
        for (v, a) in &j.vnodes {
            self.change(*v, a, false, joins);
        }
    }

    /// Whether `r`, whose own parts are not in the tally, finds a vnode it may not share or
    /// an amount that does not fit, as [`misfit_at_start`] would.
    fn rejects(&self, r: &SiteReservation, cluster: &Cluster, n_consumables: usize) -> bool {
        let exclusive = r.allocation.sharing.is_exclusive();
        r.allocation.parts(n_consumables).any(|(v, amounts)| {
            let i = v.index();
            let held = &self.amounts[i * self.n_consumables..(i + 1) * self.n_consumables];
            (self.parts[i] > 0 && (exclusive || self.exclusive[i] > 0))
                || amounts.iter().zip(cluster.capacity(v)).zip(held).any(
                    |((&asked, &capacity), &held)| {
                        // As the plain check adds: saturating, at u64's most.
                        let held = u64::try_from(held).unwrap_or(u64::MAX);
                        held.saturating_add(asked) > capacity
                    },
                )
        })
    }
}

/// The first of `made` (in its order) that does not fit at its start, with why: what
/// checking each in turn by [`misfit_at_start`] finds. A sweep over the reservations' starts,
/// with what opens by then added to a per-vnode tally and what has ended by then taken out,
/// tells which may not fit; the plain check runs on those only.
pub(crate) fn first_misfit(
    made: &[&SiteReservation],
    running: &[&RunningAtStart],
    cluster: &Cluster,
    n_consumables: usize,
) -> Option<(usize, Misfit)> {
    if made.is_empty() {
        return None;
    }
    let mut tally = Tally::new(cluster.n_vnodes(), n_consumables);
    let mut by_start: Vec<usize> = (0..made.len()).collect();
    by_start.sort_by_key(|&i| made[i].start);
    let mut by_end: Vec<usize> = (0..made.len()).collect();
    by_end.sort_by_key(|&i| made[i].end);
    let mut jobs_by_end: Vec<usize> = (0..running.len()).collect();
    jobs_by_end.sort_by_key(|&j| running[j].end_s);
    for j in running {
        tally.job(j, true);
    }
    // How many holders the tally has; and the one reservation open with nothing else held,
    // kept out of the tally until something joins it. A standing reservation's occurrences
    // never overlap one another: alone on the machine, each is that one, checked against the
    // capacities only, once per allocation its series shares, where adding and taking out
    // each occurrence's parts cost its vnodes each time.
    let mut holders = running.len();
    let mut alone: Option<usize> = None;
    let mut fits_alone: HashMap<*const placesim_core::Allocation, bool> = HashMap::new();
    let (mut opened, mut ended, mut jobs_ended) = (0, 0, 0);
    let mut rejected = Vec::new();
    while opened < by_start.len() {
        let at = made[by_start[opened]].start;
        // What has ended by `at` leaves first: it started before `at`, so it is there.
        while let Some(&i) = by_end.get(ended).filter(|&&i| made[i].end <= at) {
            if alone == Some(i) {
                alone = None;
            } else {
                tally.reservation(made[i], n_consumables, false);
                holders -= 1;
            }
            ended += 1;
        }
        while let Some(&j) = jobs_ended_by(&jobs_by_end, jobs_ended, running, at.as_secs()) {
            tally.job(running[j], false);
            holders -= 1;
            jobs_ended += 1;
        }
        let from = opened;
        while by_start.get(opened).is_some_and(|&i| made[i].start == at) {
            opened += 1;
        }
        let starting = &by_start[from..opened];
        if let [i] = *starting
            && holders == 0
            && alone.is_none()
        {
            let fits = *fits_alone
                .entry(std::sync::Arc::as_ptr(&made[i].allocation))
                .or_insert_with(|| !tally.rejects(made[i], cluster, n_consumables));
            if !fits {
                rejected.push(i);
            }
            alone = Some(i);
            continue;
        }
        if let Some(i) = alone.take() {
            tally.reservation(made[i], n_consumables, true);
            holders += 1;
        }
        for &i in starting {
            tally.reservation(made[i], n_consumables, true);
            holders += 1;
        }
        // Those starting at `at` are open now: each is checked against the rest.
        for &i in starting {
            tally.reservation(made[i], n_consumables, false);
            if tally.rejects(made[i], cluster, n_consumables) {
                rejected.push(i);
            }
            tally.reservation(made[i], n_consumables, true);
        }
    }
    rejected.sort_unstable();
    rejected.into_iter().find_map(|i| {
        let misfit = misfit_at_start(i, made, running, cluster, n_consumables);
        debug_assert!(
            misfit.is_some(),
            "the sweep rejects what the plain check does"
        );
        misfit.map(|m| (i, m))
    })
}

/// The next job of `jobs_by_end` from `next` on if it has ended by `at_s`.
fn jobs_ended_by<'a>(
    jobs_by_end: &'a [usize],
    next: usize,
    running: &[&RunningAtStart],
    at_s: u64,
) -> Option<&'a usize> {
    jobs_by_end.get(next).filter(|&&j| running[j].end_s <= at_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use placesim_core::{Allocation, Sharing, SimTime};
    use rand::{RngExt, SeedableRng};
    use std::sync::Arc;

    fn running(vnodes: crate::VnodeAmounts, end_s: u64) -> RunningAtStart {
        RunningAtStart {
            id: 0,
            line: 0,
            vnodes,
            exec_vnode: String::new(),
            end_s,
            estimated_end_s: end_s,
            user: None,
            group: None,
            project: None,
            queue: None,
        }
    }

    /// The sweep finds what checking every reservation in turn finds, on random windows,
    /// vnodes, amounts and sharing, with jobs running at the start.
    #[test]
    fn the_sweep_finds_what_the_plain_check_of_each_finds() {
        let cluster = Cluster::homogeneous(24, 4).expect("a cluster");
        let n_cons = cluster.resources().n_consumables();
        let mut found = [0usize; 3];
        for seed in 0..4000u64 {
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let amounts = |rng: &mut rand_pcg::Pcg64, most: u64| {
                let mut a = vec![0u64; n_cons];
                a[0] = rng.random_range(1..=most);
                a
            };
            let mut reservations: Vec<SiteReservation> = (0..rng.random_range(1..10))
                .map(|k| {
                    let sharing = if rng.random_bool(0.2) {
                        Sharing::Excl
                    } else {
                        Sharing::Shared
                    };
                    let parts: Vec<(VnodeId, Vec<u64>)> = (0..rng.random_range(1..4))
                        .map(|_| (VnodeId(rng.random_range(0..6)), amounts(&mut rng, 3)))
                        .collect();
                    let start = rng.random_range(0..40);
                    SiteReservation {
                        name: Arc::from(format!("R{k}")),
                        start: SimTime(start),
                        end: SimTime(start + rng.random_range(1..20)),
                        allocation: Arc::new(Allocation::from_parts(
                            sharing,
                            parts.iter().map(|(v, a)| (*v, a.as_slice())),
                        )),
                        queue: None,
                        access: Default::default(),
                    }
                })
                .collect();
            // A standing series: occurrences of one allocation, none overlapping another.
            if rng.random_bool(0.5) {
                let first = reservations[0].clone();
                let length = first.end.0 - first.start.0;
                let period = length + rng.random_range(0..10);
                for k in 1..rng.random_range(2..6) {
                    reservations.push(SiteReservation {
                        start: SimTime(first.start.0 + k * period),
                        end: SimTime(first.end.0 + k * period),
                        ..first.clone()
                    });
                }
            }
            let jobs: Vec<RunningAtStart> = (0..rng.random_range(0..4))
                .map(|_| {
                    let vnodes = (0..rng.random_range(1..3))
                        .map(|_| (VnodeId(rng.random_range(0..6)), amounts(&mut rng, 2)))
                        .collect();
                    running(vnodes, rng.random_range(0..50))
                })
                .collect();
            let made: Vec<&SiteReservation> = reservations.iter().collect();
            let jobs: Vec<&RunningAtStart> = jobs.iter().collect();
            let plain = (0..made.len())
                .find_map(|i| misfit_at_start(i, &made, &jobs, &cluster, n_cons).map(|m| (i, m)));
            let swept = first_misfit(&made, &jobs, &cluster, n_cons);
            assert_eq!(swept, plain, "seed {seed}");
            found[match plain {
                None => 0,
                Some((_, Misfit::Shared { .. })) => 1,
                Some((_, Misfit::Short { .. })) => 2,
            }] += 1;
        }
        // Each outcome comes up often enough to have been compared.
        assert!(found.iter().all(|&n| n > 200), "outcomes {found:?}");
    }
}
