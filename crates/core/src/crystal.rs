//! `Crystal`: the periodic cell and the atoms in it (bohr), with reciprocal-space helpers.
//!
//! Lattice vectors are the ROWS a1, a2, a3; reciprocal vectors b_i satisfy a_i . b_j = 2 pi delta_ij.
//! Atom positions are fractional; Cartesian positions are derived.

/// One atom: index of its species and fractional position.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    /// Index into the model's species list.
    pub species: usize,
    /// Fractional coordinates along a1, a2, a3.
    pub frac: [f64; 3],
}

/// A periodic cell with atoms.
#[derive(Clone, Debug)]
pub struct Crystal {
    /// Rows a1, a2, a3 in bohr.
    pub lattice: [[f64; 3]; 3],
    /// Rows b1, b2, b3 in 1/bohr.
    pub recip: [[f64; 3]; 3],
    /// |det| of the lattice, bohr^3 (left-handed cells have a negative determinant and are valid).
    pub volume: f64,
    /// The atoms.
    pub atoms: Vec<Atom>,
}

impl Crystal {
    /// Build a crystal; fails for a (near-)singular lattice.
    pub fn new(lattice: [[f64; 3]; 3], atoms: Vec<Atom>) -> Result<Self, String> {
        let det = det3(&lattice);
        let scale: f64 = lattice.iter().map(norm).product();
        if det.is_nan() || det.abs() <= 1e-8 * scale || scale == 0.0 {
            return Err(format!(
                "the lattice vectors are (nearly) linearly dependent: cell volume {det:.3e} bohr^3"
            ));
        }
        Ok(Self {
            lattice,
            recip: reciprocal(&lattice),
            volume: det.abs(),
            atoms,
        })
    }

    /// Cartesian position (bohr) of a fractional point.
    pub fn to_cartesian(&self, frac: &[f64; 3]) -> [f64; 3] {
        let a = &self.lattice;
        [0, 1, 2].map(|j| frac[0] * a[0][j] + frac[1] * a[1][j] + frac[2] * a[2][j])
    }

    /// Cartesian vector (1/bohr) of reciprocal fractional coordinates (Miller indices or k).
    pub fn recip_to_cartesian(&self, q: &[f64; 3]) -> [f64; 3] {
        let b = &self.recip;
        [0, 1, 2].map(|j| q[0] * b[0][j] + q[1] * b[1][j] + q[2] * b[2][j])
    }

    /// Cartesian atom positions (bohr).
    pub fn positions(&self) -> Vec<[f64; 3]> {
        self.atoms
            .iter()
            .map(|a| self.to_cartesian(&a.frac))
            .collect()
    }
}

/// The reciprocal vectors (rows) of the lattice rows `m`: b_i = 2 pi (a_j x a_k) / det, so
/// that a_i . b_j = 2 pi delta_ij (for left-handed cells too).
pub(crate) fn reciprocal(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let f = 2.0 * std::f64::consts::PI / det3(m);
    [
        scale3(cross(&m[1], &m[2]), f),
        scale3(cross(&m[2], &m[0]), f),
        scale3(cross(&m[0], &m[1]), f),
    ]
}

pub(crate) fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

pub(crate) fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn norm(a: &[f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

pub(crate) fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn scale3(a: [f64; 3], f: f64) -> [f64; 3] {
    a.map(|x| x * f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_is_dual_even_for_left_handed_cells() {
        for s in [1.0, -1.0] {
            let lat = [
                [0.0, 5.13, 5.13],
                [5.13, 0.0, 5.13],
                [s * 5.13, s * 5.13, 0.0],
            ];
            let c = Crystal::new(lat, vec![]).unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    let d = dot(&c.lattice[i], &c.recip[j]);
                    let e = if i == j {
                        2.0 * std::f64::consts::PI
                    } else {
                        0.0
                    };
                    assert!((d - e).abs() < 1e-12);
                }
            }
            assert!((c.volume - 2.0 * 5.13f64.powi(3)).abs() < 1e-9);
        }
    }

    #[test]
    fn singular_lattice_is_rejected() {
        let lat = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]];
        assert!(Crystal::new(lat, vec![]).is_err());
    }
}
