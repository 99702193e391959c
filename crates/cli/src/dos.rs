//! The DOS step of `planewave dos`: after the SCF, the density of states of the input's `[dos]`
//! (defaults without it), written as `<stem>.dos.json` and drawn as `<stem>.dos.svg`, with a
//! one-line summary.
//!
//! Contract: collective (every rank calls it after the same SCF); rank 0 prints and writes.

use std::path::Path;
use std::time::Instant;

use planewave_core::dos;
use planewave_core::input::units::EV_PER_HARTREE;
use planewave_core::input::DosMethod;
use planewave_core::scf::ScfResult;
use planewave_core::setup::Setup;

use crate::{dos_plot, picture, sibling, Output};

/// The density of states of `s` from the converged `scf`, or the error to print.
pub(crate) fn run(s: &Setup, scf: &ScfResult, input: &Path, out: &Output) -> Result<(), String> {
    let t0 = Instant::now();
    let d = dos::compute(s, scf).map_err(|e| e.to_string())?;
    let doc = d.to_json();
    let json = sibling(input, "dos.json");
    let text = serde_json::to_string_pretty(&doc).expect("the DOS serialises");
    out.write(&json, &text)?;
    let pictures = match out.root {
        true => {
            let picture = dos_plot::DosPicture {
                doc: &doc,
                title: &s.spec.title,
            };
            Some(picture::write_both(&picture, input, "dos")?)
        }
        false => None,
    };
    if out.talks() {
        let reference = match (d.vbm, d.fermi_level) {
            (Some(v), _) => format!("valence maximum {:.4} eV", v * EV_PER_HARTREE),
            (None, Some(f)) => format!("Fermi level (SCF) {:.4} eV", f * EV_PER_HARTREE),
            _ => String::new(),
        };
        let method = match d.method {
            DosMethod::Tetrahedra => "linear tetrahedra".to_string(),
            DosMethod::TetrahedraOpt => "optimised tetrahedra".to_string(),
            _ => format!(
                "{} broadening, width {:.4} eV",
                doc["method"].as_str().unwrap_or(""),
                d.width * EV_PER_HARTREE
            ),
        };
        outln!(
            "density of states: {} k-points (irreducible), {method}, {} energies from {:.2} to {:.2} eV (complete below {:.2} eV); {reference} ({:.1} s)",
            d.kpoints,
            d.energies.len(),
            d.energies[0] * EV_PER_HARTREE,
            d.energies[d.energies.len() - 1] * EV_PER_HARTREE,
            d.valid_up_to * EV_PER_HARTREE,
            t0.elapsed().as_secs_f64()
        );
        if let Some((svg, png)) = &pictures {
            let files = [json.display(), svg.display(), png.display()];
            outln!(
                "density of states written to {}, {} and {}",
                files[0],
                files[1],
                files[2]
            );
        }
    }
    Ok(())
}
