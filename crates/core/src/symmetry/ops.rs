//! Finding the space-group operations of a crystal with `moyo` (a Rust port of
//! spglib).
//!
//! The operations are returned in the basis of the INPUT cell (fractional
//! coordinates), identity first, translations wrapped to `[0, 1)`. For a
//! supercell of a smaller primitive cell the list contains every rotation
//! combined with every pure (sub-lattice) translation, i.e. `N_rot * N_trans`
//! operations. Every operation is checked to map the atoms onto atoms of the
//! same type.

use super::{SymOp, IDENTITY};

/// Find the space-group operations of the crystal.
///
/// * `lattice` - rows are `a1, a2, a3` (bohr);
/// * `frac` - fractional atomic positions;
/// * `types` - labels: atoms with different labels are never mapped onto each
///   other (species, and the starting magnetisation in spin-polarised runs);
/// * `symprec` - distance tolerance in bohr (typically `1e-5`).
///
/// Returns the operations with the identity first, or `Err` with moyo's message
/// when the search fails (the caller decides whether to fall back to identity).
pub fn find_symmetries(
    lattice: &[[f64; 3]; 3],
    frac: &[[f64; 3]],
    types: &[usize],
    symprec: f64,
) -> Result<Vec<SymOp>, String> {
    let dataset = dataset(lattice, frac, types, symprec)?;

    let mut ops: Vec<SymOp> = dataset
        .operations
        .iter()
        .map(|op| SymOp {
            rot: op.rotation_as_array(),
            trans: wrap_translation(op.translation_as_array()),
        })
        .collect();

    // Identity first.
    let id_pos = ops
        .iter()
        .position(|op| op.rot == IDENTITY && op.trans.iter().all(|t| *t == 0.0))
        .ok_or_else(|| "moyo returned no identity operation".to_string())?;
    let id = ops.remove(id_pos);
    ops.insert(0, id);

    // Safety net: every operation must map the atom set onto itself.
    let tol = 2.0 * dataset.symprec.max(symprec);
    for (n, op) in ops.iter().enumerate() {
        if let Err(e) = check_op_maps_atoms(lattice, frac, types, op, tol) {
            return Err(format!(
                "operation {n} ({op:?}) from moyo is not a symmetry: {e}"
            ));
        }
    }
    Ok(ops)
}

/// Wrap a translation to `[0, 1)`, snapping values within 1e-10 of an integer to 0.
fn wrap_translation(t: [f64; 3]) -> [f64; 3] {
    t.map(|v| {
        let w = v - v.floor();
        if !(1e-10..=1.0 - 1e-10).contains(&w) {
            0.0
        } else {
            w
        }
    })
}

/// Cartesian length of a fractional difference vector reduced to its nearest
/// lattice image (component-wise rounding, adequate for small differences).
pub(crate) fn frac_distance(lattice: &[[f64; 3]; 3], d: &[f64; 3]) -> f64 {
    let r = d.map(|v| v - v.round());
    let mut c = [0.0; 3];
    for (i, ri) in r.iter().enumerate() {
        for (k, ck) in c.iter_mut().enumerate() {
            *ck += ri * lattice[i][k];
        }
    }
    c.iter().map(|v| v * v).sum::<f64>().sqrt()
}

/// Check that `op` maps every atom onto an atom of the same type within `tol`
/// (bohr), modulo lattice vectors, and that the map is a permutation.
pub(crate) fn check_op_maps_atoms(
    lattice: &[[f64; 3]; 3],
    frac: &[[f64; 3]],
    types: &[usize],
    op: &SymOp,
    tol: f64,
) -> Result<(), String> {
    let mut hit = vec![false; frac.len()];
    for (i, (x, t)) in frac.iter().zip(types).enumerate() {
        let y = op.apply(x);
        let found = frac.iter().zip(types).position(|(z, tz)| {
            tz == t && frac_distance(lattice, &[y[0] - z[0], y[1] - z[1], y[2] - z[2]]) < tol
        });
        match found {
            Some(j) if !hit[j] => hit[j] = true,
            Some(j) => return Err(format!("atoms map twice onto atom {j}")),
            None => return Err(format!("image of atom {i} is not an atom of the same type")),
        }
    }
    Ok(())
}

/// moyo's symmetry dataset of the cell with rows `lattice`, fractional positions `frac` and
/// atom types `types` (the space group, its standard cells and their transformations).
pub fn dataset(
    lattice: &[[f64; 3]; 3],
    frac: &[[f64; 3]],
    types: &[usize],
    symprec: f64,
) -> Result<moyo::MoyoDataset, String> {
    if frac.len() != types.len() {
        return Err(format!(
            "find_symmetries: {} positions but {} types",
            frac.len(),
            types.len()
        ));
    }
    if frac.is_empty() {
        return Err("find_symmetries: no atoms".to_string());
    }
    if !(symprec.is_finite() && symprec > 0.0) {
        return Err(format!("find_symmetries: invalid symprec {symprec}"));
    }
    if frac
        .iter()
        .flatten()
        .chain(lattice.iter().flatten())
        .any(|v| !v.is_finite())
    {
        return Err("find_symmetries: non-finite lattice or position".to_string());
    }
    let numbers = types
        .iter()
        .map(|&t| i32::try_from(t).map_err(|_| format!("find_symmetries: type {t} too large")))
        .collect::<Result<Vec<i32>, String>>()?;
    let positions: Vec<moyo::base::Position> = frac.iter().map(moyo::utils::to_vector3).collect();
    let cell = moyo::base::Cell::new(
        moyo::base::Lattice::from_basis(*lattice),
        positions,
        numbers,
    );
    // moyo should not panic on valid input, but never let a panic escape.
    std::panic::catch_unwind(|| moyo::MoyoDataset::with_default(&cell, symprec))
        .map_err(|_| "moyo panicked during the symmetry search".to_string())?
        .map_err(|e| format!("moyo symmetry search failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const SI_LAT: [[f64; 3]; 3] =
        [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]];

    fn assert_all_map(lat: &[[f64; 3]; 3], frac: &[[f64; 3]], types: &[usize], ops: &[SymOp]) {
        for op in ops {
            assert!(
                check_op_maps_atoms(lat, frac, types, op, 1e-6).is_ok(),
                "{op:?}"
            );
        }
        assert_eq!(ops.first(), Some(&SymOp::identity()));
    }

    fn distinct_rotations(ops: &[SymOp]) -> usize {
        let mut r: Vec<[[i32; 3]; 3]> = ops.iter().map(|o| o.rot).collect();
        r.sort_unstable();
        r.dedup();
        r.len()
    }

    #[test]
    fn si_diamond_48() {
        let frac = [[0.0; 3], [0.25; 3]];
        let ops = find_symmetries(&SI_LAT, &frac, &[0, 0], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48);
        assert_all_map(&SI_LAT, &frac, &[0, 0], &ops);
        // Non-symmorphic in this setting: 24 ops carry translation (1/4,1/4,1/4).
        let n_trans = ops
            .iter()
            .filter(|o| o.trans.iter().any(|t| t.abs() > 1e-8))
            .count();
        assert_eq!(n_trans, 24);
        // Different species: only the 24 ops of F-43m survive.
        let ops2 = find_symmetries(&SI_LAT, &frac, &[0, 1], 1e-5).unwrap_or_default();
        assert_eq!(ops2.len(), 24);
        assert_all_map(&SI_LAT, &frac, &[0, 1], &ops2);
    }

    #[test]
    fn fcc_al_48() {
        let lat = [
            [0.0, 3.825, 3.825],
            [3.825, 0.0, 3.825],
            [3.825, 3.825, 0.0],
        ];
        let ops = find_symmetries(&lat, &[[0.0; 3]], &[0], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48);
        assert_all_map(&lat, &[[0.0; 3]], &[0], &ops);
        assert!(ops.iter().all(|o| o.trans == [0.0; 3]));
    }

    #[test]
    fn h_in_box_48() {
        let lat = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]];
        let ops = find_symmetries(&lat, &[[0.0; 3]], &[0], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48);
        assert_all_map(&lat, &[[0.0; 3]], &[0], &ops);
    }

    pub(crate) fn si8_displaced() -> ([[f64; 3]; 3], Vec<[f64; 3]>) {
        let a = 10.26;
        let lat = [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
        let frac = vec![
            [0.02, 0.01, 0.985],
            [0.25, 0.25, 0.25],
            [0.0, 0.5, 0.5],
            [0.24, 0.755, 0.75],
            [0.5, 0.0, 0.5],
            [0.75, 0.25, 0.75],
            [0.5, 0.5, 0.0],
            [0.75, 0.75, 0.25],
        ];
        (lat, frac)
    }

    #[test]
    fn si8_displaced_identity_only() {
        // QE: "No symmetry found" for si8_lda_gth_displaced.
        let (lat, frac) = si8_displaced();
        let ops = find_symmetries(&lat, &frac, &[0; 8], 1e-5).unwrap_or_default();
        assert_eq!(ops, vec![SymOp::identity()]);
    }

    #[test]
    fn si8_conventional_supercell() {
        // Undisplaced conventional cell: 48 rotations x 4 fcc centring translations.
        let a = 10.26;
        let lat = [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
        let mut frac = Vec::new();
        for c in [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [0.5, 0.5, 0.0],
        ] {
            frac.push(c);
            frac.push(c.map(|v| v + 0.25));
        }
        let ops = find_symmetries(&lat, &frac, &[0; 8], 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 192);
        assert_eq!(distinct_rotations(&ops), 48);
        assert_all_map(&lat, &frac, &[0; 8], &ops);
    }

    #[test]
    fn si64_supercell() {
        // si64_lda_gth_*: 2x2x2 conventional supercell (QE reports 24 ops; moyo finds the
        // full space group in this cell: 48 rotations x 32 pure translations).
        let a = 20.52;
        let lat = [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
        let mut frac = Vec::new();
        for s in 0..8 {
            let o = [
                (s & 1) as f64 * 0.5,
                ((s >> 1) & 1) as f64 * 0.5,
                ((s >> 2) & 1) as f64 * 0.5,
            ];
            for c in [
                [0.0, 0.0, 0.0],
                [0.0, 0.25, 0.25],
                [0.25, 0.0, 0.25],
                [0.25, 0.25, 0.0],
            ] {
                for b in [0.0, 0.125] {
                    frac.push([o[0] + c[0] + b, o[1] + c[1] + b, o[2] + c[2] + b]);
                }
            }
        }
        let types = vec![0; frac.len()];
        let ops = find_symmetries(&lat, &frac, &types, 1e-5).unwrap_or_default();
        assert_eq!(ops.len(), 48 * 32);
        assert_eq!(distinct_rotations(&ops), 48);
        assert_all_map(&lat, &frac, &types, &ops);
    }

    #[test]
    fn magnetic_types_lower_symmetry() {
        // bcc-like: two atoms of a simple cubic cell with opposite "spins".
        let lat = [[5.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 5.0]];
        let frac = [[0.0; 3], [0.5; 3]];
        let same = find_symmetries(&lat, &frac, &[0, 0], 1e-5).unwrap_or_default();
        let diff = find_symmetries(&lat, &frac, &[0, 1], 1e-5).unwrap_or_default();
        assert_eq!(same.len(), 96); // Im-3m in a conventional cell
        assert_eq!(diff.len(), 48); // Pm-3m (CsCl)
        assert_all_map(&lat, &frac, &[0, 1], &diff);
    }

    #[test]
    fn bad_input_is_err() {
        assert!(find_symmetries(&SI_LAT, &[[0.0; 3]], &[0, 1], 1e-5).is_err());
        assert!(find_symmetries(&SI_LAT, &[], &[], 1e-5).is_err());
        assert!(find_symmetries(&SI_LAT, &[[0.0; 3]], &[0], -1.0).is_err());
    }
}
