//! LLM calls (written before their reply is used) and tournament events.

use super::db::{Backend, Conn, DbResult, OptionalExtension, Row, params};

use super::{
    CallVerdict, Context, Store, StoreError, get_opt_u64, get_u64,
    leases::{Fence, check_fence, fenced},
    sql_u64,
};
use crate::llm::{CallCost, PriceTable, ProviderCost, Usage};

/// What a call's response reported beyond its prompt and completion tokens: the details of its
/// usage and the provider's own price. A field is `None` when the response did not report it,
/// and for every row stored before these columns existed (unknown, never zero).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageDetails {
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: Option<u64>,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: Option<u64>,
    /// The part of the completion spent reasoning.
    pub reasoning_tokens: Option<u64>,
    /// The provider's own price of the call in US dollars (the call was then priced by the
    /// provider, not by the price table).
    pub provider_cost_usd: Option<f64>,
    /// The provider's cost breakdown as it sent it (JSON).
    pub cost_details_json: Option<String>,
}

impl UsageDetails {
    /// The details of a response's usage and cost.
    pub fn of(usage: Option<&Usage>, cost: Option<&ProviderCost>) -> UsageDetails {
        UsageDetails {
            cached_tokens: usage.and_then(|u| u.cached_tokens),
            cache_write_tokens: usage.and_then(|u| u.cache_write_tokens),
            reasoning_tokens: usage.and_then(|u| u.reasoning_tokens),
            provider_cost_usd: cost.map(|c| c.usd),
            cost_details_json: cost.and_then(|c| c.details.as_ref()).map(|d| d.to_string()),
        }
    }

    /// The call's usage, from its stored prompt and completion tokens and these details; `None`
    /// when the tokens are unknown.
    pub fn usage(
        &self,
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
    ) -> Option<Usage> {
        let (prompt_tokens, completion_tokens) = (prompt_tokens?, completion_tokens?);
        Some(Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            reasoning_tokens: self.reasoning_tokens,
            cached_tokens: self.cached_tokens,
            cache_write_tokens: self.cache_write_tokens,
        })
    }

    /// Reads the five detail columns starting at column `at`: `cached_tokens`,
    /// `cache_write_tokens`, `reasoning_tokens`, `provider_cost_usd`, `cost_details_json`.
    pub(super) fn read(r: &Row<'_>, at: usize) -> DbResult<UsageDetails> {
        Ok(UsageDetails {
            cached_tokens: get_opt_u64(r, at)?,
            cache_write_tokens: get_opt_u64(r, at + 1)?,
            reasoning_tokens: get_opt_u64(r, at + 2)?,
            provider_cost_usd: r.get(at + 3)?,
            cost_details_json: r.get(at + 4)?,
        })
    }
}

/// The outcome stored on a mixture proposer's row: its reply went to the synthesizer, not to the
/// play mode (so it is neither a move nor a protocol failure).
pub const PROPOSAL_OUTCOME: &str = "proposal";

/// The outcome stored on a self-consistency sample's row that is not its attempt's decision:
/// the play mode read it and it voted (what it decided is in the row's detail), but another
/// sample's reply decided the attempt (so it is neither a move nor a protocol failure).
pub const SAMPLE_OUTCOME: &str = "sample";

/// The outcome stored on a reply that ended on its token limit (finish reason `length`) without a
/// move the play mode could read: the model was cut off, which is not the same failure as a
/// reply that never gave a move. arena's own counts keep it apart from parse errors; the
/// anchor-named rates (ChessArena's parsing errors, LLM Chess's wrong actions) count it as their
/// source does, which reads no finish reason.
pub const CUT_OFF_OUTCOME: &str = "cut_off";

/// The outcomes a reply cut at its token limit turns into [`CUT_OFF_OUTCOME`]: the ones that say
/// no move was read in it. A move that was read but refused (`illegal`, `ambiguous`) stays what
/// it is.
pub const UNREAD_OUTCOMES: [&str; 3] = ["no_move_found", "unparseable", "wrong_action"];

/// One request to a language model and what came back, as the caller hands it over (API keys
/// already stripped from the request).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmCallRecord {
    /// The game, or `None` for calls outside games (evaluation tasks).
    pub game_id: Option<i64>,
    /// The ply the call was made for.
    pub ply: u32,
    /// The call number within the ply, 0-based; unique with the game and ply.
    pub seq: u32,
    /// The player's name.
    pub player: String,
    /// The model name sent to the provider.
    pub model: String,
    /// The endpoint URL.
    pub endpoint: String,
    /// The request body as JSON.
    pub request_json: String,
    /// The reply text, if any came back.
    pub reply_text: Option<String>,
    /// The reasoning text, if the provider returned one.
    pub reasoning: Option<String>,
    /// The raw response body, for replay and debugging.
    pub raw_body: Option<String>,
    /// The provider's finish reason.
    pub finish_reason: Option<String>,
    /// The HTTP status of the last attempt.
    pub http_status: Option<u16>,
    /// Prompt tokens billed; `None` when the reply reported no usage (unknown, not zero).
    pub prompt_tokens: Option<u64>,
    /// Completion tokens billed (reasoning included); `None` when the reply reported no usage.
    pub completion_tokens: Option<u64>,
    /// Wall time of the call's successful attempt (failed attempts, the waits between them and
    /// queueing for a request slot excluded): what a chess clock is charged for the call.
    pub latency_ms: u64,
    /// How many times the transport retried (429, 5xx, timeouts).
    pub transport_retries: u32,
    /// The transport error, if the call failed for good.
    pub error: Option<String>,
    /// Cached, cache-write and reasoning tokens and the provider's own price, as reported.
    pub details: UsageDetails,
}

impl LlmCallRecord {
    /// The call's cost and who priced it: the provider's own price when it reported one, else
    /// `prices` over its usage (see [`PriceTable::call_cost`]).
    pub fn cost(&self, prices: &PriceTable) -> CallCost {
        let usage = self
            .details
            .usage(self.prompt_tokens, self.completion_tokens);
        prices.call_cost(usage.as_ref(), self.details.provider_cost_usd, &self.model)
    }
}

/// A stored LLM call with what the game loop made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmCallRow {
    /// Row id, for [`Store::set_llm_call_outcome`].
    pub id: i64,
    /// The call as recorded.
    pub call: LlmCallRecord,
    /// What the reply led to (`"move"`, `"illegal"`, ...); `None` if it was never used.
    pub outcome: Option<String>,
    /// Detail of the outcome (the move, the parse error, ...).
    pub outcome_detail: Option<String>,
    /// When the call was recorded (RFC 3339 UTC).
    pub created_at: String,
}

/// One HTTP attempt that got an answer but no usable reply (an error status, or a success whose
/// body does not decode), stored before the attempt is retried so that nothing a provider sent
/// (and perhaps billed) is lost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FailedCallRecord {
    /// The game, for a ply call.
    pub game_id: Option<i64>,
    /// The ply, for a ply call.
    pub ply: Option<u32>,
    /// The evaluation run, for an evaluation item's call.
    pub eval_run_id: Option<i64>,
    /// The task label, for an evaluation item's call.
    pub task: Option<String>,
    /// The item, for an evaluation item's call.
    pub idx: Option<u32>,
    /// The call's number within its ply or item (as in `llm_calls` / `eval_replies`).
    pub seq: u32,
    /// The HTTP attempt of this call, from 1.
    pub attempt: u32,
    /// The player's name.
    pub player: String,
    /// The model name sent to the provider.
    pub model: String,
    /// The endpoint URL.
    pub endpoint: String,
    /// The request body as JSON.
    pub request_json: String,
    /// The HTTP status received.
    pub http_status: u16,
    /// The response headers that matter (content type and length, request ids, rate limits,
    /// `Retry-After`, server), as a JSON object.
    pub headers_json: String,
    /// The response body as received.
    pub raw_body: String,
    /// What was wrong with it.
    pub error: String,
    /// Duration of the attempt in milliseconds.
    pub latency_ms: u64,
    /// Prompt tokens the body reported despite the failure; `None` when it reported none.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens the body reported; `None` when it reported none.
    pub completion_tokens: Option<u64>,
    /// The rest of what the body reported of its usage and price.
    pub details: UsageDetails,
}

/// A stored failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedCallRow {
    /// Row id.
    pub id: i64,
    /// The attempt as recorded.
    pub call: FailedCallRecord,
    /// When it was recorded (RFC 3339 UTC).
    pub created_at: String,
}

/// A stored event of a tournament (engine restart, endpoint outage, script reload error, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// Row id; events are returned in id order.
    pub id: i64,
    /// The tournament id.
    pub tournament: i64,
    /// The game it concerns, if any.
    pub game_id: Option<i64>,
    /// `"info"`, `"warn"` or `"error"`.
    pub level: String,
    /// A machine-readable kind, e.g. `"engine_restart"`.
    pub kind: String,
    /// A human-readable message.
    pub message: String,
    /// When it was recorded (RFC 3339 UTC).
    pub created_at: String,
}

/// The numbers of one stored call, without its texts: what reports add up.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSummary {
    /// The game.
    pub game_id: i64,
    /// The ply the call was made for.
    pub ply: u32,
    /// The player's name.
    pub player: String,
    /// The model name sent to the provider (prices are looked up by it).
    pub model: String,
    /// Prompt tokens billed; `None` when the reply reported no usage.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens billed; `None` when the reply reported no usage.
    pub completion_tokens: Option<u64>,
    /// Cached, cache-write and reasoning tokens and the provider's own price, as reported.
    pub details: UsageDetails,
    /// What the reply led to, if it was used.
    pub outcome: Option<String>,
    /// How long the provider took to answer, in milliseconds.
    pub latency_ms: u64,
}

impl CallSummary {
    /// The call's usage; `None` when its tokens are unknown.
    pub fn usage(&self) -> Option<Usage> {
        self.details
            .usage(self.prompt_tokens, self.completion_tokens)
    }

    /// The call's cost and who priced it (see [`LlmCallRecord::cost`]).
    pub fn cost(&self, prices: &PriceTable) -> CallCost {
        prices.call_cost(
            self.usage().as_ref(),
            self.details.provider_cost_usd,
            &self.model,
        )
    }
}

/// What an LLM call led to, with its texts but without the request and raw body: what the
/// annotated PGN export reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// The ply the call was made for.
    pub ply: u32,
    /// The call number within the ply.
    pub seq: u32,
    /// What the reply led to, if it was used.
    pub outcome: Option<String>,
    /// Detail of the outcome (the feedback, the forfeit reason, ...).
    pub outcome_detail: Option<String>,
    /// The move the reply offered, as the play mode read it, when the mode said (a refused move's
    /// text, for example).
    pub candidate: Option<String>,
    /// The reply text, if any came back.
    pub reply_text: Option<String>,
    /// The reasoning text, if the provider returned one.
    pub reasoning: Option<String>,
}

/// The columns [`call_row`] reads, in its order, from `llm_calls` aliased `c`: the one list every
/// query of whole call rows selects.
pub(super) const CALL_COLUMNS: &str = "c.id, c.game_id, c.ply, c.seq, c.player, c.model,
    c.endpoint, c.request_json, c.reply_text, c.reasoning, c.raw_body, c.finish_reason,
    c.http_status, c.prompt_tokens, c.completion_tokens, c.latency_ms, c.transport_retries,
    c.error, c.outcome, c.outcome_detail, c.created_at, c.cached_tokens, c.cache_write_tokens,
    c.reasoning_tokens, c.provider_cost_usd, c.cost_details_json";

/// How many columns [`CALL_COLUMNS`] has: where the next selected column starts.
pub(super) const CALL_WIDTH: usize = 26;

pub(super) fn call_row(r: &Row<'_>) -> DbResult<LlmCallRow> {
    call_row_at(r, 0)
}

/// [`call_row`] for call columns that start at column `at`.
pub(super) fn call_row_at(r: &Row<'_>, at: usize) -> DbResult<LlmCallRow> {
    Ok(LlmCallRow {
        id: r.get(at)?,
        call: LlmCallRecord {
            game_id: r.get(at + 1)?,
            ply: r.get(at + 2)?,
            seq: r.get(at + 3)?,
            player: r.get(at + 4)?,
            model: r.get(at + 5)?,
            endpoint: r.get(at + 6)?,
            request_json: r.get(at + 7)?,
            reply_text: r.get(at + 8)?,
            reasoning: r.get(at + 9)?,
            raw_body: r.get(at + 10)?,
            finish_reason: r.get(at + 11)?,
            http_status: r.get(at + 12)?,
            prompt_tokens: get_opt_u64(r, at + 13)?,
            completion_tokens: get_opt_u64(r, at + 14)?,
            latency_ms: get_u64(r, at + 15)?,
            transport_retries: r.get(at + 16)?,
            error: r.get(at + 17)?,
            details: UsageDetails::read(r, at + 21)?,
        },
        outcome: r.get(at + 18)?,
        outcome_detail: r.get(at + 19)?,
        created_at: r.get(at + 20)?,
    })
}

/// A reply an earlier attempt of the same slot got for the very same request, copied into the
/// replay's own row (see [`Store::reuse_llm_call`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReusedCall {
    /// The replay's new `llm_calls` row.
    pub id: i64,
    /// The reply text.
    pub text: String,
    /// Reasoning text, if any.
    pub reasoning: Option<String>,
    /// How long the original call's successful attempt took (what a chess clock is charged).
    pub latency_ms: u64,
    /// The response body as received (the tool calls of the reply are read from it).
    pub raw_body: Option<String>,
    /// Why the original call's generation stopped (`length`: cut at the token limit).
    pub finish_reason: Option<String>,
}

impl Store {
    /// Records an LLM call before its reply is used, and returns its id. After a crash, a resumed run
    /// finds the reply with [`Store::llm_calls`] and re-feeds it instead of paying for it again.
    ///
    /// # Errors
    ///
    /// [`StoreError::Duplicate`] if a call with the same game, ply and seq is stored,
    /// [`StoreError::MissingReference`] if there is no such game, [`StoreError::Database`] on a
    /// database failure.
    pub fn record_llm_call(&self, call: &LlmCallRecord) -> Result<i64, StoreError> {
        insert_call(&self.conn(), call)
    }

    /// [`Store::record_llm_call`] for the game loop, on the async runtime: on SQLite the call is
    /// committed with the other games' writes that arrive while a commit is in flight (group
    /// commit), and this returns once the transaction holding it is committed, so its reply is
    /// stored before the caller can read it. A lone write on an idle store commits at once.
    ///
    /// # Errors
    ///
    /// As [`Store::record_llm_call`]; a failed write fails only its own caller.
    #[cfg(test)]
    pub(crate) async fn record_llm_call_grouped(
        &self,
        call: LlmCallRecord,
    ) -> Result<i64, StoreError> {
        self.record_llm_call_grouped_under(None, call).await
    }

    pub(super) async fn record_llm_call_grouped_under(
        &self,
        fence: Option<&Fence>,
        call: LlmCallRecord,
    ) -> Result<i64, StoreError> {
        let (game_id, ply, seq) = (call.game_id, call.ply, call.seq);
        let what = move || call_what(game_id, ply, seq);
        match (&self.backend, fence) {
            (Backend::Sqlite(sqlite), None) => {
                sqlite
                    .write_statement(move |conn| insert_call(conn, &call), what)
                    .await
            }
            // The check and the insert are two statements: they need the batch's transaction.
            (Backend::Sqlite(sqlite), Some(fence)) => {
                let fence = fence.clone();
                sqlite
                    .write(
                        move |conn| {
                            check_fence(conn, &fence)?;
                            insert_call(conn, &call)
                        },
                        what,
                    )
                    .await
            }
            (Backend::Postgres(_), fence) => {
                fenced(&self.conn(), fence, what, |conn| insert_call(conn, &call))
            }
        }
    }

    /// Reuses, for call `seq` of ply `ply` of the replay `game_id`, the reply an earlier attempt
    /// of the same slot (`earlier`, newest first) got for the byte-identical request at the same
    /// ply and seq: copies that row into the replay with `reused_from` naming the original (the
    /// first row that paid for it) and returns the copy's id and reply, or `None` when no earlier
    /// attempt asked exactly this (the game's path differs there). The copy keeps the original's
    /// tokens; totals and the spend skip it.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn reuse_llm_call(
        &self,
        game_id: i64,
        ply: u32,
        seq: u32,
        request_json: &str,
        earlier: &[i64],
    ) -> Result<Option<ReusedCall>, StoreError> {
        self.reuse_llm_call_under(None, game_id, ply, seq, request_json, earlier)
    }

    pub(super) fn reuse_llm_call_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        ply: u32,
        seq: u32,
        request_json: &str,
        earlier: &[i64],
    ) -> Result<Option<ReusedCall>, StoreError> {
        let what = || format!("reuse a stored reply for call {seq} of ply {ply} of game {game_id}");
        fenced(&self.conn(), fence, what, |conn| {
            reuse(conn, game_id, ply, seq, request_json, earlier)
        })
    }

    /// Records what the game loop made of a call's reply: `outcome` is a kind such as `"move"`,
    /// `"no_move_found"`, `"unparseable"`, `"illegal"`, `"ambiguous"`, `"forbidden_reasoning"` or
    /// `"say"`; `detail` says more (the move, the parse error). Replaces an earlier outcome, which a
    /// resumed run re-deriving it from the same reply will set to the same value.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] if there is no such call, [`StoreError::Database`] on a database
    /// failure.
    pub fn set_llm_call_outcome(
        &self,
        call_id: i64,
        outcome: &str,
        detail: Option<&str>,
    ) -> Result<(), StoreError> {
        self.set_llm_call_verdict(call_id, outcome, detail, None)
    }

    /// [`Store::set_llm_call_outcome`] with the move the reply offered, as the play mode read it
    /// (`None` when it did not say).
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] if there is no such call, [`StoreError::Database`] on a database
    /// failure.
    pub fn set_llm_call_verdict(
        &self,
        call_id: i64,
        outcome: &str,
        detail: Option<&str>,
        candidate: Option<&str>,
    ) -> Result<(), StoreError> {
        let verdict = CallVerdict {
            call_id,
            outcome,
            detail,
            candidate,
        };
        self.set_llm_call_verdict_under(None, &verdict)
    }

    pub(super) fn set_llm_call_verdict_under(
        &self,
        fence: Option<&Fence>,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        let call_id = verdict.call_id;
        let what = || format!("set the outcome of llm call {call_id}");
        let changed = fenced(&self.conn(), fence, what, |conn| {
            update_verdict(conn, verdict).context(what)
        })?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: format!("llm call {call_id}"),
            });
        }
        Ok(())
    }

    /// The calls made for one ply of a game, ordered by seq.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn llm_calls(&self, game_id: i64, ply: u32) -> Result<Vec<LlmCallRow>, StoreError> {
        let what = || format!("read llm calls of ply {ply} of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {CALL_COLUMNS} FROM llm_calls c
                 WHERE c.game_id = ?1 AND c.ply = ?2 ORDER BY c.seq"
            ))
            .context(what)?;
        let rows = stmt
            .query_map(params![game_id, ply], call_row)
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// The outcomes of every call of a game, in ply and seq order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn call_outcomes(&self, game_id: i64) -> Result<Vec<CallOutcome>, StoreError> {
        let what = || format!("read the call outcomes of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT ply, seq, outcome, outcome_detail, candidate, reply_text, reasoning
                 FROM llm_calls WHERE game_id = ?1 ORDER BY ply, seq",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![game_id], |r| {
                Ok(CallOutcome {
                    ply: r.get(0)?,
                    seq: r.get(1)?,
                    outcome: r.get(2)?,
                    outcome_detail: r.get(3)?,
                    candidate: r.get(4)?,
                    reply_text: r.get(5)?,
                    reasoning: r.get(6)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Every call of one game, in ply and seq order (the report reads a game at once).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn game_calls(&self, game_id: i64) -> Result<Vec<LlmCallRow>, StoreError> {
        let what = || format!("read llm calls of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {CALL_COLUMNS} FROM llm_calls c
                 WHERE c.game_id = ?1 ORDER BY c.ply, c.seq"
            ))
            .context(what)?;
        let rows = stmt.query_map(params![game_id], call_row).context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Every call of a tournament's finished games, without texts, in game, ply and seq order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn call_summaries(&self, tournament: i64) -> Result<Vec<CallSummary>, StoreError> {
        let what = || format!("read call summaries of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT c.game_id, c.ply, c.player, c.model, c.prompt_tokens, c.completion_tokens,
                     c.outcome, c.cached_tokens, c.cache_write_tokens, c.reasoning_tokens,
                     c.provider_cost_usd, c.cost_details_json, c.latency_ms
                 FROM llm_calls c JOIN games g ON g.id = c.game_id
                 WHERE g.tournament_id = ?1 AND g.status = 'finished'
                 ORDER BY c.game_id, c.ply, c.seq",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| {
                Ok(CallSummary {
                    game_id: r.get(0)?,
                    ply: r.get(1)?,
                    player: r.get(2)?,
                    model: r.get(3)?,
                    prompt_tokens: get_opt_u64(r, 4)?,
                    completion_tokens: get_opt_u64(r, 5)?,
                    details: UsageDetails::read(r, 7)?,
                    outcome: r.get(6)?,
                    latency_ms: get_u64(r, 12)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Records an attempt that got an HTTP answer but no usable reply, and returns its id. Failed
    /// attempts have their own table, so the `(game, ply, seq)` key of [`Store::llm_calls`] that
    /// replay reads stays one row per call.
    ///
    /// # Errors
    ///
    /// [`StoreError::MissingReference`] if the game or evaluation run does not exist,
    /// [`StoreError::Database`] on a database failure (a record that is neither a ply's nor an
    /// item's call included).
    pub fn record_failed_call(&self, call: &FailedCallRecord) -> Result<i64, StoreError> {
        self.record_failed_call_under(None, call)
    }

    pub(super) fn record_failed_call_under(
        &self,
        fence: Option<&Fence>,
        call: &FailedCallRecord,
    ) -> Result<i64, StoreError> {
        let what = || {
            format!(
                "record failed attempt {} of call {} of `{}`",
                call.attempt, call.seq, call.player
            )
        };
        fenced(&self.conn(), fence, what, |conn| insert_failed(conn, call))
    }

    /// The failed attempts stored for a game's calls, in the order they were made.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn failed_calls(&self, game_id: i64) -> Result<Vec<FailedCallRow>, StoreError> {
        let what = || format!("read failed calls of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, game_id, ply, eval_run_id, task, idx, seq, attempt, player, model,
                     endpoint, request_json, http_status, headers_json, raw_body, error,
                     latency_ms, created_at, prompt_tokens, completion_tokens, cached_tokens,
                     cache_write_tokens, reasoning_tokens, provider_cost_usd, cost_details_json
                 FROM failed_calls WHERE game_id = ?1 ORDER BY id",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![game_id], |r| {
                Ok(FailedCallRow {
                    id: r.get(0)?,
                    call: FailedCallRecord {
                        game_id: r.get(1)?,
                        ply: r.get(2)?,
                        eval_run_id: r.get(3)?,
                        task: r.get(4)?,
                        idx: r.get(5)?,
                        seq: r.get(6)?,
                        attempt: r.get(7)?,
                        player: r.get(8)?,
                        model: r.get(9)?,
                        endpoint: r.get(10)?,
                        request_json: r.get(11)?,
                        http_status: r.get(12)?,
                        headers_json: r.get(13)?,
                        raw_body: r.get(14)?,
                        error: r.get(15)?,
                        latency_ms: get_u64(r, 16)?,
                        prompt_tokens: get_opt_u64(r, 18)?,
                        completion_tokens: get_opt_u64(r, 19)?,
                        details: UsageDetails::read(r, 20)?,
                    },
                    created_at: r.get(17)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Records an event of a tournament, optionally about one game.
    ///
    /// # Errors
    ///
    /// [`StoreError::MissingReference`] if the tournament or game does not exist,
    /// [`StoreError::Database`] on a database failure.
    pub fn record_event(
        &self,
        tournament: i64,
        game_id: Option<i64>,
        level: &str,
        kind: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        self.record_event_under(None, tournament, game_id, level, kind, message)
    }

    /// [`Store::record_event`], refused when `fence` no longer holds the game's lease.
    pub(super) fn record_event_under(
        &self,
        fence: Option<&Fence>,
        tournament: i64,
        game_id: Option<i64>,
        level: &str,
        kind: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        let what = || format!("record event `{kind}` of tournament {tournament}");
        fenced(&self.conn(), fence, what, |conn| {
            conn.prepare_cached(
                "INSERT INTO events (tournament_id, game_id, level, kind, message)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut stmt| stmt.execute(params![tournament, game_id, level, kind, message]))
            .context(what)?;
            Ok(())
        })
    }

    /// The events of a tournament, oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn events(&self, tournament: i64) -> Result<Vec<EventRow>, StoreError> {
        let what = || format!("read events of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, tournament_id, game_id, level, kind, message, created_at FROM events
                 WHERE tournament_id = ?1 ORDER BY id",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| {
                Ok(EventRow {
                    id: r.get(0)?,
                    tournament: r.get(1)?,
                    game_id: r.get(2)?,
                    level: r.get(3)?,
                    kind: r.get(4)?,
                    message: r.get(5)?,
                    created_at: r.get(6)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }
}

/// Copies into game `game_id` the reply the newest of `earlier` got for the same request (see
/// [`Store::reuse_llm_call`]).
fn reuse(
    conn: &Conn<'_>,
    game_id: i64,
    ply: u32,
    seq: u32,
    request_json: &str,
    earlier: &[i64],
) -> Result<Option<ReusedCall>, StoreError> {
    let what = || format!("reuse a stored reply for call {seq} of ply {ply} of game {game_id}");
    for &attempt in earlier {
        let copied = conn
            .prepare_cached(
                "INSERT INTO llm_calls (game_id, ply, seq, player, model, endpoint,
                     request_json, reply_text, reasoning, raw_body, finish_reason, http_status,
                     prompt_tokens, completion_tokens, latency_ms, transport_retries, error,
                     cached_tokens, cache_write_tokens, reasoning_tokens, provider_cost_usd,
                     cost_details_json, reused_from)
                 SELECT ?1, ply, seq, player, model, endpoint, request_json, reply_text,
                     reasoning, raw_body, finish_reason, http_status, prompt_tokens,
                     completion_tokens, latency_ms, transport_retries, error,
                     cached_tokens, cache_write_tokens, reasoning_tokens, provider_cost_usd,
                     cost_details_json, COALESCE(reused_from, id)
                 FROM llm_calls
                 WHERE game_id = ?2 AND ply = ?3 AND seq = ?4 AND request_json = ?5
                   AND reply_text IS NOT NULL
                 RETURNING id, reply_text, reasoning, latency_ms, raw_body, finish_reason",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![game_id, attempt, ply, seq, request_json], |r| {
                    Ok(ReusedCall {
                        id: r.get(0)?,
                        text: r.get(1)?,
                        reasoning: r.get(2)?,
                        latency_ms: r.get::<_, i64>(3)?.max(0) as u64,
                        raw_body: r.get(4)?,
                        finish_reason: r.get(5)?,
                    })
                })
                .optional()
            })
            .context(what)?;
        if copied.is_some() {
            return Ok(copied);
        }
    }
    Ok(None)
}

/// Inserts a failed attempt's row; its id.
fn insert_failed(conn: &Conn<'_>, call: &FailedCallRecord) -> Result<i64, StoreError> {
    conn.prepare_cached(
        "INSERT INTO failed_calls (game_id, ply, eval_run_id, task, idx, seq, attempt,
                 player, model, endpoint, request_json, http_status, headers_json, raw_body,
                 error, latency_ms, prompt_tokens, completion_tokens, cached_tokens,
                 cache_write_tokens, reasoning_tokens, provider_cost_usd, cost_details_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                 ?17, ?18, ?19, ?20, ?21, ?22, ?23)
             RETURNING id",
    )
    .and_then(|mut stmt| {
        stmt.query_row(
            params![
                call.game_id,
                call.ply,
                call.eval_run_id,
                call.task,
                call.idx,
                call.seq,
                call.attempt,
                call.player,
                call.model,
                call.endpoint,
                call.request_json,
                call.http_status,
                call.headers_json,
                call.raw_body,
                call.error,
                sql_u64(call.latency_ms),
                call.prompt_tokens.map(sql_u64),
                call.completion_tokens.map(sql_u64),
                call.details.cached_tokens.map(sql_u64),
                call.details.cache_write_tokens.map(sql_u64),
                call.details.reasoning_tokens.map(sql_u64),
                call.details.provider_cost_usd,
                call.details.cost_details_json,
            ],
            |r| r.get(0),
        )
    })
    .context(|| {
        format!(
            "record failed attempt {} of call {} of `{}`",
            call.attempt, call.seq, call.player
        )
    })
}

/// Inserts a call's row; its id.
fn insert_call(conn: &Conn<'_>, call: &LlmCallRecord) -> Result<i64, StoreError> {
    conn.insert_returning_id(
        "INSERT INTO llm_calls (game_id, ply, seq, player, model, endpoint, request_json,
                 reply_text, reasoning, raw_body, finish_reason, http_status, prompt_tokens,
                 completion_tokens, latency_ms, transport_retries, error, cached_tokens,
                 cache_write_tokens, reasoning_tokens, provider_cost_usd, cost_details_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22)",
        params![
            call.game_id,
            call.ply,
            call.seq,
            call.player,
            call.model,
            call.endpoint,
            call.request_json,
            call.reply_text,
            call.reasoning,
            call.raw_body,
            call.finish_reason,
            call.http_status,
            call.prompt_tokens.map(sql_u64),
            call.completion_tokens.map(sql_u64),
            sql_u64(call.latency_ms),
            call.transport_retries,
            call.error,
            call.details.cached_tokens.map(sql_u64),
            call.details.cache_write_tokens.map(sql_u64),
            call.details.reasoning_tokens.map(sql_u64),
            call.details.provider_cost_usd,
            call.details.cost_details_json,
        ],
    )
    .context(|| call_what(call.game_id, call.ply, call.seq))
}

/// What storing a call is called in its errors.
fn call_what(game_id: Option<i64>, ply: u32, seq: u32) -> String {
    let game = game_id.map_or_else(|| "no game".to_owned(), |g| format!("game {g}"));
    format!("record llm call {seq} of ply {ply} ({game})")
}

/// Writes a call's verdict; the number of rows changed (0: no such call).
pub(super) fn update_verdict(conn: &Conn<'_>, verdict: &CallVerdict<'_>) -> DbResult<usize> {
    conn.execute(
        "UPDATE llm_calls SET outcome = ?2, outcome_detail = ?3, candidate = ?4 WHERE id = ?1",
        params![
            verdict.call_id,
            verdict.outcome,
            verdict.detail,
            verdict.candidate
        ],
    )
}
