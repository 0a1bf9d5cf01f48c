//! Integration tests: the `arena` binary against real parts (SQLite files, Stockfish, the local
//! model over HTTP). A test whose part is absent says so and returns, or fails under
//! `ARENA_REQUIRE_ALL=1` (`.ci/run`; see `arena_testkit`); the README's test command
//! (`scripts/test.sh`) installs and starts them all.

mod adjudication;
mod agentic;
mod agentic_tools;
mod analysis_run;
mod analyze;
mod board_images;
mod books;
mod budget;
mod check;
mod check_table;
mod chess960;
mod chessarena;
mod clock;
mod common;
mod cut_off;
mod datasets;
mod debian_engines;
mod docs;
mod endings;
mod engine_faults;
mod errors;
mod eval;
mod eval_batch;
mod experiment;
mod export;
mod fastchess;
mod formats;
mod import;
mod init;
mod ladder;
mod migrate;
mod outage;
mod pacing;
mod placement;
mod play;
mod progress_endpoints;
mod prompts;
mod ratings;
mod readme;
mod rejected;
mod reload;
mod report;
mod resume;
mod secrets;
mod serve;
mod serve_scale;
mod streaming;
mod think_demo;
mod tournament;
mod usage;
mod void_games;
mod vote;
mod workers;
