//! Every distributed operation against its serial counterpart on `Threads` with 1..8 ranks
//! (uneven coefficient counts, ranks owning no rows or no bands), through the shared
//! self-check, plus direct checks of the layouts.

use planewave_comm::{AlltoallvAlgorithm, Threads};
use planewave_linalg::partition::{band_count, RowPartition};
use planewave_linalg::selfcheck::{run_selfcheck, test_matrix};
use planewave_linalg::{c64, BandAlgorithm, BandDistBlock, GDistBlock, RingOrder};

#[test]
fn selfcheck_on_1_to_8_thread_ranks() {
    for p in 1..=8 {
        let out = Threads::run(p, |comm| run_selfcheck(comm.into_arc()));
        for r in out {
            if let Err(e) = r {
                panic!("{p} ranks:\n{e}");
            }
        }
    }
}

#[test]
fn ranks_without_bands_or_rows_take_part() {
    // 3 bands on 6 ranks: ranks 3..5 own no band; rows only on ranks 0 and 5.
    let out = Threads::run(6, |comm| {
        let comm = comm.into_arc();
        let a = test_matrix::<c64>(20, 3, 7);
        let rows = RowPartition::new(vec![12, 0, 0, 0, 0, 8]);
        let g = GDistBlock::from_global(comm.clone(), rows.clone(), a.as_ref());
        let st = AlltoallvAlgorithm::Pairwise.build(comm.clone());
        let mut b = g.to_band(&*st);
        assert_eq!(b.local().ncols(), band_count(3, 6, comm.rank()));
        b.orthonormalise(BandAlgorithm::Ring(RingOrder::OddEven))
            .unwrap();
        let s = BandDistBlock::overlap(&b, &b, BandAlgorithm::Ring(RingOrder::Natural));
        let back = b.to_g(&rows, &*st);
        (s, back.to_global())
    });
    for (s, _) in &out {
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((s[(i, j)] - c64::new(want, 0.0)).norm() < 1e-12);
            }
        }
    }
}
