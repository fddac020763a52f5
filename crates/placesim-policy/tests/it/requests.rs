//! First fit under the full request language: conditions, pack, exclhost, `||` alternatives
//! and node filters, each asserting the vnodes taken.

use placesim_core::{
    Allocation, AttrValue, Cluster, ClusterBuilder, ClusterState, PlacementPolicy, ResourceDefs,
    ResourceKind, Scratch, ScratchBuf, Sharing, StateView, VnodeId,
};
use placesim_policy::placement::FirstFit;

/// Two hosts of two 2-ncpu vnodes: h0 = {v0 model=a, v1 model=b}, h1 = {v2 model=a,
/// v3 model=b}; features: v0 [fast], v1 [fast, big], v2 none, v3 [big].
fn cluster() -> Cluster {
    let mut defs = ResourceDefs::default();
    let model = defs.define("model", ResourceKind::String, false).unwrap();
    let features = defs
        .define("features", ResourceKind::StringArray, false)
        .unwrap();
    let mut b = ClusterBuilder::new(defs);
    let feats: [&[&str]; 4] = [&["fast"], &["fast", "big"], &[], &["big"]];
    for h in 0..2 {
        let host = b.add_host(format!("h{h}"));
        for v in 0..2 {
            let i = h * 2 + v;
            let mut attrs = vec![(model, AttrValue::Str(if v == 0 { "a" } else { "b" }.into()))];
            if !feats[i].is_empty() {
                attrs.push((
                    features,
                    AttrValue::StrArray(feats[i].iter().map(|s| s.to_string()).collect()),
                ));
            }
            b.add_vnode(format!("v{i}"), host, 1.0, &[2, 0, 0], attrs)
                .unwrap();
        }
    }
    b.build().unwrap()
}

/// Where first fit puts `text` in `state`: each vnode taken with its ncpus, `v1:2 v3:1`.
fn place(state: &ClusterState, text: &str) -> Option<String> {
    let request = placesim_request::parse_and_lower(text, state.cluster().resources()).unwrap();
    let mut buf = ScratchBuf::default();
    let view = Scratch::new(state, &mut buf);
    FirstFit::default().place(&request, &view).map(|a| {
        let parts: Vec<String> = a
            .parts(3)
            .map(|(v, x)| format!("v{}:{}", v.0, x[0]))
            .collect();
        parts.join(" ")
    })
}

/// A state where another job holds `ncpus` on each listed vnode.
fn holding(parts: &[(u32, u64)]) -> ClusterState {
    let mut state = ClusterState::new(cluster());
    let mut held = Allocation::new(Sharing::Shared);
    for &(v, n) in parts {
        held.add(VnodeId(v), &[n, 0, 0]);
    }
    state.allocate(&held).unwrap();
    state
}

#[test]
fn chunk_conditions_choose_matching_vnodes() {
    let s = ClusterState::new(cluster());
    assert_eq!(place(&s, "select=2:ncpus=1:model=b"), Some("v1:2".into()));
    assert_eq!(
        place(&s, "select=2:ncpus=1:model!=a place=vscatter"),
        Some("v1:1 v3:1".into())
    );
    assert_eq!(place(&s, "select=1:ncpus=1:model>a"), Some("v1:1".into()));
    // string_array membership: v1 and v3 have `big`; `!=` excludes every vnode that has it.
    assert_eq!(
        place(&s, "select=2:ncpus=2:features=big"),
        Some("v1:2 v3:2".into())
    );
    assert_eq!(
        place(&s, "select=2:ncpus=2:features!=big"),
        Some("v0:2 v2:2".into())
    );
    assert_eq!(place(&s, "select=1:ncpus=1:model=c"), None);
}

#[test]
fn pack_puts_every_chunk_on_the_first_host_that_holds_them_all() {
    let s = ClusterState::new(cluster());
    assert_eq!(
        place(&s, "select=3:ncpus=1 place=pack"),
        Some("v0:2 v1:1".into())
    );
    // h0 has one ncpu left: pack moves to h1 rather than split across hosts.
    let s = holding(&[(0, 1), (1, 2)]);
    assert_eq!(
        place(&s, "select=3:ncpus=1 place=pack"),
        Some("v2:2 v3:1".into())
    );
    assert_eq!(place(&s, "select=5:ncpus=1 place=pack"), None);
}

#[test]
fn exclhost_takes_whole_empty_hosts() {
    let s = ClusterState::new(cluster());
    // The job's chunk is on v0; v1, the rest of h0, is the job's too, with nothing taken.
    assert_eq!(
        place(&s, "select=1:ncpus=1 place=exclhost"),
        Some("v0:1 v1:0".into())
    );
    // A job on v1 makes h0 unusable for exclhost, though v0 is free.
    let s = holding(&[(1, 1)]);
    assert_eq!(
        place(&s, "select=1:ncpus=1 place=exclhost"),
        Some("v2:1 v3:0".into())
    );
    let mut s = ClusterState::new(cluster());
    let request = placesim_request::parse_and_lower(
        "select=1:ncpus=1 place=exclhost",
        s.cluster().resources(),
    )
    .unwrap();
    let mut buf = ScratchBuf::default();
    let alloc = FirstFit::default()
        .place(&request, &Scratch::new(&s, &mut buf))
        .unwrap();
    s.allocate(&alloc).unwrap();
    assert!(!s.eligible().contains(0) && !s.eligible().contains(1));
    assert!(s.eligible().contains(2));
}

#[test]
fn alternatives_are_tried_in_order() {
    let s = ClusterState::new(cluster());
    assert_eq!(
        place(&s, "select=1:ncpus=2:model=c||1:ncpus=2:model=b||1:ncpus=2"),
        Some("v1:2".into())
    );
    // The first alternative wins when it fits.
    assert_eq!(
        place(&s, "select=1:ncpus=1||1:ncpus=2:model=b"),
        Some("v0:1".into())
    );
}

#[test]
fn node_filters_read_available_and_assigned_and_try_or_alternatives() {
    let s = holding(&[(0, 1)]);
    assert_eq!(
        place(
            &s,
            "select=1:ncpus=1 node_filter=\"resources_assigned.ncpus==0 and model==a\""
        ),
        Some("v2:1".into())
    );
    assert_eq!(
        place(
            &s,
            "select=2:ncpus=1 node_filter=\"model==zzz or model==b\""
        ),
        Some("v1:2".into())
    );
    assert_eq!(
        place(
            &s,
            "select=1:ncpus=1 node_filter=\"not features==fast and ncpus>=2\""
        ),
        Some("v2:1".into())
    );
    assert_eq!(place(&s, "select=1:ncpus=1 node_filter=ncpus>2"), None);
}

#[test]
fn first_fit_names_what_it_cannot_honour() {
    let defs = cluster().resources().clone();
    let ff = FirstFit::default();
    let lower = |t: &str| placesim_request::parse_and_lower(t, &defs).unwrap();
    assert_eq!(
        ff.unsupported(&lower("select=1:ncpus=1 place=group=model")),
        Some("placement sets (place=group= or a per-chunk group=)")
    );
    assert_eq!(
        ff.unsupported(&lower("select=1:ncpus=1:group=model")),
        Some("placement sets (place=group= or a per-chunk group=)")
    );
    assert_eq!(
        ff.unsupported(&lower("select=1 nodeset=ONEOF:FEATURE")),
        Some("Moab node sets (nodeset=)")
    );
    assert_eq!(ff.unsupported(&lower("select=1:model=a place=pack")), None);
}
