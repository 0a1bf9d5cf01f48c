//! What a wire format is: the one trait each provider module implements, so that everything a
//! format does (its URLs and headers, the request it sends, the reply it reads, its stream of
//! events, its refusals, its batch API) sits in that format's module, and the rest of the crate
//! asks [`Provider::wire`](crate::Provider::wire) instead of matching on the provider.
//!
//! A new format is a new module implementing [`WireFormat`] (and [`StreamParts`] for its
//! events), a variant of [`Provider`](crate::Provider) and its arm in `Provider::wire`.

use std::fmt;

use reqwest::RequestBuilder;
use serde_json::{Map, Value};

use crate::{
    ChatRequest, ReportedUsage, WireReply, batch::BatchApi, rejection::Fields, rejection::Rejection,
};

/// One wire format: how a [`ChatRequest`] goes out and how the answer comes back.
pub(crate) trait WireFormat: Sync {
    /// The URL a chat request for `model` is posted to.
    fn chat_url(&self, base_url: &str, model: &str) -> String;

    /// The model-list URL, used as a cheap reachability and key check.
    fn models_url(&self, base_url: &str) -> String;

    /// Adds the format's fixed headers and, when there is one, its API-key header.
    fn authorize(
        &self,
        request: RequestBuilder,
        key: Option<&str>,
        api_version: Option<&str>,
    ) -> RequestBuilder;

    /// The request body.
    fn encode(&self, req: &ChatRequest) -> Value;

    /// The settings of `req` this format does not send, by name (see
    /// [`Provider::unsent_settings`](crate::Provider::unsent_settings)).
    fn unsent_settings(&self, req: &ChatRequest) -> Vec<&'static str>;

    /// The reply a (non-streamed) response body holds, or what is wrong with it.
    fn decode(&self, body: &str) -> Result<WireReply, String>;

    /// The usage and cost a response body reports, whatever else it holds.
    fn decode_usage(&self, body: &str) -> ReportedUsage;

    /// The reasoning blocks of a stored body that must go back with its reply in a dialog (see
    /// [`Provider::stored_thinking`](crate::Provider::stored_thinking)). None by default: only
    /// a format whose API asks for them back has any.
    fn stored_thinking(&self, _raw_body: &str) -> Vec<Value> {
        Vec::new()
    }

    /// The URL of the streaming request, after changing the non-streamed body's `fields` to ask
    /// for a stream.
    fn streaming_request(&self, url: String, fields: &mut Map<String, Value>) -> String;

    /// An empty assembly of this format's stream events.
    fn stream_parts(&self) -> Box<dyn StreamParts>;

    /// Whether an error answer (`status` 400, 413 or 422, whose error object reads as `fields`,
    /// its message lowercased in `message`) refuses the request for good, by this format's
    /// rules. llama.cpp's context error is read before, for every format.
    fn rejection(&self, status: u16, fields: &Fields, message: &str) -> Option<Rejection>;

    /// The batch API requests of this format can be sent through, if any.
    fn batch_api(&self) -> Option<BatchApi>;
}

/// The events of one streamed reply of one format, put together into the body the same call
/// would have got without streaming.
pub(crate) trait StreamParts: fmt::Debug + Send + Sync {
    /// Adds one event: its name (`event:` line, empty when none) and its data, read as JSON.
    /// Sets `done` when the event ends the stream.
    ///
    /// # Errors
    /// The provider's message when the event reports an error.
    fn push(&mut self, event: &str, data: Value, done: &mut bool) -> Result<(), String>;

    /// The non-streamed body the events so far add up to.
    fn body(&self) -> Value;

    /// Whether the event's raw data is the format's end marker rather than JSON (chat
    /// completions' `[DONE]`).
    fn is_end_marker(&self, _data: &str) -> bool {
        false
    }

    /// Whether a stream that ends here without its last event is whole anyway (a
    /// chat-completions server that never sends `[DONE]` once it sent a finish reason).
    fn is_whole_without_end(&self) -> bool {
        false
    }
}

/// The sampling settings `req` sets (`temperature`, `top_p`), for formats that must leave them
/// out for some models.
pub(crate) fn sampling_settings(req: &ChatRequest) -> Vec<&'static str> {
    [
        ("temperature", req.temperature.is_some()),
        ("top_p", req.top_p.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}
