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

/// The README's first tournament (under "Writing a tournament"), as it is printed.
fn guide_first_example() -> String {
    // The README sends its readers to the book's "Writing a tournament" for the full example.
    let page = "docs/src/guide/writing-a-tournament.md";
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page))
        .unwrap_or_else(|e| panic!("{page}: {e}"));
    let start = text
        .find("```lua\n")
        .unwrap_or_else(|| panic!("{page} has a Lua example"))
        + 7;
    let end = start + text[start..].find("```").expect("the example ends");
    text[start..end].to_owned()
}

#[test]
fn the_guides_first_example_is_reproducible_and_its_book_exists() {
    let example = guide_first_example();
    // `Skill Level` picks its moves at random (seeded from the clock): no two runs agree.
    assert!(
        !example.contains("Skill Level"),
        "the first example uses `Skill Level`:\n{example}"
    );
    assert!(example.contains("nodes = "), "{example}");
    let file = example
        .split("file = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the example names an opening book");
    // The example's paths are from the repository's root, where its book lives.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let openings = read_epd(&path).unwrap_or_else(|e| panic!("the book `{file}`: {e}"));
    assert!(openings.len() >= 20, "the example draws 20 openings");
    // And it loads as written, beside the same book.
    let dir = crate::common::TestDir::new();
    std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("books"),
        dir.path().join("books"),
    )
    .expect("link the books");
    dir.write("t.lua", &example);
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        crate::common::stdout(&out),
        crate::common::stderr(&out)
    );
}
