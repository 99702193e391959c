//! How a G-vector group's ranks share the real-space grid: slab or pencil, and the process grid.
//!
//! Contract: a distributed transform over `P` ranks uses a `p1 × p2` process grid
//! ([`ProcessGrid`], `p1 · p2 = P`). Rank `r` is `(sub, slab) = (r % p1, r / p1)`: `slab`
//! picks the z-range ([`block_range`] of `n2` over `p2`), `sub` the x-plane share of the
//! y-pencil stage and the y-range of the x-pencil (real-space) stage. The `p1` ranks of one
//! slab are consecutive, so the second transpose stays inside a node when it can.
//! Slab is `p1 = 1` (one all-to-all-v); pencil is `p1 > 1` (two). [`Decomposition::Auto`]
//! picks slab when `P ≤ n2`, else the pencil grid with the largest `p2 ≤ n2` dividing `P`.
//! Empty ranges are allowed (a rank may own no planes); they are legal but unbalanced.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

/// The decomposition a distributed transform should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Decomposition {
    /// Slab when the ranks are no more than the z-planes, pencil otherwise.
    #[default]
    Auto,
    /// Slab: z-planes dealt to ranks, one transpose (the process grid is `1 × P`).
    Slab,
    /// Pencil on a `p1 × p2` process grid (`p1 · p2` must equal the number of ranks).
    Pencil {
        /// Ranks sharing one z-slab (x-planes, then y-lines, dealt among them).
        p1: usize,
        /// Number of z-slabs.
        p2: usize,
    },
}

impl Decomposition {
    /// The process grid for `ranks` ranks on a grid of `dims`.
    pub fn resolve(self, ranks: usize, dims: [usize; 3]) -> Result<ProcessGrid, String> {
        assert!(
            ranks > 0,
            "planewave-fft: a decomposition needs at least one rank"
        );
        match self {
            Decomposition::Slab => Ok(ProcessGrid { p1: 1, p2: ranks }),
            Decomposition::Pencil { p1, p2 } => {
                if p1 == 0 || p2 == 0 || p1 * p2 != ranks {
                    Err(format!(
                        "planewave-fft: pencil grid {p1} x {p2} does not match {ranks} ranks"
                    ))
                } else {
                    Ok(ProcessGrid { p1, p2 })
                }
            }
            Decomposition::Auto => {
                let n2 = dims[2];
                if ranks <= n2 {
                    Ok(ProcessGrid { p1: 1, p2: ranks })
                } else {
                    let p2 = (1..=n2)
                        .rev()
                        .find(|&d| ranks.is_multiple_of(d))
                        .unwrap_or(1);
                    Ok(ProcessGrid { p1: ranks / p2, p2 })
                }
            }
        }
    }
}

impl fmt::Display for Decomposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decomposition::Auto => f.write_str("auto"),
            Decomposition::Slab => f.write_str("slab"),
            Decomposition::Pencil { p1, p2 } => write!(f, "pencil:{p1}x{p2}"),
        }
    }
}

impl FromStr for Decomposition {
    type Err = String;
    /// `auto`, `slab` or `pencil:P1xP2`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "auto" => Ok(Decomposition::Auto),
            "slab" => Ok(Decomposition::Slab),
            _ => t
                .strip_prefix("pencil:")
                .and_then(|g| g.split_once('x'))
                .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                .map(|(p1, p2)| Decomposition::Pencil { p1, p2 })
                .ok_or_else(|| {
                    format!("unknown decomposition '{s}' (expected auto, slab or pencil:P1xP2)")
                }),
        }
    }
}

/// A resolved `p1 × p2` process grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessGrid {
    /// Ranks sharing one z-slab.
    pub p1: usize,
    /// Number of z-slabs.
    pub p2: usize,
}

impl ProcessGrid {
    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.p1 * self.p2
    }
    /// True for a slab decomposition (`p1 == 1`).
    pub fn is_slab(&self) -> bool {
        self.p1 == 1
    }
    /// `(sub, slab)` of rank `r`.
    pub fn coords(&self, r: usize) -> (usize, usize) {
        (r % self.p1, r / self.p1)
    }
    /// Rank of `(sub, slab)`.
    pub fn rank_of(&self, sub: usize, slab: usize) -> usize {
        slab * self.p1 + sub
    }
}

impl fmt::Display for ProcessGrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_slab() {
            write!(f, "slab 1x{}", self.p2)
        } else {
            write!(f, "pencil {}x{}", self.p1, self.p2)
        }
    }
}

/// Part `i` of `0..n` cut into `parts` contiguous ranges whose lengths differ by at most one.
pub fn block_range(n: usize, parts: usize, i: usize) -> Range<usize> {
    debug_assert!(i < parts);
    (i * n / parts)..((i + 1) * n / parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_prefers_slab_then_largest_slab_count() {
        let d = [10, 10, 6];
        assert_eq!(
            Decomposition::Auto.resolve(4, d).unwrap(),
            ProcessGrid { p1: 1, p2: 4 }
        );
        assert_eq!(
            Decomposition::Auto.resolve(8, d).unwrap(),
            ProcessGrid { p1: 2, p2: 4 }
        );
        assert_eq!(
            Decomposition::Auto.resolve(7, d).unwrap(),
            ProcessGrid { p1: 7, p2: 1 }
        );
        assert!(Decomposition::Pencil { p1: 2, p2: 3 }
            .resolve(8, d)
            .is_err());
        assert_eq!(
            "pencil:2x4".parse(),
            Ok(Decomposition::Pencil { p1: 2, p2: 4 })
        );
        assert_eq!("Slab".parse(), Ok(Decomposition::Slab));
    }

    #[test]
    fn block_ranges_cover_and_balance() {
        for n in 0..20 {
            for parts in 1..9 {
                let r: Vec<_> = (0..parts).map(|i| block_range(n, parts, i)).collect();
                assert_eq!(r[0].start, 0);
                assert_eq!(r[parts - 1].end, n);
                for w in r.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                let lens: Vec<_> = r.iter().map(|x| x.len()).collect();
                assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1);
            }
        }
    }
}
