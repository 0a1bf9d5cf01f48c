//! Chess960 tournaments: Stockfish against the random mover from Chess960 starts, exported as PGN
//! and read back by python-chess as Chess960 (castlings included), analysed, and the script
//! errors `arena check` reports at the tournament's line.

use std::process::Command;

use arena::board::{Variant, chess960_fen};

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

/// Reads every game with python-chess and prints, per game: the Variant tag, whether the board
/// is a Chess960 board, the FEN tag, the moves in UCI as python-chess writes them on that board
/// (king takes rook for castling), the number of castlings, the final FEN and the read errors.
const READ_BACK: &str = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while True:
        game = chess.pgn.read_game(f)
        if game is None:
            break
        board = game.board()
        ucis, castles = [], 0
        for move in game.mainline_moves():
            castles += board.is_castling(move)
            ucis.append(board.uci(move))
            board.push(move)
        h = game.headers
        print("|".join([h.get("Variant", "-"), str(board.chess960), h.get("FEN", "-"),
                        " ".join(ucis), str(castles), board.fen(), str(len(game.errors))]))
"#;

/// A round robin of Stockfish and the random mover over `starts` openings, each played once with
/// each colour (`games_per_pair` twice the openings, as for a book).
fn script(openings: &str, starts: u32, max_plies: u32) -> String {
    let games_per_pair = 2 * starts;
    format!(
        r#"return arena.tournament {{
  name = "c960", games_per_pair = {games_per_pair}, max_plies = {max_plies}, seed = 7,
  openings = {openings},
  players = {{
    arena.engine {{ name = "sf", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = 3000 }} }},
    arena.random {{ name = "rnd" }},
  }},
  analysis = {{ depth = 6, multipv = 2, processes = 1 }},
}}"#
    )
}

#[test]
fn chess960_games_read_back_with_python_chess_as_chess960() {
    let test = "chess960_games_read_back_with_python_chess_as_chess960";
    if !stockfish(test) || !arena_testkit::python_chess(test) {
        return;
    }
    let dir = TestDir::new();
    // 0 (BBQNNRKR: both rooks beside the king), 518 (the standard array, castling as Chess960)
    // and 959 (RKRNNQBB): each with both colours.
    dir.write("t.lua", &script("{ chess960 = { 0, 518, 959 } }", 3, 80));
    let run = dir.run("t.lua");
    assert!(run.status.success(), "{}", stderr(&run));

    let store = open_store(&dir.db());
    let t = store.find_tournament("c960").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6);
    for (i, game) in games.iter().enumerate() {
        assert_eq!(game.variant, Variant::Chess960);
        let number = [0, 518, 959][i / 2];
        assert_eq!(
            game.start_fen.as_deref(),
            Some(chess960_fen(number).unwrap().as_str())
        );
    }
    // Each start is played once with each colour.
    assert_eq!(
        (games[0].white.as_str(), games[1].white.as_str()),
        ("sf", "rnd")
    );

    let export = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db", "--out", "games.pgn"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{}", stderr(&export));
    let pgn = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    assert_eq!(pgn.matches("[Variant \"Chess960\"]").count(), 6, "{pgn}");
    assert_eq!(pgn.matches("[SetUp \"1\"]").count(), 6, "{pgn}");

    let out = Command::new("python3")
        .args(["-c", READ_BACK, "games.pgn"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 6, "{}", stdout(&out));
    let mut castles = 0;
    for (line, game) in lines.iter().zip(&games) {
        let f: Vec<&str> = line.split('|').collect();
        assert_eq!(f[0], "Chess960", "{line}");
        assert_eq!(f[1], "True", "python-chess reads a Chess960 board: {line}");
        assert_eq!(Some(f[2]), game.start_fen.as_deref());
        assert_eq!(f[6], "0", "python-chess reported errors: {line}");
        // Every move, castlings included, is the move arena stored, in the same UCI.
        let plies = store.plies(game.id).unwrap();
        let stored: Vec<&str> = plies.iter().map(|p| p.uci.as_str()).collect();
        assert_eq!(f[3], stored.join(" "), "game {}", game.index);
        castles += f[4].parse::<u32>().unwrap();
        // The position python-chess reaches is the one arena reaches.
        let mut board =
            arena::board::Game::new_in(Variant::Chess960, game.start_fen.as_deref(), 0).unwrap();
        for uci in &stored {
            board.play_uci(uci).unwrap();
        }
        assert_eq!(f[5], board.fen(), "{line}");
    }
    assert!(castles > 0, "no game castled; pick other starts: {pgn}");
    // Castling is stored as king takes rook, SAN O-O / O-O-O.
    let castled = games
        .iter()
        .flat_map(|g| store.plies(g.id).unwrap())
        .find(|p| p.san.starts_with("O-O"))
        .expect("a castling ply");
    let (from, to) = (&castled.uci[0..2], &castled.uci[2..4]);
    let before = arena::board::position_from_fen(Variant::Chess960, &castled.fen_before).unwrap();
    use shakmaty::Position as _;
    let rook = before.board().piece_at(to.parse().unwrap()).unwrap();
    let king = before.board().piece_at(from.parse().unwrap()).unwrap();
    assert_eq!(
        (king.role, rook.role),
        (shakmaty::Role::King, shakmaty::Role::Rook)
    );
    assert_eq!(king.color, rook.color);

    // The analysis replayed every game under Chess960 rules: each ply of each game has a verdict.
    for game in &games {
        let analysed = store.ply_analyses(game.id).unwrap().len();
        assert_eq!(
            analysed,
            store.plies(game.id).unwrap().len(),
            "game {}",
            game.index
        );
    }

    // The store's own PGN reads back as a Chess960 book (the import path of exported games).
    let book = arena::board::read_pgn_openings(dir.path().join("games.pgn")).unwrap();
    assert_eq!(book.len(), 6);
    assert!(book.iter().all(|o| o.variant == Variant::Chess960));
    for (opening, game) in book.iter().zip(&games) {
        assert_eq!(opening.fen, game.start_fen);
        let stored: Vec<String> = store
            .plies(game.id)
            .unwrap()
            .into_iter()
            .map(|p| p.uci)
            .collect();
        assert_eq!(opening.moves, stored);
    }
}

#[test]
fn chess960_starts_drawn_from_the_seed_are_reproducible() {
    let test = "chess960_starts_drawn_from_the_seed_are_reproducible";
    if !stockfish(test) {
        return;
    }
    let mut starts = Vec::new();
    for _ in 0..2 {
        let dir = TestDir::new();
        dir.write("t.lua", &script("{ chess960 = true, count = 3 }", 3, 4));
        let run = dir.run("t.lua");
        assert!(run.status.success(), "{}", stderr(&run));
        let store = open_store(&dir.db());
        let t = store.find_tournament("c960").unwrap().unwrap();
        let games = store.games(t.id).unwrap();
        assert_eq!(games.len(), 6);
        assert!(games.iter().all(|g| g.variant == Variant::Chess960));
        starts.push(
            games
                .iter()
                .map(|g| g.start_fen.clone().unwrap())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(starts[0], starts[1]);
    let distinct: std::collections::BTreeSet<&String> = starts[0].iter().collect();
    assert_eq!(distinct.len(), 3, "{:?}", starts[0]);
}

#[test]
fn an_engine_without_uci_chess960_is_refused_by_name() {
    let test = "an_engine_without_uci_chess960_is_refused_by_name";
    // Toga II advertises no UCI_Chess960.
    if arena::engine::locate::for_test(test, "toga2").is_none() {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "c960", openings = { chess960 = { 100 } },
  players = {
    arena.engine { name = "toga", command = "toga2", limits = { depth = 1 } },
    arena.random { name = "rnd" },
  },
}"#,
    );
    let run = dir.run("t.lua");
    let err = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("t.lua:") && err.contains("`toga`") && err.contains("UCI_Chess960"),
        "{err}"
    );
}

#[test]
fn check_reports_bad_chess960_openings_at_their_line() {
    let dir = TestDir::new();
    let cases = [
        (
            "{ chess960 = { 518, 960 } }",
            "chess960[2] = 960 is out of range",
        ),
        ("{ chess960 = { -1 } }", "chess960[1] = -1 is out of range"),
        (
            "{ chess960 = true, count = 0 }",
            "`count` must be at least 1",
        ),
        (
            "{ chess960 = { 12 }, count = 0 }",
            "`count` must be at least 1",
        ),
        ("{ chess960 = true }", "give `count`"),
        (
            "{ chess960 = true, count = 4, file = \"book.epd\" }",
            "cannot be combined with a book `file`",
        ),
    ];
    for (openings, message) in cases {
        dir.write(
            "t.lua",
            &format!(
                "local arena = require(\"arena\")\n\nreturn arena.tournament {{\n  name = \"c\",\n  openings = {openings},\n  players = {{ arena.random {{ name = \"a\" }}, arena.random {{ name = \"b\" }} }},\n}}\n"
            ),
        );
        let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{openings}: {err}");
        assert!(
            err.contains("t.lua:5:") && err.contains(message),
            "{openings}: {err}"
        );
    }
    dir.write(
        "t.lua",
        "return arena.tournament { name = \"c\", openings = { chess960 = { 0, 959 }, order = \"random\", count = 1 },\n  players = { arena.random { name = \"a\" }, arena.random { name = \"b\" } } }\n",
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
