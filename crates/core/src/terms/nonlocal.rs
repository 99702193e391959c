//! Nonlocal pseudopotential (Kleinman–Bylander): V_nl = sum_ij |beta_i> D_ij <beta_j|.
//!
//! For each k the projectors of all atoms form one `npw x nproj` matrix
//! P[G, (atom, i, m)] = (1/sqrt(Omega)) (-i)^l Y_lm(k+G) beta_i(|k+G|) e^{-i(k+G).tau},
//! and D is block diagonal (same atom, same m, same l). A block of bands is applied with two GEMMs:
//! V_nl Psi = P (D (P^H Psi)). In the Γ-real representation P is converted column by column
//! (the projectors are real functions, so their coefficients have the +-G symmetry).
//! On a k-point dealt over a G-vector group P holds the local rows: P^H psi is a local GEMM plus
//! one sum over the group per band block, so the work splits over G, never by atom.

use super::term::{Bands, Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::model::Model;
use crate::special::real_ylm;
use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt, Communicator};
use planewave_linalg::{matmul, matmul_into, overlap, Mat, MatMut, MatRef};
use std::sync::Arc;

/// The projectors of one k-point.
#[derive(Clone)]
pub struct KProjectors<T: BandScalar> {
    /// dim x nproj projector matrix.
    pub p: Mat<T>,
    /// nproj x nproj coupling matrix (Ha).
    pub d: Mat<T>,
    /// The atom each projector column belongs to.
    pub atom_of_column: Vec<usize>,
    /// The G-vector group over which the rows of `p` are dealt (None: all rows local).
    group: Option<Arc<dyn Communicator>>,
}

impl<T: BandScalar> std::fmt::Debug for KProjectors<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KProjectors")
            .field("rows", &self.p.nrows())
            .field("nproj", &self.p.ncols())
            .field("distributed", &self.group.is_some())
            .finish()
    }
}

/// Sum `partial` over `group` (class G), if the rows are dealt over one.
fn sum_over(group: &Option<Arc<dyn Communicator>>, partial: &mut [f64]) {
    if let Some(g) = group {
        g.allreduce_sum(partial, CommClass::GVector);
    }
}

/// Which matrix of projector functions [`projector_matrices`] builds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Part {
    /// The projectors themselves.
    Value,
    /// Their derivative with respect to a symmetric strain eps_ab at fixed fractional positions,
    /// leaving out the -delta_ab/2 of the 1/sqrt(Omega) normalisation:
    /// `-(q_b d/dq_a + q_a d/dq_b)/2` applied to the radial function times Y_lm (the phase
    /// e^{-iq.tau} is strain invariant).
    Strain(usize, usize),
}

/// Column layout of the projector matrix: (atom, projector index, m) per column.
fn columns(model: &Model) -> Vec<(usize, usize, usize)> {
    let mut cols = Vec::new();
    for (a, atom) in model.crystal.atoms.iter().enumerate() {
        let ps = &model.species[atom.species].pseudo;
        for (i, pr) in ps.projectors.iter().enumerate() {
            for m in 0..2 * pr.l + 1 {
                cols.push((a, i, m));
            }
        }
    }
    cols
}

/// Cartesian gradient of the real spherical harmonics Y_lm(q/|q|) (central differences with a
/// step 1e-5 |q|; the functions are smooth, the error is ~1e-10 relative).
fn ylm_gradient(l: usize, q: [f64; 3], out: &mut [[f64; 7]; 3]) {
    let h = 1e-5 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt();
    let (mut yp, mut ym) = ([0.0; 7], [0.0; 7]);
    for (a, o) in out.iter_mut().enumerate() {
        let mut qp = q;
        let mut qm = q;
        qp[a] += h;
        qm[a] -= h;
        real_ylm(l, qp, &mut yp);
        real_ylm(l, qm, &mut ym);
        for m in 0..2 * l + 1 {
            o[m] = (yp[m] - ym[m]) / (2.0 * h);
        }
    }
}

/// The complex `npw x nproj` matrices of projector functions (or strain derivatives of them),
/// one per requested part. Radial form factors (and their derivatives, when a strain part is
/// asked for) are evaluated once per plane wave and projector for all parts.
fn projector_matrices(
    model: &Model,
    kpt: &Kpoint,
    volume: f64,
    parts: &[Part],
) -> Vec<Mat<Complex64>> {
    let npw = kpt.npw();
    let nproj = columns(model).len();
    let mut out: Vec<Mat<Complex64>> = parts.iter().map(|_| Mat::zeros(npw, nproj)).collect();
    let want_strain = parts.iter().any(|p| matches!(p, Part::Strain(..)));
    let qs: Vec<f64> = kpt
        .kpg
        .iter()
        .map(|g| (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt())
        .collect();
    // Radial form factors (and derivatives) once per species and projector, not per atom.
    let tables: Vec<Vec<(Vec<f64>, Vec<f64>)>> = model
        .species
        .iter()
        .map(|sp| {
            let ps = &sp.pseudo;
            (0..ps.projectors.len())
                .map(|i| {
                    let radial = ps.projector_fourier_many(i, &qs);
                    let dradial: Vec<f64> = if want_strain {
                        qs.iter()
                            .map(|&q| {
                                if q < 1e-10 {
                                    0.0
                                } else {
                                    super::radial_derivative(|x| ps.projector_fourier(i, x), q)
                                }
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    (radial, dradial)
                })
                .collect()
        })
        .collect();
    let norm = 1.0 / volume.sqrt();
    let mut col = 0;
    let mut ylm = [0.0; 7];
    let mut dylm = [[0.0; 7]; 3];
    for atom in model.crystal.atoms.iter() {
        let ps = &model.species[atom.species].pseudo;
        let tau = model.crystal.to_cartesian(&atom.frac);
        // Structure phase e^{-i(k+G).tau}.
        let phase: Vec<Complex64> = kpt
            .kpg
            .iter()
            .map(|g| Complex64::from_polar(1.0, -(g[0] * tau[0] + g[1] * tau[1] + g[2] * tau[2])))
            .collect();
        for (i, pr) in ps.projectors.iter().enumerate() {
            let l = pr.l;
            let (radial, dradial) = &tables[atom.species][i];
            let il = Complex64::new(0.0, -1.0).powi(l as i32);
            let first = col;
            for (ig, g) in kpt.kpg.iter().enumerate() {
                real_ylm(l, *g, &mut ylm);
                let base = phase[ig] * il * norm;
                let q = qs[ig];
                if want_strain && q >= 1e-10 {
                    ylm_gradient(l, *g, &mut dylm);
                }
                for (part, p) in parts.iter().zip(out.iter_mut()) {
                    match *part {
                        Part::Value => {
                            for m in 0..2 * l + 1 {
                                p[(ig, first + m)] = base * (radial[ig] * ylm[m]);
                            }
                        }
                        Part::Strain(a, b) => {
                            if q < 1e-10 {
                                continue; // q_a = q_b = 0
                            }
                            for m in 0..2 * l + 1 {
                                // d/dq_c [f(q) Y(q)] = f'(q) q_c/q Y + f dY/dq_c
                                let d = |c: usize| {
                                    dradial[ig] * g[c] / q * ylm[m] + radial[ig] * dylm[c][m]
                                };
                                let v = -0.5 * (g[b] * d(a) + g[a] * d(b));
                                p[(ig, first + m)] = base * v;
                            }
                        }
                    }
                }
            }
            col += 2 * l + 1;
        }
    }
    debug_assert_eq!(col, nproj);
    out
}

impl<T: BandScalar> KProjectors<T> {
    /// Build the projectors of every atom of `model` at k-point `kpt`.
    pub fn new(model: &Model, kpt: &Kpoint, volume: f64) -> Self {
        let cols = columns(model);
        let nproj = cols.len();
        let p = projector_matrices(model, kpt, volume, &[Part::Value]).remove(0);
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
            atom_of_column: cols.iter().map(|c| c.0).collect(),
            group: kpt.dist.as_ref().map(|d| d.comm().clone()),
        }
    }

    /// `X^H psi` over all rows (`x` has the rows of `p`): local GEMM plus one sum over the
    /// G-vector group.
    fn project(&self, x: MatRef<'_, T>, psi: MatRef<'_, T>) -> Mat<T> {
        let c = overlap(x, psi);
        match &self.group {
            Some(g) => {
                crate::gvectors::sum_matrix(c, |flat| g.allreduce_sum(flat, CommClass::GVector))
            }
            None => c,
        }
    }

    /// `D C` with `C = P^H psi`, and the nonlocal energy `sum_n w_n <psi_n|V_nl|psi_n>`.
    fn coefficients(&self, psi: MatRef<'_, T>, weights: &[f64]) -> (Mat<T>, f64) {
        let c = self.project(self.p.as_ref(), psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        let e = contract(&c, &dc, weights).iter().sum::<f64>() / 2.0;
        (dc, e)
    }

    /// Nonlocal forces `-dE_nl/dtau` (Ha/bohr, per atom) of one k-point for the band block
    /// `psi` with band weights `w_n` (k weight times occupation), from dP/dtau = -i(k+G) P:
    /// `(dP)^H psi = P^H (i(k+G) psi)`, so the stored projectors serve and only one block of
    /// the bands' size is made per direction.
    pub fn forces(
        &self,
        model: &Model,
        kpt: &Kpoint,
        psi: MatRef<'_, T>,
        weights: &[f64],
    ) -> Vec<[f64; 3]> {
        let mut forces = vec![[0.0; 3]; model.crystal.atoms.len()];
        if self.nproj() == 0 {
            return forces;
        }
        let (dc, _) = self.coefficients(psi, weights);
        // Per direction and projector: this rank's rows' share, summed over the group once.
        let mut per_column = Vec::with_capacity(3 * self.nproj());
        for dir in 0..3 {
            let gpsi = T::times_i_kpg(kpt, psi, dir);
            let dpc = overlap(self.p.as_ref(), gpsi.as_ref());
            per_column.extend(contract(&dpc, &dc, weights));
        }
        sum_over(&self.group, &mut per_column);
        for (dir, values) in per_column.chunks(self.nproj()).enumerate() {
            for (i, v) in values.iter().enumerate() {
                forces[self.atom_of_column[i]][dir] -= v;
            }
        }
        forces
    }

    /// Strain derivative `dE_nl/d eps_ab` (Ha) of one k-point (same arguments as
    /// [`Self::forces`]), including the -delta_ab E_nl of the projectors' 1/sqrt(Omega).
    pub fn strain_derivative(
        &self,
        model: &Model,
        kpt: &Kpoint,
        volume: f64,
        psi: MatRef<'_, T>,
        weights: &[f64],
    ) -> [[f64; 3]; 3] {
        let mut de = [[0.0; 3]; 3];
        if self.nproj() == 0 {
            return de;
        }
        let (dc, e_nl) = self.coefficients(psi, weights);
        let pairs: Vec<(usize, usize)> = (0..3).flat_map(|a| (a..3).map(move |b| (a, b))).collect();
        let parts: Vec<Part> = pairs.iter().map(|&(a, b)| Part::Strain(a, b)).collect();
        let mats = projector_matrices(model, kpt, volume, &parts);
        let mut sums: Vec<f64> = mats
            .iter()
            .map(|dp| {
                let dpc = overlap(T::from_plane_waves(kpt, dp).as_ref(), psi);
                contract(&dpc, &dc, weights).iter().sum()
            })
            .collect();
        sum_over(&self.group, &mut sums);
        for (&(a, b), &v) in pairs.iter().zip(&sums) {
            de[a][b] += v;
            if a != b {
                de[b][a] += v;
            }
        }
        for (a, row) in de.iter_mut().enumerate() {
            row[a] -= e_nl;
        }
        de
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
        let c = self.project(self.p.as_ref(), psi);
        let dc = matmul(self.d.as_ref(), c.as_ref());
        matmul_into(out, self.p.as_ref(), dc.as_ref(), true);
    }

    /// `<psi_n|V_nl|psi_n>` for every band of the block.
    pub fn band_energies(&self, psi: MatRef<'_, T>) -> Vec<f64> {
        let nb = psi.ncols();
        if self.nproj() == 0 {
            return vec![0.0; nb];
        }
        let c = self.project(self.p.as_ref(), psi);
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

/// The nonlocal term: energy, forces and stress of the occupied bands.
pub struct Nonlocal<'a, T: BandScalar> {
    /// Projectors of the k-points this rank computes, when the caller has them.
    projectors: Option<&'a [Option<KProjectors<T>>]>,
}

impl<'a, T: BandScalar> Nonlocal<'a, T> {
    /// The term, reusing `projectors` (indexed by k-point) when given.
    pub fn new(projectors: Option<&'a [Option<KProjectors<T>>]>) -> Self {
        Self { projectors }
    }

    /// Call `f(k-point, its projectors, band block, band weights)` for every (spin, k) block
    /// this rank computes (projectors built once per k-point unless cached), timed as block
    /// work.
    fn for_each_block(
        &self,
        s: &State<'_, T>,
        b: Bands<'_, T>,
        mut f: impl FnMut(&Kpoint, &KProjectors<T>, MatRef<'_, T>, &[f64]),
    ) {
        let (basis, par) = (s.basis, &*s.basis.parallel);
        par.time_block_work(|| {
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                if !par.owns_kpoint(b.psi.len(), k) {
                    continue;
                }
                let built;
                let proj = match self.projectors.and_then(|p| p[k].as_ref()) {
                    Some(p) => p,
                    None => {
                        built = KProjectors::<T>::new(s.model, kpt, basis.volume);
                        &built
                    }
                };
                for (sp, (psi_s, w_s)) in b.psi.iter().zip(b.weights).enumerate() {
                    if par.owns(sp, k) {
                        f(kpt, proj, psi_s[k].as_ref(), &w_s[k]);
                    }
                }
            }
        });
    }
}

impl<T: BandScalar> Term<T> for Nonlocal<'_, T> {
    fn name(&self) -> &'static str {
        "nonlocal"
    }

    fn energy(&self, s: &State<'_, T>) -> Share<f64> {
        let Some(b) = s.bands else {
            return Share::Whole(0.0);
        };
        let mut e = 0.0;
        self.for_each_block(s, b, |_, proj, x, w| {
            let nl = proj.band_energies(x);
            e += nl.iter().zip(w).map(|(e, w)| w * e).sum::<f64>();
        });
        Share::Blocks(e)
    }

    fn forces(&self, s: &State<'_, T>) -> Option<Share<Vec<[f64; 3]>>> {
        let b = s.bands?;
        let mut out = vec![[0.0; 3]; s.model.crystal.atoms.len()];
        self.for_each_block(s, b, |kpt, proj, x, w| {
            let f = proj.forces(s.model, kpt, x, w);
            for (o, v) in out.iter_mut().zip(&f) {
                (0..3).for_each(|c| o[c] += v[c]);
            }
        });
        Some(Share::Blocks(out))
    }

    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let b = s.bands?;
        let mut out = [[0.0; 3]; 3];
        let omega = s.basis.volume;
        self.for_each_block(s, b, |kpt, proj, x, w| {
            let de = proj.strain_derivative(s.model, kpt, omega, x, w);
            for (o, d) in out.iter_mut().flatten().zip(de.iter().flatten()) {
                *o -= d / omega;
            }
        });
        Some(Share::Blocks(out))
    }
}

/// Per projector column i: `sum_n w_n 2 Re(conj(X[i,n]) DC[i,n])` (the first-order change of the
/// nonlocal energy when the projectors change by X's projectors).
fn contract<T: BandScalar>(x: &Mat<T>, dc: &Mat<T>, weights: &[f64]) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| {
            weights
                .iter()
                .enumerate()
                .map(|(n, w)| 2.0 * w * (x[(i, n)].cj() * dc[(i, n)]).real())
                .sum()
        })
        .collect()
}
