//! The results JSON: a stable set of top-level keys other tools read (see the README), plus
//! details (energy terms, k-points, grid).

use crate::scf::ScfResult;
use crate::setup::Setup;
use serde_json::{json, Value};

/// Build the results document of a finished SCF.
pub fn to_json(setup: &Setup, r: &ScfResult) -> Value {
    let e = &r.energies;
    let fermi = r.occupations.fermi.as_ref().map(|f| f[0]);
    let kpoints: Vec<Value> = setup
        .basis
        .kpoints
        .iter()
        .map(|k| json!({"frac": k.frac, "weight": k.weight, "npw": k.npw()}))
        .collect();
    json!({
        "program": "planewave",
        "version": env!("CARGO_PKG_VERSION"),
        "input": setup.spec.source.display().to_string(),
        "converged": r.converged,
        "scf_iterations": r.iterations,
        "total_energy_ha": e.total(),
        "internal_energy_ha": e.internal(),
        "energy_terms_ha": {
            "kinetic": e.kinetic, "local": e.local, "nonlocal": e.nonlocal, "hartree": e.hartree,
            "xc": e.xc, "ewald": e.ewald, "minus_ts": e.minus_ts, "one_electron": e.one_electron(),
        },
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
        "ecut_ha": setup.basis.ecut,
        "symmetry_operations": setup.model.symmetries.len(),
        "timings_s": r.timings,
        "scf_history": r.history.iter().map(|h| json!({"iteration": h.iteration, "energy_ha": h.energy, "residual": h.residual, "seconds": h.seconds})).collect::<Vec<_>>(),
    })
}
