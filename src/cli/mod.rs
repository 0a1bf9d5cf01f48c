//! The command line: `arena run`, `arena check`, `arena prompt`, `arena export pgn|sft|positions|jsonl`,
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
//! - 3: `arena run` finished with nothing left to do, but compared no chess: an experiment's arm
//!   or the whole tournament whose games mostly ended before a model had a move played (see
//!   `tournament::degenerate`); the `no chess compared` table names the causes and fixes.
//! - 4: `arena run` refused a finished tournament whose scripts changed since its last game
//!   started (its result answers the old scripts): a new name, or `--new-version`, runs it.
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
mod prompt;
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
    /// Print the messages a player would be sent at a position, without calling any model.
    Prompt(prompt::Args),
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

/// Runs one command: `Ok` carries its exit code (0, 1 or 3, or 2 for a failure it reported itself);
/// an `Err` is fatal and exits with 2.
async fn dispatch(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Check(args) => Ok(check::run(&args).await),
        Command::Prompt(args) => prompt::run(&args),
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::CommandFactory;

    /// Where `command` (named by its path from `arena`) and everything under it leave a user
    /// without words: a subcommand with no help line, an argument with no help text, a value of
    /// a value list with no help of its own. clap's own `help` and `version` are left out.
    fn undocumented(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
        for argument in command.get_arguments() {
            let id = argument.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let name = argument
                .get_long()
                .map(|long| format!("--{long}"))
                .unwrap_or_else(|| format!("<{}>", id.to_uppercase()));
            if argument.get_help().is_none() && argument.get_long_help().is_none() {
                missing.push(format!("`{path} {name}` has no help text"));
            }
            let values = if argument.get_action().takes_values() {
                argument.get_possible_values()
            } else {
                Vec::new()
            };
            for value in values {
                if value.get_help().is_none() && !value.is_hide_set() {
                    missing.push(format!(
                        "value `{}` of `{path} {name}` has no help text",
                        value.get_name()
                    ));
                }
            }
        }
        for sub in command.get_subcommands() {
            let sub_path = format!("{path} {}", sub.get_name());
            if sub.get_about().is_none() && sub.get_long_about().is_none() {
                missing.push(format!("`{sub_path}` has no help line"));
            }
            undocumented(sub, &sub_path, missing);
        }
    }

    /// Every command, argument and value of the command line says what it is for, so that the
    /// generated page below documents all of them: a `///` comment is missing otherwise.
    #[test]
    fn every_command_and_argument_has_help_text() {
        let mut command = super::Cli::command();
        // Built as at run time, so that flags take no values and clap's own help is there.
        command.build();
        assert!(command.get_about().is_some(), "`arena` has no help line");
        let mut missing = Vec::new();
        undocumented(&command, "arena", &mut missing);
        assert!(
            missing.is_empty(),
            "write a `///` doc comment (units, default, what it does) for each:\n{}",
            missing.join("\n")
        );
    }

    /// The book's command-line page (`docs/src/reference/cli.md`) is clap-markdown's rendering of
    /// [`super::Cli`]: a new command, flag or help text fails this test until
    /// `ARENA_BLESS=1 cargo test --bin arena cli_reference` writes the page again.
    #[test]
    fn cli_reference_is_the_rendering_of_the_command_line() {
        let options = clap_markdown::MarkdownOptions::new()
            .title("The command line".into())
            .show_footer(false);
        let rendered = format!(
            "{}\n{}",
            "<!-- Generated from the clap definitions of src/cli/ by the unit test \
             cli_reference_is_the_rendering_of_the_command_line: run \
             `ARENA_BLESS=1 cargo test --bin arena cli_reference` after changing a command. -->",
            clap_markdown::help_markdown_custom::<super::Cli>(&options)
        );
        let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference/cli.md");
        if std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(&page, &rendered).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&page).unwrap_or_default();
        assert!(
            committed == rendered,
            "docs/src/reference/cli.md is not the rendering of the command line; run \
             `ARENA_BLESS=1 cargo test --bin arena cli_reference` and review the diff"
        );
    }
}
