//! The README's examples work: every Lua example passes `arena check` (a fragment, such as one
//! field or one player, inside a minimal tournament), and every `arena ...` command line in its
//! shell blocks parses.

use std::path::Path;

use crate::common::{TestDir, stderr, stdout, stockfish};

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
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

#[test]
fn every_lua_example_in_the_readme_passes_check() {
    if !stockfish("every_lua_example_in_the_readme_passes_check") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for (lang, line, body) in blocks(&readme()) {
        if lang != "lua" {
            continue;
        }
        let dir = TestDir::new();
        // The books the examples name, beside the script and in its `books/` folder (the first
        // example runs from the repository, where they are under books/).
        std::fs::create_dir_all(dir.path().join("books")).unwrap();
        for book in ["2moves_v1.epd", "8moves_v3.pgn"] {
            for to in [dir.path().join(book), dir.path().join("books").join(book)] {
                std::fs::copy(root.join("books").join(book), to).unwrap();
            }
        }
        dir.write("t.lua", &as_script(&body));
        let out = dir
            .arena()
            .args(["check", "t.lua"])
            .env("ARENA_REFERENCE_DATA", "/nonexistent")
            .output()
            .expect("arena runs");
        assert!(
            out.status.success(),
            "README.md:{line}: the example fails `arena check`:\n{}{}\n{}",
            stdout(&out),
            stderr(&out),
            as_script(&body)
        );
        checked += 1;
    }
    assert!(checked >= 6, "{checked} Lua examples");
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
    for (lang, line, body) in blocks(&readme()) {
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
                "README.md:{}: `{text}` does not parse: {}",
                line + i,
                stderr(&out)
            );
            parsed += 1;
        }
    }
    assert!(parsed >= 10, "{parsed} command lines");
}
