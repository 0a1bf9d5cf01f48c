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

use futures_util::future::join_all;

use super::{
    game::GameEnv,
    players::Participant,
    spec::{ModelSpec, PlayerSpec},
};
use crate::{
    llm::{ChatMessage, ChatRequest, Endpoint},
    store::{GameRow, LlmCallRecord, LlmCallRow},
};

/// The outcome stored on a proposer's row: its reply went to the synthesizer, not to the mode.
pub const PROPOSAL_OUTCOME: &str = "proposal";

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
    /// The models of `spec` (an LLM or MoA player) joined with the roster's endpoints.
    ///
    /// # Errors
    /// When the player is not a model player, or the roster disagrees with the spec.
    pub fn for_player(spec: &PlayerSpec, participant: &Participant) -> Result<Models, String> {
        match (spec, participant) {
            (PlayerSpec::Llm(llm), Participant::Llm { endpoint }) => Ok(Models::Single {
                spec: llm.model_spec(),
                endpoint: endpoint.clone(),
            }),
            (
                PlayerSpec::Moa(moa),
                Participant::Moa {
                    proposers,
                    synthesizer,
                },
            ) if proposers.len() == moa.proposers.len() => Ok(Models::Moa {
                proposers: moa
                    .proposers
                    .iter()
                    .cloned()
                    .zip(proposers.clone())
                    .collect(),
                synthesizer: (moa.synthesizer.clone(), synthesizer.clone()),
            }),
            _ => Err(format!(
                "player `{}` is not a model player in this tournament",
                spec.name()
            )),
        }
    }

    /// Stored calls per dialog turn: 1, or proposers + 1.
    pub fn calls_per_turn(&self) -> u32 {
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
    /// The row whose outcome the game loop sets (the synthesizer's for a mixture).
    pub call_id: i64,
}

/// Where one call of a turn is stored and what it asks.
struct Call<'a> {
    seq: u32,
    role: Option<String>,
    spec: &'a ModelSpec,
    endpoint: &'a Endpoint,
    messages: Vec<ChatMessage>,
}

/// Gets the reply of dialog turn `turn` at `ply`: stored replies are reused, missing ones requested.
///
/// # Errors
/// An endpoint that stays down or refuses, or a store failure; the game is then set aside.
#[allow(clippy::too_many_arguments)]
pub async fn ask(
    env: &GameEnv,
    row: &GameRow,
    ply: u32,
    turn: u32,
    models: &Models,
    name: &str,
    dialog: &[ChatMessage],
    extra: &serde_json::Map<String, serde_json::Value>,
    stored: &[LlmCallRow],
) -> Result<Answer, String> {
    match models {
        Models::Single { spec, endpoint } => {
            let call = Call {
                seq: turn,
                role: None,
                spec,
                endpoint,
                messages: dialog.to_vec(),
            };
            one(env, row, ply, name, &call, extra, stored).await
        }
        Models::Moa {
            proposers,
            synthesizer,
        } => {
            let k = proposers.len() as u32;
            let base = turn * (k + 1);
            let synth_seq = base + k;
            if let Some(answer) = stored_answer(stored, synth_seq) {
                return Ok(answer);
            }
            let calls: Vec<Call<'_>> = proposers
                .iter()
                .enumerate()
                .map(|(i, (spec, endpoint))| Call {
                    seq: base + i as u32,
                    role: Some(format!("proposer_{}", i + 1)),
                    spec,
                    endpoint,
                    messages: dialog.to_vec(),
                })
                .collect();
            let proposals = join_all(
                calls
                    .iter()
                    .map(|c| one(env, row, ply, name, c, extra, stored)),
            )
            .await;
            let mut texts = Vec::with_capacity(proposals.len());
            for p in proposals {
                let p = p?;
                env.store
                    .set_llm_call_outcome(p.call_id, PROPOSAL_OUTCOME, None)
                    .map_err(|e| e.to_string())?;
                texts.push(p.text);
            }
            let (spec, endpoint) = synthesizer;
            let call = Call {
                seq: synth_seq,
                role: Some("synthesizer".into()),
                spec,
                endpoint,
                messages: synthesis_prompt(dialog, &texts),
            };
            one(env, row, ply, name, &call, extra, stored).await
        }
    }
}

fn stored_answer(stored: &[LlmCallRow], seq: u32) -> Option<Answer> {
    stored
        .iter()
        .find(|c| c.call.seq == seq && c.call.reply_text.is_some())
        .map(|c| Answer {
            text: c.call.reply_text.clone().unwrap_or_default(),
            reasoning: c.call.reasoning.clone(),
            call_id: c.id,
        })
}

/// One call: the stored reply, or a new request recorded before it is returned.
async fn one(
    env: &GameEnv,
    row: &GameRow,
    ply: u32,
    name: &str,
    call: &Call<'_>,
    extra: &serde_json::Map<String, serde_json::Value>,
    stored: &[LlmCallRow],
) -> Result<Answer, String> {
    if let Some(answer) = stored_answer(stored, call.seq) {
        return Ok(answer);
    }
    let spec = call.spec;
    let request = ChatRequest {
        model: spec.model.clone(),
        messages: call.messages.clone(),
        temperature: spec.temperature,
        top_p: spec.top_p,
        max_tokens: spec.max_tokens,
        seed: spec.seed,
        extra_body: merged(spec.extra_body.as_ref(), extra),
        reasoning: spec.reasoning(),
    };
    let who = match &call.role {
        Some(role) => format!("player `{name}` ({role})"),
        None => format!("player `{name}`"),
    };
    let reply = env
        .roster
        .client
        .chat(call.endpoint, &request)
        .await
        .map_err(|e| {
            let message = format!("{who}: {e}");
            let kind = if e.is_transient() {
                "endpoint_unreachable"
            } else {
                "endpoint_error"
            };
            let _ = env
                .store
                .record_event(env.tournament, Some(row.id), "error", kind, &message);
            message
        })?;
    let mut request_json = serde_json::to_value(&request).unwrap_or_default();
    if let (Some(role), Some(object)) = (&call.role, request_json.as_object_mut()) {
        object.insert("arena_role".into(), serde_json::Value::String(role.clone()));
    }
    let usage = reply.usage.unwrap_or_default();
    let id = env
        .store
        .record_llm_call(&LlmCallRecord {
            game_id: Some(row.id),
            ply,
            seq: call.seq,
            player: name.to_string(),
            model: spec.model.clone(),
            endpoint: call.endpoint.base_url.clone(),
            request_json: request_json.to_string(),
            reply_text: Some(reply.content.clone()),
            reasoning: reply.reasoning.clone(),
            raw_body: Some(reply.raw_body.clone()),
            finish_reason: reply.finish_reason.clone(),
            http_status: Some(reply.http_status),
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            latency_ms: reply.latency_ms,
            transport_retries: reply.transport_retries,
            error: None,
        })
        .map_err(|e| e.to_string())?;
    env.progress
        .llm_call(usage.prompt_tokens + usage.completion_tokens);
    Ok(Answer {
        text: reply.content,
        reasoning: reply.reasoning,
        call_id: id,
    })
}

/// The synthesizer's messages: our instructions (with the conversation's own system message, if
/// any), the conversation up to its last message, and that last message followed by every
/// proposal.
pub fn synthesis_prompt(dialog: &[ChatMessage], proposals: &[String]) -> Vec<ChatMessage> {
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

/// The model's `extra_body` overlaid with what the mode asked for at this ply.
fn merged(
    model: Option<&serde_json::Map<String, serde_json::Value>>,
    ply: &serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    let mut body = model.cloned().unwrap_or_default();
    body.extend(ply.iter().map(|(k, v)| (k.clone(), v.clone())));
    body
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
