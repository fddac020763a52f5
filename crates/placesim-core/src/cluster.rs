//! The static description of a cluster: hosts, vnodes, their capacities and properties.
//!
//! A `Cluster` never changes during a run; what changes (free amounts, which jobs hold which
//! vnodes) lives in [`crate::state::ClusterState`].

use crate::ids::{HostId, ResourceId, VnodeId};
use crate::resource::{AttrValue, ConsumableIdx, ResourceDefs};

/// One vnode: the unit that chunks are placed on.
#[derive(Debug, Clone, PartialEq)]
pub struct Vnode {
    /// Its unique name.
    pub name: String,
    /// The host it belongs to.
    pub host: HostId,
    /// Relative speed; 1.0 is the reference. Used by runtime models and MINLOSS.
    pub speed: f64,
    /// Non-consumable properties, sorted by resource id, at most one per resource.
    pub attrs: Vec<(ResourceId, AttrValue)>,
}

impl Vnode {
    /// The value of non-consumable `res` on this vnode, if set.
    pub fn attr(&self, res: ResourceId) -> Option<&AttrValue> {
        self.attrs
            .binary_search_by_key(&res, |(id, _)| *id)
            .ok()
            .map(|i| &self.attrs[i].1)
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
    host_vnodes: Vec<Vec<VnodeId>>,
}

/// Builds a [`Cluster`] one vnode at a time.
#[derive(Debug, Clone)]
pub struct ClusterBuilder {
    resources: ResourceDefs,
    hosts: Vec<String>,
    vnodes: Vec<Vnode>,
    capacity: Vec<u64>,
}

impl ClusterBuilder {
    /// Starts a cluster with these resource definitions.
    pub fn new(resources: ResourceDefs) -> Self {
        ClusterBuilder {
            resources,
            hosts: Vec::new(),
            vnodes: Vec::new(),
            capacity: Vec::new(),
        }
    }

    /// The resource definitions, to look up ids while adding vnodes.
    pub fn resources(&self) -> &ResourceDefs {
        &self.resources
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
        attrs.push((
            ResourceDefs::HOST,
            AttrValue::Str(self.hosts[host.index()].clone()),
        ));
        attrs.push((ResourceDefs::VNODE, AttrValue::Str(name.clone())));
        attrs.sort_by_key(|(id, _)| *id);
        attrs.dedup_by_key(|(id, _)| *id);
        self.vnodes.push(Vnode {
            name,
            host,
            speed,
            attrs,
        });
        self.capacity.extend_from_slice(capacity);
        Ok(VnodeId::from_index(self.vnodes.len() - 1))
    }

    /// Checks names and finishes the cluster.
    pub fn build(self) -> Result<Cluster, ClusterError> {
        if self.vnodes.is_empty() {
            return Err(ClusterError::Empty);
        }
        let mut names: Vec<&str> = self.vnodes.iter().map(|v| v.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(ClusterError::DuplicateVnode(w[0].to_owned()));
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
        let mut host_vnodes = vec![Vec::new(); self.hosts.len()];
        for (i, v) in self.vnodes.iter().enumerate() {
            host_vnodes[v.host.index()].push(VnodeId::from_index(i));
        }
        Ok(Cluster {
            parts: std::sync::Arc::new(ClusterParts {
                host_vnodes,
                resources: self.resources,
                hosts: self.hosts,
                vnodes: self.vnodes,
                capacity: self.capacity,
                capacity_total,
                ncpus_capacity,
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
        &self.parts.host_vnodes[h.index()]
    }

    /// The consumable capacities of `v`, one per slot.
    pub fn capacity(&self, v: VnodeId) -> &[u64] {
        let n = self.parts.resources.n_consumables();
        &self.parts.capacity[v.index() * n..(v.index() + 1) * n]
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
        for v in vnodes {
            let values = self
                .vnode(v)
                .attr(res)
                .map_or(&[][..], AttrValue::string_values);
            if values.is_empty() {
                unset.push(v);
            }
            for value in values {
                match sets.iter_mut().find(|(name, _)| name == value) {
                    Some((_, members)) => members.push(v),
                    None => sets.push((value.clone(), vec![v])),
                }
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
            .position(|v| v.name == name)
            .map(VnodeId::from_index)
    }
}
