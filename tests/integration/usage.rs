//! Provider-reported usage: a provider's own price (OpenRouter's `usage.cost`) is stored per call,
//! spent by budgets, shown by the leaderboard and exported, and a failed attempt keeps what it
//! was billed. The local model reports no price, so those tests use a loopback server that
//! answers as OpenRouter does; the local model itself still gives table-priced calls.

use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use crate::common::{TestDir, llm_player, local_llm, open_store, stderr, stdout};

/// A mode that plays the first legal move whatever the model says: the test is about what each
/// call cost, not about the answers.
const FIRST_MOVE_MODE: &str = r#"
local M = {}
M.defaults = { max_attempts = 1 }
function M.start(ctx)
  return { { role = "user", content = "Position " .. ctx.fen .. ". Your move?" } }
end
function M.reply(ctx, text)
  return { move = ctx.legal_uci[1] }
end
return M
"#;

/// OpenRouter's response shape (usage accounting): a price in `usage.cost`, cached and
/// reasoning tokens in the details.
fn openrouter_reply(cost: f64) -> serde_json::Value {
    serde_json::json!({
        "id": "gen-1", "provider": "OpenAI", "model": "openai/gpt-4o-mini",
        "object": "chat.completion", "created": 1_761_000_000,
        "choices": [{"index": 0, "finish_reason": "stop", "native_finish_reason": "stop",
                     "message": {"role": "assistant", "content": "I play the first move."}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020,
                  "cost": cost, "is_byok": false,
                  "prompt_tokens_details": {"cached_tokens": 800, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 5},
                  "cost_details": {"upstream_inference_cost": null}}
    })
}

/// `arena ARGS` on a blocking thread, so that the mock server keeps answering meanwhile.
async fn arena_off_the_runtime(dir: &TestDir, args: &[&str]) -> std::process::Output {
    let mut cmd = dir.arena();
    cmd.args(args);
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_priced_calls_are_stored_shown_exported_and_stop_a_usd_budget() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"data": []})))
        .mount(&server)
        .await;
    // The first request gets what OpenRouter sends when an upstream fails after billing: a 200
    // without choices whose usage carries a price. It is retried, and its price still counts.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "gen-0", "choices": [],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 0, "total_tokens": 1000,
                      "cost": 0.005}
        })))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openrouter_reply(0.01)))
        .mount(&server)
        .await;

    let dir = TestDir::new();
    dir.write("modes/first.lua", FIRST_MOVE_MODE);
    // gpt-4o-mini's table price would make each call cost about $0.0001 (800 of its 1000 prompt
    // tokens cached): the $0.03 budget is reached only by the provider's $0.01 per call.
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "priced", games_per_pair = 3, max_plies = 4, seed = 1, concurrency = 1,
  players = {{
    arena.llm {{ name = "m", base_url = "{}/v1", model = "openai/gpt-4o-mini", mode = "first",
                 decode_retries = 1, budget = {{ usd = 0.03 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            server.uri()
        ),
    );
    let out = arena_off_the_runtime(&dir, &["run", "t.lua", "--db", "t.db", "--no-watch"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // Game 1: the billed failure and two calls ($0.025, under the budget); game 2: two more
    // calls ($0.045); game 3 is held back.
    assert!(
        err.contains("budget: the usd budget of player `m` is reached: $0.0450 spent of $0.0300")
            && err.contains("1 game(s) not started (game 3)"),
        "{err}"
    );

    let store = open_store(&dir.db());
    let t = store.find_tournament("priced").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let mut calls = Vec::new();
    for g in &games {
        calls.extend(store.game_calls(g.id).unwrap());
    }
    assert_eq!(calls.len(), 4, "{calls:?}");
    for c in &calls {
        let d = &c.call.details;
        assert_eq!(d.provider_cost_usd, Some(0.01), "{c:?}");
        assert_eq!(
            (d.cached_tokens, d.reasoning_tokens, d.cache_write_tokens),
            (Some(800), Some(5), None)
        );
        assert_eq!(
            d.cost_details_json.as_deref(),
            Some(r#"{"upstream_inference_cost":null}"#)
        );
    }
    let failed = store.failed_calls(games[0].id).unwrap();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].call.details.provider_cost_usd, Some(0.005));
    assert_eq!(failed[0].call.prompt_tokens, Some(1000));
    drop(store);

    // The leaderboard prices the calls by the provider and says so.
    let out = arena_off_the_runtime(&dir, &["leaderboard", "--db", "t.db", "--llm-chess"]).await;
    let board = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        board.contains("calls priced by the provider by m (4 of 4)"),
        "{board}"
    );
    // Two finished games, $0.02 each.
    let row = board
        .lines()
        .find(|l| l.trim_start().starts_with("m "))
        .unwrap_or_else(|| panic!("no row for m: {board}"));
    assert!(row.contains("0.0200"), "{row}");

    // The calls export says who priced each call.
    let out = arena_off_the_runtime(
        &dir,
        &[
            "export",
            "jsonl",
            "--db",
            "t.db",
            "--what",
            "calls",
            "--out",
            "calls.jsonl",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = std::fs::read_to_string(dir.path().join("calls.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(
            (&r["cost_source"], &r["cost_usd"], &r["cached_tokens"]),
            (
                &serde_json::json!("provider"),
                &serde_json::json!(0.01),
                &serde_json::json!(800)
            ),
            "{r}"
        );
    }
}

#[test]
fn the_local_model_s_calls_are_priced_by_the_table() {
    let Some(url) = local_llm("the_local_model_s_calls_are_priced_by_the_table") else {
        return;
    };
    let dir = TestDir::new();
    let model = llm_player(
        &url,
        "m",
        "legal_moves = true, max_attempts = 1, grammar = true",
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "local", games_per_pair = 1, max_plies = 2, seed = 1, concurrency = 1,
  prices = {{ ["smollm2-135m-instruct"] = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }} }},
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = dir
        .arena()
        .args([
            "export",
            "jsonl",
            "--db",
            "t.db",
            "--what",
            "calls",
            "--out",
            "calls.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = std::fs::read_to_string(dir.path().join("calls.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    for r in &rows {
        // llama.cpp reports tokens (and its prompt cache) but no price.
        assert_eq!(r["cost_source"], "table", "{r}");
        let prompt = r["prompt_tokens"].as_f64().unwrap();
        let completion = r["completion_tokens"].as_f64().unwrap();
        let cost = r["cost_usd"].as_f64().unwrap();
        assert!(
            cost <= (prompt + 2.0 * completion) / 1e6 + 1e-15 && cost > 0.0,
            "{r}"
        );
        assert!(r["cost_details"].is_null(), "{r}");
    }
    let store = open_store(&dir.db());
    let t = store.find_tournament("local").unwrap().unwrap();
    for g in store.games(t.id).unwrap() {
        for c in store.game_calls(g.id).unwrap() {
            assert_eq!(c.call.details.provider_cost_usd, None, "{c:?}");
        }
    }
}
