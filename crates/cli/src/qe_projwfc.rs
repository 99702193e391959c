//! projwfc.x on planewave's save folder: the DOS projected on the atomic orbitals of the last
//! nscf step, in projwfc.x's files.
//!
//! Contract: [`run`] reads the nscf step's bands and Löwdin projections
//! (`planewave-nscf.json`), broadens them as projwfc.x would (`degauss` given: Gaussians;
//! else the step's tetrahedra or smearing) and writes, beside the input:
//! - `<filpdos>.pdos_tot`: E (eV), the total DOS and the sum of the projections (states/eV
//!   per cell; per spin with spin), projwfc.x's `f8.3` and `e11.3` columns;
//! - `<filpdos>.pdos_atm#A(El)_wfc#W(l)`: per atom and radial orbital, E, its DOS and one
//!   column per m;
//! - `<filpdos>.json` (the `planewave dos` document with its `projected` part) and its
//!   picture.
//!
//! It prints the Löwdin charges per atom and l and the spilling parameter. Serial.

use std::fmt::Write as _;
use std::path::PathBuf;

use planewave_core::dos;
use planewave_core::input::units::EV_PER_HARTREE;
use planewave_core::input::ProjwfcX;
use planewave_core::pdos::{self, ProjectedDos};

use crate::qe_post::{append, broadening, fortran_e, write, EnergyGrid};
use crate::qe_workflow::{self, default_outdir, SavedNscf};
use crate::{dos_plot, picture};

/// projwfc.x: the files of the module doc, or the message to print.
pub(crate) fn run(p: &ProjwfcX) -> Result<String, String> {
    let save = p.save.dir(default_outdir().as_deref());
    let missing = "run the nscf step first (a pw.x input with calculation = 'nscf', the same prefix and outdir)";
    let nscf: SavedNscf = qe_workflow::read_json(&save.join(qe_workflow::NSCF), missing)?;
    let grid = EnergyGrid {
        bz_sum: None,
        degauss: p.degauss,
        ngauss: p.ngauss,
        delta_e: p.delta_e,
        range: p.range,
    };
    let how = broadening(&grid, &nscf, &p.save.source)?;
    let source = p.save.source.display();
    let total = dos::from_grid(&nscf.bands, &how).map_err(|e| format!("{source}: {e}"))?;
    let projected = pdos::from_grid(&nscf.bands, &how)
        .map_err(|e| format!("{source}: {e}"))?
        .ok_or_else(|| format!("{source}: the nscf step's pseudopotentials have no atomic wavefunctions (PP_PSWFC) to project on, or are ultrasoft or PAW (projections with the overlap S are not implemented yet); use norm-conserving UPF files with atomic wavefunctions (PseudoDojo's have them, SG15's do not)"))?;
    let mut written = vec![append(&p.filpdos, ".pdos_tot")];
    write(&written[0], &total_columns(&total, &projected))?;
    for mut members in projected.by_radial_orbital() {
        members.sort_by_key(|&a| qe_m_order(projected.orbitals[a].l, projected.orbitals[a].m));
        let o = &projected.orbitals[members[0]];
        let letter = ["s", "p", "d", "f"][o.l.min(3)];
        let name = format!(
            ".pdos_atm#{}({})_wfc#{}({letter})",
            o.atom + 1,
            o.species,
            o.wfc + 1
        );
        let path = append(&p.filpdos, &name);
        write(&path, &orbital_columns(&projected, &members))?;
        written.push(path);
    }
    let json = document(p, &nscf, total, &projected)?;
    Ok(format!(
        "{}\nprojected DOS on {} atomic orbitals written to {} and {} more files beside it, and {}",
        charges(&projected),
        projected.orbitals.len(),
        written[0].display(),
        written.len() - 1,
        json.display()
    ))
}

/// `<filpdos>.json` and its picture; the JSON's path.
fn document(
    p: &ProjwfcX,
    nscf: &SavedNscf,
    total: dos::Dos,
    projected: &ProjectedDos,
) -> Result<PathBuf, String> {
    let fermi = nscf.fermi_level_ha.map(|f| f * EV_PER_HARTREE);
    let mut doc = dos::Dos {
        projected: Some(projected.clone()),
        ..total
    }
    .to_json();
    doc["fermi_ev"] = serde_json::json!(fermi);
    let json = append(&p.filpdos, ".json");
    let text = serde_json::to_string_pretty(&doc).expect("the DOS serialises");
    write(&json, &text)?;
    let title = format!(
        "{}: projected DOS",
        p.save.prefix.as_deref().unwrap_or("pwscf")
    );
    let picture = dos_plot::DosPicture {
        doc: &doc,
        title: &title,
    };
    picture::write_both(&picture, &json, "pdos")?;
    Ok(json)
}

/// Where projwfc.x puts the real harmonic of index `m` (0..2l, planewave's order m = -l..l):
/// m = 0 first, then +1, -1, +2, -2, ... (QE's `ylmr2`: z, then x, y for p).
fn qe_m_order(l: usize, m: usize) -> usize {
    let signed = m as i64 - l as i64;
    match signed {
        0 => 0,
        s if s > 0 => 2 * s as usize - 1,
        s => 2 * s.unsigned_abs() as usize,
    }
}

/// projwfc.x's summary: the Löwdin charges per atom and l, and the spilling parameter.
fn charges(p: &ProjectedDos) -> String {
    let mut text = String::from("Lowdin charges (electrons):\n");
    for (key, members) in p.by_atom_and_l() {
        let q: f64 = members.iter().map(|&a| p.charges[a]).sum();
        let _ = writeln!(text, "  {key:<12} {q:8.4}");
    }
    let _ = write!(text, "spilling parameter: {:.4}", p.spilling);
    text
}

/// The rows of `energies` with `columns(i)` in eV⁻¹ after E, as projwfc.x prints them.
fn rows(energies: &[f64], header: &str, columns: impl Fn(usize) -> Vec<f64>) -> String {
    let mut text = format!("{header}\n");
    for (i, e) in energies.iter().enumerate() {
        let _ = write!(text, "{:8.3}", e * EV_PER_HARTREE);
        for v in columns(i) {
            let _ = write!(text, "{}", fortran_e(v / EV_PER_HARTREE, 11, 3));
        }
        text.push('\n');
    }
    text
}

/// `pdos_tot`: E, the DOS and the projections' sum, per spin.
fn total_columns(total: &dos::Dos, p: &ProjectedDos) -> String {
    let all: Vec<usize> = (0..p.orbitals.len()).collect();
    let sums: Vec<Vec<f64>> = (0..p.dos.len()).map(|s| p.summed(s, &all)).collect();
    let header = match p.dos.len() {
        1 => "# E (eV)  dos(E)    pdos(E)",
        _ => "# E (eV)  dosup(E)   dosdw(E)  pdosup(E)  pdosdw(E)",
    };
    rows(&p.energies, header, |i| {
        let d = total.dos.iter().map(|d| d[i]);
        d.chain(sums.iter().map(|s| s[i])).collect()
    })
}

/// One radial orbital's file: E, its DOS (summed over m), then each m, per spin.
fn orbital_columns(p: &ProjectedDos, members: &[usize]) -> String {
    let nspin = p.dos.len();
    let ldos: Vec<Vec<f64>> = (0..nspin).map(|s| p.summed(s, members)).collect();
    let mut header = String::from("# E (eV)  ");
    if nspin == 1 {
        header.push_str(" ldos(E)  ");
        members.iter().for_each(|_| header.push_str(" pdos(E)   "));
    } else {
        header.push_str("ldosup(E)  ldosdw(E) ");
        for m in 1..=members.len() {
            let _ = write!(header, "pdos{m}up(E) pdos{m}dw(E) ");
        }
    }
    rows(&p.energies, header.trim_end_matches('\n'), |i| {
        let per_m = members
            .iter()
            .flat_map(|&a| (0..nspin).map(move |s| p.dos[s][a][i]));
        (0..nspin).map(|s| ldos[s][i]).chain(per_m).collect()
    })
}
