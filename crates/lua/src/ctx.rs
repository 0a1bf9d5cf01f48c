//! The `ctx` table every play-mode hook gets (twice per LLM ply): what serde would make of the
//! [`TurnContext`], built by hand through Lua's C API (see [`raw`]) with its lists made only
//! when a hook reads them.
//!
//! Most hooks read one move list or none: blitz's `start` reads the legal moves and the history
//! in one notation, its `reply` reads neither, and neither reads the dialogs. Making all six
//! lists for both hooks of every ply (and the SAN of every legal move, the dearest of them) was
//! most of what a `ctx` cost, and at a thousand games at once each of their strings is a lookup
//! in a cold string table. So the move lists (`legal_uci`, `legal_san`, `history_uci`,
//! `history_san`) and the dialogs (`dialog`, `previous_dialog`) are left out of the table and
//! made by its metatable's `__index` on first read, then stored in the table, so a hook sees the
//! same list on every read, exactly as before. `pairs(ctx)` makes them all first (`__pairs`),
//! so it sees every field; `next` and `rawget` see a list only once it has been read. The
//! metatable is protected (`getmetatable(ctx)` gives `"ctx"`, `setmetatable` on it is an
//! error), since taking it away would lose the unread lists. A hook that assigns one of these
//! fields (even `nil`) before reading it keeps what it assigned.
//!
//! A `ctx` makes its lists during its own call only: when the hook returns, what they are made
//! from is let go (the game's history is shared, not copied, and the game appends to it in
//! place only when no `ctx` still holds it). A `ctx` a script keeps keeps the lists its call
//! read; reading another one later is an error that says so.

use std::sync::{Arc, Mutex, PoisonError};

use mlua::{
    AnyUserData, Function, Lua, LuaSerdeExt, Table, Value, ffi, serde::ser::Options as SerOptions,
};

use super::{raw, state};
use crate::{
    board::render::MoveTexts,
    llm::ChatMessage,
    tournament::turn::{LegalMoves, TurnContext},
};

/// The fields made on first read, in the order `pairs` makes them.
const LAZY_FIELDS: [&str; 6] = [
    "legal_uci",
    "legal_san",
    "history_uci",
    "history_san",
    "dialog",
    "previous_dialog",
];

/// The keys a `ctx` and its metatable are built with, made into Lua strings once per state
/// (see [`raw::set_str_named`]); [`name`] gives a key's index.
const NAMES: [&str; 19] = [
    "fen",
    "start_fen",
    "variant",
    "side",
    "ply",
    "move_number",
    "last_move",
    "attempt",
    "max_attempts",
    "player",
    "opponent",
    "game",
    "options",
    "reasoning",
    "finish_reason",
    "__index",
    "__pairs",
    "__newindex",
    "__metatable",
];

/// The index of `key` in the Lua sequence of [`NAMES`] (from 1); used in `const` blocks, so a
/// name missing from the list fails the build.
const fn name(key: &str) -> ffi::lua_Integer {
    let mut i = 0;
    while i < NAMES.len() {
        let (a, b) = (NAMES[i].as_bytes(), key.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i as ffi::lua_Integer + 1;
            }
        }
        i += 1;
    }
    panic!("not a ctx name")
}

/// What `getmetatable(ctx)` returns.
const PROTECTED: &str = "ctx";

/// Builds the `ctx` tables of one play mode's Lua state.
pub(super) struct ContextBuilder {
    /// The options as serde made them, and what they were made from: copied for every `ctx`,
    /// made again only when the options change.
    options: Mutex<Option<(Value, serde_json::Map<String, serde_json::Value>)>>,
    /// [`NAMES`] as a Lua sequence.
    names: Table,
    /// The metamethods of every `ctx`'s metatable.
    index: Function,
    pairs: Function,
    newindex: Function,
}

/// The lazy fields of one `ctx`; its metatable holds it at index 1.
struct LazyLists {
    /// What they are made from, until the call returns.
    sources: Option<Sources>,
    /// The fields (bits in [`LAZY_FIELDS`] order) a hook assigned before reading them: they
    /// keep what was assigned, `nil` included.
    assigned: u8,
}

/// What the lazy fields of a `ctx` are made from.
struct Sources {
    legal: Arc<LegalMoves>,
    history_uci: Arc<Vec<String>>,
    history_san: Arc<Vec<String>>,
    dialog: Arc<Vec<ChatMessage>>,
    previous_dialog: Arc<Vec<ChatMessage>>,
}

/// The handle on a `ctx`'s lazy fields that lets them go when its call returns
/// ([`ContextBuilder::release`]).
pub(super) struct CallLists(AnyUserData);

impl ContextBuilder {
    /// The builder for `lua`'s hooks.
    pub(super) fn new(lua: &Lua) -> mlua::Result<Self> {
        // The history lists every `ctx`'s are copied from, shared by `__index` and `__pairs`.
        let masters: Arc<Mutex<Option<Masters>>> = Arc::default();
        let index = {
            let masters = Arc::clone(&masters);
            lua.create_function(move |lua, (ctx, key): (Table, Value)| {
                let Some(field) = lazy_field(&key) else {
                    return Ok(Value::Nil);
                };
                let Some(lists) = lists_of(&ctx)? else {
                    return Ok(Value::Nil);
                };
                let lists = lists.borrow::<LazyLists>()?;
                if lists.assigned & (1 << field) != 0 {
                    return Ok(Value::Nil);
                }
                let list = make_list(lua, &masters, &lists, field)?;
                ctx.raw_set(key, &list)?;
                Ok(list)
            })?
        };
        let pairs = {
            let next: Function = lua.globals().raw_get("next")?;
            lua.create_function(move |lua, ctx: Table| {
                if let Some(lists) = lists_of(&ctx)? {
                    let lists = lists.borrow::<LazyLists>()?;
                    for (field, name) in LAZY_FIELDS.iter().enumerate() {
                        if lists.assigned & (1 << field) == 0
                            && ctx.raw_get::<Value>(*name)?.is_nil()
                        {
                            ctx.raw_set(*name, make_list(lua, &masters, &lists, field)?)?;
                        }
                    }
                }
                Ok((next.clone(), ctx, Value::Nil))
            })?
        };
        let newindex = lua.create_function(|_, (ctx, key, value): (Table, Value, Value)| {
            if let Some(field) = lazy_field(&key)
                && let Some(lists) = lists_of(&ctx)?
            {
                lists.borrow_mut::<LazyLists>()?.assigned |= 1 << field;
            }
            ctx.raw_set(key, value)
        })?;
        Ok(ContextBuilder {
            names: lua.create_sequence_from(NAMES)?,
            options: Mutex::new(None),
            index,
            pairs,
            newindex,
        })
    }

    /// Every table is new, so a hook that changes its `ctx` changes
    /// nothing the next call sees. Meant to run with the state's memory limit lifted (see
    /// [`state::unmetered`]): with a limit set, mlua guards every single push with a protected
    /// call.
    /// `ctx` for one hook call, and the handle to [`release`](Self::release) when it returns.
    pub(super) fn build(&self, lua: &Lua, ctx: &TurnContext) -> mlua::Result<(Value, CallLists)> {
        let mut options = self.options.lock().unwrap_or_else(PoisonError::into_inner);
        if options
            .as_ref()
            .is_none_or(|(_, from)| *from != ctx.options)
        {
            let how = SerOptions::new()
                .serialize_none_to_null(false)
                .serialize_unit_to_null(false);
            *options = Some((lua.to_value_with(&ctx.options, how)?, ctx.options.clone()));
        }
        let (options, _) = options.as_ref().expect("just filled");
        let lists = lua.create_any_userdata(LazyLists {
            sources: Some(Sources {
                legal: Arc::clone(&ctx.legal),
                history_uci: Arc::clone(&ctx.history_uci),
                history_san: Arc::clone(&ctx.history_san),
                dialog: Arc::clone(&ctx.dialog),
                previous_dialog: Arc::clone(&ctx.previous_dialog),
            }),
            assigned: 0,
        })?;
        let args = (
            options,
            &self.index,
            &self.pairs,
            &self.newindex,
            &lists,
            &self.names,
        );
        // SAFETY: `exec_raw` runs the closure as one protected C call with the six arguments at
        // stack slots 1 to 6. The closure and the `raw` functions hold only borrowed slices and
        // `&str`s, nothing that needs dropping, so a Lua error (only running out of memory, the
        // limit being lifted) unwinding through them leaks nothing. It leaves exactly the new
        // table on the stack, which `exec_raw` returns.
        let table = unsafe {
            lua.exec_raw::<Value>(args, |state| {
                const OPTIONS: i32 = 1;
                const INDEX: i32 = 2;
                const PAIRS: i32 = 3;
                const NEWINDEX: i32 = 4;
                const LISTS: i32 = 5;
                const KEYS: i32 = 6;
                ffi::luaL_checkstack(state, 4, c"ctx".as_ptr());
                ffi::lua_createtable(state, 0, 20);
                // The scalars in the order serde sets them, then the tables.
                raw::set_str_named(state, KEYS, const { name("fen") }, &ctx.fen);
                raw::set_str_named(state, KEYS, const { name("start_fen") }, &ctx.start_fen);
                raw::set_str_named(state, KEYS, const { name("variant") }, ctx.variant);
                raw::set_str_named(state, KEYS, const { name("side") }, ctx.side);
                raw::set_int_named(state, KEYS, const { name("ply") }, ctx.ply.into());
                raw::set_int_named(
                    state,
                    KEYS,
                    const { name("move_number") },
                    ctx.move_number.into(),
                );
                if let Some(m) = &ctx.last_move {
                    raw::set_str_named(state, KEYS, const { name("last_move") }, m);
                }
                raw::set_int_named(state, KEYS, const { name("attempt") }, ctx.attempt.into());
                raw::set_int_named(
                    state,
                    KEYS,
                    const { name("max_attempts") },
                    ctx.max_attempts.into(),
                );
                raw::set_str_named(state, KEYS, const { name("player") }, &ctx.player);
                raw::set_str_named(state, KEYS, const { name("opponent") }, &ctx.opponent);
                raw::set_int_named(state, KEYS, const { name("game") }, ctx.game.into());
                ffi::lua_rawgeti(state, KEYS, const { name("options") });
                raw::push_copy(state, OPTIONS);
                ffi::lua_rawset(state, -3);
                if let Some(r) = &ctx.reasoning {
                    raw::set_str_named(state, KEYS, const { name("reasoning") }, r);
                }
                if let Some(r) = &ctx.finish_reason {
                    raw::set_str_named(state, KEYS, const { name("finish_reason") }, r);
                }
                // The metatable that makes the move lists.
                ffi::lua_createtable(state, 1, 4);
                for (key, slot) in [
                    (const { name("__index") }, INDEX),
                    (const { name("__pairs") }, PAIRS),
                    (const { name("__newindex") }, NEWINDEX),
                ] {
                    ffi::lua_rawgeti(state, KEYS, key);
                    ffi::lua_pushvalue(state, slot);
                    ffi::lua_rawset(state, -3);
                }
                raw::set_str_named(state, KEYS, const { name("__metatable") }, PROTECTED);
                ffi::lua_pushvalue(state, LISTS);
                ffi::lua_rawseti(state, -2, 1);
                ffi::lua_setmetatable(state, -2);
                ffi::lua_replace(state, 1);
                ffi::lua_settop(state, 1);
            })
        }?;
        Ok((table, CallLists(lists)))
    }

    /// Lets go of what the unread lists of a `ctx` are made from, once its call has returned.
    pub(super) fn release(lists: CallLists) {
        // Only a hook's own `__index` or `__pairs` borrows the lists, and it has returned.
        if let Ok(mut lists) = lists.0.borrow_mut::<LazyLists>() {
            lists.sources = None;
        }
    }
}

/// The index in [`LAZY_FIELDS`] of `key`, if it names one.
fn lazy_field(key: &Value) -> Option<usize> {
    let key = key.as_string()?;
    let key = key.as_bytes();
    LAZY_FIELDS
        .iter()
        .position(|name| name.as_bytes() == &key[..])
}

/// The [`LazyLists`] a `ctx`'s metatable holds (none on a table that is not a `ctx`, which a
/// script could pass to a metamethod it took from one).
fn lists_of(ctx: &Table) -> mlua::Result<Option<AnyUserData>> {
    let Some(metatable) = ctx.metatable() else {
        return Ok(None);
    };
    match metatable.raw_get::<Value>(1)? {
        Value::UserData(lists) if lists.is::<LazyLists>() => Ok(Some(lists)),
        _ => Ok(None),
    }
}

/// A new Lua sequence of the lazy field `field` of `lists`, made with the memory limit lifted as
/// the rest of the `ctx` is.
fn make_list(
    lua: &Lua,
    masters: &Mutex<Option<Masters>>,
    lists: &LazyLists,
    field: usize,
) -> mlua::Result<Value> {
    let Some(sources) = &lists.sources else {
        return Err(mlua::Error::runtime(format!(
            "ctx.{} was read after its hook returned: a ctx kept for later keeps only the move \
             lists its own call read",
            LAZY_FIELDS[field]
        )));
    };
    state::unmetered(lua, || match field {
        2 => copy_history(lua, masters, &sources.history_uci, true),
        3 => copy_history(lua, masters, &sources.history_san, false),
        // SAFETY: each is a `raw` push of borrowed data, made (the legal moves' notation on
        // first use) before the protected call.
        0 | 1 => {
            let moves = if field == 0 {
                sources.legal.uci()
            } else {
                sources.legal.san()
            };
            unsafe {
                new_sequence(lua, |state, array| {
                    raw::push_strings(state, moves.iter(), array)
                })
            }
        }
        _ => {
            let dialog = if field == 4 {
                &sources.dialog
            } else {
                &sources.previous_dialog
            };
            unsafe { new_sequence(lua, |state, array| raw::push_dialog(state, dialog, array)) }
        }
    })
    .map_err(mlua::Error::external)?
}

/// A new sequence made by `push`, one of the `raw` functions that push a sequence marked with
/// the array metatable at the stack slot they are given (as serde marks one).
///
/// # Safety
/// `push` must be one of those `raw` functions, holding only borrowed data (see [`raw`]).
unsafe fn new_sequence(
    lua: &Lua,
    push: impl FnOnce(*mut ffi::lua_State, i32),
) -> mlua::Result<Value> {
    let metatable = lua.array_metatable();
    // SAFETY: one protected call with the array metatable at slot 1; `push` leaves the new
    // table, which replaces the argument.
    unsafe {
        lua.exec_raw::<Value>(&metatable, |state| {
            push(state, 1);
            ffi::lua_replace(state, 1);
        })
    }
}

/// A new sequence of `history`, copied from the master list of its notation (`uci` or SAN),
/// which is first brought to it: between two calls the history grows by a move or two, so only
/// those are made into Lua strings again.
fn copy_history(
    lua: &Lua,
    masters: &Mutex<Option<Masters>>,
    history: &[String],
    uci: bool,
) -> mlua::Result<Value> {
    let mut slot = masters.lock().unwrap_or_else(PoisonError::into_inner);
    if slot.is_none() {
        *slot = Some(Masters {
            uci: MasterList::new(lua)?,
            san: MasterList::new(lua)?,
        });
    }
    let masters = slot.as_mut().expect("just filled");
    let master = if uci {
        &mut masters.uci
    } else {
        &mut masters.san
    };
    let kept = master.kept(history);
    let metatable = lua.array_metatable();
    // SAFETY: one protected call with the array metatable at slot 1 and the master at slot 2;
    // the `raw` functions hold only borrowed strings; the copy replaces the first argument.
    let copied = unsafe {
        lua.exec_raw::<Value>((&metatable, &master.table), |state| {
            raw::update_master(state, 2, history, kept);
            raw::push_list_copy(state, 2, 1);
            ffi::lua_replace(state, 1);
            ffi::lua_settop(state, 1);
        })
    };
    match copied {
        Ok(list) => {
            master.commit(history, kept);
            Ok(list)
        }
        Err(e) => {
            // The master may be half updated: start afresh on the next call.
            *slot = None;
            Err(e)
        }
    }
}

/// The two history lists (UCI and SAN) that every `ctx`'s are copied from, never given to a
/// script. Converting the whole history on every read was most of the cost of a `ctx` once
/// mlua's memory guards were gone.
struct Masters {
    uci: MasterList,
    san: MasterList,
}

/// One move list as Lua holds it, and the moves it was made from (as [`MoveTexts`], one buffer
/// rather than a `String` each: with two lists per side and two sides per game, a `Vec<String>`
/// was kilobytes of small allocations per running game, heaptrack at 256 games).
struct MasterList {
    table: Table,
    moves: MoveTexts,
}

impl MasterList {
    fn new(lua: &Lua) -> mlua::Result<Self> {
        Ok(MasterList {
            table: lua.create_table()?,
            moves: MoveTexts::default(),
        })
    }

    /// How many of `moves` the Lua table already holds, from the start.
    fn kept(&self, moves: &[String]) -> usize {
        self.moves.common_prefix(moves)
    }

    /// Records that the Lua table now holds `moves` (of which the first `kept` were there).
    fn commit(&mut self, moves: &[String], kept: usize) {
        self.moves.truncate(kept);
        for m in &moves[kept..] {
            self.moves.push(m);
        }
    }
}
