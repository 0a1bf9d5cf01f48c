//! Scripts, tournaments and players: the rows every game refers to.

use super::db::{Conn, DbResult, OptionalExtension, Row, params};

use super::{Context, Store, StoreError};

/// A stored tournament.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentRow {
    /// Row id, used by every other call.
    pub id: i64,
    /// The unique name a run refers to it by.
    pub name: String,
    /// The tournament script it was first opened with.
    pub script_path: String,
    /// The settings it was first opened with, as JSON.
    pub settings_json: String,
    /// When it was created (RFC 3339 UTC).
    pub created_at: String,
}

/// A player as the caller describes it (API keys already stripped from the settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRecord {
    /// Unique name within the tournament; games refer to players by it.
    pub name: String,
    /// `"llm"`, `"engine"` or `"random"`.
    pub kind: String,
    /// Model, provider, mode, engine limits, ... as JSON.
    pub settings_json: String,
}

impl PlayerRecord {
    /// Builds a record from borrowed parts.
    pub fn new(name: &str, kind: &str, settings_json: &str) -> PlayerRecord {
        PlayerRecord {
            name: name.to_owned(),
            kind: kind.to_owned(),
            settings_json: settings_json.to_owned(),
        }
    }
}

/// A stored player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRow {
    /// Row id.
    pub id: i64,
    /// The tournament id.
    pub tournament: i64,
    /// Unique name within the tournament.
    pub name: String,
    /// `"llm"`, `"engine"` or `"random"`.
    pub kind: String,
    /// The latest settings, as JSON.
    pub settings_json: String,
}

const TOURNAMENT_COLUMNS: &str = "id, name, script_path, settings_json, created_at";

fn tournament_row(r: &Row<'_>) -> DbResult<TournamentRow> {
    Ok(TournamentRow {
        id: r.get(0)?,
        name: r.get(1)?,
        script_path: r.get(2)?,
        settings_json: r.get(3)?,
        created_at: r.get(4)?,
    })
}

impl Store {
    /// Stores the exact script files (`(path, content)`, in load order) of the generation with this
    /// content hash, so a resumed game can rebuild the scripts it started under. Saving the same hash
    /// again is a no-op. An empty list stores nothing.
    ///
    /// # Errors
    ///
    /// [`StoreError::ScriptsMismatch`] if the hash is already stored with other files,
    /// [`StoreError::Duplicate`] if `files` names a path twice, [`StoreError::Database`] on a
    /// database failure.
    pub fn save_scripts(&self, hash: &str, files: &[(String, String)]) -> Result<(), StoreError> {
        let what = || format!("save scripts `{hash}`");
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        let stored = load_scripts(&tx, hash).context(what)?;
        if !stored.is_empty() {
            return if stored == files {
                Ok(())
            } else {
                Err(StoreError::ScriptsMismatch {
                    hash: hash.to_owned(),
                })
            };
        }
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO scripts (hash, position, path, content) VALUES (?1, ?2, ?3, ?4)",
                )
                .context(what)?;
            for (position, (path, content)) in files.iter().enumerate() {
                insert
                    .execute(params![hash, position as i64, path, content])
                    .context(what)?;
            }
        }
        tx.commit().context(what)
    }

    /// The script files stored under `hash`, in the order they were saved, or `None` if unknown.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn scripts(&self, hash: &str) -> Result<Option<Vec<(String, String)>>, StoreError> {
        let files =
            load_scripts(&self.conn(), hash).context(|| format!("read scripts `{hash}`"))?;
        Ok((!files.is_empty()).then_some(files))
    }

    /// Returns the tournament called `name`, creating it with `script_path` and `settings_json` if it
    /// does not exist. An existing tournament keeps the script path and settings it was created with.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn open_tournament(
        &self,
        name: &str,
        script_path: &str,
        settings_json: &str,
    ) -> Result<TournamentRow, StoreError> {
        let what = || format!("open tournament `{name}`");
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        tx.execute(
            "INSERT INTO tournaments (name, script_path, settings_json) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO NOTHING",
            params![name, script_path, settings_json],
        )
        .context(what)?;
        let row = tx
            .query_row(
                &format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE name = ?1"),
                params![name],
                tournament_row,
            )
            .context(what)?;
        tx.commit().context(what)?;
        Ok(row)
    }

    /// Every tournament, oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn tournaments(&self) -> Result<Vec<TournamentRow>, StoreError> {
        let what = || "list tournaments".to_owned();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {TOURNAMENT_COLUMNS} FROM tournaments ORDER BY id"
            ))
            .context(what)?;
        let rows = stmt.query_map(params![], tournament_row).context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// The tournament called `name`, if stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn find_tournament(&self, name: &str) -> Result<Option<TournamentRow>, StoreError> {
        self.conn()
            .query_row(
                &format!("SELECT {TOURNAMENT_COLUMNS} FROM tournaments WHERE name = ?1"),
                params![name],
                tournament_row,
            )
            .optional()
            .context(|| format!("find tournament `{name}`"))
    }

    /// Adds a player to a tournament, or updates the kind and settings of the player with that name;
    /// returns its id.
    ///
    /// # Errors
    ///
    /// [`StoreError::MissingReference`] if the tournament does not exist, [`StoreError::Database`] on
    /// a database failure.
    pub fn upsert_player(&self, tournament: i64, p: &PlayerRecord) -> Result<i64, StoreError> {
        self.conn()
            .query_row(
                "INSERT INTO players (tournament_id, name, kind, settings_json) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (tournament_id, name)
                 DO UPDATE SET kind = excluded.kind, settings_json = excluded.settings_json
                 RETURNING id",
                params![tournament, p.name, p.kind, p.settings_json],
                |r| r.get(0),
            )
            .context(|| format!("store player `{}` of tournament {tournament}", p.name))
    }

    /// The players of a tournament, in the order they were first added.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn players(&self, tournament: i64) -> Result<Vec<PlayerRow>, StoreError> {
        let what = || format!("list players of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id, tournament_id, name, kind, settings_json FROM players
                 WHERE tournament_id = ?1 ORDER BY id",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| {
                Ok(PlayerRow {
                    id: r.get(0)?,
                    tournament: r.get(1)?,
                    name: r.get(2)?,
                    kind: r.get(3)?,
                    settings_json: r.get(4)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }
}

fn load_scripts(conn: &Conn<'_>, hash: &str) -> DbResult<Vec<(String, String)>> {
    let mut stmt =
        conn.prepare_cached("SELECT path, content FROM scripts WHERE hash = ?1 ORDER BY position")?;
    let rows = stmt.query_map(params![hash], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}
