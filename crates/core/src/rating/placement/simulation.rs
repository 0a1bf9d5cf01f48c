//! Seeded simulations of rating a player of known strength three ways, for the coverage test and
//! `cargo bench --bench placement`: arena's placement ([`super::place`]), LLM Chess's schedule
//! (equal games against fixed engine levels, its Table 7's levels relative to the player), and
//! ChessArena's matchmaker (Glicko-1, the opponent among the three whose game tells most, until
//! the rating deviation is small enough).
//!
//! A game's result is drawn from the Elo model on the ladder's scale: the player's expected score
//! against an opponent is the logistic of their difference (with the colour's shift), and a
//! share of the games that would otherwise be decided are drawn, most at equal strength:
//! `P(draw) = draw_rate · 4 E (1 − E)`, `P(win) = E − P(draw) / 2`. The rungs' Elos are the truth
//! on that scale, so a run's interval covers when it holds the player's true Elo.

use rand::{Rng, RngExt};

use super::{Next, PlacementConfig, PlacementGame, Rung, Stop, place};
use crate::rating::{
    RatingError, Z95,
    elo_anchor::{self, AnchorGame, Color},
    glicko::{self, GlickoConfig, Rating},
    matchmaking::{Criterion, DEFAULT_TOP_K, rank_opponents},
};

/// The Elo offsets of LLM Chess's levels from the player, as its Table 7 played them for o3
/// (low), placed at 758: Komodo Dragon skills 1–5 and 10, rated `125 · (skill + 1)` (250, 375,
/// 500, 625, 750 and 1375).
pub const LLM_CHESS_OFFSETS: [f64; 6] = [-508.0, -383.0, -258.0, -133.0, -8.0, 617.0];

/// How games are decided in a simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct World {
    /// The share of games drawn at equal strength (fewer the further apart the two are).
    pub draw_rate: f64,
    /// The Elo White gains.
    pub white_advantage: f64,
}

impl Default for World {
    /// Few draws, as language models against engines play them, and LLM Chess's White advantage.
    fn default() -> Self {
        Self {
            draw_rate: 0.1,
            white_advantage: elo_anchor::WHITE_ADVANTAGE,
        }
    }
}

/// What one simulated rating of a player ended with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// Games played.
    pub games: u32,
    /// The estimate, when finite.
    pub elo: Option<f64>,
    /// Its 95% half-width, when finite.
    pub margin95: Option<f64>,
    /// Whether the run reached its target (rather than its game limit or the ladder's end).
    pub reached: bool,
    /// Whether the 95% interval holds the player's true Elo.
    pub covered: bool,
}

impl Run {
    fn new(truth: f64, games: u32, elo: Option<f64>, margin95: Option<f64>, reached: bool) -> Run {
        let covered = match (elo, margin95) {
            (Some(elo), Some(margin)) => (elo - truth).abs() <= margin,
            _ => false,
        };
        Run {
            games,
            elo,
            margin95,
            reached,
            covered,
        }
    }
}

/// One game's points for a player of true Elo `player` with `color` against `opponent`.
pub fn play(rng: &mut impl Rng, world: &World, player: f64, opponent: f64, color: Color) -> f64 {
    let e =
        1.0 / (1.0 + 10f64.powf((opponent - player - color.shift(world.white_advantage)) / 400.0));
    let draw = world.draw_rate * 4.0 * e * (1.0 - e);
    let u: f64 = rng.random();
    if u < e - draw / 2.0 {
        1.0
    } else if u < e + draw / 2.0 {
        0.5
    } else {
        0.0
    }
}

/// arena's placement of a player of true Elo `truth` on `rungs`.
///
/// # Errors
/// As [`place`].
pub fn placement(
    rng: &mut impl Rng,
    world: &World,
    rungs: &[Rung],
    truth: f64,
    config: &PlacementConfig,
) -> Result<(Run, Stop), RatingError> {
    let mut games: Vec<PlacementGame> = Vec::new();
    loop {
        let placed = place(rungs, &games, config)?;
        match placed.next {
            Next::Pair(rung) => {
                for color in [Color::White, Color::Black] {
                    let score = play(rng, world, truth, rungs[rung].elo, color);
                    games.push(PlacementGame { rung, score, color });
                }
            }
            Next::Stop(stop) => {
                let run = Run::new(
                    truth,
                    placed.games,
                    placed.estimate.and_then(|e| e.elo()),
                    placed.margin95(),
                    stop == Stop::Target,
                );
                return Ok((run, stop));
            }
        }
    }
}

/// LLM Chess's schedule extended until its interval reaches `target`: rounds of one game against
/// each level (`truth + offset`, exactly known Elo), the player Black as in LLM Chess, the
/// interval checked after each round; at most `max_games`.
///
/// # Errors
/// As [`elo_anchor::estimate`].
pub fn fixed_levels(
    rng: &mut impl Rng,
    world: &World,
    offsets: &[f64],
    truth: f64,
    target: f64,
    max_games: u32,
) -> Result<Run, RatingError> {
    let mut games: Vec<AnchorGame> = Vec::new();
    loop {
        for offset in offsets {
            let opponent_elo = truth + offset;
            games.push(AnchorGame {
                opponent_elo,
                color: Color::Black,
                score: play(rng, world, truth, opponent_elo, Color::Black),
                opponent_se: 0.0,
            });
        }
        let blocks = elo_anchor::blocks_from_games(&games, world.white_advantage)?;
        let estimate = elo_anchor::estimate(&blocks)?;
        let margin = estimate.margin95();
        let reached = margin.is_some_and(|m| m <= target);
        let played = games.len() as u32;
        if reached || played + offsets.len() as u32 > max_games {
            return Ok(Run::new(truth, played, estimate.elo(), margin, reached));
        }
    }
}

/// ChessArena's matchmaker until the player's rating deviation is at most `target / 1.96` (its
/// interval `± 1.96 RD` at the target): the player starts at 1500 with RD 350, the rungs keep
/// their Elo with their standard error as RD (at least 1), each step plays a pair (both colours)
/// against one of the three rungs ChessArena's criterion ranks first, chosen uniformly, and
/// rates each game as its own period with no floor on the RD; at most `max_games`.
///
/// # Errors
/// As [`glicko::update`].
pub fn matchmaker(
    rng: &mut impl Rng,
    world: &World,
    rungs: &[Rung],
    truth: f64,
    target: f64,
    max_games: u32,
) -> Result<Run, RatingError> {
    const PLAYER: &str = "player";
    let config = GlickoConfig {
        min_rd: 0.0,
        ..GlickoConfig::default()
    };
    let mut pool: std::collections::BTreeMap<String, Rating> = rungs
        .iter()
        .map(|r| (r.name.clone(), Rating::new(r.elo, r.se.max(1.0))))
        .collect();
    pool.insert(PLAYER.to_owned(), config.initial());
    let names: Vec<&str> = rungs.iter().map(|r| r.name.as_str()).collect();
    let mut games = 0_u32;
    loop {
        let me = pool[PLAYER];
        let reached = Z95 * me.rd <= target;
        if reached || games + 2 > max_games {
            return Ok(Run::new(
                truth,
                games,
                Some(me.rating),
                Some(Z95 * me.rd),
                reached,
            ));
        }
        let mut ranked = rank_opponents(PLAYER, &names, &pool, Criterion::ChessArena)?;
        ranked.truncate(DEFAULT_TOP_K);
        let (name, _) = &ranked[rng.random_range(0..ranked.len())];
        let rung = rungs
            .iter()
            .find(|r| &r.name == name)
            .expect("a ranked rung");
        let them = pool[name.as_str()];
        for color in [Color::White, Color::Black] {
            let score = play(rng, world, truth, rung.elo, color);
            let me = pool[PLAYER];
            let updated = match color {
                Color::White => glicko::update(me, them, score, &config)?.0,
                Color::Black => glicko::update(them, me, 1.0 - score, &config)?.1,
            };
            pool.insert(PLAYER.to_owned(), updated);
            games += 1;
        }
    }
}
