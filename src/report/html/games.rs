//! The games list (filterable), the viewer's empty frame, and each game's packed data block.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{
    ReportError,
    markup::{Element, el},
    pack, svg,
};
use crate::{
    board::Game,
    engine::Score,
    leaderboard::llm_chess,
    llm::PriceTable,
    store::{GameRow, LlmCallRow, PlyAnalysisRecord, Store, TournamentRow},
};

pub(super) fn list(
    store: &Store,
    t: &TournamentRow,
    games: &[GameRow],
) -> Result<Element, ReportError> {
    let mut div = el("div")
        .class("games")
        .id(format!("games-{}", t.id))
        .child(el("h3").text("Games"));
    if games.is_empty() {
        div.push(
            el("p")
                .class("empty")
                .text("No games: this tournament has no scheduled game yet."),
        );
        return Ok(div);
    }
    let players: BTreeSet<&str> = games
        .iter()
        .flat_map(|g| [g.white.as_str(), g.black.as_str()])
        .collect();
    let terminations: BTreeSet<&str> = games
        .iter()
        .map(|g| g.termination.as_deref().unwrap_or(g.status.as_str()))
        .collect();
    let select = |name: &'static str, label: &str, options: Vec<(String, String)>| {
        let mut s = el("select").attr("data-filter", name);
        for (value, text) in options {
            s.push(el("option").attr("value", value).text(text));
        }
        el("label").text(format!("{label} ")).child(s)
    };
    let any = || (String::new(), "any".to_owned());
    let filters = el("div")
        .class("filters")
        .child(select(
            "player",
            "player",
            std::iter::once(any())
                .chain(players.iter().map(|p| ((*p).to_owned(), (*p).to_owned())))
                .collect(),
        ))
        .child(select(
            "colour",
            "playing",
            vec![
                (String::new(), "either colour".into()),
                ("white".into(), "White".into()),
                ("black".into(), "Black".into()),
            ],
        ))
        .child(select(
            "result",
            "result",
            vec![
                any(),
                ("1-0".into(), "1-0".into()),
                ("0-1".into(), "0-1".into()),
                ("1/2-1/2".into(), "½-½".into()),
                ("won".into(), "won by the player".into()),
                ("lost".into(), "lost by the player".into()),
                ("none".into(), "unfinished".into()),
            ],
        ))
        .child(select(
            "termination",
            "termination",
            std::iter::once(any())
                .chain(
                    terminations
                        .iter()
                        .map(|t| ((*t).to_owned(), t.replace('_', " "))),
                )
                .collect(),
        ))
        .child(
            el("span")
                .class("count")
                .text(format!("{} games", games.len())),
        );
    div.push(filters);

    let analysed: BTreeSet<i64> = store.analysed_games(t.id)?.into_iter().collect();
    let prices = llm_chess::prices(t);
    // The adjudication engine's verdicts at the move limit get their own column, shown only
    // when a game has one: they never change the result column.
    let any_limit = games.iter().any(|g| g.at_limit.is_some());
    let mut head = el("tr");
    for c in ["#", "round", "white", "black", "result", "termination"] {
        head.push(el("th").text(c));
    }
    if any_limit {
        head.push(el("th").text("at limit"));
    }
    for c in ["plies", "opening", "analysis"] {
        head.push(el("th").text(c));
    }
    let mut body = el("tbody");
    let mut blocks = el("div").class("game-data");
    for g in games {
        let result = g.result.clone().unwrap_or_else(|| "*".to_owned());
        let termination = g
            .termination
            .clone()
            .unwrap_or_else(|| g.status.as_str().to_owned());
        let mut tr = el("tr")
            .class("game")
            .attr("data-game", g.id)
            .attr("data-white", &g.white)
            .attr("data-black", &g.black)
            .attr("data-result", g.result.as_deref().unwrap_or("none"))
            .attr("data-termination", &termination)
            .attr("tabindex", 0)
            .child(
                el("td").class("num").child(
                    el("a")
                        .attr("href", format!("#game={}", g.id))
                        .text(g.index.to_string()),
                ),
            )
            .child(el("td").class("num").text(g.round.to_string()))
            .child(el("td").text(g.white.clone()))
            .child(el("td").text(g.black.clone()))
            .child(el("td").text(result))
            .child(el("td").text(termination.replace('_', " ")));
        if any_limit {
            tr.push(el("td").text(g.at_limit.clone().unwrap_or_default()));
        }
        body.push(
            tr.child(el("td").class("num").text(g.ply_count.to_string()))
                .child(el("td").text(g.opening_label.clone().unwrap_or_default()))
                .child(el("td").text(if analysed.contains(&g.id) { "yes" } else { "-" })),
        );
        blocks.push(
            el("script")
                .attr("type", "application/x-arena-game")
                .attr("data-encoding", "gzip+base64")
                .id(format!("gd-{}", g.id))
                .child(pack(&game_data(store, t, g, &prices)?)),
        );
    }
    div.push(
        el("table")
            .class("game-list")
            .child(el("thead").child(head))
            .child(body),
    );
    div.push(blocks);
    Ok(div)
}

/// The viewer's frame, filled by the script when a game opens.
pub(super) fn viewer() -> Element {
    let button = |id: &str, label: &str, title: &str| {
        el("button")
            .id(id)
            .attr("type", "button")
            .attr("title", title)
            .text(label)
    };
    el("div")
        .id("viewer")
        .attr("hidden", "")
        .attr("role", "dialog")
        .attr("aria-label", "game viewer")
        .child(
            el("div")
                .class("viewer-head")
                .child(el("h3").id("v-title"))
                .child(el("p").id("v-sub"))
                .child(button("v-close", "✕ close", "back to the games (Esc)")),
        )
        .child(
            el("div")
                .class("viewer-body")
                .child(
                    el("div")
                        .class("v-left")
                        .child(svg::board())
                        .child(
                            el("div")
                                .class("controls")
                                .child(button("v-first", "«", "start (Home)"))
                                .child(button("v-prev", "◀", "previous ply (←)"))
                                .child(button("v-next", "▶", "next ply (→)"))
                                .child(button("v-last", "»", "end (End)"))
                                .child(button("v-flip", "⇅ flip", "flip the board"))
                                .child(
                                    el("label").text("ply ").child(
                                        el("input")
                                            .id("v-jump")
                                            .attr("type", "number")
                                            .attr("min", 0)
                                            .attr("value", 0),
                                    ),
                                ),
                        )
                        .child(el("p").id("v-fen").class("fen"))
                        .child(el("div").id("v-graph").class("graph"))
                        .child(el("ol").id("v-moves").class("moves")),
                )
                .child(
                    el("div")
                        .class("v-right")
                        .child(el("div").id("v-end").class("end"))
                        .child(el("h4").id("v-ply-title"))
                        .child(el("div").id("v-ply")),
                ),
        )
}

/// Everything the viewer shows of one game, as JSON. Evaluations are from White's view: `w` is
/// White's Win% after the ply (0–100), `cp`/`mate` the engine's score after it.
fn game_data(
    store: &Store,
    t: &TournamentRow,
    g: &GameRow,
    prices: &PriceTable,
) -> Result<Value, ReportError> {
    let plies = store.plies(g.id)?;
    let analysis: BTreeMap<u32, PlyAnalysisRecord> = store
        .ply_analyses(g.id)?
        .into_iter()
        .map(|a| (a.ply, a))
        .collect();
    let mut calls: BTreeMap<u32, Vec<LlmCallRow>> = BTreeMap::new();
    for c in store.game_calls(g.id)? {
        calls.entry(c.call.ply).or_default().push(c);
    }
    let start_fen = plies
        .first()
        .map(|p| p.fen_before.clone())
        .or_else(|| g.start_fen.clone())
        .unwrap_or_else(|| {
            Game::new_in(g.variant, None, 0)
                .map(|g| g.fen())
                .unwrap_or_default()
        });
    let mut out_plies = Vec::with_capacity(plies.len());
    let mut w0 = None;
    for p in &plies {
        // Replayed under the game's rules: a Chess960 castling (king takes rook) moves both pieces
        // to their castled squares, which the viewer then draws from this FEN.
        let fen_after = Game::new_in(g.variant, Some(&p.fen_before), 0)
            .ok()
            .and_then(|mut game| game.play_uci(&p.uci).ok().map(|_| game.fen()));
        let white_moved = p.fen_before.split(' ').nth(1) != Some("b");
        let a = analysis.get(&p.ply).map(|a| {
            let white = |mover_view: f64| {
                if white_moved {
                    mover_view
                } else {
                    100.0 - mover_view
                }
            };
            if w0.is_none() && p.ply == plies[0].ply {
                w0 = Some(round1(white(a.win_before)));
            }
            // eval_after is from the side to move after the ply: the opponent of the mover.
            let sign = if white_moved { -1 } else { 1 };
            let (cp, mate) = match a.eval_after {
                Score::Cp(c) => (Some(sign * c), None),
                Score::Mate(m) => (None, Some(sign * m)),
            };
            json!({
                "w": round1(white(a.win_after)),
                "cp": cp, "mate": mate,
                "cls": a.classification, "best": a.best, "loss": a.cp_loss,
                "rank": a.played_rank, "phase": a.phase,
            })
        });
        out_plies.push(json!({
            "n": p.ply, "san": p.san, "uci": p.uci, "fen": fen_after, "before": p.fen_before,
            "player": p.player, "attempts": p.attempts, "ms": p.elapsed_ms, "a": a,
            "calls": calls.remove(&p.ply).unwrap_or_default().iter().map(|c| call_json(c, prices)).collect::<Vec<_>>(),
        }));
    }
    // Calls for plies that never produced a move: the forfeited (or interrupted) last ply.
    let pending: Vec<Value> = calls
        .into_iter()
        .map(|(ply, cs)| {
            json!({
                "n": ply,
                "calls": cs.iter().map(|c| call_json(c, prices)).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({
        "id": g.id, "index": g.index, "round": g.round, "tournament": t.name,
        "white": g.white, "black": g.black,
        "status": g.status.as_str(), "result": g.result, "termination": g.termination,
        "at_limit": g.at_limit,
        "reason": g.reason, "error": g.error, "error_kind": g.error_kind.map(|k| k.as_str()),
        "opening": g.opening_label, "generation": g.generation, "variant": g.variant.as_str(),
        "start": start_fen, "w0": w0, "plies": out_plies, "pending": pending,
    }))
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn call_json(c: &LlmCallRow, prices: &PriceTable) -> Value {
    let request: Value = serde_json::from_str(&c.call.request_json).unwrap_or(Value::Null);
    let messages = messages(&request);
    // The provider's own price when it sent one; else the table's (a reply without usage has
    // unknown tokens and so no table price).
    let cost = c.call.cost(prices);
    let d = &c.call.details;
    json!({
        "seq": c.call.seq, "player": c.call.player, "model": c.call.model,
        "role": request.get("arena_role"),
        "messages": messages,
        // The request as sent (keys already stripped), for what the messages do not show.
        "request": if messages.is_none() { Some(c.call.request_json.clone()) } else { None },
        "reply": c.call.reply_text, "reasoning": c.call.reasoning,
        "outcome": c.outcome, "detail": c.outcome_detail,
        "pt": c.call.prompt_tokens, "ct": c.call.completion_tokens, "ms": c.call.latency_ms,
        "cost": cost.usd, "cost_source": cost.source.name(),
        "cached": d.cached_tokens, "reasoning_tokens": d.reasoning_tokens,
        "finish": c.call.finish_reason, "http": c.call.http_status,
        "retries": c.call.transport_retries, "error": c.call.error, "at": c.created_at,
    })
}

/// The messages of a request in any of the wire formats, as `{role, content}`, or `None` when the
/// body has none that arena knows.
fn messages(request: &Value) -> Option<Vec<Value>> {
    let text = |v: &Value| -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str().or_else(|| p.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    };
    let mut out = Vec::new();
    // Anthropic's top-level system, Gemini's systemInstruction, the Responses API's instructions.
    for key in ["system", "instructions"] {
        if let Some(v) = request.get(key).filter(|v| !v.is_null()) {
            out.push(json!({"role": "system", "content": text(v)}));
        }
    }
    if let Some(v) = request.get("systemInstruction") {
        out.push(json!({"role": "system", "content": text(&v["parts"])}));
    }
    let list = request
        .get("messages")
        .or_else(|| request.get("input"))
        .and_then(Value::as_array);
    if let Some(list) = list {
        for m in list {
            out.push(json!({
                "role": m["role"].as_str().unwrap_or("?"),
                "content": text(&m["content"]),
            }));
        }
    } else if let Some(contents) = request.get("contents").and_then(Value::as_array) {
        for m in contents {
            out.push(json!({
                "role": m["role"].as_str().unwrap_or("user"),
                "content": text(&m["parts"]),
            }));
        }
    } else {
        return None;
    }
    Some(out)
}
