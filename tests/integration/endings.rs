//! The tournament's `endings`: an engine match ends at the fifty-move claim as cutechess ends it,
//! a game with a random mover plays on (the anchors' automatic endings), `endings = "automatic"`
//! overrides the engine match, and the stored termination and the PGN's tags name the rule,
//! checked with python-chess.

use std::process::Command;

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

/// Rook and king against king, the halfmove clock at 99: any quiet move reaches 100.
const FEN: &str = "7k/8/8/8/8/8/R7/K7 w - - 99 80";

/// Reads the exported PGN and prints, per game, the `Termination` and `ArenaTermination` tags and
/// whether python-chess finds the fifty-move rule in the final position.
const READ_BACK: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        board = game.end().board()
        h = game.headers
        print("|".join([h["White"], h["Black"], h.get("Termination", "-"),
                        h.get("ArenaTermination", "-"), str(board.is_fifty_moves()),
                        str(board.ply() - chess.Board(h["FEN"]).ply())]))
"#;

fn tournament(dir: &TestDir, name: &str, endings: &str) {
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "{name}", games_per_pair = 2, max_plies = 4, seed = 5, {endings}
  openings = {{ fens = {{ "{FEN}" }} }},
  players = {{
    arena.engine {{ name = "sf1", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 2000 }} }},
    arena.engine {{ name = "sf2", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 2000 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));
}

#[test]
fn engine_matches_end_at_the_fifty_move_claim_and_other_games_play_on() {
    let test = "engine_matches_end_at_the_fifty_move_claim_and_other_games_play_on";
    if !stockfish(test) || !arena_testkit::python_chess(test) {
        return;
    }
    let dir = TestDir::new();
    // No `endings`: each game's own.
    tournament(&dir, "per game", "");
    let store = open_store(&dir.db());
    let t = store.find_tournament("per game").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6);
    for g in &games {
        let plies = store.plies(g.id).unwrap().len();
        let engines = g.white.starts_with("sf") && g.black.starts_with("sf");
        if engines {
            assert_eq!(g.termination.as_deref(), Some("fifty_move_rule"), "{g:?}");
            assert_eq!(g.result.as_deref(), Some("1/2-1/2"));
            assert_eq!(plies, 1, "{g:?}");
        } else {
            assert_ne!(g.termination.as_deref(), Some("fifty_move_rule"), "{g:?}");
            assert!(plies > 1, "{g:?}");
        }
    }
    let export = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db", "--out", "games.pgn"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let out = Command::new("python3")
        .args(["-c", READ_BACK, "games.pgn"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    let claimed: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("|fifty_move_rule|"))
        .collect();
    assert_eq!(claimed.len(), 2, "{lines:?}");
    for line in claimed {
        // The standard tag says a normal ending; python-chess sees the rule in the final position.
        assert!(line.starts_with("sf"), "{line}");
        assert!(line.ends_with("|normal|fifty_move_rule|True|1"), "{line}");
    }
    let stats = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--stats"])
        .output()
        .unwrap();
    assert!(stats.status.success(), "{}", stderr(&stats));
    assert!(
        stdout(&stats).contains("drawn by fifty move rule"),
        "{}",
        stdout(&stats)
    );

    // The automatic endings asked for: the engine match plays on.
    let dir = TestDir::new();
    tournament(&dir, "automatic", r#"endings = "automatic","#);
    let store = open_store(&dir.db());
    let t = store.find_tournament("automatic").unwrap().unwrap();
    for g in store.games(t.id).unwrap() {
        assert_ne!(g.termination.as_deref(), Some("fifty_move_rule"), "{g:?}");
        assert!(store.plies(g.id).unwrap().len() > 1, "{g:?}");
    }
}
