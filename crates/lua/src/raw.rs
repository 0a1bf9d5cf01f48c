//! Pushing Rust data onto a Lua stack through the C API, for the one hot path that needs it: the
//! `ctx` table every play-mode hook gets (twice per LLM ply).
//!
//! mlua's safe API guards each single push with a protected call of its own, and its serde
//! conversion goes field by field through that API; building a `ctx` that way was a quarter of
//! arena's instructions per ply. These functions are meant to run inside one protected call
//! (`Lua::exec_raw`), which is the guard for all of them at once. They make exactly the tables
//! serde would: a sequence carries mlua's array metatable (passed as a stack slot), a map none.
//!
//! # Safety
//! Every function here must run inside a protected call on `state` (a Lua error, which can only
//! be running out of memory, unwinds through it), and its callers' frames must hold nothing that
//! needs dropping. Each function checks the stack room it needs itself.

use mlua::ffi;

use crate::llm::ChatMessage;

/// Pushes `s` (any bytes; Lua strings are not UTF-8 bound).
pub(super) unsafe fn push_str(state: *mut ffi::lua_State, s: &str) {
    unsafe {
        ffi::lua_pushlstring(state, s.as_ptr().cast(), s.len());
    }
}

/// Sets `t[key] = value` on the table at the top of the stack.
pub(super) unsafe fn set_str(state: *mut ffi::lua_State, key: &str, value: &str) {
    unsafe {
        ffi::luaL_checkstack(state, 2, c"ctx field".as_ptr());
        push_str(state, key);
        push_str(state, value);
        ffi::lua_rawset(state, -3);
    }
}

/// Sets `t[names[key]] = value` on the table at the top of the stack: the key is taken from the
/// sequence at stack slot `names`, where it is already a Lua string, rather than pushed (each
/// push of a short string is a lookup in the state's string table).
pub(super) unsafe fn set_str_named(
    state: *mut ffi::lua_State,
    names: i32,
    key: ffi::lua_Integer,
    value: &str,
) {
    unsafe {
        ffi::luaL_checkstack(state, 2, c"ctx field".as_ptr());
        ffi::lua_rawgeti(state, names, key);
        push_str(state, value);
        ffi::lua_rawset(state, -3);
    }
}

/// As [`set_str_named`], for a Lua integer.
pub(super) unsafe fn set_int_named(
    state: *mut ffi::lua_State,
    names: i32,
    key: ffi::lua_Integer,
    value: i64,
) {
    unsafe {
        ffi::luaL_checkstack(state, 2, c"ctx field".as_ptr());
        ffi::lua_rawgeti(state, names, key);
        ffi::lua_pushinteger(state, value);
        ffi::lua_rawset(state, -3);
    }
}

/// Pushes a new sequence of `strings`, marked with the array metatable at stack slot
/// `metatable`.
pub(super) unsafe fn push_strings<'s>(
    state: *mut ffi::lua_State,
    strings: impl ExactSizeIterator<Item = &'s str>,
    metatable: i32,
) {
    unsafe {
        ffi::luaL_checkstack(state, 2, c"ctx list".as_ptr());
        ffi::lua_createtable(state, strings.len().try_into().unwrap_or(0), 0);
        for (i, s) in strings.enumerate() {
            push_str(state, s);
            ffi::lua_rawseti(state, -2, (i + 1) as ffi::lua_Integer);
        }
        ffi::lua_pushvalue(state, metatable);
        ffi::lua_setmetatable(state, -2);
    }
}

/// Brings the sequence at stack slot `master` to `strings`, of which its first `kept` elements
/// are already the same: the rest is replaced (so only what changed is converted again).
pub(super) unsafe fn update_master(
    state: *mut ffi::lua_State,
    master: i32,
    strings: &[String],
    kept: usize,
) {
    unsafe {
        ffi::luaL_checkstack(state, 1, c"ctx list".as_ptr());
        let old = ffi::lua_rawlen(state, master) as usize;
        for i in (strings.len().max(kept) + 1..=old).rev() {
            ffi::lua_pushnil(state);
            ffi::lua_rawseti(state, master, i as ffi::lua_Integer);
        }
        for (i, s) in strings.iter().enumerate().skip(kept) {
            push_str(state, s);
            ffi::lua_rawseti(state, master, (i + 1) as ffi::lua_Integer);
        }
    }
}

/// Pushes a new sequence holding the elements of the sequence at stack slot `source`, marked
/// with the array metatable at slot `metatable`.
pub(super) unsafe fn push_list_copy(state: *mut ffi::lua_State, source: i32, metatable: i32) {
    unsafe {
        ffi::luaL_checkstack(state, 2, c"ctx list".as_ptr());
        let n = ffi::lua_rawlen(state, source);
        ffi::lua_createtable(state, n.try_into().unwrap_or(0), 0);
        for i in 1..=n as ffi::lua_Integer {
            ffi::lua_rawgeti(state, source, i);
            ffi::lua_rawseti(state, -2, i);
        }
        ffi::lua_pushvalue(state, metatable);
        ffi::lua_setmetatable(state, -2);
    }
}

/// Pushes a new sequence of `{role, content}` tables, as serde makes `messages`.
pub(super) unsafe fn push_dialog(
    state: *mut ffi::lua_State,
    messages: &[ChatMessage],
    metatable: i32,
) {
    unsafe {
        ffi::luaL_checkstack(state, 5, c"ctx dialog".as_ptr());
        ffi::lua_createtable(state, messages.len().try_into().unwrap_or(0), 0);
        for (i, m) in messages.iter().enumerate() {
            // Fields in declaration order, as serde sets them (the tool fields only when set).
            ffi::lua_createtable(state, 0, 2);
            set_str(state, "role", &m.role);
            set_str(state, "content", &m.content);
            if !m.tool_calls.is_empty() {
                ffi::lua_pushstring(state, c"tool_calls".as_ptr());
                ffi::lua_createtable(state, m.tool_calls.len().try_into().unwrap_or(0), 0);
                for (j, call) in m.tool_calls.iter().enumerate() {
                    ffi::lua_createtable(state, 0, 3);
                    set_str(state, "arguments", &call.arguments);
                    set_str(state, "id", &call.id);
                    set_str(state, "name", &call.name);
                    ffi::lua_rawseti(state, -2, (j + 1) as ffi::lua_Integer);
                }
                ffi::lua_rawset(state, -3);
            }
            if let Some(id) = &m.tool_call_id {
                set_str(state, "tool_call_id", id);
            }
            ffi::lua_rawseti(state, -2, (i + 1) as ffi::lua_Integer);
        }
        ffi::lua_pushvalue(state, metatable);
        ffi::lua_setmetatable(state, -2);
    }
}

/// Pushes a deep copy of the plain-data table at stack slot `source` (strings, numbers,
/// booleans and tables of them, as serde made it): every table is new and keeps its original's
/// metatable (the array marker), so a hook that changes its copy changes nothing the next one
/// gets. Keys are copied as they are; a value that is neither data nor a table (serde makes
/// none) is shared.
pub(super) unsafe fn push_copy(state: *mut ffi::lua_State, source: i32) {
    unsafe {
        let source = ffi::lua_absindex(state, source);
        ffi::luaL_checkstack(state, 4, c"ctx options".as_ptr());
        // Sized as the original's sequence, so that `#` finds the same border in a list with a
        // hole (a JSON null, which serde makes nil) as in the table serde made; and with room for
        // its other keys, so that filling it never rehashes (counting them costs less than the
        // rehashes, which were most of copying the options).
        let len = ffi::lua_rawlen(state, source);
        let mut entries: usize = 0;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, source) != 0 {
            entries += 1;
            ffi::lua_settop(state, -2);
        }
        let keyed = entries.saturating_sub(len);
        ffi::lua_createtable(
            state,
            len.try_into().unwrap_or(0),
            keyed.try_into().unwrap_or(0),
        );
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, source) != 0 {
            // Stack: copy, key, value.
            if ffi::lua_type(state, -1) == ffi::LUA_TTABLE {
                push_copy(state, -1);
                ffi::lua_replace(state, -2);
            }
            ffi::lua_pushvalue(state, -2);
            ffi::lua_insert(state, -2);
            // Stack: copy, key, key, value.
            ffi::lua_rawset(state, -4);
        }
        if ffi::lua_getmetatable(state, source) != 0 {
            ffi::lua_setmetatable(state, -2);
        }
    }
}
