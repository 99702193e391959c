//! Unpolarised PBE over a run of grid points, the functional most runs spend their XC time in.
//!
//! Each point is a branch-free kernel: every point is evaluated at a safe argument and the
//! thresholds pick the result, and its logarithms, exponential and cube root are
//! [`vector_math`]'s. The loop therefore vectorises; on x86-64 CPUs with AVX2 it runs in a
//! copy compiled for AVX2 (four points per instruction), elsewhere in the baseline one. Both
//! give the same bits (no fused multiply-add). HSE's short-range exchange stays a scalar
//! second pass over the points above the gradient thresholds.

use super::avx2_dispatch::avx2_dispatch;
use super::{pbe, pw92, slater, vector_math, wpbe, PI34};
use super::{GRHO_THRESHOLD_GGA, RHO_THRESHOLD_GGA, RHO_THRESHOLD_LDA};

/// Slater exchange times `xs` (less the short-range part of `sr`) + PW92 correlation, with
/// QE's gradient corrections (`gcxc`) above its thresholds, overwriting `e`, `v` and `vs`.
pub(super) fn evaluate(
    (xs, sr): (f64, Option<(f64, f64)>),
    rho: &[f64],
    sigma: &[f64],
    e: &mut [f64],
    v: &mut [f64],
    vs: &mut [f64],
) {
    points_dispatched(xs, rho, sigma, e, v, vs);
    if let Some((frac, w)) = sr {
        subtract_short_range(xs * frac, w, rho, sigma, e, v, vs);
    }
}

avx2_dispatch!(
    /// [`points`] in its AVX2 copy where the CPU has AVX2.
    fn points_dispatched(
        xs: f64,
        rho: &[f64],
        sigma: &[f64],
        e: &mut [f64],
        v: &mut [f64],
        vs: &mut [f64],
    ) => points
);

/// The kernel at every point.
#[inline(always)]
fn points(xs: f64, rho: &[f64], sigma: &[f64], e: &mut [f64], v: &mut [f64], vs: &mut [f64]) {
    let outs = e.iter_mut().zip(v.iter_mut()).zip(vs.iter_mut());
    for ((&r, &g), ((e, v), vs)) in rho.iter().zip(sigma).zip(outs) {
        (*e, *v, *vs) = point(xs, r, g);
    }
}

/// `(e, vrho, vsigma)` at density `r` and `sigma = g`. Both parts are evaluated at every
/// point, at `|r|` (at 1 where that is below the LDA threshold, at `g = 0` below the
/// gradient ones) so that nothing is infinite, and the thresholds choose what is kept:
/// QE's formulas, with [`vector_math`]'s roundings.
#[inline(always)]
fn point(xs: f64, r: f64, g: f64) -> (f64, f64, f64) {
    let a = r.abs();
    let lda = a > RHO_THRESHOLD_LDA;
    let gga = a > RHO_THRESHOLD_GGA && g > GRHO_THRESHOLD_GGA;
    let a = if lda { a } else { 1.0 };
    let g = if gga { g } else { 0.0 };
    let rho13 = vector_math::cbrt(a);
    let rs = PI34 / rho13;
    let (ex, vx) = slater::slater(rs);
    let pw = pw92::pw_g(rs, &pw92::PW_U);
    let (ec, vc) = (pw.0, pw.0 - rs / 3.0 * pw.1);
    let (sx, v1x, v2x) = pbe::pbex_cbrt(a, rho13, g);
    let (sc, v1c, v2c) = pbe::pbec_at(a, rs, pw, g);
    let e_gc = xs * sx + sc;
    let e_gc = if r < 0.0 { -e_gc } else { e_gc };
    let (e, v) = ((xs * ex + ec) * r, xs * vx + vc);
    let (e, v, vs) = if gga {
        (e + e_gc, v + (xs * v1x + v1c), xs * v2x + v2c)
    } else {
        (e, v, 0.0)
    };
    if lda {
        (e, v, vs)
    } else {
        (0.0, 0.0, 0.0)
    }
}

/// HSE: less `a` times the short-range PBE exchange of screening `w` where the gradient
/// correction is on (`a` already times the exchange scale).
fn subtract_short_range(
    a: f64,
    w: f64,
    rho: &[f64],
    sigma: &[f64],
    e: &mut [f64],
    v: &mut [f64],
    vs: &mut [f64],
) {
    let outs = e.iter_mut().zip(v.iter_mut()).zip(vs.iter_mut());
    for ((&r, &g), ((e, v), vs)) in rho.iter().zip(sigma).zip(outs) {
        if r.abs() > RHO_THRESHOLD_GGA && g > GRHO_THRESHOLD_GGA {
            let (s_sr, v1_sr, v2_sr) = wpbe::pbexsr(r.abs(), g, w);
            *e -= a * s_sr * r.signum();
            *v -= a * v1_sr;
            *vs -= a * v2_sr;
        }
    }
}
