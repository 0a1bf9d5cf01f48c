//! Evaluation items sent through a provider's batch API: the batches submitted, the item calls
//! in each and what became of them, and the answers, stored like every other item reply but
//! marked with their batch (see version 15 in `migrations.rs`).

use super::db::{Row, params};

use super::{Context, EvalReplyRecord, Store, StoreError, get_u64};

/// One item call put into a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItemRecord {
    /// The request's name in the batch (unique per item call, see `eval::batch`).
    pub custom_id: String,
    /// The task label.
    pub task: String,
    /// The player.
    pub player: String,
    /// The item's index.
    pub idx: u32,
    /// The call's number within the item.
    pub seq: u32,
    /// The messages sent, as JSON (stored with the answer as an interactive call's are).
    pub prompt_json: String,
}

/// A stored item call of a batch and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchItemRow {
    /// The call.
    pub item: BatchItemRecord,
    /// `None` while the batch runs; then `answered`, `errored`, `expired` or `canceled`.
    pub outcome: Option<String>,
}

/// A batch arena submitted for an evaluation run.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalBatchRow {
    /// Row id.
    pub id: i64,
    /// The wire format's name (`openai_chat`, `openai_responses`, `anthropic`).
    pub provider: String,
    /// The endpoint's base URL.
    pub endpoint: String,
    /// The provider's batch id.
    pub batch_id: String,
    /// Whether its results were read and stored.
    pub ended: bool,
    /// Its item calls.
    pub items: Vec<BatchItemRow>,
}

/// What a run's batch answers used, per player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchUsageRow {
    /// The player.
    pub player: String,
    /// Answers stored from batches.
    pub answers: u64,
    /// Their prompt tokens (as reported).
    pub prompt_tokens: u64,
    /// Their completion tokens (as reported).
    pub completion_tokens: u64,
}

impl Store {
    /// Records a batch the provider accepted, with its item calls, in one transaction: called
    /// before the batch is first polled, so that a killed run finds it again.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the batch is already stored; [`StoreError::Database`].
    pub fn record_eval_batch(
        &self,
        run_id: i64,
        provider: &str,
        endpoint: &str,
        batch_id: &str,
        items: &[BatchItemRecord],
    ) -> Result<i64, StoreError> {
        let what = || format!("record batch `{batch_id}` of {endpoint}");
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        let id = tx
            .insert_returning_id(
                "INSERT INTO eval_batches (run_id, provider, endpoint, batch_id)
                 VALUES (?1, ?2, ?3, ?4)",
                params![run_id, provider, endpoint, batch_id],
            )
            .context(what)?;
        for item in items {
            tx.execute(
                "INSERT INTO eval_batch_items (batch, custom_id, task, player, idx, seq, prompt_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    item.custom_id,
                    item.task,
                    item.player,
                    item.idx,
                    item.seq,
                    item.prompt_json
                ],
            )
            .context(what)?;
        }
        tx.commit().context(what)?;
        Ok(id)
    }

    /// Every batch of a run, oldest first, with its item calls.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_batches(&self, run_id: i64) -> Result<Vec<EvalBatchRow>, StoreError> {
        let what = || format!("read the batches of evaluation run {run_id}");
        let conn = self.conn();
        let mut batches: Vec<EvalBatchRow> = {
            let mut stmt = conn
                .prepare(
                    "SELECT id, provider, endpoint, batch_id, ended FROM eval_batches
                     WHERE run_id = ?1 ORDER BY id",
                )
                .context(what)?;
            stmt.query_map(params![run_id], |r| {
                Ok(EvalBatchRow {
                    id: r.get(0)?,
                    provider: r.get(1)?,
                    endpoint: r.get(2)?,
                    batch_id: r.get(3)?,
                    ended: r.get::<_, i64>(4)? != 0,
                    items: Vec::new(),
                })
            })
            .and_then(Iterator::collect)
            .context(what)?
        };
        let mut stmt = conn
            .prepare(
                "SELECT i.batch, i.custom_id, i.task, i.player, i.idx, i.seq, i.outcome,
                        i.prompt_json
                 FROM eval_batch_items i JOIN eval_batches b ON b.id = i.batch
                 WHERE b.run_id = ?1 ORDER BY i.batch, i.task, i.player, i.idx, i.seq",
            )
            .context(what)?;
        let items: Vec<(i64, BatchItemRow)> = stmt
            .query_map(params![run_id], |r: &Row<'_>| {
                Ok((
                    r.get(0)?,
                    BatchItemRow {
                        item: BatchItemRecord {
                            custom_id: r.get(1)?,
                            task: r.get(2)?,
                            player: r.get(3)?,
                            idx: get_u64(r, 4)? as u32,
                            seq: get_u64(r, 5)? as u32,
                            prompt_json: r.get(7)?,
                        },
                        outcome: r.get(6)?,
                    },
                ))
            })
            .and_then(Iterator::collect)
            .context(what)?;
        for (batch, item) in items {
            if let Some(b) = batches.iter_mut().find(|b| b.id == batch) {
                b.items.push(item);
            }
        }
        Ok(batches)
    }

    /// Stores a batch answer as the item's reply (marked with `batch_id`) and settles its call
    /// as `answered`, in one transaction, so an answer is stored exactly once even when the
    /// results are read again after a kill.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when the reply is already stored; [`StoreError::Database`].
    #[allow(clippy::too_many_arguments)]
    pub fn record_batch_answer(
        &self,
        run_id: i64,
        batch: i64,
        batch_id: &str,
        item: &BatchItemRecord,
        reply: &EvalReplyRecord,
    ) -> Result<(), StoreError> {
        let what = || {
            format!(
                "record the batch answer `{}` of `{}` to item {} of task `{}`",
                item.custom_id, item.player, item.idx, item.task
            )
        };
        let conn = self.conn();
        let tx = conn.transaction().context(what)?;
        let key = super::eval::ReplyKey {
            run_id,
            task: &item.task,
            player: &item.player,
            idx: item.idx,
            seq: item.seq,
            prompt_json: Some(&item.prompt_json),
        };
        super::eval::insert_eval_reply(&tx, &key, reply, Some(batch_id)).context(what)?;
        tx.execute(
            "UPDATE eval_batch_items SET outcome = 'answered', error = NULL
             WHERE batch = ?1 AND custom_id = ?2",
            params![batch, item.custom_id],
        )
        .context(what)?;
        tx.commit().context(what)
    }

    /// Settles an item call of a batch that got no answer: `errored`, `expired` or `canceled`,
    /// with the provider's error when there is one.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn settle_batch_item(
        &self,
        batch: i64,
        custom_id: &str,
        outcome: &str,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "UPDATE eval_batch_items SET outcome = ?3, error = ?4
                 WHERE batch = ?1 AND custom_id = ?2",
                params![batch, custom_id, outcome, error],
            )
            .context(|| format!("settle batch item `{custom_id}`"))?;
        Ok(())
    }

    /// Marks a batch as ended: its results are stored.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn end_eval_batch(&self, batch: i64) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "UPDATE eval_batches SET ended = 1 WHERE id = ?1",
                params![batch],
            )
            .context(|| format!("end batch {batch}"))?;
        Ok(())
    }

    /// What the batch answers of a run used, per player (players without one are left out).
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_batch_usage(&self, run_id: i64) -> Result<Vec<BatchUsageRow>, StoreError> {
        let what = || format!("read the batch usage of evaluation run {run_id}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT player, COUNT(*), COALESCE(SUM(prompt_tokens), 0),
                        COALESCE(SUM(completion_tokens), 0)
                 FROM eval_replies WHERE run_id = ?1 AND batch_id IS NOT NULL
                 GROUP BY player ORDER BY player",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![run_id], |r| {
                Ok(BatchUsageRow {
                    player: r.get(0)?,
                    answers: get_u64(r, 1)?,
                    prompt_tokens: get_u64(r, 2)?,
                    completion_tokens: get_u64(r, 3)?,
                })
            })
            .and_then(Iterator::collect)
            .context(what)?;
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(custom_id: &str, idx: u32) -> BatchItemRecord {
        BatchItemRecord {
            custom_id: custom_id.to_owned(),
            task: "t".to_owned(),
            player: "p".to_owned(),
            idx,
            seq: 0,
            prompt_json: r#"[{"role":"user","content":"q"}]"#.to_owned(),
        }
    }

    #[test]
    fn a_batch_is_recorded_answered_once_settled_and_ended() {
        let store = Store::open_in_memory().unwrap();
        let run = store.open_eval_run("r", "e.lua", "{}", None).unwrap();
        store
            .add_eval_items(
                run.id,
                "t",
                &[("a".into(), "{}".into()), ("b".into(), "{}".into())],
            )
            .unwrap();
        let items = [item("c0", 0), item("c1", 1)];
        let id = store
            .record_eval_batch(run.id, "anthropic", "http://x/v1", "msgbatch_1", &items)
            .unwrap();
        let batches = store.eval_batches(run.id).unwrap();
        assert_eq!(batches.len(), 1);
        assert!(!batches[0].ended);
        assert!(batches[0].items.iter().all(|i| i.outcome.is_none()));
        assert_eq!(batches[0].items[0].item, items[0]);

        let reply = EvalReplyRecord {
            seq: 0,
            prompt_json: None,
            reply_text: "e2e4".into(),
            reasoning: None,
            prompt_tokens: Some(10),
            completion_tokens: Some(2),
            latency_ms: 0,
            details: Default::default(),
        };
        store
            .record_batch_answer(run.id, id, "msgbatch_1", &items[0], &reply)
            .unwrap();
        // Stored once: the same answer again is refused, and nothing changes.
        assert!(matches!(
            store.record_batch_answer(run.id, id, "msgbatch_1", &items[0], &reply),
            Err(StoreError::Duplicate { .. })
        ));
        store
            .settle_batch_item(id, "c1", "expired", Some("window closed"))
            .unwrap();
        store.end_eval_batch(id).unwrap();

        let batch = &store.eval_batches(run.id).unwrap()[0];
        assert!(batch.ended);
        let outcomes: Vec<_> = batch.items.iter().map(|i| i.outcome.as_deref()).collect();
        assert_eq!(outcomes, [Some("answered"), Some("expired")]);
        let replies = store.eval_replies(run.id, "t", "p", 0).unwrap();
        assert_eq!(replies.len(), 1);
        assert_eq!(
            replies[0].prompt_json.as_deref(),
            Some(items[0].prompt_json.as_str())
        );
        assert_eq!(
            store.eval_batch_usage(run.id).unwrap(),
            [BatchUsageRow {
                player: "p".into(),
                answers: 1,
                prompt_tokens: 10,
                completion_tokens: 2,
            }]
        );
    }
}
