//! Where each key of a table constructor sits in a script: the line of `max_tokens = 10` inside
//! `arena.llm { ... }`, so that `arena check` can point at the field itself rather than at the
//! line where the table starts.
//!
//! Lua's debug information knows the line of a call, not of a constructor's keys, so this reads
//! the script text itself. It is hand-written (no Lua parser crate is in the dependency set, and a
//! whole parser is not needed): a tokenizer that knows Lua's strings, long brackets, comments and
//! block keywords, and a pass that records every table constructor with its keyed fields (key,
//! line, the constructor of its value if it is one) and its positional items. A table that a
//! script builds another way (in a loop, through a function) has no constructor here; its
//! problems then fall back to the line Lua's debug information gives.

use std::collections::BTreeMap;

/// One table constructor `{ ... }` of a script.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Constructor {
    /// Line of the `{`.
    pub open_line: u32,
    /// Line of the name it is passed to, for a call like `arena.llm { ... }` or `f({ ... })`.
    pub call_line: Option<u32>,
    /// Keyed fields in source order: `name = value` and `["name"] = value`.
    pub fields: Vec<Field>,
    /// Positional items in order, each with the constructor that starts it, if one does
    /// (`{ arena.random { ... }, x }` has two items, the first with a constructor).
    pub items: Vec<Option<usize>>,
}

/// A keyed field of a [`Constructor`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Field {
    /// The key as written (without brackets or quotes).
    pub key: String,
    /// Line of the key.
    pub line: u32,
    /// The constructor the value starts with (`key = { ... }`, `key = f { ... }`), if any.
    pub value: Option<usize>,
}

/// Every constructor of one script, in the order their `{` appear.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FileFields {
    /// The constructors; indices are what [`Field::value`] and [`Constructor::items`] hold.
    pub constructors: Vec<Constructor>,
}

impl FileFields {
    /// Reads the constructors of `source`. Never fails: text it cannot follow ends the scan, and
    /// what was found before is kept.
    pub fn scan(source: &str) -> Self {
        let tokens = tokenize(source);
        build(&tokens)
    }

    /// The `nth` (0-based) constructor passed to a call at `line`, or else the `nth` one whose
    /// `{` is on `line`.
    pub(crate) fn called_at(&self, line: u32, nth: usize) -> Option<usize> {
        let by_call = self
            .constructors
            .iter()
            .enumerate()
            .filter(|(_, c)| c.call_line == Some(line))
            .map(|(i, _)| i)
            .nth(nth);
        by_call.or_else(|| {
            self.constructors
                .iter()
                .enumerate()
                .filter(|(_, c)| c.open_line == line)
                .map(|(i, _)| i)
                .nth(nth)
        })
    }
}

/// Where a table (or a value inside it) was written: a file, a line, and the constructor when it
/// is known, so that its keys can be followed further.
#[derive(Debug, Clone)]
pub(super) struct Place<'a> {
    /// Display path of the file.
    pub file: String,
    /// The line of this value (its key's line, or the table's own line).
    pub line: u32,
    fields: Option<&'a FileFields>,
    constructor: Option<usize>,
}

impl<'a> Place<'a> {
    /// The table passed to the call at `file:line` (the form `caller_location` records), with
    /// its keys when `fields` has its constructor.
    pub(crate) fn of_call(at: &str, fields: Option<&'a FileFields>) -> Self {
        let (file, line) = split_at(at);
        let constructor = fields.and_then(|f| f.called_at(line, 0));
        Place {
            file,
            line,
            fields,
            constructor,
        }
    }

    /// A place with no constructor known: everything inside it is at its own line.
    pub(crate) fn line_only(at: &str) -> Place<'static> {
        let (file, line) = split_at(at);
        Place {
            file,
            line,
            fields: None,
            constructor: None,
        }
    }

    /// `file:line`.
    pub fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// Whether the constructor of this table is known (its keys can be followed).
    pub(crate) fn has_constructor(&self) -> bool {
        self.constructor.is_some()
    }

    fn this(&self) -> Option<&'a Constructor> {
        Some(&self.fields?.constructors[self.constructor?])
    }

    /// Whether this table's constructor writes `key`.
    pub(crate) fn has_key(&self, key: &str) -> bool {
        self.this()
            .is_some_and(|c| c.fields.iter().any(|f| f.key == key))
    }

    /// The field `key` of this table: at the key's line when the constructor writes it, else
    /// here.
    pub fn key(&self, key: &str) -> Place<'a> {
        let field = self
            .this()
            .and_then(|c| c.fields.iter().rev().find(|f| f.key == key));
        match field {
            Some(f) => Place {
                file: self.file.clone(),
                line: f.line,
                fields: self.fields,
                constructor: f.value,
            },
            None => self.stay(),
        }
    }

    /// The positional item `index` (0-based) of this table: at its constructor when it starts
    /// with one, else here.
    pub fn item(&self, index: usize) -> Place<'a> {
        let item = self
            .this()
            .and_then(|c| c.items.get(index).copied().flatten());
        let Some(fields) = self.fields else {
            return self.stay();
        };
        match item {
            Some(i) => Place {
                file: self.file.clone(),
                line: fields.constructors[i]
                    .call_line
                    .unwrap_or(fields.constructors[i].open_line),
                fields: self.fields,
                constructor: Some(i),
            },
            None => self.stay(),
        }
    }

    /// Follows `path` (keys, or 1-based indices written as numbers) as far as the constructors
    /// go.
    pub fn path<S: AsRef<str>>(&self, path: &[S]) -> Place<'a> {
        let mut place = self.clone();
        for segment in path {
            let segment = segment.as_ref();
            place = match segment.parse::<usize>() {
                Ok(n) if n >= 1 && !place.has_key(segment) => place.item(n - 1),
                _ => place.key(segment),
            };
        }
        place
    }

    fn stay(&self) -> Place<'a> {
        Place {
            constructor: None,
            ..self.clone()
        }
    }
}

/// `file:line` split at its last colon (a missing or bad line reads as 1).
fn split_at(at: &str) -> (String, u32) {
    match at.rsplit_once(':') {
        Some((file, line)) => (file.to_string(), line.parse().unwrap_or(1)),
        None => (at.to_string(), 1),
    }
}

/// Scanned files by display path, filled as a check reads them.
pub(super) type FieldMap = BTreeMap<String, FileFields>;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str(String),
    Punct(&'static str),
    Other,
}

const PUNCT: [&str; 27] = [
    "...", "==", "~=", "<=", ">=", "//", "::", "<<", ">>", "..", "{", "}", "(", ")", "[", "]", "=",
    ",", ";", ".", ":", "+", "-", "*", "/", "<", ">",
];

/// The tokens of `source` with their lines; strings keep their text (escapes other than the
/// quote itself are left as written, which is enough for keys).
fn tokenize(source: &str) -> Vec<(Tok, u32)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1u32;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if source[i..].starts_with("--") {
            i += 2;
            if let Some(level) = long_bracket(&bytes[i..]) {
                let (end, lines) = long_end(bytes, i + level + 2, level);
                line += lines;
                i = end;
            } else {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
        } else if c == b'[' && long_bracket(&bytes[i..]).is_some() {
            let level = long_bracket(&bytes[i..]).unwrap_or(0);
            let start_line = line;
            let start = i + level + 2;
            let (end, lines) = long_end(bytes, start, level);
            line += lines;
            let text_end = end.saturating_sub(level + 2).max(start);
            out.push((Tok::Str(source[start..text_end].to_string()), start_line));
            i = end;
        } else if c == b'"' || c == b'\'' {
            let start_line = line;
            let mut text = String::new();
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    if bytes[i + 1] == b'\n' {
                        line += 1;
                    }
                    text.push(bytes[i + 1] as char);
                    i += 2;
                    continue;
                }
                if bytes[i] == b'\n' {
                    break;
                }
                let ch_len = utf8_len(bytes[i]);
                text.push_str(&source[i..(i + ch_len).min(bytes.len())]);
                i += ch_len;
            }
            i += 1;
            out.push((Tok::Str(text), start_line));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Name(source[start..i].to_string()), line));
        } else if c.is_ascii_digit() {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric()
                    || bytes[i] == b'.'
                    || ((bytes[i] == b'-' || bytes[i] == b'+')
                        && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P')))
            {
                i += 1;
            }
            out.push((Tok::Other, line));
        } else if let Some(p) = PUNCT.iter().find(|p| source[i..].starts_with(**p)) {
            out.push((Tok::Punct(p), line));
            i += p.len();
        } else {
            out.push((Tok::Other, line));
            i += utf8_len(c);
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The level of a long bracket opening at the start of `bytes` (`[[` is 0, `[==[` is 2).
fn long_bracket(bytes: &[u8]) -> Option<usize> {
    if bytes.first() != Some(&b'[') {
        return None;
    }
    let level = bytes[1..].iter().take_while(|&&b| b == b'=').count();
    (bytes.get(1 + level) == Some(&b'[')).then_some(level)
}

/// Where a long bracket of `level` that opened before `from` ends (just past it), and the
/// newlines inside.
fn long_end(bytes: &[u8], from: usize, level: usize) -> (usize, u32) {
    let mut lines = 0;
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            lines += 1;
        } else if bytes[i] == b']'
            && bytes[i + 1..].iter().take_while(|&&b| b == b'=').count() >= level
            && bytes.get(i + 1 + level) == Some(&b']')
            && bytes[i + 1..i + 1 + level].iter().all(|&b| b == b'=')
        {
            return (i + level + 2, lines);
        }
        i += 1;
    }
    (bytes.len(), lines)
}

/// What an open bracket or block is.
enum Frame {
    /// A table constructor: its index, whether the next token starts a field, and which field
    /// or item is waiting for the constructor its value starts with.
    Table {
        index: usize,
        field_start: bool,
        waiting: Option<Waiting>,
    },
    Paren,
    Block,
}

#[derive(Clone, Copy)]
enum Waiting {
    Field(usize),
    Item(usize),
}

fn build(tokens: &[(Tok, u32)]) -> FileFields {
    let mut constructors: Vec<Constructor> = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (tok, line) = &tokens[i];
        // At the start of a field of the innermost constructor: a key, or a positional item.
        if let Some(Frame::Table {
            index,
            field_start,
            waiting,
        }) = stack.last_mut()
            && *field_start
            && *tok != Tok::Punct("}")
        {
            *field_start = false;
            let keyed = match (tok, tokens.get(i + 1), tokens.get(i + 2), tokens.get(i + 3)) {
                (Tok::Name(key), Some((Tok::Punct("="), _)), _, _) => Some((key.clone(), 2)),
                (
                    Tok::Punct("["),
                    Some((Tok::Str(key), _)),
                    Some((Tok::Punct("]"), _)),
                    Some((Tok::Punct("="), _)),
                ) => Some((key.clone(), 4)),
                _ => None,
            };
            let c = &mut constructors[*index];
            match keyed {
                Some((key, skip)) => {
                    c.fields.push(Field {
                        key,
                        line: *line,
                        value: None,
                    });
                    *waiting = Some(Waiting::Field(c.fields.len() - 1));
                    i += skip;
                    continue;
                }
                None => {
                    c.items.push(None);
                    *waiting = Some(Waiting::Item(c.items.len() - 1));
                }
            }
        }
        match tok {
            Tok::Punct("{") => {
                let call_line = match (i.checked_sub(1).map(|j| &tokens[j]), i.checked_sub(2)) {
                    (Some((Tok::Name(_) | Tok::Punct(")"), l)), _) => Some(*l),
                    (Some((Tok::Punct("("), _)), Some(j)) => match &tokens[j] {
                        (Tok::Name(_), l) => Some(*l),
                        _ => None,
                    },
                    _ => None,
                };
                let index = constructors.len();
                constructors.push(Constructor {
                    open_line: *line,
                    call_line,
                    ..Constructor::default()
                });
                if let Some(Frame::Table {
                    index: parent,
                    waiting,
                    ..
                }) = stack.last_mut()
                    && let Some(w) = waiting.take()
                {
                    match w {
                        Waiting::Field(f) => constructors[*parent].fields[f].value = Some(index),
                        Waiting::Item(n) => constructors[*parent].items[n] = Some(index),
                    }
                }
                stack.push(Frame::Table {
                    index,
                    field_start: true,
                    waiting: None,
                });
            }
            Tok::Punct("}") => {
                while let Some(frame) = stack.pop() {
                    if matches!(frame, Frame::Table { .. }) {
                        break;
                    }
                }
            }
            Tok::Punct("(" | "[") => stack.push(Frame::Paren),
            Tok::Punct(")" | "]") => {
                if matches!(stack.last(), Some(Frame::Paren)) {
                    stack.pop();
                }
            }
            Tok::Punct("," | ";") => {
                if let Some(Frame::Table {
                    field_start,
                    waiting,
                    ..
                }) = stack.last_mut()
                {
                    *field_start = true;
                    *waiting = None;
                }
            }
            Tok::Name(word) => match word.as_str() {
                "function" | "do" | "if" | "repeat" => stack.push(Frame::Block),
                "end" | "until" => {
                    if matches!(stack.last(), Some(Frame::Block)) {
                        stack.pop();
                    }
                }
                _ => {}
            },
            _ => {}
        }
        // Anything but the start of a constructor ends the wait for one: `x = a .. { }` is
        // not a table value.
        if !matches!(tok, Tok::Punct("{"))
            && let Some(Frame::Table { waiting, .. }) = stack.last_mut()
            && !matches!(tok, Tok::Name(_) | Tok::Punct("." | ":" | "(" | ")" | "["))
            && !matches!(tok, Tok::Str(_))
        {
            *waiting = None;
        }
        i += 1;
    }
    FileFields { constructors }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_their_own_lines_and_nested_tables_are_followed() {
        let source = r#"-- a comment { x = 1 }
local s = [[ { y = 2 } ]]
return arena.tournament {
  name = "t", ["max plies"] = 3,
  players = {
    arena.random { name = "a" }, arena.llm {
      name = "m",
      options = { history = 3,
        parser = "x" },
      start = function() local z = 1; a, b = 2, 3 end,
      max_tokens = 10,
    },
    other,
  },
}"#;
        let fields = FileFields::scan(source);
        let t = Place::of_call("t.lua:3", Some(&fields));
        assert!(t.has_constructor());
        assert_eq!(t.key("name").line, 4);
        assert_eq!(t.key("max plies").line, 4);
        assert_eq!(t.key("players").line, 5);
        let m = t.key("players").item(1);
        assert_eq!(m.line, 6);
        assert_eq!(m.key("max_tokens").line, 11);
        assert_eq!(m.path(&["options", "parser"]).line, 9);
        assert!(!m.has_key("z") && !m.has_key("b"), "{m:?}");
        assert_eq!(
            t.key("players").item(2).line,
            5,
            "a name is not a constructor"
        );
        assert_eq!(t.key("nope").line, 3);
        assert_eq!(t.path(&["players", "1", "name"]).line, 6);
        // Two calls on one line: the first is the one a call line names.
        assert_eq!(fields.called_at(6, 0), t.key("players").item(0).constructor);
    }
}
