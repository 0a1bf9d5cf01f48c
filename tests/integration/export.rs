//! `arena export pgn` writes PGN that python-chess reads without errors, and `arena leaderboard`
//! prints the stored standings.

use std::process::Command;

use crate::common::{TestDir, stderr, stdout, stockfish};

/// Reads every game with python-chess, replays it, and prints one line per game:
/// `white|black|result|termination|plycount|moves|final fen|errors`.
const READ_BACK: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        board = game.end().board()
        h = game.headers
        print("|".join([h["White"], h["Black"], h["Result"], h.get("Termination", "-"),
                        h.get("PlyCount", "-"), str(len(list(game.mainline_moves()))),
                        board.fen(), str(len(game.errors))]))
"#;

fn python_chess() -> bool {
    arena::test_parts::python_chess("export tests")
}

#[test]
fn exported_games_read_back_with_python_chess() {
    if !stockfish("exported_games_read_back_with_python_chess") || !python_chess() {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "export test", games_per_pair = 4, max_plies = 30, seed = 3,
  openings = { fens = {
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkbnr/ppp1pppp/8/3p4/2PP4/8/PP2PPPP/RNBQKBNR b KQkq - 0 2",
  } },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { nodes = 500 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));

    let export = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db", "--out", "games.pgn"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Event \"export test\"]").count(), 4, "{pgn}");
    assert_eq!(pgn.matches("[SetUp \"1\"]").count(), 4, "{pgn}");

    let out = Command::new("python3")
        .args(["-c", READ_BACK, "games.pgn"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{}", stdout(&out));

    let store = crate::common::open_store(&dir.db());
    let t = store.find_tournament("export test").unwrap().unwrap();
    for (line, game) in lines.iter().zip(store.games(t.id).unwrap()) {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f[0], game.white);
        assert_eq!(f[1], game.black);
        assert_eq!(Some(f[2]), game.result.as_deref());
        assert_ne!(f[3], "-", "Termination tag present");
        assert_eq!(f[4], f[5], "PlyCount equals the moves python-chess read");
        assert_eq!(f[7], "0", "python-chess reported errors: {line}");
        // The position python-chess reaches is the one arena stored last.
        let plies = store.plies(game.id).unwrap();
        let mut board = arena::board::Game::new(game.start_fen.as_deref(), 0).unwrap();
        for p in &plies {
            board.play_uci(&p.uci).unwrap();
        }
        assert_eq!(
            f[6].split(' ').take(4).collect::<Vec<_>>(),
            board.fen().split(' ').take(4).collect::<Vec<_>>()
        );
    }

    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(board.status.success());
    let text = stdout(&board);
    assert!(
        text.starts_with("export test · ratings (Glicko-1)\n"),
        "{text}"
    );
    // Four games leave both players provisional (RD above 100): hidden, and said so.
    assert!(
        text.contains("2 player(s) with RD above 100 not shown"),
        "{text}"
    );
    assert!(text.contains("export test · standings"), "{text}");

    let json = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--all",
            "--stats",
            "--games",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let ratings = v["export test · ratings (Glicko-1)"].as_array().unwrap();
    assert_eq!(ratings.len(), 2);
    assert_eq!(
        ratings[0]["player"], "sf",
        "Stockfish rates above the random mover"
    );
    assert_eq!(ratings[0]["games"], 4);
    assert_eq!(ratings[0]["mode"], "engine");
    assert!(ratings[0]["rating"].as_f64().unwrap() >= ratings[1]["rating"].as_f64().unwrap());
    let terminations = v["export test · terminations"].as_array().unwrap();
    assert_eq!(terminations.len(), 2);
    let per_game = v["export test · games"].as_array().unwrap();
    assert_eq!(per_game.len(), 4);
    for g in per_game {
        assert!(g["plies"].as_i64().unwrap() > 0, "{g}");
        assert!(
            ["1-0", "0-1", "1/2-1/2"].contains(&g["result"].as_str().unwrap()),
            "{g}"
        );
    }
}
