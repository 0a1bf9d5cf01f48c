//! `arena.log.info/warn/error`, and `print` routed to the same log.

use mlua::{Lua, MultiValue, Table, Value};

use super::caller_location;

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let log = lua.create_table()?;
    for level in ["info", "warn", "error"] {
        let f = lua.create_function(move |lua, args: MultiValue| {
            emit(lua, level, &join(&args));
            Ok(())
        })?;
        log.set(level, f)?;
    }
    arena.set("log", log)?;
    let print = lua.create_function(|lua, args: MultiValue| {
        emit(lua, "info", &join(&args));
        Ok(())
    })?;
    lua.globals().set("print", print)?;
    Ok(())
}

fn emit(lua: &Lua, level: &str, message: &str) {
    let at = caller_location(lua).unwrap_or_else(|| "lua".into());
    match level {
        "warn" => tracing::warn!(target: "arena::script", "{at}: {message}"),
        "error" => tracing::error!(target: "arena::script", "{at}: {message}"),
        _ => tracing::info!(target: "arena::script", "{at}: {message}"),
    }
}

fn join(args: &MultiValue) -> String {
    args.iter()
        .map(|v| match v {
            Value::String(s) => s.to_string_lossy(),
            other => other.to_string().unwrap_or_else(|_| format!("{other:?}")),
        })
        .collect::<Vec<_>>()
        .join("\t")
}
