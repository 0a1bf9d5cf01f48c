//! `arena serve`: a web app over a store (SQLite file or PostgreSQL), on axum.
//!
//! What it shows: the store's tournaments and evaluation runs; per tournament the tables of
//! `arena leaderboard --stats`, its games filtered (player, colour, result, termination,
//! opening, void) and paged, and the report's game viewer, which fetches one game at a time
//! from `/api/games/{id}`; per evaluation run the report's tables and items.
//!
//! Choices, and why:
//! - **Pages from the report's markup builder** ([`crate::report::html::markup`]): every text
//!   from the store is escaped by construction, as in the report; the viewer script and style
//!   sheet are the report's own, served as files so that the content security policy can forbid
//!   inline script and every outside request.
//! - **Nothing loads the whole store**: the games list is one keyset page of the
//!   `(tournament_id, idx)` key ([`Store::games_page`]), a game is read when it is opened, and
//!   the leaderboard is made from the tournament's rated results read a row at a time and its
//!   counts summed by the database ([`crate::leaderboard::tables`]), on request, off the async
//!   threads, once however many pages ask at the same time, and kept until the tournament's
//!   counts change.
//! - **Store access off the runtime**: the store is synchronous (a connection behind a mutex,
//!   or a small PostgreSQL pool), so each read runs in `spawn_blocking`.
//! - **Live pages by polling the store** ([`live`]): a `arena run` on this machine or another
//!   writes the store, not this process, so one poller per watched tournament compares cheap
//!   counts ([`Store::tournament_progress`]) a few times a second and its pages' streams push
//!   what changed as server-sent events.
//! - **Safe by default**: routes are fixed, assets are compiled in (no URL reaches the file
//!   system), and a server that listens beyond loopback answers only requests carrying its token.
//! - **A person's moves** ([`play`]): the only writes, through a connection of their own, each
//!   carrying the write token whatever the address; `arena run` reads them from the store.

mod live;
mod pages;
mod play;

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    extract::{Path, Query, Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::get,
};

use crate::{
    report::{Table, html::ReportError},
    store::{Store, StoreError, TournamentRow},
};

/// Makes a tournament's format tables (a Swiss table, a knockout bracket): only the caller can
/// run the format's scripts.
pub(crate) type FormatTables = dyn Fn(&Store, &TournamentRow) -> Vec<Table> + Send + Sync;

/// How the server behaves.
#[derive(Clone)]
pub struct Config {
    /// The token every request must carry (as `Authorization: Bearer TOKEN`, a `token` query
    /// parameter or the cookie the latter sets), or `None` to answer any request (loopback only).
    pub token: Option<String>,
    /// Games per page of a games list.
    pub page_size: u32,
    /// How often a watched tournament's poller reads the store (one poller per tournament,
    /// however many pages watch it).
    pub poll: Duration,
    /// The format tables of a tournament, shown with its leaderboard.
    pub format_tables: Option<Arc<FormatTables>>,
    /// The token every write (a person's move, resignation or draw offer) must carry, even on
    /// loopback; `None` takes no writes.
    pub write_token: Option<String>,
    /// The store connection writes go through (the browsing one is read-only); `None` takes
    /// no writes.
    pub writer: Option<Arc<Store>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            token: None,
            page_size: 100,
            poll: Duration::from_millis(250),
            format_tables: None,
            write_token: None,
            writer: None,
        }
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("write_token", &self.write_token.as_ref().map(|_| "***"))
            .field("page_size", &self.page_size)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

/// A leaderboard's tables and the (games, finished) counts they were made at.
type CachedBoard = ((u64, u64), Arc<Vec<Table>>);

/// The server's state: the store, the settings, the cached leaderboards and the live pollers.
pub struct App {
    store: Arc<Store>,
    config: Config,
    /// Each tournament's leaderboard tables, with the counts they were made at.
    leaderboards: Mutex<HashMap<i64, CachedBoard>>,
    /// One lock per tournament that only the request making its leaderboard holds, so that the
    /// pages a finished game refreshes at once wait for one computation instead of each making
    /// its own.
    making: Mutex<HashMap<i64, Arc<tokio::sync::Mutex<()>>>>,
    /// The pollers of the tournaments that live pages watch.
    pollers: live::Pollers,
}

impl App {
    /// An app over `store`.
    pub fn new(store: Store, config: Config) -> Arc<App> {
        Arc::new(App {
            store: Arc::new(store),
            config,
            leaderboards: Mutex::new(HashMap::new()),
            making: Mutex::new(HashMap::new()),
            pollers: live::Pollers::default(),
        })
    }

    /// How many times the live pollers read the store so far, and how many tournaments they
    /// watch now: one reading per poll per watched tournament, however many pages are open.
    #[cfg(test)]
    pub(crate) fn live_readings(&self) -> (u64, usize) {
        (self.pollers.readings(), self.pollers.watched())
    }

    /// Runs `f` on the store off the async threads.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, ServeError> + Send + 'static,
    ) -> Result<T, ServeError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .map_err(|e| ServeError::Internal(format!("a store read stopped: {e}")))?
    }
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A page could not be built from the store.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The address names nothing.
    #[error("{0} does not exist")]
    NotFound(String),
    /// The request is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// Something in the server failed.
    #[error("{0}")]
    Internal(String),
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let status = match &self {
            ServeError::NotFound(_) | ServeError::Store(StoreError::NotFound { .. }) => {
                StatusCode::NOT_FOUND
            }
            ServeError::BadRequest(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            tracing::warn!("arena serve: {self}");
        }
        // Plain text: a message that quotes the store is never read as markup.
        (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            format!("{self}\n"),
        )
            .into_response()
    }
}

/// The app's routes, with its security headers and token check.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/tournaments/{id}", get(pages::tournament))
        .route("/tournaments/{id}/games", get(pages::games_fragment))
        .route(
            "/tournaments/{id}/leaderboard",
            get(pages::leaderboard_fragment),
        )
        .route("/runs/{id}", get(pages::eval_run))
        .route("/api/games/{id}", get(game_json))
        .route("/api/tournaments/{id}/events", get(live::events))
        .route(
            "/api/tournaments/{id}/leaderboard",
            get(pages::leaderboard_json),
        )
        .route("/assets/{name}", get(asset))
        .route("/play", get(play::index))
        .route("/play/{id}", get(play::page))
        .route("/api/play/{id}", get(play::state))
        .route("/api/play/{id}/{action}", axum::routing::post(play::act))
        .fallback(|| async { ServeError::NotFound("this page".to_owned()) })
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app)
}

/// Serves `app` on `listener` until the process ends.
///
/// # Errors
/// When the listener fails.
pub async fn serve(listener: tokio::net::TcpListener, app: Arc<App>) -> std::io::Result<()> {
    axum::serve(
        listener,
        router(app).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .await
}

/// Whether an address is the machine's own (a server there needs no token for reading).
pub fn is_loopback(addr: &SocketAddr) -> bool {
    addr.ip().is_loopback()
}

/// The name of the cookie that carries the token once a `?token=` link was opened.
const TOKEN_COOKIE: &str = "arena_token";

/// The content security policy of every answer: the page's own scripts, styles and requests,
/// nothing from elsewhere, no inline script, no frames, no forms sent elsewhere. Images may also
/// be `data:` URLs: a game's transcript shows the board pictures its model was sent that way.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Refuses requests without the token (when there is one) and adds the security headers.
async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let mut set_cookie = None;
    if let Some(token) = &app.config.token {
        let (ok, from_query) = carries_token(&request, token);
        if !ok {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "this server needs its token: open the address `arena serve` printed, or send `Authorization: Bearer TOKEN`\n",
            )
                .into_response();
        }
        if from_query {
            set_cookie = Some(format!(
                "{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
            ));
        }
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // A page that set its own (the play page's, for chessground's `data:` images) keeps it.
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(CSP));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if let Some(cookie) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether `request` carries `token` (and whether it came in the query).
fn carries_token(request: &Request, token: &str) -> (bool, bool) {
    let headers = request.headers();
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| same(t, token));
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(TOKEN_COOKIE)?.strip_prefix('='))
        .any(|t| same(t, token));
    let query = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.strip_prefix("token="))
        .any(|t| same(t, token));
    (bearer || cookie || query, query && !(bearer || cookie))
}

/// Compares a presented token with the real one in time that does not depend on where they
/// first differ.
fn same(presented: &str, token: &str) -> bool {
    let (a, b) = (presented.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A new random token for a server that listens beyond loopback.
pub fn new_token() -> String {
    use rand::RngExt as _;
    let mut rng = rand::rng();
    (0..32)
        .map(|_| char::from(b"abcdefghijkmnopqrstuvwxyz23456789"[rng.random_range(0..33)]))
        .collect()
}

/// `/assets/{name}`: the compiled-in script and style sheet; any other name is not found.
async fn asset(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "viewer.js" => (
            crate::report::html::SCRIPT,
            "text/javascript; charset=utf-8",
        ),
        "serve.js" => (pages::SERVE_SCRIPT, "text/javascript; charset=utf-8"),
        "viewer.css" => (crate::report::html::STYLE, "text/css; charset=utf-8"),
        "serve.css" => (pages::SERVE_STYLE, "text/css; charset=utf-8"),
        _ => match play::vendor_asset(&name) {
            Some(found) => found,
            None => return ServeError::NotFound(format!("asset `{name}`")).into_response(),
        },
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// `/api/games/{id}`: one game as the viewer reads it.
async fn game_json(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Response, ServeError> {
    let body = app
        .read(move |store| {
            let game = store.game(id)?;
            let t = store
                .tournaments()?
                .into_iter()
                .find(|t| t.id == game.tournament)
                .ok_or_else(|| ServeError::NotFound(format!("the tournament of game {id}")))?;
            Ok(crate::report::html::game_json(store, &t, &game)?)
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

/// A query string's parameters, empty values dropped.
type Params = Query<HashMap<String, String>>;

#[cfg(test)]
mod tests;
