//! Properties of the board's readers of outside input: the move readers of model replies, FENs,
//! EPD and PGN books (with write → read round trips of generated games, Chess960 included). See
//! `crate::fuzz` for the case counts and the hostile corpus.

use std::path::Path;

use proptest::prelude::*;
use shakmaty::{Chess, Position, fen::Fen, san::SanPlus};

use super::{
    ExtractErrorKind, ExtractRule, Game, Notation, PgnGame, Pick, Scope, SearchRule, Variant,
    extract_move,
    game::{fen_of, playable_position_in, position_from_fen, uci_of},
    judge_forbidden_reasoning, parse_opening_fen, parse_pgn_openings, write_pgn,
};
use crate::fuzz::{
    Playout, any_playout, any_position, config, hostile_texts, plain_text, playout, reply_text,
};

/// Every rule a mode can name: ChessArena's reader with and without unfenced moves, and arena's
/// search in every scope, pick and notation order.
fn every_rule() -> Vec<ExtractRule> {
    let mut rules = vec![
        ExtractRule::ChessArena { any_move: false },
        ExtractRule::ChessArena { any_move: true },
    ];
    for scope in [
        Scope::Fenced,
        Scope::Tagged,
        Scope::FencedOrTagged,
        Scope::Anywhere,
    ] {
        for pick in [Pick::First, Pick::Last] {
            for notations in [
                vec![Notation::Uci],
                vec![Notation::San],
                vec![Notation::Uci, Notation::San],
                vec![Notation::San, Notation::Uci],
            ] {
                rules.push(ExtractRule::Search(SearchRule {
                    pick,
                    scope,
                    notations,
                }));
            }
        }
    }
    rules
}

/// The one move of a reply in the notation a rule reads, and whether the rule reads it.
fn written(rule: &ExtractRule, p: &Playout, index: usize) -> (String, String) {
    let legal = p.position.legal_moves();
    let mv = legal[index % legal.len()];
    let uci = uci_of(&p.position, &mv);
    let san = SanPlus::from_move(p.position.clone(), mv).to_string();
    let text = match rule {
        ExtractRule::ChessArena { .. } => uci.clone(),
        ExtractRule::Search(s) => match s.notations.first() {
            Some(Notation::San) => san,
            _ => uci.clone(),
        },
    };
    (text, uci)
}

/// Wraps a move as the rule's scope expects it.
fn placed(rule: &ExtractRule, mv: &str) -> String {
    match rule {
        ExtractRule::Search(SearchRule {
            scope: Scope::Tagged,
            ..
        }) => format!("<move>{mv}</move>"),
        _ => format!("```{mv}```"),
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// Any text read by any rule in any position gives a move or a classified failure, and the
    /// bullet judge answers, without panicking.
    #[test]
    fn any_reply_gives_a_legal_move_or_a_classified_failure(
        text in reply_text(),
        p in any_position(),
    ) {
        for rule in every_rule() {
            match extract_move(&text, &p.position, &rule) {
                Ok(found) => {
                    let legal: Vec<String> =
                        p.position.legal_moves().iter().map(|m| uci_of(&p.position, m)).collect();
                    prop_assert!(legal.contains(&found.uci), "{rule:?} read {} from {text:?}", found.uci);
                }
                Err(e) => prop_assert!(!e.message.is_empty()),
            }
        }
        judge_forbidden_reasoning(&text);
        super::chessarena::judge_thinking(&text);
    }

    /// A reply holding exactly one legal move in the rule's format, among words that open no
    /// fence, tag or think block, is read as that move.
    #[test]
    fn a_reply_with_one_move_in_the_rules_format_is_read_as_that_move(
        p in any_position(),
        index in any::<usize>(),
        before in plain_text(),
        after in plain_text(),
    ) {
        for rule in every_rule() {
            let (mv, uci) = written(&rule, &p, index);
            let reply = format!("{before}{}{after}", placed(&rule, &mv));
            let found = extract_move(&reply, &p.position, &rule);
            prop_assert_eq!(
                found.as_ref().map(|f| f.uci.as_str()).map_err(|e| e.kind),
                Ok(uci.as_str()),
                "{:?} on {:?} in `{}`", rule, reply, fen_of(&p.position)
            );
        }
    }

    /// Any text as a FEN gives an error or a position shakmaty accepts, whose FEN reads back to
    /// the same position.
    #[test]
    fn any_fen_gives_an_error_or_a_position(text in fen_text()) {
        for variant in [Variant::Standard, Variant::Chess960] {
            if let Ok(pos) = playable_position_in(variant, &text) {
                let fen = fen_of(&pos);
                let parsed: Fen = fen.parse().expect("a written FEN parses");
                let again: Chess = parsed
                    .into_position(pos.castles().mode())
                    .expect("a written FEN is a legal position");
                prop_assert_eq!(fen_of(&again), fen);
            }
            let _ = position_from_fen(variant, &text);
        }
        if let Ok(opening) = parse_opening_fen(&text, "t.lua:1") {
            prop_assert!(opening.fen.is_some());
        }
    }

    /// A generated game written as PGN (with any text in its tags and comments) reads back as
    /// the same start and moves; Chess960 games keep their variant.
    #[test]
    fn pgn_round_trip(
        p in any_playout(),
        event in any::<String>(),
        white in any::<String>(),
        comment in proptest::option::of(any::<String>()),
        notes in proptest::collection::vec(proptest::option::of(any::<String>()), 0..8),
    ) {
        let annotated = !notes.is_empty();
        let game = PgnGame {
            event,
            white,
            start_fen: p.start.clone(),
            variant: p.variant,
            san_moves: p.san.clone(),
            comment,
            annotations: annotated.then(|| {
                notes
                    .iter()
                    .map(|text| super::MoveAnnotation { text: text.clone(), ..Default::default() })
                    .collect()
            }),
            ..PgnGame::default()
        };
        let text = write_pgn(&game);
        let openings = parse_pgn_openings(&text, Path::new("game.pgn"))
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(openings.len(), 1, "{}", text);
        prop_assert_eq!(&openings[0].moves, &p.uci, "{}", text);
        prop_assert_eq!(openings[0].variant, p.variant);
        let start = openings[0].fen.clone().map(|fen| {
            playable_position_in(p.variant, &fen).map(|pos| fen_of(&pos)).expect("read back")
        });
        let expected = p.start.as_ref().map(|fen| {
            fen_of(&playable_position_in(p.variant, fen).expect("a start"))
        });
        prop_assert_eq!(start, expected);
    }

    /// A position of a generated game written as an EPD line (counters as operations) reads back
    /// as the same position.
    #[test]
    fn epd_round_trip(
        choices in proptest::collection::vec(any::<u16>(), 0..120),
        id in "[^\"\n\r]{0,20}",
    ) {
        // EPD books hold standard positions (a Chess960 start comes from a PGN book).
        let p = playout(None, &choices);
        let fen = fen_of(&p.position);
        let fields: Vec<&str> = fen.split(' ').collect();
        let line = format!(
            "{} hmvc {}; fmvn {}; id \"{id}\";",
            fields[..4].join(" "),
            fields[4],
            fields[5]
        );
        if p.position.legal_moves().is_empty() {
            // A finished game is no opening: refused with a message.
            prop_assert!(parse_opening_fen(&line, "book.epd:1").is_err());
        } else {
            let opening = parse_opening_fen(&line, "book.epd:1")
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(opening.fen.as_deref(), Some(fen.as_str()));
        }
    }

    /// Any text as a PGN or EPD book gives openings whose moves replay, or an error that names a
    /// line of the text.
    #[test]
    fn any_book_text_gives_openings_or_a_line(text in book_text()) {
        let lines = text.split('\n').count();
        match parse_pgn_openings(&text, Path::new("book.pgn")) {
            Ok(openings) => {
                for opening in openings {
                    let mut game = Game::new_in(opening.variant, opening.fen.as_deref(), 0)
                        .expect("a read start is playable");
                    for mv in &opening.moves {
                        game.play_uci(mv).expect("a read move is legal");
                    }
                }
            }
            Err(super::BoardError::Book { line, .. }) => {
                prop_assert!((1..=lines).contains(&line), "line {} of {}", line, lines);
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
        for line in text.lines() {
            let _ = parse_opening_fen(line, "book.epd:1");
        }
    }
}

/// Text shaped like a FEN more often than not.
fn fen_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[pnbrqkPNBRQK1-9/]{0,70} [wb-] [KQkqA-Ha-h-]{0,5} [a-h1-8-]{1,2} [0-9]{1,4} [0-9]{1,5}",
        (0u32..960, any::<u16>()).prop_map(|(n, c)| {
            let p = playout(Some(n), &[c, c / 3, c / 7]);
            fen_of(&p.position)
        }),
    ]
}

/// Text shaped like a PGN book more often than not.
fn book_text() -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &[
        "[Event \"x\"]\n",
        "[FEN \"",
        "\"]\n",
        "[Variant \"Chess960\"]\n",
        "[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\"]\n",
        "[",
        "]",
        "\"",
        "\n",
        "\n\n",
        " ",
        "1.",
        "2...",
        "e4",
        "e5",
        "Nf3",
        "Nc6",
        "O-O",
        "0-0-0",
        "Bb5",
        "a6",
        "{",
        "}",
        "(",
        ")",
        ";",
        "%",
        "$1",
        "!?",
        "*",
        "1-0",
        "1/2-1/2",
        "\u{feff}",
        "\r",
        "é",
        "\\",
        "Ke3",
        "Xyz",
    ];
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(proptest::sample::select(WORDS), 0..60).prop_map(|w| w.join(" ")),
        proptest::collection::vec(proptest::sample::select(WORDS), 0..60).prop_map(|w| w.concat()),
    ]
}

/// The hostile corpus through every reader of this module.
#[test]
fn fuzz_corpus_through_the_board_readers() {
    let pos = Chess::default();
    for (name, text) in hostile_texts() {
        for rule in [
            ExtractRule::ChessArena { any_move: true },
            ExtractRule::tolerant(),
        ] {
            if let Err(e) = extract_move(&text, &pos, &rule) {
                assert!(
                    matches!(
                        e.kind,
                        ExtractErrorKind::NoMoveFound
                            | ExtractErrorKind::Unparseable
                            | ExtractErrorKind::Illegal
                            | ExtractErrorKind::Ambiguous
                    ),
                    "{name}"
                );
            }
        }
        judge_forbidden_reasoning(&text);
        let _ = parse_pgn_openings(&text, Path::new(&name));
        let _ = playable_position_in(Variant::Chess960, &text);
        let _ = parse_opening_fen(&text, &name);
    }
}
