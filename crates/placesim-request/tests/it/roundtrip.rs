//! parse(print(x)) == x over generated requests, and print(parse(s)) is a fixed point.

use crate::common::defs;
use placesim_core::{CmpOp, HostListForm, ResourceDefs, ResourceKind};
use placesim_request::{
    ChunkSpec, Filter, JobRequest, NodeSet, NodeSetAttributeName, NodeSetPolicyName, Place,
    PlaceArrangement, PlaceSharing, Select, Term, Value, parse_request,
};
use proptest::prelude::*;

const OPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Gt,
    CmpOp::Le,
    CmpOp::Ge,
];

fn value(kind: ResourceKind, consumable: bool, in_filter: bool) -> BoxedStrategy<Value> {
    match kind {
        ResourceKind::Long if consumable => (0i64..1_000_000).prop_map(Value::Long).boxed(),
        ResourceKind::Long => any::<i64>().prop_map(Value::Long).boxed(),
        ResourceKind::Float => any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(move |v| Value::Float(if consumable { v.abs() } else { v }))
            .boxed(),
        ResourceKind::Size => (0u64..100_000, 0usize..5)
            .prop_map(|(n, u)| Value::SizeBytes(n << (10 * u)))
            .boxed(),
        ResourceKind::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        ResourceKind::String | ResourceKind::StringArray => {
            let pattern = if in_filter {
                "[a-zA-Z0-9_.:+| -]{0,8}"
            } else {
                "[a-zA-Z0-9_.:+|' -]{0,8}"
            };
            pattern.prop_map(Value::Str).boxed()
        }
    }
}

fn term(defs: &ResourceDefs) -> BoxedStrategy<Term> {
    let all: Vec<_> = defs
        .all()
        .iter()
        .filter(|d| !(d.name == "host" || d.name == "vnode") || !d.consumable)
        .cloned()
        .collect();
    (0..all.len(), 0..OPS.len())
        .prop_flat_map(move |(i, o)| {
            let d = all[i].clone();
            let op = if d.consumable { CmpOp::Eq } else { OPS[o] };
            value(d.kind, d.consumable, false).prop_map(move |value| Term {
                name: d.name.clone(),
                op,
                value,
            })
        })
        .boxed()
}

fn group_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("color"),
        Just("shape"),
        Just("switch"),
        Just("features")
    ]
    .prop_map(String::from)
}

fn chunk(defs: &ResourceDefs, grouped: bool) -> BoxedStrategy<ChunkSpec> {
    let group = if grouped {
        proptest::option::of(group_name()).boxed()
    } else {
        Just(None).boxed()
    };
    (
        1u32..5000,
        proptest::collection::vec(term(defs), 0..4),
        group,
    )
        .prop_map(|(count, terms, group)| ChunkSpec {
            count,
            terms,
            group,
        })
        .boxed()
}

fn filter(defs: &ResourceDefs) -> BoxedStrategy<Filter> {
    let all: Vec<_> = defs.all().to_vec();
    let leaf = (0..all.len(), 0..OPS.len(), any::<bool>())
        .prop_flat_map(move |(i, o, assigned)| {
            let d = all[i].clone();
            value(d.kind, false, true).prop_map(move |value| Filter::Compare {
                name: d.name.clone(),
                assigned,
                op: OPS[o],
                value,
            })
        })
        .boxed();
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 2..4).prop_map(Filter::And),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(Filter::Or),
            inner.prop_map(|f| Filter::Not(Box::new(f))),
        ]
    })
    .boxed()
}

fn nodeset() -> impl Strategy<Value = NodeSet> {
    let policy = prop_oneof![
        Just(NodeSetPolicyName::OneOf),
        Just(NodeSetPolicyName::AnyOf),
        Just(NodeSetPolicyName::FirstOf)
    ];
    let attr = prop_oneof![
        Just(None),
        Just(Some(NodeSetAttributeName::Feature)),
        Just(Some(NodeSetAttributeName::VarAttr)),
        Just(Some(NodeSetAttributeName::ProcSpeed)),
        Just(Some(NodeSetAttributeName::Reservation)),
        Just(Some(NodeSetAttributeName::Class))
    ];
    (
        policy,
        attr,
        proptest::collection::vec("[a-z0-9_]{1,6}", 0..4),
    )
        .prop_map(|(policy, attribute, names)| {
            let values = match attribute {
                None => Vec::new(),
                Some(
                    NodeSetAttributeName::Feature
                    | NodeSetAttributeName::Reservation
                    | NodeSetAttributeName::Class,
                ) => names,
                // Speeds as a user writes them: integers and decimals.
                Some(NodeSetAttributeName::ProcSpeed) => names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| format!("{}.{}", n.len() + i, n.len()))
                    .collect(),
                Some(NodeSetAttributeName::VarAttr) => names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        if i % 2 == 0 {
                            format!("model={n}")
                        } else {
                            "switch".into()
                        }
                    })
                    .collect(),
            };
            NodeSet {
                policy,
                attribute,
                values,
            }
        })
}

fn place() -> impl Strategy<Value = Place> {
    let arrangement = proptest::option::of(prop_oneof![
        Just(PlaceArrangement::Free),
        Just(PlaceArrangement::Pack),
        Just(PlaceArrangement::Scatter),
        Just(PlaceArrangement::VScatter)
    ]);
    let sharing = proptest::option::of(prop_oneof![
        Just(PlaceSharing::Excl),
        Just(PlaceSharing::Shared),
        Just(PlaceSharing::ExclHost)
    ]);
    (arrangement, sharing, proptest::option::of(group_name())).prop_map(
        |(arrangement, sharing, group)| Place {
            arrangement,
            sharing,
            group,
        },
    )
}

/// Valid requests only: the combinations the rules forbid are made valid by dropping a part.
fn request() -> impl Strategy<Value = JobRequest> {
    let d = defs();
    let select = proptest::collection::vec(
        proptest::collection::vec(chunk(&d, true), 1..4).prop_map(|chunks| Select { chunks }),
        1..3,
    );
    (
        select,
        place(),
        proptest::option::of(filter(&d)),
        proptest::option::of(nodeset()),
        proptest::option::of(any::<bool>()),
        proptest::option::of(0u64..1_000_000),
        proptest::option::of((
            prop_oneof![Just(HostListForm::Exact), Just(HostListForm::Subset)],
            proptest::collection::vec("[a-z][a-z0-9._-]{0,6}", 1..4),
        )),
    )
        .prop_map(
            |(select, mut place, node_filter, nodeset, opt, delay, hostlist)| {
                let per_chunk = select
                    .iter()
                    .flat_map(|s| &s.chunks)
                    .any(|c| c.group.is_some());
                if per_chunk || node_filter.is_some() {
                    place.group = None;
                }
                if per_chunk && place.arrangement == Some(PlaceArrangement::Pack) {
                    place.arrangement = None;
                }
                JobRequest {
                    select,
                    place,
                    node_filter,
                    nodeset,
                    nodeset_is_optional: opt,
                    nodeset_delay_s: delay,
                    hostlist,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512)
    ))]

    #[test]
    fn parse_of_print_is_identity(req in request()) {
        let text = req.to_string();
        let back = parse_request(&text, &defs());
        prop_assert_eq!(back.as_ref(), Ok(&req), "printed as {}", text);
        // And printing is a fixed point.
        prop_assert_eq!(back.unwrap().to_string(), text);
    }
}

#[test]
fn canonical_forms_of_hand_written_requests() {
    for (input, canonical) in [
        ("select=ncpus=2:mem=1024MB", "select=1:ncpus=2:mem=1gb"),
        ("select=2:mem=1536kb", "select=2:mem=1536kb"),
        (
            "select=1:bigmem=yes place=excl:scatter",
            "select=1:bigmem=True place=scatter:excl",
        ),
        ("select=1:model='sky lake'", "select=1:model=\"sky lake\""),
        (
            "select=1   node_filter=\"( ncpus >= 8 )  and (model==a or model==b)\"",
            "select=1 node_filter=\"ncpus>=8 and (model==a or model==b)\"",
        ),
        (
            "select=1 nodeset=oneof:feature:a:b nodesetdelay=1:30",
            "select=1 nodeset=ONEOF:FEATURE:a,b nodesetdelay=90",
        ),
        ("select=1:group=shape+1", "select=1:group=shape+1"),
    ] {
        let r = parse_request(input, &defs()).unwrap();
        assert_eq!(r.to_string(), canonical, "{input}");
    }
}
