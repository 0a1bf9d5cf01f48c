//! Tests of the non-chat-completions wire formats through the whole client: the real local
//! llama.cpp server (its `/v1/responses` and `/v1/messages`) when `LOCAL_LLM_URL` is set, and
//! recorded provider responses served by wiremock for what a local server cannot produce
//! (thinking blocks, provider errors, rate-limit headers).

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{body_partial_json, header, method, path},
};

use super::*;

fn client() -> LlmClient {
    let _ = rustls::crypto::ring::default_provider().install_default();
    LlmClient::new().expect("http client")
}

/// A fast-failing endpoint of `provider` on a mock server, with the test key variable.
fn endpoint(provider: Provider, base: &str) -> Endpoint {
    set_test_key();
    Endpoint {
        provider,
        api_key_env: Some(KEY_ENV.into()),
        timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            give_up_after: Duration::from_secs(30),
            decode_retries: 3,
        },
        ..Endpoint::new(format!("{base}/v1"))
    }
}

const KEY_ENV: &str = "ARENA_LLM_PROVIDER_TEST_KEY";
const KEY: &str = "sk-ant-test-73c1d9e4f2";

fn set_test_key() {
    // SAFETY: every test sets the same value before its first request and nothing removes it;
    // std serialises its own environment access, and no C code here reads the environment.
    unsafe { std::env::set_var(KEY_ENV, KEY) };
}

fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages: vec![
            ChatMessage::new("system", "You play chess."),
            ChatMessage::new("user", "1. e4 c5. Your move?"),
        ],
        max_tokens: Some(512),
        ..ChatRequest::default()
    }
}

fn fixture(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.to_owned(), "application/json")
}

async fn requests_seen(server: &MockServer) -> usize {
    server
        .received_requests()
        .await
        .expect("request recording is on")
        .len()
}

/// Mounts `first` for one request and `then` for every later one on `POST route`.
async fn mount_sequence(
    server: &MockServer,
    route: &str,
    first: ResponseTemplate,
    then: ResponseTemplate,
) {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(server)
        .await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(then)
        .mount(server)
        .await;
}

// --- Each provider's request and reply, end to end through the client. ---

#[tokio::test]
async fn anthropic_sends_its_headers_and_reads_thinking() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("anthropic-version", crate::anthropic::API_VERSION))
        .and(body_partial_json(json!({
            "model": "claude-sonnet-4-20250514",
            "system": "You play chess.",
            "messages": [{"role": "user", "content": "1. e4 c5. Your move?"}],
            "thinking": {"type": "enabled", "budget_tokens": 2048},
            "max_tokens": 2048 + 512,
        })))
        .respond_with(fixture(
            200,
            include_str!("../../../llm/src/fixtures/anthropic_thinking.json"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let req = ChatRequest {
        temperature: Some(0.3),
        reasoning: Some(Reasoning::budget_tokens(2048)),
        ..request("claude-sonnet-4-20250514")
    };
    let reply = client()
        .chat(&endpoint(Provider::Anthropic, &server.uri()), &req)
        .await
        .expect("reply");
    assert_eq!(reply.content, "<move>g1f3</move>");
    assert!(
        reply
            .reasoning
            .as_deref()
            .is_some_and(|r| r.starts_with("Black answered 1.e4"))
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(reply.usage.and_then(|u| u.cached_tokens), Some(2048));
    let sent = &server.received_requests().await.expect("recording")[0];
    let body: Value = serde_json::from_slice(&sent.body).expect("json body");
    assert!(body.get("temperature").is_none(), "{body}");
    // The key goes as the SDK sends it, a bearer token, and nowhere else.
    assert!(sent.headers.get("x-api-key").is_none());
    let cost = reply
        .cost_usd(&PriceTable::built_in(), "claude-sonnet-4-20250514")
        .expect("priced");
    // 312 uncached input at $3, 2048 cache reads at $0.30, 187 output at $15 per million.
    let expected = (312.0 * 3.0 + 2048.0 * 0.30 + 187.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
}

#[tokio::test]
async fn responses_api_reads_reasoning_summaries() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(json!({
            "instructions": "You play chess.",
            "reasoning": {"effort": "medium", "summary": "auto"},
            "max_output_tokens": 512,
        })))
        .respond_with(fixture(
            200,
            include_str!("../../../llm/src/fixtures/responses_reasoning.json"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let req = ChatRequest {
        reasoning: Some(Reasoning::effort("medium")),
        ..request("o4-mini")
    };
    let reply = client()
        .chat(&endpoint(Provider::OpenAiResponses, &server.uri()), &req)
        .await
        .expect("reply");
    assert_eq!(reply.content, "<move>e2e4</move>");
    assert!(
        reply
            .reasoning
            .as_deref()
            .is_some_and(|r| r.contains("**Settling on e4**"))
    );
    assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(320));
}

#[tokio::test]
async fn gemini_puts_the_model_in_the_url_and_the_key_in_a_header() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .and(body_partial_json(json!({
            "systemInstruction": {"parts": [{"text": "You play chess."}]},
            "generationConfig": {"thinkingConfig": {"thinkingBudget": 24576, "includeThoughts": true}},
        })))
        .respond_with(fixture(200, include_str!("../../../llm/src/fixtures/gemini_thinking.json")))
        .expect(1)
        .mount(&server)
        .await;
    let req = ChatRequest {
        reasoning: Some(Reasoning::effort("high")),
        ..request("gemini-2.5-flash")
    };
    let reply = client()
        .chat(&endpoint(Provider::Gemini, &server.uri()), &req)
        .await
        .expect("reply");
    assert_eq!(reply.content, "<move>g1f3</move>");
    assert!(
        reply
            .reasoning
            .as_deref()
            .is_some_and(|r| r.starts_with("**Evaluating the Sicilian**"))
    );
    assert_eq!(reply.usage.map(|u| u.completion_tokens), Some(1037));
    // Thinking is billed as output: 32 uncached input at $0.30, 64 cached at $0.075, 1037 output
    // at $2.50 per million.
    let cost = reply
        .cost_usd(&PriceTable::built_in(), "gemini-2.5-flash")
        .expect("priced");
    assert!((cost - (32.0 * 0.30 + 64.0 * 0.075 + 1037.0 * 2.50) / 1e6).abs() < 1e-12);
    assert!(
        !server.received_requests().await.expect("recording")[0]
            .url
            .as_str()
            .contains(KEY)
    );
}

#[tokio::test]
async fn each_provider_probes_its_model_list_with_its_key_header() {
    formats();
    let server = MockServer::start().await;
    let bearer = format!("Bearer {KEY}");
    for (name, value) in [("authorization", bearer.as_str()), ("x-goog-api-key", KEY)] {
        Mock::given(method("GET"))
            .and(path("/v1/models"))
            .and(header(name, value))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": []})))
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(fixture(
            401,
            include_str!("../../../llm/src/fixtures/anthropic_401.json"),
        ))
        .mount(&server)
        .await;
    for provider in Provider::ALL {
        client()
            .probe(&endpoint(provider, &server.uri()))
            .await
            .unwrap_or_else(|e| panic!("{provider}: {e}"));
    }
    let keyless = Endpoint {
        provider: Provider::Anthropic,
        api_key_env: None,
        ..endpoint(Provider::Anthropic, &server.uri())
    };
    let err = client().probe(&keyless).await.expect_err("401");
    assert!(
        err.to_string()
            .ends_with("answered http 401: authentication_error: invalid x-api-key"),
        "{err}"
    );
}

// --- Provider errors: fatal ones at once and with the provider's message. ---

#[tokio::test]
async fn fatal_provider_errors_carry_the_providers_message() {
    formats();
    let cases = [
        (
            Provider::OpenAiChat,
            "/v1/chat/completions",
            401,
            include_str!("../../../llm/src/fixtures/openai_401.json"),
            "invalid_request_error",
            "Incorrect API key provided",
        ),
        (
            Provider::OpenAiResponses,
            "/v1/responses",
            400,
            include_str!("../../../llm/src/fixtures/openai_400_model.json"),
            "invalid_request_error",
            "The requested model 'gpt-9-turbo' does not exist.",
        ),
        (
            Provider::Anthropic,
            "/v1/messages",
            401,
            include_str!("../../../llm/src/fixtures/anthropic_401.json"),
            "authentication_error",
            "invalid x-api-key",
        ),
        (
            Provider::Anthropic,
            "/v1/messages",
            404,
            include_str!("../../../llm/src/fixtures/anthropic_404_model.json"),
            "not_found_error",
            "model: claude-sonnet-9",
        ),
        (
            Provider::Anthropic,
            "/v1/messages",
            400,
            include_str!("../../../llm/src/fixtures/anthropic_400_budget.json"),
            "invalid_request_error",
            "budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            Provider::Gemini,
            "/v1/models/test-model:generateContent",
            400,
            include_str!("../../../llm/src/fixtures/gemini_400_invalid_key.json"),
            "INVALID_ARGUMENT",
            "API key not valid.",
        ),
        (
            Provider::Gemini,
            "/v1/models/test-model:generateContent",
            404,
            include_str!("../../../llm/src/fixtures/gemini_404_model.json"),
            "NOT_FOUND",
            "is not found for API version v1beta",
        ),
    ];
    for (provider, route, status, body, kind, message) in cases {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(route))
            .respond_with(fixture(status, body))
            .mount(&server)
            .await;
        let err = client()
            .chat(&endpoint(provider, &server.uri()), &request("test-model"))
            .await
            .expect_err("provider error");
        match &err {
            LlmError::Http {
                status: got,
                kind: Some(got_kind),
                message: Some(got_message),
                body: got_body,
                ..
            } => {
                assert_eq!((*got, got_kind.as_str()), (status, kind), "{provider}");
                assert!(got_message.contains(message), "{provider}: {got_message}");
                assert_eq!(got_body, body);
            }
            other => panic!("{provider}: expected Http with a message, got {other:?}"),
        }
        assert!(!err.is_transient(), "{provider} {status}");
        assert!(err.to_string().contains(message), "{err}");
        assert_eq!(requests_seen(&server).await, 1, "{provider} {status}");
    }
}

// --- API versions, Azure OpenAI, extra headers. ---

#[tokio::test]
async fn a_players_api_version_replaces_anthropics() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(fixture(
            200,
            include_str!("../../../llm/src/fixtures/anthropic_thinking.json"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let ep = Endpoint {
        api_version: Some("2023-06-01".into()),
        ..endpoint(Provider::Anthropic, &server.uri())
    };
    client()
        .chat(&ep, &request("claude-sonnet-4-20250514"))
        .await
        .expect("the older version is named");
}

#[tokio::test]
async fn azure_posts_to_the_deployment_with_api_version_and_api_key() {
    formats();
    let server = MockServer::start().await;
    let chat = include_str!("../../../llm/src/fixtures/openai_chat_reasoning.json");
    Mock::given(method("POST"))
        .and(path("/openai/deployments/gpt-4o-prod/chat/completions"))
        .and(wiremock::matchers::query_param("api-version", "2024-10-21"))
        .and(header("api-key", KEY))
        .respond_with(fixture(200, chat))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/openai/responses"))
        .and(wiremock::matchers::query_param(
            "api-version",
            "2025-04-01-preview",
        ))
        .and(header("api-key", KEY))
        .respond_with(fixture(
            200,
            include_str!("../../../llm/src/fixtures/responses_reasoning.json"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let azure = |provider, version: Option<&str>| Endpoint {
        azure: true,
        api_version: version.map(str::to_owned),
        base_url: format!("{}/openai", server.uri()),
        ..endpoint(provider, &server.uri())
    };
    let reply = client()
        .chat(&azure(Provider::OpenAiChat, None), &request("gpt-4o-prod"))
        .await
        .expect("the chat completion of the deployment");
    assert!(!reply.content.is_empty());
    client()
        .chat(
            &azure(Provider::OpenAiResponses, Some("2025-04-01-preview")),
            &request("gpt-4o-prod"),
        )
        .await
        .expect("the response of the deployment");
    // No bearer token goes to Azure.
    for seen in server.received_requests().await.expect("recorded") {
        assert!(seen.headers.get("authorization").is_none());
    }
}

#[tokio::test]
async fn extra_headers_are_read_from_their_variables() {
    formats();
    const HEADER_ENV: &str = "ARENA_LLM_PROVIDER_TEST_GATEWAY";
    // SAFETY: as in `set_test_key`; no other test uses this variable.
    unsafe { std::env::set_var(HEADER_ENV, "gw-secret-1") };
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("x-gateway-key", "gw-secret-1"))
        .respond_with(fixture(
            200,
            include_str!("../../../llm/src/fixtures/openai_chat_reasoning.json"),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let ep = Endpoint {
        headers: vec![("X-Gateway-Key".into(), HEADER_ENV.into())],
        ..endpoint(Provider::OpenAiChat, &server.uri())
    };
    client()
        .chat(&ep, &request("m"))
        .await
        .expect("the header went");
    // A server that echoes the header's value does not get it into the error (or the store).
    let echo = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(fixture(
            401,
            r#"{"error":{"message":"bad gateway key gw-secret-1","type":"invalid_request_error"}}"#,
        ))
        .mount(&echo)
        .await;
    let err = client()
        .chat(
            &Endpoint {
                base_url: format!("{}/v1", echo.uri()),
                ..ep.clone()
            },
            &request("m"),
        )
        .await
        .expect_err("401");
    assert!(
        !err.to_string().contains("gw-secret-1")
            && err.body().is_some_and(|b| !b.contains("gw-secret-1")),
        "{err}"
    );
    let unset = Endpoint {
        headers: vec![("X-Other".into(), "ARENA_LLM_PROVIDER_TEST_UNSET".into())],
        ..ep
    };
    let err = client()
        .chat(&unset, &request("m"))
        .await
        .expect_err("unset");
    assert!(
        matches!(&err, LlmError::MissingApiKey { env } if env == "ARENA_LLM_PROVIDER_TEST_UNSET"),
        "{err:?}"
    );
}

// --- Retries as the SDKs retry: 408, 409, 429, 5xx, and `x-should-retry` over the status. ---

#[tokio::test]
async fn retries_follow_the_sdks_rules() {
    formats();
    let ok = include_str!("../../../llm/src/fixtures/openai_chat_reasoning.json");
    let error = |status: u16| {
        ResponseTemplate::new(status).set_body_raw(
            r#"{"error":{"message":"busy","type":"server_error"}}"#,
            "application/json",
        )
    };
    // (first answer, whether arena asks again)
    let cases = [
        (error(409), true),
        (error(408), true),
        (error(500).insert_header("x-should-retry", "false"), false),
        (error(429).insert_header("x-should-retry", "false"), false),
        (error(400).insert_header("x-should-retry", "true"), true),
        (error(400), false),
        (error(404), false),
    ];
    for (i, (first, retried)) in cases.into_iter().enumerate() {
        let server = MockServer::start().await;
        mount_sequence(&server, "/v1/chat/completions", first, fixture(200, ok)).await;
        let result = client()
            .chat(
                &endpoint(Provider::OpenAiChat, &server.uri()),
                &request("m"),
            )
            .await;
        assert_eq!(result.is_ok(), retried, "case {i}: {result:?}");
        assert_eq!(
            requests_seen(&server).await,
            if retried { 2 } else { 1 },
            "case {i}"
        );
    }
}

// --- Transient provider errors: retried, honouring the provider's rate-limit hints. ---

/// Retries of these tests wait as the recorded headers say; the retry policy's own backoff is set
/// far longer, so that a retry waiting only the backoff would leave the time budget and fail.
fn patient_endpoint(provider: Provider, base: &str) -> Endpoint {
    let ep = endpoint(provider, base);
    Endpoint {
        retry: RetryPolicy {
            base_delay: Duration::from_secs(120),
            max_delay: Duration::from_secs(120),
            give_up_after: Duration::from_secs(60),
            ..ep.retry
        },
        ..ep
    }
}

#[tokio::test]
async fn anthropic_429_waits_for_the_exhausted_limit_to_reset() {
    formats();
    let server = MockServer::start().await;
    // The reset time is one second ahead of the moment the mock is built; RFC 3339 needs a civil
    // time, written here from the Unix clock.
    let reset = rfc3339_in(Duration::from_secs(1));
    let limited = fixture(
        429,
        include_str!("../../../llm/src/fixtures/anthropic_429.json"),
    )
    .insert_header("anthropic-ratelimit-input-tokens-limit", "20000")
    .insert_header("anthropic-ratelimit-input-tokens-remaining", "0")
    .insert_header("anthropic-ratelimit-input-tokens-reset", reset.as_str())
    .insert_header("anthropic-ratelimit-requests-remaining", "49")
    .insert_header("anthropic-ratelimit-requests-reset", reset.as_str())
    .insert_header("request-id", "req_011CQnB8Vx3nLc6dQw2Ej9tY");
    mount_sequence(
        &server,
        "/v1/messages",
        limited,
        fixture(
            200,
            include_str!("../../../llm/src/fixtures/anthropic_thinking.json"),
        ),
    )
    .await;
    let reply = client()
        .chat(
            &patient_endpoint(Provider::Anthropic, &server.uri()),
            &request("claude-sonnet-4-20250514"),
        )
        .await
        .expect("reply after the reset");
    assert_eq!(reply.transport_retries, 1);
    assert_eq!(reply.content, "<move>g1f3</move>");
}

#[tokio::test]
async fn anthropic_529_overloaded_is_retried_with_retry_after() {
    formats();
    let server = MockServer::start().await;
    mount_sequence(
        &server,
        "/v1/messages",
        fixture(
            529,
            include_str!("../../../llm/src/fixtures/anthropic_529.json"),
        )
        .insert_header("retry-after", "0"),
        fixture(
            200,
            include_str!("../../../llm/src/fixtures/anthropic_thinking.json"),
        ),
    )
    .await;
    let reply = client()
        .chat(
            &patient_endpoint(Provider::Anthropic, &server.uri()),
            &request("claude-sonnet-4-20250514"),
        )
        .await
        .expect("reply after overload");
    assert_eq!(reply.transport_retries, 1);

    // Persistent overload ends in the provider's error after the allowed attempts.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(fixture(
            529,
            include_str!("../../../llm/src/fixtures/anthropic_529.json"),
        ))
        .mount(&server)
        .await;
    let err = client()
        .chat(
            &endpoint(Provider::Anthropic, &server.uri()),
            &request("claude-sonnet-4-20250514"),
        )
        .await
        .expect_err("overloaded");
    assert!(err.is_transient());
    assert!(
        matches!(&err, LlmError::Http { status: 529, kind: Some(k), .. } if k == "overloaded_error"),
        "{err:?}"
    );
    assert_eq!(requests_seen(&server).await, 3);
}

#[tokio::test]
async fn openai_429_waits_for_the_exhausted_limit_to_reset() {
    formats();
    let server = MockServer::start().await;
    let limited = fixture(
        429,
        include_str!("../../../llm/src/fixtures/openai_429.json"),
    )
    .insert_header("x-ratelimit-limit-tokens", "200000")
    .insert_header("x-ratelimit-remaining-tokens", "0")
    .insert_header("x-ratelimit-reset-tokens", "290ms")
    .insert_header("x-ratelimit-remaining-requests", "4999")
    .insert_header("x-ratelimit-reset-requests", "12ms");
    mount_sequence(
        &server,
        "/v1/chat/completions",
        limited,
        fixture(
            200,
            include_str!("../../../llm/src/fixtures/openai_chat_reasoning.json"),
        ),
    )
    .await;
    let reply = client()
        .chat(
            &patient_endpoint(Provider::OpenAiChat, &server.uri()),
            &request("o4-mini"),
        )
        .await
        .expect("reply after the reset");
    assert_eq!(reply.transport_retries, 1);
    assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(384));
}

#[tokio::test]
async fn gemini_429_waits_as_its_retry_info_says() {
    formats();
    let server = MockServer::start().await;
    // The recorded 17 s would slow the suite; the same body with a short delay tests the path.
    let body =
        include_str!("../../../llm/src/fixtures/gemini_429.json").replace("\"17s\"", "\"0.2s\"");
    mount_sequence(
        &server,
        "/v1/models/gemini-2.5-flash:generateContent",
        fixture(429, &body),
        fixture(
            200,
            include_str!("../../../llm/src/fixtures/gemini_thinking.json"),
        ),
    )
    .await;
    let reply = client()
        .chat(
            &patient_endpoint(Provider::Gemini, &server.uri()),
            &request("gemini-2.5-flash"),
        )
        .await
        .expect("reply after the wait");
    assert_eq!(reply.transport_retries, 1);
}

#[tokio::test]
async fn keys_never_show_in_errors_or_debug_output() {
    formats();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "type": "error",
            "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}
        })))
        .mount(&server)
        .await;
    for provider in Provider::ALL {
        let ep = endpoint(provider, &server.uri());
        let err = client()
            .chat(&ep, &request("test-model"))
            .await
            .expect_err("401");
        for shown in [format!("{ep:?}"), format!("{err}"), format!("{err:?}")] {
            assert!(!shown.contains(KEY), "{provider} leaked the key: {shown}");
        }
        assert!(err.to_string().contains("[redacted]"), "{err}");
    }
}

/// The RFC 3339 UTC time `ahead` from now, as Anthropic writes its reset headers.
fn rfc3339_in(ahead: Duration) -> String {
    let unix = (std::time::SystemTime::now() + ahead)
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs();
    let (days, seconds) = (unix / 86_400, unix % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// The date `days` after 1970-01-01 (Howard Hinnant's inverse of `days_from_civil`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

// --- The real local llama.cpp server (skipped unless LOCAL_LLM_URL is set). ---

fn local_endpoint(test: &str, provider: Provider) -> Option<Endpoint> {
    arena_testkit::local_llm(test).map(|url| Endpoint {
        provider,
        // Other test suites may share the one-thread server.
        timeout: Duration::from_secs(180),
        ..Endpoint::new(url)
    })
}

fn local_request() -> ChatRequest {
    ChatRequest {
        model: std::env::var("LOCAL_LLM_MODEL")
            .unwrap_or_else(|_| "smollm2-135m-instruct".to_owned()),
        messages: vec![
            ChatMessage::new("system", "You are a chess player."),
            ChatMessage::new("user", "Name a chess opening."),
        ],
        max_tokens: Some(16),
        temperature: Some(0.0),
        ..ChatRequest::default()
    }
}

async fn local_answers(test: &str, provider: Provider) {
    let Some(ep) = local_endpoint(test, provider) else {
        return;
    };
    let client = client();
    client.probe(&ep).await.expect("probe");
    let reply = client
        .chat(&ep, &local_request())
        .await
        .expect("local model reply");
    assert!(!reply.content.trim().is_empty(), "{provider}: {reply:?}");
    let usage = reply.usage.expect("llama.cpp reports usage");
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{provider}: {usage:?}"
    );
    assert_eq!(
        usage.total_tokens,
        usage.prompt_tokens + usage.completion_tokens
    );
    assert!(
        matches!(reply.finish_reason.as_deref(), Some("stop" | "length")),
        "{provider}: {:?}",
        reply.finish_reason
    );
    let free = PriceTable::new().with(local_request().model, Price::new(0.0, 0.0));
    assert_eq!(reply.cost_usd(&free, &local_request().model), Some(0.0));
}

#[tokio::test]
async fn local_model_speaks_the_responses_api() {
    formats();
    local_answers(
        "local_model_speaks_the_responses_api",
        Provider::OpenAiResponses,
    )
    .await;
}

#[tokio::test]
async fn local_model_speaks_anthropic_messages() {
    formats();
    local_answers("local_model_speaks_anthropic_messages", Provider::Anthropic).await;
}

#[tokio::test]
async fn local_model_accepts_reasoning_settings() {
    formats();
    // SmolLM2 does not reason, but the server must accept each API's reasoning fields.
    for provider in [Provider::OpenAiResponses, Provider::Anthropic] {
        let Some(ep) = local_endpoint("local_model_accepts_reasoning_settings", provider) else {
            return;
        };
        let mut req = ChatRequest {
            reasoning: Some(Reasoning {
                effort: Some("low".into()),
                budget_tokens: Some(1024),
            }),
            ..local_request()
        };
        // Anthropic's encoding raises max_tokens above the 1024-token budget; a model that does
        // not think would spend it all on the answer, which is slow on one thread.
        req.extra_body.insert("max_tokens".into(), json!(16));
        let reply = client().chat(&ep, &req).await.expect("local model reply");
        assert!(
            reply.usage.is_some_and(|u| u.completion_tokens > 0),
            "{provider}"
        );
    }
}
