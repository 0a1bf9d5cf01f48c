use rand::{SeedableRng, rngs::StdRng};

use super::{simulation::World, *};
use crate::rating::calibration::Calibration;

fn rung(name: &str, elo: f64, se: f64) -> Rung {
    Rung {
        name: name.to_owned(),
        elo,
        se,
    }
}

fn ladder() -> Vec<Rung> {
    Calibration::builtin()
        .rungs
        .iter()
        .map(|r| rung(&r.name, r.elo, r.se))
        .collect()
}

/// `pairs` pairs against rung `at`, each won once and lost once (a 50% score).
fn even_pairs(at: usize, pairs: usize) -> Vec<PlacementGame> {
    (0..pairs)
        .flat_map(|_| {
            [
                PlacementGame {
                    rung: at,
                    score: 1.0,
                    color: Color::White,
                },
                PlacementGame {
                    rung: at,
                    score: 0.0,
                    color: Color::Black,
                },
            ]
        })
        .collect()
}

#[test]
fn the_bound_is_110_games_for_65_elo() {
    // The figure: ± 65 at 95% needs about 110 games at p = 1/2.
    assert!(
        (information_bound(65.0) - 109.8).abs() < 0.1,
        "{}",
        information_bound(65.0)
    );
    assert!((information_bound(100.0) / information_bound(50.0) - 0.25).abs() < 1e-12);
}

#[test]
fn the_next_pair_goes_to_the_rung_at_the_players_estimate() {
    let rungs = [
        rung("a", 0.0, 0.0),
        rung("b", 500.0, 0.0),
        rung("c", 1000.0, 0.0),
        rung("d", 1500.0, 0.0),
    ];
    let config = PlacementConfig::new(10.0, 1000);
    // Even against c: the estimate is c's Elo, where a game is a coin toss.
    let placed = place(&rungs, &even_pairs(2, 10), &config).unwrap();
    assert!((placed.estimate.unwrap().elo().unwrap() - 1000.0).abs() < 1e-6);
    assert_eq!(placed.next, Next::Pair(2));
    // Before any game: the middle of the ladder (the lower of the two middles), or start_elo.
    assert_eq!(place(&rungs, &[], &config).unwrap().next, Next::Pair(1));
    let started = PlacementConfig {
        start_elo: Some(1400.0),
        ..config
    };
    assert_eq!(place(&rungs, &[], &started).unwrap().next, Next::Pair(3));
}

#[test]
fn between_two_equally_informative_rungs_the_better_calibrated_one_is_chosen() {
    // Started at 1000, both rungs 100 away: the same information, different calibration.
    let config = PlacementConfig {
        start_elo: Some(1000.0),
        ..PlacementConfig::new(10.0, 1000)
    };
    let below_well = [rung("a", 900.0, 5.0), rung("b", 1100.0, 40.0)];
    assert_eq!(
        place(&below_well, &[], &config).unwrap().next,
        Next::Pair(0)
    );
    let above_well = [rung("a", 900.0, 40.0), rung("b", 1100.0, 5.0)];
    assert_eq!(
        place(&above_well, &[], &config).unwrap().next,
        Next::Pair(1)
    );
}

#[test]
fn a_rung_the_player_is_known_to_be_out_of_range_of_is_never_chosen() {
    let rungs = [
        rung("low", 0.0, 0.0),
        rung("mid", 1200.0, 0.0),
        rung("high", 2000.0, 0.0),
    ];
    let config = PlacementConfig::new(10.0, 1000);
    // Even against "high": 2000 within about ± 100, where "low" would lose every game.
    let placed = place(&rungs, &even_pairs(2, 20), &config).unwrap();
    let estimate = placed.estimate.unwrap();
    assert!(out_of_range(&estimate, rungs[0].elo), "{estimate:?}");
    assert!(!out_of_range(&estimate, rungs[1].elo));
    assert!(!out_of_range(&estimate, rungs[2].elo));
    assert_eq!(placed.next, Next::Pair(2));
    // A sweep bounds the player on one side only: twenty wins against "low" do not yet show
    // that it would win 99% against "low" (at least 798 above it).
    let sweep: Vec<PlacementGame> = (0..20)
        .map(|i| PlacementGame {
            rung: 0,
            score: 1.0,
            color: if i % 2 == 0 {
                Color::White
            } else {
                Color::Black
            },
        })
        .collect();
    let swept = place(&rungs, &sweep, &config).unwrap().estimate.unwrap();
    assert!(matches!(swept, EloEstimate::AtLeast { .. }), "{swept:?}");
    assert!(!out_of_range(&swept, rungs[0].elo));
}

#[test]
fn a_placement_stops_at_its_target_and_at_its_game_limit() {
    let rungs = ladder();
    let world = World::default();
    let mut rng = StdRng::seed_from_u64(41);
    let (run, stop) = simulation::placement(
        &mut rng,
        &world,
        &rungs,
        900.0,
        &PlacementConfig::new(100.0, 400),
    )
    .unwrap();
    assert_eq!(stop, Stop::Target);
    assert!(run.margin95.unwrap() <= 100.0);
    // No run can beat the information bound.
    assert!(f64::from(run.games) >= information_bound(100.0), "{run:?}");

    let (run, stop) = simulation::placement(
        &mut rng,
        &world,
        &rungs,
        900.0,
        &PlacementConfig::new(20.0, 31),
    )
    .unwrap();
    assert_eq!(
        (stop, run.games),
        (Stop::MaxGames, 30),
        "pairs only: 31 stops at 30"
    );
}

#[test]
fn a_player_weaker_than_the_bottom_rung_is_reported_below_the_ladder() {
    let rungs = ladder();
    let mut rng = StdRng::seed_from_u64(7);
    let (run, stop) = simulation::placement(
        &mut rng,
        &World::default(),
        &rungs,
        -900.0,
        &PlacementConfig::new(50.0, 400),
    )
    .unwrap();
    assert_eq!(stop, Stop::BelowLadder, "{run:?}");
    assert!(!run.reached);
    let (_, stop) = simulation::placement(
        &mut rng,
        &World::default(),
        &rungs,
        3200.0,
        &PlacementConfig::new(50.0, 400),
    )
    .unwrap();
    assert_eq!(stop, Stop::AboveLadder);
}

/// The interval a placement stops with covers the player's true Elo 95% of the time, though the
/// stop depends on it: 400 players spread over the ladder, a fixed seed.
#[test]
fn the_stopped_interval_covers_the_truth_95_percent_of_the_time() {
    let rungs = ladder();
    let world = World::default();
    let mut rng = StdRng::seed_from_u64(2026);
    let config = PlacementConfig::new(100.0, 2000);
    let runs = 400;
    let mut covered = 0;
    for i in 0..runs {
        let truth = 100.0 + 1800.0 * f64::from(i) / f64::from(runs);
        let (run, stop) = simulation::placement(&mut rng, &world, &rungs, truth, &config).unwrap();
        assert_eq!(stop, Stop::Target, "truth {truth}: {run:?}");
        covered += u32::from(run.covered);
    }
    let coverage = f64::from(covered) / f64::from(runs);
    assert!((0.93..=0.97).contains(&coverage), "coverage {coverage}");
}

/// The choice of the next rung recomputed by a second route: the working estimate by a grid
/// search of the log-posterior (its spread from a finite-difference curvature), each rung's
/// expected pair information by the trapezoid rule over ± 8 SD instead of Gauss–Hermite, and the
/// expected variance after the pair from those. Both routes must pick the same rung, and agree on
/// the information to four digits.
#[test]
fn the_next_rung_agrees_with_a_brute_force_search() {
    let rungs = ladder();
    let config = PlacementConfig::new(20.0, 1000);
    let at = |name: &str| rungs.iter().position(|r| r.name == name).unwrap();
    let mut games = Vec::new();
    for (rung, wins, losses) in [("mix40", 2, 4), ("mix20", 5, 1), ("mix30", 3, 3)] {
        for i in 0..wins + losses {
            games.push(PlacementGame {
                rung: at(rung),
                score: if i < wins { 1.0 } else { 0.0 },
                color: if i % 2 == 0 {
                    Color::White
                } else {
                    Color::Black
                },
            });
        }
    }
    let placed = place(&rungs, &games, &config).unwrap();
    let Next::Pair(chosen) = placed.next else {
        panic!("{:?}", placed.next)
    };

    let q = std::f64::consts::LN_10 / 400.0;
    let e = |elo: f64, opponent: f64| 1.0 / (1.0 + 10f64.powf((opponent - elo) / 400.0));
    let centre = middle(&rungs);
    let log_post = |elo: f64| {
        let prior = -(elo - centre).powi(2) / (2.0 * PRIOR_SD * PRIOR_SD);
        games
            .iter()
            .map(|g| {
                let p = e(
                    elo + g.color.shift(config.white_advantage),
                    rungs[g.rung].elo,
                );
                g.score * p.ln() + (1.0 - g.score) * (1.0 - p).ln()
            })
            .sum::<f64>()
            + prior
    };
    let mode = (0..=90_000)
        .map(|i| -1000.0 + 0.05 * f64::from(i))
        .max_by(|a, b| log_post(*a).total_cmp(&log_post(*b)))
        .unwrap();
    let h = 0.5;
    let curvature = -(log_post(mode + h) - 2.0 * log_post(mode) + log_post(mode - h)) / (h * h);
    let sd = 1.0 / curvature.sqrt();
    let (mean, gh_sd) = working_estimate(&rungs, &games, centre, &config);
    assert!(
        (mode - mean).abs() < 0.1 && (sd - gh_sd).abs() < 0.01,
        "{mode} {mean} {sd} {gh_sd}"
    );

    let pair = |elo: f64, opponent: f64| {
        [config.white_advantage, -config.white_advantage]
            .iter()
            .map(|s| e(elo + s, opponent) * (1.0 - e(elo + s, opponent)))
            .sum::<f64>()
    };
    let trapezoid = |opponent: f64| {
        let n = 4000;
        let step = 16.0 * sd / f64::from(n);
        (0..=n)
            .map(|i| {
                let x = -8.0 * sd + step * f64::from(i);
                let weight = if i == 0 || i == n { 0.5 } else { 1.0 };
                let density =
                    (-x * x / (2.0 * sd * sd)).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt());
                weight * step * density * pair(mode + x, opponent)
            })
            .sum::<f64>()
    };
    let mut weight = 1.0 / (q * q * PRIOR_SD * PRIOR_SD);
    let mut weighted_se = 0.0;
    for g in &games {
        let p = e(
            mode + g.color.shift(config.white_advantage),
            rungs[g.rung].elo,
        );
        weight += p * (1.0 - p);
        weighted_se += p * (1.0 - p) * rungs[g.rung].se;
    }
    let variance_after: Vec<f64> = rungs
        .iter()
        .map(|r| {
            let info = trapezoid(r.elo);
            let hermite = expected_pair_weight(mean, gh_sd, r.elo, config.white_advantage);
            assert!(
                (info - hermite).abs() <= 1e-4 * info,
                "{}: {info} {hermite}",
                r.name
            );
            let w = weight + info;
            let ladder = (weighted_se + info * r.se) / w;
            1.0 / (q * q * w) + ladder * ladder
        })
        .collect();
    let brute = (0..rungs.len())
        .min_by(|&a, &b| variance_after[a].total_cmp(&variance_after[b]))
        .unwrap();
    assert_eq!(
        chosen, brute,
        "{} against {}",
        rungs[chosen].name, rungs[brute].name
    );
}
