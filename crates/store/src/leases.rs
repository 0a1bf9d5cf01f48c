//! Leases: which worker plays or analyses which game, so that several processes share one
//! tournament without doing anything twice.
//!
//! A claim is one atomic upsert: it inserts the lease, or takes over the existing row only when
//! that row is this worker's own or has expired. PostgreSQL holds the row's lock for the
//! statement (the equivalent of `SELECT ... FOR UPDATE SKIP LOCKED` then `UPDATE`, in one round
//! trip); SQLite serialises writers. Expiry is judged by the database's clock, never a worker's.
//!
//! Leases fence. Each lease row carries a token, a number that grows every time the item changes
//! hands (a takeover, or a claim after a release: a released lease keeps its row, without an
//! owner, so that its token never starts again). A claim hands the worker a [`Fence`] (its name
//! and the token), and every write of a game's plies, calls, result, adjudication evaluations,
//! move-limit verdict and events made under a play lease, and of its analysis under an analysis
//! lease, checks, in
//! the same transaction and under the lease row's lock, that the row still names that worker and
//! token ([`check_fence`]). A worker that stalled past its lease (a paused machine, a partition)
//! while another took the game over finds its writes refused with [`StoreError::LeaseLost`], and
//! nothing it does reaches the store.

use std::time::Duration;

use super::{
    CallVerdict, Context, ErrorKind, FailedCallRecord, LlmCallRecord, PlyRecord, ReusedCall, Store,
    StoreError,
    db::{Conn, Dialect, OptionalExtension, params},
};

/// What a lease is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseKind {
    /// Playing a game.
    Play,
    /// Analysing a finished game.
    Analysis,
}

impl LeaseKind {
    fn as_str(self) -> &'static str {
        match self {
            LeaseKind::Play => "play",
            LeaseKind::Analysis => "analysis",
        }
    }
}

/// A lease as the writes made under it carry it: the item, the worker holding it and the
/// fencing token its claim got. Writes under a fence that no longer matches the lease row are
/// refused ([`StoreError::LeaseLost`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    kind: LeaseKind,
    item: i64,
    owner: String,
    token: i64,
}

impl Fence {
    /// The item (a game id) the lease is on.
    pub fn item(&self) -> i64 {
        self.item
    }

    /// The worker that holds it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The fencing token: it grows every time the item changes hands.
    pub fn token(&self) -> i64 {
        self.token
    }
}

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The item is this worker's until the lease expires (unless renewed); its writes carry
    /// this fence.
    Claimed(Fence),
    /// Another worker holds a live lease on it.
    Held {
        /// That worker.
        owner: String,
        /// How long its lease still runs, by the database's clock.
        remaining: Duration,
    },
}

/// The database's clock in milliseconds since the Unix epoch, as an SQL expression.
fn now_ms(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
        Dialect::Postgres => "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl Store {
    /// Claims `item` for `owner` for `duration`: granted when nobody holds it, when `owner`
    /// already does (a renewal), or when the holder's lease has expired.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn claim(
        &self,
        kind: LeaseKind,
        item: i64,
        owner: &str,
        duration: Duration,
    ) -> Result<Claim, StoreError> {
        let what = || format!("claim the {} lease of game {item}", kind.as_str());
        let conn = self.conn();
        let now = now_ms(conn.dialect());
        // A lease released between the upsert and the look-up is free: try once more.
        for _ in 0..2 {
            // The token stays for a renewal and grows whenever the item changes hands (a
            // released row has no owner, so a claim after a release is a change too).
            let granted: Option<i64> = conn
                .query_row(
                    &format!(
                        "INSERT INTO leases (kind, item, owner, expires_ms, token)
                         VALUES (?1, ?2, ?3, {now} + ?4, 1)
                         ON CONFLICT (kind, item) DO UPDATE
                            SET owner = excluded.owner, expires_ms = excluded.expires_ms,
                                token = CASE WHEN leases.owner = excluded.owner
                                             THEN leases.token ELSE leases.token + 1 END
                            WHERE leases.owner = excluded.owner OR leases.expires_ms < {now}
                         RETURNING token"
                    ),
                    params![kind.as_str(), item, owner, millis(duration)],
                    |r| r.get(0),
                )
                .optional()
                .context(what)?;
            if let Some(token) = granted {
                return Ok(Claim::Claimed(Fence {
                    kind,
                    item,
                    owner: owner.to_owned(),
                    token,
                }));
            }
            let held: Option<(String, i64)> = conn
                .query_row(
                    &format!(
                        "SELECT owner, expires_ms - {now} FROM leases
                         WHERE kind = ?1 AND item = ?2 AND owner <> ''"
                    ),
                    params![kind.as_str(), item],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .context(what)?;
            if let Some((owner, remaining)) = held {
                return Ok(Claim::Held {
                    owner,
                    remaining: Duration::from_millis(u64::try_from(remaining).unwrap_or(0)),
                });
            }
        }
        // Released twice under this claim's hands: busy; the caller offers the game again later.
        Ok(Claim::Held {
            owner: "(changing hands)".to_owned(),
            remaining: Duration::ZERO,
        })
    }

    /// Takes `item` over from `from`, whatever its lease's expiry, if `from` still holds it:
    /// for a holder known to be dead (a process of this machine that no longer exists). The
    /// fence of the new lease, or `None` when `from` no longer holds it.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn take_over(
        &self,
        kind: LeaseKind,
        item: i64,
        from: &str,
        owner: &str,
        duration: Duration,
    ) -> Result<Option<Fence>, StoreError> {
        let conn = self.conn();
        let now = now_ms(conn.dialect());
        let token: Option<i64> = conn
            .query_row(
                &format!(
                    "UPDATE leases SET owner = ?4, expires_ms = {now} + ?5, token = token + 1
                     WHERE kind = ?1 AND item = ?2 AND owner = ?3
                     RETURNING token"
                ),
                params![kind.as_str(), item, from, owner, millis(duration)],
                |r| r.get(0),
            )
            .optional()
            .context(|| format!("take the {} lease of game {item} over", kind.as_str()))?;
        Ok(token.map(|token| Fence {
            kind,
            item,
            owner: owner.to_owned(),
            token,
        }))
    }

    /// Whether `fence` still holds its lease (a read, for a worker about to pay for a model
    /// call: the writes themselves are checked by [`check_fence`]).
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when another worker holds the lease now (or nobody does),
    /// [`StoreError::Database`] on a database failure.
    pub(crate) fn check_lease(&self, fence: &Fence) -> Result<(), StoreError> {
        check_fence(&self.conn(), fence)
    }

    /// Extends every lease of `kind` that `owner` holds to `duration` from now; returns how many
    /// it holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn renew_leases(
        &self,
        kind: LeaseKind,
        owner: &str,
        duration: Duration,
    ) -> Result<usize, StoreError> {
        let conn = self.conn();
        let now = now_ms(conn.dialect());
        conn.execute(
            &format!("UPDATE leases SET expires_ms = {now} + ?3 WHERE kind = ?1 AND owner = ?2"),
            params![kind.as_str(), owner, millis(duration)],
        )
        .context(|| format!("renew the {} leases of {owner}", kind.as_str()))
    }

    /// The leases of `kind` held now (live or lapsed but not yet taken), as (item, owner), by item.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn leases(&self, kind: LeaseKind) -> Result<Vec<(i64, String)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT item, owner FROM leases WHERE kind = ?1 AND owner <> '' ORDER BY item")
            .context(|| "list the leases".to_owned())?;
        let rows = stmt
            .query_map(params![kind.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .context(|| "list the leases".to_owned())?;
        rows.collect::<Result<_, _>>()
            .context(|| "list the leases".to_owned())
    }

    /// Gives `item` back (a no-op unless `owner` holds it). The row stays, without an owner and
    /// expired, so that the next claim's token follows this one's.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn release(&self, kind: LeaseKind, item: i64, owner: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "UPDATE leases SET owner = '', expires_ms = 0
                 WHERE kind = ?1 AND item = ?2 AND owner = ?3",
                params![kind.as_str(), item, owner],
            )
            .context(|| format!("release the {} lease of game {item}", kind.as_str()))?;
        Ok(())
    }
}

impl Store {
    /// The writes of the game `fence` holds the lease of, each refused with
    /// [`StoreError::LeaseLost`] once another worker has taken the game over.
    pub fn leased<'a>(&'a self, fence: &'a Fence) -> Leased<'a> {
        Leased { store: self, fence }
    }
}

/// A game's writes under its lease ([`Store::leased`]): the store's game-loop writes, each
/// checked against the lease row in its own transaction. Their errors are the store's
/// methods' of the same name, plus [`StoreError::LeaseLost`].
#[derive(Debug, Clone, Copy)]
pub struct Leased<'a> {
    store: &'a Store,
    fence: &'a Fence,
}

impl Leased<'_> {
    /// The fence the writes carry.
    pub fn fence(&self) -> &Fence {
        self.fence
    }

    /// The game's id.
    fn game(&self) -> i64 {
        self.fence.item
    }

    /// Whether the lease is still held: asked before paying for a model call.
    ///
    /// # Errors
    ///
    /// As [`Store::check_lease`].
    pub fn check(&self) -> Result<(), StoreError> {
        self.store.check_lease(self.fence)
    }

    /// [`Store::record_ply`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_ply(&self, ply: &PlyRecord) -> Result<(), StoreError> {
        self.store
            .record_ply_under(Some(self.fence), self.game(), ply)
    }

    /// [`Store::record_ply_with_verdict_grouped`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub async fn record_ply_with_verdict(
        &self,
        ply: PlyRecord,
        verdict: &CallVerdict<'_>,
    ) -> Result<(), StoreError> {
        self.store
            .record_ply_with_verdict_grouped_under(Some(self.fence), self.game(), ply, verdict)
            .await
    }

    /// [`Store::record_llm_call_grouped`] under the lease (the call must be this game's).
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub async fn record_llm_call(&self, call: LlmCallRecord) -> Result<i64, StoreError> {
        self.store
            .record_llm_call_grouped_under(Some(self.fence), call)
            .await
    }

    /// [`Store::reuse_llm_call`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn reuse_llm_call(
        &self,
        ply: u32,
        seq: u32,
        request_json: &str,
        earlier: &[i64],
    ) -> Result<Option<ReusedCall>, StoreError> {
        self.store.reuse_llm_call_under(
            Some(self.fence),
            self.game(),
            ply,
            seq,
            request_json,
            earlier,
        )
    }

    /// [`Store::record_failed_call`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_failed_call(&self, call: &FailedCallRecord) -> Result<i64, StoreError> {
        self.store.record_failed_call_under(Some(self.fence), call)
    }

    /// [`Store::set_llm_call_verdict`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn set_llm_call_verdict(&self, verdict: &CallVerdict<'_>) -> Result<(), StoreError> {
        self.store
            .set_llm_call_verdict_under(Some(self.fence), verdict)
    }

    /// [`Store::record_adjudication_eval`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_adjudication_eval(
        &self,
        eval: &super::AdjudicationEvalRecord,
    ) -> Result<(), StoreError> {
        self.store
            .record_adjudication_eval_under(Some(self.fence), self.game(), eval)
    }

    /// [`Store::record_limit_verdict`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_limit_verdict(
        &self,
        verdict: &super::LimitVerdictRecord,
    ) -> Result<(), StoreError> {
        self.store
            .record_limit_verdict_under(Some(self.fence), self.game(), verdict)
    }

    /// [`Store::mark_game_started`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn mark_game_started(&self, script_hash: &str, generation: u64) -> Result<(), StoreError> {
        self.store
            .mark_game_started_under(Some(self.fence), self.game(), script_hash, generation)
    }

    /// Moves the game, set aside by a script error, onto newer scripts (see
    /// [`Store::move_to_newer_scripts_under`]); whether it moved.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn move_to_newer_scripts(
        &self,
        script_hash: &str,
        generation: u64,
    ) -> Result<bool, StoreError> {
        self.store.move_to_newer_scripts_under(
            Some(self.fence),
            self.game(),
            script_hash,
            generation,
        )
    }

    /// [`Store::record_ply_analysis`] under the game's analysis lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_ply_analysis(&self, a: &super::PlyAnalysisRecord) -> Result<(), StoreError> {
        debug_assert_eq!(
            self.fence.kind,
            LeaseKind::Analysis,
            "analysis under a play lease"
        );
        self.store
            .record_ply_analysis_under(Some(self.fence), self.game(), a)
    }

    /// [`Store::record_game_analysis`] under the game's analysis lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_game_analysis(&self, a: &super::GameAnalysisRecord) -> Result<(), StoreError> {
        debug_assert_eq!(
            self.fence.kind,
            LeaseKind::Analysis,
            "analysis under a play lease"
        );
        self.store
            .record_game_analysis_under(Some(self.fence), self.game(), a)
    }

    /// [`Store::record_event`] about the leased game, under the lease: a worker that lost the
    /// game logs nothing more about it.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn record_event(
        &self,
        tournament: i64,
        level: &str,
        kind: &str,
        message: &str,
    ) -> Result<(), StoreError> {
        self.store.record_event_under(
            Some(self.fence),
            tournament,
            Some(self.game()),
            level,
            kind,
            message,
        )
    }

    /// [`Store::game_time_control`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn game_time_control(
        &self,
        time_control: Option<&str>,
    ) -> Result<Option<String>, StoreError> {
        self.store
            .game_time_control_under(Some(self.fence), self.game(), time_control)
    }

    /// [`Store::finish_game`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn finish_game(
        &self,
        result: &str,
        termination: &str,
        reason: Option<&str>,
    ) -> Result<(), StoreError> {
        self.store
            .finish_game_under(Some(self.fence), self.game(), result, termination, reason)
    }

    /// [`Store::mark_game_errored`] under the lease.
    ///
    /// # Errors
    ///
    /// See [`Leased`].
    pub fn mark_game_errored(&self, kind: ErrorKind, error: &str) -> Result<(), StoreError> {
        self.store
            .mark_game_errored_under(self.fence, self.game(), kind, error)
    }
}

/// Refuses, with [`StoreError::LeaseLost`], unless `fence` still matches its lease row. Run first
/// in the transaction of the write it guards: on PostgreSQL it takes the row's share lock, so a
/// takeover (an update of the row) waits for the write to commit, and a write waits for a
/// takeover in flight and then sees it; SQLite's transactions hold the one write lock already.
pub(super) fn check_fence(conn: &Conn<'_>, fence: &Fence) -> Result<(), StoreError> {
    let what = || {
        format!(
            "check the {} lease of game {}",
            fence.kind.as_str(),
            fence.item
        )
    };
    let lock = match conn.dialect() {
        Dialect::Sqlite => "",
        Dialect::Postgres => " FOR SHARE",
    };
    let held: Option<i64> = conn
        .query_row(
            &format!(
                "SELECT token FROM leases
                 WHERE kind = ?1 AND item = ?2 AND owner = ?3 AND token = ?4{lock}"
            ),
            params![fence.kind.as_str(), fence.item, fence.owner, fence.token],
            |r| r.get(0),
        )
        .optional()
        .context(what)?;
    if held.is_some() {
        return Ok(());
    }
    let holder: Option<String> = conn
        .query_row(
            "SELECT owner FROM leases WHERE kind = ?1 AND item = ?2 AND owner <> ''",
            params![fence.kind.as_str(), fence.item],
            |r| r.get(0),
        )
        .optional()
        .context(what)?;
    Err(StoreError::LeaseLost {
        game_id: fence.item,
        worker: fence.owner.clone(),
        holder,
    })
}

/// Runs `write` under `fence`: in a transaction that [`check_fence`] opens, or as it is when there
/// is no fence (imports, tests, tools that hold no lease).
pub(super) fn fenced<T>(
    conn: &Conn<'_>,
    fence: Option<&Fence>,
    what: impl Fn() -> String,
    write: impl FnOnce(&Conn<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let Some(fence) = fence else {
        return write(conn);
    };
    // The check is the transaction's first statement, and what follows reads nothing another
    // worker could make stale: no advisory lock on PostgreSQL (see `Conn::write_transaction`).
    let tx = conn.write_transaction().context(&what)?;
    check_fence(&tx, fence)?;
    let value = write(&tx)?;
    tx.commit().context(&what)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_game() -> (Store, i64) {
        let store = Store::open_in_memory().unwrap();
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        for name in ["a", "b"] {
            store
                .upsert_player(t.id, &crate::PlayerRecord::new(name, "random", "{}"))
                .unwrap();
        }
        store
            .schedule_games(t.id, &[crate::ScheduledGame::new(0, 0, "a", "b")])
            .unwrap();
        let id = store.games(t.id).unwrap()[0].id;
        (store, id)
    }

    const LONG: Duration = Duration::from_secs(60);

    /// The fence of `owner`'s claim of `game`'s play lease, `None` when another worker holds it.
    fn claimed(store: &Store, game: i64, owner: &str) -> Option<Fence> {
        match store.claim(LeaseKind::Play, game, owner, LONG).unwrap() {
            Claim::Claimed(fence) => Some(fence),
            Claim::Held { .. } => None,
        }
    }

    /// Makes `game`'s lease lapse under `from` and lets `to` take it: the fences of both.
    fn taken_over(store: &Store, game: i64, from: &str, to: &str) -> (Fence, Fence) {
        let short = Duration::from_millis(200);
        let Claim::Claimed(stale) = store.claim(LeaseKind::Play, game, from, short).unwrap() else {
            panic!("{from} could not claim game {game}");
        };
        std::thread::sleep(Duration::from_millis(300));
        let fresh = claimed(store, game, to).expect("a lapsed lease is taken over");
        (stale, fresh)
    }

    #[test]
    fn the_token_grows_whenever_a_game_changes_hands_and_stays_on_renewal() {
        let (store, game) = store_with_game();
        let first = claimed(&store, game, "w1").unwrap();
        assert_eq!(first.token(), 1);
        assert_eq!(claimed(&store, game, "w1").unwrap().token(), 1, "a renewal");
        store.release(LeaseKind::Play, game, "w1").unwrap();
        // Released and claimed again, even by the same worker: a new holding, a new token.
        assert_eq!(claimed(&store, game, "w1").unwrap().token(), 2);
        store.release(LeaseKind::Play, game, "w1").unwrap();
        let (stale, fresh) = taken_over(&store, game, "w1", "w2");
        assert_eq!((stale.token(), fresh.token()), (3, 4));
        let dead = store
            .take_over(LeaseKind::Play, game, "w2", "w3", LONG)
            .unwrap()
            .unwrap();
        assert_eq!(dead.token(), 5);
    }

    #[test]
    fn every_write_under_a_lost_lease_is_refused_and_the_new_holders_are_accepted() {
        use crate::{CallVerdict, ErrorKind, GameStatus, LlmCallRecord, PlyRecord};
        let (store, game) = store_with_game();
        let ply = |n: u32, uci: &str| PlyRecord {
            ply: n,
            fen_before: "f".into(),
            uci: uci.into(),
            san: uci.into(),
            player: "a".into(),
            attempts: 1,
            elapsed_ms: 1,
            clock_ms: None,
        };
        let call = |seq: u32| LlmCallRecord {
            game_id: Some(game),
            ply: 0,
            seq,
            player: "a".into(),
            model: "m".into(),
            endpoint: "e".into(),
            request_json: "{}".into(),
            reply_text: Some("e2e4".into()),
            reasoning: None,
            raw_body: None,
            finish_reason: None,
            http_status: Some(200),
            prompt_tokens: None,
            completion_tokens: None,
            latency_ms: 1,
            transport_retries: 0,
            error: None,
            details: Default::default(),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (stale, fresh) = taken_over(&store, game, "stalled", "taker");
        let old = store.leased(&stale);
        let new = store.leased(&fresh);
        let lost = |e: StoreError| match e {
            StoreError::LeaseLost {
                game_id,
                worker,
                holder,
            } => {
                assert_eq!(
                    (game_id, worker.as_str(), holder.as_deref()),
                    (game, "stalled", Some("taker"))
                );
            }
            other => panic!("expected the lease lost, got {other}"),
        };
        lost(old.check().unwrap_err());
        lost(old.mark_game_started("h", 1).unwrap_err());
        lost(old.game_time_control(Some("{}")).unwrap_err());
        lost(old.record_ply(&ply(0, "e2e4")).unwrap_err());
        lost(rt.block_on(old.record_llm_call(call(0))).unwrap_err());
        lost(old.reuse_llm_call(0, 0, "{}", &[game]).unwrap_err());
        lost(old.mark_game_errored(ErrorKind::Api, "down").unwrap_err());
        lost(old.finish_game("1-0", "checkmate", None).unwrap_err());
        // Nothing of the stalled worker's reached the store.
        assert!(store.plies(game).unwrap().is_empty());
        assert!(store.llm_calls(game, 0).unwrap().is_empty());
        let row = store.game(game).unwrap();
        assert_eq!((row.status, row.error), (GameStatus::Scheduled, None));
        assert_eq!(store.stored_time_control(game).unwrap(), None);

        // The new holder writes freely; the stalled worker still cannot touch its rows.
        new.check().unwrap();
        new.mark_game_started("h", 1).unwrap();
        let id = rt.block_on(new.record_llm_call(call(0))).unwrap();
        let verdict = CallVerdict {
            call_id: id,
            outcome: "move",
            detail: None,
            candidate: Some("e2e4"),
        };
        lost(old.set_llm_call_verdict(&verdict).unwrap_err());
        lost(
            rt.block_on(old.record_ply_with_verdict(ply(0, "e2e4"), &verdict))
                .unwrap_err(),
        );
        rt.block_on(new.record_ply_with_verdict(ply(0, "e2e4"), &verdict))
            .unwrap();
        new.record_ply(&ply(1, "e7e5")).unwrap();
        lost(old.record_ply(&ply(2, "g1f3")).unwrap_err());
        new.finish_game("1/2-1/2", "agreement", None).unwrap();
        let row = store.game(game).unwrap();
        assert_eq!(row.status, GameStatus::Finished);
        assert_eq!(row.result.as_deref(), Some("1/2-1/2"));
        assert_eq!(store.plies(game).unwrap().len(), 2);
        let calls = store.llm_calls(game, 0).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].outcome.as_deref(), Some("move"));
    }

    #[test]
    fn one_worker_at_a_time_holds_a_game_until_it_releases_it() {
        let (store, game) = store_with_game();
        assert!(claimed(&store, game, "w1").is_some());
        // Renewing one's own claim is granted; another worker is refused and told who holds it.
        assert!(claimed(&store, game, "w1").is_some());
        match store.claim(LeaseKind::Play, game, "w2", LONG).unwrap() {
            Claim::Held { owner, remaining } => {
                assert_eq!(owner, "w1");
                assert!(remaining > Duration::from_secs(50), "{remaining:?}");
            }
            Claim::Claimed(_) => panic!("two workers hold one game"),
        }
        // The kinds are independent: analysing is not playing.
        assert!(matches!(
            store.claim(LeaseKind::Analysis, game, "w2", LONG).unwrap(),
            Claim::Claimed(_)
        ));
        store.release(LeaseKind::Play, game, "w2").unwrap();
        assert!(matches!(
            store.claim(LeaseKind::Play, game, "w2", LONG).unwrap(),
            Claim::Held { .. }
        ));
        store.release(LeaseKind::Play, game, "w1").unwrap();
        assert!(store.leases(LeaseKind::Play).unwrap().is_empty());
        assert!(claimed(&store, game, "w2").is_some());
    }

    #[test]
    fn an_expired_lease_goes_to_the_next_claimant_and_renewal_keeps_it() {
        let (store, game) = store_with_game();
        let short = Duration::from_millis(300);
        store.claim(LeaseKind::Play, game, "dead", short).unwrap();
        assert_eq!(
            store.renew_leases(LeaseKind::Play, "dead", short).unwrap(),
            1
        );
        assert!(matches!(
            store.claim(LeaseKind::Play, game, "next", LONG).unwrap(),
            Claim::Held { .. }
        ));
        std::thread::sleep(Duration::from_millis(400));
        assert!(claimed(&store, game, "next").is_some());
        // The dead worker's renewals no longer find anything of its own.
        assert_eq!(
            store.renew_leases(LeaseKind::Play, "dead", LONG).unwrap(),
            0
        );
    }

    #[test]
    fn a_take_over_succeeds_only_from_the_named_holder() {
        let (store, game) = store_with_game();
        store.claim(LeaseKind::Play, game, "gone", LONG).unwrap();
        assert!(
            store
                .take_over(LeaseKind::Play, game, "someone", "me", LONG)
                .unwrap()
                .is_none()
        );
        let fence = store
            .take_over(LeaseKind::Play, game, "gone", "me", LONG)
            .unwrap()
            .expect("taken over from its holder");
        assert_eq!(claimed(&store, game, "me"), Some(fence));
    }

    #[test]
    fn adjudication_evals_and_verdicts_under_a_lost_lease_are_refused() {
        use crate::{AdjudicationEvalRecord, LimitVerdictRecord, board::Score};
        let (store, game) = store_with_game();
        let (stale, fresh) = taken_over(&store, game, "w1", "w2");
        let eval = AdjudicationEvalRecord {
            ply: 3,
            score: Some(Score::Cp(40)),
            depth: Some(12),
        };
        let verdict = LimitVerdictRecord {
            result: "1-0".into(),
            score: Score::Cp(500),
            threshold_cp: 300,
            engine: "sf".into(),
            limits: "nodes=1000".into(),
        };
        let lost = |e: StoreError| matches!(e, StoreError::LeaseLost { .. });
        assert!(lost(
            store
                .leased(&stale)
                .record_adjudication_eval(&eval)
                .unwrap_err()
        ));
        assert!(lost(
            store
                .leased(&stale)
                .record_limit_verdict(&verdict)
                .unwrap_err()
        ));
        assert!(
            store.adjudication_evals(game).unwrap().is_empty(),
            "the stale write stayed out"
        );
        assert_eq!(store.limit_verdict(game).unwrap(), None);
        store
            .leased(&fresh)
            .record_adjudication_eval(&eval)
            .unwrap();
        store.leased(&fresh).record_limit_verdict(&verdict).unwrap();
        assert_eq!(store.adjudication_evals(game).unwrap(), vec![eval]);
        assert_eq!(store.limit_verdict(game).unwrap(), Some(verdict));
    }

    #[test]
    fn analysis_written_under_a_lost_analysis_lease_is_refused() {
        use crate::{GameAnalysisRecord, PlyAnalysisRecord, PlyRecord, board::Score};
        let (store, game) = store_with_game();
        store
            .record_ply(
                game,
                &PlyRecord {
                    ply: 0,
                    fen_before: "f".into(),
                    uci: "e2e4".into(),
                    san: "e4".into(),
                    player: "a".into(),
                    attempts: 1,
                    elapsed_ms: 1,
                    clock_ms: None,
                },
            )
            .unwrap();
        let short = Duration::from_millis(200);
        let Claim::Claimed(stale) = store.claim(LeaseKind::Analysis, game, "w1", short).unwrap()
        else {
            panic!("w1 could not claim the analysis");
        };
        std::thread::sleep(Duration::from_millis(300));
        let Claim::Claimed(fresh) = store.claim(LeaseKind::Analysis, game, "w2", LONG).unwrap()
        else {
            panic!("a lapsed analysis lease is not taken over");
        };
        let analysis = PlyAnalysisRecord {
            ply: 0,
            engine_id: "sf".into(),
            limits_key: "depth=8".into(),
            win_model: "lichess".into(),
            eval_before: Score::Cp(30),
            eval_after: Score::Cp(-25),
            best: Some("e2e4".into()),
            pv: vec!["e2e4".into()],
            top_json: "[]".into(),
            played_rank: Some(1),
            in_top: true,
            played_score: None,
            all_moves_json: None,
            win_before: 52.0,
            win_after: 48.0,
            cp_loss: 0,
            accuracy: 100.0,
            phase: "opening".into(),
            classification: "best".into(),
        };
        let verdict = GameAnalysisRecord {
            engine_id: "sf".into(),
            limits_key: "depth=8".into(),
            win_model: "lichess".into(),
            white_accuracy: Some(100.0),
            black_accuracy: None,
        };
        let lost = |e: StoreError| assert!(matches!(e, StoreError::LeaseLost { .. }), "{e}");
        lost(
            store
                .leased(&stale)
                .record_ply_analysis(&analysis)
                .unwrap_err(),
        );
        lost(
            store
                .leased(&stale)
                .record_game_analysis(&verdict)
                .unwrap_err(),
        );
        assert!(store.ply_analyses(game).unwrap().is_empty());
        assert!(store.game_analysis(game).unwrap().is_none());
        store.leased(&fresh).record_ply_analysis(&analysis).unwrap();
        store.leased(&fresh).record_game_analysis(&verdict).unwrap();
        assert_eq!(store.ply_analyses(game).unwrap().len(), 1);
        assert!(store.game_analysis(game).unwrap().is_some());
    }

    #[test]
    fn events_about_a_game_under_a_lost_lease_are_refused() {
        let (store, game) = store_with_game();
        let tournament = store.game(game).unwrap().tournament;
        let (stale, fresh) = taken_over(&store, game, "w1", "w2");
        let logged = |store: &Store| {
            store
                .events(tournament)
                .unwrap()
                .into_iter()
                .filter(|e| e.kind == "engine_failure")
                .count()
        };
        let refused = store
            .leased(&stale)
            .record_event(
                tournament,
                "error",
                "engine_failure",
                "from the stalled worker",
            )
            .unwrap_err();
        assert!(matches!(refused, StoreError::LeaseLost { .. }), "{refused}");
        assert_eq!(logged(&store), 0, "the stale event stayed out");
        store
            .leased(&fresh)
            .record_event(tournament, "error", "engine_failure", "from the holder")
            .unwrap();
        assert_eq!(logged(&store), 1);
    }
}
