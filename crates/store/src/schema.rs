//! The SQLite side of the schema: the header that marks a store, the snapshot a new store is made
//! from, and the migration runner (the steps themselves, in both dialects, are in `migrations.rs`).
//!
//! A store is recognised by two header fields SQLite keeps for applications: `application_id` (always
//! [`APPLICATION_ID`]) and `user_version` (the number of migrations applied). Migrations only ever
//! append: version N+1 is reached by running `MIGRATIONS[N]` on a version-N store, inside one
//! transaction together with the `user_version` bump, so a crash leaves the file at N or N+1.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::migrations::MIGRATIONS;

/// The `application_id` header field of every arena store: "ARNA" in ASCII.
pub(crate) const APPLICATION_ID: i32 = 0x4152_4E41;

/// The whole schema at [`CURRENT_VERSION`], exactly as SQLite holds it once every migration has
/// run on an empty store. A new store is made from it in one batch: replaying the history instead
/// (tables rebuilt, renamed and altered, each time making SQLite re-read its whole catalogue on
/// both connections) cost 61 M instructions, 4 % of a 2,000-ply run's.
///
/// The test `a_new_store_has_the_schema_every_migration_makes` checks that the two agree
/// statement for statement; after adding a migration, `ARENA_BLESS=1 cargo test --lib
/// new_store_has_the_schema` rewrites the file, to be reviewed as a diff like a golden file.
pub(crate) const NEW_STORE_SCHEMA: &str = include_str!("new_store.sql");

/// The schema version this build writes (and the newest it can read).
pub(crate) const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// What the header and catalogue of an existing file say about it, read without writing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An empty database (a new or zero-length file): ours to initialise.
    Empty,
    /// An arena store at this schema version.
    Arena(i64),
    /// A database some other program made.
    Foreign,
}

/// Classifies the database behind `conn` by reading only.
pub(crate) fn classify(conn: &Connection) -> rusqlite::Result<Kind> {
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app_id == APPLICATION_ID {
        return Ok(Kind::Arena(version));
    }
    let any_object: Option<i64> = conn
        .query_row("SELECT 1 FROM sqlite_schema LIMIT 1", [], |r| r.get(0))
        .optional()?;
    if app_id == 0 && version == 0 && any_object.is_none() {
        Ok(Kind::Empty)
    } else {
        Ok(Kind::Foreign)
    }
}

/// Brings an empty or older arena store up to [`CURRENT_VERSION`], returning the version it found.
///
/// Runs under an immediate transaction and re-reads the version inside it, so two processes opening
/// the same new file at once migrate it exactly once. A caller must have classified the file first;
/// this function re-checks only that it has not become foreign or newer meanwhile.
pub(crate) fn migrate(conn: &mut Connection) -> Result<i64, MigrateError> {
    migrate_making_new_stores(conn, NewStore::FromSnapshot)
}

/// How [`migrate`] makes the schema of an empty store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewStore {
    /// In one batch, from [`NEW_STORE_SCHEMA`].
    FromSnapshot,
    /// By running every migration in turn, as an old store is brought up: how the snapshot's
    /// test makes the schema it compares the snapshot with.
    #[cfg(test)]
    ByEveryMigration,
}

/// [`migrate`], making an empty store's schema as `new_store` says.
pub(crate) fn migrate_making_new_stores(
    conn: &mut Connection,
    new_store: NewStore,
) -> Result<i64, MigrateError> {
    // Rebuilding a table that others reference (version 6 rebuilds `games`) needs foreign keys
    // off, and the pragma is a no-op inside a transaction: switch it off around the transaction
    // and check the keys before committing instead (SQLite's documented procedure).
    let foreign_keys: bool = conn
        .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
        .map_err(|e| MigrateError::Sql(0, e))?;
    if foreign_keys {
        conn.pragma_update(None, "foreign_keys", "OFF")
            .map_err(|e| MigrateError::Sql(0, e))?;
    }
    let migrated = migrate_in_transaction(conn, new_store);
    if foreign_keys {
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| MigrateError::Sql(0, e))?;
    }
    migrated
}

fn migrate_in_transaction(conn: &mut Connection, new_store: NewStore) -> Result<i64, MigrateError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| MigrateError::Sql(0, e))?;
    let found = match classify(&tx).map_err(|e| MigrateError::Sql(0, e))? {
        Kind::Empty => 0,
        Kind::Arena(v) if v <= CURRENT_VERSION => v,
        Kind::Arena(v) => return Err(MigrateError::Newer(v)),
        Kind::Foreign => return Err(MigrateError::Foreign),
    };
    if found == 0 && new_store == NewStore::FromSnapshot {
        tx.execute_batch(NEW_STORE_SCHEMA)
            .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
        set_version(&tx, CURRENT_VERSION)?;
    } else {
        for (from, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            let to = from as i64 + 1;
            tx.execute_batch(step.sqlite)
                .map_err(|e| MigrateError::Sql(to, e))?;
            set_version(&tx, to)?;
        }
    }
    let violation: Option<String> = tx
        .query_row("PRAGMA foreign_key_check", [], |r| {
            Ok(format!(
                "a row of `{}` refers to a missing `{}`",
                r.get::<_, String>(0)?,
                r.get::<_, String>(2)?
            ))
        })
        .optional()
        .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
    if let Some(violation) = violation {
        return Err(MigrateError::Sql(
            CURRENT_VERSION,
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY),
                Some(violation),
            ),
        ));
    }
    tx.commit()
        .map_err(|e| MigrateError::Sql(CURRENT_VERSION, e))?;
    Ok(found)
}

/// Records in the header that the store is at `version` (and is an arena store).
fn set_version(conn: &Connection, version: i64) -> Result<(), MigrateError> {
    // PRAGMA values cannot be bound as parameters; both are integers we control.
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {version};"
    ))
    .map_err(|e| MigrateError::Sql(version, e))
}

/// The schema of the store behind `conn` as the statements that make it, one per line group, in
/// the order SQLite's catalogue holds them (the order they were made in), each ending in `;`.
/// SQLite's own tables (`sqlite_sequence` and the like) are left out: it makes them itself.
#[cfg(test)]
pub(crate) fn schema_statements(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(
        "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
         ORDER BY rowid",
    )?;
    let mut out = String::new();
    for sql in stmt.query_map([], |r| r.get::<_, String>(0))? {
        out.push_str(&sql?);
        out.push_str(";\n");
    }
    Ok(out)
}

/// Why [`migrate`] failed; `mod.rs` turns it into a `StoreError` that names the path.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// SQL failed while moving to this version (0: before any migration ran).
    Sql(i64, rusqlite::Error),
    /// Another process wrote a newer schema after we classified the file.
    Newer(i64),
    /// Another program created tables after we classified the file.
    Foreign,
}
