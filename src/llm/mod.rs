//! LLM clients: one shared HTTP client, one module per provider wire format, retries with backoff.
//!
//! An [`Endpoint`] says where a model is served and how to treat it (wire format, API-key variable,
//! concurrency, timeout, retries); a [`ChatRequest`] says what to ask. [`LlmClient::chat`] retries
//! every failure that is not the model's fault (see [`LlmError::is_transient`]) and returns the answer
//! with its reasoning split off, token usage, latency and the raw body for the store.
//!
//! ```no_run
//! use arena::llm::{ChatMessage, ChatRequest, Endpoint, LlmClient};
//!
//! # async fn run() -> Result<(), arena::llm::LlmError> {
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

mod client;
mod openai;
mod reasoning;
mod retry;

use std::{fmt, str::FromStr, time::Duration};

use reqwest::RequestBuilder;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use self::{
    client::LlmClient,
    reasoning::split_reasoning,
    retry::{RetryPolicy, parse_retry_after},
};

/// The wire format an endpoint speaks. Each variant has its own module beside `openai.rs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Provider {
    /// OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp, Ollama, OpenRouter, ...).
    #[default]
    #[serde(rename = "openai_chat")]
    OpenAiChat,
}

impl Provider {
    /// The provider's name as used in scripts and the store.
    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai_chat",
        }
    }

    fn chat_url(self, base_url: &str) -> String {
        match self {
            Provider::OpenAiChat => openai::chat_url(base_url),
        }
    }

    fn models_url(self, base_url: &str) -> String {
        match self {
            Provider::OpenAiChat => openai::models_url(base_url),
        }
    }

    fn authorize(self, request: RequestBuilder, key: &str) -> RequestBuilder {
        match self {
            Provider::OpenAiChat => openai::authorize(request, key),
        }
    }

    fn encode(self, req: &ChatRequest) -> Value {
        match self {
            Provider::OpenAiChat => openai::encode(req),
        }
    }

    fn decode(self, body: &str) -> Result<WireReply, String> {
        match self {
            Provider::OpenAiChat => openai::decode(body),
        }
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
        match s {
            "openai_chat" | "openai" => Ok(Provider::OpenAiChat),
            _ => Err(LlmError::UnknownProvider { name: s.to_owned() }),
        }
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
    /// Requests in flight at once to this `base_url`, shared by all endpoints with that URL
    /// (the first endpoint seen for a URL sets the limit; 0 counts as 1).
    pub max_concurrency: usize,
    /// Time allowed for one HTTP attempt, body included.
    pub timeout: Duration,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
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
            timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// One message of a chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message with the given role and text.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }
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
    /// Sampling seed, for servers that honour it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Fields merged into the JSON body last, e.g. llama.cpp `grammar` or vLLM
    /// `chat_template_kwargs`; they override fields set above.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens generated, reasoning included.
    pub completion_tokens: u64,
    /// Their sum, as reported.
    pub total_tokens: u64,
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
    /// Why generation stopped (`stop`, `length`, ...), when reported.
    pub finish_reason: Option<String>,
    /// HTTP status of the successful attempt.
    pub http_status: u16,
    /// Duration of the successful attempt in milliseconds (queueing and retries excluded).
    pub latency_ms: u64,
    /// Failed attempts before the successful one.
    pub transport_retries: u32,
    /// The response body as received.
    pub raw_body: String,
}

/// What a wire-format module reads from a successful response body.
#[derive(Debug, Clone, PartialEq)]
struct WireReply {
    /// Message text, possibly with `<think>` blocks.
    content: String,
    /// A separate reasoning field, when the server split it off.
    reasoning: Option<String>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
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
    #[error("llm endpoint `{url}` answered http {status}: {}", snippet(body))]
    Http {
        /// The URL requested.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The response body.
        body: String,
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
        "failed to decode the reply of llm endpoint `{url}`: {detail}: {}",
        snippet(body)
    )]
    Decode {
        /// The URL requested.
        url: String,
        /// What is wrong with the body.
        detail: String,
        /// The response body.
        body: String,
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
    /// A provider name that no wire format answers to.
    #[error("unknown llm provider `{name}` (known: openai_chat)")]
    UnknownProvider {
        /// The name given.
        name: String,
    },
}

impl LlmError {
    /// Whether retrying later may succeed: transport failures, timeouts, undecodable bodies and
    /// HTTP 408, 429 and 5xx. Other statuses (401 bad key, 404 unknown model, 400 bad request) and
    /// local configuration errors are fatal.
    pub fn is_transient(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } | LlmError::Timeout { .. } | LlmError::Decode { .. } => {
                true
            }
            LlmError::Http { status, .. } => matches!(status, 408 | 429 | 500..=599),
            LlmError::MissingApiKey { .. }
            | LlmError::Client { .. }
            | LlmError::UnknownProvider { .. } => false,
        }
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

#[cfg(test)]
mod tests;
