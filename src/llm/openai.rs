//! The OpenAI chat-completions wire format (`POST {base}/chat/completions`), as spoken by OpenAI,
//! vLLM, llama.cpp's server, Ollama, OpenRouter and most other providers.
//!
//! Only the fields arena needs are read; unknown fields (llama.cpp's `timings`, OpenRouter's
//! `provider`) are ignored, and `content: null` (a reply that only reasoned) reads as empty text.

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{ChatRequest, Usage, WireReply};

/// The chat-completions URL below `base_url` (which ends in `/v1` or similar).
pub(super) fn chat_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

/// The model-list URL below `base_url`, used as a cheap reachability probe.
pub(super) fn models_url(base_url: &str) -> String {
    format!("{}/models", base_url.trim_end_matches('/'))
}

/// Adds the bearer-token header.
pub(super) fn authorize(request: RequestBuilder, key: &str) -> RequestBuilder {
    request.bearer_auth(key)
}

/// The JSON body for `req`; entries of `extra_body` are merged last so that they can add
/// server-specific fields (llama.cpp `grammar`, vLLM `chat_template_kwargs`) or override ours.
pub(super) fn encode(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| json!({ "role": m.role, "content": m.content }))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(n) = req.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(s) = req.seed {
        body.insert("seed".into(), json!(s));
    }
    for (key, value) in &req.extra_body {
        body.insert(key.clone(), value.clone());
    }
    Value::Object(body)
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: Option<Message>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
    /// vLLM, llama.cpp and DeepSeek.
    reasoning_content: Option<String>,
    /// OpenRouter and Ollama.
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
}

/// Reads a successful response body.
///
/// # Errors
/// A description of the problem when the body is not JSON, has no `choices` (some gateways answer
/// 200 with an error object) or the first choice has no `message`.
pub(super) fn decode(body: &str) -> Result<WireReply, String> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| format!("invalid chat-completions json: {e}"))?;
    let choice = response
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| "the reply has no choices".to_owned())?;
    let message = choice
        .message
        .ok_or_else(|| "the first choice has no message".to_owned())?;
    let reasoning = message
        .reasoning_content
        .or(message.reasoning)
        .filter(|r| !r.trim().is_empty());
    Ok(WireReply {
        content: message.content.unwrap_or_default(),
        reasoning,
        usage: response.usage.map(|u| Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
        }),
        finish_reason: choice.finish_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatMessage;

    #[test]
    fn encodes_set_fields_only_and_merges_extra_body() {
        let mut extra_body = Map::new();
        extra_body.insert("grammar".into(), json!("root ::= \"x\""));
        extra_body.insert("temperature".into(), json!(0.0));
        let req = ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::new("user", "hi")],
            temperature: Some(0.7),
            max_tokens: Some(32),
            extra_body,
            ..ChatRequest::default()
        };
        assert_eq!(
            encode(&req),
            json!({
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}],
                "temperature": 0.0,
                "max_tokens": 32,
                "grammar": "root ::= \"x\"",
            })
        );
    }

    #[test]
    fn decodes_a_recorded_llama_cpp_reply() {
        let body = r#"{"choices":[{"finish_reason":"stop","index":0,"message":{"role":"assistant","content":"<move>e2e4</move>"}}],"created":1796032578,"model":"smollm2-135m-instruct","system_fingerprint":"b0-unknown","object":"chat.completion","usage":{"completion_tokens":15,"prompt_tokens":35,"total_tokens":50,"prompt_tokens_details":{"cached_tokens":24}},"id":"chatcmpl-NokuVHyJMDCeDnmfg1m9OSAbtv1d22KP","timings":{"cache_n":24,"prompt_n":11,"prompt_ms":112.75}}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(reply.content, "<move>e2e4</move>");
        assert_eq!(reply.reasoning, None);
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 35,
                completion_tokens: 15,
                total_tokens: 50
            })
        );
    }

    #[test]
    fn decodes_null_content_and_reasoning_fields() {
        let body = r#"{"choices":[{"message":{"content":null,"reasoning_content":"hmm"},"finish_reason":"length"}]}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(reply.content, "");
        assert_eq!(reply.reasoning.as_deref(), Some("hmm"));
        assert_eq!(reply.usage, None);

        let body = r#"{"choices":[{"message":{"content":"e4","reasoning":"open"}}]}"#;
        assert_eq!(
            decode(body).expect("valid body").reasoning.as_deref(),
            Some("open")
        );
    }

    #[test]
    fn rejects_bodies_without_choices() {
        assert!(decode(r#"{"choices":[]}"#).is_err());
        assert!(decode(r#"{"error":{"message":"overloaded"}}"#).is_err());
        assert!(decode("<html>bad gateway</html>").is_err());
        assert!(decode(r#"{"choices":[{"finish_reason":"stop"}]}"#).is_err());
    }
}
