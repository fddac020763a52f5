//! The kernel's invariant checks (`--check-invariants`, and every debug build): kept apart
//! from the state they check, so that a bug in the state's own accounting shows.

use crate::cluster::Cluster;
use crate::ids::{JobId, VnodeId};
use crate::resource::ConsumableIdx;
use crate::state::{Allocation, ClusterState, StateView};
use crate::time::SimTime;

/// How a running job stops, for the check that every job ends exactly once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// For good: finished, killed or failed.
    Ended,
    /// Back to the queue, to start again later.
    Requeued,
}

/// An independent tally of what is held on each vnode, with per-job start and end counts.
#[derive(Debug, Clone)]
pub(crate) struct Invariants {
    n_cons: usize,
    /// Per vnode × consumable: the amount held by running jobs and outages.
    held: Vec<u64>,
    /// Per job: whether it is running, and how often it ended.
    running: Vec<bool>,
    ends: Vec<u32>,
    clock: SimTime,
}

impl Invariants {
    pub(crate) fn new(cluster: &Cluster, n_jobs: usize) -> Invariants {
        let n_cons = cluster.resources().n_consumables();
        Invariants {
            n_cons,
            held: vec![0; cluster.n_vnodes() * n_cons],
            running: vec![false; n_jobs],
            ends: vec![0; n_jobs],
            clock: SimTime::ZERO,
        }
    }

    /// The clock moves to `now`: it must not go back.
    pub(crate) fn tick(&mut self, now: SimTime) -> Result<(), String> {
        if now < self.clock {
            return Err(format!(
                "the clock ran backwards from {} to {now}",
                self.clock
            ));
        }
        self.clock = now;
        Ok(())
    }

    /// Job `job` (submitted at `submit`) starts now on `allocation`, already applied to
    /// `state`: not before its submit, not twice at once, and no vnode held beyond capacity,
    /// the state's free amounts agreeing with this tally.
    pub(crate) fn start(
        &mut self,
        state: &ClusterState,
        job: JobId,
        submit: SimTime,
        allocation: &Allocation,
    ) -> Result<(), String> {
        if self.clock < submit {
            return Err(format!("job {job} started before its submit at {submit}"));
        }
        if std::mem::replace(&mut self.running[job.index()], true) {
            return Err(format!("job {job} started while running"));
        }
        self.take(state, allocation, &format!("job {job}"))
    }

    /// Job `job` stops running, for good or to be requeued, and gives back `allocation`,
    /// already released in `state`.
    /// Job `job` starts inside a reservation: not before its submit, not twice at once. What
    /// it holds is the reservation's, already counted.
    pub(crate) fn start_inside(&mut self, job: JobId, submit: SimTime) -> Result<(), String> {
        if self.clock < submit {
            return Err(format!("job {job} started before its submit at {submit}"));
        }
        if std::mem::replace(&mut self.running[job.index()], true) {
            return Err(format!("job {job} started while running"));
        }
        Ok(())
    }

    /// Job `job`, running inside a reservation, ended: once only.
    pub(crate) fn end_inside(&mut self, job: JobId) -> Result<(), String> {
        if !std::mem::replace(&mut self.running[job.index()], false) {
            return Err(format!("job {job} stopped without running"));
        }
        self.ends[job.index()] += 1;
        if self.ends[job.index()] > 1 {
            return Err(format!("job {job} ended twice"));
        }
        Ok(())
    }

    pub(crate) fn stop(
        &mut self,
        state: &ClusterState,
        job: JobId,
        allocation: &Allocation,
        stop: Stop,
    ) -> Result<(), String> {
        if !std::mem::replace(&mut self.running[job.index()], false) {
            return Err(format!("job {job} stopped without running"));
        }
        if stop == Stop::Ended {
            self.ends[job.index()] += 1;
            if self.ends[job.index()] > 1 {
                return Err(format!("job {job} ended twice"));
            }
        }
        self.give(state, allocation)
    }

    /// An outage (all of a vnode) or a site reservation takes `allocation`, already applied
    /// to `state`; `holder` names which, for the message.
    pub(crate) fn take(
        &mut self,
        state: &ClusterState,
        allocation: &Allocation,
        holder: &str,
    ) -> Result<(), String> {
        for (v, amounts) in allocation.parts(self.n_cons) {
            for (c, &a) in amounts.iter().enumerate() {
                self.held[v.index() * self.n_cons + c] += a;
            }
            self.check_vnode(state, v, holder)?;
        }
        Ok(())
    }

    /// What `allocation` held is given back, already in `state`.
    pub(crate) fn give(
        &mut self,
        state: &ClusterState,
        allocation: &Allocation,
    ) -> Result<(), String> {
        for (v, amounts) in allocation.parts(self.n_cons) {
            for (c, &a) in amounts.iter().enumerate() {
                let slot = &mut self.held[v.index() * self.n_cons + c];
                *slot = slot.checked_sub(a).ok_or_else(|| {
                    format!(
                        "vnode {} gave back more of consumable {c} than it held",
                        state.cluster().vnode(v).name()
                    )
                })?;
            }
            self.check_vnode(state, v, "a release")?;
        }
        Ok(())
    }

    fn check_vnode(&self, state: &ClusterState, v: VnodeId, holder: &str) -> Result<(), String> {
        let cluster = state.cluster();
        let capacity = cluster.capacity(v);
        for (c, &cap) in capacity.iter().enumerate() {
            // A shared pool is held by what every member's jobs hold of it.
            let held = match cluster.pool_of(v, ConsumableIdx(c as u8)) {
                Some(pool) => pool
                    .members
                    .iter()
                    .map(|m| self.held[m.index() * self.n_cons + c])
                    .sum(),
                None => self.held[v.index() * self.n_cons + c],
            };
            if held > cap {
                return Err(format!(
                    "vnode {} oversubscribed by {holder}: consumable {c} holds {held} of {cap}",
                    state.cluster().vnode(v).name()
                ));
            }
            let free = state.free(v, ConsumableIdx(c as u8));
            if free != cap - held {
                return Err(format!(
                    "vnode {}: the state says {free} of consumable {c} free, the jobs on it leave {}",
                    state.cluster().vnode(v).name(),
                    cap - held
                ));
            }
        }
        Ok(())
    }

    /// At the end of the run: every job ended exactly once, or never started (`waiting`: left
    /// in the queue, or refused at submission).
    pub(crate) fn finish(&self, waiting: &[JobId]) -> Result<(), String> {
        let mut left = vec![false; self.ends.len()];
        for &j in waiting {
            left[j.index()] = true;
        }
        for (i, (&ends, &running)) in self.ends.iter().zip(&self.running).enumerate() {
            let expected = u32::from(!left[i]);
            if running || ends != expected {
                return Err(format!(
                    "job {} ended {ends} times{} at the end of the run",
                    JobId::from_index(i),
                    if left[i] {
                        ", though still waiting"
                    } else {
                        ""
                    }
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::ClusterBuilder;
    use crate::request::Sharing;
    use crate::resource::ResourceDefs;

    fn two_vnodes() -> ClusterState {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let h = b.add_host("h");
        for name in ["a", "b"] {
            b.add_vnode(name, h, 1.0, &[4, 0, 0], Vec::new()).unwrap();
        }
        ClusterState::new(b.build().unwrap())
    }

    fn on(v: u32, ncpus: u64) -> Allocation {
        let mut a = Allocation::new(Sharing::Shared);
        a.add(VnodeId(v), &[ncpus, 0, 0]);
        a
    }

    /// Each check names what broke, with the vnode, amounts or job involved.
    #[test]
    fn each_broken_invariant_is_named() {
        let mut state = two_vnodes();
        let mut inv = Invariants::new(state.cluster(), 3);
        inv.tick(SimTime(10)).unwrap();
        assert_eq!(
            inv.tick(SimTime(9)),
            Err("the clock ran backwards from 10s to 9s".to_owned())
        );
        assert_eq!(
            inv.start(&state, JobId(0), SimTime(11), &on(0, 1)),
            Err("job 0 started before its submit at 11s".to_owned())
        );
        // The state took 3 ncpus on a, but the job's allocation says 2: the tally disagrees.
        state.allocate(&on(0, 3)).unwrap();
        assert_eq!(
            inv.start(&state, JobId(1), SimTime(0), &on(0, 2)),
            Err(
                "vnode a: the state says 1 of consumable 0 free, the jobs on it leave 2".to_owned()
            )
        );
        let mut inv = Invariants::new(state.cluster(), 3);
        inv.start(&state, JobId(1), SimTime(0), &on(0, 3)).unwrap();
        assert_eq!(
            inv.start(&state, JobId(1), SimTime(0), &on(0, 3)),
            Err("job 1 started while running".to_owned())
        );
        // More held than the vnode has (whatever the state says).
        assert_eq!(
            inv.take(&state, &on(0, 2), "job 2"),
            Err("vnode a oversubscribed by job 2: consumable 0 holds 5 of 4".to_owned())
        );
        let mut inv = Invariants::new(state.cluster(), 3);
        inv.start(&state, JobId(0), SimTime(0), &on(0, 3)).unwrap();
        state.release(&on(0, 3));
        inv.stop(&state, JobId(0), &on(0, 3), Stop::Ended).unwrap();
        assert_eq!(
            inv.stop(&state, JobId(0), &on(0, 3), Stop::Ended),
            Err("job 0 stopped without running".to_owned())
        );
        assert_eq!(
            inv.finish(&[JobId(1)]),
            Err("job 2 ended 0 times at the end of the run".to_owned())
        );
        assert_eq!(inv.finish(&[JobId(1), JobId(2)]), Ok(()));
        assert_eq!(
            inv.finish(&[JobId(0), JobId(1), JobId(2)]),
            Err("job 0 ended 1 times, though still waiting at the end of the run".to_owned())
        );
    }
}
