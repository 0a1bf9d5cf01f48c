//! The OpenAI Responses wire format (`POST {base}/responses`), as spoken by OpenAI and llama.cpp.
//!
//! System messages become `instructions` (joined by blank lines when there are several); the other
//! messages become `input` message items. The reply's `output` holds `reasoning` items, whose
//! summaries (or, from open-weight servers, `reasoning_text` content) are the reasoning, and
//! `message` items, whose `output_text` parts are the answer.
//!
//! A reasoning effort is sent as `reasoning: {effort, summary: "auto"}`, since without a summary
//! request OpenAI returns no reasoning text at all. Reasoning models on this API refuse
//! `temperature` and `top_p`, so with reasoning enabled they are dropped. The API has no `seed`.
//! `store: false` keeps OpenAI from retaining the conversation.
//!
//! Tools are offered as `tools: [{type: function, name, description, parameters}]`; the reply's
//! `function_call` output items are its calls (their `call_id` is the id), sent back as
//! `function_call` input items, and each result is a `function_call_output` item. The reply's
//! `reasoning` items go back too, before the calls they led to, as the API recommends for
//! reasoning models in a tool dialog: since arena asks with `store: false`, a request with
//! reasoning on asks for `include: ["reasoning.encrypted_content"]`, and each item goes back
//! with its id, summary and encrypted content. They travel with the reply's first call
//! ([`ToolCall::thinking`](super::ToolCall::thinking)), so a resumed run reads them from the
//! stored body too. A dialog without tools sends no reasoning back.
//!
//! Function tools are sent with `strict: false` (the SDK's `FunctionToolParam` requires the key;
//! arena's schemas are not written for strict mode, and its readers take any arguments), and
//! pictures as `input_image` with `detail: auto` (required by `ResponseInputImageParam`; `auto` is
//! what the API assumes when it is left out).
//!
//! Usage is `input_tokens_details.cached_tokens` (cache reads) and `cache_write_tokens` (cache
//! writes), and `output_tokens_details.reasoning_tokens`;
//! OpenRouter's Responses API adds `cost`, `cost_details` and `is_byok` (see [`ProviderCost`]).

use std::collections::BTreeMap;

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tracing::debug;

use arena_llm::{
    ChatMessage, ChatRequest, ProviderCost, Reasoning, ReportedUsage, ToolCall, Usage,
    wire::{
        BatchApi, Fields, Rejection, StreamParts, WireFormat, WireReply, WireUsageReport,
        decode_usage_object, sampling_settings,
    },
};

use crate::openai::{self, insert_sampling, merge_extra};

/// The Responses URL below `base_url` (which ends in `/v1`).
pub(crate) fn chat_url(base_url: &str) -> String {
    format!("{}/responses", base_url.trim_end_matches('/'))
}

/// A message item's `content`: its text, or, when it shows pictures, a list of parts, the text
/// as `input_text` and then each picture as an `input_image` with a data URL.
fn content(m: &ChatMessage) -> Value {
    if m.images.is_empty() {
        return json!(m.content);
    }
    let mut parts = vec![json!({"type": "input_text", "text": m.content})];
    parts.extend(
        m.images
            .iter()
            .map(|i| json!({"type": "input_image", "image_url": i.data_url(), "detail": "auto"})),
    );
    Value::Array(parts)
}

/// The JSON body for `req`, with `extra_body` merged last.
pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let instructions: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .map(|m| m.content.as_str())
        .collect();
    if !instructions.is_empty() {
        body.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    let input: Vec<Value> = req
        .messages
        .iter()
        .filter(|m| m.role != "system")
        .flat_map(input_items)
        .collect();
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let reasoning_on = req.reasoning.as_ref().is_some_and(|r| r.is_enabled());
    insert_sampling(
        &mut body,
        req,
        ["temperature", "top_p"],
        |_, _| !reasoning_on,
        "reasoning models on the responses api accept only their defaults",
    );
    if let Some(n) = req.max_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if req.seed.is_some() {
        debug!(model = %req.model, "the responses api has no seed; dropping it");
    }
    if let Some(reasoning) = &req.reasoning {
        match &reasoning.effort {
            Some(effort) => {
                body.insert(
                    "reasoning".into(),
                    json!({"effort": effort, "summary": "auto"}),
                );
                // Under `store: false` a reasoning item can go back in a tool dialog only
                // with its encrypted content.
                if reasoning.is_enabled() {
                    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
                }
            }
            None => debug!(model = %req.model,
                "the responses api takes no thinking budget; set a reasoning effort instead"
            ),
        }
    }
    body.insert("store".into(), json!(false));
    merge_extra(&mut body, req);
    Value::Object(body)
}

/// The input items of one message: a tool result is a `function_call_output`, an assistant's
/// tool calls are `function_call` items after its text (if it wrote any).
fn input_items(m: &ChatMessage) -> Vec<Value> {
    if let Some(id) = &m.tool_call_id {
        return vec![json!({"type": "function_call_output", "call_id": id, "output": m.content})];
    }
    // The reasoning that led to the calls goes back first, as it came.
    let mut items: Vec<Value> = m
        .tool_calls
        .iter()
        .flat_map(|c| c.thinking.iter().cloned())
        .collect();
    if m.tool_calls.is_empty() || !m.content.is_empty() {
        items.push(json!({"type": "message", "role": m.role, "content": content(m)}));
    }
    items.extend(m.tool_calls.iter().map(|c| {
        json!({
            "type": "function_call",
            "call_id": c.id,
            "name": c.name,
            "arguments": c.arguments,
        })
    }));
    items
}

#[derive(Deserialize)]
struct Response {
    status: Option<String>,
    output: Option<Vec<Item>>,
    incomplete_details: Option<IncompleteDetails>,
    error: Option<ErrorObject>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: String,
    /// A `reasoning` item's id and encrypted reasoning (with `include:
    /// ["reasoning.encrypted_content"]`).
    id: Option<String>,
    encrypted_content: Option<String>,
    #[serde(default)]
    content: Vec<Part>,
    #[serde(default)]
    summary: Vec<Part>,
    /// A `function_call` item's fields.
    call_id: Option<String>,
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct IncompleteDetails {
    reason: Option<String>,
}

#[derive(Deserialize)]
struct ErrorObject {
    code: Option<String>,
    message: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    total_tokens: Option<u64>,
    input_tokens_details: Option<InputDetails>,
    output_tokens_details: Option<OutputDetails>,
    /// OpenRouter (any JSON value, so that a malformed price never spoils the reply).
    cost: Option<Value>,
    /// OpenRouter.
    cost_details: Option<Value>,
    /// OpenRouter.
    is_byok: Option<Value>,
}

#[derive(Deserialize)]
struct InputDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    reasoning_tokens: Option<u64>,
}

impl WireUsageReport for WireUsage {
    fn read(self) -> (Usage, Option<ProviderCost>) {
        let usage = Usage {
            prompt_tokens: self.input_tokens,
            completion_tokens: self.output_tokens,
            total_tokens: self
                .total_tokens
                .unwrap_or(self.input_tokens + self.output_tokens),
            reasoning_tokens: self.output_tokens_details.and_then(|d| d.reasoning_tokens),
            cached_tokens: self
                .input_tokens_details
                .as_ref()
                .and_then(|d| d.cached_tokens),
            cache_write_tokens: self.input_tokens_details.and_then(|d| d.cache_write_tokens),
        };
        let cost = ProviderCost::from_usage_fields(self.cost, self.cost_details, self.is_byok);
        (usage, cost)
    }
}

/// The usage and cost a body reports, whatever else it holds (a failed response included).
pub(crate) fn decode_usage(body: &str) -> ReportedUsage {
    decode_usage_object::<WireUsage>(body)
}

/// Reads a successful response body.
///
/// # Errors
/// A description of the problem when the body is not JSON, has no `output`, or reports
/// `status: failed` (with the provider's error message).
pub(crate) fn decode(body: &str) -> Result<WireReply, String> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| format!("invalid responses-api json: {e}"))?;
    if response.status.as_deref() == Some("failed") {
        let error = response.error.as_ref();
        return Err(format!(
            "the response failed: {}: {}",
            error.and_then(|e| e.code.as_deref()).unwrap_or("no code"),
            error
                .and_then(|e| e.message.as_deref())
                .unwrap_or("no message")
        ));
    }
    let output = response
        .output
        .ok_or_else(|| "the reply has no output".to_owned())?;
    let mut answer = Vec::new();
    let mut reasoning = Vec::new();
    let mut tool_calls: Vec<ToolCall> = Vec::new();
    let mut carried = Vec::new();
    for item in output {
        match item.kind.as_str() {
            "function_call" => tool_calls.push(ToolCall {
                id: item
                    .call_id
                    .unwrap_or_else(|| format!("call_{}", tool_calls.len())),
                name: item.name.unwrap_or_default(),
                arguments: item.arguments.unwrap_or_default(),
                signature: None,
                thinking: Vec::new(),
            }),
            "message" => {
                answer.extend(item.content.into_iter().filter_map(
                    |part| match part.kind.as_str() {
                        "output_text" => part.text,
                        "refusal" => part.refusal,
                        _ => None,
                    },
                ))
            }
            "reasoning" => {
                // What goes back in a tool dialog: the item as the API takes it as input.
                if let Some(id) = &item.id {
                    let summary: Vec<Value> = item
                        .summary
                        .iter()
                        .filter_map(|part| part.text.as_ref())
                        .map(|text| json!({"type": "summary_text", "text": text}))
                        .collect();
                    let mut back = json!({"type": "reasoning", "id": id, "summary": summary});
                    if let Some(encrypted) = &item.encrypted_content {
                        back["encrypted_content"] = json!(encrypted);
                    }
                    carried.push(back);
                }
                reasoning.extend(
                    item.summary
                        .into_iter()
                        .chain(item.content)
                        .filter_map(|part| part.text)
                        .filter(|text| !text.trim().is_empty()),
                );
            }
            // Other items (web searches, ...) carry nothing arena reads.
            _ => {}
        }
    }
    if let Some(first) = tool_calls.first_mut() {
        first.thinking = carried;
    }
    let finish_reason = match response.status.as_deref() {
        Some("completed") => Some("stop".to_owned()),
        Some("incomplete") => Some(
            match response
                .incomplete_details
                .and_then(|d| d.reason)
                .as_deref()
            {
                Some("max_output_tokens") => "length".to_owned(),
                Some(other) => other.to_owned(),
                None => "incomplete".to_owned(),
            },
        ),
        other => other.map(str::to_owned),
    };
    let (usage, cost) = response.usage.map(WireUsage::read).unzip();
    Ok(WireReply {
        content: answer.concat(),
        reasoning: (!reasoning.is_empty()).then(|| reasoning.join("\n\n")),
        usage,
        cost: cost.flatten(),
        finish_reason,
        tool_calls,
    })
}

/// The OpenAI Responses API.
pub(crate) struct OpenAiResponses;

impl WireFormat for OpenAiResponses {
    fn chat_url(&self, base_url: &str, _model: &str) -> String {
        chat_url(base_url)
    }

    fn models_url(&self, base_url: &str) -> String {
        openai::models_url(base_url)
    }

    fn authorize(
        &self,
        request: RequestBuilder,
        key: Option<&str>,
        _api_version: Option<&str>,
    ) -> RequestBuilder {
        openai::authorize(request, key)
    }

    fn encode(&self, req: &ChatRequest) -> Value {
        encode(req)
    }

    /// With reasoning on, the API refuses sampling settings; it has no `seed` at all.
    fn unsent_settings(&self, req: &ChatRequest) -> Vec<&'static str> {
        let mut names = if req.reasoning.as_ref().is_some_and(Reasoning::is_enabled) {
            sampling_settings(req)
        } else {
            Vec::new()
        };
        if req.seed.is_some() {
            names.push("seed");
        }
        names
    }

    fn decode(&self, body: &str) -> Result<WireReply, String> {
        decode(body)
    }

    fn decode_usage(&self, body: &str) -> ReportedUsage {
        decode_usage(body)
    }

    fn streaming_request(&self, url: String, fields: &mut Map<String, Value>) -> String {
        fields.insert("stream".into(), Value::Bool(true));
        url
    }

    fn stream_parts(&self) -> Box<dyn StreamParts> {
        Box::<ResponsesParts>::default()
    }

    /// As OpenAI's chat completions: the same error objects.
    fn rejection(&self, _status: u16, fields: &Fields, message: &str) -> Option<Rejection> {
        openai::rejection(fields, message)
    }

    fn batch_api(&self) -> Option<BatchApi> {
        Some(BatchApi::OpenAi {
            path: "/v1/responses",
        })
    }
}

/// One output item of a Responses stream, by its `output_index`.
#[derive(Debug, Default)]
struct ResponsesItem {
    kind: Option<String>,
    /// `content_index` → part type and text.
    content: BTreeMap<u64, (&'static str, String)>,
    /// `summary_index` → text.
    summary: BTreeMap<u64, String>,
}

/// Responses events: the deltas of each output item, and the final response when it came.
#[derive(Debug, Default)]
pub(crate) struct ResponsesParts {
    items: BTreeMap<u64, ResponsesItem>,
    last: Option<Value>,
}

impl StreamParts for ResponsesParts {
    fn push(&mut self, event: &str, data: Value, done: &mut bool) -> Result<(), String> {
        let kind = data["type"].as_str().unwrap_or(event).to_owned();
        let index = |name: &str| data[name].as_u64().unwrap_or(0);
        let delta = || data["delta"].as_str().unwrap_or_default();
        match kind.as_str() {
            "response.output_item.added" => {
                let item = self.items.entry(index("output_index")).or_default();
                item.kind = data["item"]["type"].as_str().map(str::to_owned);
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let part = if kind == "response.refusal.delta" {
                    "refusal"
                } else {
                    "output_text"
                };
                let item = self.items.entry(index("output_index")).or_default();
                item.kind.get_or_insert_with(|| "message".to_owned());
                let entry = item
                    .content
                    .entry(index("content_index"))
                    .or_insert((part, String::new()));
                entry.1.push_str(delta());
            }
            "response.reasoning_summary_text.delta" => {
                let item = self.items.entry(index("output_index")).or_default();
                item.kind.get_or_insert_with(|| "reasoning".to_owned());
                let text = item.summary.entry(index("summary_index")).or_default();
                text.push_str(delta());
            }
            "response.reasoning_text.delta" => {
                let item = self.items.entry(index("output_index")).or_default();
                item.kind.get_or_insert_with(|| "reasoning".to_owned());
                let entry = item
                    .content
                    .entry(index("content_index"))
                    .or_insert(("reasoning_text", String::new()));
                entry.1.push_str(delta());
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.last = Some(data["response"].clone());
                *done = true;
            }
            "error" => {
                let message = data["message"].as_str().unwrap_or("no message");
                let code = data["code"].as_str().unwrap_or("error");
                return Err(format!("the stream reported an error: {code}: {message}"));
            }
            _ => {}
        }
        Ok(())
    }

    fn body(&self) -> Value {
        if let Some(last) = &self.last {
            return last.clone();
        }
        let output: Vec<Value> = self
            .items
            .values()
            .map(|item| {
                let content: Vec<Value> = item
                    .content
                    .values()
                    .map(|(kind, text)| match *kind {
                        "refusal" => json!({"type": kind, "refusal": text}),
                        _ => json!({"type": kind, "text": text}),
                    })
                    .collect();
                let summary: Vec<Value> = item
                    .summary
                    .values()
                    .map(|text| json!({"type": "summary_text", "text": text}))
                    .collect();
                json!({
                    "type": item.kind.as_deref().unwrap_or("message"),
                    "content": content,
                    "summary": summary,
                })
            })
            .collect();
        json!({"object": "response", "status": "in_progress", "output": output})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_llm::{ChatMessage, Reasoning};

    fn chess_request() -> ChatRequest {
        ChatRequest {
            model: "o4-mini".into(),
            messages: vec![
                ChatMessage::new("system", "You play chess."),
                ChatMessage::new("system", "Answer in UCI."),
                ChatMessage::new("user", "1. e4 c5. Your move?"),
                ChatMessage::new("assistant", "<move>g1f3</move>"),
                ChatMessage::new("user", "2... d6. Your move?"),
            ],
            temperature: Some(0.3),
            top_p: Some(0.9),
            max_tokens: Some(2048),
            seed: Some(1),
            ..ChatRequest::default()
        }
    }

    #[test]
    fn system_messages_become_instructions() {
        assert_eq!(
            encode(&chess_request()),
            json!({
                "model": "o4-mini",
                "instructions": "You play chess.\n\nAnswer in UCI.",
                "input": [
                    {"type": "message", "role": "user", "content": "1. e4 c5. Your move?"},
                    {"type": "message", "role": "assistant", "content": "<move>g1f3</move>"},
                    {"type": "message", "role": "user", "content": "2... d6. Your move?"},
                ],
                "temperature": 0.3,
                "top_p": 0.9,
                "max_output_tokens": 2048,
                "store": false,
            })
        );
    }

    #[test]
    fn reasoning_drops_sampling_parameters_and_asks_for_a_summary() {
        let req = ChatRequest {
            reasoning: Some(Reasoning::effort("medium")),
            ..chess_request()
        };
        let body = encode(&req);
        assert_eq!(
            body["reasoning"],
            json!({"effort": "medium", "summary": "auto"})
        );
        for dropped in ["temperature", "top_p", "seed"] {
            assert!(body.get(dropped).is_none(), "{dropped} in {body}");
        }
        // `effort: none` turns reasoning off, so sampling parameters stay.
        let req = ChatRequest {
            reasoning: Some(Reasoning::effort("none")),
            ..chess_request()
        };
        assert_eq!(encode(&req)["temperature"], json!(0.3));
    }

    #[test]
    fn decodes_reasoning_summaries_and_usage() {
        let reply = decode(include_str!(
            "../../llm/src/fixtures/responses_reasoning.json"
        ))
        .expect("valid body");
        assert_eq!(reply.content, "<move>e2e4</move>");
        assert_eq!(
            reply.reasoning.as_deref(),
            Some(
                "**Choosing an opening move**\n\nThe position is the starting one, so a central pawn move is natural.\n\n**Settling on e4**\n\nI'll play the king's pawn two squares."
            )
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 58,
                completion_tokens: 331,
                total_tokens: 389,
                reasoning_tokens: Some(320),
                cached_tokens: Some(0),
                cache_write_tokens: None,
            })
        );
        assert_eq!(reply.cost, None);
    }

    #[test]
    fn decodes_openrouter_responses_usage_with_its_cost() {
        // OpenRouter's Responses API (beta): OpenAI's usage object plus `cost`, `is_byok` and
        // `cost_details`.
        let body = r#"{"id":"resp-1","object":"response","status":"completed","model":"openai/o4-mini",
            "output":[{"type":"message","id":"msg-1","role":"assistant","status":"completed",
                       "content":[{"type":"output_text","text":"<move>d2d4</move>","annotations":[]}]}],
            "usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":25,
                     "output_tokens_details":{"reasoning_tokens":16},"total_tokens":35,
                     "cost":0.0001211,"is_byok":false,"cost_details":{"upstream_inference_cost":0.0001211}}}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(16));
        assert_eq!(reply.cost.as_ref().map(|c| c.usd), Some(0.0001211));
        // A failed response still says what it used.
        let failed = r#"{"status":"failed","output":[],"error":{"code":"server_error","message":"x"},
            "usage":{"input_tokens":300,"output_tokens":12,"total_tokens":312,"cost":0.0004}}"#;
        assert!(decode(failed).is_err());
        let reported = decode_usage(failed);
        assert_eq!(reported.usage.map(|u| u.total_tokens), Some(312));
        assert_eq!(reported.cost.map(|c| c.usd), Some(0.0004));
    }

    #[test]
    fn decodes_an_incomplete_reply_as_length() {
        let reply = decode(include_str!(
            "../../llm/src/fixtures/responses_incomplete.json"
        ))
        .expect("valid body");
        assert_eq!(reply.content, "");
        assert_eq!(reply.reasoning, None);
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert_eq!(reply.usage.and_then(|u| u.reasoning_tokens), Some(64));
    }

    #[test]
    fn decodes_open_weight_reasoning_text_and_refusals() {
        let body = r#"{"status":"completed","output":[
            {"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"develop first"}]},
            {"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}
        ]}"#;
        let reply = decode(body).expect("valid body");
        assert_eq!(reply.reasoning.as_deref(), Some("develop first"));
        assert_eq!(reply.content, "I can't help with that.");
        assert_eq!(reply.usage, None);
    }

    #[test]
    fn rejects_failed_and_malformed_replies() {
        let failed = r#"{"status":"failed","output":[],"error":{"code":"server_error","message":"The model failed to generate a response."}}"#;
        let err = decode(failed).expect_err("failed status");
        assert!(
            err.contains("server_error") && err.contains("failed to generate"),
            "{err}"
        );
        assert!(decode(r#"{"status":"completed"}"#).is_err());
        assert!(decode("<html>bad gateway</html>").is_err());
    }
}
