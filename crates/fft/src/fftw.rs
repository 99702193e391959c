//! Minimal bindings to the system FFTW 3 (double precision), for benchmark comparisons only
//! (cargo feature `fftw`; Debian: `libfftw3-dev`).
//!
//! Contract: [`FftwC2c`] and [`FftwR2c`] own their arrays and a plan made for exactly those
//! arrays (`FFTW_MEASURE`, one thread, in place for c2c, out of place for r2c/c2r), so
//! executing can never touch other memory. Planning and destroying plans go through one
//! process-wide lock (the FFTW planner is not thread safe); executing is thread safe. The
//! transforms are unnormalised, with FFTW's sign conventions. This is the only `unsafe` code
//! of the crate; the `fftw` crate from crates.io was not used because it builds FFTW from a
//! downloaded source tarball by default and pulls an older ndarray.

use crate::C64;
use std::os::raw::{c_int, c_uint};
use std::sync::Mutex;

/// Opaque `fftw_plan_s`.
#[repr(C)]
struct PlanS {
    _private: [u8; 0],
}

const FFTW_FORWARD: c_int = -1;
const FFTW_BACKWARD: c_int = 1;
const FFTW_MEASURE: c_uint = 0;

#[link(name = "fftw3")]
extern "C" {
    fn fftw_plan_dft_3d(
        n0: c_int,
        n1: c_int,
        n2: c_int,
        input: *mut C64,
        output: *mut C64,
        sign: c_int,
        flags: c_uint,
    ) -> *mut PlanS;
    fn fftw_plan_dft_r2c_3d(
        n0: c_int,
        n1: c_int,
        n2: c_int,
        input: *mut f64,
        output: *mut C64,
        flags: c_uint,
    ) -> *mut PlanS;
    fn fftw_plan_dft_c2r_3d(
        n0: c_int,
        n1: c_int,
        n2: c_int,
        input: *mut C64,
        output: *mut f64,
        flags: c_uint,
    ) -> *mut PlanS;
    fn fftw_execute(plan: *const PlanS);
    fn fftw_destroy_plan(plan: *mut PlanS);
}

/// Serialises the FFTW planner (plan creation and destruction are not thread safe).
static PLANNER: Mutex<()> = Mutex::new(());

fn dims_c(dims: [usize; 3]) -> [c_int; 3] {
    dims.map(|n| c_int::try_from(n).expect("FFTW: grid side too large"))
}

/// An owned FFTW plan.
struct Plan(*mut PlanS);

impl Plan {
    fn new(make: impl FnOnce() -> *mut PlanS) -> Self {
        let _g = PLANNER.lock().unwrap_or_else(|p| p.into_inner());
        let p = make();
        assert!(!p.is_null(), "FFTW could not make a plan");
        Plan(p)
    }
    fn execute(&self) {
        // SAFETY: `self.0` is a valid plan (non-null, not yet destroyed: only `Drop` destroys
        // it). Its arrays are owned by the struct that owns this plan and are alive, unmoved
        // (heap buffers that are never reallocated) and not borrowed elsewhere, because every
        // caller holds `&mut` to that struct. `fftw_execute` is thread safe.
        unsafe { fftw_execute(self.0) }
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        let _g = PLANNER.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `self.0` came from an FFTW planner, is non-null and is destroyed exactly once
        // (here); the planner lock is held.
        unsafe { fftw_destroy_plan(self.0) }
    }
}

/// In-place complex 3-D transforms of one grid (both directions).
pub struct FftwC2c {
    data: Vec<C64>,
    fwd: Plan,
    inv: Plan,
}

impl FftwC2c {
    /// Plan both directions for `dims` (`FFTW_MEASURE`: takes a while, overwrites the data).
    pub fn new(dims: [usize; 3]) -> Self {
        let [n0, n1, n2] = dims_c(dims);
        let mut data = vec![C64::new(0.0, 0.0); dims.iter().product()];
        let ptr = data.as_mut_ptr();
        // SAFETY: `ptr` points to `n0 * n1 * n2` initialised `Complex64` values, which have the
        // layout of `fftw_complex` (`#[repr(C)]` pair of f64); input and output alias, which
        // FFTW allows (in place). The planner lock is held inside `Plan::new`.
        let fwd = Plan::new(|| unsafe {
            fftw_plan_dft_3d(n0, n1, n2, ptr, ptr, FFTW_FORWARD, FFTW_MEASURE)
        });
        // SAFETY: as above.
        let inv = Plan::new(|| unsafe {
            fftw_plan_dft_3d(n0, n1, n2, ptr, ptr, FFTW_BACKWARD, FFTW_MEASURE)
        });
        Self { data, fwd, inv }
    }
    /// The array the plans work on (C order).
    pub fn data_mut(&mut self) -> &mut [C64] {
        &mut self.data
    }
    /// Unnormalised forward transform (`e^{-iG.r}`) in place.
    pub fn forward(&mut self) {
        self.fwd.execute()
    }
    /// Unnormalised backward transform (`e^{+iG.r}`) in place.
    pub fn backward(&mut self) {
        self.inv.execute()
    }
}

/// Real-to-complex and complex-to-real 3-D transforms of one grid (half spectrum
/// `[n0, n1, n2/2 + 1]`, the layout of [`RealFft3d`](crate::RealFft3d)).
pub struct FftwR2c {
    real: Vec<f64>,
    half: Vec<C64>,
    fwd: Plan,
    inv: Plan,
}

impl FftwR2c {
    /// Plan both directions for `dims`.
    pub fn new(dims: [usize; 3]) -> Self {
        let [n0, n1, n2] = dims_c(dims);
        let mut real = vec![0.0; dims.iter().product()];
        let mut half = vec![C64::new(0.0, 0.0); dims[0] * dims[1] * (dims[2] / 2 + 1)];
        let (rp, hp) = (real.as_mut_ptr(), half.as_mut_ptr());
        // SAFETY: `rp` holds `n0 n1 n2` doubles and `hp` `n0 n1 (n2/2+1)` complex values, the
        // sizes FFTW's r2c/c2r expect; the buffers do not overlap. Lock held in `Plan::new`.
        let fwd = Plan::new(|| unsafe { fftw_plan_dft_r2c_3d(n0, n1, n2, rp, hp, FFTW_MEASURE) });
        // SAFETY: as above.
        let inv = Plan::new(|| unsafe { fftw_plan_dft_c2r_3d(n0, n1, n2, hp, rp, FFTW_MEASURE) });
        Self {
            real,
            half,
            fwd,
            inv,
        }
    }
    /// The real field.
    pub fn real_mut(&mut self) -> &mut [f64] {
        &mut self.real
    }
    /// The half spectrum.
    pub fn half_mut(&mut self) -> &mut [C64] {
        &mut self.half
    }
    /// Unnormalised real → half spectrum.
    pub fn forward(&mut self) {
        self.fwd.execute()
    }
    /// Unnormalised half spectrum → real (destroys the half spectrum, as FFTW's c2r does).
    pub fn backward(&mut self) {
        self.inv.execute()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fft3d, FftGrid, RealFft3d};

    #[test]
    fn fftw_agrees_with_ours() {
        let dims = [6, 5, 8];
        let n: usize = dims.iter().product();
        let x: Vec<C64> = (0..n)
            .map(|i| C64::new((i as f64 * 0.3).sin(), (i as f64 * 0.7).cos()))
            .collect();
        let mut f = FftwC2c::new(dims);
        f.data_mut().copy_from_slice(&x);
        f.backward();
        let mut ours = x.clone();
        Fft3d::new(FftGrid { dims }).backward(&mut ours);
        for (a, b) in f.data_mut().iter().zip(&ours) {
            assert!((a - b).norm() < 1e-12);
        }
        let mut r = FftwR2c::new(dims);
        let re: Vec<f64> = x.iter().map(|z| z.re).collect();
        r.real_mut().copy_from_slice(&re);
        r.forward();
        let rf = RealFft3d::new(FftGrid { dims });
        let mut half = vec![C64::new(0.0, 0.0); rf.half_len()];
        rf.forward_unnormalized(&re, &mut half);
        for (a, b) in r.half_mut().iter().zip(&half) {
            assert!((a - b).norm() < 1e-12);
        }
    }
}
