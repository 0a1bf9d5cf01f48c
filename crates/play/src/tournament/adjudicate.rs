//! Adjudication by an engine, with cutechess-cli's rules (`-resign` and `-draw`), and the
//! separate verdict on games that reach the move limit.
//!
//! An engine of the tournament's own (`adjudication = { engine = ... }`, its processes leased
//! per game from an [`EnginePool`]) searches the position after every ply, once, within the
//! adjudication's limits. Its score, reported for the side to move, is turned into the score of
//! the side that just moved (the player whose move it judges, as in cutechess, where each
//! engine's own score of its move is used) and fed to an [`Adjudicator`]:
//!
//! - **resign** (`score_cp`, `moves`, `twosided`): a side loses when its score was at or below
//!   `-score_cp` after each of its last `moves` moves; with `twosided`, only when the opponent's
//!   score was also at or above `score_cp` after each of the opponent's last `moves` moves.
//! - **draw** (`after_move`, `score_cp`, `moves`): the game is drawn once at least `after_move`
//!   full moves are on the board (plies from the start position, book plies included, halved)
//!   and the score stayed within `score_cp` of zero for the last `moves` moves of each side,
//!   that is `2 × moves` consecutive plies. A capture or a pawn move starts that count again.
//! - a ply without an evaluation (the engine failed) restarts the draw count and the mover's
//!   counts, as cutechess does for a move that comes with no search.
//!
//! Both are checked after every ply, draw first, and both beat the move limit reached by the same
//! ply (cutechess checks `-maxmoves` last). Book plies are never evaluated. cutechess's trusted
//! mate scores and tablebases are not modelled.
//!
//! The **move-limit verdict** (`move_limit = { score_cp = 200 }`): when a game ends by the move
//! limit, the engine searches the final position and the verdict (White wins when White's score
//! is at least `score_cp`, Black when at most `-score_cp`, else a draw) is stored apart from
//! the result, which it never changes.
//!
//! Hand-written: cutechess's `GameAdjudicator` is C++ and no crate offers these rules.

use std::collections::BTreeMap;

use shakmaty::{Color, Position};
use thiserror::Error;

use super::{
    GameError,
    env::GameEnv,
    players::{SetupProblem, probe_node_limit},
};
pub use crate::spec::adjudication::{
    AdjudicationSpec, DEFAULT_LIMIT_CP, DEFAULT_NODES, DrawRule, MoveLimitRule, ResignRule,
};
use crate::{
    board::{Game, GameEnd, GameResult, Termination},
    engine::{self, EngineError, EngineHandle, EngineLease, EnginePool, EngineSpec, Score},
    spec::{EngineOptionValue, PlayerSpec, TournamentSpec, adjudication::given_limits},
    store::{AdjudicationEvalRecord, Fence, GameRow, LimitVerdictRecord},
};

/// The centipawn value of a mate score (less the moves to mate), far beyond any threshold, so a
/// mate always counts as a decisive score.
pub(crate) const MATE_CP: i32 = 100_000;

impl AdjudicationSpec {
    /// cutechess's rules, ready for one game.
    pub(crate) fn adjudicator(&self) -> Adjudicator {
        Adjudicator::new(self.resign, self.draw)
    }
}

/// The score of the side that just moved, in centipawns, from the engine's score of the position
/// after its move (which UCI reports for the side to move then, the opponent). Mates count as
/// [`MATE_CP`] less the moves to mate.
pub fn mover_cp(after: Score) -> i32 {
    -side_to_move_cp(after)
}

/// A UCI score as centipawns for the side to move, mates as [`MATE_CP`] less the moves to mate.
fn side_to_move_cp(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => MATE_CP - n,
        // Mated in |n| (or already mated, `mate 0`).
        Score::Mate(n) => -(MATE_CP + n),
    }
}

/// One ply as the rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlyEval {
    /// The side that moved.
    pub mover: Color,
    /// Plies on the board after the move, counted from the start position (book plies
    /// included), as cutechess's `plyCount`.
    pub plies: u32,
    /// Whether the move was a capture or a pawn move (the halfmove clock went back to 0).
    pub irreversible: bool,
    /// The mover's score after the move ([`mover_cp`]), or `None` when the engine gave none.
    pub score: Option<i32>,
}

/// What the rules decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// `loser` resigns.
    Resign {
        /// The side that loses.
        loser: Color,
    },
    /// A draw.
    Draw,
}

/// cutechess's `GameAdjudicator` (resign and draw rules) over a game's plies, fed one evaluated
/// ply at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Adjudicator {
    resign: Option<ResignRule>,
    draw: Option<DrawRule>,
    /// Consecutive plies (of either side) within the draw score.
    draw_count: i64,
    /// Per side (White, Black): its consecutive moves at or below the resign score.
    resign_count: [i64; 2],
    /// Per side: its consecutive moves at or above the winning score (two-sided resign).
    win_count: [i64; 2],
}

fn index(color: Color) -> usize {
    match color {
        Color::White => 0,
        Color::Black => 1,
    }
}

impl Adjudicator {
    /// The rules given, with every count at zero.
    pub fn new(resign: Option<ResignRule>, draw: Option<DrawRule>) -> Adjudicator {
        Adjudicator {
            resign,
            draw,
            draw_count: 0,
            resign_count: [0; 2],
            win_count: [0; 2],
        }
    }

    /// Counts one ply and says whether the game is now adjudicated, in cutechess's order: a
    /// capture or pawn move restarts the draw count; a ply without a score restarts the draw
    /// count and the mover's counts; then the draw rule, then the resign rule.
    pub fn add(&mut self, ply: &PlyEval) -> Option<Verdict> {
        let side = index(ply.mover);
        if ply.irreversible {
            self.draw_count = 0;
        }
        let Some(score) = ply.score.map(i64::from) else {
            self.draw_count = 0;
            self.resign_count[side] = 0;
            self.win_count[side] = 0;
            return None;
        };
        if let Some(draw) = self.draw {
            if score.abs() <= draw.score_cp {
                self.draw_count += 1;
            } else {
                self.draw_count = 0;
            }
            if i64::from(ply.plies / 2) >= draw.after_move && self.draw_count >= draw.moves * 2 {
                return Some(Verdict::Draw);
            }
        }
        if let Some(resign) = self.resign {
            if score <= -resign.score_cp {
                self.resign_count[side] += 1;
            } else {
                self.resign_count[side] = 0;
            }
            if score >= resign.score_cp {
                self.win_count[side] += 1;
            } else {
                self.win_count[side] = 0;
            }
            if self.resign_count[side] >= resign.moves
                && (!resign.twosided || self.win_count[1 - side] >= resign.moves)
            {
                return Some(Verdict::Resign { loser: ply.mover });
            }
        }
        None
    }
}

/// The move-limit verdict from White's score of the final position.
pub(crate) fn limit_result(white_cp: i32, threshold_cp: i64) -> GameResult {
    let cp = i64::from(white_cp);
    if cp >= threshold_cp {
        GameResult::WhiteWins
    } else if cp <= -threshold_cp {
        GameResult::BlackWins
    } else {
        GameResult::Draw
    }
}

/// An adjudication engine that cannot be used, found before any game starts.
#[derive(Debug, Error)]
#[error("{at}: adjudication: {problem}")]
pub struct AdjudicationSetupError {
    /// `file:line` of the tournament.
    pub at: String,
    /// What is wrong.
    pub problem: SetupProblem,
}

/// One engine of the adjudication: its processes and the search it runs.
#[derive(Debug)]
struct Judge {
    pool: EnginePool,
    limits: engine::SearchLimits,
}

/// A tournament's adjudication, ready for its games: the engine processes and the rules.
#[derive(Debug)]
pub struct Adjudication {
    spec: AdjudicationSpec,
    judge: Judge,
    /// The move-limit verdict's own engine, when it has one.
    limit_judge: Option<Judge>,
    limit_limits: engine::SearchLimits,
}

/// The engine named `name`: an engine player's settings, or a command; `extra` options after
/// the player's, `Threads` 1 and `Hash` 16 unless one of them set those.
fn judge_spec(
    spec: &TournamentSpec,
    name: &str,
    args: &[String],
    extra: &BTreeMap<String, EngineOptionValue>,
) -> Result<EngineSpec, EngineError> {
    let player = spec.players.iter().find_map(|p| match p {
        PlayerSpec::Engine(e) if e.name == name => Some(e),
        _ => None,
    });
    let (command, args, mut options) = match player {
        Some(e) => (e.command.clone(), e.args.clone(), e.options.clone()),
        None => (name.to_owned(), args.to_vec(), BTreeMap::new()),
    };
    options.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    let located = engine::locate(&command)?;
    let mut engine = EngineSpec::new(
        format!("adjudication ({name})"),
        located.display().to_string(),
    );
    engine.args = args;
    for (option, value) in [("Threads", "1"), ("Hash", "16")] {
        if !options.contains_key(option) {
            engine = engine.option(option, value);
        }
    }
    for (option, value) in &options {
        engine = engine.option(option.clone(), value.to_string());
    }
    Ok(engine)
}

impl Judge {
    async fn prepare(
        engine: EngineSpec,
        limits: engine::SearchLimits,
    ) -> Result<Judge, SetupProblem> {
        let pool = EnginePool::new(engine);
        // One process now: an engine that does not start or ignores its node limit fails the
        // run here, before any game, rather than in every game.
        let lease = pool.lease().await?;
        probe_node_limit(&lease, &limits).await?;
        drop(lease);
        Ok(Judge { pool, limits })
    }
}

impl Adjudication {
    /// The adjudication of `spec`, its engines started and checked; `None` when the tournament
    /// has none.
    ///
    /// # Errors
    /// An engine that cannot be found or started, or ignores its node limit.
    pub async fn prepare(
        spec: &TournamentSpec,
    ) -> Result<Option<Adjudication>, AdjudicationSetupError> {
        let Some(adj) = &spec.settings.adjudication else {
            return Ok(None);
        };
        let fail = |problem: SetupProblem| AdjudicationSetupError {
            at: spec.defined_at.get("").cloned().unwrap_or_default(),
            problem,
        };
        let limits = adj.limits();
        let limit_rule = adj.move_limit.clone();
        let limit_limits = limit_rule
            .as_ref()
            .and_then(|m| given_limits(m.nodes, m.depth, m.movetime_ms))
            .unwrap_or(limits);
        let main_name = adj
            .engine
            .clone()
            .or_else(|| limit_rule.as_ref().and_then(|m| m.engine.clone()))
            .unwrap_or_else(|| "stockfish".to_owned());
        let main =
            judge_spec(spec, &main_name, &adj.args, &adj.options).map_err(|e| fail(e.into()))?;
        let judge = Judge::prepare(main, limits).await.map_err(fail)?;
        let limit_judge = match limit_rule.as_ref().and_then(|m| m.engine.as_deref()) {
            Some(name) if name != main_name => {
                let engine =
                    judge_spec(spec, name, &[], &BTreeMap::new()).map_err(|e| fail(e.into()))?;
                Some(Judge::prepare(engine, limit_limits).await.map_err(fail)?)
            }
            _ => None,
        };
        Ok(Some(Adjudication {
            spec: adj.clone(),
            judge,
            limit_judge,
            limit_limits,
        }))
    }

    /// Stops every engine process.
    pub async fn shutdown(&self) {
        self.judge.pool.shutdown().await;
        if let Some(j) = &self.limit_judge {
            j.pool.shutdown().await;
        }
    }
}

/// One game's adjudication: its engine process and the rules' counts so far.
pub(crate) struct GameAdjudication<'a> {
    adjudication: &'a Adjudication,
    /// The process that evaluates the game's plies (only with a live rule).
    lease: Option<EngineLease>,
    rules: Adjudicator,
    /// Plies of the opening line, which are never evaluated.
    book_plies: u32,
    /// The game's lease: the evaluations and the verdict are written under it, so a worker that
    /// lost the game writes none of them.
    fence: Fence,
}

/// The score and depth of one search of the game's current position.
async fn search(
    engine: &EngineHandle,
    game: &Game,
    limits: &engine::SearchLimits,
) -> Result<(Option<Score>, Option<u32>), EngineError> {
    let start = (!game.starts_from_initial()).then(|| game.start_fen());
    let best = engine
        .best_move(start.as_deref(), game.uci_moves(), limits)
        .await?;
    let info = best.info.unwrap_or_default();
    Ok((info.score, info.depth))
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

fn show_cp(cp: i32) -> String {
    if cp.abs() >= MATE_CP - 1000 {
        let moves = MATE_CP - cp.abs();
        if cp > 0 {
            format!("mate in {moves}")
        } else {
            format!("mated in {moves}")
        }
    } else {
        format!("{cp:+} cp")
    }
}

impl<'a> GameAdjudication<'a> {
    /// The adjudication of the game `row`, whose stored plies `game` holds: with a live rule, a
    /// process is leased and the plies played so far are fed to the rules (their stored
    /// evaluations, or a search for a ply a killed run left without one). Returns the end the
    /// rules reached on those plies, if any (a run killed between a ply and its adjudication).
    ///
    /// # Errors
    /// [`GameError::Engine`] when no process can be started, [`GameError::Store`].
    pub async fn start(
        adjudication: &'a Adjudication,
        env: &GameEnv,
        row: &GameRow,
        game: &Game,
        fence: &Fence,
    ) -> Result<(GameAdjudication<'a>, Option<GameEnd>), GameError> {
        let book_plies = u32::try_from(row.opening_moves.len()).unwrap_or(u32::MAX);
        let mut this = GameAdjudication {
            adjudication,
            lease: None,
            rules: adjudication.spec.adjudicator(),
            book_plies,
            fence: fence.clone(),
        };
        if !adjudication.spec.live() {
            return Ok((this, None));
        }
        let pool = &adjudication.judge.pool;
        let lease = pool.lease().await.map_err(|source| GameError::Engine {
            player: pool.spec().name.clone(),
            source,
        })?;
        this.lease = Some(lease);
        let stored: BTreeMap<u32, AdjudicationEvalRecord> = env
            .store
            .adjudication_evals(row.id)?
            .into_iter()
            .map(|e| (e.ply, e))
            .collect();
        // Replay the game from its start, feeding every played ply.
        let mut replay = Game::new(
            (!game.starts_from_initial())
                .then(|| game.start_fen())
                .as_deref(),
            0,
        )
        .map_err(|e| GameError::Replay {
            game: row.index,
            what: "the start position".into(),
            source: e.into(),
        })?;
        let mut end = None;
        for (ply, uci) in game.uci_moves().iter().enumerate() {
            replay.play_uci(uci).map_err(|e| GameError::Replay {
                game: row.index,
                what: format!("stored ply {ply} (`{uci}`)"),
                source: e.into(),
            })?;
            let ply = u32::try_from(ply).unwrap_or(u32::MAX);
            if ply < book_plies || end.is_some() {
                continue;
            }
            if replay
                .end()
                .is_some_and(|e| e.termination != Termination::MoveLimit)
            {
                break;
            }
            let eval = match stored.get(&ply) {
                Some(e) => e.clone(),
                None => this.evaluate(env, row, &replay).await?,
            };
            end = this.judge(row, &replay, eval.score);
        }
        Ok((this, end))
    }

    /// Evaluates the position after the ply just played and feeds it to the rules; returns the
    /// end they reach, if any. Nothing is evaluated without a live rule, for a book ply, or once
    /// the game ended on the board (a move limit reached by this ply can still be overruled).
    ///
    /// # Errors
    /// [`GameError::Store`]: the evaluation cannot be stored.
    pub(crate) async fn after_ply(
        &mut self,
        env: &GameEnv,
        row: &GameRow,
        game: &Game,
    ) -> Result<Option<GameEnd>, GameError> {
        if self.lease.is_none() || game.ply() <= self.book_plies {
            return Ok(None);
        }
        if game
            .end()
            .is_some_and(|e| e.termination != Termination::MoveLimit)
        {
            return Ok(None);
        }
        let eval = self.evaluate(env, row, game).await?;
        Ok(self.judge(row, game, eval.score))
    }

    /// Searches the game's current position, stores the evaluation, and returns it. A failed
    /// search is stored as no evaluation and logged as an event: it costs no one the game.
    async fn evaluate(
        &self,
        env: &GameEnv,
        row: &GameRow,
        game: &Game,
    ) -> Result<AdjudicationEvalRecord, GameError> {
        let lease = self.lease.as_ref().expect("evaluate needs a live rule");
        let ply = game.ply() - 1;
        let (score, depth) = match search(lease, game, &self.adjudication.judge.limits).await {
            Ok(found) => found,
            Err(e) => {
                let message = format!("no adjudication evaluation after ply {ply}: {e}");
                tracing::warn!(game = row.index, "{message}");
                let _ = env.store.leased(&self.fence).record_event(
                    env.tournament,
                    "warn",
                    "adjudication_engine_failure",
                    &message,
                );
                (None, None)
            }
        };
        let eval = AdjudicationEvalRecord { ply, score, depth };
        env.store
            .leased(&self.fence)
            .record_adjudication_eval(&eval)?;
        Ok(eval)
    }

    /// Feeds the evaluation of `game`'s last ply to the rules.
    fn judge(&mut self, row: &GameRow, game: &Game, score: Option<Score>) -> Option<GameEnd> {
        let mover = game.turn().other();
        let mover_score = score.map(mover_cp);
        let verdict = self.rules.add(&PlyEval {
            mover,
            plies: game.ply(),
            irreversible: game.position().halfmoves() == 0,
            score: mover_score,
        })?;
        let last = mover_score.map(show_cp).unwrap_or_default();
        Some(match verdict {
            Verdict::Resign { loser } => {
                let rule = self.adjudication.spec.resign.expect("a resign verdict");
                let name = match loser {
                    Color::White => &row.white,
                    Color::Black => &row.black,
                };
                let mut reason = format!(
                    "adjudication: `{name}` ({}) resigns: its score was at most -{} cp after each of its last {} moves (last: {last})",
                    color_name(loser),
                    rule.score_cp,
                    rule.moves
                );
                if rule.twosided {
                    reason.push_str(&format!(
                        ", and its opponent's at least +{} cp after each of its last {} moves",
                        rule.score_cp, rule.moves
                    ));
                }
                GameEnd::decided(
                    GameResult::win_for(loser.other()),
                    Termination::AdjudicationResign,
                    Some(reason),
                )
            }
            Verdict::Draw => {
                let rule = self.adjudication.spec.draw.expect("a draw verdict");
                GameEnd::decided(
                    GameResult::Draw,
                    Termination::AdjudicationDraw,
                    Some(format!(
                        "adjudication: draw: both sides' scores within {} cp of zero for their last {} moves each, at move {} (rule from move {})",
                        rule.score_cp,
                        rule.moves,
                        game.ply() / 2,
                        rule.after_move
                    )),
                )
            }
        })
    }

    /// When `end` is the move limit and the tournament asks for the verdict there: searches the
    /// final position and stores what the evaluation says, apart from the result. A failed
    /// search leaves no verdict (logged as an event).
    ///
    /// # Errors
    /// [`GameError::Store`]: the verdict cannot be stored.
    pub(crate) async fn at_end(
        &self,
        env: &GameEnv,
        row: &GameRow,
        game: &Game,
        end: &GameEnd,
    ) -> Result<(), GameError> {
        let Some(rule) = &self.adjudication.spec.move_limit else {
            return Ok(());
        };
        if end.termination != Termination::MoveLimit {
            return Ok(());
        }
        let limits = &self.adjudication.limit_limits;
        let judge = self
            .adjudication
            .limit_judge
            .as_ref()
            .unwrap_or(&self.adjudication.judge);
        let own;
        let engine: &EngineHandle = match (&self.adjudication.limit_judge, &self.lease) {
            (None, Some(lease)) => lease,
            _ => {
                own = judge
                    .pool
                    .lease()
                    .await
                    .map_err(|source| GameError::Engine {
                        player: judge.pool.spec().name.clone(),
                        source,
                    })?;
                &own
            }
        };
        let score = match search(engine, game, limits).await {
            Ok((Some(score), _)) => score,
            outcome => {
                let why = match outcome {
                    Err(e) => e.to_string(),
                    Ok(_) => "the engine reported no score".to_owned(),
                };
                let message = format!("no move-limit verdict: {why}");
                tracing::warn!(game = row.index, "{message}");
                let _ = env.store.leased(&self.fence).record_event(
                    env.tournament,
                    "warn",
                    "adjudication_engine_failure",
                    &message,
                );
                return Ok(());
            }
        };
        let white_view = match game.turn() {
            Color::White => score,
            Color::Black => match score {
                Score::Cp(cp) => Score::Cp(-cp),
                Score::Mate(n) => Score::Mate(-n),
            },
        };
        let result = limit_result(side_to_move_cp(white_view), rule.threshold_cp());
        let mut engine_id = engine.id_name().unwrap_or(engine.name()).to_owned();
        for (name, value) in &judge.pool.spec().options {
            engine_id.push_str(&format!(" {name}={value}"));
        }
        env.store
            .leased(&self.fence)
            .record_limit_verdict(&LimitVerdictRecord {
                result: result.as_pgn().to_owned(),
                score: white_view,
                threshold_cp: rule.threshold_cp(),
                engine: engine_id,
                limits: limits.to_string().trim_start_matches("go ").to_owned(),
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
