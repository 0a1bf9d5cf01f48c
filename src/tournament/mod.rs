//! Running a tournament: the scheduler, the per-game loop, players, progress and the engine
//! analysis beside play.

pub mod analysis;
pub mod ask;
pub mod game;
pub mod players;
pub mod progress;
pub mod runner;
pub mod schedule;
pub mod spec;
pub mod turn;

use thiserror::Error;

pub use runner::{RunOptions, RunSummary, run};

/// Why a tournament could not run. Every variant is reported before a game is touched, or leaves
/// the store as it was after the last stored move.
#[derive(Debug, Error)]
pub enum TournamentError {
    /// The script does not load or validate.
    #[error("{0}")]
    Script(#[from] crate::lua::CheckErrors),
    /// A player cannot play (endpoint down, engine missing, key unset).
    #[error(transparent)]
    Setup(#[from] players::SetupError),
    /// The openings cannot be read.
    #[error("{at}: openings: {source}")]
    Openings {
        /// Where the tournament is defined.
        at: String,
        /// What is wrong with them.
        source: crate::board::BoardError,
    },
    /// The store refused an operation.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// The format script failed or asked for something impossible.
    #[error("format: {0}")]
    Format(String),
}
