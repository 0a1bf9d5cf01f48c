//! The examples of the README and of the book (`docs/src/`) work: every Lua example passes
//! `arena check` (a few fields or one player inside a minimal tournament; a block included from
//! a file with mdBook's `{{#include}}` is checked in place; a block marked `lua,fragment` is not
//! checked), and every `arena ...` command line in their shell blocks parses.

use std::path::{Path, PathBuf};

use crate::common::{TestDir, stderr, stdout, stockfish};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The documents whose examples are checked: the README, ARCHITECTURE.md and every page of the
/// book, as (path relative to the repository, text).
pub fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    let mut pending = vec![root().join("docs/src")];
    let mut pages = Vec::new();
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    pages.sort();
    paths.extend(pages);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(root().join(&p)).unwrap();
            (p, text)
        })
        .collect()
}

/// The file a block's body includes with mdBook's `{{#include path}}`, if that is all it holds.
fn included(doc: &Path, body: &str) -> Option<PathBuf> {
    let path = body
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    let dir = root().join(doc).parent().unwrap().to_path_buf();
    Some(dir.join(path))
}

/// The fenced blocks of `text` as (language, first line number, body).
fn blocks(text: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("```") {
            match open.take() {
                Some(block) => out.push(block),
                None => open = Some((rest.trim().to_string(), i + 2, String::new())),
            }
        } else if let Some((_, _, body)) = open.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// A Lua example as a whole script: a fragment of tournament fields or of players goes inside a
/// minimal tournament.
fn as_script(body: &str) -> String {
    if body.contains("return arena.") {
        return body.to_string();
    }
    let players = "arena.random { name = \"r1\" }, arena.random { name = \"r2\" },";
    if body.trim_start().starts_with("arena.") {
        format!(
            "return arena.tournament {{\n  name = \"readme\",\n  players = {{ {players}\n{body}\n  }},\n}}\n"
        )
    } else {
        format!(
            "return arena.tournament {{\n  name = \"readme\",\n{body}\n  players = {{ {players} }},\n}}\n"
        )
    }
}

/// Runs `arena check` on the script `path`, run from `dir`. The evaluation examples name their
/// data under `$ARENA_REFERENCE_DATA/...`, a placeholder: with the variable unset, `arena check`
/// says it cannot open such a data set and checks the rest.
fn check(dir: &Path, path: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
        .current_dir(dir)
        .args(["check".as_ref(), path.as_os_str()])
        .env_remove("ARENA_REFERENCE_DATA")
        .output()
        .expect("arena runs")
}

/// An included Lua file is a tournament (checked as it is) or a module of one: a mode, prompt,
/// parser or format under a folder whose parent holds the tournament that uses it.
fn check_included(doc: &Path, line: usize, file: &Path) {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{}:{line}: {}: {e}", doc.display(), file.display()));
    let script = if text.contains("return arena.") {
        file.to_path_buf()
    } else {
        let folder = file.parent().unwrap();
        assert!(
            ["modes", "prompts", "parsers", "formats"]
                .iter()
                .any(|f| folder.ends_with(f)),
            "{}:{line}: {} is neither a tournament nor a module of one",
            doc.display(),
            file.display()
        );
        folder.parent().unwrap().join("tournament.lua")
    };
    let out = check(script.parent().unwrap(), &script);
    assert!(
        out.status.success(),
        "{}:{line}: {} fails `arena check`:\n{}{}",
        doc.display(),
        script.display(),
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn every_lua_example_in_the_readme_passes_check() {
    if !stockfish("every_lua_example_in_the_readme_passes_check") {
        return;
    }
    let root = root();
    let mut checked = 0;
    for (doc, text) in documents() {
        for (lang, line, body) in blocks(&text) {
            if lang != "lua" {
                assert!(
                    !lang.starts_with("lua") || lang == "lua,fragment",
                    "{}:{line}: a Lua block is `lua` or `lua,fragment`, not `{lang}`",
                    doc.display()
                );
                continue;
            }
            if let Some(file) = included(&doc, &body) {
                check_included(&doc, line, &file);
                checked += 1;
                continue;
            }
            let dir = TestDir::new();
            // The books the examples name, beside the script as the README says.
            for book in ["2moves_v1.epd", "8moves_v3.pgn"] {
                std::fs::copy(root.join("books").join(book), dir.path().join(book)).unwrap();
                dir.write(&format!("books/{book}"), "");
                std::fs::copy(
                    root.join("books").join(book),
                    dir.path().join("books").join(book),
                )
                .unwrap();
            }
            dir.write("t.lua", &as_script(&body));
            let out = check(dir.path(), Path::new("t.lua"));
            assert!(
                out.status.success(),
                "{}:{line}: the example fails `arena check`:\n{}{}\n{}",
                doc.display(),
                stdout(&out),
                stderr(&out),
                as_script(&body)
            );
            checked += 1;
        }
    }
    assert!(checked >= 9, "{checked} Lua examples");
}

/// Splits a shell command line into words (double quotes group, `#` starts a comment).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '#' if !quoted && !any && word.is_empty() => break,
            c if c.is_whitespace() && !quoted => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn every_arena_command_in_the_readme_parses() {
    let mut parsed = 0;
    for (doc, text) in documents() {
        for (lang, line, body) in blocks(&text) {
            if !matches!(lang.as_str(), "sh" | "bash" | "") {
                continue;
            }
            for (i, text) in body.lines().enumerate() {
                let args = words(text);
                if args.first().map(String::as_str) != Some("arena") {
                    continue;
                }
                // `--help` ends the parse after every given word was read: an unknown command or
                // flag, or a value of the wrong type, is still an error (exit 2).
                let out = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
                    .args(&args[1..])
                    .arg("--help")
                    .output()
                    .expect("arena runs");
                assert!(
                    out.status.success(),
                    "{}:{}: `{text}` does not parse: {}",
                    doc.display(),
                    line + i,
                    stderr(&out)
                );
                parsed += 1;
            }
        }
    }
    assert!(parsed >= 20, "{parsed} command lines");
}
