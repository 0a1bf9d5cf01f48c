//! Writing games as PGN that other chess tools read (export format: Seven Tag Roster first,
//! movetext wrapped at 80 columns).

use super::game::{GameResult, Termination};

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
    /// The moves in SAN.
    pub san_moves: Vec<String>,
    /// More tags, written after the standard ones in this order.
    pub extra_tags: Vec<(String, String)>,
    /// A comment written after the last move (for example a forfeit reason).
    pub comment: Option<String>,
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
        | Termination::SeventyFiveMoveRule => "normal",
        Termination::Forfeit
        | Termination::TooManyWrongActions
        | Termination::MaxTurns
        | Termination::ContextExceeded
        | Termination::RequestRejected => "rules infraction",
        Termination::MoveLimit => "adjudication",
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
    if let Some(fen) = &game.start_fen {
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
    let mut tokens: Vec<String> = Vec::with_capacity(game.san_moves.len() * 3 / 2 + 2);
    for (i, san) in game.san_moves.iter().enumerate() {
        if !black_to_move {
            tokens.push(format!("{number}."));
        } else if i == 0 {
            tokens.push(format!("{number}..."));
        }
        tokens.push(san.clone());
        if black_to_move {
            number += 1;
        }
        black_to_move = !black_to_move;
    }
    if let Some(comment) = &game.comment {
        // `}` would end the comment early; PGN has no escape for it.
        tokens.push(format!(
            "{{{}}}",
            comment.replace('}', ")").replace(['\n', '\r'], " ")
        ));
    }
    tokens.push(result.to_owned());

    let mut line_len = 0;
    for token in tokens {
        // Comments may hold spaces; wrap them word by word like everything else.
        for word in token.split(' ').filter(|w| !w.is_empty()) {
            if line_len > 0 && line_len + 1 + word.len() > MAX_LINE {
                out.push('\n');
                line_len = 0;
            }
            if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            out.push_str(word);
            line_len += word.len();
        }
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
            san_moves: game.san_moves().to_vec(),
            extra_tags: vec![("Mode".to_owned(), "blitz".to_owned())],
            comment: None,
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

    /// Writes games, reads them back with python-chess and compares the final positions.
    #[test]
    fn python_chess_reads_our_pgn() {
        let probe = Command::new("python3")
            .args(["-c", "import chess.pgn"])
            .output();
        if !probe.is_ok_and(|o| o.status.success()) {
            eprintln!(
                "skipping python_chess_reads_our_pgn: python3 with chess (python-chess) is not available"
            );
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
