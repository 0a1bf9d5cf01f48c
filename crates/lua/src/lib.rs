//! The Lua side of arena: the only crate that imports mlua, and the one that embeds the built-in
//! scripts under `scripts/` (its build script lists them), so editing one rebuilds this crate and
//! the binary only.
//!
//! Scripts are loaded into [`Generation`]s (validated snapshots of their sources); every game builds
//! its own sandboxed state from the generation it started with ([`ModeScript::for_game`]), and the
//! [`LuaHost`] loads them for the tournament runner, which knows them only through the traits
//! of `tournament::rules`.

// The layers below, under the names this crate's modules use.
#[cfg(test)]
use arena_core::fuzz;
use arena_core::{board, pairing, rating, script, table};
use arena_llm as llm;
use arena_play::{eval, spec, tournament};

mod api;
mod ctx;
mod error;
mod fields;
mod format;
mod generation;
mod hooks;
mod messages;
mod mode;
mod patterns;
mod raw;
mod sources;
mod state;
mod strict;
mod task;
#[cfg(test)]
mod tests;
mod tools;

pub use crate::script::{CheckErrors, ScriptError};
pub use format::FormatScript;
pub use generation::{Generation, LuaHost, PartialSpec, Unloaded};
pub use mode::ModeScript;
pub use sources::{SourceSet, builtin_source};
pub use state::Limits;
pub use task::{EvalScripts, TaskScript, UnloadedEval};
