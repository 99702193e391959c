//! Perdew-Wang 1992 correlation (QE's `pw` with `iflag = 1` and `pw_spin`;
//! Hartree atomic units).
//!
//! `G(rs) = -2A (1 + a1 rs) ln(1 + 1/(2A (b1 rs^1/2 + b2 rs + b3 rs^3/2 + b4 rs^2)))`
//! with QE's constants (`A = 0.031091`, not the later 0.0310907 of libxc's
//! `pw_mod`), and the spin interpolation
//! `eps = G0 + alpha f(z) (1 - z^4) / f''(0) + (G1 - G0) f(z) z^4`,
//! `alpha = -G_alpha`, `f''(0) = 1.709921` (QE's truncated value).
//! Only the interpolation formula is used for all `rs`, as in QE.

use super::{lsd_potentials, spin_interp_f};

pub(super) struct PwParams {
    a: f64,
    a1: f64,
    b1: f64,
    b2: f64,
    b3: f64,
    b4: f64,
}

/// Paramagnetic parameters.
pub(super) const PW_U: PwParams = PwParams {
    a: 0.031091,
    a1: 0.21370,
    b1: 7.5957,
    b2: 3.5876,
    b3: 1.6382,
    b4: 0.49294,
};

/// Ferromagnetic parameters.
const PW_P: PwParams = PwParams {
    a: 0.015545,
    a1: 0.20548,
    b1: 14.1189,
    b2: 6.1977,
    b3: 3.3662,
    b4: 0.62517,
};

/// Spin-stiffness parameters (`-alpha_c`).
const PW_A: PwParams = PwParams {
    a: 0.016887,
    a1: 0.11125,
    b1: 10.357,
    b2: 3.6231,
    b3: 0.88026,
    b4: 0.49671,
};

/// `f''(0)` as truncated in QE.
const FZ0: f64 = 1.709921;

/// `(G, dG/drs)` for one parameter set.
#[inline(always)]
pub(super) fn pw_g(rs: f64, p: &PwParams) -> (f64, f64) {
    let rs12 = rs.sqrt();
    let om = 2.0 * p.a * (p.b1 * rs12 + p.b2 * rs + p.b3 * rs * rs12 + p.b4 * rs * rs);
    let dom = 2.0 * p.a * (0.5 * p.b1 / rs12 + p.b2 + 1.5 * p.b3 * rs12 + 2.0 * p.b4 * rs);
    let olog = super::vector_math::ln(1.0 + 1.0 / om);
    let g = -2.0 * p.a * (1.0 + p.a1 * rs) * olog;
    let dg = -2.0 * p.a * p.a1 * olog + 2.0 * p.a * (1.0 + p.a1 * rs) * dom / (om * (om + 1.0));
    (g, dg)
}

/// Unpolarised PW92: `(eps_c, v_c)`.
#[inline]
pub(super) fn pw(rs: f64) -> (f64, f64) {
    let (ec, dec) = pw_g(rs, &PW_U);
    (ec, ec - rs / 3.0 * dec)
}

/// Polarised PW92 energy and its partial derivatives:
/// `(eps_c, d eps_c/d rs, d eps_c/d zeta)`.
#[inline(always)]
pub(super) fn pw_spin_eps(rs: f64, zeta: f64) -> (f64, f64, f64) {
    let (g0, dg0) = pw_g(rs, &PW_U);
    let (g1, dg1) = pw_g(rs, &PW_P);
    let (ga, dga) = pw_g(rs, &PW_A);
    let alpha = -ga;
    let dalpha = -dga;
    let (fz, dfz) = spin_interp_f(zeta);
    let z3 = zeta * zeta * zeta;
    let z4 = z3 * zeta;
    let ec = g0 + alpha * fz * (1.0 - z4) / FZ0 + (g1 - g0) * fz * z4;
    let dec_drs = dg0 + dalpha * fz * (1.0 - z4) / FZ0 + (dg1 - dg0) * fz * z4;
    let dec_dz =
        alpha / FZ0 * (dfz * (1.0 - z4) - 4.0 * z3 * fz) + (g1 - g0) * (dfz * z4 + 4.0 * z3 * fz);
    (ec, dec_drs, dec_dz)
}

/// Polarised PW92: `(eps_c, v_c_up, v_c_dw)`.
#[inline(always)]
pub(super) fn pw_spin(rs: f64, zeta: f64) -> (f64, f64, f64) {
    let (ec, dec_drs, dec_dz) = pw_spin_eps(rs, zeta);
    let (vu, vd) = lsd_potentials(rs, zeta, ec, dec_drs, dec_dz);
    (ec, vu, vd)
}
