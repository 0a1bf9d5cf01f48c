//! Text helpers for prompt authors: `arena.template` and `arena.json`.

use mlua::{Lua, LuaSerdeExt, Table, Value};

pub(super) fn register(lua: &Lua, arena: &Table) -> mlua::Result<()> {
    arena.set(
        "template",
        lua.create_function(|_, (template, vars): (String, Table)| render(&template, &vars))?,
    )?;
    let json = lua.create_table()?;
    json.set(
        "encode",
        lua.create_function(|lua, value: Value| {
            let json: serde_json::Value = lua.from_value(value)?;
            serde_json::to_string(&json).map_err(mlua::Error::external)
        })?,
    )?;
    json.set(
        "decode",
        lua.create_function(|lua, text: String| {
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(v) => Ok((lua.to_value(&v)?, Value::Nil)),
                Err(e) => Ok((Value::Nil, Value::String(lua.create_string(e.to_string())?))),
            }
        })?,
    )?;
    arena.set("json", json)?;
    Ok(())
}

/// Replaces `{{name}}` with `vars.name`. A name the table lacks is an error rather than an empty
/// string, because a silently blank prompt section is the hardest bug to see in results.
fn render(template: &str, vars: &Table) -> mlua::Result<String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| mlua::Error::runtime("template has `{{` without a closing `}}`"))?;
        let name = after[..end].trim();
        let value: Value = vars.get(name)?;
        match value {
            Value::Nil => {
                return Err(mlua::Error::runtime(format!(
                    "template variable `{name}` is not set"
                )));
            }
            Value::String(s) => out.push_str(&s.to_str()?),
            Value::Integer(i) => out.push_str(&i.to_string()),
            Value::Number(n) => out.push_str(&n.to_string()),
            Value::Boolean(b) => out.push_str(&b.to_string()),
            other => {
                return Err(mlua::Error::runtime(format!(
                    "template variable `{name}` is a {}, not text",
                    other.type_name()
                )));
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}
