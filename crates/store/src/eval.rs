//! Fine-grained evaluations: runs, their fixed item sets, every reply and every scored item.

use super::db::{Conn, DbResult, OptionalExtension, Row, params};

use super::{Context, Store, StoreError, UsageDetails, get_opt_u64, get_u64, sql_u64};

/// A stored evaluation run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalRunRow {
    /// Row id.
    pub id: i64,
    /// Unique name.
    pub name: String,
    /// The evaluation script as given on the command line.
    pub script_path: String,
    /// The run's settings (tasks, players without secrets) as JSON.
    pub settings_json: String,
    /// For a re-scoring: the run whose replies it re-reads.
    pub source_run_id: Option<i64>,
}

/// One reply of a player to one item.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalReplyRecord {
    /// 0-based call number within the item.
    pub seq: u32,
    /// The messages sent, as JSON; `None` for players that answer without a prompt.
    pub prompt_json: Option<String>,
    /// The reply text.
    pub reply_text: String,
    /// The model's separate reasoning, if any.
    pub reasoning: Option<String>,
    /// Prompt tokens billed; `None` when the reply reported no usage (unknown, not zero).
    pub prompt_tokens: Option<u64>,
    /// Completion tokens billed; `None` when the reply reported no usage.
    pub completion_tokens: Option<u64>,
    /// Request latency.
    pub latency_ms: u64,
    /// Cached, cache-write and reasoning tokens and the provider's own price, as reported.
    pub details: UsageDetails,
}

/// The scored result of one item for one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalResultRow {
    /// The item's index in the task's set.
    pub idx: u32,
    /// The player.
    pub player: String,
    /// Calls the item took.
    pub calls: u32,
    /// The parsed answer(s) as JSON.
    pub parsed_json: String,
    /// The score as JSON.
    pub score_json: String,
}

impl Store {
    /// The evaluation run named `name`, created with these settings if it does not exist yet.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn open_eval_run(
        &self,
        name: &str,
        script_path: &str,
        settings_json: &str,
        source_run_id: Option<i64>,
    ) -> Result<EvalRunRow, StoreError> {
        let conn = self.conn();
        conn.execute(
            "INSERT INTO eval_runs (name, script_path, settings_json, source_run_id)
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO NOTHING",
            params![name, script_path, settings_json, source_run_id],
        )
        .context(|| format!("create evaluation run `{name}`"))?;
        drop(conn);
        self.find_eval_run(name)?
            .ok_or_else(|| StoreError::NotFound {
                what: format!("evaluation run `{name}`"),
            })
    }

    /// The evaluation run named `name`, if stored.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn find_eval_run(&self, name: &str) -> Result<Option<EvalRunRow>, StoreError> {
        self.conn()
            .query_row(
                "SELECT id, name, script_path, settings_json, source_run_id
                 FROM eval_runs WHERE name = ?1",
                params![name],
                run_row,
            )
            .optional()
            .context(|| format!("read evaluation run `{name}`"))
    }

    /// Every evaluation run, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_runs(&self) -> Result<Vec<EvalRunRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT id, name, script_path, settings_json, source_run_id
                 FROM eval_runs ORDER BY id",
            )
            .context(|| "list evaluation runs".to_owned())?;
        let rows = stmt
            .query_map(params![], run_row)
            .and_then(Iterator::collect)
            .context(|| "list evaluation runs".to_owned())?;
        Ok(rows)
    }

    /// Stores items of a task's set that are not stored yet (by index), and returns the whole
    /// stored set in order, as `(key, item JSON)`.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when an item key is already stored under another index (the data
    /// set changed under a stored run); [`StoreError::Database`] otherwise.
    pub fn add_eval_items(
        &self,
        run_id: i64,
        task: &str,
        items: &[(String, String)],
    ) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.conn();
        let tx = conn
            .transaction()
            .context(|| format!("store the items of task `{task}`"))?;
        for (idx, (key, json)) in items.iter().enumerate() {
            tx.execute(
                "INSERT INTO eval_items (run_id, task, idx, item_key, item_json)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id, task, idx) DO NOTHING",
                params![run_id, task, idx as i64, key, json],
            )
            .context(|| format!("store item {idx} (`{key}`) of task `{task}`"))?;
        }
        tx.commit()
            .context(|| format!("store the items of task `{task}`"))?;
        drop(conn);
        self.eval_items(run_id, task)
    }

    /// The stored item set of a task, in order, as `(key, item JSON)`.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_items(&self, run_id: i64, task: &str) -> Result<Vec<(String, String)>, StoreError> {
        let conn = self.conn();
        let what = || format!("read the items of task `{task}`");
        let mut stmt = conn
            .prepare(
                "SELECT item_key, item_json FROM eval_items
                 WHERE run_id = ?1 AND task = ?2 ORDER BY idx",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![run_id, task], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(Iterator::collect)
            .context(what)?;
        Ok(rows)
    }

    /// Records one reply, before it is parsed.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] when this call is already stored.
    pub fn record_eval_reply(
        &self,
        run_id: i64,
        task: &str,
        player: &str,
        idx: u32,
        reply: &EvalReplyRecord,
    ) -> Result<(), StoreError> {
        let key = ReplyKey {
            run_id,
            task,
            player,
            idx,
            seq: reply.seq,
            prompt_json: reply.prompt_json.as_deref(),
        };
        insert_eval_reply(&self.conn(), &key, reply, None).context(|| {
            format!(
                "record reply {} of `{player}` to item {idx} of task `{task}`",
                reply.seq
            )
        })?;
        Ok(())
    }

    /// The stored replies of a player to an item, in call order.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_replies(
        &self,
        run_id: i64,
        task: &str,
        player: &str,
        idx: u32,
    ) -> Result<Vec<EvalReplyRecord>, StoreError> {
        let conn = self.conn();
        let what = || format!("read the replies of `{player}` to item {idx} of task `{task}`");
        let mut stmt = conn
            .prepare(
                "SELECT seq, prompt_json, reply_text, reasoning, prompt_tokens,
                        completion_tokens, latency_ms, cached_tokens, cache_write_tokens,
                        reasoning_tokens, provider_cost_usd, cost_details_json
                 FROM eval_replies WHERE run_id = ?1 AND task = ?2 AND player = ?3 AND idx = ?4
                 ORDER BY seq",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![run_id, task, player, idx], |r| {
                Ok(EvalReplyRecord {
                    seq: r.get(0)?,
                    prompt_json: r.get(1)?,
                    reply_text: r.get(2)?,
                    reasoning: r.get(3)?,
                    prompt_tokens: get_opt_u64(r, 4)?,
                    completion_tokens: get_opt_u64(r, 5)?,
                    latency_ms: get_u64(r, 6)?,
                    details: UsageDetails::read(r, 7)?,
                })
            })
            .and_then(Iterator::collect)
            .context(what)?;
        Ok(rows)
    }

    /// Records the scored result of an item (replacing an earlier one: a re-scoring run may be
    /// repeated).
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn record_eval_result(
        &self,
        run_id: i64,
        task: &str,
        result: &EvalResultRow,
    ) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO eval_results
                     (run_id, task, player, idx, calls, parsed_json, score_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (run_id, task, player, idx) DO UPDATE SET calls = excluded.calls,
                     parsed_json = excluded.parsed_json, score_json = excluded.score_json,
                     created_at = excluded.created_at",
                params![
                    run_id,
                    task,
                    result.player,
                    result.idx,
                    result.calls,
                    result.parsed_json,
                    result.score_json
                ],
            )
            .context(|| {
                format!(
                    "record the result of `{}` on item {} of task `{task}`",
                    result.player, result.idx
                )
            })?;
        Ok(())
    }

    /// The scored items of a task, by player then index.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_results(&self, run_id: i64, task: &str) -> Result<Vec<EvalResultRow>, StoreError> {
        let conn = self.conn();
        let what = || format!("read the results of task `{task}`");
        let mut stmt = conn
            .prepare(
                "SELECT idx, player, calls, parsed_json, score_json FROM eval_results
                 WHERE run_id = ?1 AND task = ?2 ORDER BY player, idx",
            )
            .context(what)?;
        let rows = stmt
            .query_map(params![run_id, task], |r| {
                Ok(EvalResultRow {
                    idx: r.get(0)?,
                    player: r.get(1)?,
                    calls: r.get(2)?,
                    parsed_json: r.get(3)?,
                    score_json: r.get(4)?,
                })
            })
            .and_then(Iterator::collect)
            .context(what)?;
        Ok(rows)
    }

    /// The tasks with stored items in a run, by name.
    ///
    /// # Errors
    /// [`StoreError::Database`] on a failed query.
    pub fn eval_tasks(&self, run_id: i64) -> Result<Vec<String>, StoreError> {
        let conn = self.conn();
        let what = || format!("list the tasks of evaluation run {run_id}");
        let mut stmt = conn
            .prepare("SELECT DISTINCT task FROM eval_items WHERE run_id = ?1 ORDER BY task")
            .context(what)?;
        let rows = stmt
            .query_map(params![run_id], |r| r.get(0))
            .and_then(Iterator::collect)
            .context(what)?;
        Ok(rows)
    }
}

fn run_row(r: &Row<'_>) -> DbResult<EvalRunRow> {
    Ok(EvalRunRow {
        id: r.get(0)?,
        name: r.get(1)?,
        script_path: r.get(2)?,
        settings_json: r.get(3)?,
        source_run_id: r.get(4)?,
    })
}

/// Which call an eval reply answers: its item and its place among the item's calls.
pub(super) struct ReplyKey<'a> {
    pub run_id: i64,
    pub task: &'a str,
    pub player: &'a str,
    pub idx: u32,
    pub seq: u32,
    pub prompt_json: Option<&'a str>,
}

/// The one INSERT of an eval reply, interactive (`batch_id` none) or from a batch.
pub(super) fn insert_eval_reply(
    conn: &Conn<'_>,
    key: &ReplyKey<'_>,
    reply: &EvalReplyRecord,
    batch_id: Option<&str>,
) -> DbResult<usize> {
    conn.execute(
        "INSERT INTO eval_replies (run_id, task, player, idx, seq, prompt_json,
             reply_text, reasoning, prompt_tokens, completion_tokens, latency_ms,
             cached_tokens, cache_write_tokens, reasoning_tokens, provider_cost_usd,
             cost_details_json, batch_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            key.run_id,
            key.task,
            key.player,
            key.idx,
            key.seq,
            key.prompt_json,
            reply.reply_text,
            reply.reasoning,
            reply.prompt_tokens.map(sql_u64),
            reply.completion_tokens.map(sql_u64),
            sql_u64(reply.latency_ms),
            reply.details.cached_tokens.map(sql_u64),
            reply.details.cache_write_tokens.map(sql_u64),
            reply.details.reasoning_tokens.map(sql_u64),
            reply.details.provider_cost_usd,
            reply.details.cost_details_json,
            batch_id,
        ],
    )
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::{migrations::MIGRATIONS, schema::APPLICATION_ID};

    #[test]
    fn a_version_two_store_gains_the_evaluation_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(MIGRATIONS[0].sqlite).unwrap();
            conn.execute_batch(MIGRATIONS[1].sqlite).unwrap();
            conn.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 2;"
            ))
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert!(store.eval_runs().unwrap().is_empty());
    }

    #[test]
    fn items_replies_and_results_round_trip() {
        let store = Store::open_in_memory().unwrap();
        let run = store.open_eval_run("r", "e.lua", "{}", None).unwrap();
        assert_eq!(store.open_eval_run("r", "x.lua", "{}", None).unwrap(), run);
        let items = vec![
            ("a".to_owned(), "{}".to_owned()),
            ("b".to_owned(), "[]".to_owned()),
        ];
        assert_eq!(
            store
                .add_eval_items(run.id, "t", &items[..1])
                .unwrap()
                .len(),
            1
        );
        // Extending keeps the stored first item and adds the second.
        assert_eq!(store.add_eval_items(run.id, "t", &items).unwrap(), items);
        // A different item under a stored key is a changed data set.
        let moved = vec![
            items[0].clone(),
            items[1].clone(),
            ("a".to_owned(), "{}".to_owned()),
        ];
        assert!(matches!(
            store.add_eval_items(run.id, "t", &moved),
            Err(StoreError::Duplicate { .. })
        ));
        let reply = EvalReplyRecord {
            seq: 0,
            prompt_json: None,
            reply_text: "```e2e4```".into(),
            reasoning: None,
            prompt_tokens: Some(3),
            completion_tokens: Some(4),
            latency_ms: 5,
            details: UsageDetails {
                reasoning_tokens: Some(2),
                provider_cost_usd: Some(0.001),
                ..UsageDetails::default()
            },
        };
        store
            .record_eval_reply(run.id, "t", "p", 1, &reply)
            .unwrap();
        assert!(matches!(
            store.record_eval_reply(run.id, "t", "p", 1, &reply),
            Err(StoreError::Duplicate { .. })
        ));
        assert_eq!(
            store.eval_replies(run.id, "t", "p", 1).unwrap(),
            vec![reply]
        );
        let result = EvalResultRow {
            idx: 1,
            player: "p".into(),
            calls: 1,
            parsed_json: "[]".into(),
            score_json: "{}".into(),
        };
        store.record_eval_result(run.id, "t", &result).unwrap();
        store.record_eval_result(run.id, "t", &result).unwrap();
        assert_eq!(store.eval_results(run.id, "t").unwrap(), vec![result]);
        assert_eq!(store.eval_tasks(run.id).unwrap(), ["t"]);
    }
}
