//! Writing games as PGN that other chess tools read (export format: Seven Tag Roster first,
//! movetext wrapped at 80 columns), plain or with per-move annotations (NAGs and comments such as
//! `[%eval]`, which lichess, ChessBase and python-chess read).
//!
//! Hand-written: pgn-reader only reads PGN, and shakmaty has no writer.

use super::game::{GameResult, Termination, Variant, chess960_fen};

/// Everything needed to write one game as PGN.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PgnGame {
    /// The `Event` tag.
    pub event: String,
    /// The `Site` tag.
    pub site: String,
    /// The `Date` tag, `YYYY.MM.DD` (`??` for unknown parts).
    pub date: String,
    /// The `Round` tag.
    pub round: String,
    /// The `White` tag.
    pub white: String,
    /// The `Black` tag.
    pub black: String,
    /// The result; `None` writes `*` (game unfinished).
    pub result: Option<GameResult>,
    /// Why the game ended; written as the standard `Termination` tag and as `ArenaTermination`.
    pub termination: Option<Termination>,
    /// The start FEN; `None` for the standard initial position.
    pub start_fen: Option<String>,
    /// The rules of the game; Chess960 writes `[Variant "Chess960"]` and always the start
    /// (`SetUp` and `FEN`, X-FEN), as lichess, python-chess and cutechess read it.
    pub variant: Variant,
    /// The moves in SAN.
    pub san_moves: Vec<String>,
    /// More tags, written after the standard ones in this order.
    pub extra_tags: Vec<(String, String)>,
    /// A comment written after the last move (for example a forfeit reason).
    pub comment: Option<String>,
    /// Per-move annotations, by ply (shorter than the moves when the last ones have none);
    /// `None` writes the plain export. See [`MoveAnnotation`] for how comments are escaped.
    pub annotations: Option<Vec<MoveAnnotation>>,
    /// Clock commands (`[%clk 0:00:59.4]`, `[%emt 0:00:01.2]`) by ply, written in a comment after
    /// the move in the plain export too (an annotated game carries them in its annotations).
    pub clock_commands: Vec<Vec<String>>,
}

/// What an annotated game adds after one move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveAnnotation {
    /// A numeric annotation glyph written after the move: 6 for `?!`, 2 for `?`, 4 for `??`.
    pub nag: Option<u8>,
    /// Commands such as `[%eval 0.31]`, written first in the move's comment as they are.
    pub commands: Vec<String>,
    /// Free text after the commands. In an annotated game every comment (this one and
    /// [`PgnGame::comment`]) is escaped by [`escape_comment`].
    pub text: Option<String>,
}

impl MoveAnnotation {
    fn is_empty(&self) -> bool {
        self.nag.is_none() && self.commands.is_empty() && self.text.is_none()
    }
}

/// Makes free text safe inside an annotated game's `{...}` comment. PGN has no escape inside
/// comments, so: `}` (which would end the comment) becomes `｝` (U+FF5D, the full-width right curly
/// bracket, which reads the same and keeps the text apart from a real `)`); `[%` becomes `[ %`, so
/// that a model's text can never be read as a command such as `[%eval]`; control characters are
/// dropped and runs of white space (newlines included) become one space, since the movetext is
/// re-wrapped at 80 columns. The exact text stays in the store.
pub fn escape_comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c.is_control() {
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        match c {
            '}' => out.push('\u{FF5D}'),
            '%' if out.ends_with('[') => out.push_str(" %"),
            _ => out.push(c),
        }
    }
    out
}

/// The PGN line length limit of the export format.
const MAX_LINE: usize = 80;

/// The value of the standard `Termination` tag for an arena termination; a game without a
/// result (void, or unfinished) is `abandoned` whatever ended it.
fn standard_termination(termination: Termination, result: Option<GameResult>) -> &'static str {
    if result.is_none() {
        return "abandoned";
    }
    match termination {
        Termination::Checkmate
        | Termination::Stalemate
        | Termination::InsufficientMaterial
        | Termination::FivefoldRepetition
        | Termination::SeventyFiveMoveRule
        | Termination::ThreefoldRepetition
        | Termination::FiftyMoveRule
        | Termination::Resignation => "normal",
        Termination::Forfeit
        | Termination::TooManyWrongActions
        | Termination::MaxTurns
        | Termination::ContextExceeded
        | Termination::RequestRejected => "rules infraction",
        Termination::MoveLimit
        | Termination::AdjudicationResign
        | Termination::AdjudicationDraw => "adjudication",
        Termination::TimeForfeit => "time forfeit",
        Termination::EngineFailure => "abandoned",
    }
}

fn escape_tag(value: &str) -> String {
    // Tag values are single-line strings; a newline would end the tag section for other readers.
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

fn push_tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    out.push_str(&escape_tag(value));
    out.push_str("\"]\n");
}

/// The side to move and the move number of a FEN, defaulting to White and 1 when the fields are
/// missing or unreadable (the FEN was validated when the game started).
fn fen_turn_and_number(fen: &str) -> (bool, u32) {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let black = fields.get(1) == Some(&"b");
    let number = fields
        .get(5)
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    (black, number)
}

/// Writes one game as PGN, ending with a blank line so games can be concatenated.
pub fn write_pgn(game: &PgnGame) -> String {
    let mut out = String::new();
    let result = game.result.map_or("*", GameResult::as_pgn);
    push_tag(&mut out, "Event", &game.event);
    push_tag(&mut out, "Site", &game.site);
    push_tag(&mut out, "Date", &game.date);
    push_tag(&mut out, "Round", &game.round);
    push_tag(&mut out, "White", &game.white);
    push_tag(&mut out, "Black", &game.black);
    push_tag(&mut out, "Result", result);
    if let Some(termination) = game.termination {
        push_tag(
            &mut out,
            "Termination",
            standard_termination(termination, game.result),
        );
        push_tag(&mut out, "ArenaTermination", termination.as_str());
    }
    if let Some(variant) = game.variant.pgn_tag() {
        push_tag(&mut out, "Variant", variant);
    }
    // A Chess960 game names its start even when it is the standard array (start 518).
    let start_fen = game.start_fen.clone().or_else(|| {
        game.variant
            .is_chess960()
            .then(|| chess960_fen(518).expect("518 is a start number"))
    });
    if let Some(fen) = &start_fen {
        push_tag(&mut out, "SetUp", "1");
        push_tag(&mut out, "FEN", fen);
    }
    push_tag(&mut out, "PlyCount", &game.san_moves.len().to_string());
    for (name, value) in &game.extra_tags {
        push_tag(&mut out, name, value);
    }
    out.push('\n');

    let (mut black_to_move, mut number) = game
        .start_fen
        .as_deref()
        .map_or((false, 1), fen_turn_and_number);
    let annotated = game.annotations.is_some();
    let notes = game.annotations.as_deref().unwrap_or_default();
    // The movetext as words the wrapper never splits (a command such as `[%eval 0.31]` is one).
    let mut words: Vec<String> = Vec::with_capacity(game.san_moves.len() * 3 / 2 + 2);
    let push_text = |words: &mut Vec<String>, text: &str| {
        words.extend(text.split(' ').filter(|w| !w.is_empty()).map(str::to_owned));
    };
    // The export format repeats Black's move number after a comment (`1. e4 { ... } 1... e5`).
    let mut after_comment = false;
    for (i, san) in game.san_moves.iter().enumerate() {
        if !black_to_move {
            words.push(format!("{number}."));
        } else if i == 0 || after_comment {
            words.push(format!("{number}..."));
        }
        words.push(san.clone());
        after_comment = false;
        if let Some(commands) = game.clock_commands.get(i).filter(|c| !c.is_empty()) {
            words.push("{".to_owned());
            words.extend(commands.iter().cloned());
            words.push("}".to_owned());
            after_comment = true;
        }
        if let Some(note) = notes.get(i).filter(|n| !n.is_empty()) {
            if let Some(nag) = note.nag {
                words.push(format!("${nag}"));
            }
            let text = note.text.as_deref().map(escape_comment).unwrap_or_default();
            if !note.commands.is_empty() || !text.is_empty() {
                words.push("{".to_owned());
                words.extend(note.commands.iter().cloned());
                push_text(&mut words, &text);
                words.push("}".to_owned());
                after_comment = true;
            }
        }
        if black_to_move {
            number += 1;
        }
        black_to_move = !black_to_move;
    }
    if let Some(comment) = &game.comment {
        if annotated {
            words.push("{".to_owned());
            push_text(&mut words, &escape_comment(comment));
            words.push("}".to_owned());
        } else {
            // `}` would end the comment early; PGN has no escape for it. Comments may hold
            // spaces; they wrap word by word like everything else.
            let text = comment.replace('}', ")").replace(['\n', '\r'], " ");
            push_text(&mut words, &format!("{{{text}}}"));
        }
    }
    words.push(result.to_owned());

    let mut line_len = 0;
    for word in words {
        // A line starting with `%` is an escaped line that readers skip: an annotated game's
        // comment text keeps such a word on the line before, even past 80 columns.
        let escape = annotated && word.starts_with('%');
        if line_len > 0 && line_len + 1 + word.len() > MAX_LINE && !escape {
            out.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(&word);
        line_len += word.len();
    }
    out.push_str("\n\n");
    out
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use shakmaty::Color;

    use super::*;
    use crate::board::Game;

    fn record(
        game: &Game,
        result: Option<GameResult>,
        termination: Option<Termination>,
    ) -> PgnGame {
        PgnGame {
            event: "arena \"test\" \\ cup".to_owned(),
            site: "local".to_owned(),
            date: "2025.06.01".to_owned(),
            round: "1".to_owned(),
            white: "model-a".to_owned(),
            black: "stockfish".to_owned(),
            result,
            termination,
            start_fen: (!game.starts_from_initial()).then(|| game.start_fen()),
            variant: game.variant(),
            san_moves: game.san_moves().to_vec(),
            extra_tags: vec![("Mode".to_owned(), "blitz".to_owned())],
            comment: None,
            annotations: None,
            clock_commands: Vec::new(),
        }
    }

    fn play(fen: Option<&str>, moves: &[&str]) -> Game {
        let mut game = Game::new(fen, 0).expect("valid start");
        for m in moves {
            game.play_uci(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        }
        game
    }

    #[test]
    fn tags_and_movetext() {
        let game = play(None, &["e2e4", "e7e5", "g1f3"]);
        let mut pgn = record(&game, None, None);
        pgn.comment = Some("time {forfeit}".to_owned());
        let text = write_pgn(&pgn);
        let expected = "[Event \"arena \\\"test\\\" \\\\ cup\"]\n[Site \"local\"]\n[Date \"2025.06.01\"]\n\
[Round \"1\"]\n[White \"model-a\"]\n[Black \"stockfish\"]\n[Result \"*\"]\n[PlyCount \"3\"]\n\
[Mode \"blitz\"]\n\n1. e4 e5 2. Nf3 {time {forfeit)} *\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn black_to_move_start_and_terminations() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12";
        let game = play(Some(fen), &["g8f6", "f1c4", "f8c5"]);
        let mut pgn = record(
            &game,
            Some(GameResult::WhiteWins),
            Some(Termination::Forfeit),
        );
        pgn.extra_tags.clear();
        let text = write_pgn(&pgn);
        assert!(
            text.contains("[Termination \"rules infraction\"]\n[ArenaTermination \"forfeit\"]\n")
        );
        assert!(text.contains(&format!(
            "[SetUp \"1\"]\n[FEN \"{fen}\"]\n[PlyCount \"3\"]\n\n"
        )));
        assert!(text.ends_with("\n12... Nf6 13. Bc4 Bc5 1-0\n\n"), "{text}");
        let decided = Some(GameResult::Draw);
        assert_eq!(
            standard_termination(Termination::MoveLimit, decided),
            "adjudication"
        );
        assert_eq!(
            standard_termination(Termination::EngineFailure, decided),
            "abandoned"
        );
        assert_eq!(
            standard_termination(Termination::FivefoldRepetition, decided),
            "normal"
        );
        // A rejected request: a forfeit when it was scored, abandoned when the game is void.
        assert_eq!(
            standard_termination(Termination::ContextExceeded, Some(GameResult::WhiteWins)),
            "rules infraction"
        );
        assert_eq!(
            standard_termination(Termination::ContextExceeded, None),
            "abandoned"
        );
    }

    #[test]
    fn long_games_wrap_at_80_columns() {
        let mut game = Game::new(None, 0).unwrap();
        let cycle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        for _ in 0..4 {
            for m in cycle {
                game.play_uci(m).unwrap();
            }
        }
        let text = write_pgn(&record(
            &game,
            Some(GameResult::Draw),
            Some(Termination::FivefoldRepetition),
        ));
        let movetext = text.split("\n\n").nth(1).unwrap();
        assert!(movetext.lines().count() > 1);
        assert!(
            movetext
                .lines()
                .all(|l| l.len() <= MAX_LINE && !l.ends_with(' '))
        );
        assert!(movetext.ends_with("1/2-1/2"));
    }

    #[test]
    fn annotations_write_nags_and_comments_and_repeat_blacks_move_number() {
        let game = play(None, &["e2e4", "e7e5", "g1f3", "b8c6"]);
        let mut pgn = record(&game, Some(GameResult::BlackWins), None);
        pgn.extra_tags.clear();
        pgn.comment = Some("`a` forfeits {really}".to_owned());
        pgn.annotations = Some(vec![
            MoveAnnotation {
                nag: None,
                commands: vec!["[%eval 0.31]".to_owned()],
                text: None,
            },
            MoveAnnotation::default(),
            MoveAnnotation {
                nag: Some(4),
                commands: Vec::new(),
                text: Some("2 illegal: e1g1, e1c1".to_owned()),
            },
        ]);
        let text = write_pgn(&pgn);
        let movetext = text.split("\n\n").nth(1).unwrap();
        assert_eq!(
            movetext,
            "1. e4 { [%eval 0.31] } 1... e5 2. Nf3 $4 { 2 illegal: e1g1, e1c1 } 2... Nc6 {\n\
             `a` forfeits {really\u{FF5D} } 0-1"
        );
    }

    #[test]
    fn comment_text_cannot_end_a_comment_or_smuggle_a_command() {
        assert_eq!(
            escape_comment("a}b\n\n  c\r\n[%eval 9.99] \u{7}d"),
            "a\u{FF5D}b c [ %eval 9.99] d"
        );
        assert_eq!(escape_comment("  \n "), "");
        // A word starting with `%` never begins a line (readers skip such lines).
        let game = play(None, &["e2e4"]);
        let mut pgn = record(&game, None, None);
        pgn.annotations = Some(vec![MoveAnnotation {
            text: Some(format!("{} %skipped", "x".repeat(70))),
            ..MoveAnnotation::default()
        }]);
        let text = write_pgn(&pgn);
        assert!(text.lines().all(|l| !l.starts_with('%')), "{text}");
        assert!(text.contains("x %skipped\n}"), "{text}");

        // Commands are never split over two lines.
        let game = play(None, &["g1f3", "g8f6", "f3g1", "f6g8"].repeat(4));
        let mut pgn = record(&game, None, None);
        pgn.annotations = Some(vec![
            MoveAnnotation {
                commands: vec!["[%eval -10.25]".into(), "[%emt 0:00:01.5]".into()],
                ..MoveAnnotation::default()
            };
            16
        ]);
        let text = write_pgn(&pgn);
        assert_eq!(text.matches("[%eval -10.25]").count(), 16, "{text}");
        assert_eq!(text.matches("[%emt 0:00:01.5]").count(), 16, "{text}");
    }

    /// Writes games, reads them back with python-chess and compares the final positions.
    #[test]
    fn python_chess_reads_our_pgn() {
        if !crate::test_parts::python_chess("python_chess_reads_our_pgn") {
            return;
        }
        let games = [
            // Castling on both sides, a capture, checks.
            play(
                None,
                &[
                    "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "d7d5", "e4d5", "f6d5",
                    "d2d4", "c8e6", "b1c3", "d8d7", "c1f4", "e8c8", "c4b5", "f8b4", "f3e5", "c6e5",
                ],
            ),
            // From a FEN with Black to move, ending in a promotion.
            play(
                Some("8/8/8/8/8/2k5/p7/4K3 b - - 0 57"),
                &["c3b2", "e1d2", "a2a1q"],
            ),
            // En passant.
            play(None, &["e2e4", "a7a6", "e4e5", "d7d5", "e5d6"]),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.pgn");
        let mut all = String::new();
        for (i, game) in games.iter().enumerate() {
            let mut pgn = record(game, None, None);
            pgn.round = (i + 1).to_string();
            pgn.comment = Some("a comment with \"quotes\"".to_owned());
            all.push_str(&write_pgn(&pgn));
        }
        std::fs::write(&path, &all).unwrap();
        let script = r#"
import sys, chess.pgn
with open(sys.argv[1]) as f:
    while (game := chess.pgn.read_game(f)) is not None:
        if game.errors:
            raise SystemExit(f"errors: {game.errors}")
        board = game.end().board()
        print(board.fen())
"#;
        let output = Command::new("python3")
            .arg("-c")
            .arg(script)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let fens: Vec<String> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        let ours: Vec<String> = games.iter().map(Game::fen).collect();
        assert_eq!(fens, ours);
        assert_eq!(games[1].turn(), Color::White);
        assert_eq!(
            games[1].san_moves().last().map(String::as_str),
            Some("a1=Q")
        );
    }
}
