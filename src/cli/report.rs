//! `arena report`: one self-contained HTML file with the overview, the games and a viewer per
//! game (see `arena::report::html`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arena::{
    report::html::{self, Selection},
    store::Store,
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`; read only: a
    /// running `arena run` may be writing it).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The tournament or evaluation run (default: every one in the store).
    #[arg(long)]
    tournament: Option<String>,
    /// Where to write the report (default: the store's name with `.html`, beside it).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub(super) fn run(args: Args) -> Result<u8> {
    let Args {
        db,
        tournament,
        out,
    } = args;
    if !arena::store::location_exists(&db) {
        eprintln!(
            "error: no store at `{}`",
            arena::store::display_location(&db)
        );
        return Ok(2);
    }
    let store = Store::open_read_only(&db)?;
    let selection = match select(&store, tournament.as_deref())? {
        Ok(s) => s,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(2);
        }
    };
    let out = out.unwrap_or_else(|| default_out(&db));
    let stats = write(&store, &selection, &out)?;
    println!(
        "report: {} ({} game(s), {} evaluation run(s))",
        out.display(),
        stats.games,
        stats.eval_runs
    );
    Ok(0)
}

/// `runs/x.db` reports to `runs/x.html`; a server's store `postgres://host/study` to `study.html`
/// in the current folder.
pub(super) fn default_out(db: &Path) -> PathBuf {
    if arena::store::is_server_location(db) {
        // A server's store: no folder of its own, so the current one.
        let name = arena::store::server_database(db).unwrap_or_else(|| "arena".to_owned());
        return PathBuf::from(format!("{name}.html"));
    }
    db.with_extension("html")
}

/// The tournaments and runs named `name` (a tournament first, then a run), or all of them; an
/// unknown name gives the message listing the names there are.
pub(super) fn select(
    store: &Store,
    name: Option<&str>,
) -> Result<std::result::Result<Selection, String>> {
    let tournaments = store.tournaments()?;
    let runs = store.eval_runs()?;
    let Some(name) = name else {
        return Ok(Ok(Selection {
            tournaments,
            eval_runs: runs,
            ..Selection::default()
        }));
    };
    let t: Vec<_> = tournaments
        .iter()
        .filter(|t| t.name == name)
        .cloned()
        .collect();
    let r: Vec<_> = runs.iter().filter(|r| r.name == name).cloned().collect();
    if t.is_empty() && r.is_empty() {
        let mut names: Vec<String> = tournaments
            .iter()
            .map(|t| format!("`{}`", t.name))
            .collect();
        names.extend(
            runs.iter()
                .map(|r| format!("`{}` (evaluation run)", r.name)),
        );
        let there = if names.is_empty() {
            "the store has none".to_owned()
        } else {
            format!("there are: {}", names.join(", "))
        };
        return Ok(Err(format!(
            "the store has no tournament or evaluation run named `{name}`; {there}"
        )));
    }
    Ok(Ok(Selection {
        tournaments: t,
        eval_runs: r,
        ..Selection::default()
    }))
}

/// Builds the report and writes it to `out` through a temporary file, so a browser reloading
/// the report during a run never reads half a file.
pub(super) fn write(store: &Store, selection: &Selection, out: &Path) -> Result<html::ReportStats> {
    // Each writer its own temporary name: a refresh still finishing must not mix with the final
    // write of `arena run`.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut selection = selection.clone();
    for t in &selection.tournaments {
        let mut tables = super::common::format_tables(store, t);
        tables.extend(super::common::versions_table(store, t));
        selection.format_tables.insert(t.id, tables);
        if let Some(experiment) = super::common::experiment(store, t) {
            selection.experiments.insert(t.id, experiment);
        }
    }
    let (page, stats) = html::build(store, &selection)?;
    let tmp = out.with_extension(format!("html.{}-{n}.tmp", std::process::id()));
    std::fs::write(&tmp, page).with_context(|| format!("cannot write `{}`", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| format!("cannot write `{}`", out.display()))?;
    Ok(stats)
}
