//! Real tournaments: the local model against Stockfish and the random mover.

use crate::common::{TestDir, llm_player, local_llm, open_store, stderr, stdout, stockfish};

#[test]
fn the_local_model_plays_stockfish_and_the_random_mover() {
    let Some(url) = local_llm("the_local_model_plays_stockfish_and_the_random_mover") else {
        return;
    };
    if !stockfish("the_local_model_plays_stockfish_and_the_random_mover") {
        return;
    }
    let dir = TestDir::new();
    let model = llm_player(
        &url,
        "smol",
        "max_attempts = 2, parser = \"tolerant\", history = 4",
    );
    dir.write(
        "t.lua",
        &format!(
            r#"return arena.tournament {{
  name = "real", games_per_pair = 2, max_plies = 8, seed = 11, concurrency = 2,
  players = {{
    {model},
    arena.engine {{ name = "sf", options = {{ ["Skill Level"] = 0, Threads = 1, Hash = 16 }}, limits = {{ nodes = 300 }} }},
    arena.random {{ name = "rnd" }},
  }},
}}"#
        ),
    );
    let out = dir.run("t.lua");
    // The tiny model may get no move read in any of its games: the run then says it compared no
    // chess, with its own exit code (checked against the store below).
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 3)), "{}", stderr(&out));
    let table = stdout(&out);
    for name in ["smol", "sf", "rnd"] {
        assert!(table.contains(name), "{table}");
    }

    let store = open_store(&dir.db());
    let t = store.find_tournament("real").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    assert_eq!(games.len(), 6, "3 pairs × 2 games");
    let compared = arena::tournament::degenerate::ChessCompared::read(&store, t.id).unwrap();
    assert_eq!(
        code == Some(3),
        compared.tournament_no_chess(),
        "{compared:?}"
    );
    let mut calls = 0;
    for g in &games {
        assert_eq!(g.status, arena::store::GameStatus::Finished, "{g:?}");
        assert!(g.script_hash.is_some());
        for ply in 0..=g.ply_count {
            for c in store.llm_calls(g.id, ply).unwrap() {
                calls += 1;
                // Every call is stored with what was sent, what came back and what it meant.
                assert!(c.call.request_json.contains("\"messages\""));
                assert!(c.call.reply_text.is_some());
                assert!(c.outcome.is_some(), "{c:?}");
                assert_eq!(c.call.player, "smol");
                assert!(c.call.prompt_tokens.is_some_and(|t| t > 0));
            }
        }
    }
    assert!(
        calls >= 4,
        "each of the model's 4 games asks it at least once"
    );

    let standings = store.standings(t.id).unwrap();
    let smol = standings.iter().find(|r| r.player == "smol").unwrap();
    assert_eq!(smol.games, 4);
    assert_eq!(smol.llm_calls, calls);
    assert_eq!(smol.wins + smol.draws + smol.losses, 4);
    // Every failed attempt is counted as a parse error, an illegal move or a reply cut off at
    // the token limit.
    let failed: u64 = games
        .iter()
        .flat_map(|g| (0..=g.ply_count).flat_map(|p| store.llm_calls(g.id, p).unwrap()))
        .filter(|c| c.outcome.as_deref() != Some("move"))
        .count() as u64;
    assert_eq!(
        smol.parse_errors + smol.illegal_moves + smol.cut_offs,
        failed
    );
}

#[test]
fn random_movers_are_reproducible_from_the_seed() {
    let moves = |seed: u64| {
        let dir = TestDir::new();
        dir.write(
            "t.lua",
            &format!(
                r#"return arena.tournament {{
  name = "seeded", games_per_pair = 2, max_plies = 60, seed = {seed}, concurrency = 2,
  players = {{ arena.random {{ name = "a" }}, arena.random {{ name = "b", seed = 9 }} }},
}}"#
            ),
        );
        let out = dir.run("t.lua");
        assert!(out.status.success(), "{}", stderr(&out));
        let store = open_store(&dir.db());
        let t = store.find_tournament("seeded").unwrap().unwrap();
        store
            .games(t.id)
            .unwrap()
            .iter()
            .map(|g| {
                store
                    .plies(g.id)
                    .unwrap()
                    .into_iter()
                    .map(|p| p.uci)
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let first = moves(1);
    assert_eq!(first, moves(1), "the same seed plays the same games");
    assert_ne!(first, moves(2), "another seed plays other games");
    assert_ne!(first[0], first[1], "the two games of a pair differ");
}
