//! Move selection: the model picks a move in a position; scored by legal rate (LR), top rate (TR:
//! the move is among Stockfish's top moves) and move advantage rate (MAR).
//!
//! MAR follows ChessArena's code, `(W(move) − Ā) / (Ā + 1e-5)` averaged over items, where Ā is
//! the mean Win% over the item's `move_with_winrate` (all legal moves) and W is the chosen move's
//! Win%, 0 for an illegal or missing move. The paper writes the denominator as Ā alone; the
//! `1e-5` guards a position where every move loses outright. Win% values are on a 0–100 scale, so
//! a missing move in a balanced position scores about −1 and a move twice as good as average +1.
//!
//! Two parsers give the chosen move: [`parse_chessarena`] is ChessArena's reader
//! ([`crate::board::chessarena::candidate`], the same one games use), with legality decided as
//! their `move_choose_metric` does, by membership of the candidate in the item's `legal_moves`
//! list; [`parse_tolerant`] uses arena's tolerant search ([`crate::board::extract_move`]).
//!
//! Their script judges a bullet reply first and scores a judged one as a failure without
//! reading it (`chessarena_judge_thinking`, kept for its tests); it does not fall back on SAN when a UCI match is
//! illegal. It reads `reasoning_content + content` (their `connect_gpt`); the task scripts' `chessarena`
//! readers do the same (`tasks.common.read_text`, with the reasoning passed as `ctx.reasoning`).

use super::{datasets::MoveSelectionItem, lenient_position};
pub use crate::board::chessarena::ReadAs;
use crate::board::{ExtractRule, Notation, SearchRule, chessarena, extract_move};

/// A move taken from a reply, in UCI, before the legality check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChosenMove {
    /// The move in UCI as the parser produced it (may be illegal or malformed).
    pub uci: String,
    /// How it was read.
    pub read_as: ReadAs,
}

/// ChessArena's move reading: the last fenced UCI move, else the last fenced SAN move converted
/// with python-chess rules; with `parse_any_move`, unfenced matches are tried after the fenced
/// ones of the same notation. `None` when nothing matches (or the FEN is unusable).
pub fn parse_chessarena(reply: &str, fen: &str, parse_any_move: bool) -> Option<ChosenMove> {
    let pos = lenient_position(fen).ok()?;
    chessarena::candidate(reply, &pos, parse_any_move).map(|c| ChosenMove {
        uci: c.uci,
        read_as: c.read_as,
    })
}

/// The arena's tolerant parse ([`ExtractRule::tolerant`]); only legal moves come back.
pub fn parse_tolerant(reply: &str, fen: &str) -> Option<ChosenMove> {
    let pos = lenient_position(fen).ok()?;
    let found = extract_move(reply, &pos, &ExtractRule::tolerant()).ok()?;
    let uci_only = ExtractRule::Search(SearchRule {
        notations: vec![Notation::Uci],
        ..SearchRule::tolerant()
    });
    let read_as = if extract_move(&found.matched, &pos, &uci_only).is_ok() {
        ReadAs::Uci
    } else {
        ReadAs::San
    };
    Some(ChosenMove {
        uci: found.uci,
        read_as,
    })
}

/// ChessArena's `judge_thinking` for bullet replies ([`chessarena::judge_thinking`]): true
/// when anything besides UCI moves and fences remains. In bullet mode such a reply is a failure
/// whatever move it holds.
#[cfg(test)]
pub(crate) fn chessarena_judge_thinking(reply: &str) -> bool {
    chessarena::judge_thinking(reply)
}

/// The score of one item.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MoveScore {
    /// The move was in the item's legal moves.
    pub legal: bool,
    /// The move was among the top moves.
    pub top: bool,
    /// How the move was read, when it was legal.
    pub read_as: Option<ReadAs>,
    /// The move's Win% (0 when illegal or absent).
    pub win_rate: f64,
    /// The mean Win% over all legal moves (Ā).
    pub average_win_rate: f64,
    /// `(W − Ā) / (Ā + 1e-5)`.
    pub advantage: f64,
}

/// Scores a chosen move (`None` when nothing was parsed, or when a bullet reply reasoned).
pub fn score(item: &MoveSelectionItem, chosen: Option<&ChosenMove>) -> MoveScore {
    let legal_move = chosen.filter(|c| item.legal_moves.contains(&c.uci));
    let played = legal_move.map_or("", |c| c.uci.as_str());
    let win_rate = item
        .move_with_winrate
        .iter()
        .find(|(m, _)| m == played)
        .map_or(0.0, |(_, w)| *w);
    let average_win_rate = if item.move_with_winrate.is_empty() {
        0.0
    } else {
        item.move_with_winrate
            .iter()
            .fold(0.0, |acc, (_, w)| acc + w)
            / item.move_with_winrate.len() as f64
    };
    MoveScore {
        legal: legal_move.is_some(),
        top: legal_move.is_some_and(|c| item.top_moves.contains(&c.uci)),
        read_as: legal_move.map(|c| c.read_as),
        win_rate,
        average_win_rate,
        advantage: (win_rate - average_win_rate) / (average_win_rate + 0.00001),
    }
}

/// Aggregate move-selection metrics (ChessArena's `final_metrics`).
#[derive(Clone, Debug, PartialEq)]
pub struct MoveSelectionMetrics {
    /// LR: legal moves over items.
    pub legal_rate: f64,
    /// TR: top moves over items.
    pub top_rate: f64,
    /// MAR: mean advantage (ChessArena's `AMR` key).
    pub move_advantage_rate: f64,
    /// Number of items.
    pub total: usize,
    /// Legal moves read as UCI.
    pub uci_count: usize,
    /// Legal moves read as SAN.
    pub san_count: usize,
}

/// Aggregates item scores; all rates are 0 for no items.
pub fn aggregate(scores: &[MoveScore]) -> MoveSelectionMetrics {
    let n = scores.len();
    let rate = |count: usize| if n == 0 { 0.0 } else { count as f64 / n as f64 };
    MoveSelectionMetrics {
        legal_rate: rate(scores.iter().filter(|s| s.legal).count()),
        top_rate: rate(scores.iter().filter(|s| s.top).count()),
        move_advantage_rate: if n == 0 {
            0.0
        } else {
            scores.iter().fold(0.0, |acc, s| acc + s.advantage) / n as f64
        },
        total: n,
        uci_count: scores
            .iter()
            .filter(|s| s.read_as == Some(ReadAs::Uci))
            .count(),
        san_count: scores
            .iter()
            .filter(|s| s.read_as == Some(ReadAs::San))
            .count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> MoveSelectionItem {
        MoveSelectionItem {
            fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
            legal_moves: vec!["e2e4".into(), "d2d4".into(), "g1f3".into(), "a2a3".into()],
            top_moves: vec!["e2e4".into(), "d2d4".into(), "g1f3".into()],
            move_with_winrate: vec![
                ("e2e4".into(), 60.0),
                ("d2d4".into(), 58.0),
                ("g1f3".into(), 56.0),
                ("a2a3".into(), 46.0),
            ],
            system: None,
            prompts: Default::default(),
        }
    }

    #[test]
    fn chessarena_parse_prefers_fenced_uci_then_san() {
        let fen = &item().fen;
        let c = parse_chessarena("```\nNf3\n``` then ```\ne2e4\n```", fen, false).unwrap();
        assert_eq!((c.uci.as_str(), c.read_as), ("e2e4", ReadAs::Uci));
        let c = parse_chessarena("so ```Nf3```", fen, false).unwrap();
        assert_eq!((c.uci.as_str(), c.read_as), ("g1f3", ReadAs::San));
        assert_eq!(parse_chessarena("I play e2e4", fen, false), None);
        let c = parse_chessarena("I play e2e4", fen, true).unwrap();
        assert_eq!(c.uci, "e2e4");
        // Upper-case promotion letters are parsed but never in the legal list.
        let c = parse_chessarena("```e7e8Q```", fen, false).unwrap();
        assert_eq!(c.uci, "e7e8Q");
    }

    #[test]
    fn scores_match_the_formula() {
        let it = item();
        let avg = (60.0 + 58.0 + 56.0 + 46.0) / 4.0;
        let best = score(&it, parse_chessarena("```e2e4```", &it.fen, false).as_ref());
        assert!(best.legal && best.top);
        assert_eq!(best.advantage, (60.0 - avg) / (avg + 0.00001));
        let weak = score(&it, parse_tolerant("I'll go with a3.", &it.fen).as_ref());
        assert!(weak.legal && !weak.top);
        assert_eq!(weak.read_as, Some(ReadAs::San));
        assert!(weak.advantage < 0.0);
        let illegal = score(&it, parse_chessarena("```e2e5```", &it.fen, false).as_ref());
        assert!(!illegal.legal);
        assert_eq!(illegal.win_rate, 0.0);
        assert_eq!(illegal.advantage, -avg / (avg + 0.00001));
        let none = score(&it, None);
        let m = aggregate(&[best.clone(), weak, illegal, none]);
        assert_eq!(m.legal_rate, 0.5);
        assert_eq!(m.top_rate, 0.25);
        assert_eq!((m.uci_count, m.san_count, m.total), (1, 1, 4));
        let expected =
            (best.advantage + (46.0 - avg) / (avg + 0.00001) - 2.0 * avg / (avg + 0.00001)) / 4.0;
        assert!((m.move_advantage_rate - expected).abs() < 1e-12);
    }

    #[test]
    fn bullet_thinking_is_detected() {
        assert!(!chessarena_judge_thinking("```\ne2e4\n```"));
        assert!(!chessarena_judge_thinking("e2e4"));
        assert!(chessarena_judge_thinking("I think ```e2e4```"));
        assert!(chessarena_judge_thinking("```Nf3```"));
    }
}
