//! `arena export`: write stored games out (`arena export pgn`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use arena::export;
use clap::Subcommand;

use super::common::{open_existing, select, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    what: ExportCommand,
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

pub(super) fn run(args: Args) -> Result<u8> {
    let ExportCommand::Pgn {
        db,
        out,
        tournament,
    } = args.what;
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
