//! Exchange–correlation on the FFT grid: LDA pointwise, GGA with gradients taken in G-space.
//!
//! Input: the spin densities on the grid and on the density sphere (with the pseudo-core density
//! already added for NLCC). For GGA the potential is v = de/drho - div(h), h = 2 vsigma grad rho
//! (spin: h_up = 2 v_uu grad rho_up + v_ud grad rho_dn), the divergence taken on the density
//! sphere as Quantum ESPRESSO does. E_xc = (Omega/N) sum_r e(r).

use super::term::{Share, State, Term};
use crate::bands::BandScalar;
use crate::basis::Basis;
use crate::xc::{evaluate_scaled, n_sigma, Functional};
use num_complex::Complex64;

/// The exchange-correlation term (the NLCC core density included in what it sees).
pub struct Xc;

/// What [`compute`] is asked for beyond the energy: the GGA potential costs a divergence
/// (three transforms and their grids), the gradient tensor a pass over the gradients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XcParts {
    /// The energy only (`potential` empty).
    Energy,
    /// The energy and the potential.
    Potential,
    /// Everything, the gradient tensor of the stress included.
    All,
}

/// The functional evaluated on the state's densities plus their core share, with those
/// grid densities.
fn evaluate_state<'s, T: BandScalar>(
    s: &State<'s, T>,
    parts: XcParts,
) -> (XcResult, std::borrow::Cow<'s, [Vec<f64>]>) {
    let (xr, xg) = crate::density::with_core(s.rho, s.core);
    let f = s.model.functional;
    (compute(f, s.exchange_mix(), s.basis, &xr, &xg, parts), xr)
}

impl<T: BandScalar> Term<T> for Xc {
    fn name(&self) -> &'static str {
        "xc"
    }
    fn energy(&self, s: &State<'_, T>) -> Option<Share<f64>> {
        Some(Share::Grid(evaluate_state(s, XcParts::Energy).0.energy))
    }
    fn potential(&self, s: &State<'_, T>) -> Option<Vec<Vec<f64>>> {
        Some(evaluate_state(s, XcParts::Potential).0.potential)
    }
    /// GGA only: its energy at another density costs the gradient transforms and the
    /// functional again; LDA's is a cheap pointwise pass, evaluated afresh.
    fn potential_with_energy(&self, s: &State<'_, T>) -> Option<(Vec<Vec<f64>>, Share<f64>)> {
        if !s.model.functional.is_gga() {
            return None;
        }
        let r = evaluate_state(s, XcParts::Potential).0;
        Some((r.potential, Share::Grid(r.energy)))
    }
    /// `sigma = -(1/Omega) [(E_xc - int v rho_xc) delta - T_grad]` (the core shape term is the
    /// core correction's).
    fn stress(&self, s: &State<'_, T>) -> Option<Share<[[f64; 3]; 3]>> {
        let (xcr, xr) = evaluate_state(s, XcParts::All);
        let omega = s.basis.volume;
        let dv = s.basis.dv();
        let v_rho: f64 = xcr
            .potential
            .iter()
            .zip(xr.iter())
            .map(|(v, r)| v.iter().zip(r).map(|(a, b)| a * b).sum::<f64>())
            .sum::<f64>()
            * dv;
        let mut out = [[0.0; 3]; 3];
        for (a, row) in out.iter_mut().enumerate() {
            for (b, x) in row.iter_mut().enumerate() {
                let diag = if a == b { xcr.energy - v_rho } else { 0.0 };
                *x = (xcr.gradient_tensor[a][b] - diag) / omega;
            }
        }
        Some(Share::Grid(out))
    }
}

/// XC energy (Ha; this rank's part) and potential per spin channel at this rank's grid points
/// (Ha).
#[derive(Debug, Clone)]
pub struct XcResult {
    /// E_xc.
    pub energy: f64,
    /// v_xc for each spin channel.
    pub potential: Vec<Vec<f64>>,
    /// GGA only (zero for LDA): `int sum_st c_st d_a rho_s d_b rho_t dr` with `c = 2 de/d sigma_ss`
    /// on the diagonal and `de/d sigma_ud` off it: the gradient part of the XC strain derivative.
    pub gradient_tensor: [[f64; 3]; 3],
}

/// Gradient (3 Cartesian components on the grid) of a field given on the density sphere.
fn gradient(basis: &Basis, field_g: &[Complex64]) -> [Vec<f64>; 3] {
    use rayon::prelude::*;
    let d: Vec<Vec<Complex64>> = (0..3)
        .map(|a| {
            field_g
                .par_iter()
                .zip(&basis.rho_g)
                .map(|(f, g)| Complex64::new(0.0, g[a]) * f)
                .collect()
        })
        .collect();
    let fields: Vec<&[Complex64]> = d.iter().map(Vec::as_slice).collect();
    let mut r = basis.rho_to_real_many(&fields).into_iter();
    [(); 3].map(|_| r.next().expect("three components"))
}

/// Divergence of a vector field on the grid, band-limited to the density sphere.
fn divergence(basis: &Basis, h: &[Vec<f64>; 3]) -> Vec<f64> {
    let fields: Vec<&[f64]> = h.iter().map(Vec::as_slice).collect();
    let hg = basis.rho_to_sphere_many(&fields);
    use rayon::prelude::*;
    let acc: Vec<Complex64> = (0..basis.rho_g.len())
        .into_par_iter()
        .map(|i| {
            let g = basis.rho_g[i];
            let mut d = Complex64::new(0.0, 0.0);
            for (a, comp) in hg.iter().enumerate() {
                d += Complex64::new(0.0, g[a]) * comp[i];
            }
            d
        })
        .collect();
    super::sphere_to_real(basis, &acc)
}

/// Evaluate the functional for spin densities `rho_r` (grid) / `rho_g` (sphere): the energy,
/// and the other `parts`.
pub fn compute(
    functional: Functional,
    mix: crate::xc::ExchangeMix,
    basis: &Basis,
    rho_r: &[Vec<f64>],
    rho_g: &[Vec<Complex64>],
    parts: XcParts,
) -> XcResult {
    let nspin = rho_r.len();
    let n = rho_r[0].len();
    let dv = basis.dv();
    let rho: Vec<&[f64]> = rho_r.iter().map(|r| r.as_slice()).collect();
    if !functional.is_gga() {
        let out = evaluate_scaled(functional, mix, &rho, &[]);
        let energy = out.e.iter().sum::<f64>() * dv;
        return XcResult {
            energy,
            potential: out.vrho,
            gradient_tensor: [[0.0; 3]; 3],
        };
    }
    let mut grads: Vec<[Vec<f64>; 3]> = rho_g.iter().map(|g| gradient(basis, g)).collect();
    use rayon::prelude::*;
    // Pointwise passes over the grid run on the threads (no sums: the same on any count).
    let dotp = |a: &[Vec<f64>; 3], b: &[Vec<f64>; 3]| -> Vec<f64> {
        (0..n)
            .into_par_iter()
            .map(|i| a[0][i] * b[0][i] + a[1][i] * b[1][i] + a[2][i] * b[2][i])
            .collect()
    };
    let sigma: Vec<Vec<f64>> = if nspin == 1 {
        vec![dotp(&grads[0], &grads[0])]
    } else {
        vec![
            dotp(&grads[0], &grads[0]),
            dotp(&grads[0], &grads[1]),
            dotp(&grads[1], &grads[1]),
        ]
    };
    debug_assert_eq!(sigma.len(), n_sigma(functional, nspin));
    let sig: Vec<&[f64]> = sigma.iter().map(|s| s.as_slice()).collect();
    let mut out = evaluate_scaled(functional, mix, &rho, &sig);
    let energy = out.e.iter().sum::<f64>() * dv;
    // The grid's peak is below: free what is no longer read.
    drop(sig);
    drop(sigma);
    out.e = Vec::new();
    let mut gradient_tensor = [[0.0; 3]; 3];
    if parts == XcParts::Energy {
        return XcResult {
            energy,
            potential: Vec::new(),
            gradient_tensor,
        };
    }
    for (a, row) in gradient_tensor
        .iter_mut()
        .enumerate()
        .filter(|_| parts == XcParts::All)
    {
        for (b, t) in row.iter_mut().enumerate() {
            let pair = |s: usize, u: usize, v: &[f64]| -> f64 {
                (0..n)
                    .map(|i| v[i] * grads[s][a][i] * grads[u][b][i])
                    .sum::<f64>()
            };
            *t = if nspin == 1 {
                2.0 * pair(0, 0, &out.vsigma[0])
            } else {
                2.0 * pair(0, 0, &out.vsigma[0])
                    + pair(0, 1, &out.vsigma[1])
                    + pair(1, 0, &out.vsigma[1])
                    + 2.0 * pair(1, 1, &out.vsigma[2])
            } * dv;
        }
    }
    let mut potential = out.vrho;
    for s in 0..nspin {
        let h = if let ([grad], [v]) = (&mut grads[..], &out.vsigma[..]) {
            // Unpolarised: h = 2 v grad rho, formed in the gradient's own fields.
            let mut h = std::mem::take(grad);
            for h in h.iter_mut() {
                h.par_iter_mut().zip(v).for_each(|(h, v)| *h *= 2.0 * v);
            }
            h
        } else {
            // h_s = sum_t c_st grad rho_t with c = 2 v_ss and v_ud for the cross term.
            let (vss, other) = if s == 0 { (0, 1) } else { (2, 0) };
            [0, 1, 2].map(|a| {
                (0..n)
                    .into_par_iter()
                    .map(|i| {
                        2.0 * out.vsigma[vss][i] * grads[s][a][i]
                            + out.vsigma[1][i] * grads[other][a][i]
                    })
                    .collect()
            })
        };
        let div = divergence(basis, &h);
        potential[s]
            .par_iter_mut()
            .zip(&div)
            .for_each(|(v, d)| *v -= d);
    }
    XcResult {
        energy,
        potential,
        gradient_tensor,
    }
}
