//! arena: a chess arena for large language models.
//!
//! The Rust core owns the board, the engines, the LLM clients and the store; embedded Lua scripts
//! decide play modes, prompts, reply parsing and tournament formats (see `ARCHITECTURE.md`).
//!
//! The arrows run one way: the binary (`src/main.rs`, `src/cli/`) uses [`lua`], which implements
//! the traits the domain modules define ([`tournament::rules`], [`tournament::turn::PlayMode`],
//! [`tournament::schedule::Format`], [`eval::task`]); no domain module imports [`lua`].

// The layers below, under the names the modules of this crate and the integration tests use.
pub use arena_core::{board, lines, pairing, rating, script, table};
pub use arena_engine as engine;
pub use arena_llm as llm;
pub use arena_lua as lua;
pub use arena_outputs::{export, import, leaderboard, report, serve};
pub use arena_play::{analysis, calls, eval, spec, tournament};
pub use arena_providers as providers;
pub use arena_store as store;
