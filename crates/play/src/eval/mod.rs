//! Fine-grained evaluation tasks: the pure scoring core behind ChessArena's four side benchmarks.
//!
//! - [`basic`]: name the piece on a square and list its legal moves (piece match accuracy,
//!   precision, recall, F1), with ChessArena's scoring quirks available by name.
//! - [`move_selection`]: choose a move in a position (legal rate, top-3 rate, move advantage rate).
//! - [`puzzles`]: solve Lichess puzzles move by move with retries ([`puzzles::PuzzleSession`]),
//!   accuracy overall and per rating band.
//! - [`reconstruction`]: state the FEN after a move list (exact and per-field accuracy).
//! - [`datasets`]: readers for ChessArena's JSONL files and the Lichess puzzle CSV, and a seeded
//!   generator of basic-understanding items.
//!
//! - [`spec`], [`items`], [`respond`], [`run`], [`scoring`]: running a fine-grained evaluation
//!   script (`arena eval`): items read or built, asked of every player through the Lua task
//!   scripts, every reply and score stored, resumable, re-scorable without calls
//!   ([`run::rescore`]).
//! - [`batch`]: `arena eval --batch`, the models' calls sent through their providers' batch
//!   APIs at half price, resumable like the rest.
//! - [`recorded`]: scoring prediction files recorded by ChessArena (`arena score-recorded`).
//!
//! The scoring functions above talk to no model or engine; [`run`] does, through the roster.
//!
//! ```
//! use arena_play::eval::basic::{Scoring, aggregate, parse_reply, ReplyParse, score};
//! use arena_play::eval::datasets::BasicItem;
//!
//! let item = BasicItem::from_position("8/8/8/8/8/8/4P3/4K2k w - - 0 1", "e2")?;
//! let reply = "```json\n{\"piece\": \"P\", \"legal_moves\": [\"e3\", \"e2e4\"]}\n```";
//! let parsed = parse_reply(reply, ReplyParse::LastJsonBlock);
//! let s = score(&item, parsed.as_ref(), Scoring::Strict);
//! let m = aggregate(&[s]);
//! assert_eq!((m.piece_match_rate, m.precision, m.recall), (1.0, 1.0, 1.0));
//! # Ok::<_, arena_play::eval::EvalError>(())
//! ```

pub mod basic;
pub mod batch;
pub mod datasets;
pub mod items;
pub mod move_selection;
pub mod puzzles;
pub mod reconstruction;
pub mod recorded;
mod respond;
pub mod run;
pub mod scoring;
pub mod spec;
pub mod task;

use std::{io, path::PathBuf};

use shakmaty::{CastlingMode, Chess, PositionError, fen::Fen};

/// Errors of the evaluation module.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A data file that cannot be read.
    #[error("failed to read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A FEN that does not describe a usable position.
    #[error("invalid FEN `{fen}`: {reason}")]
    InvalidFen {
        /// The FEN as given.
        fen: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A square name that is not `a1`..`h8`.
    #[error("invalid square `{0}`")]
    InvalidSquare(String),
    /// A task's data set that cannot be read or built.
    #[error("task `{task}`: {message}")]
    Data {
        /// The task's label.
        task: String,
        /// What went wrong.
        message: String,
    },
    /// A puzzle whose solution cannot be played from its FEN.
    #[error("invalid puzzle `{id}`: {reason}")]
    InvalidPuzzle {
        /// The puzzle id.
        id: String,
        /// What is wrong.
        reason: String,
    },
}

/// Parses a FEN the way python-chess accepts it: besides fully legal positions, those with
/// stale castling rights, a useless en passant square, extra material or an impossible check are
/// kept, because ChessArena's data comes from python-chess boards that never rejected them.
///
/// # Errors
///
/// [`EvalError::InvalidFen`] when the text is not a FEN or the position is unusable (for example
/// a missing king).
pub(crate) fn lenient_position(fen: &str) -> Result<Chess, EvalError> {
    let invalid = |reason: String| EvalError::InvalidFen {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
    parsed
        .into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_castling_rights)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_too_much_material)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|e| invalid(format!("{e}")))
}

/// The ChessArena reference data folder for tests, `None` (with a printed reason) when
/// `ARENA_REFERENCE_DATA` is unset.
#[cfg(test)]
pub(crate) fn chessarena_data(relative: &str) -> Option<PathBuf> {
    let root = crate::test_parts::reference_data(&format!("eval tests on `{relative}`"))?;
    Some(root.join("ChessArena").join(relative))
}
