//! Topology: layouts, rejection with the nearest valid layout, rank orders, placement.

use planewave_comm::topology::{advise, check_layout, resolve_layout, valid_layouts};
use planewave_comm::{
    CommClass, CommExt, LayoutRequest, Placement, ProblemSize, RankOrder, Threads, Topology,
};

const P: ProblemSize = ProblemSize {
    kpoints: 4,
    bands: 32,
    fft_planes: 18,
};

fn req(kg: Option<usize>, bg: Option<usize>) -> LayoutRequest {
    LayoutRequest {
        kpoint_groups: kg,
        band_groups: bg,
        ..LayoutRequest::auto(P)
    }
}

#[test]
fn explicit_layouts_are_honoured_and_the_rest_is_g() {
    let l = resolve_layout(8, &req(Some(2), Some(2))).unwrap();
    assert_eq!(
        (l.kpoint_groups, l.band_groups, l.gvector_groups),
        (2, 2, 2)
    );
    let l = resolve_layout(12, &req(Some(4), Some(1))).unwrap();
    assert_eq!(l.gvector_groups, 3);
}

#[test]
fn impossible_layouts_propose_the_nearest_valid_one() {
    let e = resolve_layout(8, &req(Some(3), Some(1))).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("3 k-point groups do not divide 8 ranks"),
        "{msg}"
    );
    let near = e.nearest.unwrap();
    assert!(near.kpoint_groups == 2 || near.kpoint_groups == 4, "{msg}");
    assert!(
        msg.contains("nearest valid layout: kpoint_groups ="),
        "{msg}"
    );
    // More k-point groups than k-points.
    let e = resolve_layout(8, &req(Some(8), None)).unwrap_err();
    assert!(e.to_string().contains("idle"), "{e}");
    assert_eq!(e.nearest.unwrap().kpoint_groups, 4);
    // More G ranks than FFT planes.
    let e = resolve_layout(64, &req(Some(1), Some(1))).unwrap_err();
    assert!(e.to_string().contains("planes"), "{e}");
    let near = e.nearest.unwrap();
    assert!(check_layout(64, near.kpoint_groups, near.band_groups, &P).is_ok());
}

#[test]
fn the_cost_model_prefers_kpoint_groups_and_always_picks_a_valid_layout() {
    for ranks in 1..=48 {
        if valid_layouts(ranks, &P).is_empty() {
            continue;
        }
        let l = resolve_layout(ranks, &LayoutRequest::auto(P)).unwrap();
        assert!(check_layout(ranks, l.kpoint_groups, l.band_groups, &P).is_ok());
        assert_eq!(advise(ranks, &P)[0].0, (l.kpoint_groups, l.band_groups));
    }
    let l = resolve_layout(4, &LayoutRequest::auto(P)).unwrap();
    assert_eq!(l.kpoint_groups, 4);
}

fn grid(
    n: usize,
    per_node: usize,
    order: RankOrder,
    placement: Placement,
) -> Vec<(usize, usize, usize, usize)> {
    Threads::builder(n).ranks_per_node(per_node).run(|c| {
        let world = c.into_arc();
        let r = LayoutRequest {
            order,
            placement,
            ..req(Some(2), Some(2))
        };
        let t = Topology::new(world.clone(), &r).unwrap();
        // Every level sums correctly.
        let mut v = [1u64];
        t.gvector.allreduce_sum(&mut v, CommClass::GVector);
        assert_eq!(v[0] as usize, t.layout.gvector_groups);
        t.band.allreduce_sum(&mut v, CommClass::Band);
        t.inter_kpoint.allreduce_sum(&mut v, CommClass::Kpoint);
        assert_eq!(v[0] as usize, n);
        assert_eq!(t.kgroup.size(), n / 2);
        (t.logical_rank, t.kpoint_group, t.band_group, t.gvector_rank)
    })
}

#[test]
fn rank_order_g_consecutive_vs_band_consecutive() {
    let g = grid(8, 8, RankOrder::GConsecutive, Placement::Smp);
    // (logical, k, band, g): ranks 0,1 share a band group.
    assert_eq!(
        &g[..4],
        &[(0, 0, 0, 0), (1, 0, 0, 1), (2, 0, 1, 0), (3, 0, 1, 1)]
    );
    let b = grid(8, 8, RankOrder::BandConsecutive, Placement::Smp);
    assert_eq!(
        &b[..4],
        &[(0, 0, 0, 0), (1, 0, 1, 0), (2, 0, 0, 1), (3, 0, 1, 1)]
    );
}

#[test]
fn folded_placement_puts_consecutive_logical_ranks_on_different_nodes() {
    let f = grid(8, 4, RankOrder::GConsecutive, Placement::Folded);
    // Nodes {0..3} and {4..7}: logical order 0,4,1,5,2,6,3,7.
    let logical: Vec<usize> = f.iter().map(|t| t.0).collect();
    assert_eq!(logical, vec![0, 2, 4, 6, 1, 3, 5, 7]);
    let smp = grid(8, 4, RankOrder::GConsecutive, Placement::Smp);
    assert_eq!(
        smp.iter().map(|t| t.0).collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
}

#[test]
fn topology_errors_are_the_same_on_every_rank() {
    let errs = Threads::run(6, |c| {
        Topology::new(c.into_arc(), &req(Some(4), None))
            .unwrap_err()
            .to_string()
    });
    assert!(errs.windows(2).all(|w| w[0] == w[1]));
    assert!(
        errs[0].contains("4 k-point groups do not divide 6 ranks"),
        "{}",
        errs[0]
    );
}
