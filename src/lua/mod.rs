//! The Lua side of arena: the only module that imports mlua.
//!
//! Scripts are loaded into [`Generation`]s (validated snapshots of their sources); every game builds
//! its own sandboxed state from the generation it started with ([`ModeScript::for_game`]), and the
//! [`reload`] watcher publishes new generations while a tournament runs.

mod api;
mod error;
mod format;
mod generation;
mod mode;
pub mod reload;
mod sources;
mod state;
mod task;
#[cfg(test)]
mod tests;

pub use error::ScriptError;
pub use format::FormatScript;
pub use generation::{CheckErrors, Generation};
pub use mode::{ModeScript, PlyOpening};
pub use sources::SourceSet;
pub use state::Limits;
pub use task::{EvalScripts, Parsed, TaskScript};
