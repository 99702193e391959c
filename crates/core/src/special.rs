//! Special functions: erf/erfc to full double precision, real spherical harmonics (l <= 3).

// Cody's published rational-approximation coefficients are kept digit for digit.
#![allow(clippy::excessive_precision)]

/// Complementary error function, relative accuracy ~1e-16 (W. J. Cody's rational approximations).
pub fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 0.5 {
        return 1.0 - erf_small(x);
    }
    if x > 27.0 {
        return 0.0;
    }
    // Continued fraction / asymptotic for large x; Cody's 4.0 <= x and 0.46875 <= x < 4.
    if x < 4.0 {
        const P: [f64; 9] = [
            5.641_884_969_886_700_9e-1,
            8.883_149_794_388_375_9,
            6.611_919_063_714_162_9e1,
            2.986_351_381_974_001_3e2,
            8.819_522_212_417_690_9e2,
            1.712_047_612_634_070_6e3,
            2.051_078_377_826_071_5e3,
            1.230_339_354_797_997_2e3,
            2.153_115_354_744_038_5e-8,
        ];
        const Q: [f64; 8] = [
            1.574_492_611_070_983_5e1,
            1.176_939_508_913_124_9e2,
            5.371_811_018_620_098_6e2,
            1.621_389_574_566_690_2e3,
            3.290_799_235_733_459_7e3,
            4.362_619_090_143_247_2e3,
            3.439_367_674_143_721_6e3,
            1.230_339_354_803_749_4e3,
        ];
        let mut num = P[8] * x;
        let mut den = x;
        for i in 0..7 {
            num = (num + P[i]) * x;
            den = (den + Q[i]) * x;
        }
        let r = (num + P[7]) / (den + Q[7]);
        return exp_minus_x2(x) * r;
    }
    const P: [f64; 6] = [
        3.053_266_349_612_323_4e-1,
        3.603_448_999_498_044_4e-1,
        1.257_817_261_112_292_6e-1,
        1.608_378_514_874_227_6e-2,
        6.587_491_615_298_378_5e-4,
        1.631_538_713_730_709_6e-2,
    ];
    const Q: [f64; 5] = [
        2.568_520_192_289_822_4,
        1.872_952_849_923_460_4,
        5.279_051_029_514_284_1e-1,
        6.051_834_131_244_131_8e-2,
        2.335_204_976_268_691_8e-3,
    ];
    let z = 1.0 / (x * x);
    let mut num = P[5] * z;
    let mut den = z;
    for i in 0..4 {
        num = (num + P[i]) * z;
        den = (den + Q[i]) * z;
    }
    let mut r = z * (num + P[4]) / (den + Q[4]);
    r = (1.0 / std::f64::consts::PI.sqrt() - r) / x;
    exp_minus_x2(x) * r
}

/// Error function.
pub fn erf(x: f64) -> f64 {
    if x.abs() < 0.5 {
        erf_small(x)
    } else {
        1.0 - erfc(x)
    }
}

fn erf_small(x: f64) -> f64 {
    const A: [f64; 5] = [
        3.161_123_743_870_565_6,
        1.138_641_541_510_501_6e2,
        3.774_852_376_853_020_2e2,
        3.209_377_589_138_469_5e3,
        1.857_777_061_846_031_5e-1,
    ];
    const B: [f64; 4] = [
        2.360_129_095_234_412_1e1,
        2.440_246_379_344_441_7e2,
        1.282_616_526_077_372_3e3,
        2.844_236_833_439_170_6e3,
    ];
    let z = x * x;
    let mut num = A[4] * z;
    let mut den = z;
    for i in 0..3 {
        num = (num + A[i]) * z;
        den = (den + B[i]) * z;
    }
    x * (num + A[3]) / (den + B[3])
}

/// exp(-x^2) computed as Cody does, splitting x to keep relative accuracy for large x.
fn exp_minus_x2(x: f64) -> f64 {
    let xs = (x * 16.0).trunc() / 16.0;
    let del = (x - xs) * (x + xs);
    (-xs * xs).exp() * (-del).exp()
}

/// Real spherical harmonics Y_lm(r/|r|) for l = 0..=3, m = -l..=l, written into `out[m + l]`.
/// Orthonormal on the unit sphere; at r = 0 the l > 0 values are 0.
pub fn real_ylm(l: usize, r: [f64; 3], out: &mut [f64]) {
    use std::f64::consts::PI;
    let n = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    if l == 0 {
        out[0] = 0.5 / PI.sqrt();
        return;
    }
    if n < 1e-300 {
        out[..2 * l + 1].fill(0.0);
        return;
    }
    let (x, y, z) = (r[0] / n, r[1] / n, r[2] / n);
    match l {
        1 => {
            let c = (3.0 / (4.0 * PI)).sqrt();
            out[0] = c * y;
            out[1] = c * z;
            out[2] = c * x;
        }
        2 => {
            let c = (15.0 / (4.0 * PI)).sqrt();
            out[0] = c * x * y;
            out[1] = c * y * z;
            out[2] = (5.0 / (16.0 * PI)).sqrt() * (3.0 * z * z - 1.0);
            out[3] = c * x * z;
            out[4] = 0.5 * c * (x * x - y * y);
        }
        3 => {
            out[0] = (35.0 / (32.0 * PI)).sqrt() * y * (3.0 * x * x - y * y);
            out[1] = (105.0 / (4.0 * PI)).sqrt() * x * y * z;
            out[2] = (21.0 / (32.0 * PI)).sqrt() * y * (5.0 * z * z - 1.0);
            out[3] = (7.0 / (16.0 * PI)).sqrt() * z * (5.0 * z * z - 3.0);
            out[4] = (21.0 / (32.0 * PI)).sqrt() * x * (5.0 * z * z - 1.0);
            out[5] = (105.0 / (16.0 * PI)).sqrt() * z * (x * x - y * y);
            out[6] = (35.0 / (32.0 * PI)).sqrt() * x * (x * x - 3.0 * y * y);
        }
        _ => panic!("real_ylm: l = {l} > 3 is not supported"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_known_values() {
        let cases = [
            (0.0, 1.0),
            (0.1, 0.887_537_083_981_715_1),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_265_8),
            (3.0, 2.209_049_699_858_544e-5),
            (5.0, 1.537_459_794_428_034_8e-12),
            (-1.0, 1.842_700_792_949_715),
        ];
        for (x, e) in cases {
            assert!(
                ((erfc(x) - e) / e).abs() < 1e-14,
                "erfc({x}) = {} vs {e}",
                erfc(x)
            );
        }
        assert!((erf(0.3) - 0.328_626_759_459_127_4).abs() < 1e-15);
    }

    #[test]
    fn ylm_orthonormal_by_quadrature() {
        // Gauss-type check on a fine theta/phi grid.
        let (nt, np) = (200, 400);
        for l in 0..=3usize {
            let mut acc = vec![0.0; (2 * l + 1) * (2 * l + 1)];
            let mut y = vec![0.0; 2 * l + 1];
            for it in 0..nt {
                let t = (it as f64 + 0.5) * std::f64::consts::PI / nt as f64;
                for ip in 0..np {
                    let p = ip as f64 * 2.0 * std::f64::consts::PI / np as f64;
                    real_ylm(l, [t.sin() * p.cos(), t.sin() * p.sin(), t.cos()], &mut y);
                    let w = t.sin()
                        * (std::f64::consts::PI / nt as f64)
                        * (2.0 * std::f64::consts::PI / np as f64);
                    for a in 0..2 * l + 1 {
                        for b in 0..2 * l + 1 {
                            acc[a * (2 * l + 1) + b] += w * y[a] * y[b];
                        }
                    }
                }
            }
            for a in 0..2 * l + 1 {
                for b in 0..2 * l + 1 {
                    let e = if a == b { 1.0 } else { 0.0 };
                    assert!((acc[a * (2 * l + 1) + b] - e).abs() < 1e-4, "l={l} {a} {b}");
                }
            }
        }
    }
}
