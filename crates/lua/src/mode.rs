//! Play modes: the Lua hooks that write an LLM player's prompts and read its replies.
//!
//! A mode module returns a table with `start(ctx) -> messages`, `reply(ctx, text) -> decision` and
//! optionally `defaults`, the options it understands. Rust owns the dialog, the attempt count and the
//! board; the hooks only turn snapshots into text and text into decisions.

use mlua::{Function, Lua, LuaSerdeExt, Value};

use super::{
    ScriptError,
    ctx::{CallLists, ContextBuilder},
    error::script_error,
    generation::Generation,
    hooks::HookModule,
    messages, state, tools,
};
use crate::{
    board::Termination,
    spec::ModeBinding,
    tournament::{
        turn::{Action, Decision, LegalMoves, PlayMode, PlyOpening, RetryAction, TurnContext},
        vote,
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
    /// Builds the hooks' `ctx` tables.
    ctx: ContextBuilder,
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
    pub(crate) fn for_game(
        generation: &Generation,
        player: ModeBinding<'_>,
    ) -> Result<Self, ScriptError> {
        let lua = state::new_state(generation.resolver_for(player.name), generation.limits)?;
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
        // `samples` is arena's, not the mode's: the game loop votes over the mode's decisions.
        let options = hooks.options(lua, &vote::mode_options(player.options))?;
        let max_attempts = limit_option(&options, "max_attempts")?.unwrap_or(DEFAULT_MAX_ATTEMPTS);
        let max_turns = limit_option(&options, "max_turns")?;
        let exhausted = match hooks
            .table()
            .get::<Option<String>>("exhausted")
            .map_err(script_error)?
            .as_deref()
        {
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
            ctx: ContextBuilder::new(lua).map_err(script_error)?,
        })
    }

    /// Runs both hooks once on the initial position, so that a generation with a broken prompt or
    /// parser is rejected before any game uses it.
    ///
    /// # Errors
    /// Whatever the hooks raise.
    pub(crate) fn smoke_test(&self, player: ModeBinding<'_>) -> Result<(), ScriptError> {
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

    /// `ctx` as the Lua table the hooks get: what serde would make of the whole [`TurnContext`],
    /// its move lists made when a hook reads them (see [`ContextBuilder`]).
    ///
    /// It is built with the state's memory limit lifted (see [`state::unmetered`]): with a limit
    /// set, mlua guards every single push with a protected call, and those guards were most of
    /// arena's CPU per ply (callgrind: 41 % of all instructions in this function, 1.5 M
    /// protected calls in 2101 plies).
    pub(super) fn ctx_value(&self, ctx: &TurnContext) -> Result<(Value, CallLists), ScriptError> {
        state::unmetered(&self.lua, || self.ctx.build(&self.lua, ctx))?.map_err(script_error)
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
    /// `{messages = {...}, request = {...}, tools = {...}}`, where `request` holds extra
    /// request-body fields for this ply (a grammar built from the legal moves, say) and `tools`
    /// the tools offered (`{name, description, parameters}` each, parameters a JSON schema).
    fn start(&self, ctx: &TurnContext) -> Result<PlyOpening, ScriptError> {
        let (ctx, lists) = self.ctx_value(ctx)?;
        let value = state::call::<Value>(
            &self.lua,
            &format!("`{}.start`", self.module),
            &self.start,
            ctx,
        );
        ContextBuilder::release(lists);
        let value = value?;
        let fail = |m: String| ScriptError::bare(format!("`{}.start` returned {m}", self.module));
        let (messages, request, tools) = match &value {
            Value::Table(t) if t.contains_key("messages").map_err(script_error)? => {
                for pair in t.pairs::<String, Value>() {
                    let (key, _) = pair.map_err(script_error)?;
                    if key != "messages" && key != "request" && key != "tools" {
                        return Err(fail(format!(
                            "a table with unknown key `{key}` (expected messages, request, tools)"
                        )));
                    }
                }
                let request: Value = t.get("request").map_err(script_error)?;
                let request = match request {
                    Value::Nil => serde_json::Map::new(),
                    v => self
                        .lua
                        .from_value(v)
                        .map_err(|e| fail(format!("a malformed `request`: {e}")))?,
                };
                let tools = tools::from_lua(&self.lua, t.get("tools").map_err(script_error)?)
                    .map_err(&fail)?;
                (
                    t.get::<Value>("messages").map_err(script_error)?,
                    request,
                    tools,
                )
            }
            _ => (value, serde_json::Map::new(), Vec::new()),
        };
        Ok(PlyOpening {
            messages: messages::from_lua(&self.lua, messages).map_err(fail)?,
            request,
            tools,
        })
    }

    /// Calls `reply(ctx, text, calls)`: what to do with the model's answer. `calls` lists the
    /// tools the reply called, `{id, name, arguments}` each (`arguments` the JSON text as the
    /// model wrote it), and is empty when it called none.
    fn reply(&self, ctx: &TurnContext, text: &str) -> Result<Decision, ScriptError> {
        let calls = tools::calls_to_lua(
            &self.lua,
            ctx.dialog
                .last()
                .map_or(&[][..], |m| m.tool_calls.as_slice()),
        )
        .map_err(script_error)?;
        let (ctx, lists) = self.ctx_value(ctx)?;
        let value = state::call::<Value>(
            &self.lua,
            &format!("`{}.reply`", self.module),
            &self.reply,
            (ctx, text, calls),
        );
        ContextBuilder::release(lists);
        let value = value?;
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
    let mut other_calls = None;
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
            "other_calls" => other_calls = Some(text()?),
            other => {
                return Err(format!(
                    "a decision with unknown key `{other}` (expected move, retry, reset, say, forfeit, outcome, candidate, other_calls)"
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
        other_calls,
    })
}

/// The start position as a play mode would see it, for smoke tests.
fn sample_context(player: ModeBinding<'_>, mode: &ModeScript) -> TurnContext {
    let pos = shakmaty::Chess::default();
    TurnContext {
        fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        start_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".into(),
        variant: "standard",
        side: "white",
        ply: 0,
        move_number: 1,
        legal: std::sync::Arc::new(LegalMoves::of(&pos)),
        history_uci: Default::default(),
        history_san: Default::default(),
        last_move: None,
        attempt: 1,
        max_attempts: mode.max_attempts,
        player: player.name.to_string(),
        opponent: "opponent".into(),
        game: 0,
        options: mode.options.clone(),
        dialog: Default::default(),
        previous_dialog: Default::default(),
        reasoning: None,
        finish_reason: None,
    }
}
