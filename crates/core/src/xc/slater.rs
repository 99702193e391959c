//! Slater (Dirac) LDA exchange with alpha = 2/3, as in Quantum ESPRESSO's
//! `slater` / `slater_spin` (Hartree atomic units).
//!
//! Unpolarised: `eps_x = f * alpha / rs` with `f = -9/8 (3/(2 pi))^(2/3)`.
//! Polarised: `eps_x = 1/2 [(1+z) e_up + (1-z) e_dw]` with
//! `e_s = f' * alpha * ((1 +/- z) rho)^(1/3)`, `f' = -9/8 (3/pi)^(1/3)`.
//! The potentials are `v = 4/3 eps` channel by channel.

/// `-9/8 (3/(2 pi))^(2/3)` (QE's constant).
const F_UNPOL: f64 = -0.687_247_939_924_714;
/// `-9/8 (3/pi)^(1/3)` (QE's constant).
const F_SPIN: f64 = -1.107_838_149_573_033_6;
const ALPHA: f64 = 2.0 / 3.0;
const FOUR_THIRDS: f64 = 4.0 / 3.0;

/// Unpolarised Slater exchange: returns `(eps_x, v_x)` for Wigner-Seitz radius `rs`.
#[inline(always)]
pub(super) fn slater(rs: f64) -> (f64, f64) {
    let ex = F_UNPOL * ALPHA / rs;
    (ex, FOUR_THIRDS * ex)
}

/// Polarised Slater exchange for total density `rho` (> 0) and polarisation
/// `zeta` in `[-1, 1]`: returns `(eps_x, v_x_up, v_x_dw)`.
#[inline(always)]
pub(super) fn slater_spin(rho: f64, zeta: f64) -> (f64, f64, f64) {
    let exup = F_SPIN * ALPHA * super::vector_math::cbrt_or_zero((1.0 + zeta) * rho);
    let exdw = F_SPIN * ALPHA * super::vector_math::cbrt_or_zero((1.0 - zeta) * rho);
    let ex = 0.5 * ((1.0 + zeta) * exup + (1.0 - zeta) * exdw);
    (ex, FOUR_THIRDS * exup, FOUR_THIRDS * exdw)
}
