//! The command line: `arena run`, `arena check`, `arena export pgn|sft|positions|jsonl`,
//! `arena import`, `arena leaderboard`, `arena migrate`, `arena analyze`, `arena report`, and
//! the fine-grained evaluations: `arena eval`, `arena eval-report`,
//! `arena rescore`, `arena score-recorded`, and `arena serve`. One file per command, each with its arguments and
//! its `run`; `common` holds what they share.
//!
//! Exit codes, decided here and nowhere in the library:
//! - 0: success.
//! - 1: the run finished but left work for the next one: games set aside (`arena run`), a
//!   tournament stopped (Ctrl-C) before the end, evaluation items still open (`arena eval`).
//!   Running the same command again resumes them. `arena import`: a broken record was skipped.
//! - 130: a second Ctrl-C quit `arena run` at once; the next run resumes from the last stored ply.
//! - 2: a fatal error (bad script, unreachable player, unusable store), or bad arguments (clap's
//!   own code); `arena migrate`: a table of the copy does not match its source.

mod analyze;
mod calibrate;
mod check;
mod common;
mod eval;
mod eval_report;
mod export;
mod import;
mod init;
mod leaderboard;
mod migrate;
mod report;
mod rescore;
mod run;
mod score_recorded;
mod serve;

use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// A chess arena for language models: tournaments scripted in Lua, real engines, real models.
#[derive(Debug, Parser)]
#[command(name = "arena", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

// The doc comment of each variant is the command's help line; its arguments live in its file.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run (or resume) the tournament a Lua script describes.
    Run(run::Args),
    /// Check a tournament script without playing: every problem as `file:line: message`.
    Check(check::Args),
    /// Write a first tournament that runs as it is (and, with --eject, a built-in mode to edit).
    Init(init::Args),
    /// Write stored games out.
    Export(export::Args),
    /// Import the anchors' own game records (ChessArena, LLM Chess) into a store; idempotent.
    Import(import::Args),
    /// Print the ratings and standings of a stored tournament.
    Leaderboard(leaderboard::Args),
    /// Copy a whole store into a new or empty one (SQLite file or `postgres://` URL, either way)
    /// and check the copy by row counts and checksums.
    Migrate(migrate::Args),
    /// Write one self-contained HTML report of a store: overview, games and a viewer per game.
    Report(report::Args),
    /// Fit the engine ladder from a calibration run (tournaments/calibrate.lua) and write its
    /// games and calibration file (data/ladder/).
    Calibrate(calibrate::Args),
    /// Analyse stored finished games with a chess engine (resumable), then print per-player quality.
    Analyze(analyze::Args),
    /// Run (or resume) a fine-grained evaluation script, then print a table per task.
    Eval(eval::Args),
    /// Serve a store in the browser: tournaments, leaderboards, games and the viewer, live.
    Serve(serve::Args),
    /// Print the tables of stored evaluation runs.
    EvalReport(eval_report::Args),
    /// Score a stored evaluation run again from its stored replies, with another parser or
    /// scoring, into a new run. Calls no model.
    Rescore(rescore::Args),
    /// Score predictions recorded by another program (ChessArena's basic-understanding files).
    ScoreRecorded(score_recorded::Args),
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

/// Runs one command: `Ok` carries its exit code (0 or 1, or 2 for a failure it reported itself);
/// an `Err` is fatal and exits with 2.
async fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Check(args) => Ok(check::run(&args).await),
        Command::Init(args) => init::run(&args).await,
        Command::Export(args) => export::run(args),
        Command::Import(args) => import::run(args),
        Command::Leaderboard(args) => leaderboard::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Report(args) => report::run(args),
        Command::Analyze(args) => analyze::run(args).await,
        Command::Calibrate(args) => calibrate::run(args).await,
        Command::Eval(args) => eval::run(args).await,
        Command::EvalReport(args) => eval_report::run(args),
        Command::Rescore(args) => rescore::run(args).await,
        Command::ScoreRecorded(args) => score_recorded::run(args),
        Command::Serve(args) => serve::run(args).await,
    }
}
