//! Pure move-quality arithmetic: Win% under either anchor's formula, move classes, game phases,
//! centipawn loss and Lichess accuracy.
//!
//! Sources of the formulas (facts carried over, code written anew):
//! - ChessArena (`run_simulation.py`): `Win% = 50 + 50·(2/(1+e^(−0.004·cp)) − 1)` on python-chess's
//!   `relative.score(mate_score=10000)`, so mate in n is `10000 − n` and being mated in n is
//!   `−10000 + n` (being mated now, `mate 0`, is −10000).
//! - LLM Chess (`data_processing/analyse_game.py`): the same curve with the Lichess constant
//!   0.00368208, a mate for either side as ±1000 cp and centipawns otherwise unclamped; move classes
//!   from the drop in Win% points, ≥30 blunder, ≥20 mistake, ≥10 inaccuracy ([`Classification`]:
//!   LLM Chess cites lichess's `Advice.scala` for them, but lichess's cutoffs are on winning
//!   chances in [−1, 1], half as many Win% points); phases from the ply and the material.
//! - Lichess's own move judgements (`lila`, `modules/tree/src/main/Advice.scala`, with
//!   `WinPercent.winningChances`): [`LichessJudgement`], from the drop in winning chances
//!   `2/(1+e^(−0.00368208·cp)) − 1` (centipawns not clamped, the result clamped to [−1, 1]) of
//!   ≥0.3 blunder, ≥0.2 mistake, ≥0.1 inaccuracy (15, 10 and 5 Win% points) when both evaluations
//!   are centipawns; a mate created or lost by the cp rules of `MateAdvice`; and no judgement on
//!   the engine's best move (lichess keeps no variation for it and judges only moves with one).
//! - Lichess's average centipawn loss (`AccuracyCP.scala`): per move, the mover's evaluation
//!   before less after, each clamped to ±1000 (a mate as ±1000), at least 0 and not capped
//!   further ([`lichess_cp_loss`]); per game and colour, the mean rounded to an integer.
//! - Lichess (`lila`, `modules/analyse/src/main/AccuracyPercent.scala` and `WinPercent.scala`):
//!   Win% clamps centipawns to ±1000 (a mate counts as ±1000); a move's accuracy is
//!   `103.1668100711649·e^(−0.04354415386753951·drop) − 3.166924740191411 + 1`, clamped to 0..100,
//!   and 100 when the mover's Win% did not drop; a game's accuracy per colour is the mean of a
//!   volatility-weighted mean and a harmonic mean (`n / Σ 1/max(1, a)`) of its moves' accuracies,
//!   the weights being the population standard deviations of White's Win% over sliding windows of
//!   `clamp(moves/10, 2, 8)` positions, clamped to 0.5..12.
//!
//! Accuracy always uses Lichess's Win% (its curve was fitted to it), whatever [`WinModel`] drives
//! the classification. Lichess starts a game's Win% list from a fixed 15 cp; we start it from the
//! engine's evaluation of the game's actual first position, which is the same for the standard start
//! and right for games that begin from a book line or a FEN.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Color, Position, Role};

use crate::engine::Score;

/// Which Win% formula turns an evaluation into winning chances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WinModel {
    /// ChessArena: constant 0.004, mate as 10000 minus the distance.
    ChessArena,
    /// LLM Chess and Lichess: constant 0.00368208, mate as ±1000.
    #[default]
    Lichess,
}

impl WinModel {
    /// The name used on the command line and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            WinModel::ChessArena => "chessarena",
            WinModel::Lichess => "lichess",
        }
    }

    /// Parses [`as_str`](WinModel::as_str)'s names.
    pub fn parse(name: &str) -> Option<WinModel> {
        match name {
            "chessarena" => Some(WinModel::ChessArena),
            "lichess" => Some(WinModel::Lichess),
            _ => None,
        }
    }

    /// The centipawn value the model gives a score (side to move's view).
    pub fn centipawns(self, score: Score) -> f64 {
        match (self, score) {
            (_, Score::Cp(cp)) => f64::from(cp),
            (WinModel::ChessArena, Score::Mate(n)) if n > 0 => f64::from(10_000 - n),
            (WinModel::ChessArena, Score::Mate(n)) => f64::from(-10_000 - n),
            (WinModel::Lichess, Score::Mate(n)) if n > 0 => 1000.0,
            (WinModel::Lichess, Score::Mate(_)) => -1000.0,
        }
    }

    /// The side to move's winning chances, 0..100.
    pub fn win_percent(self, score: Score) -> f64 {
        let k = match self {
            WinModel::ChessArena => 0.004,
            WinModel::Lichess => 0.003_682_08,
        };
        win_curve(k, self.centipawns(score))
    }
}

fn win_curve(k: f64, cp: f64) -> f64 {
    50.0 + 50.0 * (2.0 / (1.0 + (-k * cp).exp()) - 1.0)
}

/// Lichess's centipawns: mate as ±1000, everything clamped to ±1000 (side to move's view).
pub(crate) fn lichess_centipawns(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp.clamp(-1000, 1000),
        Score::Mate(n) if n > 0 => 1000,
        Score::Mate(_) => -1000,
    }
}

/// Lichess's Win% (clamped centipawns), side to move's view.
pub(crate) fn lichess_win_percent(score: Score) -> f64 {
    win_curve(0.003_682_08, f64::from(lichess_centipawns(score)))
}

/// Lichess's centipawn loss of one move (`AccuracyCP.diffsList`): both evaluations clamped to
/// ±1000 (a mate as ±1000), the loss at least 0 and up to 2000. `before` is the mover's view,
/// `after` the opponent's.
pub(crate) fn lichess_cp_loss(before: Score, after: Score) -> u32 {
    (lichess_centipawns(before) + lichess_centipawns(after)).max(0) as u32
}

/// The centipawn loss the store keeps per ply (its schema holds 0..1000): [`lichess_cp_loss`]
/// capped at 1000. arena's own figure; lichess's ACPL is computed from the evaluations instead,
/// uncapped (see [`crate::analysis::lichess`]).
pub(crate) fn stored_cp_loss(before: Score, after: Score) -> u32 {
    lichess_cp_loss(before, after).min(1000)
}

/// Lichess's winning chances of a centipawn score, in [−1, 1] (`WinPercent.winningChances`):
/// the centipawns are not clamped, the result is.
pub(crate) fn lichess_winning_chances(cp: f64) -> f64 {
    (2.0 / (1.0 + (-0.003_682_08 * cp).exp()) - 1.0).clamp(-1.0, 1.0)
}

/// Lichess's judgement of a move (`Advice.scala`), shown as the NAGs `?!`, `?` and `??`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LichessJudgement {
    /// `?!`: winning chances down by 0.1 (5 Win% points) or more.
    Inaccuracy,
    /// `?`: down by 0.2 (10 Win% points) or more.
    Mistake,
    /// `??`: down by 0.3 (15 Win% points) or more.
    Blunder,
}

impl LichessJudgement {
    /// The judgement of a move: `best` when it was the engine's first choice, `before` the mover's
    /// score before it, `after` the opponent's after it. `None`: no judgement (a good move, the
    /// best move, or a mate sequence lichess leaves alone).
    pub fn of(best: bool, before: Score, after: Score) -> Option<LichessJudgement> {
        if best {
            return None;
        }
        // Everything from the mover's side: the score after the move, negated.
        let after = match after {
            Score::Cp(cp) => Score::Cp(-cp),
            Score::Mate(n) => Score::Mate(-n),
        };
        if let (Score::Cp(b), Score::Cp(a)) = (before, after) {
            let drop =
                lichess_winning_chances(f64::from(b)) - lichess_winning_chances(f64::from(a));
            return [
                (0.3, LichessJudgement::Blunder),
                (0.2, LichessJudgement::Mistake),
                (0.1, LichessJudgement::Inaccuracy),
            ]
            .into_iter()
            .find(|(cutoff, _)| *cutoff <= drop)
            .map(|(_, j)| j);
        }
        // `MateAdvice`: the cp beside a mate counts as 0.
        let cp = |s: Score| match s {
            Score::Cp(cp) => cp,
            Score::Mate(_) => 0,
        };
        let mate = |s: Score| match s {
            Score::Mate(n) => Some(n),
            Score::Cp(_) => None,
        };
        match (mate(before), mate(after)) {
            // Mate created: the mover is now mated by force.
            (None, Some(n)) if n < 0 => Some(match cp(before) {
                c if c < -999 => LichessJudgement::Inaccuracy,
                c if c < -700 => LichessJudgement::Mistake,
                _ => LichessJudgement::Blunder,
            }),
            // Mate lost: the mover had a forced mate and has none, or is mated instead.
            (Some(p), None) if p > 0 => Some(judge_lost(cp(after))),
            (Some(p), Some(n)) if p > 0 && n < 0 => Some(judge_lost(0)),
            _ => None,
        }
    }

    /// The PGN NAG: 6 (`?!`), 2 (`?`) or 4 (`??`).
    pub fn nag(self) -> u8 {
        match self {
            LichessJudgement::Inaccuracy => 6,
            LichessJudgement::Mistake => 2,
            LichessJudgement::Blunder => 4,
        }
    }
}

/// `MateAdvice` for a lost mate, from the mover's cp after the move.
fn judge_lost(after: i32) -> LichessJudgement {
    if after > 999 {
        LichessJudgement::Inaccuracy
    } else if after > 700 {
        LichessJudgement::Mistake
    } else {
        LichessJudgement::Blunder
    }
}

/// Lichess's accuracy of one move from the mover's Win% before and after it.
pub(crate) fn move_accuracy(win_before: f64, win_after: f64) -> f64 {
    if win_after >= win_before {
        return 100.0;
    }
    let drop = win_before - win_after;
    let raw =
        103.166_810_071_164_9 * (-0.043_544_153_867_539_51 * drop).exp() - 3.166_924_740_191_411;
    (raw + 1.0).clamp(0.0, 100.0)
}

/// What a move was worth, or how it ended the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    /// The engine's first choice.
    Best,
    /// Not the first choice, but the Win% dropped by less than 10 points (LLM Chess's "OK").
    Good,
    /// A drop of 10 to 20 Win% points (LLM Chess's cutoff, not lichess's: see
    /// [`LichessJudgement`]).
    Inaccuracy,
    /// A drop of 20 to 30 Win% points (LLM Chess's).
    Mistake,
    /// A drop of 30 Win% points or more (LLM Chess's).
    Blunder,
    /// The last move of a game won by checkmate.
    CheckmateDelivered,
    /// The last move of a game drawn on the board (stalemate, insufficient material, fivefold
    /// repetition, 75-move rule).
    DrawDelivered,
    /// The last move before the ply limit.
    MoveLimitReached,
}

impl Classification {
    /// Every class, in declaration order.
    pub const ALL: [Classification; 8] = [
        Classification::Best,
        Classification::Good,
        Classification::Inaccuracy,
        Classification::Mistake,
        Classification::Blunder,
        Classification::CheckmateDelivered,
        Classification::DrawDelivered,
        Classification::MoveLimitReached,
    ];

    /// The snake_case name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Classification::Best => "best",
            Classification::Good => "good",
            Classification::Inaccuracy => "inaccuracy",
            Classification::Mistake => "mistake",
            Classification::Blunder => "blunder",
            Classification::CheckmateDelivered => "checkmate_delivered",
            Classification::DrawDelivered => "draw_delivered",
            Classification::MoveLimitReached => "move_limit_reached",
        }
    }

    /// Parses [`as_str`](Classification::as_str)'s names.
    pub fn parse(name: &str) -> Option<Classification> {
        Classification::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Classifies a move from whether it was the engine's first choice and the mover's Win% drop
    /// (before minus after; negative when the move improved the mover's chances).
    pub(crate) fn from_drop(best: bool, drop: f64) -> Classification {
        if best {
            Classification::Best
        } else if drop >= 30.0 {
            Classification::Blunder
        } else if drop >= 20.0 {
            Classification::Mistake
        } else if drop >= 10.0 {
            Classification::Inaccuracy
        } else {
            Classification::Good
        }
    }

    /// The label of a game's last move for the way the game ended (`termination` as stored), if the
    /// ending is one LLM Chess labels: checkmate, a draw on the board, or the ply limit.
    pub fn terminal(termination: &str) -> Option<Classification> {
        match termination {
            "checkmate" => Some(Classification::CheckmateDelivered),
            "stalemate"
            | "insufficient_material"
            | "fivefold_repetition"
            | "seventy_five_move_rule"
            | "threefold_repetition"
            | "fifty_move_rule" => Some(Classification::DrawDelivered),
            "move_limit" => Some(Classification::MoveLimitReached),
            _ => None,
        }
    }
}

/// The part of the game a position belongs to (LLM Chess's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Plies 0 to 20.
    Opening,
    /// Neither opening nor endgame.
    Middlegame,
    /// Less than 1800 cp of material on the board, or no queens after ply 30.
    Endgame,
}

impl Phase {
    /// The lowercase name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Opening => "opening",
            Phase::Middlegame => "middlegame",
            Phase::Endgame => "endgame",
        }
    }

    /// The phase of the position before the 0-based ply `ply`: opening up to ply 20, then endgame
    /// when the material (pawn 100, knight and bishop 300, rook 500, queen 900, both sides) is
    /// below 1800 or when no queen is left after ply 30, else middlegame.
    pub fn of(position: &Chess, ply: u32) -> Phase {
        if ply <= 20 {
            return Phase::Opening;
        }
        let board = position.board();
        let material: u32 = [
            (Role::Pawn, 100),
            (Role::Knight, 300),
            (Role::Bishop, 300),
            (Role::Rook, 500),
            (Role::Queen, 900),
        ]
        .into_iter()
        .map(|(role, value)| board.by_role(role).count() as u32 * value)
        .sum();
        let no_queens = board.by_role(Role::Queen).is_empty();
        if material < 1800 || (no_queens && ply > 30) {
            Phase::Endgame
        } else {
            Phase::Middlegame
        }
    }
}

/// Lichess's game accuracy for each colour, from White's Win% before the first move followed by
/// White's Win% after every move; `first` is the colour that made the first move. `None` for a
/// colour that made no move.
pub(crate) fn game_accuracy(white_wins: &[f64], first: Color) -> (Option<f64>, Option<f64>) {
    let moves = white_wins.len().saturating_sub(1);
    if moves == 0 {
        return (None, None);
    }
    let size = (moves / 10).clamp(2, 8);
    // As lila: the first full window stands in for the first (size - 2) moves, then every window
    // that fits; together one weight per move.
    let head = size.min(white_wins.len()).saturating_sub(2);
    let first_window = &white_wins[..size.min(white_wins.len())];
    let mut windows: Vec<&[f64]> = vec![first_window; head];
    if white_wins.len() >= size {
        windows.extend(white_wins.windows(size));
    } else {
        windows.push(white_wins);
    }
    let weights: Vec<f64> = windows
        .iter()
        .map(|w| std_dev(w).clamp(0.5, 12.0))
        .collect();

    let mut per_colour: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for (i, (pair, weight)) in white_wins.windows(2).zip(&weights).enumerate() {
        let mover = if i % 2 == 0 { first } else { !first };
        let (before, after) = match mover {
            Color::White => (pair[0], pair[1]),
            Color::Black => (100.0 - pair[0], 100.0 - pair[1]),
        };
        let slot = usize::from(mover == Color::Black);
        per_colour[slot].push((move_accuracy(before, after), *weight));
    }
    let accuracy = |moves: &[(f64, f64)]| -> Option<f64> {
        if moves.is_empty() {
            return None;
        }
        let total: f64 = moves.iter().map(|(_, w)| w).sum();
        let weighted = moves.iter().map(|(a, w)| a * w).sum::<f64>() / total;
        let harmonic =
            moves.len() as f64 / moves.iter().map(|(a, _)| 1.0 / a.max(1.0)).sum::<f64>();
        Some((weighted + harmonic) / 2.0)
    };
    (accuracy(&per_colour[0]), accuracy(&per_colour[1]))
}

/// Population standard deviation, as lila's `Maths.standardDeviation`.
fn std_dev(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn win_percent_under_both_models() {
        // 50 + 50·(2/(1+e^-0.4) − 1) = 50 + 50·0.197375320 = 59.868766
        close(
            WinModel::ChessArena.win_percent(Score::Cp(100)),
            59.868_766_01,
        );
        // 50 + 50·(2/(1+e^-0.368208) − 1) = 59.1025897...
        close(WinModel::Lichess.win_percent(Score::Cp(100)), 59.102_589_72);
        close(WinModel::Lichess.win_percent(Score::Cp(0)), 50.0);
        close(
            WinModel::Lichess.win_percent(Score::Cp(-100)),
            100.0 - 59.102_589_72,
        );
        // Mate: ChessArena 10000 − 3 = 9997 cp, all but certain; Lichess ±1000 cp = 97.54%.
        assert_eq!(WinModel::ChessArena.centipawns(Score::Mate(3)), 9997.0);
        assert_eq!(WinModel::ChessArena.centipawns(Score::Mate(-3)), -9997.0);
        assert_eq!(WinModel::ChessArena.centipawns(Score::Mate(0)), -10_000.0);
        close(WinModel::Lichess.win_percent(Score::Mate(2)), 97.544_743_63);
        close(
            WinModel::Lichess.win_percent(Score::Mate(0)),
            100.0 - 97.544_743_63,
        );
        // LLM Chess leaves centipawns unclamped; Lichess's own Win% clamps them.
        assert!(WinModel::Lichess.win_percent(Score::Cp(2000)) > 99.8);
        close(lichess_win_percent(Score::Cp(2000)), 97.544_743_63);
        assert_eq!(WinModel::parse("chessarena"), Some(WinModel::ChessArena));
        assert_eq!(WinModel::parse("elo"), None);
    }

    #[test]
    fn move_accuracy_follows_the_lichess_curve() {
        close(move_accuracy(60.0, 60.0), 100.0);
        close(move_accuracy(50.0, 70.0), 100.0);
        // drop 10: 103.16681·e^-0.4354415 − 3.16692 + 1 = 64.5798...
        close(move_accuracy(60.0, 50.0), 64.579_828_45);
        // drop 0.0001 loses almost nothing but gets the +1 bonus capped at 100.
        close(move_accuracy(50.0001, 50.0), 100.0);
        // A 90-point drop floors at 0 before the bonus: raw −1.10, +1 → clamped to 0.
        close(move_accuracy(95.0, 5.0), 0.0);
    }

    #[test]
    fn classes_use_llm_chess_cutoffs() {
        assert_eq!(Classification::from_drop(true, 45.0), Classification::Best);
        assert_eq!(
            Classification::from_drop(false, 30.0),
            Classification::Blunder
        );
        assert_eq!(
            Classification::from_drop(false, 29.9),
            Classification::Mistake
        );
        assert_eq!(
            Classification::from_drop(false, 20.0),
            Classification::Mistake
        );
        assert_eq!(
            Classification::from_drop(false, 10.0),
            Classification::Inaccuracy
        );
        assert_eq!(Classification::from_drop(false, 9.99), Classification::Good);
        assert_eq!(
            Classification::from_drop(false, -15.0),
            Classification::Good
        );
        assert_eq!(
            Classification::terminal("checkmate"),
            Some(Classification::CheckmateDelivered)
        );
        assert_eq!(
            Classification::terminal("fivefold_repetition"),
            Some(Classification::DrawDelivered)
        );
        assert_eq!(
            Classification::terminal("move_limit"),
            Some(Classification::MoveLimitReached)
        );
        assert_eq!(Classification::terminal("forfeit"), None);
        for c in Classification::ALL {
            assert_eq!(Classification::parse(c.as_str()), Some(c));
        }
    }

    #[test]
    fn centipawn_loss_follows_lichess() {
        // +50 before, opponent +30 after (mover −30): 80 lost.
        assert_eq!(lichess_cp_loss(Score::Cp(50), Score::Cp(30)), 80);
        // A move that improves the mover's evaluation loses nothing.
        assert_eq!(lichess_cp_loss(Score::Cp(-200), Score::Cp(100)), 0);
        // Each evaluation is clamped to ±1000, the loss is not: a won mate thrown into a lost one
        // loses 2000, and +1500 to −1500 too.
        assert_eq!(lichess_cp_loss(Score::Mate(2), Score::Mate(3)), 2000);
        assert_eq!(stored_cp_loss(Score::Mate(2), Score::Mate(3)), 1000);
        assert_eq!(lichess_cp_loss(Score::Cp(1500), Score::Cp(1500)), 2000);
        assert_eq!(lichess_cp_loss(Score::Cp(900), Score::Cp(-300)), 600);
        // Delivering mate: the opponent is mated (mate 0), the mover's view is +1000.
        assert_eq!(lichess_cp_loss(Score::Mate(1), Score::Mate(0)), 0);
    }

    #[test]
    fn lichess_judgements_follow_advice_scala() {
        use LichessJudgement::*;
        let judge = |before, after| LichessJudgement::of(false, before, after);
        // Winning chances at 0 and −137 cp: 0 and 2/(1+e^0.50444)−1 = −0.2470, a mistake; a
        // 12.35 Win% point drop, which LLM Chess's cutoffs (30/20/10) call an inaccuracy.
        assert_eq!(judge(Score::Cp(0), Score::Cp(137)), Some(Mistake));
        assert_eq!(
            Classification::from_drop(
                false,
                WinModel::Lichess.win_percent(Score::Cp(0))
                    - (100.0 - WinModel::Lichess.win_percent(Score::Cp(137)))
            ),
            Classification::Inaccuracy
        );
        // The cutoffs 0.1, 0.2, 0.3 of winning chances: 0 → −55 cp is −0.1011, 0 → −54 −0.0993.
        assert_eq!(judge(Score::Cp(0), Score::Cp(55)), Some(Inaccuracy));
        assert_eq!(judge(Score::Cp(0), Score::Cp(54)), None);
        assert_eq!(judge(Score::Cp(0), Score::Cp(111)), Some(Mistake));
        assert_eq!(judge(Score::Cp(0), Score::Cp(110)), Some(Inaccuracy));
        assert_eq!(judge(Score::Cp(0), Score::Cp(169)), Some(Blunder));
        assert_eq!(judge(Score::Cp(0), Score::Cp(168)), Some(Mistake));
        // Centipawns are not clamped: +3000 to +1100 is a drop of 0.0343, nothing.
        assert_eq!(judge(Score::Cp(3000), Score::Cp(-1100)), None);
        // The engine's best move is never judged.
        assert_eq!(
            LichessJudgement::of(true, Score::Cp(0), Score::Cp(500)),
            None
        );
        // Mate created against the mover: by how lost it already was.
        assert_eq!(judge(Score::Cp(-1200), Score::Mate(5)), Some(Inaccuracy));
        assert_eq!(judge(Score::Cp(-800), Score::Mate(5)), Some(Mistake));
        assert_eq!(judge(Score::Cp(100), Score::Mate(5)), Some(Blunder));
        // Mate lost: by how much is left.
        assert_eq!(judge(Score::Mate(3), Score::Cp(-1200)), Some(Inaccuracy));
        assert_eq!(judge(Score::Mate(3), Score::Cp(-800)), Some(Mistake));
        assert_eq!(judge(Score::Mate(3), Score::Cp(-100)), Some(Blunder));
        assert_eq!(judge(Score::Mate(3), Score::Mate(2)), Some(Blunder));
        // A slower mate, or mate delivered, is no judgement.
        assert_eq!(judge(Score::Mate(2), Score::Mate(-4)), None);
        assert_eq!(judge(Score::Mate(1), Score::Mate(0)), None);
        assert_eq!(Blunder.nag(), 4);
        assert_eq!(Mistake.nag(), 2);
        assert_eq!(Inaccuracy.nag(), 6);
    }

    #[test]
    fn phases_follow_llm_chess() {
        let start = Chess::default();
        assert_eq!(Phase::of(&start, 0), Phase::Opening);
        assert_eq!(Phase::of(&start, 20), Phase::Opening);
        assert_eq!(Phase::of(&start, 21), Phase::Middlegame);
        // Queens off, everything else on: middlegame until ply 30, endgame after.
        let no_queens = position("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1");
        assert_eq!(Phase::of(&no_queens, 30), Phase::Middlegame);
        assert_eq!(Phase::of(&no_queens, 31), Phase::Endgame);
        // Rook and four pawns against rook and three: 1700 cp < 1800.
        let rooks = position("4k3/5ppp/8/8/8/8/4PPPP/R3K2r w - - 0 1");
        assert_eq!(Phase::of(&rooks, 22), Phase::Endgame);
    }

    #[test]
    fn game_accuracy_matches_a_hand_computation() {
        // Two moves, window 2: windows [50,60] and [60,60], population σ 5 and 0 (→ 0.5).
        // White 50→60 improves (100); Black's own Win% stays 40→40 (100).
        let (w, b) = game_accuracy(&[50.0, 60.0, 60.0], Color::White);
        close(w.unwrap(), 100.0);
        close(b.unwrap(), 100.0);

        // White drops 10 points (50→40), Black drops 10 (its 60→50), White keeps level.
        // Windows [50,40] [40,50] [50,50]: weights 5, 5, 0.5; a drop of 10 scores 64.579828.
        let a = 64.579_828_45;
        let (w, b) = game_accuracy(&[50.0, 40.0, 50.0, 50.0], Color::White);
        let weighted = (5.0 * a + 0.5 * 100.0) / 5.5;
        let harmonic = 2.0 / (1.0 / a + 1.0 / 100.0);
        close(w.unwrap(), (weighted + harmonic) / 2.0);
        close(b.unwrap(), a);

        // Black moving first: its Win% 50→40 (a, weight 5), then White holds 60 (100).
        let (w, b) = game_accuracy(&[50.0, 60.0, 60.0], Color::Black);
        close(w.unwrap(), 100.0);
        close(b.unwrap(), a);
        assert_eq!(game_accuracy(&[50.0], Color::White), (None, None));
    }

    #[test]
    fn game_accuracy_weights_volatile_stretches() {
        // 25 moves: window size 2, so a move's weight is half its Win% swing, clamped to 0.5..12.
        // White's 11th move throws 40 points away and the game stays there.
        let mut wins = vec![50.0];
        for i in 0..25 {
            wins.push(if i >= 10 { 10.0 } else { 50.0 });
        }
        let (w, b) = game_accuracy(&wins, Color::White);
        // White's 11th move (i = 10) dropped 40 points: accuracy 103.1668·e^-1.741766 − 2.16692.
        let bad = 103.166_810_071_164_9 * (-0.043_544_153_867_539_51 * 40.0_f64).exp()
            - 3.166_924_740_191_411
            + 1.0;
        // White made 13 moves, 12 at 100 with weight 0.5 and the bad one with weight 12 (σ 20 → 12).
        let weighted = (12.0 * 100.0 * 0.5 + bad * 12.0) / (12.0 * 0.5 + 12.0);
        let harmonic = 13.0 / (12.0 / 100.0 + 1.0 / bad);
        close(w.unwrap(), (weighted + harmonic) / 2.0);
        // Black's moves never lose anything.
        close(b.unwrap(), 100.0);
    }
}
