//! Electron densities: per spin channel on the density sphere (G) and on the FFT grid (r).
//!
//! rho_s(r) = sum_k w_k sum_n f_nks |psi_nks(r)|^2, psi(r) = Omega^{-1/2} sum_G c(G) e^{i(k+G)r};
//! then band-limited to the density sphere and symmetrised with the crystal's operations
//! (the k-points are the irreducible set). Also: the superposition of atomic densities used as
//! the starting guess, and the NLCC core density.
//!
//! A density holds this rank's part: its density-sphere entries and its grid points, which
//! are everything unless a G-vector group deals the grid ([`crate::rho_dist`]); sums over
//! either are completed with [`Basis::sum_over_rho`].

use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::model::Model;
use crate::symmetry::DensitySymmetrizer;
use crate::terms::{sphere_to_real, structure_factor_sum};
use num_complex::Complex64;
use planewave_linalg::Mat;
use std::borrow::Cow;

/// A density: one channel without spin, (up, down) with collinear spin.
#[derive(Debug, Clone)]
pub struct Density {
    /// Coefficients on this rank's density-sphere entries, per channel.
    pub g: Vec<Vec<Complex64>>,
    /// Values at this rank's FFT grid points, per channel (electrons / bohr^3).
    pub r: Vec<Vec<f64>>,
    /// The band sums of PAW atoms the density carries, symmetrised (`[spin][atom][pair]`,
    /// [`crate::augmentation::Becsum`]); None without PAW species, or for a density not made
    /// from bands (the atoms' own then stand for them, [`crate::terms::paw`]).
    pub becsum: Option<crate::augmentation::Becsum>,
}

impl Density {
    /// Build from sphere coefficients (computes the grid values).
    pub fn from_g(basis: &Basis, g: Vec<Vec<Complex64>>) -> Self {
        let fields: Vec<&[Complex64]> = g.iter().map(Vec::as_slice).collect();
        let r = basis.rho_to_real_many(&fields);
        Self { g, r, becsum: None }
    }

    /// Total density on the sphere.
    pub fn total_g(&self) -> Vec<Complex64> {
        sum_channels(&self.g)
    }

    /// Total density on the grid.
    pub fn total_r(&self) -> Vec<f64> {
        sum_channels(&self.r)
    }

    /// Total magnetisation (N_up - N_down) and absolute magnetisation (\int |m|), bohr
    /// magnetons. Collective on the G-vector group.
    pub fn magnetization(&self, basis: &Basis) -> (f64, f64) {
        if self.r.len() < 2 {
            return (0.0, 0.0);
        }
        let mut m = [0.0; 2];
        for (u, d) in self.r[0].iter().zip(&self.r[1]) {
            m[0] += u - d;
            m[1] += (u - d).abs();
        }
        basis.sum_over_rho(&mut m);
        (m[0] * basis.dv(), m[1] * basis.dv())
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
    // The electron count Omega rho(G = 0), from the rank that holds G = 0.
    let mut rho0 = [basis.rho_g0_local().map_or(0.0, |g0| total[g0].re)];
    basis.sum_over_rho(&mut rho0);
    let scale = if rho0[0].abs() > 0.0 {
        model.n_electrons / (rho0[0] * basis.volume)
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

/// Per spin channel: grid values and sphere coefficients, owned or borrowed.
pub type Channels<'a> = (Cow<'a, [Vec<f64>]>, Cow<'a, [Vec<Complex64>]>);

/// The densities the XC functional sees: each spin channel plus its share of the NLCC core
/// density (grid values, sphere coefficients): borrowed from `rho` without a core.
pub fn with_core<'a>(rho: &'a Density, core: Option<&(Vec<Complex64>, Vec<f64>)>) -> Channels<'a> {
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
        None => (Cow::Borrowed(&rho.r[..]), Cow::Borrowed(&rho.g[..])),
    }
}

/// Density of occupied states: `psi[s][k]` (this rank's bands as columns) with occupations
/// `occ[s][k][n]` (all bands), plus `augmentation` (per spin, on this rank's sphere entries:
/// the ultrasoft charges, [`crate::augmentation`]) before it is symmetrised. Each rank adds its bands of the blocks it owns at its grid
/// points; the sum over band and k-point groups completes it (a G-vector group's ranks hold different points). The symmetriser sees the
/// whole sphere ([`Basis::rho_gather`]).
pub fn from_wavefunctions<T: BandScalar>(
    basis: &Basis,
    psi: &[Vec<Mat<T>>],
    occ: &[Vec<Vec<f64>>],
    augmentation: Option<Vec<Vec<Complex64>>>,
    symmetrizer: Option<&DensitySymmetrizer>,
) -> Density {
    let n = basis.band_grid_len();
    let par = &*basis.parallel;
    let mut acc = vec![vec![0.0; n]; psi.len()];
    par.time_block_work(|| {
        for (s, (psi_s, occ_s)) in psi.iter().zip(occ).enumerate() {
            for (k, kpt) in basis.kpoints.iter().enumerate() {
                if !par.owns(s, k) {
                    continue;
                }
                let mine = par.local_band_values(&occ_s[k]);
                let weights: Vec<f64> = mine.iter().map(|f| kpt.weight * f).collect();
                T::add_density(kpt, basis.band_fft(), &psi_s[k], &weights, &mut acc[s]);
            }
        }
    });
    let inv_vol = 1.0 / basis.volume;
    for a in &mut acc {
        par.sum_over_blocks(a);
        a.iter_mut().for_each(|x| *x *= inv_vol);
    }
    let fields: Vec<&[f64]> = acc.iter().map(Vec::as_slice).collect();
    let mut channels = basis.band_fields_to_sphere(&fields);
    for (g, extra) in channels.iter_mut().zip(augmentation.iter().flatten()) {
        g.iter_mut().zip(extra).for_each(|(g, x)| *g += x);
    }
    if let Some(sym) = symmetrizer {
        for g in &mut channels {
            *g = symmetrize(basis, sym, std::mem::take(g));
        }
    }
    Density::from_g(basis, channels)
}

/// `g` (this rank's density-sphere entries) symmetrised by `sym` (built for this rank's rows,
/// [`symmetrizer`]): the orbits of G cross ranks, so the symmetriser reads the whole sphere,
/// gathered over the G-vector group when it is dealt.
pub fn symmetrize(basis: &Basis, sym: &DensitySymmetrizer, g: Vec<Complex64>) -> Vec<Complex64> {
    let whole = if basis.rho_dist.is_some() {
        basis.rho_gather(&g)
    } else {
        g
    };
    sym.symmetrized_rows(&whole)
        .expect("the symmetriser is built for this basis' density sphere")
}

/// The density symmetriser of `model`'s operations for this rank's entries of the density
/// sphere (None without symmetry).
pub fn symmetrizer(model: &Model, basis: &Basis) -> Result<Option<DensitySymmetrizer>, String> {
    if model.symmetries.len() <= 1 {
        return Ok(None);
    }
    let rows: Vec<usize> = match &basis.rho_dist {
        Some(d) => d.local_g().to_vec(),
        None => (0..basis.rho_millers.len()).collect(),
    };
    DensitySymmetrizer::for_rows(&model.symmetries, basis.rho_global_millers(), &rows).map(Some)
}
