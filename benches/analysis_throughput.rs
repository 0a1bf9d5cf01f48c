//! Analysis throughput: arena's analysis of a fixed set of positions next to ChessArena's own
//! procedure on the same positions, in the same run.
//!
//! The positions: two games played at bench start by Stockfish against itself at `go nodes 1000`
//! (`Threads 1`, `Hash 16`, one process, `ucinewgame` before each), from the first two openings of
//! `books/2moves_v1.epd`: deterministic, so every run analyses the same plies. They are stored in a
//! temporary store and analysed:
//!
//! - by arena, as `arena analyze` does (depth 20, `MultiPV 3`, `Threads 1`, the default hash, one
//!   process per core, games segmented and searched in a row on a warm hash), forwards and then
//!   backwards, each from an empty analysis (every search made again);
//! - by the baseline, which drives Stockfish as ChessArena's `run_simulation.py` does through its
//!   `stockfish.py` for every ply: a fresh process for a depth-20 search of the position
//!   (`calculate_win_rate`), a fresh process for a depth-20 `MultiPV 3` search
//!   (`get_best_moves_and_evaluate(board, n=3)`), and a fresh process for the same search again with
//!   the played move as candidate, which searches the position after the move at depth 20 in the
//!   same process when the move is not among the three. Stockfish's own defaults (`Threads 1`,
//!   `Hash 16`), since `stockfish.py` configures nothing. ChessArena runs games in parallel
//!   processes (`--parallel`), each analysing its plies one after the other, so the baseline runs as
//!   many workers as arena has processes, each taking the next ply: both sides use every core.
//!
//! Printed per side: wall seconds per ply, the CPU seconds of its engine processes per ply (growth
//! of this process's `cutime + cstime`: children waited for), and arena's ratios. Also how far
//! arena's answers are from the baseline's (best-move agreement, evaluation differences), which is
//! search noise.
//!
//! `cargo bench --bench analysis_throughput`. Environment: `ARENA_BENCH_PLIES` (plies analysed, split
//! over the two games; default 40), `ARENA_BENCH_DEPTH` (default 20), `ARENA_BENCH_PROCESSES`
//! (arena's processes and the baseline's workers; default one per core),
//! `ARENA_BENCH_BASELINE_WORKERS` (`1`: the baseline one ply at a time, as ChessArena analyses one
//! game), `ARENA_BENCH_ORDERS` (`forward,backward` by default). Nothing here asserts on time: the machine is shared and noisy.

use std::{
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use arena::{
    analysis::{
        Analyser, AnalysisLimits, AnalysisPool, AnalysisSettings, DEFAULT_HASH_MB, VisitOrder,
        WinModel,
    },
    board::Game,
    engine::{EngineHandle, EngineSpec, Score, SearchLimits},
    store::{PlayerRecord, PlyAnalysisRecord, PlyRecord, ScheduledGame, Store},
};
use futures_util::StreamExt;

/// Linux's `USER_HZ`: the unit of the CPU times in `/proc/*/stat`.
const CLOCK_TICKS_PER_S: f64 = 100.0;
/// The games' players: Stockfish at this many nodes a move.
const PLAY_NODES: u64 = 1000;
const OPENINGS: usize = 2;

/// One ply to analyse: the position before it and the move played.
#[derive(Debug, Clone)]
struct Ply {
    fen: String,
    uci: String,
    /// The position after the move.
    fen_after: String,
}

/// What a side's run took.
#[derive(Debug, Clone, Copy)]
struct Measured {
    wall: Duration,
    engine_cpu: f64,
    plies: usize,
}

impl Measured {
    fn wall_per_ply(&self) -> f64 {
        self.wall.as_secs_f64() / self.plies as f64
    }
    fn cpu_per_ply(&self) -> f64 {
        self.engine_cpu / self.plies as f64
    }
}

/// The baseline's answers for one ply.
#[derive(Debug, Clone)]
struct BaselinePly {
    eval: Score,
    top: Vec<String>,
    played: Score,
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
}

#[tokio::main]
async fn main() {
    let Ok(stockfish) = arena::engine::locate("stockfish") else {
        println!(
            "analysis_throughput: skipped, Stockfish is not installed (apt-get install stockfish)"
        );
        return;
    };
    let stockfish = stockfish.to_string_lossy().into_owned();
    let plies_wanted = env_usize("ARENA_BENCH_PLIES").unwrap_or(40);
    let depth = env_usize("ARENA_BENCH_DEPTH").unwrap_or(20) as u32;
    let processes = env_usize("ARENA_BENCH_PROCESSES").unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let workers = env_usize("ARENA_BENCH_BASELINE_WORKERS").unwrap_or(processes);
    let orders: Vec<VisitOrder> = std::env::var("ARENA_BENCH_ORDERS")
        .unwrap_or_else(|_| "forward,backward".to_owned())
        .split(',')
        .filter_map(|o| match o.trim() {
            "forward" => Some(VisitOrder::Forward),
            "backward" => Some(VisitOrder::Backward),
            "" => None,
            other => panic!("ARENA_BENCH_ORDERS: unknown order `{other}` (forward, backward)"),
        })
        .collect();

    println!("machine: {}", machine());
    println!("engine: {stockfish}");
    println!("load average before: {}", load_average());
    let games = play_games(&stockfish, plies_wanted.div_ceil(OPENINGS)).await;
    let total: usize = games.iter().map(Vec::len).sum();
    println!(
        "positions: {OPENINGS} games of Stockfish at {PLAY_NODES} nodes from books/2moves_v1.epd, {total} plies ({} per game at most)",
        plies_wanted.div_ceil(OPENINGS)
    );
    println!(
        "work: depth {depth}, MultiPV 3, Threads 1; arena: {processes} process(es), Hash {DEFAULT_HASH_MB}; baseline: {workers} worker(s), a fresh process per search, Stockfish's defaults"
    );
    println!();

    let dir = tempfile::tempdir().expect("a temporary folder");
    let db = dir.path().join("bench.db");
    let store = Store::open(&db).expect("a store");
    let game_ids = store_games(&store, &games);
    let limits = AnalysisLimits {
        depth: Some(depth),
        nodes: None,
        movetime_ms: None,
        multipv: 3,
    };

    let mut arena_runs = Vec::new();
    for order in &orders {
        let (measured, rows) = arena_analysis(
            &store, &db, &game_ids, &stockfish, limits, *order, processes,
        )
        .await;
        println!(
            "arena {order:?}: {} plies in {:.1} s: {:.2} s/ply wall, {:.2} engine CPU s/ply",
            measured.plies,
            measured.wall.as_secs_f64(),
            measured.wall_per_ply(),
            measured.cpu_per_ply()
        );
        arena_runs.push((*order, measured, rows));
    }

    let flat: Vec<Ply> = games.iter().flatten().cloned().collect();
    let (baseline, answers) = baseline_analysis(&stockfish, &flat, depth, workers).await;
    println!(
        "baseline (ChessArena's procedure): {} plies in {:.1} s: {:.2} s/ply wall, {:.2} engine CPU s/ply",
        baseline.plies,
        baseline.wall.as_secs_f64(),
        baseline.wall_per_ply(),
        baseline.cpu_per_ply()
    );
    println!();
    for (order, measured, rows) in &arena_runs {
        println!(
            "ratio, arena {order:?} against the baseline: {:.2}x wall per ply, {:.2}x engine CPU per ply (target: 10x)",
            baseline.wall_per_ply() / measured.wall_per_ply(),
            baseline.cpu_per_ply() / measured.cpu_per_ply()
        );
        agreement(rows, &answers);
    }
    println!("load average after: {}", load_average());
}

/// Plays the bench's games: each a list of plies.
async fn play_games(stockfish: &str, plies: usize) -> Vec<Vec<Ply>> {
    let book = Path::new(env!("CARGO_MANIFEST_DIR")).join("books/2moves_v1.epd");
    let text = std::fs::read_to_string(&book).expect("the opening book");
    let engine = EngineHandle::spawn(
        EngineSpec::new("player", stockfish)
            .option("Threads", "1")
            .option("Hash", "16"),
    )
    .await
    .expect("Stockfish starts");
    let mut games = Vec::new();
    for line in text.lines().take(OPENINGS) {
        // EPD: the first four FEN fields, then operations.
        let fields: Vec<&str> = line.split_whitespace().take(4).collect();
        let fen = format!("{} 0 1", fields.join(" "));
        let mut game = Game::new(Some(&fen), 0).expect("a book position");
        engine.new_game().await.expect("ucinewgame");
        let mut list = Vec::new();
        while list.len() < plies && game.end().is_none() {
            let before = game.fen();
            let best = engine
                .best_move(
                    Some(&fen),
                    game.uci_moves(),
                    &SearchLimits::nodes(PLAY_NODES),
                )
                .await
                .expect("a move");
            let played = game.play_uci(&best.uci).expect("a legal move");
            list.push(Ply {
                fen: before,
                uci: played.uci,
                fen_after: game.fen(),
            });
        }
        games.push(list);
    }
    engine.shutdown().await;
    games
}

/// Stores the games as finished games of one tournament; returns their ids.
fn store_games(store: &Store, games: &[Vec<Ply>]) -> Vec<i64> {
    let t = store
        .open_tournament("bench", "bench.lua", "{}")
        .expect("a tournament");
    for name in ["white", "black"] {
        store
            .upsert_player(t.id, &PlayerRecord::new(name, "engine", "{}"))
            .expect("a player");
    }
    let scheduled: Vec<ScheduledGame> = (0..games.len())
        .map(|i| ScheduledGame::new(i as u32, 0, "white", "black"))
        .collect();
    store.schedule_games(t.id, &scheduled).expect("games");
    let rows = store.games(t.id).expect("games");
    let mut ids = Vec::new();
    for (row, plies) in rows.iter().zip(games) {
        store.mark_game_started(row.id, "bench", 1).expect("start");
        for (n, ply) in plies.iter().enumerate() {
            let record = PlyRecord {
                ply: n as u32,
                fen_before: ply.fen.clone(),
                uci: ply.uci.clone(),
                san: ply.uci.clone(),
                player: if n % 2 == 0 { "white" } else { "black" }.into(),
                attempts: 1,
                elapsed_ms: 1,
                clock_ms: None,
            };
            store.record_ply(row.id, &record).expect("a ply");
        }
        store
            .finish_game(row.id, "1/2-1/2", "move_limit", None)
            .expect("finish");
        ids.push(row.id);
    }
    ids
}

/// arena's analysis of every stored game from an empty analysis, as `arena analyze` runs it.
async fn arena_analysis(
    store: &Store,
    db: &Path,
    game_ids: &[i64],
    stockfish: &str,
    limits: AnalysisLimits,
    order: VisitOrder,
    processes: usize,
) -> (Measured, Vec<PlyAnalysisRecord>) {
    forget_analysis(db);
    let games: Vec<_> = game_ids
        .iter()
        .map(|&id| store.game(id).expect("a game"))
        .collect();
    let cpu = children_cpu();
    let started = Instant::now();
    let spec = EngineSpec::new("analysis", stockfish)
        .option("Threads", "1")
        .option("Hash", DEFAULT_HASH_MB.to_string());
    let pool = AnalysisPool::new(spec, processes);
    let settings = AnalysisSettings {
        limits,
        win_model: WinModel::ChessArena,
        all_moves: false,
        order,
    };
    let analyser = Analyser::new(store, &pool, settings)
        .await
        .expect("the analyser starts");
    let analyser = &analyser;
    let reports: Vec<_> = futures_util::stream::iter(&games)
        .map(|game| async move {
            analyser
                .analyse_game(game, None)
                .await
                .expect("an analysis")
        })
        .buffered(processes)
        .collect()
        .await;
    pool.shutdown().await;
    let wall = started.elapsed();
    let plies = reports.iter().map(|r| r.analysed as usize).sum();
    let searched: u32 = reports.iter().map(|r| r.searched).sum();
    assert_eq!(pool.engine_requests(), u64::from(searched));
    let rows = game_ids
        .iter()
        .flat_map(|&id| store.ply_analyses(id).expect("analyses"))
        .collect();
    let measured = Measured {
        wall,
        engine_cpu: children_cpu() - cpu,
        plies,
    };
    (measured, rows)
}

/// Empties the store's analysis, so the next run searches everything again.
fn forget_analysis(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("the store");
    conn.execute_batch(
        "DELETE FROM ply_analysis; DELETE FROM game_analysis; DELETE FROM analysis_cache;",
    )
    .expect("cleared");
}

/// ChessArena's per-ply procedure on every ply, `workers` plies at a time.
async fn baseline_analysis(
    stockfish: &str,
    plies: &[Ply],
    depth: u32,
    workers: usize,
) -> (Measured, Vec<BaselinePly>) {
    let cpu = children_cpu();
    let started = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let plies = Arc::new(plies.to_vec());
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let (next, plies, stockfish) =
            (Arc::clone(&next), Arc::clone(&plies), stockfish.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(ply) = plies.get(i) else { break };
                done.push((i, chessarena_ply(&stockfish, ply, depth).await));
            }
            done
        }));
    }
    let mut answers: Vec<Option<BaselinePly>> = vec![None; plies.len()];
    for task in tasks {
        for (i, answer) in task.await.expect("a worker") {
            answers[i] = Some(answer);
        }
    }
    let measured = Measured {
        wall: started.elapsed(),
        engine_cpu: children_cpu() - cpu,
        plies: plies.len(),
    };
    (
        measured,
        answers.into_iter().map(|a| a.expect("answered")).collect(),
    )
}

/// One ply as `run_simulation.py` analyses it: three fresh processes, the third also searching the
/// position after a move outside the top three.
async fn chessarena_ply(stockfish: &str, ply: &Ply, depth: u32) -> BaselinePly {
    let limits = SearchLimits::depth(depth);
    // python-chess sends `ucinewgame` before a process's first search.
    let fresh = || async {
        let engine = EngineHandle::spawn(EngineSpec::new("chessarena", stockfish))
            .await
            .expect("Stockfish starts");
        engine.new_game().await.expect("ucinewgame");
        engine
    };
    let score = |a: &arena::engine::Analysis| a.lines[0].score.expect("a score");
    // calculate_win_rate(board)
    let engine = fresh().await;
    let win = engine
        .analyse(&ply.fen, &limits, 1, &[])
        .await
        .expect("a search");
    engine.shutdown().await;
    // get_best_moves_and_evaluate(board, n=3)
    let engine = fresh().await;
    let top = engine
        .analyse(&ply.fen, &limits, 3, &[])
        .await
        .expect("a search");
    engine.shutdown().await;
    // get_best_moves_and_evaluate(board, candidate_move=move, n=3)
    let engine = fresh().await;
    let again = engine
        .analyse(&ply.fen, &limits, 3, &[])
        .await
        .expect("a search");
    let line = again.lines.iter().find(|l| l.pv.first() == Some(&ply.uci));
    let played = match line {
        Some(line) => line.score.expect("a score"),
        None => {
            let after = engine
                .analyse(&ply.fen_after, &limits, 1, &[])
                .await
                .expect("a search");
            match score(&after) {
                Score::Cp(cp) => Score::Cp(-cp),
                Score::Mate(n) if n <= 0 => Score::Mate(1 - n),
                Score::Mate(n) => Score::Mate(-n),
            }
        }
    };
    engine.shutdown().await;
    BaselinePly {
        eval: score(&win),
        top: top
            .lines
            .iter()
            .filter_map(|l| l.pv.first().cloned())
            .collect(),
        played,
    }
}

/// How far arena's answers are from the baseline's: search noise, since both search the same
/// positions at the same depth.
fn agreement(rows: &[PlyAnalysisRecord], baseline: &[BaselinePly]) {
    let cp = |s: Score| match s {
        Score::Cp(cp) => Some(cp),
        Score::Mate(_) => None,
    };
    let (mut best, mut top_sets, mut eval_diffs, mut played_diffs) = (0, 0, Vec::new(), Vec::new());
    for (row, base) in rows.iter().zip(baseline) {
        let top: Vec<String> = serde_json::from_str::<Vec<serde_json::Value>>(&row.top_json)
            .expect("stored top moves")
            .iter()
            .filter_map(|m| m["uci"].as_str().map(str::to_owned))
            .collect();
        best += usize::from(top.first() == base.top.first());
        let mut a = top.clone();
        let mut b = base.top.clone();
        a.sort();
        b.sort();
        top_sets += usize::from(a == b);
        if let (Some(x), Some(y)) = (cp(row.eval_before), cp(base.eval)) {
            eval_diffs.push((x - y).abs());
        }
        if let (Some(Some(x)), Some(y)) = (row.played_score.map(cp), cp(base.played)) {
            played_diffs.push((x - y).abs());
        }
    }
    let median = |v: &mut Vec<i32>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    println!(
        "  against the baseline's answers: best move the same on {best}/{n} plies, the same top three on {top_sets}/{n}; |evaluation difference| median {} cp, max {} cp; played move's score median {} cp",
        median(&mut eval_diffs),
        eval_diffs.last().copied().unwrap_or(0),
        median(&mut played_diffs),
        n = rows.len(),
    );
}

/// The CPU seconds of this process's children that were waited for (`cutime + cstime`).
fn children_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // cutime and cstime are fields 16 and 17 of the whole line, 14 and 15 after the name.
    (ticks(13) + ticks(14)) / CLOCK_TICKS_PER_S
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cpus} CPU(s), {model}")
}
