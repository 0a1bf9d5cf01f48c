//! Where an item's replies come from: the store first (a resumed item, or a re-scoring), then
//! the player itself. A language model answers the task script's prompt; engines and the random
//! player answer natively, in the answer format the task scripts read:
//!
//! | task | engine | random |
//! | --- | --- | --- |
//! | basic understanding | reads the board (the ceiling: always right) | a random piece letter or empty, and 0–4 moves from the square to random squares |
//! | move selection, puzzles | its best move within its limits | a uniform random legal move |
//! | board reconstruction | plays the moves (always right) | the FEN after as many random moves from the same start |
//!
//! Engines know the rules, so their basic-understanding and reconstruction rows only check the
//! pipeline and give the upper bound; the random rows are the floor.

use std::hash::{DefaultHasher, Hash, Hasher};

use rand::{RngExt, SeedableRng, rngs::StdRng};
use shakmaty::{CastlingMode, Position, Square, uci::UciMove};

use super::{datasets::BasicItem, items::ReconstructionItem, lenient_position};
use crate::{
    board::game::fen_of,
    calls::{self, CallError, CallSlot, StoredReply},
    engine::{EnginePool, SearchLimits},
    llm::{ChatMessage, ChatRequest, Endpoint, LlmClient},
    spec::LlmPlayerSpec,
    store::{EvalReplyRecord, Store},
};

/// What a player without a prompt needs to answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Native<'a> {
    /// Name the piece on a square and its moves.
    Basic(&'a BasicItem),
    /// Choose a move in this position.
    Move(&'a str),
    /// State the FEN after these moves.
    Reconstruction(&'a ReconstructionItem),
}

/// A live player.
pub(crate) enum Answerer<'a> {
    /// A language model.
    Llm {
        spec: &'a LlmPlayerSpec,
        endpoint: &'a Endpoint,
        client: &'a LlmClient,
    },
    /// A UCI engine.
    Engine {
        pool: &'a EnginePool,
        limits: &'a SearchLimits,
    },
    /// The seeded random player.
    Random { seed: u64 },
    /// Stored replies only: a re-scoring never calls anyone.
    ReplayOnly,
    /// A language model asked through a batch: stored replies are replayed, and the first
    /// call without one stops the item with [`ReplyError::Deferred`], which carries the
    /// request to put into the next batch.
    Collect { spec: &'a LlmPlayerSpec },
}

impl Answerer<'_> {
    /// Whether this player reads prompts.
    pub(crate) fn reads_prompts(&self) -> bool {
        matches!(
            self,
            Answerer::Llm { .. } | Answerer::ReplayOnly | Answerer::Collect { .. }
        )
    }
}

/// Why an item could not get a reply.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplyError {
    /// The model call failed (after its retries) or its reply could not be stored: the item
    /// stays open and resumes later.
    #[error("the model call failed: {0}")]
    Llm(#[from] CallError),
    /// A model player without a place to store its replies (a bug: every live run records).
    #[error("a model reply would not be stored")]
    Unrecorded,
    /// The engine failed.
    #[error("the engine failed: {0}")]
    Engine(String),
    /// Replaying: the stored replies ran out (the new parser took another path).
    #[error("the stored replies ran out after {0} call(s)")]
    Exhausted(usize),
    /// The reply could not be stored.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// Collecting for a batch: call `seq` of the item has no stored reply yet; `request` is
    /// what to ask.
    #[error("call {seq} waits for a batch")]
    Deferred {
        /// The call's number within the item.
        seq: u32,
        /// The request.
        request: Box<ChatRequest>,
    },
}

/// Where the stored replies are written.
pub(crate) struct Recorder<'a> {
    pub store: &'a Store,
    pub run_id: i64,
    pub task: &'a str,
    pub player: &'a str,
    pub idx: u32,
}

/// The replies of one player to one item, stored ones first.
pub(crate) struct ReplySource<'a> {
    pub stored: Vec<EvalReplyRecord>,
    pub next: usize,
    pub answerer: Answerer<'a>,
    pub recorder: Option<Recorder<'a>>,
    /// Seed material for the random player: (task, player, item).
    pub salt: (String, String, u32),
}

impl ReplySource<'_> {
    /// Calls made so far.
    pub(crate) fn calls(&self) -> usize {
        self.next
    }

    /// The next reply: a stored one if there is one, else a live answer, stored before it is
    /// returned; with the reasoning text the provider returned beside it, if any.
    pub(crate) async fn reply(
        &mut self,
        messages: &[ChatMessage],
        native: Native<'_>,
    ) -> Result<Reply, ReplyError> {
        let seq = self.next;
        let stored = self.stored.get(seq).cloned();
        let reply = match (&self.answerer, &self.recorder, stored) {
            // Models go through the one record-or-replay path that games use too.
            (
                Answerer::Llm {
                    spec,
                    endpoint,
                    client,
                },
                Some(r),
                stored,
            ) => {
                let request =
                    calls::request(&spec.model_spec(), messages.to_vec(), &Default::default());
                let slot = CallSlot::EvalItem {
                    run_id: r.run_id,
                    task: r.task,
                    player: r.player,
                    idx: r.idx,
                    seq: seq as u32,
                };
                let stored = stored.map(|s| StoredReply {
                    text: s.reply_text,
                    reasoning: s.reasoning,
                    row_id: None,
                    latency_ms: s.latency_ms,
                    tool_calls: Vec::new(),
                    finish_reason: None,
                    thinking: Vec::new(),
                });
                let reply =
                    calls::record_or_replay(r.store, client, endpoint, slot, &request, stored)
                        .await?;
                Reply {
                    text: reply.text,
                    reasoning: reply.reasoning,
                }
            }
            (Answerer::Llm { .. }, None, _) => return Err(ReplyError::Unrecorded),
            (_, _, Some(stored)) => Reply {
                text: stored.reply_text,
                reasoning: stored.reasoning,
            },
            (Answerer::ReplayOnly, _, None) => return Err(ReplyError::Exhausted(seq)),
            (Answerer::Collect { spec }, _, None) => {
                let request =
                    calls::request(&spec.model_spec(), messages.to_vec(), &Default::default());
                return Err(ReplyError::Deferred {
                    seq: seq as u32,
                    request: Box::new(request),
                });
            }
            (Answerer::Engine { pool, limits }, recorder, None) => {
                let record = native_record(seq, engine_answer(pool, limits, native).await?);
                Reply::plain(record_native(recorder.as_ref(), record)?)
            }
            (Answerer::Random { seed }, recorder, None) => {
                let mut h = DefaultHasher::new();
                (seed, &self.salt, seq).hash(&mut h);
                let mut rng = StdRng::seed_from_u64(h.finish());
                let record = native_record(seq, random_answer(&mut rng, native));
                Reply::plain(record_native(recorder.as_ref(), record)?)
            }
        };
        self.next += 1;
        Ok(reply)
    }
}

/// One reply to an item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    /// The answer (reasoning split off).
    pub text: String,
    /// The reasoning text the provider returned beside it, if any.
    pub reasoning: Option<String>,
}

impl Reply {
    fn plain(text: String) -> Reply {
        Reply {
            text,
            reasoning: None,
        }
    }
}

/// Stores an engine's or the random player's answer (when the run records) and returns its text.
fn record_native(
    recorder: Option<&Recorder<'_>>,
    record: EvalReplyRecord,
) -> Result<String, ReplyError> {
    if let Some(r) = recorder {
        r.store
            .record_eval_reply(r.run_id, r.task, r.player, r.idx, &record)?;
    }
    Ok(record.reply_text)
}

fn native_record(seq: usize, text: String) -> EvalReplyRecord {
    EvalReplyRecord {
        seq: seq as u32,
        prompt_json: None,
        reply_text: text,
        reasoning: None,
        prompt_tokens: Some(0),
        completion_tokens: Some(0),
        latency_ms: 0,
        details: Default::default(),
    }
}

fn json_block(piece: Option<&str>, moves: &[String]) -> String {
    format!(
        "```json\n{}\n```",
        serde_json::json!({"piece": piece, "legal_moves": moves})
    )
}

async fn engine_answer(
    pool: &EnginePool,
    limits: &SearchLimits,
    native: Native<'_>,
) -> Result<String, ReplyError> {
    Ok(match native {
        Native::Basic(item) => {
            let truth = BasicItem::from_position(&item.fen, &item.square)
                .map_err(|e| ReplyError::Engine(e.to_string()))?;
            json_block(truth.piece.as_deref(), &truth.legal_moves)
        }
        Native::Reconstruction(item) => format!("```\n{}\n```", item.fen),
        Native::Move(fen) => {
            let engine = pool
                .lease()
                .await
                .map_err(|e| ReplyError::Engine(e.to_string()))?;
            let best = engine
                .best_move(Some(fen), &[], limits)
                .await
                .map_err(|e| ReplyError::Engine(e.to_string()))?;
            format!("```\n{}\n```", best.uci)
        }
    })
}

fn random_answer(rng: &mut StdRng, native: Native<'_>) -> String {
    match native {
        Native::Basic(item) => {
            const PIECES: [&str; 12] = ["K", "Q", "R", "B", "N", "P", "k", "q", "r", "b", "n", "p"];
            let pick = rng.random_range(0..=PIECES.len());
            let piece = PIECES.get(pick).copied();
            let from: Square = item.square.parse().unwrap_or(Square::A1);
            let moves: Vec<String> = (0..rng.random_range(0..5u32))
                .map(|_| {
                    let to = Square::new(rng.random_range(0..64u32));
                    format!("{from}{to}")
                })
                .collect();
            json_block(piece, &moves)
        }
        Native::Move(fen) => match lenient_position(fen) {
            Ok(pos) => {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    String::new()
                } else {
                    let mv = legal[rng.random_range(0..legal.len())];
                    format!(
                        "```\n{}\n```",
                        UciMove::from_move(mv, CastlingMode::Standard)
                    )
                }
            }
            Err(_) => String::new(),
        },
        Native::Reconstruction(item) => {
            let mut pos = item
                .start_fen
                .as_deref()
                .and_then(|f| lenient_position(f).ok())
                .unwrap_or_default();
            for _ in 0..item.moves_uci.len() {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.random_range(0..legal.len())];
                pos.play_unchecked(mv);
            }
            format!("```\n{}\n```", fen_of(&pos))
        }
    }
}
