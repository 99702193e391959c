//! The Kohn–Sham Hamiltonian of one k-point and spin, applied to blocks of bands, assembled
//! from the terms' operators ([`crate::operators`]).
//!
//! `H psi = D psi + FFT^-1[ V(r) FFT[psi] ] + sum_low-rank L psi + sum_projector P psi`, where
//! D is the sum of the Fourier-diagonal operators (the kinetic energy) and V of the real-space
//! ones (V_loc + V_H + V_xc of the spin channel): one FFT round trip per band for all of them.
//! Bands of a block go through the grid in parallel (rayon, see [`crate::bands::BandScalar`]);
//! projector and low-rank operators are GEMMs on the whole block.

use crate::bands::BandScalar;
use crate::basis::Kpoint;
use crate::operators::{FftLocal, LocalOperator, LowRankOperator, Operator, ProjectorOperator};
use crate::overlap::OverlapOperator;
use crate::terms::nonlocal::KProjectors;
use planewave_fft::Fft3d;
use planewave_linalg::{Mat, MatMut, MatRef};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Seconds spent applying each kind of operator (since the Hamiltonian was assembled).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ApplyTimes {
    /// Fourier-diagonal plus real-space part (the FFT round trips).
    pub local: f64,
    /// Projector operators.
    pub projectors: f64,
    /// Low-rank operators (exact exchange).
    pub low_rank: f64,
    /// The eigensolver's small dense problems (subspace eigenproblems and Cholesky
    /// factorisations, with their broadcasts), timed through [`KHamiltonian::time_subspace`].
    pub subspace: f64,
}

/// Nanoseconds per operator kind, added to from `&self` (the eigensolver holds H shared).
#[derive(Default)]
struct ApplyClock([AtomicU64; 4]);

impl ApplyClock {
    fn add(&self, kind: usize, since: Instant) {
        self.0[kind].fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    fn read(&self) -> ApplyTimes {
        let s = |k: usize| self.0[k].load(Ordering::Relaxed) as f64 * 1e-9;
        ApplyTimes {
            local: s(0),
            projectors: s(1),
            low_rank: s(2),
            subspace: s(3),
        }
    }
}

/// H at one k-point for one spin channel.
pub struct KHamiltonian<'a, T: BandScalar> {
    /// The k-point's plane waves.
    pub kpt: &'a Kpoint,
    /// The grid transforms.
    pub fft: &'a Fft3d,
    /// The local part's implementation when not the CPU's ([`FftLocal`] on `fft`).
    local: Option<&'a dyn LocalOperator<T>>,
    /// The Fourier-diagonal operators' sum, per band-vector component (Ha).
    diagonal: Cow<'a, [f64]>,
    /// The real-space operators' sum at this rank's grid points (Ha; empty: none).
    potential: Cow<'a, [f64]>,
    /// The projector operators.
    projectors: Vec<&'a dyn ProjectorOperator<T>>,
    /// The low-rank operators.
    low_rank: Vec<&'a dyn LowRankOperator<T>>,
    /// The overlap S of a generalised eigenproblem (ultrasoft pseudopotentials).
    overlap: Option<&'a dyn OverlapOperator<T>>,
    /// Time spent in each kind of operator.
    clock: ApplyClock,
}

/// `sum` plus `x`, borrowing `x` while it is the only one.
fn add_into<'a>(sum: &mut Option<Cow<'a, [f64]>>, x: &'a [f64]) {
    match sum {
        None => *sum = Some(Cow::Borrowed(x)),
        Some(s) => {
            for (a, b) in s.to_mut().iter_mut().zip(x) {
                *a += b;
            }
        }
    }
}

impl<'a, T: BandScalar> KHamiltonian<'a, T> {
    /// H as the sum of `operators` at k-point `kpt`.
    pub fn assemble(
        kpt: &'a Kpoint,
        fft: &'a Fft3d,
        operators: impl IntoIterator<Item = Operator<'a, T>>,
    ) -> Self {
        let (mut diagonal, mut potential) = (None, None);
        let (mut projectors, mut low_rank, mut overlap) = (Vec::new(), Vec::new(), None);
        for op in operators {
            match op {
                Operator::FourierDiagonal(d) => add_into(&mut diagonal, d),
                Operator::RealSpace(v) => add_into(&mut potential, v),
                Operator::Projector(p) => projectors.push(p),
                Operator::LowRank(l) => low_rank.push(l),
                Operator::Overlap(s) => {
                    assert!(overlap.is_none(), "one overlap operator per block");
                    overlap = Some(s);
                }
            }
        }
        // Serial transforms: the k-point's maps, the transforms and the potential are on one
        // grid (the bands' own, `Basis::band_fft`); a mismatch would place coefficients wrongly.
        if kpt.dist.is_none() {
            assert_eq!(
                fft.grid(),
                kpt.map.grid(),
                "the k-point's maps are on another grid"
            );
            let v = potential.as_ref().map_or(fft.grid().len(), |v| v.len());
            assert_eq!(
                v,
                fft.grid().len(),
                "the local potential is on another grid"
            );
        }
        Self {
            kpt,
            fft,
            local: None,
            diagonal: diagonal.unwrap_or_else(|| vec![0.0; kpt.dim()].into()),
            potential: potential.unwrap_or_default(),
            projectors,
            low_rank,
            overlap,
            clock: ApplyClock::default(),
        }
    }

    /// This H with its local part applied by `local` (a device back end's) instead of the
    /// CPU's batched FFTs.
    pub fn with_local(mut self, local: &'a dyn LocalOperator<T>) -> Self {
        self.local = Some(local);
        self
    }

    /// Seconds spent in [`apply`](Self::apply) so far, per kind of operator, and in
    /// [`time_subspace`](Self::time_subspace).
    pub fn apply_times(&self) -> ApplyTimes {
        self.clock.read()
    }

    /// `f()`, its time added to [`ApplyTimes::subspace`].
    pub fn time_subspace<R>(&self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.clock.add(3, t);
        r
    }

    /// The semilocal H: kinetic energy, the local potential `veff` and the projectors `proj`.
    pub fn new(kpt: &'a Kpoint, fft: &'a Fft3d, veff: &'a [f64], proj: &'a KProjectors<T>) -> Self {
        Self::assemble(
            kpt,
            fft,
            [
                Operator::FourierDiagonal(&kpt.kinetic),
                Operator::RealSpace(veff),
                Operator::Projector(proj),
            ],
        )
    }

    /// The overlap S of the block's generalised eigenproblem, if any (ultrasoft
    /// pseudopotentials).
    pub fn overlap(&self) -> Option<&'a dyn OverlapOperator<T>> {
        self.overlap
    }

    /// `out = S^{-1/2} H S^{-1/2} x` (H x without an overlap): the standard problem the
    /// eigensolvers see ([`crate::overlap`]). Collective on the G-vector group.
    pub fn apply_orthonormal(&self, x: MatRef<'_, T>, mut out: MatMut<'_, T>) {
        let Some(s) = self.overlap else {
            return self.apply(x, out);
        };
        let t = Instant::now();
        let y = s.root(true, x);
        self.clock.add(1, t);
        self.apply(y.as_ref(), out.as_mut());
        let t = Instant::now();
        let z = out.to_owned();
        s.root_add(true, z.as_ref(), out);
        self.clock.add(1, t);
    }

    /// Length of a band vector.
    pub fn dim(&self) -> usize {
        self.kpt.dim()
    }

    /// `f(self)` with every projector operator made ready for many applications
    /// ([`ProjectorOperator::prepared`]): for an eigensolver's run on this block.
    pub fn prepared<R>(&self, f: impl FnOnce(&Self) -> R) -> R {
        fn nest<T: BandScalar>(ops: &[&dyn ProjectorOperator<T>], f: &mut dyn FnMut()) {
            match ops.split_first() {
                None => f(),
                Some((op, rest)) => op.prepared(&mut || nest(rest, &mut *f)),
            }
        }
        let (mut f, mut out) = (Some(f), None);
        nest(&self.projectors, &mut || {
            out = f.take().map(|f| f(self));
        });
        out.expect("prepared runs its closure once")
    }

    /// `out = H psi` for the block `psi` (dim x nb, column per band).
    pub fn apply(&self, psi: MatRef<'_, T>, mut out: MatMut<'_, T>) {
        let t = Instant::now();
        if self.potential.is_empty() {
            for j in 0..psi.ncols() {
                for (i, d) in self.diagonal.iter().enumerate() {
                    out[(i, j)] = psi[(i, j)].scale(*d);
                }
            }
        } else {
            let cpu = FftLocal(self.fft);
            let local = self.local.unwrap_or(&cpu);
            local.apply(self.kpt, &self.diagonal, &self.potential, psi, out.as_mut());
        }
        self.clock.add(0, t);
        let t = Instant::now();
        for l in &self.low_rank {
            l.apply_add(self.kpt, psi, out.as_mut());
        }
        self.clock.add(2, t);
        let t = Instant::now();
        for p in &self.projectors {
            p.apply_add(psi, out.as_mut());
        }
        self.clock.add(1, t);
    }

    /// The diagonal of H approximated for preconditioning: the Fourier-diagonal part plus the
    /// average of the real-space potential (over the whole grid, summed over the G-vector group
    /// when the grid is dealt). Collective over the G-vector group.
    pub fn diagonal(&self) -> Vec<f64> {
        let mut sums = [
            self.potential.iter().sum::<f64>(),
            self.potential.len() as f64,
        ];
        self.kpt.sum_over_g(&mut sums);
        let v_avg = if sums[1] > 0.0 {
            sums[0] / sums[1]
        } else {
            0.0
        };
        self.diagonal.iter().map(|t| t + v_avg).collect()
    }

    /// `H psi` as a new matrix.
    pub fn apply_new(&self, psi: MatRef<'_, T>) -> Mat<T> {
        let mut out = Mat::<T>::zeros(psi.nrows(), psi.ncols());
        self.apply(psi, out.as_mut());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::{local::LocalPotential, nonlocal::KProjectors};
    use num_complex::Complex64;

    /// The CPU's local part plus `c psi`: what another back end looks like to H.
    struct Shifted<'a> {
        cpu: FftLocal<'a>,
        c: f64,
    }

    impl LocalOperator<Complex64> for Shifted<'_> {
        fn apply(
            &self,
            kpt: &Kpoint,
            diagonal: &[f64],
            potential: &[f64],
            psi: MatRef<'_, Complex64>,
            mut out: MatMut<'_, Complex64>,
        ) {
            self.cpu.apply(kpt, diagonal, potential, psi, out.as_mut());
            for j in 0..psi.ncols() {
                for i in 0..psi.nrows() {
                    out[(i, j)] += psi[(i, j)] * self.c;
                }
            }
        }
    }

    #[test]
    fn the_local_part_goes_through_the_operator_given() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/si.toml");
        let s =
            crate::setup::build(crate::input::load(std::path::Path::new(path)).unwrap()).unwrap();
        let (basis, kpt) = (&s.basis, &s.basis.kpoints[0]);
        let v = LocalPotential::new(&s.model, basis).values_r;
        let p = KProjectors::<Complex64>::new(&s.model, kpt, basis.volume);
        let psi = Complex64::random(kpt, &[0, 1, 2, 3], 7);
        let plain = KHamiltonian::new(kpt, basis.band_fft(), &v, &p).apply_new(psi.as_ref());
        let shifted = Shifted {
            cpu: FftLocal(basis.band_fft()),
            c: 0.25,
        };
        let h = KHamiltonian::new(kpt, basis.band_fft(), &v, &p).with_local(&shifted);
        let moved = h.apply_new(psi.as_ref());
        for j in 0..psi.ncols() {
            for i in 0..psi.nrows() {
                let d = moved[(i, j)] - plain[(i, j)] - psi[(i, j)] * 0.25;
                assert!(d.norm() < 1e-12, "({i}, {j}): {d}");
            }
        }
        assert!(h.apply_times().local > 0.0);
    }
}
