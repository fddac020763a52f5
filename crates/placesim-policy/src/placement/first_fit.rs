//! First fit over vnodes in cluster order, as PBS places chunks inside a set.

use placesim_core::{
    Allocation, Arrangement, ConsumableIdx, PlacementPolicy, Request, Scratch, Sharing, StateView,
    VnodeId,
};

/// Places chunk complexes in select order, each chunk on the first eligible vnode (in cluster
/// order) that can hold it, with no backtracking: the greedy single pass PBS makes.
///
/// Under `place=free` several chunks may share a vnode while amounts allow; `scatter` allows one
/// chunk per host, `vscatter` one per vnode. Under `excl` a chosen vnode must hold no other job.
#[derive(Debug, Clone, Default)]
pub struct FirstFit {
    /// Per vnode: the position in the allocation being built, valid when the stamp matches.
    slot: Vec<u32>,
    slot_stamp: Vec<u32>,
    /// Per host: whether the allocation being built already uses it, valid when stamped.
    host_stamp: Vec<u32>,
    generation: u32,
    totals: Vec<u64>,
}

impl FirstFit {
    fn begin(&mut self, n_vnodes: usize, n_hosts: usize) {
        if self.slot.len() != n_vnodes || self.host_stamp.len() != n_hosts {
            self.slot = vec![0; n_vnodes];
            self.slot_stamp = vec![0; n_vnodes];
            self.host_stamp = vec![0; n_hosts];
            self.generation = 0;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slot_stamp.fill(0);
            self.host_stamp.fill(0);
            self.generation = 1;
        }
    }
}

impl PlacementPolicy for FirstFit {
    fn name(&self) -> String {
        "first-fit".to_owned()
    }

    /// Exact for `place=free:shared` requests whose chunks each need one ncpu and nothing
    /// else, while no vnode is held exclusively: every vnode with a free ncpu is then eligible
    /// and can take a chunk, so N chunks fit exactly when N ncpus are free.
    fn fits_by_totals(&self, request: &Request, view: &Scratch<'_>) -> bool {
        request.arrangement == Arrangement::Free
            && request.sharing == Sharing::Shared
            && view.exclusive_vnodes() == 0
            && request.chunks.iter().all(|ch| {
                ch.amounts.iter().enumerate().all(|(c, &a)| {
                    if c == ConsumableIdx::NCPUS.index() {
                        a == 1
                    } else {
                        a == 0
                    }
                })
            })
    }

    fn place(&mut self, request: &Request, view: &Scratch<'_>) -> Option<Allocation> {
        // The aggregate check first: it rejects most jobs that cannot start in O(consumables).
        request.totals_into(&mut self.totals);
        for (c, &need) in self.totals.iter().enumerate() {
            if need > view.free_total(ConsumableIdx(c as u8)) {
                return None;
            }
        }
        let cluster = view.cluster();
        let n_cons = cluster.resources().n_consumables();
        self.begin(cluster.n_vnodes(), cluster.hosts().len());
        let generation = self.generation;
        // At most one part per chunk: reserve that (capped) so starting a job does not regrow.
        let max_parts =
            (self.totals[ConsumableIdx::NCPUS.index()] as usize).clamp(1, cluster.n_vnodes());
        let mut alloc = Allocation {
            vnodes: Vec::with_capacity(max_parts),
            amounts: Vec::with_capacity(max_parts * n_cons),
            sharing: request.sharing,
        };
        for chunk in &request.chunks {
            let mut remaining = chunk.count;
            for idx in view.eligible().iter() {
                if remaining == 0 {
                    break;
                }
                let v = VnodeId::from_index(idx);
                let taken_here =
                    (self.slot_stamp[idx] == generation).then(|| self.slot[idx] as usize);
                match request.arrangement {
                    Arrangement::Free => {}
                    Arrangement::VScatter => {
                        if taken_here.is_some() {
                            continue;
                        }
                    }
                    Arrangement::Scatter => {
                        if self.host_stamp[cluster.vnode(v).host.index()] == generation {
                            continue;
                        }
                    }
                }
                if request.sharing == Sharing::Excl && view.n_jobs(v) > 0 {
                    continue;
                }
                // How many chunks of this shape still fit on v, given what this job took there.
                let mut fit = u64::from(remaining);
                for (c, &amount) in chunk.amounts.iter().enumerate() {
                    if amount == 0 {
                        continue;
                    }
                    let mut free = view.free(v, ConsumableIdx(c as u8));
                    if let Some(pos) = taken_here {
                        free -= alloc.amounts[pos * n_cons + c];
                    }
                    // Most chunks need one unit of a resource: skip the division then.
                    fit = fit.min(if amount == 1 { free } else { free / amount });
                }
                if request.arrangement != Arrangement::Free {
                    fit = fit.min(1);
                }
                if fit == 0 {
                    continue;
                }
                let n = fit as u32;
                remaining -= n;
                match taken_here {
                    Some(pos) => {
                        for (c, &amount) in chunk.amounts.iter().enumerate() {
                            alloc.amounts[pos * n_cons + c] += u64::from(n) * amount;
                        }
                    }
                    None => {
                        self.slot[idx] = alloc.vnodes.len() as u32;
                        self.slot_stamp[idx] = generation;
                        alloc.vnodes.push(v);
                        alloc
                            .amounts
                            .extend(chunk.amounts.iter().map(|&a| u64::from(n) * a));
                    }
                }
                if request.arrangement == Arrangement::Scatter {
                    self.host_stamp[cluster.vnode(v).host.index()] = generation;
                }
            }
            if remaining > 0 {
                return None;
            }
        }
        Some(alloc)
    }
}
