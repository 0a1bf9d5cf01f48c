//! This process as one of several workers sharing a store: its name in leases, how long its
//! leases run, and the claims it makes.
//!
//! A worker is named `MACHINE#PID#TOKEN`. The machine is the host name (or `--worker`), the
//! token is random, so a restarted process with a recycled pid is still someone else. A lease
//! whose holder is a process of this same machine that no longer exists is taken over at once
//! (a killed single-machine run resumes without waiting); any other holder keeps the item until
//! its lease expires by the database's clock, which is what a worker on another machine, killed
//! with -9, leaves behind.

use std::{sync::Arc, time::Duration};

use crate::store::{Claim, Fence, LeaseKind, Store, StoreError};

/// How long a lease runs unless renewed, by default.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// One worker: its name in the leases and the length of its leases.
#[derive(Debug, Clone)]
pub struct Worker {
    id: String,
    machine: String,
    lease: Duration,
}

impl Worker {
    /// A worker on `machine` (default: this host's name), holding leases for `lease`.
    pub fn new(machine: Option<String>, lease: Duration) -> Worker {
        let machine = machine
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(host_name)
            .replace('#', "_");
        let id = format!(
            "{machine}#{}#{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        Worker {
            id,
            machine,
            lease: lease.max(Duration::from_secs(1)),
        }
    }

    /// The name this worker's leases carry.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// How long its leases run unless renewed.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// How often to wait and look again for work that another worker holds.
    pub fn poll_interval(&self) -> Duration {
        (self.lease / 30).clamp(Duration::from_millis(100), Duration::from_secs(1))
    }

    /// Claims `item`; a live process of another worker keeps it. Returns the fence this
    /// worker's writes to the item carry when it now holds it, `None` when another worker does.
    ///
    /// # Errors
    ///
    /// A store failure.
    pub fn claim(
        &self,
        store: &Store,
        kind: LeaseKind,
        item: i64,
    ) -> Result<Option<Fence>, StoreError> {
        match store.claim(kind, item, &self.id, self.lease)? {
            Claim::Claimed(fence) => Ok(Some(fence)),
            Claim::Held { owner, .. } if self.is_dead_neighbour(&owner) => {
                tracing::info!(
                    "game {item}: its {} lease was held by `{owner}`, a process of this machine that no longer runs; taking it over",
                    kind_name(kind)
                );
                store.take_over(kind, item, &owner, &self.id, self.lease)
            }
            Claim::Held { .. } => Ok(None),
        }
    }

    /// Gives `item` back; a failure is only logged, since the lease expires anyway.
    pub fn release(&self, store: &Store, kind: LeaseKind, item: i64) {
        if let Err(e) = store.release(kind, item, &self.id) {
            tracing::warn!(
                "cannot release the {} lease of game {item}: {e}",
                kind_name(kind)
            );
        }
    }

    /// Renews this worker's leases of `kind` every third of their length until the task is
    /// aborted (dropping the handle does not stop it).
    pub fn keep_renewing(&self, store: Arc<Store>, kind: LeaseKind) -> tokio::task::JoinHandle<()> {
        let worker = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(worker.lease / 3);
            loop {
                tick.tick().await;
                if let Err(e) = store.renew_leases(kind, &worker.id, worker.lease) {
                    tracing::warn!("cannot renew the {} leases: {e}", kind_name(kind));
                }
            }
        })
    }

    /// Whether `owner` is a worker of this machine whose process is gone.
    fn is_dead_neighbour(&self, owner: &str) -> bool {
        let mut parts = owner.split('#');
        let (Some(machine), Some(pid)) = (parts.next(), parts.next()) else {
            return false;
        };
        machine == self.machine
            && pid.parse::<u32>().is_ok_and(|pid| {
                pid != std::process::id()
                    && !std::path::Path::new(&format!("/proc/{pid}")).exists()
                    // Without /proc (not Linux) nothing is known: wait for the expiry.
                    && std::path::Path::new("/proc/self").exists()
            })
    }
}

fn kind_name(kind: LeaseKind) -> &'static str {
    match kind {
        LeaseKind::Play => "play",
        LeaseKind::Analysis => "analysis",
    }
}

/// This machine's name, as the kernel has it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_process_of_this_machine_is_taken_over_and_a_live_or_remote_one_is_not() {
        let me = Worker::new(Some("lab1".into()), DEFAULT_LEASE);
        assert!(
            me.id()
                .starts_with(&format!("lab1#{}#", std::process::id()))
        );
        // pid 1 exists on Linux; a pid above the kernel's maximum never does.
        assert!(!me.is_dead_neighbour("lab1#1#00000000"));
        assert!(me.is_dead_neighbour("lab1#4194305#00000000"));
        assert!(!me.is_dead_neighbour("lab2#4194305#00000000"));
        assert!(!me.is_dead_neighbour(me.id()));
        assert!(!me.is_dead_neighbour("garbage"));
    }
}
