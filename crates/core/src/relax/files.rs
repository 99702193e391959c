//! Structure files written by a relaxation: VASP 5 POSCAR (direct coordinates, Å) and extended
//! XYZ trajectory frames in ASE's conventions (Å, eV, eV/Å; `stress` in eV/Å^3 with ASE's sign,
//! which is the opposite of Quantum ESPRESSO's: positive = the cell wants to shrink).

use crate::input::units::BOHR_PER_ANGSTROM;
use crate::model::Model;
use std::fmt::Write;

/// eV per Hartree.
pub const EV_PER_HA: f64 = 27.211_386_245_988;

/// A POSCAR of `model`'s structure. Atoms are grouped by species (POSCAR requires it) in the
/// order species first appear; the original index of each written atom is returned too.
pub fn poscar(model: &Model, title: &str) -> (String, Vec<usize>) {
    let c = &model.crystal;
    let mut out = String::new();
    let _ = writeln!(out, "{}", title.replace('\n', " "));
    let _ = writeln!(out, "1.0");
    for a in &c.lattice {
        let _ = writeln!(
            out,
            "  {:20.12} {:20.12} {:20.12}",
            a[0] / BOHR_PER_ANGSTROM,
            a[1] / BOHR_PER_ANGSTROM,
            a[2] / BOHR_PER_ANGSTROM
        );
    }
    let mut order: Vec<usize> = Vec::new();
    for s in first_use_order(model) {
        order.extend((0..c.atoms.len()).filter(|&i| c.atoms[i].species == s));
    }
    let species = first_use_order(model);
    let names: Vec<&str> = species
        .iter()
        .map(|&s| model.species[s].symbol.as_str())
        .collect();
    let counts: Vec<String> = species
        .iter()
        .map(|&s| {
            c.atoms
                .iter()
                .filter(|a| a.species == s)
                .count()
                .to_string()
        })
        .collect();
    let _ = writeln!(out, "  {}", names.join(" "));
    let _ = writeln!(out, "  {}", counts.join(" "));
    let _ = writeln!(out, "Direct");
    for &i in &order {
        let f = c.atoms[i].frac;
        let _ = writeln!(out, "  {:18.12} {:18.12} {:18.12}", f[0], f[1], f[2]);
    }
    (out, order)
}

/// Species indices in the order they first appear among the atoms.
fn first_use_order(model: &Model) -> Vec<usize> {
    let mut seen = Vec::new();
    for a in &model.crystal.atoms {
        if !seen.contains(&a.species) {
            seen.push(a.species);
        }
    }
    seen
}

/// One extended-XYZ frame: positions (Å), forces (eV/Å), energy (eV), stress (eV/Å^3, ASE sign).
pub fn xyz_frame(
    model: &Model,
    energy_ha: f64,
    forces: &[[f64; 3]],
    stress_qe: Option<&[[f64; 3]; 3]>,
    step: usize,
) -> String {
    let c = &model.crystal;
    let a = |x: f64| x / BOHR_PER_ANGSTROM;
    let mut out = String::new();
    let _ = writeln!(out, "{}", c.atoms.len());
    let lattice: Vec<String> = c
        .lattice
        .iter()
        .flat_map(|r| r.iter().map(|&x| format!("{:.12}", a(x))))
        .collect();
    let _ = write!(
        out,
        "Lattice=\"{}\" Properties=species:S:1:pos:R:3:forces:R:3 energy={:.12} step={} pbc=\"T T T\"",
        lattice.join(" "),
        energy_ha * EV_PER_HA,
        step
    );
    if let Some(s) = stress_qe {
        let to_ev_a3 = EV_PER_HA * BOHR_PER_ANGSTROM.powi(3);
        let v: Vec<String> = s
            .iter()
            .flat_map(|r| r.iter().map(|&x| format!("{:.12e}", -x * to_ev_a3)))
            .collect();
        let _ = write!(out, " stress=\"{}\"", v.join(" "));
    }
    let _ = writeln!(out);
    let f_scale = EV_PER_HA * BOHR_PER_ANGSTROM;
    for (atom, f) in c.atoms.iter().zip(forces) {
        let r = c.to_cartesian(&atom.frac);
        let _ = writeln!(
            out,
            "{:<3} {:18.12} {:18.12} {:18.12} {:18.12} {:18.12} {:18.12}",
            model.species[atom.species].symbol,
            a(r[0]),
            a(r[1]),
            a(r[2]),
            f[0] * f_scale,
            f[1] * f_scale,
            f[2] * f_scale
        );
    }
    out
}
