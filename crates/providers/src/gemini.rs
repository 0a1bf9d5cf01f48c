//! The Gemini `generateContent` wire format
//! (`POST {base}/models/{model}:generateContent`, base e.g.
//! `https://generativelanguage.googleapis.com/v1beta`).
//!
//! The model is part of the URL, not the body. System messages become `systemInstruction`;
//! `assistant` turns are sent with Gemini's role name `model`. Sampling parameters, the token limit
//! and the seed go into `generationConfig`, and so does thinking: `thinkingConfig.thinkingBudget` takes
//! the request's budget or its effort mapped by [`Reasoning::budget`](super::Reasoning::budget), with
//! `includeThoughts` so that the reply carries thought summaries. Gemini accepts sampling parameters
//! while thinking, so nothing is dropped.
//!
//! In the reply, parts marked `thought: true` are the reasoning and the other text parts the answer.
//! `candidatesTokenCount` excludes thinking, so the completion count adds `thoughtsTokenCount`. A
//! prompt the API blocks has no candidates; it reads as an empty answer with finish reason
//! `content_filter` rather than as a garbled body, because retrying would be blocked again.
//!
//! Pictures are `inlineData` parts (`{mimeType, data}`), in the REST API's camelCase spelling as
//! google-genai writes it.
//!
//! Tools are offered as `tools: [{functionDeclarations: [{name, description,
//! parametersJsonSchema}]}]`: the parameters are a plain JSON schema, which `parametersJsonSchema`
//! takes as it is (`parameters` would want Gemini's own `Schema`, with upper-case type names);
//! the reply's `functionCall` parts are its calls (`args` an object, kept as its JSON text; a
//! call without an `id` gets `call_N` by position), sent back as `functionCall` parts of the
//! model's content with the `thoughtSignature` their part came with (Gemini's thinking models
//! refuse a tool dialog that drops it), and the results are `functionResponse` parts
//! (`response: {result}`) of a `user` content.

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tracing::debug;

use arena_llm::{
    ChatMessage, ChatRequest, ReportedUsage, ToolCall, Usage,
    wire::{BatchApi, Fields, Rejection, StreamParts, WireFormat, WireReply, error_of},
};

use crate::openai::merge_extra;

/// The `generateContent` URL for `model` below `base_url`. A `models/` prefix on the name, as
/// Gemini's own model list spells it, is accepted.
pub(crate) fn chat_url(base_url: &str, model: &str) -> String {
    let model = model.strip_prefix("models/").unwrap_or(model);
    format!(
        "{}/models/{model}:generateContent",
        base_url.trim_end_matches('/')
    )
}

/// The model-list URL below `base_url`.
pub(crate) fn models_url(base_url: &str) -> String {
    format!("{}/models", base_url.trim_end_matches('/'))
}

/// Adds the `x-goog-api-key` header (a header rather than the `?key=` query parameter, so that the key
/// never appears in a URL that errors and logs show).
pub(crate) fn authorize(request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => request.header("x-goog-api-key", key),
        None => request,
    }
}

/// The JSON body for `req`, with `extra_body` merged last.
pub(crate) fn encode(req: &ChatRequest) -> Value {
    let mut body = Map::new();
    let system: Vec<&str> = req
        .messages
        .iter()
        .filter(|m| m.role == "system")
        .map(|m| m.content.as_str())
        .collect();
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system.join("\n\n")}]}),
        );
    }
    body.insert(
        "contents".into(),
        Value::Array(encode_contents(&req.messages)),
    );
    if !req.tools.is_empty() {
        let declarations: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "parametersJsonSchema": t.parameters,
                })
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    let mut config = Map::new();
    if let Some(t) = req.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = req.top_p {
        config.insert("topP".into(), json!(p));
    }
    if let Some(n) = req.max_tokens {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(s) = req.seed {
        // Gemini's seed is a 32-bit integer; wider seeds keep their low bits.
        config.insert("seed".into(), json!(s as u32 as i32));
    }
    if let Some(reasoning) = &req.reasoning {
        match reasoning.budget() {
            Some(budget) => {
                config.insert(
                    "thinkingConfig".into(),
                    json!({"thinkingBudget": budget, "includeThoughts": budget > 0}),
                );
            }
            None => {
                debug!(model = %req.model, effort = ?reasoning.effort, "unknown reasoning effort; leaving thinking to the model's default")
            }
        }
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    merge_extra(&mut body, req);
    Value::Object(body)
}

/// The contents other than system messages. An assistant's tool calls are `functionCall` parts
/// after its text (if it wrote any); tool results are `functionResponse` parts (named after the
/// call they answer, `response: {result}`), those that follow each other in one `user` content.
fn encode_contents(messages: &[ChatMessage]) -> Vec<Value> {
    let name_of = |id: &str| {
        messages
            .iter()
            .flat_map(|m| &m.tool_calls)
            .find(|c| c.id == id)
            .map_or("", |c| c.name.as_str())
    };
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for m in messages.iter().filter(|m| m.role != "system") {
        if let Some(id) = &m.tool_call_id {
            results.push(json!({"functionResponse": {
                "id": id,
                "name": name_of(id),
                "response": {"result": m.content},
            }}));
            continue;
        }
        if !results.is_empty() {
            out.push(json!({"role": "user", "parts": std::mem::take(&mut results)}));
        }
        let role = if m.role == "assistant" {
            "model"
        } else {
            "user"
        };
        let mut parts = Vec::new();
        if m.tool_calls.is_empty() || !m.content.is_empty() {
            parts.push(json!({"text": m.content}));
        }
        parts.extend(
            m.images
                .iter()
                .map(|i| json!({"inlineData": {"mimeType": i.media_type, "data": i.base64()}})),
        );
        parts.extend(m.tool_calls.iter().map(|c| {
            let mut part =
                json!({"functionCall": {"id": c.id, "name": c.name, "args": c.arguments_object()}});
            // The thinking that led to the call goes back with it, as Gemini asks.
            if let Some(signature) = &c.signature {
                part["thoughtSignature"] = json!(signature);
            }
            part
        }));
        out.push(json!({"role": role, "parts": parts}));
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "parts": results}));
    }
    out
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    candidates: Option<Vec<Candidate>>,
    prompt_feedback: Option<PromptFeedback>,
    usage_metadata: Option<UsageMetadata>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    parts: Vec<Part>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Part {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    function_call: Option<FunctionCall>,
    thought_signature: Option<String>,
}

#[derive(Deserialize)]
struct FunctionCall {
    id: Option<String>,
    #[serde(default)]
    name: String,
    args: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

/// Gemini's JSON is proto3's: a count of zero is left out, so an absent count is 0 (a model that
/// did not think, a prompt that hit no cache), never unknown.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
    #[serde(default)]
    cached_content_token_count: u64,
    total_token_count: Option<u64>,
}

impl UsageMetadata {
    fn read(self) -> Usage {
        let completion = self.candidates_token_count + self.thoughts_token_count;
        Usage {
            prompt_tokens: self.prompt_token_count,
            completion_tokens: completion,
            total_tokens: self
                .total_token_count
                .unwrap_or(self.prompt_token_count + completion),
            reasoning_tokens: Some(self.thoughts_token_count),
            cached_tokens: Some(self.cached_content_token_count),
            cache_write_tokens: None,
        }
    }
}

/// The usage a body reports, whatever else it holds. The API reports no price.
pub(crate) fn decode_usage(body: &str) -> ReportedUsage {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct UsageOnly {
        usage_metadata: Option<UsageMetadata>,
    }
    ReportedUsage {
        usage: serde_json::from_str::<UsageOnly>(body)
            .ok()
            .and_then(|b| b.usage_metadata)
            .map(UsageMetadata::read),
        cost: None,
    }
}

/// Reads a successful response body.
///
/// # Errors
/// A description of the problem when the body is not JSON or has neither candidates nor a
/// prompt block reason.
pub(crate) fn decode(body: &str) -> Result<WireReply, String> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| format!("invalid gemini json: {e}"))?;
    let usage = response.usage_metadata.map(UsageMetadata::read);
    let Some(candidate) = response.candidates.and_then(|c| c.into_iter().next()) else {
        let blocked = response.prompt_feedback.and_then(|f| f.block_reason);
        return match blocked {
            Some(reason) => {
                debug!(reason, "gemini blocked the prompt");
                Ok(WireReply {
                    content: String::new(),
                    reasoning: None,
                    usage,
                    cost: None,
                    finish_reason: Some("content_filter".into()),
                    tool_calls: Vec::new(),
                })
            }
            None => Err("the reply has no candidates".to_owned()),
        };
    };
    let mut answer = Vec::new();
    let mut thoughts = Vec::new();
    let mut tool_calls = Vec::new();
    for part in candidate.content.map(|c| c.parts).unwrap_or_default() {
        if let Some(call) = part.function_call {
            tool_calls.push(ToolCall {
                id: call
                    .id
                    .unwrap_or_else(|| format!("call_{}", tool_calls.len())),
                name: call.name,
                arguments: call.args.unwrap_or_else(|| json!({})).to_string(),
                signature: part.thought_signature,
                thinking: Vec::new(),
            });
            continue;
        }
        let Some(text) = part.text else {
            continue;
        };
        if part.thought {
            thoughts.push(text.trim().to_owned());
        } else {
            answer.push(text);
        }
    }
    thoughts.retain(|t| !t.is_empty());
    let finish_reason = candidate.finish_reason.map(|reason| match reason.as_str() {
        "STOP" => "stop".to_owned(),
        "MAX_TOKENS" => "length".to_owned(),
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" => {
            "content_filter".to_owned()
        }
        other => other.to_lowercase(),
    });
    Ok(WireReply {
        content: answer.concat(),
        reasoning: (!thoughts.is_empty()).then(|| thoughts.join("\n\n")),
        usage,
        cost: None,
        finish_reason,
        tool_calls,
    })
}

/// Google Gemini `generateContent`.
pub(crate) struct Gemini;

impl WireFormat for Gemini {
    fn chat_url(&self, base_url: &str, model: &str) -> String {
        chat_url(base_url, model)
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

    fn unsent_settings(&self, _req: &ChatRequest) -> Vec<&'static str> {
        Vec::new()
    }

    fn decode(&self, body: &str) -> Result<WireReply, String> {
        decode(body)
    }

    fn decode_usage(&self, body: &str) -> ReportedUsage {
        decode_usage(body)
    }

    fn streaming_request(&self, url: String, _fields: &mut Map<String, Value>) -> String {
        match url.strip_suffix(":generateContent") {
            Some(model_url) => format!("{model_url}:streamGenerateContent?alt=sse"),
            None => url,
        }
    }

    fn stream_parts(&self) -> Box<dyn StreamParts> {
        Box::<GeminiParts>::default()
    }

    fn rejection(&self, _status: u16, fields: &Fields, message: &str) -> Option<Rejection> {
        rejection(fields, message)
    }

    /// Gemini's batch mode is not spoken.
    fn batch_api(&self) -> Option<BatchApi> {
        None
    }
}

/// Gemini: `The input token count (N) exceeds the maximum number of tokens allowed (M).` is the
/// context; a bad key (`API_KEY_INVALID`) or `FAILED_PRECONDITION` (location, billing) is the
/// player's settings; any other `INVALID_ARGUMENT` is this request.
fn rejection(f: &Fields, message: &str) -> Option<Rejection> {
    if message.contains("input token count") && message.contains("exceeds the maximum") {
        return Some(Rejection::ContextExceeded);
    }
    if f.reasons.iter().any(|r| r == "API_KEY_INVALID") || message.contains("api key") {
        return None;
    }
    match f.kind.as_str() {
        "INVALID_ARGUMENT" => Some(Rejection::Invalid),
        _ => None,
    }
}

/// Gemini chunks: the first candidate's parts (consecutive text of one kind merged, since a
/// thought split over chunks is one thought), its finish reason, the last usage and any prompt
/// feedback.
#[derive(Debug, Default)]
pub(crate) struct GeminiParts {
    /// Whether a chunk had a candidate (a blocked prompt has none).
    candidate: bool,
    /// The parts in order: (thought, text), or a function call as sent (`None`, its part).
    parts: Vec<(Option<bool>, Value)>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    prompt_feedback: Option<Value>,
}

impl StreamParts for GeminiParts {
    fn push(&mut self, _event: &str, data: Value, done: &mut bool) -> Result<(), String> {
        if let Some(error) = error_of(&data) {
            return Err(error);
        }
        if let Some(candidate) = data["candidates"].as_array().and_then(|c| c.first()) {
            self.candidate = true;
            for part in candidate["content"]["parts"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if part.get("functionCall").is_some() {
                    // A function call comes whole in one chunk.
                    self.parts.push((None, part.clone()));
                    continue;
                }
                let Some(text) = part["text"].as_str() else {
                    continue;
                };
                let thought = part["thought"].as_bool().unwrap_or(false);
                match self.parts.last_mut() {
                    Some((Some(kind), Value::String(so_far))) if *kind == thought => {
                        so_far.push_str(text)
                    }
                    _ => self.parts.push((Some(thought), json!(text))),
                }
            }
            if let Some(reason) = candidate.get("finishReason").filter(|r| !r.is_null()) {
                self.finish_reason = Some(reason.clone());
                *done = true;
            }
        }
        if let Some(usage) = data.get("usageMetadata").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        if let Some(feedback) = data.get("promptFeedback").filter(|f| !f.is_null()) {
            self.prompt_feedback = Some(feedback.clone());
            if feedback.get("blockReason").is_some() {
                *done = true;
            }
        }
        Ok(())
    }

    fn body(&self) -> Value {
        let mut body = Map::new();
        if self.candidate {
            let parts: Vec<Value> = self
                .parts
                .iter()
                .map(|(thought, text)| match thought {
                    Some(true) => json!({"text": text, "thought": true}),
                    Some(false) => json!({"text": text}),
                    None => text.clone(),
                })
                .collect();
            let mut candidate = Map::new();
            candidate.insert("content".into(), json!({"parts": parts, "role": "model"}));
            if let Some(reason) = &self.finish_reason {
                candidate.insert("finishReason".into(), reason.clone());
            }
            body.insert("candidates".into(), json!([candidate]));
        }
        if let Some(usage) = &self.usage {
            body.insert("usageMetadata".into(), usage.clone());
        }
        if let Some(feedback) = &self.prompt_feedback {
            body.insert("promptFeedback".into(), feedback.clone());
        }
        Value::Object(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena_llm::Reasoning;

    #[test]
    fn urls_carry_the_model() {
        let base = "https://generativelanguage.googleapis.com/v1beta/";
        let expected = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent";
        assert_eq!(chat_url(base, "gemini-2.5-flash"), expected);
        assert_eq!(chat_url(base, "models/gemini-2.5-flash"), expected);
        assert_eq!(
            models_url(base),
            "https://generativelanguage.googleapis.com/v1beta/models"
        );
    }

    #[test]
    fn encodes_system_instruction_roles_and_generation_config() {
        let req = ChatRequest {
            model: "gemini-2.5-flash".into(),
            messages: vec![
                ChatMessage::new("system", "You play chess."),
                ChatMessage::new("user", "1. e4 c5. Your move?"),
                ChatMessage::new("assistant", "<move>g1f3</move>"),
                ChatMessage::new("user", "2... d6?"),
            ],
            temperature: Some(0.4),
            top_p: Some(0.8),
            max_tokens: Some(1500),
            seed: Some(42),
            reasoning: Some(Reasoning::effort("low")),
            ..ChatRequest::default()
        };
        assert_eq!(
            encode(&req),
            json!({
                "systemInstruction": {"parts": [{"text": "You play chess."}]},
                "contents": [
                    {"role": "user", "parts": [{"text": "1. e4 c5. Your move?"}]},
                    {"role": "model", "parts": [{"text": "<move>g1f3</move>"}]},
                    {"role": "user", "parts": [{"text": "2... d6?"}]},
                ],
                "generationConfig": {
                    "temperature": 0.4,
                    "topP": 0.8,
                    "maxOutputTokens": 1500,
                    "seed": 42,
                    "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": true},
                },
            })
        );
    }

    #[test]
    fn budgets_and_none_set_the_thinking_budget() {
        let body = |reasoning| {
            encode(&ChatRequest {
                model: "gemini-2.5-flash".into(),
                reasoning: Some(reasoning),
                ..ChatRequest::default()
            })
        };
        assert_eq!(
            body(Reasoning::budget_tokens(3000))["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget": 3000, "includeThoughts": true})
        );
        assert_eq!(
            body(Reasoning::effort("none"))["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget": 0, "includeThoughts": false})
        );
        let bare = encode(&ChatRequest::default());
        assert!(bare.get("generationConfig").is_none(), "{bare}");
    }

    #[test]
    fn decodes_thought_parts_and_usage() {
        let reply = decode(include_str!("../../llm/src/fixtures/gemini_thinking.json"))
            .expect("valid body");
        assert_eq!(reply.content, "<move>g1f3</move>");
        assert_eq!(
            reply.reasoning.as_deref(),
            Some(
                "**Evaluating the Sicilian**\n\nAfter 1.e4 c5 the standard developing move is Nf3, preparing d4."
            )
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            reply.usage,
            Some(Usage {
                prompt_tokens: 96,
                completion_tokens: 1037,
                total_tokens: 1133,
                reasoning_tokens: Some(1028),
                cached_tokens: Some(64),
                cache_write_tokens: None,
            })
        );
    }

    #[test]
    fn absent_counts_are_zero_and_a_body_without_candidates_keeps_its_usage() {
        // The blocked prompt reports neither thoughts nor cache hits: proto3 leaves zeros out.
        let body = include_str!("../../llm/src/fixtures/gemini_blocked.json");
        let usage = decode(body).expect("valid body").usage.expect("usage");
        assert_eq!(
            (usage.reasoning_tokens, usage.cached_tokens),
            (Some(0), Some(0))
        );
        // A 200 without candidates or a block reason does not decode, yet says what it used.
        let body = r#"{"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1024,"totalTokenCount":1200},"modelVersion":"gemini-2.5-pro"}"#;
        assert!(decode(body).is_err());
        let usage = decode_usage(body).usage.expect("usage");
        assert_eq!(
            (usage.prompt_tokens, usage.cached_tokens),
            (1200, Some(1024))
        );
        assert_eq!(decode_usage("{}"), ReportedUsage::default());
    }

    #[test]
    fn decodes_a_reply_cut_off_while_thinking() {
        let reply = decode(include_str!(
            "../../llm/src/fixtures/gemini_max_tokens.json"
        ))
        .expect("valid body");
        assert_eq!(reply.content, "");
        assert_eq!(reply.reasoning, None);
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert_eq!(reply.usage.map(|u| u.completion_tokens), Some(63));
    }

    #[test]
    fn a_blocked_prompt_is_an_empty_filtered_answer() {
        let reply =
            decode(include_str!("../../llm/src/fixtures/gemini_blocked.json")).expect("valid body");
        assert_eq!(reply.content, "");
        assert_eq!(reply.finish_reason.as_deref(), Some("content_filter"));
        assert_eq!(reply.usage.map(|u| u.prompt_tokens), Some(41));
    }

    #[test]
    fn rejects_bodies_without_candidates() {
        assert!(decode(r#"{"candidates": []}"#).is_err());
        assert!(decode("{}").is_err());
        assert!(decode("<html>bad gateway</html>").is_err());
    }
}
