//! Products of real spherical harmonics expanded in real spherical harmonics (the "ap"
//! coefficients of Quantum ESPRESSO's `aainit`), for the augmentation charges of ultrasoft
//! and PAW pseudopotentials.
//!
//! Contract:
//! * The harmonics are those of [`crate::special::real_ylm`]: real, orthonormal on the unit
//!   sphere, without the Condon–Shortley phase, `m < 0` the sin(|m| phi) and `m > 0` the
//!   cos(m phi) combinations, stored at index `m + l`. [`real_ylm_upto6`] extends them to
//!   l <= 6 (equal to `real_ylm` for l <= 3 to rounding).
//! * A pair `(l, m)` below is `l` and the index `m + l` (0..=2l), as in `real_ylm`'s output.
//! * [`YlmProducts::ap`] gives `ap[L M; l1 m1; l2 m2] = int Y_LM Y_l1m1 Y_l2m2 dOmega`, so that
//!   for l1, l2 <= 3 and every direction
//!   `Y_l1m1(r) Y_l2m2(r) = sum_{L in product_ls(l1, l2)} sum_M ap[L M; l1 m1; l2 m2] Y_LM(r)`
//!   exactly (a product of degree-l1 and degree-l2 harmonics only holds L = |l1-l2|, ...,
//!   l1+l2 in steps of 2). The coefficients are symmetric in their three pairs.
//! * They are computed once, by a quadrature of the sphere exact for polynomials of degree
//!   <= 15 (8-point Gauss–Legendre in cos(theta) times 16 uniform phi), to ~1e-16; entries
//!   below 1e-14 are set to 0.

use std::f64::consts::PI;
use std::sync::OnceLock;

/// Highest l of a factor.
pub const LMAX: usize = 3;
/// Highest L of a product (2 [`LMAX`]).
pub const LMAX_PRODUCT: usize = 2 * LMAX;
/// Number of (l, m) with l <= [`LMAX`].
const NFACTOR: usize = (LMAX + 1) * (LMAX + 1);
/// Number of (L, M) with L <= [`LMAX_PRODUCT`].
const NPRODUCT: usize = (LMAX_PRODUCT + 1) * (LMAX_PRODUCT + 1);

/// Combined index l^2 + (m + l) of a pair (l, m index).
fn lm(l: usize, m: usize) -> usize {
    l * l + m
}

/// The L of the product of harmonics of l1 and l2: |l1 - l2| to l1 + l2 in steps of 2.
pub fn product_ls(l1: usize, l2: usize) -> impl Iterator<Item = usize> {
    (l1.abs_diff(l2)..=l1 + l2).step_by(2)
}

/// Real spherical harmonics Y_lm(r/|r|) for l <= [`LMAX_PRODUCT`], m = -l..=l into
/// `out[m + l]`, in the convention of [`crate::special::real_ylm`]; at r = 0 the l > 0 values
/// are 0. Panics for l > 6 (programming error).
pub fn real_ylm_upto6(l: usize, r: [f64; 3], out: &mut [f64]) {
    assert!(
        l <= LMAX_PRODUCT,
        "real_ylm_upto6: l = {l} > {LMAX_PRODUCT}"
    );
    let n = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
    if l > 0 && n < 1e-300 {
        out[..2 * l + 1].fill(0.0);
        return;
    }
    let (x, y, z) = if l == 0 {
        (0.0, 0.0, 1.0)
    } else {
        (r[0] / n, r[1] / n, r[2] / n)
    };
    // (x + i y)^m = sin^m(theta) e^{i m phi}
    let (mut re, mut im) = (1.0, 0.0);
    for m in 0..=l {
        let c = norm(l, m) * legendre_derivative(l, m, z);
        if m == 0 {
            out[l] = c;
        } else {
            out[l + m] = std::f64::consts::SQRT_2 * c * re;
            out[l - m] = std::f64::consts::SQRT_2 * c * im;
        }
        (re, im) = (re * x - im * y, re * y + im * x);
    }
}

/// sqrt((2l+1)/(4 pi) (l-m)!/(l+m)!).
fn norm(l: usize, m: usize) -> f64 {
    let ratio: f64 = ((l - m + 1)..=(l + m)).map(|k| 1.0 / k as f64).product();
    ((2 * l + 1) as f64 / (4.0 * PI) * ratio).sqrt()
}

/// d^m P_l(z) / dz^m, so that P_l^m = (1 - z^2)^{m/2} d^m P_l/dz^m (no Condon–Shortley phase).
fn legendre_derivative(l: usize, m: usize, z: f64) -> f64 {
    // (2m - 1)!! for l = m, then (l - m) Q_l = (2l - 1) z Q_{l-1} - (l + m - 1) Q_{l-2}.
    let mut prev = 0.0;
    let mut cur: f64 = (1..=m).map(|k| (2 * k - 1) as f64).product();
    for k in (m + 1)..=l {
        let next = ((2 * k - 1) as f64 * z * cur - (k + m - 1) as f64 * prev) / (k - m) as f64;
        prev = cur;
        cur = next;
    }
    cur
}

/// Gauss–Legendre nodes and weights on [-1, 1] (Newton on P_n).
pub(crate) fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let mut x = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            for _ in 0..100 {
                let (p, d) = legendre_and_derivative(n, x);
                let dx = p / d;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            let (_, d) = legendre_and_derivative(n, x);
            (x, 2.0 / ((1.0 - x * x) * d * d))
        })
        .collect()
}

/// (P_n(x), P_n'(x)).
fn legendre_and_derivative(n: usize, x: f64) -> (f64, f64) {
    let (mut p0, mut p1) = (1.0, x);
    for k in 2..=n {
        let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
        p0 = p1;
        p1 = p2;
    }
    let d = n as f64 * (x * p1 - p0) / (x * x - 1.0);
    (p1, d)
}

/// Number of harmonics up to l = [`LMAX_PRODUCT`].
pub const NLM_PRODUCT: usize = (LMAX_PRODUCT + 1) * (LMAX_PRODUCT + 1);

/// Y_lm(u) for l ≤ lmax at index l² + m + l (zero above), on the stack.
pub fn harmonics(lmax: usize, u: [f64; 3]) -> [f64; NLM_PRODUCT] {
    let mut out = [0.0; NLM_PRODUCT];
    for l in 0..=lmax {
        real_ylm_upto6(l, u, &mut out[l * l..(l + 1) * (l + 1)]);
    }
    out
}

/// The Cartesian gradient of Y_lm(x/|x|) at the unit vector u (tangent to the sphere), for
/// l ≤ lmax at index l² + m + l (zero above); `u` is normalised first.
///
/// Analytic: r^l Y_lm is the solid harmonic R_lm = c Q(z, r²) (x + i y)^m, a polynomial, so at
/// |x| = 1 the gradient is ∇R_lm − l Y_lm u. Q follows the recurrence of
/// `legendre_derivative` with r² restored, and its two partial derivatives theirs.
pub fn gradients(lmax: usize, u: [f64; 3]) -> [[f64; 3]; NLM_PRODUCT] {
    assert!(
        lmax <= LMAX_PRODUCT,
        "gradients: l = {lmax} > {LMAX_PRODUCT}"
    );
    let mut out = [[0.0; 3]; NLM_PRODUCT];
    let n = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
    if n < 1e-300 {
        return out;
    }
    let u = [u[0] / n, u[1] / n, u[2] / n];
    for l in 1..=lmax {
        let row = &mut out[l * l..(l + 1) * (l + 1)];
        // (x + i y)^(m-1) and (x + i y)^m as (re, im), starting at m = 0.
        let (mut below, mut power) = ((0.0, 0.0), (1.0, 0.0));
        for m in 0..=l {
            let (q, grad_q) = solid_legendre(l, m, u);
            let c = norm(l, m);
            let mf = m as f64;
            // d/dx (x + i y)^m = m (x + i y)^(m-1), d/dy = i m (x + i y)^(m-1).
            let d_re = [mf * below.0, -mf * below.1, 0.0];
            let d_im = [mf * below.1, mf * below.0, 0.0];
            let y_re = c * q * power.0;
            let y_im = c * q * power.1;
            let tangent = |y: f64, d: [f64; 3], p: f64| -> [f64; 3] {
                std::array::from_fn(|a| c * (grad_q[a] * p + q * d[a]) - l as f64 * y * u[a])
            };
            if m == 0 {
                row[l] = tangent(y_re, d_re, power.0);
            } else {
                let s = std::f64::consts::SQRT_2;
                row[l + m] = tangent(y_re, d_re, power.0).map(|v| s * v);
                row[l - m] = tangent(y_im, d_im, power.1).map(|v| s * v);
            }
            below = power;
            power = (
                power.0 * u[0] - power.1 * u[1],
                power.0 * u[1] + power.1 * u[0],
            );
        }
    }
    out
}

/// Q = r^(l-m) d^m P_l/dz^m (z/r), a polynomial in z and r², and its Cartesian gradient, at
/// the unit vector `u`.
fn solid_legendre(l: usize, m: usize, u: [f64; 3]) -> (f64, [f64; 3]) {
    // (value, d/dz, d/d(r²)) of Q_k, k = m..=l, by (k - m) Q_k = (2k - 1) z Q_{k-1}
    // - (k + m - 1) r² Q_{k-2}, taken at r² = 1.
    let z = u[2];
    let mut prev = (0.0, 0.0, 0.0);
    let first: f64 = (1..=m).map(|k| (2 * k - 1) as f64).product();
    let mut cur = (first, 0.0, 0.0);
    for k in (m + 1)..=l {
        let (a, b, d) = ((2 * k - 1) as f64, (k + m - 1) as f64, (k - m) as f64);
        let next = (
            (a * z * cur.0 - b * prev.0) / d,
            (a * (cur.0 + z * cur.1) - b * prev.1) / d,
            (a * z * cur.2 - b * (prev.0 + prev.2)) / d,
        );
        prev = cur;
        cur = next;
    }
    let (q, dz, ds) = cur;
    (q, [2.0 * u[0] * ds, 2.0 * u[1] * ds, dz + 2.0 * u[2] * ds])
}

/// Points (unit vectors) and weights of a quadrature of the unit sphere exact for polynomials
/// of degree <= 15: 8 Gauss–Legendre cos(theta) times 16 uniform phi (weights sum to 4 pi).
pub fn sphere_quadrature() -> Vec<([f64; 3], f64)> {
    let nphi = 16;
    let mut out = Vec::with_capacity(8 * nphi);
    for (z, w) in gauss_legendre(8) {
        let s = (1.0 - z * z).sqrt();
        for k in 0..nphi {
            let phi = 2.0 * PI * k as f64 / nphi as f64;
            out.push((
                [s * phi.cos(), s * phi.sin(), z],
                w * 2.0 * PI / nphi as f64,
            ));
        }
    }
    out
}

/// The product coefficients of every pair of harmonics with l <= [`LMAX`] (see the module
/// doc).
#[derive(Debug, Clone, PartialEq)]
pub struct YlmProducts {
    /// ap[(lm1 * NFACTOR + lm2) * NPRODUCT + LM]
    table: Vec<f64>,
}

impl YlmProducts {
    /// Compute the coefficients by quadrature.
    pub fn new() -> Self {
        let mut table = vec![0.0; NFACTOR * NFACTOR * NPRODUCT];
        let mut y = vec![0.0; NPRODUCT];
        for (r, w) in sphere_quadrature() {
            for l in 0..=LMAX_PRODUCT {
                real_ylm_upto6(l, r, &mut y[l * l..]);
            }
            for a in 0..NFACTOR {
                for b in 0..NFACTOR {
                    let wab = w * y[a] * y[b];
                    let row = &mut table[(a * NFACTOR + b) * NPRODUCT..][..NPRODUCT];
                    row.iter_mut().zip(&y).for_each(|(t, yc)| *t += wab * yc);
                }
            }
        }
        table
            .iter_mut()
            .filter(|t| t.abs() < 1e-14)
            .for_each(|t| *t = 0.0);
        YlmProducts { table }
    }

    /// The coefficients, computed on first use and shared.
    pub fn shared() -> &'static Self {
        static SHARED: OnceLock<YlmProducts> = OnceLock::new();
        SHARED.get_or_init(Self::new)
    }

    /// `ap[L M; l1 m1; l2 m2]` with each pair `(l, m + l)`; L <= 6, l1, l2 <= 3 (panics
    /// beyond: programming error).
    pub fn ap(&self, big: (usize, usize), a: (usize, usize), b: (usize, usize)) -> f64 {
        assert!(big.0 <= LMAX_PRODUCT && a.0 <= LMAX && b.0 <= LMAX);
        let (i, j) = (lm(a.0, a.1), lm(b.0, b.1));
        self.table[(i * NFACTOR + j) * NPRODUCT + lm(big.0, big.1)]
    }
}

impl Default for YlmProducts {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::special::real_ylm;

    fn random_direction(rng: &mut SplitMix64) -> [f64; 3] {
        [
            rng.next_centered(),
            rng.next_centered(),
            rng.next_centered(),
        ]
    }

    #[test]
    fn extended_harmonics_match_real_ylm() {
        let mut rng = SplitMix64::new(7);
        let (mut a, mut b) = ([0.0; 13], [0.0; 13]);
        for _ in 0..50 {
            let r = random_direction(&mut rng);
            for l in 0..=3 {
                real_ylm(l, r, &mut a);
                real_ylm_upto6(l, r, &mut b);
                for m in 0..2 * l + 1 {
                    assert!(
                        (a[m] - b[m]).abs() < 1e-14,
                        "l={l} m={m}: {} {}",
                        a[m],
                        b[m]
                    );
                }
            }
        }
        real_ylm_upto6(4, [0.0; 3], &mut b);
        assert!(b[..9].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn gradients_match_differences_and_stay_tangent() {
        let mut rng = SplitMix64::new(5);
        let h = 1e-4;
        for _ in 0..40 {
            let r = random_direction(&mut rng);
            let n = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            let u = r.map(|v| v / n);
            let grad = gradients(LMAX_PRODUCT, r);
            for (lm, g) in grad.iter().enumerate() {
                let radial: f64 = (0..3).map(|a| g[a] * u[a]).sum();
                assert!(radial.abs() < 1e-13, "lm={lm}: radial part {radial}");
                for axis in 0..3 {
                    let at = |t: f64| {
                        let mut v = u;
                        v[axis] += t;
                        harmonics(LMAX_PRODUCT, v)[lm]
                    };
                    let fd = (8.0 * (at(h) - at(-h)) - (at(2.0 * h) - at(-2.0 * h))) / (12.0 * h);
                    assert!(
                        (g[axis] - fd).abs() < 1e-9,
                        "lm={lm} axis={axis}: {} {fd}",
                        g[axis]
                    );
                }
            }
        }
        assert!(gradients(2, [0.0; 3]).iter().flatten().all(|&v| v == 0.0));
    }

    #[test]
    fn quadrature_keeps_harmonics_orthonormal_to_l6() {
        let quad = sphere_quadrature();
        let total: f64 = quad.iter().map(|(_, w)| w).sum();
        assert!((total - 4.0 * PI).abs() < 1e-13);
        let mut y = vec![0.0; NPRODUCT];
        let mut gram = vec![0.0; NPRODUCT * NPRODUCT];
        for (r, w) in &quad {
            for l in 0..=LMAX_PRODUCT {
                real_ylm_upto6(l, *r, &mut y[l * l..]);
            }
            for i in 0..NPRODUCT {
                for j in 0..NPRODUCT {
                    gram[i * NPRODUCT + j] += w * y[i] * y[j];
                }
            }
        }
        for i in 0..NPRODUCT {
            for j in 0..NPRODUCT {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((gram[i * NPRODUCT + j] - e).abs() < 1e-13, "{i} {j}");
            }
        }
    }

    #[test]
    fn products_expand_exactly() {
        let ap = YlmProducts::shared();
        assert!((ap.ap((0, 0), (0, 0), (0, 0)) - 1.0 / (4.0 * PI).sqrt()).abs() < 1e-15);
        let mut rng = SplitMix64::new(11);
        let mut worst: f64 = 0.0;
        let (mut y1, mut y2, mut yl) = ([0.0; 7], [0.0; 7], [0.0; 13]);
        for _ in 0..40 {
            let r = random_direction(&mut rng);
            for l1 in 0..=LMAX {
                real_ylm(l1, r, &mut y1);
                for l2 in 0..=LMAX {
                    real_ylm(l2, r, &mut y2);
                    for (m1, v1) in y1[..2 * l1 + 1].iter().enumerate() {
                        for (m2, v2) in y2[..2 * l2 + 1].iter().enumerate() {
                            let mut sum = 0.0;
                            for big in product_ls(l1, l2) {
                                real_ylm_upto6(big, r, &mut yl);
                                for (mm, v) in yl[..2 * big + 1].iter().enumerate() {
                                    sum += ap.ap((big, mm), (l1, m1), (l2, m2)) * v;
                                }
                            }
                            worst = worst.max((sum - v1 * v2).abs());
                        }
                    }
                }
            }
        }
        assert!(worst < 1e-12, "worst product error {worst:e}");
    }

    #[test]
    fn coefficients_vanish_outside_the_allowed_l() {
        let ap = YlmProducts::shared();
        for l1 in 0..=LMAX {
            for l2 in 0..=LMAX {
                for big in 0..=LMAX_PRODUCT {
                    if product_ls(l1, l2).any(|l| l == big) {
                        continue;
                    }
                    for (m1, m2, mm) in index_triples(l1, l2, big) {
                        assert_eq!(ap.ap((big, mm), (l1, m1), (l2, m2)), 0.0);
                    }
                }
            }
        }
    }

    /// Every (m1, m2, M) index triple of (l1, l2, L).
    fn index_triples(l1: usize, l2: usize, big: usize) -> Vec<(usize, usize, usize)> {
        let mut v = Vec::new();
        for m1 in 0..2 * l1 + 1 {
            for m2 in 0..2 * l2 + 1 {
                for mm in 0..2 * big + 1 {
                    v.push((m1, m2, mm));
                }
            }
        }
        v
    }
}
