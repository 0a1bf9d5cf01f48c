//! The chat messages a hook returns (a mode's `start`, a task's `prompt`), read from Lua.
//!
//! Read field by field rather than through mlua's serde deserializer, which made each message's
//! field names into Rust strings and kept a table of visited tables: 7 K instructions per
//! message, 2 % of arena's instructions per LLM ply. Reading them by hand also lets an error say
//! which message is wrong.

use mlua::{Lua, Table, Value};

use super::state;
use crate::llm::{ChatMessage, Image};

/// The roles a message may have.
const ROLES: [&str; 3] = ["system", "user", "assistant"];

/// The messages of `value`, a sequence of `{role = ..., content = ...}` tables whose role is
/// one of [`ROLES`]; other keys of a message are ignored, as they always were.
///
/// # Errors
/// What is wrong and where, as the end of a sentence that begins "the hook returned": not a
/// table, a key outside the sequence, a message that is not a table, a `role` or `content`
/// missing or not a string (or not UTF-8), an unknown role.
pub(super) fn from_lua(lua: &Lua, value: Value) -> Result<Vec<ChatMessage>, String> {
    // Read with the memory limit lifted, as a `ctx` is built: with a limit, mlua guards every
    // key pushed for a lookup with a protected call, 1.7 K instructions per field. Reading
    // allocates only those keys and the copies Rust keeps.
    state::unmetered(lua, || read(value)).unwrap_or_else(|e| Err(e.to_string()))
}

fn read(value: Value) -> Result<Vec<ChatMessage>, String> {
    let Value::Table(list) = value else {
        return Err(format!(
            "{}, not a list of {{role = ..., content = ...}} messages",
            value.type_name()
        ));
    };
    let count = list.raw_len();
    let mut messages = Vec::with_capacity(count);
    for index in 1..=count {
        let message = match list.raw_get::<Value>(index) {
            Ok(Value::Table(message)) => message,
            Ok(other) => {
                return Err(format!(
                    "message {index} as {}, not a {{role = ..., content = ...}} table",
                    other.type_name()
                ));
            }
            Err(e) => return Err(format!("an unreadable message {index}: {e}")),
        };
        let role = text(&message, "role", index)?;
        if !ROLES.contains(&role.as_str()) {
            return Err(format!(
                "a message with role `{role}` (expected system, user or assistant)"
            ));
        }
        let content = text(&message, "content", index)?;
        let mut chat = ChatMessage::new(role, content);
        chat.images = images(&message, index)?;
        messages.push(chat);
    }
    // Anything beyond the sequence was a mistake (`{ msg, n = 2 }`, or a map): say so rather
    // than drop it silently.
    if let Some(pair) = list
        .pairs::<Value, Value>()
        .find(|pair| !matches!(pair, Ok((Value::Integer(i), _)) if (1..=count as i64).contains(i)))
    {
        let key = match pair {
            Ok((key, _)) => describe(&key),
            Err(e) => return Err(format!("an unreadable message list: {e}")),
        };
        return Err(format!(
            "a message list with key {key}, outside its sequence of {count} messages"
        ));
    }
    Ok(messages)
}

/// The string field `field` of message `index`.
fn text(message: &Table, field: &str, index: usize) -> Result<String, String> {
    match message.raw_get::<Value>(field) {
        Ok(Value::String(s)) => s
            .to_str()
            .map(|s| s.to_owned())
            .map_err(|_| format!("message {index} with a `{field}` that is not UTF-8 text")),
        Ok(Value::Nil) => Err(format!("message {index} without `{field}`")),
        Ok(other) => Err(format!(
            "message {index} with `{field}` as {}, expected a string",
            other.type_name()
        )),
        Err(e) => Err(format!("an unreadable message {index}: {e}")),
    }
}

/// The pictures of message `index`: its `images`, a list of `{media_type = ..., data = ...}`
/// tables (what `arena.board.image` returns), none without the key.
fn images(message: &Table, index: usize) -> Result<Vec<Image>, String> {
    let list = match message.raw_get::<Value>("images") {
        Ok(Value::Nil) => return Ok(Vec::new()),
        Ok(Value::Table(list)) => list,
        Ok(other) => {
            return Err(format!(
                "message {index} with `images` as {}, expected a list of images",
                other.type_name()
            ));
        }
        Err(e) => return Err(format!("an unreadable message {index}: {e}")),
    };
    (1..=list.raw_len())
        .map(|i| {
            let Ok(Value::Table(image)) = list.raw_get::<Value>(i) else {
                return Err(format!(
                    "message {index} with image {i} that is not a table (see arena.board.image)"
                ));
            };
            let media_type = match image.raw_get::<Value>("media_type") {
                Ok(Value::String(s)) => s.to_string_lossy(),
                _ => String::new(),
            };
            if !media_type.starts_with("image/") {
                return Err(format!(
                    "message {index} with image {i} whose `media_type` is not `image/...`"
                ));
            }
            match image.raw_get::<Value>("data") {
                Ok(Value::String(data)) if !data.as_bytes().is_empty() => {
                    Ok(Image::new(media_type, data.as_bytes().to_vec()))
                }
                _ => Err(format!(
                    "message {index} with image {i} without its bytes in `data`"
                )),
            }
        })
        .collect()
}

/// A table key as an error shows it.
fn describe(key: &Value) -> String {
    match key {
        Value::String(s) => format!("`{}`", s.to_string_lossy()),
        Value::Integer(i) => i.to_string(),
        other => format!("of type {}", other.type_name()),
    }
}

#[cfg(test)]
mod tests {
    use mlua::Lua;

    use super::*;

    /// A state with a memory limit, as every hook's has.
    fn state_with_a_limit() -> Lua {
        let lua = Lua::new();
        lua.set_memory_limit(1 << 24).unwrap();
        lua
    }

    fn read(lua: &Lua, chunk: &str) -> Result<Vec<ChatMessage>, String> {
        from_lua(lua, lua.load(chunk).eval().unwrap())
    }

    #[test]
    fn a_list_of_messages_is_read_in_order_ignoring_other_fields() {
        let lua = state_with_a_limit();
        let messages = read(
            &lua,
            r#"return { { role = "system", content = "be brief" },
                        { role = "user", content = "é\n", name = "ignored" } }"#,
        )
        .unwrap();
        assert_eq!(
            messages,
            [
                ChatMessage::new("system", "be brief"),
                ChatMessage::new("user", "é\n")
            ]
        );
        assert_eq!(read(&lua, "return {}").unwrap(), []);
    }

    #[test]
    fn a_message_shows_the_images_it_lists() {
        let lua = state_with_a_limit();
        let messages = read(
            &lua,
            r#"return { { role = "user", content = "the board",
                          images = { { media_type = "image/png", data = "\137PNG" } } } }"#,
        )
        .unwrap();
        assert_eq!(
            messages,
            [ChatMessage::new("user", "the board")
                .with_image(Image::new("image/png", b"\x89PNG".to_vec()))]
        );
    }

    #[test]
    fn each_mistake_is_named_with_its_message() {
        let lua = state_with_a_limit();
        for (chunk, expected) in [
            (
                "return 'hi'",
                "string, not a list of {role = ..., content = ...} messages",
            ),
            (
                "return { { role = 'user', content = 'a' }, 'b' }",
                "message 2 as string, not a {role = ..., content = ...} table",
            ),
            ("return { { content = 'a' } }", "message 1 without `role`"),
            (
                "return { { role = 'user' } }",
                "message 1 without `content`",
            ),
            (
                "return { { role = 'user', content = 5 } }",
                "message 1 with `content` as integer, expected a string",
            ),
            (
                "return { { role = 'user', content = '\\xff' } }",
                "message 1 with a `content` that is not UTF-8 text",
            ),
            (
                "return { { role = 'tool', content = 'a' } }",
                "a message with role `tool` (expected system, user or assistant)",
            ),
            (
                "return { { role = 'user', content = 'a', images = 'x' } }",
                "message 1 with `images` as string, expected a list of images",
            ),
            (
                "return { { role = 'user', content = 'a', images = { { media_type = 'text/plain', data = 'x' } } } }",
                "message 1 with image 1 whose `media_type` is not `image/...`",
            ),
            (
                "return { { role = 'user', content = 'a', images = { { media_type = 'image/png' } } } }",
                "message 1 with image 1 without its bytes in `data`",
            ),
            (
                "return { { role = 'user', content = 'a' }, n = 1 }",
                "a message list with key `n`, outside its sequence of 1 messages",
            ),
            (
                "return { [2] = { role = 'user', content = 'a' } }",
                "a message list with key 2, outside its sequence of 0 messages",
            ),
        ] {
            assert_eq!(read(&lua, chunk).unwrap_err(), expected, "{chunk}");
        }
    }
}
