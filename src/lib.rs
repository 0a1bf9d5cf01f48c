//! arena: a chess arena for large language models.
//!
//! The Rust core owns the board, the engines, the LLM clients, the ratings and the store; embedded Lua
//! scripts decide play modes, prompts, reply parsing and tournament formats. See `DESIGN.md` in the
//! steering repository for the architecture.
