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
use planewave_core::grid_files::{chgcar, cube, on_grid, orbital_on_grid, potential_on_grid, xsf};
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

/// One band to draw as |psi|²: its k-point, band and spin channel, from 1 as pp.x counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OrbitalPick {
    pub k: usize,
    pub band: usize,
    pub spin: usize,
}

impl std::str::FromStr for OrbitalPick {
    type Err = String;

    /// `K,BAND` or `K,BAND,SPIN`.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("'{text}' is not K,BAND or K,BAND,SPIN (counted from 1, e.g. 1,4)");
        let n: Vec<usize> = (text.split(','))
            .map(|t| t.trim().parse().ok().filter(|&n: &usize| n >= 1))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        match n[..] {
            [k, band] => Ok(OrbitalPick { k, band, spin: 1 }),
            [k, band, spin] => Ok(OrbitalPick { k, band, spin }),
            _ => Err(bad()),
        }
    }
}

/// |psi|² (1/bohr³, one electron) of each of `picks` from the checkpoint `state` of `s`'s run,
/// on its FFT grid; a k-point, band or spin channel the checkpoint lacks is refused, naming
/// what it holds. Serial.
pub(crate) fn orbitals(
    s: &Setup,
    state: &Path,
    picks: &[OrbitalPick],
) -> Result<Vec<Vec<f64>>, String> {
    use planewave_core::checkpoint;
    use planewave_core::scf::Wavefunctions;
    let meta = checkpoint::read_meta(state, &planewave_comm::Solo)?;
    for p in picks {
        let (nk, nb, ns) = (meta.kpoints.len(), meta.nbands, meta.nspin);
        if p.k > nk || p.band > nb || p.spin > ns {
            return Err(format!(
                "band {} of k-point {} (spin {}) does not exist: {} holds {nb} bands at each of {nk} k-points, {ns} spin channel(s)",
                p.band, p.k, p.spin, state.display()
            ));
        }
    }
    let seed = s.params.seed;
    let transfer = checkpoint::Transfer::default();
    let r = checkpoint::read(state, &s.model, &s.basis, (meta.nbands, seed), transfer)?;
    let Some(psi) = r.start.wavefunctions else {
        return Err(format!(
            "{}: its k-points are not this input's",
            state.display()
        ));
    };
    let values = |p: &OrbitalPick| {
        let (kpt, b) = (&s.basis.kpoints[p.k - 1], p.band - 1);
        match &psi {
            Wavefunctions::Complex(m) => orbital_on_grid(&s.basis, kpt, &m[p.spin - 1][p.k - 1], b),
            Wavefunctions::Real(m) => orbital_on_grid(&s.basis, kpt, &m[p.spin - 1][p.k - 1], b),
        }
    };
    Ok(picks.iter().map(values).collect())
}

/// `planewave export`: the density files of `formats` (and with `picks` the |psi|² of those
/// bands, `<stem>.orbital_k<K>_b<B>[_s<S>].cube` / `.xsf`; with `potential` the local
/// potential in Ha, `<stem>.potential[_up|_down].cube` / `.xsf`) from the checkpoint `from`
/// (default: the SCF state of a pw.x input's save folder, else `<stem>.ckpt`), which must be of
/// `input`'s crystal. Serial. The paths written, or the error to print.
pub(crate) fn export(
    input: &Path,
    formats: &[GridFormat],
    (picks, potential): (&[OrbitalPick], bool),
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
    let mut paths = write(&s, &density, input, &out).map_err(|e| format!("error: {e}"))?;
    let mut fields: Vec<(String, String, Vec<f64>)> = Vec::new();
    if potential {
        let v = potential_on_grid(&s.model, &s.basis, &s.params, density)?;
        let names: &[&str] = if v.len() == 2 {
            &["potential_up", "potential_down"]
        } else {
            &["potential"]
        };
        for (name, values) in names.iter().zip(v) {
            fields.push((name.to_string(), "V_loc + V_H + V_xc (Ha)".into(), values));
        }
    }
    let orbitals =
        orbitals(&s, &state, picks).map_err(|e| format!("error: {}: {e}", input.display()))?;
    for (p, values) in picks.iter().zip(orbitals) {
        let spin = if s.model.nspin() == 2 {
            format!("_s{}", p.spin)
        } else {
            String::new()
        };
        let what = format!("|psi|^2 of band {} at k-point {} (1/bohr^3)", p.band, p.k);
        fields.push((format!("orbital_k{}_b{}{spin}", p.k, p.band), what, values));
    }
    let title = format!("{}: planewave {}", s.spec.title, env!("CARGO_PKG_VERSION"));
    for (name, what, values) in &fields {
        for format in &s.spec.output.density {
            let (ext, text) = match format {
                GridFormat::Cube => ("cube", cube(&s.model, &s.basis, (&title, what), values)),
                GridFormat::Xsf => ("xsf", xsf(&s.model, &s.basis, name, values)),
                GridFormat::Chgcar => continue,
            };
            let path = sibling(input, &format!("{name}.{ext}"));
            write_atomically(&path, &text)
                .map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
            paths.push(path);
        }
    }
    Ok(paths)
}
