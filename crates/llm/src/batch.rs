//! The providers' batch APIs: many requests submitted at once, answered within a day at half the
//! price of the same calls made one by one.
//!
//! Two shapes are spoken, each as its provider documents it:
//!
//! - **OpenAI's Batch API** (for [`Provider::OpenAiChat`] and [`Provider::OpenAiResponses`]): the
//!   requests are written as JSON lines (`custom_id`, `method`, `url`, `body`), uploaded to
//!   `POST {base}/files` with purpose `batch`, and named in `POST {base}/batches` with the
//!   endpoint (`/v1/chat/completions` or `/v1/responses`) and the `24h` window.
//!   `GET {base}/batches/{id}` is polled until the batch is `completed`, `failed`, `expired` or
//!   `cancelled`; then the answers are read from its `output_file_id` and the failures from its
//!   `error_file_id` (`GET {base}/files/{id}/content`), line by line, matched by `custom_id`.
//! - **Anthropic's Message Batches**: `POST {base}/messages/batches` with
//!   `requests: [{custom_id, params}]`, `GET {base}/messages/batches/{id}` polled until its
//!   `processing_status` is `ended`, then the JSON lines at its `results_url`, each a
//!   `result` of type `succeeded` (the message), `errored`, `canceled` or `expired`.
//!
//! Gemini's wire format has no batch API here: [`supports_batch`] says so. Nor has Azure OpenAI
//! (`azure = true`, see [`supports_endpoint`]): its Batch API wants a batch deployment and names
//! the endpoint of its request lines in its own way, which the `openai` SDK's types (the
//! reference of the conformance suite) do not describe, so arena refuses it rather than guess.
//!
//! Every batch request carries the player's extra `headers` ([`Endpoint::headers`]) as an
//! interactive one does, and the key and those values are redacted from every error text.
//!
//! Each request body is the one an interactive call sends ([`Provider`]'s encoder, without a
//! `stream` field), and each answer is read by the same decoder, so a batch answer is the same
//! [`ChatReply`] as an interactive one. Both providers bill batch calls at half their price
//! ([`BATCH_PRICE_FACTOR`]).
//!
//! The file upload is a `multipart/form-data` body written here by hand: it is one text file
//! and two fields, and reqwest's multipart support is a feature arena does not otherwise need.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    ChatReply, ChatRequest, Endpoint, LlmError, PriceTable, Provider, Usage, client,
    split_reasoning,
};

/// What a batch call costs against the same call made interactively: OpenAI's Batch API and
/// Anthropic's Message Batches both bill half of the standard price.
pub const BATCH_PRICE_FACTOR: f64 = 0.5;

/// A call's price at batch rates: the price table's for `model`, halved; `None` when the table
/// has no price for it.
pub fn batch_cost(prices: &PriceTable, usage: &Usage, model: &str) -> Option<f64> {
    prices
        .cost(usage, model)
        .map(|usd| usd * BATCH_PRICE_FACTOR)
}

/// Why a batch could not be submitted, polled or read.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The endpoint's wire format has no batch API.
    #[error(
        "the {provider} wire format has no batch API (batches go to openai_chat, openai_responses and anthropic endpoints)"
    )]
    Unsupported {
        /// The wire format.
        provider: Provider,
    },
    /// An Azure OpenAI endpoint (see the module's doc).
    #[error(
        "Azure OpenAI (`azure = true`) has no batch support in arena: its Batch API needs a batch deployment and its own request-line shape, which arena does not speak; run this player without --batch"
    )]
    Azure,
    /// The request could not be sent or its answer read.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// An answer that does not have the documented shape.
    #[error("unexpected batch answer from `{url}`: {detail}")]
    Shape {
        /// The URL asked.
        url: String,
        /// What is wrong.
        detail: String,
    },
}

/// Whether `provider` can send batches; the error names it when not.
///
/// # Errors
/// [`BatchError::Unsupported`] for Gemini.
pub fn supports_batch(provider: Provider) -> Result<(), BatchError> {
    batch_api(provider).map(|_| ())
}

/// The batch APIs spoken; a wire format names the one its requests go through
/// (`batch_api` of its wire format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchApi {
    /// OpenAI's Batch API: a JSONL file of requests to `path`, uploaded, then a batch over it.
    OpenAi {
        /// The path each line of the file names (`/v1/chat/completions`, `/v1/responses`).
        path: &'static str,
    },
    /// Anthropic's Message Batches API: the requests in one JSON body.
    Anthropic,
}

impl BatchApi {
    /// One line of an ended batch's results (`url`, for errors), read as this API writes them
    /// and the reply in it decoded by `provider`'s format: the request's id and its outcome.
    ///
    /// # Errors
    /// [`BatchError`] when the line is not of this API's shape.
    pub fn read_line(
        self,
        provider: Provider,
        line: &str,
        url: &str,
    ) -> Result<(String, BatchOutcome), BatchError> {
        match self {
            BatchApi::OpenAi { .. } => openai_line(provider, line, url),
            BatchApi::Anthropic => anthropic_line(provider, line, url),
        }
    }
}

fn batch_api(provider: Provider) -> Result<BatchApi, BatchError> {
    provider
        .wire()
        .batch_api()
        .ok_or(BatchError::Unsupported { provider })
}

/// Whether `endpoint` can send batches: its wire format has a batch API and it is not Azure
/// OpenAI; the error names why not.
///
/// # Errors
/// [`BatchError::Unsupported`] for Gemini, [`BatchError::Azure`] for an Azure endpoint.
pub fn supports_endpoint(endpoint: &Endpoint) -> Result<(), BatchError> {
    endpoint_api(endpoint).map(|_| ())
}

/// The batch API `endpoint`'s requests go through, as [`supports_endpoint`] decides.
fn endpoint_api(endpoint: &Endpoint) -> Result<BatchApi, BatchError> {
    let api = batch_api(endpoint.provider)?;
    if endpoint.azure {
        return Err(BatchError::Azure);
    }
    Ok(api)
}

/// One request of a batch.
#[derive(Debug, Clone)]
pub struct BatchRequest {
    /// Its name in the batch (letters, digits, `-` and `_`, at most 64: Anthropic's rule).
    pub custom_id: String,
    /// What to ask.
    pub request: ChatRequest,
}

/// A batch's state when polled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchState {
    /// Still running; the provider's status word.
    Running(String),
    /// Done (completed, failed, expired or cancelled): its results can be read.
    Ended(EndedBatch),
}

/// Where an ended batch's results are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedBatch {
    /// The provider's final status (`completed`, `failed`, `expired`, `cancelled`, `ended`).
    pub status: String,
    /// OpenAI: the file of answers.
    pub output_file_id: Option<String>,
    /// OpenAI: the file of failed requests.
    pub error_file_id: Option<String>,
    /// Anthropic: the results' URL.
    pub results_url: Option<String>,
}

/// What became of one request of an ended batch.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    /// The answer, read as an interactive reply is.
    Answered(Box<ChatReply>),
    /// The provider refused or failed the request (its error as sent).
    Errored(String),
    /// The batch's window closed before the request ran.
    Expired,
    /// The batch was cancelled before the request ran.
    Canceled,
}

/// Submits, polls and reads batches. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct BatchClient {
    http: reqwest::Client,
}

impl BatchClient {
    /// A client of its own (batch requests are few and need no pacing).
    ///
    /// # Errors
    /// [`LlmError::Client`] when the HTTP client cannot be built.
    pub fn new() -> Result<Self, LlmError> {
        // As `LlmClient::new`: reqwest needs a TLS provider installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(|e| LlmError::Client {
                detail: e.to_string(),
            })?;
        Ok(Self { http })
    }

    /// Submits `requests` as one batch to `endpoint` and returns the provider's batch id.
    ///
    /// # Errors
    /// [`BatchError::Unsupported`], a failed request or an answer of the wrong shape.
    pub async fn submit(
        &self,
        endpoint: &Endpoint,
        requests: &[BatchRequest],
    ) -> Result<String, BatchError> {
        let api = endpoint_api(endpoint)?;
        let key = client::api_key(endpoint)?;
        let base = endpoint.base_url.trim_end_matches('/');
        match api {
            BatchApi::Anthropic => {
                let body = json!({
                    "requests": requests.iter().map(|r| json!({
                        "custom_id": r.custom_id,
                        "params": batch_body(endpoint.provider, &r.request),
                    })).collect::<Vec<_>>(),
                });
                let url = format!("{base}/messages/batches");
                let answer = self
                    .send(
                        endpoint,
                        key.as_deref(),
                        self.http.post(&url).json(&body),
                        &url,
                    )
                    .await?;
                string_field(&answer, "id", &url)
            }
            BatchApi::OpenAi { path } => {
                let mut jsonl = String::new();
                for r in requests {
                    let line = json!({
                        "custom_id": r.custom_id,
                        "method": "POST",
                        "url": path,
                        "body": batch_body(endpoint.provider, &r.request),
                    });
                    jsonl.push_str(&line.to_string());
                    jsonl.push('\n');
                }
                let url = format!("{base}/files");
                let (content_type, form) = multipart_file("batch", "arena-batch.jsonl", &jsonl);
                let upload = self
                    .http
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, content_type)
                    .body(form);
                let file = self.send(endpoint, key.as_deref(), upload, &url).await?;
                let file_id = string_field(&file, "id", &url)?;
                let url = format!("{base}/batches");
                let create = self.http.post(&url).json(&json!({
                    "input_file_id": file_id,
                    "endpoint": path,
                    "completion_window": "24h",
                }));
                let batch = self.send(endpoint, key.as_deref(), create, &url).await?;
                string_field(&batch, "id", &url)
            }
        }
    }

    /// The batch's state now.
    ///
    /// # Errors
    /// A failed request or an answer of the wrong shape.
    pub async fn poll(
        &self,
        endpoint: &Endpoint,
        batch_id: &str,
    ) -> Result<BatchState, BatchError> {
        let api = endpoint_api(endpoint)?;
        let key = client::api_key(endpoint)?;
        let base = endpoint.base_url.trim_end_matches('/');
        let text = |v: &Value, name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
        match api {
            BatchApi::Anthropic => {
                let url = format!("{base}/messages/batches/{batch_id}");
                let batch = self
                    .send(endpoint, key.as_deref(), self.http.get(&url), &url)
                    .await?;
                let status = string_field(&batch, "processing_status", &url)?;
                Ok(if status == "ended" {
                    BatchState::Ended(EndedBatch {
                        status,
                        output_file_id: None,
                        error_file_id: None,
                        results_url: text(&batch, "results_url"),
                    })
                } else {
                    BatchState::Running(status)
                })
            }
            BatchApi::OpenAi { .. } => {
                let url = format!("{base}/batches/{batch_id}");
                let batch = self
                    .send(endpoint, key.as_deref(), self.http.get(&url), &url)
                    .await?;
                let status = string_field(&batch, "status", &url)?;
                Ok(
                    if matches!(
                        status.as_str(),
                        "completed" | "failed" | "expired" | "cancelled"
                    ) {
                        BatchState::Ended(EndedBatch {
                            status,
                            output_file_id: text(&batch, "output_file_id"),
                            error_file_id: text(&batch, "error_file_id"),
                            results_url: None,
                        })
                    } else {
                        BatchState::Running(status)
                    },
                )
            }
        }
    }

    /// Polls every `interval` until the batch has ended; `on_poll` sees each running status.
    ///
    /// # Errors
    /// As [`BatchClient::poll`].
    pub async fn wait(
        &self,
        endpoint: &Endpoint,
        batch_id: &str,
        interval: Duration,
        mut on_poll: impl FnMut(&str),
    ) -> Result<EndedBatch, BatchError> {
        loop {
            match self.poll(endpoint, batch_id).await? {
                BatchState::Ended(ended) => return Ok(ended),
                BatchState::Running(status) => on_poll(&status),
            }
            tokio::time::sleep(interval).await;
        }
    }

    /// The outcome of every request of an ended batch, by `custom_id`, in the order the
    /// provider lists them. A request the results do not mention is left out (the caller
    /// treats it as not answered).
    ///
    /// # Errors
    /// A failed request or a results line of the wrong shape.
    pub async fn results(
        &self,
        endpoint: &Endpoint,
        ended: &EndedBatch,
    ) -> Result<Vec<(String, BatchOutcome)>, BatchError> {
        let api = endpoint_api(endpoint)?;
        let key = client::api_key(endpoint)?;
        let base = endpoint.base_url.trim_end_matches('/');
        let mut outcomes = Vec::new();
        match api {
            BatchApi::Anthropic => {
                let Some(url) = &ended.results_url else {
                    return Ok(outcomes);
                };
                let text = self
                    .send_text(endpoint, key.as_deref(), self.http.get(url), url)
                    .await?;
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    outcomes.push(api.read_line(endpoint.provider, line, url)?);
                }
            }
            BatchApi::OpenAi { .. } => {
                for file in [&ended.output_file_id, &ended.error_file_id]
                    .into_iter()
                    .flatten()
                {
                    let url = format!("{base}/files/{file}/content");
                    let text = self
                        .send_text(endpoint, key.as_deref(), self.http.get(&url), &url)
                        .await?;
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        outcomes.push(api.read_line(endpoint.provider, line, &url)?);
                    }
                }
            }
        }
        Ok(outcomes)
    }

    /// Sends one request of the batch protocol and reads its JSON answer.
    async fn send(
        &self,
        endpoint: &Endpoint,
        key: Option<&str>,
        request: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<Value, BatchError> {
        let text = self.send_text(endpoint, key, request, url).await?;
        serde_json::from_str(&text).map_err(|e| BatchError::Shape {
            url: url.to_owned(),
            detail: format!("not JSON: {e}"),
        })
    }

    /// Sends one request of the batch protocol and reads its body as text.
    async fn send_text(
        &self,
        endpoint: &Endpoint,
        key: Option<&str>,
        request: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<String, BatchError> {
        // The player's extra headers, read now and never kept, as an interactive call sends them.
        let values = endpoint.header_values()?;
        let secrets = client::Secrets {
            key,
            headers: &values,
        };
        let response = endpoint
            .authorize(request, key, &values)
            .send()
            .await
            .map_err(|e| LlmError::Unreachable {
                url: url.to_owned(),
                detail: client::redact(e.without_url().to_string(), secrets),
                attempts: 1,
            })?;
        let status = response.status().as_u16();
        let should_retry = client::should_retry(response.headers());
        let body = response.text().await.map_err(|e| LlmError::Unreachable {
            url: url.to_owned(),
            detail: client::redact(e.without_url().to_string(), secrets),
            attempts: 1,
        })?;
        if !(200..300).contains(&status) {
            let (error, _) = client::http_error(
                endpoint.provider,
                url.to_owned(),
                status,
                client::redact(body, secrets),
                should_retry,
            );
            return Err(error.into());
        }
        Ok(body)
    }
}

/// The request body as an interactive call sends it, less what a batch refuses (streaming).
pub fn batch_body(provider: Provider, request: &ChatRequest) -> Value {
    let mut body = provider.encode(request);
    if let Value::Object(map) = &mut body {
        map.remove("stream");
        map.remove("stream_options");
    }
    body
}

fn string_field(value: &Value, name: &str, url: &str) -> Result<String, BatchError> {
    value
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| BatchError::Shape {
            url: url.to_owned(),
            detail: format!("no `{name}` in {}", super::snippet(&value.to_string())),
        })
}

/// A successful answer body read as an interactive reply is.
fn reply_of(provider: Provider, body: &Value) -> Result<ChatReply, String> {
    let raw = body.to_string();
    let wire = provider.decode(&raw)?;
    let (content, think) = split_reasoning(&wire.content);
    let reasoning = match (wire.reasoning, think) {
        (Some(field), Some(think)) => Some(format!("{field}\n\n{think}")),
        (field, think) => field.or(think),
    };
    Ok(ChatReply {
        content,
        reasoning,
        usage: wire.usage,
        provider_cost: wire.cost,
        finish_reason: wire.finish_reason,
        http_status: 200,
        latency_ms: 0,
        transport_retries: 0,
        raw_body: raw,
        tool_calls: wire.tool_calls,
    })
}

/// One line of an OpenAI output or error file.
fn openai_line(
    provider: Provider,
    line: &str,
    url: &str,
) -> Result<(String, BatchOutcome), BatchError> {
    #[derive(Deserialize)]
    struct Line {
        custom_id: String,
        response: Option<Response>,
        error: Option<Value>,
    }
    #[derive(Deserialize)]
    struct Response {
        status_code: u16,
        body: Value,
    }
    let parsed: Line = serde_json::from_str(line).map_err(|e| BatchError::Shape {
        url: url.to_owned(),
        detail: format!(
            "a results line does not read ({e}): {}",
            super::snippet(line)
        ),
    })?;
    let outcome = match (parsed.response, parsed.error) {
        (Some(r), None) if (200..300).contains(&r.status_code) => {
            match reply_of(provider, &r.body) {
                Ok(reply) => BatchOutcome::Answered(Box::new(reply)),
                Err(detail) => {
                    BatchOutcome::Errored(format!("the answer does not decode: {detail}"))
                }
            }
        }
        (_, Some(error)) if !error.is_null() => {
            let code = error.get("code").and_then(Value::as_str).unwrap_or("");
            if code == "batch_expired" {
                BatchOutcome::Expired
            } else if code == "batch_cancelled" {
                BatchOutcome::Canceled
            } else {
                BatchOutcome::Errored(error.to_string())
            }
        }
        (Some(r), _) => BatchOutcome::Errored(format!("http {}: {}", r.status_code, r.body)),
        (None, _) => BatchOutcome::Errored("neither response nor error".to_owned()),
    };
    Ok((parsed.custom_id, outcome))
}

/// One line of Anthropic's results.
fn anthropic_line(
    provider: Provider,
    line: &str,
    url: &str,
) -> Result<(String, BatchOutcome), BatchError> {
    #[derive(Deserialize)]
    struct Line {
        custom_id: String,
        result: Value,
    }
    let parsed: Line = serde_json::from_str(line).map_err(|e| BatchError::Shape {
        url: url.to_owned(),
        detail: format!(
            "a results line does not read ({e}): {}",
            super::snippet(line)
        ),
    })?;
    let kind = parsed.result.get("type").and_then(Value::as_str);
    let outcome = match kind {
        Some("succeeded") => match parsed
            .result
            .get("message")
            .ok_or_else(|| "no message".to_owned())
            .and_then(|m| reply_of(provider, m))
        {
            Ok(reply) => BatchOutcome::Answered(Box::new(reply)),
            Err(detail) => BatchOutcome::Errored(format!("the answer does not decode: {detail}")),
        },
        Some("errored") => BatchOutcome::Errored(
            parsed
                .result
                .get("error")
                .map_or_else(|| "errored".to_owned(), Value::to_string),
        ),
        Some("expired") => BatchOutcome::Expired,
        Some("canceled") => BatchOutcome::Canceled,
        _ => {
            return Err(BatchError::Shape {
                url: url.to_owned(),
                detail: format!("unknown result type in {}", super::snippet(line)),
            });
        }
    };
    Ok((parsed.custom_id, outcome))
}

/// A `multipart/form-data` body with a `purpose` field and one file: its content type (with
/// the boundary) and bytes.
fn multipart_file(purpose: &str, file_name: &str, content: &str) -> (String, Vec<u8>) {
    // JSON lines hold no carriage return (JSON escapes it), so no `\r\n--` in the content
    // can be taken for a boundary.
    let boundary = "arena-batch-boundary-7f3a9c";
    let mut body = String::new();
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\n{purpose}\r\n"
    ));
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/jsonl\r\n\r\n"
    ));
    body.push_str(content);
    body.push_str(&format!("\r\n--{boundary}--\r\n"));
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}
