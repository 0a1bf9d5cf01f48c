//! Live pages: a tournament's changes pushed as server-sent events.
//!
//! The games are written by `arena run` processes, possibly on other machines sharing a
//! PostgreSQL store, so the server learns of a change only by reading the store: each open
//! stream reads the tournament's counts ([`Store::tournament_progress`], two indexed queries)
//! every [`Config::poll`](super::Config::poll) and sends what differs from the last reading:
//!
//! - `ply`: `{"game": ID, "plies": N, "calls": N}` for a running game that stored a ply or a
//!   model call (the page reads that game again if it is open);
//! - `games`: `{"games": N, "finished": N}` when a game started, finished or was added (the page
//!   reads its games list again);
//! - `leaderboard`: `{"finished": N}` when a game finished (the page reads the leaderboard again).
//!
//! The first event, `hello`, carries the counts the stream started from.

use std::{collections::HashMap, convert::Infallible, sync::Arc, time::Duration};

use axum::{
    extract::{Path, State},
    response::sse::{Event, KeepAlive, Sse},
};
use futures_util::{Stream, stream};
use serde_json::json;

use super::{App, ServeError};
use crate::store::{GameProgress, TournamentProgress};

/// What a stream remembers between two readings.
struct Watch {
    app: Arc<App>,
    tournament: i64,
    last: Option<TournamentProgress>,
    queued: Vec<Event>,
}

/// `/api/tournaments/{id}/events`: the tournament's changes, as they are stored.
pub(super) async fn events(
    State(app): State<Arc<App>>,
    Path(id): Path<i64>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ServeError> {
    // An unknown tournament is a 404 now, not a stream that never says anything.
    app.read(move |store| {
        if store.tournaments()?.iter().any(|t| t.id == id) {
            Ok(())
        } else {
            Err(ServeError::NotFound(format!("tournament {id}")))
        }
    })
    .await?;
    let poll = app.config.poll;
    let watch = Watch {
        app,
        tournament: id,
        last: None,
        queued: Vec::new(),
    };
    let stream = stream::unfold(watch, move |mut w| async move {
        loop {
            if !w.queued.is_empty() {
                let event = w.queued.remove(0);
                return Some((Ok(event), w));
            }
            if w.last.is_some() {
                tokio::time::sleep(poll).await;
            }
            let tournament = w.tournament;
            let now = match w
                .app
                .read(move |store| Ok(store.tournament_progress(tournament)?))
                .await
            {
                Ok(now) => now,
                Err(e) => {
                    // A store that a writer holds locked for longer than the busy timeout, or a
                    // server restarting: try again at the next poll.
                    tracing::debug!("live events of tournament {tournament}: {e}");
                    if w.last.is_none() {
                        tokio::time::sleep(poll).await;
                    }
                    continue;
                }
            };
            w.queued = changes(w.last.as_ref(), &now);
            w.last = Some(now);
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

/// The events that take a page from reading `before` to reading `now`.
pub(super) fn changes(before: Option<&TournamentProgress>, now: &TournamentProgress) -> Vec<Event> {
    let event =
        |name: &str, data: serde_json::Value| Event::default().event(name).data(data.to_string());
    let Some(before) = before else {
        return vec![event(
            "hello",
            json!({ "games": now.games, "finished": now.finished, "running": now.running.len() }),
        )];
    };
    let mut out = Vec::new();
    let was: HashMap<i64, GameProgress> = before.running.iter().map(|g| (g.game, *g)).collect();
    for g in &now.running {
        if was.get(&g.game) != Some(g) {
            out.push(event(
                "ply",
                json!({ "game": g.game, "plies": g.plies, "calls": g.calls }),
            ));
        }
    }
    let running_changed = before.running.len() != now.running.len()
        || before
            .running
            .iter()
            .zip(&now.running)
            .any(|(a, b)| a.game != b.game);
    if running_changed
        || before.games != now.games
        || before.finished != now.finished
        || before.last_game != now.last_game
    {
        // A game that stopped running may have stored its last ply in the same interval.
        for g in &before.running {
            if !now.running.iter().any(|n| n.game == g.game) {
                out.push(event("ply", json!({ "game": g.game, "ended": true })));
            }
        }
        out.push(event(
            "games",
            json!({ "games": now.games, "finished": now.finished }),
        ));
    }
    if before.finished != now.finished {
        out.push(event("leaderboard", json!({ "finished": now.finished })));
    }
    out
}
