//! The command line: `arena run`, `arena check`, `arena export pgn`, `arena leaderboard`.
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

use crate::{
    export,
    lua::Generation,
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
    /// Print the standings of a stored tournament.
    Leaderboard {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The tournament (default: every tournament in the store).
        #[arg(long)]
        tournament: Option<String>,
    },
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
        Command::Leaderboard { db, tournament } => {
            let store = open_existing(&db)?;
            for t in select(&store, tournament.as_deref())? {
                let rows = store.standings(t.id)?;
                write_stdout(&format!("{}\n{}", t.name, report::standings_table(&rows)))?;
            }
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
    write_stdout(&report::standings_table(&rows))?;
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

fn check(script: &Path) -> u8 {
    match Generation::load(script, 1) {
        Ok(g) => {
            println!(
                "{}: ok ({} players, format {}, scripts {})",
                script.display(),
                g.spec.players.len(),
                g.format_module,
                g.hash
            );
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
