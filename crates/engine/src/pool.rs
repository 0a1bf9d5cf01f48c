//! Leasing engine processes to games.
//!
//! A game leases one process per engine player for its whole duration, as fastchess does, so that
//! concurrent games never share an engine's hash or search state. Returned processes stay alive and
//! are reused by later games after a `ucinewgame`, which spares the start-up cost (Stockfish loads
//! its network) on every game.

use std::{
    ops::Deref,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use futures_util::future::join_all;
use tracing::warn;

use super::{EngineError, EngineHandle, EngineSpec};

/// Engine processes for one engine player, leased to one game at a time each.
#[derive(Debug)]
pub struct EnginePool {
    spec: EngineSpec,
    inner: Arc<PoolInner>,
}

#[derive(Debug, Default)]
struct PoolInner {
    idle: Mutex<Vec<EngineHandle>>,
    closed: AtomicBool,
    spawned: AtomicUsize,
}

impl PoolInner {
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<EngineHandle>> {
        // The list stays consistent even if a holder panicked: pushes and pops are atomic.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl EnginePool {
    /// A pool that starts processes from `spec` on demand; it starts none yet.
    pub fn new(spec: EngineSpec) -> EnginePool {
        EnginePool {
            spec,
            inner: Arc::default(),
        }
    }

    /// The spec processes are started from.
    pub fn spec(&self) -> &EngineSpec {
        &self.spec
    }

    /// How many processes this pool has started (restarts after faults are not counted here).
    pub fn spawned(&self) -> usize {
        self.inner.spawned.load(Ordering::Relaxed)
    }

    /// How many processes wait for a game.
    pub fn idle(&self) -> usize {
        self.inner.idle().len()
    }

    /// Leases a process for one game: an idle one after `ucinewgame`, or a newly started one.
    ///
    /// # Errors
    ///
    /// [`EngineError::Shutdown`] after [`shutdown`](EnginePool::shutdown); otherwise the errors of
    /// [`EngineHandle::spawn`].
    pub async fn lease(&self) -> Result<EngineLease, EngineError> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(EngineError::Shutdown {
                name: self.spec.name.clone(),
            });
        }
        let reused = self.inner.idle().pop();
        if let Some(handle) = reused {
            match handle.new_game().await {
                Ok(()) => return Ok(self.wrap(handle)),
                // The process will not do; dropping the handle ends it, and a fresh one replaces it.
                Err(err) => {
                    warn!(engine = %self.spec.name, error = %err, "idle engine failed ucinewgame")
                }
            }
        }
        let handle = EngineHandle::spawn(self.spec.clone()).await?;
        self.inner.spawned.fetch_add(1, Ordering::Relaxed);
        Ok(self.wrap(handle))
    }

    /// Stops taking leases and quits every idle process. Leased processes quit when their lease is dropped.
    pub async fn shutdown(&self) {
        self.inner.closed.store(true, Ordering::Release);
        let idle: Vec<EngineHandle> = self.inner.idle().drain(..).collect();
        join_all(idle.into_iter().map(EngineHandle::shutdown)).await;
    }

    fn wrap(&self, handle: EngineHandle) -> EngineLease {
        EngineLease {
            handle: Some(handle),
            pool: Arc::clone(&self.inner),
        }
    }
}

/// One process leased to one game; it goes back to the pool when the lease is dropped.
///
/// Derefs to the [`EngineHandle`]. Do not keep clones of the handle beyond the lease: the process
/// will serve the next game.
#[derive(Debug)]
pub struct EngineLease {
    handle: Option<EngineHandle>,
    pool: Arc<PoolInner>,
}

impl Deref for EngineLease {
    type Target = EngineHandle;

    fn deref(&self) -> &EngineHandle {
        self.handle
            .as_ref()
            .expect("the handle is only taken in drop")
    }
}

impl Drop for EngineLease {
    fn drop(&mut self) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        if !self.pool.closed.load(Ordering::Acquire) {
            self.pool.idle().push(handle);
        }
        // Otherwise dropping the last handle makes its actor send `quit`.
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::SearchLimits;

    const STOCKFISH: &str = "/usr/games/stockfish";

    fn pool() -> Option<EnginePool> {
        if !Path::new(STOCKFISH).exists() {
            crate::test_parts::missing(
                "engine::pool tests",
                STOCKFISH,
                "apt-get install stockfish",
            );
            return None;
        }
        Some(EnginePool::new(
            EngineSpec::new("sf", STOCKFISH)
                .option("Threads", "1")
                .option("Hash", "16"),
        ))
    }

    #[tokio::test]
    async fn sequential_leases_reuse_one_process() {
        let Some(pool) = pool() else { return };
        for _ in 0..2 {
            let lease = pool.lease().await.expect("a lease");
            lease
                .best_move(None, &[], &SearchLimits::nodes(500))
                .await
                .expect("a move");
            assert_eq!(pool.idle(), 0);
        }
        assert_eq!(pool.spawned(), 1);
        assert_eq!(pool.idle(), 1);
        pool.shutdown().await;
        assert_eq!(pool.idle(), 0);
    }

    #[tokio::test]
    async fn concurrent_leases_get_their_own_processes() {
        let Some(pool) = pool() else { return };
        let (a, b) = tokio::join!(pool.lease(), pool.lease());
        let (a, b) = (a.expect("lease a"), b.expect("lease b"));
        let limits = SearchLimits::nodes(1000);
        let (ma, mb) = tokio::join!(
            a.best_move(None, &[], &limits),
            b.best_move(None, &[], &limits)
        );
        // Same engine, same settings, separate processes: same answer (in its own time).
        let (ma, mb) = (ma.expect("move a"), mb.expect("move b"));
        assert_eq!((&ma.uci, &ma.info), (&mb.uci, &mb.info));
        assert_eq!(pool.spawned(), 2);
        drop((a, b));
        assert_eq!(pool.idle(), 2);

        let again = pool.lease().await.expect("a reused lease");
        assert_eq!(pool.spawned(), 2);
        drop(again);
        pool.shutdown().await;
        let err = pool.lease().await.expect_err("the pool is shut down");
        assert!(
            matches!(&err, EngineError::Shutdown { name } if name == "sf"),
            "{err:?}"
        );
    }
}
