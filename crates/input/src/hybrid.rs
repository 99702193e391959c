//! The exact-exchange part of a hybrid functional as the input declares it (QE's
//! `exx_fraction`, `screening_parameter`, `x_gamma_extrapolation`, `nqx1..3`). The kernel and
//! operator built from it are the physics crate's (`planewave_core::exx`). The TOML `[hybrid]`
//! table is read here; the pw.x keys in `qe_hybrid`.

use serde::Deserialize;

use crate::named::Functional;
use crate::toml::Doc;
use crate::InputError;

/// The exact-exchange part of a hybrid functional: `fraction` (0.25) of Fock exchange with the
/// Coulomb kernel (PBE0: the semilocal exchange scaled by `1 - fraction`) or the erfc kernel
/// of `kernel.screening` (HSE: less `fraction` times the short-range semilocal exchange).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hybrid {
    /// The exact-exchange fraction `a` (QE `exx_fraction`).
    pub fraction: f64,
    /// The kernel: screening, divergence treatment and q grid.
    pub kernel: KernelSpec,
}

/// What defines the kernel of one calculation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelSpec {
    /// Screening ω (1/bohr) of the erfc kernel (HSE); None: the full Coulomb kernel (PBE0).
    pub screening: Option<f64>,
    /// QE's `x_gamma_extrapolation` (its default: true).
    pub x_gamma_extrapolation: bool,
    /// The q grid `nqx1..3` (a sub-grid of the k grid; `[1, 1, 1]` at Γ).
    pub q_grid: [usize; 3],
}

/// The TOML `[hybrid]` table.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct HybridTable {
    exx_fraction: Option<f64>,
    x_gamma_extrapolation: Option<bool>,
    q_grid: Option<Vec<i64>>,
    divergence: Option<String>,
    screening: Option<f64>,
}

/// The exact-exchange part of a hybrid `functional` from the `[hybrid]` table, with QE's
/// defaults; the table without a hybrid functional, and what planewave does not have, are
/// errors.
pub(crate) fn hybrid_of(
    doc: &Doc,
    functional: Functional,
    table: Option<&HybridTable>,
) -> Result<Option<Hybrid>, InputError> {
    if !functional.is_hybrid() {
        return match table {
            Some(_) => Err(doc.err(
                "hybrid",
                "[hybrid] is for hybrid functionals, and model.functional is not one",
                "set model.functional = \"pbe0\" or \"hse\", or remove [hybrid]",
            )),
            None => Ok(None),
        };
    }
    let hse = functional.0 == "hse";
    let default = HybridTable::default();
    let t = table.unwrap_or(&default);
    let fraction = t.exx_fraction.unwrap_or(0.25);
    if !(fraction > 0.0 && fraction <= 1.0) {
        return Err(doc.err(
            "hybrid.exx_fraction",
            format!("must be in (0, 1], got {fraction}"),
            "QE's default is 0.25",
        ));
    }
    let screening = match t.screening {
        Some(_) if !hse => {
            let msg = "screening is for HSE, and model.functional is \"pbe0\"";
            return Err(doc.err(
                "hybrid.screening",
                msg,
                "remove it, or use functional = \"hse\"",
            ));
        }
        Some(w) if !(w > 0.0 && w.is_finite()) => {
            let msg = format!("must be positive (1/bohr), got {w}");
            return Err(doc.err("hybrid.screening", msg, "HSE06's is 0.106"));
        }
        w => w.or(hse.then_some(0.106)),
    };
    if let Some(q) = t.q_grid.as_deref().filter(|q| *q != [1, 1, 1]) {
        let msg = format!("q grid {q:?}: planewave's exact exchange has only the q grid [1, 1, 1] so far (every k-point pairs with itself)");
        return Err(doc.err("hybrid.q_grid", msg, "remove q_grid or set it to [1, 1, 1]"));
    }
    if let Some(d) = t
        .divergence
        .as_deref()
        .filter(|d| !d.eq_ignore_ascii_case("gygi-baldereschi"))
    {
        let msg = format!("divergence treatment `{d}` is not supported");
        return Err(doc.err(
            "hybrid.divergence",
            msg,
            "use \"gygi-baldereschi\" (the default)",
        ));
    }
    Ok(Some(Hybrid {
        fraction,
        kernel: KernelSpec {
            screening,
            x_gamma_extrapolation: t.x_gamma_extrapolation.unwrap_or(true),
            q_grid: [1, 1, 1],
        },
    }))
}
