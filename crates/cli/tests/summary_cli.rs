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
