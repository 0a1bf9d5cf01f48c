//! Versions of one tournament: the same script run again, in the same store, after its scripts
//! changed.
//!
//! A finished tournament whose scripts changed since its last game started is not run again under
//! its old name: its verdict answers a question about scripts that are no longer on disk, and
//! printing it again would pass it off as the answer to the new ones. The run stops with a
//! [`ScriptChange`] that names the files that changed; `--new-version` starts version 2 (then 3,
//! ...) as a tournament of its own in the same store, stored as `NAME@v2`, whose games are played
//! afresh under the new scripts. The versions of one tournament are recognised by their stored
//! settings, whose `name` is the script's (`NAME`), and compared side by side by [`table`].

use std::{collections::BTreeMap, fmt};

use sha2::{Digest, Sha256};

use super::{
    rules::{Rules, ScriptHost},
    standings::{StandingsError, stored_experiment},
};
use crate::{
    store::{Store, StoreError, TournamentRow},
    table::{Cell, Table},
};

/// The stored name of version `version` of the tournament the script calls `name`: the name
/// itself for the first, `NAME@vN` after it.
pub(crate) fn version_name(name: &str, version: u32) -> String {
    if version <= 1 {
        name.to_string()
    } else {
        format!("{name}@v{version}")
    }
}

/// Which version of which tournament a stored tournament is: the name its script gives (from
/// its stored settings) and its version number (1 for the tournament stored under that name).
pub fn version_of(row: &TournamentRow) -> (String, u32) {
    let named = serde_json::from_str::<serde_json::Value>(&row.settings_json)
        .ok()
        .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_string));
    if let Some(name) = named
        && let Some(rest) = row.name.strip_prefix(&format!("{name}@v"))
        && let Ok(version) = rest.parse::<u32>()
        && version >= 2
    {
        return (name, version);
    }
    (row.name.clone(), 1)
}

/// Every stored version of the tournament the script calls `name`, oldest first.
///
/// # Errors
/// A store failure.
pub fn versions(store: &Store, name: &str) -> Result<Vec<(u32, TournamentRow)>, StoreError> {
    let mut found = Vec::new();
    for row in store.tournaments()? {
        let (series, version) = version_of(&row);
        if series == name {
            found.push((version, row));
        }
    }
    found.sort_by_key(|(v, _)| *v);
    Ok(found)
}

/// A file whose text differs between two versions of a tournament's scripts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file, as the store records it (`examples/think/prompts/think.lua`).
    pub path: String,
    /// The short SHA-256 of its text when the tournament last ran; `None` for a file it did not
    /// read.
    pub old: Option<String>,
    /// The short SHA-256 of its text now; `None` for a file the scripts no longer read.
    pub new: Option<String>,
}

/// What changed in a tournament's scripts since its last game started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptChange {
    /// The tournament as stored (`NAME` or `NAME@vN`).
    pub tournament: String,
    /// The name the script gives it.
    pub name: String,
    /// Its version.
    pub version: u32,
    /// The hash of the scripts its last game started under.
    pub old_hash: String,
    /// The hash of the scripts now.
    pub new_hash: String,
    /// The files that differ, by path.
    pub files: Vec<FileChange>,
}

impl ScriptChange {
    /// One line per changed file: `path: old → new` (`added`, `removed` for a file on one side
    /// only).
    pub(crate) fn file_lines(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| match (&f.old, &f.new) {
                (Some(old), Some(new)) => format!("{}: {old} → {new}", f.path),
                (None, Some(new)) => format!("{}: added ({new})", f.path),
                (Some(old), None) => format!("{}: no longer read (was {old})", f.path),
                (None, None) => f.path.clone(),
            })
            .collect()
    }
}

impl fmt::Display for ScriptChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "tournament `{}` is finished, and its scripts changed since its last game started (scripts {} → {}):",
            self.tournament, self.old_hash, self.new_hash
        )?;
        for line in self.file_lines() {
            writeln!(f, "  {line}")?;
        }
        write!(
            f,
            "its result answers the old scripts, so it is not shown as the answer to these. Give the tournament a new `name`, or run again with `--new-version` to play version {} in the same store (`arena leaderboard` then shows the versions side by side)",
            self.version + 1
        )
    }
}

/// The short SHA-256 of one file's text, as [`FileChange`] shows it.
fn file_hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What changed between the scripts `tournament`'s last game started under and `current`;
/// `None` when nothing did, or when no game has started (or its scripts were not stored).
///
/// # Errors
/// A store failure.
pub fn changes(
    store: &Store,
    tournament: &TournamentRow,
    current: &dyn Rules,
) -> Result<Option<ScriptChange>, StoreError> {
    let Some(newest) = store.newest_started_game(tournament.id)? else {
        return Ok(None);
    };
    let Some(old_hash) = newest.script_hash else {
        return Ok(None);
    };
    if old_hash == current.hash() {
        return Ok(None);
    }
    let Some(old) = store.scripts(&old_hash)? else {
        return Ok(None);
    };
    let old: BTreeMap<String, String> = old.into_iter().collect();
    let new = current.sources();
    let mut paths: Vec<&String> = old.keys().chain(new.keys()).collect();
    paths.sort();
    paths.dedup();
    let files = paths
        .into_iter()
        .filter(|p| old.get(*p) != new.get(*p))
        .map(|p| FileChange {
            path: p.clone(),
            old: old.get(p).map(|t| file_hash(t)),
            new: new.get(p).map(|t| file_hash(t)),
        })
        .collect();
    let (name, version) = version_of(tournament);
    Ok(Some(ScriptChange {
        tournament: tournament.name.clone(),
        name,
        version,
        old_hash,
        new_hash: current.hash().to_string(),
        files,
    }))
}

/// The experiment's arms in every stored version of the tournament `tournament` is a version of,
/// side by side (kind `experiment_versions`): the columns of the experiment table (see
/// [`super::experiment::table`]) after `version`, `tournament` (the stored name) and `scripts`
/// (the hash of the scripts its last game started under). `None` when the tournament has one
/// version, or is no experiment.
///
/// # Errors
/// A store failure, or stored scripts that no longer load.
pub fn table(
    store: &Store,
    host: &dyn ScriptHost,
    tournament: &TournamentRow,
) -> Result<Option<Table>, StandingsError> {
    let (name, _) = version_of(tournament);
    let all = versions(store, &name)?;
    if all.len() < 2 {
        return Ok(None);
    }
    let mut out: Option<Table> = None;
    for (version, row) in &all {
        let Some(experiment) = stored_experiment(store, host, row)? else {
            continue;
        };
        let arms = super::experiment::table(
            &experiment.design,
            &experiment.status,
            Some(&experiment.differences),
        );
        let scripts = store
            .newest_started_game(row.id)?
            .and_then(|g| g.script_hash)
            .unwrap_or_default();
        let t = out.get_or_insert_with(|| {
            let mut columns = vec!["version", "tournament", "scripts"];
            columns.extend(arms.columns.iter().map(String::as_str));
            let mut t = Table::new("experiment versions", &columns).of_kind("experiment_versions");
            t.set_tournament(&name);
            t
        });
        for arm in arms.rows {
            let mut cells: Vec<Cell> = vec![
                (*version).into(),
                row.name.clone().into(),
                scripts.clone().into(),
            ];
            cells.extend(arm);
            t.rows.push(cells);
        }
        for note in arms.notes {
            t.notes.push(format!("version {version}: {note}"));
        }
    }
    Ok(out)
}
