//! Host references (rustfft) for the device code: a 3-D FFT and the local operator.
//!
//! Contract: the same layout and conventions as the device side and planewave-fft: C order,
//! axis 2 contiguous; [`HostFft3d::backward`] is `sum_G f(G) e^{+iG.r}`,
//! [`HostFft3d::forward_unnormalized`] is `sum_r f(r) e^{-iG.r}`. [`apply_local`] is
//! `out = kin psi + P (1/N) FFT_fwd(V FFT_bwd(scatter psi))`, band by band, as planewave-core's
//! `apply_local` does on the host. Written for clarity, not speed.

use crate::index_map::IndexMap;
use crate::C64;
use rustfft::{Fft, FftDirection, FftPlanner};
use std::sync::Arc;

/// Serial 3-D FFT from rustfft plans along each axis.
pub struct HostFft3d {
    dims: [usize; 3],
    fwd: [Arc<dyn Fft<f64>>; 3],
    inv: [Arc<dyn Fft<f64>>; 3],
}

impl HostFft3d {
    /// Plans for grid `dims`.
    pub fn new(dims: [usize; 3]) -> Self {
        let mut planner = FftPlanner::new();
        let fwd = [0, 1, 2].map(|a| planner.plan_fft(dims[a], FftDirection::Forward));
        let inv = [0, 1, 2].map(|a| planner.plan_fft(dims[a], FftDirection::Inverse));
        HostFft3d { dims, fwd, inv }
    }

    /// `f(r) = sum_G f(G) e^{+iG.r}` in place.
    pub fn backward(&self, data: &mut [C64]) {
        self.transform(data, &self.inv);
    }

    /// `sum_r f(r) e^{-iG.r}` in place (no `1/N`).
    pub fn forward_unnormalized(&self, data: &mut [C64]) {
        self.transform(data, &self.fwd);
    }

    fn transform(&self, data: &mut [C64], plans: &[Arc<dyn Fft<f64>>; 3]) {
        let [n0, n1, n2] = self.dims;
        assert_eq!(data.len(), n0 * n1 * n2, "host FFT: data length");
        plans[2].process(data);
        for plane in data.chunks_exact_mut(n1 * n2) {
            strided(plane, n1, n2, n2, &plans[1]);
        }
        strided(data, n0, n1 * n2, n1 * n2, &plans[0]);
    }
}

/// Transform, for each of `count` offsets, the `len` values at stride `stride` from it.
fn strided(data: &mut [C64], len: usize, count: usize, stride: usize, plan: &Arc<dyn Fft<f64>>) {
    let mut line = vec![C64::new(0.0, 0.0); len];
    for c in 0..count {
        for (i, v) in line.iter_mut().enumerate() {
            *v = data[c + i * stride];
        }
        plan.process(&mut line);
        for (i, v) in line.iter().enumerate() {
            data[c + i * stride] = *v;
        }
    }
}

/// `out[:, b] = kin psi[:, b] + P (1/N) FFT_fwd(V FFT_bwd(scatter psi[:, b]))` for each of the
/// `psi.len() / map.len()` bands (`psi` column-major, `map.len()` rows).
pub fn apply_local(map: &IndexMap, kin: &[f64], v: &[f64], psi: &[C64]) -> Vec<C64> {
    let (ng, n) = (map.len(), map.grid_len());
    assert_eq!(kin.len(), ng, "reference: kinetic length");
    assert_eq!(v.len(), n, "reference: potential length");
    let fft = HostFft3d::new(map.dims());
    let mut out = vec![C64::new(0.0, 0.0); psi.len()];
    let mut grid = vec![C64::new(0.0, 0.0); n];
    for (x, res) in psi
        .chunks_exact(ng.max(1))
        .zip(out.chunks_exact_mut(ng.max(1)))
    {
        grid.fill(C64::new(0.0, 0.0));
        for (&i, &c) in map.indices().iter().zip(x) {
            grid[i] = c;
        }
        fft.backward(&mut grid);
        for (g, &p) in grid.iter_mut().zip(v) {
            *g *= p;
        }
        fft.forward_unnormalized(&mut grid);
        for (((r, &i), &c), &t) in res.iter_mut().zip(map.indices()).zip(x).zip(kin) {
            *r = grid[i] / n as f64 + c * t;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index_map::grid_index;
    use std::f64::consts::PI;

    #[test]
    fn a_plane_wave_goes_to_its_miller_index() {
        let dims = [6, 5, 4];
        let fft = HostFft3d::new(dims);
        let m = [-2, 1, 3];
        let mut g = vec![C64::new(0.0, 0.0); 120];
        g[grid_index(dims, m)] = C64::new(1.0, 0.0);
        fft.backward(&mut g);
        // f(r) = e^{+i 2 pi sum_a m_a r_a / n_a}
        for (i, v) in g.iter().enumerate() {
            let r = [i / 20, (i / 4) % 5, i % 4];
            let ph: f64 = (0..3)
                .map(|a| m[a] as f64 * r[a] as f64 / dims[a] as f64)
                .sum();
            assert!((v - C64::from_polar(1.0, 2.0 * PI * ph)).norm() < 1e-12);
        }
        fft.forward_unnormalized(&mut g);
        for (i, v) in g.iter().enumerate() {
            let e = if i == grid_index(dims, m) { 120.0 } else { 0.0 };
            assert!((v - C64::new(e, 0.0)).norm() < 1e-10);
        }
    }

    #[test]
    fn constant_potential_is_a_diagonal_shift() {
        let map = IndexMap::from_millers([8, 9, 10], &crate::index_map::sphere_millers(5)).unwrap();
        let ng = map.len();
        let kin: Vec<f64> = (0..ng).map(|g| g as f64 * 0.1).collect();
        let v = vec![0.75; map.grid_len()];
        let psi = crate::testing::Lcg::new(1).complex(2 * ng);
        let out = apply_local(&map, &kin, &v, &psi);
        for (j, (o, p)) in out.iter().zip(&psi).enumerate() {
            assert!((o - p * (kin[j % ng] + 0.75)).norm() < 1e-13);
        }
    }
}
