//! The Swiss and knockout formats in real tournaments (Stockfish at a few nodes and the random
//! mover), read back from the store and from `arena leaderboard --format json`; their option
//! errors from `arena check`.

use std::collections::{BTreeMap, BTreeSet};

use arena::store::GameRow;
use serde_json::Value;

use crate::common::{TestDir, open_store, stderr, stdout, stockfish};

fn sf(nodes: u32) -> String {
    format!(
        r#"arena.engine {{ name = "sf{nodes}", options = {{ Threads = 1, Hash = 16 }}, limits = {{ nodes = {nodes} }} }}"#
    )
}

/// Runs `players` in a tournament named `name` with this format and options; the stored games.
fn run(
    dir: &TestDir,
    name: &str,
    format: &str,
    options: &str,
    max_plies: u32,
    players: &[String],
) -> Vec<GameRow> {
    // A knockout can end in an armageddon, which needs a clock for its time odds.
    let clock = if format == "knockout" {
        " time_control = { base_s = 600 },"
    } else {
        ""
    };
    dir.write(
        "t.lua",
        &format!(
            "return arena.tournament {{\n  name = \"{name}\", format = \"{format}\", max_plies = {max_plies}, seed = 5, concurrency = 2,{clock}\n  format_options = {{ {options} }},\n  players = {{\n    {}\n  }},\n}}",
            players.join(",\n    ")
        ),
    );
    let out = dir.run("t.lua");
    assert!(out.status.success(), "{}", stderr(&out));
    let store = open_store(&dir.db());
    let t = store.find_tournament(name).unwrap().unwrap();
    let mut games = store.games(t.id).unwrap();
    games.sort_by_key(|g| g.index);
    games
}

/// `arena leaderboard --format json` of the store.
fn leaderboard(dir: &TestDir) -> Value {
    let out = dir
        .arena()
        .args(["leaderboard", "--db", "t.db", "--format", "json"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("json")
}

fn table<'a>(json: &'a Value, title: &str) -> &'a Vec<Value> {
    crate::common::json_rows(json, title)
}

fn pair(g: &GameRow) -> (String, String) {
    let mut p = [g.white.clone(), g.black.clone()];
    p.sort();
    (p[0].clone(), p[1].clone())
}

/// Each player's points from the games alone.
fn points(games: &[GameRow]) -> BTreeMap<String, f64> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for g in games {
        let (w, b) = match g.result.as_deref() {
            Some("1-0") => (1.0, 0.0),
            Some("0-1") => (0.0, 1.0),
            Some("1/2-1/2") => (0.5, 0.5),
            other => panic!("game {} has result {other:?}", g.index),
        };
        *out.entry(g.white.clone()).or_default() += w;
        *out.entry(g.black.clone()).or_default() += b;
    }
    out
}

#[test]
fn swiss_pairs_8_players_over_5_rounds_without_a_repeat_and_with_balanced_colours() {
    if !stockfish("swiss_pairs_8_players_over_5_rounds_without_a_repeat_and_with_balanced_colours")
    {
        return;
    }
    let dir = TestDir::new();
    let mut players: Vec<String> = [400, 200, 100, 50, 20, 5, 1].map(sf).to_vec();
    players.push(r#"arena.random { name = "random" }"#.into());
    let games = run(&dir, "sw", "swiss", "rounds = 5", 60, &players);
    assert_eq!(games.len(), 20, "4 boards, 5 rounds");
    let pairs: BTreeSet<_> = games.iter().map(pair).collect();
    assert_eq!(pairs.len(), 20, "a pair met twice");
    let mut by_round: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for g in &games {
        let seated = by_round.entry(g.round).or_default();
        assert!(
            seated.insert(g.white.clone()) && seated.insert(g.black.clone()),
            "{} twice in round {}",
            g.white,
            g.round
        );
    }
    assert_eq!(by_round.len(), 5);
    assert!(by_round.values().all(|s| s.len() == 8));
    let mut balance: BTreeMap<&str, i32> = BTreeMap::new();
    for g in &games {
        *balance.entry(g.white.as_str()).or_default() += 1;
        *balance.entry(g.black.as_str()).or_default() -= 1;
    }
    assert!(balance.values().all(|d| d.abs() <= 1), "{balance:?}");

    // The table: every player, its points as the games give them, and Buchholz from them.
    let json = leaderboard(&dir);
    let rows = table(&json, "sw · standings (Swiss)");
    assert_eq!(rows.len(), 8);
    let points = points(&games);
    for row in rows {
        let name = row["player"].as_str().unwrap();
        assert_eq!(row["points"].as_f64(), Some(points[name]), "{row}");
        let buchholz: f64 = games
            .iter()
            .filter_map(|g| {
                (g.white == name)
                    .then_some(&g.black)
                    .or((g.black == name).then_some(&g.white))
            })
            .map(|opponent| points[opponent])
            .sum();
        assert_eq!(row["buchholz"].as_f64(), Some(buchholz), "{row}");
        assert_eq!(row["games"], 5);
    }
    let report = std::fs::read_to_string(dir.path().join("t.html")).expect("the run's report");
    assert!(report.contains("standings (Swiss)") && report.contains("Buchholz cut-1"));
}

#[test]
fn swiss_gives_7_players_a_bye_each_round_and_counts_it() {
    if !stockfish("swiss_gives_7_players_a_bye_each_round_and_counts_it") {
        return;
    }
    let dir = TestDir::new();
    let mut players: Vec<String> = [100, 20, 5, 1].map(sf).to_vec();
    for i in 1..=3 {
        players.push(format!(r#"arena.random {{ name = "random{i}" }}"#));
    }
    let games = run(&dir, "sw7", "swiss", "rounds = 3", 40, &players);
    assert_eq!(games.len(), 9);
    let names: BTreeSet<String> = games
        .iter()
        .flat_map(|g| [g.white.clone(), g.black.clone()])
        .collect();
    let mut byes = Vec::new();
    for round in 1..=3 {
        let seated: BTreeSet<String> = games
            .iter()
            .filter(|g| g.round == round)
            .flat_map(|g| [g.white.clone(), g.black.clone()])
            .collect();
        let out: Vec<&String> = names.difference(&seated).collect();
        assert_eq!(out.len(), 1, "round {round}: {out:?}");
        byes.push(out[0].clone());
    }
    assert_eq!(byes[0], "random3", "the last seed sits out round 1");
    assert_eq!(byes.iter().collect::<BTreeSet<_>>().len(), 3, "{byes:?}");
    let json = leaderboard(&dir);
    let points = points(&games);
    for row in table(&json, "sw7 · standings (Swiss)") {
        let name = row["player"].as_str().unwrap();
        let bye = if byes.iter().any(|b| b == name) {
            1.0
        } else {
            0.0
        };
        assert_eq!(row["points"].as_f64(), Some(points[name] + bye), "{row}");
    }

    // `arena export trf`: a FIDE TRF file with a player line per seed (script order) holding
    // each round's opponent, colour and result as stored, the byes as pairing-allocated ones.
    let out = dir
        .arena()
        .args(["export", "trf", "--db", "t.db", "--tournament", "sw7"])
        .output()
        .expect("arena runs");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    // Tournament seed 5 (odd): the first board's higher seed has Black.
    assert_eq!(&lines[..3], &["012 sw7", "XXR 3", "XXC black1"], "{text}");
    let order = [
        "sf100", "sf20", "sf5", "sf1", "random1", "random2", "random3",
    ];
    let number = |name: &str| order.iter().position(|n| *n == name).unwrap() + 1;
    let players: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("001"))
        .collect();
    assert_eq!(players.len(), 7, "{text}");
    let cell = |player: usize, round: u32| {
        let at = 91 + 10 * (round as usize - 1);
        players[player - 1][at..at + 8].to_string()
    };
    for g in &games {
        let (w, b) = (number(&g.white), number(&g.black));
        let (rw, rb) = match g.result.as_deref() {
            Some("1-0") => ('1', '0'),
            Some("0-1") => ('0', '1'),
            _ => ('=', '='),
        };
        assert_eq!(cell(w, g.round), format!("{b:>4} w {rw}"), "{text}");
        assert_eq!(cell(b, g.round), format!("{w:>4} b {rb}"), "{text}");
    }
    for (round, name) in byes.iter().enumerate() {
        assert_eq!(cell(number(name), round as u32 + 1), "0000 - U", "{text}");
    }
    for (i, name) in order.iter().enumerate() {
        let bye = if byes.iter().any(|b| b == name) {
            1.0
        } else {
            0.0
        };
        let listed: f64 = players[i][80..84].trim().parse().unwrap();
        assert_eq!(listed, points[*name] + bye, "{name}: {text}");
    }
}

/// The bracket rows of the leaderboard, by round name.
fn bracket(json: &Value, name: &str) -> Vec<Value> {
    table(json, &format!("{name} · bracket (knockout)")).clone()
}

fn player_of(cell: &Value) -> Option<String> {
    // "sf400 (1)": the name before the seed.
    cell.as_str()
        .map(|s| s.rsplit_once(" (").map_or(s, |(n, _)| n).to_string())
}

#[test]
fn knockout_brackets_8_and_6_players_and_the_winners_path_holds() {
    if !stockfish("knockout_brackets_8_and_6_players_and_the_winners_path_holds") {
        return;
    }
    for field in [8usize, 6] {
        let dir = TestDir::new();
        // Seeds: four engines, strongest first, then random movers, which lose to them.
        let mut players: Vec<String> = [400, 100, 20, 5].map(sf).to_vec();
        for i in 1..=field - 4 {
            players.push(format!(r#"arena.random {{ name = "random{i}" }}"#));
        }
        let seed_of = |name: &str| -> usize {
            [
                "sf400", "sf100", "sf20", "sf5", "random1", "random2", "random3", "random4",
            ]
            .iter()
            .position(|n| *n == name)
            .unwrap()
                + 1
        };
        let name = format!("ko{field}");
        let games = run(
            &dir,
            &name,
            "knockout",
            "games_per_match = 2",
            200,
            &players,
        );
        let first: BTreeSet<(usize, usize)> = games
            .iter()
            .filter(|g| g.round == 1)
            .map(|g| {
                let (a, b) = (seed_of(&g.white), seed_of(&g.black));
                (a.min(b), a.max(b))
            })
            .collect();
        let want: BTreeSet<(usize, usize)> = if field == 8 {
            [(1, 8), (4, 5), (2, 7), (3, 6)].into()
        } else {
            // Seeds 1 and 2 have byes.
            [(4, 5), (3, 6)].into()
        };
        assert_eq!(first, want, "{field} players");
        let json = leaderboard(&dir);
        let rows = bracket(&json, &name);
        // Everyone in a match past round 1 went through the match (or bye) before it.
        let mut through: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for row in &rows {
            let round = row["round"].as_str().unwrap().to_string();
            let winner = player_of(&row["through"]).expect("every match decided");
            through.entry(round).or_default().insert(winner);
        }
        let order = ["quarter-final", "semi-final", "final"];
        for w in order.windows(2) {
            for row in rows.iter().filter(|r| r["round"] == w[1]) {
                for side in ["higher_seed", "lower_seed"] {
                    let p = player_of(&row[side]).unwrap();
                    assert!(
                        through[w[0]].contains(&p),
                        "{p} in the {} did not win its {}",
                        w[1],
                        w[0]
                    );
                }
            }
        }
        let final_row = rows.iter().find(|r| r["round"] == "final").unwrap();
        let champion = player_of(&final_row["through"]).unwrap();
        let placing = table(&json, &format!("{name} · placing (knockout)"));
        assert_eq!(placing[0]["place"], "1");
        assert_eq!(placing[0]["player"], champion.as_str());
        assert_eq!(placing[1]["place"], "2");
        assert_eq!(placing.len(), field);
        // The games agree with the table: the champion scored at least half of every match.
        for row in rows.iter().filter(|r| r["tie_break"] != "bye") {
            let (a, b) = (
                player_of(&row["higher_seed"]).unwrap(),
                player_of(&row["lower_seed"]).unwrap(),
            );
            let winner = player_of(&row["through"]).unwrap();
            let loser = if winner == a { &b } else { &a };
            let mine: Vec<&GameRow> = games
                .iter()
                .filter(|g| pair(g) == pair_of(&a, &b))
                .collect();
            let p = points(&mine.iter().map(|g| (*g).clone()).collect::<Vec<_>>());
            assert!(p[&winner] >= p[loser], "{row}: {p:?}");
        }
    }
}

fn pair_of(a: &str, b: &str) -> (String, String) {
    let mut p = [a.to_string(), b.to_string()];
    p.sort();
    (p[0].clone(), p[1].clone())
}

#[test]
fn a_drawn_knockout_match_goes_to_its_armageddon_which_black_wins_on_a_draw() {
    if !stockfish("a_drawn_knockout_match_goes_to_its_armageddon_which_black_wins_on_a_draw") {
        return;
    }
    let dir = TestDir::new();
    // Two plies: every game is drawn by the move limit, the armageddon too.
    let games = run(
        &dir,
        "arm",
        "knockout",
        r#"games_per_match = 2, tiebreak = "armageddon""#,
        2,
        &[sf(50), sf(10)],
    );
    assert_eq!(games.len(), 3, "two games and the armageddon");
    assert_eq!(games[0].white, games[1].black, "both colours");
    // The armageddon's time odds: White its 600 s, Black 0.8 of its own; the match games none.
    let store = open_store(&dir.db());
    let clocks: Vec<Option<Value>> = games
        .iter()
        .map(|g| {
            store
                .stored_time_control(g.id)
                .unwrap()
                .map(|json| serde_json::from_str(&json).unwrap())
        })
        .collect();
    let base = |c: &Option<Value>, side: &str| c.as_ref().unwrap()[side]["base_s"].as_f64();
    assert_eq!(base(&clocks[0], "black"), Some(600.0), "{clocks:?}");
    assert_eq!(base(&clocks[1], "black"), Some(600.0), "{clocks:?}");
    assert_eq!(base(&clocks[2], "white"), Some(600.0), "{clocks:?}");
    assert_eq!(base(&clocks[2], "black"), Some(480.0), "{clocks:?}");
    drop(store);
    let json = leaderboard(&dir);
    let rows = bracket(&json, "arm");
    assert_eq!(player_of(&rows[0]["through"]), Some(games[2].black.clone()));
    assert!(
        rows[0]["tie_break"]
            .as_str()
            .unwrap()
            .starts_with("armageddon"),
        "{rows:?}"
    );

    // With `pair`, one extra pair (capped at 1) before the armageddon.
    let dir = TestDir::new();
    let games = run(
        &dir,
        "pair",
        "knockout",
        r#"tiebreak = "pair", max_tiebreak_pairs = 1"#,
        2,
        &[sf(50), sf(10)],
    );
    assert_eq!(games.len(), 5);
    assert_eq!(games[2].white, games[3].black);
}

#[test]
fn bad_format_options_are_check_errors_at_the_tournament_line() {
    let dir = TestDir::new();
    for (format, options, message) in [
        ("swiss", "rounds = 0", "`rounds` must be a whole number"),
        (
            "swiss",
            "rounds = 4",
            "`rounds = 4` is too many for 4 players: a Swiss of more than 3 rounds can reach a round that the Dutch system cannot pair",
        ),
        ("swiss", "roundz = 4", "has no option `roundz`"),
        (
            "knockout",
            "games_per_match = 3",
            "`games_per_match` must be an even",
        ),
        (
            "knockout",
            "games_per_match = 0",
            "`games_per_match` must be an even",
        ),
        ("knockout", r#"tiebreak = "coin""#, "`tiebreak` must be"),
        (
            "knockout",
            "games_per_match = 2",
            "`tiebreak`: every knockout can end in an armageddon, whose draw odds for Black need time odds for White, and a, b, c, d play without a clock: set the tournament's `time_control`",
        ),
    ] {
        dir.write(
            "t.lua",
            &format!(
                "-- a comment\nreturn arena.tournament {{\n  name = \"t\", format = \"{format}\",\n  format_options = {{ {options} }},\n  players = {{ arena.random {{ name = \"a\" }}, arena.random {{ name = \"b\" }}, arena.random {{ name = \"c\" }}, arena.random {{ name = \"d\" }} }},\n}}"
            ),
        );
        let out = dir
            .arena()
            .args(["check", "t.lua"])
            .output()
            .expect("arena runs");
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(2), "{options}: {text}");
        assert!(text.contains("t.lua:4:"), "{options}: {text}");
        assert!(text.contains(message), "{options}: {text}");
    }
}

#[test]
fn a_dry_run_counts_every_round_of_a_swiss_and_the_longest_knockout() {
    let dir = TestDir::new();
    let randoms: Vec<String> = (1..=7)
        .map(|i| format!(r#"arena.random {{ name = "r{i}" }}"#))
        .collect();
    for (format, options, want) in [
        // Three boards (one bye) a round.
        ("swiss", "rounds = 3", "9 game(s) scheduled"),
        // Seven players: six matches, each of two games, two tie-break pairs and an armageddon.
        ("knockout", r#"tiebreak = "pair""#, "42 game(s) scheduled"),
    ] {
        dir.write(
            "t.lua",
            &format!(
                "return arena.tournament {{ name = \"t\", format = \"{format}\", format_options = {{ {options} }}, time_control = {{ base_s = 60 }}, players = {{ {} }} }}",
                randoms.join(", ")
            ),
        );
        let out = dir
            .arena()
            .args(["run", "t.lua", "--db", "t.db", "--dry-run"])
            .output()
            .expect("arena runs");
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(want), "{format}: {text}");
        assert!(text.contains("counted with every game drawn"), "{text}");
        assert!(!dir.db().exists(), "a dry run stores nothing");
    }
}

#[test]
fn a_round_with_no_legal_pairing_stops_the_run_with_a_named_error_and_keeps_the_games() {
    // A format whose rules leave no pairing for round 2 (as the Swiss format answers when the
    // Dutch system is stuck): the run stops with arena's error naming the round, the games of
    // round 1 stay finished in the store, and a second run stops the same way without replaying
    // or losing them.
    let dir = TestDir::new();
    dir.write(
        "formats/stuck.lua",
        r#"local M = {}
function M.pairings(state)
  if #state.games == 0 then
    return { { white = "a", black = "b", round = 1 }, { white = "c", black = "d", round = 1 } }
  end
  return { no_pairing = { round = 2, reason = "every pairing left repeats a game" } }
end
return M"#,
    );
    dir.write(
        "t.lua",
        r#"return arena.tournament {
  name = "stuck", format = "stuck", max_plies = 4, seed = 1, concurrency = 2,
  players = { arena.random { name = "a" }, arena.random { name = "b" }, arena.random { name = "c" }, arena.random { name = "d" } },
}"#,
    );
    for _ in 0..2 {
        let out = dir.run("t.lua");
        assert!(!out.status.success(), "the run must fail");
        let errors = stderr(&out);
        assert!(
            errors.contains(
                "no legal pairing for round 2: every pairing left repeats a game; the tournament stops after round 1, and every game played so far is kept"
            ),
            "{errors}"
        );
        let store = open_store(&dir.db());
        let t = store.find_tournament("stuck").unwrap().unwrap();
        let games = store.games(t.id).unwrap();
        assert_eq!(games.len(), 2);
        assert!(
            games
                .iter()
                .all(|g| g.status == arena::store::GameStatus::Finished && g.result.is_some()),
            "{games:?}"
        );
    }
}
