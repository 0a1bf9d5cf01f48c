//! Engine-vs-engine throughput: `tournaments/fastchess_parity.lua` (Stockfish against itself at 2000
//! nodes, 10 openings × 2 colours) played by arena at concurrency 1 and 2, next to a raw baseline
//! that drives the same Stockfish binary over UCI through the same games in the same run, and next
//! to fastchess when it is on `PATH` (otherwise its measured throughput from
//! `tournaments/books/PROVENANCE.md` is printed as a labelled constant).
//!
//! Run with `cargo bench --bench engine_throughput` (`ARENA_BENCH_RUNS=N` repeats every measurement,
//! arena and the baseline alternating, prints each run and reports the median by wall time). It prints numbers only: the machine is shared and noisy, so
//! nothing here asserts on time.
//!
//! CPU is measured from `/proc`: the total of a driver and its engines is the growth of this
//! process's `cutime + cstime` (children that were waited for, like `getrusage(RUSAGE_CHILDREN)`),
//! and a driver's own CPU is its `utime + stime`, read from `/proc` once it has exited and before
//! it is reaped (arena, fastchess), or directly (the baseline runs in this process).

use std::{
    fs,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

/// Linux's `USER_HZ`: the unit of the CPU times in `/proc/*/stat` (100 on every mainstream arch).
const CLOCK_TICKS_PER_S: f64 = 100.0;
/// fastchess on this machine kind (2 vCPU, shared), from the reference's PROVENANCE: games/s.
const FASTCHESS_REFERENCE: [(usize, f64); 2] = [(1, 1.46), (2, 2.10)];
/// The parity workload's engine settings, as in the script.
const NODES: u32 = 2000;
const TOURNAMENT: &str = "fastchess-parity";

/// One measured run of one driver.
#[derive(Debug, Clone)]
struct Measured {
    wall: Duration,
    /// CPU of the driver and its engines, seconds.
    total_cpu: f64,
    /// CPU of the driver alone, seconds.
    driver_cpu: f64,
    games: usize,
    plies: usize,
    /// The play window: the first game's start to the last game's end, without the driver's
    /// start-up and end-of-run work (arena: from the store's timestamps, to the millisecond;
    /// the baseline: from its first `ucinewgame` to its last `bestmove`). `None` for fastchess.
    window: Option<Duration>,
}

/// A game to replay: its start position and the moves arena played.
struct Replay {
    fen: String,
    moves: Vec<String>,
}

fn main() {
    let Ok(stockfish) = arena::engine::locate("stockfish") else {
        println!(
            "engine_throughput: skipped, Stockfish is not installed (apt-get install stockfish)"
        );
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("tournaments/fastchess_parity.lua");
    let book = root.join("tournaments/books/uho10.epd");
    let runs: usize = std::env::var("ARENA_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1);
    let fastchess = arena::engine::locate("fastchess").ok();

    println!(
        "workload: {} (20 games, {} at nodes {NODES}, Threads 1, Hash 16); {runs} run(s) each, median wall",
        script.display(),
        stockfish.display()
    );
    println!("load average before: {}", load_average());
    println!();
    println!(
        "{:<28} {:>4} {:>8} {:>8} {:>8} {:>8} {:>11} {:>11} {:>8} {:>10} {:>8}",
        "driver",
        "conc",
        "wall s",
        "play s",
        "games/s",
        "plies/s",
        "total CPU s",
        "driver CPU",
        "share %",
        "µs/ply",
        "CPU use"
    );
    for concurrency in [1, 2] {
        // arena and the baseline alternate, so that a change in the machine's load between runs
        // falls on both.
        let mut arena_runs = Vec::new();
        let mut baseline_runs = Vec::new();
        let mut mismatches = 0;
        for run in 0..runs {
            let (a, replays) = run_arena(&script, concurrency);
            let (b, bad) = run_baseline(&stockfish, &replays, concurrency);
            mismatches += bad;
            if runs > 1 {
                println!(
                    "  run {}: arena wall {:.2} s, play {} s; baseline wall {:.2} s, play {} s",
                    run + 1,
                    a.wall.as_secs_f64(),
                    seconds(a.window),
                    b.wall.as_secs_f64(),
                    seconds(b.window)
                );
            }
            arena_runs.push(a);
            baseline_runs.push(b);
        }
        let arena = median(arena_runs);
        let baseline = median(baseline_runs);
        print_row("arena", concurrency, &arena);
        print_row("raw UCI baseline", concurrency, &baseline);
        println!(
            "{:<28} {:>4} {:>8.2}   (wall of arena / wall of the baseline; above 1 is arena overhead)",
            "ratio arena / baseline",
            concurrency,
            arena.wall.as_secs_f64() / baseline.wall.as_secs_f64()
        );
        if let (Some(a), Some(b)) = (arena.window, baseline.window) {
            println!(
                "{:<28} {:>4} {:>8.2}   (play windows, first game's start to last game's end: no start-up or report)",
                "ratio of play windows",
                concurrency,
                a.as_secs_f64() / b.as_secs_f64()
            );
        }
        println!(
            "{:<28} {:>4} {:>7.0}%   (of the raw loop's games/s by wall{}; the target is >= 95 %)",
            "arena's throughput",
            concurrency,
            100.0 * baseline.wall.as_secs_f64() / arena.wall.as_secs_f64(),
            match (arena.window, baseline.window) {
                (Some(a), Some(b)) => format!(
                    ", {:.0} % by play window",
                    100.0 * b.as_secs_f64() / a.as_secs_f64()
                ),
                _ => String::new(),
            }
        );
        if mismatches > 0 {
            println!(
                "  warning: the baseline got {mismatches} bestmove(s) that differ from arena's games: not deterministic here"
            );
        }

        match &fastchess {
            Some(binary) => {
                let mut fc_runs = Vec::new();
                for _ in 0..runs {
                    fc_runs.push(run_fastchess(binary, &stockfish, &book, concurrency));
                }
                print_row("fastchess", concurrency, &median(fc_runs));
            }
            None => {
                let (_, games_per_s) = FASTCHESS_REFERENCE
                    .iter()
                    .find(|(c, _)| *c == concurrency)
                    .expect("a reference for both concurrency levels");
                println!(
                    "{:<28} {:>4} {:>8} {:>8} {:>8.2}   (not on PATH: reference constant, PROVENANCE.md)",
                    "fastchess (reference)", concurrency, "-", "-", games_per_s
                );
            }
        }
        println!();
    }
    println!("load average after: {}", load_average());
}

fn print_row(driver: &str, concurrency: usize, m: &Measured) {
    let wall = m.wall.as_secs_f64();
    println!(
        "{:<28} {:>4} {:>8.2} {:>8} {:>8.2} {:>8.0} {:>11.2} {:>11.3} {:>8.1} {:>10.1} {:>7.0}%",
        driver,
        concurrency,
        wall,
        seconds(m.window),
        m.games as f64 / wall,
        m.plies as f64 / wall,
        m.total_cpu,
        m.driver_cpu,
        100.0 * m.driver_cpu / m.total_cpu.max(f64::EPSILON),
        1e6 * m.driver_cpu / m.plies.max(1) as f64,
        100.0 * m.total_cpu / wall
    );
}

/// A play window in seconds for the table, `-` when there is none.
fn seconds(window: Option<Duration>) -> String {
    window.map_or_else(|| "-".into(), |w| format!("{:.2}", w.as_secs_f64()))
}

fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by_key(|m| m.wall);
    runs.swap_remove(runs.len() / 2)
}

/// Plays the parity script with arena into a fresh store; returns the measurement and the games.
fn run_arena(script: &Path, concurrency: usize) -> (Measured, Vec<Replay>) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = dir.path().join("bench.db");
    let children_before = own_stat().children;
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_arena"))
        .arg("run")
        .arg(script)
        .arg("--db")
        .arg(&db)
        .args(["--concurrency", &concurrency.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("arena starts");
    let (status, sampled) = wait_sampling(child);
    let wall = started.elapsed();
    assert!(status.success(), "arena run failed: {status}");
    let total_cpu = (own_stat().children - children_before).max(sampled.tree);

    let store = arena::store::Store::open(&db).expect("the bench store opens");
    let t = store
        .find_tournament(TOURNAMENT)
        .expect("the store reads")
        .expect("the tournament is stored");
    let mut replays = Vec::new();
    let mut plies = 0;
    let mut first_start: Option<f64> = None;
    let mut last_end: Option<f64> = None;
    for g in store.games(t.id).expect("games") {
        let at = |stamp: &Option<String>| {
            stamp
                .as_deref()
                .and_then(rfc3339_seconds)
                .expect("a played game has RFC 3339 start and end times")
        };
        let (start, end) = (at(&g.started_at), at(&g.finished_at));
        first_start = Some(first_start.map_or(start, |s| s.min(start)));
        last_end = Some(last_end.map_or(end, |e| e.max(end)));
        let moves: Vec<String> = store
            .plies(g.id)
            .expect("plies")
            .into_iter()
            .map(|p| p.uci)
            .collect();
        plies += moves.len();
        replays.push(Replay {
            fen: g
                .start_fen
                .expect("every parity game starts from an opening"),
            moves,
        });
    }
    let measured = Measured {
        wall,
        total_cpu,
        driver_cpu: sampled.driver,
        games: replays.len(),
        plies,
        window: first_start
            .zip(last_end)
            .map(|(s, e)| Duration::from_secs_f64((e - s).max(0.0))),
    };
    (measured, replays)
}

/// Runs the fastchess command of the reference at `concurrency` in a scratch folder.
fn run_fastchess(binary: &Path, stockfish: &Path, book: &Path, concurrency: usize) -> Measured {
    let dir = tempfile::tempdir().expect("a temporary folder");
    fs::copy(book, dir.path().join("uho10.epd")).expect("copy the book");
    let engine = |name: &str| format!("cmd={} name={name}", stockfish.display());
    let children_before = own_stat().children;
    let started = Instant::now();
    let mut command = Command::new(binary);
    command.current_dir(dir.path());
    command.arg("-engine").args(engine("sf1").split(' '));
    command.arg("-engine").args(engine("sf2").split(' '));
    command.args([
        "-each",
        &format!("nodes={NODES}"),
        "option.Threads=1",
        "option.Hash=16",
        "-openings",
        "file=uho10.epd",
        "format=epd",
        "order=sequential",
        "-rounds",
        "10",
        "-repeat",
        "-concurrency",
        &concurrency.to_string(),
        "-pgnout",
        "file=games.pgn",
        "-ratinginterval",
        "0",
    ]);
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fastchess starts");
    let (status, sampled) = wait_sampling(child);
    let wall = started.elapsed();
    assert!(status.success(), "fastchess failed: {status}");
    let pgn = fs::read_to_string(dir.path().join("games.pgn")).unwrap_or_default();
    let plies = pgn
        .lines()
        .filter_map(|l| l.strip_prefix("[PlyCount \""))
        .filter_map(|v| v.trim_end_matches("\"]").parse::<usize>().ok())
        .sum();
    Measured {
        wall,
        total_cpu: (own_stat().children - children_before).max(sampled.tree),
        driver_cpu: sampled.driver,
        games: pgn.matches("[Result ").count(),
        plies,
        window: None,
    }
}

/// The floor: `concurrency` threads, each with its own pair of Stockfish processes, replaying the
/// games arena played with the same per-game (`ucinewgame`, `isready`) and per-move (`position`,
/// `go nodes`) protocol, and no rules, store or logging. Returns the measurement and how many
/// bestmoves differed from arena's moves.
fn run_baseline(stockfish: &Path, games: &[Replay], concurrency: usize) -> (Measured, usize) {
    let children_before = own_stat().children;
    let self_before = own_stat().own;
    let next = AtomicUsize::new(0);
    let mismatches = AtomicUsize::new(0);
    // Each thread's first `ucinewgame` and last `bestmove`.
    let spans: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..concurrency {
            scope.spawn(|| {
                // One process per colour, as arena leases one per player per game.
                let mut white = Uci::start(stockfish);
                let mut black = Uci::start(stockfish);
                let mut span: Option<(Instant, Instant)> = None;
                while let Some(game) = games.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let game_start = Instant::now();
                    for engine in [&mut white, &mut black] {
                        engine.send("ucinewgame");
                        engine.sync();
                    }
                    let white_first = game.fen.split(' ').nth(1) != Some("b");
                    for (ply, played) in game.moves.iter().enumerate() {
                        let engine = if (ply % 2 == 0) == white_first {
                            &mut white
                        } else {
                            &mut black
                        };
                        let position = if ply == 0 {
                            format!("position fen {}", game.fen)
                        } else {
                            format!(
                                "position fen {} moves {}",
                                game.fen,
                                game.moves[..ply].join(" ")
                            )
                        };
                        engine.send(&position);
                        engine.send(&format!("go nodes {NODES}"));
                        if engine.bestmove() != *played {
                            mismatches.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    span = Some((span.map_or(game_start, |s| s.0), Instant::now()));
                }
                if let Some(span) = span {
                    spans.lock().expect("spans lock").push(span);
                }
                white.quit();
                black.quit();
            });
        }
    });
    let wall = started.elapsed();
    let spans = spans.into_inner().expect("spans lock");
    let window = spans
        .iter()
        .map(|s| s.0)
        .min()
        .zip(spans.iter().map(|s| s.1).max())
        .map(|(s, e)| e - s);
    let measured = Measured {
        wall,
        window,
        total_cpu: own_stat().children - children_before + own_stat().own - self_before,
        driver_cpu: own_stat().own - self_before,
        games: games.len(),
        plies: games.iter().map(|g| g.moves.len()).sum(),
    };
    (measured, mismatches.into_inner())
}

/// A Stockfish process driven with blocking pipes.
struct Uci {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Uci {
    fn start(path: &Path) -> Uci {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("stockfish starts");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut uci = Uci {
            child,
            stdin,
            stdout,
            line: String::new(),
        };
        uci.send("uci");
        uci.read_until("uciok");
        // The order arena sends them in (its options are sorted by name).
        uci.send("setoption name Hash value 16");
        uci.send("setoption name Threads value 1");
        uci.sync();
        uci
    }

    fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("write to stockfish");
        self.stdin.flush().expect("flush to stockfish");
    }

    fn sync(&mut self) {
        self.send("isready");
        self.read_until("readyok");
    }

    /// Reads lines until one starts with `prefix`; returns it.
    fn read_until(&mut self, prefix: &str) -> &str {
        loop {
            self.line.clear();
            let n = self
                .stdout
                .read_line(&mut self.line)
                .expect("read stockfish");
            assert!(n > 0, "stockfish closed its output");
            if self.line.starts_with(prefix) {
                return self.line.trim_end();
            }
        }
    }

    fn bestmove(&mut self) -> String {
        let line = self.read_until("bestmove");
        line.split_whitespace().nth(1).unwrap_or("").to_owned()
    }

    fn quit(mut self) {
        self.send("quit");
        // Waiting makes the process's CPU count in this process's children times.
        self.child.wait().expect("stockfish exits");
    }
}

/// CPU seconds of a process: its own and its waited-for children's.
#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    own: f64,
    children: f64,
}

fn own_stat() -> Cpu {
    read_stat(Path::new("/proc/self/stat"))
        .map(|s| s.1)
        .expect("/proc/self/stat is readable")
}

/// Reads `/proc/PID/stat`: the parent pid and the CPU times.
fn read_stat(path: &Path) -> Option<(u32, Cpu)> {
    let text = fs::read_to_string(path).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last `)`.
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let tick = |i: usize| -> Option<f64> {
        Some(fields.get(i)?.parse::<u64>().ok()? as f64 / CLOCK_TICKS_PER_S)
    };
    let ppid = fields.get(1)?.parse().ok()?;
    Some((
        ppid,
        Cpu {
            own: tick(11)? + tick(12)?,
            children: tick(13)? + tick(14)?,
        },
    ))
}

/// What a driver process used: its own CPU and that of its whole process tree (itself and the
/// engines it waited for).
#[derive(Debug, Default, Clone, Copy)]
struct Sampled {
    driver: f64,
    tree: f64,
}

/// Waits for `child` to exit and reads its CPU from `/proc` before reaping it.
///
/// `waitid(WEXITED | WNOWAIT)` leaves the exited child a zombie whose `/proc/PID/stat` still
/// holds its own CPU (`utime + stime`) and that of the children it waited for (`cutime + cstime`:
/// its engines). Nothing runs in this process while the driver plays, so the driver and the raw
/// loop (which has no sampler either) share the machine with the same neighbours: an earlier
/// version scanned every `/proc/PID/stat` each 20 ms during the driver's run, a load of its own
/// that only the driver's measurement carried.
fn wait_sampling(mut child: Child) -> (std::process::ExitStatus, Sampled) {
    let pid = child.id();
    // SAFETY: all-zero is a valid `siginfo_t`; waitid fills it for our own child and, with
    // WNOWAIT, leaves it unreaped, so `child.wait()` below still reaps it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let waited = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(waited, 0, "waitid on the driver failed");
    let (_, cpu) = read_stat(&PathBuf::from(format!("/proc/{pid}/stat")))
        .expect("an exited, unreaped child keeps its /proc/PID/stat");
    let status = child.wait().expect("reap the driver");
    let sampled = Sampled {
        driver: cpu.own,
        tree: cpu.own + cpu.children,
    };
    (status, sampled)
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as the store writes it
/// (`2026-01-31T12:34:56.789Z`), or `None` for any other shape.
fn rfc3339_seconds(stamp: &str) -> Option<f64> {
    let (date, time) = stamp.strip_suffix('Z')?.split_once('T')?;
    let mut ymd = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let mut hms = time.splitn(3, ':');
    let h: f64 = hms.next()?.parse().ok()?;
    let min: f64 = hms.next()?.parse().ok()?;
    let sec: f64 = hms.next()?.parse().ok()?;
    // Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
    // days_from_civil).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + h * 3600.0 + min * 60.0 + sec)
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
