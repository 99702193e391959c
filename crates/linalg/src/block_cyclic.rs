//! The 2-D block-cyclic layout of ScaLAPACK: which rank of a `pr x pc` process grid owns which
//! entries of a square matrix, and where they sit in its local array.
//!
//! Contract: pure index arithmetic (no MPI, always compiled, used by the `scalapack` feature's
//! distributed eigensolver). A [`BlockCyclic`] layout of a `dim x dim` matrix with square
//! blocks of `nb` and the first block on process (0, 0) gives global row `i` to process row
//! `(i / nb) % pr` as its local row `(i / (nb pr)) nb + i % nb`, and the same for columns;
//! local arrays are column-major with leading dimension `max(1, local_rows)` — exactly
//! ScaLAPACK's `DESCINIT` with `RSRC = CSRC = 0` and `NUMROC`. [`grid_shape`] picks the grid.

/// The most square grid `pr x pc` with `pr <= pc` and `pr * pc <= p` (the ranks beyond
/// `pr * pc` take no part in the grid): `pr = floor(sqrt(p))`, `pc = floor(p / pr)`.
/// `p = 0` gives `(1, 1)`.
pub fn grid_shape(p: usize) -> (usize, usize) {
    let p = p.max(1);
    let mut pr = (p as f64).sqrt() as usize;
    while pr * pr > p {
        pr -= 1;
    }
    while (pr + 1) * (pr + 1) <= p {
        pr += 1;
    }
    (pr, p / pr)
}

/// Entries `dim` split into blocks of `nb`, dealt cyclically over `nprocs` processes: how
/// many `iproc` owns (ScaLAPACK's `NUMROC` with source process 0).
pub fn local_count(dim: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    let nb = nb.max(1);
    let nblocks = dim / nb;
    let mut n = (nblocks / nprocs) * nb;
    let extra = nblocks % nprocs;
    if iproc < extra {
        n += nb;
    } else if iproc == extra {
        n += dim % nb;
    }
    n
}

/// The global index of local index `l` on process `iproc` of `nprocs` (block size `nb`).
pub fn local_to_global(l: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    (l / nb) * nb * nprocs + iproc * nb + l % nb
}

/// A `dim x dim` matrix in square `nb x nb` blocks over a `pr x pc` grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockCyclic {
    /// Matrix dimension.
    pub dim: usize,
    /// Block size (rows and columns).
    pub nb: usize,
    /// Process rows.
    pub pr: usize,
    /// Process columns.
    pub pc: usize,
}

impl BlockCyclic {
    /// Local rows held by process row `prow`.
    pub fn local_rows(&self, prow: usize) -> usize {
        local_count(self.dim, self.nb, prow, self.pr)
    }
    /// Local columns held by process column `pcol`.
    pub fn local_cols(&self, pcol: usize) -> usize {
        local_count(self.dim, self.nb, pcol, self.pc)
    }
    /// Leading dimension of process row `prow`'s local array (at least 1, as ScaLAPACK wants).
    pub fn lld(&self, prow: usize) -> usize {
        self.local_rows(prow).max(1)
    }
    /// Global row of local row `l` on process row `prow`.
    pub fn global_row(&self, l: usize, prow: usize) -> usize {
        local_to_global(l, self.nb, prow, self.pr)
    }
    /// Global column of local column `l` on process column `pcol`.
    pub fn global_col(&self, l: usize, pcol: usize) -> usize {
        local_to_global(l, self.nb, pcol, self.pc)
    }
    /// Local columns of process column `pcol` whose global column is below `ncols` (they
    /// come first: global columns grow with the local index).
    pub fn local_cols_below(&self, pcol: usize, ncols: usize) -> usize {
        (0..self.local_cols(pcol))
            .take_while(|&l| self.global_col(l, pcol) < ncols)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_shapes_are_most_square() {
        let want = [
            (1, (1, 1)),
            (2, (1, 2)),
            (3, (1, 3)),
            (4, (2, 2)),
            (5, (2, 2)),
            (6, (2, 3)),
            (8, (2, 4)),
            (9, (3, 3)),
            (16, (4, 4)),
            (17, (4, 4)),
        ];
        for (p, g) in want {
            assert_eq!(grid_shape(p), g, "p = {p}");
        }
    }

    #[test]
    fn layout_covers_every_entry_once() {
        for (dim, nb, pr, pc) in [
            (1, 32, 2, 2),
            (70, 32, 2, 2),
            (100, 7, 3, 2),
            (64, 32, 1, 3),
        ] {
            let bc = BlockCyclic { dim, nb, pr, pc };
            let mut seen = vec![0u8; dim * dim];
            for prow in 0..pr {
                for pcol in 0..pc {
                    for lj in 0..bc.local_cols(pcol) {
                        for li in 0..bc.local_rows(prow) {
                            let (i, j) = (bc.global_row(li, prow), bc.global_col(lj, pcol));
                            assert!(i < dim && j < dim);
                            seen[i + j * dim] += 1;
                        }
                    }
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "{bc:?}");
            let rows: usize = (0..pr).map(|r| bc.local_rows(r)).sum();
            assert_eq!(rows, dim);
        }
        let bc = BlockCyclic {
            dim: 100,
            nb: 7,
            pr: 1,
            pc: 3,
        };
        // Process column 1 holds global columns 7..14, 28..35, ...
        assert_eq!(bc.local_cols_below(1, 30), 9);
    }
}
