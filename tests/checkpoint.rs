//! Checkpoints are layout-independent: a state written on one layout restarts on any other
//! (1 to 4 in-process ranks, k-point, band and G-vector splits, and back), on the other
//! wavefunction representation (Γ real <-> complex), at another cutoff and in a strained cell,
//! and reaches the converged energy to 1e-9 Ha in fewer iterations than from scratch; files of
//! another input are refused.

mod common;

use planewave::comm::{Communicator, Solo, Threads};
use planewave::core::input::{self, Kpoints};
use planewave::core::scf::{self, CheckpointPlan};
use planewave::core::{checkpoint, setup};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// (k-point groups, band groups) of a layout; None: the default.
type Split = (Option<usize>, Option<usize>);

/// The energy, iterations and convergence of `case` on `world`, started from `restart` if
/// given, writing `write` at the end if given.
fn run(
    case: &str,
    kpoints: Option<Kpoints>,
    world: Arc<dyn Communicator>,
    split: Split,
    restart: Option<&Path>,
    write: Option<(&Path, Option<usize>, usize)>,
) -> Result<(f64, usize, bool), String> {
    let mut spec = input::load(&common::case_input(case)).map_err(|e| e.to_string())?;
    if let Some(k) = kpoints {
        spec.kpoints = k;
    }
    spec.parallel.kpoint_groups = split.0;
    spec.parallel.band_groups = split.1;
    if let Some((_, _, max)) = write {
        spec.scf.max_iterations = max;
    }
    let mut s = setup::build_on(spec, world).map_err(|e| e.to_string())?;
    s.params.checkpoint = write.map(|(path, every, _)| CheckpointPlan {
        path: path.to_path_buf(),
        every,
        at_end: true,
    });
    let start = match restart {
        Some(p) => Some(
            checkpoint::read(
                p,
                &s.model,
                &s.basis,
                (s.params.nbands, s.params.seed),
                Default::default(),
            )?
            .start,
        ),
        None => None,
    };
    let r = scf::run_from(&s.model, &s.basis, &s.params, start, |_| {})?;
    Ok((r.energies.total(), r.iterations, r.converged))
}

/// `run` on `ranks` Threads ranks (Solo for 1); rank 0's outcome.
fn on_ranks(
    ranks: usize,
    f: impl Fn(Arc<dyn Communicator>) -> Result<(f64, usize, bool), String> + Send + Sync,
) -> Result<(f64, usize, bool), String> {
    if ranks == 1 {
        return f(Arc::new(Solo));
    }
    let mut all = Threads::run(ranks, |c| f(Arc::new(c)));
    all.swap_remove(0)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pw-checkpoint-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_checkpoint_restarts_on_every_layout_and_back() {
    let case = "si8_lda_gth_displaced";
    let dir = scratch("layouts");
    let file = dir.join("serial.ckpt");
    // From scratch on one process, stopped after 4 iterations with the state written.
    let (_, it_part, conv) = run(
        case,
        None,
        Arc::new(Solo),
        (None, None),
        None,
        Some((&file, None, 4)),
    )
    .unwrap();
    assert_eq!((it_part, conv), (4, false));
    let (e_ref, it_ref, conv) = run(case, None, Arc::new(Solo), (None, None), None, None).unwrap();
    assert!(conv);
    for (ranks, split) in [
        (1, (None, None)),
        (2, (Some(2), None)),
        (3, (Some(1), None)),
        (4, (Some(1), Some(2))),
    ] {
        let (e, it, conv) = on_ranks(ranks, |w| run(case, None, w, split, Some(&file), None))
            .unwrap_or_else(|e| panic!("{ranks} ranks {split:?}: {e}"));
        println!("{ranks} ranks {split:?}: {e:.12} Ha in {it} iterations (scratch {it_ref})");
        assert!(conv);
        assert!((e - e_ref).abs() < 1e-9, "{e} vs {e_ref}");
        assert!(
            it < it_ref,
            "{it} iterations after the restart, {it_ref} from scratch"
        );
    }
    // The reverse: converged state written on 4 ranks (band 2 x G 2), read on one.
    let file4 = dir.join("four.ckpt");
    on_ranks(4, |w| {
        run(
            case,
            None,
            w,
            (Some(1), Some(2)),
            None,
            Some((&file4, Some(2), 100)),
        )
    })
    .unwrap();
    let (e, it, _) = run(case, None, Arc::new(Solo), (None, None), Some(&file4), None).unwrap();
    assert!((e - e_ref).abs() < 1e-9, "{e} vs {e_ref}");
    assert!(
        it <= 2,
        "a converged state needs at most 2 iterations, took {it}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gamma_real_and_complex_bands_restart_each_other() {
    let case = "si2_lda_gth";
    let dir = scratch("gamma");
    let complex = Kpoints::MonkhorstPack {
        grid: [1, 1, 1],
        shift: [false; 3],
    };
    for (write_k, read_k, ranks) in [
        (Kpoints::Gamma, complex.clone(), 2),
        (complex.clone(), Kpoints::Gamma, 2),
    ] {
        let file = dir.join("g.ckpt");
        let w = Some((file.as_path(), None, 100));
        let (e_w, it_w, _) = run(
            case,
            Some(write_k.clone()),
            Arc::new(Solo),
            (None, None),
            None,
            w,
        )
        .unwrap();
        let (e, it, conv) = on_ranks(ranks, |c| {
            run(
                case,
                Some(read_k.clone()),
                c,
                (Some(1), None),
                Some(&file),
                None,
            )
        })
        .unwrap();
        println!("{write_k:?} -> {read_k:?}: {e_w:.12} -> {e:.12} in {it} (wrote after {it_w})");
        assert!(conv);
        assert!((e - e_w).abs() < 1e-8, "{e} vs {e_w}");
        assert!(it <= 2, "{it} iterations from a converged state");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_checkpoint_maps_onto_another_cutoff_and_a_strained_cell() {
    let case = "si8_lda_gth_displaced";
    let dir = scratch("cutoff");
    let file = dir.join("si8.ckpt");
    let w = Some((file.as_path(), None, 100));
    run(case, None, Arc::new(Solo), (None, None), None, w).unwrap();
    // The same input at a higher cutoff, and in a cell strained by 1 %, from scratch and from
    // the checkpoint (mapped by Miller index; the density scaled by the volume ratio).
    for (ecut_scale, strain) in [(1.2, 1.0), (1.0, 1.01)] {
        let variant = |restart: Option<&Path>| {
            let mut spec = input::load(&common::case_input(case)).unwrap();
            spec.ecut *= ecut_scale;
            spec.ecut_rho = spec.ecut_rho.map(|r| r * ecut_scale);
            for row in spec.lattice.iter_mut() {
                row.iter_mut().for_each(|x| *x *= strain);
            }
            let s = setup::build_on(spec, Arc::new(Solo)).unwrap();
            let start = restart.map(|p| {
                checkpoint::read(
                    p,
                    &s.model,
                    &s.basis,
                    (s.params.nbands, s.params.seed),
                    Default::default(),
                )
                .unwrap()
                .start
            });
            let r = scf::run_from(&s.model, &s.basis, &s.params, start, |_| {}).unwrap();
            assert!(r.converged);
            (r.energies.total(), r.iterations)
        };
        let (e0, it0) = variant(None);
        let (e1, it1) = variant(Some(&file));
        println!(
            "ecut x{ecut_scale}, strain {strain}: {e0:.12} in {it0}, restarted {e1:.12} in {it1}"
        );
        assert!((e0 - e1).abs() < 1e-9, "{e0} vs {e1}");
        assert!(
            it1 < it0,
            "{it1} iterations after the restart, {it0} from scratch"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_checkpoint_of_another_input_is_refused_on_every_rank() {
    let dir = scratch("refuse");
    let file = dir.join("si8.ckpt");
    let w = Some((file.as_path(), None, 1));
    run(
        "si8_lda_gth_displaced",
        None,
        Arc::new(Solo),
        (None, None),
        None,
        w,
    )
    .unwrap();
    let before = std::fs::read(&file).unwrap();
    let all = Threads::run(2, |c| {
        run(
            "si2_lda_gth",
            None,
            Arc::new(c),
            (Some(1), None),
            Some(&file),
            None,
        )
    });
    for r in all {
        let e = r.unwrap_err();
        assert!(e.contains("si8.ckpt") && e.contains("another input"), "{e}");
    }
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is untouched"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
