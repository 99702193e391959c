//! The energy terms of the Kohn–Sham functional, one file each, behind one interface
//! ([`term::Term`]; the list is [`term::standard`]).
//!
//! Density terms ([`local`], [`hartree`], [`xc`]) turn a density into a potential on the FFT grid
//! and an energy; wavefunction terms ([`kinetic`], [`nonlocal`]) act on blocks of bands
//! ([`augmentation`]: the forces of ultrasoft augmentation charges);
//! [`ewald`] depends on the ions only; [`core_correction`] gives the NLCC forces and stress and
//! [`entropy`] the smearing -TS. Energies are in Ha, potentials in Ha on the grid.

pub mod augmentation;
#[cfg(test)]
pub mod constant_shift;
pub mod core_correction;
pub mod entropy;
pub mod ewald;
pub mod exact_exchange;
pub mod hartree;
pub mod kinetic;
pub mod local;
pub mod nonlocal;
pub mod paw;
pub mod term;
pub mod xc;

/// `e^{-iG·τ}` tables (three 1-D factors, QE's `eigts`) of the atoms at fractional positions
/// `xs` over the density sphere's Miller indices.
fn sphere_phases(basis: &crate::basis::Basis, xs: &[[f64; 3]]) -> Vec<nonlocal::AtomPhase> {
    (xs.iter())
        .map(|&x| nonlocal::AtomPhase::new(x, [0.0; 3], &basis.rho_millers))
        .collect()
}

/// Values on the density sphere from per-species radial form factors, each atom weighted:
/// `out[G] = (1/Omega) sum_atoms w_atom e^{-iG.tau} f_species(|G|)`. Form factors are evaluated
/// once per |G| shell; the sphere is dealt over the threads.
pub(crate) fn structure_factor_sum(
    model: &crate::model::Model,
    basis: &crate::basis::Basis,
    atom_weight: impl Fn(usize) -> f64,
    form_factor: impl Fn(usize, f64) -> f64 + Sync,
) -> Vec<num_complex::Complex64> {
    use num_complex::Complex64;
    use rayon::prelude::*;
    let mut out = vec![Complex64::new(0.0, 0.0); basis.rho_g.len()];
    for s in 0..model.species.len() {
        let (xs, ws): (Vec<[f64; 3]>, Vec<f64>) = (model.crystal.atoms.iter().enumerate())
            .filter(|(i, a)| a.species == s && atom_weight(*i) != 0.0)
            .map(|(i, a)| (a.frac, atom_weight(i)))
            .unzip();
        if xs.is_empty() {
            continue;
        }
        let phases = sphere_phases(basis, &xs);
        let ff = per_shell(basis, |q| form_factor(s, q) / basis.volume);
        (out.par_chunks_mut(crate::ordered_sum::SPHERE_CHUNK))
            .zip(
                basis
                    .rho_millers
                    .par_chunks(crate::ordered_sum::SPHERE_CHUNK),
            )
            .zip(basis.rho_shell.par_chunks(crate::ordered_sum::SPHERE_CHUNK))
            .for_each(|((out, millers), shells)| {
                for ((o, m), &shell) in out.iter_mut().zip(millers).zip(shells) {
                    let sf: Complex64 = phases.iter().zip(&ws).map(|(p, w)| p.of(m) * w).sum();
                    *o += sf * ff[shell];
                }
            });
    }
    out
}

/// `f(|G|)` once per |G| shell of the density sphere (index it by `basis.rho_shell`), on the
/// threads: a low-symmetry cell has about as many shells as half its sphere.
pub(crate) fn per_shell(basis: &crate::basis::Basis, f: impl Fn(f64) -> f64 + Sync) -> Vec<f64> {
    use rayon::prelude::*;
    (basis.rho_shell_norm.par_iter()).map(|&q| f(q)).collect()
}

/// Values at this rank's grid points of a real field given on the density sphere.
pub(crate) fn sphere_to_real(
    basis: &crate::basis::Basis,
    field_g: &[num_complex::Complex64],
) -> Vec<f64> {
    basis.rho_to_real(field_g)
}

/// Density-sphere coefficients of a real field at this rank's grid points
/// (`f(G) = (1/N) sum_r f(r) e^{-iGr}`).
pub(crate) fn real_to_sphere(
    basis: &crate::basis::Basis,
    field_r: &[f64],
) -> Vec<num_complex::Complex64> {
    basis.rho_to_sphere(field_r)
}

/// Central-difference derivative of a radial form factor, `df/dq` at `q > 0`, with a relative
/// step (the form factors are smooth and evaluated exactly, so the error is ~1e-9 relative).
pub(crate) fn radial_derivative(f: impl Fn(f64) -> f64, q: f64) -> f64 {
    let h = 1e-4 * q;
    (f(q + h) - f(q - h)) / (2.0 * h)
}

/// Forces `F_a = -dE/dtau_a` from an energy `E = Omega sum_G conj(A(G)) X(G)`, where
/// `X(G) = (1/Omega) sum_atoms e^{-iG.tau} f_species(|G|)` is a structure-factor field and
/// `A` a field on the density sphere (e.g. the density for the local potential). The sum runs
/// over this rank's density-sphere entries (complete it over the G-vector group).
pub(crate) fn structure_factor_forces(
    model: &crate::model::Model,
    basis: &crate::basis::Basis,
    field_g: &[num_complex::Complex64],
    form_factor: impl Fn(usize, f64) -> f64 + Sync,
) -> Vec<[f64; 3]> {
    use rayon::prelude::*;
    let nsp = model.species.len();
    let ff: Vec<Vec<f64>> = (0..nsp)
        .map(|s| per_shell(basis, |q| form_factor(s, q)))
        .collect();
    (model.crystal.atoms.par_iter())
        .map(|atom| {
            let phase = nonlocal::AtomPhase::new(atom.frac, [0.0; 3], &basis.rho_millers);
            let mut f = [0.0; 3];
            for (((m, g), a), &shell) in basis
                .rho_millers
                .iter()
                .zip(&basis.rho_g)
                .zip(field_g)
                .zip(&basis.rho_shell)
            {
                // dE/dtau = sum_G Re(conj(A) (-iG) e^{-iG.tau}) f = sum_G G f Im(conj(A) e^{-iG.tau})
                let z = a.conj() * phase.of(m);
                let w = -z.im * ff[atom.species][shell];
                for c in 0..3 {
                    f[c] += g[c] * w;
                }
            }
            f
        })
        .collect()
}

/// The shape part of the strain derivative of `E = Omega sum_G conj(A(G)) X(G)` with `X` a
/// structure-factor field as in [`structure_factor_forces`]:
/// `sum_{G != 0} Re(conj(A) S(G)) f'(|G|) G_a G_b / |G|`, with `S(G) = sum_atoms e^{-iG.tau}`.
/// (Under strain `|G|` shrinks: `d|G|/d eps_ab = -G_a G_b/|G|`, so this enters dE/d eps with a
/// minus sign; the 1/Omega of `X` and the scaling of `A` are accounted for by the caller.)
/// The sum runs over this rank's density-sphere entries.
pub(crate) fn structure_factor_strain(
    model: &crate::model::Model,
    basis: &crate::basis::Basis,
    field_g: &[num_complex::Complex64],
    form_factor: impl Fn(usize, f64) -> f64 + Sync,
) -> [[f64; 3]; 3] {
    use crate::ordered_sum::{add_arrays, ordered_sum};
    let mut out = [[0.0; 3]; 3];
    for s in 0..model.species.len() {
        let atoms: Vec<[f64; 3]> = (model.crystal.atoms.iter())
            .filter(|a| a.species == s)
            .map(|a| a.frac)
            .collect();
        if atoms.is_empty() {
            continue;
        }
        let phases = sphere_phases(basis, &atoms);
        let dff = per_shell(basis, |q| {
            if q < 1e-10 {
                0.0
            } else {
                radial_derivative(|x| form_factor(s, x), q) / q
            }
        });
        let part = |range: std::ops::Range<usize>| {
            let mut part = [[0.0; 3]; 3];
            for p in range {
                let dff = dff[basis.rho_shell[p]];
                if dff == 0.0 {
                    continue;
                }
                let m = &basis.rho_millers[p];
                let sf: num_complex::Complex64 = phases.iter().map(|ph| ph.of(m)).sum();
                let (g, w) = (&basis.rho_g[p], (field_g[p].conj() * sf).re * dff);
                for i in 0..3 {
                    for j in 0..3 {
                        part[i][j] += w * g[i] * g[j];
                    }
                }
            }
            part
        };
        let sum = ordered_sum(field_g.len(), [[0.0; 3]; 3], part, |a, b| {
            std::array::from_fn(|i| add_arrays(a[i], b[i]))
        });
        for i in 0..3 {
            out[i] = add_arrays(out[i], sum[i]);
        }
    }
    out
}
