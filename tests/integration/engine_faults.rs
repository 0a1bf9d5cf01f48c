//! An engine player that crashes loses the game it was playing (termination `engine_failure`), the
//! event is stored, and the next game gets a fresh process.

use std::path::Path;

use arena::store::GameStatus;

use crate::common::{TestDir, open_store, stderr};

#[test]
fn a_crashing_engine_loses_its_game_and_is_restarted() {
    let dir = TestDir::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/crash_after_go.py");
    let state = dir.path().join("engine-state");
    // The fixture's first process crashes on its second `go`: the first is arena's one-node check
    // at start-up (players.rs), the second is the first move of a game.
    std::fs::create_dir_all(&state).unwrap();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "faults", games_per_pair = 2, max_plies = 40,
  players = {{
    arena.engine {{ name = "crashy", command = "{}", args = {{ "{}", "2" }}, limits = {{ nodes = 100 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fixture.display(),
            state.display()
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.code() == Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("faults").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert!(games.iter().all(|g| g.status == GameStatus::Finished));
    let crashed: Vec<_> = games
        .iter()
        .filter(|g| g.termination.as_deref() == Some("engine_failure"))
        .collect();
    assert!(!crashed.is_empty(), "{games:?}");
    for g in &crashed {
        let loser_is_white = g.white == "crashy";
        assert_eq!(
            g.result.as_deref(),
            Some(if loser_is_white { "0-1" } else { "1-0" })
        );
        assert!(
            g.reason.as_deref().unwrap_or("").contains("crashy"),
            "{g:?}"
        );
    }
    let events = store.events(t.id).unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.kind == "engine_failure" && e.message.contains("crashy")),
        "{events:?}"
    );
    // The second game ran on a replacement process.
    let starts: u32 = std::fs::read_to_string(state.join("starts"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(starts >= 2, "{starts} engine starts");
}
