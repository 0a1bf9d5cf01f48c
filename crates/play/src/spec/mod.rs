//! What a tournament script asks for, as plain Rust data validated strictly (unknown keys are
//! errors), and the rules a valid tournament keeps: unique player names, usable model settings,
//! what a reload may change. The script host fills these from the script's returned table and
//! reports [`SpecProblem`]s at the script line they concern.

pub mod adjudication;
pub mod samples;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::board::clock::TimeControl;
use crate::{
    analysis::{AnalysisLimits, AnalysisSettings, VisitOrder, WinModel},
    engine::EngineSpec,
};

/// Settings of the whole tournament (everything but the players).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TournamentSettings {
    /// Name; a database holds several tournaments, told apart by name.
    pub name: String,
    /// Format module under `formats/` (built-in: `round_robin`).
    #[serde(default = "default_format")]
    pub format: String,
    /// Games each pair plays (colours alternate, so keep it even).
    #[serde(default = "default_games_per_pair")]
    pub games_per_pair: u32,
    /// Plies after which a game is drawn by the move limit (0: no limit), counted from the
    /// opening position: the book plies of an opening line do not count, unless
    /// `max_plies_include_book` is set.
    #[serde(default = "default_max_plies")]
    pub max_plies: u32,
    /// Count the book plies of an opening line toward `max_plies` too (default false: every game
    /// gets `max_plies` plies of play whatever the length of its opening line).
    #[serde(default)]
    pub max_plies_include_book: bool,
    /// Seed of random movers and random opening order, so that a tournament is reproducible.
    #[serde(default)]
    pub seed: u64,
    /// Random movers (and engines' random moves) take their seed from the game's round rather
    /// than its number, so that games of one round see the same random moves; set by
    /// `arena.experiment{}`, whose rounds are its paired cells.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pair_seeds: bool,
    /// Games played at once (the command line's `--concurrency` wins).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Start positions.
    #[serde(default)]
    pub openings: Option<OpeningsSpec>,
    /// Extra settings passed to the format script as `state.options`.
    #[serde(default)]
    pub format_options: Option<serde_json::Map<String, serde_json::Value>>,
    /// Prices in USD per million tokens by model name, added to (or overriding) the built-in
    /// table for the cost columns: `prices = { ["my-model"] = { input_per_mtok = 0.5,
    /// output_per_mtok = 1.5 } }`.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, crate::llm::Price>,
    /// Engine analysis of every finished game (none when absent).
    #[serde(default)]
    pub analysis: Option<AnalysisSpec>,
    /// What the whole tournament may spend on model calls: once reached, no new game starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Every player's clock, unless the player has its own `time_control`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
    /// Adjudication by an engine (cutechess's resign and draw rules, and the verdict at the
    /// move limit); off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adjudication: Option<adjudication::AdjudicationSpec>,
    /// Which draws end a game besides mate, stalemate and insufficient material: `automatic`
    /// (fivefold repetition and the seventy-five-move rule, as ChessArena and LLM Chess) or
    /// `claimed` (threefold repetition and the fifty-move rule at once, as cutechess plays).
    /// When absent, each game's own: `claimed` for an engine match (both players UCI engines),
    /// `automatic` for every other game ([`TournamentSpec::endings_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endings: Option<crate::board::Endings>,
}

/// A spending limit on model calls (`budget = { usd = 20, tokens = 5e6 }`), on a player or the
/// tournament; at least one of the two, each a finite number above 0. It is checked before each
/// game starts: when it is reached no new game starts, and the games in progress finish (so a
/// budget can be overrun by what those games spend).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(try_from = "RawBudget")]
pub struct Budget {
    /// US dollars, priced by the price table (built-in plus the tournament's `prices`).
    pub usd: Option<f64>,
    /// Prompt plus completion tokens.
    pub tokens: Option<f64>,
}

/// [`Budget`] as written, before its values are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    #[serde(default)]
    usd: Option<f64>,
    #[serde(default)]
    tokens: Option<f64>,
}

impl TryFrom<RawBudget> for Budget {
    type Error = String;

    fn try_from(raw: RawBudget) -> Result<Self, Self::Error> {
        if raw.usd.is_none() && raw.tokens.is_none() {
            return Err("a budget needs `usd`, `tokens` or both".into());
        }
        for (name, value) in [("usd", raw.usd), ("tokens", raw.tokens)] {
            if let Some(v) = value
                && !(v.is_finite() && v > 0.0)
            {
                return Err(format!(
                    "budget `{name}` must be a finite number above 0, not {v}"
                ));
            }
        }
        Ok(Budget {
            usd: raw.usd,
            tokens: raw.tokens,
        })
    }
}

fn default_format() -> String {
    "round_robin".into()
}
fn default_games_per_pair() -> u32 {
    2
}
fn default_max_plies() -> u32 {
    200
}

/// How a tournament analyses its games with an engine. Defaults follow the papers: depth 20, one
/// thread, the top 3 moves (ChessArena's top-move rate), Lichess's Win% (LLM Chess's classes).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AnalysisSpec {
    /// The analysis engine: a path, or a name looked up on `PATH` and in `/usr/games`.
    #[serde(default = "default_engine_command")]
    pub engine: String,
    /// The engine's command-line arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// `go depth N` (the default, 20, when no limit is given).
    #[serde(default)]
    pub depth: Option<u32>,
    /// `go nodes N` instead of a depth.
    #[serde(default)]
    pub nodes: Option<u64>,
    /// `go movetime N` instead of a depth (not reproducible).
    #[serde(default)]
    pub movetime_ms: Option<u64>,
    /// How many top moves each position reports.
    #[serde(default = "default_multipv")]
    pub multipv: u32,
    /// Engine threads per process.
    #[serde(default = "default_threads")]
    pub threads: u32,
    /// Engine hash per process, in MB ([`DEFAULT_HASH_MB`](crate::analysis::DEFAULT_HASH_MB)).
    #[serde(default = "default_hash")]
    pub hash: u32,
    /// Engine processes, that is searches at once (default: the number of CPUs).
    #[serde(default)]
    pub processes: Option<usize>,
    /// The Win% formula behind the move classes: `lichess` or `chessarena`.
    #[serde(default)]
    pub win_model: WinModel,
    /// Also score every legal move of every position (one more, wider search per ply).
    #[serde(default)]
    pub all_moves: bool,
    /// Analyse each game as soon as it finishes (`true`), or all of them after the last game.
    #[serde(default = "default_during_play")]
    pub during_play: bool,
}

fn default_multipv() -> u32 {
    3
}
fn default_threads() -> u32 {
    1
}
fn default_hash() -> u32 {
    crate::analysis::DEFAULT_HASH_MB
}
fn default_during_play() -> bool {
    true
}

/// `MultiPV` above this is refused: no chess position has more legal moves.
const MAX_MULTIPV: u32 = 218;

impl AnalysisSpec {
    /// Every value that parses but cannot work, as one message per problem.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let limits = [
            self.depth.is_some(),
            self.nodes.is_some(),
            self.movetime_ms.is_some(),
        ];
        if limits.iter().filter(|&&given| given).count() > 1 {
            out.push("give one of `depth`, `nodes` and `movetime_ms`, not several".to_owned());
        }
        let zero = |name: &str| format!("`{name}` must be at least 1");
        if self.depth == Some(0) {
            out.push(zero("depth"));
        }
        if self.nodes == Some(0) {
            out.push(zero("nodes"));
        }
        if self.movetime_ms == Some(0) {
            out.push(zero("movetime_ms"));
        }
        if !(1..=MAX_MULTIPV).contains(&self.multipv) {
            out.push(format!("`multipv` must be between 1 and {MAX_MULTIPV}"));
        }
        if self.threads == 0 {
            out.push(zero("threads"));
        }
        if self.hash == 0 {
            out.push(zero("hash"));
        }
        if self.processes == Some(0) {
            out.push(zero("processes"));
        }
        if self.engine.is_empty() {
            out.push("`engine` must name a UCI engine".to_owned());
        }
        out
    }

    /// The analyser's settings: the given limit, else depth 20.
    pub fn settings(&self) -> AnalysisSettings {
        let none_given = self.depth.is_none() && self.nodes.is_none() && self.movetime_ms.is_none();
        AnalysisSettings {
            limits: AnalysisLimits {
                depth: if none_given { Some(20) } else { self.depth },
                nodes: self.nodes,
                movetime_ms: self.movetime_ms,
                multipv: self.multipv.max(1),
            },
            win_model: self.win_model,
            all_moves: self.all_moves,
            order: VisitOrder::default(),
        }
    }

    /// How to start one analysis engine.
    pub(crate) fn engine_spec(&self) -> EngineSpec {
        let mut spec = EngineSpec::new("analysis", self.engine.clone());
        spec.args = self.args.clone();
        spec.option("Threads", self.threads.to_string())
            .option("Hash", self.hash.to_string())
    }

    /// Engine processes: as given, else one per CPU.
    pub fn processes(&self) -> usize {
        self.processes.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }
}

/// Where games start: a list of FENs, an EPD/PGN book, or Chess960 start positions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpeningsSpec {
    /// Start positions given inline.
    #[serde(default)]
    pub fens: Option<Vec<String>>,
    /// An `.epd` or `.pgn` file, relative to the tournament script.
    #[serde(default)]
    pub file: Option<String>,
    /// A built-in opening book by name (`2moves_v1`, `8moves_v3`: the books under the
    /// repository's `books/`, compiled in), found wherever the script is run from. Not with
    /// `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub book: Option<String>,
    /// `sequential` (default) or `random` (seeded by the tournament seed).
    #[serde(default)]
    pub order: Option<OpeningOrder>,
    /// Use only the first N openings (after ordering); with `chess960 = true`, how many start
    /// positions to draw.
    #[serde(default)]
    pub count: Option<usize>,
    /// Chess960 games: `true` draws `count` distinct start positions from the tournament seed,
    /// a list names them by start number (Scharnagl's numbering, 0 to 959; 518 is the standard
    /// position). Not with `file` or `fens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chess960: Option<Chess960Starts>,
}

/// The `chess960` field of [`OpeningsSpec`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Chess960Starts {
    /// `true`: `count` start positions drawn from the tournament seed (`false`: no Chess960).
    Drawn(bool),
    /// Start numbers, 0 to 959, in the order given (read as numbers so that a fraction or a
    /// negative number gets its own error rather than a type error).
    Numbers(Vec<f64>),
}

impl OpeningsSpec {
    /// Whether the games start from Chess960 positions.
    pub fn is_chess960(&self) -> bool {
        !matches!(self.chess960, None | Some(Chess960Starts::Drawn(false)))
    }

    /// What is wrong with the openings, as messages for `file:line` of the tournament: a
    /// Chess960 start number out of range, a `count` below 1 (or `chess960 = true` without one),
    /// Chess960 combined with a book, a built-in `book` with a `file`.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.book.is_some() && self.file.is_some() {
            problems.push("openings: give a built-in `book` or a book `file`, not both".to_owned());
        }
        if !self.is_chess960() {
            return problems;
        }
        let positions = crate::board::CHESS960_POSITIONS as usize;
        for (what, given) in [
            ("a built-in `book`", self.book.is_some()),
            ("a book `file`", self.file.is_some()),
            ("`fens`", self.fens.is_some()),
        ] {
            if given {
                problems.push(format!(
                    "openings: `chess960` cannot be combined with {what}: Chess960 games start \
                     from their own positions"
                ));
            }
        }
        match (&self.chess960, self.count) {
            (_, Some(0)) => problems.push("openings: `count` must be at least 1".to_owned()),
            (Some(Chess960Starts::Drawn(true)), None) => problems.push(format!(
                "openings: `chess960 = true` draws `count` start positions from the seed: give \
                 `count` (1 to {positions}), or list the start numbers (`chess960 = {{ 518, 0 }}`)"
            )),
            (Some(Chess960Starts::Drawn(true)), Some(n)) if n > positions => {
                problems.push(format!(
                    "openings: `count` is {n}, but Chess960 has only {positions} start positions"
                ));
            }
            _ => {}
        }
        if let Some(Chess960Starts::Numbers(numbers)) = &self.chess960 {
            if numbers.is_empty() {
                problems.push(
                    "openings: `chess960` lists no start number (give `true` with `count`, or \
                     numbers from 0 to 959)"
                        .to_owned(),
                );
            }
            for (i, n) in numbers.iter().enumerate() {
                if !(n.fract() == 0.0 && (0.0..positions as f64).contains(n)) {
                    problems.push(format!(
                        "openings: chess960[{}] = {n} is out of range: Chess960 start numbers \
                         run from 0 to 959 (518 is the standard position)",
                        i + 1
                    ));
                }
            }
        }
        problems
    }

    /// The Chess960 start numbers these openings name, before `order` and `count`: the listed
    /// ones, or `count` distinct numbers drawn from `seed`; empty when the games are not
    /// Chess960. Assumes [`OpeningsSpec::problems`] found nothing (bad numbers are skipped).
    pub(crate) fn chess960_numbers(&self, seed: u64) -> Vec<u32> {
        match &self.chess960 {
            Some(Chess960Starts::Numbers(numbers)) => numbers
                .iter()
                .filter(|n| n.fract() == 0.0 && (0.0..960.0).contains(*n))
                .map(|n| *n as u32)
                .collect(),
            Some(Chess960Starts::Drawn(true)) => {
                use rand::SeedableRng;
                let positions = crate::board::CHESS960_POSITIONS as usize;
                let count = self.count.unwrap_or(0).min(positions);
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
                rand::seq::index::sample(&mut rng, positions, count)
                    .into_iter()
                    .map(|i| i as u32)
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// The order openings are taken in.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OpeningOrder {
    /// As in the file.
    Sequential,
    /// Shuffled with the tournament seed.
    Random,
}

/// One player of a tournament.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlayerSpec {
    /// A language model behind an OpenAI-compatible endpoint, playing through a Lua play mode.
    Llm(LlmPlayerSpec),
    /// A UCI engine.
    Engine(EnginePlayerSpec),
    /// A uniform random mover.
    Random(RandomPlayerSpec),
    /// A mixture of agents: several proposer models answer each turn, and a synthesizer model
    /// merges their answers into the player's reply.
    Moa(MoaPlayerSpec),
    /// A person, whose moves come from the browser through `arena serve`.
    Human(HumanPlayerSpec),
}

impl PlayerSpec {
    /// The player's unique name.
    pub fn name(&self) -> &str {
        match self {
            PlayerSpec::Llm(p) => &p.name,
            PlayerSpec::Engine(p) => &p.name,
            PlayerSpec::Random(p) => &p.name,
            PlayerSpec::Moa(p) => &p.name,
            PlayerSpec::Human(p) => &p.name,
        }
    }

    /// `llm`, `engine`, `random`, `moa` or `human`.
    pub fn kind(&self) -> &'static str {
        match self {
            PlayerSpec::Llm(_) => "llm",
            PlayerSpec::Engine(_) => "engine",
            PlayerSpec::Random(_) => "random",
            PlayerSpec::Moa(_) => "moa",
            PlayerSpec::Human(_) => "human",
        }
    }

    /// The calibrated Elo the script gave this player, used as an anchor when other players'
    /// Elo is estimated against it.
    pub fn anchor_elo(&self) -> Option<f64> {
        match self {
            PlayerSpec::Llm(p) => p.anchor_elo,
            PlayerSpec::Engine(p) => p.anchor_elo,
            PlayerSpec::Random(p) => p.anchor_elo,
            PlayerSpec::Moa(p) => p.anchor_elo,
            PlayerSpec::Human(p) => p.anchor_elo,
        }
    }

    /// The player's spending limit (model players only: engines and random movers spend
    /// nothing).
    pub fn budget(&self) -> Option<Budget> {
        match self {
            PlayerSpec::Llm(p) => p.budget,
            PlayerSpec::Moa(p) => p.budget,
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => None,
        }
    }

    /// The player's own time control, if it has one.
    pub fn time_control(&self) -> Option<TimeControl> {
        match self {
            PlayerSpec::Llm(p) => p.time_control,
            PlayerSpec::Moa(p) => p.time_control,
            PlayerSpec::Engine(p) => p.time_control,
            PlayerSpec::Random(p) => p.time_control,
            PlayerSpec::Human(p) => p.time_control,
        }
    }

    /// What a game becomes when a provider refuses this player's request for good (model
    /// players; [`OnRejected::Void`] for the others, which send none).
    pub fn on_rejected(&self) -> OnRejected {
        match self {
            PlayerSpec::Llm(p) => p.on_rejected,
            PlayerSpec::Moa(p) => p.on_rejected,
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => {
                OnRejected::Void
            }
        }
    }

    /// The name, play mode and mode options of a player that plays through a play mode (LLM and
    /// mixture-of-agents players); `None` for engines and random movers.
    pub fn mode_binding(&self) -> Option<ModeBinding<'_>> {
        match self {
            PlayerSpec::Llm(p) => Some(ModeBinding {
                name: &p.name,
                mode: &p.mode,
                options: &p.options,
            }),
            PlayerSpec::Moa(p) => Some(ModeBinding {
                name: &p.name,
                mode: &p.mode,
                options: &p.options,
            }),
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => None,
        }
    }
}

impl PlayerSpec {
    /// The modules a player that plays through a play mode has replaced for itself: its
    /// `prompt`, and its `modules` (module as the mode requires it to the file standing in for
    /// it); `None` for the other kinds.
    pub fn module_choices(&self) -> Option<(Option<&str>, &BTreeMap<String, String>)> {
        match self {
            PlayerSpec::Llm(p) => Some((p.prompt.as_deref(), &p.modules)),
            PlayerSpec::Moa(p) => Some((p.prompt.as_deref(), &p.modules)),
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => None,
        }
    }

    /// What is wrong with this player on its own, each message naming it (empty when nothing):
    /// a model setting no request could be sent with, an empty mixture, a non-finite anchor, `samples`
    /// where they cannot be voted on (see `tournament::vote`).
    pub fn problems(&self) -> Vec<String> {
        let what = format!("player `{}`", self.name());
        let mut problems = Vec::new();
        let mut check = |model: &ModelSpec, part: &str| {
            if model.max_concurrency == 0 {
                problems.push(format!(
                    "{what}{part}: `max_concurrency` must be at least 1"
                ));
            } else if let Some(rate) = model.rate
                && (rate.rpm == Some(0) || rate.tpm == Some(0))
            {
                problems.push(format!(
                    "{what}{part}: `rate` limits must be at least 1 a minute (leave one out to learn it from the provider)"
                ));
            } else if !(model.stream_idle_s.is_finite() && model.stream_idle_s > 0.0) {
                problems.push(format!(
                    "{what}{part}: `stream_idle_s` must be a number of seconds above 0, not {}",
                    model.stream_idle_s
                ));
            } else if let Err(e) = model.provider() {
                problems.push(format!("{what}{part}: {e}"));
            } else if model.azure
                && !matches!(
                    model.provider(),
                    Ok(crate::llm::Provider::OpenAiChat | crate::llm::Provider::OpenAiResponses)
                )
            {
                problems.push(format!(
                    "{what}{part}: `azure` is for the `openai` and `openai_responses` providers"
                ));
            } else if model.api_version.is_some()
                && !model.azure
                && !matches!(model.provider(), Ok(crate::llm::Provider::Anthropic))
            {
                problems.push(format!(
                    "{what}{part}: `api_version` is Anthropic's `anthropic-version` or Azure's `api-version`; this endpoint names none (Gemini's version is in its `base_url`)"
                ));
            }
        };
        match self {
            PlayerSpec::Llm(llm) => check(&llm.model_spec(), ""),
            PlayerSpec::Moa(moa) => {
                for (i, p) in moa.proposers.iter().enumerate() {
                    check(p, &format!(", proposer {}", i + 1));
                }
                check(&moa.synthesizer, ", synthesizer");
                if moa.proposers.is_empty() {
                    problems.push(format!(
                        "{what}: a mixture of agents needs at least one proposer"
                    ));
                }
                // The synthesizer writes one reply from the proposers' texts; tool calls have
                // no text to merge, so the agentic mode's tools are for a single model.
                if moa.options.get("actions").and_then(|v| v.as_str()) == Some("tools") {
                    problems.push(format!(
                        "{what}: `actions = \"tools\"` is for a single model (`arena.llm`): a mixture of agents merges its proposers' texts into one reply and cannot merge tool calls; use `actions = \"text\"`"
                    ));
                }
            }
            PlayerSpec::Engine(e) => {
                if let Some(p) = e.random_move_p
                    && !(0.0..=1.0).contains(&p)
                {
                    problems.push(format!(
                        "{what}: `random_move_p` must be a probability between 0 and 1, not {p}"
                    ));
                }
            }
            PlayerSpec::Random(_) | PlayerSpec::Human(_) => {}
        }
        problems.extend(samples::problems(self));
        if let Some(elo) = self.anchor_elo()
            && !elo.is_finite()
        {
            problems.push(format!("{what}: `anchor_elo` must be a finite number"));
        }
        problems
    }
}

/// Where an API key goes: the variable a model's `api_key_env` names and the host it is sent
/// to. Printed by `arena check` and `arena run` so that a script cannot quietly send a secret
/// somewhere the user did not mean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRoute {
    /// The player.
    pub player: String,
    /// `""`, or the model's part in a mixture (`proposer 1`, `synthesizer`).
    pub part: String,
    /// The environment variable holding the key.
    pub variable: String,
    /// The host of the model's `base_url` (the whole URL when it does not parse).
    pub host: String,
}

impl KeyRoute {
    /// Whether the variable is set (and not blank) in this process's environment.
    pub fn is_set(&self) -> bool {
        std::env::var(&self.variable).is_ok_and(|v| !v.trim().is_empty())
    }
}

impl std::fmt::Display for KeyRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let part = if self.part.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.part)
        };
        write!(
            f,
            "player `{}`{part}: the key in `{}` goes to {}",
            self.player, self.variable, self.host
        )
    }
}

impl PlayerSpec {
    /// The API keys this player sends, one per model that names an `api_key_env`.
    pub fn key_routes(&self) -> Vec<KeyRoute> {
        let models: Vec<(String, ModelSpec)> = match self {
            PlayerSpec::Llm(llm) => vec![(String::new(), llm.model_spec())],
            PlayerSpec::Moa(moa) => moa
                .proposers
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("proposer {}", i + 1), p.clone()))
                .chain([("synthesizer".to_string(), moa.synthesizer.clone())])
                .collect(),
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => Vec::new(),
        };
        // The variables of the model's extra `headers` are credentials too.
        models
            .into_iter()
            .flat_map(|(part, model)| {
                let host = crate::llm::host_of(&model.base_url);
                model
                    .api_key_env
                    .iter()
                    .chain(model.headers.iter().flat_map(|h| h.values()))
                    .map(|variable| KeyRoute {
                        player: self.name().to_string(),
                        part: part.clone(),
                        variable: variable.clone(),
                        host: host.clone(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// A problem in a tournament or evaluation definition, at the `file:line` it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProblem {
    /// `file:line` of the definition at fault.
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl SpecProblem {
    fn new(at: &str, message: impl Into<String>) -> Self {
        SpecProblem {
            at: at.to_string(),
            message: message.into(),
        }
    }
}

/// Players that passed [`check_players`].
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPlayers {
    /// The players, in script order.
    pub players: Vec<PlayerSpec>,
    /// `file:line` of each player's definition by name, and of the script itself under `""`.
    pub defined_at: BTreeMap<String, String>,
}

/// The players of a script as defined, each with the `file:line` of its definition: checked on
/// their own ([`PlayerSpec::problems`]), for unique names, and for being at least `min` together
/// with the `unreadable` ones (the script itself is defined at `at`).
///
/// # Errors
/// Every problem, each at the definition it concerns.
pub fn check_players(
    defined: Vec<(PlayerSpec, String)>,
    min: usize,
    unreadable: usize,
    what: &str,
    at: &str,
) -> Result<CheckedPlayers, Vec<SpecProblem>> {
    let mut problems = Vec::new();
    // Players that did not read count too: their own problems are reported, and a list that is
    // long enough must not also be called too short.
    let listed = defined.len() + unreadable;
    if listed < min {
        problems.push(SpecProblem::new(
            at,
            format!(
                "{what} needs at least {} players, `players` has {listed}",
                number_word(min),
            ),
        ));
    }
    let mut players = Vec::new();
    let mut defined_at = BTreeMap::new();
    for (player, player_at) in defined {
        problems.extend(
            player
                .problems()
                .into_iter()
                .map(|m| SpecProblem::new(&player_at, m)),
        );
        if defined_at.contains_key(player.name()) {
            problems.push(SpecProblem::new(
                &player_at,
                format!("two players are named `{}`", player.name()),
            ));
        } else {
            defined_at.insert(player.name().to_string(), player_at);
            players.push(player);
        }
    }
    defined_at.insert(String::new(), at.to_string());
    if problems.is_empty() {
        Ok(CheckedPlayers {
            players,
            defined_at,
        })
    } else {
        Err(problems)
    }
}

fn number_word(n: usize) -> String {
    match n {
        1 => "one".into(),
        2 => "two".into(),
        n => n.to_string(),
    }
}

/// What a play mode needs to know of its player.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeBinding<'a> {
    /// The player's name.
    pub name: &'a str,
    /// The play mode module as the script named it (`blitz`, `agentic`).
    pub mode: &'a str,
    /// The player's mode options, before the mode's defaults are merged in.
    pub options: &'a serde_json::Map<String, serde_json::Value>,
}

/// A language-model player.
///
/// Its model fields repeat [`ModelSpec`]'s on purpose: serde cannot combine `flatten` with
/// `deny_unknown_fields`, and a misspelled key must stay an error that names the script line.
/// [`LlmPlayerSpec::model_spec`] is the one place that maps between the two.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlmPlayerSpec {
    /// Unique player name.
    pub name: String,
    /// Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:8765/v1`.
    pub base_url: String,
    /// Model name sent in each request.
    pub model: String,
    /// Wire format: `openai` (chat completions, the default), `openai_responses`, `anthropic` or
    /// `gemini`.
    #[serde(default)]
    pub provider: Option<String>,
    /// Reasoning effort (`low`, `medium`, `high`) for APIs that take one.
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// Thinking budget in tokens (Anthropic).
    #[serde(default)]
    pub thinking_budget: Option<u32>,
    /// Name of the environment variable holding the API key (the key itself never appears in a
    /// script, the store or the logs).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Completion token cap per request.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling seed, for servers that honour it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Extra JSON merged into every request body (e.g. llama.cpp `grammar`).
    #[serde(default)]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Seconds one HTTP request may take.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Seconds an unreachable endpoint is retried before the game is set aside as errored
    /// (resumable), never forfeited.
    #[serde(default = "default_outage_s")]
    pub outage_s: f64,
    /// Retries of a call whose success reply cannot be decoded (each such body is stored first);
    /// then the game is set aside with that error.
    #[serde(default = "default_decode_retries")]
    pub decode_retries: u32,
    /// Requests in flight at once against this player's endpoint.
    #[serde(default = "default_max_concurrency")]
    pub max_concurrency: usize,
    /// Whether replies are read as server-sent events (off by default).
    #[serde(default)]
    pub stream: bool,
    /// Seconds a streamed reply may stay silent before it is cut, its partial reply kept.
    #[serde(default = "default_stream_idle_s")]
    pub stream_idle_s: f64,
    /// The API version to name instead of arena's: Anthropic's `anthropic-version` (for a
    /// gateway that needs an older one), Azure OpenAI's `api-version` (default `2024-10-21`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Whether the endpoint is Azure OpenAI (`openai` or `openai_responses` only): `base_url`
    /// is the resource's `https://NAME.openai.azure.com/openai`, `model` the deployment's name,
    /// the key goes in the `api-key` header.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub azure: bool,
    /// Extra headers sent with every request: header name → the NAME of the environment
    /// variable holding its value (a value is read at request time and never stored or
    /// logged, as for `api_key_env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Rate limits of this player's endpoint and key, per minute (`rate = { rpm = 500, tpm =
    /// 200000 }`), shared by every player on them; unset parts are learned from the answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::llm::RateLimit>,
    /// Play mode module: a name under `modes/` (`blitz`) or a module of the script's folder.
    #[serde(default = "default_mode")]
    pub mode: String,
    /// Options of the play mode (`legal_moves`, `history`, `max_attempts`, ...).
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The module holding the mode's words for this player (`prompts/think.lua`), in place of
    /// the one the mode names as its `prompt_module`: the script's folder first, then the
    /// built-ins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Modules the mode requires, replaced for this player: the module as the mode requires it
    /// (`parsers.move`) to the file that stands in for it (`parsers/lenient.lua`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub modules: BTreeMap<String, String>,
    /// A calibrated Elo, when this player serves as an anchor for Elo estimates.
    #[serde(default)]
    pub anchor_elo: Option<f64>,
    /// What a game becomes when the provider refuses this player's request for good.
    #[serde(default)]
    pub on_rejected: OnRejected,
    /// What this player may spend: once reached, no new game of the player starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The player's clock (`time_control = { base_s = 900, increment_s = 10 }`, `{ per_move_s =
    /// 60 }` or both); overrides the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
}

/// What a game becomes when a provider refuses a player's request for good: the prompt exceeds
/// the model's context (termination `context_exceeded`) or the request is refused
/// (`request_rejected`). Asking again would get the same answer, so the game cannot go on.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnRejected {
    /// The game ends void: no result, in no rating, counting for nobody (the default: the
    /// refusal says nothing about the chess).
    #[default]
    Void,
    /// The player whose request was refused loses, counted among its forfeits: for a protocol
    /// that is part of what is measured, e.g. a model whose prompts outgrow its context is
    /// failing the protocol as surely as one that answers gibberish.
    Forfeit,
}

impl LlmPlayerSpec {
    /// The model part of the player: where and how requests are sent.
    pub(crate) fn model_spec(&self) -> ModelSpec {
        ModelSpec {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            provider: self.provider.clone(),
            reasoning_effort: self.reasoning_effort.clone(),
            thinking_budget: self.thinking_budget,
            api_key_env: self.api_key_env.clone(),
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            seed: self.seed,
            extra_body: self.extra_body.clone(),
            timeout_s: self.timeout_s,
            outage_s: self.outage_s,
            decode_retries: self.decode_retries,
            max_concurrency: self.max_concurrency,
            stream: self.stream,
            stream_idle_s: self.stream_idle_s,
            api_version: self.api_version.clone(),
            azure: self.azure,
            headers: self.headers.clone(),
            rate: self.rate,
        }
    }

    /// The reasoning settings to send, if any.
    pub fn reasoning(&self) -> Option<crate::llm::Reasoning> {
        self.model_spec().reasoning()
    }

    /// The wire format named by `provider`.
    ///
    /// # Errors
    /// An unknown provider name.
    pub fn provider(&self) -> Result<crate::llm::Provider, crate::llm::LlmError> {
        self.model_spec().provider()
    }
}

/// One model behind an endpoint, with its request settings: an LLM player's model, or one member
/// of a mixture of agents.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Base URL of the API, e.g. `http://127.0.0.1:8765/v1`.
    pub base_url: String,
    /// Model name sent in each request.
    pub model: String,
    /// Wire format: `openai` (the default), `openai_responses`, `anthropic` or `gemini`.
    #[serde(default)]
    pub provider: Option<String>,
    /// Reasoning effort (`low`, `medium`, `high`) for APIs that take one.
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// Thinking budget in tokens (Anthropic).
    #[serde(default)]
    pub thinking_budget: Option<u32>,
    /// Name of the environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Completion token cap per request.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Sampling seed, for servers that honour it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Extra JSON merged into every request body.
    #[serde(default)]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Seconds one HTTP request may take.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Seconds an unreachable endpoint is retried before the game is set aside.
    #[serde(default = "default_outage_s")]
    pub outage_s: f64,
    /// Retries of a call whose success reply cannot be decoded.
    #[serde(default = "default_decode_retries")]
    pub decode_retries: u32,
    /// Requests in flight at once against this endpoint.
    #[serde(default = "default_max_concurrency")]
    pub max_concurrency: usize,
    /// Whether replies are read as server-sent events (off by default).
    #[serde(default)]
    pub stream: bool,
    /// Seconds a streamed reply may stay silent before it is cut, its partial reply kept.
    #[serde(default = "default_stream_idle_s")]
    pub stream_idle_s: f64,
    /// The API version to name instead of arena's: Anthropic's `anthropic-version` (for a
    /// gateway that needs an older one), Azure OpenAI's `api-version` (default `2024-10-21`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Whether the endpoint is Azure OpenAI (`openai` or `openai_responses` only): `base_url`
    /// is the resource's `https://NAME.openai.azure.com/openai`, `model` the deployment's name,
    /// the key goes in the `api-key` header.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub azure: bool,
    /// Extra headers sent with every request: header name → the NAME of the environment
    /// variable holding its value (a value is read at request time and never stored or
    /// logged, as for `api_key_env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// Rate limits of this endpoint and key, per minute, shared by every player on them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<crate::llm::RateLimit>,
}

impl ModelSpec {
    /// The reasoning settings to send, if any.
    pub fn reasoning(&self) -> Option<crate::llm::Reasoning> {
        if self.reasoning_effort.is_none() && self.thinking_budget.is_none() {
            return None;
        }
        Some(crate::llm::Reasoning {
            effort: self.reasoning_effort.clone(),
            budget_tokens: self.thinking_budget,
        })
    }

    /// The wire format named by `provider`.
    ///
    /// # Errors
    /// An unknown provider name.
    pub fn provider(&self) -> Result<crate::llm::Provider, crate::llm::LlmError> {
        match &self.provider {
            None => Ok(crate::llm::Provider::OpenAiChat),
            Some(name) => name.parse(),
        }
    }
}

/// A mixture-of-agents player (`arena.moa{}`): at every dialog turn each proposer answers the
/// same messages, then the synthesizer reads their answers and writes the player's reply. Tokens
/// and cost add up over all of them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MoaPlayerSpec {
    /// Unique player name.
    pub name: String,
    /// The models that propose answers (at least one).
    pub proposers: Vec<ModelSpec>,
    /// The model that merges the proposals into the reply.
    pub synthesizer: ModelSpec,
    /// Play mode module, as for an LLM player.
    #[serde(default = "default_mode")]
    pub mode: String,
    /// Options of the play mode.
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The module holding the mode's words, as for an LLM player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Modules the mode requires, replaced for this player, as for an LLM player.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub modules: BTreeMap<String, String>,
    /// A calibrated Elo, when this player serves as an anchor.
    #[serde(default)]
    pub anchor_elo: Option<f64>,
    /// What a game becomes when a provider refuses one of this player's requests for good.
    #[serde(default)]
    pub on_rejected: OnRejected,
    /// What this player may spend (all its models together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The player's clock (`time_control = { base_s = 900, increment_s = 10 }`, `{ per_move_s =
    /// 60 }` or both); overrides the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
}

fn default_timeout_s() -> f64 {
    120.0
}
fn default_outage_s() -> f64 {
    600.0
}
fn default_decode_retries() -> u32 {
    crate::llm::DEFAULT_DECODE_RETRIES
}
fn default_max_concurrency() -> usize {
    4
}
fn default_stream_idle_s() -> f64 {
    crate::llm::DEFAULT_STREAM_IDLE_TIMEOUT.as_secs_f64()
}
fn default_mode() -> String {
    "blitz".into()
}

/// A UCI engine player.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EnginePlayerSpec {
    /// Unique player name.
    pub name: String,
    /// Binary: a path, or a name looked up on `PATH` and in `/usr/games`.
    #[serde(default = "default_engine_command")]
    pub command: String,
    /// Command-line arguments (e.g. `--uci` for gnuchess).
    #[serde(default)]
    pub args: Vec<String>,
    /// UCI options, set in name order (`Skill Level`, `UCI_Elo`, `Threads`, `Hash`, ...).
    #[serde(default)]
    pub options: BTreeMap<String, EngineOptionValue>,
    /// Search limit per move.
    #[serde(default)]
    pub limits: EngineLimits,
    /// A calibrated Elo for this engine at these settings, used as an anchor for Elo estimates
    /// (LLM Chess: Komodo Dragon level L is `125 (L + 1)`).
    #[serde(default)]
    pub anchor_elo: Option<f64>,
    /// The standard error of `anchor_elo` (set by `arena.ladder`, from the calibration).
    #[serde(default)]
    pub anchor_se: Option<f64>,
    /// The probability (0 to 1) of playing a uniformly random legal move instead of searching:
    /// a seeded mixture of the random mover and the engine, for ladder rungs between them. The
    /// choice and the move are drawn from the tournament seed, `seed`, the game and the ply, so
    /// a game replays move for move (unlike `Skill Level`, which draws from the engine's clock).
    #[serde(default)]
    pub random_move_p: Option<f64>,
    /// Seed of the random moves (with `random_move_p`), mixed with the tournament seed.
    #[serde(default)]
    pub seed: u64,
    /// The player's clock (`time_control = { base_s = 900, increment_s = 10 }`, `{ per_move_s =
    /// 60 }` or both); overrides the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
}

fn default_engine_command() -> String {
    "stockfish".into()
}

/// A UCI option value as a script writes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum EngineOptionValue {
    /// `true`/`false`.
    Bool(bool),
    /// A number.
    Int(i64),
    /// Anything else.
    Text(String),
}

impl std::fmt::Display for EngineOptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineOptionValue::Bool(b) => write!(f, "{b}"),
            EngineOptionValue::Int(i) => write!(f, "{i}"),
            EngineOptionValue::Text(t) => f.write_str(t),
        }
    }
}

/// How long an engine searches per move; the first given of nodes, depth, movetime applies
/// together with the others (UCI combines them).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EngineLimits {
    /// `go nodes N`.
    #[serde(default)]
    pub nodes: Option<u64>,
    /// `go depth N`.
    #[serde(default)]
    pub depth: Option<u32>,
    /// `go movetime N` (milliseconds).
    #[serde(default)]
    pub movetime_ms: Option<u64>,
}

/// A uniform random mover.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomPlayerSpec {
    /// Unique player name.
    pub name: String,
    /// Seed mixed with the tournament seed, game and ply.
    #[serde(default)]
    pub seed: u64,
    /// A calibrated Elo for the random mover (LLM Chess calibrates it at about −122).
    #[serde(default)]
    pub anchor_elo: Option<f64>,
    /// The standard error of `anchor_elo` (set by `arena.ladder`, from the calibration).
    #[serde(default)]
    pub anchor_se: Option<f64>,
    /// The player's clock (`time_control = { base_s = 900, increment_s = 10 }`, `{ per_move_s =
    /// 60 }` or both); overrides the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
}

/// A person, who plays through `arena serve`'s board: `arena run` waits for each of the person's
/// moves, which the server writes into the store (see `arena::tournament::human`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HumanPlayerSpec {
    /// Unique player name.
    pub name: String,
    /// Whether the play page shows the opponent model's reply text after its move (the person
    /// can still switch it on the page); `true` unless set.
    #[serde(default = "default_true")]
    pub show_reply: bool,
    /// A known Elo for the person, used as an anchor like any player's.
    #[serde(default)]
    pub anchor_elo: Option<f64>,
    /// The person's clock (`time_control = { base_s = 900, increment_s = 10 }`, `{ per_move_s =
    /// 60 }` or both); overrides the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<TimeControl>,
}

fn default_true() -> bool {
    true
}

/// A whole tournament: settings, players, and where each player was defined.
#[derive(Debug, Clone, PartialEq)]
pub struct TournamentSpec {
    /// Everything but the players.
    pub settings: TournamentSettings,
    /// The players, in script order.
    pub players: Vec<PlayerSpec>,
    /// `file:line` of each player's definition, by player name (for error messages).
    pub defined_at: BTreeMap<String, String>,
}

impl TournamentSpec {
    /// What a reload may not change, named, or `None`: the schedule's inputs and the players'
    /// identities are fixed while a tournament runs; prompts, parsers, modes and mode options may
    /// change freely.
    pub(crate) fn fixed_parts_changed(&self, new: &TournamentSpec) -> Option<String> {
        if self.settings != new.settings {
            return Some("the tournament settings".into());
        }
        if self.players.len() != new.players.len() {
            return Some("the list of players".into());
        }
        for (a, b) in self.players.iter().zip(&new.players) {
            let same = match (a, b) {
                (PlayerSpec::Llm(a), PlayerSpec::Llm(b)) => {
                    a.name == b.name
                        && a.base_url == b.base_url
                        && a.model == b.model
                        && a.api_key_env == b.api_key_env
                        && a.max_concurrency == b.max_concurrency
                        && a.rate == b.rate
                        && a.on_rejected == b.on_rejected
                        && a.time_control == b.time_control
                }
                // Models and endpoints are fixed; the mode and its options may change.
                (PlayerSpec::Moa(a), PlayerSpec::Moa(b)) => {
                    a.name == b.name
                        && a.proposers == b.proposers
                        && a.synthesizer == b.synthesizer
                        && a.on_rejected == b.on_rejected
                        && a.time_control == b.time_control
                }
                (a, b) => a == b,
            };
            if !same {
                return Some(format!("player `{}`", a.name()));
            }
        }
        None
    }

    /// The player named `name`.
    pub fn player(&self, name: &str) -> Option<&PlayerSpec> {
        self.players.iter().find(|p| p.name() == name)
    }

    /// The endings a game between `white` and `black` is played under: the tournament's
    /// `endings` when set; else cutechess's (`claimed`) when both players are UCI engines, which
    /// is an engine match as cutechess and fastchess play it, and the automatic FIDE endings
    /// otherwise, as both anchors (ChessArena, LLM Chess) play every game with a model, a random
    /// mover or a person in it.
    pub(crate) fn endings_of(&self, white: &str, black: &str) -> crate::board::Endings {
        let engine = |name: &str| matches!(self.player(name), Some(PlayerSpec::Engine(_)));
        match self.settings.endings {
            Some(endings) => endings,
            None if engine(white) && engine(black) => crate::board::Endings::Claimed,
            None => crate::board::Endings::Automatic,
        }
    }

    /// The clock the player named `name` plays on: its own time control, else the
    /// tournament's, else none.
    pub(crate) fn time_control_of(&self, name: &str) -> Option<TimeControl> {
        self.player(name)
            .and_then(PlayerSpec::time_control)
            .or(self.settings.time_control)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysis(json: &str) -> Result<AnalysisSpec, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn analysis_defaults_follow_the_papers() {
        let spec = analysis("{}").unwrap();
        assert!(spec.problems().is_empty());
        assert!(spec.during_play && !spec.all_moves);
        let settings = spec.settings();
        assert_eq!(settings.limits.key(), "depth=20 multipv=3");
        assert_eq!(settings.win_model, WinModel::Lichess);
        let engine = spec.engine_spec();
        assert_eq!(engine.command, "stockfish");
        assert_eq!(
            engine.options,
            [
                ("Threads".into(), "1".into()),
                ("Hash".into(), "128".into())
            ]
        );
        assert!(spec.processes() >= 1);
    }

    #[test]
    fn a_given_limit_replaces_the_default_depth() {
        let spec =
            analysis(r#"{"nodes": 5000, "multipv": 1, "win_model": "chessarena", "processes": 3}"#)
                .unwrap();
        assert_eq!(spec.settings().limits.key(), "nodes=5000 multipv=1");
        assert_eq!(spec.settings().win_model, WinModel::ChessArena);
        assert_eq!(spec.processes(), 3);
    }

    #[test]
    fn a_players_extra_headers_are_key_routes_and_azure_wants_an_openai_format() {
        let llm: LlmPlayerSpec = serde_json::from_value(serde_json::json!({
            "name": "gpt", "base_url": "https://lab.openai.azure.com/openai", "model": "gpt-4o",
            "api_key_env": "AZURE_KEY", "azure": true, "api_version": "2024-10-21",
            "headers": {"X-Gateway-Key": "GATEWAY_KEY"},
        }))
        .expect("a player");
        let player = PlayerSpec::Llm(llm.clone());
        let routes: Vec<String> = player
            .key_routes()
            .iter()
            .map(|r| r.variable.clone())
            .collect();
        assert_eq!(routes, ["AZURE_KEY", "GATEWAY_KEY"]);
        assert!(player.problems().is_empty(), "{:?}", player.problems());
        let anthropic = PlayerSpec::Llm(LlmPlayerSpec {
            provider: Some("anthropic".into()),
            ..llm
        });
        assert!(
            anthropic.problems()[0].contains("`azure` is for the `openai`"),
            "{:?}",
            anthropic.problems()
        );
        let gemini = PlayerSpec::Llm(LlmPlayerSpec {
            provider: Some("gemini".into()),
            azure: false,
            ..serde_json::from_value(serde_json::json!({
                "name": "g", "base_url": "https://x/v1beta", "model": "gemini-2.5-pro",
                "api_version": "v1",
            }))
            .expect("a player")
        });
        assert!(gemini.problems()[0].contains("`api_version` is Anthropic's"));
    }

    #[test]
    fn analysis_settings_are_strict_and_checked() {
        assert!(analysis(r#"{"depht": 10}"#).is_err(), "unknown keys");
        assert!(
            analysis(r#"{"win_model": "elo"}"#).is_err(),
            "unknown win model"
        );
        let spec =
            analysis(r#"{"depth": 0, "nodes": 10, "multipv": 0, "threads": 0, "processes": 0}"#)
                .unwrap();
        let problems = spec.problems();
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems[0].contains("one of `depth`, `nodes`"));
        assert!(problems.iter().any(|p| p.contains("`multipv`")));
        assert!(problems.iter().any(|p| p.contains("`processes`")));
    }
}
