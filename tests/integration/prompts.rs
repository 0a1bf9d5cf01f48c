//! A prompt per player, end to end: `examples/think/` (the baseline `plain` and the arm `think`,
//! which differs by `prompt = "prompts/think.lua"`) checked, shown by `arena prompt`, played
//! against `examples/fake_openai.rs`, and run again after its prompt changed.

use std::path::{Path, PathBuf};

use crate::common::{TestDir, fake_openai, json_rows, open_store, stderr, stdout};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The golden file of `player`'s messages in `scene` (written by the golden prompt test,
/// `ARENA_BLESS=1 cargo test --lib golden`).
fn golden(player: &str, scene: &str) -> String {
    let path = root().join(format!(
        "tests/fixtures/prompts/examples/think/{player}/{scene}.txt"
    ));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Ruy Lopez of the golden files' middlegame scene.
const RUY_LOPEZ: &str = "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7 f1e1";

#[test]
fn the_example_checks_and_arena_prompt_prints_each_arms_golden_messages() {
    let dir = TestDir::new();
    let check = dir
        .arena()
        .arg("check")
        .arg(root().join("examples/think/tournament.lua"))
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
    for player in ["plain", "think"] {
        for (scene, moves) in [("opening", None), ("middlegame", Some(RUY_LOPEZ))] {
            let mut cmd = dir.arena();
            cmd.arg("prompt")
                .arg(root().join("examples/think/tournament.lua"))
                .args(["--player", player]);
            if let Some(moves) = moves {
                cmd.args(["--moves", moves]);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(stdout(&out), golden(player, scene), "{player} {scene}");
            if player == "think" {
                assert!(
                    stderr(&out).contains("prompts.think for prompts.blitz"),
                    "{}",
                    stderr(&out)
                );
            }
        }
    }
    // Another position by FEN, Black to move.
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let out = dir
        .arena()
        .arg("prompt")
        .arg(root().join("examples/think/tournament.lua"))
        .args(["--player", "think", "--fen", fen])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("You play chess as Black"), "{text}");
    assert!(
        text.contains(&format!("The position (FEN): {fen}")),
        "{text}"
    );
    assert!(text.contains("think in three numbered steps"), "{text}");
    // An engine or random mover is sent nothing; an unknown player names the players.
    let out = dir
        .arena()
        .arg("prompt")
        .arg(root().join("examples/think/tournament.lua"))
        .args(["--player", "nobody"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`plain`, `think`"),
        "{}",
        stderr(&out)
    );
}

/// Copies `examples/think/` into `dir`, its players pointed at `url`, `games` games per arm.
fn copy_example(dir: &TestDir, url: &str, games: u32) {
    let example = root().join("examples/think");
    let script = std::fs::read_to_string(example.join("tournament.lua"))
        .unwrap()
        .replace("http://127.0.0.1:8765/v1", url)
        .replace("games = 10", &format!("games = {games}"))
        .replace("max_plies = 40", "max_plies = 6");
    assert!(script.contains(url) && script.contains(&format!("games = {games}")));
    dir.write("think/tournament.lua", &script);
    dir.write(
        "think/prompts/think.lua",
        &std::fs::read_to_string(example.join("prompts/think.lua")).unwrap(),
    );
}

/// The request `player` sent at the first ply of its first game as White, as stored.
fn first_request(db: &Path, tournament: &str, player: &str) -> serde_json::Value {
    let store = open_store(db);
    let t = store.find_tournament(tournament).unwrap().unwrap();
    let game = store
        .games(t.id)
        .unwrap()
        .into_iter()
        .find(|g| g.white == player)
        .unwrap_or_else(|| panic!("no game with {player} as White"));
    let calls = store.llm_calls(game.id, 0).unwrap();
    serde_json::from_str(&calls[0].call.request_json).unwrap()
}

#[test]
fn two_arms_differing_by_their_prompt_send_requests_that_differ_by_it_alone() {
    let fake = fake_openai(0);
    let dir = TestDir::new();
    copy_example(&dir, &fake.url, 2);
    let out = dir.run("think/tournament.lua");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("think vs plain:"), "{}", stdout(&out));
    let plain = first_request(&dir.db(), "think-in-steps", "plain");
    let think = first_request(&dir.db(), "think-in-steps", "think");
    // The same position, model and settings: only the system message's text differs, by the
    // three steps the prompt file adds.
    let system = |r: &serde_json::Value| r["messages"][0]["content"].as_str().unwrap().to_string();
    let (p, t) = (system(&plain), system(&think));
    let added = t
        .strip_prefix(&p)
        .unwrap_or_else(|| panic!("{t}\n---\n{p}"));
    assert!(
        added.starts_with("\nBefore the fenced move, think in three numbered steps"),
        "{added}"
    );
    let without_system = |mut r: serde_json::Value| {
        r["messages"][0]["content"] = serde_json::Value::Null;
        r
    };
    assert_eq!(without_system(plain.clone()), without_system(think.clone()));
    assert_ne!(plain, think);
}

#[test]
fn a_finished_experiment_run_again_after_its_prompt_changed_says_what_changed() {
    let fake = fake_openai(0);
    let dir = TestDir::new();
    copy_example(&dir, &fake.url, 2);
    let first = dir.run("think/tournament.lua");
    assert!(first.status.success(), "{}", stderr(&first));
    let verdict = |o: &std::process::Output| stdout(o).contains("think vs plain:");
    assert!(verdict(&first), "{}", stdout(&first));

    // Unchanged: today's behaviour, the finished result again.
    let again = dir.run("think/tournament.lua");
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(verdict(&again), "{}", stdout(&again));

    // The prompt edited: refused, naming the file and its hashes, without the old verdict.
    let prompt = dir.path().join("think/prompts/think.lua");
    let text = std::fs::read_to_string(&prompt).unwrap();
    std::fs::write(
        &prompt,
        text.replace("three numbered steps", "two numbered steps"),
    )
    .unwrap();
    let refused = dir.run("think/tournament.lua");
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(4), "{err}");
    assert!(!verdict(&refused), "{}", stdout(&refused));
    let line = err
        .lines()
        .find(|l| l.contains("think/prompts/think.lua: "))
        .unwrap_or_else(|| panic!("no changed file in:\n{err}"));
    let hashes: Vec<&str> = line.rsplit(": ").next().unwrap().split(" → ").collect();
    assert_eq!(hashes.len(), 2, "{line}");
    assert!(hashes.iter().all(|h| h.len() == 12), "{line}");
    assert_ne!(hashes[0], hashes[1]);
    assert!(err.contains("--new-version"), "{err}");
    assert!(
        !err.contains("tournament.lua: "),
        "only the prompt changed: {err}"
    );

    // `--new-version` plays version 2 under the new words, in the same store.
    let v2 = dir
        .arena()
        .args([
            "run",
            "think/tournament.lua",
            "--db",
            "t.db",
            "--no-watch",
            "--new-version",
        ])
        .output()
        .unwrap();
    assert!(v2.status.success(), "{}", stderr(&v2));
    assert!(verdict(&v2), "{}", stdout(&v2));
    assert!(
        stdout(&v2).contains("experiment versions"),
        "{}",
        stdout(&v2)
    );
    let report = std::fs::read_to_string(dir.path().join("t.html")).unwrap();
    assert!(
        report.contains("experiment versions"),
        "the report compares the versions too"
    );
    let think = first_request(&dir.db(), "think-in-steps@v2", "think");
    assert!(
        think["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("two numbered steps")
    );
    let store = open_store(&dir.db());
    let v1 = store.find_tournament("think-in-steps").unwrap().unwrap();
    let v2_row = store.find_tournament("think-in-steps@v2").unwrap().unwrap();
    assert_eq!(
        store.games(v1.id).unwrap().len(),
        store.games(v2_row.id).unwrap().len()
    );

    // The leaderboard compares the versions side by side.
    let lb = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--tournament",
            "think-in-steps",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(lb.status.success(), "{}", stderr(&lb));
    let json: serde_json::Value = serde_json::from_slice(&lb.stdout).unwrap();
    crate::ratings::assert_valid(
        &crate::ratings::json_schema(),
        &json,
        "arena leaderboard --format json",
    );
    let rows = json_rows(&json, "experiment_versions");
    let versions: Vec<(u64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["version"].as_u64().unwrap(),
                r["variant"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(versions, [(1, "think"), (2, "think")], "{rows:?}");
    assert_ne!(rows[0]["scripts"], rows[1]["scripts"]);
    assert_eq!(rows[1]["tournament"], "think-in-steps@v2");

    // Unchanged since version 2: shown again, as any finished tournament.
    let again = dir.run("think/tournament.lua");
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(verdict(&again), "{}", stdout(&again));
}

/// The file a player's `prompt` names is watched like the mode's own: saved while the
/// tournament runs, it is the next games' words (a hot reload), and the games before keep theirs.
#[test]
fn a_players_prompt_file_saved_mid_run_is_the_next_games_words() {
    const MARKER: &str = "PROMPT-RELOAD-MARKER";
    let fake = fake_openai(150);
    let dir = TestDir::new();
    let think = std::fs::read_to_string(root().join("examples/think/prompts/think.lua")).unwrap();
    let prompt = dir.write("prompts/think.lua", &think);
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "reload-prompt", games_per_pair = 20, max_plies = 4, concurrency = 1,
  players = {{
    arena.llm {{ name = "think", base_url = "{}", model = "fake", prompt = "prompts/think.lua" }},
    arena.random {{ name = "random" }},
  }},
}}"#,
            fake.url
        ),
    );
    let mut child = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let finished = || {
        let Ok(store) = arena::store::Store::open_read_only(&dir.db()) else {
            return 0;
        };
        let Ok(Some(t)) = store.find_tournament("reload-prompt") else {
            return 0;
        };
        store.totals(t.id).map_or(0, |t| t.games_finished)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while finished() < 1 {
        assert!(std::time::Instant::now() < deadline, "no game finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::fs::write(
        &prompt,
        think.replace("1. What does", &format!("{MARKER} 1. What does")),
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
    let store = open_store(&dir.db());
    let t = store.find_tournament("reload-prompt").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let sent = |index: usize| -> String {
        let game = &games[index];
        let ply = u32::from(game.white != "think");
        store.llm_calls(game.id, ply).unwrap()[0]
            .call
            .request_json
            .clone()
    };
    assert!(!sent(0).contains(MARKER), "the first game kept its words");
    assert!(sent(0).contains("three numbered steps"));
    assert!(
        sent(games.len() - 1).contains(MARKER),
        "the last game has the saved words"
    );
}

/// `arena check` names a prompt file that is not there at the line of the player's `prompt`.
#[test]
fn check_names_a_missing_prompt_file_at_its_line() {
    let dir = TestDir::new();
    dir.write("prompts/think.lua", "return require('prompts.blitz')\n");
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  players = {
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x",
      prompt = "prompts/thnik.lua" },
    arena.random { name = "r" },
  },
}
"#,
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("t.lua:5: player `m`: `prompts/thnik.lua`"),
        "{text}"
    );
    assert!(text.contains("did you mean `prompts.think`"), "{text}");
}
