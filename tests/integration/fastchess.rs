//! Parity with fastchess: `tournaments/fastchess_parity.lua` must play the 20 games fastchess
//! played with the same engines, limits, options and openings, move for move and result for result
//! (the reference is `$ARENA_REFERENCE_DATA/fastchess-reference/games.pgn`).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use arena::board::read_pgn_openings;

use crate::common::{TestDir, open_store, stderr, stockfish};

/// One reference game: who had White, the moves in UCI and the result.
#[derive(Debug)]
struct Reference {
    white: String,
    moves: Vec<String>,
    result: String,
}

/// The reference folder, or `None` (with a note) when the tests run without the reference data.
fn reference_dir(test: &str) -> Option<PathBuf> {
    arena_testkit::reference_data(test).map(|dir| dir.join("fastchess-reference"))
}

/// Reads the reference PGN keyed by (start FEN, White). Moves come from arena's own PGN book
/// reader (SAN to UCI, comments skipped); the `White` and `Result` tags are read here, in the same
/// game order.
fn read_reference(pgn: &Path) -> BTreeMap<(String, String), Reference> {
    let games = read_pgn_openings(pgn).expect("the reference PGN reads");
    let text = std::fs::read_to_string(pgn).expect("the reference PGN");
    let tag = |name: &str| -> Vec<String> {
        let prefix = format!("[{name} \"");
        text.lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.trim_end_matches("\"]").to_owned())
            .collect()
    };
    let (whites, results) = (tag("White"), tag("Result"));
    assert_eq!(games.len(), whites.len(), "one White tag per game");
    assert_eq!(games.len(), results.len(), "one Result tag per game");
    let mut by_key = BTreeMap::new();
    for ((game, white), result) in games.into_iter().zip(whites).zip(results) {
        let fen = game.fen.expect("every reference game starts from a FEN");
        let key = (fen, white.clone());
        let old = by_key.insert(
            key.clone(),
            Reference {
                white,
                moves: game.moves,
                result,
            },
        );
        assert!(old.is_none(), "two reference games for {key:?}");
    }
    by_key
}

#[test]
fn fastchess_parity_games_are_identical() {
    let test = "fastchess_parity_games_are_identical";
    let Some(reference_dir) = reference_dir(test) else {
        return;
    };
    if !stockfish(test) {
        return;
    }
    let reference = read_reference(&reference_dir.join("games.pgn"));
    assert_eq!(reference.len(), 20, "the reference holds 20 games");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tournaments/fastchess_parity.lua");
    let dir = TestDir::new();
    let out = dir
        .arena()
        .arg("run")
        .arg(&script)
        .args(["--db", "t.db", "--no-watch"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let t = store
        .find_tournament("fastchess-parity")
        .unwrap()
        .expect("the tournament is stored");
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), reference.len());
    let mut mismatches = Vec::new();
    for g in &games {
        let fen = g
            .start_fen
            .clone()
            .expect("every game starts from an opening");
        let Some(want) = reference.get(&(fen.clone(), g.white.clone())) else {
            mismatches.push(format!(
                "game {}: no reference game for {fen} with White {}",
                g.index, g.white
            ));
            continue;
        };
        assert_eq!(want.white, g.white);
        let played: Vec<String> = store
            .plies(g.id)
            .unwrap()
            .into_iter()
            .map(|p| p.uci)
            .collect();
        if let Some(ply) =
            (0..played.len().max(want.moves.len())).find(|&i| played.get(i) != want.moves.get(i))
        {
            mismatches.push(format!(
                "game {} ({fen}, White {}): first difference at ply {ply}: arena {:?}, fastchess {:?}",
                g.index,
                g.white,
                played.get(ply),
                want.moves.get(ply)
            ));
        }
        if g.result.as_deref() != Some(want.result.as_str()) {
            mismatches.push(format!(
                "game {}: result {:?}, fastchess {}",
                g.index, g.result, want.result
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
