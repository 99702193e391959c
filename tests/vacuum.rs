//! The vacuum test that chooses the mixing's preconditioner (`vacuum`, `setup`): an atom's box
//! has vacuum planes along every lattice direction, a crystal none, a slab only along its
//! normal; every G-vector layout finds the same planes; an isolated system mixes without
//! Kerker's preconditioner unless the input keeps it, and converges in fewer iterations.

mod common;

use planewave::comm::{Communicator, Solo, Threads};
use planewave::core::input::{self, RunSpec, KERKER_Q0};
use planewave::core::vacuum::Vacuum;
use planewave::core::{scf, setup};
use std::sync::Arc;

fn spec_of(case: &str) -> RunSpec {
    input::load(&common::case_input(case)).unwrap_or_else(|e| panic!("{e}"))
}

/// si8_lda_gth_displaced stretched to twice its height along a3, the atoms in its lower half:
/// a slab with a vacuum as thick as itself.
fn slab() -> RunSpec {
    let mut spec = spec_of("si8_lda_gth_displaced");
    spec.lattice[2] = spec.lattice[2].map(|x| 2.0 * x);
    for a in &mut spec.atoms {
        a.frac[2] /= 2.0;
    }
    spec
}

fn vacuum_on(spec: RunSpec, world: Arc<dyn Communicator>) -> (Vacuum, Vec<String>) {
    let s = setup::build_on(spec, world).unwrap_or_else(|e| panic!("{e}"));
    (Vacuum::of(&s.model, &s.basis), s.notes)
}

fn mentions_kerker(notes: &[String]) -> bool {
    notes.iter().any(|n| n.contains("without Kerker"))
}

#[test]
fn an_atoms_box_is_isolated_a_crystal_is_not_and_a_slab_only_along_its_normal() {
    let (atom, notes) = vacuum_on(spec_of("h1_lsda_gth_box"), Arc::new(Solo));
    assert!(atom.isolated(), "{atom:?}");
    assert!(mentions_kerker(&notes), "{notes:?}");

    let (crystal, notes) = vacuum_on(spec_of("si8_lda_gth_displaced"), Arc::new(Solo));
    assert_eq!(crystal.planes, [0, 0, 0]);
    assert!(!mentions_kerker(&notes), "{notes:?}");

    let (slab, notes) = vacuum_on(slab(), Arc::new(Solo));
    assert_eq!(slab.planes[..2], [0, 0], "{slab:?}");
    assert!(slab.planes[2] > 0, "{slab:?}");
    assert!(!slab.isolated() && !mentions_kerker(&notes), "{notes:?}");
}

#[test]
fn every_gvector_layout_finds_the_same_vacuum() {
    for (name, spec) in [("atom", spec_of("h1_lsda_gth_box")), ("slab", slab())] {
        let (serial, _) = vacuum_on(spec.clone(), Arc::new(Solo));
        for n in [2, 3] {
            let all = Threads::run(n, |c| {
                let mut spec = spec.clone();
                spec.parallel.kpoint_groups = Some(1);
                spec.parallel.band_groups = Some(1);
                vacuum_on(spec, c.into_arc()).0
            });
            for (rank, v) in all.iter().enumerate() {
                assert_eq!(*v, serial, "{name}: rank {rank} of {n}");
            }
        }
    }
}

#[test]
fn an_isolated_atom_converges_faster_without_kerker_and_to_the_same_energy() {
    let run = |kerker_q0: Option<f64>| {
        let mut spec = spec_of("h1_lsda_gth_box");
        spec.scf.mixing.kerker_q0 = kerker_q0;
        let s = setup::build(spec).unwrap_or_else(|e| panic!("{e}"));
        let r = scf::run(&s.model, &s.basis, &s.params, |_| {}).expect("SCF runs");
        assert!(r.converged);
        (r.iterations, r.energies.total(), mentions_kerker(&s.notes))
    };
    let (chosen, e_chosen, noted) = run(None);
    let (kept, e_kept, kept_noted) = run(Some(KERKER_Q0));
    assert!(noted && !kept_noted);
    assert!(
        chosen < kept,
        "{chosen} iterations without Kerker, {kept} with"
    );
    assert!((e_chosen - e_kept).abs() < 1e-8, "{e_chosen} vs {e_kept}");
}
