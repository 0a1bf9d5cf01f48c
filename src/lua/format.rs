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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{
        lua::{
            sources::Resolver,
            state::{Limits, new_state},
        },
        tournament::schedule::FormatGame,
    };

    fn game(index: u32, white: &str, black: &str, result: &str) -> FormatGame {
        FormatGame {
            index,
            round: 1,
            white: white.into(),
            black: black.into(),
            result: Some(result.into()),
        }
    }

    #[test]
    fn the_matchmaker_rates_games_in_schedule_order_whatever_order_they_come_in() {
        let lua = new_state(Resolver::from_disk(Path::new(".")), Limits::default()).unwrap();
        let options: Options = serde_json::from_str(r#"{ "focus": "new", "top_k": 1 }"#).unwrap();
        let format = FormatScript::load(&lua, "formats.matchmaker", &options).unwrap();
        // Glicko-1 moves early games most: b loses four then wins two, c the other way round,
        // so which of them (or their opponents) ends nearest the newcomer depends on the order.
        let schedule = [
            ("b", "x", ["0-1", "0-1", "0-1", "0-1", "1-0", "1-0"]),
            ("c", "y", ["1-0", "1-0", "0-1", "0-1", "0-1", "0-1"]),
        ];
        let mut games = Vec::new();
        for (white, black, results) in schedule {
            for result in results {
                games.push(game(games.len() as u32 + 1, white, black, result));
            }
        }
        let state = |games: Vec<FormatGame>| FormatState {
            players: ["new", "b", "c", "x", "y"].map(String::from).to_vec(),
            games,
            games_per_pair: 2,
            openings: 0,
            seed: 1,
            options: format.options().clone(),
            analysis: None,
        };
        let in_order = format.pairings(&state(games.clone())).unwrap().unwrap();
        let mut shuffled = games.clone();
        shuffled.reverse();
        let reversed = format.pairings(&state(shuffled)).unwrap().unwrap();
        assert_eq!(in_order, reversed);
        assert_eq!(in_order[0].white, "new");
    }
}
