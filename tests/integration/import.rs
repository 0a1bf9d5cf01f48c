//! `arena import chessarena` and `arena import llm-chess` on the anchors' own records
//! (`$ARENA_REFERENCE_DATA`; ChessArena's files carry no licence, so they are read in place and
//! copied only into temporary folders).

use std::path::{Path, PathBuf};

use arena::{
    board::Game,
    rating::glicko::{self, Compat, GlickoConfig, Rating},
    store::{GameStatus, Store},
};
use serde_json::Value;

use crate::common::{TestDir, open_store, stderr, stdout};

/// The reference data root, or `None` (with a note) when the tests run without it.
fn reference(test: &str) -> Option<PathBuf> {
    arena_testkit::reference_data(test)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("valid JSON")
}

/// Every `*_results.json` under `dir`.
fn results_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(results_files(&path));
        } else if path.to_string_lossy().ends_with("_results.json") {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn import(dir: &TestDir, source: &str, folder: &Path) -> std::process::Output {
    dir.arena()
        .args(["import", source])
        .arg(folder)
        .args(["--db", "t.db"])
        .output()
        .expect("arena runs")
}

/// Rows of every table that an import may add to, to compare before and after.
fn counts(store: &Store) -> Vec<usize> {
    let mut c = vec![0; 4];
    for t in store.tournaments().unwrap() {
        c[0] += 1;
        let games = store.games(t.id).unwrap();
        c[1] += games.len();
        c[3] += store.events(t.id).unwrap().len();
        for g in games {
            let plies = store.plies(g.id).unwrap().len() as u32;
            c[2] += plies as usize;
            for ply in 0..=plies {
                c[3] += store.llm_calls(g.id, ply).unwrap().len();
            }
        }
    }
    c
}

#[test]
fn chessarena_records_import_replay_legally_and_match_their_files_and_a_second_import_adds_nothing()
{
    let Some(data) = reference("chessarena_records_import") else {
        return;
    };
    let tree = data.join("ChessArena/simulation_record");
    let dir = TestDir::new();
    let out = import(&dir, "chessarena", &tree);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("imported 2 game(s) into tournament `chessarena:simulation_record`"),
        "{}",
        stdout(&out)
    );

    let store = open_store(&dir.db());
    let t = store
        .find_tournament("chessarena:simulation_record")
        .unwrap()
        .expect("the import's tournament");
    let settings: Value = serde_json::from_str(&t.settings_json).unwrap();
    assert_eq!(settings["importer"], "chessarena");
    assert!(
        settings["source"]
            .as_str()
            .unwrap()
            .ends_with("simulation_record")
    );
    let games = store.games(t.id).unwrap();
    // Imported in ChessArena's rating order, by game_id.
    let mut files = results_files(&tree);
    files.sort_by_key(|f| read_json(f)["game_id"].as_str().unwrap().to_owned());
    assert_eq!(games.len(), files.len());
    for (game, file) in games.iter().zip(&files) {
        let record = read_json(file);
        assert_eq!(game.status, GameStatus::Finished);
        assert_eq!(game.result.as_deref(), record["result"].as_str());
        // The file's own word is kept as the reason.
        assert_eq!(game.reason.as_deref(), record["termination"].as_str());
        let legal = |side: &str| {
            record[format!("{side}_player_provide_legal_moves")]
                .as_bool()
                .unwrap_or(true)
        };
        let name = |side: &str| {
            let word = if legal(side) { "True" } else { "False" };
            format!(
                "{}_{word}",
                record[format!("{side}_player")].as_str().unwrap()
            )
        };
        assert_eq!(game.white, name("white"));
        assert_eq!(game.black, name("black"));
        // Every stored move replays legally on arena's board and is the file's move.
        let plies = store.plies(game.id).unwrap();
        let moves: Vec<&str> = record["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert_eq!(plies.len(), moves.len());
        let mut board = Game::new(None, 0).unwrap();
        for (ply, mv) in plies.iter().zip(&moves) {
            assert_eq!(ply.fen_before, board.fen());
            assert_eq!(ply.uci, *mv);
            board.play_uci(mv).unwrap();
        }
        assert_eq!(Some(board.fen().as_str()), record["final_fen"].as_str());
    }
    let (checkmate, forfeit) = (&games[0], &games[1]);
    assert_eq!(checkmate.termination.as_deref(), Some("checkmate"));
    assert_eq!(forfeit.termination.as_deref(), Some("forfeit"));

    // The bullet player's five forbidden-thinking replies at its last ply are calls with outcomes;
    // the early-schema record has no dialogs, so no calls.
    let calls = store.llm_calls(forfeit.id, 8).unwrap();
    assert_eq!(calls.len(), 5, "{calls:?}");
    for c in &calls {
        assert_eq!(c.outcome.as_deref(), Some("forbidden_reasoning"));
        assert_eq!(c.call.player, "qwen3-235b-a22b_bullet_True");
        let request: Value = serde_json::from_str(&c.call.request_json).unwrap();
        assert_eq!(request["messages"].as_array().unwrap().len(), 2);
    }
    let first = &store.llm_calls(forfeit.id, 0).unwrap()[0];
    assert_eq!(first.outcome.as_deref(), Some("move"));
    assert_eq!(first.outcome_detail.as_deref(), Some("e2e4"));
    let raw: Value = serde_json::from_str(first.call.raw_body.as_deref().unwrap()).unwrap();
    assert_eq!(
        raw["move_detail"]["move_ranking"], 3,
        "the engine data is kept"
    );
    assert!(store.llm_calls(checkmate.id, 0).unwrap().is_empty());
    let standings = store.standings(t.id).unwrap();
    let bullet = standings
        .iter()
        .find(|r| r.player == "qwen3-235b-a22b_bullet_True")
        .unwrap();
    assert_eq!(
        (
            bullet.forbidden_reasoning,
            bullet.accepted_moves,
            bullet.forfeits
        ),
        (5, 4, 1)
    );

    // The other commands read the imported games.
    let pgn = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(pgn.status.success(), "{}", stderr(&pgn));
    assert!(
        stdout(&pgn).contains("8. Qf5# {checkmate} 1-0"),
        "{}",
        stdout(&pgn)
    );
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--all"])
        .output()
        .unwrap();
    assert!(board.status.success(), "{}", stderr(&board));
    assert!(stdout(&board).contains("deepseek-v3_blindfold_True   blindfold  yes"));

    // Importing the same tree again adds nothing.
    let before = counts(&store);
    drop(store);
    let out = import(&dir, "chessarena", &tree);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("imported 0 game(s)"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("(2 already there)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(counts(&open_store(&dir.db())), before);
}

#[test]
fn a_malformed_or_illegal_record_is_reported_with_its_path_and_line_and_the_rest_imports() {
    let Some(data) = reference("a_malformed_record_is_reported") else {
        return;
    };
    let good = results_files(&data.join("ChessArena/simulation_record"))
        .into_iter()
        .find(|f| f.to_string_lossy().contains("blitz-blitz"))
        .unwrap();
    let text = std::fs::read_to_string(&good).unwrap();
    let dir = TestDir::new();
    dir.write("tree/blitz-blitz/a/game_1_results.json", &text);
    // A comma missing at the end of line 3.
    dir.write(
        "tree/blitz-blitz/b/game_2_results.json",
        "{\n  \"game_id\": \"x\",\n  \"white_player\": \"a_blitz\"\n  \"black_player\": \"b_blitz\"\n}\n",
    );
    // The same game with an illegal seventh move.
    let mut record: Value = serde_json::from_str(&text).unwrap();
    record["game_id"] = "20250611_205653_99".into();
    record["moves"][6] = "e5e7".into();
    record["move_details"][6]["move"] = "e5e7".into();
    dir.write(
        "tree/blitz-blitz/c/game_3_results.json",
        &serde_json::to_string(&record).unwrap(),
    );
    dir.write("tree/blitz-blitz/a/game_1.log", "a text log");

    let out = dir
        .arena()
        .args(["import", "chessarena", "tree", "--db", "t.db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("tree/blitz-blitz/b/game_2_results.json:4: malformed JSON"),
        "{err}"
    );
    assert!(
        err.contains("tree/blitz-blitz/c/game_3_results.json: ply 7 (`e5e7`) cannot be played"),
        "{err}"
    );
    assert!(
        stdout(&out).contains("game_1.log: a game's text log"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("imported 1 game(s)"),
        "{}",
        stdout(&out)
    );
    let store = open_store(&dir.db());
    let t = store.find_tournament("chessarena:tree").unwrap().unwrap();
    assert_eq!(store.games(t.id).unwrap().len(), 1);
}

#[test]
fn an_import_refuses_a_tournament_arena_played_and_leaves_its_games_alone() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local arena = require("arena")
return arena.tournament {
  name = "mine", max_plies = 6, seed = 1,
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 2 } },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let before = counts(&open_store(&dir.db()));
    dir.write("tree/x.json", "{}");
    let out = dir
        .arena()
        .args([
            "import",
            "llm-chess",
            "tree",
            "--db",
            "t.db",
            "--tournament",
            "mine",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("refusing to import into tournament `mine`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(counts(&open_store(&dir.db())), before);
}

#[test]
fn llm_chess_logs_import_with_their_run_and_a_second_import_adds_nothing() {
    let Some(data) = reference("llm_chess_logs_import") else {
        return;
    };
    let logs = data.join("llm_chess/_logs");
    let dir = TestDir::new();
    let out = import(&dir, "llm-chess", &logs);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("imported 1 game(s) into tournament `llm_chess:_logs`"),
        "{text}"
    );
    // The calibration aggregates are no games, and say so.
    assert_eq!(
        text.matches("aggregate results of 1000 games: no moves")
            .count(),
        4,
        "{text}"
    );

    let store = open_store(&dir.db());
    let t = store.find_tournament("llm_chess:_logs").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(
        (g.white.as_str(), g.black.as_str()),
        ("Random_Player", "deepseek-V3.2_non-reasoning")
    );
    assert_eq!(g.result.as_deref(), Some("1/2-1/2"));
    assert_eq!(g.termination.as_deref(), Some("move_limit"));
    assert_eq!(g.reason.as_deref(), Some("Max moves reached"));
    let plies = store.plies(g.id).unwrap();
    assert_eq!(plies.len(), 200);
    let mut board = Game::new(None, 0).unwrap();
    for p in &plies {
        assert_eq!(p.fen_before, board.fen());
        board.play_uci(&p.uci).unwrap();
    }
    // PROVENANCE.md gives the final position of this game.
    assert_eq!(board.fen(), "8/1p3p2/8/8/8/2k5/8/1K6 w - - 1 101");
    let players = store.players(t.id).unwrap();
    let llm = players.iter().find(|p| p.kind == "llm").unwrap();
    let s: Value = serde_json::from_str(&llm.settings_json).unwrap();
    assert_eq!(s["mode"], "agentic");
    assert_eq!(s["mode_options"]["max_turns"], 10);
    assert!(
        !llm.settings_json.contains("REDACTED"),
        "no key field is kept"
    );

    let before = counts(&store);
    drop(store);
    let out = import(&dir, "llm-chess", &logs);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("imported 0 game(s)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(counts(&open_store(&dir.db())), before);
}

/// Re-rates the imported ChessArena games and compares with ChessArena's `ratings.json`
/// (commit be1bc27e), which rated all 1,113 of its games: the sample holds 2 of them.
///
/// What matches: both games are in `games_history` under the same `date` (ChessArena's `game_id`),
/// with the same players (so the import names them as ChessArena does) and the same result; and
/// arena's Glicko-1 update, started from the ratings ChessArena had before each game, gives the
/// `*_after` values it stored. What does not: the ratings of the imported store itself, which
/// start every player at 1500 / 350 because the other 1,111 games are not in the sample (the
/// published final ratings are printed beside them for the record).
#[test]
fn imported_chessarena_games_rerate_as_chessarena_rated_them() {
    let Some(data) = reference("imported_chessarena_games_rerate") else {
        return;
    };
    let dir = TestDir::new();
    let out = import(
        &dir,
        "chessarena",
        &data.join("ChessArena/simulation_record"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let ratings =
        read_json(&data.join("ChessArena/commit-be1bc27e/simulation_record/ratings.json"));
    let history = ratings["games_history"].as_array().unwrap();

    let store = open_store(&dir.db());
    let t = store
        .find_tournament("chessarena:simulation_record")
        .unwrap()
        .unwrap();
    let cfg = GlickoConfig::default();
    assert_eq!(cfg.compat, Compat::Correct);
    let mut from_scratch = Vec::new();
    for g in store.games(t.id).unwrap() {
        let event = store
            .events(t.id)
            .unwrap()
            .into_iter()
            .find(|e| e.game_id == Some(g.id) && e.kind == "imported")
            .unwrap();
        let message: Value = serde_json::from_str(&event.message).unwrap();
        let game_id = message["record"]["game_id"].as_str().unwrap();
        let stored = history
            .iter()
            .find(|h| h["date"] == game_id)
            .unwrap_or_else(|| panic!("{game_id} is in ChessArena's ratings"));
        assert_eq!(stored["player_a"], g.white.as_str());
        assert_eq!(stored["player_b"], g.black.as_str());
        let score = match g.result.as_deref() {
            Some("1-0") => 1.0,
            Some("0-1") => 0.0,
            _ => 0.5,
        };
        assert_eq!(stored["result"].as_f64(), Some(score));
        let num = |k: &str| stored[k].as_f64().unwrap();
        let (white, black) = glicko::update(
            Rating::new(num("rating_a_before"), num("RD_a_before")),
            Rating::new(num("rating_b_before"), num("RD_b_before")),
            score,
            &cfg,
        )
        .unwrap();
        for (ours, key) in [
            (white.rating, "rating_a_after"),
            (white.rd, "RD_a_after"),
            (black.rating, "rating_b_after"),
            (black.rd, "RD_b_after"),
        ] {
            assert!(
                (ours - num(key)).abs() < 1e-9,
                "{game_id} {key}: {ours} vs {}",
                num(key)
            );
        }
        from_scratch.push(glicko::GameResult {
            white: g.white.clone(),
            black: g.black.clone(),
            score_white: score,
        });
    }
    assert_eq!(from_scratch.len(), 2);

    // The leaderboard rates the imported games from 1500 / 350, in ChessArena's game_id order.
    let expected = glicko::rate_games(&from_scratch, &cfg).unwrap();
    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--all", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let tables: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = crate::common::json_rows(&tables, "glicko");
    let published = &ratings["players"];
    for row in rows {
        let name = row["player"].as_str().unwrap();
        let ours = expected.rating(name);
        assert!(
            (row["rating"].as_f64().unwrap() - ours.rating).abs() < 0.5,
            "{row}"
        );
        eprintln!(
            "{name}: {:.0} ± {:.0} from the 2 imported games; ChessArena's published {:.0} ± {:.0} over {} games",
            ours.rating,
            ours.rd,
            published[name]["rating"].as_f64().unwrap(),
            published[name]["RD"].as_f64().unwrap(),
            published[name]["games"]
        );
    }
}
