//! The exchange-correlation energy of a one-centre density in the spheres of PAW, and its
//! derivative with respect to the density's radial components.
//!
//! Contract: the valence density of spin channel s is `ρ_s(r) = Σ_lm f_s,lm(r) Y_lm(r̂) / r²`
//! on the first points of a radial mesh, plus `ρ_c(r) / nspin` of a spherical core. The
//! energy `E = Σ_x w_x Σ_k W_k e_xc(ρ(r_k, x), |∇ρ|²)` sums over the directions x of a
//! [`Sphere`] (Gauss–Legendre in cos θ times uniform φ) and the radial points with
//! `W_k = r_k²` times QE's Simpson weight. [`energy`] returns E (Ha) and `∂E/∂f_s,lm(r_k)`, the
//! exact derivative of this discrete sum, so that the coupling `D_ij = Σ ∂E/∂f · ∂f/∂ρ_ij`
//! is consistent with the energy to rounding. The radial gradient is QE's `radial_gradient`
//! (three points on the non-uniform mesh); the angular one comes from the harmonics' own
//! gradients.

use crate::clebsch_gordan::{gradients, harmonics};
use crate::xc::{self, Functional};

/// Directions and weights of an angular quadrature, with the harmonics and their gradients
/// there.
pub struct Sphere {
    /// Weights (summing to 4π).
    weights: Vec<f64>,
    /// `ylm[x][lm]`, lm = l² + m + l, l ≤ lmax.
    ylm: Vec<Vec<f64>>,
    /// `grad[x][lm]`: the gradient on the unit sphere of Y_lm at direction x.
    grad: Vec<Vec<[f64; 3]>>,
    /// `r̂` of each direction.
    dirs: Vec<[f64; 3]>,
    /// Number of harmonics, (lmax + 1)².
    nlm: usize,
}

impl Sphere {
    /// `ntheta` Gauss–Legendre points in cos θ times `nphi` uniform φ, with harmonics up to
    /// `lmax` (≤ 6).
    pub fn new(ntheta: usize, nphi: usize, lmax: usize) -> Self {
        let mut dirs = Vec::with_capacity(ntheta * nphi);
        let mut weights = Vec::with_capacity(ntheta * nphi);
        for (z, w) in crate::clebsch_gordan::gauss_legendre(ntheta) {
            let s = (1.0 - z * z).sqrt();
            for k in 0..nphi {
                let phi = 2.0 * std::f64::consts::PI * k as f64 / nphi as f64;
                dirs.push([s * phi.cos(), s * phi.sin(), z]);
                weights.push(w * 2.0 * std::f64::consts::PI / nphi as f64);
            }
        }
        let nlm = (lmax + 1) * (lmax + 1);
        let ylm = dirs
            .iter()
            .map(|&u| harmonics(lmax, u)[..nlm].to_vec())
            .collect();
        let grad = (dirs.iter())
            .map(|&u| gradients(lmax, u)[..nlm].to_vec())
            .collect();
        Self {
            weights,
            ylm,
            grad,
            dirs,
            nlm,
        }
    }

    /// The directions x ≡ `index` (mod `count`) alone: part `index` of `count` of the
    /// quadrature, whose energies and derivatives add up to the whole's.
    pub fn part(self, index: usize, count: usize) -> Self {
        Self {
            weights: every(self.weights, index, count),
            ylm: every(self.ylm, index, count),
            grad: every(self.grad, index, count),
            dirs: every(self.dirs, index, count),
            nlm: self.nlm,
        }
    }

    /// Number of harmonics (lmax + 1)².
    pub fn nlm(&self) -> usize {
        self.nlm
    }
}

/// The items x ≡ `index` (mod `count`) of `v`.
fn every<T>(v: Vec<T>, index: usize, count: usize) -> Vec<T> {
    v.into_iter()
        .enumerate()
        .filter(|(x, _)| x % count == index)
        .map(|(_, v)| v)
        .collect()
}

/// The radial derivative as a stencil on the mesh, `(dg/dr)(k) = Σ_j c_j g(j)`: QE's
/// `radial_gradient`, the three-point derivative of the parabola through k - 1, k, k + 1
/// inside, zero at the last point and extrapolated linearly from points 1 and 2 at the first.
fn stencil(r: &[f64], k: usize) -> Vec<(usize, f64)> {
    let n = r.len();
    let inner = |i: usize| {
        let (dp, dm) = (r[i + 1] - r[i], r[i - 1] - r[i]);
        let d = dp * dm * (r[i + 1] - r[i - 1]);
        [
            (i - 1, dp * dp / d),
            (i, (dm * dm - dp * dp) / d),
            (i + 1, -dm * dm / d),
        ]
    };
    if n < 4 || k + 1 == n {
        return Vec::new();
    }
    if k > 0 {
        return inner(k).to_vec();
    }
    let t = (r[0] - r[1]) / (r[2] - r[1]);
    let mut out: Vec<(usize, f64)> = inner(1).iter().map(|&(j, c)| (j, (1.0 - t) * c)).collect();
    out.extend(inner(2).iter().map(|&(j, c)| (j, t * c)));
    out
}

/// dg/dr on the mesh r.
fn derivative(g: &[f64], r: &[f64]) -> Vec<f64> {
    (0..g.len())
        .map(|k| stencil(r, k).iter().map(|&(j, c)| c * g[j]).sum())
        .collect()
}

/// 1/r², and 0 at r = 0 (as QE's radial grids).
fn inv_r2(r: f64) -> f64 {
    if r > 1e-16 {
        1.0 / (r * r)
    } else {
        0.0
    }
}

/// The radial mesh of a sphere: r and the energy weights W_k (Simpson weight × r²).
pub struct Radial<'a> {
    pub r: &'a [f64],
    pub weights: &'a [f64],
}

/// The density and its gradient at every point (k, x), index k · nx + x, per spin.
struct Points {
    rho: Vec<Vec<f64>>,
    /// Empty for an LDA.
    grad: Vec<Vec<[f64; 3]>>,
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// ρ_s and (with `gga`) ∇ρ_s at every point of `sphere` × `mesh` from `f` and `core`.
fn points(sphere: &Sphere, r: &[f64], f: &[Vec<Vec<f64>>], core: &[f64], gga: bool) -> Points {
    let (nspin, n, nx) = (f.len(), r.len(), sphere.weights.len());
    // g = f / r² per spin and lm, the core split over the spins, and their radial derivatives.
    let g: Vec<Vec<Vec<f64>>> = f
        .iter()
        .map(|fs| {
            let radial = |c: &Vec<f64>| c.iter().zip(r).map(|(c, &r)| c * inv_r2(r)).collect();
            fs.iter().map(radial).collect()
        })
        .collect();
    let share: Vec<f64> = core[..n].iter().map(|c| c / nspin as f64).collect();
    let (dg, dshare) = if gga {
        let dg: Vec<Vec<Vec<f64>>> = g
            .iter()
            .map(|gs| gs.iter().map(|c| derivative(c, r)).collect())
            .collect();
        (dg, derivative(&share, r))
    } else {
        (Vec::new(), Vec::new())
    };
    let at = |c: &[Vec<f64>], k: usize, y: &[f64]| -> f64 {
        c.iter().zip(y).map(|(c, y)| c[k] * y).sum()
    };
    let mut out = Points {
        rho: vec![vec![0.0; n * nx]; nspin],
        grad: vec![vec![[0.0; 3]; if gga { n * nx } else { 0 }]; nspin],
    };
    for s in 0..nspin {
        for k in 0..n {
            let inv_r = inv_r2(r[k]).sqrt();
            for x in 0..nx {
                let (y, p) = (&sphere.ylm[x], k * nx + x);
                out.rho[s][p] = share[k] + at(&g[s], k, y);
                if gga {
                    let dr = dshare[k] + at(&dg[s], k, y);
                    let u = sphere.dirs[x];
                    let mut v = [dr * u[0], dr * u[1], dr * u[2]];
                    for (c, gy) in g[s].iter().zip(&sphere.grad[x]) {
                        (0..3).for_each(|a| v[a] += c[k] * inv_r * gy[a]);
                    }
                    out.grad[s][p] = v;
                }
            }
        }
    }
    out
}

/// σ of the functional's convention (libxc's: uu, ud, dd with spin); empty for an LDA.
fn sigma(grad: &[Vec<[f64; 3]>]) -> Vec<Vec<f64>> {
    if grad.iter().all(Vec::is_empty) {
        return Vec::new();
    }
    if let [g] = grad {
        return vec![g.iter().map(|v| dot(v, v)).collect()];
    }
    let (u, d) = (&grad[0], &grad[1]);
    vec![
        u.iter().map(|v| dot(v, v)).collect(),
        u.iter().zip(d).map(|(a, b)| dot(a, b)).collect(),
        d.iter().map(|v| dot(v, v)).collect(),
    ]
}

/// `h_s = ∂e/∂(∇ρ_s)` at point p: `2 vσ ∇ρ`, or with spin `2 vσ_ss ∇ρ_s + vσ_ud ∇ρ_s'`.
fn h(vsigma: &[Vec<f64>], grad: &[Vec<[f64; 3]>], s: usize, p: usize) -> [f64; 3] {
    if grad.len() == 1 {
        return grad[0][p].map(|g| 2.0 * vsigma[0][p] * g);
    }
    let other = 1 - s;
    std::array::from_fn(|a| {
        2.0 * vsigma[2 * s][p] * grad[s][p][a] + vsigma[1][p] * grad[other][p][a]
    })
}

/// E_xc (Ha) of the density of the module doc, `f[s][lm][k]`, with the core `core[k]`, and
/// with `derivative` `∂E/∂f[s][lm][k]` (empty without).
pub fn energy(
    functional: Functional,
    sphere: &Sphere,
    mesh: &Radial<'_>,
    f: &[Vec<Vec<f64>>],
    core: &[f64],
    derivative: bool,
) -> (f64, Vec<Vec<Vec<f64>>>) {
    let (n, nx) = (mesh.weights.len(), sphere.weights.len());
    let r = &mesh.r[..n];
    let pts = points(sphere, r, f, core, functional.is_gga());
    let sig = sigma(&pts.grad);
    let rho_s: Vec<&[f64]> = pts.rho.iter().map(Vec::as_slice).collect();
    let sigma_s: Vec<&[f64]> = sig.iter().map(Vec::as_slice).collect();
    let out = xc::evaluate(functional, &rho_s, &sigma_s);
    let weight = |p: usize| mesh.weights[p / nx] * sphere.weights[p % nx];
    let e: f64 = out.e.iter().enumerate().map(|(p, e)| weight(p) * e).sum();
    if !derivative {
        return (e, Vec::new());
    }
    let de = (0..f.len())
        .map(|s| derivative_of_energy(sphere, mesh, &pts, &out, s))
        .collect();
    (e, de)
}

/// `∂E/∂f[s][lm][k]` of [`energy`] for spin `s`: `∂E/∂g = a + Dᵀ b` with `a` the local terms
/// (vρ Y and the angular gradient's), `b` the radial gradient's, and `g = f / r²`.
fn derivative_of_energy(
    sphere: &Sphere,
    mesh: &Radial<'_>,
    pts: &Points,
    out: &xc::XcOutput,
    s: usize,
) -> Vec<Vec<f64>> {
    let (n, nx, nlm) = (mesh.weights.len(), sphere.weights.len(), sphere.nlm());
    let gga = !pts.grad.is_empty() && !pts.grad[0].is_empty();
    let mut a = vec![vec![0.0; n]; nlm];
    let mut b = vec![vec![0.0; n]; nlm];
    for k in 0..n {
        let inv_r = inv_r2(mesh.r[k]).sqrt();
        for x in 0..nx {
            let (p, w) = (k * nx + x, mesh.weights[k] * sphere.weights[x]);
            let (y, vr) = (&sphere.ylm[x], out.vrho[s][p]);
            let hv = gga.then(|| h(&out.vsigma, &pts.grad, s, p));
            for lm in 0..nlm {
                a[lm][k] += w * vr * y[lm];
                if let Some(hv) = &hv {
                    a[lm][k] += w * dot(hv, &sphere.grad[x][lm]) * inv_r;
                    b[lm][k] += w * dot(hv, &sphere.dirs[x]) * y[lm];
                }
            }
        }
    }
    for (al, bl) in a.iter_mut().zip(&b) {
        if gga {
            for (k, bk) in bl.iter().enumerate() {
                for (j, c) in stencil(&mesh.r[..n], k) {
                    al[j] += c * bk;
                }
            }
        }
        for (v, &r) in al.iter_mut().zip(mesh.r) {
            *v *= inv_r2(r);
        }
    }
    a
}
