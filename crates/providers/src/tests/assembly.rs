//! Streams put together: each format's recorded stream against its non-streamed twin, in
//! chunks of any size, cut midway, ended by an error event, and each format's streaming request.

use serde_json::{Value, json};

use super::*;

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
        .wire()
        .decode(&body.to_string())
        .expect("the body decodes")
}

#[test]
fn every_format_assembles_the_tool_calls_of_its_non_streamed_twin() {
    formats();
    for provider in Provider::ALL {
        let name = format!("{}_tools", provider.name());
        let twin = provider
            .wire()
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
    formats();
    for (provider, name) in [
        (Provider::OpenAiChat, "openai_chat"),
        (Provider::OpenAiResponses, "openai_responses"),
        (Provider::Anthropic, "anthropic"),
        (Provider::Gemini, "gemini"),
    ] {
        let twin = provider
            .wire()
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
    formats();
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
    formats();
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

/// The URL of `provider`'s streaming request, `body` changed to ask for a stream.
fn streaming_request(provider: Provider, url: String, body: &mut Value) -> String {
    let fields = body.as_object_mut().expect("a request body is an object");
    provider.wire().streaming_request(url, fields)
}

#[test]
fn streaming_requests_ask_each_api_its_way() {
    formats();
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
