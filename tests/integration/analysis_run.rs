//! Engine analysis as part of `arena run`: every ply of every finished game analysed once, beside
//! play or after it, across a `kill -9`; the papers' columns under the standings and in the
//! leaderboard; engine faults retried and stored as events; formats see `state.analysis`.

use std::{path::Path, time::Duration};

use arena::store::GameStatus;
use rusqlite::Connection;

use crate::common::{
    TestDir, llm_player, local_llm, open_store, run_then_kill, stderr, stdout, stockfish,
};

/// Checks that every finished game of `name` has exactly one analysis row per ply and is marked
/// analysed; returns the number of finished games.
fn assert_fully_analysed(db: &Path, name: &str) -> usize {
    let store = open_store(db);
    let t = store.find_tournament(name).unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    for g in games.iter().filter(|g| g.status == GameStatus::Finished) {
        let rows = store.ply_analyses(g.id).unwrap();
        let plies: Vec<u32> = rows.iter().map(|r| r.ply).collect();
        assert_eq!(
            plies,
            (0..g.ply_count).collect::<Vec<_>>(),
            "game {} has one analysis per ply",
            g.index
        );
        assert!(store.game_analysis(g.id).unwrap().is_some(), "{g:?}");
    }
    // The store's key forbids duplicates; count rows directly to be sure nothing slipped by.
    let conn = Connection::open(db).unwrap();
    let (rows, distinct): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), COUNT(DISTINCT game_id || ':' || ply) FROM ply_analysis",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(rows, distinct);
    let failures: Vec<_> = store
        .events(t.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind.starts_with("analysis_") && e.level == "error")
        .collect();
    assert!(failures.is_empty(), "{failures:?}");
    games
        .iter()
        .filter(|g| g.status == GameStatus::Finished)
        .count()
}

#[test]
fn analysis_beside_play_survives_a_kill_and_shows_the_papers_columns() {
    if !stockfish("analysis_beside_play_survives_a_kill_and_shows_the_papers_columns") {
        return;
    }
    let dir = TestDir::new();
    // Stockfish thinks 40 ms a move, so the run lasts long enough to be killed in the middle.
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "ar", games_per_pair = 6, max_plies = 60, seed = 3, concurrency = 1,
  analysis = { depth = 6, processes = 1 },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 40 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    // Kill once a game has been analysed beside play, while games are still to be played.
    run_then_kill(&dir, "ar", Duration::from_secs(300), |store, t| {
        store.analysed_games(t).map_or(0, |g| g.len()) >= 1
    });
    {
        let store = open_store(&dir.db());
        let t = store.find_tournament("ar").unwrap().unwrap();
        let games = store.games(t.id).unwrap();
        assert!(
            games.iter().any(|g| g.status != GameStatus::Finished),
            "the kill should land before the last game"
        );
    }

    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let games = assert_fully_analysed(&dir.db(), "ar");
    assert_eq!(games, 6);
    let progress = stderr(&out);
    assert!(
        progress.contains(&format!("analysed {games}/{games} games")),
        "{progress}"
    );

    // The analysis table follows the standings.
    let printed = stdout(&out);
    let standings = printed.find("score %").expect("the standings");
    let analysis = printed.find("top moves %").expect("the analysis table");
    assert!(standings < analysis, "{printed}");
    for column in [
        "legal moves %",
        "blunder %",
        "best %",
        "lichess ACPL",
        "lichess ??",
        "endgame blunder %",
    ] {
        assert!(printed.contains(column), "{column}: {printed}");
    }

    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = crate::common::json_rows(&json, "analysis");
    let table = &json;
    let column = |name: &str, column: &str| {
        let row = rows
            .iter()
            .find(|r| r["player"] == name)
            .unwrap_or_else(|| panic!("{name} in {table}"));
        row[column].as_f64().unwrap()
    };
    assert!(
        column("sf", "top_moves_pct") > column("rnd", "top_moves_pct"),
        "{table}"
    );
    // (Blunder rates do not separate them: a random mover is lost so early that its Win% has no
    // 30 points left to drop.)
    assert!(
        column("sf", "lichess_acpl") < column("rnd", "lichess_acpl"),
        "{table}"
    );

    // A third run finds nothing to play or analyse and leaves the rows as they are.
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(assert_fully_analysed(&dir.db(), "ar"), 6);
}

#[test]
fn a_crashing_analysis_engine_is_retried_and_the_event_stored() {
    let dir = TestDir::new();
    let engine =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/crash_after_go.py");
    let state = dir.path().join("engine-state");
    std::fs::create_dir_all(&state).unwrap();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "crash", games_per_pair = 1, max_plies = 6, seed = 1,
  analysis = {{ engine = "{}", args = {{ "{}", "3" }}, depth = 1, multipv = 1, processes = 1 }},
  players = {{ arena.random {{ name = "a" }}, arena.random {{ name = "b", seed = 1 }} }},
}}"#,
            engine.display(),
            state.display()
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(assert_fully_analysed(&dir.db(), "crash"), 1);
    let store = open_store(&dir.db());
    let t = store.find_tournament("crash").unwrap().unwrap();
    let restarts: Vec<_> = store
        .events(t.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "analysis_engine_restart")
        .collect();
    assert_eq!(restarts.len(), 1, "{restarts:?}");
    assert!(restarts[0].message.contains("1 time(s)"), "{restarts:?}");
    let starts = std::fs::read_to_string(state.join("starts")).unwrap();
    assert_eq!(
        starts.trim(),
        "2",
        "one fresh process replaced the crashed one"
    );
}

#[test]
fn analysis_after_play_feeds_the_next_runs_format() {
    if !stockfish("analysis_after_play_feeds_the_next_runs_format") {
        return;
    }
    let dir = TestDir::new();
    // Round 1 is one game. A later call adds a second round only once the format sees both
    // players' analysis and Stockfish ahead on top moves; without `during_play` the analysis runs
    // after the last game, so only the second run can see it.
    dir.write(
        "formats/by_analysis.lua",
        r#"local M = {}
function M.pairings(state)
  if #state.games == 0 then
    assert(state.analysis == nil, "nothing is analysed yet")
    return { { white = "sf", black = "rnd", round = 1 } }
  end
  if #state.games >= 2 or state.analysis == nil then
    return nil
  end
  local sf, rnd = state.analysis.sf, state.analysis.rnd
  assert(sf.plies > 0 and rnd.plies > 0, "both players have analysed plies")
  assert(sf.top_move_rate > rnd.top_move_rate, "stockfish finds more top moves")
  assert(sf.blunder_rate >= 0 and sf.acpl >= 0 and sf.legal_move_rate == nil)
  return { { white = "rnd", black = "sf", round = 2 } }
end
return M"#,
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "after", format = "by_analysis", max_plies = 40, seed = 4,
  analysis = { depth = 6, processes = 1, during_play = false, win_model = "chessarena" },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { nodes = 2000 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(assert_fully_analysed(&dir.db(), "after"), 1);
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(assert_fully_analysed(&dir.db(), "after"), 2);
    let store = open_store(&dir.db());
    let t = store.find_tournament("after").unwrap().unwrap();
    let game = store.games(t.id).unwrap().pop().unwrap();
    assert_eq!((game.round, game.white.as_str()), (2, "rnd"));
    assert!(
        store
            .ply_analyses(game.id)
            .unwrap()
            .iter()
            .all(|a| a.win_model == "chessarena" && a.limits_key == "depth=6 multipv=3")
    );
}

#[test]
fn arena_check_rejects_impossible_analysis_settings() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "bad",
  analysis = { depth = 10, nodes = 1000, multipv = 0, win_model = "lichess" },
  players = { arena.random { name = "a" }, arena.random { name = "b" } },
}"#,
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let errors = stderr(&out);
    assert!(
        errors.contains("t.lua:3: analysis: give one of `depth`, `nodes` and `movetime_ms`"),
        "{errors}"
    );
    assert!(errors.contains("`multipv` must be between 1"), "{errors}");

    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "bad", analysis = { depht = 10 },
  players = { arena.random { name = "a" }, arena.random { name = "b" } },
}"#,
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("depht"), "{}", stderr(&out));
}

#[test]
fn the_local_models_moves_are_classified() {
    let Some(url) = local_llm("the_local_models_moves_are_classified") else {
        return;
    };
    if !stockfish("the_local_models_moves_are_classified") {
        return;
    }
    let dir = TestDir::new();
    let model = llm_player(
        &url,
        "smol",
        "legal_moves = true, max_attempts = 3, grammar = true",
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "llm", games_per_pair = 2, max_plies = 8, seed = 9, concurrency = 1,
  analysis = {{ depth = 6, processes = 1 }},
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(assert_fully_analysed(&dir.db(), "llm"), 2);
    let store = open_store(&dir.db());
    let t = store.find_tournament("llm").unwrap().unwrap();
    let mut classified = 0;
    for g in store.games(t.id).unwrap() {
        let plies = store.plies(g.id).unwrap();
        for a in store.ply_analyses(g.id).unwrap() {
            if plies[a.ply as usize].player == "smol" {
                assert!(
                    [
                        "best",
                        "good",
                        "inaccuracy",
                        "mistake",
                        "blunder",
                        "checkmate_delivered",
                        "draw_delivered",
                        "move_limit_reached"
                    ]
                    .contains(&a.classification.as_str()),
                    "{a:?}"
                );
                classified += 1;
            }
        }
    }
    assert!(
        classified > 0,
        "the model moved and its moves were classified"
    );
    let summary = store.analysis_summary(t.id).unwrap();
    let smol = summary.iter().find(|r| r.player == "smol").unwrap();
    assert_eq!(smol.plies, classified);
    // The model's row carries its legal-move rate; the random mover's has none.
    let printed = stdout(&out);
    let row = printed
        .lines()
        .skip_while(|l| !l.contains("top moves %"))
        .find(|l| l.split_whitespace().nth(1) == Some("smol"))
        .unwrap_or_else(|| panic!("{printed}"));
    assert_ne!(row.split_whitespace().nth(3), Some("-"), "{row}");
}

#[test]
fn a_missing_analysis_engine_does_not_stop_play() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "noengine", games_per_pair = 2, max_plies = 6,
  analysis = { engine = "no-such-chess-engine", depth = 4 },
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 1 } },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("`arena analyze`"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("top moves %"), "{}", stdout(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("noengine").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert!(games.iter().all(|g| g.status == GameStatus::Finished));
    assert!(store.analysed_games(t.id).unwrap().is_empty());
    let events = store.events(t.id).unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.kind == "analysis_unavailable" && e.message.contains("no-such-chess-engine")),
        "{events:?}"
    );
}
