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

use std::time::Duration;

use serde_json::Value;

use super::{
    Provider,
    sse::{SseEvent, SseParser},
    wire::StreamParts,
};

/// The URL and body of `provider`'s streaming request, from the non-streamed ones.
pub(super) fn streaming_request(provider: Provider, url: String, body: &mut Value) -> String {
    match body.as_object_mut() {
        Some(fields) => provider.wire().streaming_request(url, fields),
        None => url,
    }
}

/// The non-streamed body a stored stream of `provider`'s events adds up to (events that do not
/// read are skipped).
pub fn assemble_stored(provider: Provider, raw: &str) -> Value {
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
pub struct StreamAssembly {
    events: u32,
    done: bool,
    parts: Box<dyn StreamParts>,
}

impl StreamAssembly {
    /// An empty assembly for `provider`'s events.
    pub fn new(provider: Provider) -> Self {
        Self {
            events: 0,
            done: false,
            parts: provider.wire().stream_parts(),
        }
    }

    /// Events read so far.
    pub(super) fn events(&self) -> u32 {
        self.events
    }

    /// Whether a stream that ends here is whole: it sent its last event (for Gemini, its finish
    /// reason). A chat-completions server that never sends `[DONE]` is whole once it sent a
    /// finish reason (the usage chunk, which follows it, may then be missing).
    pub fn is_complete(&self) -> bool {
        self.done || self.parts.is_whole_without_end()
    }

    /// Adds one event.
    ///
    /// # Errors
    /// The provider's message when the event reports an error, or what is wrong with an event
    /// whose data is not JSON.
    pub fn push(&mut self, event: &SseEvent) -> Result<(), String> {
        self.events += 1;
        if self.parts.is_end_marker(&event.data) {
            self.done = true;
            return Ok(());
        }
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|e| format!("event {} (`{}`) is not json: {e}", self.events, event.event))?;
        self.parts.push(&event.event, data, &mut self.done)
    }

    /// The non-streamed body the events so far add up to.
    pub fn body(&self) -> Value {
        self.parts.body()
    }
}

/// The error an event reports, as `kind: message`, when it has an `error` object.
pub fn error_of(data: &Value) -> Option<String> {
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
pub fn append(into: &mut Option<String>, text: Option<&str>) {
    if let Some(text) = text {
        into.get_or_insert_with(String::new).push_str(text);
    }
}
