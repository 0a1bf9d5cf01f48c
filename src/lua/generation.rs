//! Script generations: one consistent, validated snapshot of a tournament's Lua sources.
//!
//! Loading runs the entry script in a scratch state, turns the returned table into a
//! [`TournamentSpec`] (strictly: unknown keys are errors), loads every play mode and the format,
//! and smoke-runs the hooks. Only a generation that passes all of this is ever used, so a broken
//! save during a tournament is reported and ignored (see `reload`).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use mlua::{Lua, LuaSerdeExt, Table, Value};
use serde::de::DeserializeOwned;

use super::{
    CheckErrors, ScriptError,
    api::DEFINED_AT,
    format::FormatScript,
    hooks::Options,
    mode::ModeScript,
    sources::{CompiledModules, Resolver, SourceSet},
    state::{self, Limits},
};
use crate::llm::Price;
use crate::tournament::{
    rules::{Rules, ScriptHost, script_dir},
    schedule::{Format, FormatState},
    spec::{
        CheckedPlayers, EnginePlayerSpec, LlmPlayerSpec, MoaPlayerSpec, ModeBinding, PlayerSpec,
        RandomPlayerSpec, SpecProblem, TournamentSettings, TournamentSpec, check_players,
    },
    turn::PlayMode,
};

/// The Lua script host: loads tournament scripts into [`Generation`]s. The binary hands it to
/// the tournament runner, which knows it only as a [`ScriptHost`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LuaHost;

impl ScriptHost for LuaHost {
    fn load(&self, entry: &Path, number: u64) -> Result<Arc<dyn Rules>, CheckErrors> {
        Ok(Arc::new(Generation::load(entry, number)?))
    }

    fn rebuild(
        &self,
        entry: &Path,
        number: u64,
        sources: BTreeMap<String, String>,
    ) -> Result<Arc<dyn Rules>, CheckErrors> {
        let sources = Arc::new(SourceSet { files: sources });
        Ok(Arc::new(Generation::from_sources(entry, number, sources)?))
    }
}

/// A validated snapshot of a tournament's scripts.
#[derive(Debug, Clone)]
pub struct Generation {
    /// 1 for the first load, then +1 per accepted reload.
    pub number: u64,
    /// Content hash of [`Generation::sources`].
    pub hash: String,
    /// The exact text of every file the generation read.
    pub sources: Arc<SourceSet>,
    /// The entry script as the user named it.
    pub entry: PathBuf,
    /// What the script asks for.
    pub spec: TournamentSpec,
    /// Files on disk behind the sources (what the watcher watches).
    pub watch: Vec<PathBuf>,
    /// Play-mode module of each LLM player, by player name.
    pub modes: BTreeMap<String, String>,
    /// Effective mode options (defaults overlaid with the player's) of each LLM player.
    pub mode_options: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    /// The format module.
    pub format_module: String,
    /// Limits of every Lua state built from this generation.
    pub limits: Limits,
    /// Bytecode of its modules, compiled by the first state that loads each one.
    compiled: CompiledModules,
}

impl Generation {
    /// Loads and validates the tournament script at `entry` from disk.
    ///
    /// # Errors
    /// Every problem found, each at `file:line` where known.
    pub fn load(entry: &Path, number: u64) -> Result<Generation, CheckErrors> {
        let resolver = Resolver::from_disk(script_dir(entry));
        build(entry, number, resolver)
    }

    /// Rebuilds a generation from recorded sources (a game resumed after a restart keeps the rules
    /// it started with, even if the files changed since).
    ///
    /// # Errors
    /// As [`Generation::load`].
    pub fn from_sources(
        entry: &Path,
        number: u64,
        sources: Arc<SourceSet>,
    ) -> Result<Generation, CheckErrors> {
        let resolver = Resolver::pinned(script_dir(entry), sources);
        build(entry, number, resolver)
    }

    /// The bytecode its states share, for tests that check it is used.
    #[cfg(test)]
    pub(super) fn compiled_modules(&self) -> &CompiledModules {
        &self.compiled
    }

    /// A fresh resolver answering from this generation's sources, for a game's or a format's
    /// state: it records nothing, the generation's sources being recorded already.
    pub fn resolver(&self) -> Resolver {
        Resolver::pinned(script_dir(&self.entry), self.sources.clone())
            .unrecorded()
            .compiled(self.compiled.clone())
    }

    /// The tournament's `format_options` (before the format's defaults are merged in).
    pub fn format_options(&self) -> Options {
        self.spec
            .settings
            .format_options
            .clone()
            .unwrap_or_default()
    }
}

impl Rules for Generation {
    fn number(&self) -> u64 {
        self.number
    }

    fn hash(&self) -> &str {
        &self.hash
    }

    fn spec(&self) -> &TournamentSpec {
        &self.spec
    }

    fn sources(&self) -> &BTreeMap<String, String> {
        &self.sources.files
    }

    fn entry(&self) -> &Path {
        &self.entry
    }

    fn watched(&self) -> &[PathBuf] {
        &self.watch
    }

    fn mode_options(&self, player: &str) -> Option<&Options> {
        self.mode_options.get(player)
    }

    fn play_mode(&self, player: ModeBinding<'_>) -> Result<Box<dyn PlayMode>, ScriptError> {
        Ok(Box::new(ModeScript::for_game(self, player)?))
    }

    fn format(&self) -> Result<Box<dyn Format>, ScriptError> {
        Ok(Box::new(FormatScript::for_generation(self)?))
    }
}

fn build(entry: &Path, number: u64, resolver: Resolver) -> Result<Generation, CheckErrors> {
    let limits = Limits::default();
    let (lua, display, table) = state::run_entry(
        entry,
        &resolver,
        limits,
        "a tournament table",
        "arena.tournament",
    )?;
    let spec = parse_spec(&lua, &table, &display)?;

    let mut errors = Vec::new();
    let mut modes = BTreeMap::new();
    let mut mode_options = BTreeMap::new();
    for player in &spec.players {
        let Some(binding) = player.mode_binding() else {
            continue;
        };
        let name = binding.name;
        let at = spec.defined_at[name].clone();
        match mode_module(&resolver, binding.mode) {
            Some(module) => {
                // Loading the mode here both validates it and records its sources.
                match ModeScript::load(&lua, &module, binding) {
                    Ok(mode) => {
                        mode_options.insert(name.to_string(), mode.options().clone());
                        if let Err(e) = mode.smoke_test(binding) {
                            errors.push(in_player(e, &at, name));
                        }
                    }
                    Err(e) => errors.push(in_player(e, &at, name)),
                }
                modes.insert(name.to_string(), module);
            }
            None => errors.push(ScriptError::at(
                at,
                format!(
                    "player `{name}`: unknown play mode `{}` (no modes/{}.lua in the script's folder or the built-ins)",
                    binding.mode, binding.mode
                ),
            )),
        }
    }

    let format_module = format_module(&resolver, &spec.settings.format);
    match &format_module {
        Some(module) => {
            let options = spec.settings.format_options.clone().unwrap_or_default();
            let at = spec.defined_at[""].clone();
            let located = |e: ScriptError| match e.location {
                Some(_) => e,
                None => ScriptError::at(at.clone(), e.message),
            };
            match FormatScript::load(&lua, module, &options) {
                Ok(format) => {
                    let field = FormatState::new(&spec, Vec::new(), 0, format.options().clone());
                    match format.problems(&field) {
                        Ok(problems) => errors.extend(problems.into_iter().map(|p| {
                            ScriptError::at(
                                at.clone(),
                                format!("format `{}`: {p}", spec.settings.format),
                            )
                        })),
                        Err(e) => errors.push(located(e)),
                    }
                }
                Err(e) => errors.push(located(e)),
            }
        }
        None => errors.push(ScriptError::at(
            spec.defined_at
                .get("")
                .cloned()
                .unwrap_or_else(|| format!("{}:1", display)),
            format!(
                "unknown format `{}` (no formats/{}.lua in the script's folder or the built-ins)",
                spec.settings.format, spec.settings.format
            ),
        )),
    }
    if !errors.is_empty() {
        return Err(CheckErrors(errors));
    }
    let sources = resolver.sources();
    Ok(Generation {
        number,
        hash: sources.hash(),
        sources: Arc::new(sources),
        entry: entry.to_path_buf(),
        spec,
        watch: resolver.disk_paths(),
        modes,
        mode_options,
        format_module: format_module.expect("checked above"),
        limits,
        compiled: CompiledModules::default(),
    })
}

/// Errors inside a mode get the mode's own `file:line`; errors without one point at the player.
fn in_player(e: ScriptError, player_at: &str, player: &str) -> ScriptError {
    let e = e.within(&format!("player `{player}`"));
    match e.location {
        Some(_) => e,
        None => ScriptError::at(player_at, e.message),
    }
}

/// A spec problem as a script error at its line.
pub(super) fn at_line(p: SpecProblem) -> ScriptError {
    ScriptError::at(p.at, p.message)
}

/// `blitz` means `modes.blitz` (the user's folder first, then the built-ins); a name that exists
/// only as a module of the script's folder (`my_mode`) is used as it is.
fn mode_module(resolver: &Resolver, mode: &str) -> Option<String> {
    named_module(resolver, "modes", mode)
}

fn format_module(resolver: &Resolver, format: &str) -> Option<String> {
    named_module(resolver, "formats", format)
}

fn named_module(resolver: &Resolver, folder: &str, name: &str) -> Option<String> {
    let qualified = format!("{folder}.{name}");
    if resolver.exists(&qualified) {
        Some(qualified)
    } else if resolver.exists(name) {
        Some(name.to_string())
    } else {
        None
    }
}

/// Turns the script's table into a [`TournamentSpec`], collecting every problem.
fn parse_spec(lua: &Lua, table: &Table, entry: &str) -> Result<TournamentSpec, CheckErrors> {
    let at: String = table
        .get::<Option<String>>(DEFINED_AT)
        .ok()
        .flatten()
        .unwrap_or_else(|| format!("{entry}:1"));
    let mut errors = Vec::new();

    // Work on a shallow copy so the script's own table is left alone.
    let rest = lua.create_table().map_err(ScriptError::from)?;
    let mut players_value = Value::Nil;
    let mut prices_value = Value::Nil;
    let mut adjudication_value = Value::Nil;
    for pair in table.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(ScriptError::from)?;
        match k.as_string().map(|s| s.to_string_lossy()).as_deref() {
            Some("players") => players_value = v,
            // Read on its own, so that its errors say `prices` rather than "the tournament".
            Some("prices") => prices_value = v,
            // Likewise, so that a mistyped rule key says `adjudication`.
            Some("adjudication") => adjudication_value = v,
            Some(DEFINED_AT) => {}
            _ => rest.set(k, v).map_err(ScriptError::from)?,
        }
    }
    let mut settings: Option<TournamentSettings> =
        match from_table(lua, rest, "tournament", "the tournament table") {
            Ok(s) => Some(s),
            Err(message) => {
                errors.push(ScriptError::at(at.clone(), message));
                None
            }
        };
    match parse_prices(lua, prices_value) {
        Ok(prices) => {
            if let Some(settings) = settings.as_mut() {
                settings.prices = prices;
            }
        }
        Err(problems) => errors.extend(
            problems
                .into_iter()
                .map(|message| ScriptError::at(at.clone(), message)),
        ),
    }
    if let Some(openings) = settings.as_ref().and_then(|s| s.openings.as_ref()) {
        for problem in openings.problems() {
            errors.push(ScriptError::at(at.clone(), problem));
        }
    }
    if let Some(analysis) = settings.as_ref().and_then(|s| s.analysis.as_ref()) {
        for problem in analysis.problems() {
            errors.push(ScriptError::at(at.clone(), format!("analysis: {problem}")));
        }
    }

    let mut defined = Vec::new();
    match players_value {
        Value::Table(list) => {
            for i in 1..=list.raw_len() {
                let value: Value = list.raw_get(i).map_err(ScriptError::from)?;
                match parse_player(lua, value, i, &at) {
                    Ok(player) => defined.push(player),
                    Err(e) => errors.push(e),
                }
            }
        }
        Value::Nil => errors.push(ScriptError::at(
            at.clone(),
            "the tournament has no `players` list",
        )),
        other => errors.push(ScriptError::at(
            at.clone(),
            format!("`players` must be a list, not {}", other.type_name()),
        )),
    }
    match adjudication_value {
        Value::Nil => {}
        Value::Table(t) => match from_table(lua, t, "adjudication", "the adjudication table") {
            Ok(adjudication) => {
                if let Some(settings) = settings.as_mut() {
                    settings.adjudication = Some(adjudication);
                }
            }
            Err(message) => errors.push(ScriptError::at(at.clone(), message)),
        },
        other => errors.push(ScriptError::at(
            at.clone(),
            format!(
                "adjudication: must be a table (`adjudication = {{ engine = \"stockfish\", resign = {{ score_cp = 1000, moves = 4 }} }}`), not {}",
                other.type_name()
            ),
        )),
    }
    if let Some(adjudication) = settings.as_ref().and_then(|s| s.adjudication.as_ref()) {
        let players: Vec<PlayerSpec> = defined.iter().map(|(p, _)| p.clone()).collect();
        for problem in adjudication.problems(&players) {
            errors.push(ScriptError::at(
                at.clone(),
                format!("adjudication: {problem}"),
            ));
        }
    }
    let players = check_players(defined, 2, "a tournament", &at)
        .map_err(|problems| errors.extend(problems.into_iter().map(at_line)))
        .ok();
    match (settings, players) {
        (
            Some(settings),
            Some(CheckedPlayers {
                players,
                defined_at,
            }),
        ) if errors.is_empty() => Ok(TournamentSpec {
            settings,
            players,
            defined_at,
        }),
        _ => Err(CheckErrors(errors)),
    }
}

/// The tournament's `prices` table (empty when absent), or every problem with it: a price table
/// that does not read, or a rate that is negative or not a finite number. A malformed table is an
/// error, never dropped, since the cost columns would then silently use other prices.
fn parse_prices(lua: &Lua, value: Value) -> Result<BTreeMap<String, Price>, Vec<String>> {
    let table = match value {
        Value::Nil => return Ok(BTreeMap::new()),
        Value::Table(t) => t,
        other => {
            return Err(vec![format!(
                "prices: must be a table of prices by model name (`prices = {{ [\"model\"] = {{ input_per_mtok = 2.5, output_per_mtok = 10 }} }}`), not {}",
                other.type_name()
            )]);
        }
    };
    let prices: BTreeMap<String, Price> =
        from_table(lua, table, "prices", "the prices table").map_err(|m| vec![m])?;
    let problems: Vec<String> = prices
        .iter()
        .flat_map(|(model, price)| {
            let mut out: Vec<String> = price
                .problems()
                .into_iter()
                .map(|p| format!("prices: `{model}`: {p}"))
                .collect();
            if model.trim().is_empty() {
                out.push("prices: a model name must not be empty".to_owned());
            }
            out
        })
        .collect();
    if problems.is_empty() {
        Ok(prices)
    } else {
        Err(problems)
    }
}

/// Reads one entry of a `players` list into a player and the `file:line` of its definition
/// (checked later, with the others, by [`check_players`]).
pub(super) fn parse_player(
    lua: &Lua,
    value: Value,
    index: usize,
    tournament_at: &str,
) -> Result<(PlayerSpec, String), ScriptError> {
    let Value::Table(t) = value else {
        return Err(ScriptError::at(
            tournament_at,
            format!(
                "player {index} must be a table (arena.llm{{...}}, arena.moa{{...}}, arena.engine{{...}} or arena.random{{...}}), not {}",
                value.type_name()
            ),
        ));
    };
    let at: String = t
        .get::<Option<String>>(DEFINED_AT)
        .ok()
        .flatten()
        .unwrap_or_else(|| tournament_at.to_string());
    let name: String = t
        .get::<Option<String>>("name")
        .ok()
        .flatten()
        .unwrap_or_else(|| format!("#{index}"));
    let what = format!("player `{name}`");
    let fields = lua.create_table().map_err(ScriptError::from)?;
    let mut kind = None;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(ScriptError::from)?;
        match k.as_string().map(|s| s.to_string_lossy()).as_deref() {
            Some("kind") => kind = v.as_string().map(|s| s.to_string_lossy()),
            Some(DEFINED_AT) => {}
            Some("api_key") => {
                return Err(ScriptError::at(
                    at,
                    format!(
                        "{what}: an API key must not be written in a script; put it in an environment variable and name that variable with `api_key_env`"
                    ),
                ));
            }
            _ => fields.set(k, v).map_err(ScriptError::from)?,
        }
    }
    let spec = match kind.as_deref() {
        Some("llm") => from_table::<LlmPlayerSpec>(lua, fields, &what, "an LLM player")
            .map(PlayerSpec::Llm),
        Some("engine") => from_table::<EnginePlayerSpec>(lua, fields, &what, "an engine player")
            .map(PlayerSpec::Engine),
        Some("random") => from_table::<RandomPlayerSpec>(lua, fields, &what, "a random player")
            .map(PlayerSpec::Random),
        Some("moa") => from_table::<MoaPlayerSpec>(lua, fields, &what, "a mixture of agents")
            .map(PlayerSpec::Moa),
        Some(other) => Err(format!(
            "{what}: unknown kind `{other}` (expected \"llm\", \"moa\", \"engine\" or \"random\")"
        )),
        None => Err(format!(
            "{what}: no `kind`; define players with arena.llm{{...}}, arena.moa{{...}}, arena.engine{{...}} or arena.random{{...}}"
        )),
    }
    .map_err(|message| ScriptError::at(at.clone(), message))?;
    Ok((spec, at))
}

/// Deserializes a Lua table strictly, with serde's message (which names unknown or mistyped
/// fields) prefixed by what the table is.
pub(super) fn from_table<T: DeserializeOwned>(
    lua: &Lua,
    table: Table,
    what: &str,
    kind: &str,
) -> Result<T, String> {
    lua.from_value::<T>(Value::Table(table))
        .map_err(|e| format!("{what}: {} (in {kind})", serde_message(&e)))
}

fn serde_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::DeserializeError(m) => m.clone(),
        other => other.to_string(),
    }
}
