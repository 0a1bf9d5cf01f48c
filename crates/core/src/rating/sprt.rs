//! Sequential tests for "is variant B better than baseline A?": the pentanomial GSPRT on game
//! pairs, fixed-size Elo differences with intervals, Holm's correction across variants and the
//! average sample number of a test.
//!
//! The log-likelihood ratio is the generalised one that fastchess (`SPRT::getLLR`) and fishtest
//! (`LLRcalc`) compute: empty buckets count as 1e-3 games, the likelihood of each hypothesis is
//! maximised over every distribution on the unit's outcomes whose statistic equals the
//! hypothesis (Van den Bergh's secular equations: the expected score for the logistic model, the
//! t-value `(mu - 1/2) / sigma` for the normalised one), and
//! `LLR = N * sum_i phat_i * ln(p1_i / p0_i)`. Bounds are Wald's, `ln(beta / (1 - alpha))` and
//! `ln((1 - beta) / alpha)`. Written by hand: no crate implements the GSPRT; the root finder is
//! the module's own Brent method where fastchess uses ITP, so the figures agree to the accuracy
//! of the roots.
//!
//! Two units are tested:
//! - **head to head** ([`Unit::Pair`]): a variant's game pair against the baseline on one opening,
//!   colours swapped, scored 0, 1/4, ..., 1 for the variant (the pentanomial; the WL and DD pairs
//!   share a bucket, as in fastchess);
//! - **against common opponents** ([`Unit::PairedDifference`]): the variant's pair and the
//!   baseline's pair on the same opening against the same opponent, scored
//!   `x = (1 + s_variant - s_baseline) / 2` on nine points 0, 1/8, ..., 1. Its mean is one half
//!   plus half the difference of the two arms' expected scores. The logistic model reads Elo as
//!   the difference that head to head at even strength would give: `E[x] = (L(elo) + 1/2) / 2`,
//!   so a variant that scores `L(elo)` where the baseline scores one half is `elo` better; the
//!   normalised model tests the t-value of `x` with the same `sqrt 2` scale as a pentanomial pair.

use super::RatingError;
use super::root::brent;

/// Normalised Elo per unit of t-value: `800 / ln 10`, as fastchess and fishtest define it.
pub(crate) const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// What replaces an empty bucket, in games (fastchess's and fishtest's `regularize`).
const EMPTY_BUCKET: f64 = 1e-3;

/// The two-sided 95 % normal quantile, to the digits fastchess uses for its intervals (the
/// crate's [`super::Z95`] rounds it to 1.96).
const Z95: f64 = 1.959963984540054;

/// The Elo scale the hypotheses are stated in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EloModel {
    /// Logistic Elo: the hypothesis is an expected score `1 / (1 + 10^(-elo/400))`.
    Logistic,
    /// Normalised Elo (fastchess's default): the hypothesis is a t-value, `elo / (800 / ln 10)`,
    /// times `sqrt 2` for a pair; independent of the draw rate.
    Normalized,
}

impl EloModel {
    /// The name used in scripts and JSON (`"logistic"`, `"normalized"`).
    pub fn name(self) -> &'static str {
        match self {
            EloModel::Logistic => "logistic",
            EloModel::Normalized => "normalized",
        }
    }

    /// Parses [`EloModel::name`].
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "logistic" => Some(EloModel::Logistic),
            "normalized" | "normalised" => Some(EloModel::Normalized),
            _ => None,
        }
    }
}

/// The unit one observation of the test is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A game pair of the variant against the baseline (five outcomes).
    Pair,
    /// The difference of the variant's and the baseline's pairs on the same opening and opponent
    /// (nine outcomes).
    PairedDifference,
}

impl Unit {
    /// How many distinct outcomes a unit has.
    pub fn outcomes(self) -> usize {
        match self {
            Unit::Pair => 5,
            Unit::PairedDifference => 9,
        }
    }

    /// The score of outcome `i`, in `[0, 1]`.
    fn score(self, i: usize) -> f64 {
        i as f64 / (self.outcomes() - 1) as f64
    }
}

/// The logistic expected score of an Elo difference.
pub(crate) fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The logistic Elo difference of an expected score in `(0, 1)`.
pub fn logistic_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Counts of a test's units, by outcome (index `i` scores `i / (outcomes - 1)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    unit: Unit,
    counts: Vec<u64>,
}

impl Counts {
    /// No units yet.
    pub fn new(unit: Unit) -> Self {
        Counts {
            unit,
            counts: vec![0; unit.outcomes()],
        }
    }

    /// The unit counted.
    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Counts by outcome, lowest score first.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Head to head: counts from fastchess's six pair kinds
    /// `[LL, LD, WL, DD, WD, WW]` (WL and DD share a bucket).
    pub fn from_pentanomial(ll: u64, ld: u64, wl: u64, dd: u64, wd: u64, ww: u64) -> Self {
        Counts {
            unit: Unit::Pair,
            counts: vec![ll, ld, wl + dd, wd, ww],
        }
    }

    /// Adds one head-to-head pair from the variant's two game scores (each 0, 1/2 or 1).
    pub fn add_pair(&mut self, first: f64, second: f64) -> Result<(), RatingError> {
        let sum = half_points(first)? + half_points(second)?;
        match self.unit {
            Unit::Pair => self.counts[sum] += 1,
            Unit::PairedDifference => {
                return Err(RatingError::InvalidValue {
                    what: "head-to-head pair in a paired-difference test",
                    value: sum as f64,
                });
            }
        }
        Ok(())
    }

    /// Adds one paired difference: the variant's two game scores and the baseline's two game
    /// scores on the same opening against the same opponent.
    pub fn add_difference(
        &mut self,
        variant: (f64, f64),
        baseline: (f64, f64),
    ) -> Result<(), RatingError> {
        let v = half_points(variant.0)? + half_points(variant.1)?;
        let b = half_points(baseline.0)? + half_points(baseline.1)?;
        match self.unit {
            // x = (1 + (v - b) / 4) / 2 = (4 + v - b) / 8: index 4 + v - b.
            Unit::PairedDifference => self.counts[4 + v - b] += 1,
            Unit::Pair => {
                return Err(RatingError::InvalidValue {
                    what: "paired difference in a head-to-head test",
                    value: v as f64 - b as f64,
                });
            }
        }
        Ok(())
    }

    /// How many units were counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean score and variance of one unit, from the raw counts (`None` without units).
    pub(crate) fn mean_variance(&self) -> Option<(f64, f64)> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let p: Vec<f64> = self.counts.iter().map(|&c| c as f64 / n as f64).collect();
        Some(mean_variance(self.unit, &p))
    }
}

/// A game score in half points (0, 1 or 2), refusing anything else.
fn half_points(score: f64) -> Result<usize, RatingError> {
    let h = score * 2.0;
    if (0.0..=2.0).contains(&h) && h.fract() == 0.0 {
        Ok(h as usize)
    } else {
        Err(RatingError::InvalidScore(score))
    }
}

fn mean_variance(unit: Unit, p: &[f64]) -> (f64, f64) {
    let mu: f64 = p.iter().enumerate().map(|(i, q)| q * unit.score(i)).sum();
    let var = p
        .iter()
        .enumerate()
        .map(|(i, q)| q * (unit.score(i) - mu).powi(2))
        .sum();
    (mu, var)
}

/// A test's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The LLR reached its lower bound: no better than `elo0`.
    H0,
    /// The LLR reached its upper bound: better by at least about `elo1`.
    H1,
    /// Neither bound reached yet.
    Undecided,
}

impl Verdict {
    /// `"H0"`, `"H1"` or `"undecided"`, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::H0 => "H0",
            Verdict::H1 => "H1",
            Verdict::Undecided => "undecided",
        }
    }
}

/// A sequential probability ratio test's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sprt {
    /// Elo under the null hypothesis.
    pub elo0: f64,
    /// Elo under the alternative.
    pub elo1: f64,
    /// Chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Chance of accepting H0 when H1 holds.
    pub beta: f64,
    /// The scale of `elo0` and `elo1`.
    pub model: EloModel,
}

impl Sprt {
    /// Checks the settings as fastchess does (`elo0 < elo1`, `0 < alpha, beta`, `alpha + beta < 1`).
    pub fn new(
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        model: EloModel,
    ) -> Result<Self, RatingError> {
        for (what, value) in [
            ("elo0", elo0),
            ("elo1", elo1),
            ("alpha", alpha),
            ("beta", beta),
        ] {
            super::error::finite(what, value)?;
        }
        if elo0 >= elo1 {
            return Err(RatingError::InvalidValue {
                what: "elo1 (must be above elo0)",
                value: elo1,
            });
        }
        for (what, value) in [("alpha", alpha), ("beta", beta)] {
            if value <= 0.0 || value >= 1.0 {
                return Err(RatingError::InvalidValue { what, value });
            }
        }
        if alpha + beta >= 1.0 {
            return Err(RatingError::InvalidValue {
                what: "alpha + beta (must be below 1)",
                value: alpha + beta,
            });
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }

    /// The same test with another alpha (Holm's step-down changes it as variants are decided).
    pub fn with_alpha(self, alpha: f64) -> Self {
        Sprt { alpha, ..self }
    }

    /// Wald's lower bound, `ln(beta / (1 - alpha))`: at or below it the test accepts H0.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// Wald's upper bound, `ln((1 - beta) / alpha)`: at or above it the test accepts H1.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The decision for an LLR.
    pub fn verdict(&self, llr: f64) -> Verdict {
        if llr >= self.upper_bound() {
            Verdict::H1
        } else if llr <= self.lower_bound() {
            Verdict::H0
        } else {
            Verdict::Undecided
        }
    }

    /// The generalised log-likelihood ratio of H1 against H0 for these counts (0 without units,
    /// as fastchess reports before the first pair).
    pub fn llr(&self, counts: &Counts) -> f64 {
        if counts.total() == 0 {
            return 0.0;
        }
        let unit = counts.unit();
        let regular: Vec<f64> = counts
            .counts()
            .iter()
            .map(|&c| if c == 0 { EMPTY_BUCKET } else { c as f64 })
            .collect();
        let n: f64 = regular.iter().sum();
        let phat: Vec<f64> = regular.iter().map(|c| c / n).collect();
        let scores: Vec<f64> = (0..unit.outcomes()).map(|i| unit.score(i)).collect();
        let (p0, p1) = match self.model {
            EloModel::Logistic => (
                mle_expected(&scores, &phat, hypothesis_score(unit, self.elo0)),
                mle_expected(&scores, &phat, hypothesis_score(unit, self.elo1)),
            ),
            EloModel::Normalized => (
                mle_t_value(&scores, &phat, 0.5, t_value(self.elo0)),
                mle_t_value(&scores, &phat, 0.5, t_value(self.elo1)),
            ),
        };
        n * phat
            .iter()
            .zip(p0.iter().zip(&p1))
            .map(|(q, (a, b))| q * (b.ln() - a.ln()))
            .sum::<f64>()
    }
}

/// The unit's expected score under a logistic Elo hypothesis.
fn hypothesis_score(unit: Unit, elo: f64) -> f64 {
    match unit {
        Unit::Pair => logistic_score(elo),
        Unit::PairedDifference => (logistic_score(elo) + 0.5) / 2.0,
    }
}

/// The per-pair t-value of a normalised Elo.
fn t_value(nelo: f64) -> f64 {
    std::f64::consts::SQRT_2 * nelo / NELO_PER_T
}

/// The root of the secular equation `sum_i p_i a_i / (1 + x a_i) = 0` on `(-1/max a, -1/min a)`.
fn secular(a: &[f64], p: &[f64]) -> f64 {
    let max = a.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let min = a.iter().cloned().fold(f64::INFINITY, f64::min);
    if max <= 0.0 || min >= 0.0 {
        // The hypothesis lies outside the outcomes' range: the constrained maximum sits on the
        // boundary; the nearest end of the bracket is the limit of the root.
        return if max <= 0.0 { f64::MAX } else { f64::MIN };
    }
    let (lo, hi) = (-1.0 / max, -1.0 / min);
    let margin = 1e-12 * (hi - lo);
    let f = |x: f64| -> f64 {
        a.iter()
            .zip(p)
            .map(|(ai, pi)| pi * ai / (1.0 + x * ai))
            .sum()
    };
    brent(f, lo + margin, hi - margin, 1e-15).unwrap_or((lo + hi) / 2.0)
}

/// The distribution of largest likelihood for `phat` whose mean is `s` (Van den Bergh,
/// Proposition 1.1).
fn mle_expected(scores: &[f64], phat: &[f64], s: f64) -> Vec<f64> {
    let shifted: Vec<f64> = scores.iter().map(|a| a - s).collect();
    let x = secular(&shifted, phat);
    phat.iter()
        .zip(&shifted)
        .map(|(p, a)| p / (1.0 + x * a))
        .collect()
}

/// The distribution of largest likelihood for `phat` whose t-value `(mu - reference) / sigma` is
/// `t`, by the fixed-point iteration of Van den Bergh's "normalized Elo" note (section 4.1),
/// started from the uniform distribution as fastchess and fishtest start it.
fn mle_t_value(scores: &[f64], phat: &[f64], reference: f64, t: f64) -> Vec<f64> {
    let n = scores.len();
    let mut p = vec![1.0 / n as f64; n];
    for _ in 0..100 {
        let (mu, var) = {
            let mu: f64 = p.iter().zip(scores).map(|(q, a)| q * a).sum();
            let var: f64 = p
                .iter()
                .zip(scores)
                .map(|(q, a)| q * (a - mu).powi(2))
                .sum();
            (mu, var)
        };
        let sigma = var.sqrt();
        let phi: Vec<f64> = scores
            .iter()
            .map(|a| a - reference - 0.5 * t * sigma * (1.0 + ((a - mu) / sigma).powi(2)))
            .collect();
        let x = secular(&phi, phat);
        let mut change: f64 = 0.0;
        for i in 0..n {
            let new = phat[i] / (1.0 + x * phi[i]);
            change = change.max((new - p[i]).abs());
            p[i] = new;
        }
        if change < 1e-13 {
            break;
        }
    }
    p
}

/// A difference in Elo with its 95 % interval, from a fixed number of units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloDifference {
    /// Logistic Elo of the variant over the baseline (infinite for a score of 0 or 1).
    pub elo: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
    /// Normalised Elo (per game, fastchess's definition for pairs).
    pub nelo: f64,
    /// Half width of the normalised Elo's 95 % interval.
    pub nelo_error: f64,
    /// The unit's mean score.
    pub score: f64,
    /// Units counted.
    pub units: u64,
}

/// The Elo difference of the counts, with a normal-approximation interval on the mean score
/// mapped through the logistic curve (fastchess's `elo_pentanomial` method; for paired
/// differences the score is first mapped back by `L(elo) = 2 E[x] - 1/2`).
pub fn elo_difference(counts: &Counts) -> Result<EloDifference, RatingError> {
    let (mu, var) = counts.mean_variance().ok_or(RatingError::NoGames)?;
    let n = counts.total() as f64;
    let se = (var / n).sqrt();
    let to_elo = |s: f64| -> f64 {
        let head_to_head = match counts.unit() {
            Unit::Pair => s,
            Unit::PairedDifference => 2.0 * s - 0.5,
        };
        // A score of 0 or 1 (or beyond, for an interval's end) has no finite Elo: infinite.
        if head_to_head >= 1.0 {
            f64::INFINITY
        } else if head_to_head <= 0.0 {
            f64::NEG_INFINITY
        } else {
            logistic_elo(head_to_head)
        }
    };
    let (nelo, nelo_error) = if var > 0.0 {
        let per = (2.0 * var).sqrt();
        ((mu - 0.5) / per * NELO_PER_T, Z95 * se / per * NELO_PER_T)
    } else if mu == 0.5 {
        (0.0, 0.0)
    } else {
        // Every unit scored the same, away from one half: a t-value without spread is infinite.
        ((mu - 0.5).signum() * f64::INFINITY, 0.0)
    };
    Ok(EloDifference {
        elo: to_elo(mu),
        low: to_elo(mu - Z95 * se),
        high: to_elo(mu + Z95 * se),
        nelo,
        nelo_error,
        score: mu,
        units: counts.total(),
    })
}

/// One unit against a common opponent: the opponent (an index), the arm's pair score and the
/// baseline's pair score on the same opening against that opponent (each the mean of two game
/// scores). Head to head the baseline's is one minus the arm's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairScores {
    /// Which opponent the two pairs were played against.
    pub opponent: usize,
    /// The arm's pair score, in `[0, 1]`.
    pub arm: f64,
    /// The baseline's pair score, in `[0, 1]`.
    pub baseline: f64,
}

/// A logistic Elo difference estimated through common opponents, with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThroughOpponents {
    /// The difference, arm minus baseline (infinite or NaN where a side scored 0 or 1 against
    /// an opponent).
    pub elo: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
    /// Units counted.
    pub units: u64,
}

/// The logistic Elo difference between an arm and the baseline through their common opponents.
/// Under the logistic model an arm rated `R_v` scores `L(R_v - R_o)` against an opponent rated
/// `R_o`, and the baseline `L(R_b - R_o)`, so against each opponent
/// `R_v - R_b = L⁻¹(s_v) - L⁻¹(s_b)` whatever the opponent's rating, where `s_v` and `s_b` are
/// the two sides' mean pair scores against it. The per-opponent differences are pooled with
/// weights in proportion to their units. The 95 % interval is the delta method's: against each
/// opponent the variance of `L⁻¹(s̄_v) - L⁻¹(s̄_b)` is
/// `(g_v² var_v + g_b² var_b - 2 g_v g_b cov) / n`, with `g = dL⁻¹/ds = 400 / (ln 10 · s (1 - s))`
/// and the covariance of the paired units (same opening, same opponent), and the pooled variance
/// is the weighted sum over opponents.
///
/// # Errors
/// [`RatingError::NoGames`] without units.
pub fn elo_through_opponents(units: &[PairScores]) -> Result<ThroughOpponents, RatingError> {
    if units.is_empty() {
        return Err(RatingError::NoGames);
    }
    let mut opponents: Vec<usize> = units.iter().map(|u| u.opponent).collect();
    opponents.sort_unstable();
    opponents.dedup();
    let total = units.len() as f64;
    let (mut elo, mut variance) = (0.0, 0.0);
    for o in opponents {
        let these: Vec<&PairScores> = units.iter().filter(|u| u.opponent == o).collect();
        let n = these.len() as f64;
        let sv = these.iter().map(|u| u.arm).sum::<f64>() / n;
        let sb = these.iter().map(|u| u.baseline).sum::<f64>() / n;
        let var_v = these.iter().map(|u| (u.arm - sv).powi(2)).sum::<f64>() / n;
        let var_b = these.iter().map(|u| (u.baseline - sb).powi(2)).sum::<f64>() / n;
        let cov = these
            .iter()
            .map(|u| (u.arm - sv) * (u.baseline - sb))
            .sum::<f64>()
            / n;
        let to_elo = |s: f64| -> f64 {
            if s >= 1.0 {
                f64::INFINITY
            } else if s <= 0.0 {
                f64::NEG_INFINITY
            } else {
                logistic_elo(s)
            }
        };
        let slope = |s: f64| 400.0 / (std::f64::consts::LN_10 * s * (1.0 - s));
        let (gv, gb) = (slope(sv), slope(sb));
        let weight = n / total;
        elo += weight * (to_elo(sv) - to_elo(sb));
        variance += weight * weight * (gv * gv * var_v + gb * gb * var_b - 2.0 * gv * gb * cov) / n;
    }
    let half = Z95 * variance.max(0.0).sqrt();
    Ok(ThroughOpponents {
        elo,
        low: elo - half,
        high: elo + half,
        units: units.len() as u64,
    })
}

/// The one-sided p-value of "the variant is no better" for fixed-size counts (normal
/// approximation of the mean unit score against one half). When no unit varies the normal
/// approximation has no spread to work with: every unit won gives the sign test's `2^-n` (the
/// chance of n wins in n fair coin tosses), rather than a certainty no sample can give; every
/// unit even or lost gives one.
pub fn p_value_better(counts: &Counts) -> f64 {
    match counts.mean_variance() {
        Some((mu, var)) if var > 0.0 => {
            let z = (mu - 0.5) / (var / counts.total() as f64).sqrt();
            0.5 * erfc(z / std::f64::consts::SQRT_2)
        }
        Some((mu, _)) if mu > 0.5 => 0.5_f64.powf(counts.total() as f64),
        _ => 1.0,
    }
}

/// Complementary error function (Numerical Recipes' Chebyshev fit, relative error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Holm's step-down adjustment: the adjusted p-value of each input, in the input's order.
/// Rejecting where the adjusted value is at most alpha keeps the family-wise error at alpha.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The alpha of each still-undecided SPRT in a family of `family` variants after `accepted` of
/// them reached H1: the sequential Holm step-down of Bartroff and Lai (2010), which starts at
/// Bonferroni's `alpha / family` and relaxes to `alpha / (family - accepted)`.
pub fn holm_alpha(alpha: f64, family: usize, accepted: usize) -> f64 {
    let left = family.saturating_sub(accepted).max(1);
    alpha / left as f64
}

/// The expected length of a test: its average sample number and the chance it ends in H1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleNumber {
    /// Expected number of units (game pairs, or paired differences) to a decision.
    pub units: f64,
    /// Chance that the test accepts H1.
    pub p_h1: f64,
}

/// The average sample number of `sprt` when the true difference is `true_elo` (in the test's
/// model) and one unit's score has variance `unit_variance`: the Brownian approximation of the
/// LLR that fishtest uses (`LLR_drift_variance_alt2`), drift
/// `(s - (s0 + s1) / 2) (s1 - s0) / v` and variance `(s1 - s0)^2 / v` per unit, with Wald's exit
/// probabilities and expected time for a drifted Brownian motion between the two bounds.
pub fn average_sample_number(
    sprt: &Sprt,
    unit: Unit,
    true_elo: f64,
    unit_variance: f64,
) -> Result<SampleNumber, RatingError> {
    if unit_variance.is_nan() || unit_variance <= 0.0 {
        return Err(RatingError::InvalidValue {
            what: "unit variance",
            value: unit_variance,
        });
    }
    let sigma = unit_variance.sqrt();
    let score = |elo: f64| -> f64 {
        match sprt.model {
            EloModel::Logistic => hypothesis_score(unit, elo),
            EloModel::Normalized => 0.5 + t_value(elo) * sigma,
        }
    };
    let (s0, s1, s) = (score(sprt.elo0), score(sprt.elo1), score(true_elo));
    let drift = (s - (s0 + s1) / 2.0) * (s1 - s0) / unit_variance;
    let var = (s1 - s0).powi(2) / unit_variance;
    let (a, b) = (sprt.lower_bound(), sprt.upper_bound());
    if (drift * (b - a) / var).abs() < 1e-9 {
        // No drift: exits in proportion to the distances, after -a b / var units.
        return Ok(SampleNumber {
            units: -a * b / var,
            p_h1: -a / (b - a),
        });
    }
    let k = -2.0 * drift / var;
    // P(hit b before a) for a Brownian motion started at 0.
    let p_h1 = ((k * a).exp() - 1.0) / ((k * a).exp() - (k * b).exp());
    let p_h1 = if p_h1.is_finite() {
        p_h1.clamp(0.0, 1.0)
    } else if drift > 0.0 {
        1.0
    } else {
        0.0
    };
    Ok(SampleNumber {
        units: (p_h1 * b + (1.0 - p_h1) * a) / drift,
        p_h1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// LLRs computed once by `tests/fixtures/sprt/llr_reference.py`, an independent Python
    /// implementation of fastchess's `SPRT::getLLR` and fishtest's `LLRcalc` formulas (bisection
    /// roots to machine precision). Counts are `[LL, LD, WL, DD, WD, WW]`.
    const FASTCHESS_CASES: &[([u64; 6], f64, f64, f64, f64)] = &[
        (
            [10, 20, 15, 25, 20, 10],
            0.0,
            5.0,
            -0.0345068510,
            -0.0207094670,
        ),
        (
            [5, 30, 10, 50, 40, 15],
            0.0,
            5.0,
            0.8188142658,
            0.5856132307,
        ),
        (
            [40, 10, 30, 5, 10, 5],
            0.0,
            40.0,
            -9.4706667052,
            -9.4585680959,
        ),
        ([3, 5, 8, 12, 9, 6], 0.0, 40.0, 1.0115883978, 0.9424373494),
        ([0, 2, 1, 0, 3, 4], 0.0, 40.0, 1.0813293817, 0.9822700268),
        (
            [12, 0, 20, 0, 0, 30],
            -10.0,
            20.0,
            2.1860422183,
            2.5176581569,
        ),
        (
            [100, 200, 150, 300, 220, 130],
            0.0,
            2.0,
            0.6970021523,
            0.5538805079,
        ),
        ([7, 0, 0, 0, 0, 0], 0.0, 40.0, -0.8524508493, -1.2264429762),
    ];

    #[test]
    fn llr_matches_fastchess_formulas() {
        for &(c, elo0, elo1, logistic, normalized) in FASTCHESS_CASES {
            let counts = Counts::from_pentanomial(c[0], c[1], c[2], c[3], c[4], c[5]);
            for (model, expected) in [
                (EloModel::Logistic, logistic),
                (EloModel::Normalized, normalized),
            ] {
                let sprt = Sprt::new(elo0, elo1, 0.05, 0.05, model).unwrap();
                let llr = sprt.llr(&counts);
                assert!(
                    (llr - expected).abs() < 1e-6,
                    "{c:?} {elo0}..{elo1} {model:?}: {llr} instead of {expected}"
                );
            }
        }
    }

    #[test]
    fn bounds_are_walds() {
        let sprt = Sprt::new(0.0, 5.0, 0.05, 0.05, EloModel::Normalized).unwrap();
        // fastchess prints (-2.94, 2.94) for alpha = beta = 0.05.
        assert!((sprt.lower_bound() + 2.944438979).abs() < 1e-8);
        assert!((sprt.upper_bound() - 2.944438979).abs() < 1e-8);
        assert_eq!(sprt.verdict(3.0), Verdict::H1);
        assert_eq!(sprt.verdict(-3.0), Verdict::H0);
        assert_eq!(sprt.verdict(0.0), Verdict::Undecided);
        assert!(Sprt::new(5.0, 0.0, 0.05, 0.05, EloModel::Logistic).is_err());
        assert!(Sprt::new(0.0, 5.0, 0.6, 0.5, EloModel::Logistic).is_err());
    }

    #[test]
    fn paired_differences_count_on_nine_points() {
        let mut counts = Counts::new(Unit::PairedDifference);
        counts.add_difference((1.0, 1.0), (0.0, 0.0)).unwrap();
        counts.add_difference((0.5, 0.0), (0.5, 0.0)).unwrap();
        counts.add_difference((0.0, 0.0), (1.0, 0.5)).unwrap();
        assert_eq!(counts.counts(), &[0, 1, 0, 0, 1, 0, 0, 0, 1]);
        counts.add_difference((0.0, 0.0), (0.5, 0.0)).unwrap();
        assert_eq!(counts.counts(), &[0, 1, 0, 1, 1, 0, 0, 0, 1]);
        assert!(counts.add_pair(1.0, 0.0).is_err());
        assert!(counts.add_difference((0.3, 0.0), (0.0, 0.0)).is_err());
        // Symmetric differences (mean one half): the data sit at H0 = 0, so the evidence for
        // H1 = 40 is negative.
        let sprt = Sprt::new(0.0, 40.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        assert!(sprt.llr(&counts) < 0.0);
    }

    /// Draws `n` pentanomial pairs where each game is won with `win`, drawn with `draw`.
    fn pair(rng: &mut StdRng, win: f64, draw: f64) -> (f64, f64) {
        let mut game = || {
            let u: f64 = rng.random();
            if u < win {
                1.0
            } else if u < win + draw {
                0.5
            } else {
                0.0
            }
        };
        (game(), game())
    }

    /// Runs `experiments` SPRTs to a decision (or 5,000 pairs) and returns the rate of H1.
    fn h1_rate(sprt: &Sprt, win: f64, draw: f64, experiments: usize, seed: u64) -> f64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut h1 = 0;
        for _ in 0..experiments {
            let mut counts = Counts::new(Unit::Pair);
            for _ in 0..5000 {
                let (a, b) = pair(&mut rng, win, draw);
                counts.add_pair(a, b).unwrap();
                match sprt.verdict(sprt.llr(&counts)) {
                    Verdict::H1 => {
                        h1 += 1;
                        break;
                    }
                    Verdict::H0 => break,
                    Verdict::Undecided => {}
                }
            }
        }
        h1 as f64 / experiments as f64
    }

    /// 500 simulated experiments per case, no HTTP: with identical arms the test accepts H1 at
    /// most at about alpha; with the variant better by elo1 it accepts H1 at least at about
    /// 1 - beta. The slack is three binomial standard errors (about 3 points at 500 runs); the
    /// rates observed are printed (`cargo test --lib sprt -- --nocapture`).
    #[test]
    fn simulated_error_rates_hold() {
        let (alpha, beta) = (0.05, 0.05);
        let sprt = Sprt::new(0.0, 100.0, alpha, beta, EloModel::Logistic).unwrap();
        let draw = 0.2;
        let null = h1_rate(&sprt, (1.0 - draw) / 2.0, draw, 500, 1);
        // Better by elo1: expected score L(100) with the same draw rate.
        let win = logistic_score(100.0) - draw / 2.0;
        let better = h1_rate(&sprt, win, draw, 500, 2);
        println!("identical arms: H1 in {null:.3} of 500; better by elo1: H1 in {better:.3}");
        let slack = 3.0 * (alpha * (1.0 - alpha) / 500.0).sqrt();
        assert!(null <= alpha + slack, "false H1 rate {null}");
        assert!(better >= 1.0 - beta - slack, "power {better}");
    }

    #[test]
    fn average_sample_number_is_symmetric_and_shrinks_with_the_difference() {
        let sprt = Sprt::new(0.0, 40.0, 0.05, 0.05, EloModel::Logistic).unwrap();
        let at0 = average_sample_number(&sprt, Unit::Pair, 0.0, 0.1).unwrap();
        let at40 = average_sample_number(&sprt, Unit::Pair, 40.0, 0.1).unwrap();
        let at20 = average_sample_number(&sprt, Unit::Pair, 20.0, 0.1).unwrap();
        let at100 = average_sample_number(&sprt, Unit::Pair, 100.0, 0.1).unwrap();
        // At the hypotheses the exit chances are alpha and 1 - beta (Wald).
        assert!((at0.p_h1 - 0.05).abs() < 0.01, "{at0:?}");
        assert!((at40.p_h1 - 0.95).abs() < 0.01, "{at40:?}");
        assert!((at20.p_h1 - 0.5).abs() < 0.02, "{at20:?}");
        assert!(at20.units > at40.units && at40.units > at100.units);
    }

    #[test]
    fn holm_adjusts_step_down() {
        let adjusted = holm(&[0.01, 0.04, 0.03]);
        assert_eq!(adjusted, vec![0.03, 0.06, 0.06]);
        assert_eq!(holm_alpha(0.05, 4, 0), 0.0125);
        assert_eq!(holm_alpha(0.05, 4, 3), 0.05);
    }

    #[test]
    fn elo_difference_has_an_interval() {
        let counts = Counts::from_pentanomial(5, 10, 10, 20, 30, 25);
        let d = elo_difference(&counts).unwrap();
        assert!(d.low < d.elo && d.elo < d.high && d.elo > 0.0, "{d:?}");
        assert!(p_value_better(&counts) < 0.01);
        assert!(erfc(0.0) - 1.0 < 1e-7 && (erfc(1.0) - 0.157299207).abs() < 1e-6);
    }

    #[test]
    fn units_without_spread_give_the_sign_test_not_certainty() {
        // Five pairs, every one won: as likely as five heads in five fair tosses.
        let won = Counts::from_pentanomial(0, 0, 0, 0, 0, 5);
        assert_eq!(p_value_better(&won), 1.0 / 32.0);
        let drawn = Counts::from_pentanomial(0, 0, 0, 7, 0, 0);
        assert_eq!(p_value_better(&drawn), 1.0);
        let d = elo_difference(&drawn).unwrap();
        assert_eq!((d.elo, d.low, d.high), (0.0, 0.0, 0.0));
    }

    /// Every figure the experiment prints under fastchess's or Wald's name, against
    /// `tests/reference/sprt.py` run live on random counts (pairs and paired differences, both
    /// models): the LLR, both bounds, normalised Elo with its error, logistic Elo with its ends.
    #[test]
    fn figures_match_the_python_reference() {
        let test = "sprt figures against tests/reference/sprt.py";
        let mut rng = StdRng::seed_from_u64(38);
        let mut cases = Vec::new();
        for i in 0..48 {
            let unit = if i % 2 == 0 {
                Unit::Pair
            } else {
                Unit::PairedDifference
            };
            let counts: Vec<u64> = (0..unit.outcomes())
                .map(|_| {
                    if rng.random::<f64>() < 0.15 {
                        0
                    } else {
                        rng.random_range(1..40)
                    }
                })
                .collect();
            let model = if i % 4 < 2 {
                EloModel::Normalized
            } else {
                EloModel::Logistic
            };
            let elo0 = [-5.0, 0.0, 0.0, 10.0][i % 4];
            let elo1 = elo0 + [2.0, 5.0, 40.0, 150.0][(i / 4) % 4];
            let alpha = [0.05, 0.025, 0.0166, 0.01][(i / 3) % 4];
            cases.push((
                Counts { unit, counts },
                Sprt::new(elo0, elo1, alpha, 0.1, model).unwrap(),
            ));
        }
        let input: Vec<serde_json::Value> = cases
            .iter()
            .map(|(c, s)| {
                serde_json::json!({"counts": c.counts(), "elo0": s.elo0, "elo1": s.elo1,
                    "alpha": s.alpha, "beta": s.beta, "model": s.model.name()})
            })
            .collect();
        let Some(reference) = super::super::reference::run(test, "sprt.py", &input.into()) else {
            return;
        };
        let reference = reference.as_array().expect("a list of results").clone();
        for ((counts, sprt), r) in cases.iter().zip(&reference) {
            let what = format!("{:?} {sprt:?}", counts.counts());
            let close = |ours: f64, key: &str, tolerance: f64| {
                let theirs = r[key].as_f64().unwrap_or_else(|| panic!("{key} in {r}"));
                assert!(
                    (ours - theirs).abs() <= tolerance * (1.0 + theirs.abs()),
                    "{what}: {key} {ours} vs {theirs}"
                );
            };
            close(sprt.llr(counts), "llr", 1e-6);
            close(sprt.lower_bound(), "lower", 1e-12);
            close(sprt.upper_bound(), "upper", 1e-12);
            let e = elo_difference(counts).unwrap();
            close(e.nelo, "nelo", 1e-9);
            close(e.nelo_error, "nelo_error", 1e-9);
            if r.get("p_better").is_some() {
                // Numerical Recipes' erfc: relative error below 1.2e-7.
                close(p_value_better(counts), "p_better", 1e-6);
            }
            if r.get("elo").is_some() {
                close(e.elo, "elo", 1e-9);
                close(e.low, "elo_low", 1e-9);
                close(e.high, "elo_high", 1e-9);
            }
        }
    }

    /// Holm's adjusted p-values from the definition: sorted ascending, the j-th smallest
    /// (1-based) is `min(1, (m − j + 1) p_(j))`, then made non-decreasing along the order (the
    /// step-down rejects H_(j) only if every smaller one is rejected); here for random inputs.
    #[test]
    fn holm_matches_its_definition_on_random_p_values() {
        let mut rng = StdRng::seed_from_u64(38);
        for _ in 0..200 {
            let m = rng.random_range(1..7);
            let p: Vec<f64> = (0..m).map(|_| rng.random::<f64>().powi(3)).collect();
            let adjusted = holm(&p);
            for i in 0..m {
                // Definition: the largest scaled value over every p at most p_i in the order.
                let rank = |k: usize| {
                    (0..m)
                        .filter(|&j| p[j] < p[k] || (p[j] == p[k] && j < k))
                        .count()
                };
                let expected = (0..m)
                    .filter(|&k| rank(k) <= rank(i))
                    .map(|k| ((m - rank(k)) as f64 * p[k]).min(1.0))
                    .fold(0.0, f64::max);
                assert!(
                    (adjusted[i] - expected).abs() < 1e-12,
                    "{p:?}: {adjusted:?}"
                );
            }
        }
    }
}
