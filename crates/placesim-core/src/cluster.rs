//! The static description of a cluster: hosts, vnodes, their capacities and properties.
//!
//! A `Cluster` never changes during a run; what changes (free amounts, which jobs hold which
//! vnodes) lives in [`crate::state::ClusterState`].

use crate::ids::{HostId, ResourceId, VnodeId};
use crate::resource::{AttrValue, ConsumableIdx, ResourceDefs};

/// One vnode: the unit that chunks are placed on.
#[derive(Debug, Clone, PartialEq)]
pub struct Vnode {
    /// Its unique name, held as the value of its `vnode` attribute, which is always its
    /// name: [`Vnode::attr`] answers `vnode`, and `host` when the host has the vnode's
    /// name (when `attrs` has no `host` of its own), from here. A machine of one vnode per
    /// host (CEA-Curie's 93,312) held each name three times more before (both attributes,
    /// and the list holding them), about 150 bytes a vnode.
    name: AttrValue,
    /// The host it belongs to.
    pub host: HostId,
    /// Relative speed; 1.0 is the reference. Used by runtime models and MINLOSS.
    pub speed: f64,
    /// Non-consumable properties, sorted by resource id, at most one per resource: all but
    /// `vnode`, and `host` only when the host's name is not the vnode's.
    attrs: Vec<(ResourceId, AttrValue)>,
}

impl Vnode {
    /// Its unique name.
    pub fn name(&self) -> &str {
        match &self.name {
            AttrValue::Str(name) => name,
            // `ClusterBuilder::add_vnode`, the only maker of vnodes, stores a string.
            _ => "",
        }
    }

    /// The value of non-consumable `res` on this vnode, if set. `host` and `vnode` are
    /// always set: to the names of its host and of itself.
    pub fn attr(&self, res: ResourceId) -> Option<&AttrValue> {
        if res == ResourceDefs::VNODE {
            return Some(&self.name);
        }
        match self.attrs.binary_search_by_key(&res, |(id, _)| *id) {
            Ok(i) => Some(&self.attrs[i].1),
            // A host named otherwise is kept in `attrs`.
            Err(_) if res == ResourceDefs::HOST => Some(&self.name),
            Err(_) => None,
        }
    }

    /// Its properties as set on it, sorted by resource id, without the `host` and `vnode`
    /// names [`Vnode::attr`] gives (`host` is among them when it differs from the vnode's).
    pub fn explicit_attrs(&self) -> &[(ResourceId, AttrValue)] {
        &self.attrs
    }
}

/// The most vnodes a cluster may have: generous for any site (the largest machines have some
/// hundred thousand nodes), and a bound that keeps a typo such as `count = 1000000000` or
/// `--procs 100000000000 --procs-per-node 1` from taking all the memory there is. Checked
/// before any vnode is made.
pub const MAX_VNODES: usize = 1_000_000;

/// Error assembling a cluster.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// Two vnodes share a name.
    #[error("vnode name `{0}` is used twice")]
    DuplicateVnode(String),
    /// The capacity vector does not match the resource definitions.
    #[error("vnode `{vnode}` has {got} consumable amounts, expected {expected}")]
    CapacityLength {
        /// The vnode.
        vnode: String,
        /// Amounts given.
        got: usize,
        /// Consumables defined.
        expected: usize,
    },
    /// A cluster must have at least one vnode.
    #[error("a cluster needs at least one vnode")]
    Empty,
    /// More vnodes than [`MAX_VNODES`].
    #[error("{requested} vnodes is more than placesim's limit of {MAX_VNODES} vnodes in a cluster")]
    TooManyVnodes {
        /// How many were asked for.
        requested: u64,
    },
    /// An indirect resource (`@vnode`) PBS's server would refuse (`fix_indirectness`).
    #[error("{0}")]
    Indirect(String),
    /// Speeds must be positive and finite, or runtimes would be meaningless.
    #[error("vnode `{vnode}` has speed {speed}; speeds must be positive and finite")]
    BadSpeed {
        /// The vnode.
        vnode: String,
        /// The speed given.
        speed: f64,
    },
}

/// A cluster: resource definitions, hosts and vnodes in first-fit order.
///
/// It never changes once built, and every run's state, the calendars' idle copies and the
/// never-runnable check each hold one: it is shared, not copied (a cluster of 100,000 vnodes
/// is tens of megabytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    parts: std::sync::Arc<ClusterParts>,
}

/// What a [`Cluster`] holds.
#[derive(Debug, PartialEq)]
struct ClusterParts {
    resources: ResourceDefs,
    hosts: Vec<String>,
    vnodes: Vec<Vnode>,
    /// Consumable capacities, `n_consumables` per vnode, row-major.
    capacity: Vec<u64>,
    capacity_total: Vec<u64>,
    /// ncpus capacity per vnode, dense: the eligibility test reads it on every allocation.
    ncpus_capacity: Vec<u64>,
    /// The vnodes of each host, in cluster order.
    host_vnodes: HostVnodes,
    /// Consumables shared through PBS's indirect resources: each pool's members, its target
    /// first, and per vnode × consumable the pool it is in (`u32::MAX` for none); empty
    /// when no resource is indirect.
    pools: Vec<Pool>,
    pool_of: Vec<u32>,
    /// The stretches of consecutive vnodes with the same capacities: over such a stretch, a
    /// job's equal parts change every row the same way, so the state can change them as one
    /// (`ClusterState`'s whole-stretch form, issue 20).
    same_capacity: crate::stretch::StretchKeys,
    /// Each of those stretches' capacities once, by the stretch's key in `same_capacity`.
    stretch_capacity: Box<[u64]>,
}

/// Each host's vnodes, in vnode order, as one list cut at each host's end: a machine of one
/// vnode per host (CEA-Curie's 93,312) would otherwise hold a list, and an allocation, per
/// host.
#[derive(Debug, PartialEq)]
struct HostVnodes {
    vnodes: Vec<VnodeId>,
    /// Where each host's vnodes end in `vnodes`.
    ends: Vec<u32>,
}

impl HostVnodes {
    fn of(n_hosts: usize, vnodes: &[Vnode]) -> HostVnodes {
        // Counted per host, then each host's end; vnodes are placed in order, so each
        // host's list keeps vnode order.
        let mut ends = vec![0u32; n_hosts];
        for v in vnodes {
            ends[v.host.index()] += 1;
        }
        let mut total = 0;
        for end in &mut ends {
            total += *end;
            *end = total;
        }
        let mut next: Vec<u32> = std::iter::once(0)
            .chain(ends.iter().copied())
            .take(n_hosts)
            .collect();
        let mut placed = vec![VnodeId(0); vnodes.len()];
        for (i, v) in vnodes.iter().enumerate() {
            let at = &mut next[v.host.index()];
            placed[*at as usize] = VnodeId::from_index(i);
            *at += 1;
        }
        HostVnodes {
            vnodes: placed,
            ends,
        }
    }

    fn of_host(&self, h: HostId) -> &[VnodeId] {
        let end = self.ends[h.index()] as usize;
        let start = match h.index() {
            0 => 0,
            i => self.ends[i - 1] as usize,
        };
        &self.vnodes[start..end]
    }
}

/// One consumable amount shared by several vnodes (PBS's `resources_available.R = @target`,
/// reservations-and-partitions.md §7): there is one pool, the target's, and a chunk on any
/// member takes from it. Every member's row holds the pool's free amount (a mirror), so any
/// read of a member sees what the pool has; the state takes and gives on all members at once
/// and counts the pool once in its totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// The shared consumable.
    pub consumable: ConsumableIdx,
    /// The vnodes sharing it, the target (which owns the amount) first, the others in order.
    pub members: Vec<VnodeId>,
}

/// Builds a [`Cluster`] one vnode at a time.
#[derive(Debug, Clone)]
pub struct ClusterBuilder {
    resources: ResourceDefs,
    hosts: Vec<String>,
    vnodes: Vec<Vnode>,
    capacity: Vec<u64>,
    /// (pointing vnode, consumable, target), in the order given.
    indirect: Vec<(VnodeId, ConsumableIdx, VnodeId)>,
}

impl ClusterBuilder {
    /// Starts a cluster with these resource definitions.
    pub fn new(resources: ResourceDefs) -> Self {
        ClusterBuilder {
            resources,
            hosts: Vec::new(),
            vnodes: Vec::new(),
            capacity: Vec::new(),
            indirect: Vec::new(),
        }
    }

    /// Makes consumable `c` of vnode `pointing` an alias of the same on `target` (PBS's
    /// `resources_available.R = @target`): one pool, the target's, which a chunk on either
    /// takes from. Refused as PBS's server refuses it (`fix_indirectness`): the target must
    /// have the resource, and no reference may have two levels (a target that points, a
    /// vnode pointing at itself, a vnode that is a target becoming indirect); ncpus may not
    /// be shared, since a vnode's ncpus decide whether it can take a job at all.
    pub fn share(
        &mut self,
        pointing: VnodeId,
        c: ConsumableIdx,
        target: VnodeId,
    ) -> Result<(), ClusterError> {
        let n_cons = self.resources.n_consumables();
        let name = |v: VnodeId| self.vnodes[v.index()].name().to_owned();
        let resource = self
            .resources
            .consumables()
            .get(c.index())
            .map(|&id| self.resources.def(id).name.clone())
            .unwrap_or_default();
        if c == ConsumableIdx::NCPUS {
            return Err(ClusterError::Indirect(format!(
                "ncpus cannot be indirect on vnode `{}` (@{}): a vnode's own ncpus decide \
                 whether it can take a job",
                name(pointing),
                name(target)
            )));
        }
        let multi_level = pointing == target
            || self
                .indirect
                .iter()
                .any(|&(p, k, t)| k == c && (p == target || t == pointing || p == pointing));
        if multi_level {
            return Err(ClusterError::Indirect(format!(
                "invalid multi-level indirect reference for resource {resource} on vnode `{}`",
                name(pointing)
            )));
        }
        if self.capacity[target.index() * n_cons + c.index()] == 0 {
            return Err(ClusterError::Indirect(format!(
                "indirect target undefined on node for resource {resource}: `{}` has none \
                 (for `{}`)",
                name(target),
                name(pointing)
            )));
        }
        self.indirect.push((pointing, c, target));
        Ok(())
    }

    /// The resource definitions, to look up ids while adding vnodes.
    pub fn resources(&self) -> &ResourceDefs {
        &self.resources
    }

    /// Makes room for `vnodes` more vnodes, each on a host of its own at most: a caller that
    /// knows how many it adds saves the lists' growing (6 % of a scenario's building of
    /// 16,384 vnodes, with its own lists made room for too).
    pub fn reserve(&mut self, vnodes: usize) {
        self.vnodes.reserve(vnodes);
        self.hosts.reserve(vnodes);
        self.capacity
            .reserve(vnodes.saturating_mul(self.resources.n_consumables()));
    }

    /// Adds a host and returns its id.
    pub fn add_host(&mut self, name: impl Into<String>) -> HostId {
        self.hosts.push(name.into());
        HostId::from_index(self.hosts.len() - 1)
    }

    /// Adds a vnode on `host`. `capacity` has one amount per consumable, in slot order.
    /// The `host` and `vnode` attributes are filled in from the names.
    pub fn add_vnode(
        &mut self,
        name: impl Into<String>,
        host: HostId,
        speed: f64,
        capacity: &[u64],
        mut attrs: Vec<(ResourceId, AttrValue)>,
    ) -> Result<VnodeId, ClusterError> {
        let name = name.into();
        if capacity.len() != self.resources.n_consumables() {
            return Err(ClusterError::CapacityLength {
                vnode: name,
                got: capacity.len(),
                expected: self.resources.n_consumables(),
            });
        }
        if !(speed.is_finite() && speed > 0.0) {
            return Err(ClusterError::BadSpeed { vnode: name, speed });
        }
        attrs.retain(|(id, _)| *id != ResourceDefs::HOST && *id != ResourceDefs::VNODE);
        let host_name = &self.hosts[host.index()];
        if *host_name != name {
            attrs.push((ResourceDefs::HOST, AttrValue::Str(host_name.clone())));
        }
        attrs.sort_by_key(|(id, _)| *id);
        attrs.dedup_by_key(|(id, _)| *id);
        // A machine of 93,312 vnodes without attributes of its own kept spare room in each.
        attrs.shrink_to_fit();
        self.vnodes.push(Vnode {
            name: AttrValue::Str(name),
            host,
            speed,
            attrs,
        });
        self.capacity.extend_from_slice(capacity);
        Ok(VnodeId::from_index(self.vnodes.len() - 1))
    }

    /// The vnodes added so far, by name.
    pub fn vnode_ids_by_name(&self) -> std::collections::HashMap<&str, VnodeId> {
        self.vnodes
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name(), VnodeId::from_index(i)))
            .collect()
    }

    /// Gives `pointing` the value of non-consumable `res` that `target` has (PBS's indirect
    /// resource on a non-consumable: matching and placement-set keys read the target's value).
    /// `host` and `vnode` are a vnode's names, [`Vnode::attr`] answers them from those, and
    /// neither can be another's.
    pub fn copy_attr(
        &mut self,
        pointing: VnodeId,
        res: ResourceId,
        target: VnodeId,
    ) -> Result<(), ClusterError> {
        if res == ResourceDefs::HOST || res == ResourceDefs::VNODE {
            return Err(ClusterError::Indirect(format!(
                "resource {} is the name of `{}` and cannot be indirect",
                self.resources.def(res).name,
                self.vnodes[pointing.index()].name()
            )));
        }
        let Some(value) = self.vnodes[target.index()].attr(res).cloned() else {
            return Err(ClusterError::Indirect(format!(
                "indirect target undefined on node for resource {}: `{}` has none",
                self.resources.def(res).name,
                self.vnodes[target.index()].name()
            )));
        };
        let attrs = &mut self.vnodes[pointing.index()].attrs;
        attrs.retain(|(id, _)| *id != res);
        attrs.push((res, value));
        attrs.sort_by_key(|(id, _)| *id);
        Ok(())
    }

    /// Checks names and finishes the cluster.
    pub fn build(self) -> Result<Cluster, ClusterError> {
        if self.vnodes.is_empty() {
            return Err(ClusterError::Empty);
        }
        // The first name met again, in vnode order. A set of the names rather than a sort of
        // them: a hash of each name rather than about log2(vnodes) comparisons of names.
        let mut names: std::collections::HashSet<&str> =
            std::collections::HashSet::with_capacity(self.vnodes.len());
        if let Some(again) = self
            .vnodes
            .iter()
            .map(Vnode::name)
            .find(|n| !names.insert(n))
        {
            return Err(ClusterError::DuplicateVnode(again.to_owned()));
        }
        let n_cons = self.resources.n_consumables();
        let mut capacity_total = vec![0u64; n_cons];
        for row in self.capacity.chunks_exact(n_cons) {
            for (t, a) in capacity_total.iter_mut().zip(row) {
                *t += a;
            }
        }
        let ncpus_capacity = self
            .capacity
            .chunks_exact(n_cons)
            .map(|row| row[ConsumableIdx::NCPUS.index()])
            .collect();
        let host_vnodes = HostVnodes::of(self.hosts.len(), &self.vnodes);
        // Each pointing vnode mirrors its target's amount; the pool counts once in the total.
        let mut capacity = self.capacity;
        let mut pools: Vec<Pool> = Vec::new();
        let mut pool_of = Vec::new();
        if !self.indirect.is_empty() {
            pool_of = vec![u32::MAX; self.vnodes.len() * n_cons];
            for &(pointing, c, target) in &self.indirect {
                let slot = |v: VnodeId| v.index() * n_cons + c.index();
                let pool = match pool_of[slot(target)] {
                    u32::MAX => {
                        pools.push(Pool {
                            consumable: c,
                            members: vec![target],
                        });
                        let p = pools.len() as u32 - 1;
                        pool_of[slot(target)] = p;
                        p
                    }
                    p => p,
                };
                pools[pool as usize].members.push(pointing);
                pool_of[slot(pointing)] = pool;
                capacity_total[c.index()] -= capacity[slot(pointing)];
                capacity[slot(pointing)] = capacity[slot(target)];
            }
            for pool in &mut pools {
                pool.members[1..].sort_unstable();
            }
        }
        let rows: Vec<&[u64]> = capacity.chunks_exact(n_cons).collect();
        let same_capacity = crate::stretch::StretchKeys::of_values(&rows);
        // One row per stretch, in the order of the stretches' keys.
        let mut stretch_capacity = Vec::new();
        let mut v = 0;
        while v < rows.len() {
            stretch_capacity.extend_from_slice(rows[v]);
            v = same_capacity.until(v);
        }
        // The cluster is kept as built for the whole run: the room the lists grew into is
        // given back.
        let (mut hosts, mut vnodes) = (self.hosts, self.vnodes);
        hosts.shrink_to_fit();
        vnodes.shrink_to_fit();
        capacity.shrink_to_fit();
        Ok(Cluster {
            parts: std::sync::Arc::new(ClusterParts {
                host_vnodes,
                resources: self.resources,
                hosts,
                vnodes,
                capacity,
                capacity_total,
                ncpus_capacity,
                pools,
                pool_of,
                same_capacity,
                stretch_capacity: stretch_capacity.into(),
            }),
        })
    }
}

impl Cluster {
    /// The plain SWF machine: `total_ncpus` processors on single-vnode hosts of
    /// `ncpus_per_vnode` each (the last vnode takes the remainder), all of speed 1.
    pub fn homogeneous(total_ncpus: u64, ncpus_per_vnode: u64) -> Result<Cluster, ClusterError> {
        let resources = ResourceDefs::default();
        let mut capacity = vec![0u64; resources.n_consumables()];
        let mut b = ClusterBuilder::new(resources);
        let per = ncpus_per_vnode.max(1);
        let n_vnodes = total_ncpus.div_ceil(per);
        if n_vnodes > MAX_VNODES as u64 {
            return Err(ClusterError::TooManyVnodes {
                requested: n_vnodes,
            });
        }
        for i in 0..n_vnodes {
            capacity[ConsumableIdx::NCPUS.index()] = per.min(total_ncpus - i * per);
            let name = format!("node{i}");
            let host = b.add_host(name.clone());
            b.add_vnode(name, host, 1.0, &capacity, Vec::new())?;
        }
        b.build()
    }

    /// The resource definitions.
    pub fn resources(&self) -> &ResourceDefs {
        &self.parts.resources
    }

    /// The shared pools of PBS's indirect resources, if any.
    pub fn pools(&self) -> &[Pool] {
        &self.parts.pools
    }

    /// The pool `v`'s consumable `c` is in, if it is shared.
    #[inline]
    pub fn pool_of(&self, v: VnodeId, c: ConsumableIdx) -> Option<&Pool> {
        self.parts.pools.get(self.pool_index(v, c)?)
    }

    /// The index in [`Self::pools`] of the pool `v`'s consumable `c` is in, if it is shared.
    #[inline]
    pub fn pool_index(&self, v: VnodeId, c: ConsumableIdx) -> Option<usize> {
        let n_cons = self.parts.resources.n_consumables();
        let p = *self.parts.pool_of.get(v.index() * n_cons + c.index())?;
        (p != u32::MAX).then_some(p as usize)
    }

    /// All vnodes, in first-fit order.
    pub fn vnodes(&self) -> &[Vnode] {
        &self.parts.vnodes
    }

    /// One vnode.
    pub fn vnode(&self, id: VnodeId) -> &Vnode {
        &self.parts.vnodes[id.index()]
    }

    /// How many vnodes there are.
    pub fn n_vnodes(&self) -> usize {
        self.parts.vnodes.len()
    }

    /// Host names, by host id.
    pub fn hosts(&self) -> &[String] {
        &self.parts.hosts
    }

    /// The vnodes of host `h`, in cluster order: what `pack` and `exclhost` work with.
    pub fn host_vnodes(&self, h: HostId) -> &[VnodeId] {
        self.parts.host_vnodes.of_host(h)
    }

    /// The consumable capacities of `v`, one per slot.
    pub fn capacity(&self, v: VnodeId) -> &[u64] {
        let n = self.parts.resources.n_consumables();
        &self.parts.capacity[v.index() * n..(v.index() + 1) * n]
    }

    /// The consumable capacities of `v`, as [`Self::capacity`], read from the one copy its
    /// stretch of vnodes with the same capacities keeps ([`Self::same_capacity_until`]): a
    /// loop that asks once per run of a big cluster then reads a few rows that stay in cache,
    /// not a row per vnode of the capacity list.
    #[inline]
    pub fn stretch_capacity(&self, v: VnodeId) -> &[u64] {
        let n = self.parts.resources.n_consumables();
        match self.parts.same_capacity.key(v.index()) {
            Some(stretch) => {
                let at = stretch as usize * n;
                &self.parts.stretch_capacity[at..at + n]
            }
            None => self.capacity(v),
        }
    }

    /// Where the stretch of consecutive vnodes with the same capacities as vnode index `v`
    /// ends (the first later index with other capacities, or the number of vnodes).
    #[inline]
    pub fn same_capacity_until(&self, v: usize) -> usize {
        self.parts.same_capacity.until(v)
    }

    /// The ncpus capacity of `v`.
    #[inline]
    pub fn ncpus_capacity(&self, v: VnodeId) -> u64 {
        self.parts.ncpus_capacity[v.index()]
    }

    /// Every vnode's ncpus capacity, by vnode index: what a loop over a run of vnodes reads.
    pub fn ncpus_capacities(&self) -> &[u64] {
        &self.parts.ncpus_capacity
    }

    /// The capacity of one consumable summed over all vnodes.
    pub fn capacity_total(&self, c: ConsumableIdx) -> u64 {
        self.parts.capacity_total[c.index()]
    }

    /// The sets that grouping by non-consumable `res` creates among `vnodes`, as PBS builds a
    /// placement-set series: one set per value, in order of first appearance; a string_array
    /// vnode joins the set of each of its values. Vnodes without the resource form the set of
    /// the empty value (PBS's `res=""`), last, unless `only_explicit` is set.
    pub fn sets_by(
        &self,
        res: ResourceId,
        vnodes: impl IntoIterator<Item = VnodeId>,
        only_explicit: bool,
    ) -> Vec<(String, Vec<VnodeId>)> {
        let mut sets: Vec<(String, Vec<VnodeId>)> = Vec::new();
        let mut unset = Vec::new();
        let mut last = None;
        for v in vnodes {
            let values = self
                .vnode(v)
                .attr(res)
                .map_or(&[][..], AttrValue::string_values);
            if values.is_empty() {
                unset.push(v);
            }
            for value in values {
                let set = index_near(
                    &mut sets,
                    last,
                    |(name, _)| name == value,
                    || (value.clone(), Vec::new()),
                );
                sets[set].1.push(v);
                last = Some(set);
            }
        }
        if !unset.is_empty() && !only_explicit {
            sets.push((String::new(), unset));
        }
        sets
    }

    /// The vnode named `name`.
    pub fn vnode_by_name(&self, name: &str) -> Option<VnodeId> {
        self.parts
            .vnodes
            .iter()
            .position(|v| v.name() == name)
            .map(VnodeId::from_index)
    }
}

/// The index in `items` of the one item `is` holds for, made by `new` and pushed when there
/// is none, trying `last` first: neighbouring vnodes are mostly in one set, so grouping a
/// cluster's vnodes by name this way spares most searches of every set's name (64 names for
/// each of psets-bench's 16,384 vnodes). `is` holds for one item at most (the names are
/// distinct), so the answer is the search's.
pub(crate) fn index_near<T>(
    items: &mut Vec<T>,
    last: Option<usize>,
    is: impl Fn(&T) -> bool,
    new: impl FnOnce() -> T,
) -> usize {
    let found = last
        .filter(|&i| items.get(i).is_some_and(&is))
        .or_else(|| items.iter().position(&is));
    found.unwrap_or_else(|| {
        items.push(new());
        items.len() - 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResourceKind;

    /// Sets by a key whose values come in runs and back again, a vnode with two values and
    /// one with none: each value's vnodes in vnode order, the sets in the order first met,
    /// and the vnodes with none as the set `""` last unless only explicit sets count.
    #[test]
    fn sets_by_a_key_gather_each_values_vnodes() {
        let mut defs = ResourceDefs::default();
        let switch = defs
            .define("switch", ResourceKind::StringArray, false)
            .unwrap();
        let mut b = ClusterBuilder::new(defs);
        let values: [&[&str]; 6] = [&["s2"], &["s2"], &["s1", "s2"], &[], &["s2"], &["s1"]];
        for (i, values) in values.into_iter().enumerate() {
            let h = b.add_host(format!("v{i}"));
            let items = values.iter().map(|&v| v.to_owned()).collect();
            let attrs = if values.is_empty() {
                Vec::new()
            } else {
                vec![(switch, AttrValue::StrArray(items))]
            };
            b.add_vnode(format!("v{i}"), h, 1.0, &[1, 0, 0], attrs)
                .unwrap();
        }
        let cluster = b.build().unwrap();
        let ids = |list: &[u32]| list.iter().map(|&v| VnodeId(v)).collect::<Vec<_>>();
        let all = || (0..6).map(VnodeId);
        assert_eq!(
            cluster.sets_by(switch, all(), false),
            [
                ("s2".to_owned(), ids(&[0, 1, 2, 4])),
                ("s1".to_owned(), ids(&[2, 5])),
                (String::new(), ids(&[3])),
            ]
        );
        assert_eq!(cluster.sets_by(switch, all(), true).len(), 2);
    }

    /// A name given twice is refused, naming the first name met again in vnode order (`b`,
    /// though `a` sorts first).
    #[test]
    fn a_vnode_name_given_twice_is_refused() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let host = b.add_host("h");
        for name in ["b", "a", "b", "a"] {
            b.add_vnode(name, host, 1.0, &[1, 0, 0], Vec::new())
                .unwrap();
        }
        assert_eq!(
            b.build().unwrap_err().to_string(),
            "vnode name `b` is used twice"
        );
    }

    /// Hosts whose vnodes come interleaved, and a host with none: each host's list holds its
    /// own vnodes in cluster order.
    #[test]
    fn each_host_lists_its_own_vnodes_in_cluster_order() {
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let hosts: Vec<HostId> = ["a", "b", "empty", "c"]
            .into_iter()
            .map(|h| b.add_host(h))
            .collect();
        for (name, host) in [
            ("v0", 0),
            ("v1", 1),
            ("v2", 0),
            ("v3", 3),
            ("v4", 1),
            ("v5", 0),
        ] {
            b.add_vnode(name, hosts[host], 1.0, &[1, 0, 0], Vec::new())
                .unwrap();
        }
        let cluster = b.build().unwrap();
        let lists: Vec<Vec<u32>> = hosts
            .iter()
            .map(|&h| cluster.host_vnodes(h).iter().map(|v| v.0).collect())
            .collect();
        assert_eq!(lists, [vec![0, 2, 5], vec![1, 4], vec![], vec![3]]);
    }

    /// A vnode's capacities read from its stretch's one copy are its own, over few stretches
    /// and over more than `StretchKeys` keeps as ends, with a stretch of the same capacities
    /// as an earlier one between others.
    #[test]
    fn a_stretchs_capacities_are_each_of_its_vnodes() {
        for pattern in [
            vec![1u64, 1, 1, 2, 2, 1, 1, 4, 4, 4],
            (0..40).map(|i| 1 + (i / 2) % 3).collect(),
        ] {
            let mut b = ClusterBuilder::new(ResourceDefs::default());
            let h = b.add_host("h");
            for (i, &ncpus) in pattern.iter().enumerate() {
                b.add_vnode(format!("v{i}"), h, 1.0, &[ncpus, 4 * ncpus, 0], Vec::new())
                    .unwrap();
            }
            let cluster = b.build().unwrap();
            for v in (0..pattern.len()).map(VnodeId::from_index) {
                assert_eq!(
                    cluster.stretch_capacity(v),
                    cluster.capacity(v),
                    "{pattern:?}: vnode {v:?}"
                );
            }
        }
    }

    /// `host` and `vnode` name a vnode's host and the vnode itself, whether the host has the
    /// vnode's name (answered from the name) or not (kept as a property), and whatever the
    /// caller passed for them; the vnode's other properties stay as given.
    #[test]
    fn host_and_vnode_attributes_are_the_names_however_they_are_kept() {
        let mut defs = ResourceDefs::default();
        let switch = defs.define("switch", ResourceKind::String, false).unwrap();
        let mut b = ClusterBuilder::new(defs);
        let alone = b.add_host("n1");
        let shared = b.add_host("big");
        let str_of = |s: &str| AttrValue::Str(s.to_owned());
        let given = vec![
            (switch, str_of("s1")),
            (ResourceDefs::HOST, str_of("wrong")),
            (ResourceDefs::VNODE, str_of("wrong")),
        ];
        b.add_vnode("n1", alone, 1.0, &[1, 0, 0], given.clone())
            .unwrap();
        b.add_vnode("big[0]", shared, 1.0, &[1, 0, 0], given)
            .unwrap();
        let cluster = b.build().unwrap();
        let (n1, big0) = (cluster.vnode(VnodeId(0)), cluster.vnode(VnodeId(1)));
        let attrs = |v: &Vnode| {
            [ResourceDefs::HOST, ResourceDefs::VNODE, switch].map(|r| v.attr(r).cloned())
        };
        assert_eq!(
            attrs(n1),
            [Some(str_of("n1")), Some(str_of("n1")), Some(str_of("s1"))]
        );
        assert_eq!(
            attrs(big0),
            [
                Some(str_of("big")),
                Some(str_of("big[0]")),
                Some(str_of("s1"))
            ]
        );
        assert_eq!((n1.name(), big0.name()), ("n1", "big[0]"));
        // Neither name can point at another vnode's.
        let mut b = ClusterBuilder::new(ResourceDefs::default());
        let h = b.add_host("h");
        let (v, w) = (
            b.add_vnode("v", h, 1.0, &[1, 0, 0], Vec::new()).unwrap(),
            b.add_vnode("w", h, 1.0, &[1, 0, 0], Vec::new()).unwrap(),
        );
        assert_eq!(
            b.copy_attr(v, ResourceDefs::HOST, w)
                .unwrap_err()
                .to_string(),
            "resource host is the name of `v` and cannot be indirect"
        );
        assert_eq!(n1.explicit_attrs(), [(switch, str_of("s1"))]);
        assert_eq!(
            big0.explicit_attrs(),
            [(ResourceDefs::HOST, str_of("big")), (switch, str_of("s1"))]
        );
    }
}
