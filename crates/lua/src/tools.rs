//! The tools a play mode offers (`tools` in what `start` returns) and the tool calls its `reply`
//! hook reads, between Lua and [`ToolSpec`]/[`ToolCall`].

use mlua::{Lua, LuaSerdeExt, Table, Value};

use crate::llm::{ToolCall, ToolSpec};

/// The tools of `value`: `nil` (none), or a sequence of `{name, description, parameters}`
/// tables (other keys, such as the function that answers the tool, are the mode's own).
///
/// # Errors
/// What is wrong and where, as the end of a sentence that begins "the hook returned".
pub(super) fn from_lua(lua: &Lua, value: Value) -> Result<Vec<ToolSpec>, String> {
    let list = match value {
        Value::Nil => return Ok(Vec::new()),
        Value::Table(list) => list,
        other => {
            return Err(format!(
                "`tools` as {}, not a list of {{name, description, parameters}} tables",
                other.type_name()
            ));
        }
    };
    let mut tools = Vec::new();
    for (index, tool) in list.sequence_values::<Value>().enumerate() {
        let index = index + 1;
        let Ok(Value::Table(tool)) = tool else {
            return Err(format!("tool {index} that is not a table"));
        };
        let text = |field: &str| -> Result<String, String> {
            match tool.raw_get::<Value>(field) {
                Ok(Value::String(s)) => Ok(s.to_string_lossy()),
                _ => Err(format!("tool {index} without a string `{field}`")),
            }
        };
        let name = text("name")?;
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "tool {index} named `{name}` (a name is 1 to 64 letters, digits, `_` or `-`, as every provider wants)"
            ));
        }
        let description = text("description")?;
        let parameters = match tool.raw_get::<Value>("parameters") {
            Ok(Value::Nil) => serde_json::json!({"type": "object", "properties": {}}),
            Ok(table @ Value::Table(_)) => {
                let mut schema: serde_json::Value = lua
                    .from_value(table)
                    .map_err(|e| format!("tool `{name}` with unreadable `parameters`: {e}"))?;
                objects_for_empty_properties(&mut schema);
                schema
            }
            Ok(other) => {
                return Err(format!(
                    "tool `{name}` with `parameters` as {}, not a JSON-schema table",
                    other.type_name()
                ));
            }
            Err(e) => return Err(format!("tool `{name}` with unreadable `parameters`: {e}")),
        };
        tools.push(ToolSpec {
            description,
            name,
            parameters,
        });
    }
    Ok(tools)
}

/// An empty Lua table reads as an empty list; a schema's `properties` is always an object.
fn objects_for_empty_properties(schema: &mut serde_json::Value) {
    match schema {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "properties" && value.as_array().is_some_and(Vec::is_empty) {
                    *value = serde_json::Value::Object(serde_json::Map::new());
                } else {
                    objects_for_empty_properties(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(objects_for_empty_properties),
        _ => {}
    }
}

/// The calls as the `reply` hook gets them: a sequence of `{id, name, arguments}` tables.
pub(super) fn calls_to_lua(lua: &Lua, calls: &[ToolCall]) -> mlua::Result<Table> {
    let list = lua.create_table_with_capacity(calls.len(), 0)?;
    for call in calls {
        let entry = lua.create_table_with_capacity(0, 3)?;
        entry.raw_set("id", call.id.as_str())?;
        entry.raw_set("name", call.name.as_str())?;
        entry.raw_set("arguments", call.arguments.as_str())?;
        list.raw_push(entry)?;
    }
    Ok(list)
}
