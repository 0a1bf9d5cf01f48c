//! A request the provider refuses for good (here the real llama.cpp server's "exceeds the available
//! context size") ends the game void, or as the player's forfeit when it says so, and the
//! tournament finishes instead of setting the same game aside on every run.

use crate::common::{TestDir, local_llm, open_store, stderr, stdout};

/// A mode that plays the first legal move whatever the model says, and whose prompt outgrows the
/// local model's 4096-token context from ply 2 on.
const LONG_MODE: &str = r#"
local M = {}
M.defaults = { max_attempts = 1 }
function M.start(ctx)
  local words = ctx.ply < 2 and 20 or 6000
  return { { role = "user", content = string.rep("chess ", words) .. "\nYour move?" } }
end
function M.reply(ctx, text)
  return { move = ctx.legal_uci[1] }
end
return M
"#;

#[test]
fn a_prompt_over_the_real_models_context_ends_the_game_void_and_the_tournament_finishes() {
    let Some(url) = local_llm("a_prompt_over_the_real_models_context_ends_the_game_void") else {
        return;
    };
    let dir = TestDir::new();
    dir.write("modes/long.lua", LONG_MODE);
    let model = |name: &str, extra: &str| {
        format!(
            r#"arena.llm {{ name = "{name}", base_url = "{url}", model = "smollm2-135m-instruct",
               max_tokens = 2, max_concurrency = 1, timeout_s = 300, mode = "long", {extra} }}"#
        )
    };
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "t", games_per_pair = 1, max_plies = 20, concurrency = 1,
  players = {{
    {},
    {},
    arena.random {{ name = "random" }},
  }},
}}"#,
            model("voids", ""),
            model("forfeits", r#"on_rejected = "forfeit""#)
        ),
    );
    let out = dir.run("t.lua");
    assert_eq!(
        out.status.code(),
        Some(0),
        "nothing is set aside: {}",
        stderr(&out)
    );
    let standings = stdout(&out);
    assert!(standings.contains("void"), "{standings}");

    let store = open_store(&dir.db());
    let t = store.find_tournament("t").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert!(
        games
            .iter()
            .all(|g| g.termination.as_deref() == Some("context_exceeded")),
        "{games:?}"
    );
    let row = |name: &str| {
        store
            .standings(t.id)
            .unwrap()
            .into_iter()
            .find(|r| r.player == name)
            .unwrap()
    };
    let (voids, forfeits) = (row("voids"), row("forfeits"));
    // Against the random mover each model overflows at its second move; against each other
    // White overflows first (ply 2).
    assert_eq!((voids.voids, voids.games), (2, 0), "{voids:?}");
    assert_eq!(
        (forfeits.voids, forfeits.forfeits, forfeits.losses),
        (1, 1, 1),
        "{forfeits:?}"
    );
    let random = row("random");
    assert_eq!((random.voids, random.wins), (1, 1), "{random:?}");

    let listing = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--games", "--stats"])
        .output()
        .unwrap();
    let text = stdout(&listing);
    assert!(text.contains("void by context exceeded"), "{text}");
    assert!(text.contains("lost by context exceeded"), "{text}");
    assert!(text.contains("context exceeded"), "{text}");
    let pgn = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let pgn = stdout(&pgn);
    assert!(
        pgn.contains(
            "[Result \"*\"]\n[Termination \"abandoned\"]\n[ArenaTermination \"context_exceeded\"]"
        ),
        "{pgn}"
    );
}
