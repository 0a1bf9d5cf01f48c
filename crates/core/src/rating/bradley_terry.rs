//! Batch Bradley–Terry ratings of a whole tournament by maximum likelihood, with a fitted White
//! advantage and bootstrap intervals: the numbers ordo and bayeselo users read, for any set of
//! games.
//!
//! Model: White scores `E = 1 / (1 + 10^(−(r_w − r_b + h) / 400))` against Black, a draw counting
//! as half a point; `h` is White's advantage in Elo points (left out, `h = 0`, when colours are
//! ignored, as in an engine ladder). With `n` games and `s` points of White in each (White, Black)
//! cell, the log-likelihood `Σ s ln E + (n − s) ln (1 − E)` is concave, so Newton's method with
//! step halving converges from any start. Ratings are only defined up to a common shift: an
//! [`Anchor`] fixes it, either one player held at a known rating or the players' mean held at a
//! value (0 by default, as ordo prints).
//!
//! Errors come two ways. [`Fitted::se`] is the square root of the inverse observed information,
//! relative to the anchor (for the mean anchor: to the pool's mean). It treats every game as a
//! Bernoulli trial, so it overstates the error when draws are common. [`bootstrap`] instead refits
//! the tournament on resamples of its games, drawn with replacement within each pairing (the
//! schedule is fixed, the results are random); games that belong together (the two colours of
//! one opening between one pair, [`Game::group`]) are resampled together, as the games of an
//! opening book are not independent. Its standard deviations give the `+/-` of the leaderboard;
//! it also says how often each player holds its rank.
//!
//! A maximum exists only when no group of players won (or lost) every game against the rest
//! (Zermelo's condition: the "scored against" graph is strongly connected) and, with a White
//! advantage, when White neither won nor lost every game. [`VirtualDraws`] adds drawn games to
//! every pair that met, half with each colour (BayesElo's prior, in spirit): a mild pull towards
//! equal ratings and no White advantage that keeps every estimate finite; its default grows with
//! the pair's games up to half a draw (see [`VirtualDraws::DEFAULT`] for the simulation behind it).
//!
//! A bootstrap cannot vary what every sample draws alike: a pairing of one unit (one game, or one
//! opening pair), or a player whose results are the same in every unit (a perfect score, all
//! draws). [`Spread::varies`] says so, and the leaderboard then shows no interval at all rather
//! than a `± 0`.
//!
//! The linear algebra (a Gaussian elimination for systems of a few dozen players) is written here
//! rather than pulled in: no crate in the verified set does it, and it is twenty lines. Resampling
//! uses Xoshiro256++, whose output rand documents as stable, so a seed gives the same samples on
//! every platform.
//!
//! ```
//! use arena_core::rating::bradley_terry::{Anchor, Config, Game, fit};
//!
//! // a and b trade wins with each colour and draw twice: equal, no White advantage.
//! let games = [
//!     Game::new("a", "b", 1.0), Game::new("b", "a", 1.0),
//!     Game::new("a", "b", 0.0), Game::new("b", "a", 0.0),
//!     Game::new("a", "b", 0.5), Game::new("b", "a", 0.5),
//! ];
//! let fitted = fit(&games, &Config::new(Anchor::Mean(0.0))).unwrap();
//! assert!(fitted.players.iter().all(|p| p.rating.abs() < 1e-9));
//! assert!(fitted.white_advantage.unwrap().elo.abs() < 1e-9);
//! ```

use std::{
    collections::{BTreeMap, HashMap},
    f64::consts::LN_10,
};

use rand::{RngExt, SeedableRng, rngs::Xoshiro256PlusPlus};

use super::{
    Z95,
    error::{self, RatingError},
};

/// Elo points per natural-log unit of odds: the derivative scale `ln 10 / 400`.
pub(crate) const K: f64 = LN_10 / 400.0;
/// Newton stops when no parameter moves more than this (Elo points).
const TOLERANCE: f64 = 1e-9;
/// More than enough for a concave problem of this size; reaching it is reported as an error.
const MAX_ITERATIONS: usize = 200;
/// No single Newton step moves a parameter further than this, so that a far start cannot
/// overshoot into a flat region where the logistic saturates.
const MAX_STEP: f64 = 800.0;
/// Ratings closer than this (Elo points) are level: Newton leaves differences far smaller.
const TIE: f64 = 1e-6;
/// A parameter this far from the reference has run off to infinity: the fit has no maximum.
const DIVERGED: f64 = 20_000.0;

/// One finished game.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    /// The player with the white pieces.
    pub white: String,
    /// The player with the black pieces.
    pub black: String,
    /// White's score: 1, ½ or 0 (any value in between is accepted as an expected score).
    pub score_white: f64,
    /// Games with the same group are resampled together by [`bootstrap`] (e.g. the two colours
    /// of one opening between one pair); `None`: the game is resampled on its own.
    pub group: Option<String>,
}

impl Game {
    /// A game between `white` and `black` in which White scored `score_white`, in no group.
    pub fn new(white: impl Into<String>, black: impl Into<String>, score_white: f64) -> Game {
        Game {
            white: white.into(),
            black: black.into(),
            score_white,
            group: None,
        }
    }

    /// The same game in `group`.
    pub fn in_group(self, group: impl Into<String>) -> Game {
        Game {
            group: Some(group.into()),
            ..self
        }
    }
}

/// Games with their players and groups numbered once: what a fit reads. Made from [`Game`]s, or
/// filled game by game ([`Games::push`]) without a string per game, as a leaderboard over
/// 100,000 stored games is.
#[derive(Debug, Clone, Default)]
pub struct Games {
    /// Players by number, in the order they first played.
    names: Vec<String>,
    numbers: HashMap<String, usize>,
    /// (white, black, White's score).
    games: Vec<(usize, usize, f64)>,
    /// Each game's group by number (numbered in the order they first appear).
    groups: Vec<Option<usize>>,
    group_numbers: HashMap<String, usize>,
    /// The first bad game's error, reported when the games are fitted.
    invalid: Option<RatingError>,
}

impl Games {
    /// No games yet.
    pub fn new() -> Games {
        Games::default()
    }

    /// Numbers `games`.
    pub fn of(games: &[Game]) -> Games {
        let mut out = Games::new();
        for g in games {
            out.push(&g.white, &g.black, g.score_white, g.group.as_deref());
        }
        out
    }

    /// Adds a game between `white` and `black` in which White scored `score_white`, in `group`
    /// (see [`Game::group`]). A bad game (self-play, a score outside 0 to 1) is left out and the
    /// first one is reported by a fit, as for [`Game`]s.
    pub fn push(&mut self, white: &str, black: &str, score_white: f64, group: Option<&str>) {
        let bad = if white == black {
            Some(RatingError::SelfPlay(white.to_owned()))
        } else {
            error::score(score_white).err()
        };
        if let Some(e) = bad {
            self.invalid.get_or_insert(e);
            return;
        }
        let mut number = |name: &str| match self.numbers.get(name) {
            Some(&i) => i,
            None => {
                self.names.push(name.to_owned());
                self.numbers.insert(name.to_owned(), self.names.len() - 1);
                self.names.len() - 1
            }
        };
        let (w, b) = (number(white), number(black));
        self.games.push((w, b, score_white));
        let group = group.map(|g| match self.group_numbers.get(g) {
            Some(&i) => i,
            None => {
                let i = self.group_numbers.len();
                self.group_numbers.insert(g.to_owned(), i);
                i
            }
        });
        self.groups.push(group);
    }

    /// The games in the order they were added: White, Black and White's score.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, f64)> {
        self.games
            .iter()
            .map(|&(w, b, s)| (self.names[w].as_str(), self.names[b].as_str(), s))
    }

    /// The group game `index` (in the order added) is resampled with, by number, if it has one.
    pub fn group(&self, index: usize) -> Option<usize> {
        self.groups.get(index).copied().flatten()
    }

    /// The players, in the order they first played.
    pub fn players(&self) -> &[String] {
        &self.names
    }

    /// How many games.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }
}

/// What fixes the common shift of the ratings.
#[derive(Debug, Clone, PartialEq)]
pub enum Anchor {
    /// The players' mean rating is this value (ordo's default, with 0).
    Mean(f64),
    /// This player is held at this rating; everyone's error is relative to it.
    Player {
        /// The anchored player.
        name: String,
        /// Its rating.
        rating: f64,
    },
    /// Several players, each held at its own rating (Stockfish's `UCI_Elo` rungs at their
    /// nominal Elo): the others are fitted around them, and errors are relative to them all.
    Players(Vec<(String, f64)>),
}

impl Anchor {
    /// The pinned players and their ratings (none for [`Anchor::Mean`]).
    fn pinned(&self) -> Vec<(&str, f64)> {
        match self {
            Anchor::Mean(_) => Vec::new(),
            Anchor::Player { name, rating } => vec![(name.as_str(), *rating)],
            Anchor::Players(players) => players.iter().map(|(n, r)| (n.as_str(), *r)).collect(),
        }
    }
}

/// How to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// What fixes the ratings' common shift.
    pub anchor: Anchor,
    /// Fit White's advantage (otherwise colours are ignored).
    pub white_advantage: bool,
    /// Drawn games added to every pair that met, half with each colour.
    pub virtual_draws: VirtualDraws,
}

impl Config {
    /// The pure maximum-likelihood fit with a White advantage, anchored as given.
    pub fn new(anchor: Anchor) -> Config {
        Config {
            anchor,
            white_advantage: true,
            virtual_draws: VirtualDraws::PerPair(0.0),
        }
    }
}

/// The prior: drawn games added to every pair that met, half with each colour (BayesElo's prior,
/// in spirit), which pull the pair's ratings together and keep every estimate finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VirtualDraws {
    /// This many per pair, whatever the pair played (0: the pure MLE).
    PerPair(f64),
    /// `share` of the pair's own games, at most `cap`: the prior grows with the evidence while the
    /// pair has played few games (so it is never most of a short match), and stops growing at
    /// `cap`, so that its pull vanishes as the games accumulate.
    Scaled {
        /// Virtual draws per game the pair played.
        share: f64,
        /// The most virtual draws any pair gets.
        cap: f64,
    },
}

impl VirtualDraws {
    /// The prior the leaderboard uses unless told otherwise: a tenth of a draw per game of the
    /// pair, at most half a draw. Chosen by the simulation in this module's tests (round robins of
    /// six players 400 Elo apart, White +35, 100 tournaments each, 100 bootstrap samples):
    ///
    /// | games a pair | prior | intervals shown | coverage | bias | RMSE |
    /// |---|---|---|---|---|---|
    /// | 1 | 0.1 | none (cannot vary) | — | −20 | 161 |
    /// | 2 | 0.2 | 97 % | 95.2 % | +4 | 97 |
    /// | 10 | 0.5 | 100 % | 95.5 % | −4 | 40 |
    ///
    /// (bias: the mean of (estimate − truth) · sign(truth), negative when players are pulled
    /// towards the mean; coverage: of the intervals shown, which leave out the players whose
    /// results no resample can vary). One draw a pair, the old default, pulled them in by 76, 38
    /// and 11 points; no prior at all often has no finite rating after one game a pair and pushes
    /// players apart by 27 points at two.
    pub const DEFAULT: VirtualDraws = VirtualDraws::Scaled {
        share: 0.1,
        cap: 0.5,
    };

    /// The virtual draws of a pair that played `games` games (0 for a pair that never met).
    pub fn for_pair(self, games: f64) -> f64 {
        if games <= 0.0 {
            return 0.0;
        }
        match self {
            VirtualDraws::PerPair(v) => v,
            VirtualDraws::Scaled { share, cap } => (share * games).min(cap),
        }
    }

    /// Whether any pair gets a virtual draw.
    pub fn any(self) -> bool {
        match self {
            VirtualDraws::PerPair(v) => v > 0.0,
            VirtualDraws::Scaled { share, cap } => share > 0.0 && cap > 0.0,
        }
    }

    fn valid(self) -> Result<(), RatingError> {
        let values = match self {
            VirtualDraws::PerPair(v) => [v, v],
            VirtualDraws::Scaled { share, cap } => [share, cap],
        };
        for value in values {
            if !(value.is_finite() && value >= 0.0) {
                return Err(RatingError::InvalidValue {
                    what: "virtual_draws",
                    value,
                });
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for VirtualDraws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VirtualDraws::PerPair(v) => write!(f, "{v} per pair"),
            VirtualDraws::Scaled { share, cap } => {
                write!(f, "{share} per game of the pair, at most {cap}")
            }
        }
    }
}

/// One player's fitted rating.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The player.
    pub name: String,
    /// Elo on the anchor's scale.
    pub rating: f64,
    /// Standard error from the observed information, relative to the anchor (0 for an anchored
    /// player).
    pub se: f64,
    /// Real games played (virtual draws not counted).
    pub games: u32,
    /// Real points scored.
    pub score: f64,
    /// Real games drawn.
    pub draws: u32,
}

impl Fitted {
    /// The 95 % interval `rating ± 1.96 · se`.
    pub fn interval(&self) -> (f64, f64) {
        (self.rating - Z95 * self.se, self.rating + Z95 * self.se)
    }
}

/// The fitted White advantage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WhiteAdvantage {
    /// Elo points White gains by moving first.
    pub elo: f64,
    /// Its standard error from the observed information.
    pub se: f64,
}

/// A whole fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// Every player with a game, best first (ties by name).
    pub players: Vec<Fitted>,
    /// White's advantage, when it was fitted.
    pub white_advantage: Option<WhiteAdvantage>,
}

impl Fit {
    /// Each player's rank, in the order of `players`: one more than the number of players rated
    /// higher, so that players level to within a millionth of a point share a rank ("1224").
    pub fn ranks(&self) -> Vec<usize> {
        self.players
            .iter()
            .map(|p| {
                1 + self
                    .players
                    .iter()
                    .filter(|q| q.rating > p.rating + TIE)
                    .count()
            })
            .collect()
    }
}

/// Fits every player's rating (and White's advantage, if asked) by maximum likelihood.
///
/// # Errors
///
/// [`RatingError::NoGames`] without games, [`RatingError::UnknownPlayer`] when an anchored player
/// played none, [`RatingError::SelfPlay`] or [`RatingError::InvalidScore`] for a bad game,
/// [`RatingError::InvalidValue`] for a non-finite anchor or negative virtual draws,
/// [`RatingError::Unbounded`] when some players have no finite estimate (a sweep, or no games
/// linking them to the rest), [`RatingError::NoFiniteAdvantage`] when White's advantage has none,
/// and [`RatingError::NoConvergence`] if Newton's method stalls.
pub fn fit(games: &[Game], config: &Config) -> Result<Fit, RatingError> {
    fit_games(&Games::of(games), config)
}

/// [`fit`] over numbered games.
///
/// # Errors
///
/// Those of [`fit`].
pub fn fit_games(games: &Games, config: &Config) -> Result<Fit, RatingError> {
    let pool = Pool::new(games, config)?;
    let all: Vec<usize> = (0..pool.games.len()).collect();
    pool.fit(&all)
}

/// What resampling to fit on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootstrapConfig {
    /// How many resampled tournaments to fit.
    pub samples: usize,
    /// The seed of the resampling: the same games and seed give the same intervals.
    pub seed: u64,
}

/// One player's spread over the bootstrap samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// The player.
    pub name: String,
    /// Standard deviation of its rating over the samples, scaled up for resampling few units a
    /// pairing (see [`bootstrap`]; 0 for an anchored player).
    pub sd: f64,
    /// Share of the samples in which it holds its rank of the full fit (0 to 1; see
    /// [`Fit::ranks`] for ties).
    pub rank_held: f64,
    /// The opponents with whom it played a single resampling unit (one game, or one opening
    /// pair): every sample draws that unit, so the pairing's result never varies and the spread
    /// understates what is unknown.
    pub single_unit: Vec<String>,
    /// Every unit of each of its pairings gave it the same points (a perfect score, all draws):
    /// every sample sees the same results, so its rating moves only as the others' do.
    pub constant: bool,
}

impl Spread {
    /// Half the width of the 95 % interval, `1.96 · sd`: ordo's `+/-`.
    pub fn margin(&self) -> f64 {
        Z95 * self.sd
    }

    /// Whether the resampling could vary this player's results at all: every pairing has two
    /// units or more, and the rating moved over the samples (it does not when every pairing's
    /// units are alike: perfect scores, or the same result throughout). Where it could not, the
    /// spread says nothing about the error and no interval should be shown.
    pub fn varies(&self) -> bool {
        self.single_unit.is_empty() && !self.constant && self.margin() >= MIN_MARGIN
    }
}

/// The narrowest margin a bootstrap shows (Elo points): below it, the samples did not move the
/// rating (a margin that would print as `± 0.0`).
pub const MIN_MARGIN: f64 = 0.05;

/// A fit and its bootstrap.
#[derive(Debug, Clone, PartialEq)]
pub struct Bootstrap {
    /// The fit of all the games.
    pub fit: Fit,
    /// Each player's spread, in the order of `fit.players`.
    pub spread: Vec<Spread>,
    /// Standard deviation of White's advantage over the samples, when it was fitted.
    pub white_advantage_sd: Option<f64>,
    /// Samples fitted.
    pub samples: usize,
    /// Samples that could not be fitted (under the pure MLE, a player who won or lost all its
    /// games in the sample) and are left out.
    pub failed: usize,
    /// The units resampled: groups of games plus games in no group.
    pub units: usize,
    /// Whether any game belonged to a group (the resampling was paired).
    pub grouped: bool,
}

/// Fits the games, then refits `bootstrap.samples` resamples of them and reports each player's
/// spread. A resample draws, for each pair of players, as many units as the pair has, with
/// replacement from the pair's own units; a unit is a group of games (counted for the pair of its
/// first game) or a game in no group.
///
/// # Errors
///
/// The errors of [`fit`] for the full set of games, and [`RatingError::BootstrapFailed`] when no
/// sample at all could be fitted (or none was asked for).
pub fn bootstrap(
    games: &[Game],
    config: &Config,
    bootstrap: &BootstrapConfig,
) -> Result<Bootstrap, RatingError> {
    bootstrap_games(&Games::of(games), config, bootstrap)
}

/// [`bootstrap`] over numbered games.
///
/// # Errors
///
/// Those of [`bootstrap`].
pub fn bootstrap_games(
    games: &Games,
    config: &Config,
    bootstrap: &BootstrapConfig,
) -> Result<Bootstrap, RatingError> {
    let pool = Pool::new(games, config)?;
    let all: Vec<usize> = (0..pool.games.len()).collect();
    let Estimate { fit: full, r, h } = pool.estimate(&all, None)?;

    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut unit_of_group: HashMap<usize, usize> = HashMap::new();
    for (i, group) in games.groups.iter().enumerate() {
        match group {
            Some(group) => {
                let unit = *unit_of_group.entry(*group).or_insert_with(|| {
                    units.push(Vec::new());
                    units.len() - 1
                });
                units[unit].push(i);
            }
            None => units.push(vec![i]),
        }
    }
    // Each unit's games summed by cell, so that a sample costs its units, not its games.
    let sums: Vec<Vec<Cell>> = units.iter().map(|u| Cell::sums(&pool, u)).collect();

    let position: HashMap<&str, usize> = full
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.as_str(), i))
        .collect();
    let rank = full.ranks();
    let n = full.players.len();
    let mut values: Vec<Vec<f64>> = vec![Vec::with_capacity(bootstrap.samples); n];
    let mut advantages = Vec::with_capacity(bootstrap.samples);
    let mut held = vec![0usize; n];
    let mut failed = 0;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(bootstrap.seed);
    // The schedule is fixed, only results are random: each pairing's units are resampled among
    // themselves, so every pair meets as often in a sample as it did. (Resampling all units
    // together also varies who met whom, which widened 95 % intervals to 97 % coverage in the
    // tests' simulations; by pairing they cover 95 %.)
    let mut strata: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for (u, unit) in units.iter().enumerate() {
        let (w, b, _) = pool.games[unit[0]];
        strata.entry((w.min(b), w.max(b))).or_default().push(u);
    }
    let mut sample = Tally::new(pool.names.len());
    for _ in 0..bootstrap.samples {
        sample.clear();
        for members in strata.values() {
            for _ in 0..members.len() {
                let unit = members[rng.random_range(0..members.len())];
                for cell in &sums[unit] {
                    sample.add(cell);
                }
            }
        }
        let Ok(Estimate { fit: refit, .. }) = pool.estimate_tally(&sample, Some((&r, h))) else {
            failed += 1;
            continue;
        };
        for (p, sample_rank) in refit.players.iter().zip(refit.ranks()) {
            let i = position[p.name.as_str()];
            values[i].push(p.rating);
            if sample_rank == rank[i] {
                held[i] += 1;
            }
        }
        if let Some(h) = refit.white_advantage {
            advantages.push(h.elo);
        }
    }
    let samples = bootstrap.samples - failed;
    if samples == 0 {
        return Err(RatingError::BootstrapFailed(bootstrap.samples));
    }
    // Each player's pairings that a sample cannot vary: a single unit, drawn every time.
    let mut single: Vec<Vec<String>> = vec![Vec::new(); pool.names.len()];
    for (&(a, b), members) in &strata {
        if members.len() == 1 {
            single[a].push(pool.names[b].clone());
            single[b].push(pool.names[a].clone());
        }
    }
    // Resampling m units of a pairing gives its mean (m − 1)/m of its variance: half with the two
    // games a pair of a short round robin. Each player's spread is scaled back up by
    // √(m / (m − 1)), m the harmonic mean of its pairings' units (exact for equal pairings).
    let small_strata: Vec<f64> = (0..pool.names.len())
        .map(|k| {
            let sizes: Vec<f64> = strata
                .iter()
                .filter(|((a, b), _)| *a == k || *b == k)
                .map(|(_, members)| members.len() as f64)
                .collect();
            let m = sizes.len() as f64 / sizes.iter().map(|s| 1.0 / s).sum::<f64>();
            if m > 1.0 { (m / (m - 1.0)).sqrt() } else { 1.0 }
        })
        .collect();
    // Whether each player's points are the same in every unit of each of its pairings.
    let mut constant = vec![true; pool.names.len()];
    for (&(a, b), members) in &strata {
        for k in [a, b] {
            let points = |unit: usize| -> f64 {
                units[unit]
                    .iter()
                    .map(|&g| {
                        let (w, _, s) = pool.games[g];
                        if w == k { s } else { 1.0 - s }
                    })
                    .sum()
            };
            let first = points(members[0]);
            if members.iter().any(|&u| (points(u) - first).abs() > 1e-9) {
                constant[k] = false;
            }
        }
    }
    let number: HashMap<&str, usize> = pool
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let spread = full
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let k = number[p.name.as_str()];
            let mut single_unit = single[k].clone();
            single_unit.sort();
            Spread {
                name: p.name.clone(),
                sd: standard_deviation(&values[i]) * small_strata[k],
                rank_held: held[i] as f64 / samples as f64,
                single_unit,
                constant: constant[k],
            }
        })
        .collect();
    // White's advantage is fitted from every pairing: its spread is scaled back up as the
    // players' are, with m the harmonic mean of all pairings' units.
    let all_strata = {
        let m = strata.len() as f64
            / strata
                .values()
                .map(|members| 1.0 / members.len() as f64)
                .sum::<f64>();
        if m > 1.0 { (m / (m - 1.0)).sqrt() } else { 1.0 }
    };
    Ok(Bootstrap {
        white_advantage_sd: full
            .white_advantage
            .map(|_| standard_deviation(&advantages) * all_strata),
        fit: full,
        spread,
        samples,
        failed,
        units: units.len(),
        grouped: !unit_of_group.is_empty(),
    })
}

/// The sample standard deviation (0 for fewer than two values).
fn standard_deviation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    (squares / (values.len() - 1) as f64).sqrt()
}

/// The games with their players numbered once, so that a resample refits without strings.
struct Pool<'a> {
    names: &'a [String],
    /// (white, black, White's score).
    games: &'a [(usize, usize, f64)],
    config: &'a Config,
}

impl<'a> Pool<'a> {
    fn new(games: &'a Games, config: &'a Config) -> Result<Pool<'a>, RatingError> {
        config.virtual_draws.valid()?;
        if let Anchor::Mean(value) = &config.anchor {
            error::finite("anchor_rating", *value)?;
        }
        if matches!(&config.anchor, Anchor::Players(p) if p.is_empty()) {
            return Err(RatingError::NoAnchor);
        }
        for (_, rating) in config.anchor.pinned() {
            error::finite("anchor_rating", rating)?;
        }
        if games.is_empty() && games.invalid.is_none() {
            return Err(RatingError::NoGames);
        }
        if let Some(e) = &games.invalid {
            return Err(e.clone());
        }
        if let Some((name, _)) = config
            .anchor
            .pinned()
            .into_iter()
            .find(|(name, _)| !games.numbers.contains_key(*name))
        {
            return Err(RatingError::UnknownPlayer(name.to_owned()));
        }
        Ok(Pool {
            names: &games.names,
            games: &games.games,
            config,
        })
    }

    /// Fits the games numbered in `chosen` (repeats allowed), with standard errors.
    fn fit(&self, chosen: &[usize]) -> Result<Fit, RatingError> {
        Ok(self.estimate(chosen, None)?.fit)
    }

    /// Fits the games numbered in `chosen`; from `start` (a previous estimate's ratings by player
    /// number and its advantage) without standard errors, as a bootstrap refit needs neither a
    /// cold start nor the inverse information.
    fn estimate(
        &self,
        chosen: &[usize],
        start: Option<(&[f64], f64)>,
    ) -> Result<Estimate, RatingError> {
        let mut tally = Tally::new(self.names.len());
        for &k in chosen {
            let (white, black, s) = self.games[k];
            tally.add(&Cell {
                white,
                black,
                s,
                times: 1,
            });
        }
        self.estimate_tally(&tally, start)
    }

    /// Fits the games summed in `tally`, as [`Pool::estimate`].
    fn estimate_tally(
        &self,
        tally: &Tally,
        start: Option<(&[f64], f64)>,
    ) -> Result<Estimate, RatingError> {
        let cells = Cells::collect(self, tally);
        let n = self.names.len();
        // The players held fixed, by number, with their ratings; the first is the reference.
        let pinned: Vec<(usize, f64)> = match &self.config.anchor {
            // Any player will do before the shift. One of the largest linked group, so that an
            // error names the few who are cut off; the busiest of them, for the best-conditioned
            // system.
            Anchor::Mean(_) => vec![(
                (0..n)
                    .max_by_key(|&i| (cells.linked(i), cells.games[i], n - i))
                    .unwrap_or(0),
                0.0,
            )],
            anchor => anchor
                .pinned()
                .into_iter()
                .map(|(name, rating)| {
                    let i = self
                        .names
                        .iter()
                        .position(|p| p == name)
                        .expect("checked in Pool::new");
                    (i, rating)
                })
                .collect(),
        };
        let (reference, reference_rating) = pinned[0];
        let unbounded = cells.unbounded(&pinned, self.names);
        if !unbounded.is_empty() {
            return Err(RatingError::Unbounded(unbounded));
        }
        let advantage = self.config.white_advantage;
        if advantage {
            let (played, white_points) = cells
                .obs
                .iter()
                .fold((0.0, 0.0), |(n, s), o| (n + o.n, s + o.s));
            if white_points <= 0.0 || white_points >= played {
                return Err(RatingError::NoFiniteAdvantage);
            }
        }

        let params = Params::new(n, &pinned, advantage);
        let (mut r, mut h): (Vec<f64>, f64) = match start {
            Some((r, h)) => (
                r.iter()
                    .map(|x| x - r[reference] + reference_rating)
                    .collect(),
                h,
            ),
            None => (vec![reference_rating; n], 0.0),
        };
        for &(i, rating) in &pinned {
            r[i] = rating;
        }
        let mut converged = params.len() == 0;
        for _ in 0..MAX_ITERATIONS {
            if converged {
                break;
            }
            let (gradient, information) = cells.derivatives(&r, h, &params);
            let step = solve(information, gradient).ok_or_else(|| params.singular(self.names))?;
            let longest = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
            let mut scale = if longest > MAX_STEP {
                MAX_STEP / longest
            } else {
                1.0
            };
            // Step halving: Newton's step on a concave function may still overshoot far from the top.
            let before = cells.log_likelihood(&r, h);
            let (mut trial_r, mut trial_h) = (r.clone(), h);
            loop {
                params.apply(&r, h, &step, scale, &mut trial_r, &mut trial_h);
                if cells.log_likelihood(&trial_r, trial_h) >= before - 1e-12 || scale < 1e-6 {
                    break;
                }
                scale /= 2.0;
            }
            r = trial_r;
            h = trial_h;
            converged = longest * scale < TOLERANCE;
        }
        if !converged {
            // A supremum at infinity that the checks above cannot see (a sweep through the White
            // advantage, say) shows as parameters running away.
            let away: Vec<String> = (0..n)
                .filter(|&i| (r[i] - reference_rating).abs() > DIVERGED)
                .map(|i| self.names[i].clone())
                .collect();
            return Err(if !away.is_empty() {
                RatingError::Unbounded(away)
            } else if h.abs() > DIVERGED {
                RatingError::NoFiniteAdvantage
            } else {
                RatingError::NoConvergence(MAX_ITERATIONS)
            });
        }

        let covariance = if start.is_some() {
            vec![vec![0.0; params.len()]; params.len()]
        } else {
            let (_, information) = cells.derivatives(&r, h, &params);
            invert(information).ok_or_else(|| params.singular(self.names))?
        };
        // The covariance of two ratings (zero for the reference), then, for the mean anchor, the
        // variance of each rating less the mean: V_ii − 2 · mean_j V_ij + mean_jk V_jk.
        let cov = |i: usize, j: usize| match (params.player[i], params.player[j]) {
            (Some(a), Some(b)) => covariance[a][b],
            _ => 0.0,
        };
        let mut variance: Vec<f64> = (0..n).map(|i| cov(i, i)).collect();
        if let Anchor::Mean(target) = self.config.anchor {
            let mean = r.iter().sum::<f64>() / n as f64;
            for x in &mut r {
                *x += target - mean;
            }
            let row_means: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| cov(i, j)).sum::<f64>() / n as f64)
                .collect();
            let grand = row_means.iter().sum::<f64>() / n as f64;
            for (var, row) in variance.iter_mut().zip(&row_means) {
                *var += grand - 2.0 * row;
            }
        }
        let mut players: Vec<Fitted> = (0..n)
            .filter(|&i| cells.games[i] > 0)
            .map(|i| Fitted {
                name: self.names[i].clone(),
                rating: r[i],
                se: variance[i].max(0.0).sqrt(),
                games: cells.games[i],
                score: cells.score[i],
                draws: cells.draws[i],
            })
            .collect();
        players.sort_by(|a, b| b.rating.total_cmp(&a.rating).then(a.name.cmp(&b.name)));
        Ok(Estimate {
            fit: Fit {
                players,
                white_advantage: params.advantage.map(|k| WhiteAdvantage {
                    elo: h,
                    se: covariance[k][k].max(0.0).sqrt(),
                }),
            },
            r,
            h,
        })
    }
}

/// A fit and its parameters by player number, to start the next fit from.
struct Estimate {
    fit: Fit,
    r: Vec<f64>,
    h: f64,
}

/// Where each free parameter sits in the gradient and the information matrix.
struct Params {
    /// `player[i]`: the position of player `i`'s rating, `None` for a pinned player.
    player: Vec<Option<usize>>,
    /// The position of White's advantage, when it is fitted.
    advantage: Option<usize>,
}

impl Params {
    fn new(n: usize, pinned: &[(usize, f64)], advantage: bool) -> Params {
        let mut free = 0;
        let player: Vec<Option<usize>> = (0..n)
            .map(|i| {
                if pinned.iter().any(|&(p, _)| p == i) {
                    None
                } else {
                    free += 1;
                    Some(free - 1)
                }
            })
            .collect();
        Params {
            advantage: advantage.then_some(free),
            player,
        }
    }

    fn len(&self) -> usize {
        self.player.iter().flatten().count() + usize::from(self.advantage.is_some())
    }

    /// `r + scale · step` (and `h` likewise) into `into_r`, `into_h`.
    fn apply(
        &self,
        r: &[f64],
        h: f64,
        step: &[f64],
        scale: f64,
        into_r: &mut [f64],
        into_h: &mut f64,
    ) {
        for (i, slot) in self.player.iter().enumerate() {
            if let Some(k) = slot {
                into_r[i] = r[i] + scale * step[*k];
            }
        }
        if let Some(k) = self.advantage {
            *into_h = h + scale * step[k];
        }
    }

    /// The error for a singular information matrix: with a White advantage it cannot be told
    /// apart from the strengths; without, the players are not linked well enough.
    fn singular(&self, names: &[String]) -> RatingError {
        if self.advantage.is_some() {
            RatingError::NoFiniteAdvantage
        } else {
            RatingError::Unbounded(
                (0..names.len())
                    .filter(|&i| self.player[i].is_some())
                    .map(|i| names[i].clone())
                    .collect(),
            )
        }
    }
}

/// `times` games of `white` against `black` in which White scored `s` each.
#[derive(Debug, Clone, Copy)]
struct Cell {
    white: usize,
    black: usize,
    s: f64,
    times: u32,
}

impl Cell {
    /// The games numbered in `unit`, summed by (White, Black, score) in the order they first
    /// appear. Scores in halves sum exactly whatever the order, so merging them changes no bit of
    /// a fit; any other score stays one cell a game, in the games' order.
    fn sums(pool: &Pool, unit: &[usize]) -> Vec<Cell> {
        let mut out: Vec<Cell> = Vec::new();
        for &k in unit {
            let (white, black, s) = pool.games[k];
            let halves = (s * 2.0).fract() == 0.0;
            match out
                .iter_mut()
                .find(|c| halves && c.white == white && c.black == black && c.s == s)
            {
                Some(c) => c.times += 1,
                None => out.push(Cell {
                    white,
                    black,
                    s,
                    times: 1,
                }),
            }
        }
        out
    }
}

/// Games summed into dense n × n cells, row White, column Black, with each player's totals: a
/// bootstrap builds thousands of these, and a map costs more than the fit itself.
struct Tally {
    n: usize,
    played: Vec<f64>,
    points: Vec<f64>,
    games: Vec<u32>,
    score: Vec<f64>,
    draws: Vec<u32>,
}

impl Tally {
    fn new(n: usize) -> Tally {
        Tally {
            n,
            played: vec![0.0; n * n],
            points: vec![0.0; n * n],
            games: vec![0; n],
            score: vec![0.0; n],
            draws: vec![0; n],
        }
    }

    fn clear(&mut self) {
        self.played.fill(0.0);
        self.points.fill(0.0);
        self.games.fill(0);
        self.score.fill(0.0);
        self.draws.fill(0);
    }

    fn add(&mut self, c: &Cell) {
        let (w, b, s) = (c.white, c.black, c.s);
        let cell = w * self.n + b;
        if c.times == 1 {
            self.played[cell] += 1.0;
            self.points[cell] += s;
            self.score[w] += s;
            self.score[b] += 1.0 - s;
        } else {
            // Only scores in halves are merged (see [`Cell::sums`]): these products are exact.
            let times = f64::from(c.times);
            self.played[cell] += times;
            self.points[cell] += s * times;
            self.score[w] += s * times;
            self.score[b] += (1.0 - s) * times;
        }
        self.games[w] += c.times;
        self.games[b] += c.times;
        if s == 0.5 {
            self.draws[w] += c.times;
            self.draws[b] += c.times;
        }
    }
}

/// One (White, Black) cell: `n` games, `s` points of White.
struct Obs {
    white: usize,
    black: usize,
    n: f64,
    s: f64,
}

/// The games of one fit, summed by cell, with the virtual draws added, and each player's real
/// totals.
struct Cells {
    obs: Vec<Obs>,
    /// `reach[i][j]`: `i` took points from `j` (any colour, virtual draws included), directly or
    /// through a chain of players.
    reach: Vec<Vec<bool>>,
    games: Vec<u32>,
    score: Vec<f64>,
    draws: Vec<u32>,
}

impl Cells {
    fn collect(pool: &Pool, tally: &Tally) -> Cells {
        let n = pool.names.len();
        let mut played = tally.played.clone();
        let mut points = tally.points.clone();
        let (games, score, draws) = (
            tally.games.clone(),
            tally.score.clone(),
            tally.draws.clone(),
        );
        let prior = pool.config.virtual_draws;
        if prior.any() {
            for i in 0..n {
                for j in i + 1..n {
                    let v = prior.for_pair(played[i * n + j] + played[j * n + i]);
                    if v > 0.0 {
                        for cell in [i * n + j, j * n + i] {
                            played[cell] += v / 2.0;
                            points[cell] += v / 4.0;
                        }
                    }
                }
            }
        }
        let mut obs = Vec::new();
        let mut reach: Vec<Vec<bool>> = (0..n).map(|i| (0..n).map(|j| i == j).collect()).collect();
        for w in 0..n {
            for b in 0..n {
                let (games, s) = (played[w * n + b], points[w * n + b]);
                if games > 0.0 {
                    reach[w][b] |= s > 0.0;
                    reach[b][w] |= s < games;
                    obs.push(Obs {
                        white: w,
                        black: b,
                        n: games,
                        s,
                    });
                }
            }
        }
        // The transitive closure (Floyd–Warshall on booleans).
        for k in 0..n {
            let via = reach[k].clone();
            for row in reach.iter_mut().filter(|row| row[k]) {
                for (cell, &onward) in row.iter_mut().zip(&via) {
                    *cell |= onward;
                }
            }
        }
        Cells {
            obs,
            reach,
            games,
            score,
            draws,
        }
    }

    /// How many players are in `i`'s strongly connected component of the "scored against" graph
    /// (`i` included).
    fn linked(&self, i: usize) -> usize {
        (0..self.reach.len())
            .filter(|&j| self.reach[i][j] && self.reach[j][i])
            .count()
    }

    /// Players outside every pinned player's strongly connected component of the "scored
    /// against" graph: those who scored nothing against its group (directly or through others)
    /// or conceded nothing to it, or never met it. Their estimates run off to ±∞ or float free.
    fn unbounded(&self, pinned: &[(usize, f64)], names: &[String]) -> Vec<String> {
        let mut out: Vec<String> = (0..names.len())
            .filter(|&i| {
                !pinned
                    .iter()
                    .any(|&(p, _)| self.reach[i][p] && self.reach[p][i])
            })
            .map(|i| names[i].clone())
            .collect();
        out.sort();
        out
    }

    fn log_likelihood(&self, r: &[f64], h: f64) -> f64 {
        self.obs
            .iter()
            .map(|o| {
                let x = K * (r[o.white] - r[o.black] + h);
                // ln E = −softplus(−x), ln (1 − E) = −softplus(x): exact far into the tails.
                -(o.s * softplus(-x) + (o.n - o.s) * softplus(x))
            })
            .sum()
    }

    /// The gradient of the log-likelihood and the observed information (its negated Hessian),
    /// over the free parameters, in Elo units.
    fn derivatives(&self, r: &[f64], h: f64, params: &Params) -> (Vec<f64>, Vec<Vec<f64>>) {
        let m = params.len();
        let mut gradient = vec![0.0; m];
        let mut information = vec![vec![0.0; m]; m];
        for o in &self.obs {
            let e = 1.0 / (1.0 + (-K * (r[o.white] - r[o.black] + h)).exp());
            let residual = K * (o.s - o.n * e);
            let weight = K * K * o.n * e * (1.0 - e);
            // The cell's predictor moves with +White, −Black and +advantage.
            let terms = [
                (params.player[o.white], 1.0),
                (params.player[o.black], -1.0),
                (params.advantage, 1.0),
            ];
            for &(a, sa) in &terms {
                let Some(a) = a else { continue };
                gradient[a] += sa * residual;
                for &(b, sb) in &terms {
                    if let Some(b) = b {
                        information[a][b] += sa * sb * weight;
                    }
                }
            }
        }
        (gradient, information)
    }
}

/// `ln (1 + eˣ)` without overflow.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting; `None` when `a` is singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    // Singular relative to the matrix's own scale, so that Elo-unit information (≈ 1e-5 per
    // game) is not mistaken for zero.
    let scale = a.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() <= scale * 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let f = row[col] / pivot_row[col];
            if f != 0.0 {
                for (cell, &p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *cell -= f * p;
                }
                b[col + 1 + offset] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let tail: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - tail) / a[row][row];
    }
    Some(x)
}

/// The inverse of `a`, column by column; `None` when `a` is singular.
fn invert(a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut columns = Vec::with_capacity(n);
    for c in 0..n {
        let unit = (0..n).map(|k| if k == c { 1.0 } else { 0.0 }).collect();
        columns.push(solve(a.clone(), unit)?);
    }
    Some(
        (0..n)
            .map(|row| (0..n).map(|c| columns[c][row]).collect())
            .collect(),
    )
}

#[cfg(test)]
mod tests;
