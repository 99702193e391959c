//! Brillouin-zone sampling as the input declares it: Γ, a Monkhorst–Pack grid or an explicit
//! list, and its TOML value (`basis.kpoints`).
//!
//! Contract: explicit weights are normalised to sum 1 ([`normalise_weights`], which the pw.x
//! reader shares); a refusal raised while the TOML value is read is an encoded
//! [`Refusal`], except for unknown keys of its table, which stay serde's own message so that
//! [`crate::toml_errors`] names the key and suggests one.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use toml::Value;

use crate::named::Refusal;

/// Brillouin-zone sampling.
#[derive(Debug, Clone, PartialEq)]
pub enum Kpoints {
    /// The Gamma point only.
    Gamma,
    /// A Monkhorst-Pack grid.
    MonkhorstPack {
        /// Points along each reciprocal vector (all >= 1).
        grid: [usize; 3],
        /// Half-step shift per direction (QE `sk = 1`).
        shift: [bool; 3],
    },
    /// Explicit list: fractional k (in units of the reciprocal vectors) and
    /// weight; the weights are normalised to sum 1.
    Explicit(Vec<([f64; 3], f64)>),
}

/// `basis.kpoints`: "gamma", a grid `[n1, n2, n3]`, or a [`KpointTable`].
pub(crate) struct KpointsValue(pub Kpoints);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KpointTable {
    grid: Option<Vec<Value>>,
    shift: Option<Vec<Value>>,
    list: Option<Vec<Vec<f64>>>,
}

impl<'de> Deserialize<'de> for KpointsValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        kpoints(Value::deserialize(d)?)
            .map(KpointsValue)
            .map_err(de::Error::custom)
    }
}

const KPOINTS_HINT: &str =
    "use \"gamma\", { grid = [4, 4, 4] } or { list = [[kx, ky, kz, w], ...] }";

/// `basis.kpoints` from its value; the error is serde's message or an encoded [`Refusal`].
fn kpoints(v: Value) -> Result<Kpoints, String> {
    let refuse = |m: String| Refusal::new(m, KPOINTS_HINT).encode();
    match v {
        Value::String(s) if s.trim().eq_ignore_ascii_case("gamma") => Ok(Kpoints::Gamma),
        Value::String(s) => Err(refuse(format!("unknown k-point setting `{s}`"))),
        Value::Array(a) => Ok(Kpoints::MonkhorstPack {
            grid: grid(&a, "kpoints").map_err(refuse)?,
            shift: [false; 3],
        }),
        Value::Table(t) => {
            let t =
                KpointTable::deserialize(Value::Table(t)).map_err(|e| e.message().to_string())?;
            t.kpoints().map_err(refuse)
        }
        other => Err(refuse(format!(
            "expected \"gamma\" or a table, got {}",
            other.type_str()
        ))),
    }
}

/// Three non-negative integers.
fn grid(values: &[Value], what: &str) -> Result<[usize; 3], String> {
    let [a, b, c] = values else {
        return Err(format!("{what} must be 3 integers"));
    };
    let one = |x: &Value| {
        x.as_integer()
            .and_then(|i| usize::try_from(i).ok())
            .ok_or_else(|| format!("{what} must be 3 non-negative integers, got {x}"))
    };
    Ok([one(a)?, one(b)?, one(c)?])
}

impl KpointTable {
    fn kpoints(self) -> Result<Kpoints, String> {
        match (self.grid, self.list) {
            (Some(_), Some(_)) => Err("give either `grid` or `list`, not both".into()),
            (None, None) => Err("kpoints needs `grid` or `list`".into()),
            (Some(g), None) => {
                let mut shift = [false; 3];
                if let Some(s) = self.shift {
                    let [a, b, c] = &s[..] else {
                        return Err("shift must be 3 entries, each 0 or 1".into());
                    };
                    for (flag, x) in shift.iter_mut().zip([a, b, c]) {
                        *flag = match x {
                            Value::Integer(0) | Value::Boolean(false) => false,
                            Value::Integer(1) | Value::Boolean(true) => true,
                            other => {
                                return Err(format!("shift entries must be 0 or 1, got {other}"))
                            }
                        };
                    }
                }
                Ok(Kpoints::MonkhorstPack {
                    grid: grid(&g, "grid")?,
                    shift,
                })
            }
            (None, Some(_)) if self.shift.is_some() => Err("`shift` only applies to `grid`".into()),
            (None, Some(list)) => {
                let mut out = Vec::with_capacity(list.len());
                for (n, e) in list.iter().enumerate() {
                    out.push(match e[..] {
                        [x, y, z] => ([x, y, z], 1.0),
                        [x, y, z, w] => ([x, y, z], w),
                        _ => {
                            return Err(format!(
                                "k-point {} must be [kx, ky, kz] or [kx, ky, kz, weight] numbers",
                                n + 1
                            ))
                        }
                    });
                }
                normalise_weights(out)
            }
        }
    }
}

/// Normalises explicit k-point weights to sum 1.
pub(crate) fn normalise_weights(mut list: Vec<([f64; 3], f64)>) -> Result<Kpoints, String> {
    if list.is_empty() {
        return Err("the k-point list is empty".to_string());
    }
    let bad =
        |(k, w): &([f64; 3], f64)| !w.is_finite() || *w < 0.0 || k.iter().any(|x| !x.is_finite());
    if list.iter().any(bad) {
        return Err("k-point weights must be finite and >= 0, coordinates finite".to_string());
    }
    let sum: f64 = list.iter().map(|(_, w)| w).sum();
    if !sum.is_finite() || sum <= 0.0 {
        return Err("k-point weights sum to zero".to_string());
    }
    for (_, w) in list.iter_mut() {
        *w /= sum;
    }
    Ok(Kpoints::Explicit(list))
}
