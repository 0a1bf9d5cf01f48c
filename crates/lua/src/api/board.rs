//! `arena.board`: move extraction, legal moves and board renderings for prompt and parser scripts.
//!
//! Positions cross as FEN strings: a script never holds game state (Rust owns state, Lua owns
//! policy: see ARCHITECTURE.md). A FEN does not always tell a Chess960 position from a standard
//! one (start 518 is the standard array), so the functions take the game's variant
//! (`ctx.variant`) as an optional last argument; without it, a FEN whose castling rights only
//! Chess960 has (`HFhf`, or a king off the e-file with rights) is read as Chess960, any other as
//! standard chess.

use mlua::{Lua, Table, Value};
use shakmaty::{CastlingMode, Chess, fen::Fen};

use crate::{board::Variant, state};

use crate::board::{
    chessarena,
    notation::{
        ExtractRule, Notation, Pick, Scope, SearchRule, extract_move, judge_forbidden_reasoning,
    },
    render,
};

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let board = lua.create_table()?;
    board.set(
        "find_move",
        lua.create_function(
            |lua, (text, fen, rule, variant): (String, String, Value, Option<String>)| {
                let pos = position(&fen, variant.as_deref())?;
                let rule = extract_rule(&rule)?;
                let found = extract_move(&text, &pos, &rule);
                // The result is made with the memory limit lifted, as a `ctx` is: with a limit,
                // mlua guards each store into a table with a protected call (4 K instructions
                // per field, 2 % of the instructions per LLM ply for this one table).
                state::unmetered(lua, || -> mlua::Result<_> {
                    let result = lua.create_table_with_capacity(0, 3)?;
                    match found {
                        Ok(found) => {
                            result.raw_set("uci", found.uci)?;
                            result.raw_set("san", found.san)?;
                            result.raw_set("matched", found.matched)?;
                            Ok((Value::Table(result), Value::Nil))
                        }
                        Err(err) => {
                            result.raw_set("kind", err.kind.as_str())?;
                            result.raw_set("message", err.message)?;
                            result.raw_set("candidate", err.candidate)?;
                            Ok((Value::Nil, Value::Table(result)))
                        }
                    }
                })
                .map_err(mlua::Error::external)?
            },
        )?,
    )?;
    board.set(
        "legal_moves",
        lua.create_function(
            |_, (fen, notation, variant): (String, Option<String>, Option<String>)| {
                let pos = position(&fen, variant.as_deref())?;
                match notation.as_deref().unwrap_or("uci") {
                    "uci" => Ok(render::legal_uci(&pos)),
                    "san" => Ok(render::legal_san(&pos)),
                    other => Err(mlua::Error::runtime(format!(
                        "unknown notation `{other}` (expected \"uci\" or \"san\")"
                    ))),
                }
            },
        )?,
    )?;
    board.set(
        "render",
        lua.create_function(|_, (fen, style): (String, Option<String>)| {
            // A rendering shows the pieces only: read every FEN as Chess960, the wider rules.
            let pos = position(&fen, Some(Variant::Chess960.as_str()))?;
            match style.as_deref().unwrap_or("ascii") {
                "ascii" => Ok(render::ascii(&pos)),
                "unicode" => Ok(render::unicode(&pos)),
                "fen" => Ok(fen),
                other => Err(mlua::Error::runtime(format!(
                    "unknown board style `{other}` (expected \"ascii\", \"unicode\" or \"fen\")"
                ))),
            }
        })?,
    )?;
    board.set(
        "image",
        lua.create_function(|lua, (fen, options): (String, Option<Table>)| {
            let (size, options) = image_options(options)?;
            let png = crate::board::image::png(&fen, size, &options)
                .map_err(|e| mlua::Error::runtime(e.to_string()))?;
            let image = lua.create_table_with_capacity(0, 2)?;
            image.raw_set("media_type", crate::board::image::PNG_MEDIA_TYPE)?;
            image.raw_set("data", lua.create_string(&png)?)?;
            Ok(image)
        })?,
    )?;
    board.set(
        "forbidden_reasoning",
        lua.create_function(|_, (text, rule): (String, Option<String>)| {
            match rule.as_deref().unwrap_or("arena") {
                "arena" => Ok(judge_forbidden_reasoning(&text)),
                "chessarena" => Ok(chessarena::judge_thinking(&text)),
                other => Err(mlua::Error::runtime(format!(
                    "unknown reasoning rule `{other}` (expected \"chessarena\" or \"arena\")"
                ))),
            }
        })?,
    )?;
    arena.set("board", board)?;
    Ok(())
}

/// The position of `fen` in the variant named (`"standard"`, `"chess960"`), or, without a name,
/// in the variant its castling rights need.
fn position(fen: &str, variant: Option<&str>) -> mlua::Result<Chess> {
    let parsed: Fen = fen
        .parse()
        .map_err(|e| mlua::Error::runtime(format!("invalid FEN `{fen}`: {e}")))?;
    let mode = match variant {
        None => CastlingMode::detect(parsed.as_setup()),
        Some(name) => name
            .parse::<Variant>()
            .map_err(|e| {
                mlua::Error::runtime(format!("{e} (expected \"standard\" or \"chess960\")"))
            })?
            .castling_mode(),
    };
    parsed
        .into_position(mode)
        .map_err(|e| mlua::Error::runtime(format!("impossible position `{fen}`: {e}")))
}

/// The options of `arena.board.image`: `size` in pixels, `orientation` (`"white"`, `"black"`;
/// the side to move without it), `coordinates` (default true), `last_move` in UCI.
fn image_options(
    options: Option<Table>,
) -> mlua::Result<(u32, crate::board::diagram::DiagramOptions)> {
    use crate::board::{diagram::DiagramOptions, image::DEFAULT_SIZE};
    let mut diagram = DiagramOptions::default();
    let Some(options) = options else {
        return Ok((DEFAULT_SIZE, diagram));
    };
    for pair in options.pairs::<Value, Value>() {
        let (key, _) = pair?;
        let known = matches!(&key, Value::String(k)
            if ["size", "orientation", "coordinates", "last_move"].contains(&&*k.to_string_lossy()));
        if !known {
            return Err(mlua::Error::runtime(format!(
                "unknown board image option {} (expected size, orientation, coordinates, last_move)",
                match &key {
                    Value::String(k) => format!("`{}`", k.to_string_lossy()),
                    other => format!("of type {}", other.type_name()),
                }
            )));
        }
    }
    let size = options.get::<Option<u32>>("size")?.unwrap_or(DEFAULT_SIZE);
    diagram.orientation = match options.get::<Option<String>>("orientation")?.as_deref() {
        None => None,
        Some("white") => Some(shakmaty::Color::White),
        Some("black") => Some(shakmaty::Color::Black),
        Some(other) => {
            return Err(mlua::Error::runtime(format!(
                "board image `orientation` cannot be `{other}` (expected \"white\" or \"black\"; \
                 without it, the side to move is at the bottom)"
            )));
        }
    };
    if let Some(on) = options.get::<Option<bool>>("coordinates")? {
        diagram.coordinates = on;
    }
    diagram.last_move = options.get::<Option<String>>("last_move")?;
    Ok((size, diagram))
}

/// A rule by name (`"chessarena"`: ChessArena's reader; `"chessarena_any"`: the same, also
/// reading unfenced moves; `"tolerant"`) or as a table
/// `{pick = "first"|"last", scope = "fenced"|"tagged"|"fenced_or_tagged"|"anywhere", notations = {"uci", "san"}}`.
fn extract_rule(value: &Value) -> mlua::Result<ExtractRule> {
    match value {
        Value::Nil => Ok(ExtractRule::tolerant()),
        Value::String(name) => match &*name.to_str()? {
            "chessarena" => Ok(ExtractRule::chessarena()),
            "chessarena_any" => Ok(ExtractRule::ChessArena { any_move: true }),
            "tolerant" => Ok(ExtractRule::tolerant()),
            other => Err(mlua::Error::runtime(format!(
                "unknown parsing rule `{other}` (expected \"chessarena\", \"chessarena_any\", \"tolerant\" or a table)"
            ))),
        },
        Value::Table(t) => {
            for pair in t.pairs::<String, Value>() {
                let (key, _) = pair?;
                if !["pick", "scope", "notations"].contains(&key.as_str()) {
                    return Err(mlua::Error::runtime(format!(
                        "unknown parsing rule field `{key}` (expected pick, scope, notations)"
                    )));
                }
            }
            let pick = match t.get::<Option<String>>("pick")?.as_deref() {
                None | Some("last") => Pick::Last,
                Some("first") => Pick::First,
                Some(other) => return Err(bad("pick", other, "\"first\" or \"last\"")),
            };
            let scope = match t.get::<Option<String>>("scope")?.as_deref() {
                None | Some("fenced_or_tagged") => Scope::FencedOrTagged,
                Some("fenced") => Scope::Fenced,
                Some("tagged") => Scope::Tagged,
                Some("anywhere") => Scope::Anywhere,
                Some(other) => {
                    return Err(bad(
                        "scope",
                        other,
                        "\"fenced\", \"tagged\", \"fenced_or_tagged\" or \"anywhere\"",
                    ));
                }
            };
            let notations = match t.get::<Option<Vec<String>>>("notations")? {
                None => vec![Notation::Uci, Notation::San],
                Some(list) => list
                    .iter()
                    .map(|n| match n.as_str() {
                        "uci" => Ok(Notation::Uci),
                        "san" => Ok(Notation::San),
                        other => Err(bad("notations", other, "\"uci\" or \"san\"")),
                    })
                    .collect::<mlua::Result<_>>()?,
            };
            Ok(ExtractRule::Search(SearchRule {
                pick,
                scope,
                notations,
            }))
        }
        other => Err(mlua::Error::runtime(format!(
            "a parsing rule is a name or a table, not a {}",
            other.type_name()
        ))),
    }
}

fn bad(field: &str, value: &str, expected: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "parsing rule `{field}` cannot be `{value}` (expected {expected})"
    ))
}
