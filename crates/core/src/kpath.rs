//! High-symmetry paths through the Brillouin zone, taken from the crystal's own symmetry in
//! the convention of Setyawan and Curtarolo (Comput. Mater. Sci. 49, 299 (2010)).
//!
//! Contract: [`automatic`] finds the Bravais lattice with moyo (its Pearson symbol and the
//! conventional cell, expressed in the user's orientation), builds the primitive cell of the
//! convention from it, and returns the convention's special points and path for that
//! lattice's variant (FCC, BCT2, ORCF1, RHL1, MCLC3, TRI1a, ...) as a [`BandsSpec`] in the
//! user's own reciprocal coordinates, with `density` points per 1/bohr of path. Every Bravais
//! lattice has its path: the monoclinic ones in the convention's setting (unique axis a,
//! b <= c, alpha < 90 degrees, the plane normal to a reduced), the triclinic one from its
//! reduced reciprocal basis (all angles acute or all obtuse, kgamma last), as ASE chooses them.
//! A cell holding several primitive cells gets the path of the primitive cell (its bands are
//! folded), and says so.

use crate::crystal::{det3 as det, dot, norm, reciprocal, Atom, Crystal};
use crate::input::{BandsSpec, PathVertex, RunSpec};
use crate::symmetry::dataset;

/// Points per 1/bohr of path by default (about 24 from Γ to X in silicon).
pub const DENSITY: f64 = 40.0;

/// The convention's name, for the output.
pub const CONVENTION: &str = "Setyawan-Curtarolo (2010)";

/// A path chosen from the crystal's symmetry.
#[derive(Debug, Clone)]
pub struct AutoPath {
    /// The lattice variant of the convention (`"FCC"`, `"BCT2"`, ...).
    pub lattice: &'static str,
    /// The path, in the user's reciprocal coordinates.
    pub bands: BandsSpec,
    /// Primitive cells in the user's cell (1 for a primitive cell).
    pub cells: f64,
}

impl AutoPath {
    /// The path's labels as one line: `G-X-W-K-G-L-U-W-L-K|U-X`.
    pub fn route(&self) -> String {
        let mut s = String::new();
        for (i, v) in self.bands.path.iter().enumerate() {
            s.push_str(&v.label);
            if i + 1 < self.bands.path.len() {
                s.push(if v.points == 1 { '|' } else { '-' });
            }
        }
        s
    }
}

type Mat = [[f64; 3]; 3];

/// A variant of the convention: its primitive cell (rows, bohr, user's orientation), its
/// special points (fractions of that cell's reciprocal vectors) and its path (`|` breaks it).
struct Variant {
    name: &'static str,
    primitive: Mat,
    points: Vec<(&'static str, [f64; 3])>,
    path: &'static str,
}

/// The path of the crystal `spec` declares, at its `[bands] density` or [`DENSITY`] (before any
/// pseudopotential is read: a refusal costs nothing).
pub fn of_input(spec: &RunSpec) -> Result<AutoPath, String> {
    let species = |label: &str| spec.species.iter().position(|s| s.symbol == label);
    let atoms = (spec.atoms.iter())
        .map(|a| Atom {
            species: species(&a.species).unwrap_or(spec.species.len()),
            frac: a.frac,
        })
        .collect();
    let density = spec.bands.as_ref().and_then(|b| b.density);
    automatic(
        &Crystal::new(spec.lattice, atoms)?,
        density.unwrap_or(DENSITY),
    )
}

/// The path of `crystal` from its symmetry (atoms told apart by species), `density` points
/// per 1/bohr (at least two per segment).
pub fn automatic(crystal: &Crystal, density: f64) -> Result<AutoPath, String> {
    let frac: Vec<[f64; 3]> = crystal.atoms.iter().map(|a| a.frac).collect();
    let types: Vec<usize> = crystal.atoms.iter().map(|a| a.species).collect();
    let ds = dataset(&crystal.lattice, &frac, &types, 1e-5)?;
    let linear = ds.std_linear_as_array();
    // Conventional vector j = sum_i a_i L_ij, in the user's orientation.
    let conv: Mat = [0, 1, 2]
        .map(|j| [0, 1, 2].map(|c| (0..3).map(|i| crystal.lattice[i][c] * linear[i][j]).sum()));
    let linear = ds.prim_std_linear_as_array();
    let prim: Mat = [0, 1, 2]
        .map(|j| [0, 1, 2].map(|c| (0..3).map(|i| crystal.lattice[i][c] * linear[i][j]).sum()));
    let bravais = ds.pearson_symbol.get(..2).unwrap_or("");
    let v = variant(bravais, &conv, &prim).ok_or_else(|| {
        format!(
            "no automatic band path for the lattice '{}' of space group {} ({})\n  hint: give the path in [bands] path (the labelled vertices in fractional coordinates)",
            ds.pearson_symbol, ds.number, ds.hm_symbol
        )
    })?;
    let recip = reciprocal(&v.primitive);
    let vertex = |label: &str| -> [f64; 3] {
        let f = v
            .points
            .iter()
            .find(|p| p.0 == label)
            .expect("the path's labels are points")
            .1;
        let cart: [f64; 3] = [0, 1, 2].map(|c| (0..3).map(|i| f[i] * recip[i][c]).sum());
        // Fractions of the user's reciprocal vectors: k . a_i / 2 pi.
        crystal
            .lattice
            .map(|a| dot(&a, &cart) / (2.0 * std::f64::consts::PI))
    };
    let path = vertices(v.path, &vertex, &crystal.recip, density);
    Ok(AutoPath {
        lattice: v.name,
        bands: BandsSpec {
            path,
            nbands: None,
            density: Some(density),
        },
        cells: crystal.volume / det(&v.primitive).abs(),
    })
}

/// The vertices of `route` (`"G-X|K-G"`), with points per segment from its length; a
/// vertex before a `|` jumps to the next (one point).
fn vertices(
    route: &str,
    at: &dyn Fn(&str) -> [f64; 3],
    recip: &Mat,
    density: f64,
) -> Vec<PathVertex> {
    let cart =
        |f: [f64; 3]| -> [f64; 3] { [0, 1, 2].map(|c| (0..3).map(|i| f[i] * recip[i][c]).sum()) };
    let mut out = Vec::new();
    for piece in route.split('|') {
        let labels: Vec<&str> = piece.split('-').collect();
        for (j, label) in labels.iter().enumerate() {
            let k = at(label);
            let points = labels.get(j + 1).map_or(1, |next| {
                let length = norm(&sub(&cart(at(next)), &cart(k)));
                ((density * length).round() as usize).max(2)
            });
            out.push(PathVertex {
                label: label.to_string(),
                k,
                points,
            });
        }
    }
    out
}

/// The variant of the Bravais lattice `bravais` (Pearson symbol's first two letters) whose
/// conventional vectors are `conv` and primitive vectors `prim`; None for monoclinic and
/// triclinic lattices.
fn variant(bravais: &str, conv: &Mat, prim: &Mat) -> Option<Variant> {
    Some(match bravais {
        "cP" => cubic(*conv),
        "cF" => face_centred_cubic(centred(conv, FACE)),
        "cI" => body_centred_cubic(centred(conv, BODY)),
        "tP" => tetragonal(*conv),
        "tI" => body_centred_tetragonal(conv),
        "oP" => orthorhombic(sorted(conv)),
        "oF" => orthorhombic_face_centred(&sorted(conv)),
        "oI" => orthorhombic_body_centred(&sorted(conv)),
        "oS" | "oC" | "oA" => orthorhombic_base_centred(conv, prim),
        "hP" => hexagonal(*conv),
        "hR" => rhombohedral(conv),
        "mP" => monoclinic(conv),
        "mC" => monoclinic_base_centred(conv, prim)?,
        "aP" => triclinic(prim),
        _ => return None,
    })
}

/// Primitive vectors of an F-centred cell (rows of fractions of the conventional vectors).
const FACE: Mat = [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]];
/// Primitive vectors of an I-centred cell.
const BODY: Mat = [[-0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.5, 0.5, -0.5]];

/// The primitive vectors `m` (fractions of `conv`'s rows).
fn centred(conv: &Mat, m: Mat) -> Mat {
    m.map(|f| [0, 1, 2].map(|c| (0..3).map(|i| f[i] * conv[i][c]).sum()))
}

/// The conventional vectors ordered by length, a < b < c.
fn sorted(conv: &Mat) -> Mat {
    let mut v = *conv;
    v.sort_by(|x, y| norm(x).total_cmp(&norm(y)));
    v
}

fn lengths(m: &Mat) -> [f64; 3] {
    m.map(|v| norm(&v))
}

fn cubic(conv: Mat) -> Variant {
    Variant {
        name: "CUB",
        primitive: conv,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("X", [0.0, 0.5, 0.0]),
            ("M", [0.5, 0.5, 0.0]),
            ("R", [0.5, 0.5, 0.5]),
        ],
        path: "G-X-M-G-R-X|M-R",
    }
}

fn face_centred_cubic(primitive: Mat) -> Variant {
    Variant {
        name: "FCC",
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("K", [0.375, 0.375, 0.75]),
            ("L", [0.5, 0.5, 0.5]),
            ("U", [0.625, 0.25, 0.625]),
            ("W", [0.5, 0.25, 0.75]),
            ("X", [0.5, 0.0, 0.5]),
        ],
        path: "G-X-W-K-G-L-U-W-L-K|U-X",
    }
}

fn body_centred_cubic(primitive: Mat) -> Variant {
    Variant {
        name: "BCC",
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("H", [0.5, -0.5, 0.5]),
            ("P", [0.25, 0.25, 0.25]),
            ("N", [0.0, 0.0, 0.5]),
        ],
        path: "G-H-N-G-P-H|P-N",
    }
}

fn tetragonal(conv: Mat) -> Variant {
    Variant {
        name: "TET",
        primitive: conv,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("A", [0.5, 0.5, 0.5]),
            ("M", [0.5, 0.5, 0.0]),
            ("R", [0.0, 0.5, 0.5]),
            ("X", [0.0, 0.5, 0.0]),
            ("Z", [0.0, 0.0, 0.5]),
        ],
        path: "G-X-M-G-Z-R-A-Z|X-R|M-A",
    }
}

/// BCT1 (c < a) and BCT2 (c > a); the conventional c is the four-fold axis.
fn body_centred_tetragonal(conv: &Mat) -> Variant {
    let [a, _, c] = lengths(conv);
    let primitive = centred(conv, BODY);
    if c < a {
        let e = (1.0 + c * c / (a * a)) / 4.0;
        return Variant {
            name: "BCT1",
            primitive,
            points: vec![
                ("G", [0.0, 0.0, 0.0]),
                ("M", [-0.5, 0.5, 0.5]),
                ("N", [0.0, 0.5, 0.0]),
                ("P", [0.25, 0.25, 0.25]),
                ("X", [0.0, 0.0, 0.5]),
                ("Z", [e, e, -e]),
                ("Z1", [-e, 1.0 - e, e]),
            ],
            path: "G-X-M-G-Z-P-N-Z1-M|X-P",
        };
    }
    let e = (1.0 + a * a / (c * c)) / 4.0;
    let z = a * a / (2.0 * c * c);
    Variant {
        name: "BCT2",
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("N", [0.0, 0.5, 0.0]),
            ("P", [0.25, 0.25, 0.25]),
            ("Σ", [-e, e, e]),
            ("Σ1", [e, 1.0 - e, -e]),
            ("X", [0.0, 0.0, 0.5]),
            ("Y", [-z, z, 0.5]),
            ("Y1", [0.5, 0.5, -z]),
            ("Z", [0.5, 0.5, -0.5]),
        ],
        path: "G-X-Y-Σ-G-Z-Σ1-N-P-Y1-Z|X-P",
    }
}

/// ORC, with a < b < c.
fn orthorhombic(conv: Mat) -> Variant {
    Variant {
        name: "ORC",
        primitive: conv,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("R", [0.5, 0.5, 0.5]),
            ("S", [0.5, 0.5, 0.0]),
            ("T", [0.0, 0.5, 0.5]),
            ("U", [0.5, 0.0, 0.5]),
            ("X", [0.5, 0.0, 0.0]),
            ("Y", [0.0, 0.5, 0.0]),
            ("Z", [0.0, 0.0, 0.5]),
        ],
        path: "G-X-S-Y-G-Z-U-R-T-Z|Y-T|U-X|S-R",
    }
}

/// ORCF1 (1/a^2 > 1/b^2 + 1/c^2), ORCF2 (<) and ORCF3 (=), with a < b < c.
fn orthorhombic_face_centred(conv: &Mat) -> Variant {
    let [a, b, c] = lengths(conv).map(|x| x * x);
    let primitive = centred(conv, FACE);
    let split = 1.0 / a - 1.0 / b - 1.0 / c;
    if split < -1e-6 / a {
        let e = (1.0 + a / b - a / c) / 4.0;
        let f = (1.0 + c / b - c / a) / 4.0;
        let d = (1.0 + b / a - b / c) / 4.0;
        return Variant {
            name: "ORCF2",
            primitive,
            points: vec![
                ("G", [0.0, 0.0, 0.0]),
                ("C", [0.5, 0.5 - e, 1.0 - e]),
                ("C1", [0.5, 0.5 + e, e]),
                ("D", [0.5 - d, 0.5, 1.0 - d]),
                ("D1", [0.5 + d, 0.5, d]),
                ("L", [0.5, 0.5, 0.5]),
                ("H", [1.0 - f, 0.5 - f, 0.5]),
                ("H1", [f, 0.5 + f, 0.5]),
                ("X", [0.0, 0.5, 0.5]),
                ("Y", [0.5, 0.0, 0.5]),
                ("Z", [0.5, 0.5, 0.0]),
            ],
            path: "G-Y-C-D-X-G-Z-D1-H-C|C1-Z|X-H1|H-Y|L-G",
        };
    }
    let z = (1.0 + a / b - a / c) / 4.0;
    let e = (1.0 + a / b + a / c) / 4.0;
    let third = split <= 1e-6 / a;
    Variant {
        name: if third { "ORCF3" } else { "ORCF1" },
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("A", [0.5, 0.5 + z, z]),
            ("A1", [0.5, 0.5 - z, 1.0 - z]),
            ("L", [0.5, 0.5, 0.5]),
            ("T", [1.0, 0.5, 0.5]),
            ("X", [0.0, e, e]),
            ("X1", [1.0, 1.0 - e, 1.0 - e]),
            ("Y", [0.5, 0.0, 0.5]),
            ("Z", [0.5, 0.5, 0.0]),
        ],
        path: if third {
            "G-Y-T-Z-G-X-A1-Y|X-A-Z|L-G"
        } else {
            "G-Y-T-Z-G-X-A1-Y|T-X1|X-A-Z|L-G"
        },
    }
}

/// ORCI, with a < b < c.
fn orthorhombic_body_centred(conv: &Mat) -> Variant {
    let [a, b, c] = lengths(conv).map(|x| x * x);
    let z = (1.0 + a / c) / 4.0;
    let e = (1.0 + b / c) / 4.0;
    let d = (b - a) / (4.0 * c);
    let m = (a + b) / (4.0 * c);
    Variant {
        name: "ORCI",
        primitive: centred(conv, BODY),
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("L", [-m, m, 0.5 - d]),
            ("L1", [m, -m, 0.5 + d]),
            ("L2", [0.5 - d, 0.5 + d, -m]),
            ("R", [0.0, 0.5, 0.0]),
            ("S", [0.5, 0.0, 0.0]),
            ("T", [0.0, 0.0, 0.5]),
            ("W", [0.25, 0.25, 0.25]),
            ("X", [-z, z, z]),
            ("X1", [z, 1.0 - z, -z]),
            ("Y", [e, -e, e]),
            ("Y1", [1.0 - e, e, -e]),
            ("Z", [0.5, 0.5, -0.5]),
        ],
        path: "G-X-L-T-W-R-X1-Z-G-Y-S-W|L1-Y|Y1-Z",
    }
}

/// ORCC: the centred face's two axes a < b, and c.
fn orthorhombic_base_centred(conv: &Mat, prim: &Mat) -> Variant {
    let (mut a, mut b, c) = match centred_face(conv, prim) {
        0 => (conv[1], conv[2], conv[0]),
        1 => (conv[2], conv[0], conv[1]),
        _ => (conv[0], conv[1], conv[2]),
    };
    if norm(&a) > norm(&b) {
        std::mem::swap(&mut a, &mut b);
    }
    let z = (1.0 + (norm(&a) / norm(&b)).powi(2)) / 4.0;
    Variant {
        name: "ORCC",
        primitive: [
            [0, 1, 2].map(|i| (a[i] - b[i]) / 2.0),
            [0, 1, 2].map(|i| (a[i] + b[i]) / 2.0),
            c,
        ],
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("A", [z, z, 0.5]),
            ("A1", [-z, 1.0 - z, 0.5]),
            ("R", [0.0, 0.5, 0.5]),
            ("S", [0.0, 0.5, 0.0]),
            ("T", [-0.5, 0.5, 0.5]),
            ("X", [z, z, 0.0]),
            ("X1", [-z, 1.0 - z, 0.0]),
            ("Y", [-0.5, 0.5, 0.0]),
            ("Z", [0.0, 0.0, 0.5]),
        ],
        path: "G-X-S-R-A-Z-G-Y-X1-A1-T-Y|Z-T",
    }
}

/// The axis (0, 1, 2) normal to the centred face of a base-centred cell `conv`: the face whose
/// half diagonal is a vector of the primitive lattice `prim`.
fn centred_face(conv: &Mat, prim: &Mat) -> usize {
    let inverse = reciprocal(prim).map(|r| r.map(|x| x / (2.0 * std::f64::consts::PI)));
    let integral = |v: [f64; 3]| {
        inverse.iter().all(|r| {
            let n = dot(r, &v);
            (n - n.round()).abs() < 1e-4
        })
    };
    (0..3)
        .find(|&axis| {
            let (i, j) = ((axis + 1) % 3, (axis + 2) % 3);
            integral([0, 1, 2].map(|c| (conv[i][c] + conv[j][c]) / 2.0))
        })
        .unwrap_or(2)
}

fn hexagonal(conv: Mat) -> Variant {
    Variant {
        name: "HEX",
        primitive: conv,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("A", [0.0, 0.0, 0.5]),
            ("H", [1.0 / 3.0, 1.0 / 3.0, 0.5]),
            ("K", [1.0 / 3.0, 1.0 / 3.0, 0.0]),
            ("L", [0.5, 0.0, 0.5]),
            ("M", [0.5, 0.0, 0.0]),
        ],
        path: "G-M-K-G-A-L-H-A|L-M|K-H",
    }
}

/// RHL1 (alpha < 90 degrees) and RHL2, from the hexagonal (obverse) conventional cell.
fn rhombohedral(conv: &Mat) -> Variant {
    const OBVERSE: Mat = [
        [2.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        [-1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
        [-1.0 / 3.0, -2.0 / 3.0, 1.0 / 3.0],
    ];
    let primitive = centred(conv, OBVERSE);
    let cos = dot(&primitive[0], &primitive[1]) / (norm(&primitive[0]) * norm(&primitive[1]));
    if cos > 0.0 {
        let e = (1.0 + 4.0 * cos) / (2.0 + 4.0 * cos);
        let n = 0.75 - e / 2.0;
        return Variant {
            name: "RHL1",
            primitive,
            points: vec![
                ("G", [0.0, 0.0, 0.0]),
                ("B", [e, 0.5, 1.0 - e]),
                ("B1", [0.5, 1.0 - e, e - 1.0]),
                ("F", [0.5, 0.5, 0.0]),
                ("L", [0.5, 0.0, 0.0]),
                ("L1", [0.0, 0.0, -0.5]),
                ("P", [e, n, n]),
                ("P1", [1.0 - n, 1.0 - n, 1.0 - e]),
                ("P2", [n, n, e - 1.0]),
                ("Q", [1.0 - n, n, 0.0]),
                ("X", [n, 0.0, -n]),
                ("Z", [0.5, 0.5, 0.5]),
            ],
            path: "G-L-B1|B-Z-G-X|Q-F-P1-Z|L-P",
        };
    }
    let half = cos.acos() / 2.0;
    let e = 1.0 / (2.0 * half.tan().powi(2));
    let n = 0.75 - e / 2.0;
    Variant {
        name: "RHL2",
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("F", [0.5, -0.5, 0.0]),
            ("L", [0.5, 0.0, 0.0]),
            ("P", [1.0 - n, -n, 1.0 - n]),
            ("P1", [n, n - 1.0, n - 1.0]),
            ("Q", [e, e, e]),
            ("Q1", [1.0 - e, -e, -e]),
            ("Z", [0.5, -0.5, 0.5]),
        ],
        path: "G-P-Z-Q-G-F-P1-Q1-L-Z",
    }
}

/// The monoclinic cell `conv`'s unique axis (the vector normal to the other two) and the other
/// two, in order.
fn unique_axis(conv: &Mat) -> (usize, [usize; 2]) {
    let normal = |j: usize| {
        let (p, q) = ((j + 1) % 3, (j + 2) % 3);
        (dot(&conv[j], &conv[p]) / (norm(&conv[j]) * norm(&conv[p]))).abs()
            + (dot(&conv[j], &conv[q]) / (norm(&conv[j]) * norm(&conv[q]))).abs()
    };
    let j = (0..3)
        .min_by(|&a, &b| normal(a).total_cmp(&normal(b)))
        .unwrap_or(1);
    let (p, q) = ((j + 1) % 3, (j + 2) % 3);
    (j, [p.min(q), p.max(q)])
}

/// `v` negated when its angle with `u` is above 90 degrees.
fn acute_to(u: &[f64; 3], v: [f64; 3]) -> [f64; 3] {
    if dot(u, &v) < 0.0 {
        v.map(|x| -x)
    } else {
        v
    }
}

/// MCL: a the unique axis; b <= c the shortest basis of the lattice plane normal to it (Gauss
/// reduced), at an angle alpha < 90 degrees.
fn monoclinic(conv: &Mat) -> Variant {
    let (j, [p, q]) = unique_axis(conv);
    let (mut b, mut c) = (conv[p], conv[q]);
    // Gauss's reduction of the plane's basis.
    loop {
        if norm(&b) > norm(&c) {
            std::mem::swap(&mut b, &mut c);
        }
        let m = (dot(&b, &c) / dot(&b, &b)).round();
        if m == 0.0 {
            break;
        }
        c = [0, 1, 2].map(|i| c[i] - m * b[i]);
    }
    let c = acute_to(&b, c);
    let cos = dot(&b, &c) / (norm(&b) * norm(&c));
    let sin2 = 1.0 - cos * cos;
    let (lb, lc) = (norm(&b), norm(&c));
    let eta = (1.0 - lb * cos / lc) / (2.0 * sin2);
    let nu = 0.5 - eta * lc * cos / lb;
    Variant {
        name: "MCL",
        primitive: [conv[j], b, c],
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("A", [0.5, 0.5, 0.0]),
            ("C", [0.0, 0.5, 0.5]),
            ("D", [0.5, 0.0, 0.5]),
            ("D1", [0.5, 0.0, -0.5]),
            ("E", [0.5, 0.5, 0.5]),
            ("H", [0.0, eta, 1.0 - nu]),
            ("H1", [0.0, 1.0 - eta, nu]),
            ("H2", [0.0, eta, -nu]),
            ("M", [0.5, eta, 1.0 - nu]),
            ("M1", [0.5, 1.0 - eta, nu]),
            ("M2", [0.5, eta, -nu]),
            ("X", [0.0, 0.5, 0.0]),
            ("Y", [0.0, 0.0, 0.5]),
            ("Y1", [0.0, 0.0, -0.5]),
            ("Z", [0.5, 0.0, 0.0]),
        ],
        path: "G-Y-H-C-E-M1-A-X-H1|M-D-Z|Y-D",
    }
}

/// MCLC1-5: a the unique axis, b the other axis of the centred face, c the shortest vector
/// c + n b (n whole) at least as long as b, signed so that alpha < 90 degrees.
fn monoclinic_base_centred(conv: &Mat, prim: &Mat) -> Option<Variant> {
    let (j, _) = unique_axis(conv);
    let face = centred_face(conv, prim);
    let other = (0..3).find(|&i| i != j && i != face)?;
    let (a, b) = (conv[j], conv[other]);
    let c = (-4..=4)
        .map(|n| acute_to(&b, [0, 1, 2].map(|i| conv[face][i] + f64::from(n) * b[i])))
        .filter(|c| norm(c) >= norm(&b) * (1.0 - 1e-9))
        .min_by(|x, y| norm(x).total_cmp(&norm(y)))?;
    let (la, lb, lc) = (norm(&a), norm(&b), norm(&c));
    let cos = dot(&b, &c) / (lb * lc);
    let sin2 = 1.0 - cos * cos;
    let primitive = [
        [0, 1, 2].map(|i| (a[i] + b[i]) / 2.0),
        [0, 1, 2].map(|i| (b[i] - a[i]) / 2.0),
        c,
    ];
    let recip = reciprocal(&primitive);
    let k_cos = dot(&recip[0], &recip[1]) / (norm(&recip[0]) * norm(&recip[1]));
    let (a2, b2) = (la * la, lb * lb);
    let shape = lb * cos / lc + b2 * sin2 / a2;
    Some(if k_cos.abs() < 1e-6 || k_cos < 0.0 {
        monoclinic_c12(primitive, k_cos.abs() < 1e-6, [la, lb, lc], cos)
    } else if (shape - 1.0).abs() < 1e-6 || shape < 1.0 {
        monoclinic_c34(primitive, (shape - 1.0).abs() < 1e-6, [la, lb, lc], cos)
    } else {
        monoclinic_c5(primitive, [la, lb, lc], cos)
    })
}

/// MCLC1 (reciprocal gamma above 90 degrees) and MCLC2 (at 90).
fn monoclinic_c12(primitive: Mat, two: bool, [a, b, c]: [f64; 3], cos: f64) -> Variant {
    let sin2 = 1.0 - cos * cos;
    let zeta = (2.0 - b * cos / c) / (4.0 * sin2);
    let eta = 0.5 + 2.0 * zeta * c * cos / b;
    let psi = 0.75 - a * a / (4.0 * b * b * sin2);
    let phi = psi + (0.75 - psi) * b * cos / c;
    Variant {
        name: if two { "MCLC2" } else { "MCLC1" },
        primitive,
        points: vec![
            ("G", [0.0, 0.0, 0.0]),
            ("N", [0.5, 0.0, 0.0]),
            ("N1", [0.0, -0.5, 0.0]),
            ("F", [1.0 - zeta, 1.0 - zeta, 1.0 - eta]),
            ("F1", [zeta, zeta, eta]),
            ("F2", [-zeta, -zeta, 1.0 - eta]),
            ("F3", [1.0 - zeta, -zeta, 1.0 - eta]),
            ("I", [phi, 1.0 - phi, 0.5]),
            ("I1", [1.0 - phi, phi - 1.0, 0.5]),
            ("L", [0.5, 0.5, 0.5]),
            ("M", [0.5, 0.0, 0.5]),
            ("X", [1.0 - psi, psi - 1.0, 0.0]),
            ("X1", [psi, 1.0 - psi, 0.0]),
            ("X2", [psi - 1.0, -psi, 0.0]),
            ("Y", [0.5, 0.5, 0.0]),
            ("Y1", [-0.5, -0.5, 0.0]),
            ("Z", [0.0, 0.0, 0.5]),
        ],
        path: if two {
            "G-Y-F-L-I|I1-Z-F1|N-G-M"
        } else {
            "G-Y-F-L-I|I1-Z-F1|Y-X1|X-G-N|M-G"
        },
    }
}

/// MCLC3 (b cos(alpha)/c + b² sin²(alpha)/a² below 1) and MCLC4 (equal to 1).
fn monoclinic_c34(primitive: Mat, four: bool, [a, b, c]: [f64; 3], cos: f64) -> Variant {
    let sin2 = 1.0 - cos * cos;
    let (a2, b2) = (a * a, b * b);
    let mu = 0.25 * (1.0 + b2 / a2);
    let delta = b * c * cos / (2.0 * a2);
    let zeta = mu - 0.25 + (1.0 - b * cos / c) / (4.0 * sin2);
    let eta = 0.5 + 2.0 * zeta * c * cos / b;
    let phi = 1.0 + zeta - 2.0 * mu;
    let psi = eta - 2.0 * delta;
    Variant {
        name: if four { "MCLC4" } else { "MCLC3" },
        primitive,
        points: [
            ("G", [0.0, 0.0, 0.0]),
            ("F", [1.0 - phi, 1.0 - phi, 1.0 - psi]),
            ("F1", [phi, phi - 1.0, psi]),
            ("F2", [1.0 - phi, -phi, 1.0 - psi]),
            ("I", [0.5, -0.5, 0.5]),
        ]
        .into_iter()
        .chain(mclc_h_to_z(zeta, eta, mu, delta))
        .collect(),
        path: if four {
            "G-Y-F-H-Z-I|H1-Y1-X-G-N|M-G"
        } else {
            "G-Y-F-H-Z-I-F1|H1-Y1-X-G-N|M-G"
        },
    }
}

/// The points H..Z that MCLC3, 4 and 5 share in form.
fn mclc_h_to_z(zeta: f64, eta: f64, mu: f64, delta: f64) -> [(&'static str, [f64; 3]); 12] {
    [
        ("H", [zeta, zeta, eta]),
        ("H1", [1.0 - zeta, -zeta, 1.0 - eta]),
        ("H2", [-zeta, -zeta, 1.0 - eta]),
        ("M", [0.5, 0.0, 0.5]),
        ("N", [0.5, 0.0, 0.0]),
        ("N1", [0.0, -0.5, 0.0]),
        ("X", [0.5, -0.5, 0.0]),
        ("Y", [mu, mu, delta]),
        ("Y1", [1.0 - mu, -mu, -delta]),
        ("Y2", [-mu, -mu, -delta]),
        ("Y3", [mu, mu - 1.0, delta]),
        ("Z", [0.0, 0.0, 0.5]),
    ]
}

/// MCLC5 (b cos(alpha)/c + b² sin²(alpha)/a² above 1).
fn monoclinic_c5(primitive: Mat, [a, b, c]: [f64; 3], cos: f64) -> Variant {
    let sin2 = 1.0 - cos * cos;
    let (a2, b2) = (a * a, b * b);
    let zeta = 0.25 * (b2 / a2 + (1.0 - b * cos / c) / sin2);
    let eta = 0.5 + 2.0 * zeta * c * cos / b;
    let mu = 0.5 * eta + b2 / (4.0 * a2) - b * c * cos / (2.0 * a2);
    let nu = 2.0 * mu - zeta;
    let omega = (4.0 * nu - 1.0 - b2 * sin2 / a2) * c / (2.0 * b * cos);
    let delta = zeta * c * cos / b + omega / 2.0 - 0.25;
    let rho = 1.0 - zeta * a2 / b2;
    Variant {
        name: "MCLC5",
        primitive,
        points: [
            ("G", [0.0, 0.0, 0.0]),
            ("F", [nu, nu, omega]),
            ("F1", [1.0 - nu, 1.0 - nu, 1.0 - omega]),
            ("F2", [nu, nu - 1.0, omega]),
            ("I", [rho, 1.0 - rho, 0.5]),
            ("I1", [1.0 - rho, rho - 1.0, 0.5]),
            ("L", [0.5, 0.5, 0.5]),
        ]
        .into_iter()
        .chain(mclc_h_to_z(zeta, eta, mu, delta))
        .collect(),
        path: "G-Y-F-L-I|I1-Z-H-F1|H1-Y1-X-G-N|M-G",
    }
}

/// TRI1a/2a (reciprocal angles all obtuse or the third right, kgamma the smallest) and
/// TRI1b/2b (all acute, kgamma the largest): the reciprocal lattice's shortest basis (its
/// successive minima), signs that make its angles all acute or all obtuse, and the order
/// that puts kgamma last.
fn triclinic(prim: &Mat) -> Variant {
    let basis = reduced_reciprocal(&reciprocal(prim));
    let angle = |i: usize, j: usize| {
        (dot(&basis[i], &basis[j]) / (norm(&basis[i]) * norm(&basis[j])))
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees()
    };
    // kalpha between b2 and b3, kbeta between b1 and b3, kgamma between b1 and b2.
    let k = [angle(1, 2), angle(0, 2), angle(0, 1)];
    let obtuse = k.iter().all(|&x| x > 90.0 + 1e-6) || (k[2] - 90.0).abs() < 1e-6 && k[0] > 90.0;
    let right = (k[2] - 90.0).abs() < 1e-6;
    let (name, points) = match obtuse {
        true => (
            if right { "TRI2a" } else { "TRI1a" },
            [
                ("L", [0.5, 0.5, 0.0]),
                ("M", [0.0, 0.5, 0.5]),
                ("N", [0.5, 0.0, 0.5]),
                ("R", [0.5, 0.5, 0.5]),
                ("X", [0.5, 0.0, 0.0]),
                ("Y", [0.0, 0.5, 0.0]),
                ("Z", [0.0, 0.0, 0.5]),
            ],
        ),
        false => (
            if right { "TRI2b" } else { "TRI1b" },
            [
                ("L", [0.5, -0.5, 0.0]),
                ("M", [0.0, 0.0, 0.5]),
                ("N", [-0.5, -0.5, 0.5]),
                ("R", [0.0, -0.5, 0.5]),
                ("X", [0.0, -0.5, 0.0]),
                ("Y", [0.5, 0.0, 0.0]),
                ("Z", [-0.5, 0.0, 0.5]),
            ],
        ),
    };
    Variant {
        name,
        primitive: reciprocal(&basis),
        points: std::iter::once(("G", [0.0; 3])).chain(points).collect(),
        path: "X-G-Y|L-G-Z|N-G-M|R-G",
    }
}

/// The reciprocal lattice `recip`'s basis of successive minima (shortest vector, shortest
/// independent of it, shortest completing a basis), its signs set so that the three angles
/// are all acute or all obtuse, ordered so that kgamma (between the first two) is the
/// smallest of obtuse angles or the largest of acute ones.
fn reduced_reciprocal(recip: &Mat) -> Mat {
    let mut candidates: Vec<([i32; 3], [f64; 3])> = Vec::new();
    for n in (-2..=2).flat_map(|i| (-2..=2).flat_map(move |j| (-2..=2).map(move |l| [i, j, l]))) {
        if n != [0, 0, 0] {
            let v = [0, 1, 2].map(|c| (0..3).map(|i| f64::from(n[i]) * recip[i][c]).sum());
            candidates.push((n, v));
        }
    }
    candidates.sort_by(|x, y| norm(&x.1).total_cmp(&norm(&y.1)));
    let det_n = |a: [i32; 3], b: [i32; 3], c: [i32; 3]| {
        a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
            + a[2] * (b[0] * c[1] - b[1] * c[0])
    };
    let first = candidates[0];
    let second = *candidates
        .iter()
        .find(|c| {
            let x = first.0;
            let y = c.0;
            [
                x[1] * y[2] - x[2] * y[1],
                x[2] * y[0] - x[0] * y[2],
                x[0] * y[1] - x[1] * y[0],
            ] != [0, 0, 0]
        })
        .expect("a 3D lattice");
    let third = *candidates
        .iter()
        .find(|c| det_n(first.0, second.0, c.0).abs() == 1)
        .expect("a 3D lattice has a reduced basis");
    let mut b = [first.1, second.1, third.1];
    // Signs: the product of the three cosines fixes whether all can be acute or all obtuse.
    let cos = |b: &Mat, i: usize, j: usize| dot(&b[i], &b[j]);
    // A right angle (kgamma = 90 degrees) takes the acute setting, as ASE's TRI2b.
    let cosines = [cos(&b, 0, 1), cos(&b, 1, 2), cos(&b, 0, 2)];
    let scale = b.iter().map(|v| dot(v, v)).fold(0.0, f64::max);
    let right = cosines.iter().any(|c| c.abs() < 1e-8 * scale);
    let obtuse = !right && cosines.iter().product::<f64>() < 0.0;
    let wrong = |x: f64| if obtuse { x > 1e-12 } else { x < -1e-12 };
    if wrong(cos(&b, 0, 1)) {
        b[1] = b[1].map(|x| -x);
    }
    if wrong(cos(&b, 0, 2)) {
        b[2] = b[2].map(|x| -x);
    }
    // kgamma last: the pair (0, 1) with the smallest (obtuse) or largest (acute) angle.
    let angle = |b: &Mat, i: usize, j: usize| cos(b, i, j) / (norm(&b[i]) * norm(&b[j]));
    let pairs = [(0, 1, 2), (1, 2, 0), (0, 2, 1)];
    let pick = |&(i, j, _): &(usize, usize, usize)| angle(&b, i, j);
    let best = match obtuse {
        true => pairs.iter().max_by(|x, y| pick(x).total_cmp(&pick(y))),
        false => pairs.iter().min_by(|x, y| pick(x).total_cmp(&pick(y))),
    };
    let &(i, j, l) = best.expect("three pairs");
    [b[i], b[j], b[l]]
}

fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One atom at the origin in the cell with rows `lattice`.
    fn one_atom(lattice: Mat) -> Crystal {
        let atoms = vec![Atom {
            species: 0,
            frac: [0.0; 3],
        }];
        Crystal::new(lattice, atoms).unwrap()
    }

    /// Rows `m` (fractions of the rows of `conv`).
    fn cell(conv: Mat, m: Mat) -> Mat {
        centred(&conv, m)
    }

    fn diagonal(a: f64, b: f64, c: f64) -> Mat {
        [[a, 0.0, 0.0], [0.0, b, 0.0], [0.0, 0.0, c]]
    }

    const C_FACE: Mat = [[0.5, -0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]];
    const A_FACE: Mat = [[1.0, 0.0, 0.0], [0.0, 0.5, -0.5], [0.0, 0.5, 0.5]];

    /// A rhombohedral cell of side 4 bohr and angle `alpha` (degrees).
    fn rhombohedral_cell(alpha: f64) -> Mat {
        let (c, h) = (alpha.to_radians().cos(), (alpha / 2.0).to_radians());
        let a3z = (1.0 - c * c / h.cos().powi(2)).sqrt();
        [
            [h.cos(), -h.sin(), 0.0],
            [h.cos(), h.sin(), 0.0],
            [c / h.cos(), 0.0, a3z],
        ]
        .map(|r| r.map(|x| 4.0 * x))
    }

    /// ASE's base-centred monoclinic cell: rows (x, y, 0), (-x, y, 0), (0, cy, cz).
    fn mclc(x: f64, y: f64, cy: f64, cz: f64) -> Mat {
        [[x, y, 0.0], [-x, y, 0.0], [0.0, cy, cz]]
    }

    /// One cell of every variant the convention's tables cover here.
    fn variants() -> Vec<(&'static str, Mat)> {
        let orcf3_a = 1.0 / (1.0f64 / 25.0 + 1.0 / 36.0).sqrt();
        vec![
            ("CUB", diagonal(5.0, 5.0, 5.0)),
            ("FCC", cell(diagonal(7.0, 7.0, 7.0), FACE)),
            ("BCC", cell(diagonal(6.0, 6.0, 6.0), BODY)),
            ("TET", diagonal(4.0, 4.0, 6.0)),
            ("BCT1", cell(diagonal(5.0, 5.0, 4.0), BODY)),
            ("BCT2", cell(diagonal(4.0, 4.0, 7.0), BODY)),
            ("ORC", diagonal(5.0, 3.0, 4.0)),
            ("ORCF1", cell(diagonal(6.0, 3.0, 5.0), FACE)),
            ("ORCF2", cell(diagonal(5.0, 6.0, 7.0), FACE)),
            ("ORCF3", cell(diagonal(orcf3_a, 5.0, 6.0), FACE)),
            ("ORCI", cell(diagonal(4.0, 5.0, 3.0), BODY)),
            ("ORCC", cell(diagonal(3.0, 5.0, 4.0), C_FACE)),
            ("ORCC", cell(diagonal(4.0, 3.0, 5.0), A_FACE)),
            (
                "HEX",
                [
                    [3.0, 0.0, 0.0],
                    [-1.5, 1.5 * 3f64.sqrt(), 0.0],
                    [0.0, 0.0, 5.0],
                ],
            ),
            ("RHL1", rhombohedral_cell(70.0)),
            ("RHL2", rhombohedral_cell(100.0)),
            (
                "MCL",
                [
                    [4.0, 0.0, 0.0],
                    [0.0, 5.0, 0.0],
                    [0.0, 1.5529142706, 5.7955549577],
                ],
            ),
            ("MCLC1", mclc(1.5, 2.0, 3.2139380484, 3.8302222156)),
            (
                "MCLC2",
                mclc(2.414814565722671, 2.5, 1.5529142706151244, 5.79555495773441),
            ),
            (
                "MCLC3",
                mclc(2.3529008379141727, 2.0, 2.052120859954013, 5.63815572471545),
            ),
            (
                "MCLC4",
                mclc(2.139000761740157, 2.0, 2.052120859954013, 5.63815572471545),
            ),
            ("MCLC5", mclc(2.0, 2.0, 4.4995132678, 5.3623111018)),
            (
                "TRI1a",
                [
                    [4.0, 0.0, 0.0],
                    [2.5, 4.3301270189, 0.0],
                    [3.0, 1.7320508076, 4.8989794856],
                ],
            ),
            (
                "TRI1b",
                [
                    [4.0, 0.0, 0.0],
                    [0.0, 5.0, 0.0],
                    [-1.041889066, -1.041889066, 5.8162646388],
                ],
            ),
            (
                "TRI2b",
                [
                    [4.0, 0.0, 1.4813941682253653],
                    [0.0, 3.6363636363636362, 0.6837486641401745],
                    [0.0, 0.0, 3.6094223228610502],
                ],
            ),
        ]
    }

    /// Cartesian k (1/bohr) of fractions `f` of `crystal`'s reciprocal vectors.
    fn cartesian(crystal: &Crystal, f: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|c| (0..3).map(|i| f[i] * crystal.recip[i][c]).sum())
    }

    /// `k - G` for the reciprocal vector G nearest `k`.
    fn nearest_image(crystal: &Crystal, k: [f64; 3]) -> [f64; 3] {
        let shifts =
            (-3..=3).flat_map(|i| (-3..=3).flat_map(move |j| (-3..=3).map(move |l| [i, j, l])));
        shifts
            .map(|n| sub(&k, &cartesian(crystal, n.map(f64::from))))
            .min_by(|x, y| norm(x).total_cmp(&norm(y)))
            .unwrap()
    }

    /// How far `k` is from the zone boundary: min over G != 0 of |k - G| - |k| (0 on the
    /// boundary, positive inside, negative outside the first zone).
    fn inside_by(crystal: &Crystal, k: [f64; 3]) -> f64 {
        let mut least = f64::INFINITY;
        for n in (-3..=3).flat_map(|i| (-3..=3).flat_map(move |j| (-3..=3).map(move |l| [i, j, l])))
        {
            if n == [0, 0, 0] {
                continue;
            }
            let g = cartesian(crystal, n.map(f64::from));
            least = least.min(norm(&sub(&k, &g)) - norm(&k));
        }
        least
    }

    #[test]
    fn every_special_point_lies_on_the_zone_boundary() {
        for (name, lattice) in variants() {
            let crystal = one_atom(lattice);
            let p = automatic(&crystal, DENSITY).unwrap();
            assert_eq!(p.lattice, name, "{lattice:?}");
            assert!((p.cells - 1.0).abs() < 1e-9, "{name}: {} cells", p.cells);
            let scale = norm(&crystal.recip[0]);
            for v in &p.bands.path {
                // Some of the convention's monoclinic points lie a reciprocal vector away
                // from the first zone: take the image nearest Γ.
                let k = nearest_image(&crystal, cartesian(&crystal, v.k));
                let d = inside_by(&crystal, k);
                if v.label == "G" {
                    assert!(norm(&k) < 1e-12, "{name}: Γ at {k:?}");
                } else if !name.starts_with("MCLC") {
                    // (Setyawan and Curtarolo's base-centred monoclinic points are not all on
                    // the boundary: their lengths are checked against ASE's instead.)
                    assert!(
                        d.abs() < 1e-9 * scale,
                        "{name} {}: {d:e} from the boundary",
                        v.label
                    );
                }
            }
        }
    }

    #[test]
    fn paths_and_point_lengths_are_ase_s() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/kpath/ase_special_points.json"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = doc["cases"].as_array().unwrap();
        assert_eq!(cases.len(), variants().len());
        for case in cases {
            let rows: Mat = serde_json::from_value(case["lattice_rows"].clone()).unwrap();
            let crystal = one_atom(rows);
            let p = automatic(&crystal, DENSITY).unwrap();
            assert_eq!(p.lattice, case["variant"], "{rows:?}");
            // ASE writes Σ as S, and the route without dashes, breaks as commas.
            let ase = |l: &str| l.replace('Σ', "S");
            let route = ase(&p.route()).replace('-', "").replace('|', ",");
            assert_eq!(route, case["path"].as_str().unwrap(), "{}", p.lattice);
            for v in &p.bands.path {
                let want = case["special_point_lengths"][ase(&v.label)]
                    .as_f64()
                    .unwrap();
                let got = norm(&cartesian(&crystal, v.k));
                assert!(
                    (got - want).abs() < 1e-9,
                    "{} {}: {got} against ASE's {want}",
                    p.lattice,
                    v.label
                );
            }
        }
    }

    #[test]
    fn silicon_in_pw_x_setting_gets_the_fcc_path() {
        let a = 10.26;
        let lattice =
            [[-1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [-1.0, 1.0, 0.0]].map(|r| r.map(|x| x * a / 2.0));
        let atoms = [[0.0; 3], [0.25; 3]].map(|frac| Atom { species: 0, frac });
        let crystal = Crystal::new(lattice, atoms.to_vec()).unwrap();
        let p = automatic(&crystal, DENSITY).unwrap();
        assert_eq!(
            (p.lattice, p.route().as_str()),
            ("FCC", "G-X-W-K-G-L-U-W-L-K|U-X")
        );
        let unit = 2.0 * std::f64::consts::PI / a;
        let length = |label: &str| {
            let v = p.bands.path.iter().find(|v| v.label == label).unwrap();
            norm(&cartesian(&crystal, v.k)) / unit
        };
        for (label, want) in [
            ("X", 1.0),
            ("L", 0.75f64.sqrt()),
            ("W", 1.25f64.sqrt()),
            ("K", 1.125f64.sqrt()),
            ("U", 1.125f64.sqrt()),
        ] {
            assert!(
                (length(label) - want).abs() < 1e-12,
                "{label}: {} 2π/a",
                length(label)
            );
        }
        // Γ to X: 2π/a = 0.612 / bohr at 40 points per 1/bohr.
        assert_eq!(p.bands.path[0].points, 24);
        assert_eq!(p.bands.path[9].points, 1, "K jumps to U");
    }

    #[test]
    fn orientation_and_cell_choice_leave_the_path_alone() {
        let (c, s) = (0.3f64.cos(), 0.3f64.sin());
        let rotate = |v: [f64; 3]| [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]];
        let lengths = |m: Mat| {
            let crystal = one_atom(m);
            let p = automatic(&crystal, DENSITY).unwrap();
            let ks: Vec<f64> = (p.bands.path.iter())
                .map(|v| norm(&cartesian(&crystal, v.k)))
                .collect();
            (p.route(), ks)
        };
        let cases = variants()
            .into_iter()
            .filter(|(name, _)| ["ORCI", "MCL", "MCLC3", "TRI1a"].contains(name));
        for (name, lattice) in cases {
            // Another primitive basis of the same lattice: a1' = a1 + a2, a2' = a2,
            // a3' = a3 - a1, rotated.
            let other = [
                rotate(add(&lattice[0], &lattice[1])),
                rotate(lattice[1]),
                rotate(sub(&lattice[2], &lattice[0])),
            ];
            let (route, ks) = lengths(lattice);
            let (route2, ks2) = lengths(other);
            assert_eq!(route, route2, "{name}");
            for (a, b) in ks.iter().zip(&ks2) {
                assert!((a - b).abs() < 1e-10, "{name}: {ks:?} {ks2:?}");
            }
        }
    }

    fn add(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
        [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
    }

    #[test]
    fn a_supercell_gets_the_primitive_path_and_says_how_many_cells() {
        let fcc = [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [0.5, 0.5, 0.0],
        ];
        let atoms = fcc.map(|frac| Atom { species: 0, frac });
        let crystal = Crystal::new(diagonal(7.0, 7.0, 7.0), atoms.to_vec()).unwrap();
        let p = automatic(&crystal, DENSITY).unwrap();
        assert_eq!(p.lattice, "FCC");
        assert!((p.cells - 4.0).abs() < 1e-9, "{}", p.cells);
    }
}
