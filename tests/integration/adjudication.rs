//! Adjudication by an engine, end to end: cutechess's resign rule ends Stockfish's games against
//! the random mover, the move-limit verdict is stored beside games that reached `max_plies`
//! without changing their result, and `arena check` names the line of a bad rule.

use arena::{
    engine::Score,
    store::{GameRow, Store},
    tournament::adjudicate::mover_cp,
};

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

fn finished_games(store: &Store) -> Vec<GameRow> {
    let t = store.tournaments().unwrap().remove(0);
    store.games(t.id).unwrap()
}

#[test]
fn stockfish_beats_the_random_mover_by_resign_adjudication() {
    if !stockfish("stockfish_beats_the_random_mover_by_resign_adjudication") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local arena = require("arena")
return arena.tournament {
  name = "adj", games_per_pair = 2, max_plies = 300, seed = 5,
  adjudication = {
    engine = "sf", nodes = 2000,
    resign = { score_cp = 1000, moves = 3 },
  },
  players = {
    arena.engine { name = "sf", options = { Threads = 1, Hash = 16 }, limits = { nodes = 200 } },
    arena.random { name = "rnd" },
  },
}
"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = finished_games(&store);
    assert_eq!(games.len(), 2);
    for g in &games {
        assert_eq!(
            g.termination.as_deref(),
            Some("adjudication_resign"),
            "{g:?}"
        );
        let sf_wins = if g.white == "sf" { "1-0" } else { "0-1" };
        assert_eq!(g.result.as_deref(), Some(sf_wins), "{g:?}");
        assert!(
            g.reason.as_deref().unwrap().contains("`rnd`"),
            "{:?}",
            g.reason
        );
        // Every ply was evaluated once, and the verdict is cutechess's: the loser's score (the
        // engine's score of the next position, turned to the mover) was at most -1000 after each
        // of its last three moves, and never before for three of its moves in a row.
        let evals = store.adjudication_evals(g.id).unwrap();
        assert_eq!(evals.len() as u32, g.ply_count, "{evals:?}");
        let loser_first = if g.white == "rnd" { 0 } else { 1 };
        let loser: Vec<i32> = evals
            .iter()
            .filter(|e| e.ply % 2 == loser_first)
            .map(|e| mover_cp(e.score.expect("a score")))
            .collect();
        let n = loser.len();
        assert!(n >= 3, "{loser:?}");
        assert!(loser[n - 3..].iter().all(|s| *s <= -1000), "{loser:?}");
        assert!(
            !loser[..n - 1]
                .windows(3)
                .any(|w| w.iter().all(|s| *s <= -1000)),
            "the rule should have ended the game earlier: {loser:?}"
        );
        // The last ply was the loser's: cutechess judges a side at its own move.
        assert_eq!(evals.last().unwrap().ply % 2, loser_first);
        assert_eq!(store.limit_verdict(g.id).unwrap(), None);
    }
    let pgn = dir
        .arena()
        .args(["export", "pgn", "--db", "t.db"])
        .output()
        .unwrap();
    let pgn = stdout(&pgn);
    assert_eq!(
        pgn.matches("[Termination \"adjudication\"]\n[ArenaTermination \"adjudication_resign\"]")
            .count(),
        2,
        "{pgn}"
    );
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--stats"])
        .output()
        .unwrap();
    let board = stdout(&board);
    assert!(board.contains("won by adjudication resign"), "{board}");
}

#[test]
fn the_move_limit_verdict_is_stored_apart_from_the_result() {
    if !stockfish("the_move_limit_verdict_is_stored_apart_from_the_result") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local arena = require("arena")
return arena.tournament {
  name = "lim", games_per_pair = 4, max_plies = 16, seed = 3,
  adjudication = { engine = "stockfish", move_limit = { score_cp = 150, nodes = 3000 } },
  players = { arena.random { name = "a" }, arena.random { name = "b", seed = 9 } },
}
"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let games = finished_games(&store);
    assert_eq!(games.len(), 4);
    let mut decisive = 0;
    for g in &games {
        // The official result is the move limit's draw, as without adjudication.
        assert_eq!(g.result.as_deref(), Some("1/2-1/2"), "{g:?}");
        assert_eq!(g.termination.as_deref(), Some("move_limit"), "{g:?}");
        let verdict = store.limit_verdict(g.id).unwrap().expect("a verdict");
        assert_eq!(g.at_limit.as_deref(), Some(verdict.result.as_str()));
        assert_eq!(verdict.threshold_cp, 150);
        assert_eq!(verdict.limits, "nodes 3000");
        assert!(verdict.engine.starts_with("Stockfish"), "{verdict:?}");
        // White's view: a positive score favours White.
        let white = match verdict.score {
            Score::Cp(cp) => cp,
            Score::Mate(n) if n > 0 => 100_000,
            Score::Mate(_) => -100_000,
        };
        let expected = if white >= 150 {
            "1-0"
        } else if white <= -150 {
            "0-1"
        } else {
            "1/2-1/2"
        };
        assert_eq!(verdict.result, expected, "{verdict:?}");
        decisive += usize::from(expected != "1/2-1/2");
        // No live rule: nothing is evaluated as the game goes.
        assert!(store.adjudication_evals(g.id).unwrap().is_empty());
    }
    let board = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--games"])
        .output()
        .unwrap();
    let board = stdout(&board);
    assert!(board.contains("at limit W-D-L"), "{board}");
    assert!(
        board.contains("their official result stays a draw"),
        "{board}"
    );
    // The ratings and standings count four draws each, whatever the verdicts.
    let standings = board
        .lines()
        .filter(|l| l.starts_with("1  ") || l.starts_with("2  "))
        .find(|l| l.contains("50.0"))
        .unwrap_or_else(|| panic!("no 50 % row in {board}"));
    assert!(standings.contains(" 4  0  4  0 "), "{standings}");
    eprintln!("{decisive} of 4 verdicts decisive");
}

#[test]
fn bad_adjudication_rules_name_the_tournament_line() {
    let dir = TestDir::new();
    let script = |adjudication: &str| {
        format!(
            "local arena = require('arena')\n\nreturn arena.tournament {{\n  name = 't',\n  adjudication = {adjudication},\n  players = {{ arena.random {{ name = 'a' }}, arena.llm {{ name = 'm', base_url = 'http://127.0.0.1:1/v1', model = 'x' }} }},\n}}\n"
        )
    };
    let cases = [
        (
            "{ resign = { score_cp = 1000, moves = 4 } }",
            "adjudication: a rule needs an engine",
        ),
        (
            "{ engine = 'stockfish', draw = { after_move = 40, score_cp = 10, moves = 0 } }",
            "adjudication: `draw.moves` must be at least 1, not 0",
        ),
        (
            "{ engine = 'stockfish', resign = { score_cp = 1000, moves = -3 } }",
            "adjudication: `resign.moves` must be at least 1, not -3",
        ),
        (
            "{ engine = 'stockfish', resign = { score_cp = 1000, moves = 4, two_sided = true } }",
            "unknown key `two_sided` in `adjudication.resign`",
        ),
        (
            "{ engine = 'stockfish', resing = { score_cp = 1000, moves = 4 } }",
            "unknown key `resing` in `adjudication`; did you mean `resign`?",
        ),
        (
            "{ engine = 'm', move_limit = {} }",
            "`engine = \"m\"` names a player that is a llm player, not an engine",
        ),
        ("{ engine = 'stockfish' }", "adjudication: no rule"),
    ];
    for (adjudication, message) in cases {
        dir.write("t.lua", &script(adjudication));
        let out = dir.arena().args(["check", "t.lua"]).output().unwrap();
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{adjudication}: {text}");
        assert!(
            text.contains(&format!("t.lua:5: {message}"))
                || text
                    .lines()
                    .any(|l| l.starts_with("t.lua:5:") && l.contains(message)),
            "{adjudication}: {text}"
        );
    }
}
