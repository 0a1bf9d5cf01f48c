//! What shakmaty lacks for an arena: the game record with the end-of-game rules that shakmaty leaves
//! to the caller (fivefold repetition, the seventy-five-move rule, move limits, forfeits), move
//! extraction from free model text, board renderings for prompts, PGN writing, opening books and
//! opening names (ECO).
//!
//! ```
//! use arena_core::board::{ExtractRule, Game, extract_move};
//!
//! let mut game = Game::new(None, 0)?;
//! let reply = "The center matters.\n```\ne2e4\n```";
//! let found = extract_move(reply, game.position(), &ExtractRule::chessarena()).expect("a move");
//! let played = game.play(&found.mv);
//! assert_eq!(played.san, "e4");
//! assert_eq!(game.fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
//! # Ok::<_, arena_core::board::BoardError>(())
//! ```

pub mod book;
pub mod chessarena;
pub mod clock;
pub mod diagram;
pub mod eco;
#[cfg(test)]
mod fuzz;
pub mod game;
pub mod image;
pub mod notation;
pub mod pgn;
pub mod render;
pub mod san_compat;
mod score;

use std::{io, path::PathBuf};

pub use book::{Opening, parse_opening_fen, parse_pgn_openings, read_epd, read_pgn_openings};
pub use eco::{EcoTable, NamedOpening};
pub use game::{
    CHESS960_POSITIONS, Endings, Game, GameEnd, GameResult, MoveError, PlayedMove, Termination,
    UnknownName, Variant, chess960_fen, chess960_position, position_from_fen, uci_of,
};
pub use notation::{
    ExtractError, ExtractErrorKind, ExtractRule, Extracted, Notation, Pick, Scope, SearchRule,
    extract_move, judge_forbidden_reasoning,
};
pub use pgn::{MoveAnnotation, PgnGame, escape_comment, write_pgn};
pub use render::{ascii, last_moves, legal_san, legal_uci, unicode};
pub use score::Score;

/// Errors of the board module: bad positions and bad opening books.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// A FEN that does not parse, describes an impossible position, or a game that is already over.
    #[error("invalid FEN `{fen}`: {reason}")]
    InvalidFen {
        /// The FEN as given.
        fen: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A bad line in an opening book file.
    #[error("{}:{line}: {message}", path.display())]
    Book {
        /// The book file.
        path: PathBuf,
        /// 1-based line number of the offending text.
        line: usize,
        /// What is wrong, quoting the bad text.
        message: String,
    },
    /// A Chess960 start number outside 0 to 959.
    #[error("Chess960 start number {0} is out of range: start positions are numbered 0 to 959")]
    Chess960Number(u32),
    /// A bad opening given inline (for example in a tournament script).
    #[error("{source_name}: {message}")]
    Opening {
        /// Where the opening came from, usually `file:line`.
        source_name: String,
        /// What is wrong, quoting the bad text.
        message: String,
    },
    /// A board picture that cannot be made (a size out of range).
    #[error("{0}")]
    Picture(String),
    /// A book file that cannot be read.
    #[error("failed to read opening book `{}`: {source}", path.display())]
    Io {
        /// The book file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A book file that is not there.
    #[error(
        "opening book `{file}` not found relative to the script's folder {}; built-in books: {known}{hint}",
        folder.display()
    )]
    BookNotFound {
        /// The file as the script names it.
        file: String,
        /// The folder it was looked for in.
        folder: PathBuf,
        /// The built-in books, comma-separated.
        known: String,
        /// `; did you mean ...?`, or empty.
        hint: String,
    },
    /// A built-in book name that is not one.
    #[error("no built-in opening book `{name}` (the built-in books: {known}){hint}")]
    UnknownBook {
        /// The name as given.
        name: String,
        /// The built-in books, comma-separated.
        known: String,
        /// `; did you mean ...?`, or empty.
        hint: String,
    },
    /// A book file over [`book::MAX_BOOK_BYTES`], refused without being read whole.
    #[error(
        "opening book `{}` is over the limit of {} MiB; refused (split it into smaller books)",
        path.display(),
        book::MAX_BOOK_BYTES >> 20
    )]
    BookTooLarge {
        /// The book file.
        path: PathBuf,
    },
}
