//! `arena report`: bad input (no store, an empty store, an unknown name, a store being written),
//! the report `arena run` writes, and a real tournament's report in a real headless chromium.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use arena::store::{GameStatus, Store};
use rusqlite::Connection;

use crate::common::{
    TestDir, fake_openai_with, json_rows, llm_player, local_llm, stderr, stdout, stockfish,
};

/// A reply as a hostile model would write it: if any of it ran, the browser test would see a
/// dialog or `window.__arena_pwned`.
const INJECTED: &str = "</script><script>window.__arena_pwned = 1; alert(1)</script><!-- <img src=x onerror=\"window.__arena_pwned = 2\">";

#[test]
fn an_unknown_name_lists_what_the_store_has_and_an_empty_store_has_no_games() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "tiny", games_per_pair = 1, max_plies = 6, seed = 1,
  players = { arena.random { name = "r1" }, arena.random { name = "r2" } },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    // `arena run` wrote the report beside the store and said where.
    assert!(stdout(&out).contains("report: t.html"), "{}", stdout(&out));
    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(html.contains("Tournament tiny"));

    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--tournament", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no tournament or evaluation run named `nope`")
            && stderr(&out).contains("there are: `tiny`"),
        "{}",
        stderr(&out)
    );
    let out = dir
        .arena()
        .args(["report", "--db", "missing.db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));

    // A store with nothing in it yet.
    drop(Store::open(&dir.path().join("empty.db")).unwrap());
    let out = dir
        .arena()
        .args(["report", "--db", "empty.db", "--out", "empty.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("report: empty.html (0 game(s)"));
    let html = std::fs::read_to_string(dir.path().join("empty.html")).unwrap();
    assert!(html.contains("there are no games to show"), "{html}");
}

#[test]
fn a_store_being_written_by_a_run_can_be_reported_on() {
    if !stockfish("a_store_being_written_by_a_run_can_be_reported_on") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "busy", games_per_pair = 6, max_plies = 40, seed = 2, concurrency = 1,
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { movetime_ms = 30 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let mut child = dir
        .arena()
        .args([
            "run",
            "t.lua",
            "--db",
            "t.db",
            "--no-watch",
            "--report",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for a finished game, then report while the run goes on.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        assert!(Instant::now() < deadline, "no game finished in time");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        if let Ok(store) = Store::open_read_only(&dir.db())
            && let Ok(Some(t)) = store.find_tournament("busy")
            && store.totals(t.id).is_ok_and(|t| t.games_finished >= 1)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--out", "during.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.path().join("during.html")).unwrap();
    assert!(html.contains("Tournament busy"));
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the run went on undisturbed");
    assert!(stdout(&out).contains("report: t.html"));
    // The refreshed and final report lists all 6 games.
    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert_eq!(html.matches("<tr class=\"game\"").count(), 6);
}

/// Where the browser test's screenshots are kept (a test artefact).
fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The browser test's tools, or `None` (with a note) when one is missing; scripts/test.sh
/// installs them (`scripts/prerequisites.sh --tests`).
pub fn browser_tools(test: &str) -> Option<PathBuf> {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let chromium = Path::new("/usr/bin/chromium");
    let node = Command::new("node").arg("--version").output().is_ok();
    if !chromium.exists() || !node || !driver.join("node_modules/playwright-core").exists() {
        arena_testkit::missing(
            test,
            "the browser (/usr/bin/chromium, node and tests/browser/node_modules)",
            "scripts/prerequisites.sh --tests installs them",
        );
        return None;
    }
    Some(driver)
}

#[test]
fn a_real_tournament_report_works_in_headless_chromium() {
    let test = "a_real_tournament_report_works_in_headless_chromium";
    let Some(url) = local_llm(test) else { return };
    if !stockfish(test) {
        return;
    }
    let Some(driver) = browser_tools(test) else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "browser", games_per_pair = 2, max_plies = 10, seed = 4, concurrency = 1,
  analysis = {{ depth = 6, processes = 1 }},
  players = {{
    {},
    arena.engine {{ name = "sf", options = {{ ["Skill Level"] = 0, Threads = 1, Hash = 16 }}, limits = {{ nodes = 500 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            llm_player(
                &url,
                "llm",
                "legal_moves = true, max_attempts = 3, grammar = true"
            )
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));

    // A finished, analysed game where the model had White; its first ply with a model call.
    let store = Store::open(&dir.db()).unwrap();
    let t = store.find_tournament("browser").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let game = games
        .iter()
        .find(|g| {
            g.status == GameStatus::Finished
                && g.white == "llm"
                && g.ply_count >= 4
                && store.game_analysis(g.id).unwrap().is_some()
        })
        .expect("an analysed game with the model as White");
    let plies = store.plies(game.id).unwrap();
    let calls = store.game_calls(game.id).unwrap();
    let ply = plies
        .iter()
        .position(|p| p.player == "llm" && p.ply > 0)
        .expect("a model ply after the first");
    let ply_calls: Vec<_> = calls
        .iter()
        .filter(|c| c.call.ply == plies[ply].ply)
        .collect();
    assert!(!ply_calls.is_empty());
    let request: serde_json::Value = serde_json::from_str(&ply_calls[0].call.request_json).unwrap();
    let last = request["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let prompt: String = last.lines().next().unwrap().chars().take(40).collect();
    // The system prompt repeats the previous ply's, so the report writes it once: the viewer
    // must put it back.
    let system: String = request["messages"][0]["content"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .chars()
        .take(40)
        .collect();
    assert_eq!(request["messages"][0]["role"], "system");
    let reply = format!(
        "{}\n{INJECTED}",
        ply_calls[0].call.reply_text.clone().unwrap_or_default()
    );
    Connection::open(dir.db())
        .unwrap()
        .execute(
            "UPDATE llm_calls SET reply_text = ?1 WHERE id = ?2",
            rusqlite::params![reply, ply_calls[0].id],
        )
        .unwrap();
    let analysis = store.ply_analyses(game.id).unwrap();
    let marked: Vec<u32> = analysis
        .iter()
        .filter(|a| {
            matches!(
                a.classification.as_str(),
                "inaccuracy" | "mistake" | "blunder"
            )
        })
        .map(|a| a.ply)
        .collect();
    let pending = calls
        .iter()
        .filter(|c| c.call.ply as usize >= plies.len())
        .map(|c| c.call.ply)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let mut sans: Vec<String> = plies.iter().map(|p| p.san.clone()).collect();
    sans.extend((0..pending).map(|_| "no move".to_owned()));
    let fen_after = match plies.get(ply + 1) {
        Some(next) => next.fen_before.clone(),
        None => {
            let mut g = arena::board::Game::new(Some(&plies[ply].fen_before), 0).unwrap();
            g.play_uci(&plies[ply].uci).unwrap();
            g.fen()
        }
    };
    let pieces_after_first = {
        let fen = plies.get(1).map(|p| p.fen_before.clone()).unwrap();
        fen.split(' ')
            .next()
            .unwrap()
            .chars()
            .filter(char::is_ascii_alphabetic)
            .count()
    };
    drop(store);

    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--out", "report.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report = dir.path().join("report.html");
    let shots = artefacts();
    let spec = serde_json::json!({
        "report": report, "screenshots": shots,
        "games": games.len(), "players": 3, "player": "llm",
        "game": game.id, "ply": ply, "sans": sans, "fen_after": fen_after,
        "pieces_after_first": pieces_after_first,
        "marks": marked.len(),
        "first_mark": marked.first().map(|p| p + 1),
        "calls": ply_calls.len(), "prompt": prompt, "system": system, "reply": reply,
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .arg(driver.join("report.mjs"))
        .arg(&spec_path)
        .output()
        .unwrap();
    let printed = stdout(&out);
    assert!(
        out.status.success(),
        "browser checks failed: {printed}\n{}",
        stderr(&out)
    );
    let result: serde_json::Value =
        serde_json::from_str(printed.lines().last().unwrap_or("{}")).unwrap();
    assert_eq!(result["ok"], true, "{printed}");
    assert!(shots.join("viewer.png").exists() && shots.join("overview.png").exists());
    eprintln!("screenshots in {}", shots.display());
}

#[test]
fn an_experiments_report_draws_each_arms_llr_path_to_its_bound() {
    let test = "an_experiments_report_draws_each_arms_llr_path_to_its_bound";
    let Some(driver) = browser_tools(test) else {
        return;
    };
    let fake = fake_openai_with(0, &["--blind-illegal", "0.3"]);
    let dir = TestDir::new();
    crate::experiment::write_experiment(&dir, &fake.url);
    let out = dir.run("exp.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let verdict_line = text
        .lines()
        .find(|l| l.starts_with("listed vs plain: H1 (better)"))
        .unwrap_or_else(|| panic!("no verdict:\n{text}"))
        .to_owned();

    // What the store says each arm reached, from the leaderboard's JSON.
    let lb = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&lb.stdout).unwrap();
    let arms: Vec<serde_json::Value> = json_rows(&json, "experiment")
        .iter()
        .map(|r| serde_json::json!({ "name": r["variant"], "verdict": r["verdict"], "pairs": r["pairs"] }))
        .collect();
    assert_eq!(arms.len(), 2, "{arms:?}");

    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--out", "report.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spec = serde_json::json!({
        "report": dir.path().join("report.html"), "screenshots": artefacts(),
        "arms": arms, "verdict_line": verdict_line,
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .arg(driver.join("experiment.mjs"))
        .arg(&spec_path)
        .output()
        .unwrap();
    let printed = stdout(&out);
    assert!(
        out.status.success(),
        "browser checks failed: {printed}\n{}",
        stderr(&out)
    );
    assert!(artefacts().join("experiment.png").exists());
}

#[test]
fn arena_eval_writes_the_run_report_with_every_item() {
    let dir = TestDir::new();
    dir.write(
        "e.lua",
        r#"local arena = require("arena")
return arena.evaluation {
  name = "rec<1>", seed = 3,
  tasks = { { task = "board_reconstruction", build = { count = 4, plies = 6 } } },
  players = { arena.random { name = "rnd" } },
}"#,
    );
    let out = dir
        .arena()
        .args(["eval", "e.lua", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("report: t.html"), "{}", stdout(&out));
    let html = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(html.contains("Run rec&lt;1&gt;"), "the run name is escaped");
    assert!(html.contains("board_reconstruction: 4 scored answer(s) over 4 item(s)"));
    assert_eq!(
        html.matches("class=\"reply\"").count(),
        4,
        "one reply per item"
    );
    // `arena report` finds the run by name too.
    let out = dir
        .arena()
        .args([
            "report",
            "--db",
            "t.db",
            "--tournament",
            "rec<1>",
            "--out",
            "r.html",
        ])
        .output()
        .unwrap();
    assert!(
        stdout(&out).contains("(0 game(s), 1 evaluation run(s))"),
        "{}",
        stdout(&out)
    );
}

/// An attempt card with long unbroken text (a model name as providers spell some, a reply and
/// its feedback without a space) stays inside its card and the window at 1400 px: the text wraps
/// rather than running past the card's edge, where the window clipped it.
#[test]
fn a_long_attempt_card_is_not_clipped_in_headless_chromium() {
    let test = "a_long_attempt_card_is_not_clipped_in_headless_chromium";
    let Some(driver) = browser_tools(test) else {
        return;
    };
    let fake = fake_openai_with(0, &[]);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "long", games_per_pair = 1, max_plies = 2, seed = 3,
  players = {{
    arena.llm {{ name = "m", base_url = "{}", model = "fake-random-mover" }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    // The stored call made long, as a model and its provider can make it.
    let conn = Connection::open(dir.db()).unwrap();
    let (game, ply): (i64, u32) = conn
        .query_row("SELECT game_id, ply FROM llm_calls LIMIT 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let long = |c: &str, n: usize| c.repeat(n);
    conn.execute(
        "UPDATE llm_calls SET model = ?1, reply_text = ?2 || char(10) || reply_text",
        rusqlite::params![long("m", 300), long("x", 3000)],
    )
    .unwrap();
    conn.execute(
        "UPDATE llm_calls SET outcome_detail = ?1",
        rusqlite::params![long("y", 2000)],
    )
    .unwrap();
    drop(conn);
    let out = dir
        .arena()
        .args(["report", "--db", "t.db", "--out", "long.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spec = serde_json::json!({
        "report": dir.path().join("long.html"),
        "game": game,
        "ply": ply + 1,
        "screenshot": artefacts().join("long-attempt.png"),
    });
    let spec_path = dir.write("spec.json", &spec.to_string());
    let out = Command::new("node")
        .arg(driver.join("attempt.mjs"))
        .arg(&spec_path)
        .output()
        .unwrap();
    let printed = stdout(&out);
    assert!(
        out.status.success(),
        "browser checks failed: {printed}\n{}",
        stderr(&out)
    );
}
