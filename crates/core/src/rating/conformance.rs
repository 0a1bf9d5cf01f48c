//! Conformance with the two anchor systems' published numbers.
//!
//! The reference files are read from the folder named by `ARENA_REFERENCE_DATA` (ChessArena's carry
//! no licence, so they are never copied into this repository); without it the tests say so and pass.

use std::{collections::BTreeMap, path::PathBuf};

use serde_json::Value;

use super::{
    elo_anchor::{self, Block, Color, WHITE_ADVANTAGE},
    glicko::{self, Compat, GameResult, GlickoConfig},
};

fn reference(relative: &str) -> Option<PathBuf> {
    let root = crate::test_parts::reference_data(&format!("rating conformance on `{relative}`"))?;
    Some(root.join(relative))
}

fn read_json(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("failed to read `{}`: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("failed to parse `{}`: {e}", path.display()))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {v}"))
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("`{key}` is not a string in {v}"))
}

/// Replays ChessArena's `games_history` (commit be1bc27e) and matches every stored value.
#[test]
fn chessarena_ratings_replay_exactly_in_compat_mode() {
    let Some(path) = reference("ChessArena/commit-be1bc27e/simulation_record/ratings.json") else {
        return;
    };
    let data = read_json(&path);
    let cfg = GlickoConfig {
        initial_rating: num(&data, "initial_rating"),
        initial_rd: num(&data, "initial_RD"),
        min_rd: num(&data, "min_RD"),
        compat: Compat::ChessArena,
    };
    assert_eq!(cfg, GlickoConfig::chess_arena());
    let history = data["games_history"]
        .as_array()
        .expect("games_history list");
    let games: Vec<GameResult> = history
        .iter()
        .map(|g| GameResult {
            white: text(g, "player_a").to_owned(),
            black: text(g, "player_b").to_owned(),
            score_white: num(g, "result"),
        })
        .collect();
    let compat = glicko::rate_games(&games, &cfg).expect("the published games rate");

    const TOL: f64 = 1e-6;
    let mut checked = 0;
    for (i, (stored, ours)) in history.iter().zip(compat.games()).enumerate() {
        let pairs = [
            ("rating_a_before", ours.white_before.rating),
            ("RD_a_before", ours.white_before.rd),
            ("rating_b_before", ours.black_before.rating),
            ("RD_b_before", ours.black_before.rd),
            ("rating_a_after", ours.white_after.rating),
            ("RD_a_after", ours.white_after.rd),
            ("rating_b_after", ours.black_after.rating),
            ("RD_b_after", ours.black_after.rd),
        ];
        for (key, value) in pairs {
            let want = num(stored, key);
            assert!(
                (want - value).abs() <= TOL,
                "game {i} ({}): `{key}` is {value}, ChessArena stored {want}",
                text(stored, "date")
            );
            checked += 1;
        }
    }
    assert_eq!(compat.games().len(), history.len());

    let players = data["players"].as_object().expect("players map");
    for (name, stored) in players {
        let games = stored["games"].as_u64().expect("games count");
        let Some(ours) = compat.player(name) else {
            assert_eq!(games, 0, "`{name}` has games but was never rated");
            continue;
        };
        assert_eq!(u64::from(ours.games), games, "games of `{name}`");
        assert!(
            (ours.rating - num(stored, "rating")).abs() <= TOL,
            "rating of `{name}`"
        );
        assert!((ours.rd - num(stored, "RD")).abs() <= TOL, "RD of `{name}`");
        let stored_history = stored["history"].as_array().expect("history list");
        assert_eq!(
            ours.history.len(),
            stored_history.len(),
            "history of `{name}`"
        );
        for (entry, want) in ours.history.iter().zip(stored_history) {
            assert!(
                (entry.rating - num(want, "rating")).abs() <= TOL,
                "`{name}`"
            );
            assert!((entry.rd - num(want, "RD")).abs() <= TOL, "`{name}`");
            assert_eq!(entry.opponent, text(want, "opponent"));
        }
        checked += 2 + 2 * stored_history.len();
    }
    eprintln!(
        "ChessArena replay: {} games, {} players, {checked} stored values matched to {TOL}",
        history.len(),
        players.len()
    );

    // Correct Glicko-1 over the same games: how far the bug moved each player's rating.
    let correct = glicko::rate_games(
        &games,
        &GlickoConfig {
            compat: Compat::Correct,
            ..cfg
        },
    )
    .expect("the published games rate");
    let mut drift: BTreeMap<&str, f64> = BTreeMap::new();
    for (c, b) in correct.games().iter().zip(compat.games()) {
        for (name, x, y) in [
            (&c.white, c.white_before.rating, b.white_before.rating),
            (&c.black, c.black_before.rating, b.black_before.rating),
        ] {
            let d = drift.entry(name.as_str()).or_default();
            *d = d.max((x - y).abs());
        }
    }
    for (name, p) in correct.players() {
        let d = drift.entry(name).or_default();
        *d = d.max((p.rating - compat.rating(name).rating).abs());
    }
    let mut ranked: Vec<_> = drift.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    eprintln!("largest drift of correct Glicko-1 from ChessArena's published ratings:");
    for (name, d) in ranked.iter().take(10) {
        let final_correct = correct.rating(name).rating;
        let final_compat = compat.rating(name).rating;
        eprintln!("  {name:45} {d:8.2}  (final {final_correct:.1} vs published {final_compat:.1})");
    }
    assert!(ranked[0].1 > 0.0, "correct and compat modes must differ");
}

/// LLM Chess's Random calibration from the four Random-vs-Dragon aggregates.
#[test]
fn llm_chess_random_calibration() {
    let files = [
        (
            "llm_chess/_logs/_pre_aug_2025/misc/dragon/random_vs_dragon-lvl-1.json",
            1,
        ),
        ("llm_chess/_logs/misc/dragon/random_vs_dragon-lvl-2.json", 2),
        (
            "llm_chess/_logs/_pre_aug_2025/misc/dragon/random_vs_dragon-lvl-3.json",
            3,
        ),
        ("llm_chess/_logs/misc/dragon/random_vs_dragon-lvl-4.json", 4),
    ];
    let mut blocks = Vec::new();
    for (relative, level) in files {
        let Some(path) = reference(relative) else {
            return;
        };
        let data = read_json(&path);
        let count = |key: &str| {
            u32::try_from(data[key].as_u64().expect("a game count")).expect("fits in u32")
        };
        // Random is White in these files; Dragon level L is anchored at 125 (L + 1).
        let block = Block::new(
            125.0 * f64::from(level + 1),
            count("white_wins"),
            count("draws"),
            count("black_wins"),
        );
        blocks.push(block.played_as(Color::White, WHITE_ADVANTAGE));
    }
    let estimate = elo_anchor::estimate(&blocks).expect("a finite estimate");
    let elo = estimate.elo().expect("a point estimate");
    let margin = estimate.margin95().expect("a margin");
    eprintln!(
        "Random calibration: {elo:.3} ± {margin:.3} (SE {:.3})",
        estimate.se().unwrap()
    );
    assert_eq!(format!("{elo:.2} ± {margin:.2}"), "-122.27 ± 23.03");
}
