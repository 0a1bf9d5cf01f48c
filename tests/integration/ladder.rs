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
    let ladder = json["lad · ladder (maximum-likelihood Elo)"]
        .as_array()
        .unwrap_or_else(|| panic!("no ladder table in {json}"));
    assert_eq!(ladder.len(), 4, "{ladder:?}");
    let anchor = ladder
        .iter()
        .find(|r| r["player"] == "anchor (anchor)")
        .expect("the anchor row");
    assert_eq!(anchor["Elo"], 1000.0);
    assert!(anchor["± SE"].is_null());
    for name in ["rnd", "sf1", "sf20"] {
        let row = ladder
            .iter()
            .find(|r| r["player"] == name)
            .unwrap_or_else(|| panic!("{name} in {ladder:?}"));
        assert!(row["± SE"].as_f64().is_some_and(|se| se > 0.0), "{row}");
    }

    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--ladder", "nobody=1000"])
        .output()
        .expect("arena runs");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nobody"), "{}", stderr(&out));
}
