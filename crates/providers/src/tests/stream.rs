//! Streamed replies through the whole client, each wire format's recorded stream served by
//! wiremock beside its non-streamed twin: the same reply comes back, a stream that closes early
//! is a cut with its partial reply, and the body limit counts a stream's bytes.

use std::time::Duration;

use serde_json::json;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{body_partial_json, method, path},
};

use super::*;

fn client() -> LlmClient {
    let _ = rustls::crypto::ring::default_provider().install_default();
    LlmClient::new().expect("http client")
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/streams/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// An endpoint of `provider` on `server` that streams or not, and gives up at once.
fn endpoint(provider: Provider, server: &MockServer, stream: bool) -> Endpoint {
    Endpoint {
        provider,
        stream,
        timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_attempts: 1,
            give_up_after: Duration::ZERO,
            ..RetryPolicy::default()
        },
        ..Endpoint::new(format!("{}/v1", server.uri()))
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "m".into(),
        messages: vec![ChatMessage::new("user", "1. e4 c5. Your move?")],
        max_tokens: Some(512),
        ..ChatRequest::default()
    }
}

fn events(body: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.as_bytes().to_vec(), "text/event-stream")
}

/// Serves `name`'s stream to streaming requests and its twin to the others.
async fn serve(provider: Provider, name: &str, stream_body: &str) -> MockServer {
    let server = MockServer::start().await;
    let (streamed, plain) = match provider {
        Provider::OpenAiChat => ("/v1/chat/completions", "/v1/chat/completions"),
        Provider::OpenAiResponses => ("/v1/responses", "/v1/responses"),
        Provider::Anthropic => ("/v1/messages", "/v1/messages"),
        Provider::Gemini => (
            "/v1/models/m:streamGenerateContent",
            "/v1/models/m:generateContent",
        ),
    };
    let streaming = match provider {
        Provider::Gemini => Mock::given(method("POST")).and(path(streamed)),
        _ => Mock::given(method("POST"))
            .and(path(streamed))
            .and(body_partial_json(json!({"stream": true}))),
    };
    streaming
        .respond_with(events(stream_body))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(plain))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture(&format!("{name}.json")).into_bytes(),
            "application/json",
        ))
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

const FORMATS: [(Provider, &str); 4] = [
    (Provider::OpenAiChat, "openai_chat"),
    (Provider::OpenAiResponses, "openai_responses"),
    (Provider::Anthropic, "anthropic"),
    (Provider::Gemini, "gemini"),
];

#[tokio::test]
async fn every_format_streams_the_reply_it_answers_unstreamed() {
    formats();
    for (provider, name) in FORMATS {
        let sse = fixture(&format!("{name}.sse"));
        let server = serve(provider, name, &sse).await;
        let client = client();
        let plain = client
            .chat(&endpoint(provider, &server, false), &request())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let streamed = client
            .chat(&endpoint(provider, &server, true), &request())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (
                &streamed.content,
                &streamed.reasoning,
                &streamed.usage,
                &streamed.finish_reason
            ),
            (
                &plain.content,
                &plain.reasoning,
                &plain.usage,
                &plain.finish_reason
            ),
            "{name}"
        );
        assert!(
            streamed.reasoning.is_some() && streamed.usage.is_some(),
            "{name}"
        );
        assert_eq!(
            streamed.raw_body, sse,
            "{name}: the events are stored as received"
        );
    }
}

#[tokio::test]
async fn a_stream_that_closes_early_is_cut_with_its_partial_reply() {
    formats();
    for (provider, name) in FORMATS {
        let sse = fixture(&format!("{name}.sse"));
        // The body ends two thirds of the way in, inside an event.
        let mut cut = sse.len() * 2 / 3;
        while !sse.is_char_boundary(cut) {
            cut -= 1;
        }
        let server = serve(provider, name, &sse[..cut]).await;
        let error = client()
            .chat(&endpoint(provider, &server, true), &request())
            .await
            .expect_err("the stream is cut");
        let LlmError::StreamCut {
            partial, detail, ..
        } = &error
        else {
            panic!("{name}: not a cut: {error}");
        };
        assert_eq!(partial.body, sse[..cut], "{name}");
        assert!(detail.contains("closed"), "{name}: {detail}");
        assert!(
            partial.reasoning.is_some() || !partial.text.is_empty(),
            "{name}: something was kept: {error}"
        );
    }
}

#[tokio::test]
async fn a_stream_over_the_body_limit_is_refused() {
    formats();
    let chunk = format!(
        "data: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "x".repeat(64 << 10)}}]})
    );
    let body = chunk.repeat(MAX_RESPONSE_BYTES / chunk.len() + 2);
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(events(&body))
        .mount(&server)
        .await;
    let error = client()
        .chat(&endpoint(Provider::OpenAiChat, &server, true), &request())
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, LlmError::Decode { detail, .. } if detail.contains("over the limit of 8 MiB")),
        "{error}"
    );
}
