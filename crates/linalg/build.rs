//! Links ScaLAPACK when the `scalapack` feature is on; does nothing otherwise (the default
//! build needs no system library).
//!
//! The library name defaults to Debian's `scalapack-openmpi`
//! (`/usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so`, package `libscalapack-openmpi-dev`);
//! set `PLANEWAVE_SCALAPACK_LIB` to another name (e.g. `scalapack`) and
//! `PLANEWAVE_SCALAPACK_DIR` to a directory to search for other installations.

fn main() {
    println!("cargo:rerun-if-env-changed=PLANEWAVE_SCALAPACK_LIB");
    println!("cargo:rerun-if-env-changed=PLANEWAVE_SCALAPACK_DIR");
    if std::env::var_os("CARGO_FEATURE_SCALAPACK").is_none() {
        return;
    }
    if let Ok(dir) = std::env::var("PLANEWAVE_SCALAPACK_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    let lib =
        std::env::var("PLANEWAVE_SCALAPACK_LIB").unwrap_or_else(|_| "scalapack-openmpi".into());
    println!("cargo:rustc-link-lib=dylib={lib}");
}
