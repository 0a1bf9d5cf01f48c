//! Elo ratings of a whole pool by maximum likelihood, pinned to one anchor of known rating: the
//! calibration of an engine ladder (random mover, weak Stockfish settings, ...) that places players
//! far below Stockfish's `UCI_Elo` floor on a known scale.
//!
//! Model (Bradley–Terry on the Elo scale): player `i` scores `E_ij = 1 / (1 + 10^((r_j − r_i) / 400))`
//! against `j`, a draw counting as half a point. With `n_ij` games and `s_ij` points of `i` against
//! `j`, the log-likelihood `Σ_{i<j} s_ij ln E_ij + (n_ij − s_ij) ln (1 − E_ij)` is maximised over
//! every rating but the anchor's, which is held at its known value. It is concave, so Newton's
//! method with step halving converges from any start. Standard errors are the square roots of the
//! diagonal of the inverse observed information, relative to the anchor (whose error is zero by
//! construction: the anchor's own uncertainty is not known here and is not added).
//!
//! A maximum exists only when no group of players won (or lost) every game against the rest:
//! the "beats" graph must be strongly connected (Zermelo's condition). A ladder often breaks it,
//! a random mover losing every game. `virtual_draws` then adds that many drawn games to every pair
//! that met (BayesElo's prior, in spirit): a mild pull towards equal ratings that keeps every
//! estimate finite. With `virtual_draws = 0` the fit is the pure MLE and a sweep is an error.
//! Colour is ignored: each pair plays both colours equally often in a ladder. The fit is
//! [`super::bradley_terry`]'s, without its White advantage.
//!
//! ```
//! use arena_core::rating::ladder::{Game, LadderConfig, fit};
//!
//! // B scores 3/4 against the anchor A (rated 1000).
//! let games = [
//!     Game::new("A", "B", 0.0), Game::new("B", "A", 1.0),
//!     Game::new("A", "B", 0.5), Game::new("B", "A", 0.5),
//! ];
//! let fitted = fit(&games, &LadderConfig::pure("A", 1000.0)).unwrap();
//! let b = fitted.iter().find(|p| p.name == "B").unwrap();
//! assert!((b.rating - (1000.0 + 400.0 * 3f64.log10())).abs() < 1e-6);
//! ```

use super::{
    RatingError,
    bradley_terry::{self, Anchor, Config},
};

pub use super::bradley_terry::Fitted;

/// One finished game: `score_a` is `a`'s points (1, ½ or 0); colours do not matter here.
#[derive(Debug, Clone, PartialEq)]
pub struct Game {
    /// One player.
    pub a: String,
    /// The other player.
    pub b: String,
    /// `a`'s score.
    pub score_a: f64,
}

impl Game {
    /// A game between `a` and `b` in which `a` scored `score_a`.
    pub fn new(a: impl Into<String>, b: impl Into<String>, score_a: f64) -> Game {
        Game {
            a: a.into(),
            b: b.into(),
            score_a,
        }
    }
}

/// The anchor and the regularisation of a fit.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderConfig {
    /// The player whose rating is known.
    pub anchor: String,
    /// Its rating; every other rating is relative to it.
    pub anchor_rating: f64,
    /// Drawn games added to every pair that met (0: the pure maximum-likelihood estimate).
    pub virtual_draws: f64,
}

impl LadderConfig {
    /// The pure MLE (no virtual draws) pinned to `anchor` at `rating`.
    pub fn pure(anchor: impl Into<String>, rating: f64) -> LadderConfig {
        LadderConfig {
            anchor: anchor.into(),
            anchor_rating: rating,
            virtual_draws: 0.0,
        }
    }

    /// As [`pure`](LadderConfig::pure), with one virtual draw per pair that met, which keeps a
    /// player who won or lost every game finite.
    pub fn regularised(anchor: impl Into<String>, rating: f64) -> LadderConfig {
        LadderConfig {
            virtual_draws: 1.0,
            ..LadderConfig::pure(anchor, rating)
        }
    }
}

/// Fits every player's Elo, the anchor held at its rating; players come back sorted by rating,
/// best first. This is [`bradley_terry::fit`] without a White advantage.
///
/// # Errors
///
/// [`RatingError::NoGames`] without games, [`RatingError::UnknownPlayer`] when the anchor played
/// none, [`RatingError::SelfPlay`] or [`RatingError::InvalidScore`] for a bad game,
/// [`RatingError::InvalidValue`] for a non-finite anchor rating or negative virtual draws,
/// [`RatingError::Unbounded`] when some players have no finite estimate (a sweep, or no games
/// linking them to the rest) and [`RatingError::NoConvergence`] if Newton's method stalls.
pub fn fit(games: &[Game], config: &LadderConfig) -> Result<Vec<Fitted>, RatingError> {
    let anchor = Anchor::Player {
        name: config.anchor.clone(),
        rating: config.anchor_rating,
    };
    fit_with(games, anchor, config.virtual_draws)
}

/// Fits every player's Elo with several players held at their ratings (each `(name, rating)` of
/// `pins`): Stockfish's `UCI_Elo` rungs at their nominal Elo. Errors are relative to the pinned
/// players together.
///
/// # Errors
/// As [`fit`], and [`RatingError::NoAnchor`] for an empty `pins`.
pub(crate) fn fit_pinned(
    games: &[Game],
    pins: &[(String, f64)],
    virtual_draws: f64,
) -> Result<Vec<Fitted>, RatingError> {
    fit_with(games, Anchor::Players(pins.to_vec()), virtual_draws)
}

fn fit_with(
    games: &[Game],
    anchor: Anchor,
    virtual_draws: f64,
) -> Result<Vec<Fitted>, RatingError> {
    // Colours are ignored, so who is called White does not matter.
    let games: Vec<bradley_terry::Game> = games
        .iter()
        .map(|g| bradley_terry::Game::new(g.a.clone(), g.b.clone(), g.score_a))
        .collect();
    let config = Config {
        anchor,
        white_advantage: false,
        virtual_draws: bradley_terry::VirtualDraws::PerPair(virtual_draws),
    };
    Ok(bradley_terry::fit(&games, &config)?.players)
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    use super::*;
    use crate::rating::{Z95, bradley_terry::K};

    fn expected(ri: f64, rj: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf((rj - ri) / 400.0))
    }

    /// Games whose points are exactly the expected scores of `ratings` (fractional points, as a
    /// long run averages to): the MLE must give the ratings back.
    fn exact_games(ratings: &[(&str, f64)], pairs: &[(usize, usize)], per_pair: u32) -> Vec<Game> {
        let mut games = Vec::new();
        for &(i, j) in pairs {
            let e = expected(ratings[i].1, ratings[j].1);
            for _ in 0..per_pair {
                games.push(Game::new(ratings[i].0, ratings[j].0, e));
            }
        }
        games
    }

    fn rating_of(fitted: &[Fitted], name: &str) -> Fitted {
        fitted
            .iter()
            .find(|f| f.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} is rated"))
    }

    const LADDER: [(&str, f64); 5] = [
        ("random", 200.0),
        ("sf-n1", 650.0),
        ("sf-n10", 900.0),
        ("sf-n100", 1200.0),
        ("anchor", 1350.0),
    ];

    #[test]
    fn expected_scores_give_the_true_ratings_back() {
        // A chain of neighbours plus every rung against the anchor, as the ladder format plays.
        let pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (1, 4), (2, 4)];
        let games = exact_games(&LADDER, &pairs, 10);
        let fitted = fit(&games, &LadderConfig::pure("anchor", 1350.0)).unwrap();
        for (name, truth) in LADDER {
            let f = rating_of(&fitted, name);
            assert!(
                (f.rating - truth).abs() < 1e-6,
                "{name}: {} vs {truth}",
                f.rating
            );
        }
        assert_eq!(rating_of(&fitted, "anchor").se, 0.0);
        // Best first.
        let order: Vec<&str> = fitted.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(order, ["anchor", "sf-n100", "sf-n10", "sf-n1", "random"]);
    }

    #[test]
    fn two_players_match_the_closed_form() {
        // 7 points of 10 against the anchor: r = R + 400 log10(7/3), se = 1 / sqrt(n e (1-e) K²).
        let mut games = vec![Game::new("x", "a", 1.0); 7];
        games.extend(vec![Game::new("x", "a", 0.0); 3]);
        let fitted = fit(&games, &LadderConfig::pure("a", 1000.0)).unwrap();
        let x = rating_of(&fitted, "x");
        assert!((x.rating - (1000.0 + 400.0 * (7.0f64 / 3.0).log10())).abs() < 1e-6);
        let se = 1.0 / (10.0 * 0.7 * 0.3 * K * K).sqrt();
        assert!((x.se - se).abs() < 1e-6, "{} vs {se}", x.se);
        assert_eq!((x.games, x.score), (10, 7.0));
        let (lo, hi) = x.interval();
        assert!((hi - lo - 2.0 * Z95 * se).abs() < 1e-6);
    }

    #[test]
    fn sampled_games_land_within_their_errors() {
        // Real win/draw/loss outcomes drawn from the model (draws a third of the non-decisive
        // mass), many games: every estimate within 3 standard errors of the truth.
        let mut rng = StdRng::seed_from_u64(11);
        let pairs = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (0, 4),
            (1, 4),
            (2, 4),
            (1, 3),
        ];
        let mut games = Vec::new();
        for &(i, j) in &pairs {
            let e = expected(LADDER[i].1, LADDER[j].1);
            for _ in 0..400 {
                // Draw probability d, win w: w + d/2 = e keeps the expected score.
                let d = 0.3 * (1.0 - (2.0 * e - 1.0).abs());
                let w = e - d / 2.0;
                let u: f64 = rng.random();
                let score = if u < w {
                    1.0
                } else if u < w + d {
                    0.5
                } else {
                    0.0
                };
                games.push(Game::new(LADDER[i].0, LADDER[j].0, score));
            }
        }
        let fitted = fit(&games, &LadderConfig::pure("anchor", 1350.0)).unwrap();
        for (name, truth) in LADDER {
            let f = rating_of(&fitted, name);
            assert!(
                (f.rating - truth).abs() <= 3.0 * f.se + 1e-9,
                "{name}: {} ± {} vs {truth}",
                f.rating,
                f.se
            );
        }
        // Players further from the anchor are known less precisely.
        assert!(rating_of(&fitted, "random").se > rating_of(&fitted, "sf-n100").se);
    }

    #[test]
    fn a_sweep_has_no_mle_but_a_regularised_estimate() {
        let mut games = vec![Game::new("a", "b", 1.0); 4];
        games.push(Game::new("a", "c", 0.5));
        games.push(Game::new("b", "c", 0.0));
        let err = fit(&games, &LadderConfig::pure("a", 1000.0)).unwrap_err();
        assert_eq!(err, RatingError::Unbounded(vec!["b".into()]));

        let fitted = fit(&games, &LadderConfig::regularised("a", 1000.0)).unwrap();
        let b = rating_of(&fitted, "b");
        assert!(b.rating.is_finite() && b.rating < 1000.0 - 200.0, "{b:?}");
        assert_eq!(
            (b.games, b.score),
            (5, 0.0),
            "virtual draws are not counted"
        );
    }

    #[test]
    fn players_cut_off_from_the_anchor_are_refused() {
        let games = [Game::new("a", "b", 0.5), Game::new("c", "d", 0.5)];
        let err = fit(&games, &LadderConfig::regularised("a", 1000.0)).unwrap_err();
        assert_eq!(err, RatingError::Unbounded(vec!["c".into(), "d".into()]));
    }

    #[test]
    fn bad_inputs_are_named() {
        let games = [Game::new("a", "b", 0.5)];
        assert_eq!(
            fit(&games, &LadderConfig::pure("z", 1000.0)).unwrap_err(),
            RatingError::UnknownPlayer("z".into())
        );
        assert_eq!(
            fit(&[], &LadderConfig::pure("a", 1000.0)).unwrap_err(),
            RatingError::NoGames
        );
        assert_eq!(
            fit(
                &[Game::new("a", "a", 1.0)],
                &LadderConfig::pure("a", 1000.0)
            )
            .unwrap_err(),
            RatingError::SelfPlay("a".into())
        );
        assert_eq!(
            fit(
                &[Game::new("a", "b", 2.0)],
                &LadderConfig::pure("a", 1000.0)
            )
            .unwrap_err(),
            RatingError::InvalidScore(2.0)
        );
        assert!(matches!(
            fit(&games, &LadderConfig::pure("a", f64::NAN)).unwrap_err(),
            RatingError::InvalidValue {
                what: "anchor_rating",
                ..
            }
        ));
    }
}
