//! Where each key of a TOML input was written, read from the document itself.
//!
//! Contract: [`key_lines`] gives the 1-based line of every key by its dotted path
//! (`basis.ecut`, `scf.mixing.beta`, `species.Si`), inline tables included, and the line of
//! each entry of `structure.atoms`. The typed structs then carry no spans, and a check that
//! joins keys finds its line by the key's name.

use std::collections::HashMap;

use toml_edit::{ImDocument, Item, TableLike};

use crate::error::line_of_offset;

/// Lines of one TOML document.
#[derive(Debug, Default)]
pub(crate) struct KeyLines {
    /// Line of each key by its dotted path.
    pub keys: HashMap<String, usize>,
    /// Line of each entry of `structure.atoms`, in order.
    pub atoms: Vec<usize>,
}

impl KeyLines {
    /// The line of `key`, if it was written.
    pub(crate) fn of(&self, key: &str) -> Option<usize> {
        self.keys.get(key).copied()
    }
}

/// The lines of `text`'s keys; empty when `text` does not parse (the parser reports that).
pub(crate) fn key_lines(text: &str) -> KeyLines {
    let mut out = KeyLines::default();
    if let Ok(doc) = ImDocument::parse(text) {
        walk(text, doc.as_table(), "", &mut out);
    }
    out
}

fn walk(text: &str, table: &dyn TableLike, prefix: &str, out: &mut KeyLines) {
    for (name, _) in table.iter() {
        let Some((key, item)) = table.get_key_value(name) else {
            continue;
        };
        let path = format!("{prefix}{name}");
        if let Some(at) = item.span().or_else(|| key.span()) {
            out.keys
                .insert(path.clone(), line_of_offset(text, at.start));
        }
        if path == "structure.atoms" {
            if let Some(list) = item.as_array() {
                out.atoms = list
                    .iter()
                    .filter_map(|v| v.span().map(|s| line_of_offset(text, s.start)))
                    .collect();
            }
        }
        if let Some(inner) = item.as_table_like() {
            if !matches!(item, Item::ArrayOfTables(_)) {
                walk(text, inner, &format!("{path}."), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_its_line() {
        let text = "title = \"x\"\n[structure]\natoms = [ { species = \"Si\" },\n  { species = \"Si\" } ]\n\n[species.Si]\npseudo = \"p\"\n[scf]\nmixing = { beta = 0.3 }\n";
        let l = key_lines(text);
        assert_eq!(l.of("title"), Some(1));
        assert_eq!(l.of("structure.atoms"), Some(3));
        assert_eq!(l.atoms, vec![3, 4]);
        assert_eq!(l.of("species.Si.pseudo"), Some(7));
        assert_eq!(l.of("scf.mixing.beta"), Some(9));
        assert!(l.of("species.Si").is_some());
    }
}
