//! Tournament formats: the Lua hook that decides which games to play.
//!
//! A format module returns a table with `pairings(state)`, called with the Rust-owned tournament
//! state, and optionally `defaults`, the `format_options` it understands. `pairings` returns the
//! next games to schedule, or nil when the tournament is complete. Round robin returns the whole
//! schedule on the first call; a rating-driven format returns a few games at a time.

use mlua::{Function, Lua, LuaSerdeExt, Value, serde::ser::Options as SerOptions};

use super::{
    ScriptError,
    generation::Generation,
    hooks::{HookModule, Options},
    state,
};
use crate::tournament::schedule::{Format, FormatState, Pairing};

/// A loaded format bound to the tournament's `format_options`.
pub struct FormatScript {
    lua: Lua,
    module: String,
    pairings: Function,
    options: Options,
}

impl FormatScript {
    /// The format of `generation`, in a fresh Lua state built from its recorded sources.
    ///
    /// # Errors
    /// When the module fails to load, has no `pairings` hook or does not know an option.
    pub fn for_generation(generation: &Generation) -> Result<Self, ScriptError> {
        let lua = state::new_state(generation.resolver(), generation.limits)?;
        FormatScript::load(
            &lua,
            &generation.format_module,
            &generation.format_options(),
        )
    }

    /// Requires `module` in `lua` and overlays its `defaults` with `options`.
    ///
    /// # Errors
    /// When the module fails to load, has no `pairings` hook or does not know an option.
    pub fn load(lua: &Lua, module: &str, options: &Options) -> Result<Self, ScriptError> {
        let hooks = HookModule::require(lua, module, "format")?;
        Ok(FormatScript {
            lua: lua.clone(),
            module: hooks.name().to_string(),
            pairings: hooks.hook("pairings")?,
            options: hooks.options(lua, options)?,
        })
    }
}

impl Format for FormatScript {
    fn options(&self) -> &Options {
        &self.options
    }

    fn pairings(&self, state: &FormatState) -> Result<Option<Vec<Pairing>>, ScriptError> {
        let options = SerOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false);
        let state_value = self.lua.to_value_with(state, options)?;
        let value: Value = state::call(
            &self.lua,
            &format!("`{}.pairings`", self.module),
            &self.pairings,
            state_value,
        )?;
        if value.is_nil() {
            return Ok(None);
        }
        self.lua.from_value(value).map(Some).map_err(|e| {
            ScriptError::bare(format!(
                "`{}.pairings` returned a malformed list: {e}",
                self.module
            ))
        })
    }
}
