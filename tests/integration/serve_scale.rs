//! `arena serve` at scale: a generated store of 100,000 finished games (a fixture made here,
//! never committed), the first page, a late page, a filtered page, a game and the leaderboard
//! fetched, with the server's memory. Timings are printed, never asserted (the machine is shared); the memory
//! bound is asserted: it must not grow with the store.

use std::time::{Duration, Instant};

use arena::store::{PlayerRecord, ScheduledGame, Store};
use rusqlite::{Connection, params};

use crate::{
    common::TestDir,
    serve::{Response, Server},
};

/// Players of the generated tournament.
const PLAYERS: usize = 10;

/// The plies every generated game stores (the Ruy Lopez to move 3), with the FEN before each.
const PLIES: &[(&str, &str, &str)] = &[
    (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "e2e4",
        "e4",
    ),
    (
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        "e7e5",
        "e5",
    ),
    (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        "g1f3",
        "Nf3",
    ),
    (
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2",
        "b8c6",
        "Nc6",
    ),
    (
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
        "f1b5",
        "Bb5",
    ),
    (
        "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3",
        "a7a6",
        "a6",
    ),
];

/// Makes a store of `games` finished games at `path`: the tournament, players and schedule
/// through the store's API, then each game's plies and result in one transaction of plain
/// inserts (one store call per ply would take minutes for nothing the test looks at).
pub fn generate(path: &std::path::Path, games: u32) -> i64 {
    let store = Store::open(path).unwrap();
    let t = store
        .open_tournament("big", "big.lua", r#"{"format":"round_robin"}"#)
        .unwrap();
    let names: Vec<String> = (0..PLAYERS).map(|i| format!("player-{i}")).collect();
    for n in &names {
        store
            .upsert_player(t.id, &PlayerRecord::new(n, "random", "{}"))
            .unwrap();
    }
    let schedule: Vec<ScheduledGame> = (0..games)
        .map(|i| {
            let w = i as usize % PLAYERS;
            let b = (w + 1 + (i as usize / PLAYERS) % (PLAYERS - 1)) % PLAYERS;
            let mut g = ScheduledGame::new(i, i / 50, &names[w], &names[b]);
            g.opening_label = Some(format!("opening {}", i % 37));
            g
        })
        .collect();
    store.schedule_games(t.id, &schedule).unwrap();
    drop(store);
    let mut conn = Connection::open(path).unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut ids = tx
            .prepare("SELECT id, white, black FROM games WHERE tournament_id = ?1 ORDER BY idx")
            .unwrap();
        let rows: Vec<(i64, String, String)> = ids
            .query_map(params![t.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let mut ply = tx
            .prepare(
                "INSERT INTO plies (game_id, ply, fen_before, uci, san, player, attempts, elapsed_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, 3)",
            )
            .unwrap();
        let mut finish = tx
            .prepare(
                "UPDATE games SET status = 'finished', result = ?2, termination = ?3, \
                 started_at = '2026-01-01T00:00:00Z', finished_at = '2026-01-01T00:01:00Z' WHERE id = ?1",
            )
            .unwrap();
        for (i, (id, white, black)) in rows.iter().enumerate() {
            for (n, (fen, uci, san)) in PLIES.iter().enumerate() {
                let mover = if n % 2 == 0 { white } else { black };
                ply.execute(params![id, n as i64, fen, uci, san, mover])
                    .unwrap();
            }
            let (result, termination) = match i % 3 {
                0 => ("1-0", "checkmate"),
                1 => ("0-1", "resignation"),
                _ => ("1/2-1/2", "move_limit"),
            };
            finish.execute(params![id, result, termination]).unwrap();
        }
    }
    tx.commit().unwrap();
    t.id
}

/// The server's resident and peak resident memory, in KiB (Linux's /proc).
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn timed(server: &Server, path: &str) -> (Response, Duration) {
    let start = Instant::now();
    let r = server.get(path);
    let took = start.elapsed();
    assert_eq!(r.status, 200, "{path}: {}", r.body);
    (r, took)
}

#[test]
fn serve_pages_a_store_of_100000_games_in_bounded_memory() {
    const GAMES: u32 = 100_000;
    let dir = TestDir::new();
    let start = Instant::now();
    let t = generate(&dir.db(), GAMES);
    let made = start.elapsed();
    let size_mb = std::fs::metadata(dir.db()).unwrap().len() as f64 / 1e6;

    let server = Server::start(dir.path(), "t.db", &[]);
    let (_, baseline_hwm) = memory_kib(server.pid());
    let (first, first_ms) = timed(&server, &format!("/tournaments/{t}"));
    assert!(first.body.contains(&format!("{GAMES} of {GAMES} games")));
    assert_eq!(first.body.matches("<tr class=\"game\"").count(), 100);
    let (late, late_ms) = timed(&server, &format!("/tournaments/{t}?after={}", GAMES - 150));
    assert_eq!(late.body.matches("<tr class=\"game\"").count(), 100);
    let (filtered, filtered_ms) = timed(
        &server,
        &format!("/tournaments/{t}?player=player-3&colour=black&result=1-0"),
    );
    assert_eq!(filtered.body.matches("<tr class=\"game\"").count(), 100);
    assert!(filtered.body.contains(&format!("6666 of {GAMES} games")));
    let (opening, opening_ms) = timed(&server, &format!("/tournaments/{t}?opening=opening+36"));
    assert!(
        opening
            .body
            .contains(&format!("{} of {GAMES} games", GAMES.div_ceil(37) - 1)),
        "{}",
        opening.body
    );
    let last_id: i64 = late
        .body
        .split("data-game=\"")
        .last()
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    let (game, game_ms) = timed(&server, &format!("/api/games/{last_id}"));
    let data: serde_json::Value = serde_json::from_str(&game.body).unwrap();
    assert_eq!(data["plies"].as_array().unwrap().len(), PLIES.len());
    // Pages all over the store, to see whether memory follows the pages read or the store.
    for k in 0..20 {
        let after = (GAMES / 20) * k;
        timed(
            &server,
            &format!("/tournaments/{t}?after={after}&result=1-0"),
        );
        timed(
            &server,
            &format!("/api/games/{}", last_id - i64::from(after)),
        );
    }
    let (_, pages_hwm) = memory_kib(server.pid());
    // The leaderboard: every table of `arena leaderboard --stats` over the 100,000 games, made
    // from their rated results read a row at a time; then again from the cache.
    let (board, board_ms) = timed(&server, &format!("/tournaments/{t}/leaderboard"));
    assert!(board.body.contains("Glicko") && board.body.contains("Bradley-Terry"));
    let (cached, cached_ms) = timed(&server, &format!("/tournaments/{t}/leaderboard"));
    assert_eq!(cached.body, board.body);
    let (json, _) = timed(&server, &format!("/api/tournaments/{t}/leaderboard"));
    let tables: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    let standings = tables["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"] == "standings")
        .unwrap();
    let games: u64 = standings["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["games"].as_u64().unwrap())
        .sum();
    assert_eq!(
        games,
        2 * u64::from(GAMES),
        "every game counted, once a side"
    );
    let (rss, hwm) = memory_kib(server.pid());
    println!(
        "serve at scale: leaderboard of {GAMES} games {:.0} ms, again from the cache {:.0} ms; \
         peak RSS {} MiB after the pages, {} MiB after the leaderboard",
        board_ms.as_secs_f64() * 1e3,
        cached_ms.as_secs_f64() * 1e3,
        pages_hwm / 1024,
        hwm / 1024,
    );
    println!(
        "serve at scale: {GAMES} games ({size_mb:.0} MB store, made in {:.1} s); first page {:.0} ms, \
         page at the end {:.0} ms, filtered page {:.0} ms, by opening {:.0} ms, a game {:.0} ms; server RSS {} MiB \
         (peak {} MiB, {} MiB before the first request)",
        made.as_secs_f64(),
        first_ms.as_secs_f64() * 1e3,
        late_ms.as_secs_f64() * 1e3,
        filtered_ms.as_secs_f64() * 1e3,
        opening_ms.as_secs_f64() * 1e3,
        game_ms.as_secs_f64() * 1e3,
        rss / 1024,
        hwm / 1024,
        baseline_hwm / 1024,
    );
    // Bounded by the page, not the store: the server's peak stays within 32 MiB of what it
    // started with after 45 pages and games from all over the store and the leaderboard
    // (reading the tournament's 100,000 game rows once, as `Store::games` does, passes that
    // bound).
    assert!(
        hwm < baseline_hwm + 32 * 1024,
        "the server grew from {baseline_hwm} KiB to a peak of {hwm} KiB reading pages of a {size_mb:.0} MB store"
    );
}
