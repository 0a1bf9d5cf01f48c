//! What arena shows and hands on: the leaderboard's tables ([`leaderboard`]), the one-file HTML
//! report ([`report`]), the exports and the imports of other systems' results ([`export`],
//! [`import`]), and the web app over a store ([`serve`]).
//!
//! Every output reads the store; only `serve` writes to it (a person's moves, played through the
//! same store calls a run makes). The crate's build script names the git commit in the export
//! manifests.

// The layers below, under the names this crate's modules use.
use arena_core::{board, pairing, rating, table};
use arena_engine as engine;
use arena_llm as llm;
use arena_play::{analysis, eval, tournament};
use arena_store as store;

pub mod export;
pub mod import;
pub mod leaderboard;
pub mod report;
pub mod serve;
