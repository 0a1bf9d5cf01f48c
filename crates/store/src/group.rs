//! Group commit for the SQLite backend: the game loop's writes (a call's row with its reply, a
//! ply with its call's verdict) that arrive while another commit is in flight go into the next
//! transaction together, each in a savepoint of its own.
//!
//! A SQLite commit costs the same whether it carries one row or twenty: the WAL frames of the
//! same few hot pages (the b-tree leaves at the end of `llm_calls` and `plies` and their indexes),
//! the locks, the WAL index. With a thousand games at once that was about 10,000 commits per
//! second, each on its own transaction, a quarter of arena's CPU. Here:
//!
//! - **An idle store commits a lone write at once**, on the caller's thread, in a transaction of
//!   its own: no timer, no hand-off, nothing added where there is no contention.
//! - **A write that arrives while a commit is in flight is queued**, and its caller awaits. When
//!   the commit in flight ends, whatever is queued is committed in one transaction by a drainer
//!   on tokio's blocking pool (or a thread of its own outside a runtime), which keeps going while
//!   writes keep arriving and stops when the queue is empty.
//! - **A caller resumes only once the transaction holding its write is committed**, so "every
//!   reply is stored before it is used" holds exactly: a reply it reads is in the file, whatever
//!   happens next (`kill -9` included). Its id (an `INSERT`'s row id) comes back to it alone.
//! - **A write that fails fails only its own caller**: it runs in a `SAVEPOINT`, rolled back on
//!   error, and the others' writes commit. Should SQLite roll the whole transaction back itself
//!   (an I/O error, a full disk), or the commit fail, every write of the batch fails with that
//!   error, as it would have on its own.
//!
//! Reads and the store's other writes use the same connection, behind the same mutex, so every
//! query sees every committed write, and a game reading after its write resumed reads it.
//! PostgreSQL keeps its own path (each write its own statement on a pooled connection).
//!
//! Hand-written: SQLite has no group commit of its own across connections' transactions, and no
//! crate we know of offers one over rusqlite.

use std::sync::{
    Arc, Mutex, PoisonError,
    atomic::{AtomicU64, Ordering},
};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{
    Context, StoreError,
    db::{Conn, DbError, DbResult, params},
};

/// The SQLite backend: the one connection, and the queue of writes waiting for a transaction.
#[derive(Debug)]
pub(crate) struct Sqlite {
    /// The connection every query runs on.
    pub(crate) conn: Mutex<Connection>,
    queue: Mutex<Queue>,
    /// Writes committed through the queue, and the transactions that carried them.
    writes: AtomicU64,
    transactions: AtomicU64,
}

#[derive(Debug, Default)]
struct Queue {
    /// A batch is being committed (inline or by a drainer), or a drainer is on its way: a new
    /// write queues rather than starting a transaction of its own.
    committing: bool,
    pending: Vec<Box<dyn Job>>,
}

/// One queued write, type-erased so that writes of different results share the queue.
trait Job: Send {
    /// Runs the write on the batch's connection; whether it succeeded.
    fn run(&mut self, conn: &Conn<'_>) -> bool;
    /// Whether the write is one statement, which SQLite makes atomic on its own: alone, it
    /// needs no `BEGIN` and `COMMIT` around it.
    fn one_statement(&self) -> bool;
    /// Hands the caller its outcome once the batch's transaction is over: its own error if it
    /// failed, else its result if the transaction committed, else `failure`.
    fn finish(self: Box<Self>, failure: Option<&DbError>);
}

impl std::fmt::Debug for dyn Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Job")
    }
}

struct Write<T, F, W> {
    op: Option<F>,
    one_statement: bool,
    what: W,
    result: Option<Result<T, StoreError>>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F, W> Job for Write<T, F, W>
where
    T: Send,
    F: FnOnce(&Conn<'_>) -> Result<T, StoreError> + Send,
    W: Fn() -> String + Send,
{
    fn run(&mut self, conn: &Conn<'_>) -> bool {
        let op = self.op.take().expect("a queued write runs once");
        let result = op(conn);
        let ok = result.is_ok();
        self.result = Some(result);
        ok
    }

    fn one_statement(&self) -> bool {
        self.one_statement
    }

    fn finish(self: Box<Self>, failure: Option<&DbError>) {
        let Write {
            result,
            what,
            reply,
            ..
        } = *self;
        let outcome = match (result, failure) {
            (Some(Err(own)), _) => Err(own),
            (Some(Ok(value)), None) => Ok(value),
            // Committed nothing: the transaction failed, or was lost before this write ran.
            (_, Some(e)) => Err::<T, _>(copy_error(e)).context(&what),
            (None, None) => Err::<T, _>(DbError::NoRows).context(&what),
        };
        // A caller that stopped waiting (its task was dropped) needs no answer; its write is
        // committed all the same, as it would have been on its own.
        let _ = reply.send(outcome);
    }
}

/// A copy of a batch-wide failure for each of the batch's callers (rusqlite's error is not
/// `Clone`): SQLite's own code is kept, so a lock timeout still reads as one.
fn copy_error(e: &DbError) -> DbError {
    let failure = match e {
        DbError::Sqlite(rusqlite::Error::SqliteFailure(code, message)) => {
            rusqlite::Error::SqliteFailure(*code, message.clone())
        }
        other => rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    };
    DbError::Sqlite(failure)
}

impl Sqlite {
    /// The backend of an open connection.
    pub(crate) fn new(conn: Connection) -> Arc<Sqlite> {
        Arc::new(Sqlite {
            conn: Mutex::new(conn),
            queue: Mutex::new(Queue::default()),
            writes: AtomicU64::new(0),
            transactions: AtomicU64::new(0),
        })
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A panic elsewhere cannot leave the queue inconsistent: it is only pushed and taken.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `op` (writes only, no transaction of its own) in a transaction, with the writes of
    /// other callers when a commit is in flight, and returns its result once that transaction is
    /// committed. `what` names the write in an error that is not its own (the commit failing).
    pub(crate) async fn write<T, F, W>(self: &Arc<Self>, op: F, what: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T, StoreError> + Send + 'static,
        W: Fn() -> String + Send + 'static,
    {
        self.queue_write(op, false, what).await
    }

    /// [`Sqlite::write`] of a single statement: alone on an idle store it runs as it is, atomic
    /// and committed by SQLite itself, as it was before group commit.
    pub(crate) async fn write_statement<T, F, W>(
        self: &Arc<Self>,
        op: F,
        what: W,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T, StoreError> + Send + 'static,
        W: Fn() -> String + Send + 'static,
    {
        self.queue_write(op, true, what).await
    }

    async fn queue_write<T, F, W>(
        self: &Arc<Self>,
        op: F,
        one_statement: bool,
        what: W,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T, StoreError> + Send + 'static,
        W: Fn() -> String + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job: Box<dyn Job> = Box::new(Write {
            op: Some(op),
            one_statement,
            what,
            result: None,
            reply,
        });
        // Queued behind the commit in flight, or (`Some`) committing alone at once. The guard
        // ends in this block: it must not live across the `await`.
        let job = {
            let mut queue = self.lock_queue();
            if queue.committing {
                queue.pending.push(job);
                None
            } else {
                queue.committing = true;
                Some(job)
            }
        };
        let Some(job) = job else {
            return answer.await.unwrap_or_else(|_| lost());
        };
        {
            // Hands the queue on even if the batch panics, so that no write waits forever.
            let _on_panic = OnPanic(self);
            self.commit(vec![job]);
        }
        self.hand_off();
        let mut answer = answer;
        answer.try_recv().unwrap_or_else(|_| lost())
    }

    /// After a batch: stops committing if nothing is queued, else starts a drainer for what is.
    fn hand_off(self: &Arc<Self>) {
        let mut queue = self.lock_queue();
        if queue.pending.is_empty() {
            queue.committing = false;
            return;
        }
        drop(queue);
        let me = Arc::clone(self);
        let drain = move || me.drain();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(drain)),
            Err(_) => drop(std::thread::spawn(drain)),
        }
    }

    /// Commits what is queued, batch after batch, until the queue is empty.
    fn drain(self: Arc<Self>) {
        let _on_panic = OnPanic(&self);
        loop {
            let batch = {
                let mut queue = self.lock_queue();
                if queue.pending.is_empty() {
                    queue.committing = false;
                    return;
                }
                std::mem::take(&mut queue.pending)
            };
            self.commit(batch);
        }
    }

    /// Runs a batch in one transaction and answers each of its callers.
    fn commit(&self, mut batch: Vec<Box<dyn Job>>) {
        let failure = {
            let guard = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
            let conn = Conn::Sqlite(guard);
            self.run_batch(&conn, &mut batch).err()
        };
        for job in batch {
            job.finish(failure.as_ref());
        }
    }

    fn run_batch(&self, conn: &Conn<'_>, batch: &mut [Box<dyn Job>]) -> DbResult<()> {
        if let [alone] = batch
            && alone.one_statement()
        {
            // Its own implicit transaction, committed (or not) by SQLite; its caller gets its
            // own result.
            if alone.run(conn) {
                self.transactions.fetch_add(1, Ordering::Relaxed);
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            return Ok(());
        }
        conn.execute("BEGIN IMMEDIATE", params![])?;
        // Whatever fails from here on, the connection must not be left inside the transaction.
        let committed = run_writes(conn, batch).and_then(|commit| {
            if commit {
                conn.execute("COMMIT", params![])?;
            }
            Ok(commit)
        });
        match committed {
            // The lone write failed: its caller has its own error, and nothing was committed.
            Ok(false) => {
                rollback(conn);
                Ok(())
            }
            Ok(true) => {
                self.transactions.fetch_add(1, Ordering::Relaxed);
                self.writes.fetch_add(batch.len() as u64, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                rollback(conn);
                Err(e)
            }
        }
    }

    /// Writes committed through [`Sqlite::write`] and the transactions that carried them.
    pub(crate) fn grouped(&self) -> (u64, u64) {
        (
            self.writes.load(Ordering::Relaxed),
            self.transactions.load(Ordering::Relaxed),
        )
    }

    /// How many writes wait for the next transaction (for tests).
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.lock_queue().pending.len()
    }
}

/// Runs a batch's writes inside its open transaction: a lone write as it is, several each in a
/// savepoint that is rolled back if it fails. Whether to commit (not when a lone write failed:
/// the transaction was all its own); `Err` when the batch as a whole failed.
fn run_writes(conn: &Conn<'_>, batch: &mut [Box<dyn Job>]) -> DbResult<bool> {
    let Conn::Sqlite(c) = conn else {
        unreachable!("the SQLite backend's connection")
    };
    if let [alone] = batch {
        // A lone write needs no savepoint: on failure the whole transaction is its own.
        return Ok(alone.run(conn));
    }
    for job in batch.iter_mut() {
        conn.execute("SAVEPOINT arena_write", params![])?;
        if job.run(conn) {
            conn.execute("RELEASE arena_write", params![])?;
            continue;
        }
        if c.is_autocommit() {
            // SQLite rolled the whole transaction back (I/O error, full disk): the writes
            // before this one are gone too, and the rest never ran.
            return Err(DbError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                Some("a failed write rolled its batch's transaction back".to_owned()),
            )));
        }
        conn.execute("ROLLBACK TO arena_write", params![])?;
        conn.execute("RELEASE arena_write", params![])?;
    }
    Ok(true)
}

/// Rolls back the open transaction, if any. Best effort: should the rollback fail, the
/// connection is broken and the next statement says so.
fn rollback(conn: &Conn<'_>) {
    let Conn::Sqlite(c) = conn else {
        unreachable!("the SQLite backend's connection")
    };
    if !c.is_autocommit() {
        let _ = conn.execute("ROLLBACK", params![]);
    }
}

impl Drop for Sqlite {
    fn drop(&mut self) {
        let (writes, transactions) = self.grouped();
        if transactions > 0 {
            tracing::debug!(
                "the store committed {writes} game-loop writes in {transactions} transactions"
            );
        }
    }
}

/// Calls [`Sqlite::hand_off`] when dropped while unwinding: a batch that panicked (a bug) must
/// not leave the queue marked as committing, or every later write would wait forever.
struct OnPanic<'a>(&'a Arc<Sqlite>);

impl Drop for OnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.hand_off();
        }
    }
}

fn lost<T>() -> Result<T, StoreError> {
    Err(StoreError::Database {
        what: "commit a write".to_owned(),
        cause: super::BackendError(DbError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
            Some("the batch committing it stopped before answering".to_owned()),
        ))),
    })
}
