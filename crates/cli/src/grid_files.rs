//! The density files of `[output] density`: the valence density and, with collinear spin, the
//! spin density (up less down) in each format asked for, `<stem>.density.cube`,
//! `<stem>.density.xsf`, `<stem>.spin.cube`, ..., and `<stem>.CHGCAR` (both fields in one
//! file, as VASP writes them).
//!
//! Contract: collective (the fields are gathered on every rank of a G-vector group); rank 0
//! writes; the paths written are returned. `planewave export` writes the same files from a
//! checkpoint, without an SCF ([`export`]).

use std::path::{Path, PathBuf};

use num_complex::Complex64;
use planewave_core::grid_files::{chgcar, cube, on_grid, xsf};
use planewave_core::input::GridFormat;
use planewave_core::setup::Setup;

use crate::{sibling, write_atomically, Output};

/// Writes the density files of `density_g` (this rank's density-sphere entries per spin, of
/// an SCF or a checkpoint); their paths.
pub(crate) fn write(
    s: &Setup,
    g: &[Vec<Complex64>],
    input: &Path,
    out: &Output,
) -> Result<Vec<PathBuf>, String> {
    let combine = |sign: f64| -> Vec<Complex64> {
        g[0].iter().zip(&g[1]).map(|(u, d)| u + sign * d).collect()
    };
    let density = on_grid(
        &s.basis,
        &if g.len() == 1 {
            g[0].clone()
        } else {
            combine(1.0)
        },
    );
    let spin = (g.len() == 2).then(|| on_grid(&s.basis, &combine(-1.0)));
    let title = format!("{}: planewave {}", s.spec.title, env!("CARGO_PKG_VERSION"));
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for format in &s.spec.output.density {
        let mut fields = vec![("density", "valence electron density", &density)];
        fields.extend(
            spin.as_ref()
                .map(|m| ("spin", "spin density, up less down", m)),
        );
        match format {
            GridFormat::Cube => files.extend(fields.iter().map(|(name, what, v)| {
                let what = format!("{what} (electrons/bohr^3)");
                (
                    sibling(input, &format!("{name}.cube")),
                    cube(&s.model, &s.basis, (&title, &what), v),
                )
            })),
            GridFormat::Xsf => files.extend(fields.iter().map(|(name, _, v)| {
                let block = format!("{name}_electrons_per_bohr3");
                (
                    sibling(input, &format!("{name}.xsf")),
                    xsf(&s.model, &s.basis, &block, v),
                )
            })),
            GridFormat::Chgcar => files.push((
                sibling(input, "CHGCAR"),
                chgcar(&s.model, &s.basis, &title, &density, spin.as_deref()),
            )),
        }
    }
    if out.root {
        for (path, text) in &files {
            write_atomically(path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// `planewave export`: the density files of `formats` from the checkpoint `from` (default: the
/// SCF state of a pw.x input's save folder, else `<stem>.ckpt`), which must be of `input`'s
/// crystal. Serial. The paths written, or the error to print.
pub(crate) fn export(
    input: &Path,
    formats: &[GridFormat],
    from: Option<PathBuf>,
) -> Result<Vec<PathBuf>, String> {
    let mut spec = planewave_core::input::load(input).map_err(|e| e.to_string())?;
    if !formats.is_empty() {
        spec.output.density = formats.to_vec();
    }
    if spec.output.density.is_empty() {
        return Err(format!("error: {}: no format to write: give --density cube (or xsf, chgcar; several separated by commas)", input.display()));
    }
    let state = from.unwrap_or_else(|| match crate::qe_workflow::scf_save(&spec) {
        Some(save) => save.join(crate::qe_workflow::STATE),
        None => sibling(input, "ckpt"),
    });
    if !state.exists() {
        return Err(format!(
            "error: {}: the checkpoint {} does not exist: run `planewave run {} --checkpoint {}` first, or give --from FILE",
            input.display(),
            state.display(),
            input.display(),
            state.display()
        ));
    }
    let s = planewave_core::setup::build(spec).map_err(|e| e.to_string())?;
    let transfer = planewave_core::checkpoint::Transfer::default();
    let (density, _) =
        planewave_core::checkpoint::read_fixed_density(&state, &s.model, &s.basis, transfer)
            .map_err(|e| format!("error: {}: {e}", input.display()))?;
    let out = Output {
        root: true,
        quiet: false,
    };
    write(&s, &density, input, &out).map_err(|e| format!("error: {e}"))
}
