//! `arena rescore`: score a stored evaluation run again from its stored replies, without a call.

use std::path::PathBuf;

use anyhow::Result;
use arena::{eval, lua::LuaHost, report};

use super::common::{open_existing, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
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
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        db,
        run,
        parser,
        scoring,
        name,
        format,
    } = args;
    let store = open_existing(&db)?;
    let options = eval::run::RescoreOptions {
        parser,
        scoring,
        name,
    };
    let summary = eval::run::rescore(&store, &run, &options, &LuaHost).await?;
    eprintln!("re-scored `{run}` as `{}`", summary.run);
    for u in &summary.unreplayable {
        eprintln!("  unreplayable: {u}");
    }
    write_stdout(&report::render(&summary.tables, format))?;
    Ok(0)
}
