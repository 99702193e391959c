//! `ln`, `exp` and the cube root from additions, multiplications, divisions and bit operations
//! only, with no branch and no library call, so that a loop over grid points that uses them
//! compiles to vector instructions (the functionals' loops; the C library's functions are
//! opaque calls that keep such a loop scalar).
//!
//! Contract: each result is within 2 ulp of the exact value (the tests hold them to the
//! standard library's, which is within 1) for arguments in the stated range; outside it the
//! result is unspecified but never a trap. No fused multiply-add is used, so the results are
//! the same bits on every x86-64 CPU, vectorised or not.

/// ln 2 split so that `k * LN2_HI` is exact for |k| < 2^11 (fdlibm's split).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
/// ln 2 - [`LN2_HI`].
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
/// 1.5 × 2^52: adding it rounds to an integer held in the low bits of the sum.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// The bits of [`ROUND_MAGIC`].
const ROUND_MAGIC_BITS: u64 = 0x4338_0000_0000_0000;

/// 1/(2k + 1) for k = 0..=10, the coefficients of atanh's series.
const INV_ODD: [f64; 11] = {
    let mut c = [1.0; 11];
    let mut k = 1;
    while k < 11 {
        c[k] = 1.0 / (2 * k + 1) as f64;
        k += 1;
    }
    c
};

/// 1/n! for n = 0..=13, the Taylor coefficients of e^r.
const INV_FACTORIAL: [f64; 14] = {
    let mut c = [1.0; 14];
    let mut n = 1;
    while n < 14 {
        c[n] = c[n - 1] / n as f64;
        n += 1;
    }
    c
};

/// Natural logarithm of a positive normal `x`.
///
/// x = 2^e m with m in [√½, √2); ln m = 2 atanh f, f = (m - 1)/(m + 1), |f| ≤ 0.172, by its
/// odd series through f^21 (the next term is below 1e-18 of the sum).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    // The biased exponent as a float without an integer conversion: 2^52 + e_biased - 2^52.
    let e =
        f64::from_bits(0x4330_0000_0000_0000 | (bits >> 52)) - (4_503_599_627_370_496.0 + 1023.0);
    let m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    let above = m > std::f64::consts::SQRT_2;
    let m = if above { 0.5 * m } else { m };
    let e = if above { e + 1.0 } else { e };
    // m - 1 is exact here (Sterbenz), so f carries one rounding of the division.
    let f = (m - 1.0) / (m + 1.0);
    let s = f * f;
    let mut p = INV_ODD[10];
    for c in INV_ODD[1..10].iter().rev() {
        p = p * s + c;
    }
    let two_f = 2.0 * f;
    e * LN2_HI + (two_f * s * p + e * LN2_LO + two_f)
}

/// e^x for -700 ≤ x ≤ 700.
///
/// x = k ln 2 + r with k the nearest integer to x / ln 2 and |r| ≤ ½ ln 2; e^r by its Taylor
/// series through r^13 (the remainder is below 5e-18), then scaled by 2^k built in the
/// exponent bits.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    let x = x.clamp(-700.0, 700.0);
    let t = x * std::f64::consts::LOG2_E + ROUND_MAGIC;
    let k = t - ROUND_MAGIC;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = INV_FACTORIAL[13];
    for c in INV_FACTORIAL[..13].iter().rev() {
        p = p * r + c;
    }
    // t's low bits hold k (two's complement); 2^k has the biased exponent k + 1023.
    let two_k = f64::from_bits(t.to_bits().wrapping_sub(ROUND_MAGIC_BITS - 1023) << 52);
    p * two_k
}

/// Cube root of a positive normal `x`.
///
/// A first guess from the exponent bits (fdlibm's: within 1/32), then three Halley steps
/// y ← y + y (x - y³) / (2y³ + x), each cubing the relative error.
#[inline(always)]
pub fn cbrt(x: f64) -> f64 {
    let hi = (x.to_bits() >> 32) as u32;
    let mut y = f64::from_bits(((hi / 3 + 715_094_163) as u64) << 32);
    for _ in 0..3 {
        let y3 = y * y * y;
        y += y * ((x - y3) / (2.0 * y3 + x));
    }
    y
}

/// Cube root of a non-negative `x` that is zero or normal: [`cbrt`], and exactly 0 at 0 (spin
/// factors such as (1 - ζ)^(1/3) at full polarisation).
#[inline(always)]
pub fn cbrt_or_zero(x: f64) -> f64 {
    let y = cbrt(if x > 0.0 { x } else { 1.0 });
    if x > 0.0 {
        y
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` points spread log-uniformly over [lo, hi] (lo > 0), with a fixed irrational step.
    fn log_spread(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        let (a, b) = (lo.ln(), hi.ln());
        (0..n).map(move |i| {
            let u = (i as f64 * 0.618_033_988_749_894_9).fract();
            (a + (b - a) * u).exp()
        })
    }

    /// The worst relative difference of `f` from `reference` over `xs`, in units of 2^-52.
    fn worst_ulps(
        xs: impl Iterator<Item = f64>,
        f: fn(f64) -> f64,
        reference: fn(f64) -> f64,
    ) -> f64 {
        xs.map(|x| {
            let (a, b) = (f(x), reference(x));
            ((a - b) / b).abs() / f64::EPSILON
        })
        .fold(0.0, f64::max)
    }

    #[test]
    fn ln_is_within_two_ulp_of_std() {
        let wide = worst_ulps(log_spread(1e-300, 1e300, 200_000), ln, f64::ln);
        let near_one = worst_ulps(
            log_spread(0.5, 2.0, 200_000).filter(|&x| x != 1.0),
            ln,
            f64::ln,
        );
        assert!(wide <= 2.0, "ln over 1e-300..1e300: {wide} ulp");
        assert!(near_one <= 2.0, "ln over 0.5..2: {near_one} ulp");
        assert_eq!(ln(1.0), 0.0);
    }

    #[test]
    fn exp_is_within_two_ulp_of_std() {
        let xs =
            (0..400_000).map(|i| -700.0 + 1400.0 * (i as f64 * 0.618_033_988_749_894_9).fract());
        let worst = worst_ulps(xs, exp, f64::exp);
        assert!(worst <= 2.0, "exp over -700..700: {worst} ulp");
        let small = worst_ulps(log_spread(1e-12, 1.0, 100_000), exp, f64::exp);
        assert!(small <= 2.0, "exp over 1e-12..1: {small} ulp");
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn cbrt_is_within_two_ulp_of_std() {
        let worst = worst_ulps(log_spread(1e-300, 1e300, 400_000), cbrt, f64::cbrt);
        assert!(worst <= 2.0, "cbrt over 1e-300..1e300: {worst} ulp");
        assert_eq!(cbrt(8.0), 2.0);
        assert_eq!(cbrt(1.0), 1.0);
        assert_eq!(cbrt_or_zero(0.0), 0.0);
        assert_eq!(cbrt_or_zero(27.0), 3.0);
    }
}
