use crate::common::defs;
use placesim_core::CmpOp;
use placesim_request::{
    ChunkSpec, Filter, NodeSet, NodeSetAttributeName, NodeSetPolicyName, Place, PlaceArrangement,
    PlaceSharing, Term, Value, parse_request,
};

fn term(name: &str, op: CmpOp, value: Value) -> Term {
    Term {
        name: name.into(),
        op,
        value,
    }
}

#[test]
fn select_chunk_complexes_with_counts_and_units() {
    let r = parse_request(
        "select=2:ncpus=4:mem=16GB+ncpus=1:mem=512mb:ngpus=2",
        &defs(),
    )
    .unwrap();
    assert_eq!(r.select.len(), 1);
    assert_eq!(
        r.select[0].chunks,
        vec![
            ChunkSpec {
                count: 2,
                terms: vec![
                    term("ncpus", CmpOp::Eq, Value::Long(4)),
                    term("mem", CmpOp::Eq, Value::SizeBytes(16 << 30)),
                ],
                group: None,
            },
            ChunkSpec {
                count: 1,
                terms: vec![
                    term("ncpus", CmpOp::Eq, Value::Long(1)),
                    term("mem", CmpOp::Eq, Value::SizeBytes(512 << 20)),
                    term("ngpus", CmpOp::Eq, Value::Long(2)),
                ],
                group: None,
            },
        ]
    );
    assert_eq!(r.place, Place::default());
}

#[test]
fn sizes_take_every_unit_in_any_case() {
    for (text, bytes) in [
        ("100", 100),
        ("100b", 100),
        ("3kb", 3 << 10),
        ("3KB", 3 << 10),
        ("3Mb", 3 << 20),
        ("3gB", 3 << 30),
        ("2tb", 2u64 << 40),
    ] {
        let r = parse_request(&format!("select=1:mem={text}"), &defs()).unwrap();
        assert_eq!(
            r.select[0].chunks[0].terms[0].value,
            Value::SizeBytes(bytes),
            "{text}"
        );
    }
}

#[test]
fn booleans_strings_and_string_arrays() {
    let r = parse_request(
        "select=1:ncpus=1:bigmem=true:model=\"sky lake\":features=fastos:host=n1",
        &defs(),
    )
    .unwrap();
    let terms = &r.select[0].chunks[0].terms;
    assert_eq!(terms[1].value, Value::Bool(true));
    assert_eq!(terms[2].value, Value::Str("sky lake".into()));
    assert_eq!(terms[3].value, Value::Str("fastos".into()));
    assert_eq!(terms[4].value, Value::Str("n1".into()));
    let r = parse_request("select=1:bigmem=False", &defs()).unwrap();
    assert_eq!(r.select[0].chunks[0].terms[0].value, Value::Bool(false));
}

#[test]
fn place_in_every_combination_and_order() {
    let arrangements = [
        ("free", PlaceArrangement::Free),
        ("pack", PlaceArrangement::Pack),
        ("scatter", PlaceArrangement::Scatter),
        ("vscatter", PlaceArrangement::VScatter),
    ];
    let sharings = [
        ("excl", PlaceSharing::Excl),
        ("shared", PlaceSharing::Shared),
        ("exclhost", PlaceSharing::ExclHost),
    ];
    for (a_text, a) in arrangements {
        for (s_text, s) in sharings {
            for text in [
                format!("{a_text}:{s_text}:group=switch"),
                format!("group=switch:{s_text}:{a_text}"),
                format!("{s_text}:group=switch:{a_text}"),
            ] {
                let r = parse_request(&format!("select=1:ncpus=1 place={text}"), &defs()).unwrap();
                assert_eq!(
                    r.place,
                    Place {
                        arrangement: Some(a),
                        sharing: Some(s),
                        group: Some("switch".into()),
                    },
                    "{text}"
                );
            }
        }
    }
    let r = parse_request("select=1:ncpus=1 place=excl", &defs()).unwrap();
    assert_eq!(r.place.arrangement, None);
    assert_eq!(r.place.sharing, Some(PlaceSharing::Excl));
}

#[test]
fn per_chunk_group_extension() {
    let r = parse_request(
        "select=2:ncpus=1:group=color+2:ncpus=1:group=shape",
        &defs(),
    )
    .unwrap();
    let groups: Vec<_> = r.select[0].chunks.iter().map(|c| c.group.clone()).collect();
    assert_eq!(groups, vec![Some("color".into()), Some("shape".into())]);
    // group may sit anywhere in the complex; it is not a resource term.
    let r = parse_request("select=2:group=shape:ncpus=1", &defs()).unwrap();
    assert_eq!(r.select[0].chunks[0].group.as_deref(), Some("shape"));
    assert_eq!(r.select[0].chunks[0].terms.len(), 1);
}

#[test]
fn conditional_operators_on_non_consumables() {
    let r = parse_request(
        "select=1:ncpus=4:color!=green:speed>=1.5:gen<3:model>ivy:scratch<=10gb:gen>1",
        &defs(),
    )
    .unwrap();
    let ops: Vec<_> = r.select[0].chunks[0].terms.iter().map(|t| t.op).collect();
    assert_eq!(
        ops,
        vec![
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Ge,
            CmpOp::Lt,
            CmpOp::Gt,
            CmpOp::Le,
            CmpOp::Gt
        ]
    );
    assert_eq!(r.select[0].chunks[0].terms[2].value, Value::Float(1.5));
}

#[test]
fn alternatives_joined_by_double_bar() {
    let r = parse_request(
        "select=4:ncpus=8:model=skylake||8:ncpus=4:model=haswell||16:ncpus=2",
        &defs(),
    )
    .unwrap();
    let counts: Vec<u32> = r.select.iter().map(|s| s.chunks[0].count).collect();
    assert_eq!(counts, vec![4, 8, 16]);
}

#[test]
fn node_filter_precedence_and_sides() {
    let r = parse_request(
        "select=3:ncpus=2:mem=18gb node_filter=\"ncpus<=8 and model==Skylake or ncpus>=8 and model==Haswell\"",
        &defs(),
    )
    .unwrap();
    let cmp = |name: &str, op, value| Filter::Compare {
        name: String::from(name),
        assigned: false,
        op,
        value,
    };
    assert_eq!(
        r.node_filter,
        Some(Filter::Or(vec![
            Filter::And(vec![
                cmp("ncpus", CmpOp::Le, Value::Long(8)),
                cmp("model", CmpOp::Eq, Value::Str("Skylake".into())),
            ]),
            Filter::And(vec![
                cmp("ncpus", CmpOp::Ge, Value::Long(8)),
                cmp("model", CmpOp::Eq, Value::Str("Haswell".into())),
            ]),
        ]))
    );
    let r = parse_request(
        "select=1:ncpus=1 node_filter='not (resources_assigned.ncpus > 0 or resources_available.mem < 4gb) and bigmem==True'",
        &defs(),
    )
    .unwrap();
    let Some(Filter::And(items)) = &r.node_filter else {
        panic!("expected an and: {:?}", r.node_filter)
    };
    let Filter::Not(inner) = &items[0] else {
        panic!("expected not: {items:?}")
    };
    let Filter::Or(or) = &**inner else {
        panic!("expected or: {inner:?}")
    };
    assert_eq!(
        or[0],
        Filter::Compare {
            name: "ncpus".into(),
            assigned: true,
            op: CmpOp::Gt,
            value: Value::Long(0)
        }
    );
    assert_eq!(
        or[1],
        Filter::Compare {
            name: "mem".into(),
            assigned: false,
            op: CmpOp::Lt,
            value: Value::SizeBytes(4 << 30)
        }
    );
    // Unquoted, a filter without spaces is one item.
    let r = parse_request("select=1:ncpus=1 node_filter=ncpus>=8", &defs()).unwrap();
    assert!(matches!(r.node_filter, Some(Filter::Compare { .. })));
}

#[test]
fn moab_nodeset_forms() {
    let r = parse_request(
        "select=1:ncpus=1 nodeset=ONEOF:FEATURE:bigmem,fastos:gpu nodesetisoptional=false nodesetdelay=1:00:30",
        &defs(),
    )
    .unwrap();
    assert_eq!(
        r.nodeset,
        Some(NodeSet {
            policy: NodeSetPolicyName::OneOf,
            attribute: Some(NodeSetAttributeName::Feature),
            values: vec!["bigmem".into(), "fastos".into(), "gpu".into()],
        })
    );
    assert_eq!(r.nodeset_is_optional, Some(false));
    assert_eq!(r.nodeset_delay_s, Some(3630));
    let r = parse_request(
        "select=1:ncpus=1 nodeset=anyof:varattr:model=skylake,switch",
        &defs(),
    )
    .unwrap();
    let ns = r.nodeset.unwrap();
    assert_eq!(ns.policy, NodeSetPolicyName::AnyOf);
    assert_eq!(ns.attribute, Some(NodeSetAttributeName::VarAttr));
    assert_eq!(
        ns.values,
        vec!["model=skylake".to_owned(), "switch".to_owned()]
    );
    let r = parse_request("select=1:ncpus=1 nodeset=FIRSTOF", &defs()).unwrap();
    assert_eq!(r.nodeset.unwrap().attribute, None);
    assert_eq!(
        parse_request("select=1 nodesetdelay=2:00:00:05", &defs())
            .unwrap()
            .nodeset_delay_s,
        Some(2 * 86400 + 5)
    );
}
