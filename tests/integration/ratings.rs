//! Ratings depend on the games, not on how they were played: the same tournament at concurrency
//! 1 and 8 gives the same Glicko-1 and Bradley–Terry tables, although its games finish in another
//! order; and the Bradley–Terry table reads as ordo's.

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

/// Two Stockfish strengths at fixed nodes (deterministic with one thread) and three seeded random
/// movers, four games a pair from two book openings: 40 games of very different lengths, so that
/// at concurrency 8 short games overtake long ones.
fn script() -> String {
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/books/2moves_v1.epd");
    format!(
        r#"local function sf(nodes)
  return arena.engine {{ name = "sf-n" .. nodes, options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = nodes }} }}
end
return arena.tournament {{
  name = "order", games_per_pair = 4, max_plies = 100, seed = 11,
  openings = {{ file = "{book}", count = 2 }},
  players = {{
    sf(1),
    sf(30),
    arena.random {{ name = "rnd-1", seed = 1 }},
    arena.random {{ name = "rnd-2", seed = 2 }},
    arena.random {{ name = "rnd-3", seed = 3 }},
  }},
}}"#
    )
}

/// The leaderboard as JSON (every player shown), the game numbers in the order the games
/// finished, and each game's number and result.
type Played = (serde_json::Value, Vec<u32>, Vec<(u32, Option<String>)>);

/// Plays the tournament at `concurrency`.
fn play(concurrency: &str) -> Played {
    let dir = TestDir::new();
    dir.write("t.lua", &script());
    let out = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .args(["--concurrency", concurrency])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--all", "--format", "json"])
        .output()
        .expect("arena runs");
    assert!(board.status.success(), "{}", stderr(&board));
    let json = serde_json::from_str(&stdout(&board)).expect("json");
    let store = open_store(&dir.db());
    let t = store.find_tournament("order").unwrap().unwrap();
    let mut games = store.games(t.id).unwrap();
    let results = games.iter().map(|g| (g.index, g.result.clone())).collect();
    games.sort_by(|a, b| {
        a.finished_at
            .cmp(&b.finished_at)
            .then(a.index.cmp(&b.index))
    });
    (json, games.iter().map(|g| g.index).collect(), results)
}

#[test]
fn the_same_games_rate_the_same_at_concurrency_1_and_8() {
    if !stockfish("the_same_games_rate_the_same_at_concurrency_1_and_8") {
        return;
    }
    let (serial, serial_order, serial_results) = play("1");
    let (parallel, parallel_order, parallel_results) = play("8");
    assert_eq!(serial_results.len(), 40);
    assert_eq!(
        serial_results, parallel_results,
        "the games themselves are the same"
    );
    let schedule: Vec<u32> = (1..=40).collect();
    assert_eq!(serial_order, schedule);
    // Without this the comparison below could not fail.
    assert_ne!(
        parallel_order, schedule,
        "at concurrency 8 some games finish out of schedule order"
    );
    for table in [
        "order · ratings (Glicko-1)",
        "order · ratings (Bradley-Terry)",
        "order · Bradley-Terry fit",
    ] {
        assert!(
            serial[table]
                .as_array()
                .is_some_and(|rows| !rows.is_empty()),
            "{table} in {serial}"
        );
        assert_eq!(serial[table], parallel[table], "{table}");
    }
    assert_eq!(serial, parallel);

    // The Bradley–Terry table: ordo's columns, the mean at 0, one row per player.
    let bt = serial["order · ratings (Bradley-Terry)"]
        .as_array()
        .unwrap();
    assert_eq!(bt.len(), 5);
    for column in [
        "Rank",
        "Name",
        "Elo",
        "+/-",
        "Games",
        "Score",
        "Draws",
        "Rank held",
    ] {
        assert!(bt[0].get(column).is_some(), "{column} in {}", bt[0]);
    }
    let mean = bt.iter().map(|r| r["Elo"].as_f64().unwrap()).sum::<f64>() / 5.0;
    assert!(mean.abs() < 0.1, "{mean}");
    assert!(bt[0]["Name"].as_str().unwrap().starts_with("sf-"), "{bt:?}");
    assert_eq!(
        serial["order · Bradley-Terry fit"][0]["resampled"],
        "opening pairs"
    );
}
