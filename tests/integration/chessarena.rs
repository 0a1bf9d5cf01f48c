//! ChessArena in arena: the matchmaker format and the play modes in real games.

use std::collections::BTreeSet;

use arena::store::GameStatus;

use crate::common::{TestDir, llm_player, local_llm, open_store, stderr, stockfish};

const POOL: &str = r#"
    arena.engine { name = "sf-a", options = { ["Skill Level"] = 0 }, limits = { nodes = 1 } },
    arena.engine { name = "sf-b", options = { ["Skill Level"] = 0 }, limits = { nodes = 50 } },
    arena.random { name = "rnd" },"#;

fn matchmaker(players: &str, options: &str) -> String {
    format!(
        r#"return arena.tournament {{
  name = "mm", format = "matchmaker", max_plies = 60, seed = 5, concurrency = 2,
  format_options = {{ {options} }},
  players = {{ {players} }},
}}"#
    )
}

#[test]
fn the_matchmaker_plays_pairs_with_colours_swapped_within_its_budget_and_a_newcomer_joins() {
    if !stockfish("the_matchmaker_plays_pairs") {
        return;
    }
    let dir = TestDir::new();
    dir.write("t.lua", &matchmaker(POOL, "max_games = 10"));
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("mm").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 10, "the budget is 10 games");
    for pair in games.chunks(2) {
        assert_eq!(pair[0].white, pair[1].black, "{pair:?}");
        assert_eq!(pair[0].black, pair[1].white, "{pair:?}");
        assert_eq!(pair[0].round, pair[1].round);
    }
    let before: Vec<(i64, Option<String>)> =
        games.iter().map(|g| (g.id, g.result.clone())).collect();
    drop(store);

    // A new player joins the stored pool: its games are added, the others' are left alone.
    dir.write(
        "t.lua",
        &matchmaker(
            &format!("{POOL}\n    arena.random {{ name = \"newcomer\", seed = 3 }},"),
            "max_games = 16, focus = \"newcomer\"",
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 16);
    let kept: Vec<(i64, Option<String>)> = games[..10]
        .iter()
        .map(|g| (g.id, g.result.clone()))
        .collect();
    assert_eq!(kept, before, "earlier games are not replayed or changed");
    for g in &games[10..] {
        assert!(g.white == "newcomer" || g.black == "newcomer", "{g:?}");
        assert_eq!(g.status, GameStatus::Finished);
    }
}

#[test]
fn the_matchmaker_stops_when_every_rating_is_precise_enough() {
    if !stockfish("the_matchmaker_stops_when_every_rating_is_precise_enough") {
        return;
    }
    let dir = TestDir::new();
    // With a target RD of 300, two games per player are enough to stop.
    dir.write(
        "t.lua",
        &matchmaker(POOL, "target_rd = 300, max_games = 100"),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("mm").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert!(
        games.len() < 100 && games.len().is_multiple_of(2),
        "{}",
        games.len()
    );
    let board = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--max-rd",
            "300",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&board.stdout).unwrap();
    let rows = crate::common::json_rows(&v, "mm · ratings (Glicko-1)");
    assert_eq!(rows.len(), 3, "every player is below the target: {v}");
}

/// The four modes against the real local model. Answers are constrained by a grammar where a test
/// needs whole games (the blindfold dialog), and free where it needs the model's own mistakes.
#[test]
fn the_play_modes_behave_in_real_games_against_the_local_model() {
    let Some(url) = local_llm("the_play_modes_behave_in_real_games_against_the_local_model") else {
        return;
    };
    let dir = TestDir::new();
    let players = [
        llm_player(&url, "bullet", "max_attempts = 2"),
        llm_player(&url, "blind", "grammar = true, legal_moves = true"),
        llm_player(&url, "san", "notation = \"san\", grammar = true"),
        llm_player(&url, "forfeiter", "max_attempts = 2, legal_moves = false"),
    ]
    .join(",\n")
    .replace(
        "name = \"bullet\",",
        "name = \"bullet\", mode = \"bullet\",",
    )
    .replace(
        "name = \"blind\",",
        "name = \"blind\", mode = \"blindfold\",",
    )
    .replace("name = \"san\",", "name = \"san\", mode = \"blitz\",")
    .replace(
        "name = \"forfeiter\",",
        "name = \"forfeiter\", mode = \"standard\",",
    );
    dir.write(
        "t.lua",
        &format!(
            r#"local players = {{ {players} }}
return arena.tournament {{
  name = "modes", format = "vs_random", max_plies = 8, seed = 3, concurrency = 1,
  players = (function() table.insert(players, arena.random {{ name = "rnd" }}) return players end)(),
}}"#
        ),
    );
    // Each model plays the random mover once with each colour.
    dir.write(
        "formats/vs_random.lua",
        r#"return { pairings = function(state)
  if #state.games > 0 then return nil end
  local games = {}
  for _, p in ipairs(state.players) do
    if p ~= "rnd" then
      table.insert(games, { white = p, black = "rnd" })
      table.insert(games, { white = "rnd", black = p })
    end
  end
  return games
end }"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("modes").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 8);
    let calls_of = |player: &str| {
        games
            .iter()
            .filter(|g| g.white == player || g.black == player)
            .flat_map(|g| {
                (0..=g.ply_count)
                    .flat_map(|p| store.llm_calls(g.id, p).unwrap())
                    .map(move |c| (g.id, c))
            })
            .collect::<Vec<_>>()
    };

    // Bullet (ChessArena's reasoning rule, the default): every reply is either a move ChessArena's
    // judge lets through or refused as forbidden reasoning (or a parse failure), and refusals
    // start the ply over without feedback.
    for (_, c) in calls_of("bullet") {
        let outcome = c.outcome.clone().unwrap();
        let text = c.call.reply_text.clone().unwrap();
        if outcome == "move" {
            assert!(!arena::board::chessarena::judge_thinking(&text), "{text}");
        }
        if outcome == "forbidden_reasoning" {
            assert!(arena::board::chessarena::judge_thinking(&text), "{text}");
        }
        let request: serde_json::Value = serde_json::from_str(&c.call.request_json).unwrap();
        if c.call.seq > 0 && outcome != "move" {
            // A bullet request never carries feedback after a forbidden-reasoning refusal: it
            // starts from the two opening messages again, or carries feedback for a parse error.
            assert!(request["messages"].as_array().unwrap().len() >= 2);
        }
    }

    // Blindfold: no board in any request, one growing dialog per game.
    let blind = calls_of("blind");
    assert!(!blind.is_empty());
    for (_, c) in &blind {
        assert!(
            !c.call.request_json.contains("/pppppppp/"),
            "a FEN was shown"
        );
        assert!(
            !c.call.request_json.contains("PPPPPPPP/"),
            "a FEN was shown"
        );
    }
    let mut by_game: std::collections::BTreeMap<i64, Vec<usize>> = Default::default();
    for (game, c) in &blind {
        let request: serde_json::Value = serde_json::from_str(&c.call.request_json).unwrap();
        by_game
            .entry(*game)
            .or_default()
            .push(request["messages"].as_array().unwrap().len());
    }
    for lengths in by_game.values() {
        assert!(
            lengths.windows(2).all(|w| w[1] > w[0]),
            "the dialog grows ply after ply: {lengths:?}"
        );
    }

    // SAN: answers are SAN, read back to the moves played.
    for (game, c) in calls_of("san") {
        if c.outcome.as_deref() == Some("move") {
            let reply = c.call.reply_text.unwrap();
            let san = reply.trim_matches(|ch: char| ch == '`' || ch.is_whitespace());
            let plies = store.plies(game).unwrap();
            assert!(
                plies.iter().any(|p| p.san.trim_end_matches(['+', '#']) == san.trim_end_matches(['+', '#'])),
                "{san} not among {plies:?}"
            );
        }
    }

    // Forfeit after the attempts: a game the model lost by forfeit has exactly max_attempts calls
    // at its last ply, all failures.
    for g in games
        .iter()
        .filter(|g| g.termination.as_deref() == Some("forfeit"))
    {
        let calls = store.llm_calls(g.id, g.ply_count).unwrap();
        assert!(!calls.is_empty(), "{g:?}");
        assert!(calls.iter().all(|c| c.outcome.as_deref() != Some("move")));
        let player = &calls[0].call.player;
        if player == "forfeiter" || player == "bullet" {
            assert_eq!(calls.len(), 2, "max_attempts = 2 for {player}");
        }
    }
    let outcomes: BTreeSet<String> = games
        .iter()
        .flat_map(|g| (0..=g.ply_count).flat_map(|p| store.llm_calls(g.id, p).unwrap()))
        .filter_map(|c| c.outcome)
        .collect();
    assert!(outcomes.contains("move"), "{outcomes:?}");
}

/// Answers pinned by a llama.cpp grammar make the modes' rules testable on the real model:
/// bullet refuses a reply with any word besides the move (forbidden reasoning, the ply starts over
/// without feedback) until the game is forfeited; blitz reads a SAN answer.
#[test]
fn pinned_answers_show_bullet_rejection_and_san_answers_in_real_games() {
    let Some(url) = local_llm("pinned_answers_show_bullet_rejection_and_san_answers_in_real_games")
    else {
        return;
    };
    let pinned = |name: &str, mode: &str, options: &str, answer: &str| {
        format!(
            r#"arena.llm {{ name = "{name}", base_url = "{url}", model = "smollm2-135m-instruct",
      max_tokens = 24, max_concurrency = 1, timeout_s = 300, mode = "{mode}",
      extra_body = {{ grammar = 'root ::= "{answer}"' }}, options = {{ {options} }} }}"#
        )
    };
    let dir = TestDir::new();
    dir.write(
        "formats/white_vs_random.lua",
        r#"return { pairings = function(state)
  if #state.games > 0 then return nil end
  local games = {}
  for _, p in ipairs(state.players) do
    if p ~= "rnd" then table.insert(games, { white = p, black = "rnd" }) end
  end
  return games
end }"#,
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "pinned", format = "white_vs_random", max_plies = 1, seed = 1, concurrency = 1,
  players = {{
    arena.random {{ name = "rnd" }},
    {chatty},
    {terse},
    {san},
  }},
}}"#,
            chatty = pinned(
                "chatty",
                "bullet",
                "max_attempts = 3",
                "I like it. ```\\\\ne2e4\\\\n```"
            ),
            terse = pinned(
                "terse",
                "bullet",
                "max_attempts = 3",
                "```\\\\ne2e4\\\\n```"
            ),
            san = pinned("san", "blitz", "notation = \"san\"", "```\\\\nNf3\\\\n```"),
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("pinned").unwrap().unwrap();
    for g in store.games(t.id).unwrap() {
        let calls = store.llm_calls(g.id, 0).unwrap();
        let outcomes: Vec<&str> = calls
            .iter()
            .map(|c| c.outcome.as_deref().unwrap())
            .collect();
        match g.white.as_str() {
            "chatty" => {
                assert_eq!(outcomes, ["forbidden_reasoning"; 3], "{g:?}");
                assert_eq!(g.termination.as_deref(), Some("forfeit"));
                assert_eq!(g.result.as_deref(), Some("0-1"));
                // Each attempt starts over from the same two messages: no feedback is added.
                for c in &calls {
                    let request: serde_json::Value =
                        serde_json::from_str(&c.call.request_json).unwrap();
                    assert_eq!(request["messages"].as_array().unwrap().len(), 2);
                }
            }
            "terse" => {
                assert_eq!(outcomes, ["move"]);
                assert_eq!(store.plies(g.id).unwrap()[0].uci, "e2e4");
            }
            "san" => {
                assert_eq!(outcomes, ["move"]);
                let ply = &store.plies(g.id).unwrap()[0];
                assert_eq!((ply.uci.as_str(), ply.san.as_str()), ("g1f3", "Nf3"));
            }
            other => panic!("unexpected {other}"),
        }
    }
}
