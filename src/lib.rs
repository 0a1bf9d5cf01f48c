//! arena: a chess arena for large language models.
//!
//! The Rust core owns the board, the engines, the LLM clients and the store; embedded Lua scripts
//! decide play modes, prompts, reply parsing and tournament formats (see `DESIGN.md`).

pub mod analysis;
pub mod board;
pub mod engine;
pub mod eval;
pub mod export;
pub mod leaderboard;
pub mod llm;
pub mod lua;
pub mod rating;
pub mod report;
pub mod store;
pub mod tournament;
