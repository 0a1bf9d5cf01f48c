//! Leases: which worker plays or analyses which game, so that several processes share one
//! tournament without doing anything twice.
//!
//! A claim is one atomic upsert: it inserts the lease, or takes over the existing row only when
//! that row is this worker's own or has expired. PostgreSQL holds the row's lock for the
//! statement (the equivalent of `SELECT ... FOR UPDATE SKIP LOCKED` then `UPDATE`, in one round
//! trip); SQLite serialises writers. Expiry is judged by the database's clock, never a worker's.

use std::time::Duration;

use super::{
    Context, Store, StoreError,
    db::{Dialect, OptionalExtension, params},
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

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The item is this worker's until the lease expires (unless renewed).
    Claimed,
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
            let granted: Option<String> = conn
                .query_row(
                    &format!(
                        "INSERT INTO leases (kind, item, owner, expires_ms)
                         VALUES (?1, ?2, ?3, {now} + ?4)
                         ON CONFLICT (kind, item) DO UPDATE
                            SET owner = excluded.owner, expires_ms = excluded.expires_ms
                            WHERE leases.owner = excluded.owner OR leases.expires_ms < {now}
                         RETURNING owner"
                    ),
                    params![kind.as_str(), item, owner, millis(duration)],
                    |r| r.get(0),
                )
                .optional()
                .context(what)?;
            if granted.is_some() {
                return Ok(Claim::Claimed);
            }
            let held: Option<(String, i64)> = conn
                .query_row(
                    &format!(
                        "SELECT owner, expires_ms - {now} FROM leases WHERE kind = ?1 AND item = ?2"
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
    /// for a holder known to be dead (a process of this machine that no longer exists).
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
    ) -> Result<bool, StoreError> {
        let conn = self.conn();
        let now = now_ms(conn.dialect());
        let changed = conn
            .execute(
                &format!(
                    "UPDATE leases SET owner = ?4, expires_ms = {now} + ?5
                     WHERE kind = ?1 AND item = ?2 AND owner = ?3"
                ),
                params![kind.as_str(), item, from, owner, millis(duration)],
            )
            .context(|| format!("take the {} lease of game {item} over", kind.as_str()))?;
        Ok(changed == 1)
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
            .prepare("SELECT item, owner FROM leases WHERE kind = ?1 ORDER BY item")
            .context(|| "list the leases".to_owned())?;
        let rows = stmt
            .query_map(params![kind.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .context(|| "list the leases".to_owned())?;
        rows.collect::<Result<_, _>>()
            .context(|| "list the leases".to_owned())
    }

    /// Gives `item` back (a no-op unless `owner` holds it).
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`] on a database failure.
    pub fn release(&self, kind: LeaseKind, item: i64, owner: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "DELETE FROM leases WHERE kind = ?1 AND item = ?2 AND owner = ?3",
                params![kind.as_str(), item, owner],
            )
            .context(|| format!("release the {} lease of game {item}", kind.as_str()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_game() -> (Store, i64) {
        let store = Store::open_in_memory().unwrap();
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        for name in ["a", "b"] {
            store
                .upsert_player(t.id, &crate::store::PlayerRecord::new(name, "random", "{}"))
                .unwrap();
        }
        store
            .schedule_games(t.id, &[crate::store::ScheduledGame::new(0, 0, "a", "b")])
            .unwrap();
        let id = store.games(t.id).unwrap()[0].id;
        (store, id)
    }

    const LONG: Duration = Duration::from_secs(60);

    #[test]
    fn one_worker_at_a_time_holds_a_game_until_it_releases_it() {
        let (store, game) = store_with_game();
        assert_eq!(
            store.claim(LeaseKind::Play, game, "w1", LONG).unwrap(),
            Claim::Claimed
        );
        // Renewing one's own claim is granted; another worker is refused and told who holds it.
        assert_eq!(
            store.claim(LeaseKind::Play, game, "w1", LONG).unwrap(),
            Claim::Claimed
        );
        match store.claim(LeaseKind::Play, game, "w2", LONG).unwrap() {
            Claim::Held { owner, remaining } => {
                assert_eq!(owner, "w1");
                assert!(remaining > Duration::from_secs(50), "{remaining:?}");
            }
            Claim::Claimed => panic!("two workers hold one game"),
        }
        // The kinds are independent: analysing is not playing.
        assert_eq!(
            store.claim(LeaseKind::Analysis, game, "w2", LONG).unwrap(),
            Claim::Claimed
        );
        store.release(LeaseKind::Play, game, "w2").unwrap();
        assert!(matches!(
            store.claim(LeaseKind::Play, game, "w2", LONG).unwrap(),
            Claim::Held { .. }
        ));
        store.release(LeaseKind::Play, game, "w1").unwrap();
        assert_eq!(
            store.claim(LeaseKind::Play, game, "w2", LONG).unwrap(),
            Claim::Claimed
        );
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
        assert_eq!(
            store.claim(LeaseKind::Play, game, "next", LONG).unwrap(),
            Claim::Claimed
        );
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
            !store
                .take_over(LeaseKind::Play, game, "someone", "me", LONG)
                .unwrap()
        );
        assert!(
            store
                .take_over(LeaseKind::Play, game, "gone", "me", LONG)
                .unwrap()
        );
        assert_eq!(
            store.claim(LeaseKind::Play, game, "me", LONG).unwrap(),
            Claim::Claimed
        );
    }
}
