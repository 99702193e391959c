//! A band-structure path as the input declares it (TOML `[bands]`, the points of QE's
//! `K_POINTS crystal_b`).
//!
//! Contract: the path is a list of labelled vertices in fractional (reciprocal-lattice)
//! coordinates, each with the number of points from it to the next one (QE's crystal_b
//! weight; the last vertex's is not used). [`BandsSpec::kpoints`] spreads them the way pw.x
//! does: `points` equal steps from each vertex, then the last vertex itself. A segment of one
//! point is a jump (QE's `U|K`): it adds no length to the path. The TOML table is read here.

use serde::Deserialize;

use crate::named::Refusal;
use crate::toml::Doc;
use crate::InputError;

/// One vertex of the path.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathVertex {
    /// Its name on the plot (`"G"` and `"Gamma"` are drawn as Γ).
    pub label: String,
    /// Fractional coordinates (units of the reciprocal vectors b1, b2, b3).
    pub k: [f64; 3],
    /// Points from this vertex to the next (1: jump to the next vertex); default 20.
    #[serde(default = "default_points")]
    pub points: usize,
}

fn default_points() -> usize {
    20
}

/// What `planewave bands` computes after the SCF.
#[derive(Debug, Clone, PartialEq)]
pub struct BandsSpec {
    /// The path's vertices, at least two; none: the crystal's high-symmetry path.
    pub path: Vec<PathVertex>,
    /// Bands per k-point (default: the SCF's).
    pub nbands: Option<usize>,
    /// Points per 1/bohr of the high-symmetry path, when the path is the crystal's (None: the
    /// program's default).
    pub density: Option<f64>,
}

/// The k-points of a path and where its vertices fall.
#[derive(Debug, Clone, PartialEq)]
pub struct PathPoints {
    /// Fractional k-points, in path order.
    pub kpoints: Vec<[f64; 3]>,
    /// `(index, label)` of each vertex; a jump's two ends share one index as `"U|K"`.
    pub labels: Vec<(usize, String)>,
    /// Indices `i` where the path jumps from point `i - 1` to point `i` (no length between).
    pub jumps: Vec<usize>,
}

impl BandsSpec {
    /// Checks the path: two vertices or more, finite coordinates, at least one point a segment.
    pub(crate) fn checked(path: Vec<PathVertex>, nbands: Option<usize>) -> Result<Self, Refusal> {
        let hint = "path = [ { label = \"G\", k = [0, 0, 0], points = 20 }, { label = \"X\", k = [0.5, 0, 0.5] } ], or no path for the crystal's own";
        if path.len() < 2 {
            return Err(Refusal::new("a path needs two vertices or more", hint));
        }
        if let Some(v) = path.iter().find(|v| v.k.iter().any(|x| !x.is_finite())) {
            return Err(Refusal::new(
                format!("vertex {}: coordinates must be finite", v.label),
                hint,
            ));
        }
        if let Some(v) = path
            .iter()
            .find(|v| v.k.iter().any(|x| x.abs() > 1.0 + 1e-9))
        {
            let msg = format!(
                "vertex {} at k = ({}, {}, {}) is outside the Brillouin zone's definition: reduced coordinates (fractions of b1, b2, b3) of a zone point lie in [-1, 1]",
                v.label, v.k[0], v.k[1], v.k[2]
            );
            let hint = "give the equivalent point inside (subtract whole reciprocal vectors), or check that the coordinates are reduced and not Cartesian";
            return Err(Refusal::new(msg, hint));
        }
        if let Some(v) = path[..path.len() - 1].iter().find(|v| v.points == 0) {
            let msg = format!(
                "vertex {}: points must be at least 1 (1 jumps to the next vertex)",
                v.label
            );
            return Err(Refusal::new(msg, hint));
        }
        if nbands == Some(0) {
            return Err(Refusal::new(
                "nbands must be at least 1",
                "leave it out for the SCF's",
            ));
        }
        Ok(BandsSpec {
            path,
            nbands,
            density: None,
        })
    }

    /// The path's k-points, as pw.x spreads a crystal_b list.
    pub fn kpoints(&self) -> PathPoints {
        let mut out = PathPoints {
            kpoints: Vec::new(),
            labels: Vec::new(),
            jumps: Vec::new(),
        };
        for (i, v) in self.path.iter().enumerate() {
            out.labels.push((out.kpoints.len(), v.label.clone()));
            let Some(next) = self.path.get(i + 1) else {
                out.kpoints.push(v.k);
                break;
            };
            if v.points == 1 {
                out.jumps.push(out.kpoints.len() + 1);
            }
            for j in 0..v.points {
                let t = j as f64 / v.points as f64;
                out.kpoints
                    .push([0, 1, 2].map(|d| v.k[d] + t * (next.k[d] - v.k[d])));
            }
        }
        out
    }
}

/// The TOML `[bands]` table: a path, or none for the crystal's high-symmetry path at
/// `density` points per 1/bohr.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BandsTable {
    path: Option<Vec<PathVertex>>,
    nbands: Option<i64>,
    density: Option<f64>,
}

impl BandsTable {
    pub(crate) fn read(self, doc: &Doc) -> Result<BandsSpec, InputError> {
        let nbands = self
            .nbands
            .map(|n| doc.count("bands.nbands", n))
            .transpose()?;
        let Some(path) = self.path else {
            if let Some(d) = self.density.filter(|d| !(d.is_finite() && *d > 0.0)) {
                let msg =
                    format!("density must be a positive number of points per 1/bohr, got {d}");
                return Err(doc.err("bands.density", msg, "e.g. density = 40 (the default)"));
            }
            if nbands == Some(0) {
                let msg = "nbands must be at least 1";
                return Err(doc.err("bands.nbands", msg, "leave it out for the SCF's"));
            }
            let density = self.density;
            return Ok(BandsSpec {
                path: Vec::new(),
                nbands,
                density,
            });
        };
        if self.density.is_some() {
            let hint = "remove density (a given path has its points per segment), or the path";
            return Err(doc.err(
                "bands.density",
                "density is for the crystal's own path, and a path is given",
                hint,
            ));
        }
        BandsSpec::checked(path, nbands).map_err(|r| doc.err("bands.path", r.message, r.hint))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_is_spread_as_pw_x_spreads_crystal_b() {
        let v = |label: &str, k: [f64; 3], points| PathVertex {
            label: label.into(),
            k,
            points,
        };
        let spec = BandsSpec::checked(
            vec![
                v("L", [0.5, 0.5, 0.5], 17),
                v("G", [0.0; 3], 20),
                v("X", [0.5, 0.0, 0.5], 7),
                v("U", [0.625, 0.25, 0.625], 1),
                v("K", [0.375, 0.375, 0.75], 21),
                v("G", [0.0; 3], 1),
            ],
            None,
        )
        .unwrap();
        let p = spec.kpoints();
        assert_eq!(p.kpoints.len(), 67);
        let at: Vec<usize> = p.labels.iter().map(|(i, _)| *i).collect();
        assert_eq!(at, [0, 17, 37, 44, 45, 66]);
        assert_eq!(p.jumps, [45]);
        assert_eq!(p.kpoints[18], [0.5 / 20.0, 0.0, 0.5 / 20.0]);
        assert!(BandsSpec::checked(vec![v("G", [0.0; 3], 0)], None).is_err());
        let outside = vec![v("G", [0.0; 3], 5), v("X", [1.5, 0.0, 0.5], 0)];
        let e = BandsSpec::checked(outside, None).unwrap_err();
        assert!(e.message.contains("vertex X") && e.message.contains("outside"));
        let zero = vec![v("G", [0.0; 3], 0), v("X", [0.5, 0.0, 0.5], 0)];
        assert!(BandsSpec::checked(zero, None).is_err());
    }
}
