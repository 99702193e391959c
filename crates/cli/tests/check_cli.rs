//! `planewave check --ranks N`: the set-up on N in-process ranks lists the plane waves each
//! rank of a G-vector group holds; they partition every k-point's sphere whatever N is.

use std::path::PathBuf;
use std::process::Command;

fn check(args: &[&str]) -> (Option<i32>, String, String) {
    let input =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/qe/si2_lda_gth/pw.in");
    let out = Command::new(env!("CARGO_BIN_EXE_planewave"))
        .arg("check")
        .arg(&input)
        .args(args)
        .output()
        .expect("the planewave binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Per k-point, the plane waves summed over the ranks of the table `check` prints.
fn summed_over_ranks(stdout: &str, ranks: usize) -> Vec<usize> {
    let rows: Vec<Vec<usize>> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("rank "))
        .map(|l| {
            let (_, counts) = l.split_once(':').expect("rank r: counts");
            counts
                .split_whitespace()
                .filter_map(|c| c.parse().ok())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), ranks, "{stdout}");
    (0..rows[0].len())
        .map(|k| rows.iter().map(|r| r[k]).sum())
        .collect()
}

#[test]
fn plane_waves_per_rank_partition_each_sphere() {
    let (code2, out2, err2) = check(&["--ranks", "2", "--kpoint-groups", "1"]);
    assert_eq!(code2, Some(0), "{err2}");
    assert!(out2.contains("estimated memory"), "{out2}");
    // The estimate by part, the parts summing to it (to the printed rounding).
    let line = out2
        .lines()
        .find(|l| l.starts_with("estimated memory"))
        .unwrap();
    let numbers: Vec<f64> = line
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        line.contains(": bands ") && line.contains("density grids"),
        "{line}"
    );
    let parts: f64 = numbers[1..].iter().sum();
    assert!(
        (parts - numbers[0]).abs() < 0.1 * numbers.len() as f64,
        "{line}"
    );
    let (code3, out3, err3) = check(&["--ranks", "3", "--kpoint-groups", "1"]);
    assert_eq!(code3, Some(0), "{err3}");
    let two = summed_over_ranks(&out2, 2);
    let three = summed_over_ranks(&out3, 3);
    assert!(!two.is_empty() && two.iter().all(|&n| n > 100), "{out2}");
    assert_eq!(two, three, "the ranks' shares add up to the same spheres");
}

#[test]
fn check_refuses_zero_ranks() {
    let (code, _, err) = check(&["--ranks", "0"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--ranks and --kpoint-groups must be at least 1"),
        "{err}"
    );
}

/// `check --device gpu` estimates the GPU memory per rank without opening a GPU (none here):
/// blocks and grids summing to the total; the same on each rank of 2 k-point groups (each holds
/// every band); a G-vector group gets the GPU path's refusal as a warning.
#[test]
fn check_estimates_gpu_memory_without_a_gpu() {
    let numbers = |out: &str| -> Vec<f64> {
        let line = out
            .lines()
            .find(|l| l.starts_with("estimated GPU memory"))
            .unwrap_or_else(|| panic!("no GPU estimate in\n{out}"));
        line.replace(['(', ')', ','], " ")
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let (code, one, err) = check(&["--device", "gpu"]);
    assert_eq!(code, Some(0), "{err}");
    // [total, band blocks, FFT grids] in MiB.
    let a = numbers(&one);
    assert_eq!(a.len(), 3, "{one}");
    assert!((a[0] - a[1] - a[2]).abs() <= 0.11, "{one}");
    assert!(a[1] > 0.0 && a[2] > 0.0, "{one}");
    assert!(!one.contains("warning: --device gpu"), "{one}");
    let (code, kgroups, err) = check(&["--device", "gpu", "--ranks", "2", "--kpoint-groups", "2"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(numbers(&kgroups), a, "{kgroups}");
    let (code, gvectors, err) = check(&["--device", "gpu", "--ranks", "2", "--kpoint-groups", "1"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        gvectors.contains("warning: --device gpu would refuse this layout: the GPU path keeps"),
        "{gvectors}"
    );
    let (_, cpu, _) = check(&[]);
    assert!(!cpu.contains("GPU"), "{cpu}");
}
