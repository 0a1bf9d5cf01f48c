//! Integration tests: the `arena` binary against real parts (SQLite files, Stockfish, the local
//! model over HTTP). Tests that need a part which is absent say so and pass without running; the
//! README's test command (`scripts/test.sh`) installs and starts them all.

mod agentic;
mod analysis_run;
mod analyze;
mod books;
mod check;
mod chessarena;
mod common;
mod debian_engines;
mod engine_faults;
mod errors;
mod eval;
mod export;
mod fastchess;
mod ladder;
mod outage;
mod reload;
mod report;
mod resume;
mod secrets;
mod tournament;
