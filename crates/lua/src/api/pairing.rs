//! `arena.pairing`: Swiss pairing systems for format scripts.
//!
//! `arena.pairing.dutch(t)` pairs the next round by the FIDE Dutch system (see
//! [`crate::pairing::dutch`]). Everything crosses as plain tables with 1-based player numbers;
//! the function is pure, so the format script keeps no pairing state. Unknown keys are errors
//! that name them; a round that no pairing can complete is not an error but an answer (`nil` and
//! the reason), which the format turns into its own stop.

use mlua::{IntoLuaMulti, Lua, Table, Value};

use crate::pairing::{self, Colour, PairingError, Player, RoundEntry, Tournament};

/// Scores cross as tenths of a point, the precision of a FIDE TRF file.
const UNITS: f64 = 10.0;

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let table = lua.create_table()?;
    table.set(
        "dutch",
        lua.create_function(|lua, t: Table| {
            let tournament = tournament_of(&t)?;
            let pairing = match pairing::pair_round(&tournament) {
                Ok(pairing) => pairing,
                // Not bad input but the rules' answer, which a format reports in its own way
                // (the Swiss format stops the tournament): nil and the reason, Lua's idiom for
                // an expected failure.
                Err(e @ PairingError::NoPairing { .. }) => {
                    return (Value::Nil, e.to_string()).into_lua_multi(lua);
                }
                Err(e) => return Err(mlua::Error::runtime(format!("arena.pairing.dutch: {e}"))),
            };
            let out = lua.create_table()?;
            let pairs = lua.create_table()?;
            for (white, black) in pairing.pairs {
                let pair = lua.create_table()?;
                pair.set("white", white + 1)?;
                pair.set("black", black + 1)?;
                pairs.push(pair)?;
            }
            out.set("pairs", pairs)?;
            out.set("bye", pairing.bye.map(|b| b + 1))?;
            out.into_lua_multi(lua)
        })?,
    )?;
    arena.set("pairing", table)
}

fn bad(message: String) -> mlua::Error {
    mlua::Error::runtime(format!("arena.pairing.dutch: {message}"))
}

fn check_keys(t: &Table, allowed: &[&str], what: &str) -> mlua::Result<()> {
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let known = matches!(&k, Value::String(s) if allowed.iter().any(|a| s.to_str().is_ok_and(|s| &*s == *a)))
            || (matches!(k, Value::Integer(_)) && allowed.is_empty());
        if !known {
            return Err(bad(format!(
                "{what}: unknown key {} (known: {})",
                match &k {
                    Value::String(s) => format!("`{}`", s.to_string_lossy()),
                    other => format!("{other:?}"),
                },
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

fn units(x: f64, what: &str) -> mlua::Result<u32> {
    let scaled = x * UNITS;
    if !(0.0..=1.0e6).contains(&scaled) || (scaled - scaled.round()).abs() > 1e-6 {
        return Err(bad(format!(
            "{what}: points must be a multiple of 0.1 from 0, got {x}"
        )));
    }
    Ok(scaled.round() as u32)
}

fn colour_of(s: &str, what: &str) -> mlua::Result<Colour> {
    match s {
        "white" => Ok(Colour::White),
        "black" => Ok(Colour::Black),
        other => Err(bad(format!(
            "{what}: colour must be \"white\" or \"black\", got {other:?}"
        ))),
    }
}

/// The tournament a script describes in `arena.pairing.dutch`'s table.
pub(crate) fn tournament_of(t: &Table) -> mlua::Result<Tournament> {
    check_keys(
        t,
        &["players", "rounds", "initial_colour", "forbidden", "points"],
        "the tournament",
    )?;
    let list: Table = t
        .get("players")
        .map_err(|_| bad("`players` must be a list of players".into()))?;
    let n = list.raw_len();
    let mut players = Vec::with_capacity(n);
    for i in 1..=n {
        let what = format!("player {i}");
        let p: Table = list
            .get(i)
            .map_err(|_| bad(format!("{what} must be a table")))?;
        check_keys(&p, &["rounds", "available"], &what)?;
        let available: Option<bool> = p.get("available")?;
        let rounds: Option<Table> = p.get("rounds")?;
        let mut entries = Vec::new();
        if let Some(rounds) = rounds {
            for r in 1..=rounds.raw_len() {
                let what = format!("player {i}, round {r}");
                let e: Table = rounds
                    .get(r)
                    .map_err(|_| bad(format!("{what} must be a table")))?;
                check_keys(&e, &["opponent", "colour", "points", "bye"], &what)?;
                let points = units(e.get::<Option<f64>>("points")?.unwrap_or(0.0), &what)?;
                let opponent: Option<usize> = e.get("opponent")?;
                let bye: Option<bool> = e.get("bye")?;
                let entry = match (opponent, bye) {
                    (Some(o), None | Some(false)) => {
                        if o == 0 || o > n || o == i {
                            return Err(bad(format!(
                                "{what}: opponent {o} is not another player (1 to {n})"
                            )));
                        }
                        let colour: String = e
                            .get("colour")
                            .map_err(|_| bad(format!("{what}: a played game needs `colour`")))?;
                        RoundEntry::Played {
                            opponent: o - 1,
                            colour: colour_of(&colour, &what)?,
                            points,
                        }
                    }
                    (None, Some(true)) => RoundEntry::PairingBye { points },
                    (None, None | Some(false)) => RoundEntry::Unplayed { points },
                    (Some(_), Some(true)) => {
                        return Err(bad(format!("{what}: a bye has no opponent")));
                    }
                };
                entries.push(entry);
            }
        }
        players.push(Player {
            rounds: entries,
            available: available.unwrap_or(true),
        });
    }
    let total_rounds: usize = t
        .get("rounds")
        .map_err(|_| bad("`rounds` must be the tournament's number of rounds".into()))?;
    let initial_colour = match t.get::<Option<String>>("initial_colour")? {
        Some(c) => colour_of(&c, "`initial_colour`")?,
        None => Colour::White,
    };
    let mut forbidden = Vec::new();
    if let Some(list) = t.get::<Option<Table>>("forbidden")? {
        for pair in list.sequence_values::<Table>() {
            let pair = pair?;
            let (a, b): (usize, usize) = (pair.get(1)?, pair.get(2)?);
            if a == 0 || b == 0 || a > n || b > n {
                return Err(bad(format!("`forbidden`: {{{a}, {b}}} names no player")));
            }
            forbidden.push((a - 1, b - 1));
        }
    }
    let (mut win, mut draw) = (10, 5);
    if let Some(points) = t.get::<Option<Table>>("points")? {
        check_keys(&points, &["win", "draw"], "`points`")?;
        if let Some(w) = points.get::<Option<f64>>("win")? {
            win = units(w, "`points.win`")?;
        }
        if let Some(d) = points.get::<Option<f64>>("draw")? {
            draw = units(d, "`points.draw`")?;
        }
    }
    Ok(Tournament {
        players,
        total_rounds,
        points_for_win: win,
        points_for_draw: draw,
        initial_colour,
        forbidden,
    })
}

#[cfg(test)]
mod tests {
    use mlua::Lua;

    fn lua() -> Lua {
        let lua = Lua::new();
        super::super::register(&lua).unwrap();
        lua
    }

    #[test]
    fn round_one_pairs_top_half_against_bottom_half_with_alternating_colours() {
        let lua = lua();
        let got: String = lua
            .load(
                r#"
                local r = arena.pairing.dutch{ players = { {}, {}, {}, {}, {} }, rounds = 3 }
                local out = {}
                for _, p in ipairs(r.pairs) do out[#out + 1] = p.white .. "-" .. p.black end
                return table.concat(out, " ") .. " bye " .. tostring(r.bye)
                "#,
            )
            .eval()
            .unwrap();
        assert_eq!(got, "1-3 4-2 bye 5");
    }

    #[test]
    fn a_round_no_pairing_completes_answers_nil_and_the_reason() {
        // Two players who have met have no second round: the rules' answer, not bad input.
        let lua = lua();
        let (pairs, reason): (mlua::Value, String) = lua
            .load(
                r#"return arena.pairing.dutch{ players = {
                    { rounds = { { opponent = 2, colour = "white", points = 1 } } },
                    { rounds = { { opponent = 1, colour = "black", points = 0 } } },
                }, rounds = 2 }"#,
            )
            .eval()
            .unwrap();
        assert!(pairs.is_nil());
        assert!(
            reason.contains("no pairing of round 2 keeps the absolute criteria"),
            "{reason}"
        );
    }

    #[test]
    fn bad_input_is_named() {
        let lua = lua();
        let err = lua
            .load(r#"return arena.pairing.dutch{ players = { { rounds = { { opponent = 9, colour = "white", points = 1 } } }, {} }, rounds = 2 }"#)
            .exec()
            .unwrap_err()
            .to_string();
        assert!(err.contains("player 1, round 1: opponent 9"), "{err}");
        let err = lua
            .load(r#"return arena.pairing.dutch{ players = {}, rounds = 2, colour = "white" }"#)
            .exec()
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown key `colour`"), "{err}");
    }
}
