//! `arena eval-report`: the tables of stored evaluation runs.

use std::path::PathBuf;

use anyhow::Result;
use arena::{eval, report};

use super::common::{open_existing, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
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
}

pub(super) fn run(args: Args) -> Result<u8> {
    let Args {
        db,
        run,
        items,
        format,
    } = args;
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
