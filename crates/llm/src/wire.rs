//! What a wire format is: the one trait each provider module implements, so that everything a
//! format does (its URLs and headers, the request it sends, the reply it reads, its stream of
//! events, its refusals, its batch API) sits in that format's module, and the rest of the client
//! asks [`Provider::wire`] instead of matching on the provider.
//!
//! The formats themselves live in the `arena-providers` crate, above this one: the crates that
//! call models (play, lua, outputs) depend on this client only, so that editing a format
//! rebuilds that crate and the program, not everything that makes a call. The program hands the
//! formats over once at start ([`install`]); this module also holds what a format module needs
//! from the client (the reply it decodes to, the refusal fields, the stream helpers).
//!
//! A new format is a new module in `arena-providers` implementing [`WireFormat`] (and
//! [`StreamParts`] for its events), a variant of [`Provider`] and its arm where
//! `arena-providers` lists the formats.

use std::{fmt, sync::OnceLock};

use reqwest::RequestBuilder;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{ChatRequest, Provider, ProviderCost, ReportedUsage, ToolCall, Usage};
pub use crate::{
    batch::{BatchApi, batch_body},
    rejection::{Fields, Rejection},
    sse::{SseEvent, SseParser},
    stream::{StreamAssembly, append, assemble_stored, error_of},
};

/// Which module speaks each provider's format: the program's list, handed over by [`install`].
pub type Formats = fn(Provider) -> &'static dyn WireFormat;

/// The formats installed, once per process.
static INSTALLED: OnceLock<Formats> = OnceLock::new();

/// Installs the wire formats every call of this process speaks (`arena_providers::install` does
/// it with the built-in ones). Only the first call counts: the formats of a process never change
/// under its clients.
pub fn install(formats: Formats) {
    let _ = INSTALLED.set(formats);
}

/// The installed module of `provider`'s format.
///
/// # Panics
/// When no formats are installed: a program error (the program installs them before it builds
/// any client), not something a user's input can cause.
pub(crate) fn installed(provider: Provider) -> &'static dyn WireFormat {
    let formats = INSTALLED
        .get()
        .expect("no wire format is installed: call arena_providers::install() at start");
    formats(provider)
}

/// One wire format: how a [`ChatRequest`] goes out and how the answer comes back.
pub trait WireFormat: Sync {
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
    /// [`Provider::unsent_settings`]).
    fn unsent_settings(&self, req: &ChatRequest) -> Vec<&'static str>;

    /// The reply a (non-streamed) response body holds, or what is wrong with it.
    fn decode(&self, body: &str) -> Result<WireReply, String>;

    /// The usage and cost a response body reports, whatever else it holds.
    fn decode_usage(&self, body: &str) -> ReportedUsage;

    /// The reasoning blocks of a stored body that must go back with its reply in a dialog (see
    /// [`Provider::stored_thinking`]). None by default: only
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
pub trait StreamParts: fmt::Debug + Send + Sync {
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
pub fn sampling_settings(req: &ChatRequest) -> Vec<&'static str> {
    [
        ("temperature", req.temperature.is_some()),
        ("top_p", req.top_p.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect()
}

/// What a wire-format module reads from a successful response body.
#[derive(Debug, Clone, PartialEq)]
pub struct WireReply {
    /// Message text, possibly with `<think>` blocks.
    pub content: String,
    /// A separate reasoning field, when the server split it off.
    pub reasoning: Option<String>,
    /// Token counts, when the body reports them.
    pub usage: Option<Usage>,
    /// The provider's own price of the call, when the body carries one.
    pub cost: Option<ProviderCost>,
    /// Why generation stopped, in OpenAI chat terms.
    pub finish_reason: Option<String>,
    /// The tools the reply called, in order.
    pub tool_calls: Vec<ToolCall>,
}

/// A wire format's `usage` object: what it says of the tokens and, where the provider prices the
/// call itself (OpenRouter), of the cost.
pub trait WireUsageReport: serde::de::DeserializeOwned {
    /// The counts and the provider's price, as arena keeps them.
    fn read(self) -> (Usage, Option<ProviderCost>);
}

/// The usage and cost of a body's top-level `usage` object, whatever else the body holds (an
/// error object, no choices, a failed response): the OpenAI chat and Responses formats share it.
pub fn decode_usage_object<W: WireUsageReport>(body: &str) -> ReportedUsage {
    #[derive(Deserialize)]
    #[serde(bound = "W: WireUsageReport")]
    struct UsageOnly<W> {
        usage: Option<W>,
    }
    match serde_json::from_str::<UsageOnly<W>>(body)
        .ok()
        .and_then(|b| b.usage)
    {
        Some(usage) => {
            let (usage, cost) = usage.read();
            ReportedUsage {
                usage: Some(usage),
                cost,
            }
        }
        None => ReportedUsage::default(),
    }
}
