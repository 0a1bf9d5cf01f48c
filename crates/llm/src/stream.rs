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
    events: u32,
    done: bool,
    parts: Box<dyn StreamParts>,
}

impl StreamAssembly {
    /// An empty assembly for `provider`'s events.
    pub(super) fn new(provider: Provider) -> Self {
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
    pub(super) fn is_complete(&self) -> bool {
        self.done || self.parts.is_whole_without_end()
    }

    /// Adds one event.
    ///
    /// # Errors
    /// The provider's message when the event reports an error, or what is wrong with an event
    /// whose data is not JSON.
    pub(super) fn push(&mut self, event: &SseEvent) -> Result<(), String> {
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
    pub(super) fn body(&self) -> Value {
        self.parts.body()
    }
}

/// The error an event reports, as `kind: message`, when it has an `error` object.
pub(crate) fn error_of(data: &Value) -> Option<String> {
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
pub(crate) fn append(into: &mut Option<String>, text: Option<&str>) {
    if let Some(text) = text {
        into.get_or_insert_with(String::new).push_str(text);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
