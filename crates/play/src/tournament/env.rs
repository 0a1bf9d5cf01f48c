//! What every game of a run shares: the store, the roster, the seeds, the progress counters and
//! the adjudication engine. Its own module, so that the parts of a game (asking a model, a
//! person's moves, adjudication) take it without depending on the game loop that uses them.

use std::sync::Arc;

use super::{adjudicate::Adjudication, players::Roster, progress::Progress};
use crate::store::Store;

/// Everything a game needs from its tournament.
pub struct GameEnv {
    /// The store.
    pub store: Arc<Store>,
    /// Players and their resources.
    pub roster: Arc<Roster>,
    /// The tournament's id in the store.
    pub tournament: i64,
    /// The tournament seed.
    pub seed: u64,
    /// Seed random moves by the game's round instead of its number (`pair_seeds`).
    pub seed_by_round: bool,
    /// Counters for the progress display.
    pub progress: Arc<Progress>,
    /// The tournament's adjudication engine and rules, when it has any.
    pub adjudication: Option<Arc<Adjudication>>,
}
