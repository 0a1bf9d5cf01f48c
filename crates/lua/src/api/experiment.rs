//! `arena.experiment{}`: a "did my change help?" experiment, and `arena.experiment_status(state)`,
//! its statistics for the `experiment` format.
//!
//! `arena.experiment{ name, baseline, variants, opponents, openings, sprt = {...} | games = N,
//! null = true, ... }` returns an ordinary tournament table: the players are the baseline, the
//! variants, the null copy (an exact copy of the baseline named `<baseline>-null`) and the
//! opponents; the format is `experiment` with the design in `format_options.experiment`; random
//! movers' seeds follow the round (`pair_seeds`). Every other key (`max_plies`, `seed`,
//! `concurrency`, `time_control`, `openings`, `analysis`, ...) is the tournament's, so a run,
//! a resume and a reload treat an experiment like any tournament. The design lives in
//! [`crate::tournament::experiment`].

use mlua::{Lua, LuaSerdeExt, Table, Value};
use serde::Deserialize;

use super::caller_location;
use crate::{
    table::Cell,
    tournament::{
        experiment::{self, Design},
        schedule::{FormatGame, FormatState},
    },
};

/// Keys an experiment reads itself; the rest go to the tournament.
const DESIGN_KEYS: [&str; 7] = [
    "baseline",
    "variants",
    "opponents",
    "sprt",
    "games",
    "null",
    "max_pairs",
];

/// Keys an experiment sets itself.
const RESERVED: [&str; 5] = [
    "players",
    "format",
    "format_options",
    "games_per_pair",
    "pair_seeds",
];

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    arena.set(
        "experiment",
        lua.create_function(|lua, t: Table| {
            let at = caller_location(lua);
            to_tournament(lua, t, at.as_deref()).map_err(|m| {
                mlua::Error::runtime(match &at {
                    Some(at) => format!("{at}: arena.experiment: {m}"),
                    None => format!("arena.experiment: {m}"),
                })
            })
        })?,
    )?;
    arena.set(
        "experiment_status",
        lua.create_function(|lua, state: Value| status(lua, state))?,
    )
}

fn name_of(player: &Table, what: &str) -> Result<String, String> {
    player
        .get::<Option<String>>("name")
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{what} has no `name`"))
}

/// A copy of `t` and of every table inside it, so that the null copy shares nothing.
fn deep_copy(lua: &Lua, t: &Table) -> mlua::Result<Table> {
    let out = lua.create_table()?;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let v = match v {
            Value::Table(inner) => Value::Table(deep_copy(lua, &inner)?),
            other => other,
        };
        out.set(k, v)?;
    }
    if let Some(meta) = t.metatable() {
        out.set_metatable(Some(meta))?;
    }
    Ok(out)
}

fn players_of(list: Option<Table>, what: &str) -> Result<Vec<Table>, String> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    (1..=list.raw_len())
        .map(|i| {
            list.raw_get::<Table>(i)
                .map_err(|_| format!("{what}[{i}] is not a player table"))
        })
        .collect()
}

fn to_tournament(lua: &Lua, t: Table, at: Option<&str>) -> Result<Table, String> {
    let lerr = |e: mlua::Error| e.to_string();
    let out = lua.create_table().map_err(lerr)?;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(lerr)?;
        let key = k
            .as_string()
            .map(|s| s.to_string_lossy())
            .unwrap_or_default();
        if RESERVED.contains(&key.as_str()) {
            return Err(format!("an experiment sets `{key}` itself; remove it"));
        }
        if !DESIGN_KEYS.contains(&key.as_str()) {
            out.set(k, v).map_err(lerr)?;
        }
    }
    let baseline: Table = t
        .get::<Option<Table>>("baseline")
        .map_err(|_| "`baseline` must be a player table".to_string())?
        .ok_or("no `baseline`: give the player the variants are compared with")?;
    let variants = players_of(
        t.get("variants")
            .map_err(|_| "`variants` must be a list of players")?,
        "variants",
    )?;
    let opponents = players_of(
        t.get("opponents")
            .map_err(|_| "`opponents` must be a list of players")?,
        "opponents",
    )?;
    let base_name = name_of(&baseline, "the baseline")?;
    let mut variant_names = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        variant_names.push(name_of(v, &format!("variants[{}]", i + 1))?);
    }
    let mut opponent_names: Vec<String> = Vec::new();
    for (i, o) in opponents.iter().enumerate() {
        // An opponent needs no name of its own (`arena.random {}`): it is named by its kind,
        // numbered when the kind repeats.
        let name = match o.get::<Option<String>>("name").map_err(lerr)? {
            Some(name) => name,
            None => {
                let kind = o
                    .get::<Option<String>>("kind")
                    .map_err(lerr)?
                    .ok_or_else(|| format!("opponents[{}] is not a player", i + 1))?;
                let mut name = kind.clone();
                let mut n = 2;
                while opponent_names.contains(&name)
                    || name == base_name
                    || variant_names.contains(&name)
                {
                    name = format!("{kind}-{n}");
                    n += 1;
                }
                o.set("name", name.as_str()).map_err(lerr)?;
                name
            }
        };
        opponent_names.push(name);
    }
    let null = match t.get::<Value>("null").map_err(lerr)? {
        Value::Nil | Value::Boolean(false) => false,
        Value::Boolean(true) => true,
        other => {
            return Err(format!(
                "`null` must be true or false, not {}",
                other.type_name()
            ));
        }
    };
    let null_name = null.then(|| format!("{base_name}-null"));
    let design = Design {
        baseline: base_name,
        variants: variant_names,
        null: null_name.clone(),
        opponents: opponent_names,
        sprt: match t.get::<Value>("sprt").map_err(lerr)? {
            Value::Nil => None,
            v => Some(
                lua.from_value(v)
                    .map_err(|e| format!("sprt: {e} (keys: elo0, elo1, alpha, beta, model)"))?,
            ),
        },
        games: t
            .get::<Option<u32>>("games")
            .map_err(|_| "`games` must be a whole number")?,
        max_pairs: t
            .get::<Option<u32>>("max_pairs")
            .map_err(|_| "`max_pairs` must be a whole number")?,
    };
    design.check().map_err(|e| e.to_string())?;

    let players = lua.create_table().map_err(lerr)?;
    players.push(baseline.clone()).map_err(lerr)?;
    for v in variants {
        players.push(v).map_err(lerr)?;
    }
    if let Some(name) = &null_name {
        let copy = deep_copy(lua, &baseline).map_err(lerr)?;
        copy.set("name", name.as_str()).map_err(lerr)?;
        players.push(copy).map_err(lerr)?;
    }
    for o in opponents {
        players.push(o).map_err(lerr)?;
    }
    out.set("players", players).map_err(lerr)?;
    out.set("format", "experiment").map_err(lerr)?;
    let options = lua.create_table().map_err(lerr)?;
    let design_value = lua.to_value(&design).map_err(lerr)?;
    // Empty lists would cross back as empty objects: leave them out (they default to empty).
    if let Value::Table(d) = &design_value {
        if design.opponents.is_empty() {
            d.set("opponents", Value::Nil).map_err(lerr)?;
        }
        for key in ["null", "sprt", "games", "max_pairs"] {
            if matches!(d.get::<Value>(key).map_err(lerr)?, Value::LightUserData(_)) {
                d.set(key, Value::Nil).map_err(lerr)?;
            }
        }
    }
    options.set("experiment", design_value).map_err(lerr)?;
    out.set("format_options", options).map_err(lerr)?;
    out.set("games_per_pair", 2).map_err(lerr)?;
    out.set("pair_seeds", true).map_err(lerr)?;
    if let Some(at) = at {
        out.set(super::DEFINED_AT, at).map_err(lerr)?;
    }
    Ok(out)
}

/// What `experiment_status` reads of a format state.
#[derive(Deserialize)]
struct StateIn {
    #[serde(default)]
    games: Vec<GameIn>,
    #[serde(default)]
    options: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct GameIn {
    #[serde(default)]
    index: u32,
    round: u32,
    white: String,
    black: String,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    script_hash: Option<String>,
}

/// `arena.experiment_status(state)`: `{ finished = reason | nil, next_cell = n, active = {names},
/// table = {title, kind, columns, rows, notes, decimals} }`.
fn status(lua: &Lua, state: Value) -> mlua::Result<Table> {
    let state: StateIn = lua.from_value(state)?;
    let design: Design = state
        .options
        .get("experiment")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| mlua::Error::runtime(format!("experiment: bad design: {e}")))?
        .ok_or_else(|| mlua::Error::runtime("experiment: the format has no `experiment` option"))?;
    let format_state = FormatState {
        players: Vec::new(),
        ratings: Default::default(),
        games: state
            .games
            .into_iter()
            .map(|g| FormatGame {
                index: g.index,
                round: g.round,
                white: g.white,
                black: g.black,
                result: g.result,
                script_hash: g.script_hash,
            })
            .collect(),
        games_per_pair: 2,
        openings: 0,
        seed: 0,
        options: state.options,
        analysis: None,
        spend: None,
        untimed: Vec::new(),
    };
    let s = experiment::status_of(&design, &format_state)
        .map_err(|e| mlua::Error::runtime(e.to_string()))?;
    let out = lua.create_table()?;
    out.set("finished", s.finished.clone())?;
    out.set("next_cell", s.next_cell)?;
    let active = lua.create_sequence_from(
        s.arms
            .iter()
            .filter(|a| a.active)
            .map(|a| a.variant.clone()),
    )?;
    out.set("active", active)?;
    let table = experiment::table(&design, &s, None);
    let t = lua.create_table()?;
    t.set("title", table.title.as_str())?;
    t.set("kind", table.kind.as_str())?;
    t.set("columns", table.columns.clone())?;
    let decimals = lua.create_table()?;
    let rows = lua.create_table()?;
    for row in &table.rows {
        let r = lua.create_table()?;
        for (i, cell) in row.iter().enumerate() {
            let v = match cell {
                Cell::Text(s) => Value::String(lua.create_string(s)?),
                Cell::Int(n) => Value::Integer(*n),
                Cell::Num(x, d) => {
                    decimals.set(table.columns[i].as_str(), *d)?;
                    Value::Number(*x)
                }
                Cell::Empty => Value::Boolean(false),
            };
            r.raw_set(i + 1, v)?;
        }
        rows.push(r)?;
    }
    t.set("rows", rows)?;
    t.set("decimals", decimals)?;
    t.set("notes", table.notes.clone())?;
    out.set("table", t)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use mlua::{Lua, Table};

    fn lua() -> Lua {
        let lua = Lua::new();
        super::super::register(&lua).unwrap();
        lua
    }

    const BASE: &str = r#"
        local base = arena.llm { name = "plain", model = "m", options = { legal_moves = false } }
        local listed = arena.llm { name = "listed", model = "m", options = { legal_moves = true } }
    "#;

    #[test]
    fn an_experiment_is_a_tournament_with_a_null_copy() {
        let lua = lua();
        let t: Table = lua
            .load(format!(
                "{BASE} return arena.experiment {{ name = 'x', baseline = base, variants = {{ listed }},
                   sprt = {{ elo1 = 40 }}, null = true, max_plies = 30 }}"
            ))
            .eval()
            .unwrap();
        assert_eq!(t.get::<String>("format").unwrap(), "experiment");
        assert_eq!(t.get::<u32>("max_plies").unwrap(), 30);
        assert!(t.get::<bool>("pair_seeds").unwrap());
        let players: Vec<Table> = t.get("players").unwrap();
        let names: Vec<String> = players.iter().map(|p| p.get("name").unwrap()).collect();
        assert_eq!(names, ["plain", "listed", "plain-null"]);
        // The copy shares no table with the baseline.
        let copy: Table = players[2].get("options").unwrap();
        let original: Table = players[0].get("options").unwrap();
        assert!(!copy.equals(&original).unwrap());
        assert!(!copy.get::<bool>("legal_moves").unwrap());
        let design: Table = t
            .get::<Table>("format_options")
            .unwrap()
            .get("experiment")
            .unwrap();
        assert_eq!(design.get::<String>("null").unwrap(), "plain-null");
    }

    #[test]
    fn unnamed_opponents_are_named_by_their_kind() {
        let lua = lua();
        let t: Table = lua
            .load(format!(
                "{BASE} return arena.experiment {{ name = 'x', baseline = base, variants = {{ listed }},
                   opponents = {{ arena.random {{}}, arena.random {{}}, arena.random {{ name = 'r' }} }},
                   sprt = {{ elo1 = 40 }} }}"
            ))
            .eval()
            .unwrap();
        let design: Table = t
            .get::<Table>("format_options")
            .unwrap()
            .get("experiment")
            .unwrap();
        let opponents: Vec<String> = design.get("opponents").unwrap();
        assert_eq!(opponents, ["random", "random-2", "r"]);
    }

    #[test]
    fn bad_experiments_say_why() {
        for (body, expected) in [
            (
                "baseline = base, variants = { listed }, players = {}",
                "`players`",
            ),
            (
                "variants = { listed }, sprt = { elo1 = 40 }",
                "no `baseline`",
            ),
            (
                "baseline = base, variants = {}, games = 10",
                "`variants` is empty",
            ),
            (
                "baseline = base, variants = { listed }, games = 10, sprt = { elo1 = 40 }",
                "not both",
            ),
            ("baseline = base, variants = { listed }, games = 7", "even"),
            (
                "baseline = base, variants = { listed }, sprt = { elo1 = 40, alfa = 0.1 }",
                "alfa",
            ),
        ] {
            let err = lua()
                .load(format!(
                    "{BASE} return arena.experiment {{ name = 'x', {body} }}"
                ))
                .eval::<Table>()
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{body}: {err}");
        }
    }
}
