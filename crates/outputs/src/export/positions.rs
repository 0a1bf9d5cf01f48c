//! `arena export positions`: every analysed position with its FEN, side to move, legal moves, the
//! move played, the engine's top moves with their Win%, and who played it in which mode — the
//! reinforcement-learning data of ChessArena's post-training, one JSON object a line.

use std::io::Write;

use serde_json::{Value, json};
use shakmaty::Position;

use crate::board::{Variant, position_from_fen, uci_of};

use super::{ExportError, Players, jsonl::parsed, score_from_json, score_json, write_line};
use crate::{analysis::WinModel, store::Store};

/// Writes every analysed ply of `tournament` (or of all) to `out` and returns the count.
///
/// # Errors
/// When the store cannot be read or `out` cannot be written.
pub fn positions(
    store: &Store,
    tournament: Option<i64>,
    out: &mut impl Write,
) -> Result<u64, ExportError> {
    let players = Players::load(store)?;
    let mut rows = 0u64;
    store.for_each_analysed_ply(tournament, |r| {
        let Some(a) = r.analysis else {
            return Ok(());
        };
        let p = r.ply;
        let win_model = WinModel::parse(&a.win_model);
        let top: Vec<Value> = match parsed(&a.top_json) {
            Value::Array(moves) => moves
                .into_iter()
                .map(|m| {
                    let score = m.get("score").and_then(score_from_json);
                    json!({
                        "uci": m.get("uci"),
                        "eval": m.get("score"),
                        "win_percent": score.zip(win_model).map(|(s, w)| w.win_percent(s)),
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        let (side, legal) = legal_moves(r.variant, &p.fen_before);
        let info = players.get(&r.tournament, &p.player);
        rows += 1;
        write_line(
            out,
            &json!({
                "tournament": r.tournament,
                "game_id": r.game_id,
                "ply": p.ply,
                "fen": p.fen_before,
                "side": side,
                "legal_moves": legal,
                "played": p.uci,
                "played_san": p.san,
                "player": p.player,
                "kind": info.map(|i| i.kind.clone()),
                "model": info.and_then(|i| i.model.clone()),
                "mode": info.and_then(|i| i.mode.clone()),
                "engine": a.engine_id,
                "limits": a.limits_key,
                "win_model": a.win_model,
                "best": a.best,
                "top_moves": top,
                "eval_before": score_json(a.eval_before),
                "win_before": a.win_before,
                "win_after": a.win_after,
                "played_rank": a.played_rank,
                "classification": a.classification,
                "cp_loss": a.cp_loss,
            }),
        )
    })?;
    Ok(rows)
}

/// The side to move (`white`/`black`) and its legal moves in UCI; `null` and empty for a FEN
/// that does not parse (never the case for a FEN arena stored).
fn legal_moves(variant: Variant, fen: &str) -> (Option<&'static str>, Vec<String>) {
    let Ok(position) = position_from_fen(variant, fen) else {
        return (None, Vec::new());
    };
    let side = if position.turn().is_white() {
        "white"
    } else {
        "black"
    };
    let moves = position
        .legal_moves()
        .iter()
        .map(|m| uci_of(&position, m))
        .collect();
    (Some(side), moves)
}
