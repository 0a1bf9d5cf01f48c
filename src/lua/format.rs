//! Tournament formats: the Lua hook that decides which games to play.
//!
//! A format module returns a table with `pairings(state)`, called with the Rust-owned tournament
//! state. It returns the next games to schedule, or nil when the tournament is complete. Round robin
//! returns the whole schedule on the first call; a rating-driven format returns a few games at a
//! time.

use mlua::{Function, Lua, LuaSerdeExt, Value, serde::ser::Options as SerOptions};

use super::{ScriptError, generation::Generation, state};
use crate::tournament::schedule::{FormatState, Pairing};

/// A loaded format.
pub struct FormatScript {
    lua: Lua,
    module: String,
    pairings: Function,
}

impl FormatScript {
    /// The format of `generation`, in a fresh Lua state built from its recorded sources.
    ///
    /// # Errors
    /// When the module fails to load or has no `pairings` hook.
    pub fn for_generation(generation: &Generation) -> Result<Self, ScriptError> {
        let lua = state::new_state(generation.resolver(), generation.limits)?;
        FormatScript::load(&lua, &generation.format_module)
    }

    /// Requires `module` in `lua`.
    ///
    /// # Errors
    /// When the module fails to load or has no `pairings` hook.
    pub fn load(lua: &Lua, module: &str) -> Result<Self, ScriptError> {
        let require: Function = lua.globals().get("require")?;
        let value: Value = state::call(lua, &require, module)?;
        let Value::Table(table) = value else {
            return Err(ScriptError::bare(format!(
                "format `{module}` must return a table with a `pairings` hook, not {}",
                value.type_name()
            )));
        };
        let pairings = match table.get::<Value>("pairings")? {
            Value::Function(f) => f,
            _ => {
                return Err(ScriptError::bare(format!(
                    "format `{module}` has no `pairings` function"
                )));
            }
        };
        Ok(FormatScript {
            lua: lua.clone(),
            module: module.to_string(),
            pairings,
        })
    }

    /// Calls `pairings(state)`: the next games, or `None` when the tournament is complete.
    ///
    /// # Errors
    /// A hook error or a malformed pairing list.
    pub fn pairings(&self, state: &FormatState) -> Result<Option<Vec<Pairing>>, ScriptError> {
        let options = SerOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false);
        let state_value = self.lua.to_value_with(state, options)?;
        let value: Value = state::call(&self.lua, &self.pairings, state_value)?;
        if value.is_nil() {
            return Ok(None);
        }
        let pairings: Vec<Pairing> = self.lua.from_value(value).map_err(|e| {
            ScriptError::bare(format!(
                "`{}.pairings` returned a malformed list: {e}",
                self.module
            ))
        })?;
        for p in &pairings {
            for name in [&p.white, &p.black] {
                if !state.players.contains(name) {
                    return Err(ScriptError::bare(format!(
                        "`{}.pairings` paired an unknown player `{name}`",
                        self.module
                    )));
                }
            }
            if p.white == p.black {
                return Err(ScriptError::bare(format!(
                    "`{}.pairings` paired `{}` with itself",
                    self.module, p.white
                )));
            }
        }
        Ok(Some(pairings))
    }
}
