//! Ratings as pure functions: no I/O, no Lua, no clocks.
//!
//! - [`glicko`]: Glicko-1 with one rating period per game, as ChessArena rates players, with a
//!   switch that reproduces ChessArena's published (buggy) numbers.
//! - [`matchmaking`]: which opponent makes the most informative next game.
//! - [`bradley_terry`]: batch Bradley–Terry of any tournament (maximum likelihood, draws as half
//!   points, a fitted White advantage) with bootstrap intervals and rank stability.
//! - [`ladder`]: Elo of a whole pool by maximum likelihood, pinned to an anchor of known rating.
//! - [`elo_anchor`]: LLM Chess's Elo estimate against opponents of known Elo, and its Win/Loss metric.
//! - [`sprt`]: the pentanomial GSPRT of "is the variant better?", Elo differences and Holm.

pub mod bradley_terry;
pub mod calibration;
pub mod elo_anchor;
mod error;
pub mod glicko;
pub mod ladder;
pub mod matchmaking;
pub mod placement;
mod root;
pub mod sprt;

#[cfg(test)]
mod conformance;
#[cfg(any(test, feature = "test-support"))]
pub mod reference;

pub use error::RatingError;

/// The two-sided 95% normal quantile used for every interval here.
pub const Z95: f64 = 1.96;
