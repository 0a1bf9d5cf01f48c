//! `arena.ladder(name)`: a built-in, calibrated ladder rung as a player table, ready for a
//! tournament's `players` (`arena.ladder()` lists the rungs' names, weakest first).
//!
//! The table is the rung's settings from the shipped calibration (`data/ladder/calibration.json`)
//! with `name` set to the rung's name, `anchor_elo` to its calibrated Elo and `anchor_se` to that
//! Elo's standard error on the external scale (its error relative to the calibration's anchor and
//! the anchor's own, in quadrature), marked with the caller's line like `arena.engine{}`.

use mlua::{Lua, LuaSerdeExt, Table, Value};

use super::caller_location;
use crate::rating::calibration::Calibration;

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let ladder = lua.create_function(|lua, name: Option<String>| match name {
        None => {
            let names: Vec<&str> = Calibration::builtin()
                .rungs
                .iter()
                .map(|r| r.name.as_str())
                .collect();
            Ok(Value::Table(lua.create_sequence_from(names)?))
        }
        Some(name) => Ok(Value::Table(rung_player(lua, &name)?)),
    })?;
    arena.set("ladder", ladder)
}

/// The built-in rung `name` as a player table, marked with the caller's line.
///
/// # Errors
/// No such rung (the message lists the rungs).
pub(super) fn rung_player(lua: &Lua, name: &str) -> mlua::Result<Table> {
    let calibration = Calibration::builtin();
    let rung = calibration.rung(name).ok_or_else(|| {
        let names: Vec<&str> = calibration.rungs.iter().map(|r| r.name.as_str()).collect();
        mlua::Error::runtime(format!(
            "arena.ladder: no built-in rung `{name}` (rungs: {})",
            names.join(", ")
        ))
    })?;
    let table: Table = match lua.to_value(&rung.player)? {
        Value::Table(t) => t,
        _ => return Err(mlua::Error::runtime("a rung's settings are a table")),
    };
    table.set("name", rung.name.as_str())?;
    table.set("anchor_elo", rung.elo)?;
    // On the anchor's external scale: the rung's error relative to the anchor and the
    // anchor's own (LLM Chess's ±23.03 at 95 % for the random mover) add.
    table.set("anchor_se", rung.se.hypot(calibration.anchor.se))?;
    if let Some(at) = caller_location(lua) {
        table.set(super::DEFINED_AT, at)?;
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use mlua::{Lua, Table};

    use crate::rating::calibration::Calibration;

    fn lua() -> Lua {
        let lua = Lua::new();
        super::super::register(&lua).unwrap();
        lua
    }

    #[test]
    fn a_rung_carries_the_shipped_settings_elo_and_se() {
        let lua = lua();
        let c = Calibration::builtin();
        let names: Vec<String> = lua.load("return arena.ladder()").eval().unwrap();
        let shipped: Vec<String> = c.rungs.iter().map(|r| r.name.clone()).collect();
        assert_eq!(names, shipped);
        for rung in &c.rungs {
            let t: Table = lua
                .load(format!("return arena.ladder({:?})", rung.name))
                .eval()
                .unwrap();
            assert_eq!(t.get::<String>("name").unwrap(), rung.name);
            assert_eq!(t.get::<f64>("anchor_elo").unwrap(), rung.elo);
            assert_eq!(
                t.get::<f64>("anchor_se").unwrap(),
                rung.se.hypot(c.anchor.se)
            );
            assert_eq!(
                t.get::<String>("kind").unwrap(),
                rung.player["kind"].as_str().unwrap()
            );
        }
    }

    #[test]
    fn an_unknown_rung_names_the_known_ones() {
        let err = lua()
            .load(r#"return arena.ladder("sf-n3")"#)
            .eval::<Table>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("sf-n3") && err.contains("random"), "{err}");
    }
}
