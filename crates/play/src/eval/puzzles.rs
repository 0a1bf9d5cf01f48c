//! Puzzle solving in Lichess's format: the first move of a puzzle is the opponent's (it sets the
//! puzzle up); the solver must then find every following move of its own side, while the
//! opponent's replies come from the solution.
//!
//! Rules, as in ChessArena's evaluation: each solver move gets up to `max_attempts` replies; a
//! reply without a move or with an illegal move uses an attempt (and the caller sends feedback);
//! a legal move that differs from the solution ends the puzzle, as solved when it gives checkmate
//! (Lichess accepts any mating move) and as failed otherwise. Accuracy is reported overall and per
//! rating band in the layout of the paper's Table 17.

use std::fmt::Write as _;

use shakmaty::{CastlingMode, Chess, Position, uci::UciMove};

use super::{EvalError, datasets::Puzzle, lenient_position};
#[cfg(test)]
use crate::board::{ExtractRule, extract_move};
use crate::board::{MoveError, game::parse_uci_in};

/// Why a reply was refused (the attempt is used, the same move is asked again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// A feedback sentence for the model.
    pub message: String,
    /// Attempts left for this move.
    pub attempts_left: u32,
}

/// How a puzzle ended in failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No legal move within the allowed attempts.
    NoValidMove {
        /// 1-based solver move number.
        step: usize,
    },
    /// A legal move that is neither the solution nor a checkmate.
    WrongMove {
        /// 1-based solver move number.
        step: usize,
        /// The move played, UCI.
        played: String,
        /// The solution's move, UCI.
        expected: String,
    },
}

impl Failure {
    /// The solver move number at which the puzzle failed.
    pub fn step(&self) -> usize {
        match self {
            Failure::NoValidMove { step } | Failure::WrongMove { step, .. } => *step,
        }
    }
}

/// Where a session stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// Waiting for solver move `step` (1-based).
    Awaiting {
        /// 1-based solver move number.
        step: usize,
    },
    /// Every move found, or a mating alternative played.
    Solved {
        /// True when the puzzle ended on a mate that differs from the solution.
        by_alternative_mate: bool,
    },
    /// Failed.
    Failed(Failure),
}

/// The result of one submitted reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The reply held no usable move; ask again with the message.
    Retry(Refusal),
    /// The move was right; the opponent answered with this move (UCI) and the next move is due.
    Continue {
        /// The opponent's reply, UCI.
        opponent_reply: String,
    },
    /// The puzzle ended (solved or failed); see [`PuzzleSession::state`].
    Finished(SessionState),
}

/// One puzzle being solved, fed one reply at a time.
#[derive(Clone, Debug)]
pub struct PuzzleSession {
    id: String,
    pos: Chess,
    solution: Vec<String>,
    /// Index in `solution` of the next solver move.
    next: usize,
    max_attempts: u32,
    attempts: u32,
    history: Vec<String>,
    state: SessionState,
}

impl PuzzleSession {
    /// Sets up the puzzle: the position after the opponent's first move. `max_attempts` is the
    /// number of replies allowed per solver move (ChessArena uses 5); 0 counts as 1.
    ///
    /// # Errors
    ///
    /// [`EvalError::InvalidPuzzle`] when the FEN is invalid or a solution move is illegal.
    pub fn new(puzzle: &Puzzle, max_attempts: u32) -> Result<PuzzleSession, EvalError> {
        let invalid = |reason: String| EvalError::InvalidPuzzle {
            id: puzzle.id.clone(),
            reason,
        };
        let mut pos = lenient_position(&puzzle.fen).map_err(|e| invalid(e.to_string()))?;
        if puzzle.moves.len() < 2 {
            return Err(invalid("no solution move after the setup move".to_owned()));
        }
        // Check the whole line once, so a bad puzzle fails here and not in the middle of a run,
        // and write every move as standard UCI (castling `e1g1`, whichever form the file used).
        let mut check = pos.clone();
        let mut solution = Vec::with_capacity(puzzle.moves.len());
        for (i, m) in puzzle.moves.iter().enumerate() {
            let mv = parse_uci_in(&check, m)
                .map_err(|e| invalid(format!("move {} `{m}`: {e}", i + 1)))?;
            solution.push(UciMove::from_move(mv, CastlingMode::Standard).to_string());
            check.play_unchecked(mv);
        }
        let setup = parse_uci_in(&pos, &solution[0]).expect("checked above");
        pos.play_unchecked(setup);
        Ok(PuzzleSession {
            id: puzzle.id.clone(),
            pos,
            history: vec![solution[0].clone()],
            solution,
            next: 1,
            max_attempts: max_attempts.max(1),
            attempts: 0,
            state: SessionState::Awaiting { step: 1 },
        })
    }

    /// The puzzle id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The current position (the solver is to move while the session awaits a move).
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// The current position as FEN.
    pub fn fen(&self) -> String {
        crate::board::game::fen_of(&self.pos)
    }

    /// Moves played since the puzzle's FEN, setup move included (UCI).
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// Number of solver moves in the solution.
    pub(crate) fn solver_moves(&self) -> usize {
        self.solution.len() / 2
    }

    /// Attempts already used for the current move.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Where the session stands.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// Takes the move from a model reply with `rule` and plays it.
    #[cfg(test)]
    pub(crate) fn submit_reply(&mut self, reply: &str, rule: &ExtractRule) -> Outcome {
        if !matches!(self.state, SessionState::Awaiting { .. }) {
            return Outcome::Finished(self.state.clone());
        }
        match extract_move(reply, &self.pos, rule) {
            Ok(found) => self.play(&found.uci),
            Err(e) => self.refuse(e.message),
        }
    }

    /// Plays a move given in UCI (engines, or a caller that parsed the reply itself).
    pub fn submit_uci(&mut self, uci: &str) -> Outcome {
        if !matches!(self.state, SessionState::Awaiting { .. }) {
            return Outcome::Finished(self.state.clone());
        }
        match parse_uci_in(&self.pos, uci) {
            Ok(mv) => {
                let uci = UciMove::from_move(mv, CastlingMode::Standard).to_string();
                self.play(&uci)
            }
            Err(MoveError::Malformed { text }) => {
                self.refuse(format!("`{text}` is not a UCI move"))
            }
            Err(e) => self.refuse(e.to_string()),
        }
    }

    /// Counts a failed attempt for a reply in which the caller's own parser found no move;
    /// `message` is the feedback to send.
    pub fn refuse_reply(&mut self, message: String) -> Outcome {
        if !matches!(self.state, SessionState::Awaiting { .. }) {
            return Outcome::Finished(self.state.clone());
        }
        self.refuse(message)
    }

    /// Counts a failed attempt for a reply without a legal move.
    fn refuse(&mut self, message: String) -> Outcome {
        self.attempts += 1;
        if self.attempts >= self.max_attempts {
            self.state = SessionState::Failed(Failure::NoValidMove { step: self.step() });
            return Outcome::Finished(self.state.clone());
        }
        Outcome::Retry(Refusal {
            message,
            attempts_left: self.max_attempts - self.attempts,
        })
    }

    fn step(&self) -> usize {
        self.next.div_ceil(2)
    }

    /// Plays a legal move (UCI, standard castling) and advances or ends the puzzle.
    fn play(&mut self, uci: &str) -> Outcome {
        let step = self.step();
        let mv = parse_uci_in(&self.pos, uci).expect("callers pass legal moves");
        self.pos.play_unchecked(mv);
        self.history.push(uci.to_owned());
        let expected = &self.solution[self.next];
        if uci != expected {
            self.state = if self.pos.is_checkmate() {
                SessionState::Solved {
                    by_alternative_mate: true,
                }
            } else {
                SessionState::Failed(Failure::WrongMove {
                    step,
                    played: uci.to_owned(),
                    expected: expected.clone(),
                })
            };
            return Outcome::Finished(self.state.clone());
        }
        self.attempts = 0;
        if self.next + 1 >= self.solution.len() {
            self.state = SessionState::Solved {
                by_alternative_mate: false,
            };
            return Outcome::Finished(self.state.clone());
        }
        let reply = self.solution[self.next + 1].clone();
        let mv = parse_uci_in(&self.pos, &reply).expect("the solution was checked in new()");
        self.pos.play_unchecked(mv);
        self.history.push(reply.clone());
        self.next += 2;
        if self.next >= self.solution.len() {
            // A solution that ends on the opponent's move: nothing left for the solver.
            self.state = SessionState::Solved {
                by_alternative_mate: false,
            };
            return Outcome::Finished(self.state.clone());
        }
        self.state = SessionState::Awaiting { step: self.step() };
        Outcome::Continue {
            opponent_reply: reply,
        }
    }
}

/// ChessArena's rating bands (the `lite/` files): 200–600, 600–1000, … 2600–3000.
pub(crate) const CHESSARENA_BANDS: [(i64, i64); 7] = [
    (200, 600),
    (600, 1000),
    (1000, 1400),
    (1400, 1800),
    (1800, 2200),
    (2200, 2600),
    (2600, 3000),
];

/// The band index of a rating: `lo <= rating < hi`, with ratings below the first band or above
/// the last clamped into it (Lichess ratings run a little beyond 200–3000).
pub(crate) fn band_of(rating: i64) -> usize {
    CHESSARENA_BANDS
        .iter()
        .position(|&(_, hi)| rating < hi)
        .unwrap_or(CHESSARENA_BANDS.len() - 1)
}

/// Solved and total counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Puzzles solved.
    pub solved: usize,
    /// Puzzles tried.
    pub total: usize,
}

impl Tally {
    /// Solved over total, `None` when nothing was tried.
    pub fn accuracy(&self) -> Option<f64> {
        (self.total > 0).then(|| self.solved as f64 / self.total as f64)
    }
}

/// Accuracy overall and per band.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PuzzleReport {
    /// One tally per [`CHESSARENA_BANDS`] entry.
    pub bands: [Tally; 7],
    /// All puzzles.
    pub overall: Tally,
}

/// Aggregates `(rating, solved)` results.
pub fn aggregate(results: impl IntoIterator<Item = (i64, bool)>) -> PuzzleReport {
    let mut report = PuzzleReport::default();
    for (rating, solved) in results {
        let band = &mut report.bands[band_of(rating)];
        band.total += 1;
        report.overall.total += 1;
        if solved {
            band.solved += 1;
            report.overall.solved += 1;
        }
    }
    report
}

/// A table in the layout of the paper's Table 17: one row per player, accuracy in percent with
/// one decimal per band and overall; `-` for a band with no puzzles.
pub fn table(rows: &[(&str, &PuzzleReport)]) -> String {
    let mut header = vec!["Model or Engine".to_owned()];
    header.extend(CHESSARENA_BANDS.iter().map(|(lo, hi)| format!("{lo}-{hi}")));
    header.push("Overall".to_owned());
    let cell = |t: &Tally| {
        t.accuracy()
            .map_or("-".to_owned(), |a| format!("{:.1}", a * 100.0))
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, report)| {
            let mut row = vec![(*name).to_owned()];
            row.extend(report.bands.iter().map(cell));
            row.push(cell(&report.overall));
            row
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            body.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let line = |out: &mut String, cells: &[String]| {
        let text: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    line(&mut out, &header);
    let _ = writeln!(
        out,
        "{}",
        "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1))
    );
    for row in &body {
        line(&mut out, row);
    }
    out
}

#[cfg(test)]
mod tests;
