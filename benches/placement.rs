//! How many games a rating to a stated precision costs (issue 41): arena's placement on the
//! calibrated ladder against LLM Chess's schedule and ChessArena's matchmaker, beside the
//! information bound, and how often each method's 95% interval holds the true Elo.
//!
//! ```sh
//! cargo bench --bench placement
//! ARENA_BENCH_PLAYERS=1000 cargo bench --bench placement
//! ```
//!
//! The real part first: built-in rungs (`ARENA_BENCH_RUNGS`, default mix75, mix40, mix10, sf-n1
//! and sf-n512) each placed to ± 65 as a model against the rest of the ladder, in real games
//! (`arena run` of the `placement` format: Stockfish at a few nodes and the random mover, cheap),
//! beside the rung's calibrated Elo. `ARENA_BENCH_RUNGS=` (empty) skips it.
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

/// Places a copy of each built-in rung in `rungs` against the rest of the ladder to ± `target`
/// with the `arena` binary, and prints how it lands against the calibration.
fn real_placements(rungs: &[String], target: f64) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    println!(
        "Built-in rungs placed against the rest of the ladder (real games), target ± {target}"
    );
    println!();
    println!(
        "| rung | calibrated Elo | placed Elo | ± (ladder scale) | ± with ladder | holds the calibrated Elo | games | games / bound | stop |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |");
    for (i, rung) in rungs.iter().enumerate() {
        let script = format!(
            r#"local model = arena.ladder("{rung}")
model.name = "{rung}-copy"
model.anchor_elo = nil
model.anchor_se = nil
local rungs = {{}}
for _, name in ipairs(arena.ladder()) do
  if name ~= "{rung}" then table.insert(rungs, arena.ladder(name)) end
end
return arena.tournament {{
  name = "bench-{i}", format = "placement", players = {{ model }}, seed = {i},
  format_options = {{ rungs = rungs, target = {target}, max_games = 600 }},
  max_plies = 300, concurrency = 2,
}}"#
        );
        let path = dir.path().join(format!("r{i}.lua"));
        std::fs::write(&path, script).expect("the script is written");
        let db = dir.path().join(format!("r{i}.db"));
        let arena = env!("CARGO_BIN_EXE_arena");
        let run = std::process::Command::new(arena)
            .args([
                "run",
                &path.to_string_lossy(),
                "--db",
                &db.to_string_lossy(),
                "--no-watch",
            ])
            .output()
            .expect("arena runs");
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let board = std::process::Command::new(arena)
            .args([
                "leaderboard",
                "--db",
                &db.to_string_lossy(),
                "--format",
                "json",
            ])
            .output()
            .expect("arena runs");
        let doc: serde_json::Value = serde_json::from_slice(&board.stdout).expect("JSON");
        let row = doc["tables"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["kind"] == "placement"))
            .and_then(|t| t["rows"].get(0))
            .cloned()
            .expect("a placement row");
        let calibrated = Calibration::builtin()
            .rung(rung)
            .expect("a built-in rung")
            .elo;
        let (elo, margin, wide) = (
            row["elo"].as_f64().unwrap_or(f64::NAN),
            row["plus_minus_95_pct"].as_f64().unwrap_or(f64::NAN),
            row["plus_minus_95_pct_with_ladder"]
                .as_f64()
                .unwrap_or(f64::NAN),
        );
        let games = row["games"].as_f64().unwrap_or(f64::NAN);
        println!(
            "| {rung} | {calibrated:.0} | {elo:.0} | {margin:.0} | {wide:.0} | {} | {games:.0} | {:.2} | {} |",
            if (elo - calibrated).abs() <= wide {
                "yes"
            } else {
                "no"
            },
            games / information_bound(target),
            row["stop"].as_str().unwrap_or("?"),
        );
    }
    println!();
}

fn main() {
    let rungs: Vec<String> = std::env::var("ARENA_BENCH_RUNGS")
        .unwrap_or_else(|_| "mix75,mix40,mix10,sf-n1,sf-n512".into())
        .split(',')
        .filter(|r| !r.is_empty())
        .map(str::to_owned)
        .collect();
    if !rungs.is_empty() {
        real_placements(&rungs, 65.0);
    }
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
