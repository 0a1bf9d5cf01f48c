//! `arena.rating.placement(rungs, games, options)`: where a player stands on a calibrated ladder
//! and what it plays next ([`crate::rating::placement`]), for the `placement` format; the same
//! stop as a freeze rule for other formats (`arena.rating.frozen(state, target)`); and the part
//! of `arena.tournament{}` that gives a placement its rungs as players.
//!
//! `rungs` is `"ladder"` (the built-in calibration) or a list of `{ name, elo, se }`; `games` a
//! list of the player's finished games `{ rung = NAME, score = 1 | 0.5 | 0, color = "white" |
//! "black" }`; `options` `{ target, max_games, start_elo, white_advantage }`. The answer:
//! `{ next = RUNG | nil, stop = "target" | "max_games" | "below_ladder" | "above_ladder" | nil,
//! games, estimate, with_ladder, rungs_played }`, the estimates as `arena.rating.elo.estimate`
//! returns them, `rungs_played` a list of `{ name, games }` in ladder order.

use mlua::{Lua, Table, Value};

use super::rating::{check_keys, estimate_table, lua_error, required};
use crate::rating::{
    calibration::Calibration,
    elo_anchor::{self, AnchorGame, Color, WHITE_ADVANTAGE},
    placement::{self, Next, PlacementConfig, PlacementGame, Rung},
};

/// The built-in book a placement's pairs open from when the script names no openings: two moves
/// a side, so every pair starts from a position of its own.
const DEFAULT_BOOK: &str = "2moves_v1";

/// How many of its openings a placement draws (in the seed's random order).
const DEFAULT_OPENINGS: u32 = 2000;

/// The `format_options` keys of the `placement` format.
const OPTIONS: [&str; 4] = ["rungs", "target", "max_games", "start_elo"];

pub(super) fn register(lua: &Lua, rating: &Table) -> mlua::Result<()> {
    rating.set("frozen", lua.create_function(frozen)?)?;
    rating.set(
        "placement",
        lua.create_function(|lua, (rungs, games, opts): (Value, Table, Option<Table>)| {
            let rungs = rung_list(&rungs)?;
            let games = game_list(&games, &rungs)?;
            let config = config(opts.as_ref())?;
            let placed = placement::place(&rungs, &games, &config).map_err(lua_error)?;
            let t = lua.create_table()?;
            match placed.next {
                Next::Pair(rung) => t.set("next", rungs[rung].name.as_str())?,
                Next::Stop(stop) => t.set("stop", stop.name())?,
            }
            t.set("games", placed.games)?;
            if let Some(e) = &placed.estimate {
                t.set("estimate", estimate_table(lua, e)?)?;
            }
            if let Some(e) = &placed.with_ladder {
                t.set("with_ladder", estimate_table(lua, e)?)?;
            }
            let played = lua.create_table()?;
            for (rung, n) in rungs.iter().zip(&placed.games_per_rung) {
                if *n > 0 {
                    let row = lua.create_table()?;
                    row.set("name", rung.name.as_str())?;
                    row.set("games", *n)?;
                    played.push(row)?;
                }
            }
            t.set("rungs_played", played)?;
            Ok(t)
        })?,
    )
}

/// `arena.rating.frozen(state, target)`: the players of a format's `state` that a freeze rule
/// stops: every player without an `anchor_elo` whose Elo against the players with one (LLM Chess's
/// estimate, colour per game, the anchors' Elo taken as exact, as a placement takes its rungs)
/// has a 95% half-width of at most `target`. A name-to-true table; anchors are never frozen.
fn frozen(lua: &Lua, (state, target): (Table, f64)) -> mlua::Result<Table> {
    if !(target.is_finite() && target > 0.0) {
        return Err(mlua::Error::runtime(format!(
            "arena.rating.frozen: target must be a positive number of Elo, not {target}"
        )));
    }
    let anchors: std::collections::BTreeMap<String, f64> = state
        .get::<Option<Table>>("ratings")?
        .map(|t| t.pairs::<String, f64>().collect::<mlua::Result<_>>())
        .transpose()?
        .unwrap_or_default();
    let mut games: std::collections::BTreeMap<String, Vec<AnchorGame>> = Default::default();
    for game in state.get::<Table>("games")?.sequence_values::<Table>() {
        let game = game?;
        let (white, black): (String, String) = (game.get("white")?, game.get("black")?);
        let Some(result) = game.get::<Option<String>>("result")? else {
            continue;
        };
        let white_points = match result.as_str() {
            "1-0" => 1.0,
            "0-1" => 0.0,
            "1/2-1/2" => 0.5,
            _ => continue, // a void game counts for nobody
        };
        for (player, opponent, color, score) in [
            (&white, &black, Color::White, white_points),
            (&black, &white, Color::Black, 1.0 - white_points),
        ] {
            if let (false, Some(&opponent_elo)) =
                (anchors.contains_key(player), anchors.get(opponent))
            {
                games.entry(player.clone()).or_default().push(AnchorGame {
                    opponent_elo,
                    color,
                    score,
                    opponent_se: 0.0,
                });
            }
        }
    }
    let out = lua.create_table()?;
    for (player, games) in games {
        let blocks = elo_anchor::blocks_from_games(&games, WHITE_ADVANTAGE).map_err(lua_error)?;
        let estimate = elo_anchor::estimate(&blocks).map_err(lua_error)?;
        if estimate.margin95().is_some_and(|m| m <= target) {
            out.set(player, true)?;
        }
    }
    Ok(out)
}

/// The built-in ladder's rungs, weakest first, each with its error relative to the anchor
/// (the ladder's own scale, on which a placement is made).
fn builtin_rungs() -> Vec<Rung> {
    Calibration::builtin()
        .rungs
        .iter()
        .map(|r| Rung {
            name: r.name.clone(),
            elo: r.elo,
            se: r.se,
        })
        .collect()
}

fn rung_list(rungs: &Value) -> mlua::Result<Vec<Rung>> {
    match rungs {
        Value::String(s) if s.as_bytes() == b"ladder" => Ok(builtin_rungs()),
        Value::Table(list) => {
            let mut out = Vec::new();
            for (i, rung) in list.sequence_values::<Table>().enumerate() {
                let rung = rung?;
                let what = format!("placement rung {}", i + 1);
                check_keys(&rung, &what, &["name", "elo", "se"])?;
                out.push(Rung {
                    name: required(rung.get("name")?, &what, "name")?,
                    elo: required(rung.get("elo")?, &what, "elo")?,
                    se: rung.get::<Option<f64>>("se")?.unwrap_or(0.0),
                });
            }
            Ok(out)
        }
        _ => Err(mlua::Error::runtime(
            "placement: `rungs` must be \"ladder\" or a list of { name, elo, se }",
        )),
    }
}

fn game_list(games: &Table, rungs: &[Rung]) -> mlua::Result<Vec<PlacementGame>> {
    let mut out = Vec::new();
    for (i, game) in games.sequence_values::<Table>().enumerate() {
        let game = game?;
        let what = format!("placement game {}", i + 1);
        check_keys(&game, &what, &["rung", "score", "color"])?;
        let name: String = required(game.get("rung")?, &what, "rung")?;
        let rung = rungs
            .iter()
            .position(|r| r.name == name)
            .ok_or_else(|| mlua::Error::runtime(format!("{what}: `{name}` is not a rung")))?;
        let color = match required::<String>(game.get("color")?, &what, "color")?.as_str() {
            "white" => Color::White,
            "black" => Color::Black,
            other => {
                return Err(mlua::Error::runtime(format!(
                    "{what}: unknown color `{other}` (expected \"white\" or \"black\")"
                )));
            }
        };
        out.push(PlacementGame {
            rung,
            score: required(game.get("score")?, &what, "score")?,
            color,
        });
    }
    Ok(out)
}

fn config(opts: Option<&Table>) -> mlua::Result<PlacementConfig> {
    let mut config = PlacementConfig::new(50.0, 400);
    let Some(opts) = opts else {
        return Ok(config);
    };
    check_keys(
        opts,
        "placement options",
        &["target", "max_games", "start_elo", "white_advantage"],
    )?;
    if let Some(target) = opts.get::<Option<f64>>("target")? {
        config.target = target;
    }
    if let Some(max) = opts.get::<Option<u32>>("max_games")? {
        config.max_games = max;
    }
    config.start_elo = opts.get::<Option<f64>>("start_elo")?;
    config.white_advantage = opts
        .get::<Option<f64>>("white_advantage")?
        .unwrap_or(WHITE_ADVANTAGE);
    Ok(config)
}

/// For `arena.tournament{}` of `format = "placement"`: adds the rungs to `players` (the built-in
/// ladder's rungs as `arena.ladder(name)` makes them, or the players given in
/// `format_options.rungs`), writes `format_options.rungs` as the list of `{ name, elo, se }` the
/// format reads, and, when the script gives no `openings`, draws them from a built-in book. A
/// rung already among the players (by name) is not added twice.
///
/// # Errors
/// Options that are not a table, a rung player without a name or an `anchor_elo`.
pub(super) fn add_rungs(lua: &Lua, tournament: &Table) -> mlua::Result<()> {
    if tournament.get::<Option<String>>("format")?.as_deref() != Some("placement") {
        return Ok(());
    }
    let options: Table = match tournament.get::<Value>("format_options")? {
        Value::Nil => {
            let t = lua.create_table()?;
            tournament.set("format_options", &t)?;
            t
        }
        Value::Table(t) => t,
        _ => {
            return Err(mlua::Error::runtime(
                "placement: `format_options` must be a table",
            ));
        }
    };
    check_keys(&options, "placement format_options", &OPTIONS)?;
    let players: Table = match tournament.get::<Value>("players")? {
        Value::Table(t) => t,
        _ => {
            return Err(mlua::Error::runtime(
                "placement: `players` must list the models to place",
            ));
        }
    };
    let present = |name: &str| -> mlua::Result<bool> {
        for player in players.sequence_values::<Table>() {
            if player?.get::<Option<String>>("name")?.as_deref() == Some(name) {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let rungs = lua.create_table()?;
    match options.get::<Value>("rungs")? {
        Value::Nil => add_builtin(lua, &players, &rungs, &present)?,
        Value::String(s) if s.as_bytes() == b"ladder" => {
            add_builtin(lua, &players, &rungs, &present)?;
        }
        Value::Table(given) => {
            for (i, player) in given.sequence_values::<Table>().enumerate() {
                let player = player?;
                let what = format!("placement: rung {}", i + 1);
                let name: String = required(player.get("name")?, &what, "name")?;
                let elo: f64 = required(
                    player.get("anchor_elo")?,
                    &format!("{what} (`{name}`)"),
                    "anchor_elo",
                )?;
                let se = player.get::<Option<f64>>("anchor_se")?.unwrap_or(0.0);
                rungs.push(rung_table(lua, &name, elo, se)?)?;
                if !present(&name)? {
                    players.push(player)?;
                }
            }
        }
        _ => {
            return Err(mlua::Error::runtime(
                "placement: `rungs` must be \"ladder\" or a list of players with `anchor_elo`",
            ));
        }
    }
    options.set("rungs", rungs)?;
    // Each pair plays a fresh opening: without a book of the script's own, a built-in one (the
    // rungs are deterministic engines, whose games from one position would all be the same).
    if tournament.get::<Value>("openings")?.is_nil() {
        let openings = lua.create_table()?;
        openings.set("book", DEFAULT_BOOK)?;
        openings.set("order", "random")?;
        openings.set("count", DEFAULT_OPENINGS)?;
        tournament.set("openings", openings)?;
    }
    Ok(())
}

/// Adds every built-in rung (as `arena.ladder(name)` makes it) to `players` and to `rungs`.
fn add_builtin(
    lua: &Lua,
    players: &Table,
    rungs: &Table,
    present: &dyn Fn(&str) -> mlua::Result<bool>,
) -> mlua::Result<()> {
    for rung in builtin_rungs() {
        rungs.push(rung_table(lua, &rung.name, rung.elo, rung.se)?)?;
        if !present(&rung.name)? {
            players.push(super::ladder::rung_player(lua, &rung.name)?)?;
        }
    }
    Ok(())
}

fn rung_table(lua: &Lua, name: &str, elo: f64, se: f64) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("name", name)?;
    t.set("elo", elo)?;
    t.set("se", se)?;
    Ok(t)
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
    fn a_placement_answers_with_the_next_rung_and_then_a_stop() {
        let lua = lua();
        let first: Table = lua
            .load(r#"return arena.rating.placement("ladder", {}, { target = 100 })"#)
            .eval()
            .unwrap();
        let next: String = first.get("next").unwrap();
        assert!(Calibration::builtin().rung(&next).is_some(), "{next}");
        assert_eq!(first.get::<u32>("games").unwrap(), 0);
        // Forty even games against that rung: the estimate is its Elo, within ± 100.
        let stopped: Table = lua
            .load(format!(
                r#"local games = {{}}
                   for i = 1, 40 do
                     games[i] = {{ rung = {next:?}, score = i % 2, color = i % 2 == 0 and "white" or "black" }}
                   end
                   return arena.rating.placement("ladder", games, {{ target = 200 }})"#
            ))
            .eval()
            .unwrap();
        assert_eq!(stopped.get::<String>("stop").unwrap(), "target");
        let estimate: Table = stopped.get("estimate").unwrap();
        assert!(estimate.get::<f64>("margin95").unwrap() <= 200.0);
        let played: Table = stopped.get("rungs_played").unwrap();
        let row: Table = played.get(1).unwrap();
        assert_eq!(row.get::<String>("name").unwrap(), next);
        assert_eq!(row.get::<u32>("games").unwrap(), 40);
    }

    #[test]
    fn bad_input_names_what_is_wrong() {
        let lua = lua();
        for (script, message) in [
            (
                r#"arena.rating.placement("ladder", {{ rung = "nope", score = 1, color = "white" }})"#,
                "`nope` is not a rung",
            ),
            (
                r#"arena.rating.placement("ladder", {}, { targte = 50 })"#,
                "unknown key `targte`",
            ),
            (
                r#"arena.rating.placement("ladder", {}, { target = -5 })"#,
                "target",
            ),
            (r#"arena.rating.placement(3, {})"#, "`rungs` must be"),
        ] {
            let err = lua.load(script).exec().unwrap_err().to_string();
            assert!(err.contains(message), "{script}: {err}");
        }
    }

    #[test]
    fn a_placement_tournament_gets_the_ladder_as_players() {
        let lua = lua();
        let t: Table = lua
            .load(
                r#"return arena.tournament {
                     name = "p", format = "placement",
                     players = { arena.random { name = "model" }, arena.ladder("mix50") },
                     format_options = { target = 65 },
                   }"#,
            )
            .eval()
            .unwrap();
        let players: Table = t.get("players").unwrap();
        let rungs = &Calibration::builtin().rungs;
        // The model, then every rung once (mix50 was given already).
        assert_eq!(players.raw_len(), 1 + rungs.len());
        let options: Table = t.get::<Table>("format_options").unwrap();
        let listed: Table = options.get("rungs").unwrap();
        assert_eq!(listed.raw_len(), rungs.len());
        let first: Table = listed.get(1).unwrap();
        assert_eq!(first.get::<String>("name").unwrap(), rungs[0].name);
        assert_eq!(first.get::<f64>("se").unwrap(), rungs[0].se);
        // No openings given: a fresh one per pair from the built-in book.
        let openings: Table = t.get("openings").unwrap();
        assert_eq!(openings.get::<String>("book").unwrap(), super::DEFAULT_BOOK);
    }
}
