import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PSEUDOS = ROOT / "examples" / "pseudos"


def si2(cell_bohr=5.13):
    """The Si cell of examples/si.toml (fcc, diamond basis), lattice in bohr."""
    from ase import Atoms
    from planewave import ANGSTROM_PER_BOHR

    a = cell_bohr * ANGSTROM_PER_BOHR
    cell = [[0.0, a, a], [a, 0.0, a], [a, a, 0.0]]
    return Atoms("Si2", cell=cell, scaled_positions=[[0, 0, 0], [0.25, 0.25, 0.25]], pbc=True)


def cli_path():
    """The planewave CLI: $PLANEWAVE_CLI, else `planewave` on the PATH."""
    path = os.environ.get("PLANEWAVE_CLI") or shutil.which("planewave")
    return path if path and os.path.isfile(path) else None


@pytest.fixture
def cli():
    path = cli_path()
    if path is None:
        if os.environ.get("PLANEWAVE_REQUIRE_CLI"):
            pytest.fail("PLANEWAVE_REQUIRE_CLI is set but the CLI is not found (set PLANEWAVE_CLI)")
        pytest.skip("planewave CLI not found: set PLANEWAVE_CLI (cargo build --release -p planewave-cli)")

    def run(toml_text, folder, stem="input", args=("run",)):
        inp = Path(folder) / f"{stem}.toml"
        inp.write_text(toml_text)
        p = subprocess.run([path, *args, str(inp), "--quiet"], capture_output=True, text=True)
        return p, Path(folder) / f"{stem}.json"

    return run


def assert_close(a, b, rtol, atol=0.0, what=""):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, what
    err = np.abs(a - b)
    assert np.all(err <= atol + rtol * np.abs(b)), f"{what}: max |diff| {err.max():.3e}\n{a}\n{b}"
