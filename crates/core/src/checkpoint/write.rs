//! Writing a checkpoint: collective on the world communicator; world rank 0 writes.
//!
//! The density is gathered over each G-vector group (every group holds the same one) and written
//! sorted by Miller index. For every (spin, k) block the owners' Miller indices are gathered
//! once, then its bands travel to rank 0 in blocks of at most [`Transfer::block_bytes`] (each owning rank
//! sends the bands of the block it holds, over its local plane waves), where they are placed in
//! sorted plane-wave order and streamed to the file. A failed write on rank 0 is carried to the
//! end of the protocol, so that every rank returns the same error.

use super::format::{c64_bytes, millers_bytes, FileWriter};
use super::transport::{group_leaders, Route, Transfer};
use super::{
    bands_section, block_bands, density_digest, density_section, input_digest, kpoint_section,
    structure, KpointMeta, Meta,
};
use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use crate::model::Model;
use crate::occupation::Occupations;
use crate::parallel::agree_on;
use num_complex::Complex64;
use planewave_linalg::Mat;
use std::path::Path;

/// The SCF state to save (this rank's parts).
pub struct Snapshot<'a, T> {
    /// This rank's density-sphere entries per spin channel: the density to continue from.
    pub density_g: &'a [Vec<Complex64>],
    /// `psi[s][k]`: this rank's rows and bands of the blocks it owns.
    pub psi: &'a [Vec<Mat<T>>],
    /// Bands per (spin, k).
    pub nbands: usize,
    /// `eigenvalues[s][k][band]` (Ha), whole on every rank.
    pub eigenvalues: &'a [Vec<Vec<f64>>],
    /// Occupations and Fermi level.
    pub occupations: &'a Occupations,
    /// Iterations done.
    pub iteration: usize,
    /// Whether the SCF has converged.
    pub converged: bool,
    /// Free energy (Ha).
    pub energy: f64,
}

/// Rank 0's file, or nothing elsewhere; after the first failure every write is skipped and
/// the error kept.
struct Sink {
    w: Option<FileWriter>,
    error: Option<String>,
    /// Largest block of bands moved at once (bytes).
    block_bytes: usize,
}

impl Sink {
    fn live(&mut self) -> Option<&mut FileWriter> {
        if self.error.is_some() {
            return None;
        }
        self.w.as_mut()
    }
    fn begin(&mut self, name: &str, kind: &str, count: usize) {
        if let Some(w) = self.live() {
            w.begin(name, kind, count);
        }
    }
    fn data(&mut self, bytes: &[u8]) {
        if let Some(Err(e)) = self.live().map(|w| w.data(bytes)) {
            self.error = Some(e);
        }
    }
    fn end(&mut self) {
        if let Some(w) = self.live() {
            w.end();
        }
    }
}

/// Write `snap` to `path` (replacing it atomically), moving the bands as `transfer` says.
/// Collective on the world communicator.
pub fn write<T: BandScalar>(
    path: &Path,
    model: &Model,
    basis: &Basis,
    snap: &Snapshot<'_, T>,
    transfer: Transfer,
) -> Result<(), String> {
    let world = basis.parallel.world().clone();
    let opened = if world.rank() == 0 {
        FileWriter::create(path).map(Some)
    } else {
        Ok(None)
    };
    let w = agree_on(world.as_ref(), opened).map_err(|e| e.error)?;
    let kind = transfer.transport;
    let mut sink = Sink {
        w,
        error: None,
        block_bytes: transfer.block_bytes,
    };
    write_density(&mut sink, basis, snap.density_g);
    let leaders = group_leaders(&basis.parallel);
    let mut kpoints = Vec::new();
    for (k, kpt) in basis.kpoints.iter().enumerate() {
        for s in 0..snap.density_g.len() {
            let route = Route::of_block(&basis.parallel, (s, k), &leaders, kind);
            if route.involved() {
                write_block(&mut sink, &route, basis, kpt, (s, k), snap);
            }
        }
        kpoints.push(KpointMeta {
            frac: kpt.frac,
            weight: kpt.weight,
            npw: kpt.npw_global(),
        });
    }
    let finished = match (sink.w.take(), sink.error.take()) {
        (_, Some(e)) => Err(e),
        (Some(w), None) => w.finish(meta(model, basis, snap, kpoints)),
        (None, None) => Ok(()),
    };
    agree_on(world.as_ref(), finished).map_err(|e| e.error)
}

/// The footer metadata.
fn meta<T>(model: &Model, basis: &Basis, snap: &Snapshot<'_, T>, kpoints: Vec<KpointMeta>) -> Meta {
    let st = structure(model);
    Meta {
        format: "planewave checkpoint".into(),
        program: format!("planewave {}", env!("CARGO_PKG_VERSION")),
        byte_order: "little-endian".into(),
        digest: input_digest(model),
        density_digest: Some(density_digest(model)),
        lattice_bohr: st.lattice,
        species: st.species,
        atoms: st.atoms,
        ecut_ha: basis.ecut,
        nspin: snap.density_g.len(),
        nbands: snap.nbands,
        gamma_real: basis.kpoints.iter().any(Kpoint::is_gamma_real),
        kpoints,
        density_g: basis.rho_global_millers().len(),
        iteration: snap.iteration,
        converged: snap.converged,
        energy_ha: snap.energy,
        fermi_level_ha: snap.occupations.fermi.clone(),
        eigenvalues_ha: snap.eigenvalues.to_vec(),
        occupations: snap.occupations.occ.clone(),
    }
}

/// Indices that sort `m`.
fn sorted_order(m: &[[i32; 3]]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..m.len()).collect();
    order.sort_by_key(|&i| m[i]);
    order
}

/// `density/millers` and `density/<s>`, sorted by Miller index. Collective on the G groups.
fn write_density(sink: &mut Sink, basis: &Basis, density_g: &[Vec<Complex64>]) {
    let millers = basis.rho_global_millers();
    let order = sorted_order(millers);
    let sorted: Vec<[i32; 3]> = order.iter().map(|&i| millers[i]).collect();
    sink.begin("density/millers", "i32x3", sorted.len());
    sink.data(&millers_bytes(&sorted));
    sink.end();
    for (s, local) in density_g.iter().enumerate() {
        let whole = basis.rho_gather(local);
        let values: Vec<Complex64> = order.iter().map(|&i| whole[i]).collect();
        sink.begin(&density_section(s), "c64", values.len());
        sink.data(&c64_bytes(&values));
        sink.end();
    }
}

/// Where the plane waves of each rank go in the sorted list of a k-point (rank 0 only).
struct RowMap {
    /// Plane waves sent by each rank.
    counts: Vec<usize>,
    /// Sorted position of every gathered plane wave, in rank order.
    position: Vec<usize>,
    /// The sorted, distinct Miller indices.
    sorted: Vec<[i32; 3]>,
}

/// Gather the Miller indices of block (s, k) from its owners (each band group sends the same
/// rows; duplicates merge): the map, on rank 0.
fn gather_rows(route: &Route<'_>, kpt: &Kpoint, owner: bool) -> Option<RowMap> {
    let sent: Vec<i64> = if owner {
        kpt.millers
            .iter()
            .flat_map(|m| m.iter().map(|&x| i64::from(x)))
            .collect()
    } else {
        Vec::new()
    };
    route.gather(&sent).map(|(counts, all)| {
        let m: Vec<[i32; 3]> = all
            .chunks_exact(3)
            .map(|c| [c[0] as i32, c[1] as i32, c[2] as i32])
            .collect();
        let mut sorted = m.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let position = m
            .iter()
            .map(|x| sorted.binary_search(x).expect("gathered from this list"))
            .collect();
        RowMap {
            counts: counts.iter().map(|c| c / 3).collect(),
            position,
            sorted,
        }
    })
}

/// Write `kpoint/<k>/millers` (for s = 0) and `bands/<s>/<k>` (on the ranks `route` involves).
fn write_block<T: BandScalar>(
    sink: &mut Sink,
    route: &Route<'_>,
    basis: &Basis,
    kpt: &Kpoint,
    (s, k): (usize, usize),
    snap: &Snapshot<'_, T>,
) {
    let par = &*basis.parallel;
    let owner = par.owns(s, k);
    let npw = kpt.npw_global();
    let rows = gather_rows(route, kpt, owner);
    debug_assert!(rows.as_ref().is_none_or(|r| r.sorted.len() == npw));
    if let (Some(r), 0) = (&rows, s) {
        sink.begin(&kpoint_section(k), "i32x3", npw);
        sink.data(&millers_bytes(&r.sorted));
        sink.end();
    }
    let nb = snap.nbands;
    sink.begin(&bands_section(s, k), "c64", nb * npw);
    let my_bands = par.local_bands(nb);
    let per_block = block_bands(npw, sink.block_bytes);
    for b0 in (0..nb).step_by(per_block) {
        let b1 = (b0 + per_block).min(nb);
        let cols: Vec<usize> = if owner {
            (0..my_bands.len())
                .filter(|&c| (b0..b1).contains(&my_bands[c]))
                .collect()
        } else {
            Vec::new()
        };
        let ids: Vec<u64> = cols.iter().map(|&c| my_bands[c] as u64).collect();
        let data: Vec<Complex64> = if cols.is_empty() {
            Vec::new()
        } else {
            let p = T::to_plane_waves(kpt, &snap.psi[s][k], &cols);
            (0..p.ncols())
                .flat_map(|j| (0..p.nrows()).map(move |i| (i, j)))
                .map(|(i, j)| p[(i, j)])
                .collect()
        };
        let ids = route.gather(&ids);
        let data = route.gather(&data);
        if let (Some(r), Some((id_counts, all_ids)), Some((_, all_data))) = (&rows, ids, data) {
            let block = assemble(r, &id_counts, &all_ids, &all_data, b0..b1, npw);
            sink.data(&c64_bytes(&block));
        }
    }
    sink.end();
}

/// Bands `b` of one block in sorted plane-wave order, from every rank's (band ids, columns).
fn assemble(
    rows: &RowMap,
    id_counts: &[usize],
    ids: &[u64],
    data: &[Complex64],
    b: std::ops::Range<usize>,
    npw: usize,
) -> Vec<Complex64> {
    let mut block = vec![Complex64::default(); b.len() * npw];
    let (mut row0, mut id0, mut d0) = (0, 0, 0);
    for (&n_rows, &n_ids) in rows.counts.iter().zip(id_counts) {
        let pos = &rows.position[row0..row0 + n_rows];
        for &j in &ids[id0..id0 + n_ids] {
            let out = &mut block[(j as usize - b.start) * npw..][..npw];
            for (&p, &z) in pos.iter().zip(&data[d0..d0 + n_rows]) {
                out[p] = z;
            }
            d0 += n_rows;
        }
        row0 += n_rows;
        id0 += n_ids;
    }
    block
}
