//! Adaptively compressed exchange (Lin, J. Chem. Theory Comput. 12, 2242 (2016)): the
//! exchange operator of a set of orbitals as one low-rank block, exact on those orbitals.
//!
//! Contract: from bands `Psi` and `W = V_x Psi`, with `M = Psi^H W` (negative definite) and
//! `-M = L L^H`, `xi = W L^{-H}`; the operator is `-xi xi^H`, so `-xi xi^H Psi = W`. Rows are
//! this rank's plane waves; sums over rows are completed over the G-vector group, so every
//! rank holds the same small matrices.

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::gvectors::sum_matrix;
use planewave_linalg::{cholesky, gemm, overlap, trsm_right, Mat, MatMut, MatRef};

/// The compressed operator `-xi xi^H` of one (spin, k) block.
pub struct Ace<T: BandScalar> {
    xi: Mat<T>,
}

impl<T: BandScalar> Ace<T> {
    /// The operator that equals `W = V_x Psi` on `Psi`. Collective on the G-vector group.
    pub fn new(kpt: &Kpoint, psi: MatRef<'_, T>, w: Mat<T>) -> Result<Self, String> {
        let m = sum_matrix(overlap(psi, w.as_ref()), |f| kpt.sum_over_g(f));
        let minus = Mat::from_fn(m.nrows(), m.ncols(), |i, j| -m[(i, j)]);
        let l = cholesky(minus.as_ref()).map_err(|e| {
            format!("exact exchange: the exchange matrix of the bands is not negative definite ({e:?}); the bands may be linearly dependent")
        })?;
        let mut xi = w;
        trsm_right(xi.as_mut(), l.as_ref(), true);
        Ok(Self { xi })
    }

    /// `xi^H psi`, summed over the G-vector group. Collective.
    fn project(&self, kpt: &Kpoint, psi: MatRef<'_, T>) -> Mat<T> {
        sum_matrix(overlap(self.xi.as_ref(), psi), |f| kpt.sum_over_g(f))
    }

    /// `out += -xi xi^H psi`. Collective on the G-vector group.
    pub fn apply_add(&self, kpt: &Kpoint, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        let c = self.project(kpt, psi);
        let minus_c = Mat::from_fn(c.nrows(), c.ncols(), |i, j| -c[(i, j)]);
        gemm(out, true, self.xi.as_ref(), false, minus_c.as_ref(), false);
    }

    /// `<psi_n| -xi xi^H |psi_n>` for every band of the block. Collective.
    pub fn band_energies(&self, kpt: &Kpoint, psi: MatRef<'_, T>) -> Vec<f64> {
        let c = self.project(kpt, psi);
        (0..c.ncols())
            .map(|n| -(0..c.nrows()).map(|i| c[(i, n)].abs2()).sum::<f64>())
            .collect()
    }
}

/// The compressed operators of every (spin, k) block this rank computes (None elsewhere),
/// with the Fock energy of the bands they were built from.
pub struct Operators<T: BandScalar> {
    /// Per spin channel and k-point.
    pub blocks: Vec<Vec<Option<Ace<T>>>>,
    /// `F0 = (1/2) sum w <phi|V_x|phi>` of the bands `phi` they were built from (Ha; exact,
    /// since the operator is exact on them).
    pub own_fock_energy: f64,
}

impl<T: BandScalar> Operators<T> {
    /// The exchange energy an inner SCF loop uses for bands `psi` whose energy with the
    /// operator is `f1 = (1/2) sum w <psi|V|psi>`: `2 f1 - F0`. The Hamiltonian holds `V` fixed,
    /// so this (unlike `f1`) is the functional it minimises: first-order changes of the
    /// bands change it only at second order, and it equals `F0` on the operator's own bands.
    pub fn inner_energy(&self, f1: f64) -> f64 {
        2.0 * f1 - self.own_fock_energy
    }
}

impl<T: BandScalar> crate::operators::LowRankOperator<T> for Ace<T> {
    fn apply_add(&self, kpt: &Kpoint, psi: MatRef<'_, T>, out: MatMut<'_, T>) {
        Ace::apply_add(self, kpt, psi, out)
    }
}
