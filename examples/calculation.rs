//! What `planewave run` does, from Rust: read an input file, build the set-up, run the SCF, the
//! forces and the stress through `workflow::run` (the function the CLI calls), print the results
//! and write the results JSON the CLI would write.
//!
//! Run with: cargo run --release --example calculation [INPUT] (default examples/si.toml)

use planewave::core::scf::IterationInfo;
use planewave::core::{input, setup, workflow};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/si.toml"),
        PathBuf::from,
    );
    let s = setup::build(input::load(&path)?)?;
    let progress = |it: &IterationInfo| {
        println!(
            "iteration {:>3}: E = {:.10} Ha, residual {:.2e}",
            it.iteration, it.energy, it.residual
        )
    };
    let c = workflow::run(&s, None, progress)?;
    println!("converged: {}", c.scf.converged);
    for t in c.scf.energies.terms() {
        println!("  {:<16} {:16.10} Ha", t.label, t.value);
    }
    println!("total energy {:.10} Ha", c.scf.energies.total());
    if let Some(f) = &c.forces {
        println!("largest force {:.3e} Ha/bohr", f.max_norm());
    }
    if let Some(st) = &c.stress {
        println!("pressure {:.6e} Ha/bohr^3", st.pressure());
    }
    let json = std::env::temp_dir().join("planewave-calculation.json");
    std::fs::write(&json, serde_json::to_string_pretty(&c.to_json(&s))?)?;
    println!("results written to {}", json.display());
    Ok(())
}
