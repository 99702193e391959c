//! `planewave advise`: every valid k-point × band × G-vector layout appears once, ranked by the
//! cost model, and the suggested command names the winner's band groups; on several nodes, from
//! a measured calibration, and over every ranks × threads split of a number of cores.

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
    advise_with(input, ranks, &[])
}

/// As [`advise_file`], with more arguments.
fn advise_with(input: &Path, ranks: usize, more: &[&str]) -> (Vec<(usize, usize, usize)>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .arg("advise")
        .arg(input)
        .args(["--ranks", &ranks.to_string(), "--threads", "1"])
        .args(more)
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

/// The predicted (s/iteration, of which communication s) of layout `row` in `text`.
fn seconds_of(text: &str, row: (usize, usize, usize)) -> (f64, f64) {
    text.lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let ints: Vec<usize> = f.iter().take(4).filter_map(|w| w.parse().ok()).collect();
            (ints.len() == 4 && (ints[1], ints[2], ints[3]) == row)
                .then(|| (f[4].parse().unwrap(), f[7].parse().unwrap()))
        })
        .unwrap_or_else(|| panic!("{row:?} listed in {text}"))
}

#[test]
fn on_four_nodes_the_gvector_groups_stay_inside_a_node() {
    // si64 at Γ on 64 ranks: one group of 64 G ranks sends 48 of its 63 messages per transpose
    // over the network on 4 nodes of 16, and its bytes share each node's card.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/qe/si64_lda_gth_gamma/pw.in");
    let (one, text_one) = advise_with(&input, 64, &[]);
    let (four, text_four) = advise_with(&input, 64, &["--nodes", "4"]);
    assert!(text_four.contains("over 4 node(s)"), "{text_four}");
    assert!(
        text_four.contains("communication model: built in"),
        "{text_four}"
    );
    assert!(
        four[0].2 <= 16,
        "G-vector groups within a node first: {text_four}"
    );
    let all_g = (1, 1, 64);
    let (t1, c1) = seconds_of(&text_one, all_g);
    let (t4, c4) = seconds_of(&text_four, all_g);
    assert!(
        c4 > c1 && t4 - t1 > 0.9 * (c4 - c1),
        "{text_one}\n{text_four}"
    );
    assert_eq!(one.len(), four.len(), "the same layouts, ranked anew");
}

#[test]
fn a_measured_calibration_is_named_and_bad_node_counts_are_refused() {
    let dir = std::env::temp_dir().join(format!("pw-advise-nodes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("comm.json");
    let bench = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args([
            "bench",
            "comm",
            "--ranks",
            "4",
            "--ranks-per-node",
            "2",
            "--save",
        ])
        .arg(&model)
        .output()
        .expect("the planewave binary runs");
    let bench_text = String::from_utf8_lossy(&bench.stdout);
    assert!(bench.status.success(), "{bench:?}");
    assert!(bench_text.contains("inter-node: "), "{bench_text}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(saved["nodes"], 2, "{saved}");
    assert!(
        saved["inter"]["seconds_per_byte"].as_f64().unwrap() > 0.0,
        "a MiB per pair takes time: {saved}"
    );
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/si.toml");
    let model_arg = model.to_str().unwrap();
    let (_, text) = advise_with(&input, 8, &["--nodes", "2", "--comm-model", model_arg]);
    assert!(
        text.contains("(intra-node and inter-node measured on 4 threads rank(s) over 2 node(s))"),
        "{text}"
    );
    let refused = |args: &[&str], needle: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
            .arg("advise")
            .arg(&input)
            .args(args)
            .output()
            .expect("the planewave binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(err.contains(needle), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one message: {err}");
    };
    refused(
        &["--ranks", "6", "--nodes", "4"],
        "--ranks 6 do not fill --nodes 4",
    );
    std::fs::write(&model, "{\"schema\": 1}").unwrap();
    refused(&["--comm-model", model_arg], "comm.json: not a calibration");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sixteen_cores_rank_every_split_and_pick_the_fastest_measured() {
    // si64 at Γ on the lent 16-core node (2026-11-26, one call, one run each): 16 ranks x 1
    // thread 3.68 s, 4 x 4 5.31 s, 1 x 16 9.19 s. The model's first choice is the first.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/qe/si64_lda_gth_gamma/pw.in");
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .args(["advise", input.to_str().unwrap(), "--cores", "16"])
        .output()
        .expect("the planewave binary runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let splits: Vec<(usize, usize, usize, usize, usize)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (r, t) = f.last()?.split_once('x')?;
            let ints: Vec<usize> = f.get(1..4)?.iter().filter_map(|w| w.parse().ok()).collect();
            if ints.len() != 3 {
                return None;
            }
            Some((r.parse().ok()?, t.parse().ok()?, ints[0], ints[1], ints[2]))
        })
        .collect();
    for &(r, t, k, b, g) in &splits {
        assert_eq!((r * t, k * b * g), (16, r), "{text}");
    }
    for split in [(16, 1), (8, 2), (4, 4), (2, 8), (1, 16)] {
        assert!(
            splits.iter().any(|s| (s.0, s.1) == split),
            "{split:?}: {text}"
        );
    }
    assert_eq!(splits[0], (16, 1, 1, 1, 16), "{text}");
    assert!(text.contains("RAYON_NUM_THREADS=1 planewave run"), "{text}");
}
