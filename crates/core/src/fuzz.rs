//! Shared parts of the property tests of every reader of outside input (model replies, response
//! bodies, books, FENs, Lua values), which live in `fuzz` modules next to their readers.
//!
//! Each property runs a small number of cases by default, so that it takes a few seconds in a
//! debug build. `ARENA_FUZZ_CASES=N` runs every property `N` times instead: a fuzz run, for
//! example `ARENA_FUZZ_CASES=1000000 cargo test --release -j1 fuzz`. The corpus of hostile inputs
//! in `tests/fixtures/hostile/` (inputs that once broke a reader, truncated and deeply nested
//! bodies, invalid UTF-8) and the large inputs made by [`large_inputs`] are fed to every reader
//! on every run, whatever the case count.

use std::path::Path;

use shakmaty::{Chess, Position, san::SanPlus};

use crate::board::{
    Variant, chess960_fen,
    game::{playable_position_in, uci_of},
};
use proptest::{
    prelude::*,
    test_runner::{Config, RngSeed},
};

/// The environment variable that sets the number of cases of every property.
pub(crate) const FUZZ_CASES: &str = "ARENA_FUZZ_CASES";

/// The runner's settings for a property with `default_cases` cases unless [`FUZZ_CASES`] says
/// otherwise. Failures are not persisted to files: a failure found becomes a fixture in
/// `tests/fixtures/hostile/` instead, where every run replays it.
pub fn config(default_cases: u32) -> Config {
    let cases = std::env::var(FUZZ_CASES)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        failure_persistence: None,
        // A fuzz run reports the first failure quickly rather than spending hours shrinking it.
        max_shrink_iters: 2_000,
        rng_seed: std::env::var("ARENA_FUZZ_SEED")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map_or(RngSeed::Random, RngSeed::Fixed),
        ..Config::default()
    }
}

/// The files of the hostile corpus, by name.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures/hostile");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the hostile corpus `{}` is missing: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).expect("a corpus file reads");
            (name, bytes)
        })
        .filter(|(name, _)| name != "PROVENANCE.md")
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the hostile corpus is empty");
    files
}

/// Inputs too large to keep as files: a 10 MB reply, JSON nested 100,000 deep, a 1 MB line. A
/// debug build (the tests of CI) gets them a tenth as large, since unoptimised regular
/// expressions take minutes over 10 MB; a release build (a fuzz run) gets them whole.
pub(crate) fn large_inputs() -> Vec<(String, String)> {
    let scale = if cfg!(debug_assertions) { 10 } else { 1 };
    let mut ten_mb = "I think e4 is best. ".repeat(10 * 1024 * 1024 / 20 / scale);
    ten_mb.push_str("```e2e4```");
    vec![
        ("10 MB reply".to_owned(), ten_mb),
        ("nested arrays".to_owned(), "[".repeat(100_000)),
        (
            "nested objects".to_owned(),
            "{\"choices\":".repeat(100_000) + "1" + &"}".repeat(100_000),
        ),
        ("1 MB line".to_owned(), "e".repeat(1024 * 1024 / scale)),
        ("fences".to_owned(), "```".repeat(100_000 / scale)),
        ("think tags".to_owned(), "<think>".repeat(50_000 / scale)),
        ("move tags".to_owned(), "<move>e2e4".repeat(50_000 / scale)),
    ]
}

/// Every hostile input as text (invalid UTF-8 replaced, as an HTTP body's text is).
pub fn hostile_texts() -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = corpus()
        .into_iter()
        .map(|(name, bytes)| (name, String::from_utf8_lossy(&bytes).into_owned()))
        .collect();
    texts.extend(large_inputs());
    texts
}

/// Words that steer a reply reader into its corners: fences, tags, think blocks, moves in every
/// notation, move numbers, agentic actions, punctuation and odd characters.
const REPLY_WORDS: &[&str] = &[
    "```",
    "```uci\n",
    "```san ",
    "`",
    "<move>",
    "</move>",
    "<MOVE>",
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "e2e4",
    "e7e5",
    "g1f3",
    "e1g1",
    "e1h1",
    "e7e8q",
    "e7e8Q",
    "a7a8=Q",
    "O-O",
    "O-O-O",
    "0-0",
    "o-o-o",
    "Nf3",
    "Nxe5+",
    "exd5",
    "e4",
    "e5",
    "d4",
    "Qh5#",
    "Kxf7",
    "0000",
    "12.",
    "12...",
    "1.",
    "**",
    "\"",
    "'",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "make_move",
    "make_move ",
    "get_current_board",
    "get_legal_moves",
    "do_reflection",
    ".",
    "!",
    "?",
    "#",
    "=",
    "-",
    "x",
    "+",
    "é",
    "♜",
    "♞",
    "\u{0}",
    "\u{feff}",
    "\u{202e}",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ";",
    "%",
    "$1",
    "*",
    "1-0",
    "1/2-1/2",
    "I move",
    "my move is",
    "\\",
    "\\n",
    "null",
    "{\"move\":",
];

/// Any text a model could send: raw bytes, words of [`REPLY_WORDS`] in any order, or any
/// Unicode string.
pub fn reply_text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        proptest::collection::vec(proptest::sample::select(REPLY_WORDS), 0..40)
            .prop_map(|words| words.concat()),
        any::<String>(),
    ]
}

/// Text without the characters that open a fence, a tag or a think block, for the words around
/// the one move of a reply.
pub fn plain_text() -> impl Strategy<Value = String> {
    "[^`<>\\x00]{0,60}"
}

/// A game played from a standard or Chess960 start by picking, at each ply, the legal move
/// `choice % count`; it stops early when the game is over.
#[derive(Clone, Debug)]
pub struct Playout {
    /// The rules.
    pub variant: Variant,
    /// The Chess960 start, if any.
    pub start: Option<String>,
    /// The final position.
    pub position: Chess,
    /// The moves in UCI.
    pub uci: Vec<String>,
    /// The moves in SAN.
    pub san: Vec<String>,
}

pub(crate) fn playout(chess960: Option<u32>, choices: &[u16]) -> Playout {
    let (variant, start) = match chess960 {
        Some(n) => (Variant::Chess960, Some(chess960_fen(n).expect("n < 960"))),
        None => (Variant::Standard, None),
    };
    let mut position = match &start {
        Some(fen) => playable_position_in(variant, fen).expect("a Chess960 start is playable"),
        None => Chess::default(),
    };
    let (mut uci, mut san) = (Vec::new(), Vec::new());
    for choice in choices {
        let legal = position.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[usize::from(*choice) % legal.len()];
        uci.push(uci_of(&position, &mv));
        san.push(SanPlus::from_move(position.clone(), mv).to_string());
        position.play_unchecked(mv);
    }
    Playout {
        variant,
        start,
        position,
        uci,
        san,
    }
}

/// Any playout.
pub(crate) fn any_playout() -> impl Strategy<Value = Playout> {
    (
        proptest::option::of(0u32..960),
        proptest::collection::vec(any::<u16>(), 0..120),
    )
        .prop_map(|(n, choices)| playout(n, &choices))
}

/// A playout whose final position still has a legal move, for the reply properties.
pub fn any_position() -> impl Strategy<Value = Playout> {
    any_playout().prop_filter("the game goes on", |p| !p.position.legal_moves().is_empty())
}
