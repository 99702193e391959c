//! The syntax of a pw.x input: namelists of `key = value` entries, then cards of rows.
//!
//! Contract: [`read`] splits the text into [`Namelist`]s and [`Card`]s with the line of
//! everything, and refuses what breaks the syntax (an unclosed namelist, text outside any
//! namelist or card, a namelist, card or key given twice, a namelist after the cards, a card
//! planewave does not read). Keys are lower case; `celldm(1)` keeps its index. Values stay
//! text, and a namelist is read into a typed struct through [`Namelist::deserialize`], which
//! reads Fortran numbers (`1.0d-10`), logicals (`.true.`, `F`) and strings, gathers indexed
//! keys into a map from index to value, and returns every refusal with the entry it concerns.
//!
//! Syntax: entries are separated by commas or newlines; values are quoted strings ('..' or
//! "..", a doubled quote escapes it), numbers or logicals; `!` and `#` start comments outside
//! quotes; `/` or `&end` closes a namelist. A card starts with its name (any case) and an
//! optional option, bare or in `{}`/`()`.

use std::cell::Cell;
use std::fmt;
use std::path::Path;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};

use crate::InputError;

/// One `key = value` of a namelist.
#[derive(Debug)]
pub(super) struct Entry {
    /// The key as written, lower case, without spaces: `celldm(1)`.
    pub key: String,
    /// The key without its index: `celldm`.
    pub name: String,
    /// The index, when the key has one (0 for several indices, `hubbard_j(1,2)`).
    pub index: Option<usize>,
    pub value: String,
    pub line: usize,
}

/// A namelist `&name ... /`.
#[derive(Debug)]
pub(super) struct Namelist {
    /// Lower case, without the `&`.
    pub name: String,
    pub line: usize,
    pub entries: Vec<Entry>,
}

/// A card and its rows (comments stripped, blank rows dropped).
#[derive(Debug)]
pub(super) struct Card {
    /// Upper case.
    pub name: String,
    /// Lower case, without braces; empty when absent.
    pub option: String,
    pub line: usize,
    pub rows: Vec<(usize, String)>,
}

/// A pw.x input, split.
#[derive(Debug, Default)]
pub(super) struct Document {
    pub namelists: Vec<Namelist>,
    pub cards: Vec<Card>,
}

/// The cards planewave reads.
pub(super) const CARDS: [&str; 4] = [
    "ATOMIC_SPECIES",
    "ATOMIC_POSITIONS",
    "CELL_PARAMETERS",
    "K_POINTS",
];
const OTHER_CARDS: &[&str] = &[
    "OCCUPATIONS",
    "CONSTRAINTS",
    "ATOMIC_FORCES",
    "ATOMIC_VELOCITIES",
    "ADDITIONAL_K_POINTS",
    "SOLVENTS",
    "HUBBARD",
    "TOTAL_CHARGE",
];

impl Document {
    /// The namelist `name`, if given.
    pub fn namelist(&self, name: &str) -> Option<&Namelist> {
        self.namelists.iter().find(|n| n.name == name)
    }

    /// The card `name`, if given.
    pub fn card(&self, name: &str) -> Option<&Card> {
        self.cards.iter().find(|c| c.name == name)
    }

    /// The entry whose key is written `key` (`celldm(2)`), in any namelist.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.namelists
            .iter()
            .flat_map(|n| &n.entries)
            .find(|e| e.key == key)
    }
}

/// `text` split into namelists and cards.
pub(super) fn read(text: &str, file: &Path) -> Result<Document, InputError> {
    let at = |ln: usize, msg: String| InputError::new(file, msg).at_line(Some(ln));
    let mut doc = Document::default();
    let mut open = false;
    for (ln, raw) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let mut body = raw;
        if !open {
            let t = strip_comment(raw).trim();
            if t.is_empty() {
                continue;
            }
            let Some(after) = t.strip_prefix('&') else {
                card_line(&mut doc, t, ln, file)?;
                continue;
            };
            let len = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = after[..len].to_ascii_lowercase();
            let key = format!("&{name}");
            if name.is_empty() || name == "end" {
                return Err(at(
                    ln,
                    "`&` without a namelist name, or a stray &end".into(),
                ));
            }
            if doc.namelist(&name).is_some() {
                return Err(at(ln, format!("namelist &{name} appears twice")).with_key(key));
            }
            if !doc.cards.is_empty() {
                return Err(at(ln, format!("namelist &{name} after the cards"))
                    .with_key(key)
                    .with_hint("all namelists come before ATOMIC_SPECIES and the other cards"));
            }
            doc.namelists.push(Namelist {
                name,
                line: ln,
                entries: Vec::new(),
            });
            body = &raw[raw.find('&').map_or(raw.len(), |p| p + 1 + len)..];
        }
        let nl = doc.namelists.last_mut().expect("a namelist is open");
        open = entries(body, ln, nl, file)?;
    }
    match doc.namelists.last().filter(|_| open) {
        Some(nl) => Err(
            InputError::new(file, format!("namelist &{} is not closed", nl.name))
                .with_key(format!("&{}", nl.name))
                .at_line(Some(nl.line))
                .with_hint("end each namelist with a line holding `/`"),
        ),
        None => Ok(doc),
    }
}

/// A line outside the namelists: a card's name or one of its rows.
fn card_line(doc: &mut Document, t: &str, ln: usize, file: &Path) -> Result<(), InputError> {
    let first = t
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_uppercase();
    let name = first.split(['{', '(']).next().unwrap_or("").to_string();
    let err = |msg: String| InputError::new(file, msg).at_line(Some(ln));
    if CARDS.contains(&name.as_str()) {
        if doc.card(&name).is_some() {
            return Err(err(format!("card {name} appears twice")).with_key(name));
        }
        let option = t[name.len()..]
            .trim()
            .trim_matches(['{', '}', '(', ')'])
            .trim()
            .to_ascii_lowercase();
        doc.cards.push(Card {
            name,
            option,
            line: ln,
            rows: Vec::new(),
        });
    } else if OTHER_CARDS.contains(&name.as_str()) {
        return Err(err(format!("card {name} is not supported by planewave"))
            .with_key(name)
            .with_hint(format!("remove it; supported cards: {}", CARDS.join(", "))));
    } else if let Some(card) = doc.cards.last_mut() {
        card.rows.push((ln, t.to_string()));
    } else {
        return Err(err(format!(
            "unexpected text `{t}` outside any namelist or card"
        ))
        .with_hint("namelists start with &name and end with a line holding `/`"));
    }
    Ok(())
}

/// The entries of one line of namelist `nl`; false when the line closes it.
fn entries(line: &str, ln: usize, nl: &mut Namelist, file: &Path) -> Result<bool, InputError> {
    let err = |msg: String| InputError::new(file, msg).at_line(Some(ln));
    let mut rest = line;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() || rest.starts_with(['!', '#']) {
            return Ok(true);
        }
        if let Some(tail) = rest.strip_prefix('/') {
            let tail = strip_comment(tail).trim();
            if !tail.is_empty() {
                let msg = format!("unexpected text `{tail}` after the end of &{}", nl.name);
                return Err(err(msg));
            }
            return Ok(false);
        }
        if rest.to_ascii_lowercase().starts_with("&end") {
            return Ok(false);
        }
        let Some((raw_key, after)) = rest.split_once('=') else {
            return Err(err(format!("expected `key = value` in &{}, found `{}`", nl.name, rest.trim()))
                .with_hint("one value per key (array values must be written celldm(1)=..., celldm(2)=...); end the namelist with `/`"));
        };
        let key: String = raw_key
            .split_whitespace()
            .collect::<String>()
            .to_ascii_lowercase();
        let (name, index) = split_index(&key).ok_or_else(|| {
            let written: String = raw_key.split_whitespace().collect();
            err(format!("`{written}` is not a valid key in &{}", nl.name))
        })?;
        let (value, tail) =
            value(after.trim_start(), &key).map_err(|msg| err(msg).with_key(key.clone()))?;
        if let Some(prev) = nl.entries.iter().find(|e| e.key == key) {
            let msg = format!("`{key}` is given twice (also on line {})", prev.line);
            return Err(err(msg).with_key(key));
        }
        nl.entries.push(Entry {
            key,
            name,
            index,
            value,
            line: ln,
        });
        rest = tail;
    }
}

/// The value of `key` at the start of `s`, and what follows it.
fn value<'s>(s: &'s str, key: &str) -> Result<(String, &'s str), String> {
    let missing = || format!("missing value after `{key} =`");
    let Some(q) = s.chars().next().filter(|c| *c == '\'' || *c == '"') else {
        let end = s
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | '/' | '!' | '#'))
            .unwrap_or(s.len());
        return match end {
            0 => Err(missing()),
            _ => Ok((s[..end].to_string(), &s[end..])),
        };
    };
    let mut v = String::new();
    let mut rest = &s[1..];
    loop {
        let close = rest.find(q).ok_or("unterminated quoted string")?;
        v.push_str(&rest[..close]);
        rest = &rest[close + 1..];
        match rest.strip_prefix(q) {
            Some(after) => {
                v.push(q);
                rest = after;
            }
            None if v.is_empty() => return Err(missing()),
            None => return Ok((v, rest)),
        }
    }
}

/// `s` up to its comment (`!` or `#` outside quotes).
fn strip_comment(s: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '!' || c == '#' => return &s[..i],
            None => {}
        }
    }
    s
}

/// `name` or `name(i)` -> (name, index); None when malformed.
fn split_index(key: &str) -> Option<(String, Option<usize>)> {
    let valid = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let Some((name, inner)) = key.split_once('(') else {
        return valid(key).then(|| (key.to_string(), None));
    };
    let inner = inner.strip_suffix(')')?;
    let indices: Option<Vec<usize>> = inner.split(',').map(|p| p.parse().ok()).collect();
    let index = match indices?.as_slice() {
        [i] => *i,
        _ => 0,
    };
    valid(name).then(|| (name.to_string(), Some(index)))
}

/// A Fortran real (`1.0d-10`), finite.
pub(super) fn number(s: &str) -> Option<f64> {
    let t = s.trim().replace(['d', 'D'], "e");
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

fn logical(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        ".true." | ".t." | "t" | "true" => Some(true),
        ".false." | ".f." | "f" | "false" => Some(false),
        _ => None,
    }
}

const LOGICAL: &str = "write .true. or .false.";
const INTEGER: &str = "write a whole number, e.g. 2";
const NUMBER: &str = "write a number, e.g. 30.0 or 1.0d-8";

/// What went wrong while a namelist was read into its struct.
#[derive(Debug)]
pub(super) enum Refused {
    /// A value that does not read: why, and what to write.
    Value(String, Option<&'static str>),
    /// A key the struct does not have, with the keys it has.
    Unknown(&'static [&'static str]),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Value(m, _) => f.write_str(m),
            Refused::Unknown(_) => f.write_str("unknown key"),
        }
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Refused::Value(msg.to_string(), None)
    }
    fn unknown_field(_: &str, expected: &'static [&'static str]) -> Self {
        Refused::Unknown(expected)
    }
}

impl Namelist {
    /// The namelist read as a `T` (a struct whose fields are its keys), skipping the keys in
    /// `ignored`. A refusal comes with the entry it concerns.
    pub fn deserialize<T: DeserializeOwned>(
        &self,
        ignored: &[&str],
    ) -> Result<T, (Refused, Option<&Entry>)> {
        let mut groups: Vec<(&str, Vec<&Entry>)> = Vec::new();
        for e in self
            .entries
            .iter()
            .filter(|e| !ignored.contains(&e.name.as_str()))
        {
            match groups.iter_mut().find(|(n, _)| *n == e.name) {
                Some((_, g)) => g.push(e),
                None => groups.push((&e.name, vec![e])),
            }
        }
        let current = Cell::new(None);
        let map = Keys {
            groups: groups.into_iter(),
            value: None,
            current: &current,
        };
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map_err(|r| (r, current.get()))
    }
}

/// The keys of a namelist as a serde map; `current` is the entry being read.
struct Keys<'a, 'c, I> {
    groups: I,
    value: Option<Vec<&'a Entry>>,
    current: &'c Cell<Option<&'a Entry>>,
}

impl<'de, 'a, I: Iterator<Item = (&'a str, Vec<&'a Entry>)>> MapAccess<'de> for Keys<'a, '_, I> {
    type Error = Refused;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refused> {
        let Some((name, entries)) = self.groups.next() else {
            return Ok(None);
        };
        self.current.set(entries.first().copied());
        self.value = Some(entries);
        seed.deserialize(name.into_deserializer()).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Refused> {
        let entries = self.value.take().expect("a key was read");
        match entries.as_slice() {
            [one] if one.index.is_none() => seed.deserialize(Value(one)),
            _ => seed.deserialize(Indexed {
                entries,
                current: self.current,
            }),
        }
    }
}

/// One entry's value.
struct Value<'a>(&'a Entry);

impl Value<'_> {
    /// The value is not `what`; `hint` says what to write.
    fn not(&self, what: &str, hint: &'static str) -> Refused {
        Refused::Value(format!("`{}` is not {what}", self.0.value), Some(hint))
    }
}

impl<'de> de::Deserializer<'de> for Value<'_> {
    type Error = Refused;
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        v.visit_str(&self.0.value)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        let b = logical(&self.0.value).ok_or_else(|| self.not("a logical", LOGICAL))?;
        v.visit_bool(b)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        let n = (self.0.value.trim().parse()).map_err(|_| self.not("an integer", INTEGER))?;
        v.visit_i64(n)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        let x = number(&self.0.value).ok_or_else(|| self.not("a number", NUMBER))?;
        v.visit_f64(x)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        v.visit_some(self)
    }
    fn deserialize_map<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Refused> {
        let name = &self.0.name;
        let msg = format!("`{name}` needs an index, as in `{name}(1)`");
        Err(Refused::Value(msg, None))
    }
    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 char str string bytes byte_buf unit
        unit_struct newtype_struct seq tuple tuple_struct struct enum identifier ignored_any
    }
}

/// The entries `name(i)` of one key, as a map from `i` to value.
struct Indexed<'a, 'c> {
    entries: Vec<&'a Entry>,
    current: &'c Cell<Option<&'a Entry>>,
}

impl<'de> de::Deserializer<'de> for Indexed<'_, '_> {
    type Error = Refused;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Refused> {
        let e = self.entries[0];
        Err(Refused::Value(format!("`{}` takes no index", e.name), None))
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        v.visit_some(self)
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        if let Some(e) = self.entries.iter().find(|e| e.index.is_none()) {
            self.current.set(Some(e));
            return Value(e).deserialize_map(v);
        }
        v.visit_map(Indices {
            entries: self.entries.into_iter(),
            value: None,
            current: self.current,
        })
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Refused> {
        v.visit_unit()
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct struct enum identifier
    }
}

struct Indices<'a, 'c, I> {
    entries: I,
    value: Option<&'a Entry>,
    current: &'c Cell<Option<&'a Entry>>,
}

impl<'de, 'a, I: Iterator<Item = &'a Entry>> MapAccess<'de> for Indices<'a, '_, I> {
    type Error = Refused;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Refused> {
        let Some(e) = self.entries.next() else {
            return Ok(None);
        };
        self.current.set(Some(e));
        self.value = Some(e);
        let index = e.index.expect("indexed") as u64;
        seed.deserialize(index.into_deserializer()).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Refused> {
        seed.deserialize(Value(self.value.take().expect("an index was read")))
    }
}
