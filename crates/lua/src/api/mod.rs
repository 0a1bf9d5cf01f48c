//! The `arena` table that scripts see (also returned by `require("arena")`).
//!
//! Each submodule registers one part of the API; the typed reference for script authors is
//! `scripts/types/arena.lua`.

use mlua::{Lua, MultiValue, Table, Value};

mod board;
mod eval;
mod experiment;
mod ladder;
mod log;
mod pairing;
mod placement;
mod rating;
mod spec;
mod text;

pub(crate) use pairing::tournament_of;
pub use spec::DEFINED_AT;

/// Builds the `arena` table, sets it as a global and returns it.
///
/// # Errors
/// Only when Lua cannot allocate.
pub fn register(lua: &Lua) -> mlua::Result<Table> {
    let arena = lua.create_table()?;
    log::register(lua, &arena)?;
    text::register(lua, &arena)?;
    spec::register(lua, &arena)?;
    board::register(lua, &arena)?;
    eval::register(lua, &arena)?;
    rating::register(lua, &arena)?;
    ladder::register(lua, &arena)?;
    pairing::register(lua, &arena)?;
    experiment::register(lua, &arena)?;
    locate_errors(lua, &arena, 0)?;
    lua.globals().set("arena", arena.clone())?;
    Ok(arena)
}

/// Wraps every function of the API (nested tables included) so that an error it raises names
/// the script's `file:line`: an error from Rust (a value of the wrong type where a table is
/// expected, say) carries no location of its own, unlike Lua's `error`.
fn locate_errors(lua: &Lua, table: &Table, depth: usize) -> mlua::Result<()> {
    // The API is three tables deep (`arena.rating.glicko.rate`); the bound also stops cycles.
    if depth > 4 {
        return Ok(());
    }
    for pair in table
        .pairs::<Value, Value>()
        .collect::<mlua::Result<Vec<_>>>()?
    {
        match pair {
            (key, Value::Function(f)) => {
                let wrapped = lua.create_function(move |lua, args: MultiValue| {
                    f.call::<MultiValue>(args)
                        .map_err(|e| with_location(lua, &e))
                })?;
                table.raw_set(key, wrapped)?;
            }
            (_, Value::Table(inner)) => locate_errors(lua, &inner, depth + 1)?,
            _ => {}
        }
    }
    Ok(())
}

/// The error `e` of an API function, prefixed with the caller's `file:line` unless it names one.
fn with_location(lua: &Lua, e: &mlua::Error) -> mlua::Error {
    let error = crate::error::from_lua(e);
    match (error.location, caller_location(lua)) {
        (None, Some(at)) => mlua::Error::runtime(format!("{at}: {}", error.message)),
        _ => e.clone(),
    }
}

/// `file:line` of the Lua code that called the running Rust function (frames of Rust functions,
/// such as the wrappers of [`locate_errors`], have no line and are passed over).
pub(crate) fn caller_location(lua: &Lua) -> Option<String> {
    (1..8).find_map(|level| {
        lua.inspect_stack(level, |debug| {
            let source = debug.source();
            let file = source.short_src?.to_string();
            let line = debug.current_line()?;
            Some(format!("{file}:{line}"))
        })
        .flatten()
    })
}
