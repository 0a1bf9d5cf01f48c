//! `arena check`: every problem reported as `file:line: message` with exit code 2.

use crate::common::{TestDir, stderr, stdout};

fn check(dir: &TestDir, script: &str) -> (i32, String) {
    let out = dir
        .arena()
        .args(["check", script])
        .output()
        .expect("arena runs");
    (
        out.status.code().unwrap_or(-1),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

const PLAYERS: &str = r#"
    arena.random { name = "a" },
    arena.random { name = "b" },
"#;

#[test]
fn a_valid_script_passes() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!("return arena.tournament {{ name = 't', players = {{ {PLAYERS} }} }}"),
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("t.lua: ok (2 players"), "{out}");
}

#[test]
fn unknown_tournament_keys_name_the_line() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            "local x = 1\n\nreturn arena.tournament {{\n  name = 't',\n  games_per_par = 2,\n  players = {{ {PLAYERS} }} }}"
        ),
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("t.lua:5: unknown key `games_per_par`; did you mean `games_per_pair`?"),
        "{out}"
    );
}

#[test]
fn unknown_and_mistyped_player_fields_name_the_player_line() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.engine { name = "sf", comand = "stockfish" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:1/v1", model = "x", temperature = "hot" },
  },
}"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("t.lua:5: player `sf`: unknown key `comand`; did you mean `command`?"),
        "{out}"
    );
    assert!(out.contains("t.lua:6: player `m`:"), "{out}");
    assert!(out.contains("hot"), "{out}");
}

#[test]
fn wrong_types_and_missing_players_are_reported() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        "return arena.tournament { name = 't', max_plies = 'ten' }",
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("t.lua:1:"), "{out}");
    assert!(out.contains("ten"), "{out}");
    assert!(out.contains("no `players` list"), "{out}");
}

#[test]
fn lua_errors_carry_file_and_line() {
    let dir = TestDir::new();
    dir.write("syntax.lua", "return arena.tournament {\n  name = = 't'\n}");
    let (code, out) = check(&dir, "syntax.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("syntax.lua:2:"), "{out}");

    dir.write("runtime.lua", "local t = nil\nreturn t.x");
    let (code, out) = check(&dir, "runtime.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("runtime.lua:2:"), "{out}");

    dir.write("table.lua", "return 42");
    let (code, out) = check(&dir, "table.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("must return a tournament table"), "{out}");
}

#[test]
fn modes_without_hooks_and_unknown_options_are_rejected() {
    let dir = TestDir::new();
    dir.write(
        "modes/broken.lua",
        "return { start = function() return {} end }",
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:1/v1", model = "x", mode = "broken" },
    arena.llm { name = "n", base_url = "http://127.0.0.1:1/v1", model = "x", options = { histroy = 3 } },
    arena.llm { name = "o", base_url = "http://127.0.0.1:1/v1", model = "x", mode = "nonexistent" },
  },
}"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("has no `reply` hook"), "{out}");
    assert!(out.contains("no option `histroy`"), "{out}");
    assert!(
        out.contains("t.lua:7: player `o`: unknown play mode `nonexistent`"),
        "{out}"
    );
}

#[test]
fn format_options_are_checked_against_the_formats_defaults_with_every_other_problem() {
    let dir = TestDir::new();
    dir.write(
        "formats/strict.lua",
        "return { defaults = { rounds = 1 }, pairings = function() return nil end }",
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  format = "matchmaker",
  format_options = { target_rd = 80, max_game = 10 },
  players = {
    arena.random { name = "a" },
    arena.llm { name = "n", base_url = "http://127.0.0.1:1/v1", model = "x", options = { histroy = 3 } },
  },
}"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(
            "t.lua:4: format `formats.matchmaker` has no option `max_game` (its options: "
        ),
        "{out}"
    );
    assert!(
        out.contains("no option `histroy`"),
        "both problems at once: {out}"
    );

    dir.write(
        "u.lua",
        r#"return arena.tournament { name = "u", format = "strict", format_options = { rounds = 2 },
  players = { arena.random { name = "a" }, arena.random { name = "b" } } }"#,
    );
    let (code, out) = check(&dir, "u.lua");
    assert_eq!(code, 0, "a declared option is accepted: {out}");
    dir.write(
        "v.lua",
        r#"return arena.tournament { name = "v", format = "strict", format_options = { round = 2 },
  players = { arena.random { name = "a" }, arena.random { name = "b" } } }"#,
    );
    let (code, out) = check(&dir, "v.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("format `formats.strict` has no option `round` (its options: rounds)"),
        "{out}"
    );
}

#[test]
fn a_mode_that_fails_its_smoke_test_points_at_its_own_line() {
    let dir = TestDir::new();
    dir.write(
        "modes/crashy.lua",
        "local M = {}\nfunction M.start(ctx) return {{role='user', content=ctx.fen}} end\nfunction M.reply(ctx, text)\n  return nil .. text\nend\nreturn M",
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:1/v1", model = "x", mode = "crashy" },
} }"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("modes/crashy.lua:4:"), "{out}");
}

#[test]
fn api_keys_in_scripts_are_refused() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:1/v1", model = "x", api_key = "secret" },
} }"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("api_key_env"), "{out}");
    assert!(!out.contains("secret"), "the key must not be echoed: {out}");
}

#[test]
fn every_shipped_script_loads_from_the_binary_alone() {
    // With ARENA_BUILTIN_FROM_BINARY the built-ins come from the embedded copies, as in a release
    // build: a script that a mode requires but the binary lacks fails here.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut scripts = Vec::new();
    for folder in ["tournaments", "examples", "benches"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "lua") {
                scripts.push(path);
            }
        }
    }
    assert!(scripts.len() >= 8, "{scripts:?}");
    for script in scripts {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_arena"))
            .arg("check")
            .arg(&script)
            .env("ARENA_BUILTIN_FROM_BINARY", "1")
            .current_dir(root)
            .output()
            .expect("arena runs");
        assert!(
            out.status.success(),
            "{}: {}",
            script.display(),
            stderr(&out)
        );
    }
}

#[test]
fn every_builtin_mode_loads_from_the_binary_alone() {
    let dir = TestDir::new();
    let modes = ["blitz", "bullet", "standard", "blindfold", "agentic"];
    let players: Vec<String> = modes
        .iter()
        .map(|m| {
            format!(
                r#"arena.llm {{ name = "{m}", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "{m}" }}"#
            )
        })
        .collect();
    for format in ["round_robin", "matchmaker", "ladder"] {
        let options = if format == "ladder" {
            "format_options = { anchor = \"r\", anchor_rating = 0 },"
        } else {
            ""
        };
        dir.write(
            "t.lua",
            &format!(
                "return arena.tournament {{ name = 't', format = '{format}', {options} players = {{ arena.random {{ name = 'r' }}, {} }} }}",
                players.join(", ")
            ),
        );
        let out = dir
            .arena()
            .args(["check", "t.lua"])
            .env("ARENA_BUILTIN_FROM_BINARY", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}: {}", stderr(&out));
    }
}

/// `arena check SCRIPT`, killed (and the test failed) if it has not ended in `patience`: before
/// the fix, a backtracking pattern made it run for ever.
fn check_within(dir: &TestDir, script: &str, patience: std::time::Duration) -> (i32, String) {
    let mut child = dir
        .arena()
        .args(["check", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("arena runs");
    let start = std::time::Instant::now();
    while child.try_wait().expect("child status").is_none() {
        if start.elapsed() > patience {
            child.kill().expect("kill");
            panic!("`arena check {script}` still ran after {patience:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

/// `string.find` that backtracks inside Lua's C matcher: it never returns to the VM.
const BACKTRACKING: &str = r#"local hit = string.find(("a"):rep(40), ("a-"):rep(30) .. "b")"#;

#[test]
fn a_backtracking_pattern_in_the_script_fails_at_its_line() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            "local x = 1\n{BACKTRACKING}\nreturn arena.tournament {{ name = 't', players = {{ {PLAYERS} }} }}"
        ),
    );
    let (code, out) = check_within(&dir, "t.lua", std::time::Duration::from_secs(120));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("t.lua:2: "), "{out}");
    assert!(out.contains("limit"), "{out}");
    assert!(out.contains("in `t.lua`"), "{out}");
}

#[test]
fn a_backtracking_pattern_in_a_mode_hook_fails_at_its_line_and_names_the_hook() {
    let dir = TestDir::new();
    dir.write(
        "modes/slow.lua",
        &format!(
            "return {{\n  start = function(ctx) return {{ {{ role = 'user', content = 'move?' }} }} end,\n  reply = function(ctx, text)\n    {BACKTRACKING}\n    return {{ move = 'e2e4' }}\n  end,\n}}"
        ),
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament { name = "t", players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x", mode = "slow" },
} }"#,
    );
    let (code, out) = check_within(&dir, "t.lua", std::time::Duration::from_secs(120));
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("modes/slow.lua:4: "), "{out}");
    assert!(out.contains("in `modes.slow.reply`"), "{out}");
}

#[test]
fn check_shows_where_each_api_key_goes_and_warns_when_it_is_unset() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "https://api.example.com/v1", model = "x",
                api_key_env = "ARENA_TEST_KEY_NOT_SET" },
    arena.llm { name = "n", base_url = "http://127.0.0.1:8765/v1", model = "x",
                api_key_env = "ARENA_TEST_KEY_SET" },
  },
}"#,
    );
    let out = dir
        .arena()
        .args(["check", "t.lua"])
        .env_remove("ARENA_TEST_KEY_NOT_SET")
        .env("ARENA_TEST_KEY_SET", "sk-secret-value")
        .output()
        .unwrap();
    let (out_text, err_text) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{out_text}{err_text}");
    assert!(
        out_text
            .contains("player `m`: the key in `ARENA_TEST_KEY_NOT_SET` goes to api.example.com"),
        "{out_text}"
    );
    assert!(
        out_text.contains("player `n`: the key in `ARENA_TEST_KEY_SET` goes to 127.0.0.1:8765"),
        "{out_text}"
    );
    assert!(
        err_text.contains("warning: t.lua:5: `ARENA_TEST_KEY_NOT_SET` is not set here"),
        "{err_text}"
    );
    assert!(
        !err_text.contains("ARENA_TEST_KEY_SET` is not set"),
        "{err_text}"
    );
    assert!(!out_text.contains("sk-secret-value") && !err_text.contains("sk-secret-value"));
}

#[test]
fn malformed_prices_are_errors_at_the_tournament_line() {
    let dir = TestDir::new();
    // A NaN or negative rate parses as a number: it used to pass, and the NaN, which JSON cannot
    // hold, made the leaderboard drop the whole table without a word.
    dir.write(
        "t.lua",
        &format!(
            "local nan = 0/0\nreturn arena.tournament {{\n  name = 't',\n  prices = {{ ['m'] = {{ input_per_mtok = -1, output_per_mtok = nan }}, ok = {{ input_per_mtok = 1, output_per_mtok = 2 }} }},\n  players = {{ {PLAYERS} }} }}"
        ),
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(
            "t.lua:4: prices: `m`: `input_per_mtok` must be a finite number of at least 0"
        ),
        "{out}"
    );
    assert!(
        out.contains("t.lua:4: prices: `m`: `output_per_mtok` must be a finite number of at least 0 (USD per million tokens), not NaN"),
        "{out}"
    );
    assert!(!out.contains("`ok`"), "{out}");
    dir.write(
        "u.lua",
        &format!(
            "return arena.tournament {{ name = 't', prices = 'cheap', players = {{ {PLAYERS} }} }}"
        ),
    );
    let (code, out) = check(&dir, "u.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("u.lua:1: `prices` must be a table, not text"),
        "{out}"
    );
}

#[test]
fn a_clock_without_time_names_its_line() {
    let dir = TestDir::new();
    // Each bad clock on its own line: a player's, and the tournament's.
    let cases = [
        ("{}", "a time control needs `base_s`"),
        ("{ base_s = 0 }", "leaves no time to move"),
        (
            "{ per_move_s = 0 }",
            "must be a finite number of seconds above 0",
        ),
        ("{ base_s = -60, increment_s = 1 }", "0 or more, not -60"),
        (
            "{ base_s = 60, increment = 1 }",
            "unknown key `increment` in `time_control`; did you mean `increment_s`?",
        ),
    ];
    for (clock, says) in cases {
        dir.write(
            "t.lua",
            &format!(
                "return arena.tournament {{\n  name = 't',\n  players = {{\n    arena.random {{ name = 'a' }},\n    arena.random {{ name = 'b', time_control = {clock} }},\n  }},\n}}"
            ),
        );
        let (code, out) = check(&dir, "t.lua");
        assert_eq!(code, 2, "{clock}: {out}");
        assert!(out.contains("t.lua:5:"), "{clock}: {out}");
        assert!(out.contains(says), "{clock}: {out}");

        dir.write(
            "t.lua",
            &format!(
                "local x = 1\nreturn arena.tournament {{\n  name = 't', time_control = {clock},\n  players = {{ {PLAYERS} }},\n}}"
            ),
        );
        let (code, out) = check(&dir, "t.lua");
        assert_eq!(code, 2, "{clock}: {out}");
        assert!(out.contains("t.lua:3:"), "{clock}: {out}");
        assert!(out.contains(says), "{clock}: {out}");
    }
    // A fraction of a second is a clock.
    dir.write(
        "t.lua",
        &format!(
            "return arena.tournament {{ name = 't', time_control = {{ base_s = 60, increment_s = 0.6 }}, players = {{ {PLAYERS} }} }}"
        ),
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn an_evaluation_player_has_no_clock() {
    let dir = TestDir::new();
    dir.write(
        "e.lua",
        "return arena.evaluation {\n  name = 'e',\n  tasks = { { task = 'board_reconstruction', build = { count = 2, plies = 4 } } },\n  players = {\n    arena.random { name = 'rnd', time_control = { per_move_s = 5 } },\n  },\n}",
    );
    let (code, out) = check(&dir, "e.lua");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("e.lua:5:"), "{out}");
    assert!(
        out.contains("`time_control` has no meaning in an evaluation"),
        "{out}"
    );
}

#[test]
fn a_players_rate_is_checked_field_by_field() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "t",
  players = {
    arena.random { name = "a" },
    arena.llm { name = "m", base_url = "http://127.0.0.1:9/v1", model = "x",
      rate = { rpm = 500, tpm = 200000 } },
    arena.llm { name = "n", base_url = "http://127.0.0.1:9/v1", model = "x",
      rate = {
        rmp = 500,
        tpm = 1.5 } },
    arena.llm { name = "o", base_url = "http://127.0.0.1:9/v1", model = "x",
      rate = { rpm = 0 } },
  },
}"#,
    );
    let (code, out) = check(&dir, "t.lua");
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("t.lua:9: player `n`: unknown key `rmp` in `rate`; did you mean `rpm`?"),
        "{out}"
    );
    assert!(
        out.contains("t.lua:10: player `n`: `rate.tpm` must be a whole number, not 1.5"),
        "{out}"
    );
    assert!(
        out.contains("t.lua:12: player `o`: `rate` limits must be at least 1 a minute"),
        "{out}"
    );
    assert!(!out.contains("player `m`"), "{out}");
}
