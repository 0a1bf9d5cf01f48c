//! `arena.eval`: the answer readers of the fine-grained evaluation tasks, for task scripts.
//!
//! - `json_answer(text, rule)`: the JSON object a basic-understanding reply ends with, or nil;
//!   rule `"chessarena"` (the last ```` ```json ```` block) or `"tolerant"` (any fenced block,
//!   then a bare `{...}`).
//! - `chessarena_move(text, fen, any_move)`: `{uci, read_as}` read as ChessArena does (fenced UCI,
//!   then fenced SAN; with `any_move` also unfenced), legal or not; nil when nothing matches.
//! - `tolerant_move(text, fen)`: `{uci, read_as}` with the arena's own extraction (legal moves only).
//! - `extract_fen(text, rule)`: the FEN a reply states, or nil; rule `"chessarena"` (first block,
//!   then first in the text) or `"tolerant"` (last block, then last in the text).

use mlua::{Lua, LuaSerdeExt, Table, Value};

use crate::eval::{
    basic::{ReplyParse, parse_reply},
    move_selection::{ChosenMove, ReadAs, parse_chessarena, parse_tolerant},
    reconstruction::{extract_fen, extract_fen_chessarena},
};

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    let eval = lua.create_table()?;
    eval.set(
        "json_answer",
        lua.create_function(|lua, (text, rule): (String, Option<String>)| {
            let mode = match rule.as_deref().unwrap_or("tolerant") {
                "chessarena" => ReplyParse::LastJsonBlock,
                "tolerant" => ReplyParse::Tolerant,
                other => return Err(unknown_rule(other)),
            };
            match parse_reply(&text, mode) {
                Some(v) => lua.to_value(&v),
                None => Ok(Value::Nil),
            }
        })?,
    )?;
    eval.set(
        "chessarena_move",
        lua.create_function(|lua, (text, fen, any): (String, String, Option<bool>)| {
            chosen(lua, parse_chessarena(&text, &fen, any.unwrap_or(false)))
        })?,
    )?;
    eval.set(
        "tolerant_move",
        lua.create_function(|lua, (text, fen): (String, String)| {
            chosen(lua, parse_tolerant(&text, &fen))
        })?,
    )?;
    eval.set(
        "extract_fen",
        lua.create_function(|_, (text, rule): (String, Option<String>)| {
            match rule.as_deref().unwrap_or("tolerant") {
                "chessarena" => Ok(extract_fen_chessarena(&text)),
                "tolerant" => Ok(extract_fen(&text)),
                other => Err(unknown_rule(other)),
            }
        })?,
    )?;
    arena.set("eval", eval)?;
    Ok(())
}

fn chosen(lua: &Lua, chosen: Option<ChosenMove>) -> mlua::Result<Value> {
    let Some(c) = chosen else {
        return Ok(Value::Nil);
    };
    let t = lua.create_table()?;
    t.set("uci", c.uci)?;
    t.set(
        "read_as",
        match c.read_as {
            ReadAs::Uci => "uci",
            ReadAs::San => "san",
        },
    )?;
    Ok(Value::Table(t))
}

fn unknown_rule(name: &str) -> mlua::Error {
    mlua::Error::runtime(format!(
        "unknown answer rule `{name}` (expected \"chessarena\" or \"tolerant\")"
    ))
}
