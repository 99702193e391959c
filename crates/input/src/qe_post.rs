//! The inputs of QE's post-processing programs that read a pw.x save folder: dos.x (`&dos`),
//! projwfc.x (`&projwfc`), bands.x (`&bands`) and pp.x (`&inputpp` and `&plot`).
//!
//! Contract: [`read`] recognises such an input by its first namelist and reads it into a typed
//! struct, refusing unknown keys, values outside what planewave does, and a missing output
//! file name with one message naming the key and its line. Energies stay in the units the
//! programs document (eV for `DeltaE`, `Emin`, `Emax`; Ry for `degauss`); the caller finds the
//! save folder through [`SaveRef::dir`].

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::qe::namelist_of;
use crate::qe_syntax::{self, Document};
use crate::InputError;

/// Which save folder a post-processing input reads.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveRef {
    /// The input file.
    pub source: PathBuf,
    /// `prefix`.
    pub prefix: Option<String>,
    /// `outdir`, as written.
    pub outdir: Option<String>,
}

impl SaveRef {
    /// The folder, `default_outdir` (QE: `$ESPRESSO_TMPDIR`) standing in for an absent outdir.
    pub fn dir(&self, default_outdir: Option<&Path>) -> PathBuf {
        crate::save_dir_of(
            &self.source,
            self.prefix.as_deref(),
            self.outdir.as_deref(),
            default_outdir,
        )
    }

    /// `name` in the input's folder (where QE's programs, run there, write their files).
    pub fn beside(&self, name: &str) -> PathBuf {
        crate::base_dir(&self.source).join(name.trim())
    }
}

/// dos.x's `&dos`.
#[derive(Debug, Clone, PartialEq)]
pub struct DosX {
    /// The save folder.
    pub save: SaveRef,
    /// `bz_sum`: `smearing`, `tetrahedra`, `tetrahedra_lin` or `tetrahedra_opt`; None: the
    /// nscf step's occupations (smearing when `degauss` is given).
    pub bz_sum: Option<String>,
    /// `degauss` (Ry).
    pub degauss: Option<f64>,
    /// `ngauss`: the broadening's kind (0 Gaussian, 1 Methfessel–Paxton, -1 Marzari–Vanderbilt,
    /// -99 Fermi–Dirac).
    pub ngauss: i64,
    /// `DeltaE` (eV, default 0.01).
    pub delta_e: f64,
    /// `Emin`, `Emax` (eV).
    pub range: (Option<f64>, Option<f64>),
    /// `fildos`, in the input's folder.
    pub fildos: PathBuf,
}

/// bands.x's `&bands`.
#[derive(Debug, Clone, PartialEq)]
pub struct BandsX {
    /// The save folder.
    pub save: SaveRef,
    /// `filband`, in the input's folder (the plottable file is `filband.gnu`).
    pub filband: PathBuf,
    /// `spin_component` (1 or 2; 1 without spin).
    pub spin_component: usize,
}

/// What pp.x plots (`plot_num`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotQuantity {
    /// 0: the valence electron density (electrons/bohr^3).
    Density,
    /// 1: the local potential V_bare + V_H + V_xc (Ry, as pp.x writes it).
    Potential {
        /// `spin_component`: 0 the channels' average (or the one channel), 1 up, 2 down.
        spin: usize,
    },
    /// 6: the spin polarisation, up less down density (electrons/bohr^3).
    SpinDensity,
    /// 7: |psi|^2 of one band at one k-point (1/bohr^3, one electron).
    Orbital {
        /// `kpoint` (from 1).
        kpoint: usize,
        /// `kband` (from 1).
        band: usize,
        /// `spin_component` (1 or 2; 1 without spin).
        spin: usize,
    },
}

/// The formats of pp.x's `output_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    /// 5: XCrySDen's XSF.
    Xsf,
    /// 6: Gaussian cube.
    Cube,
}

/// pp.x's `&inputpp` and `&plot` (three-dimensional, `iflag = 3`; the density, the local
/// potential, the spin density and |psi|^2 of a band).
#[derive(Debug, Clone, PartialEq)]
pub struct PpX {
    /// The save folder.
    pub save: SaveRef,
    /// `plot_num`.
    pub quantity: PlotQuantity,
    /// `output_format`.
    pub format: PlotFormat,
    /// `fileout`, in the input's folder.
    pub fileout: PathBuf,
}

/// projwfc.x's `&projwfc`: the projected DOS on the atomic orbitals.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjwfcX {
    /// The save folder.
    pub save: SaveRef,
    /// `degauss` (Ry); None: the nscf step's tetrahedra or smearing.
    pub degauss: Option<f64>,
    /// `ngauss`, as dos.x's.
    pub ngauss: i64,
    /// `DeltaE` (eV, default 0.01).
    pub delta_e: f64,
    /// `Emin`, `Emax` (eV).
    pub range: (Option<f64>, Option<f64>),
    /// `filpdos` (default: the prefix), in the input's folder: the files are
    /// `<filpdos>.pdos_tot` and `<filpdos>.pdos_atm#A(El)_wfc#W(l)`.
    pub filpdos: PathBuf,
}

/// A post-processing input.
#[derive(Debug, Clone, PartialEq)]
pub enum PostInput {
    /// dos.x.
    Dos(DosX),
    /// projwfc.x.
    Projwfc(ProjwfcX),
    /// bands.x.
    Bands(BandsX),
    /// pp.x.
    Pp(PpX),
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct DosNamelist {
    prefix: Option<String>,
    outdir: Option<String>,
    bz_sum: Option<String>,
    ngauss: Option<i64>,
    degauss: Option<f64>,
    deltae: Option<f64>,
    emin: Option<f64>,
    emax: Option<f64>,
    fildos: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct ProjwfcNamelist {
    prefix: Option<String>,
    outdir: Option<String>,
    ngauss: Option<i64>,
    degauss: Option<f64>,
    deltae: Option<f64>,
    emin: Option<f64>,
    emax: Option<f64>,
    filpdos: Option<String>,
    lsym: Option<bool>,
}

/// The broadening and energy grid shared by dos.x and projwfc.x, as given. Copied out of
/// each namelist rather than `#[serde(flatten)]`ed into it: serde cannot flatten a struct
/// into one that denies unknown fields, and a misspelt name must stay an error.
struct Grid {
    ngauss: Option<i64>,
    degauss: Option<f64>,
    deltae: Option<f64>,
    emin: Option<f64>,
    emax: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct BandsNamelist {
    prefix: Option<String>,
    outdir: Option<String>,
    filband: Option<String>,
    spin_component: Option<i64>,
    lsym: Option<bool>,
    no_overlap: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct InputPp {
    prefix: Option<String>,
    outdir: Option<String>,
    filplot: Option<String>,
    plot_num: Option<i64>,
    spin_component: Option<i64>,
    kpoint: Option<i64>,
    kband: Option<i64>,
    lsign: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Plot {
    nfile: Option<i64>,
    filepp: std::collections::BTreeMap<usize, String>,
    weight: std::collections::BTreeMap<usize, f64>,
    iflag: Option<i64>,
    output_format: Option<i64>,
    fileout: Option<String>,
}

/// The post-processing input in `text` (from `source`), or None when its first namelist is
/// not `&dos`, `&projwfc`, `&bands` or `&inputpp` (a pw.x input, or TOML).
pub fn read(text: &str, source: &Path) -> Result<Option<PostInput>, InputError> {
    let first = text.trim_start().strip_prefix('&').map(|t| {
        let name: String = t.chars().take_while(|c| c.is_alphanumeric()).collect();
        name.to_ascii_lowercase()
    });
    if !matches!(
        first.as_deref(),
        Some("dos" | "projwfc" | "bands" | "inputpp")
    ) {
        return Ok(None);
    }
    let doc = qe_syntax::read(text, source)?;
    let p = Post { source, doc: &doc };
    Ok(Some(match first.as_deref() {
        Some("dos") => PostInput::Dos(p.dos()?),
        Some("projwfc") => PostInput::Projwfc(p.projwfc()?),
        Some("bands") => PostInput::Bands(p.bands()?),
        _ => PostInput::Pp(p.pp()?),
    }))
}

/// A post-processing input being read.
struct Post<'a> {
    source: &'a Path,
    doc: &'a Document,
}

impl Post<'_> {
    fn err(&self, key: &str, msg: impl Into<String>, hint: &str) -> InputError {
        let line = self.doc.entry(&key.to_ascii_lowercase()).map(|e| e.line);
        InputError::new(self.source, msg)
            .with_key(key)
            .at_line(line)
            .with_hint(hint)
    }

    fn save(&self, prefix: Option<String>, outdir: Option<String>) -> SaveRef {
        SaveRef {
            source: self.source.to_path_buf(),
            prefix,
            outdir,
        }
    }

    /// No namelist but `allowed`.
    fn only(&self, allowed: &[&str]) -> Result<(), InputError> {
        match (self.doc.namelists.iter()).find(|n| !allowed.contains(&n.name.as_str())) {
            Some(n) => Err(InputError::new(
                self.source,
                format!("namelist &{} does not belong here", n.name),
            )
            .with_key(format!("&{}", n.name))
            .at_line(Some(n.line))
            .with_hint(format!("this input takes &{} only", allowed.join(" and &")))),
            None => Ok(()),
        }
    }

    fn dos(&self) -> Result<DosX, InputError> {
        self.only(&["dos"])?;
        let d: DosNamelist = namelist_of(self.source, self.doc, "dos", &[])?;
        if let Some(b) = d.bz_sum.as_deref().map(|b| b.trim().to_ascii_lowercase()) {
            if !matches!(
                b.as_str(),
                "smearing" | "tetrahedra" | "tetrahedra_lin" | "tetrahedra_opt"
            ) {
                let hint = "use 'smearing', 'tetrahedra', 'tetrahedra_lin' or 'tetrahedra_opt'";
                return Err(self.err("bz_sum", format!("bz_sum = '{b}' is not known"), hint));
            }
        }
        let grid = Grid {
            ngauss: d.ngauss,
            degauss: d.degauss,
            deltae: d.deltae,
            emin: d.emin,
            emax: d.emax,
        };
        let delta_e = self.grid(&grid)?;
        let prefix = d.prefix.clone().unwrap_or_else(|| "pwscf".into());
        let fildos = d.fildos.unwrap_or_else(|| format!("{}.dos", prefix.trim()));
        Ok(DosX {
            bz_sum: d.bz_sum.map(|b| b.trim().to_ascii_lowercase()),
            degauss: d.degauss,
            ngauss: d.ngauss.unwrap_or(0),
            delta_e,
            range: (d.emin, d.emax),
            fildos: self.save(None, None).beside(&fildos),
            save: self.save(d.prefix, d.outdir),
        })
    }

    fn projwfc(&self) -> Result<ProjwfcX, InputError> {
        self.only(&["projwfc"])?;
        let d: ProjwfcNamelist = namelist_of(self.source, self.doc, "projwfc", &[])?;
        let grid = Grid {
            ngauss: d.ngauss,
            degauss: d.degauss.filter(|&x| x != 0.0),
            deltae: d.deltae,
            emin: d.emin,
            emax: d.emax,
        };
        let delta_e = self.grid(&grid)?;
        let _symmetrised = d.lsym;
        let prefix = d.prefix.clone().unwrap_or_else(|| "pwscf".into());
        let filpdos = d.filpdos.unwrap_or_else(|| prefix.trim().to_string());
        Ok(ProjwfcX {
            degauss: grid.degauss,
            ngauss: d.ngauss.unwrap_or(0),
            delta_e,
            range: (d.emin, d.emax),
            filpdos: self.save(None, None).beside(&filpdos),
            save: self.save(d.prefix, d.outdir),
        })
    }

    /// The energy step (eV) of `g`, after checking its broadening and range.
    fn grid(&self, g: &Grid) -> Result<f64, InputError> {
        if let Some(n) = g
            .ngauss
            .filter(|&n| crate::DosMethod::of_ngauss(n).is_none())
        {
            let msg = format!("ngauss = {n} is not a broadening planewave knows");
            let hint = "use 0 (Gaussian), 1 (Methfessel-Paxton), -1 (Marzari-Vanderbilt) or -99 (Fermi-Dirac)";
            return Err(self.err("ngauss", msg, hint));
        }
        if let Some(x) = g.degauss.filter(|x| !(x.is_finite() && *x > 0.0)) {
            let msg = format!("degauss must be a positive width in Ry, got {x}");
            return Err(self.err("degauss", msg, "e.g. degauss = 0.01"));
        }
        let delta_e = g.deltae.unwrap_or(0.01);
        if !(delta_e.is_finite() && delta_e > 0.0) {
            let msg = format!("DeltaE must be a positive step in eV, got {delta_e}");
            return Err(self.err("DeltaE", msg, "e.g. DeltaE = 0.01"));
        }
        if let (Some(lo), Some(hi)) = (g.emin, g.emax) {
            if lo >= hi {
                let msg = format!("Emin = {lo} eV is not below Emax = {hi} eV");
                return Err(self.err("Emin", msg, "swap them"));
            }
        }
        Ok(delta_e)
    }

    fn bands(&self) -> Result<BandsX, InputError> {
        self.only(&["bands"])?;
        let b: BandsNamelist = namelist_of(self.source, self.doc, "bands", &[])?;
        let _ = (b.lsym, b.no_overlap);
        let spin_component = match b.spin_component.unwrap_or(1) {
            s @ (1 | 2) => s as usize,
            s => {
                let msg = format!("spin_component must be 1 or 2, got {s}");
                return Err(self.err("spin_component", msg, "1: up (or no spin), 2: down"));
            }
        };
        let filband = b.filband.unwrap_or_else(|| "bands.out".into());
        Ok(BandsX {
            filband: self.save(None, None).beside(&filband),
            spin_component,
            save: self.save(b.prefix, b.outdir),
        })
    }

    fn pp(&self) -> Result<PpX, InputError> {
        self.only(&["inputpp", "plot"])?;
        let i: InputPp = namelist_of(self.source, self.doc, "inputpp", &[])?;
        let p: Plot = namelist_of(self.source, self.doc, "plot", &[])?;
        let _ = (i.filplot, p.filepp);
        let from_one = |key: &str, v: Option<i64>| match v.unwrap_or(1) {
            n if n >= 1 => Ok(n as usize),
            n => Err(self.err(key, format!("{key} counts from 1, got {n}"), "e.g. 1")),
        };
        let channel = i.spin_component.unwrap_or(0);
        if !(0..=2).contains(&channel) {
            let msg = format!("spin_component must be 0, 1 or 2, got {channel}");
            return Err(self.err("spin_component", msg, "1: up, 2: down"));
        }
        if !matches!(i.plot_num, Some(1 | 7)) && channel != 0 {
            let msg =
                "spin_component picks the channel of a potential (plot_num = 1) or an orbital (7)";
            let hint = "leave it out (plot_num 0 is both channels, 6 their difference)";
            return Err(self.err("spin_component", msg, hint));
        }
        if i.lsign == Some(true) {
            let msg =
                "lsign (the sign of a real orbital) is not implemented: planewave writes |psi|^2";
            return Err(self.err("lsign", msg, "leave it out"));
        }
        let quantity = match i.plot_num {
            Some(0) => PlotQuantity::Density,
            Some(1) => PlotQuantity::Potential {
                spin: channel as usize,
            },
            Some(6) => PlotQuantity::SpinDensity,
            Some(7) => PlotQuantity::Orbital {
                kpoint: from_one("kpoint", i.kpoint)?,
                band: from_one("kband", i.kband)?,
                spin: from_one("spin_component", i.spin_component)?,
            },
            Some(n) => {
                let msg = format!("plot_num = {n} is not implemented");
                let hint = "planewave's pp.x plots 0 (the valence density), 1 (V_bare + V_H + V_xc), 6 (the spin density, up less down) and 7 (|psi|^2 of kband at kpoint)";
                return Err(self.err("plot_num", msg, hint));
            }
            None => {
                let hint = "e.g. plot_num = 0 for the valence density";
                return Err(self.err("&inputpp", "plot_num is missing", hint));
            }
        };
        if p.nfile.unwrap_or(1) != 1 || p.weight.values().any(|w| *w != 1.0) {
            let msg = "planewave's pp.x plots one quantity (nfile = 1, weight(1) = 1.0)";
            return Err(self.err("nfile", msg, "run one pp.x input per quantity"));
        }
        if p.iflag.unwrap_or(3) != 3 {
            let msg = "only three-dimensional plots (iflag = 3) are implemented";
            return Err(self.err("iflag", msg, "set iflag = 3"));
        }
        let format = match p.output_format {
            Some(5) => PlotFormat::Xsf,
            Some(6) => PlotFormat::Cube,
            other => {
                let msg = match other {
                    Some(n) => format!("output_format = {n} is not implemented"),
                    None => "output_format is missing".into(),
                };
                let hint = "use 5 (XSF) or 6 (Gaussian cube)";
                return Err(self.err("output_format", msg, hint));
            }
        };
        let Some(fileout) = p.fileout else {
            let hint = "e.g. fileout = 'density.cube'";
            return Err(self.err("&plot", "fileout is missing", hint));
        };
        Ok(PpX {
            quantity,
            format,
            fileout: self.save(None, None).beside(&fileout),
            save: self.save(i.prefix, i.outdir),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> Result<Option<PostInput>, InputError> {
        read(text, Path::new("/w/dos/in"))
    }

    #[test]
    fn the_references_inputs_read_as_they_are() {
        let dos = "&dos\n  prefix='si2', outdir='./qe_tmp', fildos='d.dat', DeltaE=0.01, bz_sum='tetrahedra_opt'\n/\n";
        let Some(PostInput::Dos(d)) = r(dos).unwrap() else {
            panic!()
        };
        assert_eq!(d.fildos, Path::new("/w/dos/d.dat"));
        assert_eq!(d.bz_sum.as_deref(), Some("tetrahedra_opt"));
        assert_eq!(d.save.dir(None), Path::new("/w/dos/./qe_tmp/si2.save"));
        let bands = "&bands\n prefix='si2', outdir='./t', filband='b.dat', lsym=.false.\n/\n";
        let Some(PostInput::Bands(b)) = r(bands).unwrap() else {
            panic!()
        };
        assert_eq!(
            (b.filband.clone(), b.spin_component),
            (PathBuf::from("/w/dos/b.dat"), 1)
        );
        let pp = "&inputpp\n prefix='si2', outdir='../scf/t', filplot='rho.pp', plot_num=0\n/\n&plot\n nfile=1, filepp(1)='rho.pp', weight(1)=1.0, iflag=3, output_format=6, fileout='si2.cube'\n/\n";
        let Some(PostInput::Pp(p)) = r(pp).unwrap() else {
            panic!()
        };
        assert_eq!(
            (p.quantity, p.format),
            (PlotQuantity::Density, PlotFormat::Cube)
        );
        assert!(r("&control\n/\n&system\n/\n").unwrap().is_none());
    }

    #[test]
    fn what_is_not_done_is_refused_by_key_and_line() {
        let key = |text: &str| r(text).unwrap_err().key.unwrap();
        assert_eq!(key("&dos\n bz_sum='tetra'\n/\n"), "bz_sum");
        assert_eq!(key("&dos\n ngauss=2\n/\n"), "ngauss");
        assert_eq!(key("&dos\n DeltaE=-1\n/\n"), "DeltaE");
        assert_eq!(key("&projwfc\n ngauss=-2\n/\n"), "ngauss");
        assert_eq!(key("&projwfc\n filproj='p'\n/\n"), "filproj");
        assert_eq!(key("&dos\n fildos='x', colour=2\n/\n"), "colour");
        assert_eq!(key("&bands\n spin_component=3\n/\n"), "spin_component");
        let pp = |inputpp: &str, plot: &str| format!("&inputpp\n{inputpp}\n/\n&plot\n{plot}\n/\n");
        assert_eq!(
            key(&pp("plot_num=11", "output_format=6, fileout='a'")),
            "plot_num"
        );
        assert_eq!(
            key(&pp("plot_num=0", "iflag=2, output_format=6, fileout='a'")),
            "iflag"
        );
        assert_eq!(
            key(&pp("plot_num=0", "output_format=3, fileout='a'")),
            "output_format"
        );
        assert_eq!(key(&pp("plot_num=0", "output_format=6")), "&plot");
        assert_eq!(
            key(&pp(
                "plot_num=0, spin_component=1",
                "output_format=6, fileout='a'"
            )),
            "spin_component"
        );
        let pp7 = |inputpp: &str| pp(inputpp, "output_format=5, fileout='a'");
        assert_eq!(key(&pp7("plot_num=7, kband=0")), "kband");
        assert_eq!(key(&pp7("plot_num=1, spin_component=3")), "spin_component");
        let Some(PostInput::Pp(p)) = r(&pp7("plot_num=1, spin_component=2")).unwrap() else {
            panic!()
        };
        assert_eq!(p.quantity, PlotQuantity::Potential { spin: 2 });
        assert_eq!(key(&pp7("plot_num=7, lsign=.true.")), "lsign");
        let Some(PostInput::Pp(p)) = r(&pp7("plot_num=7, kpoint=2, kband=3")).unwrap() else {
            panic!()
        };
        let orbital = PlotQuantity::Orbital {
            kpoint: 2,
            band: 3,
            spin: 1,
        };
        assert_eq!((p.quantity, p.format), (orbital, PlotFormat::Xsf));
        let e = r("&dos\n DeltaE=-1\n/\n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }
}
