//! `arena export sft|positions|jsonl` on a real local-model tournament (the chats round-trip to
//! the stored requests and parse with Python's json; the positions match the store; the manifest
//! names no key), and `arena export jsonl` on a large synthetic store (500 MB of calls) in bounded
//! memory.

use std::{collections::HashMap, process::Command, time::Duration};

use arena::store::{PlayerRecord, ScheduledGame};
use serde_json::Value;

use crate::common::{TestDir, llm_player, local_llm, open_store, stderr, stockfish};

/// A key value set in the environment of every command; it must appear in no output.
const SECRET: &str = "sk-datasets-test-9f8e7d6c5b4a";

fn lines(dir: &TestDir, file: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.path().join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_datasets_of_a_local_model_tournament_match_the_store() {
    let Some(url) = local_llm("the_datasets_of_a_local_model_tournament_match_the_store") else {
        return;
    };
    if !stockfish("the_datasets_of_a_local_model_tournament_match_the_store") {
        return;
    }
    let dir = TestDir::new();
    let model = llm_player(
        &url,
        "smol",
        "legal_moves = true, max_attempts = 3, grammar = true",
    )
    .replace(
        "max_concurrency = 1,",
        "max_concurrency = 1, api_key_env = \"ARENA_DATASETS_TEST_KEY\",",
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "sft", games_per_pair = 2, max_plies = 8, seed = 5, concurrency = 1,
  analysis = {{ depth = 6, processes = 1 }},
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let run = dir
        .arena()
        .env("ARENA_DATASETS_TEST_KEY", SECRET)
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let export = |args: &[&str]| {
        let out = dir
            .arena()
            .env("ARENA_DATASETS_TEST_KEY", SECRET)
            .arg("export")
            .args(args)
            .args(["--db", "t.db"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };

    // SFT: one chat per accepted call, its messages the stored request's, then the reply.
    export(&[
        "sft",
        "--out",
        "sft.jsonl",
        "--manifest",
        "sft.manifest.json",
    ]);
    let store = open_store(&dir.db());
    let t = store.find_tournament("sft").unwrap().unwrap();
    let mut accepted = Vec::new();
    for g in store.games(t.id).unwrap() {
        for p in store.plies(g.id).unwrap() {
            if let Some(c) = store
                .llm_calls(g.id, p.ply)
                .unwrap()
                .into_iter()
                .rfind(|c| c.outcome.as_deref() == Some("move"))
            {
                accepted.push(c);
            }
        }
    }
    assert!(!accepted.is_empty(), "the model made moves");
    let chats = lines(&dir, "sft.jsonl");
    assert_eq!(chats.len(), accepted.len());
    for (chat, call) in chats.iter().zip(&accepted) {
        let request: Value = serde_json::from_str(&call.call.request_json).unwrap();
        let mut messages = chat["messages"].as_array().unwrap().clone();
        let last = messages.pop().unwrap();
        assert_eq!(&Value::Array(messages), &request["messages"]);
        assert_eq!(last["role"], "assistant");
        assert_eq!(last["content"].as_str(), call.call.reply_text.as_deref());
    }
    // Python's json reads every line, and every chat ends with the assistant.
    let py = Command::new("python3")
        .args([
            "-c",
            "import json,sys\nn=0\nfor l in open(sys.argv[1]):\n    m=json.loads(l)['messages']\n    assert m[-1]['role']=='assistant'\n    n+=1\nprint(n)",
            "sft.jsonl",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(py.status.success(), "{}", stderr(&py));
    assert_eq!(
        String::from_utf8_lossy(&py.stdout).trim(),
        chats.len().to_string()
    );

    // --rewrite best answers with the engine's best move, fenced; --filter best keeps fewer.
    export(&["sft", "--out", "best.jsonl", "--rewrite", "best", "--meta"]);
    for chat in lines(&dir, "best.jsonl") {
        let best = chat["meta"]["best"].as_str().unwrap();
        let last = chat["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["content"], format!("```\n{best}\n```"));
    }
    export(&[
        "sft",
        "--out",
        "only-best.jsonl",
        "--filter",
        "best",
        "--meta",
    ]);
    for chat in lines(&dir, "only-best.jsonl") {
        assert_eq!(chat["meta"]["played"], chat["meta"]["best"]);
    }

    // Positions: one per analysed ply, as stored.
    export(&["positions", "--out", "positions.jsonl"]);
    let positions = lines(&dir, "positions.jsonl");
    let mut expected = HashMap::new();
    for g in store.games(t.id).unwrap() {
        let plies = store.plies(g.id).unwrap();
        for a in store.ply_analyses(g.id).unwrap() {
            expected.insert((g.id, a.ply), (plies[a.ply as usize].clone(), a));
        }
    }
    assert_eq!(positions.len(), expected.len());
    for p in &positions {
        let key = (
            p["game_id"].as_i64().unwrap(),
            p["ply"].as_u64().unwrap() as u32,
        );
        let (ply, a) = &expected[&key];
        assert_eq!(p["fen"], ply.fen_before.as_str());
        assert_eq!(p["played"], ply.uci.as_str());
        assert_eq!(p["player"], ply.player.as_str());
        assert_eq!(p["best"].as_str(), a.best.as_deref());
        let side = if ply.fen_before.split(' ').nth(1) == Some("w") {
            "white"
        } else {
            "black"
        };
        assert_eq!(p["side"], side);
        assert!(
            p["legal_moves"]
                .as_array()
                .unwrap()
                .contains(&Value::from(ply.uci.as_str()))
        );
        let top: Vec<Value> = serde_json::from_str(&a.top_json).unwrap();
        assert_eq!(p["top_moves"].as_array().unwrap().len(), top.len());
        let win = p["top_moves"][0]["win_percent"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&win), "{p}");
        let mode = if ply.player == "smol" {
            Value::from("blitz")
        } else {
            Value::Null
        };
        assert_eq!(p["mode"], mode, "{p}");
    }

    // JSONL and the manifest: counts, scripts, players, and no key anywhere.
    for what in ["calls", "plies", "games"] {
        export(&["jsonl", "--what", what, "--out", &format!("{what}.jsonl")]);
    }
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["export"]["what"], "games");
    assert_eq!(manifest["arena_version"], env!("CARGO_PKG_VERSION"));
    let entry = &manifest["tournaments"][0];
    let calls = lines(&dir, "calls.jsonl");
    assert_eq!(
        entry["counts"]["llm_calls"].as_u64().unwrap(),
        calls.len() as u64
    );
    assert_eq!(entry["counts"]["games"], 2);
    let generation = &entry["script_generations"][0];
    let game = &store.games(t.id).unwrap()[0];
    assert_eq!(
        generation["script_hash"].as_str(),
        game.script_hash.as_deref()
    );
    assert!(!generation["files"].as_array().unwrap().is_empty());
    let smol = entry["players"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "smol")
        .unwrap();
    assert_eq!(smol["model"], "smollm2-135m-instruct");
    assert_eq!(smol["mode"], "blitz");
    assert!(
        entry["analysis_engines"][0]["engine"]
            .as_str()
            .unwrap()
            .contains("Stockfish")
    );
    for file in [
        "manifest.json",
        "sft.manifest.json",
        "sft.jsonl",
        "calls.jsonl",
        "plies.jsonl",
        "games.jsonl",
        "positions.jsonl",
    ] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(!text.contains(SECRET), "{file} holds the key");
    }
}

/// Peak resident memory of a running process in KiB (`VmHWM`), if it still runs.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_jsonl_export_of_a_large_store_runs_in_bounded_memory() {
    // Fewer, larger rows than a million: the same bytes to stream, a fifth of the debug-build
    // time in CI.
    const CALLS: u64 = 200_000;
    let dir = TestDir::new();
    {
        let store = open_store(&dir.db());
        let t = store.open_tournament("big", "big.lua", "{}").unwrap();
        for name in ["a", "b"] {
            store
                .upsert_player(t.id, &PlayerRecord::new(name, "llm", "{}"))
                .unwrap();
        }
        store
            .schedule_games(t.id, &[ScheduledGame::new(0, 0, "a", "b")])
            .unwrap();
    }
    // The store API writes one call per transaction; a recursive insert fills the rows at once
    // (each ~2.5 kB, so the export writes far more than the memory bound below).
    let conn = rusqlite::Connection::open(dir.db()).unwrap();
    conn.execute_batch(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {CALLS})
         INSERT INTO llm_calls (game_id, ply, seq, player, model, endpoint, request_json,
             reply_text, prompt_tokens, completion_tokens, latency_ms, transport_retries, outcome)
         SELECT (SELECT id FROM games), i, 0, 'a', 'm', 'http://x',
             '{{\"messages\":[{{\"role\":\"user\",\"content\":\"' || hex(randomblob(600)) || '\"}}]}}',
             hex(randomblob(600)), 10, 5, 1, 0, 'move' FROM n;"
    ))
    .unwrap();
    drop(conn);
    let mut child = dir
        .arena()
        .args([
            "export",
            "jsonl",
            "--what",
            "calls",
            "--db",
            "t.db",
            "--out",
            "calls.jsonl",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak = 0;
    // VmHWM only grows, so its last reading before the process exits is (nearly) its peak.
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let size = std::fs::metadata(dir.path().join("calls.jsonl"))
        .unwrap()
        .len();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("manifest.json")).unwrap())
            .unwrap();
    std::fs::remove_file(dir.path().join("calls.jsonl")).unwrap();
    assert_eq!(manifest["export"]["rows"], CALLS);
    assert!(size > 400_000_000, "the export wrote {size} bytes");
    eprintln!("peak RSS {peak} KiB for a {size}-byte export of {CALLS} calls");
    assert!(peak > 0, "the export's memory was read");
    // Generous: the binary and SQLite's page cache take a few tens of MiB; holding the rows would
    // take gigabytes.
    assert!(
        peak < 200 * 1024,
        "peak RSS {peak} KiB for a {size}-byte export"
    );
}
