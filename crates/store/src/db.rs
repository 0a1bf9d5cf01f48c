//! The SQL seam between the store's queries and its two backends, SQLite (rusqlite) and PostgreSQL
//! (the `postgres` crate).
//!
//! Every query of the store is written once, in the SQL both engines understand, against [`Conn`]:
//! `?N` placeholders, `ON CONFLICT` upserts, `RETURNING`, and conditions counted as
//! `SUM(CASE WHEN a = b THEN 1 ELSE 0 END)` (PostgreSQL has no `SUM` of booleans, and arena
//! defines no aggregate of its own in a database others may share). What
//! cannot be written once is translated here for PostgreSQL: `?N` becomes `$N`, and SQLite's
//! `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')` becomes the same text from `now()`. Values cross the seam
//! as [`SqlValue`], SQLite's five storage classes, which both sides convert to and from; a
//! PostgreSQL column of another type (a `NUMERIC` sum, a `BOOLEAN` comparison) is read as the
//! nearest of the five.
//!
//! The `postgres` client blocks on a runtime of its own, which tokio forbids inside an async task,
//! so each PostgreSQL round trip runs through [`off_runtime`]. This module is hand-written: neither
//! crate offers one API over both engines (`sqlx` does, but is async and needs a database or
//! offline metadata at build time, which rules it out for a store opened at run time).

use std::{
    cell::RefCell,
    collections::HashMap,
    error::Error as StdError,
    fmt,
    sync::{Mutex, MutexGuard, PoisonError},
};

use postgres::types::{FromSql, IsNull, Kind, ToSql, Type, to_sql_checked};
use rusqlite::types::{ToSqlOutput, ValueRef};

/// A value as it crosses the seam: one of SQLite's storage classes, borrowed where it can be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SqlValue<'a> {
    /// SQL `NULL`.
    Null,
    /// A 64-bit integer (also booleans, as 0 and 1).
    Integer(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// What a query's parameters are made of.
pub(crate) trait Param: Sync {
    /// The value to bind.
    fn sql_value(&self) -> SqlValue<'_>;
}

/// Parameters of a query, in `?1`, `?2`, ... order.
pub(crate) type Params<'p> = &'p [&'p dyn Param];

/// Builds [`Params`] from a list of expressions, like rusqlite's macro of the same name.
macro_rules! params {
    () => {
        &[] as $crate::db::Params<'_>
    };
    ($($param:expr),+ $(,)?) => {
        &[$(&$param as &dyn $crate::db::Param),+] as $crate::db::Params<'_>
    };
}
pub(crate) use params;

impl Param for SqlValue<'_> {
    fn sql_value(&self) -> SqlValue<'_> {
        *self
    }
}

impl Param for i64 {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Integer(*self)
    }
}

macro_rules! lossless_integer_param {
    ($($t:ty),*) => {$(
        impl Param for $t {
            fn sql_value(&self) -> SqlValue<'_> {
                SqlValue::Integer(i64::from(*self))
            }
        }
    )*};
}
lossless_integer_param!(i32, u32, u16, u8, i16, i8, bool);

impl Param for usize {
    fn sql_value(&self) -> SqlValue<'_> {
        // Saturates, like `sql_u64`: no stored count comes near 2^63.
        SqlValue::Integer(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl Param for f64 {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Real(*self)
    }
}

impl Param for f32 {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Real(f64::from(*self))
    }
}

impl Param for str {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Text(self)
    }
}

impl Param for String {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Text(self)
    }
}

impl Param for [u8] {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Blob(self)
    }
}

impl Param for Vec<u8> {
    fn sql_value(&self) -> SqlValue<'_> {
        SqlValue::Blob(self)
    }
}

impl<T: Param + ?Sized> Param for &T {
    fn sql_value(&self) -> SqlValue<'_> {
        (**self).sql_value()
    }
}

impl<T: Param> Param for Option<T> {
    fn sql_value(&self) -> SqlValue<'_> {
        self.as_ref().map_or(SqlValue::Null, Param::sql_value)
    }
}

/// A type a column can be read as.
pub(crate) trait FromColumn: Sized {
    /// Converts the column's value, or says why it cannot.
    fn from_column(value: SqlValue<'_>) -> Result<Self, String>;
}

fn mismatch(wanted: &str, value: SqlValue<'_>) -> String {
    let found = match value {
        SqlValue::Null => "NULL",
        SqlValue::Integer(_) => "an integer",
        SqlValue::Real(_) => "a real",
        SqlValue::Text(_) => "text",
        SqlValue::Blob(_) => "a blob",
    };
    format!("expected {wanted}, found {found}")
}

impl FromColumn for i64 {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        match value {
            SqlValue::Integer(i) => Ok(i),
            other => Err(mismatch("an integer", other)),
        }
    }
}

macro_rules! narrow_integer_column {
    ($($t:ty),*) => {$(
        impl FromColumn for $t {
            fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
                let wide = i64::from_column(value)?;
                <$t>::try_from(wide)
                    .map_err(|_| format!("integer {wide} is out of range for {}", stringify!($t)))
            }
        }
    )*};
}
narrow_integer_column!(i32, u32, u16, u8, u64, usize);

impl FromColumn for bool {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        Ok(i64::from_column(value)? != 0)
    }
}

impl FromColumn for f64 {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        match value {
            SqlValue::Real(f) => Ok(f),
            // SQLite returns an integer for a REAL column that holds a whole number only when the
            // column has no REAL affinity (an expression); PostgreSQL for a whole NUMERIC.
            #[allow(clippy::cast_precision_loss)]
            SqlValue::Integer(i) => Ok(i as f64),
            other => Err(mismatch("a number", other)),
        }
    }
}

impl FromColumn for String {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        match value {
            SqlValue::Text(s) => Ok(s.to_owned()),
            other => Err(mismatch("text", other)),
        }
    }
}

impl FromColumn for Vec<u8> {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        match value {
            SqlValue::Blob(b) => Ok(b.to_vec()),
            SqlValue::Text(s) => Ok(s.as_bytes().to_vec()),
            other => Err(mismatch("a blob", other)),
        }
    }
}

impl<T: FromColumn> FromColumn for Option<T> {
    fn from_column(value: SqlValue<'_>) -> Result<Self, String> {
        match value {
            SqlValue::Null => Ok(None),
            other => T::from_column(other).map(Some),
        }
    }
}

/// One row of a result, from either backend.
pub(crate) enum Row<'r> {
    /// A row of SQLite.
    Sqlite(&'r rusqlite::Row<'r>),
    /// A row of PostgreSQL.
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// Reads column `index` (from 0) as `T`.
    ///
    /// # Errors
    ///
    /// [`DbError::Column`] if the column does not exist or holds a value `T` cannot take.
    pub(crate) fn get<I: ColumnIndex, T: FromColumn>(&self, index: I) -> DbResult<T> {
        let index = index.position();
        let converted = match self {
            Row::Sqlite(row) => {
                let value = row.get_ref(index).map_err(DbError::Sqlite)?;
                T::from_column(sqlite_value(value))
            }
            Row::Postgres(row) => {
                let value: PgValue<'_> = row.try_get(index).map_err(|e| DbError::Column {
                    index,
                    message: e.to_string(),
                })?;
                T::from_column(value.0)
            }
        };
        converted.map_err(|message| DbError::Column { index, message })
    }
}

impl<'r> Row<'r> {
    /// The value of column `index` (from 0) as it crosses the seam, whatever its type: what a
    /// copy of whole rows binds again and a checksum hashes.
    ///
    /// # Errors
    ///
    /// [`DbError::Column`] if the column does not exist or PostgreSQL cannot send it as one of
    /// the five storage classes.
    pub(crate) fn value(&self, index: usize) -> DbResult<SqlValue<'_>> {
        match self {
            Row::Sqlite(row) => row
                .get_ref(index)
                .map(sqlite_value)
                .map_err(DbError::Sqlite),
            Row::Postgres(row) => row
                .try_get::<_, PgValue<'_>>(index)
                .map(|v| v.0)
                .map_err(|e| DbError::Column {
                    index,
                    message: e.to_string(),
                }),
        }
    }
}

/// What names a column: its position, from 0 (the store never reads columns by name).
pub(crate) trait ColumnIndex {
    /// The position.
    fn position(self) -> usize;
}

impl ColumnIndex for usize {
    fn position(self) -> usize {
        self
    }
}

fn sqlite_value(value: ValueRef<'_>) -> SqlValue<'_> {
    match value {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Integer(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        // Text that is not UTF-8 can only come from another program's writes; read it lossily
        // rather than fail (the store writes Rust strings only).
        ValueRef::Text(t) => std::str::from_utf8(t).map_or(SqlValue::Blob(t), SqlValue::Text),
        ValueRef::Blob(b) => SqlValue::Blob(b),
    }
}

impl rusqlite::ToSql for SqlValue<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(i),
            SqlValue::Real(f) => ValueRef::Real(f),
            SqlValue::Text(s) => ValueRef::Text(s.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// Binds a [`SqlValue`] to whatever type PostgreSQL inferred for the parameter, the way SQLite
/// would store it in a column of that type.
impl ToSql for SqlValue<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match *self {
            SqlValue::Null => Ok(IsNull::Yes),
            SqlValue::Integer(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
                #[allow(clippy::cast_precision_loss)]
                Type::FLOAT8 => (i as f64).to_sql(ty, out),
                Type::BOOL => (i != 0).to_sql(ty, out),
                _ if is_text(ty) => i.to_string().to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind an integer to a `{ty}` parameter").into()),
            },
            SqlValue::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                #[allow(clippy::cast_possible_truncation)]
                Type::FLOAT4 => (f as f32).to_sql(ty, out),
                _ if is_text(ty) => f.to_string().to_sql(&Type::TEXT, out),
                _ => Err(format!("cannot bind a real to a `{ty}` parameter").into()),
            },
            SqlValue::Text(s) if is_text(ty) => s.to_sql(&Type::TEXT, out),
            SqlValue::Text(_) => Err(format!("cannot bind text to a `{ty}` parameter").into()),
            SqlValue::Blob(b) if *ty == Type::BYTEA => b.to_sql(ty, out),
            SqlValue::Blob(_) => Err(format!("cannot bind bytes to a `{ty}` parameter").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn is_text(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN
    ) || matches!(ty.kind(), Kind::Domain(inner) if is_text(inner))
}

/// A PostgreSQL column read as the nearest SQLite storage class.
struct PgValue<'a>(SqlValue<'a>);

impl<'a> FromSql<'a> for PgValue<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        let value = match *ty {
            Type::INT8 => SqlValue::Integer(i64::from_sql(ty, raw)?),
            Type::INT4 => SqlValue::Integer(i64::from(i32::from_sql(ty, raw)?)),
            Type::INT2 => SqlValue::Integer(i64::from(i16::from_sql(ty, raw)?)),
            Type::BOOL => SqlValue::Integer(i64::from(bool::from_sql(ty, raw)?)),
            Type::FLOAT8 => SqlValue::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => SqlValue::Real(f64::from(f32::from_sql(ty, raw)?)),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => SqlValue::Blob(raw),
            _ => SqlValue::Text(<&str>::from_sql(&Type::TEXT, raw)?),
        };
        Ok(PgValue(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(PgValue(SqlValue::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// Decodes PostgreSQL's binary `NUMERIC` (what `SUM` of integers and `AVG` return): base-10000
/// digits with a weight, a sign and a display scale. A whole number in range is an integer, as
/// SQLite's `SUM` of integers is; anything else a double, as SQLite's `AVG` is.
fn numeric(raw: &[u8]) -> Result<SqlValue<'static>, Box<dyn StdError + Sync + Send>> {
    let word = |i: usize| -> Result<u16, Box<dyn StdError + Sync + Send>> {
        raw.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "truncated NUMERIC".into())
    };
    let digits = usize::from(word(0)?);
    let weight = i32::from(word(1)?.cast_signed());
    let sign = word(2)?;
    let scale = word(3)?;
    if sign == 0xC000 {
        return Ok(SqlValue::Real(f64::NAN));
    }
    let negative = sign == 0x4000;
    let mut whole: Option<i64> = Some(0);
    let mut value = 0.0_f64;
    for i in 0..digits {
        let digit = word(4 + i)?;
        let power = weight - i32::try_from(i)?;
        value += f64::from(digit) * 10_000_f64.powi(power);
        whole = match whole {
            Some(w) if power >= 0 => u32::try_from(power)
                .ok()
                .and_then(|p| 10_000_i64.checked_pow(p))
                .and_then(|m| i64::from(digit).checked_mul(m))
                .and_then(|d| w.checked_add(d)),
            Some(w) if digit == 0 => Some(w),
            _ => None,
        };
    }
    Ok(match whole {
        Some(w) if scale == 0 => SqlValue::Integer(if negative { -w } else { w }),
        _ => SqlValue::Real(if negative { -value } else { value }),
    })
}

/// Runs a blocking PostgreSQL round trip from wherever the store is called: inside a tokio
/// worker (handed off with `block_in_place`), on a current-thread runtime (on a scoped thread
/// of its own, since that runtime cannot be left), or outside any runtime (directly).
fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|s| {
            s.spawn(f)
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }),
        Err(_) => f(),
    }
}

/// An error of either backend, or a column that could not be read.
#[derive(Debug)]
pub(crate) enum DbError {
    /// SQLite said no.
    Sqlite(rusqlite::Error),
    /// PostgreSQL said no (or the connection failed).
    Postgres(postgres::Error),
    /// A query that must return a row returned none.
    NoRows,
    /// A column could not be read as the type asked for.
    Column {
        /// The column, from 0.
        index: usize,
        /// Why.
        message: String,
    },
}

/// The result of a query.
pub(crate) type DbResult<T> = Result<T, DbError>;

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Sqlite(e) => e.fmt(f),
            DbError::Postgres(e) => match e.as_db_error() {
                // The server's own message, with its detail, rather than the crate's "db error".
                Some(db) => match db.detail() {
                    Some(detail) => write!(f, "{}: {detail}", db.message()),
                    None => f.write_str(db.message()),
                },
                // The crate's own message ("error performing TLS handshake") names the step;
                // its source says what went wrong there.
                None => match e.source() {
                    Some(cause) => write!(f, "{e}: {cause}"),
                    None => e.fmt(f),
                },
            },
            DbError::NoRows => f.write_str("the query returned no rows"),
            DbError::Column { index, message } => write!(f, "column {index}: {message}"),
        }
    }
}

impl StdError for DbError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            DbError::Sqlite(e) => e.source(),
            DbError::Postgres(e) => e.source(),
            DbError::NoRows | DbError::Column { .. } => None,
        }
    }
}

/// What kind of constraint a failed write broke, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    /// A unique or primary key.
    Unique,
    /// A foreign key.
    ForeignKey,
}

impl DbError {
    /// The constraint the failed statement violated, on either backend.
    pub(crate) fn violation(&self) -> Option<Violation> {
        match self {
            DbError::Sqlite(e) => match e.sqlite_error().map(|f| f.extended_code) {
                Some(
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
                ) => Some(Violation::Unique),
                Some(rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => Some(Violation::ForeignKey),
                _ => None,
            },
            DbError::Postgres(e) => match e.code() {
                Some(c) if *c == postgres::error::SqlState::UNIQUE_VIOLATION => {
                    Some(Violation::Unique)
                }
                Some(c) if *c == postgres::error::SqlState::FOREIGN_KEY_VIOLATION => {
                    Some(Violation::ForeignKey)
                }
                _ => None,
            },
            DbError::NoRows | DbError::Column { .. } => None,
        }
    }
}

/// `query_row(...).optional()`: no row is `None` rather than an error.
pub(crate) trait OptionalExtension<T> {
    /// Turns [`DbError::NoRows`] into `Ok(None)`.
    fn optional(self) -> DbResult<Option<T>>;
}

impl<T> OptionalExtension<T> for DbResult<T> {
    fn optional(self) -> DbResult<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(DbError::NoRows) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Which SQL a query may use where the two engines differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A PostgreSQL connection with the statements it has prepared, by their SQLite-dialect text.
pub(crate) struct PgSession {
    /// Always `Some` until dropped (see the `Drop` impl).
    client: Option<postgres::Client>,
    statements: HashMap<String, postgres::Statement>,
}

impl fmt::Debug for PgSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgSession")
            .field("statements", &self.statements.len())
            .finish_non_exhaustive()
    }
}

impl PgSession {
    /// Wraps a connected client.
    pub(crate) fn new(client: postgres::Client) -> PgSession {
        PgSession {
            client: Some(client),
            statements: HashMap::new(),
        }
    }

    fn client(&mut self) -> &mut postgres::Client {
        self.client
            .as_mut()
            .expect("a PgSession has its client until it is dropped")
    }

    fn prepared(&mut self, sql: &str) -> DbResult<postgres::Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let translated = postgres_sql(sql);
        let client = self.client();
        let statement = off_runtime(|| client.prepare(&translated)).map_err(DbError::Postgres)?;
        // A store prepares a bounded set of statements (its queries are constants, some with a
        // fixed list spliced in), so the cache needs no eviction.
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    fn query(&mut self, sql: &str, params: Params<'_>) -> DbResult<Vec<postgres::Row>> {
        let statement = self.prepared(sql)?;
        let values: Vec<SqlValue<'_>> = params.iter().map(|p| p.sql_value()).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let client = self.client();
        off_runtime(|| client.query(&statement, &refs)).map_err(DbError::Postgres)
    }

    fn execute(&mut self, sql: &str, params: Params<'_>) -> DbResult<usize> {
        let statement = self.prepared(sql)?;
        let values: Vec<SqlValue<'_>> = params.iter().map(|p| p.sql_value()).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let client = self.client();
        let changed =
            off_runtime(|| client.execute(&statement, &refs)).map_err(DbError::Postgres)?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    pub(crate) fn batch(&mut self, sql: &str) -> DbResult<()> {
        let client = self.client();
        off_runtime(|| client.batch_execute(sql)).map_err(DbError::Postgres)
    }
}

impl Drop for PgSession {
    fn drop(&mut self) {
        // Closing the connection blocks on the client's runtime too.
        if let Some(client) = self.client.take() {
            off_runtime(move || drop(client));
        }
    }
}

/// The backend a [`crate::Store`] holds: SQLite's one connection behind a mutex, or a few
/// PostgreSQL connections, each behind its own.
#[derive(Debug)]
pub(crate) enum Backend {
    /// A SQLite file or in-memory database. One connection: SQLite serialises writers anyway,
    /// and its queries cost microseconds. The game loop's writes share its commits
    /// ([`super::group`]).
    Sqlite(std::sync::Arc<super::group::Sqlite>),
    /// A PostgreSQL server.
    Postgres(PgPool),
}

/// A PostgreSQL store's connections. Each query waits a network round trip, so one connection
/// would cap a worker's running games at one round trip at a time; the pool opens more, up to
/// its size, when every open one is busy (a test's store never needs a second). Every committed
/// write is visible to the next query on any of them (read committed).
pub(crate) struct PgPool {
    slots: Vec<std::sync::OnceLock<Option<Mutex<PgSession>>>>,
    next: std::sync::atomic::AtomicUsize,
    /// Opens one more connection (the URL, password included, lives only in this closure).
    connect: Box<dyn Fn() -> Option<PgSession> + Send + Sync>,
}

impl fmt::Debug for PgPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let open = self
            .slots
            .iter()
            .filter(|s| s.get().is_some_and(Option::is_some))
            .count();
        f.debug_struct("PgPool")
            .field("open", &open)
            .field("size", &self.slots.len())
            .finish_non_exhaustive()
    }
}

impl PgPool {
    /// A pool of at most `size` connections that starts with `first` and opens the others
    /// with `connect` when needed (a connection that fails to open is not retried: the pool
    /// makes do with those it has).
    pub(crate) fn new(
        first: PgSession,
        size: usize,
        connect: impl Fn() -> Option<PgSession> + Send + Sync + 'static,
    ) -> PgPool {
        let slots: Vec<_> = (0..size.max(1))
            .map(|_| std::sync::OnceLock::new())
            .collect();
        let _ = slots[0].set(Some(Mutex::new(first)));
        PgPool {
            slots,
            next: std::sync::atomic::AtomicUsize::new(0),
            connect: Box::new(connect),
        }
    }

    /// A free connection, a new one when all are busy and the pool may grow, or else the next
    /// one in turn once it is free.
    fn lock(&self) -> MutexGuard<'_, PgSession> {
        let open = || {
            self.slots
                .iter()
                .filter_map(|s| s.get().and_then(Option::as_ref))
        };
        for session in open() {
            match session.try_lock() {
                Ok(guard) => return guard,
                Err(std::sync::TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
        }
        if let Some(slot) = self.slots.iter().find(|s| s.get().is_none())
            && let Some(session) = slot.get_or_init(|| (self.connect)().map(Mutex::new))
            && let Ok(guard) = session.try_lock()
        {
            return guard;
        }
        let sessions: Vec<_> = open().collect();
        let turn = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % sessions.len();
        sessions[turn]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Backend {
    /// Locks a connection. A panic in another thread cannot leave a transaction open (dropping a
    /// [`Tx`] rolls it back), so a poisoned lock still guards a consistent connection.
    pub(crate) fn lock(&self) -> Conn<'_> {
        match self {
            Backend::Sqlite(s) => {
                Conn::Sqlite(s.conn.lock().unwrap_or_else(PoisonError::into_inner))
            }
            Backend::Postgres(pool) => Conn::Postgres(RefCell::new(pool.lock())),
        }
    }
}

/// A locked connection: what every store query runs on.
pub(crate) enum Conn<'s> {
    /// SQLite.
    Sqlite(MutexGuard<'s, rusqlite::Connection>),
    /// PostgreSQL. The `RefCell` lets queries take `&self`, as rusqlite's do, although the
    /// client needs `&mut`; no query is re-entrant, so the borrow never fails.
    Postgres(RefCell<MutexGuard<'s, PgSession>>),
}

impl<'s> Conn<'s> {
    /// The engine behind this connection.
    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs a statement and returns the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: Params<'_>) -> DbResult<usize> {
        match self {
            Conn::Sqlite(c) => {
                let mut statement = c.prepare_cached(sql).map_err(DbError::Sqlite)?;
                bind(&mut statement, params)?;
                statement.raw_execute().map_err(DbError::Sqlite)
            }
            Conn::Postgres(s) => s.borrow_mut().execute(sql, params),
        }
    }

    /// Runs a plain `INSERT` of one row into a table whose `id` column is its `INTEGER PRIMARY KEY`
    /// (written without a `RETURNING` clause) and returns the new row's `id`.
    ///
    /// On PostgreSQL the query gets `RETURNING id`. SQLite reads the id from the connection
    /// instead (`last_insert_rowid`, which is the `id` of such a table, and which no other
    /// statement can change in between: the connection is locked): SQLite's `RETURNING` buffers
    /// its rows in a temporary b-tree that is opened, filled and closed on every insert, a fifth
    /// of the cost of storing a call.
    pub(crate) fn insert_returning_id(&self, sql: &str, params: Params<'_>) -> DbResult<i64> {
        match self {
            Conn::Sqlite(c) => {
                let mut statement = c.prepare_cached(sql).map_err(DbError::Sqlite)?;
                bind(&mut statement, params)?;
                statement.raw_execute().map_err(DbError::Sqlite)?;
                Ok(c.last_insert_rowid())
            }
            Conn::Postgres(_) => {
                self.query_row(&format!("{sql} RETURNING id"), params, |r| r.get(0))
            }
        }
    }

    /// Runs statements separated by `;`, without parameters.
    pub(crate) fn execute_batch(&self, sql: &str) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => c.execute_batch(sql).map_err(DbError::Sqlite),
            Conn::Postgres(s) => s.borrow_mut().batch(sql),
        }
    }

    /// Runs a query and maps its first row; [`DbError::NoRows`] if there is none.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: Params<'_>,
        map: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<T> {
        let mut map = Some(map);
        let mut found = None;
        self.for_each_row(sql, params, |row| {
            if let Some(map) = map.take() {
                found = Some(map(row)?);
            }
            Ok(false)
        })?;
        found.ok_or(DbError::NoRows)
    }

    /// Runs a query and hands each row to `f` until it returns `Ok(false)` or an error. SQLite
    /// streams the rows; PostgreSQL's come in one batch.
    pub(crate) fn for_each_row(
        &self,
        sql: &str,
        params: Params<'_>,
        mut f: impl FnMut(&Row<'_>) -> DbResult<bool>,
    ) -> DbResult<()> {
        match self {
            Conn::Sqlite(c) => {
                let mut statement = c.prepare_cached(sql).map_err(DbError::Sqlite)?;
                bind(&mut statement, params)?;
                let mut rows = statement.raw_query();
                while let Some(row) = rows.next().map_err(DbError::Sqlite)? {
                    if !f(&Row::Sqlite(row))? {
                        break;
                    }
                }
                Ok(())
            }
            Conn::Postgres(s) => {
                let rows = s.borrow_mut().query(sql, params)?;
                for row in &rows {
                    if !f(&Row::Postgres(row))? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    /// Begins a transaction that takes the write lock at once (SQLite's `BEGIN IMMEDIATE`, so a
    /// read-then-write transaction never meets a stale snapshot). It rolls back when dropped
    /// uncommitted.
    ///
    /// On PostgreSQL the same exclusion comes from one advisory lock that every store
    /// transaction takes first: the store's read-then-write transactions (scheduling a round,
    /// saving scripts) were written for SQLite's one writer at a time, and several workers must
    /// not interleave them. Single statements (a ply, a call, a claim) take no such lock.
    pub(crate) fn transaction(&self) -> DbResult<Tx<'_, 's>> {
        self.begin(true)
    }

    /// Begins a transaction for writes that read nothing first (a ply and its call's verdict):
    /// atomic, and one commit for all of them. On SQLite it is [`Conn::transaction`]'s; on
    /// PostgreSQL it takes no advisory lock, as single statements take none: there is no read
    /// whose snapshot another worker could make stale.
    pub(crate) fn write_transaction(&self) -> DbResult<Tx<'_, 's>> {
        self.begin(false)
    }

    fn begin(&self, exclusive: bool) -> DbResult<Tx<'_, 's>> {
        let begin = match (self.dialect(), exclusive) {
            (Dialect::Sqlite, _) => "BEGIN IMMEDIATE",
            (Dialect::Postgres, true) => "BEGIN; SELECT pg_advisory_xact_lock(1095912001)",
            (Dialect::Postgres, false) => "BEGIN",
        };
        self.execute_batch(begin)?;
        Ok(Tx {
            conn: self,
            done: false,
        })
    }
}

/// How many rows a PostgreSQL [`Reader`] fetches per round trip: enough to amortise the round
/// trip, few enough that a table of long replies never sits in memory whole.
const FETCH_ROWS: i32 = 512;

impl Conn<'_> {
    /// Runs `f` with a [`Reader`] whose queries all see one consistent snapshot of the database
    /// (SQLite: one read transaction; PostgreSQL: one `REPEATABLE READ READ ONLY` transaction),
    /// then ends the snapshot. The outer result is the snapshot's own (beginning or ending it
    /// failed); the inner one is `f`'s. Not for use inside a [`Tx`] on the same connection.
    pub(crate) fn read_snapshot<T, E>(
        &self,
        f: impl FnOnce(&mut Reader<'_>) -> Result<T, E>,
    ) -> DbResult<Result<T, E>> {
        match self {
            Conn::Sqlite(c) => {
                c.execute_batch("BEGIN DEFERRED").map_err(DbError::Sqlite)?;
                let result = f(&mut Reader::Sqlite(c));
                // Nothing was written: ending the read transaction either way releases the
                // snapshot. Should ending it fail too, `f`'s own failure says more.
                match c.execute_batch("COMMIT") {
                    Err(e) if result.is_ok() => Err(DbError::Sqlite(e)),
                    _ => Ok(result),
                }
            }
            Conn::Postgres(s) => {
                let mut session = s.borrow_mut();
                let client = session.client();
                let tx = off_runtime(|| {
                    client
                        .build_transaction()
                        .isolation_level(postgres::IsolationLevel::RepeatableRead)
                        .read_only(true)
                        .start()
                })
                .map_err(DbError::Postgres)?;
                let mut reader = Reader::Postgres(PgReader { tx: Some(tx) });
                let result = f(&mut reader);
                if let Reader::Postgres(mut pg) = reader
                    && let Some(tx) = pg.tx.take()
                {
                    off_runtime(move || tx.commit()).map_err(DbError::Postgres)?;
                }
                Ok(result)
            }
        }
    }
}

/// Reads under one snapshot, from [`Conn::read_snapshot`].
pub(crate) enum Reader<'a> {
    /// SQLite, inside a read transaction.
    Sqlite(&'a rusqlite::Connection),
    /// PostgreSQL, inside a read-only repeatable-read transaction.
    Postgres(PgReader<'a>),
}

/// The PostgreSQL transaction behind a [`Reader`]. Always `Some` until the snapshot ends.
pub(crate) struct PgReader<'a> {
    tx: Option<postgres::Transaction<'a>>,
}

impl Drop for PgReader<'_> {
    fn drop(&mut self) {
        // Rolling back (what dropping a transaction does) blocks on the client's runtime.
        if let Some(tx) = self.tx.take() {
            off_runtime(move || drop(tx));
        }
    }
}

impl Reader<'_> {
    /// Runs a query without parameters and hands its rows to `f` in order, holding one batch of
    /// rows at a time (SQLite steps through them; PostgreSQL fetches [`FETCH_ROWS`] at a time
    /// from a portal), until the rows run out or `f` fails. The outer result is the query's, the
    /// inner one `f`'s first failure.
    pub(crate) fn stream<E>(
        &mut self,
        sql: &str,
        f: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> DbResult<Result<(), E>> {
        self.stream_with(sql, params![], f)
    }

    /// [`Reader::stream`] of a query with parameters.
    pub(crate) fn stream_with<E>(
        &mut self,
        sql: &str,
        params: Params<'_>,
        mut f: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> DbResult<Result<(), E>> {
        match self {
            Reader::Sqlite(c) => {
                let mut statement = c.prepare(sql).map_err(DbError::Sqlite)?;
                bind(&mut statement, params)?;
                let mut rows = statement.raw_query();
                while let Some(row) = rows.next().map_err(DbError::Sqlite)? {
                    if let Err(e) = f(&Row::Sqlite(row)) {
                        return Ok(Err(e));
                    }
                }
                Ok(Ok(()))
            }
            Reader::Postgres(pg) => {
                let tx = pg
                    .tx
                    .as_mut()
                    .expect("a reader has its transaction until the snapshot ends");
                let translated = postgres_sql(sql);
                let values: Vec<SqlValue<'_>> = params.iter().map(|p| p.sql_value()).collect();
                let refs: Vec<&(dyn ToSql + Sync)> =
                    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
                let portal = off_runtime(|| tx.bind(translated.as_str(), &refs))
                    .map_err(DbError::Postgres)?;
                loop {
                    let rows = off_runtime(|| tx.query_portal(&portal, FETCH_ROWS))
                        .map_err(DbError::Postgres)?;
                    for row in &rows {
                        if let Err(e) = f(&Row::Postgres(row)) {
                            return Ok(Err(e));
                        }
                    }
                    if rows.len() < usize::try_from(FETCH_ROWS).unwrap_or(usize::MAX) {
                        return Ok(Ok(()));
                    }
                }
            }
        }
    }
}

impl<'s> Conn<'s> {
    /// A query to run once or many times. Both backends cache the prepared form by the query's
    /// text, so this only names the query.
    pub(crate) fn prepare_cached<'c>(&'c self, sql: &str) -> DbResult<Statement<'c, 's>> {
        Ok(Statement {
            conn: self,
            sql: sql.to_owned(),
        })
    }

    /// Same as [`Conn::prepare_cached`] (kept apart to mark queries run once, such as reports').
    pub(crate) fn prepare<'c>(&'c self, sql: &str) -> DbResult<Statement<'c, 's>> {
        self.prepare_cached(sql)
    }
}

/// A query on a connection, from [`Conn::prepare_cached`].
pub(crate) struct Statement<'c, 's> {
    conn: &'c Conn<'s>,
    sql: String,
}

impl Statement<'_, '_> {
    /// Runs the statement and returns the number of rows it changed.
    pub(crate) fn execute(&mut self, params: Params<'_>) -> DbResult<usize> {
        self.conn.execute(&self.sql, params)
    }

    /// Runs the query and maps its first row; [`DbError::NoRows`] if there is none.
    pub(crate) fn query_row<T>(
        &mut self,
        params: Params<'_>,
        map: impl FnOnce(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<T> {
        self.conn.query_row(&self.sql, params, map)
    }

    /// Runs the query and maps every row; the rows come back as an iterator of results, so that
    /// a caller can stop at the first row that fails to map.
    pub(crate) fn query_map<T>(
        &mut self,
        params: Params<'_>,
        mut map: impl FnMut(&Row<'_>) -> DbResult<T>,
    ) -> DbResult<std::vec::IntoIter<DbResult<T>>> {
        let mut rows = Vec::new();
        self.conn.for_each_row(&self.sql, params, |row| {
            rows.push(map(row));
            Ok(true)
        })?;
        Ok(rows.into_iter())
    }
}

fn bind(statement: &mut rusqlite::Statement<'_>, params: Params<'_>) -> DbResult<()> {
    for (i, param) in params.iter().enumerate() {
        statement
            .raw_bind_parameter(i + 1, param.sql_value())
            .map_err(DbError::Sqlite)?;
    }
    Ok(())
}

/// An open transaction on a [`Conn`]; it dereferences to the connection for its queries.
pub(crate) struct Tx<'c, 's> {
    conn: &'c Conn<'s>,
    done: bool,
}

impl Tx<'_, '_> {
    /// Commits the transaction.
    pub(crate) fn commit(mut self) -> DbResult<()> {
        self.done = true;
        self.conn.execute_batch("COMMIT")
    }
}

impl<'s> std::ops::Deref for Tx<'_, 's> {
    type Target = Conn<'s>;

    fn deref(&self) -> &Conn<'s> {
        self.conn
    }
}

impl Drop for Tx<'_, '_> {
    fn drop(&mut self) {
        if !self.done {
            // Best effort: if the rollback fails the connection is broken, and the next
            // statement reports it.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Rewrites a query from the store's shared dialect into PostgreSQL's: `?N` placeholders become
/// `$N`, and SQLite's millisecond UTC timestamp becomes PostgreSQL's. Quoted text is left alone.
pub(crate) fn postgres_sql(sql: &str) -> String {
    const SQLITE_NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    const POSTGRES_NOW: &str =
        r#"to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#;
    let sql = sql.replace(SQLITE_NOW, POSTGRES_NOW);
    let mut out = String::with_capacity(sql.len() + 8);
    let mut in_quote = false;
    let mut next_anonymous = 1;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_quote = !in_quote;
                out.push(c);
            }
            '?' if !in_quote => {
                out.push('$');
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    while let Some(d) = chars.next_if(char::is_ascii_digit) {
                        out.push(d);
                    }
                } else {
                    out.push_str(&next_anonymous.to_string());
                    next_anonymous += 1;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_timestamps_are_translated_outside_quotes() {
        assert_eq!(
            postgres_sql("SELECT '?1', x FROM t WHERE a = ?1 AND b = ?12"),
            "SELECT '?1', x FROM t WHERE a = $1 AND b = $12"
        );
        assert_eq!(postgres_sql("VALUES (?, ?)"), "VALUES ($1, $2)");
        assert!(
            postgres_sql("SET t = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')")
                .starts_with("SET t = to_char(clock_timestamp()")
        );
    }

    #[test]
    fn numeric_sums_read_as_integers_and_averages_as_reals() {
        // 1234567 = 123 * 10000^1 + 4567, weight 1, scale 0.
        let whole = [0, 2, 0, 1, 0, 0, 0, 0, 0, 123, 0x11, 0xD7];
        assert_eq!(numeric(&whole).unwrap(), SqlValue::Integer(1_234_567));
        // -2.5 = 2 * 10000^0 + 5000 * 10000^-1, weight 0, negative, scale 1.
        let half = [0, 2, 0, 0, 0x40, 0, 0, 1, 0, 2, 0x13, 0x88];
        assert_eq!(numeric(&half).unwrap(), SqlValue::Real(-2.5));
        let zero = [0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(numeric(&zero).unwrap(), SqlValue::Integer(0));
    }

    #[test]
    fn columns_convert_like_sqlite_and_refuse_what_does_not_fit() {
        assert_eq!(u32::from_column(SqlValue::Integer(7)), Ok(7));
        assert!(u32::from_column(SqlValue::Integer(-1)).is_err());
        assert_eq!(f64::from_column(SqlValue::Integer(3)), Ok(3.0));
        assert_eq!(Option::<String>::from_column(SqlValue::Null), Ok(None));
        assert!(String::from_column(SqlValue::Integer(1)).is_err());
        assert_eq!(bool::from_column(SqlValue::Integer(1)), Ok(true));
    }
}
