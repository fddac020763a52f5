//! First-fit placement: which vnodes each arrangement takes.

use placesim_core::{
    Allocation, Arrangement, Chunk, Cluster, ClusterBuilder, ClusterState, PlacementPolicy,
    Request, ResourceDefs, Scratch, ScratchBuf, Sharing, VnodeId,
};
use placesim_policy::placement::FirstFit;

/// Two hosts, each with two vnodes of 2 ncpus: h0 = {v0, v1}, h1 = {v2, v3}.
fn two_by_two() -> Cluster {
    let mut b = ClusterBuilder::new(ResourceDefs::default());
    for h in 0..2 {
        let host = b.add_host(format!("h{h}"));
        for v in 0..2 {
            b.add_vnode(format!("h{h}v{v}"), host, 1.0, &[2, 0, 0], Vec::new())
                .unwrap();
        }
    }
    b.build().unwrap()
}

fn request(chunks: &[(u32, u64)], arrangement: Arrangement, sharing: Sharing) -> Request {
    Request {
        arrangement,
        sharing,
        ..Request::from_chunks(
            chunks
                .iter()
                .map(|&(count, ncpus)| Chunk::new(count, vec![ncpus, 0, 0]))
                .collect(),
        )
    }
}

/// `(vnode, ncpus)` of an allocation.
fn parts(a: &Allocation) -> Vec<(u32, u64)> {
    a.parts(3).map(|(v, amounts)| (v.0, amounts[0])).collect()
}

fn place(state: &ClusterState, req: &Request) -> Option<Vec<(u32, u64)>> {
    let mut buf = ScratchBuf::default();
    let view = Scratch::new(state, &mut buf);
    FirstFit::default().place(req, &view).map(|a| parts(&a))
}

#[test]
fn free_packs_chunks_onto_the_first_vnodes() {
    let state = ClusterState::new(two_by_two());
    let r = request(&[(3, 1)], Arrangement::Free, Sharing::Shared);
    assert_eq!(place(&state, &r), Some(vec![(0, 2), (1, 1)]));
}

#[test]
fn vscatter_puts_one_chunk_per_vnode() {
    let state = ClusterState::new(two_by_two());
    let r = request(&[(3, 1)], Arrangement::VScatter, Sharing::Shared);
    assert_eq!(place(&state, &r), Some(vec![(0, 1), (1, 1), (2, 1)]));
}

#[test]
fn scatter_puts_one_chunk_per_host() {
    let state = ClusterState::new(two_by_two());
    assert_eq!(
        place(
            &state,
            &request(&[(2, 1)], Arrangement::Scatter, Sharing::Shared)
        ),
        Some(vec![(0, 1), (2, 1)])
    );
    assert_eq!(
        place(
            &state,
            &request(&[(3, 1)], Arrangement::Scatter, Sharing::Shared)
        ),
        None
    );
}

#[test]
fn chunk_complexes_are_placed_in_order_without_backtracking() {
    let state = ClusterState::new(two_by_two());
    // 1:ncpus=1 takes v0, then 1:ncpus=2 cannot use v0's last ncpu and goes to v1.
    let r = request(&[(1, 1), (1, 2)], Arrangement::Free, Sharing::Shared);
    assert_eq!(place(&state, &r), Some(vec![(0, 1), (1, 2)]));
}

#[test]
fn excl_skips_occupied_vnodes_and_busy_vnodes_are_skipped() {
    let mut state = ClusterState::new(two_by_two());
    // Another job holds 1 ncpu on v0 and all of v1 (v1 is job-busy).
    let mut held = Allocation::new(Sharing::Shared);
    held.add(VnodeId(0), &[1, 0, 0]);
    held.add(VnodeId(1), &[2, 0, 0]);
    state.allocate(&held).unwrap();
    assert!(!placesim_core::StateView::eligible(&state).contains(1));
    // Shared: v0's free ncpu is used first.
    assert_eq!(
        place(
            &state,
            &request(&[(2, 1)], Arrangement::Free, Sharing::Shared)
        ),
        Some(vec![(0, 1), (2, 1)])
    );
    // Excl: v0 holds another job, so both chunks go to v2.
    assert_eq!(
        place(
            &state,
            &request(&[(2, 1)], Arrangement::Free, Sharing::Excl)
        ),
        Some(vec![(2, 2)])
    );
    // An exclusive job makes its vnodes ineligible for anyone else.
    let mut excl = Allocation::new(Sharing::Excl);
    excl.add(VnodeId(2), &[1, 0, 0]);
    state.allocate(&excl).unwrap();
    assert_eq!(
        place(
            &state,
            &request(&[(1, 1)], Arrangement::Free, Sharing::Shared)
        ),
        Some(vec![(0, 1)])
    );
    assert_eq!(
        place(
            &state,
            &request(&[(2, 1)], Arrangement::Free, Sharing::Shared)
        ),
        Some(vec![(0, 1), (3, 1)])
    );
}

#[test]
fn the_kernel_refuses_an_oversubscribing_allocation() {
    let mut state = ClusterState::new(two_by_two());
    let mut a = Allocation::new(Sharing::Shared);
    a.add(VnodeId(3), &[3, 0, 0]);
    assert_eq!(
        state.allocate(&a).unwrap_err().to_string(),
        "vnode 3 has 2 of consumable slot 0 free, 3 asked"
    );
}
