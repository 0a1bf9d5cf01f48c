//! The book (`docs/src/`), the README and ARCHITECTURE.md hold together: every link between them
//! leads to a file and a heading, every page is in the book's table of contents, the Lua API
//! reference is the rendering of `scripts/types/arena.lua`, and the worked mode of the hook
//! contract page plays as the page says. (The examples are checked in `readme.rs`; the
//! command-line reference is compared with clap's definition by a unit test of the binary.)

use std::{
    collections::BTreeSet,
    path::{Component, Path, PathBuf},
};

use crate::{
    common::{TestDir, local_llm, stderr, stdout},
    readme::documents,
};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of `text` outside fenced code blocks, with their 1-based numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// A heading's anchor as mdBook (and GitHub) make it: lower case, spaces as `-`, and only
/// letters, digits, `-` and `_` kept.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c == ' ' { '-' } else { c })
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// The anchors of the headings of a Markdown text.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, line)| {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            let rest = line.get(hashes..)?;
            (hashes > 0 && rest.starts_with(' ')).then(|| anchor(rest))
        })
        .collect()
}

/// The targets of the inline links and images of a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        out.push(after[..end].to_string());
        rest = &after[end..];
    }
    out
}

/// `path` with `.` and `..` resolved, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_link_between_the_pages_leads_to_a_file_and_a_heading() {
    let book = Path::new("docs/src");
    let mut checked = 0;
    for (doc, text) in documents() {
        for (line, content) in prose(&text) {
            for target in link_targets(content) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, fragment) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    doc.clone()
                } else {
                    normalise(&doc.parent().unwrap().join(file))
                };
                let at = format!("{}:{line}: `{target}`", doc.display());
                assert!(
                    root().join(&path).exists(),
                    "{at}: no file {}",
                    path.display()
                );
                // The built book holds only docs/src: a page's links must stay inside it.
                if doc.starts_with(book) {
                    assert!(path.starts_with(book), "{at}: leaves the book");
                }
                if let Some(fragment) = fragment {
                    let target_text = std::fs::read_to_string(root().join(&path)).unwrap();
                    assert!(
                        anchors(&target_text).contains(fragment),
                        "{at}: {} has no heading `#{fragment}`",
                        path.display()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 50, "{checked} links");
}

#[test]
fn every_page_of_the_book_is_in_its_table_of_contents() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = link_targets(&summary.replace('\n', " "))
        .into_iter()
        .map(|t| Path::new("docs/src").join(t))
        .collect();
    for (doc, _) in documents() {
        if doc.starts_with("docs/src") && !doc.ends_with("SUMMARY.md") {
            assert!(
                listed.contains(&doc),
                "{} is not in SUMMARY.md",
                doc.display()
            );
        }
    }
    for page in &listed {
        assert!(
            root().join(page).exists(),
            "SUMMARY.md lists {}",
            page.display()
        );
    }
}

// ---- The Lua API reference, rendered from the LuaLS stubs ----

/// A `---@field`, `---@param` or `---@return` line split into name, type and description. The
/// type ends at the first space outside brackets, unless the type goes on (`fun(...): T`,
/// `A | B`).
fn split_typed(line: &str) -> (String, String, String) {
    let line = line.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim_start();
    let mut depth = 0i32;
    let mut end = rest.len();
    let chars: Vec<(usize, char)> = rest.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        match c {
            '(' | '{' | '[' | '<' => depth += 1,
            ')' | '}' | ']' | '>' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                let before = rest[..i].trim_end();
                let next = chars[k..].iter().find(|(_, c)| !c.is_whitespace());
                let goes_on =
                    before.ends_with([':', ',', '|']) || next.is_some_and(|(_, c)| *c == '|');
                if !goes_on {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    let ty = rest[..end].trim().to_string();
    let description = rest[end..].trim().to_string();
    (name.to_string(), ty, description)
}

/// Prose for the page: `<` outside code spans written as `&lt;`, so that Markdown does not read
/// `tasks.<task>` as an HTML tag.
fn escape(text: &str) -> String {
    let mut code = false;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '`' => {
                code = !code;
                out.push(c);
            }
            '<' if !code => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

/// One item of the reference: its heading, its description and its list entries.
struct Item {
    heading: String,
    doc: Vec<String>,
    entries: Vec<String>,
}

/// Renders `scripts/types/arena.lua` as the book's Lua API page: each class and alias with its
/// description and fields, each function with its parameters and returns, in the file's order.
fn render_lua_api(stubs: &str) -> String {
    let mut items: Vec<Item> = Vec::new();
    let mut doc: Vec<String> = Vec::new();
    let mut params: Vec<String> = Vec::new();
    let mut in_class = false;
    let entry = |kind: &str, line: &str| {
        let (name, ty, description) = split_typed(line);
        let mut out = format!("- {kind}`{name}`: `{ty}`");
        if !description.is_empty() {
            out.push_str(&format!(" — {}", escape(&description)));
        }
        out
    };
    for line in stubs.lines() {
        let line = line.trim_end();
        if line == "---@meta" {
            continue;
        }
        if let Some(rest) = line.strip_prefix("---@class ") {
            items.push(Item {
                heading: format!("`{}`", rest.trim()),
                doc: std::mem::take(&mut doc),
                entries: Vec::new(),
            });
            in_class = true;
        } else if let Some(rest) = line.strip_prefix("---@field ") {
            let mut field = entry("", rest);
            for note in doc.drain(..) {
                field.push_str(&format!("\n  {}", escape(&note)));
            }
            if let (true, Some(item)) = (in_class, items.last_mut()) {
                item.entries.push(field);
            }
        } else if let Some(rest) = line.strip_prefix("---@alias ") {
            let (name, ty, _) = split_typed(rest);
            let mut item_doc = std::mem::take(&mut doc);
            item_doc.push(format!("`{ty}`"));
            items.push(Item {
                heading: format!("`{name}`"),
                doc: item_doc,
                entries: Vec::new(),
            });
            in_class = false;
        } else if let Some(rest) = line.strip_prefix("---@param ") {
            params.push(entry("parameter ", rest));
        } else if let Some(rest) = line.strip_prefix("---@return ") {
            let (_, ty, description) = split_typed(&format!("_ {rest}"));
            let mut out = format!("- returns `{ty}`");
            if !description.is_empty() {
                out.push_str(&format!(" {}", escape(&description)));
            }
            params.push(out);
        } else if let Some(rest) = line.strip_prefix("---@") {
            panic!("scripts/types/arena.lua: the reference does not render `---@{rest}`");
        } else if let Some(rest) = line.strip_prefix("---") {
            doc.push(rest.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("--") {
            doc.push(rest.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("function ") {
            let signature = rest.trim_end_matches(" end").trim();
            items.push(Item {
                heading: format!("`{signature}`"),
                doc: std::mem::take(&mut doc),
                entries: std::mem::take(&mut params),
            });
            in_class = false;
        } else if line.is_empty() {
            // A comment a blank line parts from what follows is about a section, not about
            // the next item (as LuaLS reads it too).
            doc.clear();
            in_class = false;
        } else if line.ends_with("= {}") {
            in_class = false;
        } else {
            panic!("scripts/types/arena.lua: the reference does not render `{line}`");
        }
    }
    let mut out = String::from(
        "# The Lua API\n\n\
         <!-- Generated from scripts/types/arena.lua by tests/integration/docs.rs: edit the stubs,\n\
         then run `ARENA_BLESS=1 cargo test --test integration lua_api_reference`. -->\n\n\
         Everything a script can call or set, in the order of `scripts/types/arena.lua`, the\n\
         LuaLS stubs that editors read (an `arena init` folder is set up for them). A `?` after\n\
         a field's name marks it optional. A unit test checks that every class here lists\n\
         exactly the fields arena accepts, and this page is rendered from the stubs, so the\n\
         three cannot drift apart.\n",
    );
    for item in items {
        out.push_str(&format!("\n## {}\n\n", item.heading));
        let doc = item.doc.join(" ");
        if !doc.trim().is_empty() {
            out.push_str(&escape(doc.trim()));
            out.push_str("\n\n");
        }
        for e in &item.entries {
            out.push_str(e);
            out.push('\n');
        }
    }
    out.replace("\n\n\n", "\n\n")
}

/// The `---@field` and `---@param` lines of the stubs that say nothing about what they hold, as
/// `scripts/types/arena.lua:LINE: ...` messages. A field is described by the text after its type
/// or by `---` lines right above it (the page renders both); a parameter by the text after its
/// type. Names and types alone do not tell a script's author units, defaults or meaning.
fn undescribed(stubs: &str) -> Vec<String> {
    let mut missing = Vec::new();
    // What the last `---@class` or `function` line named, for the message.
    let mut owner = String::new();
    // Whether `---` prose lines stand right above the current line (reset by every tag).
    let mut prose_above = false;
    let mut params: Vec<(usize, String)> = Vec::new();
    for (i, line) in stubs.lines().enumerate() {
        let number = i + 1;
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("---@class ") {
            owner = rest.split(':').next().unwrap_or(rest).trim().to_string();
            prose_above = false;
        } else if let Some(rest) = line.strip_prefix("---@field ") {
            let (name, _, description) = split_typed(rest);
            if description.is_empty() && !prose_above {
                missing.push(format!(
                    "scripts/types/arena.lua:{number}: field `{name}` of `{owner}` has no description"
                ));
            }
            prose_above = false;
        } else if let Some(rest) = line.strip_prefix("---@param ") {
            let (name, _, description) = split_typed(rest);
            if description.is_empty() {
                params.push((number, name));
            }
            prose_above = false;
        } else if line.starts_with("---@") {
            prose_above = false;
        } else if line.starts_with("---") {
            prose_above = true;
        } else if let Some(rest) = line.strip_prefix("function ") {
            let function = rest.split('(').next().unwrap_or(rest).trim();
            for (number, name) in params.drain(..) {
                missing.push(format!(
                    "scripts/types/arena.lua:{number}: parameter `{name}` of `{function}` has no description"
                ));
            }
            prose_above = false;
        } else {
            prose_above = false;
        }
    }
    missing
}

#[test]
fn every_field_and_parameter_of_the_stubs_is_described() {
    let stubs = std::fs::read_to_string(root().join("scripts/types/arena.lua")).unwrap();
    let missing = undescribed(&stubs);
    assert!(
        missing.is_empty(),
        "{} fields or parameters of the Lua API have a type and no description; write one after \
         the type (units, default, what it does):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn lua_api_reference_is_the_rendering_of_the_stubs() {
    let stubs = std::fs::read_to_string(root().join("scripts/types/arena.lua")).unwrap();
    let missing = undescribed(&stubs);
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    let rendered = render_lua_api(&stubs);
    // Every field of the stubs is on the page.
    for line in stubs.lines() {
        if let Some(rest) = line.strip_prefix("---@field ") {
            let (name, _, _) = split_typed(rest);
            assert!(rendered.contains(&format!("`{name}`")), "{name} is missing");
        }
    }
    let page = root().join("docs/src/reference/lua-api.md");
    if std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&page, &rendered).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        committed == rendered,
        "docs/src/reference/lua-api.md is not the rendering of scripts/types/arena.lua; \
         run `ARENA_BLESS=1 cargo test --test integration lua_api_reference` and review the diff"
    );
}

// ---- The worked mode of the hook contract page ----

/// The calls of a store as `arena export jsonl --what calls` writes them.
fn exported(dir: &TestDir, what: &str) -> Vec<serde_json::Value> {
    let file = format!("{what}.jsonl");
    let out = dir
        .arena()
        .args([
            "export", "jsonl", "--what", what, "--db", "t.db", "--out", &file,
        ])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_to_string(dir.path().join(&file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_hook_contract_mode_builds_its_dialog_as_the_page_says() {
    let Some(url) = local_llm("the_hook_contract_mode_builds_its_dialog_as_the_page_says") else {
        return;
    };
    let example = root().join("examples/coach");
    let dir = TestDir::new();
    let mode = std::fs::read_to_string(example.join("modes/coach.lua")).unwrap();
    dir.write("modes/coach.lua", &mode);
    // The example's tournament, with replies cut to one token so that no answer holds a move:
    // every attempt fails, and the page's dialog follows.
    let mut script = std::fs::read_to_string(example.join("tournament.lua")).unwrap();
    for (from, to) in [
        ("max_tokens = 64", "max_tokens = 1".to_string()),
        ("games_per_pair = 2", "games_per_pair = 1".to_string()),
        ("http://127.0.0.1:8765/v1", url.clone()),
    ] {
        assert!(
            script.contains(from),
            "examples/coach/tournament.lua has no `{from}`"
        );
        script = script.replace(from, &to);
    }
    dir.write("t.lua", &script);
    let out = dir.run("t.lua");
    // The model never moves: the run compared no chess (exit 3).
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );

    let calls = exported(&dir, "calls");
    assert_eq!(
        calls.len(),
        3,
        "max_attempts = 3: three calls, then forfeit"
    );
    let messages =
        |call: &serde_json::Value| call["request"]["messages"].as_array().unwrap().clone();
    let first = messages(&calls[0]);
    assert_eq!(first.len(), 2, "start: a system and a user message");
    assert!(
        first[1]["content"]
            .as_str()
            .unwrap()
            .contains("<move>e2e4</move>")
    );
    for k in 1..3 {
        let (before, now) = (&calls[k - 1], &calls[k]);
        // Cut at its one token before a move: `cut_off`, whatever the mode said (`no_move_found`).
        assert_eq!(before["outcome"], "cut_off");
        let feedback = before["outcome_detail"].as_str().unwrap();
        assert!(
            feedback.contains(&format!("You have {} more attempt(s).", 3 - k)),
            "{feedback}"
        );
        assert!(feedback.contains(" Legal moves: "), "{feedback}");
        // The retry's request is the earlier one, its reply and the feedback.
        let mut expected = messages(before);
        expected.push(serde_json::json!({"role": "assistant", "content": before["reply_text"]}));
        expected.push(serde_json::json!({"role": "user", "content": feedback}));
        let got = messages(now);
        let strip = |ms: &[serde_json::Value]| -> Vec<(String, String)> {
            ms.iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap().to_string(),
                        m["content"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(strip(&got), strip(&expected), "call {}", k + 1);
    }
    let games = exported(&dir, "games");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["termination"], "forfeit", "{}", games[0]);
}
