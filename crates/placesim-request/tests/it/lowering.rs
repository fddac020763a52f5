//! What policies receive: ids, base units, conditions, alternatives, filters, node sets.

use crate::common::defs;
use placesim_core::{
    Arrangement, AttrValue, CmpOp, ConsumableIdx, FilterExpr, NodeSetAttribute, NodeSetPolicy,
    NodeSetValue, Sharing, SimDuration,
};
use placesim_request::parse_and_lower;

#[test]
fn amounts_in_base_units_and_conditions_by_id() {
    let d = defs();
    let r = parse_and_lower(
        "select=2:ncpus=4:mem=1000b:licenses=1.5:color!=green:features=fastos place=vscatter:exclhost",
        &d,
    )
    .unwrap();
    let c = &r.chunks[0];
    assert_eq!(c.count, 2);
    assert_eq!(c.amounts[ConsumableIdx::NCPUS.index()], 4);
    // 1000 bytes round up to 1 KiB, as PBS rounds sizes to kb.
    assert_eq!(c.amounts[ConsumableIdx::MEM.index()], 1);
    let lic = d.consumable_idx(d.lookup("licenses").unwrap()).unwrap();
    assert_eq!(c.amounts[lic.index()], 1500);
    assert_eq!(c.constraints.len(), 2);
    assert_eq!(c.constraints[0].resource, d.lookup("color").unwrap());
    assert_eq!(c.constraints[0].op, CmpOp::Ne);
    assert_eq!(c.constraints[0].value, AttrValue::Str("green".into()));
    assert_eq!(r.arrangement, Arrangement::VScatter);
    assert_eq!(r.sharing, Sharing::ExclHost);
    assert!(!r.is_plain());
}

#[test]
fn alternatives_groups_filters_and_nodesets() {
    let d = defs();
    let r = parse_and_lower(
        "select=2:ncpus=1:group=shape+2:ncpus=1||4:ncpus=1 node_filter=\"ncpus>=8 or model==x\" nodeset=ONEOF:VARATTR:model=skylake,switch nodesetisoptional=0 nodesetdelay=60",
        &d,
    )
    .unwrap();
    assert_eq!(r.chunks.len(), 2);
    assert_eq!(r.chunks[0].group, d.lookup("shape"));
    assert_eq!(r.chunks[1].group, None);
    assert_eq!(r.alternatives.len(), 1);
    assert_eq!(r.alternatives[0][0].count, 4);
    // The top-level `or` gives two alternatives, tried one by one.
    assert_eq!(r.node_filter.len(), 2);
    assert!(matches!(
        r.node_filter[1],
        FilterExpr::Compare {
            op: CmpOp::Eq,
            assigned: false,
            ..
        }
    ));
    let ns = r.nodeset.unwrap();
    assert_eq!(ns.policy, Some(NodeSetPolicy::OneOf));
    assert_eq!(ns.attribute, Some(NodeSetAttribute::VarAttr));
    assert_eq!(
        ns.values,
        vec![
            NodeSetValue::VarAttrValue(d.lookup("model").unwrap(), "skylake".into()),
            NodeSetValue::VarAttrAny(d.lookup("switch").unwrap()),
        ]
    );
    assert_eq!(ns.is_optional, Some(false));
    assert_eq!(ns.delay, Some(SimDuration(60)));

    let r = parse_and_lower("select=1:ncpus=1 place=group=switch", &d).unwrap();
    assert_eq!(r.group, d.lookup("switch"));
    let plain = parse_and_lower("select=3:ncpus=1", &d).unwrap();
    assert!(plain.is_plain());
}
