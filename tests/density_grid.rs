//! The density grid's transforms (`planewave_core::rho_grid`) give the same coefficients and
//! values whether two real fields share a complex transform or go one by one, and whether the
//! grid is whole (one process) or dealt over a G-vector group of in-process ranks (slab with
//! mirror-paired sticks for the Γ point, the decomposition's choice for k-points); and a field
//! taken to the grid and back is unchanged.

mod common;

use num_complex::Complex64;
use planewave::comm::{Communicator, Solo, Threads};
use planewave::core::basis::Basis;
use planewave::core::{input, setup};
use std::sync::Arc;

fn basis_on(case: &str, world: Arc<dyn Communicator>) -> Basis {
    let path = common::case_input(case);
    let mut spec = input::load(&path).unwrap_or_else(|e| panic!("{e}"));
    spec.parallel.kpoint_groups = Some(1);
    setup::build_on(spec, world)
        .unwrap_or_else(|e| panic!("{e}"))
        .basis
}

/// A smooth real field at this rank's grid points, different for each `seed`: the values of
/// a few plane waves, made from the sphere entries so that every layout builds the same field.
fn field(basis: &Basis, seed: f64) -> Vec<f64> {
    let coeffs: Vec<Complex64> = basis
        .rho_millers
        .iter()
        .map(|m| {
            let k = (m[0] * 7 + m[1] * 3 + m[2]) as f64;
            let mine = Complex64::new((seed * k).sin(), (seed * k + 1.0).cos());
            let mirror = {
                let k = -k;
                Complex64::new((seed * k).sin(), (seed * k + 1.0).cos())
            };
            // Hermitian: c(-G) = c(G)*.
            0.5 * (mine + mirror.conj()) / (1.0 + m.iter().map(|x| x * x).sum::<i32>() as f64)
        })
        .collect();
    basis.rho_to_real(&coeffs)
}

fn max_diff(a: &[Complex64], b: &[Complex64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm())
        .fold(0.0, f64::max)
}

/// Pairs against one by one, and back and forth, on this rank; returns the coefficients of the
/// three fields in global order (to compare layouts).
fn check(basis: &Basis) -> Vec<Vec<Complex64>> {
    let f: Vec<Vec<f64>> = (1..=3).map(|s| field(basis, 0.37 * s as f64)).collect();
    let refs: Vec<&[f64]> = f.iter().map(Vec::as_slice).collect();
    let many = basis.rho_to_sphere_many(&refs);
    for (g, r) in many.iter().zip(&f) {
        let one = basis.rho_to_sphere(r);
        assert!(
            max_diff(g, &one) < 1e-14,
            "paired forward transform differs"
        );
    }
    let grefs: Vec<&[Complex64]> = many.iter().map(Vec::as_slice).collect();
    let back = basis.rho_to_real_many(&grefs);
    for (b, r) in back.iter().zip(&f) {
        let d = b
            .iter()
            .zip(r)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(d < 1e-13, "back and forth changes the field by {d:.1e}");
    }
    many.iter().map(|g| basis.rho_gather(g)).collect()
}

fn same_on_every_layout(case: &str, ranks: &[usize]) {
    let whole = check(&basis_on(case, Arc::new(Solo)));
    for &n in ranks {
        let all = Threads::run(n, |c| {
            let b = basis_on(case, c.into_arc());
            assert!(
                b.rho_dist.is_some(),
                "{case} on {n} ranks: the grid is dealt"
            );
            (b.rho_mirror.is_some(), check(&b))
        });
        // Pairing changes the number of collective transforms: all ranks pair or none does.
        assert!(
            all.iter().all(|(paired, _)| *paired == all[0].0),
            "{case} on {n} ranks: ranks disagree on pairing"
        );
        for (_, got) in all {
            for (a, b) in got.iter().zip(&whole) {
                assert!(max_diff(a, b) < 1e-14, "{case} on {n} ranks differs");
            }
        }
    }
}

#[test]
fn gamma_point_grid_transforms_agree_in_every_layout() {
    same_on_every_layout("si8_pbe_nlcc_gamma", &[2, 3]);
}

#[test]
fn kpoint_grid_transforms_agree_in_every_layout() {
    same_on_every_layout("si2_lda_gth", &[2, 4]);
}
