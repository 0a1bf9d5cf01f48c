//! Which error answers refuse a request for good, by each provider's rules, on recorded bodies.

use super::*;

fn of(provider: Provider, status: u16, body: &str) -> Option<Rejection> {
    provider.rejection(status, body)
}

#[test]
fn context_errors_of_every_provider() {
    formats();
    let llama = include_str!("../../../llm/src/fixtures/llamacpp_400_context.json");
    for provider in Provider::ALL {
        assert_eq!(
            of(provider, 400, llama),
            Some(Rejection::ContextExceeded),
            "{provider}"
        );
    }
    assert_eq!(
        of(
            Provider::OpenAiChat,
            400,
            include_str!("../../../llm/src/fixtures/openai_400_context.json")
        ),
        Some(Rejection::ContextExceeded)
    );
    assert_eq!(
        of(
            Provider::OpenAiResponses,
            400,
            include_str!("../../../llm/src/fixtures/responses_400_context.json")
        ),
        Some(Rejection::ContextExceeded)
    );
    assert_eq!(
        of(
            Provider::Anthropic,
            400,
            include_str!("../../../llm/src/fixtures/anthropic_400_context.json")
        ),
        Some(Rejection::ContextExceeded)
    );
    assert_eq!(
        of(
            Provider::Gemini,
            400,
            include_str!("../../../llm/src/fixtures/gemini_400_context.json")
        ),
        Some(Rejection::ContextExceeded)
    );
    // vLLM's own error shape.
    let vllm = r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, 100 in the completion).","type":"BadRequestError","param":null,"code":400}"#;
    assert_eq!(
        of(Provider::OpenAiChat, 400, vllm),
        Some(Rejection::ContextExceeded)
    );
}

#[test]
fn refused_content_is_a_rejection_of_the_request() {
    formats();
    assert_eq!(
        of(
            Provider::OpenAiChat,
            400,
            include_str!("../../../llm/src/fixtures/openai_400_invalid_prompt.json")
        ),
        Some(Rejection::Invalid)
    );
    assert_eq!(
        of(
            Provider::Anthropic,
            400,
            include_str!("../../../llm/src/fixtures/anthropic_400_messages.json")
        ),
        Some(Rejection::Invalid)
    );
    assert_eq!(
        of(
            Provider::Anthropic,
            413,
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}"#
        ),
        Some(Rejection::Invalid)
    );
    assert_eq!(
        of(
            Provider::Gemini,
            400,
            r#"{"error":{"code":400,"message":"Please ensure that multiturn requests alternate between user and model.","status":"INVALID_ARGUMENT"}}"#
        ),
        Some(Rejection::Invalid)
    );
}

#[test]
fn refused_settings_are_not_rejections_but_errors_to_fix() {
    formats();
    let cases = [
        (
            Provider::OpenAiChat,
            400,
            include_str!("../../../llm/src/fixtures/openai_400_model.json"),
        ),
        (
            Provider::OpenAiChat,
            401,
            include_str!("../../../llm/src/fixtures/openai_401.json"),
        ),
        (
            Provider::Anthropic,
            400,
            include_str!("../../../llm/src/fixtures/anthropic_400_budget.json"),
        ),
        (
            Provider::Anthropic,
            401,
            include_str!("../../../llm/src/fixtures/anthropic_401.json"),
        ),
        (
            Provider::Anthropic,
            404,
            include_str!("../../../llm/src/fixtures/anthropic_404_model.json"),
        ),
        (
            Provider::Gemini,
            400,
            include_str!("../../../llm/src/fixtures/gemini_400_invalid_key.json"),
        ),
        (
            Provider::Gemini,
            404,
            include_str!("../../../llm/src/fixtures/gemini_404_model.json"),
        ),
        (
            Provider::OpenAiChat,
            429,
            include_str!("../../../llm/src/fixtures/openai_429.json"),
        ),
        (
            Provider::Anthropic,
            529,
            include_str!("../../../llm/src/fixtures/anthropic_529.json"),
        ),
        (
            Provider::Gemini,
            429,
            include_str!("../../../llm/src/fixtures/gemini_429.json"),
        ),
    ];
    for (provider, status, body) in cases {
        assert_eq!(
            of(provider, status, body),
            None,
            "{provider} {status}: {body}"
        );
    }
    // A gateway's 400 page says nothing about a context: it is this request (OpenAI rules).
    assert_eq!(
        of(Provider::OpenAiChat, 400, "<html>bad request</html>"),
        Some(Rejection::Invalid)
    );
}
