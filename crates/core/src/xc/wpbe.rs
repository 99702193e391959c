//! The short-range ωPBE exchange of HSE (Heyd, Scuseria, Ernzerhof, J. Chem. Phys. 118, 8207
//! (2003); erratum 124, 219906 (2006)): the PBE exchange hole of Ernzerhof and Perdew (J.
//! Chem. Phys. 109, 3313 (1998)) screened by erfc(ω r) and integrated analytically, with the
//! approximations of Quantum ESPRESSO 6.7's `pbexsr` / `wpbe_analy_erfc_approx_grad`
//! (the erfc expansion for ν = ω/k_F ≤ 14, the asymptotic forms above, the small-s series of
//! the G function, the large-argument forms of e^x erfc(√x) and e^x E1(x), and QE's cap on s).
//!
//! Contract: [`pbexsr`] returns the whole short-range exchange energy per volume (the LDA part
//! included, not only a gradient correction) and its derivatives with respect to ρ and
//! σ = |∇ρ|², in Hartree units, for ρ > 0 and ω > 0.

use std::f64::consts::PI;

use crate::special::erfc;

/// Coefficients of the hole (Ernzerhof–Perdew).
const A: f64 = 1.0161144;
const B: f64 = -3.7170836e-1;
const C: f64 = -7.7215461e-2;
const D: f64 = 5.7786348e-1;
const E: f64 = -5.1955731e-2;
/// H(s) fit.
const HA: [f64; 5] = [9.79681e-3, 4.10834e-2, 1.87440e-1, 1.20824e-3, 3.47188e-2];
/// F(s) = FC1 H(s) + FC2.
const FC1: f64 = 6.4753871;
const FC2: f64 = 4.7965830e-1;
/// Small-s series of EG.
const EGA: [f64; 3] = [-2.628417880e-2, -7.117647788e-2, 8.534541323e-2];
/// The erfc(x) ≈ 1 + sum ea_i x^i expansion, and its Gaussian exponent.
const EA: [f64; 8] = [
    -1.128223946706117,
    1.452736265762971,
    -1.243162299390327,
    0.971824836115601,
    -0.568861079687373,
    0.246880514820192,
    -0.065032363850763,
    0.008401793031216,
];
const EB1: f64 = 1.455915450052607;
/// Rational approximation of e^x E1(x) for large x.
const EXPEI: [f64; 4] = [4.03640, 1.15198, 5.03627, 4.19160];
/// Below this s, EG from its series.
const EG_S_CUT: f64 = 8.0e-2;
/// Above this ν, the asymptotic form.
const W_CUT: f64 = 14.0;
/// Above this argument, the large-argument forms of e^x erfc(√x) and e^x E1(x).
const EXP_CUT: f64 = 700.0;

/// The exponential integral E1(x), x > 0: its series below 1, a continued fraction above.
fn expint_e1(x: f64) -> f64 {
    const EULER: f64 = 0.577_215_664_901_532_9;
    if x <= 1.0 {
        // E1 = -gamma - ln x - sum_k (-x)^k / (k k!)
        let (mut term, mut sum) = (1.0, 0.0);
        for k in 1..60 {
            term *= -x / k as f64;
            let add = term / k as f64;
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        return -EULER - x.ln() - sum;
    }
    // e^{-x} / (x + 1 / (1 + 1 / (x + 2 / (1 + 2 / (x + ...))))), by modified Lentz.
    let tiny = 1e-300;
    let mut b = x + 1.0;
    let mut c = 1.0 / tiny;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..200 {
        let an = -((i * i) as f64);
        b += 2.0;
        d = 1.0 / (an * d + b);
        c = b + an / c;
        let del = c * d;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h * (-x).exp()
}

/// `(F_x, dF_x/dρ, dF_x/ds)` of the short-range ωPBE exchange at density `rho`, reduced
/// gradient `s` and screening `omega` (> 0).
fn enhancement(rho: f64, s: f64, omega: f64) -> (f64, f64, f64) {
    let srpi = PI.sqrt();
    let a12 = A.sqrt();
    let (a2, a3) = (A * A, A * A * A);
    let (a32, a52) = (a12 * A, a12 * A * A);
    let xkf = (3.0 * PI * PI * rho).cbrt();
    let w = omega / xkf;
    let wp = |n: i32| w.powi(n);
    let d1rw = -w / (3.0 * rho);
    let x = -8.0 / 9.0;
    let (s2, s3, s4) = (s * s, s * s * s, s.powi(4));
    let (s5, s6) = (s4 * s, s4 * s2);

    let h_num = HA[0] * s2 + HA[1] * s4;
    let h_den = 1.0 + HA[2] * s4 + HA[3] * s5 + HA[4] * s6;
    let h = h_num / h_den;
    let d1s_hnum = 2.0 * HA[0] * s + 4.0 * HA[1] * s3;
    let d1s_hden = 4.0 * HA[2] * s3 + 5.0 * HA[3] * s4 + 6.0 * HA[4] * s5;
    let d1s_h = (h_den * d1s_hnum - h_num * d1s_hden) / (h_den * h_den);
    let f = FC1 * h + FC2;
    let d1s_f = FC1 * d1s_h;

    let eb1 = if w > W_CUT { 2.0 } else { EB1 };
    let hsbw = s2 * h + eb1 * w * w;
    let (hsbw2, hsbw3, hsbw4) = (hsbw * hsbw, hsbw.powi(3), hsbw.powi(4));
    let hsbw12 = hsbw.sqrt();
    let (hsbw32, hsbw52, hsbw72) = (hsbw12 * hsbw, hsbw12 * hsbw2, hsbw12 * hsbw3);
    let d1s_hsbw = d1s_h * s2 + 2.0 * s * h;
    let d1r_hsbw = 2.0 * eb1 * d1rw * w;

    let dhsbw = D + s2 * h + eb1 * w * w;
    let dhsbw_p = |n: i32| dhsbw.powi(n);
    let dhsbw12 = dhsbw.sqrt();
    let dhsbw_h = |n: i32| dhsbw12 * dhsbw.powi(n); // dhsbw^{n + 1/2}

    let hsbw_a94 = 9.0 / 4.0 / A * hsbw;

    let dhs = D + s2 * h;
    let (dhs2, dhs3, dhs4) = (dhs * dhs, dhs.powi(3), dhs.powi(4));
    let dhs72 = dhs3 * dhs.sqrt();
    let dhs92 = dhs72 * dhs;
    let d1s_dhs = 2.0 * s * h + s2 * d1s_h;

    let dhsw = dhs + w * w;
    let dhsw2 = dhsw * dhsw;
    let dhsw52 = dhsw.sqrt() * dhsw2;
    let dhsw72 = dhsw52 * dhsw;
    let d1r_dhsw = 2.0 * d1rw * w;

    // EG from G_a and G_b (or its small-s series).
    let (eg, d1s_eg) = if s > EG_S_CUT {
        let sqrt_h = h.sqrt();
        let arg = 1.5 / a12 * s * sqrt_h;
        let expo = (9.0 / 4.0 / A * h * s2).exp();
        let g_a = srpi / 16.0
            * (15.0 * E + 6.0 * C * (1.0 + f * s2) * dhs + 4.0 * B * dhs2 + 8.0 * A * dhs3)
            / dhs72
            - 0.75 * PI * a12 * expo * erfc(arg);
        let d1s_g_a = srpi / 32.0
            * ((36.0 / a12 * a12 * (2.0 * h + d1s_h * s) / sqrt_h)
                + (-8.0 * A * d1s_dhs * dhs3
                    - 105.0 * E * d1s_dhs
                    - 30.0 * C * d1s_dhs * dhs * (1.0 + s2 * f)
                    + 12.0 * dhs2 * (-B * d1s_dhs + C * s * (d1s_f * s + 2.0 * f)))
                    / dhs92
                - srpi / a12 * 54.0 * expo * s * (2.0 * h + d1s_h * s) * erfc(arg));
        let g_b = 15.0 / 16.0 * srpi * s2 / dhs72;
        let d1s_g_b = 15.0 * srpi / 32.0 * s * (4.0 * dhs - 7.0 * d1s_dhs * s) / dhs92;
        let eg = -(0.75 * PI + g_a) / g_b;
        let d1s_eg = (-4.0 * d1s_g_a * g_b + d1s_g_b * (4.0 * g_a + 3.0 * PI)) / (4.0 * g_b * g_b);
        (eg, d1s_eg)
    } else {
        (
            EGA[0] + EGA[1] * s2 + EGA[2] * s4,
            2.0 * EGA[1] * s + 4.0 * EGA[2] * s3,
        )
    };

    let term2 = (dhs2 * B + dhs * C + 2.0 * E + dhs * s2 * f * C + 2.0 * s2 * eg) / (2.0 * dhs3);
    let d1s_term2 = (-6.0 * d1s_dhs * (eg * s2 + E)
        + dhs2 * (-d1s_dhs * B + s * C * (d1s_f * s + 2.0 * f))
        + 2.0 * dhs * (2.0 * eg * s - d1s_dhs * C + s2 * (d1s_eg - C * d1s_dhs * f)))
        / (2.0 * dhs4);

    let p3 = 4.0 * B * dhsw2 + 6.0 * C * dhsw + 15.0 * E + 6.0 * C * dhsw * s2 * f + 15.0 * s2 * eg;
    let term3 = -w * p3 / (8.0 * dhs * dhsw52);
    let q3 =
        4.0 * B * dhsw2 + 6.0 * C * dhsw + 15.0 * E + 3.0 * s2 * (5.0 * eg + 2.0 * C * dhsw * f);
    let d1s_term3 = w
        * (2.0 * d1s_dhs * dhsw * q3
            + dhs
                * (75.0 * d1s_dhs * (eg * s2 + E)
                    + 4.0 * dhsw2 * (d1s_dhs * B - 3.0 * C * s * (d1s_f * s + 2.0 * f))
                    - 6.0
                        * dhsw
                        * (-3.0 * C * d1s_dhs
                            + s * (10.0 * eg + 5.0 * d1s_eg * s - 3.0 * C * d1s_dhs * s * f))))
        / (16.0 * dhs2 * dhsw72);
    let d1r_term3 = (-2.0 * d1rw * dhsw * q3
        + w * d1r_dhsw
            * (75.0 * (eg * s2 + E) + 2.0 * dhsw * (2.0 * B * dhsw + 9.0 * C + 9.0 * C * s2 * f)))
        / (16.0 * dhs * dhsw72);

    let p4 = dhsw * C + 5.0 * E + C * dhsw * s2 * f + 5.0 * s2 * eg;
    let term4 = -wp(3) * p4 / (2.0 * dhs2 * dhsw52);
    let q4 = dhsw * C + 5.0 * E + s2 * (5.0 * eg + C * dhsw * f);
    let d1s_term4 = (wp(3)
        * (4.0 * d1s_dhs * dhsw * q4
            + dhs
                * (25.0 * d1s_dhs * (eg * s2 + E) - 2.0 * C * dhsw2 * s * (d1s_f * s + 2.0 * f)
                    + dhsw
                        * (3.0 * C * d1s_dhs
                            + s * (-20.0 * eg - 10.0 * d1s_eg * s + 3.0 * C * d1s_dhs * s * f)))))
        / (4.0 * dhs3 * dhsw72);
    let d1r_term4 = (wp(2)
        * (-6.0 * d1rw * dhsw * q4
            + w * d1r_dhsw * (25.0 * (eg * s2 + E) + 3.0 * C * dhsw * (1.0 + s2 * f))))
        / (4.0 * dhs2 * dhsw72);

    let term5 = -wp(5) * (E + s2 * eg) / (dhs3 * dhsw52);
    let d1s_term5 = (wp(5)
        * (6.0 * d1s_dhs * dhsw * (eg * s2 + E)
            + dhs * (-2.0 * dhsw * s * (2.0 * eg + d1s_eg * s) + 5.0 * d1s_dhs * (eg * s2 + E))))
        / (2.0 * dhs4 * dhsw72);
    let d1r_term5 =
        (5.0 * wp(4) * (eg * s2 + E) * (-2.0 * d1rw * dhsw + d1r_dhsw * w)) / (2.0 * dhs3 * dhsw72);

    // pi e^x erfc(sqrt x) and e^x E1(x) at x = 9 Hsbw / 4A (with E1 entering as -expei).
    let (piexperf, expei) = if hsbw_a94 < EXP_CUT {
        let ex = hsbw_a94.exp();
        (PI * ex * erfc(hsbw_a94.sqrt()), -ex * expint_e1(hsbw_a94))
    } else {
        let xa = hsbw_a94;
        (
            PI * (1.0 / srpi / xa.sqrt() - 0.5 / srpi / xa.powf(1.5) + 0.75 / srpi / xa.powf(2.5)),
            -(xa * xa + EXPEI[0] * xa + EXPEI[1]) / xa / (xa * xa + EXPEI[2] * xa + EXPEI[3]),
        )
    };
    let piexperf_d1 = -3.0 * srpi / a12 / 2.0 * hsbw12 / hsbw + 9.0 / (4.0 * A) * piexperf;
    let expei_d1 = 0.25 * (4.0 / hsbw + 9.0 / A * expei);

    let t10 = 0.5 * A * (hsbw / dhsbw).ln();
    let t10_d1 = 0.5 * A / hsbw - 0.5 * A / dhsbw;

    let (term1, d1s_term1, d1r_term1) = if w > W_CUT {
        let term1 = -0.5 * A * (expei + (dhsbw / hsbw).ln());
        let d1 = -A / 2.0 / dhsbw - 9.0 / 8.0 * expei;
        (term1, d1s_hsbw * d1, d1r_hsbw * d1)
    } else {
        let np1 = -1.5 * EA[0] * a12 * w + 27.0 * EA[2] / (8.0 * a12) * wp(3)
            - 243.0 * EA[4] / (32.0 * a32) * wp(5)
            + 2187.0 * EA[6] / (128.0 * a52) * wp(7);
        let d1r_np1 = (-1.5 * EA[0] * a12 + 81.0 * EA[2] / (8.0 * a12) * wp(2)
            - 1215.0 * EA[4] / (32.0 * a32) * wp(4)
            + 15309.0 * EA[6] / (128.0 * a52) * wp(6))
            * d1rw;
        let np2 = -A + 9.0 / 4.0 * EA[1] * wp(2) - 81.0 * EA[3] / (16.0 * A) * wp(4)
            + 729.0 * EA[5] / (64.0 * a2) * wp(6)
            - 6561.0 * EA[7] / (256.0 * a3) * wp(8);
        let d1r_np2 = (4.5 * EA[1] * w - 81.0 * EA[3] * wp(3) / (4.0 * A)
            + 2187.0 * EA[5] * wp(5) / (32.0 * a2)
            - 6561.0 * EA[7] * wp(7) / (32.0 * a3))
            * d1rw;
        let t1 = 0.5 * (np1 * piexperf + np2 * expei);
        let d1s_t1 = 0.5 * (np1 * d1s_hsbw * piexperf_d1 + np2 * d1s_hsbw * expei_d1);
        let d1r_t1 = 0.5
            * (d1r_np1 * piexperf
                + d1r_np2 * expei
                + np1 * d1r_hsbw * piexperf_d1
                + np2 * d1r_hsbw * expei_d1);
        let (f2s, f2r, f2) = {
            let f2 = 0.5 * EA[0] * srpi * A / dhsbw12;
            let d1 = -EA[0] * srpi * A / 4.0 / dhsbw_h(1);
            (d1s_hsbw * d1, d1r_hsbw * d1, f2)
        };
        let f3 = 0.5 * EA[1] * A / dhsbw;
        let f3_d1 = -EA[1] * A / 2.0 / dhsbw_p(2);
        let f4 = EA[2] * srpi * (-9.0 / 8.0 / hsbw12 + 0.25 * A / dhsbw_h(1));
        let f4_d1 = EA[2] * srpi * (9.0 / 16.0 / hsbw32 - 3.0 * A / 8.0 / dhsbw_h(2));
        let f5 = EA[3] / 128.0 * (-144.0 / hsbw + 64.0 * A / dhsbw_p(2));
        let f5_d1 = EA[3] * (9.0 / 8.0 / hsbw2 - A / dhsbw_p(3));
        let f6 = EA[4] * 3.0 * srpi / 32.0 / A
            * (3.0 * (9.0 * hsbw - 2.0 * A) / hsbw32 + 4.0 * a2 / dhsbw_h(2));
        let f6_d1 = EA[4]
            * srpi
            * (27.0 / 32.0 / hsbw52 - 81.0 / 64.0 / A / hsbw32 - 15.0 / 16.0 * A / dhsbw_h(3));
        let f7 = EA[5] / 32.0 * (32.0 * A / dhsbw_p(3) + (-36.0 + 81.0 / A * s2 * h) / hsbw2);
        let d1s_f7 = EA[5] / 32.0 / A
            * (3.0
                * (27.0 * d1s_h * dhsbw_p(4) * hsbw * s2
                    + 8.0 * A * d1s_hsbw * (3.0 * dhsbw_p(4) - 4.0 * A * hsbw3)
                    + 54.0 * dhsbw_p(4) * s * (hsbw - d1s_hsbw * s) * h))
            / (dhsbw_p(4) * hsbw3);
        let d1r_f7 = EA[5]
            * d1r_hsbw
            * (9.0 / 4.0 / hsbw3 - 3.0 * A / dhsbw_p(4) - 81.0 / 16.0 / A * s2 * h / hsbw3);
        let f8 = EA[6] / 128.0 / a2
            * (-3.0
                * srpi
                * (-40.0 * a3 * hsbw52
                    + 9.0 * dhsbw_h(3) * (27.0 * hsbw2 - 6.0 * A * hsbw + 4.0 * a2)))
            / (dhsbw_h(3) * hsbw52);
        let f8_d1 = EA[6]
            * srpi
            * (135.0 / 64.0 / hsbw72 + 729.0 / 256.0 / a2 / hsbw32
                - 243.0 / 128.0 / A / hsbw52
                - 105.0 * A / 32.0 / dhsbw_h(4));
        let f9 = (324.0 * EA[5] * A * eb1 * dhsbw_p(4) * hsbw
            + EA[7]
                * (384.0 * a3 * hsbw3
                    + dhsbw_p(4) * (-729.0 * hsbw2 + 324.0 * A * hsbw - 288.0 * a2)))
            / (128.0 * a2 * dhsbw_p(4) * hsbw3);
        let f9_d1 = -81.0 * EA[5] / 16.0 / A * eb1 / hsbw3
            + EA[7]
                * (27.0 / 4.0 / hsbw4 + 729.0 / 128.0 / a2 / hsbw2
                    - 81.0 / 16.0 / A / hsbw3
                    - 12.0 * A / dhsbw_p(5));
        let fs = [f2, f3, f4, f5, f6, f7, f8, f9];
        let d1s = [
            f2s,
            d1s_hsbw * f3_d1,
            d1s_hsbw * f4_d1,
            d1s_hsbw * f5_d1,
            d1s_hsbw * f6_d1,
            d1s_f7,
            d1s_hsbw * f8_d1,
            d1s_hsbw * f9_d1,
        ];
        let d1r = [
            f2r,
            d1r_hsbw * f3_d1,
            d1r_hsbw * f4_d1,
            d1r_hsbw * f5_d1,
            d1r_hsbw * f6_d1,
            d1r_f7,
            d1r_hsbw * f8_d1,
            d1r_hsbw * f9_d1,
        ];
        // t2..t9 = sum_n f_{n+2} w^{n+1}; d/dr takes d(w^{n+1}) = (n+1) w^n d1rw too.
        let mut t29 = 0.0;
        let mut d1s_t29 = 0.0;
        let mut d1r_t29 = 0.0;
        for n in 0..8 {
            let p = wp(n as i32 + 1);
            t29 += fs[n] * p;
            d1s_t29 += d1s[n] * p;
            d1r_t29 += d1r[n] * p + fs[n] * (n as f64 + 1.0) * wp(n as i32) * d1rw;
        }
        (
            t1 + t29 + t10,
            d1s_t1 + d1s_t29 + d1s_hsbw * t10_d1,
            d1r_t1 + d1r_t29 + d1r_hsbw * t10_d1,
        )
    };
    let fx = x * (term1 + term2 + term3 + term4 + term5);
    let d1sfx = x * (d1s_term1 + d1s_term2 + d1s_term3 + d1s_term4 + d1s_term5);
    let d1rfx = x * (d1r_term1 + d1r_term3 + d1r_term4 + d1r_term5);
    (fx, d1rfx, d1sfx)
}

/// HSE's short-range PBE exchange at density `rho` (> 0), `grho = |∇ρ|²` and screening
/// `omega` (1/bohr): `(e, de/dρ, de/dσ)` with `e` the energy per volume (Ha/bohr³), the LDA
/// part included.
pub(super) fn pbexsr(rho: f64, grho: f64, omega: f64) -> (f64, f64, f64) {
    // (1/2) (3π²)^{-1/3}, and -(3/4)(3/π)^{1/3}.
    const US: f64 = 0.161_620_459_673_995_5;
    const AX: f64 = -0.738_558_766_382_022_4;
    let rs = rho.cbrt();
    let vx = 4.0 / 3.0 * AX * rs;
    let rr = 1.0 / (rho * rs);
    let ex = AX / rr;
    let s2 = grho * rr * rr * US * US;
    let mut s = s2.sqrt();
    // QE caps s smoothly above 8.3.
    if s > 8.3 {
        s = 8.572844 - 18.796223 / s2;
    }
    let (fx, d1x, d2x) = enhancement(rho, s, omega);
    let sx = ex * fx;
    let dsdn = -4.0 / 3.0 * s / rho;
    let v1 = vx * fx + (dsdn * d2x + d1x) * ex;
    // QE's v2 is (1/|∇ρ|) de/d|∇ρ| = 2 de/dσ.
    let v2 = 0.5 * ex / grho.sqrt() * US * rr * d2x;
    (sx, v1, v2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_integral() {
        // E1 at 0.5, 1, 2 and 10 (Abramowitz and Stegun, table 5.1).
        for (x, e1) in [
            (0.5, 0.559_773_594_776_160_8),
            (1.0, 0.219_383_934_395_520_3),
            (2.0, 0.048_900_510_708_061_12),
            (10.0, 4.156_968_929_685_324e-6),
        ] {
            assert!((expint_e1(x) - e1).abs() < 1e-14 * e1.max(1e-3), "E1({x})");
        }
    }

    #[test]
    fn derivatives_are_those_of_the_energy() {
        // Central differences of e in ρ and σ, across the regimes of s and ν (below QE's cap
        // on s at 8.3, above which QE's derivatives are those of the uncapped s).
        for &(rho, grho) in &[
            (0.3, 0.05),
            (0.02, 0.002),
            (1e-3, 1e-6),
            (0.5, 4.0),
            (2e-5, 1e-10),
        ] {
            let (_, v1, v2) = pbexsr(rho, grho, 0.106);
            let h = 1e-6 * rho;
            let d1 = (pbexsr(rho + h, grho, 0.106).0 - pbexsr(rho - h, grho, 0.106).0) / (2.0 * h);
            let g = 1e-6 * grho;
            let d2 = (pbexsr(rho, grho + g, 0.106).0 - pbexsr(rho, grho - g, 0.106).0) / (2.0 * g);
            assert!(
                (v1 - d1).abs() < 1e-6 * (1.0 + d1.abs()),
                "de/drho at {rho}, {grho}: {v1} vs {d1}"
            );
            assert!(
                (v2 - d2).abs() < 1e-6 * (1.0 + d2.abs()),
                "de/dsigma at {rho}, {grho}: {v2} vs {d2}"
            );
        }
    }

    #[test]
    fn no_screening_limit_is_pbe_exchange() {
        // As ω → 0 the short-range exchange becomes the whole PBE exchange (to the accuracy of
        // the hole model's fit: about 1e-3 relative).
        for &(rho, grho) in &[(0.3, 0.05), (0.02, 0.002)] {
            let (e, _, _) = pbexsr(rho, grho, 1e-4);
            let (gc, _, _) = super::super::pbe::pbex(rho, grho);
            let lda = -0.75 * (3.0 / PI).cbrt() * rho.powf(4.0 / 3.0);
            let pbe = lda + gc;
            assert!((e - pbe).abs() < 3e-3 * pbe.abs(), "{e} vs {pbe}");
        }
    }
}
#[cfg(test)]
mod print_values {
    #[test]
    fn print_pbexsr() {
        for &(rho, grho) in &[(0.3, 0.05), (0.02, 0.002), (1e-3, 1e-6), (0.5, 4.0)] {
            let (e, v1, v2) = super::pbexsr(rho, grho, 0.106);
            println!("VAL {rho} {grho}: e {e:.10e} v1 {v1:.10e} v2 {v2:.10e}");
        }
    }
}
