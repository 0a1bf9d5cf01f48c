//! `arena run`: play (or resume) a tournament, then print its standings.

use std::{path::PathBuf, sync::Arc};

use anyhow::Result;
use arena::{
    leaderboard,
    lua::LuaHost,
    store::Store,
    tournament::{self, RunOptions, Stop},
};

use super::common::{default_db, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
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
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        script,
        db,
        concurrency,
        no_watch,
    } = args;
    let db = db.unwrap_or_else(|| default_db(&script));
    let options = RunOptions {
        script,
        db: db.clone(),
        concurrency,
        watch: !no_watch,
    };
    let summary = match tournament::run(options, Arc::new(LuaHost)).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(2);
        }
    };
    if summary.stopped == Some(Stop::Aborted) {
        eprintln!("quit before the end: run the same command again to resume the games");
        return Ok(130);
    }
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
    if summary.stopped == Some(Stop::Interrupted) {
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
        for (index, error) in &summary.errored {
            eprintln!("  game {index}: {error} ({} error)", error.kind().as_str());
        }
        Ok(1)
    }
}
