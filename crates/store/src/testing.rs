//! Where the tests' stores live: SQLite in memory by default, or a fresh schema on a PostgreSQL
//! server when `ARENA_STORE_TESTS=postgres` (the server in `ARENA_TEST_POSTGRES`, as
//! `scripts/postgres.sh start` prints it). Under `cfg(test)`, [`Store::open_in_memory`] asks here
//! first, so every unit test that uses a store checks its queries on the backend chosen;
//! `scripts/test.sh` runs them both ways. The schemas are left behind: the test script gives each
//! run a fresh database.

use std::{
    path::Path,
    sync::atomic::{AtomicU32, Ordering},
};

use super::{Store, StoreError};

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
