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

/// The phase -G.tau = -2 pi m.x of Miller index `m` at fractional position `x`.
#[inline]
fn structure_phase(m: &[i32; 3], x: &[f64; 3]) -> f64 {
    -2.0 * std::f64::consts::PI * (m[0] as f64 * x[0] + m[1] as f64 * x[1] + m[2] as f64 * x[2])
}

/// Values on the density sphere from per-species radial form factors, each atom weighted:
/// `out[G] = (1/Omega) sum_atoms w_atom e^{-iG.tau} f_species(|G|)`. Form factors are evaluated
/// once per |G| shell.
pub(crate) fn structure_factor_sum(
    model: &crate::model::Model,
    basis: &crate::basis::Basis,
    atom_weight: impl Fn(usize) -> f64,
    form_factor: impl Fn(usize, f64) -> f64,
) -> Vec<num_complex::Complex64> {
    use num_complex::Complex64;
    let mut out = vec![Complex64::new(0.0, 0.0); basis.rho_g.len()];
    for s in 0..model.species.len() {
        let atoms: Vec<([f64; 3], f64)> = model
            .crystal
            .atoms
            .iter()
            .enumerate()
            .filter(|(i, a)| a.species == s && atom_weight(*i) != 0.0)
            .map(|(i, a)| (a.frac, atom_weight(i)))
            .collect();
        if atoms.is_empty() {
            continue;
        }
        let ff: Vec<f64> = basis
            .rho_shell_norm
            .iter()
            .map(|&q| form_factor(s, q) / basis.volume)
            .collect();
        for ((m, o), &shell) in basis
            .rho_millers
            .iter()
            .zip(out.iter_mut())
            .zip(&basis.rho_shell)
        {
            let mut sf = Complex64::new(0.0, 0.0);
            for (x, w) in &atoms {
                let ph = structure_phase(m, x);
                sf += Complex64::from_polar(*w, ph);
            }
            *o += sf * ff[shell];
        }
    }
    out
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
    form_factor: impl Fn(usize, f64) -> f64,
) -> Vec<[f64; 3]> {
    let nsp = model.species.len();
    let ff: Vec<Vec<f64>> = (0..nsp)
        .map(|s| {
            basis
                .rho_shell_norm
                .iter()
                .map(|&q| form_factor(s, q))
                .collect()
        })
        .collect();
    model
        .crystal
        .atoms
        .iter()
        .map(|atom| {
            let mut f = [0.0; 3];
            for (((m, g), a), &shell) in basis
                .rho_millers
                .iter()
                .zip(&basis.rho_g)
                .zip(field_g)
                .zip(&basis.rho_shell)
            {
                let ph = structure_phase(m, &atom.frac);
                // dE/dtau = sum_G Re(conj(A) (-iG) e^{-iG.tau}) f = sum_G G f Im(conj(A) e^{-iG.tau})
                let z = a.conj() * num_complex::Complex64::from_polar(1.0, ph);
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
    form_factor: impl Fn(usize, f64) -> f64,
) -> [[f64; 3]; 3] {
    let mut out = [[0.0; 3]; 3];
    for s in 0..model.species.len() {
        let atoms: Vec<[f64; 3]> = model
            .crystal
            .atoms
            .iter()
            .filter(|a| a.species == s)
            .map(|a| a.frac)
            .collect();
        if atoms.is_empty() {
            continue;
        }
        let dff: Vec<f64> = basis
            .rho_shell_norm
            .iter()
            .map(|&q| {
                if q < 1e-10 {
                    0.0
                } else {
                    radial_derivative(|x| form_factor(s, x), q) / q
                }
            })
            .collect();
        for (((m, g), a), &shell) in basis
            .rho_millers
            .iter()
            .zip(&basis.rho_g)
            .zip(field_g)
            .zip(&basis.rho_shell)
        {
            if dff[shell] == 0.0 {
                continue;
            }
            let mut sf = num_complex::Complex64::new(0.0, 0.0);
            for x in &atoms {
                let ph = structure_phase(m, x);
                sf += num_complex::Complex64::from_polar(1.0, ph);
            }
            let w = (a.conj() * sf).re * dff[shell];
            for i in 0..3 {
                for j in 0..3 {
                    out[i][j] += w * g[i] * g[j];
                }
            }
        }
    }
    out
}
