//! Properties of the client's own readers of provider responses, whatever the wire format: any
//! header value gives a delay or nothing, any error body a provider error (its fields or none),
//! and any text its answer and reasoning split. The formats' decoders are fuzzed in
//! `arena-providers`. See `arena_core::fuzz` for the case counts and the hostile corpus.

use std::time::SystemTime;

use arena_core::fuzz::{config, hostile_texts, reply_text};
use proptest::prelude::*;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{error_body, ratelimit, reasoning::split_reasoning, retry::parse_retry_after};

/// What the client's readers do with one text; none may panic.
fn read_text(text: &str) {
    let _ = error_body::parse(text);
    let (content, _) = split_reasoning(text);
    assert!(content.len() <= text.len());
    let _ = parse_retry_after(text);
    let _ = ratelimit::parse_duration(text);
}

proptest! {
    #![proptest_config(config(256))]

    /// Any header value gives a delay or nothing.
    #[test]
    fn any_header_gives_a_delay_or_nothing(
        value in prop_oneof![any::<String>(), "[0-9.hms ]{0,20}", "[A-Za-z0-9,: ]{0,40}"],
        name in proptest::sample::select(&[
            "retry-after", "retry-after-ms", "x-ratelimit-reset-requests",
            "x-ratelimit-reset-tokens", "anthropic-ratelimit-requests-reset",
            "anthropic-ratelimit-tokens-reset", "x-ratelimit-remaining-requests",
        ][..]),
    ) {
        let _ = parse_retry_after(&value);
        let _ = ratelimit::parse_duration(&value);
        if let Ok(header) = HeaderValue::from_str(&value) {
            let mut headers = HeaderMap::new();
            headers.insert(HeaderName::from_static(name), header);
            let _ = ratelimit::retry_delay(&headers, SystemTime::now());
        }
    }

    /// Any text, as an error body and a reply, reads without a panic.
    #[test]
    fn any_text_reads_as_an_error_and_a_reply(text in prop_oneof![any::<String>(), reply_text()]) {
        read_text(&text);
    }
}

/// The hostile corpus through the client's readers.
#[test]
fn fuzz_corpus_through_the_client_readers() {
    for (_name, text) in hostile_texts() {
        read_text(&text);
    }
}
