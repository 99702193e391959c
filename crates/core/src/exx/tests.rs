//! The exchange operator and its compressed form against a direct plane-wave build.

use super::ace::Ace;
use super::kernel::{CoulombKernel, KernelSpec};
use super::operator::{apply, scaled_kernel_at, Pairing};
use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use crate::model::Model;
use num_complex::Complex64;
use planewave_linalg::{cholesky_orthonormalise, overlap, Mat};
use std::collections::HashMap;

fn model(case: &str) -> Model {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(case);
    let spec = crate::input::load(&path).unwrap_or_else(|e| panic!("{e}"));
    crate::setup::build(spec)
        .unwrap_or_else(|e| panic!("{e}"))
        .model
}

/// The whole sphere's coefficients of column `j` by Miller index (the mirror half added for
/// Γ-real bands).
fn coefficients<T: BandScalar>(
    kpt: &Kpoint,
    psi: &Mat<T>,
    j: usize,
) -> HashMap<[i32; 3], Complex64> {
    let pw = T::to_plane_waves(kpt, psi, &[j]);
    let mut c = HashMap::new();
    for (h, m) in kpt.millers.iter().enumerate() {
        c.insert(*m, pw[(h, 0)]);
        if kpt.is_gamma_real() {
            c.insert(m.map(|x| -x), pw[(h, 0)].conj());
        }
    }
    c
}

/// `<a|V_x|b> = -(frac/Omega) sum_j x_j sum_G v(G) C_bj(G) C_aj(G)*`, with the pair
/// coefficients `C_ij(G) = sum_G1 c_j(G1)* c_i(G1 + G)` summed directly.
fn direct<T: BandScalar>(
    basis: &Basis,
    kernel: &CoulombKernel,
    psi: &Mat<T>,
    x: &[f64],
    frac: f64,
) -> Mat<Complex64> {
    let kpt = &basis.kpoints[0];
    let c: Vec<_> = (0..psi.ncols())
        .map(|j| coefficients(kpt, psi, j))
        .collect();
    let pair = |i: usize, j: usize, g: [i32; 3]| -> Complex64 {
        c[j].iter()
            .filter_map(|(m, cj)| {
                let shifted = [m[0] + g[0], m[1] + g[1], m[2] + g[2]];
                c[i].get(&shifted).map(|ci| cj.conj() * ci)
            })
            .sum()
    };
    let nb = psi.ncols();
    let mut out = Mat::<Complex64>::zeros(nb, nb);
    for (j, &xj) in x.iter().enumerate() {
        for g in &basis.rho_millers {
            let v = kernel.at(g.map(f64::from));
            let cj: Vec<Complex64> = (0..nb).map(|i| pair(i, j, *g)).collect();
            for a in 0..nb {
                for b in 0..nb {
                    out[(a, b)] -= frac / basis.volume * xj * v * cj[b] * cj[a].conj();
                }
            }
        }
    }
    out
}

/// A band-matrix element as a complex number.
fn complex<T: BandScalar>(z: T) -> Complex64 {
    Complex64::new(z.real(), (z * T::from_re_im(0.0, -1.0)).real())
}

/// `<a|V_x|b>` from the operator against the direct sum, for four random orthonormal bands
/// with occupations 1, 1, 1/2, 0; and the compressed operator on those bands.
fn check<T: BandScalar>(model: &Model, basis: &Basis, screening: Option<f64>) {
    let kpt = &basis.kpoints[0];
    let spec = KernelSpec {
        screening,
        x_gamma_extrapolation: true,
        q_grid: [1, 1, 1],
    };
    let kernel = CoulombKernel::new(spec, &model.crystal, basis.ecut, 4.0 * basis.ecut);
    let nb = 4;
    let mut psi = T::random(kpt, &(0..nb).collect::<Vec<_>>(), 7);
    cholesky_orthonormalise(psi.as_mut()).expect("independent bands");
    let x = [1.0, 1.0, 0.5, 0.0];
    let frac = 0.25;
    let v = scaled_kernel_at(basis, &kernel, frac, [0.0; 3], 1);
    let own = Pairing::own(basis, kpt, &v, psi.as_ref(), &x);
    let w = apply(basis, kpt, psi.as_ref(), |u, w| own.accumulate(basis, u, w));
    let built = overlap(psi.as_ref(), w.as_ref());
    let want = direct(basis, &kernel, &psi, &x[..3], frac);
    let big = (0..nb).map(|i| want[(i, i)].norm()).fold(0.0, f64::max);
    for a in 0..nb {
        for b in 0..nb {
            let got = complex(built[(a, b)]);
            assert!(
                (got - want[(a, b)]).norm() < 1e-12 * big,
                "<{a}|V_x|{b}>: {got} against {}",
                want[(a, b)]
            );
        }
    }
    // The compressed operator equals V_x on the bands it was built from.
    let ace = Ace::new(kpt, psi.as_ref(), w.clone()).expect("negative definite");
    let mut on_psi = Mat::<T>::zeros(psi.nrows(), nb);
    ace.apply_add(kpt, psi.as_ref(), on_psi.as_mut());
    let e = ace.band_energies(kpt, psi.as_ref());
    for j in 0..nb {
        for i in 0..psi.nrows() {
            assert!((on_psi[(i, j)] - w[(i, j)]).abs2().sqrt() < 1e-12 * big.sqrt());
        }
        assert!((e[j] - want[(j, j)].re).abs() < 1e-12 * big);
    }
}

#[test]
fn exchange_operator_matches_the_direct_sum() {
    let model = model("qe/si2_lda_gth/pw.in");
    let ecut = 3.0;
    check::<f64>(&model, &Basis::gamma_real(&model, ecut), None);
    check::<Complex64>(&model, &Basis::new(&model, ecut, &[([0.0; 3], 1.0)]), None);
    // Off Γ the pairs of one k-point carry no phase: q = 0 whatever k.
    let k = [0.25, -0.125, 0.5];
    check::<Complex64>(&model, &Basis::new(&model, ecut, &[(k, 1.0)]), Some(0.106));
}
