"""The equation of state of silicon (diamond) with ase.eos: lattice constant and bulk modulus.

Run from the repository root:  python python/examples/eos_si.py [eos.png]
Each volume's SCF starts from the previous volume's density (kept in memory by the calculator).
"""

import os
import sys

import numpy as np
from ase.build import bulk
from ase.eos import EquationOfState
from ase.units import GPa
from planewave.ase import Planewave

HERE = os.path.dirname(os.path.abspath(__file__))
PSEUDOS = os.path.join(HERE, "..", "..", "examples", "pseudos")

si = bulk("Si", "diamond", a=5.43)
si.calc = Planewave(
    xc="LDA", ecutwfc=30, kpts=(4, 4, 4), pseudopotentials={"Si": "Si-q4.lda.cp2k"}, pseudo_dir=PSEUDOS
)
cell = si.get_cell()
volumes, energies = [], []
for x in np.linspace(0.97, 1.03, 7):
    si.set_cell(cell * x, scale_atoms=True)
    volumes.append(si.get_volume())
    energies.append(si.get_potential_energy())
    print(f"a = {5.43 * x:.4f} A  V = {volumes[-1]:.3f} A^3  E = {energies[-1]:.6f} eV")

eos = EquationOfState(volumes, energies, eos="birchmurnaghan")
v0, e0, b = eos.fit()
print(f"a0 = {(4 * v0) ** (1 / 3):.4f} A, E0 = {e0:.6f} eV, B = {b / GPa:.1f} GPa")
if len(sys.argv) > 1:
    eos.plot(sys.argv[1])
