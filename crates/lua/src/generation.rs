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

use mlua::{Lua, Table, Value};

use super::{
    CheckErrors, ScriptError,
    api::DEFINED_AT,
    fields::{FieldMap, FileFields, Place},
    format::FormatScript,
    hooks::{HookModule, Options},
    mode::ModeScript,
    sources::{CompiledModules, Resolver, SourceSet},
    state::{self, Limits},
    strict,
};
use crate::{
    spec::{
        CheckedPlayers, EnginePlayerSpec, HumanPlayerSpec, LlmPlayerSpec, MoaPlayerSpec,
        ModeBinding, PlayerSpec, RandomPlayerSpec, SpecProblem, TournamentSettings, TournamentSpec,
        check_players,
    },
    tournament::{
        rules::{Rules, ScriptHost, script_dir},
        schedule::{Format, FormatState},
        turn::PlayMode,
        vote,
    },
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
    /// The modules each player replaced with its `prompt` and `modules`, by player name: the
    /// name its mode requires to the module standing in for it (players that replace nothing
    /// are not listed).
    pub replaced: BTreeMap<String, BTreeMap<String, String>>,
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

    /// [`Generation::load`] for `arena check`: a script that does not load comes back with what
    /// of it could be read, so that the files and engines it names are tried in the same pass
    /// as its script errors are found.
    ///
    /// # Errors
    /// Every problem found, and the partly read tournament.
    pub fn load_for_check(entry: &Path) -> Result<Generation, Box<Unloaded>> {
        let resolver = Resolver::from_disk(script_dir(entry));
        build_parts(entry, 1, resolver).map_err(Box::new)
    }

    /// Rebuilds a generation from recorded sources (a game resumed after a restart keeps the rules
    /// it started with, even if the files changed since).
    ///
    /// # Errors
    /// As [`Generation::load`].
    pub(crate) fn from_sources(
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
    pub(crate) fn resolver(&self) -> Resolver {
        Resolver::pinned(script_dir(&self.entry), self.sources.clone())
            .unrecorded()
            .compiled(self.compiled.clone())
    }

    /// [`Generation::resolver`] for the states of the player named `player`: with the modules
    /// it replaced standing in.
    pub(crate) fn resolver_for(&self, player: &str) -> Resolver {
        match self.replaced.get(player) {
            Some(map) => self.resolver().replacing(map.clone()),
            None => self.resolver(),
        }
    }

    /// `file:line` of a field: `path` inside the tournament table, or inside the table of the
    /// player named `player` (the line of the table itself when the script builds it some way
    /// the constructors do not show).
    pub fn field_at(&self, player: Option<&str>, path: &[String]) -> String {
        field_at(&self.sources, &self.spec, player, path)
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

/// `file:line` of a field of `spec` as its `sources` write it (see [`Generation::field_at`]).
fn field_at(
    sources: &SourceSet,
    spec: &TournamentSpec,
    player: Option<&str>,
    path: &[String],
) -> String {
    let fields = scan_sources(sources);
    let tournament_at = spec.defined_at.get("").cloned().unwrap_or_default();
    let file_of = |at: &str| at.rsplit_once(':').map_or(at, |(f, _)| f).to_string();
    let tournament = Place::of_call(&tournament_at, fields.get(&file_of(&tournament_at)));
    let place = match player {
        None => tournament,
        Some(name) => {
            let at = spec.defined_at.get(name).cloned().unwrap_or_default();
            let index = spec.players.iter().position(|p| p.name() == name);
            let in_list = index.map(|i| tournament.key("players").item(i));
            match in_list {
                Some(p) if p.has_constructor() && p.at() == at => p,
                _ => Place::of_call(&at, fields.get(&file_of(&at))),
            }
        }
    };
    place.path(path).at()
}

/// A tournament script that does not load, as `arena check` reads it.
#[derive(Debug)]
pub struct Unloaded {
    /// Every problem found.
    pub errors: CheckErrors,
    /// The settings and the players that read, when the settings read: what the files and
    /// engines the script names are tried with.
    pub partial: Option<Box<PartialSpec>>,
}

/// The part of a tournament that read, in a script with problems elsewhere.
#[derive(Debug)]
pub struct PartialSpec {
    /// The settings and the players that read (without the checks across players).
    pub spec: TournamentSpec,
    sources: SourceSet,
}

impl PartialSpec {
    /// As [`Generation::field_at`].
    pub fn field_at(&self, player: Option<&str>, path: &[String]) -> String {
        field_at(&self.sources, &self.spec, player, path)
    }
}

fn build(entry: &Path, number: u64, resolver: Resolver) -> Result<Generation, CheckErrors> {
    build_parts(entry, number, resolver).map_err(|u| u.errors)
}

fn build_parts(entry: &Path, number: u64, resolver: Resolver) -> Result<Generation, Unloaded> {
    let limits = Limits::default();
    let (lua, display, table) = state::run_entry(
        entry,
        &resolver,
        limits,
        "a tournament table",
        "arena.tournament",
    )
    .map_err(|e| Unloaded {
        errors: e.into(),
        partial: None,
    })?;
    let fields = scan_sources(&resolver.sources());
    let parsed = parse_spec(&lua, &table, &display, &fields);
    let mut errors = parsed.errors;

    let mut modes = BTreeMap::new();
    let mut mode_options = BTreeMap::new();
    let mut replaced = BTreeMap::new();
    let no_modules = BTreeMap::new();
    let bindings = parsed
        .defined
        .iter()
        .filter_map(|(player, place)| {
            let choices = player.module_choices().unwrap_or((None, &no_modules));
            Some((player.mode_binding()?, place, choices))
        })
        .chain(
            parsed
                .unread_modes
                .iter()
                .map(|(name, mode, options, place)| {
                    let binding = ModeBinding {
                        name,
                        mode,
                        options,
                    };
                    (binding, place, (None, &no_modules))
                }),
        );
    for (binding, place, (prompt, chosen)) in bindings {
        let name = binding.name;
        let what = format!("player `{name}`");
        let Some(module) = mode_module(&resolver, binding.mode) else {
            let known = resolver.modules_in("modes");
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let hint = strict::did_you_mean(binding.mode, &known)
                .map(|m| format!("; did you mean \"{m}\"?"))
                .unwrap_or_else(|| format!(" (the modes: {})", known.join(", ")));
            errors.push(ScriptError::at(
                place.key("mode").at(),
                format!(
                    "{what}: unknown play mode `{}` (no modes/{}.lua in the script's folder or the built-ins){hint}",
                    binding.mode, binding.mode
                ),
            ));
            continue;
        };
        let at = place.at();
        // The options first, each at its own line: a mode smoke-run with a misspelt or mistyped
        // option would only fail as a follow-on of it.
        let hooks = match HookModule::require(&lua, &module, "play mode") {
            Ok(hooks) => hooks,
            Err(e) => {
                errors.push(in_player(e, &place.key("mode").at(), name));
                continue;
            }
        };
        let option_problems = hooks.option_problems(&lua, &vote::mode_options(binding.options));
        if !option_problems.is_empty() {
            errors.extend(option_problems.into_iter().map(|(key, message)| {
                let options = place.key("options");
                let at = if options.has_key(&key) {
                    options.key(&key)
                } else {
                    options
                };
                ScriptError::at(at.at(), format!("{what}: {message}"))
            }));
            continue;
        }
        // A player that replaces modules of its mode gets a state of its own, whose `require`
        // stands the replacements in (the others share one).
        let (player_lua, player_resolver) = if prompt.is_none() && chosen.is_empty() {
            (lua.clone(), None)
        } else {
            let map = match replacements(&resolver, &hooks, binding.mode, prompt, chosen) {
                Ok(map) => map,
                Err(problems) => {
                    errors.extend(problems.into_iter().map(|(field, message)| {
                        ScriptError::at(place.path(&field).at(), format!("{what}: {message}"))
                    }));
                    continue;
                }
            };
            let player_resolver = resolver.clone().replacing(map.clone());
            match state::new_state(player_resolver.clone(), limits) {
                Ok(l) => {
                    replaced.insert(name.to_string(), map);
                    (l, Some((player_resolver, prompt)))
                }
                Err(e) => {
                    errors.push(in_player(e, &at, name));
                    continue;
                }
            }
        };
        let lua = &player_lua;
        // Loading the mode here both validates it and records its sources.
        match ModeScript::load(lua, &module, binding) {
            Ok(mode) => {
                // A mode that holds a dialog within a ply has no single reply to vote on.
                if let Ok(n @ 2..) = vote::samples_of(binding.options)
                    && mode.max_turns().is_some()
                {
                    errors.push(ScriptError::at(
                        place.key("options").key(vote::SAMPLES_OPTION).at(),
                        format!(
                            "{what}: `{} = {n}` needs a mode with one reply per attempt; mode `{}` holds a dialog within a ply (it has `max_turns`), so its replies cannot be voted on",
                            vote::SAMPLES_OPTION, binding.mode
                        ),
                    ));
                }
                mode_options.insert(name.to_string(), mode.options().clone());
                match mode.smoke_test(binding) {
                    Err(e) => errors.push(in_player(e, &at, name)),
                    Ok(()) => {
                        if let Some((r, prompt)) = &player_resolver {
                            errors.extend(unused_replacements(r, binding.mode, *prompt).map(
                                |(field, message)| {
                                    ScriptError::at(
                                        place.path(&field).at(),
                                        format!("{what}: {message}"),
                                    )
                                },
                            ));
                        }
                    }
                }
            }
            Err(e) => errors.push(in_player(e, &at, name)),
        }
        modes.insert(name.to_string(), module);
    }

    let tournament = &parsed.place;
    let format_name = parsed
        .settings
        .as_ref()
        .map_or_else(default_format_name, |s| s.format.clone());
    let format_module = format_module(&resolver, &format_name);
    match (&format_module, &parsed.settings) {
        (Some(module), Some(settings)) => {
            let options = settings.format_options.clone().unwrap_or_default();
            let located = |e: ScriptError| match e.location {
                Some(_) => e,
                None => ScriptError::at(strict::refine(tournament, &e.message).at(), e.message),
            };
            match FormatScript::load(&lua, module, &options) {
                Ok(format) => match &parsed.checked {
                    // The format judges the field only when every player was read: a player
                    // missing from it would give follow-on problems (an anchor not found).
                    Some(checked) if parsed.unreadable == 0 => {
                        let spec = TournamentSpec {
                            settings: settings.clone(),
                            players: checked.players.clone(),
                            defined_at: checked.defined_at.clone(),
                        };
                        let field =
                            FormatState::new(&spec, Vec::new(), 0, format.options().clone());
                        match format.problems(&field) {
                            Ok(problems) => errors.extend(problems.into_iter().map(|p| {
                                let at = strict::refine(&tournament.key("format_options"), &p);
                                ScriptError::at(at.at(), format!("format `{format_name}`: {p}"))
                            })),
                            Err(e) => errors.push(located(e)),
                        }
                    }
                    _ => {}
                },
                Err(e) => {
                    let e = match e.location {
                        None if e.message.contains("has no option") => ScriptError::at(
                            strict::refine(&tournament.key("format_options"), &e.message).at(),
                            e.message,
                        ),
                        _ => e,
                    };
                    errors.push(located(e))
                }
            }
        }
        (None, _) => {
            let known = resolver.modules_in("formats");
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            let hint = strict::did_you_mean(&format_name, &known)
                .map(|m| format!("; did you mean \"{m}\"?"))
                .unwrap_or_else(|| format!(" (the formats: {})", known.join(", ")));
            errors.push(ScriptError::at(
                tournament.key("format").at(),
                format!(
                    "unknown format `{format_name}` (no formats/{format_name}.lua in the script's folder or the built-ins){hint}"
                ),
            ))
        }
        (Some(_), None) => {}
    }
    if !errors.is_empty() {
        let mut defined_at: BTreeMap<String, String> = parsed
            .defined
            .iter()
            .map(|(p, place)| (p.name().to_string(), place.at()))
            .collect();
        defined_at.insert(String::new(), tournament.at());
        // The players with problems of their own are tried too, as far as they read.
        for (p, place) in &parsed.repaired_players {
            defined_at
                .entry(p.name().to_string())
                .or_insert_with(|| place.at());
        }
        let players = parsed
            .defined
            .iter()
            .chain(&parsed.repaired_players)
            .map(|(p, _)| p.clone())
            .collect();
        let partial = parsed
            .settings
            .or(parsed.repaired_settings)
            .map(|settings| {
                Box::new(PartialSpec {
                    spec: TournamentSpec {
                        settings,
                        players,
                        defined_at,
                    },
                    sources: resolver.sources(),
                })
            });
        return Err(Unloaded {
            errors: CheckErrors(sorted(errors)),
            partial,
        });
    }
    let (Some(settings), Some(checked)) = (parsed.settings, parsed.checked) else {
        unreachable!("a spec without settings or players has errors");
    };
    let spec = TournamentSpec {
        settings,
        players: checked.players,
        defined_at: checked.defined_at,
    };
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
        replaced,
        format_module: format_module.expect("checked above"),
        limits,
        compiled: CompiledModules::default(),
    })
}

fn default_format_name() -> String {
    "round_robin".to_string()
}

/// Errors in file order (by file, then line), so that a script's problems read top to bottom.
pub(super) fn sorted(mut errors: Vec<ScriptError>) -> Vec<ScriptError> {
    let key = |e: &ScriptError| {
        let at = e.location.clone().unwrap_or_default();
        match at.rsplit_once(':') {
            Some((file, line)) => (file.to_string(), line.parse::<u32>().unwrap_or(0)),
            None => (at, 0),
        }
    };
    errors.sort_by_key(key);
    errors.dedup();
    merge_players(errors)
}

/// One message for a problem several players share: a module that fails the same way at the
/// same line for each player that uses it is reported once, at that line, naming them all
/// (`players `m`, `n`: ...`), instead of once per player.
fn merge_players(errors: Vec<ScriptError>) -> Vec<ScriptError> {
    let split = |e: &ScriptError| -> Option<(String, String)> {
        let rest = e.message.strip_prefix("player `")?;
        let (name, message) = rest.split_once("`: ")?;
        Some((name.to_string(), message.to_string()))
    };
    let mut out: Vec<(ScriptError, Vec<String>)> = Vec::new();
    for e in errors {
        if let Some((name, message)) = split(&e)
            && let Some((_, names)) = out.iter_mut().find(|(f, names)| {
                !names.is_empty()
                    && f.location == e.location
                    && split(f).is_some_and(|(_, m)| m == message)
            })
        {
            names.push(name);
            continue;
        }
        let names = split(&e).map(|(n, _)| vec![n]).unwrap_or_default();
        out.push((e, names));
    }
    out.into_iter()
        .map(|(e, names)| {
            if names.len() < 2 {
                return e;
            }
            let message = split(&e).map(|(_, m)| m).unwrap_or_default();
            let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            ScriptError {
                message: format!("players {}: {message}", list.join(", ")),
                ..e
            }
        })
        .collect()
}

/// The constructors of every file read so far, by display path.
pub(super) fn scan_sources(sources: &SourceSet) -> FieldMap {
    sources
        .files
        .iter()
        .map(|(path, text)| (path.clone(), FileFields::scan(text)))
        .collect()
}

/// Where the table a constructor call recorded (`_defined_at`) was written; `fallback` when it
/// recorded nothing.
pub(super) fn place_of<'a>(table: &Table, fields: &'a FieldMap, fallback: &str) -> Place<'a> {
    let at: Option<String> = table.get::<Option<String>>(DEFINED_AT).ok().flatten();
    match at {
        Some(at) => {
            let file = at.rsplit_once(':').map_or(at.as_str(), |(f, _)| f);
            Place::of_call(&at, fields.get(file))
        }
        None => Place::line_only(fallback),
    }
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

/// A problem with a player's `prompt` or `modules`: the field's path in the player's table, and
/// the message.
type FieldProblem = (Vec<String>, String);

/// A module a player names in `prompt` or `modules` that is neither in the script's folder nor
/// built in.
#[derive(Debug, thiserror::Error)]
#[error("`{written}`: {why}")]
struct MissingModule {
    written: String,
    why: String,
}

/// The modules a player replaces, by the name the mode requires them under: its `prompt` stands
/// in for the module the mode names as its `prompt_module`, its `modules` for theirs. Each
/// replacement must exist (the script's folder, then the built-ins).
fn replacements(
    resolver: &Resolver,
    hooks: &HookModule,
    mode: &str,
    prompt: Option<&str>,
    chosen: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, Vec<FieldProblem>> {
    let found = |written: &str| -> Result<String, MissingModule> {
        let module = super::sources::module_name(written);
        if resolver.exists(&module) {
            return Ok(module);
        }
        let why = resolver
            .resolve(&module)
            .err()
            .map_or_else(|| format!("module `{module}` not found"), |e| e.message);
        Err(MissingModule {
            written: written.to_string(),
            why,
        })
    };
    let mut map = BTreeMap::new();
    let mut problems = Vec::new();
    if let Some(prompt) = prompt {
        let field = vec!["prompt".to_string()];
        match hooks.table().get::<Option<String>>("prompt_module") {
            Ok(Some(words)) => match found(prompt) {
                Ok(module) => {
                    map.insert(words, module);
                }
                Err(missing) => problems.push((field, missing.to_string())),
            },
            _ => problems.push((
                field,
                format!(
                    "mode `{mode}` names no `prompt_module`, so `prompt` has nothing to stand in for; replace the module it requires with `modules = {{ [\"prompts.x\"] = \"{prompt}\" }}`"
                ),
            )),
        }
    }
    for (name, written) in chosen {
        let required = super::sources::module_name(name);
        let field = vec!["modules".to_string(), name.clone()];
        if map.contains_key(&required) {
            problems.push((
                field,
                format!("`{required}` is replaced by `prompt` already; give it once"),
            ));
            continue;
        }
        match found(written) {
            Ok(module) => {
                map.insert(required, module);
            }
            Err(missing) => problems.push((field, missing.to_string())),
        }
    }
    if problems.is_empty() {
        Ok(map)
    } else {
        Err(problems)
    }
}

/// The replacements of a player whose mode (loaded and smoke-run) never required the module
/// they stand in for: a misspelt name, or a mode that names a `prompt_module` it does not use.
fn unused_replacements<'a>(
    resolver: &'a Resolver,
    mode: &'a str,
    prompt: Option<&'a str>,
) -> impl Iterator<Item = FieldProblem> + 'a {
    resolver.unused_replacements().into_iter().map(move |name| {
        let stand_in = resolver.replacement(&name).unwrap_or_default().to_string();
        if prompt.is_some_and(|p| super::sources::module_name(p) == stand_in) {
            return (
                vec!["prompt".to_string()],
                format!(
                    "mode `{mode}` names `{name}` as its `prompt_module` but never requires it"
                ),
            );
        }
        let (folder, _) = name.rsplit_once('.').unwrap_or(("", &name));
        let known: Vec<String> = resolver
            .modules_in(folder)
            .into_iter()
            .map(|m| {
                if folder.is_empty() {
                    m
                } else {
                    format!("{folder}.{m}")
                }
            })
            .collect();
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        let hint = strict::did_you_mean(&name, &known)
            .map(|m| format!("; did you mean `{m}`?"))
            .unwrap_or_default();
        (
            vec!["modules".to_string(), name.clone()],
            format!("mode `{mode}` never requires `{name}`, so nothing is replaced{hint}"),
        )
    })
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

/// What [`parse_spec`] read, and every problem it found.
struct ParsedSpec<'a> {
    /// Where the tournament table was written.
    place: Place<'a>,
    /// The settings, when they read.
    settings: Option<TournamentSettings>,
    /// Every player that read, with where it was written (before the checks across players).
    defined: Vec<(PlayerSpec, Place<'a>)>,
    /// The players, when those that read pass [`check_players`].
    checked: Option<CheckedPlayers>,
    /// Players that did not read.
    unreadable: usize,
    /// The settings read once their faulty fields were taken out, when they had problems.
    repaired_settings: Option<TournamentSettings>,
    /// Players that did not read, as read once their faulty fields were taken out.
    repaired_players: Vec<(PlayerSpec, Place<'a>)>,
    /// The play mode and options of LLM players that did not read, checked all the same: name,
    /// mode, options, where the player was written.
    unread_modes: Vec<(String, String, Options, Place<'a>)>,
    errors: Vec<ScriptError>,
}

/// Reads the script's table into settings and players, collecting every problem, each at the
/// line of its field.
fn parse_spec<'a>(lua: &Lua, table: &Table, entry: &str, fields: &'a FieldMap) -> ParsedSpec<'a> {
    let place = place_of(table, fields, &format!("{entry}:1"));
    let at = place.at();
    let mut errors = Vec::new();
    let mut parsed = ParsedSpec {
        place: place.clone(),
        settings: None,
        defined: Vec::new(),
        checked: None,
        unreadable: 0,
        repaired_settings: None,
        repaired_players: Vec::new(),
        unread_modes: Vec::new(),
        errors: Vec::new(),
    };
    let lua_error = |e: mlua::Error| ScriptError::at(at.clone(), e.to_string());

    // Work on a shallow copy so the script's own table is left alone.
    let rest = match lua.create_table() {
        Ok(t) => t,
        Err(e) => {
            parsed.errors.push(lua_error(e));
            return parsed;
        }
    };
    let mut players_value = Value::Nil;
    for pair in table.pairs::<Value, Value>() {
        let Ok((k, v)) = pair else { continue };
        match k.as_string().map(|s| s.to_string_lossy()).as_deref() {
            Some("players") => players_value = v,
            Some(DEFINED_AT) => {}
            _ => {
                if let Err(e) = rest.set(k, v) {
                    errors.push(lua_error(e));
                }
            }
        }
    }
    let (read, problems) = strict::read_at_repaired(lua, &rest, &place, "");
    let mut settings: Option<TournamentSettings> = if problems.is_empty() {
        read
    } else {
        errors.extend(problems);
        parsed.repaired_settings = read;
        None
    };
    // The checks of single fields run on what read of settings with problems elsewhere, so
    // that every problem shows in one pass.
    if let Some(s) = settings.as_ref().or(parsed.repaired_settings.as_ref()) {
        for (model, price) in &s.prices {
            let at = place.path(&["prices", model.as_str()]);
            for p in price.problems() {
                errors.push(ScriptError::at(at.at(), format!("prices: `{model}`: {p}")));
            }
            if model.trim().is_empty() {
                errors.push(ScriptError::at(
                    at.at(),
                    "prices: a model name must not be empty",
                ));
            }
        }
        if let Some(openings) = &s.openings {
            let openings_place = place.key("openings");
            for problem in openings.problems() {
                let at = strict::refine(&openings_place, &problem);
                errors.push(ScriptError::at(at.at(), problem));
            }
        }
        if let Some(analysis) = &s.analysis {
            let analysis_place = place.key("analysis");
            for problem in analysis.problems() {
                let at = strict::refine(&analysis_place, &problem);
                errors.push(ScriptError::at(at.at(), format!("analysis: {problem}")));
            }
        }
    }

    let players_place = place.key("players");
    let mut defined = Vec::new();
    match players_value {
        Value::Table(list) => {
            for i in 1..=list.raw_len() {
                let value: Value = list.raw_get(i).unwrap_or(Value::Nil);
                let mode = unread_mode(lua, &value, i, &players_place, fields);
                match parse_player_repaired(lua, value, i, &players_place, fields) {
                    Ok(player) => defined.push(player),
                    Err((e, repaired)) => {
                        parsed.unreadable += 1;
                        errors.extend(e);
                        parsed.repaired_players.extend(repaired.map(|b| *b));
                        parsed.unread_modes.extend(mode);
                    }
                }
            }
        }
        Value::Nil => errors.push(ScriptError::at(
            at.clone(),
            "the tournament has no `players` list",
        )),
        other => {
            // Not a list: counting its players would only repeat this problem.
            parsed.unreadable = usize::MAX / 2;
            errors.push(ScriptError::at(
                players_place.at(),
                format!(
                    "`players` must be a list of players, not {}",
                    lua_type_words(other.type_name())
                ),
            ))
        }
    }
    if let Some(adjudication) = settings.as_ref().and_then(|s| s.adjudication.as_ref())
        && parsed.unreadable == 0
    {
        let players: Vec<PlayerSpec> = defined.iter().map(|(p, _)| p.clone()).collect();
        let adjudication_place = place.key("adjudication");
        for problem in adjudication.problems(&players) {
            errors.push(ScriptError::at(
                strict::refine(&adjudication_place, &problem).at(),
                format!("adjudication: {problem}"),
            ));
        }
    }
    let by_line: Vec<(PlayerSpec, String)> = defined
        .iter()
        .map(|(p, place): &(PlayerSpec, Place<'_>)| (p.clone(), place.at()))
        .collect();
    match check_players(by_line, 2, parsed.unreadable, "a tournament", &at) {
        Ok(checked) => parsed.checked = Some(checked),
        Err(problems) => errors.extend(problems.into_iter().map(|p| {
            // A player's own problem names its field in backticks: put it at that field.
            let player = defined.iter().find(|(_, pl)| pl.at() == p.at);
            match player {
                Some((spec, pl)) => {
                    let after_name = p
                        .message
                        .strip_prefix(&format!("player `{}`", spec.name()))
                        .unwrap_or(&p.message);
                    ScriptError::at(strict::refine(pl, after_name).at(), p.message)
                }
                None => at_line(p),
            }
        })),
    }
    if settings.is_none() {
        settings = None;
    }
    parsed.settings = settings;
    parsed.defined = defined;
    parsed.errors = errors;
    parsed
}

/// The name, mode and options of a model player's table, read leniently: those of a player
/// that does not read are still checked, so that all its problems show at once.
fn unread_mode<'a>(
    lua: &Lua,
    value: &Value,
    index: usize,
    list: &Place<'a>,
    fields: &'a FieldMap,
) -> Option<(String, String, Options, Place<'a>)> {
    let Value::Table(t) = value else { return None };
    let kind: Option<String> = t.get("kind").ok().flatten();
    if !matches!(kind.as_deref(), Some("llm" | "moa")) {
        return None;
    }
    let name: String = t
        .get::<Option<String>>("name")
        .ok()
        .flatten()
        .unwrap_or_else(|| format!("#{index}"));
    let mode = match t.get::<Value>("mode").ok()? {
        Value::Nil => "blitz".to_string(),
        Value::String(s) => s.to_str().ok()?.to_string(),
        _ => return None,
    };
    let options: Options = match t.get::<Value>("options").ok()? {
        Value::Nil => Options::new(),
        v @ Value::Table(_) => mlua::LuaSerdeExt::from_value(lua, v).ok()?,
        _ => return None,
    };
    let in_list = list.item(index - 1);
    let recorded = place_of(t, fields, &list.at());
    let place = if in_list.has_constructor() && in_list.at() == recorded.at() {
        in_list
    } else {
        recorded
    };
    Some((name, mode, options, place))
}

/// Reads one entry of a `players` list into a player and where it was written (checked later,
/// with the others, by [`check_players`]).
///
/// # Errors
/// Every problem with the player, each at its field's line.
pub(super) fn parse_player<'a>(
    lua: &Lua,
    value: Value,
    index: usize,
    list: &Place<'a>,
    fields: &'a FieldMap,
) -> Result<(PlayerSpec, Place<'a>), Vec<ScriptError>> {
    match parse_player_repaired(lua, value, index, list, fields) {
        Ok(player) => Ok(player),
        Err((errors, _)) => Err(errors),
    }
}

/// A player's problems, and what of it read once its faulty fields were taken out.
type PlayerProblems<'a> = (Vec<ScriptError>, Option<Box<(PlayerSpec, Place<'a>)>>);

/// [`parse_player`], and for a player with problems the player read once its faulty fields
/// were taken out (see [`strict::read_at_repaired`]), when that reads.
fn parse_player_repaired<'a>(
    lua: &Lua,
    value: Value,
    index: usize,
    list: &Place<'a>,
    fields: &'a FieldMap,
) -> Result<(PlayerSpec, Place<'a>), PlayerProblems<'a>> {
    let Value::Table(t) = value else {
        return Err((
            vec![ScriptError::at(
                list.item(index - 1).at(),
                format!(
                    "player {index} must be a table (arena.llm{{...}}, arena.moa{{...}}, arena.engine{{...}}, arena.random{{...}} or arena.human{{...}}), not {}",
                    value.type_name()
                ),
            )],
            None,
        ));
    };
    // The list's own constructor places the player when its call line agrees; else the line
    // the call recorded.
    let in_list = list.item(index - 1);
    let recorded = place_of(&t, fields, &list.at());
    let place = if in_list.has_constructor() && in_list.at() == recorded.at() {
        in_list
    } else {
        recorded
    };
    let name: String = t
        .get::<Option<String>>("name")
        .ok()
        .flatten()
        .unwrap_or_else(|| format!("#{index}"));
    let what = format!("player `{name}`");
    let one = |at: &Place<'_>, message: String| (vec![ScriptError::at(at.at(), message)], None);
    let player_fields = lua.create_table().map_err(|e| one(&place, e.to_string()))?;
    let mut kind = None;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(|e| one(&place, e.to_string()))?;
        match k.as_string().map(|s| s.to_string_lossy()).as_deref() {
            Some("kind") => kind = v.as_string().map(|s| s.to_string_lossy()),
            Some(DEFINED_AT) => {}
            Some("api_key") => {
                return Err(one(
                    &place.key("api_key"),
                    format!(
                        "{what}: an API key must not be written in a script; put it in an environment variable and name that variable with `api_key_env`"
                    ),
                ));
            }
            _ => player_fields
                .set(k, v)
                .map_err(|e| one(&place, e.to_string()))?,
        }
    }
    /// A player kind read, with what of it read when it has problems.
    fn kind_of<'a, T: serde::de::DeserializeOwned>(
        read: (Option<T>, Vec<ScriptError>),
        wrap: fn(T) -> PlayerSpec,
        place: &Place<'a>,
    ) -> Result<PlayerSpec, PlayerProblems<'a>> {
        match read {
            (Some(value), errors) if errors.is_empty() => Ok(wrap(value)),
            (value, errors) => Err((errors, value.map(|v| Box::new((wrap(v), place.clone()))))),
        }
    }
    let spec = match kind.as_deref() {
        Some("llm") => kind_of(
            strict::read_at_repaired::<LlmPlayerSpec>(lua, &player_fields, &place, &what),
            PlayerSpec::Llm,
            &place,
        ),
        Some("engine") => kind_of(
            strict::read_at_repaired::<EnginePlayerSpec>(lua, &player_fields, &place, &what),
            PlayerSpec::Engine,
            &place,
        ),
        Some("random") => kind_of(
            strict::read_at_repaired::<RandomPlayerSpec>(lua, &player_fields, &place, &what),
            PlayerSpec::Random,
            &place,
        ),
        Some("moa") => kind_of(
            strict::read_at_repaired::<MoaPlayerSpec>(lua, &player_fields, &place, &what),
            PlayerSpec::Moa,
            &place,
        ),
        Some("human") => kind_of(
            strict::read_at_repaired::<HumanPlayerSpec>(lua, &player_fields, &place, &what),
            PlayerSpec::Human,
            &place,
        ),
        Some(other) => {
            let known = ["llm", "moa", "engine", "random", "human"];
            let hint = strict::did_you_mean(other, &known)
                .map(|m| format!("; did you mean \"{m}\"?"))
                .unwrap_or_default();
            Err(one(
                &place.key("kind"),
                format!(
                    "{what}: unknown kind `{other}` (expected \"llm\", \"moa\", \"engine\", \"random\" or \"human\"){hint}"
                ),
            ))
        }
        None => Err(one(
            &place,
            format!(
                "{what}: no `kind`; define players with arena.llm{{...}}, arena.moa{{...}}, arena.engine{{...}}, arena.random{{...}} or arena.human{{...}}"
            ),
        )),
    }?;
    Ok((spec, place))
}

/// A Lua type name as a script author says it.
fn lua_type_words(name: &str) -> &str {
    match name {
        "string" => "text",
        "number" | "integer" => "a number",
        "boolean" => "true or false",
        "table" => "a table",
        other => other,
    }
}
