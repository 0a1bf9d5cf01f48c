//! Properties of the formats' readers of provider responses: any body (JSON or not, truncated,
//! deeply nested) of any status through each wire format's decoder, refusal reader and usage
//! reader gives a reply, a typed answer or nothing, never a panic. The client's own readers
//! (headers, error bodies, reasoning) are fuzzed in `arena-llm`. See `arena_core::fuzz` for the
//! case counts and the hostile corpus.

use std::path::Path;

use arena_core::fuzz::{config, hostile_texts, reply_text};
use proptest::prelude::*;
use serde_json::{Map, Value};

use super::{Provider, formats, split_reasoning};

const PROVIDERS: [Provider; 4] = [
    Provider::OpenAiChat,
    Provider::OpenAiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

/// Keys of the four wire formats, so that generated bodies reach past the first lookup.
const KEYS: &[&str] = &[
    "choices",
    "message",
    "content",
    "reasoning_content",
    "reasoning",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost",
    "is_byok",
    "cost_details",
    "error",
    "type",
    "code",
    "candidates",
    "parts",
    "text",
    "thought",
    "output",
    "output_text",
    "summary",
    "stop_reason",
    "finish_reason",
    "finishReason",
    "usageMetadata",
    "promptTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "status",
    "incomplete_details",
    "details",
    "@type",
    "retryDelay",
    "promptFeedback",
    "blockReason",
    "thinking",
    "role",
    "completion_tokens_details",
    "reasoning_tokens",
    "prompt_tokens_details",
    "cached_tokens",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        Just(Value::from(-1)),
        reply_text().prop_map(Value::String),
        proptest::sample::select(KEYS).prop_map(|k| Value::String((*k).to_owned())),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        4 => proptest::sample::select(KEYS).prop_map(|k| (*k).to_owned()),
                        1 => any::<String>(),
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A recorded body of the fixtures, cut at any byte.
fn truncated_fixture() -> impl Strategy<Value = String> {
    let dir =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("crates/llm/src/fixtures");
    let mut bodies: Vec<String> = std::fs::read_dir(&dir)
        .expect("the recorded bodies")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "json").then(|| std::fs::read_to_string(path).ok())?
        })
        .collect();
    bodies.sort();
    (
        proptest::sample::select(bodies),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(body, cut)| {
            let mut end = cut.index(body.len() + 1);
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            body[..end].to_owned()
        })
}

fn body_text() -> impl Strategy<Value = String> {
    prop_oneof![
        json_value().prop_map(|v| v.to_string()),
        truncated_fixture(),
        reply_text(),
    ]
}

/// What every format does with one body: decode it as a success, read it as a refusal of any
/// status, read its usage; none may panic.
fn read_body(body: &str, status: u16) {
    for provider in PROVIDERS {
        match provider.wire().decode(body) {
            Ok(wire) => {
                let (content, _) = split_reasoning(&wire.content);
                assert!(content.len() <= wire.content.len());
            }
            Err(detail) => assert!(!detail.is_empty(), "{provider:?}: an empty decode error"),
        }
        let _ = provider.rejection(status, body);
        let _ = provider.wire().decode_usage(body);
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Any body of any status through every wire format gives a reply or a typed error.
    #[test]
    fn any_body_gives_a_reply_or_a_typed_error(body in body_text(), status in 100u16..600) {
        formats();
        read_body(&body, status);
    }
}

/// The hostile corpus through every response reader.
#[test]
fn fuzz_corpus_through_the_response_readers() {
    formats();
    for (_name, text) in hostile_texts() {
        read_body(&text, 200);
        read_body(&text, 429);
    }
}
