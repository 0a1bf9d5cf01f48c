//! Replies cut at the token limit (`examples/fake_openai.rs --think-tokens`: the fake thinks at
//! length before its move, and a small `max_tokens` cuts it with finish reason `length`): stored
//! and counted as `cut_off`, retried shorter when the mode asks, and a tournament or experiment
//! whose games all end that way says it compared no chess, with its own exit code.

use arena::store::Store;

use crate::{
    common::{TestDir, fake_openai_with, json_rows, open_store, stderr, stdout},
    ratings::{assert_valid, json_schema},
    serve::Server,
};

/// The exit code of a run that compared no chess (`docs/src/reference/exit-codes.md`).
const NO_CHESS: i32 = 3;

/// A tournament of a model that thinks past its `max_tokens` against a random mover.
fn thinker(url: &str, games: u32, options: &str) -> String {
    format!(
        r#"return arena.tournament {{
  name = "cut", games_per_pair = {games}, max_plies = 6, seed = 3,
  players = {{
    arena.llm {{ name = "thinker", base_url = "{url}", model = "fake", mode = "blitz",
      max_tokens = 64, options = {{ {options} }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
    )
}

/// Every stored call of the tournament `cut`: (finish reason, outcome, request JSON), in game,
/// ply and seq order.
fn calls(store: &Store) -> Vec<(Option<String>, Option<String>, String)> {
    let t = store
        .find_tournament("cut")
        .unwrap()
        .expect("the tournament");
    let mut out = Vec::new();
    for g in store.games(t.id).unwrap() {
        for c in store.game_calls(g.id).unwrap() {
            out.push((c.call.finish_reason, c.outcome, c.call.request_json));
        }
    }
    out
}

#[test]
fn a_cut_off_reply_is_stored_as_cut_off_and_retried_shorter_when_the_mode_asks() {
    let fake = fake_openai_with(0, &["--think-tokens", "300"]);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &thinker(
            &fake.url,
            1,
            r#"max_attempts = 2, on_cut_off = "retry_shorter""#,
        ),
    );
    let out = dir.run("t.lua");
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    assert!(!text.contains("no chess compared"), "{text}");

    let calls = calls(&open_store(&dir.db()));
    assert!(!calls.is_empty());
    // Each move: a reply cut at the limit, stored with its finish reason as `cut_off`, then the
    // shorter retry, which moves.
    let cut: Vec<_> = calls
        .iter()
        .filter(|c| c.0.as_deref() == Some("length"))
        .collect();
    assert!(!cut.is_empty(), "{calls:?}");
    for c in &cut {
        assert_eq!(c.1.as_deref(), Some("cut_off"), "{c:?}");
    }
    let retried: Vec<_> = calls
        .iter()
        .filter(|c| c.2.contains("cut off at the length limit"))
        .collect();
    assert_eq!(retried.len(), cut.len(), "{calls:?}");
    for c in &retried {
        assert_eq!(c.1.as_deref(), Some("move"), "{c:?}");
        assert!(c.2.contains("much more briefly"), "{}", c.2);
    }

    // Counted apart from parse errors in arena's columns; ChessArena's parsing errors, which
    // read no finish reason, count them.
    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--stats", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&lb.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&lb)));
    assert_valid(&json_schema(), &json, "arena leaderboard --format json");
    let standings = json_rows(&json, "standings");
    let row = standings.iter().find(|r| r["player"] == "thinker").unwrap();
    assert_eq!(row["parse_errors"], 0, "{row}");
    assert!(
        (row["cut_off_pct"].as_f64().unwrap() - 50.0).abs() < 1e-9,
        "{row}"
    );
    assert!(
        row["completion_tokens_per_move"].as_f64().unwrap() > 64.0,
        "{row}"
    );
    let attempts = json_rows(&json, "attempts");
    let a = attempts.iter().find(|r| r["player"] == "thinker").unwrap();
    assert!(
        (a["parsing_error_pct"].as_f64().unwrap() - 50.0).abs() < 1e-9,
        "{a}"
    );
}

#[test]
fn a_tournament_whose_replies_are_all_cut_off_compared_no_chess() {
    let fake = fake_openai_with(0, &["--think-tokens", "300"]);
    let dir = TestDir::new();
    // The default `on_cut_off` answers a cut reply as any reply without a move: the model
    // thinks at length again, and forfeits.
    dir.write("t.lua", &thinker(&fake.url, 2, "max_attempts = 2"));
    let out = dir.run("t.lua");
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(NO_CHESS), "{text}\n{err}");
    assert!(
        text.contains("no chess compared: 2 of 2 games of `thinker` without a move of its own (2 forfeited); 4 replies cut at max_tokens = 64"),
        "{text}"
    );
    assert!(text.contains("raise `max_tokens` (now 64)"), "{text}");
    assert!(err.contains("no chess compared"), "{err}");

    let calls = calls(&open_store(&dir.db()));
    assert_eq!(calls.len(), 4, "{calls:?}");
    assert!(
        calls.iter().all(|c| c.1.as_deref() == Some("cut_off")),
        "{calls:?}"
    );

    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(lb.status.code(), Some(0), "{}", stderr(&lb));
    let json: serde_json::Value = serde_json::from_slice(&lb.stdout).unwrap();
    assert_valid(&json_schema(), &json, "arena leaderboard --format json");
    let rows = json_rows(&json, "no_chess");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["player"], "thinker");
    assert_eq!(rows[0]["no_move_games"], 2);
    assert_eq!(rows[0]["cut_off"], 4);
    assert_eq!(rows[0]["max_tokens"], 64);
    assert!(
        rows[0]["hint"].as_str().unwrap().contains("retry_shorter"),
        "{}",
        rows[0]
    );

    // The report says it before any rating.
    let report = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    let banner = report.find(">No chess compared<").expect("the banner");
    assert!(banner < report.find(">Overview<").expect("the overview"));

    // So does `arena serve`'s leaderboard, first.
    let t = open_store(&dir.db())
        .find_tournament("cut")
        .unwrap()
        .unwrap();
    let server = Server::start(dir.path(), "t.db", &[]);
    let board = server.get(&format!("/tournaments/{}/leaderboard", t.id));
    assert_eq!(board.status, 200, "{}", board.body);
    let at = board
        .body
        .find("no chess compared")
        .expect("the no-chess table");
    assert!(
        at < board.body.find("ratings (Glicko-1").expect("the ratings"),
        "{}",
        board.body
    );
    assert!(
        board.body.contains("raise `max_tokens` (now 64)"),
        "{}",
        board.body
    );
}

#[test]
fn an_experiment_whose_arms_all_forfeit_ends_with_the_no_chess_verdict() {
    let fake = fake_openai_with(0, &["--think-tokens", "300"]);
    let dir = TestDir::new();
    dir.write(
        "exp.lua",
        &format!(
            r#"local function thinker(name, legal)
  return arena.llm {{ name = name, model = "fake", base_url = "{url}", mode = "blitz",
    max_tokens = 64, options = {{ legal_moves = legal, max_attempts = 1 }} }}
end
return arena.experiment {{
  name = "think",
  baseline = thinker("plain", false),
  variants = {{ thinker("listed", true) }},
  openings = {{ fens = {{
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
  }} }},
  sprt = {{ elo0 = 0, elo1 = 40, alpha = 0.05, beta = 0.05 }},
  max_pairs = 3,
  max_plies = 20,
  seed = 5,
}}"#,
            url = fake.url
        ),
    );
    let out = dir.run("exp.lua");
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(NO_CHESS), "{text}\n{err}");
    let line = text
        .lines()
        .find(|l| l.starts_with("listed vs plain:"))
        .unwrap_or_else(|| panic!("no verdict line:\n{text}"));
    // Every game ends at its first ply: no arm's model ever moves.
    assert!(line.contains("no chess compared: "), "{line}");
    assert!(
        line.contains("games of `listed` without a move of its own"),
        "{line}"
    );
    assert!(line.contains("replies cut at max_tokens = 64"), "{line}");
    assert!(!line.contains("Elo"), "{line}");

    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&lb.stdout).unwrap();
    assert_valid(&json_schema(), &json, "arena leaderboard --format json");
    let arms = json_rows(&json, "experiment");
    let listed = arms.iter().find(|r| r["variant"] == "listed").unwrap();
    assert_eq!(listed["verdict"], "no_chess", "{listed}");
    assert!(listed["elo"].is_null(), "{listed}");
    // Every reply was cut: the share is 100 % in both arms, the difference 0.
    assert_eq!(listed["cut_off_pct_diff"].as_f64(), Some(0.0), "{listed}");
}
