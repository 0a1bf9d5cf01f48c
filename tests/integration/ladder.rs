//! The ladder format and `arena leaderboard --ladder`: neighbours and the anchor meet, the others
//! do not, and the fitted table pins the anchor at its rating.

use std::collections::BTreeSet;

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

#[test]
fn a_ladder_plays_neighbours_and_the_anchor_and_is_rated() {
    if !stockfish("a_ladder_plays_neighbours_and_the_anchor_and_is_rated") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local function sf(nodes)
  return arena.engine { name = "sf" .. nodes, options = { Threads = 1, Hash = 16 }, limits = { nodes = nodes } }
end
return arena.tournament {
  name = "lad", format = "ladder", max_plies = 60, seed = 2, concurrency = 2,
  format_options = { anchor = "anchor", anchor_rating = 1000, games_per_pair = 2 },
  players = {
    arena.random { name = "rnd" },
    sf(1),
    sf(20),
    arena.engine { name = "anchor", options = { Threads = 1, Hash = 16 }, limits = { nodes = 200 } },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("lad").unwrap().unwrap();
    let games = store.games(t.id).unwrap();
    let pairs: BTreeSet<(String, String)> = games
        .iter()
        .map(|g| {
            let mut p = [g.white.clone(), g.black.clone()];
            p.sort();
            (p[0].clone(), p[1].clone())
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("rnd", "sf1"),
        ("sf1", "sf20"),
        ("anchor", "rnd"),
        ("anchor", "sf1"),
        ("anchor", "sf20"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pairs, want, "span 1: rnd and sf20 do not meet");
    assert_eq!(games.len(), 10);
    // Each pair played both colours.
    for g in &games {
        assert!(
            games
                .iter()
                .any(|h| h.white == g.black && h.black == g.white),
            "{} vs {} has no return game",
            g.white,
            g.black
        );
    }

    let out = dir
        .arena()
        .args([
            "leaderboard",
            "--db",
            "t.db",
            "--ladder",
            "anchor=1000",
            "--format",
            "json",
        ])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let ladder = crate::common::json_rows(&json, "lad · ladder (maximum-likelihood Elo)");
    assert_eq!(ladder.len(), 4, "{ladder:?}");
    let anchor = ladder
        .iter()
        .find(|r| r["player"] == "anchor (anchor)")
        .expect("the anchor row");
    assert_eq!(anchor["elo"], 1000.0);
    assert!(anchor["plus_minus_se"].is_null());
    for name in ["rnd", "sf1", "sf20"] {
        let row = ladder
            .iter()
            .find(|r| r["player"] == name)
            .unwrap_or_else(|| panic!("{name} in {ladder:?}"));
        assert!(
            row["plus_minus_se"].as_f64().is_some_and(|se| se > 0.0),
            "{row}"
        );
    }

    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--ladder", "nobody=1000"])
        .output()
        .expect("arena runs");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nobody"), "{}", stderr(&out));
}

/// Every game's moves, in game order.
fn moves_of(dir: &TestDir, name: &str) -> Vec<Vec<String>> {
    let store = open_store(&dir.db());
    let t = store.find_tournament(name).unwrap().unwrap();
    let mut games = store.games(t.id).unwrap();
    games.sort_by_key(|g| g.index);
    games
        .iter()
        .map(|g| {
            store
                .plies(g.id)
                .unwrap()
                .into_iter()
                .map(|p| p.uci)
                .collect()
        })
        .collect()
}

#[test]
fn ladder_rungs_replay_move_for_move_from_the_seed() {
    if !stockfish("ladder_rungs_replay_move_for_move_from_the_seed") {
        return;
    }
    let script = |seed: u32| {
        format!(
            r#"local opts = {{ Threads = 1, Hash = 16 }}
return arena.tournament {{
  name = "rungs", format = "round_robin", games_per_pair = 4, max_plies = 80, seed = {seed},
  concurrency = 2,
  players = {{
    arena.engine {{ name = "mix30", options = opts, limits = {{ nodes = 1 }}, random_move_p = 0.3 }},
    arena.engine {{ name = "sf-n256", options = opts, limits = {{ nodes = 256 }} }},
  }},
}}"#
        )
    };
    let play = |seed: u32| {
        let dir = TestDir::new();
        dir.write("t.lua", &script(seed));
        let out = dir.run("t.lua");
        assert!(out.status.success(), "{}", stderr(&out));
        moves_of(&dir, "rungs")
    };
    let first = play(5);
    assert_eq!(first.len(), 4);
    assert!(first.iter().all(|g| !g.is_empty()));
    assert_eq!(first, play(5), "the same seed replays every game");
    let other = play(6);
    // Stockfish alone is deterministic whatever the seed: only the mixture's coin and moves
    // can make these games differ.
    assert_ne!(first, other, "another seed gives other random moves");
}

#[test]
fn a_mixture_probability_outside_0_to_1_is_refused() {
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "bad", players = {
    arena.engine { name = "m", random_move_p = 1.5 },
    arena.random { name = "r" },
  },
}"#,
    );
    let out = dir
        .arena()
        .args(["check", "t.lua"])
        .output()
        .expect("arena runs");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("random_move_p"), "{}", stderr(&out));
}

#[test]
fn an_anchor_playing_neighbours_is_an_ordinary_rung() {
    if !stockfish("an_anchor_playing_neighbours_is_an_ordinary_rung") {
        return;
    }
    let dir = TestDir::new();
    dir.write(
        "t.lua",
        r#"local opts = { Threads = 1, Hash = 16 }
return arena.tournament {
  name = "lad", format = "ladder", max_plies = 40, seed = 3,
  format_options = { anchor = "rnd", anchor_plays = "neighbours", games_per_pair = 2 },
  players = {
    arena.random { name = "rnd" },
    arena.engine { name = "mix", options = opts, limits = { nodes = 1 }, random_move_p = 0.5 },
    arena.engine { name = "sf", options = opts, limits = { nodes = 1 } },
  },
}"#,
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament("lad").unwrap().unwrap();
    let pairs: BTreeSet<(String, String)> = store
        .games(t.id)
        .unwrap()
        .iter()
        .map(|g| {
            let mut p = [g.white.clone(), g.black.clone()];
            p.sort();
            (p[0].clone(), p[1].clone())
        })
        .collect();
    let want: BTreeSet<(String, String)> = [("mix", "rnd"), ("mix", "sf")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(pairs, want, "the anchor meets only its neighbour");

    dir.write(
        "bad.lua",
        r#"return arena.tournament {
  name = "bad", format = "ladder",
  format_options = { anchor = "a", anchor_plays = "some" },
  players = { arena.random { name = "a" }, arena.random { name = "b" } },
}"#,
    );
    let out = dir
        .arena()
        .args(["run", "bad.lua", "--db", "bad.db", "--no-watch"])
        .output()
        .expect("arena runs");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("anchor_plays"), "{}", stderr(&out));
}

#[test]
fn calibrate_fits_both_scales_and_ships_compressed_games() {
    if !stockfish("calibrate_fits_both_scales_and_ships_compressed_games") {
        return;
    }
    let dir = TestDir::new();
    // A tiny calibration: the random mover, Stockfish's UCI_Elo floor and Stockfish at 1 node, in
    // two tournaments of one store, as tournaments/calibrate.lua and calibrate_uci.lua play it.
    dir.write(
        "nodes.lua",
        r#"return arena.tournament {
  name = "calibrate", format = "ladder", max_plies = 80, seed = 4, concurrency = 2,
  format_options = { anchor = "random", anchor_plays = "neighbours", games_per_pair = 6 },
  players = {
    arena.random { name = "random" },
    arena.engine { name = "mix50", options = { Threads = 1, Hash = 16 }, limits = { nodes = 1 }, random_move_p = 0.5 },
  },
}"#,
    );
    dir.write(
        "uci.lua",
        r#"return arena.tournament {
  name = "calibrate-uci", format = "ladder", max_plies = 80, seed = 5, concurrency = 2,
  format_options = { anchor = "mix50", anchor_plays = "neighbours", games_per_pair = 6 },
  players = {
    arena.engine { name = "mix50", options = { Threads = 1, Hash = 16 }, limits = { nodes = 1 }, random_move_p = 0.5 },
    arena.engine {
      name = "uci1350",
      options = { Threads = 1, Hash = 16, UCI_LimitStrength = true, UCI_Elo = 1350 },
      limits = { movetime_ms = 10 },
    },
  },
}"#,
    );
    for script in ["nodes.lua", "uci.lua"] {
        let out = dir.run(script);
        assert!(out.status.success(), "{script}: {}", stderr(&out));
    }
    let out = dir
        .arena()
        .args(["calibrate", "--db", "t.db", "--out", "ladder"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("12 games"), "{text}");
    assert!(text.contains("offset UCI_Elo − ladder"), "{text}");
    let gz = std::fs::read(dir.path().join("ladder/calibrate.pgn.gz")).expect("the games");
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "gzip-compressed");

    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("ladder/calibration.json")).unwrap(),
    )
    .unwrap();
    let rungs = json["rungs"].as_array().unwrap();
    let names: Vec<&str> = rungs.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names.len(),
        3,
        "{names:?}: mix50 is one rung of both tournaments"
    );
    let rung = |name: &str| rungs.iter().find(|r| r["name"] == name).unwrap();
    assert_eq!(rung("random")["elo"], -122.27);
    assert_eq!(rung("mix50")["games"], 12);
    let uci = &json["uci_elo"];
    assert_eq!(uci["pinned"][0]["name"], "uci1350");
    assert_eq!(uci["pinned"][0]["nominal"], 1350.0);
    assert_eq!(
        rung("uci1350")["uci_elo"],
        1350.0,
        "pinned in the second fit"
    );
    let offset = uci["offset"].as_f64().unwrap();
    let random_uci = rung("random")["uci_elo"].as_f64().unwrap();
    assert!((offset - (random_uci + 122.27)).abs() < 1e-9, "{uci}");
    assert!(uci["offset_se"].as_f64().unwrap() > 0.0);
}
