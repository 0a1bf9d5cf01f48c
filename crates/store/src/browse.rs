//! Reading a store a page at a time, for `arena serve`: a tournament's games filtered and paged
//! by their schedule index (keyset paging on the `(tournament_id, idx)` key, so a page costs
//! the same at the start and at the end of 100,000 games), their count, and the small figures
//! a live page polls to see that something changed; and what a leaderboard needs of 100,000
//! games without reading them whole: the rated results streamed in schedule order, the
//! terminations summed by SQL, and the void games alone.

use super::db::{Param, params};

use super::{
    Context, Store, StoreError,
    games::{GAME_COLUMNS, game_row, parse_moves},
};
use crate::GameRow;

/// Which games of a tournament a page shows. Every field narrows; the default shows all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameFilter {
    /// Games this player plays (as either colour, unless `colour` says which).
    pub player: Option<String>,
    /// With `player`: only the games it plays as White (`true`) or Black (`false`).
    pub as_white: Option<bool>,
    /// The result: `1-0`, `0-1`, `1/2-1/2`, `*` (void) or `none` (not finished).
    pub result: Option<String>,
    /// The termination (`checkmate`, `forfeit`, ...); for an unfinished game, its status.
    pub termination: Option<String>,
    /// Text the opening's label contains.
    pub opening: Option<String>,
    /// Only the void games (`true`) or only the others (`false`).
    pub void: Option<bool>,
}

/// Where a page starts: after a game index (the next page) or before one (the previous page).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageFrom {
    /// The first page.
    Start,
    /// The games whose index is above this one.
    After(u32),
    /// The last games whose index is below this one (still listed in index order).
    Before(u32),
}

/// What a live page polls: cheap counts that change with every stored ply, call and result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TournamentProgress {
    /// Games scheduled (every attempt).
    pub games: u64,
    /// Games finished.
    pub finished: u64,
    /// The largest game id (a new game, e.g. a replay, raises it).
    pub last_game: i64,
    /// Each running game: its id, stored plies and stored model calls.
    pub running: Vec<GameProgress>,
}

/// A running game's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GameProgress {
    /// The game id.
    pub game: i64,
    /// Plies stored.
    pub plies: u64,
    /// Model calls stored (a reply is stored before its move).
    pub calls: u64,
}

/// A filter's SQL condition and its parameters, after the tournament id (`?1`).
struct Condition {
    sql: String,
    values: Vec<String>,
}

fn condition(filter: &GameFilter) -> Condition {
    let mut sql = String::new();
    let mut values: Vec<String> = Vec::new();
    let next = |value: &str, values: &mut Vec<String>| {
        values.push(value.to_owned());
        format!("?{}", values.len() + 1)
    };
    if let Some(player) = &filter.player {
        let p = next(player, &mut values);
        match filter.as_white {
            Some(true) => sql.push_str(&format!(" AND g.white = {p}")),
            Some(false) => sql.push_str(&format!(" AND g.black = {p}")),
            None => sql.push_str(&format!(" AND (g.white = {p} OR g.black = {p})")),
        }
    }
    match filter.result.as_deref() {
        None => {}
        Some("none") => sql.push_str(" AND g.result IS NULL"),
        Some(result) => {
            let p = next(result, &mut values);
            sql.push_str(&format!(" AND g.result = {p}"));
        }
    }
    if let Some(termination) = &filter.termination {
        let p = next(termination, &mut values);
        sql.push_str(&format!(" AND COALESCE(g.termination, g.status) = {p}"));
    }
    if let Some(opening) = &filter.opening {
        // LIKE's own wildcards in the user's text match themselves.
        let escaped = opening
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let p = next(&format!("%{escaped}%"), &mut values);
        sql.push_str(&format!(" AND g.opening_label LIKE {p} ESCAPE '\\'"));
    }
    match filter.void {
        None => {}
        Some(true) => sql.push_str(" AND g.result = '*'"),
        Some(false) => sql.push_str(" AND (g.result IS NULL OR g.result <> '*')"),
    }
    Condition { sql, values }
}

impl Store {
    /// One page of a tournament's games that pass `filter`, in index order: at most `limit`
    /// games from `from`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn games_page(
        &self,
        tournament: i64,
        filter: &GameFilter,
        from: PageFrom,
        limit: u32,
    ) -> Result<Vec<GameRow>, StoreError> {
        let what = || format!("list a page of the games of tournament {tournament}");
        let Condition { mut sql, values } = condition(filter);
        let mut params: Vec<&dyn Param> = vec![&tournament];
        params.extend(values.iter().map(|v| v as &dyn Param));
        let bound;
        let order = match from {
            PageFrom::Start => "ASC",
            PageFrom::After(index) => {
                bound = index;
                params.push(&bound);
                sql.push_str(&format!(" AND g.idx > ?{}", params.len()));
                "ASC"
            }
            PageFrom::Before(index) => {
                bound = index;
                params.push(&bound);
                sql.push_str(&format!(" AND g.idx < ?{}", params.len()));
                "DESC"
            }
        };
        params.push(&limit);
        let query = format!(
            "SELECT {GAME_COLUMNS} FROM games g WHERE g.tournament_id = ?1{sql} \
             ORDER BY g.idx {order} LIMIT ?{}",
            params.len()
        );
        let conn = self.conn();
        let mut stmt = conn.prepare(&query).context(what)?;
        let rows = stmt.query_map(&params, game_row).context(what)?;
        let mut games = rows.collect::<Result<Vec<_>, _>>().context(what)?;
        if matches!(from, PageFrom::Before(_)) {
            games.reverse();
        }
        Ok(games)
    }

    /// How many of a tournament's games pass `filter`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn count_games(&self, tournament: i64, filter: &GameFilter) -> Result<u64, StoreError> {
        let what = || format!("count the games of tournament {tournament}");
        let Condition { sql, values } = condition(filter);
        let mut params: Vec<&dyn Param> = vec![&tournament];
        params.extend(values.iter().map(|v| v as &dyn Param));
        let conn = self.conn();
        conn.query_row(
            &format!("SELECT COUNT(*) FROM games g WHERE g.tournament_id = ?1{sql}"),
            &params,
            |r| r.get::<_, u64>(0),
        )
        .context(what)
    }

    /// The counts a live page compares from poll to poll (see [`TournamentProgress`]).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn tournament_progress(&self, tournament: i64) -> Result<TournamentProgress, StoreError> {
        let what = || format!("read the progress of tournament {tournament}");
        let conn = self.conn();
        let (games, finished, last_game) = conn
            .query_row(
                "SELECT COUNT(*), SUM(CASE WHEN status = 'finished' THEN 1 ELSE 0 END), \
                 COALESCE(MAX(id), 0) FROM games WHERE tournament_id = ?1",
                params![tournament],
                |r| {
                    Ok((
                        r.get::<_, u64>(0)?,
                        r.get::<_, Option<u64>>(1)?.unwrap_or(0),
                        r.get::<_, i64>(2)?,
                    ))
                },
            )
            .context(what)?;
        let mut running = Vec::new();
        conn.for_each_row(
            "SELECT g.id, (SELECT COUNT(*) FROM plies p WHERE p.game_id = g.id), \
             (SELECT COUNT(*) FROM llm_calls c WHERE c.game_id = g.id) \
             FROM games g WHERE g.tournament_id = ?1 AND g.status = 'running' ORDER BY g.id",
            params![tournament],
            |r| {
                running.push(GameProgress {
                    game: r.get(0)?,
                    plies: r.get(1)?,
                    calls: r.get(2)?,
                });
                Ok(true)
            },
        )
        .context(what)?;
        Ok(TournamentProgress {
            games,
            finished,
            last_game,
            running,
        })
    }

    /// Hands `f` every rated game of a tournament (finished with a result, the current attempt
    /// of its slot) in schedule order (slot, then game number): the few columns a rating reads,
    /// one row at a time, so that rating 100,000 games holds none of them whole.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn for_each_rated_game(
        &self,
        tournament: i64,
        mut f: impl FnMut(RatedGameRow),
    ) -> Result<(), StoreError> {
        let what = || format!("read the rated games of tournament {tournament}");
        self.conn()
            .for_each_row(
                "SELECT g.white, g.black, g.result, g.opening_label, g.start_fen, g.opening_moves \
                 FROM games g WHERE g.tournament_id = ?1 AND g.status = 'finished' \
                 AND g.result IS NOT NULL AND g.result <> '*' \
                 AND NOT EXISTS (SELECT 1 FROM games r WHERE r.replay_of = g.id) \
                 ORDER BY COALESCE(g.slot, g.idx), g.idx",
                params![tournament],
                |r| {
                    let opening_label: Option<String> = r.get(3)?;
                    // A label names the opening alone: most rows skip reading the moves.
                    let opening_moves = if opening_label.is_none() {
                        parse_moves(5, &r.get::<_, String>(5)?)?
                    } else {
                        Vec::new()
                    };
                    f(RatedGameRow {
                        white: r.get(0)?,
                        black: r.get(1)?,
                        result: r.get(2)?,
                        opening_label,
                        start_fen: r.get(4)?,
                        opening_moves,
                    });
                    Ok(true)
                },
            )
            .context(what)
    }

    /// The tournament's game of the highest number that has started (has the hash of the scripts
    /// it ran under), or `None` before any has.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn newest_started_game(&self, tournament: i64) -> Result<Option<GameRow>, StoreError> {
        let what = || format!("find the newest started game of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {GAME_COLUMNS} FROM games g WHERE g.tournament_id = ?1 \
                 AND g.script_hash IS NOT NULL ORDER BY g.idx DESC LIMIT 1"
            ))
            .context(what)?;
        let mut rows = stmt
            .query_map(params![tournament], game_row)
            .context(what)?;
        rows.next().transpose().context(what)
    }

    /// A tournament's finished games counted by (White, Black, result, termination), with their
    /// plies summed: what the terminations table needs, summed by the database.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn termination_counts(&self, tournament: i64) -> Result<Vec<TerminationCount>, StoreError> {
        let what = || format!("count the terminations of tournament {tournament}");
        let mut out = Vec::new();
        self.conn()
            .for_each_row(
                "SELECT g.white, g.black, g.result, g.termination, COUNT(*), \
                 CAST(SUM((SELECT COUNT(*) FROM plies p WHERE p.game_id = g.id)) AS BIGINT) \
                 FROM games g WHERE g.tournament_id = ?1 AND g.status = 'finished' \
                 GROUP BY g.white, g.black, g.result, g.termination \
                 ORDER BY g.white, g.black, g.result, g.termination",
                params![tournament],
                |r| {
                    out.push(TerminationCount {
                        white: r.get(0)?,
                        black: r.get(1)?,
                        result: r.get(2)?,
                        termination: r.get(3)?,
                        games: r.get(4)?,
                        plies: r.get(5)?,
                    });
                    Ok(true)
                },
            )
            .context(what)?;
        Ok(out)
    }

    /// A tournament's void games and the games that replay one, in game order: what the void
    /// games table shows, without the rest.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn void_games(&self, tournament: i64) -> Result<Vec<GameRow>, StoreError> {
        let what = || format!("list the void games of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {GAME_COLUMNS} FROM games g WHERE g.tournament_id = ?1 \
                 AND ((g.status = 'finished' AND g.result = '*') OR g.replay_of IS NOT NULL) \
                 ORDER BY g.idx"
            ))
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], game_row)
            .context(what)?;
        rows.collect::<Result<Vec<_>, _>>().context(what)
    }
}

/// A rated game's players, result and opening ([`Store::for_each_rated_game`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RatedGameRow {
    /// The player with White.
    pub white: String,
    /// The player with Black.
    pub black: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The opening's label, when it came from a book.
    pub opening_label: Option<String>,
    /// The start position, when it is not the standard one.
    pub start_fen: Option<String>,
    /// The opening's moves from the start position (left empty when a label names the
    /// opening).
    pub opening_moves: Vec<String>,
}

/// Finished games of one (White, Black, result, termination) ([`Store::termination_counts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminationCount {
    /// The player with White.
    pub white: String,
    /// The player with Black.
    pub black: String,
    /// The result (`*` for a void game).
    pub result: Option<String>,
    /// How the games ended.
    pub termination: Option<String>,
    /// How many games.
    pub games: u64,
    /// Their plies, summed.
    pub plies: u64,
}
