//! The one path every model request takes, from game plies and evaluation items alike: a reply
//! already in the store is replayed (never asked, never paid for twice); otherwise the request is
//! sent and its reply written to the store before the caller can read it.
//!
//! A game that replays a void one (an engine crashed or hung) restarts from its opening; where its
//! path is the same as an earlier attempt's, it sends the byte-identical request at the same ply,
//! and that attempt's reply is reused (copied into the replay, marked `reused_from`) instead of
//! being asked again.
//!
//! An attempt that got an HTTP answer but no usable reply (an error status, or a success whose
//! body does not decode) is stored in `failed_calls`, with its status, headers and body, before
//! it is retried: a provider may bill a reply arena cannot read, and nothing paid for is dropped.
//! Whatever usage and price such a body reports is stored with it, so budgets can count it.
//!
//! Every reply's usage is stored as reported: prompt and completion tokens, the cached,
//! cache-write and reasoning tokens when the provider splits them out, and the provider's own
//! price when the response carries one (OpenRouter's `usage.cost`).
//!
//! A ply call's row (`llm_calls`) also gets the outcome the play mode gave the reply (`move`,
//! `illegal`, ...). That is written through the [`CallRow`] the call returns, so the row is
//! created and settled by this module alone.

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::{
    llm::{
        ChatMessage, ChatRequest, Endpoint, FailedAttempt, LlmClient, LlmError, ToolCall, ToolSpec,
    },
    spec::ModelSpec,
    store::{
        CallVerdict, EvalReplyRecord, FailedCallRecord, Leased, LlmCallRecord, PlyRecord, Store,
        StoreError, UsageDetails,
    },
};

/// Where a call's row lives.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CallSlot<'a> {
    /// A dialog turn of a game ply (`llm_calls`).
    Ply {
        /// The game's id in the store.
        game_id: i64,
        /// The ply.
        ply: u32,
        /// The call's number within the ply.
        seq: u32,
        /// The player's name.
        player: &'a str,
        /// The model's role in a mixture of agents (`proposer_1`, `synthesizer`), stored in the
        /// request as `arena_role`.
        role: Option<&'a str>,
        /// Earlier attempts of the game's schedule slot (the game replays a void one), newest
        /// first: a reply one of them got for the byte-identical request at this ply and seq is
        /// reused (copied into this game) instead of being asked and paid for again.
        earlier: &'a [i64],
        /// The game's lease: every write of the call carries it, and no request is sent once
        /// another worker has taken the game over.
        lease: Leased<'a>,
    },
    /// A call for an evaluation item (`eval_replies`).
    EvalItem {
        /// The evaluation run's id.
        run_id: i64,
        /// The task label.
        task: &'a str,
        /// The player's name.
        player: &'a str,
        /// The item's number.
        idx: u32,
        /// The call's number for this item (puzzles take several).
        seq: u32,
    },
}

/// A reply found in the store for a slot.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReply {
    /// The reply text.
    pub text: String,
    /// Reasoning text, if any.
    pub reasoning: Option<String>,
    /// The `llm_calls` row, for ply calls.
    pub row_id: Option<i64>,
    /// How long the call's successful attempt took when it was made (what a chess clock is
    /// charged for it again when it is replayed).
    pub latency_ms: u64,
    /// The tools the reply called (read again from its stored body).
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped, as stored (`length`: cut at the token limit).
    pub finish_reason: Option<String>,
    /// The reasoning blocks that go back with the reply's text in a dialog (read again from
    /// its stored body, see [`crate::llm::Provider::stored_thinking`]).
    pub thinking: Vec<serde_json::Value>,
}

/// A reply the caller may read: it is in the store.
#[derive(Debug, Clone)]
pub struct RecordedReply {
    /// The reply text (reasoning already split off).
    pub text: String,
    /// Reasoning text, if any.
    pub reasoning: Option<String>,
    /// Prompt plus completion tokens spent now (0 for a replayed reply or a reply without usage:
    /// this only feeds the progress display).
    pub new_tokens: u64,
    /// The row the reply is stored in.
    pub row: CallRow,
    /// How long the successful attempt took (for a replayed reply: when it was made); queueing
    /// for a request slot, failed attempts and the waits between them are not included.
    pub latency_ms: u64,
    /// The tools the reply called.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped, in OpenAI chat terms for every wire format (`stop`, `length`,
    /// ...; see [`crate::llm::ChatReply::finish_reason`]), when the provider said.
    pub finish_reason: Option<String>,
    /// The reasoning blocks the provider wants back with the reply's text in a dialog
    /// (Anthropic's thinking blocks, see [`crate::llm::ChatMessage::thinking`]).
    pub thinking: Vec<serde_json::Value>,
}

/// The finish reason every wire format's "cut at the token limit" is stored as: OpenAI's
/// `length`, Anthropic's `max_tokens`, Gemini's `MAX_TOKENS` and the Responses API's
/// `max_output_tokens` are all translated to it by `llm`.
pub(crate) const CUT_OFF_FINISH: &str = "length";

/// Whether a reply ended on its token limit (see [`CUT_OFF_FINISH`]).
pub(crate) fn is_cut_off(finish_reason: Option<&str>) -> bool {
    finish_reason == Some(CUT_OFF_FINISH)
}

/// The stored row of a call; for ply calls, the place its outcome goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRow(Option<i64>);

impl CallRow {
    /// Records what the play mode made of the reply (`move`, `illegal`, `proposal`, ...) and the
    /// move it read in it, if it said, under the game's lease. Rows of evaluation items have no
    /// outcome column; for them this does nothing.
    ///
    /// # Errors
    /// The store refused the update (the lease lost included).
    pub fn settle(
        &self,
        lease: Leased<'_>,
        outcome: &str,
        detail: Option<&str>,
        candidate: Option<&str>,
    ) -> Result<(), StoreError> {
        match self.0 {
            Some(call_id) => lease.set_llm_call_verdict(&CallVerdict {
                call_id,
                outcome,
                detail,
                candidate,
            }),
            None => Ok(()),
        }
    }

    /// [`CallRow::settle`] for the reply that became a move, written with the move itself in
    /// one transaction ([`Store::record_ply_with_verdict_grouped`]); a row without an outcome column
    /// records the move alone.
    ///
    /// # Errors
    /// The store refused either write (then neither is stored).
    pub(crate) async fn settle_with_ply(
        &self,
        lease: Leased<'_>,
        outcome: &str,
        candidate: Option<&str>,
        ply: PlyRecord,
    ) -> Result<(), StoreError> {
        match self.0 {
            Some(call_id) => {
                let verdict = CallVerdict {
                    call_id,
                    outcome,
                    detail: None,
                    candidate,
                };
                lease.record_ply_with_verdict(ply, &verdict).await
            }
            None => lease.record_ply(&ply),
        }
    }
}

/// A stored reply as the caller reads it.
pub fn replayed(stored: StoredReply) -> RecordedReply {
    RecordedReply {
        text: stored.text,
        reasoning: stored.reasoning,
        new_tokens: 0,
        row: CallRow(stored.row_id),
        latency_ms: stored.latency_ms,
        tool_calls: stored.tool_calls,
        finish_reason: stored.finish_reason,
        thinking: stored.thinking,
    }
}

/// Why a call has no reply.
#[derive(Debug, Error)]
pub(crate) enum CallError {
    /// The endpoint stayed down or refused the request (after its retries).
    #[error(transparent)]
    Api(#[from] LlmError),
    /// The reply could not be stored, so it cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The request could not be written as JSON for the store.
    #[error("the request cannot be stored as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// The reply for `slot`: `stored` when there is one, else `request` sent to `endpoint` and its
/// reply stored before it is returned.
///
/// # Errors
/// The endpoint failing, or the store refusing the reply.
pub(crate) async fn record_or_replay(
    store: &Store,
    client: &LlmClient,
    endpoint: &Endpoint,
    slot: CallSlot<'_>,
    request: &ChatRequest,
    stored: Option<StoredReply>,
) -> Result<RecordedReply, CallError> {
    record_or_replay_within(store, client, endpoint, slot, request, stored, None).await
}

/// As [`record_or_replay`], each attempt of a new request given at most `clock` (a player's
/// chess clock, see [`LlmClient::chat_within`]).
///
/// # Errors
/// As [`record_or_replay`]; an attempt the clock cut off is [`LlmError::OutOfTime`].
pub(crate) async fn record_or_replay_within(
    store: &Store,
    client: &LlmClient,
    endpoint: &Endpoint,
    slot: CallSlot<'_>,
    request: &ChatRequest,
    stored: Option<StoredReply>,
    clock: Option<std::time::Duration>,
) -> Result<RecordedReply, CallError> {
    if let Some(stored) = stored {
        return Ok(replayed(stored));
    }
    let role = match slot {
        CallSlot::Ply { role, .. } => role,
        CallSlot::EvalItem { .. } => None,
    };
    let not_sent = endpoint.provider.unsent_settings(request);
    let request_json = serde_json::to_string(&StoredRequest::of(request, role, not_sent))?;
    // The request names its pictures; their bytes are stored (once each) before it is sent, so
    // every stored request, failed attempts' included, can be shown as it was asked.
    if request.messages.iter().any(|m| !m.images.is_empty()) {
        store.put_images(&request.messages)?;
    }
    if let CallSlot::Ply {
        ply,
        seq,
        earlier,
        lease,
        ..
    } = slot
    {
        if !earlier.is_empty()
            && let Some(reused) = lease.reuse_llm_call(ply, seq, &request_json, earlier)?
        {
            let tool_calls = match (&reused.raw_body, request.tools.is_empty()) {
                (Some(body), false) => endpoint.provider.stored_tool_calls(body),
                _ => Vec::new(),
            };
            return Ok(replayed(StoredReply {
                text: reused.text,
                reasoning: reused.reasoning,
                row_id: Some(reused.id),
                latency_ms: reused.latency_ms,
                tool_calls,
                finish_reason: reused.finish_reason,
                thinking: reused
                    .raw_body
                    .as_deref()
                    .map(|body| endpoint.provider.stored_thinking(body))
                    .unwrap_or_default(),
            }));
        }
        // Nothing is paid for under a lease another worker has taken over: its reply could not
        // be stored anyway. (A process paused between this check and the request's first byte
        // still sends that one request when it resumes; its reply is then refused like any
        // write. A pause while a request is out, the likelier case, sends nothing more.)
        lease.check()?;
    }
    // Every attempt that came back unusable is stored before it is retried; a store that refuses
    // one (a lease lost included) stops the retries, since nothing more could be kept.
    let mut refused = None;
    let asked = client
        .chat_within(endpoint, request, clock, |failed| {
            let record = failed_record(&slot, endpoint, request, &request_json, failed);
            let recorded = match slot {
                CallSlot::Ply { lease, .. } => lease.record_failed_call(&record),
                CallSlot::EvalItem { .. } => store.record_failed_call(&record),
            };
            match recorded {
                Ok(_) => std::ops::ControlFlow::Continue(()),
                Err(e) => {
                    refused = Some(e);
                    std::ops::ControlFlow::Break(())
                }
            }
        })
        .await;
    if let Some(e) = refused {
        return Err(CallError::Store(e));
    }
    let reply = asked?;
    let thinking = endpoint.provider.stored_thinking(&reply.raw_body);
    // No usage in the reply means the tokens are unknown: stored as NULL, never as zero.
    let (prompt_tokens, completion_tokens) = match reply.usage {
        Some(u) => (Some(u.prompt_tokens), Some(u.completion_tokens)),
        None => (None, None),
    };
    let details = UsageDetails::of(reply.usage.as_ref(), reply.provider_cost.as_ref());
    let row = match slot {
        CallSlot::Ply {
            game_id,
            ply,
            seq,
            player,
            role: _,
            earlier: _,
            lease,
        } => {
            // Grouped with other games' writes under contention; returns once committed.
            let id = lease
                .record_llm_call(LlmCallRecord {
                    game_id: Some(game_id),
                    ply,
                    seq,
                    player: player.to_string(),
                    model: request.model.clone(),
                    endpoint: endpoint.base_url.clone(),
                    request_json,
                    reply_text: Some(reply.content.clone()),
                    reasoning: reply.reasoning.clone(),
                    raw_body: Some(reply.raw_body),
                    finish_reason: reply.finish_reason.clone(),
                    http_status: Some(reply.http_status),
                    prompt_tokens,
                    completion_tokens,
                    latency_ms: reply.latency_ms,
                    transport_retries: reply.transport_retries,
                    error: None,
                    details,
                })
                .await?;
            CallRow(Some(id))
        }
        CallSlot::EvalItem {
            run_id,
            task,
            player,
            idx,
            seq,
        } => {
            store.record_eval_reply(
                run_id,
                task,
                player,
                idx,
                &EvalReplyRecord {
                    seq,
                    prompt_json: Some(serde_json::to_string(&request.messages)?),
                    reply_text: reply.content.clone(),
                    reasoning: reply.reasoning.clone(),
                    prompt_tokens,
                    completion_tokens,
                    latency_ms: reply.latency_ms,
                    details,
                },
            )?;
            CallRow(None)
        }
    };
    Ok(RecordedReply {
        text: reply.content,
        reasoning: reply.reasoning,
        new_tokens: prompt_tokens.unwrap_or(0) + completion_tokens.unwrap_or(0),
        row,
        latency_ms: reply.latency_ms,
        thinking,
        tool_calls: reply.tool_calls,
        finish_reason: reply.finish_reason,
    })
}

/// The stored form of a failed attempt of the call in `slot`.
fn failed_record(
    slot: &CallSlot<'_>,
    endpoint: &Endpoint,
    request: &ChatRequest,
    request_json: &str,
    failed: &FailedAttempt<'_>,
) -> FailedCallRecord {
    let headers: serde_json::Map<String, serde_json::Value> = failed
        .headers
        .iter()
        .map(|(name, value)| (name.clone(), value.clone().into()))
        .collect();
    let mut record = FailedCallRecord {
        attempt: failed.attempt,
        model: request.model.clone(),
        endpoint: endpoint.base_url.clone(),
        request_json: request_json.to_owned(),
        http_status: failed.http_status,
        headers_json: serde_json::Value::Object(headers).to_string(),
        raw_body: failed.body.to_owned(),
        error: failed.error.to_string(),
        latency_ms: failed.latency_ms,
        prompt_tokens: failed.reported.usage.map(|u| u.prompt_tokens),
        completion_tokens: failed.reported.usage.map(|u| u.completion_tokens),
        details: UsageDetails::of(
            failed.reported.usage.as_ref(),
            failed.reported.cost.as_ref(),
        ),
        ..FailedCallRecord::default()
    };
    match *slot {
        CallSlot::Ply {
            game_id,
            ply,
            seq,
            player,
            ..
        } => {
            record.game_id = Some(game_id);
            record.ply = Some(ply);
            record.seq = seq;
            record.player = player.to_owned();
        }
        CallSlot::EvalItem {
            run_id,
            task,
            player,
            idx,
            seq,
        } => {
            record.eval_run_id = Some(run_id);
            record.task = Some(task.to_owned());
            record.idx = Some(idx);
            record.seq = seq;
            record.player = player.to_owned();
        }
    }
    record
}

/// A request as `request_json` stores it: the [`ChatRequest`] with the call's `arena_role`, its
/// keys in alphabetical order at every level. Those are the bytes `serde_json` made of the
/// request turned into a `Value` (whose maps sort their keys) before this struct existed, and
/// they must stay so: a replayed game finds an earlier attempt's reply by comparing the bytes.
/// Written straight from the request, it skips building and dropping that `Value` tree and
/// `Display`'s formatter (2.5 % of the instructions per LLM ply).
///
/// Each field mirrors one of [`ChatRequest`]'s; `stored_requests_are_the_bytes_of_the_sorted_value`
/// fails when one is added there and not here.
#[derive(Serialize)]
struct StoredRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    arena_role: Option<&'a str>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra_body: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(serialize_with = "sorted_messages")]
    messages: &'a [ChatMessage],
    model: &'a str,
    /// The settings asked for that the endpoint's wire format did not send (the API version
    /// has none, or the model refuses them): `temperature`, `top_p`, `seed`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_sent: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<SortedReasoning<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "<[ToolSpec]>::is_empty")]
    tools: &'a [ToolSpec],
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
}

impl<'a> StoredRequest<'a> {
    fn of(
        request: &'a ChatRequest,
        arena_role: Option<&'a str>,
        not_sent: Vec<&'static str>,
    ) -> Self {
        let ChatRequest {
            model,
            messages,
            temperature,
            top_p,
            max_tokens,
            seed,
            reasoning,
            extra_body,
            tools,
        } = request;
        StoredRequest {
            arena_role,
            extra_body,
            max_tokens: *max_tokens,
            messages,
            model,
            not_sent,
            reasoning: reasoning.as_ref().map(|r| SortedReasoning {
                budget_tokens: r.budget_tokens,
                effort: r.effort.as_deref(),
            }),
            seed: *seed,
            temperature: *temperature,
            tools,
            top_p: *top_p,
        }
    }
}

/// A [`ChatMessage`] with its keys in alphabetical order (an [`Image`](crate::llm::Image)'s own
/// keys, `media_type` and `sha256`, already are).
#[derive(Serialize)]
struct SortedMessage<'a> {
    content: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    images: &'a [crate::llm::Image],
    role: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "<[ToolCall]>::is_empty")]
    tool_calls: &'a [ToolCall],
}

fn sorted_messages<S: serde::Serializer>(
    messages: &&[ChatMessage],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(messages.iter().map(|m| SortedMessage {
        content: &m.content,
        images: &m.images,
        role: &m.role,
        tool_call_id: m.tool_call_id.as_deref(),
        tool_calls: &m.tool_calls,
    }))
}

/// A [`Reasoning`](crate::llm::Reasoning) with its keys in alphabetical order.
#[derive(Serialize)]
struct SortedReasoning<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effort: Option<&'a str>,
}

/// The request that asks `model` `messages`, with `extra` (what a play mode asked for at this
/// ply) overlaid on the model's own `extra_body`.
pub fn request(
    model: &ModelSpec,
    messages: Vec<ChatMessage>,
    extra: &Map<String, Value>,
) -> ChatRequest {
    let mut extra_body = model.extra_body.clone().unwrap_or_default();
    extra_body.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    ChatRequest {
        model: model.model.clone(),
        messages,
        temperature: model.temperature,
        top_p: model.top_p,
        max_tokens: model.max_tokens,
        seed: model.seed,
        extra_body,
        reasoning: model.reasoning(),
        tools: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::llm::{Image, Reasoning};

    /// What `request_json` held before [`StoredRequest`]: the request as a `Value`, with the
    /// role added, printed.
    fn through_a_value(request: &ChatRequest, role: Option<&str>) -> String {
        let mut value = serde_json::to_value(request).unwrap();
        if let Some(role) = role {
            value
                .as_object_mut()
                .unwrap()
                .insert("arena_role".into(), role.into());
        }
        value.to_string()
    }

    #[test]
    fn a_stored_request_names_the_settings_not_sent_in_key_order() {
        arena_providers::install();
        let request = ChatRequest {
            model: "claude-sonnet-4-5".into(),
            messages: vec![ChatMessage::new("user", "Your move?")],
            temperature: Some(0.2),
            reasoning: Some(crate::llm::Reasoning::effort("low")),
            ..ChatRequest::default()
        };
        let not_sent = crate::llm::Provider::Anthropic.unsent_settings(&request);
        let stored = serde_json::to_string(&StoredRequest::of(&request, None, not_sent)).unwrap();
        // As a sorted value would have it: `not_sent` between `model` and `reasoning`.
        let mut value: Value = serde_json::from_str(&through_a_value(&request, None)).unwrap();
        value["not_sent"] = serde_json::json!(["temperature"]);
        assert_eq!(stored, value.to_string());
        assert!(
            stored
                .contains(r#""model":"claude-sonnet-4-5","not_sent":["temperature"],"reasoning""#)
        );
    }

    #[test]
    fn stored_requests_are_the_bytes_of_the_sorted_value() {
        // Every field set (a struct literal, so a new field must be added here too), with text
        // that needs escaping and numbers of each kind.
        let full = ChatRequest {
            model: "m\"odel".into(),
            messages: vec![
                ChatMessage::new("system", "line\nbreak \u{1} é \\"),
                ChatMessage::new("user", "").with_image(Image::new("image/png", vec![1, 2, 3])),
                ChatMessage::assistant(
                    "hm",
                    vec![ToolCall {
                        id: "c\"1".into(),
                        name: "make_move".into(),
                        arguments: r#"{"move": "e2e4"}"#.into(),
                        signature: Some("sig".into()),
                        thinking: Vec::new(),
                    }],
                ),
                ChatMessage::tool_result("c\"1", "done"),
            ],
            temperature: Some(0.1 + 0.2),
            top_p: Some(1.0),
            max_tokens: Some(64),
            seed: Some(u64::MAX),
            reasoning: Some(Reasoning {
                effort: Some("high".into()),
                budget_tokens: Some(2048),
            }),
            extra_body: json!({"zeta": [1, {"b": 2, "a": null}], "alpha": "x"})
                .as_object()
                .unwrap()
                .clone(),
            tools: vec![ToolSpec {
                name: "make_move".into(),
                description: "Play a move.".into(),
                parameters: json!({"type": "object", "properties": {"move": {"type": "string"}}}),
            }],
        };
        let bare = ChatRequest {
            model: "m".into(),
            temperature: Some(f64::NAN),
            reasoning: Some(Reasoning::budget_tokens(1024)),
            ..ChatRequest::default()
        };
        for request in [&full, &bare, &ChatRequest::default()] {
            for role in [None, Some("synthesizer")] {
                assert_eq!(
                    serde_json::to_string(&StoredRequest::of(request, role, Vec::new())).unwrap(),
                    through_a_value(request, role),
                    "{request:?} as {role:?}"
                );
            }
        }
    }
}
