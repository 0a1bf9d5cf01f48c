//! Running a tournament: the scheduler, the per-game loop, players, progress and the engine
//! analysis beside play.
//!
//! The tournament defines what it needs from scripts as traits ([`turn::PlayMode`],
//! [`schedule::Format`], [`rules::Rules`] and [`rules::ScriptHost`]); the Lua host implements
//! them, and the binary hands it to [`run`]. Nothing here knows Lua.

pub mod adjudicate;
pub mod analysis;
pub mod ask;
pub mod budget;
pub mod degenerate;
pub mod dryrun;
pub mod endpoint_line;
pub mod env;
mod error;
pub mod experiment;
pub mod game;
pub mod human;
pub mod players;
pub mod preflight;
pub mod progress;
pub mod reload;
pub mod rules;
pub mod runner;
pub mod schedule;
pub mod standings;
pub mod turn;
pub mod versions;
pub mod vote;
pub mod worker;

pub use error::{GameError, ReplayError, TournamentError};
pub use runner::{BudgetStop, RunOptions, RunSummary, Stop, run};
