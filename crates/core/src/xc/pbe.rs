//! PBE gradient corrections (Perdew, Burke, Ernzerhof, PRL 77, 3865 (1996)),
//! following QE's `pbex` (`iflag = 1`), `pbec` and `pbec_spin` (Hartree units).
//!
//! These routines return only the *gradient correction* to be added on top of
//! the LDA (Slater + PW92) part, exactly like QE:
//! * exchange: `sx = rho * eps_x^unif(rho) * (F_x(s) - 1)`,
//!   `F_x - 1 = kappa - kappa / (1 + mu s^2 / kappa)`, `kappa = 0.804`,
//!   `mu = 0.2195149727645171`, `s = |grad rho| / (2 k_F rho)`;
//! * correlation: `sc = rho * H(rs, zeta, t)` with
//!   `H = gamma phi^3 ln(1 + beta/gamma t^2 (1 + A t^2)/(1 + A t^2 + A^2 t^4))`,
//!   `A = beta/gamma / (exp(-eps_c^PW92/(gamma phi^3)) - 1)`,
//!   `t = |grad rho| / (2 phi k_s rho)`, `beta = 0.06672455060314922`.
//!   QE uses `gamma = (1 - ln 2)/pi^2 = 0.0310906908696549` in the
//!   unpolarised routine but the rounded `gamma = 0.031091` in the spin
//!   routine; both are reproduced here, so the polarised formula at `zeta = 0`
//!   differs from the unpolarised one by a relative ~1e-5 in `H` (as in QE).
//!
//! All derivatives are analytic: `v1 = d sx/d rho` and `v2 = d sx/d sigma`
//! (derivative with respect to `sigma = |grad rho|^2`, libxc convention; QE's
//! `v2x` is twice this).

use std::f64::consts::{FRAC_2_SQRT_PI, PI};

use super::pw92::pw_spin_eps;
use super::vector_math;
use super::PI34;

/// PBE kappa.
const KAPPA: f64 = 0.804;
/// PBE mu (QE's value for `iflag = 1`).
const MU: f64 = 0.219_514_972_764_517_1;
/// `(3 pi^2)^(1/3)`.
const C2: f64 = 3.093_667_726_280_136;
/// PBE beta.
const BETA: f64 = 0.066_724_550_603_149_22;
/// gamma used by QE's unpolarised `pbec`.
pub(super) const GAMMA_UNPOL: f64 = 0.031_090_690_869_654_895;
/// gamma used by QE's `pbec_spin`.
const GAMMA_SPIN: f64 = 0.031091;
/// `(9 pi / 4)^(1/3)`.
const XKF: f64 = 1.919_158_292_677_513;
/// `sqrt(4/pi)`.
const XKS: f64 = FRAC_2_SQRT_PI;

/// PBE exchange gradient correction for density `rho` (> 0) and
/// `grho = |grad rho|^2`: returns `(sx, d sx/d rho, d sx/d grho)`.
#[inline(always)]
pub(super) fn pbex(rho: f64, grho: f64) -> (f64, f64, f64) {
    pbex_cbrt(rho, vector_math::cbrt(rho), grho)
}

/// [`pbex`] given `rho13 = rho^(1/3)`.
#[inline(always)]
pub(super) fn pbex_cbrt(rho: f64, rho13: f64, grho: f64) -> (f64, f64, f64) {
    let kf = C2 * rho13;
    let inv4 = 1.0 / (4.0 * kf * kf * rho * rho);
    let s2 = grho * inv4;
    let f2 = 1.0 + MU * s2 / KAPPA;
    let fx = KAPPA - KAPPA / f2;
    let dfx = MU / (f2 * f2); // d F / d s^2
    let exunif = -0.75 / PI * kf;
    let sx = rho * exunif * fx;
    let v1 = exunif * (4.0 / 3.0 * fx - 8.0 / 3.0 * s2 * dfx);
    let v2 = rho * exunif * dfx * inv4;
    (sx, v1, v2)
}

/// `H` and its partial derivatives for the PBE correlation:
/// returns `(H, dH/d rho, dH/d zeta, dH/d grho)` where the `zeta`
/// derivative enters through `phi` (`dphi` = `d phi/d zeta`) and through
/// `eps_c` (`dec_dz`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pbe_h(
    rho: f64,
    rs: f64,
    grho: f64,
    phi: f64,
    dphi: f64,
    ec: f64,
    dec_drs: f64,
    dec_dz: f64,
    gamma: f64,
) -> (f64, f64, f64, f64) {
    let kf = XKF / rs;
    let ks2 = XKS * XKS * kf;
    let phi2 = phi * phi;
    let phi3 = phi2 * phi;
    let inv4 = 1.0 / (4.0 * phi2 * ks2 * rho * rho);
    let t2 = grho * inv4;
    let expe = vector_math::exp(-ec / (gamma * phi3));
    let a = BETA / gamma / (expe - 1.0);
    let y = a * t2;
    let den = 1.0 + y + y * y;
    let xy = (1.0 + y) / den;
    let dxy = -y * (2.0 + y) / (den * den); // d xy / d y
    let q = 1.0 + BETA / gamma * t2 * xy;
    let h = gamma * phi3 * vector_math::ln(q);
    // partial derivatives of H at fixed (A) and fixed (t^2)
    let h_t2 = phi3 * BETA * (xy + y * dxy) / q;
    let h_a = phi3 * BETA * t2 * t2 * dxy / q;
    // A(eps_c, phi)
    let da_dec = a * a * expe / (BETA * phi3);
    let da_dphi = -3.0 * a * a * expe * ec / (BETA * phi3 * phi);
    // chain rule
    let dt2_drho = -7.0 / 3.0 * t2 / rho;
    let drs_drho = -rs / (3.0 * rho);
    let dh_drho = h_t2 * dt2_drho + h_a * da_dec * dec_drs * drs_drho;
    let dh_dz =
        dphi * (3.0 * h / phi - 2.0 * h_t2 * t2 / phi + h_a * da_dphi) + h_a * da_dec * dec_dz;
    let dh_dg = h_t2 * inv4;
    (h, dh_drho, dh_dz, dh_dg)
}

/// Unpolarised PBE correlation gradient correction:
/// `(sc, d sc/d rho, d sc/d grho)`.
#[cfg(test)]
pub(super) fn pbec(rho: f64, grho: f64) -> (f64, f64, f64) {
    let rs = PI34 / vector_math::cbrt(rho);
    pbec_at(rho, rs, super::pw92::pw_g(rs, &super::pw92::PW_U), grho)
}

/// [`pbec`] given `rs` and PW92's `(eps_c, d eps_c/d rs)` there ([`pw_g`] with `PW_U`).
#[inline(always)]
pub(super) fn pbec_at(rho: f64, rs: f64, (ec, dec): (f64, f64), grho: f64) -> (f64, f64, f64) {
    let (h, dh_drho, _, dh_dg) = pbe_h(rho, rs, grho, 1.0, 0.0, ec, dec, 0.0, GAMMA_UNPOL);
    (rho * h, h + rho * dh_drho, rho * dh_dg)
}

/// Polarised PBE correlation gradient correction for total density `rho`,
/// polarisation `zeta` (|zeta| < 1) and `grho = |grad rho_total|^2`:
/// `(sc, d sc/d rho_up, d sc/d rho_dw, d sc/d grho)`.
#[inline(always)]
pub(super) fn pbec_spin(rho: f64, zeta: f64, grho: f64) -> (f64, f64, f64, f64) {
    pbec_spin_gamma(rho, zeta, grho, GAMMA_SPIN)
}

/// [`pbec_spin`] with an explicit `gamma` (tests compare with [`pbec`]).
#[inline(always)]
pub(super) fn pbec_spin_gamma(rho: f64, zeta: f64, grho: f64, gamma: f64) -> (f64, f64, f64, f64) {
    let rs = PI34 / vector_math::cbrt(rho);
    let (ec, dec_drs, dec_dz) = pw_spin_eps(rs, zeta);
    let up13 = vector_math::cbrt_or_zero(1.0 + zeta);
    let dw13 = vector_math::cbrt_or_zero(1.0 - zeta);
    let phi = 0.5 * (up13 * up13 + dw13 * dw13);
    let dphi = (1.0 / up13 - 1.0 / dw13) / 3.0;
    let (h, dh_drho, dh_dz, dh_dg) = pbe_h(rho, rs, grho, phi, dphi, ec, dec_drs, dec_dz, gamma);
    let common = h + rho * dh_drho;
    (
        rho * h,
        common + (1.0 - zeta) * dh_dz,
        common - (1.0 + zeta) * dh_dz,
        rho * dh_dg,
    )
}
