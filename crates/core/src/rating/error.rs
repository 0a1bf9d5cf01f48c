//! The one error type of the rating module.

/// Why a rating computation refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatingError {
    /// A game score outside `[0, 1]` or not a number.
    #[error("score `{0}` is not a number between 0 and 1")]
    InvalidScore(f64),
    /// A rating, deviation or shift that is not finite, or a deviation that is not positive.
    #[error("{what} `{value}` is not a usable value")]
    InvalidValue {
        /// Which input was wrong (`rating`, `rd`, `opponent_elo`, ...).
        what: &'static str,
        /// The value received.
        value: f64,
    },
    /// A game of a player against itself; ChessArena skips these and so do we, loudly.
    #[error("player `{0}` cannot play against itself")]
    SelfPlay(String),
    /// A player the rating table does not know.
    #[error("player `{0}` has no rating")]
    UnknownPlayer(String),
    /// An estimate was asked for without a single game.
    #[error("no games to rate")]
    NoGames,
    /// A fit was asked to pin an empty list of players.
    #[error("no player is pinned: name at least one anchor")]
    NoAnchor,
    /// Players without a finite maximum-likelihood rating: they won or lost every game against
    /// the rest, or no games link them to the anchor.
    #[error(
        "no finite rating for {}: they won or lost every game against the others, or no games \
         link them to the anchor (allow virtual draws, or play more games)",
        .0.join(", ")
    )]
    Unbounded(Vec<String>),
    /// White's advantage has no finite maximum-likelihood value: White won every game, lost
    /// every game, or the advantage cannot be told apart from the players' strengths.
    #[error(
        "no finite White advantage: White won or lost every game, or the players did not play \
         both colours enough to tell the advantage from their strengths (allow virtual draws, or \
         play both colours)"
    )]
    NoFiniteAdvantage,
    /// None of the bootstrap samples could be fitted.
    #[error(
        "none of the {0} bootstrap sample(s) could be fitted (allow virtual draws, or play more \
         games)"
    )]
    BootstrapFailed(usize),
    /// An iterative fit did not settle.
    #[error("the rating fit did not converge in {0} iterations")]
    NoConvergence(usize),
    /// The root finder could not bracket the maximum-likelihood rating.
    #[error("failed to bracket the rating between `{low}` and `{high}`")]
    NoBracket {
        /// Lower end of the widest bracket tried.
        low: f64,
        /// Upper end of the widest bracket tried.
        high: f64,
    },
}

/// Checks that `value` is finite, naming it in the error.
pub(crate) fn finite(what: &'static str, value: f64) -> Result<f64, RatingError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(RatingError::InvalidValue { what, value })
    }
}

/// Checks that `score` is a game score in `[0, 1]`.
pub(crate) fn score(value: f64) -> Result<f64, RatingError> {
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(RatingError::InvalidScore(value))
    }
}
