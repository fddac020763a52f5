//! What `placesim check` prints: the cluster a scenario describes and the sets it would form.

use crate::{DelayMode, DelayReference, MinLoss, Scenario};
use placesim_core::{Cluster, ConsumableIdx, ResourceId, VnodeId};
use placesim_policy::placement::{MoabNodeSets, PbsPsets, PoolSource, PsetSettings};
use std::fmt::Write as _;

/// Vnode names compressed as a host list: `node[1-4,7]`, names without a numeric suffix as
/// they are, groups by prefix in order of first appearance.
pub fn hostlist(names: &[&str]) -> String {
    // Per prefix: its numeric suffixes, and its names kept whole.
    type Group<'a> = (&'a str, Vec<u64>, Vec<&'a str>);
    let mut groups: Vec<Group<'_>> = Vec::new();
    for name in names {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, suffix) = name.split_at(name.len() - digits);
        // Leading zeros would not print back: keep such names whole.
        let numbered = !suffix.is_empty() && (suffix == "0" || !suffix.starts_with('0'));
        let entry = match groups.iter_mut().find(|g| g.0 == prefix) {
            Some(g) => g,
            None => {
                groups.push((prefix, Vec::new(), Vec::new()));
                groups.last_mut().expect("just pushed")
            }
        };
        match suffix.parse::<u64>() {
            Ok(n) if numbered => entry.1.push(n),
            _ => entry.2.push(name),
        }
    }
    let mut parts = Vec::new();
    for (prefix, mut numbers, plain) in groups {
        parts.extend(plain.iter().map(|s| s.to_string()));
        if numbers.is_empty() {
            continue;
        }
        numbers.sort_unstable();
        numbers.dedup();
        let mut ranges: Vec<String> = Vec::new();
        let mut i = 0;
        while i < numbers.len() {
            let mut j = i;
            while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
                j += 1;
            }
            ranges.push(if i == j {
                numbers[i].to_string()
            } else {
                format!("{}-{}", numbers[i], numbers[j])
            });
            i = j + 1;
        }
        if numbers.len() == 1 {
            parts.push(format!("{prefix}{}", numbers[0]));
        } else {
            parts.push(format!("{prefix}[{}]", ranges.join(",")));
        }
    }
    parts.join(",")
}

fn names_of(cluster: &Cluster, vnodes: &[VnodeId]) -> String {
    let names: Vec<&str> = vnodes.iter().map(|&v| cluster.vnode(v).name()).collect();
    hostlist(&names)
}

fn kib(k: u64) -> String {
    let mut out = String::new();
    let _ = placesim_core::write_amount(&mut out, placesim_core::ResourceKind::Size, k);
    out
}

/// The text `placesim check` prints for a scenario.
pub fn describe(s: &Scenario) -> String {
    let c = &s.cluster;
    let defs = c.resources();
    let mut out = String::new();
    let total = |slot: ConsumableIdx| c.capacity_total(slot);
    let _ = writeln!(out, "scenario {} ({})", s.name, s.path.display());
    let _ = writeln!(
        out,
        "cluster: {} vnodes on {} hosts; {} ncpus, {} mem, {} ngpus",
        c.n_vnodes(),
        c.hosts().len(),
        total(ConsumableIdx::NCPUS),
        kib(total(ConsumableIdx::MEM)),
        total(ConsumableIdx::NGPUS),
    );
    let custom: Vec<String> = defs.all()[5..]
        .iter()
        .map(|d| {
            let how = if d.consumable { ", consumable" } else { "" };
            format!("{} ({}{how})", d.name, d.kind)
        })
        .collect();
    if !custom.is_empty() {
        let _ = writeln!(out, "resources: {}", custom.join(", "));
    }
    let _ = writeln!(out, "vnodes by class:");
    for class in &s.classes {
        let Some(&first) = class.vnodes.first() else {
            continue;
        };
        let v = c.vnode(first);
        let cap = c.capacity(first);
        let mut props: Vec<String> = v
            .explicit_attrs()
            .iter()
            .filter(|(id, _)| id.index() >= 5)
            .map(|(id, value)| format!("{}={}", defs.def(*id).name, attr_text(value)))
            .collect();
        for (slot, &id) in defs.consumables().iter().enumerate().skip(3) {
            props.push(format!("{}={}", defs.def(id).name, cap[slot]));
        }
        let queue = s.pbs.psets.vnode_queue[first.index()]
            .map(|q| format!(", queue {}", s.pbs.queues[q].name))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {}: {} vnodes {}; ncpus={}, mem={}, ngpus={}, speed={}{}{queue}",
            class.name,
            class.vnodes.len(),
            names_of(c, &class.vnodes),
            cap[ConsumableIdx::NCPUS.index()],
            kib(cap[ConsumableIdx::MEM.index()]),
            cap[ConsumableIdx::NGPUS.index()],
            v.speed,
            if props.is_empty() {
                String::new()
            } else {
                format!(", {}", props.join(", "))
            },
        );
    }
    if s.pbs.vnode_sharing != placesim_request::VnodeSharing::default() {
        let name = s.pbs.vnode_sharing.name();
        let _ = writeln!(out, "vnode sharing: {name} on every vnode");
    }
    let defaults = std::iter::once(("server", &s.pbs.resources_default)).chain(
        s.pbs
            .queues
            .iter()
            .map(|q| (q.name.as_str(), &q.resources_default)),
    );
    for (whose, d) in defaults {
        let mut said = Vec::new();
        if let Some(w) = d.walltime_s {
            said.push(format!("walltime {w} s (jobs that ask for none)"));
        }
        if let Some(place) = &d.place {
            said.push(format!("place={place} (jobs that give none)"));
        }
        if !said.is_empty() {
            let whose = if whose == "server" {
                "server".to_owned()
            } else {
                format!("queue {whose}")
            };
            let _ = writeln!(out, "resources_default of the {whose}: {}", said.join(", "));
        }
    }
    let m = &s.metrics;
    let trim = |t: crate::Trim| match t {
        crate::Trim::None => "nothing".to_owned(),
        crate::Trim::Seconds(secs) => format!("{secs} s"),
        crate::Trim::JobShare(f) => format!("{}% of the jobs", f * 100.0),
    };
    let sets = s.runtime.settings.topology.map_or_else(
        || "the whole cluster".to_owned(),
        |k| format!("`{}`", defs_name(s, k)),
    );
    let _ = writeln!(
        out,
        "metrics: samples {}; warm-up {}, cool-down {}; fragmentation over the sets of {sets}",
        m.sample_every
            .map_or_else(|| "off".to_owned(), |secs| format!("every {secs} s")),
        trim(m.warmup),
        trim(m.cooldown),
    );
    let _ = writeln!(out, "placement sets:");
    let psets = &s.pbs.psets;
    if !psets.node_group_enable && !psets.server_key.is_empty() {
        let _ = writeln!(
            out,
            "  {} (server node_group_key): not used, node_group_enable is off",
            key_names(s, &psets.server_key)
        );
    }
    // The sets the PBS placement builds, as a run uses them, with every other string
    // resource as a key jobs may name in place=group= or group=.
    let pbs = PbsPsets::new(
        c,
        PsetSettings {
            job_keys: job_keys(s),
            ..psets.clone()
        },
    );
    for pool in pbs.pools() {
        let _ = writeln!(
            out,
            "  {} ({}):",
            key_names(s, &pool.keys),
            source(s, pool.source)
        );
        for set in &pool.sets {
            let ncpus: u64 = set
                .vnodes
                .iter()
                .map(|&v| c.capacity(v)[ConsumableIdx::NCPUS.index()])
                .sum();
            let mem: u64 = set
                .vnodes
                .iter()
                .map(|&v| c.capacity(v)[ConsumableIdx::MEM.index()])
                .sum();
            let _ = writeln!(
                out,
                "    {}: {} vnodes {}; {ncpus} ncpus, {} mem",
                set.name,
                set.vnodes.len(),
                names_of(c, set.vnodes),
                kib(mem)
            );
        }
    }
    let m = &s.moab.nodesets;
    if let Some(policy) = m.policy {
        let _ = writeln!(
            out,
            "moab node sets: {policy:?}, {:?}, priority {:?}, {}",
            m.attribute,
            m.priority_type,
            if m.is_optional {
                "optional"
            } else {
                "mandatory"
            }
        );
        let mut options: Vec<String> = Vec::new();
        if let Some(plus) = m.plus {
            options.push(format!("plus {plus:?}, delay {} s", m.delay.0));
        }
        let flags = [
            (m.options.firstof_forces_firstfit, "firstof_forces_firstfit"),
            (m.options.job_optional_skips_sets, "job_optional_skips_sets"),
            (m.options.tolerance_unbounded, "tolerance_unbounded"),
            (m.options.delay_sticky, "delay_sticky"),
            (m.options.mandatory_fallback, "mandatory_fallback"),
            (m.options.spanevenly_list_order, "spanevenly_list_order"),
            (m.options.refuse_per_job_delay, "refuse_per_job_delay"),
        ];
        options.extend(flags.iter().filter(|f| f.0).map(|f| f.1.to_owned()));
        if m.options.minloss != MinLoss::default() {
            options.push(format!("minloss {:?}", m.options.minloss));
        }
        if m.options.delay_reference != DelayReference::default() {
            options.push(format!("delay_reference {:?}", m.options.delay_reference));
        }
        if m.options.delay_mode != DelayMode::default() {
            options.push(format!("delay_mode {:?}", m.options.delay_mode));
        }
        if !options.is_empty() {
            let _ = writeln!(out, "  options: {}", options.join(", "));
        }
        // The sets the Moab placement builds, as a run uses them (the GLOBAL vnode in every
        // feature set); values only jobs name (nodeset=) are built with the workload.
        let moab = MoabNodeSets::new(c, m.clone(), &[]);
        for set in moab.pools().iter().flat_map(|p| &p.sets) {
            let _ = writeln!(
                out,
                "    {}: {} vnodes {}",
                set.name,
                set.vnodes.len(),
                names_of(c, set.vnodes)
            );
        }
    }
    let f = &s.failures;
    if !f.outages.is_empty() || !f.models.is_empty() {
        let _ = write!(
            out,
            "failures: {:?} jobs of failing vnodes; {} outages listed",
            f.on_failure,
            f.outages.len()
        );
        for m in &f.models {
            let _ = write!(
                out,
                "; model over {} vnodes {}, mtbf {} s, mttr {} s",
                m.vnodes.len(),
                names_of(c, &m.vnodes),
                m.mtbf_s,
                m.mttr_s
            );
        }
        out.push('\n');
    }
    out
}

/// The name of resource `k`.
fn defs_name(s: &Scenario, k: ResourceId) -> String {
    s.cluster.resources().def(k).name.clone()
}

/// Resource names, comma-separated.
fn key_names(s: &Scenario, keys: &[ResourceId]) -> String {
    let defs = s.cluster.resources();
    let names: Vec<&str> = keys.iter().map(|&k| defs.def(k).name.as_str()).collect();
    names.join(", ")
}

/// Where a pool comes from, in the scenario's words.
fn source(s: &Scenario, source: PoolSource) -> String {
    match source {
        PoolSource::Server => "server node_group_key, enabled".to_owned(),
        PoolSource::Queue(q) => {
            let own = !s.pbs.psets.queue_keys[q].is_empty();
            format!(
                "queue {} {}",
                s.pbs.queues[q].name,
                if own {
                    "node_group_key"
                } else {
                    "pool: the server's node_group_key over its vnodes"
                }
            )
        }
        PoolSource::JobKey { queue } => match queue {
            None if s.pbs.psets.vnode_queue.iter().all(Option::is_none) => {
                "for place=group= or group=".to_owned()
            }
            None => "for place=group= or group=, jobs of queues without vnodes".to_owned(),
            Some(q) => format!(
                "for place=group= or group=, jobs of queue {}",
                s.pbs.queues[q].name
            ),
        },
        PoolSource::NodeSets => "node sets".to_owned(),
    }
}

/// The keys jobs may name in `place=group=` or a per-chunk `group=` that the server and
/// queues do not already divide by: every other string or string_array resource.
fn job_keys(s: &Scenario) -> Vec<ResourceId> {
    let psets = &s.pbs.psets;
    let listed = |id: &ResourceId| {
        psets.server_key.contains(id) || psets.queue_keys.iter().any(|k| k.contains(id))
    };
    s.cluster
        .resources()
        .all()
        .iter()
        .enumerate()
        .skip(5)
        .map(|(i, d)| (ResourceId::from_index(i), d))
        .filter(|(id, d)| d.kind.is_stringlike() && !listed(id))
        .map(|(id, _)| id)
        .collect()
}

fn attr_text(v: &placesim_core::AttrValue) -> String {
    use placesim_core::AttrValue::*;
    match v {
        Str(s) => s.clone(),
        StrArray(items) => format!("[{}]", items.join(",")),
        Bool(b) => b.to_string(),
        Long(n) => n.to_string(),
        Float(x) => x.to_string(),
        SizeKib(k) => kib(*k),
    }
}
