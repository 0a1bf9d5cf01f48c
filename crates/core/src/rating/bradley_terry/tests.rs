use rand::{RngExt, SeedableRng, rngs::StdRng};

use super::*;

/// White's expected score under the model.
fn expected(white: f64, black: f64, advantage: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-(white - black + advantage) / 400.0))
}

/// One game drawn from the model: a draw share that is largest between equals (a third of the
/// mass at most), the expected score kept at the model's.
fn play(white: f64, black: f64, advantage: f64, rng: &mut StdRng) -> f64 {
    let e = expected(white, black, advantage);
    let draw = 0.3 * (1.0 - (2.0 * e - 1.0).abs());
    let u: f64 = rng.random();
    if u < e - draw / 2.0 {
        1.0
    } else if u < e + draw / 2.0 {
        0.5
    } else {
        0.0
    }
}

/// A double round robin of `players` (`per_colour` games each way per pair) drawn from the model.
fn tournament(
    players: &[(&str, f64)],
    advantage: f64,
    per_colour: usize,
    rng: &mut StdRng,
) -> Vec<Game> {
    let mut games = Vec::new();
    for (i, &(a, ra)) in players.iter().enumerate() {
        for &(b, rb) in &players[i + 1..] {
            for _ in 0..per_colour {
                games.push(Game::new(a, b, play(ra, rb, advantage, rng)));
                games.push(Game::new(b, a, play(rb, ra, advantage, rng)));
            }
        }
    }
    games
}

fn player<'a>(fit: &'a Fit, name: &str) -> &'a Fitted {
    fit.players
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{name} is rated"))
}

/// Strengths with mean 0, so that they are on the mean anchor's scale as they stand.
const POOL: [(&str, f64); 6] = [
    ("p1", -200.0),
    ("p2", -100.0),
    ("p3", -30.0),
    ("p4", 30.0),
    ("p5", 100.0),
    ("p6", 200.0),
];

#[test]
fn expected_scores_give_the_strengths_and_the_advantage_back() {
    // Fractional points equal to the model's expectation, as a long run averages to.
    let mut games = Vec::new();
    for (i, &(a, ra)) in POOL.iter().enumerate() {
        for &(b, rb) in &POOL[i + 1..] {
            games.push(Game::new(a, b, expected(ra, rb, 40.0)));
            games.push(Game::new(b, a, expected(rb, ra, 40.0)));
        }
    }
    let fit = fit(&games, &Config::new(Anchor::Mean(0.0))).unwrap();
    for (name, truth) in POOL {
        let p = player(&fit, name);
        assert!((p.rating - truth).abs() < 1e-6, "{name}: {}", p.rating);
        assert!(p.se > 0.0);
    }
    let h = fit.white_advantage.unwrap();
    assert!((h.elo - 40.0).abs() < 1e-6, "{h:?}");
    let order: Vec<&str> = fit.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(order, ["p6", "p5", "p4", "p3", "p2", "p1"]);

    // Anchoring a player moves every rating by the same amount and makes the errors relative to
    // it; the mean anchor's ratings average to its value.
    let anchored = super::fit(
        &games,
        &Config::new(Anchor::Player {
            name: "p3".into(),
            rating: 1000.0,
        }),
    )
    .unwrap();
    for (name, truth) in POOL {
        let p = player(&anchored, name);
        assert!((p.rating - (truth + 1030.0)).abs() < 1e-6, "{name}");
    }
    assert_eq!(player(&anchored, "p3").se, 0.0);
    let shifted = super::fit(&games, &Config::new(Anchor::Mean(1500.0))).unwrap();
    let mean = shifted.players.iter().map(|p| p.rating).sum::<f64>() / 6.0;
    assert!((mean - 1500.0).abs() < 1e-6);
}

#[test]
fn several_pinned_players_hold_their_ratings_and_place_the_rest() {
    // Expected scores from POOL: pinning p1 and p6 at their true strengths + 500 gives everyone
    // else's true strength + 500, with zero error for the pinned two only.
    let mut games = Vec::new();
    for (i, &(a, ra)) in POOL.iter().enumerate() {
        for &(b, rb) in &POOL[i + 1..] {
            games.push(Game::new(a, b, expected(ra, rb, 0.0)));
            games.push(Game::new(b, a, expected(rb, ra, 0.0)));
        }
    }
    let config = Config {
        white_advantage: false,
        ..Config::new(Anchor::Players(vec![
            ("p1".into(), 300.0),
            ("p6".into(), 700.0),
        ]))
    };
    let fit = fit(&games, &config).unwrap();
    for (name, truth) in POOL {
        let p = player(&fit, name);
        assert!(
            (p.rating - (truth + 500.0)).abs() < 1e-6,
            "{name}: {}",
            p.rating
        );
        assert_eq!(
            p.se == 0.0,
            name == "p1" || name == "p6",
            "{name}: {}",
            p.se
        );
    }
    // Two pins leave less freedom than one: every free error shrinks.
    let one = super::fit(
        &games,
        &Config {
            white_advantage: false,
            ..Config::new(Anchor::Player {
                name: "p1".into(),
                rating: 300.0,
            })
        },
    )
    .unwrap();
    for name in ["p2", "p3", "p4", "p5"] {
        assert!(player(&fit, name).se < player(&one, name).se, "{name}");
    }
    // Pins the games contradict pull the free players between them, and the pins still hold.
    let stretched = Config {
        white_advantage: false,
        ..Config::new(Anchor::Players(vec![
            ("p1".into(), 300.0),
            ("p6".into(), 1100.0),
        ]))
    };
    let fit = super::fit(&games, &stretched).unwrap();
    assert_eq!(player(&fit, "p6").rating, 1100.0);
    let p5 = player(&fit, "p5").rating;
    assert!(p5 > 600.0 && p5 < 1100.0, "{p5}");
    assert!(matches!(
        super::fit(&games, &Config::new(Anchor::Players(Vec::new()))),
        Err(RatingError::NoAnchor)
    ));
    assert!(matches!(
        super::fit(&games, &Config::new(Anchor::Players(vec![("nobody".into(), 1.0)]))),
        Err(RatingError::UnknownPlayer(name)) if name == "nobody"
    ));
}

#[test]
fn two_players_match_the_closed_form() {
    // Without a White advantage, 7 points of 10: a leads by 400 log10(7/3), split about the mean;
    // the error of the difference is 1 / sqrt(n e (1 − e) K²), each rating's half of it.
    let mut games = vec![Game::new("a", "b", 1.0); 7];
    games.extend(vec![Game::new("b", "a", 1.0); 3]);
    let config = Config {
        white_advantage: false,
        ..Config::new(Anchor::Mean(0.0))
    };
    let fit = fit(&games, &config).unwrap();
    let a = player(&fit, "a");
    let lead = 400.0 * (7.0f64 / 3.0).log10();
    assert!((a.rating - lead / 2.0).abs() < 1e-6, "{a:?}");
    let se = 1.0 / (10.0 * 0.7 * 0.3 * K * K).sqrt();
    assert!((a.se - se / 2.0).abs() < 1e-6, "{} vs {}", a.se, se / 2.0);
    assert_eq!((a.games, a.score, a.draws), (10, 7.0, 0));
    assert!(fit.white_advantage.is_none());
}

#[test]
fn simulated_games_recover_the_strengths() {
    let mut rng = StdRng::seed_from_u64(4);
    let games = tournament(&POOL, 35.0, 60, &mut rng);
    let fit = fit(&games, &Config::new(Anchor::Mean(0.0))).unwrap();
    for (name, truth) in POOL {
        let p = player(&fit, name);
        assert!(
            (p.rating - truth).abs() <= 3.0 * p.se,
            "{name}: {} ± {} vs {truth}",
            p.rating,
            p.se
        );
        assert!(
            p.se < 20.0,
            "{name}: 600 games give a tight estimate, {}",
            p.se
        );
        assert!(p.draws > 0);
    }
    let h = fit.white_advantage.unwrap();
    assert!((h.elo - 35.0).abs() <= 3.0 * h.se, "{h:?}");
    let order: Vec<&str> = fit.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(order, ["p6", "p5", "p4", "p3", "p2", "p1"]);
}

/// Over `tournaments` simulated double round robins of the pool (6 games per pair, 30 per
/// player), each bootstrapped `samples` times: the share of the intervals `rating ± scale · 1.96 ·
/// sd` that hold the true strength, for each of `scales`.
fn coverage(tournaments: u64, samples: usize, scales: &[f64]) -> Vec<f64> {
    let mut held = vec![0; scales.len()];
    let mut total = 0;
    for t in 0..tournaments {
        let mut rng = StdRng::seed_from_u64(1000 + t);
        let games = tournament(&POOL, 35.0, 3, &mut rng);
        let result = bootstrap(
            &games,
            &Config::new(Anchor::Mean(0.0)),
            &BootstrapConfig { samples, seed: t },
        )
        .unwrap();
        for (p, spread) in result.fit.players.iter().zip(&result.spread) {
            let truth = POOL.iter().find(|(n, _)| *n == p.name).unwrap().1;
            total += 1;
            for (count, scale) in held.iter_mut().zip(scales) {
                if (p.rating - truth).abs() <= scale * spread.margin() {
                    *count += 1;
                }
            }
        }
    }
    held.iter().map(|&h| h as f64 / total as f64).collect()
}

#[test]
fn bootstrap_intervals_cover_the_truth_95_percent_of_the_time() {
    // 200 tournaments × 6 players, 100 samples each: the share's own noise is about 1 %. A correct
    // bootstrap lands in the band (94.1 % with these seeds; 94.6 % over 300 tournaments, 95.3 %
    // over 200 with 100 games a player); intervals half as wide cover about 67 %, a quarter wider
    // 98 %.
    let shares = coverage(200, 100, &[1.0, 0.5, 1.25]);
    let (correct, narrow, wide) = (shares[0], shares[1], shares[2]);
    assert!((0.93..=0.97).contains(&correct), "coverage {correct}");
    assert!(narrow < 0.8, "half-width intervals cover {narrow}");
    assert!(wide > 0.97, "wider intervals cover {wide}");
}

#[test]
fn the_bootstrap_is_reproducible_from_its_seed() {
    let mut rng = StdRng::seed_from_u64(9);
    let games = tournament(&POOL, 35.0, 3, &mut rng);
    let config = Config::new(Anchor::Mean(0.0));
    let run = |seed| bootstrap(&games, &config, &BootstrapConfig { samples: 100, seed }).unwrap();
    let (first, again, other) = (run(1), run(1), run(2));
    assert_eq!(first, again);
    assert_ne!(first.spread, other.spread);
    assert_eq!(first.fit, other.fit, "the point estimate does not resample");
    assert_eq!((first.units, first.grouped), (games.len(), false));
    assert!(first.white_advantage_sd.is_some_and(|sd| sd > 0.0));
}

#[test]
fn rank_stability_separates_clear_from_close_orders() {
    // Far apart players keep their ranks; two equals swap about half the time.
    let players = [
        ("weak", -400.0),
        ("twin-a", 0.0),
        ("twin-b", 0.0),
        ("strong", 400.0),
    ];
    let mut rng = StdRng::seed_from_u64(3);
    let games = tournament(&players, 0.0, 20, &mut rng);
    let result = bootstrap(
        &games,
        &Config::new(Anchor::Mean(0.0)),
        &BootstrapConfig {
            samples: 400,
            seed: 5,
        },
    )
    .unwrap();
    let held = |name: &str| {
        result
            .spread
            .iter()
            .find(|s| s.name == name)
            .unwrap()
            .rank_held
    };
    assert!(held("weak") > 0.99 && held("strong") > 0.99);
    for twin in ["twin-a", "twin-b"] {
        assert!((0.2..0.8).contains(&held(twin)), "{twin}: {}", held(twin));
    }
    assert_eq!(result.samples + result.failed, 400);
}

#[test]
fn grouped_games_are_resampled_together() {
    // Every opening is won by whoever has White, and a second kind of opening is always drawn;
    // each is played with both colours, so a pair of games from one opening always leaves the
    // two players level. Resampled as pairs they never move apart; resampled game by game they do.
    let mut games = Vec::new();
    for opening in 0..20 {
        let (won, drawn) = (format!("a|b|won {opening}"), format!("a|b|drawn {opening}"));
        games.push(Game::new("a", "b", 1.0).in_group(won.clone()));
        games.push(Game::new("b", "a", 1.0).in_group(won));
        games.push(Game::new("a", "b", 0.5).in_group(drawn.clone()));
        games.push(Game::new("b", "a", 0.5).in_group(drawn));
    }
    let config = Config {
        virtual_draws: VirtualDraws::PerPair(1.0),
        ..Config::new(Anchor::Mean(0.0))
    };
    let run = |games: &[Game]| {
        bootstrap(
            games,
            &config,
            &BootstrapConfig {
                samples: 200,
                seed: 1,
            },
        )
        .unwrap()
    };
    let paired = run(&games);
    assert!(paired.grouped);
    assert_eq!(paired.units, 40, "40 opening pairs");
    let loose: Vec<Game> = games
        .iter()
        .cloned()
        .map(|g| Game { group: None, ..g })
        .collect();
    let unpaired = run(&loose);
    assert_eq!((unpaired.units, unpaired.grouped), (80, false));
    let sd = |b: &Bootstrap| b.spread[0].sd;
    assert!(sd(&paired) < 1e-6, "paired: {}", sd(&paired));
    assert!(sd(&unpaired) > 5.0, "unpaired: {}", sd(&unpaired));
    // The White advantage does vary: the share of won openings changes from sample to sample.
    assert!(paired.white_advantage_sd.is_some_and(|sd| sd > 5.0));
}

#[test]
fn impossible_fits_are_named() {
    let config = Config::new(Anchor::Mean(0.0));
    // a swept b: no finite MLE, but virtual draws give one.
    let sweep = [
        Game::new("a", "b", 1.0),
        Game::new("b", "a", 0.0),
        Game::new("a", "c", 0.5),
        Game::new("c", "b", 1.0),
        Game::new("b", "c", 0.0),
    ];
    assert_eq!(
        fit(&sweep, &config).unwrap_err(),
        RatingError::Unbounded(vec!["b".into()])
    );
    let regularised = Config {
        virtual_draws: VirtualDraws::PerPair(1.0),
        ..config.clone()
    };
    let fitted = fit(&sweep, &regularised).unwrap();
    assert!(fitted.players.iter().all(|p| p.rating.is_finite()));
    assert_eq!(
        player(&fitted, "b").games,
        4,
        "virtual draws are not counted"
    );

    // White won every game: the advantage runs off.
    let white_wins = [
        Game::new("a", "b", 1.0),
        Game::new("b", "a", 1.0),
        Game::new("a", "b", 1.0),
        Game::new("b", "a", 1.0),
    ];
    assert_eq!(
        fit(&white_wins, &config).unwrap_err(),
        RatingError::NoFiniteAdvantage
    );
    // a always had White against b: its edge and White's cannot be told apart.
    let one_colour = [
        Game::new("a", "b", 1.0),
        Game::new("a", "b", 0.0),
        Game::new("a", "b", 0.5),
    ];
    assert_eq!(
        fit(&one_colour, &config).unwrap_err(),
        RatingError::NoFiniteAdvantage
    );
    let no_colour = Config {
        white_advantage: false,
        ..config.clone()
    };
    assert!(fit(&one_colour, &no_colour).is_ok());

    assert_eq!(fit(&[], &config).unwrap_err(), RatingError::NoGames);
    assert_eq!(
        fit(
            &one_colour,
            &Config::new(Anchor::Player {
                name: "z".into(),
                rating: 0.0
            })
        )
        .unwrap_err(),
        RatingError::UnknownPlayer("z".into())
    );
    assert_eq!(
        bootstrap(
            &one_colour,
            &no_colour,
            &BootstrapConfig {
                samples: 0,
                seed: 0
            }
        )
        .unwrap_err(),
        RatingError::BootstrapFailed(0)
    );
}

/// A round robin of `players` with `per_pair` games a pair, colours alternating (the first game
/// with the earlier-listed player as White), drawn from the model with White `advantage`.
fn round_robin(
    players: &[(&str, f64)],
    advantage: f64,
    per_pair: usize,
    rng: &mut StdRng,
) -> Vec<Game> {
    let mut games = Vec::new();
    for (i, &(a, ra)) in players.iter().enumerate() {
        for &(b, rb) in &players[i + 1..] {
            for k in 0..per_pair {
                let ((w, rw), (bl, rbl)) = if k % 2 == 0 {
                    ((a, ra), (b, rb))
                } else {
                    ((b, rb), (a, ra))
                };
                games.push(Game::new(w, bl, play(rw, rbl, advantage, rng)));
            }
        }
    }
    games
}

/// What the simulation of one prior at one number of games a pair found.
#[derive(Debug)]
struct Simulated {
    /// Share of the players whose interval was shown (the bootstrap could vary them).
    shown: f64,
    /// Share of the shown intervals that hold the true strength.
    coverage: f64,
    /// Mean of (estimate − truth) · sign(truth): negative when the prior pulls players
    /// towards the mean more than the truth is.
    bias: f64,
    /// Root mean square error of the estimates.
    rmse: f64,
}

/// `tournaments` round robins of the pool with `per_pair` games a pair, each fitted with `prior`
/// and bootstrapped `samples` times.
fn simulate(prior: VirtualDraws, per_pair: usize, tournaments: u64, samples: usize) -> Simulated {
    let (mut shown, mut held, mut total) = (0u32, 0u32, 0u32);
    let (mut bias, mut squares) = (0.0, 0.0);
    for t in 0..tournaments {
        let mut rng = StdRng::seed_from_u64(5000 + t);
        let games = round_robin(&POOL, 35.0, per_pair, &mut rng);
        let config = Config {
            virtual_draws: prior,
            ..Config::new(Anchor::Mean(0.0))
        };
        let Ok(result) = bootstrap(&games, &config, &BootstrapConfig { samples, seed: t }) else {
            continue;
        };
        for (p, spread) in result.fit.players.iter().zip(&result.spread) {
            let truth = POOL.iter().find(|(n, _)| *n == p.name).unwrap().1;
            total += 1;
            bias += (p.rating - truth) * truth.signum();
            squares += (p.rating - truth).powi(2);
            if spread.varies() {
                shown += 1;
                if (p.rating - truth).abs() <= spread.margin() {
                    held += 1;
                }
            }
        }
    }
    Simulated {
        shown: f64::from(shown) / f64::from(total),
        coverage: if shown == 0 {
            f64::NAN
        } else {
            f64::from(held) / f64::from(shown)
        },
        bias: bias / f64::from(total),
        rmse: (squares / f64::from(total)).sqrt(),
    }
}

#[test]
fn the_default_prior_covers_and_barely_biases_at_1_2_and_10_games_a_pair() {
    // The simulation behind `VirtualDraws::DEFAULT` (its doc shows the table this prints).
    let mut found = Vec::new();
    for per_pair in [1, 2, 10] {
        let s = simulate(VirtualDraws::DEFAULT, per_pair, 100, 100);
        println!(
            "{per_pair:>2} game(s) a pair, prior {}: intervals shown {:.0} %, coverage {:.1} %, bias {:+.1}, RMSE {:.0}",
            VirtualDraws::DEFAULT.for_pair(per_pair as f64),
            100.0 * s.shown,
            100.0 * s.coverage,
            s.bias,
            s.rmse
        );
        found.push(s);
    }
    let [one, two, ten] = &found[..] else {
        unreachable!()
    };
    // One game a pair: every pairing is a single unit, which no resample can vary.
    assert_eq!(one.shown, 0.0, "{one:?}");
    assert!(one.bias.abs() < 40.0, "{one:?}");
    // Two games a pair: a few players won (or drew) both games of every pairing and show none.
    for s in [two, ten] {
        assert!(s.shown >= 0.9, "{s:?}");
        assert!((0.90..=0.98).contains(&s.coverage), "{s:?}");
        assert!(s.bias.abs() < 15.0, "{s:?}");
    }
}

/// The bootstrap written again from its definition (issue 38): for each pairing, draw as many
/// of its units (opening pairs) as it has, with replacement, refit the whole resample by maximum
/// likelihood, and take the standard deviation over the refits; resampling `m` units gives a
/// mean `(m − 1) / m` of its variance, so the spread is scaled by `√(m / (m − 1))`. Players and
/// White's advantage alike.
#[test]
fn the_white_advantage_interval_is_scaled_as_the_players_are() {
    let players = [
        ("a", -150.0),
        ("b", -50.0),
        ("c", 50.0),
        ("d", 150.0),
        ("e", 0.0),
    ];
    let mut rng = StdRng::seed_from_u64(17);
    // Two openings per pairing, each played with both colours: m = 2 units a pairing.
    let mut pairings: Vec<Vec<Vec<Game>>> = Vec::new();
    for (i, &(a, ra)) in players.iter().enumerate() {
        for &(b, rb) in &players[i + 1..] {
            let mut units = Vec::new();
            for opening in 0..2 {
                let group = format!("{a}|{b}|{opening}");
                units.push(vec![
                    Game::new(a, b, play(ra, rb, 60.0, &mut rng)).in_group(group.clone()),
                    Game::new(b, a, play(rb, ra, 60.0, &mut rng)).in_group(group),
                ]);
            }
            pairings.push(units);
        }
    }
    let games: Vec<Game> = pairings.iter().flatten().flatten().cloned().collect();
    let config = Config {
        virtual_draws: VirtualDraws::PerPair(1.0),
        ..Config::new(Anchor::Mean(0.0))
    };
    let samples = 3000;
    let arena = bootstrap(&games, &config, &BootstrapConfig { samples, seed: 4 }).unwrap();
    assert_eq!(arena.failed, 0);

    let mut advantages = Vec::new();
    let mut ratings: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut draw = StdRng::seed_from_u64(99);
    for _ in 0..samples {
        let mut sample = Vec::new();
        for units in &pairings {
            for _ in 0..units.len() {
                sample.extend(units[draw.random_range(0..units.len())].iter().cloned());
            }
        }
        let refit = fit(&sample, &config).unwrap();
        advantages.push(refit.white_advantage.unwrap().elo);
        for p in &refit.players {
            ratings.entry(p.name.clone()).or_default().push(p.rating);
        }
    }
    let sd = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    let scale = (2.0f64 / (2.0 - 1.0)).sqrt();
    let expected = sd(&advantages) * scale;
    let printed = arena.white_advantage_sd.unwrap();
    assert!(
        (printed / expected - 1.0).abs() < 0.1,
        "White advantage sd {printed} vs {expected}"
    );
    for (p, spread) in arena.fit.players.iter().zip(&arena.spread) {
        let expected = sd(&ratings[&p.name]) * scale;
        assert!(
            (spread.sd / expected - 1.0).abs() < 0.1,
            "{}: sd {} vs {expected}",
            p.name,
            spread.sd
        );
    }
}

/// The maximum-likelihood fit (ratings anchored at mean 0, White's advantage, virtual draws)
/// against `tests/reference/bradley_terry.py`, Newton's method on the model's own likelihood,
/// run live on random round robins.
#[test]
fn the_fit_matches_the_python_reference() {
    for seed in 0..6 {
        let mut rng = StdRng::seed_from_u64(seed);
        let games = tournament(&POOL[..4 + (seed as usize % 3)], 40.0, 2, &mut rng);
        let prior = [0.0, 0.5, 1.0][seed as usize % 3];
        let config = Config {
            virtual_draws: VirtualDraws::PerPair(prior),
            ..Config::new(Anchor::Mean(0.0))
        };
        let input = serde_json::json!({
            "games": games.iter().map(|g| serde_json::json!([g.white, g.black, g.score_white])).collect::<Vec<_>>(),
            "virtual_draws": prior,
        });
        let Some(reference) = super::super::reference::run(
            "Bradley-Terry against tests/reference/bradley_terry.py",
            "bradley_terry.py",
            &input,
        ) else {
            return;
        };
        let Ok(ours) = fit(&games, &config) else {
            // The pure MLE may not exist (a perfect score): the reference would diverge too.
            assert_eq!(prior, 0.0);
            continue;
        };
        for p in &ours.players {
            let theirs = reference["ratings"][&p.name].as_f64().unwrap();
            assert!(
                (p.rating - theirs).abs() < 1e-6,
                "seed {seed} {}: {} vs {theirs}",
                p.name,
                p.rating
            );
        }
        let h = reference["white_advantage"].as_f64().unwrap();
        let ours_h = ours.white_advantage.unwrap().elo;
        assert!(
            (ours_h - h).abs() < 1e-6,
            "seed {seed}: advantage {ours_h} vs {h}"
        );
    }
}
