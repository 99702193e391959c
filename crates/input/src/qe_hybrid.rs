//! The hybrid-functional keys of a QE input (`input_dft = 'pbe0' | 'hse'` and the EXX keys of
//! &system), mapped to [`Hybrid`] with QE 6.7's defaults, and every variant planewave does not
//! have refused by name.

use super::{InputError, Reader, System};
use crate::{Hybrid, KernelSpec};

/// The hybrid of `input_dft` (lower case) with the EXX keys of `sys`; None for a semilocal
/// functional, which must then have no EXX key. `ecutrho_ry`: the density cutoff.
pub(super) fn parse(
    r: &Reader<'_>,
    dft: &str,
    sys: &System,
    ecutrho_ry: f64,
) -> Result<Option<Hybrid>, InputError> {
    if dft != "pbe0" && dft != "hse" {
        return match exx_keys(sys).into_iter().find(|(_, given)| *given) {
            Some((key, _)) => Err(r
                .err(
                    key,
                    "this key is for hybrid functionals, and input_dft is not one",
                )
                .with_hint(
                    "set input_dft = 'pbe0' or 'hse' for exact exchange, or remove the key",
                )),
            None => Ok(None),
        };
    }
    let fraction = sys.exx_fraction.unwrap_or(0.25);
    if !(fraction > 0.0 && fraction <= 1.0) {
        let msg = format!("exx_fraction must be in (0, 1], got {fraction}");
        return Err(r.err("exx_fraction", msg));
    }
    // HSE: the erfc kernel, with QE's screening 0.106 1/bohr for the Fock and the semilocal part.
    let screening = match (dft, sys.screening_parameter) {
        ("hse", w) => Some(w.unwrap_or(0.106)),
        (_, Some(_)) => {
            let msg = "screening_parameter is for screened hybrids (HSE), and input_dft is 'pbe0'";
            return Err(r
                .err("screening_parameter", msg)
                .with_hint("remove it, or use input_dft = 'hse'"));
        }
        (_, None) => None,
    };
    if let Some(w) = screening.filter(|w| w.is_nan() || *w <= 0.0) {
        let msg = format!("screening_parameter must be positive, got {w}");
        return Err(r.err("screening_parameter", msg));
    }
    let mut q_grid = [1; 3];
    for (i, (q, n)) in q_grid
        .iter_mut()
        .zip([sys.nqx1, sys.nqx2, sys.nqx3])
        .enumerate()
    {
        let key = format!("nqx{}", i + 1);
        if let Some(n) = n {
            *q = usize::try_from(n)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| r.err(&key, format!("{key} = {n}: must be at least 1")))?;
        }
    }
    refuse_variants(r, sys, ecutrho_ry)?;
    let kernel = KernelSpec {
        screening,
        x_gamma_extrapolation: sys.x_gamma_extrapolation.unwrap_or(true),
        q_grid,
    };
    Ok(Some(Hybrid { fraction, kernel }))
}

/// Each EXX key and whether it is given.
fn exx_keys(sys: &System) -> [(&'static str, bool); 11] {
    [
        ("ecutfock", sys.ecutfock.is_some()),
        ("exx_fraction", sys.exx_fraction.is_some()),
        ("screening_parameter", sys.screening_parameter.is_some()),
        ("exxdiv_treatment", sys.exxdiv_treatment.is_some()),
        ("x_gamma_extrapolation", sys.x_gamma_extrapolation.is_some()),
        ("ecutvcut", sys.ecutvcut.is_some()),
        ("nqx1", sys.nqx1.is_some()),
        ("nqx2", sys.nqx2.is_some()),
        ("nqx3", sys.nqx3.is_some()),
        ("localization_thr", sys.localization_thr.is_some()),
        ("ace", sys.ace.is_some()),
    ]
}

/// The exchange variants of QE that planewave does not have, refused by name.
fn refuse_variants(r: &Reader<'_>, sys: &System, ecutrho_ry: f64) -> Result<(), InputError> {
    let refused = |key: &str, msg: String, hint: &str| Err(r.err(key, msg).with_hint(hint));
    if let Some(t) = sys.exxdiv_treatment.as_deref().map(super::lower) {
        if !matches!(t.as_str(), "gygi-baldereschi" | "gygi-bald" | "g-b") {
            let msg = format!("exxdiv_treatment = '{t}' is not supported by planewave");
            return refused(
                "exxdiv_treatment",
                msg,
                "use 'gygi-baldereschi' (QE's default)",
            );
        }
    }
    if sys.ecutvcut.is_some_and(|x| x != 0.0) {
        let msg = "ecutvcut is used only by the vcut divergence treatments, which planewave does not have";
        return refused("ecutvcut", msg.into(), "remove it");
    }
    if let Some(x) = sys
        .ecutfock
        .filter(|x| (x - ecutrho_ry).abs() > 1e-8 * ecutrho_ry)
    {
        let msg = format!("ecutfock = {x} Ry: planewave's exchange kernel sphere is the density sphere ({ecutrho_ry} Ry) so far");
        return refused(
            "ecutfock",
            msg,
            "remove ecutfock (QE's default is the density cutoff)",
        );
    }
    if sys.localization_thr.is_some_and(|x| x != 0.0) {
        let msg = "localised exchange (localization_thr > 0) is not supported by planewave";
        return refused("localization_thr", msg.into(), "remove it");
    }
    if sys.ace == Some(false) {
        let msg =
            "planewave always uses the adaptively compressed exchange operator (ace = .true.)";
        return refused("ace", msg.into(), "remove the key");
    }
    Ok(())
}
