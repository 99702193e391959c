//! Distributed and serial transforms agree to 1e-12 (relative) for every decomposition, every
//! all-to-all-v strategy and band blocks of 1, 4 and 16 bands, on `Threads` with 1..8 ranks
//! and random spheres (Γ-point and general k), including grids with fewer z-planes than ranks.

use planewave_comm::Threads;

use planewave_fft::selfcheck::{check_case, run_fft_selfcheck, CheckCase, BAND_BLOCKS};
use planewave_fft::{DistFft, DistFftOptions, FftGrid, ProcessGrid};

#[test]
fn every_decomposition_and_strategy_matches_serial_on_1_to_8_ranks() {
    for n in 1..=8 {
        let out = Threads::builder(n)
            .ranks_per_node(2)
            .run(|c| run_fft_selfcheck(c.into_arc(), &[n as u64, 100 + n as u64]));
        let summaries: Vec<String> = out.into_iter().map(|r| r.unwrap()).collect();
        assert!(summaries[0].contains("agree"), "{}", summaries[0]);
        println!("{}", summaries[0]);
    }
}

#[test]
fn more_ranks_than_planes_goes_pencil_and_matches() {
    let case = CheckCase {
        dims: [12, 10, 5],
        kpoint: [0.1, -0.3, 0.25],
        fraction: 0.8,
        seed: 7,
    };
    for n in [6, 7, 8] {
        let grids = Threads::run(n, |c| {
            let comm = c.into_arc();
            let opts = DistFftOptions::default();
            check_case(&comm, &case, &opts, &BAND_BLOCKS).unwrap();
            let plan = DistFft::new(comm, FftGrid { dims: case.dims }, &case.millers(), &opts);
            plan.unwrap().process_grid()
        });
        // Largest slab count <= 5 dividing n: 6 -> 2x3, 7 -> 7x1, 8 -> 2x4.
        let expect = match n {
            6 => ProcessGrid { p1: 2, p2: 3 },
            7 => ProcessGrid { p1: 7, p2: 1 },
            _ => ProcessGrid { p1: 2, p2: 4 },
        };
        assert!(grids.iter().all(|g| *g == expect), "{grids:?}");
    }
}

#[test]
fn layouts_tile_the_grid_and_sticks_are_balanced() {
    let case = CheckCase::random(3, &[8, 9, 10], false);
    let millers = case.millers();
    for n in 1..=8 {
        for d in planewave_fft::selfcheck::decompositions(n) {
            let parts = Threads::run(n, |c| {
                let comm = c.into_arc();
                let opts = DistFftOptions {
                    decomposition: d,
                    ..Default::default()
                };
                let p = DistFft::new(comm.clone(), FftGrid { dims: case.dims }, &millers, &opts)
                    .unwrap();
                let l = p.layout();
                let pts: Vec<usize> = (0..l.len()).map(|i| l.global_index(i)).collect();
                (
                    pts,
                    p.local_g().to_vec(),
                    p.sticks().sticks_of(comm.rank()).len(),
                )
            });
            let mut all: Vec<usize> = parts.iter().flat_map(|p| p.0.clone()).collect();
            all.sort_unstable();
            let len = case.dims.iter().product::<usize>();
            assert_eq!(all, (0..len).collect::<Vec<_>>(), "{d} on {n}");
            let mut g: Vec<usize> = parts.iter().flat_map(|p| p.1.clone()).collect();
            g.sort_unstable();
            assert_eq!(g, (0..millers.len()).collect::<Vec<_>>());
            // Sticks are balanced inside each sub (the whole group for a slab): a pencil deals
            // a sub's planes among its own ranks.
            let pg = d.resolve(n, case.dims).unwrap();
            for a in 0..pg.p1 {
                let st: Vec<usize> = (0..pg.p2).map(|b| parts[pg.rank_of(a, b)].2).collect();
                assert!(
                    st.iter().max().unwrap() - st.iter().min().unwrap() <= 1,
                    "{d} on {n}"
                );
            }
        }
    }
}

#[test]
fn zero_bands_is_a_no_op_on_every_rank() {
    let case = CheckCase::random(5, &[8, 9, 10], true);
    let millers = case.millers();
    let out = Threads::run(3, |c| {
        let comm = c.into_arc();
        let grid = FftGrid { dims: case.dims };
        let mut plan = DistFft::new(comm, grid, &millers, &DistFftOptions::default()).unwrap();
        let (mut real, mut coeffs) = (Vec::new(), Vec::new());
        plan.backward(&[], 0, &mut real);
        plan.forward(&mut real, 0, &mut coeffs);
        plan.backward_bands(&[], 0, 4, &mut real);
        (real.len(), coeffs.len())
    });
    assert!(out.iter().all(|&l| l == (0, 0)), "{out:?}");
}
