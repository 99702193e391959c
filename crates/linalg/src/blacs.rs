//! A BLACS process grid over a planewave-comm MPI communicator (feature `scalapack`).
//!
//! Contract: [`BlacsGrid::new`] is collective over the communicator (every rank calls it, in
//! the same order relative to other collectives). It registers the communicator's `MPI_Comm`
//! with BLACS (`Csys2blacs_handle`) and builds a row-major `pr x pc` grid
//! (`Cblacs_gridinit`, shape from [`grid_shape`]): ranks `0..pr*pc` get the coordinates
//! `(rank / pc, rank % pc)` (verified with `Cblacs_gridinfo`), the remaining ranks are
//! outside the grid (`coords() == None`). Dropping the grid releases the BLACS context and
//! the system handle (`Cblacs_gridexit`, `Cfree_blacs_system_handle`); drop it on every rank
//! in the same order. Only communicators that downcast to [`Mpi`] (through
//! [`Communicator::as_any`]) have a grid; others give an error.
//!
//! BLACS calls MPI itself, outside planewave-comm's serialisation lock: when MPI granted
//! less than `MPI_THREAD_MULTIPLE`, no other thread of the process may call MPI meanwhile.

use crate::block_cyclic::grid_shape;
use crate::scalar::LinalgError;
use mpi::ffi::MPI_Comm;
use mpi::raw::AsRaw;
use planewave_comm::mpi::Mpi;
use planewave_comm::Communicator;
use std::os::raw::{c_char, c_int};

extern "C" {
    fn Csys2blacs_handle(comm: MPI_Comm) -> c_int;
    fn Cfree_blacs_system_handle(handle: c_int);
    fn Cblacs_gridinit(ctxt: *mut c_int, order: *const c_char, nprow: c_int, npcol: c_int);
    fn Cblacs_gridinfo(
        ctxt: c_int,
        nprow: *mut c_int,
        npcol: *mut c_int,
        myrow: *mut c_int,
        mycol: *mut c_int,
    );
    fn Cblacs_gridexit(ctxt: c_int);
}

/// The MPI communicator behind `comm`, when it is the MPI back end.
pub fn as_mpi(comm: &dyn Communicator) -> Option<&Mpi> {
    comm.as_any()?.downcast_ref::<Mpi>()
}

/// One rank's handle on a BLACS grid (see the module doc).
pub struct BlacsGrid {
    handle: c_int,
    /// BLACS context; negative outside the grid.
    ctxt: c_int,
    pr: usize,
    pc: usize,
    coords: Option<(usize, usize)>,
}

impl BlacsGrid {
    /// Build the most square grid over `comm` (collective).
    pub fn new(comm: &dyn Communicator) -> Result<BlacsGrid, LinalgError> {
        let mpi = as_mpi(comm).ok_or_else(|| {
            LinalgError(format!(
                "a BLACS grid needs an MPI communicator (this one is {:?})",
                comm.backend()
            ))
        })?;
        let (pr, pc) = grid_shape(comm.size());
        let raw: MPI_Comm = mpi.raw().as_raw();
        // SAFETY: `raw` is the live MPI communicator owned by `mpi`, which the caller keeps
        // alive for this call (borrowed) and, by the contract of planewave-comm's `Mpi`, only
        // exists while MPI is initialised. BLACS stores the handle in its own table (it does
        // not take ownership: we free the table entry in `Drop` before `mpi` can go away,
        // because `BlacsGrid` never outlives a solve that borrows `comm`).
        let handle = unsafe { Csys2blacs_handle(raw) };
        let mut ctxt = handle;
        let (npr, npc) = (
            c_int::try_from(pr).map_err(|_| LinalgError("grid too large".into()))?,
            c_int::try_from(pc).map_err(|_| LinalgError("grid too large".into()))?,
        );
        // SAFETY: `ctxt` is a valid, writable local holding the system handle just returned;
        // `order` points to a NUL-terminated one-character string that outlives the call;
        // `pr * pc <= comm.size()` by `grid_shape`, as BLACS requires. Every rank of the
        // communicator makes this collective call (the contract of `new`).
        unsafe { Cblacs_gridinit(&mut ctxt, c"R".as_ptr(), npr, npc) };
        let mut grid = BlacsGrid {
            handle,
            ctxt,
            pr,
            pc,
            coords: None,
        };
        let in_grid = comm.rank() < pr * pc;
        if in_grid {
            let (mut a, mut b, mut r, mut c) = (0, 0, -1, -1);
            if ctxt >= 0 {
                // SAFETY: `ctxt` is the context gridinit gave this rank (non-negative: the
                // rank is in the grid); the four pointers are distinct writable locals.
                unsafe { Cblacs_gridinfo(ctxt, &mut a, &mut b, &mut r, &mut c) };
            }
            let want = ((comm.rank() / pc) as c_int, (comm.rank() % pc) as c_int);
            if (a, b) != (npr, npc) || (r, c) != want {
                return Err(LinalgError(format!(
                    "BLACS grid: rank {} got grid {a}x{b} at ({r}, {c}), expected \
                     {pr}x{pc} at {want:?}",
                    comm.rank()
                )));
            }
            grid.coords = Some((want.0 as usize, want.1 as usize));
        } else {
            // Ranks outside the grid must not use the context; gridinit gives them -1.
            grid.ctxt = -1;
        }
        Ok(grid)
    }

    /// The BLACS context (for array descriptors; negative outside the grid).
    pub fn context(&self) -> c_int {
        self.ctxt
    }
    /// Grid shape `(pr, pc)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.pr, self.pc)
    }
    /// This rank's `(process row, process column)`, `None` outside the grid.
    pub fn coords(&self) -> Option<(usize, usize)> {
        self.coords
    }
}

impl Drop for BlacsGrid {
    fn drop(&mut self) {
        if self.ctxt >= 0 {
            // SAFETY: `ctxt` is a context this rank obtained from `Cblacs_gridinit` and has not
            // released (it is released only here, once).
            unsafe { Cblacs_gridexit(self.ctxt) };
        }
        // SAFETY: `handle` came from `Csys2blacs_handle` and is freed only here, once; the
        // MPI communicator it refers to is still alive (see `new`).
        unsafe { Cfree_blacs_system_handle(self.handle) };
    }
}
