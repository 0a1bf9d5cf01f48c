//! `arena analyze`: engine analysis of stored finished games (resumable), then per-player quality.

use std::{path::PathBuf, sync::Arc};

use anyhow::{Context, Result};
use arena::{
    analysis::{Analyser, AnalysisLimits, AnalysisPool, AnalysisSettings, VisitOrder, WinModel},
    engine::EngineSpec,
    leaderboard,
    store::{LeaseKind, Store, TournamentRow},
    tournament::worker::Worker,
};
use futures_util::StreamExt;

use super::common::{WorkerArgs, open_existing, select, write_stdout};

/// `arena analyze`: defaults follow the papers (depth 20, 1 thread, top 3 moves).
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The tournament (default: every tournament in the store).
    #[arg(long)]
    tournament: Option<String>,
    /// Search depth (default 20 unless --nodes or --movetime-ms is given).
    #[arg(long)]
    depth: Option<u32>,
    /// Nodes per search.
    #[arg(long, conflicts_with = "depth")]
    nodes: Option<u64>,
    /// Milliseconds per search (not reproducible).
    #[arg(long, conflicts_with_all = ["depth", "nodes"])]
    movetime_ms: Option<u64>,
    /// How many top moves to report per position.
    #[arg(long, default_value_t = 3)]
    multipv: u32,
    /// Engine threads per process.
    #[arg(long, default_value_t = 1)]
    threads: u32,
    /// Engine hash per process, in MB (kept warm across the positions of a game).
    #[arg(long, default_value_t = arena::analysis::DEFAULT_HASH_MB)]
    hash: u32,
    /// Engine processes (default: the number of CPUs).
    #[arg(long)]
    processes: Option<usize>,
    /// The Win% formula behind the move classes: `chessarena` (0.004, mate 10000) or `lichess`
    /// (0.00368208, mate ±1000, as LLM Chess).
    #[arg(long, default_value = "lichess", value_parser = parse_win_model)]
    win_model: WinModel,
    /// Also score every legal move of every position (slower).
    #[arg(long)]
    all_moves: bool,
    /// The analysis engine (a UCI binary).
    #[arg(long, default_value = "stockfish")]
    engine: String,
    #[command(flatten)]
    workers: WorkerArgs,
}

fn parse_win_model(name: &str) -> Result<WinModel, String> {
    WinModel::parse(name)
        .ok_or_else(|| format!("unknown win model `{name}` (chessarena or lichess)"))
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let store = Arc::new(open_existing(&args.db)?);
    let worker = args.workers.worker();
    let tournaments = select(&store, args.tournament.as_deref())?;
    let depth = match (args.depth, args.nodes, args.movetime_ms) {
        (None, None, None) => Some(20),
        (depth, _, _) => depth,
    };
    let settings = AnalysisSettings {
        limits: AnalysisLimits {
            depth,
            nodes: args.nodes,
            movetime_ms: args.movetime_ms,
            multipv: args.multipv.max(1),
        },
        win_model: args.win_model,
        all_moves: args.all_moves,
        order: VisitOrder::default(),
    };
    let processes = args.processes.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let spec = EngineSpec::new("analysis", args.engine)
        .option("Threads", args.threads.to_string())
        .option("Hash", args.hash.to_string());
    let pool = AnalysisPool::new(spec, processes);
    let renewal = worker.keep_renewing(store.clone(), LeaseKind::Analysis);
    // Shut the engines down whatever the analysis returned.
    let result = analyze_with(&store, &pool, settings, processes, &worker, &tournaments).await;
    renewal.abort();
    pool.shutdown().await;
    result
}

async fn analyze_with(
    store: &Store,
    pool: &AnalysisPool,
    settings: AnalysisSettings,
    processes: usize,
    worker: &Worker,
    tournaments: &[TournamentRow],
) -> Result<u8> {
    let analyser = Analyser::new(store, pool, settings).await?;
    eprintln!(
        "analysing with `{}` ({}, win model {})",
        analyser.engine_id(),
        settings.limits.key(),
        settings.win_model.as_str()
    );
    for t in tournaments {
        let mut pending = analyser.pending(t.id)?;
        let total = pending.len();
        eprintln!("{}: {total} game(s) to analyse", t.name);
        let mut done = 0;
        let mut waiting_shown = None;
        // Each game is claimed as a process becomes free, so that workers sharing the store
        // split the games between them; one another worker holds is offered again once this
        // worker has nothing else, until it is analysed or its lease lapses.
        while !pending.is_empty() {
            // As many games at once as processes, so short games keep every process busy too;
            // the results do not depend on it (see arena::analysis).
            let analyser = &analyser;
            let mut reports = futures_util::stream::iter(pending.iter())
                .map(|game| async move {
                    match worker.claim(store, LeaseKind::Analysis, game.id) {
                        Ok(Some(lease)) => {
                            let report = analyser.analyse_game(game, Some(&lease)).await;
                            worker.release(store, LeaseKind::Analysis, game.id);
                            Ok(Some((game, report)))
                        }
                        Ok(None) => Ok(None),
                        Err(e) => Err(e),
                    }
                })
                .buffer_unordered(processes.max(1));
            let mut held_elsewhere = false;
            while let Some(claimed) = reports.next().await {
                let Some((game, report)) = claimed? else {
                    held_elsewhere = true;
                    continue;
                };
                if let Err(e) = &report
                    && e.is_lease_lost()
                {
                    eprintln!(
                        "game {} of `{}`: {e}; its new holder finishes the analysis",
                        game.index, t.name
                    );
                    held_elsewhere = true;
                    continue;
                }
                let report = report.with_context(|| {
                    format!("cannot analyse game {} of `{}`", game.index, t.name)
                })?;
                done += 1;
                eprintln!(
                    "[{done}/{total}] game {} {} vs {}: {} plies, {} analysed now, {} positions searched, {} from the cache",
                    game.index,
                    game.white,
                    game.black,
                    report.plies,
                    report.analysed,
                    report.searched,
                    report.cached
                );
            }
            drop(reports);
            if !held_elsewhere {
                break;
            }
            tokio::time::sleep(worker.poll_interval()).await;
            pending = analyser.pending(t.id)?;
            if !pending.is_empty() && waiting_shown != Some(pending.len()) {
                waiting_shown = Some(pending.len());
                eprintln!(
                    "{}: {} game(s) left, being analysed by other workers",
                    t.name,
                    pending.len()
                );
            }
        }
        let table = leaderboard::analysis_table(store, t.id)?
            .map_or_else(|| "no analysed plies\n".to_owned(), |t| t.to_text());
        write_stdout(&format!("{}\n{table}", t.name))?;
    }
    Ok(0)
}
