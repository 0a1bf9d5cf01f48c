//! The games list (filterable), the viewer's empty frame, and each game's packed data block.

use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet, HashMap},
};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json, value::RawValue};

use super::{
    ReportError, filters,
    markup::{Element, Node, el},
    pack, svg,
};
use crate::{
    board::Game,
    engine::Score,
    leaderboard::llm_chess,
    llm::PriceTable,
    store::{
        CallSummary, GameRow, GameStatus, LlmCallRow, PlyAnalysisRecord, PlyRecord, Store,
        TournamentRow,
    },
};

/// The games list with each game's data block, and the numbers of every call of the finished
/// games (in game, ply and seq order) for the overview's sums, taken from the rows the blocks
/// are made of.
pub(super) fn list(
    store: &Store,
    t: &TournamentRow,
    games: &[GameRow],
) -> Result<(Element, Vec<CallSummary>), ReportError> {
    let mut summaries = Vec::new();
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
        return Ok((div, summaries));
    }
    let players: BTreeSet<&str> = games
        .iter()
        .flat_map(|g| [g.white.as_str(), g.black.as_str()])
        .collect();
    let terminations: BTreeSet<&str> = games
        .iter()
        .map(|g| g.termination.as_deref().unwrap_or(g.status.as_str()))
        .collect();
    let bind = filters::Bind::Script;
    let filters = el("div")
        .class("filters")
        .child(filters::player(bind, None, players.iter().copied()))
        .child(filters::colour(bind, None))
        .child(filters::result(
            bind,
            None,
            &[("won", "won by the player"), ("lost", "lost by the player")],
        ))
        .child(filters::termination(
            bind,
            None,
            terminations.iter().copied(),
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
                .child(game_block(store, t, g, &prices, &mut summaries)?),
        );
    }
    // Games are listed in their own order; the sums add costs in the order of the store's call
    // summaries, so that a float total is the same to the last bit.
    summaries.sort_by_key(|c| c.game_id);
    div.push(
        el("table")
            .class("game-list")
            .child(el("thead").child(head))
            .child(body),
    );
    div.push(blocks);
    Ok((div, summaries))
}

/// The viewer's frame, filled by the script when a game opens.
pub fn viewer() -> Element {
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

/// Everything the viewer shows of one game, as packed JSON (see [`pack`]). Evaluations are from
/// White's view: `w` is White's Win% after the ply (0–100), `cp`/`mate` the engine's score after
/// it.
///
/// The JSON is written straight from the store's rows through the typed structs below, with no
/// `serde_json::Value` tree in between (building one and copying it into the next was most of
/// the report's cost). Their fields are in alphabetical order, the order `serde_json`'s maps keep,
/// so the bytes are the ones a `json!` object of the same fields gives.
fn game_block(
    store: &Store,
    t: &TournamentRow,
    g: &GameRow,
    prices: &PriceTable,
    summaries: &mut Vec<CallSummary>,
) -> Result<Node, ReportError> {
    with_game_data(store, t, g, prices, summaries, |data| pack(data))
}

/// One game's viewer data as JSON bytes (what the report packs into its block), for a server
/// that hands the viewer one game at a time.
///
/// # Errors
/// When the store cannot be read.
pub fn game_json(store: &Store, t: &TournamentRow, g: &GameRow) -> Result<Vec<u8>, ReportError> {
    let prices = llm_chess::prices(t);
    with_game_data(store, t, g, &prices, &mut Vec::new(), |data| {
        serde_json::to_vec(data).expect("the viewer's data always serialises")
    })
}

/// Reads one game's plies, analysis and calls and hands them, as the viewer's data, to `out`.
fn with_game_data<R>(
    store: &Store,
    t: &TournamentRow,
    g: &GameRow,
    prices: &PriceTable,
    summaries: &mut Vec<CallSummary>,
    out: impl FnOnce(&GameData<'_>) -> R,
) -> Result<R, ReportError> {
    let plies = store.plies(g.id)?;
    let analysis: BTreeMap<u32, PlyAnalysisRecord> = store
        .ply_analyses(g.id)?
        .into_iter()
        .map(|a| (a.ply, a))
        .collect();
    let mut calls: BTreeMap<u32, Vec<LlmCallRow>> = BTreeMap::new();
    let finished = g.status == GameStatus::Finished;
    for c in store.game_calls(g.id)? {
        if finished {
            summaries.push(summary(g.id, &c));
        }
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
    // Calls are made into data in the order the viewer reads them back (plies, then pending
    // plies), so that each message given as "as before" is found where the viewer looks.
    fn calls_of<'a>(
        cs: &'a [LlmCallRow],
        prices: &PriceTable,
        previous: &mut PreviousMessages<'a>,
    ) -> Vec<CallData<'a>> {
        cs.iter()
            .map(|c| {
                let mut data = call_data(c, prices);
                previous.mark_repeats(&c.call.player, &mut data.messages);
                data
            })
            .collect()
    }
    let mut previous = PreviousMessages::default();
    let mut out_plies = Vec::with_capacity(plies.len());
    let mut w0 = None;
    for (i, p) in plies.iter().enumerate() {
        // The position after a ply is the one the next ply was played from: the game loop stores
        // each ply's `fen_before` from the same game, so that string is the FEN a replay gives
        // (checked in debug builds) without parsing, playing and printing a FEN per ply (14 % of
        // the report's instructions). Only the last ply, or one before a gap, is replayed.
        let next = plies.get(i + 1).filter(|n| n.ply == p.ply + 1);
        let fen_after = match next {
            Some(n) => {
                debug_assert!(
                    replayed_fen(g, p).is_none_or(|f| f == n.fen_before),
                    "ply {} of game {}: the next ply's FEN is not the replayed one",
                    p.ply,
                    g.id
                );
                Some(n.fen_before.clone())
            }
            None => replayed_fen(g, p),
        };
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
        out_plies.push(PlyData {
            a,
            attempts: p.attempts,
            before: &p.fen_before,
            calls: calls
                .get(&p.ply)
                .map(|cs| calls_of(cs, prices, &mut previous))
                .unwrap_or_default(),
            fen: fen_after,
            ms: p.elapsed_ms,
            n: p.ply,
            player: &p.player,
            san: &p.san,
            uci: &p.uci,
        });
    }
    // Calls for plies that never produced a move: the forfeited (or interrupted) last ply.
    let played: BTreeSet<u32> = plies.iter().map(|p| p.ply).collect();
    let pending: Vec<PendingData<'_>> = calls
        .iter()
        .filter(|(ply, _)| !played.contains(ply))
        .map(|(ply, cs)| PendingData {
            calls: calls_of(cs, prices, &mut previous),
            n: *ply,
        })
        .collect();
    let images = shown_images(
        store,
        out_plies
            .iter()
            .flat_map(|p| &p.calls)
            .chain(pending.iter().flat_map(|p| &p.calls)),
    )?;
    Ok(out(&GameData {
        at_limit: g.at_limit.as_deref(),
        black: &g.black,
        error: g.error.as_deref(),
        error_kind: g.error_kind.map(|k| k.as_str()),
        generation: g.generation,
        id: g.id,
        images,
        index: g.index,
        opening: g.opening_label.as_deref(),
        pending,
        plies: out_plies,
        reason: g.reason.as_deref(),
        result: g.result.as_deref(),
        round: g.round,
        start: start_fen,
        status: g.status.as_str(),
        termination: g.termination.as_deref(),
        tournament: &t.name,
        variant: g.variant.as_str(),
        w0,
        white: &g.white,
    }))
}

/// One game as the viewer reads it (fields in `serde_json`'s key order: see [`game_block`]).
#[derive(Serialize)]
struct GameData<'a> {
    at_limit: Option<&'a str>,
    black: &'a str,
    error: Option<&'a str>,
    error_kind: Option<&'static str>,
    generation: Option<u64>,
    id: i64,
    /// The pictures the game's messages showed, by SHA-256, as `data:` URLs: each once, however
    /// many requests showed it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    images: BTreeMap<String, String>,
    index: u32,
    opening: Option<&'a str>,
    pending: Vec<PendingData<'a>>,
    plies: Vec<PlyData<'a>>,
    reason: Option<&'a str>,
    result: Option<&'a str>,
    round: u32,
    start: String,
    status: &'a str,
    termination: Option<&'a str>,
    tournament: &'a str,
    variant: &'static str,
    w0: Option<f64>,
    white: &'a str,
}

/// One ply: the move, its analysis (`a`) and its calls.
#[derive(Serialize)]
struct PlyData<'a> {
    a: Option<Value>,
    attempts: u32,
    before: &'a str,
    calls: Vec<CallData<'a>>,
    fen: Option<String>,
    ms: u64,
    n: u32,
    player: &'a str,
    san: &'a str,
    uci: &'a str,
}

/// The calls of a ply that produced no move.
#[derive(Serialize)]
struct PendingData<'a> {
    calls: Vec<CallData<'a>>,
    n: u32,
}

/// One model call: what was sent, what came back, and what it cost.
#[derive(Serialize)]
struct CallData<'a> {
    at: &'a str,
    cached: Option<u64>,
    cost: Option<f64>,
    cost_source: &'static str,
    ct: Option<u64>,
    detail: Option<&'a str>,
    error: Option<&'a str>,
    finish: Option<&'a str>,
    http: Option<u16>,
    messages: Option<Vec<Shown<'a>>>,
    model: &'a str,
    ms: u64,
    outcome: Option<&'a str>,
    player: &'a str,
    pt: Option<u64>,
    reasoning: Option<&'a str>,
    reasoning_tokens: Option<u64>,
    /// The reply's text, with its tool calls as `→ name(arguments)` lines.
    reply: Option<Cow<'a, str>>,
    /// The request as sent (keys already stripped), for what the messages do not show.
    request: Option<&'a str>,
    retries: u32,
    role: Option<Value>,
    seq: u32,
}

/// A message of a call as the viewer gets it: in full, or as `{"as_before": true}` when it is
/// the same as the message at its place in the same player's previous call of the game (the
/// viewer puts it back when it reads the game). The system prompt repeats at every ply: it was
/// a third of a game block's bytes before compression, and a fifth of gzip's time.
enum Shown<'a> {
    Message(Message<'a>),
    AsBefore,
}

impl Serialize for Shown<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Shown::Message(m) => m.serialize(s),
            Shown::AsBefore => {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("as_before", &true)?;
                map.end()
            }
        }
    }
}

/// The messages of each player's previous call in a game, by their stored JSON texts (`role`,
/// `content`); `None` for a message whose texts are not stored JSON, which is never marked.
#[derive(Default)]
struct PreviousMessages<'a>(HashMap<&'a str, Vec<Option<(&'a str, &'a str)>>>);

impl<'a> PreviousMessages<'a> {
    /// Marks each of `messages` (a call of `player`, all in full) that repeats the previous
    /// call's message at its place as [`Shown::AsBefore`], and remembers these as the previous.
    fn mark_repeats(&mut self, player: &'a str, messages: &mut Option<Vec<Shown<'a>>>) {
        let Some(messages) = messages else {
            return;
        };
        let texts: Vec<_> = messages
            .iter()
            .map(|m| match m {
                // A message with pictures is always sent in full: its text alone may repeat.
                Shown::Message(Message {
                    content: Text::Json(content),
                    images,
                    role: Text::Json(role),
                }) if images.is_empty() => Some((role.get(), content.get())),
                _ => None,
            })
            .collect();
        if let Some(before) = self.0.get(player) {
            for ((shown, texts), before) in messages.iter_mut().zip(&texts).zip(before) {
                if texts.is_some() && texts == before {
                    *shown = Shown::AsBefore;
                }
            }
        }
        self.0.insert(player, texts);
    }
}

/// A message of a request, as `{role, content}`, and the SHA-256 of each picture it showed
/// (the game's `images` maps them to the pictures).
#[derive(Serialize)]
struct Message<'a> {
    content: Text<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<String>,
    role: Text<'a>,
}

/// A picture as a stored request names it (`llm::Image`'s serialised form).
#[derive(Deserialize)]
struct ImageRef {
    sha256: String,
}

/// A text of a request as the viewer gets it: the JSON string stored in the request when it is
/// exactly what `serde_json` would write for its text (copied as it is, neither unescaped nor
/// escaped again), else the text itself.
enum Text<'a> {
    /// A JSON string literal in `serde_json`'s own escaping (see [`canonical_string`]).
    Json(&'a RawValue),
    /// The text, escaped when written.
    Plain(String),
}

impl Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Text::Json(raw) => raw.serialize(s),
            Text::Plain(text) => s.serialize_str(text),
        }
    }
}

impl From<&str> for Text<'_> {
    fn from(s: &str) -> Self {
        Text::Plain(s.to_owned())
    }
}

/// Whether `raw`, a JSON string literal, is written exactly as `serde_json` writes its text:
/// only `"`, `\` and control characters escaped, as `\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r` or
/// else `\u00xx` in lowercase hexadecimal. A request arena built itself always is; a stored
/// request from elsewhere (`\/`, `\u00e9`) takes the slow path, which gives the same bytes.
fn canonical_string(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'"' {
        return false;
    }
    let mut at = 1;
    while let Some(found) = memchr::memchr(b'\\', &bytes[at..]) {
        let escape = at + found + 1;
        match bytes.get(escape) {
            Some(b'"' | b'\\' | b'b' | b't' | b'n' | b'f' | b'r') => at = escape + 1,
            Some(b'u') => {
                let code = bytes.get(escape + 1..escape + 5);
                let ok = code.is_some_and(|c| {
                    c[0] == b'0'
                        && c[1] == b'0'
                        && matches!(c[2], b'0' | b'1')
                        && matches!(c[3], b'0'..=b'9' | b'a'..=b'f')
                        && !matches!((c[2], c[3]), (b'0', b'8' | b'9' | b'a' | b'c' | b'd'))
                });
                if !ok {
                    return false;
                }
                at = escape + 5;
            }
            _ => return false,
        }
    }
    true
}

/// A request's top-level keys that [`fast_messages`] reads; any of the last three present
/// (even as `null`) sends the request down the general path.
#[derive(Deserialize)]
struct ChatRequest<'a> {
    #[serde(borrow)]
    messages: Option<Vec<ChatMessage<'a>>>,
    #[serde(borrow)]
    arena_role: Option<&'a RawValue>,
    #[serde(default)]
    system: Present,
    #[serde(default)]
    instructions: Present,
    #[serde(default, rename = "systemInstruction")]
    system_instruction: Present,
}

/// Whether a key is there at all, whatever its value (a `null` included, which `Option` would
/// read as absent).
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Present(true))
    }
}

/// One message of a chat request, read only from an object (a list in its place is not one).
struct ChatMessage<'a> {
    role: Option<&'a RawValue>,
    content: Option<&'a RawValue>,
    /// The pictures a message showed, as stored: `[{"media_type": ..., "sha256": ...}]`.
    images: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for ChatMessage<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = ChatMessage<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut m = ChatMessage {
                    role: None,
                    content: None,
                    images: None,
                };
                // A repeated key: the last one, as a `Value` map keeps it.
                while let Some(key) = map.next_key::<&str>()? {
                    match key {
                        "role" => m.role = Some(map.next_value()?),
                        "content" => m.content = Some(map.next_value()?),
                        "images" => m.images = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(m)
            }
        }
        d.deserialize_map(Fields)
    }
}

/// The FEN after ply `p`, replayed under the game's rules: a Chess960 castling (king takes rook)
/// moves both pieces to their castled squares, which the viewer then draws from this FEN.
fn replayed_fen(g: &GameRow, p: &PlyRecord) -> Option<String> {
    Game::new_in(g.variant, Some(&p.fen_before), 0)
        .ok()
        .and_then(|mut game| game.play_uci(&p.uci).ok().map(|_| game.fen()))
}

/// The pictures the messages of `calls` showed, read from the store once each, as `data:` URLs
/// by SHA-256. A picture the store lacks is left out (the viewer says so where it was shown).
fn shown_images<'a>(
    store: &Store,
    calls: impl Iterator<Item = &'a CallData<'a>>,
) -> Result<BTreeMap<String, String>, ReportError> {
    let mut images = BTreeMap::new();
    for c in calls {
        for m in c.messages.iter().flatten() {
            let Shown::Message(m) = m else { continue };
            for sha in &m.images {
                if images.contains_key(sha) {
                    continue;
                }
                if let Some(image) = store.image(sha)? {
                    images.insert(sha.clone(), image.data_url());
                }
            }
        }
    }
    Ok(images)
}

/// What [`Store::call_summaries`] reads of a call, from the call's whole row.
fn summary(game_id: i64, c: &LlmCallRow) -> CallSummary {
    CallSummary {
        game_id,
        ply: c.call.ply,
        player: c.call.player.clone(),
        model: c.call.model.clone(),
        prompt_tokens: c.call.prompt_tokens,
        completion_tokens: c.call.completion_tokens,
        details: c.call.details.clone(),
        outcome: c.outcome.clone(),
        latency_ms: c.call.latency_ms,
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn call_data<'a>(c: &'a LlmCallRow, prices: &PriceTable) -> CallData<'a> {
    let (messages, role) = chat_messages(&c.call.request_json).unwrap_or_else(|| {
        let mut request: Value = serde_json::from_str(&c.call.request_json).unwrap_or(Value::Null);
        let role = request.get_mut("arena_role").map(Value::take);
        (messages(request), role)
    });
    // The provider's own price when it sent one; else the table's (a reply without usage has
    // unknown tokens and so no table price).
    let cost = c.call.cost(prices);
    let d = &c.call.details;
    CallData {
        at: &c.created_at,
        cached: d.cached_tokens,
        cost: cost.usd,
        cost_source: cost.source.name(),
        ct: c.call.completion_tokens,
        detail: c.outcome_detail.as_deref(),
        error: c.call.error.as_deref(),
        finish: c.call.finish_reason.as_deref(),
        http: c.call.http_status,
        request: messages.is_none().then_some(c.call.request_json.as_str()),
        messages: messages.map(|ms| ms.into_iter().map(Shown::Message).collect()),
        model: &c.call.model,
        ms: c.call.latency_ms,
        outcome: c.outcome.as_deref(),
        player: &c.call.player,
        pt: c.call.prompt_tokens,
        reasoning: c.call.reasoning.as_deref(),
        reasoning_tokens: d.reasoning_tokens,
        reply: shown_reply(c),
        retries: c.call.transport_retries,
        role,
        seq: c.call.seq,
    }
}

/// The reply of a call as the transcript shows it: its text and, when it called tools, a line
/// per call (a reply that only called tools has no text of its own).
fn shown_reply(c: &LlmCallRow) -> Option<Cow<'_, str>> {
    let calls = c
        .call
        .raw_body
        .as_deref()
        .map(crate::llm::tool_calls_in_body)
        .unwrap_or_default();
    if calls.is_empty() {
        return c.call.reply_text.as_deref().map(Cow::Borrowed);
    }
    let text = c.call.reply_text.as_deref().unwrap_or_default();
    Some(Cow::Owned(crate::llm::reply_with_calls(text, &calls)))
}

/// The messages and `arena_role` of an OpenAI chat request (the common case) read without a
/// `Value` tree, their texts borrowed from the stored request; `None` when the request has any
/// other shape, which [`messages`] then reads. Both give the same JSON.
///
/// Why: parsing every request into a tree, unescaping its texts and escaping them again was a
/// quarter of the report's instructions; the texts are most of a game block's bytes.
fn chat_messages(json: &str) -> Option<(Option<Vec<Message<'_>>>, Option<Value>)> {
    // Only an object: serde's derived structs would also read a list.
    if !json.trim_start().starts_with('{') {
        return None;
    }
    let request: ChatRequest<'_> = serde_json::from_str(json).ok()?;
    if request.system.0 || request.instructions.0 || request.system_instruction.0 {
        return None;
    }
    let mut out = Vec::new();
    for m in request.messages? {
        let role = match m.role {
            Some(raw) if raw.get().starts_with('"') => text(raw)?,
            _ => "?".into(),
        };
        let content = match m.content {
            None => "".into(),
            Some(raw) if raw.get() == "null" => "".into(),
            Some(raw) if raw.get().starts_with('"') => text(raw)?,
            // Parts or other values: the general path joins or prints them.
            Some(_) => return None,
        };
        let images = match m.images {
            None => Vec::new(),
            Some(raw) => serde_json::from_str::<Vec<ImageRef>>(raw.get())
                .ok()?
                .into_iter()
                .map(|i| i.sha256)
                .collect(),
        };
        out.push(Message {
            content,
            images,
            role,
        });
    }
    let role = match request.arena_role {
        Some(raw) => Some(serde_json::from_str(raw.get()).ok()?),
        None => None,
    };
    Some((Some(out), role))
}

/// A JSON string literal as a [`Text`]: copied when in `serde_json`'s escaping, else decoded.
fn text(raw: &RawValue) -> Option<Text<'_>> {
    if canonical_string(raw.get()) {
        Some(Text::Json(raw))
    } else {
        serde_json::from_str(raw.get()).ok().map(Text::Plain)
    }
}

/// The messages of a request in any of the wire formats, as `{role, content}`, or `None` when the
/// body has none that arena knows. Takes the request apart: its texts are moved, not copied.
fn messages(mut request: Value) -> Option<Vec<Message<'static>>> {
    fn text(v: Value) -> String {
        match v {
            Value::String(s) => s,
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str().or_else(|| p.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }
    fn field(v: &mut Value, key: &str) -> Value {
        v.get_mut(key).map(Value::take).unwrap_or(Value::Null)
    }
    let system = |content| Message {
        role: "system".into(),
        content: Text::Plain(content),
        images: Vec::new(),
    };
    let mut out = Vec::new();
    // Anthropic's top-level system, Gemini's systemInstruction, the Responses API's instructions.
    for key in ["system", "instructions"] {
        if let Some(v) = request.get_mut(key).filter(|v| !v.is_null()) {
            out.push(system(text(v.take())));
        }
    }
    if let Some(v) = request.get_mut("systemInstruction") {
        out.push(system(text(field(v, "parts"))));
    }
    let role = |m: &Value, default: &str| m["role"].as_str().unwrap_or(default).to_owned();
    let list = if request.get("messages").is_some() {
        field(&mut request, "messages")
    } else {
        field(&mut request, "input")
    };
    if let Value::Array(list) = list {
        for mut m in list {
            let images = serde_json::from_value::<Vec<ImageRef>>(field(&mut m, "images"))
                .map(|list| list.into_iter().map(|i| i.sha256).collect())
                .unwrap_or_default();
            out.push(Message {
                role: Text::Plain(role(&m, "?")),
                content: Text::Plain(text(field(&mut m, "content"))),
                images,
            });
        }
    } else if let Some(Value::Array(contents)) = request.get_mut("contents").map(Value::take) {
        for mut m in contents {
            out.push(Message {
                role: Text::Plain(role(&m, "user")),
                content: Text::Plain(text(field(&mut m, "parts"))),
                images: Vec::new(),
            });
        }
    } else {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Text, canonical_string, chat_messages, messages};

    fn plain(t: Text<'_>) -> String {
        match t {
            Text::Json(raw) => serde_json::from_str(raw.get()).unwrap(),
            Text::Plain(s) => s,
        }
    }

    /// The messages as `(role, content)` pairs.
    fn read(request: serde_json::Value) -> Option<Vec<(String, String)>> {
        messages(request).map(|ms| {
            ms.into_iter()
                .map(|m| (plain(m.role), plain(m.content)))
                .collect()
        })
    }

    /// What the viewer gets of a request's messages and `arena_role`, through the general path.
    fn general(json: &str) -> String {
        let mut request: serde_json::Value =
            serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
        let role = request.get_mut("arena_role").map(serde_json::Value::take);
        serde_json::to_string(&(messages(request), role)).unwrap()
    }

    #[test]
    fn chat_requests_read_without_a_tree_give_the_same_json() {
        // Read by the fast path: texts with every escape serde_json writes, others that it does
        // not write (decoded, then escaped again), repeated keys, odd roles, unknown keys.
        let fast = [
            r#"{"model":"m","messages":[{"role":"system","content":"a \"b\" \\ \n\t\r\b\f \u0000\u001f\u007f é"},{"role":"user","content":"x"}],"max_tokens":5}"#,
            r#"{"messages":[{"role":"user","content":"\/ \u00e9 \ud83d\ude00 \u000A \u0008"}]}"#,
            r#"{"messages":[{"content":"c","role":"user","content":"d","name":"n"}],"arena_role":"judge"}"#,
            r#"{"messages":[{"role":7,"content":null},{"role":null},{}],"arena_role":{"k":[1, 2]}}"#,
            r#"{"messages":[],"arena_role":null,"input":[{"role":"user","content":"i"}]}"#,
            r#" {"messages":[{"role":"user","content":"ok"}]}"#,
        ];
        for json in fast {
            let read = chat_messages(json).unwrap_or_else(|| panic!("not read: {json}"));
            assert_eq!(
                serde_json::to_string(&read).unwrap(),
                general(json),
                "{json}"
            );
        }
        // Left to the general path: other shapes, parts, system keys (even null), a message
        // that is not an object, duplicate top-level keys, a key with an escape, bad JSON.
        let general_only = [
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}"#,
            r#"{"system":null,"messages":[{"role":"user","content":"u"}]}"#,
            r#"{"instructions":"i","messages":[]}"#,
            r#"{"systemInstruction":null,"messages":[]}"#,
            r#"{"messages":[["user","x"]]}"#,
            r#"{"messages":[],"messages":[]}"#,
            r#"{"messages":[{"r\u006fle":"user","content":"x"}]}"#,
            r#"{"messages":null,"contents":[{"parts":"p"}]}"#,
            r#"{"contents":[{"parts":[{"text":"u"}]}]}"#,
            r#"[{"messages":[]}]"#,
            r#"{"messages":[{"role":"user","content":5}]}"#,
            "{",
        ];
        for json in general_only {
            assert!(chat_messages(json).is_none(), "{json}");
        }
    }

    #[test]
    fn only_serde_jsons_own_escaping_is_copied() {
        for canonical in [r#""""#, r#""a""#, r#""\" \\ \n \u0000 \u001f \u000b é""#] {
            assert!(canonical_string(canonical), "{canonical}");
        }
        for other in [
            r#""\/""#,
            r#""\u00e9""#,
            r#""\u000A""#,
            r#""\u0008""#,
            r#""\u000a""#,
            r#""\u0020""#,
            r#""\u00""#,
            "x",
            "",
        ] {
            assert!(!canonical_string(other), "{other}");
        }
        // Every control character and every escape serde_json writes is copied as written.
        for c in (0u8..0x80).map(char::from).chain(['é', '\u{2028}']) {
            let json = serde_json::to_string(&c.to_string()).unwrap();
            assert!(canonical_string(&json), "{json}");
        }
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            list.iter()
                .map(|(r, c)| ((*r).to_owned(), (*c).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn the_messages_of_every_wire_format_are_read() {
        // OpenAI chat: content as text or as parts; a missing role or content.
        let chat = json!({"model": "m", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, "b", {"image": 1}]},
            {"content": 7}, {"role": "assistant"},
        ]});
        assert_eq!(
            read(chat),
            pairs(&[
                ("system", "be brief"),
                ("user", "a\nb"),
                ("?", "7"),
                ("assistant", "")
            ])
        );
        // Anthropic: a top-level system; the Responses API: instructions and input.
        let anthropic =
            json!({"system": [{"text": "s"}], "messages": [{"role": "user", "content": "u"}]});
        assert_eq!(read(anthropic), pairs(&[("system", "s"), ("user", "u")]));
        let responses = json!({"instructions": "i", "input": [{"role": "user", "content": "u"}]});
        assert_eq!(read(responses), pairs(&[("system", "i"), ("user", "u")]));
        // Gemini: systemInstruction (even a null one) and contents with parts.
        let gemini = json!({"systemInstruction": {"parts": [{"text": "s"}]},
            "contents": [{"parts": [{"text": "u"}]}, {"role": "model", "parts": [{"text": "m"}]}]});
        assert_eq!(
            read(gemini),
            pairs(&[("system", "s"), ("user", "u"), ("model", "m")])
        );
        let null_instruction = json!({"systemInstruction": null, "contents": []});
        assert_eq!(read(null_instruction), pairs(&[("system", "")]));
        // `messages` wins over `input` even when it is not a list; then `contents` is read.
        let odd = json!({"messages": null, "input": [{"role": "user", "content": "x"}],
            "contents": [{"parts": "p"}]});
        assert_eq!(read(odd), pairs(&[("user", "p")]));
        // A null system is no message; a body without messages has none to show.
        assert_eq!(read(json!({"system": null, "prompt": "x"})), None);
        assert_eq!(read(serde_json::Value::Null), None);
        assert_eq!(read(json!([1, 2])), None);
    }
}
