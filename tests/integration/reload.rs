//! Hot reload mid-tournament: a broken save is reported with `file:line` and ignored, a good save
//! becomes a new generation for the games that start after it, and no game is lost or restarted.

use std::{
    io::{BufRead, BufReader},
    process::Stdio,
    sync::{Arc, Mutex},
    thread::sleep,
    time::{Duration, Instant},
};

use arena::store::{GameStatus, Store};

use crate::common::{TestDir, finished, llm_player, local_llm, open_store};

const MARKER: &str = "RELOAD-MARKER";

fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(600);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        sleep(Duration::from_millis(100));
    }
}

fn finished_games(dir: &TestDir) -> usize {
    let Ok(store) = Store::open(&dir.db()) else {
        return 0;
    };
    let Ok(Some(t)) = store.find_tournament("reload") else {
        return 0;
    };
    store
        .games(t.id)
        .map(|g| {
            g.iter()
                .filter(|g| g.status == GameStatus::Finished)
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn prompts_reload_between_games_and_broken_saves_are_ignored() {
    let Some(url) = local_llm("prompts_reload_between_games_and_broken_saves_are_ignored") else {
        return;
    };
    let dir = TestDir::new();
    let builtin = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/prompts/blitz.lua"),
    )
    .unwrap();
    let prompt = dir.write("prompts/blitz.lua", &builtin);
    let model = llm_player(&url, "smol", "max_attempts = 1");
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "reload", games_per_pair = 16, max_plies = 4, seed = 4, concurrency = 1,
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let mut child = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let reader = {
        let log = log.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                log.lock().unwrap().push(line);
            }
        })
    };
    let logged = |needle: &str| log.lock().unwrap().iter().any(|l| l.contains(needle));

    wait_for("a first finished game", || finished_games(&dir) >= 1);
    std::fs::write(&prompt, format!("{builtin}\nlocal = 1\n")).unwrap();
    wait_for("the broken save to be rejected", || {
        logged("reload rejected, keeping script generation 1")
    });
    assert!(logged("prompts/blitz.lua:"), "{:?}", log.lock().unwrap());

    std::fs::write(
        &prompt,
        builtin.replace("You play chess as", &format!("{MARKER} You play chess as")),
    )
    .unwrap();
    wait_for("the good save to be loaded", || {
        logged("scripts reloaded: generation 2")
    });
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(finished(status), "{:?}", log.lock().unwrap());

    let store = open_store(&dir.db());
    let t = store.find_tournament("reload").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 16);
    let mut by_generation = [0, 0];
    for g in &games {
        assert_eq!(g.status, GameStatus::Finished, "no game is lost");
        let generation = g.generation.expect("every game records its generation");
        assert!(generation == 1 || generation == 2, "{g:?}");
        by_generation[generation as usize - 1] += 1;
        // A game keeps the prompt it started with, on every one of its calls.
        for ply in 0..=g.ply_count {
            for c in store.llm_calls(g.id, ply).unwrap() {
                assert_eq!(
                    c.call.request_json.contains(MARKER),
                    generation == 2,
                    "game {} (generation {generation}) sent the wrong prompt",
                    g.index
                );
            }
        }
    }
    assert!(
        by_generation[0] >= 1 && by_generation[1] >= 1,
        "{by_generation:?}"
    );
    let hashes: std::collections::BTreeSet<_> =
        games.iter().map(|g| g.script_hash.clone()).collect();
    assert_eq!(
        hashes.len(),
        2,
        "each generation is identified by its script hash"
    );
}

/// A prompt that passes the checks (which try the initial position) but fails later in play.
const FAILS_IN_PLAY: &str = r#"local P = {}

function P.system(ctx)
  return "You play chess."
end

function P.position(ctx)
  if ctx.move_number > 2 then error("no prompt past move 2") end
  return "The position (FEN): " .. ctx.fen .. "\nLegal moves: " .. table.concat(ctx.legal_uci, " ")
end

return P
"#;

#[test]
fn a_script_that_fails_in_play_is_reported_once_and_its_games_resume_under_the_fix() {
    let fake = crate::common::fake_openai(0);
    let dir = TestDir::new();
    dir.write(
        "modes/coach.lua",
        r#"local prompts = require("prompts.coach")
local parser = require("parsers.move")
local M = {}
M.defaults = { max_attempts = 2, parser = "chessarena" }
function M.start(ctx)
  return { { role = "system", content = prompts.system(ctx) },
           { role = "user", content = prompts.position(ctx) } }
end
M.reply = parser.decide
return M
"#,
    );
    let prompt = dir.write("prompts/coach.lua", FAILS_IN_PLAY);
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "fails", games_per_pair = 2, max_plies = 8, seed = 2, concurrency = 1,
  players = {{
    arena.llm {{ name = "a", model = "fake", base_url = "{url}", mode = "coach" }},
    arena.llm {{ name = "b", model = "fake", base_url = "{url}", mode = "coach" }},
    arena.random {{ name = "rnd" }},
  }},
}}"#,
            url = fake.url
        ),
    );

    // Every game meets the broken line: one full report of it, and one summary line.
    let out = dir.run("t.lua");
    let err = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let reports: Vec<&str> = err.lines().filter(|l| l.contains("ERROR")).collect();
    assert_eq!(reports.len(), 1, "{err}");
    assert!(
        reports[0].contains("script error: player `")
            && reports[0].contains("prompts/coach.lua:8: no prompt past move 2"),
        "{err}"
    );
    assert!(
        err.contains(
            "6 games (1, 2, 3, 4, 5, 6): players `a`, `b`: prompts/coach.lua:8: no prompt past move 2 (script error)"
        ),
        "{err}"
    );
    assert_eq!(err.matches("no prompt past move 2").count(), 2, "{err}");

    // The fix: the set-aside games resume under it (under their own scripts they would fail at
    // the same ply again), and each game's record names the scripts it finished under.
    std::fs::write(
        &prompt,
        FAILS_IN_PLAY.replace("ctx.move_number > 2", "false"),
    )
    .unwrap();
    let out = dir.run("t.lua");
    let err = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.matches("resumes under the newest ones").count(),
        1,
        "{err}"
    );
    let store = open_store(&dir.db());
    let t = store.find_tournament("fails").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6);
    let hashes: std::collections::BTreeSet<_> =
        games.iter().map(|g| g.script_hash.clone()).collect();
    assert_eq!(hashes.len(), 1, "{games:?}");
    for g in &games {
        assert_eq!(g.status, GameStatus::Finished, "{g:?}");
        assert!(
            g.ply_count > 4,
            "game {} went on from where it stopped",
            g.index
        );
    }
    let moved = store
        .events(t.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "game_rescripted")
        .count();
    assert_eq!(moved, 6);
}
