//! Between the format and the store: what the scheduler needs from a format ([`Format`]), the
//! state a format sees, the pairings it returns, and turning pairings into stored, numbered games
//! with their openings.

use std::{collections::BTreeMap, path::Path};

use rand::{SeedableRng, rngs::StdRng, seq::SliceRandom};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::spec::{OpeningOrder, OpeningsSpec, TournamentSpec};
use crate::{
    board::{
        BoardError,
        book::{self, Opening},
        clock::GameClocks,
    },
    script::ScriptError,
    store::{GameRow, GameStatus, PlayerAnalysisRow, ScheduledGame},
    table::Table,
};

/// A tournament format: decides which games to play, a few at a time or all at once. The
/// built-in formats are Lua scripts (`crates/lua` implements this trait).
pub trait Format: Send {
    /// The format's options: its defaults overlaid with the tournament's `format_options`.
    fn options(&self) -> &serde_json::Map<String, serde_json::Value>;

    /// The next games to schedule, `Some(vec![])` to wait for the games in flight, or `None`
    /// when the tournament is complete. Callers use [`next_pairings`], which checks the answer.
    ///
    /// # Errors
    /// A script error, or [`FormatError::NoPairing`] when the format's rules allow no pairing
    /// of its next round.
    fn pairings(&self, state: &FormatState) -> Result<Option<Vec<Pairing>>, FormatError>;

    /// The format's own tables of the games in `state` (a Swiss table with its tie-breaks, a
    /// knockout bracket), shown by `arena leaderboard`, the HTML report and at the end of a run
    /// after the standings every tournament has. None by default.
    ///
    /// # Errors
    /// A script error.
    fn standings(&self, state: &FormatState) -> Result<Vec<Table>, ScriptError> {
        let _ = state;
        Ok(Vec::new())
    }
    /// The tournament as a Swiss pairing program reads it (pairing numbers, every player's
    /// rounds), for `arena export trf`; None for a format that is not a Swiss system (the
    /// default).
    ///
    /// # Errors
    /// A script error.
    fn pairing_record(
        &self,
        state: &FormatState,
    ) -> Result<Option<crate::pairing::Record>, ScriptError> {
        let _ = state;
        Ok(None)
    }
}

/// Why the format could not say which games come next.
#[derive(Debug, Clone, Error)]
pub enum FormatError {
    /// The format script failed.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// The format's rules allow no pairing of its next round (a Swiss nearly as long as a round
    /// robin, where every pairing left would repeat a game or break an absolute colour rule).
    /// The tournament stops there: the games of the rounds before stay in the store, and the
    /// standings after them are the tournament's; running it again stops at the same round.
    #[error(
        "no legal pairing for round {round}: {reason}; the tournament stops after round {played}, and every game played so far is kept",
        played = round.saturating_sub(1)
    )]
    NoPairing {
        /// The round that cannot be paired (1-based).
        round: u32,
        /// Why, in the format's words.
        reason: String,
    },
    /// A pairing names a player the tournament does not have.
    #[error("the format paired an unknown player `{0}`")]
    UnknownPlayer(String),
    /// A pairing has a player play itself.
    #[error("the format paired `{0}` with itself")]
    SelfPairing(String),
    /// A pairing gives Black a share of its clock that is not above 0 and at most 1.
    #[error(
        "the format gave `{black}` a `black_time` of {share}: it must be above 0 and at most 1"
    )]
    BlackTime {
        /// The Black player of the pairing.
        black: String,
        /// The share asked for.
        share: f64,
    },
    /// A pairing names an opening the tournament does not have.
    #[error("the format asked for opening {asked}, but the tournament has {available}")]
    NoSuchOpening {
        /// The 1-based opening number asked for.
        asked: u32,
        /// How many openings there are.
        available: usize,
    },
}

/// Asks `format` for the next games and checks that they pair two different players of the
/// tournament.
///
/// # Errors
/// A script error or an impossible pairing.
pub(crate) fn next_pairings(
    format: &dyn Format,
    state: &FormatState,
) -> Result<Option<Vec<Pairing>>, FormatError> {
    let Some(pairings) = format.pairings(state)? else {
        return Ok(None);
    };
    for p in &pairings {
        for name in [&p.white, &p.black] {
            if !state.players.contains(name) {
                return Err(FormatError::UnknownPlayer(name.clone()));
            }
        }
        if p.white == p.black {
            return Err(FormatError::SelfPairing(p.white.clone()));
        }
        if let Some(share) = p.black_time
            && !(share > 0.0 && share <= 1.0)
        {
            return Err(FormatError::BlackTime {
                black: p.black.clone(),
                share,
            });
        }
    }
    Ok(Some(pairings))
}

/// What a format's `pairings(state)` hook sees.
#[derive(Debug, Clone, Serialize)]
pub struct FormatState {
    /// Player names in script order.
    pub players: Vec<String>,
    /// Each player's `anchor_elo`, by name, where the script gives one (formats that seed by
    /// rating read it).
    pub ratings: BTreeMap<String, f64>,
    /// Every game scheduled so far, finished or not, in schedule order (by `index`), whatever
    /// order they finished in: a format that rates them in this order decides the same way at
    /// any concurrency. A void game that a replay plays again is left out and the replay stands
    /// in its place (with its index), so a format sees what it would have seen had no harness
    /// fault happened.
    pub games: Vec<FormatGame>,
    /// The tournament's `games_per_pair`.
    pub games_per_pair: u32,
    /// How many openings are available (0: games start from the initial position).
    pub openings: u32,
    /// The tournament seed.
    pub seed: u64,
    /// Players who play without a clock, in script order (a format whose games need one, such
    /// as an armageddon's time odds, refuses them in its `check`). Only `check` sees it.
    #[serde(skip)]
    pub untimed: Vec<String>,
    /// The format's options: its defaults overlaid with the tournament's `format_options`.
    pub options: serde_json::Map<String, serde_json::Value>,
    /// Each analysed player's engine analysis so far, by name; absent (nil in Lua) until a game
    /// of the tournament is analysed. Analysis runs beside play, so a format called between games
    /// sees the games analysed by then.
    pub analysis: Option<BTreeMap<String, FormatAnalysis>>,
    /// What each player has spent on model calls so far, by name (every player, zeros for
    /// those that made no call), and whether a budget now keeps its games from starting; absent
    /// (nil in Lua) where the spend was not read.
    pub spend: Option<BTreeMap<String, FormatSpend>>,
}

/// One player's spend as a format sees it (`state.spend[name]`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct FormatSpend {
    /// Model calls.
    pub calls: u64,
    /// Prompt plus completion tokens (estimated for calls without usage).
    pub tokens: u64,
    /// US dollars: the provider's price where it gave one, else the price table's.
    pub usd: f64,
    /// Calls without any price (not in `usd`): `usd` is then a lower bound.
    pub unpriced_calls: u64,
    /// Whether the player's budget, or the tournament's, is reached: its next game would not
    /// start.
    pub budget_reached: bool,
}

impl FormatState {
    /// The state of `spec`'s tournament with these games, before any analysis; `options` are
    /// the format's effective options ([`Format::options`]).
    pub fn new(
        spec: &TournamentSpec,
        games: Vec<FormatGame>,
        openings: u32,
        options: serde_json::Map<String, serde_json::Value>,
    ) -> FormatState {
        FormatState {
            players: spec.players.iter().map(|p| p.name().to_string()).collect(),
            ratings: spec
                .players
                .iter()
                .filter_map(|p| Some((p.name().to_string(), p.anchor_elo()?)))
                .collect(),
            games,
            games_per_pair: spec.settings.games_per_pair,
            openings,
            seed: spec.settings.seed,
            untimed: spec
                .players
                .iter()
                .map(|p| p.name())
                .filter(|name| spec.time_control_of(name).is_none())
                .map(str::to_string)
                .collect(),
            options,
            analysis: None,
            spend: None,
        }
    }
}

/// One player's engine analysis as a format sees it (`state.analysis[name]`): the columns of the
/// papers' tables, rates as fractions of the player's analysed plies.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FormatAnalysis {
    /// Analysed plies the player made.
    pub plies: u64,
    /// Share of moves among the engine's top moves (ChessArena's top-move rate).
    pub top_move_rate: f64,
    /// Share of moves that were the engine's best (LLM Chess's "Best").
    pub best_rate: f64,
    /// Share of inaccuracies.
    pub inaccuracy_rate: f64,
    /// Share of mistakes.
    pub mistake_rate: f64,
    /// Share of blunders.
    pub blunder_rate: f64,
    /// Average centipawn loss per move.
    pub acpl: f64,
    /// Mean Lichess game accuracy, over games analysed to the end.
    pub accuracy: Option<f64>,
    /// Accepted moves per attempt (ChessArena's legal-move rate); only for players that answer
    /// through LLM calls.
    pub legal_move_rate: Option<f64>,
}

impl FormatAnalysis {
    /// The format's view of a player's analysis totals and legal-move rate.
    pub fn from_row(row: &PlayerAnalysisRow, legal_move_rate: Option<f64>) -> FormatAnalysis {
        FormatAnalysis {
            plies: row.plies,
            top_move_rate: row.top_move_rate,
            best_rate: row.rate(row.best),
            inaccuracy_rate: row.rate(row.inaccuracy),
            mistake_rate: row.rate(row.mistake),
            blunder_rate: row.rate(row.blunder),
            acpl: row.acpl,
            accuracy: row.accuracy,
            legal_move_rate,
        }
    }
}

/// A scheduled game as a format sees it.
#[derive(Debug, Clone, Serialize)]
pub struct FormatGame {
    /// Position in the schedule (1-based).
    pub index: u32,
    /// Round number.
    pub round: u32,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// `"1-0"`, `"0-1"` or `"1/2-1/2"` once finished, `"*"` for a finished game that is void
    /// (no result: a format must not score it).
    pub result: Option<String>,
    /// The content hash of the scripts the game started under; `None` until it starts. An
    /// experiment counts evidence only from games under one version of its scripts.
    pub script_hash: Option<String>,
}

impl FormatGame {
    /// The format's view of a stored game; a replay shows its slot's number, the number the
    /// format gave the game.
    pub fn from_row(row: &GameRow) -> Self {
        FormatGame {
            index: row.slot,
            round: row.round,
            white: row.white.clone(),
            black: row.black.clone(),
            result: (row.status == GameStatus::Finished)
                .then(|| row.result.clone())
                .flatten(),
            script_hash: row.script_hash.clone(),
        }
    }
}

/// One game a format asks for.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pairing {
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// Round number (default: 1).
    #[serde(default)]
    pub round: Option<u32>,
    /// Opening number, 1-based, into the tournament's openings (default: the initial position).
    #[serde(default)]
    pub opening: Option<u32>,
    /// Time odds: Black plays on this share of its clock (base and per-move limit; the
    /// increment is kept), White on its own, as in an armageddon. Default: no odds.
    #[serde(default)]
    pub black_time: Option<f64>,
}

/// Loads the tournament's openings: inline FENs, a book file next to the script, or Chess960
/// start positions, ordered and truncated as asked. Chess960 positions are openings like a book's,
/// so each format schedules them as it schedules a book (the built-in ones: each start with
/// both colours).
///
/// # Errors
/// A broken FEN, move or file, named by `file:line` (or by its position in the inline list); a
/// Chess960 start number out of range.
pub fn load_openings(
    spec: Option<&OpeningsSpec>,
    script_dir: &Path,
    seed: u64,
) -> Result<Vec<Opening>, BoardError> {
    let Some(spec) = spec else {
        return Ok(Vec::new());
    };
    let mut openings = Vec::new();
    for number in spec.chess960_numbers(seed) {
        openings.push(Opening::chess960(number)?);
    }
    if let Some(fens) = &spec.fens {
        for (i, fen) in fens.iter().enumerate() {
            openings.push(book::parse_opening_fen(
                fen,
                &format!("openings.fens[{}]", i + 1),
            )?);
        }
    }
    if let Some(name) = &spec.book {
        openings.extend(book::read_built_in(name)?);
    }
    if let Some(file) = &spec.file {
        openings.extend(book::read_book_file(script_dir, file)?);
    }
    if spec.order == Some(OpeningOrder::Random) {
        openings.shuffle(&mut StdRng::seed_from_u64(seed));
    }
    if let Some(n) = spec.count {
        openings.truncate(n);
    }
    Ok(openings)
}

/// Numbers a format's pairings after the games already stored and attaches their openings.
///
/// # Errors
/// A pairing that names an opening the tournament does not have.
/// A game whose pairing gives time odds (`black_time`) has its clocks fixed here, from `spec`'s
/// time controls, and keeps them when it starts; any other takes the tournament's when it starts.
pub(crate) fn to_scheduled(
    pairings: &[Pairing],
    first_index: u32,
    openings: &[Opening],
    spec: &TournamentSpec,
) -> Result<Vec<ScheduledGame>, FormatError> {
    pairings
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let opening = match p.opening {
                None => None,
                Some(n) => Some(openings.get((n as usize).wrapping_sub(1)).ok_or(
                    FormatError::NoSuchOpening {
                        asked: n,
                        available: openings.len(),
                    },
                )?),
            };
            Ok(ScheduledGame {
                index: first_index + i as u32,
                round: p.round.unwrap_or(1),
                white: p.white.clone(),
                black: p.black.clone(),
                start_fen: opening.and_then(|o| o.fen.clone()),
                variant: opening.map(|o| o.variant).unwrap_or_default(),
                opening_moves: opening.map(|o| o.moves.clone()).unwrap_or_default(),
                opening_label: opening.map(|o| o.source.clone()),
                time_control: p.black_time.and_then(|share| {
                    GameClocks {
                        white: spec.time_control_of(&p.white),
                        black: spec.time_control_of(&p.black).map(|tc| tc.scaled(share)),
                    }
                    .to_json()
                }),
            })
        })
        .collect()
}
