//! Evaluation scripts and task modules.
//!
//! An evaluation script returns `arena.evaluation { name, tasks = {...}, players = {...} }`. A task
//! module (`scripts/tasks/<task>.lua`, or one of the script's folder first) returns a table with
//! `prompt(item, ctx) -> messages`, `parse(reply, item, ctx) -> answer | nil, err`, optionally
//! `feedback(err, item, ctx) -> text` (the message after a refused puzzle answer) and `defaults`,
//! the options it understands. Rust owns the items, the calls and the scores; the hooks only turn
//! items into words and words into answers.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use mlua::{Function, Lua, LuaSerdeExt, Table, Value, serde::ser::Options as SerOptions};

use super::{
    CheckErrors, LuaHost, ScriptError,
    api::DEFINED_AT,
    error::script_error,
    fields::FieldMap,
    generation::{at_line, parse_player, place_of, scan_sources, sorted},
    hooks::HookModule,
    messages,
    sources::{Resolver, SourceSet},
    state::{self, Limits},
    strict,
};
use crate::{
    eval::{
        spec::{EvalSettings, EvalSpec, TaskSpec},
        task::{EvalHost, Evaluation, Parsed, Task},
    },
    llm::ChatMessage,
    spec::{CheckedPlayers, check_players},
    tournament::rules::script_dir,
};

impl EvalHost for LuaHost {
    fn load_evaluation(&self, entry: &Path) -> Result<Box<dyn Evaluation>, CheckErrors> {
        Ok(Box::new(EvalScripts::load(entry)?))
    }

    fn task_from_disk(
        &self,
        dir: &Path,
        module: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Box<dyn Task>, ScriptError> {
        Ok(Box::new(TaskScript::from_disk(dir, module, options)?))
    }
}

impl Evaluation for EvalScripts {
    fn spec(&self) -> &EvalSpec {
        &self.spec
    }

    fn task(&self, task: &TaskSpec) -> Result<Box<dyn Task>, ScriptError> {
        Ok(Box::new(self.task_script(task)?))
    }
}

/// A validated evaluation script with the exact sources of every file it read.
#[derive(Debug, Clone)]
pub struct EvalScripts {
    /// The entry script as the user named it.
    pub entry: PathBuf,
    /// The exact text of every file read.
    pub sources: Arc<SourceSet>,
    /// What the script asks for.
    pub spec: EvalSpec,
    /// Effective options of each task, by label.
    pub task_options: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    limits: Limits,
}

impl EvalScripts {
    /// Loads and validates an evaluation script: settings, tasks and players, then every task
    /// module with its options.
    ///
    /// # Errors
    /// Every problem found, each at `file:line` where known.
    pub fn load(entry: &Path) -> Result<EvalScripts, CheckErrors> {
        Self::load_for_check(entry).map_err(|u| u.errors)
    }

    /// [`EvalScripts::load`] for `arena check`: a script that does not load comes back with
    /// the tasks that read, so that their data sets are opened in the same pass as the script's
    /// problems are found.
    ///
    /// # Errors
    /// Every problem found, and the tasks that read.
    pub fn load_for_check(entry: &Path) -> Result<EvalScripts, Box<UnloadedEval>> {
        let resolver = Resolver::from_disk(script_dir(entry));
        let limits = Limits::default();
        let (lua, display, table) = state::run_entry(
            entry,
            &resolver,
            limits,
            "an evaluation table",
            "arena.evaluation",
        )
        .map_err(|e| {
            Box::new(UnloadedEval {
                errors: e.into(),
                tasks: Vec::new(),
                seed: 0,
                at: String::new(),
            })
        })?;
        let fields = scan_sources(&resolver.sources());
        let spec = parse_spec(&lua, &table, &display, &fields).map_err(Box::new)?;
        let at = spec.defined_at[""].clone();
        let mut errors = Vec::new();
        let mut task_options = BTreeMap::new();
        for task in &spec.tasks {
            let label = task.label();
            if task_options.contains_key(&label) {
                errors.push(ScriptError::at(
                    at.clone(),
                    format!("two tasks are labelled `{label}`; give one a `name`"),
                ));
                continue;
            }
            match TaskScript::load(&lua, &task.module(), &task.options) {
                Ok(script) => {
                    task_options.insert(label, script.options.clone());
                }
                Err(e) => errors.push(match e.location {
                    Some(_) => e,
                    None => ScriptError::at(at.clone(), format!("task `{label}`: {}", e.message)),
                }),
            }
        }
        if !errors.is_empty() {
            return Err(Box::new(UnloadedEval {
                errors: CheckErrors(errors),
                tasks: spec.tasks,
                seed: spec.settings.seed,
                at,
            }));
        }
        Ok(EvalScripts {
            entry: entry.to_path_buf(),
            sources: Arc::new(resolver.sources()),
            spec,
            task_options,
            limits,
        })
    }

    /// The task module of `task` in a fresh state built from the recorded sources.
    ///
    /// # Errors
    /// When the module no longer loads (a resource limit).
    pub(crate) fn task_script(&self, task: &TaskSpec) -> Result<TaskScript, ScriptError> {
        let resolver = Resolver::pinned(script_dir(&self.entry), self.sources.clone());
        let lua = state::new_state(resolver, self.limits)?;
        TaskScript::load(&lua, &task.module(), &task.options)
    }
}

/// An evaluation script that does not load, as `arena check` reads it.
#[derive(Debug)]
pub struct UnloadedEval {
    /// Every problem found.
    pub errors: CheckErrors,
    /// The tasks that read, whose data sets are opened all the same.
    pub tasks: Vec<TaskSpec>,
    /// The evaluation's seed (as read, or 0).
    pub seed: u64,
    /// `file:line` of the evaluation table (empty when the script did not run).
    pub at: String,
}

/// A loaded task module bound to its options.
pub struct TaskScript {
    lua: Lua,
    module: String,
    prompt: Function,
    parse: Function,
    feedback: Option<Function>,
    options: serde_json::Map<String, serde_json::Value>,
}

impl std::fmt::Debug for TaskScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskScript")
            .field("module", &self.module)
            .field("options", &self.options)
            .finish()
    }
}

impl TaskScript {
    /// Loads `module` from disk (the script's folder `dir` first, then the built-ins) into a fresh
    /// state: for re-scoring stored replies with the current task scripts.
    ///
    /// # Errors
    /// A missing module or hook, or an unknown option.
    pub(crate) fn from_disk(
        dir: &Path,
        module: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<TaskScript, ScriptError> {
        let lua = state::new_state(Resolver::from_disk(dir), Limits::default())?;
        TaskScript::load(&lua, module, options)
    }

    /// Requires `module` in `lua` and overlays its `defaults` with `options`.
    ///
    /// # Errors
    /// A missing hook, an option the module does not declare, or an error while loading it.
    pub fn load(
        lua: &Lua,
        module: &str,
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<TaskScript, ScriptError> {
        let hooks = HookModule::require(lua, module, "task module")?;
        let prompt = hooks.hook("prompt")?;
        let parse = hooks.hook("parse")?;
        let feedback = hooks.optional_hook("feedback")?;
        let merged = hooks.options(lua, options)?;
        Ok(TaskScript {
            lua: lua.clone(),
            module: module.to_owned(),
            prompt,
            parse,
            feedback,
            options: merged,
        })
    }

    fn to_lua(&self, v: &serde_json::Value) -> Result<Value, ScriptError> {
        let options = SerOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false);
        self.lua.to_value_with(v, options).map_err(script_error)
    }

    fn ctx(&self, ctx: &serde_json::Value) -> Result<Value, ScriptError> {
        let mut ctx = ctx.clone();
        if let serde_json::Value::Object(map) = &mut ctx {
            map.insert(
                "options".to_owned(),
                serde_json::Value::Object(self.options.clone()),
            );
        }
        self.to_lua(&ctx)
    }
}

impl Task for TaskScript {
    /// The effective options.
    fn options(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.options
    }

    /// Calls `prompt(item, ctx)`; `ctx.options` is set to the effective options.
    ///
    /// # Errors
    /// A hook error or a result that is not a non-empty list of `{role, content}` messages.
    fn prompt(
        &self,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<Vec<ChatMessage>, ScriptError> {
        let value: Value = state::call(
            &self.lua,
            &format!("`{}.prompt`", self.module),
            &self.prompt,
            (self.to_lua(item)?, self.ctx(ctx)?),
        )?;
        let fail = |m: String| ScriptError::bare(format!("`{}.prompt` returned {m}", self.module));
        let messages = messages::from_lua(&self.lua, value).map_err(fail)?;
        if messages.is_empty() {
            return Err(fail("no messages".to_owned()));
        }
        Ok(messages)
    }

    /// Calls `parse(reply, item, ctx)`.
    ///
    /// # Errors
    /// A hook error, or an answer that cannot be turned into JSON.
    fn parse(
        &self,
        reply: &str,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<Parsed, ScriptError> {
        let (answer, err): (Value, Value) = state::call(
            &self.lua,
            &format!("`{}.parse`", self.module),
            &self.parse,
            (reply, self.to_lua(item)?, self.ctx(ctx)?),
        )?;
        let json = |v: Value| -> Result<serde_json::Value, ScriptError> {
            self.lua.from_value(v).map_err(|e| {
                ScriptError::bare(format!(
                    "`{}.parse` returned a value that is not data: {e}",
                    self.module
                ))
            })
        };
        Ok(match answer {
            Value::Nil | Value::Boolean(false) => Parsed::Failed(match err {
                Value::Nil => {
                    serde_json::json!({"kind": "no_answer", "message": "no answer found"})
                }
                other => json(other)?,
            }),
            other => Parsed::Answer(json(other)?),
        })
    }

    /// Calls `feedback(err, item, ctx)` when the module has it, else uses the error's `message`.
    ///
    /// # Errors
    /// A hook error or a result that is not a string.
    fn feedback(
        &self,
        err: &serde_json::Value,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<String, ScriptError> {
        match &self.feedback {
            Some(f) => state::call(
                &self.lua,
                &format!("`{}.feedback`", self.module),
                f,
                (self.to_lua(err)?, self.to_lua(item)?, self.ctx(ctx)?),
            ),
            None => Ok(err
                .get("message")
                .and_then(|m| m.as_str())
                .or_else(|| err.as_str())
                .unwrap_or("That answer could not be used; try again.")
                .to_owned()),
        }
    }
}

/// Turns the script's table into an [`EvalSpec`], collecting every problem.
fn parse_spec(
    lua: &Lua,
    table: &Table,
    entry: &str,
    fields: &FieldMap,
) -> Result<EvalSpec, UnloadedEval> {
    let place = place_of(table, fields, &format!("{entry}:1"));
    let at = place.at();
    let unloaded = |e: mlua::Error| UnloadedEval {
        errors: script_error(e).into(),
        tasks: Vec::new(),
        seed: 0,
        at: at.clone(),
    };
    let mut errors = Vec::new();
    let rest = lua.create_table().map_err(unloaded)?;
    let mut players_value = Value::Nil;
    let mut tasks_value = Value::Nil;
    for pair in table.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(unloaded)?;
        match k.as_string().map(|s| s.to_string_lossy()).as_deref() {
            Some("players") => players_value = v,
            Some("tasks") => tasks_value = v,
            Some(DEFINED_AT) => {}
            _ => rest.set(k, v).map_err(unloaded)?,
        }
    }
    let (read, problems) = strict::read_at_repaired::<EvalSettings>(lua, &rest, &place, "");
    let seed = read.as_ref().map_or(0, |s| s.seed);
    let settings = if problems.is_empty() {
        read
    } else {
        errors.extend(problems);
        None
    };
    let tasks_place = place.key("tasks");
    let mut tasks = Vec::new();
    match tasks_value {
        Value::Table(list) if list.raw_len() > 0 => {
            for i in 1..=list.raw_len() {
                let value: Value = list.raw_get(i).map_err(unloaded)?;
                let task_place = tasks_place.item(i - 1);
                let what = format!("task {i}");
                let parsed = match value {
                    Value::Table(t) => {
                        strict::read_at_repaired::<TaskSpec>(lua, &t, &task_place, &what)
                    }
                    other => (
                        None,
                        vec![ScriptError::at(
                            task_place.at(),
                            format!("task {i} must be a table, not {}", other.type_name()),
                        )],
                    ),
                };
                match parsed {
                    (Some(t), _) if t.data.is_none() && t.build.is_none() => {
                        errors.push(ScriptError::at(
                            task_place.at(),
                            format!("task {i} (`{}`) needs `data` or `build`", t.label()),
                        ))
                    }
                    // A task with problems of its own is kept as far as it read (its data set
                    // is opened by `arena check`); the errors keep the evaluation from loading.
                    (Some(t), problems) => {
                        errors.extend(problems);
                        tasks.push(t);
                    }
                    (None, problems) => errors.extend(problems),
                }
            }
        }
        _ => errors.push(ScriptError::at(
            at.clone(),
            "the evaluation needs a non-empty `tasks` list",
        )),
    }
    let mut defined = Vec::new();
    let mut unreadable = 0;
    match players_value {
        Value::Table(list) if list.raw_len() > 0 => {
            for i in 1..=list.raw_len() {
                let value: Value = list.raw_get(i).map_err(unloaded)?;
                match parse_player(lua, value, i, &place.key("players"), fields) {
                    // Evaluation items are answered one at a time, with no game to lose.
                    Ok((player, player_at)) if player.time_control().is_some() => {
                        errors.push(ScriptError::at(
                            player_at.key("time_control").at(),
                            format!(
                                "player `{}`: `time_control` has no meaning in an evaluation (clocks are for tournament games)",
                                player.name()
                            ),
                        ));
                    }
                    // A person plays games through `arena serve`; items have no page to answer on.
                    Ok((player, player_at)) if player.kind() == "human" => {
                        errors.push(ScriptError::at(
                            player_at.at(),
                            format!(
                                "player `{}`: a person (arena.human) plays tournament games through `arena serve`, not evaluation items",
                                player.name()
                            ),
                        ));
                    }
                    Ok((player, player_at)) => defined.push((player, player_at.at())),
                    Err(e) => {
                        unreadable += 1;
                        errors.extend(e);
                    }
                }
            }
        }
        _ => errors.push(ScriptError::at(
            at.clone(),
            "the evaluation needs a non-empty `players` list",
        )),
    }
    let players = check_players(defined, 0, unreadable, "an evaluation", &at)
        .map_err(|problems| errors.extend(problems.into_iter().map(at_line)))
        .ok();
    match (settings, players) {
        (
            Some(settings),
            Some(CheckedPlayers {
                players,
                defined_at,
            }),
        ) if errors.is_empty() => Ok(EvalSpec {
            settings,
            tasks,
            players,
            defined_at,
        }),
        _ => Err(UnloadedEval {
            errors: CheckErrors(sorted(errors)),
            tasks,
            seed,
            at,
        }),
    }
}
