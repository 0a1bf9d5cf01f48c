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

use crate::common::{TestDir, llm_player, local_llm, open_store};

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
    assert!(status.success(), "{:?}", log.lock().unwrap());

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
