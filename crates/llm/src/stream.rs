//! Streamed replies: the request asks for server-sent events, and the events are put back
//! together into the body the same call would have got without streaming.
//!
//! Each wire format streams in its own way:
//!
//! | format | asked with | events | ends with |
//! |---|---|---|---|
//! | chat completions | `stream: true`, `stream_options.include_usage` | `choices[0].delta` chunks, a last chunk with `usage` | `data: [DONE]` |
//! | Responses | `stream: true` | `response.output_text.delta`, `response.reasoning_summary_text.delta`, ... | `response.completed` (the whole response), `.incomplete`, `.failed` |
//! | Anthropic | `stream: true` | `message_start`, `content_block_*` (`text_delta`, `thinking_delta`, `signature_delta`; `redacted_thinking` whole), `message_delta` (stop reason, usage) | `message_stop` |
//! | Gemini | `:streamGenerateContent?alt=sse` | whole `GenerateContentResponse` chunks, each with the new parts | the chunk with `finishReason` |
//!
//! The events are not decoded into a reply directly: [`StreamAssembly::body`] rebuilds the
//! non-streamed body they add up to, and the wire format's own `decode` reads it. So a streamed
//! call stores exactly the answer, reasoning, usage and finish reason a non-streamed one would
//! (the tests check this on recorded twins), and a stream cut midway reads as the reply so far.
//! A provider's `error` event mid-stream ends the stream with the provider's message.
//!
//! Tool calls stream too: chat-completion `delta.tool_calls` pieces are joined by their `index`,
//! Anthropic `tool_use` blocks by their `input_json_delta` pieces, Gemini `functionCall` parts
//! come whole, and the Responses API's final `response.completed` carries its `function_call`
//! items (a Responses stream cut before it has no tool calls). What goes back with the calls is
//! kept as well: Anthropic's thinking blocks with their signatures and redacted thinking, the
//! Responses API's reasoning items (in `response.completed`).

use std::{collections::BTreeMap, time::Duration};

use serde_json::{Map, Value, json};

use super::{
    Provider,
    sse::{SseEvent, SseParser},
};

/// The URL and body of `provider`'s streaming request, from the non-streamed ones.
pub(super) fn streaming_request(provider: Provider, url: String, body: &mut Value) -> String {
    let Some(fields) = body.as_object_mut() else {
        return url;
    };
    match provider {
        Provider::OpenAiChat => {
            fields.insert("stream".into(), Value::Bool(true));
            // Without it, a streamed chat completion reports no usage at all.
            fields.insert("stream_options".into(), json!({"include_usage": true}));
            url
        }
        Provider::OpenAiResponses | Provider::Anthropic => {
            fields.insert("stream".into(), Value::Bool(true));
            url
        }
        Provider::Gemini => match url.strip_suffix(":generateContent") {
            Some(model_url) => format!("{model_url}:streamGenerateContent?alt=sse"),
            None => url,
        },
    }
}

/// The non-streamed body a stored stream of `provider`'s events adds up to (events that do not
/// read are skipped).
pub(super) fn assemble_stored(provider: Provider, raw: &str) -> Value {
    let mut parser = SseParser::default();
    let mut assembly = StreamAssembly::new(provider);
    let mut events = Vec::new();
    parser.feed(raw.as_bytes(), &mut events);
    for event in &events {
        let _ = assembly.push(event);
    }
    assembly.body()
}

/// A streamed body being read: the bytes as received, and the events they hold so far. It lives
/// outside the reading future, so that a caller that stops the reading (a chess clock) still
/// finds the reply so far.
#[derive(Debug)]
pub(super) struct StreamRead {
    raw: Vec<u8>,
    parser: SseParser,
    assembly: StreamAssembly,
}

/// Why a streamed body was not read to its last event.
#[derive(Debug)]
pub(super) enum StreamStop {
    /// The connection failed or closed early, or stayed silent too long: what happened.
    Cut(String),
    /// The transport failed while reading.
    Transport(reqwest::Error),
    /// The provider sent an error event: its message.
    Provider(String),
    /// The body grew past the size limit.
    Over,
}

impl StreamRead {
    /// Nothing read yet of `provider`'s stream.
    pub(super) fn new(provider: Provider) -> Self {
        Self {
            raw: Vec::new(),
            parser: SseParser::default(),
            assembly: StreamAssembly::new(provider),
        }
    }

    /// The bytes received so far.
    pub(super) fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The events received so far.
    pub(super) fn assembly(&self) -> &StreamAssembly {
        &self.assembly
    }

    /// Reads `response`'s body to its end, each chunk within `idle` of the one before and all
    /// of them within `limit` bytes.
    ///
    /// # Errors
    /// A [`StreamStop`] saying why the stream is not whole; what was read stays here.
    pub(super) async fn read(
        &mut self,
        response: &mut reqwest::Response,
        idle: Duration,
        limit: usize,
    ) -> Result<(), StreamStop> {
        let mut events = Vec::new();
        loop {
            let chunk = match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => {
                    return Err(StreamStop::Cut(format!(
                        "nothing arrived for {} s, the endpoint's stream idle timeout",
                        idle.as_secs_f64()
                    )));
                }
                Ok(Err(e)) => return Err(StreamStop::Transport(e)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            if self.raw.len() + chunk.len() > limit {
                return Err(StreamStop::Over);
            }
            self.raw.extend_from_slice(&chunk);
            self.parser.feed(&chunk, &mut events);
            for event in events.drain(..) {
                self.assembly.push(&event).map_err(StreamStop::Provider)?;
            }
        }
        if self.assembly.is_complete() {
            return Ok(());
        }
        Err(StreamStop::Cut(if self.parser.is_mid_event() {
            "the connection closed inside an event".to_owned()
        } else {
            "the connection closed before the stream's last event".to_owned()
        }))
    }
}

/// The events of one streamed reply so far.
#[derive(Debug)]
pub(super) struct StreamAssembly {
    provider: Provider,
    events: u32,
    done: bool,
    chat: ChatParts,
    responses: ResponsesParts,
    anthropic: AnthropicParts,
    gemini: GeminiParts,
}

impl StreamAssembly {
    /// An empty assembly for `provider`'s events.
    pub(super) fn new(provider: Provider) -> Self {
        Self {
            provider,
            events: 0,
            done: false,
            chat: ChatParts::default(),
            responses: ResponsesParts::default(),
            anthropic: AnthropicParts::default(),
            gemini: GeminiParts::default(),
        }
    }

    /// Events read so far.
    pub(super) fn events(&self) -> u32 {
        self.events
    }

    /// Whether a stream that ends here is whole: it sent its last event (for Gemini, its finish
    /// reason). A chat-completions server that never sends `[DONE]` is whole once it sent a
    /// finish reason (the usage chunk, which follows it, may then be missing).
    pub(super) fn is_complete(&self) -> bool {
        self.done || (self.provider == Provider::OpenAiChat && self.chat.finish_reason.is_some())
    }

    /// Adds one event.
    ///
    /// # Errors
    /// The provider's message when the event reports an error, or what is wrong with an event
    /// whose data is not JSON.
    pub(super) fn push(&mut self, event: &SseEvent) -> Result<(), String> {
        self.events += 1;
        if self.provider == Provider::OpenAiChat && event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| format!("event {} (`{}`) is not json: {e}", self.events, event.event))?;
        match self.provider {
            Provider::OpenAiChat => self.chat.push(data),
            Provider::OpenAiResponses => self.responses.push(&event.event, data, &mut self.done),
            Provider::Anthropic => self.anthropic.push(&event.event, data, &mut self.done),
            Provider::Gemini => self.gemini.push(data, &mut self.done),
        }
    }

    /// The non-streamed body the events so far add up to.
    pub(super) fn body(&self) -> Value {
        match self.provider {
            Provider::OpenAiChat => self.chat.body(),
            Provider::OpenAiResponses => self.responses.body(),
            Provider::Anthropic => self.anthropic.body(),
            Provider::Gemini => self.gemini.body(),
        }
    }
}

/// The error an event reports, as `kind: message`, when it has an `error` object.
fn error_of(data: &Value) -> Option<String> {
    let error = data.get("error").filter(|e| !e.is_null())?;
    let kind = ["type", "code", "status"]
        .iter()
        .find_map(|k| error.get(k).and_then(Value::as_str).map(str::to_owned))
        .or_else(|| error.get("code").map(Value::to_string))
        .unwrap_or_else(|| "error".to_owned());
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    Some(format!("the stream reported an error: {kind}: {message}"))
}

/// Appends `text` to `into`, starting it when absent.
fn append(into: &mut Option<String>, text: Option<&str>) {
    if let Some(text) = text {
        into.get_or_insert_with(String::new).push_str(text);
    }
}

/// Chat-completion chunks: the first choice's deltas, its finish reason and the usage chunk.
#[derive(Debug, Default)]
struct ChatParts {
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

impl ChatParts {
    fn push(&mut self, data: Value) -> Result<(), String> {
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
struct ResponsesParts {
    items: BTreeMap<u64, ResponsesItem>,
    last: Option<Value>,
}

impl ResponsesParts {
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

/// Anthropic events: the message from `message_start`, its blocks by index, the stop reason
/// and the usage, `message_delta`'s counts laid over `message_start`'s.
#[derive(Debug, Default)]
struct AnthropicParts {
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

impl AnthropicParts {
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

/// Gemini chunks: the first candidate's parts (consecutive text of one kind merged, since a
/// thought split over chunks is one thought), its finish reason, the last usage and any prompt
/// feedback.
#[derive(Debug, Default)]
struct GeminiParts {
    /// Whether a chunk had a candidate (a blocked prompt has none).
    candidate: bool,
    /// The parts in order: (thought, text), or a function call as sent (`None`, its part).
    parts: Vec<(Option<bool>, Value)>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    prompt_feedback: Option<Value>,
}

impl GeminiParts {
    fn push(&mut self, data: Value, done: &mut bool) -> Result<(), String> {
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
    use crate::WireReply;

    /// The fixture `name` of `tests/fixtures/streams`.
    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/streams/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The assembly of a recorded stream, fed in chunks of `size` bytes.
    fn assemble(provider: Provider, sse: &str, size: usize) -> StreamAssembly {
        let mut parser = SseParser::default();
        let mut assembly = StreamAssembly::new(provider);
        let mut events = Vec::new();
        for chunk in sse.as_bytes().chunks(size) {
            parser.feed(chunk, &mut events);
            for event in events.drain(..) {
                assembly
                    .push(&event)
                    .expect("the recorded events are valid");
            }
        }
        assembly
    }

    fn decoded(provider: Provider, body: &Value) -> WireReply {
        provider
            .decode(&body.to_string())
            .expect("the body decodes")
    }

    #[test]
    fn every_format_assembles_the_tool_calls_of_its_non_streamed_twin() {
        for provider in Provider::ALL {
            let name = format!("{}_tools", provider.name());
            let twin = provider
                .decode(&fixture(&format!("{name}.json")))
                .expect("the twin decodes");
            assert!(
                !twin.tool_calls.is_empty(),
                "{name}: the fixture calls tools"
            );
            let sse = fixture(&format!("{name}.sse"));
            // A replayed reply reads its calls from the stored body, plain or streamed.
            assert_eq!(provider.stored_tool_calls(&sse), twin.tool_calls, "{name}");
            assert_eq!(
                provider.stored_tool_calls(&fixture(&format!("{name}.json"))),
                twin.tool_calls,
                "{name}"
            );
            for size in [1, 7, 64, sse.len()] {
                let assembly = assemble(provider, &sse, size);
                assert!(assembly.is_complete(), "{name}: the stream ends");
                assert_eq!(
                    decoded(provider, &assembly.body()),
                    twin,
                    "{name} in chunks of {size} bytes"
                );
            }
        }
    }

    #[test]
    fn every_format_assembles_the_reply_of_its_non_streamed_twin() {
        for (provider, name) in [
            (Provider::OpenAiChat, "openai_chat"),
            (Provider::OpenAiResponses, "openai_responses"),
            (Provider::Anthropic, "anthropic"),
            (Provider::Gemini, "gemini"),
        ] {
            let twin = provider
                .decode(&fixture(&format!("{name}.json")))
                .expect("the twin decodes");
            assert!(
                twin.usage.is_some() && twin.finish_reason.is_some(),
                "{name}"
            );
            assert!(
                twin.reasoning.is_some(),
                "{name}: the fixture has reasoning"
            );
            let sse = fixture(&format!("{name}.sse"));
            for size in [1, 5, 64, sse.len()] {
                let assembly = assemble(provider, &sse, size);
                assert!(assembly.is_complete(), "{name}: the stream ends");
                assert_eq!(
                    decoded(provider, &assembly.body()),
                    twin,
                    "{name} in chunks of {size} bytes"
                );
            }
        }
    }

    #[test]
    fn a_stream_cut_midway_reads_as_the_reply_so_far() {
        for (provider, name, text, reasoning) in [
            (
                Provider::OpenAiChat,
                "openai_chat",
                "I develop the knight.\n",
                "Black played 1...c5, the Sicilian.\nThe main line is 2.Nf3 — développement ♘.",
            ),
            (
                Provider::OpenAiResponses,
                "openai_responses",
                "<move>",
                "**Reading the position**\n\nWhite has played 1.e4 and Black answered c5.\n\n**Choosing a move**\n\nThe knight to f3 prepares d4.",
            ),
            (
                Provider::Anthropic,
                "anthropic",
                "I play ",
                "Black answered 1.e4 with 1...c5, the Sicilian.\n\nThe main line continues with the king's knight: Nf3.",
            ),
            (
                Provider::Gemini,
                "gemini",
                "I develop the knight.\n",
                "**Evaluating the Sicilian**\n\nAfter 1.e4 c5 the standard developing move is Nf3, preparing d4.",
            ),
        ] {
            let sse = fixture(&format!("{name}.sse"));
            // Cut right after the first event that carries answer text.
            let cut = (0..sse.len())
                .filter_map(|i| {
                    let rest = &sse.as_bytes()[i..];
                    ["\n\n", "\n\r\n"]
                        .iter()
                        .find(|end| rest.starts_with(end.as_bytes()))
                        .map(|end| i + end.len())
                })
                .find(|&end| {
                    let assembly = assemble(provider, &sse[..end], end);
                    !decoded(provider, &assembly.body()).content.is_empty()
                })
                .expect("some event carries text");
            let assembly = assemble(provider, &sse[..cut], 7);
            assert!(!assembly.is_complete(), "{name}");
            let partial = decoded(provider, &assembly.body());
            assert_eq!(partial.content, text, "{name}");
            assert_eq!(partial.reasoning.as_deref(), Some(reasoning), "{name}");
        }
    }

    #[test]
    fn error_events_end_the_stream_with_the_providers_message() {
        let cases = [
            (
                Provider::OpenAiChat,
                "data: {\"error\":{\"message\":\"upstream overloaded\",\"code\":502}}\n\n",
            ),
            (
                Provider::OpenAiResponses,
                "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"upstream overloaded\",\"param\":null}\n\n",
            ),
            (
                Provider::Anthropic,
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"upstream overloaded\"}}\n\n",
            ),
            (
                Provider::Gemini,
                "data: {\"error\":{\"code\":503,\"message\":\"upstream overloaded\",\"status\":\"UNAVAILABLE\"}}\n\n",
            ),
        ];
        for (provider, sse) in cases {
            let mut parser = SseParser::default();
            let mut events = Vec::new();
            parser.feed(sse.as_bytes(), &mut events);
            let mut assembly = StreamAssembly::new(provider);
            let error = assembly.push(&events[0]).expect_err("an error event");
            assert!(error.contains("upstream overloaded"), "{provider}: {error}");
        }
    }

    #[test]
    fn streaming_requests_ask_each_api_its_way() {
        let mut body = json!({"model": "m"});
        let url = streaming_request(Provider::OpenAiChat, "u/chat/completions".into(), &mut body);
        assert_eq!(url, "u/chat/completions");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        let mut body = json!({});
        streaming_request(Provider::Anthropic, "u/messages".into(), &mut body);
        assert_eq!(body, json!({"stream": true}));
        let mut body = json!({});
        let url = streaming_request(
            Provider::Gemini,
            "https://g/v1beta/models/gemini-2.5-flash:generateContent".into(),
            &mut body,
        );
        assert_eq!(
            url,
            "https://g/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(body, json!({}), "gemini streams by its URL alone");
    }
}
