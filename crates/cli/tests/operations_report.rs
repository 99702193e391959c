//! The efficiency report's split of communication by operation (issue 32): a run on a
//! G-vector group of 2 in-process ranks files its transposes, overlap sums and subspace
//! solutions apart, the split adds up to the level's communication, and the JSON and the log
//! both carry it.

mod common;

use serde_json::Value;

fn si_on_a_gvector_group_of_two() -> (String, Value) {
    common::si_example("ops", &["--ranks", "2", "--kpoint-groups", "1"])
}

#[test]
fn gvector_communication_is_split_by_operation() {
    let (text, doc) = si_on_a_gvector_group_of_two();
    let par = &doc["parallel"];
    assert_eq!(par["gvector_groups"], 2);
    let ops = par["operations"].as_array().expect("parallel.operations");
    let cell = |op: &str| {
        ops.iter()
            .find(|o| o["level"] == "G-vector" && o["operation"] == op)
            .unwrap_or_else(|| panic!("no G-vector {op} in {ops:?}"))
    };
    for op in ["transposes", "overlaps", "subspace", "density"] {
        assert!(cell(op)["calls"].as_f64().unwrap() >= 1.0, "{op}");
    }
    // Every band block's FFTs exchange data; the subspace solution is broadcast.
    assert!(cell("transposes")["mebibytes"].as_f64().unwrap() > 0.0);
    assert!(cell("transposes")["calls"].as_f64() > cell("overlaps")["calls"].as_f64());

    // The operations of a level add up to its communication plus waiting.
    let level = par["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["level"] == "G-vector")
        .unwrap();
    let whole = level["communication_s"].as_f64().unwrap() + level["waiting_s"].as_f64().unwrap();
    let split: f64 = ops
        .iter()
        .filter(|o| o["level"] == "G-vector")
        .map(|o| o["seconds"].as_f64().unwrap())
        .sum();
    assert!(
        (whole - split).abs() <= 1e-9 * whole.max(1.0),
        "{whole} vs {split}"
    );

    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("G-vector") && l.contains(" calls, "))
        .expect("a G-vector line of the split in the log");
    assert!(
        line.contains("transposes") && line.contains("MiB"),
        "{line}"
    );
    assert!(text.contains("communication by operation"));
}
