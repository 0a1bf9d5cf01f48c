//! The batch APIs through the formats: results lines read into replies, the batched bodies,
//! which formats have a batch API, and the batch client's requests.

use serde_json::json;

use super::*;

/// OpenAI's batch API for chat completions.
const OPENAI: BatchApi = BatchApi::OpenAi {
    path: "/v1/chat/completions",
};

#[test]
fn openai_lines_read_answers_errors_and_expiry() {
    formats();
    let ok = r#"{"id":"batch_req_1","custom_id":"a","response":{"status_code":200,"request_id":"r","body":{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"e2e4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}},"error":null}"#;
    let (id, outcome) = OPENAI.read_line(Provider::OpenAiChat, ok, "u").unwrap();
    assert_eq!(id, "a");
    let BatchOutcome::Answered(reply) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(reply.content, "e2e4");
    assert_eq!(reply.usage.unwrap().prompt_tokens, 10);
    let expired = r#"{"id":"x","custom_id":"b","response":null,"error":{"code":"batch_expired","message":"This request could not be executed before the completion window expired."}}"#;
    assert_eq!(
        OPENAI
            .read_line(Provider::OpenAiChat, expired, "u")
            .unwrap(),
        ("b".into(), BatchOutcome::Expired)
    );
    let refused = r#"{"id":"x","custom_id":"c","response":{"status_code":400,"body":{"error":{"message":"bad"}}},"error":null}"#;
    assert!(matches!(
        OPENAI.read_line(Provider::OpenAiChat, refused, "u").unwrap().1,
        BatchOutcome::Errored(e) if e.contains("400")
    ));
}

#[test]
fn anthropic_lines_read_every_result_type() {
    formats();
    let ok = r#"{"custom_id":"a","result":{"type":"succeeded","message":{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Nf3"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}}}"#;
    let BatchOutcome::Answered(reply) = BatchApi::Anthropic
        .read_line(Provider::Anthropic, ok, "u")
        .unwrap()
        .1
    else {
        panic!()
    };
    assert_eq!(reply.content, "Nf3");
    let errored = r#"{"custom_id":"b","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"no"}}}}"#;
    assert!(matches!(
        BatchApi::Anthropic.read_line(Provider::Anthropic, errored, "u").unwrap().1,
        BatchOutcome::Errored(e) if e.contains("invalid_request_error")
    ));
    for (kind, want) in [
        ("expired", BatchOutcome::Expired),
        ("canceled", BatchOutcome::Canceled),
    ] {
        let line = format!(r#"{{"custom_id":"c","result":{{"type":"{kind}"}}}}"#);
        assert_eq!(
            BatchApi::Anthropic
                .read_line(Provider::Anthropic, &line, "u")
                .unwrap()
                .1,
            want
        );
    }
    assert!(
        BatchApi::Anthropic
            .read_line(Provider::Anthropic, r#"{"custom_id":"d","result":{}}"#, "u")
            .is_err()
    );
}

#[test]
fn gemini_has_no_batch_api_and_batch_prices_are_half() {
    formats();
    let e = supports_batch(Provider::Gemini).unwrap_err();
    assert!(
        e.to_string()
            .contains("gemini wire format has no batch API"),
        "{e}"
    );
    for p in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        supports_batch(p).unwrap();
    }
    let prices = PriceTable::default().with("m", Price::new(2.0, 8.0));
    let usage = Usage {
        prompt_tokens: 1_000_000,
        completion_tokens: 1_000_000,
        ..Usage::default()
    };
    assert_eq!(prices.cost(&usage, "m"), Some(10.0));
    assert_eq!(batch_cost(&prices, &usage, "m"), Some(5.0));
}

/// The variables of the batch client's tests (their own, so that no other test races them).
const KEY_ENV: &str = "ARENA_BATCH_TEST_KEY";
const HEADER_ENV: &str = "ARENA_BATCH_TEST_GATEWAY";

#[tokio::test]
async fn every_batch_request_carries_the_players_extra_headers_and_azure_is_refused() {
    formats();
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    // SAFETY: these variables are this test's own; nothing else reads or writes them.
    unsafe {
        std::env::set_var(KEY_ENV, "sk-batch-1");
        std::env::set_var(HEADER_ENV, "gw-batch-secret");
    }
    let server = MockServer::start().await;
    let ended = r#"{"id":"b1","processing_status":"ended","results_url":null}"#;
    // Only a request with the key and the gateway header is answered.
    Mock::given(method("POST"))
        .and(path("/v1/messages/batches"))
        .and(header("x-gateway-key", "gw-batch-secret"))
        .and(header("authorization", "Bearer sk-batch-1"))
        .respond_with(ResponseTemplate::new(200).set_body_string(r#"{"id":"b1"}"#))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/messages/batches/b1"))
        .and(header("x-gateway-key", "gw-batch-secret"))
        .respond_with(ResponseTemplate::new(200).set_body_string(ended))
        .mount(&server)
        .await;
    // A refusal that echoes the header's value.
    Mock::given(method("GET"))
        .and(path("/v1/messages/batches/echo"))
        .respond_with(ResponseTemplate::new(400).set_body_string(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad gw-batch-secret"}}"#,
        ))
        .mount(&server)
        .await;
    let endpoint = Endpoint {
        provider: Provider::Anthropic,
        api_key_env: Some(KEY_ENV.into()),
        headers: vec![("X-Gateway-Key".into(), HEADER_ENV.into())],
        ..Endpoint::new(format!("{}/v1", server.uri()))
    };
    let client = BatchClient::new().unwrap();
    let requests = [BatchRequest {
        custom_id: "a".into(),
        request: ChatRequest {
            model: "claude".into(),
            messages: vec![ChatMessage::new("user", "Your move?")],
            max_tokens: Some(16),
            ..ChatRequest::default()
        },
    }];
    let id = client.submit(&endpoint, &requests).await.unwrap();
    assert_eq!(id, "b1");
    assert!(matches!(
        client.poll(&endpoint, &id).await.unwrap(),
        BatchState::Ended(_)
    ));
    let error = client
        .poll(&endpoint, "echo")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("bad [redacted]") && !error.contains("gw-batch-secret"),
        "{error}"
    );
    // Without the header's variable nothing is sent.
    let unset = Endpoint {
        headers: vec![("X-Other".into(), "ARENA_BATCH_TEST_UNSET".into())],
        ..endpoint.clone()
    };
    let error = client.submit(&unset, &requests).await.unwrap_err();
    assert!(
        error.to_string().contains("ARENA_BATCH_TEST_UNSET"),
        "{error}"
    );
    // Azure OpenAI is refused before anything is sent.
    let azure = Endpoint {
        provider: Provider::OpenAiChat,
        azure: true,
        ..endpoint.clone()
    };
    let error = client.submit(&azure, &requests).await.unwrap_err();
    assert!(matches!(error, BatchError::Azure), "{error}");
    assert!(error.to_string().contains("azure = true"), "{error}");
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), 3, "the unset header and Azure sent nothing");
}

#[test]
fn request_bodies_carry_no_stream_field() {
    formats();
    let request = ChatRequest {
        model: "m".into(),
        max_tokens: Some(8),
        extra_body: json!({"stream": true}).as_object().unwrap().clone(),
        ..ChatRequest::default()
    };
    for p in [Provider::OpenAiChat, Provider::Anthropic] {
        let body = batch_body(p, &request);
        assert!(body.get("stream").is_none(), "{body}");
        assert_eq!(body["model"], "m");
    }
}
