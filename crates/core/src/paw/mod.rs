//! The one-centre part of PAW: the Hartree and exchange-correlation energies of the densities
//! inside each atom's sphere, all-electron minus pseudo, and their coupling D¹_ij.
//!
//! Contract (Hartree units; a species' projector components and pairs as in
//! [`crate::augmentation`]):
//! * [`PawSpecies::new`] takes a PAW file's partial waves, cores and augmentation functions.
//!   As QE 6.7 (`read_upf`, `PAW_init`): `r² φ_iφ_j` and `r² φ̃_iφ̃_j` are zero beyond the
//!   augmentation sphere's index; energies integrate over the whole mesh by QE's Simpson rule.
//! * For an atom's band sums `becsum[s][p]` ([`crate::augmentation::Becsum`]'s convention: the
//!   off-diagonal pairs carry their factor 2), [`PawSpecies::one_centre`] gives
//!   `E¹ = E_H[ρ¹] + E_xc[ρ¹ + ρ_c] - E_H[ρ̃¹ + ρ̂] - E_xc[ρ̃¹ + ρ̂ + ρ̃_c]` with
//!   `ρ¹_LM(r) = Σ_p becsum_p ap(LM; i, j) r² φ_iφ_j` (the pseudo density with
//!   `r² φ̃_iφ̃_j + r² Q^L_ij`), and `D¹[s][p] = ∂E¹/∂becsum[s][p]`: the exact derivative of
//!   the discrete XC energy, and of the Hartree energy to the radial rules' order (its
//!   potential against the Simpson weights; QE's `PAW_potential` integrates its potentials
//!   against the pairs throughout).
//! * The XC spheres integrate exactly to degree 3 lmax_ρ (+2 for a GGA), as QE's
//!   `PAW_rad_init`; the Hartree potential is the radial Poisson solution of `hartree.rs`.
//! * [`PawSpecies::atomic_becsum`] is QE's start (`PAW_atomic_becsum`) without its noise: each
//!   partial wave's occupation spread over its m.

mod hartree;
pub mod symmetrize;
mod xc;

use crate::augmentation::pairs;
use crate::clebsch_gordan::{product_ls, YlmProducts};
use crate::pseudo::radial::simpson_weights;
use crate::pseudo::{UpfAugmentation, UpfPaw};
use crate::xc::Functional;

/// One angular term of a pair: the LM index, its ap and the radial functions' indices.
#[derive(Debug, Clone, PartialEq)]
struct PairTerm {
    lm: usize,
    ap: f64,
    /// Index into `ae` (the pair of betas).
    ae: usize,
    /// Index into `ps` (the pair of betas and L).
    ps: usize,
}

/// A part of the one-centre work: some directions of the XC sphere, and whether the Hartree
/// terms are in it.
struct Part<'a> {
    sphere: &'a xc::Sphere,
    hartree: bool,
}

/// The energy of one atom's sphere by part (Ha).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OneCentreEnergy {
    pub hartree_ae: f64,
    pub hartree_ps: f64,
    pub xc_ae: f64,
    pub xc_ps: f64,
}

impl OneCentreEnergy {
    /// All-electron minus pseudo.
    pub fn total(&self) -> f64 {
        self.hartree_ae + self.xc_ae - self.hartree_ps - self.xc_ps
    }
}

/// The one-centre data of a PAW species (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct PawSpecies {
    r: Vec<f64>,
    rab: Vec<f64>,
    /// Simpson weights of the whole mesh.
    simpson: Vec<f64>,
    /// The components' (l, m index) and each beta's l.
    components: Vec<(usize, usize)>,
    /// Per pair ih ≤ jh (row-major): its angular terms.
    pair_terms: Vec<Vec<PairTerm>>,
    /// r² φ_iφ_j per pair of betas i ≤ j.
    ae: Vec<Vec<f64>>,
    /// r² (φ̃_iφ̃_j + Q^L_ij) per (pair of betas, L).
    ps: Vec<Vec<f64>>,
    ae_core: Vec<f64>,
    ps_core: Vec<f64>,
    lmax_rho: usize,
    /// Occupation and l of each beta.
    occupations: Vec<(f64, usize)>,
    /// The core's energy (Ha).
    pub core_energy: f64,
}

impl PawSpecies {
    /// From a PAW file's data, its augmentation, the l of its betas, its mesh and its pseudo
    /// core density (None: no core correction).
    pub fn new(
        paw: &UpfPaw,
        aug: &UpfAugmentation,
        beta_ls: &[usize],
        (r, rab): (&[f64], &[f64]),
        ps_core: Option<&[f64]>,
    ) -> Self {
        let (n, nbeta) = (r.len(), beta_ls.len());
        let inside = |f: &dyn Fn(usize) -> f64| -> Vec<f64> {
            (0..n)
                .map(|k| if k < paw.iraug { f(k) } else { 0.0 })
                .collect()
        };
        let lmax_rho = paw.lmax_rho.min(crate::clebsch_gordan::LMAX_PRODUCT);
        let mut ae = Vec::new();
        let mut ps = Vec::new();
        // (i, j) -> index into ae; (i, j, L) -> index into ps.
        let mut ae_index = std::collections::HashMap::new();
        let mut ps_index = std::collections::HashMap::new();
        for i in 0..nbeta {
            for j in i..nbeta {
                ae_index.insert((i, j), ae.len());
                ae.push(inside(&|k| paw.ae_wfc[i][k] * paw.ae_wfc[j][k]));
                for big_l in product_ls(beta_ls[i], beta_ls[j]).filter(|&l| l <= lmax_rho) {
                    let q = aug
                        .qfunc
                        .iter()
                        .find(|f| f.i == i && f.j == j && f.l.is_none_or(|l| l == big_l));
                    ps_index.insert((i, j, big_l), ps.len());
                    ps.push(inside(&|k| {
                        paw.ps_wfc[i][k] * paw.ps_wfc[j][k] + q.map_or(0.0, |q| q.r2q[k])
                    }));
                }
            }
        }
        let components: Vec<(usize, usize, usize)> = beta_ls
            .iter()
            .enumerate()
            .flat_map(|(b, &l)| (0..2 * l + 1).map(move |m| (b, l, m)))
            .collect();
        let ap = YlmProducts::shared();
        let pair_terms = pairs(components.len())
            .map(|(a, b)| {
                let ((bi, li, mi), (bj, lj, mj)) = (components[a], components[b]);
                let key = (bi.min(bj), bi.max(bj));
                product_ls(li, lj)
                    .filter(|&l| l <= lmax_rho)
                    .flat_map(|big_l| (0..2 * big_l + 1).map(move |m| (big_l, m)))
                    .filter_map(|(big_l, m)| {
                        let c = ap.ap((big_l, m), (li, mi), (lj, mj));
                        (c != 0.0).then(|| PairTerm {
                            lm: big_l * big_l + m,
                            ap: c,
                            ae: ae_index[&key],
                            ps: ps_index[&(key.0, key.1, big_l)],
                        })
                    })
                    .collect()
            })
            .collect();
        Self {
            r: r.to_vec(),
            rab: rab.to_vec(),
            simpson: simpson_weights(rab, n),
            components: components.iter().map(|&(_, l, m)| (l, m)).collect(),
            pair_terms,
            ae,
            ps,
            ae_core: paw.ae_core.clone(),
            ps_core: ps_core.map_or_else(|| vec![0.0; n], <[f64]>::to_vec),
            lmax_rho,
            occupations: paw
                .occupations
                .iter()
                .copied()
                .zip(beta_ls.iter().copied())
                .collect(),
            core_energy: paw.core_energy,
        }
    }

    /// Number of projector components of one atom.
    pub fn components(&self) -> usize {
        self.components.len()
    }

    /// The (l, m index) of each projector component.
    pub fn component_ls(&self) -> &[(usize, usize)] {
        &self.components
    }

    /// QE's starting band sums for `nspin` channels with starting magnetisation `m0` (a
    /// fraction in [-1, 1]): each partial wave's occupation spread over its m, diagonal only.
    pub fn atomic_becsum(&self, nspin: usize, m0: f64) -> Vec<Vec<f64>> {
        let mut diag = Vec::new();
        for &(oc, l) in &self.occupations {
            diag.extend(std::iter::repeat_n(
                oc.max(0.0) / (2 * l + 1) as f64,
                2 * l + 1,
            ));
        }
        let share = |s: usize| match nspin {
            1 => 1.0,
            _ if s == 0 => 0.5 * (1.0 + m0),
            _ => 0.5 * (1.0 - m0),
        };
        (0..nspin)
            .map(|s| {
                pairs(diag.len())
                    .map(|(i, j)| if i == j { share(s) * diag[i] } else { 0.0 })
                    .collect()
            })
            .collect()
    }

    /// The sphere energies and `D¹[s][p]` (Ha) of one atom's `becsum[s][p]` with `functional`.
    pub fn one_centre(
        &self,
        functional: Functional,
        becsum: &[Vec<f64>],
    ) -> (OneCentreEnergy, Vec<Vec<f64>>) {
        self.one_centre_part(functional, becsum, (0, 1), true)
    }

    /// Part `index` of `count` of [`Self::one_centre`]: the XC spheres' directions
    /// x ≡ index (mod count), and the Hartree terms in part 0. The parts add up to the whole.
    /// Without `coupling` the energies alone (D¹ empty).
    pub fn one_centre_part(
        &self,
        functional: Functional,
        becsum: &[Vec<f64>],
        (index, count): (usize, usize),
        coupling: bool,
    ) -> (OneCentreEnergy, Vec<Vec<f64>>) {
        let big_l = match (self.lmax_rho, functional.is_gga()) {
            (0, _) => 0,
            (l, false) => 3 * l,
            (l, true) => 3 * l + 2,
        };
        let sphere = xc::Sphere::new((big_l + 2) / 2, big_l + 1 + big_l % 2, self.lmax_rho)
            .part(index, count);
        let part = Part {
            sphere: &sphere,
            hartree: index == 0,
        };
        let (h_ae, x_ae, d_ae) = self.half(functional, &part, becsum, (true, coupling));
        let (h_ps, x_ps, d_ps) = self.half(functional, &part, becsum, (false, coupling));
        let d = d_ae
            .iter()
            .zip(&d_ps)
            .map(|(a, p)| a.iter().zip(p).map(|(a, p)| a - p).collect())
            .collect();
        let e = OneCentreEnergy {
            hartree_ae: h_ae,
            hartree_ps: h_ps,
            xc_ae: x_ae,
            xc_ps: x_ps,
        };
        (e, d)
    }

    /// The radial function of term `t` on the all-electron (`ae`) or pseudo side.
    fn func(&self, t: &PairTerm, ae: bool) -> &[f64] {
        if ae {
            &self.ae[t.ae]
        } else {
            &self.ps[t.ps]
        }
    }

    /// One side's (all-electron when `ae`) Hartree (in part 0) and XC energies (over the
    /// part's directions), and with `coupling` their derivative per spin and pair.
    fn half(
        &self,
        functional: Functional,
        part: &Part<'_>,
        becsum: &[Vec<f64>],
        (ae, coupling): (bool, bool),
    ) -> (f64, f64, Vec<Vec<f64>>) {
        let sphere = part.sphere;
        let (n, nlm, nspin) = (self.r.len(), sphere.nlm(), becsum.len());
        // f[s][lm][k] = r² ρ_lm of spin s.
        let mut f = vec![vec![vec![0.0; n]; nlm]; nspin];
        for (s, b) in becsum.iter().enumerate() {
            for (p, terms) in self.pair_terms.iter().enumerate() {
                for t in terms {
                    let c = b[p] * t.ap;
                    let func = self.func(t, ae);
                    f[s][t.lm]
                        .iter_mut()
                        .zip(func)
                        .for_each(|(o, v)| *o += c * v);
                }
            }
        }
        // Hartree of the total: E = ½ Σ ∫ v f dr; ∂E/∂f(k) = v(k) w_k for every spin.
        let mut de_h = vec![vec![0.0; n]; nlm];
        let mut e_h = 0.0;
        for lm in (0..nlm).filter(|_| part.hartree) {
            let l = (lm as f64).sqrt() as usize;
            let total: Vec<f64> = (0..n).map(|k| f.iter().map(|fs| fs[lm][k]).sum()).collect();
            if total.iter().all(|&v| v == 0.0) {
                continue;
            }
            let v = hartree::potential(l, &total, &self.r, &self.rab);
            for k in 0..n {
                de_h[lm][k] = v[k] * self.simpson[k];
                e_h += 0.5 * de_h[lm][k] * total[k];
            }
        }
        let weights: Vec<f64> = (0..n)
            .map(|k| self.simpson[k] * self.r[k] * self.r[k])
            .collect();
        let mesh = xc::Radial {
            r: &self.r,
            weights: &weights,
        };
        let core = if ae { &self.ae_core } else { &self.ps_core };
        let (e_xc, de_xc) = xc::energy(functional, sphere, &mesh, &f, core, coupling);
        if !coupling {
            return (e_h, e_xc, Vec::new());
        }
        // D[s][p] = Σ_terms ap ∫ ∂E/∂f_lm · func.
        let d = (0..nspin)
            .map(|s| {
                self.pair_terms
                    .iter()
                    .map(|terms| {
                        terms
                            .iter()
                            .map(|t| {
                                let func = self.func(t, ae);
                                let de = (0..n)
                                    .map(|k| (de_h[t.lm][k] + de_xc[s][t.lm][k]) * func[k])
                                    .sum::<f64>();
                                t.ap * de
                            })
                            .sum()
                    })
                    .collect()
            })
            .collect();
        (e_h, e_xc, d)
    }
}

#[cfg(test)]
mod tests;
