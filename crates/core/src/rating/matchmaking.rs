//! Choosing the opponent whose game tells the rating system the most.
//!
//! Two orderings are offered, both from ChessArena:
//!
//! - [`Criterion::ChessArena`] is what its `competition_sampling.py` runs: for the requesting player
//!   `i`, sort candidates `j` by `d²_i = 1 / (g(RD_j)² E_i (1 − E_i))` ascending (the constant `q²` is
//!   left out; it does not change the order). Only the requester's gain counts, so it prefers an
//!   opponent with a similar rating and a *small* RD, and its preference for low RD is strong: the
//!   whole score scales with `g(RD_j)²`.
//! - [`Criterion::PairScore`] is the objective of the paper's appendix C.2 (equation 13):
//!   maximise `E_i (1 − E_i) [g(RD_i)² + g(RD_j)²]`, the RD reduction of *both* players. Because the
//!   requester's own `g(RD_i)²` is added rather than multiplied, an uncertain opponent is penalised
//!   less, so it leans more towards the closest rating and can pair two equal newcomers that
//!   [`Criterion::ChessArena`] would keep apart.
//!
//! Both use the expected score clipped to `[0.001, 0.999]`. A pick is uniform among the best
//! `top_k` candidates ([`DEFAULT_TOP_K`] = 3, as ChessArena), so that a pool does not replay the
//! same pairing over and over.
//!
//! ```
//! use std::collections::BTreeMap;
//! use arena_core::rating::{glicko::Rating, matchmaking::{self, Criterion}};
//!
//! let pool = BTreeMap::from([
//!     ("new".to_string(), Rating::new(1500.0, 350.0)),
//!     ("close".to_string(), Rating::new(1520.0, 60.0)),
//!     ("far".to_string(), Rating::new(2400.0, 60.0)),
//! ]);
//! let ranked = matchmaking::rank_opponents("new", &["far", "close"], &pool, Criterion::ChessArena)
//!     .unwrap();
//! assert_eq!(ranked[0].0, "close");
//! ```

use std::collections::{BTreeMap, HashMap};

use rand::{Rng, RngExt};

use super::{
    error::RatingError,
    glicko::{self, Rating, Ratings},
};

/// How many of the best candidates a pick chooses among, as ChessArena.
pub const DEFAULT_TOP_K: usize = 3;

/// Which informativeness ordering to use (see the module docs for what each prefers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Criterion {
    /// ChessArena's code: smallest `d²` of the requester first; the value is `d²` without `q²`.
    #[default]
    ChessArena,
    /// The paper's equation 13: largest `E(1 − E)[g(RD_i)² + g(RD_j)²]` first.
    PairScore,
}

/// Where matchmaking looks up a player's current rating.
pub trait RatingLookup {
    /// The rating of `name`, or `None` when it is unknown.
    fn lookup(&self, name: &str) -> Option<Rating>;
}

impl RatingLookup for Ratings {
    /// Players without games have the initial rating, as in a live tournament.
    fn lookup(&self, name: &str) -> Option<Rating> {
        Some(self.rating(name))
    }
}

impl RatingLookup for BTreeMap<String, Rating> {
    fn lookup(&self, name: &str) -> Option<Rating> {
        self.get(name).copied()
    }
}

impl<S: std::hash::BuildHasher> RatingLookup for HashMap<String, Rating, S> {
    fn lookup(&self, name: &str) -> Option<Rating> {
        self.get(name).copied()
    }
}

/// ChessArena's `d²` for `player` facing `opponent`, without the `q²` factor. Smaller is better.
pub(crate) fn d_squared_unscaled(player: Rating, opponent: Rating) -> f64 {
    glicko::d_squared(player, opponent) * glicko::Q * glicko::Q
}

/// The paper's pairing score `E_i (1 − E_i) [g(RD_i)² + g(RD_j)²]`. Larger is better.
pub fn pair_score(player: Rating, opponent: Rating) -> f64 {
    let e = glicko::expected_score(player, opponent);
    let (gi, gj) = (glicko::g(player.rd), glicko::g(opponent.rd));
    e * (1.0 - e) * (gi * gi + gj * gj)
}

/// Candidates ordered best first with the criterion's value (`d²` or pair score).
///
/// `player` itself is skipped if it is among the candidates; ties keep the candidates' order.
///
/// # Errors
/// [`RatingError::UnknownPlayer`] when `ratings` has no rating for `player` or a candidate.
pub fn rank_opponents<S: AsRef<str>>(
    player: &str,
    candidates: &[S],
    ratings: &impl RatingLookup,
    criterion: Criterion,
) -> Result<Vec<(String, f64)>, RatingError> {
    let me = lookup(ratings, player)?;
    let mut ranked = Vec::with_capacity(candidates.len());
    for name in candidates.iter().map(AsRef::as_ref) {
        if name == player {
            continue;
        }
        let them = lookup(ratings, name)?;
        let value = match criterion {
            Criterion::ChessArena => d_squared_unscaled(me, them),
            Criterion::PairScore => pair_score(me, them),
        };
        ranked.push((name.to_owned(), value));
    }
    match criterion {
        Criterion::ChessArena => ranked.sort_by(|a, b| a.1.total_cmp(&b.1)),
        Criterion::PairScore => ranked.sort_by(|a, b| b.1.total_cmp(&a.1)),
    }
    Ok(ranked)
}

/// An opponent for `player`, uniform among the best `top_k` candidates; `None` when there is no
/// candidate other than `player` or `top_k` is 0.
///
/// # Errors
/// As [`rank_opponents`].
pub fn pick_opponent<S: AsRef<str>>(
    player: &str,
    candidates: &[S],
    ratings: &impl RatingLookup,
    criterion: Criterion,
    top_k: usize,
    rng: &mut impl Rng,
) -> Result<Option<String>, RatingError> {
    let mut ranked = rank_opponents(player, candidates, ratings, criterion)?;
    ranked.truncate(top_k);
    if ranked.is_empty() {
        return Ok(None);
    }
    let i = rng.random_range(0..ranked.len());
    Ok(Some(ranked.swap_remove(i).0))
}

fn lookup(ratings: &impl RatingLookup, name: &str) -> Result<Rating, RatingError> {
    ratings
        .lookup(name)
        .ok_or_else(|| RatingError::UnknownPlayer(name.to_owned()))
}

#[cfg(test)]
mod tests {
    use rand::{SeedableRng, rngs::StdRng};

    use super::*;
    use crate::rating::glicko::{GameResult, GlickoConfig};

    fn pool(entries: &[(&str, f64, f64)]) -> BTreeMap<String, Rating> {
        entries
            .iter()
            .map(|&(n, r, rd)| (n.to_owned(), Rating::new(r, rd)))
            .collect()
    }

    #[test]
    fn both_criteria_prefer_close_settled_opponents() {
        let p = pool(&[
            ("me", 1500.0, 200.0),
            ("twin", 1500.0, 50.0),
            ("near", 1600.0, 50.0),
            ("far", 2200.0, 50.0),
        ]);
        let names = ["far", "near", "twin", "me"];
        for criterion in [Criterion::ChessArena, Criterion::PairScore] {
            let ranked = rank_opponents("me", &names, &p, criterion).unwrap();
            let order: Vec<_> = ranked.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(order, ["twin", "near", "far"], "{criterion:?}");
        }
        // d² of an equal, certain opponent: 1 / (g(50)² · 0.25).
        let ranked = rank_opponents("me", &names, &p, Criterion::ChessArena).unwrap();
        let g50 = glicko::g(50.0);
        assert!((ranked[0].1 - 4.0 / (g50 * g50)).abs() < 1e-12);
    }

    #[test]
    fn the_criteria_disagree_on_an_uncertain_equal_versus_a_settled_distant_opponent() {
        // For a settled requester, the paper's score adds g(RD_i)² ≈ 1, which lifts the uncertain
        // equal opponent; ChessArena's d² multiplies by g(RD_j)² alone and prefers the settled one.
        let p = pool(&[
            ("me", 1500.0, 50.0),
            ("fresh_equal", 1500.0, 350.0),
            ("settled_260", 1760.0, 50.0),
        ]);
        let names = ["fresh_equal", "settled_260"];
        let d2 = rank_opponents("me", &names, &p, Criterion::ChessArena).unwrap();
        let paper = rank_opponents("me", &names, &p, Criterion::PairScore).unwrap();
        assert_eq!(d2[0].0, "settled_260");
        assert_eq!(paper[0].0, "fresh_equal");
    }

    #[test]
    fn pick_is_uniform_among_top_k_and_handles_empty_pools() {
        let p = pool(&[
            ("me", 1500.0, 300.0),
            ("a", 1500.0, 50.0),
            ("b", 1510.0, 50.0),
            ("c", 1520.0, 50.0),
            ("z", 2600.0, 50.0),
        ]);
        let names = ["a", "b", "c", "z"];
        let mut rng = StdRng::seed_from_u64(7);
        let mut counts = BTreeMap::new();
        for _ in 0..3000 {
            let pick = pick_opponent("me", &names, &p, Criterion::ChessArena, 3, &mut rng)
                .unwrap()
                .unwrap();
            *counts.entry(pick).or_insert(0) += 1;
        }
        assert!(!counts.contains_key("z"), "{counts:?}");
        assert!(
            counts.values().all(|&n| (850..1150).contains(&n)),
            "{counts:?}"
        );
        let pick = pick_opponent("me", &["me"], &p, Criterion::ChessArena, 3, &mut rng);
        assert_eq!(pick, Ok(None));
        let pick = pick_opponent("me", &names, &p, Criterion::ChessArena, 0, &mut rng);
        assert_eq!(pick, Ok(None));
        let err = rank_opponents("me", &["ghost"], &p, Criterion::ChessArena);
        assert_eq!(err, Err(RatingError::UnknownPlayer("ghost".into())));
    }

    /// Elo expectation of the true strengths, then a draw share that is largest for equal players;
    /// the expected score stays exactly the Elo expectation.
    fn play(true_white: f64, true_black: f64, rng: &mut StdRng) -> f64 {
        let e = 1.0 / (1.0 + 10f64.powf((true_black - true_white) / 400.0));
        let draw = 1.2 * e * (1.0 - e);
        let u: f64 = rng.random();
        if u < e - draw / 2.0 {
            1.0
        } else if u < e + draw / 2.0 {
            0.5
        } else {
            0.0
        }
    }

    /// Warms up a pool (a random mover and engines of known strength) with round robins, then adds
    /// one newcomer who asks the matchmaker for every game; returns the games it needed to reach
    /// RD <= 100.
    fn games_to_settle(seed: u64, newcomer_strength: f64, matchmaking: bool) -> usize {
        let strengths: BTreeMap<String, f64> = [
            ("random", 200.0),
            ("sf-800", 800.0),
            ("sf-1100", 1100.0),
            ("sf-1400", 1400.0),
            ("sf-1700", 1700.0),
            ("sf-2000", 2000.0),
            ("sf-2300", 2300.0),
            ("sf-2600", 2600.0),
        ]
        .into_iter()
        .map(|(n, s)| (n.to_owned(), s))
        .collect();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut ratings = Ratings::new(GlickoConfig::default()).unwrap();
        let names: Vec<String> = strengths.keys().cloned().collect();
        for _round in 0..4 {
            for w in &names {
                for b in &names {
                    if w != b {
                        let score_white = play(strengths[w], strengths[b], &mut rng);
                        let game = GameResult {
                            white: w.clone(),
                            black: b.clone(),
                            score_white,
                        };
                        ratings.record(&game).unwrap();
                    }
                }
            }
        }
        let newcomer = "newcomer";
        for n in 1..=200 {
            let opponent = if matchmaking {
                pick_opponent(
                    newcomer,
                    &names,
                    &ratings,
                    Criterion::ChessArena,
                    3,
                    &mut rng,
                )
                .unwrap()
                .expect("the pool is not empty")
            } else {
                names[rng.random_range(0..names.len())].clone()
            };
            let (white, black) = if n % 2 == 0 {
                (newcomer.to_owned(), opponent)
            } else {
                (opponent, newcomer.to_owned())
            };
            let true_w = strengths.get(&white).copied().unwrap_or(newcomer_strength);
            let true_b = strengths.get(&black).copied().unwrap_or(newcomer_strength);
            let score_white = play(true_w, true_b, &mut rng);
            let game = GameResult {
                white,
                black,
                score_white,
            };
            ratings.record(&game).unwrap();
            if ratings.rating(newcomer).rd <= 100.0 {
                return n;
            }
        }
        usize::MAX
    }

    #[test]
    fn a_newcomer_settles_within_about_thirty_games() {
        let mut with = Vec::new();
        let mut without = Vec::new();
        for seed in 0..8 {
            // Newcomers across the pool's range, including its edges.
            let strength = 300.0 + 300.0 * seed as f64;
            with.push(games_to_settle(seed, strength, true));
            without.push(games_to_settle(seed, strength, false));
        }
        let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
        eprintln!(
            "games to RD <= 100: matchmaking {with:?} (mean {:.1}), random opponents {without:?} (mean {:.1})",
            mean(&with),
            mean(&without)
        );
        assert!(with.iter().all(|&n| n <= 40), "{with:?}");
        assert!(mean(&with) <= mean(&without), "{with:?} vs {without:?}");
    }
}
