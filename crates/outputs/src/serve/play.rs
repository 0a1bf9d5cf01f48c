//! Playing a model yourself: the board page of a game an `arena.human` player plays, its state,
//! and the person's moves, resignation and draw offers.
//!
//! `arena run` owns the game and waits for the person's moves (see
//! [`crate::tournament::human`]); this server only checks a move against the stored game and
//! writes it into the store, through the store's API, for the run to play. So either process
//! may be killed, and the page closed, at any time: the game goes on from the stored moves.
//!
//! Safety: every request that writes needs the server's write token, always (on loopback too),
//! as `Authorization: Bearer TOKEN` or the `arena_write` cookie that opening the address `arena
//! serve` prints (`/play?token=TOKEN`) sets (HttpOnly, SameSite=Strict, so another site's page
//! cannot send it; writes also take only a JSON body, which a plain form cannot send). The token
//! is in no page, no store and no log. The board is lichess's chessground, vendored under
//! `crates/outputs/src/serve/vendor/chessground` (see its PROVENANCE) and served from here; its pieces are
//! `data:` images, so the play pages' content security policy allows `data:` images and nothing
//! else more. Every text from the store reaches the page as JSON and is set with `textContent`.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use axum::{
    Json,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Redirect, Response},
};
use serde::Deserialize;
use serde_json::json;
use shakmaty::{Color, Position};

use super::{App, ServeError};
use crate::{
    board::{
        Game,
        clock::{Clock, GameClocks},
    },
    report::html::{
        self,
        markup::{Element, el},
    },
    store::{GameFilter, GameRow, GameStatus, HumanAction, PageFrom, PlayerRow, PlyRecord, Store},
};

/// The play page's script.
pub(super) const PLAY_SCRIPT: &str = include_str!("play.js");
/// The play page's styles.
pub(super) const PLAY_STYLE: &str = include_str!("play.css");

/// The cookie that carries the write token.
const WRITE_COOKIE: &str = "arena_write";

/// The play pages' content security policy: the server's own policy, with `data:` images for
/// chessground's board and pieces.
pub(super) const PLAY_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// The vendored chessground files, by the name they are served under.
pub(super) fn vendor_asset(name: &str) -> Option<(&'static str, &'static str)> {
    const JS: &str = "text/javascript; charset=utf-8";
    const CSS: &str = "text/css; charset=utf-8";
    Some(match name {
        "chessground.js" => (include_str!("vendor/chessground/chessground.min.js"), JS),
        "chessground.base.css" => (include_str!("vendor/chessground/chessground.base.css"), CSS),
        "chessground.brown.css" => (
            include_str!("vendor/chessground/chessground.brown.css"),
            CSS,
        ),
        "chessground.cburnett.css" => (
            include_str!("vendor/chessground/chessground.cburnett.css"),
            CSS,
        ),
        "play.js" => (PLAY_SCRIPT, JS),
        "play.css" => (PLAY_STYLE, CSS),
        _ => return None,
    })
}

/// A play page: the report's and chessground's styles, the CSP that allows `data:` images.
fn play_page(title: &str, body: Element) -> Response {
    let mut head = el("head")
        .child(el("meta").attr("charset", "utf-8"))
        .child(
            el("meta")
                .attr("name", "viewport")
                .attr("content", "width=device-width, initial-scale=1"),
        )
        .child(el("title").text(title.to_owned()));
    for sheet in [
        "viewer.css",
        "serve.css",
        "chessground.base.css",
        "chessground.brown.css",
        "chessground.cburnett.css",
        "play.css",
    ] {
        head = head.child(
            el("link")
                .attr("rel", "stylesheet")
                .attr("href", format!("/assets/{sheet}")),
        );
    }
    let page = el("html").attr("lang", "en").child(head).child(body);
    (
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, PLAY_CSP),
        ],
        Html(html::markup::document(page)),
    )
        .into_response()
}

/// The query of `/play`.
#[derive(Deserialize)]
pub(super) struct TokenQuery {
    token: Option<String>,
}

/// `/play`: the games people play that are not over, each linking to its board. Opened with
/// `?token=TOKEN` (the address `arena serve` prints), it keeps the write token in a cookie and
/// sends the browser on to the same page without it, so the token leaves the address bar.
pub(super) async fn index(
    State(app): State<Arc<App>>,
    Query(q): Query<TokenQuery>,
) -> Result<Response, ServeError> {
    if let Some(token) = q.token {
        let mut response = Redirect::to("/play").into_response();
        if let Some(write) = &app.config.write_token
            && super::same(&token, write)
            && let Ok(cookie) = HeaderValue::from_str(&format!(
                "{WRITE_COOKIE}={write}; Path=/; HttpOnly; SameSite=Strict"
            ))
        {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
        return Ok(response);
    }
    let games = app
        .read(|store| {
            let mut out = Vec::new();
            for t in store.tournaments()? {
                for p in store
                    .players(t.id)?
                    .into_iter()
                    .filter(|p| p.kind == "human")
                {
                    let filter = GameFilter {
                        player: Some(p.name.clone()),
                        result: Some("none".into()),
                        ..GameFilter::default()
                    };
                    for g in store.games_page(t.id, &filter, PageFrom::Start, 100)? {
                        out.push((t.name.clone(), p.name.clone(), g));
                    }
                }
            }
            Ok(out)
        })
        .await?;
    let list = if games.is_empty() {
        el("p").class("note").text(
            "No game of a person (arena.human) is waiting: start `arena run` on a tournament with one.",
        )
    } else {
        el("ul")
            .id("play-games")
            .children(games.iter().map(|(t, p, g)| {
                el("li").child(
                    el("a")
                        .attr("href", format!("/play/{}", g.id))
                        .attr("data-game", g.id)
                        .text(format!(
                            "{t} · game {} · {} – {} ({p} plays) · {}",
                            g.id,
                            g.white,
                            g.black,
                            g.status.as_str()
                        )),
                )
            }))
    };
    let body = el("body")
        .child(
            el("header")
                .child(el("h1").text("arena · play"))
                .child(el("nav").child(el("a").attr("href", "/").text("all tournaments and runs"))),
        )
        .child(el("main").child(list));
    Ok(play_page("arena · play", body))
}

/// `/play/{game}`: the board of one game (its state comes from `/api/play/{game}`).
pub(super) async fn page(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Response, ServeError> {
    let (g, _) = app.read(move |store| human_game(store, id)).await?;
    let title = format!("arena · {} – {}", g.white, g.black);
    let clock = |side: &'static str| {
        el("div").class("clock").id(if side == "top" {
            "clock-top"
        } else {
            "clock-bottom"
        })
    };
    let main = el("main").class("play").child(
        el("div")
            .class("play-board")
            .child(clock("top"))
            .child(el("div").id("board").class("cg-board-wrap"))
            .child(clock("bottom")),
    );
    let side = el("aside")
        .class("play-side")
        .child(el("h2").id("players"))
        .child(el("p").id("status").attr("role", "status"))
        .child(el("p").id("message").class("note"))
        .child(
            el("div")
                .id("promotion")
                .attr("hidden", "")
                .child(el("span").text("Promote to: "))
                .children(["q", "r", "b", "n"].into_iter().map(|p| {
                    el("button")
                        .attr("type", "button")
                        .attr("data-piece", p)
                        .text(match p {
                            "q" => "queen",
                            "r" => "rook",
                            "b" => "bishop",
                            _ => "knight",
                        })
                })),
        )
        .child(
            el("div")
                .class("actions")
                .child(
                    el("button")
                        .attr("type", "button")
                        .id("resign")
                        .text("Resign"),
                )
                .child(
                    el("button")
                        .attr("type", "button")
                        .id("draw")
                        .text("Offer a draw"),
                ),
        )
        .child(
            el("label")
                .child(el("input").attr("type", "checkbox").id("show-reply"))
                .child(el("span").text(" show the model's replies")),
        )
        .child(el("h3").text("Opponent's reply"))
        .child(el("pre").id("reply").class("reply"))
        .child(
            el("section")
                .id("rejected-section")
                .attr("hidden", "")
                .child(el("h3").text("Replies refused on its last turn"))
                .child(el("ol").id("rejected").class("rejected")),
        )
        .child(el("h3").text("Moves"))
        .child(el("ol").id("moves"));
    let body = el("body")
        .attr("data-game", id)
        .child(
            el("header").child(el("h1").text(title.clone())).child(
                el("nav")
                    .child(el("a").attr("href", "/play").text("games to play"))
                    .child(el("span").text(" · "))
                    .child(
                        el("a")
                            .attr("href", format!("/tournaments/{}#game={id}", g.tournament))
                            .text("this game in its tournament"),
                    ),
            ),
        )
        .child(el("div").class("play-layout").child(main).child(side))
        .child(
            el("script")
                .attr("type", "module")
                .attr("src", "/assets/play.js"),
        );
    Ok(play_page(&title, body))
}

/// A game with a person among its players, and its tournament's players.
fn human_game(store: &Store, id: i64) -> Result<(GameRow, Vec<PlayerRow>), ServeError> {
    let g = store.game(id)?;
    let players = store.players(g.tournament)?;
    let is_human = |name: &str| players.iter().any(|p| p.name == name && p.kind == "human");
    if !is_human(&g.white) && !is_human(&g.black) {
        return Err(ServeError::NotFound(format!(
            "a person's game {id} (no arena.human player plays it)"
        )));
    }
    Ok((g, players))
}

/// The stored game replayed: its position, plies and what the clocks read.
struct Replayed {
    game: Game,
    plies: Vec<PlyRecord>,
    clocks: [Option<Clock>; 2],
}

fn replay(store: &Store, g: &GameRow) -> Result<Replayed, ServeError> {
    let bad = |e: String| ServeError::Internal(format!("game {} does not replay: {e}", g.id));
    let plies = store.plies(g.id)?;
    let mut game = Game::new_in(g.variant, g.start_fen.as_deref(), u32::MAX)
        .map_err(|e| bad(e.to_string()))?;
    let clocks: GameClocks = match store.stored_time_control(g.id)? {
        Some(json) => serde_json::from_str(&json).map_err(|e| bad(e.to_string()))?,
        None => GameClocks::default(),
    };
    let mut clocks = [clocks.white.map(Clock::new), clocks.black.map(Clock::new)];
    for p in &plies {
        let i = usize::from(game.turn() == Color::Black);
        if let (Some(clock), Some(ms)) = (clocks[i].as_mut(), p.clock_ms) {
            let _ = clock.charge(ms);
        }
        game.play_uci(&p.uci).map_err(|e| bad(e.to_string()))?;
    }
    Ok(Replayed {
        game,
        plies,
        clocks,
    })
}

/// The name of the colour.
fn colour(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// The query of `/api/play/{game}`.
#[derive(Deserialize)]
pub(super) struct StateQuery {
    /// `1`: include the opponent's last reply text.
    reply: Option<u8>,
}

/// `/api/play/{game}`: what the board page shows, as JSON.
pub(super) async fn state(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
    Query(q): Query<StateQuery>,
) -> Result<Response, ServeError> {
    let with_reply = q.reply == Some(1);
    let body = app
        .read(move |store| {
            let (g, players) = human_game(store, id)?;
            let r = replay(store, &g)?;
            let kind = |name: &str| {
                players
                    .iter()
                    .find(|p| p.name == name)
                    .map_or("", |p| p.kind.as_str())
            };
            let turn = r.game.turn();
            let to_move = if turn == Color::White {
                &g.white
            } else {
                &g.black
            };
            // The person's colour: the one a person plays (the side to move when both do).
            let you = if kind(to_move) == "human" {
                Some(turn)
            } else if kind(&g.white) == "human" {
                Some(Color::White)
            } else {
                Some(Color::Black)
            };
            let person = match you {
                Some(Color::White) => &g.white,
                _ => &g.black,
            };
            let show_reply_default = players
                .iter()
                .find(|p| &p.name == person)
                .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.settings_json).ok())
                .and_then(|s| s.get("show_reply").and_then(serde_json::Value::as_bool))
                .unwrap_or(true);
            let ply = r.game.ply();
            let actions = store.human_actions(g.tournament, g.id)?;
            // A move stored but not yet played: shown played, so the piece stays where the
            // person put it while `arena run` takes it up.
            let pending_move = actions.iter().find_map(|a| match &a.action {
                HumanAction::Move(uci) if a.ply == ply && &a.player == person => Some(uci.clone()),
                _ => None,
            });
            let pending = pending_move.is_some();
            let mut shown = r.game.clone();
            let mut last_move = r.plies.last().map(|p| p.uci.clone());
            if let Some(uci) = &pending_move
                && shown.play_uci(uci).is_ok()
            {
                last_move = Some(uci.clone());
            }
            let resigned = actions.iter().any(|a| a.action == HumanAction::Resign);
            let last_offer = actions.iter().rfind(|a| a.action == HumanAction::DrawOffer);
            let draw = last_offer.map(|o| {
                if actions
                    .iter()
                    .any(|a| a.action == HumanAction::DrawDeclined && a.id > o.id)
                {
                    "declined"
                } else {
                    "offered"
                }
            });
            let mut dests: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let mut promotions: Vec<String> = Vec::new();
            let pos = r.game.position();
            for m in pos.legal_moves() {
                let uci = crate::board::uci_of(pos, &m);
                let (from, to) = (uci[..2].to_owned(), uci[2..4].to_owned());
                if uci.len() > 4 && !promotions.contains(&uci[..4].to_owned()) {
                    promotions.push(uci[..4].to_owned());
                }
                let list = dests.entry(from).or_default();
                if !list.contains(&to) {
                    list.push(to);
                }
            }
            // The opponent's reply that became the last move, when a model made it.
            let reply = match r.plies.last() {
                Some(last) if with_reply && &last.player != person => store
                    .llm_calls(g.id, last.ply)?
                    .into_iter()
                    .max_by_key(|c| c.call.seq)
                    .and_then(|c| c.call.reply_text),
                _ => None,
            };
            // The opponent's replies its play mode refused on its last turn: after a forfeit the
            // turn that ended the game (no move stored for it), else the one of the last move.
            // Each with its outcome (`illegal`, `no_move_found`, ...), so that a person sees why
            // a model lost or needed several attempts.
            let rejected = if with_reply {
                let ended_without_move = g.status == GameStatus::Finished && to_move != person;
                let ply_asked = if ended_without_move {
                    Some(ply)
                } else {
                    r.plies
                        .last()
                        .filter(|last| &last.player != person)
                        .map(|last| last.ply)
                };
                match ply_asked {
                    Some(p) => store
                        .llm_calls(g.id, p)?
                        .into_iter()
                        .filter(|c| c.outcome.as_deref().is_some_and(|o| o != "move"))
                        .map(|c| {
                            json!({
                                "seq": c.call.seq,
                                "outcome": c.outcome,
                                "detail": c.outcome_detail,
                                "reply": c.call.reply_text,
                            })
                        })
                        .collect::<Vec<_>>(),
                    None => Vec::new(),
                }
            } else {
                Vec::new()
            };
            let left = |i: usize| r.clocks[i].as_ref().and_then(Clock::left_ms);
            let running = g.status == GameStatus::Running;
            Ok(json!({
                "game": g.id,
                "tournament": g.tournament,
                "white": g.white,
                "black": g.black,
                "you": you.map(colour),
                "person": person,
                "status": g.status.as_str(),
                "result": g.result,
                "termination": g.termination,
                "reason": g.reason,
                "fen": shown.fen(),
                "turn": colour(turn),
                "ply": ply,
                "check": pos.is_check(),
                "your_turn": running && !resigned && kind(to_move) == "human" && !pending,
                "pending": pending,
                "draw": draw,
                "last_move": last_move.map(|m| [m[..2].to_owned(), m[2..4].to_owned()]),
                "moves": r.plies.iter().map(|p| p.san.clone()).collect::<Vec<_>>(),
                "dests": dests,
                "promotions": promotions,
                "clocks": { "white": left(0), "black": left(1) },
                "show_reply": show_reply_default,
                "reply": reply,
                "rejected": rejected,
            })
            .to_string())
        })
        .await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response())
}

/// The body of a write.
#[derive(Deserialize)]
pub(super) struct WriteBody {
    /// The move, in UCI notation (`e2e4`, `e7e8q`), for `move`.
    #[serde(default)]
    uci: Option<String>,
    /// The ply the page showed: a move made on a page that is behind the game is refused.
    #[serde(default)]
    ply: Option<u32>,
}

/// A write refused before it reached the store.
fn refused(status: StatusCode, message: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{message}\n"),
    )
        .into_response()
}

/// Whether the request carries the write token (the header or the cookie; never the query).
fn carries_write_token(headers: &HeaderMap, token: &str) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| super::same(t, token));
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(WRITE_COOKIE)?.strip_prefix('='))
        .any(|t| super::same(t, token));
    bearer || cookie
}

/// One write at a time: a check and its write are not split by another request's.
static WRITES: Mutex<()> = Mutex::new(());

/// `POST /api/play/{game}/{move|resign|draw}`: the person's move, resignation or draw offer,
/// checked against the stored game and stored for `arena run`.
pub(super) async fn act(
    State(app): State<Arc<App>>,
    Path((id, what)): Path<(i64, String)>,
    headers: HeaderMap,
    Json(body): Json<WriteBody>,
) -> Response {
    let (Some(token), Some(writer)) = (&app.config.write_token, &app.config.writer) else {
        return refused(
            StatusCode::FORBIDDEN,
            "this server takes no moves (it was started without a store it may write)".into(),
        );
    };
    if !carries_write_token(&headers, token) {
        return refused(
            StatusCode::UNAUTHORIZED,
            "a move, a resignation or a draw offer needs the play token: open the `/play?token=…` address `arena serve` printed, or send `Authorization: Bearer TOKEN`".into(),
        );
    }
    if !matches!(what.as_str(), "move" | "resign" | "draw") {
        return ServeError::NotFound(format!("the action `{what}`")).into_response();
    }
    let writer = Arc::clone(writer);
    let done = tokio::task::spawn_blocking(move || {
        let _one = WRITES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        write(&writer, id, &what, &body)
    })
    .await;
    match done {
        Ok(Ok(message)) => (
            [(header::CONTENT_TYPE, "application/json")],
            json!({ "ok": true, "stored": message }).to_string(),
        )
            .into_response(),
        Ok(Err(WriteError::Refused(message))) => refused(StatusCode::CONFLICT, message),
        Ok(Err(WriteError::Serve(e))) => e.into_response(),
        Err(e) => ServeError::Internal(format!("a store write stopped: {e}")).into_response(),
    }
}

/// Why a write did not happen.
enum WriteError {
    /// The game does not allow it now (not the person's turn, an illegal move, a game over).
    Refused(String),
    /// The store failed, or the game is not there.
    Serve(ServeError),
}

impl<E: Into<ServeError>> From<E> for WriteError {
    fn from(e: E) -> Self {
        WriteError::Serve(e.into())
    }
}

fn write(store: &Store, id: i64, what: &str, body: &WriteBody) -> Result<String, WriteError> {
    let (g, players) = human_game(store, id)?;
    match g.status {
        GameStatus::Running => {}
        GameStatus::Scheduled => {
            return Err(WriteError::Refused(format!(
                "game {id} has not started: `arena run` starts it"
            )));
        }
        _ => {
            return Err(WriteError::Refused(format!(
                "game {id} is not being played ({})",
                g.status.as_str()
            )));
        }
    }
    let r = replay(store, &g)?;
    let ply = r.game.ply();
    let turn = r.game.turn();
    let to_move = if turn == Color::White {
        &g.white
    } else {
        &g.black
    };
    let is_human = |name: &str| players.iter().any(|p| p.name == name && p.kind == "human");
    let actions = store.human_actions(g.tournament, g.id)?;
    if actions.iter().any(|a| a.action == HumanAction::Resign) {
        return Err(WriteError::Refused(format!("game {id}: resigned already")));
    }
    // The person acting: the side to move when a person moves, else the game's person.
    let person = if is_human(to_move) {
        to_move.clone()
    } else if is_human(&g.white) {
        g.white.clone()
    } else {
        g.black.clone()
    };
    let action = match what {
        "move" => {
            let Some(uci) = body.uci.as_deref() else {
                return Err(WriteError::Refused("a move needs `uci`".into()));
            };
            // A message numbers plies from 1, as the viewer does; the JSON's `ply` is the number
            // of plies played, so the move to make is ply `ply + 1`.
            if !is_human(to_move) {
                return Err(WriteError::Refused(format!(
                    "it is not your move: `{to_move}` is to move (ply {})",
                    ply + 1
                )));
            }
            if body.ply.is_some_and(|p| p != ply) {
                return Err(WriteError::Refused(format!(
                    "the game has {ply} plies played, the page showed {}: reload the board",
                    body.ply.unwrap_or_default()
                )));
            }
            if actions.iter().any(|a| {
                matches!(a.action, HumanAction::Move(_)) && a.ply == ply && a.player == person
            }) {
                return Err(WriteError::Refused(format!(
                    "a move for ply {} is stored already; `arena run` plays it",
                    ply + 1
                )));
            }
            // The board's own message names the move and why it is refused.
            let mv = r
                .game
                .parse_uci(uci)
                .map_err(|e| WriteError::Refused(e.to_string()))?;
            HumanAction::Move(crate::board::uci_of(r.game.position(), &mv))
        }
        "resign" => HumanAction::Resign,
        _ => HumanAction::DrawOffer,
    };
    store.record_human_action(g.tournament, g.id, &person, ply, &action)?;
    Ok(action.kind().to_owned())
}
