//! Helpers shared by the integration tests.

// Each test binary that includes this module uses some of its helpers.
#![allow(dead_code)]

use std::path::PathBuf;

/// The input of test case `case`: the cases made for the layout tests (Γ-point runs) sit in
/// `tests/data/layout/<case>.toml`, the others are the reference cases
/// `tests/data/qe/<case>/pw.in`.
pub fn case_input(case: &str) -> PathBuf {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let own = data.join(format!("layout/{case}.toml"));
    if own.exists() {
        own
    } else {
        data.join(format!("qe/{case}/pw.in"))
    }
}

/// The largest |a_i - b_i| of two equally long lists.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}
