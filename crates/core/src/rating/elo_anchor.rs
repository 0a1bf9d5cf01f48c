//! Elo estimated against opponents of known Elo, as LLM Chess does (its "Algorithm 1").
//!
//! Results are grouped in blocks `(R_k, W_k, D_k, L_k)`: games against an opponent rated `R_k`. With
//! `N_k = W_k + D_k + L_k`, `S_k = (W_k + D_k / 2) / N_k` and `E_k(R) = 1 / (1 + 10^((R_k − R) / 400))`,
//! the maximum-likelihood rating solves `Σ N_k (S_k − E_k(R)) = 0`. It is bracketed on
//! `[min R_k − 800, max R_k + 800]`, widened by 800, 1600, ... when the sign does not change, and
//! found with Brent's method. The standard error comes from the Fisher information
//! `I = Σ N_k E_k (1 − E_k) (ln 10 / 400)²`, and the 95% interval is `±1.96 / √I`.
//!
//! Colour: LLM Chess solves as if colour did not matter and then adds a fixed 35 points (its models
//! always play Black; its Random calibration plays White and subtracts 35). Here every block carries
//! its own `color_shift`, the Elo the player gains from its colour in that block (+35 as White, −35
//! as Black with [`WHITE_ADVANTAGE`]), inside `E_k`. With one colour throughout this gives exactly
//! their number; with mixed colours it weighs each game by the colour actually played.
//!
//! An opponent whose Elo is itself an estimate (a calibrated ladder rung) carries its standard error
//! `σ_k` in [`Block::opponent_se`]. The root moves with each opponent's rating by
//! `∂R/∂R_k = w_k / Σ w`, `w_k = N_k E_k (1 − E_k)`, and rungs share their calibration's anchor, so
//! their errors are taken as perfectly correlated: the reported variance is
//! `1 / I + (Σ_k w_k σ_k / Σ w)²`, an upper bound on the true one. With every `σ_k = 0` (hand-set
//! anchors) this is LLM Chess's interval exactly.
//!
//! A perfect or zero score has no finite estimate (LLM Chess reports NaN). Here it yields a
//! one-sided bound instead: the rating at which the observed sweep has probability 2.5%, the end a
//! two-sided 95% interval would have.
//!
//! ```
//! use arena_core::rating::elo_anchor::{self, Block, Color, WHITE_ADVANTAGE};
//!
//! // Three wins in four games against a 1000-rated opponent, as Black.
//! let block = Block::new(1000.0, 3, 0, 1).played_as(Color::Black, WHITE_ADVANTAGE);
//! let estimate = elo_anchor::estimate(&[block]).unwrap();
//! let elo = estimate.elo().unwrap();
//! assert!((elo - (1000.0 + 400.0 * 3f64.log10() + 35.0)).abs() < 1e-6);
//! ```

use std::f64::consts::LN_10;

use super::{
    Z95,
    error::{self, RatingError},
    root,
};

/// LLM Chess's white advantage in Elo points ("White wins about 54% at equal rating").
pub const WHITE_ADVANTAGE: f64 = 35.0;

/// First margin around the opponents' ratings, and the first widening step.
const BRACKET_MARGIN: f64 = 800.0;
/// LLM Chess widens 6 times and then gives up with NaN; we keep going since a root must exist
/// whenever the score is neither perfect nor zero.
const MAX_WIDENINGS: usize = 16;
/// Tail probability of a sweep at the one-sided bound: the end of a two-sided 95% interval.
const SWEEP_TAIL: f64 = 0.025;
/// Root-finding tolerance in Elo points.
const TOLERANCE: f64 = 1e-9;

/// The colour a player had in a block of games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// The player moved first.
    White,
    /// The player moved second.
    Black,
}

impl Color {
    /// The Elo this colour is worth given `white_advantage`: `+adv` as White, `−adv` as Black.
    pub fn shift(self, white_advantage: f64) -> f64 {
        match self {
            Self::White => white_advantage,
            Self::Black => -white_advantage,
        }
    }
}

/// Games against one opponent of known Elo, from the rated player's side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Block {
    /// The opponent's (colour-neutral) Elo, e.g. `125 (level + 1)` for Komodo Dragon levels.
    pub opponent_elo: f64,
    /// Games the rated player won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games the rated player lost.
    pub losses: u32,
    /// Elo the player gained from its colour in these games (0 = ignore colour).
    pub color_shift: f64,
    /// The standard error of `opponent_elo` itself (a calibrated rung's; 0 = known exactly).
    pub opponent_se: f64,
}

impl Block {
    /// A block without colour correction.
    pub fn new(opponent_elo: f64, wins: u32, draws: u32, losses: u32) -> Self {
        Self {
            opponent_elo,
            wins,
            draws,
            losses,
            color_shift: 0.0,
            opponent_se: 0.0,
        }
    }

    /// The same block against an opponent whose Elo has this standard error.
    pub fn with_opponent_se(self, opponent_se: f64) -> Self {
        Self {
            opponent_se,
            ..self
        }
    }

    /// The same block, all played as `color` with the given white advantage.
    pub fn played_as(self, color: Color, white_advantage: f64) -> Self {
        self.with_color_shift(color.shift(white_advantage))
    }

    /// The same block with an explicit colour shift.
    pub fn with_color_shift(self, color_shift: f64) -> Self {
        Self {
            color_shift,
            ..self
        }
    }

    /// Number of games.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Points scored, a draw counting one half.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }

    /// The opponent's rating as seen through the colour shift.
    fn effective_opponent(&self) -> f64 {
        self.opponent_elo - self.color_shift
    }

    /// `log10`-odds exponent `(R_k − shift − R) · ln 10 / 400`, so that `E = 1 / (1 + e^x)`.
    fn exponent(&self, rating: f64) -> f64 {
        (self.effective_opponent() - rating) * LN_10 / 400.0
    }

    fn expected(&self, rating: f64) -> f64 {
        1.0 / (1.0 + self.exponent(rating).exp())
    }
}

/// One game against an opponent of known Elo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnchorGame {
    /// The opponent's Elo.
    pub opponent_elo: f64,
    /// The rated player's colour.
    pub color: Color,
    /// The rated player's score: 1, 0.5 or 0.
    pub score: f64,
    /// The standard error of `opponent_elo` (0 when it is known exactly).
    pub opponent_se: f64,
}

/// Groups single games into blocks per opponent Elo and colour, first appearance first.
///
/// # Errors
/// [`RatingError::InvalidScore`] for a score other than 0, 0.5 or 1; [`RatingError::InvalidValue`]
/// for a non-finite Elo.
pub fn blocks_from_games(
    games: &[AnchorGame],
    white_advantage: f64,
) -> Result<Vec<Block>, RatingError> {
    error::finite("white_advantage", white_advantage)?;
    let mut blocks: Vec<(f64, Color, Block)> = Vec::new();
    for game in games {
        error::finite("opponent_elo", game.opponent_elo)?;
        let at = match blocks
            .iter()
            .position(|(elo, color, _)| *elo == game.opponent_elo && *color == game.color)
        {
            Some(at) => at,
            None => {
                let block = Block::new(game.opponent_elo, 0, 0, 0)
                    .played_as(game.color, white_advantage)
                    .with_opponent_se(game.opponent_se);
                blocks.push((game.opponent_elo, game.color, block));
                blocks.len() - 1
            }
        };
        let block = &mut blocks[at].2;
        match game.score {
            1.0 => block.wins += 1,
            0.5 => block.draws += 1,
            0.0 => block.losses += 1,
            s => return Err(RatingError::InvalidScore(s)),
        }
    }
    Ok(blocks.into_iter().map(|(_, _, block)| block).collect())
}

/// The result of [`estimate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EloEstimate {
    /// A finite maximum-likelihood estimate.
    Point {
        /// The estimated Elo, colour-corrected.
        elo: f64,
        /// Its standard error from the Fisher information.
        se: f64,
    },
    /// Every game won: the rating is at least `lower95` (97.5% one-sided).
    AtLeast {
        /// The lower end of the 95% interval.
        lower95: f64,
    },
    /// Every game lost: the rating is at most `upper95` (97.5% one-sided).
    AtMost {
        /// The upper end of the 95% interval.
        upper95: f64,
    },
}

impl EloEstimate {
    /// The point estimate, if finite.
    pub fn elo(&self) -> Option<f64> {
        match *self {
            Self::Point { elo, .. } => Some(elo),
            _ => None,
        }
    }

    /// The standard error of a point estimate.
    pub fn se(&self) -> Option<f64> {
        match *self {
            Self::Point { se, .. } => Some(se),
            _ => None,
        }
    }

    /// The 95% half-width `1.96 · SE` of a point estimate.
    pub fn margin95(&self) -> Option<f64> {
        self.se().map(|se| Z95 * se)
    }

    /// The lower end of the 95% interval; `None` when the rating may be arbitrarily low.
    pub fn lower95(&self) -> Option<f64> {
        match *self {
            Self::Point { elo, se } => Some(elo - Z95 * se),
            Self::AtLeast { lower95 } => Some(lower95),
            Self::AtMost { .. } => None,
        }
    }

    /// The upper end of the 95% interval; `None` when the rating may be arbitrarily high.
    pub fn upper95(&self) -> Option<f64> {
        match *self {
            Self::Point { elo, se } => Some(elo + Z95 * se),
            Self::AtMost { upper95 } => Some(upper95),
            Self::AtLeast { .. } => None,
        }
    }
}

/// Estimates the rated player's Elo from `blocks`; blocks without games are ignored.
///
/// # Errors
/// [`RatingError::NoGames`] when there is no game at all; [`RatingError::InvalidValue`] for a
/// non-finite Elo or shift; [`RatingError::NoBracket`] if the root cannot be bracketed (only with
/// opponent ratings so extreme that the expectation underflows).
pub fn estimate(blocks: &[Block]) -> Result<EloEstimate, RatingError> {
    let blocks: Vec<Block> = blocks.iter().copied().filter(|b| b.games() > 0).collect();
    for block in &blocks {
        error::finite("opponent_elo", block.opponent_elo)?;
        error::finite("color_shift", block.color_shift)?;
        error::finite("opponent_se", block.opponent_se)?;
    }
    let games: f64 = blocks.iter().map(|b| f64::from(b.games())).sum();
    let points: f64 = blocks.iter().map(Block::points).sum();
    if games == 0.0 {
        return Err(RatingError::NoGames);
    }
    let ln_tail = SWEEP_TAIL.ln();
    if points == games {
        // Sum of log P(win) rises with R; the bound is where the sweep becomes this unlikely.
        let f = |r: f64| {
            blocks
                .iter()
                .map(|b| -f64::from(b.games()) * softplus(b.exponent(r)))
                .sum::<f64>()
                - ln_tail
        };
        return Ok(EloEstimate::AtLeast {
            lower95: solve(f, &blocks)?,
        });
    }
    if points == 0.0 {
        let f = |r: f64| {
            blocks
                .iter()
                .map(|b| -f64::from(b.games()) * softplus(-b.exponent(r)))
                .sum::<f64>()
                - ln_tail
        };
        return Ok(EloEstimate::AtMost {
            upper95: solve(f, &blocks)?,
        });
    }
    let f = |r: f64| {
        blocks
            .iter()
            .map(|b| b.points() - f64::from(b.games()) * b.expected(r))
            .sum::<f64>()
    };
    let elo = solve(f, &blocks)?;
    let q = LN_10 / 400.0;
    let weights: Vec<f64> = blocks
        .iter()
        .map(|b| {
            let e = b.expected(elo);
            f64::from(b.games()) * e * (1.0 - e)
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let information = total * q * q;
    // The opponents' own errors move the root by dR/dR_k = w_k / Σ w (implicit differentiation
    // of the likelihood equation). Calibrated rungs share their anchor, so their errors are
    // taken as perfectly correlated: (Σ_k (w_k / Σ w) σ_k)², an upper bound on that variance.
    let anchors: f64 = blocks
        .iter()
        .zip(&weights)
        .map(|(b, w)| w / total * b.opponent_se)
        .sum();
    Ok(EloEstimate::Point {
        elo,
        se: (1.0 / information + anchors * anchors).sqrt(),
    })
}

/// `ln(1 + e^x)` without overflow, so that log-probabilities of sweeps stay finite.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// Brackets the root of the monotone `f` around the blocks' ratings as LLM Chess does and solves it.
fn solve(f: impl Fn(f64) -> f64, blocks: &[Block]) -> Result<f64, RatingError> {
    let opponents = blocks.iter().map(Block::effective_opponent);
    let low = opponents.clone().fold(f64::INFINITY, f64::min);
    let high = opponents.fold(f64::NEG_INFINITY, f64::max);
    let (mut a, mut b) = (low - BRACKET_MARGIN, high + BRACKET_MARGIN);
    let mut width = BRACKET_MARGIN;
    for _ in 0..=MAX_WIDENINGS {
        if let Some(root) = root::brent(&f, a, b, TOLERANCE) {
            return Ok(root);
        }
        a -= width;
        b += width;
        width *= 2.0;
    }
    Err(RatingError::NoBracket { low: a, high: b })
}

/// LLM Chess's Win/Loss metric with 95% margins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WinLoss {
    /// `(W − L) / N`, in `[−1, 1]`, as in the paper.
    pub raw: f64,
    /// `1.96 · stdev / √N` over per-game values 1, 0, −1.
    pub raw_margin95: f64,
    /// `raw / 2 + 0.5`, in `[0, 1]`, as in the code.
    pub normalised: f64,
    /// `1.96 · stdev / √N` over per-game values 1, 0.5, 0 (sample stdev; 0 for one game).
    pub normalised_margin95: f64,
}

/// Win/Loss of a record.
///
/// # Errors
/// [`RatingError::NoGames`] for an empty record.
pub fn win_loss(wins: u32, draws: u32, losses: u32) -> Result<WinLoss, RatingError> {
    let n = f64::from(wins) + f64::from(draws) + f64::from(losses);
    if n == 0.0 {
        return Err(RatingError::NoGames);
    }
    let (w, d, l) = (f64::from(wins), f64::from(draws), f64::from(losses));
    let mean = (w + 0.5 * d) / n;
    let margin = if n > 1.0 {
        let ss = w * (1.0 - mean).powi(2) + d * (0.5 - mean).powi(2) + l * mean.powi(2);
        Z95 * (ss / (n - 1.0)).sqrt() / n.sqrt()
    } else {
        0.0
    };
    Ok(WinLoss {
        raw: (w - l) / n,
        raw_margin95: 2.0 * margin,
        normalised: mean,
        normalised_margin95: margin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn opponents_errors_widen_the_interval_as_if_correlated() {
        let plain = [Block::new(0.0, 30, 10, 20), Block::new(200.0, 10, 10, 40)];
        let exact = estimate(&plain).unwrap();
        let fuzzy = estimate(&[
            plain[0].with_opponent_se(20.0),
            plain[1].with_opponent_se(40.0),
        ])
        .unwrap();
        assert_eq!(exact.elo(), fuzzy.elo());
        // (Σ w_k σ_k / Σ w)² lies between the independent sum and the largest error squared.
        let extra = fuzzy.se().unwrap().powi(2) - exact.se().unwrap().powi(2);
        assert!(
            extra > 20.0f64.powi(2) && extra < 40.0f64.powi(2),
            "{extra}"
        );
        // A non-finite error is refused.
        assert!(estimate(&[plain[0].with_opponent_se(f64::NAN)]).is_err());
    }

    #[test]
    fn an_even_score_lands_on_the_opponent() {
        let est = estimate(&[Block::new(1200.0, 5, 10, 5)]).unwrap();
        assert!(close(est.elo().unwrap(), 1200.0, 1e-6), "{est:?}");
        // SE = 1 / sqrt(N · 1/4 · q²) for N = 20.
        let q = LN_10 / 400.0;
        assert!(close(
            est.se().unwrap(),
            1.0 / (20.0 * 0.25 * q * q).sqrt(),
            1e-9
        ));
        assert!(close(
            est.margin95().unwrap(),
            1.96 * est.se().unwrap(),
            1e-12
        ));
    }

    #[test]
    fn a_known_score_inverts_the_logistic() {
        let est = estimate(&[Block::new(1000.0, 30, 0, 10)]).unwrap();
        assert!(close(
            est.elo().unwrap(),
            1000.0 + 400.0 * 3f64.log10(),
            1e-6
        ));
        let mirrored = estimate(&[Block::new(1000.0, 10, 0, 30)]).unwrap();
        assert!(close(
            mirrored.elo().unwrap(),
            1000.0 - 400.0 * 3f64.log10(),
            1e-6
        ));
        assert!(close(est.se().unwrap(), mirrored.se().unwrap(), 1e-9));
    }

    #[test]
    fn colour_shifts_match_the_fixed_correction_and_mix_per_game() {
        let blocks = [Block::new(500.0, 4, 3, 13), Block::new(900.0, 1, 2, 17)];
        let plain = estimate(&blocks).unwrap().elo().unwrap();
        let black: Vec<_> = blocks
            .iter()
            .map(|b| b.played_as(Color::Black, WHITE_ADVANTAGE))
            .collect();
        assert!(close(
            estimate(&black).unwrap().elo().unwrap(),
            plain + 35.0,
            1e-6
        ));
        // Single games grouped per colour give the same estimate as hand-made shifted blocks.
        let games: Vec<AnchorGame> = [(Color::White, 1.0), (Color::Black, 0.5)]
            .iter()
            .cycle()
            .take(10)
            .map(|&(color, score)| AnchorGame {
                opponent_elo: 1000.0,
                opponent_se: 0.0,
                color,
                score,
            })
            .collect();
        let mixed = blocks_from_games(&games, WHITE_ADVANTAGE).unwrap();
        assert_eq!(mixed.len(), 2);
        assert_eq!((mixed[0].wins, mixed[1].draws), (5, 5));
        let by_hand = [
            Block::new(1000.0, 5, 0, 0).played_as(Color::White, WHITE_ADVANTAGE),
            Block::new(1000.0, 0, 5, 0).played_as(Color::Black, WHITE_ADVANTAGE),
        ];
        let est = estimate(&mixed).unwrap().elo().unwrap();
        assert!(close(est, estimate(&by_hand).unwrap().elo().unwrap(), 1e-9));
        let unshifted = estimate(&[Block::new(1000.0, 5, 5, 0)])
            .unwrap()
            .elo()
            .unwrap();
        assert!(close(unshifted, 1000.0 + 400.0 * 3f64.log10(), 1e-6));
        assert!((est - unshifted).abs() > 1.0, "{est} {unshifted}");
        let odd = [AnchorGame {
            opponent_se: 0.0,
            opponent_elo: 1000.0,
            color: Color::White,
            score: 0.7,
        }];
        assert_eq!(
            blocks_from_games(&odd, 35.0),
            Err(RatingError::InvalidScore(0.7))
        );
    }

    #[test]
    fn colour_shift_changes_an_asymmetric_mixed_record() {
        // Winning as White only says less than winning as Black only.
        let as_white = estimate(&[Block::new(1000.0, 6, 0, 4).played_as(Color::White, 35.0)]);
        let as_black = estimate(&[Block::new(1000.0, 6, 0, 4).played_as(Color::Black, 35.0)]);
        let (w, b) = (
            as_white.unwrap().elo().unwrap(),
            as_black.unwrap().elo().unwrap(),
        );
        assert!(close(b - w, 70.0, 1e-6), "{w} {b}");
    }

    #[test]
    fn sweeps_give_one_sided_bounds_not_nan() {
        let est = estimate(&[Block::new(1000.0, 10, 0, 0)]).unwrap();
        // P(10 wins) = E^10 = 0.025 at the bound.
        let e = 0.025f64.powf(0.1);
        let expected = 1000.0 + 400.0 * (e / (1.0 - e)).log10();
        match est {
            EloEstimate::AtLeast { lower95 } => assert!(close(lower95, expected, 1e-6)),
            other => panic!("expected a lower bound, got {other:?}"),
        }
        assert_eq!(est.elo(), None);
        assert_eq!(est.upper95(), None);
        let est = estimate(&[Block::new(1000.0, 0, 0, 10)]).unwrap();
        let upper = est.upper95().unwrap();
        assert!(close(upper, 2000.0 - expected, 1e-6), "{upper}");
        assert_eq!(est.lower95(), None);
        // Near-sweeps need the widened bracket but stay finite.
        let est = estimate(&[Block::new(250.0, 100_000, 1, 0)]).unwrap();
        assert!(est.elo().unwrap() > 2000.0 && est.se().unwrap().is_finite());
    }

    #[test]
    fn empty_or_broken_input_is_an_error() {
        assert_eq!(estimate(&[]), Err(RatingError::NoGames));
        assert_eq!(
            estimate(&[Block::new(1000.0, 0, 0, 0)]),
            Err(RatingError::NoGames)
        );
        assert!(matches!(
            estimate(&[Block::new(f64::NAN, 1, 0, 1)]),
            Err(RatingError::InvalidValue { .. })
        ));
    }

    #[test]
    fn win_loss_raw_and_normalised() {
        let wl = win_loss(1, 0, 1).unwrap();
        assert_eq!((wl.raw, wl.normalised), (0.0, 0.5));
        assert!(close(wl.normalised_margin95, 0.98, 1e-12), "{wl:?}");
        assert!(close(wl.raw_margin95, 1.96, 1e-12));
        let wl = win_loss(6, 2, 2).unwrap();
        assert!(close(wl.raw, 0.4, 1e-12) && close(wl.normalised, 0.7, 1e-12));
        // Per-game 1×6, 0.5×2, 0×2 around 0.7: sample variance 1.6 / 9.
        assert!(close(
            wl.normalised_margin95,
            1.96 * (1.6f64 / 9.0).sqrt() / 10f64.sqrt(),
            1e-12
        ));
        assert_eq!(win_loss(1, 0, 0).unwrap().normalised_margin95, 0.0);
        assert_eq!(win_loss(0, 0, 0), Err(RatingError::NoGames));
    }

    /// LLM Chess's Elo and its standard error against `tests/reference/llm_chess_elo.py` (its
    /// Algorithm 1 written from LLM Chess's method, colour added after solving) run live on
    /// random records played as Black, as LLM Chess's models play, and as White.
    #[test]
    fn random_records_match_the_python_reference() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let mut rng = StdRng::seed_from_u64(38);
        for case in 0..30 {
            let color = if case % 2 == 0 {
                Color::Black
            } else {
                Color::White
            };
            let mut raw = Vec::new();
            for _ in 0..rng.random_range(1..5) {
                let level: u32 = rng.random_range(1..6);
                let (w, d, l) = (
                    rng.random_range(0..30u32),
                    rng.random_range(0..10u32),
                    rng.random_range(1..30u32),
                );
                raw.push((125.0 * f64::from(level + 1), w + 1, d, l));
            }
            let blocks: Vec<Block> = raw
                .iter()
                .map(|&(r, w, d, l)| Block::new(r, w, d, l).played_as(color, WHITE_ADVANTAGE))
                .collect();
            let input = serde_json::json!({
                "blocks": raw.iter().map(|&(r, w, d, l)| serde_json::json!([r, w, d, l])).collect::<Vec<_>>(),
                // LLM Chess adds +35 after solving for its models (Black), -35 for Random (White).
                "white_advantage": -color.shift(WHITE_ADVANTAGE),
            });
            let Some(reference) = super::super::reference::run(
                "LLM Chess Elo against tests/reference/llm_chess_elo.py",
                "llm_chess_elo.py",
                &input,
            ) else {
                return;
            };
            let ours = estimate(&blocks).unwrap();
            let (elo, se) = (
                reference["elo"].as_f64().unwrap(),
                reference["se"].as_f64().unwrap(),
            );
            assert!(
                close(ours.elo().unwrap(), elo, 1e-6),
                "{raw:?}: {ours:?} vs {elo}"
            );
            assert!(
                close(ours.se().unwrap(), se, 1e-6),
                "{raw:?}: {ours:?} vs {se}"
            );
        }
    }
}
