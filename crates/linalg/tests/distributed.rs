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

#[test]
fn selected_bands_move_to_their_new_owners() {
    // 7 bands picked in a scrambled order (with one left out) on 1..4 ranks.
    let cols = [5usize, 0, 6, 3, 2, 1];
    for p in 1..=4 {
        let out = Threads::run(p, |comm| {
            let comm = comm.into_arc();
            let a = test_matrix::<c64>(9, 7, 3);
            let b = BandDistBlock::from_global(comm.clone(), a.as_ref());
            let picked = b.select(&cols).to_global();
            let norms: Vec<f64> = (0..b.local().ncols())
                .map(|l| b.local().col(l).norm_l2())
                .collect();
            (a, picked, b.gather_values(&norms))
        });
        for (a, picked, norms) in out {
            for (c, &j) in cols.iter().enumerate() {
                for i in 0..9 {
                    assert_eq!(picked[(i, c)], a[(i, j)], "{p} ranks, band {c}");
                }
            }
            for (j, n) in norms.iter().enumerate() {
                assert!((n - a.col(j).norm_l2()).abs() < 1e-14, "{p} ranks");
            }
        }
    }
}

#[test]
fn stacked_products_equal_the_products_of_the_whole_blocks() {
    // Blocks of 5, 3 and 1 bands side by side, against a block of 4, on 1..4 ranks.
    use planewave_linalg::{overlap_stack, rotate_stack};
    let sizes = [5usize, 3, 1];
    let parts: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| test_matrix::<c64>(11, n, 10 + i as u64))
        .collect();
    let other = test_matrix::<c64>(11, 4, 20);
    let x = test_matrix::<c64>(9, 6, 21);
    let whole = planewave_linalg::Mat::from_fn(11, 9, |i, j| {
        let (mut b, mut c) = (0, j);
        while c >= sizes[b] {
            c -= sizes[b];
            b += 1;
        }
        parts[b][(i, c)]
    });
    let want_s = whole.adjoint() * &other;
    let want_y = &whole * &x;
    for p in 1..=4 {
        for algo in BandAlgorithm::ALL {
            let out = Threads::run(p, |comm| {
                let comm = comm.into_arc();
                let blocks = dealt(&comm, &parts);
                let refs: Vec<_> = blocks.iter().collect();
                let o = BandDistBlock::from_global(comm.clone(), other.as_ref());
                let s = overlap_stack(&refs, &o, algo);
                let y = rotate_stack(&refs, x.as_ref(), algo).to_global();
                (s, y)
            });
            for (s, y) in out {
                assert!(
                    (&s - &want_s).norm_l2() < 1e-12,
                    "{p} ranks {algo}: overlap"
                );
                assert!(
                    (&y - &want_y).norm_l2() < 1e-12,
                    "{p} ranks {algo}: rotation"
                );
            }
        }
    }
}

#[test]
fn rotations_of_tall_blocks_reuse_one_scratch() {
    // Tall enough that a reduced rotation runs in several row slabs (the last one short), and
    // two rotations of different widths through one scratch: nothing of the first leaks into
    // the second.
    use planewave_linalg::{rotate_stack_into, BandScratch};
    let (npw, sizes) = (3001, [150usize, 100, 50]);
    let parts: Vec<_> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| test_matrix::<f64>(npw, n, 30 + i as u64))
        .collect();
    let xs = [
        test_matrix::<f64>(300, 300, 40),
        test_matrix::<f64>(300, 7, 41),
    ];
    let whole = planewave_linalg::Mat::from_fn(npw, 300, |i, j| {
        let b = j / 150 + usize::from(j >= 250);
        parts[b][(i, j - [0, 150, 250][b])]
    });
    for p in [1, 3] {
        for algo in BandAlgorithm::ALL {
            let out = Threads::run(p, |comm| {
                let comm = comm.into_arc();
                let blocks = dealt(&comm, &parts);
                let refs: Vec<_> = blocks.iter().collect();
                let mut scratch = BandScratch::new();
                xs.iter()
                    .map(|x| {
                        let n = band_count(x.ncols(), p, comm.rank());
                        let mut y = planewave_linalg::Mat::<f64>::zeros(npw, n);
                        rotate_stack_into(&refs, x.as_ref(), algo, &mut scratch, y.as_mut());
                        BandDistBlock::new(comm.clone(), npw, x.ncols(), y).to_global()
                    })
                    .collect::<Vec<_>>()
            });
            for ys in out {
                for (y, x) in ys.iter().zip(&xs) {
                    let want = &whole * x;
                    let err = (y - &want).norm_l2() / want.norm_l2();
                    assert!(err < 1e-13, "{p} ranks {algo}: {err}");
                }
            }
        }
    }
}

#[test]
fn triangular_rotations_read_only_the_upper_triangle() {
    // Several panels per owner and several row slabs; X's lower triangle is garbage that no
    // algorithm may read, and one scratch serves two widths.
    use planewave_linalg::{rotate_upper_into, BandScratch};
    let npw = 2100;
    for nb in [150usize, 7] {
        let a = test_matrix::<c64>(npw, nb, 50);
        let x = test_matrix::<c64>(nb, nb, 51);
        let triu = planewave_linalg::Mat::from_fn(nb, nb, |i, j| {
            if i <= j {
                x[(i, j)]
            } else {
                c64::new(0.0, 0.0)
            }
        });
        let want = &a * &triu;
        for p in [1, 2, 3] {
            for algo in BandAlgorithm::ALL {
                let out = Threads::run(p, |comm| {
                    let comm = comm.into_arc();
                    let b = BandDistBlock::from_global(comm.clone(), a.as_ref());
                    let mut scratch = BandScratch::new();
                    let n = band_count(nb, p, comm.rank());
                    let mut y = planewave_linalg::Mat::<c64>::zeros(npw, n);
                    for _ in 0..2 {
                        rotate_upper_into(&b, x.as_ref(), algo, &mut scratch, y.as_mut());
                    }
                    BandDistBlock::new(comm.clone(), npw, nb, y).to_global()
                });
                for y in out {
                    let err = (&y - &want).norm_l2() / want.norm_l2();
                    assert!(err < 1e-13, "{nb} bands, {p} ranks {algo}: {err}");
                }
            }
        }
    }
}

/// Every matrix of `parts` dealt over `comm`'s ranks.
fn dealt<T: planewave_linalg::Scalar>(
    comm: &std::sync::Arc<dyn planewave_comm::Communicator>,
    parts: &[planewave_linalg::Mat<T>],
) -> Vec<BandDistBlock<T>> {
    parts
        .iter()
        .map(|m| BandDistBlock::from_global(comm.clone(), m.as_ref()))
        .collect()
}
