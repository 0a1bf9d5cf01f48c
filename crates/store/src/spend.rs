//! What a tournament's model calls have spent so far, for budgets, and what earlier calls of a
//! model answered at length, for dry runs.

use std::collections::BTreeMap;

use super::{
    Context, Store, StoreError,
    db::{Conn, DbResult, OptionalExtension, Row, params},
    get_opt_u64, get_u64,
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

/// A tournament's spend, kept up to date by reading only the calls stored since it was last read
/// ([`Store::refresh_spend`]): what a running tournament's progress line and budgets read every
/// few seconds and before every game, at a cost that does not grow with the tournament.
///
/// Each table's rows are read by id, past the highest id read so far. An id below it that was
/// not there when it was read (a row another worker's transaction had not yet committed, on a
/// shared PostgreSQL store, or an id a failed insert used up) is kept as a hole and looked up
/// again on every refresh, so a row that commits late is still counted, exactly once. A stored
/// call's counted fields never change after it is written, so the sums stay exact.
#[derive(Debug, Clone)]
pub struct SpendTally {
    tournament: i64,
    calls: Watermark,
    failed: Watermark,
    rows: BTreeMap<(String, String), ModelSpend>,
}

/// How far one table has been read: every id up to `last`, except the `holes`.
#[derive(Debug, Clone, Default)]
struct Watermark {
    last: i64,
    holes: Vec<i64>,
}

impl SpendTally {
    /// Nothing read yet of `tournament`'s spend.
    pub fn new(tournament: i64) -> SpendTally {
        SpendTally {
            tournament,
            calls: Watermark::default(),
            failed: Watermark::default(),
            rows: BTreeMap::new(),
        }
    }

    /// The spend read so far, one row per player and model, ordered by player then model.
    pub fn rows(&self) -> impl Iterator<Item = &ModelSpend> {
        self.rows.values()
    }

    fn add(&mut self, row: &CallSpend) {
        let key = (row.player.clone(), row.model.clone());
        let spend = self.rows.entry(key).or_insert_with(|| ModelSpend {
            player: row.player.clone(),
            model: row.model.clone(),
            calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            estimated_calls: 0,
            provider_calls: 0,
            provider_usd: 0.0,
            table_usage: Usage {
                cached_tokens: Some(0),
                cache_write_tokens: Some(0),
                reasoning_tokens: Some(0),
                ..Usage::default()
            },
        });
        // The estimate where usage is unknown: text length over CHARS_PER_TOKEN, rounded up.
        let estimate = |chars: Option<u64>| chars.map_or(0, |c| c.div_ceil(CHARS_PER_TOKEN));
        let prompt = row.prompt_tokens.unwrap_or_else(|| estimate(row.asked));
        let completion = row
            .completion_tokens
            .unwrap_or_else(|| estimate(row.answered));
        spend.calls += 1;
        spend.prompt_tokens += prompt;
        spend.completion_tokens += completion;
        if row.prompt_tokens.is_none() || row.completion_tokens.is_none() {
            spend.estimated_calls += 1;
        }
        match row.provider_usd {
            Some(usd) => {
                spend.provider_calls += 1;
                spend.provider_usd += usd;
            }
            None => {
                let usage = &mut spend.table_usage;
                usage.prompt_tokens += prompt;
                usage.completion_tokens += completion;
                usage.total_tokens += prompt + completion;
                let add = |sum: &mut Option<u64>, v: Option<u64>| {
                    *sum = Some(sum.unwrap_or(0) + v.unwrap_or(0));
                };
                add(&mut usage.cached_tokens, row.cached_tokens);
                add(&mut usage.cache_write_tokens, row.cache_write_tokens);
                add(&mut usage.reasoning_tokens, row.reasoning_tokens);
            }
        }
    }
}

/// One stored call as the spend counts it.
#[derive(Debug, Clone)]
struct CallSpend {
    id: i64,
    /// Whether it counts for the tally's tournament: one of its games' calls, not a replay's
    /// reused reply (paid once, by the attempt that asked), or one of its failed attempts whose
    /// body reported usage or a price (the provider billed it).
    counted: bool,
    player: String,
    model: String,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    provider_usd: Option<f64>,
    /// Characters of the request, where the prompt tokens are unknown.
    asked: Option<u64>,
    /// Characters of the reply and reasoning, where the completion tokens are unknown.
    answered: Option<u64>,
}

/// The columns of [`CallSpend`] from `llm_calls c` joined with its game `g`; `?2` is the
/// tournament. Lengths are taken only where an estimate needs them.
const CALL_SPEND_COLUMNS: &str = "c.id,
    CASE WHEN g.tournament_id = ?2 AND c.reused_from IS NULL THEN 1 ELSE 0 END,
    c.player, c.model, c.prompt_tokens, c.completion_tokens, c.cached_tokens,
    c.cache_write_tokens, c.reasoning_tokens, c.provider_cost_usd,
    CASE WHEN c.prompt_tokens IS NULL THEN LENGTH(c.request_json) END,
    CASE WHEN c.completion_tokens IS NULL
        THEN LENGTH(COALESCE(c.reply_text, '')) + LENGTH(COALESCE(c.reasoning, '')) END
    FROM llm_calls c LEFT JOIN games g ON g.id = c.game_id";

/// The same from `failed_calls f`: a failed attempt has no reply to estimate from.
const FAILED_SPEND_COLUMNS: &str = "f.id,
    CASE WHEN g.tournament_id = ?2
        AND (f.prompt_tokens IS NOT NULL OR f.provider_cost_usd IS NOT NULL) THEN 1 ELSE 0 END,
    f.player, f.model, f.prompt_tokens, f.completion_tokens, f.cached_tokens,
    f.cache_write_tokens, f.reasoning_tokens, f.provider_cost_usd,
    CASE WHEN f.prompt_tokens IS NULL THEN LENGTH(f.request_json) END, 0
    FROM failed_calls f LEFT JOIN games g ON g.id = f.game_id";

fn call_spend(r: &Row<'_>) -> DbResult<CallSpend> {
    Ok(CallSpend {
        id: r.get(0)?,
        counted: r.get::<_, i64>(1)? != 0,
        player: r.get(2)?,
        model: r.get(3)?,
        prompt_tokens: get_opt_u64(r, 4)?,
        completion_tokens: get_opt_u64(r, 5)?,
        cached_tokens: get_opt_u64(r, 6)?,
        cache_write_tokens: get_opt_u64(r, 7)?,
        reasoning_tokens: get_opt_u64(r, 8)?,
        provider_usd: r.get(9)?,
        asked: get_opt_u64(r, 10)?,
        answered: get_opt_u64(r, 11)?,
    })
}

/// Reads one table's rows past `mark` (and its holes) for `tournament`: the rows, and the
/// watermark they move it to. Changes nothing, so that a failure leaves the tally as it was.
fn read_since(
    conn: &Conn<'_>,
    columns: &str,
    id: &str,
    mark: &Watermark,
    tournament: i64,
) -> DbResult<(Vec<CallSpend>, Watermark)> {
    let mut found = Vec::new();
    conn.for_each_row(
        &format!("SELECT {columns} WHERE {id} > ?1 ORDER BY {id}"),
        params![mark.last, tournament],
        |r| {
            found.push(call_spend(r)?);
            Ok(true)
        },
    )?;
    let mut next = Watermark {
        last: found.last().map_or(mark.last, |c| c.id),
        holes: Vec::new(),
    };
    // Ids skipped past the old watermark: not committed yet, or never to be.
    let mut expected = mark.last + 1;
    for c in &found {
        next.holes.extend(expected..c.id);
        expected = c.id + 1;
    }
    let by_id = format!("SELECT {columns} WHERE {id} = ?1");
    for &hole in &mark.holes {
        match conn
            .query_row(&by_id, params![hole, tournament], call_spend)
            .optional()?
        {
            Some(c) => found.push(c),
            None => next.holes.push(hole),
        }
    }
    Ok((found, next))
}

impl Store {
    /// Brings `tally` up to date with the calls stored since it was last refreshed (see
    /// [`SpendTally`]); the first refresh reads them all. The counting is
    /// [`Store::spend`]'s.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure; the tally is then as it was.
    pub fn refresh_spend(&self, tally: &mut SpendTally) -> Result<(), StoreError> {
        let what = || format!("compute the spend of tournament {}", tally.tournament);
        let conn = self.conn();
        let (calls, calls_mark) = read_since(
            &conn,
            CALL_SPEND_COLUMNS,
            "c.id",
            &tally.calls,
            tally.tournament,
        )
        .context(what)?;
        let (failed, failed_mark) = read_since(
            &conn,
            FAILED_SPEND_COLUMNS,
            "f.id",
            &tally.failed,
            tally.tournament,
        )
        .context(what)?;
        for c in calls.iter().chain(&failed).filter(|c| c.counted) {
            tally.add(c);
        }
        tally.calls = calls_mark;
        tally.failed = failed_mark;
        Ok(())
    }

    /// Spend so far of each player and model in `tournament`, over the stored calls of all its
    /// games (a replay's reused replies were paid once, by the attempt that asked), ordered by
    /// player then model. A call whose reply carried no usage (`NULL` tokens) is counted at an
    /// estimate from its text: the request JSON for the prompt, the reply and reasoning text
    /// for the completion, [`CHARS_PER_TOKEN`] characters per token, and is flagged in
    /// [`ModelSpend::estimated_calls`]. A call with the provider's own price is counted at that
    /// price ([`ModelSpend::provider_usd`]); the others' tokens are summed for the price table.
    /// Failed attempts (stored apart) count when their body reported usage or a price, since the
    /// provider then billed them; the others are not counted (providers do not bill them).
    /// A running tournament reads the same through a [`SpendTally`], which reads only the
    /// calls that are new.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn spend(&self, tournament: i64) -> Result<Vec<ModelSpend>, StoreError> {
        let mut tally = SpendTally::new(tournament);
        self.refresh_spend(&mut tally)?;
        Ok(tally.rows.into_values().collect())
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

    /// The completion lengths of every stored call that player `player` made to `model` with
    /// known usage, in any tournament of the store; `None` when there is none. Only the
    /// player's own calls: another player of the same model may answer at another length (its
    /// mode, prompt or `max_tokens` differ).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn completion_stats(
        &self,
        player: &str,
        model: &str,
    ) -> Result<Option<CompletionStats>, StoreError> {
        let what = || format!("read the completion lengths of player `{player}` (model `{model}`)");
        let conn = self.conn();
        let (calls, mean, max): (u64, Option<f64>, Option<i64>) = conn
            .query_row(
                "SELECT COUNT(*), AVG(completion_tokens), MAX(completion_tokens)
                 FROM llm_calls
                 WHERE player = ?1 AND model = ?2 AND completion_tokens IS NOT NULL",
                params![player, model],
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
