//! The results store: one SQLite file (or a PostgreSQL database that several workers share) holding
//! tournaments, players, games, plies, every LLM call and the scripts each game ran under.
//!
//! Every effect is written before it is used: the game loop records an LLM reply before parsing it and
//! a move before the next ply, so a killed run loses nothing and a resumed run re-feeds stored replies
//! instead of paying for them again. The file runs in WAL mode with `synchronous = NORMAL` (a committed
//! write survives a process kill; only a power cut can drop the last commits), foreign keys on and a
//! 5 s busy timeout, so several connections (threads or processes) can share it.
//!
//! All SQL lives in this module and no backend type appears in its public API: the same [`Store`]
//! methods run on SQLite and on PostgreSQL (`postgres://` URLs), through the one SQL dialect of
//! [`db`]; leases ([`Store::claim`]) let several workers share one store.
//!
//! ```
//! use arena_store::{GameStatus, PlayerRecord, ScheduledGame, Store};
//!
//! let store = Store::open_in_memory()?;
//! let t = store.open_tournament("demo", "demo.lua", "{}")?;
//! for name in ["sf", "rnd"] {
//!     let kind = if name == "sf" { "engine" } else { "random" };
//!     store.upsert_player(t.id, &PlayerRecord::new(name, kind, "{}"))?;
//! }
//! store.schedule_games(t.id, &[ScheduledGame::new(0, 0, "sf", "rnd")])?;
//! let game = &store.games(t.id)?[0];
//! store.mark_game_started(game.id, "hash", 1)?;
//! store.finish_game(game.id, "1-0", "checkmate", None)?;
//! assert_eq!(store.game(game.id)?.status, GameStatus::Finished);
//! assert_eq!(store.standings(t.id)?[0].player, "sf");
//! # Ok::<(), arena_store::StoreError>(())
//! ```

use arena_core::board;
use arena_llm_types as llm;
#[cfg(any(test, feature = "test-support"))]
use arena_testkit as test_parts;

mod adjudication;
mod analysis;
mod batches;
mod browse;
mod calls;
mod copy;
pub(crate) mod db;
mod eval;
mod export;
mod games;
mod group;
mod human;
mod images;
mod leases;
mod migrations;
mod postgres;
mod schema;
mod spend;
mod stats;
mod tournaments;

use std::{
    fmt,
    path::{Path, PathBuf},
    time::Duration,
};

use rusqlite::{Connection, OpenFlags, TransactionBehavior, ffi};

pub use self::{
    adjudication::{AdjudicationEvalRecord, LimitVerdictRecord},
    analysis::{GameAnalysisRecord, PlayerAnalysisRow, PlyAnalysisRecord},
    batches::{BatchItemRecord, BatchItemRow, BatchUsageRow, EvalBatchRow},
    browse::{
        GameFilter, GameProgress, PageFrom, RatedGameRow, TerminationCount, TournamentProgress,
    },
    calls::{
        CUT_OFF_OUTCOME, CallOutcome, CallSummary, EventRow, FailedCallRecord, FailedCallRow,
        LlmCallRecord, LlmCallRow, PROPOSAL_OUTCOME, ReusedCall, SAMPLE_OUTCOME, UNREAD_OUTCOMES,
        UsageDetails,
    },
    copy::{CopyError, Side, TableCheck, TableSum},
    eval::{EvalReplyRecord, EvalResultRow, EvalRunRow},
    export::{
        AcceptedMoveRow, CallExportRow, GameExportRow, PlyExportRow, StreamError, TournamentFacts,
    },
    games::{
        CallVerdict, ErrorKind, GameRow, GameStatus, PlyRecord, ScheduledGame, VOID_RESULT,
        current_attempts,
    },
    human::{HumanAction, HumanActionRow},
    leases::{Claim, Fence, LeaseKind, Leased},
    spend::{CHARS_PER_TOKEN, CompletionStats, ModelSpend, ProviderPricing, SpendTally},
    stats::{AtLimit, GameMoves, PROTOCOL_FAILURE_OUTCOMES, StandingRow, Totals},
    tournaments::{PlayerRecord, PlayerRow, TournamentRow},
};
use self::{
    db::{Backend, Conn, DbError, DbResult, Row, Violation},
    schema::{CURRENT_VERSION, Kind, MigrateError},
};

/// Connections a PostgreSQL store keeps open per process: enough for a worker's running games to
/// overlap their round trips, few enough that dozens of workers fit a server's default 100.
const POSTGRES_CONNECTIONS: usize = 4;

/// How long a write waits for another connection's lock before failing with "database is locked".
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on one store file (or an in-memory store), shared by all threads of a run.
///
/// The connection sits behind a mutex: writes are short, and SQLite serialises writers anyway. The
/// game loop's own writes (a call's reply, a ply with its verdict) go through
/// [`Leased::record_llm_call_grouped`] and [`Store::record_ply_with_verdict_grouped`], which
/// commit the writes of concurrent games together (group commit). A second process (or a second
/// `Store` on the same file) works too, thanks to WAL and the busy timeout.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
}

impl Store {
    /// Opens the store at `path`, creating it if the file does not exist or is empty, and migrating it
    /// to the current schema version if it is older.
    ///
    /// The file is inspected read-only first: a file that is not SQLite, an SQLite database made by
    /// another program, or a store written by a newer arena is refused and left untouched.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotAStore`] for a non-SQLite or foreign file, [`StoreError::NewerSchema`] for a
    /// schema newer than this build, [`StoreError::Open`] if the file cannot be opened or configured,
    /// [`StoreError::Migrate`] if a migration fails (the file then stays at its old version).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(url) = postgres_url(path) {
            return Store::open_postgres(url, false);
        }
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        // No SQLITE_OPEN_URI: a path is a path, even if it starts with `file:`.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(open_error)?;
        large_lookaside(&conn);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;

        match schema::classify(&conn) {
            Ok(Kind::Empty) => {}
            Ok(Kind::Arena(v)) if v <= CURRENT_VERSION => {}
            Ok(Kind::Arena(v)) => return Err(newer(path, v)),
            Ok(Kind::Foreign) => return Err(foreign(path)),
            Err(e) if e.sqlite_error_code() == Some(ffi::ErrorCode::NotADatabase) => {
                return Err(StoreError::NotAStore {
                    path: path.to_owned(),
                    reason: "it is not an SQLite database".to_owned(),
                });
            }
            Err(e) => return Err(open_error(e)),
        }

        // Only now that the file is known to be ours (or empty) may anything be written to it.
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(open_error)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Open {
                path: path.to_owned(),
                reason: format!("the journal mode stayed `{mode}` instead of `wal`"),
            });
        }
        configure(&mut conn).map_err(open_error)?;
        migrate(&mut conn, path)?;
        Ok(Store {
            backend: Backend::Sqlite(group::Sqlite::new(conn)),
        })
    }

    /// Opens an existing store for reading only, for reports: nothing is written, no schema is
    /// migrated, and no lock is held between queries, so a store that a running `arena run` is
    /// writing can be read at the same time (WAL readers never block the writer).
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`] if the file cannot be opened or is at an older schema version (a
    /// writing command such as `arena leaderboard` migrates it), [`StoreError::NotAStore`] or
    /// [`StoreError::NewerSchema`] as for [`Store::open`].
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        if let Some(url) = postgres_url(path) {
            return Store::open_postgres(url, true);
        }
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(open_error)?;
        large_lookaside(&conn);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        match schema::classify(&conn) {
            Ok(Kind::Arena(v)) if v == CURRENT_VERSION => {}
            Ok(Kind::Arena(v)) if v > CURRENT_VERSION => return Err(newer(path, v)),
            Ok(Kind::Arena(v)) => {
                return Err(StoreError::Open {
                    path: path.to_owned(),
                    reason: format!(
                        "its schema version {v} is older than {CURRENT_VERSION}: open it once with a writing command (e.g. `arena leaderboard`) to migrate it"
                    ),
                });
            }
            Ok(Kind::Empty) => {
                return Err(StoreError::NotAStore {
                    path: path.to_owned(),
                    reason: "it is empty".to_owned(),
                });
            }
            Ok(Kind::Foreign) => return Err(foreign(path)),
            Err(e) if e.sqlite_error_code() == Some(ffi::ErrorCode::NotADatabase) => {
                return Err(StoreError::NotAStore {
                    path: path.to_owned(),
                    reason: "it is not an SQLite database".to_owned(),
                });
            }
            Err(e) => return Err(open_error(e)),
        }
        conn.pragma_update(None, "query_only", "ON")
            .map_err(open_error)?;
        Ok(Store {
            backend: Backend::Sqlite(group::Sqlite::new(conn)),
        })
    }

    /// Opens a fresh store that lives in memory and disappears when dropped (for tests and dry runs).
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`] or [`StoreError::Migrate`] if SQLite cannot create the database, which
    /// only happens when memory runs out.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        #[cfg(any(test, feature = "test-support"))]
        if testing::on_postgres() {
            return testing::postgres_store();
        }
        let path = Path::new(":memory:");
        let open_error = |e: rusqlite::Error| StoreError::Open {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        let mut conn = Connection::open_in_memory().map_err(open_error)?;
        large_lookaside(&conn);
        configure(&mut conn).map_err(open_error)?;
        migrate(&mut conn, path)?;
        Ok(Store {
            backend: Backend::Sqlite(group::Sqlite::new(conn)),
        })
    }

    /// Connects to the PostgreSQL server at `url` (`postgres://user[:password]@host[:port]/db`)
    /// and creates or migrates its schema, unless `read_only`.
    fn open_postgres(url: &str, read_only: bool) -> Result<Store, StoreError> {
        // The schema is checked (and created or migrated) on the first connection; the others
        // are opened as the worker's games need them.
        let first = postgres::connect(url)?;
        let more = url.to_owned();
        let store = Store {
            backend: Backend::Postgres(db::PgPool::new(first, POSTGRES_CONNECTIONS, move || {
                postgres::connect_session(&more, read_only)
                    .map_err(|e| tracing::warn!("the store keeps the connections it has: {e}"))
                    .ok()
            })),
        };
        postgres::prepare(&store.conn(), url, read_only)?;
        Ok(store)
    }

    /// Locks the connection for one method's queries.
    fn conn(&self) -> Conn<'_> {
        self.backend.lock()
    }
}

/// The URL in a `--db` value that names a PostgreSQL server rather than a file.
fn postgres_url(location: &Path) -> Option<&str> {
    location.to_str().filter(|s| postgres::is_postgres_url(s))
}

/// Whether a store location (a file path or a `postgres://` URL) can be opened for reading: the
/// file exists, or it is a server (whose database the connection itself checks).
pub fn location_exists(location: &Path) -> bool {
    is_server_location(location) || location.exists()
}

/// A store location as it may be shown or exported: a server URL's password replaced by `***`.
pub fn display_location(location: &Path) -> String {
    match postgres_url(location) {
        Some(url) => postgres::redacted(url),
        None => location.display().to_string(),
    }
}

/// Whether a store location is a PostgreSQL server (`postgres://` or `postgresql://`), not a file.
pub fn is_server_location(location: &Path) -> bool {
    postgres_url(location).is_some()
}

/// The database a `postgres://` location names (as the driver parses the URL), `None` for a file
/// or a URL without one.
pub fn server_database(location: &Path) -> Option<String> {
    let url = postgres_url(location)?;
    let config: ::postgres::Config = url.parse().ok()?;
    config.get_dbname().map(str::to_owned)
}

/// Size of one slot of a connection's lookaside memory (SQLite's own allocator for the
/// short-lived buffers of a statement), in bytes.
///
/// SQLite's default slot is 1,200 bytes, smaller than one stored request: every text column of
/// that size that a statement copies (binding a prompt, and the UPDATE of a call's verdict, which
/// reads the whole row, request and raw body included, to write it back) went to `malloc` instead,
/// and glibc's `malloc` of a kilobyte or more first consolidates its free lists (about a third of
/// the cost of storing a ply). 8 KB holds the requests and records of typical games.
const LOOKASIDE_SLOT: i32 = 8192;

/// How many slots of [`LOOKASIDE_SLOT`] bytes a connection reserves: 256 KB of address space,
/// of which only the slots in use are ever touched (SQLite carves 30 large and 128 small slots
/// out of it); a statement needs a handful at a time.
const LOOKASIDE_SLOTS: i32 = 32;

/// Gives a newly opened connection [`LOOKASIDE_SLOTS`] lookaside slots of [`LOOKASIDE_SLOT`]
/// bytes. Must run before the connection's first statement (SQLite refuses while lookaside
/// memory is in use); should SQLite refuse anyway, the connection keeps its default, which is
/// slower but the same in every other way.
fn large_lookaside(conn: &Connection) {
    // SAFETY: `handle` is this open connection's, used on this thread before any statement;
    // SQLITE_DBCONFIG_LOOKASIDE takes (void *buffer, int slot_size, int slot_count), and a null
    // buffer lets SQLite allocate (and later free) the memory itself.
    let rc = unsafe {
        ffi::sqlite3_db_config(
            conn.handle(),
            ffi::SQLITE_DBCONFIG_LOOKASIDE,
            std::ptr::null_mut::<std::ffi::c_void>(),
            LOOKASIDE_SLOT,
            LOOKASIDE_SLOTS,
        )
    };
    if rc != ffi::SQLITE_OK {
        tracing::debug!("SQLite kept its default lookaside (code {rc})");
    }
}

/// How many prepared statements a connection keeps: rusqlite's default of 16 was already full
/// with the statements a running tournament repeats, and group commit adds five of its own
/// (`BEGIN`, `SAVEPOINT`, `RELEASE`, `ROLLBACK TO`, `COMMIT`); an evicted statement is parsed
/// and planned again the next time.
const STATEMENT_CACHE: usize = 64;

/// Per-connection settings that do not touch the file.
fn configure(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Writers take the lock at BEGIN, so a read-then-write transaction never hits the WAL
    // "snapshot is stale" error that the busy timeout cannot wait out.
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    Ok(())
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    match schema::migrate(conn) {
        Ok(_) => Ok(()),
        Err(MigrateError::Newer(v)) => Err(newer(path, v)),
        Err(MigrateError::Foreign) => Err(foreign(path)),
        Err(MigrateError::Sql(version, e)) => Err(StoreError::Migrate {
            path: path.to_owned(),
            version,
            cause: BackendError(DbError::Sqlite(e)),
        }),
    }
}

fn newer(path: &Path, found: i64) -> StoreError {
    StoreError::NewerSchema {
        path: path.to_owned(),
        found,
        supported: CURRENT_VERSION,
    }
}

fn foreign(path: &Path) -> StoreError {
    StoreError::NotAStore {
        path: path.to_owned(),
        reason: "it is an SQLite database that another program created".to_owned(),
    }
}

/// Errors of the store. Messages name what failed (the path, the game, the ply).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or configured.
    #[error("failed to open store `{}`: {reason}", path.display())]
    Open {
        /// The store file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The file is not an arena store (not SQLite, or another program's database); it was not modified.
    #[error("refusing to open `{}` as an arena store: {reason}", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// Why it is not a store.
        reason: String,
    },
    /// The store was written by a newer arena; it was not modified.
    #[error(
        "refusing to open store `{}`: its schema version {found} is newer than the {supported} this arena supports",
        path.display()
    )]
    NewerSchema {
        /// The store file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A migration failed and was rolled back.
    #[error("failed to migrate store `{}` to schema version {version}: {cause}", path.display())]
    Migrate {
        /// The store file.
        path: PathBuf,
        /// The version the failed migration was heading for.
        version: i64,
        /// What the database said.
        cause: BackendError,
    },
    /// A query failed (I/O error, lock timeout, corrupt data, ...).
    #[error("failed to {what}: {cause}")]
    Database {
        /// The operation, e.g. "record ply 3 of game 7".
        what: String,
        /// What the database said.
        cause: BackendError,
    },
    /// A row with the same key is already stored (a ply, an LLM call, a script file).
    #[error("cannot {what}: it is already stored")]
    Duplicate {
        /// The operation, e.g. "record ply 3 of game 7".
        what: String,
    },
    /// A write referred to a tournament, game or player that does not exist.
    #[error("cannot {what}: it refers to a tournament, game or player that does not exist")]
    MissingReference {
        /// The operation.
        what: String,
    },
    /// The row asked for does not exist.
    #[error("{what} does not exist")]
    NotFound {
        /// The row, e.g. "game 7".
        what: String,
    },
    /// A scheduled game names a player the tournament does not have.
    #[error("cannot schedule game {index} of tournament {tournament}: unknown player `{player}`")]
    UnknownPlayer {
        /// The tournament id.
        tournament: i64,
        /// The game index.
        index: u32,
        /// The unknown player name.
        player: String,
    },
    /// The tournament script's schedule changed under a stored tournament.
    #[error(
        "game {index} of the schedule changed under the stored tournament: stored {stored}, requested {requested}"
    )]
    ScheduleMismatch {
        /// The game index.
        index: u32,
        /// The stored pairing and start.
        stored: String,
        /// The pairing and start the caller asked for.
        requested: String,
    },
    /// Scripts under this hash are already stored with other files or contents.
    #[error("scripts `{hash}` are already stored with different files")]
    ScriptsMismatch {
        /// The script hash.
        hash: String,
    },
    /// A game is in a state that does not allow the operation (e.g. finishing a finished game).
    #[error("cannot {action} game {game_id}: it is {status}")]
    InvalidState {
        /// The game id.
        game_id: i64,
        /// Its current status.
        status: GameStatus,
        /// The refused operation.
        action: &'static str,
    },
    /// A write under a lease that this worker no longer holds: another worker took the game over
    /// (its lease lapsed while this one stalled). Nothing was written.
    #[error(
        "game {game_id}: worker `{worker}` no longer holds its lease ({}): the write was refused",
        holder.as_ref().map_or_else(|| "nobody holds it now".to_owned(), |h| format!("`{h}` holds it now"))
    )]
    LeaseLost {
        /// The game id.
        game_id: i64,
        /// The worker whose write was refused.
        worker: String,
        /// The worker that holds the lease now, if any.
        holder: Option<String>,
    },
    /// A game result other than `1-0`, `0-1`, `1/2-1/2` or `*` (void).
    #[error(
        "cannot finish game {game_id} with result `{result}`: expected 1-0, 0-1, 1/2-1/2 or * (void)"
    )]
    InvalidResult {
        /// The game id.
        game_id: i64,
        /// The refused result.
        result: String,
    },
}

/// An error from the database backend, kept opaque so the API does not depend on the backend crate.
#[derive(Debug)]
pub struct BackendError(DbError);

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for BackendError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Adds the failed operation to a database error and sorts constraint violations into their own
/// variants, which callers may want to handle (a duplicate ply on resume is a caller bug, a lock
/// timeout is not).
pub(crate) trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T> Context<T> for DbResult<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|e| {
            let what = what();
            match e.violation() {
                Some(Violation::Unique) => StoreError::Duplicate { what },
                Some(Violation::ForeignKey) => StoreError::MissingReference { what },
                None => StoreError::Database {
                    what,
                    cause: BackendError(e),
                },
            }
        })
    }
}

impl<T> Context<T> for rusqlite::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(DbError::Sqlite).context(what)
    }
}

/// A `u64` as SQLite's `i64`. Saturates: the counts, tokens and milliseconds stored never approach
/// 2^63, and a clamped value is better than refusing to record a paid call.
pub(crate) fn sql_u64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Reads a column written by [`sql_u64`] (nullable).
pub(crate) fn get_opt_u64(row: &Row<'_>, index: usize) -> DbResult<Option<u64>> {
    row.get(index)
}

/// Reads a column written by [`sql_u64`], or a non-negative count.
pub(crate) fn get_u64(row: &Row<'_>, index: usize) -> DbResult<u64> {
    row.get(index)
}

/// A conversion error for a column whose stored text this build does not understand.
pub(crate) fn bad_column(index: usize, message: String) -> DbError {
    DbError::Column { index, message }
}

#[cfg(any(test, feature = "test-support"))]
pub mod testing;
#[cfg(test)]
mod tests;
