//! How many games a rating to a stated precision costs (issue 41): arena's placement on the
//! calibrated ladder against LLM Chess's schedule and ChessArena's matchmaker, beside the
//! information bound, and how often each method's 95% interval holds the true Elo.
//!
//! ```sh
//! cargo bench --bench placement
//! ARENA_BENCH_PLAYERS=1000 cargo bench --bench placement
//! ```
//!
//! The statistical part: `ARENA_BENCH_PLAYERS` simulated players (default 400) of true Elo spread
//! evenly over 100..2000 on the ladder's scale, each rated by every method with the same seed,
//! for targets ± 100, ± 65 and ± 50 (`rating::placement::simulation` says how games are drawn:
//! 10% draws at equal strength, LLM Chess's 35-point White advantage). Games are averaged over
//! the runs that reached the target; "reached" counts them (a method may hit its game limit,
//! 2,000, or the ladder's end first). Coverage is over every run that reached its target. The
//! bound is `(1.96 / target)² / (q² / 4)`: every game at an even score against an opponent of
//! exactly known Elo. Nothing here is timed; the figures depend on the seed only.

use arena::rating::{
    calibration::Calibration,
    placement::{
        PlacementConfig, Rung, information_bound,
        simulation::{self, LLM_CHESS_OFFSETS, Run, World},
    },
};
use rand::{SeedableRng, rngs::StdRng};

const TARGETS: [f64; 3] = [100.0, 65.0, 50.0];
const MAX_GAMES: u32 = 2000;

/// Mean games of the runs that reached the target, how many did, and their coverage.
struct Tally {
    games: f64,
    reached: usize,
    coverage: f64,
}

fn tally(runs: &[Run]) -> Tally {
    let reached: Vec<&Run> = runs.iter().filter(|r| r.reached).collect();
    let n = reached.len().max(1) as f64;
    Tally {
        games: reached.iter().map(|r| f64::from(r.games)).sum::<f64>() / n,
        reached: reached.len(),
        coverage: reached.iter().filter(|r| r.covered).count() as f64 / n,
    }
}

fn main() {
    let players: usize = std::env::var("ARENA_BENCH_PLAYERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let rungs: Vec<Rung> = Calibration::builtin()
        .rungs
        .iter()
        .map(|r| Rung {
            name: r.name.clone(),
            elo: r.elo,
            se: r.se,
        })
        .collect();
    let world = World::default();
    println!(
        "Placement on the built-in ladder ({} rungs), {players} simulated players of Elo 100..2000",
        rungs.len()
    );
    println!();
    println!(
        "| target | bound | placement | LLM Chess schedule | ChessArena matchmaker | placement / bound | LLM Chess / placement | coverage: placement | LLM Chess | matchmaker |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for target in TARGETS {
        let (mut placed, mut fixed, mut matched) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..players {
            let truth = 100.0 + 1900.0 * i as f64 / players as f64;
            let seed = 1_000 * target as u64 + i as u64;
            let config = PlacementConfig::new(target, MAX_GAMES);
            let mut rng = StdRng::seed_from_u64(seed);
            placed.push(
                simulation::placement(&mut rng, &world, &rungs, truth, &config)
                    .expect("a placement")
                    .0,
            );
            let mut rng = StdRng::seed_from_u64(seed);
            fixed.push(
                simulation::fixed_levels(
                    &mut rng,
                    &world,
                    &LLM_CHESS_OFFSETS,
                    truth,
                    target,
                    MAX_GAMES,
                )
                .expect("a schedule"),
            );
            let mut rng = StdRng::seed_from_u64(seed);
            matched.push(
                simulation::matchmaker(&mut rng, &world, &rungs, truth, target, MAX_GAMES)
                    .expect("a matchmaker run"),
            );
        }
        let bound = information_bound(target);
        let (p, f, m) = (tally(&placed), tally(&fixed), tally(&matched));
        println!(
            "| ± {target} | {bound:.0} | {:.0} ({}/{players}) | {:.0} ({}/{players}) | {:.0} ({}/{players}) | {:.2} | {:.2} | {:.1} % | {:.1} % | {:.1} % |",
            p.games,
            p.reached,
            f.games,
            f.reached,
            m.games,
            m.reached,
            p.games / bound,
            f.games / p.games,
            100.0 * p.coverage,
            100.0 * f.coverage,
            100.0 * m.coverage,
        );
    }
    println!();
    println!(
        "Targets (issue 41): placement at most 1.25 x the bound, at least 1.4 x fewer games than LLM Chess's schedule, coverage 93-97 %."
    );
}
