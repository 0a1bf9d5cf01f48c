//! Chess clocks from a tournament script: engines get the clocks through UCI and lose on time;
//! every charged time is stored with its ply.

use std::path::Path;

use arena::store::{GameStatus, PlyRecord, Store};

use crate::common::{TestDir, open_store, stderr, stockfish};

/// The clock of `player` after each of its moves in `plies`, replayed from the stored charges
/// under `base_ms` + `inc_ms`; every move of the player must carry its charge.
fn clock_after_each_move(plies: &[PlyRecord], player: &str, base_ms: i64, inc_ms: i64) -> Vec<i64> {
    let mut left = base_ms;
    let mut readings = Vec::new();
    for p in plies.iter().filter(|p| p.player == player) {
        let used = p
            .clock_ms
            .unwrap_or_else(|| panic!("ply {} has no clock time", p.ply));
        left = left - used as i64 + inc_ms;
        readings.push(left - inc_ms);
    }
    readings
}

fn games(store: &Store, name: &str) -> Vec<arena::store::GameRow> {
    let t = store
        .find_tournament(name)
        .unwrap()
        .expect("the tournament");
    store.games(t.id).unwrap()
}

#[test]
fn a_limited_strength_stockfish_plays_on_a_clock() {
    if !stockfish("a_limited_strength_stockfish_plays_on_a_clock") {
        return;
    }
    let dir = TestDir::new();
    // The lead's rung, at a short clock: UCI_LimitStrength needs Stockfish's own time management.
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "clocked", games_per_pair = 2, max_plies = 60,
  players = {
    arena.engine { name = "sf1350", options = { UCI_LimitStrength = true, UCI_Elo = 1350, Threads = 1, Hash = 16 },
                   time_control = { base_s = 2, increment_s = 0.05 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = games(&store, "clocked");
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(g.status, GameStatus::Finished, "{g:?}");
        let plies = store.plies(g.id).unwrap();
        let readings = clock_after_each_move(&plies, "sf1350", 2000, 50);
        assert!(!readings.is_empty());
        // Never negative: the engine managed the clock it was sent.
        assert!(readings.iter().all(|&ms| ms >= 0), "{readings:?}");
        // It did think on it (a fixed-effort search would not vary with the clock).
        let thought: u64 = plies
            .iter()
            .filter(|p| p.player == "sf1350")
            .filter_map(|p| p.clock_ms)
            .sum();
        assert!(thought > 0, "{plies:?}");
        // The random mover has no clock of its own and none from the tournament.
        assert!(
            plies
                .iter()
                .filter(|p| p.player == "rnd")
                .all(|p| p.clock_ms.is_none())
        );
        assert_eq!(
            readings.len(),
            exported_clocks_of(&dir, g.index, false).len()
        );
        // On a loaded machine Stockfish may still lose on time (its clock is wall time); then
        // the flag is its own, and the move it took too long for is not stored.
        if g.termination.as_deref() == Some("time_forfeit") {
            let reason = g.reason.as_deref().unwrap_or("");
            assert!(reason.starts_with("`sf1350` ran out of time"), "{g:?}");
            let sf_lost = if g.white == "sf1350" { "0-1" } else { "1-0" };
            assert_eq!(g.result.as_deref(), Some(sf_lost), "{g:?}");
        }
    }
}

/// python-chess's reading of one game of `arena export pgn` (plain, or `--annotate`): the
/// time control tags, then one line per move with its `[%clk]` and `[%emt]` in seconds (`-` for none).
const READ_CLOCKS: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        if game.headers["ArenaGame"] != sys.argv[2]:
            continue
        assert not game.errors, game.errors
        side = "White" if game.headers["White"] == "sf1350" else "Black"
        print(game.headers.get("TimeControl", "?"), game.headers.get(side + "TimeControl", "?"))
        for node in game.mainline():
            clk, emt = node.clock(), node.emt()
            print("-" if clk is None else f"{clk:.3f}", "-" if emt is None else f"{emt:.3f}")
"#;

/// The `[%clk]` readings (milliseconds) of Stockfish's moves in game `index` as python-chess
/// reads the export, checked against the store: the tag, every clock and move time.
fn exported_clocks_of(dir: &TestDir, index: u32, annotate: bool) -> Vec<i64> {
    let mut args = vec!["export", "pgn", "--db", "t.db", "--out", "games.pgn"];
    if annotate {
        args.push("--annotate");
    }
    let out = dir.arena().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let read = std::process::Command::new("python3")
        .args(["-c", READ_CLOCKS, "games.pgn", &index.to_string()])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(read.status.success(), "{}", stderr(&read));
    let text = String::from_utf8_lossy(&read.stdout).into_owned();
    let mut lines = text.lines();
    // Only Stockfish has a clock: each side's own tag, the random mover's saying "none".
    assert_eq!(lines.next(), Some("? 2+0.05"), "{text}");
    let store = open_store(&dir.db());
    let game = games(&store, "clocked")
        .into_iter()
        .find(|g| g.index == index)
        .unwrap();
    let plies = store.plies(game.id).unwrap();
    let expected = clock_after_each_move(&plies, "sf1350", 2000, 50);
    let mut clocks = Vec::new();
    for (p, line) in plies.iter().zip(lines) {
        let (clk, emt) = line.split_once(' ').unwrap();
        if p.player == "sf1350" {
            let ms = |s: &str| (s.parse::<f64>().unwrap() * 1000.0).round() as i64;
            assert_eq!(ms(emt), p.clock_ms.unwrap() as i64, "{line}");
            clocks.push(ms(clk));
        } else if annotate {
            // The untimed side shows its wall time, and no clock.
            assert_eq!(clk, "-", "{line}");
        } else {
            assert_eq!(line, "- -");
        }
    }
    // `[%clk]` is the clock after the move, increment added.
    let after: Vec<i64> = expected.iter().map(|left| left + 50).collect();
    assert_eq!(clocks, after);
    if !annotate {
        assert_eq!(clocks, exported_clocks_of(dir, index, true));
    }
    clocks
}

#[test]
fn a_hung_engine_on_a_clock_loses_on_time() {
    let dir = TestDir::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/hang_on_go.py");
    let state = dir.path().join("engine-state");
    std::fs::create_dir_all(&state).unwrap();
    // The tournament's clock applies to both; the engine's first process never answers `go`.
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "flag", games_per_pair = 1, max_plies = 10,
  time_control = {{ base_s = 0.3, increment_s = 0.1 }},
  players = {{
    arena.engine {{ name = "hangs", command = "{}", args = {{ "{}" }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            fixture.display(),
            state.display()
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = games(&store, "flag");
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(g.white, "hangs");
    assert_eq!(g.termination.as_deref(), Some("time_forfeit"), "{g:?}");
    assert_eq!(g.result.as_deref(), Some("0-1"));
    assert!(
        g.reason
            .as_deref()
            .unwrap_or("")
            .contains("`hangs` ran out of time"),
        "{g:?}"
    );
    // The engine was told both clocks, and no node limit (the clock ends its searches).
    let commands = std::fs::read_to_string(state.join("commands.log")).unwrap();
    assert!(
        commands.contains("go wtime 300 btime 300 winc 100 binc 100"),
        "{commands}"
    );
}

#[test]
fn a_killed_clocked_game_resumes_with_the_clocks_it_had() {
    if !stockfish("a_killed_clocked_game_resumes_with_the_clocks_it_had") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "resumed", games_per_pair = 1, max_plies = 16,
  time_control = { base_s = 30, increment_s = 0.1 },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    crate::common::run_then_kill(
        &dir,
        "resumed",
        std::time::Duration::from_secs(120),
        |s, t| {
            s.games(t)
                .ok()
                .and_then(|g| g.first().map(|g| g.ply_count >= 6))
                .unwrap_or(false)
        },
    );
    let store = open_store(&dir.db());
    let game = games(&store, "resumed").remove(0);
    let before = store.plies(game.id).unwrap();
    assert!(before.len() >= 6);
    drop(store);
    // What Stockfish's clock reads from the stored charges alone.
    let sf_moves: Vec<u64> = before
        .iter()
        .filter(|p| p.player == "sf")
        .map(|p| p.clock_ms.expect("a charge"))
        .collect();
    let expected = 30_000 + 100 * sf_moves.len() as u64 - sf_moves.iter().sum::<u64>();

    let out = dir
        .arena()
        .env("ARENA_LOG", "arena_engine=debug")
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = stderr(&out);
    let go = log
        .lines()
        .find(|l| l.contains("> go "))
        .unwrap_or_else(|| panic!("no go in {log}"));
    // The first search after the resume is sent the clock the stored moves left.
    assert!(
        go.contains(&format!("go wtime {expected} ")),
        "{go} (expected wtime {expected})"
    );
    let store = open_store(&dir.db());
    let after = store.plies(game.id).unwrap();
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(store.game(game.id).unwrap().status, GameStatus::Finished);
}
