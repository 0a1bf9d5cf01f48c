//! What a tournament's model calls have spent so far, for budgets, and what earlier calls of a
//! model answered at length, for dry runs.

use super::{Context, Store, StoreError, get_u64};

/// One player's calls of one model in a tournament (a mixture of agents has one row per model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpend {
    /// The player.
    pub player: String,
    /// The model the calls went to.
    pub model: String,
    /// Calls stored (all games, finished or not: every one was paid for).
    pub calls: u64,
    /// Prompt tokens: as reported, or estimated where the reply carried no usage.
    pub prompt_tokens: u64,
    /// Completion tokens: as reported, or estimated where the reply carried no usage.
    pub completion_tokens: u64,
    /// Calls whose reply carried no usage, counted by the estimate.
    pub estimated_calls: u64,
}

/// Completion lengths of a model's earlier calls with known usage, across the whole store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompletionStats {
    /// Calls with a reported completion length.
    pub calls: u64,
    /// Their mean completion tokens.
    pub mean: f64,
    /// Their longest completion.
    pub max: u64,
}

/// Characters per token of the length estimate used where usage is unknown. Four characters per
/// token is the usual rule of thumb for English text with GPT-style tokenizers; it is applied to
/// the whole request JSON (which adds field names and quoting), so the estimate errs high, as a
/// budget should.
pub const CHARS_PER_TOKEN: u64 = 4;

impl Store {
    /// Spend so far of each player and model in `tournament`, over the stored calls of all its
    /// games (a replay's reused replies were paid once, by the attempt that asked). A call whose reply carried no usage (`NULL` tokens) is counted at an estimate from
    /// its text: the request JSON for the prompt, the reply and reasoning text for the
    /// completion, [`CHARS_PER_TOKEN`] characters per token, and is flagged in
    /// [`ModelSpend::estimated_calls`]. Calls that failed without a reply are stored apart and
    /// not counted (providers do not bill them).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn spend(&self, tournament: i64) -> Result<Vec<ModelSpend>, StoreError> {
        let what = || format!("compute the spend of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT c.player, c.model, COUNT(*),
                    COALESCE(SUM(COALESCE(c.prompt_tokens,
                        (LENGTH(c.request_json) + ?2 - 1) / ?2)), 0),
                    COALESCE(SUM(COALESCE(c.completion_tokens,
                        (LENGTH(COALESCE(c.reply_text, '')) + LENGTH(COALESCE(c.reasoning, ''))
                         + ?2 - 1) / ?2)), 0),
                    COALESCE(SUM(c.prompt_tokens IS NULL OR c.completion_tokens IS NULL), 0)
                 FROM llm_calls c JOIN games g ON g.id = c.game_id
                 WHERE g.tournament_id = ?1 AND c.reused_from IS NULL
                 GROUP BY c.player, c.model
                 ORDER BY c.player, c.model",
            )
            .context(what)?;
        let rows = stmt
            .query_map(rusqlite::params![tournament, CHARS_PER_TOKEN as i64], |r| {
                Ok(ModelSpend {
                    player: r.get(0)?,
                    model: r.get(1)?,
                    calls: get_u64(r, 2)?,
                    prompt_tokens: get_u64(r, 3)?,
                    completion_tokens: get_u64(r, 4)?,
                    estimated_calls: get_u64(r, 5)?,
                })
            })
            .context(what)?;
        rows.collect::<rusqlite::Result<_>>().context(what)
    }

    /// The completion lengths of every stored call of `model` with known usage, in any
    /// tournament or evaluation of the store; `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn completion_stats(&self, model: &str) -> Result<Option<CompletionStats>, StoreError> {
        let what = || format!("read the completion lengths of model `{model}`");
        let conn = self.conn();
        let (calls, mean, max): (u64, Option<f64>, Option<i64>) = conn
            .query_row(
                "SELECT COUNT(*), AVG(completion_tokens), MAX(completion_tokens)
                 FROM llm_calls WHERE model = ?1 AND completion_tokens IS NOT NULL",
                [model],
                |r| Ok((get_u64(r, 0)?, r.get(1)?, r.get(2)?)),
            )
            .context(what)?;
        Ok((calls > 0).then(|| CompletionStats {
            calls,
            mean: mean.unwrap_or(0.0),
            max: max.unwrap_or(0).max(0) as u64,
        }))
    }
}
