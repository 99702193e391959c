//! The results JSON: a stable set of top-level keys other tools read (see the README), plus
//! details (energy terms, k-points, grid).

use crate::energies::Energies;
use crate::forces::Forces;
use crate::relax::RelaxResult;
use crate::scf::ScfResult;
use crate::setup::Setup;
use crate::stress::{Stress, HA_PER_BOHR3_IN_GPA};
use serde_json::{json, Value};

/// The version of this document's layout, apart from the program's: raised when a key is
/// removed, renamed or changes meaning (new keys keep it), so that tools reading the file can tell.
pub const SCHEMA_VERSION: u32 = 1;

/// The structure of a set-up: lattice rows (bohr), species and fractional positions per atom.
fn structure(setup: &Setup) -> Value {
    let c = &setup.model.crystal;
    json!({
        "lattice_bohr": c.lattice,
        "species": c.atoms.iter().map(|a| setup.model.species[a.species].symbol.clone()).collect::<Vec<_>>(),
        "positions_frac": c.atoms.iter().map(|a| a.frac).collect::<Vec<_>>(),
        "volume_bohr3": c.volume,
    })
}

/// Build the results document of a finished SCF, with forces and stress when computed
/// (`forces_ha_per_bohr`: one [x, y, z] per atom; `stress_ha_per_bohr3`: 3x3, QE sign,
/// pressure = trace/3).
pub fn to_json(
    setup: &Setup,
    r: &ScfResult,
    forces: Option<&Forces>,
    stress: Option<&Stress>,
) -> Value {
    let mut doc = scf_json(setup, r);
    doc["structure"] = structure(setup);
    if let Some(f) = forces {
        doc["forces_ha_per_bohr"] = json!(f.total);
        doc["max_force_ha_per_bohr"] = json!(f.max_norm());
        doc["force_terms_ha_per_bohr"] = Value::Object(
            f.terms
                .iter()
                .map(|(n, v)| (n.to_string(), json!(v)))
                .collect(),
        );
        doc["force_seconds"] = seconds(&f.seconds);
    }
    if let Some(s) = stress {
        doc["stress_ha_per_bohr3"] = json!(s.total);
        doc["pressure_ha_per_bohr3"] = json!(s.pressure());
        doc["pressure_gpa"] = json!(s.pressure() * HA_PER_BOHR3_IN_GPA);
        doc["stress_terms_ha_per_bohr3"] = Value::Object(
            s.terms
                .iter()
                .map(|(n, v)| (n.to_string(), json!(v)))
                .collect(),
        );
        doc["stress_seconds"] = seconds(&s.seconds);
    }
    doc
}

/// `{"set-up": 0.1, "local": 0.02, ...}` (rank 0's seconds per term).
fn seconds(per_term: &[(&'static str, f64)]) -> Value {
    Value::Object(
        (per_term.iter())
            .map(|(n, t)| (n.to_string(), json!(t)))
            .collect(),
    )
}

/// The results document of a relaxation: the final structure's SCF, forces and stress as in
/// [`to_json`], plus `relaxation` (converged flag and one entry per ionic step).
pub fn relax_to_json(r: &RelaxResult) -> Value {
    let mut doc = to_json(&r.setup, &r.scf, Some(&r.forces), r.stress.as_ref());
    doc["relaxation"] = json!({
        "converged": r.converged,
        "ionic_steps": r.steps.len(),
        "steps": r.steps.iter().map(|s| json!({
            "step": s.step, "energy_ha": s.energy, "enthalpy_ha": s.enthalpy,
            "max_force_ha_per_bohr": s.max_force, "pressure_ha_per_bohr3": s.pressure,
            "volume_bohr3": s.volume, "scf_iterations": s.scf_iterations, "seconds": s.seconds,
            "note": s.note,
        })).collect::<Vec<_>>(),
    });
    doc
}

/// Every term of the model by name, with `one_electron`; the terms every file has had
/// ([`STABLE_TERMS`]) are 0 where the model lacks them.
fn energy_terms(e: &Energies) -> Value {
    let mut terms: serde_json::Map<String, Value> = STABLE_TERMS
        .iter()
        .map(|n| (n.to_string(), json!(0.0)))
        .collect();
    for t in e.terms() {
        terms.insert(t.name.to_string(), json!(t.value));
    }
    terms.insert("one_electron".into(), json!(e.one_electron()));
    Value::Object(terms)
}

/// The energy terms of schema version 1, present in every file.
const STABLE_TERMS: [&str; 8] = [
    "kinetic",
    "local",
    "nonlocal",
    "hartree",
    "xc",
    "exact_exchange",
    "ewald",
    "minus_ts",
];

/// The results document of a fixed-density step (QE's `bands` or `nscf`, `calculation`):
/// the SCF document's keys for the k-points, eigenvalues, occupations and structure, with
/// `fermi_level_ha` the one the caller found (the SCF's, or the nscf grid's).
pub fn non_scf_json(
    at: &Setup,
    r: &ScfResult,
    calculation: &str,
    fermi_level: Option<f64>,
) -> Value {
    json!({
        "schema_version": SCHEMA_VERSION,
        "program": "planewave",
        "version": env!("CARGO_PKG_VERSION"),
        "input": at.spec.source.display().to_string(),
        "calculation": calculation,
        "converged": r.converged,
        "fixed_density_iterations": r.iterations,
        "functional": at.model.functional.name(),
        "fermi_level_ha": fermi_level,
        "n_electrons": at.model.n_electrons,
        "nspin": at.model.nspin(),
        "nbands": at.params.nbands,
        "kpoints": kpoint_list(at),
        "eigenvalues_ha": r.eigenvalues,
        "occupations": r.occupations.occ,
        "fft_grid": at.basis.grid.dims,
        "band_fft_grid": at.basis.band_fft().grid().dims,
        "ecut_ha": at.basis.ecut,
        "ecut_rho_ha": at.basis.ecut_rho,
        "structure": structure(at),
    })
}

/// Every k-point: fractional coordinates, weight and plane waves.
fn kpoint_list(setup: &Setup) -> Vec<Value> {
    let k = setup.basis.kpoints.iter();
    k.map(|k| json!({"frac": k.frac, "weight": k.weight, "npw": k.npw_global()}))
        .collect()
}

fn scf_json(setup: &Setup, r: &ScfResult) -> Value {
    let e = &r.energies;
    let fermi = r.occupations.fermi.as_ref().map(|f| f[0]);
    let kpoints = kpoint_list(setup);
    json!({
        "schema_version": SCHEMA_VERSION,
        "program": "planewave",
        "version": env!("CARGO_PKG_VERSION"),
        "input": setup.spec.source.display().to_string(),
        "converged": r.converged,
        "stopped": r.stopped.map(|s| s.to_string()),
        "scf_iterations": r.iterations,
        "total_energy_ha": e.total(),
        "internal_energy_ha": e.internal(),
        "all_electron_energy_ha": setup.model.core_energy().map(|c| e.total() + c),
        "energy_terms_ha": energy_terms(e),
        "functional": setup.model.functional.name(),
        "hybrid": setup.model.hybrid.map(|h| json!({
            "exx_fraction": h.fraction, "screening_bohr_inv": h.kernel.screening,
            "x_gamma_extrapolation": h.kernel.x_gamma_extrapolation, "q_grid": h.kernel.q_grid,
        })),
        "exx_steps": r.exx_steps,
        "fermi_level_ha": fermi,
        "fermi_levels_per_spin_ha": r.occupations.fermi,
        "homo_ha": r.occupations.homo,
        "lumo_ha": r.occupations.lumo,
        "total_magnetization": if setup.model.nspin() == 2 { Some(r.magnetization.0) } else { None },
        "absolute_magnetization": if setup.model.nspin() == 2 { Some(r.magnetization.1) } else { None },
        "n_electrons": setup.model.n_electrons,
        "nspin": setup.model.nspin(),
        "nbands": setup.params.nbands,
        "kpoints": kpoints,
        "eigenvalues_ha": r.eigenvalues,
        "occupations": r.occupations.occ,
        "fft_grid": setup.basis.grid.dims,
        "band_fft_grid": setup.basis.band_fft().grid().dims,
        "ecut_ha": setup.basis.ecut,
        "ecut_rho_ha": setup.basis.ecut_rho,
        "symmetry_operations": setup.model.symmetries.len(),
        "device": setup.params.device.as_ref().map_or("cpu".to_string(), |d| d.describe()),
        "timings_s": r.timings,
        "scf_history": r.history.iter().map(|h| json!({"iteration": h.iteration, "energy_ha": h.energy, "energy_estimated": h.estimated, "residual": h.residual, "seconds": h.seconds})).collect::<Vec<_>>(),
    })
}
