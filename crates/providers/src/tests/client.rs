//! Client tests: faults from a wiremock server on loopback, and the real local model when
//! `LOCAL_LLM_URL` is set.

use std::{
    net::TcpListener,
    time::{Duration, Instant},
};

use serde_json::{Map, Value, json};
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{body_partial_json, header, method, path},
};

use super::*;

fn client() -> LlmClient {
    let _ = rustls::crypto::ring::default_provider().install_default();
    LlmClient::new().expect("http client")
}

/// A fast-failing endpoint for fault tests: small delays keep the suite quick.
fn endpoint(base: &str) -> Endpoint {
    Endpoint {
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            give_up_after: Duration::from_secs(30),
            decode_retries: 3,
        },
        ..Endpoint::new(format!("{base}/v1"))
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "test-model".into(),
        messages: vec![
            ChatMessage::new("system", "You play chess."),
            ChatMessage::new("user", "Your move?"),
        ],
        max_tokens: Some(32),
        ..ChatRequest::default()
    }
}

fn reply_body(content: &str) -> Value {
    json!({
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        "timings": {"predicted_ms": 12.5}
    })
}

fn ok(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(reply_body(content))
}

fn chat_path() -> wiremock::matchers::PathExactMatcher {
    path("/v1/chat/completions")
}

async fn requests_seen(server: &MockServer) -> usize {
    server
        .received_requests()
        .await
        .expect("request recording is on")
        .len()
}

#[tokio::test]
async fn success_reads_content_usage_and_timing() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .and(body_partial_json(
            json!({"model": "test-model", "max_tokens": 32}),
        ))
        .respond_with(ok("e2e4"))
        .expect(1)
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply");
    assert_eq!(reply.content, "e2e4");
    assert_eq!(reply.reasoning, None);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(reply.usage.map(|u| u.total_tokens), Some(13));
    assert_eq!(reply.http_status, 200);
    assert_eq!(reply.transport_retries, 0);
    assert!(reply.raw_body.contains("timings"));
}

#[tokio::test]
async fn extra_body_is_merged_into_the_request() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .and(body_partial_json(json!({
            "grammar": "root ::= \"e2e4\"",
            "chat_template_kwargs": {"enable_thinking": false},
            "seed": 7
        })))
        .respond_with(ok("e2e4"))
        .expect(1)
        .mount(&server)
        .await;
    let mut extra_body = Map::new();
    extra_body.insert("grammar".into(), json!("root ::= \"e2e4\""));
    extra_body.insert(
        "chat_template_kwargs".into(),
        json!({"enable_thinking": false}),
    );
    let req = ChatRequest {
        seed: Some(7),
        extra_body,
        ..request()
    };
    let reply = client()
        .chat(&endpoint(&server.uri()), &req)
        .await
        .expect("reply");
    assert_eq!(reply.content, "e2e4");
}

#[tokio::test]
async fn rate_limit_honours_retry_after_and_counts_the_retry() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("d2d4"))
        .mount(&server)
        .await;
    let start = Instant::now();
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply after retry");
    // The backoff alone is at most 40 ms: only Retry-After explains a 1 s wait.
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(reply.content, "d2d4");
    assert_eq!(reply.transport_retries, 1);
    assert_eq!(requests_seen(&server).await, 2);
}

#[tokio::test]
async fn server_errors_are_retried() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("e2e4"))
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply after retries");
    assert_eq!(reply.content, "e2e4");
    assert_eq!(reply.transport_retries, 2);
}

#[tokio::test]
async fn persistent_server_errors_give_up_after_max_attempts() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .mount(&server)
        .await;
    let err = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect_err("gives up");
    assert!(
        matches!(&err, LlmError::Http { status: 503, body, .. } if body == "overloaded"),
        "{err:?}"
    );
    assert!(err.is_transient());
    assert_eq!(requests_seen(&server).await, 4);
}

#[tokio::test]
async fn unauthorized_is_fatal_and_not_retried() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(401).set_body_string("{\"error\":\"bad key\"}"))
        .mount(&server)
        .await;
    let err = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect_err("401");
    assert!(matches!(err, LlmError::Http { status: 401, .. }), "{err:?}");
    assert!(!err.is_transient());
    assert!(err.to_string().contains("http 401"), "{err}");
    assert_eq!(requests_seen(&server).await, 1);
}

/// A loopback port with nothing listening.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port");
    listener.local_addr().expect("local address").port()
}

#[tokio::test]
async fn connection_refused_is_unreachable_after_max_attempts() {
    formats();
    let port = closed_port();
    let ep = endpoint(&format!("http://127.0.0.1:{port}"));
    let err = client().chat(&ep, &request()).await.expect_err("refused");
    match &err {
        LlmError::Unreachable { attempts, url, .. } => {
            assert_eq!(*attempts, 4);
            assert_eq!(url, &format!("http://127.0.0.1:{port}/v1/chat/completions"));
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(err.is_transient());
    let probe = client().probe(&ep).await.expect_err("refused");
    assert!(
        matches!(probe, LlmError::Unreachable { attempts: 1, .. }),
        "{probe:?}"
    );
}

#[tokio::test]
async fn slow_replies_time_out_and_are_retried() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("late").set_delay(Duration::from_secs(3)))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("e2e4"))
        .mount(&server)
        .await;
    let ep = Endpoint {
        timeout: Duration::from_millis(300),
        ..endpoint(&server.uri())
    };
    let reply = client().chat(&ep, &request()).await.expect("reply");
    assert_eq!(reply.content, "e2e4");
    assert_eq!(reply.transport_retries, 1);
}

#[tokio::test]
async fn persistent_timeouts_are_transient_errors() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("late").set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let ep = Endpoint {
        timeout: Duration::from_millis(200),
        retry: RetryPolicy {
            max_attempts: 2,
            ..endpoint("").retry
        },
        ..endpoint(&server.uri())
    };
    let err = client().chat(&ep, &request()).await.expect_err("timeout");
    assert!(
        matches!(err, LlmError::Timeout { attempts: 2, .. }),
        "{err:?}"
    );
    assert!(err.is_transient());
}

#[tokio::test]
async fn malformed_bodies_and_empty_choices_are_retried() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"choices\": [{\"mess"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"choices": []})))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("g1f3"))
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply");
    assert_eq!(reply.content, "g1f3");
    assert_eq!(reply.transport_retries, 2);
}

#[tokio::test]
async fn persistently_malformed_bodies_end_in_a_decode_error() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>gateway</html>"))
        .mount(&server)
        .await;
    // Plenty of attempts and time: the decode budget alone must stop it.
    let mut ep = endpoint(&server.uri());
    ep.retry.max_attempts = 20;
    ep.retry.decode_retries = 2;
    let mut shown = Vec::new();
    let err = client()
        .chat_observed(&ep, &request(), |failed| {
            shown.push((
                failed.attempt,
                failed.http_status,
                failed.body.to_owned(),
                failed.headers.to_vec(),
            ));
            std::ops::ControlFlow::Continue(())
        })
        .await
        .expect_err("decode");
    assert!(
        matches!(&err, LlmError::Decode { body, attempts: 3, .. } if body == "<html>gateway</html>"),
        "{err:?}"
    );
    assert_eq!(requests_seen(&server).await, 3, "one try and two retries");
    assert_eq!(shown.len(), 3);
    for (i, (attempt, status, body, headers)) in shown.iter().enumerate() {
        assert_eq!((*attempt, *status), (i as u32 + 1, 200));
        assert_eq!(body, "<html>gateway</html>");
        assert!(
            headers
                .iter()
                .any(|(n, v)| n == "content-type" && v.starts_with("text/plain")),
            "{headers:?}"
        );
    }
}

#[tokio::test]
async fn an_observer_that_cannot_keep_a_failure_stops_the_retries() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(503).set_body_string("busy"))
        .mount(&server)
        .await;
    let err = client()
        .chat_observed(&endpoint(&server.uri()), &request(), |_| {
            std::ops::ControlFlow::Break(())
        })
        .await
        .expect_err("stopped");
    assert!(matches!(err, LlmError::Http { status: 503, .. }), "{err:?}");
    assert_eq!(requests_seen(&server).await, 1);
}

#[tokio::test]
async fn reasoning_field_and_think_blocks_are_captured() {
    formats();
    let server = MockServer::start().await;
    let body = json!({"choices": [{"finish_reason": "stop", "message": {
        "content": "<think>the knight is loose</think>\nNxe5",
        "reasoning_content": "count material first"
    }}]});
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply");
    assert_eq!(reply.content, "Nxe5");
    assert_eq!(
        reply.reasoning.as_deref(),
        Some("count material first\n\nthe knight is loose")
    );
    assert_eq!(reply.usage, None);
}

#[tokio::test]
async fn null_content_with_reasoning_only() {
    formats();
    let server = MockServer::start().await;
    let body = json!({"choices": [{"finish_reason": "length", "message": {
        "content": null, "reasoning_content": "still thinking"
    }}]});
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply");
    assert_eq!(reply.content, "");
    assert_eq!(reply.reasoning.as_deref(), Some("still thinking"));
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
}

#[tokio::test]
async fn think_blocks_are_split_from_the_answer() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("<think>\ne4 or d4?\n</think>\n\n<move>d2d4</move>"))
        .mount(&server)
        .await;
    let reply = client()
        .chat(&endpoint(&server.uri()), &request())
        .await
        .expect("reply");
    assert_eq!(reply.content, "<move>d2d4</move>");
    assert_eq!(reply.reasoning.as_deref(), Some("e4 or d4?"));
}

const KEY_ENV: &str = "ARENA_LLM_TEST_KEY";
const KEY: &str = "sk-test-5f1c9e0b7a";

fn set_test_key() {
    // SAFETY: set before any request of this test and never changed or removed; std serialises
    // its own environment access, and nothing in these tests reads the environment from C code.
    unsafe { std::env::set_var(KEY_ENV, KEY) };
}

#[tokio::test]
async fn api_key_is_sent_as_bearer_and_never_shown() {
    formats();
    set_test_key();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ok("e2e4"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    // A server that echoes the key back in its error body.
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(401).set_body_string(format!("invalid key {KEY}")))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": []})))
        .mount(&server)
        .await;
    let ep = Endpoint {
        api_key_env: Some(KEY_ENV.into()),
        ..endpoint(&server.uri())
    };
    let client = client();
    client.probe(&ep).await.expect("probe with key");
    let reply = client.chat(&ep, &request()).await.expect("reply");
    assert_eq!(reply.content, "e2e4");
    let err = client.chat(&ep, &request()).await.expect_err("401");
    for shown in [
        format!("{ep:?}"),
        format!("{client:?}"),
        format!("{reply:?}"),
        format!("{err}"),
        format!("{err:?}"),
    ] {
        assert!(!shown.contains(KEY), "key leaked: {shown}");
    }
    assert!(err.to_string().contains("invalid key [redacted]"), "{err}");
}

#[tokio::test]
async fn missing_api_key_fails_before_any_request() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ok("e2e4"))
        .mount(&server)
        .await;
    let ep = Endpoint {
        api_key_env: Some("ARENA_LLM_TEST_KEY_THAT_IS_NEVER_SET".into()),
        ..endpoint(&server.uri())
    };
    let err = client().chat(&ep, &request()).await.expect_err("no key");
    assert!(
        matches!(&err, LlmError::MissingApiKey { env } if env == "ARENA_LLM_TEST_KEY_THAT_IS_NEVER_SET")
    );
    assert!(!err.is_transient());
    let err = client().probe(&ep).await.expect_err("no key");
    assert!(matches!(err, LlmError::MissingApiKey { .. }));
    assert_eq!(requests_seen(&server).await, 0);
}

#[tokio::test]
async fn probe_reports_http_errors() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(404).set_body_string("not found"))
        .mount(&server)
        .await;
    let err = client()
        .probe(&endpoint(&server.uri()))
        .await
        .expect_err("404");
    assert!(matches!(err, LlmError::Http { status: 404, .. }), "{err:?}");
}

/// A probe's error body is read up to the body limit, as every body is: an endless one keeps
/// its head only.
#[tokio::test]
async fn a_probe_reads_an_oversized_error_body_no_further_than_the_limit() {
    formats();
    let server = MockServer::start().await;
    let huge = format!(
        "{{\"error\":{{\"message\":\"down\"}}}}{}",
        " ".repeat(MAX_RESPONSE_BYTES)
    );
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(503).set_body_string(huge))
        .mount(&server)
        .await;
    let err = client()
        .probe(&endpoint(&server.uri()))
        .await
        .expect_err("503");
    match &err {
        LlmError::Http {
            status: 503, body, ..
        } => {
            assert!(body.len() <= 64 << 10, "{}", body.len());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn bad_base_url_is_a_fatal_client_error() {
    formats();
    let ep = endpoint("not a url");
    let err = client().chat(&ep, &request()).await.expect_err("bad url");
    assert!(matches!(err, LlmError::Client { .. }), "{err:?}");
    assert!(!err.is_transient());
}

/// Sends `n` requests at once and returns the wall time they took together.
async fn concurrent_chats(
    client: &LlmClient,
    ep: &Endpoint,
    req: &ChatRequest,
    n: usize,
) -> Duration {
    let start = Instant::now();
    let replies = futures_util::future::join_all((0..n).map(|_| client.chat(ep, req))).await;
    for reply in replies {
        let reply = reply.expect("reply");
        assert!(!reply.content.is_empty());
    }
    start.elapsed()
}

#[tokio::test]
async fn concurrency_is_limited_per_base_url() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ok("e2e4").set_delay(Duration::from_millis(300)))
        .mount(&server)
        .await;
    let serial = Endpoint {
        max_concurrency: 1,
        ..endpoint(&server.uri())
    };
    let elapsed = concurrent_chats(&client(), &serial, &request(), 3).await;
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");

    let parallel = Endpoint {
        max_concurrency: 3,
        ..endpoint(&server.uri())
    };
    // Only the lower bound is asserted: tests never assert that something is fast.
    concurrent_chats(&client(), &parallel, &request(), 3).await;
}

#[test]
fn provider_names_round_trip() {
    formats();
    for (provider, name) in [
        (Provider::OpenAiChat, "openai_chat"),
        (Provider::OpenAiResponses, "openai_responses"),
        (Provider::Anthropic, "anthropic"),
        (Provider::Gemini, "gemini"),
    ] {
        assert_eq!(name.parse::<Provider>().ok(), Some(provider));
        assert_eq!(provider.to_string(), name);
        assert_eq!(
            serde_json::to_value(provider).expect("serialise"),
            json!(name)
        );
        assert_eq!(
            serde_json::from_value::<Provider>(json!(name)).ok(),
            Some(provider)
        );
    }
    assert_eq!(
        "openai".parse::<Provider>().ok(),
        Some(Provider::OpenAiChat)
    );
    assert_eq!(Provider::ALL.len(), 4);
    assert!(matches!(
        "palm".parse::<Provider>(),
        Err(LlmError::UnknownProvider { .. })
    ));
}

#[test]
fn each_format_names_the_settings_it_does_not_send() {
    formats();
    let asked = ChatRequest {
        model: "claude-sonnet-4-5".into(),
        temperature: Some(0.2),
        top_p: Some(0.9),
        seed: Some(1),
        ..ChatRequest::default()
    };
    let reasoning = ChatRequest {
        reasoning: Some(Reasoning::effort("low")),
        ..asked.clone()
    };
    let o3 = ChatRequest {
        model: "o3".into(),
        ..asked.clone()
    };
    assert_eq!(
        Provider::Anthropic.unsent_settings(&asked),
        ["temperature", "top_p", "seed"]
    );
    assert_eq!(Provider::OpenAiResponses.unsent_settings(&asked), ["seed"]);
    assert_eq!(
        Provider::OpenAiResponses.unsent_settings(&reasoning),
        ["temperature", "top_p", "seed"]
    );
    assert!(Provider::OpenAiChat.unsent_settings(&asked).is_empty());
    assert_eq!(
        Provider::OpenAiChat.unsent_settings(&o3),
        ["temperature", "top_p"]
    );
    assert!(Provider::Gemini.unsent_settings(&reasoning).is_empty());
    // What each says it drops is what its body leaves out.
    for provider in Provider::ALL {
        for req in [&asked, &reasoning, &o3] {
            let body = provider.wire().encode(req);
            for name in provider.unsent_settings(req) {
                assert!(body.get(name).is_none(), "{provider} sent {name}");
            }
        }
    }
}

#[test]
fn transient_classification() {
    formats();
    let http = |status| LlmError::Http {
        url: "u".into(),
        status,
        kind: None,
        message: None,
        body: String::new(),
        rejection: None,
        should_retry: None,
    };
    for status in [408, 409, 429, 500, 502, 503, 504, 529] {
        assert!(http(status).is_transient(), "{status}");
    }
    for status in [400, 401, 403, 404, 422] {
        assert!(!http(status).is_transient(), "{status}");
    }
    // The server's x-should-retry overrides the status, both ways.
    let told = |status, should_retry| LlmError::Http {
        url: "u".into(),
        status,
        kind: None,
        message: None,
        body: String::new(),
        rejection: None,
        should_retry: Some(should_retry),
    };
    assert!(!told(500, false).is_transient());
    assert!(!told(429, false).is_transient());
    assert!(told(400, true).is_transient());
}

#[test]
fn long_bodies_are_cut_in_messages() {
    formats();
    let err = LlmError::Http {
        url: "u".into(),
        status: 502,
        kind: None,
        message: None,
        body: "x".repeat(10_000),
        rejection: None,
        should_retry: None,
    };
    assert!(err.to_string().len() < 400);
}

// --- The real local model (skipped unless LOCAL_LLM_URL is set). ---

fn local_endpoint(test: &str) -> Option<Endpoint> {
    arena_testkit::local_llm(test).map(|url| Endpoint {
        // Other test suites may share the one-thread server.
        timeout: Duration::from_secs(180),
        ..Endpoint::new(url)
    })
}

fn local_request(prompt: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        model: std::env::var("LOCAL_LLM_MODEL")
            .unwrap_or_else(|_| "smollm2-135m-instruct".to_owned()),
        messages: vec![ChatMessage::new("user", prompt)],
        max_tokens: Some(max_tokens),
        temperature: Some(0.0),
        ..ChatRequest::default()
    }
}

#[tokio::test]
async fn local_model_answers_with_usage() {
    formats();
    let Some(ep) = local_endpoint("local_model_answers_with_usage") else {
        return;
    };
    let reply = client()
        .chat(&ep, &local_request("Name a chess opening.", 24))
        .await
        .expect("local model reply");
    assert!(!reply.content.is_empty());
    let usage = reply.usage.expect("llama.cpp reports usage");
    assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    assert_eq!(reply.http_status, 200);
}

#[tokio::test]
async fn local_model_follows_a_grammar() {
    formats();
    let Some(ep) = local_endpoint("local_model_follows_a_grammar") else {
        return;
    };
    let mut req = local_request("You are White. Give your first move.", 32);
    req.extra_body.insert(
        "grammar".into(),
        json!(r#"root ::= "<move>" ("e2e4" | "d2d4") "</move>""#),
    );
    let reply = client().chat(&ep, &req).await.expect("local model reply");
    assert!(
        ["<move>e2e4</move>", "<move>d2d4</move>"].contains(&reply.content.as_str()),
        "{:?}",
        reply.content
    );
}

#[tokio::test]
async fn local_model_probe_succeeds() {
    formats();
    let Some(ep) = local_endpoint("local_model_probe_succeeds") else {
        return;
    };
    client().probe(&ep).await.expect("probe");
}

#[tokio::test]
async fn local_model_serves_queued_requests() {
    formats();
    let Some(ep) = local_endpoint("local_model_serves_queued_requests") else {
        return;
    };
    let ep = Endpoint {
        max_concurrency: 1,
        ..ep
    };
    concurrent_chats(&client(), &ep, &local_request("Say a move.", 8), 3).await;
}

#[test]
fn only_openrouter_is_known_to_price_every_call() {
    formats();
    assert!(reports_its_cost("https://openrouter.ai/api/v1"));
    assert!(reports_its_cost("https://eu.OpenRouter.ai/api/v1"));
    assert!(!reports_its_cost("https://api.openai.com/v1"));
    assert!(!reports_its_cost("https://openrouter.ai.example.com/v1"));
    assert!(!reports_its_cost("not a url"));
}

/// A body over the size limit is refused unread (its head kept), as a decode failure.
#[tokio::test]
async fn an_oversized_body_is_refused_as_a_decode_failure() {
    formats();
    let server = MockServer::start().await;
    let huge = format!(
        "{{\"choices\":[{{\"message\":{{\"content\":\"{}\"}}}}]}}",
        "e".repeat(MAX_RESPONSE_BYTES)
    );
    Mock::given(method("POST"))
        .and(chat_path())
        .respond_with(ResponseTemplate::new(200).set_body_string(huge))
        .mount(&server)
        .await;
    let mut ep = endpoint(&server.uri());
    ep.retry.decode_retries = 0;
    let err = client().chat(&ep, &request()).await.expect_err("too large");
    match &err {
        LlmError::Decode { detail, body, .. } => {
            assert!(detail.contains("over the limit of 8 MiB"), "{detail}");
            assert!(body.len() <= 64 << 10, "{}", body.len());
        }
        other => panic!("{other:?}"),
    }
}
