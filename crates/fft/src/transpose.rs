//! The two transposes of the distributed 3-D FFT: index maps and band-blocked pack/unpack.
//!
//! Contract (rank `(sub, slab)` of a [`ProcessGrid`], `nb` bands per call):
//! - Stick stage: `[band][local stick][i2 in 0..n2]`.
//! - y-pencil stage: `[band][i2 in z][x-plane of this sub][i1 in 0..n1]`, where the x-planes
//!   of `sub` are its share of the `i0` planes that hold sticks (planes without sticks are zero
//!   in this direction and are never stored).
//! - x-pencil stage = real space: `[band][i2 in z][i1 in y][i0 in 0..n0]` (see
//!   [`RealLayout`](crate::RealLayout)).
//!
//! [`StickTranspose`] moves stick ↔ y-pencil among its peers: the `p2` ranks of one sub when
//! the sticks were dealt inside subs (pencil), the whole group for a slab; [`PlaneTranspose`] moves
//! y-pencil ↔ x-pencil among the `p1` ranks of one slab (for a slab decomposition `p1 = 1` and
//! the y-pencil buffer already is the message, so no exchange is needed). A message block to or
//! from one rank holds all `nb` bands, `[band][...]`, so one all-to-all-v serves a band block.
//! Every pack and unpack runs one rayon task per destination block or per target plane, with
//! the innermost loop reading (pack) or writing (unpack) contiguously, and index tables built
//! once per plan; the only zeroing is of the planes whose holes must be zero.

use crate::decomposition::{block_range, ProcessGrid};
use crate::stick_deal::StickDistribution;
use crate::C64;
use rayon::prelude::*;
use std::ops::Range;

const ZERO: C64 = C64 { re: 0.0, im: 0.0 };

/// Exclusive prefix sums of `counts`, each times `nb`.
pub(crate) fn displacements(counts: &[usize], nb: usize) -> Vec<usize> {
    let mut d = Vec::with_capacity(counts.len());
    let mut acc = 0;
    for &c in counts {
        d.push(acc);
        acc += c * nb;
    }
    d
}

/// `buf` cut into consecutive blocks of `counts[i] * nb` elements.
fn split_blocks<'a>(mut buf: &'a mut [C64], counts: &[usize], nb: usize) -> Vec<&'a mut [C64]> {
    let mut out = Vec::with_capacity(counts.len());
    for &c in counts {
        let (head, tail) = buf.split_at_mut(c * nb);
        out.push(head);
        buf = tail;
    }
    out
}

/// Stick stage ↔ y-pencil stage, among the peers of this rank.
#[derive(Clone, Debug)]
pub struct StickTranspose {
    pg: ProcessGrid,
    /// Ranks of the group (in the exchange's order) this rank exchanges sticks with.
    peers: Vec<usize>,
    /// Position in `peers` of every rank of the group (`usize::MAX`: not a peer).
    peer_pos: Vec<usize>,
    n2: usize,
    /// z-range of every slab.
    z_all: Vec<Range<usize>>,
    /// This rank's z-range.
    z: Range<usize>,
    /// Local sticks (positions in this rank's list) whose `i0` belongs to each sub.
    groups: Vec<Range<usize>>,
    /// Sub of each local stick.
    stick_sub: Vec<usize>,
    /// Elements per band sent to each peer in the backward direction.
    send_counts: Vec<usize>,
    /// Elements per band received from each peer in the backward direction.
    recv_counts: Vec<usize>,
    /// Offsets in a y-pencil plane of the sticks each peer sends here, in its order.
    src_offsets: Vec<Vec<usize>>,
    /// Length of one y-pencil plane (x-planes of this sub times `n1`).
    plane_len: usize,
}

impl StickTranspose {
    /// Maps for rank `me`; `sub_planes[a]` are the `i0` planes of sub `a` (ascending, and
    /// consecutive in the list of planes that hold sticks); `peers` are the ranks the sticks
    /// are exchanged with, in the order of the exchange's communicator: they must include
    /// every rank of a sub that one of `me`'s sticks belongs to, and every rank holding a
    /// stick of `me`'s sub.
    pub fn new(
        dist: &StickDistribution,
        pg: ProcessGrid,
        me: usize,
        sub_planes: &[Vec<usize>],
        peers: &[usize],
    ) -> Self {
        let [n0, n1, n2] = dist.dims();
        let (sub, slab) = pg.coords(me);
        let z_all: Vec<Range<usize>> = (0..pg.p2).map(|b| block_range(n2, pg.p2, b)).collect();
        // Sub and position inside the sub of every plane.
        let mut plane_sub = vec![usize::MAX; n0];
        let mut plane_pos = vec![usize::MAX; n0];
        for (a, planes) in sub_planes.iter().enumerate() {
            for (ix, &i0) in planes.iter().enumerate() {
                plane_sub[i0] = a;
                plane_pos[i0] = ix;
            }
        }
        let sub_of = |s: usize| plane_sub[dist.stick(s).0];
        let groups_of = |r: usize| -> Vec<Range<usize>> {
            let st = dist.sticks_of(r);
            (0..pg.p1)
                .map(|a| {
                    let lo = st.partition_point(|&s| sub_of(s) < a);
                    let hi = st.partition_point(|&s| sub_of(s) <= a);
                    lo..hi
                })
                .collect()
        };
        let groups = groups_of(me);
        let stick_sub: Vec<usize> = dist.sticks_of(me).iter().map(|&s| sub_of(s)).collect();
        let mut peer_pos = vec![usize::MAX; pg.size()];
        for (i, &p) in peers.iter().enumerate() {
            peer_pos[p] = i;
        }
        let send_counts: Vec<usize> = peers
            .iter()
            .map(|&d| {
                let (a, b) = pg.coords(d);
                groups[a].len() * z_all[b].len()
            })
            .collect();
        let z = z_all[slab].clone();
        let sent: usize = send_counts.iter().sum();
        assert_eq!(
            sent,
            dist.sticks_of(me).len() * n2,
            "planewave-fft: a stick of rank {me} has no peer to go to"
        );
        let mut recv_counts = Vec::with_capacity(peers.len());
        let mut src_offsets = Vec::with_capacity(peers.len());
        for &s in peers {
            let g = groups_of(s)[sub].clone();
            let offs: Vec<usize> = dist.sticks_of(s)[g]
                .iter()
                .map(|&st| {
                    let (i0, i1) = dist.stick(st);
                    plane_pos[i0] * n1 + i1
                })
                .collect();
            recv_counts.push(offs.len() * z.len());
            src_offsets.push(offs);
        }
        Self {
            pg,
            peers: peers.to_vec(),
            peer_pos,
            n2,
            z_all,
            z,
            groups,
            stick_sub,
            send_counts,
            recv_counts,
            src_offsets,
            plane_len: sub_planes[sub].len() * n1,
        }
    }

    /// Elements per band sent to each peer in the backward (sticks → pencils) direction.
    pub fn backward_send_counts(&self) -> &[usize] {
        &self.send_counts
    }
    /// Elements per band received from each peer in the backward direction.
    pub fn backward_recv_counts(&self) -> &[usize] {
        &self.recv_counts
    }

    /// Backward pack: stick columns cut into z-ranges, one block per destination.
    pub fn pack_sticks(&self, sticks: &[C64], nb: usize, send: &mut [C64]) {
        let n2 = self.n2;
        let nst = self.stick_sub.len();
        split_blocks(send, &self.send_counts, nb)
            .into_par_iter()
            .enumerate()
            .for_each(|(i, blk)| {
                let (a, b) = self.pg.coords(self.peers[i]);
                let zr = self.z_all[b].clone();
                let zl = zr.len();
                let mut o = 0;
                for band in 0..nb {
                    for k in self.groups[a].clone() {
                        let src = (band * nst + k) * n2 + zr.start;
                        blk[o..o + zl].copy_from_slice(&sticks[src..src + zl]);
                        o += zl;
                    }
                }
            });
    }

    /// Backward unpack: zero each y-pencil plane and drop every received stick value in.
    pub fn unpack_to_planes(&self, recv: &[C64], nb: usize, planes: &mut [C64]) {
        let pl = self.plane_len;
        if pl == 0 {
            return;
        }
        let nz = self.z.len();
        let disp = displacements(&self.recv_counts, nb);
        planes
            .par_chunks_mut(pl)
            .enumerate()
            .for_each(|(i, plane)| {
                let (band, iz) = (i / nz, i % nz);
                plane.fill(ZERO);
                for (offs, &d) in self.src_offsets.iter().zip(&disp) {
                    let blk = &recv[d + band * offs.len() * nz..d + (band + 1) * offs.len() * nz];
                    for (&off, v) in offs.iter().zip(blk.iter().skip(iz).step_by(nz)) {
                        plane[off] = *v;
                    }
                }
            });
    }

    /// Forward pack: read each source's sticks out of the y-pencil planes.
    pub fn pack_planes(&self, planes: &[C64], nb: usize, send: &mut [C64]) {
        let pl = self.plane_len;
        let nz = self.z.len();
        split_blocks(send, &self.recv_counts, nb)
            .into_par_iter()
            .zip(self.src_offsets.par_iter())
            .for_each(|(blk, offs)| {
                let ns = offs.len();
                for band in 0..nb {
                    for iz in 0..nz {
                        let plane = &planes[(band * nz + iz) * pl..(band * nz + iz + 1) * pl];
                        let out = &mut blk[band * ns * nz..(band + 1) * ns * nz];
                        for (&off, o) in offs.iter().zip(out.iter_mut().skip(iz).step_by(nz)) {
                            *o = plane[off];
                        }
                    }
                }
            });
    }

    /// Forward unpack: reassemble this rank's stick columns from their z-ranges.
    pub fn unpack_to_sticks(&self, recv: &[C64], nb: usize, sticks: &mut [C64]) {
        let n2 = self.n2;
        let nst = self.stick_sub.len();
        if nst == 0 {
            return;
        }
        let disp = displacements(&self.send_counts, nb);
        sticks.par_chunks_mut(n2).enumerate().for_each(|(i, col)| {
            let (band, k) = (i / nst, i % nst);
            let a = self.stick_sub[k];
            let g = self.groups[a].clone();
            let kk = k - g.start;
            for (b, zr) in self.z_all.iter().enumerate() {
                let zl = zr.len();
                let d = disp[self.peer_pos[self.pg.rank_of(a, b)]] + (band * g.len() + kk) * zl;
                col[zr.clone()].copy_from_slice(&recv[d..d + zl]);
            }
        });
    }
}

/// y-pencil stage ↔ x-pencil stage, among the `p1` ranks of one slab.
#[derive(Clone, Debug)]
pub struct PlaneTranspose {
    n0: usize,
    n1: usize,
    nz: usize,
    /// `i0` planes of every sub.
    sub_planes: Vec<Vec<usize>>,
    /// `i1` range of every sub.
    y_all: Vec<Range<usize>>,
    sub: usize,
    send_counts: Vec<usize>,
    recv_counts: Vec<usize>,
}

impl PlaneTranspose {
    /// Maps for sub `sub` of a slab with `nz` z-planes.
    pub fn new(
        dims: [usize; 3],
        nz: usize,
        sub_planes: Vec<Vec<usize>>,
        y_all: Vec<Range<usize>>,
        sub: usize,
    ) -> Self {
        let nxa = sub_planes[sub].len();
        let nya = y_all[sub].len();
        let send_counts = y_all.iter().map(|y| nz * nxa * y.len()).collect();
        let recv_counts = sub_planes.iter().map(|p| nz * p.len() * nya).collect();
        Self {
            n0: dims[0],
            n1: dims[1],
            nz,
            sub_planes,
            y_all,
            sub,
            send_counts,
            recv_counts,
        }
    }

    /// Elements per band sent to each sub in the backward (y → x pencils) direction.
    pub fn backward_send_counts(&self) -> &[usize] {
        &self.send_counts
    }
    /// Elements per band received from each sub in the backward direction.
    pub fn backward_recv_counts(&self) -> &[usize] {
        &self.recv_counts
    }

    /// Backward pack: y-lines cut into the `i1` ranges of the destinations.
    pub fn pack_planes(&self, ypl: &[C64], nb: usize, send: &mut [C64]) {
        let n1 = self.n1;
        let lines = nb * self.nz * self.sub_planes[self.sub].len();
        split_blocks(send, &self.send_counts, nb)
            .into_par_iter()
            .zip(self.y_all.par_iter())
            .for_each(|(blk, yr)| {
                let yl = yr.len();
                for l in 0..lines {
                    blk[l * yl..(l + 1) * yl]
                        .copy_from_slice(&ypl[l * n1 + yr.start..l * n1 + yr.end]);
                }
            });
    }

    /// Backward unpack: zero each x-pencil plane and place the received x-planes in it.
    /// `recv` is laid out as the blocks of [`PlaneTranspose::backward_recv_counts`] (for
    /// `p1 = 1`, the y-pencil buffer itself).
    pub fn unpack_to_real(&self, recv: &[C64], nb: usize, real: &mut [C64]) {
        let n0 = self.n0;
        let nya = self.y_all[self.sub].len();
        let pl = nya * n0;
        if pl == 0 {
            return;
        }
        let disp = displacements(&self.recv_counts, nb);
        real.par_chunks_mut(pl).enumerate().for_each(|(i, plane)| {
            plane.fill(ZERO);
            for (planes, &d) in self.sub_planes.iter().zip(&disp) {
                let m = planes.len() * nya;
                let blk = &recv[d + i * m..d + (i + 1) * m];
                for (&i0, run) in planes.iter().zip(blk.chunks_exact(nya)) {
                    for (iy, &v) in run.iter().enumerate() {
                        plane[iy * n0 + i0] = v;
                    }
                }
            }
        });
    }

    /// Forward pack: gather each destination's x-planes out of the x-pencils (for `p1 = 1`,
    /// `send` is the y-pencil buffer).
    pub fn pack_real(&self, real: &[C64], nb: usize, send: &mut [C64]) {
        let n0 = self.n0;
        let nya = self.y_all[self.sub].len();
        let pl = nya * n0;
        let nplanes = nb * self.nz;
        split_blocks(send, &self.recv_counts, nb)
            .into_par_iter()
            .zip(self.sub_planes.par_iter())
            .for_each(|(blk, planes)| {
                let m = planes.len() * nya;
                for i in 0..nplanes {
                    let plane = &real[i * pl..(i + 1) * pl];
                    let out = &mut blk[i * m..(i + 1) * m];
                    for (&i0, run) in planes.iter().zip(out.chunks_exact_mut(nya)) {
                        for (iy, o) in run.iter_mut().enumerate() {
                            *o = plane[iy * n0 + i0];
                        }
                    }
                }
            });
    }

    /// Forward unpack: place the received `i1` ranges into the y-lines.
    pub fn unpack_to_planes(&self, recv: &[C64], nb: usize, ypl: &mut [C64]) {
        let n1 = self.n1;
        let nxa = self.sub_planes[self.sub].len();
        let pl = nxa * n1;
        if pl == 0 {
            return;
        }
        let disp = displacements(&self.send_counts, nb);
        ypl.par_chunks_mut(pl).enumerate().for_each(|(i, plane)| {
            for (yr, &d) in self.y_all.iter().zip(&disp) {
                let yl = yr.len();
                let blk = &recv[d + i * nxa * yl..d + (i + 1) * nxa * yl];
                for (line, run) in plane.chunks_exact_mut(n1).zip(blk.chunks_exact(yl)) {
                    line[yr.clone()].copy_from_slice(run);
                }
            }
        });
    }
}
