//! `arena run --dry-run`: what a tournament would play and cost, worked out without playing a
//! move, calling a model, probing an endpoint or starting an engine.
//!
//! - **Games** come from the format itself (through [`Rules::format`] and
//!   [`schedule::next_pairings`]). A format that schedules on results (it answers "wait" before
//!   the tournament is complete, as the matchmaker does) cannot be replayed without results: its
//!   figures use the `max_games` bound of its options, spread evenly over the players, and say so.
//! - **Prompt tokens** come from the player's real play mode (through [`Rules::play_mode`] and
//!   [`PlayMode::start`]), rendered at every ply of a seeded random game of `max_plies` plies from
//!   the tournament's first start position, counted with a tokenizer-free estimate:
//!   [`CHARS_PER_TOKEN`] characters per token of message text plus [`TOKENS_PER_MESSAGE`] per
//!   message for the chat format's framing. Random-mover positions keep about as many legal moves
//!   as real games, which is what the longest prompts list.
//! - **Completion tokens** per call: the mean (low end) and the longest (high end) of the
//!   player's own stored calls of the model in the `--db` store when it has some (capped at
//!   `max_tokens`); else `max_tokens`; else [`ASSUMED_COMPLETION`].
//! - **Budgets**: where each `budget` (the tournament's and each player's) would stop the run:
//!   after how many of the games it covers, at the high end of the spend per game (soonest) and
//!   at the low end (latest). A budget is checked before a game starts, so the game that reaches
//!   it is played out and so are the games running beside it.
//! - **Calls**: the low end is one call per move; the high end uses every attempt of every move
//!   (`max_turns` of the mode when it sets one, else `max_attempts`), each retry's prompt
//!   carrying the earlier replies. Games are counted at full length (`max_plies`), so games that
//!   end early by mate or forfeit spend less; with no move limit, [`ASSUMED_PLIES`] are assumed.
//!   A player with `samples = N` makes N calls per attempt (see [`super::vote`]).
//! - **Dollars**: when the `--db` store holds calls of the model that the provider priced itself
//!   (OpenRouter's `usage.cost`), at the provider's own rates fitted to those calls
//!   ([`ProviderPricing::price`]); else from the built-in price table overlaid with the
//!   tournament's `prices`; `None` for a model neither knows.

use std::{collections::BTreeMap, path::Path, sync::Arc};

use rand::{SeedableRng, rngs::StdRng, seq::IndexedRandom};

use super::{
    TournamentError,
    budget::price_table,
    rules::{Rules, ScriptHost},
    schedule::{self, FormatError, FormatGame, FormatState},
    turn::{LegalMoves, PlayMode, TurnContext},
};
use crate::spec::{ModelSpec, PlayerSpec, TournamentSpec};
use crate::{
    board::game::Game,
    llm::{PriceTable, Usage},
    store::{CHARS_PER_TOKEN, ProviderPricing, Store},
};

/// Tokens of framing the chat format adds per message (role markers and separators).
pub const TOKENS_PER_MESSAGE: u64 = 4;
/// Completion tokens assumed per call when neither `max_tokens` nor the store says.
pub(crate) const ASSUMED_COMPLETION: u64 = 1000;
/// Plies per game assumed when the tournament has no move limit.
pub(crate) const ASSUMED_PLIES: u32 = 200;
/// Tokens of the feedback a mode appends after a refused reply, for the high end.
const FEEDBACK_TOKENS: u64 = 40;
/// Format calls a dry run makes at most (a format that never ends is reported as such).
const MAX_FORMAT_CALLS: usize = 10_000;

/// A low and a high figure.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Range {
    /// The low end.
    pub low: f64,
    /// The high end.
    pub high: f64,
}

impl std::ops::AddAssign for Range {
    fn add_assign(&mut self, other: Range) {
        self.low += other.low;
        self.high += other.high;
    }
}

/// One player's expected share of the tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerEstimate {
    /// The player.
    pub name: String,
    /// `llm`, `moa`, `engine` or `random`.
    pub kind: &'static str,
    /// Games it is scheduled to play (an even share of the bound for incremental formats).
    pub games: f64,
    /// Model calls.
    pub calls: Range,
    /// Prompt tokens.
    pub prompt_tokens: Range,
    /// Completion tokens.
    pub completion_tokens: Range,
    /// US dollars; `None` when a model of the player has no price.
    pub usd: Option<Range>,
    /// Mean prompt tokens of a first attempt, over the sampled positions.
    pub prompt_per_call: f64,
    /// Where the completion figures come from.
    pub completion_source: String,
    /// Where the dollar figures come from, for each model priced from the provider's stored
    /// bills (empty when the price table priced them all).
    pub price_source: String,
}

/// Where one limit of a `budget` would stop the run.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetEstimate {
    /// The player whose budget it is; `None` for the tournament's.
    pub player: Option<String>,
    /// `usd` or `tokens`.
    pub limit: &'static str,
    /// The budget.
    pub budget: f64,
    /// The games it covers: the player's, or all of the tournament's.
    pub games: f64,
    /// Games that start before the budget is reached: `low` at the high end of the spend per
    /// game (the budget is reached soonest), `high` at the low end; each at most `games`, which
    /// means the budget is not reached. `None` when the spend cannot be priced.
    pub games_started: Option<Range>,
}

impl BudgetEstimate {
    /// The estimate of `budget` (of `limit`) over `games` games spending `per_game` each.
    fn new(
        player: Option<&str>,
        limit: &'static str,
        budget: f64,
        games: f64,
        per_game: Option<Range>,
    ) -> BudgetEstimate {
        // A game is held back once the spend before it reaches the budget: with `s` a game,
        // `ceil(budget / s)` games start.
        let started = |s: f64| {
            if s <= 0.0 {
                games
            } else {
                (budget / s).ceil().min(games)
            }
        };
        BudgetEstimate {
            player: player.map(str::to_owned),
            limit,
            budget,
            games,
            games_started: per_game.map(|s| Range {
                low: started(s.high),
                high: started(s.low),
            }),
        }
    }
}

/// What a dry run found.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRun {
    /// Games scheduled (the bound, for an incremental format).
    pub games: u64,
    /// Set when the format schedules on results: how the game count was bounded.
    pub incremental: Option<String>,
    /// Plies per game the figures assume.
    pub plies_per_game: u32,
    /// Per player, in script order.
    pub players: Vec<PlayerEstimate>,
    /// Sum over players.
    pub tokens: Range,
    /// Sum over players; `None` when a player's cost is unknown.
    pub usd: Option<Range>,
    /// For an experiment (`arena.experiment{}`): the SPRT's expected length at a few true
    /// differences.
    pub experiment: Vec<super::experiment::PlanRow>,
    /// Where each budget would stop the run: the tournament's first, then the players' in
    /// script order, each limit (`usd`, `tokens`) apart.
    pub budgets: Vec<BudgetEstimate>,
}

/// Works out what the tournament of `script` would play and cost. `db`, when it names an
/// existing store, lends the completion lengths of earlier calls of the same models (it is only
/// read).
///
/// # Errors
/// The script does not load, its openings cannot be read, or its format fails.
pub fn dry_run(
    script: &Path,
    db: Option<&Path>,
    host: Arc<dyn ScriptHost>,
) -> Result<DryRun, TournamentError> {
    let rules = host.load(script, 1)?;
    let spec = rules.spec().clone();
    let settings = &spec.settings;
    let at = spec.defined_at.get("").cloned().unwrap_or_default();
    let openings = schedule::load_openings(
        settings.openings.as_ref(),
        rules.script_dir(),
        settings.seed,
    )
    .map_err(|source| TournamentError::Openings { at, source })?;
    let store = match db {
        Some(path) if crate::store::location_exists(path) => Some(Store::open(path)?),
        _ => None,
    };

    // An experiment's design rides in its format options (`arena.experiment{}` puts it there).
    let design = settings
        .format_options
        .as_ref()
        .and_then(|o| o.get("experiment"))
        .filter(|_| settings.format == "experiment")
        .and_then(|d| serde_json::from_value::<super::experiment::Design>(d.clone()).ok());
    let (games, incremental, drawn) = schedule_all(rules.as_ref(), &spec, openings.len() as u32)?;
    let total_games = games.len() as u64;
    let mut per_player: BTreeMap<&str, f64> = BTreeMap::new();
    let (total_games, incremental) = match (incremental, &design) {
        // Games drawn one after another decide an SPRT early (or never), so the drawn schedule
        // says nothing of an experiment's length: it is counted at its most, every arm to its
        // cap, as its own table of expected lengths is.
        (_, Some(design)) => {
            let (games, share) = experiment_most_games(design);
            for (player, n) in share {
                if let Some(p) = spec.players.iter().find(|p| p.name() == player) {
                    per_player.insert(p.name(), n);
                }
            }
            let note = match design.sprt {
                Some(_) => format!(
                    "an experiment stops each arm at its test's decision: counted at its most, {} pairs per arm (`max_pairs`); the expected lengths are below",
                    design.cap()
                ),
                None => format!("a fixed-size experiment: {} pairs per arm", design.cap()),
            };
            (games, Some(note))
        }
        (None, None) => {
            for g in &games {
                *per_player.entry(&g.white).or_default() += 1.0;
                *per_player.entry(&g.black).or_default() += 1.0;
            }
            let note = drawn.then(|| drawn_note(&settings.format));
            (total_games, note)
        }
        (Some(bound), None) => {
            let n = spec.players.len().max(1) as f64;
            let bound_games = bound.unwrap_or(total_games);
            for p in &spec.players {
                per_player.insert(p.name(), 2.0 * bound_games as f64 / n);
            }
            let note = match bound {
                Some(b) => format!(
                    "the format schedules on results: {b} games is its `max_games` bound (it may stop sooner), spread evenly over the players"
                ),
                None => format!(
                    "the format schedules on results and sets no `max_games`: only the {total_games} games it schedules up front are counted"
                ),
            };
            (bound_games, Some(note))
        }
    };

    let plies = if settings.max_plies == 0 {
        ASSUMED_PLIES
    } else {
        settings.max_plies
    };
    let start_fen = openings.first().and_then(|o| o.fen.clone());
    let variant = openings.first().map(|o| o.variant).unwrap_or_default();
    let prices = price_table(settings);
    let mut players = Vec::new();
    for player in &spec.players {
        let games = per_player.get(player.name()).copied().unwrap_or(0.0);
        players.push(estimate_player(
            rules.as_ref(),
            player,
            games,
            plies,
            (variant, start_fen.as_deref()),
            store.as_ref(),
            &prices,
        )?);
    }
    let mut tokens = Range::default();
    let mut usd = Some(Range::default());
    for p in &players {
        tokens += p.prompt_tokens;
        tokens += p.completion_tokens;
        usd = match (usd, p.usd) {
            (Some(mut a), Some(b)) => {
                a += b;
                Some(a)
            }
            _ if matches!(p.kind, "engine" | "random" | "human") => usd,
            _ => None,
        };
    }
    let experiment = design
        .as_ref()
        .map(|d| super::experiment::plan(d).unwrap_or_default())
        .unwrap_or_default();
    let budgets = budget_estimates(&spec, &players, total_games as f64, tokens, usd);
    Ok(DryRun {
        games: total_games,
        incremental,
        plies_per_game: plies,
        players,
        tokens,
        usd,
        experiment,
        budgets,
    })
}

/// The note on a format that schedules on results, counted with every game drawn: what that
/// count is for the format at hand (a Swiss pairs as many games whatever the results; a
/// knockout then plays every tie-break, its most).
fn drawn_note(format: &str) -> String {
    let why = match format {
        "swiss" => "a Swiss pairs as many games whatever the results",
        "knockout" => "a knockout then plays every tie-break, its most",
        _ => "the count is what the format schedules when no game is won",
    };
    format!("the format schedules on results: counted with every game drawn ({why})")
}

/// The most games an experiment plays, and each player's share: every arm to its cap
/// ([`super::experiment::Design::cap`] units), cell by cell as the experiment format schedules
/// them (each arm a pair against the baseline, or against each common opponent, and then the
/// baseline the same pairs against the opponents).
fn experiment_most_games(design: &super::experiment::Design) -> (u64, BTreeMap<String, f64>) {
    let opponents = design.opponents.len() as u64;
    let cells = u64::from(design.cap()).div_ceil(u64::from(design.units_per_cell()));
    let arms = design.arms();
    let mut share: BTreeMap<String, f64> = BTreeMap::new();
    let mut games = 0u64;
    let mut pair = |a: &str, b: &str| {
        *share.entry(a.to_owned()).or_default() += 2.0 * cells as f64;
        *share.entry(b.to_owned()).or_default() += 2.0 * cells as f64;
        games += 2 * cells;
    };
    for arm in &arms {
        if opponents == 0 {
            pair(arm, &design.baseline);
        } else {
            for o in &design.opponents {
                pair(arm, o);
            }
        }
    }
    for o in &design.opponents {
        pair(&design.baseline, o);
    }
    (games, share)
}

/// Where the tournament's budget and each player's would stop the run, from the spend per game
/// of the estimate (`tokens` and `usd` are the tournament's totals over `games` games).
fn budget_estimates(
    spec: &TournamentSpec,
    players: &[PlayerEstimate],
    games: f64,
    tokens: Range,
    usd: Option<Range>,
) -> Vec<BudgetEstimate> {
    let per_game = |r: Range, games: f64| {
        if games > 0.0 {
            Range {
                low: r.low / games,
                high: r.high / games,
            }
        } else {
            Range::default()
        }
    };
    let mut out = Vec::new();
    let mut add = |player: Option<&str>,
                   budget: Option<crate::spec::Budget>,
                   games: f64,
                   tokens: Range,
                   usd: Option<Range>| {
        let Some(budget) = budget else { return };
        if let Some(limit) = budget.usd {
            let usd = usd.map(|u| per_game(u, games));
            out.push(BudgetEstimate::new(player, "usd", limit, games, usd));
        }
        if let Some(limit) = budget.tokens {
            let tokens = Some(per_game(tokens, games));
            out.push(BudgetEstimate::new(player, "tokens", limit, games, tokens));
        }
    };
    add(None, spec.settings.budget, games, tokens, usd);
    for (player, estimate) in spec.players.iter().zip(players) {
        let mut spent = estimate.prompt_tokens;
        spent += estimate.completion_tokens;
        add(
            Some(player.name()),
            player.budget(),
            estimate.games,
            spent,
            estimate.usd,
        );
    }
    out
}

/// Asks the format for games until it is done, as a run would with no game finished yet. Returns
/// the games, `Some(its max_games option)` when the format waits for results, and whether games
/// were drawn to go on.
///
/// A format that waits for results and has no `max_games` bound (a Swiss, a knockout) sees every
/// game in flight drawn and is asked again: a Swiss pairs as many games whatever the results,
/// and in a knockout draws send every match to its last tie-break, the most it can play.
#[allow(clippy::type_complexity)]
fn schedule_all(
    rules: &dyn Rules,
    spec: &TournamentSpec,
    openings: u32,
) -> Result<(Vec<FormatGame>, Option<Option<u64>>, bool), TournamentError> {
    let format = rules.format().map_err(FormatError::from)?;
    let mut state = FormatState::new(spec, Vec::new(), openings, format.options().clone());
    let mut drawn = false;
    for _ in 0..MAX_FORMAT_CALLS {
        match schedule::next_pairings(format.as_ref(), &state)? {
            None => return Ok((state.games, None, drawn)),
            Some(new) if new.is_empty() => {
                let bound = format.options().get("max_games").and_then(|v| v.as_u64());
                let waiting: Vec<&mut FormatGame> = state
                    .games
                    .iter_mut()
                    .filter(|g| g.result.is_none())
                    .collect();
                if bound.is_some() || waiting.is_empty() {
                    return Ok((state.games, Some(bound), drawn));
                }
                for g in waiting {
                    g.result = Some("1/2-1/2".to_owned());
                }
                drawn = true;
            }
            Some(new) => {
                let first = state.games.len() as u32 + 1;
                // The openings the pairings name must exist, as in a run.
                if let Some(asked) = new
                    .iter()
                    .filter_map(|p| p.opening)
                    .find(|&n| n == 0 || n > openings)
                {
                    return Err(FormatError::NoSuchOpening {
                        asked,
                        available: openings as usize,
                    }
                    .into());
                }
                for (i, p) in new.into_iter().enumerate() {
                    state.games.push(FormatGame {
                        index: first + i as u32,
                        round: p.round.unwrap_or(1),
                        white: p.white,
                        black: p.black,
                        result: None,
                        script_hash: None,
                    });
                }
            }
        }
    }
    let bound = format.options().get("max_games").and_then(|v| v.as_u64());
    Ok((state.games, Some(bound), drawn))
}

/// Prompt tokens of `messages` by the documented estimate.
pub fn estimate_tokens(messages: &[crate::llm::ChatMessage]) -> u64 {
    messages
        .iter()
        .map(|m| (m.content.chars().count() as u64).div_ceil(CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE)
        .sum()
}

/// The first-attempt prompt of every ply the player would move at, over one seeded random game
/// of `plies` plies, half as White and half as Black: the mean prompt tokens per move.
fn mean_prompt(
    mode: &dyn PlayMode,
    name: &str,
    plies: u32,
    (variant, start_fen): (crate::board::Variant, Option<&str>),
) -> Result<f64, TournamentError> {
    let mut rng = StdRng::seed_from_u64(0);
    let mut game =
        Game::new_in(variant, start_fen, plies).map_err(|source| TournamentError::Openings {
            at: String::new(),
            source,
        })?;
    let (mut sum, mut count) = (0u64, 0u64);
    let mut previous: Vec<crate::llm::ChatMessage> = Vec::new();
    for _ in 0..plies {
        let pos = game.position();
        let legal_moves = Arc::new(LegalMoves::of(pos));
        let legal = legal_moves.uci().to_vec();
        let ctx = TurnContext {
            fen: game.fen(),
            start_fen: game.start_fen(),
            variant: game.variant().as_str(),
            side: if game.ply() % 2 == 0 {
                "white"
            } else {
                "black"
            },
            ply: game.ply(),
            move_number: game.ply() / 2 + 1,
            legal: legal_moves,
            history_uci: game.uci_history(),
            history_san: game.san_history(),
            last_move: game.uci_moves().last().cloned(),
            attempt: 1,
            max_attempts: mode.max_attempts(),
            player: name.to_string(),
            opponent: "opponent".to_string(),
            game: 1,
            options: mode.options().clone(),
            dialog: Default::default(),
            // Modes that keep one conversation per game build on the previous move's dialog.
            previous_dialog: Arc::new(previous.clone()),
            reasoning: None,
            finish_reason: None,
        };
        let opening = mode.start(&ctx).map_err(|e| {
            TournamentError::Script(crate::script::CheckErrors(vec![e.within(&format!(
                "player `{name}`: rendering a prompt for the dry run"
            ))]))
        })?;
        sum += estimate_tokens(&opening.messages);
        count += 1;
        previous = opening.messages;
        let Some(mv) = legal.choose(&mut rng) else {
            break;
        };
        if game.play_uci(mv).is_err() || game.end().is_some() {
            break;
        }
    }
    Ok(if count == 0 {
        0.0
    } else {
        sum as f64 / count as f64
    })
}

/// Completion tokens per call of `player`'s `model`: (low, high, where they come from). The
/// stored figures are the player's own calls, never another player's of the same model.
fn completion(player: &str, model: &ModelSpec, store: Option<&Store>) -> (f64, f64, String) {
    let stored = store.and_then(|s| s.completion_stats(player, &model.model).ok().flatten());
    match (model.max_tokens, stored) {
        // `max_tokens` only caps what the stored calls say (it may have been lowered since).
        (Some(max), Some(s)) => (
            s.mean.min(f64::from(max)),
            (s.max as f64).min(f64::from(max)),
            format!("mean and longest of {} stored calls", s.calls),
        ),
        (Some(max), None) => (f64::from(max), f64::from(max), "max_tokens".into()),
        (None, Some(s)) => (
            s.mean,
            s.max as f64,
            format!("mean and longest of {} stored calls", s.calls),
        ),
        (None, None) => (
            ASSUMED_COMPLETION as f64,
            ASSUMED_COMPLETION as f64,
            format!("assumed {ASSUMED_COMPLETION} (no max_tokens, no stored calls)"),
        ),
    }
}

fn estimate_player(
    rules: &dyn Rules,
    player: &PlayerSpec,
    games: f64,
    plies: u32,
    start: (crate::board::Variant, Option<&str>),
    store: Option<&Store>,
    prices: &PriceTable,
) -> Result<PlayerEstimate, TournamentError> {
    let mut estimate = PlayerEstimate {
        name: player.name().to_string(),
        kind: player.kind(),
        games,
        calls: Range::default(),
        prompt_tokens: Range::default(),
        completion_tokens: Range::default(),
        usd: Some(Range::default()),
        prompt_per_call: 0.0,
        completion_source: String::new(),
        price_source: String::new(),
    };
    let (Some(binding), models) = (player.mode_binding(), models(player)) else {
        return Ok(estimate);
    };
    let mode = rules.play_mode(binding).map_err(|e| {
        TournamentError::Script(crate::script::CheckErrors(vec![
            e.within(&format!("player `{}`", player.name())),
        ]))
    })?;
    let prompt = mean_prompt(mode.as_ref(), player.name(), plies, start)?;
    estimate.prompt_per_call = prompt;
    // A player moves in half the plies of a game; a player that votes asks every attempt
    // `samples` times (each sample a call of the same prompt).
    let samples = f64::from(super::vote::samples_of(binding.options).unwrap_or(1));
    let moves = games * f64::from(plies) / 2.0 * samples;
    let per_move_high = f64::from(mode.max_turns().unwrap_or(mode.max_attempts()).max(1));
    let proposers = models.len().saturating_sub(1) as f64;
    let mut sources = Vec::new();
    let mut price_sources = Vec::new();
    for (i, model) in models.iter().enumerate() {
        let (c_low, c_high, source) = completion(player.name(), model, store);
        sources.push(source);
        // A synthesizer reads every proposal beside the prompt.
        let is_synth = models.len() > 1 && i == models.len() - 1;
        let base = if is_synth {
            prompt + proposers * c_high
        } else {
            prompt
        };
        // Attempt a carries the a-1 earlier replies and their feedback.
        let retries_extra =
            (per_move_high - 1.0) * per_move_high / 2.0 * (c_high + FEEDBACK_TOKENS as f64);
        let calls = Range {
            low: moves,
            high: moves * per_move_high,
        };
        let prompt_tokens = Range {
            low: moves * base,
            high: moves * (per_move_high * base + retries_extra),
        };
        let completion_tokens = Range {
            low: calls.low * c_low,
            high: calls.high * c_high,
        };
        // What the provider itself charged for this model's stored calls beats a list price.
        let billed = store.and_then(|s| s.provider_pricing(&model.model).ok().flatten());
        let price = match billed {
            Some(billed) => {
                let price = billed.price();
                price_sources.push(provider_price_note(&model.model, &billed, &price));
                Some(price)
            }
            None => prices.price(&model.model).copied(),
        };
        estimate.usd = match (estimate.usd, price) {
            (Some(mut usd), Some(price)) => {
                let cost = |p: f64, c: f64| {
                    price.cost(&Usage {
                        prompt_tokens: p.round() as u64,
                        completion_tokens: c.round() as u64,
                        ..Usage::default()
                    })
                };
                usd += Range {
                    low: cost(prompt_tokens.low, completion_tokens.low),
                    high: cost(prompt_tokens.high, completion_tokens.high),
                };
                Some(usd)
            }
            _ => None,
        };
        estimate.calls += calls;
        estimate.prompt_tokens += prompt_tokens;
        estimate.completion_tokens += completion_tokens;
    }
    sources.dedup();
    estimate.completion_source = sources.join("; ");
    price_sources.dedup();
    estimate.price_source = price_sources.join("; ");
    Ok(estimate)
}

/// How a model's dollars were priced from the provider's stored bills.
fn provider_price_note(model: &str, billed: &ProviderPricing, price: &crate::llm::Price) -> String {
    format!(
        "`{model}` at the provider's own prices of {} stored call(s) (${:.4} in all): ${:.4} input and ${:.4} output per million tokens, fitted",
        billed.calls, billed.usd, price.input_per_mtok, price.output_per_mtok
    )
}

/// The models a player calls: its own, or a mixture's proposers then its synthesizer.
fn models(player: &PlayerSpec) -> Vec<ModelSpec> {
    match player {
        PlayerSpec::Llm(p) => vec![p.model_spec()],
        PlayerSpec::Moa(p) => p
            .proposers
            .iter()
            .cloned()
            .chain([p.synthesizer.clone()])
            .collect(),
        PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_stops_after_the_games_its_spend_allows() {
        let per_game = Range {
            low: 150.0,
            high: 300.0,
        };
        let b = BudgetEstimate::new(Some("m"), "tokens", 1000.0, 10.0, Some(per_game));
        // 300 a game: 4 games start (900 < 1000 before the 4th); 150 a game: 7.
        assert_eq!(
            b.games_started,
            Some(Range {
                low: 4.0,
                high: 7.0
            })
        );
        let wide = BudgetEstimate::new(None, "usd", 1000.0, 3.0, Some(per_game));
        assert_eq!(
            wide.games_started,
            Some(Range {
                low: 3.0,
                high: 3.0
            })
        );
        let unpriced = BudgetEstimate::new(None, "usd", 1.0, 3.0, None);
        assert_eq!(unpriced.games_started, None);
    }
}
