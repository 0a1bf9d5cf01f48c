//! `arena.rating`: Glicko-1, matchmaking and the anchored Elo estimate for format and report scripts.
//!
//! Everything crosses as plain tables (ratings as `{rating = …, rd = …}`) and every function is pure:
//! scripts pass in what they know and get numbers back, so no rating state lives in Lua.
//! Option tables are checked strictly; an unknown key is an error that names it.

use std::collections::BTreeMap;

use mlua::{Lua, Table, Value};
use rand::{SeedableRng, rngs::StdRng};

use crate::rating::{
    RatingError,
    elo_anchor::{self, Block, Color, EloEstimate, WHITE_ADVANTAGE},
    glicko::{self, Compat, GameResult, GlickoConfig, Rating},
    matchmaking::{self, Criterion, DEFAULT_TOP_K},
};

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let rating = lua.create_table()?;

    let glicko_table = lua.create_table()?;
    glicko_table.set(
        "update",
        lua.create_function(
            |lua, (white, black, score, opts): (Table, Table, f64, Option<Table>)| {
                let cfg = glicko_config(opts.as_ref())?;
                let (white, black) = (rating_of(&white, "white")?, rating_of(&black, "black")?);
                let (white, black) =
                    glicko::update(white, black, score, &cfg).map_err(lua_error)?;
                Ok((rating_table(lua, white)?, rating_table(lua, black)?))
            },
        )?,
    )?;
    glicko_table.set(
        "rate",
        lua.create_function(|lua, (games, opts): (Table, Option<Table>)| {
            let cfg = glicko_config(opts.as_ref())?;
            let games = game_list(&games)?;
            let ratings = glicko::rate_games(&games, &cfg).map_err(lua_error)?;
            let players = lua.create_table()?;
            for (name, player) in ratings.players() {
                let entry = rating_table(lua, player.current())?;
                entry.set("games", player.games)?;
                let history = lua.create_table()?;
                for step in &player.history {
                    let row = lua.create_table()?;
                    row.set("rating", step.rating)?;
                    row.set("rd", step.rd)?;
                    row.set("opponent", step.opponent.as_str())?;
                    row.set("score", step.score)?;
                    history.push(row)?;
                }
                entry.set("history", history)?;
                players.set(name, entry)?;
            }
            let ranking = lua.create_table()?;
            for (name, _) in ratings.leaderboard(f64::INFINITY) {
                ranking.push(name)?;
            }
            let result = lua.create_table()?;
            result.set("players", players)?;
            result.set("ranking", ranking)?;
            Ok(result)
        })?,
    )?;
    rating.set("glicko", glicko_table)?;

    let elo = lua.create_table()?;
    elo.set(
        "estimate",
        lua.create_function(|lua, (blocks, opts): (Table, Option<Table>)| {
            let white_advantage = match &opts {
                Some(opts) => {
                    check_keys(opts, "elo.estimate options", &["white_advantage"])?;
                    opts.get::<Option<f64>>("white_advantage")?
                        .unwrap_or(WHITE_ADVANTAGE)
                }
                None => WHITE_ADVANTAGE,
            };
            let blocks = block_list(&blocks, white_advantage)?;
            let estimate = elo_anchor::estimate(&blocks).map_err(lua_error)?;
            estimate_table(lua, &estimate)
        })?,
    )?;
    elo.set(
        "win_loss",
        lua.create_function(|lua, (wins, draws, losses): (u32, u32, u32)| {
            let wl = elo_anchor::win_loss(wins, draws, losses).map_err(lua_error)?;
            let t = lua.create_table()?;
            t.set("raw", wl.raw)?;
            t.set("raw_margin95", wl.raw_margin95)?;
            t.set("normalised", wl.normalised)?;
            t.set("normalised_margin95", wl.normalised_margin95)?;
            Ok(t)
        })?,
    )?;
    rating.set("elo", elo)?;

    rating.set(
        "rank_opponents",
        lua.create_function(
            |lua, (player, candidates, ratings, opts): (String, Vec<String>, Table, Option<Table>)| {
                let (criterion, _, _) = pick_options(opts.as_ref())?;
                let ratings = rating_map(&ratings)?;
                let ranked = matchmaking::rank_opponents(&player, &candidates, &ratings, criterion)
                    .map_err(lua_error)?;
                let list = lua.create_table()?;
                for (name, value) in ranked {
                    let row = lua.create_table()?;
                    row.set("name", name)?;
                    row.set("value", value)?;
                    list.push(row)?;
                }
                Ok(list)
            },
        )?,
    )?;
    rating.set(
        "pick_opponent",
        lua.create_function(
            |_, (player, candidates, ratings, opts): (String, Vec<String>, Table, Option<Table>)| {
                let (criterion, top_k, seed) = pick_options(opts.as_ref())?;
                let ratings = rating_map(&ratings)?;
                let pick = match seed {
                    Some(seed) => matchmaking::pick_opponent(
                        &player,
                        &candidates,
                        &ratings,
                        criterion,
                        top_k,
                        &mut StdRng::seed_from_u64(seed),
                    ),
                    None => matchmaking::pick_opponent(
                        &player,
                        &candidates,
                        &ratings,
                        criterion,
                        top_k,
                        &mut rand::rng(),
                    ),
                };
                pick.map_err(lua_error)
            },
        )?,
    )?;

    super::placement::register(lua, &rating)?;
    arena.set("rating", rating)?;
    Ok(())
}

pub(super) fn lua_error(err: RatingError) -> mlua::Error {
    mlua::Error::runtime(err.to_string())
}

/// Rejects keys a script did not mean: a misspelt option silently ignored skews every rating.
pub(super) fn check_keys(table: &Table, what: &str, allowed: &[&str]) -> mlua::Result<()> {
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair?;
        let known = match &key {
            Value::String(s) => allowed.iter().any(|a| s.as_bytes() == a.as_bytes()),
            _ => false,
        };
        if !known {
            let key = key
                .to_string()
                .unwrap_or_else(|_| key.type_name().to_owned());
            return Err(mlua::Error::runtime(format!(
                "{what}: unknown key `{key}` (expected {})",
                allowed.join(", ")
            )));
        }
    }
    Ok(())
}

/// A field a script must give; the error names the table and the key.
pub(super) fn required<T>(value: Option<T>, what: &str, key: &str) -> mlua::Result<T> {
    value.ok_or_else(|| mlua::Error::runtime(format!("{what}: `{key}` is missing")))
}

fn glicko_config(opts: Option<&Table>) -> mlua::Result<GlickoConfig> {
    let mut cfg = GlickoConfig::default();
    let Some(opts) = opts else {
        return Ok(cfg);
    };
    check_keys(
        opts,
        "glicko options",
        &["initial_rating", "initial_rd", "min_rd", "compat"],
    )?;
    if let Some(v) = opts.get::<Option<f64>>("initial_rating")? {
        cfg.initial_rating = v;
    }
    if let Some(v) = opts.get::<Option<f64>>("initial_rd")? {
        cfg.initial_rd = v;
    }
    if let Some(v) = opts.get::<Option<f64>>("min_rd")? {
        cfg.min_rd = v;
    }
    cfg.compat = match opts.get::<Option<String>>("compat")?.as_deref() {
        None | Some("correct") => Compat::Correct,
        Some("chessarena") => Compat::ChessArena,
        Some(other) => {
            return Err(mlua::Error::runtime(format!(
                "unknown glicko compat `{other}` (expected \"correct\" or \"chessarena\")"
            )));
        }
    };
    cfg.validate().map_err(lua_error)?;
    Ok(cfg)
}

fn rating_of(table: &Table, what: &str) -> mlua::Result<Rating> {
    check_keys(table, what, &["rating", "rd", "low", "high"])?;
    Ok(Rating::new(
        required(table.get("rating")?, what, "rating")?,
        required(table.get("rd")?, what, "rd")?,
    ))
}

fn rating_table(lua: &Lua, rating: Rating) -> mlua::Result<Table> {
    let (low, high) = glicko::interval95(&rating);
    let t = lua.create_table()?;
    t.set("rating", rating.rating)?;
    t.set("rd", rating.rd)?;
    t.set("low", low)?;
    t.set("high", high)?;
    Ok(t)
}

fn rating_map(ratings: &Table) -> mlua::Result<BTreeMap<String, Rating>> {
    let mut map = BTreeMap::new();
    for pair in ratings.pairs::<String, Table>() {
        let (name, table) = pair?;
        let rating = rating_of(&table, &format!("rating of `{name}`"))?;
        map.insert(name, rating);
    }
    Ok(map)
}

fn game_list(games: &Table) -> mlua::Result<Vec<GameResult>> {
    let mut list = Vec::new();
    for (i, game) in games.sequence_values::<Table>().enumerate() {
        let game = game?;
        let what = format!("game {}", i + 1);
        check_keys(&game, &what, &["white", "black", "score"])?;
        list.push(GameResult {
            white: required(game.get("white")?, &what, "white")?,
            black: required(game.get("black")?, &what, "black")?,
            score_white: required(game.get("score")?, &what, "score")?,
        });
    }
    Ok(list)
}

fn block_list(blocks: &Table, white_advantage: f64) -> mlua::Result<Vec<Block>> {
    let mut list = Vec::new();
    for (i, block) in blocks.sequence_values::<Table>().enumerate() {
        let block = block?;
        let what = format!("block {}", i + 1);
        check_keys(
            &block,
            &what,
            &[
                "opponent_elo",
                "wins",
                "draws",
                "losses",
                "color",
                "color_shift",
                "opponent_se",
            ],
        )?;
        let opponent_elo = required(block.get("opponent_elo")?, &what, "opponent_elo")?;
        let count =
            |key: &str| -> mlua::Result<u32> { Ok(block.get::<Option<u32>>(key)?.unwrap_or(0)) };
        let mut parsed = Block::new(
            opponent_elo,
            count("wins")?,
            count("draws")?,
            count("losses")?,
        );
        let color = block.get::<Option<String>>("color")?;
        let shift = block.get::<Option<f64>>("color_shift")?;
        parsed = match (color.as_deref(), shift) {
            (Some(_), Some(_)) => {
                return Err(mlua::Error::runtime(format!(
                    "{what}: give `color` or `color_shift`, not both"
                )));
            }
            (Some("white"), None) => parsed.played_as(Color::White, white_advantage),
            (Some("black"), None) => parsed.played_as(Color::Black, white_advantage),
            (Some(other), None) => {
                return Err(mlua::Error::runtime(format!(
                    "{what}: unknown color `{other}` (expected \"white\" or \"black\")"
                )));
            }
            (None, Some(shift)) => parsed.with_color_shift(shift),
            (None, None) => parsed,
        };
        // A calibrated opponent (`arena.ladder(...)`'s `anchor_se`): its error widens the interval.
        if let Some(se) = block.get::<Option<f64>>("opponent_se")? {
            parsed = parsed.with_opponent_se(se);
        }
        list.push(parsed);
    }
    Ok(list)
}

pub(super) fn estimate_table(lua: &Lua, estimate: &EloEstimate) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let kind = match estimate {
        EloEstimate::Point { .. } => "point",
        EloEstimate::AtLeast { .. } => "at_least",
        EloEstimate::AtMost { .. } => "at_most",
    };
    t.set("kind", kind)?;
    t.set("elo", estimate.elo())?;
    t.set("se", estimate.se())?;
    t.set("margin95", estimate.margin95())?;
    t.set("lower95", estimate.lower95())?;
    t.set("upper95", estimate.upper95())?;
    Ok(t)
}

fn pick_options(opts: Option<&Table>) -> mlua::Result<(Criterion, usize, Option<u64>)> {
    let Some(opts) = opts else {
        return Ok((Criterion::default(), DEFAULT_TOP_K, None));
    };
    check_keys(opts, "matchmaking options", &["criterion", "top_k", "seed"])?;
    let criterion = match opts.get::<Option<String>>("criterion")?.as_deref() {
        None | Some("chessarena") => Criterion::ChessArena,
        Some("pair_score") => Criterion::PairScore,
        Some(other) => {
            return Err(mlua::Error::runtime(format!(
                "unknown matchmaking criterion `{other}` (expected \"chessarena\" or \"pair_score\")"
            )));
        }
    };
    let top_k = opts.get::<Option<usize>>("top_k")?.unwrap_or(DEFAULT_TOP_K);
    Ok((criterion, top_k, opts.get::<Option<u64>>("seed")?))
}

#[cfg(test)]
mod tests {
    use mlua::Lua;

    fn lua() -> Lua {
        let lua = Lua::new();
        let arena = lua.create_table().unwrap();
        super::register(&lua, &arena).unwrap();
        lua.globals().set("arena", arena).unwrap();
        lua
    }

    fn run(lua: &Lua, code: &str) {
        if let Err(e) = lua.load(code).exec() {
            panic!("{e}");
        }
    }

    fn error_of(lua: &Lua, code: &str) -> String {
        match lua.load(code).exec() {
            Ok(()) => panic!("expected an error from {code}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn glicko_update_and_rate() {
        let lua = lua();
        run(
            &lua,
            r#"
            local fresh = { rating = 1500, rd = 350 }
            local w, b = arena.rating.glicko.update(fresh, fresh, 1)
            assert(math.abs(w.rating - 1662.2120026057648) < 1e-9, w.rating)
            assert(math.abs(w.rating + b.rating - 3000) < 1e-9)
            assert(w.rd == b.rd and w.rd < 350)
            assert(math.abs(w.high - w.rating - 1.96 * w.rd) < 1e-9)
            local cw = arena.rating.glicko.update(fresh, fresh, 1, { compat = "chessarena" })
            assert(cw.rating == 1500, "the bug keeps white's rating")

            local r = arena.rating.glicko.rate({
                { white = "a", black = "b", score = 1 },
                { white = "b", black = "c", score = 0.5 },
                { white = "c", black = "a", score = 0 },
            })
            assert(r.ranking[1] == "a", r.ranking[1])
            assert(r.players.a.games == 2 and #r.players.a.history == 2)
            assert(r.players.a.history[2].opponent == "c")
            assert(r.players.b.rd < 350)
            "#,
        );
        let err = error_of(
            &lua,
            r#"arena.rating.glicko.update({rating=1500, rd=350}, {rating=1500, rd=350}, 1, {min_RD=10})"#,
        );
        assert!(err.contains("unknown key `min_RD`"), "{err}");
        let err = error_of(
            &lua,
            r#"arena.rating.glicko.rate({{ white = "a", black = "a", score = 1 }})"#,
        );
        assert!(
            err.contains("player `a` cannot play against itself"),
            "{err}"
        );
        let err = error_of(
            &lua,
            r#"arena.rating.glicko.update({rating=1500}, {rating=1500, rd=350}, 1)"#,
        );
        assert!(err.contains("white: `rd` is missing"), "{err}");
    }

    #[test]
    fn elo_estimate_and_win_loss() {
        let lua = lua();
        run(
            &lua,
            r#"
            local e = arena.rating.elo.estimate({
                { opponent_elo = 250, wins = 1, draws = 175, losses = 824, color = "white" },
                { opponent_elo = 375, wins = 1, draws = 150, losses = 849, color = "white" },
                { opponent_elo = 500, wins = 1, draws = 100, losses = 899, color = "white" },
                { opponent_elo = 625, wins = 0, draws = 49, losses = 951, color = "white" },
            })
            assert(e.kind == "point")
            assert(string.format("%.2f %.2f", e.elo, e.margin95) == "-122.27 23.03", e.elo)
            assert(math.abs(e.lower95 - (e.elo - e.margin95)) < 1e-9)

            local shifted = arena.rating.elo.estimate(
                { { opponent_elo = 1000, wins = 3, losses = 1, color = "black" } },
                { white_advantage = 0 })
            assert(math.abs(shifted.elo - (1000 + 400 * math.log(3, 10))) < 1e-6)

            -- One opponent: its own error adds in quadrature to the games' error.
            local exact = arena.rating.elo.estimate({ { opponent_elo = 1000, wins = 3, losses = 1 } })
            local fuzzy = arena.rating.elo.estimate(
                { { opponent_elo = 1000, wins = 3, losses = 1, opponent_se = 30 } })
            assert(fuzzy.elo == exact.elo)
            assert(math.abs(fuzzy.se - math.sqrt(exact.se ^ 2 + 900)) < 1e-9)

            local sweep = arena.rating.elo.estimate({ { opponent_elo = 1000, wins = 10 } })
            assert(sweep.kind == "at_least" and sweep.elo == nil and sweep.upper95 == nil)
            assert(sweep.lower95 > 1000)

            local wl = arena.rating.elo.win_loss(6, 2, 2)
            assert(math.abs(wl.raw - 0.4) < 1e-12 and math.abs(wl.normalised - 0.7) < 1e-12)
            assert(math.abs(wl.raw_margin95 - 2 * wl.normalised_margin95) < 1e-12)
            "#,
        );
        let err = error_of(
            &lua,
            r#"arena.rating.elo.estimate({ { opponent_elo = 1000, wins = 1, color = "red" } })"#,
        );
        assert!(err.contains("block 1: unknown color `red`"), "{err}");
        let err = error_of(&lua, r#"arena.rating.elo.estimate({})"#);
        assert!(err.contains("no games to rate"), "{err}");
    }

    #[test]
    fn matchmaking_ranks_and_picks() {
        let lua = lua();
        run(
            &lua,
            r#"
            local ratings = {
                me = { rating = 1500, rd = 300 },
                twin = { rating = 1500, rd = 50 },
                near = { rating = 1600, rd = 50 },
                mid = { rating = 1800, rd = 50 },
                far = { rating = 2600, rd = 50 },
            }
            local names = { "far", "mid", "near", "twin", "me" }
            local ranked = arena.rating.rank_opponents("me", names, ratings)
            assert(#ranked == 4 and ranked[1].name == "twin" and ranked[4].name == "far")
            assert(ranked[1].value < ranked[2].value, "d² ascending")
            local paper = arena.rating.rank_opponents("me", names, ratings, { criterion = "pair_score" })
            assert(paper[1].name == "twin" and paper[1].value > paper[2].value)

            local seen = {}
            for seed = 1, 60 do
                local pick = arena.rating.pick_opponent("me", names, ratings, { seed = seed })
                seen[pick] = true
            end
            assert(seen.twin and seen.near and seen.mid and not seen.far)
            local a = arena.rating.pick_opponent("me", names, ratings, { seed = 5, top_k = 2 })
            local b = arena.rating.pick_opponent("me", names, ratings, { seed = 5, top_k = 2 })
            assert(a == b and (a == "twin" or a == "near"))
            assert(arena.rating.pick_opponent("me", { "me" }, ratings) == nil)
            "#,
        );
        let err = error_of(
            &lua,
            r#"arena.rating.pick_opponent("me", {"ghost"}, { me = { rating = 1500, rd = 350 } })"#,
        );
        assert!(err.contains("player `ghost` has no rating"), "{err}");
    }
}
