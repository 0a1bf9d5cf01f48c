//! `arena import chessarena DIR` and `arena import llm-chess DIR`: the anchors' own game records
//! into a store.

use std::path::{Path, PathBuf};

use anyhow::Result;
use arena::{
    import::{self, Report, SkipKind},
    store::Store,
};
use clap::Subcommand;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    source: Source,
}

#[derive(Debug, Subcommand)]
enum Source {
    /// ChessArena's `simulation_record` tree (`*_results.json`, `simulation_summary.json`).
    Chessarena(Target),
    /// LLM Chess's `_logs` tree (per-game JSON logs and `_run.json`).
    LlmChess(Target),
}

#[derive(Debug, clap::Args)]
struct Target {
    /// The folder to import (searched recursively).
    dir: PathBuf,
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`; created if missing).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The tournament to import into (default: `chessarena:FOLDER` or `llm_chess:FOLDER`).
    #[arg(long)]
    tournament: Option<String>,
}

/// `chessarena::import` or `llm_chess::import`.
type Importer = fn(&Store, &Path, Option<&str>) -> Result<Report, import::ImportError>;

/// Exit code 1 when a record was broken (and skipped); other kinds of files are listed too.
pub(super) fn run(args: Args) -> Result<u8> {
    let (target, importer): (&Target, Importer) = match &args.source {
        Source::Chessarena(t) => (t, import::chessarena::import),
        Source::LlmChess(t) => (t, import::llm_chess::import),
    };
    let store = Store::open(&target.db)?;
    let report: Report = importer(&store, &target.dir, target.tournament.as_deref())?;
    println!(
        "imported {} game(s) into tournament `{}` ({} already there{})",
        report.imported,
        report.tournament,
        report.already,
        if report.completed > 0 {
            format!(
                ", {} completed after an interrupted import",
                report.completed
            )
        } else {
            String::new()
        }
    );
    for note in &report.notes {
        println!("note: {note}");
    }
    for skip in &report.skipped {
        match skip.kind {
            SkipKind::Invalid => eprintln!("skipped (invalid) {skip}"),
            SkipKind::NotAGame => println!("skipped {skip}"),
        }
    }
    Ok(u8::from(report.has_invalid()))
}
