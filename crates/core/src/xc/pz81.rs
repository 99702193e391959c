//! Perdew-Zunger 1981 parametrisation of the Ceperley-Alder correlation
//! energy (QE's `pz`, `pz_polarized`, `pz_spin`; Hartree atomic units).
//!
//! For `rs < 1` the high-density expansion `a ln rs + b + c rs ln rs + d rs`
//! is used, otherwise the Pade form `gc / (1 + b1 sqrt(rs) + b2 rs)`; the two
//! branches are (as in the original) only approximately continuous at `rs = 1`.
//! The polarised case interpolates between the paramagnetic and ferromagnetic
//! fits with the von Barth-Hedin `f(zeta)`.

use super::{lsd_potentials, spin_interp_f, vector_math};

struct PzParams {
    a: f64,
    b: f64,
    c: f64,
    d: f64,
    gc: f64,
    b1: f64,
    b2: f64,
}

/// Paramagnetic (unpolarised) parameters.
const PZ_U: PzParams = PzParams {
    a: 0.0311,
    b: -0.048,
    c: 0.0020,
    d: -0.0116,
    gc: -0.1423,
    b1: 1.0529,
    b2: 0.3334,
};

/// Ferromagnetic (fully polarised) parameters.
const PZ_P: PzParams = PzParams {
    a: 0.01555,
    b: -0.0269,
    c: 0.0007,
    d: -0.0048,
    gc: -0.0843,
    b1: 1.3981,
    b2: 0.2611,
};

/// `(eps_c, d eps_c / d rs)` for one parameter set (`rs > 0`). Branch-free so that a loop
/// over grid points vectorises: both forms are evaluated and `rs < 1` picks one; the
/// logarithm is [`vector_math::ln`]'s.
#[inline(always)]
fn pz_eps(rs: f64, p: &PzParams) -> (f64, f64) {
    let lnrs = vector_math::ln(rs);
    let ec_low = p.a * lnrs + p.b + p.c * rs * lnrs + p.d * rs;
    let dec_low = p.a / rs + p.c * lnrs + p.c + p.d;
    let rs12 = rs.sqrt();
    let ox = 1.0 + p.b1 * rs12 + p.b2 * rs;
    let dox = 0.5 * p.b1 / rs12 + p.b2;
    let ec_high = p.gc / ox;
    let dec_high = -ec_high * dox / ox;
    if rs < 1.0 {
        (ec_low, dec_low)
    } else {
        (ec_high, dec_high)
    }
}

/// Unpolarised PZ81 correlation: `(eps_c, v_c)`.
#[inline(always)]
pub(super) fn pz(rs: f64) -> (f64, f64) {
    let (ec, dec) = pz_eps(rs, &PZ_U);
    (ec, ec - rs / 3.0 * dec)
}

/// Polarised PZ81 correlation: `(eps_c, v_c_up, v_c_dw)`.
#[inline]
pub(super) fn pz_spin(rs: f64, zeta: f64) -> (f64, f64, f64) {
    let (ecu, decu) = pz_eps(rs, &PZ_U);
    let (ecp, decp) = pz_eps(rs, &PZ_P);
    let (fz, dfz) = spin_interp_f(zeta);
    let ec = ecu + fz * (ecp - ecu);
    let dec_drs = decu + fz * (decp - decu);
    let dec_dz = dfz * (ecp - ecu);
    let (vu, vd) = lsd_potentials(rs, zeta, ec, dec_drs, dec_dz);
    (ec, vu, vd)
}
