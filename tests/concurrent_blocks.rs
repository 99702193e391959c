//! A rank with threads solves small (spin, k) blocks one per thread
//! (`scf::blocks_concurrently`): the results must be the same bits as one block after the
//! other, on a metal with many k-points (occupations from all of them at every step).

use planewave::core::{scf, setup};
use std::path::PathBuf;

/// (total energy, every eigenvalue, Fermi level) of al1_lda_gth, blocks concurrently or not,
/// on a pool of two threads; asserts which way the blocks were solved.
fn al1(concurrent: bool) -> (f64, Vec<f64>, f64) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/qe/al1_lda_gth/pw.in");
    let spec = planewave::core::input::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut s = setup::build(spec).unwrap_or_else(|e| panic!("{e}"));
    s.params.tuning.concurrent_blocks = concurrent;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool of two threads");
    pool.install(|| {
        let nk = s.basis.kpoints.len();
        assert!(nk > 1, "al1 has {nk} k-points");
        assert_eq!(
            scf::blocks_concurrently(&s.basis, &s.params, nk),
            concurrent
        );
        let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
        assert!(r.converged);
        let eig = r.eigenvalues.iter().flatten().flatten().copied().collect();
        let fermi = r
            .occupations
            .fermi
            .as_ref()
            .expect("a metal has a Fermi level")[0];
        (r.energies.total(), eig, fermi)
    })
}

#[test]
fn small_blocks_one_per_thread_give_the_same_bits() {
    let (e_seq, eig_seq, ef_seq) = al1(false);
    let (e_con, eig_con, ef_con) = al1(true);
    println!("al1: {e_seq:.12} Ha one after the other, {e_con:.12} Ha concurrently");
    assert_eq!(e_seq.to_bits(), e_con.to_bits());
    assert_eq!(ef_seq.to_bits(), ef_con.to_bits());
    assert_eq!(eig_seq.len(), eig_con.len());
    for (a, b) in eig_seq.iter().zip(&eig_con) {
        assert_eq!(a.to_bits(), b.to_bits(), "eigenvalue {a} vs {b}");
    }
}
