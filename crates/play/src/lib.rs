//! arena's play: what happens between a tournament's start and its last stored ply.
//!
//! - [`tournament`]: the scheduler, the per-game loop, players, budgets, progress and the engine
//!   analysis beside play;
//! - [`eval`]: the fine-grained evaluation tasks and their scoring;
//! - [`analysis`]: engine analysis of played games, cached in the store;
//! - [`calls`]: the one path every model request takes, stored before it is used.
//!
//! The crate defines what it needs from scripts as traits ([`tournament::rules`],
//! [`tournament::turn::PlayMode`], [`tournament::schedule::Format`], [`eval::task`]); the Lua
//! crate implements them, so nothing here knows of Lua, the command line or the outputs.

// The layers below, under the names this crate's modules use.
use arena_core::{board, lines, pairing, rating, script, table};
use arena_engine as engine;
use arena_llm as llm;
use arena_store as store;
#[cfg(test)]
use arena_testkit as test_parts;

pub mod analysis;
pub mod calls;
pub mod eval;
pub mod spec;
pub mod tournament;
