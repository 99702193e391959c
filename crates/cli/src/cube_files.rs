//! The density files of `[properties] cube = true`: `<stem>.density.cube` (the valence
//! density) and, with collinear spin, `<stem>.spin.cube` (up less down), electrons/bohr³.
//!
//! Contract: collective (the fields are gathered on every rank of a G-vector group); rank 0
//! writes.

use std::path::{Path, PathBuf};

use num_complex::Complex64;
use planewave_core::cube;
use planewave_core::scf::ScfResult;
use planewave_core::setup::Setup;

use crate::{sibling, Output};

/// Writes the cube files of `r`'s density; their paths.
pub(crate) fn write(
    s: &Setup,
    r: &ScfResult,
    input: &Path,
    out: &Output,
) -> Result<Vec<PathBuf>, String> {
    let g = &r.density.g;
    let combine = |sign: f64| -> Vec<Complex64> {
        g[0].iter().zip(&g[1]).map(|(u, d)| u + sign * d).collect()
    };
    let mut fields = vec![(
        "density",
        "valence electron density (electrons/bohr^3)",
        match g.len() {
            1 => g[0].clone(),
            _ => combine(1.0),
        },
    )];
    if g.len() == 2 {
        fields.push((
            "spin",
            "spin density, up less down (electrons/bohr^3)",
            combine(-1.0),
        ));
    }
    let mut paths = Vec::new();
    for (name, what, field) in fields {
        let values = cube::on_grid(&s.basis, &field);
        let path = sibling(input, &format!("{name}.cube"));
        if out.root {
            let title = format!("{}: planewave {}", s.spec.title, env!("CARGO_PKG_VERSION"));
            cube::write(&path, (&s.model, &s.basis), (&title, what), &values)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        paths.push(path);
    }
    Ok(paths)
}
