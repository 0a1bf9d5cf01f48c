//! `arena analyze`: engine analysis of stored finished games (resumable), then per-player quality.

use std::path::PathBuf;

use anyhow::{Context, Result};
use arena::{
    analysis::{Analyser, AnalysisLimits, AnalysisPool, AnalysisSettings, VisitOrder, WinModel},
    engine::EngineSpec,
    leaderboard,
    store::{Store, TournamentRow},
};
use futures_util::StreamExt;

use super::common::{open_existing, select, write_stdout};

/// `arena analyze`: defaults follow the papers (depth 20, 1 thread, top 3 moves).
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The SQLite store.
    #[arg(long)]
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
}

fn parse_win_model(name: &str) -> Result<WinModel, String> {
    WinModel::parse(name)
        .ok_or_else(|| format!("unknown win model `{name}` (chessarena or lichess)"))
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let store = open_existing(&args.db)?;
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
    // Shut the engines down whatever the analysis returned.
    let result = analyze_with(&store, &pool, settings, processes, &tournaments).await;
    pool.shutdown().await;
    result
}

async fn analyze_with(
    store: &Store,
    pool: &AnalysisPool,
    settings: AnalysisSettings,
    processes: usize,
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
        let pending = analyser.pending(t.id)?;
        eprintln!("{}: {} game(s) to analyse", t.name, pending.len());
        // As many games at once as processes, so short games keep every process busy too; the
        // results do not depend on it (see arena::analysis), and progress is printed in order.
        let analyser = &analyser;
        let mut reports = futures_util::stream::iter(pending.iter().enumerate())
            .map(|(n, game)| async move { (n, game, analyser.analyse_game(game).await) })
            .buffered(processes.max(1));
        while let Some((n, game, report)) = reports.next().await {
            let report = report
                .with_context(|| format!("cannot analyse game {} of `{}`", game.index, t.name))?;
            eprintln!(
                "[{}/{}] game {} {} vs {}: {} plies, {} analysed now, {} positions searched, {} from the cache",
                n + 1,
                pending.len(),
                game.index,
                game.white,
                game.black,
                report.plies,
                report.analysed,
                report.searched,
                report.cached
            );
        }
        let table = leaderboard::analysis_table(store, t.id)?
            .map_or_else(|| "no analysed plies\n".to_owned(), |t| t.to_text());
        write_stdout(&format!("{}\n{table}", t.name))?;
    }
    Ok(0)
}
