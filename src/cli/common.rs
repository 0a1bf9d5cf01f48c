//! What several commands share: opening a store, choosing its tournaments, writing the output.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

use anyhow::{Result, bail};
use arena::store::{Store, TournamentRow};

/// `tournaments/quickstart.lua` stores into `quickstart.db`.
pub(super) fn default_db(script: &Path) -> PathBuf {
    let stem = script
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "arena".into());
    PathBuf::from(format!("{stem}.db"))
}

pub(super) fn open_existing(db: &Path) -> Result<Store> {
    if !db.exists() {
        bail!("no store at `{}`", db.display());
    }
    Ok(Store::open(db)?)
}

pub(super) fn select(store: &Store, name: Option<&str>) -> Result<Vec<TournamentRow>> {
    match name {
        Some(name) => match store.find_tournament(name)? {
            Some(t) => Ok(vec![t]),
            None => bail!("the store has no tournament named `{name}`"),
        },
        None => Ok(store.tournaments()?),
    }
}

/// Writes to standard output; a closed pipe (`arena export pgn | head`) is not an error.
pub(super) fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
