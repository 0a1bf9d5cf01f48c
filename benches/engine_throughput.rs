//! Engine-vs-engine throughput: `tournaments/fastchess_parity.lua` (Stockfish against itself at 2000
//! nodes, 10 openings × 2 colours) played by arena at concurrency 1 and 2, next to a raw baseline
//! that drives the same Stockfish binary over UCI through the same games in the same run, and next
//! to fastchess when it is on `PATH` (otherwise its measured throughput from
//! `tournaments/books/PROVENANCE.md` is printed as a labelled constant).
//!
//! Run with `cargo bench --bench engine_throughput` (`ARENA_BENCH_RUNS=N` repeats every measurement
//! and reports the median wall time). It prints numbers only: the machine is shared and noisy, so
//! nothing here asserts on time.
//!
//! CPU is measured from `/proc`: the total of a driver and its engines is the growth of this
//! process's `cutime + cstime` (children that were waited for, like `getrusage(RUSAGE_CHILDREN)`),
//! and a driver's own CPU is its `utime + stime`, sampled every 20 ms while it runs (arena,
//! fastchess) or read directly (the baseline runs in this process).

use std::{
    collections::HashMap,
    fs,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
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
        "{:<28} {:>4} {:>8} {:>8} {:>8} {:>11} {:>11} {:>8} {:>10} {:>8}",
        "driver",
        "conc",
        "wall s",
        "games/s",
        "plies/s",
        "total CPU s",
        "driver CPU",
        "share %",
        "µs/ply",
        "CPU use"
    );
    for concurrency in [1, 2] {
        let mut arena_runs = Vec::new();
        let mut replays = Vec::new();
        for _ in 0..runs {
            let (m, games) = run_arena(&script, concurrency);
            arena_runs.push(m);
            replays = games;
        }
        let arena = median(arena_runs);
        print_row("arena", concurrency, &arena);

        let mut baseline_runs = Vec::new();
        let mut mismatches = 0;
        for _ in 0..runs {
            let (m, bad) = run_baseline(&stockfish, &replays, concurrency);
            baseline_runs.push(m);
            mismatches += bad;
        }
        let baseline = median(baseline_runs);
        print_row("raw UCI baseline", concurrency, &baseline);
        println!(
            "{:<28} {:>4} {:>8.2}   (wall of arena / wall of the baseline; above 1 is arena overhead)",
            "ratio arena / baseline",
            concurrency,
            arena.wall.as_secs_f64() / baseline.wall.as_secs_f64()
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
                    "{:<28} {:>4} {:>8} {:>8.2}   (not on PATH: reference constant, PROVENANCE.md)",
                    "fastchess (reference)", concurrency, "-", games_per_s
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
        "{:<28} {:>4} {:>8.2} {:>8.2} {:>8.0} {:>11.2} {:>11.3} {:>8.1} {:>10.1} {:>7.0}%",
        driver,
        concurrency,
        wall,
        m.games as f64 / wall,
        m.plies as f64 / wall,
        m.total_cpu,
        m.driver_cpu,
        100.0 * m.driver_cpu / m.total_cpu.max(f64::EPSILON),
        1e6 * m.driver_cpu / m.plies.max(1) as f64,
        100.0 * m.total_cpu / wall
    );
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
    for g in store.games(t.id).expect("games") {
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
    let started = Instant::now();
    thread::scope(|scope| {
        for _ in 0..concurrency {
            scope.spawn(|| {
                // One process per colour, as arena leases one per player per game.
                let mut white = Uci::start(stockfish);
                let mut black = Uci::start(stockfish);
                while let Some(game) = games.get(next.fetch_add(1, Ordering::Relaxed)) {
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
                }
                white.quit();
                black.quit();
            });
        }
    });
    let wall = started.elapsed();
    let measured = Measured {
        wall,
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

/// What the sampler saw of a driver process: its own CPU and that of its whole process tree.
#[derive(Debug, Default, Clone, Copy)]
struct Sampled {
    driver: f64,
    tree: f64,
}

/// Waits for `child`, sampling its CPU and its children's every 20 ms (the last sample before it
/// exits is its own CPU, to within one period).
fn wait_sampling(mut child: Child) -> (std::process::ExitStatus, Sampled) {
    let pid = child.id();
    let done = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new((0.0f64, HashMap::<u32, f64>::new())));
    let sampler = {
        let (done, seen) = (Arc::clone(&done), Arc::clone(&seen));
        thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some((_, cpu)) = read_stat(&PathBuf::from(format!("/proc/{pid}/stat"))) {
                    let engines = child_cpu(pid);
                    let mut seen = seen.lock().expect("sampler lock");
                    seen.0 = cpu.own;
                    seen.1.extend(engines);
                }
                thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let status = child.wait().expect("wait for the driver");
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("the sampler ends");
    let seen = seen.lock().expect("sampler lock");
    let sampled = Sampled {
        driver: seen.0,
        tree: seen.0 + seen.1.values().sum::<f64>(),
    };
    (status, sampled)
}

/// CPU seconds of every live child of `parent`, by pid.
fn child_cpu(parent: u32) -> Vec<(u32, f64)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let (ppid, cpu) = read_stat(&PathBuf::from(format!("/proc/{pid}/stat")))?;
            (ppid == parent).then_some((pid, cpu.own))
        })
        .collect()
}

fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
