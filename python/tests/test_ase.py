"""The ASE calculator against the CLI, finite differences, and its parameter checks."""

import json
import subprocess

import numpy as np
import pytest
from conftest import PSEUDOS, ROOT, assert_close, si2
from planewave import ANGSTROM_PER_BOHR, EV_PER_HARTREE
from planewave.ase import Planewave

EV_PER_ANGSTROM = EV_PER_HARTREE / ANGSTROM_PER_BOHR
EV_PER_ANGSTROM3 = EV_PER_HARTREE / ANGSTROM_PER_BOHR**3
SI = {"Si": "Si-q4.lda.cp2k"}


def voigt(s):
    s = np.asarray(s)
    return np.array([s[0, 0], s[1, 1], s[2, 2], s[1, 2], s[0, 2], s[0, 1]])


def si_example_calc(**kw):
    """The parameters of examples/si.toml."""
    p = dict(
        xc="LDA",
        ecutwfc=30,
        kpts=(4, 4, 4),
        nbands=8,
        conv_thr=2e-9,
        density_tolerance=1e-8,
        pseudopotentials=SI,
        pseudo_dir=str(PSEUDOS),
    )
    p.update(kw)
    return Planewave(**p)


def displaced():
    """Si2 with the second atom pushed off its site and a sheared cell: every force and stress
    component non-zero."""
    atoms = si2(5.0)
    cell = atoms.cell.array @ (
        np.eye(3) + np.array([[0.01, 0.004, 0.0], [0.004, -0.006, 0.003], [0.0, 0.003, 0.0]])
    )
    atoms.set_cell(cell, scale_atoms=True)
    atoms.positions[1] += [0.06, -0.03, 0.02]
    return atoms


def small_calc(**kw):
    p = dict(
        xc="LDA",
        ecutwfc=16,
        kpts=(2, 2, 2),
        conv_thr=2e-11,
        density_tolerance=1e-9,
        pseudopotentials=SI,
        pseudo_dir=str(PSEUDOS),
    )
    p.update(kw)
    return Planewave(**p)


def compare_with_cli(atoms, calc, cli, tmp_path, stem):
    e = atoms.get_potential_energy()
    f = atoms.get_forces()
    s = atoms.get_stress()
    proc, out = cli(calc.toml(atoms), tmp_path, stem)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert_close(e, doc["total_energy_ha"] * EV_PER_HARTREE, 1e-8, what="energy")
    assert_close(atoms.get_potential_energy(force_consistent=True), e, 0, what="free energy")
    fmax = np.abs(doc["forces_ha_per_bohr"]).max() * EV_PER_ANGSTROM
    assert_close(
        f,
        np.array(doc["forces_ha_per_bohr"]) * EV_PER_ANGSTROM,
        1e-8,
        atol=1e-8 * max(fmax, 1e-4),
        what="forces",
    )
    ref = -voigt(doc["stress_ha_per_bohr3"]) * EV_PER_ANGSTROM3
    assert_close(s, ref, 1e-8, atol=1e-8 * np.abs(ref).max(), what="stress")
    return e, f, s, doc


def test_si_example_equals_cli(cli, tmp_path):
    """(a) examples/si.toml through ASE equals `planewave run` on the same input."""
    atoms = si2()
    atoms.calc = si_example_calc()
    e, f, s, doc = compare_with_cli(atoms, atoms.calc, cli, tmp_path, "si")
    # ... and the example file itself (lattice in bohr there: equal to the SCF's tolerance).
    proc = subprocess.run(
        [
            _cli_binary(),
            "run",
            str(ROOT / "examples" / "si.toml"),
            "--json",
            str(tmp_path / "example.json"),
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    ex = json.loads((tmp_path / "example.json").read_text())
    assert_close(e, ex["total_energy_ha"] * EV_PER_HARTREE, 1e-8, what="energy vs examples/si.toml")
    assert_close(
        s,
        -voigt(ex["stress_ha_per_bohr3"]) * EV_PER_ANGSTROM3,
        1e-6,
        atol=1e-9,
        what="stress vs examples/si.toml",
    )
    assert ex["schema_version"] == atoms.calc.result.results["schema_version"]


def _cli_binary():
    from conftest import cli_path

    return cli_path()


def test_displaced_equals_cli(cli, tmp_path):
    """(b) a force/stress case: every component non-zero, ASE == CLI."""
    atoms = displaced()
    atoms.calc = small_calc()
    e, f, s, _ = compare_with_cli(atoms, atoms.calc, cli, tmp_path, "displaced")
    assert np.abs(f).min() > 1e-3
    assert np.abs(s).min() > 1e-5


def numerical_stress(atoms, d):
    """(1/V) dE/d(strain) by central differences of a symmetric strain, in ASE's Voigt order
    (as ASE's Calculator.calculate_numerical_stress)."""
    cell, volume = atoms.cell.array.copy(), atoms.get_volume()
    out = []
    for i, j in [(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]:
        e = []
        for sign in (1, -1):
            x = np.eye(3)
            x[i, j] += sign * d
            if i != j:
                x[j, i] += sign * d
            a = atoms.copy()
            a.calc = atoms.calc
            a.set_cell(cell @ x, scale_atoms=True)
            e.append(a.get_potential_energy())
        out.append((e[0] - e[1]) / ((2 if i == j else 4) * d * volume))
    return np.array(out)


def test_displaced_finite_differences():
    """(b) ASE's forces are -dE/dx and ASE's stress is (1/V) dE/dstrain (sign, units, Voigt
    order), by central differences of the energy."""
    atoms = displaced()
    calc = small_calc(ecutwfc=30)
    atoms.calc = calc
    f = atoms.get_forces()
    s = atoms.get_stress()
    h = 2e-3
    for i in range(3):
        e = []
        for d in (h, -h):
            a = atoms.copy()
            a.calc = calc
            a.positions[1, i] += d
            e.append(a.get_potential_energy())
        fd = -(e[0] - e[1]) / (2 * h)
        assert abs(fd - f[1, i]) < 2e-4 * max(1.0, abs(f[1, i])), (i, fd, f[1, i])
    numerical = numerical_stress(atoms, 1e-3)
    assert np.all(np.sign(numerical) == np.sign(s)), (numerical, s)
    # The analytic stress is at a fixed set of plane waves; the energy's changes also hold
    # the basis' (Pulay) part, 1.2% of the largest component at 30 Ry (0.2% at 60 Ry).
    assert np.abs(numerical - s).max() < 0.02 * np.abs(s).max(), (numerical, s)


def test_restart_from_previous_state():
    atoms = displaced()
    calc = small_calc()
    atoms.calc = calc
    e0 = atoms.get_potential_energy()
    first = calc.result
    atoms.positions[0] += [0.01, 0.0, -0.01]
    e1 = atoms.get_potential_energy()
    assert calc.result.restarted and not first.restarted
    assert calc.result.results["scf_iterations"] < first.results["scf_iterations"]
    fresh = atoms.copy()
    fresh.calc = small_calc()
    assert abs(fresh.get_potential_energy() - e1) < 1e-7
    assert not fresh.calc.result.restarted
    assert e0 != e1


def test_density_and_results():
    atoms = si2()
    atoms.calc = small_calc(kpts=(2, 2, 2))
    atoms.get_potential_energy()
    r = atoms.calc.result
    rho = r.density()
    assert rho.shape == (1, *r.fft_grid)
    volume_bohr3 = atoms.get_volume() / ANGSTROM_PER_BOHR**3
    assert abs(rho.sum() * volume_bohr3 / rho[0].size - 8.0) < 1e-8
    assert r.eigenvalues_ha.shape[2] == r.results["nbands"]
    assert r.fermi_level_ev == pytest.approx(atoms.calc.get_fermi_level())
    assert r.results["schema_version"] >= 1


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"ecutwfcc": 30}, "ecutwfcc"),
        ({"xc": "B3LYP"}, "xc"),
        ({"kpts": (4, 4)}, "kpts"),
        ({"smearing": "bogus", "degauss": 0.01}, "smearing"),
        ({"nbands": -3}, "nbands"),
        ({"ecut": 400}, "ecut"),
        ({"pseudopotentials": {"Si": "missing.upf"}}, "pseudopotentials"),
        ({"conv_thr": "tight"}, "conv_thr"),
    ],
)
def test_bad_parameter_is_a_value_error_naming_it(kw, name):
    with pytest.raises(ValueError, match=name):
        si_example_calc(**kw)


def test_input_error_message_is_the_clis(cli, tmp_path):
    """An error planewave itself finds (here a mixing factor above 1 given through
    input_data) is a ValueError with the CLI's message."""
    atoms = si2()
    atoms.calc = small_calc(input_data={"scf": {"mixing": {"beta": 1.5}}}, directory=str(tmp_path))
    with pytest.raises(ValueError) as exc:
        atoms.get_potential_energy()
    assert "scf.mixing.beta" in str(exc.value)
    proc, _ = cli(atoms.calc.toml(atoms), tmp_path, "planewave")
    assert proc.returncode == 2
    assert proc.stderr.strip() == str(exc.value).strip()


def test_ctrl_c_stops_the_scf():
    """SIGINT during the SCF (GIL released) stops it after the current iteration with
    KeyboardInterrupt; the calculator works afterwards."""
    import faulthandler
    import os
    import signal
    import threading
    import time

    atoms = si2()
    # Tolerances that are never met and an iteration limit that is never reached: only the
    # interrupt ends this SCF (if it did not, the watchdog ends the test run with a traceback).
    atoms.calc = small_calc(conv_thr=1e-30, density_tolerance=1e-30, electron_maxstep=10**9)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    faulthandler.dump_traceback_later(300, exit=True)
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            atoms.get_potential_energy()
    finally:
        faulthandler.cancel_dump_traceback_later()
    timer.join()
    assert time.monotonic() - t0 < 30
    atoms.calc.set(conv_thr=2e-9, density_tolerance=1e-8, electron_maxstep=100)
    assert atoms.get_potential_energy() < 0


def qe_input_energy(case_dir, pseudo_dir, tmp_path):
    """`planewave run` on the QE input of `case_dir` (its pseudo_dir pointed at `pseudo_dir`):
    the total energy in eV."""
    import re

    text = (case_dir / "pw.in").read_text()
    text = re.sub(r"pseudo_dir\s*=\s*'[^']*'", f"pseudo_dir='{pseudo_dir}'", text)
    (tmp_path / "pw.in").write_text(text)
    proc = subprocess.run(
        [_cli_binary(), "run", "pw.in", "--json", "qe.json", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / "qe.json").read_text())["total_energy_ha"] * EV_PER_HARTREE


def bohr_cell_atoms(symbols, cell_bohr, frac):
    from ase import Atoms

    cell = np.asarray(cell_bohr) * ANGSTROM_PER_BOHR
    return Atoms(symbols, cell=cell, scaled_positions=frac, pbc=True)


def test_spin_parameters_as_qe_s(cli, tmp_path):
    """nspin, starting_magnetization and tot_magnetization as in QE: the H atom of
    tests/data/qe/h1_lsda_gth_box through ASE equals `planewave run` on that pw.in."""
    case = ROOT / "tests" / "data" / "qe" / "h1_lsda_gth_box"
    atoms = bohr_cell_atoms("H", np.eye(3) * 10.0, [[0, 0, 0]])
    atoms.calc = Planewave(
        xc="LDA",
        ecutwfc=30,
        ecutrho=120,
        kpts=(1, 1, 1),
        nbands=2,
        nspin=2,
        starting_magnetization={"H": 0.5},
        tot_magnetization=1,
        conv_thr=1e-10,
        mixing_beta=0.7,
        pseudopotentials={"H": "H-q1.lda.gth"},
        pseudo_dir=str(ROOT / "tests" / "data" / "pseudos" / "gth"),
    )
    e = atoms.get_potential_energy()
    assert atoms.calc.get_number_of_spins() == 2
    assert atoms.calc.result.results["total_magnetization"] == pytest.approx(1.0, abs=1e-8)
    qe = qe_input_energy(case, ROOT / "tests" / "data" / "pseudos" / "gth", tmp_path)
    assert_close(e, qe, 1e-8, what="H atom, spin")


def test_ultrasoft_with_ecutrho_as_qe_s(cli, tmp_path):
    """ecutrho (Ry) for an ultrasoft file: Si2 of tests/data/uspp/si2_pbe_us through ASE equals
    `planewave run` on that pw.in."""
    case = ROOT / "tests" / "data" / "uspp" / "si2_pbe_us"
    atoms = si2()
    atoms.calc = Planewave(
        xc="PBE",
        ecutwfc=45,
        ecutrho=360,
        kpts=(4, 4, 4),
        nbands=8,
        conv_thr=1e-12,
        mixing_beta=0.7,
        pseudopotentials={"Si": "Si.pbe-nl-rrkjus_psl.1.0.0.UPF"},
        pseudo_dir=str(ROOT / "tests" / "data" / "uspp"),
    )
    e = atoms.get_potential_energy()
    assert atoms.calc.result.results["ecut_rho_ha"] == pytest.approx(180.0)
    qe = qe_input_energy(case, ROOT / "tests" / "data" / "uspp", tmp_path)
    assert_close(e, qe, 1e-8, what="ultrasoft Si2")


def test_pbe0_as_qe_s(cli, tmp_path):
    """xc='PBE0' (its q grid through input_data): Si2 of tests/data/qe/si2_pbe0_gth_nq1 through
    ASE equals `planewave run` on that pw.in, and asking for its stress says it has none."""
    from ase.calculators.calculator import PropertyNotImplementedError

    case = ROOT / "tests" / "data" / "qe" / "si2_pbe0_gth_nq1"
    atoms = si2()
    atoms.calc = Planewave(
        xc="PBE0",
        ecutwfc=30,
        kpts=(2, 2, 2),
        nbands=8,
        conv_thr=1e-10,
        mixing_beta=0.7,
        input_data={"hybrid": {"q_grid": [1, 1, 1]}},
        pseudopotentials={"Si": "Si-q4.pbe.gth"},
        pseudo_dir=str(ROOT / "tests" / "data" / "pseudos" / "gth"),
    )
    e = atoms.get_potential_energy()
    qe = qe_input_energy(case, ROOT / "tests" / "data" / "pseudos" / "gth", tmp_path)
    assert_close(e, qe, 1e-8, what="PBE0 Si2")
    with pytest.raises(PropertyNotImplementedError):
        atoms.get_stress()


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"nspin": 4}, "nspin"),
        ({"tot_magnetization": 1}, "tot_magnetization"),
        ({"nspin": 2, "starting_magnetization": {"Si": 1.5}}, "starting_magnetization"),
        ({"nspin": 2, "starting_magnetization": {"Fe": 0.5}}, "starting_magnetization"),
        ({"ecutrho": -1}, "ecutrho"),
    ],
)
def test_bad_spin_or_cutoff_parameter_names_it(kw, name):
    with pytest.raises(ValueError, match=name):
        si_example_calc(**kw).toml(si2())


@pytest.mark.parametrize("readme", ["README.md", "python/README.md"])
def test_readme_five_lines_run(readme, monkeypatch, capsys):
    """The README's ASE lines (the issue's route), run as a user runs them from the repository
    root: an energy in eV near Si2's, forces and a stress."""
    import re

    text = (ROOT / readme).read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "Planewave(" in b]
    assert blocks, f"no ASE example in {readme}"
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], readme, "exec"), {})
    printed = capsys.readouterr().out
    energy = float(printed.split()[0])
    assert -216.0 < energy < -215.0, printed  # Si2 at 30 Ry: -7.93 Ha = -215.8 eV
