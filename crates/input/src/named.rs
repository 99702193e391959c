//! Values that the input gives by name or with a unit, read as they are deserialised.
//!
//! Contract: a [`Named`] type lists its spellings (compared trimmed, case-insensitive, `_` and
//! `-` alike); [`Pick`] deserialises one from a string, and [`pick`] reads one from any text.
//! [`Energy`] is a number in Ha or a string with a unit (`"30 Ry"`). A refusal is a
//! [`Refusal`]: its message and hint travel through serde's string errors
//! ([`Refusal::encode`]) and are taken apart again where serde's error becomes an
//! [`crate::InputError`].

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::error::did_you_mean;
use crate::units::{parse_energy, LengthUnit};
use crate::{BandStart, GridFormat, RelaxAlgorithm, Smearing};

/// Separates a message from its hint inside a serde error string.
const HINT_MARK: char = '\u{1f}';

/// A message and how to fix it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub message: String,
    pub hint: String,
}

impl Refusal {
    pub(crate) fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Refusal {
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// The refusal as one serde error string.
    pub(crate) fn encode(&self) -> String {
        format!("{}{HINT_MARK}{}", self.message, self.hint)
    }

    /// A refusal that [`Self::encode`] put into `text`, if any.
    pub(crate) fn decode(text: &str) -> Option<Self> {
        let (message, hint) = text.split_once(HINT_MARK)?;
        Some(Refusal::new(message.trim(), hint.trim()))
    }
}

/// A value chosen by name.
pub(crate) trait Named: Copy + 'static {
    /// What the value is, for messages ("smearing").
    const WHAT: &'static str;
    /// Every spelling (lower case, `-` for `_`) and its value.
    const NAMES: &'static [(&'static str, Self)];
    /// What to write instead, when no spelling is close.
    const SUPPORTED: &'static str;
}

/// `text` read as a `T`.
pub(crate) fn pick<T: Named>(text: &str) -> Result<T, Refusal> {
    let key = text.trim().to_ascii_lowercase().replace('_', "-");
    if let Some((_, v)) = T::NAMES.iter().find(|(n, _)| *n == key) {
        return Ok(*v);
    }
    let hint = did_you_mean(&key, T::NAMES.iter().map(|(n, _)| *n))
        .unwrap_or_else(|| T::SUPPORTED.to_string());
    Err(Refusal::new(
        format!("unknown {} `{}`", T::WHAT, text.trim()),
        hint,
    ))
}

/// A [`Named`] value deserialised from its name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pick<T>(pub T);

impl<'de, T: Named> Deserialize<'de> for Pick<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        pick(&text)
            .map(Pick)
            .map_err(|r| de::Error::custom(r.encode()))
    }
}

const EXPECTED_ENERGY: &str = "expected an energy (a number in Ha or a string like \"30 Ry\")";

/// An energy in Ha: a bare number (Ha) or a string with its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Energy(pub f64);

impl<'de> Deserialize<'de> for Energy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fn refused<E: de::Error>(message: String) -> E {
            E::custom(Refusal::new(message, "e.g. 15.0 (Ha), \"30 Ry\", \"408 eV\"").encode())
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Energy;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(&EXPECTED_ENERGY[9..])
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Energy, E> {
                Ok(Energy(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Energy, E> {
                Ok(Energy(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Energy, E> {
                parse_energy(v).map(Energy).map_err(refused)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Energy, E> {
                Err(refused(format!("{}, got boolean", EXPECTED_ENERGY)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Energy, A::Error> {
                Err(refused(format!("{}, got array", EXPECTED_ENERGY)))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Energy, A::Error> {
                Err(refused(format!("{}, got table", EXPECTED_ENERGY)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A functional's canonical name: `lda_pz`, `lda_pw`, `lda_vwn`, `pbe`, or a hybrid `pbe0`,
/// `hse`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Functional(pub &'static str);

impl Functional {
    /// Whether exact exchange is part of it.
    pub(crate) fn is_hybrid(self) -> bool {
        matches!(self.0, "pbe0" | "hse")
    }
}

impl Named for Functional {
    const WHAT: &'static str = "functional";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("lda-pz", Functional("lda_pz")),
        ("lda", Functional("lda_pz")),
        ("pz", Functional("lda_pz")),
        ("lda-pw", Functional("lda_pw")),
        ("pw", Functional("lda_pw")),
        ("lda-vwn", Functional("lda_vwn")),
        ("vwn", Functional("lda_vwn")),
        ("svwn", Functional("lda_vwn")),
        ("sla+vwn", Functional("lda_vwn")),
        ("pbe", Functional("pbe")),
        ("gga-pbe", Functional("pbe")),
        ("pbe0", Functional("pbe0")),
        ("hse", Functional("hse")),
        ("hse06", Functional("hse")),
    ];
    const SUPPORTED: &'static str =
        "supported: lda_pz (lda, pz), lda_pw (pw), lda_vwn (vwn, svwn), pbe, pbe0, hse (hse06)";
}

/// A smearing kind: the function of its width, none for fixed occupations.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmearingKind(pub Option<fn(f64) -> Smearing>);

impl Named for SmearingKind {
    const WHAT: &'static str = "smearing";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("none", SmearingKind(None)),
        ("fixed", SmearingKind(None)),
        ("gaussian", SmearingKind(Some(Smearing::Gaussian))),
        ("gauss", SmearingKind(Some(Smearing::Gaussian))),
        ("fermi-dirac", SmearingKind(Some(Smearing::FermiDirac))),
        ("fd", SmearingKind(Some(Smearing::FermiDirac))),
        ("f-d", SmearingKind(Some(Smearing::FermiDirac))),
        (
            "methfessel-paxton",
            SmearingKind(Some(Smearing::MethfesselPaxton)),
        ),
        ("mp", SmearingKind(Some(Smearing::MethfesselPaxton))),
        ("m-p", SmearingKind(Some(Smearing::MethfesselPaxton))),
        (
            "marzari-vanderbilt",
            SmearingKind(Some(Smearing::MarzariVanderbilt)),
        ),
        ("cold", SmearingKind(Some(Smearing::MarzariVanderbilt))),
        ("mv", SmearingKind(Some(Smearing::MarzariVanderbilt))),
        ("m-v", SmearingKind(Some(Smearing::MarzariVanderbilt))),
    ];
    const SUPPORTED: &'static str =
        "supported: none, gaussian, fermi-dirac, methfessel-paxton, marzari-vanderbilt (cold)";
}

/// Whether the spin is collinear (true) or not treated (false).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Collinear(pub bool);

impl Named for Collinear {
    const WHAT: &'static str = "spin treatment";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("none", Collinear(false)),
        ("unpolarized", Collinear(false)),
        ("unpolarised", Collinear(false)),
        ("collinear", Collinear(true)),
    ];
    const SUPPORTED: &'static str = "use \"none\" or \"collinear\"";
}

impl Named for LengthUnit {
    const WHAT: &'static str = "length unit";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("bohr", LengthUnit::Bohr),
        ("angstrom", LengthUnit::Angstrom),
    ];
    const SUPPORTED: &'static str = "use \"bohr\" or \"angstrom\"";
}

/// Whether atom positions are Cartesian (true) or fractional (false).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cartesian(pub bool);

impl Named for Cartesian {
    const WHAT: &'static str = "positions mode";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("fractional", Cartesian(false)),
        ("crystal", Cartesian(false)),
        ("direct", Cartesian(false)),
        ("cartesian", Cartesian(true)),
    ];
    const SUPPORTED: &'static str = "use \"fractional\" or \"cartesian\" (in lattice_unit)";
}

/// An eigensolver's canonical name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Eigensolver(pub &'static str);

impl Named for Eigensolver {
    const WHAT: &'static str = "eigensolver";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("davidson", Eigensolver("davidson")),
        ("david", Eigensolver("davidson")),
        ("lobpcg", Eigensolver("lobpcg")),
    ];
    const SUPPORTED: &'static str = "use \"davidson\" or \"lobpcg\"";
}

impl Named for RelaxAlgorithm {
    const WHAT: &'static str = "relaxation algorithm";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("bfgs", RelaxAlgorithm::Bfgs),
        ("fire", RelaxAlgorithm::Fire),
    ];
    const SUPPORTED: &'static str = "use \"bfgs\" or \"fire\"";
}

impl Named for BandStart {
    const WHAT: &'static str = "start";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("atomic", BandStart::Atomic),
        ("atomic+random", BandStart::Atomic),
        ("random", BandStart::Random),
    ];
    const SUPPORTED: &'static str = "use \"atomic\" or \"random\"";
}

/// Whether consecutive ranks share a band (CASTEP's order, true) or a band's G-vectors
/// (VASP's, false).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BandConsecutive(pub bool);

impl Named for BandConsecutive {
    const WHAT: &'static str = "rank order";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("g", BandConsecutive(false)),
        ("g-consecutive", BandConsecutive(false)),
        ("band", BandConsecutive(true)),
        ("band-consecutive", BandConsecutive(true)),
    ];
    const SUPPORTED: &'static str = "use \"g\" (VASP's order) or \"band\" (CASTEP's)";
}

impl Named for crate::Device {
    const WHAT: &'static str = "device";
    const NAMES: &'static [(&'static str, Self)] =
        &[("cpu", crate::Device::Cpu), ("gpu", crate::Device::Gpu)];
    const SUPPORTED: &'static str = "use \"cpu\" or \"gpu\"";
}

impl Named for GridFormat {
    const WHAT: &'static str = "file format";
    const NAMES: &'static [(&'static str, Self)] = &[
        ("cube", GridFormat::Cube),
        ("xsf", GridFormat::Xsf),
        ("chgcar", GridFormat::Chgcar),
    ];
    const SUPPORTED: &'static str = "use \"cube\", \"xsf\" or \"chgcar\"";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_loosely_and_refused_with_a_hint() {
        assert_eq!(
            pick::<Functional>(" LDA_PZ ").unwrap(),
            Functional("lda_pz")
        );
        assert_eq!(pick::<Functional>("HSE06").unwrap(), Functional("hse"));
        let r = pick::<Functional>("pbee").unwrap_err();
        assert_eq!(r.message, "unknown functional `pbee`");
        assert!(r.hint.contains("pbe"), "{r:?}");
        assert!(pick::<BandStart>("b3lyp")
            .unwrap_err()
            .hint
            .contains("atomic"));
        let r = Refusal::new("m", "h");
        assert_eq!(Refusal::decode(&r.encode()), Some(r));
        assert_eq!(Refusal::decode("plain"), None);
    }
}
