//! API keys never reach the store, the logs or the exports.

use crate::common::{TestDir, finished, local_llm, stderr, stdout};

#[test]
fn the_api_key_is_sent_but_never_stored_logged_or_exported() {
    let Some(url) = local_llm("the_api_key_is_sent_but_never_stored_logged_or_exported") else {
        return;
    };
    const SECRET: &str = "sk-arena-test-0123456789abcdefSECRET";
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "secrets", games_per_pair = 2, max_plies = 4, seed = 1,
  players = {{
    arena.llm {{ name = "keyed", base_url = "{url}", model = "smollm2-135m-instruct",
                 api_key_env = "ARENA_TEST_SECRET_KEY", max_tokens = 16, max_concurrency = 1,
                 options = {{ max_attempts = 1 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    let run = dir
        .arena()
        .args(["run", "t.lua", "--db", "t.db", "--no-watch"])
        .env("ARENA_TEST_SECRET_KEY", SECRET)
        .env("ARENA_LOG", "debug")
        .output()
        .unwrap();
    assert!(finished(run.status), "{}", stderr(&run));
    // The run says where the key goes (the variable and the host, never the value).
    let host = arena::llm::host_of(&url);
    assert!(
        stderr(&run).contains(&format!(
            "the key in `ARENA_TEST_SECRET_KEY` goes to {host}"
        )),
        "{}",
        stderr(&run)
    );
    let export = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--stats", "--format", "json"])
        .output()
        .unwrap();
    for (what, text) in [
        ("run stderr", stderr(&run)),
        ("run stdout", stdout(&run)),
        ("export", stdout(&export)),
        ("leaderboard", stdout(&board)),
    ] {
        assert!(!text.contains(SECRET), "the key leaked into the {what}");
    }
    // Every byte of the store, WAL included.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().contains("t.db") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "the key is in {}",
                path.display()
            );
        }
    }
    // The calls were made (with the key) and stored (without it).
    let store = crate::common::open_store(&dir.db());
    let t = store.find_tournament("secrets").unwrap().unwrap();
    assert!(store.totals(t.id).unwrap().llm_calls > 0);
}
