//! What a tournament's model calls have spent so far, for budgets, and what earlier calls of a
//! model answered at length, for dry runs.

use super::{Context, Store, StoreError, get_u64};
use crate::llm::Usage;

/// One player's calls of one model in a tournament (a mixture of agents has one row per model).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpend {
    /// The player.
    pub player: String,
    /// The model the calls went to.
    pub model: String,
    /// Calls stored (all games, finished or not: every one was paid for), and the failed
    /// attempts whose body reported usage or a price (the provider billed them).
    pub calls: u64,
    /// Prompt tokens: as reported, or estimated where the reply carried no usage.
    pub prompt_tokens: u64,
    /// Completion tokens: as reported, or estimated where the reply carried no usage.
    pub completion_tokens: u64,
    /// Calls whose reply carried no usage, counted by the estimate.
    pub estimated_calls: u64,
    /// Calls the provider priced itself.
    pub provider_calls: u64,
    /// What the provider charged for those, in US dollars.
    pub provider_usd: f64,
    /// The summed usage of the other calls (estimates included), for the price table: prompt,
    /// completion, cached, cache-write and reasoning tokens (details unknown count as none).
    pub table_usage: Usage,
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
    /// games. A call whose reply carried no usage (`NULL` tokens) is counted at an estimate from
    /// its text: the request JSON for the prompt, the reply and reasoning text for the
    /// completion, [`CHARS_PER_TOKEN`] characters per token, and is flagged in
    /// [`ModelSpend::estimated_calls`]. A call with the provider's own price is counted at that
    /// price ([`ModelSpend::provider_usd`]); the others' tokens are summed for the price table.
    /// Failed attempts (stored apart) count when their body reported usage or a price, since the
    /// provider then billed them; the others are not counted (providers do not bill them).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn spend(&self, tournament: i64) -> Result<Vec<ModelSpend>, StoreError> {
        let what = || format!("compute the spend of tournament {tournament}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "WITH c AS (
                     SELECT c.player, c.model, c.prompt_tokens AS pt, c.completion_tokens AS ct,
                         c.cached_tokens AS cached, c.cache_write_tokens AS written,
                         c.reasoning_tokens AS reasoning, c.provider_cost_usd AS usd,
                         LENGTH(c.request_json) AS asked,
                         LENGTH(COALESCE(c.reply_text, '')) + LENGTH(COALESCE(c.reasoning, ''))
                             AS answered
                     FROM llm_calls c JOIN games g ON g.id = c.game_id
                     WHERE g.tournament_id = ?1
                     UNION ALL
                     SELECT f.player, f.model, f.prompt_tokens, f.completion_tokens,
                         f.cached_tokens, f.cache_write_tokens, f.reasoning_tokens,
                         f.provider_cost_usd, LENGTH(f.request_json), 0
                     FROM failed_calls f JOIN games g ON g.id = f.game_id
                     WHERE g.tournament_id = ?1
                         AND (f.prompt_tokens IS NOT NULL OR f.provider_cost_usd IS NOT NULL)
                 ), e AS (
                     SELECT player, model, usd, cached, written, reasoning,
                         COALESCE(pt, (asked + ?2 - 1) / ?2) AS p,
                         COALESCE(ct, (answered + ?2 - 1) / ?2) AS k,
                         (pt IS NULL OR ct IS NULL) AS estimated
                     FROM c
                 )
                 SELECT player, model, COUNT(*), COALESCE(SUM(p), 0), COALESCE(SUM(k), 0),
                     COALESCE(SUM(estimated), 0), COALESCE(SUM(usd IS NOT NULL), 0),
                     COALESCE(SUM(usd), 0.0),
                     COALESCE(SUM(CASE WHEN usd IS NULL THEN p END), 0),
                     COALESCE(SUM(CASE WHEN usd IS NULL THEN k END), 0),
                     COALESCE(SUM(CASE WHEN usd IS NULL THEN cached END), 0),
                     COALESCE(SUM(CASE WHEN usd IS NULL THEN written END), 0),
                     COALESCE(SUM(CASE WHEN usd IS NULL THEN reasoning END), 0)
                 FROM e
                 GROUP BY player, model
                 ORDER BY player, model",
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
                    provider_calls: get_u64(r, 6)?,
                    provider_usd: r.get(7)?,
                    table_usage: Usage {
                        prompt_tokens: get_u64(r, 8)?,
                        completion_tokens: get_u64(r, 9)?,
                        total_tokens: get_u64(r, 8)? + get_u64(r, 9)?,
                        cached_tokens: Some(get_u64(r, 10)?),
                        cache_write_tokens: Some(get_u64(r, 11)?),
                        reasoning_tokens: Some(get_u64(r, 12)?),
                    },
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
