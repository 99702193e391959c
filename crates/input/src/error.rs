//! The error type for everything that can go wrong while reading an input file.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with the user's input, pointing at the file, the line (when known)
/// and the key (when known), with an optional hint on how to fix it.
///
/// Displayed as `error: <file>:<line>: <key>: <message>` followed by
/// `\n  hint: <hint>`; missing parts are left out.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InputError {
    /// The file the problem is in (the input file, or a POSCAR it refers to).
    pub file: PathBuf,
    /// 1-based line number, when known.
    pub line: Option<usize>,
    /// The offending key (e.g. `basis.ecut`, `ecutwfc`, `ATOMIC_POSITIONS`), when known.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when we have an idea.
    pub hint: Option<String>,
}

impl InputError {
    /// A new error in `file` with `message` and nothing else.
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_path_buf(),
            line: None,
            key: None,
            message: message.into(),
            hint: None,
        }
    }

    /// Sets the line (1-based) if `line` is `Some` and no line is set yet.
    pub fn at_line(mut self, line: Option<usize>) -> Self {
        if self.line.is_none() {
            self.line = line;
        }
        self
    }

    /// Sets the key.
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Sets the hint if `hint` is `Some`.
    pub fn with_hint_opt(mut self, hint: Option<String>) -> Self {
        if hint.is_some() {
            self.hint = hint;
        }
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// "did you mean `x`?" for `word` among `candidates`, when one is close enough.
pub(crate) fn did_you_mean<'a, I>(word: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(&str, usize, f64)> = None;
    for cand in candidates {
        let c = cand.to_ascii_lowercase();
        let lev = strsim::levenshtein(&lower, &c);
        let jw = strsim::jaro_winkler(&lower, &c);
        let close = if c.len() <= 4 {
            lev <= 1
        } else {
            lev <= 2 || (jw >= 0.9 && lev <= c.len() / 2)
        };
        if !close {
            continue;
        }
        let better = match best {
            None => true,
            Some((_, blev, bjw)) => lev < blev || (lev == blev && jw > bjw),
        };
        if better {
            best = Some((cand, lev, jw));
        }
    }
    best.map(|(c, _, _)| format!("did you mean `{c}`?"))
}

/// 1-based line number of byte offset `offset` in `text`.
pub(crate) fn line_of_offset(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_full_and_partial() {
        let e = InputError::new(Path::new("a.toml"), "must be positive")
            .at_line(Some(3))
            .with_key("basis.ecut")
            .with_hint("use 15");
        assert_eq!(
            e.to_string(),
            "error: a.toml:3: basis.ecut: must be positive\n  hint: use 15"
        );
        let e = InputError::new(Path::new("a.toml"), "bad");
        assert_eq!(e.to_string(), "error: a.toml: bad");
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            did_you_mean("ecutt", ["ecut", "kpoints", "nbands"]),
            Some("did you mean `ecut`?".to_string())
        );
        assert_eq!(did_you_mean("zzzzzz", ["ecut", "kpoints"]), None);
        assert_eq!(did_you_mean("Si", ["Ge"]), None);
        assert_eq!(
            did_you_mean("si", ["Ge", "Si"]),
            Some("did you mean `Si`?".to_string())
        );
    }

    #[test]
    fn offsets_to_lines() {
        let t = "a\nb\nc";
        assert_eq!(line_of_offset(t, 0), 1);
        assert_eq!(line_of_offset(t, 2), 2);
        assert_eq!(line_of_offset(t, 100), 3);
    }
}
