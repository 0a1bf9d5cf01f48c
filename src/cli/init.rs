//! `arena init`: a first tournament that runs as it is, set up for editing.
//!
//! It writes a small commented `tournament.lua` (the local model, Stockfish at a fixed node count,
//! the random mover), a `.luarc.json` that points lua-language-server at the API stubs (written
//! beside it under `types/`, since a release binary carries no source tree), and with `--eject
//! MODE` a copy of a built-in play mode and of the prompt and parser modules it requires, beside
//! the script: modules in the script's folder are found before the built-ins, so the copies are
//! what runs, ready to edit.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The API stubs lua-language-server reads (`---@meta`).
const API_STUBS: &str = include_str!("../../scripts/types/arena.lua");

/// The model server a fresh setup talks to (the README's local model).
const DEFAULT_MODEL_URL: &str = "http://127.0.0.1:8765/v1";

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The folder to write into (created if missing; default: the current folder).
    dir: Option<PathBuf>,
    /// Base URL of the OpenAI-compatible server of the model player (default: LOCAL_LLM_URL, else
    /// http://127.0.0.1:8765/v1).
    #[arg(long, value_name = "URL")]
    model: Option<String>,
    /// Copy this built-in play mode (with the prompts and parsers it requires) beside the script
    /// and make the model player use it: `blitz`, `bullet`, `standard`, `blindfold`, `agentic`.
    #[arg(long, value_name = "MODE")]
    eject: Option<String>,
}

pub(super) async fn run(args: &Args) -> anyhow::Result<u8> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let script = dir.join("tournament.lua");
    if script.exists() {
        bail!(
            "{} exists already; arena init writes only into a folder without one",
            script.display()
        );
    }
    let url = args
        .model
        .clone()
        .or_else(|| std::env::var("LOCAL_LLM_URL").ok())
        .unwrap_or_else(|| DEFAULT_MODEL_URL.to_string());
    // The name the server lists, when it answers; llama.cpp answers any name anyway.
    let model = served_model(&url)
        .await
        .unwrap_or_else(|| "local".to_string());
    let mut written = Vec::new();
    let mode = match &args.eject {
        Some(mode) => {
            written.extend(eject(&dir, mode)?);
            mode.clone()
        }
        None => "blitz".to_string(),
    };
    write(
        &script,
        &tournament(&url, &model, &mode, args.eject.is_some()),
    )?;
    written.push(script.clone());
    let types = dir.join("types/arena.lua");
    write(&types, API_STUBS)?;
    written.push(types);
    let luarc = dir.join(".luarc.json");
    write(&luarc, LUARC)?;
    written.push(luarc);
    for path in &written {
        println!("wrote {}", path.display());
    }
    println!(
        "next: arena check {0}, then arena run {0}",
        script.display()
    );
    Ok(0)
}

/// lua-language-server's settings: Lua 5.4, the stubs as a library, `arena` a known global.
const LUARC: &str = r#"{
  "$schema": "https://raw.githubusercontent.com/LuaLS/vscode-lua/master/setting/schema.json",
  "runtime.version": "Lua 5.4",
  "workspace.library": ["types"],
  "diagnostics.globals": ["arena"]
}
"#;

/// The first model `url` lists (`GET {url}/models`), if it answers within a few seconds.
async fn served_model(url: &str) -> Option<String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(3))
        .build()
        .ok()?;
    let reply = http
        .get(format!("{}/models", url.trim_end_matches('/')))
        .send()
        .await
        .ok()?;
    let body: serde_json::Value = reply.json().await.ok()?;
    body["data"][0]["id"].as_str().map(str::to_string)
}

fn tournament(url: &str, model: &str, mode: &str, ejected: bool) -> String {
    let mode_note = if ejected {
        format!(
            "-- `{mode}` is the copy in modes/{mode}.lua beside this file: edit it, its prompts and parser."
        )
    } else {
        "-- Modes: blitz, bullet, standard, blindfold, agentic (`arena init --eject blitz` copies one to edit).".to_string()
    };
    format!(
        r#"-- A first tournament: a language model, Stockfish and a random mover play each other.
-- Check it with `arena check tournament.lua`, run it with `arena run tournament.lua`, then read
-- the results with `arena leaderboard` and `arena report`. Every field is described in
-- types/arena.lua (an editor with lua-language-server completes them, see .luarc.json).
return arena.tournament {{
  name = "first",
  games_per_pair = 2, -- each pair plays both colours
  max_plies = 40, -- a short game is drawn after 40 plies (20 moves each)
  seed = 1, -- the random mover's seed: the same seed replays the same games
  players = {{
    -- An OpenAI-compatible server: llama.cpp, vLLM, Ollama, or a provider with `api_key_env`.
    arena.llm {{
      name = "model",
      base_url = "{url}",
      model = "{model}", -- the model name the server expects
      max_tokens = 256,
      {mode_note}
      mode = "{mode}",
      options = {{ max_attempts = 3 }},
    }},
    -- Stockfish searching a fixed number of nodes per move: reproducible, unlike `Skill Level`.
    arena.engine {{ name = "stockfish-1k", command = "stockfish", limits = {{ nodes = 1000 }} }},
    -- Uniformly random legal moves: the floor of every rating.
    arena.random {{ name = "random" }},
  }},
}}
"#
    )
}

/// Copies the built-in mode `mode` and every built-in module it requires (its prompts and
/// parsers) into `dir`, under the same names, so that they override the built-ins.
fn eject(dir: &Path, mode: &str) -> anyhow::Result<Vec<PathBuf>> {
    let first = format!("modes/{mode}.lua");
    if arena::lua::builtin_source(&first).is_none() {
        bail!(
            "no built-in play mode `{mode}` (the built-in modes: blitz, bullet, standard, blindfold, agentic)"
        );
    }
    let require =
        regex::Regex::new(r#"require\s*\(?\s*["']([A-Za-z0-9_.]+)["']"#).expect("a valid pattern");
    let mut queue = vec![first];
    let mut written = Vec::new();
    while let Some(rel) = queue.pop() {
        let target = dir.join(&rel);
        if target.exists() || written.contains(&target) {
            continue;
        }
        let Some(text) = arena::lua::builtin_source(&rel) else {
            continue;
        };
        for found in require.captures_iter(&text) {
            let module = &found[1];
            if module != "arena" {
                queue.push(format!("{}.lua", module.replace('.', "/")));
            }
        }
        write(&target, &text)?;
        written.push(target);
    }
    Ok(written)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
