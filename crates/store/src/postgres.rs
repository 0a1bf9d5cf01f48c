//! The PostgreSQL side of the store: connecting, and the schema, versioned like SQLite's.
//!
//! A PostgreSQL store is arena's tables in the connection's schema (`search_path`; `public`
//! unless the URL says otherwise), marked by `arena_store`, a one-row table holding the schema
//! version. Versions count the same steps as SQLite's `user_version`: each step of
//! `migrations.rs` has its PostgreSQL side, and a new store runs them all. Creating or migrating
//! runs in one transaction under an advisory lock, so workers starting together do it once.
//!
//! Types follow SQLite's storage classes: `BIGINT` for every integer (SQLite's are 64-bit),
//! `DOUBLE PRECISION` for reals, `TEXT` for text, and the same timestamps as text (RFC 3339 UTC
//! with milliseconds), so both backends return the same values to the same queries. One helper
//! makes the shared SQL mean the same here: `arena_now()`, SQLite's timestamp, created in the
//! store's own schema under arena's own name. Nothing else is created outside arena's tables: no
//! aggregate or function that overloads a name other users of a shared database see (the shared
//! SQL counts booleans with `CASE` instead). Stores made before version 14 had a
//! `sum(boolean)` aggregate; version 14 drops it.

use std::{path::PathBuf, str::FromStr};

use super::{
    StoreError,
    db::{Conn, DbError, PgSession, params},
    migrations::MIGRATIONS,
    schema::CURRENT_VERSION,
};

/// The key of the advisory lock held while the schema is created or migrated ("ARNA").
const SCHEMA_LOCK: i64 = 0x4152_4E41;

/// The URL with its password (if any) replaced by `***`, for messages and exports.
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Whether `location` names a PostgreSQL server rather than a file.
pub(crate) fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// Connects to the server at `url` and returns the session; [`prepare`] then readies the schema.
pub(crate) fn connect(url: &str) -> Result<PgSession, StoreError> {
    let open_error = |reason: String| StoreError::Open {
        path: PathBuf::from(redacted(url)),
        reason,
    };
    let config = postgres::Config::from_str(url).map_err(|e| open_error(e.to_string()))?;
    let tls = tls().map_err(|e| open_error(format!("cannot set up TLS: {e}")))?;
    // The client starts a runtime of its own, which tokio forbids inside a caller's runtime; a
    // scoped thread of its own keeps it out.
    let client = std::thread::scope(|s| {
        s.spawn(|| config.connect(tls))
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .map_err(|e| open_error(DbError::Postgres(e).to_string()))?;
    Ok(PgSession::new(client))
}

/// A session for a store whose schema [`prepare`] has checked: read only if asked.
pub(crate) fn connect_session(url: &str, read_only: bool) -> Result<PgSession, StoreError> {
    let mut session = connect(url)?;
    if read_only {
        session
            .batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            .map_err(|e| StoreError::Open {
                path: PathBuf::from(redacted(url)),
                reason: e.to_string(),
            })?;
    }
    Ok(session)
}

/// TLS as the URL's `sslmode` asks (`prefer` by default: encrypted when the server offers it;
/// `require` refuses a server that does not; `disable`), with the certificates checked by the
/// operating system's verifier, as for the model providers' HTTPS.
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// What the connection's schema holds.
enum Found {
    /// No tables at all: a new store.
    Empty,
    /// An arena store at this version.
    Arena(i64),
    /// Tables, but not arena's.
    Foreign,
}

fn found(conn: &Conn<'_>) -> Result<Found, DbError> {
    let (marked, tables): (bool, i64) = conn.query_row(
        "SELECT to_regclass('arena_store') IS NOT NULL,
                (SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema())",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(match (marked, tables) {
        (true, _) => {
            Found::Arena(
                conn.query_row("SELECT version FROM arena_store", params![], |r| r.get(0))?,
            )
        }
        (false, 0) => Found::Empty,
        (false, _) => Found::Foreign,
    })
}

/// Checks the schema at `url` and, unless `read_only`, creates or migrates it to
/// [`CURRENT_VERSION`]. A read-only session then refuses every write.
pub(crate) fn prepare(conn: &Conn<'_>, url: &str, read_only: bool) -> Result<(), StoreError> {
    let path = PathBuf::from(redacted(url));
    let sql_error = |e: DbError| StoreError::Open {
        path: path.clone(),
        reason: e.to_string(),
    };
    let refuse = |found: &Found| match *found {
        Found::Arena(v) if v > CURRENT_VERSION => Err(StoreError::NewerSchema {
            path: path.clone(),
            found: v,
            supported: CURRENT_VERSION,
        }),
        Found::Foreign => Err(StoreError::NotAStore {
            path: path.clone(),
            reason: "its schema holds tables that arena did not create (name an empty database, \
                     or another schema with `?options=-csearch_path%3DNAME`)"
                .to_owned(),
        }),
        _ => Ok(()),
    };
    let before = found(conn).map_err(sql_error)?;
    refuse(&before)?;
    if read_only {
        return match before {
            Found::Arena(v) if v == CURRENT_VERSION => conn
                .execute_batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(sql_error),
            Found::Empty => Err(StoreError::NotAStore {
                path,
                reason: "it is empty".to_owned(),
            }),
            _ => Err(StoreError::Open {
                path,
                reason: format!(
                    "its schema is older than {CURRENT_VERSION}: open it once with a writing command (e.g. `arena leaderboard`) to migrate it"
                ),
            }),
        };
    }
    if matches!(before, Found::Arena(v) if v == CURRENT_VERSION) {
        return Ok(());
    }
    let tx = conn.transaction().map_err(sql_error)?;
    tx.query_row(
        "SELECT pg_advisory_xact_lock(?1)",
        params![SCHEMA_LOCK],
        |_| Ok(()),
    )
    .map_err(sql_error)?;
    // Another worker may have created or migrated it while this one waited for the lock.
    let now = found(&tx).map_err(sql_error)?;
    refuse(&now)?;
    // An empty schema starts at 0: step 1 makes the `arena_store` marker.
    let mut version = match now {
        Found::Arena(v) => v,
        _ => 0,
    };
    while version < CURRENT_VERSION {
        let to = version + 1;
        let step = &MIGRATIONS[usize::try_from(version).unwrap_or(usize::MAX)];
        tx.execute_batch(step.postgres)
            .and_then(|()| tx.execute("UPDATE arena_store SET version = ?1", params![to]))
            .map_err(|e| StoreError::Migrate {
                path: path.clone(),
                version: to,
                cause: super::BackendError(e),
            })?;
        version = to;
    }
    tx.commit().map_err(sql_error)
}
