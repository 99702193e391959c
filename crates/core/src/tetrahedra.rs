//! Tetrahedron methods for densities of states: the linear one (Blöchl, Jepsen and Andersen,
//! PRB 49, 16223 (1994), the DOS of their linear interpolation; QE's `dos.x` with
//! `bz_sum = 'tetrahedra'`) and the optimised one (Kawamura et al.; `'tetrahedra_opt'`).
//!
//! Contract: [`tetrahedra`] cuts every cell of an `n1 x n2 x n3` k-point grid into six
//! tetrahedra sharing the cell's shortest main diagonal (in Cartesian lengths, from the
//! reciprocal vectors), as grid indices (corners first, then the points around them that the
//! optimised method fits) in the order of
//! [`crate::symmetry::monkhorst_pack`] (last index fastest). [`dos`] integrates
//! eigenvalues that are linear inside each tetrahedron (through the corner values, or through
//! corner values fitted to 20 points, [`Interpolation`]): D(E) in states per Ha per cell and
//! its integral N(E) in electrons per cell, each tetrahedron weighing 1/(6 n1 n2 n3) of the
//! zone, `spin_factor` electrons per band.

/// How a band is taken inside one tetrahedron.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Linear through the corner values (Blöchl et al.).
    Linear,
    /// Linear through corner values fitted to the band at 20 grid points around the
    /// tetrahedron (Kawamura, Gohda and Tsuneyuki, PRB 89, 094515 (2014); QE's
    /// `tetrahedra_opt`), which removes the linear method's overestimate of curved bands.
    Optimised,
}

/// The fit of [`Interpolation::Optimised`]: row i gives corner i's value from the 20 points
/// of [`tetrahedra`] (the four corners, then 2 k_a - k_b and k_a - k_b + k_c neighbours), in
/// units of 1/1260 (the paper's table).
const FIT: [[f64; 20]; 4] = [
    [
        1440., 0., 30., 0., -38., 7., 17., -28., -56., 9., -46., 9., -38., -28., 17., 7., -18.,
        -18., 12., -18.,
    ],
    [
        0., 1440., 0., 30., -28., -38., 7., 17., 9., -56., 9., -46., 7., -38., -28., 17., -18.,
        -18., -18., 12.,
    ],
    [
        30., 0., 1440., 0., 17., -28., -38., 7., -46., 9., -56., 9., 17., 7., -38., -28., 12.,
        -18., -18., -18.,
    ],
    [
        0., 30., 0., 1440., 7., 17., -28., -38., 9., -46., 9., -56., -28., 17., 7., -38., -18.,
        12., -18., -18.,
    ],
];

/// The six tetrahedra of every cell of `grid`, each as the grid indices of its four corners
/// and of the 16 points around it that [`Interpolation::Optimised`] fits.
pub fn tetrahedra(grid: [usize; 3], recip: &[[f64; 3]; 3]) -> Vec<[usize; 20]> {
    let [n1, n2, n3] = grid;
    // Corner c of a cell is (c >> 2 & 1, c >> 1 & 1, c & 1) in steps of the grid.
    let offset = |c: usize| [c >> 2 & 1, c >> 1 & 1, c & 1].map(|x| x as i64);
    let length = |a: usize, b: usize| {
        let df = [0, 1, 2].map(|d| (offset(b)[d] - offset(a)[d]) as f64 / grid[d] as f64);
        (0..3)
            .map(|c| (0..3).map(|d| df[d] * recip[d][c]).sum::<f64>().powi(2))
            .sum::<f64>()
    };
    // The main diagonals (0, 7), (1, 6), (2, 5), (3, 4): the shortest is shared.
    let (a, b) = [(0, 7), (1, 6), (2, 5), (3, 4)]
        .into_iter()
        .min_by(|x, y| length(x.0, x.1).total_cmp(&length(y.0, y.1)))
        .expect("four diagonals");
    let step = [0, 1, 2].map(|d| offset(b)[d] - offset(a)[d]);
    // The six paths from a to b along cell edges, one axis at a time.
    let mut shapes: Vec<[[i64; 3]; 20]> = Vec::with_capacity(6);
    for first in 0..3 {
        for second in (0..3).filter(|&s| s != first) {
            let mut k = [[0i64; 3]; 20];
            k[0] = offset(a);
            k[1] = k[0];
            k[1][first] += step[first];
            k[2] = k[1];
            k[2][second] += step[second];
            k[3] = offset(b);
            let c = [k[0], k[1], k[2], k[3]];
            let lin = |p: usize, q: usize, r: usize, x: i64, y: i64, z: i64| {
                [0, 1, 2].map(|d| x * c[p][d] + y * c[q][d] + z * c[r][d])
            };
            for i in 0..4 {
                k[4 + i] = lin(i, (i + 1) % 4, 0, 2, -1, 0);
                k[8 + i] = lin(i, (i + 2) % 4, 0, 2, -1, 0);
                k[12 + i] = lin(i, (i + 3) % 4, 0, 2, -1, 0);
                k[16 + i] = lin((i + 3) % 4, i, (i + 1) % 4, 1, -1, 1);
            }
            shapes.push(k);
        }
    }
    let wrap = |x: i64, n: usize| x.rem_euclid(n as i64) as usize;
    let mut out = Vec::with_capacity(6 * n1 * n2 * n3);
    for i in 0..n1 {
        for j in 0..n2 {
            for l in 0..n3 {
                let at = |p: [i64; 3]| {
                    let (x, y, z) = (i as i64 + p[0], j as i64 + p[1], l as i64 + p[2]);
                    (wrap(x, n1) * n2 + wrap(y, n2)) * n3 + wrap(z, n3)
                };
                out.extend(shapes.iter().map(|s| s.map(at)));
            }
        }
    }
    out
}

/// D(E) and N(E) at `energies` (Ha, ascending) from the bands `at(point)` of every grid point,
/// summed over `tets` (each weighing 1 / `tets.len()` of the zone).
pub fn dos<'a>(
    tets: &[[usize; 20]],
    how: Interpolation,
    at: impl Fn(usize) -> &'a [f64],
    spin_factor: f64,
    energies: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let w = spin_factor / tets.len() as f64;
    let mut d = vec![0.0; energies.len()];
    let mut n = vec![0.0; energies.len()];
    // Bands wholly below an energy add w there and above: one step each, summed at the end.
    let mut filled = vec![0.0; energies.len() + 1];
    let nbands = tets.first().map_or(0, |t| at(t[0]).len());
    let first_at_or_above = |e: f64| energies.partition_point(|&x| x < e);
    for t in tets {
        for band in 0..nbands {
            let e = sorted_corners(t, how, &at, band);
            let (from, to) = (first_at_or_above(e[0]), first_at_or_above(e[3]));
            for i in from..to {
                let (di, ni) = linear(e, energies[i]);
                d[i] += w * di;
                n[i] += w * ni;
            }
            filled[to] += w;
        }
    }
    let mut below = 0.0;
    for (ni, step) in n.iter_mut().zip(&filled) {
        below += step;
        *ni += below;
    }
    (d, n)
}

/// The sorted corner energies of every tetrahedron and band, kept for many evaluations of the
/// integrated DOS at single energies (a Fermi level's bisection): each then costs one pass
/// over them instead of forming every corner again.
pub struct Corners {
    sorted: Vec<[f64; 4]>,
    w: f64,
}

impl Corners {
    /// The corners of the bands `at(point)` in `tets`, `spin_factor` electrons per band (as
    /// [`dos`] takes them).
    pub fn new<'a>(
        tets: &[[usize; 20]],
        how: Interpolation,
        at: impl Fn(usize) -> &'a [f64],
        spin_factor: f64,
    ) -> Self {
        let nbands = tets.first().map_or(0, |t| at(t[0]).len());
        let sorted = (tets.iter())
            .flat_map(|t| (0..nbands).map(move |band| (t, band)))
            .map(|(t, band)| sorted_corners(t, how, &at, band))
            .collect();
        let w = spin_factor / tets.len() as f64;
        Self { sorted, w }
    }

    /// N(x): [`dos`]'s integrated DOS at the single energy `x`, to the last bit (the same
    /// terms summed in the same order).
    pub fn integrated(&self, x: f64) -> f64 {
        let (mut part, mut filled) = (0.0, 0.0);
        for e in &self.sorted {
            if x >= e[3] {
                filled += self.w;
            } else if x >= e[0] {
                part += self.w * linear(*e, x).1;
            }
        }
        part + filled
    }
}

/// Projected densities of states at `energies` (Ha, ascending): `out[c][i]` is
/// `Σ_tets Σ_bands Σ_p w_p(E_i) proj(p, band)[c]`, the DOS of [`dos`] with each grid point's
/// share of it weighed by the band's `proj` there (`channels` values per point and band). A
/// tetrahedron's share of a point is the mean of that corner's barycentric weight over the
/// surface of constant energy inside it (exact for linear bands); the optimised method hands
/// its four fitted corners' shares to its 20 points through the fit.
pub fn projected_dos<'a>(
    tets: &[[usize; 20]],
    how: Interpolation,
    at: impl Fn(usize) -> &'a [f64],
    proj: impl Fn(usize, usize) -> &'a [f64],
    channels: usize,
    spin_factor: f64,
    energies: &[f64],
) -> Vec<Vec<f64>> {
    let w = spin_factor / tets.len() as f64;
    let mut out = vec![vec![0.0; energies.len()]; channels];
    let nbands = tets.first().map_or(0, |t| at(t[0]).len());
    let first_at_or_above = |e: f64| energies.partition_point(|&x| x < e);
    let mut point_share = [0.0; 20];
    for t in tets {
        for band in 0..nbands {
            let e = corner_energies(t, how, &at, band);
            let lo = e.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for i in first_at_or_above(lo)..first_at_or_above(hi) {
                let corners = corner_weights(e, energies[i]);
                match how {
                    Interpolation::Linear => point_share[..4].copy_from_slice(&corners),
                    Interpolation::Optimised => {
                        for (p, share) in point_share.iter_mut().enumerate() {
                            *share = (0..4).map(|c| FIT[c][p] * corners[c]).sum::<f64>() / 1260.0;
                        }
                    }
                }
                let points = if how == Interpolation::Linear { 4 } else { 20 };
                for (p, share) in t.iter().zip(&point_share).take(points) {
                    let values = proj(*p, band);
                    for (c, v) in out.iter_mut().zip(values) {
                        c[i] += w * share * v;
                    }
                }
            }
        }
    }
    out
}

/// The energies of `band` at the four corners of tetrahedron `t`: the grid values, or their
/// fit to the 20 points of the optimised method.
fn corner_energies<'a>(
    t: &[usize; 20],
    how: Interpolation,
    at: &impl Fn(usize) -> &'a [f64],
    band: usize,
) -> [f64; 4] {
    match how {
        Interpolation::Linear => [0, 1, 2, 3].map(|c| at(t[c])[band]),
        Interpolation::Optimised => FIT.map(|row| {
            row.iter()
                .zip(t)
                .map(|(f, &p)| f * at(p)[band])
                .sum::<f64>()
                / 1260.0
        }),
    }
}

/// [`corner_energies`] in ascending order, as the linear DOS takes them.
fn sorted_corners<'a>(
    t: &[usize; 20],
    how: Interpolation,
    at: &impl Fn(usize) -> &'a [f64],
    band: usize,
) -> [f64; 4] {
    let mut e = corner_energies(t, how, at, band);
    e.sort_by(f64::total_cmp);
    e
}

/// The DOS at `x` of one band linear in one tetrahedron of unit weight with corner energies
/// `e` (any order), split over the corners: corner c gets the DOS times the mean of its
/// barycentric weight over the surface where the band equals `x` (a triangle or a
/// quadrilateral; the means are of an affine image, which keeps ratios of areas).
fn corner_weights(e: [f64; 4], x: f64) -> [f64; 4] {
    let mut order = [0, 1, 2, 3];
    order.sort_by(|&a, &b| e[a].total_cmp(&e[b]));
    let s = order.map(|c| e[c]);
    let (dos, _) = linear(s, x);
    if dos == 0.0 {
        return [0.0; 4];
    }
    // The surface's corners, on the edges (a, b) of the sorted corners it crosses.
    let edges: &[(usize, usize)] = if x < s[1] {
        &[(0, 1), (0, 2), (0, 3)]
    } else if x < s[2] {
        &[(0, 2), (0, 3), (1, 3), (1, 2)]
    } else {
        &[(0, 3), (1, 3), (2, 3)]
    };
    let vertex = |&(a, b): &(usize, usize)| {
        let t = (x - s[a]) / (s[b] - s[a]);
        let mut l = [0.0; 4];
        (l[a], l[b]) = (1.0 - t, t);
        l
    };
    let v: Vec<[f64; 4]> = edges.iter().map(vertex).collect();
    // Fan of triangles (v0, v_i, v_i+1): area (in λ1..3 space) times centroid.
    let (mut mean, mut area) = ([0.0; 4], 0.0);
    for i in 1..v.len() - 1 {
        let (a, b, c) = (v[0], v[i], v[i + 1]);
        let u = [1, 2, 3].map(|d| b[d] - a[d]);
        let w = [1, 2, 3].map(|d| c[d] - a[d]);
        let cross = [
            u[1] * w[2] - u[2] * w[1],
            u[2] * w[0] - u[0] * w[2],
            u[0] * w[1] - u[1] * w[0],
        ];
        let da = cross.iter().map(|x| x * x).sum::<f64>().sqrt();
        area += da;
        for d in 0..4 {
            mean[d] += da * (a[d] + b[d] + c[d]) / 3.0;
        }
    }
    let mut out = [0.0; 4];
    for (k, &c) in order.iter().enumerate() {
        out[c] = dos * if area > 0.0 { mean[k] / area } else { 0.25 };
    }
    out
}

/// The DOS and the integrated DOS at `x` of one band linear in one tetrahedron of unit
/// weight, corner energies `e` sorted.
fn linear([e1, e2, e3, e4]: [f64; 4], x: f64) -> (f64, f64) {
    if x < e1 {
        (0.0, 0.0)
    } else if x < e2 {
        let c = (e2 - e1) * (e3 - e1) * (e4 - e1);
        (3.0 * (x - e1).powi(2) / c, (x - e1).powi(3) / c)
    } else if x < e3 {
        let (u, c) = (x - e2, (e3 - e1) * (e4 - e1));
        let k = (e3 - e1 + e4 - e2) / ((e3 - e2) * (e4 - e2));
        let dos = (3.0 * (e2 - e1) + 6.0 * u - 3.0 * k * u * u) / c;
        let n = ((e2 - e1).powi(2) + 3.0 * (e2 - e1) * u + 3.0 * u * u - k * u.powi(3)) / c;
        (dos, n)
    } else if x < e4 {
        let c = (e4 - e1) * (e4 - e2) * (e4 - e3);
        (3.0 * (e4 - x).powi(2) / c, 1.0 - (e4 - x).powi(3) / c)
    } else {
        (0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_corners_give_the_integrated_dos_to_the_last_bit() {
        let recip = [[1.0, 0.1, 0.0], [0.0, 1.0, 0.2], [0.3, 0.0, 1.0]];
        let tets = tetrahedra([4, 3, 5], &recip);
        // Two bands per point, smooth but not linear over the grid.
        let bands: Vec<[f64; 2]> = (0..60)
            .map(|p| {
                let x = p as f64 * 0.37;
                [x.sin() * 0.2, 0.5 + x.cos() * 0.3]
            })
            .collect();
        for how in [Interpolation::Linear, Interpolation::Optimised] {
            let corners = Corners::new(&tets, how, |p| &bands[p][..], 2.0);
            for i in 0..=100 {
                let x = -0.4 + 1.3 * i as f64 / 100.0;
                let want = dos(&tets, how, |p| &bands[p][..], 2.0, &[x]).1[0];
                assert_eq!(
                    corners.integrated(x).to_bits(),
                    want.to_bits(),
                    "{how:?} {x}"
                );
            }
            assert!((corners.integrated(2.0) - 4.0).abs() < 1e-12);
        }
    }

    #[test]
    fn one_tetrahedron_integrates_to_one_and_is_continuous() {
        let e = [0.0, 0.3, 0.5, 1.0];
        let h = 1e-4;
        let mut sum = 0.0;
        let mut x = -0.1;
        while x < 1.1 {
            let (d, n) = linear(e, x);
            sum += d * h;
            let (d1, n1) = linear(e, x + h);
            assert!((n1 - n - 0.5 * (d + d1) * h).abs() < 1e-6, "N' = D at {x}");
            x += h;
        }
        assert!((sum - 1.0).abs() < 1e-3, "{sum}");
        for c in [0.3, 0.5] {
            let (a, b) = (linear(e, c - 1e-12), linear(e, c + 1e-12));
            assert!((a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-9);
        }
    }

    #[test]
    fn corner_weights_add_to_the_dos_and_follow_the_nearer_corners() {
        let e = [0.5, 0.0, 1.0, 0.3];
        for x in [0.1, 0.4, 0.7] {
            let w = corner_weights(e, x);
            let mut sorted = e;
            sorted.sort_by(f64::total_cmp);
            let d = linear(sorted, x).0;
            assert!(
                (w.iter().sum::<f64>() - d).abs() < 1e-12 * d,
                "{w:?} against {d}"
            );
            assert!(w.iter().all(|&c| c >= 0.0));
        }
        // Just above the lowest corner, the surface hugs it.
        let w = corner_weights(e, 1e-4);
        assert!(w[1] > 0.99 * w.iter().sum::<f64>());
    }

    #[test]
    fn projections_that_add_to_one_give_the_total_dos() {
        let grid = [6; 3];
        let tets = tetrahedra(grid, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        let kpts = crate::symmetry::monkhorst_pack(grid, [false; 3]);
        let bands: Vec<[f64; 2]> = (kpts.iter())
            .map(|k| {
                let c: f64 = k
                    .iter()
                    .map(|x| (2.0 * std::f64::consts::PI * x).cos())
                    .sum();
                [c, 4.0 + 0.5 * c]
            })
            .collect();
        // Two channels sharing each band by a k-dependent split.
        let proj: Vec<[[f64; 2]; 2]> = (kpts.iter())
            .map(|k| {
                let a = 0.5 + 0.4 * (2.0 * std::f64::consts::PI * k[0]).sin();
                [[a, 1.0 - a], [1.0 - a, a]]
            })
            .collect();
        let x: Vec<f64> = (0..60).map(|i| -3.0 + 0.13 * i as f64).collect();
        for how in [Interpolation::Linear, Interpolation::Optimised] {
            let (d, _) = dos(&tets, how, |p| &bands[p][..], 2.0, &x);
            let pd = projected_dos(
                &tets,
                how,
                |p| &bands[p][..],
                |p, b| &proj[p][b][..],
                2,
                2.0,
                &x,
            );
            for i in 0..x.len() {
                let sum = pd[0][i] + pd[1][i];
                assert!(
                    (sum - d[i]).abs() < 1e-10 * (1.0 + d[i]),
                    "{how:?} at {}: {sum} against {}",
                    x[i],
                    d[i]
                );
            }
        }
    }

    #[test]
    fn a_free_electron_band_gives_the_square_root_dos() {
        // A cubic zone of side 1 (recip = identity), e = |k|^2 folded into the zone.
        let grid = [24; 3];
        let tets = tetrahedra(grid, &[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(tets.len(), 6 * 24 * 24 * 24);
        let band: Vec<[f64; 1]> = crate::symmetry::monkhorst_pack(grid, [false; 3])
            .iter()
            .map(|k| [k.iter().map(|x| x * x).sum()])
            .collect();
        let x = [0.1, 0.15, 0.2];
        let (d, n) = dos(&tets, Interpolation::Linear, |p| &band[p][..], 1.0, &x);
        let (d_opt, n_opt) = dos(&tets, Interpolation::Optimised, |p| &band[p][..], 1.0, &x);
        for (i, e) in x.iter().enumerate() {
            // Inside the inscribed sphere: N = 4/3 pi e^(3/2), D = 2 pi e^(1/2).
            let (n_exact, d_exact) = (
                4.0 / 3.0 * std::f64::consts::PI * e.powf(1.5),
                2.0 * std::f64::consts::PI * e.sqrt(),
            );
            // Linear interpolation lies above a convex band: N is low by O(h^2 / e).
            assert!(
                (n[i] - n_exact).abs() < 0.015 * n_exact,
                "N({e}) {} against {n_exact}",
                n[i]
            );
            assert!(
                (d[i] - d_exact).abs() < 0.03 * d_exact,
                "D({e}) {} against {d_exact}",
                d[i]
            );
            // The fit is exact for a quadratic band: only the zone's folding limits it.
            assert!(
                (n_opt[i] - n_exact).abs() < 1e-3 * n_exact,
                "N({e}) {} against {n_exact}",
                n_opt[i]
            );
            assert!(
                (d_opt[i] - d_exact).abs() < 0.01 * d_exact,
                "D({e}) {} against {d_exact}",
                d_opt[i]
            );
        }
    }
}
