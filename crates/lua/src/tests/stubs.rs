//! The LuaLS stubs (`scripts/types/arena.lua`) document every field a script may set: each
//! class there lists exactly the fields the Rust spec struct behind it accepts.

use serde::de::DeserializeOwned;

use crate::{
    eval::spec::{BuildSpec, EvalSettings, TaskSpec},
    llm::Price,
    spec::{
        AnalysisSpec, EngineLimits, EnginePlayerSpec, LlmPlayerSpec, MoaPlayerSpec, ModelSpec,
        OpeningsSpec, RandomPlayerSpec, TournamentSettings,
        adjudication::{AdjudicationSpec, DrawRule, MoveLimitRule, ResignRule},
    },
};

/// The field names `T` accepts, read from serde itself: deserializing an unknown key into a
/// `deny_unknown_fields` struct fails with "unknown field `x`, expected one of `a`, `b`, ...",
/// so a field added to the struct is in the list without anyone updating this test.
fn serde_fields<T: DeserializeOwned>() -> Vec<String> {
    let err = serde_json::from_str::<T>(r#"{"__nope__": 1}"#)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    let (head, expected) = err.split_once("expected ").unwrap_or_else(|| {
        panic!(
            "{} must deny unknown fields, got {err:?}",
            std::any::type_name::<T>()
        )
    });
    assert!(head.starts_with("unknown field `__nope__`"), "{err}");
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// The `---@field` names of `---@class class` (the lines right after the class line).
fn stub_fields(stubs: &str, class: &str) -> Option<Vec<String>> {
    let header = format!("---@class {class}");
    let mut lines = stubs.lines().skip_while(|l| l.trim_end() != header);
    lines.next()?;
    Some(
        lines
            .map_while(|l| l.strip_prefix("---@field "))
            .map(|l| {
                let name = l.split_whitespace().next().unwrap_or_default();
                name.trim_end_matches('?').to_owned()
            })
            .collect(),
    )
}

#[test]
fn every_field_a_script_may_set_is_typed_in_arena_lua() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/types/arena.lua");
    let stubs = std::fs::read_to_string(path).unwrap();
    // (class, the struct's fields, fields the Lua side reads itself before serde sees the table).
    let tables: Vec<(&str, Vec<String>, &[&str])> = vec![
        (
            "arena.Tournament",
            serde_fields::<TournamentSettings>(),
            &["players"],
        ),
        ("arena.Openings", serde_fields::<OpeningsSpec>(), &[]),
        ("arena.Price", serde_fields::<Price>(), &[]),
        ("arena.Analysis", serde_fields::<AnalysisSpec>(), &[]),
        (
            "arena.Adjudication",
            serde_fields::<AdjudicationSpec>(),
            &[],
        ),
        ("arena.ResignRule", serde_fields::<ResignRule>(), &[]),
        ("arena.DrawRule", serde_fields::<DrawRule>(), &[]),
        ("arena.MoveLimitRule", serde_fields::<MoveLimitRule>(), &[]),
        ("arena.Llm", serde_fields::<LlmPlayerSpec>(), &[]),
        ("arena.Model", serde_fields::<ModelSpec>(), &[]),
        ("arena.Moa", serde_fields::<MoaPlayerSpec>(), &[]),
        ("arena.Engine", serde_fields::<EnginePlayerSpec>(), &[]),
        ("arena.EngineLimits", serde_fields::<EngineLimits>(), &[]),
        ("arena.Random", serde_fields::<RandomPlayerSpec>(), &[]),
        (
            "arena.Evaluation",
            serde_fields::<EvalSettings>(),
            &["tasks", "players"],
        ),
        ("arena.Task", serde_fields::<TaskSpec>(), &[]),
        ("arena.Build", serde_fields::<BuildSpec>(), &[]),
    ];
    let mut problems = Vec::new();
    for (class, fields, read_by_lua) in &tables {
        let Some(typed) = stub_fields(&stubs, class) else {
            problems.push(format!("no `---@class {class}`"));
            continue;
        };
        let accepted: Vec<&str> = fields
            .iter()
            .map(String::as_str)
            .chain(read_by_lua.iter().copied())
            .collect();
        for field in &accepted {
            if !typed.iter().any(|t| t == field) {
                problems.push(format!("{class} lacks `---@field {field}`"));
            }
        }
        for field in &typed {
            if !accepted.contains(&field.as_str()) {
                problems.push(format!(
                    "{class} documents `{field}`, which scripts cannot set"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{path}:\n{}", problems.join("\n"));
}
