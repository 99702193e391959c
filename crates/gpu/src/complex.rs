//! The device element type of complex buffers and its conversions to and from [`C64`].
//!
//! Contract: every complex device buffer of the crate is a `CudaSlice<Z>` with `Z` cuFFT's
//! `double2` (`#[repr(C, align(16))] { x: re, y: im }`), the layout of CUDA's
//! `cuDoubleComplex`; cuBLAS and cuSOLVER get the same pointer cast to their own `double2`,
//! which is declared with the same fields, `repr(C)` and alignment.

use crate::C64;

/// Complex double on the device (`x` real part, `y` imaginary part).
pub(crate) type Z = cudarc::cufft::sys::double2;

/// Host values in device layout.
pub(crate) fn to_device_layout(v: &[C64]) -> Vec<Z> {
    v.iter().map(|c| Z { x: c.re, y: c.im }).collect()
}

/// Device-layout values back as [`C64`].
pub(crate) fn from_device_layout(v: &[Z]) -> Vec<C64> {
    v.iter().map(|z| C64::new(z.x, z.y)).collect()
}

/// The three `double2` types of cudarc (cuFFT's, cuBLAS's, cuSOLVER's) have one layout: the
/// pointer casts between them rely on it.
const _: () = {
    use std::mem::{align_of, size_of};
    assert!(size_of::<Z>() == 16 && align_of::<Z>() == 16);
    assert!(size_of::<cudarc::cublas::sys::double2>() == 16);
    assert!(align_of::<cudarc::cublas::sys::double2>() == 16);
    assert!(size_of::<cudarc::cusolver::sys::double2>() == 16);
    assert!(align_of::<cudarc::cusolver::sys::double2>() == 16);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_real_and_imaginary_parts() {
        let v = vec![C64::new(1.5, -2.0), C64::new(0.0, 3.25)];
        let d = to_device_layout(&v);
        assert_eq!((d[0].x, d[0].y), (1.5, -2.0));
        assert_eq!(from_device_layout(&d), v);
    }
}
