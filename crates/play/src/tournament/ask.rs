//! One dialog turn of a model player: the request (or, for a mixture of agents, the proposers'
//! requests and the synthesizer's), each stored before its reply is used.
//!
//! Store layout: every model call is its own `llm_calls` row, so tokens and cost add up over all of
//! them. A plain LLM player makes one call per turn, with `seq` equal to the turn number. A mixture
//! of `k` proposers makes `k + 1` calls per turn: proposer `i` (0-based) has
//! `seq = turn · (k + 1) + i` and the synthesizer `seq = turn · (k + 1) + k`; their
//! `request_json` carries an extra `"arena_role"` field (`"proposer_1"`, ..., `"synthesizer"`), and
//! proposer rows get the outcome `proposal`. The play mode only ever reads the synthesizer's reply,
//! and its outcome is set on the synthesizer's row. A resumed game re-reads every stored reply
//! (proposals included) instead of asking again.
//!
//! A player that votes (`samples = n`, see [`super::vote`]) makes `n` calls per turn, all asking
//! the same messages: sample `i` (0-based) has `seq = turn · n + i` and the role `sample_<i + 1>`.
//! The play mode reads every sample; the one whose decision the attempt takes gets the mode's
//! outcome, every other the outcome `sample`.

use futures_util::future::join_all;

use super::{GameError, env::GameEnv, players::Participant};
use crate::{
    calls::{self, CallError, CallRow, CallSlot, StoredReply},
    llm::{ChatMessage, Endpoint, Provider, ToolCall, ToolSpec},
    spec::{ModelSpec, PlayerSpec},
    store::{Leased, LlmCallRow},
};

pub use crate::store::PROPOSAL_OUTCOME;

/// What the synthesizer is told it does (our own words).
const SYNTHESIZER_SYSTEM: &str = "Several assistants were given the same conversation and each \
wrote a reply to its last message. Their replies follow that message below. Some of them may be \
wrong. Weigh them, keep what is correct, and write the one reply that should be sent, exactly in \
the form the conversation asks for. Do not comment on the assistants or their replies.";

/// The model or models behind a player, with their endpoints.
#[derive(Debug, Clone)]
pub enum Models {
    /// One model.
    Single {
        /// Its settings.
        spec: ModelSpec,
        /// Where requests go.
        endpoint: Endpoint,
    },
    /// A mixture of agents.
    Moa {
        /// The proposers, in script order.
        proposers: Vec<(ModelSpec, Endpoint)>,
        /// The synthesizer.
        synthesizer: (ModelSpec, Endpoint),
    },
}

impl Models {
    /// The models of `spec` (an LLM or MoA player) joined with the roster's endpoints; `None`
    /// when the player is not a model player in the roster, or the roster disagrees with the
    /// spec.
    pub(crate) fn for_player(spec: &PlayerSpec, participant: &Participant) -> Option<Models> {
        match (spec, participant) {
            (PlayerSpec::Llm(llm), Participant::Llm { endpoint }) => Some(Models::Single {
                spec: llm.model_spec(),
                endpoint: endpoint.clone(),
            }),
            (
                PlayerSpec::Moa(moa),
                Participant::Moa {
                    proposers,
                    synthesizer,
                },
            ) if proposers.len() == moa.proposers.len() => Some(Models::Moa {
                proposers: moa
                    .proposers
                    .iter()
                    .cloned()
                    .zip(proposers.clone())
                    .collect(),
                synthesizer: (moa.synthesizer.clone(), synthesizer.clone()),
            }),
            _ => None,
        }
    }

    /// Stored calls per dialog turn: 1, or proposers + 1.
    pub(crate) fn calls_per_turn(&self) -> u32 {
        match self {
            Models::Single { .. } => 1,
            Models::Moa { proposers, .. } => proposers.len() as u32 + 1,
        }
    }
}

/// The reply a play mode reads for one dialog turn.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The reply text (reasoning already split off).
    pub text: String,
    /// Reasoning text, if any.
    pub reasoning: Option<String>,
    /// The row the mode's outcome goes to (the synthesizer's for a mixture).
    pub row: CallRow,
    /// What the turn costs the player's chess clock: its call's successful attempt (for a
    /// mixture, the slowest proposer, since they run at once, plus the synthesizer); a replayed
    /// reply costs what it took when it was made.
    pub charged_ms: u64,
    /// The tools the reply called.
    pub tool_calls: Vec<ToolCall>,
    /// Why generation stopped (`length`: cut at the token limit, see
    /// [`calls::is_cut_off`]), when the provider said.
    pub finish_reason: Option<String>,
    /// The reasoning blocks that go back with the reply's text in the dialog
    /// ([`ChatMessage::thinking`]); empty for a mixture's synthesis, whose reasoning belongs to
    /// another model than the proposers the dialog goes back to.
    pub thinking: Vec<serde_json::Value>,
}

impl Answer {
    /// The reply as the dialog's `assistant` message: its text, the tools it called and, in a
    /// dialog without tool calls, the reasoning blocks the provider wants back (with tool calls
    /// they ride on the first call, [`ToolCall::thinking`]).
    pub fn message(&self) -> ChatMessage {
        let mut message = ChatMessage::assistant(self.text.clone(), self.tool_calls.clone());
        if self.tool_calls.is_empty() {
            message.thinking = self.thinking.clone();
        }
        message
    }
}

/// One dialog turn of a ply: where its calls are stored and what they ask.
pub struct Turn<'a> {
    /// The game's id in the store.
    pub game_id: i64,
    /// The ply.
    pub ply: u32,
    /// The dialog turn within the ply (0-based).
    pub turn: u32,
    /// The player's name.
    pub player: &'a str,
    /// The dialog so far: what every model of the turn is asked.
    pub dialog: &'a [ChatMessage],
    /// Extra request fields the mode asked for at this ply.
    pub extra: &'a serde_json::Map<String, serde_json::Value>,
    /// The tools the mode offers at this ply.
    pub tools: &'a [ToolSpec],
    /// Replies already stored for this ply (a resumed game), used instead of new requests.
    pub stored: &'a [LlmCallRow],
    /// Earlier attempts of the game's slot (a replay of a void game), newest first: their
    /// replies to the very same request at this ply are reused.
    pub earlier: &'a [i64],
    /// The most a new request may take on the player's chess clock, if it plays on one.
    pub clock: Option<std::time::Duration>,
    /// The game's lease, which every write of the turn carries.
    pub lease: Leased<'a>,
}

/// Gets the reply of one dialog turn: stored replies are reused, missing ones requested.
///
/// # Errors
/// An endpoint that stays down or refuses, or a store failure; the game is then set aside.
pub async fn ask(env: &GameEnv, models: &Models, turn: &Turn<'_>) -> Result<Answer, GameError> {
    match models {
        Models::Single { spec, endpoint } => {
            one(
                env,
                turn,
                turn.turn,
                None,
                spec,
                endpoint,
                turn.dialog.to_vec(),
            )
            .await
        }
        Models::Moa { .. } if !turn.tools.is_empty() => Err(GameError::Script {
            player: turn.player.to_string(),
            source: crate::script::ScriptError::bare(
                "a mixture of agents cannot play through tools: its synthesizer reads the proposers' text (use `actions = \"text\"`)",
            ),
        }),
        Models::Moa {
            proposers,
            synthesizer,
        } => {
            let k = proposers.len() as u32;
            let base = turn.turn * (k + 1);
            let synth_seq = base + k;
            // The synthesis's thinking stays out of the proposers' dialog (see `Answer`): no
            // provider reads it back.
            let synthesized = synthesizer.1.provider;
            if let Some(stored) = stored_reply(turn.stored, synth_seq, synthesized, false) {
                // Replayed whole: the proposals of this turn are stored too.
                let proposing = (base..synth_seq)
                    .filter_map(|seq| stored_reply(turn.stored, seq, synthesized, false))
                    .map(|p| p.latency_ms)
                    .max()
                    .unwrap_or(0);
                let mut answer = answer(stored);
                answer.charged_ms += proposing;
                answer.thinking.clear();
                return Ok(answer);
            }
            let roles: Vec<String> = (1..=proposers.len())
                .map(|i| format!("proposer_{i}"))
                .collect();
            let proposals = join_all(proposers.iter().zip(&roles).enumerate().map(
                |(i, ((spec, endpoint), role))| {
                    let seq = base + i as u32;
                    one(
                        env,
                        turn,
                        seq,
                        Some(role),
                        spec,
                        endpoint,
                        turn.dialog.to_vec(),
                    )
                },
            ))
            .await;
            let mut texts = Vec::with_capacity(proposals.len());
            let mut proposing = 0;
            for p in proposals {
                let p = p?;
                p.row.settle(turn.lease, PROPOSAL_OUTCOME, None, None)?;
                proposing = proposing.max(p.charged_ms);
                texts.push(p.text);
            }
            let (spec, endpoint) = synthesizer;
            let messages = synthesis_prompt(turn.dialog, &texts);
            let left = turn
                .clock
                .map(|c| c.saturating_sub(std::time::Duration::from_millis(proposing)));
            let synthesizing = Turn {
                clock: left,
                ..*turn
            };
            let mut answer = one(
                env,
                &synthesizing,
                synth_seq,
                Some("synthesizer"),
                spec,
                endpoint,
                messages,
            )
            .await?;
            answer.charged_ms += proposing;
            answer.thinking.clear();
            Ok(answer)
        }
    }
}

/// Gets `n` samples of one dialog turn of a single model, asked at once: sample `i` (0-based) is
/// stored with `seq = turn · n + i` and `"arena_role": "sample_<i + 1>"`, and its request's seed
/// (if the player sets one) is the player's plus `i` (see [`super::vote::sample_seed`]). Stored
/// samples are reused, missing ones requested; every answer is stored before it is returned.
///
/// # Errors
/// The first failed sample's error, in sample order (every sample that came back is stored).
pub(crate) async fn ask_samples(
    env: &GameEnv,
    spec: &ModelSpec,
    endpoint: &Endpoint,
    turn: &Turn<'_>,
    n: u32,
) -> Result<Vec<Answer>, GameError> {
    let base = turn.turn * n;
    let roles: Vec<String> = (1..=n).map(|i| format!("sample_{i}")).collect();
    let specs: Vec<ModelSpec> = (0..n)
        .map(|i| ModelSpec {
            seed: super::vote::sample_seed(spec.seed, i),
            ..spec.clone()
        })
        .collect();
    let answers = join_all(
        specs
            .iter()
            .zip(&roles)
            .enumerate()
            .map(|(i, (spec, role))| {
                one(
                    env,
                    turn,
                    base + i as u32,
                    Some(role),
                    spec,
                    endpoint,
                    turn.dialog.to_vec(),
                )
            }),
    )
    .await;
    answers.into_iter().collect()
}

/// The reply stored for call `seq`, its tool calls read from its body by `tools_of` (the
/// endpoint's wire format, when the ply offers tools).
fn stored_reply(
    stored: &[LlmCallRow],
    seq: u32,
    provider: Provider,
    with_tools: bool,
) -> Option<StoredReply> {
    stored.iter().find(|c| c.call.seq == seq).and_then(|c| {
        let tool_calls = match &c.call.raw_body {
            Some(body) if with_tools => provider.stored_tool_calls(body),
            _ => Vec::new(),
        };
        let thinking = c
            .call
            .raw_body
            .as_deref()
            .map(|body| provider.stored_thinking(body))
            .unwrap_or_default();
        Some(StoredReply {
            text: c.call.reply_text.clone()?,
            reasoning: c.call.reasoning.clone(),
            row_id: Some(c.id),
            latency_ms: c.call.latency_ms,
            tool_calls,
            finish_reason: c.call.finish_reason.clone(),
            thinking,
        })
    })
}

fn answer(stored: StoredReply) -> Answer {
    let reply = calls::replayed(stored);
    Answer {
        text: reply.text,
        reasoning: reply.reasoning,
        row: reply.row,
        charged_ms: reply.latency_ms,
        tool_calls: reply.tool_calls,
        finish_reason: reply.finish_reason,
        thinking: reply.thinking,
    }
}

/// One call: the stored reply, or a new request recorded before it is returned.
async fn one(
    env: &GameEnv,
    turn: &Turn<'_>,
    seq: u32,
    role: Option<&str>,
    spec: &ModelSpec,
    endpoint: &Endpoint,
    messages: Vec<ChatMessage>,
) -> Result<Answer, GameError> {
    let slot = CallSlot::Ply {
        game_id: turn.game_id,
        ply: turn.ply,
        seq,
        player: turn.player,
        role,
        earlier: turn.earlier,
        lease: turn.lease,
    };
    let mut request = calls::request(spec, messages, turn.extra);
    request.tools = turn.tools.to_vec();
    let stored = stored_reply(turn.stored, seq, endpoint.provider, !turn.tools.is_empty());
    let asked = stored.is_none();
    let reply = calls::record_or_replay_within(
        &env.store,
        &env.roster.client,
        endpoint,
        slot,
        &request,
        stored,
        turn.clock,
    )
    .await
    .map_err(|e| match e {
        CallError::Api(source) => {
            let error = GameError::Api {
                player: turn.player.to_string(),
                role: role.map(str::to_string),
                source: Box::new(source),
            };
            let kind = match &error {
                // A loss on time, not an endpoint fault: the game records it.
                GameError::Api { source, .. }
                    if matches!(**source, crate::llm::LlmError::OutOfTime { .. }) =>
                {
                    return error;
                }
                GameError::Api { source, .. } if source.is_transient() => "endpoint_unreachable",
                _ => "endpoint_error",
            };
            let _ = turn
                .lease
                .record_event(env.tournament, "error", kind, &error.to_string());
            error
        }
        CallError::Store(e) => GameError::Store(e),
        CallError::Encode(e) => GameError::Encode(e),
    })?;
    if asked {
        env.progress.llm_call(reply.new_tokens);
    }
    Ok(Answer {
        text: reply.text,
        reasoning: reply.reasoning,
        row: reply.row,
        charged_ms: reply.latency_ms,
        tool_calls: reply.tool_calls,
        finish_reason: reply.finish_reason,
        thinking: reply.thinking,
    })
}

/// The synthesizer's messages: our instructions (with the conversation's own system message, if
/// any), the conversation up to its last message, and that last message followed by every
/// proposal.
pub(crate) fn synthesis_prompt(dialog: &[ChatMessage], proposals: &[String]) -> Vec<ChatMessage> {
    let mut system = SYNTHESIZER_SYSTEM.to_string();
    let mut rest: Vec<ChatMessage> = Vec::new();
    for m in dialog {
        if m.role == "system" {
            system.push_str("\n\nThe conversation's own instructions were:\n");
            system.push_str(&m.content);
        } else {
            rest.push(m.clone());
        }
    }
    let last = rest.pop();
    let mut merged = String::new();
    if let Some(last) = &last {
        merged.push_str("The last message of the conversation:\n\n");
        merged.push_str(&last.content);
        merged.push_str("\n\n");
    }
    for (i, p) in proposals.iter().enumerate() {
        merged.push_str(&format!(
            "--- Reply of assistant {} ---\n{}\n\n",
            i + 1,
            p.trim()
        ));
    }
    merged.push_str("--- End of the replies ---\nWrite the reply that should be sent.");
    let mut messages = vec![ChatMessage::new("system", system)];
    messages.extend(rest);
    messages.push(ChatMessage::new("user", merged));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthesis_prompt_carries_the_question_and_every_proposal() {
        let dialog = vec![
            ChatMessage::new("system", "Play chess."),
            ChatMessage::new("user", "Your move."),
            ChatMessage::new("assistant", "get_current_board"),
            ChatMessage::new("user", "BOARD"),
        ];
        let m = synthesis_prompt(&dialog, &["make_move e2e4".into(), "make_move d2d4".into()]);
        assert_eq!(m.len(), 4, "system, two earlier turns, the merged turn");
        assert_eq!(m[0].role, "system");
        assert!(m[0].content.contains("Play chess."));
        assert_eq!(m[1].content, "Your move.");
        assert_eq!(m[2].role, "assistant");
        let last = &m[3].content;
        assert!(last.contains("BOARD"), "{last}");
        assert!(last.contains("assistant 1 ---\nmake_move e2e4"), "{last}");
        assert!(last.contains("assistant 2 ---\nmake_move d2d4"), "{last}");
        assert!(last.find("e2e4") < last.find("d2d4"));
    }
}
