//! Live pages: a tournament's changes pushed as server-sent events.
//!
//! The games are written by `arena run` processes, possibly on other machines sharing a
//! PostgreSQL store, so the server learns of a change only by reading the store. One poller task
//! per watched tournament reads its counts ([`Store::tournament_progress`], a few indexed
//! queries) every [`Config::poll`](super::Config::poll) and broadcasts each new reading to the
//! tournament's open streams (a tokio broadcast channel), so a hundred open pages cost the store
//! what one does. The poller starts with the first stream and stops at the first poll after the
//! last one closed. Each stream turns the readings into events by comparing them with the last
//! one it sent:
//!
//! - `ply`: `{"game": ID, "plies": N, "calls": N}` for a running game that stored a ply or a
//!   model call (the page reads that game again if it is open);
//! - `games`: `{"games": N, "finished": N}` when a game started, finished or was added (the page
//!   reads its games list again);
//! - `leaderboard`: `{"finished": N}` when a game finished (the page reads the leaderboard again);
//! - `resync`: `{"games": N, "finished": N, "running": N}` when the stream fell so far behind the
//!   readings that some were dropped for it (the page reads everything again).
//!
//! The first event, `hello`, carries the counts the stream started from.

use std::{
    collections::{HashMap, VecDeque},
    convert::Infallible,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use axum::{
    extract::{Path, State},
    response::sse::{Event, KeepAlive, Sse},
};
use futures_util::{Stream, stream};
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

use super::{App, ServeError};
use crate::store::{GameProgress, TournamentProgress};

/// Readings a stream may fall behind before it is resynchronised: a reading is sent only when
/// something changed, so this is many changes within one page's hiccup.
const BACKLOG: usize = 64;

/// The running pollers, one per watched tournament.
#[derive(Default)]
pub(super) struct Pollers {
    running: Mutex<HashMap<i64, Arc<Poller>>>,
    /// Store readings made by every poller so far (tests count them).
    readings: AtomicU64,
}

impl Pollers {
    /// How many times the pollers read the store so far.
    #[cfg(test)]
    pub(super) fn readings(&self) -> u64 {
        self.readings.load(Ordering::Relaxed)
    }

    /// How many tournaments are polled now.
    #[cfg(test)]
    pub(super) fn watched(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Arc<Poller>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One tournament's poller: where its readings go, and the last one for streams that join.
struct Poller {
    sender: broadcast::Sender<Arc<TournamentProgress>>,
    latest: Mutex<Option<Arc<TournamentProgress>>>,
}

impl Poller {
    fn latest(&self) -> Option<Arc<TournamentProgress>> {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A subscription to the tournament's poller, started if none runs.
fn subscribe(
    app: &Arc<App>,
    tournament: i64,
) -> (Arc<Poller>, broadcast::Receiver<Arc<TournamentProgress>>) {
    let mut running = app.pollers.lock();
    if let Some(p) = running.get(&tournament) {
        return (Arc::clone(p), p.sender.subscribe());
    }
    let (sender, receiver) = broadcast::channel(BACKLOG);
    let poller = Arc::new(Poller {
        sender,
        latest: Mutex::new(None),
    });
    running.insert(tournament, Arc::clone(&poller));
    tokio::spawn(poll(Arc::clone(app), tournament, Arc::clone(&poller)));
    (poller, receiver)
}

/// Reads the tournament's counts every poll and broadcasts each change, until no stream listens.
async fn poll(app: Arc<App>, tournament: i64, poller: Arc<Poller>) {
    loop {
        app.pollers.readings.fetch_add(1, Ordering::Relaxed);
        match app
            .read(move |store| Ok(store.tournament_progress(tournament)?))
            .await
        {
            Ok(now) => {
                let mut latest = poller.latest.lock().unwrap_or_else(PoisonError::into_inner);
                if latest.as_deref() != Some(&now) {
                    let now = Arc::new(now);
                    *latest = Some(Arc::clone(&now));
                    // No receiver is no error: the check below stops the poller.
                    let _ = poller.sender.send(now);
                }
            }
            // A store that a writer holds locked for longer than the busy timeout, or a server
            // restarting: try again at the next poll.
            Err(e) => tracing::debug!("live events of tournament {tournament}: {e}"),
        }
        tokio::time::sleep(app.config.poll).await;
        // Under the lock that subscribing takes, so that no stream joins a poller that stops.
        let mut running = app.pollers.lock();
        if poller.sender.receiver_count() == 0 {
            if running
                .get(&tournament)
                .is_some_and(|p| Arc::ptr_eq(p, &poller))
            {
                running.remove(&tournament);
            }
            return;
        }
    }
}

/// What a stream remembers between two readings.
struct Watch {
    poller: Arc<Poller>,
    receiver: broadcast::Receiver<Arc<TournamentProgress>>,
    last: Option<Arc<TournamentProgress>>,
    queued: VecDeque<Event>,
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
    let (poller, receiver) = subscribe(&app, id);
    let watch = Watch {
        poller,
        receiver,
        last: None,
        queued: VecDeque::new(),
    };
    let stream = stream::unfold(watch, |mut w| async move {
        loop {
            if let Some(event) = w.queued.pop_front() {
                return Some((Ok(event), w));
            }
            if w.last.is_none()
                && let Some(now) = w.poller.latest()
            {
                // A stream that joins a running poller starts from its last reading.
                w.queued.extend(changes(None, &now));
                w.last = Some(now);
                continue;
            }
            let now = match w.receiver.recv().await {
                Ok(now) => now,
                Err(RecvError::Lagged(_)) => {
                    // Readings were dropped for this stream: the page reads everything again,
                    // from the newest reading on.
                    let Some(now) = w.poller.latest() else {
                        continue;
                    };
                    w.queued.push_back(resync(&now));
                    w.last = Some(now);
                    continue;
                }
                Err(RecvError::Closed) => return None,
            };
            w.queued.extend(changes(w.last.as_deref(), &now));
            w.last = Some(now);
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

fn event(name: &str, data: serde_json::Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

fn counts(now: &TournamentProgress) -> serde_json::Value {
    json!({ "games": now.games, "finished": now.finished, "running": now.running.len() })
}

/// The event that tells a page it missed readings and must read everything again.
pub(super) fn resync(now: &TournamentProgress) -> Event {
    event("resync", counts(now))
}

/// The events that take a page from reading `before` to reading `now`.
pub(super) fn changes(before: Option<&TournamentProgress>, now: &TournamentProgress) -> Vec<Event> {
    let Some(before) = before else {
        return vec![event("hello", counts(now))];
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
