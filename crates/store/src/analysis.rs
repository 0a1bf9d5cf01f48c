//! Engine analysis: the position cache, per-ply verdicts, per-game accuracy and per-player totals.

use super::db::{DbResult, OptionalExtension, Row, params};

use super::{
    Context, Store, StoreError, bad_column, get_u64,
    leases::{Fence, fenced},
};
use crate::board::Score;

/// The analysis of one ply, as written once both of its positions are analysed.
#[derive(Debug, Clone, PartialEq)]
pub struct PlyAnalysisRecord {
    /// The 0-based ply (a stored ply of the game).
    pub ply: u32,
    /// The engine and its options (see `AnalysisPool::engine_id`).
    pub engine_id: String,
    /// The analysis limits (see `AnalysisLimits::key`).
    pub limits_key: String,
    /// The Win% formula of the Win% columns (`chessarena` or `lichess`).
    pub win_model: String,
    /// The evaluation before the move, the mover's view.
    pub eval_before: Score,
    /// The evaluation after the move, the opponent's view (the side to move then).
    pub eval_after: Score,
    /// The engine's best move before the move, if the position had one.
    pub best: Option<String>,
    /// The engine's principal variation before the move.
    pub pv: Vec<String>,
    /// The top moves before the move, a JSON list of `{uci, score}`.
    pub top_json: String,
    /// The 1-based rank of the played move among the scored moves, if it is among them.
    pub played_rank: Option<u32>,
    /// Whether the played move is among the top `MultiPV` moves.
    pub in_top: bool,
    /// The played move's score for the mover, when a search scored it.
    pub played_score: Option<Score>,
    /// Every legal move with its score (JSON list), when all moves were scored.
    pub all_moves_json: Option<String>,
    /// The mover's Win% before the move.
    pub win_before: f64,
    /// The mover's Win% after the move.
    pub win_after: f64,
    /// The mover's centipawn loss, 0..1000.
    pub cp_loss: u32,
    /// Lichess's accuracy of the move, 0..100.
    pub accuracy: f64,
    /// `opening`, `middlegame` or `endgame`.
    pub phase: String,
    /// `best`, `good`, `inaccuracy`, `mistake`, `blunder` or a terminal label.
    pub classification: String,
}

/// The verdict on a whole game, written when its last ply is analysed.
#[derive(Debug, Clone, PartialEq)]
pub struct GameAnalysisRecord {
    /// The engine and its options.
    pub engine_id: String,
    /// The analysis limits.
    pub limits_key: String,
    /// The Win% formula used for the classification.
    pub win_model: String,
    /// Lichess's game accuracy for White, if White moved.
    pub white_accuracy: Option<f64>,
    /// Lichess's game accuracy for Black, if Black moved.
    pub black_accuracy: Option<f64>,
}

/// One player's analysis totals over a tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerAnalysisRow {
    /// The player's name.
    pub player: String,
    /// Analysed plies the player made.
    pub plies: u64,
    /// Plies whose move was among the engine's top moves.
    pub top_moves: u64,
    /// `top_moves / plies` (ChessArena's `optimal_moves_pct` as a fraction).
    pub top_move_rate: f64,
    /// Plies classified best.
    pub best: u64,
    /// Plies classified good.
    pub good: u64,
    /// Plies classified inaccuracy.
    pub inaccuracy: u64,
    /// Plies classified mistake.
    pub mistake: u64,
    /// Plies classified blunder.
    pub blunder: u64,
    /// Average centipawn loss per ply.
    pub acpl: f64,
    /// Mean of the player's Lichess game accuracies, over games analysed to the end.
    pub accuracy: Option<f64>,
    /// Analysed plies per phase: opening, middlegame, endgame.
    pub phase_plies: [u64; 3],
    /// Blunders per phase: opening, middlegame, endgame.
    pub phase_blunders: [u64; 3],
}

impl PlayerAnalysisRow {
    /// `count` as a fraction of the player's plies (0 without plies).
    pub fn rate(&self, count: u64) -> f64 {
        if self.plies == 0 {
            0.0
        } else {
            count as f64 / self.plies as f64
        }
    }
}

fn split(score: Score) -> (Option<i32>, Option<i32>) {
    match score {
        Score::Cp(cp) => (Some(cp), None),
        Score::Mate(n) => (None, Some(n)),
    }
}

fn join(row: &Row<'_>, cp: usize) -> DbResult<Option<Score>> {
    let (c, m): (Option<i32>, Option<i32>) = (row.get(cp)?, row.get(cp + 1)?);
    Ok(match (c, m) {
        (Some(c), _) => Some(Score::Cp(c)),
        (None, Some(m)) => Some(Score::Mate(m)),
        (None, None) => None,
    })
}

fn required(row: &Row<'_>, cp: usize) -> DbResult<Score> {
    join(row, cp)?.ok_or_else(|| bad_column(cp, "an evaluation is missing".to_owned()))
}

pub(super) fn ply_row(r: &Row<'_>) -> DbResult<PlyAnalysisRecord> {
    let pv: String = r.get(9)?;
    Ok(PlyAnalysisRecord {
        ply: r.get(0)?,
        engine_id: r.get(1)?,
        limits_key: r.get(2)?,
        win_model: r.get(3)?,
        eval_before: required(r, 4)?,
        eval_after: required(r, 6)?,
        best: r.get(8)?,
        pv: serde_json::from_str(&pv)
            .map_err(|e| bad_column(9, format!("pv `{pv}` is not a JSON list: {e}")))?,
        top_json: r.get(10)?,
        played_rank: r.get(11)?,
        in_top: r.get(12)?,
        played_score: join(r, 13)?,
        all_moves_json: r.get(15)?,
        win_before: r.get(16)?,
        win_after: r.get(17)?,
        cp_loss: r.get(18)?,
        accuracy: r.get(19)?,
        phase: r.get(20)?,
        classification: r.get(21)?,
    })
}

impl Store {
    /// The cached engine answer for a position, engine and limits, if any.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn analysis_cache_get(
        &self,
        fen: &str,
        engine_id: &str,
        limits_key: &str,
    ) -> Result<Option<String>, StoreError> {
        self.conn()
            .prepare_cached(
                "SELECT result_json FROM analysis_cache
                 WHERE fen = ?1 AND engine_id = ?2 AND limits_key = ?3",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![fen, engine_id, limits_key], |r| r.get(0))
                    .optional()
            })
            .context(|| format!("read the cached analysis of `{fen}`"))
    }

    /// Caches an engine answer. A second answer for the same key (two runs racing) is ignored: both
    /// came from the same engine and limits.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn analysis_cache_put(
        &self,
        fen: &str,
        engine_id: &str,
        limits_key: &str,
        result_json: &str,
    ) -> Result<(), StoreError> {
        self.conn()
            .prepare_cached(
                "INSERT INTO analysis_cache (fen, engine_id, limits_key, result_json)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (fen, engine_id, limits_key) DO NOTHING",
            )
            .and_then(|mut stmt| stmt.execute(params![fen, engine_id, limits_key, result_json]))
            .context(|| format!("cache the analysis of `{fen}`"))?;
        Ok(())
    }

    /// Records the analysis of one ply.
    ///
    /// # Errors
    ///
    /// [`StoreError::Duplicate`] if the ply is already analysed, [`StoreError::MissingReference`] if
    /// the game has no such ply, [`StoreError::Database`] on a database failure.
    pub fn record_ply_analysis(
        &self,
        game_id: i64,
        a: &PlyAnalysisRecord,
    ) -> Result<(), StoreError> {
        self.record_ply_analysis_under(None, game_id, a)
    }

    pub(super) fn record_ply_analysis_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        a: &PlyAnalysisRecord,
    ) -> Result<(), StoreError> {
        let (before_cp, before_mate) = split(a.eval_before);
        let (after_cp, after_mate) = split(a.eval_after);
        let (played_cp, played_mate) = a.played_score.map_or((None, None), split);
        let pv = serde_json::to_string(&a.pv).expect("a list of strings always serialises");
        let what = || format!("record the analysis of ply {} of game {game_id}", a.ply);
        fenced(&self.conn(), fence, what, |conn| {
            conn.prepare_cached(
                "INSERT INTO ply_analysis (game_id, ply, engine_id, limits_key, win_model,
                    eval_before_cp, eval_before_mate, eval_after_cp, eval_after_mate, best, pv,
                    top_json, played_rank, in_top, played_cp, played_mate, all_moves_json,
                    win_before, win_after, cp_loss, accuracy, phase, classification)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    game_id,
                    a.ply,
                    a.engine_id,
                    a.limits_key,
                    a.win_model,
                    before_cp,
                    before_mate,
                    after_cp,
                    after_mate,
                    a.best,
                    pv,
                    a.top_json,
                    a.played_rank,
                    a.in_top,
                    played_cp,
                    played_mate,
                    a.all_moves_json,
                    a.win_before,
                    a.win_after,
                    a.cp_loss,
                    a.accuracy,
                    a.phase,
                    a.classification,
                ])
            })
            .context(what)?;
            Ok(())
        })
    }

    /// The analysed plies of a game, in ply order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or unreadable stored data.
    pub fn ply_analyses(&self, game_id: i64) -> Result<Vec<PlyAnalysisRecord>, StoreError> {
        let what = || format!("read the analysis of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT ply, engine_id, limits_key, win_model, eval_before_cp, eval_before_mate,
                    eval_after_cp, eval_after_mate, best, pv, top_json, played_rank, in_top,
                    played_cp, played_mate, all_moves_json, win_before, win_after, cp_loss,
                    accuracy, phase, classification
                 FROM ply_analysis WHERE game_id = ?1 ORDER BY ply",
            )
            .context(what)?;
        let rows = stmt.query_map(params![game_id], ply_row).context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Marks a game as fully analysed, with its game accuracies; marking it again replaces them.
    ///
    /// # Errors
    ///
    /// [`StoreError::MissingReference`] if there is no such game, [`StoreError::Database`] on a
    /// database failure.
    pub fn record_game_analysis(
        &self,
        game_id: i64,
        a: &GameAnalysisRecord,
    ) -> Result<(), StoreError> {
        self.record_game_analysis_under(None, game_id, a)
    }

    pub(super) fn record_game_analysis_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        a: &GameAnalysisRecord,
    ) -> Result<(), StoreError> {
        let what = || format!("record the analysis of game {game_id}");
        fenced(&self.conn(), fence, what, |conn| {
            conn.execute(
                "INSERT INTO game_analysis (game_id, engine_id, limits_key, win_model,
                    white_accuracy, black_accuracy)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (game_id) DO UPDATE SET engine_id = excluded.engine_id,
                    limits_key = excluded.limits_key, win_model = excluded.win_model,
                    white_accuracy = excluded.white_accuracy, black_accuracy = excluded.black_accuracy",
                params![
                    game_id,
                    a.engine_id,
                    a.limits_key,
                    a.win_model,
                    a.white_accuracy,
                    a.black_accuracy
                ],
            )
            .context(what)?;
            Ok(())
        })
    }

    /// The verdict on a fully analysed game, if it is.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn game_analysis(&self, game_id: i64) -> Result<Option<GameAnalysisRecord>, StoreError> {
        self.conn()
            .query_row(
                "SELECT engine_id, limits_key, win_model, white_accuracy, black_accuracy
                 FROM game_analysis WHERE game_id = ?1",
                params![game_id],
                |r| {
                    Ok(GameAnalysisRecord {
                        engine_id: r.get(0)?,
                        limits_key: r.get(1)?,
                        win_model: r.get(2)?,
                        white_accuracy: r.get(3)?,
                        black_accuracy: r.get(4)?,
                    })
                },
            )
            .optional()
            .context(|| format!("read the analysis of game {game_id}"))
    }

    /// The ids of a tournament's fully analysed games.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn analysed_games(&self, tournament: i64) -> Result<Vec<i64>, StoreError> {
        let what = || format!("list analysed games of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT a.game_id FROM game_analysis a JOIN games g ON g.id = a.game_id
                 WHERE g.tournament_id = ?1 ORDER BY g.idx",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| r.get(0))
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Per-player analysis totals of a tournament, for every player of the tournament that has an
    /// analysed ply (book plies belong to no player), best accuracy first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn analysis_summary(&self, tournament: i64) -> Result<Vec<PlayerAnalysisRow>, StoreError> {
        let what = || format!("summarise the analysis of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "WITH moves AS (
                    SELECT p.player, a.in_top, a.classification, a.cp_loss, a.phase
                    FROM ply_analysis a
                    JOIN plies p ON p.game_id = a.game_id AND p.ply = a.ply
                    JOIN games g ON g.id = a.game_id
                    WHERE g.tournament_id = ?1
                 ), accuracies AS (
                    SELECT g.white AS player, a.white_accuracy AS accuracy
                    FROM game_analysis a JOIN games g ON g.id = a.game_id
                    WHERE g.tournament_id = ?1
                    UNION ALL
                    SELECT g.black, a.black_accuracy
                    FROM game_analysis a JOIN games g ON g.id = a.game_id
                    WHERE g.tournament_id = ?1
                 )
                 SELECT m.player, COUNT(*), SUM(m.in_top),
                    SUM(CASE WHEN m.classification = 'best' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.classification = 'good' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.classification = 'inaccuracy' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.classification = 'mistake' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.classification = 'blunder' THEN 1 ELSE 0 END), AVG(m.cp_loss),
                    (SELECT AVG(x.accuracy) FROM accuracies x WHERE x.player = m.player),
                    SUM(CASE WHEN m.phase = 'opening' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.phase = 'middlegame' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.phase = 'endgame' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.phase = 'opening' AND m.classification = 'blunder' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.phase = 'middlegame' AND m.classification = 'blunder' THEN 1 ELSE 0 END),
                    SUM(CASE WHEN m.phase = 'endgame' AND m.classification = 'blunder' THEN 1 ELSE 0 END)
                 FROM moves m
                 WHERE m.player IN (SELECT name FROM players WHERE tournament_id = ?1)
                 GROUP BY m.player
                 ORDER BY 10 DESC, m.player",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| {
                let plies = get_u64(r, 1)?;
                let top_moves = get_u64(r, 2)?;
                Ok(PlayerAnalysisRow {
                    player: r.get(0)?,
                    plies,
                    top_moves,
                    top_move_rate: if plies == 0 {
                        0.0
                    } else {
                        top_moves as f64 / plies as f64
                    },
                    best: get_u64(r, 3)?,
                    good: get_u64(r, 4)?,
                    inaccuracy: get_u64(r, 5)?,
                    mistake: get_u64(r, 6)?,
                    blunder: get_u64(r, 7)?,
                    acpl: r.get(8)?,
                    accuracy: r.get(9)?,
                    phase_plies: [get_u64(r, 10)?, get_u64(r, 11)?, get_u64(r, 12)?],
                    phase_blunders: [get_u64(r, 13)?, get_u64(r, 14)?, get_u64(r, 15)?],
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::{
        PlayerRecord, PlyRecord, ScheduledGame, migrations::MIGRATIONS, schema::APPLICATION_ID,
    };

    fn ply(n: u32, fen: &str, uci: &str, player: &str) -> PlyRecord {
        PlyRecord {
            ply: n,
            fen_before: fen.into(),
            uci: uci.into(),
            san: uci.into(),
            player: player.into(),
            attempts: 1,
            elapsed_ms: 5,
            clock_ms: None,
        }
    }

    fn verdict(n: u32, class: &str, in_top: bool, cp_loss: u32) -> PlyAnalysisRecord {
        PlyAnalysisRecord {
            ply: n,
            engine_id: "sf".into(),
            limits_key: "depth=8 multipv=3".into(),
            win_model: "lichess".into(),
            eval_before: Score::Cp(30),
            eval_after: Score::Mate(-2),
            best: Some("e2e4".into()),
            pv: vec!["e2e4".into(), "e7e5".into()],
            top_json: "[]".into(),
            played_rank: in_top.then_some(1),
            in_top,
            played_score: in_top.then_some(Score::Cp(30)),
            all_moves_json: None,
            win_before: 55.0,
            win_after: 40.0,
            cp_loss,
            accuracy: 70.0,
            phase: "opening".into(),
            classification: class.into(),
        }
    }

    #[test]
    fn a_version_one_store_gains_the_analysis_tables_and_keeps_its_games() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0].sqlite).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;
                 INSERT INTO tournaments (name, script_path, settings_json) VALUES ('old', 'o.lua', '{{}}');"
            ))
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert!(store.find_tournament("old").unwrap().is_some());
        assert_eq!(store.analysis_cache_get("fen", "sf", "k").unwrap(), None);
        let version: i64 = Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, super::super::schema::CURRENT_VERSION);
    }

    #[test]
    fn verdicts_round_trip_and_add_up_per_player() {
        let store = Store::open_in_memory().unwrap();
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        for name in ["a", "b"] {
            store
                .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
                .unwrap();
        }
        store
            .schedule_games(t.id, &[ScheduledGame::new(0, 0, "a", "b")])
            .unwrap();
        let game = store.games(t.id).unwrap()[0].id;
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        for (n, player) in ["book", "b", "a", "b"].iter().enumerate() {
            store
                .record_ply(game, &ply(n as u32, start, "e2e4", player))
                .unwrap();
        }
        let records = [
            verdict(0, "best", true, 0),
            verdict(1, "blunder", false, 400),
            verdict(2, "best", true, 10),
            verdict(3, "good", true, 20),
        ];
        for r in &records {
            store.record_ply_analysis(game, r).unwrap();
        }
        assert!(matches!(
            store.record_ply_analysis(game, &records[0]),
            Err(StoreError::Duplicate { .. })
        ));
        assert_eq!(store.ply_analyses(game).unwrap(), records);

        store
            .analysis_cache_put("fen", "sf", "k", r#"{"x":1}"#)
            .unwrap();
        store
            .analysis_cache_put("fen", "sf", "k", "ignored")
            .unwrap();
        assert_eq!(
            store
                .analysis_cache_get("fen", "sf", "k")
                .unwrap()
                .as_deref(),
            Some(r#"{"x":1}"#)
        );
        assert_eq!(
            store.analysis_cache_get("fen", "sf", "other").unwrap(),
            None
        );

        assert!(store.analysed_games(t.id).unwrap().is_empty());
        let mut verdict = GameAnalysisRecord {
            engine_id: "sf".into(),
            limits_key: "k".into(),
            win_model: "lichess".into(),
            white_accuracy: Some(90.0),
            black_accuracy: Some(60.0),
        };
        store.record_game_analysis(game, &verdict).unwrap();
        verdict.black_accuracy = Some(50.0);
        store.record_game_analysis(game, &verdict).unwrap();
        assert_eq!(store.game_analysis(game).unwrap(), Some(verdict));
        assert_eq!(store.analysed_games(t.id).unwrap(), [game]);

        // The book ply belongs to nobody; b has a blunder and a good move, a one best move.
        let rows = store.analysis_summary(t.id).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        let (a, b) = (&rows[0], &rows[1]);
        assert_eq!(
            (a.player.as_str(), a.plies, a.best, a.top_moves),
            ("a", 1, 1, 1)
        );
        assert_eq!(a.accuracy, Some(90.0));
        assert_eq!(a.acpl, 10.0);
        assert_eq!(
            (b.player.as_str(), b.plies, b.blunder, b.good),
            ("b", 2, 1, 1)
        );
        assert_eq!((b.top_moves, b.top_move_rate), (1, 0.5));
        assert_eq!(b.acpl, 210.0);
        assert_eq!(b.accuracy, Some(50.0));
        assert_eq!(b.rate(b.blunder), 0.5);
        assert_eq!((b.phase_plies, b.phase_blunders), ([2, 0, 0], [1, 0, 0]));
    }
}
