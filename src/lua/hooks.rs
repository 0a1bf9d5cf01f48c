//! The one way a hook module is loaded, shared by play modes, task modules and formats: require
//! it, check that it is a table, fetch its hooks, and merge its `defaults` with the options the
//! script gives (an option the module does not declare is a typo and an error).

use mlua::{Function, Lua, LuaSerdeExt, Table, Value};

use super::{ScriptError, state};

/// Options as JSON: the module's `defaults` overlaid with the script's.
pub(super) type Options = serde_json::Map<String, serde_json::Value>;

/// A required module that returned a table of hooks.
pub(super) struct HookModule {
    /// What the module is, for messages: `play mode`, `task module`, `format`.
    what: &'static str,
    /// The module name as required.
    name: String,
    table: Table,
}

impl HookModule {
    /// Requires `module` in `lua`.
    ///
    /// # Errors
    /// An error while loading it, or a module that does not return a table.
    pub(super) fn require(
        lua: &Lua,
        module: &str,
        what: &'static str,
    ) -> Result<Self, ScriptError> {
        let require: Function = lua.globals().get("require")?;
        let value: Value = state::call(lua, &format!("`require(\"{module}\")`"), &require, module)?;
        let Value::Table(table) = value else {
            return Err(ScriptError::bare(format!(
                "{what} `{module}` must return a table of hooks, not {}",
                value.type_name()
            )));
        };
        Ok(HookModule {
            what,
            name: module.to_string(),
            table,
        })
    }

    /// The module name as required.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// The module's table, for fields other than hooks and defaults.
    pub(super) fn table(&self) -> &Table {
        &self.table
    }

    /// The hook `name`, which the module must have.
    ///
    /// # Errors
    /// A missing hook, or a field of that name that is not a function.
    pub(super) fn hook(&self, name: &str) -> Result<Function, ScriptError> {
        self.optional_hook(name)?.ok_or_else(|| {
            ScriptError::bare(format!(
                "{} `{}` has no `{name}` hook",
                self.what, self.name
            ))
        })
    }

    /// The hook `name` if the module has one.
    ///
    /// # Errors
    /// A field of that name that is not a function.
    pub(super) fn optional_hook(&self, name: &str) -> Result<Option<Function>, ScriptError> {
        match self.table.get::<Value>(name)? {
            Value::Function(f) => Ok(Some(f)),
            Value::Nil => Ok(None),
            other => Err(ScriptError::bare(format!(
                "{} `{}`: `{name}` must be a function, not {}",
                self.what,
                self.name,
                other.type_name()
            ))),
        }
    }

    /// The module's `defaults` overlaid with `given`.
    ///
    /// # Errors
    /// Malformed `defaults`, or an option in `given` that `defaults` does not declare.
    pub(super) fn options(&self, lua: &Lua, given: &Options) -> Result<Options, ScriptError> {
        let (what, module) = (self.what, &self.name);
        let defaults: Options = match self.table.get::<Value>("defaults")? {
            Value::Nil => Options::new(),
            v @ Value::Table(_) => lua.from_value(v).map_err(|e| {
                ScriptError::bare(format!("{what} `{module}`: bad `defaults`: {e}"))
            })?,
            other => {
                return Err(ScriptError::bare(format!(
                    "{what} `{module}`: `defaults` must be a table, not {}",
                    other.type_name()
                )));
            }
        };
        let mut merged = defaults.clone();
        for (key, value) in given {
            if !defaults.contains_key(key) {
                let known: Vec<&str> = defaults.keys().map(String::as_str).collect();
                return Err(ScriptError::bare(format!(
                    "{what} `{module}` has no option `{key}` (its options: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            merged.insert(key.clone(), value.clone());
        }
        Ok(merged)
    }
}
