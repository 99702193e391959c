//! Exchange-correlation functionals evaluated pointwise on real-space grids
//! (Hartree atomic units), reproducing Quantum ESPRESSO 6.7 (`Modules/funct`,
//! `xc_lda_lsda_drivers`, `xc_gga_drivers`) formula by formula, constant by
//! constant, including its density thresholds.
//!
//! Supported functionals:
//! * [`Functional::LdaPz`]: Slater exchange + Perdew-Zunger 81 correlation (QE `pz`, `'sla+pz'`);
//! * [`Functional::LdaPw`]: Slater exchange + Perdew-Wang 92 correlation (QE `'sla+pw'`);
//! * [`Functional::LdaVwn`]: Slater exchange + VWN5 correlation (QE `'sla+vwn'`);
//! * [`Functional::Pbe`]: Slater + PW92 LDA part plus PBE exchange and
//!   correlation gradient corrections (QE `pbe` = `sla+pw+pbx+pbc`).
//!
//! The logarithms and exponentials of PW92 and PBE, and the cube roots of densities, are
//! branch-free ones (`vector_math.rs`, within 2 ulp of the exact values) so that the loop over
//! grid points vectorises; PBE (polarised or not) and unpolarised PZ81 and PW92 run in a copy
//! compiled for AVX2 where the CPU has it (`avx2_dispatch.rs`).
//!
//! Hybrids mix the exchange ([`ExchangeMix`], [`evaluate_scaled`]): PBE0 scales it by 1 - a
//! (QE `pb0x`), HSE subtracts a times the short-range ωPBE exchange (QE `pbexsr`, `wpbe.rs`).
//!
//! # Input / output conventions (libxc-like)
//! * `nspin = 1`: `rho[0]` is the total density, `sigma[0] = |grad rho|^2`.
//! * `nspin = 2`: `rho = [rho_up, rho_dw]`,
//!   `sigma = [grad up . grad up, grad up . grad dw, grad dw . grad dw]`.
//! * [`XcOutput::e`] is the energy per volume `rho * eps_xc`, `vrho[s] = de/d rho_s`,
//!   `vsigma[j] = de/d sigma_j` (empty for LDA). The GGA potential is then
//!   `v_s = vrho_s - div(2 vsigma_ss grad rho_s + vsigma_ud grad rho_s')`
//!   (unpolarised: `v = vrho - div(2 vsigma grad rho)`).
//!
//! # Thresholds and negative densities (as in QE 6.7)
//! * LDA, unpolarised: the functional is evaluated at `|rho|`; points with
//!   `|rho| <= 1e-10` give exactly zero; `e = rho * eps(|rho|)` keeps the sign of
//!   `rho` and `vrho = v(|rho|)` (which is the exact derivative of that `e`).
//! * LDA, polarised: `rho_t = rho_up + rho_dw`; points with `|rho_t| <= 1e-10`
//!   give zero; `zeta = (rho_up - rho_dw)/|rho_t|` is clipped to `[-1, 1]`;
//!   `eps` is evaluated at `(|rho_t|, zeta)` and `e = rho_t * eps`.
//! * GGA, unpolarised: the gradient correction is skipped (exactly zero, also
//!   `vsigma = 0`) where `|rho| <= 1e-6` or `sigma <= 1e-10`; otherwise it is
//!   evaluated at `|rho|`, its energy gets the sign of `rho`, and `vrho`/`vsigma`
//!   are those at `|rho|` (for negative `rho`, QE's `vsigma` is therefore not the
//!   derivative of the signed energy; we reproduce QE).
//! * GGA exchange, polarised (QE `gcx_spin`, spin scaling
//!   `E_x[up, dw] = (E_x[2 up] + E_x[2 dw]) / 2`): zero if `rho_up + rho_dw <= 1e-10`;
//!   each spin channel is dropped where `rho_s <= 1e-10` or `sqrt(sigma_ss) <= 1e-10`.
//! * GGA correlation, polarised (QE `gcc_spin`): zero if `rho_t <= 1e-6`, if
//!   `|grad rho_t|^2 = sigma_uu + 2 sigma_ud + sigma_dd <= 1e-12` (QE tests
//!   `sqrt(|grad rho_t|^2) <= 1e-6`), or if `|zeta| > 1` (a negative spin
//!   density); otherwise `|zeta|` is clipped to `1 - 1e-6` before evaluation.
//!
//! QE's gradient-correction energies are Hartree per volume as here; QE
//! multiplies by `e2 = 2` to obtain Rydberg, which is not done here.

mod avx2_dispatch;
use avx2_dispatch::avx2_dispatch;
mod pbe;
mod pbe_polarised;
mod pbe_unpolarised;
mod pw92;
mod pz81;
mod slater;
mod vector_math;
mod vwn;
mod wpbe;

#[cfg(test)]
mod tests;

/// `(3 / (4 pi))^(1/3)`, QE's literal; `rs = PI34 / rho^(1/3)`.
const PI34: f64 = 0.620_350_490_899_4;

/// LDA density threshold (QE `rho_threshold` in `xc_lda_lsda_drivers`).
pub const RHO_THRESHOLD_LDA: f64 = 1e-10;
/// GGA density threshold (QE `rho_threshold` in `xc_gga_drivers`), also used
/// for the spin-polarised correlation gradient correction and its zeta clip.
pub const RHO_THRESHOLD_GGA: f64 = 1e-6;
/// GGA `|grad rho|^2` threshold, unpolarised (QE `grho_threshold`).
pub const GRHO_THRESHOLD_GGA: f64 = 1e-10;
/// Threshold on `rho_s` and `|grad rho_s|` in the polarised GGA exchange (QE `gcx_spin`'s `small`).
pub const SMALL_GCX_SPIN: f64 = 1e-10;

/// Exchange-correlation functional.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Functional {
    /// Slater exchange + Perdew-Zunger 81 correlation.
    LdaPz,
    /// Slater exchange + Perdew-Wang 92 correlation.
    LdaPw,
    /// Slater exchange + Vosko-Wilk-Nusair (VWN5) correlation.
    LdaVwn,
    /// PBE exchange and correlation (on top of Slater + PW92).
    Pbe,
}

impl Functional {
    /// All supported functionals.
    pub const ALL: [Functional; 4] = [
        Functional::LdaPz,
        Functional::LdaPw,
        Functional::LdaVwn,
        Functional::Pbe,
    ];

    /// Whether the functional depends on the density gradient.
    pub fn is_gga(self) -> bool {
        matches!(self, Functional::Pbe)
    }

    /// Short name: `"lda_pz"`, `"lda_pw"`, `"lda_vwn"`, `"pbe"`.
    pub fn name(self) -> &'static str {
        match self {
            Functional::LdaPz => "lda_pz",
            Functional::LdaPw => "lda_pw",
            Functional::LdaVwn => "lda_vwn",
            Functional::Pbe => "pbe",
        }
    }

    /// Inverse of [`Functional::name`] (ASCII case-insensitive).
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(s.trim()))
    }

    /// The functional a pseudopotential file names (UPF `functional`, QE's short or long
    /// names such as "PBE", "SLA PW PBX PBC", "SLA-PZ-NOGX-NOGC"; GTH and psp8 "LDA"/"PBE");
    /// None when it is none of these.
    pub fn of_pseudopotential(hint: &str) -> Option<Self> {
        let upper = hint.to_ascii_uppercase().replace(['-', '_', '+'], " ");
        let words: Vec<&str> = upper.split_whitespace().collect();
        let has = |w: &str| words.contains(&w);
        let name = if has("PBE") || (has("PBX") && has("PBC")) {
            "pbe"
        } else if words.iter().any(|w| {
            [
                "PBESOL", "PSX", "PSC", "BLYP", "B88", "LYP", "PW91", "GGX", "GGC",
            ]
            .contains(w)
        }) {
            return None;
        } else if has("VWN") {
            "lda_vwn"
        } else if has("PW") {
            "lda_pw"
        } else if has("PZ") || has("LDA") || has("PADE") {
            "lda_pz"
        } else {
            return None;
        };
        Self::from_name(name)
    }
}

/// How much of the semilocal exchange a hybrid keeps: all of it times `scale` (PBE0: 1 - a),
/// less `a` times the short-range (erfc-screened, ω) PBE exchange of HSE for
/// `short_range = Some((a, ω))` (GGA only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExchangeMix {
    /// Factor of the whole semilocal exchange.
    pub scale: f64,
    /// `(a, ω)`: subtract `a` times the short-range PBE exchange of screening ω (1/bohr).
    pub short_range: Option<(f64, f64)>,
}

impl ExchangeMix {
    /// The whole semilocal exchange.
    pub const FULL: Self = Self {
        scale: 1.0,
        short_range: None,
    };
}

/// Output of [`evaluate`] / [`evaluate_into`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct XcOutput {
    /// Energy per volume `rho * eps_xc` at each point (Hartree / bohr^3).
    pub e: Vec<f64>,
    /// `[nspin][n]`: `d e / d rho_s`.
    pub vrho: Vec<Vec<f64>>,
    /// `[1 or 3][n]`: `d e / d sigma_j`; empty for LDA functionals.
    pub vsigma: Vec<Vec<f64>>,
}

/// Evaluates functional `f` at every grid point; see the module docs for the
/// layout of `rho` (`nspin` slices) and `sigma` (1 or 3 slices, ignored for LDA).
///
/// # Panics
/// If `rho.len()` is not 1 or 2, if slice lengths differ, or if a GGA is
/// requested without the right number of `sigma` slices.
pub fn evaluate(f: Functional, rho: &[&[f64]], sigma: &[&[f64]]) -> XcOutput {
    evaluate_scaled(f, ExchangeMix::FULL, rho, sigma)
}

/// As [`evaluate`] with the exchange mixed as `mix` says: the semilocal part of a hybrid
/// once exact exchange is on (PBE0: Slater and the exchange gradient correction times 1 - a,
/// QE's `pb0x`; HSE: less a times the short-range PBE exchange, QE's `pbexsr`). Correlation is
/// whole.
pub fn evaluate_scaled(
    f: Functional,
    mix: ExchangeMix,
    rho: &[&[f64]],
    sigma: &[&[f64]],
) -> XcOutput {
    let mut out = XcOutput::default();
    evaluate_into_scaled(f, mix, rho, sigma, &mut out);
    out
}

/// Like [`evaluate`] but writes into `out`, reusing its buffers (they are
/// resized as needed; no allocation when the sizes already match).
pub fn evaluate_into(f: Functional, rho: &[&[f64]], sigma: &[&[f64]], out: &mut XcOutput) {
    evaluate_into_scaled(f, ExchangeMix::FULL, rho, sigma, out)
}

/// Points per rayon task of [`evaluate_scaled`].
const POINTS_PER_TASK: usize = 8192;

/// [`evaluate_into`] with the exchange scaled as in [`evaluate_scaled`]; the points go to rayon
/// threads in chunks.
fn evaluate_into_scaled(
    f: Functional,
    mix: ExchangeMix,
    rho: &[&[f64]],
    sigma: &[&[f64]],
    out: &mut XcOutput,
) {
    let nspin = rho.len();
    assert!(
        nspin == 1 || nspin == 2,
        "xc: rho must have 1 or 2 spin components, got {nspin}"
    );
    let n = rho[0].len();
    let nsig = n_sigma(f, nspin);
    sized(&mut out.e, n);
    out.vrho.resize_with(nspin, Vec::new);
    out.vrho.iter_mut().for_each(|v| sized(v, n));
    out.vsigma.resize_with(nsig, Vec::new);
    out.vsigma.iter_mut().for_each(|v| sized(v, n));
    let mut vr: [&mut [f64]; 2] = [&mut [], &mut []];
    for (dst, v) in vr.iter_mut().zip(out.vrho.iter_mut()) {
        *dst = v.as_mut_slice();
    }
    let mut vs: [&mut [f64]; 3] = [&mut [], &mut [], &mut []];
    for (dst, v) in vs.iter_mut().zip(out.vsigma.iter_mut()) {
        *dst = v.as_mut_slice();
    }
    // Chunk the outputs alike and hand each chunk its slice of the inputs.
    let mut vr: Vec<Vec<&mut [f64]>> = vr[..nspin].iter_mut().map(|v| chunks(v)).collect();
    let mut vs: Vec<Vec<&mut [f64]>> = vs[..nsig].iter_mut().map(|v| chunks(v)).collect();
    let tasks: Vec<Chunk<'_>> = out
        .e
        .chunks_mut(POINTS_PER_TASK)
        .enumerate()
        .map(|(i, e)| (i, e, take_chunk(&mut vr, i), take_chunk(&mut vs, i)))
        .collect();
    use rayon::prelude::*;
    tasks.into_par_iter().for_each(|(i, e, mut vr, mut vs)| {
        let range = i * POINTS_PER_TASK..(i * POINTS_PER_TASK + e.len());
        let rho: Vec<&[f64]> = rho.iter().map(|r| &r[range.clone()]).collect();
        let sigma: Vec<&[f64]> = sigma.iter().map(|r| &r[range.clone()]).collect();
        evaluate_slices_scaled(f, mix, &rho, &sigma, e, &mut vr, &mut vs);
    });
}

/// `v` with `n` elements; a new buffer comes zeroed from the allocator (fresh pages, touched
/// first by the tasks that fill it) rather than by a pass on one thread, since every element
/// is overwritten.
fn sized(v: &mut Vec<f64>, n: usize) {
    if v.len() != n {
        *v = vec![0.0; n];
    }
}

/// One task of [`evaluate_into_scaled`]: its chunk index, and its chunks of `e`, `vrho` and
/// `vsigma`.
type Chunk<'a> = (usize, &'a mut [f64], Vec<&'a mut [f64]>, Vec<&'a mut [f64]>);

/// `v` in chunks of [`POINTS_PER_TASK`].
fn chunks(v: &mut [f64]) -> Vec<&mut [f64]> {
    v.chunks_mut(POINTS_PER_TASK).collect()
}

/// Chunk `i` of every component (left empty in `parts`).
fn take_chunk<'a>(parts: &mut [Vec<&'a mut [f64]>], i: usize) -> Vec<&'a mut [f64]> {
    parts
        .iter_mut()
        .map(|c| std::mem::take(&mut c[i]))
        .collect()
}

/// Number of `sigma` / `vsigma` components: 0 (LDA), 1 or 3 (GGA, `nspin` = 1 or 2).
pub fn n_sigma(f: Functional, nspin: usize) -> usize {
    match (f.is_gga(), nspin) {
        (false, _) => 0,
        (true, 1) => 1,
        (true, _) => 3,
    }
}

/// Slice-based core of [`evaluate`]: every output element is overwritten.
/// `vrho` has `nspin` slices and `vsigma` [`n_sigma`] slices, all of the
/// length of `rho[0]`. Points are independent, so callers may split the grid
/// into chunks (e.g. for threads) and call this on each chunk.
///
/// # Panics
/// On inconsistent numbers of components or lengths.
pub fn evaluate_slices(
    f: Functional,
    rho: &[&[f64]],
    sigma: &[&[f64]],
    e: &mut [f64],
    vrho: &mut [&mut [f64]],
    vsigma: &mut [&mut [f64]],
) {
    evaluate_slices_scaled(f, ExchangeMix::FULL, rho, sigma, e, vrho, vsigma)
}

/// [`evaluate_slices`] with the exchange mixed as `mix` says ([`evaluate_scaled`]).
pub fn evaluate_slices_scaled(
    f: Functional,
    mix: ExchangeMix,
    rho: &[&[f64]],
    sigma: &[&[f64]],
    e: &mut [f64],
    vrho: &mut [&mut [f64]],
    vsigma: &mut [&mut [f64]],
) {
    let nspin = rho.len();
    assert!(
        nspin == 1 || nspin == 2,
        "xc: rho must have 1 or 2 spin components, got {nspin}"
    );
    let n = rho[0].len();
    let nsig = n_sigma(f, nspin);
    assert!(
        rho.iter().all(|r| r.len() == n),
        "xc: rho components differ in length"
    );
    if nsig > 0 {
        assert!(
            sigma.len() == nsig,
            "xc: {} with nspin = {nspin} needs {nsig} sigma components, got {}",
            f.name(),
            sigma.len()
        );
        assert!(
            sigma.iter().all(|s| s.len() == n),
            "xc: sigma length differs from rho"
        );
    }
    assert!(e.len() == n, "xc: e has the wrong length");
    assert!(
        vrho.len() == nspin && vrho.iter().all(|v| v.len() == n),
        "xc: vrho must have nspin components of the grid length"
    );
    assert!(
        vsigma.len() == nsig && vsigma.iter().all(|v| v.len() == n),
        "xc: vsigma must have n_sigma components of the grid length"
    );

    let xs = mix.scale;
    let sr = mix.short_range;
    match vrho {
        [v] => match f {
            Functional::LdaPz => lda_pz(xs, rho[0], e, v),
            Functional::LdaPw => lda_pw(xs, rho[0], e, v),
            Functional::LdaVwn => lda_unpolarised(vwn::vwn, xs, rho[0], e, v),
            Functional::Pbe => {
                pbe_unpolarised::evaluate((xs, sr), rho[0], sigma[0], e, v, vsigma[0])
            }
        },
        [vu, vd] => match f {
            Functional::LdaPz => lsda(pz81::pz_spin, xs, [rho[0], rho[1]], e, vu, vd),
            Functional::LdaPw => lsda(pw92::pw_spin, xs, [rho[0], rho[1]], e, vu, vd),
            Functional::LdaVwn => lsda(vwn::vwn_spin, xs, [rho[0], rho[1]], e, vu, vd),
            Functional::Pbe => {
                let [vs_uu, vs_ud, vs_dd] = vsigma else {
                    unreachable!("three vsigma components for polarised GGA")
                };
                if sr.is_none() {
                    let rho = [rho[0], rho[1]];
                    let out = (
                        e,
                        [&mut **vu, &mut **vd],
                        [&mut **vs_uu, &mut **vs_ud, &mut **vs_dd],
                    );
                    return pbe_polarised::evaluate(xs, rho, [sigma[0], sigma[1], sigma[2]], out);
                }
                lsda(pw92::pw_spin, xs, [rho[0], rho[1]], e, vu, vd);
                pbe_polarised(
                    (xs, sr),
                    [rho[0], rho[1]],
                    [sigma[0], sigma[1], sigma[2]],
                    e,
                    [vu, vd],
                    [vs_uu, vs_ud, vs_dd],
                );
            }
        },
        _ => unreachable!("nspin checked above"),
    }
}

/// Von Barth-Hedin spin interpolation `f(zeta)` and its derivative.
#[inline(always)]
fn spin_interp_f(zeta: f64) -> (f64, f64) {
    // 1 / (2^(4/3) - 2)
    const INV_DEN: f64 = 1.0 / (2.519_842_099_789_746 - 2.0);
    let up13 = vector_math::cbrt_or_zero(1.0 + zeta);
    let dw13 = vector_math::cbrt_or_zero(1.0 - zeta);
    let fz = ((1.0 + zeta) * up13 + (1.0 - zeta) * dw13 - 2.0) * INV_DEN;
    let dfz = 4.0 / 3.0 * (up13 - dw13) * INV_DEN;
    (fz, dfz)
}

/// LSDA potentials from `eps(rs, zeta)` and its partial derivatives:
/// `v_s = eps - rs/3 d eps/d rs + (sign(s) - zeta) d eps/d zeta`.
#[inline(always)]
fn lsd_potentials(rs: f64, zeta: f64, ec: f64, dec_drs: f64, dec_dz: f64) -> (f64, f64) {
    let common = ec - rs / 3.0 * dec_drs;
    (
        common + (1.0 - zeta) * dec_dz,
        common - (1.0 + zeta) * dec_dz,
    )
}

/// Unpolarised LDA (`xs` Slater + `corr`), overwriting `e` and `v`.
#[inline(always)]
fn lda_unpolarised<C: Fn(f64) -> (f64, f64)>(
    corr: C,
    xs: f64,
    rho: &[f64],
    e: &mut [f64],
    v: &mut [f64],
) {
    for ((&r, e), v) in rho.iter().zip(e.iter_mut()).zip(v.iter_mut()) {
        // Branch-free: evaluated at 1 below the threshold, where the select gives 0.
        let a = r.abs();
        let keep = a > RHO_THRESHOLD_LDA;
        let rs = PI34 / vector_math::cbrt(if keep { a } else { 1.0 });
        let (ex, vx) = slater::slater(rs);
        let (ec, vc) = corr(rs);
        (*e, *v) = if keep {
            ((xs * ex + ec) * r, xs * vx + vc)
        } else {
            (0.0, 0.0)
        };
    }
}

avx2_dispatch!(
    /// Slater + PZ81 at every point, in the AVX2 copy where the CPU has it.
    fn lda_pz(xs: f64, rho: &[f64], e: &mut [f64], v: &mut [f64]) => lda_pz_points
);

avx2_dispatch!(
    /// Slater + PW92 at every point, in the AVX2 copy where the CPU has it.
    fn lda_pw(xs: f64, rho: &[f64], e: &mut [f64], v: &mut [f64]) => lda_pw_points
);

/// [`lda_unpolarised`] with PZ81, inlined for [`lda_pz`]'s copies.
#[inline(always)]
fn lda_pz_points(xs: f64, rho: &[f64], e: &mut [f64], v: &mut [f64]) {
    lda_unpolarised(pz81::pz, xs, rho, e, v)
}

/// [`lda_unpolarised`] with PW92, inlined for [`lda_pw`]'s copies.
#[inline(always)]
fn lda_pw_points(xs: f64, rho: &[f64], e: &mut [f64], v: &mut [f64]) {
    lda_unpolarised(pw92::pw, xs, rho, e, v)
}

/// Polarised LDA (`xs` Slater + `corr`), overwriting `e`, `vu`, `vd`.
#[inline]
fn lsda<C: Fn(f64, f64) -> (f64, f64, f64)>(
    corr: C,
    xs: f64,
    [up, dw]: [&[f64]; 2],
    e: &mut [f64],
    vu: &mut [f64],
    vd: &mut [f64],
) {
    let outs = e.iter_mut().zip(vu.iter_mut()).zip(vd.iter_mut());
    for ((&u, &d), ((e, vu), vd)) in up.iter().zip(dw.iter()).zip(outs) {
        let tot = u + d;
        let a = tot.abs();
        if a > RHO_THRESHOLD_LDA {
            let zeta = ((u - d) / a).clamp(-1.0, 1.0);
            let rs = PI34 / vector_math::cbrt(a);
            let (ex, vxu, vxd) = slater::slater_spin(a, zeta);
            let (ec, vcu, vcd) = corr(rs, zeta);
            *e = (xs * ex + ec) * tot;
            *vu = xs * vxu + vcu;
            *vd = xs * vxd + vcd;
        } else {
            *e = 0.0;
            *vu = 0.0;
            *vd = 0.0;
        }
    }
}

/// Polarised PBE gradient corrections (QE `gcx_spin` times `xs`, less the short-range part
/// of `sr`, + `gcc_spin`), added to `e` and `v`; overwrites `vs`.
#[inline]
fn pbe_polarised(
    (xs, sr): (f64, Option<(f64, f64)>),
    rho: [&[f64]; 2],
    sigma: [&[f64]; 3],
    e: &mut [f64],
    v: [&mut [f64]; 2],
    vs: [&mut [f64]; 3],
) {
    let [vu, vd] = v;
    let [vs_uu, vs_ud, vs_dd] = vs;
    for i in 0..e.len() {
        let (u, d) = (rho[0][i], rho[1][i]);
        let x = pbe_x_spin_point(u, d, sigma[0][i], sigma[2][i], sr.map(|s| s.1))
            .scaled(xs, sr.map_or(0.0, |s| s.0));
        let c = pbe_c_spin_point(u, d, sigma[0][i], sigma[1][i], sigma[2][i]);
        let de = x.e + c.e;
        let (dvu, dvd) = (x.vu + c.vu, x.vd + c.vd);
        let (wuu, wud, wdd) = (x.vuu + c.vuu, c.vud, x.vdd + c.vdd);
        e[i] += de;
        vu[i] += dvu;
        vd[i] += dvd;
        vs_uu[i] = wuu;
        vs_ud[i] = wud;
        vs_dd[i] = wdd;
    }
}

/// Gradient-correction contributions at one point (polarised case).
#[derive(Clone, Copy, Debug, Default)]
struct SpinGc {
    e: f64,
    vu: f64,
    vd: f64,
    vuu: f64,
    vud: f64,
    vdd: f64,
    /// Short-range exchange (HSE) of the same point, kept apart until [`SpinGc::scaled`].
    sr: SpinSr,
}

impl SpinGc {
    /// Every contribution times `s`, less `frac` times the short-range ones of `sr`.
    fn scaled(self, s: f64, frac: f64) -> Self {
        Self {
            e: s * self.e - frac * self.sr.e,
            vu: s * self.vu - frac * self.sr.vu,
            vd: s * self.vd - frac * self.sr.vd,
            vuu: s * self.vuu - frac * self.sr.vuu,
            vud: s * self.vud,
            vdd: s * self.vdd - frac * self.sr.vdd,
            sr: SpinSr::default(),
        }
    }
}

/// The short-range exchange parts of a polarised point (HSE).
#[derive(Clone, Copy, Debug, Default)]
struct SpinSr {
    e: f64,
    vu: f64,
    vd: f64,
    vuu: f64,
    vdd: f64,
}

/// Polarised PBE exchange gradient correction at one point (QE `gcx_spin`):
/// `E = (E_x[2 rho_up, 4 sigma_uu] + E_x[2 rho_dw, 4 sigma_dd]) / 2`.
/// With `omega`, also the short-range exchange of that screening, spin-scaled alike.
#[inline]
fn pbe_x_spin_point(u: f64, d: f64, s_uu: f64, s_dd: f64, omega: Option<f64>) -> SpinGc {
    let mut out = SpinGc::default();
    if u + d > SMALL_GCX_SPIN {
        if u > SMALL_GCX_SPIN && s_uu > SMALL_GCX_SPIN * SMALL_GCX_SPIN {
            let (sx, v1, v2) = pbe::pbex(2.0 * u, 4.0 * s_uu);
            out.e += 0.5 * sx;
            out.vu = v1;
            out.vuu = 2.0 * v2;
            if let Some(w) = omega {
                let (sx, v1, v2) = wpbe::pbexsr(2.0 * u, 4.0 * s_uu, w);
                out.sr.e += 0.5 * sx;
                out.sr.vu = v1;
                out.sr.vuu = 2.0 * v2;
            }
        }
        if d > SMALL_GCX_SPIN && s_dd > SMALL_GCX_SPIN * SMALL_GCX_SPIN {
            let (sx, v1, v2) = pbe::pbex(2.0 * d, 4.0 * s_dd);
            out.e += 0.5 * sx;
            out.vd = v1;
            out.vdd = 2.0 * v2;
            if let Some(w) = omega {
                let (sx, v1, v2) = wpbe::pbexsr(2.0 * d, 4.0 * s_dd, w);
                out.sr.e += 0.5 * sx;
                out.sr.vd = v1;
                out.sr.vdd = 2.0 * v2;
            }
        }
    }
    out
}

/// Polarised PBE correlation gradient correction at one point (QE `gcc_spin`),
/// a function of `rho_t`, `zeta` and `|grad rho_t|^2 = s_uu + 2 s_ud + s_dd`.
#[inline]
fn pbe_c_spin_point(u: f64, d: f64, s_uu: f64, s_ud: f64, s_dd: f64) -> SpinGc {
    let mut out = SpinGc::default();
    let rt = u + d;
    if rt > RHO_THRESHOLD_GGA {
        let zeta = (u - d) / rt;
        let grho = s_uu + 2.0 * s_ud + s_dd;
        if zeta.abs() <= 1.0 && grho > RHO_THRESHOLD_GGA * RHO_THRESHOLD_GGA {
            let zeta = zeta.clamp(-1.0 + RHO_THRESHOLD_GGA, 1.0 - RHO_THRESHOLD_GGA);
            let (sc, v1u, v1d, v2) = pbe::pbec_spin(rt, zeta, grho);
            out = SpinGc {
                e: sc,
                vu: v1u,
                vd: v1d,
                vuu: v2,
                vud: 2.0 * v2,
                vdd: v2,
                sr: SpinSr::default(),
            };
        }
    }
    out
}
