//! The shared HTTP client: per-endpoint pacing (see `pacing.rs`), API keys read at request time,
//! and the retry loop around one attempt.

use std::{
    collections::HashMap,
    error::Error as _,
    fmt,
    ops::ControlFlow,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant, SystemTime},
};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tracing::warn;

use super::{
    ChatReply, ChatRequest, Endpoint, LlmError, PartialReply, Provider, ReportedUsage, WireReply,
    error_body,
    pacing::{self, EndpointLoad, Pacer, Slot},
    retry_delay, split_reasoning,
    stream::{self, StreamRead, StreamStop},
};

/// A client for every LLM endpoint: one HTTP connection pool and one concurrency limit per base URL.
/// Cloning is cheap and clones share both.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// Keyed by `Endpoint::base_url` and a digest of the API key, so that every player on one
    /// server and key shares its limits.
    pacers: Mutex<HashMap<PacerKey, Arc<Pacer>>>,
    /// Each chat URL parsed once: parsing it for every request was 1 % of arena's instructions
    /// per LLM ply. A handful of entries (one per endpoint, per model for Gemini).
    urls: Mutex<HashMap<String, reqwest::Url>>,
}

/// A base URL and a digest of the API key used on it (none for keyless servers).
type PacerKey = (String, Option<u64>);

/// One failed attempt, the delay the server asked for, if any, and what came back, if anything.
struct Failure {
    error: LlmError,
    retry_after: Option<Duration>,
    answer: Option<Answer>,
}

/// The HTTP answer of a failed attempt (its body is in the error).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    latency_ms: u64,
}

/// What a streamed attempt has received so far. It outlives the attempt's future, so that when a
/// chess clock stops the attempt, the reply so far can still be shown and stored.
#[derive(Default)]
struct Received {
    answer: Option<StreamHead>,
    stream: Option<StreamRead>,
}

/// A streamed answer's status and headers, and when its request was sent.
type StreamHead = (u16, Vec<(String, String)>, Instant);

/// The reply so far of a stream that was stopped, as the store keeps a failed attempt.
struct Partial {
    status: u16,
    headers: Vec<(String, String)>,
    latency_ms: u64,
    body: String,
    reported: ReportedUsage,
}

impl Received {
    /// The reply so far, when a stream had begun.
    fn partial(&self, provider: Provider, key: Secrets<'_>) -> Option<Partial> {
        let ((status, headers, started), read) = (self.answer.as_ref()?, self.stream.as_ref()?);
        Some(Partial {
            status: *status,
            headers: headers.clone(),
            latency_ms: elapsed_ms(*started),
            body: redact(String::from_utf8_lossy(read.raw()).into_owned(), key),
            reported: provider.reported_usage(&read.assembly().body().to_string()),
        })
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Self {
            error,
            retry_after: None,
            answer: None,
        }
    }
}

/// An attempt that got an HTTP answer but no usable reply: an error status, or a success whose
/// body does not decode. [`LlmClient::chat_observed`] shows each one before it is retried, so that
/// the caller can store it (the provider may have billed it).
#[derive(Debug)]
pub struct FailedAttempt<'a> {
    /// The attempt, from 1.
    pub attempt: u32,
    /// The HTTP status received.
    pub http_status: u16,
    /// The response headers that matter (see [`headers_that_matter`]), names in lower case.
    pub headers: &'a [(String, String)],
    /// The response body as received (API key redacted).
    pub body: &'a str,
    /// What is wrong with it.
    pub error: &'a LlmError,
    /// Duration of the attempt in milliseconds.
    pub latency_ms: u64,
    /// The usage and cost the body reports despite the failure (a provider that bills a reply
    /// arena cannot use may still say so); empty when it reports none.
    pub reported: ReportedUsage,
}

/// Response headers worth keeping with a failed attempt: what the body is, who answered (request
/// ids quoted in support requests), and the rate-limit state. A whitelist, so that nothing else a
/// server sends (cookies) reaches the store.
pub fn headers_that_matter(headers: &reqwest::header::HeaderMap) -> Vec<(String, String)> {
    const NAMES: &[&str] = &[
        "content-type",
        "content-length",
        "content-encoding",
        "date",
        "server",
        "via",
        "retry-after",
        "x-should-retry",
        "x-request-id",
        "request-id",
        "cf-ray",
        "openai-processing-ms",
        "openai-version",
        "x-goog-request-id",
    ];
    const PREFIXES: &[&str] = &["x-ratelimit-", "anthropic-ratelimit-"];
    let mut kept: Vec<(String, String)> = headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
        })
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    kept.sort();
    kept
}

impl LlmClient {
    /// Builds the shared HTTP client.
    ///
    /// reqwest is compiled without a default TLS crypto provider and panics when none is installed,
    /// so this installs rustls's `ring` provider unless the process already installed one.
    ///
    /// # Errors
    /// [`LlmError::Client`] when the HTTP client cannot be built.
    pub fn new() -> Result<Self, LlmError> {
        // An error here only means a provider is already installed, which is what we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| LlmError::Client {
                detail: error_chain(&e),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                pacers: Mutex::new(HashMap::new()),
                urls: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// Sends `req` to `endpoint`, each attempt paced to the endpoint's limits first (a turn among
    /// the players on its URL and key, a concurrency slot, the rate: see `pacing.rs`), and
    /// retries transient failures as `endpoint.retry` allows. An overloaded or rate-limited server
    /// sees no more than the concurrency window's requests, retries included.
    ///
    /// # Errors
    /// [`LlmError::MissingApiKey`] before any request when the key variable is unset; a fatal
    /// [`LlmError::Http`] (401, 404, ...) at once; the last transient error once the retry policy
    /// gives up; [`LlmError::Client`] when the request cannot be built (bad base URL or key).
    pub async fn chat(
        &self,
        endpoint: &Endpoint,
        req: &ChatRequest,
    ) -> Result<ChatReply, LlmError> {
        self.chat_observed(endpoint, req, |_| ControlFlow::Continue(()))
            .await
    }

    /// As [`LlmClient::chat`], showing `on_failure` every attempt that got an HTTP answer but no
    /// usable reply, before that attempt is retried or its error returned. `on_failure` returning
    /// [`ControlFlow::Break`] stops there: the attempt's error is returned without a retry (for a
    /// caller that cannot keep what it was shown).
    ///
    /// An undecodable success body is retried at most `endpoint.retry.decode_retries` times,
    /// whatever else the policy allows: such a server tends to answer the same again.
    ///
    /// # Errors
    /// As [`LlmClient::chat`].
    pub async fn chat_observed(
        &self,
        endpoint: &Endpoint,
        req: &ChatRequest,
        on_failure: impl FnMut(&FailedAttempt<'_>) -> ControlFlow<()> + Send,
    ) -> Result<ChatReply, LlmError> {
        self.chat_within(endpoint, req, None, on_failure).await
    }

    /// As [`LlmClient::chat_observed`], with each attempt given at most `clock` (a player's chess
    /// clock: the time it has left for this call). An attempt that fails before that (an error
    /// status, a transport failure, the endpoint's own timeout) is retried as usual and, like the
    /// waits between attempts, costs the clock nothing; an attempt still unanswered when `clock`
    /// has passed ends the call with [`LlmError::OutOfTime`], never retried. A streamed attempt
    /// stopped so is shown to `on_failure` first, with the events received until then.
    ///
    /// # Errors
    /// As [`LlmClient::chat`], and [`LlmError::OutOfTime`].
    pub async fn chat_within(
        &self,
        endpoint: &Endpoint,
        req: &ChatRequest,
        clock: Option<Duration>,
        mut on_failure: impl FnMut(&FailedAttempt<'_>) -> ControlFlow<()> + Send,
    ) -> Result<ChatReply, LlmError> {
        let key = api_key(endpoint)?;
        let headers = endpoint.header_values()?;
        let secrets = Secrets {
            key: key.as_deref(),
            headers: &headers,
        };
        let url = endpoint.chat_url(&req.model);
        let mut body = endpoint.provider.encode(req);
        let url = if endpoint.stream {
            stream::streaming_request(endpoint.provider, url, &mut body)
        } else {
            url
        };
        let pacer = self.pacer(endpoint, key.as_deref());
        let estimate = pacing::estimate_tokens(req);
        let mut started = None;
        let mut attempt = 0;
        let mut decode_failures = 0;
        loop {
            attempt += 1;
            // Each attempt waits its turn: a retry is a request like any other to the provider's
            // limits, and the waits (like those between attempts) cost the clock nothing.
            let slot = pacer
                .acquire(&endpoint.lane, estimate, endpoint.paced)
                .await;
            let started = *started.get_or_insert_with(Instant::now);
            let mut received = Received::default();
            let attempted = self.attempt_chat(
                endpoint,
                &url,
                &body,
                secrets,
                attempt,
                &slot,
                &mut received,
            );
            let attempted = match clock {
                Some(after) => match tokio::time::timeout(after, attempted).await {
                    Ok(attempted) => attempted,
                    Err(_) => {
                        let error = LlmError::OutOfTime {
                            url: url.clone(),
                            after,
                        };
                        // A stream stopped midway is stored with what it had said: the call
                        // ends here either way, so whatever `on_failure` answers changes nothing.
                        if let Some(partial) = received.partial(endpoint.provider, secrets) {
                            let _ = on_failure(&FailedAttempt {
                                attempt,
                                http_status: partial.status,
                                headers: &partial.headers,
                                body: &partial.body,
                                error: &error,
                                latency_ms: partial.latency_ms,
                                reported: partial.reported,
                            });
                        }
                        return Err(error);
                    }
                },
                None => attempted.await,
            };
            drop(slot);
            let failure = match attempted {
                Ok(mut reply) => {
                    reply.transport_retries = attempt - 1;
                    return Ok(reply);
                }
                Err(failure) => failure,
            };
            if let Some(answer) = &failure.answer {
                let body = failure.error.body().unwrap_or_default();
                // A cut stream's usage is in the reply its events add up to, not in its events.
                let reported = match &failure.error {
                    LlmError::StreamCut { partial, .. } => {
                        endpoint.provider.reported_usage(&partial.assembled)
                    }
                    _ => endpoint.provider.reported_usage(body),
                };
                let shown = FailedAttempt {
                    attempt,
                    http_status: answer.status,
                    headers: &answer.headers,
                    body,
                    error: &failure.error,
                    latency_ms: answer.latency_ms,
                    reported,
                };
                if on_failure(&shown).is_break() {
                    return Err(failure.error);
                }
            }
            if !failure.error.is_transient() {
                return Err(failure.error);
            }
            if matches!(failure.error, LlmError::Decode { .. }) {
                decode_failures += 1;
                if decode_failures > endpoint.retry.decode_retries {
                    return Err(failure.error);
                }
            }
            let Some(delay) =
                endpoint
                    .retry
                    .next_delay(attempt, started.elapsed(), failure.retry_after)
            else {
                return Err(failure.error);
            };
            warn!(endpoint = %endpoint.base_url,
                attempt,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                error = %failure.error,
                "llm request failed, retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// Checks once, without retries, that `endpoint` answers its provider's model listing
    /// (`GET {base}/models`, with the provider's key header) with a success status: a fail-fast
    /// check of address and key before a tournament starts.
    ///
    /// # Errors
    /// [`LlmError::MissingApiKey`], [`LlmError::Unreachable`], [`LlmError::Timeout`] or
    /// [`LlmError::Http`] (e.g. 401 for a bad key).
    pub async fn probe(&self, endpoint: &Endpoint) -> Result<(), LlmError> {
        let key = api_key(endpoint)?;
        let headers = endpoint.header_values()?;
        let secrets = Secrets {
            key: key.as_deref(),
            headers: &headers,
        };
        let url = endpoint.models_url();
        let request = self.inner.http.get(&url).timeout(endpoint.timeout);
        let request = endpoint.authorize(request, key.as_deref(), &headers);
        let response = request
            .send()
            .await
            .map_err(|e| transport_error(e, &url, endpoint.timeout, 1, secrets))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        // Bounded as every body is: a refusal's message is in its first bytes.
        let body = match read_limited(response, MAX_RESPONSE_BYTES).await {
            Ok(Limited::Whole(bytes) | Limited::Over(bytes)) => {
                String::from_utf8_lossy(&bytes).into_owned()
            }
            Err(_) => String::new(),
        };
        let body = redact(body, secrets);
        Err(http_error(endpoint.provider, url, status.as_u16(), body, None).0)
    }

    /// The pacer of the endpoint's base URL and key, made by the first endpoint seen with them.
    fn pacer(&self, endpoint: &Endpoint, key: Option<&str>) -> Arc<Pacer> {
        // The key is known only by a digest of it, so that it is held nowhere else.
        let digest = key.map(|key| {
            let hash = Sha256::digest(key.as_bytes());
            u64::from_be_bytes(hash[..8].try_into().expect("a SHA-256 has 8 bytes"))
        });
        let mut pacers = self
            .inner
            .pacers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(
            pacers
                .entry((endpoint.base_url.clone(), digest))
                .or_insert_with(|| {
                    let host = super::host_of(&endpoint.base_url);
                    let label = match &endpoint.api_key_env {
                        Some(env) => format!("{host} ({env})"),
                        None => host,
                    };
                    Arc::new(Pacer::new(label, endpoint.max_concurrency, endpoint.rate))
                }),
        )
    }

    /// What each endpoint and key is doing now (requests in flight, limits learned, 429s so
    /// far), in the order of their labels, for the progress line.
    pub fn load(&self) -> Vec<EndpointLoad> {
        let pacers: Vec<Arc<Pacer>> = self
            .inner
            .pacers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let mut loads: Vec<EndpointLoad> = pacers.iter().map(|p| p.load()).collect();
        loads.sort_by(|a, b| a.endpoint.cmp(&b.endpoint));
        loads
    }

    /// `url` parsed, from the cache when it was parsed before; `None` when it does not parse.
    fn parsed_url(&self, url: &str) -> Option<reqwest::Url> {
        let mut urls = self
            .inner
            .urls
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(parsed) = urls.get(url) {
            return Some(parsed.clone());
        }
        let parsed = reqwest::Url::parse(url).ok()?;
        urls.insert(url.to_owned(), parsed.clone());
        Some(parsed)
    }

    /// One HTTP request and the decoding of its reply; a streamed reply is read into `received`.
    #[allow(clippy::too_many_arguments)]
    async fn attempt_chat(
        &self,
        endpoint: &Endpoint,
        url: &str,
        body: &Value,
        key: Secrets<'_>,
        attempt: u32,
        slot: &Slot<'_>,
        received: &mut Received,
    ) -> Result<ChatReply, Failure> {
        let request = match self.parsed_url(url) {
            Some(parsed) => self.inner.http.post(parsed),
            // reqwest's own parse fails again and reports it as usual.
            None => self.inner.http.post(url),
        };
        let request = request.timeout(endpoint.timeout).json(body);
        let request = endpoint.authorize(request, key.key, key.headers);
        let start = Instant::now();
        let response = request
            .send()
            .await
            .map_err(|e| transport_error(e, url, endpoint.timeout, attempt, key))?;
        let status = response.status();
        slot.answered(status.as_u16(), response.headers());
        let should_retry = should_retry(response.headers());
        // A retry waits only on a failure's headers; a success's describe the next call (which
        // the pacer has just learned from).
        let header_delay = if status.is_success() {
            None
        } else {
            retry_delay(response.headers(), SystemTime::now())
        };
        let headers: Vec<(String, String)> = headers_that_matter(response.headers())
            .into_iter()
            .map(|(name, value)| (name, redact(value, key)))
            .collect();
        if endpoint.stream && status.is_success() && is_event_stream(response.headers()) {
            received.answer = Some((status.as_u16(), headers.clone(), start));
            let read = received.stream.insert(StreamRead::new(endpoint.provider));
            let mut response = response;
            let stopped = read
                .read(
                    &mut response,
                    endpoint.stream_idle_timeout,
                    MAX_RESPONSE_BYTES,
                )
                .await;
            let answer = Answer {
                status: status.as_u16(),
                headers,
                latency_ms: elapsed_ms(start),
            };
            return streamed_reply(endpoint, url, key, attempt, slot, answer, read, stopped);
        }
        let body = read_limited(response, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| transport_error(e, url, endpoint.timeout, attempt, key))?;
        let latency_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let answer = Answer {
            status: status.as_u16(),
            headers,
            latency_ms,
        };
        let text = match body {
            Limited::Whole(bytes) => redact(String::from_utf8_lossy(&bytes).into_owned(), key),
            Limited::Over(head) => {
                return Err(Failure {
                    error: LlmError::Decode {
                        url: url.to_owned(),
                        detail: format!(
                            "the response body is over the limit of {} MiB; refused unread",
                            MAX_RESPONSE_BYTES >> 20
                        ),
                        body: redact(String::from_utf8_lossy(&head).into_owned(), key),
                        attempts: attempt,
                    },
                    retry_after: None,
                    answer: Some(answer),
                });
            }
        };
        if !status.is_success() {
            let (error, body_delay) = http_error(
                endpoint.provider,
                url.to_owned(),
                status.as_u16(),
                text,
                should_retry,
            );
            return Err(Failure {
                error,
                retry_after: header_delay.or(body_delay),
                answer: Some(answer),
            });
        }
        let wire = match endpoint.provider.decode(&text) {
            Ok(wire) => wire,
            Err(detail) => {
                return Err(Failure {
                    error: LlmError::Decode {
                        url: url.to_owned(),
                        detail,
                        body: text,
                        attempts: attempt,
                    },
                    retry_after: None,
                    answer: Some(answer),
                });
            }
        };
        Ok(reply_from_wire(
            wire,
            slot,
            status.as_u16(),
            latency_ms,
            text,
        ))
    }
}

/// The reply of a streamed attempt whose reading ended (`stopped` says why, when early).
// Its result is `attempt_chat`'s, returned once per HTTP attempt: boxing gains nothing.
#[allow(clippy::too_many_arguments, clippy::result_large_err)]
fn streamed_reply(
    endpoint: &Endpoint,
    url: &str,
    key: Secrets<'_>,
    attempt: u32,
    slot: &Slot<'_>,
    answer: Answer,
    read: &StreamRead,
    stopped: Result<(), StreamStop>,
) -> Result<ChatReply, Failure> {
    let text = redact(String::from_utf8_lossy(read.raw()).into_owned(), key);
    let assembled = read.assembly().body().to_string();
    let failure = |error| Failure {
        error,
        retry_after: None,
        answer: Some(Answer {
            headers: answer.headers.clone(),
            ..answer
        }),
    };
    let detail = match stopped {
        Ok(()) => None,
        Err(StreamStop::Over) => {
            let mut head = read.raw().to_vec();
            head.truncate(REFUSED_HEAD_BYTES);
            return Err(failure(LlmError::Decode {
                url: url.to_owned(),
                detail: format!(
                    "the streamed response grew over the limit of {} MiB; refused",
                    MAX_RESPONSE_BYTES >> 20
                ),
                body: redact(String::from_utf8_lossy(&head).into_owned(), key),
                attempts: attempt,
            }));
        }
        Err(StreamStop::Cut(detail) | StreamStop::Provider(detail)) => Some(detail),
        Err(StreamStop::Transport(e)) => Some(redact(error_chain(&e.without_url()), key)),
    };
    let wire = endpoint.provider.decode(&assembled);
    if let Some(detail) = detail {
        let (partial_text, partial_reasoning) = match &wire {
            Ok(wire) => answer_and_reasoning(wire),
            Err(_) => (String::new(), None),
        };
        return Err(failure(LlmError::StreamCut {
            url: url.to_owned(),
            detail,
            events: read.assembly().events(),
            attempts: attempt,
            partial: Box::new(PartialReply {
                body: text,
                assembled,
                text: partial_text,
                reasoning: partial_reasoning,
            }),
        }));
    }
    let wire = match wire {
        Ok(wire) => wire,
        Err(detail) => {
            return Err(failure(LlmError::Decode {
                url: url.to_owned(),
                detail: format!("the streamed events add up to no reply: {detail}"),
                body: text,
                attempts: attempt,
            }));
        }
    };
    Ok(reply_from_wire(
        wire,
        slot,
        answer.status,
        answer.latency_ms,
        text,
    ))
}

/// The reply a decoded body makes, its tokens counted on the endpoint's slot. Streamed and
/// non-streamed attempts both end here, so that a streamed reply is the same as its non-streamed
/// twin by construction (only `raw_body` differs: the events, not the body they add up to).
fn reply_from_wire(
    wire: WireReply,
    slot: &Slot<'_>,
    http_status: u16,
    latency_ms: u64,
    raw_body: String,
) -> ChatReply {
    if let Some(usage) = &wire.usage {
        slot.used(usage.total_tokens);
    }
    let (content, reasoning) = answer_and_reasoning(&wire);
    ChatReply {
        content,
        reasoning,
        usage: wire.usage,
        provider_cost: wire.cost,
        finish_reason: wire.finish_reason,
        http_status,
        latency_ms,
        transport_retries: 0,
        raw_body,
        tool_calls: wire.tool_calls,
    }
}

/// The answer with `<think>` blocks split off, and the reasoning: the wire format's reasoning
/// field, then the `<think>` blocks.
fn answer_and_reasoning(wire: &WireReply) -> (String, Option<String>) {
    let (content, think) = split_reasoning(&wire.content);
    let reasoning = match (wire.reasoning.clone(), think) {
        (Some(field), Some(think)) => Some(format!("{field}\n\n{think}")),
        (field, think) => field.or(think),
    };
    (content, reasoning)
}

/// Whether a response is a server-sent-event stream (a server may answer a streaming request
/// with a plain body, which is then read as usual).
fn is_event_stream(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoints: Vec<String> = self.load().into_iter().map(|l| l.endpoint).collect();
        f.debug_struct("LlmClient")
            .field("endpoints", &endpoints)
            .finish_non_exhaustive()
    }
}

/// The largest response body read, 8 MiB: far above any chat reply (a reply of 32,000 tokens of
/// reasoning is about 130 KB), small enough that a broken or hostile server cannot fill the
/// memory. A larger body is refused as a decode failure (retried like one), keeping its head.
pub const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// How much of a refused body is kept for the record.
const REFUSED_HEAD_BYTES: usize = 64 << 10;

/// A response body read up to a limit.
enum Limited {
    /// The whole body.
    Whole(Vec<u8>),
    /// The body was over the limit: its first bytes.
    Over(Vec<u8>),
}

/// Reads a body chunk by chunk, stopping as soon as it is over `limit` bytes (or says it will be).
async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Limited, reqwest::Error> {
    let declared = response.content_length().unwrap_or(0);
    if usize::try_from(declared).map_or(true, |n| n > limit) {
        return Ok(Limited::Over(Vec::new()));
    }
    let mut body = Vec::with_capacity(usize::try_from(declared).unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            body.truncate(REFUSED_HEAD_BYTES);
            return Ok(Limited::Over(body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Limited::Whole(body))
}

/// The server's `x-should-retry` header read as the SDKs read it: `true` or `false`, anything
/// else as not sent.
pub(super) fn should_retry(headers: &reqwest::header::HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()? {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The error for a non-success status, with the provider's message read from the body, and the
/// wait the body asks for (Gemini puts it there).
pub(super) fn http_error(
    provider: Provider,
    url: String,
    status: u16,
    body: String,
    should_retry: Option<bool>,
) -> (LlmError, Option<Duration>) {
    let parsed = error_body::parse(&body);
    let error = LlmError::Http {
        url,
        status,
        kind: parsed.kind,
        message: parsed.message,
        rejection: provider.rejection(status, &body),
        body,
        should_retry,
    };
    (error, parsed.retry_delay)
}

/// Reads the endpoint's API key from its environment variable, trimmed (a key pasted with a
/// trailing newline would otherwise be an invalid header).
pub(super) fn api_key(endpoint: &Endpoint) -> Result<Option<String>, LlmError> {
    let Some(env) = &endpoint.api_key_env else {
        return Ok(None);
    };
    match std::env::var(env) {
        Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
        _ => Err(LlmError::MissingApiKey { env: env.clone() }),
    }
}

/// Classifies a reqwest error from sending a request or reading its body.
fn transport_error(
    error: reqwest::Error,
    url: &str,
    timeout: Duration,
    attempts: u32,
    key: Secrets<'_>,
) -> LlmError {
    let url = url.to_owned();
    if error.is_timeout() {
        return LlmError::Timeout {
            url,
            timeout,
            attempts,
        };
    }
    let is_builder = error.is_builder();
    let detail = redact(error_chain(&error.without_url()), key);
    if is_builder {
        // A request that cannot be built never will be: retrying is pointless.
        return LlmError::Client { detail };
    }
    LlmError::Unreachable {
        url,
        detail,
        attempts,
    }
}

/// An error and its causes, `outer: inner: innermost`, since reqwest's own message hides the cause
/// ("connection refused") in its sources.
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// What a request carries that must not reach errors, logs or the store: the API key and the
/// values of the endpoint's extra headers (often a gateway's credential).
#[derive(Debug, Clone, Copy)]
pub(super) struct Secrets<'a> {
    pub(super) key: Option<&'a str>,
    pub(super) headers: &'a [(String, String)],
}

/// Removes the API key and the extra headers' values from text that reaches errors, logs or
/// the store, in case a server echoes them.
pub(super) fn redact(text: String, secrets: Secrets<'_>) -> String {
    let values = secrets
        .key
        .into_iter()
        .chain(secrets.headers.iter().map(|(_, value)| value.as_str()));
    values.fold(text, |text, value| {
        if !value.is_empty() && text.contains(value) {
            text.replace(value, "[redacted]")
        } else {
            text
        }
    })
}
