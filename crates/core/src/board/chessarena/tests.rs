//! The reader and the judge against what ChessArena's own code returns for the same replies.
//!
//! The expected values were produced by running ChessArena's `utils.py` (commit `be1bc27e`) with
//! python-chess 1.11.2 on each reply: `parse_uci_move`, then `parse_san_move` + `san_to_uci`,
//! then `chess.Move.from_uci` and `in board.legal_moves`, as `run_simulation.py::get_llm_move`
//! does; `judge_thinking` for the last column. Their outcome names map to ours: "Parsing error"
//! is `no_move_found`, "Invalid UCI format" is `unparseable`, "Illegal move" is `illegal`.
//! ChessArena plays king-takes-rook castling (`e1h1`) as written; arena records it as `e1g1`.

use shakmaty::{CastlingMode, fen::Fen};

use super::*;

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const CASTLES: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
const PROMOTE: &str = "8/4P3/8/8/8/8/k7/4K3 w - - 0 1";
const TWO_KNIGHTS: &str = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
const SCHOLAR: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";

fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .expect("test FEN parses")
        .into_position(CastlingMode::Standard)
        .expect("test FEN is legal")
}

/// Position, reply, the reader's outcome (`Ok(uci)` or `Err(kind)`), `judge_thinking`.
type Case = (
    &'static str,
    &'static str,
    Result<&'static str, &'static str>,
    bool,
);

#[rustfmt::skip]
const CASES: &[Case] = &[
        (START, "```\ne2e4\n```", Ok("e2e4"), false),
        (START, "I'll open with the king's pawn.\n\n```\ne2e4\n```", Ok("e2e4"), true),
        (START, "Candidates ```d2d4``` and ```g1f3```, final:\n```\ne2e4\n```", Ok("e2e4"), true),
        (START, "e2e4", Err("no_move_found"), false),
        (START, "e2e4 d2d4", Err("no_move_found"), false),
        (START, "My move is e2e4.", Err("no_move_found"), true),
        (START, "", Err("no_move_found"), false),
        (START, "```uci\ng1f3\n```", Err("no_move_found"), true),
        (START, "```uci g1f3```", Err("no_move_found"), true),
        (START, "```Nf3```", Ok("g1f3"), true),
        (START, "I'll develop.\n```\nNf3\n```", Ok("g1f3"), true),
        (START, "<move>e2e4</move>", Err("no_move_found"), true),
        (START, "```e2e4```.", Ok("e2e4"), true),
        (START, "```\n**e2e4**\n```", Err("no_move_found"), true),
        (START, "```\n1. e4\n```", Err("no_move_found"), true),
        (START, "```'e2e4'```", Err("no_move_found"), true),
        (START, "```e2e4", Err("no_move_found"), false),
        (START, "```\ne2e4\n```\nThis opens lines. ```", Ok("e2e4"), true),
        (START, "```E2E4```", Err("no_move_found"), true),
        (START, "```Nf3``` or rather ```e2e4```", Ok("e2e4"), true),
        (START, "```e2e4``` ```d2d4```", Ok("d2d4"), false),
        (START, "```e2e4```d2d4```", Ok("e2e4"), false),
        (START, "```e2e5```", Err("illegal"), false),
        (START, "```e7e5```", Err("illegal"), false),
        (START, "```0000```", Err("no_move_found"), true),
        (START, "```e2e2```", Err("unparseable"), false),
        (START, "```Nf6```", Err("unparseable"), true),
        (START, "```e5```", Err("unparseable"), true),
        (START, "```json\n{\"move\": \"e2e4\"}\n```", Err("no_move_found"), true),
        (START, "```\nThe best move is to develop the knight.\n```", Err("no_move_found"), true),
        (START, "```\ne2e4 because it controls the center\n```", Err("no_move_found"), true),
        (START, "```e2-e4```", Err("no_move_found"), true),
        (START, "```O-O```", Err("unparseable"), true),
        (START, "```\u{a0}e2e4\u{a0}```", Ok("e2e4"), false),
        (START, "```\u{1c}e2e4```", Ok("e2e4"), false),
        (START, "\u{1c}```e2e4```", Ok("e2e4"), false),
        (PROMOTE, "```\ne7e8Q\n```", Err("unparseable"), false),
        (PROMOTE, "```e7e8q```", Ok("e7e8q"), false),
        (PROMOTE, "```e7e8```", Err("illegal"), false),
        (PROMOTE, "```e8=Q+```", Ok("e7e8q"), true),
        (PROMOTE, "```e8N```", Err("no_move_found"), true),
        (PROMOTE, "```e8=Q```", Ok("e7e8q"), true),
        (PROMOTE, "```e7e8=Q```", Ok("e7e8q"), true),
        (CASTLES, "```O-O```", Ok("e1g1"), true),
        (CASTLES, "```0-0-0```", Err("no_move_found"), true),
        (CASTLES, "```O-O-O```", Ok("e1c1"), true),
        (CASTLES, "```e1g1```", Ok("e1g1"), false),
        (CASTLES, "```e1h1```", Ok("e1g1"), false),
        (CASTLES, "```e1a1```", Ok("e1c1"), false),
        (TWO_KNIGHTS, "```Nd2```", Err("unparseable"), true),
        (TWO_KNIGHTS, "```Nbd2```", Ok("b1d2"), true),
        (SCHOLAR, "Mate in one!\n```\nQxf7#\n```", Ok("h5f7"), true),
        (SCHOLAR, "```Qxf7```", Ok("h5f7"), true),
        (SCHOLAR, "```h5f7```", Ok("h5f7"), false),
];

#[test]
fn reads_every_reply_as_chessarena_does() {
    for (i, &(fen, reply, expected, _)) in CASES.iter().enumerate() {
        let got = read_move(reply, &position(fen), false);
        match (&got, expected) {
            (Ok(found), Ok(uci)) => assert_eq!(found.uci, uci, "case {i}: {reply:?}"),
            (Err(err), Err(kind)) => {
                assert_eq!(
                    err.kind.as_str(),
                    kind,
                    "case {i}: {reply:?}: {}",
                    err.message
                );
                assert!(!err.message.is_empty());
            }
            _ => panic!("case {i}: {reply:?}: expected {expected:?}, got {got:?}"),
        }
    }
}

#[test]
fn judges_every_reply_as_chessarena_does() {
    for (i, &(_, reply, _, expected)) in CASES.iter().enumerate() {
        assert_eq!(judge_thinking(reply), expected, "case {i}: {reply:?}");
    }
}

#[test]
fn a_failed_san_conversion_is_a_parsing_error_that_names_the_text() {
    let err = read_move("```Nd2```", &position(TWO_KNIGHTS), false).unwrap_err();
    assert_eq!(err.kind, ExtractErrorKind::Unparseable);
    assert_eq!(err.candidate.as_deref(), Some("Nd2"));
    assert!(err.message.contains("Nd2"), "{}", err.message);
    let err = read_move("```e7e8Q```", &position(PROMOTE), false).unwrap_err();
    assert_eq!(err.kind, ExtractErrorKind::Unparseable);
    assert!(err.message.contains("e7e8Q"), "{}", err.message);
}

#[test]
fn candidates_say_how_they_were_read() {
    let pos = position(START);
    let c = candidate("```\nNf3\n``` then ```\ne2e4\n```", &pos, false).unwrap();
    assert_eq!((c.uci.as_str(), c.read_as), ("e2e4", ReadAs::Uci));
    let c = candidate("so ```Nf3```", &pos, false).unwrap();
    assert_eq!(
        (c.uci.as_str(), c.read_as, c.matched.as_str()),
        ("g1f3", ReadAs::San, "Nf3")
    );
    // Unfenced moves only with `any_move` (their --parse_any_move), UCI before SAN.
    assert_eq!(candidate("I play e2e4", &pos, false), None);
    assert_eq!(candidate("I play e2e4", &pos, true).unwrap().uci, "e2e4");
    assert_eq!(
        candidate("Nf3, then e2e4 later", &pos, true).unwrap().uci,
        "e2e4"
    );
    assert_eq!(
        candidate("Nf3 is my choice", &pos, true).unwrap().uci,
        "g1f3"
    );
    // A fenced SAN move loses to an unfenced UCI one when unfenced moves are read.
    assert_eq!(
        candidate("```Nf3``` not d2d4", &pos, true).unwrap().uci,
        "d2d4"
    );
    let found = read_move("```Qxf7#```", &position(SCHOLAR), false).unwrap();
    assert_eq!(
        (found.san.as_str(), found.matched.as_str()),
        ("Qxf7#", "Qxf7#")
    );
    let found = read_move("```e1h1```", &position(CASTLES), false).unwrap();
    assert_eq!((found.uci.as_str(), found.san.as_str()), ("e1g1", "O-O"));
}
