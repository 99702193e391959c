"""Relax the displaced Si8 cube of examples/si8_displaced.toml with ASE's BFGS.

Run from the repository root:  python python/examples/relax_si.py [si8_displaced.json]

The atoms return to the diamond sites (up to a rigid translation, which changes nothing). With
the results JSON of `planewave relax examples/si8_displaced.toml` as the argument, the relaxed
structure is also compared with the CLI's. Each step's SCF starts from the previous step's
density and bands (kept in memory by the calculator).
"""

import json
import os
import sys

import numpy as np
from ase import Atoms
from ase.optimize import BFGS
from planewave import ANGSTROM_PER_BOHR, EV_PER_HARTREE
from planewave.ase import Planewave

HERE = os.path.dirname(os.path.abspath(__file__))
PSEUDOS = os.path.join(HERE, "..", "..", "examples", "pseudos")

a = 10.26 * ANGSTROM_PER_BOHR  # the cube's edge, 10.26 bohr
frac = [
    [0.02, 0.01, 0.985],
    [0.25, 0.25, 0.25],
    [0.0, 0.5, 0.5],
    [0.24, 0.755, 0.75],
    [0.5, 0.0, 0.5],
    [0.75, 0.25, 0.75],
    [0.5, 0.5, 0.0],
    [0.75, 0.75, 0.25],
]
si8 = Atoms("Si8", cell=np.eye(3) * a, scaled_positions=frac, pbc=True)
si8.calc = Planewave(
    xc="LDA",
    ecutwfc=20,
    kpts=(2, 2, 2),
    conv_thr=2e-10,
    density_tolerance=1e-8,
    pseudopotentials={"Si": "Si-q4.lda.cp2k"},
    pseudo_dir=PSEUDOS,
)

fmax = 1e-4 * EV_PER_HARTREE / ANGSTROM_PER_BOHR  # 1e-4 Ha/bohr, the example's tolerance
BFGS(si8, logfile="-").run(fmax=fmax, steps=50)

ideal = np.array(
    [
        [0, 0, 0],
        [0.25, 0.25, 0.25],
        [0, 0.5, 0.5],
        [0.25, 0.75, 0.75],
        [0.5, 0, 0.5],
        [0.75, 0.25, 0.75],
        [0.5, 0.5, 0],
        [0.75, 0.75, 0.25],
    ]
)
d = si8.get_scaled_positions(wrap=False) - ideal
d -= np.round(d)
d -= d.mean(axis=0)  # a rigid translation is free
print(
    f"energy {si8.get_potential_energy():.8f} eV, max |F| "
    f"{np.linalg.norm(si8.get_forces(), axis=1).max():.2e} eV/A"
)
print(
    f"largest distance from the diamond sites (translation removed): {np.abs(d @ si8.cell.array).max():.2e} A"
)
if np.abs(d @ si8.cell.array).max() > 2e-3:
    sys.exit("not relaxed to the diamond structure")
if len(sys.argv) > 1:
    with open(sys.argv[1]) as f:
        cli = json.load(f)
    d = si8.get_scaled_positions(wrap=False) - np.array(cli["structure"]["positions_frac"])
    d -= np.round(d)
    d -= d.mean(axis=0)
    e_cli = cli["total_energy_ha"] * EV_PER_HARTREE
    print(
        f"planewave relax: energy {e_cli:.8f} eV (ASE - CLI: {si8.get_potential_energy() - e_cli:.2e} eV); "
        f"largest position difference (translation removed): {np.abs(d @ si8.cell.array).max():.2e} A"
    )
    if np.abs(d @ si8.cell.array).max() > 1e-3:
        sys.exit("the ASE relaxation and planewave relax end in different structures")
