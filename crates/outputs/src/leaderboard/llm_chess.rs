//! The LLM Chess leaderboard: per model player, Win/Loss with its 95 % margin, draws and their
//! reasons, game duration, wrong actions and wrong moves per 1000 moves, action calls per ply,
//! average plies, tokens per move, cost per game, material difference at the end, and Elo against
//! the anchored opponents (LLM Chess's Algorithm 1, see [`crate::rating::elo_anchor`]).
//!
//! Definitions, after LLM Chess's `get_refined_csv.py` unless said otherwise:
//! - Win/Loss is `((W − L) / N) / 2 + 0.5` in percent, its margin `1.96 · sd / √N` over per-game
//!   scores 1, ½, 0.
//! - Game duration is the mean over games of 1, or `plies / max_plies` for a game the player lost by
//!   a protocol failure (terminations `forfeit`, `too_many_wrong_actions`, `max_turns`).
//! - Wrong actions are replies that were no action (`wrong_action`, and the single-request modes'
//!   `no_move_found`, `unparseable`, `forbidden_reasoning`, and arena's `cut_off`, which LLM
//!   Chess cannot tell apart as it reads no finish reason); wrong moves are refused moves
//!   (`wrong_move`, `illegal`, `ambiguous`). Both per 1000 moves of the player's games.
//! - Moves, as LLM Chess counts them (its `number_of_moves`): both sides' plies of the game, plus
//!   the turn at which a player failed when that turn came back without a move (too many wrong
//!   actions, max turns, forfeit; not a request the API refused), as [`moves`] explains. Wrong
//!   actions and wrong moves per 1000 moves, game duration and average moves use this count.
//! - Action calls per ply: the replies the play mode read (mixture proposals and a vote's
//!   unplayed samples not counted) per ply the player was asked to move at (arena's own
//!   figure). Tokens per move: completion tokens of every call (proposals and samples
//!   included) over all moves of the player's games, both sides', as LLM
//!   Chess divides `completion_tokens_black` by `number_of_moves`.
//! - Cost per game from the built-in [`PriceTable`]; `-` when a model has no price, `unknown`
//!   (and tokens per move too) when any call of the player came back without token usage.
//! - Material: pawn 1, knight 3, bishop 3, rook 5, queen 9, the player's minus the opponent's, in
//!   the final position (checkmate, stalemate and every other ending on the board included),
//!   averaged.
//! - Elo: each game against an opponent with an `anchor_elo` is one observation, colour-corrected
//!   by the colour the player actually had (±35). All wins or all losses give a one-sided bound
//!   (`≥` or `≤`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use shakmaty::{Color, Position, fen::Fen, uci::UciMove};

use crate::{
    board::{Game, GameResult, Termination},
    llm::{CostSource, PriceTable},
    rating::elo_anchor::{self, AnchorGame, EloEstimate, WHITE_ADVANTAGE},
    store::{CallSummary, GameRow, GameStatus, PlayerRow, Store, StoreError, TournamentRow},
    table::{Cell, Table},
};

/// What a cell shows for a number that cannot be known (a reply reported no token usage).
pub const UNKNOWN: &str = "unknown";

/// Outcomes counted as wrong actions.
/// A reply cut off at the token limit (`cut_off`) is one: LLM Chess reads no finish reason, so a
/// cut reply is to it a reply without a valid action.
const WRONG_ACTIONS: &[&str] = &[
    "wrong_action",
    "no_move_found",
    "unparseable",
    "forbidden_reasoning",
    "cut_off",
];
/// Outcomes counted as wrong moves.
const WRONG_MOVES: &[&str] = &["wrong_move", "illegal", "ambiguous"];
/// The outcome of a mixture proposer's call.
const PROPOSAL: &str = crate::store::PROPOSAL_OUTCOME;

/// One finished game as the table needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishedGame {
    /// The game's id (calls refer to it).
    pub id: i64,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// The result.
    pub result: GameResult,
    /// How it ended.
    pub termination: Termination,
    /// Plies played.
    pub plies: u32,
    /// Moves as LLM Chess counts them ([`moves`]): the plies played, plus the turn a player
    /// failed at when that turn came back without a move.
    pub moves: u32,
    /// Material (1/3/3/5/9) of White and Black in the final position.
    pub material: (u32, u32),
}

/// Whether a tournament has players that play the agentic mode or are mixtures of agents, so that
/// `arena leaderboard` shows this table without being asked.
pub fn applies(players: &[PlayerRow]) -> bool {
    players.iter().any(|p| {
        p.kind == "moa"
            || serde_json::from_str::<serde_json::Value>(&p.settings_json)
                .is_ok_and(|s| s["mode"] == "agentic")
    })
}

/// The LLM Chess table of a stored tournament.
///
/// # Errors
/// When the store cannot be read.
pub(crate) fn table_for(store: &Store, tournament: &TournamentRow) -> Result<Table, StoreError> {
    let players = store.players(tournament.id)?;
    let mut games = Vec::new();
    for g in store.games(tournament.id)? {
        if let Some(f) = finished(store, &g)? {
            games.push(f);
        }
    }
    let calls = store.call_summaries(tournament.id)?;
    let settings: serde_json::Value =
        serde_json::from_str(&tournament.settings_json).unwrap_or_default();
    let max_plies = settings["max_plies"].as_u64().unwrap_or(200) as u32;
    let (prices, unreadable) = prices_and_problem(tournament);
    let mut table = table(&players, &games, &calls, max_plies, &prices);
    if let Some(e) = unreadable {
        table.notes.push(format!(
            "the tournament's own prices cannot be read ({e}): costs use the built-in prices only"
        ));
    }
    Ok(table)
}

/// The prices a tournament's calls are costed with: the built-in table, extended (and overridden)
/// by the script's own `prices`.
pub fn prices(tournament: &TournamentRow) -> PriceTable {
    prices_and_problem(tournament).0
}

/// As [`prices`], and why the tournament's own prices were left out, if they were (`arena check`
/// refuses a malformed table now; a store written before may still hold one).
fn prices_and_problem(tournament: &TournamentRow) -> (PriceTable, Option<String>) {
    let settings: serde_json::Value =
        serde_json::from_str(&tournament.settings_json).unwrap_or_default();
    let mut prices = PriceTable::built_in();
    let mut unreadable = None;
    if !settings["prices"].is_null() {
        match serde_json::from_value::<BTreeMap<String, crate::llm::Price>>(
            settings["prices"].clone(),
        ) {
            Ok(own) => {
                for (model, price) in own {
                    prices.insert(model, price);
                }
            }
            // `arena check` refuses such a table now; a store written before may still hold one.
            Err(e) => unreadable = Some(e),
        }
    }
    (prices, unreadable.map(|e| e.to_string()))
}

fn finished(store: &Store, g: &GameRow) -> Result<Option<FinishedGame>, StoreError> {
    if g.status != GameStatus::Finished {
        return Ok(None);
    }
    let (Some(result), Some(termination)) = (
        g.result.as_deref().and_then(|r| r.parse().ok()),
        g.termination.as_deref().and_then(|t| t.parse().ok()),
    ) else {
        return Ok(None);
    };
    let plies = store.plies(g.id)?;
    // The final position, played out with shakmaty itself: `Game` refuses to start from a
    // position where the game is over, which is every game that ends on the board.
    let start = match plies.first() {
        Some(first) => Some(first.fen_before.clone()),
        None => g.start_fen.clone(),
    };
    let final_position = match plies.last() {
        Some(last) => position_in(g.variant, &last.fen_before).and_then(|p| {
            let mv = last.uci.parse::<UciMove>().ok()?.to_move(&p).ok()?;
            p.play(mv).ok()
        }),
        None => match start {
            Some(fen) => position_in(g.variant, &fen),
            None => Game::new_in(g.variant, None, 0)
                .ok()
                .map(|game| game.position().clone()),
        },
    };
    let material = final_position.map(|p| material(&p)).unwrap_or((0, 0));
    let plies = plies.len() as u32;
    Ok(Some(FinishedGame {
        id: g.id,
        white: g.white.clone(),
        black: g.black.clone(),
        result,
        termination,
        plies,
        moves: moves(plies, termination),
        material,
    }))
}

/// The moves of a game as LLM Chess counts them (`number_of_moves`): `run()` in
/// maxim-saplin/llm_chess, file `llm_chess.py`, adds one to its move count after every turn
/// that returns, a move made or not, before it checks how the turn ended. So a game lost at a
/// turn that came back without a move (too many wrong actions, the dialog's turn limit, a
/// forfeit) counts that turn as a move; a turn cut short by the API refusing the request (the
/// context exceeded, a request rejected) raises out of the turn before the count, and LLM Chess
/// ends that game as an error with the turn uncounted.
pub(crate) fn moves(plies: u32, termination: Termination) -> u32 {
    let turn_returned_without_a_move = matches!(
        termination,
        Termination::Forfeit | Termination::TooManyWrongActions | Termination::MaxTurns
    );
    plies + u32::from(turn_returned_without_a_move)
}

/// A FEN of a `variant` game as a position, wherever the game stands.
fn position_in(variant: crate::board::Variant, fen: &str) -> Option<shakmaty::Chess> {
    fen.parse::<Fen>()
        .ok()?
        .into_position(variant.castling_mode())
        .ok()
}

/// Material of White and Black with the values 1, 3, 3, 5, 9.
pub fn material(pos: &shakmaty::Chess) -> (u32, u32) {
    let board = pos.board();
    let side = |color: Color| {
        let of = board.by_color(color);
        (board.pawns() & of).count() as u32
            + 3 * (board.knights() & of).count() as u32
            + 3 * (board.bishops() & of).count() as u32
            + 5 * (board.rooks() & of).count() as u32
            + 9 * (board.queens() & of).count() as u32
    };
    (side(Color::White), side(Color::Black))
}

/// Sums over one player's games and calls.
#[derive(Default)]
struct Tally {
    wins: u32,
    draws: u32,
    losses: u32,
    draw_reasons: BTreeMap<&'static str, u32>,
    duration: f64,
    plies: u64,
    material_diff: i64,
    opponents: BTreeMap<String, u32>,
    anchored: Vec<AnchorGame>,
    wrong_actions: u64,
    wrong_moves: u64,
    replies: u64,
    asked: BTreeSet<(i64, u32)>,
    completion_tokens: u64,
    /// Calls whose reply reported no usage: their tokens are unknown.
    calls_without_usage: u64,
    /// Calls with neither usage nor a provider price: the player's cost is unknown.
    calls_without_cost: u64,
    /// Calls priced by the provider itself, and all calls.
    provider_priced: u64,
    calls: u64,
    cost: Option<f64>,
}

/// The table from plain data (see the module docs for each column).
pub fn table(
    players: &[PlayerRow],
    games: &[FinishedGame],
    calls: &[CallSummary],
    max_plies: u32,
    prices: &PriceTable,
) -> Table {
    // An anchor's Elo and its own standard error (a built-in ladder rung carries one).
    let anchors: HashMap<&str, (f64, f64)> = players
        .iter()
        .filter_map(|p| {
            let s: serde_json::Value = serde_json::from_str(&p.settings_json).ok()?;
            let se = s["anchor_se"].as_f64().unwrap_or(0.0);
            Some((p.name.as_str(), (s["anchor_elo"].as_f64()?, se)))
        })
        .collect();
    let model_players: Vec<&PlayerRow> = players
        .iter()
        .filter(|p| p.kind == "llm" || p.kind == "moa")
        .collect();
    let mut tallies: BTreeMap<&str, Tally> = model_players
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                Tally {
                    cost: Some(0.0),
                    ..Tally::default()
                },
            )
        })
        .collect();

    for g in games {
        for (me, opponent, color) in [
            (&g.white, &g.black, Color::White),
            (&g.black, &g.white, Color::Black),
        ] {
            let Some(t) = tallies.get_mut(me.as_str()) else {
                continue;
            };
            let score = g.result.score_for(color);
            let lost = score < 0.25;
            match score {
                s if s > 0.75 => t.wins += 1,
                s if s < 0.25 => t.losses += 1,
                _ => {
                    t.draws += 1;
                    *t.draw_reasons.entry(g.termination.as_str()).or_default() += 1;
                }
            }
            t.duration += if lost && g.termination.is_protocol_failure() && max_plies > 0 {
                (f64::from(g.moves) / f64::from(max_plies)).min(1.0)
            } else {
                1.0
            };
            t.plies += u64::from(g.moves);
            let (white, black) = (i64::from(g.material.0), i64::from(g.material.1));
            t.material_diff += match color {
                Color::White => white - black,
                Color::Black => black - white,
            };
            *t.opponents.entry(opponent.clone()).or_default() += 1;
            if let Some(&(elo, opponent_se)) = anchors.get(opponent.as_str()) {
                t.anchored.push(AnchorGame {
                    opponent_elo: elo,
                    opponent_se,
                    color: match color {
                        Color::White => elo_anchor::Color::White,
                        Color::Black => elo_anchor::Color::Black,
                    },
                    score,
                });
            }
        }
    }
    let finished: BTreeSet<i64> = games.iter().map(|g| g.id).collect();
    for c in calls.iter().filter(|c| finished.contains(&c.game_id)) {
        let Some(t) = tallies.get_mut(c.player.as_str()) else {
            continue;
        };
        let outcome = c.outcome.as_deref().unwrap_or("");
        if WRONG_ACTIONS.contains(&outcome) {
            t.wrong_actions += 1;
        }
        if WRONG_MOVES.contains(&outcome) {
            t.wrong_moves += 1;
        }
        if outcome != PROPOSAL && outcome != crate::store::SAMPLE_OUTCOME {
            t.replies += 1;
        }
        t.asked.insert((c.game_id, c.ply));
        // The provider's own price when it sent one, else the table's over the usage.
        let cost = c.cost(prices);
        t.calls += 1;
        if cost.source == CostSource::Provider {
            t.provider_priced += 1;
        }
        match c.completion_tokens.filter(|_| c.prompt_tokens.is_some()) {
            Some(completion_tokens) => t.completion_tokens += completion_tokens,
            None => t.calls_without_usage += 1,
        }
        if cost.usd.is_none() && c.usage().is_none() {
            t.calls_without_cost += 1;
        }
        t.cost = match (t.cost, cost.usd) {
            (Some(sum), Some(cost)) => Some(sum + cost),
            _ => None,
        };
    }

    let mut rows: Vec<(f64, f64, f64, Vec<Cell>)> = Vec::new();
    for (name, t) in &tallies {
        let n = t.wins + t.draws + t.losses;
        let per = |count: u64, of: u64| {
            if of == 0 {
                Cell::Empty
            } else {
                Cell::Num(count as f64 / of as f64, 2)
            }
        };
        let per_1000 = |count: u64| {
            if t.plies == 0 {
                Cell::Empty
            } else {
                Cell::Num(1000.0 * count as f64 / t.plies as f64, 1)
            }
        };
        let (win_loss, margin) = match elo_anchor::win_loss(t.wins, t.draws, t.losses) {
            Ok(wl) => (
                Cell::Num(100.0 * wl.normalised, 1),
                Cell::Num(100.0 * wl.normalised_margin95, 1),
            ),
            Err(_) => (Cell::Empty, Cell::Empty),
        };
        let (elo, elo_margin) = elo_cells(&t.anchored);
        let asked = t.asked.len() as u64;
        let tokens_per_move = if t.plies == 0 {
            f64::INFINITY
        } else {
            t.completion_tokens as f64 / t.plies as f64
        };
        let duration = if n == 0 {
            0.0
        } else {
            t.duration / f64::from(n)
        };
        let sort_wl =
            elo_anchor::win_loss(t.wins, t.draws, t.losses).map_or(-1.0, |w| w.normalised);
        let cells = vec![
            (*name).into(),
            n.into(),
            win_loss,
            margin,
            t.wins.into(),
            t.draws.into(),
            t.losses.into(),
            listing(
                t.draw_reasons
                    .iter()
                    .map(|(k, v)| (k.replace('_', " "), *v)),
            ),
            if n == 0 {
                Cell::Empty
            } else {
                Cell::Num(100.0 * duration, 1)
            },
            per_1000(t.wrong_actions),
            per_1000(t.wrong_moves),
            per(t.replies, asked),
            if n == 0 {
                Cell::Empty
            } else {
                Cell::Num(t.plies as f64 / f64::from(n), 1)
            },
            if t.calls_without_usage > 0 {
                Cell::Text(UNKNOWN.into())
            } else {
                per(t.completion_tokens, t.plies)
            },
            match t.cost {
                _ if t.calls_without_cost > 0 && n > 0 => Cell::Text(UNKNOWN.into()),
                Some(cost) if n > 0 => Cell::Num(cost / f64::from(n), 4),
                _ => Cell::Empty,
            },
            if n == 0 {
                Cell::Empty
            } else {
                Cell::Num(t.material_diff as f64 / f64::from(n), 1)
            },
            elo,
            elo_margin,
            listing(t.opponents.iter().map(|(k, v)| (k.clone(), *v))),
        ];
        rows.push((sort_wl, duration, tokens_per_move, cells));
    }
    // LLM Chess's order: Win/Loss, then game duration (both descending), then tokens (ascending).
    rows.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.total_cmp(&b.2))
    });
    let mut table = Table::new(
        "LLM Chess",
        &[
            "player",
            "games",
            "Win/Loss %",
            "±95%",
            "W",
            "D",
            "L",
            "draws by",
            "duration %",
            "wrong actions/1000",
            "wrong moves/1000",
            "actions/ply",
            "avg moves",
            "tokens/move",
            "cost/game $",
            "material diff",
            "Elo",
            "Elo ±95%",
            "games vs",
        ],
    )
    .of_kind("llm_chess");
    table.rows = rows.into_iter().map(|r| r.3).collect();
    let without_usage: Vec<String> = tallies
        .iter()
        .filter(|(_, t)| t.calls_without_usage > 0)
        .map(|(name, t)| format!("{name} ({})", t.calls_without_usage))
        .collect();
    if !without_usage.is_empty() {
        table.notes.push(format!(
            "tokens/move and cost/game are unknown where a reply reported no token usage (unless \
             the provider priced it): calls without usage by {}",
            without_usage.join(", ")
        ));
    }
    let provider_priced: Vec<String> = tallies
        .iter()
        .filter(|(_, t)| t.provider_priced > 0)
        .map(|(name, t)| format!("{name} ({} of {})", t.provider_priced, t.calls))
        .collect();
    if !provider_priced.is_empty() {
        table.notes.push(format!(
            "cost/game is the provider's own price for the calls it priced, the price table's for \
             the others: calls priced by the provider by {}",
            provider_priced.join(", ")
        ));
    }
    table.notes.push(
        "Win/Loss = ((W − L)/N)/2 + 50 %; duration counts games lost by forfeit, too many wrong \
         actions or max turns as plies/max plies; Elo against opponents with anchor_elo, \
         colour-corrected per game (±35)"
            .into(),
    );
    table
}

fn elo_cells(games: &[AnchorGame]) -> (Cell, Cell) {
    if games.is_empty() {
        return (Cell::Empty, Cell::Empty);
    }
    let estimate = elo_anchor::blocks_from_games(games, WHITE_ADVANTAGE)
        .and_then(|blocks| elo_anchor::estimate(&blocks));
    match estimate {
        Ok(EloEstimate::Point { elo, se }) => {
            (Cell::Num(elo, 0), Cell::Num(crate::rating::Z95 * se, 0))
        }
        Ok(EloEstimate::AtLeast { lower95 }) => {
            (Cell::Text(format!("≥ {lower95:.0}")), Cell::Empty)
        }
        Ok(EloEstimate::AtMost { upper95 }) => (Cell::Text(format!("≤ {upper95:.0}")), Cell::Empty),
        Err(e) => {
            tracing::warn!("no Elo estimate: {e}");
            (Cell::Empty, Cell::Empty)
        }
    }
}

fn listing(items: impl Iterator<Item = (String, u32)>) -> Cell {
    let parts: Vec<String> = items.map(|(k, v)| format!("{k} {v}")).collect();
    if parts.is_empty() {
        Cell::Empty
    } else {
        Cell::Text(parts.join(", "))
    }
}

#[cfg(test)]
mod tests;
