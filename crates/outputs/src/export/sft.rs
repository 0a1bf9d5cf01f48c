//! `arena export sft`: one chat per accepted move of a language model, in the OpenAI fine-tuning
//! and Hugging Face chat format (`{"messages": [...]}`): the messages exactly as the request sent
//! them, then the assistant turn as the model answered it.
//!
//! - `filter` keeps the moves whose stored analysis says they were good enough (`legal`: every
//!   accepted move, analysed or not; `top3`: ranked among the engine's three best; `best`: the
//!   engine's best move).
//! - `rewrite_best` replaces the answer by the engine's best move in the mode's answer format: a
//!   fenced block holding the move (in SAN when the mode's `notation` is `san`, else UCI) for the
//!   built-in modes, `make_move <uci>` for `agentic`. Moves without a stored best move are skipped.
//! - `reasoning` keeps the answer as written (its thinking before the move included) and the
//!   provider's separate reasoning text as the assistant message's `reasoning_content` (the field
//!   Qwen3's and DeepSeek's chat templates read); without it the answer is reduced to the played
//!   move in the mode's answer format and no reasoning is written.

use std::io::Write;

use serde_json::{Map, Value, json};
use shakmaty::{Chess, san::San, uci::UciMove};

use crate::board::{Variant, position_from_fen};

use super::{ExportError, Players, Prices, write_line};
use crate::store::{AcceptedMoveRow, Store};

/// Which accepted moves an SFT export keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SftFilter {
    /// Every accepted (hence legal) move.
    #[default]
    Legal,
    /// Moves the analysis ranks among the engine's three best.
    Top3,
    /// The engine's best move.
    Best,
}

/// The options of [`sft`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SftOptions {
    /// Only this player's moves.
    pub player: Option<String>,
    /// Which moves to keep.
    pub filter: SftFilter,
    /// Replace the answer by the engine's best move.
    pub rewrite_best: bool,
    /// Keep the answer as written and the provider's reasoning text.
    pub reasoning: bool,
    /// Add a `meta` object (tournament, game, ply, player, model, mode, FEN, played and best move,
    /// classification) to each line; off by default because OpenAI's fine-tuning refuses unknown
    /// keys.
    pub meta: bool,
}

/// How many chats an SFT export wrote and how many accepted moves it left out, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SftCounts {
    /// Chats written.
    pub written: u64,
    /// Moves left out by the quality filter (or by `rewrite_best` without a best move).
    pub filtered: u64,
    /// Moves whose stored request has no `messages` list, or whose call has no reply.
    pub unusable: u64,
}

/// Writes the SFT chats of `tournament` (or of all) to `out`.
///
/// # Errors
/// When the store cannot be read or `out` cannot be written.
pub fn sft(
    store: &Store,
    tournament: Option<i64>,
    options: &SftOptions,
    out: &mut impl Write,
) -> Result<SftCounts, ExportError> {
    let players = Players::load(store)?;
    let prices = Prices::load(store)?;
    let mut counts = SftCounts::default();
    store.for_each_accepted_move(tournament, |row| {
        if options
            .player
            .as_deref()
            .is_some_and(|p| p != row.ply.player)
        {
            return Ok(());
        }
        if !keep(&row, options) {
            counts.filtered += 1;
            return Ok(());
        }
        let info = players.get(&row.tournament, &row.ply.player);
        let mode = info.and_then(|i| i.mode.as_deref());
        let san_notation = info.is_some_and(|i| i.notation.as_deref() == Some("san"));
        match chat(&row, options, mode, san_notation, &prices) {
            Some(line) => {
                counts.written += 1;
                write_line(out, &line)
            }
            None => {
                counts.unusable += 1;
                Ok(())
            }
        }
    })?;
    Ok(counts)
}

fn keep(row: &AcceptedMoveRow, options: &SftOptions) -> bool {
    let analysis = row.analysis.as_ref();
    let is_best = analysis.is_some_and(|a| {
        a.played_rank == Some(1) || a.best.as_deref() == Some(row.ply.uci.as_str())
    });
    let quality = match options.filter {
        SftFilter::Legal => true,
        SftFilter::Top3 => {
            is_best || analysis.is_some_and(|a| a.played_rank.is_some_and(|r| r <= 3))
        }
        SftFilter::Best => is_best,
    };
    quality && (!options.rewrite_best || analysis.is_some_and(|a| a.best.is_some()))
}

fn chat(
    row: &AcceptedMoveRow,
    options: &SftOptions,
    mode: Option<&str>,
    san_notation: bool,
    prices: &Prices,
) -> Option<Value> {
    let request: Value = serde_json::from_str(&row.call.call.request_json).ok()?;
    let mut messages = request.get("messages")?.as_array()?.clone();
    let mut assistant = Map::new();
    assistant.insert("role".into(), "assistant".into());
    let best = row.analysis.as_ref().and_then(|a| a.best.clone());
    let content = if options.rewrite_best {
        let best = best.as_deref()?;
        answer(mode, san_notation, row.variant, &row.ply.fen_before, best)?
    } else if options.reasoning {
        row.call.call.reply_text.clone()?
    } else {
        answer(
            mode,
            san_notation,
            row.variant,
            &row.ply.fen_before,
            &row.ply.uci,
        )?
    };
    assistant.insert("content".into(), content.into());
    if options.reasoning
        && !options.rewrite_best
        && let Some(reasoning) = &row.call.call.reasoning
    {
        assistant.insert("reasoning_content".into(), reasoning.clone().into());
    }
    messages.push(Value::Object(assistant));
    let mut line = Map::new();
    line.insert("messages".into(), Value::Array(messages));
    if let Some(tools) = request.get("tools") {
        line.insert("tools".into(), tools.clone());
    }
    if options.meta {
        let mut meta = json!({
                "tournament": row.tournament,
                "game_id": row.call.call.game_id,
                "ply": row.ply.ply,
                "player": row.ply.player,
                "model": row.call.call.model,
                "mode": mode,
                "fen": row.ply.fen_before,
                "played": row.ply.uci,
                "best": best,
                "classification": row.analysis.as_ref().map(|a| a.classification.clone()),
                "call_id": row.call.id,
                "prompt_tokens": row.call.call.prompt_tokens,
                "completion_tokens": row.call.call.completion_tokens,
        });
        if let Some(object) = meta.as_object_mut() {
            let usage = prices.fields(Some(&row.tournament), &row.call.call);
            object.extend(usage.map(|(name, v)| (name.to_owned(), v)));
        }
        line.insert("meta".into(), meta);
    }
    Some(Value::Object(line))
}

/// `uci` as the mode's answer: `make_move <uci>` for `agentic`, else a fenced block with the move
/// in the mode's notation.
fn answer(
    mode: Option<&str>,
    san_notation: bool,
    variant: Variant,
    fen: &str,
    uci: &str,
) -> Option<String> {
    if mode == Some("agentic") {
        return Some(format!("make_move {uci}"));
    }
    let text = if san_notation {
        let position: Chess = position_from_fen(variant, fen).ok()?;
        let mv = uci.parse::<UciMove>().ok()?.to_move(&position).ok()?;
        San::from_move(&position, mv).to_string()
    } else {
        uci.to_owned()
    };
    Some(format!("```\n{text}\n```"))
}
