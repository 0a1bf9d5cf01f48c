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
        /// Annotate the moves: `[%eval]` and NAGs from the engine analysis, `[%emt]` (each
        /// move's time), the protocol failures of each ply, and the ECO, Opening, TimeControl and
        /// Annotator tags.
        #[arg(long)]
        annotate: bool,
        /// With --annotate: add the model's replies (and reasoning texts) to each move's comment.
        #[arg(long, requires = "annotate")]
        reasoning: bool,
    },
}

pub(super) fn run(args: Args) -> Result<u8> {
    let ExportCommand::Pgn {
        db,
        out,
        tournament,
        annotate,
        reasoning,
    } = args.what;
    let store = open_existing(&db)?;
    let tournaments = select(&store, tournament.as_deref())?;
    let text = export::pgn_with(
        &store,
        &tournaments,
        export::PgnOptions {
            annotate,
            reasoning,
        },
    )?;
    match out {
        Some(path) => std::fs::write(&path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?,
        None => write_stdout(&text)?,
    }
    Ok(0)
}
