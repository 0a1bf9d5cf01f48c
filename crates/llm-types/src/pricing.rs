//! What a call costs: a table of per-model token prices and the arithmetic over [`Usage`].
//!
//! The built-in table lists a few well-known models at the list prices their providers published,
//! as we read them in 2025-09; prices change, so scripts replace or
//! add entries with [`PriceTable::with`]. Every price is in US dollars per million tokens.
//! Cached prompt tokens (cache reads) and cache writes have their own rates where the provider
//! publishes one (Anthropic's 5-minute cache writes at 1.25 × input, Gemini 2.5's implicit-cache
//! reads at a quarter of input); long-context surcharges and batch discounts are not modelled.
//!
//! A call the provider priced itself (OpenRouter's `usage.cost`) is not priced by the table at
//! all: [`PriceTable::call_cost`] takes the provider's figure and says so ([`CostSource`]).
//!
//! ```
//! use arena_llm_types::{Price, PriceTable, Usage};
//!
//! let prices = PriceTable::built_in().with("my-finetune", Price::new(0.5, 1.5));
//! let usage = Usage { prompt_tokens: 2_000_000, completion_tokens: 1_000_000, ..Usage::default() };
//! assert_eq!(prices.cost(&usage, "my-finetune"), Some(2.5));
//! assert_eq!(prices.cost(&usage, "unknown-model"), None);
//! ```

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Usage;

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt tokens.
    pub input_per_mtok: f64,
    /// Generated tokens.
    pub output_per_mtok: f64,
    /// Reasoning tokens, when billed apart from other output (no major provider does: `None`
    /// bills them as output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_per_mtok: Option<f64>,
    /// Prompt tokens read from the provider's cache; `None` bills them as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
    /// Prompt tokens written to the provider's cache; `None` bills them as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_per_mtok: Option<f64>,
}

impl Price {
    /// A price with input and output rates only.
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        Self {
            input_per_mtok,
            output_per_mtok,
            reasoning_per_mtok: None,
            cached_input_per_mtok: None,
            cache_write_per_mtok: None,
        }
    }

    /// The same price with a rate for cached prompt tokens.
    pub fn cached(self, cached_input_per_mtok: f64) -> Self {
        Self {
            cached_input_per_mtok: Some(cached_input_per_mtok),
            ..self
        }
    }

    /// The same price with a rate for prompt tokens written to the cache.
    #[cfg(test)]
    pub(crate) fn cache_write(self, cache_write_per_mtok: f64) -> Self {
        Self {
            cache_write_per_mtok: Some(cache_write_per_mtok),
            ..self
        }
    }

    /// The same price with a rate for reasoning tokens.
    pub fn reasoning(self, reasoning_per_mtok: f64) -> Self {
        Self {
            reasoning_per_mtok: Some(reasoning_per_mtok),
            ..self
        }
    }

    /// What makes this price unusable, one message per rate: every rate must be a finite number
    /// of at least 0 (a NaN would turn every cost into NaN, and JSON, where the store keeps
    /// settings, cannot even hold one).
    pub fn problems(&self) -> Vec<String> {
        let rates = [
            ("input_per_mtok", Some(self.input_per_mtok)),
            ("output_per_mtok", Some(self.output_per_mtok)),
            ("reasoning_per_mtok", self.reasoning_per_mtok),
            ("cached_input_per_mtok", self.cached_input_per_mtok),
            ("cache_write_per_mtok", self.cache_write_per_mtok),
        ];
        rates
            .into_iter()
            .filter_map(|(name, rate)| {
                let rate = rate?;
                (!rate.is_finite() || rate < 0.0).then(|| {
                    format!("`{name}` must be a finite number of at least 0 (USD per million tokens), not {rate}")
                })
            })
            .collect()
    }

    /// The cost of `usage` at this price, in US dollars. Unknown details (cached, written or
    /// reasoning tokens the response did not report) count as none: plain input and output.
    pub fn cost(&self, usage: &Usage) -> f64 {
        // Counts are clamped so that a server reporting more cached than prompt tokens (or more
        // reasoning than completion tokens) cannot produce a negative part.
        let cached = usage.cached_tokens.unwrap_or(0).min(usage.prompt_tokens);
        let written = usage
            .cache_write_tokens
            .unwrap_or(0)
            .min(usage.prompt_tokens - cached);
        let reasoning = usage
            .reasoning_tokens
            .unwrap_or(0)
            .min(usage.completion_tokens);
        let parts = [
            (usage.prompt_tokens - cached - written, self.input_per_mtok),
            (
                cached,
                self.cached_input_per_mtok.unwrap_or(self.input_per_mtok),
            ),
            (
                written,
                self.cache_write_per_mtok.unwrap_or(self.input_per_mtok),
            ),
            (usage.completion_tokens - reasoning, self.output_per_mtok),
            (
                reasoning,
                self.reasoning_per_mtok.unwrap_or(self.output_per_mtok),
            ),
        ];
        parts
            .iter()
            .map(|&(tokens, rate)| tokens as f64 * rate)
            .sum::<f64>()
            / 1e6
    }
}

/// Prices by model name.
///
/// A model is looked up by its exact name, then without a routing prefix (`openai/gpt-4o` →
/// `gpt-4o`), then by the longest table entry it extends at a `-` (so `claude-sonnet-4-20250514` finds
/// `claude-sonnet-4`, and `gpt-4o-mini-2024-07-18` finds `gpt-4o-mini` rather than `gpt-4o`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    prices: HashMap<String, Price>,
}

/// One built-in price: (model, input, output, cached input, cache write), US dollars per
/// million tokens.
type BuiltInPrice = (&'static str, f64, f64, Option<f64>, Option<f64>);

/// The built-in prices.
const BUILT_IN: &[BuiltInPrice] = &[
    // OpenAI (caching is automatic and writes cost nothing extra)
    ("gpt-4o", 2.50, 10.00, Some(1.25), None),
    ("gpt-4o-mini", 0.15, 0.60, Some(0.075), None),
    ("gpt-4.1", 2.00, 8.00, Some(0.50), None),
    ("gpt-4.1-mini", 0.40, 1.60, Some(0.10), None),
    ("gpt-4.1-nano", 0.10, 0.40, Some(0.025), None),
    ("gpt-5", 1.25, 10.00, Some(0.125), None),
    ("gpt-5-mini", 0.25, 2.00, Some(0.025), None),
    ("gpt-5-nano", 0.05, 0.40, Some(0.005), None),
    ("o3", 2.00, 8.00, Some(0.50), None),
    ("o3-mini", 1.10, 4.40, Some(0.55), None),
    ("o4-mini", 1.10, 4.40, Some(0.275), None),
    // Anthropic (cache reads at a tenth of input, 5-minute cache writes at 1.25 × input)
    ("claude-opus-4", 15.00, 75.00, Some(1.50), Some(18.75)),
    ("claude-opus-4-1", 15.00, 75.00, Some(1.50), Some(18.75)),
    ("claude-sonnet-4", 3.00, 15.00, Some(0.30), Some(3.75)),
    ("claude-sonnet-4-5", 3.00, 15.00, Some(0.30), Some(3.75)),
    ("claude-3-7-sonnet", 3.00, 15.00, Some(0.30), Some(3.75)),
    ("claude-3-5-haiku", 0.80, 4.00, Some(0.08), Some(1.00)),
    // Google (prompts up to 200k tokens; thinking billed as output; implicit-cache reads at a
    // quarter of input)
    ("gemini-2.5-pro", 1.25, 10.00, Some(0.31), None),
    ("gemini-2.5-flash", 0.30, 2.50, Some(0.075), None),
    ("gemini-2.5-flash-lite", 0.10, 0.40, Some(0.025), None),
];

/// Who priced a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostSource {
    /// The provider's own figure in its response (OpenRouter's `usage.cost`).
    Provider,
    /// The price table (built-in, extended by the tournament's `prices`) over the reported
    /// tokens.
    Table,
    /// Neither: no provider figure, and no usage or no price for the model.
    Unknown,
}

impl CostSource {
    /// The name used in exports and reports: `provider`, `table` or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            CostSource::Provider => "provider",
            CostSource::Table => "table",
            CostSource::Unknown => "unknown",
        }
    }
}

/// A call's cost and who priced it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallCost {
    /// US dollars; `None` when unknown.
    pub usd: Option<f64>,
    /// Who priced it.
    pub source: CostSource,
}

impl PriceTable {
    /// A table without prices.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in table of well-known models.
    pub fn built_in() -> Self {
        let prices = BUILT_IN
            .iter()
            .map(|&(model, input, output, cached, written)| {
                let price = Price {
                    cached_input_per_mtok: cached,
                    cache_write_per_mtok: written,
                    ..Price::new(input, output)
                };
                (model.to_owned(), price)
            })
            .collect();
        Self { prices }
    }

    /// The table with `model` priced at `price`, replacing any earlier entry.
    #[must_use]
    pub fn with(mut self, model: impl Into<String>, price: Price) -> Self {
        self.insert(model, price);
        self
    }

    /// Prices `model` at `price`, replacing any earlier entry.
    pub fn insert(&mut self, model: impl Into<String>, price: Price) {
        self.prices.insert(model.into(), price);
    }

    /// The price that applies to `model` (see the type's docs for the lookup).
    pub fn price(&self, model: &str) -> Option<&Price> {
        if let Some(price) = self.prices.get(model) {
            return Some(price);
        }
        let name = model.rsplit_once('/').map_or(model, |(_, name)| name);
        if let Some(price) = self.prices.get(name) {
            return Some(price);
        }
        self.prices
            .iter()
            .filter(|(entry, _)| {
                name.strip_prefix(entry.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
            })
            .max_by_key(|(entry, _)| entry.len())
            .map(|(_, price)| price)
    }

    /// The cost of `usage` for `model` in US dollars, `None` when the table has no price for it.
    pub fn cost(&self, usage: &Usage, model: &str) -> Option<f64> {
        Some(self.price(model)?.cost(usage))
    }

    /// A call's cost: the provider's own figure when it reported one (whatever the table says:
    /// it is what was charged), else the table's price of its usage, else unknown.
    pub fn call_cost(
        &self,
        usage: Option<&Usage>,
        provider_usd: Option<f64>,
        model: &str,
    ) -> CallCost {
        if let Some(usd) = provider_usd {
            return CallCost {
                usd: Some(usd),
                source: CostSource::Provider,
            };
        }
        match usage.and_then(|u| self.cost(u, model)) {
            Some(usd) => CallCost {
                usd: Some(usd),
                source: CostSource::Table,
            },
            None => CallCost {
                usd: None,
                source: CostSource::Unknown,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, cached: u64, completion: u64, reasoning: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt + completion,
            reasoning_tokens: Some(reasoning),
            cached_tokens: Some(cached),
            cache_write_tokens: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn cached_and_reasoning_tokens_use_their_rates() {
        let price = Price::new(2.0, 8.0).cached(0.5).reasoning(20.0);
        // 600k uncached input at 2, 400k cached at 0.5, 100k answer at 8, 50k reasoning at 20.
        let cost = price.cost(&usage(1_000_000, 400_000, 150_000, 50_000));
        assert!(close(cost, 1.2 + 0.2 + 0.8 + 1.0), "{cost}");
        // Without those rates, cached tokens are input and reasoning tokens output.
        let cost = Price::new(2.0, 8.0).cost(&usage(1_000_000, 400_000, 150_000, 50_000));
        assert!(close(cost, 2.0 + 1.2), "{cost}");
        // Inconsistent counts never go negative.
        let cost = Price::new(1.0, 1.0).cost(&usage(10, 50, 10, 50));
        assert!(close(cost, 20.0 / 1e6), "{cost}");
        // Cache writes have their own rate; unknown details are plain input and output.
        let written = Usage {
            cache_write_tokens: Some(200_000),
            ..usage(1_000_000, 400_000, 0, 0)
        };
        let cost = Price::new(2.0, 8.0)
            .cached(0.5)
            .cache_write(2.5)
            .cost(&written);
        assert!(close(cost, 0.8 + 0.2 + 0.5), "{cost}");
        let unknown = Usage {
            reasoning_tokens: None,
            cached_tokens: None,
            ..usage(1_000_000, 0, 1_000_000, 0)
        };
        assert!(close(Price::new(2.0, 8.0).cost(&unknown), 10.0));
    }

    #[test]
    fn the_table_learns_the_cached_input_price_of_the_providers_that_publish_one() {
        let table = PriceTable::built_in();
        // A Gemini 2.5 call with 80 % of its prompt from the implicit cache.
        let u = usage(1_000_000, 800_000, 0, 0);
        let cost = table.cost(&u, "gemini-2.5-flash").unwrap();
        assert!(close(cost, 0.2 * 0.30 + 0.8 * 0.075), "{cost}");
        // Anthropic's cache writes cost more than input.
        let written = Usage {
            cache_write_tokens: Some(1_000_000),
            ..usage(1_000_000, 0, 0, 0)
        };
        let cost = table.cost(&written, "claude-sonnet-4-20250514").unwrap();
        assert!(close(cost, 3.75), "{cost}");
    }

    #[test]
    fn the_provider_s_own_cost_wins_over_the_table() {
        let table = PriceTable::built_in();
        let u = usage(1_000_000, 0, 0, 0);
        let by_provider = table.call_cost(Some(&u), Some(0.42), "gpt-4o");
        assert_eq!(
            (by_provider.usd, by_provider.source),
            (Some(0.42), CostSource::Provider)
        );
        // Even for a model the table does not know, or a reply without usage.
        let unknown_model = table.call_cost(None, Some(0.0), "some/new-model");
        assert_eq!(unknown_model.source, CostSource::Provider);
        let by_table = table.call_cost(Some(&u), None, "gpt-4o");
        assert_eq!(
            (by_table.usd, by_table.source),
            (Some(2.5), CostSource::Table)
        );
        let unknown = table.call_cost(Some(&u), None, "some/new-model");
        assert_eq!((unknown.usd, unknown.source), (None, CostSource::Unknown));
        assert_eq!(
            table.call_cost(None, None, "gpt-4o").source,
            CostSource::Unknown
        );
        assert_eq!(CostSource::Provider.name(), "provider");
    }

    #[test]
    fn looks_up_exact_prefixed_and_dated_names() {
        let table = PriceTable::built_in();
        let input = |model: &str| table.price(model).map(|p| p.input_per_mtok);
        assert_eq!(input("gpt-4o"), Some(2.50));
        assert_eq!(input("openai/gpt-4o"), Some(2.50));
        assert_eq!(input("gpt-4o-mini-2024-07-18"), Some(0.15));
        assert_eq!(input("gpt-4o-2024-08-06"), Some(2.50));
        assert_eq!(input("claude-sonnet-4-20250514"), Some(3.00));
        assert_eq!(input("gemini-2.5-flash-lite"), Some(0.10));
        assert_eq!(input("models/gemini-2.5-pro"), Some(1.25));
        assert_eq!(input("gpt-4oo"), None);
        assert_eq!(input("smollm2-135m-instruct"), None);
    }

    #[test]
    fn scripts_extend_and_override_the_table() {
        let table = PriceTable::built_in()
            .with("smollm2-135m-instruct", Price::new(0.0, 0.0))
            .with("gpt-4o", Price::new(5.0, 15.0));
        let u = usage(1_000_000, 0, 1_000_000, 0);
        assert_eq!(table.cost(&u, "smollm2-135m-instruct"), Some(0.0));
        assert_eq!(table.cost(&u, "gpt-4o"), Some(20.0));
        assert_eq!(PriceTable::new().cost(&u, "gpt-4o"), None);
    }

    #[test]
    fn built_in_prices_are_sane() {
        for &(model, input, output, cached, written) in BUILT_IN {
            assert!(input > 0.0 && output >= input, "{model}");
            assert!(cached.is_none_or(|c| c > 0.0 && c < input), "{model}");
            assert!(written.is_none_or(|w| w > input), "{model}");
        }
    }
}
