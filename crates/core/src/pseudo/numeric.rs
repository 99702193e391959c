//! Form factors of numerical (radial-grid, UPF) pseudopotentials, following
//! Quantum ESPRESSO 6.7 conventions exactly (same integrands, same Simpson
//! rule, same radial cut-offs) but integrating directly for every q instead of
//! interpolating from QE's dq = 0.01 table.
//!
//! Contract (Hartree atomic units, Simpson weights `w` over the stated points):
//! * local, q > 0: 4 pi sum_{i<msh} w_i (r V + Z erf r) sin(q r)/q - 4 pi Z e^{-q^2/4}/q^2
//!   (QE `vloc_of_g`);  q = 0: 4 pi sum_{i<msh} w_i r (r V + Z)  (the "alpha Z" term).
//! * projector i: 4 pi sum_{k<kkbeta} w_k (r beta_i) r j_l(q r), kkbeta = max cutoff index
//!   (QE `init_tab_beta`).
//! * core: 4 pi sum_{i<msh} w_i r^2 rho_c j0(q r)  (QE `drhoc`).
//! * atomic orbital: 4 pi sum_{i<msh} w_i r (r chi) j_l(q r) (QE `init_at_1`).
//! * atomic density: sum_{i<msh} w_i (4 pi r^2 rho_at) j0(q r)  (QE `atomic_rho_g`),
//!   rescaled so that the q = 0 value is exactly z_valence.

use super::atom::RadialOrbital;
use super::radial::{qe_msh, simpson_weights, sph_bessel, sph_bessel_with};
use super::upf::UpfParsed;
use crate::special::erf;
use std::f64::consts::PI;

#[derive(Debug, Clone, PartialEq)]
pub struct NumericData {
    z: f64,
    /// r on the first max(msh, kkbeta) points
    r: Vec<f64>,
    msh: usize,
    /// w_i (r_i V(r_i) + Z erf(r_i)), i < msh
    local_w: Vec<f64>,
    g0: f64,
    /// per projector: (l, w_k r_k (r beta)_k for k < kkbeta)
    beta_w: Vec<(usize, Vec<f64>)>,
    /// w_i r_i^2 rho_core(r_i), i < msh
    core_w: Option<Vec<f64>>,
    /// w_i 4 pi r_i^2 rho_at(r_i), i < msh (normalised to z)
    rho_w: Option<Vec<f64>>,
    /// Projector form factors tabulated on a uniform q grid (see [`NumericData::tabulate`]).
    beta_table: Option<QTable>,
    /// The file's pseudo-atomic orbitals on its first `msh` points.
    orbitals: Vec<RadialOrbital>,
}

/// Functions of q (radial form factors) tabulated on q = 0, dq, 2 dq, ... and read back by
/// 4-point Lagrange interpolation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct QTable {
    dq: f64,
    /// values[i][j] = f_i(j dq)
    values: Vec<Vec<f64>>,
}

/// Step of the q tables (1/bohr): 4-point Lagrange interpolation on it reproduces the
/// direct radial integrals to ~1e-10 relative (QE interpolates with dq = 0.01).
const TABLE_DQ: f64 = 0.005;

impl QTable {
    /// The radial integrals `scale * sum_r w_i(r) j_{l_i}(q r)` of `funcs` = `(l_i, w_i)` (`w_i`
    /// the weighted function on the first points of the mesh `r`) from q = 0 to beyond `qmax`
    /// with the step `TABLE_DQ`. The Bessel functions are formed once per q and l for every
    /// function of that l. The points go in runs of [`Q_RUN`] consecutive q, one run per
    /// rayon task: `sin(q r)` and `cos(q r)` are formed at the run's first q and rotated by
    /// `dq r` from one q to the next (a few ulps after 31 rotations), one sine per mesh point
    /// and run instead of one per point and l.
    pub(super) fn bessel_integrals(
        r: &[f64],
        funcs: &[(usize, &[f64])],
        scale: f64,
        qmax: f64,
    ) -> Self {
        use rayon::prelude::*;
        let n = Self::points(qmax);
        let len = funcs
            .iter()
            .map(|(_, w)| w.len())
            .max()
            .unwrap_or(0)
            .min(r.len());
        let r = &r[..len];
        let step: Vec<(f64, f64)> = r.iter().map(|r| (Self::q_of(1) * r).sin_cos()).collect();
        let mut ls: Vec<usize> = funcs.iter().map(|(l, _)| *l).collect();
        ls.sort_unstable();
        ls.dedup();
        let runs: Vec<Vec<Vec<f64>>> = (0..n.div_ceil(Q_RUN))
            .into_par_iter()
            .map(|run| {
                let points = run * Q_RUN..((run + 1) * Q_RUN).min(n);
                let mut sc: Vec<(f64, f64)> = (r.iter())
                    .map(|r| (Self::q_of(points.start) * r).sin_cos())
                    .collect();
                let (mut out, mut bessel) = (Vec::with_capacity(points.len()), Vec::new());
                for j in points {
                    let q = Self::q_of(j);
                    out.push(integrals_at(q, (r, &sc), (funcs, &ls), scale, &mut bessel));
                    for ((s, c), (sd, cd)) in sc.iter_mut().zip(&step) {
                        (*s, *c) = (*s * cd + *c * sd, *c * cd - *s * sd);
                    }
                }
                out
            })
            .collect();
        let columns: Vec<&Vec<f64>> = runs.iter().flatten().collect();
        let values = (0..funcs.len())
            .map(|i| columns.iter().map(|col| col[i]).collect())
            .collect();
        Self::from_values(values)
    }

    /// The table of `values[i][j]` = f_i at [`Self::q_of`]`(j)`.
    pub(super) fn from_values(values: Vec<Vec<f64>>) -> Self {
        QTable {
            dq: TABLE_DQ,
            values,
        }
    }

    /// Points of a table up to beyond `qmax`.
    pub(super) fn points(qmax: f64) -> usize {
        (qmax.max(0.0) / TABLE_DQ).ceil() as usize + 4
    }

    /// The q of point `j`.
    pub(super) fn q_of(j: usize) -> f64 {
        j as f64 * TABLE_DQ
    }

    /// Function `i` at `q` by 4-point Lagrange interpolation; None for q < 0 or beyond the
    /// table.
    pub(super) fn get(&self, i: usize, q: f64) -> Option<f64> {
        let x = q / self.dq;
        let j = x.floor() as usize;
        let v = &self.values[i];
        if !(q >= 0.0 && j + 2 < v.len()) {
            return None;
        }
        // Lagrange through nodes j-1, j, j+1, j+2 (j, j+1, j+2, j+3 at the origin).
        let j0 = j.max(1) - 1;
        let u = x - j0 as f64;
        let (a, b, c, d) = (u, u - 1.0, u - 2.0, u - 3.0);
        Some(
            -v[j0] * b * c * d / 6.0 + v[j0 + 1] * a * c * d / 2.0 - v[j0 + 2] * a * b * d / 2.0
                + v[j0 + 3] * a * b * c / 6.0,
        )
    }
}

/// Consecutive q points of a table formed by one task from one set of sines
/// ([`QTable::bessel_integrals`]).
const Q_RUN: usize = 32;

/// `scale * sum_r w_i(r) j_{l_i}(q r)` of every function of [`QTable::bessel_integrals`] at
/// `q`, with `sc` = `(sin q r, cos q r)` at the mesh points `r`; `ls` the functions' distinct
/// l, `bessel` scratch.
fn integrals_at(
    q: f64,
    (r, sc): (&[f64], &[(f64, f64)]),
    (funcs, ls): (&[(usize, &[f64])], &[usize]),
    scale: f64,
    bessel: &mut Vec<f64>,
) -> Vec<f64> {
    let mut out = vec![0.0; funcs.len()];
    for &l in ls {
        bessel.clear();
        bessel.extend(
            r.iter()
                .zip(sc)
                .map(|(r, &sc)| sph_bessel_with(l, q * r, || sc)),
        );
        for (o, (_, w)) in out.iter_mut().zip(funcs).filter(|(_, f)| f.0 == l) {
            *o = scale * w.iter().zip(bessel.iter()).map(|(w, b)| w * b).sum::<f64>();
        }
    }
    out
}

impl NumericData {
    pub fn new(u: &UpfParsed) -> Self {
        let z = u.z_valence;
        let msh = qe_msh(&u.r);
        let wm = simpson_weights(&u.rab, msh);
        let kkbeta = u
            .betas
            .iter()
            .map(|b| b.kbeta)
            .max()
            .unwrap_or(0)
            .min(u.r.len());
        let wb = simpson_weights(&u.rab, kkbeta);
        let n = msh.max(kkbeta);
        let r = u.r[..n].to_vec();
        let local_w = (0..msh)
            .map(|i| wm[i] * (u.r[i] * u.vloc[i] + z * erf(u.r[i])))
            .collect();
        let g0 = 4.0
            * PI
            * (0..msh)
                .map(|i| wm[i] * u.r[i] * (u.r[i] * u.vloc[i] + z))
                .sum::<f64>();
        let beta_w = u
            .betas
            .iter()
            .map(|b| {
                (
                    b.l,
                    (0..kkbeta).map(|k| wb[k] * u.r[k] * b.rbeta[k]).collect(),
                )
            })
            .collect();
        let core_w = u
            .nlcc
            .as_ref()
            .map(|c| (0..msh).map(|i| wm[i] * u.r[i] * u.r[i] * c[i]).collect());
        let rho_w = u.rho_atom.as_ref().and_then(|rho| {
            let w: Vec<f64> = (0..msh).map(|i| wm[i] * rho[i]).collect();
            let total: f64 = w.iter().sum();
            // a missing/zero density (e.g. HGH tables) falls back to the Gaussian guess
            (total.abs() > 1e-3 * z).then(|| w.iter().map(|x| x * z / total).collect())
        });
        let orbitals = u
            .chi
            .iter()
            .map(|c| RadialOrbital {
                l: c.l,
                label: c.label.clone(),
                occupation: c.occupation,
                energy: None,
                r: u.r[..msh].to_vec(),
                weights: wm.clone(),
                r2_radial: (0..msh).map(|i| u.r[i] * c.rchi[i]).collect(),
            })
            .collect();
        NumericData {
            z,
            r,
            msh,
            orbitals,
            local_w,
            g0,
            beta_w,
            core_w,
            rho_w,
            beta_table: None,
        }
    }

    /// The file's pseudo-atomic orbitals (`PP_PSWFC`), empty when it has none.
    pub fn orbitals(&self) -> &[RadialOrbital] {
        &self.orbitals
    }

    /// Tabulate the projector form factors up to `qmax` (1/bohr) so that later evaluations
    /// interpolate (4-point Lagrange) instead of integrating over the radial grid every time.
    pub fn tabulate(&mut self, qmax: f64) {
        let funcs: Vec<(usize, &[f64])> = (self.beta_w.iter())
            .map(|(l, w)| (*l, w.as_slice()))
            .collect();
        let table = QTable::bessel_integrals(&self.r, &funcs, 4.0 * PI, qmax);
        self.beta_table = Some(table);
    }

    pub fn local_fourier(&self, q: f64) -> f64 {
        if q <= 0.0 {
            return self.g0;
        }
        let s: f64 = self
            .local_w
            .iter()
            .zip(&self.r)
            .map(|(w, r)| w * (q * r).sin())
            .sum();
        4.0 * PI * (s / q - self.z * (-0.25 * q * q).exp() / (q * q))
    }

    pub fn local_g0(&self) -> f64 {
        self.g0
    }

    pub fn projector_fourier(&self, i: usize, q: f64) -> f64 {
        self.beta_table
            .as_ref()
            .and_then(|t| t.get(i, q))
            .unwrap_or_else(|| self.projector_direct(i, q))
    }

    /// The projector form factor by direct radial integration.
    fn projector_direct(&self, i: usize, q: f64) -> f64 {
        let (l, w) = &self.beta_w[i];
        4.0 * PI
            * w.iter()
                .zip(&self.r)
                .map(|(w, r)| w * sph_bessel(*l, q * r))
                .sum::<f64>()
    }

    pub fn has_core(&self) -> bool {
        self.core_w.is_some()
    }

    pub fn core_fourier(&self, q: f64) -> f64 {
        match &self.core_w {
            None => 0.0,
            Some(w) => 4.0 * PI * j0_sum(w, &self.r, q),
        }
    }

    /// None when the file has no usable atomic density.
    pub fn atomic_density_fourier(&self, q: f64) -> Option<f64> {
        self.rho_w.as_ref().map(|w| j0_sum(w, &self.r, q))
    }

    /// Number of points used for local/core/density integrals (QE msh).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn msh(&self) -> usize {
        self.msh
    }
}

fn j0_sum(w: &[f64], r: &[f64], q: f64) -> f64 {
    w.iter().zip(r).map(|(w, r)| w * sph_bessel(0, q * r)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rotated sines of [`QTable::bessel_integrals`] give the direct sums of
    /// [`sph_bessel`] to rounding at every table point, the last of each run included.
    #[test]
    fn bessel_integrals_match_direct_sums() {
        let r: Vec<f64> = (0..900).map(|i| (-7.0 + 0.0125 * i as f64).exp()).collect();
        let w: Vec<Vec<f64>> = (0..3)
            .map(|f| {
                (r.iter())
                    .map(|&x| x * x * (-(x - 0.5 * f as f64).powi(2)).exp() * 0.0125 * x)
                    .collect()
            })
            .collect();
        let funcs: Vec<(usize, &[f64])> = vec![(0, &w[0]), (2, &w[1]), (1, &w[2]), (2, &w[0])];
        let table = QTable::bessel_integrals(&r, &funcs, 4.0 * PI, 20.0);
        let mut worst = 0.0f64;
        for (i, &(l, w)) in funcs.iter().enumerate() {
            let scale = w.iter().map(|x| x.abs()).sum::<f64>() * 4.0 * PI;
            for (j, &v) in table.values[i].iter().enumerate() {
                let q = QTable::q_of(j);
                let direct: f64 = 4.0
                    * PI
                    * (w.iter().zip(&r))
                        .map(|(w, r)| w * sph_bessel(l, q * r))
                        .sum::<f64>();
                worst = worst.max((v - direct).abs() / scale);
            }
        }
        assert_eq!(table.values[0].len(), QTable::points(20.0));
        assert!(worst < 1e-14, "rotated vs direct: {worst:e}");
    }
}
