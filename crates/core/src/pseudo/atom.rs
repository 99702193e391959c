//! Pseudo-atomic orbitals: the bound valence states of the isolated, spherical pseudo-atom,
//! for starting an SCF from atomic orbitals where the file has none (every GTH file).
//!
//! Contract: [`Pseudopotential::atomic_orbitals`] gives, for an analytic GTH potential, the
//! lowest state of each angular momentum `l = 0..=max(1, lmax)` whose energy is negative, from
//! the radial Kohn–Sham equation of the neutral pseudo-atom: its local potential, its
//! separable nonlocal part, and the Hartree and LDA (Perdew–Zunger) potentials of its own
//! spherical valence density (aufbau occupations), solved self-consistently. The basis is the
//! spherical Bessel functions `j_l(q_n r)` vanishing at `r = R` ([`RADIUS`]): their kinetic
//! matrix is diagonal, and every other matrix element is a quadrature on a uniform grid. Each
//! orbital is its radial function `R(r)` on that grid with `∫ R² r² dr = 1`. A UPF file's
//! orbitals are its own `PP_PSWFC` (those of non-negative occupation, as QE's `natomwfc`) on
//! its mesh up to QE's `msh`, with QE's Simpson weights; a file without them (psp8, HGH) has
//! none.

use super::radial::sph_bessel;
use super::{Kind, Pseudopotential};
use crate::special::erf;
use crate::xc::{evaluate, Functional};
use planewave_linalg::{gemm, hermitian_eigen_lowest, Mat};
use rayon::prelude::*;
use std::f64::consts::PI;

/// Radius of the sphere the atom is solved in (bohr).
pub const RADIUS: f64 = 14.0;
/// Grid intervals on `[0, R]` (even, for Simpson's rule).
const INTERVALS: usize = 700;
/// Bessel functions per angular momentum (`q` up to about 48 π / R = 10.8 bohr⁻¹).
const BASIS: usize = 48;
/// Self-consistency: mixing of the density, iteration limit and tolerance (electrons).
const MIXING: f64 = 0.4;
const MAX_ITERATIONS: usize = 200;
const TOLERANCE: f64 = 1e-6;

/// One radial orbital of the pseudo-atom, on a radial mesh with its quadrature weights.
#[derive(Debug, Clone, PartialEq)]
pub struct RadialOrbital {
    /// Angular momentum.
    pub l: usize,
    /// Its name: the file's label ("3S"), or the letter of `l` for a solved atom.
    pub label: String,
    /// Electrons in it in the neutral atom.
    pub occupation: f64,
    /// Its Kohn–Sham energy (Ha), where known.
    pub energy: Option<f64>,
    /// The mesh points r_j (bohr).
    pub r: Vec<f64>,
    /// The quadrature weights of the mesh (`∫ f dr ≈ Σ_j w_j f(r_j)`).
    pub weights: Vec<f64>,
    /// `r² R(r)` at the mesh points (`r χ(r)` of a UPF file), with `∫ R² r² dr = 1`.
    pub r2_radial: Vec<f64>,
}

impl RadialOrbital {
    /// `4π ∫ r² R(r) j_l(q r) dr`, the orbital's Fourier form factor (without `(-i)^l` and
    /// `Y_lm`).
    pub fn fourier(&self, q: f64) -> f64 {
        self.fourier_many(&[q])[0]
    }

    /// [`Self::fourier`] at every `q` of `qs`.
    pub fn fourier_many(&self, qs: &[f64]) -> Vec<f64> {
        let f: Vec<(f64, f64)> = (self.r.iter().zip(&self.weights).zip(&self.r2_radial))
            .map(|((&r, &w), &g)| (r, w * g))
            .collect();
        qs.par_iter()
            .map(|&q| {
                4.0 * PI
                    * f.iter()
                        .map(|&(r, g)| g * sph_bessel(self.l, q * r))
                        .sum::<f64>()
            })
            .collect()
    }

    /// `∫ R² r² dr` (1 for a normalised orbital).
    pub fn norm2(&self) -> f64 {
        (self.r.iter().zip(&self.weights).zip(&self.r2_radial))
            .filter(|((&r, _), _)| r > 0.0)
            .map(|((&r, &w), &g)| w * (g / r).powi(2))
            .sum()
    }
}

/// The real-space pieces of a pseudopotential the solver needs.
struct RealSpace<'a> {
    ps: &'a Pseudopotential,
    data: &'a super::gth::GthData,
    proj: &'a [(usize, usize)],
}

impl RealSpace<'_> {
    /// V_loc(r) (Ha), its r → 0 limit at r = 0.
    fn local(&self, r: f64) -> f64 {
        let (z, s) = (self.ps.z_valence, 2f64.sqrt() * self.data.rloc);
        let long = if r < 1e-12 {
            -z * 2.0 / (PI.sqrt() * s)
        } else {
            -z * erf(r / s) / r
        };
        long + self.data.local_short_real(r)
    }
}

impl Pseudopotential {
    /// The pseudo-atom's bound valence orbitals (see the module doc); empty when the format
    /// has no real-space form here or the atom binds nothing.
    pub fn atomic_orbitals(&self) -> Vec<RadialOrbital> {
        match &self.kind {
            Kind::Gth { data, proj } => solve(&RealSpace {
                ps: self,
                data,
                proj,
            }),
            Kind::Numeric(n) => n.orbitals().to_vec(),
        }
    }
}

/// Simpson weights on `n` (even) uniform intervals of width `h` (QE's rule, `rab = h`).
fn simpson_weights(n: usize, h: f64) -> Vec<f64> {
    super::radial::simpson_weights(&vec![h; n + 1], n + 1)
}

/// The first [`BASIS`] zeros of `j_l` (bisection between sign changes).
fn bessel_zeros(l: usize) -> Vec<f64> {
    let (mut zeros, dx) = (Vec::with_capacity(BASIS), 0.05);
    let mut a = 0.5 + l as f64;
    while zeros.len() < BASIS {
        let b = a + dx;
        if sph_bessel(l, a).signum() != sph_bessel(l, b).signum() {
            let (mut lo, mut hi) = (a, b);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if sph_bessel(l, lo).signum() == sph_bessel(l, mid).signum() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            zeros.push(0.5 * (lo + hi));
        }
        a = b;
    }
    zeros
}

/// One channel's basis: the wavenumbers and the normalised functions on the grid.
struct Channel {
    l: usize,
    q: Vec<f64>,
    /// `BASIS` columns of grid values.
    u: Mat<f64>,
    /// The nonlocal matrix in the basis (Ha).
    nonlocal: Mat<f64>,
}

impl Channel {
    fn new(at: &RealSpace<'_>, l: usize, r: &[f64], w: &[f64]) -> Self {
        let q: Vec<f64> = bessel_zeros(l).iter().map(|x| x / RADIUS).collect();
        let mut u = Mat::from_fn(r.len(), BASIS, |j, n| sph_bessel(l, q[n] * r[j]));
        for n in 0..BASIS {
            let norm: f64 = (0..r.len())
                .map(|j| w[j] * (r[j] * u[(j, n)]).powi(2))
                .sum();
            let s = 1.0 / norm.sqrt();
            (0..r.len()).for_each(|j| u[(j, n)] *= s);
        }
        // <u_n|p_i> for the projectors of this l, then sum_ij <u_n|p_i> h_ij <p_j|u_m>.
        let mine: Vec<(usize, usize)> = at
            .proj
            .iter()
            .enumerate()
            .filter(|(_, &(pl, _))| pl == l)
            .map(|(k, &(_, i))| (k, i))
            .collect();
        let b = Mat::from_fn(BASIS, mine.len(), |n, c| {
            let i = mine[c].1;
            (0..r.len())
                .map(|j| w[j] * r[j] * r[j] * u[(j, n)] * at.data.projector_real(l, i, r[j]))
                .sum::<f64>()
        });
        let nonlocal = Mat::from_fn(BASIS, BASIS, |n, m| {
            let mut s = 0.0;
            for (c1, &(k1, _)) in mine.iter().enumerate() {
                for (c2, &(k2, _)) in mine.iter().enumerate() {
                    s += b[(n, c1)] * at.ps.dij[k1][k2] * b[(m, c2)];
                }
            }
            s
        });
        Channel { l, q, u, nonlocal }
    }

    /// The eigenpairs of this channel's H for the potential `v` on the grid: (energies,
    /// radial functions as grid columns).
    fn solve(&self, v: &[f64], r: &[f64], w: &[f64]) -> (Vec<f64>, Mat<f64>) {
        // U^T diag(w r^2 v) U as one product.
        let wu = Mat::from_fn(r.len(), BASIS, |j, n| {
            w[j] * r[j] * r[j] * v[j] * self.u[(j, n)]
        });
        let mut h = self.nonlocal.clone();
        gemm(h.as_mut(), true, self.u.as_ref(), true, wu.as_ref(), false);
        for n in 0..BASIS {
            h[(n, n)] += 0.5 * self.q[n] * self.q[n];
        }
        let e = hermitian_eigen_lowest(h.as_ref(), 3).expect("a symmetric channel matrix");
        let radial = &self.u * &e.vectors;
        (e.values, radial)
    }
}

/// Hartree potential of the spherical density `rho` (electrons/bohr³) on the grid.
fn hartree(rho: &[f64], r: &[f64], h: f64) -> Vec<f64> {
    let n = r.len();
    let (mut inner, mut outer) = (vec![0.0; n], vec![0.0; n]);
    for j in 1..n {
        let f = |k: usize| 4.0 * PI * rho[k] * r[k] * r[k];
        inner[j] = inner[j - 1] + 0.5 * h * (f(j - 1) + f(j));
    }
    for j in (0..n - 1).rev() {
        let f = |k: usize| 4.0 * PI * rho[k] * r[k];
        outer[j] = outer[j + 1] + 0.5 * h * (f(j) + f(j + 1));
    }
    (0..n)
        .map(|j| {
            if j == 0 {
                outer[0]
            } else {
                inner[j] / r[j] + outer[j]
            }
        })
        .collect()
}

/// Aufbau occupations of the states `(energy, l)`, `z` electrons in all.
fn aufbau(states: &[(f64, usize)], z: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..states.len()).collect();
    order.sort_by(|&a, &b| states[a].0.total_cmp(&states[b].0));
    let (mut left, mut occ) = (z, vec![0.0; states.len()]);
    for k in order {
        let cap = 2.0 * (2 * states[k].1 + 1) as f64;
        occ[k] = left.min(cap);
        left -= occ[k];
    }
    occ
}

/// Aufbau occupations of every solved state, channel by channel.
fn occupations(solved: &[(Vec<f64>, Mat<f64>)], channels: &[Channel], z: f64) -> Vec<f64> {
    let states: Vec<(f64, usize)> = solved
        .iter()
        .zip(channels)
        .flat_map(|((e, _), c)| e.iter().map(move |&e| (e, c.l)))
        .collect();
    aufbau(&states, z)
}

/// The self-consistent pseudo-atom (see the module doc).
fn solve(at: &RealSpace<'_>) -> Vec<RadialOrbital> {
    let h = RADIUS / INTERVALS as f64;
    let r: Vec<f64> = (0..=INTERVALS).map(|j| j as f64 * h).collect();
    let w = simpson_weights(INTERVALS, h);
    let lmax = at.ps.lmax.max(1) as usize;
    let channels: Vec<Channel> = (0..=lmax).map(|l| Channel::new(at, l, &r, &w)).collect();
    let vloc: Vec<f64> = r.iter().map(|&x| at.local(x)).collect();
    let mut rho = vec![0.0; r.len()];
    let mut solved = Vec::new();
    for _ in 0..MAX_ITERATIONS {
        let vxc = evaluate(Functional::LdaPz, &[&rho], &[])
            .vrho
            .swap_remove(0);
        let vh = hartree(&rho, &r, h);
        let v: Vec<f64> = (0..r.len()).map(|j| vloc[j] + vh[j] + vxc[j]).collect();
        solved = channels
            .iter()
            .map(|c| c.solve(&v, &r, &w))
            .collect::<Vec<_>>();
        let occ = occupations(&solved, &channels, at.ps.z_valence);
        let mut out = vec![0.0; r.len()];
        let mut k = 0;
        for (e, radial) in &solved {
            for s in 0..e.len() {
                for (j, o) in out.iter_mut().enumerate() {
                    *o += occ[k] * radial[(j, s)].powi(2) / (4.0 * PI);
                }
                k += 1;
            }
        }
        let change: f64 = (0..r.len())
            .map(|j| w[j] * 4.0 * PI * r[j] * r[j] * (out[j] - rho[j]).abs())
            .sum();
        for (a, b) in rho.iter_mut().zip(&out) {
            *a += MIXING * (b - *a);
        }
        if change < TOLERANCE {
            break;
        }
    }
    let occ = occupations(&solved, &channels, at.ps.z_valence);
    let mut orbitals = Vec::new();
    for (ci, ((e, radial), c)) in solved.iter().zip(&channels).enumerate() {
        if e[0] < 0.0 {
            orbitals.push(RadialOrbital {
                l: c.l,
                label: ["s", "p", "d", "f"][c.l.min(3)].to_string(),
                occupation: occ[3 * ci],
                energy: Some(e[0]),
                r: r.clone(),
                weights: simpson_weights(r.len() - 1, h),
                r2_radial: (0..r.len()).map(|j| r[j] * r[j] * radial[(j, 0)]).collect(),
            });
        }
    }
    orbitals
}

#[cfg(test)]
mod tests {
    use super::*;

    fn si() -> Pseudopotential {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/pseudos/gth/Si-q4.lda.gth");
        Pseudopotential::from_file(&path).unwrap()
    }

    /// Si GTH-PADE: 3s below 3p, both bound, two electrons each, normalised, and the Fourier
    /// form factor at q = 0 of the s orbital is 4π ∫ r² R dr (its l = 0 integral).
    #[test]
    fn silicon_binds_3s_and_3p_with_two_electrons_each() {
        let orbitals = si().atomic_orbitals();
        assert_eq!(orbitals.len(), 2, "{orbitals:?}");
        let (s, p) = (&orbitals[0], &orbitals[1]);
        assert_eq!((s.l, p.l), (0, 1));
        let (es, ep) = (s.energy.unwrap(), p.energy.unwrap());
        assert!(es < ep && ep < 0.0, "{es} {ep}");
        // LDA Si pseudo-atom: 3s about -0.40 Ha, 3p about -0.15 Ha.
        assert!((es + 0.40).abs() < 0.03, "3s {es}");
        assert!((ep + 0.15).abs() < 0.03, "3p {ep}");
        assert_eq!((s.occupation, p.occupation), (2.0, 2.0));
        for o in &orbitals {
            assert!((o.norm2() - 1.0).abs() < 1e-6, "norm {}", o.norm2());
        }
        assert!(p.fourier(0.0).abs() < 1e-12);
        assert!(s.fourier(0.0).abs() > 1.0);
    }
}
