//! Projected densities of states: the DOS of each atomic orbital, as projwfc.x gives it.
//!
//! Contract: [`from_grid`] weighs every state of a [`GridBands`] by its Löwdin projection on
//! each orbital ([`crate::projections`]) and broadens or integrates the result as
//! [`dos::from_grid`] does the total, on the same energies: a smearing's delta
//! `D_a(E) = f Σ_k w_k Σ_n |p_a|² δ((e - E)/s) / s`, or tetrahedra with each
//! corner's share of the DOS ([`tetrahedron::projected_dos`]). `dos[spin][orbital][i]` is in
//! states per Ha per cell; the orbitals' sum falls short of the total by the spilling. Serial.

use serde_json::{json, Map, Value};

use crate::dos::{self, Broadening, GridBands};
use crate::input::units::EV_PER_HARTREE;
use crate::projections::Orbital;
use crate::smearing::{Smearing, SmearingFunction};
use crate::tetrahedra as tetrahedron;

/// The DOS of every atomic orbital.
#[derive(Debug, Clone)]
pub struct ProjectedDos {
    /// The energies (Ha), those of the total DOS.
    pub energies: Vec<f64>,
    /// The orbitals, one per (atom, radial orbital, m).
    pub orbitals: Vec<Orbital>,
    /// `dos[spin][orbital][i]`: states per Ha per cell.
    pub dos: Vec<Vec<Vec<f64>>>,
    /// The spilling parameter of the bands on the grid.
    pub spilling: f64,
    /// Löwdin charges per orbital (electrons).
    pub charges: Vec<f64>,
}

/// The projected DOS of `g` as `how` says; None when `g` has no projections.
pub fn from_grid(g: &GridBands, how: &Broadening) -> Result<Option<ProjectedDos>, String> {
    let Some(p) = &g.projections else {
        return Ok(None);
    };
    let energies = dos::energies_of(g, how);
    let factor = 2.0 / g.eigenvalues.len() as f64;
    let n = p.orbitals.len();
    let dos = match dos::tetrahedra_of(g, how)? {
        None => (g.eigenvalues.iter().zip(&p.weights))
            .map(|(e, w)| broadened(e, w, &g.weights, n, factor, how.smearing(), &energies))
            .collect(),
        Some((tets, map, interpolation)) => (g.eigenvalues.iter().zip(&p.weights))
            .map(|(e, w)| {
                tetrahedron::projected_dos(
                    &tets,
                    interpolation,
                    |q| &e[map[q]][..],
                    |q, band| &w[map[q]][band][..],
                    n,
                    factor,
                    &energies,
                )
            })
            .collect(),
    };
    Ok(Some(ProjectedDos {
        energies,
        orbitals: p.orbitals.clone(),
        dos,
        spilling: p.spilling(g.n_electrons),
        charges: p.charges.clone(),
    }))
}

/// One spin channel's broadened DOS per orbital: `eigenvalues[k][band]`,
/// `proj[k][band][orbital]`.
fn broadened(
    eigenvalues: &[Vec<f64>],
    proj: &[Vec<Vec<f64>>],
    kweights: &[f64],
    n: usize,
    factor: f64,
    smearing: Smearing,
    energies: &[f64],
) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; energies.len()]; n];
    let width = smearing.width();
    for ((bands, p), w) in eigenvalues.iter().zip(proj).zip(kweights) {
        for (e, pa) in bands.iter().zip(p) {
            for i in crate::dos::reached(energies, smearing, *e) {
                let g = w * factor * smearing.delta((e - energies[i]) / width) / width;
                for (o, x) in out.iter_mut().zip(pa) {
                    o[i] += g * x;
                }
            }
        }
    }
    out
}

impl ProjectedDos {
    /// The orbitals grouped as projwfc.x's files are: per atom and radial orbital, the
    /// indices of its m components.
    pub fn by_radial_orbital(&self) -> Vec<Vec<usize>> {
        group(&self.orbitals, |o| (o.atom, o.wfc))
    }

    /// The orbitals grouped per atom and l (every radial orbital of that l), as
    /// `"atom:element:l"` keys name them (atoms from 1, l as s, p, d, f).
    pub fn by_atom_and_l(&self) -> Vec<(String, Vec<usize>)> {
        group(&self.orbitals, |o| (o.atom, o.l))
            .into_iter()
            .map(|members| {
                let o = &self.orbitals[members[0]];
                let letter = ["s", "p", "d", "f"][o.l.min(3)];
                (format!("{}:{}:{letter}", o.atom + 1, o.species), members)
            })
            .collect()
    }

    /// The document: per `"atom:element:l"` the DOS in states/eV per cell (`[spin][i]`, on the
    /// total's energies) and the Löwdin charge, the orbitals' sum, and the spilling.
    pub fn to_json(&self) -> Value {
        let per_ev = |d: Vec<f64>| -> Vec<f64> { d.iter().map(|x| x / EV_PER_HARTREE).collect() };
        let channels = 0..self.dos.len();
        let (mut pdos, mut charges) = (Map::new(), Map::new());
        for (key, members) in self.by_atom_and_l() {
            let d: Vec<Vec<f64>> = channels
                .clone()
                .map(|s| per_ev(self.summed(s, &members)))
                .collect();
            pdos.insert(key.clone(), json!(d));
            charges.insert(
                key,
                json!(members.iter().map(|&a| self.charges[a]).sum::<f64>()),
            );
        }
        let all: Vec<usize> = (0..self.orbitals.len()).collect();
        let sum: Vec<Vec<f64>> = channels.map(|s| per_ev(self.summed(s, &all))).collect();
        json!({
            "pdos_per_ev": pdos,
            "pdos_sum_per_ev": sum,
            "lowdin_charges": charges,
            "spilling": self.spilling,
        })
    }

    /// The sum of `dos[spin][a]` over the orbitals `members`.
    pub fn summed(&self, spin: usize, members: &[usize]) -> Vec<f64> {
        let mut out = vec![0.0; self.energies.len()];
        for &a in members {
            out.iter_mut()
                .zip(&self.dos[spin][a])
                .for_each(|(o, x)| *o += x);
        }
        out
    }
}

/// Indices of `orbitals` grouped by `key`, in order of first appearance.
fn group<K: PartialEq>(orbitals: &[Orbital], key: impl Fn(&Orbital) -> K) -> Vec<Vec<usize>> {
    let mut keys: Vec<K> = Vec::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, o) in orbitals.iter().enumerate() {
        let k = key(o);
        match keys.iter().position(|x| *x == k) {
            Some(j) => out[j].push(i),
            None => {
                keys.push(k);
                out.push(vec![i]);
            }
        }
    }
    out
}
