"""planewave: plane-wave pseudopotential Kohn-Sham DFT (safe Rust), from Python.

Two routes:

- :class:`planewave.ase.Planewave`, an ASE calculator (energy, forces, stress);
- :func:`run` (planewave's TOML input as text) and :func:`calculate` (a structure and
  parameters), both returning a :class:`Result`.

Units: planewave works in Hartree atomic units; :class:`Result` gives both (``*_ha``,
``*_ev``, ...). The unit constants are planewave's (CODATA 2018): :data:`EV_PER_HARTREE`,
:data:`ANGSTROM_PER_BOHR`.

Errors in the input or the set-up raise ``ValueError`` with the message ``planewave run``
prints; a failing SCF raises ``RuntimeError``; Ctrl-C stops the SCF after its current
iteration and raises ``KeyboardInterrupt``. The GIL is released while planewave computes.
"""

import json
import os

import numpy as np

from . import _input, _native
from ._native import ANGSTROM_PER_BOHR, EV_PER_HARTREE

__version__ = _native.VERSION
__all__ = ["run", "calculate", "Result", "EV_PER_HARTREE", "ANGSTROM_PER_BOHR", "make_toml"]


class Result:
    """One finished calculation: the results document and the converged state.

    ``results`` is the dict of ``planewave run``'s results JSON (keys in the README of
    planewave: ``total_energy_ha``, ``forces_ha_per_bohr``, ``stress_ha_per_bohr3`` with QE's
    sign, ``eigenvalues_ha``, ``fermi_level_ha``, ``schema_version``, ...).
    """

    def __init__(self, native):
        self._native = native
        self.results = json.loads(native.results_json)

    @property
    def converged(self):
        """Whether the SCF met its tolerances."""
        return bool(self.results["converged"])

    @property
    def restarted(self):
        """Whether the SCF started from a previous calculation's density and bands."""
        return self._native.restarted

    @property
    def energy_ha(self):
        """Total (free) energy E - TS, Ha: QE's ``! total energy``."""
        return self.results["total_energy_ha"]

    @property
    def energy_ev(self):
        """Total (free) energy E - TS, eV."""
        return self.energy_ha * EV_PER_HARTREE

    @property
    def forces_ha_per_bohr(self):
        """Forces, (natoms, 3), Ha/bohr; None when not computed."""
        f = self.results.get("forces_ha_per_bohr")
        return None if f is None else np.array(f, dtype=float)

    @property
    def forces_ev_per_angstrom(self):
        """Forces, (natoms, 3), eV/Å; None when not computed."""
        f = self.forces_ha_per_bohr
        return None if f is None else f * (EV_PER_HARTREE / ANGSTROM_PER_BOHR)

    @property
    def stress_ha_per_bohr3(self):
        """Stress tensor 3x3, Ha/bohr^3, QE's sign (-(1/V) dE/dstrain: negative when the cell
        wants to shrink; pressure = trace/3); None when not computed."""
        s = self.results.get("stress_ha_per_bohr3")
        return None if s is None else np.array(s, dtype=float)

    @property
    def stress_ev_per_angstrom3(self):
        """Stress tensor 3x3, eV/Å^3, ASE's sign ((1/V) dE/dstrain, the opposite of QE's);
        None when not computed."""
        s = self.stress_ha_per_bohr3
        return None if s is None else -s * (EV_PER_HARTREE / ANGSTROM_PER_BOHR**3)

    @property
    def eigenvalues_ha(self):
        """Eigenvalues, (nspin, nk, nbands), Ha, of the irreducible k-points
        (``results['kpoints']``)."""
        return np.array(self.results["eigenvalues_ha"], dtype=float)

    @property
    def eigenvalues_ev(self):
        """Eigenvalues, (nspin, nk, nbands), eV."""
        return self.eigenvalues_ha * EV_PER_HARTREE

    @property
    def occupations(self):
        """Occupations, (nspin, nk, nbands), electrons per state (spin factor included)."""
        return np.array(self.results["occupations"], dtype=float)

    @property
    def fermi_level_ha(self):
        """Fermi level, Ha; without smearing the highest occupied level (as QE prints)."""
        e = self.results.get("fermi_level_ha")
        return self.results.get("homo_ha") if e is None else e

    @property
    def fermi_level_ev(self):
        """Fermi level, eV; may be None."""
        e = self.fermi_level_ha
        return None if e is None else e * EV_PER_HARTREE

    @property
    def fft_grid(self):
        """The FFT grid (n1, n2, n3)."""
        return self._native.fft_grid

    def density(self):
        """The valence density on the FFT grid, electrons/bohr^3, shape (nspin, n1, n2, n3);
        element (s, i, j, k) is at the fractional point (i/n1, j/n2, k/n3)."""
        return self._native.density()


def run(toml, directory=".", name="planewave.toml", previous=None):
    """Run planewave's TOML input `toml` (text) as ``planewave run directory/name`` would
    (relative paths in it resolve against `directory`; the file need not exist).

    `previous`: a :class:`Result` whose density and bands start the SCF (a nearby geometry).
    """
    prev = previous._native if previous is not None else None
    return Result(_native.run(toml, os.fspath(directory), name, prev))


def make_toml(cell, symbols, scaled_positions, title="planewave", **parameters):
    """planewave's TOML text for a structure (cell rows in Å, one symbol per atom, fractional
    positions) and the parameters of :class:`planewave.ase.Planewave`."""
    return _input.dumps(_input.tables(cell, symbols, scaled_positions, parameters, title))


def calculate(cell, symbols, scaled_positions, previous=None, **parameters):
    """Run planewave on a structure (cell rows in Å, one symbol per atom, fractional
    positions) with the parameters of :class:`planewave.ase.Planewave`; a :class:`Result`."""
    parameters = dict(parameters)
    parameters.pop("reuse_state", None)
    text = make_toml(cell, symbols, scaled_positions, **parameters)
    return run(text, previous=previous)
