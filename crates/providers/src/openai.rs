//! The OpenAI chat-completions wire format (`POST {base}/chat/completions`), as spoken by OpenAI,
//! vLLM, llama.cpp's server, Ollama, OpenRouter and most other providers.
//!
//! Only the fields arena needs are read; unknown fields (llama.cpp's `timings`, OpenRouter's
//! `provider`) are ignored, and `content: null` (a reply that only reasoned) reads as empty text.
//!
//! Usage is OpenAI's `usage` object: `prompt_tokens_details.cached_tokens` (cache reads) and
//! `completion_tokens_details.reasoning_tokens`, plus OpenRouter's additions in the same object:
//! `cost` (its credits, US dollars), `cost_details`, `is_byok` and
//! `prompt_tokens_details.cache_write_tokens` (see [`ProviderCost`]).
//!
//! A reasoning effort is sent as `reasoning_effort`. OpenAI's own reasoning models (o1, o3, o4,
//! gpt-5) reject `temperature` and `top_p` and take `max_completion_tokens` instead of
//! `max_tokens`, so for those model names the sampling parameters are dropped and the limit renamed;
//! other servers get the request as asked.
//!
//! Tools are offered as `tools: [{type: function, function: {name, description, parameters}}]`;
//! the reply's `message.tool_calls` are its calls (`arguments` a JSON text), sent back in the
//! assistant message, and each result is a `tool` message naming its `tool_call_id`.

use std::collections::BTreeMap;

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tracing::debug;

use arena_llm::{
    ChatMessage, ChatRequest, ProviderCost, ReportedUsage, ToolCall, Usage,
    wire::{
        BatchApi, Fields, Rejection, StreamParts, WireFormat, WireReply, WireUsageReport, append,
        decode_usage_object, error_of, sampling_settings,
    },
};

/// The chat-completions URL below `base_url` (which ends in `/v1` or similar).
pub(crate) fn chat_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim_end_matches('/'))
}

/// The model-list URL below `base_url`, used as a cheap reachability probe.
pub(crate) fn models_url(base_url: &str) -> String {
    format!("{}/models", base_url.trim_end_matches('/'))
}

/// Adds the bearer-token header (used by the Responses API as well).
pub(crate) fn authorize(request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

/// Whether `model` names one of OpenAI's reasoning models, which refuse sampling parameters.
/// A routing prefix such as OpenRouter's `openai/` is ignored; `gpt-5-chat` models are not
/// reasoning models.
pub(crate) fn is_openai_reasoning_model(model: &str) -> bool {
    let name = model.strip_prefix("openai/").unwrap_or(model);
    let o_series = ["o1", "o3", "o4"].iter().any(|family| {
        name.strip_prefix(family)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
    });
    o_series || (name.starts_with("gpt-5") && !name.contains("-chat"))
}

/// Inserts `temperature` and `top_p` under `names`, except those `keep` refuses, which are
/// dropped with a debug note saying `why`.
pub(crate) fn insert_sampling(
    body: &mut Map<String, Value>,
    req: &ChatRequest,
    names: [&str; 2],
    keep: impl Fn(&str, f64) -> bool,
    why: &str,
) {
    for (name, value) in names.into_iter().zip([req.temperature, req.top_p]) {
        let Some(value) = value else {
            continue;
        };
        if keep(name, value) {
            body.insert(name.into(), json!(value));
        } else {
            debug!(model = %req.model, parameter = name, value, "dropping a sampling parameter: {why}");
        }
    }
}

/// Merges `extra_body` last, so that scripts can add server-specific fields or override ours.
pub(crate) fn merge_extra(body: &mut Map<String, Value>, req: &ChatRequest) {
    for (key, value) in &req.extra_body {
        body.insert(key.clone(), value.clone());
    }
}

/// A message's `content`: its text, or, when it shows pictures, a list of parts, the text
/// first and then each picture as an `image_url` with a data URL.
fn content(m: &ChatMessage) -> Value {
    if m.images.is_empty() {
        return json!(m.content);
    }
    let mut parts = vec![json!({"type": "text", "text": m.content})];
    parts.extend(
        m.images
            .iter()
            .map(|i| json!({"type": "image_url", "image_url": {"url": i.data_url()}})),
    );
    Value::Array(parts)
}

/// The JSON body for `req`; entries of `extra_body` are merged last so that they can add
/// server-specific fields (llama.cpp `grammar`, vLLM `chat_template_kwargs`) or override ours.
pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let messages: Vec<Value> = req.messages.iter().map(encode_message).collect();
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let restricted = is_openai_reasoning_model(&req.model);
    insert_sampling(
        &mut body,
        req,
        ["temperature", "top_p"],
        |_, _| !restricted,
        "openai reasoning models accept only their defaults",
    );
    if let Some(n) = req.max_tokens {
        let name = if restricted {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(name.into(), json!(n));
    }
    if let Some(s) = req.seed {
        body.insert("seed".into(), json!(s));
    }
    if let Some(reasoning) = &req.reasoning {
        match &reasoning.effort {
            Some(effort) => {
                body.insert("reasoning_effort".into(), json!(effort));
            }
            None => debug!(model = %req.model,
                "chat completions take no thinking budget; set a reasoning effort instead"
            ),
        }
    }
    merge_extra(&mut body, req);
    Value::Object(body)
}

/// One message: a tool result is a `tool` message naming its call, an assistant's tool calls
/// are `tool_calls` (its content `null` when it wrote no text), anything else role and text.
fn encode_message(m: &ChatMessage) -> Value {
    if let Some(id) = &m.tool_call_id {
        return json!({"role": "tool", "tool_call_id": id, "content": m.content});
    }
    if m.tool_calls.is_empty() {
        return json!({ "role": m.role, "content": content(m) });
    }
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| {
            json!({"id": c.id, "type": "function", "function": {
                "name": c.name,
                "arguments": c.arguments,
            }})
        })
        .collect();
    let content = if m.content.is_empty() {
        Value::Null
    } else {
        json!(m.content)
    };
    json!({"role": m.role, "content": content, "tool_calls": calls})
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
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: String,
    /// A JSON text; some servers send an object instead, read as its text.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    prompt_tokens_details: Option<PromptDetails>,
    completion_tokens_details: Option<CompletionDetails>,
    /// OpenRouter. Read as any JSON value, so that a malformed price never makes the reply
    /// itself unreadable.
    cost: Option<Value>,
    /// OpenRouter.
    cost_details: Option<Value>,
    /// OpenRouter.
    is_byok: Option<Value>,
}

#[derive(Deserialize)]
struct PromptDetails {
    cached_tokens: Option<u64>,
    /// OpenRouter.
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CompletionDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsageReport for WireUsage {
    fn read(self) -> (Usage, Option<ProviderCost>) {
        let usage = Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            total_tokens: self.total_tokens,
            reasoning_tokens: self
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens),
            cached_tokens: self
                .prompt_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens),
            cache_write_tokens: self
                .prompt_tokens_details
                .and_then(|d| d.cache_write_tokens),
        };
        let cost = ProviderCost::from_usage_fields(self.cost, self.cost_details, self.is_byok);
        (usage, cost)
    }
}

/// The usage and cost a body reports, whatever else it holds (an error object, no choices).
pub(crate) fn decode_usage(body: &str) -> ReportedUsage {
    decode_usage_object::<WireUsage>(body)
}

/// Reads a successful response body.
///
/// # Errors
/// A description of the problem when the body is not JSON, has no `choices` (some gateways answer
/// 200 with an error object) or the first choice has no `message`.
pub(crate) fn decode(body: &str) -> Result<WireReply, String> {
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
    let (usage, cost) = response.usage.map(WireUsage::read).unzip();
    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{i}")),
            name: call.function.name,
            arguments: match call.function.arguments {
                Some(Value::String(text)) => text,
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            },
            signature: None,
            thinking: Vec::new(),
        })
        .collect();
    Ok(WireReply {
        content: message.content.unwrap_or_default(),
        reasoning,
        usage,
        cost: cost.flatten(),
        finish_reason: choice.finish_reason,
        tool_calls,
    })
}

/// OpenAI-compatible chat completions.
pub(crate) struct OpenAiChat;

impl WireFormat for OpenAiChat {
    fn chat_url(&self, base_url: &str, _model: &str) -> String {
        chat_url(base_url)
    }

    fn models_url(&self, base_url: &str) -> String {
        models_url(base_url)
    }

    fn authorize(
        &self,
        request: RequestBuilder,
        key: Option<&str>,
        _api_version: Option<&str>,
    ) -> RequestBuilder {
        authorize(request, key)
    }

    fn encode(&self, req: &ChatRequest) -> Value {
        encode(req)
    }

    fn unsent_settings(&self, req: &ChatRequest) -> Vec<&'static str> {
        if is_openai_reasoning_model(&req.model) {
            sampling_settings(req)
        } else {
            Vec::new()
        }
    }

    fn decode(&self, body: &str) -> Result<WireReply, String> {
        decode(body)
    }

    fn decode_usage(&self, body: &str) -> ReportedUsage {
        decode_usage(body)
    }

    fn streaming_request(&self, url: String, fields: &mut Map<String, Value>) -> String {
        fields.insert("stream".into(), Value::Bool(true));
        // Without it, a streamed chat completion reports no usage at all.
        fields.insert("stream_options".into(), json!({"include_usage": true}));
        url
    }

    fn stream_parts(&self) -> Box<dyn StreamParts> {
        Box::<ChatParts>::default()
    }

    fn rejection(&self, _status: u16, fields: &Fields, message: &str) -> Option<Rejection> {
        rejection(fields, message)
    }

    fn batch_api(&self) -> Option<BatchApi> {
        Some(BatchApi::OpenAi {
            path: "/v1/chat/completions",
        })
    }
}

/// OpenAI (chat and Responses) and the servers that copy its errors (vLLM, OpenRouter): the
/// code `context_length_exceeded`, or vLLM's and OpenRouter's "maximum context length" message;
/// an unknown model or key (`model_not_found`, `invalid_api_key`, `param: model`) is settings.
pub(crate) fn rejection(f: &Fields, message: &str) -> Option<Rejection> {
    if f.code == "context_length_exceeded"
        || message.contains("maximum context length")
        || message.contains("exceeds the context window")
    {
        return Some(Rejection::ContextExceeded);
    }
    if matches!(f.code.as_str(), "model_not_found" | "invalid_api_key") || f.param == "model" {
        return None;
    }
    Some(Rejection::Invalid)
}

/// Chat-completion chunks: the first choice's deltas, its finish reason and the usage chunk.
#[derive(Debug, Default)]
pub(crate) struct ChatParts {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    /// Tool calls by their `index`: id, name and the arguments' text, each sent in pieces.
    tool_calls: BTreeMap<u64, ChatToolCall>,
}

/// One tool call of a chat-completions stream, put together from its deltas.
#[derive(Debug, Default)]
struct ChatToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

impl StreamParts for ChatParts {
    fn push(&mut self, _event: &str, data: Value, _done: &mut bool) -> Result<(), String> {
        if let Some(error) = error_of(&data) {
            return Err(error);
        }
        let choice = data["choices"].as_array().and_then(|choices| {
            choices
                .iter()
                .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
        });
        if let Some(choice) = choice {
            let delta = &choice["delta"];
            append(&mut self.content, delta["content"].as_str());
            append(
                &mut self.reasoning_content,
                delta["reasoning_content"].as_str(),
            );
            append(&mut self.reasoning, delta["reasoning"].as_str());
            for (position, call) in delta["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                // The first delta of a call brings its id and name, later ones pieces of the
                // arguments; `index` says which call (a server without it sends one at a time).
                let index = call["index"].as_u64().unwrap_or(position as u64);
                let entry = self.tool_calls.entry(index).or_default();
                if let Some(id) = call["id"].as_str() {
                    entry.id = Some(id.to_owned());
                }
                let function = &call["function"];
                entry
                    .name
                    .push_str(function["name"].as_str().unwrap_or_default());
                entry
                    .arguments
                    .push_str(function["arguments"].as_str().unwrap_or_default());
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        if let Some(usage) = data.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        Ok(())
    }

    fn body(&self) -> Value {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert("content".into(), json!(self.content));
        if let Some(r) = &self.reasoning_content {
            message.insert("reasoning_content".into(), json!(r));
        }
        if let Some(r) = &self.reasoning {
            message.insert("reasoning".into(), json!(r));
        }
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .values()
                .map(|c| {
                    json!({"id": c.id, "type": "function", "function": {
                        "name": c.name,
                        "arguments": c.arguments,
                    }})
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        json!({
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage,
        })
    }

    fn is_end_marker(&self, data: &str) -> bool {
        data.trim() == "[DONE]"
    }

    fn is_whole_without_end(&self) -> bool {
        self.finish_reason.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_llm::Reasoning;

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
                total_tokens: 50,
                reasoning_tokens: None,
                cached_tokens: Some(24),
                cache_write_tokens: None,
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
    fn reasoning_models_get_effort_and_no_sampling_parameters() {
        let req = ChatRequest {
            model: "o4-mini".into(),
            messages: vec![ChatMessage::new("user", "hi")],
            temperature: Some(0.2),
            top_p: Some(0.9),
            max_tokens: Some(800),
            reasoning: Some(Reasoning::effort("high")),
            ..ChatRequest::default()
        };
        assert_eq!(
            encode(&req),
            json!({
                "model": "o4-mini",
                "messages": [{"role": "user", "content": "hi"}],
                "max_completion_tokens": 800,
                "reasoning_effort": "high",
            })
        );
        // Other servers keep the sampling parameters beside the effort.
        let local = ChatRequest {
            model: "qwen3-8b".into(),
            ..req
        };
        assert_eq!(
            encode(&local),
            json!({
                "model": "qwen3-8b",
                "messages": [{"role": "user", "content": "hi"}],
                "temperature": 0.2,
                "top_p": 0.9,
                "max_tokens": 800,
                "reasoning_effort": "high",
            })
        );
    }

    #[test]
    fn recognises_openai_reasoning_model_names() {
        for model in [
            "o1",
            "o3-mini",
            "o4-mini-2025-04-16",
            "openai/o3",
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1",
        ] {
            assert!(is_openai_reasoning_model(model), "{model}");
        }
        for model in [
            "gpt-4o",
            "gpt-4.1-mini",
            "gpt-5-chat-latest",
            "o1x",
            "olmo-2",
            "qwen3-8b",
        ] {
            assert!(!is_openai_reasoning_model(model), "{model}");
        }
    }

    #[test]
    fn decodes_a_recorded_reasoning_reply_with_usage_details() {
        let reply = decode(include_str!(
            "../../llm/src/fixtures/openai_chat_reasoning.json"
        ))
        .expect("valid body");
        assert_eq!(reply.content, "<move>g1f3</move>");
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 1_247,
                completion_tokens: 412,
                total_tokens: 1_659,
                reasoning_tokens: Some(384),
                cached_tokens: Some(1_024),
                cache_write_tokens: None,
            })
        );
        // OpenAI reports no price: the table prices it.
        assert_eq!(reply.cost, None);
    }

    #[test]
    fn decodes_openrouter_usage_with_its_cost() {
        // OpenRouter's usage-accounting shape: cost in credits (US dollars), its breakdown,
        // cache reads and writes, reasoning tokens.
        let body = r#"{"id":"gen-1761000000-abc","provider":"Anthropic","model":"anthropic/claude-sonnet-4","object":"chat.completion","created":1761000000,
            "choices":[{"logprobs":null,"finish_reason":"stop","native_finish_reason":"end_turn","index":0,
                        "message":{"role":"assistant","content":"<move>e2e4</move>","refusal":null,"reasoning":null}}],
            "usage":{"prompt_tokens":1940,"completion_tokens":212,"total_tokens":2152,"cost":0.008994,"is_byok":false,
                     "prompt_tokens_details":{"cached_tokens":1536,"cache_write_tokens":0,"audio_tokens":0},
                     "cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.0012408,"upstream_inference_completions_cost":0.00318},
                     "completion_tokens_details":{"reasoning_tokens":128,"image_tokens":0}}}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 1940,
                completion_tokens: 212,
                total_tokens: 2152,
                reasoning_tokens: Some(128),
                cached_tokens: Some(1536),
                cache_write_tokens: Some(0),
            })
        );
        let cost = reply.cost.expect("a provider cost");
        assert_eq!(cost.usd, 0.008994);
        assert_eq!(
            cost.details.expect("the breakdown")["upstream_inference_prompt_cost"],
            json!(0.0012408)
        );
    }

    #[test]
    fn a_byok_call_costs_the_fee_and_the_upstream_charge() {
        let body = r#"{"choices":[{"message":{"content":"e4"}}],
            "usage":{"prompt_tokens":194,"completion_tokens":2,"total_tokens":196,"cost":0.0005,"is_byok":true,
                     "cost_details":{"upstream_inference_cost":0.01}}}"#;
        let cost = decode(body).expect("valid body").cost.expect("a cost");
        assert!((cost.usd - 0.0105).abs() < 1e-12, "{}", cost.usd);
        // Without BYOK the upstream charge is already inside `cost`.
        let body = body.replace(r#""is_byok":true"#, r#""is_byok":false"#);
        assert_eq!(
            decode(&body).expect("valid body").cost.expect("a cost").usd,
            0.0005
        );
        // A cost that is not a price is no cost.
        for bad in [r#""cost":null"#, r#""cost":-1"#, r#""cost":"0.1""#] {
            let body = body.replace(r#""cost":0.0005"#, bad);
            assert_eq!(decode(&body).map(|r| r.cost), Ok(None), "{bad}");
        }
    }

    #[test]
    fn reads_the_usage_of_a_body_that_is_no_reply() {
        // OpenRouter answers some upstream failures with a 200 whose `choices` are empty but
        // whose usage was billed.
        let body = r#"{"id":"gen-2","choices":[],"usage":{"prompt_tokens":812,"completion_tokens":0,"total_tokens":812,"cost":0.000406}}"#;
        assert!(decode(body).is_err());
        let reported = decode_usage(body);
        assert_eq!(reported.usage.map(|u| u.prompt_tokens), Some(812));
        assert_eq!(reported.cost.map(|c| c.usd), Some(0.000406));
        assert_eq!(
            decode_usage("<html>bad gateway</html>"),
            ReportedUsage::default()
        );
        assert_eq!(
            decode_usage(r#"{"error":{"message":"overloaded"}}"#),
            ReportedUsage::default()
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
