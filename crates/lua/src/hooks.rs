//! The one way a hook module is loaded, shared by play modes, task modules and formats: require
//! it, check that it is a table, fetch its hooks, and merge its `defaults` with the options the
//! script gives (an option the module does not declare is a typo and an error).

use mlua::{Function, Lua, LuaSerdeExt, Table, Value};

use super::{ScriptError, error::script_error, state};

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
        let require: Function = lua.globals().get("require").map_err(script_error)?;
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
        match self.table.get::<Value>(name).map_err(script_error)? {
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

    /// Every problem with the options `given` to this module, as (option, message): an option
    /// its `defaults` do not declare (with the closest name), a value of another type than its
    /// default (a number for a number, true or false for a boolean, text for text, which may
    /// also be a table), and a text value outside the module's `choices` for that option (with
    /// the closest choice). Malformed `defaults` are left to [`HookModule::options`].
    pub(super) fn option_problems(&self, lua: &Lua, given: &Options) -> Vec<(String, String)> {
        let (what, module) = (self.what, &self.name);
        let Ok(Value::Table(defaults)) = self.table.get::<Value>("defaults") else {
            return Vec::new();
        };
        let Ok(defaults) = lua.from_value::<Options>(Value::Table(defaults)) else {
            return Vec::new();
        };
        let choices: Options = match self.table.get::<Value>("choices") {
            Ok(v @ Value::Table(_)) => lua.from_value(v).unwrap_or_default(),
            _ => Options::new(),
        };
        let known: Vec<&str> = defaults.keys().map(String::as_str).collect();
        let mut problems = Vec::new();
        for (key, value) in given {
            let Some(default) = defaults.get(key) else {
                let hint = match super::strict::did_you_mean(key, &known) {
                    Some(m) => format!("; did you mean `{m}`?"),
                    None => format!(
                        " (its options: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                };
                problems.push((
                    key.clone(),
                    format!("{what} `{module}` has no option `{key}`{hint}"),
                ));
                continue;
            };
            use serde_json::Value as J;
            let expected = match (default, value) {
                (J::Number(d), J::Number(v)) if d.is_f64() || v.is_i64() || v.is_u64() => None,
                (J::Number(d), _) if d.is_f64() => Some("a number"),
                (J::Number(_), _) => Some("a whole number"),
                (J::Bool(_), J::Bool(_)) => None,
                (J::Bool(_), _) => Some("true or false"),
                (J::String(_), J::String(_) | J::Object(_)) => None,
                (J::String(_), _) => Some("text"),
                _ => None,
            };
            if let Some(expected) = expected {
                problems.push((
                    key.clone(),
                    format!(
                        "option `{key}` must be {expected} (its default is {default}), not {}",
                        json_words(value)
                    ),
                ));
                continue;
            }
            if let (Some(J::Array(allowed)), J::String(v)) = (choices.get(key), value) {
                let allowed: Vec<&str> = allowed.iter().filter_map(J::as_str).collect();
                if !allowed.is_empty() && !allowed.contains(&v.as_str()) {
                    let listed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                    let hint = super::strict::did_you_mean(v, &allowed)
                        .map(|m| format!("; did you mean \"{m}\"?"))
                        .unwrap_or_default();
                    problems.push((
                        key.clone(),
                        format!(
                            "option `{key}` cannot be \"{v}\" (it is one of {}){hint}",
                            super::strict::or_list(&listed)
                        ),
                    ));
                }
            }
        }
        problems
    }

    /// The module's `defaults` overlaid with `given`.
    ///
    /// # Errors
    /// Malformed `defaults`, or an option in `given` that `defaults` does not declare.
    pub(super) fn options(&self, lua: &Lua, given: &Options) -> Result<Options, ScriptError> {
        let (what, module) = (self.what, &self.name);
        let defaults: Options = match self.table.get::<Value>("defaults").map_err(script_error)? {
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
                let hint = super::strict::did_you_mean(key, &known)
                    .map(|m| format!("; did you mean `{m}`?"))
                    .unwrap_or_default();
                return Err(ScriptError::bare(format!(
                    "{what} `{module}` has no option `{key}` (its options: {}){hint}",
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

/// A JSON value as a script author would name it.
fn json_words(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => format!("the text \"{s}\""),
        serde_json::Value::Object(_) => "a table".into(),
        serde_json::Value::Array(_) => "a list".into(),
        other => other.to_string(),
    }
}
