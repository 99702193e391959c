//! Helpers shared by the integration tests.

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
