//! The TOML reader's errors: the parser's and serde's messages made into [`InputError`]s that
//! name the file, the line, the key and a fix.
//!
//! Contract: the schema is the typed structs themselves. [`fields_of`] asks a struct's derived
//! `Deserialize` for its field names, so the table an unknown or missing key belongs to, and
//! the "did you mean" candidates, come from the same declaration that reads the input; a
//! [`Refusal`] raised while a value was read keeps its message and hint.

use std::cell::Cell;
use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::error::{did_you_mean, line_of_offset};
use crate::named::Refusal;
use crate::toml_lines::KeyLines;
use crate::InputError;

/// Each table as the user knows it (`[basis]`, `scf.mixing`) and its keys.
pub(crate) type Schema = [(&'static str, &'static [&'static str])];

/// The field names the derived `Deserialize` of `T` declares.
pub(crate) fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let found = Cell::new(&[][..]);
    let _ = T::deserialize(Probe(&found));
    found.get()
}

/// A deserializer that only records the fields a struct asks for.
struct Probe<'a>(&'a Cell<&'static [&'static str]>);

#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("probe")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.0.set(fields);
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A document that is not TOML at all.
pub(crate) fn malformed(e: &toml::de::Error, text: &str, file: &Path) -> InputError {
    let msg = one_line(e.message());
    let hint = if msg.contains("duplicate key") {
        "each key (and each [species.X] table) may appear only once"
    } else {
        "see the TOML schema in the planewave documentation (or is this a QE input missing &control/&system?)"
    };
    InputError::new(file, format!("malformed TOML: {msg}"))
        .at_line(e.span().map(|s| line_of_offset(text, s.start)))
        .with_hint(hint)
}

/// A serde error while the typed structs were read.
pub(crate) fn from_serde(
    e: &toml::de::Error,
    text: &str,
    file: &Path,
    schema: &Schema,
    lines: &KeyLines,
) -> InputError {
    let msg = e.message().trim();
    let line = e.span().map(|s| line_of_offset(text, s.start));
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let words = backquoted(rest);
        let (unknown, expected) = words
            .split_first()
            .map_or(("", &[][..]), |(u, e)| (u.as_str(), e));
        let table = table_of(schema, expected, text, line);
        return unknown_key(file, schema, &table, unknown, expected, line);
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let field = backquoted(rest).into_iter().next().unwrap_or_default();
        let table = schema
            .iter()
            .skip(1)
            .find(|(_, keys)| keys.contains(&field.as_str()))
            .map_or("a table", |(n, _)| n);
        let table = specific(table, text, line);
        return InputError::new(file, format!("missing required key `{field}` in {table}"))
            .with_key(format!("{}{field}", key_prefix(&table)))
            .at_line(line)
            .with_hint(format!("add `{field}` to {table}"));
    }
    let (message, hint) = match Refusal::decode(msg) {
        Some(r) => (r.message, r.hint),
        None => (
            format!("invalid value: {}", tidy_type_names(&one_line(msg))),
            "see the TOML schema in the planewave documentation".to_string(),
        ),
    };
    let err = InputError::new(file, message).at_line(line).with_hint(hint);
    match key_on_line(lines, line) {
        Some(key) => err.with_key(key),
        None => err,
    }
}

fn unknown_key(
    file: &Path,
    schema: &Schema,
    table: &str,
    unknown: &str,
    expected: &[String],
    line: Option<usize>,
) -> InputError {
    let hint = did_you_mean(unknown, expected.iter().map(String::as_str))
        .or_else(|| {
            schema
                .iter()
                .find(|(name, keys)| {
                    keys.contains(&unknown) && *name != table && name.starts_with('[')
                })
                .map(|(name, _)| format!("`{unknown}` belongs in {name}"))
        })
        .unwrap_or_else(|| format!("known keys in {table}: {}", expected.join(", ")));
    InputError::new(file, format!("unknown key `{unknown}` in {table}"))
        .with_key(format!("{}{unknown}", key_prefix(table)))
        .at_line(line)
        .with_hint(hint)
}

/// The table whose keys are `expected`.
fn table_of(schema: &Schema, expected: &[String], text: &str, line: Option<usize>) -> String {
    schema
        .iter()
        .find(|(_, keys)| {
            keys.len() == expected.len() && keys.iter().all(|k| expected.contains(&k.to_string()))
        })
        .map_or_else(
            || header_before(text, line).unwrap_or_else(|| "the top level".into()),
            |(n, _)| specific(n, text, line),
        )
}

/// `[species.*]` made `[species.Si]`, and `basis.kpoints` made `dos.kpoints` under `[dos]`,
/// from the header above `line`.
fn specific(table: &str, text: &str, line: Option<usize>) -> String {
    match header_before(text, line) {
        Some(h) if table == "[species.*]" && h.starts_with("[species.") => h,
        Some(h) if table == "basis.kpoints" && h == "[dos]" => "dos.kpoints".to_string(),
        _ => table.to_string(),
    }
}

/// The last `[table]` header at or before `line`.
fn header_before(text: &str, line: Option<usize>) -> Option<String> {
    text.lines()
        .take(line?)
        .filter_map(|l| {
            let t = l.trim();
            t.starts_with('[')
                .then(|| t.find(']').map(|e| t[..=e].to_string()))?
        })
        .last()
}

/// Dotted key prefix of a table as the user knows it.
fn key_prefix(table: &str) -> String {
    if table.starts_with('[') {
        format!("{}.", table.trim_matches(|c| c == '[' || c == ']'))
    } else if let Some(list) = table.strip_prefix("an entry of ") {
        format!("{list}[].")
    } else if table.contains('.') {
        format!("{table}.")
    } else {
        String::new()
    }
}

/// The outermost key written on `line`.
fn key_on_line(lines: &KeyLines, line: Option<usize>) -> Option<String> {
    let line = line?;
    lines
        .keys
        .iter()
        .filter(|(_, l)| **l == line)
        .map(|(k, _)| k)
        .min_by_key(|k| (k.matches('.').count(), k.len()))
        .cloned()
}

/// All back-quoted words in `s`.
fn backquoted(s: &str) -> Vec<String> {
    s.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn one_line(msg: &str) -> String {
    let lines: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// serde's `struct Basis` made "a table".
fn tidy_type_names(msg: &str) -> String {
    msg.split("struct ")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                return part.to_string();
            }
            let end = part
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(part.len());
            format!("a table{}", &part[end..])
        })
        .collect()
}
