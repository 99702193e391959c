//! The local part of H on another device (a GPU): the [`LocalOperator`] of either band
//! representation built from a back end that only knows complex columns on a set of grid
//! points.
//!
//! Contract:
//! - A [`SphereLocal`] back end computes, for every complex column `x_j` given on the grid
//!   points `sphere` (flat C-order indices of a `dims` grid, planewave-fft's layout, distinct),
//!   `y_j = (1/N) P FFT_fwd(V FFT_bwd(P^T x_j))`: scatter, the backward transform
//!   `sum_G x(G) e^{iGr}`, the product with V(r), the unnormalised forward transform, gather and
//!   `1/N`. Nothing else: no kinetic energy.
//! - [`DeviceLocal`] is a [`LocalOperator`] for complex and for Γ-real bands. Complex bands go
//!   as they are, on the k-point's sphere. Γ-real bands go two per complex column on the whole
//!   sphere (`psi_a + i psi_b` at G, its conjugate at -G; G = 0 once), and come back separated,
//!   as the CPU's path does on its grids. The Fourier-diagonal part `D psi` is added on the
//!   host. The result equals [`crate::operators::FftLocal`]'s to rounding.
//! - Only k-points whose plane waves are all on this rank are supported (no G-vector group):
//!   the caller refuses that layout before the run.
//! - The bands travel to the back end and back at every application (the data are not yet
//!   resident on the device). A back end error stops the run with its message.

use crate::bands::{column, place_pair, separate_pair, BandScalar};
use crate::basis::Kpoint;
use crate::operators::LocalOperator;
use num_complex::Complex64;
use planewave_linalg::{MatMut, MatRef};
use rayon::prelude::*;
use std::sync::Arc;

/// A device that applies a real-space potential to complex columns on a set of grid points.
pub trait SphereLocal: Send + Sync {
    /// What the device is, for the log and the results (e.g. "GPU 0: NVIDIA H100 80GB HBM3").
    fn describe(&self) -> String;

    /// `out_j = (1/N) P FFT_fwd(V FFT_bwd(P^T psi_j))` for the columns of `psi`
    /// (`sphere.len()` rows each, column-major, as many columns as fit), with `potential` = V
    /// on the whole `dims` grid (C order) and P the map of `sphere` into the grid.
    fn apply(
        &self,
        dims: [usize; 3],
        sphere: &[usize],
        potential: &[f64],
        psi: &[Complex64],
        out: &mut [Complex64],
    ) -> Result<(), String>;

    /// The device's free memory (bytes) now, where it has its own (None: it shares the
    /// host's).
    fn free_bytes(&self) -> Option<usize> {
        None
    }
}

/// The local part of H through a [`SphereLocal`] device.
#[derive(Clone)]
pub struct DeviceLocal(Arc<dyn SphereLocal>);

impl std::fmt::Debug for DeviceLocal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DeviceLocal")
            .field(&self.0.describe())
            .finish()
    }
}

impl DeviceLocal {
    /// The local operator of `device`.
    pub fn new(device: Arc<dyn SphereLocal>) -> Self {
        Self(device)
    }

    /// The device's description.
    pub fn describe(&self) -> String {
        self.0.describe()
    }

    /// The device's free memory (bytes), where it has its own.
    pub fn free_bytes(&self) -> Option<usize> {
        self.0.free_bytes()
    }

    /// Run the device on `psi` (column-major, `sphere.len()` rows); stop with its message on
    /// failure.
    fn device_apply(
        &self,
        kpt: &Kpoint,
        sphere: &[usize],
        v: &[f64],
        psi: &[Complex64],
    ) -> Vec<Complex64> {
        let mut out = vec![Complex64::new(0.0, 0.0); psi.len()];
        let dims = kpt.map.grid().dims;
        if let Err(e) = self.0.apply(dims, sphere, v, psi, &mut out) {
            panic!("{}: the local part of H failed: {e}", self.0.describe());
        }
        out
    }
}

/// The device's reach: every plane wave of the k-point on this rank.
fn check_local(kpt: &Kpoint) {
    assert!(
        kpt.dist.is_none(),
        "the device's local operator needs every plane wave of a k-point on one rank \
         (no G-vector group)"
    );
}

impl LocalOperator<Complex64> for DeviceLocal {
    fn apply(
        &self,
        kpt: &Kpoint,
        diagonal: &[f64],
        potential: &[f64],
        psi: MatRef<'_, Complex64>,
        mut out: MatMut<'_, Complex64>,
    ) {
        check_local(kpt);
        let (ng, nb) = (psi.nrows(), psi.ncols());
        let mut x = Vec::with_capacity(ng * nb);
        for j in 0..nb {
            x.extend_from_slice(column(psi, j));
        }
        let y = self.device_apply(kpt, kpt.map.indices(), potential, &x);
        for (j, (yj, xj)) in y.chunks(ng.max(1)).zip(x.chunks(ng.max(1))).enumerate() {
            let res = crate::bands::col_mut(out.as_mut().subcols_mut(j, 1));
            for (((r, &v), &c), t) in res.iter_mut().zip(yj).zip(xj).zip(diagonal) {
                *r = v + c * t;
            }
        }
    }
}

/// The (G, -G) positions of half-sphere entry `h` in the whole-sphere columns of Γ-real pairs:
/// the half sphere first (G = 0 at 0), then the mirrors of entries 1.. .
fn pair_slots(nh: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..nh).map(move |h| if h == 0 { (0, 0) } else { (h, nh - 1 + h) })
}

impl LocalOperator<f64> for DeviceLocal {
    fn apply(
        &self,
        kpt: &Kpoint,
        diagonal: &[f64],
        potential: &[f64],
        psi: MatRef<'_, f64>,
        out: MatMut<'_, f64>,
    ) {
        check_local(kpt);
        let neg = kpt.map_neg.as_ref().expect("Γ-real k-point");
        let (nh, nb) = (kpt.npw(), psi.ncols());
        let sphere: Vec<usize> = (kpt.map.indices().iter())
            .chain(&neg.indices()[1.min(nh)..])
            .copied()
            .collect();
        let ns = sphere.len().max(1);
        let mut x = vec![Complex64::new(0.0, 0.0); ns * nb.div_ceil(2)];
        x.par_chunks_mut(ns).enumerate().for_each(|(p, col)| {
            let b = (2 * p + 1 < nb).then(|| column(psi, 2 * p + 1));
            place_pair(column(psi, 2 * p), b, true, pair_slots(nh), col);
        });
        let y = self.device_apply(kpt, &sphere, potential, &x);
        out.par_col_chunks_mut(2)
            .zip(y.par_chunks(ns))
            .enumerate()
            .for_each(|(p, (pair, f))| {
                let (ca, cb) = pair.split_at_col_mut(1);
                let ra = crate::bands::col_mut(ca);
                let mut rb = (cb.ncols() == 1).then(|| crate::bands::col_mut(cb));
                separate_pair(f, 1.0, true, pair_slots(nh), ra, rb.as_deref_mut());
                let a = column(psi, 2 * p);
                for ((r, x), t) in ra.iter_mut().zip(a).zip(diagonal) {
                    *r += x * t;
                }
                if let Some(rb) = rb {
                    let b = column(psi, 2 * p + 1);
                    for ((r, x), t) in rb.iter_mut().zip(b).zip(diagonal) {
                        *r += x * t;
                    }
                }
            });
    }
}

/// `d` as the local operator of bands of type `T` (both representations are served).
pub fn as_local<T: BandScalar>(d: &DeviceLocal) -> &dyn LocalOperator<T> {
    T::device_local(d)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hamiltonian::KHamiltonian;
    use crate::operators::FftLocal;
    use crate::terms::{local::LocalPotential, nonlocal::KProjectors};
    use planewave_fft::{Fft3d, FftGrid};
    use planewave_linalg::Mat;

    /// The host as a [`SphereLocal`] device: whole-grid transforms, no sticks.
    struct HostSphere;

    impl SphereLocal for HostSphere {
        fn describe(&self) -> String {
            "host sphere device".into()
        }
        fn apply(
            &self,
            dims: [usize; 3],
            sphere: &[usize],
            v: &[f64],
            psi: &[Complex64],
            out: &mut [Complex64],
        ) -> Result<(), String> {
            let fft = Fft3d::new(FftGrid { dims });
            let n = dims.iter().product();
            for (x, y) in psi.chunks(sphere.len()).zip(out.chunks_mut(sphere.len())) {
                let mut grid = vec![Complex64::new(0.0, 0.0); n];
                for (&i, &c) in sphere.iter().zip(x) {
                    grid[i] = c;
                }
                fft.backward(&mut grid);
                for (g, v) in grid.iter_mut().zip(v) {
                    *g *= v;
                }
                fft.forward(&mut grid);
                for (&i, r) in sphere.iter().zip(y.iter_mut()) {
                    *r = grid[i];
                }
            }
            Ok(())
        }
    }

    /// H psi through `device` equals H psi on the CPU's path (to 1e-12), for `nb` bands of
    /// `T` on examples/si.toml at its last k-point, or at Γ (Γ-real bands) when `gamma`.
    pub(crate) fn same_as_cpu<T: BandScalar>(device: &DeviceLocal, gamma: bool, nb: usize) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/si.toml");
        let mut spec = crate::input::load(std::path::Path::new(path)).unwrap();
        if gamma {
            spec.kpoints = crate::input::Kpoints::Gamma;
        }
        let s = crate::setup::build(spec).unwrap();
        let (basis, kpt) = (&s.basis, &s.basis.kpoints[s.basis.kpoints.len() - 1]);
        assert_eq!(kpt.is_gamma_real(), gamma);
        let v = LocalPotential::new(&s.model, basis).values_r;
        let p = KProjectors::<T>::new(&s.model, kpt, basis.volume);
        let bands: Vec<usize> = (0..nb).collect();
        let psi = T::random(kpt, &bands, 11);
        let cpu = KHamiltonian::new(kpt, basis.band_fft(), &v, &p)
            .with_local(&FftLocal(basis.band_fft()))
            .apply_new(psi.as_ref());
        let h = KHamiltonian::new(kpt, basis.band_fft(), &v, &p).with_local(as_local::<T>(device));
        let moved: Mat<T> = h.apply_new(psi.as_ref());
        let mut worst = 0.0f64;
        for j in 0..nb {
            for i in 0..psi.nrows() {
                worst = worst.max((moved[(i, j)] - cpu[(i, j)]).abs2().sqrt());
            }
        }
        assert!(worst < 1e-12, "gamma {gamma}, {nb} bands: {worst:e}");
    }

    #[test]
    fn complex_bands_through_a_sphere_device_match_the_cpu() {
        same_as_cpu::<Complex64>(&DeviceLocal::new(Arc::new(HostSphere)), false, 5);
    }

    #[test]
    fn gamma_real_pairs_through_a_sphere_device_match_the_cpu() {
        // An odd count: the last band goes alone.
        let host = DeviceLocal::new(Arc::new(HostSphere));
        same_as_cpu::<f64>(&host, true, 5);
        same_as_cpu::<f64>(&host, true, 4);
    }
}
