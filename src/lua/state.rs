//! Building sandboxed Lua states and calling hooks under limits.
//!
//! A state gets only the pure standard libraries (no `io`, `os`, `debug`, `package`), a `require`
//! backed by a [`Resolver`], the `arena` API table, a memory cap and an instruction budget per hook
//! call, so that a runaway prompt script fails one hook with an error instead of hanging a game.

use std::sync::atomic::{AtomicI64, Ordering};

use mlua::{Function, HookTriggers, IntoLuaMulti, Lua, LuaOptions, StdLib, Table, Value, VmState};

use super::{ScriptError, api, sources::Resolver};

/// Resource limits of one Lua state.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Memory the state may allocate, in bytes.
    pub memory_bytes: usize,
    /// Lua VM instructions one top-level call (a hook, the entry script) may execute.
    pub instructions_per_call: i64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            instructions_per_call: 200_000_000,
        }
    }
}

/// How often the instruction hook fires; the budget is charged in these steps.
const HOOK_STEP: u32 = 10_000;

/// The instruction budget left for the current top-level call.
struct Budget {
    remaining: AtomicI64,
    per_call: i64,
}

/// Registry key of the table caching loaded modules.
const LOADED_KEY: &str = "arena.loaded";

/// Creates a sandboxed state whose `require` uses `resolver`.
///
/// # Errors
/// Only when Lua itself cannot be set up (out of memory).
pub fn new_state(resolver: Resolver, limits: Limits) -> Result<Lua, ScriptError> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE;
    let lua = Lua::new_with(libs, LuaOptions::default())?;
    let globals = lua.globals();
    // The base library still brings file access and arbitrary bytecode loading.
    for name in ["dofile", "loadfile"] {
        globals.set(name, Value::Nil)?;
    }
    let load: Function = globals.get("load")?;
    let text_only_load = lua.create_function(
        move |_, (chunk, name, _mode, env): (Value, Option<String>, Value, Value)| {
            load.call::<mlua::MultiValue>((chunk, name, "t", env))
        },
    )?;
    globals.set("load", text_only_load)?;

    lua.set_app_data(Budget {
        remaining: AtomicI64::new(limits.instructions_per_call),
        per_call: limits.instructions_per_call,
    });
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(HOOK_STEP),
        |lua, _debug| {
            let budget = lua
                .app_data_ref::<Budget>()
                .expect("budget is installed with the hook");
            let left = budget
                .remaining
                .fetch_sub(i64::from(HOOK_STEP), Ordering::Relaxed);
            if left <= 0 {
                return Err(mlua::Error::runtime(format!(
                    "instruction limit of {} exceeded (an endless loop?)",
                    budget.per_call
                )));
            }
            Ok(VmState::Continue)
        },
    )?;

    lua.set_named_registry_value(LOADED_KEY, lua.create_table()?)?;
    let arena = api::register(&lua)?;
    install_require(&lua, resolver, arena)?;
    lua.set_memory_limit(limits.memory_bytes)?;
    Ok(lua)
}

/// Gives the call about to start a full instruction budget.
fn reset_budget(lua: &Lua) {
    if let Some(budget) = lua.app_data_ref::<Budget>() {
        budget.remaining.store(budget.per_call, Ordering::Relaxed);
    }
}

/// Calls a hook with a fresh instruction budget, converting errors to `file:line` form.
///
/// # Errors
/// Whatever the hook raised, or a conversion failure of its results.
pub fn call<R: mlua::FromLuaMulti>(
    lua: &Lua,
    f: &Function,
    args: impl IntoLuaMulti,
) -> Result<R, ScriptError> {
    reset_budget(lua);
    f.call(args).map_err(|e| super::error::from_lua(&e))
}

/// Runs a chunk of source text named `@display` and returns its value.
///
/// # Errors
/// Syntax or run-time errors of the chunk.
pub fn run_chunk(lua: &Lua, display: &str, source: &str) -> Result<Value, ScriptError> {
    reset_budget(lua);
    lua.load(source)
        .set_name(format!("@{display}"))
        .eval::<Value>()
        .map_err(|e| super::error::from_lua(&e))
}

/// Runs the entry script `entry` in a fresh state and returns the state, the entry's display path
/// and the table it returned. `what` and `constructor` name what it should have returned ("a
/// tournament table", `arena.tournament`) for the error message.
///
/// # Errors
/// A missing or broken script, or one that returns something else than a table.
pub fn run_entry(
    entry: &std::path::Path,
    resolver: &Resolver,
    limits: Limits,
    what: &str,
    constructor: &str,
) -> Result<(Lua, String, Table), ScriptError> {
    let lua = new_state(resolver.clone(), limits)?;
    let main = resolver.entry(entry)?;
    match run_chunk(&lua, &main.display, &main.content)? {
        Value::Table(table) => Ok((lua, main.display, table)),
        other => Err(ScriptError::at(
            format!("{}:1", main.display),
            format!(
                "the script must return {what} (`return {constructor} {{ ... }}`), not {}",
                other.type_name()
            ),
        )),
    }
}

/// `require(name)`: the `arena` API, or a module found by the resolver, loaded once per state.
fn install_require(lua: &Lua, resolver: Resolver, arena: Table) -> Result<(), ScriptError> {
    let require = lua.create_function(move |lua, name: String| {
        if name == "arena" {
            return Ok(Value::Table(arena.clone()));
        }
        let loaded: Table = lua.named_registry_value(LOADED_KEY)?;
        let cached: Value = loaded.get(name.as_str())?;
        if !cached.is_nil() {
            return Ok(cached);
        }
        let module = resolver.resolve(&name).map_err(mlua::Error::runtime)?;
        let value: Value = lua
            .load(module.content.as_str())
            .set_name(format!("@{}", module.display))
            .call(name.as_str())?;
        let value = if value.is_nil() {
            Value::Boolean(true)
        } else {
            value
        };
        loaded.set(name.as_str(), value.clone())?;
        Ok(value)
    })?;
    lua.globals().set("require", require)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn state() -> Lua {
        new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap()
    }

    #[test]
    fn dangerous_globals_are_absent() {
        let lua = state();
        let v: bool = lua
            .load("return io == nil and os == nil and dofile == nil and loadfile == nil and debug == nil")
            .eval()
            .unwrap();
        assert!(v);
    }

    #[test]
    fn load_refuses_bytecode_but_runs_text() {
        let lua = state();
        let v: i64 = lua.load("return load('return 41 + 1')()").eval().unwrap();
        assert_eq!(v, 42);
        let bytecode_refused: bool = lua
            .load("local ok = load(string.dump(function() end)); return ok == nil")
            .eval()
            .unwrap();
        assert!(bytecode_refused);
    }

    #[test]
    fn endless_loops_are_stopped() {
        let lua = new_state(
            Resolver::from_disk(Path::new(".")),
            Limits {
                instructions_per_call: 1_000_000,
                ..Limits::default()
            },
        )
        .unwrap();
        let err = run_chunk(&lua, "loop.lua", "while true do end").unwrap_err();
        assert!(err.message.contains("instruction limit"), "{err}");
        // The next call gets a fresh budget.
        assert!(run_chunk(&lua, "ok.lua", "return 1").is_ok());
    }

    #[test]
    fn memory_is_capped() {
        let lua = new_state(
            Resolver::from_disk(Path::new(".")),
            Limits {
                memory_bytes: 8 << 20,
                ..Limits::default()
            },
        )
        .unwrap();
        let err = run_chunk(
            &lua,
            "hog.lua",
            "local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 100) .. i end",
        )
        .unwrap_err();
        assert!(err.to_string().contains("memory"), "{err}");
    }

    #[test]
    fn require_loads_builtins_once_and_reports_missing_modules() {
        let lua = state();
        let same: bool = lua
            .load("return require('formats.round_robin') == require('formats.round_robin')")
            .eval()
            .unwrap();
        assert!(same);
        let err = run_chunk(&lua, "t.lua", "require('nope')").unwrap_err();
        assert!(err.to_string().contains("module `nope` not found"), "{err}");
        let arena_is_api: bool = lua.load("return require('arena') == arena").eval().unwrap();
        assert!(arena_is_api);
    }
}
