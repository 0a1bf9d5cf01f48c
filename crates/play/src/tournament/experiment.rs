//! Experiments: "is variant B better than baseline A?" as a tournament with a paired schedule.
//!
//! An experiment's games are laid out in **cells**. Cell `c` is one opening (the book's openings
//! in turn, repeated when the book runs out) played with both colours: round `2c - 1` has the
//! tested player White, round `2c` has it Black. In a cell every undecided arm (each variant, and
//! the null copy, an exact copy of the baseline) plays
//! - **head to head**: one game pair against the baseline, or
//! - **against common opponents**: one game pair against each opponent, and the baseline plays
//!   the same pairs, so the only difference between an arm's games and the baseline's is the arm.
//!
//! The unit of evidence is a finished pair (head to head), or a finished pair of pairs on the same
//! cell and opponent (against opponents: the paired difference `(1 + s_arm - s_baseline) / 2`,
//! see [`crate::rating::sprt`]). Units are counted cell by cell, in cell order, and only up to the
//! first cell that is not finished, so the verdict does not depend on which game finished first:
//! any concurrency, or a resumed run, reaches the same verdict after the same pairs. The test is
//! checked after every unit; once an arm is decided its evidence stops there and the arm gets no
//! new cells. Random movers take their seed from the round (see `pair_seeds` in the settings), so
//! an arm's game and the baseline's game against a random opponent see the same random moves.
//!
//! An arm's evidence is one version of the scripts: after a hot reload that changes them, the
//! arm counts only units whose games all started under the newest scripts and sets the earlier
//! ones aside (see [`ArmStatus::set_aside`]).
//!
//! With several variants the family-wise error is held at alpha by Holm's step-down in its
//! sequential form (Bartroff and Lai): every variant's test starts at `alpha / m`, and each H1
//! accepted relaxes the others to `alpha / (m - accepted)`. The null copy is not in the family:
//! it runs at the plain alpha, so its H1 rate is the false-positive rate of a single arm. In the
//! fixed-size mode (`games = N`) the arms play `N / 2` units each and the result is the Elo
//! difference with its 95 % interval and Holm-adjusted one-sided p-values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::schedule::FormatState;
use crate::{
    llm::PriceTable,
    rating::{
        RatingError,
        sprt::{self, Counts, EloDifference, EloModel, PairScores, Sprt, Unit, Verdict},
    },
    store::{CallSummary, GameRow, GameStatus},
    table::{self, Cell, Table},
};

/// Why an experiment's design or state is unusable.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExperimentError {
    /// The format options do not describe an experiment.
    #[error("experiment: bad design: {0}")]
    Design(String),
    /// The statistics refused their input.
    #[error("experiment: {0}")]
    Rating(#[from] RatingError),
}

/// The SPRT settings of an experiment script (`sprt = { elo0, elo1, alpha, beta, model }`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SprtSpec {
    /// Elo under H0 (default 0).
    #[serde(default)]
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False-positive rate (default 0.05).
    #[serde(default = "default_error")]
    pub alpha: f64,
    /// False-negative rate (default 0.05).
    #[serde(default = "default_error")]
    pub beta: f64,
    /// `"normalized"` (default, as fastchess) or `"logistic"`.
    #[serde(default = "default_model")]
    pub model: String,
}

fn default_error() -> f64 {
    0.05
}

fn default_model() -> String {
    "normalized".into()
}

impl SprtSpec {
    /// The test these settings describe.
    ///
    /// # Errors
    /// An unknown model or settings fastchess would refuse.
    pub fn sprt(&self) -> Result<Sprt, ExperimentError> {
        let model = EloModel::from_name(&self.model).ok_or_else(|| {
            ExperimentError::Design(format!(
                "sprt.model `{}` is not \"normalized\" or \"logistic\"",
                self.model
            ))
        })?;
        Ok(Sprt::new(
            self.elo0, self.elo1, self.alpha, self.beta, model,
        )?)
    }
}

/// What an experiment schedules, as the experiment format receives it in its options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Design {
    /// The baseline player's name.
    pub baseline: String,
    /// The variants' names.
    pub variants: Vec<String>,
    /// The null copy's name, when the experiment plays one.
    #[serde(default)]
    pub null: Option<String>,
    /// Common opponents' names (none: head to head against the baseline).
    #[serde(default)]
    pub opponents: Vec<String>,
    /// The sequential test (or `games` for a fixed size).
    #[serde(default)]
    pub sprt: Option<SprtSpec>,
    /// Fixed size: games per arm (each arm plays `games / 2` units).
    #[serde(default)]
    pub games: Option<u32>,
    /// The cap on units per arm for a sequential test (default 1000).
    #[serde(default)]
    pub max_pairs: Option<u32>,
}

impl Design {
    /// Checks that the design is an experiment one can run.
    ///
    /// # Errors
    /// No variant, both or neither of `sprt` and `games`, an odd or zero `games`, bad SPRT
    /// settings.
    pub fn check(&self) -> Result<(), ExperimentError> {
        let bad = |m: &str| Err(ExperimentError::Design(m.to_string()));
        if self.variants.is_empty() {
            return bad("`variants` is empty: name at least one variant");
        }
        match (&self.sprt, self.games) {
            (Some(_), Some(_)) => return bad("give `sprt` or `games`, not both"),
            (None, None) => return bad("give `sprt = { elo0, elo1, alpha, beta }` or `games = N`"),
            (None, Some(n)) if n == 0 || n % 2 == 1 => {
                return bad("`games` must be even and above 0 (units are game pairs)");
            }
            (Some(s), None) => {
                s.sprt()?;
            }
            _ => {}
        }
        if self.max_pairs == Some(0) {
            return bad("`max_pairs` must be above 0");
        }
        Ok(())
    }

    /// The unit of evidence.
    pub fn unit(&self) -> Unit {
        if self.opponents.is_empty() {
            Unit::Pair
        } else {
            Unit::PairedDifference
        }
    }

    /// The arms tested against the baseline: the variants, then the null copy.
    pub fn arms(&self) -> Vec<&str> {
        self.variants
            .iter()
            .map(String::as_str)
            .chain(self.null.as_deref())
            .collect()
    }

    /// Units per arm at most: `games / 2` in the fixed-size mode, else `max_pairs`.
    pub fn cap(&self) -> u32 {
        match self.games {
            Some(n) => n / 2,
            None => self.max_pairs.unwrap_or(1000),
        }
    }

    /// Units an arm gains per cell.
    pub(crate) fn units_per_cell(&self) -> u32 {
        self.opponents.len().max(1) as u32
    }
}

/// Where one arm stands.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmStatus {
    /// The arm's player name.
    pub variant: String,
    /// Whether this arm is the null copy of the baseline.
    pub null: bool,
    /// Units counted toward the test (game pairs, or pairs of pairs).
    pub pairs: u64,
    /// Counts by outcome (five or nine, lowest score first).
    pub counts: Vec<u64>,
    /// The log-likelihood ratio after `pairs` units (sequential mode).
    pub llr: Option<f64>,
    /// The LLR's lower bound (accept H0).
    pub lower_bound: Option<f64>,
    /// The LLR's upper bound (accept H1).
    pub upper_bound: Option<f64>,
    /// The alpha the arm's test ran at (after Holm).
    pub alpha: Option<f64>,
    /// The verdict (`Undecided` in the fixed-size mode).
    pub verdict: Verdict,
    /// The LLR after each unit, for plots.
    pub llr_path: Vec<f64>,
    /// The Elo difference with its 95 % interval, once there is a unit: logistic (mapped from the
    /// unit's mean score) and normalised (fastchess's, the scale of the default test).
    pub elo: Option<EloDifference>,
    /// The scale of the test, which the arm's headline estimate is on (logistic in the
    /// fixed-size mode).
    pub scale: EloModel,
    /// Against common opponents: the logistic Elo difference through the opponents (see
    /// [`sprt::elo_through_opponents`]), which replaces `elo`'s logistic figure there.
    pub through_opponents: Option<sprt::ThroughOpponents>,
    /// Fixed size: Holm-adjusted one-sided p-value of "no better".
    pub p_holm: Option<f64>,
    /// Cells scheduled for the arm so far under its current scripts (what the cap counts).
    pub cells: u32,
    /// Finished units set aside because they ran under older scripts. A reload that changes the
    /// scripts ends the evidence of every arm still playing: arena cannot tell which files a
    /// variant's prompt, mode or parser read (modules require each other as they run), and
    /// mixing two versions in one arm would test neither. An arm counts only the units whose
    /// games (and, against common opponents, the baseline's paired games) all started under the
    /// newest scripts any of its games started under; older and mixed units are set aside here.
    /// An arm decided before the change gets no new games, so its verdict stands.
    pub set_aside: u64,
    /// Whether the arm gets new cells.
    pub active: bool,
}

/// Where the whole experiment stands.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentStatus {
    /// Every arm, variants first, then the null copy.
    pub arms: Vec<ArmStatus>,
    /// The next cell to schedule (1-based).
    pub next_cell: u32,
    /// Why the experiment is over, or `None` while an arm is active.
    pub finished: Option<String>,
}

/// One game's result seen from the tested player: its score, or `None` while unfinished; void
/// games are not in the state (their replays stand in their place).
type Scores = BTreeMap<(u32, String, String), Option<f64>>;

/// The experiment's status from the games in `state` (the design is `state.options.experiment`).
///
/// # Errors
/// A missing or bad design.
pub fn status(state: &FormatState) -> Result<ExperimentStatus, ExperimentError> {
    let design: Design = state
        .options
        .get("experiment")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| ExperimentError::Design(e.to_string()))?
        .ok_or_else(|| ExperimentError::Design("the format has no `experiment` option".into()))?;
    design.check()?;
    status_of(&design, state)
}

/// [`status`] for a design already read.
///
/// # Errors
/// Bad SPRT settings.
pub fn status_of(
    design: &Design,
    state: &FormatState,
) -> Result<ExperimentStatus, ExperimentError> {
    // Score of `player` against `opponent` in `round`, keyed (round, player, opponent).
    let mut scores: Scores = BTreeMap::new();
    // The scripts each game ran under, keyed as `scores`, and each player's newest scripts.
    let mut scripts: BTreeMap<(u32, String, String), Option<String>> = BTreeMap::new();
    let mut newest: BTreeMap<&str, (u32, u32, &str)> = BTreeMap::new();
    let mut last_round = 0;
    for g in &state.games {
        scripts.insert(
            (g.round, g.white.clone(), g.black.clone()),
            g.script_hash.clone(),
        );
        scripts.insert(
            (g.round, g.black.clone(), g.white.clone()),
            g.script_hash.clone(),
        );
        if let Some(hash) = g.script_hash.as_deref() {
            for player in [&g.white, &g.black] {
                let at = (g.round, g.index, hash);
                let entry = newest.entry(player.as_str()).or_insert(at);
                if (at.0, at.1) > (entry.0, entry.1) {
                    *entry = at;
                }
            }
        }
        last_round = last_round.max(g.round);
        let (white, black) = match g.result.as_deref() {
            Some("1-0") => (Some(1.0), Some(0.0)),
            Some("0-1") => (Some(0.0), Some(1.0)),
            Some("1/2-1/2") => (Some(0.5), Some(0.5)),
            // Void ("*") or unfinished: no score yet.
            _ => (None, None),
        };
        scores.insert((g.round, g.white.clone(), g.black.clone()), white);
        scores.insert((g.round, g.black.clone(), g.white.clone()), black);
    }
    let cells_played = last_round.div_ceil(2);
    let pair = |cell: u32, player: &str, opponent: &str| -> Option<(f64, f64)> {
        let get = |round: u32| {
            scores
                .get(&(round, player.to_string(), opponent.to_string()))
                .copied()
                .flatten()
        };
        Some((get(2 * cell - 1)?, get(2 * cell)?))
    };
    let scheduled = |cell: u32, player: &str, opponent: &str| -> bool {
        scores.contains_key(&(2 * cell - 1, player.to_string(), opponent.to_string()))
    };
    // Whether both games of a pair ran under `current` scripts (a game from before the scripts
    // were stored, with no hash, counts as current).
    let under = |cell: u32, player: &str, opponent: &str, current: Option<&str>| -> bool {
        [2 * cell - 1, 2 * cell].into_iter().all(|round| {
            match scripts
                .get(&(round, player.to_string(), opponent.to_string()))
                .and_then(Option::as_deref)
            {
                Some(hash) => current.is_none_or(|c| c == hash),
                None => true,
            }
        })
    };
    let unit = design.unit();
    let cap = design.cap();
    let sprt = design.sprt.as_ref().map(SprtSpec::sprt).transpose()?;

    // Each arm's units in cell order, up to the first unit not finished, its cells, and the
    // units set aside because they ran under older scripts. An arm's evidence is one version of
    // the scripts: the newest its games started under (see `set_aside` in [`ArmStatus`]).
    let mut evidence: Vec<Evidence> = Vec::new();
    for arm in design.arms() {
        let current = newest.get(arm).map(|n| n.2);
        let mut e = Evidence::default();
        let mut counts = Counts::new(unit);
        for cell in 1..=cells_played {
            let opponents: Vec<&str> = if design.opponents.is_empty() {
                vec![design.baseline.as_str()]
            } else {
                design.opponents.iter().map(String::as_str).collect()
            };
            if !opponents.iter().any(|o| scheduled(cell, arm, o)) {
                continue;
            }
            let mut old = 0;
            for (j, opponent) in opponents.iter().enumerate() {
                if e.blocked.is_some() {
                    break;
                }
                let Some(a) = pair(cell, arm, opponent) else {
                    e.blocked = Some((cell, j));
                    break;
                };
                let scores = if design.opponents.is_empty() {
                    if !under(cell, arm, opponent, current) {
                        old += 1;
                        continue;
                    }
                    counts.add_pair(a.0, a.1)?;
                    PairScores {
                        opponent: j,
                        arm: (a.0 + a.1) / 2.0,
                        baseline: 1.0 - (a.0 + a.1) / 2.0,
                    }
                } else {
                    let Some(b) = pair(cell, &design.baseline, opponent) else {
                        e.blocked = Some((cell, j));
                        break;
                    };
                    if !under(cell, arm, opponent, current)
                        || !under(cell, &design.baseline, opponent, current)
                    {
                        old += 1;
                        continue;
                    }
                    counts.add_difference(a, b)?;
                    PairScores {
                        opponent: j,
                        arm: (a.0 + a.1) / 2.0,
                        baseline: (b.0 + b.1) / 2.0,
                    }
                };
                e.steps.push(Step {
                    at: (cell, j),
                    counts: counts.clone(),
                    scores,
                });
            }
            e.set_aside += old;
            // A cell wholly from older scripts does not count toward the cap.
            if old < opponents.len() as u64 {
                e.cells += 1;
            }
        }
        evidence.push(e);
    }

    // The tests: the variants as one family under sequential Holm, the null copy on its own at
    // the plain alpha, or (fixed size) every unit counted.
    let family = design.variants.len();
    let runs: Vec<Run> = match sprt {
        Some(s) => {
            let mut runs = sequential_holm(s, &evidence[..family]);
            runs.extend(evidence[family..].iter().map(|e| single(s, e)));
            runs
        }
        None => evidence
            .iter()
            .map(|e| Run {
                used: e.steps.len(),
                verdict: Verdict::Undecided,
                alpha: None,
                path: Vec::new(),
            })
            .collect(),
    };
    let mut arms = Vec::new();
    for (i, (arm, run)) in design.arms().into_iter().zip(runs).enumerate() {
        let e = &evidence[i];
        let counted = &e.steps[..run.used];
        let counts = counted
            .last()
            .map_or_else(|| Counts::new(unit), |s| s.counts.clone());
        let test = sprt.zip(run.alpha).map(|(s, a)| s.with_alpha(a));
        let through = (!design.opponents.is_empty())
            .then(|| {
                let units: Vec<PairScores> = counted.iter().map(|s| s.scores).collect();
                sprt::elo_through_opponents(&units).ok()
            })
            .flatten();
        arms.push(ArmStatus {
            variant: arm.to_string(),
            null: i >= family,
            pairs: counts.total(),
            counts: counts.counts().to_vec(),
            llr: test.map(|t| t.llr(&counts)),
            lower_bound: test.map(|t| t.lower_bound()),
            upper_bound: test.map(|t| t.upper_bound()),
            alpha: run.alpha,
            verdict: run.verdict,
            llr_path: run.path,
            elo: sprt::elo_difference(&counts).ok(),
            scale: sprt.map_or(EloModel::Logistic, |s| s.model),
            through_opponents: through,
            p_holm: None,
            cells: e.cells,
            set_aside: e.set_aside,
            active: run.verdict == Verdict::Undecided && e.cells * design.units_per_cell() < cap,
        });
    }
    if sprt.is_none() {
        let p: Vec<f64> = evidence[..family]
            .iter()
            .map(|e| {
                e.steps
                    .last()
                    .map_or(1.0, |s| sprt::p_value_better(&s.counts))
            })
            .collect();
        for (arm, p) in arms.iter_mut().zip(sprt::holm(&p)) {
            arm.p_holm = Some(p);
        }
    }
    let finished = if arms.iter().any(|a| a.active) {
        None
    } else if sprt.is_some() && arms.iter().all(|a| a.verdict != Verdict::Undecided) {
        Some("every arm is decided".to_string())
    } else if sprt.is_some() {
        Some(format!(
            "stopped at the cap of {cap} pairs per arm with arms undecided"
        ))
    } else {
        Some(format!("every arm played its {cap} pairs"))
    };
    Ok(ExperimentStatus {
        arms,
        next_cell: cells_played + 1,
        finished,
    })
}

/// One counted unit of an arm: where it sits on the experiment's clock, the arm's counts up to
/// and including it, and the unit's own pair scores.
#[derive(Debug, Clone)]
struct Step {
    /// (cell, opponent index): units of every arm at the same place are simultaneous.
    at: (u32, usize),
    counts: Counts,
    scores: PairScores,
}

/// One arm's counted units, in cell order.
#[derive(Debug, Clone, Default)]
struct Evidence {
    steps: Vec<Step>,
    cells: u32,
    set_aside: u64,
    /// Where the arm's first unfinished unit sits: its evidence stops there for now.
    blocked: Option<(u32, usize)>,
}

/// Where one arm's test stands: the units it counted (a prefix of its steps), its verdict, the
/// alpha it ran at (the one that decided it, once decided) and its LLR after each unit.
#[derive(Debug, Clone)]
struct Run {
    used: usize,
    verdict: Verdict,
    alpha: Option<f64>,
    path: Vec<f64>,
}

/// One test on its own at the plain alpha (the null copy): it stops at the first bound reached.
fn single(s: Sprt, e: &Evidence) -> Run {
    let mut run = Run {
        used: 0,
        verdict: Verdict::Undecided,
        alpha: Some(s.alpha),
        path: Vec::new(),
    };
    for step in &e.steps {
        let llr = s.llr(&step.counts);
        run.path.push(llr);
        run.used += 1;
        run.verdict = s.verdict(llr);
        if run.verdict != Verdict::Undecided {
            break;
        }
    }
    run
}

/// The variants' tests as one family under Holm's step-down in its sequential form (Bartroff
/// and Lai): the clock is the experiment's units in cell order; at each place every undecided
/// arm with a unit there takes it; then, while the undecided arm of largest LLR reaches the upper
/// bound at `alpha / (m - accepted)`, it accepts H1 at that alpha and the others relax; then any
/// undecided arm at or below its lower bound (at the alpha then in force) accepts H0. A decided
/// arm keeps its pairs, LLR and alpha for good. The family only moves as far as every undecided
/// arm's evidence reaches: an arm whose next unit is unfinished holds the others, since its
/// verdict there could change their alphas.
fn sequential_holm(s: Sprt, family: &[Evidence]) -> Vec<Run> {
    let m = family.len();
    let mut accepted = 0;
    let level = |accepted: usize| sprt::holm_alpha(s.alpha, m, accepted);
    let mut runs: Vec<Run> = family
        .iter()
        .map(|_| Run {
            used: 0,
            verdict: Verdict::Undecided,
            alpha: Some(level(0)),
            path: Vec::new(),
        })
        .collect();
    let clock: std::collections::BTreeSet<(u32, usize)> = family
        .iter()
        .flat_map(|e| e.steps.iter().map(|s| s.at))
        .collect();
    for at in clock {
        let undecided = |runs: &[Run], i: usize| runs[i].verdict == Verdict::Undecided;
        if (0..m).any(|i| undecided(&runs, i) && family[i].blocked.is_some_and(|b| b <= at)) {
            break;
        }
        for (i, e) in family.iter().enumerate() {
            let run = &mut runs[i];
            if run.verdict != Verdict::Undecided {
                continue;
            }
            if let Some(step) = e.steps.get(run.used).filter(|step| step.at == at) {
                run.path.push(s.llr(&step.counts));
                run.used += 1;
            }
        }
        // Step-down: one H1 at a time, the strongest first, each at its own Holm level.
        loop {
            let test = s.with_alpha(level(accepted));
            let best = (0..m)
                .filter(|&i| undecided(&runs, i))
                .filter_map(|i| Some((i, *runs[i].path.last()?)))
                .filter(|&(_, llr)| llr >= test.upper_bound())
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
            let Some((i, _)) = best else { break };
            runs[i].verdict = Verdict::H1;
            runs[i].alpha = Some(test.alpha);
            accepted += 1;
        }
        let test = s.with_alpha(level(accepted));
        for run in runs.iter_mut().filter(|r| r.verdict == Verdict::Undecided) {
            run.alpha = Some(test.alpha);
            if run
                .path
                .last()
                .is_some_and(|&llr| llr <= test.lower_bound())
            {
                run.verdict = Verdict::H0;
            }
        }
    }
    runs
}

impl ArmStatus {
    /// The logistic Elo difference and its 95 % interval (`None` where it has no width):
    /// through the opponents against common opponents, else from the unit's mean score. `None`
    /// without a finite estimate.
    pub(crate) fn logistic_estimate(&self) -> Option<(f64, Option<(f64, f64)>)> {
        if let Some(t) = self.through_opponents {
            let range = (t.high > t.low).then_some((t.low, t.high));
            return t.elo.is_finite().then_some((t.elo, range));
        }
        let e = self.elo?;
        e.elo.is_finite().then(|| (e.elo, interval(&e)))
    }

    /// The normalised Elo difference (fastchess's: the unit's t-value times `800 / ln 10`, over
    /// `sqrt 2` for a pair) and its 95 % interval, `nelo ± 1.96 SE` as fastchess prints it.
    pub(crate) fn normalized_estimate(&self) -> Option<(f64, Option<(f64, f64)>)> {
        let e = self.elo?;
        let range = (e.nelo_error > 0.0).then_some((e.nelo - e.nelo_error, e.nelo + e.nelo_error));
        e.nelo.is_finite().then_some((e.nelo, range))
    }

    /// The estimate on the test's own scale ([`ArmStatus::scale`]).
    pub fn estimate(&self) -> Option<(f64, Option<(f64, f64)>)> {
        match self.scale {
            EloModel::Normalized => self.normalized_estimate(),
            EloModel::Logistic => self.logistic_estimate(),
        }
    }
    /// One line for the terminal: `listed vs plain: H1 (better) after 40 pairs, LLR 2.97 of
    /// bound 2.94`.
    pub fn summary(&self, baseline: &str) -> String {
        let mut line = format!("{} vs {baseline}: ", self.variant);
        match (self.llr, self.lower_bound, self.upper_bound) {
            (Some(llr), Some(lower), Some(upper)) => {
                let (what, bound) = match self.verdict {
                    Verdict::H1 => ("H1 (better)", upper),
                    Verdict::H0 => ("H0 (not better)", lower),
                    Verdict::Undecided if llr >= 0.0 => ("undecided", upper),
                    Verdict::Undecided => ("undecided", lower),
                };
                line += &format!(
                    "{what} after {} pairs, LLR {} of bound {}",
                    self.pairs,
                    table::fixed(llr, 2),
                    table::fixed(bound, 2)
                );
            }
            _ => line += &format!("{} pairs", self.pairs),
        }
        let logistic_name = if self.through_opponents.is_some() {
            "logistic Elo through the opponents"
        } else {
            "logistic Elo"
        };
        let logistic = self.logistic_estimate().map(|(elo, range)| match range {
            Some((low, high)) => format!("{} [{}, {}]", signed(elo), signed(low), signed(high)),
            None => signed(elo),
        });
        let normalized = self.normalized_estimate().map(|(elo, range)| match range {
            Some((low, high)) => format!("{elo:+.1} ± {:.1}", (high - low) / 2.0),
            None => format!("{elo:+.1}"),
        });
        let no_spread = self.normalized_estimate().is_some_and(|(_, r)| r.is_none());
        let (first, second) = match self.scale {
            EloModel::Normalized => (
                normalized.map(|n| format!("normalised Elo {n}")),
                logistic.map(|l| format!("{logistic_name} {l}")),
            ),
            EloModel::Logistic => (
                logistic.map(|l| {
                    if self.through_opponents.is_some() {
                        format!("Elo through the opponents {l}")
                    } else {
                        format!("Elo {l}")
                    }
                }),
                normalized.map(|n| format!("normalised Elo {n}")),
            ),
        };
        match (first, second) {
            (Some(first), Some(second)) => line += &format!("; {first} ({second})"),
            (Some(only), None) | (None, Some(only)) => line += &format!("; {only}"),
            (None, None) => {}
        }
        if no_spread && self.pairs > 0 {
            line += " (no interval: every pair scored alike)";
        }
        if let Some(p) = self.p_holm {
            line += &format!(", Holm p = {p:.3}");
        }
        if self.set_aside > 0 {
            line += &format!(
                "; evidence restarted after a script change ({} earlier pairs set aside)",
                self.set_aside
            );
        }
        if self.null {
            line += " (null copy: the noise floor)";
        }
        line
    }
}

/// The ends of an Elo estimate's 95 % interval, or `None` when it has no width: every unit
/// scored alike, and a sample without spread says nothing about how far the truth may lie.
fn interval(e: &EloDifference) -> Option<(f64, f64)> {
    (e.high > e.low).then_some((e.low, e.high))
}

/// An Elo figure with its sign, rounded; never `-0`.
fn signed(elo: f64) -> String {
    let rounded = elo.round();
    format!("{:+.0}", if rounded == 0.0 { 0.0 } else { rounded })
}

/// The experiment's table for the leaderboard, the report and the end of a run (kind
/// `experiment`): one row per arm with the columns `variant` (the arm's name), `arm`
/// (`variant`, or `null_copy` for the exact copy of the baseline), `verdict` (`H0`, `H1` or
/// `undecided`), `pairs`, `llr`, `lower_bound`, `upper_bound`, `alpha`, `elo`, `elo_low`,
/// `elo_high` (on the test's scale), `p_holm`, `elo_scale` (`normalized` or `logistic`: the
/// scale of `elo`), `logistic_elo`, `logistic_elo_low`, `logistic_elo_high`, `normalized_elo`,
/// `normalized_elo_low`, `normalized_elo_high`, and for each of [`METRICS`] the difference against the baseline
/// and its 95 % half width (`illegal_pct_diff`, `illegal_pct_ci95`, ...). The differences need
/// the stored calls: without them (`differences` is `None`, as inside the format script) their
/// cells are empty. The summary lines are the notes.
pub fn table(
    design: &Design,
    status: &ExperimentStatus,
    differences: Option<&Differences>,
) -> Table {
    let mut columns: Vec<String> = [
        "variant",
        "arm",
        "verdict",
        "pairs",
        "llr",
        "lower_bound",
        "upper_bound",
        "alpha",
        "elo",
        "elo_low",
        "elo_high",
        "p_holm",
        "elo_scale",
        "logistic_elo",
        "logistic_elo_low",
        "logistic_elo_high",
        "normalized_elo",
        "normalized_elo_low",
        "normalized_elo_high",
    ]
    .map(String::from)
    .to_vec();
    for (key, _) in METRICS {
        columns.push(format!("{key}_diff"));
        columns.push(format!("{key}_ci95"));
    }
    let labels: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new("experiment", &labels).of_kind("experiment");
    // No finite value (an Elo at a score of 0 or 1, an interval of one unit) shows as empty,
    // and as null in JSON.
    let num = |v: Option<f64>, d: usize| {
        v.filter(|v| v.is_finite())
            .map_or(Cell::Empty, |v| Cell::Num(v, d))
    };
    for a in &status.arms {
        let mut row = vec![
            a.variant.clone().into(),
            (if a.null { "null_copy" } else { "variant" }).into(),
            a.verdict.name().into(),
            (a.pairs as u32).into(),
            num(a.llr, 3),
            num(a.lower_bound, 3),
            num(a.upper_bound, 3),
            num(a.alpha, 4),
        ];
        let estimate = |e: Option<(f64, Option<(f64, f64)>)>| {
            [
                num(e.map(|e| e.0), 1),
                num(e.and_then(|e| e.1).map(|r| r.0), 1),
                num(e.and_then(|e| e.1).map(|r| r.1), 1),
            ]
        };
        row.extend(estimate(a.estimate()));
        row.push(num(a.p_holm, 4));
        row.push(a.scale.name().into());
        row.extend(estimate(a.logistic_estimate()));
        row.extend(estimate(a.normalized_estimate()));
        let arm = differences.and_then(|d| d.get(&a.variant));
        for i in 0..METRICS.len() {
            let d = arm.and_then(|m| m.get(i).copied().flatten());
            let places = metric_places(i);
            row.push(num(d.map(|d| d.mean), places));
            row.push(num(d.map(|d| d.half), places));
        }
        t.rows.push(row);
    }
    for a in &status.arms {
        t.notes.push(a.summary(&design.baseline));
    }
    t.notes.push(match &status.finished {
        Some(why) => format!("experiment over: {why}"),
        None => "experiment running".to_string(),
    });
    t
}

/// The design in `state.options.experiment`, when the state is an experiment's.
pub(crate) fn design_of(state: &FormatState) -> Option<Design> {
    serde_json::from_value(state.options.get("experiment")?.clone()).ok()
}

/// Call outcomes counted as illegal moves (as the standings count them).
const ILLEGAL: [&str; 3] = ["illegal", "ambiguous", "wrong_move"];
/// Call outcomes counted as parse errors (as the standings count them).
const PARSE_ERRORS: [&str; 3] = ["no_move_found", "unparseable", "wrong_action"];
/// Terminations counted as forfeits of the loser (as the standings count them).
const FORFEITS: [&str; 5] = [
    "forfeit",
    "too_many_wrong_actions",
    "max_turns",
    "context_exceeded",
    "request_rejected",
];

/// The protocol figures compared between each arm and the baseline, in order: a stable
/// snake_case key (the experiment table's columns are `<key>_diff` and `<key>_ci95`) and a label
/// for people. Seconds per move add up the latency of every call made for a move (retries and
/// re-asks included): what the arm makes a player wait (for a player that votes, every sample's,
/// though they run at once). The rates are over the calls that decided an attempt: a vote's
/// unplayed samples (outcome `sample`) are left out, so one vote counts as one attempt.
///
/// Replies cut off at the token limit (outcome `cut_off`) are their own figure, not parse errors,
/// and completion tokens per move say what the arm's writing costs apart from its prompt.
pub const METRICS: [(&str, &str); 8] = [
    ("illegal_pct", "illegal moves % of calls"),
    ("parse_error_pct", "parse errors % of calls"),
    ("forfeits_per_game", "forfeits per game"),
    ("tokens_per_move", "tokens per move"),
    ("seconds_per_move", "seconds per move"),
    ("cost_per_game_usd", "cost per game (USD)"),
    ("cut_off_pct", "replies cut off % of calls"),
    ("completion_tokens_per_move", "completion tokens per move"),
];

/// Decimals shown for metric `i` of [`METRICS`].
fn metric_places(i: usize) -> usize {
    if METRICS[i].0 == "cost_per_game_usd" {
        6
    } else {
        2
    }
}

/// One protocol figure of one arm against the baseline, over the units both have it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// The arm's pooled rate minus the baseline's.
    pub mean: f64,
    /// Half width of its 95 % interval (delta method over paired units; NaN over a single unit).
    pub half: f64,
    /// Paired units the rates are pooled over.
    pub units: usize,
    /// The arm's pooled rate over those units.
    pub arm_mean: f64,
    /// The baseline's pooled rate over those units.
    pub baseline_mean: f64,
}

/// Each arm's [`Difference`]s in [`METRICS`] order (`None` where no unit has the figure).
pub(crate) type Differences = BTreeMap<String, Vec<Option<Difference>>>;

/// One player's protocol figures over the games of one unit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Protocol {
    calls: f64,
    illegal: f64,
    parse_errors: f64,
    forfeits: f64,
    tokens: f64,
    cut_offs: f64,
    completion_tokens: f64,
    latency_ms: f64,
    moves: f64,
    usd: f64,
    games: f64,
}

impl Protocol {
    /// The figures compared, in [`METRICS`] order, as numerator and denominator: each figure is
    /// a rate, pooled over units by summing both.
    fn parts(&self) -> [(f64, f64); METRICS.len()] {
        [
            (100.0 * self.illegal, self.calls),
            (100.0 * self.parse_errors, self.calls),
            (self.forfeits, self.games),
            (self.tokens, self.moves),
            (self.latency_ms / 1000.0, self.moves),
            (self.usd, self.games),
            (100.0 * self.cut_offs, self.calls),
            (self.completion_tokens, self.moves),
        ]
    }
}

/// One paired unit of one rate: the arm's numerator and denominator, then the baseline's.
type RateUnit = (f64, f64, f64, f64);

/// The difference of two pooled rates over paired units (the ratio estimator: the arm's
/// numerators summed over its denominators summed, minus the baseline's), with the half width
/// of its 95 % interval by the delta method over the units, pairing kept: unit `u` contributes
/// `z_u = (a_u − R_a c_u) / c̄ − (b_u − R_b d_u) / d̄` and the variance of the difference is
/// `Σ z_u² / (n (n − 1))`. `None` when a side has no denominator at all.
fn pooled_difference(units: &[RateUnit]) -> Option<Difference> {
    let n = units.len() as f64;
    let sum = |f: fn(&RateUnit) -> f64| units.iter().map(f).sum::<f64>();
    let (num_a, den_a, num_b, den_b) = (sum(|u| u.0), sum(|u| u.1), sum(|u| u.2), sum(|u| u.3));
    if den_a <= 0.0 || den_b <= 0.0 {
        return None;
    }
    let (rate_a, rate_b) = (num_a / den_a, num_b / den_b);
    let half = if units.len() > 1 {
        let (mean_a, mean_b) = (den_a / n, den_b / n);
        let squares: f64 = units
            .iter()
            .map(|u| ((u.0 - rate_a * u.1) / mean_a - (u.2 - rate_b * u.3) / mean_b).powi(2))
            .sum();
        super::super::rating::Z95 * (squares / (n * (n - 1.0))).sqrt()
    } else {
        f64::NAN
    };
    Some(Difference {
        mean: rate_a - rate_b,
        half,
        units: units.len(),
        arm_mean: rate_a,
        baseline_mean: rate_b,
    })
}

/// For each arm against the baseline, the difference (arm minus baseline) of every figure of
/// [`METRICS`], with its 95 % interval. Each figure is a pooled rate over the finished units both
/// sides played (all the arm's illegal moves over all its calls, not a mean of per-pair rates, so
/// a short forfeited game weighs by its calls); the interval is the ratio estimator's, by the
/// delta method over paired units (see [`pooled_difference`]). The pairing is the test's: head
/// to head the arm's and the baseline's figures in the same game pair; against common opponents
/// the arm's pair and the baseline's pair on the same cell and opponent.
pub fn differences(
    design: &Design,
    games: &[&GameRow],
    calls: &[CallSummary],
    prices: &PriceTable,
) -> Differences {
    // Figures by (cell, player, opponent).
    let mut by_game: BTreeMap<i64, (u32, String, String)> = BTreeMap::new();
    let mut figures: BTreeMap<(u32, String, String), Protocol> = BTreeMap::new();
    for g in games.iter().filter(|g| g.status == GameStatus::Finished) {
        let cell = g.round.div_ceil(2);
        by_game.insert(g.id, (cell, g.white.clone(), g.black.clone()));
        let forfeit = g
            .termination
            .as_deref()
            .is_some_and(|t| FORFEITS.contains(&t));
        for (me, other, lost) in [
            (&g.white, &g.black, g.result.as_deref() == Some("0-1")),
            (&g.black, &g.white, g.result.as_deref() == Some("1-0")),
        ] {
            let f = figures
                .entry((cell, me.clone(), other.clone()))
                .or_default();
            f.games += 1.0;
            if forfeit && lost {
                f.forfeits += 1.0;
            }
        }
    }
    let mut plies: BTreeMap<(i64, String), std::collections::BTreeSet<u32>> = BTreeMap::new();
    for c in calls {
        let Some((cell, white, black)) = by_game.get(&c.game_id) else {
            continue;
        };
        let other = if &c.player == white { black } else { white };
        let f = figures
            .entry((*cell, c.player.clone(), other.clone()))
            .or_default();
        let outcome = c.outcome.as_deref().unwrap_or_default();
        // A vote is one attempt: its unplayed samples are calls but not in the rates' base.
        if outcome != crate::store::SAMPLE_OUTCOME {
            f.calls += 1.0;
        }
        if ILLEGAL.contains(&outcome) {
            f.illegal += 1.0;
        }
        if PARSE_ERRORS.contains(&outcome) {
            f.parse_errors += 1.0;
        }
        if outcome == crate::store::CUT_OFF_OUTCOME {
            f.cut_offs += 1.0;
        }
        f.tokens += (c.prompt_tokens.unwrap_or(0) + c.completion_tokens.unwrap_or(0)) as f64;
        f.completion_tokens += c.completion_tokens.unwrap_or(0) as f64;
        f.latency_ms += c.latency_ms as f64;
        f.usd += c.cost(prices).usd.unwrap_or(0.0);
        if plies
            .entry((c.game_id, c.player.clone()))
            .or_default()
            .insert(c.ply)
        {
            f.moves += 1.0;
        }
    }
    let last_cell = figures.keys().map(|k| k.0).max().unwrap_or(0);
    let mut out = Differences::new();
    for arm in design.arms() {
        let mut units: Vec<Vec<RateUnit>> = vec![Vec::new(); METRICS.len()];
        for cell in 1..=last_cell {
            let opponents: Vec<&str> = if design.opponents.is_empty() {
                vec![design.baseline.as_str()]
            } else {
                design.opponents.iter().map(String::as_str).collect()
            };
            for o in opponents {
                let key = |p: &str, q: &str| (cell, p.to_string(), q.to_string());
                let Some(a) = figures.get(&key(arm, o)) else {
                    continue;
                };
                let b = if design.opponents.is_empty() {
                    figures.get(&key(&design.baseline, arm))
                } else {
                    figures.get(&key(&design.baseline, o))
                };
                let Some(b) = b else { continue };
                if a.games < 2.0 || b.games < 2.0 {
                    continue; // the pair is not finished
                }
                for (i, (x, y)) in a.parts().into_iter().zip(b.parts()).enumerate() {
                    units[i].push((x.0, x.1, y.0, y.1));
                }
            }
        }
        let figures = units.iter().map(|u| pooled_difference(u)).collect();
        out.insert(arm.to_string(), figures);
    }
    out
}

/// The `experiment protocol` table (kind `experiment_protocol`): one row per arm and figure of
/// ` ± half` to `places` decimals, or, over a single game pair (no interval), what says so.
fn margin(half: f64, places: usize) -> String {
    if half.is_finite() {
        format!(" ± {}", table::fixed(half, places))
    } else {
        " (no interval from one pair)".to_owned()
    }
}

/// [`METRICS`] with the paired difference, its 95 % half width, the units it is over and both
/// sides' means, and one note per arm (`listed vs plain: illegal moves -27.0 % ± 4.1; ...`).
pub(crate) fn metrics_table(design: &Design, differences: &Differences) -> Table {
    let mut t = Table::new(
        "experiment protocol",
        &[
            "variant",
            "metric",
            "difference",
            "ci95",
            "units",
            "variant_mean",
            "baseline_mean",
        ],
    )
    .of_kind("experiment_protocol");
    let mut notes = Vec::new();
    for arm in design.arms() {
        let Some(figures) = differences.get(arm) else {
            continue;
        };
        let mut line = format!("{arm} vs {}:", design.baseline);
        if let Some(d) = figures[0] {
            line += &format!(
                " illegal moves {} %{};",
                table::signed(d.mean, 1),
                margin(d.half, 1)
            );
        }
        if let Some(d) = figures[1] {
            line += &format!(
                " parse errors {} %{};",
                table::signed(d.mean, 1),
                margin(d.half, 1)
            );
        }
        if let Some(d) = figures[4] {
            line += &format!(
                " seconds per move {}{};",
                table::signed(d.mean, 2),
                margin(d.half, 2)
            );
        }
        if let Some(d) = figures[5] {
            line += &format!(
                " cost per game {} USD{}",
                table::signed(d.mean, 4),
                margin(d.half, 4)
            );
        }
        notes.push(line.trim_end_matches(';').to_string());
        for (i, (_, label)) in METRICS.iter().enumerate() {
            let Some(d) = figures[i] else {
                continue;
            };
            let places = metric_places(i);
            let num = |v: f64| {
                if v.is_finite() {
                    Cell::Num(v, places)
                } else {
                    Cell::Empty
                }
            };
            t.rows.push(vec![
                arm.into(),
                (*label).into(),
                num(d.mean),
                num(d.half),
                d.units.into(),
                num(d.arm_mean),
                num(d.baseline_mean),
            ]);
        }
    }
    t.notes = notes;
    t.notes.push(format!(
        "differences of pooled rates (variant minus {}) over paired game pairs, with 95 % intervals by the delta method over those pairs",
        design.baseline
    ));
    t
}

/// Variance of one unit's score assumed by [`plan`]: decisive, independent games (no draws), the
/// largest a game pair's variance can be without correlation; paired differences average two
/// independent pairs.
pub(crate) fn assumed_unit_variance(unit: Unit) -> f64 {
    match unit {
        Unit::Pair => 0.125,
        Unit::PairedDifference => 0.0625,
    }
}

/// The expected length of an experiment's test at one true difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanRow {
    /// The true Elo difference (in the test's model).
    pub true_elo: f64,
    /// Expected units per arm to a decision (capped at `max_pairs`).
    pub pairs: f64,
    /// Chance of H1.
    pub p_h1: f64,
    /// Expected games of the whole experiment, if every arm had this difference.
    pub games: f64,
}

/// `--dry-run`'s view of an experiment: the SPRT's average sample number at `elo0`, halfway,
/// `elo1` and twice `elo1`, under [`assumed_unit_variance`]; empty in the fixed-size mode.
///
/// # Errors
/// Bad SPRT settings.
pub fn plan(design: &Design) -> Result<Vec<PlanRow>, ExperimentError> {
    let Some(spec) = &design.sprt else {
        return Ok(Vec::new());
    };
    let test = spec.sprt()?;
    let unit = design.unit();
    let arms = design.arms().len() as f64;
    // Games per unit of one arm, plus the baseline's share against common opponents.
    let games_per_unit = if design.opponents.is_empty() {
        2.0 * arms
    } else {
        2.0 * arms + 2.0
    };
    [
        test.elo0,
        (test.elo0 + test.elo1) / 2.0,
        test.elo1,
        2.0 * test.elo1,
    ]
    .into_iter()
    .map(|elo| {
        let asn = sprt::average_sample_number(&test, unit, elo, assumed_unit_variance(unit))?;
        let pairs = asn.units.min(f64::from(design.cap()));
        Ok(PlanRow {
            true_elo: elo,
            pairs,
            p_h1: asn.p_h1,
            games: pairs * games_per_unit,
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn elo_figures_never_read_minus_zero_and_a_zero_width_interval_is_not_shown() {
        assert_eq!(
            (signed(-0.3), signed(0.0), signed(-4.6), signed(12.4)),
            ("+0".into(), "+0".into(), "-5".into(), "+12".into())
        );
        let drawn = sprt::Counts::from_pentanomial(0, 0, 0, 7, 0, 0);
        let e = sprt::elo_difference(&drawn).unwrap();
        assert_eq!(interval(&e), None);
        let mixed = sprt::Counts::from_pentanomial(1, 2, 3, 4, 5, 6);
        let e = sprt::elo_difference(&mixed).unwrap();
        assert!(interval(&e).is_some_and(|(low, high)| low < e.elo && e.elo < high));
    }

    use super::*;
    use crate::tournament::schedule::FormatGame;

    fn design(opponents: &[&str]) -> Design {
        Design {
            baseline: "plain".into(),
            variants: vec!["listed".into()],
            null: Some("plain-null".into()),
            opponents: opponents.iter().map(|s| s.to_string()).collect(),
            sprt: Some(SprtSpec {
                elo0: 0.0,
                elo1: 200.0,
                alpha: 0.05,
                beta: 0.05,
                model: "logistic".into(),
            }),
            games: None,
            max_pairs: Some(50),
        }
    }

    fn state(design: &Design, games: Vec<FormatGame>) -> FormatState {
        let mut options = serde_json::Map::new();
        options.insert("experiment".into(), serde_json::to_value(design).unwrap());
        FormatState {
            players: vec![],
            ratings: BTreeMap::new(),
            games,
            games_per_pair: 2,
            openings: 0,
            seed: 0,
            options,
            analysis: None,
            spend: None,
            untimed: Vec::new(),
        }
    }

    fn game(round: u32, white: &str, black: &str, result: Option<&str>) -> FormatGame {
        FormatGame {
            index: 0,
            round,
            white: white.into(),
            black: black.into(),
            result: result.map(String::from),
            script_hash: None,
        }
    }

    /// Cells where `listed` wins both games against the baseline and the null copy draws both.
    fn head_to_head(cells: u32) -> Vec<FormatGame> {
        let mut games = Vec::new();
        for c in 1..=cells {
            games.push(game(2 * c - 1, "listed", "plain", Some("1-0")));
            games.push(game(2 * c, "plain", "listed", Some("0-1")));
            games.push(game(2 * c - 1, "plain-null", "plain", Some("1/2-1/2")));
            games.push(game(2 * c, "plain", "plain-null", Some("1/2-1/2")));
        }
        games
    }

    #[test]
    fn a_clear_winner_reaches_h1_and_stops_there() {
        let d = design(&[]);
        let s = status(&state(&d, head_to_head(30))).unwrap();
        let listed = &s.arms[0];
        assert_eq!(listed.verdict, Verdict::H1, "{listed:?}");
        assert!(listed.pairs < 30 && !listed.active);
        assert!(listed.llr.unwrap() >= listed.upper_bound.unwrap());
        assert_eq!(listed.llr_path.len() as u64, listed.pairs);
        let null = &s.arms[1];
        assert!(null.null && null.verdict != Verdict::H1, "{null:?}");
        assert!(
            listed
                .summary("plain")
                .starts_with("listed vs plain: H1 (better) after")
        );
    }

    #[test]
    fn a_script_change_sets_the_earlier_pairs_aside() {
        let d = design(&[]);
        let mut games = head_to_head(5);
        // Cells 1 to 3 ran under scripts `a`, then a reload: cells 4 and 5 under `b`, where
        // listed only draws.
        for g in &mut games {
            let late = g.round > 6;
            g.script_hash = Some(if late { "b" } else { "a" }.into());
            if late && (g.white == "listed" || g.black == "listed") {
                g.result = Some("1/2-1/2".into());
            }
        }
        let s = status(&state(&d, games.clone())).unwrap();
        let listed = &s.arms[0];
        assert_eq!((listed.pairs, listed.set_aside), (2, 3), "{listed:?}");
        assert_eq!(listed.counts, vec![0, 0, 2, 0, 0]);
        assert_eq!(listed.verdict, Verdict::Undecided);
        assert!(
            listed
                .summary("plain")
                .contains("evidence restarted after a script change (3 earlier pairs set aside)"),
            "{}",
            listed.summary("plain")
        );
        // A cell half under each version counts for neither.
        games[12].script_hash = Some("a".into());
        let s = status(&state(&d, games.clone())).unwrap();
        assert_eq!((s.arms[0].pairs, s.arms[0].set_aside), (1, 4));
        // The same scripts throughout: nothing is set aside.
        for g in &mut games {
            g.script_hash = Some("a".into());
        }
        let s = status(&state(&d, games)).unwrap();
        assert_eq!(s.arms[0].set_aside, 0);
        assert_eq!(s.arms[0].pairs, 5);
    }

    #[test]
    fn an_unfinished_cell_ends_the_counted_evidence() {
        let d = design(&[]);
        let mut games = head_to_head(2);
        games[0].result = None; // cell 1 unfinished: nothing counts yet
        let s = status(&state(&d, games)).unwrap();
        assert_eq!(s.arms[0].pairs, 0);
        assert_eq!(s.arms[0].cells, 2);
        assert_eq!(s.next_cell, 3);
        assert!(s.finished.is_none());
    }

    #[test]
    fn common_opponents_pair_the_arm_with_the_baseline() {
        let d = design(&["rnd"]);
        let mut games = Vec::new();
        for c in 1..=3 {
            for p in ["listed", "plain", "plain-null"] {
                let won = p == "listed";
                games.push(game(
                    2 * c - 1,
                    p,
                    "rnd",
                    Some(if won { "1-0" } else { "0-1" }),
                ));
                games.push(game(2 * c, "rnd", p, Some(if won { "0-1" } else { "1-0" })));
            }
        }
        let s = status(&state(&d, games)).unwrap();
        // listed scored 1 where plain scored 0: the top outcome of nine, three times.
        assert_eq!(s.arms[0].counts, vec![0, 0, 0, 0, 0, 0, 0, 0, 3]);
        // The null copy matched the baseline: the middle outcome.
        assert_eq!(s.arms[1].counts, vec![0, 0, 0, 0, 3, 0, 0, 0, 0]);
    }

    #[test]
    fn fixed_size_stops_at_its_games_and_reports_elo() {
        let mut d = design(&[]);
        d.sprt = None;
        d.games = Some(10);
        let s = status(&state(&d, head_to_head(5))).unwrap();
        assert_eq!(s.arms[0].pairs, 5);
        assert!(s.finished.unwrap().contains("5 pairs"));
        assert!(s.arms[0].p_holm.unwrap() < 0.05);
        assert!(s.arms[0].elo.unwrap().elo > 0.0);
        d.games = Some(3);
        assert!(d.check().is_err());
        assert!(plan(&d).unwrap().is_empty());
    }

    #[test]
    fn the_plan_needs_fewer_pairs_for_larger_differences() {
        let rows = plan(&design(&[])).unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows[0].p_h1 < 0.1 && rows[2].p_h1 > 0.9, "{rows:?}");
        assert!(
            rows[3].pairs < rows[2].pairs && rows[2].pairs <= 50.0,
            "{rows:?}"
        );
    }

    // ---- Independent recomputations (issue 38): each figure by a second route. ----

    use rand::{RngExt, SeedableRng, rngs::StdRng};

    /// A game score drawn with `win` and `draw` chances.
    fn draw_score(rng: &mut StdRng, win: f64, draw: f64) -> f64 {
        let u: f64 = rng.random();
        if u < win {
            1.0
        } else if u < win + draw {
            0.5
        } else {
            0.0
        }
    }

    /// The result string of a game from White's score.
    fn result_of(white: f64) -> &'static str {
        match white {
            1.0 => "1-0",
            0.0 => "0-1",
            _ => "1/2-1/2",
        }
    }

    /// Head-to-head games of `arms` (name, win chance, draw chance) against `plain` over `cells`
    /// cells, with each arm's pair scores per cell as the arm saw them.
    fn head_to_head_games(
        arms: &[(&str, f64, f64)],
        cells: u32,
        seed: u64,
    ) -> (Vec<FormatGame>, Vec<Vec<(f64, f64)>>) {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut games = Vec::new();
        let mut pairs = vec![Vec::new(); arms.len()];
        for c in 1..=cells {
            for (i, &(name, win, draw)) in arms.iter().enumerate() {
                let first = draw_score(&mut rng, win, draw);
                let second = draw_score(&mut rng, win, draw);
                games.push(game(2 * c - 1, name, "plain", Some(result_of(first))));
                games.push(game(2 * c, "plain", name, Some(result_of(1.0 - second))));
                pairs[i].push((first, second));
            }
        }
        (games, pairs)
    }

    /// The pentanomial counts of the first `n` pairs, counted here from the scores (the
    /// bucket of a pair is its half points), not by [`Counts::add_pair`].
    fn pentanomial(pairs: &[(f64, f64)], n: usize) -> Counts {
        let mut buckets = [0u64; 5];
        for (a, b) in &pairs[..n] {
            buckets[((a + b) * 2.0).round() as usize] += 1;
        }
        // LL, LD, (WL + DD), WD, WW: the middle bucket goes in as WL.
        Counts::from_pentanomial(
            buckets[0], buckets[1], buckets[2], 0, buckets[3], buckets[4],
        )
    }

    /// Bartroff and Lai's sequential Holm procedure, written from its definition rather than
    /// from `sequential_holm`: `m` sequential tests share alpha. At each stage every hypothesis
    /// still open observes its statistic; the open hypotheses are ordered by statistic, largest
    /// first, and the first is rejected if it reaches the boundary of level `alpha / (m - j)`,
    /// `j` the rejections so far; rejecting relaxes the next one's level, and the step-down goes
    /// on within the stage until the largest open statistic falls short. Then the open tests at
    /// or below their acceptance boundary (at the level in force) accept. A stopped test never
    /// moves again. Returns each test's (verdict, stage it stopped at or the last stage seen,
    /// level it ran at).
    fn reference_holm(s: Sprt, paths: &[Vec<f64>]) -> Vec<(Verdict, usize, f64)> {
        let m = paths.len();
        let stages = paths.iter().map(Vec::len).max().unwrap_or(0);
        let mut result = vec![(Verdict::Undecided, 0, s.alpha / m as f64); m];
        let mut open: Vec<usize> = (0..m).collect();
        let mut rejections = 0;
        for n in 1..=stages {
            let level = |j: usize| s.alpha / (m - j) as f64;
            loop {
                let mut ordered = open.clone();
                ordered
                    .sort_by(|&a, &b| paths[b][n - 1].total_cmp(&paths[a][n - 1]).then(a.cmp(&b)));
                let Some(&top) = ordered.first() else { break };
                let a = level(rejections);
                if paths[top][n - 1] < ((1.0 - s.beta) / a).ln() {
                    break;
                }
                result[top] = (Verdict::H1, n, a);
                open.retain(|&i| i != top);
                rejections += 1;
            }
            let a = level(rejections.min(m - 1));
            open.retain(|&i| {
                result[i] = (Verdict::Undecided, n, a);
                if paths[i][n - 1] <= (s.beta / (1.0 - a)).ln() {
                    result[i].0 = Verdict::H0;
                    false
                } else {
                    true
                }
            });
        }
        result
    }

    #[test]
    fn sequential_holm_matches_bartroff_and_lais_procedure() {
        // Three variants of different strength and a null copy, head to head: arms stop at
        // different pairs under different alphas.
        let arms = [
            ("strong", 0.62, 0.2),
            ("middle", 0.5, 0.25),
            ("weak", 0.4, 0.2),
            ("plain-null", 0.4, 0.2),
        ];
        let mut distinct_alphas = 0;
        for model in ["normalized", "logistic"] {
            for seed in 0..25 {
                let mut d = design(&[]);
                d.variants = vec!["strong".into(), "middle".into(), "weak".into()];
                d.sprt = Some(SprtSpec {
                    elo0: 0.0,
                    elo1: 60.0,
                    alpha: 0.05,
                    beta: 0.1,
                    model: model.into(),
                });
                d.max_pairs = Some(200);
                let (games, pairs) = head_to_head_games(&arms, 150, seed);
                let s = status(&state(&d, games)).unwrap();
                let test = d.sprt.as_ref().unwrap().sprt().unwrap();
                let paths: Vec<Vec<f64>> = pairs[..3]
                    .iter()
                    .map(|p| {
                        (1..=p.len())
                            .map(|n| test.llr(&pentanomial(p, n)))
                            .collect()
                    })
                    .collect();
                let expected = reference_holm(test, &paths);
                for (i, (verdict, n, alpha)) in expected.iter().enumerate() {
                    let arm = &s.arms[i];
                    let what = format!("{model} seed {seed} {}: {arm:?}", arm.variant);
                    assert_eq!(arm.verdict, *verdict, "{what}");
                    assert_eq!(arm.pairs, *n as u64, "{what}");
                    assert!((arm.alpha.unwrap() - alpha).abs() < 1e-15, "{what}");
                    assert!((arm.llr.unwrap() - paths[i][n - 1]).abs() < 1e-12, "{what}");
                    assert_eq!(arm.llr_path, paths[i][..*n], "{what}");
                    let bound = if *verdict == Verdict::H0 {
                        arm.lower_bound.unwrap()
                    } else {
                        arm.upper_bound.unwrap()
                    };
                    let wanted = if *verdict == Verdict::H0 {
                        (test.beta / (1.0 - alpha)).ln()
                    } else {
                        ((1.0 - test.beta) / alpha).ln()
                    };
                    assert!((bound - wanted).abs() < 1e-12, "{what}");
                }
                let h1: Vec<f64> = expected
                    .iter()
                    .filter(|e| e.0 == Verdict::H1)
                    .map(|e| e.2)
                    .collect();
                if h1.len() >= 2 && h1.iter().any(|a| *a != h1[0]) {
                    distinct_alphas += 1;
                }
                // The null copy runs alone at the plain alpha.
                let null = &s.arms[3];
                assert_eq!(null.alpha, Some(0.05));
            }
        }
        // The fixtures do exercise the step-down: H1s at different levels.
        assert!(distinct_alphas >= 5, "{distinct_alphas}");
    }

    #[test]
    fn a_decided_arm_keeps_its_pairs_llr_and_alpha_as_others_decide() {
        // Two variants: `early` reaches H0 at alpha / 2 before `late` reaches H1; the H1 relaxes
        // the level, which must not reopen `early` (at alpha its lower bound is lower).
        let mut d = design(&[]);
        d.variants = vec!["early".into(), "late".into()];
        d.null = None;
        for seed in 0..40 {
            let (games, _) =
                head_to_head_games(&[("early", 0.3, 0.2), ("late", 0.6, 0.2)], 60, seed);
            let before = status(&state(&d, games.clone())).unwrap();
            // More cells for `late` only (`early` is decided and gets no new games).
            let (more, _) = head_to_head_games(&[("late", 0.9, 0.0)], 120, seed + 1000);
            let mut all = games;
            all.extend(more.into_iter().filter(|g| g.round > 120));
            let after = status(&state(&d, all)).unwrap();
            let (a, b) = (&before.arms[0], &after.arms[0]);
            if a.verdict != Verdict::Undecided {
                assert_eq!(
                    (a.verdict, a.pairs, a.llr, a.alpha),
                    (b.verdict, b.pairs, b.llr, b.alpha),
                    "seed {seed}"
                );
            }
        }
    }

    /// fastchess's normalised Elo of pentanomial pair scores, from its documented method: the
    /// pair score's mean `s` and variance `v` (over pairs, scores 0, 1/4, ..., 1), normalised
    /// Elo `(s - 1/2) / sqrt(2 v) · 800 / ln 10`, and the error half the distance between the
    /// normalised Elos of `s ± 1.959963984540054 sqrt(v / n)` at the same variance.
    fn fastchess_nelo(pair_scores: &[f64]) -> (f64, f64) {
        let n = pair_scores.len() as f64;
        let s = pair_scores.iter().sum::<f64>() / n;
        let v = pair_scores.iter().map(|x| (x - s).powi(2)).sum::<f64>() / n;
        let nelo = |score: f64| (score - 0.5) / (2.0 * v).sqrt() * (800.0 / 10f64.ln());
        let margin = 1.959963984540054 * (v / n).sqrt();
        (nelo(s), (nelo(s + margin) - nelo(s - margin)) / 2.0)
    }

    /// A test no fixture here decides (bounds near ±21, a tiny elo1): every unit counts.
    fn undecidable(model: &str) -> SprtSpec {
        SprtSpec {
            elo0: 0.0,
            elo1: 2.0,
            alpha: 1e-9,
            beta: 1e-9,
            model: model.into(),
        }
    }

    /// The value of a column in one row of a table.
    fn cell(t: &Table, row: usize, column: &str) -> Cell {
        let i = t.columns.iter().position(|c| c == column).unwrap();
        t.rows[row][i].clone()
    }

    fn value(t: &Table, row: usize, column: &str) -> f64 {
        match cell(t, row, column) {
            Cell::Num(v, _) => v,
            other => panic!("{column}: {other:?}"),
        }
    }

    #[test]
    fn the_normalized_test_prints_fastchess_normalized_elo_and_names_the_logistic_one() {
        let mut d = design(&[]);
        d.sprt = Some(undecidable("normalized"));
        d.max_pairs = Some(1000);
        let (games, pairs) =
            head_to_head_games(&[("listed", 0.55, 0.3), ("plain-null", 0.35, 0.3)], 60, 7);
        let s = status(&state(&d, games)).unwrap();
        let t = table(&d, &s, None);
        for (row, arm) in pairs.iter().enumerate() {
            assert_eq!(s.arms[row].verdict, Verdict::Undecided);
            let scores: Vec<f64> = arm.iter().map(|(a, b)| (a + b) / 2.0).collect();
            let (nelo, error) = fastchess_nelo(&scores);
            let mean = scores.iter().sum::<f64>() / scores.len() as f64;
            let logistic = -400.0 * (1.0 / mean - 1.0).log10();
            let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
            assert!(close(value(&t, row, "elo"), nelo), "{row}: {nelo}");
            assert!(close(value(&t, row, "elo_low"), nelo - error));
            assert!(close(value(&t, row, "elo_high"), nelo + error));
            assert!(close(value(&t, row, "normalized_elo"), nelo));
            assert!(close(value(&t, row, "logistic_elo"), logistic));
            assert_eq!(cell(&t, row, "elo_scale"), Cell::Text("normalized".into()));
            let line = s.arms[row].summary("plain");
            let printed = format!("normalised Elo {nelo:+.1} ± {error:.1}");
            assert!(line.contains(&printed), "{line} lacks {printed}");
            assert!(line.contains("(logistic Elo "), "{line}");
        }
        // The logistic test prints the logistic figure first.
        d.sprt = Some(undecidable("logistic"));
        let (games, _) =
            head_to_head_games(&[("listed", 0.55, 0.3), ("plain-null", 0.35, 0.3)], 60, 7);
        let s = status(&state(&d, games)).unwrap();
        let t = table(&d, &s, None);
        assert_eq!(value(&t, 0, "elo"), value(&t, 0, "logistic_elo"));
        assert_eq!(cell(&t, 0, "elo_scale"), Cell::Text("logistic".into()));
    }

    #[test]
    fn against_common_opponents_the_logistic_elo_goes_through_the_opponents() {
        // Two opponents of different strength; the baseline scores far from one half.
        let mut d = design(&["weak", "strong"]);
        d.sprt = Some(undecidable("logistic"));
        d.max_pairs = Some(1000);
        let chances = |player: &str, opponent: &str| match (player, opponent) {
            ("listed", "weak") => (0.9, 0.05),
            ("listed", _) => (0.3, 0.2),
            ("plain", "weak") => (0.7, 0.1),
            (_, _) => (0.1, 0.2),
        };
        let mut rng = StdRng::seed_from_u64(11);
        let mut games = Vec::new();
        // Pair scores per opponent: (listed's, plain's), one unit per cell.
        let mut units: Vec<Vec<(f64, f64)>> = vec![Vec::new(), Vec::new()];
        for c in 1..=80 {
            for (j, o) in ["weak", "strong"].into_iter().enumerate() {
                let mut score = |p: &str| {
                    let (win, draw) = chances(p, o);
                    let first = draw_score(&mut rng, win, draw);
                    let second = draw_score(&mut rng, win, draw);
                    games.push(game(2 * c - 1, p, o, Some(result_of(first))));
                    games.push(game(2 * c, o, p, Some(result_of(1.0 - second))));
                    (first + second) / 2.0
                };
                let listed = score("listed");
                let plain = score("plain");
                let _ = score("plain-null");
                units[j].push((listed, plain));
            }
        }
        let s = status(&state(&d, games)).unwrap();
        let t = table(&d, &s, None);
        // Route two: each side's mean score against each opponent, the logistic curve's inverse
        // of each, their difference, averaged over the (equally played) opponents.
        let inverse = |p: f64| 400.0 * (p / (1.0 - p)).log10();
        let per_opponent = |u: &Vec<(f64, f64)>| {
            let n = u.len() as f64;
            let sv = u.iter().map(|x| x.0).sum::<f64>() / n;
            let sb = u.iter().map(|x| x.1).sum::<f64>() / n;
            inverse(sv) - inverse(sb)
        };
        let expected = (per_opponent(&units[0]) + per_opponent(&units[1])) / 2.0;
        let printed = value(&t, 0, "logistic_elo");
        assert!((printed - expected).abs() < 1e-9, "{printed} vs {expected}");
        // The former figure, L⁻¹(1/2 + s_variant - s_baseline), is far from it here.
        let all: Vec<(f64, f64)> = units.concat();
        let dv = all.iter().map(|x| x.0 - x.1).sum::<f64>() / all.len() as f64;
        assert!((inverse(0.5 + dv) - expected).abs() > 20.0);
        // Its interval against a paired bootstrap over cells (resampling each opponent's units).
        let mut rng = StdRng::seed_from_u64(3);
        let mut draws = Vec::new();
        for _ in 0..4000 {
            let mut sum = 0.0;
            for u in &units {
                let sample: Vec<(f64, f64)> = (0..u.len())
                    .map(|_| u[rng.random_range(0..u.len())])
                    .collect();
                sum += per_opponent(&sample);
            }
            draws.push(sum / 2.0);
        }
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd = (draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64)
            .sqrt();
        let half = (value(&t, 0, "logistic_elo_high") - value(&t, 0, "logistic_elo_low")) / 2.0;
        assert!(
            (half / (1.96 * sd) - 1.0).abs() < 0.12,
            "delta {half} vs bootstrap {}",
            1.96 * sd
        );
        assert!(
            s.arms[0]
                .summary("plain")
                .contains("; Elo through the opponents +"),
            "{}",
            s.arms[0].summary("plain")
        );
    }

    /// A finished game row for [`differences`].
    fn game_row(id: i64, round: u32, white: &str, black: &str, result: &str) -> GameRow {
        let mut g = crate::store::testing::finished_game(id as u32, white, black, result);
        g.round = round;
        g
    }

    #[test]
    fn a_single_pairs_summary_says_it_has_no_interval_rather_than_nan() {
        let one = Difference {
            mean: -12.5,
            half: f64::NAN,
            units: 1,
            arm_mean: 10.0,
            baseline_mean: 22.5,
        };
        let differences: Differences =
            [("listed".to_string(), vec![Some(one); METRICS.len()])].into();
        let table = metrics_table(&design(&[]), &differences);
        let line = &table.notes[0];
        assert!(
            line.starts_with("listed vs plain: illegal moves -12.5 % (no interval from one pair);"),
            "{line}"
        );
        assert!(
            !table.notes.iter().any(|n| n.contains("NaN")),
            "{:?}",
            table.notes
        );
        assert_eq!(margin(4.06, 1), " ± 4.1");
    }

    #[test]
    fn protocol_rates_are_pooled_over_calls_not_averaged_over_pairs() {
        let mut d = design(&[]);
        d.null = None;
        let mut rng = StdRng::seed_from_u64(5);
        let mut rows = Vec::new();
        let mut calls = Vec::new();
        // Per cell: (listed's illegal, listed's calls, plain's illegal, plain's calls).
        let mut per_cell: Vec<[f64; 4]> = Vec::new();
        let mut id = 0;
        for c in 1..=60u32 {
            let mut tally = [0.0; 4];
            for (round, white, black) in
                [(2 * c - 1, "listed", "plain"), (2 * c, "plain", "listed")]
            {
                id += 1;
                // A short game where the listed player forfeits, or a long one.
                let short = rng.random::<f64>() < 0.3;
                let plies: u32 = if short {
                    3
                } else {
                    40 + rng.random_range(0..40)
                };
                rows.push(game_row(id, round, white, black, "1/2-1/2"));
                for ply in 0..plies {
                    let player = if ply % 2 == 0 { white } else { black };
                    let (rate, k) = if player == "listed" {
                        (if short { 0.9 } else { 0.05 }, 0)
                    } else {
                        (0.3, 2)
                    };
                    let illegal = rng.random::<f64>() < rate;
                    tally[k] += f64::from(u8::from(illegal));
                    tally[k + 1] += 1.0;
                    calls.push(CallSummary {
                        game_id: id,
                        ply,
                        player: player.into(),
                        model: "m".into(),
                        prompt_tokens: Some(100),
                        completion_tokens: Some(10),
                        details: Default::default(),
                        outcome: Some(if illegal { "illegal" } else { "ok" }.into()),
                        latency_ms: 100,
                    });
                }
            }
            per_cell.push(tally);
        }
        let games: Vec<&GameRow> = rows.iter().collect();
        let diff = differences(&d, &games, &calls, &PriceTable::default());
        let illegal = diff["listed"][0].unwrap();
        // Route two: every call of each side, counted straight from the list of calls.
        let rate = |who: &str| {
            let mine: Vec<&CallSummary> = calls.iter().filter(|c| c.player == who).collect();
            let bad = mine
                .iter()
                .filter(|c| c.outcome.as_deref() == Some("illegal"))
                .count();
            100.0 * bad as f64 / mine.len() as f64
        };
        let expected = rate("listed") - rate("plain");
        assert!(
            (illegal.mean - expected).abs() < 1e-9,
            "{} vs pooled {expected}",
            illegal.mean
        );
        assert!((illegal.arm_mean - rate("listed")).abs() < 1e-9);
        assert_eq!(illegal.units, 60);
        // The interval against a bootstrap over game pairs.
        let pooled = |cells: &[[f64; 4]]| {
            let s = |k: usize| cells.iter().map(|c| c[k]).sum::<f64>();
            100.0 * (s(0) / s(1) - s(2) / s(3))
        };
        let mut draws = Vec::new();
        for _ in 0..4000 {
            let sample: Vec<[f64; 4]> = (0..per_cell.len())
                .map(|_| per_cell[rng.random_range(0..per_cell.len())])
                .collect();
            draws.push(pooled(&sample));
        }
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd = (draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64)
            .sqrt();
        assert!(
            (illegal.half / (1.96 * sd) - 1.0).abs() < 0.12,
            "delta {} vs bootstrap {}",
            illegal.half,
            1.96 * sd
        );
    }
}
