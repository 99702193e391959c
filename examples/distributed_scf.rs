//! A research code's use of planewave as a library: build a model in code (no input file), run
//! the SCF distributed over k-point groups on in-process `Threads` ranks, and print the energy
//! and forces from rank 0. The same code runs under mpirun with the MPI world instead
//! (`planewave::comm::mpi::Mpi::init()`, facade feature `mpi`).
//!
//! Run with: cargo run --release --example distributed_scf [RANKS]

use planewave::comm::{Communicator, Threads};
use planewave::core::basis::Basis;
use planewave::core::crystal::{Atom, Crystal};
use planewave::core::eigensolver::Eigensolver;
use planewave::core::forces;
use planewave::core::model::{Model, Species, SpinMode};
use planewave::core::pseudo::Pseudopotential;
use planewave::core::scf::policies::{AndersonKerker, Policies};
use planewave::core::scf::{self, ScfParams};
use planewave::core::smearing::Smearing;
use planewave::core::symmetry::{monkhorst_pack, SymOp};
use planewave::core::xc::Functional;
use std::path::PathBuf;
use std::sync::Arc;

/// Silicon in the diamond structure with the second atom pushed off its site, 15 Ha, 2x2x2
/// k-points without symmetry reduction (8 k-points to share out).
fn model() -> Model {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/pseudos/Si-q4.lda.cp2k");
    let mut pseudo = Pseudopotential::from_file(&path).expect("the example pseudopotential");
    pseudo.tabulate_projectors(12.0);
    let a = 5.13;
    let lattice = [[0.0, a, a], [a, 0.0, a], [a, a, 0.0]];
    let atoms = vec![
        Atom {
            species: 0,
            frac: [0.0, 0.0, 0.0],
        },
        Atom {
            species: 0,
            frac: [0.26, 0.25, 0.24],
        },
    ];
    Model {
        crystal: Crystal::new(lattice, atoms).expect("a valid cell"),
        species: vec![Species {
            symbol: "Si".into(),
            pseudo,
            path,
        }],
        functional: Functional::LdaPz,
        smearing: Smearing::None,
        spin: SpinMode::None,
        starting_magnetization: vec![0.0; 2],
        n_electrons: 8.0,
        symmetries: vec![SymOp::identity()],
        hybrid: None,
    }
}

fn run(world: Arc<dyn Communicator>) -> Option<(f64, Vec<[f64; 3]>)> {
    let model = model();
    let kpoints: Vec<([f64; 3], f64)> = monkhorst_pack([2, 2, 2], [false; 3])
        .into_iter()
        .map(|k| (k, 1.0 / 8.0))
        .collect();
    let params = ScfParams {
        nbands: 4,
        energy_tolerance: 1e-9,
        density_tolerance: 1e-8,
        max_iterations: 50,
        policies: Policies::standard(AndersonKerker {
            beta: 0.7,
            depth: 8,
            kerker_q0: planewave::core::input::KERKER_Q0,
        }),
        seed: 42,
        start: Default::default(),
        eigensolver: Eigensolver::Davidson { dim_factor: 2 },
        checkpoint: None,
        stop: None,
        tuning: Default::default(),
        device: None,
    };
    // One k-point group per rank (each computes 8 / ranks of the k-points), one band group;
    // the layout is planned from the sizes (1 spin, 4 bands) before the basis is dealt out.
    let groups = (world.size(), 1);
    let basis = Basis::distributed(&model, 15.0, &kpoints, world.clone(), groups, 1, 4)
        .expect("a valid layout");
    let r = scf::run(&model, &basis, &params, |_| {}).expect("the SCF runs");
    let f = forces::compute(&model, &basis, &r);
    (world.rank() == 0).then(|| (r.energies.total(), f.total))
}

fn main() {
    let ranks: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2);
    let results = Threads::run(ranks, |c| run(c.into_arc()));
    let (energy, forces) = results
        .into_iter()
        .flatten()
        .next()
        .expect("rank 0 reports");
    println!("{ranks} k-point groups: total energy {energy:.10} Ha");
    for (i, f) in forces.iter().enumerate() {
        println!(
            "  atom {} force {:12.8} {:12.8} {:12.8} Ha/bohr",
            i + 1,
            f[0],
            f[1],
            f[2]
        );
    }
}
