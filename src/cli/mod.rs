//! The command line: `arena run`, `arena check`, `arena export pgn`, `arena leaderboard`,
//! `arena analyze`, and the fine-grained evaluations: `arena eval`, `arena eval-report`,
//! `arena rescore`, `arena score-recorded`.
//!
//! Exit codes: 0 success; 1 the tournament finished but some games were set aside (they resume on
//! the next run); 2 a fatal error (bad script, unreachable player, unusable store).

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

use arena::{
    analysis::{Analyser, AnalysisLimits, AnalysisPool, AnalysisSettings, WinModel},
    engine::EngineSpec,
    eval, export, leaderboard,
    lua::Generation,
    rating::glicko::Compat,
    report,
    store::{Store, TournamentRow},
    tournament::{self, RunOptions},
};

/// A chess arena for language models: tournaments scripted in Lua, real engines, real models.
#[derive(Debug, Parser)]
#[command(name = "arena", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run (or resume) the tournament a Lua script describes.
    Run {
        /// The tournament script.
        script: PathBuf,
        /// The SQLite store (default: the script's name with `.db`, in the current folder).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Games played at once (default: the script's `concurrency`, else 2).
        #[arg(long)]
        concurrency: Option<usize>,
        /// Do not reload scripts when they change.
        #[arg(long)]
        no_watch: bool,
    },
    /// Check a tournament script without playing: every problem as `file:line: message`.
    Check {
        /// The tournament script.
        script: PathBuf,
    },
    /// Write stored games out.
    Export {
        #[command(subcommand)]
        what: ExportCommand,
    },
    /// Print the ratings and standings of a stored tournament.
    Leaderboard {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The tournament (default: every tournament in the store).
        #[arg(long)]
        tournament: Option<String>,
        /// Also show players whose rating deviation is above `--max-rd` (marked provisional).
        #[arg(long)]
        all: bool,
        /// The rating deviation above which a rating is provisional.
        #[arg(long, default_value_t = 100.0)]
        max_rd: f64,
        /// Rate with ChessArena's published update rule (with its bug), to compare with their numbers.
        #[arg(long)]
        chessarena_compat: bool,
        /// Add the attempt statistics and the terminations of each player.
        #[arg(long)]
        stats: bool,
        /// Add one row per game (result, termination, length, each side's attempts).
        #[arg(long)]
        games: bool,
        /// Also fit a ladder: maximum-likelihood Elo of every player with this anchor pinned,
        /// as `NAME=RATING` (e.g. `sf-1350=1350`).
        #[arg(long, value_name = "ANCHOR=RATING")]
        ladder: Option<leaderboard::ladder::Anchor>,
        /// Drawn games the ladder fit adds to every pair that met (0: the pure MLE, which has no
        /// finite rating for a player who won or lost every game).
        #[arg(long, default_value_t = 1.0)]
        virtual_draws: f64,
        /// Add the LLM Chess table (Win/Loss, game duration, wrong actions, tokens, cost, Elo
        /// against anchors); shown anyway when a player plays the agentic mode.
        #[arg(long)]
        llm_chess: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = report::Format::Text)]
        format: report::Format,
    },
    /// Analyse stored finished games with a chess engine (resumable), then print per-player quality.
    Analyze(AnalyzeArgs),
    /// Run (or resume) a fine-grained evaluation script, then print a table per task.
    Eval {
        /// The evaluation script (`return arena.evaluation { ... }`).
        script: PathBuf,
        /// The SQLite store (default: the script's name with `.db`, in the current folder).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Items answered at once (default: the script's `concurrency`, else 4).
        #[arg(long)]
        concurrency: Option<usize>,
    },
    /// Print the tables of stored evaluation runs.
    EvalReport {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The run (default: every run in the store).
        #[arg(long)]
        run: Option<String>,
        /// Also list every item: its parsed answer and its score.
        #[arg(long)]
        items: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = report::Format::Text)]
        format: report::Format,
    },
    /// Score a stored evaluation run again from its stored replies, with another parser or
    /// scoring, into a new run. Calls no model.
    Rescore {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The stored run.
        #[arg(long)]
        run: String,
        /// The `parser` option for every task script (`chessarena`, `tolerant`, ...).
        #[arg(long)]
        parser: Option<String>,
        /// The basic-understanding scoring (`strict` or `chessarena`).
        #[arg(long)]
        scoring: Option<String>,
        /// The new run's name (default: the old name with the changes appended).
        #[arg(long = "as")]
        name: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = report::Format::Text)]
        format: report::Format,
    },
    /// Score predictions recorded by another program (ChessArena's basic-understanding files).
    ScoreRecorded {
        /// The task the predictions answer (only `basic_understanding` for now).
        #[arg(long)]
        task: String,
        /// The JSONL prediction file.
        #[arg(long)]
        predictions: PathBuf,
        /// `strict` or `chessarena`.
        #[arg(long, default_value = "chessarena")]
        scoring: String,
        /// How the answer is read: `chessarena` (last ```json block) or `tolerant`.
        #[arg(long, default_value = "chessarena")]
        parser: String,
        /// Questions the run asked; missing lines count as replies without an answer.
        #[arg(long)]
        total: Option<usize>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = report::Format::Text)]
        format: report::Format,
    },
}

/// `arena analyze`: defaults follow the papers (depth 20, 1 thread, top 3 moves).
#[derive(Debug, clap::Args)]
struct AnalyzeArgs {
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
    /// Engine hash per process, in MB.
    #[arg(long, default_value_t = 16)]
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

#[derive(Debug, Subcommand)]
enum ExportCommand {
    /// Every game as PGN.
    Pgn {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The tournament (default: every tournament in the store).
        #[arg(long)]
        tournament: Option<String>,
    },
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run {
            script,
            db,
            concurrency,
            no_watch,
        } => run(script, db, concurrency, !no_watch).await,
        Command::Check { script } => Ok(check(&script)),
        Command::Export {
            what:
                ExportCommand::Pgn {
                    db,
                    out,
                    tournament,
                },
        } => {
            let store = open_existing(&db)?;
            let tournaments = select(&store, tournament.as_deref())?;
            let text = export::pgn(&store, &tournaments)?;
            match out {
                Some(path) => std::fs::write(&path, text)
                    .with_context(|| format!("cannot write `{}`", path.display()))?,
                None => write_stdout(&text)?,
            }
            Ok(0)
        }
        Command::Analyze(args) => analyze(args).await,
        Command::Eval {
            script,
            db,
            concurrency,
        } => evaluate(script, db, concurrency).await,
        Command::EvalReport {
            db,
            run,
            items,
            format,
        } => {
            let store = open_existing(&db)?;
            let names = match run {
                Some(name) => vec![name],
                None => store.eval_runs()?.into_iter().map(|r| r.name).collect(),
            };
            let mut tables = Vec::new();
            for name in names {
                tables.extend(eval::run::report(&store, &name, items)?);
            }
            write_stdout(&report::render(&tables, format))?;
            Ok(0)
        }
        Command::Rescore {
            db,
            run,
            parser,
            scoring,
            name,
            format,
        } => {
            let store = open_existing(&db)?;
            let options = eval::run::RescoreOptions {
                parser,
                scoring,
                name,
            };
            let summary = eval::run::rescore(&store, &run, &options).await?;
            eprintln!("re-scored `{run}` as `{}`", summary.run);
            for u in &summary.unreplayable {
                eprintln!("  unreplayable: {u}");
            }
            write_stdout(&report::render(&summary.tables, format))?;
            Ok(0)
        }
        Command::ScoreRecorded {
            task,
            predictions,
            scoring,
            parser,
            total,
            format,
        } => {
            if task != "basic_understanding" {
                bail!(
                    "recorded predictions can be scored for basic_understanding only, not `{task}`"
                );
            }
            let scoring = eval::basic::Scoring::from_name(&scoring)
                .with_context(|| format!("unknown scoring `{scoring}` (strict or chessarena)"))?;
            let parse = match parser.as_str() {
                "chessarena" => eval::basic::ReplyParse::LastJsonBlock,
                "tolerant" => eval::basic::ReplyParse::Tolerant,
                other => bail!("unknown parser `{other}` (chessarena or tolerant)"),
            };
            let metrics =
                eval::recorded::score_basic_predictions(&predictions, parse, scoring, total)?;
            let name = predictions.file_stem().map_or_else(
                || "predictions".into(),
                |s| s.to_string_lossy().into_owned(),
            );
            let table = eval::recorded::basic_table(&name, &metrics);
            match format {
                // Full precision, keyed as ChessArena's metrics files, for comparison.
                report::Format::Json => write_stdout(&format!(
                    "{}\n",
                    serde_json::json!({
                        "piece_match_rate": metrics.piece_match_rate,
                        "precision": metrics.precision,
                        "recall": metrics.recall,
                        "f1": metrics.f1,
                        "total_num": metrics.total,
                        "counted": metrics.counted,
                    })
                ))?,
                other => write_stdout(&report::render(&[table], other))?,
            }
            Ok(0)
        }
        Command::Leaderboard {
            db,
            tournament,
            all,
            max_rd,
            chessarena_compat,
            stats,
            games,
            ladder,
            virtual_draws,
            llm_chess,
            format,
        } => {
            let store = open_existing(&db)?;
            let options = leaderboard::Options {
                compat: if chessarena_compat {
                    Compat::ChessArena
                } else {
                    Compat::Correct
                },
                max_rd,
                show_all: all,
                stats,
                games,
                llm_chess,
            };
            let mut tables = Vec::new();
            for t in select(&store, tournament.as_deref())? {
                tables.extend(leaderboard::tables(&store, &t, options)?);
                if let Some(anchor) = &ladder {
                    let mut table = leaderboard::ladder::ladder_table(
                        &store.games(t.id)?,
                        anchor,
                        virtual_draws,
                    )
                    .with_context(|| format!("ladder of tournament `{}`", t.name))?;
                    table.title = format!("{} · {}", t.name, table.title);
                    tables.push(table);
                }
            }
            write_stdout(&report::render(&tables, format))?;
            Ok(0)
        }
    }
}

async fn run(
    script: PathBuf,
    db: Option<PathBuf>,
    concurrency: Option<usize>,
    watch: bool,
) -> Result<u8> {
    let db = db.unwrap_or_else(|| default_db(&script));
    let options = RunOptions {
        script,
        db: db.clone(),
        concurrency,
        watch,
    };
    let summary = match tournament::run(options).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    let store = Store::open(&db)?;
    let rows = store.standings(summary.tournament)?;
    write_stdout(&leaderboard::standings_table(&rows).to_text())?;
    if let Some(report) = summary.analysis {
        if let Some(table) = leaderboard::analysis_table(&store, summary.tournament)? {
            write_stdout(&format!("\n{}", table.to_text()))?;
        }
        if report.unavailable || report.failed > 0 {
            eprintln!(
                "some games are not analysed (see the log above); the next run, or `arena analyze`, analyses them"
            );
        }
    }
    if summary.stopped {
        eprintln!("stopped before the end: run the same command again to play the remaining games");
        return Ok(1);
    }
    if summary.errored.is_empty() {
        Ok(0)
    } else {
        eprintln!(
            "{} game(s) were set aside and resume when you run the same command again:",
            summary.errored.len()
        );
        for (index, reason) in &summary.errored {
            eprintln!("  game {index}: {reason}");
        }
        Ok(1)
    }
}

async fn evaluate(script: PathBuf, db: Option<PathBuf>, concurrency: Option<usize>) -> Result<u8> {
    let db = db.unwrap_or_else(|| default_db(&script));
    let options = eval::run::EvalOptions {
        script,
        db,
        concurrency,
    };
    let summary = match eval::run::run(options).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    for w in &summary.warnings {
        eprintln!("warning: skipped a data row: {w}");
    }
    write_stdout(&report::render(&summary.tables, report::Format::Text))?;
    if summary.open.is_empty() {
        Ok(0)
    } else {
        eprintln!(
            "{} item answer(s) are still open and resume when you run the same command again:",
            summary.open.len()
        );
        for reason in summary.open.iter().take(20) {
            eprintln!("  {reason}");
        }
        Ok(1)
    }
}

async fn analyze(args: AnalyzeArgs) -> Result<u8> {
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
    };
    let processes = args.processes.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let spec = EngineSpec::new("analysis", args.engine)
        .option("Threads", args.threads.to_string())
        .option("Hash", args.hash.to_string());
    let pool = AnalysisPool::new(spec, processes);
    let result = analyze_with(&store, &pool, settings, &tournaments).await;
    pool.shutdown().await;
    result
}

async fn analyze_with(
    store: &Store,
    pool: &AnalysisPool,
    settings: AnalysisSettings,
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
        for (n, game) in pending.iter().enumerate() {
            let report = analyser
                .analyse_game(game)
                .await
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

fn check(script: &Path) -> u8 {
    // An evaluation script (`arena.evaluation{}`) is checked as one; anything else as a tournament.
    let is_evaluation = std::fs::read_to_string(script)
        .map(|text| text.contains("arena.evaluation"))
        .unwrap_or(false);
    let result = if is_evaluation {
        arena::lua::EvalScripts::load(script).map(|e| {
            format!(
                "{}: ok (evaluation: {} task(s), {} player(s))",
                script.display(),
                e.spec.tasks.len(),
                e.spec.players.len()
            )
        })
    } else {
        Generation::load(script, 1).map(|g| {
            format!(
                "{}: ok ({} players, format {}, scripts {})",
                script.display(),
                g.spec.players.len(),
                g.format_module,
                g.hash
            )
        })
    };
    match result {
        Ok(summary) => {
            println!("{summary}");
            0
        }
        Err(errors) => {
            eprintln!("{errors}");
            2
        }
    }
}

/// `tournaments/quickstart.lua` stores into `quickstart.db`.
fn default_db(script: &Path) -> PathBuf {
    let stem = script
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "arena".into());
    PathBuf::from(format!("{stem}.db"))
}

fn open_existing(db: &Path) -> Result<Store> {
    if !db.exists() {
        bail!("no store at `{}`", db.display());
    }
    Ok(Store::open(db)?)
}

fn select(store: &Store, name: Option<&str>) -> Result<Vec<TournamentRow>> {
    match name {
        Some(name) => match store.find_tournament(name)? {
            Some(t) => Ok(vec![t]),
            None => bail!("the store has no tournament named `{name}`"),
        },
        None => Ok(store.tournaments()?),
    }
}

/// Writes to standard output; a closed pipe (`arena export pgn | head`) is not an error.
fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
