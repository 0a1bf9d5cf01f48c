//! `arena export jsonl --what calls|plies|games`: one JSON object per stored row, streamed from
//! the store (constant memory however large it is). The fields are documented in the README and
//! stay stable: new fields may be added, none is renamed or removed.

use std::io::Write;

use serde_json::{Value, json};

use super::{ExportError, Prices, score_json, write_line};
use crate::store::{CallExportRow, GameExportRow, PlyExportRow, Store};

/// Which table a JSONL export writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonlTable {
    /// Every LLM call with its request, reply and outcome.
    Calls,
    /// Every ply with its engine analysis, if analysed.
    Plies,
    /// Every game.
    Games,
}

impl JsonlTable {
    /// The name on the command line and in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonlTable::Calls => "calls",
            JsonlTable::Plies => "plies",
            JsonlTable::Games => "games",
        }
    }
}

/// Writes every row of `table` (of one tournament, or all with `None`) to `out`, one JSON object
/// a line, and returns the number of rows.
///
/// # Errors
/// When the store cannot be read or `out` cannot be written.
pub fn jsonl(
    store: &Store,
    tournament: Option<i64>,
    table: JsonlTable,
    out: &mut impl Write,
) -> Result<u64, ExportError> {
    let mut rows = 0u64;
    let mut put = |value: Value| {
        rows += 1;
        write_line(out, &value)
    };
    match table {
        JsonlTable::Calls => {
            let prices = Prices::load(store)?;
            store.for_each_call(tournament, |r| put(call(r, &prices)))?
        }
        JsonlTable::Plies => store.for_each_ply(tournament, |r| put(ply(r)))?,
        JsonlTable::Games => store.for_each_game(tournament, |r| put(game(r)))?,
    }
    Ok(rows)
}

/// A stored JSON text as JSON, or as the string it is when it does not parse.
pub(super) fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn call(r: CallExportRow, prices: &Prices) -> Value {
    let usage = prices.fields(r.tournament.as_deref(), &r.row.call);
    let c = r.row.call;
    let mut value = json!({
        "id": r.row.id,
        "tournament": r.tournament,
        "game_id": c.game_id,
        "ply": c.ply,
        "seq": c.seq,
        "player": c.player,
        "model": c.model,
        "endpoint": c.endpoint,
        "request": parsed(&c.request_json),
        "reply_text": c.reply_text,
        "reasoning": c.reasoning,
        "raw_body": c.raw_body,
        "finish_reason": c.finish_reason,
        "http_status": c.http_status,
        "prompt_tokens": c.prompt_tokens,
        "completion_tokens": c.completion_tokens,
        "latency_ms": c.latency_ms,
        "transport_retries": c.transport_retries,
        "error": c.error,
        "outcome": r.row.outcome,
        "outcome_detail": r.row.outcome_detail,
        "candidate": r.candidate,
        "created_at": r.row.created_at,
        "tool_calls": c.raw_body.as_deref().map(crate::llm::tool_calls_in_body).unwrap_or_default(),
    });
    if let Some(object) = value.as_object_mut() {
        object.extend(usage.map(|(name, v)| (name.to_owned(), v)));
    }
    value
}

fn ply(r: PlyExportRow) -> Value {
    let p = r.ply;
    let analysis = r.analysis.map(|a| {
        json!({
            "engine": a.engine_id,
            "limits": a.limits_key,
            "win_model": a.win_model,
            "eval_before": score_json(a.eval_before),
            "eval_after": score_json(a.eval_after),
            "best": a.best,
            "pv": a.pv,
            "top": parsed(&a.top_json),
            "played_rank": a.played_rank,
            "in_top": a.in_top,
            "played_eval": a.played_score.map(score_json),
            "win_before": a.win_before,
            "win_after": a.win_after,
            "cp_loss": a.cp_loss,
            "accuracy": a.accuracy,
            "phase": a.phase,
            "classification": a.classification,
        })
    });
    json!({
        "tournament": r.tournament,
        "game_id": r.game_id,
        "ply": p.ply,
        "fen_before": p.fen_before,
        "uci": p.uci,
        "san": p.san,
        "player": p.player,
        "attempts": p.attempts,
        "elapsed_ms": p.elapsed_ms,
        "analysis": analysis,
    })
}

fn game(r: GameExportRow) -> Value {
    let g = r.game;
    json!({
        "id": g.id,
        "tournament": r.tournament,
        "index": g.index,
        "round": g.round,
        "white": g.white,
        "black": g.black,
        "start_fen": g.start_fen,
        "variant": g.variant.as_str(),
        "opening_moves": g.opening_moves,
        "opening_label": g.opening_label,
        "status": g.status.as_str(),
        "result": g.result,
        "termination": g.termination,
        "reason": g.reason,
        "script_hash": g.script_hash,
        "generation": g.generation,
        "started_at": g.started_at,
        "finished_at": g.finished_at,
        "error": g.error,
        "error_kind": g.error_kind.map(|k| k.as_str()),
        "plies": g.ply_count,
        "at_limit": g.at_limit,
    })
}
