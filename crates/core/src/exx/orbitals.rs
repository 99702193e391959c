//! The occupied orbitals of every irreducible (spin, k) block, on every rank, and their images
//! at k + q (QE's `exxinit`, which gathers the orbitals of all pools).
//!
//! Contract: [`Sources::gather`] is collective on the world: each block's owner (its k-point
//! group's first band group; each rank its own plane waves of a G-vector group) puts its rows
//! into a whole-sphere matrix that is zero elsewhere, and one sum over the world gives every
//! rank every block, bit for bit (each entry is one owner's value plus zeros).
//! [`Sources::fields`] builds an image's periodic parts on the density sphere (which holds
//! every k' + G of the wavefunction cutoff) and transforms them to this rank's grid points,
//! collective on the G-vector group.

use super::kq::Image;
use super::operator::EPS_OCCUPATION;
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use crate::occupation::Occupations;
use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt};
use planewave_linalg::Mat;

/// One block's occupied orbitals over its whole sphere.
struct Source {
    /// The sphere's Miller indices, in the k-point's global order.
    millers: Vec<[i32; 3]>,
    /// Coefficients, `millers.len() x` occupied bands.
    coeffs: Mat<Complex64>,
    /// Occupations per spin of those bands.
    occupations: Vec<f64>,
}

/// The occupied orbitals of every irreducible (spin, k) block.
pub struct Sources {
    /// Per spin channel and k-point.
    blocks: Vec<Vec<Source>>,
}

impl Sources {
    /// Every block's occupied bands (complex bands only: a q grid needs k-points) from the
    /// blocks this rank holds. Collective on the world.
    pub fn gather<T: BandScalar>(
        model: &Model,
        basis: &Basis,
        psi: &[Vec<Mat<T>>],
        occ: &Occupations,
    ) -> Self {
        let par = &*basis.parallel;
        let gmax = (2.0 * basis.ecut).sqrt();
        let mut blocks = Vec::with_capacity(psi.len());
        for (s, psi_s) in psi.iter().enumerate() {
            let mut row = Vec::with_capacity(psi_s.len());
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                assert!(!kpt.is_gamma_real(), "a q grid needs complex bands");
                let millers: Vec<[i32; 3]> = crate::basis::sphere(&model.crystal, kpt.frac, gmax)
                    .into_iter()
                    .map(|p| p.0)
                    .collect();
                let x: Vec<f64> = occ.occ[s][k]
                    .iter()
                    .map(|f| f / model.max_occupation())
                    .collect();
                let kept: Vec<usize> = (0..x.len()).filter(|&j| x[j] > EPS_OCCUPATION).collect();
                let mut flat = vec![Complex64::new(0.0, 0.0); millers.len() * kept.len()];
                if par.owns(s, k) {
                    // Every band on each band group; band group 0 contributes them.
                    let all = super::outer::all_bands(par, psi_s[k].clone(), x.len());
                    let local = T::to_plane_waves(kpt, &all, &kept);
                    let mine = par.band_comm().rank() == 0;
                    let rows: Vec<usize> = match &kpt.dist {
                        Some(d) => d.local_plane_waves().to_vec(),
                        None => (0..kpt.npw()).collect(),
                    };
                    for j in (0..kept.len()).filter(|_| mine) {
                        for (h, &g) in rows.iter().enumerate() {
                            flat[g + j * millers.len()] = local[(h, j)];
                        }
                    }
                }
                par.world().allreduce_sum(&mut flat, CommClass::Other);
                let n = millers.len();
                row.push(Source {
                    coeffs: Mat::from_fn(n, kept.len(), |i, j| flat[i + j * n]),
                    occupations: kept.iter().map(|&j| x[j]).collect(),
                    millers,
                });
            }
            blocks.push(row);
        }
        Self { blocks }
    }

    /// The occupied orbitals of spin `s` at the image `im` (periodic parts relative to
    /// k + q at this rank's grid points) and their occupations per spin. Collective on the
    /// G-vector group.
    pub fn fields<T: BandScalar>(
        &self,
        basis: &Basis,
        s: usize,
        im: &Image,
    ) -> (Vec<Vec<T>>, Vec<f64>) {
        let src = &self.blocks[s][im.source];
        let p = basis.kpoints[im.source].frac;
        let index = crate::rho_grid::miller_index(&basis.rho_millers);
        let mut out = Vec::with_capacity(src.coeffs.ncols());
        for j in 0..src.coeffs.ncols() {
            let mut field = vec![Complex64::new(0.0, 0.0); basis.rho_millers.len()];
            for (h, m) in src.millers.iter().enumerate() {
                let (g, z) = im.map(p, *m, src.coeffs[(h, j)]);
                if let Some(&i) = index.get(&g) {
                    field[i] = z;
                }
            }
            let u = basis.rho_backward(&field);
            out.push(u.iter().map(|z| T::from_re_im(z.re, z.im)).collect());
        }
        (out, src.occupations.clone())
    }
}
