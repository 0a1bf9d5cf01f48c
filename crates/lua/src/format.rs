//! Tournament formats: the Lua hook that decides which games to play.
//!
//! A format module returns a table with `pairings(state)`, called with the Rust-owned tournament
//! state, and optionally `defaults`, the `format_options` it understands. `pairings` returns the
//! next games to schedule, nil when the tournament is complete, or `{ no_pairing = { round,
//! reason } }` when its rules allow no pairing of the next round (the run then stops with
//! [`FormatError::NoPairing`], keeping every game played). Round robin returns the whole
//! schedule on the first call; a rating-driven format returns a few games at a time.
//!
//! Two more hooks are optional: `check(options, field)` returns the problems of the options for
//! this field of players (a list of messages, reported by `arena check` at the tournament's line),
//! and `standings(state)` returns the format's own tables (`{ title, columns, rows, notes,
//! decimals }`), converted here to [`Table`]s.

use mlua::{
    Function, Lua, LuaSerdeExt, Table as LuaTable, Value, serde::ser::Options as SerOptions,
};

use super::{
    ScriptError,
    error::script_error,
    generation::Generation,
    hooks::{HookModule, Options},
    state,
};
use crate::{
    table::{Cell, Table},
    tournament::schedule::{Format, FormatError, FormatState, Pairing},
};

/// A loaded format bound to the tournament's `format_options`.
pub struct FormatScript {
    lua: Lua,
    module: String,
    pairings: Function,
    standings: Option<Function>,
    check: Option<Function>,
    record: Option<Function>,
    options: Options,
}

impl FormatScript {
    /// The format of `generation`, in a fresh Lua state built from its recorded sources.
    ///
    /// # Errors
    /// When the module fails to load, has no `pairings` hook or does not know an option.
    pub(crate) fn for_generation(generation: &Generation) -> Result<Self, ScriptError> {
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
            standings: hooks.optional_hook("standings")?,
            check: hooks.optional_hook("check")?,
            record: hooks.optional_hook("pairing_record")?,
            options: hooks.options(lua, options)?,
        })
    }

    /// What the format's `check(options, field)` hook finds wrong with its options for a field
    /// of these players (`field = { players = {...}, ratings = {...}, untimed = {...} }`, the
    /// last the players without a clock); nothing when the
    /// format has no such hook.
    ///
    /// # Errors
    /// A failing hook, or an answer that is not nil, a message or a list of messages.
    pub fn problems(&self, state: &FormatState) -> Result<Vec<String>, ScriptError> {
        let Some(check) = &self.check else {
            return Ok(Vec::new());
        };
        let field = self.lua.create_table().map_err(script_error)?;
        field
            .set(
                "players",
                self.lua.to_value(&state.players).map_err(script_error)?,
            )
            .map_err(script_error)?;
        field
            .set(
                "ratings",
                self.lua.to_value(&state.ratings).map_err(script_error)?,
            )
            .map_err(script_error)?;
        field
            .set(
                "untimed",
                self.lua.to_value(&state.untimed).map_err(script_error)?,
            )
            .map_err(script_error)?;
        let options = self.lua.to_value(&self.options).map_err(script_error)?;
        let what = format!("`{}.check`", self.module);
        let value: Value = state::call(&self.lua, &what, check, (options, field))?;
        match value {
            Value::Nil => Ok(Vec::new()),
            Value::String(s) => Ok(vec![s.to_string_lossy()]),
            Value::Table(_) => self.lua.from_value(value).map_err(|e| {
                ScriptError::bare(format!("{what} must return a list of messages: {e}"))
            }),
            other => Err(ScriptError::bare(format!(
                "{what} must return nil or a list of messages, not {}",
                other.type_name()
            ))),
        }
    }

    fn state_value(&self, state: &FormatState) -> Result<Value, ScriptError> {
        let options = SerOptions::new()
            .serialize_none_to_null(false)
            .serialize_unit_to_null(false);
        self.lua.to_value_with(state, options).map_err(script_error)
    }
}

/// One table a `standings` hook returned: `columns` as names, `rows` as lists of cells (a
/// string is text, an integer a whole number, a float a number shown with the column's
/// `decimals`, default 1, and `false` an empty cell).
fn table_from_lua(module: &str, value: Value) -> Result<Table, ScriptError> {
    let bad = |m: String| ScriptError::bare(format!("`{module}.standings`: {m}"));
    let Value::Table(t) = value else {
        return Err(bad(format!(
            "a table must be a table, not {}",
            value.type_name()
        )));
    };
    let title: String = t
        .get::<Option<String>>("title")
        .map_err(script_error)?
        .ok_or_else(|| bad("a table has no `title`".into()))?;
    let columns: Vec<String> = t
        .get::<Option<Vec<String>>>("columns")
        .map_err(script_error)?
        .ok_or_else(|| bad(format!("table `{title}` has no `columns`")))?;
    let decimals: Option<LuaTable> = t.get("decimals").map_err(script_error)?;
    let places: Vec<usize> = columns
        .iter()
        .map(|c| {
            Ok(decimals
                .as_ref()
                .map(|d| d.get::<Option<usize>>(c.as_str()))
                .transpose()?
                .flatten()
                .unwrap_or(1))
        })
        .collect::<Result<_, mlua::Error>>()
        .map_err(script_error)?;
    // A format's own table (a Swiss table, a bracket) is of kind `format` unless it names its
    // own kind (an experiment's table is `experiment`).
    let kind = match t.get::<Option<String>>("kind").map_err(script_error)? {
        None => "format".to_owned(),
        Some(k) if !k.is_empty() && crate::table::snake_case(&k) == k => k,
        Some(k) => {
            return Err(bad(format!(
                "table `{title}` has kind `{k}`: a kind is a snake_case name"
            )));
        }
    };
    let mut table = Table {
        title: title.clone(),
        kind,
        tournament: None,
        columns,
        rows: Vec::new(),
        notes: t
            .get::<Option<Vec<String>>>("notes")
            .map_err(script_error)?
            .unwrap_or_default(),
    };
    let rows: Vec<LuaTable> = t
        .get::<Option<Vec<LuaTable>>>("rows")
        .map_err(script_error)?
        .unwrap_or_default();
    for (i, row) in rows.iter().enumerate() {
        if row.raw_len() != table.columns.len() {
            return Err(bad(format!(
                "row {} of `{title}` has {} cells for {} columns",
                i + 1,
                row.raw_len(),
                table.columns.len()
            )));
        }
        let cells = (1..=table.columns.len())
            .map(|c| match row.raw_get::<Value>(c).map_err(script_error)? {
                Value::String(s) => Ok(Cell::Text(s.to_string_lossy())),
                Value::Integer(n) => Ok(Cell::Int(n)),
                Value::Number(x) => Ok(Cell::Num(x, places[c - 1])),
                Value::Boolean(false) | Value::Nil => Ok(Cell::Empty),
                other => Err(bad(format!(
                    "row {} of `{title}`: a cell must be a string, a number or false, not {}",
                    i + 1,
                    other.type_name()
                ))),
            })
            .collect::<Result<Vec<Cell>, ScriptError>>()?;
        table.rows.push(cells);
    }
    Ok(table)
}

/// The [`FormatError::NoPairing`] a `pairings` hook asked for with `{ no_pairing = { round =
/// N, reason = "..." } }`.
fn no_pairing(what: &str, t: &LuaTable) -> Result<FormatError, ScriptError> {
    let bad = |e: mlua::Error| {
        ScriptError::bare(format!(
            "{what}: `no_pairing` must be {{ round = <integer>, reason = <string> }}: {e}"
        ))
    };
    let round: u32 = t.get("round").map_err(bad)?;
    let reason: String = t.get("reason").map_err(bad)?;
    Ok(FormatError::NoPairing { round, reason })
}

impl Format for FormatScript {
    fn options(&self) -> &Options {
        &self.options
    }

    fn pairing_record(
        &self,
        state: &FormatState,
    ) -> Result<Option<crate::pairing::Record>, ScriptError> {
        let Some(hook) = &self.record else {
            return Ok(None);
        };
        let state_value = self.state_value(state)?;
        let what = format!("`{}.pairing_record`", self.module);
        let value: Value = state::call(&self.lua, &what, hook, state_value)?;
        let Value::Table(t) = value else {
            return Ok(None);
        };
        let bad = |e: mlua::Error| ScriptError::bare(format!("{what}: {e}"));
        let names: Vec<String> = t.get("names").map_err(bad)?;
        let ratings: Vec<Option<f64>> = (1..=names.len())
            .map(|i| {
                t.get::<Option<LuaTable>>("ratings")?
                    .map(|r| r.get::<Option<f64>>(i))
                    .transpose()
                    .map(Option::flatten)
            })
            .collect::<Result<_, mlua::Error>>()
            .map_err(bad)?;
        // Void games (`{ round, white, black }`), which the player lines show as unplayed.
        let mut unplayed = Vec::new();
        if let Some(list) = t.get::<Option<LuaTable>>("unplayed").map_err(bad)? {
            for game in list.sequence_values::<LuaTable>() {
                let game = game.map_err(bad)?;
                let index = |key: &str, limit: usize| -> Result<usize, ScriptError> {
                    let n: usize = game.get(key).map_err(bad)?;
                    (1..=limit).contains(&n).then(|| n - 1).ok_or_else(|| {
                        ScriptError::bare(format!(
                            "{what}: `unplayed`: `{key} = {n}` is out of range"
                        ))
                    })
                };
                unplayed.push(crate::pairing::UnplayedGame {
                    round: index("round", usize::MAX)?,
                    white: index("white", names.len())?,
                    black: index("black", names.len())?,
                });
            }
        }
        t.set("names", Value::Nil).map_err(bad)?;
        t.set("ratings", Value::Nil).map_err(bad)?;
        t.set("unplayed", Value::Nil).map_err(bad)?;
        let tournament = super::api::tournament_of(&t).map_err(bad)?;
        Ok(Some(crate::pairing::Record {
            tournament,
            names,
            ratings,
            unplayed,
        }))
    }

    fn pairings(&self, state: &FormatState) -> Result<Option<Vec<Pairing>>, FormatError> {
        let state_value = self.state_value(state)?;
        let what = format!("`{}.pairings`", self.module);
        let value: Value = state::call(&self.lua, &what, &self.pairings, state_value)?;
        if value.is_nil() {
            return Ok(None);
        }
        if let Value::Table(t) = &value
            && let Some(stuck) = t
                .get::<Option<LuaTable>>("no_pairing")
                .map_err(|e| ScriptError::bare(format!("{what}: `no_pairing`: {e}")))?
        {
            return Err(no_pairing(&what, &stuck)?);
        }
        self.lua.from_value(value).map(Some).map_err(|e| {
            ScriptError::bare(format!(
                "`{}.pairings` returned a malformed list: {e}",
                self.module
            ))
            .into()
        })
    }

    fn standings(&self, state: &FormatState) -> Result<Vec<Table>, ScriptError> {
        let Some(hook) = &self.standings else {
            return Ok(Vec::new());
        };
        let state_value = self.state_value(state)?;
        let what = format!("`{}.standings`", self.module);
        let value: Value = state::call(&self.lua, &what, hook, state_value)?;
        match value {
            Value::Nil => Ok(Vec::new()),
            Value::Table(list) => list
                .sequence_values::<Value>()
                .map(|t| table_from_lua(&self.module, t.map_err(script_error)?))
                .collect(),
            other => Err(ScriptError::bare(format!(
                "{what} must return a list of tables, not {}",
                other.type_name()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{
        sources::Resolver,
        state::{Limits, new_state},
        tournament::schedule::FormatGame,
    };

    fn game(index: u32, white: &str, black: &str, result: &str) -> FormatGame {
        FormatGame {
            index,
            round: 1,
            white: white.into(),
            black: black.into(),
            result: Some(result.into()),
            script_hash: None,
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
            ratings: Default::default(),
            games,
            games_per_pair: 2,
            openings: 0,
            seed: 1,
            untimed: Vec::new(),
            options: format.options().clone(),
            analysis: None,
            spend: None,
        };
        let in_order = format.pairings(&state(games.clone())).unwrap().unwrap();
        let mut shuffled = games.clone();
        shuffled.reverse();
        let reversed = format.pairings(&state(shuffled)).unwrap().unwrap();
        assert_eq!(in_order, reversed);
        assert_eq!(in_order[0].white, "new");
    }
}
