//! One game, from its stored schedule row to its stored result.
//!
//! Every move is written to the store before the next ply starts and every LLM reply before it is
//! read, so a game interrupted at any point resumes from its last stored ply, and re-feeds stored
//! replies to the play mode instead of asking the model again.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use rand::{SeedableRng, rngs::StdRng};
use shakmaty::{Color, Move, Position};

use super::{
    GameError, ReplayError,
    adjudicate::GameAdjudication,
    ask::{self, Models, Turn},
    env::GameEnv,
    human::{self, HumanTurn},
    players::{Participant, RandomMoves},
    rules::Rules,
    turn::{Action, Decision, LegalMoves, PlayMode, RetryAction, TurnContext},
    vote,
};
use crate::spec::OnRejected;
use crate::{
    board::{
        Game, GameEnd, GameResult, Termination,
        clock::{Clock, Flag, GameClocks},
    },
    engine::{ClockTimes, EngineError, EngineLease, SearchLimits, UciClock},
    llm::{ChatMessage, ChatRequest, Rejection, ToolCall, ToolSpec},
    store::{Fence, GameRow, Leased, LlmCallRow, PlyRecord, Store},
};

/// Dialog turns allowed in one ply, whatever the mode says: a mode that keeps answering `say`
/// must not run up an unbounded bill. A mode's `max_turns` option can only lower it.
const MAX_CALLS_PER_PLY: u32 = 100;

/// How a game run ended.
#[derive(Debug)]
pub enum GameOutcome {
    /// The game is over and stored.
    Finished(GameEnd),
    /// The game could not go on (endpoint down, script error); it is stored as set aside, with
    /// its error's kind, and resumes on the next run.
    Errored(GameError),
    /// Another worker took the game over while this one stalled past its lease: this worker's
    /// write was refused, and it stopped the game at once, writing nothing more and asking no
    /// model again. The game is the other worker's.
    LeaseLost(GameError),
}

/// One side of the game, ready to move.
enum Side {
    Llm(Box<LlmSide>),
    Engine {
        lease: EngineLease,
        limits: SearchLimits,
        random: Option<RandomMoves>,
    },
    Random {
        seed: u64,
    },
    /// A person: the move is read from the store, where `arena serve` writes it.
    Human,
}

/// A model player's side: its models, its play mode for this game, and the dialog its next ply
/// may build on.
struct LlmSide {
    models: Models,
    mode: Box<dyn PlayMode>,
    /// The final dialog of this side's previous ply (its last turn's messages and the reply):
    /// what modes that keep one conversation per game build on. Kept in memory; read from the
    /// store only when a game resumes.
    previous_dialog: Vec<ChatMessage>,
    /// What a game becomes when a provider refuses this side's request for good.
    on_rejected: OnRejected,
    /// Samples asked per attempt (`samples`, 1 unless the player votes; see [`super::vote`]).
    samples: u32,
    /// Whether a request of this side was accepted in this game (it moved before, or a call of
    /// this ply came back): a refusal after that is this request's, not the player's settings'.
    accepted: bool,
}

/// Plays (or resumes) the game `row` under `rules` and stores its result, or stores it as set
/// aside with its error.
///
/// Every write of the game carries `fence`, the lease this worker claimed it under: once another
/// worker has taken the game over, the first write (or the check before a model call) is refused
/// and the game stops there ([`GameOutcome::LeaseLost`]).
pub async fn play(
    env: &GameEnv,
    row: &GameRow,
    rules: Arc<dyn Rules>,
    fence: &Fence,
) -> GameOutcome {
    let lease = env.store.leased(fence);
    match play_inner(env, row, rules.as_ref(), lease).await {
        Ok(end) => GameOutcome::Finished(end),
        // The game is another worker's now: nothing of it is this worker's to write.
        Err(error) if error.is_lease_lost() => GameOutcome::LeaseLost(error),
        Err(error) => {
            if let Err(e) = lease.mark_game_errored(error.kind(), &error.to_string()) {
                tracing::error!("cannot record that game {} failed: {e}", row.index);
            }
            GameOutcome::Errored(error)
        }
    }
}

async fn play_inner(
    env: &GameEnv,
    row: &GameRow,
    rules: &dyn Rules,
    lease: Leased<'_>,
) -> Result<GameEnd, GameError> {
    let Resumed {
        mut game,
        mut clocks,
        stored,
    } = resume(env, row, rules, lease)?;
    // The endings apply from here on: stored plies are replayed under the automatic ones, which
    // end no game earlier, so a game begun before an upgrade that changed its rule still replays.
    game.set_endings(rules.spec().endings_of(&row.white, &row.black));
    lease.mark_game_started(rules.hash(), rules.number())?;
    let mut adjudication = start_adjudication(env, row, &mut game, lease).await?;
    if game.end().is_none() {
        let mut sides = Sides::ready(env, rules, row, &game, &stored).await?;
        while game.end().is_none() {
            let Some(chosen) = sides
                .choose(env, row, &mut game, &mut clocks, lease)
                .await?
            else {
                break; // the game ended without a move (see `Sides::choose`)
            };
            if let Some(end) = store_move(env, &mut game, &mut clocks, lease, chosen).await? {
                game.adjudicate(end);
                break;
            }
            if let Some(a) = adjudication.as_mut()
                && let Some(end) = a.after_ply(env, row, &game).await?
            {
                game.adjudicate_before_move_limit(end);
            }
        }
    }
    let end = game.end().cloned().expect("the loop ends with the game");
    if let Some(a) = &adjudication {
        a.at_end(env, row, &game, &end).await?;
    }
    finish(lease, end)
}

/// A game as this run takes it up.
struct Resumed {
    /// The board after the stored plies (or, on a fresh game, after its book line).
    game: Game,
    /// White's and Black's clocks, as they read after the stored plies.
    clocks: [Option<Clock>; 2],
    /// The plies stored before this run (none on a fresh game).
    stored: Vec<PlyRecord>,
}

/// The game `row` as stored: its board replayed ply by ply with the clocks charged as they were,
/// or, on a fresh game, its opening line played and stored as book plies.
fn resume(
    env: &GameEnv,
    row: &GameRow,
    rules: &dyn Rules,
    lease: Leased<'_>,
) -> Result<Resumed, GameError> {
    let replay = |what: String, source: ReplayError| GameError::Replay {
        game: row.index,
        what,
        source,
    };
    let settings = &rules.spec().settings;
    // The move limit counts the plies played from the opening position, not the book line
    // that set it up (unless the tournament asks for the whole game); PlyCount keeps them all.
    let book_plies = if settings.max_plies_include_book {
        0
    } else {
        u32::try_from(row.opening_moves.len()).unwrap_or(u32::MAX)
    };
    let mut game = Game::new_in(row.variant, row.start_fen.as_deref(), settings.max_plies)
        .map_err(|e| replay("the start position".into(), e.into()))?
        .with_book_plies(book_plies);
    // The clocks: the ones the game started with when it resumes, else what the spec says now.
    let wanted = GameClocks {
        white: rules.spec().time_control_of(&row.white),
        black: rules.spec().time_control_of(&row.black),
    };
    let clocks: GameClocks = match lease.game_time_control(wanted.to_json().as_deref())? {
        Some(json) => serde_json::from_str(&json)
            .map_err(|e| replay("the stored time control".into(), ReplayError::Clock(e)))?,
        None => GameClocks::default(),
    };
    let mut clocks = [clocks.white.map(Clock::new), clocks.black.map(Clock::new)];
    let stored = env.store.plies(row.id)?;
    if stored.is_empty() {
        for uci in &row.opening_moves {
            let fen_before = game.fen();
            let played = game
                .play_uci(uci)
                .map_err(|e| replay(format!("opening move `{uci}`"), e.into()))?;
            lease.record_ply(&PlyRecord {
                ply: game.ply() - 1,
                fen_before,
                uci: played.uci,
                san: played.san,
                player: "book".into(),
                attempts: 0,
                elapsed_ms: 0,
                clock_ms: None,
            })?;
        }
    }
    for ply in &stored {
        // Each stored charge again, in order: the clocks read exactly what they read then.
        if let (Some(clock), Some(ms)) = (clock_of(&mut clocks, game.turn()), ply.clock_ms) {
            // A stored move was made in time (a flag ends the game before its move is stored).
            let _ = clock.charge(ms);
        }
        game.play_uci(&ply.uci)
            .map_err(|e| replay(format!("stored ply {} (`{}`)", ply.ply, ply.uci), e.into()))?;
    }
    Ok(Resumed {
        game,
        clocks,
        stored,
    })
}

/// The tournament's adjudication for this game, when it has one; a game it already decides
/// (resumed past its rule's threshold) is adjudicated here.
async fn start_adjudication<'a>(
    env: &'a GameEnv,
    row: &GameRow,
    game: &mut Game,
    lease: Leased<'_>,
) -> Result<Option<GameAdjudication<'a>>, GameError> {
    let Some(adjudication) = env.adjudication.as_deref() else {
        return Ok(None);
    };
    let (this, end) = GameAdjudication::start(adjudication, env, row, game, lease.fence()).await?;
    if let Some(end) = end {
        game.adjudicate_before_move_limit(end);
    }
    Ok(Some(this))
}

/// Both sides of a game, and what the choice of a move needs besides the board.
struct Sides {
    white: Side,
    black: Side,
    /// The first ply of this run: only it can have stored replies (a run killed in the middle
    /// of it); every later ply is new.
    first_ply: u32,
    /// Earlier attempts of this game's slot (a replay of a void game asks nothing they asked at
    /// the same ply).
    earlier: Vec<i64>,
    /// What seeds random moves: the slot, not the game number (a replay draws what its void
    /// attempt drew), or the round, where the tournament pairs its games' random moves
    /// (`pair_seeds`).
    seed_key: u32,
    /// Whether a person plays: they may resign or offer a draw while the opponent thinks.
    with_person: bool,
}

/// A move chosen by the side to move, not yet played or stored.
struct Chosen {
    /// The mover's name.
    name: String,
    /// The ply and the position before it.
    ply: u32,
    fen_before: String,
    /// When the mover was asked.
    started: Instant,
    /// The move and what came with it.
    played: SideMove,
}

/// A side's move, with what its turn measured.
struct SideMove {
    mv: Move,
    /// Attempts the move took (an LLM's failed attempts count).
    attempts: u32,
    /// What the move is charged on the mover's clock, when the mover has one and measured it:
    /// an engine's search, a model's successful calls, a person's wait (not the harness's time).
    charged_ms: Option<u64>,
    /// An LLM move's call verdict, written with the move (one commit for both).
    verdict: Option<MoveVerdict>,
}

impl SideMove {
    /// A move that took one attempt and measured nothing for the clock.
    fn at_once(mv: Move) -> SideMove {
        SideMove {
            mv,
            attempts: 1,
            charged_ms: None,
            verdict: None,
        }
    }
}

/// What a side's turn gave: a move to play, or the end of the game without one (`None` when the
/// turn let the game end on the mover's clock, which then decides it).
enum Turned {
    Move(SideMove),
    Ended(Option<GameEnd>),
}

impl Sides {
    /// Both sides, ready for this run's first ply. Both at once: a game that finds no idle
    /// engine process starts one per engine side, and the second need not wait for the first to
    /// load (White's error still comes first).
    async fn ready(
        env: &GameEnv,
        rules: &dyn Rules,
        row: &GameRow,
        game: &Game,
        stored: &[PlyRecord],
    ) -> Result<Sides, GameError> {
        let (white, black) = tokio::join!(
            side(env, rules, &row.white, row.id, game, Color::White),
            side(env, rules, &row.black, row.id, game, Color::Black),
        );
        let (mut white, mut black) = (white?, black?);
        for (side, name) in [(&mut white, &row.white), (&mut black, &row.black)] {
            if let Side::Llm(llm) = side {
                llm.accepted = stored.iter().any(|p| &p.player == name);
            }
        }
        let with_person = matches!(white, Side::Human) || matches!(black, Side::Human);
        Ok(Sides {
            white,
            black,
            first_ply: game.ply(),
            earlier: env.store.earlier_attempts(row)?,
            seed_key: if env.seed_by_round {
                row.round
            } else {
                row.slot
            },
            with_person,
        })
    }

    /// The move of the side to move, or `None` when the game ended without one (it is then
    /// adjudicated: a resignation, a flag, a forfeit, a failed engine).
    async fn choose(
        &mut self,
        env: &GameEnv,
        row: &GameRow,
        game: &mut Game,
        clocks: &mut [Option<Clock>; 2],
        lease: Leased<'_>,
    ) -> Result<Option<Chosen>, GameError> {
        if self.with_person
            && let Some(end) = human::before_ply(env, row, game)?
        {
            game.adjudicate(end);
            return Ok(None);
        }
        let (mover, name, opponent) = match game.turn() {
            Color::White => (&mut self.white, &row.white, &row.black),
            Color::Black => (&mut self.black, &row.black, &row.white),
        };
        let (ply, fen_before, started) = (game.ply(), game.fen(), Instant::now());
        let turned = match mover {
            Side::Random { seed } => Turned::Move(SideMove::at_once(random_move(
                game,
                env.seed,
                *seed,
                self.seed_key,
            ))),
            Side::Engine {
                random: Some(r), ..
            } if random_turn(game, env.seed, r, self.seed_key) => Turned::Move(SideMove::at_once(
                random_move(game, env.seed, r.seed, self.seed_key),
            )),
            Side::Human => human_turn(env, row, game, clocks, lease, name).await?,
            Side::Engine {
                lease: engine,
                limits,
                ..
            } => engine_turn(env, game, clocks, lease, engine, limits, name).await,
            Side::Llm(side) => {
                let stored = if ply == self.first_ply {
                    env.store.llm_calls(row.id, ply)?
                } else {
                    Vec::new()
                };
                let at = PlyAt {
                    row,
                    game,
                    name,
                    opponent,
                    stored: &stored,
                    earlier: &self.earlier,
                    lease,
                };
                let allowance = clock_of(clocks, game.turn()).map(|c| c.allowance_ms());
                let result = llm_ply(env, &at, side, allowance).await?;
                llm_turn(game, clocks, side, result, name)
            }
        };
        match turned {
            Turned::Move(played) => Ok(Some(Chosen {
                name: name.clone(),
                ply,
                fen_before,
                started,
                played,
            })),
            Turned::Ended(end) => {
                if let Some(end) = end {
                    game.adjudicate(end);
                }
                Ok(None)
            }
        }
    }
}

/// A person's turn: the move they play in `arena serve`, their resignation, or their flag.
async fn human_turn(
    env: &GameEnv,
    row: &GameRow,
    game: &Game,
    clocks: &mut [Option<Clock>; 2],
    lease: Leased<'_>,
    name: &str,
) -> Result<Turned, GameError> {
    let allowance = clock_of(clocks, game.turn()).map(|c| c.allowance_ms());
    Ok(
        match human::wait_for_move(env, row, game, name, allowance, lease).await? {
            HumanTurn::Move { mv, waited_ms } => Turned::Move(SideMove {
                charged_ms: Some(waited_ms),
                ..SideMove::at_once(mv)
            }),
            HumanTurn::Resigned(end) => Turned::Ended(Some(end)),
            HumanTurn::OutOfTime { charged_ms } => {
                Turned::Ended(flag_after(game, clocks, name, charged_ms))
            }
        },
    )
}

/// An engine's turn: its best move, a loss on time when it hung past its clock, or a void game
/// when it failed (a crashed, hung or confused engine says nothing of either side's chess, so
/// the next run plays the slot again).
async fn engine_turn(
    env: &GameEnv,
    game: &Game,
    clocks: &mut [Option<Clock>; 2],
    game_lease: Leased<'_>,
    engine: &EngineLease,
    limits: &SearchLimits,
    name: &str,
) -> Turned {
    let uci_clock = uci_clock(clocks, game.turn());
    let moves = game.uci_moves().to_vec();
    let start = (!game.starts_from_initial()).then(|| game.start_fen());
    let answer = engine
        .best_move_in(
            game.variant(),
            start.as_deref(),
            &moves,
            limits,
            uci_clock.as_ref(),
        )
        .await;
    if let (Some(clock), Err(EngineError::Timeout { .. })) = (&uci_clock, &answer) {
        // Past its clock and the hang margin: its flag fell long before.
        let used = clock.allowance_ms.saturating_add(1);
        if let Some(end) = flag_after(game, clocks, name, used) {
            return Turned::Ended(Some(end));
        }
    }
    let legal = answer
        .map_err(|e| format!("engine `{name}` failed: {e}"))
        .and_then(|best| {
            let mv = game
                .parse_uci(&best.uci)
                .map_err(|e| format!("`{name}` played `{}`, which is not legal: {e}", best.uci))?;
            Ok((mv, best.search_ms))
        });
    match legal {
        Ok((mv, search_ms)) => Turned::Move(SideMove {
            charged_ms: Some(search_ms),
            ..SideMove::at_once(mv)
        }),
        Err(reason) => {
            let _ = game_lease.record_event(env.tournament, "error", "engine_failure", &reason);
            Turned::Ended(Some(GameEnd::void(
                Termination::EngineFailure,
                Some(reason),
            )))
        }
    }
}

/// A model's turn, from what its ply came to: a move with its verdict, or the end of the game by
/// its clock, a protocol failure or a provider's refusal.
fn llm_turn(
    game: &Game,
    clocks: &mut [Option<Clock>; 2],
    side: &LlmSide,
    result: PlyResult,
    name: &str,
) -> Turned {
    match result {
        PlyResult::Move {
            mv,
            attempts,
            charged_ms,
            verdict,
        } => Turned::Move(SideMove {
            mv,
            attempts,
            charged_ms: Some(charged_ms),
            verdict: Some(verdict),
        }),
        PlyResult::OutOfTime { charged_ms } => {
            Turned::Ended(flag_after(game, clocks, name, charged_ms))
        }
        PlyResult::Lost {
            termination,
            reason,
        } => Turned::Ended(Some(GameEnd::decided(
            loss_for(game.turn()),
            termination,
            Some(reason),
        ))),
        PlyResult::Rejected {
            termination,
            reason,
        } => Turned::Ended(Some(match side.on_rejected {
            OnRejected::Void => GameEnd::void(termination, Some(reason)),
            OnRejected::Forfeit => {
                GameEnd::decided(loss_for(game.turn()), termination, Some(reason))
            }
        })),
    }
}

/// The end of the game when charging `used_ms` to the mover's clock lets its flag fall.
fn flag_after(
    game: &Game,
    clocks: &mut [Option<Clock>; 2],
    name: &str,
    used_ms: u64,
) -> Option<GameEnd> {
    match clock_of(clocks, game.turn()).map(|c| c.charge(used_ms)) {
        Some(Err(flag)) => Some(time_forfeit(game, name, flag)),
        _ => None,
    }
}

/// Charges the chosen move to the mover's clock, plays it and stores it (with its call's verdict,
/// in one commit). A flag that falls on the charge ends the game instead: the move is never
/// stored, its reply's verdict is, alone.
async fn store_move(
    env: &GameEnv,
    game: &mut Game,
    clocks: &mut [Option<Clock>; 2],
    lease: Leased<'_>,
    chosen: Chosen,
) -> Result<Option<GameEnd>, GameError> {
    let Chosen {
        name,
        ply,
        fen_before,
        started,
        played,
    } = chosen;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let mut clock_ms = None;
    if let Some(clock) = clock_of(clocks, game.turn()) {
        let used = played.charged_ms.unwrap_or(elapsed_ms);
        if let Err(flag) = clock.charge(used) {
            if let Some(v) = &played.verdict {
                v.row
                    .settle(lease, &v.outcome, None, v.candidate.as_deref())?;
            }
            return Ok(Some(time_forfeit(game, &name, flag)));
        }
        clock_ms = Some(used);
    }
    let on_board = game.play(&played.mv);
    let record = PlyRecord {
        ply,
        fen_before,
        uci: on_board.uci,
        san: on_board.san,
        player: name,
        attempts: played.attempts,
        elapsed_ms,
        clock_ms,
    };
    match &played.verdict {
        Some(v) => {
            v.row
                .settle_with_ply(lease, &v.outcome, v.candidate.as_deref(), record)
                .await?
        }
        None => lease.record_ply(&record)?,
    }
    env.progress.ply();
    Ok(None)
}

fn finish(lease: Leased<'_>, end: GameEnd) -> Result<GameEnd, GameError> {
    lease.finish_game(
        end.result_token(),
        end.termination.as_str(),
        end.reason.as_deref(),
    )?;
    Ok(end)
}

fn clock_of(clocks: &mut [Option<Clock>; 2], color: Color) -> Option<&mut Clock> {
    clocks[usize::from(color == Color::Black)].as_mut()
}

/// How much below its per-move limit an engine is asked to stop (`movetime`): 5 %, at most a
/// second, so that the pipe and the scheduler of a loaded machine do not turn a search that
/// obeyed the limit into a loss on time.
fn engine_movetime(per_move_ms: u64) -> u64 {
    per_move_ms - (per_move_ms / 20).min(1000)
}

/// What an engine to move as `color` is told of the clocks, or `None` when it has none.
fn uci_clock(clocks: &[Option<Clock>; 2], color: Color) -> Option<UciClock> {
    let [white, black] = clocks;
    let mover = match color {
        Color::White => white,
        Color::Black => black,
    }
    .as_ref()?;
    let times = |c: &Option<Clock>| {
        c.as_ref().and_then(|c| {
            c.left_ms().map(|time_ms| ClockTimes {
                time_ms,
                inc_ms: c.control().increment_ms,
            })
        })
    };
    Some(UciClock {
        white: times(white),
        black: times(black),
        movetime_ms: mover.control().per_move_ms.map(engine_movetime),
        allowance_ms: mover.allowance_ms(),
    })
}

/// The end of a game whose side to move (`name`) let its flag fall: a loss, or a draw when the
/// opponent could not mate with the material it has (FIDE's rule 6.9, as lichess applies it).
fn time_forfeit(game: &Game, name: &str, flag: Flag) -> GameEnd {
    let mover = game.turn();
    if game.position().has_insufficient_material(mover.other()) {
        GameEnd::decided(
            GameResult::Draw,
            Termination::TimeForfeit,
            Some(format!(
                "`{name}` {flag}, but the opponent has too little material to mate"
            )),
        )
    } else {
        GameEnd::decided(
            loss_for(mover),
            Termination::TimeForfeit,
            Some(format!("`{name}` {flag}")),
        )
    }
}

fn loss_for(color: Color) -> GameResult {
    match color {
        Color::White => GameResult::BlackWins,
        Color::Black => GameResult::WhiteWins,
    }
}

/// The side `name` plays as `color`, ready for its first ply of this run.
async fn side(
    env: &GameEnv,
    rules: &dyn Rules,
    name: &str,
    game_id: i64,
    game: &Game,
    color: Color,
) -> Result<Side, GameError> {
    let unknown = || GameError::UnknownPlayer(name.to_string());
    let participant = env.roster.players.get(name).ok_or_else(unknown)?;
    Ok(match participant {
        Participant::Random { seed } => Side::Random { seed: *seed },
        Participant::Human => Side::Human,
        Participant::Engine {
            pool,
            limits,
            random,
        } => Side::Engine {
            random: *random,
            lease: pool.lease().await.map_err(|source| GameError::Engine {
                player: name.to_string(),
                source,
            })?,
            limits: *limits,
        },
        Participant::Llm { .. } | Participant::Moa { .. } => {
            // Prompt-side settings come from the game's generation, so a reload can change them.
            let spec = rules.spec().player(name).ok_or_else(unknown)?;
            let binding = spec.mode_binding().ok_or_else(unknown)?;
            let mode = rules
                .play_mode(binding)
                .map_err(|source| GameError::Script {
                    player: name.to_string(),
                    source,
                })?;
            let models = Models::for_player(spec, participant).ok_or_else(unknown)?;
            // A resumed game: this side's next ply builds on its last one, read back once.
            let next_ply = if game.turn() == color {
                game.ply()
            } else {
                game.ply() + 1
            };
            // Checked with the spec; a bad value would have been refused there.
            let samples = vote::samples_of(binding.options).unwrap_or(1);
            let calls_per_turn = models.calls_per_turn() * samples;
            // Only a single model's thinking goes back (a mixture's reply is its synthesizer's).
            let replier = match &models {
                Models::Single { endpoint, .. } => Some(endpoint.provider),
                Models::Moa { .. } => None,
            };
            let previous_dialog =
                stored_dialog(&env.store, game_id, next_ply, calls_per_turn, replier)?;
            Side::Llm(Box::new(LlmSide {
                models,
                mode,
                samples,
                previous_dialog,
                on_rejected: spec.on_rejected(),
                accepted: false,
            }))
        }
    })
}

/// A uniform choice among the legal moves (in UCI order), seeded by the tournament, the player,
/// the game and the ply: reproducible, and the same again when a game is resumed.
fn random_move(game: &Game, tournament_seed: u64, player_seed: u64, index: u32) -> Move {
    let mut legal: Vec<(String, Move)> = game
        .position()
        .legal_moves()
        .into_iter()
        .map(|m| (crate::board::uci_of(game.position(), &m), m))
        .collect();
    legal.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let seed = mix(
        mix(mix(tournament_seed, player_seed), u64::from(index)),
        u64::from(game.ply()),
    );
    let mut rng = StdRng::seed_from_u64(seed);
    let i = rand::RngExt::random_range(&mut rng, 0..legal.len());
    legal.swap_remove(i).1
}

/// Whether a mixture engine plays a random move at this ply: a coin of bias `r.p` seeded like
/// [`random_move`] but from its own stream, so the coin and the move are independent.
fn random_turn(game: &Game, tournament_seed: u64, r: &RandomMoves, index: u32) -> bool {
    let seed = mix(
        mix(
            mix(mix(tournament_seed, r.seed), u64::from(index)),
            u64::from(game.ply()),
        ),
        COIN_STREAM,
    );
    let mut rng = StdRng::seed_from_u64(seed);
    rand::RngExt::random_bool(&mut rng, r.p.clamp(0.0, 1.0))
}

/// Separates a mixture's coin from its move draw (any constant would do).
const COIN_STREAM: u64 = 0xC01D_C0FF_EE00_0001;

/// SplitMix64 step: spreads small inputs over the whole seed space.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How an LLM ply ended.
enum PlyResult {
    /// A legal move, after this many attempts.
    Move {
        mv: Move,
        attempts: u32,
        /// What the ply costs the player's clock: its calls' successful attempts.
        charged_ms: u64,
        /// The verdict of the call whose reply is the move, not yet stored: it is written with
        /// the move, or alone if a clock ends the game first.
        verdict: MoveVerdict,
    },
    /// The player's clock ran out before it moved (a call still unanswered, or its calls
    /// together over the allowance): a loss on time, for `charged_ms` (over the allowance).
    OutOfTime { charged_ms: u64 },
    /// The mover loses without a move: a forfeit, too many wrong actions, or max turns.
    Lost {
        termination: Termination,
        reason: String,
    },
    /// The provider refused the mover's request for good (`context_exceeded` or
    /// `request_rejected`): the game cannot go on, and ends as the player's `on_rejected` says.
    Rejected {
        termination: Termination,
        reason: String,
    },
}

/// What the play mode made of the reply that became a move: its call's row and outcome.
struct MoveVerdict {
    row: crate::calls::CallRow,
    outcome: String,
    candidate: Option<String>,
}

/// Where an LLM ply happens.
struct PlyAt<'a> {
    row: &'a GameRow,
    game: &'a Game,
    name: &'a str,
    opponent: &'a str,
    /// Replies already stored for this ply (a resumed game): used instead of new requests.
    stored: &'a [LlmCallRow],
    /// Earlier attempts of this game's slot (it replays a void game), newest first: a request
    /// one of them asked at the same ply gets its stored reply.
    earlier: &'a [i64],
    /// The game's lease, which every write of the ply carries.
    lease: Leased<'a>,
}

/// One LLM ply: the dialog between the play mode and the model until a move, a loss by protocol
/// failure, or an error that sets the game aside.
///
/// Each model reply is one dialog turn. `say` answers it without spending an attempt; `retry`
/// and a refused move spend one. Using up `max_attempts` loses by the mode's `exhausted`
/// termination; using up the turns (`max_turns`, at most [`MAX_CALLS_PER_PLY`]) loses by max
/// turns. The ply's final dialog becomes the side's `previous_dialog`.
async fn llm_ply(
    env: &GameEnv,
    at: &PlyAt<'_>,
    side: &mut LlmSide,
    allowance_ms: Option<u64>,
) -> Result<PlyResult, GameError> {
    let mut ply = LlmPly::open(at, side)?;
    let max_turns = side
        .mode
        .max_turns()
        .unwrap_or(MAX_CALLS_PER_PLY)
        .min(MAX_CALLS_PER_PLY);
    for turn in 0..max_turns {
        let answers = match ply.ask(env, at, side, turn, allowance_ms).await? {
            Asked::Answers(answers) => answers,
            Asked::Ended(result) => return Ok(result),
        };
        let (answer, decision) = ply.decide(at, side.mode.as_ref(), answers)?;
        if let Judged::Done(result) = ply.judge(at, side, answer, decision)? {
            return Ok(result);
        }
    }
    Ok(PlyResult::Lost {
        termination: Termination::MaxTurns,
        reason: format!(
            "`{}` reached max turns: {max_turns} dialog turns at ply {} without a move",
            at.name, ply.shown_ply
        ),
    })
}

/// An LLM ply under way: the dialog so far, the mode's view of it, and what the ply has spent.
struct LlmPly {
    ctx: TurnContext,
    dialog: Vec<ChatMessage>,
    /// Fields merged into every request of the ply, and the tools offered (from the opening).
    request_extra: serde_json::Map<String, serde_json::Value>,
    tools: Vec<ToolSpec>,
    attempt: u32,
    /// The outcome of the last failed attempt, for the message of a lost ply.
    last_failure: String,
    /// The ply's time on the player's clock so far: every successful call's, re-asks after a
    /// bad answer included (that is the model thinking); failed attempts and retry waits not.
    charged_ms: u64,
    /// The ply as a person reads it in a message, counted from 1 as the viewer's "Ply N" (the
    /// store's `ply` counts the plies played before it, from 0).
    shown_ply: u32,
}

/// What asking the model gave: answers to judge, or the end of the ply.
enum Asked {
    Answers(Vec<ask::Answer>),
    Ended(PlyResult),
}

/// What a judged reply did to the ply: ended it, or leaves it for another turn.
enum Judged {
    Done(PlyResult),
    Again,
}

impl LlmPly {
    /// The ply's first dialog, built on the side's previous one.
    fn open(at: &PlyAt<'_>, side: &mut LlmSide) -> Result<LlmPly, GameError> {
        let mut ctx = context(at, side.mode.as_ref());
        ctx.previous_dialog = Arc::new(std::mem::take(&mut side.previous_dialog));
        let mut ply = LlmPly {
            ctx,
            dialog: Vec::new(),
            request_extra: serde_json::Map::new(),
            tools: Vec::new(),
            attempt: 1,
            last_failure: String::new(),
            charged_ms: 0,
            shown_ply: at.game.ply() + 1,
        };
        ply.start(at, side.mode.as_ref())?;
        Ok(ply)
    }

    /// Opens the dialog as the mode starts it (again, when a failed attempt starts afresh).
    fn start(&mut self, at: &PlyAt<'_>, mode: &dyn PlayMode) -> Result<(), GameError> {
        let opening = mode.start(&self.ctx).map_err(|e| script_error(at, e))?;
        self.dialog = opening.messages;
        with_earlier_thinking(&mut self.dialog, &self.ctx.previous_dialog);
        self.request_extra = opening.request;
        self.tools = opening.tools;
        Ok(())
    }

    /// Sends the dialog (as samples, when the side votes) within what is left of the clock.
    /// A clock run out and a provider's refusal for good end the ply; any other failure of the
    /// call sets the game aside.
    async fn ask(
        &mut self,
        env: &GameEnv,
        at: &PlyAt<'_>,
        side: &mut LlmSide,
        turn: u32,
        allowance_ms: Option<u64>,
    ) -> Result<Asked, GameError> {
        let charged_ms = self.charged_ms;
        let clock = match allowance_ms {
            Some(allowed) if charged_ms > allowed => {
                return Ok(Asked::Ended(PlyResult::OutOfTime { charged_ms }));
            }
            Some(allowed) => Some(Duration::from_millis(allowed - charged_ms)),
            None => None,
        };
        let asking = Turn {
            game_id: at.row.id,
            ply: at.game.ply(),
            turn,
            player: at.name,
            dialog: &self.dialog,
            extra: &self.request_extra,
            tools: &self.tools,
            stored: at.stored,
            earlier: at.earlier,
            clock,
            lease: at.lease,
        };
        let asked = match &side.models {
            Models::Single { spec, endpoint } if side.samples > 1 => {
                ask::ask_samples(env, spec, endpoint, &asking, side.samples).await
            }
            models => ask::ask(env, models, &asking).await.map(|a| vec![a]),
        };
        let answers = match asked {
            Ok(answers) => answers,
            Err(GameError::Api { source, .. })
                if matches!(*source, crate::llm::LlmError::OutOfTime { .. }) =>
            {
                // Unanswered when the clock ran out: all of the allowance, and a little over.
                let allowed = allowance_ms.unwrap_or(charged_ms);
                return Ok(Asked::Ended(PlyResult::OutOfTime {
                    charged_ms: allowed.max(charged_ms).saturating_add(1),
                }));
            }
            Err(error) => {
                return match rejection(&error, side.accepted) {
                    Some(termination) => Ok(Asked::Ended(PlyResult::Rejected {
                        termination,
                        reason: format!("{error} (ply {})", self.shown_ply),
                    })),
                    None => Err(error),
                };
            }
        };
        side.accepted = true;
        // Samples run at once: the turn takes as long as the slowest.
        let took = answers.iter().map(|a| a.charged_ms).max().unwrap_or(0);
        self.charged_ms = charged_ms.saturating_add(took);
        Ok(Asked::Answers(answers))
    }

    /// The mode's decision on the answers (a vote among samples), with the reply added to the
    /// dialog.
    fn decide(
        &mut self,
        at: &PlyAt<'_>,
        mode: &dyn PlayMode,
        answers: Vec<ask::Answer>,
    ) -> Result<(ask::Answer, Decision), GameError> {
        let ctx = &mut self.ctx;
        ctx.attempt = self.attempt;
        let (answer, decision) = if answers.len() > 1 {
            vote_on(at, mode, ctx, &self.dialog, answers)?
        } else {
            let answer = answers.into_iter().next().expect("one answer");
            ctx.dialog = Arc::new(with_reply(&self.dialog, &answer));
            ctx.reasoning = answer.reasoning.clone();
            ctx.finish_reason = answer.finish_reason.clone();
            let decision = mode
                .reply(ctx, &answer.text)
                .map_err(|e| script_error(at, e))?;
            (answer, decision)
        };
        self.dialog.push(answer.message());
        ctx.dialog = Arc::new(self.dialog.clone());
        ctx.reasoning = answer.reasoning.clone();
        ctx.finish_reason = None;
        Ok((answer, decision))
    }

    /// Acts on the decision: a legal move ends the ply (its verdict is stored with the move);
    /// `say` answers and goes on; a refused move, a `retry` or a forfeit are settled here.
    fn judge(
        &mut self,
        at: &PlyAt<'_>,
        side: &mut LlmSide,
        answer: ask::Answer,
        decision: Decision,
    ) -> Result<Judged, GameError> {
        let cut = crate::calls::is_cut_off(answer.finish_reason.as_deref());
        let outcome = |default: &str| {
            cut_off_or(
                cut,
                decision.outcome.clone().unwrap_or_else(|| default.into()),
            )
        };
        let candidate = decision.candidate.as_deref();
        let settle =
            |kind: &str, detail: Option<&str>| answer.row.settle(at.lease, kind, detail, candidate);
        let feedback = match &decision.action {
            Action::Move(uci) => match at.game.parse_uci(uci) {
                Ok(mv) => {
                    // Settled with the move, in the same transaction (see `store_move`).
                    side.previous_dialog = std::mem::take(&mut self.dialog);
                    return Ok(Judged::Done(PlyResult::Move {
                        mv,
                        attempts: self.attempt,
                        charged_ms: self.charged_ms,
                        verdict: MoveVerdict {
                            row: answer.row,
                            outcome: outcome("move"),
                            candidate: decision.candidate.clone(),
                        },
                    }));
                }
                Err(e) => {
                    // The mode accepted a move the board refuses: count it as illegal.
                    let message = format!("`{uci}` is not a legal move in this position ({e}).");
                    let detail = Some(message.as_str());
                    answer.row.settle(at.lease, "illegal", detail, Some(uci))?;
                    self.last_failure = "illegal".into();
                    Some(message)
                }
            },
            Action::Retry(retry) => {
                let kind = outcome("retry");
                let feedback = match retry {
                    RetryAction::Feedback(text) => Some(text.clone()),
                    RetryAction::Reset => None,
                };
                settle(&kind, feedback.as_deref())?;
                self.last_failure = kind;
                feedback
            }
            Action::Say(text) => {
                settle(&outcome("say"), None)?;
                answer_reply(&mut self.dialog, &answer.tool_calls, text, &decision);
                return Ok(Judged::Again);
            }
            Action::Forfeit(reason) => {
                settle(&outcome("forfeit"), Some(reason))?;
                return Ok(Judged::Done(PlyResult::Lost {
                    termination: Termination::Forfeit,
                    reason: format!("`{}` forfeits: {reason}", at.name),
                }));
            }
        };
        self.after_failure(at, side.mode.as_ref(), feedback, &answer, &decision)
    }

    /// After a failed attempt: the ply is lost when the attempts are used up; else the next
    /// attempt answers the reply with the mode's feedback, or starts the dialog afresh.
    fn after_failure(
        &mut self,
        at: &PlyAt<'_>,
        mode: &dyn PlayMode,
        feedback: Option<String>,
        answer: &ask::Answer,
        decision: &Decision,
    ) -> Result<Judged, GameError> {
        let (attempt, name, shown_ply) = (self.attempt, at.name, self.shown_ply);
        if attempt >= mode.max_attempts() {
            let last = &self.last_failure;
            let termination = mode.exhausted();
            let reason = match termination {
                Termination::TooManyWrongActions => format!(
                    "`{name}` made too many wrong actions: {attempt} failed attempts at ply {shown_ply} (last: {last})"
                ),
                _ => format!(
                    "`{name}` forfeits: no acceptable move in {attempt} attempts at ply {shown_ply} (last: {last})"
                ),
            };
            return Ok(Judged::Done(PlyResult::Lost {
                termination,
                reason,
            }));
        }
        self.attempt += 1;
        self.ctx.attempt = self.attempt;
        match feedback {
            Some(text) => answer_reply(&mut self.dialog, &answer.tool_calls, &text, decision),
            None => {
                self.ctx.dialog = Default::default();
                self.start(at, mode)?;
            }
        }
        Ok(Judged::Again)
    }
}

/// A script error of the player to move.
fn script_error(at: &PlyAt<'_>, source: crate::script::ScriptError) -> GameError {
    GameError::Script {
        player: at.name.to_string(),
        source,
    }
}

/// The outcome stored for a reply: `outcome` as the play mode said, except that a reply cut at
/// its token limit (`cut`) in which no move was read is `cut_off`, whatever mode read it (an
/// ejected mode need not know of the outcome for the statistics to keep it apart).
fn cut_off_or(cut: bool, outcome: String) -> String {
    if cut && crate::store::UNREAD_OUTCOMES.contains(&outcome.as_str()) {
        crate::store::CUT_OFF_OUTCOME.to_owned()
    } else {
        outcome
    }
}

/// `dialog` followed by the model's reply in `answer` (its text and the tools it called).
/// Gives the thinking blocks back to the assistant messages a play mode carried over from the
/// previous ply's dialog: a mode reads that dialog as role and text only, so a message it
/// repeats comes back without the reasoning blocks the provider wants with it
/// ([`ChatMessage::thinking`]); one whose text is an earlier reply's, word for word, gets that
/// reply's blocks again.
fn with_earlier_thinking(dialog: &mut [ChatMessage], previous: &[ChatMessage]) {
    for message in dialog
        .iter_mut()
        .filter(|m| m.role == "assistant" && m.thinking.is_empty() && m.tool_calls.is_empty())
    {
        if let Some(earlier) = previous.iter().find(|p| {
            p.role == "assistant" && !p.thinking.is_empty() && p.content == message.content
        }) {
            message.thinking = earlier.thinking.clone();
        }
    }
}

fn with_reply(dialog: &[ChatMessage], answer: &ask::Answer) -> Vec<ChatMessage> {
    let mut d = Vec::with_capacity(dialog.len() + 1);
    d.extend_from_slice(dialog);
    d.push(answer.message());
    d
}

/// Self-consistency (see [`super::vote`]): the play mode reads every sample of one attempt, the
/// vote picks the sample whose reply and decision the attempt takes (the earliest voting for the
/// winning move, or the first sample when none decided a legal move), and every other sample's
/// row is settled as [`vote::SAMPLE_OUTCOME`] with what it decided and the tally.
///
/// # Errors
/// A script error (a sample answered with `say`, which has no move to vote for, included), or a
/// store that refused a verdict.
fn vote_on(
    at: &PlyAt<'_>,
    mode: &dyn PlayMode,
    ctx: &mut TurnContext,
    dialog: &[ChatMessage],
    answers: Vec<ask::Answer>,
) -> Result<(ask::Answer, crate::tournament::turn::Decision), GameError> {
    let script = |source| GameError::Script {
        player: at.name.to_string(),
        source,
    };
    let n = answers.len();
    let mut decisions = Vec::with_capacity(n);
    for (i, answer) in answers.iter().enumerate() {
        ctx.dialog = Arc::new(with_reply(dialog, answer));
        ctx.reasoning = answer.reasoning.clone();
        ctx.finish_reason = answer.finish_reason.clone();
        let decision = mode.reply(ctx, &answer.text).map_err(script)?;
        if let Action::Say(_) = decision.action {
            return Err(script(crate::script::ScriptError::bare(format!(
                "the play mode answered sample {} of {n} with `say`: `samples` needs a mode that decides every reply (a move, a retry or a forfeit)",
                i + 1
            ))));
        }
        decisions.push(decision);
    }
    let pos = at.game.position();
    let legal: Vec<Option<String>> = decisions
        .iter()
        .map(|d| match &d.action {
            Action::Move(uci) => at
                .game
                .parse_uci(uci)
                .ok()
                .map(|mv| crate::board::uci_of(pos, &mv)),
            _ => None,
        })
        .collect();
    let tally = vote::vote(&legal);
    let chosen = tally.as_ref().map_or(0, |t| t.played);
    let result = match &tally {
        Some(t) => format!(
            "vote {}: played {} (sample {})",
            t.summary(),
            t.winner,
            chosen + 1
        ),
        None => format!("vote: no legal move in {n} samples; sample 1 decided the attempt"),
    };
    for (i, (answer, decision)) in answers.iter().zip(&decisions).enumerate() {
        if i == chosen {
            continue;
        }
        let (decided, candidate) = match (&decision.action, &legal[i]) {
            (Action::Move(_), Some(uci)) => (format!("move {uci}"), Some(uci.as_str())),
            (Action::Move(uci), None) => (format!("illegal {uci}"), Some(uci.as_str())),
            (Action::Retry(_), _) => (
                decision.outcome.clone().unwrap_or_else(|| "retry".into()),
                decision.candidate.as_deref(),
            ),
            (Action::Forfeit(_), _) => (
                decision.outcome.clone().unwrap_or_else(|| "forfeit".into()),
                None,
            ),
            (Action::Say(_), _) => unreachable!("refused above"),
        };
        let detail = format!("sample {} of {n}: {decided}; {result}", i + 1);
        answer
            .row
            .settle(at.lease, vote::SAMPLE_OUTCOME, Some(&detail), candidate)?;
    }
    let decision = decisions.swap_remove(chosen);
    let answer = answers.into_iter().nth(chosen).expect("the chosen sample");
    Ok((answer, decision))
}

/// Answers a reply with `text`: as a user message, or, when the reply called tools, as the
/// result of its first call, every further call getting the decision's `other_calls` (the
/// providers want a result for each call before anything else is said).
fn answer_reply(
    dialog: &mut Vec<ChatMessage>,
    calls: &[ToolCall],
    text: &str,
    decision: &super::turn::Decision,
) {
    let Some((first, others)) = calls.split_first() else {
        dialog.push(ChatMessage::new("user", text));
        return;
    };
    dialog.push(ChatMessage::tool_result(&first.id, text));
    let other = decision.other_calls.as_deref().unwrap_or_default();
    for call in others {
        dialog.push(ChatMessage::tool_result(&call.id, other));
    }
}

/// The termination of a request the provider refused for good, or `None` for an error that sets
/// the game aside. A prompt over the context is always the game's own; any other refusal is
/// only once a request of the player was accepted in this game: refused at its very first
/// request, it is most likely the player's settings (a parameter the model does not take), which
/// would fail every game alike and must be fixed, not scored.
fn rejection(error: &GameError, accepted: bool) -> Option<Termination> {
    let GameError::Api { source, .. } = error else {
        return None;
    };
    match source.rejection()? {
        Rejection::ContextExceeded => Some(Termination::ContextExceeded),
        Rejection::Invalid if accepted => Some(Termination::RequestRejected),
        Rejection::Invalid => None,
    }
}

fn context(at: &PlyAt<'_>, mode: &dyn PlayMode) -> TurnContext {
    let game = at.game;
    let pos = game.position();
    TurnContext {
        fen: game.fen(),
        start_fen: game.start_fen(),
        variant: game.variant().as_str(),
        side: match game.turn() {
            Color::White => "white",
            Color::Black => "black",
        },
        ply: game.ply(),
        move_number: pos.fullmoves().get(),
        legal: Arc::new(LegalMoves::of(pos)),
        history_uci: game.uci_history(),
        history_san: game.san_history(),
        last_move: game.uci_moves().last().cloned(),
        attempt: 1,
        max_attempts: mode.max_attempts(),
        player: at.name.to_string(),
        opponent: at.opponent.to_string(),
        game: at.row.slot,
        options: mode.options().clone(),
        dialog: Default::default(),
        previous_dialog: Default::default(),
        reasoning: None,
        finish_reason: None,
    }
}

/// The final dialog of the ply before `next_ply` of the same side, rebuilt from the store when a
/// game resumes (so it sees exactly what an uninterrupted one would): the last turn's messages
/// plus its reply. For a mixture of agents the messages are the first proposer's (the dialog
/// itself, not the synthesizer's merged prompt) and the reply is the synthesizer's; for a vote,
/// the reply is the played sample's. The reply's thinking blocks are read back from its stored
/// body by `replier`'s wire format, as the uninterrupted game carried them.
fn stored_dialog(
    store: &Store,
    game_id: i64,
    next_ply: u32,
    calls_per_turn: u32,
    replier: Option<crate::llm::Provider>,
) -> Result<Vec<ChatMessage>, GameError> {
    let Some(previous) = next_ply.checked_sub(2) else {
        return Ok(Vec::new());
    };
    let calls = store.llm_calls(game_id, previous)?;
    let Some(last) = calls.iter().max_by_key(|c| c.call.seq) else {
        return Ok(Vec::new());
    };
    let first_of_turn = last.call.seq / calls_per_turn.max(1) * calls_per_turn.max(1);
    let asked = calls
        .iter()
        .find(|c| c.call.seq == first_of_turn)
        .unwrap_or(last);
    let request: ChatRequest =
        serde_json::from_str(&asked.call.request_json).map_err(|source| {
            GameError::StoredRequest {
                ply: previous,
                source,
            }
        })?;
    // The turn's reply: its last row that is not an unplayed sample of a vote (a mixture's
    // synthesizer; the sample a vote played).
    let replied = calls
        .iter()
        .filter(|c| c.call.seq >= first_of_turn)
        .filter(|c| c.outcome.as_deref() != Some(vote::SAMPLE_OUTCOME))
        .max_by_key(|c| c.call.seq)
        .unwrap_or(last);
    let mut dialog = request.messages;
    // A stored request names its pictures; the dialog goes on with their bytes.
    store.resolve_images(&mut dialog)?;
    if let Some(reply) = &replied.call.reply_text {
        let mut message = ChatMessage::new("assistant", reply.clone());
        if let (Some(provider), Some(body)) = (replier, &replied.call.raw_body) {
            message.thinking = provider.stored_thinking(body);
        }
        dialog.push(message);
    }
    Ok(dialog)
}

#[cfg(test)]
mod tests;
