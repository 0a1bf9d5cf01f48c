//! Streaming reads for the dataset exports (`arena export jsonl|sft|positions`): each method runs
//! one SQLite statement and hands the rows to a callback one at a time, so an export of a store
//! with a million calls holds one row in memory, never the table.
//!
//! The connection stays locked while the callback runs: a callback must not call the same
//! [`Store`] again (it would wait on itself). Exports gather what they need beforehand (players,
//! the manifest) and only write inside the callback.

use super::db::{DbError, DbResult, Row, params};

use super::{
    Context, GameRow, LlmCallRow, PlyAnalysisRecord, PlyRecord, Store, StoreError,
    analysis::ply_row,
    calls::{CALL_COLUMNS, CALL_WIDTH, call_row, call_row_at},
    games::game_row,
    games::{GAME_COLUMNS, GAME_WIDTH},
    get_u64,
};

/// A stored LLM call with the tournament it belongs to, as the calls export reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallExportRow {
    /// The tournament's name, `None` for a call outside games.
    pub tournament: Option<String>,
    /// The call as stored.
    pub row: LlmCallRow,
    /// The move the reply offered as the play mode read it, if it said.
    pub candidate: Option<String>,
}

/// A stored ply with its game, tournament and (if analysed) engine verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct PlyExportRow {
    /// The tournament's name.
    pub tournament: String,
    /// The game id.
    pub game_id: i64,
    /// The rules of the game, which its FENs alone do not always tell.
    pub variant: crate::board::Variant,
    /// The ply as stored.
    pub ply: PlyRecord,
    /// The engine analysis of the ply, if it was analysed.
    pub analysis: Option<PlyAnalysisRecord>,
}

/// A stored game with its tournament's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameExportRow {
    /// The tournament's name.
    pub tournament: String,
    /// The game as stored.
    pub game: GameRow,
}

/// An accepted move of a language model: the call whose reply became the ply's move, with the
/// ply and its analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct AcceptedMoveRow {
    /// The tournament's name.
    pub tournament: String,
    /// The accepted call (outcome `move`).
    pub call: LlmCallRow,
    /// The rules of the game, which its FENs alone do not always tell.
    pub variant: crate::board::Variant,
    /// The ply it produced.
    pub ply: PlyRecord,
    /// The engine analysis of the ply, if it was analysed.
    pub analysis: Option<PlyAnalysisRecord>,
}

/// The analysis columns in [`ply_row`]'s order, from the `a` alias.
const ANALYSIS_COLUMNS: &str = "a.ply, a.engine_id, a.limits_key, a.win_model, a.eval_before_cp,
    a.eval_before_mate, a.eval_after_cp, a.eval_after_mate, a.best, a.pv, a.top_json,
    a.played_rank, a.in_top, a.played_cp, a.played_mate, a.all_moves_json, a.win_before,
    a.win_after, a.cp_loss, a.accuracy, a.phase, a.classification";
const ANALYSIS_WIDTH: usize = 22;

/// The ply columns from the `p` alias, read by [`ply_at`].
const PLY_COLUMNS: &str =
    "p.ply, p.fen_before, p.uci, p.san, p.player, p.attempts, p.elapsed_ms, p.clock_ms";

/// How many columns [`PLY_COLUMNS`] has.
const PLY_WIDTH: usize = 8;

fn variant_at(r: &Row<'_>, at: usize) -> DbResult<crate::board::Variant> {
    let name: String = r.get(at)?;
    name.parse()
        .map_err(|e: crate::board::UnknownName| super::bad_column(at, e.to_string()))
}

fn ply_at(r: &Row<'_>, at: usize) -> DbResult<PlyRecord> {
    Ok(PlyRecord {
        ply: r.get(at)?,
        fen_before: r.get(at + 1)?,
        uci: r.get(at + 2)?,
        san: r.get(at + 3)?,
        player: r.get(at + 4)?,
        attempts: r.get(at + 5)?,
        elapsed_ms: get_u64(r, at + 6)?,
        clock_ms: r.get::<_, Option<i64>>(at + 7)?.map(|v| v.max(0) as u64),
    })
}

/// The analysis at the start of the row, or `None` when the LEFT JOIN found none.
fn analysis_first(r: &Row<'_>) -> DbResult<Option<PlyAnalysisRecord>> {
    match r.get::<_, Option<u32>>(0)? {
        None => Ok(None),
        Some(_) => ply_row(r).map(Some),
    }
}

/// An error of an export callback, or of the store under it.
#[derive(Debug, thiserror::Error)]
pub enum StreamError<E> {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The callback failed (a write error, say); the stream stopped there.
    #[error(transparent)]
    Callback(E),
}

impl Store {
    /// Runs `sql` and hands each mapped row to `f`, stopping at the first error. The queries take
    /// the tournament (or NULL for all) as `CAST(?1 AS BIGINT)`: PostgreSQL cannot tell the type
    /// of a parameter only ever compared with NULL.
    fn stream<T, E>(
        &self,
        what: &str,
        sql: &str,
        tournament: Option<i64>,
        map: impl Fn(&Row<'_>) -> DbResult<T>,
        mut f: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        let what = || what.to_owned();
        let conn = self.conn();
        // One snapshot, read a batch at a time: an export of a large store on a server never
        // holds all its rows, and sees none that a running tournament adds meanwhile.
        enum Stop<E> {
            Map(DbError),
            Callback(E),
        }
        let streamed = conn
            .read_snapshot(|reader| {
                reader.stream_with(sql, params![tournament], |r| {
                    let item = map(r).map_err(Stop::Map)?;
                    f(item).map_err(Stop::Callback)
                })
            })
            .context(what)?
            .context(what)?;
        match streamed {
            Ok(()) => Ok(()),
            Err(Stop::Map(e)) => Err(StreamError::Store(
                Err::<(), _>(e).context(what).unwrap_err(),
            )),
            Err(Stop::Callback(e)) => Err(StreamError::Callback(e)),
        }
    }

    /// Every LLM call (of one tournament, or of all when `tournament` is `None`), in id order.
    ///
    /// # Errors
    /// A database failure, or the first error `f` returns.
    pub fn for_each_call<E>(
        &self,
        tournament: Option<i64>,
        f: impl FnMut(CallExportRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        let sql = format!(
            "SELECT {CALL_COLUMNS}, c.candidate, t.name
             FROM llm_calls c LEFT JOIN games g ON g.id = c.game_id
                 LEFT JOIN tournaments t ON t.id = g.tournament_id
             WHERE CAST(?1 AS BIGINT) IS NULL OR g.tournament_id = ?1
             ORDER BY c.id"
        );
        self.stream(
            "stream the llm calls",
            &sql,
            tournament,
            |r| {
                Ok(CallExportRow {
                    row: call_row(r)?,
                    candidate: r.get(CALL_WIDTH)?,
                    tournament: r.get(CALL_WIDTH + 1)?,
                })
            },
            f,
        )
    }

    /// Every stored ply with its analysis if any, in game and ply order.
    ///
    /// # Errors
    /// A database failure, or the first error `f` returns.
    pub fn for_each_ply<E>(
        &self,
        tournament: Option<i64>,
        f: impl FnMut(PlyExportRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        self.plies_stream(tournament, false, f)
    }

    /// Every analysed ply (the positions export), in game and ply order.
    ///
    /// # Errors
    /// A database failure, or the first error `f` returns.
    pub fn for_each_analysed_ply<E>(
        &self,
        tournament: Option<i64>,
        f: impl FnMut(PlyExportRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        self.plies_stream(tournament, true, f)
    }

    fn plies_stream<E>(
        &self,
        tournament: Option<i64>,
        analysed_only: bool,
        f: impl FnMut(PlyExportRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        let join = if analysed_only { "JOIN" } else { "LEFT JOIN" };
        let sql = format!(
            "SELECT {ANALYSIS_COLUMNS}, {PLY_COLUMNS}, p.game_id, t.name, g.variant
             FROM plies p JOIN games g ON g.id = p.game_id
                 JOIN tournaments t ON t.id = g.tournament_id
                 {join} ply_analysis a ON a.game_id = p.game_id AND a.ply = p.ply
             WHERE CAST(?1 AS BIGINT) IS NULL OR g.tournament_id = ?1
             ORDER BY p.game_id, p.ply"
        );
        let at = ANALYSIS_WIDTH;
        self.stream(
            "stream the plies",
            &sql,
            tournament,
            |r| {
                Ok(PlyExportRow {
                    analysis: analysis_first(r)?,
                    ply: ply_at(r, at)?,
                    game_id: r.get(at + PLY_WIDTH)?,
                    tournament: r.get(at + PLY_WIDTH + 1)?,
                    variant: variant_at(r, at + PLY_WIDTH + 2)?,
                })
            },
            f,
        )
    }

    /// Every game, in tournament and index order.
    ///
    /// # Errors
    /// A database failure, or the first error `f` returns.
    pub fn for_each_game<E>(
        &self,
        tournament: Option<i64>,
        f: impl FnMut(GameExportRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        let sql = format!(
            "SELECT {GAME_COLUMNS}, t.name FROM games g JOIN tournaments t ON t.id = g.tournament_id
             WHERE CAST(?1 AS BIGINT) IS NULL OR g.tournament_id = ?1
             ORDER BY g.tournament_id, g.idx"
        );
        self.stream(
            "stream the games",
            &sql,
            tournament,
            |r| {
                Ok(GameExportRow {
                    game: game_row(r)?,
                    tournament: r.get(GAME_WIDTH)?,
                })
            },
            f,
        )
    }

    /// Every accepted move of a language model: the call with outcome `move` of each stored ply
    /// (the last such call of the ply, should a resumed run have stored two), with the ply and
    /// its analysis, in game and ply order.
    ///
    /// # Errors
    /// A database failure, or the first error `f` returns.
    pub fn for_each_accepted_move<E>(
        &self,
        tournament: Option<i64>,
        f: impl FnMut(AcceptedMoveRow) -> Result<(), E>,
    ) -> Result<(), StreamError<E>> {
        let sql = format!(
            "SELECT {ANALYSIS_COLUMNS}, {PLY_COLUMNS}, {CALL_COLUMNS}, t.name, g.variant
             FROM plies p JOIN games g ON g.id = p.game_id
                 JOIN tournaments t ON t.id = g.tournament_id
                 JOIN llm_calls c ON c.id = (
                     SELECT MAX(c2.id) FROM llm_calls c2
                     WHERE c2.game_id = p.game_id AND c2.ply = p.ply AND c2.outcome = 'move')
                 LEFT JOIN ply_analysis a ON a.game_id = p.game_id AND a.ply = p.ply
             WHERE CAST(?1 AS BIGINT) IS NULL OR g.tournament_id = ?1
             ORDER BY p.game_id, p.ply"
        );
        let at = ANALYSIS_WIDTH;
        self.stream(
            "stream the accepted moves",
            &sql,
            tournament,
            |r| {
                let call = call_row_at(r, at + PLY_WIDTH)?;
                Ok(AcceptedMoveRow {
                    analysis: analysis_first(r)?,
                    ply: ply_at(r, at)?,
                    call,
                    tournament: r.get(at + PLY_WIDTH + CALL_WIDTH)?,
                    variant: variant_at(r, at + PLY_WIDTH + CALL_WIDTH + 1)?,
                })
            },
            f,
        )
    }
}

/// What the manifest of an export says about one tournament, beyond its row and players.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TournamentFacts {
    /// Every script generation games started under: `(script hash, generation, games)`, in
    /// generation order.
    pub generations: Vec<(String, Option<u64>, u64)>,
    /// Every engine configuration that analysed plies: `(engine id, limits key, Win% model,
    /// plies)`.
    pub analysis_engines: Vec<(String, String, String, u64)>,
    /// The number of games.
    pub games: u64,
    /// The number of finished games (void ones included).
    pub finished_games: u64,
    /// The number of stored plies.
    pub plies: u64,
    /// The number of analysed plies.
    pub analysed_plies: u64,
    /// The number of stored LLM calls.
    pub calls: u64,
    /// When the first game started (RFC 3339 UTC).
    pub first_started_at: Option<String>,
    /// When the last game finished (RFC 3339 UTC).
    pub last_finished_at: Option<String>,
}

impl Store {
    /// The facts an export's manifest reports about a tournament.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a database failure.
    pub fn tournament_facts(&self, tournament: i64) -> Result<TournamentFacts, StoreError> {
        let what = || format!("read the facts of tournament {tournament}");
        let conn = self.conn();
        let mut facts = conn
            .query_row(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE status = 'finished'),
                     (SELECT COUNT(*) FROM plies p JOIN games g2 ON g2.id = p.game_id
                      WHERE g2.tournament_id = ?1),
                     (SELECT COUNT(*) FROM ply_analysis a JOIN games g2 ON g2.id = a.game_id
                      WHERE g2.tournament_id = ?1),
                     (SELECT COUNT(*) FROM llm_calls c JOIN games g2 ON g2.id = c.game_id
                      WHERE g2.tournament_id = ?1),
                     MIN(started_at), MAX(finished_at)
                 FROM games WHERE tournament_id = ?1",
                params![tournament],
                |r| {
                    Ok(TournamentFacts {
                        games: get_u64(r, 0)?,
                        finished_games: get_u64(r, 1)?,
                        plies: get_u64(r, 2)?,
                        analysed_plies: get_u64(r, 3)?,
                        calls: get_u64(r, 4)?,
                        first_started_at: r.get(5)?,
                        last_finished_at: r.get(6)?,
                        ..TournamentFacts::default()
                    })
                },
            )
            .context(what)?;
        let mut stmt = conn
            .prepare(
                "SELECT script_hash, generation, COUNT(*) FROM games
                 WHERE tournament_id = ?1 AND script_hash IS NOT NULL
                 GROUP BY script_hash, generation ORDER BY MIN(generation), script_hash",
            )
            .context(what)?;
        facts.generations = stmt
            .query_map(params![tournament], |r| {
                Ok((r.get(0)?, super::get_opt_u64(r, 1)?, get_u64(r, 2)?))
            })
            .context(what)?
            .collect::<DbResult<_>>()
            .context(what)?;
        let mut stmt = conn
            .prepare(
                "SELECT a.engine_id, a.limits_key, a.win_model, COUNT(*)
                 FROM ply_analysis a JOIN games g ON g.id = a.game_id
                 WHERE g.tournament_id = ?1
                 GROUP BY a.engine_id, a.limits_key, a.win_model ORDER BY 1, 2, 3",
            )
            .context(what)?;
        facts.analysis_engines = stmt
            .query_map(params![tournament], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, get_u64(r, 3)?))
            })
            .context(what)?
            .collect::<DbResult<_>>()
            .context(what)?;
        Ok(facts)
    }
}

impl Store {
    /// The current time in the store's date format (RFC 3339 UTC with milliseconds).
    ///
    /// # Errors
    /// [`StoreError::Database`] on a database failure.
    pub fn now_utc(&self) -> Result<String, StoreError> {
        self.conn()
            .query_row(
                "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                params![],
                |r| r.get(0),
            )
            .context(|| "read the clock".to_owned())
    }
}
