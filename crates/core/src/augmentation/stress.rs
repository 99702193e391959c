//! The stress of the augmentation charges, by the analytic strain derivative of Q_p(G).
//!
//! Contract: [`AugmentationCharges::stress`] gives
//! `σ_ab = -(1/Ω) Σ_s Σ_a Σ_p becsum_p Re Σ_G V_s(G) e^{iG·τ_a} ∂Q_p(G)*/∂ε_ab`, the charges
//! keeping their shape while the sphere's G strain, `G' = (1 − ε) G`, so that
//! `∂Q/∂ε_ab = −(∂_a Q G_b + ∂_b Q G_a) / 2` with
//! `∂_c Q = Σ_LM (−i)^L ap_LM [4π qrad_L(|G|) ∂_c Y_LM(Ĝ) + 4π qrad_L'(|G|) Y_LM(Ĝ) G_c/|G|]`
//! (QE's `addusstress` with `dqvan2`). The harmonics' gradients are analytic
//! ([`gradients`]), the radial slopes central differences of relative step 1e-5 per |G| shell.
//! The band sums and potentials are combined per pair first, then one pass over this rank's
//! sphere entries (dealt over the threads in fixed chunks) gives all six components; summed
//! over the G-vector group (collective). V, the phases and Q are transforms of real fields,
//! so the terms at G and -G are conjugate: the sum runs over the upper half of the sphere
//! with weight 2 ([`crate::basis`]'s pair weight), the same on any layout.

use super::{minus_i_pow, AugmentationCharges, Becsum, SpeciesPairs};
use crate::basis::{conjugate_pair_weight, Basis};
use crate::clebsch_gordan::{gradients, harmonics};
use crate::model::Model;
use crate::ordered_sum::{add_arrays, ordered_sum};
use crate::terms::nonlocal::AtomPhase;
use num_complex::Complex64;
use std::f64::consts::PI;

/// The six strain components (a ≤ b).
const STRAIN: [(usize, usize); 6] = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];
/// Relative step of the radial slopes.
const RADIAL_STEP: f64 = 1e-5;

impl AugmentationCharges {
    /// The stress (Ha/bohr³, QE's sign) of the augmentation charges in the local potentials
    /// `v_g` (per spin, on this rank's sphere entries) with the bands' `becsum` (module doc).
    /// Collective on the G-vector group.
    pub fn stress(
        &self,
        model: &Model,
        basis: &Basis,
        v_g: &[Vec<Complex64>],
        becsum: &Becsum,
    ) -> [[f64; 3]; 3] {
        let mut sums = [0.0; 6];
        for (sp, pairs) in self.species.iter().enumerate() {
            let Some(pairs) = pairs else { continue };
            let part = species_strain(model, basis, (sp, pairs), v_g, becsum);
            sums = add_arrays(sums, part);
        }
        basis.sum_over_rho(&mut sums);
        let mut out = [[0.0; 3]; 3];
        for (&(a, b), s) in STRAIN.iter().zip(sums) {
            out[a][b] = -s / basis.volume;
            out[b][a] = out[a][b];
        }
        out
    }
}

/// `Σ_p Re Σ_G W_p(G) ∂Q_p(G)*/∂ε` of species `sp` on this rank's entries, with
/// `W_p = Σ_s Σ_a becsum[s][a][p] V_s(G) e^{iG·τ_a}` over the species' atoms.
fn species_strain(
    model: &Model,
    basis: &Basis,
    (sp, pairs): (usize, &SpeciesPairs),
    v_g: &[Vec<Complex64>],
    becsum: &Becsum,
) -> [f64; 6] {
    let atoms: Vec<usize> = (0..model.crystal.atoms.len())
        .filter(|&a| model.crystal.atoms[a].species == sp)
        .collect();
    let weights = Weights {
        phases: (atoms.iter())
            .map(|&a| AtomPhase::new(model.crystal.atoms[a].frac, [0.0; 3], &basis.rho_millers))
            .collect(),
        atoms,
        v_g,
        becsum,
    };
    let lmax = pairs.lmax();
    let slopes = radial_slopes(model, basis, (sp, pairs));
    let part = |range: std::ops::Range<usize>| {
        let mut acc = [0.0; 6];
        let mut w = vec![Complex64::new(0.0, 0.0); pairs.terms.len()];
        for g in range {
            let q = crate::crystal::norm(&basis.rho_g[g]);
            // Each +-G pair's two terms have one real part (module doc): taken twice at the
            // pair's upper-half entry, the mirror's skipped.
            let pair_weight = conjugate_pair_weight(&basis.rho_millers[g]);
            if q >= 1e-10 && pair_weight > 0.0 {
                weights.at(basis, g, &mut w);
                w.iter_mut().for_each(|w| *w *= pair_weight);
                let at = Entry {
                    g: basis.rho_g[g],
                    q,
                    shell: basis.rho_shell[g],
                    lmax,
                };
                at.add(pairs, &slopes, &w, &mut acc);
            }
        }
        acc
    };
    ordered_sum(basis.rho_g.len(), [0.0; 6], part, add_arrays)
}

/// `d(4π qrad_L)/dq` per term of every pair of species `sp` and per |G| shell.
fn radial_slopes(
    model: &Model,
    basis: &Basis,
    (sp, pairs): (usize, &SpeciesPairs),
) -> Vec<Vec<Vec<f64>>> {
    let aug = model.species[sp].pseudo.augmentation().expect("ultrasoft");
    (pairs.terms.iter())
        .map(|terms| {
            (terms.iter())
                .map(|t| {
                    let (i, j) = t.betas;
                    let f = |q: f64| 4.0 * PI * aug.qrad(t.big_l, i, j, q);
                    (basis.rho_shell_norm.iter())
                        .map(|&q| {
                            let h = RADIAL_STEP * q;
                            if h > 0.0 {
                                (f(q + h) - f(q - h)) / (2.0 * h)
                            } else {
                                0.0
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The band sums and potentials of one species' atoms, combined per pair at an entry.
struct Weights<'a> {
    atoms: Vec<usize>,
    phases: Vec<AtomPhase>,
    v_g: &'a [Vec<Complex64>],
    becsum: &'a Becsum,
}

impl Weights<'_> {
    /// `W_p` (module doc) of every pair at entry `g`, into `w`.
    fn at(&self, basis: &Basis, g: usize, w: &mut [Complex64]) {
        w.fill(Complex64::new(0.0, 0.0));
        for (s, v) in self.v_g.iter().enumerate() {
            for (&a, phase) in self.atoms.iter().zip(&self.phases) {
                let shifted = v[g] * phase.of(&basis.rho_millers[g]).conj();
                for (w, b) in w.iter_mut().zip(&self.becsum[s][a]) {
                    *w += shifted * b;
                }
            }
        }
    }
}

/// One sphere entry: G, |G| (> 0), its shell, and the highest L of the species' terms.
struct Entry {
    g: [f64; 3],
    q: f64,
    shell: usize,
    lmax: usize,
}

impl Entry {
    /// `acc[ab] += Re(W_p conj(∂Q_p/∂ε_ab))` for every pair p of `pairs` (module doc).
    fn add(
        &self,
        pairs: &SpeciesPairs,
        slopes: &[Vec<Vec<f64>>],
        w: &[Complex64],
        acc: &mut [f64; 6],
    ) {
        let (gv, q) = (self.g, self.q);
        let u = [gv[0] / q, gv[1] / q, gv[2] / q];
        let (ylm, grad) = (harmonics(self.lmax, u), gradients(self.lmax, u));
        // Σ_p,terms of Re(W conj((-i)^L)) times qrad ∇Y (angular) and qrad' Y (radial): the
        // strain components need only these two sums of the entry.
        let (mut angular, mut radial) = ([0.0; 3], 0.0);
        for ((terms, slopes), w) in pairs.terms.iter().zip(slopes).zip(w) {
            for (t, slope) in terms.iter().zip(slopes) {
                let (mut y, mut gy) = (0.0, [0.0; 3]);
                for &(lm, ap) in &t.harmonics {
                    y += ap * ylm[lm];
                    (0..3).for_each(|c| gy[c] += ap * grad[lm][c]);
                }
                let (r, dr) = (t.radial[self.shell], slope[self.shell]);
                // Re(W conj((-i)^L d)) for the real d below.
                let wp = (w * minus_i_pow(t.big_l).conj()).re;
                (0..3).for_each(|c| angular[c] += wp * r * gy[c]);
                radial += wp * y * dr;
            }
        }
        for (acc, &(a, b)) in acc.iter_mut().zip(&STRAIN) {
            let sym = 0.5 * (angular[a] * gv[b] + angular[b] * gv[a]);
            *acc -= (sym + radial * gv[a] * gv[b]) / q;
        }
    }
}
