//! Where the tests' stores live: SQLite in memory by default, or a fresh schema on a PostgreSQL
//! server when `ARENA_STORE_TESTS=postgres` (the server in `ARENA_TEST_POSTGRES`, as
//! `scripts/postgres.sh start` prints it), and rows the tests of the crates above build. In this
//! crate's tests and with the `test-support` feature (the crates above turn it on for their tests),
//! [`Store::open_in_memory`] asks here first, so every unit test that uses a store checks its
//! queries on the backend chosen; `scripts/test.sh` runs them both ways. The schemas are left
//! behind: the test script gives each run a fresh database.

use std::{
    path::Path,
    sync::atomic::{AtomicU32, Ordering},
};

use super::{GameRow, GameStatus, Store, StoreError};

/// Whether the tests' stores are on PostgreSQL in this process.
pub(crate) fn on_postgres() -> bool {
    std::env::var("ARENA_STORE_TESTS").is_ok_and(|v| v == "postgres")
}

/// A fresh, empty store in a schema of its own on the test server.
///
/// # Panics
///
/// If `ARENA_TEST_POSTGRES` is not set or the server cannot be reached: a test run that asked
/// for PostgreSQL must not quietly fall back to SQLite.
pub(crate) fn postgres_store() -> Result<Store, StoreError> {
    let url = std::env::var("ARENA_TEST_POSTGRES").expect(
        "ARENA_STORE_TESTS=postgres needs the server in ARENA_TEST_POSTGRES (scripts/postgres.sh start)",
    );
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let schema = format!(
        "test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    crate::test_parts::admin(
        &url,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"),
    )
    .expect("create a test schema on ARENA_TEST_POSTGRES");
    let separator = if url.contains('?') { '&' } else { '?' };
    Store::open(Path::new(&format!(
        "{url}{separator}options=-csearch_path%3D{schema}"
    )))
}

/// A finished game of a schedule, without moves, for tests that need a game row: game `index`
/// of tournament 1, in round 1, ended by checkmate.
pub fn finished_game(index: u32, white: &str, black: &str, result: &str) -> GameRow {
    GameRow {
        id: i64::from(index),
        tournament: 1,
        index,
        round: 1,
        white: white.into(),
        black: black.into(),
        start_fen: None,
        opening_moves: Vec::new(),
        opening_label: None,
        variant: crate::board::Variant::Standard,
        status: GameStatus::Finished,
        result: Some(result.into()),
        termination: Some("checkmate".into()),
        reason: None,
        script_hash: None,
        generation: None,
        started_at: None,
        finished_at: None,
        error: None,
        ply_count: 10,
        error_kind: None,
        replay_of: None,
        slot: index,
        at_limit: None,
    }
}
