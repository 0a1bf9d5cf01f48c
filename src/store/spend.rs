//! What a tournament's model calls have spent so far, for budgets, and what earlier calls of a
//! model answered at length, for dry runs.

use super::{
    Context, Store, StoreError,
    db::{DbResult, params},
    get_u64,
};
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

/// What a provider charged for a model's earlier calls whose tokens are known, across the whole
/// store: the sums a least-squares fit of its per-token prices needs (see
/// [`ProviderPricing::price`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProviderPricing {
    /// Calls the provider priced.
    pub calls: u64,
    /// What it charged for them, in US dollars.
    pub usd: f64,
    /// Their prompt tokens.
    pub prompt: f64,
    /// Their completion tokens.
    pub completion: f64,
    /// Σ prompt².
    pub pp: f64,
    /// Σ prompt·completion.
    pub pc: f64,
    /// Σ completion².
    pub cc: f64,
    /// Σ usd·prompt.
    pub up: f64,
    /// Σ usd·completion.
    pub uc: f64,
}

impl ProviderPricing {
    /// The provider's effective price: per-token input and output rates fitted by least squares
    /// (cost = a·prompt + b·completion, no intercept) when the calls tell the two apart and both
    /// rates come out at least 0; else one blended rate (dollars over all tokens) for both. The
    /// fitted rates include whatever cache discounts those calls got.
    pub fn price(&self) -> crate::llm::Price {
        let det = self.pp * self.cc - self.pc * self.pc;
        if det > 1e-9 * self.pp * self.cc {
            let a = (self.up * self.cc - self.uc * self.pc) / det;
            let b = (self.uc * self.pp - self.up * self.pc) / det;
            if a >= 0.0 && b >= 0.0 {
                return crate::llm::Price::new(a * 1e6, b * 1e6);
            }
        }
        let tokens = self.prompt + self.completion;
        let rate = if tokens > 0.0 {
            self.usd / tokens * 1e6
        } else {
            0.0
        };
        crate::llm::Price::new(rate, rate)
    }
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
                     WHERE g.tournament_id = ?1 AND c.reused_from IS NULL
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
            .query_map(params![tournament, CHARS_PER_TOKEN as i64], |r| {
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
        rows.collect::<DbResult<_>>().context(what)
    }

    /// What the provider charged for the stored calls of `model` it priced (with known tokens),
    /// in any tournament of the store; `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn provider_pricing(&self, model: &str) -> Result<Option<ProviderPricing>, StoreError> {
        let what = || format!("read the provider's prices of model `{model}`");
        let conn = self.conn();
        let p: ProviderPricing = conn
            .query_row(
                "SELECT COUNT(*), COALESCE(SUM(u), 0.0), COALESCE(SUM(p), 0.0),
                     COALESCE(SUM(k), 0.0), COALESCE(SUM(p * p), 0.0), COALESCE(SUM(p * k), 0.0),
                     COALESCE(SUM(k * k), 0.0), COALESCE(SUM(u * p), 0.0),
                     COALESCE(SUM(u * k), 0.0)
                 FROM (SELECT provider_cost_usd AS u, CAST(prompt_tokens AS REAL) AS p,
                           CAST(completion_tokens AS REAL) AS k
                       FROM llm_calls
                       WHERE model = ?1 AND provider_cost_usd IS NOT NULL
                           AND prompt_tokens IS NOT NULL AND completion_tokens IS NOT NULL)",
                params![model],
                |r| {
                    Ok(ProviderPricing {
                        calls: get_u64(r, 0)?,
                        usd: r.get(1)?,
                        prompt: r.get(2)?,
                        completion: r.get(3)?,
                        pp: r.get(4)?,
                        pc: r.get(5)?,
                        cc: r.get(6)?,
                        up: r.get(7)?,
                        uc: r.get(8)?,
                    })
                },
            )
            .context(what)?;
        Ok((p.calls > 0).then_some(p))
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
                params![model],
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(calls: &[(f64, f64, f64)]) -> crate::llm::Price {
        let mut p = ProviderPricing::default();
        for &(prompt, completion, usd) in calls {
            p.calls += 1;
            p.usd += usd;
            p.prompt += prompt;
            p.completion += completion;
            p.pp += prompt * prompt;
            p.pc += prompt * completion;
            p.cc += completion * completion;
            p.up += usd * prompt;
            p.uc += usd * completion;
        }
        p.price()
    }

    #[test]
    fn the_provider_s_rates_are_fitted_from_its_bills() {
        // $2 and $8 per million tokens, exactly.
        let bill = |p: f64, c: f64| (p, c, (2.0 * p + 8.0 * c) / 1e6);
        let price = fit(&[bill(1000.0, 50.0), bill(1500.0, 20.0), bill(900.0, 300.0)]);
        assert!((price.input_per_mtok - 2.0).abs() < 1e-6, "{price:?}");
        assert!((price.output_per_mtok - 8.0).abs() < 1e-6, "{price:?}");
        // Calls that cannot tell input from output (all alike) get one blended rate.
        let price = fit(&[bill(1000.0, 100.0), bill(1000.0, 100.0)]);
        let blended = (2.0 * 1000.0 + 8.0 * 100.0) / 1100.0;
        assert!((price.input_per_mtok - blended).abs() < 1e-9, "{price:?}");
        assert_eq!(price.input_per_mtok, price.output_per_mtok);
    }
}
