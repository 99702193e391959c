//! A QE workflow with `pw.x` replaced by `planewave run`: the SCF keeps its state in the save
//! folder of its `prefix` and `outdir` ([`planewave_core::input::QeRun`]), and a later pw.x
//! `calculation = 'bands' | 'nscf'` input of the same prefix and outdir starts its
//! fixed-density step from that state, without an SCF.
//!
//! What the save folder holds (beside QE's own files, which are left alone):
//! - `planewave.ckpt`: the SCF's checkpoint (density, bands, Fermi level);
//! - `planewave-scf.in` and the pseudopotential files: the SCF's input, for pp.x;
//! - `planewave-bands.json`: the last bands step's path and eigenvalues, for bands.x;
//! - `planewave-nscf.json`: the last nscf step's grid and eigenvalues, for dos.x.
//!
//! Contract: [`run_non_scf`] is collective (every rank of the launch calls it); rank 0 prints
//! and writes. A missing state, or a state of another crystal, functional or cutoff, is one
//! message naming the folder and what to do, exit code 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use planewave_core::band_structure::BandStructure;
use planewave_core::input::units::EV_PER_HARTREE;
use planewave_core::input::{DosMethod, Kpoints, NonScf, PathPoints, QeRun, RunSpec};
use planewave_core::scf::ScfResult;
use planewave_core::setup::{self, Setup};
use planewave_core::tuning::Tuning;
use planewave_core::{checkpoint, dos, fixed_density, results};
use serde::{Deserialize, Serialize};

use crate::{band_plot, picture, report, sibling, Output};

/// The SCF state in the save folder.
pub(crate) const STATE: &str = "planewave.ckpt";
/// The SCF's input in the save folder.
pub(crate) const SCF_INPUT: &str = "planewave-scf.in";
/// The bands step's results in the save folder.
pub(crate) const BANDS: &str = "planewave-bands.json";
/// The nscf step's results in the save folder.
pub(crate) const NSCF: &str = "planewave-nscf.json";

/// What bands.x reads: the path and eigenvalues of a bands step.
#[derive(Serialize, Deserialize)]
pub(crate) struct SavedBands {
    /// Fractional k-points.
    pub kpoints_frac: Vec<[f64; 3]>,
    /// Cartesian k-points (1/bohr).
    pub kpoints_cart_inv_bohr: Vec<[f64; 3]>,
    /// Length along the path (1/bohr; none across a jump).
    pub distance_inv_bohr: Vec<f64>,
    /// `eigenvalues[spin][k][band]` (Ha).
    pub eigenvalues_ha: Vec<Vec<Vec<f64>>>,
    /// QE's alat (bohr).
    pub alat_bohr: f64,
}

/// What dos.x reads: the bands of an nscf step on its grid.
#[derive(Serialize, Deserialize)]
pub(crate) struct SavedNscf {
    /// The eigenvalues, weights and grid.
    pub bands: dos::GridBands,
    /// The step's Fermi level (Ha): by its tetrahedra, its smearing, or the valence maximum.
    pub fermi_level_ha: Option<f64>,
    /// Its occupations: `tetrahedra`, `tetrahedra_opt`, `smearing` or `fixed`.
    pub occupations: String,
    /// The smearing width (Ha), when it had one.
    pub width_ha: Option<f64>,
}

/// QE's outdir when the input has none: `$ESPRESSO_TMPDIR`, as pw.x reads it.
pub(crate) fn default_outdir() -> Option<PathBuf> {
    std::env::var_os("ESPRESSO_TMPDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The save folder an SCF of `spec` keeps its state in: a pw.x SCF (not a relaxation) whose
/// `disk_io` is not `'none'`.
pub(crate) fn scf_save(spec: &RunSpec) -> Option<PathBuf> {
    let qe = spec.qe.as_ref()?;
    (qe.keep && qe.non_scf.is_none() && !spec.relax.requested)
        .then(|| qe.save_dir(default_outdir().as_deref()))
}

/// Create the save folder (rank 0), so the checkpoint can be written into it.
pub(crate) fn prepare_save(save: &Path) -> Result<(), String> {
    std::fs::create_dir_all(save).map_err(|e| {
        format!(
            "cannot create the save folder {} (outdir/prefix.save): {e}",
            save.display()
        )
    })
}

/// After a converged SCF: the checkpoint written at `written` lands in the save folder, with
/// a copy of the input and of its pseudopotentials (rank 0).
pub(crate) fn keep_scf(s: &Setup, save: &Path, written: &Path) -> Result<(), String> {
    let copy = |from: &Path, to: PathBuf| {
        // A read-only copy of an earlier run would refuse to be overwritten.
        let _ = std::fs::remove_file(&to);
        std::fs::copy(from, &to).map(|_| ()).map_err(|e| {
            format!(
                "cannot copy {} into the save folder as {}: {e}",
                from.display(),
                to.display()
            )
        })
    };
    if written != save.join(STATE) {
        copy(written, save.join(STATE))?;
    }
    copy(&s.spec.source, save.join(SCF_INPUT))?;
    for sp in &s.spec.species {
        if let Some(name) = sp.pseudo.file_name() {
            copy(&sp.pseudo, save.join(name))?;
        }
    }
    Ok(())
}

/// The SCF's set-up from the save folder: its input with the pseudopotentials kept there.
pub(crate) fn scf_setup_of(save: &Path) -> Result<Setup, String> {
    let input = save.join(SCF_INPUT);
    if !input.exists() {
        return Err(no_state(save));
    }
    let mut spec = planewave_core::input::load(&input).map_err(|e| e.to_string())?;
    for sp in &mut spec.species {
        if let Some(name) = sp.pseudo.file_name() {
            sp.pseudo = save.join(name);
        }
    }
    setup::build(spec).map_err(|e| e.to_string())
}

/// The message for a save folder without an SCF state.
pub(crate) fn no_state(save: &Path) -> String {
    format!(
        "no SCF state in {}: run the SCF first (planewave run on a pw.x input with calculation = 'scf', the same prefix and outdir, and disk_io other than 'none')",
        save.display()
    )
}

/// A pw.x `calculation = 'bands' | 'nscf'` input: the fixed-density step from the SCF state of
/// its save folder; `<stem>.json` and, for bands, the band picture. Collective.
pub(crate) fn run_non_scf(
    spec: RunSpec,
    (input, json): (&Path, Option<PathBuf>),
    tuning: Tuning,
    out: &Output,
    world: Arc<dyn planewave_comm::Communicator>,
) -> ExitCode {
    let t0 = Instant::now();
    let qe = spec.qe.clone().expect("a pw.x input");
    let kind = qe.non_scf.expect("a non-SCF step");
    let save = qe.save_dir(default_outdir().as_deref());
    let (s, r, scf_fermi) = match solve(spec, (input, &save), tuning, out, world) {
        Ok(x) => x,
        Err(e) => return out.fail(&e),
    };
    let done = match kind {
        NonScf::Bands => bands_step(&s, &r, (&qe, &save), scf_fermi, out),
        NonScf::Nscf => nscf_step(&s, &r, &save, scf_fermi, out),
    };
    let fermi = match done {
        Ok(f) => f,
        Err(e) => return out.fail(&format!("error: {}: {e}", input.display())),
    };
    let name = if kind == NonScf::Bands {
        "bands"
    } else {
        "nscf"
    };
    let doc = results::non_scf_json(&s, &r, name, fermi);
    let path = json.unwrap_or_else(|| sibling(input, "json"));
    let text = serde_json::to_string_pretty(&doc).expect("results serialise");
    if let Err(e) = out.write(&path, &text) {
        return out.fail(&format!("error: {e}"));
    }
    if out.talks() {
        outln!(
            "{name} step from the SCF state in {}: {} k-points, {} fixed-density iterations, {:.1} s",
            save.display(),
            s.basis.kpoints.len(),
            r.iterations,
            t0.elapsed().as_secs_f64()
        );
        outln!("results written to {}", path.display());
    }
    if !r.converged {
        if out.root {
            eprintln!(
                "warning: the bands did not settle in {} fixed-density iterations",
                r.iterations
            );
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The step's set-up and its bands with the density of the SCF state in `save` held fixed,
/// with the SCF's Fermi level (smearing); the message to print. Collective.
fn solve(
    mut spec: RunSpec,
    (input, save): (&Path, &Path),
    tuning: Tuning,
    out: &Output,
    world: Arc<dyn planewave_comm::Communicator>,
) -> Result<(Setup, ScfResult, Option<f64>), String> {
    let state = save.join(STATE);
    let name = input.display();
    if !state.exists() {
        return Err(format!("error: {name}: {}", no_state(save)));
    }
    if spec.qe.as_ref().and_then(|q| q.non_scf) == Some(NonScf::Bands) {
        // pw.x's bands step solves the points as listed.
        spec.use_symmetry = false;
    }
    let s = setup::build_on(spec, world).map_err(|e| e.to_string())?;
    if let Some(sp) = s.model.species.iter().find(|sp| sp.pseudo.paw().is_some()) {
        return Err(format!(
            "error: {name}: a fixed-density step with PAW pseudopotentials ({}) needs the SCF's \
             PAW band sums, which the saved state does not hold yet; run `planewave bands` or \
             `planewave dos` on the SCF input instead",
            sp.path.display()
        ));
    }
    if out.talks() {
        report::setup(&s);
    }
    let (density, meta) =
        checkpoint::read_fixed_density(&state, &s.model, &s.basis, tuning.checkpoint)
            .map_err(|e| format!("error: {name}: {e}"))?;
    let r = fixed_density::solve(&s, density, None).map_err(|e| e.to_string())?;
    let fermi = (meta.fermi_level_ha).map(|f| f.into_iter().fold(f64::MIN, f64::max));
    Ok((s, r, fermi))
}

/// The bands step's files: the picture beside the input and the saved path for bands.x; the
/// SCF's Fermi level (smearing) for the results.
fn bands_step(
    s: &Setup,
    r: &ScfResult,
    (qe, save): (&QeRun, &Path),
    scf_fermi: Option<f64>,
    out: &Output,
) -> Result<Option<f64>, String> {
    let path = match &s.spec.bands {
        Some(b) => b.kpoints(),
        None => PathPoints {
            kpoints: s.basis.kpoints.iter().map(|k| k.frac).collect(),
            labels: Vec::new(),
            jumps: Vec::new(),
        },
    };
    let b = BandStructure::from_run(&path.kpoints, r, scf_fermi);
    let doc = b.to_json(&s.model.crystal.recip, &path);
    if out.root {
        let picture = band_plot::BandPicture {
            doc: &doc,
            title: &s.spec.title,
        };
        let (svg, png) = picture::write_both(&picture, &s.spec.source, "bands")?;
        let saved: SavedBands = serde_json::from_value(serde_json::json!({
            "kpoints_frac": doc["kpoints_frac"],
            "kpoints_cart_inv_bohr": doc["kpoints_cart_inv_bohr"],
            "distance_inv_bohr": doc["distance_inv_bohr"],
            "eigenvalues_ha": doc["eigenvalues_ha"],
            "alat_bohr": qe.alat,
        }))
        .expect("the band document has these keys");
        write_json(&save.join(BANDS), &saved)?;
        if out.talks() {
            if let Some(e) = b.edges() {
                outln!(
                    "valence maximum {:.4} eV, conduction minimum {:.4} eV on the path: gap {:.4} eV",
                    e.vbm.0 * EV_PER_HARTREE,
                    e.cbm.0 * EV_PER_HARTREE,
                    e.gap() * EV_PER_HARTREE
                );
            }
            outln!(
                "band picture written to {} and {}",
                svg.display(),
                png.display()
            );
        }
    }
    Ok(scf_fermi)
}

/// The nscf step's saved grid for dos.x; its Fermi level.
fn nscf_step(
    s: &Setup,
    r: &ScfResult,
    save: &Path,
    scf_fermi: Option<f64>,
    out: &Output,
) -> Result<Option<f64>, String> {
    let bands = dos::grid_bands(s, r, scf_fermi);
    let method = s.spec.dos.method;
    let tetrahedra = !method.broadens();
    let grid = bands.grid.as_ref().map(|g| g.size);
    if tetrahedra && !grid.is_some_and(|g| g.iter().all(|&n| n >= 2)) {
        let on = grid.map_or("a k-point list".to_string(), |g| {
            format!("the grid {}x{}x{}", g[0], g[1], g[2])
        });
        return Err(format!("occupations = 'tetrahedra...' needs a Monkhorst-Pack grid of at least 2 points a side, and this nscf step is on {on}: use K_POINTS automatic, e.g. 12 12 12 0 0 0"));
    }
    let (occupations, fermi) = if tetrahedra {
        let optimised = method == DosMethod::TetrahedraOpt;
        let name = if optimised {
            "tetrahedra_opt"
        } else {
            "tetrahedra"
        };
        (name, dos::tetrahedron_fermi_level(&bands, optimised))
    } else if s.spec.smearing.width() > 0.0 {
        let f = r.occupations.fermi.as_ref();
        (
            "smearing",
            f.map(|f| f.iter().copied().fold(f64::MIN, f64::max)),
        )
    } else {
        ("fixed", bands.vbm)
    };
    let width = s.spec.smearing.width();
    let saved = SavedNscf {
        bands,
        fermi_level_ha: fermi,
        occupations: occupations.into(),
        width_ha: (width > 0.0).then_some(width),
    };
    if out.root {
        write_json(&save.join(NSCF), &saved)?;
    }
    if out.talks() {
        let grid = match &s.spec.kpoints {
            Kpoints::MonkhorstPack { grid, .. } => {
                format!("{}x{}x{} grid, ", grid[0], grid[1], grid[2])
            }
            _ => String::new(),
        };
        match fermi {
            Some(f) => outln!(
                "nscf: {grid}{} irreducible k-points, Fermi level {:.4} eV ({occupations})",
                s.basis.kpoints.len(),
                f * EV_PER_HARTREE
            ),
            None => outln!("nscf: {grid}{} irreducible k-points", s.basis.kpoints.len()),
        }
    }
    Ok(fermi)
}

/// `value` as JSON at `path`, atomically.
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> Result<(), String> {
    let text = serde_json::to_string(value).expect("plain data serialises");
    crate::write_atomically(path, &text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The JSON at `path`, or what to do when it is missing: `missing` names the step that writes it.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    missing: &str,
) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{} does not exist: {missing}", path.display()),
        _ => format!("cannot read {}: {e}", path.display()),
    })?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is damaged ({e}): {missing}", path.display()))
}
