//! arena: a chess arena for large language models.
//!
//! The Rust core owns the board, the engines, the LLM clients and the store; embedded Lua scripts
//! decide play modes, prompts, reply parsing and tournament formats (see `ARCHITECTURE.md`).
//!
//! The arrows run one way: the binary (`src/main.rs`, `src/cli/`) uses [`lua`], which implements
//! the traits the domain modules define ([`tournament::rules`], [`tournament::turn::PlayMode`],
//! [`tournament::schedule::Format`], [`eval::task`]); no domain module imports [`lua`].

pub mod analysis;
pub mod board;
pub mod calls;
pub mod engine;
pub mod eval;
pub mod export;
#[cfg(test)]
mod fuzz;
pub mod import;
pub mod leaderboard;
pub mod lines;
pub mod llm;
pub mod lua;
pub mod pairing;
pub mod rating;
pub mod report;
pub mod script;
pub mod serve;
pub mod store;
pub mod table;
pub mod test_parts;
pub mod tournament;
