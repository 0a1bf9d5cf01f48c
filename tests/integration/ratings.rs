//! Ratings depend on the games, not on how they were played: the same tournament at concurrency
//! 1 and 8 gives the same Glicko-1 and Bradley–Terry tables, although its games finish in another
//! order; and the Bradley–Terry table reads as ordo's.

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

/// Two Stockfish strengths at fixed nodes (deterministic with one thread) and three seeded random
/// movers, four games a pair from two book openings: 40 games of very different lengths, so that
/// at concurrency 8 short games overtake long ones.
fn script() -> String {
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/books/2moves_v1.epd");
    format!(
        r#"local function sf(nodes)
  return arena.engine {{ name = "sf-n" .. nodes, options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = nodes }} }}
end
return arena.tournament {{
  name = "order", games_per_pair = 4, max_plies = 100, seed = 11,
  openings = {{ file = "{book}", count = 2 }},
  players = {{
    sf(1),
    sf(30),
    arena.random {{ name = "rnd-1", seed = 1 }},
    arena.random {{ name = "rnd-2", seed = 2 }},
    arena.random {{ name = "rnd-3", seed = 3 }},
  }},
}}"#
    )
}

/// The leaderboard as JSON (every player shown), the game numbers in the order the games
/// finished, and each game's number and result.
type Played = (serde_json::Value, Vec<u32>, Vec<(u32, Option<String>)>);

/// Plays the tournament at `concurrency`.
fn play(concurrency: &str) -> Played {
    let dir = TestDir::new();
    dir.write("t.lua", &script());
    let out = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .args(["--concurrency", concurrency])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--all", "--format", "json"])
        .output()
        .expect("arena runs");
    assert!(board.status.success(), "{}", stderr(&board));
    let json = serde_json::from_str(&stdout(&board)).expect("json");
    let store = open_store(&dir.db());
    let t = store.find_tournament("order").unwrap().unwrap();
    let mut games = store.games(t.id).unwrap();
    let results = games.iter().map(|g| (g.index, g.result.clone())).collect();
    games.sort_by(|a, b| {
        a.finished_at
            .cmp(&b.finished_at)
            .then(a.index.cmp(&b.index))
    });
    (json, games.iter().map(|g| g.index).collect(), results)
}

#[test]
fn the_same_games_rate_the_same_at_concurrency_1_and_8() {
    if !stockfish("the_same_games_rate_the_same_at_concurrency_1_and_8") {
        return;
    }
    let (serial, serial_order, serial_results) = play("1");
    let (parallel, parallel_order, parallel_results) = play("8");
    assert_eq!(serial_results.len(), 40);
    assert_eq!(
        serial_results, parallel_results,
        "the games themselves are the same"
    );
    let schedule: Vec<u32> = (1..=40).collect();
    assert_eq!(serial_order, schedule);
    // Without this the comparison below could not fail.
    assert_ne!(
        parallel_order, schedule,
        "at concurrency 8 some games finish out of schedule order"
    );
    for table in [
        "order · ratings (Glicko-1)",
        "order · ratings (Bradley-Terry)",
        "order · Bradley-Terry fit",
    ] {
        let rows = crate::common::json_rows(&serial, table);
        assert!(!rows.is_empty(), "{table} in {serial}");
        assert_eq!(rows, crate::common::json_rows(&parallel, table), "{table}");
    }
    assert_eq!(serial, parallel);

    // The Bradley–Terry table: ordo's columns, the mean at 0, one row per player.
    let bt = crate::common::json_rows(&serial, "order · ratings (Bradley-Terry)");
    assert_eq!(bt.len(), 5);
    for column in [
        "rank",
        "name",
        "elo",
        "plus_minus",
        "games",
        "score",
        "draws",
        "rank_held",
    ] {
        assert!(bt[0].get(column).is_some(), "{column} in {}", bt[0]);
    }
    let mean = bt.iter().map(|r| r["elo"].as_f64().unwrap()).sum::<f64>() / 5.0;
    assert!(mean.abs() < 0.1, "{mean}");
    assert!(bt[0]["name"].as_str().unwrap().starts_with("sf-"), "{bt:?}");
    assert_eq!(
        crate::common::json_rows(&serial, "order · Bradley-Terry fit")[0]["resampled"],
        "opening pairs"
    );
}

/// The schema of `--format json` (docs/schema/tables.schema.json), compiled.
pub(crate) fn json_schema() -> jsonschema::Validator {
    schema("tables.schema.json")
}

/// A schema of `docs/schema`, compiled.
fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schema")
        .join(name);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(path).expect("the schema is in the repository"),
    )
    .expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema is a valid JSON Schema")
}

/// Fails with every schema error when `doc` does not follow `validator`'s schema.
pub(crate) fn assert_valid(validator: &jsonschema::Validator, doc: &serde_json::Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not follow its schema:\n{}\n{doc}",
        errors.join("\n")
    );
}

#[test]
fn the_leaderboards_json_follows_its_published_schema() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "schema", games_per_pair = 2, max_plies = 16, seed = 2,
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 3 }, arena.random { name = "c", seed = 4 } },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let validator = json_schema();
    let board = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--stats",
            "--games",
            "--ladder",
            "a=1000",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(board.status.success(), "{}", stderr(&board));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&board)).expect("json");
    assert_valid(&validator, &doc, "arena leaderboard --format json");
    let tables = doc["tables"].as_array().unwrap();
    let kinds: Vec<&str> = tables.iter().filter_map(|t| t["kind"].as_str()).collect();
    for kind in ["standings", "glicko", "bradley_terry", "games", "ladder"] {
        assert!(kinds.contains(&kind), "no `{kind}` table in {kinds:?}");
    }
    assert!(
        tables.iter().all(|t| t["tournament"] == "schema"),
        "every table names its tournament"
    );
    // The schema can fail: a row keyed by a title-cased label is refused.
    let standings = tables
        .iter()
        .position(|t| t["kind"] == "standings")
        .unwrap();
    let mut broken = doc.clone();
    broken["tables"][standings]["rows"][0]["Score %"] = 50.into();
    assert!(!validator.is_valid(&broken));
    // A standings row whose games are not a whole number is refused by its typed row.
    let mut typed = doc.clone();
    typed["tables"][standings]["rows"][0]["games"] = "two".into();
    assert!(!validator.is_valid(&typed));
    let mut old = doc.clone();
    old["schema_version"] = 0.into();
    assert!(!validator.is_valid(&old));
}

#[test]
fn the_jsonl_exports_records_follow_their_published_schema() {
    let fake = crate::common::fake_openai(0);
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "records", games_per_pair = 2, max_plies = 8, seed = 2, concurrency = 1,
  players = {{
    arena.llm {{ name = "m", model = "fake", base_url = "{}", mode = "blitz" }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fake.url
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let validator = schema("jsonl.schema.json");
    for what in ["games", "plies", "calls"] {
        let file = format!("{what}.jsonl");
        let out = dir
            .arena()
            .args([
                "export", "jsonl", "--db", "t.db", "--what", what, "--out", &file,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let text = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        let records: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert!(!records.is_empty(), "no {what}");
        for record in &records {
            assert_valid(&validator, record, &format!("a `{what}` record"));
        }
        // The schema can fail: a record keyed by a label with a space is refused.
        let mut broken = records[0].clone();
        broken["Game Id"] = 1.into();
        assert!(!validator.is_valid(&broken), "{what}");
    }
}
