//! QE's post-processing programs on planewave's save folder ([`crate::qe_workflow`]):
//! `planewave run` on a dos.x, bands.x or pp.x input writes what that program writes.
//!
//! - dos.x: `fildos` in dos.x's columns (E in eV, the DOS in states/eV per cell, per spin with
//!   spin, the integrated DOS; `EFermi` in the header), from the last nscf step; beside it
//!   `<fildos>.json` (the `planewave dos` document) and its picture.
//! - projwfc.x: the projected DOS files ([`crate::qe_projwfc`]).
//! - bands.x: `filband` (QE's `&plot` file: Cartesian k in 2 pi/alat, energies in eV) and
//!   `filband.gnu` (path length in 2 pi/alat, energy in eV, one block per band), from the
//!   last bands step.
//! - pp.x: the valence density, the local potential (Ry, as pp.x), the spin density or |psi|²
//!   of one band (`plot_num` 0, 1, 6, 7) of the SCF state as `fileout`, Gaussian cube or XSF
//!   on the SCF's FFT grid.
//!
//! Contract: serial (under a launcher rank 0 does it); a missing step is one message naming
//! the file and the step to run, exit code 2.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use planewave_core::checkpoint::{self, Transfer};
use planewave_core::dos::{self, Broadening};
use planewave_core::grid_files::{cube, on_grid, potential_on_grid, xsf};
use planewave_core::input::units::{EV_PER_HARTREE, HARTREE_PER_RYDBERG};
use planewave_core::input::{BandsX, DosMethod, DosX, PlotFormat, PlotQuantity, PostInput, PpX};

use crate::grid_files::{orbitals, OrbitalPick};
use crate::qe_workflow::{self, default_outdir, SavedBands, SavedNscf};
use crate::{dos_plot, picture, write_atomically};

/// Runs the post-processing input `post`; prints what it wrote.
pub(crate) fn run(post: &PostInput) -> ExitCode {
    let done = match post {
        PostInput::Dos(d) => dos_x(d),
        PostInput::Projwfc(p) => crate::qe_projwfc::run(p),
        PostInput::Bands(b) => bands_x(b),
        PostInput::Pp(p) => pp_x(p),
    };
    match done {
        Ok(lines) => {
            outln!("{lines}");
            ExitCode::SUCCESS
        }
        Err(e) => crate::fail(&format!("error: {e}")),
    }
}

/// `text` to `path`, atomically.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), String> {
    write_atomically(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// dos.x: the DOS of the last nscf step.
fn dos_x(d: &DosX) -> Result<String, String> {
    let save = d.save.dir(default_outdir().as_deref());
    let missing = "run the nscf step first (a pw.x input with calculation = 'nscf', the same prefix and outdir)";
    let nscf: SavedNscf = qe_workflow::read_json(&save.join(qe_workflow::NSCF), missing)?;
    let grid = EnergyGrid {
        bz_sum: d.bz_sum.as_deref(),
        degauss: d.degauss,
        ngauss: d.ngauss,
        delta_e: d.delta_e,
        range: d.range,
    };
    let how = broadening(&grid, &nscf, &d.save.source)?;
    let result = dos::from_grid(&nscf.bands, &how).map_err(|e| {
        format!(
            "{}: {e}; rerun the nscf step with K_POINTS automatic, or use bz_sum = 'smearing'",
            d.save.source.display()
        )
    })?;
    let fermi = nscf.fermi_level_ha.unwrap_or(f64::NAN) * EV_PER_HARTREE;
    write(&d.fildos, &dos_columns(&result, fermi))?;
    let mut doc = result.to_json();
    doc["fermi_ev"] = serde_json::json!(fermi);
    let json = append(&d.fildos, ".json");
    write(
        &json,
        &serde_json::to_string_pretty(&doc).expect("the DOS serialises"),
    )?;
    let title = format!(
        "{} ({})",
        d.save.prefix.as_deref().unwrap_or("pwscf"),
        doc["method"].as_str().unwrap_or("")
    );
    let picture = dos_plot::DosPicture {
        doc: &doc,
        title: &title,
    };
    let (svg, png) = picture::write_both(&picture, &json, "dos")?;
    Ok(format!(
        "density of states ({}) of {} irreducible k-points, {} energies, Fermi level {fermi:.4} eV\nwritten to {}, {}, {} and {}",
        doc["method"].as_str().unwrap_or(""),
        result.kpoints,
        result.energies.len(),
        d.fildos.display(),
        json.display(),
        svg.display(),
        png.display()
    ))
}

/// How dos.x and projwfc.x were asked to broaden, and on what energies (eV, Ry).
pub(crate) struct EnergyGrid<'a> {
    pub bz_sum: Option<&'a str>,
    pub degauss: Option<f64>,
    pub ngauss: i64,
    pub delta_e: f64,
    pub range: (Option<f64>, Option<f64>),
}

/// The broadening of `grid` for the nscf step `nscf`: as given, else the step's tetrahedra,
/// else Gaussians of its smearing width; an error naming `source` without a width.
pub(crate) fn broadening(
    grid: &EnergyGrid,
    nscf: &SavedNscf,
    source: &Path,
) -> Result<Broadening, String> {
    let smearing = DosMethod::of_ngauss(grid.ngauss).unwrap_or(DosMethod::Gaussian);
    let method = match grid.bz_sum {
        Some("smearing") => smearing,
        Some("tetrahedra_opt") => DosMethod::TetrahedraOpt,
        Some(_) => DosMethod::Tetrahedra,
        None if grid.degauss.is_some() => smearing,
        None => match nscf.occupations.as_str() {
            "tetrahedra_opt" => DosMethod::TetrahedraOpt,
            "tetrahedra" => DosMethod::Tetrahedra,
            _ => smearing,
        },
    };
    let width = grid
        .degauss
        .map(|w| w * HARTREE_PER_RYDBERG)
        .or(nscf.width_ha);
    let width = match (method.broadens(), width) {
        (true, None) => {
            return Err(format!(
                "{}: a DOS by smearing needs a width: give degauss (Ry)",
                source.display()
            ))
        }
        (_, w) => w.unwrap_or(0.0),
    };
    Ok(Broadening {
        method,
        width,
        step: grid.delta_e / EV_PER_HARTREE,
        range: (
            grid.range.0.map(|e| e / EV_PER_HARTREE),
            grid.range.1.map(|e| e / EV_PER_HARTREE),
        ),
    })
}

/// `path` with `tail` added to its name.
pub(crate) fn append(path: &Path, tail: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(tail);
    name.into()
}

/// dos.x's columns: `f8.3` then `2x, e10.4` per value.
fn dos_columns(d: &dos::Dos, fermi_ev: f64) -> String {
    let nspin = d.dos.len();
    let mut text = match nspin {
        1 => format!("#  E (eV)   dos(E)     Int dos(E) EFermi = {fermi_ev:8.3} eV\n"),
        _ => format!("#  E (eV)  dosup(E)   dosdw(E)  Int dos(E) EFermi = {fermi_ev:8.3} eV\n"),
    };
    for (i, e) in d.energies.iter().enumerate() {
        let _ = write!(text, "{:8.3}", e * EV_PER_HARTREE);
        let integrated: f64 = d.integrated.iter().map(|n| n[i]).sum();
        let values = d.dos.iter().map(|s| s[i] / EV_PER_HARTREE);
        for v in values.chain([integrated]) {
            let _ = write!(text, "  {}", fortran_e(v, 10, 4));
        }
        text.push('\n');
    }
    text
}

/// `x` as Fortran's `Ew.d`: `0.dddE+xx`, the leading zero dropped when the sign needs its place.
pub(crate) fn fortran_e(x: f64, w: usize, d: usize) -> String {
    if !x.is_finite() {
        return format!("{:>w$}", "*".repeat(w));
    }
    let (mut mantissa, mut exponent) = (x.abs(), 0i32);
    if mantissa != 0.0 {
        exponent = mantissa.log10().floor() as i32 + 1;
        mantissa /= 10f64.powi(exponent);
        // Rounding to d digits may reach 1.0: renormalise.
        if (mantissa * 10f64.powi(d as i32)).round() >= 10f64.powi(d as i32) {
            mantissa /= 10.0;
            exponent += 1;
        }
    }
    let digits = format!("{:.*}", d, mantissa);
    let sign = if x < 0.0 { "-" } else { "" };
    let body = format!(
        "{}E{}{:02}",
        &digits[1..],
        if exponent < 0 { '-' } else { '+' },
        exponent.abs()
    );
    let with_zero = format!("{sign}0{body}");
    if with_zero.len() <= w {
        format!("{with_zero:>w$}")
    } else {
        format!("{:>w$}", format!("{sign}{body}"))
    }
}

/// bands.x: `filband` and `filband.gnu` of the last bands step.
fn bands_x(b: &BandsX) -> Result<String, String> {
    let save = b.save.dir(default_outdir().as_deref());
    let missing = "run the bands step first (a pw.x input with calculation = 'bands', the same prefix and outdir)";
    let saved: SavedBands = qe_workflow::read_json(&save.join(qe_workflow::BANDS), missing)?;
    let nspin = saved.eigenvalues_ha.len();
    let Some(bands) = saved.eigenvalues_ha.get(b.spin_component - 1) else {
        return Err(format!(
            "{}: spin_component = {} but the bands step has {nspin} spin channel(s)",
            b.save.source.display(),
            b.spin_component
        ));
    };
    let unit = saved.alat_bohr / (2.0 * std::f64::consts::PI);
    let nbnd = bands.first().map_or(0, Vec::len);
    let mut dat = format!(" &plot nbnd={nbnd:4}, nks={:6} /\n", bands.len());
    for (k, e) in saved.kpoints_cart_inv_bohr.iter().zip(bands) {
        let _ = writeln!(
            dat,
            "          {:10.6}{:10.6}{:10.6}",
            k[0] * unit,
            k[1] * unit,
            k[2] * unit
        );
        for row in e.chunks(10) {
            let line: String = row
                .iter()
                .map(|x| format!("{:9.3}", x * EV_PER_HARTREE))
                .collect();
            dat.push_str(&line);
            dat.push('\n');
        }
    }
    let mut gnu = String::new();
    for band in 0..nbnd {
        for (x, e) in saved.distance_inv_bohr.iter().zip(bands) {
            let _ = writeln!(gnu, "{:10.4}{:10.4}", x * unit, e[band] * EV_PER_HARTREE);
        }
        gnu.push('\n');
    }
    let gnu_path = append(&b.filband, ".gnu");
    write(&b.filband, &dat)?;
    write(&gnu_path, &gnu)?;
    Ok(format!(
        "bands of {} k-points x {nbnd} written to {} and {} (eV; path length in 2 pi/alat)",
        bands.len(),
        b.filband.display(),
        gnu_path.display()
    ))
}

/// pp.x: the density or the spin density of the SCF state as `fileout`.
fn pp_x(p: &PpX) -> Result<String, String> {
    let save = p.save.dir(default_outdir().as_deref());
    let state = save.join(qe_workflow::STATE);
    if !state.exists() {
        return Err(format!(
            "{}: {}",
            p.save.source.display(),
            qe_workflow::no_state(&save)
        ));
    }
    let s = qe_workflow::scf_setup_of(&save)?;
    let (density, _) =
        checkpoint::read_fixed_density(&state, &s.model, &s.basis, Transfer::default())?;
    let combine = |sign: f64| -> Vec<num_complex::Complex64> {
        match density.len() {
            1 => density[0].clone(),
            _ => density[0]
                .iter()
                .zip(&density[1])
                .map(|(u, d)| u + sign * d)
                .collect(),
        }
    };
    let (values, what) = match p.quantity {
        PlotQuantity::Density => (
            on_grid(&s.basis, &combine(1.0)),
            "valence electron density (electrons/bohr^3)".to_string(),
        ),
        PlotQuantity::SpinDensity if density.len() == 2 => (
            on_grid(&s.basis, &combine(-1.0)),
            "spin density, up less down (electrons/bohr^3)".to_string(),
        ),
        PlotQuantity::SpinDensity => {
            return Err(format!(
                "{}: plot_num = 6 is the spin density, and the SCF had no spin (nspin = 1)",
                p.save.source.display()
            ))
        }
        PlotQuantity::Potential { spin } => {
            let v = potential_on_grid(&s.model, &s.basis, &s.params, density.clone())?;
            let channels: Vec<&Vec<f64>> = match spin {
                0 => v.iter().collect(),
                c if c <= v.len() => vec![&v[c - 1]],
                c => {
                    return Err(format!(
                        "{}: spin_component = {c}, and the SCF had one spin channel",
                        p.save.source.display()
                    ))
                }
            };
            let ry = 2.0 / channels.len() as f64;
            let values = (0..v[0].len())
                .map(|i| ry * channels.iter().map(|c| c[i]).sum::<f64>())
                .collect();
            (values, "V_bare + V_H + V_xc (Ry)".to_string())
        }
        PlotQuantity::Orbital { kpoint, band, spin } => {
            let pick = OrbitalPick {
                k: kpoint,
                band,
                spin,
            };
            let mut fields = orbitals(&s, &state, &[pick])
                .map_err(|e| format!("{}: {e}", p.save.source.display()))?;
            let what = format!("|psi|^2 of band {band} at k-point {kpoint} (1/bohr^3)");
            (fields.remove(0), what)
        }
    };
    let title = format!("{}: planewave {}", s.spec.title, env!("CARGO_PKG_VERSION"));
    let text = match p.format {
        PlotFormat::Cube => cube(&s.model, &s.basis, (&title, &what), &values),
        PlotFormat::Xsf => {
            let block = match p.quantity {
                PlotQuantity::Orbital { .. } => "psi_squared_per_bohr3",
                PlotQuantity::Potential { .. } => "potential_ry",
                _ => "density_electrons_per_bohr3",
            };
            xsf(&s.model, &s.basis, block, &values)
        }
    };
    write(&p.fileout, &text)?;
    let d = s.basis.grid.dims;
    Ok(format!(
        "{what} on the {}x{}x{} FFT grid written to {}",
        d[0],
        d[1],
        d[2],
        p.fileout.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::fortran_e;

    #[test]
    fn numbers_print_as_fortran_e10_4() {
        assert_eq!(fortran_e(0.01260, 10, 4), "0.1260E-01");
        assert_eq!(fortran_e(8.0, 10, 4), "0.8000E+01");
        assert_eq!(fortran_e(0.0, 10, 4), "0.0000E+00");
        assert_eq!(fortran_e(-0.001234, 10, 4), "-.1234E-02");
        assert_eq!(fortran_e(0.99996, 10, 4), "0.1000E+01");
        assert_eq!(fortran_e(1.0, 10, 4), "0.1000E+01");
    }
}
