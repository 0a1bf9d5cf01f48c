//! `manifest.json`, written beside every dataset export: what produced the rows (arena's version
//! and commit, the script generations with a hash of every file), who played (players with model,
//! provider, mode and settings), which engines analysed, the tournaments' settings, dates and
//! counts. The store never holds API keys (only the name of the variable that held one), so
//! neither does the manifest.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::store::{Store, StoreError, TournamentRow};

/// The commit arena was built from (`git rev-parse HEAD` at build time), if built from git.
pub const GIT_COMMIT: Option<&str> = option_env!("ARENA_GIT_COMMIT");

/// The manifest of an export of `tournaments`: `export` describes the export itself (its kind,
/// file, options and row count) and is copied in as is.
///
/// # Errors
/// When the store cannot be read.
pub fn manifest(
    store: &Store,
    tournaments: &[TournamentRow],
    export: Value,
) -> Result<Value, StoreError> {
    let mut entries = Vec::new();
    for t in tournaments {
        entries.push(tournament(store, t)?);
    }
    Ok(json!({
        "manifest_version": 1,
        "arena_version": env!("CARGO_PKG_VERSION"),
        "git_commit": GIT_COMMIT,
        "exported_at": now_utc(store)?,
        "export": export,
        "tournaments": entries,
    }))
}

fn tournament(store: &Store, t: &TournamentRow) -> Result<Value, StoreError> {
    let facts = store.tournament_facts(t.id)?;
    let players: Vec<Value> = store
        .players(t.id)?
        .into_iter()
        .map(|p| {
            let settings: Value = serde_json::from_str(&p.settings_json)
                .unwrap_or_else(|_| Value::String(p.settings_json.clone()));
            let field = |k: &str| settings.get(k).cloned().unwrap_or(Value::Null);
            json!({
                "name": p.name,
                "kind": p.kind,
                "model": field("model"),
                "provider": field("provider"),
                "base_url": field("base_url"),
                "mode": field("mode"),
                "mode_options": field("mode_options"),
                "engine": if p.kind == "engine" { engine_of(&settings) } else { Value::Null },
                "settings": settings,
            })
        })
        .collect();
    let mut generations = Vec::new();
    for (hash, generation, games) in &facts.generations {
        let files: Vec<Value> = store
            .scripts(hash)?
            .unwrap_or_default()
            .into_iter()
            .map(|(path, content)| {
                json!({
                    "path": path,
                    "sha256": format!("{:x}", Sha256::digest(content.as_bytes())),
                    "bytes": content.len(),
                })
            })
            .collect();
        generations.push(json!({
            "script_hash": hash, "generation": generation, "games": games, "files": files,
        }));
    }
    let analysis: Vec<Value> = facts
        .analysis_engines
        .iter()
        .map(|(engine, limits, win_model, plies)| {
            json!({ "engine": engine, "limits": limits, "win_model": win_model, "plies": plies })
        })
        .collect();
    let settings: Value = serde_json::from_str(&t.settings_json)
        .unwrap_or_else(|_| Value::String(t.settings_json.clone()));
    Ok(json!({
        "name": t.name,
        "script_path": t.script_path,
        "settings": settings,
        "players": players,
        "script_generations": generations,
        "analysis_engines": analysis,
        "dates": {
            "created_at": t.created_at,
            "first_game_started_at": facts.first_started_at,
            "last_game_finished_at": facts.last_finished_at,
        },
        "counts": {
            "games": facts.games,
            "finished_games": facts.finished_games,
            "plies": facts.plies,
            "analysed_plies": facts.analysed_plies,
            "llm_calls": facts.calls,
        },
    }))
}

/// What the store knows of an engine player: its command and options as configured (the engine's
/// own `id name` is not stored for players; analysis engines carry theirs in `analysis_engines`).
fn engine_of(settings: &Value) -> Value {
    let pick = |k: &str| settings.get(k).cloned().unwrap_or(Value::Null);
    let command = settings
        .get("command")
        .or_else(|| settings.get("path"))
        .cloned();
    json!({ "command": command, "args": pick("args"), "options": pick("options"),
            "limits": pick("limits") })
}

/// The current time as the store prints its dates (no clock crate needed for one timestamp).
fn now_utc(store: &Store) -> Result<String, StoreError> {
    store.now_utc()
}
