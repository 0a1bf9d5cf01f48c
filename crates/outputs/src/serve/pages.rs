//! The server's HTML pages and fragments, built with the report's markup builder.

use std::sync::Arc;

use axum::{
    extract::{Path, State},
    http::header,
    response::{Html, IntoResponse, Response},
};

use super::{App, Params, ServeError};
use crate::{
    board::Termination,
    leaderboard,
    report::{
        Table,
        html::{
            self, filters,
            markup::{Element, Node, el},
            svg,
        },
    },
    store::{GameFilter, GameRow, PageFrom, Store, TournamentRow},
};

/// The live page's script: listens to the tournament's events and refreshes what changed.
pub(super) const SERVE_SCRIPT: &str = include_str!("serve.js");
/// The server's few styles beyond the report's.
pub(super) const SERVE_STYLE: &str = include_str!("serve.css");

/// A whole page: head with the report's style sheet, `body` with the viewer's scripts.
fn page(title: &str, body: Element) -> Response {
    let head = el("head")
        .child(el("meta").attr("charset", "utf-8"))
        .child(
            el("meta")
                .attr("name", "viewport")
                .attr("content", "width=device-width, initial-scale=1"),
        )
        .child(
            el("meta")
                .attr("name", "generator")
                .attr("content", "arena serve"),
        )
        .child(el("title").text(title.to_owned()))
        .child(
            el("link")
                .attr("rel", "stylesheet")
                .attr("href", "/assets/viewer.css"),
        )
        .child(
            el("link")
                .attr("rel", "stylesheet")
                .attr("href", "/assets/serve.css"),
        );
    let html = el("html").attr("lang", "en").child(head).child(body);
    no_store(Html(html::markup::document(html)))
}

/// An answer that browsers must not keep: the store changes under it.
fn no_store(r: impl IntoResponse) -> Response {
    ([(header::CACHE_CONTROL, "no-store")], r).into_response()
}

fn fragment(element: Element) -> Response {
    let mut out = String::new();
    Node::Element(element).render(&mut out);
    no_store(Html(out))
}

fn header_bar(title: &str) -> Element {
    el("header")
        .child(el("h1").text(title.to_owned()))
        .child(el("nav").child(el("a").attr("href", "/").text("all tournaments and runs")))
}

/// `/`: the store's tournaments and evaluation runs.
pub(super) async fn index(State(app): State<Arc<App>>) -> Result<Response, ServeError> {
    let (tournaments, runs) = app
        .read(|store| {
            let ts = store.tournaments()?;
            let mut counts = Vec::with_capacity(ts.len());
            for t in ts {
                let p = store.tournament_progress(t.id)?;
                counts.push((t, p));
            }
            Ok((counts, store.eval_runs()?))
        })
        .await?;
    let mut main = el("main");
    let mut list = el("table")
        .class("tournaments")
        .child(el("thead").child(el("tr").children(
            ["tournament", "games", "finished", "running", "created"].map(|c| el("th").text(c)),
        )));
    let mut body = el("tbody");
    for (t, p) in &tournaments {
        body.push(
            el("tr")
                .child(
                    el("td").child(
                        el("a")
                            .attr("href", format!("/tournaments/{}", t.id))
                            .text(t.name.clone()),
                    ),
                )
                .child(el("td").class("num").text(p.games.to_string()))
                .child(el("td").class("num").text(p.finished.to_string()))
                .child(el("td").class("num").text(p.running.len().to_string()))
                .child(el("td").text(t.created_at.clone())),
        );
    }
    list.push(body);
    main.push(el("h2").text("Tournaments"));
    if tournaments.is_empty() {
        main.push(
            el("p")
                .class("empty")
                .text("No tournament in this store yet."),
        );
    } else {
        main.push(list);
    }
    if !runs.is_empty() {
        main.push(el("h2").text("Evaluation runs"));
        let mut ul = el("ul");
        for r in &runs {
            ul.push(
                el("li").child(
                    el("a")
                        .attr("href", format!("/runs/{}", r.id))
                        .text(r.name.clone()),
                ),
            );
        }
        main.push(ul);
    }
    Ok(page(
        "arena",
        el("body").child(header_bar("arena")).child(main),
    ))
}

/// The filter and page a games list shows, from its query string.
#[derive(Debug, Clone, Default)]
struct ListQuery {
    filter: GameFilter,
    from: Option<PageFrom>,
}

fn list_query(params: &Params) -> Result<ListQuery, ServeError> {
    let get = |k: &str| params.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    let index = |k: &str| -> Result<Option<u32>, ServeError> {
        get(k)
            .map(|v| {
                v.parse().map_err(|_| {
                    ServeError::BadRequest(format!("`{k}` must be a game index, not `{v}`"))
                })
            })
            .transpose()
    };
    let filter = GameFilter {
        player: get("player").map(str::to_owned),
        as_white: match get("colour") {
            None => None,
            Some("white") => Some(true),
            Some("black") => Some(false),
            Some(other) => {
                return Err(ServeError::BadRequest(format!(
                    "`colour` is `white` or `black`, not `{other}`"
                )));
            }
        },
        result: match get("result") {
            None => None,
            Some(r @ ("1-0" | "0-1" | "1/2-1/2" | "*" | "none")) => Some(r.to_owned()),
            Some(other) => {
                return Err(ServeError::BadRequest(format!(
                    "`result` is 1-0, 0-1, 1/2-1/2, * or none, not `{other}`"
                )));
            }
        },
        termination: get("termination").map(str::to_owned),
        opening: get("opening").map(str::to_owned),
        void: match get("void") {
            None => None,
            Some("yes") => Some(true),
            Some("no") => Some(false),
            Some(other) => {
                return Err(ServeError::BadRequest(format!(
                    "`void` is `yes` or `no`, not `{other}`"
                )));
            }
        },
    };
    let from = match (index("after")?, index("before")?) {
        (Some(a), _) => Some(PageFrom::After(a)),
        (None, Some(b)) => Some(PageFrom::Before(b)),
        (None, None) => None,
    };
    Ok(ListQuery { filter, from })
}

/// The query string of a filter (without paging), for links that keep it.
fn filter_query(f: &GameFilter) -> String {
    let mut parts = Vec::new();
    let mut add = |k: &str, v: &str| parts.push(format!("{k}={}", encode(v)));
    if let Some(p) = &f.player {
        add("player", p);
    }
    match f.as_white {
        Some(true) => add("colour", "white"),
        Some(false) => add("colour", "black"),
        None => {}
    }
    if let Some(r) = &f.result {
        add("result", r);
    }
    if let Some(t) = &f.termination {
        add("termination", t);
    }
    if let Some(o) = &f.opening {
        add("opening", o);
    }
    match f.void {
        Some(true) => add("void", "yes"),
        Some(false) => add("void", "no"),
        None => {}
    }
    parts.join("&")
}

/// Percent-encodes a query value (everything but unreserved characters).
fn encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One page of games, with what the list around it needs.
struct GamesPage {
    games: Vec<GameRow>,
    total: u64,
    shown_of: u64,
    previous: Option<u32>,
    next: Option<u32>,
    players: Vec<String>,
    terminations: Vec<String>,
}

fn read_page(
    store: &Store,
    t: &TournamentRow,
    q: &ListQuery,
    size: u32,
) -> Result<GamesPage, ServeError> {
    let from = q.from.unwrap_or(PageFrom::Start);
    let mut games = store.games_page(t.id, &q.filter, from, size + 1)?;
    let more = games.len() > size as usize;
    // One game more than the page tells whether there is a page beyond it.
    let (previous_exists, next_exists) = match from {
        PageFrom::Before(_) => {
            if more {
                games.remove(0);
            }
            (more, true)
        }
        PageFrom::After(_) => {
            games.truncate(size as usize);
            (true, more)
        }
        PageFrom::Start => {
            games.truncate(size as usize);
            (false, more)
        }
    };
    let players = store.players(t.id)?.into_iter().map(|p| p.name).collect();
    // The choices of terminations are the ones arena writes and the statuses of unfinished
    // games (listing the stored ones would read every game), plus the one asked for.
    let mut terminations: Vec<String> = Termination::ALL
        .iter()
        .map(|t| t.as_str())
        .chain(["scheduled", "running", "errored"])
        .map(str::to_owned)
        .collect();
    if let Some(asked) = &q.filter.termination
        && !terminations.contains(asked)
    {
        terminations.push(asked.clone());
    }
    let total = store.count_games(t.id, &GameFilter::default())?;

    let shown_of = if q.filter == GameFilter::default() {
        total
    } else {
        store.count_games(t.id, &q.filter)?
    };
    Ok(GamesPage {
        previous: games.first().map(|g| g.index).filter(|_| previous_exists),
        next: games.last().map(|g| g.index).filter(|_| next_exists),
        total,
        shown_of,
        games,
        players,
        terminations,
    })
}

fn tournament_of(store: &Store, id: i64) -> Result<TournamentRow, ServeError> {
    store
        .tournaments()?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| ServeError::NotFound(format!("tournament {id}")))
}

/// `/tournaments/{id}`: the leaderboard (loaded by the page's script), the games and the viewer.
pub(super) async fn tournament(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
    params: Params,
) -> Result<Response, ServeError> {
    let q = list_query(&params)?;
    let size = app.config.page_size;
    let (t, page_data) = app
        .read(move |store| {
            let t = tournament_of(store, id)?;
            let p = read_page(store, &t, &q, size)?;
            Ok((t, (q, p)))
        })
        .await?;
    let (q, p) = page_data;
    let title = format!("arena · {}", t.name);
    let main = el("main")
        .child(el("h2").text(format!("Tournament {}", t.name)))
        .child(
            el("div")
                .id("leaderboard")
                .attr("data-src", format!("/tournaments/{}/leaderboard", t.id))
                .child(
                    el("p")
                        .class("note")
                        .text("The leaderboard is being computed …"),
                ),
        )
        .child(games_list(&t, &q, &p));
    let body = el("body")
        .attr("data-games-url", "/api/games/")
        .attr(
            "data-events-url",
            format!("/api/tournaments/{}/events", t.id),
        )
        .attr("data-list-url", format!("/tournaments/{}/games", t.id))
        .child(svg::piece_symbols())
        .child(header_bar(&title))
        .child(main)
        .child(html::viewer())
        .child(el("script").attr("src", "/assets/viewer.js"))
        .child(el("script").attr("src", "/assets/serve.js"));
    Ok(page(&title, body))
}

/// `/tournaments/{id}/games`: the games list alone, which a live page swaps in.
pub(super) async fn games_fragment(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
    params: Params,
) -> Result<Response, ServeError> {
    let q = list_query(&params)?;
    let size = app.config.page_size;
    let (t, q, p) = app
        .read(move |store| {
            let t = tournament_of(store, id)?;
            let p = read_page(store, &t, &q, size)?;
            Ok((t, q, p))
        })
        .await?;
    Ok(fragment(games_list(&t, &q, &p)))
}

fn games_list(t: &TournamentRow, q: &ListQuery, p: &GamesPage) -> Element {
    let f = &q.filter;
    let bind = filters::Bind::Form;
    let form = el("form")
        .class("filters")
        .attr("method", "get")
        .attr("action", format!("/tournaments/{}", t.id))
        .child(filters::player(
            bind,
            f.player.as_deref(),
            p.players.iter().map(String::as_str),
        ))
        .child(filters::colour(
            bind,
            f.as_white.map(|w| if w { "white" } else { "black" }),
        ))
        .child(filters::result(bind, f.result.as_deref(), &[("*", "void")]))
        .child(filters::termination(
            bind,
            f.termination.as_deref(),
            p.terminations.iter().map(String::as_str),
        ))
        .child(
            el("label").text("opening ").child(
                el("input")
                    .attr("type", "search")
                    .attr("name", "opening")
                    .attr("value", f.opening.clone().unwrap_or_default()),
            ),
        )
        .child(filters::select(
            bind,
            "void",
            "void",
            f.void.map(|v| if v { "yes" } else { "no" }),
            vec![
                (String::new(), "all games".into()),
                ("no".into(), "counted games".into()),
                ("yes".into(), "void games only".into()),
            ],
        ))
        .child(el("button").attr("type", "submit").text("show"))
        .child(
            el("span")
                .class("count")
                .text(format!("{} of {} games", p.shown_of, p.total)),
        );
    let mut head = el("tr");
    for c in [
        "#",
        "round",
        "white",
        "black",
        "result",
        "termination",
        "plies",
        "opening",
    ] {
        head.push(el("th").text(c));
    }
    let mut body = el("tbody");
    for g in &p.games {
        let termination = g
            .termination
            .clone()
            .unwrap_or_else(|| g.status.as_str().to_owned());
        body.push(
            el("tr")
                .class("game")
                .attr("data-game", g.id)
                .attr("data-white", &g.white)
                .attr("data-black", &g.black)
                .attr("data-result", g.result.as_deref().unwrap_or("none"))
                .attr("data-status", g.status.as_str())
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
                .child(el("td").text(g.result.clone().unwrap_or_else(|| "*".to_owned())))
                .child(el("td").text(termination.replace('_', " ")))
                .child(el("td").class("num plies").text(g.ply_count.to_string()))
                .child(el("td").text(g.opening_label.clone().unwrap_or_default())),
        );
    }
    let keep = filter_query(f);
    let link = |k: &str, index: u32| {
        let sep = if keep.is_empty() { "" } else { "&" };
        format!("/tournaments/{}?{keep}{sep}{k}={index}", t.id)
    };
    let mut pager = el("p").class("pager");
    if let Some(i) = p.previous {
        pager.push(
            el("a")
                .attr("rel", "prev")
                .attr("href", link("before", i))
                .text("◀ previous page"),
        );
    }
    if let Some(i) = p.next {
        pager.push(
            el("a")
                .attr("rel", "next")
                .attr("href", link("after", i))
                .text("next page ▶"),
        );
    }
    let mut div = el("div")
        .class("games")
        .id("games-list")
        .attr("data-query", &keep)
        .child(el("h3").text("Games"))
        .child(form);
    if p.games.is_empty() {
        div.push(el("p").class("empty").text("No game matches."));
    } else {
        div.push(
            el("table")
                .class("game-list")
                .child(el("thead").child(head))
                .child(body),
        );
    }
    div.child(pager)
}

/// `/tournaments/{id}/leaderboard`: every table of `arena leaderboard --stats`, made again only
/// when the tournament's counts changed.
pub(super) async fn leaderboard_fragment(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Response, ServeError> {
    let (t, finished, tables) = leaderboard_tables(&app, id).await?;
    let mut div = el("div")
        .id("leaderboard")
        .attr("data-src", format!("/tournaments/{}/leaderboard", t.id))
        .attr("data-finished", finished);
    for table in tables.iter() {
        let mut table = table.clone();
        if let Some(rest) = table.title.strip_prefix(&format!("{} · ", t.name)) {
            table.title = rest.to_owned();
        }
        div.push(html::table_html(&table));
    }
    if let Some(chart) = html::placement_chart(&tables) {
        div.push(el("div").class("charts").child(chart));
    }
    Ok(fragment(div))
}

/// `/api/tournaments/{id}/leaderboard`: the same tables as the document `arena leaderboard
/// --tournament NAME --stats --format json` prints.
pub(super) async fn leaderboard_json(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Response, ServeError> {
    let (_, _, tables) = leaderboard_tables(&app, id).await?;
    Ok(no_store((
        [(header::CONTENT_TYPE, "application/json")],
        crate::table::render(&tables, crate::table::Format::Json),
    )))
}

/// A tournament's leaderboard tables, from the cache while its counts stay the same; made by one
/// request at a time, so that the pages a finished game refreshes together wait for one
/// computation instead of each making its own.
async fn leaderboard_tables(
    app: &Arc<App>,
    id: i64,
) -> Result<(TournamentRow, u64, Arc<Vec<Table>>), ServeError> {
    let (t, progress) = app
        .read(move |store| Ok((tournament_of(store, id)?, store.tournament_progress(id)?)))
        .await?;
    let key = (progress.games, progress.finished);
    let cached = || {
        app.leaderboards
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
            .filter(|(k, _)| *k == key)
            .map(|(_, tables)| Arc::clone(tables))
    };
    let making = Arc::clone(
        app.making
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(id)
            .or_default(),
    );
    let _making = making.lock().await;
    if let Some(tables) = cached() {
        return Ok((t, progress.finished, tables));
    }
    let format_tables = app.config.format_tables.clone();
    let made = {
        let t = t.clone();
        app.read(move |store| {
            let options = leaderboard::Options {
                stats: true,
                show_all: true,
                format_tables: format_tables.map(|f| f(store, &t)).unwrap_or_default(),
                ..leaderboard::Options::default()
            };
            Ok(Arc::new(leaderboard::tables(store, &t, &options)?))
        })
        .await?
    };
    app.leaderboards
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(id, (key, Arc::clone(&made)));
    Ok((t, progress.finished, made))
}

/// `/runs/{id}`: an evaluation run's tables and items, as the report shows them.
pub(super) async fn eval_run(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Response, ServeError> {
    let (name, section) = app
        .read(move |store| {
            let run = store
                .eval_runs()?
                .into_iter()
                .find(|r| r.id == id)
                .ok_or_else(|| ServeError::NotFound(format!("evaluation run {id}")))?;
            Ok((run.name.clone(), html::eval_run_section(store, &run)?))
        })
        .await?;
    let title = format!("arena · {name}");
    Ok(page(
        &title,
        el("body")
            .child(header_bar(&title))
            .child(el("main").child(section)),
    ))
}
