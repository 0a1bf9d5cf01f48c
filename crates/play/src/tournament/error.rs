//! The errors of a tournament run: [`TournamentError`] stops the run before play, [`GameError`]
//! sets one game aside. Neither is ever scored as chess.

use thiserror::Error;

use super::{players::SetupError, schedule::FormatError};
use crate::{
    board::{BoardError, MoveError},
    engine::EngineError,
    llm::LlmError,
    script::{CheckErrors, ScriptError},
    store::{ErrorKind, StoreError},
};

/// Why a tournament could not run. Every variant is reported before a game is touched, or leaves
/// the store as it was after the last stored move.
#[derive(Debug, Error)]
pub enum TournamentError {
    /// The script does not load or validate.
    #[error("{0}")]
    Script(#[from] CheckErrors),
    /// A player cannot play (endpoint down, engine missing, key unset).
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The adjudication engine cannot be used.
    #[error(transparent)]
    Adjudication(#[from] super::adjudicate::AdjudicationSetupError),
    /// The openings cannot be read.
    #[error("{at}: openings: {source}")]
    Openings {
        /// Where the tournament is defined.
        at: String,
        /// What is wrong with them.
        source: BoardError,
    },
    /// The store refused an operation.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The format script failed or asked for something impossible.
    #[error("format: {0}")]
    Format(#[from] FormatError),
    /// The tournament is finished and its scripts changed since its last game started: its
    /// result would answer the old scripts (see [`super::versions`]).
    #[error("{0}")]
    ScriptsChanged(Box<super::versions::ScriptChange>),
    /// The settings could not be written as JSON for the store.
    #[error("the tournament settings cannot be stored as JSON: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Why a game could not go on. The game is set aside with its error and kind; it resumes from its
/// last stored ply on the next run.
#[derive(Debug, Error)]
pub enum GameError {
    /// A model endpoint stayed down or refused the request (after its retries).
    #[error("player `{player}`{}: {source}", role.as_ref().map(|r| format!(" ({r})")).unwrap_or_default())]
    Api {
        /// The player whose call failed.
        player: String,
        /// Its model's role in a mixture of agents.
        role: Option<String>,
        /// The endpoint's failure (boxed: it carries the response body).
        source: Box<LlmError>,
    },
    /// An engine could not be started for the game (one that fails during play loses the game
    /// instead).
    #[error("cannot start engine `{player}`: {source}")]
    Engine {
        /// The engine player.
        player: String,
        /// The failure.
        source: EngineError,
    },
    /// A play mode's script failed.
    #[error("player `{player}`: {source}")]
    Script {
        /// The player whose mode failed.
        player: String,
        /// The script's error, at `file:line` when known.
        source: ScriptError,
    },
    /// The schedule names a player the scripts or the roster do not have.
    #[error("player `{0}` is scheduled but not a player of this tournament's scripts")]
    UnknownPlayer(String),
    /// The store refused an operation.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A request could not be written as JSON for the store.
    #[error("a request cannot be stored as JSON: {0}")]
    Encode(#[from] serde_json::Error),
    /// A stored request cannot be read back (to rebuild the dialog of a resumed game).
    #[error("the stored request of ply {ply} cannot be read back: {source}")]
    StoredRequest {
        /// The ply it belongs to.
        ply: u32,
        /// Why.
        source: serde_json::Error,
    },
    /// The game's record does not replay: its start position, an opening move or a stored ply.
    #[error("game {game}: {what} does not replay: {source}")]
    Replay {
        /// The game's number in the schedule.
        game: u32,
        /// What does not replay (`opening move `e2e5``, `stored ply 12 (`e7e5`)`).
        what: String,
        /// Why.
        source: ReplayError,
    },
}

/// Why a game's record does not replay.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// A broken start position.
    #[error(transparent)]
    Board(#[from] BoardError),
    /// An illegal move.
    #[error(transparent)]
    Move(#[from] MoveError),
    /// The clocks stored with the game do not read.
    #[error("cannot read it: {0}")]
    Clock(serde_json::Error),
}

impl GameError {
    /// Whether the store refused a write because another worker took the game's lease over:
    /// the game is no longer this worker's to play or to mark.
    pub fn is_lease_lost(&self) -> bool {
        matches!(self, GameError::Store(StoreError::LeaseLost { .. }))
    }

    /// The fault without the player it struck: the same broken line of a script, or the same
    /// endpoint down, reads alike in every game it sets aside, so a run reports it once.
    pub fn cause(&self) -> String {
        match self {
            GameError::Api { source, .. } => source.to_string(),
            GameError::Script { source, .. } => source.to_string(),
            GameError::Engine { source, .. } => format!("cannot start the engine: {source}"),
            other => other.to_string(),
        }
    }

    /// The player whose call or script failed, when one did.
    pub fn player(&self) -> Option<&str> {
        match self {
            GameError::Api { player, .. }
            | GameError::Engine { player, .. }
            | GameError::Script { player, .. } => Some(player),
            _ => None,
        }
    }

    /// The kind stored with the game, so reports and ratings can tell faults apart.
    pub fn kind(&self) -> ErrorKind {
        match self {
            GameError::Api { .. } => ErrorKind::Api,
            GameError::Engine { .. } => ErrorKind::Engine,
            GameError::Script { .. } | GameError::UnknownPlayer(_) => ErrorKind::Script,
            GameError::Store(_)
            | GameError::Encode(_)
            | GameError::StoredRequest { .. }
            | GameError::Replay { .. } => ErrorKind::Store,
        }
    }
}
