//! The placement format (issue 41) with real engines: a copy of a ladder rung placed against the
//! rest of the ladder lands within its interval of the calibrated Elo; a placement stops at its
//! game limit and at a budget, with the cost beside the rating; a killed placement resumes
//! without replaying a game.

use std::time::Duration;

use arena::{rating::calibration::Calibration, store::GameStatus};
use serde_json::Value;

use crate::common::{
    TestDir, fake_openai, json_rows, open_store, run_then_kill, stderr, stdout, stockfish,
};

/// A copy of the built-in rung `rung` (named `<rung>-copy`, without its rating) placed against
/// every other built-in rung.
fn rung_copy_script(rung: &str, options: &str) -> String {
    format!(
        r#"local model = arena.ladder("{rung}")
model.name = "{rung}-copy"
model.anchor_elo = nil
model.anchor_se = nil
local rungs = {{}}
for _, name in ipairs(arena.ladder()) do
  if name ~= "{rung}" then
    table.insert(rungs, arena.ladder(name))
  end
end
return arena.tournament {{
  name = "place", format = "placement", players = {{ model }},
  format_options = {{ rungs = rungs, {options} }},
  max_plies = 300, concurrency = 2, seed = 5,
}}"#
    )
}

/// The placement table's row of `player`, from `arena leaderboard --format json`.
fn placement_row(dir: &TestDir, player: &str) -> Value {
    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    json_rows(&doc, "placement")
        .iter()
        .find(|r| r["player"] == player)
        .unwrap_or_else(|| panic!("no placement row for {player} in {doc}"))
        .clone()
}

#[test]
fn a_ladder_rung_placed_against_the_rest_lands_within_its_interval() {
    if !stockfish("a_ladder_rung_placed_against_the_rest_lands_within_its_interval") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &rung_copy_script("mix50", "target = 100, max_games = 200"),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    // `arena run` ends with the placement table.
    let text = stdout(&out);
    assert!(
        text.contains("Placement") && text.contains("mix50-copy"),
        "{text}"
    );

    let row = placement_row(&dir, "mix50-copy");
    assert_eq!(row["stop"], "target", "{row}");
    let elo = row["elo"].as_f64().unwrap();
    let margin = row["plus_minus_95_pct"].as_f64().unwrap();
    let with_ladder = row["plus_minus_95_pct_with_ladder"].as_f64().unwrap();
    assert!(margin <= 100.0 && with_ladder >= margin, "{row}");
    let calibrated = Calibration::builtin().rung("mix50").unwrap().elo;
    assert!(
        (elo - calibrated).abs() <= with_ladder,
        "placed at {elo} ± {with_ladder}, calibrated at {calibrated}"
    );
    // Never fewer games than the information bound allows, and in whole pairs.
    let games = row["games"].as_u64().unwrap();
    assert!(
        games >= 46 && games.is_multiple_of(2) && games <= 200,
        "{row}"
    );
    assert_eq!(row["tokens"], 0, "engines spend nothing: {row}");
}

#[test]
fn a_placement_stops_at_its_game_limit() {
    if !stockfish("a_placement_stops_at_its_game_limit") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &rung_copy_script("mix40", "target = 10, max_games = 6"),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let row = placement_row(&dir, "mix40-copy");
    assert_eq!(
        (row["stop"].as_str(), row["games"].as_u64()),
        (Some("max_games"), Some(6)),
        "{row}"
    );
}

#[test]
fn a_model_placed_until_its_budget_shows_its_cost_beside_its_rating() {
    if !stockfish("a_model_placed_until_its_budget_shows_its_cost_beside_its_rating") {
        return;
    }
    let fake = fake_openai(0);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "place", format = "placement", max_plies = 40, concurrency = 2, seed = 3,
  prices = {{ fake = {{ input_per_mtok = 1000.0, output_per_mtok = 1000.0 }} }},
  players = {{
    arena.llm {{ name = "m", model = "fake", base_url = "{}", mode = "blitz",
                 budget = {{ tokens = 3000 }} }},
  }},
  format_options = {{ target = 30, max_games = 100 }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    // The budget either stopped the model between pairs (exit 0) or held back a game of its
    // last pair (exit 1, the budget's code).
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    let row = placement_row(&dir, "m");
    assert_eq!(row["stop"], "budget", "{row}");
    let tokens = row["tokens"].as_u64().unwrap();
    assert!(tokens >= 3000, "{row}");
    // Priced at $1000 a million tokens: dollars are tokens / 1000.
    let usd = row["cost_usd"].as_f64().unwrap();
    assert!((usd - tokens as f64 / 1000.0).abs() < 1e-3, "{row}");
    assert!(row["games"].as_u64().unwrap() >= 2, "{row}");
}

#[test]
fn a_killed_placement_resumes_without_replaying_a_game() {
    if !stockfish("a_killed_placement_resumes_without_replaying_a_game") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &rung_copy_script("mix60", "target = 60, max_games = 80"),
    );
    run_then_kill(&dir, "place", Duration::from_secs(300), |store, t| {
        store.games(t).is_ok_and(|games| {
            games
                .iter()
                .filter(|g| g.status == GameStatus::Finished)
                .count()
                >= 10
        })
    });
    let before = {
        let store = open_store(&dir.db());
        let t = store.find_tournament("place").unwrap().unwrap();
        store.games(t.id).unwrap()
    };
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("place").unwrap().unwrap();
    let after = store.games(t.id).unwrap();
    // Every game finished before the kill is still there, unchanged, and played once.
    for game in before.iter().filter(|g| g.status == GameStatus::Finished) {
        let now = after.iter().find(|g| g.id == game.id).expect("kept");
        assert_eq!(
            (&now.white, &now.black, &now.result, now.index),
            (&game.white, &game.black, &game.result, game.index)
        );
    }
    let mut indexes: Vec<u32> = after.iter().map(|g| g.index).collect();
    indexes.sort_unstable();
    indexes.dedup();
    assert_eq!(indexes.len(), after.len(), "each game index once");
    assert!(after.iter().all(|g| g.status == GameStatus::Finished));
    let row = placement_row(&dir, "mix60-copy");
    assert_ne!(row["stop"], "playing", "{row}");
    assert_eq!(
        row["games"].as_u64().unwrap() as usize,
        after.len(),
        "{row}"
    );
}

/// Two priced models placed at once (the fake server, one ten times dearer): the report's
/// cost-versus-rating chart draws each at its cost and Elo in headless Chromium, and `arena
/// serve`'s leaderboard carries the same chart.
#[test]
fn the_report_and_serve_draw_cost_against_rating() {
    let test = "the_report_and_serve_draw_cost_against_rating";
    if !stockfish(test) {
        return;
    }
    let Some(driver) = crate::report::browser_tools(test) else {
        return;
    };
    let fake = fake_openai(0);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"local function model(name)
  return arena.llm {{ name = name, model = name, base_url = "{}", mode = "blitz" }}
end
return arena.tournament {{
  name = "place", format = "placement", max_plies = 40, concurrency = 4, seed = 9,
  prices = {{
    cheap = {{ input_per_mtok = 100.0, output_per_mtok = 100.0 }},
    dear = {{ input_per_mtok = 1000.0, output_per_mtok = 1000.0 }},
  }},
  players = {{ model("cheap"), model("dear") }},
  format_options = {{ target = 30, max_games = 12, start_elo = -100 }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let models: Vec<Value> = ["cheap", "dear"]
        .iter()
        .map(|name| {
            let row = placement_row(&dir, name);
            assert_eq!(row["stop"], "max_games", "{row}");
            assert!(row["elo"].is_number(), "a finite Elo to draw: {row}");
            serde_json::json!({ "name": name, "elo": row["elo"], "usd": row["cost_usd"] })
        })
        .collect();
    assert!(
        models[1]["usd"].as_f64().unwrap() > models[0]["usd"].as_f64().unwrap(),
        "{models:?}"
    );

    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--out", "report.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("id=\"cost-rating-plot\""),
        "no chart in the report"
    );
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&shots).unwrap();
    let spec = serde_json::json!({
        "report": dir.path().join("report.html"), "screenshots": shots, "models": models,
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = std::process::Command::new("node")
        .arg(driver.join("placement.mjs"))
        .arg(&spec_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "browser checks failed: {}\n{}",
        stdout(&out),
        stderr(&out)
    );

    let server = crate::serve::Server::start(dir.path(), "t.db", &[]);
    let store = open_store(&dir.db());
    let t = store.find_tournament("place").unwrap().unwrap();
    let page = server.get(&format!("/tournaments/{}/leaderboard", t.id));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains("id=\"cost-rating-plot\""),
        "{}",
        page.body
    );
    assert!(page.body.contains(">cheap</text>") && page.body.contains(">dear</text>"));
}

/// The local model and a priced fake model placed at once: `arena run` ends with each model's
/// Elo (or bound), interval, games and cost, and the report draws the priced one on the
/// cost-versus-rating chart.
#[test]
fn the_local_model_and_a_fake_one_are_placed_with_their_cost() {
    let test = "the_local_model_and_a_fake_one_are_placed_with_their_cost";
    let Some(url) = crate::common::local_llm(test) else {
        return;
    };
    if !stockfish(test) {
        return;
    }
    let fake = fake_openai(0);
    let local = crate::common::llm_player(&url, "smol", "max_attempts = 1, parser = \"tolerant\"");
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "place", format = "placement", max_plies = 40, concurrency = 2, seed = 4,
  prices = {{ fake = {{ input_per_mtok = 500.0, output_per_mtok = 500.0 }} }},
  players = {{
    {local},
    arena.llm {{ name = "fake", model = "fake", base_url = "{}", mode = "blitz" }},
  }},
  format_options = {{ target = 30, max_games = 12, start_elo = -100 }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    assert!(crate::common::finished(out.status), "{}", stderr(&out));
    let text = stdout(&out);
    let table = text
        .split("Placement\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no placement table:\n{text}"));
    assert!(table.contains("smol") && table.contains("fake"), "{text}");

    let smol = placement_row(&dir, "smol");
    assert!(
        ["below_ladder", "max_games"].contains(&smol["stop"].as_str().unwrap()),
        "{smol}"
    );
    assert!(
        smol["games"].as_u64().unwrap() >= 2 && smol["tokens"].as_u64().unwrap() > 0,
        "{smol}"
    );
    let fake_row = placement_row(&dir, "fake");
    assert_eq!(fake_row["stop"], "max_games", "{fake_row}");
    assert_eq!(fake_row["games"], 12, "{fake_row}");
    assert!(fake_row["cost_usd"].as_f64().unwrap() > 0.0, "{fake_row}");

    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(
        html.contains("id=\"cost-rating-plot\""),
        "no chart in the report"
    );
}
