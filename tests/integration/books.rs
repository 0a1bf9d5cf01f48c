//! The CC0 opening books shipped in `books/` are read completely, every position and move valid.

use std::path::Path;

use arena::board::{read_epd, read_pgn_openings};

fn book(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("books")
        .join(name)
}

#[test]
fn the_two_move_epd_book_reads_fully() {
    let path = book("2moves_v1.epd");
    let lines = std::fs::read_to_string(&path)
        .expect("the book is in the repository")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count();
    let openings = read_epd(&path).expect("every line is a valid position");
    assert_eq!(openings.len(), lines);
    assert_eq!(openings.len(), 40_457);
    // Two moves per side: every position has White to move at move 3.
    assert!(
        openings.iter().all(|o| o.moves.is_empty()
            && o.fen
                .as_deref()
                .is_some_and(|f| f.contains(" w ") && f.ends_with(" 3"))),
        "a position that is not two moves per side"
    );
}

#[test]
fn the_eight_move_pgn_book_reads_fully() {
    let path = book("8moves_v3.pgn");
    let games = std::fs::read_to_string(&path)
        .expect("the book is in the repository")
        .lines()
        .filter(|l| l.starts_with("[Event "))
        .count();
    let openings = read_pgn_openings(&path).expect("every game is valid");
    assert_eq!(openings.len(), games);
    assert_eq!(openings.len(), 34_700);
    // Eight moves per side, from the initial position.
    assert!(
        openings
            .iter()
            .all(|o| o.fen.is_none() && o.moves.len() == 16)
    );
}
