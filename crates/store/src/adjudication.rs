//! Adjudication by an engine: its evaluation of each ply's position, and the verdict on games that
//! reached the move limit (kept apart from the official result, which it never changes).

use super::db::{DbResult, OptionalExtension, params};

use super::{
    Context, Store, StoreError, bad_column,
    leases::{Fence, fenced},
};
use crate::board::Score;

/// The adjudication engine's evaluation of the position after one ply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdjudicationEvalRecord {
    /// The 0-based ply whose move led to the position.
    pub ply: u32,
    /// The score of the side to move in that position, as UCI reports it; `None` when the
    /// engine gave none (its search failed).
    pub score: Option<Score>,
    /// The depth the search reached, when the engine said.
    pub depth: Option<u32>,
}

/// What the adjudication engine says of a game that reached the move limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitVerdictRecord {
    /// The result the evaluation gives: `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The evaluation of the final position, White's view.
    pub score: Score,
    /// The threshold that decided it, in centipawns.
    pub threshold_cp: i64,
    /// The engine (`id name` and options).
    pub engine: String,
    /// The search limits (`nodes=20000`).
    pub limits: String,
}

fn score_json(score: &Score) -> String {
    serde_json::to_string(score).expect("a score always serialises")
}

fn parse_score(column: usize, json: &str) -> DbResult<Score> {
    serde_json::from_str(json)
        .map_err(|e| bad_column(column, format!("score `{json}` does not read: {e}")))
}

impl Store {
    /// Records the adjudication engine's evaluation after `eval.ply` (replacing one stored
    /// before, so a ply searched again after a kill keeps one row).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure (an unknown game included).
    pub fn record_adjudication_eval(
        &self,
        game_id: i64,
        eval: &AdjudicationEvalRecord,
    ) -> Result<(), StoreError> {
        self.record_adjudication_eval_under(None, game_id, eval)
    }

    /// [`Store::record_adjudication_eval`], refused when `fence` no longer holds the game.
    pub(super) fn record_adjudication_eval_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        eval: &AdjudicationEvalRecord,
    ) -> Result<(), StoreError> {
        let what = || {
            format!(
                "record the adjudication evaluation of game {game_id}, ply {}",
                eval.ply
            )
        };
        fenced(&self.conn(), fence, what, |conn| {
            conn.prepare_cached(
                "INSERT INTO adjudication_evals (game_id, ply, score, depth)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (game_id, ply)
                 DO UPDATE SET score = excluded.score, depth = excluded.depth",
            )
            .and_then(|mut s| {
                s.execute(params![
                    game_id,
                    eval.ply,
                    eval.score.as_ref().map(score_json),
                    eval.depth
                ])
            })
            .context(what)?;
            Ok(())
        })
    }

    /// The adjudication evaluations of a game, by ply.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or an unreadable score.
    pub fn adjudication_evals(
        &self,
        game_id: i64,
    ) -> Result<Vec<AdjudicationEvalRecord>, StoreError> {
        let what = || format!("read the adjudication evaluations of game {game_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT ply, score, depth FROM adjudication_evals WHERE game_id = ?1 ORDER BY ply",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![game_id], |r| {
                let score: Option<String> = r.get(1)?;
                Ok(AdjudicationEvalRecord {
                    ply: r.get(0)?,
                    score: score.map(|s| parse_score(1, &s)).transpose()?,
                    depth: r.get(2)?,
                })
            })
            .context(what)?;
        rows.collect::<DbResult<_>>().context(what)
    }

    /// Records the verdict on a game that reached the move limit (replacing one stored before).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidResult`] for a result other than `1-0`, `0-1` or `1/2-1/2`,
    /// [`StoreError::Database`] on a database failure.
    pub fn record_limit_verdict(
        &self,
        game_id: i64,
        verdict: &LimitVerdictRecord,
    ) -> Result<(), StoreError> {
        self.record_limit_verdict_under(None, game_id, verdict)
    }

    /// [`Store::record_limit_verdict`], refused when `fence` no longer holds the game.
    pub(super) fn record_limit_verdict_under(
        &self,
        fence: Option<&Fence>,
        game_id: i64,
        verdict: &LimitVerdictRecord,
    ) -> Result<(), StoreError> {
        if !matches!(verdict.result.as_str(), "1-0" | "0-1" | "1/2-1/2") {
            return Err(StoreError::InvalidResult {
                game_id,
                result: verdict.result.clone(),
            });
        }
        let what = || format!("record the move-limit verdict of game {game_id}");
        fenced(&self.conn(), fence, what, |conn| {
            conn.prepare_cached(
                "INSERT INTO limit_verdicts
                    (game_id, result, score, threshold_cp, engine, limits)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (game_id) DO UPDATE SET result = excluded.result,
                    score = excluded.score, threshold_cp = excluded.threshold_cp,
                    engine = excluded.engine, limits = excluded.limits,
                    created_at = excluded.created_at",
            )
            .and_then(|mut s| {
                s.execute(params![
                    game_id,
                    verdict.result,
                    score_json(&verdict.score),
                    verdict.threshold_cp,
                    verdict.engine,
                    verdict.limits
                ])
            })
            .context(what)?;
            Ok(())
        })
    }

    /// The verdict on a game that reached the move limit, if one was recorded.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure or an unreadable score.
    pub fn limit_verdict(&self, game_id: i64) -> Result<Option<LimitVerdictRecord>, StoreError> {
        self.conn()
            .query_row(
                "SELECT result, score, threshold_cp, engine, limits FROM limit_verdicts
                 WHERE game_id = ?1",
                params![game_id],
                |r| {
                    Ok(LimitVerdictRecord {
                        result: r.get(0)?,
                        score: parse_score(1, &r.get::<_, String>(1)?)?,
                        threshold_cp: r.get(2)?,
                        engine: r.get(3)?,
                        limits: r.get(4)?,
                    })
                },
            )
            .optional()
            .context(|| format!("read the move-limit verdict of game {game_id}"))
    }
}
