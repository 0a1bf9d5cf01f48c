//! An engine player that crashes makes the game it was playing void (termination `engine_failure`:
//! a harness fault is not chess), the event is stored, the next game gets a fresh process, and the
//! next run plays the void game's slot again.

use std::path::Path;

use arena::store::GameStatus;

use crate::common::{TestDir, open_store, stderr};

#[test]
fn a_crashing_engine_voids_its_game_and_is_restarted() {
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
    // Exit 1: the void game is to be played again.
    assert!(out.status.code() == Some(1), "{}", stderr(&out));
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
        assert!(g.is_void(), "{g:?}");
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

    // The next run plays every void slot again, from its opening and with its colours. This
    // fake engine's later processes answer `e2e4` to everything, an illegal move (another
    // harness fault) once e2e4 is gone, so the replays are void too, and replayed in turn.
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let games = store.games(t.id).unwrap();
    for g in &crashed {
        let replay = games.iter().find(|r| r.replay_of == Some(g.id)).unwrap();
        assert_eq!(replay.slot, g.index, "{replay:?}");
        assert_eq!((&replay.white, &replay.black), (&g.white, &g.black));
        assert!(replay.is_harness_void(), "{replay:?}");
    }
}

/// The engine players of a tournament start side by side: each fixture process waits for its
/// peer's process to exist before it answers `uci`, and gives up after 5 s (under the 10 s start-up
/// timeout), so started one after the other the first never answers and the run fails.
#[test]
fn engine_players_start_side_by_side() {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("skipped: one core, so arena starts one engine at a time");
        return;
    }
    let dir = TestDir::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/rendezvous.py");
    let state = dir.path().join("engine-state");
    std::fs::create_dir_all(&state).unwrap();
    let engine = |name: &str, peer: &str| {
        format!(
            r#"arena.engine {{ name = "{name}", command = "{}", args = {{ "{}", "{name}", "{peer}" }}, limits = {{ nodes = 100 }} }}"#,
            fixture.display(),
            state.display()
        )
    };
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "side-by-side", games_per_pair = 1, max_plies = 1, -- the fixture always plays e2e4
  players = {{ {}, {} }},
}}"#,
            engine("a", "b"),
            engine("b", "a")
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("side-by-side").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 1, "{games:?}");
    assert_eq!(games[0].status, GameStatus::Finished, "{games:?}");
}
