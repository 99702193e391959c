//! H|psi> on a block of bands (criterion): Si8 at Γ, 20 bands, 36^3 grid, with the general complex
//! path and the Γ-point real path (two bands per FFT) measured side by side, so the printed
//! ratio is the real path's gain in the same run.
//!
//! `cargo bench --bench hamiltonian`

use criterion::{criterion_group, criterion_main, Criterion};
use num_complex::Complex64;
use planewave::core::bands::BandScalar;
use planewave::core::basis::Basis;
use planewave::core::hamiltonian::KHamiltonian;
use planewave::core::terms::{local::LocalPotential, nonlocal::KProjectors};
use planewave::core::{input, setup};
use planewave::linalg::Mat;
use std::path::PathBuf;

fn block<T: BandScalar>(basis: &Basis, nb: usize) -> Mat<T> {
    T::random(&basis.kpoints[0], &(0..nb).collect::<Vec<_>>(), 7)
}

fn bench_hpsi(c: &mut Criterion) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/qe/si8_lda_gth_displaced/pw.in");
    let spec = input::load(&path).expect("valid input");
    let s = setup::build(spec).expect("valid set-up");
    let nb = s.params.nbands;
    let complex = Basis::new(&s.model, s.basis.ecut, &[([0.0; 3], 1.0)]);
    let real = Basis::gamma_real(&s.model, s.basis.ecut);
    let mut g = c.benchmark_group("hpsi_si8_gamma");
    g.sample_size(20);
    {
        let v = LocalPotential::new(&s.model, &complex).values_r;
        let p = KProjectors::<Complex64>::new(&s.model, &complex.kpoints[0], complex.volume);
        let h = KHamiltonian::new(&complex.kpoints[0], &complex.fft, &v, &p);
        let x = block::<Complex64>(&complex, nb);
        g.bench_function(format!("complex_{nb}_bands"), |b| {
            b.iter(|| h.apply_new(x.as_ref()))
        });
    }
    {
        let v = LocalPotential::new(&s.model, &real).values_r;
        let p = KProjectors::<f64>::new(&s.model, &real.kpoints[0], real.volume);
        let h = KHamiltonian::new(&real.kpoints[0], &real.fft, &v, &p);
        let x = block::<f64>(&real, nb);
        g.bench_function(format!("gamma_real_{nb}_bands"), |b| {
            b.iter(|| h.apply_new(x.as_ref()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_hpsi);
criterion_main!(benches);
