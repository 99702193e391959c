"""planewave as an ASE calculator.

.. code-block:: python

    from ase.build import bulk
    from planewave.ase import Planewave
    si = bulk('Si', 'diamond', a=5.4293)
    si.calc = Planewave(xc='LDA', ecutwfc=30, kpts=(4, 4, 4),
                        pseudopotentials={'Si': 'Si-q4.lda.cp2k'}, pseudo_dir='examples/pseudos')
    print(si.get_potential_energy(), si.get_forces(), si.get_stress())

Parameters (QE's names and units where QE has them, ASE's otherwise):

``xc``
    'LDA' (default; Perdew-Zunger), 'PBE', 'PBE0', 'HSE06' (also 'PW', 'VWN', planewave's
    'lda_pz', 'lda_pw', 'lda_vwn', 'hse').
``ecutwfc`` / ``ecut``
    Wavefunction cutoff: ``ecutwfc`` in Ry (QE), or ``ecut`` in eV (ASE); either may also be a
    string with a unit ("30 Ry", "408 eV", "15 Ha"). Exactly one is required.
``kpts``
    (n1, n2, n3): a Gamma-centred Monkhorst-Pack grid (QE ``K_POINTS automatic n1 n2 n3 0 0 0``);
    'gamma' or None (default): the Gamma point only; ``{'size': (n1, n2, n3)}`` or
    ``{'density': d}`` (k-points per Å^-1, as ASE's), with ``'gamma': False`` for Monkhorst-Pack's
    shifted even grids and ``'even': True``.
``koffset``
    QE's k1 k2 k3 (0 or 1 each: shift by half a grid step).
``smearing``, ``degauss``
    ``smearing='mv'`` (QE's names: 'gaussian', 'mp', 'mv'/'cold', 'fd', ...) with ``degauss``
    in Ry (QE), or ``smearing=('mv', width_in_eV)``. Default: fixed occupations.
``pseudopotentials``, ``pseudo_dir``
    {symbol: file name} in ``pseudo_dir`` (default: $PLANEWAVE_PSEUDO, else $ESPRESSO_PSEUDO,
    else the current folder). Norm-conserving, ultrasoft and PAW UPF, GTH (CP2K) files.
``ecutrho``
    Density cutoff in Ry (QE's; or a string with a unit; default 4 ``ecutwfc``; ultrasoft and
    PAW files want more, typically 8 ``ecutwfc``).
``nbands``
    Bands per k-point (default: planewave's choice).
``nspin``, ``starting_magnetization``, ``tot_magnetization``
    As in QE: ``nspin=2`` for collinear spin, ``starting_magnetization={'Fe': 0.5}`` (the
    fraction of each species' valence, -1 to 1), ``tot_magnetization`` (a fixed moment, μB).
    ASE's initial magnetic moments are not read: give these instead.
``conv_thr``
    SCF energy tolerance in Ry (QE's; default planewave's 1e-8 Ha); ``density_tolerance``:
    planewave's density residual tolerance (default 1e-7).
``electron_maxstep``, ``mixing_beta``, ``tot_charge``
    As in QE (SCF iterations, mixing factor, net charge: > 0 removes electrons).
``symmetry``
    False: QE's ``nosym``.
``input_data``
    Further planewave TOML tables, merged into the input, e.g.
    ``{'scf': {'eigensolver': 'lobpcg'}}``.
``reuse_state``
    True (default): when only the positions or the cell changed, the SCF starts from the
    previous density and bands (kept in memory).

Results in ASE's units: energy and free_energy (both planewave's E - TS, QE's ``! total
energy``) in eV, forces in eV/Å, stress in eV/Å^3 with ASE's sign ((1/V) dE/dstrain, the opposite
of QE's and planewave's) and Voigt order (xx, yy, zz, yz, xz, xy). planewave's own results
(a :class:`planewave.Result`) are ``calc.result``. The unit conversions use planewave's
constants (CODATA 2018), so they undo planewave's own Å -> bohr exactly.
"""

import os

import numpy as np
from ase.calculators.calculator import (
    Calculator,
    PropertyNotImplementedError,
    SCFError,
    all_changes,
)

from . import ANGSTROM_PER_BOHR, EV_PER_HARTREE, Result, _input, _native


class Planewave(Calculator):
    """ASE calculator running planewave in this process (see the module's doc for the
    parameters)."""

    implemented_properties = ["energy", "free_energy", "forces", "stress"]
    default_parameters = {}
    discard_results_on_any_change = False

    def __init__(self, restart=None, label="planewave", atoms=None, directory=".", **kwargs):
        self.result = None
        self._previous = None
        _input.check_names(kwargs)
        super().__init__(restart=restart, label=label, atoms=atoms, directory=directory, **kwargs)

    def set(self, **kwargs):
        _input.check_names(kwargs)
        merged = dict(self.parameters or {})
        merged.update(kwargs)
        _input.check_values(merged)
        changed = super().set(**kwargs)
        if changed:
            self._previous = None
        return changed

    def toml(self, atoms=None):
        """planewave's TOML input for `atoms` (default: the calculator's) and the parameters."""
        atoms = atoms if atoms is not None else self.atoms
        if atoms is None:
            raise ValueError("no atoms: give them, or attach the calculator to an Atoms")
        return _input.dumps(
            _input.tables(
                atoms.cell.array,
                atoms.get_chemical_symbols(),
                atoms.get_scaled_positions(wrap=False),
                self.parameters,
                title=self.prefix or "planewave",
            )
        )

    def write_input(self, atoms, properties=None, system_changes=None):
        """Write the TOML to ``directory/label.toml`` (``planewave run`` can run it)."""
        super().write_input(atoms, properties, system_changes)
        with open(self._input_path(), "w") as f:
            f.write(self.toml(atoms))

    def _input_path(self):
        return os.path.join(self.directory, f"{self.prefix or 'planewave'}.toml")

    def calculate(self, atoms=None, properties=("energy",), system_changes=all_changes):
        super().calculate(atoms, properties, system_changes)
        text = self.toml(self.atoms)
        functional = _input.XC[str(self.parameters.get("xc", "LDA")).lower()]
        if "stress" in properties and functional in _input.HYBRIDS:
            raise PropertyNotImplementedError("planewave has no stress for hybrid functionals")
        previous = None
        if (
            self.parameters.get("reuse_state", True)
            and self._previous is not None
            and set(system_changes) <= {"positions", "cell"}
        ):
            previous = self._previous
        self._previous = None
        result = Result(
            _native.run(
                text,
                os.path.abspath(self.directory),
                os.path.basename(self._input_path()),
                previous._native if previous is not None else None,
            )
        )
        if not result.converged:
            raise SCFError(
                f"planewave: SCF not converged in {result.results['scf_iterations']} iterations; "
                "raise electron_maxstep or lower mixing_beta"
            )
        self.result = result
        self._previous = result
        energy = result.energy_ev
        self.results = {
            "energy": energy,
            "free_energy": energy,
            "forces": result.forces_ev_per_angstrom,
        }
        stress = result.stress_ev_per_angstrom3
        if stress is not None:
            s = stress
            self.results["stress"] = np.array([s[0, 0], s[1, 1], s[2, 2], s[1, 2], s[0, 2], s[0, 1]])

    # Convenience accessors in ASE's units.
    def get_fermi_level(self):
        """Fermi level (eV)."""
        if self.result is None:
            raise PropertyNotImplementedError("no calculation yet")
        return self.result.fermi_level_ev

    def get_ibz_k_points(self):
        """The irreducible k-points (fractional)."""
        return np.array([k["frac"] for k in self.result.results["kpoints"]])

    def get_k_point_weights(self):
        return np.array([k["weight"] for k in self.result.results["kpoints"]])

    def get_number_of_spins(self):
        return int(self.result.results["nspin"])

    def get_number_of_bands(self):
        return int(self.result.results["nbands"])

    def get_eigenvalues(self, kpt=0, spin=0):
        """Eigenvalues (eV) of irreducible k-point `kpt`, spin channel `spin`."""
        return self.result.eigenvalues_ev[spin, kpt].copy()

    def get_occupation_numbers(self, kpt=0, spin=0):
        return self.result.occupations[spin, kpt].copy()

    def get_pseudo_density(self, spin=None, pad=True):
        """The valence density on the FFT grid in electrons/Å^3 (ASE's unit), summed over spin
        unless `spin` is given."""
        rho = self.result.density() / ANGSTROM_PER_BOHR**3
        return rho.sum(axis=0) if spin is None else rho[spin]


__all__ = ["Planewave", "EV_PER_HARTREE", "ANGSTROM_PER_BOHR"]
