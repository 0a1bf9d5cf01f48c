//! The scripts a tournament runs under, as the tournament sees them: one validated generation of
//! them ([`Rules`]) and the host that loads generations ([`ScriptHost`]).
//!
//! The Lua host (`crates/lua`) implements both traits and is handed to [`super::run`] by the binary;
//! the tournament itself never sees Lua.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use super::{schedule::Format, turn::PlayMode};
use crate::script::{CheckErrors, ScriptError};
use crate::spec::{ModeBinding, TournamentSpec};

/// One consistent, validated snapshot of a tournament's scripts. Games pin the generation they
/// started with; the format is asked through the newest one.
pub trait Rules: Send + Sync {
    /// 1 for the first load, then +1 per accepted reload.
    fn number(&self) -> u64;

    /// Content hash of [`Rules::sources`]: stored with each game that runs under it.
    fn hash(&self) -> &str;

    /// What the script asks for.
    fn spec(&self) -> &TournamentSpec;

    /// The exact text of every file the generation read, by module name, so that a resumed game
    /// can be played under the very scripts it started with.
    fn sources(&self) -> &BTreeMap<String, String>;

    /// The entry script as the user named it.
    fn entry(&self) -> &Path;

    /// Files on disk behind the sources: what the watcher watches.
    fn watched(&self) -> &[PathBuf];

    /// The effective mode options (defaults overlaid with the player's) of an LLM player.
    fn mode_options(&self, player: &str) -> Option<&serde_json::Map<String, serde_json::Value>>;

    /// A fresh play mode for one game of `player`.
    ///
    /// # Errors
    /// When the mode no longer loads (it did when the generation was validated, so this means a
    /// resource limit).
    fn play_mode(&self, player: ModeBinding<'_>) -> Result<Box<dyn PlayMode>, ScriptError>;

    /// A fresh instance of the tournament's format.
    ///
    /// # Errors
    /// As [`Rules::play_mode`].
    fn format(&self) -> Result<Box<dyn Format>, ScriptError>;

    /// The folder of the entry script, where openings files are looked up.
    fn script_dir(&self) -> &Path {
        script_dir(self.entry())
    }
}

/// Loads generations of a tournament's scripts.
pub trait ScriptHost: Send + Sync {
    /// Loads and validates the tournament script at `entry` from disk.
    ///
    /// # Errors
    /// Every problem found, each at `file:line` where known.
    fn load(&self, entry: &Path, number: u64) -> Result<Arc<dyn Rules>, CheckErrors>;

    /// Rebuilds a generation from recorded sources (a game resumed after a restart keeps the
    /// rules it started with, even if the files changed since).
    ///
    /// # Errors
    /// As [`ScriptHost::load`].
    fn rebuild(
        &self,
        entry: &Path,
        number: u64,
        sources: BTreeMap<String, String>,
    ) -> Result<Arc<dyn Rules>, CheckErrors>;
}

/// The folder of an entry script, where its own modules and files are looked up.
pub fn script_dir(entry: &Path) -> &Path {
    match entry.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}
