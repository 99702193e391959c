//! Vosko-Wilk-Nusair correlation, parametrisation "5" (fit to Ceperley-Alder),
//! which is what QE calls `vwn` (`'sla+vwn'`, `icorr = 2`) and `vwn_spin`
//! (Hartree atomic units).
//!
//! Pade fit (VWN eq. 4.4) in `x = sqrt(rs)`:
//! `F = A [ln(x^2/X) + 2b/Q atan(Q/(2x+b)) - b x0/X(x0) (ln((x-x0)^2/X)
//!      + 2(b+2x0)/Q atan(Q/(2x+b)))]`, `X = x^2 + b x + c`, `Q = sqrt(4c - b^2)`.
//! Spin interpolation (as in QE):
//! `eps = eps_P + a_c f(z) (1 - z^4) + (eps_F - eps_P) f(z) z^4`, where
//! `a_c = F_alpha / f''(0)` and the spin-stiffness fit uses `A = -1/(6 pi^2)`.

use super::{lsd_potentials, spin_interp_f};

struct VwnParams {
    a: f64,
    x0: f64,
    b: f64,
    c: f64,
}

/// Paramagnetic.
const VWN_P: VwnParams = VwnParams {
    a: 0.0310907,
    x0: -0.10498,
    b: 3.72744,
    c: 12.9352,
};

/// Ferromagnetic.
const VWN_F: VwnParams = VwnParams {
    a: 0.01554535,
    x0: -0.32500,
    b: 7.06042,
    c: 18.0578,
};

/// Spin stiffness (`A = -1/(6 pi^2)`, QE's literal).
const VWN_A: VwnParams = VwnParams {
    a: -0.01688686394039,
    x0: -0.0047584,
    b: 1.13107,
    c: 13.0045,
};

/// `(F, dF/drs)` for one parameter set.
#[inline]
fn vwn_fit(rs: f64, p: &VwnParams) -> (f64, f64) {
    let q = (4.0 * p.c - p.b * p.b).sqrt();
    let f1 = 2.0 * p.b / q;
    let f2 = p.b * p.x0 / (p.x0 * p.x0 + p.b * p.x0 + p.c);
    let f3 = 2.0 * (2.0 * p.x0 + p.b) / q;
    let x = rs.sqrt();
    let fx = rs + p.b * x + p.c;
    let tx = 2.0 * x + p.b;
    let qx = (q / tx).atan();
    let xx0 = x - p.x0;
    let f = p.a * ((rs / fx).ln() + f1 * qx - f2 * ((xx0 * xx0 / fx).ln() + f3 * qx));
    let tt = tx * tx + q * q;
    let df_dx = p.a
        * (2.0 / x
            - tx / fx
            - 4.0 * p.b / tt
            - f2 * (2.0 / xx0 - tx / fx - 4.0 * (2.0 * p.x0 + p.b) / tt));
    (f, df_dx / (2.0 * x))
}

/// Unpolarised VWN5: `(eps_c, v_c)`.
#[inline]
pub(super) fn vwn(rs: f64) -> (f64, f64) {
    let (ec, dec) = vwn_fit(rs, &VWN_P);
    (ec, ec - rs / 3.0 * dec)
}

/// Polarised VWN5: `(eps_c, v_c_up, v_c_dw)`.
#[inline]
pub(super) fn vwn_spin(rs: f64, zeta: f64) -> (f64, f64, f64) {
    // 1 / f''(0) = 9/8 (2^(4/3) - 2)
    let iddfz0 = 9.0 / 8.0 * (2.0_f64.powf(4.0 / 3.0) - 2.0);
    let (ecp, decp) = vwn_fit(rs, &VWN_P);
    let (ecf, decf) = vwn_fit(rs, &VWN_F);
    let (fa, dfa) = vwn_fit(rs, &VWN_A);
    let ac = fa * iddfz0;
    let dac = dfa * iddfz0;
    let (fz, dfz) = spin_interp_f(zeta);
    let z3 = zeta * zeta * zeta;
    let z4 = z3 * zeta;
    let ec = ecp + ac * fz * (1.0 - z4) + (ecf - ecp) * fz * z4;
    let dec_drs = decp + dac * fz * (1.0 - z4) + (decf - decp) * fz * z4;
    let dec_dz = ac * (dfz * (1.0 - z4) - 4.0 * z3 * fz) + (ecf - ecp) * (dfz * z4 + 4.0 * z3 * fz);
    let (vu, vd) = lsd_potentials(rs, zeta, ec, dec_drs, dec_dz);
    (ec, vu, vd)
}
