//! `arena run`: play (or resume) a tournament, then print its standings.

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use anyhow::Result;
use arena::{
    leaderboard,
    lua::LuaHost,
    report::html::Selection,
    store::CHARS_PER_TOKEN,
    store::Store,
    tournament::{
        self, GameError, RunOptions, Stop,
        degenerate::{ChessCompared, NO_CHESS_VERDICT},
        dryrun::{BudgetEstimate, DryRun, Range, TOKENS_PER_MESSAGE},
    },
};

use super::{
    common::{WorkerArgs, default_db, format_tables, versions_table, write_stdout},
    report,
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The tournament script.
    script: PathBuf,
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`; default: the script's
    /// name with `.db`, in the current folder).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: Option<PathBuf>,
    /// Games played at once (default: the script's `concurrency`, else 2).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Do not reload scripts when they change.
    #[arg(long)]
    no_watch: bool,
    /// Also refresh the HTML report during the run, every N finished games (default 5); it is
    /// written at the end in any case.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "5")]
    report: Option<u32>,
    /// Where the HTML report goes (default: the store's name with `.html`).
    #[arg(long, value_name = "FILE")]
    report_out: Option<PathBuf>,
    /// Play nothing and call nothing: print the games, calls, tokens and cost the run would
    /// take, per player and in all (the store, if it exists, lends earlier calls' lengths).
    #[arg(long)]
    dry_run: bool,
    /// Start a new version of the tournament in the same store (stored as `NAME@v2`, then
    /// `@v3`, ...), its games played afresh under the scripts as they are now, instead of
    /// resuming the newest version. Needed to run a finished tournament again after its scripts
    /// changed; `arena leaderboard` shows an experiment's versions side by side.
    #[arg(long)]
    new_version: bool,
    #[command(flatten)]
    workers: WorkerArgs,
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let Args {
        script,
        db,
        concurrency,
        no_watch,
        report: refresh_every,
        report_out,
        dry_run,
        new_version,
        workers,
    } = args;
    let db = db.unwrap_or_else(|| default_db(&script));
    if dry_run {
        return match tournament::dryrun::dry_run(&script, Some(&db), Arc::new(LuaHost)) {
            Ok(report) => {
                write_stdout(&dry_run_text(&report))?;
                Ok(0)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(2)
            }
        };
    }
    let report_out = report_out.unwrap_or_else(|| report::default_out(&db));
    let refresher = refresh_every.map(|every| {
        tokio::spawn(refresh(
            db.clone(),
            script.display().to_string(),
            report_out.clone(),
            every.max(1),
        ))
    });
    let options = RunOptions {
        script,
        db: db.clone(),
        concurrency,
        watch: !no_watch,
        worker: workers.worker(),
        new_version,
    };
    let result = tournament::run(options, Arc::new(LuaHost)).await;
    if let Some(task) = refresher {
        task.abort();
    }
    let summary = match result {
        Ok(s) => s,
        Err(e @ tournament::TournamentError::ScriptsChanged(_)) => {
            eprintln!("error: {e}");
            return Ok(SCRIPTS_CHANGED);
        }
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
    let mut arm_without_chess = false;
    if let Some(t) = store
        .tournaments()?
        .into_iter()
        .find(|t| t.id == summary.tournament)
    {
        for table in format_tables(&store, &t) {
            arm_without_chess |= table.kind == "experiment" && has_no_chess_verdict(&table);
            write_stdout(&format!("\n{}", table.to_text()))?;
        }
        if let Some(table) = versions_table(&store, &t) {
            write_stdout(&format!("\n{}", table.to_text()))?;
        }
    }
    let compared = ChessCompared::read(&store, summary.tournament)?;
    if let Some(table) = compared.table() {
        write_stdout(&format!("\n{}", table.to_text()))?;
    }
    let no_chess = arm_without_chess || compared.tournament_no_chess();
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
    write_report(&store, summary.tournament, &report_out);
    if !summary.budget_stops.is_empty() {
        for stop in &summary.budget_stops {
            let games: Vec<String> = stop.games.iter().map(u32::to_string).collect();
            eprintln!(
                "budget: {}: {} game(s) not started (game {}); raise `budget` and run the same command again to play them",
                stop.reached,
                stop.games.len(),
                games.join(", ")
            );
        }
        return Ok(1);
    }
    if summary.stopped == Some(Stop::Interrupted) {
        eprintln!("stopped before the end: run the same command again to play the remaining games");
        return Ok(1);
    }
    if !summary.lost.is_empty() {
        // Not a fault of this run: the games went on elsewhere.
        eprintln!(
            "{} game(s) were taken over by another worker while this one stalled past its lease; it stopped them and wrote nothing more:",
            summary.lost.len()
        );
        for (index, reason) in &summary.lost {
            eprintln!("  game {index}: {reason}");
        }
    }
    if !summary.voided.is_empty() {
        eprintln!(
            "{} game(s) ended void by a harness fault, count for nobody, and are played again when you run the same command again:",
            summary.voided.len()
        );
        for (index, reason) in &summary.voided {
            eprintln!("  game {index}: {reason}");
        }
    }
    if summary.errored.is_empty() {
        if !summary.voided.is_empty() {
            return Ok(1);
        }
        if no_chess {
            eprintln!(
                "no chess compared: most games ended without a move of a model player (see the \
                 `no chess compared` table for the causes and the likely fixes); exit code {NO_CHESS_EXIT}"
            );
            return Ok(NO_CHESS_EXIT);
        }
        Ok(0)
    } else {
        eprintln!(
            "{} game(s) were set aside and resume when you run the same command again:",
            summary.errored.len()
        );
        for line in set_aside_lines(&summary.errored) {
            eprintln!("  {line}");
        }
        Ok(1)
    }
}

/// The exit code of a run refused because the tournament is finished and its scripts changed
/// since (see `tournament::versions`).
const SCRIPTS_CHANGED: u8 = 4;

/// The exit code of a run that finished but compared no chess: an experiment's arm, or the whole
/// tournament, whose games mostly ended before a model had a move played (see
/// `tournament::degenerate`). Its verdicts and ratings measure no chess.
const NO_CHESS_EXIT: u8 = 3;

/// Whether an experiment's table has an arm with the verdict `no_chess`.
fn has_no_chess_verdict(table: &arena::table::Table) -> bool {
    let Some(verdict) = table.columns.iter().position(|c| c == "verdict") else {
        return false;
    };
    table.rows.iter().any(|row| {
        matches!(row.get(verdict), Some(arena::table::Cell::Text(v)) if v == NO_CHESS_VERDICT)
    })
}

/// Games listed by number before the rest of a group is only counted.
const GAMES_LISTED: usize = 8;

/// One line per distinct fault among the games set aside, in the order first met: its cause,
/// kind and players, then the games it set aside (a broken script line fails many games alike,
/// and one line per game would bury every other fault).
fn set_aside_lines(errored: &[(u32, GameError)]) -> Vec<String> {
    let mut groups: Vec<(&GameError, BTreeSet<&str>, Vec<u32>)> = Vec::new();
    for (index, error) in errored {
        let same = |(first, _, _): &&mut (&GameError, _, _)| {
            first.kind() == error.kind() && first.cause() == error.cause()
        };
        let group = match groups.iter_mut().find(same) {
            Some(group) => group,
            None => {
                groups.push((error, BTreeSet::new(), Vec::new()));
                groups.last_mut().expect("just pushed")
            }
        };
        group.1.extend(error.player());
        group.2.push(*index);
    }
    groups
        .into_iter()
        .map(|(error, players, games)| {
            let mut listed: Vec<String> = games
                .iter()
                .take(GAMES_LISTED)
                .map(u32::to_string)
                .collect();
            if games.len() > GAMES_LISTED {
                listed.push(format!("and {} more", games.len() - GAMES_LISTED));
            }
            let whose = match players.len() {
                0 => String::new(),
                1 => format!("player {}: ", quoted(&players)),
                _ => format!("players {}: ", quoted(&players)),
            };
            format!(
                "{}: {whose}{} ({} error)",
                match games.len() {
                    1 => format!("game {}", listed.join(", ")),
                    _ => format!("{} games ({})", games.len(), listed.join(", ")),
                },
                error.cause(),
                error.kind().as_str()
            )
        })
        .collect()
}

fn quoted(names: &BTreeSet<&str>) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Writes the tournament's report and prints its path; a failure is reported, never fatal (the
/// games are stored, and `arena report` can try again).
fn write_report(store: &Store, tournament: i64, out: &Path) {
    let written = store
        .tournaments()
        .map_err(anyhow::Error::from)
        .and_then(|all| {
            let selection = Selection {
                tournaments: all.into_iter().filter(|t| t.id == tournament).collect(),
                eval_runs: Vec::new(),
                ..Selection::default()
            };
            report::write(store, &selection, out)
        });
    match written {
        Ok(_) => println!("report: {}", out.display()),
        Err(e) => eprintln!("warning: the HTML report was not written: {e:#}"),
    }
}

/// Rewrites the report whenever `every` more games of the script's tournament have finished,
/// reading the store read-only beside the run.
async fn refresh(db: PathBuf, script: String, out: PathBuf, every: u32) {
    let mut reported = 0;
    loop {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (db, script, out) = (db.clone(), script.clone(), out.clone());
        let done = tokio::task::spawn_blocking(move || -> Option<u64> {
            let store = Store::open_read_only(&db).ok()?;
            let t = store
                .tournaments()
                .ok()?
                .into_iter()
                .rfind(|t| t.script_path == script)?;
            let finished = store.totals(t.id).ok()?.games_finished;
            if finished >= reported + u64::from(every) {
                let selection = Selection {
                    tournaments: vec![t],
                    eval_runs: Vec::new(),
                    ..Selection::default()
                };
                if let Err(e) = report::write(&store, &selection, &out) {
                    tracing::warn!("the HTML report was not refreshed: {e:#}");
                }
                return Some(finished);
            }
            None
        })
        .await;
        if let Ok(Some(finished)) = done {
            reported = finished;
        }
    }
}

/// The dry run's report: one line per player, then the total and how the figures were made.
fn dry_run_text(report: &DryRun) -> String {
    let range = |r: Range| format!("{:.0}–{:.0}", r.low, r.high);
    let usd = |r: Option<Range>| match r {
        Some(r) => format!("${:.4}–${:.4}", r.low, r.high),
        None => "no price".to_string(),
    };
    let mut out = format!(
        "dry run: nothing was played or called\n{} game(s) scheduled, {} plies each at most\n",
        report.games, report.plies_per_game
    );
    if let Some(note) = &report.incremental {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(&format!(
        "\n{:<24} {:>7} {:>13} {:>12} {:>17} {:>17} {:>23}\n",
        "player", "games", "calls", "prompt/call", "prompt tokens", "completion tok.", "cost (USD)"
    ));
    for p in &report.players {
        let model = p.kind == "llm" || p.kind == "moa";
        let dash = |s: String| if model { s } else { "-".to_string() };
        out.push_str(&format!(
            "{:<24} {:>7} {:>13} {:>12} {:>17} {:>17} {:>23}\n",
            p.name,
            format!("{:.0}", p.games),
            dash(range(p.calls)),
            dash(format!("{:.0}", p.prompt_per_call)),
            dash(range(p.prompt_tokens)),
            dash(range(p.completion_tokens)),
            dash(usd(p.usd)),
        ));
    }
    out.push_str(&format!(
        "{:<24} {:>7} {:>13} {:>12} {:>17} {:>17} {:>23}\n",
        "total",
        report.games,
        "",
        "",
        format!("tokens {}", range(report.tokens)),
        "",
        usd(report.usd)
    ));
    out.push_str(&format!(
        "\nlow: one call per move; high: every attempt of every move used. Games at full length. \
         Prompt tokens: the play mode's prompts at every ply of a sample game, {CHARS_PER_TOKEN} characters per token + {TOKENS_PER_MESSAGE} per message.\n"
    ));
    for p in report
        .players
        .iter()
        .filter(|p| !p.completion_source.is_empty())
    {
        out.push_str(&format!(
            "completion tokens of `{}`: {}\n",
            p.name, p.completion_source
        ));
    }
    for p in report.players.iter().filter(|p| !p.price_source.is_empty()) {
        out.push_str(&format!("cost of `{}`: {}\n", p.name, p.price_source));
    }
    for b in &report.budgets {
        out.push_str(&budget_line(b));
        out.push('\n');
    }
    if !report.budgets.is_empty() {
        out.push_str(
            "a budget is checked before each game starts: the game that reaches it, and the games running beside it, play to the end\n",
        );
    }
    if !report.experiment.is_empty() {
        out.push_str(&experiment_plan_text(report));
    }
    out
}

/// An experiment's expected length and cost: the SPRT's average sample number at a few true
/// differences, priced at the dry run's cost per game.
fn experiment_plan_text(report: &DryRun) -> String {
    let per_game = report
        .usd
        .filter(|_| report.games > 0)
        .map(|u| (u.low / report.games as f64, u.high / report.games as f64));
    let mut out = format!(
        "\nexperiment: expected game pairs per arm to a decision (SPRT average sample number; \
         decisive independent games assumed; capped at max_pairs)\n{:>10} {:>10} {:>8} {:>10} {:>23}\n",
        "true Elo", "pairs", "P(H1)", "games", "cost (USD)"
    );
    for row in &report.experiment {
        let cost = per_game.map_or("no price".to_string(), |(low, high)| {
            format!("${:.4}–${:.4}", low * row.games, high * row.games)
        });
        out.push_str(&format!(
            "{:>10.1} {:>10.0} {:>8.2} {:>10.0} {:>23}\n",
            row.true_elo, row.pairs, row.p_h1, row.games, cost
        ));
    }
    out
}

/// Where one budget would stop the run, e.g. `budget: the tokens budget of player `m` (5000
/// tokens) stops its games after 3–7 of 12 (5–9 not started)`.
fn budget_line(b: &BudgetEstimate) -> String {
    let (whose, its) = match &b.player {
        Some(p) => (format!("player `{p}`"), "its"),
        None => ("the tournament".to_owned(), "the"),
    };
    let amount = match b.limit {
        "usd" => format!("${:.4}", b.budget),
        _ => format!("{:.0} tokens", b.budget),
    };
    let head = format!("budget: the {} budget of {whose} ({amount})", b.limit);
    let games = b.games;
    let Some(started) = b.games_started else {
        return format!("{head}: unknown, a model has no price");
    };
    if started.low >= games {
        format!("{head} lets all {its} {games:.0} games start, even at the high end")
    } else if started.high >= games {
        format!(
            "{head} stops {its} games after {:.0} of {games:.0} at the high end ({:.0} not started); at the low end all start",
            started.low,
            games - started.low
        )
    } else if started.low == started.high {
        format!(
            "{head} stops {its} games after {:.0} of {games:.0} ({:.0} not started)",
            started.low,
            games - started.low
        )
    } else {
        format!(
            "{head} stops {its} games after {:.0}–{:.0} of {games:.0} ({:.0}–{:.0} not started)",
            started.low,
            started.high,
            games - started.high,
            games - started.low
        )
    }
}
