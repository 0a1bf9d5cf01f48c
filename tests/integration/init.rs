//! `arena init`: what it writes passes `arena check` and runs as it is, and an ejected mode is
//! what the games use.

use crate::common::{TestDir, fake_openai, open_store, stderr, stdout, stockfish};

/// Every LLM request stored for the tournament `first`, as JSON text.
fn stored_requests(dir: &TestDir) -> Vec<String> {
    let store = open_store(&dir.db());
    let t = store
        .find_tournament("first")
        .unwrap()
        .expect("the tournament is stored");
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6, "three players, two games a pair");
    games
        .iter()
        .flat_map(|g| (0..=g.ply_count).flat_map(|p| store.llm_calls(g.id, p).unwrap()))
        .map(|c| c.call.request_json)
        .collect()
}

fn init(dir: &TestDir, url: &str, extra: &[&str]) {
    let out = dir
        .arena()
        .args(["init", ".", "--model", url])
        .args(extra)
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}

fn check_and_run(dir: &TestDir) {
    let out = dir
        .arena()
        .args(["check", "tournament.lua"])
        .output()
        .expect("arena runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let out = dir.run("tournament.lua");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn init_writes_a_tournament_that_checks_and_runs_as_it_is() {
    if !stockfish("init_writes_a_tournament_that_checks_and_runs_as_it_is") {
        return;
    }
    let fake = fake_openai(0);
    let dir = TestDir::new();
    init(&dir, &fake.url, &[]);
    let script = std::fs::read_to_string(dir.path().join("tournament.lua")).unwrap();
    assert!(script.contains("nodes = 1000") && !script.contains("[\"Skill Level\"]"));
    assert!(script.contains("arena.random"), "{script}");
    let luarc = std::fs::read_to_string(dir.path().join(".luarc.json")).unwrap();
    let luarc: serde_json::Value = serde_json::from_str(&luarc).expect(".luarc.json is JSON");
    assert_eq!(luarc["workspace.library"][0], "types");
    let stubs = std::fs::read_to_string(dir.path().join("types/arena.lua")).unwrap();
    assert!(
        stubs.starts_with("---@meta"),
        "the API stubs are written beside the script"
    );
    check_and_run(&dir);
    let requests = stored_requests(&dir);
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| !r.contains("EJECTED-AND-EDITED")));

    // A second init into the same folder refuses to overwrite the script.
    let out = dir
        .arena()
        .args(["init", ".", "--model", &fake.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn an_ejected_mode_is_what_the_games_use() {
    if !stockfish("an_ejected_mode_is_what_the_games_use") {
        return;
    }
    let fake = fake_openai(0);
    let dir = TestDir::new();
    init(&dir, &fake.url, &["--eject", "blitz"]);
    for file in [
        "modes/blitz.lua",
        "prompts/blitz.lua",
        "parsers/move.lua",
        "prompts/feedback.lua",
    ] {
        assert!(dir.path().join(file).is_file(), "{file} is ejected");
    }
    let prompt = dir.path().join("prompts/blitz.lua");
    let text = std::fs::read_to_string(&prompt).unwrap();
    let edited = text.replace(
        "\"You play chess as \"",
        "\"EJECTED-AND-EDITED. You play chess as \"",
    );
    assert_ne!(
        text, edited,
        "the ejected prompt has the line the test edits"
    );
    std::fs::write(&prompt, edited).unwrap();
    check_and_run(&dir);
    let requests = stored_requests(&dir);
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|r| r.contains("EJECTED-AND-EDITED")),
        "every stored request carries the edited prompt"
    );
    let out = dir
        .arena()
        .args(["init", "other", "--eject", "blits"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no built-in play mode `blits`"),
        "{}",
        stderr(&out)
    );
}
