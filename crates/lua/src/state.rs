//! Building sandboxed Lua states and calling hooks under limits.
//!
//! A state gets only the pure standard libraries (no `io`, `os`, `debug`, `package`), a `require`
//! backed by a [`Resolver`] (the script's folder and the built-ins, nothing else), a `load` that
//! takes text only and gives chunks the sandbox's globals, the `arena` API table, and three limits
//! per top-level call (a hook, the entry script, a module's first `require`): a memory cap, an
//! instruction budget and a wall-clock deadline. A call past one of them fails with an error at
//! the `file:line` that was running and names the call, so a runaway prompt script fails one
//! hook instead of hanging a game.
//!
//! How the limits reach code that does not run Lua instructions (mlua's hooks fire only between
//! VM instructions, and a C library function can run for ever without one):
//! - the instruction hook (every [`HOOK_STEP`] instructions) charges the budget and checks the
//!   deadline;
//! - Lua's pattern matcher, the one C routine whose time is not bounded by the size of its input,
//!   is replaced by a port that charges its steps the same way ([`super::patterns`]);
//! - `table.insert`, `table.remove`, `table.move` and `table.sort` loop in C over ranges their
//!   arguments (or `__len`) give, so their length is charged before they run;
//! - `setmetatable` refuses `__gc`: Lua runs finalizers with hooks off, outside every limit.
//!
//! Everything else in the libraries does work linear in data that the memory cap bounds. The
//! first limit a call runs into is remembered, so a script cannot `pcall` its way past it.
//! Out-of-memory errors are raised by the allocator, where Lua keeps no position: they are
//! reported at the line the instruction hook saw last (at most [`HOOK_STEP`] instructions
//! earlier), or at the called function's definition when it ran fewer instructions than that.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicI64, Ordering},
    },
    time::{Duration, Instant},
};

use mlua::{
    Function, HookTriggers, IntoLuaMulti, Lua, LuaOptions, MultiValue, StdLib, Table, Value,
    VmState, ffi,
    state::{GcGenParams, GcMode},
};

use super::{
    ScriptError, api,
    error::script_error,
    patterns,
    sources::{ResolvedModule, Resolver, is_file_of},
};

/// Resource limits of one Lua state.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Memory the state may allocate, in bytes.
    pub memory_bytes: usize,
    /// Lua VM instructions (and pattern-matching steps) one top-level call (a hook, the entry
    /// script) may execute.
    pub instructions_per_call: i64,
    /// Wall-clock time one top-level call may take.
    pub time_per_call: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            instructions_per_call: 200_000_000,
            time_per_call: Duration::from_secs(10),
        }
    }
}

/// How often the instruction hook fires; the budget is charged in these steps.
const HOOK_STEP: u32 = 10_000;

/// Which limit a call ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exceeded {
    Instructions,
    Time,
    Memory,
}

/// The limits of the current top-level call and what it has spent.
struct Budget {
    limits: Limits,
    remaining: AtomicI64,
    /// Armed only during a top-level call: Lua run from Rust between calls (a metamethod while a
    /// returned table is read) has no deadline.
    deadline: Mutex<Option<Instant>>,
    /// `file:line` the instruction hook saw last: where an out-of-memory error is reported.
    last_seen: Mutex<Option<String>>,
    /// The first limit the call ran into, and where.
    tripped: Mutex<Option<(Exceeded, Option<String>)>>,
}

impl Budget {
    /// Spends `steps`; the limit that is (or already was) exceeded, if any.
    fn spend(&self, steps: i64) -> Option<Exceeded> {
        if let Some((kind, _)) = *self.tripped.lock().expect("budget lock poisoned") {
            return Some(kind);
        }
        if self.remaining.fetch_sub(steps, Ordering::Relaxed) - steps < 0 {
            Some(Exceeded::Instructions)
        } else if self
            .deadline
            .lock()
            .expect("budget lock poisoned")
            .is_some_and(|deadline| Instant::now() > deadline)
        {
            Some(Exceeded::Time)
        } else {
            None
        }
    }

    /// Remembers the first limit exceeded and returns the error raised inside Lua.
    fn trip(&self, kind: Exceeded, location: Option<String>) -> mlua::Error {
        let mut tripped = self.tripped.lock().expect("budget lock poisoned");
        let (kind, location) = tripped.get_or_insert((kind, location)).clone();
        let message = self.message(kind);
        mlua::Error::runtime(match location {
            Some(at) => format!("{at}: {message}"),
            None => message,
        })
    }

    fn message(&self, kind: Exceeded) -> String {
        let limits = &self.limits;
        match kind {
            Exceeded::Instructions => format!(
                "instruction limit of {} exceeded (an endless loop, or a pattern that backtracks?)",
                limits.instructions_per_call
            ),
            Exceeded::Time => format!(
                "time limit of {} s exceeded",
                limits.time_per_call.as_secs_f64()
            ),
            Exceeded::Memory => format!(
                "out of memory (the limit is {} MiB)",
                limits.memory_bytes >> 20
            ),
        }
    }
}

/// Registry key of the table caching loaded modules.
const LOADED_KEY: &str = "arena.loaded";
/// Registry key of the table of modules being loaded (to refuse a loop of `require`).
const LOADING_KEY: &str = "arena.loading";

/// Creates a sandboxed state whose `require` uses `resolver`.
///
/// # Errors
/// Only when Lua itself cannot be set up (out of memory).
pub(crate) fn new_state(resolver: Resolver, limits: Limits) -> Result<Lua, ScriptError> {
    let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE;
    let lua = Lua::new_with(libs, LuaOptions::default()).map_err(script_error)?;
    // Nearly all a hook allocates is garbage by its return (the `ctx` tables, the prompt's
    // pieces); the generational collector frees it in cheap minor collections instead of
    // letting each state grow to twice its live size between incremental cycles, which with two
    // states per running game was most of arena's memory per game (heaptrack).
    lua.gc_set_mode(GcMode::Generational(GcGenParams::default()));
    let globals = lua.globals();
    // The base library still brings file access and arbitrary bytecode loading.
    for name in ["dofile", "loadfile"] {
        globals.set(name, Value::Nil).map_err(script_error)?;
    }
    install_load(&lua)?;
    install_guards(&lua)?;
    patterns::install(&lua).map_err(script_error)?;

    lua.set_app_data(Budget {
        limits,
        remaining: AtomicI64::new(limits.instructions_per_call),
        deadline: Mutex::new(None),
        last_seen: Mutex::new(None),
        tripped: Mutex::new(None),
    });
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(HOOK_STEP),
        |lua, debug| {
            let budget = lua
                .app_data_ref::<Budget>()
                .expect("budget is installed with the hook");
            let here = match debug.source().short_src {
                Some(src) if src != GLUE_CHUNK[1..] => {
                    Some(format!("{src}:{}", debug.current_line().unwrap_or(0)))
                }
                _ => caller_location(lua),
            };
            let exceeded = budget.spend(i64::from(HOOK_STEP));
            *budget.last_seen.lock().expect("budget lock poisoned") = here.clone();
            match exceeded {
                Some(kind) => Err(budget.trip(kind, here)),
                None => Ok(VmState::Continue),
            }
        },
    )
    .map_err(script_error)?;

    lua.set_named_registry_value(LOADED_KEY, lua.create_table().map_err(script_error)?)
        .map_err(script_error)?;
    lua.set_named_registry_value(LOADING_KEY, lua.create_table().map_err(script_error)?)
        .map_err(script_error)?;
    let arena = api::register(&lua).map_err(script_error)?;
    install_require(&lua, resolver, arena)?;
    lua.set_memory_limit(limits.memory_bytes)
        .map_err(script_error)?;
    Ok(lua)
}

/// Runs `f`, Rust building the values a hook is given, with `lua`'s memory limit lifted, and
/// restores the limit afterwards (also when `f` panics).
///
/// With a limit set, mlua wraps every push and table store in a protected call so that an
/// allocation over the limit raises a catchable error; for values Rust builds from data it
/// owns (a hook's `ctx`) that guard costs more than the work. Their memory still counts: a
/// state over its limit fails at the hook's next allocation, with the usual error.
///
/// # Errors
/// Only if the state has no memory control (never for [`new_state`]'s states).
pub(super) fn unmetered<R>(lua: &Lua, f: impl FnOnce() -> R) -> Result<R, ScriptError> {
    struct Restore<'a>(&'a Lua, usize);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            // Setting a limit only fails on a state without memory control, which had none to
            // lift either.
            let _ = self.0.set_memory_limit(self.1);
        }
    }
    let limit = lua.set_memory_limit(0).map_err(script_error)?;
    let _restore = Restore(lua, limit);
    Ok(f())
}

/// `load` for text only. Lua gives a chunk the environment passed as the fourth argument, and
/// the globals when there is none: the argument is passed on only when the caller gave it (an
/// explicit `nil` stays `nil`, as in Lua), so `load("return math.pi")()` sees the sandbox.
fn install_load(lua: &Lua) -> Result<(), ScriptError> {
    let load: Function = lua.globals().get("load").map_err(script_error)?;
    let text_only_load = lua
        .create_function(move |lua, args: MultiValue| {
            let mut args: Vec<Value> = args.into_iter().collect();
            let given = args.len();
            args.resize(given.max(3), Value::Nil);
            // Mode "t": chunks in text form only, never bytecode.
            args[2] = Value::String(lua.create_string("t")?);
            load.call::<MultiValue>(MultiValue::from_vec(args))
        })
        .map_err(script_error)?;
    lua.globals()
        .set("load", text_only_load)
        .map_err(script_error)?;
    Ok(())
}

/// Charges `steps` of work done in a library function to the current call; past a limit, the
/// error names the Lua line that called the function.
///
/// # Errors
/// The limit that was exceeded.
pub(super) fn charge(lua: &Lua, steps: i64) -> mlua::Result<()> {
    let Some(budget) = lua.app_data_ref::<Budget>() else {
        return Ok(());
    };
    match budget.spend(steps) {
        None => Ok(()),
        Some(kind) => Err(budget.trip(kind, caller_location(lua))),
    }
}

/// `file:line` of the Lua function that called the running library function.
pub(super) fn caller_location(lua: &Lua) -> Option<String> {
    let glue = &GLUE_CHUNK[1..];
    (1..8).find_map(|level| {
        lua.inspect_stack(level, |debug| {
            let line = debug.current_line()?;
            let src = debug.source().short_src?.into_owned();
            (src != glue).then(|| format!("{src}:{line}"))
        })
        .flatten()
    })
}

/// Whether the Lua function that called the running library function belongs to the file of
/// `module`.
fn called_from(lua: &Lua, module: &str) -> bool {
    let glue = &GLUE_CHUNK[1..];
    (1..8)
        .find_map(|level| {
            lua.inspect_stack(level, |debug| {
                let source = debug.source();
                let short = source.short_src?;
                if short == glue {
                    return None;
                }
                Some(source.source.is_some_and(|s| is_file_of(&s, module)))
            })
            .flatten()
        })
        .unwrap_or(false)
}

/// Chunk name of the Lua glue that wraps library functions; its frames are skipped when an
/// error names the script's line.
pub(super) const GLUE_CHUNK: &str = "=[arena sandbox]";

/// Wraps the table functions that loop in C over a range their arguments give, charging the
/// range's length first, and `setmetatable`, refusing finalizers.
fn install_guards(lua: &Lua) -> Result<(), ScriptError> {
    fn len(v: Option<&Value>) -> mlua::Result<i64> {
        match v {
            Some(Value::Table(t)) => t.len(),
            _ => Ok(0),
        }
    }
    fn int(v: Option<&Value>) -> Option<i64> {
        match v {
            Some(Value::Integer(i)) => Some(*i),
            Some(Value::Number(n)) if n.fract() == 0.0 => Some(*n as i64),
            _ => None,
        }
    }
    // The number of elements each function will visit, as it will compute it.
    let cost = lua
        .create_function(|lua, (name, args): (String, MultiValue)| {
            let a: Vec<Value> = args.into_iter().collect();
            let steps = match name.as_str() {
                "insert" => match (a.len(), int(a.get(1))) {
                    (3, Some(pos)) => len(a.first())?.saturating_add(1).saturating_sub(pos),
                    _ => 0,
                },
                "remove" => match int(a.get(1)) {
                    Some(pos) => len(a.first())?.saturating_sub(pos),
                    None => 0,
                },
                "move" => match (int(a.get(1)), int(a.get(2))) {
                    (Some(f), Some(e)) => e.saturating_sub(f).saturating_add(1),
                    _ => 0,
                },
                _ => {
                    let n = len(a.first())?.max(1);
                    n.saturating_mul(i64::from(n.ilog2() + 1))
                }
            };
            Ok(match charge(lua, steps.max(0)) {
                Ok(()) => (true, None),
                Err(e) => (false, Some(super::error::from_lua(&e).to_string())),
            })
        })
        .map_err(script_error)?;
    let table: Table = lua.globals().get("table").map_err(script_error)?;
    let globals = lua.globals();
    lua.load(
        r##"
        local cost, error, type, rawget, setmeta, insert, remove, move, sort, select = ...
        local function check(ok, message)
          if not ok then error(message, 0) end
        end
        -- Appending (`insert(t, v)`) and popping (`remove(t)`) visit no range: nothing to charge,
        -- so the common calls of prompts skip the Rust callback (the VM's own instruction and
        -- time limits still apply to the loop that calls them).
        table.insert = function(...)
          if select("#", ...) == 3 then check(cost("insert", ...)) end
          insert(...)
        end
        table.remove = function(...)
          if select("#", ...) > 1 then check(cost("remove", ...)) end
          return (remove(...))
        end
        table.move = function(...) check(cost("move", ...)) return (move(...)) end
        table.sort = function(...) check(cost("sort", ...)) sort(...) end
        setmetatable = function(t, mt)
          if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
            error("setmetatable: `__gc` is not allowed in scripts (finalizers run outside the sandbox's limits)", 2)
          end
          return (setmeta(t, mt))
        end
        "##,
    )
    .set_name(GLUE_CHUNK)
    .call::<()>((
        cost,
        globals.get::<Function>("error").map_err(script_error)?,
        globals.get::<Function>("type").map_err(script_error)?,
        globals.get::<Function>("rawget").map_err(script_error)?,
        globals.get::<Function>("setmetatable").map_err(script_error)?,
        table.get::<Function>("insert").map_err(script_error)?,
        table.get::<Function>("remove").map_err(script_error)?,
        table.get::<Function>("move").map_err(script_error)?,
        table.get::<Function>("sort").map_err(script_error)?,
        globals.get::<Function>("select").map_err(script_error)?,
    )).map_err(script_error)?;
    Ok(())
}

/// Gives the call about to start a full instruction budget and a new deadline.
fn start_call(lua: &Lua) {
    if let Some(budget) = lua.app_data_ref::<Budget>() {
        budget
            .remaining
            .store(budget.limits.instructions_per_call, Ordering::Relaxed);
        *budget.deadline.lock().expect("budget lock poisoned") =
            Some(Instant::now() + budget.limits.time_per_call);
        *budget.last_seen.lock().expect("budget lock poisoned") = None;
        *budget.tripped.lock().expect("budget lock poisoned") = None;
    }
}

/// Turns the outcome of a top-level call into a [`ScriptError`]: a limit the call ran into wins
/// over whatever error it raised afterwards, and names `what` (the hook) and where it was.
fn finish_call<R>(
    lua: &Lua,
    what: &str,
    defined_at: impl FnOnce() -> Option<String>,
    result: mlua::Result<R>,
) -> Result<R, ScriptError> {
    let Some(budget) = lua.app_data_ref::<Budget>() else {
        return result.map_err(|e| super::error::from_lua(&e));
    };
    *budget.deadline.lock().expect("budget lock poisoned") = None;
    let tripped = budget.tripped.lock().expect("budget lock poisoned").take();
    let tripped = match (tripped, &result) {
        (Some(t), _) => Some(t),
        (None, Err(e)) if is_memory_error(e) => {
            let at = budget
                .last_seen
                .lock()
                .expect("budget lock poisoned")
                .take();
            Some((Exceeded::Memory, at.or_else(defined_at)))
        }
        _ => None,
    };
    match tripped {
        Some((kind, location)) => {
            let message = format!("{} in {what}", budget.message(kind));
            Err(match location {
                Some(at) => ScriptError::at(at, message),
                None => ScriptError::bare(message),
            })
        }
        None => result.map_err(|e| super::error::from_lua(&e)),
    }
}

fn is_memory_error(e: &mlua::Error) -> bool {
    match e {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            is_memory_error(cause)
        }
        _ => false,
    }
}

/// Calls a hook under fresh limits, converting errors to `file:line` form. `what` names the hook
/// in limit errors (`` `modes.blitz.reply` ``).
///
/// # Errors
/// Whatever the hook raised, a limit it ran into, or a conversion failure of its results.
pub fn call<R: mlua::FromLuaMulti>(
    lua: &Lua,
    what: &str,
    f: &Function,
    args: impl IntoLuaMulti,
) -> Result<R, ScriptError> {
    start_call(lua);
    let result = f.call(args);
    finish_call(
        lua,
        what,
        || {
            let info = f.info();
            Some(format!("{}:{}", info.short_src?, info.line_defined?))
        },
        result,
    )
}

/// Runs a chunk of source text named `@display` and returns its value.
///
/// # Errors
/// Syntax or run-time errors of the chunk, or a limit it ran into.
pub(crate) fn run_chunk(lua: &Lua, display: &str, source: &str) -> Result<Value, ScriptError> {
    start_call(lua);
    let result = lua
        .load(source)
        .set_name(format!("@{display}"))
        .eval::<Value>();
    finish_call(
        lua,
        &format!("`{display}`"),
        || Some(format!("{display}:1")),
        result,
    )
}

/// Runs the entry script `entry` in a fresh state and returns the state, the entry's display path
/// and the table it returned. `what` and `constructor` name what it should have returned ("a
/// tournament table", `arena.tournament`) for the error message.
///
/// # Errors
/// A missing or broken script, or one that returns something else than a table.
pub(crate) fn run_entry(
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

/// A module's main chunk: from its shared bytecode when it has some (compiling it the first
/// time), else from its source.
fn load_module(lua: &Lua, module: &ResolvedModule) -> mlua::Result<Function> {
    let name = format!("@{}", module.display);
    let Some(compiled) = &module.compiled else {
        return lua
            .load(module.content.as_str())
            .set_name(name)
            .into_function();
    };
    if let Some(bytecode) = compiled.get(&module.display) {
        return load_bytecode(lua, &bytecode, &name);
    }
    let chunk = lua
        .load(module.content.as_str())
        .set_name(name)
        .into_function()?;
    // Not stripped: the debug information is what names `file:line` in errors.
    compiled.insert(&module.display, chunk.dump(false));
    Ok(chunk)
}

/// Loads bytecode this process dumped from a pinned module (see [`CompiledModules`]). mlua's
/// safe mode refuses binary chunks, rightly for anything a script hands it; this bytecode is
/// never a script's.
fn load_bytecode(lua: &Lua, bytecode: &[u8], name: &str) -> mlua::Result<Function> {
    let name = std::ffi::CString::new(name).map_err(mlua::Error::external)?;
    // SAFETY: one protected call; `luaL_loadbufferx` in mode "b" leaves the function or an
    // error message on the stack, and `lua_error` raises the latter as a Lua error, which
    // `exec_raw` returns. Nothing here needs dropping when it unwinds.
    unsafe {
        lua.exec_raw::<Function>((), |state| {
            let status = ffi::luaL_loadbufferx(
                state,
                bytecode.as_ptr().cast(),
                bytecode.len(),
                name.as_ptr(),
                c"b".as_ptr(),
            );
            if status != ffi::LUA_OK {
                ffi::lua_error(state);
            }
        })
    }
}

/// `require(name)`: the `arena` API, or a module found by the resolver, loaded once per state.
fn install_require(lua: &Lua, resolver: Resolver, arena: Table) -> Result<(), ScriptError> {
    let require = lua
        .create_function(move |lua, name: String| {
            if name == "arena" {
                return Ok(Value::Table(arena.clone()));
            }
            // A module this player replaced is its replacement, except for the replacement itself,
            // which builds on the module it stands in for.
            let name = match resolver.replacement(&name) {
                Some(stand_in) if !called_from(lua, stand_in) => {
                    resolver.mark_replaced(&name);
                    stand_in.to_string()
                }
                _ => name,
            };
            let loaded: Table = lua.named_registry_value(LOADED_KEY)?;
            let cached: Value = loaded.get(name.as_str())?;
            if !cached.is_nil() {
                return Ok(cached);
            }
            // A module that is not found is reported at the `require` that names it, in whatever
            // module that is, not at the player or tournament that led there.
            let module = resolver
                .resolve(&name)
                .map_err(|e| match caller_location(lua) {
                    Some(at) => mlua::Error::runtime(format!("{at}: {e}")),
                    None => mlua::Error::runtime(e),
                })?;
            let chunk = load_module(lua, &module)?;
            // A module whose loading requires it again would recurse through this function until
            // the process's stack runs out (a limit cannot stop it): refuse the loop instead.
            let loading: Table = lua.named_registry_value(LOADING_KEY)?;
            if loading.get::<bool>(name.as_str()).unwrap_or(false) {
                let at = caller_location(lua)
                    .map(|at| format!("{at}: "))
                    .unwrap_or_default();
                return Err(mlua::Error::runtime(format!(
                    "{at}module `{name}` requires itself while it loads (a loop of `require`)"
                )));
            }
            loading.set(name.as_str(), true)?;
            let value = chunk.call::<Value>(name.as_str());
            loading.set(name.as_str(), Value::Nil)?;
            let value = value?;
            let value = if value.is_nil() {
                Value::Boolean(true)
            } else {
                value
            };
            loaded.set(name.as_str(), value.clone())?;
            Ok(value)
        })
        .map_err(script_error)?;
    lua.globals()
        .set("require", require)
        .map_err(script_error)?;
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

    fn limited(limits: Limits) -> Lua {
        new_state(Resolver::from_disk(Path::new(".")), limits).unwrap()
    }

    fn few_instructions() -> Lua {
        limited(Limits {
            instructions_per_call: 1_000_000,
            ..Limits::default()
        })
    }

    #[test]
    fn endless_loops_are_stopped_at_their_line() {
        let lua = few_instructions();
        let err =
            run_chunk(&lua, "loop.lua", "local n = 0\nwhile true do n = n + 1 end").unwrap_err();
        assert!(err.message.contains("instruction limit"), "{err}");
        assert_eq!(err.location.as_deref(), Some("loop.lua:2"), "{err}");
        assert!(err.message.contains("in `loop.lua`"), "{err}");
        // The next call gets a fresh budget.
        assert!(run_chunk(&lua, "ok.lua", "return 1").is_ok());
    }

    #[test]
    fn hook_errors_name_the_hook() {
        let lua = few_instructions();
        let f: Function = lua
            .load("return function()\n  while true do end\nend")
            .set_name("@modes/spin.lua")
            .eval()
            .unwrap();
        let err = call::<()>(&lua, "`modes.spin.reply`", &f, ()).unwrap_err();
        assert_eq!(err.location.as_deref(), Some("modes/spin.lua:2"), "{err}");
        assert!(err.message.contains("in `modes.spin.reply`"), "{err}");
    }

    /// A pattern that backtracks inside the matcher: C Lua never returns to the VM on it.
    const BACKTRACKING: &str =
        "local s = ('a'):rep(40)\nlocal at = string.find(s, ('a-'):rep(30) .. 'b')\nreturn at";

    #[test]
    fn backtracking_patterns_use_up_the_instruction_budget() {
        let lua = few_instructions();
        let err = run_chunk(&lua, "pat.lua", BACKTRACKING).unwrap_err();
        assert!(err.message.contains("instruction limit"), "{err}");
        assert_eq!(err.location.as_deref(), Some("pat.lua:2"), "{err}");
    }

    #[test]
    fn the_deadline_stops_what_the_budget_allows() {
        let lua = limited(Limits {
            instructions_per_call: i64::MAX,
            time_per_call: Duration::from_millis(200),
            ..Limits::default()
        });
        let err = run_chunk(&lua, "pat.lua", BACKTRACKING).unwrap_err();
        assert!(err.message.contains("time limit"), "{err}");
        assert_eq!(err.location.as_deref(), Some("pat.lua:2"), "{err}");
        let err = run_chunk(&lua, "spin.lua", "while true do end").unwrap_err();
        assert!(err.message.contains("time limit"), "{err}");
        assert_eq!(err.location.as_deref(), Some("spin.lua:1"), "{err}");
        // Between calls no deadline runs: Lua called from Rust later still works.
        std::thread::sleep(Duration::from_millis(250));
        let v: i64 = lua.load("return 1 + 1").eval().unwrap();
        assert_eq!(v, 2);
    }

    #[test]
    fn limits_cannot_be_caught_or_escaped() {
        let lua = few_instructions();
        for (name, code) in [
            (
                "pcall.lua",
                "pcall(function() while true do end end)\nreturn 1",
            ),
            (
                "co.lua",
                "coroutine.wrap(function() while true do end end)()",
            ),
            ("move.lua", "table.move({}, 1, 1e15, 1)\nreturn 1"),
            (
                "insert.lua",
                "local t = setmetatable({}, {__len = function() return 1e15 end})\ntable.insert(t, 1, 1)",
            ),
            (
                "sort.lua",
                "local t = setmetatable({}, {__len = function() return 2^30 end, __index = rawlen})\ntable.sort(t)",
            ),
        ] {
            let err = run_chunk(&lua, name, code).unwrap_err();
            assert!(err.message.contains("instruction limit"), "{name}: {err}");
            assert!(
                err.location.as_deref().is_some_and(|l| l.starts_with(name)),
                "{name}: {err}"
            );
        }
        let err = run_chunk(
            &lua,
            "gc.lua",
            "setmetatable({}, {__gc = function() while true do end end})\nreturn 1",
        )
        .unwrap_err();
        assert_eq!(err.location.as_deref(), Some("gc.lua:1"), "{err}");
        assert!(err.message.contains("`__gc` is not allowed"), "{err}");
        // Ordinary use is untouched.
        let v: String = lua
            .load("local t = {3, 1, 2}; table.sort(t); table.insert(t, 1, 0); table.remove(t); return table.concat(table.move(t, 1, 3, 2, {}), ',', 2, 4)")
            .eval()
            .unwrap();
        assert_eq!(v, "0,1,2");
    }

    #[test]
    fn memory_is_capped_and_the_line_is_named() {
        let lua = limited(Limits {
            memory_bytes: 8 << 20,
            ..Limits::default()
        });
        let err = run_chunk(
            &lua,
            "hog.lua",
            "local t = {}\nfor i = 1, 1e8 do t[i] = string.rep('x', 100) .. i end",
        )
        .unwrap_err();
        assert!(err.message.contains("out of memory"), "{err}");
        assert_eq!(err.location.as_deref(), Some("hog.lua:2"), "{err}");
        // One huge allocation before the hook ever ran: the chunk itself is named.
        let err = run_chunk(&lua, "big.lua", "return string.rep('x', 1e9)").unwrap_err();
        assert!(err.message.contains("out of memory"), "{err}");
        assert_eq!(err.location.as_deref(), Some("big.lua:1"), "{err}");
    }

    #[test]
    fn loaded_chunks_see_the_sandbox() {
        let lua = state();
        let pi: f64 = lua.load("return load('return math.pi')()").eval().unwrap();
        assert_eq!(pi, std::f64::consts::PI);
        let v: i64 = lua
            .load("return load('return x', 'chunk', 't', {x = 5})()")
            .eval()
            .unwrap();
        assert_eq!(v, 5);
        // An explicit nil environment stays nil, as in Lua.
        let ok: bool = lua
            .load("return pcall(load('return math', 'chunk', 't', nil))")
            .eval()
            .unwrap();
        assert!(!ok);
        let io_is_absent: bool = lua
            .load("return load('return io')() == nil")
            .eval()
            .unwrap();
        assert!(io_is_absent);
    }

    #[test]
    fn a_loop_of_require_is_an_error_not_a_stack_overflow() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.lua"), "return require('b')").unwrap();
        std::fs::write(dir.path().join("b.lua"), "return require('a')").unwrap();
        let lua = new_state(Resolver::from_disk(dir.path()), Limits::default()).unwrap();
        let err = run_chunk(&lua, "t.lua", "require('a')")
            .unwrap_err()
            .to_string();
        assert!(err.contains("module `a` requires itself"), "{err}");
        assert!(err.contains("b.lua:1"), "{err}");
        // Nothing half-loaded stays behind: the loop is refused again, the same way.
        let again = run_chunk(&lua, "t.lua", "require('a')")
            .unwrap_err()
            .to_string();
        assert!(again.contains("module `a` requires itself"), "{again}");
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
        let err = run_chunk(&lua, "t.lua", "require('/etc/passwd')").unwrap_err();
        assert!(
            err.to_string().contains("module `/etc/passwd` is refused"),
            "{err}"
        );
        let arena_is_api: bool = lua.load("return require('arena') == arena").eval().unwrap();
        assert!(arena_is_api);
    }
}
