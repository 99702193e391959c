"""From a structure and QE/ASE-style parameters to planewave's TOML input.

Every parameter is checked here, and a bad one raises ``ValueError`` naming it, before planewave
reads the TOML (which checks the rest, with messages naming its TOML keys).
"""

import difflib
import json
import math
import os

import numpy as np

#: ASE/QE exchange-correlation names -> planewave's TOML ``[model] functional``.
XC = {
    "lda": "lda_pz",
    "pz": "lda_pz",
    "lda_pz": "lda_pz",
    "pw": "lda_pw",
    "pw92": "lda_pw",
    "lda_pw": "lda_pw",
    "vwn": "lda_vwn",
    "svwn": "lda_vwn",
    "lda_vwn": "lda_vwn",
    "pbe": "pbe",
    "pbe0": "pbe0",
    "hse": "hse",
    "hse06": "hse",
}
HYBRIDS = {"pbe0", "hse"}

#: Smearing names (QE's and ASE's) planewave's TOML understands.
SMEARING = {
    "gaussian",
    "gauss",
    "fermi-dirac",
    "fd",
    "f-d",
    "methfessel-paxton",
    "mp",
    "m-p",
    "marzari-vanderbilt",
    "cold",
    "mv",
    "m-v",
}

#: The parameters and their defaults.
DEFAULTS = {
    "xc": "LDA",
    "ecutwfc": None,
    "ecut": None,
    "kpts": None,
    "koffset": None,
    "smearing": None,
    "degauss": None,
    "pseudopotentials": None,
    "pseudo_dir": None,
    "ecutrho": None,
    "nbands": None,
    "nspin": None,
    "starting_magnetization": None,
    "tot_magnetization": None,
    "conv_thr": None,
    "density_tolerance": None,
    "electron_maxstep": None,
    "mixing_beta": None,
    "tot_charge": None,
    "symmetry": True,
    "input_data": None,
    "reuse_state": True,
}

ENERGY_UNITS = ("ha", "hartree", "ry", "rydberg", "ev")


def _bad(name, value, why):
    return ValueError(f"parameter {name!r} = {value!r}: {why}")


def check_names(params):
    """Raise ValueError naming the first parameter planewave does not know."""
    for name in params:
        if name not in DEFAULTS:
            close = difflib.get_close_matches(name, DEFAULTS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(DEFAULTS))
            raise ValueError(f"unknown parameter {name!r}{hint} (known: {known})")


def check_values(params):
    """Check the values of `params` that do not depend on the structure (raise ValueError
    naming the first bad one), with a one-atom stand-in of each species that has a file."""
    pseudos = params.get("pseudopotentials")
    if not isinstance(pseudos, dict) or not pseudos:
        return
    symbols = list(pseudos)
    frac = [[i / len(symbols)] * 3 for i in range(len(symbols))]
    tables(np.eye(3) * 10.0, symbols, frac, params)


def _number(name, value, positive=True):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _bad(name, value, "must be a number")
    value = float(value)
    if not math.isfinite(value) or (positive and value <= 0):
        raise _bad(name, value, "must be a positive number" if positive else "must be finite")
    return value


def _energy(name, value, unit):
    """A TOML energy: a string with a unit (passed on), or a number in `unit`."""
    if isinstance(value, str):
        parts = value.split()
        if len(parts) != 2 or parts[1].lower() not in ENERGY_UNITS:
            raise _bad(name, value, 'a string must be a number and a unit, e.g. "30 Ry", "408 eV"')
        _number(name, _float_or_bad(name, value, parts[0]))
        return value
    return f"{_number(name, value)!r} {unit}"


def _float_or_bad(name, whole, text):
    try:
        return float(text)
    except ValueError:
        raise _bad(name, whole, f"{text!r} is not a number") from None


def _int(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise _bad(name, value, f"must be an integer >= {minimum}")
    return int(value)


def kpoints_toml(kpts, koffset, cell):
    """The TOML ``[basis] kpoints`` value of ASE's ``kpts`` (and QE's ``koffset``)."""
    if kpts is None or (isinstance(kpts, str) and kpts.lower() == "gamma"):
        if koffset is not None:
            raise _bad("koffset", koffset, "needs a k-point grid (kpts)")
        return "gamma"
    shift = None
    if isinstance(kpts, dict):
        unknown = set(kpts) - {"size", "density", "gamma", "even"}
        if unknown:
            raise _bad("kpts", kpts, f"unknown keys {sorted(unknown)} (known: size, density, gamma, even)")
        if ("size" in kpts) == ("density" in kpts):
            raise _bad("kpts", kpts, "give exactly one of 'size' and 'density'")
        if "size" in kpts:
            size = kpts["size"]
        else:
            density = _number("kpts['density']", kpts["density"])
            recip = np.linalg.inv(cell).T
            size = [max(1, math.ceil(2 * math.pi * np.linalg.norm(b) * density)) for b in recip]
            if kpts.get("even"):
                size = [n + n % 2 for n in size]
        if kpts.get("gamma") is False:
            # Monkhorst-Pack: even sizes shifted by half a step.
            shift = [int(n) % 2 == 0 for n in size]
    else:
        size = kpts
    try:
        size = [int(n) if not isinstance(n, bool) and int(n) == n else None for n in size]
    except (TypeError, ValueError):
        raise _bad(
            "kpts", kpts, "must be (n1, n2, n3), 'gamma', or {'size': ...} / {'density': ...}"
        ) from None
    if len(size) != 3 or any(n is None or n < 1 for n in size):
        raise _bad("kpts", kpts, "must be three integers >= 1 (a Gamma-centred Monkhorst-Pack grid)")
    if koffset is not None:
        if shift is not None:
            raise _bad("koffset", koffset, "conflicts with kpts['gamma'] = False")
        try:
            shift = [int(s) for s in koffset]
        except (TypeError, ValueError):
            raise _bad("koffset", koffset, "must be three of 0 or 1 (QE's k1 k2 k3)") from None
        if len(shift) != 3 or any(s not in (0, 1) for s in shift):
            raise _bad("koffset", koffset, "must be three of 0 or 1 (QE's k1 k2 k3)")
    shift = [int(s) for s in (shift or [0, 0, 0])]
    return {"grid": size, "shift": shift}


def _spin(p, symbols, model):
    """QE's spin parameters into ``model`` (``spin``, ``total_magnetization``); returns the
    starting magnetisation per species symbol (QE's fractions, -1 to 1)."""
    nspin, start, total = p["nspin"], p["starting_magnetization"], p["tot_magnetization"]
    if nspin not in (None, 1, 2):
        raise _bad("nspin", nspin, "must be 1 or 2 (collinear spin; planewave has no nspin = 4)")
    if nspin != 2:
        for name in ("starting_magnetization", "tot_magnetization"):
            if p[name] is not None:
                raise _bad(name, p[name], "needs nspin=2")
        return {}
    model["spin"] = "collinear"
    if total is not None:
        model["total_magnetization"] = _number("tot_magnetization", total, positive=False)
    if start is None:
        return {}
    if not isinstance(start, dict):
        raise _bad("starting_magnetization", start, "must be a dict {symbol: fraction from -1 to 1}")
    out = {}
    for sym, m in start.items():
        if sym not in symbols:
            raise _bad("starting_magnetization", start, f"names {sym!r}, which is not in the structure")
        m = _number("starting_magnetization", m, positive=False)
        if not -1.0 <= m <= 1.0:
            raise _bad(
                "starting_magnetization", start, f"the value of {sym!r} must be from -1 to 1 (QE's fraction)"
            )
        out[sym] = m
    return out


def _pseudo_dir(pseudo_dir):
    if pseudo_dir is None:
        pseudo_dir = os.environ.get("PLANEWAVE_PSEUDO") or os.environ.get("ESPRESSO_PSEUDO") or "."
    if not isinstance(pseudo_dir, (str, os.PathLike)):
        raise _bad("pseudo_dir", pseudo_dir, "must be a folder name")
    return os.path.abspath(os.fspath(pseudo_dir))


def tables(cell, symbols, scaled_positions, params, title="planewave"):
    """The TOML tables (a dict) of a structure and parameters.

    ``cell``: rows a1, a2, a3 in angstrom; ``symbols``: one species label per atom;
    ``scaled_positions``: fractional coordinates; ``params``: the parameters (see DEFAULTS).
    """
    check_names(params)
    p = dict(DEFAULTS)
    p.update(params)
    cell = np.asarray(cell, dtype=float)
    if cell.shape != (3, 3) or not np.all(np.isfinite(cell)) or abs(np.linalg.det(cell)) < 1e-6:
        raise ValueError(
            "the cell must be three lattice vectors spanning a volume (planewave is periodic in 3D)"
        )
    frac = np.asarray(scaled_positions, dtype=float).reshape(-1, 3)
    if len(symbols) != len(frac) or len(symbols) == 0:
        raise ValueError("need one species symbol per atom, and at least one atom")

    xc = p["xc"]
    if not isinstance(xc, str) or xc.lower() not in XC:
        raise _bad("xc", xc, f"unknown functional (known: {', '.join(sorted(XC))})")
    functional = XC[xc.lower()]
    model = {"functional": functional}

    if (p["ecutwfc"] is None) == (p["ecut"] is None):
        raise ValueError("give exactly one of the parameters 'ecutwfc' (Ry, as QE) and 'ecut' (eV, as ASE)")
    if p["ecutwfc"] is not None:
        ecut = _energy("ecutwfc", p["ecutwfc"], "Ry")
    else:
        ecut = _energy("ecut", p["ecut"], "eV")
    basis = {"ecut": ecut, "kpoints": kpoints_toml(p["kpts"], p["koffset"], cell)}
    if p["ecutrho"] is not None:
        basis["ecut_rho"] = _energy("ecutrho", p["ecutrho"], "Ry")
    if p["nbands"] is not None:
        basis["nbands"] = _int("nbands", p["nbands"])

    smearing, degauss = p["smearing"], p["degauss"]
    if smearing is not None:
        if isinstance(smearing, (tuple, list)):
            if len(smearing) != 2 or degauss is not None:
                raise _bad("smearing", smearing, "a pair is (name, width in eV); with it leave degauss out")
            name, width = smearing
            width = _energy("smearing", width, "eV")
        else:
            name = smearing
            if degauss is None:
                raise _bad(
                    "smearing", smearing, "needs a width: degauss (Ry, as QE) or smearing=(name, width_eV)"
                )
            width = _energy("degauss", degauss, "Ry")
        if not isinstance(name, str) or name.lower() not in SMEARING:
            raise _bad("smearing", smearing, f"unknown smearing (known: {', '.join(sorted(SMEARING))})")
        model["smearing"] = name.lower()
        model["smearing_width"] = width
    elif degauss is not None:
        raise _bad("degauss", degauss, "needs smearing (e.g. smearing='mv')")
    if p["tot_charge"] is not None:
        model["charge"] = _number("tot_charge", p["tot_charge"], positive=False)
    if not isinstance(p["symmetry"], bool):
        raise _bad("symmetry", p["symmetry"], "must be True or False")
    model["symmetry"] = p["symmetry"]
    if not isinstance(p["reuse_state"], bool):
        raise _bad("reuse_state", p["reuse_state"], "must be True or False")

    scf = {}
    if p["conv_thr"] is not None:
        scf["energy_tolerance"] = _number("conv_thr", p["conv_thr"]) / 2.0  # Ry -> Ha
    if p["density_tolerance"] is not None:
        scf["density_tolerance"] = _number("density_tolerance", p["density_tolerance"])
    if p["electron_maxstep"] is not None:
        scf["max_iterations"] = _int("electron_maxstep", p["electron_maxstep"])
    if p["mixing_beta"] is not None:
        beta = _number("mixing_beta", p["mixing_beta"])
        if beta > 1:
            raise _bad("mixing_beta", beta, "must be in (0, 1]")
        scf["mixing"] = {"beta": beta}

    magnetization = _spin(p, symbols, model)

    pseudos = p["pseudopotentials"]
    if not isinstance(pseudos, dict):
        raise _bad("pseudopotentials", pseudos, "must be a dict {symbol: file name}")
    pseudo_dir = _pseudo_dir(p["pseudo_dir"])
    species = {}
    for sym in dict.fromkeys(symbols):
        if sym not in pseudos:
            raise _bad("pseudopotentials", pseudos, f"has no file for {sym!r}")
        name = pseudos[sym]
        if not isinstance(name, (str, os.PathLike)):
            raise _bad("pseudopotentials", pseudos, f"the file of {sym!r} must be a file name")
        path = os.path.join(pseudo_dir, os.fspath(name))
        if not os.path.isfile(path):
            raise _bad(
                "pseudopotentials",
                pseudos,
                f"the file of {sym!r} is not there: {path} (pseudo_dir: {pseudo_dir})",
            )
        species[sym] = {"pseudo": path}
        if sym in magnetization:
            species[sym]["magnetization"] = magnetization[sym]

    doc = {
        "title": title,
        "structure": {
            "lattice": cell.tolist(),
            "lattice_unit": "angstrom",
            "positions": "fractional",
            "atoms": [{"species": s, "position": list(map(float, x))} for s, x in zip(symbols, frac)],
        },
        "species": species,
        "model": model,
        "basis": basis,
        "properties": {"forces": True, "stress": functional not in HYBRIDS},
    }
    if scf:
        doc["scf"] = scf
    extra = p["input_data"]
    if extra is not None:
        if not isinstance(extra, dict):
            raise _bad(
                "input_data", extra, "must be a dict of planewave TOML tables, e.g. {'scf': {'seed': 7}}"
            )
        _merge(doc, extra, "input_data")
    return doc


def _merge(doc, extra, where):
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            _merge(doc[key], value, f"{where}[{key!r}]")
        else:
            doc[key] = value


def _value(v, where):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"{where}: {v} is not a finite number")
        return repr(v)
    if isinstance(v, (str, os.PathLike)):
        return json.dumps(os.fspath(v))
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x, where)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    raise ValueError(f"{where}: cannot write {v!r} to TOML")


def _key(k):
    k = str(k)
    if k and all(c.isalnum() or c in "_-" for c in k):
        return k
    return json.dumps(k)


def dumps(doc):
    """TOML text of `doc` (top-level keys; then a table per dict, nested one level)."""
    lines = []
    for k, v in doc.items():
        if not isinstance(v, dict):
            lines.append(f"{_key(k)} = {_value(v, k)}")
    for k, v in doc.items():
        if not isinstance(v, dict):
            continue
        plain = {a: b for a, b in v.items() if not isinstance(b, dict) or k not in ("species",)}
        if k == "species":
            for sym, table in v.items():
                lines.append(f"\n[species.{_key(sym)}]")
                lines.extend(f"{_key(a)} = {_value(b, f'species.{sym}.{a}')}" for a, b in table.items())
            continue
        lines.append(f"\n[{_key(k)}]")
        for a, b in plain.items():
            if a == "atoms" and isinstance(b, list):
                lines.append("atoms = [")
                lines.extend(f"  {_value(x, 'structure.atoms')}," for x in b)
                lines.append("]")
            else:
                lines.append(f"{_key(a)} = {_value(b, f'{k}.{a}')}")
    return "\n".join(lines) + "\n"
