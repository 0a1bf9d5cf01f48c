//! The server's parts: token comparison, the live events, and the live pollers over a socket.

use super::*;
use crate::store::{GameProgress, TournamentProgress};
use std::time::Duration;

#[test]
fn a_token_matches_only_itself() {
    assert!(same("abc", "abc"));
    assert!(!same("abd", "abc"));
    assert!(!same("ab", "abc"));
    assert!(!same("", "abc"));
    let t = new_token();
    assert_eq!(t.len(), 32);
    assert_ne!(t, new_token());
}

fn progress(finished: u64, running: &[(i64, u64, u64)]) -> TournamentProgress {
    TournamentProgress {
        games: 4,
        finished,
        last_game: 4,
        running: running
            .iter()
            .map(|&(game, plies, calls)| GameProgress { game, plies, calls })
            .collect(),
    }
}

fn names(before: Option<&TournamentProgress>, now: &TournamentProgress) -> Vec<String> {
    live::changes(before, now)
        .into_iter()
        .map(|e| {
            // An event renders as `event: NAME\ndata: ...`.
            let text = format!("{e:?}");
            ["hello", "ply", "games", "leaderboard"]
                .into_iter()
                .find(|n| text.contains(&format!("event: {n}\\n")))
                .unwrap_or("?")
                .to_owned()
        })
        .collect()
}

#[test]
fn a_stored_ply_a_new_game_and_a_finished_one_each_make_their_event() {
    let start = progress(0, &[(1, 3, 0)]);
    assert_eq!(names(None, &start), ["hello"]);
    assert!(names(Some(&start), &start).is_empty(), "nothing changed");
    let ply = progress(0, &[(1, 4, 0)]);
    assert_eq!(names(Some(&start), &ply), ["ply"]);
    let second = progress(0, &[(1, 4, 0), (2, 0, 0)]);
    assert_eq!(names(Some(&ply), &second), ["ply", "games"]);
    let finished = progress(1, &[(2, 0, 0)]);
    assert_eq!(
        names(Some(&second), &finished),
        ["ply", "games", "leaderboard"]
    );
}

/// Reads `stream` into `seen` until it holds `needle` (at most ten seconds).
async fn read_until(stream: &mut tokio::net::TcpStream, seen: &mut String, needle: &str) {
    use tokio::io::AsyncReadExt as _;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 4096];
    while !seen.contains(needle) {
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("no `{needle}` within ten seconds in {seen}"))
            .unwrap();
        assert!(n > 0, "the stream closed before `{needle}`: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_pages_on_one_tournament_share_one_poller_that_stops_with_the_last() {
    use crate::store::{PlayerRecord, ScheduledGame};
    use tokio::io::AsyncWriteExt as _;

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).unwrap();
    let t = store.open_tournament("live", "live.lua", "{}").unwrap();
    for name in ["a", "b"] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
            .unwrap();
    }
    let poll = Duration::from_millis(20);
    let app = App::new(
        store,
        Config {
            poll,
            ..Config::default()
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, Arc::clone(&app)));

    const PAGES: usize = 20;
    let mut pages = Vec::new();
    for _ in 0..PAGES {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!(
                "GET /api/tournaments/{}/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
                t.id
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut seen = String::new();
        read_until(&mut s, &mut seen, "event: hello").await;
        pages.push((s, seen));
    }
    let (before, watched) = app.live_readings();
    assert_eq!(watched, 1, "one poller for the tournament");
    let start = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (after, _) = app.live_readings();
    let polls = (start.elapsed().as_millis() / poll.as_millis()) as u64;
    // A poller per page would read the store about PAGES times as often.
    assert!(
        after - before <= polls + 2,
        "{} readings in {polls} polls with {PAGES} pages open",
        after - before
    );
    assert!(after - before >= 2, "the poller reads the store");

    // A change in the store reaches every page through the one poller.
    app.store
        .schedule_games(t.id, &[ScheduledGame::new(0, 0, "a", "b")])
        .unwrap();
    for (s, seen) in &mut pages {
        read_until(s, seen, "event: games").await;
    }

    // The last page closed, the poller stops.
    drop(pages);
    let mut waited = 0;
    while app.live_readings().1 > 0 {
        assert!(waited < 200, "the poller still runs with no page open");
        tokio::time::sleep(poll).await;
        waited += 1;
    }
    let stopped = app.live_readings().0;
    tokio::time::sleep(poll * 5).await;
    assert_eq!(
        app.live_readings().0,
        stopped,
        "no reading after the poller stopped"
    );
}
