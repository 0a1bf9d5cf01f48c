//! `arena migrate --from SRC --to DST`: copies a whole store into a new or empty one, across
//! backends (a SQLite file or a `postgres://` URL on either side), then checks the copy table by
//! table (rows and SHA-256) and prints the check.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use arena::{
    store::{Store, TableCheck, display_location, location_exists},
    table::{Cell, Table},
};

use super::common::write_stdout;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store to copy: a SQLite file or a `postgres://` URL. Migrated to the current schema
    /// first if it is older, as every writing command does.
    #[arg(long)]
    from: PathBuf,
    /// The store to copy into: a new SQLite file, or an empty one or an empty PostgreSQL
    /// database. One holding any row is refused (no merging).
    #[arg(long)]
    to: PathBuf,
}

/// Exit code 2 (with the check printed) when a table of the copy does not match its source.
pub(super) fn run(args: Args) -> Result<u8> {
    let Args { from, to } = args;
    let (shown_from, shown_to) = (display_location(&from), display_location(&to));
    if !location_exists(&from) {
        bail!("no store at `{shown_from}`");
    }
    if same_location(&from, &to) {
        bail!("`{shown_from}` is both the source and the destination");
    }
    let source = Store::open(&from)?;
    let destination = Store::open(&to)?;
    tracing::info!("copying `{shown_from}` into `{shown_to}`");
    let checks = source
        .copy_into(&destination)
        .with_context(|| format!("copy `{shown_from}` into `{shown_to}`"))?;
    write_stdout(&check_table(&checks, &shown_from, &shown_to).to_text())?;
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| !c.matches())
        .map(|c| c.table.as_str())
        .collect();
    if failed.is_empty() {
        Ok(0)
    } else {
        eprintln!(
            "error: the copy in `{shown_to}` does not match `{shown_from}` in {}",
            failed
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(2)
    }
}

/// Whether two locations name the same store: the same URL, or the same file (a destination
/// that does not exist yet is compared by its folder).
fn same_location(a: &Path, b: &Path) -> bool {
    let resolved = |p: &Path| -> Option<PathBuf> {
        p.canonicalize().ok().or_else(|| {
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = parent.unwrap_or(Path::new(".")).canonicalize().ok()?;
            Some(dir.join(p.file_name()?))
        })
    };
    a == b || matches!((resolved(a), resolved(b)), (Some(x), Some(y)) if x == y)
}

/// The check as printed: per table its rows, the first 12 hex digits of its checksum, and
/// whether both sides agree (both counts and checksums shown where they do not).
fn check_table(checks: &[TableCheck], from: &str, to: &str) -> Table {
    let mut table = Table::new(
        format!("{from} → {to}"),
        &["table", "rows", "sha256", "match"],
    );
    for check in checks {
        let (source, destination) = (&check.source, &check.destination);
        let short = |hex: String| hex[..12].to_owned();
        let (rows, sum) = if check.matches() {
            (
                Cell::Int(i64::try_from(source.rows).unwrap_or(i64::MAX)),
                short(source.hex()),
            )
        } else {
            (
                Cell::Text(format!("{} → {}", source.rows, destination.rows)),
                format!("{} → {}", short(source.hex()), short(destination.hex())),
            )
        };
        table.rows.push(vec![
            check.table.as_str().into(),
            rows,
            sum.into(),
            if check.matches() { "yes" } else { "NO" }.into(),
        ]);
    }
    let total: u64 = checks.iter().map(|c| c.source.rows).sum();
    table.notes.push(format!(
        "{total} row(s) in {} table(s); read back from both stores after the commit",
        checks.len()
    ));
    table
}
