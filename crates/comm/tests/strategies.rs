//! Every all-to-all-v strategy gives bit-identical results (to native and to the expected
//! data) and every reduce-scatter algorithm equal results, on `Threads` with 1..8 ranks,
//! random uneven counts including zeros, and several emulated node sizes.

use num_complex::Complex64;
use planewave_comm::reduce_scatter::{reduce_scatter, ReduceScatterAlgorithm};
use planewave_comm::ring::{Ring, RingOrder};
use planewave_comm::selfcheck::{alltoallv_case, random_counts, SplitMix};
use planewave_comm::strategies::{alltoallv_choice, AlltoallvChoice};
use planewave_comm::{AlltoallvAlgorithm, CommClass, ReduceOp, Threads};

#[test]
fn all_strategies_bit_identical_on_random_uneven_counts() {
    for n in 1..=8 {
        for per_node in [1, 2, 3, n] {
            let ok = Threads::builder(n).ranks_per_node(per_node).run(|c| {
                let comm = c.into_arc();
                let me = comm.rank();
                let strategies: Vec<_> = AlltoallvAlgorithm::ALL
                    .iter()
                    .map(|a| a.build(comm.clone()))
                    .collect();
                for seed in 0..6u64 {
                    let m = random_counts(n, 1000 * seed + n as u64, 50);
                    let (send, sc, rc, expect) = alltoallv_case(&m, me);
                    let native = strategies[0].alltoallv(&send, &sc, &rc, CommClass::GVector);
                    assert_eq!(native, expect);
                    for s in &strategies[1..] {
                        let got: Vec<Complex64> = s.alltoallv(&send, &sc, &rc, CommClass::GVector);
                        let same_bits = got.len() == native.len()
                            && got.iter().zip(&native).all(|(a, b)| {
                                a.re.to_bits() == b.re.to_bits() && a.im.to_bits() == b.im.to_bits()
                            });
                        assert!(same_bits, "{} differs on {n} ranks (seed {seed})", s.name());
                    }
                    // f64 and u8 data too.
                    let fsend: Vec<f64> = send.iter().map(|z| z.re).collect();
                    let bsend: Vec<u8> = send.iter().map(|z| z.re as u8).collect();
                    let fexp: Vec<f64> = expect.iter().map(|z| z.re).collect();
                    let bexp: Vec<u8> = expect.iter().map(|z| z.re as u8).collect();
                    for s in &strategies {
                        assert_eq!(s.alltoallv(&fsend, &sc, &rc, CommClass::GVector), fexp);
                        assert_eq!(s.alltoallv(&bsend, &sc, &rc, CommClass::GVector), bexp);
                    }
                }
                true
            });
            assert!(ok.into_iter().all(|b| b));
        }
    }
}

#[test]
fn all_zero_counts_work() {
    for n in 1..=5 {
        Threads::builder(n).ranks_per_node(2).run(|c| {
            let comm = c.into_arc();
            for a in AlltoallvAlgorithm::ALL {
                let s = a.build(comm.clone());
                let z = vec![0usize; n];
                assert!(s.alltoallv::<f64>(&[], &z, &z, CommClass::Other).is_empty());
            }
        });
    }
}

#[test]
fn reduce_scatter_algorithms_agree() {
    for n in 1..=8 {
        Threads::run(n, |c| {
            let comm = c.into_arc();
            let mut g = SplitMix(77 + n as u64);
            let counts: Vec<usize> = (0..n).map(|_| g.below(6)).collect();
            let mut mine = SplitMix(comm.rank() as u64 * 31 + 5);
            let send: Vec<f64> = (0..counts.iter().sum::<usize>())
                .map(|_| mine.next_u64() as f64 / u64::MAX as f64 - 0.5)
                .collect();
            let results: Vec<Vec<f64>> = ReduceScatterAlgorithm::ALL
                .iter()
                .map(|&a| reduce_scatter(&*comm, a, &send, &counts, ReduceOp::Sum, CommClass::Band))
                .collect();
            for r in &results[1..] {
                assert_eq!(r.len(), results[0].len());
                for (x, y) in r.iter().zip(&results[0]) {
                    assert!((x - y).abs() <= 1e-14 * (1.0 + y.abs()), "{x} vs {y}");
                }
            }
            let imax = reduce_scatter(
                &*comm,
                ReduceScatterAlgorithm::AlltoallSum,
                &vec![comm.rank() as i64; counts.iter().sum()],
                &counts,
                ReduceOp::Max,
                CommClass::Band,
            );
            assert!(imax.iter().all(|&v| v == n as i64 - 1));
        });
    }
}

#[test]
fn odd_even_ring_shortens_the_longest_hop() {
    for n in 3..=16 {
        let natural = Ring::new(n, 0, RingOrder::Natural);
        let oddeven = Ring::new(n, 0, RingOrder::OddEven);
        assert_eq!(natural.longest_hop(), n - 1);
        assert!(oddeven.longest_hop() <= 2, "{n}: {:?}", oddeven.cycle());
        let mut sorted = oddeven.cycle().to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
    }
    assert_eq!(
        Ring::new(6, 0, RingOrder::OddEven).cycle(),
        &[0, 2, 4, 5, 3, 1]
    );
}

#[test]
fn strategy_names_parse_and_config_wins() {
    for a in AlltoallvAlgorithm::ALL {
        assert_eq!(a.name().parse::<AlltoallvAlgorithm>().unwrap(), a);
    }
    assert!("bogus".parse::<AlltoallvAlgorithm>().is_err());
    assert_eq!(
        alltoallv_choice(Some("auto")).unwrap(),
        AlltoallvChoice::Autotune
    );
    assert_eq!(
        alltoallv_choice(Some("pairwise")).unwrap(),
        AlltoallvChoice::Fixed(AlltoallvAlgorithm::Pairwise)
    );
}

#[test]
fn autotune_picks_the_same_strategy_on_every_rank() {
    let chosen = Threads::run(4, |c| {
        let comm = c.into_arc();
        let counts = vec![64usize; 4];
        let (s, report) = planewave_comm::strategies::autotune::autotune_alltoallv(
            &comm,
            &AlltoallvAlgorithm::ALL,
            &counts,
            &counts,
            2,
            false,
        );
        assert_eq!(report.timings.len(), AlltoallvAlgorithm::ALL.len());
        assert_eq!(s.algorithm(), report.chosen);
        report.chosen
    });
    assert!(chosen.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn calls_are_recorded_per_class() {
    Threads::run(3, |c| {
        let comm = c.into_arc();
        let before = comm.stats().get(CommClass::Kpoint).calls;
        let mut x = [1.0];
        comm.allreduce_sum_f64(&mut x, CommClass::Kpoint);
        let s = comm.stats().get(CommClass::Kpoint);
        assert_eq!(s.calls, before + 1);
        assert!(s.bytes >= 8 && s.seconds >= s.wait_seconds);
        // Split communicators share the rank's statistics.
        let sub = comm.split(Some(0), 0).unwrap();
        sub.barrier(CommClass::Band);
        assert!(comm.stats().get(CommClass::Band).calls >= 1);
    });
}
