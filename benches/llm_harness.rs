//! arena's own cost as an LLM harness (issue 13), against `examples/fake_openai.rs` so that no model
//! is in the way:
//!
//! 1. **One game at a time**: `benches/ply_cpu.lua` (two LLM players in `blitz` mode, the legal moves
//!    and the last 10 moves in every prompt, 12 games of at most 200 plies, concurrency 1) against a
//!    fake server answering at once. Prints arena's CPU per ply (user + sys of the arena process),
//!    its wall time per ply and peak RSS, beside ChessArena's measured 14.4 ms CPU per ply (a
//!    labelled constant) and the ≤ 0.25 ms target.
//! 2. **The concurrency sweep**: N games of at most 40 plies all at once (concurrency N, max
//!    concurrency N per player) against a fake server answering after 200 ms, for N in 64, 256 and
//!    1,024. A game waits for one reply per call, so a harness costing nothing plays its games in
//!    the longest game's calls × latency: the ideal window, and plies / ideal window the ideal
//!    (server-latency-bound) rate. The achieved rate is plies over the measured play window, from
//!    the first game's start to the last game's end (the store's timestamps; arena's start-up
//!    before any game is printed apart). Memory per running game is the largest RSS sampled (every
//!    50 ms) within the play window, over N (the target, ≤ 0.25 MB), also printed with a one-game
//!    run's taken off first (the marginal cost); the whole run's peak, reached after the last game
//!    while the end-of-run report is built, is printed beside it.
//!
//! ```sh
//! cargo bench --bench llm_harness
//! ARENA_BENCH_QUICK=1 cargo bench --bench llm_harness    # 3 games, 20-ply sweep games
//! ARENA_BENCH_SWEEP=64,256 cargo bench --bench llm_harness
//! ```
//!
//! Settings (environment): `ARENA_BENCH_QUICK=1` (a short run: 3 one-at-a-time games instead of 12,
//! sweep games of 20 plies instead of 40), `ARENA_BENCH_SWEEP` (the sizes, comma- or
//! space-separated; empty skips the sweep), `ARENA_BENCH_LATENCY_MS` (the sweep server's latency,
//! 200), `ARENA_BENCH_SEED` (the fake server's, 1), `ARENA_BENCH_KEEP=1` (keeps the temporary
//! folder: scripts, stores, logs), `ARENA_BENCH_SKIP_ONE=1` (skips the one-game table),
//! `ARENA_BENCH_ARENA=PATH` (runs that `arena` binary instead of the one this bench was built
//! with: to interleave runs of two commits' binaries on a noisy machine).
//!
//! `cargo bench` builds the release `arena` binary (`CARGO_BIN_EXE_arena`); the bench builds the fake
//! server (`cargo build --release --example fake_openai`, which shares the bench build's features, so
//! nothing is rebuilt twice) and
//! runs both as child processes, the server on a free port, fresh for every run. The arena
//! process's CPU and peak RSS come from `wait4(2)`'s resource usage of that one child (exact, and
//! nothing else's); the server's CPU from `/proc` just before it is stopped, with the number of
//! requests it reports having answered. It prints numbers and whether each target is met; it
//! asserts only that the games were played, never on time.

use std::{
    fs,
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

/// ChessArena's CPU per LLM ply on this workload and machine kind (issue 13's measurement).
const CHESSARENA_CPU_MS_PER_PLY: f64 = 14.4;
/// ChessArena's resident memory per game process (issue 13's measurement), MB.
const CHESSARENA_RSS_MB: f64 = 64.0;
/// Issue 13's targets.
const TARGET_CPU_MS_PER_PLY: f64 = 0.25;
const TARGET_PCT_OF_IDEAL: f64 = 95.0;
const TARGET_MB_PER_GAME: f64 = 0.25;
/// The workload script of the one-game measurement (shared with `benches/ply_cpu.sh`) and the
/// literals the bench rewrites in a copy of it.
const PLY_CPU_SCRIPT: &str = "benches/ply_cpu.lua";
const SCRIPT_BASE_URL: &str = "\"http://127.0.0.1:8799/v1\"";
const SCRIPT_GAMES: &str = "games_per_pair = 12,";
/// Linux's `USER_HZ`, the unit of `/proc/*/stat` CPU times (100 on every mainstream arch).
const CLOCK_TICKS_PER_S: f64 = 100.0;

/// What the environment asked for.
struct Settings {
    quick: bool,
    sweep: Vec<usize>,
    latency_ms: u64,
    seed: u64,
    keep: bool,
    skip_one: bool,
}

impl Settings {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok();
        let quick = var("ARENA_BENCH_QUICK").is_some_and(|v| v == "1");
        let sweep = match var("ARENA_BENCH_SWEEP") {
            Some(list) => list
                .split([',', ' '])
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .unwrap_or_else(|| panic!("ARENA_BENCH_SWEEP: {s:?} is not a game count"))
                })
                .collect(),
            None => vec![64, 256, 1024],
        };
        let number = |name: &str, default: u64| {
            var(name).map_or(default, |v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name}: {v:?} is not a number"))
            })
        };
        Self {
            quick,
            sweep,
            latency_ms: number("ARENA_BENCH_LATENCY_MS", 200),
            seed: number("ARENA_BENCH_SEED", 1),
            keep: var("ARENA_BENCH_KEEP").is_some_and(|v| v == "1"),
            skip_one: var("ARENA_BENCH_SKIP_ONE").is_some_and(|v| v == "1"),
        }
    }
}

/// The two release binaries the bench drives.
struct Binaries {
    arena: PathBuf,
    fake: PathBuf,
}

/// Builds the fake server in release mode (cached after the first run). The arena binary is the
/// one `cargo bench` built for this bench; building it again with `cargo build --release --bins`
/// would resolve features without the dev-dependencies and make every later `cargo bench`
/// rebuild half the tree.
fn build(root: &Path) -> Binaries {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(["build", "--release", "--quiet", "--example", "fake_openai"])
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "cargo build --release --example fake_openai failed"
    );
    let built = PathBuf::from(env!("CARGO_BIN_EXE_arena"));
    let fake = built
        .parent()
        .expect("the binary has a folder")
        .join("examples/fake_openai");
    let arena = std::env::var_os("ARENA_BENCH_ARENA").map_or(built, PathBuf::from);
    Binaries { arena, fake }
}

/// A running fake server.
struct FakeServer {
    child: Child,
    url: String,
    stderr: PathBuf,
}

/// What a stopped fake server reports.
struct ServerReport {
    cpu_s: f64,
    completions: u64,
}

impl FakeServer {
    fn start(fake: &Path, dir: &Path, seed: u64, latency_ms: u64) -> Self {
        let stderr = dir.join("server.err");
        let mut child = Command::new(fake)
            .args(["--port", "0", "--seed", &seed.to_string()])
            .args(["--latency-ms", &latency_ms.to_string()])
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&stderr).expect("the server log can be created"))
            .spawn()
            .expect("the fake server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout is piped"))
            .read_line(&mut line)
            .expect("the fake server's stdout is readable");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                panic!(
                    "the fake server did not start: {line:?} {}",
                    fs::read_to_string(&stderr).unwrap_or_default()
                )
            })
            .to_string();
        Self { child, url, stderr }
    }

    /// Stops the server with SIGTERM (so that it reports what it served) and reads its CPU first.
    fn stop(mut self) -> ServerReport {
        let pid = self.child.id();
        let cpu_s = proc_cpu_s(pid);
        // SAFETY: `pid` is our own child, not yet waited for, so the id cannot have been reused.
        let sent = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM reaches the fake server");
        self.child.wait().expect("the fake server stops");
        let log = fs::read_to_string(&self.stderr).unwrap_or_default();
        let completions = log
            .lines()
            .find_map(|l| l.strip_prefix("fake_openai: served "))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("the fake server did not report its requests: {log}"));
        ServerReport { cpu_s, completions }
    }
}

/// A process's user + sys CPU from `/proc/PID/stat`, seconds.
fn proc_cpu_s(pid: u32) -> f64 {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat is readable");
    // The command name may hold spaces and parentheses: the fields start after the last `)`.
    let fields: Vec<&str> = text[text.rfind(')').expect("a stat line") + 1..]
        .split_whitespace()
        .collect();
    let ticks = |i: usize| fields[i].parse::<u64>().expect("a tick count") as f64;
    (ticks(11) + ticks(12)) / CLOCK_TICKS_PER_S
}

/// The arena process's resource use over one run.
struct Usage {
    cpu_s: f64,
    peak_rss_mb: f64,
    wall: Duration,
    /// Resident memory sampled every 50 ms: (Unix time in seconds, MB).
    rss_samples: Vec<(f64, f64)>,
}

impl Usage {
    /// The largest sampled RSS between two Unix times (the games' play window), in MB.
    fn peak_rss_within_mb(&self, from: f64, to: f64) -> f64 {
        self.rss_samples
            .iter()
            .filter(|(at, _)| (from..=to).contains(at))
            .map(|&(_, mb)| mb)
            .fold(0.0, f64::max)
    }
}

/// Samples the resident memory of process `pid` every 50 ms until `stop` is set.
fn sample_rss(pid: u32, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<(f64, f64)>> {
    std::thread::spawn(move || {
        let mut samples = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let kb = status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
            if let Some(kb) = kb {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .expect("the clock is after 1970")
                    .as_secs_f64();
                samples.push((now, kb * 1024.0 / 1e6));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        samples
    })
}

/// Runs `arena run SCRIPT` on a fresh store; its log goes to `dir/arena.log`.
#[expect(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, which Child cannot see"
)]
fn run_arena(arena: &Path, script: &Path, db: &Path, dir: &Path) -> Usage {
    let log = dir.join("arena.log");
    let started = Instant::now();
    let child = Command::new(arena)
        .arg("run")
        .arg(script)
        .arg("--db")
        .arg(db)
        .arg("--no-watch")
        .stdout(fs::File::create(&log).expect("the arena log can be created"))
        .stderr(Stdio::from(
            fs::OpenOptions::new()
                .append(true)
                .open(&log)
                .expect("the arena log reopens"),
        ))
        .spawn()
        .expect("arena starts");
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_rss(child.id(), Arc::clone(&stop));
    // wait4 rather than Child::wait: it returns this one child's own rusage (CPU and max RSS).
    let mut status = 0;
    // SAFETY: all-zero is a valid `rusage`; wait4 fills it for our own unwaited child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let rss_samples = sampler.join().expect("the RSS sampler ends");
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 on arena failed");
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        let mut text = String::new();
        fs::File::open(&log)
            .and_then(|mut f| f.read_to_string(&mut text))
            .ok();
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        panic!(
            "arena run failed (status {status}); end of its log:\n{}",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        cpu_s: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        peak_rss_mb: usage.ru_maxrss as f64 * 1024.0 / 1e6,
        wall,
        rss_samples,
    }
}

/// What the store says about one run.
struct Played {
    plies: u64,
    calls: u64,
    /// First game's start to last game's end, seconds.
    window_s: f64,
    /// The tournament's creation to the first game's start, seconds.
    startup_s: f64,
    /// The most LLM calls of any one game.
    max_calls_per_game: u64,
    /// The play window's start and end as Unix times, seconds.
    window_unix: (f64, f64),
}

fn read_store(db: &Path) -> Played {
    let conn = rusqlite::Connection::open(db).expect("the bench store opens");
    let one = |sql: &str| -> f64 {
        conn.query_row(sql, [], |r| r.get::<_, f64>(0))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    let unfinished = one("SELECT count(*) FROM games WHERE status != 'finished'");
    assert_eq!(unfinished, 0.0, "{unfinished} games did not finish");
    Played {
        plies: one("SELECT count(*) FROM plies") as u64,
        calls: one("SELECT count(*) FROM llm_calls") as u64,
        window_s: one(
            "SELECT (julianday(max(finished_at)) - julianday(min(started_at))) * 86400 FROM games",
        ),
        startup_s: one(
            "SELECT (julianday(min(g.started_at)) - julianday(t.created_at)) * 86400 \
             FROM games g JOIN tournaments t ON t.id = g.tournament_id",
        ),
        max_calls_per_game: one(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM llm_calls GROUP BY game_id)",
        ) as u64,
        window_unix: (
            one("SELECT (julianday(min(started_at)) - 2440587.5) * 86400 FROM games"),
            one("SELECT (julianday(max(finished_at)) - 2440587.5) * 86400 FROM games"),
        ),
    }
}

/// The sweep's tournament: `games` games of at most `plies` plies, all at once.
fn sweep_script(url: &str, games: usize, plies: u32) -> String {
    format!(
        r#"local arena = require("arena")
local function player(name)
  return arena.llm {{
    name = name,
    base_url = "{url}",
    model = "fake-random-mover",
    max_tokens = 64,
    mode = "blitz",
    options = {{ legal_moves = true, history = 10 }},
    max_concurrency = {games},
  }}
end
return arena.tournament {{
  name = "llm-harness-sweep",
  format = "round_robin",
  games_per_pair = {games},
  max_plies = {plies},
  seed = 1,
  concurrency = {games},
  players = {{ player("fake-a"), player("fake-b") }},
}}
"#
    )
}

/// "met" or "NOT met".
fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The one-game-at-a-time workload.
fn one_game(bins: &Binaries, root: &Path, dir: &Path, settings: &Settings) {
    let template =
        fs::read_to_string(root.join(PLY_CPU_SCRIPT)).expect("benches/ply_cpu.lua is readable");
    assert!(
        template.contains(SCRIPT_BASE_URL) && template.contains(SCRIPT_GAMES),
        "{PLY_CPU_SCRIPT} no longer holds {SCRIPT_BASE_URL} and {SCRIPT_GAMES}"
    );
    let games = if settings.quick { 3 } else { 12 };
    let server = FakeServer::start(&bins.fake, dir, settings.seed, 0);
    let script = dir.join("one_game.lua");
    let text = template
        .replace(SCRIPT_BASE_URL, &format!("{:?}", server.url))
        .replace(SCRIPT_GAMES, &format!("games_per_pair = {games},"));
    fs::write(&script, text).expect("the script can be written");
    let db = dir.join("one_game.db");
    let usage = run_arena(&bins.arena, &script, &db, dir);
    let report = server.stop();
    let played = read_store(&db);
    let plies = played.plies.max(1) as f64;
    let cpu_ms = 1000.0 * usage.cpu_s / plies;

    println!(
        "1. one game at a time: {PLY_CPU_SCRIPT} with {games} games of at most 200 plies, 2 LLM players,"
    );
    println!("   blitz (legal moves + history 10), concurrency 1, fake server answering at once");
    println!();
    println!(
        "   {:>6} {:>6} {:>11} {:>12} {:>13} {:>13} {:>16}",
        "plies",
        "calls",
        "CPU ms/ply",
        "wall ms/ply",
        "peak RSS MB",
        "server CPU s",
        "server answered"
    );
    println!(
        "   {:>6} {:>6} {:>11.3} {:>12.3} {:>13.1} {:>13.2} {:>16}",
        played.plies,
        played.calls,
        cpu_ms,
        1000.0 * usage.wall.as_secs_f64() / plies,
        usage.peak_rss_mb,
        report.cpu_s,
        report.completions
    );
    println!();
    println!(
        "   ChessArena (measured, issue 13): {CHESSARENA_CPU_MS_PER_PLY} ms CPU/ply, {CHESSARENA_RSS_MB} MB per game process"
    );
    println!(
        "   arena / ChessArena: {:.3}× the CPU per ply ({:.1}× less), {:.2}× the memory",
        cpu_ms / CHESSARENA_CPU_MS_PER_PLY,
        CHESSARENA_CPU_MS_PER_PLY / cpu_ms,
        usage.peak_rss_mb / CHESSARENA_RSS_MB
    );
    println!(
        "   target ≤ {TARGET_CPU_MS_PER_PLY} ms CPU/ply: {} ({cpu_ms:.3} ms)",
        verdict(cpu_ms <= TARGET_CPU_MS_PER_PLY)
    );
    println!();
}

/// One sweep measurement.
struct SweepRun {
    played: Played,
    usage: Usage,
    completions: u64,
}

fn sweep_run(
    bins: &Binaries,
    dir: &Path,
    settings: &Settings,
    games: usize,
    plies: u32,
) -> SweepRun {
    let server = FakeServer::start(&bins.fake, dir, settings.seed, settings.latency_ms);
    let script = dir.join(format!("sweep_{games}.lua"));
    fs::write(&script, sweep_script(&server.url, games, plies)).expect("the script can be written");
    let db = dir.join(format!("sweep_{games}.db"));
    let usage = run_arena(&bins.arena, &script, &db, dir);
    let report = server.stop();
    SweepRun {
        played: read_store(&db),
        usage,
        completions: report.completions,
    }
}

/// The concurrency sweep.
fn sweep(bins: &Binaries, dir: &Path, settings: &Settings) {
    let plies = if settings.quick { 20 } else { 40 };
    let latency_s = settings.latency_ms as f64 / 1000.0;
    println!(
        "2. concurrency sweep: N games of at most {plies} plies at once (concurrency N), same players,"
    );
    println!(
        "   fake server answering after {} ms; ideal = longest game's calls × latency",
        settings.latency_ms
    );
    println!();
    let base = sweep_run(bins, dir, settings, 1, plies);
    println!(
        "   one-game run (the RSS baseline): {:.1} MB peak RSS, {} plies in {:.2} s",
        base.usage.peak_rss_mb, base.played.plies, base.played.window_s
    );
    println!();
    println!(
        "   {:>5} {:>6} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>9} {:>8} {:>8} {:>9} {:>10} {:>9}",
        "games",
        "plies",
        "answered",
        "ideal s",
        "window s",
        "ideal p/s",
        "achvd p/s",
        "% ideal",
        "RSS MB",
        "play MB",
        "MB/game",
        "marg. MB",
        "CPU ms/ply",
        "start-up s"
    );
    let mut verdicts = Vec::new();
    for &games in &settings.sweep {
        let run = sweep_run(bins, dir, settings, games, plies);
        let p = &run.played;
        let ideal_s = p.max_calls_per_game as f64 * latency_s;
        let pct = 100.0 * ideal_s / p.window_s;
        // Per running game: the RSS while the games play (the end-of-run report and standings,
        // built after the last game, peak higher; the whole run's peak is printed beside it).
        let (from, to) = p.window_unix;
        let playing = run.usage.peak_rss_within_mb(from, to);
        let base_playing = base
            .usage
            .peak_rss_within_mb(base.played.window_unix.0, base.played.window_unix.1);
        let per_game = playing / games as f64;
        let marginal = (playing - base_playing) / games as f64;
        println!(
            "   {:>5} {:>6} {:>8} {:>9.2} {:>9.2} {:>10.0} {:>10.0} {:>7.1}% {:>9.1} {:>8.1} {:>8.3} {:>9.3} {:>10.3} {:>9.2}",
            games,
            p.plies,
            run.completions,
            ideal_s,
            p.window_s,
            p.plies as f64 / ideal_s,
            p.plies as f64 / p.window_s,
            pct,
            run.usage.peak_rss_mb,
            playing,
            per_game,
            marginal,
            1000.0 * run.usage.cpu_s / p.plies.max(1) as f64,
            p.startup_s
        );
        verdicts.push((games, pct, per_game));
    }
    println!();
    for (games, pct, per_game) in verdicts {
        println!(
            "   {games} games: ≥ {TARGET_PCT_OF_IDEAL} % of ideal {} ({pct:.1} %); ≤ {TARGET_MB_PER_GAME} MB/game {} ({per_game:.3} MB)",
            verdict(pct >= TARGET_PCT_OF_IDEAL),
            verdict(per_game <= TARGET_MB_PER_GAME)
        );
    }
    println!();
}

fn main() {
    // `cargo bench` passes `--bench`; this bench has no options of its own.
    let settings = Settings::from_env();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bins = build(root);
    let tmp = tempfile::Builder::new()
        .prefix("llm_harness.")
        .tempdir()
        .expect("a temporary folder");
    let dir = tmp.path().to_path_buf();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "llm_harness: {} cores, load average before {}{}",
        cores,
        load_average(),
        if settings.quick { ", quick run" } else { "" }
    );
    println!();
    if !settings.skip_one {
        one_game(&bins, root, &dir, &settings);
    }
    if !settings.sweep.is_empty() {
        sweep(&bins, &dir, &settings);
    }
    println!("load average after: {}", load_average());
    if settings.keep {
        println!("kept {}", tmp.keep().display());
    }
}
