//! Games and their plies: the schedule, the status machine and the moves.

use std::{collections::HashSet, fmt};

use super::db::{Backend, Conn, DbResult, OptionalExtension, Row, params};

use super::{
    Context, Store, StoreError, bad_column, get_opt_u64, get_u64,
    leases::{Fence, check_fence, fenced},
    sql_u64,
};
use crate::board::{Termination, Variant};

/// A game the tournament format scheduled, as the caller describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledGame {
    /// The game's index in the tournament, stable across runs.
    pub index: u32,
    /// The round it belongs to.
    pub round: u32,
    /// White's player name.
    pub white: String,
    /// Black's player name.
    pub black: String,
    /// The start position, `None` for the standard one.
    pub start_fen: Option<String>,
    /// Opening moves played from the start position before the players take over.
    pub opening_moves: Vec<String>,
    /// A label for the opening (book line name, ECO code, ...).
    pub opening_label: Option<String>,
    /// The rules the game is played under.
    pub variant: Variant,
    /// The clocks the game plays on (JSON, see the schema's version 7) when the schedule fixes
    /// them (time odds); `None`: the tournament's, when the game starts.
    pub time_control: Option<String>,
}

impl ScheduledGame {
    /// A game from the standard position without an opening.
    pub fn new(index: u32, round: u32, white: &str, black: &str) -> ScheduledGame {
        ScheduledGame {
            index,
            round,
            white: white.to_owned(),
            black: black.to_owned(),
            start_fen: None,
            opening_moves: Vec::new(),
            opening_label: None,
            variant: Variant::Standard,
            time_control: None,
        }
    }
}

/// Where a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameStatus {
    /// Not started yet.
    Scheduled,
    /// Started and not finished (or interrupted by a killed run: resumable).
    Running,
    /// Finished with a result.
    Finished,
    /// Stopped by an error that is not chess (resumable).
    Errored,
}

impl GameStatus {
    /// The name stored in the database and shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            GameStatus::Scheduled => "scheduled",
            GameStatus::Running => "running",
            GameStatus::Finished => "finished",
            GameStatus::Errored => "errored",
        }
    }

    fn parse(s: &str) -> Option<GameStatus> {
        Some(match s {
            "scheduled" => GameStatus::Scheduled,
            "running" => GameStatus::Running,
            "finished" => GameStatus::Finished,
            "errored" => GameStatus::Errored,
            _ => return None,
        })
    }
}

impl fmt::Display for GameStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRow {
    /// Row id, used by the ply, call and status methods.
    pub id: i64,
    /// The tournament id.
    pub tournament: i64,
    /// The game's index in the tournament.
    pub index: u32,
    /// The round it belongs to.
    pub round: u32,
    /// White's player name.
    pub white: String,
    /// Black's player name.
    pub black: String,
    /// The start position, `None` for the standard one.
    pub start_fen: Option<String>,
    /// Opening moves played before the players take over.
    pub opening_moves: Vec<String>,
    /// A label for the opening.
    pub opening_label: Option<String>,
    /// The rules the game is played under.
    pub variant: Variant,
    /// Where the game stands.
    pub status: GameStatus,
    /// `"1-0"`, `"0-1"` or `"1/2-1/2"` once finished, or `"*"` for a void game (finished without
    /// a result: it counts for nobody, see [`GameRow::is_void`]).
    pub result: Option<String>,
    /// How it ended (`"checkmate"`, `"forfeit"`, ...), once finished.
    pub termination: Option<String>,
    /// Free-text detail of the termination.
    pub reason: Option<String>,
    /// Content hash of the scripts the game started under.
    pub script_hash: Option<String>,
    /// Script generation the game started under.
    pub generation: Option<u64>,
    /// When it first started (RFC 3339 UTC).
    pub started_at: Option<String>,
    /// When it finished (RFC 3339 UTC).
    pub finished_at: Option<String>,
    /// The last error, while the game is errored.
    pub error: Option<String>,
    /// What kind of fault that error was (stores older than schema 4 have none).
    pub error_kind: Option<ErrorKind>,
    /// Number of stored plies.
    pub ply_count: u32,
    /// The void game this one plays again (a harness fault ended it), if it is a replay.
    pub replay_of: Option<i64>,
    /// The schedule number this game fills: its own `index`, or for a replay the index of its
    /// slot's first attempt. Ratings and formats order games by it, so a replayed game counts
    /// where the void one was scheduled.
    pub slot: u32,
    /// For a game that reached the move limit under a tournament's `adjudication.move_limit`
    /// rule: the result the adjudication engine's evaluation of the final position gives
    /// (`1-0`, `0-1`, `1/2-1/2`). Never the official result, which stays in `result`.
    pub at_limit: Option<String>,
}

/// The kind of fault that set a game aside. None of them is chess: the game is not scored and
/// resumes on the next run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A model endpoint stayed down or refused the requests.
    Api,
    /// An engine could not be started.
    Engine,
    /// A play mode's or format's script failed.
    Script,
    /// The store refused an operation, or its record of the game does not replay.
    Store,
}

impl ErrorKind {
    /// The stored name: `api`, `engine`, `script` or `store`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Api => "api",
            ErrorKind::Engine => "engine",
            ErrorKind::Script => "script",
            ErrorKind::Store => "store",
        }
    }

    /// The kind named `name`, as stored.
    pub fn parse(name: &str) -> Option<ErrorKind> {
        [
            ErrorKind::Api,
            ErrorKind::Engine,
            ErrorKind::Script,
            ErrorKind::Store,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// One move of a game, written before the next ply starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlyRecord {
    /// 0-based ply number; unique within a game.
    pub ply: u32,
    /// The position before the move.
    pub fen_before: String,
    /// The move in UCI notation.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// The name of the player who moved.
    pub player: String,
    /// How many attempts the player needed (1 for a first-try legal move).
    pub attempts: u32,
    /// Wall time the player took, retries included.
    pub elapsed_ms: u64,
    /// The time charged on the player's clock (retries after API faults excluded); `None` for
    /// an untimed player and for book moves.
    pub clock_ms: Option<u64>,
}

/// What the game loop made of a model call's reply, as [`Store::set_llm_call_verdict`] records
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallVerdict<'a> {
    /// The call's `llm_calls` row.
    pub call_id: i64,
    /// The outcome (`move`, `illegal`, ...).
    pub outcome: &'a str,
    /// What the outcome says more, if anything.
    pub detail: Option<&'a str>,
    /// The move the play mode read in the reply, if it said.
    pub candidate: Option<&'a str>,
}

/// Writes a ply and its call's verdict (inside the caller's transaction).
fn ply_with_verdict(
    conn: &Conn<'_>,
    game_id: i64,
    ply: &PlyRecord,
    verdict: &CallVerdict<'_>,
) -> Result<(), StoreError> {
    let what = || ply_what(game_id, ply.ply);
    let changed = super::calls::update_verdict(conn, verdict).context(what)?;
    if changed == 0 {
        return Err(StoreError::NotFound {
            what: format!("llm call {}", verdict.call_id),
        });
    }
    insert_ply(conn, game_id, ply).context(what)?;
    Ok(())
}

/// What storing a ply with its call's verdict is called in its errors.
fn ply_what(game_id: i64, ply: u32) -> String {
    format!("record ply {ply} of game {game_id} and its call's verdict")
}

/// Inserts one move of a game.
fn insert_ply(conn: &Conn<'_>, game_id: i64, ply: &PlyRecord) -> DbResult<usize> {
    conn.execute(
        "INSERT INTO plies (game_id, ply, fen_before, uci, san, player, attempts, elapsed_ms,
            clock_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            game_id,
            ply.ply,
            ply.fen_before,
            ply.uci,
            ply.san,
            ply.player,
            ply.attempts,
            sql_u64(ply.elapsed_ms),
            ply.clock_ms.map(sql_u64),
        ],
    )
}

pub(super) const GAME_COLUMNS: &str =
    "g.id, g.tournament_id, g.idx, g.round, g.white, g.black, g.start_fen,
    g.opening_moves, g.opening_label, g.status, g.result, g.termination, g.reason, g.script_hash,
    g.generation, g.started_at, g.finished_at, g.error,
    (SELECT COUNT(*) FROM plies p WHERE p.game_id = g.id), g.error_kind, g.replay_of,
    COALESCE(g.slot, g.idx), g.variant,
    (SELECT v.result FROM limit_verdicts v WHERE v.game_id = g.id)";

/// How many columns [`GAME_COLUMNS`] has: a query that selects more after them starts there.
pub(super) const GAME_WIDTH: usize = 24;

/// The stored result of a void game: finished, but counting for nobody (PGN's "no result").
pub const VOID_RESULT: &str = "*";

impl GameRow {
    /// Whether the game finished void: it ended without a result and counts for nobody (in
    /// ratings, scores and standings' W/D/L); its termination says why.
    pub fn is_void(&self) -> bool {
        self.status == GameStatus::Finished && self.result.as_deref() == Some(VOID_RESULT)
    }

    /// Whether the game is void because the harness failed (an engine crashed or hung), so that
    /// its slot is played again: see [`Termination::is_harness_fault`].
    pub fn is_harness_void(&self) -> bool {
        self.is_void()
            && self
                .termination
                .as_deref()
                .and_then(|t| t.parse::<Termination>().ok())
                .is_some_and(Termination::is_harness_fault)
    }
}

/// The games a format and the ratings see: every game except the void attempts a later game
/// replays (a replay stands in its slot's place), ordered by slot.
pub fn current_attempts(games: &[GameRow]) -> Vec<&GameRow> {
    let replayed: HashSet<i64> = games.iter().filter_map(|g| g.replay_of).collect();
    let mut current: Vec<&GameRow> = games.iter().filter(|g| !replayed.contains(&g.id)).collect();
    current.sort_by_key(|g| (g.slot, g.index));
    current
}

pub(super) fn game_row(r: &Row<'_>) -> DbResult<GameRow> {
    let status: String = r.get(9)?;
    Ok(GameRow {
        id: r.get(0)?,
        tournament: r.get(1)?,
        index: r.get(2)?,
        round: r.get(3)?,
        white: r.get(4)?,
        black: r.get(5)?,
        start_fen: r.get(6)?,
        opening_moves: parse_moves(7, &r.get::<_, String>(7)?)?,
        opening_label: r.get(8)?,
        variant: {
            let name: String = r.get(22)?;
            name.parse()
                .map_err(|e: crate::board::UnknownName| bad_column(22, e.to_string()))?
        },
        status: GameStatus::parse(&status)
            .ok_or_else(|| bad_column(9, format!("unknown game status `{status}`")))?,
        result: r.get(10)?,
        termination: r.get(11)?,
        reason: r.get(12)?,
        script_hash: r.get(13)?,
        generation: get_opt_u64(r, 14)?,
        started_at: r.get(15)?,
        finished_at: r.get(16)?,
        error: r.get(17)?,
        ply_count: r.get(18)?,
        error_kind: match r.get::<_, Option<String>>(19)? {
            None => None,
            Some(kind) => Some(
                ErrorKind::parse(&kind)
                    .ok_or_else(|| bad_column(19, format!("unknown error kind `{kind}`")))?,
            ),
        },
        replay_of: r.get(20)?,
        slot: r.get(21)?,
        at_limit: r.get(23)?,
    })
}

pub(super) fn parse_moves(column: usize, json: &str) -> DbResult<Vec<String>> {
    serde_json::from_str(json).map_err(|e| {
        bad_column(
            column,
            format!("opening moves `{json}` are not a JSON list: {e}"),
        )
    })
}

fn moves_json(moves: &[String]) -> String {
    serde_json::to_string(moves).expect("a list of strings always serialises")
}

/// How a schedule mismatch shows a game: the pairing and where it starts.
fn describe(
    white: &str,
    black: &str,
    start_fen: Option<&str>,
    moves: &[String],
    variant: Variant,
) -> String {
    let start = start_fen.map_or_else(|| "the standard position".to_owned(), |f| format!("`{f}`"));
    let mut text = format!("`{white}` vs `{black}` from {start}");
    if variant != Variant::Standard {
        text.push_str(&format!(" ({variant})"));
    }
    if !moves.is_empty() {
        text.push_str(&format!(" after {}", moves.join(" ")));
    }
    text
}

impl Store {
    /// Stores the schedule of a tournament in one transaction: a game whose index is new is inserted,
    /// a game already stored is kept as it is (with its status and plies), so scheduling again on
    /// resume is a no-op.
    ///
    /// # Errors
    ///
    /// [`StoreError::ScheduleMismatch`] if a stored game has other players, start position or opening
    /// moves than requested (the script's schedule changed under a stored tournament);
    /// [`StoreError::NotFound`] if the tournament does not exist; [`StoreError::UnknownPlayer`] if a
    /// game names a player not added with [`Store::upsert_player`]; [`StoreError::Database`] on a
    /// database failure. Nothing is stored on error.
    pub fn schedule_games(
        &self,
        tournament: i64,
        games: &[ScheduledGame],
    ) -> Result<(), StoreError> {
        self.schedule(tournament, None, games).map(|_| ())
    }

    /// Stores `games` as the next ones of `tournament` only if it still has exactly `after` games
    /// (counting every attempt), in one transaction; returns whether they were stored. This is
    /// how a format's next games are added when several workers share the store: each computes
    /// them from what it read, and only one set, the first, is kept. A worker told `false` reads
    /// the schedule again and asks its format anew.
    ///
    /// # Errors
    ///
    /// As [`Store::schedule_games`].
    pub fn schedule_games_after(
        &self,
        tournament: i64,
        after: usize,
        games: &[ScheduledGame],
    ) -> Result<bool, StoreError> {
        self.schedule(tournament, Some(after), games)
    }

    fn schedule(
        &self,
        tournament: i64,
        after: Option<usize>,
        games: &[ScheduledGame],
    ) -> Result<bool, StoreError> {
        let what = || format!("schedule games of tournament {tournament}");
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        if let Some(after) = after {
            let stored: usize = tx
                .query_row(
                    "SELECT COUNT(*) FROM games WHERE tournament_id = ?1",
                    params![tournament],
                    |r| r.get(0),
                )
                .context(what)?;
            if stored != after {
                return Ok(false);
            }
        }
        let exists = tx
            .query_row(
                "SELECT 1 FROM tournaments WHERE id = ?1",
                params![tournament],
                |_| Ok(()),
            )
            .optional()
            .context(what)?;
        if exists.is_none() {
            return Err(StoreError::NotFound {
                what: format!("tournament {tournament}"),
            });
        }
        let players: HashSet<String> = {
            let mut stmt = tx
                .prepare_cached("SELECT name FROM players WHERE tournament_id = ?1")
                .context(what)?;
            let rows = stmt
                .query_map(params![tournament], |r| r.get(0))
                .context(what)?;
            rows.collect::<DbResult<_>>().context(what)?
        };
        {
            let mut find = tx
                .prepare_cached(
                    "SELECT white, black, start_fen, opening_moves, variant FROM games
                     WHERE tournament_id = ?1 AND idx = ?2",
                )
                .context(what)?;
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO games (tournament_id, idx, round, white, black, start_fen,
                                        opening_moves, opening_label, variant, time_control)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .context(what)?;
            for game in games {
                let what = || format!("schedule game {} of tournament {tournament}", game.index);
                for player in [&game.white, &game.black] {
                    if !players.contains(player) {
                        return Err(StoreError::UnknownPlayer {
                            tournament,
                            index: game.index,
                            player: player.clone(),
                        });
                    }
                }
                let stored = find
                    .query_row(params![tournament, game.index], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, Option<String>>(2)?,
                            parse_moves(3, &r.get::<_, String>(3)?)?,
                            r.get::<_, String>(4)?,
                        ))
                    })
                    .optional()
                    .context(what)?;
                match stored {
                    Some((white, black, start_fen, moves, variant)) => {
                        let variant = variant.parse().unwrap_or_default();
                        if white != game.white
                            || black != game.black
                            || start_fen != game.start_fen
                            || moves != game.opening_moves
                            || variant != game.variant
                        {
                            return Err(StoreError::ScheduleMismatch {
                                index: game.index,
                                stored: describe(
                                    &white,
                                    &black,
                                    start_fen.as_deref(),
                                    &moves,
                                    variant,
                                ),
                                requested: describe(
                                    &game.white,
                                    &game.black,
                                    game.start_fen.as_deref(),
                                    &game.opening_moves,
                                    game.variant,
                                ),
                            });
                        }
                    }
                    None => {
                        insert
                            .execute(params![
                                tournament,
                                game.index,
                                game.round,
                                game.white,
                                game.black,
                                game.start_fen,
                                moves_json(&game.opening_moves),
                                game.opening_label,
                                game.variant.as_str(),
                                game.time_control,
                            ])
                            .context(what)?;
                    }
                }
            }
        }
        tx.commit().context(what)?;
        Ok(true)
    }

    /// Schedules a replay of every game of `tournament` that a harness fault made void and that
    /// no later game replays yet: same round, players, colours, start position and opening,
    /// numbered after the last stored game, with `replay_of` naming the void game and `slot` its
    /// slot. The void game stays as it is, for the record. Returns the replays scheduled now.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure. Nothing is stored on error.
    pub fn schedule_replays(&self, tournament: i64) -> Result<Vec<GameRow>, StoreError> {
        let what = || format!("schedule replays of tournament {tournament}");
        let faults: Vec<String> = Termination::ALL
            .iter()
            .filter(|t| t.is_harness_fault())
            .map(|t| format!("'{}'", t.as_str()))
            .collect();
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        let ids: Vec<i64> = {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT g.id FROM games g
                     WHERE g.tournament_id = ?1 AND g.status = 'finished' AND g.result = '{VOID_RESULT}'
                       AND g.termination IN ({})
                       AND NOT EXISTS (SELECT 1 FROM games r WHERE r.replay_of = g.id)
                     ORDER BY g.idx",
                    faults.join(", ")
                ))
                .context(what)?;
            let rows = stmt
                .query_map(params![tournament], |r| r.get(0))
                .context(what)?;
            rows.collect::<DbResult<_>>().context(what)?
        };
        let mut scheduled = Vec::with_capacity(ids.len());
        for id in ids {
            let replay: i64 = tx
                .query_row(
                    "INSERT INTO games (tournament_id, idx, round, white, black, start_fen,
                                        opening_moves, opening_label, replay_of, slot, time_control)
                     SELECT tournament_id,
                            (SELECT COALESCE(MAX(idx), 0) + 1 FROM games WHERE tournament_id = ?1),
                            round, white, black, start_fen, opening_moves, opening_label, id,
                            COALESCE(slot, idx), time_control
                     FROM games WHERE id = ?2
                     RETURNING id",
                    params![tournament, id],
                    |r| r.get(0),
                )
                .context(what)?;
            scheduled.push(load_game(&tx, replay)?);
        }
        tx.commit().context(what)?;
        Ok(scheduled)
    }

    /// The ids of the earlier attempts of `game`'s slot (void games it, or a replay before it,
    /// plays again), newest first: where a replay looks for replies it may reuse.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn earlier_attempts(&self, game: &GameRow) -> Result<Vec<i64>, StoreError> {
        if game.replay_of.is_none() {
            return Ok(Vec::new());
        }
        let what = || format!("list the earlier attempts of game {}", game.index);
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT id FROM games
                 WHERE tournament_id = ?1 AND COALESCE(slot, idx) = ?2 AND id <> ?3
                 ORDER BY idx DESC",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![game.tournament, game.slot, game.id], |r| r.get(0))
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// The games of a tournament, ordered by index.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn games(&self, tournament: i64) -> Result<Vec<GameRow>, StoreError> {
        let what = || format!("list games of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {GAME_COLUMNS} FROM games g WHERE g.tournament_id = ?1 ORDER BY g.idx"
            ))
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], game_row)
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// One game.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] if there is no such game, [`StoreError::Database`] on a database
    /// failure or unreadable stored data.
    pub fn game(&self, game_id: i64) -> Result<GameRow, StoreError> {
        load_game(&self.conn(), game_id)
    }

    /// Marks a game as running under the scripts with `script_hash` and `generation`. On resume the
    /// game keeps the hash, generation and start time it first started with (those name the scripts
    /// it is pinned to); a previous error is cleared (it stays in the events).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidState`] if the game is finished, [`StoreError::NotFound`] if there is no
    /// such game, [`StoreError::Database`] on a database failure.
    pub fn mark_game_started(
        &self,
        game_id: i64,
        script_hash: &str,
        generation: u64,
    ) -> Result<(), StoreError> {
        self.mark_game_started_under(None, game_id, script_hash, generation)
    }

    pub(super) fn mark_game_started_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        script_hash: &str,
        generation: u64,
    ) -> Result<(), StoreError> {
        let what = || format!("mark game {game_id} started");
        fenced(&self.conn(), fence, what, |conn| {
            let changed = conn
                .execute(
                    "UPDATE games SET status = 'running',
                        script_hash = COALESCE(script_hash, ?2),
                        generation = COALESCE(generation, ?3),
                        started_at = COALESCE(started_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
                        error = NULL, error_kind = NULL
                     WHERE id = ?1 AND status <> 'finished'",
                    params![game_id, script_hash, sql_u64(generation)],
                )
                .context(what)?;
            refused_unless_changed(conn, changed, game_id, "start")
        })
    }

    /// Moves a game that a script error set aside onto newer scripts: it resumes under them
    /// (its own scripts failed in play, so under those it would fail again at the same ply), and
    /// an event records the move. A game set aside for another reason, or not set aside, is left
    /// as it is; the answer says whether the game moved.
    pub(super) fn move_to_newer_scripts_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        script_hash: &str,
        generation: u64,
    ) -> Result<bool, StoreError> {
        let what = || format!("move game {game_id} to scripts {script_hash}");
        fenced(&self.conn(), fence, what, |conn| {
            let changed = conn
                .execute(
                    "UPDATE games SET script_hash = ?2, generation = ?3
                     WHERE id = ?1 AND status = 'errored' AND error_kind = 'script'",
                    params![game_id, script_hash, sql_u64(generation)],
                )
                .context(what)?;
            if changed == 0 {
                return Ok(false);
            }
            conn.execute(
                "INSERT INTO events (tournament_id, game_id, level, kind, message)
                 SELECT tournament_id, id, 'warn', 'game_rescripted', ?2 FROM games WHERE id = ?1",
                params![
                    game_id,
                    format!(
                        "set aside by a script error; resumes under scripts {script_hash} (generation {generation})"
                    )
                ],
            )
            .context(what)?;
            Ok(true)
        })
    }

    /// Records the result of a game: `1-0`, `0-1`, `1/2-1/2`, or [`VOID_RESULT`] for a game that
    /// ended without a result.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidResult`] for a result other than `1-0`, `0-1`, `1/2-1/2` or `*`,
    /// [`StoreError::InvalidState`] if the game is already finished, [`StoreError::NotFound`] if there
    /// is no such game, [`StoreError::Database`] on a database failure.
    pub fn finish_game(
        &self,
        game_id: i64,
        result: &str,
        termination: &str,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        self.finish_game_under(None, game_id, result, termination, reason)
    }

    pub(super) fn finish_game_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        result: &str,
        termination: &str,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        if !matches!(result, "1-0" | "0-1" | "1/2-1/2" | VOID_RESULT) {
            return Err(StoreError::InvalidResult {
                game_id,
                result: result.to_owned(),
            });
        }
        let what = || format!("finish game {game_id}");
        fenced(&self.conn(), fence, what, |conn| {
            let changed = conn
                .execute(
                    "UPDATE games SET status = 'finished', result = ?2, termination = ?3, reason = ?4,
                        finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), error = NULL, error_kind = NULL
                     WHERE id = ?1 AND status <> 'finished'",
                    params![game_id, result, termination, reason],
                )
                .context(what)?;
            refused_unless_changed(conn, changed, game_id, "finish")
        })
    }

    /// Marks an unfinished game as stopped by an error that is not chess; it stays resumable. The
    /// error is also recorded as an `error` event `game_errored` of the tournament, so it survives a
    /// later restart of the game.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidState`] if the game is finished, [`StoreError::NotFound`] if there is no
    /// such game, [`StoreError::Database`] on a database failure.
    pub fn mark_game_errored(
        &self,
        game_id: i64,
        kind: ErrorKind,
        error: &str,
    ) -> Result<(), StoreError> {
        let what = || format!("mark game {game_id} errored");
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        errored(&tx, game_id, kind, error)?;
        tx.commit().context(what)
    }

    pub(super) fn mark_game_errored_under(
        &self,
        fence: &Fence,
        game_id: i64,
        kind: ErrorKind,
        error: &str,
    ) -> Result<(), StoreError> {
        let what = || format!("mark game {game_id} errored");
        fenced(&self.conn(), Some(fence), what, |conn| {
            errored(conn, game_id, kind, error)
        })
    }

    /// Records one move of a game.
    ///
    /// # Errors
    ///
    /// [`StoreError::Duplicate`] if the ply is already stored, [`StoreError::MissingReference`] if
    /// there is no such game, [`StoreError::Database`] on a database failure.
    pub fn record_ply(&self, game_id: i64, ply: &PlyRecord) -> Result<(), StoreError> {
        self.record_ply_under(None, game_id, ply)
    }

    pub(super) fn record_ply_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        ply: &PlyRecord,
    ) -> Result<(), StoreError> {
        let what = || format!("record ply {} of game {game_id}", ply.ply);
        fenced(&self.conn(), fence, what, |conn| {
            insert_ply(conn, game_id, ply).context(what)?;
            Ok(())
        })
    }

    /// Records one move of a game together with the verdict of the model call whose reply became
    /// it (what [`Store::set_llm_call_verdict`] writes), in one transaction: one commit per ply
    /// instead of two. The call's row itself was committed before its reply was read; only what
    /// the game loop made of it waits for the move.
    ///
    /// # Errors
    ///
    /// As [`Store::record_ply`] and [`Store::set_llm_call_verdict`]; on any error neither is
    /// written.
    pub fn record_ply_with_verdict(
        &self,
        game_id: i64,
        ply: &PlyRecord,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        self.record_ply_with_verdict_under(None, game_id, ply, verdict)
    }

    pub(super) fn record_ply_with_verdict_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        ply: &PlyRecord,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        let what = || ply_what(game_id, ply.ply);
        let conn = self.conn();
        if fence.is_some() {
            return fenced(&conn, fence, what, |tx| {
                ply_with_verdict(tx, game_id, ply, verdict)
            });
        }
        // Both writes depend on no read, so no exclusion beyond the transaction is needed (on
        // PostgreSQL, no advisory lock: see `Conn::write_transaction`).
        let tx = conn.write_transaction().context(what)?;
        ply_with_verdict(&tx, game_id, ply, verdict)?;
        tx.commit().context(what)
    }

    /// [`Store::record_ply_with_verdict`] for the game loop, on the async runtime: on SQLite
    /// the two writes are committed with the other games' writes that arrive while a commit is
    /// in flight (group commit; see [`Leased::record_llm_call_grouped`]), and this returns once
    /// they are committed.
    ///
    /// # Errors
    ///
    /// As [`Store::record_ply_with_verdict`]; on any error neither is written, and a failed
    /// write fails only its own caller.
    pub async fn record_ply_with_verdict_grouped(
        &self,
        game_id: i64,
        ply: PlyRecord,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        self.record_ply_with_verdict_grouped_under(None, game_id, ply, verdict)
            .await
    }

    pub(super) async fn record_ply_with_verdict_grouped_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        ply: PlyRecord,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        let Backend::Sqlite(sqlite) = &self.backend else {
            return self.record_ply_with_verdict_under(fence, game_id, &ply, verdict);
        };
        // The fence is checked inside the batch's transaction, in the write's own savepoint.
        let fence = fence.cloned();
        let call_id = verdict.call_id;
        let outcome = verdict.outcome.to_owned();
        let detail = verdict.detail.map(str::to_owned);
        let candidate = verdict.candidate.map(str::to_owned);
        let number = ply.ply;
        sqlite
            .write(
                move |conn| {
                    let verdict = CallVerdict {
                        call_id,
                        outcome: &outcome,
                        detail: detail.as_deref(),
                        candidate: candidate.as_deref(),
                    };
                    if let Some(fence) = &fence {
                        check_fence(conn, fence)?;
                    }
                    ply_with_verdict(conn, game_id, &ply, &verdict)
                },
                move || ply_what(game_id, number),
            )
            .await
    }

    /// The stored moves of a game, in ply order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn plies(&self, game_id: i64) -> Result<Vec<PlyRecord>, StoreError> {
        let what = || format!("read plies of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT ply, fen_before, uci, san, player, attempts, elapsed_ms, clock_ms FROM plies
                 WHERE game_id = ?1 ORDER BY ply",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![game_id], |r| {
                Ok(PlyRecord {
                    ply: r.get(0)?,
                    fen_before: r.get(1)?,
                    uci: r.get(2)?,
                    san: r.get(3)?,
                    player: r.get(4)?,
                    attempts: r.get(5)?,
                    elapsed_ms: get_u64(r, 6)?,
                    clock_ms: r.get::<_, Option<i64>>(7)?.map(|v| v.max(0) as u64),
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Records the clocks a game plays on (JSON, see the schema's version 7) unless it has some
    /// already, and returns the stored ones: a resumed game keeps the clocks it started with.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn game_time_control(
        &self,
        game_id: i64,
        time_control: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        self.game_time_control_under(None, game_id, time_control)
    }

    pub(super) fn game_time_control_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        time_control: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        let what = || format!("record the time control of game {game_id}");
        fenced(&self.conn(), fence, what, |conn| {
            conn.execute(
                "UPDATE games SET time_control = COALESCE(time_control, ?2) WHERE id = ?1",
                params![game_id, time_control],
            )
            .context(what)
        })?;
        self.stored_time_control(game_id)
    }

    /// The clocks stored with a game (JSON, see the schema's version 7), `None` for an untimed
    /// game; reads only.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn stored_time_control(&self, game_id: i64) -> Result<Option<String>, StoreError> {
        self.conn()
            .query_row(
                "SELECT time_control FROM games WHERE id = ?1",
                params![game_id],
                |r| r.get(0),
            )
            .context(|| format!("read the time control of game {game_id}"))
    }
}

fn load_game(conn: &Conn<'_>, game_id: i64) -> Result<GameRow, StoreError> {
    conn.query_row(
        &format!("SELECT {GAME_COLUMNS} FROM games g WHERE g.id = ?1"),
        params![game_id],
        game_row,
    )
    .optional()
    .context(|| format!("read game {game_id}"))?
    .ok_or_else(|| StoreError::NotFound {
        what: format!("game {game_id}"),
    })
}

/// Turns a status update that matched no row into the reason: no such game, or a finished one.
/// Marks game `game_id` errored and records the error as an event, on `conn` (in a transaction).
fn errored(conn: &Conn<'_>, game_id: i64, kind: ErrorKind, error: &str) -> Result<(), StoreError> {
    let what = || format!("mark game {game_id} errored");
    let changed = conn
        .execute(
            "UPDATE games SET status = 'errored', error = ?2, error_kind = ?3
             WHERE id = ?1 AND status <> 'finished'",
            params![game_id, error, kind.as_str()],
        )
        .context(what)?;
    refused_unless_changed(conn, changed, game_id, "mark errored")?;
    conn.execute(
        "INSERT INTO events (tournament_id, game_id, level, kind, message)
         SELECT tournament_id, id, 'error', 'game_errored', ?2 FROM games WHERE id = ?1",
        params![game_id, error],
    )
    .context(what)?;
    Ok(())
}

fn refused_unless_changed(
    conn: &Conn<'_>,
    changed: usize,
    game_id: i64,
    action: &'static str,
) -> Result<(), StoreError> {
    if changed > 0 {
        return Ok(());
    }
    let game = load_game(conn, game_id)?;
    Err(StoreError::InvalidState {
        game_id,
        status: game.status,
        action,
    })
}
