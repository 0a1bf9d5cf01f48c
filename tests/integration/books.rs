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
    // The example names a built-in book, found from any folder (here an empty one).
    let name = example
        .split("book = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the example names a built-in opening book");
    let openings = arena::board::book::read_built_in(name)
        .unwrap_or_else(|e| panic!("the book `{name}`: {e}"));
    assert!(openings.len() >= 20, "the example draws 20 openings");
    // The built-in book is the repository's file, byte for byte.
    let file =
        read_epd(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("books/{name}.epd"))).unwrap();
    assert_eq!(
        openings.iter().map(|o| &o.fen).collect::<Vec<_>>(),
        file.iter().map(|o| &o.fen).collect::<Vec<_>>()
    );
    // And it loads as written, in a folder without the books.
    let dir = crate::common::TestDir::new();
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

/// Peak resident memory of a running process in KiB (`VmHWM`), if it still runs.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A book is read a line at a time: `arena check` on an EPD book of 300,000 lines (about 104 MB,
/// mostly comments, with 50,000 positions) peaks far below the book's size, where reading it
/// whole took more than the book itself.
#[test]
fn a_large_book_is_read_in_bounded_memory() {
    use std::io::Write;
    const LINES: usize = 300_000;
    let dir = crate::common::TestDir::new();
    let path = dir.path().join("big.epd");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let comment = format!("# {}\n", "x".repeat(400));
        for i in 0..LINES {
            if i % 6 == 0 {
                writeln!(
                    out,
                    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"{i}\";"
                )
                .unwrap();
            } else {
                out.write_all(comment.as_bytes()).unwrap();
            }
        }
    }
    let size = std::fs::metadata(&path).unwrap().len();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t", games_per_pair = 2, openings = { file = "big.epd" },
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 5 } },
}"#,
    );
    let mut child = dir
        .arena()
        .args(["check", "t.lua"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak = 0;
    // VmHWM only grows, so its last reading before the process exits is (nearly) its peak.
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("peak RSS {peak} KiB for a {size}-byte book of {LINES} lines");
    assert!(size > 100_000_000, "the book has {size} bytes");
    assert!(peak > 0, "the check's memory was read");
    // The binary, Lua and 50,000 openings take a few tens of MiB; the book alone is 100 MB.
    assert!(
        peak < 80 * 1024,
        "peak RSS {peak} KiB for a {size}-byte book"
    );
}
