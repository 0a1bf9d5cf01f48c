//! `arena eval`: run (or resume) a fine-grained evaluation script, then print a table per task.

use std::path::PathBuf;

use anyhow::Result;
use arena::{eval, lua::LuaHost, report};

use super::common::{default_db, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The evaluation script (`return arena.evaluation { ... }`).
    script: PathBuf,
    /// The SQLite store (default: the script's name with `.db`, in the current folder).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Items answered at once (default: the script's `concurrency`, else 4).
    #[arg(long)]
    concurrency: Option<usize>,
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        script,
        db,
        concurrency,
    } = args;
    let db = db.unwrap_or_else(|| default_db(&script));
    let options = eval::run::EvalOptions {
        script,
        db,
        concurrency,
    };
    let summary = match eval::run::run(options, &LuaHost).await {
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
