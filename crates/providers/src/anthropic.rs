//! The Anthropic messages wire format (`POST {base}/messages`), as spoken by Anthropic and llama.cpp.
//!
//! System messages go to the top-level `system` field (joined by blank lines); the others stay in
//! `messages`. The key travels as `Authorization: Bearer`, as Anthropic's SDK sends it (the API
//! also takes `x-api-key`), and every request names the API version, [`API_VERSION`] unless the
//! player sets its own.
//!
//! `max_tokens` is required here, so a request without one gets [`DEFAULT_MAX_TOKENS`]. Thinking
//! (`thinking: {type: enabled, budget_tokens}`) takes the request's budget, or its effort mapped by
//! [`Reasoning::budget`]; since the budget must stay below `max_tokens`, a `max_tokens` at or below it
//! is read as the room left for the answer and the budget is added to it. The API version arena
//! speaks has no sampling settings at all (the SDK's `MessageCreateParams` has no `temperature`,
//! `top_p` or `top_k`), so `temperature` and `top_p` are dropped, and so is the `seed`, which the
//! API never had ([`dropped_settings`] names them for the stored request).
//!
//! The reply's `thinking` blocks are the reasoning (`redacted_thinking` blocks carry no readable
//! text); its `text` blocks are the answer.
//!
//! Tools are offered as `tools: [{name, description, input_schema}]`; the reply's `tool_use`
//! blocks are its calls (`input` an object, kept as its JSON text), sent back as `tool_use`
//! blocks of the assistant message, and the results are `tool_result` blocks of a `user` message.
//! The API requires a thinking model's `thinking` and `redacted_thinking` blocks back, unchanged
//! and with their signatures, in the assistant message that called tools: they travel with the
//! reply's first call ([`ToolCall::thinking`]) and open that message again. A reply without calls
//! brings them back too, on its own message ([`ChatMessage::thinking`], read from the stored body
//! by [`thinking_blocks`]), so that a text dialog's assistant turns are sent as the model wrote
//! them (the API may ignore earlier turns' thinking, but it validates what it is given).
//!
//! Usage: `input_tokens` counts only the uncached part of the prompt, so the prompt is that plus
//! `cache_read_input_tokens` (the cached tokens) and `cache_creation_input_tokens` (the cache
//! writes). Thinking tokens are inside `output_tokens`; `output_tokens_details.thinking_tokens`
//! says how many, when the reply reports it. The API reports no price.

use std::collections::BTreeMap;

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tracing::debug;

use arena_llm::{
    ChatMessage, ChatRequest, Provider, Reasoning, ReportedUsage, ToolCall, Usage,
    wire::{BatchApi, Fields, Rejection, StreamParts, WireFormat, WireReply, assemble_stored},
};

use crate::openai::merge_extra;

/// The API version every request names unless the player sets one (`anthropic-version`): the one
/// Anthropic's Python SDK sends (see the conformance suite's PROVENANCE).
pub(crate) const API_VERSION: &str = "2026-10-21";
/// `max_tokens` for requests that set none (the API requires the field).
const DEFAULT_MAX_TOKENS: u32 = 4096;
/// The smallest thinking budget the API accepts.
const MIN_BUDGET: u32 = 1024;

/// The messages URL below `base_url` (which ends in `/v1`).
pub(crate) fn chat_url(base_url: &str) -> String {
    format!("{}/messages", base_url.trim_end_matches('/'))
}

/// The model-list URL below `base_url`.
pub(crate) fn models_url(base_url: &str) -> String {
    format!("{}/models", base_url.trim_end_matches('/'))
}

/// Adds the version header (`version`, or [`API_VERSION`]) and, when there is a key, the bearer
/// token.
pub(crate) fn authorize(
    request: RequestBuilder,
    key: Option<&str>,
    version: Option<&str>,
) -> RequestBuilder {
    let request = request.header("anthropic-version", version.unwrap_or(API_VERSION));
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

/// The settings of `req` this format does not send: `temperature` and `top_p` (the API version
/// has none) and `seed` (never had one).
pub(crate) fn dropped_settings(req: &ChatRequest) -> Vec<&'static str> {
    [
        ("temperature", req.temperature.is_some()),
        ("top_p", req.top_p.is_some()),
        ("seed", req.seed.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

/// The thinking budget `req` asks for, if thinking is on.
fn thinking_budget(req: &ChatRequest) -> Option<u32> {
    let reasoning: &Reasoning = req.reasoning.as_ref().filter(|r| r.is_enabled())?;
    let Some(budget) = reasoning.budget() else {
        debug!(model = %req.model, effort = ?reasoning.effort, "unknown reasoning effort; thinking stays off");
        return None;
    };
    if budget < MIN_BUDGET {
        debug!(model = %req.model, budget, "raising the thinking budget to anthropic's minimum of 1024");
    }
    Some(budget.max(MIN_BUDGET))
}

/// A message's `content`: its text, or, when it shows pictures, a list of blocks, the text
/// first and then each picture as an `image` block with a base64 `source`.
fn content(m: &ChatMessage) -> Value {
    if m.images.is_empty() {
        return json!(m.content);
    }
    let mut blocks = vec![json!({"type": "text", "text": m.content})];
    blocks.extend(m.images.iter().map(|i| {
        json!({"type": "image", "source": {"type": "base64", "media_type": i.media_type, "data": i.base64()}})
    }));
    Value::Array(blocks)
}

/// The JSON body for `req`, with `extra_body` merged last.
pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .map(|m| m.content.as_str())
        .collect();
    if !system.is_empty() {
        body.insert("system".into(), json!(system.join("\n\n")));
    }
    body.insert(
        "messages".into(),
        Value::Array(encode_messages(&req.messages)),
    );
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let mut max_tokens = req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let budget = thinking_budget(req);
    if let Some(budget) = budget {
        if max_tokens <= budget {
            debug!(model = %req.model, max_tokens, budget, "max_tokens does not exceed the thinking budget; adding the budget to it");
            max_tokens = max_tokens.saturating_add(budget);
        }
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".into(), json!(max_tokens));
    let dropped = dropped_settings(req);
    if !dropped.is_empty() {
        debug!(model = %req.model, ?dropped, "anthropic messages take no sampling settings; dropping them");
    }
    merge_extra(&mut body, req);
    Value::Object(body)
}

/// The messages other than system ones. An assistant's tool calls are `tool_use` blocks after
/// its text (if it wrote any); tool results are `tool_result` blocks, those that follow each
/// other in one `user` message, as the API wants them.
fn encode_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for m in messages.iter().filter(|m| m.role != "system") {
        if let Some(id) = &m.tool_call_id {
            results.push(json!({"type": "tool_result", "tool_use_id": id, "content": m.content}));
            continue;
        }
        if !results.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut results)}));
        }
        if m.tool_calls.is_empty() && m.thinking.is_empty() {
            out.push(json!({"role": m.role, "content": content(m)}));
            continue;
        }
        // The thinking that led to the answer or the calls opens the message, as it opened the
        // reply: the message's own, else the one carried by its first call.
        let mut blocks: Vec<Value> = if m.thinking.is_empty() {
            m.tool_calls
                .iter()
                .flat_map(|c| c.thinking.iter().cloned())
                .collect()
        } else {
            m.thinking.clone()
        };
        if !m.content.is_empty() {
            blocks.push(json!({"type": "text", "text": m.content}));
        }
        blocks.extend(m.tool_calls.iter().map(|c| {
            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments_object()})
        }));
        out.push(json!({"role": m.role, "content": blocks}));
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "content": results}));
    }
    out
}

impl Block {
    /// The block as it must go back in the next request, when it is a `thinking` block (its
    /// text and signature) or a `redacted_thinking` one (encrypted: nothing to read, but it
    /// goes back as it came).
    fn carried(&self) -> Option<Value> {
        match self.kind.as_str() {
            "thinking" => Some(json!({
                "type": "thinking",
                "thinking": self.thinking.clone().unwrap_or_default(),
                "signature": self.signature.clone().unwrap_or_default(),
            })),
            "redacted_thinking" => Some(json!({
                "type": "redacted_thinking",
                "data": self.data.clone().unwrap_or_default(),
            })),
            _ => None,
        }
    }
}

/// The `thinking` and `redacted_thinking` blocks of a reply body, in order, as they must go
/// back; `None` when the body is not a message with content.
pub(crate) fn thinking_blocks(body: &str) -> Option<Vec<Value>> {
    let response: Response = serde_json::from_str(body).ok()?;
    Some(
        response
            .content?
            .iter()
            .filter_map(Block::carried)
            .collect(),
    )
}

#[derive(Deserialize)]
struct Response {
    #[serde(rename = "type")]
    kind: Option<String>,
    content: Option<Vec<Block>>,
    stop_reason: Option<String>,
    usage: Option<WireUsage>,
    error: Option<ErrorObject>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    thinking: Option<String>,
    /// A `thinking` block's signature.
    signature: Option<String>,
    /// A `redacted_thinking` block's encrypted thinking.
    data: Option<String>,
    /// A `tool_use` block's fields.
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct OutputDetails {
    thinking_tokens: Option<u64>,
}

impl WireUsage {
    fn read(self) -> Usage {
        let written = self.cache_creation_input_tokens;
        let read = self.cache_read_input_tokens;
        let prompt = self.input_tokens + written.unwrap_or(0) + read.unwrap_or(0);
        Usage {
            prompt_tokens: prompt,
            completion_tokens: self.output_tokens,
            total_tokens: prompt + self.output_tokens,
            reasoning_tokens: self.output_tokens_details.and_then(|d| d.thinking_tokens),
            cached_tokens: read,
            cache_write_tokens: written,
        }
    }
}

/// The usage a body reports, whatever else it holds.
pub(crate) fn decode_usage(body: &str) -> ReportedUsage {
    #[derive(Deserialize)]
    struct UsageOnly {
        usage: Option<WireUsage>,
    }
    ReportedUsage {
        usage: serde_json::from_str::<UsageOnly>(body)
            .ok()
            .and_then(|b| b.usage)
            .map(WireUsage::read),
        cost: None,
    }
}

/// Reads a successful response body.
///
/// # Errors
/// A description of the problem when the body is not JSON, is an error object, or has no
/// `content`.
pub(crate) fn decode(body: &str) -> Result<WireReply, String> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| format!("invalid anthropic messages json: {e}"))?;
    if response.kind.as_deref() == Some("error") {
        let error = response.error.as_ref();
        return Err(format!(
            "the reply is an error: {}: {}",
            error.and_then(|e| e.kind.as_deref()).unwrap_or("no type"),
            error
                .and_then(|e| e.message.as_deref())
                .unwrap_or("no message")
        ));
    }
    let blocks = response
        .content
        .ok_or_else(|| "the reply has no content".to_owned())?;
    let mut answer = Vec::new();
    let mut thinking = Vec::new();
    let mut tool_calls: Vec<ToolCall> = Vec::new();
    // The thinking blocks as they must go back (see the module's doc).
    let mut carried = Vec::new();
    for block in blocks {
        if let Some(back) = block.carried() {
            carried.push(back);
        }
        match block.kind.as_str() {
            "text" => answer.extend(block.text),
            "thinking" => thinking.extend(block.thinking.filter(|t| !t.trim().is_empty())),
            "tool_use" => tool_calls.push(ToolCall {
                id: block
                    .id
                    .unwrap_or_else(|| format!("call_{}", tool_calls.len())),
                name: block.name.unwrap_or_default(),
                arguments: block.input.unwrap_or_else(|| json!({})).to_string(),
                signature: None,
                thinking: Vec::new(),
            }),
            _ => {}
        }
    }
    if let Some(first) = tool_calls.first_mut() {
        first.thinking = carried;
    }
    let finish_reason = response.stop_reason.map(|reason| {
        match reason.as_str() {
            "end_turn" | "stop_sequence" => "stop",
            "max_tokens" => "length",
            "refusal" => "content_filter",
            "tool_use" => "tool_calls",
            other => other,
        }
        .to_owned()
    });
    Ok(WireReply {
        content: answer.concat(),
        reasoning: (!thinking.is_empty()).then(|| thinking.join("\n\n")),
        usage: response.usage.map(WireUsage::read),
        cost: None,
        finish_reason,
        tool_calls,
    })
}

/// Anthropic messages.
pub(crate) struct Anthropic;

impl WireFormat for Anthropic {
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
        api_version: Option<&str>,
    ) -> RequestBuilder {
        authorize(request, key, api_version)
    }

    fn encode(&self, req: &ChatRequest) -> Value {
        encode(req)
    }

    fn unsent_settings(&self, req: &ChatRequest) -> Vec<&'static str> {
        dropped_settings(req)
    }

    fn decode(&self, body: &str) -> Result<WireReply, String> {
        decode(body)
    }

    fn decode_usage(&self, body: &str) -> ReportedUsage {
        decode_usage(body)
    }

    /// The `thinking` and `redacted_thinking` blocks, from the body as it is or from its stream
    /// of events put together again.
    fn stored_thinking(&self, raw_body: &str) -> Vec<Value> {
        thinking_blocks(raw_body)
            .or_else(|| {
                let body = assemble_stored(Provider::Anthropic, raw_body).to_string();
                thinking_blocks(&body)
            })
            .unwrap_or_default()
    }

    fn streaming_request(&self, url: String, fields: &mut Map<String, Value>) -> String {
        fields.insert("stream".into(), Value::Bool(true));
        url
    }

    fn stream_parts(&self) -> Box<dyn StreamParts> {
        Box::<AnthropicParts>::default()
    }

    fn rejection(&self, status: u16, fields: &Fields, message: &str) -> Option<Rejection> {
        rejection(status, fields, message)
    }

    fn batch_api(&self) -> Option<BatchApi> {
        Some(BatchApi::Anthropic)
    }
}

/// Anthropic: `prompt is too long: N tokens > M maximum` (or the input plus `max_tokens`
/// exceeding the context limit) is the context; an `invalid_request_error` names the field at
/// fault first (`thinking.enabled.budget_tokens: ...`): a field of the dialog (`messages...`) is
/// this request's content, any other field (`max_tokens`, `thinking`, `model`, ...) the player's
/// settings. 413 `request_too_large` is this request.
fn rejection(status: u16, f: &Fields, message: &str) -> Option<Rejection> {
    if message.starts_with("prompt is too long")
        || message.contains("exceed context limit")
        || message.contains("context window")
    {
        return Some(Rejection::ContextExceeded);
    }
    if status == 413 {
        return Some(Rejection::Invalid);
    }
    // An account without credit is refused with `invalid_request_error` too.
    if f.kind != "invalid_request_error" || message.contains("credit balance") {
        return None;
    }
    let field = f.message.split(':').next().unwrap_or_default();
    let names_a_field = !field.contains(' ') && field.len() < f.message.len();
    if names_a_field && !field.starts_with("messages") {
        return None;
    }
    Some(Rejection::Invalid)
}

/// Anthropic events: the message from `message_start`, its blocks by index, the stop reason
/// and the usage, `message_delta`'s counts laid over `message_start`'s.
#[derive(Debug, Default)]
pub(crate) struct AnthropicParts {
    message: Option<Map<String, Value>>,
    /// Block index → block type and text (or thinking, or a tool call's input as JSON text).
    blocks: BTreeMap<u64, (String, String)>,
    /// Block index → a `tool_use` block's id and name.
    tools: BTreeMap<u64, (String, String)>,
    /// Block index → what a thinking block must carry back besides its text: a `thinking`
    /// block's `signature` (from `signature_delta`), a `redacted_thinking` block's `data`.
    sealed: BTreeMap<u64, (&'static str, String)>,
    stop_reason: Option<Value>,
    usage: Map<String, Value>,
}

impl StreamParts for AnthropicParts {
    fn push(&mut self, event: &str, data: Value, done: &mut bool) -> Result<(), String> {
        let kind = data["type"].as_str().unwrap_or(event).to_owned();
        let index = data["index"].as_u64().unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                let mut message = data["message"].as_object().cloned().unwrap_or_default();
                if let Some(Value::Object(usage)) = message.remove("usage") {
                    self.usage.extend(usage);
                }
                self.message = Some(message);
            }
            "content_block_start" => {
                let block = &data["content_block"];
                let kind = block["type"].as_str().unwrap_or("text").to_owned();
                if kind == "tool_use" {
                    let id = block["id"].as_str().unwrap_or_default().to_owned();
                    let name = block["name"].as_str().unwrap_or_default().to_owned();
                    self.tools.insert(index, (id, name));
                }
                if let Some(data) = block["data"]
                    .as_str()
                    .filter(|_| kind == "redacted_thinking")
                {
                    self.sealed.insert(index, ("data", data.to_owned()));
                }
                if let Some(signature) = block["signature"].as_str().filter(|s| !s.is_empty()) {
                    self.sealed
                        .insert(index, ("signature", signature.to_owned()));
                }
                let text = block["text"]
                    .as_str()
                    .or(block["thinking"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                self.blocks.insert(index, (kind, text));
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                let (kind, text) = match delta["type"].as_str() {
                    Some("text_delta") => ("text", delta["text"].as_str()),
                    Some("thinking_delta") => ("thinking", delta["thinking"].as_str()),
                    // A tool call's input comes as pieces of its JSON text.
                    Some("input_json_delta") => ("tool_use", delta["partial_json"].as_str()),
                    Some("signature_delta") => {
                        let piece = delta["signature"].as_str().unwrap_or_default();
                        let sealed = self
                            .sealed
                            .entry(index)
                            .or_insert_with(|| ("signature", String::new()));
                        sealed.1.push_str(piece);
                        return Ok(());
                    }
                    _ => return Ok(()),
                };
                let block = self
                    .blocks
                    .entry(index)
                    .or_insert_with(|| (kind.to_owned(), String::new()));
                block.1.push_str(text.unwrap_or_default());
            }
            "message_delta" => {
                if let Some(reason) = data["delta"].get("stop_reason") {
                    self.stop_reason = Some(reason.clone());
                }
                if let Some(usage) = data["usage"].as_object() {
                    // The counts here are totals so far: they replace message_start's.
                    self.usage.extend(
                        usage
                            .iter()
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| (k.clone(), v.clone())),
                    );
                }
            }
            "message_stop" => *done = true,
            "error" => {
                let error = &data["error"];
                return Err(format!(
                    "the stream reported an error: {}: {}",
                    error["type"].as_str().unwrap_or("error"),
                    error["message"].as_str().unwrap_or("no message")
                ));
            }
            _ => {}
        }
        Ok(())
    }

    fn body(&self) -> Value {
        let mut message = self.message.clone().unwrap_or_else(|| {
            let mut m = Map::new();
            m.insert("type".into(), json!("message"));
            m
        });
        let content: Vec<Value> = self
            .blocks
            .iter()
            .map(|(index, (kind, text))| match kind.as_str() {
                "thinking" => {
                    let signature = self.sealed.get(index).map_or("", |s| s.1.as_str());
                    json!({"type": "thinking", "thinking": text, "signature": signature})
                }
                "redacted_thinking" => {
                    let data = self.sealed.get(index).map_or("", |s| s.1.as_str());
                    json!({"type": "redacted_thinking", "data": data})
                }
                "tool_use" => {
                    let (id, name) = self.tools.get(index).cloned().unwrap_or_default();
                    // Input not (yet) whole JSON reads as no input.
                    let input = serde_json::from_str::<Value>(text)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({}));
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
                _ => json!({"type": kind, "text": text}),
            })
            .collect();
        message.insert("content".into(), Value::Array(content));
        if let Some(reason) = &self.stop_reason {
            message.insert("stop_reason".into(), reason.clone());
        }
        if !self.usage.is_empty() {
            message.insert("usage".into(), Value::Object(self.usage.clone()));
        }
        Value::Object(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_llm::ChatMessage;

    fn chess_request() -> ChatRequest {
        ChatRequest {
            model: "claude-sonnet-4-20250514".into(),
            messages: vec![
                ChatMessage::new("system", "You play chess."),
                ChatMessage::new("user", "1. e4 c5. Your move?"),
            ],
            temperature: Some(0.2),
            top_p: Some(0.9),
            max_tokens: Some(512),
            seed: Some(3),
            ..ChatRequest::default()
        }
    }

    #[test]
    fn system_goes_to_the_top_level_and_max_tokens_is_always_set() {
        // The API version has no sampling settings, and the API never had a seed.
        assert_eq!(
            encode(&chess_request()),
            json!({
                "model": "claude-sonnet-4-20250514",
                "system": "You play chess.",
                "messages": [{"role": "user", "content": "1. e4 c5. Your move?"}],
                "max_tokens": 512,
            })
        );
        assert_eq!(
            dropped_settings(&chess_request()),
            ["temperature", "top_p", "seed"]
        );
        let bare = ChatRequest {
            model: "m".into(),
            messages: vec![ChatMessage::new("user", "hi")],
            ..ChatRequest::default()
        };
        assert_eq!(
            encode(&bare),
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4096})
        );
    }

    #[test]
    fn thinking_takes_the_budget() {
        let req = ChatRequest {
            reasoning: Some(Reasoning::budget_tokens(2048)),
            max_tokens: Some(8000),
            ..chess_request()
        };
        let body = encode(&req);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(body["max_tokens"], json!(8000));
        assert!(body.get("temperature").is_none() && body.get("top_p").is_none());
    }

    #[test]
    fn thinking_blocks_go_back_before_the_calls_they_led_to() {
        let body = r#"{"type":"message","stop_reason":"tool_use","content":[
            {"type":"thinking","thinking":"Look first.","signature":"sig-1"},
            {"type":"redacted_thinking","data":"enc-2"},
            {"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_1","name":"get_legal_moves","input":{}}],
            "usage":{"input_tokens":9,"output_tokens":40,"output_tokens_details":{"thinking_tokens":30}}}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(30));
        let carried = vec![
            json!({"type": "thinking", "thinking": "Look first.", "signature": "sig-1"}),
            json!({"type": "redacted_thinking", "data": "enc-2"}),
        ];
        assert_eq!(reply.tool_calls[0].thinking, carried);
        let dialog = [
            ChatMessage::new("user", "Your move?"),
            ChatMessage::assistant(reply.content.clone(), reply.tool_calls.clone()),
            ChatMessage::tool_result("toolu_1", "e2e4"),
        ];
        let sent = encode_messages(&dialog);
        assert_eq!(
            sent[1]["content"],
            json!([
                carried[0],
                carried[1],
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_legal_moves", "input": {}},
            ])
        );
    }

    #[test]
    fn a_text_dialog_sends_the_thinking_back_before_the_answer() {
        let body = r#"{"type":"message","stop_reason":"end_turn","content":[
            {"type":"thinking","thinking":"The centre.","signature":"sig-1"},
            {"type":"redacted_thinking","data":"enc-2"},
            {"type":"text","text":"e2e4"}],
            "usage":{"input_tokens":9,"output_tokens":40}}"#;
        let carried = thinking_blocks(body).expect("a message");
        assert_eq!(
            carried,
            [
                json!({"type": "thinking", "thinking": "The centre.", "signature": "sig-1"}),
                json!({"type": "redacted_thinking", "data": "enc-2"}),
            ]
        );
        let mut answer = ChatMessage::new("assistant", decode(body).expect("valid").content);
        answer.thinking = carried.clone();
        let dialog = [
            ChatMessage::new("user", "Your move?"),
            answer,
            ChatMessage::new("user", "Illegal. Again?"),
        ];
        let sent = encode_messages(&dialog);
        assert_eq!(
            sent[1]["content"],
            json!([carried[0], carried[1], {"type": "text", "text": "e2e4"}])
        );
        // Without thinking, the turn is the plain string it always was.
        assert_eq!(
            encode_messages(&[ChatMessage::new("assistant", "e2e4")])[0]["content"],
            json!("e2e4")
        );
        assert_eq!(thinking_blocks("not json"), None);
    }

    #[test]
    fn max_tokens_below_the_budget_becomes_room_for_the_answer() {
        let req = ChatRequest {
            reasoning: Some(Reasoning::effort("medium")),
            ..chess_request()
        };
        let body = encode(&req);
        assert_eq!(body["thinking"]["budget_tokens"], json!(8192));
        assert_eq!(body["max_tokens"], json!(8192 + 512));
        // Too small a budget is raised to the minimum; `none` turns thinking off.
        let req = ChatRequest {
            reasoning: Some(Reasoning::budget_tokens(100)),
            ..chess_request()
        };
        assert_eq!(encode(&req)["thinking"]["budget_tokens"], json!(1024));
        let req = ChatRequest {
            reasoning: Some(Reasoning::effort("none")),
            ..chess_request()
        };
        assert!(encode(&req).get("thinking").is_none());
    }

    #[test]
    fn decodes_thinking_blocks_usage_and_stop_reason() {
        let reply = decode(include_str!(
            "../../llm/src/fixtures/anthropic_thinking.json"
        ))
        .expect("valid body");
        assert_eq!(reply.content, "<move>g1f3</move>");
        assert_eq!(
            reply.reasoning.as_deref(),
            Some(
                "Black answered 1.e4 with 1...c5, the Sicilian. The main line continues with the king's knight."
            )
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 2360,
                completion_tokens: 187,
                total_tokens: 2547,
                reasoning_tokens: None,
                cached_tokens: Some(2048),
                cache_write_tokens: Some(0),
            })
        );
    }

    #[test]
    fn cache_writes_and_reads_are_parts_of_the_prompt() {
        // The shape of Anthropic's prompt-caching docs: a first call writes the cache, with the
        // per-TTL breakdown beside the totals.
        let body = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
            "content":[{"type":"text","text":"e2e4"}],"stop_reason":"end_turn","stop_sequence":null,
            "usage":{"input_tokens":21,"cache_creation_input_tokens":1800,"cache_read_input_tokens":0,
                     "cache_creation":{"ephemeral_5m_input_tokens":1800,"ephemeral_1h_input_tokens":0},
                     "output_tokens":393,"service_tier":"standard"}}"#;
        let usage = decode(body).expect("valid body").usage.expect("usage");
        assert_eq!(usage.prompt_tokens, 21 + 1800);
        assert_eq!(usage.cache_write_tokens, Some(1800));
        assert_eq!(usage.cached_tokens, Some(0));
        assert_eq!(
            usage.reasoning_tokens, None,
            "no output_tokens_details: thinking tokens unknown"
        );
        // llama.cpp's messages endpoint sends no cache fields: unknown, not zero.
        let body = r#"{"type":"message","content":[{"type":"text","text":"e4"}],"usage":{"input_tokens":9,"output_tokens":2}}"#;
        let usage = decode(body).expect("valid body").usage.expect("usage");
        assert_eq!(
            (usage.cached_tokens, usage.cache_write_tokens),
            (None, None)
        );
        // An error object carries no usage.
        assert_eq!(
            decode_usage(include_str!("../../llm/src/fixtures/anthropic_529.json")),
            ReportedUsage::default()
        );
    }

    #[test]
    fn maps_stop_reasons() {
        let reply = |reason: &str| {
            let body = format!(r#"{{"type":"message","content":[],"stop_reason":"{reason}"}}"#);
            decode(&body).expect("valid body").finish_reason
        };
        assert_eq!(reply("max_tokens").as_deref(), Some("length"));
        assert_eq!(reply("stop_sequence").as_deref(), Some("stop"));
        assert_eq!(reply("refusal").as_deref(), Some("content_filter"));
        assert_eq!(reply("pause_turn").as_deref(), Some("pause_turn"));
    }

    #[test]
    fn rejects_error_objects_and_malformed_bodies() {
        let err = decode(include_str!("../../llm/src/fixtures/anthropic_529.json"))
            .expect_err("error body");
        assert!(err.contains("overloaded_error: Overloaded"), "{err}");
        assert!(decode(r#"{"type":"message"}"#).is_err());
        assert!(decode("<html>bad gateway</html>").is_err());
    }
}
