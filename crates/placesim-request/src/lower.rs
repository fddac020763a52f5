//! From the typed syntax to the kernel's [`Request`], resolving names to ids and amounts to
//! base units.

use crate::ast::{
    ChunkSpec, Filter, JobRequest, NodeSet, NodeSetAttributeName, NodeSetPolicyName,
    PlaceArrangement, PlaceSharing, Value,
};
use placesim_core::{
    Arrangement, AttrValue, Chunk, Constraint, FilterExpr, HostList, NodeSetAttribute,
    NodeSetPolicy, NodeSetRequest, NodeSetValue, Request, ResourceDefs, ResourceId, ResourceKind,
    Sharing, SimDuration,
};

/// Lowers a parsed request. `req` must come from [`crate::parse_request`] with the same
/// `defs`, which has checked every name and value; names it cannot resolve are skipped.
pub fn lower(req: &JobRequest, defs: &ResourceDefs) -> Request {
    let mut selects = req.select.iter().map(|s| lower_chunks(&s.chunks, defs));
    let chunks = selects.next().unwrap_or_default();
    let alternatives = selects.collect();
    let node_filter = match &req.node_filter {
        None => Vec::new(),
        // Top-level `or`: the alternatives of seed 003, tried one by one.
        Some(Filter::Or(items)) => items.iter().filter_map(|f| lower_filter(f, defs)).collect(),
        Some(f) => lower_filter(f, defs).into_iter().collect(),
    };
    let nodeset = (req.nodeset.is_some()
        || req.nodeset_is_optional.is_some()
        || req.nodeset_delay_s.is_some())
    .then(|| lower_job_nodeset(req, defs));
    Request {
        chunks,
        alternatives,
        arrangement: match req.place.arrangement {
            None | Some(PlaceArrangement::Free) => Arrangement::Free,
            Some(PlaceArrangement::Pack) => Arrangement::Pack,
            Some(PlaceArrangement::Scatter) => Arrangement::Scatter,
            Some(PlaceArrangement::VScatter) => Arrangement::VScatter,
        },
        sharing: match req.place.sharing {
            None | Some(PlaceSharing::Shared) => Sharing::Shared,
            Some(PlaceSharing::Excl) => Sharing::Excl,
            Some(PlaceSharing::ExclHost) => Sharing::ExclHost,
        },
        group: req.place.group.as_deref().and_then(|g| defs.lookup(g)),
        node_filter,
        nodeset,
        hostlist: req.hostlist.as_ref().map(|(form, hosts)| HostList {
            form: *form,
            hosts: hosts.iter().cloned().collect(),
        }),
        queue: None,
        class: None,
        limit_draws: None,
        queued_draws: None,
    }
}

fn lower_chunks(chunks: &[ChunkSpec], defs: &ResourceDefs) -> Vec<Chunk> {
    chunks
        .iter()
        .map(|c| {
            let mut chunk = Chunk::new(c.count, vec![0; defs.n_consumables()]);
            chunk.group = c.group.as_deref().and_then(|g| defs.lookup(g));
            for t in &c.terms {
                let Some(id) = defs.lookup(&t.name) else {
                    continue;
                };
                match defs.consumable_idx(id) {
                    Some(slot) => chunk.amounts[slot.index()] = amount(&t.value),
                    None => chunk.constraints.push(Constraint {
                        resource: id,
                        op: t.op,
                        value: attr_value(&t.value, defs.def(id).kind),
                    }),
                }
            }
            chunk
        })
        .collect()
}

/// A consumable amount in its base unit: counts as they are, sizes in KiB rounded up (as PBS
/// rounds to kb), floats in thousandths.
fn amount(v: &Value) -> u64 {
    match v {
        Value::Long(n) => u64::try_from(*n).unwrap_or(0),
        Value::SizeBytes(b) => b.div_ceil(1024),
        Value::Float(x) => (x * 1000.0).round() as u64,
        Value::Bool(b) => u64::from(*b),
        Value::Str(_) => 0,
    }
}

/// A non-consumable value as vnodes hold it. A string_array request names one element.
fn attr_value(v: &Value, kind: ResourceKind) -> AttrValue {
    match (v, kind) {
        (Value::Long(n), _) => AttrValue::Long(*n),
        (Value::Float(x), _) => AttrValue::Float(*x),
        (Value::SizeBytes(b), _) => AttrValue::SizeKib(b.div_ceil(1024)),
        (Value::Bool(b), _) => AttrValue::Bool(*b),
        (Value::Str(s), _) => AttrValue::Str(s.clone()),
    }
}

fn lower_filter(f: &Filter, defs: &ResourceDefs) -> Option<FilterExpr> {
    Some(match f {
        Filter::Compare {
            name,
            assigned,
            op,
            value,
        } => {
            let id = defs.lookup(name)?;
            FilterExpr::Compare {
                resource: id,
                assigned: *assigned,
                op: *op,
                value: attr_value(value, defs.def(id).kind),
            }
        }
        Filter::And(items) => fold(items, defs, FilterExpr::And)?,
        Filter::Or(items) => fold(items, defs, FilterExpr::Or)?,
        Filter::Not(inner) => FilterExpr::Not(Box::new(lower_filter(inner, defs)?)),
    })
}

fn fold(
    items: &[Filter],
    defs: &ResourceDefs,
    join: fn(Box<FilterExpr>, Box<FilterExpr>) -> FilterExpr,
) -> Option<FilterExpr> {
    let mut lowered = items.iter().map(|f| lower_filter(f, defs));
    let first = lowered.next()??;
    lowered.try_fold(first, |acc, next| {
        Some(join(Box::new(acc), Box::new(next?)))
    })
}

/// Lowers a node-set specification on its own, as a class's `DEFAULT.NODESET` gives it.
pub fn lower_nodeset(ns: &NodeSet, defs: &ResourceDefs) -> NodeSetRequest {
    lower_nodeset_parts(Some(ns), None, None, defs)
}

fn lower_job_nodeset(req: &JobRequest, defs: &ResourceDefs) -> NodeSetRequest {
    lower_nodeset_parts(
        req.nodeset.as_ref(),
        req.nodeset_is_optional,
        req.nodeset_delay_s,
        defs,
    )
}

fn lower_nodeset_parts(
    ns: Option<&NodeSet>,
    is_optional: Option<bool>,
    delay_s: Option<u64>,
    defs: &ResourceDefs,
) -> NodeSetRequest {
    NodeSetRequest {
        policy: ns.map(|n| match n.policy {
            NodeSetPolicyName::OneOf => NodeSetPolicy::OneOf,
            NodeSetPolicyName::AnyOf => NodeSetPolicy::AnyOf,
            NodeSetPolicyName::FirstOf => NodeSetPolicy::FirstOf,
        }),
        attribute: ns.and_then(|n| n.attribute).map(|a| match a {
            NodeSetAttributeName::Feature => NodeSetAttribute::Feature,
            NodeSetAttributeName::VarAttr => NodeSetAttribute::VarAttr,
            NodeSetAttributeName::ProcSpeed => NodeSetAttribute::ProcSpeed,
            NodeSetAttributeName::Reservation => NodeSetAttribute::Reservation,
            NodeSetAttributeName::Class => NodeSetAttribute::Class,
        }),
        values: ns.map_or_else(Vec::new, |n| {
            n.values
                .iter()
                .filter_map(|v| nodeset_value(n.attribute, v, defs))
                .collect()
        }),
        is_optional,
        delay: delay_s.map(SimDuration),
    }
}

fn nodeset_value(
    attribute: Option<NodeSetAttributeName>,
    v: &str,
    defs: &ResourceDefs,
) -> Option<NodeSetValue> {
    match attribute {
        Some(NodeSetAttributeName::VarAttr) => {}
        // The parser has checked the number.
        Some(NodeSetAttributeName::ProcSpeed) => {
            return crate::parse::parse_speed(v).map(NodeSetValue::ProcSpeed);
        }
        Some(NodeSetAttributeName::Reservation) => {
            return Some(NodeSetValue::Reservation(v.to_owned()));
        }
        Some(NodeSetAttributeName::Class) => return Some(NodeSetValue::Class(v.to_owned())),
        _ => return Some(NodeSetValue::Feature(v.to_owned())),
    }
    let resource = |name: &str| -> Option<ResourceId> { defs.lookup(name) };
    Some(match v.split_once('=') {
        Some((name, value)) => NodeSetValue::VarAttrValue(resource(name)?, value.to_owned()),
        None => NodeSetValue::VarAttrAny(resource(v)?),
    })
}
