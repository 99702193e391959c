//! Polarised PBE (without HSE's short-range exchange) over a run of grid points as one
//! branch-free kernel, vectorised as [`super::pbe_unpolarised`] is: every part is evaluated at
//! safe arguments and QE's thresholds select what is kept. The same functions at the same
//! arguments as the scalar path (`lsda` with PW92, then `pbe_polarised`), so the same bits,
//! which a test checks point by point; HSE keeps that scalar path.

use super::avx2_dispatch::avx2_dispatch;
use super::{pbe, pw92, slater, vector_math, PI34};
use super::{RHO_THRESHOLD_GGA, RHO_THRESHOLD_LDA, SMALL_GCX_SPIN};

/// Spin densities `[up, down]` and `[σ_uu, σ_ud, σ_dd]` in; `e`, `[v_up, v_down]` and the
/// three `vsigma` overwritten.
pub(super) type Outputs<'a> = (&'a mut [f64], [&'a mut [f64]; 2], [&'a mut [f64]; 3]);

avx2_dispatch!(
    /// Slater exchange times `xs` + PW92 correlation and QE's spin gradient corrections
    /// (`gcx_spin` times `xs`, `gcc_spin`) at every point, in the AVX2 copy where the CPU has it.
    fn evaluate(xs: f64, rho: [&[f64]; 2], sigma: [&[f64]; 3], out: Outputs<'_>) => points
);

/// The kernel at every point.
#[inline(always)]
fn points(xs: f64, [up, dw]: [&[f64]; 2], [suu, sud, sdd]: [&[f64]; 3], out: Outputs<'_>) {
    let (e, [vu, vd], [wuu, wud, wdd]) = out;
    let n = e.len();
    let (up, dw, suu, sud, sdd) = (&up[..n], &dw[..n], &suu[..n], &sud[..n], &sdd[..n]);
    let (vu, vd, wuu, wud, wdd) = (
        &mut vu[..n],
        &mut vd[..n],
        &mut wuu[..n],
        &mut wud[..n],
        &mut wdd[..n],
    );
    for i in 0..n {
        let p = point(xs, up[i], dw[i], [suu[i], sud[i], sdd[i]]);
        (e[i], vu[i], vd[i]) = (p[0], p[1], p[2]);
        (wuu[i], wud[i], wdd[i]) = (p[3], p[4], p[5]);
    }
}

/// `if keep { x } else { 0 }`.
#[inline(always)]
fn kept(keep: bool, x: f64) -> f64 {
    if keep {
        x
    } else {
        0.0
    }
}

/// `[e, v_up, v_down, vsigma_uu, vsigma_ud, vsigma_dd]` at one point.
#[inline(always)]
fn point(xs: f64, u: f64, d: f64, s: [f64; 3]) -> [f64; 6] {
    let (e, vu, vd) = lsda(xs, u, d);
    let (ex_u, vx_u, wx_u) = exchange_channel(u, d, s[0]);
    let (ex_d, vx_d, wx_d) = exchange_channel(d, u, s[2]);
    let (ec, vc_u, vc_d, wc) = correlation(u, d, s);
    // As `pbe_polarised` adds them: exchange scaled by xs, then correlation.
    let (x_e, x_vu, x_vd) = (xs * (0.0 + ex_u + ex_d), xs * vx_u, xs * vx_d);
    let (x_wuu, x_wdd) = (xs * wx_u, xs * wx_d);
    [
        e + (x_e + ec),
        vu + (x_vu + vc_u),
        vd + (x_vd + vc_d),
        x_wuu + wc,
        2.0 * wc,
        x_wdd + wc,
    ]
}

/// The LSDA part (`lsda` with PW92): `(e, v_up, v_down)`.
#[inline(always)]
fn lsda(xs: f64, u: f64, d: f64) -> (f64, f64, f64) {
    let tot = u + d;
    let keep = tot.abs() > RHO_THRESHOLD_LDA;
    let a = if keep { tot.abs() } else { 1.0 };
    let zeta = if keep {
        ((u - d) / a).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let rs = PI34 / vector_math::cbrt(a);
    let (ex, vxu, vxd) = slater::slater_spin(a, zeta);
    let (ec, vcu, vcd) = pw92::pw_spin(rs, zeta);
    (
        kept(keep, (xs * ex + ec) * tot),
        kept(keep, xs * vxu + vcu),
        kept(keep, xs * vxd + vcd),
    )
}

/// One spin channel's exchange gradient correction (`gcx_spin`'s spin scaling), of density
/// `r` (the other channel `o`) and `σ_rr = s`: `(e, v, vsigma_rr)`.
#[inline(always)]
fn exchange_channel(r: f64, o: f64, s: f64) -> (f64, f64, f64) {
    let keep = r + o > SMALL_GCX_SPIN && r > SMALL_GCX_SPIN && s > SMALL_GCX_SPIN * SMALL_GCX_SPIN;
    let (r, s) = if keep { (r, s) } else { (1.0, 0.0) };
    let (sx, v1, v2) = pbe::pbex(2.0 * r, 4.0 * s);
    (kept(keep, 0.5 * sx), kept(keep, v1), kept(keep, 2.0 * v2))
}

/// The correlation gradient correction (`gcc_spin`): `(e, v_up, v_down, vsigma)` (vsigma_ud
/// is twice it).
#[inline(always)]
fn correlation(u: f64, d: f64, [suu, sud, sdd]: [f64; 3]) -> (f64, f64, f64, f64) {
    let rt = u + d;
    let dense = rt > RHO_THRESHOLD_GGA;
    let zeta = (u - d) / if dense { rt } else { 1.0 };
    let grho = suu + 2.0 * sud + sdd;
    let keep = dense && zeta.abs() <= 1.0 && grho > RHO_THRESHOLD_GGA * RHO_THRESHOLD_GGA;
    let lim = 1.0 - RHO_THRESHOLD_GGA;
    let (rt, zeta, grho) = if keep {
        (rt, zeta.clamp(-lim, lim), grho)
    } else {
        (1.0, 0.0, 0.0)
    };
    let (sc, v1u, v1d, v2) = pbe::pbec_spin(rt, zeta, grho);
    (
        kept(keep, sc),
        kept(keep, v1u),
        kept(keep, v1d),
        kept(keep, v2),
    )
}
