//! `arena eval`: run (or resume) a fine-grained evaluation script, then print a table per task.

use std::path::PathBuf;

use anyhow::Result;
use arena::{
    eval,
    lua::LuaHost,
    report::{self, html::Selection},
    store::Store,
};

use super::{
    common::{default_db, write_stdout},
    report as html_report,
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The evaluation script (`return arena.evaluation { ... }`).
    script: PathBuf,
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`; default: the script's
    /// name with `.db`, in the current folder).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
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
        db: db.clone(),
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
    // The run's report beside the store; a failure is reported, never fatal.
    let out = html_report::default_out(&db);
    let written = Store::open_read_only(&db)
        .map_err(anyhow::Error::from)
        .and_then(|store| {
            let selection = Selection {
                tournaments: Vec::new(),
                format_tables: Default::default(),
                experiments: Default::default(),
                eval_runs: store
                    .eval_runs()?
                    .into_iter()
                    .filter(|r| r.name == summary.run)
                    .collect(),
            };
            html_report::write(&store, &selection, &out)
        });
    match written {
        Ok(_) => println!("report: {}", out.display()),
        Err(e) => eprintln!("warning: the HTML report was not written: {e:#}"),
    }
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
