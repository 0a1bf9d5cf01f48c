//! Self-consistency voting (`options = { samples = N }`) against `examples/fake_openai.rs
//! --answers`, which answers a fixed distribution of moves: the majority move is played, a tie
//! goes to the earliest sample, no legal sample takes the mode's failure path, every sample is
//! stored and counted, and a resumed ply asks only for the samples it lacks.

use std::time::Duration;

use arena::store::{LlmCallRow, Store};

use crate::common::{TestDir, fake_openai_with, open_store, run_then_kill, stderr, stdout};

/// A voter (White in one game, Black in the other) against a random mover, one ply per game:
/// only the game where the voter is White asks it anything.
fn script(url: &str, samples: u32, max_attempts: u32, concurrency: u32) -> String {
    format!(
        r#"return arena.tournament {{
  name = "vote", games_per_pair = 2, max_plies = 1, seed = 3,
  prices = {{ fake = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }} }},
  players = {{
    arena.llm {{
      name = "voter", base_url = "{url}", model = "fake", temperature = 0.8, seed = 11,
      max_concurrency = {concurrency},
      options = {{ samples = {samples}, max_attempts = {max_attempts} }},
    }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
    )
}

/// The voter's game (it is White) and its calls at ply 0, in seq order.
fn voter_calls(store: &Store) -> (arena::store::GameRow, Vec<LlmCallRow>) {
    let t = store
        .find_tournament("vote")
        .unwrap()
        .expect("the tournament");
    let game = store
        .games(t.id)
        .unwrap()
        .into_iter()
        .find(|g| g.white == "voter")
        .expect("the voter's game as White");
    let calls = store.llm_calls(game.id, 0).unwrap();
    (game, calls)
}

/// The move a fake reply carries (its fenced UCI move).
fn move_in(call: &LlmCallRow) -> String {
    let text = call.call.reply_text.as_deref().expect("a reply");
    text.split("```")
        .nth(1)
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| panic!("no fenced move in {text}"))
}

fn role(call: &LlmCallRow) -> String {
    let request: serde_json::Value = serde_json::from_str(&call.call.request_json).unwrap();
    request["arena_role"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn five_samples_play_the_majority_move_and_every_sample_is_stored_and_counted() {
    let fake = fake_openai_with(0, &["--answers", "e2e4:3,d2d4:2"]);
    let dir = TestDir::new();
    dir.write("t.lua", &script(&fake.url, 5, 1, 5));
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(fake.stats().asked, 5, "five samples, one request each");

    let store = open_store(&dir.db());
    let (game, calls) = voter_calls(&store);
    let plies = store.plies(game.id).unwrap();
    assert_eq!(plies[0].uci, "e2e4", "the majority move is played");
    assert_eq!(plies[0].attempts, 1, "one vote is one attempt");
    let seqs: Vec<u32> = calls.iter().map(|c| c.call.seq).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4], "every sample is its own row");
    let roles: Vec<String> = calls.iter().map(role).collect();
    assert_eq!(
        roles,
        ["sample_1", "sample_2", "sample_3", "sample_4", "sample_5"]
    );
    let mut moves: Vec<String> = calls.iter().map(move_in).collect();
    moves.sort();
    assert_eq!(moves, ["d2d4", "d2d4", "e2e4", "e2e4", "e2e4"]);
    // The played row is the earliest sample that voted e2e4; the others are `sample` rows that
    // say what they voted and how the vote went.
    let played = calls.iter().find(|c| move_in(c) == "e2e4").unwrap();
    for c in &calls {
        if c.id == played.id {
            assert_eq!(c.outcome.as_deref(), Some("move"));
        } else {
            assert_eq!(c.outcome.as_deref(), Some("sample"), "{c:?}");
            let detail = c.outcome_detail.as_deref().unwrap();
            assert!(detail.contains(&format!("move {}", move_in(c))), "{detail}");
            assert!(
                detail.contains("vote e2e4 3, d2d4 2 of 5 samples: played e2e4"),
                "{detail}"
            );
        }
    }
    // The viewer's data for the ply carries every sample, its role and the vote.
    let t = store.find_tournament("vote").unwrap().unwrap();
    let shown: serde_json::Value =
        serde_json::from_slice(&arena::report::html::game_json(&store, &t, &game).unwrap())
            .unwrap();
    let shown = shown.to_string();
    for i in 1..=5 {
        assert!(shown.contains(&format!("\"sample_{i}\"")), "{shown}");
    }
    assert!(
        shown.contains("vote e2e4 3, d2d4 2 of 5 samples"),
        "{shown}"
    );
    // Each sample asked with its own seed.
    let seeds: Vec<u64> = calls
        .iter()
        .map(|c| {
            let r: serde_json::Value = serde_json::from_str(&c.call.request_json).unwrap();
            r["seed"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(seeds, [11, 12, 13, 14, 15]);

    // Calls and tokens add up over every sample; the legal-move rate is per vote.
    let standings = store.standings(game.tournament).unwrap();
    let voter = standings.iter().find(|r| r.player == "voter").unwrap();
    assert_eq!(voter.llm_calls, 5);
    assert_eq!(voter.unplayed_samples, 4);
    assert_eq!(voter.accepted_moves, 1);
    assert_eq!(voter.legal_move_rate(), Some(1.0));
    let prompt: u64 = calls.iter().map(|c| c.call.prompt_tokens.unwrap()).sum();
    let completion: u64 = calls
        .iter()
        .map(|c| c.call.completion_tokens.unwrap())
        .sum();
    assert_eq!(voter.prompt_tokens, prompt);
    assert_eq!(voter.completion_tokens, completion);
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stdout(&board)).unwrap();
    let rows = crate::common::json_rows(&doc, "standings");
    let row = rows.iter().find(|r| r["player"] == "voter").unwrap();
    assert_eq!(row["llm_calls"], 5, "{row}");
    let text = stdout(&board);
    assert!(
        text.contains("voter votes over samples: its parse errors and illegal moves count one decision per attempt"),
        "{text}"
    );
}

#[test]
fn a_tied_vote_goes_to_the_earliest_sample() {
    let fake = fake_openai_with(0, &["--answers", "g1f3:2,e2e4:2"]);
    let dir = TestDir::new();
    dir.write("t.lua", &script(&fake.url, 4, 1, 4));
    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let (game, calls) = voter_calls(&store);
    assert_eq!(calls.len(), 4);
    let mut moves: Vec<String> = calls.iter().map(move_in).collect();
    let first = moves[0].clone();
    moves.sort();
    assert_eq!(moves, ["e2e4", "e2e4", "g1f3", "g1f3"], "a 2–2 tie");
    // Whichever answer the first sample got (the requests race), its move is played.
    assert_eq!(store.plies(game.id).unwrap()[0].uci, first);
    assert_eq!(calls[0].outcome.as_deref(), Some("move"));
    assert!(
        calls[1..]
            .iter()
            .all(|c| c.outcome.as_deref() == Some("sample"))
    );
}

#[test]
fn without_a_legal_sample_the_first_sample_decides_each_attempt() {
    // e2e5 and a1a8 are never legal at the start.
    let fake = fake_openai_with(0, &["--answers", "e2e5:3,a1a8:2"]);
    let dir = TestDir::new();
    dir.write("t.lua", &script(&fake.url, 5, 2, 5));
    let out = dir.run("t.lua");
    // The voter never moves in either game: the run compared no chess (exit 3).
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let (game, calls) = voter_calls(&store);
    assert_eq!(game.result.as_deref(), Some("0-1"));
    assert_eq!(game.termination.as_deref(), Some("forfeit"));
    assert!(store.plies(game.id).unwrap().is_empty());
    // Two attempts of five samples: each attempt's first sample carries its decision.
    let outcomes: Vec<&str> = calls
        .iter()
        .map(|c| c.outcome.as_deref().unwrap())
        .collect();
    let samples = ["sample"; 4];
    assert_eq!(outcomes[0], "illegal");
    assert_eq!(outcomes[1..5], samples);
    assert_eq!(outcomes[5], "illegal");
    assert_eq!(outcomes[6..], samples);
    assert!(
        calls[1]
            .outcome_detail
            .as_deref()
            .unwrap()
            .contains("no legal move in 5 samples; sample 1 decided the attempt"),
        "{:?}",
        calls[1].outcome_detail
    );
    // The second attempt was asked with the first sample's feedback.
    let request: serde_json::Value = serde_json::from_str(&calls[5].call.request_json).unwrap();
    let messages = request["messages"].as_array().unwrap();
    let asked_back = messages[messages.len() - 2]["content"].as_str().unwrap();
    assert_eq!(asked_back, calls[0].call.reply_text.as_deref().unwrap());
    // The rates count one decision per attempt, not one per sample.
    let standings = store.standings(game.tournament).unwrap();
    let voter = standings.iter().find(|r| r.player == "voter").unwrap();
    assert_eq!((voter.llm_calls, voter.illegal_moves), (10, 2));
    assert_eq!(voter.forfeits, 1);
    assert_eq!(voter.legal_move_rate(), Some(0.0));
}

#[test]
fn a_killed_vote_resumes_asking_only_the_missing_samples() {
    // Two requests at a time, 300 ms each: the run is killed with some samples stored.
    let fake = fake_openai_with(300, &["--answers", "e2e4:1"]);
    let dir = TestDir::new();
    dir.write("t.lua", &script(&fake.url, 5, 1, 2));
    run_then_kill(&dir, "vote", Duration::from_secs(60), |store, t| {
        store.games(t).is_ok_and(|games| {
            games.iter().any(|g| {
                g.white == "voter"
                    && store
                        .llm_calls(g.id, 0)
                        .is_ok_and(|c| (1..5).contains(&c.len()))
            })
        })
    });
    let stored_before = voter_calls(&open_store(&dir.db())).1;
    let kept = stored_before.len() as u64;
    assert!((1..5).contains(&kept), "{kept} samples stored at the kill");
    let asked_before = fake.stats().asked;

    let out = dir.run("t.lua");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fake.stats().asked - asked_before,
        5 - kept,
        "only the missing samples are asked again"
    );
    let store = open_store(&dir.db());
    let (game, calls) = voter_calls(&store);
    let seqs: Vec<u32> = calls.iter().map(|c| c.call.seq).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4]);
    for before in &stored_before {
        let after = calls.iter().find(|c| c.id == before.id).unwrap();
        assert_eq!(
            after.call.reply_text, before.call.reply_text,
            "re-read, not re-asked"
        );
    }
    assert_eq!(store.plies(game.id).unwrap()[0].uci, "e2e4");
}

#[test]
fn check_refuses_samples_where_they_cannot_vote() {
    let dir = TestDir::new();
    let llm = |name: &str, rest: &str| {
        format!(
            r#"arena.llm {{ name = "{name}", base_url = "http://127.0.0.1:9/v1", model = "m", {rest} }}"#
        )
    };
    let players = [
        llm("cold", "temperature = 0, options = { samples = 5 }"),
        llm("unset", "options = { samples = 3 }"),
        llm("too_many", "temperature = 1, options = { samples = 40 }"),
        llm(
            "talker",
            "temperature = 1, mode = \"agentic\", options = { samples = 5 }",
        ),
        r#"arena.moa { name = "mix", proposers = { { base_url = "http://127.0.0.1:9/v1", model = "m" } }, synthesizer = { base_url = "http://127.0.0.1:9/v1", model = "m" }, options = { samples = 5 } }"#.to_string(),
        r#"arena.engine { name = "sf", options = { samples = 5 } }"#.to_string(),
        llm("fine", "temperature = 0.7, options = { samples = 5 }"),
    ];
    dir.write(
        "t.lua",
        &format!(
            "return arena.tournament {{ name = 't', players = {{\n{}\n}} }}",
            players.join(",\n")
        ),
    );
    let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    for expected in [
        "t.lua:2: player `cold`: `samples = 5` needs a sampling `temperature` above 0, not 0",
        "t.lua:3: player `unset`: `samples = 3` needs a sampling `temperature` above 0",
        "t.lua:4: player `too_many`: option `samples` must be a whole number from 1 to 32, not 40",
        "player `talker`: `samples = 5` needs a mode with one reply per attempt; mode `agentic` holds a dialog",
        "t.lua:6: player `mix`: `samples = 5` is for a single model (`arena.llm`)",
        "t.lua:7: player `sf`: `samples` is a model player's option",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
    assert!(!text.contains("`fine`"), "{text}");
}

#[test]
fn a_dry_run_counts_every_sample() {
    let dir = TestDir::new();
    // 2 games of 10 plies against a random mover: 10 moves, 1 to 3 attempts of 5 samples each.
    let model = crate::common::llm_player(
        "http://127.0.0.1:9/v1",
        "m",
        "legal_moves = true, max_attempts = 3, samples = 5",
    );
    let script = dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "hand", games_per_pair = 2, max_plies = 10,
  players = {{ {model}, arena.random {{ name = "rnd" }} }},
}}"#
        ),
    );
    let report =
        arena::tournament::dryrun::dry_run(&script, None, std::sync::Arc::new(arena::lua::LuaHost))
            .unwrap();
    let m = &report.players[0];
    assert_eq!((m.calls.low, m.calls.high), (50.0, 150.0));
    assert_eq!(m.completion_tokens.high, 150.0 * 48.0);
}
