//! Budgets: what a tournament and each of its players have spent on model calls, and whether a
//! new game may start.
//!
//! Spend comes from the store ([`Store::spend`]), so it carries over when a run resumes and counts
//! every call of every game, finished or set aside (and the failed attempts whose body reported
//! usage: the provider billed them). Tokens are prompt plus completion tokens. Dollars are the
//! provider's own price where the response carried one (OpenRouter's `usage.cost`: what was
//! charged), else the built-in table overlaid with the tournament's `prices`, which prices cached
//! and cache-write tokens at their own rates where it has them. A call whose reply carried no
//! usage is counted at an estimate from its text length (which errs high) and flagged, so an
//! unknown usage never lets a budget be overrun unnoticed.

use std::{
    collections::BTreeMap,
    sync::{Mutex, PoisonError},
};

use crate::spec::{Budget, ModelSpec, PlayerSpec, TournamentSettings, TournamentSpec};
use crate::{
    llm::{PriceTable, reports_its_cost},
    script::{CheckErrors, ScriptError},
    store::{ModelSpend, SpendTally, Store, StoreError},
};

/// The price table of a tournament: the built-in one, overlaid with the script's `prices`.
pub(crate) fn price_table(settings: &TournamentSettings) -> PriceTable {
    let mut table = PriceTable::built_in();
    for (model, price) in &settings.prices {
        table.insert(model.clone(), *price);
    }
    table
}

/// What was spent, by one player or the whole tournament.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Model calls.
    pub calls: u64,
    /// Prompt plus completion tokens (estimated for calls without usage).
    pub tokens: u64,
    /// US dollars: the provider's price of the calls it priced, the table's of the others.
    pub usd: f64,
    /// Calls priced by the provider itself (in `usd`).
    pub provider_calls: u64,
    /// Calls neither the provider nor the price table priced (not in `usd`).
    pub unpriced_calls: u64,
    /// Calls whose usage was unknown and is estimated from text length.
    pub estimated_calls: u64,
}

impl Spend {
    fn add(&mut self, row: &ModelSpend, prices: &PriceTable) {
        self.calls += row.calls;
        self.tokens += row.prompt_tokens + row.completion_tokens;
        self.estimated_calls += row.estimated_calls;
        self.provider_calls += row.provider_calls;
        self.usd += row.provider_usd;
        let table_calls = row.calls - row.provider_calls;
        if table_calls > 0 {
            match prices.cost(&row.table_usage, &row.model) {
                Some(usd) => self.usd += usd,
                None => self.unpriced_calls += table_calls,
            }
        }
    }
}

/// Spend so far of a tournament: in all and by player.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ledger {
    /// The whole tournament.
    pub total: Spend,
    /// By player name (players without calls are absent).
    pub players: BTreeMap<String, Spend>,
}

impl Ledger {
    /// Reads the spend of `tournament` from the store.
    ///
    /// # Errors
    /// A store failure.
    pub fn read(store: &Store, tournament: i64, prices: &PriceTable) -> Result<Ledger, StoreError> {
        let mut tally = SpendTally::new(tournament);
        store.refresh_spend(&mut tally)?;
        Ok(Ledger::of(&tally, prices))
    }

    /// The ledger of what `tally` has read, priced by `prices`.
    pub fn of(tally: &SpendTally, prices: &PriceTable) -> Ledger {
        let mut ledger = Ledger::default();
        for row in tally.rows() {
            ledger.total.add(row, prices);
            ledger
                .players
                .entry(row.player.clone())
                .or_default()
                .add(row, prices);
        }
        ledger
    }

    /// One player's spend (zero when it made no call).
    pub fn player(&self, name: &str) -> Spend {
        self.players.get(name).copied().unwrap_or_default()
    }
}

/// The spend of a running tournament, shared by its progress line and its budget checks: each
/// read takes only the calls stored since the last one ([`SpendTally`]), so reading it every few
/// seconds and before every game costs the same late in a long tournament as early on, and
/// still counts every call.
#[derive(Debug)]
pub(crate) struct LiveLedger {
    tally: Mutex<SpendTally>,
}

impl LiveLedger {
    /// Nothing read yet of `tournament`'s spend.
    pub fn new(tournament: i64) -> LiveLedger {
        LiveLedger {
            tally: Mutex::new(SpendTally::new(tournament)),
        }
    }

    /// The spend so far, including every call stored before this read.
    ///
    /// # Errors
    /// A store failure (the next read tries again from where the last good one ended).
    pub fn read(&self, store: &Store, prices: &PriceTable) -> Result<Ledger, StoreError> {
        let mut tally = self.tally.lock().unwrap_or_else(PoisonError::into_inner);
        store.refresh_spend(&mut tally)?;
        Ok(Ledger::of(&tally, prices))
    }
}

/// A budget that is reached: whose, which limit, and what was spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    /// The player whose budget it is; `None` for the tournament's.
    pub player: Option<String>,
    /// `usd` or `tokens`.
    pub limit: &'static str,
    /// The budget.
    pub budget: f64,
    /// Spent so far.
    pub spent: f64,
    /// Calls of the spend whose usage is estimated.
    pub estimated_calls: u64,
}

impl Reached {
    /// Brings the spend up to `ledger`'s. A budget is checked before a game starts, while other
    /// games still run and call their models; the figure a run reports at its end is the one
    /// the store holds then, not the one seen at the check.
    pub fn settle(&mut self, ledger: &Ledger) {
        let spend = match &self.player {
            Some(name) => ledger.player(name),
            None => ledger.total,
        };
        match self.limit {
            "usd" => self.spent = spend.usd,
            "tokens" => self.spent = spend.tokens as f64,
            // The spend could not be read when the game was held back: nothing to settle.
            _ => return,
        }
        self.estimated_calls = spend.estimated_calls;
    }
}

impl std::fmt::Display for Reached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let whose = match &self.player {
            Some(p) => format!("player `{p}`"),
            None => "the tournament".to_string(),
        };
        let amount = |v: f64| match self.limit {
            "usd" => format!("${v:.4}"),
            _ => format!("{} tokens", v.round() as u64),
        };
        write!(
            f,
            "the {} budget of {whose} is reached: {} spent of {}",
            self.limit,
            amount(self.spent),
            amount(self.budget)
        )?;
        if self.estimated_calls > 0 {
            write!(
                f,
                " ({} call(s) without reported usage counted at a length estimate)",
                self.estimated_calls
            )?;
        }
        Ok(())
    }
}

/// The first limit of `budget` that `spend` reaches.
fn reached(budget: Option<Budget>, spend: Spend, player: Option<&str>) -> Option<Reached> {
    let budget = budget?;
    let make = |limit, budget, spent| Reached {
        player: player.map(str::to_string),
        limit,
        budget,
        spent,
        estimated_calls: spend.estimated_calls,
    };
    if let Some(usd) = budget.usd
        && spend.usd >= usd
    {
        return Some(make("usd", usd, spend.usd));
    }
    if let Some(tokens) = budget.tokens
        && spend.tokens as f64 >= tokens
    {
        return Some(make("tokens", tokens, spend.tokens as f64));
    }
    None
}

/// The budget that forbids a new game between `white` and `black`, if one does: the
/// tournament's first, then each player's.
pub fn blocking(
    spec: &TournamentSpec,
    ledger: &Ledger,
    white: &str,
    black: &str,
) -> Option<Reached> {
    reached(spec.settings.budget, ledger.total, None).or_else(|| {
        [white, black].into_iter().find_map(|name| {
            let budget = spec.player(name).and_then(PlayerSpec::budget);
            reached(budget, ledger.player(name), Some(name))
        })
    })
}

/// Every player's spend in `ledger` as a format sees it, with whether a budget (its own or the
/// tournament's) is reached.
pub(crate) fn format_spend(
    spec: &TournamentSpec,
    ledger: &Ledger,
) -> BTreeMap<String, super::schedule::FormatSpend> {
    let tournament_reached = reached(spec.settings.budget, ledger.total, None).is_some();
    spec.players
        .iter()
        .map(|player| {
            let spend = ledger.player(player.name());
            let own = reached(player.budget(), spend, Some(player.name())).is_some();
            let seen = super::schedule::FormatSpend {
                calls: spend.calls,
                tokens: spend.tokens,
                usd: spend.usd,
                unpriced_calls: spend.unpriced_calls,
                budget_reached: tournament_reached || own,
            };
            (player.name().to_string(), seen)
        })
        .collect()
}

/// Refuses a dollar budget that cannot be measured: one on a player whose model (or one of whose
/// models) has no price, or on a tournament with such a player. A model served by an endpoint
/// that prices every call itself ([`reports_its_cost`]) needs no table price.
///
/// # Errors
/// Each such budget, at the definition it concerns.
pub(crate) fn check_priced(spec: &TournamentSpec, prices: &PriceTable) -> Result<(), CheckErrors> {
    let unpriced = |player: &PlayerSpec| -> Vec<String> {
        let models: Vec<ModelSpec> = match player {
            PlayerSpec::Llm(p) => vec![p.model_spec()],
            PlayerSpec::Moa(p) => p
                .proposers
                .iter()
                .chain([&p.synthesizer])
                .cloned()
                .collect(),
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => Vec::new(),
        };
        models
            .into_iter()
            .filter(|m| prices.price(&m.model).is_none() && !reports_its_cost(&m.base_url))
            .map(|m| m.model)
            .collect()
    };
    let mut errors = Vec::new();
    let tournament_usd = spec.settings.budget.is_some_and(|b| b.usd.is_some());
    for player in &spec.players {
        let own_usd = player.budget().is_some_and(|b| b.usd.is_some());
        if !(own_usd || tournament_usd) {
            continue;
        }
        for model in unpriced(player) {
            let whose = if own_usd { "its" } else { "the tournament's" };
            let at = spec
                .defined_at
                .get(player.name())
                .cloned()
                .unwrap_or_default();
            errors.push(ScriptError::at(
                at,
                format!(
                    "player `{}`: {whose} `budget.usd` needs a price for model `{model}`: add it to the tournament's `prices`",
                    player.name()
                ),
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CheckErrors(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(json: &str) -> Result<Budget, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn budgets_are_checked_strictly() {
        assert!(budget(r#"{"usd": 20, "tokens": 5e6}"#).is_ok());
        for bad in [
            r#"{}"#,
            r#"{"usd": 0}"#,
            r#"{"tokens": -1}"#,
            r#"{"dollars": 5}"#,
        ] {
            assert!(budget(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_budget_is_reached_at_its_limit_and_says_so() {
        let b = budget(r#"{"tokens": 100}"#).ok();
        let spend = |tokens| Spend {
            calls: 1,
            tokens,
            estimated_calls: 1,
            ..Spend::default()
        };
        assert_eq!(reached(b, spend(99), Some("m")), None);
        let hit = reached(b, spend(100), Some("m")).unwrap();
        assert_eq!(
            hit.to_string(),
            "the tokens budget of player `m` is reached: 100 tokens spent of 100 tokens \
             (1 call(s) without reported usage counted at a length estimate)"
        );
        assert_eq!(reached(None, spend(1_000), None), None);
    }

    #[test]
    fn a_reached_budget_settles_on_the_final_spend() {
        let b = budget(r#"{"tokens": 100, "usd": 5}"#).ok();
        let spend = |tokens, usd| Spend {
            calls: 1,
            tokens,
            usd,
            ..Spend::default()
        };
        let mut hit = reached(b, spend(100, 1.0), Some("m")).unwrap();
        let mut ledger = Ledger::default();
        ledger.players.insert("m".into(), spend(130, 1.5));
        ledger.total = spend(999, 9.0);
        hit.settle(&ledger);
        assert_eq!((hit.limit, hit.spent), ("tokens", 130.0));
        let mut whole = reached(b, spend(0, 6.0), None).unwrap();
        whole.settle(&ledger);
        assert_eq!((whole.limit, whole.spent), ("usd", 9.0));
    }
}
