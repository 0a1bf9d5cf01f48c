//! What several commands share: opening a store, choosing its tournaments, writing the output.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{Result, bail};
use arena::{
    lua::LuaHost,
    store::{Store, TournamentRow},
    table::Table,
    tournament::{
        standings::{StoredExperiment, stored_experiment, stored_standings},
        versions,
    },
};

/// `tournaments/quickstart.lua` stores into `quickstart.db`.
pub(super) fn default_db(script: &Path) -> PathBuf {
    let stem = script
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "arena".into());
    PathBuf::from(format!("{stem}.db"))
}

pub(super) fn open_existing(db: &Path) -> Result<Store> {
    if !arena::store::location_exists(db) {
        bail!("no store at `{}`", arena::store::display_location(db));
    }
    Ok(Store::open(db)?)
}

/// The tournament named `name`, or all of them; an unknown name gives the message listing the
/// names there are.
pub(super) fn select(store: &Store, name: Option<&str>) -> Result<Vec<TournamentRow>> {
    match name {
        Some(name) => match store.find_tournament(name)? {
            Some(t) => Ok(vec![t]),
            None => {
                let names: Vec<String> = store.tournaments()?.into_iter().map(|t| t.name).collect();
                bail!(
                    "the store has no tournament named `{name}`; {}",
                    there_are(&names, "the store has none")
                )
            }
        },
        None => Ok(store.tournaments()?),
    }
}

/// `there are: `a`, `b`` for the end of an "unknown name" message, or `none` when `names` is
/// empty: a misspelt name is fixed at once when the right one is in front of the user.
pub(super) fn there_are(names: &[String], none: &str) -> String {
    if names.is_empty() {
        return none.to_owned();
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    format!("there are: {}", quoted.join(", "))
}

/// Writes to standard output; a closed pipe (`arena export pgn | head`) is not an error.
pub(super) fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The tables `tournament`'s own format makes (a Swiss table, a knockout bracket), or none with a
/// warning when they cannot be made: the other tables do not depend on them.
pub(super) fn format_tables(store: &Store, tournament: &TournamentRow) -> Vec<Table> {
    match stored_standings(store, &LuaHost, tournament) {
        Ok(tables) => tables,
        Err(e) => {
            eprintln!(
                "warning: the format tables of tournament `{}` are not shown: {e}",
                tournament.name
            );
            Vec::new()
        }
    }
}

/// The experiment's versions side by side (see `tournament::versions::table`), for the newest
/// of two or more versions of an experiment; none otherwise (with a warning when they cannot be
/// read).
pub(super) fn versions_table(store: &Store, tournament: &TournamentRow) -> Option<Table> {
    let (name, version) = versions::version_of(tournament);
    let newest = versions::versions(store, &name)
        .ok()?
        .last()
        .map(|(v, _)| *v);
    if newest != Some(version) {
        return None;
    }
    versions::table(store, &LuaHost, tournament).unwrap_or_else(|e| {
        eprintln!("warning: the versions of tournament `{name}` are not compared: {e}");
        None
    })
}

/// `tournament`'s experiment for the report's charts, or none (with a warning when it cannot be
/// read: the format tables say why too).
pub(super) fn experiment(store: &Store, tournament: &TournamentRow) -> Option<StoredExperiment> {
    stored_experiment(store, &LuaHost, tournament).unwrap_or_else(|e| {
        tracing::debug!("no experiment charts for `{}`: {e}", tournament.name);
        None
    })
}

/// How this process takes part when several share one store (`--db postgres://...`).
#[derive(Debug, Clone, clap::Args)]
pub(super) struct WorkerArgs {
    /// This worker's machine name in the leases (default: the host name). Processes of one
    /// machine take over a dead neighbour's games at once; others wait for its leases to lapse.
    #[arg(long, value_name = "NAME")]
    worker: Option<String>,
    /// How long a lease on a game lasts unless renewed, in seconds: how soon other workers
    /// take up the games of a worker that died (it renews every third of this).
    #[arg(long, value_name = "SECONDS", default_value_t = arena::tournament::worker::DEFAULT_LEASE.as_secs())]
    lease_s: u64,
}

impl WorkerArgs {
    /// The worker these arguments describe.
    pub(super) fn worker(&self) -> arena::tournament::worker::Worker {
        arena::tournament::worker::Worker::new(
            self.worker.clone(),
            std::time::Duration::from_secs(self.lease_s),
        )
    }
}
