//! The Lua side of arena: the only module that imports mlua.
//!
//! Scripts are loaded into [`Generation`]s (validated snapshots of their sources); every game builds
//! its own sandboxed state from the generation it started with ([`ModeScript::for_game`]), and the
//! [`LuaHost`] loads them for the tournament runner, which knows them only through the traits
//! of `tournament::rules`.

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
