//! The other UCI engines Debian packages play as arena players: each one plays a short game with
//! each colour against the random mover, and every one of its moves is a legal engine move (no
//! engine failure, no timeout). An engine that is not installed is skipped with a note.
//!
//! Limits differ by engine on purpose: Toga II and GNU Chess ignore `go nodes` (they search until
//! told to stop), so they get a depth limit; the Stockfish family, Ethereal and Glaurung honour nodes.

use crate::common::{TestDir, open_store, stderr};

/// Plays `engine` (a Lua `arena.engine{}` body without the name) against the random mover and
/// checks the games, or skips when `command` is not installed.
fn plays_against_random(test: &str, command: &str, engine: &str) {
    if arena::engine::locate::for_test(test, command).is_none() {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "debian", games_per_pair = 2, max_plies = 16, seed = 3, concurrency = 2,
  players = {{
    arena.engine {{ name = "engine", command = "{command}", {engine} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{command}: {}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("debian").unwrap().expect("stored");
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 2, "{command}: {games:?}");
    for g in &games {
        assert_ne!(
            g.termination.as_deref(),
            Some("engine_failure"),
            "{command}: {:?}",
            g.reason
        );
        assert!(g.result.is_some(), "{command}: game {} unfinished", g.index);
        let engine_plies = store
            .plies(g.id)
            .unwrap()
            .into_iter()
            .filter(|p| p.player == "engine")
            .count();
        // Eight plies each unless the game ended early, which a random mover rarely allows
        // against any engine in under eight moves, but is not an error either.
        assert!(
            engine_plies > 0,
            "{command}: game {} has no engine move",
            g.index
        );
    }
}

#[test]
fn fairy_stockfish_plays() {
    plays_against_random(
        "fairy_stockfish_plays",
        "fairy-stockfish",
        r#"options = { Threads = 1, Hash = 16 }, limits = { nodes = 2000 }"#,
    );
}

#[test]
fn ethereal_plays() {
    plays_against_random(
        "ethereal_plays",
        "ethereal-chess",
        r#"options = { Threads = 1, Hash = 16 }, limits = { nodes = 2000 }"#,
    );
}

#[test]
fn glaurung_plays() {
    plays_against_random(
        "glaurung_plays",
        "glaurung",
        r#"options = { Hash = 16 }, limits = { nodes = 2000 }"#,
    );
}

#[test]
fn toga2_plays() {
    plays_against_random(
        "toga2_plays",
        "toga2",
        r#"options = { Hash = 16 }, limits = { depth = 4 }"#,
    );
}

#[test]
fn gnuchess_plays() {
    plays_against_random(
        "gnuchess_plays",
        "gnuchess",
        r#"args = { "--uci" }, limits = { depth = 3 }"#,
    );
}

#[test]
fn an_engine_that_ignores_nodes_is_refused_before_any_game() {
    let test = "an_engine_that_ignores_nodes_is_refused_before_any_game";
    if arena::engine::locate::for_test(test, "toga2").is_none() {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "debian", games_per_pair = 2, max_plies = 16,
  players = {
    arena.engine { name = "toga", command = "toga2", limits = { nodes = 1000 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("t.lua:4") && err.contains("ignores the nodes limit"),
        "{err}"
    );
}
