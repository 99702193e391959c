//! The band step of `planewave bands`: after the SCF, the eigenvalues along the input's
//! `[bands]` path (or the crystal's high-symmetry path, [`kpath`]) with the density held fixed, written as `<stem>.bands.json` and drawn as
//! `<stem>.bands.svg`, with a summary of the band edges.
//!
//! Contract: collective (every rank calls it after the same SCF); rank 0 prints and writes.

use std::path::Path;
use std::time::Instant;

use planewave_core::band_structure::{self, BandStructure};
use planewave_core::input::units::EV_PER_HARTREE;
use planewave_core::input::{BandsSpec, PathPoints};
use planewave_core::kpath;
use planewave_core::scf::ScfResult;
use planewave_core::setup::Setup;

use crate::{band_plot, picture, sibling, Output};

/// The bands of `s`'s path from the converged `scf`; the files' paths, or the error to print.
pub(crate) fn run(s: &Setup, scf: &ScfResult, input: &Path, out: &Output) -> Result<(), String> {
    let (spec, auto) = path_of(s, out)?;
    let path = spec.kpoints();
    let t0 = Instant::now();
    let b =
        band_structure::compute(s, scf, &path.kpoints, spec.nbands).map_err(|e| e.to_string())?;
    let mut doc = b.to_json(&s.model.crystal.recip, &path);
    doc["path_source"] = match &auto {
        Some(a) => serde_json::json!({
            "automatic": true,
            "convention": kpath::CONVENTION,
            "lattice": a.lattice,
            "primitive_cells": a.cells,
        }),
        None => serde_json::json!({ "automatic": false }),
    };

    let json = sibling(input, "bands.json");
    let text = serde_json::to_string_pretty(&doc).expect("the band structure serialises");
    out.write(&json, &text)?;
    if out.root {
        let picture = band_plot::BandPicture {
            doc: &doc,
            title: &s.spec.title,
        };
        let (svg, png) = picture::write_both(&picture, input, "bands")?;
        if out.talks() {
            summary(&b, &path, t0.elapsed().as_secs_f64());
            let files = [json.display(), svg.display(), png.display()];
            outln!(
                "band structure written to {}, {} and {}",
                files[0],
                files[1],
                files[2]
            );
        }
    }
    if !b.converged {
        return Err(format!(
            "the bands did not settle in {} fixed-density iterations",
            b.iterations
        ));
    }
    Ok(())
}

/// The path of `s`: the input's `[bands]` path, else the crystal's high-symmetry path (said on
/// `out`, with a note when the cell is a supercell).
fn path_of(s: &Setup, out: &Output) -> Result<(BandsSpec, Option<kpath::AutoPath>), String> {
    if let Some(given) = s.spec.bands.as_ref().filter(|b| !b.path.is_empty()) {
        return Ok((given.clone(), None));
    }
    let density = s.spec.bands.as_ref().and_then(|b| b.density);
    let mut a = kpath::automatic(&s.model.crystal, density.unwrap_or(kpath::DENSITY))?;
    a.bands.nbands = s.spec.bands.as_ref().and_then(|b| b.nbands);
    if out.talks() {
        outln!(
            "band path from the crystal's symmetry: {} {} lattice, {}",
            kpath::CONVENTION,
            a.lattice,
            a.route()
        );
        if a.cells > 1.0 + 1e-6 {
            outln!("note: the cell holds {:.0} primitive cells and the path is the primitive cell's, so the bands are folded", a.cells);
        }
    }
    Ok((a.bands.clone(), Some(a)))
}

/// One line for the path, one for the band edges or the Fermi level.
fn summary(b: &BandStructure, path: &PathPoints, seconds: f64) {
    let names: Vec<&str> = path.labels.iter().map(|(_, l)| l.as_str()).collect();
    let nbands = b.eigenvalues[0][0].len();
    outln!(
        "band structure: {} k-points x {nbands} bands along {} ({} fixed-density iterations, {seconds:.1} s)",
        b.kpoints_frac.len(),
        names.join("-"),
        b.iterations
    );
    let at = |k: usize| {
        let f = b.kpoints_frac[k];
        match path.labels.iter().find(|(i, _)| *i == k) {
            Some((_, l)) => l.clone(),
            None => format!("k = ({:.3}, {:.3}, {:.3})", f[0], f[1], f[2]),
        }
    };
    match (b.edges(), b.fermi_level) {
        (Some(e), _) => {
            outln!(
            "valence maximum {:.4} eV at {}, conduction minimum {:.4} eV at {}: gap {:.4} eV ({})",
            e.vbm.0 * EV_PER_HARTREE,
            at(e.vbm.1),
            e.cbm.0 * EV_PER_HARTREE,
            at(e.cbm.1),
            e.gap() * EV_PER_HARTREE,
            if e.vbm.1 == e.cbm.1 { "direct" } else { "indirect" }
        )
        }
        (None, Some(f)) => outln!("Fermi level (SCF) {:.4} eV", f * EV_PER_HARTREE),
        (None, None) => {}
    }
}
