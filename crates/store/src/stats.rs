//! Statistics computed from the stored games and calls: standings and progress totals.

use std::collections::HashMap;

use super::{
    CUT_OFF_OUTCOME, Context, SAMPLE_OUTCOME, Store, StoreError,
    db::{DbResult, params},
    get_u64,
};

/// Outcomes of LLM calls that count as parse errors in the standings.
const PARSE_ERROR_OUTCOMES: &str = "'no_move_found', 'unparseable', 'wrong_action'";
/// Terminations that count as forfeits in the standings when they lost the game.
const FORFEIT_TERMINATIONS: &str = "'forfeit', 'too_many_wrong_actions', 'max_turns', \
                                    'context_exceeded', 'request_rejected'";
/// Outcomes of LLM calls that count as illegal moves in the standings.
const ILLEGAL_MOVE_OUTCOMES: &str = "'illegal', 'ambiguous', 'wrong_move'";

/// The outcomes of LLM calls that the standings count as protocol failures (parse errors, illegal
/// moves, forbidden reasoning, replies cut off at the token limit), for code outside SQL that must
/// count the same.
pub const PROTOCOL_FAILURE_OUTCOMES: [&str; 8] = [
    "no_move_found",
    "unparseable",
    "wrong_action",
    "illegal",
    "ambiguous",
    "wrong_move",
    "forbidden_reasoning",
    "cut_off",
];

/// One player's line in the standings, over the finished games of a tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct StandingRow {
    /// The player's name.
    pub player: String,
    /// Finished games played, void games left out (they count for nobody).
    pub games: u32,
    /// Void games: finished without a result (see `GameRow::is_void`), in none of the other counts.
    pub voids: u32,
    /// Games won, with either colour.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost, with either colour (forfeits included).
    pub losses: u32,
    /// Wins plus half the draws.
    pub score: f64,
    /// Games lost by a protocol failure (terminations `forfeit`, `too_many_wrong_actions`,
    /// `max_turns`, and `context_exceeded` or `request_rejected` counted as forfeits).
    pub forfeits: u32,
    /// LLM replies in which no move could be read (outcomes `no_move_found`, `unparseable`, and
    /// the agentic mode's `wrong_action`); replies cut off at the token limit are not among them
    /// (see `cut_offs`).
    pub parse_errors: u64,
    /// LLM replies that ended on the token limit without a move that could be read (outcome
    /// `cut_off`). ChessArena and LLM Chess read no finish reason, so their named rates count
    /// these with the parse errors (see [`StandingRow::chessarena_parse_errors`]).
    pub cut_offs: u64,
    /// LLM replies naming an illegal or ambiguous move (outcomes `illegal`, `ambiguous`, and the
    /// agentic mode's `wrong_move`).
    pub illegal_moves: u64,
    /// LLM replies refused for forbidden reasoning (outcome `forbidden_reasoning`).
    pub forbidden_reasoning: u64,
    /// LLM replies that gave the move played (outcome `move`).
    pub accepted_moves: u64,
    /// LLM calls made.
    pub llm_calls: u64,
    /// Of those, self-consistency samples that did not decide their attempt (outcome `sample`):
    /// another sample's reply did, so they are calls but not attempts.
    pub unplayed_samples: u64,
    /// Prompt tokens used, over the calls that reported usage.
    pub prompt_tokens: u64,
    /// Completion tokens used, over the calls that reported usage.
    pub completion_tokens: u64,
    /// Calls whose reply reported no usage: while this is not zero, the token sums are lower
    /// bounds and the player's tokens and cost are unknown.
    pub calls_without_usage: u64,
    /// Games that reached the move limit and have a verdict of the adjudication engine
    /// (`adjudication.move_limit`), kept apart from the official results above.
    pub at_limit: AtLimit,
}

/// A player's games at the move limit as the adjudication engine's evaluation of the final
/// position judges them; their official result (a draw) is unchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AtLimit {
    /// Verdicts won.
    pub wins: u32,
    /// Verdicts drawn.
    pub draws: u32,
    /// Verdicts lost.
    pub losses: u32,
}

impl AtLimit {
    /// Games with a verdict.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
}

impl StandingRow {
    /// ChessArena's legal-move rate of a player that answers through LLM calls: accepted moves
    /// per attempt (the complement of the parse-error, illegal-move and forbidden-reasoning
    /// rates); `None` for players that make no calls. An attempt of a player that votes is its
    /// vote (one decision over several samples), so unplayed samples are not attempts.
    pub fn legal_move_rate(&self) -> Option<f64> {
        let attempts = self.llm_calls.saturating_sub(self.unplayed_samples);
        (attempts > 0).then(|| self.accepted_moves as f64 / attempts as f64)
    }

    /// Parse errors as ChessArena counts them (its `parsing_error`): every reply in which no move
    /// was read, those cut off at the token limit included, since ChessArena does not look at why
    /// a reply ended.
    pub fn chessarena_parse_errors(&self) -> u64 {
        self.parse_errors + self.cut_offs
    }

    /// The share of attempts (calls less a vote's unplayed samples) cut off at the token limit
    /// without a move, in percent; `None` for players that make no calls.
    pub fn cut_off_percent(&self) -> Option<f64> {
        let attempts = self.llm_calls.saturating_sub(self.unplayed_samples);
        (attempts > 0).then(|| 100.0 * self.cut_offs as f64 / attempts as f64)
    }

    /// Completion tokens per accepted move (what the model wrote, reasoning included, for each
    /// move it got played, retries included); `None` without accepted moves or while any call's
    /// usage is unknown.
    pub fn completion_tokens_per_move(&self) -> Option<f64> {
        (self.accepted_moves > 0 && self.calls_without_usage == 0)
            .then(|| self.completion_tokens as f64 / self.accepted_moves as f64)
    }

    /// The score as a percentage of the games played (0 without games).
    pub fn score_percent(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            100.0 * self.score / f64::from(self.games)
        }
    }
}

/// Progress of a tournament over all its games, finished or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Games in the schedule.
    pub games_scheduled: u64,
    /// Games finished.
    pub games_finished: u64,
    /// Games currently errored.
    pub games_errored: u64,
    /// Plies stored.
    pub plies: u64,
    /// LLM calls stored for the tournament's games.
    pub llm_calls: u64,
    /// Prompt tokens of those calls.
    pub prompt_tokens: u64,
    /// Completion tokens of those calls.
    pub completion_tokens: u64,
}

/// One finished game with a result, and how many moves each side's replies got played in it
/// (calls with the outcome `move`; 0 for a side that is not a model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameMoves {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// The result (`1-0`, `0-1`, `1/2-1/2`).
    pub result: String,
    /// How the game ended, if recorded.
    pub termination: Option<String>,
    /// White's replies that became moves.
    pub white_moves: u64,
    /// Black's replies that became moves.
    pub black_moves: u64,
}

/// Per-player sums over the LLM calls of finished games.
#[derive(Default)]
struct CallStats {
    parse_errors: u64,
    cut_offs: u64,
    illegal_moves: u64,
    forbidden_reasoning: u64,
    llm_calls: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    accepted_moves: u64,
    calls_without_usage: u64,
    unplayed_samples: u64,
}

impl Store {
    /// The standings of a tournament over its finished games: one row for every player (players
    /// without finished games get zeros), ordered by score percentage, best first, then by name.
    /// Call statistics count the calls of finished games only, like the results, and each
    /// model answer once: a replay's reused replies count with the attempt that asked for them.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn standings(&self, tournament: i64) -> Result<Vec<StandingRow>, StoreError> {
        let what = || format!("compute standings of tournament {tournament}");
        let conn = self.conn();

        let mut calls: HashMap<String, CallStats> = HashMap::new();
        {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT c.player,
                        COALESCE(SUM(CASE WHEN c.outcome IN ({PARSE_ERROR_OUTCOMES}) THEN 1 ELSE 0 END), 0),
                        COALESCE(SUM(CASE WHEN c.outcome IN ({ILLEGAL_MOVE_OUTCOMES}) THEN 1 ELSE 0 END), 0),
                        COALESCE(SUM(CASE WHEN c.outcome = 'forbidden_reasoning' THEN 1 ELSE 0 END), 0),
                        COUNT(*), COALESCE(SUM(c.prompt_tokens), 0),
                        COALESCE(SUM(c.completion_tokens), 0),
                        COALESCE(SUM(CASE WHEN c.outcome = 'move' THEN 1 ELSE 0 END), 0),
                        COALESCE(SUM(CASE WHEN c.prompt_tokens IS NULL OR c.completion_tokens IS NULL THEN 1 ELSE 0 END), 0),
                        COALESCE(SUM(CASE WHEN c.outcome = '{SAMPLE_OUTCOME}' THEN 1 ELSE 0 END), 0),
                        COALESCE(SUM(CASE WHEN c.outcome = '{CUT_OFF_OUTCOME}' THEN 1 ELSE 0 END), 0)
                     FROM llm_calls c JOIN games g ON g.id = c.game_id
                     WHERE g.tournament_id = ?1 AND g.status = 'finished'
                       AND c.reused_from IS NULL
                     GROUP BY c.player"
                ))
                .context(what)?;
            let rows = stmt
                .query_map(params![tournament], |r| {
                    // Calls without an outcome yet (NULL) count towards none of the kinds.
                    let stats = CallStats {
                        parse_errors: get_u64(r, 1)?,
                        illegal_moves: get_u64(r, 2)?,
                        forbidden_reasoning: get_u64(r, 3)?,
                        llm_calls: get_u64(r, 4)?,
                        prompt_tokens: get_u64(r, 5)?,
                        completion_tokens: get_u64(r, 6)?,
                        accepted_moves: get_u64(r, 7)?,
                        calls_without_usage: get_u64(r, 8)?,
                        unplayed_samples: get_u64(r, 9)?,
                        cut_offs: get_u64(r, 10)?,
                    };
                    Ok((r.get::<_, String>(0)?, stats))
                })
                .context(what)?;
            for row in rows {
                let (player, stats) = row.context(what)?;
                calls.insert(player, stats);
            }
        }

        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT p.name, COALESCE(SUM(CASE WHEN g.result <> '*' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN (g.white = p.name AND g.result = '1-0')
                               OR (g.black = p.name AND g.result = '0-1') THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN g.result = '1/2-1/2' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN (g.white = p.name AND g.result = '0-1')
                               OR (g.black = p.name AND g.result = '1-0') THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN ((g.white = p.name AND g.result = '0-1')
                               OR (g.black = p.name AND g.result = '1-0'))
                              AND g.termination IN ({FORFEIT_TERMINATIONS}) THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN g.result = '*' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN (g.white = p.name AND v.result = '1-0')
                               OR (g.black = p.name AND v.result = '0-1') THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN v.result = '1/2-1/2' THEN 1 ELSE 0 END), 0),
                    COALESCE(SUM(CASE WHEN (g.white = p.name AND v.result = '0-1')
                               OR (g.black = p.name AND v.result = '1-0') THEN 1 ELSE 0 END), 0)
                 FROM players p
                 LEFT JOIN games g ON g.tournament_id = p.tournament_id AND g.status = 'finished'
                                  AND (g.white = p.name OR g.black = p.name)
                 LEFT JOIN limit_verdicts v ON v.game_id = g.id
                 WHERE p.tournament_id = ?1
                 GROUP BY p.id"
            ))
            .context(what)?;
        let rows = stmt
            .query_map(params![tournament], |r| {
                let wins: u32 = r.get(2)?;
                let draws: u32 = r.get(3)?;
                Ok(StandingRow {
                    player: r.get(0)?,
                    games: r.get(1)?,
                    wins,
                    draws,
                    losses: r.get(4)?,
                    score: f64::from(wins) + f64::from(draws) / 2.0,
                    forfeits: r.get(5)?,
                    voids: r.get(6)?,
                    parse_errors: 0,
                    cut_offs: 0,
                    illegal_moves: 0,
                    forbidden_reasoning: 0,
                    accepted_moves: 0,
                    llm_calls: 0,
                    unplayed_samples: 0,
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    calls_without_usage: 0,
                    at_limit: AtLimit {
                        wins: r.get(7)?,
                        draws: r.get(8)?,
                        losses: r.get(9)?,
                    },
                })
            })
            .context(what)?;
        let mut standings = rows.collect::<DbResult<Vec<_>>>().context(what)?;
        for row in &mut standings {
            if let Some(c) = calls.remove(&row.player) {
                row.parse_errors = c.parse_errors;
                row.cut_offs = c.cut_offs;
                row.illegal_moves = c.illegal_moves;
                row.forbidden_reasoning = c.forbidden_reasoning;
                row.llm_calls = c.llm_calls;
                row.unplayed_samples = c.unplayed_samples;
                row.accepted_moves = c.accepted_moves;
                row.prompt_tokens = c.prompt_tokens;
                row.completion_tokens = c.completion_tokens;
                row.calls_without_usage = c.calls_without_usage;
            }
        }
        standings.sort_by(|a, b| {
            b.score_percent()
                .total_cmp(&a.score_percent())
                .then_with(|| a.player.cmp(&b.player))
        });
        Ok(standings)
    }

    /// Every finished game of a tournament that has a result (void games left out), with the moves
    /// each side's model replies got played in it, handed to `each` one at a time in game order
    /// (a tournament of 100,000 games is never held): what tells a game that compared no chess
    /// (see `tournament::degenerate`).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn for_each_game_moves(
        &self,
        tournament: i64,
        mut each: impl FnMut(GameMoves),
    ) -> Result<(), StoreError> {
        let what = || format!("count the model moves of tournament {tournament}");
        self.conn()
            .for_each_row(
                "SELECT g.white, g.black, g.result, g.termination,
                    (SELECT COUNT(*) FROM llm_calls c WHERE c.game_id = g.id
                       AND c.player = g.white AND c.outcome = 'move'),
                    (SELECT COUNT(*) FROM llm_calls c WHERE c.game_id = g.id
                       AND c.player = g.black AND c.outcome = 'move')
                 FROM games g
                 WHERE g.tournament_id = ?1 AND g.status = 'finished' AND g.result <> '*'
                 ORDER BY g.idx",
                params![tournament],
                |r| {
                    each(GameMoves {
                        white: r.get(0)?,
                        black: r.get(1)?,
                        result: r.get(2)?,
                        termination: r.get(3)?,
                        white_moves: get_u64(r, 4)?,
                        black_moves: get_u64(r, 5)?,
                    });
                    Ok(true)
                },
            )
            .context(what)?;
        Ok(())
    }

    /// Progress totals of a tournament, for display on resume.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn totals(&self, tournament: i64) -> Result<Totals, StoreError> {
        self.conn()
            .query_row(
                "SELECT
                    (SELECT COUNT(*) FROM games WHERE tournament_id = ?1),
                    (SELECT COUNT(*) FROM games WHERE tournament_id = ?1 AND status = 'finished'),
                    (SELECT COUNT(*) FROM games WHERE tournament_id = ?1 AND status = 'errored'),
                    (SELECT COUNT(*) FROM plies p JOIN games g ON g.id = p.game_id
                      WHERE g.tournament_id = ?1),
                    COUNT(c.id), COALESCE(SUM(c.prompt_tokens), 0),
                    COALESCE(SUM(c.completion_tokens), 0)
                 FROM llm_calls c JOIN games g ON g.id = c.game_id
                 WHERE g.tournament_id = ?1 AND c.reused_from IS NULL",
                params![tournament],
                |r| {
                    Ok(Totals {
                        games_scheduled: get_u64(r, 0)?,
                        games_finished: get_u64(r, 1)?,
                        games_errored: get_u64(r, 2)?,
                        plies: get_u64(r, 3)?,
                        llm_calls: get_u64(r, 4)?,
                        prompt_tokens: get_u64(r, 5)?,
                        completion_tokens: get_u64(r, 6)?,
                    })
                },
            )
            .context(|| format!("compute totals of tournament {tournament}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failure_list_is_what_the_standings_count() {
        let sql: Vec<String> = [
            PARSE_ERROR_OUTCOMES,
            ILLEGAL_MOVE_OUTCOMES,
            "'forbidden_reasoning'",
            "'cut_off'",
        ]
        .iter()
        .flat_map(|list| list.split(", ").map(|s| s.trim_matches('\'').to_owned()))
        .collect();
        assert_eq!(sql, PROTOCOL_FAILURE_OUTCOMES);
    }
}
