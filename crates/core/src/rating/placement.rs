//! Placing a player on a calibrated ladder to a stated precision in as few games as the
//! information allows.
//!
//! The player plays pairs of games (both colours, one opening) against the ladder's rungs. After
//! each pair its Elo is fitted again and [`place`] says what comes next: another pair against the
//! rung that leaves the smallest expected variance, or a stop and why ([`Stop`]).
//!
//! **The estimate** is [`elo_anchor::estimate`]: the maximum-likelihood Elo against opponents of
//! known Elo, the rungs pinned at their calibrated values (the same pinned scale the ladder's
//! calibration fitted), each game with its colour's shift. It has two intervals:
//! - *on the ladder's scale* ([`Placement::margin95`]): the rungs' Elos taken as exact, the
//!   statistical error only. `target` stops on this one, as LLM Chess's interval treats its
//!   engine levels as exact, so the two are compared like for like.
//! - *with the ladder's own error* ([`Placement::with_ladder`]): the rungs'
//!   calibration errors added as [`elo_anchor`] adds them (perfectly correlated, an upper
//!   bound): what to quote when comparing with ratings on another scale.
//!
//! **The next rung.** A game at expected score `p` carries Fisher information `p (1 − p) q²`
//! about the player's Elo (`q = ln 10 / 400`), most at `p = ½`. Before a pair, the player's Elo is
//! believed normal around a working estimate (the posterior mode under a weak normal prior around
//! `start_elo`, finite even after a sweep of wins or losses) with that mode's standard deviation.
//! For each rung, the pair's information is averaged over that belief (Gauss–Hermite, 7 nodes),
//! and the expected variance after the pair is `1 / (q² W') + (S' / W')²`, where `W'` sums every
//! game's information weight and `S'` the weights times the rungs' standard errors: the
//! statistical variance plus the ladder's share. The rung with the smallest is chosen, so a
//! poorly calibrated rung loses to an equally informative, better calibrated one. A rung the
//! player is known to be out of range of (its 95% interval puts the expected score below 1% or
//! above 99% even at its favourable end) is never chosen.
//!
//! **Stops**, in this order: the player's interval lies wholly below the bottom rung or above the
//! top one ([`Stop::BelowLadder`], [`Stop::AboveLadder`]: outside the ladder's range, never
//! extrapolated); the interval on the ladder's scale is at most `± target` ([`Stop::Target`]);
//! `max_games` played ([`Stop::MaxGames`]). A budget is the tournament's to enforce.
//!
//! **Coverage.** Stopping when an interval is narrow enough can make it cover less than it says.
//! The simulation in [`simulation`] measures it (the book's methods page, "Placement", gives the
//! figures); the half-width is the plain `1.96 · SE`, which the simulation found to cover 95%
//! within its own sampling error, so no correction is applied.

pub mod simulation;

use std::f64::consts::LN_10;

use super::{
    RatingError, Z95,
    elo_anchor::{self, AnchorGame, Block, Color, EloEstimate},
};

/// The standard deviation of the weak prior behind the working estimate, in Elo: wide enough
/// that a few games outweigh it, narrow enough to keep the estimate finite after a sweep.
pub const PRIOR_SD: f64 = 500.0;

/// The expected score below which (or above one minus which) a rung is out of the player's
/// range, at the favourable end of its 95% interval.
pub const OUT_OF_RANGE_SCORE: f64 = 0.01;

/// Gauss–Hermite nodes and weights for 7 points (`∫ e^{−x²} f(x) dx ≈ Σ wᵢ f(xᵢ)`).
const HERMITE: [(f64, f64); 7] = [
    (-2.651_961_356_835_233, 0.000_971_781_245_099_519),
    (-1.673_551_628_767_471, 0.054_515_582_819_127_03),
    (-0.816_287_882_858_964_7, 0.425_607_252_610_127_8),
    (0.0, 0.810_264_617_556_807_3),
    (0.816_287_882_858_964_7, 0.425_607_252_610_127_8),
    (1.673_551_628_767_471, 0.054_515_582_819_127_03),
    (2.651_961_356_835_233, 0.000_971_781_245_099_519),
];

/// `q = ln 10 / 400`: the Elo logistic's slope factor.
const Q: f64 = LN_10 / 400.0;

/// One rung of the ladder the player is placed on.
#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    /// The rung's player name.
    pub name: String,
    /// Its calibrated Elo.
    pub elo: f64,
    /// The standard error of that Elo (0 for a rung of exactly known rating).
    pub se: f64,
}

/// One finished game of the player against a rung.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacementGame {
    /// The index of the rung in the ladder given to [`place`].
    pub rung: usize,
    /// The player's points: 1, ½ or 0.
    pub score: f64,
    /// The colour the player had.
    pub color: Color,
}

/// How a placement runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlacementConfig {
    /// Stop when the 95% half-width on the ladder's scale is at most this, in Elo.
    pub target: f64,
    /// Stop after this many games.
    pub max_games: u32,
    /// Where the working estimate starts before any game (default: the middle rung's Elo).
    pub start_elo: Option<f64>,
    /// The Elo a player gains by having White (see [`elo_anchor::WHITE_ADVANTAGE`]).
    pub white_advantage: f64,
}

impl PlacementConfig {
    /// A placement to `± target` in at most `max_games`, started in the ladder's middle, with
    /// LLM Chess's White advantage.
    pub fn new(target: f64, max_games: u32) -> Self {
        Self {
            target,
            max_games,
            start_elo: None,
            white_advantage: elo_anchor::WHITE_ADVANTAGE,
        }
    }
}

/// Why a placement stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The interval on the ladder's scale reached the target.
    Target,
    /// `max_games` were played first.
    MaxGames,
    /// The player's 95% interval lies wholly below the bottom rung's Elo.
    BelowLadder,
    /// The player's 95% interval lies wholly above the top rung's Elo.
    AboveLadder,
}

impl Stop {
    /// The stop's stable name, for tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Target => "target",
            Self::MaxGames => "max_games",
            Self::BelowLadder => "below_ladder",
            Self::AboveLadder => "above_ladder",
        }
    }
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Play a pair of games (both colours) against this rung (an index into the ladder).
    Pair(usize),
    /// Stop.
    Stop(Stop),
}

/// Where a player stands and what comes next.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Games played.
    pub games: u32,
    /// The estimate on the ladder's scale (`None` before any game).
    pub estimate: Option<EloEstimate>,
    /// The estimate with the ladder's own error in its standard error.
    pub with_ladder: Option<EloEstimate>,
    /// The games against each rung, in ladder order.
    pub games_per_rung: Vec<u32>,
    /// What comes next.
    pub next: Next,
}

impl Placement {
    /// The 95% half-width on the ladder's scale, for a finite estimate.
    pub fn margin95(&self) -> Option<f64> {
        self.estimate.and_then(|e| e.margin95())
    }
}

/// Fits the player's games against `rungs` and decides the next step.
///
/// # Errors
/// [`RatingError::InvalidValue`] for a ladder that is empty or not finite, a non-finite or
/// non-positive target, or a game naming a rung that does not exist; errors of
/// [`elo_anchor::estimate`].
pub fn place(
    rungs: &[Rung],
    games: &[PlacementGame],
    config: &PlacementConfig,
) -> Result<Placement, RatingError> {
    check(rungs, games, config)?;
    let mut games_per_rung = vec![0_u32; rungs.len()];
    for game in games {
        games_per_rung[game.rung] += 1;
    }
    let played = u32::try_from(games.len()).unwrap_or(u32::MAX);
    let (estimate, with_ladder) = if games.is_empty() {
        (None, None)
    } else {
        (
            Some(elo_anchor::estimate(&blocks(rungs, games, config, false)?)?),
            Some(elo_anchor::estimate(&blocks(rungs, games, config, true)?)?),
        )
    };
    let next = match estimate {
        Some(estimate) => match stop(rungs, &estimate, played, config) {
            Some(stop) => Next::Stop(stop),
            None => Next::Pair(next_rung(rungs, games, Some(&estimate), config)),
        },
        None if config.max_games < 2 => Next::Stop(Stop::MaxGames),
        None => Next::Pair(next_rung(rungs, games, None, config)),
    };
    Ok(Placement {
        games: played,
        estimate,
        with_ladder,
        games_per_rung,
        next,
    })
}

/// The games a player needs at best to reach a 95% half-width of `target`: every game against an
/// opponent of its own strength and exactly known Elo (`p = ½`, information `q² / 4` a game),
/// without draws.
pub fn information_bound(target: f64) -> f64 {
    let se = target / Z95;
    1.0 / (se * se * 0.25 * Q * Q)
}

fn check(
    rungs: &[Rung],
    games: &[PlacementGame],
    config: &PlacementConfig,
) -> Result<(), RatingError> {
    let invalid = |what, value| Err(RatingError::InvalidValue { what, value });
    if rungs.is_empty() {
        return invalid("rungs", 0.0);
    }
    for rung in rungs {
        if !rung.elo.is_finite() {
            return invalid("rung elo", rung.elo);
        }
        if !(rung.se.is_finite() && rung.se >= 0.0) {
            return invalid("rung se", rung.se);
        }
    }
    if !(config.target.is_finite() && config.target > 0.0) {
        return invalid("target", config.target);
    }
    if let Some(start) = config.start_elo
        && !start.is_finite()
    {
        return invalid("start_elo", start);
    }
    for game in games {
        if game.rung >= rungs.len() {
            return invalid("rung index", game.rung as f64);
        }
        if ![0.0, 0.5, 1.0].contains(&game.score) {
            return invalid("score", game.score);
        }
    }
    Ok(())
}

/// The games as [`elo_anchor`] blocks (one per rung and colour), with or without the rungs'
/// standard errors.
fn blocks(
    rungs: &[Rung],
    games: &[PlacementGame],
    config: &PlacementConfig,
    with_ladder_error: bool,
) -> Result<Vec<Block>, RatingError> {
    let games: Vec<AnchorGame> = games
        .iter()
        .map(|game| AnchorGame {
            opponent_elo: rungs[game.rung].elo,
            color: game.color,
            score: game.score,
            opponent_se: if with_ladder_error {
                rungs[game.rung].se
            } else {
                0.0
            },
        })
        .collect();
    elo_anchor::blocks_from_games(&games, config.white_advantage)
}

/// The stop `estimate` calls for after `played` games, if any.
fn stop(
    rungs: &[Rung],
    estimate: &EloEstimate,
    played: u32,
    config: &PlacementConfig,
) -> Option<Stop> {
    let bottom = rungs.iter().map(|r| r.elo).fold(f64::INFINITY, f64::min);
    let top = rungs
        .iter()
        .map(|r| r.elo)
        .fold(f64::NEG_INFINITY, f64::max);
    if estimate.upper95().is_some_and(|hi| hi < bottom) {
        return Some(Stop::BelowLadder);
    }
    if estimate.lower95().is_some_and(|lo| lo > top) {
        return Some(Stop::AboveLadder);
    }
    // An estimate a little beyond an end rung, with an interval that still reaches into the
    // ladder, is not known to be outside it: it stands, as precise as asked.
    if estimate
        .margin95()
        .is_some_and(|margin| margin <= config.target)
    {
        return Some(Stop::Target);
    }
    // A pair that would go past the limit is not started.
    (played + 2 > config.max_games).then_some(Stop::MaxGames)
}

/// The expected score of a player rated `elo` against `opponent`.
fn expected(elo: f64, opponent: f64) -> f64 {
    1.0 / (1.0 + ((opponent - elo) * Q).exp())
}

/// The working estimate: the posterior mode of the player's Elo under the prior
/// `N(centre, PRIOR_SD²)`, and the posterior's standard deviation there (Newton's method on a
/// concave log-posterior; a step is at most 400 Elo).
fn working_estimate(
    rungs: &[Rung],
    games: &[PlacementGame],
    centre: f64,
    config: &PlacementConfig,
) -> (f64, f64) {
    let prior_precision = 1.0 / (PRIOR_SD * PRIOR_SD);
    let mut elo = centre;
    let mut curvature = prior_precision;
    for _ in 0..100 {
        let mut gradient = -(elo - centre) * prior_precision;
        curvature = prior_precision;
        for game in games {
            let opponent = rungs[game.rung].elo - game.color.shift(config.white_advantage);
            let e = expected(elo, opponent);
            gradient += Q * (game.score - e);
            curvature += Q * Q * e * (1.0 - e);
        }
        let step = (gradient / curvature).clamp(-400.0, 400.0);
        elo += step;
        if step.abs() < 1e-6 {
            break;
        }
    }
    (elo, 1.0 / curvature.sqrt())
}

/// A pair's information weight against `opponent` (one game with each colour), averaged over
/// the belief `N(mean, sd²)` about the player's Elo.
fn expected_pair_weight(mean: f64, sd: f64, opponent: f64, white_advantage: f64) -> f64 {
    let at = |elo: f64| {
        [white_advantage, -white_advantage]
            .iter()
            .map(|shift| {
                let e = expected(elo + shift, opponent);
                e * (1.0 - e)
            })
            .sum::<f64>()
    };
    HERMITE
        .iter()
        .map(|(x, w)| w * at(mean + std::f64::consts::SQRT_2 * sd * x))
        .sum::<f64>()
        / std::f64::consts::PI.sqrt()
}

/// The rung for the next pair: the smallest expected variance after it, among the rungs the
/// player is not known to be out of range of.
fn next_rung(
    rungs: &[Rung],
    games: &[PlacementGame],
    estimate: Option<&EloEstimate>,
    config: &PlacementConfig,
) -> usize {
    let centre = config.start_elo.unwrap_or_else(|| middle(rungs));
    let (mean, sd) = working_estimate(rungs, games, centre, config);
    // The weights the games so far carry at the working estimate, the prior's among them.
    let mut weight = 1.0 / (Q * Q * PRIOR_SD * PRIOR_SD);
    let mut weighted_se = 0.0;
    for game in games {
        let rung = &rungs[game.rung];
        let e = expected(mean + game.color.shift(config.white_advantage), rung.elo);
        weight += e * (1.0 - e);
        weighted_se += e * (1.0 - e) * rung.se;
    }
    let in_range = |rung: &Rung| estimate.is_none_or(|e| !out_of_range(e, rung.elo));
    let variance_after = |rung: &Rung| {
        let pair = expected_pair_weight(mean, sd, rung.elo, config.white_advantage);
        let w = weight + pair;
        let ladder = (weighted_se + pair * rung.se) / w;
        1.0 / (Q * Q * w) + ladder * ladder
    };
    let candidates: Vec<usize> = (0..rungs.len()).filter(|&i| in_range(&rungs[i])).collect();
    let pool = if candidates.is_empty() {
        (0..rungs.len()).collect()
    } else {
        candidates
    };
    pool.into_iter()
        .min_by(|&a, &b| variance_after(&rungs[a]).total_cmp(&variance_after(&rungs[b])))
        .expect("the ladder has a rung")
}

/// Whether a player with `estimate` is known to be out of range of an opponent rated `elo`: at
/// the favourable end of its 95% interval its expected score is still below
/// [`OUT_OF_RANGE_SCORE`] (or above one minus it).
pub fn out_of_range(estimate: &EloEstimate, elo: f64) -> bool {
    let limit = 400.0 * ((1.0 - OUT_OF_RANGE_SCORE) / OUT_OF_RANGE_SCORE).log10();
    estimate.upper95().is_some_and(|hi| hi < elo - limit)
        || estimate.lower95().is_some_and(|lo| lo > elo + limit)
}

/// The Elo of the ladder's middle rung (by Elo; the lower of two middles).
fn middle(rungs: &[Rung]) -> f64 {
    let mut elos: Vec<f64> = rungs.iter().map(|r| r.elo).collect();
    elos.sort_by(f64::total_cmp);
    elos[(elos.len() - 1) / 2]
}

#[cfg(test)]
mod tests;
