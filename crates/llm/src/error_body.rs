//! Reading a provider's JSON error body, so that an HTTP error says what the provider said.
//!
//! The shapes differ only in detail:
//! - OpenAI and llama.cpp: `{"error": {"message", "type", "code"}}`;
//! - Anthropic: `{"type": "error", "error": {"type", "message"}}`;
//! - Gemini: `{"error": {"code", "message", "status"}}`, sometimes wrapped in a one-element array;
//! - some gateways: `{"error": "text"}` or `{"message": "text"}`.
//!
//! Gemini's 429 also says in the body how long to wait (`details[].retryDelay`, a protobuf
//! duration such as `"17s"`), where other providers use headers.

use std::time::Duration;

use serde_json::Value;

use super::ratelimit::parse_duration;

/// What an error body says: the provider's error type (or status) and its message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ProviderError {
    /// `invalid_request_error`, `overloaded_error`, `RESOURCE_EXHAUSTED`, ...
    pub kind: Option<String>,
    /// The human-readable message.
    pub message: Option<String>,
    /// The wait the body asks for before retrying (Gemini's `RetryInfo`).
    pub retry_delay: Option<Duration>,
}

/// Reads `body` as a provider error; fields the body lacks are `None` (a non-JSON body gives both).
pub(super) fn parse(body: &str) -> ProviderError {
    let Ok(mut value) = serde_json::from_str::<Value>(body) else {
        return ProviderError::default();
    };
    if let Value::Array(items) = value {
        let Some(first) = items.into_iter().next() else {
            return ProviderError::default();
        };
        value = first;
    }
    match value.get("error") {
        Some(Value::String(message)) => ProviderError {
            message: Some(message.clone()),
            ..ProviderError::default()
        },
        Some(error @ Value::Object(_)) => ProviderError {
            // Gemini's `status` is the name; its numeric `code` only repeats the HTTP status.
            kind: text(error, "type")
                .or_else(|| text(error, "status"))
                .or_else(|| text(error, "code")),
            message: text(error, "message"),
            retry_delay: retry_info(error),
        },
        _ => ProviderError {
            message: text(&value, "message"),
            ..ProviderError::default()
        },
    }
}

/// The `retryDelay` of a `google.rpc.RetryInfo` entry among the error's details.
fn retry_info(error: &Value) -> Option<Duration> {
    error
        .get("details")?
        .as_array()?
        .iter()
        .find_map(|detail| detail.get("retryDelay")?.as_str().and_then(parse_duration))
}

/// A non-empty string field.
fn text(value: &Value, field: &str) -> Option<String> {
    value
        .get(field)?
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(kind: &str, message: &str) -> ProviderError {
        ProviderError {
            kind: Some(kind.into()),
            message: Some(message.into()),
            retry_delay: None,
        }
    }

    #[test]
    fn reads_each_providers_shape() {
        assert_eq!(
            parse(include_str!("fixtures/openai_401.json")),
            both(
                "invalid_request_error",
                "Incorrect API key provided: sk-test-***********0b7a. You can find your API key at https://platform.openai.com/account/api-keys."
            )
        );
        assert_eq!(
            parse(include_str!("fixtures/anthropic_529.json")),
            both("overloaded_error", "Overloaded")
        );
        assert_eq!(
            parse(include_str!("fixtures/gemini_400_invalid_key.json")),
            both(
                "INVALID_ARGUMENT",
                "API key not valid. Please pass a valid API key."
            )
        );
        assert_eq!(
            parse(
                r#"[{"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}]"#
            ),
            both("RESOURCE_EXHAUSTED", "slow down")
        );
    }

    #[test]
    fn reads_geminis_retry_info() {
        let error = parse(include_str!("fixtures/gemini_429.json"));
        assert_eq!(error.kind.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(error.retry_delay, Some(Duration::from_secs(17)));
    }

    #[test]
    fn reads_bare_messages_and_ignores_other_bodies() {
        assert_eq!(
            parse(r#"{"error": "model not loaded"}"#).message.as_deref(),
            Some("model not loaded")
        );
        assert_eq!(
            parse(r#"{"message": "Forbidden"}"#).message.as_deref(),
            Some("Forbidden")
        );
        assert_eq!(parse("<html>bad gateway</html>"), ProviderError::default());
        assert_eq!(parse("[]"), ProviderError::default());
        assert_eq!(
            parse(r#"{"error": {"code": 500}}"#),
            ProviderError::default()
        );
    }
}
