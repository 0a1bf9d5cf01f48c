//! Reading a script's table into a Rust type strictly, with every problem at once, in plain
//! words.
//!
//! serde stops at the first error and speaks Rust (`invalid type: string "x", expected u32`).
//! [`read_at_repaired`] runs the deserialization again after each error, on a copy of the table with the
//! faulty value taken out (or, for a required field, replaced by a stand-in that serde accepts),
//! so one pass collects every problem, and no problem is a follow-on of another. Each problem
//! carries the path of its field (via `serde_path_to_error`), which the caller turns into the
//! field's line, and a message that names types as a script author does: "a whole number",
//! "a number", "text", "true or false", "a list of ...", with a "did you mean" for misspelt keys
//! and values.
//!
//! The Rust types stay the single description of what a table may hold: adding a table kind
//! needs a `Deserialize` type and nothing here.

use mlua::{Lua, Table, Value};
use serde::de::DeserializeOwned;

use super::{ScriptError, fields::Place};

/// Reads `table` as a `T` written at `place`, every problem located at its field's line and
/// prefixed with `what` (`player `m``; empty for none). This is how any table kind a script
/// writes is read: a new kind needs only its `Deserialize` type.
///
/// With the problems comes the value read once every faulty field was taken out, when no
/// required field had to be stood in for: `arena check` tries the files and engines of what
/// did read in the same pass as it reports the problems (a stand-in is never tried, as it
/// would only add follow-on problems).
pub(super) fn read_at_repaired<T: DeserializeOwned>(
    lua: &Lua,
    table: &Table,
    place: &Place<'_>,
    what: &str,
) -> (Option<T>, Vec<ScriptError>) {
    let (value, errors) = read_repaired(lua, table);
    let errors = errors
        .into_iter()
        .map(|e| located(place, &e.path, what, &e.message))
        .collect();
    (value, errors)
}

/// `message` at the line of `path` inside `place`, prefixed with `what`.
pub(super) fn located(
    place: &Place<'_>,
    path: &[String],
    what: &str,
    message: &str,
) -> ScriptError {
    let message = if what.is_empty() {
        message.to_string()
    } else {
        format!("{what}: {message}")
    };
    ScriptError::at(place.path(path).at(), message)
}

/// The place of the first key named in backticks in `message` that the table at `place`
/// writes (a check's message names the field it is about), or `place` itself.
pub(super) fn refine<'a>(place: &Place<'a>, message: &str) -> Place<'a> {
    message
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|word| place.has_key(word))
        .map_or_else(|| place.clone(), |word| place.key(word))
}

/// One problem with one field of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FieldError {
    /// The field's path from the table: keys, and 1-based list indices as numbers.
    pub path: Vec<String>,
    /// What is wrong, naming the field.
    pub message: String,
}

/// How many times a table is read again before giving up on finding more problems.
const MAX_ROUNDS: usize = 64;

/// Stand-ins tried, in order, for a required field whose value was wrong: one of them has the
/// type serde wants, so that the rest of the table is still read.
fn stand_ins(lua: &Lua) -> Vec<Value> {
    let mut out = vec![
        Value::String(lua.create_string("").expect("a short string")),
        Value::Integer(1),
        Value::Boolean(false),
    ];
    if let Ok(t) = lua.create_table() {
        out.push(Value::Table(t));
    }
    if let Ok(t) = lua.create_sequence_from([1]) {
        out.push(Value::Table(t));
    }
    out
}

/// Reads `table` as a `T`, or every problem with it.
#[cfg(test)]
fn read<T: DeserializeOwned>(lua: &Lua, table: &Table) -> Result<T, Vec<FieldError>> {
    match read_repaired(lua, table) {
        (Some(value), errors) if errors.is_empty() => Ok(value),
        (_, errors) => Err(errors),
    }
}

/// Every problem with `table` read as a `T`, and the value read once the faulty fields were
/// taken out (`None` when a required field needed a stand-in, or the table could not be read).
fn read_repaired<T: DeserializeOwned>(lua: &Lua, table: &Table) -> (Option<T>, Vec<FieldError>) {
    let work = match deep_copy(lua, table, 0) {
        Ok(t) => t,
        Err(e) => {
            return (
                None,
                vec![FieldError {
                    path: Vec::new(),
                    message: e.to_string(),
                }],
            );
        }
    };
    let mut errors: Vec<FieldError> = Vec::new();
    // Fields taken out or replaced, and which stand-in each is on.
    let mut repaired: Vec<(Vec<String>, usize)> = Vec::new();
    // Tables (by path) in which a key was reported unknown.
    let mut misspelt: Vec<Vec<String>> = Vec::new();
    let candidates = stand_ins(lua);
    for _ in 0..MAX_ROUNDS {
        let de = mlua::serde::Deserializer::new(Value::Table(work.clone()));
        let e = match serde_path_to_error::deserialize::<_, T>(de) {
            Ok(value) => {
                let stood_in = repaired.iter().any(|(_, next)| *next > 0);
                return ((!stood_in).then_some(value), errors);
            }
            Err(e) => e,
        };
        let path = lua_path(e.path());
        let raw = match e.inner() {
            mlua::Error::DeserializeError(m) => m.clone(),
            other => other.to_string(),
        };
        let problem = classify(&raw);
        // The field the error is about, and the path of the table holding it.
        let (field_path, fix) = match &problem {
            Problem::UnknownKey { key, .. } => {
                let mut p = path.clone();
                if p.last() != Some(key) {
                    p.push(key.clone());
                }
                (p, Fix::Remove)
            }
            Problem::Missing(key) => {
                let mut p = path.clone();
                if p.last() != Some(key) {
                    p.push(key.clone());
                }
                (p, Fix::StandIn)
            }
            _ => (path.clone(), Fix::Remove),
        };
        // A table in which a key was reported unknown: its missing fields and its own checks
        // are most likely that key misspelt, so they are follow-ons, not new problems.
        let in_misspelt_table = match &problem {
            Problem::Missing(_) => misspelt
                .iter()
                .any(|t: &Vec<String>| *t == field_path[..field_path.len().saturating_sub(1)]),
            Problem::Other(_) => misspelt.contains(&field_path),
            _ => false,
        };
        if let Problem::UnknownKey { .. } = &problem {
            misspelt.push(field_path[..field_path.len().saturating_sub(1)].to_vec());
        }
        if in_misspelt_table && !field_path.is_empty() {
            let stand_in = matches!(problem, Problem::Missing(_));
            if !repaired.iter().any(|(p, _)| *p == field_path) {
                repaired.push((field_path.clone(), usize::from(stand_in)));
                let value = if stand_in {
                    candidates[0].clone()
                } else {
                    Value::Nil
                };
                if set(&work, &field_path, value).is_err() {
                    return (None, errors);
                }
                continue;
            }
        }
        if field_path.is_empty() {
            errors.push(FieldError {
                path: field_path,
                message: describe(&problem, &[]),
            });
            return (None, errors);
        }
        match repaired.iter_mut().find(|(p, _)| *p == field_path) {
            // A field already reported: this error is its follow-on (a required field taken
            // out, or a stand-in of the wrong type), so try the next stand-in.
            Some((_, next)) => {
                let Some(value) = candidates.get(*next) else {
                    return (None, errors);
                };
                *next += 1;
                if set(&work, &field_path, value.clone()).is_err() {
                    return (None, errors);
                }
            }
            None => {
                errors.push(FieldError {
                    path: field_path.clone(),
                    message: describe(&problem, &field_path),
                });
                let value = match fix {
                    Fix::Remove => Value::Nil,
                    Fix::StandIn => candidates[0].clone(),
                };
                repaired.push((field_path.clone(), usize::from(fix == Fix::StandIn)));
                if set(&work, &field_path, value).is_err() {
                    return (None, errors);
                }
            }
        }
    }
    (None, errors)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fix {
    Remove,
    StandIn,
}

/// A serde error, taken apart.
#[derive(Debug, Clone, PartialEq)]
enum Problem {
    UnknownKey { key: String, known: Vec<String> },
    Missing(String),
    WrongType { got: String, expected: String },
    BadValue { got: String, expected: String },
    UnknownVariant { value: String, known: Vec<String> },
    Untagged(String),
    Other(String),
}

fn classify(message: &str) -> Problem {
    let ticked = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let mut names = ticked(rest);
        if !names.is_empty() {
            let key = names.remove(0);
            return Problem::UnknownKey { key, known: names };
        }
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let mut names = ticked(rest);
        if !names.is_empty() {
            let value = names.remove(0);
            return Problem::UnknownVariant {
                value,
                known: names,
            };
        }
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        return Problem::Missing(rest.trim_matches('`').to_string());
    }
    for (prefix, wrong_type) in [("invalid type: ", true), ("invalid value: ", false)] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((got, expected)) = rest.rsplit_once(", expected ")
        {
            let (got, expected) = (got.to_string(), expected.to_string());
            return if wrong_type {
                Problem::WrongType { got, expected }
            } else {
                Problem::BadValue { got, expected }
            };
        }
    }
    if let Some(name) = message.strip_prefix("data did not match any variant of untagged enum ") {
        return Problem::Untagged(name.trim().to_string());
    }
    Problem::Other(message.to_string())
}

/// The problem in plain words, naming the field at `path`.
fn describe(problem: &Problem, path: &[String]) -> String {
    let field = format!("`{}`", show_path(path));
    let key = path.last().map(String::as_str).unwrap_or("");
    match problem {
        Problem::UnknownKey { key, known } => {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let parent = show_path(&path[..path.len().saturating_sub(1)]);
            let inside = if parent.is_empty() {
                String::new()
            } else {
                format!(" in `{parent}`")
            };
            format!("unknown key `{key}`{inside}{}", suggest(key, &known))
        }
        Problem::Missing(key) => {
            let parent = show_path(&path[..path.len().saturating_sub(1)]);
            if parent.is_empty() {
                format!("`{key}` is missing")
            } else {
                format!("`{parent}` needs `{key}`")
            }
        }
        Problem::WrongType { got, expected } => format!(
            "{field} must be {}, not {}",
            plain_expected(expected, key),
            plain_got(got)
        ),
        Problem::BadValue { got, expected } => {
            let expected = if expected.starts_with('u') && got.starts_with("integer `-") {
                "a whole number of 0 or more".to_string()
            } else {
                plain_expected(expected, key)
            };
            format!("{field} must be {expected}, not {}", plain_got(got))
        }
        Problem::UnknownVariant { value, known } => {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let listed: Vec<String> = known.iter().map(|k| format!("\"{k}\"")).collect();
            let did_you_mean = did_you_mean(value, &known)
                .map(|m| format!("; did you mean \"{m}\"?"))
                .unwrap_or_default();
            format!(
                "{field} cannot be \"{value}\" (it is one of {}){did_you_mean}",
                or_list(&listed)
            )
        }
        Problem::Untagged(name) => format!("{field} must be {}", untagged_words(name)),
        Problem::Other(message) => format!("{field}: {message}"),
    }
}

/// ` (the keys are: ...)`, or `; did you mean `x`?` when one is close to `key`.
pub(super) fn suggest(key: &str, known: &[&str]) -> String {
    match did_you_mean(key, known) {
        Some(m) => format!("; did you mean `{m}`?"),
        None if known.is_empty() => String::new(),
        None => format!(" (the keys are: {})", known.join(", ")),
    }
}

/// The name in `known` closest to `given` (see [`crate::script::did_you_mean`]).
pub(super) fn did_you_mean<'a>(given: &str, known: &[&'a str]) -> Option<&'a str> {
    crate::script::did_you_mean(given, known)
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `a.b[2].c` for a path of keys and 1-based indices.
pub(super) fn show_path(path: &[String]) -> String {
    let mut out = String::new();
    for segment in path {
        if segment.parse::<usize>().is_ok() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        }
    }
    out
}

/// serde's name of an expected type, as a script author says it.
fn plain_expected(expected: &str, key: &str) -> String {
    let words = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a string" | "a borrowed string" | "a character" => "text",
        "a boolean" => "true or false",
        "a sequence" => return list_words(key),
        "table" if list_words(key) != "a list" => return list_words(key),
        "a map" | "a JSON object" | "table" => "a table",
        other if other.starts_with("struct ") => "a table",
        other if other.starts_with("enum ") || other.starts_with("variant ") => "text",
        other if other.starts_with("a tuple") => "a list",
        // Messages of hand-written visitors are already words.
        other => return other.to_string(),
    };
    words.to_string()
}

/// What a list field holds, by its key.
fn list_words(key: &str) -> String {
    match key {
        "args" => "a list of text",
        "fens" => "a list of FEN positions (text)",
        "proposers" => "a list of models (tables with `base_url` and `model`)",
        "players" => "a list of players",
        "tasks" => "a list of tasks",
        "chess960" => "a list of start numbers",
        _ => "a list",
    }
    .to_string()
}

/// The accepted forms of an untagged enum, by its Rust name.
fn untagged_words(name: &str) -> String {
    match name {
        "Chess960Starts" => "true, false or a list of start numbers (0 to 959)",
        "EngineOptionValue" => "true or false, a whole number or text",
        _ => "one of the forms the documentation lists",
    }
    .to_string()
}

/// serde's description of the value found, as a script author says it.
fn plain_got(got: &str) -> String {
    let inner = |prefix: &str| {
        got.strip_prefix(prefix)
            .map(|s| s.trim_matches('`').to_string())
    };
    if let Some(text) = got.strip_prefix("string ") {
        return format!("the text {text}");
    }
    if let Some(n) = inner("integer ").or_else(|| inner("floating point ")) {
        return n;
    }
    if let Some(b) = inner("boolean ") {
        return b;
    }
    match got {
        "map" | "table" => "a table".into(),
        "string" => "text".into(),
        "integer" | "number" => "a number".into(),
        "boolean" => "true or false".into(),
        "sequence" => "a list".into(),
        "unit value" | "null" => "nil".into(),
        other => other.to_string(),
    }
}

/// serde_path_to_error's path as Lua keys and 1-based indices.
fn lua_path(path: &serde_path_to_error::Path) -> Vec<String> {
    path.iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Seq { index } => Some((index + 1).to_string()),
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

/// A copy of `table` whose nested tables are copies too (so repairs leave the script's alone).
fn deep_copy(lua: &Lua, table: &Table, depth: usize) -> mlua::Result<Table> {
    let copy = lua.create_table()?;
    if let Some(mt) = table.metatable() {
        copy.set_metatable(Some(mt))?;
    }
    for pair in table.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let v = match v {
            Value::Table(t) if depth < 32 => Value::Table(deep_copy(lua, &t, depth + 1)?),
            other => other,
        };
        copy.raw_set(k, v)?;
    }
    Ok(copy)
}

/// Sets the field at `path` of `table` (keys, or 1-based indices).
fn set(table: &Table, path: &[String], value: Value) -> mlua::Result<()> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut t = table.clone();
    for segment in parents {
        let next: Value = match segment.parse::<i64>() {
            Ok(i) if !t.contains_key(segment.as_str())? => t.raw_get(i)?,
            _ => t.raw_get(segment.as_str())?,
        };
        match next {
            Value::Table(n) => t = n,
            _ => return Err(mlua::Error::runtime("not a table")),
        }
    }
    match last.parse::<i64>() {
        Ok(i) if !t.contains_key(last.as_str())? => t.raw_set(i, value),
        _ => t.raw_set(last.as_str(), value),
    }
}

#[cfg(test)]
mod tests {
    use mlua::Lua;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        usd: Option<f64>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        #[serde(default)]
        max_plies: u32,
        #[serde(default)]
        temperature: Option<f64>,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        budget: Option<Inner>,
        #[serde(default)]
        flag: bool,
    }

    fn problems(source: &str) -> Vec<(String, String)> {
        let lua = Lua::new();
        let t: Table = lua.load(source).eval().unwrap();
        match read::<Outer>(&lua, &t) {
            Ok(_) => Vec::new(),
            Err(errors) => errors
                .into_iter()
                .map(|e| (show_path(&e.path), e.message))
                .collect(),
        }
    }

    #[test]
    fn every_problem_is_found_in_plain_words() {
        let found = problems(
            r#"{ name = 5, max_plies = "twenty", temperature = "hot", args = { "a", 3 },
                 budget = { usd = "x", cents = 1 }, flag = "yes", max_ply = 3 }"#,
        );
        let mut messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        messages.sort_unstable();
        assert_eq!(
            messages,
            [
                "`args[2]` must be text, not 3",
                "`budget.usd` must be a number, not the text \"x\"",
                "`flag` must be true or false, not the text \"yes\"",
                "`max_plies` must be a whole number, not the text \"twenty\"",
                "`name` must be text, not 5",
                "`temperature` must be a number, not the text \"hot\"",
                "unknown key `cents` in `budget` (the keys are: usd)",
                "unknown key `max_ply`; did you mean `max_plies`?",
            ],
        );
        assert!(found.iter().any(|(p, _)| p == "args[2]"), "{found:?}");
    }

    #[test]
    fn a_missing_required_field_is_one_problem() {
        assert_eq!(
            problems("{ max_plies = 3 }"),
            [("name".to_string(), "`name` is missing".to_string())]
        );
        assert!(problems("{ name = 'x' }").is_empty());
    }
}
