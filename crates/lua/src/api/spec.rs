//! Constructors that mark where a player or tournament was defined: `arena.tournament{}`,
//! `arena.evaluation{}`, `arena.llm{}`, `arena.moa{}`, `arena.engine{}`, `arena.random{}`,
//! `arena.human{}`.
//!
//! They return the table they were given, with its `kind` set and the caller's `file:line` stored,
//! so that validation in Rust can point at the line that defines a bad player.

use mlua::{Lua, Table};

use super::caller_location;

/// The field in which constructors record `file:line`.
pub const DEFINED_AT: &str = "_defined_at";

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    for kind in ["llm", "moa", "engine", "random", "human"] {
        let f = lua.create_function(move |lua, t: Table| {
            let existing: Option<String> = t.get("kind")?;
            if let Some(existing) = existing
                && existing != kind
            {
                return Err(mlua::Error::runtime(format!(
                    "arena.{kind}{{}} was given kind = \"{existing}\""
                )));
            }
            t.set("kind", kind)?;
            mark(lua, &t)?;
            Ok(t)
        })?;
        arena.set(kind, f)?;
    }
    // `arena.evaluation{}` marks its table the same way: a fine-grained evaluation script.
    for name in ["tournament", "evaluation"] {
        arena.set(
            name,
            lua.create_function(|lua, t: Table| {
                mark(lua, &t)?;
                super::placement::add_rungs(lua, &t)?;
                Ok(t)
            })?,
        )?;
    }
    Ok(())
}

fn mark(lua: &Lua, t: &Table) -> mlua::Result<()> {
    if let Some(at) = caller_location(lua) {
        t.set(DEFINED_AT, at)?;
    }
    Ok(())
}
