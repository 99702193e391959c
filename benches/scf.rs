//! SCF benchmarks (criterion): the first SCF iterations of Si8 (8 k-points, 20 bands, 36^3 grid)
//! and a converged Si2 run, through the same library calls the CLI makes.
//!
//! `cargo bench --bench scf`

use criterion::{criterion_group, criterion_main, Criterion};
use planewave::core::{input, scf, setup};
use std::path::PathBuf;

fn setup_case(rel: &str, max_iterations: usize) -> setup::Setup {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel);
    let mut spec = input::load(&path).expect("valid input");
    spec.scf.max_iterations = max_iterations;
    setup::build(spec).expect("valid set-up")
}

fn bench_scf(c: &mut Criterion) {
    let mut g = c.benchmark_group("scf");
    g.sample_size(10);
    let si8 = setup_case("qe/si8_lda_gth_displaced/pw.in", 2);
    g.bench_function("si8_first_two_iterations", |b| {
        b.iter(|| scf::run(&si8.model, &si8.basis, &si8.params, |_| {}).expect("runs"))
    });
    let si2 = setup_case("qe/si2_lda_gth/pw.in", 100);
    g.bench_function("si2_converged_1e-10", |b| {
        b.iter(|| scf::run(&si2.model, &si2.basis, &si2.params, |_| {}).expect("runs"))
    });
    g.finish();
}

criterion_group!(benches, bench_scf);
criterion_main!(benches);
