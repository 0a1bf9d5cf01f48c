//! What the domain knows of scripts: the errors they raise, located at `file:line`.
//!
//! Play modes, formats and tasks are scripts (Lua, in `crates/lua`), but the tournament and the
//! evaluations only see them through traits (`tournament::turn::PlayMode`,
//! `tournament::schedule::Format`, `eval::task::Task`). Their errors are these plain values, so
//! the domain can report, store and count them without knowing the script language.

use std::fmt;

/// An error raised while loading or running a script, located at `file:line` when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// `path:line` of the offending code, when known.
    pub location: Option<String>,
    /// What went wrong, without the location prefix.
    pub message: String,
}

impl ScriptError {
    /// An error at a known location.
    pub fn at(location: impl Into<String>, message: impl Into<String>) -> Self {
        ScriptError {
            location: Some(location.into()),
            message: message.into(),
        }
    }

    /// An error with no location (for example a missing entry script).
    pub fn bare(message: impl Into<String>) -> Self {
        ScriptError {
            location: None,
            message: message.into(),
        }
    }

    /// The same error with `prefix: ` before its message (`player `x`: ...`), keeping its location.
    pub fn within(self, prefix: &str) -> Self {
        ScriptError {
            message: format!("{prefix}: {}", self.message),
            ..self
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ScriptError {}

/// Everything wrong with a script, each at `file:line`: `arena check` reports them all at once.
#[derive(Debug, Clone)]
pub struct CheckErrors(pub Vec<ScriptError>);

impl fmt::Display for CheckErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CheckErrors {}

impl From<ScriptError> for CheckErrors {
    fn from(e: ScriptError) -> Self {
        CheckErrors(vec![e])
    }
}

/// The name in `known` closest to `given`, if one is close enough to be a misspelling.
pub fn did_you_mean<'a>(given: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = given.to_lowercase();
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(&lower, &k.to_lowercase()), *k))
        .filter(|(d, k)| *d <= (k.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}
