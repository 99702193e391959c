//! Electron densities: per spin channel on the density sphere (G) and on the FFT grid (r).
//!
//! rho_s(r) = sum_k w_k sum_n f_nks |psi_nks(r)|^2, psi(r) = Omega^{-1/2} sum_G c(G) e^{i(k+G)r};
//! then band-limited to the density sphere and symmetrised with the crystal's operations
//! (the k-points are the irreducible set). Also: the superposition of atomic densities used as
//! the starting guess, and the NLCC core density.

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use crate::symmetry::DensitySymmetrizer;
use crate::terms::{real_to_sphere, sphere_to_real, structure_factor_sum};
use num_complex::Complex64;
use planewave_linalg::Mat;

/// A density: one channel without spin, (up, down) with collinear spin.
#[derive(Debug, Clone)]
pub struct Density {
    /// Coefficients on the density sphere, per channel.
    pub g: Vec<Vec<Complex64>>,
    /// Values on the FFT grid, per channel (electrons / bohr^3).
    pub r: Vec<Vec<f64>>,
}

impl Density {
    /// Build from sphere coefficients (computes the grid values).
    pub fn from_g(basis: &Basis, g: Vec<Vec<Complex64>>) -> Self {
        let r = g.iter().map(|c| sphere_to_real(basis, c)).collect();
        Self { g, r }
    }

    /// Total density on the sphere.
    pub fn total_g(&self) -> Vec<Complex64> {
        sum_channels(&self.g)
    }

    /// Total density on the grid.
    pub fn total_r(&self) -> Vec<f64> {
        sum_channels(&self.r)
    }

    /// Total magnetisation (N_up - N_down) and absolute magnetisation (\int |m|), bohr magnetons.
    pub fn magnetization(&self, basis: &Basis) -> (f64, f64) {
        if self.r.len() < 2 {
            return (0.0, 0.0);
        }
        let dv = basis.volume / basis.grid_len() as f64;
        let (mut t, mut a) = (0.0, 0.0);
        for (u, d) in self.r[0].iter().zip(&self.r[1]) {
            t += u - d;
            a += (u - d).abs();
        }
        (t * dv, a * dv)
    }
}

fn sum_channels<T: Copy + std::ops::Add<Output = T>>(ch: &[Vec<T>]) -> Vec<T> {
    let mut out = ch[0].clone();
    for c in &ch[1..] {
        for (o, x) in out.iter_mut().zip(c) {
            *o = *o + *x;
        }
    }
    out
}

/// Superposition of atomic valence densities, split into spin channels by each atom's starting
/// magnetisation, scaled to the model's electron count.
pub fn atomic_guess(model: &Model, basis: &Basis) -> Density {
    let nspin = model.nspin();
    let density = |s: usize, q: f64| model.species[s].pseudo.atomic_density_fourier(q);
    let total = structure_factor_sum(model, basis, |_| 1.0, density);
    let g0 = basis.rho_g0_index();
    let scale = if total[g0].re.abs() > 0.0 {
        model.n_electrons / (total[g0].re * basis.volume)
    } else {
        1.0
    };
    let total: Vec<Complex64> = total.iter().map(|x| x * scale).collect();
    if nspin == 1 {
        return Density::from_g(basis, vec![total]);
    }
    // Magnetisation: each atom's density weighted by its starting magnetisation.
    let start = |a: usize| model.starting_magnetization.get(a).copied().unwrap_or(0.0);
    let mag = structure_factor_sum(model, basis, start, density);
    let up = total
        .iter()
        .zip(&mag)
        .map(|(t, m)| 0.5 * (t + m * scale))
        .collect();
    let dn = total
        .iter()
        .zip(&mag)
        .map(|(t, m)| 0.5 * (t - m * scale))
        .collect();
    Density::from_g(basis, vec![up, dn])
}

/// The NLCC pseudo-core density on the sphere and grid, if any species has one.
pub fn core_density(model: &Model, basis: &Basis) -> Option<(Vec<Complex64>, Vec<f64>)> {
    if !model.species.iter().any(|s| s.pseudo.has_core_correction()) {
        return None;
    }
    let g = structure_factor_sum(
        model,
        basis,
        |_| 1.0,
        |s, q| model.species[s].pseudo.core_density_fourier(q),
    );
    let r = sphere_to_real(basis, &g);
    Some((g, r))
}

/// The densities the XC functional sees: each spin channel plus its share of the NLCC core
/// density (grid values, sphere coefficients).
pub fn with_core(
    rho: &Density,
    core: Option<&(Vec<Complex64>, Vec<f64>)>,
) -> (Vec<Vec<f64>>, Vec<Vec<Complex64>>) {
    match core {
        Some((cg, cr)) => {
            let f = 1.0 / rho.r.len() as f64;
            (
                rho.r
                    .iter()
                    .map(|c| c.iter().zip(cr).map(|(a, b)| a + f * b).collect())
                    .collect(),
                rho.g
                    .iter()
                    .map(|c| c.iter().zip(cg).map(|(a, b)| a + b * f).collect())
                    .collect(),
            )
        }
        None => (rho.r.clone(), rho.g.clone()),
    }
}

/// Density of occupied states: `psi[s][k]` (bands as columns) with occupations `occ[s][k][n]`.
/// Each rank adds the blocks it owns (at its real-space points when the plane waves are dealt
/// over a G-vector group); the sums over the G-vector group and the k-point groups make it
/// whole on every rank.
pub fn from_wavefunctions<T: BandScalar>(
    basis: &Basis,
    psi: &[Vec<Mat<T>>],
    occ: &[Vec<Vec<f64>>],
    symmetrizer: Option<&DensitySymmetrizer>,
) -> Density {
    let n = basis.grid_len();
    let par = &*basis.parallel;
    let mut channels = Vec::with_capacity(psi.len());
    for (s, (psi_s, occ_s)) in psi.iter().zip(occ).enumerate() {
        let mut acc = vec![0.0; n];
        par.time_block_work(|| {
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                if !par.owns(s, k) {
                    continue;
                }
                let weights: Vec<f64> = occ_s[k].iter().map(|f| kpt.weight * f).collect();
                T::add_density(kpt, &basis.fft, &psi_s[k], &weights, &mut acc);
            }
        });
        if basis.gvectors_distributed() {
            par.sum_over_gvectors(&mut acc);
        }
        par.sum_over_kgroups(&mut acc);
        let inv_vol = 1.0 / basis.volume;
        acc.iter_mut().for_each(|x| *x *= inv_vol);
        let mut g = real_to_sphere(basis, &acc);
        if let Some(sym) = symmetrizer {
            sym.symmetrize(&mut g);
        }
        channels.push(g);
    }
    Density::from_g(basis, channels)
}
