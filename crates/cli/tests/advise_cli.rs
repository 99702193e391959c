//! `planewave advise`: every valid k-point × band × G-vector layout appears once, ranked by the
//! cost model, and the suggested command names the winner's band groups.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The (kpoint_groups, band_groups, G ranks) rows of the advice table, best first, and the
/// whole output.
fn advise(case: &str, ranks: usize) -> (Vec<(usize, usize, usize)>, String) {
    advise_file(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/qe")
            .join(case)
            .join("pw.in"),
        ranks,
    )
}

/// As [`advise`], for any input file.
fn advise_file(input: &Path, ranks: usize) -> (Vec<(usize, usize, usize)>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .arg("advise")
        .arg(input)
        .args(["--ranks", &ranks.to_string(), "--threads", "1"])
        .output()
        .expect("the planewave binary runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = text
        .lines()
        .filter_map(|l| {
            let f: Vec<usize> = l
                .split_whitespace()
                .take(4)
                .map(|w| w.parse().ok())
                .collect::<Option<_>>()?;
            (f.len() == 4).then(|| (f[1], f[2], f[3]))
        })
        .collect();
    (rows, text)
}

#[test]
fn gamma_cell_on_four_ranks_lists_every_band_split_and_picks_gvector_groups() {
    // One (spin, k) block: no k-point groups; band groups 1, 2, 4 with 4, 2, 1 G ranks.
    // Measured (si64 Γ, 2026-11-23): band 1 × G 4 is the fastest of the three on 4 ranks, and
    // band 1 × G 2 beats band 2 × G 1 on 2 ranks.
    let (rows, text) = advise("si64_lda_gth_gamma", 4);
    let mut sorted = rows.clone();
    sorted.sort();
    assert_eq!(sorted, vec![(1, 1, 4), (1, 2, 2), (1, 4, 1)], "{text}");
    assert_eq!(rows[0], (1, 1, 4), "{text}");
    assert!(text.contains("--kpoint-groups 1 --band-groups 1"), "{text}");
    let (rows, text) = advise("si64_lda_gth_gamma", 2);
    assert_eq!(rows, vec![(1, 1, 2), (1, 2, 1)], "{text}");
}

#[test]
fn kpoint_groups_times_band_groups_always_divide_the_ranks() {
    let (rows, text) = advise("si8_lda_gth_displaced", 4);
    assert_eq!(rows.len(), 6, "{text}");
    for (k, b, g) in rows {
        assert_eq!(k * b * g, 4, "{text}");
    }
}

#[test]
fn eight_kpoints_on_sixteen_ranks_put_kpoint_groups_first() {
    // examples/si.toml: 8 k-points, a 25^3 grid (1-2 planes each over 16 ranks). Measured on
    // the lent 16-core node (si8, 8 k-points, 2026-11-25): 8 k-point groups x 2 G ranks 1.89 s,
    // one group of 16 G ranks 2.28 s.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/si.toml");
    let (rows, text) = advise_file(&input, 16);
    assert_eq!(rows[0], (8, 1, 2), "{text}");
    let one_group = rows.iter().position(|r| *r == (1, 1, 16)).expect("listed");
    assert!(one_group > 0, "{text}");
    assert!(text.contains("why: 8 k-point group(s)"), "{text}");
    assert!(text.contains("k-point groups come first"), "{text}");
}
