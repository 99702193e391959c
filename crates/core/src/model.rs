//! `Model`: the physical system, independent of any discretisation: cell, atoms, pseudopotentials,
//! functional, spin, smearing, electron count and crystal symmetries. No cutoffs, no k-points.

use crate::crystal::Crystal;
use crate::pseudo::Pseudopotential;
use crate::smearing::Smearing;
use crate::symmetry::SymOp;
use crate::xc::Functional;
use std::path::PathBuf;

/// One chemical species and its pseudopotential.
#[derive(Debug)]
pub struct Species {
    /// Element symbol as given in the input.
    pub symbol: String,
    /// The parsed pseudopotential.
    pub pseudo: Pseudopotential,
    /// Where it was read from.
    pub path: PathBuf,
}

/// Spin treatment.
#[derive(Clone, Debug, PartialEq)]
pub enum SpinMode {
    /// Spin-unpolarised: one channel, occupations up to 2.
    None,
    /// Collinear spin: two channels; the total moment fixed (Bohr magnetons per cell) or free.
    Collinear {
        /// Fixed N_up - N_down, or `None` to let a common Fermi level decide.
        total_magnetization: Option<f64>,
    },
}

/// The physical system.
#[derive(Debug)]
pub struct Model {
    /// Cell and atoms.
    pub crystal: Crystal,
    /// Species, indexed by `Atom::species`.
    pub species: Vec<Species>,
    /// Exchange-correlation functional.
    pub functional: Functional,
    /// Occupation smearing (or none: insulator, fixed occupations).
    pub smearing: Smearing,
    /// Spin treatment.
    pub spin: SpinMode,
    /// Starting magnetisation per atom (fraction of its valence charge, in [-1, 1]).
    pub starting_magnetization: Vec<f64>,
    /// Number of valence electrons in the cell (after the net charge).
    pub n_electrons: f64,
    /// Space-group operations used for k-point reduction and density symmetrisation.
    pub symmetries: Vec<SymOp>,
    /// The exact-exchange part of a hybrid functional (None: a semilocal functional).
    pub hybrid: Option<crate::exx::Hybrid>,
}

impl Model {
    /// Number of spin channels (1 or 2).
    pub fn nspin(&self) -> usize {
        match self.spin {
            SpinMode::None => 1,
            SpinMode::Collinear { .. } => 2,
        }
    }
    /// The cores' energy summed over the atoms (Ha) when every species is PAW: what turns
    /// the pseudo total energy into QE's "total all-electron energy". None otherwise.
    pub fn core_energy(&self) -> Option<f64> {
        let per_species: Option<Vec<f64>> = self
            .species
            .iter()
            .map(|s| s.pseudo.paw().map(|p| p.core_energy))
            .collect();
        let per_species = per_species?;
        Some(
            self.crystal
                .atoms
                .iter()
                .map(|a| per_species[a.species])
                .sum(),
        )
    }
    /// Maximal occupation of one state (2 without spin, 1 with).
    pub fn max_occupation(&self) -> f64 {
        if self.nspin() == 1 {
            2.0
        } else {
            1.0
        }
    }
    /// Valence charge of each atom.
    pub fn atom_charges(&self) -> Vec<f64> {
        self.crystal
            .atoms
            .iter()
            .map(|a| self.species[a.species].pseudo.z_valence)
            .collect()
    }
    /// The pseudopotential of atom `i`.
    pub fn pseudo_of_atom(&self, i: usize) -> &Pseudopotential {
        &self.species[self.crystal.atoms[i].species].pseudo
    }
}
