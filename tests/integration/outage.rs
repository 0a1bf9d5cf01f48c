//! An endpoint that goes down mid-tournament pauses the model's games with backoff; when it stays
//! down they are set aside (exit code 1), never forfeited, and the next run finishes them. A real
//! server cannot be made to fail on demand, so this one test uses a mock endpoint.

use arena::store::GameStatus;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{method, path},
};

use crate::common::{TestDir, open_store, stderr};

async fn serve_models(server: &MockServer) {
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"data": []})))
        .mount(server)
        .await;
}

/// `arena run t.lua` on a blocking thread, so that the mock server keeps answering meanwhile.
async fn run_off_the_runtime(dir: &TestDir) -> std::process::Output {
    let path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
            .current_dir(path)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_endpoint_outage_sets_games_aside_instead_of_forfeiting() {
    let server = MockServer::start().await;
    serve_models(&server).await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;

    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "outage", games_per_pair = 2, max_plies = 6, concurrency = 2,
  players = {{
    arena.llm {{ name = "flaky", base_url = "{}/v1", model = "m", outage_s = 2,
                 options = {{ parser = "tolerant" }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            server.uri()
        ),
    );
    let first = run_off_the_runtime(&dir).await;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert!(stderr(&first).contains("set aside"), "{}", stderr(&first));

    let store = open_store(&dir.db());
    let t = store.find_tournament("outage").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 2);
    assert!(
        games.iter().all(|g| g.status == GameStatus::Errored),
        "{games:?}"
    );
    assert!(
        games.iter().all(|g| g.termination.is_none()),
        "an outage is never a forfeit"
    );
    let events = store.events(t.id).unwrap();
    assert!(
        events.iter().any(|e| e.kind == "endpoint_unreachable"),
        "{events:?}"
    );
    drop(store);

    // The endpoint comes back: the same command finishes both games.
    server.reset().await;
    serve_models(&server).await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "I play e7e5"}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
        })))
        .mount(&server)
        .await;
    let second = run_off_the_runtime(&dir).await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let store = open_store(&dir.db());
    assert!(
        store
            .games(t.id)
            .unwrap()
            .iter()
            .all(|g| g.status == GameStatus::Finished)
    );
}
