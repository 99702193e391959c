//! Reading a checkpoint onto the current layout: collective on the world communicator.
//!
//! World rank 0 opens and verifies the file (every checksum) before anything is used, then
//! broadcasts the metadata; every rank checks it against its input. Arrays then travel from
//! rank 0 in pieces of at most [`Transfer::block_bytes`]: first the Miller indices of the density sphere
//! and of each k-point, from which every rank builds, once, the list of (file entry, local
//! entry) pairs it needs; then the coefficients, which each rank copies through that list.

use super::format::{c64_from, millers_from, FileReader};
use super::transport::{group_leaders, Route, Transfer, Transport};
use super::{
    bands_section, block_bands, density_section, input_digest, kpoint_section, structure, Meta,
};
use crate::bands::BandScalar;
use crate::basis::{Basis, Kpoint};
use crate::model::Model;
use crate::parallel::agree_on;
use crate::restart::ScfStart;
use crate::scf::Wavefunctions;
use num_complex::Complex64;
use planewave_comm::{CommClass, CommExt, Communicator};
use planewave_linalg::Mat;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// A checkpoint mapped onto the current run.
pub struct Restart {
    /// Density and bands to start the SCF from.
    pub start: ScfStart,
    /// The file's metadata.
    pub meta: Meta,
    /// What differs from the file and how it was handled (for the log).
    pub notes: Vec<String>,
}

/// Read `path` for (`model`, `basis`) with `nbands` bands, moving its arrays as `transfer`
/// says; bands the file lacks start from the random start of `seed`. Collective on the world
/// communicator.
pub fn read(
    path: &Path,
    model: &Model,
    basis: &Basis,
    (nbands, seed): (usize, u64),
    transfer: Transfer,
) -> Result<Restart, String> {
    let world = basis.parallel.world().clone();
    let (mut reader, meta) = open_shared(path, world.as_ref())?;
    let notes = check(path, &meta, model, basis)?;
    let kind = transfer.transport;
    let mut io = Io::new(reader.as_mut(), world.as_ref(), transfer);
    let density_g = read_density(&mut io, &meta, basis);
    let frac: Vec<[f64; 3]> = meta.kpoints.iter().map(|k| k.frac).collect();
    let mut notes = notes;
    let wavefunctions = if !crate::restart::same_kpoints(&frac, basis) {
        notes.push("the k-points differ from the checkpoint's: bands start afresh".into());
        None
    } else if basis.kpoints.iter().any(Kpoint::is_gamma_real) {
        let psi = read_bands(&mut io, &meta, basis, (nbands, seed), kind);
        Some(Wavefunctions::Real(psi))
    } else {
        let psi = read_bands(&mut io, &meta, basis, (nbands, seed), kind);
        Some(Wavefunctions::Complex(psi))
    };
    io.finish()?;
    if meta.nbands < nbands && wavefunctions.is_some() {
        notes.push(format!(
            "the checkpoint holds {} bands, this run {nbands}: the others start random",
            meta.nbands
        ));
    }
    Ok(Restart {
        start: ScfStart {
            density_g,
            wavefunctions,
            becsum: None,
        },
        meta,
        notes,
    })
}

/// The converged density of checkpoint `path` on this rank's density sphere, with the file's
/// metadata, for a fixed-density step (QE's bands and nscf) of the same crystal: the file is
/// refused unless it was written for the same functional, spin channels, electrons and
/// pseudopotentials ([`super::density_digest`]), the same atoms at the same places in the same
/// cell (1e-6 bohr), and the same cutoff. Collective on the world communicator.
pub fn read_fixed_density(
    path: &Path,
    model: &Model,
    basis: &Basis,
    transfer: Transfer,
) -> Result<(Vec<Vec<Complex64>>, Meta), String> {
    let world = basis.parallel.world().clone();
    let (mut reader, meta) = open_shared(path, world.as_ref())?;
    same_crystal(path, &meta, model, basis)?;
    let mut io = Io::new(reader.as_mut(), world.as_ref(), transfer);
    let density_g = read_density(&mut io, &meta, basis);
    io.finish()?;
    Ok((density_g, meta))
}

/// Refuse a checkpoint of another crystal or physics for a fixed-density step.
fn same_crystal(path: &Path, meta: &Meta, model: &Model, basis: &Basis) -> Result<(), String> {
    let name = path.display();
    let another = |what: String| {
        Err(format!(
            "the SCF state {name} is of another input: {what}; a bands or nscf step needs the SCF's own crystal, pseudopotentials, functional and cutoff (rerun the SCF with this input's, or point prefix/outdir at the right SCF)"
        ))
    };
    match &meta.density_digest {
        None => return Err(format!("the SCF state {name} was written by an older planewave, which did not record what its density depends on: rerun the SCF")),
        Some(d) if *d != super::density_digest(model) => {
            return another("the functional, spin, electron count or pseudopotential files differ".into())
        }
        Some(_) => {}
    }
    let here = structure(model);
    if let Some((theirs, mine)) = other_atoms(meta, &here) {
        return another(format!(
            "its atoms are {}, this input's {}",
            theirs.join(" "),
            mine.join(" ")
        ));
    }
    let (lattice, atoms) = (here.lattice, here.atoms);
    let off = |a: [f64; 3], b: [f64; 3]| (0..3).any(|i| (a[i] - b[i]).abs() > 1e-6);
    if (0..3).any(|i| off(meta.lattice_bohr[i], lattice[i])) {
        return another("the cell differs".into());
    }
    // The displacement between the two positions, less whole lattice vectors, in bohr.
    let moved = |a: [f64; 3], b: [f64; 3]| {
        let d = [0, 1, 2].map(|i| (a[i] - b[i]) - (a[i] - b[i]).round());
        let c = model.crystal.to_cartesian(&d);
        crate::crystal::norm(&c) > 1e-6
    };
    if let Some(i) = (0..atoms.len()).find(|&i| moved(meta.atoms[i].1, atoms[i].1)) {
        return another(format!("atom {} is elsewhere", i + 1));
    }
    if (meta.ecut_ha - basis.ecut).abs() > 1e-9 * basis.ecut {
        return another(format!(
            "its cutoff is {} Ha, this input's {} Ha",
            meta.ecut_ha, basis.ecut
        ));
    }
    Ok(())
}

/// The metadata of the checkpoint `path` on every rank (the file verified whole by rank 0).
/// Collective on `world`.
pub fn read_meta(path: &Path, world: &dyn Communicator) -> Result<Meta, String> {
    open_shared(path, world).map(|(_, meta)| meta)
}

/// Rank 0 opens and verifies `path`; every rank gets its metadata (or the same error).
fn open_shared(
    path: &Path,
    world: &dyn Communicator,
) -> Result<(Option<FileReader<Meta>>, Meta), String> {
    let opened = if world.rank() == 0 {
        FileReader::<Meta>::open(path).map(Some)
    } else {
        Ok(None)
    };
    let reader = agree_on(world, opened).map_err(|e| e.error)?;
    let meta = share_meta(world, reader.as_ref().map(|r| &r.meta));
    Ok((reader, meta))
}

/// Rank 0's metadata on every rank.
fn share_meta(world: &dyn Communicator, meta: Option<&Meta>) -> Meta {
    let mut text = meta
        .map(|m| serde_json::to_vec(m).expect("the metadata serialises"))
        .unwrap_or_default();
    let mut len = [text.len() as u64];
    world.broadcast(&mut len, 0, CommClass::Other);
    text.resize(len[0] as usize, 0);
    world.broadcast(&mut text, 0, CommClass::Other);
    serde_json::from_slice(&text).expect("rank 0 parsed this metadata")
}

/// The species of the file's atoms and of `here`'s, in order, when they differ.
fn other_atoms(meta: &Meta, here: &super::Structure) -> Option<(Vec<String>, Vec<String>)> {
    let kinds = |s: &[String], a: &[(usize, [f64; 3])]| -> Vec<String> {
        a.iter().map(|(i, _)| s[*i].clone()).collect()
    };
    let (theirs, mine) = (
        kinds(&meta.species, &meta.atoms),
        kinds(&here.species, &here.atoms),
    );
    (theirs != mine).then_some((theirs, mine))
}

/// Refuse a file of another input or another list of atoms; describe what else differs.
fn check(path: &Path, meta: &Meta, model: &Model, basis: &Basis) -> Result<Vec<String>, String> {
    let name = path.display();
    if meta.digest != input_digest(model) {
        return Err(format!(
            "checkpoint {name} was written for another input: the functional, smearing, spin, electron count or pseudopotential files differ (start without --restart, or use the input that wrote it)"
        ));
    }
    let here = structure(model);
    if let Some((theirs, mine)) = other_atoms(meta, &here) {
        return Err(format!(
            "checkpoint {name} holds another structure: {} atoms ({}) against this input's {} ({})",
            theirs.len(),
            theirs.join(" "),
            mine.len(),
            mine.join(" ")
        ));
    }
    let (lattice, atoms) = (here.lattice, here.atoms);
    let mut notes = Vec::new();
    let moved = meta
        .atoms
        .iter()
        .zip(&atoms)
        .any(|(a, b)| (0..3).any(|i| (a.1[i] - b.1[i]).abs() > 1e-8));
    let strained =
        (0..3).any(|i| (0..3).any(|j| (meta.lattice_bohr[i][j] - lattice[i][j]).abs() > 1e-8));
    if moved || strained {
        notes.push(
            "the cell or the positions differ from the checkpoint's: its density and bands are carried over by Miller index".into(),
        );
    }
    if (meta.ecut_ha - basis.ecut).abs() > 1e-12 {
        notes.push(format!(
            "the checkpoint's cutoff is {} Ha, this run's {} Ha: plane waves are mapped by Miller index",
            meta.ecut_ha, basis.ecut
        ));
    }
    Ok(notes)
}

/// Rank 0's reader and the communicator the pieces travel on; the first read error is kept
/// (rank 0 then sends zeros, so that every rank completes the protocol).
struct Io<'a> {
    reader: Option<&'a mut FileReader<Meta>>,
    world: &'a dyn Communicator,
    error: Option<String>,
    /// Largest piece moved at once (bytes).
    block_bytes: usize,
}

impl<'a> Io<'a> {
    fn new(
        reader: Option<&'a mut FileReader<Meta>>,
        world: &'a dyn Communicator,
        transfer: Transfer,
    ) -> Self {
        Io {
            reader,
            world,
            error: None,
            block_bytes: transfer.block_bytes,
        }
    }

    /// The first read error of any rank, on every rank.
    fn finish(&mut self) -> Result<(), String> {
        let status = self.error.take().map_or(Ok(()), Err);
        agree_on(self.world, status).map_err(|e| e.error)
    }

    /// Elements `range` of section `name` (of `kind`, `size` bytes each) on the ranks `route`
    /// delivers to, in pieces of `piece` elements: `f(first element, bytes)` there.
    fn stream(
        &mut self,
        route: &Route<'_>,
        name: &str,
        (kind, size): (&str, usize),
        range: Range<usize>,
        piece: usize,
        mut f: impl FnMut(usize, &[u8]),
    ) {
        let mut first = range.start;
        while first < range.end {
            let n = piece.min(range.end - first);
            let bytes = match (&mut self.reader, &self.error) {
                (Some(r), None) => r.read(name, kind, first, n).unwrap_or_else(|e| {
                    self.error = Some(e);
                    vec![0; n * size]
                }),
                _ => Vec::new(),
            };
            if let Some(bytes) = route.deliver(bytes, n * size) {
                f(first, &bytes);
            }
            first += n;
        }
    }

    /// The file entries of a Miller list that this rank needs: (file entry, local entry)
    /// pairs, and with `mirror` also those whose G is minus a local one (G = 0 too when
    /// `mirror_origin`), to be added conjugated (c(-G) = c(G)* of a real function).
    fn index_map(
        &mut self,
        route: &Route<'_>,
        name: &str,
        count: usize,
        local: &HashMap<[i32; 3], usize>,
        (mirror, mirror_origin): (bool, bool),
    ) -> IndexMap {
        let (mut direct, mut conj) = (Vec::new(), Vec::new());
        self.stream(
            route,
            name,
            ("i32x3", 12),
            0..count,
            self.block_bytes / 12,
            |first, bytes| {
                for (f, m) in millers_from(bytes).into_iter().enumerate() {
                    if let Some(&i) = local.get(&m) {
                        direct.push((first + f, i));
                    }
                    if mirror && (mirror_origin || m != [0, 0, 0]) {
                        if let Some(&i) = local.get(&[-m[0], -m[1], -m[2]]) {
                            conj.push((first + f, i));
                        }
                    }
                }
            },
        );
        IndexMap { direct, conj }
    }
}

/// (file entry, local entry) pairs: copied, and added conjugated (see [`Io::index_map`]).
struct IndexMap {
    direct: Vec<(usize, usize)>,
    conj: Vec<(usize, usize)>,
}

/// Local index of each Miller triple.
fn local_index(millers: &[[i32; 3]]) -> HashMap<[i32; 3], usize> {
    millers.iter().enumerate().map(|(i, m)| (*m, i)).collect()
}

/// This rank's density-sphere entries per spin, scaled by Omega_file / Omega to keep the
/// electron count when the cell changed.
fn read_density(io: &mut Io<'_>, meta: &Meta, basis: &Basis) -> Vec<Vec<Complex64>> {
    let local = local_index(&basis.rho_millers);
    let everyone = Route::everyone(io.world);
    let direct = io
        .index_map(
            &everyone,
            "density/millers",
            meta.density_g,
            &local,
            (false, false),
        )
        .direct;
    let scale = crate::crystal::det3(&meta.lattice_bohr).abs() / basis.volume;
    (0..meta.nspin)
        .map(|s| {
            let mut g = vec![Complex64::default(); basis.rho_millers.len()];
            let mut next = 0;
            let piece = io.block_bytes / 16;
            io.stream(
                &everyone,
                &density_section(s),
                ("c64", 16),
                0..meta.density_g,
                piece,
                |first, bytes| {
                    let z = c64_from(bytes);
                    while next < direct.len() && direct[next].0 < first + z.len() {
                        let (f, i) = direct[next];
                        g[i] = z[f - first] * scale;
                        next += 1;
                    }
                },
            );
            g
        })
        .collect()
}

/// The bands of every (spin, k) block this rank owns, on its rows and bands: the file's
/// where it has them, the random start elsewhere. Each block travels by its [`Route`].
fn read_bands<T: BandScalar>(
    io: &mut Io<'_>,
    meta: &Meta,
    basis: &Basis,
    (nbands, seed): (usize, u64),
    kind: Transport,
) -> Vec<Vec<Mat<T>>> {
    let par = &*basis.parallel;
    let leaders = group_leaders(par);
    let mut psi: Vec<Vec<Mat<T>>> = (0..meta.nspin)
        .map(|_| (0..basis.kpoints.len()).map(|_| Mat::zeros(0, 0)).collect())
        .collect();
    for (k, kpt) in basis.kpoints.iter().enumerate() {
        for (s, psi_s) in psi.iter_mut().enumerate() {
            let route = Route::of_block(par, (s, k), &leaders, kind);
            if route.involved() {
                let x = read_block(
                    io,
                    &route,
                    meta,
                    kpt,
                    (s, k),
                    par.owns(s, k),
                    basis,
                    (nbands, seed),
                );
                psi_s[k] = x;
            }
        }
    }
    psi
}

/// Block (s, k) through `route`: this rank's bands if it owns the block (`mine`), else empty.
#[allow(clippy::too_many_arguments)]
fn read_block<T: BandScalar>(
    io: &mut Io<'_>,
    route: &Route<'_>,
    meta: &Meta,
    kpt: &Kpoint,
    (s, k): (usize, usize),
    mine: bool,
    basis: &Basis,
    (nbands, seed): (usize, u64),
) -> Mat<T> {
    let my_bands = basis.parallel.local_bands(nbands);
    let npw = meta.kpoints[k].npw;
    let local = if mine {
        local_index(&kpt.millers)
    } else {
        HashMap::new()
    };
    // A Γ-real file gives a complex run each -G by conjugation; a complex file gives a Γ-real
    // run the real part of each band, (c(G) + c(-G)*) / 2 (a complex band at Γ carries an
    // arbitrary phase, so its half sphere alone is not a real function's).
    let mirror = meta.gamma_real != kpt.is_gamma_real();
    let real_part = kpt.is_gamma_real() && !meta.gamma_real;
    let weight = if real_part { 0.5 } else { 1.0 };
    let IndexMap { direct, conj } =
        io.index_map(route, &kpoint_section(k), npw, &local, (mirror, real_part));
    let mut x = if mine {
        let stream = crate::rng::stream(seed, &[s as u64, k as u64]);
        T::random(kpt, &my_bands, stream.state())
    } else {
        Mat::zeros(0, 0)
    };
    let stored = meta.nbands.min(nbands);
    let per_block = block_bands(npw, io.block_bytes);
    let name = bands_section(s, k);
    io.stream(
        route,
        &name,
        ("c64", 16),
        0..stored * npw,
        per_block * npw,
        |first, bytes| {
            if !mine {
                return;
            }
            let z = c64_from(bytes);
            let b = first / npw..(first + z.len()) / npw;
            let cols: Vec<usize> = (0..my_bands.len())
                .filter(|&c| b.contains(&my_bands[c]))
                .collect();
            let mut p = Mat::<Complex64>::zeros(kpt.npw(), cols.len());
            for (t, &c) in cols.iter().enumerate() {
                let band = &z[(my_bands[c] - b.start) * npw..][..npw];
                for &(f, i) in &direct {
                    p[(i, t)] += weight * band[f];
                }
                for &(f, i) in &conj {
                    p[(i, t)] += weight * band[f].conj();
                }
            }
            let converted = T::from_plane_waves(kpt, &p);
            for (t, &c) in cols.iter().enumerate() {
                x.as_mut().col_mut(c).copy_from(converted.as_ref().col(t));
            }
        },
    );
    x
}
