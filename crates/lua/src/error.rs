//! Lua errors turned into [`ScriptError`]s that point at `file:line`.

pub use crate::script::ScriptError;

/// Converts an mlua error, moving Lua's own `chunk:line:` prefix into [`ScriptError::location`]
/// and dropping mlua's internal frames, so that users read `file:line: message`.
pub(crate) fn from_lua(err: &mlua::Error) -> ScriptError {
    let text = innermost_message(err);
    split_location(&text)
}

/// [`from_lua`] for `map_err`: the domain's [`ScriptError`] lives in the chess core, which knows
/// nothing of mlua, so the conversion is spelled out where a Lua error leaves the script host.
pub fn script_error(err: mlua::Error) -> ScriptError {
    from_lua(&err)
}

/// The message of the error that started it all: callback errors wrap the real cause, and their
/// tracebacks are noise for a prompt author.
fn innermost_message(err: &mlua::Error) -> String {
    match err {
        mlua::Error::CallbackError { cause, .. } => innermost_message(cause),
        mlua::Error::WithContext { context, cause } => {
            format!("{context}: {}", innermost_message(cause))
        }
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::MemoryError(message) => format!("out of memory: {message}"),
        mlua::Error::ExternalError(e) => e.to_string(),
        other => other.to_string(),
    }
    .lines()
    .take_while(|line| !line.starts_with("stack traceback:"))
    .collect::<Vec<_>>()
    .join("\n")
}

/// Splits `"path/to/file.lua:12: message"` into its location and message.
fn split_location(text: &str) -> ScriptError {
    let text = text.trim();
    let mut parts = text.splitn(3, ':');
    if let (Some(file), Some(line), Some(rest)) = (parts.next(), parts.next(), parts.next())
        && !file.is_empty()
        && !file.contains(' ')
        && line.chars().all(|c| c.is_ascii_digit())
        && !line.is_empty()
    {
        return ScriptError::at(format!("{file}:{line}"), rest.trim_start());
    }
    ScriptError::bare(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_is_split_from_lua_messages() {
        let e = split_location("tournaments/q.lua:12: attempt to index a nil value");
        assert_eq!(e.location.as_deref(), Some("tournaments/q.lua:12"));
        assert_eq!(e.message, "attempt to index a nil value");
        assert_eq!(
            e.to_string(),
            "tournaments/q.lua:12: attempt to index a nil value"
        );
    }

    #[test]
    fn messages_without_location_stay_whole() {
        let e = split_location("not enough memory");
        assert_eq!(e.location, None);
        assert_eq!(e.message, "not enough memory");
    }

    #[test]
    fn syntax_errors_keep_their_location() {
        let lua = mlua::Lua::new();
        let err = lua
            .load("local x = = 1")
            .set_name("@modes/broken.lua")
            .exec()
            .unwrap_err();
        let e = from_lua(&err);
        assert_eq!(e.location.as_deref(), Some("modes/broken.lua:1"));
        assert!(e.message.contains("unexpected symbol"), "{e}");
    }

    #[test]
    fn runtime_errors_in_callbacks_name_the_script_line() {
        let lua = mlua::Lua::new();
        let f = lua
            .create_function(|_, ()| -> mlua::Result<()> { Err(mlua::Error::runtime("boom")) })
            .unwrap();
        lua.globals().set("f", f).unwrap();
        let err = lua
            .load("local a = 1\nerror('bad thing')")
            .set_name("@x.lua")
            .exec()
            .unwrap_err();
        assert_eq!(from_lua(&err).to_string(), "x.lua:2: bad thing");
        let err = lua.load("f()").set_name("@y.lua").exec().unwrap_err();
        assert!(from_lua(&err).message.contains("boom"));
    }
}
