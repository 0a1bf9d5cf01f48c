//! `arena eval`, `arena eval-report`, `arena rescore` and `arena score-recorded` end to end.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{TestDir, local_llm, stderr, stdout, stockfish};

/// The reference data root, or `None` (with a note) when the tests run without it.
fn reference(test: &str) -> Option<PathBuf> {
    arena_testkit::reference_data(test)
}

/// Copies the CC0 position sample next to the test's scripts.
fn with_book(dir: &TestDir) {
    let book = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tournaments/data/popularpos_sample.epd"),
    )
    .expect("the position sample is in the repository");
    dir.write("data/book.epd", &book);
}

fn report(dir: &TestDir, run: &str) -> Value {
    let out = dir
        .arena()
        .args([
            "eval-report",
            "--db",
            "t.db",
            "--run",
            run,
            "--format",
            "json",
        ])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("a JSON report")
}

fn row<'a>(report: &'a Value, table: &str, player: &str) -> &'a Value {
    crate::common::json_rows(report, table)
        .iter()
        .find(|r| r["model_or_engine"] == player)
        .unwrap_or_else(|| panic!("no row for `{player}` in `{table}`"))
}

fn eval(dir: &TestDir, script: &str) -> std::process::Output {
    dir.arena()
        .args(["eval", script, "--db", "t.db"])
        .output()
        .expect("arena runs")
}

#[test]
fn random_and_stockfish_on_the_reference_subsets() {
    let Some(root) = reference("random_and_stockfish_on_the_reference_subsets") else {
        return;
    };
    if !stockfish("random_and_stockfish_on_the_reference_subsets") {
        return;
    }
    let dir = TestDir::new();
    let data = root.join("ChessArena/fine-grained_evaluation");
    dir.write(
        "e.lua",
        &format!(
            r#"local arena = require("arena")
return arena.evaluation {{
  name = "ref", seed = 5, concurrency = 2,
  tasks = {{
    {{ task = "basic_understanding", data = "{basic}", limit = 200, scoring = "chessarena" }},
    {{ task = "puzzles", data = "{puzzles}", limit = 50 }},
  }},
  players = {{
    arena.engine {{ name = "sf", limits = {{ depth = 12 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            basic = data
                .join("chess_modeling_evaluation/chess_modeling_evaluation.jsonl")
                .display(),
            puzzles = data.join("puzzles_by_rating/lite").display(),
        ),
    );
    let out = eval(&dir, "e.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let r = report(&dir, "ref");
    let sf = row(&r, "basic_understanding", "sf");
    assert_eq!(sf["items"], 200);
    // The engine reads the board: every piece right, and every stored move set matched.
    assert_eq!(sf["pma"], 100.0);
    assert!(sf["f1"].as_f64().unwrap() > 99.0, "{sf}");
    let rnd = row(&r, "basic_understanding", "rnd");
    assert!(rnd["pma"].as_f64().unwrap() < 30.0, "{rnd}");
    let sf = row(&r, "puzzles", "sf");
    let rnd = row(&r, "puzzles", "rnd");
    assert_eq!(sf["items"], 50);
    assert!(
        sf["overall"].as_f64().unwrap() > 60.0 && rnd["overall"].as_f64().unwrap() < 20.0,
        "stockfish {sf}, random {rnd}"
    );
}

#[test]
fn an_extended_limit_resumes_and_rescoring_calls_nobody() {
    let dir = TestDir::new();
    with_book(&dir);
    let script = |limit: usize, base_url: &str| {
        format!(
            r#"local arena = require("arena")
return arena.evaluation {{
  name = "resume", seed = 3,
  tasks = {{
    {{ task = "basic_understanding", build = {{ book = "data/book.epd", count = 40 }}, limit = {limit}, scoring = "strict" }},
    {{ task = "board_reconstruction", build = {{ count = {limit}, plies = 4 }} }},
  }},
  players = {{
    arena.random {{ name = "rnd" }},
    arena.llm {{ name = "model", base_url = "{base_url}", model = "m", outage_s = 0 }},
  }},
}}"#
        )
    };
    // Nothing listens on port 9 (discard): the model is only in the script to prove that a
    // re-scoring never reaches it. The first runs leave it out.
    let without_model = |limit| {
        script(limit, "unused").replace(
            r#"    arena.llm { name = "model", base_url = "unused", model = "m", outage_s = 0 },"#,
            "",
        )
    };
    dir.write("e.lua", &without_model(20));
    let out = eval(&dir, "e.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("40 item answer(s) to get"),
        "{}",
        stderr(&out)
    );
    let first = report(&dir, "resume");
    assert_eq!(row(&first, "basic_understanding", "rnd")["items"], 20);

    // A larger limit asks only the new items; the first ones keep their stored answers.
    dir.write("e.lua", &without_model(30));
    let out = eval(&dir, "e.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("20 item answer(s) to get"),
        "{}",
        stderr(&out)
    );
    let second = report(&dir, "resume");
    assert_eq!(row(&second, "basic_understanding", "rnd")["items"], 30);
    // Nothing new to do: a third run asks nothing.
    let out = eval(&dir, "e.lua");
    assert!(
        stderr(&out).contains(" 0 item answer(s) to get"),
        "{}",
        stderr(&out)
    );

    // The script now names a model on a closed port; re-scoring reads the store only.
    dir.write("e.lua", &script(30, "http://127.0.0.1:9/v1"));
    let out = dir
        .arena()
        .args([
            "rescore",
            "--db",
            "t.db",
            "--run",
            "resume",
            "--scoring",
            "chessarena",
            "--parser",
            "tolerant",
            "--format",
            "json",
        ])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let rescored: Value = serde_json::from_str(&stdout(&out)).expect("JSON tables");
    let before = row(&second, "basic_understanding", "rnd");
    let after = row(&rescored, "basic_understanding", "rnd");
    assert_eq!(after["items"], 30);
    assert_eq!(
        before["pma"], after["pma"],
        "the piece reading does not depend on the scoring"
    );
    assert_eq!(
        row(&second, "board_reconstruction", "rnd"),
        row(&rescored, "board_reconstruction", "rnd")
    );
    // The re-scored run is stored and reported like any other.
    let stored = report(&dir, "resume+parser=tolerant,scoring=chessarena");
    assert_eq!(row(&stored, "basic_understanding", "rnd"), after);

    // A researcher edits the parser (here: it keeps the piece and drops the moves) and re-scores:
    // the task script in the script's folder wins over the built-in, and the metrics follow.
    dir.write(
        "tasks/basic_understanding.lua",
        r#"local builtin = {}
builtin.defaults = { parser = "chessarena" }
function builtin.prompt(item, ctx) return { { role = "user", content = item.fen } } end
function builtin.parse(reply, item, ctx)
  local answer = arena.eval.json_answer(reply, ctx.options.parser)
  if answer == nil then return nil, { kind = "no_json", message = "none" } end
  return { piece = answer.piece, legal_moves = {} }
end
return builtin"#,
    );
    let out = dir
        .arena()
        .args([
            "rescore", "--db", "t.db", "--run", "resume", "--as", "edited",
        ])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let edited = report(&dir, "edited");
    let edited = row(&edited, "basic_understanding", "rnd");
    assert_eq!(edited["pma"], before["pma"]);
    assert_ne!(edited["f1"], before["f1"], "{before} vs {edited}");
}

#[test]
fn score_recorded_reproduces_the_published_gpt41_metrics() {
    let Some(root) = reference("score_recorded_reproduces_the_published_gpt41_metrics") else {
        return;
    };
    let dir = root.join("ChessArena/commit-e1a12ce2/chess_modeling_evaluation");
    let out = TestDir::new()
        .arena()
        .args([
            "score-recorded",
            "--task",
            "basic_understanding",
            "--scoring",
            "chessarena",
        ])
        .arg("--predictions")
        .arg(dir.join("gpt-4.1_predictions_200.jsonl"))
        .args(["--total", "200", "--format", "json"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let ours: Value = serde_json::from_str(&stdout(&out)).expect("JSON metrics");
    let published: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("gpt-4.1_final_metrics_200.json")).unwrap(),
    )
    .unwrap();
    for key in ["piece_match_rate", "f1", "precision", "recall"] {
        let (a, b) = (
            ours[key].as_f64().unwrap(),
            published[key].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-9, "{key}: ours {a}, published {b}");
    }
    assert_eq!(ours["total_num"], published["total_num"]);
}

#[test]
fn the_local_model_answers_every_task() {
    let Some(url) = local_llm("the_local_model_answers_every_task") else {
        return;
    };
    if !stockfish("the_local_model_answers_every_task") {
        return;
    }
    let dir = TestDir::new();
    with_book(&dir);
    dir.write(
        "puzzles.csv",
        "PuzzleId,FEN,Moves,Rating\n\
         p1,6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1,g8f8 a1a8,600\n",
    );
    dir.write(
        "e.lua",
        &format!(
            r#"local arena = require("arena")
return arena.evaluation {{
  name = "local", seed = 2,
  tasks = {{
    {{ task = "basic_understanding", build = {{ book = "data/book.epd", count = 2 }} }},
    {{ task = "move_selection", build = {{ book = "data/book.epd", count = 2, depth = 6 }} }},
    {{ task = "puzzles", data = "puzzles.csv", max_attempts = 2 }},
    {{ task = "board_reconstruction", build = {{ count = 1, plies = 4 }} }},
  }},
  players = {{
    arena.llm {{ name = "smol", base_url = "{url}", model = "smollm2-135m-instruct",
                max_tokens = 48, temperature = 0, max_concurrency = 1 }},
  }},
}}"#
        ),
    );
    let out = eval(&dir, "e.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let r = report(&dir, "local");
    for (table, items) in [
        ("basic_understanding", 2),
        ("move_selection", 2),
        ("puzzles", 1),
        ("board_reconstruction", 1),
    ] {
        assert_eq!(row(&r, table, "smol")["items"], items, "{table}");
    }
    // Every reply is kept with its prompt, for inspection.
    let out = dir
        .arena()
        .args([
            "eval-report",
            "--db",
            "t.db",
            "--run",
            "local",
            "--items",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let items: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let puzzle_items = crate::common::json_rows(&items, "puzzles items");
    assert!(puzzle_items[0]["calls"].as_i64().unwrap() >= 1);
}

#[test]
fn move_selection_sets_are_built_from_stored_games() {
    if !stockfish("move_selection_sets_are_built_from_stored_games") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "source", games_per_pair = 2, max_plies = 30, seed = 4,
  players = {
    arena.engine { name = "sf", options = { ["Skill Level"] = 0 }, limits = { nodes = 50 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));
    let store = crate::common::open_store(&dir.db());
    let t = store.find_tournament("source").unwrap().unwrap();
    let random_positions: std::collections::BTreeSet<String> = store
        .games(t.id)
        .unwrap()
        .iter()
        .flat_map(|g| store.plies(g.id).unwrap())
        .filter(|p| p.player == "rnd")
        .map(|p| {
            p.fen_before
                .split(' ')
                .take(4)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    drop(store);

    dir.write(
        "e.lua",
        r#"return arena.evaluation {
  name = "from games", seed = 1,
  tasks = {
    { task = "move_selection", build = { games = "t.db", player = "rnd", count = 6, depth = 4 } },
  },
  players = {
    arena.engine { name = "sf", limits = { depth = 6 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = eval(&dir, "e.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let r = report(&dir, "from games");
    assert_eq!(row(&r, "move_selection", "sf")["items"], 6);

    let items = dir
        .arena()
        .args([
            "eval-report",
            "--db",
            "t.db",
            "--run",
            "from games",
            "--items",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&items.stdout).unwrap();
    let text = v.to_string();
    let used = random_positions
        .iter()
        .filter(|fen| text.contains(fen.as_str()))
        .count();
    assert!(
        used >= 1,
        "items come from the random player's positions: {text}"
    );

    // A store without the player's positions is a clear error.
    dir.write(
        "bad.lua",
        r#"return arena.evaluation {
  name = "bad", tasks = { { task = "move_selection", build = { games = "t.db", player = "nobody", count = 2 } } },
  players = { arena.random { name = "rnd" } },
}"#,
    );
    let out = eval(&dir, "bad.lua");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no stored positions of player `nobody`"),
        "{}",
        stderr(&out)
    );
}
