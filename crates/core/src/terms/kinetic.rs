//! Kinetic energy: diagonal in plane waves, |k+G|^2/2 (a Fourier-diagonal operator, applied
//! with the real-space ones in [`crate::bands::BandScalar::apply_local`]).

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::operators::Operator;
use planewave_linalg::{Mat, MatRef, Scalar};

/// The kinetic-energy term: energy and stress of the occupied bands.
pub struct Kinetic;

impl<T: BandScalar> Term<T> for Kinetic {
    fn name(&self) -> &'static str {
        "kinetic"
    }

    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        let Some(b) = s.bands else {
            return Some(Share::Whole(0.0));
        };
        let par = &s.basis.parallel;
        let mut e = 0.0;
        for (sp, k) in par.owned_blocks(b.psi.len(), s.basis.kpoints.len()) {
            let t = band_energies(&s.basis.kpoints[k], &b.psi[sp][k]);
            e += t
                .iter()
                .zip(&b.weights[sp][k])
                .map(|(t, w)| w * t)
                .sum::<f64>();
        }
        Some(Share::Blocks(e))
    }

    fn operator<'s>(&'s self, s: &State<'s, T>, (_, k): (usize, usize)) -> Option<Operator<'s, T>> {
        Some(Operator::FourierDiagonal(&s.basis.kpoints[k].kinetic))
    }

    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let b = s.bands?;
        let par = &s.basis.parallel;
        let mut out = [[0.0; 3]; 3];
        par.time_block_work(|| {
            for (sp, k) in par.owned_blocks(b.psi.len(), s.basis.kpoints.len()) {
                let (kpt, w) = (&s.basis.kpoints[k], &b.weights[sp][k]);
                add_stress(kpt, b.psi[sp][k].as_ref(), w, s.basis.volume, &mut out);
            }
        });
        Some(Share::Blocks(out))
    }
}

/// `<psi_n|T|psi_n>` for every band (column) of the block (collective on the k-point's
/// G-vector group).
pub fn band_energies<T: Scalar>(kpt: &Kpoint, psi: &Mat<T>) -> Vec<f64> {
    let mut e: Vec<f64> = (0..psi.ncols())
        .map(|b| {
            psi.col_as_slice(b)
                .iter()
                .zip(&kpt.kinetic)
                .map(|(x, t)| x.abs2() * t)
                .sum()
        })
        .collect();
    kpt.sum_over_g(&mut e);
    e
}

/// Adds the kinetic stress of one k-point, `(1/Omega) sum_n w_n sum_G |c_n(G)|^2 (k+G)_a (k+G)_b`
/// (Ha/bohr^3, QE sign), for band weights `w_n` (k-point weight times occupation). Collective
/// on the k-point's G-vector group.
pub fn add_stress<T: Scalar>(
    kpt: &Kpoint,
    psi: MatRef<'_, T>,
    weights: &[f64],
    volume: f64,
    out: &mut [[f64; 3]; 3],
) {
    // |c|^2 summed over the weighted bands, per band-vector component.
    let mut dens = vec![0.0; kpt.dim()];
    for (b, &w) in weights.iter().enumerate() {
        if w == 0.0 {
            continue;
        }
        for (d, x) in dens.iter_mut().zip(psi.col(b).iter()) {
            *d += w * Scalar::abs2(*x);
        }
    }
    let mut sum = [0.0; 9];
    for (i, d) in dens.iter().enumerate() {
        let q = kpt.kpg[kpt.plane_wave_of_component(i)];
        for a in 0..3 {
            for b in 0..3 {
                sum[3 * a + b] += d * q[a] * q[b] / volume;
            }
        }
    }
    kpt.sum_over_g(&mut sum);
    for (a, row) in out.iter_mut().enumerate() {
        for (b, x) in row.iter_mut().enumerate() {
            *x += sum[3 * a + b];
        }
    }
}
