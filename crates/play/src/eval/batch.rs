//! `arena eval --batch`: the language models' item calls sent through their providers' batch
//! APIs (see `llm::batch`), at half price, before the interactive pass.
//!
//! The run goes in rounds. Each round first finishes every batch the store holds as open (a
//! run killed while polling polls the same batch again: its items are never submitted twice),
//! storing each answer as the item's reply exactly as an interactive call's, marked with its
//! batch. Then every open item of a model player is replayed from its stored replies through
//! the task script; an item that needs a call without a stored reply yields that call's request,
//! and the requests are grouped by endpoint, key and model (OpenAI takes one model per batch)
//! and submitted. The batch is recorded in the store as soon as the provider accepts it, before
//! it is polled. Items that need several calls (puzzles with retries, later puzzle moves) take
//! one round per call. The rounds end when no item asks for a call.
//!
//! A request the provider did not answer (`errored`, `expired`, `canceled`, or missing from the
//! results) is a provider fault, not the model's: it is not resubmitted in a later batch but
//! left to the interactive pass that follows, which asks it as any call is asked (retries,
//! backoff) and leaves the item open if that fails too. No item is ever scored from a failed
//! batch request.
//!
//! The one gap: a run killed in the instant between the provider accepting a batch and the
//! store recording it (one local write) loses that batch's id, and its items are submitted
//! again when the run resumes.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    time::Duration,
};

use sha2::{Digest, Sha256};

use super::{
    respond::{Answerer, ReplyError, ReplySource},
    run::{ItemError, PlayerInfo, RunError, TaskRun, answer_item},
};
use crate::{
    llm::{
        BatchClient, BatchOutcome, BatchRequest, ChatRequest, Endpoint, PriceTable, Usage,
        batch_cost, host_of, supports_batch, supports_endpoint,
    },
    spec::{LlmPlayerSpec, PlayerSpec},
    store::{BatchItemRecord, EvalBatchRow, EvalReplyRecord, EvalRunRow, Store, UsageDetails},
    tournament::players::{Participant, Roster},
};

/// How batches are waited for.
#[derive(Debug, Clone, Copy)]
pub struct BatchOptions {
    /// Time between two polls of a running batch.
    pub poll: Duration,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(30),
        }
    }
}

/// Why players of an evaluation cannot use `--batch`: one message per model player whose wire
/// format has no batch API or that is Azure OpenAI (empty when all can). Engines and the random
/// player are not asked through a provider and need none.
pub fn check_players(players: &[PlayerSpec]) -> Vec<String> {
    players
        .iter()
        .filter_map(|p| match p {
            PlayerSpec::Llm(spec) => match spec.provider() {
                Ok(provider) => supports_batch(provider)
                    .and(if spec.azure {
                        Err(crate::llm::BatchError::Azure)
                    } else {
                        Ok(())
                    })
                    .err()
                    .map(|e| format!("player `{}` cannot use --batch: {e}", spec.name)),
                Err(e) => Some(format!("player `{}`: {e}", spec.name)),
            },
            _ => None,
        })
        .collect()
}

/// The model players of a run and their endpoints, checked for a batch API.
///
/// # Errors
/// [`RunError::Batch`] naming the first player whose wire format has no batch API.
pub(super) fn batch_players<'a>(
    players: &'a [PlayerSpec],
    roster: &'a Roster,
) -> Result<Vec<(&'a LlmPlayerSpec, &'a Endpoint)>, RunError> {
    let mut out = Vec::new();
    for player in players {
        match (player, &roster.players[player.name()]) {
            (PlayerSpec::Llm(spec), Participant::Llm { endpoint }) => {
                supports_endpoint(endpoint).map_err(|e| {
                    RunError::Batch(format!("player `{}` cannot use --batch: {e}", spec.name))
                })?;
                out.push((spec, endpoint));
            }
            (PlayerSpec::Llm(spec), _) => {
                return Err(RunError::Batch(format!(
                    "player `{}` cannot use --batch: only single-model players can",
                    spec.name
                )));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The name of an item call in a batch: the same for the same call every time, so that a call
/// submitted twice would show as such, and within Anthropic's rule (`[a-zA-Z0-9_-]{1,64}`).
fn custom_id(run_id: i64, task: &str, player: &str, idx: u32, seq: u32) -> String {
    let mut h = Sha256::new();
    h.update(format!(
        "{run_id}\u{0}{task}\u{0}{player}\u{0}{idx}\u{0}{seq}"
    ));
    let digest = h.finalize();
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("arena-{hex}")
}

/// What a batch round collected for one endpoint, key and model.
struct Group<'a> {
    endpoint: &'a Endpoint,
    calls: Vec<(BatchItemRecord, ChatRequest)>,
}

/// Runs the batch rounds for the run's model players (see the module's documentation).
///
/// # Errors
/// A player without a batch API, a batch that cannot be submitted, polled or read, or a store
/// failure.
pub(super) async fn run_rounds(
    store: &Store,
    run: &EvalRunRow,
    roster: &Roster,
    tasks: &[TaskRun],
    players: &[PlayerSpec],
    options: BatchOptions,
) -> Result<(), RunError> {
    let models = batch_players(players, roster)?;
    if models.is_empty() {
        return Ok(());
    }
    let client = BatchClient::new().map_err(|e| RunError::Batch(e.to_string()))?;
    let endpoint_of: HashMap<&str, &Endpoint> =
        models.iter().map(|(s, e)| (s.name.as_str(), *e)).collect();
    loop {
        for batch in store.eval_batches(run.id)?.into_iter().filter(|b| !b.ended) {
            finish(store, run, &client, &endpoint_of, &batch, options).await?;
        }
        // A call in any stored batch is never submitted again: one the batch answered has its
        // reply stored (and is not asked for here), one it did not answer goes to the
        // interactive pass.
        let submitted: BTreeSet<String> = store
            .eval_batches(run.id)?
            .into_iter()
            .flat_map(|b| b.items)
            .map(|i| i.item.custom_id)
            .collect();
        let mut groups: BTreeMap<(String, String, String, String), Group<'_>> = BTreeMap::new();
        for task in tasks {
            let done: BTreeSet<(String, u32)> = store
                .eval_results(run.id, &task.label)?
                .into_iter()
                .map(|r| (r.player, r.idx))
                .collect();
            for (spec, endpoint) in &models {
                for idx in 0..task.items.len() as u32 {
                    if done.contains(&(spec.name.clone(), idx)) {
                        continue;
                    }
                    let stored = store.eval_replies(run.id, &task.label, &spec.name, idx)?;
                    let source = ReplySource {
                        stored,
                        next: 0,
                        answerer: Answerer::Collect { spec },
                        recorder: None,
                        salt: (task.label.clone(), spec.name.clone(), idx),
                    };
                    let info = PlayerInfo {
                        name: spec.name.clone(),
                        kind: "llm".to_owned(),
                        mode: Some(spec.mode.clone()),
                    };
                    match answer_item(task, &info, idx, source).await {
                        // Every call of the item is answered: it is scored now.
                        Ok(row) => store.record_eval_result(run.id, &task.label, &row)?,
                        Err(ItemError::Reply(ReplyError::Deferred { seq, request })) => {
                            let id = custom_id(run.id, &task.label, &spec.name, idx, seq);
                            if submitted.contains(&id) {
                                continue;
                            }
                            let record = BatchItemRecord {
                                custom_id: id,
                                task: task.label.clone(),
                                player: spec.name.clone(),
                                idx,
                                seq,
                                prompt_json: serde_json::to_string(&request.messages)
                                    .expect("messages serialize"),
                            };
                            groups
                                .entry((
                                    endpoint.base_url.clone(),
                                    endpoint.provider.name().to_owned(),
                                    endpoint.api_key_env.clone().unwrap_or_default(),
                                    request.model.clone(),
                                ))
                                .or_insert_with(|| Group {
                                    endpoint,
                                    calls: Vec::new(),
                                })
                                .calls
                                .push((record, *request));
                        }
                        // A task script failure: the interactive pass reports it.
                        Err(_) => {}
                    }
                }
            }
        }
        if groups.is_empty() {
            return Ok(());
        }
        for group in groups.into_values() {
            let requests: Vec<BatchRequest> = group
                .calls
                .iter()
                .map(|(record, request)| BatchRequest {
                    custom_id: record.custom_id.clone(),
                    request: request.clone(),
                })
                .collect();
            let endpoint = group.endpoint;
            let batch_id = client.submit(endpoint, &requests).await.map_err(|e| {
                RunError::Batch(format!(
                    "submitting a batch to {} failed: {e}",
                    host_of(&endpoint.base_url)
                ))
            })?;
            let records: Vec<BatchItemRecord> = group.calls.into_iter().map(|(r, _)| r).collect();
            store.record_eval_batch(
                run.id,
                endpoint.provider.name(),
                &endpoint.base_url,
                &batch_id,
                &records,
            )?;
            eprintln!(
                "batch {batch_id}: {} item call(s) submitted to {}",
                records.len(),
                host_of(&endpoint.base_url)
            );
        }
    }
}

/// Waits for a stored batch to end and stores what became of each of its calls.
async fn finish(
    store: &Store,
    run: &EvalRunRow,
    client: &BatchClient,
    endpoint_of: &HashMap<&str, &Endpoint>,
    batch: &EvalBatchRow,
    options: BatchOptions,
) -> Result<(), RunError> {
    let Some(endpoint) = batch
        .items
        .iter()
        .find_map(|i| endpoint_of.get(i.item.player.as_str()))
    else {
        return Err(RunError::Batch(format!(
            "batch {} of {} belongs to players this script no longer has; its answers cannot \
             be stored",
            batch.batch_id, batch.endpoint
        )));
    };
    let fail = |e: crate::llm::BatchError| {
        RunError::Batch(format!(
            "batch {} at {}: {e}",
            batch.batch_id,
            host_of(&endpoint.base_url)
        ))
    };
    eprintln!(
        "batch {}: waiting for {} item call(s) at {}",
        batch.batch_id,
        batch.items.len(),
        host_of(&endpoint.base_url)
    );
    let ended = client
        .wait(endpoint, &batch.batch_id, options.poll, |_| {})
        .await
        .map_err(fail)?;
    let outcomes: HashMap<String, BatchOutcome> = client
        .results(endpoint, &ended)
        .await
        .map_err(fail)?
        .into_iter()
        .collect();
    let (mut answered, mut failed) = (0, 0);
    for item in batch.items.iter().filter(|i| i.outcome.is_none()) {
        let id = &item.item.custom_id;
        match outcomes.get(id) {
            Some(BatchOutcome::Answered(reply)) => {
                let (prompt_tokens, completion_tokens) = match reply.usage {
                    Some(u) => (Some(u.prompt_tokens), Some(u.completion_tokens)),
                    None => (None, None),
                };
                let record = EvalReplyRecord {
                    seq: item.item.seq,
                    prompt_json: Some(item.item.prompt_json.clone()),
                    reply_text: reply.content.clone(),
                    reasoning: reply.reasoning.clone(),
                    prompt_tokens,
                    completion_tokens,
                    latency_ms: 0,
                    details: UsageDetails::of(reply.usage.as_ref(), reply.provider_cost.as_ref()),
                };
                store.record_batch_answer(
                    run.id,
                    batch.id,
                    &batch.batch_id,
                    &item.item,
                    &record,
                )?;
                answered += 1;
            }
            Some(BatchOutcome::Errored(error)) => {
                store.settle_batch_item(batch.id, id, "errored", Some(error))?;
                failed += 1;
            }
            Some(BatchOutcome::Expired) => {
                store.settle_batch_item(batch.id, id, "expired", None)?;
                failed += 1;
            }
            Some(BatchOutcome::Canceled) => {
                store.settle_batch_item(batch.id, id, "canceled", None)?;
                failed += 1;
            }
            None => {
                let (outcome, error) = match ended.status.as_str() {
                    "expired" => ("expired", None),
                    "cancelled" => ("canceled", None),
                    status => ("errored", Some(format!("no result (batch {status})"))),
                };
                store.settle_batch_item(batch.id, id, outcome, error.as_deref())?;
                failed += 1;
            }
        }
    }
    store.end_eval_batch(batch.id)?;
    eprintln!(
        "batch {} {}: {answered} answer(s) stored{}",
        batch.batch_id,
        ended.status,
        if failed > 0 {
            format!("; {failed} call(s) left to ask one by one")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// One line per player with batch answers: their count and tokens, and their price at batch
/// rates beside the interactive price (from `prices`; `?` for a model without a price).
pub(super) fn spend_lines(
    store: &Store,
    run: &EvalRunRow,
    players: &[PlayerSpec],
    prices: &PriceTable,
) -> Result<Vec<String>, RunError> {
    let mut lines = Vec::new();
    for row in store.eval_batch_usage(run.id)? {
        let model = players.iter().find_map(|p| match p {
            PlayerSpec::Llm(s) if s.name == row.player => Some(s.model.as_str()),
            _ => None,
        });
        let usage = Usage {
            prompt_tokens: row.prompt_tokens,
            completion_tokens: row.completion_tokens,
            total_tokens: row.prompt_tokens + row.completion_tokens,
            ..Usage::default()
        };
        let price = model
            .and_then(|m| Some((batch_cost(prices, &usage, m)?, prices.cost(&usage, m)?)))
            .map_or_else(
                || "no price known".to_owned(),
                |(batch, full)| format!("${batch:.4} at batch price (${full:.4} one by one)"),
            );
        lines.push(format!(
            "batch answers of `{}`: {} ({} prompt + {} completion tokens), {price}",
            row.player, row.answers, row.prompt_tokens, row.completion_tokens
        ));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_ids_are_stable_distinct_and_within_anthropics_rule() {
        let a = custom_id(1, "puzzles", "gpt", 3, 0);
        assert_eq!(a, custom_id(1, "puzzles", "gpt", 3, 0));
        assert_ne!(a, custom_id(1, "puzzles", "gpt", 3, 1));
        assert_ne!(a, custom_id(2, "puzzles", "gpt", 3, 0));
        assert!(a.len() <= 64);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }
}
