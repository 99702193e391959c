//! The summary of `planewave run examples/si.toml` on one rank and one thread, as a new user
//! reads it: only the energy terms the model has, the stress without rounding noise, a
//! one-line efficiency report, and a results JSON with its schema version.

mod common;

/// stdout of the Si example on one rank and one thread, and its results JSON.
fn si_example() -> (String, serde_json::Value) {
    common::si_example("summary", &[])
}

/// The lines after the one that starts with `head`, up to the next that does not start with
/// two spaces.
fn section<'a>(text: &'a str, head: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(head))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect()
}

#[test]
fn si_example_summary_reads_cleanly() {
    let (text, doc) = si_example();

    // Only the terms of an LDA insulator without smearing: no exact exchange, no -TS.
    let names: Vec<&str> = section(&text, "energy terms (Ha):")
        .iter()
        .map(|l| l.trim().rsplit_once(' ').unwrap().0.trim())
        .collect();
    assert_eq!(
        names,
        [
            "kinetic",
            "local",
            "nonlocal",
            "hartree",
            "xc",
            "ewald",
            "one-electron"
        ],
        "{text}"
    );

    // Stress components in Ha/bohr^3: each either 0 or above 1e-12 of the largest.
    let stress: Vec<f64> = section(&text, "stress (Ha/bohr^3")
        .iter()
        .filter(|l| !l.contains("pressure"))
        .flat_map(|l| l.split('|').next().unwrap().split_whitespace())
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(stress.len(), 9, "{text}");
    let largest = stress.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(largest > 1e-6, "{text}");
    for x in &stress {
        assert!(*x == 0.0 || x.abs() > 1e-12 * largest, "{x} in\n{text}");
    }
    // The JSON keeps the exact tensor, symmetric by the crystal's symmetry.
    let exact = doc["stress_ha_per_bohr3"].as_array().unwrap();
    assert_eq!(exact.len(), 3);

    // One line for a serial run's efficiency, and no advice about layouts.
    assert!(
        text.contains("serial run (1 rank x 1 thread): time projection: t_init"),
        "{text}"
    );
    assert!(!text.contains("parallel efficiency"), "{text}");
    assert!(!text.contains("advice:"), "{text}");

    assert_eq!(doc["schema_version"], 1, "{doc}");
    assert_eq!(doc["program"], "planewave");
}

/// `planewave run | head -1`: the reader goes away after the first line; the run goes on
/// without panicking, exits 0 and writes its results JSON.
#[test]
fn a_closed_stdout_does_not_stop_the_run() {
    use std::io::BufRead;
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let json = std::env::temp_dir().join(format!("planewave-pipe-{}.json", std::process::id()));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_planewave"))
        .arg("run")
        .arg(root.join("examples/si.toml"))
        .arg("--json")
        .arg(&json)
        .env("RAYON_NUM_THREADS", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the planewave binary runs");
    let mut first = String::new();
    let stdout = child.stdout.take().expect("piped stdout");
    std::io::BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("planewave"), "{first}");
    let out = child.wait_with_output().unwrap(); // the pipe's reader is gone
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    assert!(doc["total_energy_ha"].as_f64().unwrap() < -7.0, "{doc}");
}

/// The forces' and the stress's time per term in the JSON: the terms of the values and
/// "set-up", each non-negative; the log's line says the same, "set-up" first.
#[test]
fn forces_and_stress_report_their_time_per_term() {
    let (text, doc) = si_example();
    for (values, seconds, line) in [
        ("force_terms_ha_per_bohr", "force_seconds", "  max |F| = "),
        (
            "stress_terms_ha_per_bohr3",
            "stress_seconds",
            "  pressure = ",
        ),
    ] {
        let terms = doc[values].as_object().unwrap();
        let times = doc[seconds].as_object().unwrap();
        let mut names: Vec<&String> = terms.keys().collect();
        names.push(times.keys().find(|k| *k == "set-up").expect("set-up"));
        names.sort();
        assert_eq!(names, times.keys().collect::<Vec<_>>(), "{doc}");
        assert!(times.values().all(|t| t.as_f64().unwrap() >= 0.0), "{doc}");
        let shown = text.lines().find(|l| l.starts_with(line)).unwrap();
        let (_, tail) = shown.split_once("(computed in ").expect(shown);
        assert!(tail.contains(" s: set-up "), "{shown}");
    }
}
