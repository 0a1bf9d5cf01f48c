//! The agentic mode with the real local model: every action stored with its outcome, the per-ply
//! limits enforced, the LLM Chess table printed; and a mixture of agents on the same model.

use crate::common::{TestDir, finished, local_llm, open_store, run_then_kill, stderr, stdout};

/// Outcomes an agentic reply can be stored with.
const AGENTIC_OUTCOMES: &[&str] = &[
    "get_current_board",
    "get_legal_moves",
    "move",
    "wrong_action",
    "wrong_move",
    // A reply cut at `max_tokens` before its action.
    "cut_off",
];

const MAX_TURNS: usize = 3;
const MAX_ATTEMPTS: usize = 2;

fn model(url: &str, temperature: f64) -> String {
    format!(
        r#"{{ base_url = "{url}", model = "smollm2-135m-instruct", temperature = {temperature},
             max_tokens = 16, max_concurrency = 1, timeout_s = 300 }}"#
    )
}

#[test]
fn the_local_model_plays_agentic_games_and_the_llm_chess_table_prints() {
    let Some(url) = local_llm("the_local_model_plays_agentic_games_and_the_llm_chess_table_prints")
    else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "agentic", games_per_pair = 2, max_plies = 4, seed = 5, concurrency = 1,
  prices = {{ ["smollm2-135m-instruct"] = {{ input_per_mtok = 1000, output_per_mtok = 2000 }} }},
  players = {{
    arena.random {{ name = "rnd", anchor_elo = -122 }},
    arena.llm {{
      name = "smol", base_url = "{url}", model = "smollm2-135m-instruct",
      temperature = 0.3, max_tokens = 16, max_concurrency = 1, timeout_s = 300,
      mode = "agentic",
      options = {{ max_turns = {MAX_TURNS}, max_attempts = {MAX_ATTEMPTS} }},
    }},
  }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    assert!(finished(out.status), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let t = store.find_tournament("agentic").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 2);
    let mut calls = 0;
    for g in &games {
        assert_eq!(g.status, arena::store::GameStatus::Finished, "{g:?}");
        let termination = g.termination.as_deref().unwrap();
        let mut last_ply_calls = Vec::new();
        for ply in 0..=g.ply_count {
            let ply_calls = store.llm_calls(g.id, ply).unwrap();
            assert!(
                ply_calls.len() <= MAX_TURNS,
                "at most {MAX_TURNS} turns a ply"
            );
            for c in &ply_calls {
                calls += 1;
                let outcome = c.outcome.as_deref().unwrap();
                assert!(AGENTIC_OUTCOMES.contains(&outcome), "{outcome}");
                assert!(c.call.request_json.contains("make_move <move>"));
                // A ply's dialog opens afresh: one kick-off message, then the turns of this ply.
                let request: arena::llm::ChatRequest =
                    serde_json::from_str(&c.call.request_json).unwrap();
                assert_eq!(request.messages.len(), 1 + 2 * c.call.seq as usize);
                assert_eq!(request.messages[0].role, "user");
            }
            if !ply_calls.is_empty() {
                last_ply_calls = ply_calls;
            }
        }
        let failures = last_ply_calls
            .iter()
            .filter(|c| {
                matches!(
                    c.outcome.as_deref(),
                    Some("wrong_action" | "wrong_move" | "cut_off")
                )
            })
            .count();
        match termination {
            "too_many_wrong_actions" => {
                assert_eq!(failures, MAX_ATTEMPTS, "{g:?}");
                assert!(
                    g.reason
                        .as_deref()
                        .unwrap()
                        .contains("too many wrong actions")
                );
            }
            "max_turns" => {
                assert_eq!(last_ply_calls.len(), MAX_TURNS, "{g:?}");
                assert!(failures < MAX_ATTEMPTS);
                assert!(g.reason.as_deref().unwrap().contains("max turns"));
            }
            other => assert!(
                ["move_limit", "checkmate", "stalemate"].contains(&other),
                "{g:?}"
            ),
        }
    }
    assert!(calls >= 2, "the model is asked in each game");

    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db"])
        .output()
        .unwrap();
    assert!(board.status.success(), "{}", stderr(&board));
    let text = stdout(&board);
    assert!(text.contains("agentic · LLM Chess"), "{text}");
    for column in [
        "Win/Loss %",
        "duration %",
        "tokens/move",
        "cost/game $",
        "Elo",
        "games vs",
    ] {
        assert!(text.contains(column), "{text}");
    }
    assert!(text.contains("rnd 2"), "{text}");

    // The script's price for the local model gives it a cost per game.
    let json = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let row = crate::common::json_rows(&v, "agentic · LLM Chess")
        .iter()
        .find(|r| r["model"] == "smol" || r["player"] == "smol")
        .unwrap_or_else(|| panic!("no row for smol: {v}"))
        .clone();
    assert!(row["cost_per_game"].as_f64().unwrap_or(0.0) > 0.0, "{row}");
}

#[test]
fn a_mixture_of_agents_stores_every_proposal_and_the_synthesis() {
    let Some(url) = local_llm("a_mixture_of_agents_stores_every_proposal_and_the_synthesis") else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "moa", games_per_pair = 1, max_plies = 2, seed = 2, concurrency = 1,
  players = {{
    arena.random {{ name = "rnd" }},
    arena.moa {{
      name = "mix",
      proposers = {{ {p1}, {p2} }},
      synthesizer = {synth},
      mode = "agentic",
      options = {{ max_turns = 2, max_attempts = 2, only_make_move = true }},
    }},
  }},
}}"#,
            p1 = model(&url, 0.0),
            p2 = model(&url, 1.0),
            synth = model(&url, 0.3),
        ),
    );
    let out = dir.run("t.lua");
    assert!(finished(out.status), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let t = store.find_tournament("moa").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!((g.white.as_str(), g.black.as_str()), ("rnd", "mix"));
    let calls = store.llm_calls(g.id, 1).unwrap();
    assert!(
        !calls.is_empty() && calls.len().is_multiple_of(3),
        "{}",
        calls.len()
    );
    for turn in calls.chunks(3) {
        for (i, c) in turn.iter().enumerate() {
            let request: serde_json::Value = serde_json::from_str(&c.call.request_json).unwrap();
            if i < 2 {
                assert_eq!(request["arena_role"], format!("proposer_{}", i + 1));
                assert_eq!(c.outcome.as_deref(), Some("proposal"));
            } else {
                assert_eq!(request["arena_role"], "synthesizer");
                let merged = request["messages"].as_array().unwrap().last().unwrap()["content"]
                    .as_str()
                    .unwrap()
                    .to_string();
                for p in &turn[..2] {
                    assert!(merged.contains(p.call.reply_text.as_deref().unwrap().trim()));
                }
                assert_ne!(c.outcome.as_deref(), Some("proposal"));
            }
        }
    }
    // Tokens add up over proposers and synthesizer.
    let standings = store.standings(t.id).unwrap();
    let mix = standings.iter().find(|r| r.player == "mix").unwrap();
    let tokens: u64 = calls
        .iter()
        .map(|c| c.call.prompt_tokens.unwrap() + c.call.completion_tokens.unwrap())
        .sum();
    assert_eq!(mix.prompt_tokens + mix.completion_tokens, tokens);
    assert_eq!(mix.llm_calls, calls.len() as u64);

    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .unwrap();
    let text = stdout(&board);
    assert!(text.contains("moa · LLM Chess"), "{text}");
    assert!(text.contains("\"mix\""), "{text}");
}

/// An agentic player whose answers a llama.cpp grammar pins to `answer`, so that the limits can
/// be checked on a real model deterministically.
fn pinned(url: &str, name: &str, answer: &str) -> String {
    format!(
        r#"arena.llm {{
      name = "{name}", base_url = "{url}", model = "smollm2-135m-instruct",
      max_tokens = 16, max_concurrency = 1, timeout_s = 300, mode = "agentic",
      extra_body = {{ grammar = 'root ::= "{answer}"' }},
      options = {{ max_turns = 3, max_attempts = 2 }},
    }}"#
    )
}

#[test]
fn the_limits_lose_games_with_their_own_terminations() {
    let Some(url) = local_llm("the_limits_lose_games_with_their_own_terminations") else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "limits", games_per_pair = 1, max_plies = 6, seed = 1, concurrency = 1,
  players = {{
    arena.random {{ name = "rnd" }},
    {looper}, {babbler}, {nuller},
  }},
}}"#,
            looper = pinned(&url, "looper", "get_current_board"),
            babbler = pinned(&url, "babbler", "hello"),
            nuller = pinned(&url, "nuller", "make_move 0000"),
        ),
    );
    let out = dir.run("t.lua");
    // No pinned player ever moves: the tournament compared no chess, and says so (exit 3).
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no chess compared"),
        "{}",
        stdout(&out)
    );
    let store = open_store(&dir.db());
    let t = store.find_tournament("limits").unwrap().unwrap();
    for g in store.games(t.id).unwrap() {
        // Whoever of the pinned players moves first loses at its first ply.
        let loser = if g.white == "rnd" { &g.black } else { &g.white };
        let ply = u32::from(g.white == "rnd");
        let calls = store.llm_calls(g.id, ply).unwrap();
        let outcomes: Vec<&str> = calls.iter().filter_map(|c| c.outcome.as_deref()).collect();
        let (termination, expected) = match loser.as_str() {
            "looper" => ("max_turns", vec!["get_current_board"; 3]),
            "babbler" => ("too_many_wrong_actions", vec!["wrong_action"; 2]),
            "nuller" => ("too_many_wrong_actions", vec!["wrong_move"; 2]),
            other => panic!("unexpected loser {other}"),
        };
        assert_eq!(g.termination.as_deref(), Some(termination), "{g:?}");
        assert_eq!(outcomes, expected, "{g:?}");
        let black_won = g.result.as_deref() == Some("0-1");
        assert_eq!(black_won, g.white == *loser, "{g:?}");
    }
    // The nuller moves (and loses) in its games with White and in the one where the random
    // mover, with White, moves first; with Black against another pinned player it wins before
    // it plays. Berger tables decide the colours.
    let games = store.games(t.id).unwrap();
    let moved = games
        .iter()
        .filter(|g| g.white == "nuller" || (g.black == "nuller" && g.white == "rnd"))
        .count() as u32;
    assert!(moved >= 1, "{games:?}");
    let standings = store.standings(t.id).unwrap();
    let nuller = standings.iter().find(|r| r.player == "nuller").unwrap();
    assert_eq!(
        (nuller.illegal_moves, nuller.forfeits),
        (2 * u64::from(moved), moved)
    );
}

/// Every ablation switch of the paper, each in a real game against the local model: the model
/// plays Black against the random mover for one ply, and its first request shows the switch.
#[test]
fn each_ablation_switch_shapes_the_real_dialog() {
    let Some(url) = local_llm("each_ablation_switch_shapes_the_real_dialog") else {
        return;
    };
    let switches: &[(&str, &str)] = &[
        ("unicode", "board = \"unicode\", board_in_prompt = true"),
        ("ascii", "board = \"ascii\", board_in_prompt = true"),
        ("fen", "board = \"fen\", board_in_prompt = true"),
        ("fen_pgn", "board = \"fen_pgn\", board_in_prompt = true"),
        ("legal_in_prompt", "legal_moves_in_prompt = true"),
        ("only_make_move", "only_make_move = true"),
        ("no_legal_moves", "legal_moves = false"),
        ("previous_moves", "previous_moves = true"),
        ("single_request", "single_request = true"),
    ];
    let dir = TestDir::new();
    let players: Vec<String> = switches
        .iter()
        .map(|(name, options)| {
            format!(
                r#"arena.llm {{ name = "{name}", base_url = "{url}", model = "smollm2-135m-instruct",
      temperature = 0.3, max_tokens = 16, max_concurrency = 1, timeout_s = 300, mode = "agentic",
      options = {{ max_turns = 2, max_attempts = 1, {options} }} }}"#
            )
        })
        .collect();
    dir.write(
        "formats/black_vs_random.lua",
        r#"return { pairings = function(state)
  if #state.games > 0 then return nil end
  local games = {}
  for _, p in ipairs(state.players) do
    if p ~= "rnd" then table.insert(games, { white = "rnd", black = p }) end
  end
  return games
end }"#,
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "ablations", format = "black_vs_random", max_plies = 2, seed = 9, concurrency = 1,
  players = {{ arena.random {{ name = "rnd" }}, {} }},
}}"#,
            players.join(",\n")
        ),
    );
    let out = dir.run("t.lua");
    assert!(finished(out.status), "{}", stderr(&out));

    let store = open_store(&dir.db());
    let t = store.find_tournament("ablations").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), switches.len());
    for g in &games {
        assert_eq!(g.status, arena::store::GameStatus::Finished, "{g:?}");
        let calls = store.llm_calls(g.id, 1).unwrap();
        assert!(!calls.is_empty(), "{} was asked to move", g.black);
        let first: arena::llm::ChatRequest =
            serde_json::from_str(&calls[0].call.request_json).unwrap();
        let prompt: String = first
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let opening = store.plies(g.id).unwrap()[0].clone();
        let mut position = arena::board::Game::new(None, 0).unwrap();
        position.play_uci(&opening.uci).unwrap();
        let fen = position.fen();
        let legal = arena::board::render::legal_uci(position.position());
        let all_legal_listed = legal.iter().all(|m| prompt.contains(m.as_str()));
        let name = g.black.as_str();
        match name {
            "unicode" => assert!(prompt.contains('♜') || prompt.contains('♖'), "{prompt}"),
            "ascii" => assert!(
                prompt.contains(&arena::board::render::ascii(position.position())),
                "{prompt}"
            ),
            "fen" => assert!(prompt.contains(&fen), "{prompt}"),
            "fen_pgn" => assert!(prompt.contains(&fen) && prompt.contains("PGN"), "{prompt}"),
            "legal_in_prompt" => {
                assert!(all_legal_listed, "{prompt}");
                assert!(!prompt.contains("get_legal_moves"), "{prompt}");
            }
            "only_make_move" => {
                assert!(
                    all_legal_listed && (prompt.contains(&fen) || prompt.contains('♜')),
                    "board and legal moves are in the prompt: {prompt}"
                );
                assert!(!prompt.contains("get_current_board"), "{prompt}");
                assert!(!prompt.contains("get_legal_moves"), "{prompt}");
            }
            "no_legal_moves" => {
                assert!(!prompt.contains("get_legal_moves"), "{prompt}");
                assert!(!all_legal_listed, "{prompt}");
            }
            "previous_moves" => assert!(prompt.contains(&opening.uci), "{prompt}"),
            "single_request" => {
                assert!(all_legal_listed, "{prompt}");
                // One request per attempt, no dialog of actions.
                assert_eq!(calls.len(), 1, "max_attempts = 1 means one request");
                assert_eq!(first.messages.len(), 2, "system and user");
            }
            other => panic!("unexpected player {other}"),
        }
    }
}

/// A mixture killed in the middle of a turn resumes without asking any stored proposal again:
/// every call stored before the kill is still there, unchanged, and every turn ends complete.
#[test]
fn a_killed_mixture_resumes_mid_turn_without_asking_again() {
    use std::time::Duration;
    let Some(url) = local_llm("a_killed_mixture_resumes_mid_turn_without_asking_again") else {
        return;
    };
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "moa-resume", games_per_pair = 3, max_plies = 4, seed = 6, concurrency = 1,
  players = {{
    arena.random {{ name = "rnd" }},
    arena.moa {{
      name = "mix",
      proposers = {{ {p}, {p} }},
      synthesizer = {p},
      mode = "agentic",
      options = {{ max_turns = 2, max_attempts = 2, only_make_move = true }},
    }},
  }},
}}"#,
            p = model(&url, 0.7),
        ),
    );
    run_then_kill(&dir, "moa-resume", Duration::from_secs(600), |store, t| {
        store.totals(t).map(|x| x.llm_calls).unwrap_or(0) >= 4
    });

    let snapshot = |store: &arena::store::Store| {
        let t = store.find_tournament("moa-resume").unwrap().unwrap();
        let mut calls = std::collections::BTreeMap::new();
        for g in store.games(t.id).unwrap() {
            for ply in 0..=g.ply_count {
                for c in store.llm_calls(g.id, ply).unwrap() {
                    calls.insert((g.id, ply, c.call.seq), (c.id, c.call.reply_text.clone()));
                }
            }
        }
        calls
    };
    let before = snapshot(&open_store(&dir.db()));
    let out = dir.run("t.lua");
    assert!(finished(out.status), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let after = snapshot(&store);
    for (key, value) in &before {
        assert_eq!(
            after.get(key),
            Some(value),
            "stored call {key:?} kept as it was"
        );
    }
    // Every (game, ply) holds whole turns: two proposals and a synthesis each.
    let mut per_ply: std::collections::BTreeMap<(i64, u32), usize> = Default::default();
    for (game, ply, _) in after.keys() {
        *per_ply.entry((*game, *ply)).or_default() += 1;
    }
    for ((game, ply), n) in per_ply {
        assert!(n.is_multiple_of(3), "game {game} ply {ply} has {n} calls");
    }
    let t = store.find_tournament("moa-resume").unwrap().unwrap();
    assert!(
        store
            .games(t.id)
            .unwrap()
            .iter()
            .all(|g| g.status == arena::store::GameStatus::Finished)
    );
}
