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
        sprt::{self, Counts, EloDifference, EloModel, Sprt, Unit, Verdict},
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
    pub fn units_per_cell(&self) -> u32 {
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
    /// The Elo difference with its 95 % interval, once there is a unit.
    pub elo: Option<EloDifference>,
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

    // Each arm's units in cell order, up to the first cell not finished, its cells, and the
    // units set aside because they ran under older scripts. An arm's evidence is one version of
    // the scripts: the newest its games started under (see `set_aside` in [`ArmStatus`]).
    let mut evidence: Vec<(Vec<Counts>, u32, u64)> = Vec::new();
    for arm in design.arms() {
        let current = newest.get(arm).map(|n| n.2);
        let mut steps = Vec::new();
        let mut counts = Counts::new(unit);
        let mut cells = 0;
        let mut set_aside = 0;
        let mut complete = true;
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
            for opponent in &opponents {
                if !complete {
                    break;
                }
                let Some(a) = pair(cell, arm, opponent) else {
                    complete = false;
                    break;
                };
                if design.opponents.is_empty() {
                    if !under(cell, arm, opponent, current) {
                        old += 1;
                        continue;
                    }
                    counts.add_pair(a.0, a.1)?;
                } else {
                    let Some(b) = pair(cell, &design.baseline, opponent) else {
                        complete = false;
                        break;
                    };
                    if !under(cell, arm, opponent, current)
                        || !under(cell, &design.baseline, opponent, current)
                    {
                        old += 1;
                        continue;
                    }
                    counts.add_difference(a, b)?;
                }
                steps.push(counts.clone());
            }
            set_aside += old;
            // A cell wholly from older scripts does not count toward the cap.
            if old < opponents.len() as u64 {
                cells += 1;
            }
        }
        evidence.push((steps, cells, set_aside));
    }

    // Sequential Holm: rerun the variants' tests until the number of H1s is stable.
    let family = design.variants.len();
    let mut accepted = 0;
    let mut arms;
    loop {
        arms = Vec::new();
        for (i, arm) in design.arms().into_iter().enumerate() {
            let null = i >= family;
            let (steps, cells, set_aside) = &evidence[i];
            let alpha = sprt.map(|s| {
                if null {
                    s.alpha
                } else {
                    sprt::holm_alpha(s.alpha, family, accepted)
                }
            });
            let mut used = steps.len();
            let mut verdict = Verdict::Undecided;
            let mut path = Vec::new();
            if let (Some(s), Some(alpha)) = (sprt, alpha) {
                let test = s.with_alpha(alpha);
                for (k, counts) in steps.iter().enumerate() {
                    let llr = test.llr(counts);
                    path.push(llr);
                    verdict = test.verdict(llr);
                    if verdict != Verdict::Undecided {
                        used = k + 1;
                        break;
                    }
                }
            }
            let counts = steps
                .get(used.wrapping_sub(1))
                .cloned()
                .unwrap_or_else(|| Counts::new(unit));
            let test = sprt.zip(alpha).map(|(s, a)| s.with_alpha(a));
            arms.push(ArmStatus {
                variant: arm.to_string(),
                null,
                pairs: counts.total(),
                counts: counts.counts().to_vec(),
                llr: test.map(|t| t.llr(&counts)),
                lower_bound: test.map(|t| t.lower_bound()),
                upper_bound: test.map(|t| t.upper_bound()),
                alpha,
                verdict,
                llr_path: path,
                elo: sprt::elo_difference(&counts).ok(),
                p_holm: None,
                cells: *cells,
                set_aside: *set_aside,
                active: verdict == Verdict::Undecided && cells * design.units_per_cell() < cap,
            });
        }
        let now = arms[..family]
            .iter()
            .filter(|a| a.verdict == Verdict::H1)
            .count();
        if now == accepted || sprt.is_none() {
            break;
        }
        accepted = now;
    }
    if sprt.is_none() {
        let p: Vec<f64> = evidence[..family]
            .iter()
            .map(|(steps, _, _)| steps.last().map_or(1.0, sprt::p_value_better))
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

impl ArmStatus {
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
        if let Some(e) = self.elo.filter(|e| e.elo.is_finite()) {
            match interval(&e) {
                Some((low, high)) => {
                    line += &format!(
                        "; Elo {} [{}, {}]",
                        signed(e.elo),
                        signed(low),
                        signed(high)
                    )
                }
                None => {
                    line += &format!(
                        "; Elo {} (no interval: every pair scored alike)",
                        signed(e.elo)
                    )
                }
            }
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
/// `elo_high`, `p_holm`, and for each of [`METRICS`] the paired difference against the baseline
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
            num(a.elo.map(|e| e.elo), 1),
            num(a.elo.as_ref().and_then(interval).map(|(low, _)| low), 1),
            num(a.elo.as_ref().and_then(interval).map(|(_, high)| high), 1),
            num(a.p_holm, 4),
        ];
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
pub fn design_of(state: &FormatState) -> Option<Design> {
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
pub const METRICS: [(&str, &str); 6] = [
    ("illegal_pct", "illegal moves % of calls"),
    ("parse_error_pct", "parse errors % of calls"),
    ("forfeits_per_game", "forfeits per game"),
    ("tokens_per_move", "tokens per move"),
    ("seconds_per_move", "seconds per move"),
    ("cost_per_game_usd", "cost per game (USD)"),
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
    /// Mean paired difference, arm minus baseline.
    pub mean: f64,
    /// Half width of its 95 % normal interval (NaN over a single unit).
    pub half: f64,
    /// Units the difference is over.
    pub units: usize,
    /// The arm's mean over those units.
    pub arm_mean: f64,
    /// The baseline's mean over those units.
    pub baseline_mean: f64,
}

/// Each arm's [`Difference`]s in [`METRICS`] order (`None` where no unit has the figure).
pub type Differences = BTreeMap<String, Vec<Option<Difference>>>;

/// One player's protocol figures over the games of one unit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Protocol {
    calls: f64,
    illegal: f64,
    parse_errors: f64,
    forfeits: f64,
    tokens: f64,
    latency_ms: f64,
    moves: f64,
    usd: f64,
    games: f64,
}

impl Protocol {
    /// The figures compared, in [`METRICS`] order; `None` where the denominator is zero.
    fn values(&self) -> [Option<f64>; METRICS.len()] {
        let ratio = |a: f64, b: f64| (b > 0.0).then(|| a / b);
        [
            ratio(100.0 * self.illegal, self.calls),
            ratio(100.0 * self.parse_errors, self.calls),
            ratio(self.forfeits, self.games),
            ratio(self.tokens, self.moves),
            ratio(self.latency_ms / 1000.0, self.moves),
            ratio(self.usd, self.games),
        ]
    }
}

/// Mean and 95 % half width of paired differences (normal approximation).
fn mean_interval(d: &[f64]) -> Option<(f64, f64)> {
    if d.is_empty() {
        return None;
    }
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let half = if d.len() > 1 {
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        super::super::rating::Z95 * (var / n).sqrt()
    } else {
        f64::NAN
    };
    Some((mean, half))
}

/// For each arm against the baseline, the paired difference (arm minus baseline) of every figure
/// of [`METRICS`], with its 95 % interval. The pairing is the test's: head to head the arm's and
/// the baseline's figures in the same game pair; against common opponents the arm's pair and the
/// baseline's pair on the same cell and opponent. Figures are per unit, and the interval is the
/// normal one over units (units where a rate has no denominator are left out of that rate).
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
        f.tokens += (c.prompt_tokens.unwrap_or(0) + c.completion_tokens.unwrap_or(0)) as f64;
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
        let mut diffs: Vec<Vec<f64>> = vec![Vec::new(); METRICS.len()];
        let mut sums = vec![(0.0, 0.0); METRICS.len()];
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
                for (i, (x, y)) in a.values().into_iter().zip(b.values()).enumerate() {
                    if let (Some(x), Some(y)) = (x, y) {
                        diffs[i].push(x - y);
                        sums[i].0 += x;
                        sums[i].1 += y;
                    }
                }
            }
        }
        let figures = (0..METRICS.len())
            .map(|i| {
                let (mean, half) = mean_interval(&diffs[i])?;
                let n = diffs[i].len() as f64;
                Some(Difference {
                    mean,
                    half,
                    units: diffs[i].len(),
                    arm_mean: sums[i].0 / n,
                    baseline_mean: sums[i].1 / n,
                })
            })
            .collect();
        out.insert(arm.to_string(), figures);
    }
    out
}

/// The `experiment protocol` table (kind `experiment_protocol`): one row per arm and figure of
/// [`METRICS`] with the paired difference, its 95 % half width, the units it is over and both
/// sides' means, and one note per arm (`listed vs plain: illegal moves -27.0 % ± 4.1; ...`).
pub fn metrics_table(design: &Design, differences: &Differences) -> Table {
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
                " illegal moves {} % ± {};",
                table::signed(d.mean, 1),
                table::fixed(d.half, 1)
            );
        }
        if let Some(d) = figures[1] {
            line += &format!(
                " parse errors {} % ± {};",
                table::signed(d.mean, 1),
                table::fixed(d.half, 1)
            );
        }
        if let Some(d) = figures[4] {
            line += &format!(
                " seconds per move {} ± {};",
                table::signed(d.mean, 2),
                table::fixed(d.half, 2)
            );
        }
        if let Some(d) = figures[5] {
            line += &format!(
                " cost per game {} USD ± {}",
                table::signed(d.mean, 4),
                table::fixed(d.half, 4)
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
        "paired differences (variant minus {}) per game pair with 95 % normal intervals",
        design.baseline
    ));
    t
}

/// Variance of one unit's score assumed by [`plan`]: decisive, independent games (no draws), the
/// largest a game pair's variance can be without correlation; paired differences average two
/// independent pairs.
pub fn assumed_unit_variance(unit: Unit) -> f64 {
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
}
