//! Integration tests: the `arena` binary against real parts (SQLite files, Stockfish, the local
//! model over HTTP). Tests that need a part which is absent say so and pass without running; the
//! README's test command (`scripts/test.sh`) installs and starts them all.

mod agentic;
mod analyze;
mod check;
mod common;
mod engine_faults;
mod errors;
mod export;
mod outage;
mod reload;
mod resume;
mod tournament;
