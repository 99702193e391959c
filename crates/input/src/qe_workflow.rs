//! What a pw.x input says about the runs around it: where its state is kept for the next
//! steps of a QE workflow (`outdir`, `prefix`), and whether it is the SCF itself or a
//! non-self-consistent step after it (`calculation = 'bands' | 'nscf'`).
//!
//! Contract: pw.x keeps a run's state in `<outdir>/<prefix>.save/`; planewave keeps its own
//! files in the same folder, so that a later pw.x, dos.x, bands.x or pp.x input of the same
//! `prefix` and `outdir` finds them. `outdir` is taken relative to the input file's folder
//! (as `pseudo_dir` is); without it, the caller's default (QE: `$ESPRESSO_TMPDIR`, else the
//! input's folder). `prefix` defaults to pw.x's `pwscf`. With `disk_io = 'none'` an SCF
//! keeps nothing there (the benchmark inputs' setting).

use std::path::{Path, PathBuf};

/// The non-self-consistent calculations of pw.x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NonScf {
    /// `calculation = 'bands'`: eigenvalues along a path or list, no occupations.
    Bands,
    /// `calculation = 'nscf'`: eigenvalues on a grid, occupations and Fermi level (for dos.x).
    Nscf,
}

/// The workflow keys of a pw.x input.
#[derive(Debug, Clone, PartialEq)]
pub struct QeRun {
    /// `prefix` (default `pwscf`).
    pub prefix: String,
    /// `outdir` joined to the input's folder, when given.
    pub outdir: Option<PathBuf>,
    /// The folder the input was read from (where `outdir` defaults to).
    pub folder: PathBuf,
    /// QE's lattice parameter alat (bohr): the unit of `tpiba` k-points and of bands.x's path.
    pub alat: f64,
    /// The non-SCF step this input asks for, if any.
    pub non_scf: Option<NonScf>,
    /// Whether the run keeps its state in the save folder (every `disk_io` but `'none'`).
    pub keep: bool,
}

impl QeRun {
    /// `<outdir>/<prefix>.save`, with `default_outdir` (QE: `$ESPRESSO_TMPDIR`) standing in for
    /// an absent `outdir`, and the input's folder without either.
    pub fn save_dir(&self, default_outdir: Option<&Path>) -> PathBuf {
        let outdir = match (&self.outdir, default_outdir) {
            (Some(o), _) => o.clone(),
            (None, Some(d)) => self.folder.join(d),
            (None, None) => self.folder.clone(),
        };
        outdir.join(format!("{}.save", self.prefix))
    }
}

/// The save folder named by the `prefix` and `outdir` of a post-processing input (dos.x,
/// bands.x, pp.x) read from `source`, as [`QeRun::save_dir`] finds it.
pub fn save_dir_of(
    source: &Path,
    prefix: Option<&str>,
    outdir: Option<&str>,
    default_outdir: Option<&Path>,
) -> PathBuf {
    QeRun {
        prefix: prefix.map_or("pwscf", str::trim).to_string(),
        outdir: outdir.map(|o| crate::base_dir(source).join(o.trim())),
        folder: crate::base_dir(source),
        alat: 1.0,
        non_scf: None,
        keep: true,
    }
    .save_dir(default_outdir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_save_folder_follows_outdir_then_the_default_then_the_input() {
        let src = Path::new("/work/case/scf/pw.in");
        let at = |o: Option<&str>, d: Option<&Path>| save_dir_of(src, Some("si"), o, d);
        assert_eq!(
            at(Some("./tmp"), Some(Path::new("/scratch"))),
            Path::new("/work/case/scf/./tmp/si.save")
        );
        assert_eq!(
            at(None, Some(Path::new("/scratch"))),
            Path::new("/scratch/si.save")
        );
        assert_eq!(at(None, None), Path::new("/work/case/scf/si.save"));
        assert_eq!(
            save_dir_of(src, None, Some("/abs"), None),
            Path::new("/abs/pwscf.save")
        );
    }
}
