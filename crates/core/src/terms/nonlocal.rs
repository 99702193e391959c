//! Nonlocal pseudopotential (Kleinman–Bylander): V_nl = sum_ij |beta_i> D_ij <beta_j|.
//!
//! For each k the projectors of all atoms form one `npw x nproj` matrix
//! P[G, (atom, i, m)] = (1/sqrt(Omega)) (-i)^l Y_lm(k+G) beta_i(|k+G|) e^{-i(k+G).tau},
//! and D is block diagonal (same atom, same m, same l). A block of bands is applied with two GEMMs:
//! V_nl Psi = P (D (P^H Psi)). In the Γ-real representation P is converted column by column
//! (the projectors are real functions, so their coefficients have the +-G symmetry).

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::model::Model;
use crate::special::real_ylm;
use num_complex::Complex64;
use planewave_linalg::{matmul, matmul_into, overlap, Mat, MatMut, MatRef};

/// The projectors of one k-point.
#[derive(Debug, Clone)]
pub struct KProjectors<T: BandScalar> {
    /// dim x nproj projector matrix.
    pub p: Mat<T>,
    /// nproj x nproj coupling matrix (Ha).
    pub d: Mat<T>,
}

impl<T: BandScalar> KProjectors<T> {
    /// Build the projectors of every atom of `model` at k-point `kpt`.
    pub fn new(model: &Model, kpt: &Kpoint, volume: f64) -> Self {
        let npw = kpt.npw();
        // Column layout: for each atom, for each projector i, for each m.
        let mut cols: Vec<(usize, usize, usize)> = Vec::new(); // (atom, proj, m)
        for (a, atom) in model.crystal.atoms.iter().enumerate() {
            let ps = &model.species[atom.species].pseudo;
            for (i, pr) in ps.projectors.iter().enumerate() {
                for m in 0..2 * pr.l + 1 {
                    cols.push((a, i, m));
                }
            }
        }
        let nproj = cols.len();
        let mut p = Mat::<Complex64>::zeros(npw, nproj);
        let qs: Vec<f64> = kpt
            .kpg
            .iter()
            .map(|g| (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt())
            .collect();
        let norm = 1.0 / volume.sqrt();
        let mut col = 0;
        let mut ylm = vec![0.0; 7];
        for atom in model.crystal.atoms.iter() {
            let ps = &model.species[atom.species].pseudo;
            let tau = model.crystal.to_cartesian(&atom.frac);
            // Structure phase e^{-i(k+G).tau}.
            let phase: Vec<Complex64> = kpt
                .kpg
                .iter()
                .map(|g| {
                    Complex64::from_polar(1.0, -(g[0] * tau[0] + g[1] * tau[1] + g[2] * tau[2]))
                })
                .collect();
            for (i, pr) in ps.projectors.iter().enumerate() {
                let l = pr.l;
                let radial = ps.projector_fourier_many(i, &qs);
                let il = Complex64::new(0.0, -1.0).powi(l as i32);
                let first = col;
                for (ig, g) in kpt.kpg.iter().enumerate() {
                    real_ylm(l, *g, &mut ylm);
                    let base = phase[ig] * il * (radial[ig] * norm);
                    for m in 0..2 * l + 1 {
                        p[(ig, first + m)] = base * ylm[m];
                    }
                }
                col += 2 * l + 1;
            }
        }
        debug_assert_eq!(col, nproj);
        let mut d = Mat::<T>::zeros(nproj, nproj);
        for (c1, &(a1, i1, m1)) in cols.iter().enumerate() {
            for (c2, &(a2, i2, m2)) in cols.iter().enumerate() {
                if a1 == a2 && m1 == m2 {
                    let ps = model.pseudo_of_atom(a1);
                    if ps.projectors[i1].l == ps.projectors[i2].l {
                        d[(c1, c2)] = T::from_f64(ps.dij[i1][i2]);
                    }
                }
            }
        }
        Self {
            p: T::from_plane_waves(kpt, &p),
            d,
        }
    }

    /// Number of projector functions.
    pub fn nproj(&self) -> usize {
        self.p.ncols()
    }

    /// `out += V_nl psi` for the block `psi` (npw x nb).
    pub fn apply_add(&self, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        if self.nproj() == 0 {
            return;
        }
        let c = overlap(self.p.as_ref(), psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        matmul_into(out, self.p.as_ref(), dc.as_ref(), true);
    }

    /// `<psi_n|V_nl|psi_n>` for every band of the block.
    pub fn band_energies(&self, psi: MatRef<'_, T>) -> Vec<f64> {
        let nb = psi.ncols();
        if self.nproj() == 0 {
            return vec![0.0; nb];
        }
        let c = overlap(self.p.as_ref(), psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        (0..nb)
            .map(|n| {
                (0..c.nrows())
                    .map(|j| (c[(j, n)].cj() * dc[(j, n)]).real())
                    .sum()
            })
            .collect()
    }
}
