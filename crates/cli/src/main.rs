//! `planewave`: the command-line program.
//!
//! `planewave run INPUT` runs an SCF (TOML or Quantum ESPRESSO pw.x input, recognised by content),
//! printing one line per iteration and a summary, and writes a results JSON.
//! `planewave check INPUT` validates the input and prints the set-up without running.

mod report;

use clap::{Parser, Subcommand};
use planewave_core::{input, scf, setup};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Plane-wave pseudopotential Kohn–Sham DFT.
///
/// Inputs are TOML files (see examples/si.toml) or Quantum ESPRESSO pw.x inputs. Energies are
/// printed in Hartree (Ha) and eV, lengths in bohr. Exit codes: 0 success, 1 SCF not converged,
/// 2 bad input or set-up.
#[derive(Parser)]
#[command(name = "planewave", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a self-consistent calculation.
    ///
    /// Example: planewave run examples/si.toml
    Run {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
        /// Where to write the results JSON (default: next to the input, `<stem>.json`).
        #[arg(long)]
        json: Option<PathBuf>,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Validate an input and print the set-up (cell, k-points, FFT grid, plane waves, memory).
    Check {
        /// Input file (TOML or QE pw.x input).
        input: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { input } => match prepare(&input) {
            Ok(s) => {
                report::setup(&s);
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Command::Run { input, json, quiet } => {
            let s = match prepare(&input) {
                Ok(s) => s,
                Err(e) => return fail(&e),
            };
            if !quiet {
                report::setup(&s);
                report::iteration_header();
            }
            let result = scf::run(&s.model, &s.basis, &s.params, |it| {
                if !quiet {
                    report::iteration(it);
                }
            });
            let r = match result {
                Ok(r) => r,
                Err(e) => return fail(&format!("error: {}: {e}", input.display())),
            };
            if !quiet {
                report::summary(&s, &r);
            }
            let path = json.unwrap_or_else(|| default_json_path(&input));
            let doc = planewave_core::results::to_json(&s, &r);
            let text = serde_json::to_string_pretty(&doc).expect("results serialise");
            if let Err(e) = write_atomically(&path, &text) {
                return fail(&format!(
                    "error: cannot write results {}: {e}",
                    path.display()
                ));
            }
            if !quiet {
                println!("results written to {}", path.display());
            }
            if r.converged {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "warning: SCF not converged in {} iterations; raise scf.max_iterations or lower scf.mixing.beta",
                    r.iterations
                );
                ExitCode::from(1)
            }
        }
    }
}

fn prepare(path: &Path) -> Result<setup::Setup, String> {
    let spec = input::load(path).map_err(|e| e.to_string())?;
    setup::build(spec).map_err(|e| e.to_string())
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("{msg}");
    ExitCode::from(2)
}

fn default_json_path(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "planewave".into());
    input.with_file_name(format!("{stem}.json"))
}

/// Write to a temporary file and rename, so an interrupted run never leaves a truncated JSON.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}
