//! Play modes: the Lua hooks that write an LLM player's prompts and read its replies.
//!
//! A mode module returns a table with `start(ctx) -> messages`, `reply(ctx, text) -> decision` and
//! optionally `defaults`, the options it understands. Rust owns the dialog, the attempt count and the
//! board; the hooks only turn snapshots into text and text into decisions.

use std::sync::{Mutex, PoisonError};

use mlua::{Function, Lua, LuaSerdeExt, Table, Value, ffi, serde::ser::Options as SerOptions};

use super::{ScriptError, generation::Generation, hooks::HookModule, raw, state};
use crate::{
    board::Termination,
    llm::ChatMessage,
    tournament::{
        spec::ModeBinding,
        turn::{Action, Decision, PlayMode, PlyOpening, RetryAction, TurnContext},
    },
};

/// Attempts per ply when a mode declares none.
const DEFAULT_MAX_ATTEMPTS: u32 = 1;
/// The largest `max_attempts` or `max_turns` a mode may declare.
const MAX_LIMIT: u64 = 1000;

/// A loaded play mode bound to one player's options.
pub struct ModeScript {
    lua: Lua,
    module: String,
    start: Function,
    reply: Function,
    options: serde_json::Map<String, serde_json::Value>,
    max_attempts: u32,
    max_turns: Option<u32>,
    exhausted: Termination,
    /// What every `ctx` is copied from, made on the first hook call (see [`ContextCache`]).
    cache: Mutex<Option<ContextCache>>,
}

/// Rust-held Lua tables that every `ctx` is copied from, never given to a script: each hook gets
/// fresh copies, so a hook that changes its `ctx` changes nothing the next call gets.
struct ContextCache {
    /// The options as serde made them, and what they were made from.
    options: Value,
    options_from: serde_json::Map<String, serde_json::Value>,
    /// The history, UCI and SAN. It grows by a move or two between calls, so only those are
    /// converted again; converting the whole lists on every call was most of the cost of a
    /// `ctx` once the memory guards were gone, and more at a thousand games at once (each
    /// string looked up in a cold string table). The legal moves change at every ply, so they
    /// are pushed as they are.
    history_uci: MasterList,
    history_san: MasterList,
}

/// One move list as Lua holds it, and the moves it was made from.
///
/// The moves are kept as one buffer and their end offsets rather than a `String` each: with
/// four lists per side and two sides per game, a `Vec<String>` was 10 KB of small allocations
/// per running game (heaptrack at 256 games).
struct MasterList {
    table: Table,
    /// The moves, one after the other (one buffer, not a `String` per move: a game holds two
    /// of these per side).
    text: String,
    /// Where each move ends in `text`.
    ends: Vec<u32>,
}

impl MasterList {
    fn new(lua: &Lua) -> mlua::Result<Self> {
        Ok(MasterList {
            table: lua.create_table()?,
            text: String::new(),
            ends: Vec::new(),
        })
    }

    /// How many of `moves` the Lua table already holds, from the start.
    fn kept(&self, moves: &[String]) -> usize {
        let text = self.text.as_bytes();
        let mut start = 0;
        let mut kept = 0;
        for (&end, m) in self.ends.iter().zip(moves) {
            let end = end as usize;
            if &text[start..end] != m.as_bytes() {
                break;
            }
            start = end;
            kept += 1;
        }
        kept
    }

    /// Records that the Lua table now holds `moves` (of which the first `kept` were there).
    fn commit(&mut self, moves: &[String], kept: usize) {
        self.ends.truncate(kept);
        self.text
            .truncate(self.ends.last().map_or(0, |&end| end as usize));
        for m in &moves[kept..] {
            self.text.push_str(m);
            self.ends.push(self.text.len() as u32);
        }
    }
}

impl std::fmt::Debug for ModeScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModeScript")
            .field("module", &self.module)
            .field("options", &self.options)
            .finish()
    }
}

impl ModeScript {
    /// A mode for one game: a fresh Lua state built from the generation's recorded sources.
    ///
    /// # Errors
    /// When the mode no longer loads (it did when the generation was validated, so this means a
    /// resource limit or a lazily required module).
    pub fn for_game(generation: &Generation, player: ModeBinding<'_>) -> Result<Self, ScriptError> {
        let lua = state::new_state(generation.resolver(), generation.limits)?;
        let module = generation.modes.get(player.name).ok_or_else(|| {
            ScriptError::bare(format!("player `{}` has no play mode", player.name))
        })?;
        ModeScript::load(&lua, module, player)
    }

    /// Requires `module` in `lua` and binds it to `player`'s options.
    ///
    /// # Errors
    /// A missing hook, an option the mode does not know, or an error while loading the module.
    pub fn load(lua: &Lua, module: &str, player: ModeBinding<'_>) -> Result<Self, ScriptError> {
        let hooks = HookModule::require(lua, module, "play mode")?;
        let start = hooks.hook("start")?;
        let reply = hooks.hook("reply")?;
        let options = hooks.options(lua, player.options)?;
        let max_attempts = limit_option(&options, "max_attempts")?.unwrap_or(DEFAULT_MAX_ATTEMPTS);
        let max_turns = limit_option(&options, "max_turns")?;
        let exhausted = match hooks.table().get::<Option<String>>("exhausted")?.as_deref() {
            None | Some("forfeit") => Termination::Forfeit,
            Some("too_many_wrong_actions") => Termination::TooManyWrongActions,
            Some(other) => {
                return Err(ScriptError::bare(format!(
                    "play mode `{module}`: `exhausted` cannot be `{other}` (expected \"forfeit\" or \"too_many_wrong_actions\")"
                )));
            }
        };
        Ok(ModeScript {
            lua: lua.clone(),
            module: module.to_string(),
            start,
            reply,
            options,
            max_attempts,
            max_turns,
            exhausted,
            cache: Mutex::new(None),
        })
    }

    /// Runs both hooks once on the initial position, so that a generation with a broken prompt or
    /// parser is rejected before any game uses it.
    ///
    /// # Errors
    /// Whatever the hooks raise.
    pub fn smoke_test(&self, player: ModeBinding<'_>) -> Result<(), ScriptError> {
        let ctx = sample_context(player, self);
        let messages = self.start(&ctx)?.messages;
        if messages.is_empty() {
            return Err(ScriptError::bare(format!(
                "`{}.start` returned no messages",
                self.module
            )));
        }
        self.reply(&ctx, "I play ```e2e4```")?;
        self.reply(&ctx, "")?;
        Ok(())
    }

    /// `ctx` as the Lua table the hooks get: what serde would make of the whole [`TurnContext`].
    ///
    /// Every table is new on every call, so a hook that changes its `ctx` changes nothing the
    /// next call sees. It is built with the state's memory limit lifted (see
    /// [`state::unmetered`]): with a limit set, mlua guards every single push with a protected
    /// call, and those guards were most of arena's CPU per ply (callgrind: 41 % of all
    /// instructions in this function, 1.5 M protected calls in 2101 plies).
    pub(super) fn ctx_value(&self, ctx: &TurnContext) -> Result<Value, ScriptError> {
        state::unmetered(&self.lua, || self.build_ctx(ctx))?.map_err(ScriptError::from)
    }

    fn build_ctx(&self, ctx: &TurnContext) -> mlua::Result<Value> {
        let mut slot = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = slot.as_ref().is_none_or(|c| c.options_from != ctx.options);
        if stale {
            let options = SerOptions::new()
                .serialize_none_to_null(false)
                .serialize_unit_to_null(false);
            *slot = Some(ContextCache {
                options: self.lua.to_value_with(&ctx.options, options)?,
                options_from: ctx.options.clone(),
                history_uci: MasterList::new(&self.lua)?,
                history_san: MasterList::new(&self.lua)?,
            });
        }
        let cache = slot.as_mut().expect("just filled");
        let kept_uci = cache.history_uci.kept(&ctx.history_uci);
        let kept_san = cache.history_san.kept(&ctx.history_san);
        let metatable = self.lua.array_metatable();
        let args = (
            &metatable,
            &cache.options,
            &cache.history_uci.table,
            &cache.history_san.table,
        );
        // SAFETY: `exec_raw` runs the closure as one protected C call with the four arguments at
        // stack slots 1 to 4. The closure and the `raw` functions hold only borrowed slices and
        // `&str`s, nothing that needs dropping, so a Lua error (only running out of memory, the
        // limit being lifted) unwinding through them leaks nothing. It leaves exactly the new
        // table on the stack, which `exec_raw` returns.
        let built = unsafe {
            self.lua.exec_raw::<Value>(args, |state| {
                const METATABLE: i32 = 1;
                const OPTIONS: i32 = 2;
                const HISTORY_UCI: i32 = 3;
                const HISTORY_SAN: i32 = 4;
                raw::update_master(state, HISTORY_UCI, &ctx.history_uci, kept_uci);
                raw::update_master(state, HISTORY_SAN, &ctx.history_san, kept_san);
                ffi::luaL_checkstack(state, 4, c"ctx".as_ptr());
                ffi::lua_createtable(state, 0, 20);
                // The scalars in the order serde sets them, then the lists.
                raw::set_str(state, "fen", &ctx.fen);
                raw::set_str(state, "start_fen", &ctx.start_fen);
                raw::set_str(state, "variant", ctx.variant);
                raw::set_str(state, "side", ctx.side);
                raw::set_int(state, "ply", ctx.ply.into());
                raw::set_int(state, "move_number", ctx.move_number.into());
                if let Some(m) = &ctx.last_move {
                    raw::set_str(state, "last_move", m);
                }
                raw::set_int(state, "attempt", ctx.attempt.into());
                raw::set_int(state, "max_attempts", ctx.max_attempts.into());
                raw::set_str(state, "player", &ctx.player);
                raw::set_str(state, "opponent", &ctx.opponent);
                raw::set_int(state, "game", ctx.game.into());
                raw::push_str(state, "options");
                raw::push_copy(state, OPTIONS);
                ffi::lua_rawset(state, -3);
                if let Some(r) = &ctx.reasoning {
                    raw::set_str(state, "reasoning", r);
                }
                for (name, moves) in [("legal_uci", &ctx.legal_uci), ("legal_san", &ctx.legal_san)]
                {
                    raw::push_str(state, name);
                    raw::push_strings(state, moves, METATABLE);
                    ffi::lua_rawset(state, -3);
                }
                for (name, master) in [("history_uci", HISTORY_UCI), ("history_san", HISTORY_SAN)] {
                    raw::push_str(state, name);
                    raw::push_list_copy(state, master, METATABLE);
                    ffi::lua_rawset(state, -3);
                }
                for (name, dialog) in [
                    ("dialog", &ctx.dialog),
                    ("previous_dialog", &ctx.previous_dialog),
                ] {
                    raw::push_str(state, name);
                    raw::push_dialog(state, dialog, METATABLE);
                    ffi::lua_rawset(state, -3);
                }
                ffi::lua_replace(state, 1);
                ffi::lua_settop(state, 1);
            })
        };
        match built {
            Ok(value) => {
                cache.history_uci.commit(&ctx.history_uci, kept_uci);
                cache.history_san.commit(&ctx.history_san, kept_san);
                Ok(value)
            }
            Err(e) => {
                // The masters may be half updated: start them afresh on the next call.
                *slot = None;
                Err(e)
            }
        }
    }

    /// The mode's Lua state, for tests that look at the values it gets.
    #[cfg(test)]
    pub(super) fn lua(&self) -> &Lua {
        &self.lua
    }
}

impl PlayMode for ModeScript {
    fn exhausted(&self) -> Termination {
        self.exhausted
    }

    fn options(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.options
    }

    fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn max_turns(&self) -> Option<u32> {
        self.max_turns
    }

    /// Calls `start(ctx)`: the messages that open the ply's dialog, either as a plain list or as
    /// `{messages = {...}, request = {...}}`, where `request` holds extra request-body fields for
    /// this ply (a grammar built from the legal moves, say).
    fn start(&self, ctx: &TurnContext) -> Result<PlyOpening, ScriptError> {
        let ctx = self.ctx_value(ctx)?;
        let value: Value = state::call(
            &self.lua,
            &format!("`{}.start`", self.module),
            &self.start,
            ctx,
        )?;
        let fail = |m: String| ScriptError::bare(format!("`{}.start` returned {m}", self.module));
        let (messages, request) = match &value {
            Value::Table(t) if t.contains_key("messages")? => {
                for pair in t.pairs::<String, Value>() {
                    let (key, _) = pair?;
                    if key != "messages" && key != "request" {
                        return Err(fail(format!(
                            "a table with unknown key `{key}` (expected messages, request)"
                        )));
                    }
                }
                let request: Value = t.get("request")?;
                let request = match request {
                    Value::Nil => serde_json::Map::new(),
                    v => self
                        .lua
                        .from_value(v)
                        .map_err(|e| fail(format!("a malformed `request`: {e}")))?,
                };
                (t.get::<Value>("messages")?, request)
            }
            _ => (value, serde_json::Map::new()),
        };
        Ok(PlyOpening {
            messages: parse_messages(&self.lua, messages).map_err(fail)?,
            request,
        })
    }

    /// Calls `reply(ctx, text)`: what to do with the model's answer.
    fn reply(&self, ctx: &TurnContext, text: &str) -> Result<Decision, ScriptError> {
        let ctx = self.ctx_value(ctx)?;
        let value: Value = state::call(
            &self.lua,
            &format!("`{}.reply`", self.module),
            &self.reply,
            (ctx, text),
        )?;
        parse_decision(value)
            .map_err(|m| ScriptError::bare(format!("`{}.reply` returned {m}", self.module)))
    }
}

/// A whole-number limit option (`max_attempts`, `max_turns`) from 1 to [`MAX_LIMIT`], if set.
fn limit_option(
    options: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<Option<u32>, ScriptError> {
    match options.get(name) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .map(|n| Some(n as u32))
            .ok_or_else(|| {
                ScriptError::bare(format!(
                    "option `{name}` must be a whole number from 1 to {MAX_LIMIT}, not {v}"
                ))
            }),
    }
}

fn parse_messages(lua: &Lua, value: Value) -> Result<Vec<ChatMessage>, String> {
    let Value::Table(_) = &value else {
        return Err(format!(
            "{}, not a list of {{role = ..., content = ...}} messages",
            value.type_name()
        ));
    };
    let messages: Vec<ChatMessage> = lua
        .from_value(value)
        .map_err(|e| format!("a malformed message list: {e}"))?;
    for m in &messages {
        if !["system", "user", "assistant"].contains(&m.role.as_str()) {
            return Err(format!(
                "a message with role `{}` (expected system, user or assistant)",
                m.role
            ));
        }
    }
    Ok(messages)
}

fn parse_decision(value: Value) -> Result<Decision, String> {
    let Value::Table(t) = value else {
        return Err(format!(
            "{}, not a decision table ({{move = ...}}, {{retry = ...}}, {{say = ...}} or {{forfeit = ...}})",
            value.type_name()
        ));
    };
    let mut action = None;
    let mut outcome = None;
    let mut candidate = None;
    let mut reset = false;
    let mut retry: Option<Value> = None;
    for pair in t.pairs::<String, Value>() {
        let (key, v) = pair.map_err(|e| e.to_string())?;
        let text = || -> Result<String, String> {
            v.as_string()
                .map(|s| s.to_string_lossy())
                .ok_or_else(|| format!("`{key}` as {}, expected a string", v.type_name()))
        };
        let set = |slot: &mut Option<Action>, a: Action| -> Result<(), String> {
            if slot.is_some() {
                return Err("a decision with more than one of move, retry, say, forfeit".into());
            }
            *slot = Some(a);
            Ok(())
        };
        match key.as_str() {
            "move" => set(&mut action, Action::Move(text()?))?,
            "say" => set(&mut action, Action::Say(text()?))?,
            "forfeit" => set(&mut action, Action::Forfeit(text()?))?,
            "retry" => {
                set(&mut action, Action::Retry(RetryAction::Reset))?;
                retry = Some(v.clone());
            }
            "reset" => reset = v.as_boolean().unwrap_or(false),
            "outcome" => outcome = Some(text()?),
            "candidate" => candidate = Some(text()?),
            other => {
                return Err(format!(
                    "a decision with unknown key `{other}` (expected move, retry, reset, say, forfeit, outcome, candidate)"
                ));
            }
        }
    }
    let action = match (action, retry) {
        (Some(Action::Retry(_)), Some(v)) => {
            if reset {
                Action::Retry(RetryAction::Reset)
            } else if let Some(s) = v.as_string() {
                Action::Retry(RetryAction::Feedback(s.to_string_lossy()))
            } else {
                return Err(
                    "`retry` without feedback text; give `retry = \"feedback\"` or `retry = true, reset = true`"
                        .into(),
                );
            }
        }
        (Some(a), _) => a,
        (None, _) => {
            return Err("an empty decision (expected move, retry, say or forfeit)".into());
        }
    };
    Ok(Decision {
        action,
        outcome,
        candidate,
    })
}

/// The start position as a play mode would see it, for smoke tests.
fn sample_context(player: ModeBinding<'_>, mode: &ModeScript) -> TurnContext {
    use crate::board::render;
    let pos = shakmaty::Chess::default();
    TurnContext {
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        variant: "standard",
        side: "white",
        ply: 0,
        move_number: 1,
        legal_uci: render::legal_uci(&pos),
        legal_san: render::legal_san(&pos),
        history_uci: Default::default(),
        history_san: Default::default(),
        last_move: None,
        attempt: 1,
        max_attempts: mode.max_attempts,
        player: player.name.to_string(),
        opponent: "opponent".into(),
        game: 0,
        options: mode.options.clone(),
        dialog: Vec::new(),
        previous_dialog: Vec::new(),
        reasoning: None,
    }
}
