//! The `arena` table that scripts see (also returned by `require("arena")`).
//!
//! Each submodule registers one part of the API; the typed reference for script authors is
//! `scripts/types/arena.lua`.

use mlua::{Lua, Table};

mod board;
mod eval;
mod experiment;
mod ladder;
mod log;
mod pairing;
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
    lua.globals().set("arena", arena.clone())?;
    Ok(arena)
}

/// `file:line` of the Lua code that called the running Rust function.
pub(crate) fn caller_location(lua: &Lua) -> Option<String> {
    lua.inspect_stack(1, |debug| {
        let source = debug.source();
        let file = source.short_src?.to_string();
        let line = debug.current_line()?;
        Some(format!("{file}:{line}"))
    })
    .flatten()
}
