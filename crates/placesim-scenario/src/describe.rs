//! What `placesim check` prints: the cluster a scenario describes and the sets it would form.

use crate::{DelayMode, DelayReference, MinLoss, Scenario};
use placesim_core::{Cluster, ConsumableIdx, ResourceId, VnodeId};
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
    let names: Vec<&str> = vnodes
        .iter()
        .map(|&v| cluster.vnode(v).name.as_str())
        .collect();
    hostlist(&names)
}

fn kib(k: u64) -> String {
    for (unit, factor) in [("tb", 1u64 << 30), ("gb", 1 << 20), ("mb", 1 << 10)] {
        if k >= factor && k % factor == 0 {
            return format!("{}{unit}", k / factor);
        }
    }
    format!("{k}kb")
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
            .attrs
            .iter()
            .filter(|(id, _)| id.index() >= 5)
            .map(|(id, value)| format!("{}={}", defs.def(*id).name, attr_text(value)))
            .collect();
        for (slot, &id) in defs.consumables().iter().enumerate().skip(3) {
            props.push(format!("{}={}", defs.def(id).name, cap[slot]));
        }
        let queue = s.vnode_queue[first.index()]
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
    for (key, label, pool) in pset_keys(s) {
        let name = &defs.def(key).name;
        let _ = writeln!(out, "  {name} ({label}):");
        for (value, members) in c.group_by(key, pool, s.pbs.only_explicit_psets) {
            let ncpus: u64 = members
                .iter()
                .map(|&v| c.capacity(v)[ConsumableIdx::NCPUS.index()])
                .sum();
            let mem: u64 = members
                .iter()
                .map(|&v| c.capacity(v)[ConsumableIdx::MEM.index()])
                .sum();
            let shown = if value.is_empty() {
                "\"\"".to_owned()
            } else {
                value
            };
            let _ = writeln!(
                out,
                "    {name}={shown}: {} vnodes {}; {ncpus} ncpus, {} mem",
                members.len(),
                names_of(c, &members),
                kib(mem)
            );
        }
    }
    if let Some(policy) = s.moab.policy {
        let _ = writeln!(
            out,
            "moab node sets: {policy:?}, {:?}, priority {:?}, {}",
            s.moab.attribute,
            s.moab.priority_type,
            if s.moab.is_optional {
                "optional"
            } else {
                "mandatory"
            }
        );
        let m = &s.moab;
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
        if let Some(feature) = s.moab.feature_resource {
            let all = (0..c.n_vnodes()).map(VnodeId::from_index);
            let mut sets = c.group_by(feature, all, true);
            if !s.moab.list.is_empty() {
                sets.retain(|(v, _)| s.moab.list.contains(v));
                sets.sort_by_key(|(v, _)| s.moab.list.iter().position(|l| l == v));
            }
            for (value, members) in sets {
                let _ = writeln!(
                    out,
                    "    {value}: {} vnodes {}",
                    members.len(),
                    names_of(c, &members)
                );
            }
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

/// The keys whose sets `check` lists, with where they come from and the vnode pool they
/// divide: the server's key over the server's pool, each queue's key over its pool, then
/// every other string or string_array resource over all vnodes (for `place=group=` and
/// per-chunk `group=`).
fn pset_keys(s: &Scenario) -> Vec<(ResourceId, String, Vec<VnodeId>)> {
    let defs = s.cluster.resources();
    let mut keys: Vec<(ResourceId, String, Vec<VnodeId>)> = Vec::new();
    let enabled = if s.pbs.node_group_enable {
        "enabled"
    } else {
        "node_group_enable is off"
    };
    for &k in &s.pbs.node_group_key {
        keys.push((
            k,
            format!("server node_group_key, {enabled}"),
            s.queue_pool(None),
        ));
    }
    for (qi, q) in s.pbs.queues.iter().enumerate() {
        for &k in &q.node_group_key {
            keys.push((
                k,
                format!("queue {} node_group_key", q.name),
                s.queue_pool(Some(qi)),
            ));
        }
    }
    let all: Vec<VnodeId> = (0..s.cluster.n_vnodes()).map(VnodeId::from_index).collect();
    for (i, d) in defs.all().iter().enumerate().skip(5) {
        let id = ResourceId::from_index(i);
        if d.kind.is_stringlike() && !keys.iter().any(|(k, _, _)| *k == id) {
            keys.push((id, "for place=group= or group=".to_owned(), all.clone()));
        }
    }
    keys
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
