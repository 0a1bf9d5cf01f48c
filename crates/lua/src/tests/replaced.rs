//! A player's `prompt` and `modules`: the files that stand in for its mode's modules, for that
//! player only, and `arena check`'s problems with them, each at its field's line.

use std::path::{Path, PathBuf};

use super::modes::mode;
use crate::{Generation, ModeScript, tournament::turn::PlayMode};

/// Words that build on blitz's: its system message and one more line.
const THINK: &str = r#"local blitz = require("prompts.blitz")
local P = {}
for k, v in pairs(blitz) do P[k] = v end
function P.system(ctx) return blitz.system(ctx) .. "\nThink in steps first." end
return P
"#;

/// Writes `files` (path, text) and the tournament `t.lua` with two blitz players, `plain` and
/// `think`; `think`'s table gets `extra` (Lua fields) on a line of its own.
fn tournament(dir: &Path, files: &[(&str, &str)], extra: &str) -> PathBuf {
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let script = dir.join("t.lua");
    std::fs::write(
        &script,
        format!(
            "return arena.tournament {{ name = \"t\", players = {{\n\
             arena.llm {{ name = \"plain\", base_url = \"http://127.0.0.1:9/v1\", model = \"x\" }},\n\
             arena.llm {{ name = \"think\", base_url = \"http://127.0.0.1:9/v1\", model = \"x\",\n\
             {extra}\n\
             }} }} }}\n"
        ),
    )
    .unwrap();
    script
}

/// The system message `player` of `generation` sends at the initial position.
fn system(generation: &Generation, player: &str) -> String {
    let binding = generation
        .spec
        .player(player)
        .unwrap()
        .mode_binding()
        .unwrap();
    let script = ModeScript::for_game(generation, binding).unwrap();
    let (_, ctx) = mode("blitz", "");
    let ctx = crate::tournament::turn::TurnContext {
        player: player.into(),
        options: script.options().clone(),
        ..ctx
    };
    script.start(&ctx).unwrap().messages[0].content.clone()
}

#[test]
fn a_players_prompt_stands_in_for_its_modes_words_and_for_no_one_elses() {
    let dir = tempfile::tempdir().unwrap();
    let script = tournament(
        dir.path(),
        &[("prompts/think.lua", THINK)],
        r#"prompt = "prompts/think.lua","#,
    );
    let generation = Generation::load(&script, 1).unwrap();
    let plain = system(&generation, "plain");
    let think = system(&generation, "think");
    // The replacement built on the module it stands in for, reached by its own name.
    assert_eq!(think, format!("{plain}\nThink in steps first."));
    assert!(plain.starts_with("You play chess as White"), "{plain}");
    assert_eq!(
        generation
            .replaced
            .get("think")
            .unwrap()
            .get("prompts.blitz"),
        Some(&"prompts.think".to_string())
    );
    assert!(!generation.replaced.contains_key("plain"));
    // Recorded with the generation (a resumed game rebuilds it) and watched (hot reload).
    assert!(
        generation
            .sources
            .files
            .keys()
            .any(|p| p.ends_with("prompts/think.lua"))
    );
    assert!(
        generation
            .watch
            .iter()
            .any(|p| p.ends_with("prompts/think.lua"))
    );
    // The same file as a dotted name, and through `modules`, reads alike.
    for extra in [
        r#"prompt = "prompts.think","#,
        r#"modules = { ["prompts.blitz"] = "prompts/think.lua" },"#,
    ] {
        let script = tournament(dir.path(), &[], extra);
        let generation = Generation::load(&script, 1).unwrap();
        assert_eq!(system(&generation, "think"), think, "{extra}");
    }
}

#[test]
fn a_game_rebuilt_from_the_recorded_sources_keeps_the_replaced_words() {
    let dir = tempfile::tempdir().unwrap();
    let script = tournament(
        dir.path(),
        &[("prompts/think.lua", THINK)],
        r#"prompt = "prompts/think.lua","#,
    );
    let generation = Generation::load(&script, 1).unwrap();
    let before = system(&generation, "think");
    std::fs::write(
        dir.path().join("prompts/think.lua"),
        THINK.replace("Think in steps first.", "Changed."),
    )
    .unwrap();
    let pinned = Generation::from_sources(&script, 1, generation.sources.clone()).unwrap();
    assert_eq!(system(&pinned, "think"), before);
    let reloaded = Generation::load(&script, 2).unwrap();
    assert!(system(&reloaded, "think").ends_with("\nChanged."));
    assert_ne!(reloaded.hash, generation.hash);
}

#[test]
fn check_reports_each_replacement_problem_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = tournament(
        dir.path(),
        &[("prompts/think.lua", THINK)],
        r#"prompt = "prompts/thinkk.lua","#,
    );
    let err = Generation::load(&script, 1).unwrap_err().to_string();
    assert!(err.contains("t.lua:4:"), "{err}");
    assert!(err.contains("player `think`"), "{err}");
    assert!(err.contains("`prompts/thinkk.lua`"), "{err}");
    assert!(err.contains("did you mean `prompts.think`"), "{err}");

    let script = tournament(
        dir.path(),
        &[],
        r#"modules = { ["parsers.mov"] = "prompts/think.lua" },"#,
    );
    let err = Generation::load(&script, 1).unwrap_err().to_string();
    assert!(err.contains("t.lua:4:"), "{err}");
    assert!(err.contains("never requires `parsers.mov`"), "{err}");
    assert!(err.contains("did you mean `parsers.move`"), "{err}");

    // A mode that names no prompt module cannot take a `prompt`.
    let mode = "local M = {}\nfunction M.start(ctx) return { { role = \"user\", content = \"go\" } } end\nfunction M.reply(ctx, text) return { move = \"e2e4\" } end\nreturn M\n";
    let script = tournament(
        dir.path(),
        &[("modes/plain_mode.lua", mode)],
        "mode = \"plain_mode\",\nprompt = \"prompts/think.lua\",",
    );
    let err = Generation::load(&script, 1).unwrap_err().to_string();
    assert!(err.contains("t.lua:5:"), "{err}");
    assert!(
        err.contains("mode `plain_mode` names no `prompt_module`"),
        "{err}"
    );
}
