//! Copying a whole store into an empty one, across backends, and checking the copy
//! (`arena migrate`).
//!
//! Nothing here names a table or a column: both sides describe their schema at run time (SQLite
//! from `sqlite_schema` and `pragma_table_info`, PostgreSQL from `information_schema` and
//! `pg_constraint` in `current_schema()`), so a new schema version needs no change here. Tables
//! are copied parents first (an order their foreign keys give), each in primary-key order, which
//! also puts every row after the earlier rows of its own table it may refer to (a replay after
//! its void game, a reused call after the original: the store only ever refers back). The
//! destination is written in one transaction, so a copy that fails leaves it as empty as it was;
//! the source is read under one snapshot, so a store being written while it is copied still gives
//! a consistent copy (of the moment the copy began).
//!
//! The check reads both sides back after the commit and hashes every table (SHA-256, rows in
//! primary-key order) over a canonical form of each value that does not depend on the backend:
//! integers as 8 bytes, reals by their exact bits, text and blobs by their length and bytes, NULL
//! as its own tag (never equal to `''` or 0). Text keys are ordered byte-wise on both sides
//! (PostgreSQL's `COLLATE "C"`, SQLite's `BINARY`), so the order is the same whatever the
//! server's locale. Hand-written: no crate copies between SQLite and PostgreSQL through our seam.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use sha2::{Digest, Sha256};

use super::{
    BackendError, Store,
    db::{Conn, DbError, Dialect, Reader, Row, SqlValue, params},
};

/// Which store an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The store copied from.
    Source,
    /// The store copied into.
    Destination,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Source => "source",
            Side::Destination => "destination",
        })
    }
}

/// Why a copy or its check failed. Messages name the side and the table (and the row) concerned.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The destination holds rows: a copy never merges into a store in use.
    #[error(
        "the destination already holds rows in {}: a store is copied into a new or empty store only (nothing was written)",
        quoted(tables)
    )]
    NotEmpty {
        /// The tables that hold rows.
        tables: Vec<String>,
    },
    /// The two stores do not have the same tables and columns (they should: both are opened at
    /// the current schema version).
    #[error("the source and the destination have different schemas: {reason}")]
    SchemaMismatch {
        /// What differs.
        reason: String,
    },
    /// A query failed on one side.
    #[error("{side}: failed to {what}: {cause}")]
    Database {
        /// The side whose query failed.
        side: Side,
        /// The operation, e.g. "insert row (game_id=3, ply=7) of `plies`".
        what: String,
        /// What the database said.
        cause: BackendError,
    },
}

fn quoted(tables: &[String]) -> String {
    tables
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table's row count and checksum on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSum {
    /// How many rows it holds.
    pub rows: u64,
    /// SHA-256 over its column names and every row in primary-key order (see the module doc).
    pub sha256: [u8; 32],
}

impl TableSum {
    /// The checksum in hexadecimal.
    pub fn hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// One table of a check: its count and checksum on each side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableCheck {
    /// The table.
    pub table: String,
    /// What the source holds.
    pub source: TableSum,
    /// What the destination holds.
    pub destination: TableSum,
}

impl TableCheck {
    /// Whether both sides hold the same rows.
    pub fn matches(&self) -> bool {
        self.source == self.destination
    }
}

impl Store {
    /// Copies every table of this store, all rows with their ids, into `destination`, which must
    /// hold no rows; then checks the copy ([`Store::compare_with`]) and returns the check.
    ///
    /// The destination is written in one transaction: on any error it is left empty. On
    /// PostgreSQL, each id sequence is then set to continue after the copied ids, so the next
    /// run inserts new rows without colliding with them.
    ///
    /// # Errors
    ///
    /// [`CopyError::NotEmpty`] if the destination holds rows, [`CopyError::SchemaMismatch`] if
    /// the two stores have different tables or columns, [`CopyError::Database`] if a query fails
    /// (naming the side, the table and the row).
    pub fn copy_into(&self, destination: &Store) -> Result<Vec<TableCheck>, CopyError> {
        {
            let src = self.conn();
            let dst = destination.conn();
            let tables = describe(&src, Side::Source)?;
            let targets = describe(&dst, Side::Destination)?;
            same_schema(&tables, &targets)?;
            let order = copy_order(&tables)?;
            let tx = dst
                .transaction()
                .map_err(|e| db(Side::Destination, "begin the copy".into(), e))?;
            let mut full = Vec::new();
            for table in &targets {
                let sql = format!("SELECT EXISTS (SELECT 1 FROM {})", ident(&table.name));
                let any: bool = tx
                    .query_row(&sql, params![], |r| r.get(0))
                    .map_err(|e| db(Side::Destination, format!("read `{}`", table.name), e))?;
                if any {
                    full.push(table.name.clone());
                }
            }
            if !full.is_empty() {
                return Err(CopyError::NotEmpty { tables: full });
            }
            src.read_snapshot(|reader| {
                for &i in &order {
                    copy_table(reader, &tx, &tables[i])?;
                }
                Ok::<(), CopyError>(())
            })
            .map_err(|e| db(Side::Source, "read a snapshot".into(), e))??;
            if tx.dialect() == Dialect::Postgres {
                for table in &targets {
                    continue_sequence(&tx, table)?;
                }
            }
            tx.commit()
                .map_err(|e| db(Side::Destination, "commit the copy".into(), e))?;
        }
        self.compare_with(destination)
    }

    /// Counts and hashes every table of this store and of `other` (each side read under one
    /// snapshot), table by table in copy order: the check of [`Store::copy_into`], which may be
    /// run again at any time.
    ///
    /// # Errors
    ///
    /// [`CopyError::SchemaMismatch`] if the stores have different tables or columns,
    /// [`CopyError::Database`] if a query fails.
    pub(crate) fn compare_with(&self, other: &Store) -> Result<Vec<TableCheck>, CopyError> {
        let src = self.conn();
        let dst = other.conn();
        let tables = describe(&src, Side::Source)?;
        let targets = describe(&dst, Side::Destination)?;
        same_schema(&tables, &targets)?;
        let order = copy_order(&tables)?;
        let by_name: BTreeMap<&str, &Table> =
            targets.iter().map(|t| (t.name.as_str(), t)).collect();
        let ordered: Vec<&Table> = order.iter().map(|&i| &tables[i]).collect();
        let source = sums(&src, Side::Source, &ordered, |t| t)?;
        let destination = sums(&dst, Side::Destination, &ordered, |t| {
            by_name[t.name.as_str()]
        })?;
        Ok(ordered
            .iter()
            .zip(source.into_iter().zip(destination))
            .map(|(t, (source, destination))| TableCheck {
                table: t.name.clone(),
                source,
                destination,
            })
            .collect())
    }
}

/// A table as one backend describes it.
#[derive(Debug, Clone)]
struct Table {
    name: String,
    /// In the backend's order.
    columns: Vec<Column>,
    /// The primary key's columns, in key order (empty if the table has none).
    primary_key: Vec<String>,
    /// The other tables its foreign keys refer to.
    references: BTreeSet<String>,
    /// The column an id sequence fills (PostgreSQL identity columns; SQLite's rowids continue
    /// after the largest id by themselves).
    sequence: Option<String>,
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    /// Whether values compare as text (so key order must be made byte-wise).
    text: bool,
}

impl Table {
    fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

fn db(side: Side, what: String, cause: DbError) -> CopyError {
    CopyError::Database {
        side,
        what,
        cause: BackendError(cause),
    }
}

/// A quoted SQL identifier (the same syntax on both backends).
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Every table of the store behind `conn` but PostgreSQL's `arena_store` marker (the schema
/// version, which each side keeps for itself), by name.
fn describe(conn: &Conn<'_>, side: Side) -> Result<Vec<Table>, CopyError> {
    let names_sql = match conn.dialect() {
        Dialect::Sqlite => {
            r"SELECT name FROM sqlite_schema
              WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name"
        }
        Dialect::Postgres => {
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
               AND table_name <> 'arena_store'
             ORDER BY table_name::text COLLATE \"C\""
        }
    };
    let names: Vec<String> = conn
        .prepare(names_sql)
        .and_then(|mut s| s.query_map(params![], |r| r.get(0)))
        .and_then(Iterator::collect)
        .map_err(|e| db(side, "list the tables".to_owned(), e))?;
    names
        .into_iter()
        .map(|name| {
            describe_table(conn, &name).map_err(|e| db(side, format!("describe table `{name}`"), e))
        })
        .collect()
}

fn describe_table(conn: &Conn<'_>, name: &str) -> Result<Table, DbError> {
    let collect = |sql: &str, param: &str| -> Result<Vec<(String, String, i64)>, DbError> {
        conn.prepare(sql)?
            .query_map(params![param], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect()
    };
    match conn.dialect() {
        Dialect::Sqlite => {
            let info = collect(
                "SELECT name, type, pk FROM pragma_table_info(?1) ORDER BY cid",
                name,
            )?;
            let mut keyed: Vec<(i64, String)> = info
                .iter()
                .filter(|(_, _, pk)| *pk > 0)
                .map(|(n, _, pk)| (*pk, n.clone()))
                .collect();
            keyed.sort();
            let references = collect(
                r#"SELECT DISTINCT "table", '', 0 FROM pragma_foreign_key_list(?1)"#,
                name,
            )?;
            Ok(Table {
                name: name.to_owned(),
                columns: info
                    .into_iter()
                    .map(|(name, declared, _)| {
                        // SQLite's rule for text affinity.
                        let declared = declared.to_ascii_uppercase();
                        let text = ["CHAR", "CLOB", "TEXT"]
                            .iter()
                            .any(|t| declared.contains(t));
                        Column { name, text }
                    })
                    .collect(),
                primary_key: keyed.into_iter().map(|(_, n)| n).collect(),
                references: references.into_iter().map(|(t, _, _)| t).collect(),
                sequence: None,
            })
        }
        Dialect::Postgres => {
            let info = collect(
                "SELECT column_name::text, data_type::text,
                        CASE WHEN is_identity = 'YES' OR column_default LIKE 'nextval(%'
                             THEN 1 ELSE 0 END
                 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name::text = ?1
                 ORDER BY ordinal_position",
                name,
            )?;
            let primary_key = collect(
                "SELECT k.column_name::text, '', 0
                 FROM information_schema.table_constraints t
                 JOIN information_schema.key_column_usage k
                   ON k.constraint_schema = t.constraint_schema
                  AND k.constraint_name = t.constraint_name
                  AND k.table_name = t.table_name
                 WHERE t.table_schema = current_schema() AND t.table_name::text = ?1
                   AND t.constraint_type = 'PRIMARY KEY'
                 ORDER BY k.ordinal_position",
                name,
            )?;
            let references = collect(
                "SELECT DISTINCT r.relname::text, '', 0
                 FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid
                 WHERE c.contype = 'f' AND c.conrelid = to_regclass(?1)",
                &ident(name),
            )?;
            Ok(Table {
                name: name.to_owned(),
                sequence: info
                    .iter()
                    .find(|(_, _, serial)| *serial == 1)
                    .map(|(n, _, _)| n.clone()),
                columns: info
                    .into_iter()
                    .map(|(name, ty, _)| Column {
                        name,
                        text: matches!(ty.as_str(), "text" | "character varying" | "character"),
                    })
                    .collect(),
                primary_key: primary_key.into_iter().map(|(n, _, _)| n).collect(),
                references: references.into_iter().map(|(t, _, _)| t).collect(),
            })
        }
    }
}

/// Checks that both sides have the same tables with the same columns (in any order: copies and
/// checksums name their columns).
fn same_schema(source: &[Table], destination: &[Table]) -> Result<(), CopyError> {
    let names =
        |tables: &[Table]| -> BTreeSet<String> { tables.iter().map(|t| t.name.clone()).collect() };
    let (ours, theirs) = (names(source), names(destination));
    if let Some(t) = ours.difference(&theirs).next() {
        return Err(CopyError::SchemaMismatch {
            reason: format!("the destination has no table `{t}`"),
        });
    }
    if let Some(t) = theirs.difference(&ours).next() {
        return Err(CopyError::SchemaMismatch {
            reason: format!("the source has no table `{t}`"),
        });
    }
    for table in source {
        let other = destination
            .iter()
            .find(|t| t.name == table.name)
            .expect("the same table names");
        let columns =
            |t: &Table| -> BTreeSet<String> { t.columns.iter().map(|c| c.name.clone()).collect() };
        let (ours, theirs) = (columns(table), columns(other));
        if ours != theirs {
            let (side, column) = match ours.difference(&theirs).next() {
                Some(c) => ("destination", c),
                None => ("source", theirs.difference(&ours).next().expect("differ")),
            };
            return Err(CopyError::SchemaMismatch {
                reason: format!(
                    "the {side}'s table `{}` has no column `{column}`",
                    table.name
                ),
            });
        }
    }
    Ok(())
}

/// The tables' positions in an order where every table comes after the tables its foreign keys
/// refer to (a reference to itself aside), ties broken by name so the order is the same on both
/// backends.
fn copy_order(tables: &[Table]) -> Result<Vec<usize>, CopyError> {
    let mut placed: BTreeSet<&str> = BTreeSet::new();
    let mut order = Vec::with_capacity(tables.len());
    while order.len() < tables.len() {
        let next = tables.iter().enumerate().find(|(_, t)| {
            !placed.contains(t.name.as_str())
                && t.references
                    .iter()
                    .all(|r| *r == t.name || placed.contains(r.as_str()))
        });
        match next {
            Some((i, t)) => {
                placed.insert(&t.name);
                order.push(i);
            }
            None => {
                let stuck: Vec<String> = tables
                    .iter()
                    .filter(|t| !placed.contains(t.name.as_str()))
                    .map(|t| t.name.clone())
                    .collect();
                return Err(CopyError::SchemaMismatch {
                    reason: format!(
                        "the foreign keys of {} refer to each other in a cycle, or to a table that does not exist",
                        quoted(&stuck)
                    ),
                });
            }
        }
    }
    Ok(order)
}

/// `SELECT` the columns named of `table` as this side stores it, in primary-key order (every
/// column for a table without one), text compared byte by byte.
fn select_sql(dialect: Dialect, table: &Table, columns: &[String]) -> String {
    let key: Vec<&String> = if table.primary_key.is_empty() {
        columns.iter().collect()
    } else {
        table.primary_key.iter().collect()
    };
    let order: Vec<String> = key
        .iter()
        .map(|name| {
            let text = table.column(name).is_some_and(|c| c.text);
            match (text, dialect) {
                (false, _) => ident(name),
                (true, Dialect::Sqlite) => format!("{} COLLATE BINARY", ident(name)),
                (true, Dialect::Postgres) => format!("{} COLLATE \"C\"", ident(name)),
            }
        })
        .collect();
    format!(
        "SELECT {} FROM {} ORDER BY {}",
        columns
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", "),
        ident(&table.name),
        order.join(", ")
    )
}

fn column_names(table: &Table) -> Vec<String> {
    table.columns.iter().map(|c| c.name.clone()).collect()
}

/// Copies one table's rows from the source's snapshot into the destination's transaction.
fn copy_table(reader: &mut Reader<'_>, tx: &Conn<'_>, table: &Table) -> Result<(), CopyError> {
    let columns = column_names(table);
    let select = select_sql(reader_dialect(reader), table, &columns);
    let insert = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        ident(&table.name),
        columns
            .iter()
            .map(|c| ident(c))
            .collect::<Vec<_>>()
            .join(", "),
        (1..=columns.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let key: Vec<usize> = table
        .primary_key
        .iter()
        .filter_map(|k| columns.iter().position(|c| c == k))
        .collect();
    let mut n = 0_u64;
    reader
        .stream(&select, |row| {
            n += 1;
            let values = row_values(row, columns.len())
                .map_err(|e| db(Side::Source, format!("read row {n} of `{}`", table.name), e))?;
            let params: Vec<&dyn super::db::Param> =
                values.iter().map(|v| v as &dyn super::db::Param).collect();
            tx.execute(&insert, &params).map_err(|e| {
                db(
                    Side::Destination,
                    format!(
                        "insert row {} of `{}`",
                        row_name(&values, &columns, &key, n),
                        table.name
                    ),
                    e,
                )
            })?;
            Ok(())
        })
        .map_err(|e| db(Side::Source, format!("read `{}`", table.name), e))?
}

fn reader_dialect(reader: &Reader<'_>) -> Dialect {
    match reader {
        Reader::Sqlite(_) => Dialect::Sqlite,
        Reader::Postgres(_) => Dialect::Postgres,
    }
}

fn row_values<'r>(row: &'r Row<'_>, n: usize) -> Result<Vec<SqlValue<'r>>, DbError> {
    (0..n).map(|i| row.value(i)).collect()
}

/// A row as an error names it: its key, `(game_id=3, ply=7)`, or its place for a table without
/// one.
fn row_name(values: &[SqlValue<'_>], columns: &[String], key: &[usize], n: u64) -> String {
    if key.is_empty() {
        return format!("{n}");
    }
    let parts: Vec<String> = key
        .iter()
        .map(|&i| {
            let value = match values[i] {
                SqlValue::Null => "NULL".to_owned(),
                SqlValue::Integer(v) => v.to_string(),
                SqlValue::Real(v) => v.to_string(),
                SqlValue::Text(t) => format!("'{t}'"),
                SqlValue::Blob(b) => format!("<{} bytes>", b.len()),
            };
            format!("{}={value}", columns[i])
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// Sets `table`'s id sequence (PostgreSQL) to continue after its largest id.
fn continue_sequence(tx: &Conn<'_>, table: &Table) -> Result<(), CopyError> {
    let Some(column) = &table.sequence else {
        return Ok(());
    };
    let sql = format!(
        "SELECT setval(pg_get_serial_sequence(?1, ?2),
                       COALESCE((SELECT max({col}) FROM {tab}), 0) + 1, false)",
        col = ident(column),
        tab = ident(&table.name)
    );
    tx.query_row(&sql, params![ident(&table.name), column], |_| Ok(()))
        .map_err(|e| {
            db(
                Side::Destination,
                format!("continue the id sequence of `{}`", table.name),
                e,
            )
        })
}

/// The count and checksum of each of `tables` on one side, under one snapshot. `local` gives
/// this side's description of a table (for its key order); the column list is the first
/// side's, so both sides hash the same columns in the same order.
fn sums<'t>(
    conn: &Conn<'_>,
    side: Side,
    tables: &[&'t Table],
    local: impl Fn(&'t Table) -> &'t Table,
) -> Result<Vec<TableSum>, CopyError> {
    conn.read_snapshot(|reader| {
        tables
            .iter()
            .map(|&t| {
                let columns = column_names(t);
                let select = select_sql(conn.dialect(), local(t), &columns);
                let mut hasher = Sha256::new();
                for c in &columns {
                    canonical(&mut hasher, SqlValue::Text(c));
                }
                let mut rows = 0_u64;
                reader
                    .stream(&select, |row| {
                        rows += 1;
                        for i in 0..columns.len() {
                            canonical(&mut hasher, row.value(i)?);
                        }
                        Ok::<(), DbError>(())
                    })
                    .and_then(|inner| inner)
                    .map_err(|e| db(side, format!("read `{}`", t.name), e))?;
                Ok(TableSum {
                    rows,
                    sha256: hasher.finalize().into(),
                })
            })
            .collect()
    })
    .map_err(|e| db(side, "read a snapshot".into(), e))?
}

/// Feeds one value to a checksum in a form that is the same on both backends and tells every
/// value apart: a tag for its class, then its content (lengths first, so no two rows run
/// together).
fn canonical(hasher: &mut Sha256, value: SqlValue<'_>) {
    match value {
        SqlValue::Null => hasher.update(b"N"),
        SqlValue::Integer(i) => {
            hasher.update(b"I");
            hasher.update(i.to_be_bytes());
        }
        SqlValue::Real(f) => {
            hasher.update(b"R");
            hasher.update(f.to_bits().to_be_bytes());
        }
        SqlValue::Text(t) => {
            hasher.update(b"T");
            hasher.update((t.len() as u64).to_be_bytes());
            hasher.update(t.as_bytes());
        }
        SqlValue::Blob(b) => {
            hasher.update(b"B");
            hasher.update((b.len() as u64).to_be_bytes());
            hasher.update(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        AdjudicationEvalRecord, EvalReplyRecord, EvalResultRow, FailedCallRecord,
        GameAnalysisRecord, LimitVerdictRecord, LlmCallRecord, PlayerRecord, PlyAnalysisRecord,
        PlyRecord, ScheduledGame, UsageDetails, board::Score,
    };

    fn call(game: i64, ply: u32, reply: &str) -> LlmCallRecord {
        LlmCallRecord {
            game_id: Some(game),
            ply,
            seq: 0,
            player: "llm".into(),
            model: "smol".into(),
            endpoint: "http://127.0.0.1:8765/v1".into(),
            request_json: r#"{"messages":[{"role":"user","content":"it's \"your\" move ♞"}]}"#
                .into(),
            reply_text: Some(reply.into()),
            // '' and NULL must stay apart through a copy.
            reasoning: Some(String::new()),
            raw_body: None,
            finish_reason: Some("stop".into()),
            http_status: Some(200),
            prompt_tokens: Some(100 + u64::from(ply)),
            completion_tokens: None,
            latency_ms: 250,
            transport_retries: 0,
            error: None,
            details: UsageDetails {
                provider_cost_usd: Some(0.1 + 0.2),
                ..UsageDetails::default()
            },
        }
    }

    /// A store with a row in every kind of table: a tournament with a played and analysed game
    /// (plies, calls, a failed attempt, events, adjudication), scripts, the analysis cache, and
    /// an evaluation run with items, replies, results and a failed attempt.
    fn filled() -> Store {
        let store = Store::open_in_memory().unwrap();
        store
            .save_scripts("h1", &[("t.lua".into(), "return {} -- é".into())])
            .unwrap();
        let t = store.open_tournament("study", "t.lua", "{}").unwrap().id;
        store
            .put_images(&[crate::llm::ChatMessage::new("user", "board")
                .with_image(crate::llm::Image::new("image/png", vec![0x89, 0, 255]))])
            .unwrap();
        for (name, kind) in [("llm", "llm"), ("sf", "engine")] {
            store
                .upsert_player(t, &PlayerRecord::new(name, kind, "{}"))
                .unwrap();
        }
        store
            .schedule_games(
                t,
                &[
                    ScheduledGame::new(0, 0, "llm", "sf"),
                    ScheduledGame::new(1, 0, "sf", "llm"),
                ],
            )
            .unwrap();
        let game = store.games(t).unwrap()[0].id;
        store.mark_game_started(game, "h1", 1).unwrap();
        for n in 0..4_u32 {
            let player = if n % 2 == 0 { "llm" } else { "sf" };
            if player == "llm" {
                store
                    .record_llm_call(&call(game, n, &format!("I play move {n}")))
                    .unwrap();
            }
            store
                .record_ply(
                    game,
                    &PlyRecord {
                        ply: n,
                        fen_before: format!("fen {n}"),
                        uci: "e2e4".into(),
                        san: "e4".into(),
                        player: player.into(),
                        attempts: 1,
                        elapsed_ms: 12,
                        clock_ms: (n > 1).then_some(900),
                    },
                )
                .unwrap();
            store
                .record_ply_analysis(
                    game,
                    &PlyAnalysisRecord {
                        ply: n,
                        engine_id: "sf".into(),
                        limits_key: "depth=8".into(),
                        win_model: "lichess".into(),
                        eval_before: Score::Cp(30),
                        eval_after: Score::Mate(-2),
                        best: Some("e2e4".into()),
                        pv: vec!["e2e4".into(), "e7e5".into()],
                        top_json: "[]".into(),
                        played_rank: Some(1),
                        in_top: true,
                        played_score: None,
                        all_moves_json: None,
                        win_before: 1.0 / 3.0,
                        win_after: 40.0,
                        cp_loss: n,
                        accuracy: 70.123_456_789,
                        phase: "opening".into(),
                        classification: "best".into(),
                    },
                )
                .unwrap();
            store
                .record_adjudication_eval(
                    game,
                    &AdjudicationEvalRecord {
                        ply: n,
                        score: (n != 2).then_some(Score::Cp(-15)),
                        depth: Some(12),
                    },
                )
                .unwrap();
        }
        store
            .record_failed_call(&FailedCallRecord {
                game_id: Some(game),
                ply: Some(0),
                attempt: 1,
                player: "llm".into(),
                model: "smol".into(),
                endpoint: "u".into(),
                request_json: "{}".into(),
                http_status: 429,
                headers_json: "{}".into(),
                raw_body: "slow down".into(),
                error: "rate limited".into(),
                latency_ms: 4,
                ..FailedCallRecord::default()
            })
            .unwrap();
        store
            .record_event(t, Some(game), "warn", "retry", "429 from the provider")
            .unwrap();
        store.finish_game(game, "1-0", "checkmate", None).unwrap();
        store
            .record_limit_verdict(
                game,
                &LimitVerdictRecord {
                    result: "1-0".into(),
                    score: Score::Cp(420),
                    threshold_cp: 400,
                    engine: "sf".into(),
                    limits: "nodes=20000".into(),
                },
            )
            .unwrap();
        store
            .record_game_analysis(
                game,
                &GameAnalysisRecord {
                    engine_id: "sf".into(),
                    limits_key: "depth=8".into(),
                    win_model: "lichess".into(),
                    white_accuracy: Some(88.5),
                    black_accuracy: None,
                },
            )
            .unwrap();
        store
            .analysis_cache_put("fen 0", "sf", "depth=8", r#"{"cp":30}"#)
            .unwrap();
        let run = store.open_eval_run("ev", "e.lua", "{}", None).unwrap().id;
        store
            .add_eval_items(
                run,
                "puzzles",
                &[("k0".into(), "{}".into()), ("k1".into(), "{}".into())],
            )
            .unwrap();
        store
            .record_eval_reply(
                run,
                "puzzles",
                "llm",
                0,
                &EvalReplyRecord {
                    seq: 0,
                    prompt_json: None,
                    reply_text: "Nf3".into(),
                    reasoning: None,
                    prompt_tokens: Some(9),
                    completion_tokens: Some(2),
                    latency_ms: 7,
                    details: UsageDetails::default(),
                },
            )
            .unwrap();
        store
            .record_eval_result(
                run,
                "puzzles",
                &EvalResultRow {
                    idx: 0,
                    player: "llm".into(),
                    calls: 1,
                    parsed_json: r#""Nf3""#.into(),
                    score_json: "1".into(),
                },
            )
            .unwrap();
        store
            .open_eval_run("ev rescored", "e.lua", "{}", Some(run))
            .unwrap();
        store
    }

    /// Every table's row count, read directly.
    fn counts(store: &Store) -> BTreeMap<String, i64> {
        let conn = store.conn();
        describe(&conn, Side::Source)
            .unwrap()
            .into_iter()
            .map(|t| {
                let sql = format!("SELECT COUNT(*) FROM {}", ident(&t.name));
                let n = conn.query_row(&sql, params![], |r| r.get(0)).unwrap();
                (t.name, n)
            })
            .collect()
    }

    #[test]
    fn a_store_copies_every_row_with_its_ids_and_the_checksums_agree() {
        let source = filled();
        let destination = Store::open_in_memory().unwrap();
        let checks = source.copy_into(&destination).unwrap();
        assert!(checks.iter().all(TableCheck::matches), "{checks:#?}");
        let listed: BTreeSet<&str> = checks.iter().map(|c| c.table.as_str()).collect();
        let counted = counts(&source);
        assert_eq!(listed, counted.keys().map(String::as_str).collect());
        assert!(!listed.contains("arena_store"));
        for table in [
            "scripts",
            "tournaments",
            "players",
            "games",
            "plies",
            "llm_calls",
            "failed_calls",
            "events",
            "analysis_cache",
            "ply_analysis",
            "game_analysis",
            "adjudication_evals",
            "limit_verdicts",
            "eval_runs",
            "eval_items",
            "eval_replies",
            "eval_results",
            "images",
        ] {
            let check = checks.iter().find(|c| c.table == table).unwrap();
            assert!(check.source.rows > 0, "the fixture fills `{table}`");
            assert_eq!(
                i64::try_from(check.destination.rows).ok(),
                counted.get(table).copied()
            );
        }
        assert_eq!(counts(&destination), counted);

        // Read back through the store's own queries: same ids, same values, '' and NULL apart.
        let (a, b) = (
            source.find_tournament("study").unwrap().unwrap(),
            destination.find_tournament("study").unwrap().unwrap(),
        );
        assert_eq!(a.id, b.id);
        assert_eq!(
            source.games(a.id).unwrap(),
            destination.games(b.id).unwrap()
        );
        let game = source.games(a.id).unwrap()[0].id;
        assert_eq!(
            source.plies(game).unwrap(),
            destination.plies(game).unwrap()
        );
        let calls = destination.llm_calls(game, 0).unwrap();
        assert_eq!(source.llm_calls(game, 0).unwrap(), calls);
        assert_eq!(calls[0].call.reasoning.as_deref(), Some(""));
        assert_eq!(calls[0].call.raw_body, None);
        assert_eq!(calls[0].call.details.provider_cost_usd, Some(0.1 + 0.2));
    }

    #[test]
    fn new_rows_after_a_copy_take_fresh_ids() {
        let source = filled();
        let destination = Store::open_in_memory().unwrap();
        source.copy_into(&destination).unwrap();
        let copied = destination.find_tournament("study").unwrap().unwrap();
        let next = destination.open_tournament("next", "n.lua", "{}").unwrap();
        assert!(next.id > copied.id);
        destination
            .upsert_player(next.id, &PlayerRecord::new("llm", "llm", "{}"))
            .unwrap();
        destination
            .upsert_player(next.id, &PlayerRecord::new("sf", "engine", "{}"))
            .unwrap();
        destination
            .schedule_games(next.id, &[ScheduledGame::new(0, 0, "llm", "sf")])
            .unwrap();
        let game = destination.games(next.id).unwrap()[0].id;
        let old = destination.games(copied.id).unwrap();
        assert!(old.iter().all(|g| g.id < game));
        let first_call = destination.llm_calls(old[0].id, 0).unwrap()[0].id;
        let call_id = destination.record_llm_call(&call(game, 0, "e4")).unwrap();
        assert!(call_id > first_call);
        destination
            .record_event(next.id, Some(game), "info", "start", "new")
            .unwrap();
        let run = destination
            .open_eval_run("ev 2", "e.lua", "{}", None)
            .unwrap();
        assert!(run.id > source.find_eval_run("ev rescored").unwrap().unwrap().id);
    }

    #[test]
    fn a_tampered_or_missing_destination_row_fails_the_check() {
        let source = filled();
        let destination = Store::open_in_memory().unwrap();
        source.copy_into(&destination).unwrap();
        destination
            .conn()
            .execute("UPDATE plies SET san = 'e5' WHERE ply = 1", params![])
            .unwrap();
        let checks = source.compare_with(&destination).unwrap();
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.matches())
            .map(|c| c.table.as_str())
            .collect();
        assert_eq!(failed, ["plies"]);
        let plies = checks.iter().find(|c| c.table == "plies").unwrap();
        assert_eq!(plies.source.rows, plies.destination.rows);
        assert_ne!(plies.source.sha256, plies.destination.sha256);

        // NULL in place of '' is a different row too, as is a row gone.
        destination
            .conn()
            .execute("UPDATE llm_calls SET reasoning = NULL", params![])
            .unwrap();
        destination
            .conn()
            .execute("DELETE FROM events", params![])
            .unwrap();
        let checks = source.compare_with(&destination).unwrap();
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.matches())
            .map(|c| c.table.as_str())
            .collect();
        assert_eq!(failed.len(), 3, "{failed:?}");
        assert!(failed.contains(&"llm_calls") && failed.contains(&"events"));
        let events = checks.iter().find(|c| c.table == "events").unwrap();
        assert_eq!((events.source.rows, events.destination.rows), (1, 0));
    }

    #[test]
    fn a_destination_that_holds_rows_is_refused_and_left_alone() {
        let source = filled();
        let destination = Store::open_in_memory().unwrap();
        destination.open_tournament("mine", "m.lua", "{}").unwrap();
        destination
            .analysis_cache_put("fen", "sf", "k", "{}")
            .unwrap();
        let err = source.copy_into(&destination).unwrap_err();
        match &err {
            CopyError::NotEmpty { tables } => {
                assert_eq!(tables, &["analysis_cache", "tournaments"]);
            }
            other => panic!("expected NotEmpty, got {other}"),
        }
        assert!(err.to_string().contains("`tournaments`"), "{err}");
        assert_eq!(destination.tournaments().unwrap().len(), 1);
        assert_eq!(counts(&destination)["games"], 0);
    }

    #[test]
    fn a_copy_that_fails_midway_leaves_the_destination_empty_and_names_the_row() {
        let source = filled();
        let destination = Store::open_in_memory().unwrap();
        // A real part cannot be made to fail on the third ply: a trigger on the destination does.
        let refuse = match destination.conn().dialect() {
            Dialect::Sqlite => {
                "CREATE TRIGGER refuse BEFORE INSERT ON plies WHEN NEW.ply = 2
                 BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
            }
            Dialect::Postgres => {
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN IF NEW.ply = 2 THEN RAISE EXCEPTION 'refused by the test'; END IF;
                 RETURN NEW; END $$;
                 CREATE TRIGGER refuse BEFORE INSERT ON plies FOR EACH ROW EXECUTE FUNCTION refuse()"
            }
        };
        destination.conn().execute_batch(refuse).unwrap();
        let err = source.copy_into(&destination).unwrap_err();
        let study = source.find_tournament("study").unwrap().unwrap();
        let game = source.games(study.id).unwrap()[0].id;
        match &err {
            CopyError::Database { side, what, .. } => {
                assert_eq!(*side, Side::Destination);
                assert_eq!(
                    what,
                    &format!("insert row (game_id={game}, ply=2) of `plies`")
                );
            }
            other => panic!("expected a destination error, got {other}"),
        }
        assert!(err.to_string().contains("refused by the test"), "{err}");
        assert!(
            counts(&destination).values().all(|&n| n == 0),
            "{:?}",
            counts(&destination)
        );
    }

    #[test]
    fn tables_are_copied_after_the_tables_they_refer_to() {
        let store = Store::open_in_memory().unwrap();
        let tables = describe(&store.conn(), Side::Source).unwrap();
        let order: Vec<&str> = copy_order(&tables)
            .unwrap()
            .into_iter()
            .map(|i| tables[i].name.as_str())
            .collect();
        assert_eq!(order.len(), tables.len());
        for table in &tables {
            let at = order.iter().position(|t| *t == table.name).unwrap();
            for referenced in &table.references {
                let before = order.iter().position(|t| t == referenced).unwrap();
                assert!(before <= at, "`{}` refers to `{referenced}`", table.name);
            }
        }
        let games = tables.iter().find(|t| t.name == "games").unwrap();
        assert_eq!(games.primary_key, ["id"]);
        assert!(games.references.contains("players") && games.references.contains("games"));
        let plies = tables.iter().find(|t| t.name == "ply_analysis").unwrap();
        assert_eq!(plies.primary_key, ["game_id", "ply"]);
        assert!(plies.references.contains("plies"));
        let cycle = [
            Table {
                references: ["b".to_owned()].into(),
                ..games.clone()
            },
            Table {
                name: "b".into(),
                references: [games.name.clone()].into(),
                ..games.clone()
            },
        ];
        assert!(matches!(
            copy_order(&cycle),
            Err(CopyError::SchemaMismatch { .. })
        ));
    }

    #[test]
    fn the_canonical_form_tells_every_value_apart() {
        let hash = |values: &[SqlValue<'_>]| {
            let mut h = Sha256::new();
            for v in values {
                canonical(&mut h, *v);
            }
            h.finalize()
        };
        let one = [
            SqlValue::Null,
            SqlValue::Text(""),
            SqlValue::Integer(0),
            SqlValue::Real(0.0),
            SqlValue::Real(-0.0),
            SqlValue::Blob(b""),
            SqlValue::Text("0"),
        ];
        let sums: BTreeSet<_> = one.iter().map(|v| hash(&[*v])).collect();
        assert_eq!(sums.len(), one.len());
        assert_ne!(
            hash(&[SqlValue::Text("ab"), SqlValue::Text("c")]),
            hash(&[SqlValue::Text("a"), SqlValue::Text("bc")])
        );
        assert_eq!(
            hash(&[SqlValue::Real(0.1 + 0.2)]),
            hash(&[SqlValue::Real(0.1 + 0.2)])
        );
    }

    #[test]
    fn sqlite_and_postgres_hold_the_same_rows_after_a_round_trip() {
        let Some(server) = crate::test_parts::postgres("store::copy round trip") else {
            return;
        };
        let database = crate::test_parts::FreshDatabase::create(&server, "copy round trip");
        let dir = tempfile::tempdir().unwrap();
        let source = Store::open(&dir.path().join("a.db")).unwrap();
        let filled = filled();
        filled.copy_into(&source).unwrap();
        let server_store = Store::open(std::path::Path::new(&database.url)).unwrap();
        let there = source.copy_into(&server_store).unwrap();
        let back = Store::open(&dir.path().join("b.db")).unwrap();
        let home = server_store.copy_into(&back).unwrap();
        assert!(there.iter().chain(&home).all(TableCheck::matches));
        // The same rows hash alike on either backend.
        assert_eq!(there, home);
        // The server continues its ids after the copied ones.
        let next = server_store.open_tournament("next", "n.lua", "{}").unwrap();
        assert!(next.id > server_store.find_tournament("study").unwrap().unwrap().id);
    }
}
