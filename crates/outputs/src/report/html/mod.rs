//! `arena report`: one self-contained HTML file built from the store, to read what a tournament or
//! an evaluation run produced in any browser, from `file://`, with no network and no server.
//!
//! What it holds, per tournament: an overview (settings, players, the leaderboard tables of
//! `arena leaderboard --stats`, a ratings plot with 95 % intervals, protocol failures per player as
//! a chart, tokens and cost), a filterable games list, and a viewer per game (board, SAN moves,
//! the evaluation graph from the stored analysis, and for each ply every model call: messages
//! sent, raw reply, reasoning, outcome, feedback, tokens, latency, cost). Evaluation runs get
//! their task tables and every item's prompt, reply, parsed answer and score.
//!
//! Choices, and why:
//! - **Markup from one typed builder** ([`markup`]): names are static, text is always escaped,
//!   script blocks take only the binary's own code or escaped JSON. No template crate is in the
//!   verified set, and the builder is small.
//! - **Board and plots drawn here as SVG** ([`svg`]): the board is 64 rectangles and twelve piece
//!   symbols drawn for arena (the free SVG piece sets are CC BY-SA or GPL; fonts with chess glyphs
//!   vary by machine); the plots are a few bars, lines and dots. A vendored viewer
//!   (lichess-pgn-viewer, chessground) would bring a build step and a licence to track, and still
//!   not show model calls; a plotting library would bring kilobytes of JavaScript for three charts.
//! - **The viewer is one hand-written script** (`viewer.js`, compiled in with `include_str!`):
//!   it places pieces from FENs computed here, so it needs no chess logic of its own.
//! - **Per-game data is loaded lazily and compressed**: each game's plies, analysis and calls are
//!   one gzip-compressed, base64-encoded JSON block in a `<script type="application/x-arena-game">`
//!   that the browser neither runs nor parses until the game is opened, when the browser's own
//!   `DecompressionStream` inflates it. The HTML parser skips such blocks quickly, so a report of
//!   thousands of games opens as fast as its games list; prompts repeat from ply to ply and
//!   compress about tenfold. (flate2 with its pure-Rust backend compresses; base64 encodes.)

mod evals;
pub mod filters;
mod games;
pub mod markup;
mod overview;
pub mod svg;

pub use self::{
    games::{game_json, viewer},
    overview::{placement_chart, table_html},
};

/// The report's style sheet, which `arena serve` hands out as a file of its own.
pub(crate) const STYLE: &str = include_str!("viewer.css");
/// The game viewer's script (see the module doc), which `arena serve` hands out as a file of
/// its own: there it fetches each game from the server instead of reading a data block.
pub const SCRIPT: &str = include_str!("viewer.js");

/// One evaluation run's tables and items, as the report shows them.
///
/// # Errors
/// When the store cannot be read or the run's tables cannot be built.
pub(crate) fn eval_run_section(store: &Store, run: &EvalRunRow) -> Result<Element, ReportError> {
    evals::section(store, std::slice::from_ref(run))
}

use std::{collections::BTreeMap, io::Write as _};

use base64::Engine as _;

use self::markup::{Element, Node, el};
use crate::{
    eval::run::RunError,
    store::{EvalRunRow, Store, StoreError, TournamentRow},
    table::Table,
};

/// What a report covers.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The tournaments, each with its overview and games.
    pub tournaments: Vec<TournamentRow>,
    /// The evaluation runs.
    pub eval_runs: Vec<EvalRunRow>,
    /// Each tournament's own format tables (a Swiss table, a knockout bracket), by tournament
    /// id: made by the caller, who can run the format's scripts.
    pub format_tables: BTreeMap<i64, Vec<Table>>,
    /// Each experiment's tests and differences, by tournament id, for its charts: made by the
    /// caller, as the format tables are.
    pub experiments: BTreeMap<i64, crate::tournament::standings::StoredExperiment>,
}

/// Why a report could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An evaluation run's tables could not be built.
    #[error(transparent)]
    Eval(#[from] RunError),
}

/// Figures of a built report, for the command's summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportStats {
    /// Games listed.
    pub games: usize,
    /// Evaluation runs shown.
    pub eval_runs: usize,
}

/// Builds the report of `selection` as one HTML document.
///
/// # Errors
/// When the store cannot be read.
pub fn build(store: &Store, selection: &Selection) -> Result<(String, ReportStats), ReportError> {
    let mut stats = ReportStats::default();
    let mut main = el("main");
    let mut nav = el("nav").id("top");
    if selection.tournaments.is_empty() && selection.eval_runs.is_empty() {
        main.push(
            el("section")
                .class("empty")
                .child(el("h2").text("No games"))
                .child(el("p").text(
                    "This store has no tournament and no evaluation run yet: there are no games to show.",
                )),
        );
    }
    for t in &selection.tournaments {
        nav.push(
            el("a")
                .attr("href", format!("#t{}", t.id))
                .text(format!("tournament {}", t.name)),
        );
        let format_tables = selection
            .format_tables
            .get(&t.id)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let experiment = selection.experiments.get(&t.id);
        let (section, n) = tournament_section(store, t, format_tables, experiment)?;
        stats.games += n;
        main.push(section);
    }
    if !selection.eval_runs.is_empty() {
        nav.push(el("a").attr("href", "#evals").text("evaluation runs"));
        main.push(evals::section(store, &selection.eval_runs)?);
        stats.eval_runs = selection.eval_runs.len();
    }
    let title = match (
        selection.tournaments.as_slice(),
        selection.eval_runs.as_slice(),
    ) {
        ([t], []) => format!("arena · {}", t.name),
        ([], [r]) => format!("arena · {}", r.name),
        _ => "arena report".to_owned(),
    };
    let body = el("body")
        .child(svg::piece_symbols())
        .child(el("header").child(el("h1").text(title.clone())).child(nav))
        .child(main)
        .child(games::viewer())
        .child(el("script").child(Node::code(SCRIPT)));
    let head = el("head")
        .child(el("meta").attr("charset", "utf-8"))
        .child(
            el("meta")
                .attr("name", "viewport")
                .attr("content", "width=device-width, initial-scale=1"),
        )
        // Nothing may leave the page: no fetch, no image, no font from elsewhere. Inline script and
        // style are the report's own; the only images are `data:` URLs, the board pictures that
        // were sent to models, embedded in the page.
        .child(
            el("meta").attr("http-equiv", "Content-Security-Policy").attr(
                "content",
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none'",
            ),
        )
        .child(el("meta").attr("name", "generator").attr("content", "arena report"))
        .child(el("title").text(title))
        .child(el("style").child(Node::code(STYLE)));
    let html = el("html").attr("lang", "en").child(head).child(body);
    Ok((markup::document(html), stats))
}

fn tournament_section(
    store: &Store,
    t: &TournamentRow,
    format_tables: &[Table],
    experiment: Option<&crate::tournament::standings::StoredExperiment>,
) -> Result<(Element, usize), ReportError> {
    let games = store.games(t.id)?;
    let mut section = el("section")
        .class("tournament")
        .id(format!("t{}", t.id))
        .attr("data-tournament", &t.name)
        .child(el("h2").text(format!("Tournament {}", t.name)));
    // The games list first: it reads every call of every game, and the overview's sums are made
    // from those rows rather than read again.
    let (list, calls) = games::list(store, t, &games)?;
    // A tournament or player that compared no chess says so before any rating.
    let compared = crate::tournament::degenerate::ChessCompared::read(store, t.id)?;
    if let Some(banner) = overview::no_chess(&compared) {
        section.push(banner);
    }
    section.push(overview::overview(store, t, &games, format_tables, &calls)?);
    if let Some(experiment) = experiment {
        section.push(overview::experiment(experiment, &compared));
    }
    section.push(list);
    Ok((section, games.len()))
}

/// Gzip and base64: how per-game blocks are stored (see the module doc).
fn pack(value: &impl serde::Serialize) -> Node {
    // Serialised whole first: the encoder costs the same per write call, and serde writes
    // token by token.
    let json = serde_json::to_vec(value).expect("the report's data always serialises");
    // Level 4, not the default 6: on the ply_cpu workload's games (prompts repeating from ply to
    // ply) it takes 30 % fewer instructions for blocks 0.4 % larger; 5 and 6 find almost nothing
    // more, 3 and below cost size (6 % at 3, 25 % at 2).
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(4));
    gz.write_all(&json).expect("writing to memory cannot fail");
    let bytes = gz.finish().expect("writing to memory cannot fail");
    Node::ascii_data(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A collapsible block of long text: the first line as its summary, the whole text inside, never
/// cut.
fn long_text(label: &str, class: &str, text: &str) -> Element {
    let first: String = text.lines().next().unwrap_or("").chars().take(90).collect();
    let more = text.chars().count() > first.chars().count();
    let summary = el("summary")
        .child(el("span").class("label").text(label.to_owned()))
        .child(
            el("span")
                .class("preview")
                .text(if more { format!("{first} …") } else { first }),
        );
    el("details")
        .class(class)
        .child(summary)
        .child(el("pre").text(text.to_owned()))
}

#[cfg(test)]
mod tests;
