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
pub struct Fields {
    /// `type` (or, when absent, `status`, as Gemini names it).
    pub kind: String,
    /// `code`.
    pub code: String,
    /// `param`: the request field at fault.
    pub param: String,
    /// `message`, as sent.
    pub message: String,
    /// The `reason` of each of Gemini's `details`.
    pub reasons: Vec<String>,
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
