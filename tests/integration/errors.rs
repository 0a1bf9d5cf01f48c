//! Bad input stops `arena run` with one clear message and exit code 2, before any game, and never
//! touches a store that already holds games.

use crate::common::{TestDir, open_store, stderr};

fn random_pair(extra: &str) -> String {
    format!(
        r#"return arena.tournament {{
  name = "t", games_per_pair = 2, max_plies = 20, {extra}
  players = {{
    arena.random {{ name = "a" }},
    arena.random {{ name = "b", seed = 5 }},
  }},
}}"#
    )
}

#[test]
fn an_unreachable_model_is_named_before_any_game() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.llm { name = "offline-model", base_url = "http://127.0.0.1:9/v1", model = "x" },
} }"#,
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("t.lua:3: player `offline-model`"), "{err}");
    assert!(err.contains("http://127.0.0.1:9/v1"), "{err}");
    assert!(
        !dir.db().exists(),
        "nothing is stored for a tournament that cannot start"
    );
}

#[test]
fn a_missing_engine_binary_is_named_before_any_game() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.engine { name = "ghost", command = "no-such-engine-anywhere" },
} }"#,
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("t.lua:3: player `ghost`"), "{err}");
    assert!(err.contains("no-such-engine-anywhere"), "{err}");
}

#[test]
fn an_unset_api_key_variable_is_named() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", api_key_env = "ARENA_TEST_UNSET_KEY" },
} }"#,
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("ARENA_TEST_UNSET_KEY"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_broken_opening_fen_is_named_and_the_store_is_untouched() {
    let dir = TestDir::new();
    dir.write("good.lua", &random_pair(""));
    let first = dir.run("good.lua");
    assert!(first.status.success(), "{}", stderr(&first));
    let before = std::fs::read(dir.db()).expect("store written");

    dir.write(
        "good.lua",
        &random_pair(
            r#"openings = { fens = { "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "not a fen at all" } },"#,
        ),
    );
    let out = dir.run("good.lua");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("openings.fens[2]"), "{err}");
    assert!(err.contains("not a fen at all"), "{err}");
    assert_eq!(
        std::fs::read(dir.db()).expect("store still there"),
        before,
        "a failed start must not modify the store"
    );
    let store = open_store(&dir.db());
    let t = store
        .find_tournament("t")
        .unwrap()
        .expect("tournament kept");
    assert_eq!(store.games(t.id).unwrap().len(), 2);
}

#[test]
fn a_broken_opening_file_line_is_named() {
    let dir = TestDir::new();
    dir.write(
        "book.epd",
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - id \"e4\";\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq -\n",
    );
    dir.write(
        "t.lua",
        &random_pair(r#"openings = { file = "book.epd" },"#),
    );
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("book.epd:2"), "{}", stderr(&out));
}

#[test]
fn a_file_that_is_not_a_store_is_refused_and_left_alone() {
    let dir = TestDir::new();
    dir.write("t.lua", &random_pair(""));
    let not_a_db = dir.write("t.db", "these are my notes, not a database\n");
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("t.db"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(not_a_db).unwrap(),
        "these are my notes, not a database\n"
    );
}

/// A reply hook that runs into its limits (a pattern that backtracks inside Lua's C matcher, which
/// used to hang the game for ever) sets its own game aside as a script error at its `file:line`;
/// the other game of the tournament is played to the end. (The model's text has its `b`s taken
/// out: a `b` in the reply would let the pattern match at once.)
#[test]
fn a_reply_hook_that_hangs_sets_only_its_game_aside() {
    let Some(url) = crate::common::local_llm("a_reply_hook_that_hangs_sets_only_its_game_aside")
    else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "modes/hang.lua",
        r#"return {
  start = function(ctx) return { { role = "user", content = "Say hello." } } end,
  reply = function(ctx, text)
    if ctx.side == "black" then string.find((text:gsub("b", "")) .. ("a"):rep(40), ("a-"):rep(30) .. "b") end
    return { move = ctx.legal_uci[1] }
  end,
}"#,
    );
    let model = crate::common::llm_player(&url, "m", "")
        .replace("name = \"m\",", "name = \"m\", mode = \"hang\",");
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "t", games_per_pair = 2, max_plies = 6,
  players = {{ arena.random {{ name = "r" }}, {model} }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("1 game(s) were set aside"), "{err}");
    assert!(err.contains("modes/hang.lua:4: "), "{err}");
    assert!(err.contains("in `modes.hang.reply`"), "{err}");
    assert!(err.contains("(script error)"), "{err}");
    let store = open_store(&dir.db());
    let t = store.find_tournament("t").unwrap().unwrap();
    let rows = store.standings(t.id).unwrap();
    assert!(
        rows.iter().any(|r| r.games == 1),
        "the other game was played: {rows:?}"
    );
}

#[test]
fn every_unknown_name_lists_the_names_there_are() {
    let dir = TestDir::new();
    dir.write("t.lua", &random_pair(""));
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let refused = |args: &[&str]| {
        let out = dir.arena().args(args).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "{args:?} was accepted");
        stderr(&out)
    };
    for command in ["leaderboard", "report", "analyze"] {
        let err = refused(&[command, "--db", "t.db", "--tournament", "kox"]);
        assert!(
            err.contains("named `kox`") && err.contains("there are: `t`"),
            "{command}: {err}"
        );
    }
    let err = refused(&["export", "pgn", "--db", "t.db", "--tournament", "kox"]);
    assert!(err.contains("there are: `t`"), "{err}");
    for option in ["--anchor", "--ladder"] {
        let err = refused(&["leaderboard", "--db", "t.db", option, "nobody=1500"]);
        assert!(
            err.contains(&format!("{option} names `nobody`"))
                && err.contains("there are: `a`, `b`"),
            "{err}"
        );
    }
    let err = refused(&[
        "export", "sft", "--db", "t.db", "--out", "x.jsonl", "--player", "nobody",
    ]);
    assert!(
        err.contains("--player names `nobody`") && err.contains("there are: `a`, `b`"),
        "{err}"
    );
    let err = refused(&["eval-report", "--db", "t.db", "--run", "nope"]);
    assert!(
        err.contains("no evaluation run named `nope`; the store has none"),
        "{err}"
    );
}
