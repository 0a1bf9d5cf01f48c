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
    /// Send the models' calls through their providers' batch APIs (OpenAI Batch API,
    /// Anthropic Message Batches: half price, answers within a day); calls a batch did not
    /// answer are then asked one by one. Resumable: a killed run polls the same batches again.
    #[arg(long)]
    batch: bool,
    /// Seconds between two polls of a running batch (with `--batch`).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 30.0,
        requires = "batch"
    )]
    batch_poll: f64,
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        script,
        db,
        concurrency,
        batch,
        batch_poll,
    } = args;
    let db = db.unwrap_or_else(|| default_db(&script));
    let options = eval::run::EvalOptions {
        script,
        db: db.clone(),
        concurrency,
        batch: batch.then(|| eval::batch::BatchOptions {
            poll: std::time::Duration::from_secs_f64(batch_poll.max(0.01)),
        }),
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
