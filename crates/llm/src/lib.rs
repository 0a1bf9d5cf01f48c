//! The LLM client: one shared HTTP client for every provider, retries with backoff, rate limits,
//! pacing, streams and batches. The wire formats are modules of the `arena-providers` crate,
//! known here through [`wire::WireFormat`] and installed by the program at start
//! ([`wire::install`]).
//!
//! An [`Endpoint`] says where a model is served and how to treat it (wire format, API-key variable,
//! concurrency, timeout, retries); a [`ChatRequest`] says what to ask. [`LlmClient::chat`] retries
//! every failure that is not the model's fault (see [`LlmError::is_transient`]) and returns the answer
//! with its reasoning split off, token usage, latency and the raw body for the store.
//!
//! Four wire formats are named (see [`Provider`]): OpenAI-compatible chat completions, the OpenAI
//! Responses API, Anthropic messages and Gemini `generateContent`. Each maps the same
//! [`ChatRequest`] (system messages, sampling, token limit, [`Reasoning`]) to its API, and its reply
//! to the same [`ChatReply`]: answer, reasoning text, [`Usage`] and a finish reason in OpenAI's
//! terms. Rate-limited calls wait as the provider's headers say ([`retry_delay`]); a call's cost is
//! the provider's own when its response carries one ([`ProviderCost`], OpenRouter's `usage.cost`),
//! else the [`PriceTable`]'s ([`ChatReply::call_cost`] says which).
//!
//! ```no_run
//! use arena_llm::{ChatMessage, ChatRequest, Endpoint, LlmClient};
//!
//! # async fn run() -> Result<(), arena_llm::LlmError> {
//! // The program installs the formats once, at start: `arena_providers::install()`.
//! let client = LlmClient::new()?;
//! let endpoint = Endpoint::new("http://127.0.0.1:8765/v1");
//! client.probe(&endpoint).await?;
//! let request = ChatRequest {
//!     model: "smollm2-135m-instruct".into(),
//!     messages: vec![ChatMessage::new("user", "Your move as White?")],
//!     max_tokens: Some(32),
//!     ..ChatRequest::default()
//! };
//! let reply = client.chat(&endpoint, &request).await?;
//! println!("{} ({:?} tokens)", reply.content, reply.usage);
//! # Ok(())
//! # }
//! ```

mod batch;
mod client;
mod error_body;
#[cfg(test)]
mod fuzz;
mod limits;
mod pacing;
mod ratelimit;
mod reasoning;
mod rejection;
mod retry;
mod sse;
mod stream;
pub mod wire;

use std::{fmt, str::FromStr, time::Duration};

use reqwest::RequestBuilder;
use serde::{Deserialize, Serialize};

use self::wire::WireReply;
use serde_json::{Map, Value};

pub use arena_llm_types::{
    CallCost, ChatMessage, CostSource, Image, Price, PriceTable, ProviderCost, ToolCall, Usage,
    sha256_hex,
};

pub use self::{
    batch::{
        BATCH_PRICE_FACTOR, BatchClient, BatchError, BatchOutcome, BatchRequest, BatchState,
        EndedBatch, batch_cost, supports_batch, supports_endpoint,
    },
    client::{FailedAttempt, LlmClient, MAX_RESPONSE_BYTES, headers_that_matter},
    limits::{LimitState, ReportedLimits},
    pacing::{EndpointLoad, RateLimit},
    ratelimit::retry_delay,
    reasoning::split_reasoning,
    rejection::Rejection,
    retry::{DEFAULT_DECODE_RETRIES, RetryPolicy, parse_retry_after},
};

/// The wire format an endpoint speaks. Each variant has its own module in the `arena-providers`
/// crate, which implements [`wire::WireFormat`] and is installed by the program at start
/// ([`wire::install`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Provider {
    /// OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama, OpenRouter, ...).
    #[default]
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// The OpenAI Responses API (`POST {base}/responses`), also served by llama.cpp.
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
    /// Anthropic messages (`POST {base}/messages`), also served by llama.cpp.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini `generateContent` (`POST {base}/models/{model}:generateContent`).
    #[serde(rename = "gemini")]
    Gemini,
}

impl Provider {
    /// Every provider, for listings in messages and docs.
    pub const ALL: [Provider; 4] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ];

    /// How this format is spoken: the module the program installed for it (see
    /// [`wire::install`]).
    ///
    /// # Panics
    /// When no formats are installed: a program that makes calls installs them first.
    pub fn wire(self) -> &'static dyn wire::WireFormat {
        wire::installed(self)
    }

    /// The provider's name as used in scripts and the store.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai_chat",
            Provider::OpenAiResponses => "openai_responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
        }
    }

    /// The URL a chat request for `model` is posted to.
    fn chat_url(self, base_url: &str, model: &str) -> String {
        self.wire().chat_url(base_url, model)
    }

    /// The model-list URL, used as a cheap reachability and key check.
    fn models_url(self, base_url: &str) -> String {
        self.wire().models_url(base_url)
    }

    /// Adds the provider's fixed headers and, when there is one, its API-key header.
    fn authorize(
        self,
        request: RequestBuilder,
        key: Option<&str>,
        api_version: Option<&str>,
    ) -> RequestBuilder {
        self.wire().authorize(request, key, api_version)
    }

    fn encode(self, req: &ChatRequest) -> Value {
        self.wire().encode(req)
    }

    /// The settings of `req` this format does not send, by name (`temperature`, `top_p`,
    /// `seed`): those its API version has no field for, or the model refuses. The stored
    /// request names them (`not_sent`).
    pub fn unsent_settings(self, req: &ChatRequest) -> Vec<&'static str> {
        self.wire().unsent_settings(req)
    }

    /// Whether an error answer (its `status` and `body`) refuses the request for good, by this
    /// provider's rules.
    pub fn rejection(self, status: u16, body: &str) -> Option<Rejection> {
        rejection::classify(self, status, body)
    }

    fn decode(self, body: &str) -> Result<WireReply, String> {
        self.wire().decode(body)
    }

    /// The tool calls of a stored response body, as the reply that brought it had them: the body
    /// is decoded as it is, or, when it is a stream of events, put together again first. None
    /// when it does not decode (a body stored before tools existed has none).
    pub fn stored_tool_calls(self, raw_body: &str) -> Vec<ToolCall> {
        if let Ok(wire) = self.decode(raw_body) {
            return wire.tool_calls;
        }
        let body = stream::assemble_stored(self, raw_body).to_string();
        self.decode(&body)
            .map(|wire| wire.tool_calls)
            .unwrap_or_default()
    }

    /// The reasoning blocks of a stored response body that must go back with the text of its
    /// reply in a dialog ([`ChatMessage::thinking`]): Anthropic's `thinking` and
    /// `redacted_thinking` blocks, read from the body as it is or from its stream of events put
    /// together again. Empty for the other formats and for a body that does not decode.
    pub fn stored_thinking(self, raw_body: &str) -> Vec<Value> {
        self.wire().stored_thinking(raw_body)
    }

    /// The usage and cost a response body reports, whatever else it holds; nothing when it is
    /// not JSON or reports none.
    pub(crate) fn reported_usage(self, body: &str) -> ReportedUsage {
        self.wire().decode_usage(body)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Provider {
    type Err = LlmError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "openai" {
            return Ok(Provider::OpenAiChat); // the name before the Responses API came
        }
        Provider::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| LlmError::UnknownProvider { name: s.to_owned() })
    }
}

/// Where a model is served and how requests to it are made.
///
/// The API key itself is never held here: only the name of the environment variable that holds it,
/// read at request time, so that keys cannot reach logs, `Debug` output or the store.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// The wire format.
    pub provider: Provider,
    /// Base URL, e.g. `http://127.0.0.1:8765/v1`; paths such as `/chat/completions` are appended.
    pub base_url: String,
    /// Name of the environment variable holding the API key; `None` for keyless local servers.
    pub api_key_env: Option<String>,
    /// Requests in flight at once to this `base_url` and key, shared by all endpoints with them
    /// (the first endpoint seen sets the limit; 0 counts as 1); the adaptive window never
    /// exceeds it.
    pub max_concurrency: usize,
    /// Rate limits declared for this `base_url` and key (the first endpoint seen sets them);
    /// parts left unset are learned from the answers' headers.
    pub rate: RateLimit,
    /// Whether requests are paced (rate, adaptive window, a probe before the limits are known);
    /// off, only `max_concurrency` and fair turns apply. Off is for measuring what pacing gains.
    pub paced: bool,
    /// Who is asking (a player's name): requests waiting for one URL and key are served lane by
    /// lane in turn, so that players sharing a key get equal shares.
    pub lane: String,
    /// Time allowed for one HTTP attempt, body included.
    pub timeout: Duration,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
    /// The API version to name instead of the format's own: Anthropic's `anthropic-version`
    /// header (for gateways that need an older one), Azure OpenAI's `api-version` query
    /// parameter (required there); `None` speaks the version arena declares.
    pub api_version: Option<String>,
    /// Whether this is Azure OpenAI (chat completions or Responses): the base URL is the
    /// resource's `https://NAME.openai.azure.com/openai`, the model is the deployment's name
    /// (chat completions are posted to `deployments/{model}/chat/completions`), every URL
    /// carries `api-version`, and the key travels in the `api-key` header.
    pub azure: bool,
    /// Extra headers sent with every request, as (header name, the environment variable
    /// holding its value): values are read at request time and, like the key, never held,
    /// logged or stored, since a gateway's header is often a credential.
    pub headers: Vec<(String, String)>,
    /// Whether replies are read as server-sent events (see `stream.rs`); a server that answers
    /// a streaming request with a plain body is read as usual.
    pub stream: bool,
    /// The longest a streamed reply may stay silent (no byte between two events) before it is
    /// cut as failed, its partial reply kept.
    pub stream_idle_timeout: Duration,
}

impl Endpoint {
    /// An OpenAI-compatible endpoint without API key, 4 concurrent requests, a 5-minute timeout
    /// (small local models on one thread are slow) and the default [`RetryPolicy`].
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            provider: Provider::OpenAiChat,
            base_url: base_url.into(),
            api_key_env: None,
            max_concurrency: 4,
            rate: RateLimit::default(),
            paced: true,
            lane: String::new(),
            timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
            api_version: None,
            azure: false,
            headers: Vec::new(),
            stream: false,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
        }
    }
}

impl Endpoint {
    /// The URL a chat request for `model` is posted to.
    fn chat_url(&self, model: &str) -> String {
        if self.azure {
            let base = self.base_url.trim_end_matches('/');
            let url = match self.provider {
                Provider::OpenAiResponses => format!("{base}/responses"),
                _ => format!("{base}/deployments/{model}/chat/completions"),
            };
            return self.with_api_version(url);
        }
        self.provider.chat_url(&self.base_url, model)
    }

    /// The model-list URL, used as a cheap reachability and key check.
    fn models_url(&self) -> String {
        let url = self.provider.models_url(&self.base_url);
        if self.azure {
            return self.with_api_version(url);
        }
        url
    }

    /// `url` with Azure's `api-version` query parameter.
    fn with_api_version(&self, url: String) -> String {
        let version = self.api_version.as_deref().unwrap_or(AZURE_API_VERSION);
        match reqwest::Url::parse(&url) {
            Ok(mut parsed) => {
                parsed.query_pairs_mut().append_pair("api-version", version);
                parsed.to_string()
            }
            Err(_) => format!("{url}?api-version={version}"),
        }
    }

    /// Adds the provider's fixed headers, the key (Azure's `api-key` header, else the
    /// provider's) and the player's extra `headers` with their values read (`values`).
    fn authorize(
        &self,
        request: RequestBuilder,
        key: Option<&str>,
        values: &[(String, String)],
    ) -> RequestBuilder {
        let request = match (self.azure, key) {
            (true, Some(key)) => request.header("api-key", key),
            (true, None) => request,
            (false, _) => self
                .provider
                .authorize(request, key, self.api_version.as_deref()),
        };
        values.iter().fold(request, |request, (name, value)| {
            request.header(name, value)
        })
    }

    /// The extra headers with their values read from the environment.
    ///
    /// # Errors
    /// [`LlmError::MissingApiKey`] naming a variable that is unset or blank.
    fn header_values(&self) -> Result<Vec<(String, String)>, LlmError> {
        self.headers
            .iter()
            .map(|(name, env)| match std::env::var(env) {
                Ok(value) if !value.trim().is_empty() => {
                    Ok((name.clone(), value.trim().to_owned()))
                }
                _ => Err(LlmError::MissingApiKey { env: env.clone() }),
            })
            .collect()
    }
}

/// Azure OpenAI's `api-version` when a player sets none: the newest generally available
/// data-plane version the `openai` SDK's Azure client documents.
pub(crate) const AZURE_API_VERSION: &str = "2024-10-21";

/// How long a streamed reply may stay silent by default, 60 seconds: longer than providers'
/// own keep-alive intervals, and within the idle timeouts of common proxies.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A tool a request offers the model: a function with a name, a description and JSON-schema
/// parameters, sent in each wire format's own shape (see [`ChatRequest::tools`]). Fields are in
/// alphabetical order, as the store writes requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// What it does, for the model.
    pub description: String,
    /// The function's name (letters, digits, `_` and `-`, as every provider accepts).
    pub name: String,
    /// Its arguments as a JSON schema (an `object` schema).
    pub parameters: Value,
}

/// The tool calls of a stored response body, in whichever wire format it is (the first format
/// that reads calls from it), plain or streamed; empty when it called none. For showing stored
/// replies, where the endpoint's format is not at hand.
pub fn tool_calls_in_body(raw_body: &str) -> Vec<ToolCall> {
    // Every format's calls are under one of these keys: a body without any has none, and most
    // bodies are read no further.
    const KEYS: [&str; 4] = [
        "\"tool_calls\"",
        "\"function_call\"",
        "\"tool_use\"",
        "\"functionCall\"",
    ];
    if !KEYS.iter().any(|k| raw_body.contains(k)) {
        return Vec::new();
    }
    Provider::ALL
        .iter()
        .map(|p| p.stored_tool_calls(raw_body))
        .find(|calls| !calls.is_empty())
        .unwrap_or_default()
}

/// A stored reply as transcripts show it: its text, then one `→ name(arguments)` line per tool
/// call.
pub fn reply_with_calls(text: &str, calls: &[ToolCall]) -> String {
    let mut shown = text.to_owned();
    for call in calls {
        if !shown.is_empty() {
            shown.push('\n');
        }
        shown.push_str(&format!("→ {}({})", call.name, call.arguments));
    }
    shown
}

/// The host (with its port, when not the default) of an endpoint's base URL, for telling users
/// where requests and keys go; the URL itself when it does not parse.
pub fn host_of(base_url: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => base_url.to_string(),
        },
        Err(_) => base_url.to_string(),
    }
}

/// Whether the endpoint at `base_url` prices every call in its response: OpenRouter, whose
/// responses always carry `usage.cost` (its usage accounting is on for every request).
pub fn reports_its_cost(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|host| host == "openrouter.ai" || host.ends_with(".openrouter.ai"))
}

/// What to ask a model. `None` fields are left to the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model name as the provider knows it.
    pub model: String,
    /// The conversation so far.
    pub messages: Vec<ChatMessage>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Upper bound on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling seed, for servers that honour it (Anthropic and the Responses API have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// How much the model should think before answering, for APIs that take it. Reasoning APIs
    /// that forbid sampling parameters get none: see each wire format's module.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// Fields merged into the JSON body last, e.g. llama.cpp `grammar` or vLLM
    /// `chat_template_kwargs`; they override fields set above.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
    /// Tools the model may call (skipped when stored if there are none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

/// A reasoning setting. Each API takes the part it understands:
///
/// | API | `effort` | `budget_tokens` |
/// |---|---|---|
/// | OpenAI chat | `reasoning_effort` | ignored |
/// | OpenAI Responses | `reasoning.effort` (with `summary: auto`) | ignored |
/// | Anthropic | a budget, see [`Reasoning::budget`] | `thinking.budget_tokens` |
/// | Gemini | a budget, see [`Reasoning::budget`] | `thinkingConfig.thinkingBudget` |
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reasoning {
    /// `low`, `medium` or `high` (OpenAI also knows `minimal` and `none`; they are passed on as is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Tokens the model may spend thinking (Anthropic requires at least 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u32>,
}

impl Reasoning {
    /// Reasoning at the given effort.
    pub fn effort(effort: impl Into<String>) -> Self {
        Self {
            effort: Some(effort.into()),
            budget_tokens: None,
        }
    }

    /// Reasoning within a token budget.
    pub fn budget_tokens(tokens: u32) -> Self {
        Self {
            effort: None,
            budget_tokens: Some(tokens),
        }
    }

    /// Whether this asks for any thinking at all (`effort: none` and a zero budget do not).
    pub fn is_enabled(&self) -> bool {
        self.effort.as_deref().is_some_and(|e| e != "none")
            || self.budget_tokens.is_some_and(|b| b > 0)
    }

    /// The thinking budget for APIs that count tokens: `budget_tokens` when set, else the effort
    /// mapped to 1024 (`minimal`, `low`), 8192 (`medium`) or 24576 (`high`, Gemini 2.5 Flash's
    /// maximum), 0 for `none`. `None` for an effort no API defines.
    pub fn budget(&self) -> Option<u32> {
        if let Some(tokens) = self.budget_tokens {
            return Some(tokens);
        }
        match self.effort.as_deref()? {
            "none" => Some(0),
            "minimal" | "low" => Some(1024),
            "medium" => Some(8192),
            "high" => Some(24_576),
            _ => None,
        }
    }
}

/// A model's answer and everything the store records about the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatReply {
    /// The answer, with `<think>` blocks removed and trimmed.
    pub content: String,
    /// Reasoning text: the `reasoning_content`/`reasoning` field and/or the `<think>` blocks.
    pub reasoning: Option<String>,
    /// Token counts, when the server reports them.
    pub usage: Option<Usage>,
    /// The provider's own price of the call, when the response carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_cost: Option<ProviderCost>,
    /// Why generation stopped, in OpenAI chat terms for every API (`stop`, `length`,
    /// `content_filter`, ...; values with no counterpart are kept as sent), when reported.
    pub finish_reason: Option<String>,
    /// HTTP status of the successful attempt.
    pub http_status: u16,
    /// Duration of the successful attempt in milliseconds (queueing and retries excluded).
    pub latency_ms: u64,
    /// Failed attempts before the successful one.
    pub transport_retries: u32,
    /// The response body as received.
    pub raw_body: String,
    /// The tools the reply called, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl ChatReply {
    /// The call's cost in US dollars: the provider's own when it reported one, else the price
    /// table's for `model`; `None` when neither knows.
    pub fn cost_usd(&self, prices: &PriceTable, model: &str) -> Option<f64> {
        self.call_cost(prices, model).usd
    }

    /// The call's cost and who priced it (see [`PriceTable::call_cost`]).
    pub fn call_cost(&self, prices: &PriceTable, model: &str) -> CallCost {
        prices.call_cost(
            self.usage.as_ref(),
            self.provider_cost.as_ref().map(|c| c.usd),
            model,
        )
    }
}

/// What a response body reports of its usage and cost, read on its own: a body that is not a
/// usable reply (an error status, a 200 that does not decode) may still say what it was billed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportedUsage {
    /// Token counts, when reported.
    pub usage: Option<Usage>,
    /// The provider's own price, when reported.
    pub cost: Option<ProviderCost>,
}

/// What a streamed reply had sent when it was cut.
#[derive(Debug, Clone, PartialEq)]
pub struct PartialReply {
    /// The events as received.
    pub body: String,
    /// The non-streamed body the events received add up to (JSON).
    pub assembled: String,
    /// The answer received so far, trimmed and with `<think>` blocks split off.
    pub text: String,
    /// The reasoning received so far.
    pub reasoning: Option<String>,
}

/// Why an LLM call failed. None of these is the model's fault; see [`LlmError::is_transient`].
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No HTTP response: connection refused or reset, DNS failure, TLS failure.
    #[error("failed to reach llm endpoint `{url}` after {attempts} attempt(s): {detail}")]
    Unreachable {
        /// The URL requested.
        url: String,
        /// The transport error and its causes.
        detail: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The server answered with a non-success status.
    #[error(
        "llm endpoint `{url}` answered http {status}: {}",
        http_detail(kind.as_deref(), message.as_deref(), body)
    )]
    Http {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The provider's error type or status (`rate_limit_error`, `overloaded_error`,
        /// `INVALID_ARGUMENT`, ...), when the body names one.
        kind: Option<String>,
        /// The provider's error message, when the body is a JSON error object.
        message: Option<String>,
        /// The response body.
        body: String,
        /// Whether the provider refused this request for good (it would answer the same again),
        /// as read from the status and body by the provider's rules; `None` for every other
        /// error, a refusal of the player's settings (unknown model, bad key) included.
        rejection: Option<Rejection>,
        /// The server's own word on retrying, its `x-should-retry` header (`true` or `false`),
        /// which OpenAI's and Anthropic's SDKs obey over the status; `None` when not sent.
        should_retry: Option<bool>,
    },
    /// No complete response within the endpoint's timeout.
    #[error("llm endpoint `{url}` did not answer within {timeout:?} after {attempts} attempt(s)")]
    Timeout {
        /// The URL requested.
        url: String,
        /// The per-attempt timeout.
        timeout: Duration,
        /// Attempts made.
        attempts: u32,
    },
    /// A success status with a body that cannot be read as a reply.
    #[error(
        "failed to decode the reply of llm endpoint `{url}` (attempt {attempts}): {detail}: {}",
        snippet(body)
    )]
    Decode {
        /// The URL requested.
        url: String,
        /// What is wrong with the body.
        detail: String,
        /// The response body.
        body: String,
        /// Attempts made, this one included.
        attempts: u32,
    },
    /// The endpoint names an API-key variable that is unset or empty.
    #[error("failed to read the api key: environment variable `{env}` is not set")]
    MissingApiKey {
        /// The variable's name.
        env: String,
    },
    /// The HTTP client could not be built.
    #[error("failed to build the http client: {detail}")]
    Client {
        /// The builder's error.
        detail: String,
    },
    /// An attempt was still unanswered when the player's chess clock allowed no more time
    /// (see [`LlmClient::chat_within`]): the player lost on time, and nothing is retried.
    #[error("llm endpoint `{url}` had not answered when the player's clock ran out ({after:?})")]
    OutOfTime {
        /// The URL requested.
        url: String,
        /// The time the clock allowed the attempt.
        after: Duration,
    },
    /// A streamed reply ended before its last event: the connection dropped, the stream stayed
    /// silent past the endpoint's idle timeout, or the provider sent an error event. What
    /// arrived is kept (see [`PartialReply`]); the call is retried like a transport failure.
    #[error(
        "the streamed reply of llm endpoint `{url}` was cut after {events} event(s) (attempt {attempts}): {detail}; {} characters of answer and {} of reasoning were received",
        partial.text.chars().count(),
        partial.reasoning.as_deref().map_or(0, |r| r.chars().count())
    )]
    StreamCut {
        /// The URL requested.
        url: String,
        /// Why the stream ended.
        detail: String,
        /// Events read before the cut.
        events: u32,
        /// Attempts made, this one included.
        attempts: u32,
        /// What arrived before the cut.
        partial: Box<PartialReply>,
    },
    /// A provider name that no wire format answers to.
    #[error(
        "unknown llm provider `{name}` (known: openai_chat, openai, openai_responses, anthropic, gemini)"
    )]
    UnknownProvider {
        /// The name given.
        name: String,
    },
}

impl LlmError {
    /// Whether retrying later may succeed: transport failures, timeouts, undecodable bodies and
    /// the HTTP answers OpenAI's and Anthropic's SDKs retry: the server's `x-should-retry` when it
    /// sent one (`true` retries any status, `false` none), else 408, 409 (a conflict, such as a
    /// lock held by a concurrent request), 429 and 5xx (Anthropic's 529 "overloaded" included).
    /// Other statuses (401 bad key, 404 unknown model, 400 bad request) and local configuration
    /// errors are fatal.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. }
            | LlmError::Timeout { .. }
            | LlmError::Decode { .. }
            | LlmError::StreamCut { .. } => true,
            LlmError::Http {
                status,
                should_retry,
                ..
            } => should_retry.unwrap_or(matches!(status, 408 | 409 | 429 | 500..=599)),
            LlmError::MissingApiKey { .. }
            | LlmError::Client { .. }
            | LlmError::OutOfTime { .. }
            | LlmError::UnknownProvider { .. } => false,
        }
    }
}

impl LlmError {
    /// How the provider refused this very request for good, if it did (see [`Rejection`]).
    pub fn rejection(&self) -> Option<Rejection> {
        match self {
            LlmError::Http { rejection, .. } => *rejection,
            _ => None,
        }
    }

    /// The response body this error carries, for the errors that have one (HTTP errors,
    /// undecodable bodies and cut streams).
    pub fn body(&self) -> Option<&str> {
        match self {
            LlmError::Http { body, .. } | LlmError::Decode { body, .. } => Some(body),
            LlmError::StreamCut { partial, .. } => Some(&partial.body),
            _ => None,
        }
    }
}

/// The provider's message when there is one, else the start of the body.
fn http_detail(kind: Option<&str>, message: Option<&str>, body: &str) -> String {
    match (kind, message) {
        (Some(kind), Some(message)) => format!("{kind}: {}", snippet(message)),
        (None, Some(message)) => snippet(message),
        _ => snippet(body),
    }
}

/// The start of a possibly long body (an HTML error page), for error messages.
fn snippet(body: &str) -> String {
    const MAX_CHARS: usize = 300;
    let body = body.trim();
    match body.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}...", &body[..cut]),
        None => body.to_owned(),
    }
}
