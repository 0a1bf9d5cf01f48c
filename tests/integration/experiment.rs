//! `arena.experiment{}` end to end against `examples/fake_openai.rs --blind-illegal 0.3`: the
//! fake model answers an illegal move three times in ten when the prompt does not list the legal
//! moves, so `legal_moves = true` is truly better and the experiment must say so.

use std::collections::BTreeMap;

use arena::store::GameStatus;

use crate::{
    common::{TestDir, fake_openai_with, json_rows, open_store, stderr, stdout},
    ratings::{assert_valid, json_schema},
};

#[test]
fn listing_the_legal_moves_reaches_h1_and_the_null_copy_does_not() {
    let fake = fake_openai_with(0, &["--blind-illegal", "0.3"]);
    let dir = TestDir::new();
    write_experiment(&dir, &fake.url);
    let out = dir.run("exp.lua");
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}\n{err}");
    let line = text
        .lines()
        .find(|l| l.starts_with("listed vs plain:"))
        .unwrap_or_else(|| panic!("no verdict line:\n{text}\n{err}"));
    assert!(line.contains("H1 (better)"), "{line}");
    let null = text
        .lines()
        .find(|l| l.starts_with("plain-null vs plain:"))
        .unwrap_or_else(|| panic!("no null-copy line:\n{text}"));
    assert!(!null.contains("H1"), "{null}");
    assert!(text.contains("experiment over"), "{text}");

    // The leaderboard's JSON has the experiment's table, one object per arm, and it follows
    // the published schema.
    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&lb.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&lb)));
    assert_valid(&json_schema(), &json, "arena leaderboard --format json");
    let table = json["tables"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["kind"] == "experiment"))
        .unwrap_or_else(|| panic!("no experiment table in {json}"));
    assert_eq!(table["tournament"], "does-the-list-help");
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let listed = rows.iter().find(|r| r["variant"] == "listed").unwrap();
    assert_eq!(listed["arm"], "variant");
    assert_eq!(listed["verdict"], "H1");
    assert!(listed["llr"].as_f64().unwrap() >= listed["upper_bound"].as_f64().unwrap());
    assert!(listed["lower_bound"].as_f64().unwrap() < 0.0);
    assert!(listed["pairs"].as_u64().unwrap() > 0);
    // Listing the moves removes the illegal answers: the difference and its whole interval
    // are below zero.
    let (d, ci) = (
        listed["illegal_pct_diff"].as_f64().unwrap(),
        listed["illegal_pct_ci95"].as_f64().unwrap(),
    );
    assert!(d + ci < 0.0, "{listed}");
    assert!(listed["seconds_per_move_diff"].is_number(), "{listed}");
    let null_row = rows.iter().find(|r| r["variant"] == "plain-null").unwrap();
    assert_eq!(null_row["arm"], "null_copy");
    assert_ne!(null_row["verdict"], "H1");

    // The protocol details: one row per arm and metric.
    let protocol = json_rows(&json, "experiment_protocol");
    let illegal = protocol
        .iter()
        .find(|r| r["variant"] == "listed" && r["metric"] == "illegal moves % of calls")
        .unwrap_or_else(|| panic!("{protocol:?}"));
    assert_eq!(illegal["difference"].as_f64(), Some(d));
    assert!(text.contains("listed vs plain: illegal moves -"), "{text}");

    // Stored games: per round, every arm met the same partner on the same opening, the arm
    // White in odd rounds and Black in even ones.
    let store = open_store(&dir.db());
    let t = store
        .find_tournament("does-the-list-help")
        .unwrap()
        .unwrap();
    let games = store.games(t.id).unwrap();
    let mut openings: BTreeMap<u32, BTreeMap<String, Option<String>>> = BTreeMap::new();
    for g in games.iter().filter(|g| g.status == GameStatus::Finished) {
        let (arm, arm_white) = if g.white == "plain" {
            (g.black.clone(), false)
        } else {
            (g.white.clone(), true)
        };
        assert_eq!(
            arm_white,
            g.round % 2 == 1,
            "round {} {} - {}",
            g.round,
            g.white,
            g.black
        );
        assert!(["listed", "plain-null"].contains(&arm.as_str()));
        openings
            .entry(g.round.div_ceil(2))
            .or_default()
            .insert(format!("{arm}/{}", g.round), g.start_fen.clone());
    }
    let mut paired_cells = 0;
    for (cell, arms) in &openings {
        let fens: Vec<&Option<String>> = arms.values().collect();
        assert!(fens.iter().all(|f| *f == fens[0]), "cell {cell}: {arms:?}");
        if arms.len() == 4 {
            paired_cells += 1;
        }
    }
    assert!(paired_cells >= 2, "{openings:?}");
}

/// Writes `exp.lua`: `plain` (no list of legal moves) against `listed`, head to head on three
/// openings, with a null copy, against the fake server at `url`.
pub(crate) fn write_experiment(dir: &TestDir, url: &str) {
    dir.write(
        "exp.lua",
        &format!(
            r#"local function fake(name, listed)
  -- Two attempts per move: two illegal answers in a row forfeit the game. (With one, about
  -- 40 % of the null copy's games end before it moves, too near the 50 % at which arena calls
  -- an arm's result "no chess compared" and exits with 3.)
  return arena.llm {{ name = name, model = "fake", base_url = "{url}", mode = "blitz",
    options = {{ legal_moves = listed, max_attempts = 2 }} }}
end
return arena.experiment {{
  name = "does-the-list-help",
  baseline = fake("plain", false),
  variants = {{ fake("listed", true) }},
  openings = {{ fens = {{
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
  }} }},
  sprt = {{ elo0 = 0, elo1 = 40, alpha = 0.01, beta = 0.05, model = "logistic" }},
  null = true,
  max_pairs = 60,
  max_plies = 60,
  seed = 5,
  concurrency = 4,
}}"#,
            url = url
        ),
    );
}
