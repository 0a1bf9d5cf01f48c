//! Games per second with 1, 2 and 4 `arena run` workers sharing one PostgreSQL store (issue 16),
//! against `examples/fake_openai.rs`, beside one worker on a SQLite file, in the same run.
//!
//! ```sh
//! cargo bench --bench shared_store
//! ARENA_BENCH_WORKERS=1,2,4,8 ARENA_BENCH_GAMES=96 cargo bench --bench shared_store
//! ```
//!
//! The workload: two fake LLM players (`blitz`, legal moves in the prompt) play `ARENA_BENCH_GAMES`
//! games (default 48) of at most 20 plies, every reply arriving after `ARENA_BENCH_LATENCY_MS`
//! (default 100), each worker playing `ARENA_BENCH_CONCURRENCY` games at once (default 4, the
//! script's `concurrency`; per-endpoint limits are per worker too). A game waits for one reply per
//! ply, so the games are latency-bound: N workers can at best play N times as many games at once
//! as one, and the bench prints how close they come (games/s against one PostgreSQL worker's, and
//! that ratio over N), and what PostgreSQL costs against SQLite for one worker. Each size gets a
//! fresh database on the server in `ARENA_TEST_POSTGRES` (else `scripts/postgres.sh start`'s).
//! Wall time runs from the first worker's start to the last one's exit. Nothing asserts on time;
//! the bench fails only if a run does not end with every game finished exactly once.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use arena::store::{GameStatus, Store};
use arena_testkit::{FakeOpenAi, FreshDatabase};

struct Settings {
    workers: Vec<usize>,
    games: usize,
    latency_ms: u64,
    concurrency: usize,
}

impl Settings {
    fn from_env() -> Settings {
        let number = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        let workers = std::env::var("ARENA_BENCH_WORKERS")
            .unwrap_or_else(|_| "1,2,4".into())
            .split([',', ' '])
            .filter_map(|n| n.trim().parse().ok())
            .filter(|&n| n > 0)
            .collect();
        Settings {
            workers,
            games: usize::try_from(number("ARENA_BENCH_GAMES", 48)).unwrap_or(48),
            latency_ms: number("ARENA_BENCH_LATENCY_MS", 100),
            concurrency: usize::try_from(number("ARENA_BENCH_CONCURRENCY", 4)).unwrap_or(4),
        }
    }
}

/// What one configuration did.
struct Run {
    label: String,
    workers: usize,
    wall: Duration,
    games: usize,
}

impl Run {
    fn games_per_s(&self) -> f64 {
        self.games as f64 / self.wall.as_secs_f64()
    }
}

fn script(url: &str, settings: &Settings) -> String {
    // Two players play each other `games` times (colours alternate).
    format!(
        r#"return arena.tournament {{
  name = "shared-bench", games_per_pair = {games}, max_plies = 20, seed = 7,
  concurrency = {concurrency},
  players = {{
    arena.llm {{ name = "fake-a", model = "fake", base_url = "{url}", mode = "blitz",
                max_concurrency = {concurrency} }},
    arena.llm {{ name = "fake-b", model = "fake", base_url = "{url}", mode = "blitz",
                max_concurrency = {concurrency} }},
  }},
}}"#,
        games = settings.games,
        concurrency = settings.concurrency,
    )
}

/// Runs `workers` processes of `arena run` on `db` at once and waits for them all.
fn play(arena: &Path, dir: &Path, db: &str, workers: usize, label: &str) -> Run {
    let started = Instant::now();
    let children: Vec<_> = (0..workers)
        .map(|i| {
            let log =
                std::fs::File::create(dir.join(format!("{label}-{i}.log"))).expect("a worker log");
            Command::new(arena)
                .current_dir(dir)
                .args(["run", "t.lua", "--db", db, "--no-watch"])
                .args(["--worker", &format!("bench-{i}")])
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("arena starts")
        })
        .collect();
    for (i, mut child) in children.into_iter().enumerate() {
        let status = child.wait().expect("the worker ends");
        assert!(
            status.success(),
            "{label}: worker {i} failed ({status}); see {}",
            dir.join(format!("{label}-{i}.log")).display()
        );
    }
    let wall = started.elapsed();
    let store = Store::open(Path::new(db)).expect("the store opens");
    let t = store
        .find_tournament("shared-bench")
        .unwrap()
        .expect("the tournament");
    let games = store.games(t.id).unwrap();
    let finished = games
        .iter()
        .filter(|g| g.status == GameStatus::Finished)
        .count();
    assert_eq!(finished, games.len(), "{label}: every game finished");
    Run {
        label: label.to_owned(),
        workers,
        wall,
        games: games.len(),
    }
}

fn postgres_server(root: &Path) -> String {
    if let Ok(url) = std::env::var("ARENA_TEST_POSTGRES")
        && !url.trim().is_empty()
    {
        return url.trim().to_owned();
    }
    let out = Command::new(root.join("scripts/postgres.sh"))
        .arg("start")
        .output()
        .expect("scripts/postgres.sh runs");
    assert!(
        out.status.success(),
        "scripts/postgres.sh start failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let settings = Settings::from_env();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args(["build", "--release", "--quiet", "--example", "fake_openai"])
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "cargo build --release --example fake_openai failed"
    );
    let arena = PathBuf::from(env!("CARGO_BIN_EXE_arena"));
    let fake_bin = arena
        .parent()
        .expect("the binary's folder")
        .join("examples/fake_openai");
    let server = postgres_server(&root);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let fake = FakeOpenAi::start(&fake_bin, settings.latency_ms);
    std::fs::write(dir.path().join("t.lua"), script(&fake.url, &settings)).expect("the script");
    println!(
        "shared store: {} games of at most 20 plies, two fake LLM players, {} ms per reply, {} games at once per worker; load average before: {}",
        settings.games,
        settings.latency_ms,
        settings.concurrency,
        load_average()
    );

    let sqlite = play(
        &arena,
        dir.path(),
        &dir.path().join("t.db").display().to_string(),
        1,
        "sqlite-1",
    );
    let mut runs = vec![sqlite];
    for &workers in &settings.workers {
        let database = FreshDatabase::create(&server, &format!("bench_workers_{workers}"));
        runs.push(play(
            &arena,
            dir.path(),
            &database.url,
            workers,
            &format!("postgres-{workers}"),
        ));
    }
    let served = fake.stop();

    let one_pg = runs
        .iter()
        .find(|r| r.label == "postgres-1")
        .map(Run::games_per_s);
    println!(
        "\n| store | workers | wall | games/s | × one PostgreSQL worker | × / workers (ideal 1.00) |"
    );
    println!("|---|---|---|---|---|---|");
    for run in &runs {
        let store = if run.label.starts_with("sqlite") {
            "SQLite file"
        } else {
            "PostgreSQL"
        };
        let (ratio, per_worker) = match one_pg {
            Some(base) => {
                let ratio = run.games_per_s() / base;
                (
                    format!("{ratio:.2}×"),
                    format!("{:.2}", ratio / run.workers as f64),
                )
            }
            None => ("-".into(), "-".into()),
        };
        println!(
            "| {store} | {} | {:.1} s | {:.2} | {ratio} | {per_worker} |",
            run.workers,
            run.wall.as_secs_f64(),
            run.games_per_s()
        );
    }
    if let (Some(base), Some(sqlite)) = (one_pg, runs.first()) {
        println!(
            "\none worker: PostgreSQL plays {:.2}× the games per second of a SQLite file",
            base / sqlite.games_per_s()
        );
    }
    println!(
        "the fake server answered {served} chat completions; load average after: {}",
        load_average()
    );
}
