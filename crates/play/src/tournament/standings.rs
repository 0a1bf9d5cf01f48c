//! A stored tournament's format tables (and a Swiss tournament's pairing record): the format is rebuilt from the scripts stored with its
//! games (so the tables read as the format that paired them saw them, even when the script on
//! disk has changed or gone) and asked for [`Format::standings`](super::schedule::Format).

use std::path::Path;

use thiserror::Error;

use super::{
    rules::ScriptHost,
    schedule::{Format, FormatGame, FormatState},
};
use crate::{
    pairing::Record,
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
    /// An experiment's stored design or games are unusable.
    #[error(transparent)]
    Experiment(#[from] super::experiment::ExperimentError),
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
    // Rebuilding runs the whole script; a format without tables need not pay for it (nor an old
    // tournament whose scripts no longer load warn about tables it never had).
    let Some(stored) = stored_format(store, host, tournament, "standings")? else {
        return Ok(Vec::new());
    };
    let mut tables = stored.format.standings(&stored.state)?;
    // An experiment's table gains the paired protocol differences, which need the stored calls
    // (the format script sees only the games), and a table of their details.
    if let Some(view) = experiment_of(store, tournament, &stored)? {
        let mut table =
            super::experiment::table(&view.design, &view.status, Some(&view.differences));
        // An arm that compared no chess gets that verdict in place of its Elo.
        super::degenerate::ChessCompared::read(store, tournament.id)?
            .mark_experiment(&mut table, &view.design.baseline);
        match tables.iter_mut().find(|t| t.kind == "experiment") {
            Some(t) => *t = table,
            None => tables.push(table),
        }
        tables.push(super::experiment::metrics_table(
            &view.design,
            &view.differences,
        ));
    }
    Ok(tables)
}

/// An experiment as the report draws it: its design, where each arm stands (with its LLR path)
/// and the paired protocol differences.
#[derive(Debug, Clone)]
pub struct StoredExperiment {
    /// The design, as the format received it.
    pub design: super::experiment::Design,
    /// Every arm's test.
    pub status: super::experiment::ExperimentStatus,
    /// Every arm's protocol differences from the baseline.
    pub differences: super::experiment::Differences,
}

/// `tournament`'s experiment, when it is one and a game has started.
///
/// # Errors
/// As [`stored_standings`].
pub fn stored_experiment(
    store: &Store,
    host: &dyn ScriptHost,
    tournament: &TournamentRow,
) -> Result<Option<StoredExperiment>, StandingsError> {
    match stored_format(store, host, tournament, "experiment")? {
        Some(stored) => experiment_of(store, tournament, &stored),
        None => Ok(None),
    }
}

fn experiment_of(
    store: &Store,
    tournament: &TournamentRow,
    stored: &StoredFormat,
) -> Result<Option<StoredExperiment>, StandingsError> {
    let Some(design) = super::experiment::design_of(&stored.state) else {
        return Ok(None);
    };
    let differences = super::experiment::differences(
        &design,
        &crate::store::current_attempts(&stored.games),
        &store.call_summaries(tournament.id)?,
        &stored.prices,
    );
    let status = super::experiment::status_of(&design, &stored.state)?;
    Ok(Some(StoredExperiment {
        design,
        status,
        differences,
    }))
}

/// `tournament` as a Swiss pairing program reads it ([`Format::pairing_record`]), for a TRF
/// file; none when no game has started or the format is not a Swiss system.
///
/// # Errors
/// A store failure, stored scripts that do not load, or a failing `pairing_record` hook.
pub fn stored_pairing_record(
    store: &Store,
    host: &dyn ScriptHost,
    tournament: &TournamentRow,
) -> Result<Option<Record>, StandingsError> {
    let Some(stored) = stored_format(store, host, tournament, "pairing_record")? else {
        return Ok(None);
    };
    Ok(stored.format.pairing_record(&stored.state)?)
}

/// A stored tournament's format, rebuilt, its state over the stored games, the games themselves
/// and the tournament's price table (an experiment's cost differences need both).
struct StoredFormat {
    format: Box<dyn Format>,
    state: FormatState,
    games: Vec<crate::store::GameRow>,
    prices: crate::llm::PriceTable,
}

/// The format rebuilt from the scripts of the last game started, and its state over the stored
/// games; none when no game has started or no stored script mentions `hook`.
fn stored_format(
    store: &Store,
    host: &dyn ScriptHost,
    tournament: &TournamentRow,
    hook: &str,
) -> Result<Option<StoredFormat>, StandingsError> {
    // The scripts of the last game started: generation numbers start again with every run, so
    // the schedule order says best which scripts the format was last asked through. Read alone:
    // a format without tables must not cost a tournament of 100,000 games their reading.
    let Some(newest) = store.newest_started_game(tournament.id)? else {
        return Ok(None);
    };
    let hash = newest.script_hash.as_deref().unwrap_or_default();
    let Some(files) = store.scripts(hash)? else {
        return Ok(None);
    };
    if !files.iter().any(|(_, text)| text.contains(hook)) {
        return Ok(None);
    }
    // The spend is a scan of every stored call: read only for a format that uses it.
    let reads_spend = files.iter().any(|(_, text)| text.contains("state.spend"));
    let rules = host.rebuild(
        Path::new(&tournament.script_path),
        newest.generation.unwrap_or(0),
        files.into_iter().collect(),
    )?;
    let format = rules.format()?;
    // The format's state is made from every game: its script may read any of them.
    let games = store.games(tournament.id)?;
    // The openings only matter for pairing, so they are not read (0) for the tables.
    let prices = super::budget::price_table(&rules.spec().settings);
    let state = FormatState {
        spend: reads_spend
            .then(|| super::budget::Ledger::read(store, tournament.id, &prices).ok())
            .flatten()
            .map(|ledger| super::budget::format_spend(rules.spec(), &ledger)),
        ..FormatState::new(
            rules.spec(),
            // As the format saw them: a replay stands in the place of the void game it replays.
            crate::store::current_attempts(&games)
                .into_iter()
                .map(FormatGame::from_row)
                .collect(),
            0,
            format.options().clone(),
        )
    };
    Ok(Some(StoredFormat {
        format,
        state,
        games,
        prices,
    }))
}
