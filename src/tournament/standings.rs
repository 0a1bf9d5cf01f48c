//! A stored tournament's format tables: the format is rebuilt from the scripts stored with its
//! games (so the tables read as the format that paired them saw them, even when the script on
//! disk has changed or gone) and asked for [`Format::standings`](super::schedule::Format).

use std::path::Path;

use thiserror::Error;

use super::{
    rules::ScriptHost,
    schedule::{FormatGame, FormatState},
};
use crate::{
    script::{CheckErrors, ScriptError},
    store::{Store, StoreError, TournamentRow},
    table::Table,
};

/// Why a stored tournament's format tables could not be made.
#[derive(Debug, Error)]
pub enum StandingsError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The stored scripts no longer load.
    #[error("the tournament's stored scripts do not load: {0}")]
    Scripts(#[from] CheckErrors),
    /// The format's `standings` hook failed.
    #[error("the format's standings: {0}")]
    Format(#[from] ScriptError),
}

/// The tables `tournament`'s format makes of its stored games; none when no game has started
/// (no scripts are stored yet) or when the format has no tables of its own.
///
/// # Errors
/// A store failure, stored scripts that do not load, or a failing `standings` hook.
pub fn stored_standings(
    store: &Store,
    host: &dyn ScriptHost,
    tournament: &TournamentRow,
) -> Result<Vec<Table>, StandingsError> {
    let games = store.games(tournament.id)?;
    // The scripts of the last game started: generation numbers start again with every run, so
    // the schedule order says best which scripts the format was last asked through.
    let Some(newest) = games
        .iter()
        .filter(|g| g.script_hash.is_some())
        .max_by_key(|g| g.index)
    else {
        return Ok(Vec::new());
    };
    let hash = newest.script_hash.as_deref().unwrap_or_default();
    let Some(files) = store.scripts(hash)? else {
        return Ok(Vec::new());
    };
    // Rebuilding runs the whole script; a format without tables need not pay for it (nor an old
    // tournament whose scripts no longer load warn about tables it never had).
    if !files.iter().any(|(_, text)| text.contains("standings")) {
        return Ok(Vec::new());
    }
    let rules = host.rebuild(
        Path::new(&tournament.script_path),
        newest.generation.unwrap_or(0),
        files.into_iter().collect(),
    )?;
    let format = rules.format()?;
    // The openings only matter for pairing, so they are not read (0) for the tables.
    let state = FormatState::new(
        rules.spec(),
        // As the format saw them: a replay stands in the place of the void game it replays.
        crate::store::current_attempts(&games)
            .into_iter()
            .map(FormatGame::from_row)
            .collect(),
        0,
        format.options().clone(),
    );
    let mut tables = format.standings(&state)?;
    // An experiment adds its paired protocol differences, which need the stored calls.
    if let Some(design) = super::experiment::design_of(&state) {
        let prices = super::budget::price_table(&rules.spec().settings);
        tables.push(super::experiment::metrics_table(
            &design,
            &crate::store::current_attempts(&games),
            &store.call_summaries(tournament.id)?,
            &prices,
        ));
    }
    Ok(tables)
}
