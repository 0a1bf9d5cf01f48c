//! Harness faults are not chess: a real Stockfish killed in the middle of a game makes that game
//! void. The tournament then rates exactly as the same tournament without that game; the next run
//! plays the slot again (same pairing, opening and colours) and the tournament rates exactly as
//! one that no fault interrupted, with the void attempt kept for the record.

use std::path::Path;

use arena::{
    leaderboard,
    rating::glicko::Compat,
    store::{GameRow, Store, current_attempts},
};

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

/// Stockfish at fixed nodes with one thread (deterministic), another at fewer nodes and a seeded
/// random mover, two games a pair from one book opening. `sf` is started by `command`.
fn script(command: &str) -> String {
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/books/2moves_v1.epd");
    format!(
        r#"return arena.tournament {{
  name = "faults", games_per_pair = 2, max_plies = 80, seed = 5,
  openings = {{ file = "{book}", count = 1 }},
  players = {{
    arena.engine {{ name = "sf", {command}, options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 200 }} }},
    arena.random {{ name = "rnd", seed = 3 }},
    arena.engine {{ name = "sf-n1", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 1 }} }},
  }},
}}"#
    )
}

fn games(store: &Store) -> Vec<GameRow> {
    let t = store.find_tournament("faults").unwrap().unwrap();
    store.games(t.id).unwrap()
}

fn moves(store: &Store, game: &GameRow) -> Vec<String> {
    store
        .plies(game.id)
        .unwrap()
        .into_iter()
        .map(|p| p.uci)
        .collect()
}

/// The Glicko-1 table, the Bradley–Terry tables and each player's W/D/L, as text and numbers.
type Rated = (String, String, Vec<(String, u32, u32, u32)>);

/// The Glicko-1 and Bradley–Terry tables and the standings' W/D/L of `games` (the ratings see
/// each slot's current attempt, as the leaderboard does).
fn rated(store: &Store, games: &[GameRow]) -> Rated {
    let t = store.find_tournament("faults").unwrap().unwrap();
    let players = store.players(t.id).unwrap();
    let rows: Vec<GameRow> = current_attempts(games).into_iter().cloned().collect();
    let options = leaderboard::Options {
        show_all: true,
        ..leaderboard::Options::default()
    };
    let glicko = leaderboard::ratings(&rows, &players, &options);
    let bt = leaderboard::bradley_terry::tables(&rows, &options.bradley_terry);
    let mut wdl = std::collections::BTreeMap::<String, (u32, u32, u32)>::new();
    for g in rows.iter().filter(|g| !g.is_void()) {
        let (w, b) = match g.result.as_deref() {
            Some("1-0") => ((1, 0, 0), (0, 0, 1)),
            Some("0-1") => ((0, 0, 1), (1, 0, 0)),
            Some("1/2-1/2") => ((0, 1, 0), (0, 1, 0)),
            _ => continue,
        };
        for (name, (a, d, l)) in [(&g.white, w), (&g.black, b)] {
            let e = wdl.entry(name.clone()).or_default();
            *e = (e.0 + a, e.1 + d, e.2 + l);
        }
    }
    let text = |t: &arena::table::Table| format!("{:?}", t.rows);
    (
        text(&glicko),
        bt.iter().map(text).collect::<Vec<_>>().join("\n"),
        wdl.into_iter().map(|(p, (w, d, l))| (p, w, d, l)).collect(),
    )
}

fn standings(store: &Store) -> Vec<(String, u32, u32, u32, u32)> {
    let t = store.find_tournament("faults").unwrap().unwrap();
    let mut rows: Vec<_> = store
        .standings(t.id)
        .unwrap()
        .into_iter()
        .map(|r| (r.player, r.wins, r.draws, r.losses, r.voids))
        .collect();
    rows.sort();
    rows
}

#[test]
fn an_engine_killed_mid_game_voids_the_game_and_its_slot_is_replayed() {
    if !stockfish("an_engine_killed_mid_game_voids_the_game_and_its_slot_is_replayed") {
        return;
    }
    // The same tournament, uninterrupted.
    let clean = TestDir::new();
    clean.write("t.lua", &script(r#"command = "stockfish""#));
    let out = clean.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let clean_store = open_store(&clean.db());
    let clean_games = games(&clean_store);
    assert_eq!(clean_games.len(), 6);

    // Stockfish killed at its seventh `go`: the start-up check, then six moves of game 1.
    let dir = TestDir::new();
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/engines/kill_stockfish_after.sh");
    let marker = dir.path().join("killed");
    dir.write(
        "t.lua",
        &script(&format!(
            r#"command = "{}", args = {{ "{}", "7" }}"#,
            wrapper.display(),
            marker.display()
        )),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(marker.exists(), "the wrapper killed Stockfish");
    assert!(
        stderr(&out).contains("played again when you run the same command again"),
        "{}",
        stderr(&out)
    );
    let store = open_store(&dir.db());
    let first = games(&store);
    assert_eq!(first.len(), 6, "nothing is replayed in the run that voided");
    let void: Vec<&GameRow> = first.iter().filter(|g| g.is_void()).collect();
    assert_eq!(void.len(), 1, "{first:?}");
    let void = void[0].clone();
    assert_eq!(void.termination.as_deref(), Some("engine_failure"));
    assert!(void.is_harness_void());
    assert!(
        void.reason.as_deref().unwrap_or("").contains("`sf`"),
        "{void:?}"
    );
    assert!(void.ply_count > 2, "killed mid-game: {void:?}");

    // Every other game is the clean run's game, move for move (the engines are deterministic),
    // so "the same tournament without that game" is the clean one minus that slot.
    for g in first.iter().filter(|g| g.id != void.id) {
        let twin = &clean_games[g.index as usize - 1];
        assert_eq!(
            moves(&store, g),
            moves(&clean_store, twin),
            "game {}",
            g.index
        );
    }
    let without: Vec<GameRow> = clean_games
        .iter()
        .filter(|g| g.index != void.index)
        .cloned()
        .collect();
    assert_eq!(rated(&store, &first), rated(&clean_store, &without));
    let with_it = rated(&clean_store, &clean_games);
    assert_ne!(
        rated(&store, &first).0,
        with_it.0,
        "the void game would have moved the ratings"
    );
    // The leaderboard lists it apart, and the standings count it as void only.
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    assert!(board.status.success(), "{}", stderr(&board));
    let json: serde_json::Value = serde_json::from_str(&stdout(&board)).unwrap();
    let listed = crate::common::json_rows(&json, "faults · void games");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["game"], void.index);
    assert_eq!(listed[0]["termination"], "engine_failure");
    assert_eq!(listed[0]["replayed_by"], "the next run");
    assert!(listed[0]["error"].as_str().unwrap().contains("sf"));
    let voids: u32 = standings(&store).iter().map(|r| r.4).sum();
    assert_eq!(voids, 2, "one void game for each of its players");

    // The next run plays the slot again, from its opening, with the same colours.
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let after = games(&store);
    assert_eq!(after.len(), 7);
    let replay = after.last().unwrap();
    assert_eq!(replay.replay_of, Some(void.id));
    assert_eq!(replay.slot, void.index);
    assert_eq!(
        (
            &replay.white,
            &replay.black,
            &replay.opening_moves,
            &replay.start_fen
        ),
        (
            &void.white,
            &void.black,
            &void.opening_moves,
            &void.start_fen
        )
    );
    assert!(!replay.is_void(), "{replay:?}");
    let twin = &clean_games[void.index as usize - 1];
    assert_eq!(moves(&store, replay), moves(&clean_store, twin));
    assert_eq!(replay.result, twin.result);
    // The void attempt stays, as it was.
    let kept = after.iter().find(|g| g.id == void.id).unwrap();
    assert_eq!(kept, &void);
    // Now it rates exactly as the uninterrupted tournament.
    assert_eq!(rated(&store, &after), with_it);
    let clean_standings: Vec<_> = standings(&clean_store)
        .into_iter()
        .map(|(p, w, d, l, _)| (p, w, d, l))
        .collect();
    let standings_now: Vec<_> = standings(&store)
        .into_iter()
        .map(|(p, w, d, l, _)| (p, w, d, l))
        .collect();
    assert_eq!(standings_now, clean_standings);
    let glicko = |store: &Store| {
        let ratings = leaderboard::rate(&games(store), Compat::Correct);
        ["sf", "rnd", "sf-n1"].map(|p| {
            let r = ratings.player(p).unwrap();
            (r.current().rating, r.current().rd, r.games)
        })
    };
    assert_eq!(glicko(&store), glicko(&clean_store));
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&stdout(&board)).unwrap();
    assert_eq!(
        crate::common::json_rows(&json, "faults · void games")[0]["replayed_by"],
        format!("game {}", replay.index)
    );
}

#[test]
fn a_replay_reuses_the_models_replies_where_its_path_is_the_same() {
    let test = "a_replay_reuses_the_models_replies_where_its_path_is_the_same";
    let Some(url) = crate::common::local_llm(test) else {
        return;
    };
    if !stockfish(test) {
        return;
    }
    let dir = TestDir::new();
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/engines/kill_stockfish_after.sh");
    let marker = dir.path().join("killed");
    // The model's answers are held to the legal moves by a grammar, so it plays on; Stockfish is
    // killed at its fifth `go` (the start-up check, then four moves): at ply 7.
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "faults", games_per_pair = 1, max_plies = 12, seed = 5,
  players = {{
    arena.llm {{
      name = "smol", base_url = "{url}", model = "smollm2-135m-instruct",
      temperature = 0.7, max_tokens = 24, max_concurrency = 1, timeout_s = 300, mode = "blitz",
      options = {{ legal_moves = true, history = 10, max_attempts = 3, grammar = true }},
    }},
    arena.engine {{ name = "sf", command = "{}", args = {{ "{}", "5" }},
      options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 200 }} }},
  }},
}}"#,
            wrapper.display(),
            marker.display()
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let void = games(&store).remove(0);
    assert!(void.is_harness_void(), "{void:?}");
    assert_eq!(void.ply_count, 7, "{void:?}");
    let db = rusqlite::Connection::open(dir.db()).unwrap();
    let calls = |game: i64, reused: bool| -> u32 {
        db.query_row(
            "SELECT COUNT(*) FROM llm_calls WHERE game_id = ?1 AND (reused_from IS NOT NULL) = ?2",
            rusqlite::params![game, reused],
            |r| r.get(0),
        )
        .unwrap()
    };
    let asked_before = calls(void.id, false);
    assert!(asked_before >= 4, "the model moved at plies 0, 2, 4 and 6");

    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let replay = games(&store).pop().unwrap();
    assert_eq!(replay.replay_of, Some(void.id));
    assert!(!replay.is_void(), "{replay:?}");
    // The same path up to the kill: every reply of those plies is reused, none asked again.
    let prefix = moves(&store, &void);
    assert_eq!(moves(&store, &replay)[..prefix.len()], prefix[..]);
    assert_eq!(calls(replay.id, true), asked_before);
    let reused_plies: u32 = db
        .query_row(
            "SELECT COUNT(*) FROM llm_calls WHERE game_id = ?1 AND reused_from IS NOT NULL AND ply >= ?2",
            rusqlite::params![replay.id, void.ply_count],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(reused_plies, 0, "past the kill, the model is asked afresh");
    assert!(calls(replay.id, false) > 0, "the game went on past ply 7");
    // Each answer counts once: in the standings and in the spend.
    let t = store.find_tournament("faults").unwrap().unwrap();
    let counted = store
        .standings(t.id)
        .unwrap()
        .into_iter()
        .find(|r| r.player == "smol")
        .unwrap()
        .llm_calls;
    let asked = u64::from(asked_before + calls(replay.id, false));
    assert_eq!(counted, asked);
    let spent: u64 = store.spend(t.id).unwrap().iter().map(|s| s.calls).sum();
    assert_eq!(spent, asked);
}
