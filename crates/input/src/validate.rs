//! Checks on a converted [`RunSpec`] that do not need the pseudopotentials.
//!
//! Each check reports an [`InputError`] naming the key as the user wrote it in
//! their format ([`KeyNames`]) and the line when the reader recorded it ([`Lines`]).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{InputError, Kpoints, RunSpec, Smearing, Spin};

/// Smallest allowed distance between two atoms (bohr).
pub(crate) const MIN_ATOM_DISTANCE: f64 = 0.5;
/// Largest cutoff we accept (Ha).
pub(crate) const MAX_ECUT: f64 = 1.0e4;

/// How each checked quantity is called in the input format.
pub struct KeyNames {
    pub lattice: &'static str,
    pub atoms: &'static str,
    pub species: &'static str,
    pub ecut: &'static str,
    pub ecut_rho: &'static str,
    pub kpoints: &'static str,
    pub smearing_width: &'static str,
    pub magnetization: &'static str,
    pub total_magnetization: &'static str,
    pub charge: &'static str,
    pub nbands: &'static str,
    pub fft_grid: &'static str,
    pub energy_tolerance: &'static str,
    pub density_tolerance: &'static str,
    pub max_iterations: &'static str,
    pub mixing_beta: &'static str,
    pub mixing_depth: &'static str,
    pub kerker_q0: &'static str,
    pub functional: &'static str,
    pub smearing: &'static str,
    pub spin: &'static str,
}

/// Key names of the TOML format.
pub(crate) const TOML_KEYS: KeyNames = KeyNames {
    lattice: "structure.lattice",
    atoms: "structure.atoms",
    species: "species",
    ecut: "basis.ecut",
    ecut_rho: "basis.ecut_rho",
    kpoints: "basis.kpoints",
    smearing_width: "model.smearing_width",
    magnetization: "magnetization",
    total_magnetization: "model.total_magnetization",
    charge: "model.charge",
    nbands: "basis.nbands",
    fft_grid: "basis.fft_grid",
    energy_tolerance: "scf.energy_tolerance",
    density_tolerance: "scf.density_tolerance",
    max_iterations: "scf.max_iterations",
    mixing_beta: "scf.mixing.beta",
    mixing_depth: "scf.mixing.depth",
    kerker_q0: "scf.mixing.kerker_q0",
    functional: "model.functional",
    smearing: "model.smearing",
    spin: "model.spin",
};

/// Key names of the QE pw.x format.
pub(crate) const QE_KEYS: KeyNames = KeyNames {
    lattice: "CELL_PARAMETERS",
    atoms: "ATOMIC_POSITIONS",
    species: "ATOMIC_SPECIES",
    ecut: "ecutwfc",
    ecut_rho: "ecutrho",
    kpoints: "K_POINTS",
    smearing_width: "degauss",
    magnetization: "starting_magnetization",
    total_magnetization: "tot_magnetization",
    charge: "tot_charge",
    nbands: "nbnd",
    fft_grid: "nr1",
    energy_tolerance: "conv_thr",
    density_tolerance: "conv_thr",
    max_iterations: "electron_maxstep",
    mixing_beta: "mixing_beta",
    mixing_depth: "mixing_ndim",
    kerker_q0: "mixing_mode",
    functional: "input_dft",
    smearing: "occupations",
    spin: "nspin",
};

/// Line numbers the reader recorded.
#[derive(Default)]
pub(crate) struct Lines {
    /// Keyed by the names in [`KeyNames`].
    pub keys: HashMap<String, usize>,
    /// Line of each atom, in atom order.
    pub atoms: Vec<Option<usize>>,
    /// Line of each species entry.
    pub species: HashMap<String, usize>,
}

impl KeyNames {
    /// Where the entry of species `sym` belongs, as the user would write it.
    fn species_entry(&self, sym: &str) -> String {
        if self.species == "species" {
            format!("[species.{sym}]")
        } else {
            format!("a `{sym}` line in {}", self.species)
        }
    }
}

impl Lines {
    /// What later stages need to point back at the input.
    pub(crate) fn origin(&self, format: super::InputFormat) -> super::Origin {
        super::Origin {
            format,
            lines: self.keys.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            species_lines: self.species.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        }
    }
    fn key(&self, k: &str) -> Option<usize> {
        self.keys.get(k).copied()
    }
    fn atom(&self, i: usize) -> Option<usize> {
        self.atoms.get(i).copied().flatten()
    }
}

fn err(file: &Path, key: &str, line: Option<usize>, msg: impl Into<String>) -> InputError {
    InputError::new(file, msg).with_key(key).at_line(line)
}

/// Determinant of a 3x3 matrix.
pub(crate) fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

fn norm(v: &[f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Whether the lattice (rows a1, a2, a3) is singular or nearly so.
pub(crate) fn is_singular(lattice: &[[f64; 3]; 3]) -> bool {
    let prod = norm(&lattice[0]) * norm(&lattice[1]) * norm(&lattice[2]);
    let det = det3(lattice);
    !(prod.is_finite() && det.is_finite() && prod > 0.0 && det.abs() > 1e-6 * prod)
}

/// Inverse of a non-singular 3x3 matrix.
pub(crate) fn inverse3(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let d = det3(m);
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            // cofactor C_ji / det
            let (r0, r1) = ((j + 1) % 3, (j + 2) % 3);
            let (c0, c1) = ((i + 1) % 3, (i + 2) % 3);
            *x = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / d;
        }
    }
    inv
}

/// Fractional coordinates of a Cartesian position (same length unit as the lattice rows).
pub(crate) fn cart_to_frac(lattice: &[[f64; 3]; 3], cart: [f64; 3]) -> [f64; 3] {
    // cart = sum_i frac_i a_i = frac^T L  =>  frac = cart L^{-1}
    let inv = inverse3(lattice);
    let mut f = [0.0; 3];
    for (j, fj) in f.iter_mut().enumerate() {
        *fj = (0..3).map(|i| cart[i] * inv[i][j]).sum();
    }
    f
}

/// Shortest distance (bohr) between fractional positions `a` and `b`, over
/// periodic images; with `same_atom` the zero translation is excluded.
pub(crate) fn min_image_distance(
    lattice: &[[f64; 3]; 3],
    a: [f64; 3],
    b: [f64; 3],
    same_atom: bool,
) -> f64 {
    let mut d = [0.0; 3];
    for k in 0..3 {
        let x = b[k] - a[k];
        d[k] = x - x.round();
    }
    let mut best = f64::INFINITY;
    for n0 in -1i32..=1 {
        for n1 in -1i32..=1 {
            for n2 in -1i32..=1 {
                let shifted = [d[0] + n0 as f64, d[1] + n1 as f64, d[2] + n2 as f64];
                if same_atom && shifted.iter().all(|x| x.abs() < 1e-12) {
                    continue;
                }
                let mut c = [0.0; 3];
                for (k, ck) in c.iter_mut().enumerate() {
                    *ck = (0..3).map(|i| shifted[i] * lattice[i][k]).sum();
                }
                best = best.min(norm(&c));
            }
        }
    }
    best
}

/// The density cutoff: at least 4 times the wavefunctions' (the density of two bands holds
/// that much), and exactly that with a hybrid functional (its exchange kernel lives on the
/// density sphere of 4 `ecut` so far).
fn check_ecut_rho(
    spec: &RunSpec,
    file: &Path,
    names: &KeyNames,
    lines: &Lines,
) -> Result<(), InputError> {
    let Some(rho) = spec.ecut_rho else {
        return Ok(());
    };
    let four = 4.0 * spec.ecut;
    let at = |msg: String| err(file, names.ecut_rho, lines.key(names.ecut_rho), msg);
    if !rho.is_finite() || rho < four * (1.0 - 1e-9) {
        return Err(at(format!(
            "the density cutoff {rho} Ha ({} Ry) is below 4 times the wavefunction cutoff, {four} Ha",
            2.0 * rho
        ))
        .with_hint("leave it out (4 times the wavefunction cutoff is the default) or raise it"));
    }
    if spec.hybrid.is_some() && rho > four * (1.0 + 1e-9) {
        return Err(at(format!(
            "a hybrid functional needs the density cutoff at 4 times the wavefunction cutoff ({four} Ha), not {rho} Ha"
        ))
        .with_hint("leave the density cutoff out"));
    }
    Ok(())
}

/// Runs every check on `spec`.
pub(crate) fn validate(spec: &RunSpec, names: &KeyNames, lines: &Lines) -> Result<(), InputError> {
    let file = spec.source.as_path();

    // Lattice.
    if spec.lattice.iter().flatten().any(|x| !x.is_finite()) {
        return Err(err(
            file,
            names.lattice,
            lines.key(names.lattice),
            "lattice vectors must be finite numbers",
        ));
    }
    if is_singular(&spec.lattice) {
        return Err(err(
            file,
            names.lattice,
            lines.key(names.lattice),
            format!(
                "the lattice vectors are (nearly) linearly dependent: cell volume {:.3e} bohr^3",
                det3(&spec.lattice).abs()
            ),
        )
        .with_hint("rows are a1, a2, a3; check for a repeated or zero vector"));
    }

    // Atoms and species.
    if spec.atoms.is_empty() {
        return Err(
            err(file, names.atoms, lines.key(names.atoms), "no atoms given")
                .with_hint("a calculation needs at least one atom"),
        );
    }
    let mut seen = HashSet::new();
    for sp in &spec.species {
        if !seen.insert(sp.symbol.as_str()) {
            return Err(err(
                file,
                names.species,
                lines
                    .species
                    .get(&sp.symbol)
                    .copied()
                    .or(lines.key(names.species)),
                format!("species `{}` is defined more than once", sp.symbol),
            )
            .with_hint("give each species exactly one entry"));
        }
    }
    for (i, atom) in spec.atoms.iter().enumerate() {
        if !seen.contains(atom.species.as_str()) {
            let known: Vec<&str> = spec.species.iter().map(|s| s.symbol.as_str()).collect();
            let hint = super::error::did_you_mean(&atom.species, known.iter().copied())
                .unwrap_or_else(|| {
                    format!(
                        "add {} with its pseudopotential",
                        names.species_entry(&atom.species)
                    )
                });
            return Err(err(
                file,
                names.atoms,
                lines.atom(i),
                format!(
                    "atom {} has species `{}`, an element without a pseudo: there is no {}",
                    i + 1,
                    atom.species,
                    names.species_entry(&atom.species)
                ),
            )
            .with_hint(hint));
        }
        if atom.frac.iter().any(|x| !x.is_finite()) {
            return Err(err(
                file,
                names.atoms,
                lines.atom(i),
                format!(
                    "atom {} ({}) has a non-finite position",
                    i + 1,
                    atom.species
                ),
            ));
        }
    }
    for i in 0..spec.atoms.len() {
        let ai = &spec.atoms[i];
        for j in i..spec.atoms.len() {
            let aj = &spec.atoms[j];
            let d = min_image_distance(&spec.lattice, ai.frac, aj.frac, i == j);
            if d < MIN_ATOM_DISTANCE {
                let msg = if i == j {
                    format!(
                        "atom {} ({}) is {:.4} bohr from its own periodic image (minimum {} bohr): the cell is too small",
                        i + 1,
                        ai.species,
                        d,
                        MIN_ATOM_DISTANCE
                    )
                } else {
                    format!(
                        "atoms {} ({}) and {} ({}) are {:.4} bohr apart (minimum image; minimum allowed {} bohr)",
                        i + 1,
                        ai.species,
                        j + 1,
                        aj.species,
                        d,
                        MIN_ATOM_DISTANCE
                    )
                };
                return Err(err(file, names.atoms, lines.atom(j), msg)
                    .with_hint("check the coordinates and their unit (fractional vs Cartesian, bohr vs angstrom)"));
            }
        }
    }

    // Cutoff.
    let ecut_line = lines.key(names.ecut);
    if !spec.ecut.is_finite() || spec.ecut <= 0.0 {
        return Err(err(
            file,
            names.ecut,
            ecut_line,
            format!("the cutoff must be positive, got {} Ha", spec.ecut),
        )
        .with_hint(
            "typical cutoffs are 10-50 Ha (20-100 Ry) for norm-conserving pseudopotentials",
        ));
    }
    if spec.ecut > MAX_ECUT {
        return Err(err(
            file,
            names.ecut,
            ecut_line,
            format!(
                "a cutoff of {} Ha is absurd (more than {} Ha)",
                spec.ecut, MAX_ECUT
            ),
        )
        .with_hint("cutoffs are in Ha unless a unit is given; typical values are 10-100 Ha"));
    }

    check_ecut_rho(spec, file, names, lines)?;

    // k-points.
    let kline = lines.key(names.kpoints);
    match &spec.kpoints {
        Kpoints::Gamma => {}
        Kpoints::MonkhorstPack { grid, .. } => {
            if grid.contains(&0) {
                return Err(err(
                    file,
                    names.kpoints,
                    kline,
                    format!("k-point grid {:?} has a zero entry", grid),
                )
                .with_hint(
                    "use at least 1 point per direction (1 1 1 = Gamma-centred single point)",
                ));
            }
        }
        Kpoints::Explicit(list) => {
            if list.is_empty() {
                return Err(err(file, names.kpoints, kline, "the k-point list is empty"));
            }
            for (n, (k, w)) in list.iter().enumerate() {
                if k.iter().any(|x| !x.is_finite()) || !w.is_finite() || *w < 0.0 {
                    return Err(err(
                        file,
                        names.kpoints,
                        kline,
                        format!(
                            "k-point {} has a non-finite coordinate or a negative weight",
                            n + 1
                        ),
                    ));
                }
            }
            let sum: f64 = list.iter().map(|(_, w)| w).sum();
            if (sum - 1.0).abs() > 1e-9 {
                return Err(err(
                    file,
                    names.kpoints,
                    kline,
                    format!("k-point weights sum to {sum}, not 1"),
                ));
            }
        }
    }

    // Smearing.
    if spec.smearing != Smearing::None {
        let w = spec.smearing.width();
        if !w.is_finite() || w <= 0.0 {
            return Err(err(
                file,
                names.smearing_width,
                lines.key(names.smearing_width),
                format!("the smearing width must be positive when smearing is on, got {w} Ha"),
            )
            .with_hint("e.g. 0.01 Ha; or switch smearing off"));
        }
    }

    // Spin.
    if let Spin::Collinear {
        starting_magnetization,
        total_magnetization,
    } = &spec.spin
    {
        if starting_magnetization.len() != spec.atoms.len() {
            return Err(err(
                file,
                names.magnetization,
                lines.key(names.magnetization),
                format!(
                    "{} starting magnetisations for {} atoms",
                    starting_magnetization.len(),
                    spec.atoms.len()
                ),
            ));
        }
        for (i, m) in starting_magnetization.iter().enumerate() {
            if !m.is_finite() || !(-1.0..=1.0).contains(m) {
                return Err(err(
                    file,
                    names.magnetization,
                    lines.key(names.magnetization).or(lines.atom(i)),
                    format!(
                        "starting magnetisation {} of atom {} ({}) is outside [-1, 1]",
                        m,
                        i + 1,
                        spec.atoms[i].species
                    ),
                )
                .with_hint("it is a fraction of the atom's valence charge, like QE's starting_magnetization"));
            }
        }
        if let Some(t) = total_magnetization {
            if !t.is_finite() {
                return Err(err(
                    file,
                    names.total_magnetization,
                    lines.key(names.total_magnetization),
                    "total magnetisation must be finite",
                ));
            }
        }
    }

    if !spec.charge.is_finite() {
        return Err(err(
            file,
            names.charge,
            lines.key(names.charge),
            "the charge must be a finite number",
        ));
    }
    if spec.nbands == Some(0) {
        return Err(err(
            file,
            names.nbands,
            lines.key(names.nbands),
            "the number of bands must be at least 1",
        )
        .with_hint("leave it out to let planewave choose"));
    }

    // SCF controls.
    let scf = &spec.scf;
    let positive = [
        (names.energy_tolerance, scf.energy_tolerance),
        (names.density_tolerance, scf.density_tolerance),
    ];
    for (key, v) in positive {
        if !v.is_finite() || v <= 0.0 {
            return Err(err(
                file,
                key,
                lines.key(key),
                format!("must be a positive number, got {v}"),
            ));
        }
    }
    if scf.max_iterations == 0 {
        return Err(err(
            file,
            names.max_iterations,
            lines.key(names.max_iterations),
            "must be at least 1",
        ));
    }
    if !(scf.mixing.beta.is_finite() && scf.mixing.beta > 0.0 && scf.mixing.beta <= 1.0) {
        return Err(err(
            file,
            names.mixing_beta,
            lines.key(names.mixing_beta),
            format!(
                "the mixing parameter must be in (0, 1], got {}",
                scf.mixing.beta
            ),
        ));
    }
    if scf.mixing.depth == 0 {
        return Err(err(
            file,
            names.mixing_depth,
            lines.key(names.mixing_depth),
            "the mixing history depth must be at least 1",
        ));
    }
    if let Some(q0) = scf
        .mixing
        .kerker_q0
        .filter(|q| !(q.is_finite() && *q >= 0.0))
    {
        return Err(err(
            file,
            names.kerker_q0,
            lines.key(names.kerker_q0),
            format!("must be >= 0 (1/bohr; 0 disables Kerker), got {q0}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_and_frac() {
        let l = [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]];
        let f = cart_to_frac(&l, [2.565, 2.565, 2.565]);
        for x in f {
            assert!((x - 0.25).abs() < 1e-12);
        }
        assert!(det3(&l) < 0.0 || det3(&l) > 0.0);
    }

    #[test]
    fn singular() {
        assert!(is_singular(&[
            [1.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [0.0, 0.0, 1.0]
        ]));
        assert!(is_singular(&[[0.0; 3], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]));
        assert!(!is_singular(&[
            [0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0]
        ]));
    }

    #[test]
    fn minimum_image() {
        let l = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]];
        let d = min_image_distance(&l, [0.01, 0.0, 0.0], [0.99, 0.0, 0.0], false);
        assert!((d - 0.2).abs() < 1e-12);
        let d = min_image_distance(&l, [0.3, 0.3, 0.3], [0.3, 0.3, 0.3], true);
        assert!((d - 10.0).abs() < 1e-12);
    }
}
