//! Which HTTP errors are a provider refusing *this request* for good, decided per provider from
//! its error bodies (see the fixtures beside this module; each format's own rules are in its
//! module, `rejection` of its wire format): sending the same request again gets the
//! same answer, so a game that needs it cannot go on, on this run or any other.
//!
//! Two kinds are told apart ([`Rejection`]): the prompt does not fit the model's context, and any
//! other refusal of the request's content. Refusals of the *settings* (an unknown model, a bad
//! key, a parameter the model does not take) are not rejections: they fail every request of the
//! player, and must stay errors the user fixes, not results.
//!
//! llama.cpp's server answers all four APIs with its own error shape (recorded from the real
//! server: `fixtures/llamacpp_400_context.json`), so its context error is recognised for every
//! provider.

use serde_json::Value;

use super::Provider;

/// A deterministic refusal of a request by the provider (HTTP 400, 413 or 422).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rejection {
    /// The prompt (with the completion budget) exceeds the model's context window.
    ContextExceeded,
    /// The request's content is refused (an invalid dialog, a prompt flagged by the provider).
    Invalid,
}

impl Rejection {
    /// `context_exceeded` or `request_rejected`: the game termination it leads to.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::ContextExceeded => "context_exceeded",
            Rejection::Invalid => "request_rejected",
        }
    }
}

/// The error object's fields, whatever the provider's shape.
pub(crate) struct Fields {
    /// `type` (or, when absent, `status`, as Gemini names it).
    pub(crate) kind: String,
    /// `code`.
    pub(crate) code: String,
    /// `param`: the request field at fault.
    pub(crate) param: String,
    /// `message`, as sent.
    pub(crate) message: String,
    /// The `reason` of each of Gemini's `details`.
    pub(crate) reasons: Vec<String>,
}

fn fields(body: &str) -> Fields {
    let mut value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    if let Value::Array(items) = value {
        value = items.into_iter().next().unwrap_or(Value::Null);
    }
    let error = match value.get("error") {
        Some(e @ Value::Object(_)) => e.clone(),
        Some(Value::String(message)) => serde_json::json!({ "message": message }),
        // vLLM: `{"object": "error", "message": ..., "type": ...}`.
        _ => value,
    };
    let text = |field: &str| match error.get(field) {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    };
    let reasons = error
        .get("details")
        .and_then(Value::as_array)
        .map(|details| {
            details
                .iter()
                .filter_map(|d| d.get("reason")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let kind = match text("type") {
        t if t.is_empty() => text("status"),
        t => t,
    };
    Fields {
        kind,
        code: text("code"),
        param: text("param"),
        message: text("message"),
        reasons,
    }
}

/// Whether `provider`'s answer `status` with `body` rejects the request for good, and how.
pub(super) fn classify(provider: Provider, status: u16, body: &str) -> Option<Rejection> {
    if !matches!(status, 400 | 413 | 422) {
        return None;
    }
    let f = fields(body);
    let message = f.message.to_lowercase();
    // llama.cpp, whatever API it serves.
    if f.kind == "exceed_context_size_error"
        || message.contains("exceeds the available context size")
    {
        return Some(Rejection::ContextExceeded);
    }
    provider.wire().rejection(status, &f, &message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(provider: Provider, status: u16, body: &str) -> Option<Rejection> {
        classify(provider, status, body)
    }

    #[test]
    fn context_errors_of_every_provider() {
        let llama = include_str!("fixtures/llamacpp_400_context.json");
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
                include_str!("fixtures/openai_400_context.json")
            ),
            Some(Rejection::ContextExceeded)
        );
        assert_eq!(
            of(
                Provider::OpenAiResponses,
                400,
                include_str!("fixtures/responses_400_context.json")
            ),
            Some(Rejection::ContextExceeded)
        );
        assert_eq!(
            of(
                Provider::Anthropic,
                400,
                include_str!("fixtures/anthropic_400_context.json")
            ),
            Some(Rejection::ContextExceeded)
        );
        assert_eq!(
            of(
                Provider::Gemini,
                400,
                include_str!("fixtures/gemini_400_context.json")
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
        assert_eq!(
            of(
                Provider::OpenAiChat,
                400,
                include_str!("fixtures/openai_400_invalid_prompt.json")
            ),
            Some(Rejection::Invalid)
        );
        assert_eq!(
            of(
                Provider::Anthropic,
                400,
                include_str!("fixtures/anthropic_400_messages.json")
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
        let cases = [
            (
                Provider::OpenAiChat,
                400,
                include_str!("fixtures/openai_400_model.json"),
            ),
            (
                Provider::OpenAiChat,
                401,
                include_str!("fixtures/openai_401.json"),
            ),
            (
                Provider::Anthropic,
                400,
                include_str!("fixtures/anthropic_400_budget.json"),
            ),
            (
                Provider::Anthropic,
                401,
                include_str!("fixtures/anthropic_401.json"),
            ),
            (
                Provider::Anthropic,
                404,
                include_str!("fixtures/anthropic_404_model.json"),
            ),
            (
                Provider::Gemini,
                400,
                include_str!("fixtures/gemini_400_invalid_key.json"),
            ),
            (
                Provider::Gemini,
                404,
                include_str!("fixtures/gemini_404_model.json"),
            ),
            (
                Provider::OpenAiChat,
                429,
                include_str!("fixtures/openai_429.json"),
            ),
            (
                Provider::Anthropic,
                529,
                include_str!("fixtures/anthropic_529.json"),
            ),
            (
                Provider::Gemini,
                429,
                include_str!("fixtures/gemini_429.json"),
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
}
