//! One game, from its stored schedule row to its stored result.
//!
//! Every move is written to the store before the next ply starts and every LLM reply before it is
//! read, so a game interrupted at any point resumes from its last stored ply, and re-feeds stored
//! replies to the play mode instead of asking the model again.

use std::{sync::Arc, time::Instant};

use rand::{SeedableRng, rngs::StdRng};
use shakmaty::{Color, Position};

use super::{
    ask::{self, Models},
    players::{Participant, Roster},
    progress::Progress,
    turn::{Action, RetryAction, TurnContext},
};
use crate::{
    board::{Game, GameEnd, GameResult, Termination, render},
    engine::EngineLease,
    llm::{ChatMessage, ChatRequest},
    lua::{Generation, ModeScript},
    store::{GameRow, PlyRecord, Store},
};

/// Dialog turns allowed in one ply, whatever the mode says: a mode that keeps answering `say`
/// must not run up an unbounded bill. A mode's `max_turns` option can only lower it.
const MAX_CALLS_PER_PLY: u32 = 100;

/// Everything a game needs from its tournament.
pub struct GameEnv {
    /// The store.
    pub store: Arc<Store>,
    /// Players and their resources.
    pub roster: Arc<Roster>,
    /// The tournament's id in the store.
    pub tournament: i64,
    /// The tournament seed.
    pub seed: u64,
    /// Counters for the progress display.
    pub progress: Arc<Progress>,
}

/// How a game run ended.
#[derive(Debug)]
pub enum GameOutcome {
    /// The game is over and stored.
    Finished(GameEnd),
    /// The game could not go on (endpoint down, script error); it stays resumable.
    Errored(String),
}

/// One side of the game, ready to move.
enum Side {
    Llm {
        models: Box<Models>,
        mode: ModeScript,
    },
    Engine {
        lease: EngineLease,
        limits: crate::engine::SearchLimits,
    },
    Random {
        seed: u64,
    },
}

/// Plays (or resumes) the game `row` under `generation` and stores its result.
pub async fn play(env: &GameEnv, row: &GameRow, generation: Arc<Generation>) -> GameOutcome {
    match play_inner(env, row, generation).await {
        Ok(end) => GameOutcome::Finished(end),
        Err(message) => {
            if let Err(e) = env.store.mark_game_errored(row.id, &message) {
                tracing::error!("cannot record that game {} failed: {e}", row.index);
            }
            GameOutcome::Errored(message)
        }
    }
}

async fn play_inner(
    env: &GameEnv,
    row: &GameRow,
    generation: Arc<Generation>,
) -> Result<GameEnd, String> {
    let store = &env.store;
    let db = |e: crate::store::StoreError| e.to_string();
    let max_plies = generation.spec.settings.max_plies;
    let mut game = Game::new(row.start_fen.as_deref(), max_plies)
        .map_err(|e| format!("game {}: {e}", row.index))?;

    // Replay what is stored; on a fresh game, store the opening line as book plies first.
    let stored = store.plies(row.id).map_err(db)?;
    if stored.is_empty() {
        for uci in &row.opening_moves {
            let fen_before = game.fen();
            let played = game
                .play_uci(uci)
                .map_err(|e| format!("game {}: opening move `{uci}`: {e}", row.index))?;
            store
                .record_ply(
                    row.id,
                    &PlyRecord {
                        ply: game.ply() - 1,
                        fen_before,
                        uci: played.uci,
                        san: played.san,
                        player: "book".into(),
                        attempts: 0,
                        elapsed_ms: 0,
                    },
                )
                .map_err(db)?;
        }
    } else {
        for ply in &stored {
            game.play_uci(&ply.uci).map_err(|e| {
                format!(
                    "game {}: stored ply {} (`{}`) does not replay: {e}",
                    row.index, ply.ply, ply.uci
                )
            })?;
        }
    }
    store
        .mark_game_started(row.id, &generation.hash, generation.number)
        .map_err(db)?;
    if let Some(end) = game.end().cloned() {
        return finish(env, row, end);
    }

    let mut white = side(env, &generation, &row.white).await?;
    let mut black = side(env, &generation, &row.black).await?;
    while game.end().is_none() {
        let (mover, name, opponent) = match game.turn() {
            Color::White => (&mut white, &row.white, &row.black),
            Color::Black => (&mut black, &row.black, &row.white),
        };
        let started = Instant::now();
        let ply = game.ply();
        let fen_before = game.fen();
        let (uci, attempts) = match mover {
            Side::Random { seed } => (random_move(&game, env.seed, *seed, row.index), 1),
            Side::Engine { lease, limits } => {
                let moves = game.uci_moves().to_vec();
                let start = (!game.starts_from_initial()).then(|| game.start_fen());
                match lease.best_move(start.as_deref(), &moves, limits).await {
                    Ok(best) => (best.uci, 1),
                    Err(e) => {
                        let reason = format!("engine `{name}` failed: {e}");
                        let _ = store.record_event(
                            env.tournament,
                            Some(row.id),
                            "error",
                            "engine_failure",
                            &reason,
                        );
                        game.adjudicate(GameEnd {
                            result: loss_for(game.turn()),
                            termination: Termination::EngineFailure,
                            reason: Some(reason),
                        });
                        break;
                    }
                }
            }
            Side::Llm { models, mode } => {
                match llm_turn(env, row, &game, models, mode, name, opponent).await? {
                    TurnResult::Move { uci, attempts } => (uci, attempts),
                    TurnResult::Lost {
                        termination,
                        reason,
                    } => {
                        game.adjudicate(GameEnd {
                            result: loss_for(game.turn()),
                            termination,
                            reason: Some(reason),
                        });
                        break;
                    }
                }
            }
        };
        let played = match game.play_uci(&uci) {
            Ok(p) => p,
            Err(e) => {
                // Engines' moves are checked here; LLM moves were checked in llm_turn.
                let reason = format!("`{name}` played `{uci}`, which is not legal: {e}");
                game.adjudicate(GameEnd {
                    result: loss_for(game.turn()),
                    termination: Termination::EngineFailure,
                    reason: Some(reason),
                });
                break;
            }
        };
        store
            .record_ply(
                row.id,
                &PlyRecord {
                    ply,
                    fen_before,
                    uci: played.uci,
                    san: played.san,
                    player: name.clone(),
                    attempts,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                },
            )
            .map_err(db)?;
        env.progress.ply();
    }
    let end = game.end().cloned().expect("the loop ends with the game");
    finish(env, row, end)
}

fn finish(env: &GameEnv, row: &GameRow, end: GameEnd) -> Result<GameEnd, String> {
    env.store
        .finish_game(
            row.id,
            end.result.as_pgn(),
            end.termination.as_str(),
            end.reason.as_deref(),
        )
        .map_err(|e| e.to_string())?;
    Ok(end)
}

fn loss_for(color: Color) -> GameResult {
    match color {
        Color::White => GameResult::BlackWins,
        Color::Black => GameResult::WhiteWins,
    }
}

async fn side(env: &GameEnv, generation: &Generation, name: &str) -> Result<Side, String> {
    let participant =
        env.roster.players.get(name).ok_or_else(|| {
            format!("player `{name}` is scheduled but not in the tournament script")
        })?;
    Ok(match participant {
        Participant::Random { seed } => Side::Random { seed: *seed },
        Participant::Engine { pool, limits } => Side::Engine {
            lease: pool
                .lease()
                .await
                .map_err(|e| format!("cannot start engine `{name}`: {e}"))?,
            limits: *limits,
        },
        Participant::Llm { .. } | Participant::Moa { .. } => {
            // Prompt-side settings come from the game's generation, so a reload can change them.
            let spec = generation
                .spec
                .player(name)
                .ok_or_else(|| format!("player `{name}` is not in this generation"))?;
            let binding = spec
                .mode_binding()
                .ok_or_else(|| format!("player `{name}` has no play mode in this generation"))?;
            let mode = ModeScript::for_game(generation, binding).map_err(|e| e.to_string())?;
            Side::Llm {
                models: Box::new(Models::for_player(spec, participant)?),
                mode,
            }
        }
    })
}

/// A uniform choice among the legal moves, seeded by the tournament, the player, the game and the
/// ply: reproducible, and the same again when a game is resumed.
fn random_move(game: &Game, tournament_seed: u64, player_seed: u64, index: u32) -> String {
    let legal = render::legal_uci(game.position());
    let seed = mix(
        mix(mix(tournament_seed, player_seed), u64::from(index)),
        u64::from(game.ply()),
    );
    let mut rng = StdRng::seed_from_u64(seed);
    let i = rand::RngExt::random_range(&mut rng, 0..legal.len());
    legal[i].clone()
}

/// SplitMix64 step: spreads small inputs over the whole seed space.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

enum TurnResult {
    Move {
        uci: String,
        attempts: u32,
    },
    /// The mover loses without a move: a forfeit, too many wrong actions, or max turns.
    Lost {
        termination: Termination,
        reason: String,
    },
}

/// One LLM ply: the dialog between the play mode and the model until a move, a loss by protocol
/// failure, or an error that sets the game aside.
///
/// Each model reply is one dialog turn. `say` answers it without spending an attempt; `retry`
/// and a refused move spend one. Using up `max_attempts` loses by too many wrong actions; using up
/// the turns (`max_turns`, at most [`MAX_CALLS_PER_PLY`]) loses by max turns.
async fn llm_turn(
    env: &GameEnv,
    row: &GameRow,
    game: &Game,
    models: &Models,
    mode: &ModeScript,
    name: &str,
    opponent: &str,
) -> Result<TurnResult, String> {
    let store = &env.store;
    let ply = game.ply();
    // Replies already stored for this ply (a resumed game): used instead of new requests.
    let stored = store.llm_calls(row.id, ply).map_err(|e| e.to_string())?;
    let mut ctx = context(game, row, mode, name, opponent);
    ctx.previous_dialog = previous_dialog(store, row.id, ply, models.calls_per_turn())?;
    let opening = mode.start(&ctx).map_err(|e| e.to_string())?;
    let mut dialog = opening.messages;
    let mut request_extra = opening.request;
    let mut attempt = 1;
    let mut last_failure;
    let max_turns = mode
        .max_turns()
        .unwrap_or(MAX_CALLS_PER_PLY)
        .min(MAX_CALLS_PER_PLY);
    for turn in 0..max_turns {
        let answer = ask::ask(
            env,
            row,
            ply,
            turn,
            models,
            name,
            &dialog,
            &request_extra,
            &stored,
        )
        .await?;
        let (text, call_id) = (answer.text, answer.call_id);
        dialog.push(ChatMessage::new("assistant", text.clone()));
        ctx.dialog = dialog.clone();
        ctx.reasoning = answer.reasoning;
        ctx.attempt = attempt;
        let decision = mode.reply(&ctx, &text).map_err(|e| e.to_string())?;
        let outcome = |default: &str| decision.outcome.clone().unwrap_or_else(|| default.into());
        let set_outcome = |kind: &str, detail: Option<&str>| {
            store
                .set_llm_call_outcome(call_id, kind, detail)
                .map_err(|e| e.to_string())
        };
        let feedback = match &decision.action {
            Action::Move(uci) => match game.parse_uci(uci) {
                Ok(_) => {
                    set_outcome(&outcome("move"), None)?;
                    return Ok(TurnResult::Move {
                        uci: uci.clone(),
                        attempts: attempt,
                    });
                }
                Err(e) => {
                    // The mode accepted a move the board refuses: count it as illegal.
                    let message = format!("`{uci}` is not a legal move in this position ({e}).");
                    set_outcome("illegal", Some(&message))?;
                    last_failure = "illegal".into();
                    Some(message)
                }
            },
            Action::Retry(retry) => {
                let kind = outcome("retry");
                let detail = match retry {
                    RetryAction::Feedback(text) => Some(text.as_str()),
                    RetryAction::Reset => None,
                };
                set_outcome(&kind, detail)?;
                last_failure = kind;
                match retry {
                    RetryAction::Feedback(text) => Some(text.clone()),
                    RetryAction::Reset => None,
                }
            }
            Action::Say(text) => {
                set_outcome(&outcome("say"), None)?;
                dialog.push(ChatMessage::new("user", text.clone()));
                continue;
            }
            Action::Forfeit(reason) => {
                set_outcome(&outcome("forfeit"), Some(reason))?;
                return Ok(TurnResult::Lost {
                    termination: Termination::Forfeit,
                    reason: format!("`{name}` forfeits: {reason}"),
                });
            }
        };
        // A failed attempt.
        if attempt >= mode.max_attempts() {
            let termination = mode.exhausted();
            let reason = match termination {
                Termination::TooManyWrongActions => format!(
                    "`{name}` made too many wrong actions: {attempt} failed attempts at ply {ply} (last: {last_failure})"
                ),
                _ => format!(
                    "`{name}` forfeits: no acceptable move in {attempt} attempts at ply {ply} (last: {last_failure})"
                ),
            };
            return Ok(TurnResult::Lost {
                termination,
                reason,
            });
        }
        attempt += 1;
        ctx.attempt = attempt;
        match feedback {
            Some(text) => dialog.push(ChatMessage::new("user", text)),
            None => {
                ctx.dialog = Vec::new();
                let opening = mode.start(&ctx).map_err(|e| e.to_string())?;
                dialog = opening.messages;
                request_extra = opening.request;
            }
        }
    }
    Ok(TurnResult::Lost {
        termination: Termination::MaxTurns,
        reason: format!(
            "`{name}` reached max turns: {max_turns} dialog turns at ply {ply} without a move"
        ),
    })
}

fn context(
    game: &Game,
    row: &GameRow,
    mode: &ModeScript,
    name: &str,
    opponent: &str,
) -> TurnContext {
    let pos = game.position();
    TurnContext {
        fen: game.fen(),
        start_fen: game.start_fen(),
        side: match game.turn() {
            Color::White => "white",
            Color::Black => "black",
        },
        ply: game.ply(),
        move_number: pos.fullmoves().get(),
        legal_uci: render::legal_uci(pos),
        legal_san: render::legal_san(pos),
        history_uci: game.uci_moves().to_vec(),
        history_san: game.san_moves().to_vec(),
        last_move: game.uci_moves().last().cloned(),
        attempt: 1,
        max_attempts: mode.max_attempts(),
        player: name.to_string(),
        opponent: opponent.to_string(),
        game: row.index,
        options: mode.options().clone(),
        dialog: Vec::new(),
        previous_dialog: Vec::new(),
        reasoning: None,
    }
}

/// The final dialog of the same side's previous ply, rebuilt from the store (so a resumed game sees
/// exactly what an uninterrupted one would): the last turn's messages plus its reply. For a
/// mixture of agents the messages are the first proposer's (the dialog itself, not the
/// synthesizer's merged prompt) and the reply is the synthesizer's.
fn previous_dialog(
    store: &Store,
    game_id: i64,
    ply: u32,
    calls_per_turn: u32,
) -> Result<Vec<ChatMessage>, String> {
    let Some(previous) = ply.checked_sub(2) else {
        return Ok(Vec::new());
    };
    let calls = store
        .llm_calls(game_id, previous)
        .map_err(|e| e.to_string())?;
    let Some(last) = calls.iter().max_by_key(|c| c.call.seq) else {
        return Ok(Vec::new());
    };
    let first_of_turn = last.call.seq / calls_per_turn.max(1) * calls_per_turn.max(1);
    let asked = calls
        .iter()
        .find(|c| c.call.seq == first_of_turn)
        .unwrap_or(last);
    let request: ChatRequest = serde_json::from_str(&asked.call.request_json)
        .map_err(|e| format!("the stored request of ply {previous} cannot be read back: {e}"))?;
    let mut dialog = request.messages;
    if let Some(reply) = &last.call.reply_text {
        dialog.push(ChatMessage::new("assistant", reply.clone()));
    }
    Ok(dialog)
}
