//! The hybrid-functional keys of a QE input (`input_dft = 'pbe0' | 'hse'` and the EXX keys of
//! &system), mapped to [`Hybrid`] with QE 6.7's defaults, and every variant planewave does not
//! have refused by name.

use super::{Entry, InputError, Vals};
use crate::{Hybrid, KernelSpec};

/// The EXX keys of &system.
pub(super) const KEYS: &[&str] = &[
    "ecutfock",
    "exx_fraction",
    "screening_parameter",
    "exxdiv_treatment",
    "x_gamma_extrapolation",
    "ecutvcut",
    "nqx1",
    "nqx2",
    "nqx3",
    "localization_thr",
    "ace",
];

/// The hybrid of `input_dft` (already lowercase) with the EXX keys `get` finds; None for a
/// semilocal functional, which must then have no EXX key. `ecutrho_ry`: the density cutoff.
pub(super) fn parse<'a>(
    v: &Vals<'_>,
    dft: &str,
    get: impl Fn(&str) -> Option<&'a Entry>,
    ecutrho_ry: f64,
) -> Result<Option<Hybrid>, InputError> {
    if dft != "pbe0" && dft != "hse" {
        if let Some(e) = KEYS.iter().find_map(|k| get(k)) {
            return Err(v
                .err(
                    e,
                    "this key is for hybrid functionals, and input_dft is not one".to_string(),
                )
                .with_hint(
                    "set input_dft = 'pbe0' or 'hse' for exact exchange, or remove the key",
                ));
        }
        return Ok(None);
    }
    let fraction = match get("exx_fraction") {
        Some(e) => {
            let a = v.f64(e)?;
            if !(a > 0.0 && a <= 1.0) {
                return Err(v.err(e, format!("exx_fraction must be in (0, 1], got {a}")));
            }
            a
        }
        None => 0.25,
    };
    // HSE: the erfc kernel, with QE's screening 0.106 1/bohr for the Fock and the semilocal part.
    let screening =
        match (dft, get("screening_parameter")) {
            ("hse", None) => Some(0.106),
            ("hse", Some(e)) => {
                let w = v.f64(e)?;
                if !(w > 0.0 && w.is_finite()) {
                    return Err(v.err(e, format!("screening_parameter must be positive, got {w}")));
                }
                Some(w)
            }
            (_, Some(e)) => return Err(v
                .err(
                    e,
                    "screening_parameter is for screened hybrids (HSE), and input_dft is 'pbe0'"
                        .to_string(),
                )
                .with_hint("remove it, or use input_dft = 'hse'")),
            (_, None) => None,
        };
    let mut q_grid = [1; 3];
    for (i, q) in q_grid.iter_mut().enumerate() {
        if let Some(e) = get(&format!("nqx{}", i + 1)) {
            let n = v.int(e)?;
            *q = usize::try_from(n)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| v.err(e, format!("nqx{} = {n}: must be at least 1", i + 1)))?;
        }
    }
    if let Some(e) = get("exxdiv_treatment") {
        let t = v.lower(e);
        if !matches!(t.as_str(), "gygi-baldereschi" | "gygi-bald" | "g-b") {
            return Err(v
                .err(
                    e,
                    format!("exxdiv_treatment = '{t}' is not supported by planewave"),
                )
                .with_hint("use 'gygi-baldereschi' (QE's default)"));
        }
    }
    let x_gamma_extrapolation = get("x_gamma_extrapolation").map_or(Ok(true), |e| v.bool(e))?;
    if let Some(e) = get("ecutvcut") {
        if v.f64(e)? != 0.0 {
            return Err(v.err(e, "ecutvcut is used only by the vcut divergence treatments, which planewave does not have".to_string()).with_hint("remove it"));
        }
    }
    if let Some(e) = get("ecutfock") {
        let x = v.f64(e)?;
        if (x - ecutrho_ry).abs() > 1e-8 * ecutrho_ry {
            return Err(v.err(e, format!("ecutfock = {x} Ry: planewave's exchange kernel sphere is the density sphere ({ecutrho_ry} Ry) so far"))
                .with_hint("remove ecutfock (QE's default is the density cutoff)"));
        }
    }
    if let Some(e) = get("localization_thr") {
        if v.f64(e)? != 0.0 {
            return Err(v
                .err(
                    e,
                    "localised exchange (localization_thr > 0) is not supported by planewave"
                        .to_string(),
                )
                .with_hint("remove it"));
        }
    }
    if let Some(e) = get("ace") {
        if !v.bool(e)? {
            return Err(v.err(e, "planewave always uses the adaptively compressed exchange operator (ace = .true.)".to_string()).with_hint("remove the key"));
        }
    }
    let kernel = KernelSpec {
        screening,
        x_gamma_extrapolation,
        q_grid,
    };
    Ok(Some(Hybrid { fraction, kernel }))
}
