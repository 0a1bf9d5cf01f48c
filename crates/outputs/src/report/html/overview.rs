//! A tournament's overview: settings, players, the leaderboard tables, the ratings plot, protocol
//! failures per player and tokens and cost per player.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{
    ReportError,
    markup::{Element, el},
    svg::{self, IntervalPoint, LlrSeries, RatingPoint},
};
use crate::{
    leaderboard::{self, llm_chess},
    llm::CostSource,
    rating::glicko::{self, Compat},
    report::{Cell, Table},
    store::{CallSummary, GameRow, GameStatus, PlayerRow, Store, TournamentRow},
    tournament::{degenerate::ChessCompared, experiment::METRICS, standings::StoredExperiment},
};

/// Outcomes of calls that are the model's own protocol failures, in the chart's order, with
/// their label. Anything else that is not a move, an answered action, a proposal or an unplayed
/// sample of a vote counts as "other".
const FAILURES: &[(&str, &str)] = &[
    ("no_move_found", "no move found"),
    ("unparseable", "unparseable"),
    ("illegal", "illegal move"),
    ("ambiguous", "ambiguous move"),
    ("forbidden_reasoning", "forbidden reasoning"),
    ("wrong_action", "wrong action"),
    ("wrong_move", "wrong move (agentic)"),
    ("cut_off", "cut off at the token limit"),
];

/// Outcomes that are not failures.
fn is_success(outcome: &str) -> bool {
    matches!(
        outcome,
        "move" | "proposal" | "sample" | "say" | "reflection_notes" | "do_reflection"
    ) || outcome.starts_with("get_")
}

pub(super) fn overview(
    store: &Store,
    t: &TournamentRow,
    games: &[GameRow],
    format_tables: &[Table],
    calls: &[CallSummary],
) -> Result<Element, ReportError> {
    let players = store.players(t.id)?;
    let mut div = el("div")
        .class("overview")
        .id(format!("overview-{}", t.id))
        .child(el("h3").text("Overview"));
    div.push(settings(t, games));
    div.push(players_table(&players));
    let options = leaderboard::Options {
        stats: true,
        show_all: true,
        format_tables: format_tables.to_vec(),
        ..leaderboard::Options::default()
    };
    let mut grid = el("div").class("charts");
    let ratings = leaderboard::rate(games, Compat::Correct);
    let mut points: Vec<RatingPoint> = players
        .iter()
        .map(|p| {
            let r = ratings.rating(&p.name);
            let (low, high) = glicko::interval95(&r);
            RatingPoint {
                name: p.name.clone(),
                rating: r.rating,
                low,
                high,
                provisional: r.rd > options.max_rd,
            }
        })
        .collect();
    points.sort_by(|a, b| b.rating.total_cmp(&a.rating));
    if !points.is_empty() {
        grid.push(
            el("figure")
                .child(svg::ratings_plot(&points))
                .child(el("figcaption").text(format!(
                    "Glicko-1 rating and 95 % interval (rating ± 1.96 RD) per player; hollow: RD above {:.0} (provisional)",
                    options.max_rd
                ))),
        );
    }
    grid.push(failures_chart(t, games, &players, calls));
    if let Some(figure) = placement_chart(format_tables) {
        grid.push(figure);
    }
    div.push(grid);
    for mut table in leaderboard::tables(store, t, &options)? {
        // The section already names the tournament.
        if let Some(rest) = table.title.strip_prefix(&format!("{} · ", t.name)) {
            table.title = rest.to_owned();
        }
        div.push(table_html(&table));
    }
    div.push(tokens_table(t, &players, calls));
    Ok(div)
}

/// The cost-versus-rating chart of a placement (its format table of kind `placement`): each
/// model that spent something a dot at its dollars and Elo with its 95 % interval; `None`
/// without such a table or such a model.
pub fn placement_chart(tables: &[Table]) -> Option<Element> {
    let table = tables.iter().find(|t| t.kind == "placement")?;
    let column = |label: &str| table.columns.iter().position(|c| c == label);
    let (name, elo, margin, usd) = (
        column("player")?,
        column("Elo")?,
        column("±95%")?,
        column("cost (USD)")?,
    );
    let number = |cell: &Cell| match cell {
        Cell::Num(v, _) => Some(*v),
        Cell::Int(v) => Some(*v as f64),
        _ => None,
    };
    let mut left_out = 0;
    let mut points = Vec::new();
    for row in &table.rows {
        let point = (|| {
            let Cell::Text(player) = &row[name] else {
                return None;
            };
            Some(svg::CostPoint {
                name: player.clone(),
                elo: number(&row[elo])?,
                margin: number(&row[margin])?,
                usd: number(&row[usd]).filter(|usd| *usd > 0.0)?,
            })
        })();
        match point {
            Some(p) => points.push(p),
            None => left_out += 1,
        }
    }
    if points.is_empty() {
        return None;
    }
    let mut caption = "Elo against what placing each model cost (dollars, log axis), with 95 % \
                       intervals on the ladder's scale"
        .to_owned();
    if left_out > 0 {
        caption.push_str(&format!(
            "; {left_out} model(s) without a cost or a finite Elo are not drawn"
        ));
    }
    Some(
        el("figure")
            .id("placement-cost")
            .child(svg::cost_rating_plot(&points))
            .child(el("figcaption").text(caption)),
    )
}

/// The banner of a tournament that, or of a model player who, compared no chess: the verdicts
/// and the likely fixes, before any rating (see [`crate::tournament::degenerate`]).
pub(super) fn no_chess(compared: &ChessCompared) -> Option<Element> {
    let players: Vec<_> = compared.no_chess_players().collect();
    if players.is_empty() && !compared.tournament_no_chess() {
        return None;
    }
    let mut div = el("div")
        .class("no-chess")
        .child(el("h3").text("No chess compared"));
    if let Some(line) = compared.tournament_verdict() {
        div.push(el("p").class("verdict").text(line));
    }
    for p in players {
        div.push(el("p").class("verdict").text(p.verdict()));
        div.push(el("p").class("hint").text(p.hint()));
    }
    Some(div)
}

/// An experiment's charts: each arm's LLR on its way to a bound, and per protocol figure the
/// arms' paired differences from the baseline with their 95 % intervals (the numbers are in the
/// `experiment` table above).
pub(super) fn experiment(view: &StoredExperiment, compared: &ChessCompared) -> Element {
    let mut div = el("div")
        .class("experiment")
        .child(el("h3").text("Experiment"));
    let baseline = &view.design.baseline;
    let base = compared.player(baseline).filter(|p| p.no_chess());
    for arm in &view.status.arms {
        // An arm that compared no chess has no verdict to show: what went wrong instead.
        let text = match compared
            .player(&arm.variant)
            .filter(|p| p.no_chess())
            .or(base)
        {
            Some(p) => format!(
                "{} vs {baseline}: {}; {}",
                arm.variant,
                p.verdict(),
                p.hint()
            ),
            None => arm.summary(baseline),
        };
        div.push(el("p").class("verdict").text(text));
    }
    let mut grid = el("div").class("charts");
    let series: Vec<LlrSeries> = view
        .status
        .arms
        .iter()
        .filter_map(|a| {
            Some(LlrSeries {
                name: a.variant.clone(),
                path: a.llr_path.clone(),
                lower: a.lower_bound?,
                upper: a.upper_bound?,
                verdict: a.verdict.name().to_owned(),
            })
        })
        .collect();
    if !series.is_empty() {
        grid.push(
            el("figure")
                .child(svg::llr_plot(&series))
                .child(el("figcaption").text(
                    "Log-likelihood ratio of each arm after every game pair (pentanomial SPRT); \
                     dashed: the arm's bounds, H1 above and H0 below",
                )),
        );
    }
    for (i, (key, label)) in METRICS.iter().enumerate() {
        let points: Vec<IntervalPoint> = view
            .design
            .arms()
            .into_iter()
            .filter_map(|arm| {
                let d = view.differences.get(arm)?.get(i).copied().flatten()?;
                Some((arm.to_owned(), d.mean, d.half))
            })
            .filter(|(_, m, _)| m.is_finite())
            .collect();
        if points.is_empty() {
            continue;
        }
        grid.push(
            el("figure")
                .child(svg::interval_plot(
                    &format!("difference-{key}"),
                    label,
                    &points,
                ))
                .child(el("figcaption").text(format!(
                    "{label}: each arm minus {}, paired by game pair, with 95 % intervals",
                    view.design.baseline
                ))),
        );
    }
    div.push(grid);
    div
}

fn settings(t: &TournamentRow, games: &[GameRow]) -> Element {
    let settings: Value = serde_json::from_str(&t.settings_json).unwrap_or_default();
    let mut dl = el("dl").class("settings");
    let mut item = |k: &str, v: String| {
        dl.push(el("dt").text(k.to_owned()));
        dl.push(el("dd").text(v));
    };
    item("script", t.script_path.clone());
    item("created", t.created_at.clone());
    if let Value::Object(map) = &settings {
        for (k, v) in map {
            if matches!(k.as_str(), "name" | "prices") || v.is_null() {
                continue;
            }
            item(k, compact(v));
        }
        if map
            .get("prices")
            .is_some_and(|p| p.as_object().is_some_and(|o| !o.is_empty()))
        {
            item("prices", compact(&map["prices"]));
        }
    }
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for g in games {
        *by_status.entry(g.status.as_str()).or_default() += 1;
    }
    item(
        "games",
        if games.is_empty() {
            "none".to_owned()
        } else {
            by_status
                .iter()
                .map(|(s, n)| format!("{n} {s}"))
                .collect::<Vec<_>>()
                .join(", ")
        },
    );
    let mut generations: BTreeMap<(String, u64), usize> = BTreeMap::new();
    for g in games {
        if let (Some(h), Some(n)) = (&g.script_hash, g.generation) {
            *generations.entry((h.clone(), n)).or_default() += 1;
        }
    }
    if !generations.is_empty() {
        item(
            "script generations",
            generations
                .iter()
                .map(|((h, n), c)| format!("#{n} ({}…): {c} game(s)", &h[..h.len().min(10)]))
                .collect::<Vec<_>>()
                .join("; "),
        );
    }
    el("div").child(el("h4").text("Settings")).child(dl)
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn players_table(players: &[PlayerRow]) -> Element {
    let mut table = Table::new(
        "players",
        &[
            "player", "kind", "model", "provider", "endpoint", "mode", "options",
        ],
    );
    for p in players {
        let s: Value = serde_json::from_str(&p.settings_json).unwrap_or_default();
        let text = |k: &str| match &s[k] {
            Value::Null => Cell::Empty,
            v => Cell::Text(compact(v)),
        };
        let (model, endpoint, mode, options) = match p.kind.as_str() {
            "llm" => (
                text("model"),
                text("base_url"),
                text("mode"),
                options_text(&s, &["mode_options", "options"], &sampling(&s)),
            ),
            "engine" => (
                text("command"),
                Cell::Empty,
                Cell::Empty,
                options_text(&s, &["options", "limits"], &[]),
            ),
            "moa" => (
                Cell::Text(
                    s["proposers"]
                        .as_array()
                        .map(|ps| {
                            ps.iter()
                                .map(|p| compact(&p["model"]))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default()
                        + &format!(" → {}", compact(&s["synthesizer"]["model"])),
                ),
                Cell::Empty,
                text("mode"),
                options_text(&s, &["mode_options", "options"], &[]),
            ),
            _ => (Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty),
        };
        let provider = match p.kind.as_str() {
            "llm" => Cell::Text(s["provider"].as_str().unwrap_or("openai").to_owned()),
            _ => Cell::Empty,
        };
        table.rows.push(vec![
            p.name.clone().into(),
            p.kind.clone().into(),
            model,
            provider,
            endpoint,
            mode,
            options,
        ]);
    }
    table_html(&table)
}

/// The sampling settings an LLM player sets.
fn sampling(s: &Value) -> Vec<(String, String)> {
    [
        "temperature",
        "top_p",
        "max_tokens",
        "reasoning_effort",
        "thinking_budget",
        "seed",
        "anchor_elo",
    ]
    .iter()
    .filter(|k| !s[**k].is_null())
    .map(|k| ((*k).to_owned(), compact(&s[*k])))
    .collect()
}

fn options_text(s: &Value, keys: &[&str], extra: &[(String, String)]) -> Cell {
    // The first key that is an object wins (`mode_options` are the resolved ones).
    let mut parts: Vec<String> = extra.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for key in keys {
        if let Value::Object(map) = &s[*key] {
            parts.extend(
                map.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| format!("{k}={}", compact(v))),
            );
            if *key == "mode_options" {
                break;
            }
        }
    }
    if parts.is_empty() {
        Cell::Empty
    } else {
        Cell::Text(parts.join(", "))
    }
}

/// `calls`: every call of the tournament's finished games, in game, ply and seq order.
fn failures_chart(
    t: &TournamentRow,
    games: &[GameRow],
    players: &[PlayerRow],
    calls: &[CallSummary],
) -> Element {
    let mut kinds: Vec<String> = FAILURES.iter().map(|(_, l)| (*l).to_owned()).collect();
    kinds.push("other failed answer".to_owned());
    let mut counts: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for c in calls {
        let Some(outcome) = c.outcome.as_deref() else {
            continue;
        };
        if is_success(outcome) {
            continue;
        }
        let k = FAILURES
            .iter()
            .position(|(o, _)| *o == outcome)
            .unwrap_or(FAILURES.len());
        let row = counts
            .entry(c.player.as_str())
            .or_insert_with(|| vec![0; FAILURES.len() + 1]);
        row[k] += 1;
    }
    // Forfeits by reason: the game's termination, counted for the side that lost.
    let mut forfeit_kinds: Vec<String> = Vec::new();
    let mut forfeits: BTreeMap<(&str, usize), u64> = BTreeMap::new();
    for g in games.iter().filter(|g| g.status == GameStatus::Finished) {
        let Some(term) = g.termination.as_deref() else {
            continue;
        };
        if !matches!(term, "forfeit" | "too_many_wrong_actions" | "max_turns") {
            continue;
        }
        let loser = match g.result.as_deref() {
            Some("1-0") => g.black.as_str(),
            Some("0-1") => g.white.as_str(),
            _ => continue,
        };
        let label = format!("forfeit: {}", term.replace('_', " "));
        let k = match forfeit_kinds.iter().position(|l| *l == label) {
            Some(k) => k,
            None => {
                forfeit_kinds.push(label);
                forfeit_kinds.len() - 1
            }
        };
        *forfeits.entry((loser, k)).or_default() += 1;
    }
    let failure_kinds = kinds.len();
    kinds.extend(forfeit_kinds.iter().cloned());
    // Drop the kinds nobody has, so the legend lists only what happened.
    let rows_full: Vec<(String, Vec<u64>)> = players
        .iter()
        .filter(|p| matches!(p.kind.as_str(), "llm" | "moa"))
        .map(|p| {
            let mut v = counts
                .get(p.name.as_str())
                .cloned()
                .unwrap_or_else(|| vec![0; failure_kinds]);
            v.extend(
                (0..forfeit_kinds.len())
                    .map(|k| forfeits.get(&(p.name.as_str(), k)).copied().unwrap_or(0)),
            );
            (p.name.clone(), v)
        })
        .collect();
    let used: Vec<usize> = (0..kinds.len())
        .filter(|k| rows_full.iter().any(|(_, v)| v[*k] > 0))
        .collect();
    let kinds: Vec<String> = used.iter().map(|k| kinds[*k].clone()).collect();
    let rows: Vec<(String, Vec<u64>)> = rows_full
        .into_iter()
        .map(|(n, v)| (n, used.iter().map(|k| v[*k]).collect()))
        .collect();
    let mut figure = el("figure");
    if rows.is_empty() {
        figure.push(
            el("p")
                .class("note")
                .text("No player answers through a model: no protocol failures to show."),
        );
    } else if kinds.is_empty() {
        figure.push(
            el("p")
                .class("note")
                .text("No protocol failure: every model answer was a playable move or action."),
        );
    } else {
        figure.push(svg::stacked_bars(
            &format!("failures-{}", t.id),
            "protocol failures per player",
            &kinds,
            &rows,
        ));
    }
    figure.push(el("figcaption").text(
        "Protocol failures per model player over finished games: refused answers by kind, and games lost by forfeit by reason",
    ));
    figure
}

/// `calls` as for [`failures_chart`] (the order in which costs are added up).
fn tokens_table(t: &TournamentRow, players: &[PlayerRow], calls: &[CallSummary]) -> Element {
    let prices = llm_chess::prices(t);
    #[derive(Default)]
    struct Sum {
        calls: u64,
        prompt: u64,
        completion: u64,
        /// Cached and reasoning tokens over the calls that reported them, and whether any did.
        cached: Option<u64>,
        reasoning: Option<u64>,
        cost: f64,
        by_provider: u64,
        by_table: u64,
        /// Some call of a model without a price (and no provider price): no total.
        unpriced: bool,
        /// Some call reported no usage: its tokens (and so the totals) are unknown.
        unknown: bool,
        /// Some call reported neither usage nor a price: the cost is unknown.
        cost_unknown: bool,
        games: std::collections::BTreeSet<i64>,
    }
    let mut sums: BTreeMap<&str, Sum> = BTreeMap::new();
    for c in calls {
        let s = sums.entry(c.player.as_str()).or_default();
        s.calls += 1;
        s.games.insert(c.game_id);
        let cost = c.cost(&prices);
        match (cost.source, cost.usd) {
            (CostSource::Provider, Some(usd)) => {
                s.cost += usd;
                s.by_provider += 1;
            }
            (CostSource::Table, Some(usd)) => {
                s.cost += usd;
                s.by_table += 1;
            }
            _ if c.usage().is_none() => s.cost_unknown = true,
            _ => s.unpriced = true,
        }
        let Some(usage) = c.usage() else {
            s.unknown = true;
            continue;
        };
        s.prompt += usage.prompt_tokens;
        s.completion += usage.completion_tokens;
        if let Some(n) = usage.cached_tokens {
            *s.cached.get_or_insert(0) += n;
        }
        if let Some(n) = usage.reasoning_tokens {
            *s.reasoning.get_or_insert(0) += n;
        }
    }
    let mut table = Table::new(
        "tokens and cost",
        &[
            "player",
            "LLM calls",
            "prompt tokens",
            "completion tokens",
            "cached tokens",
            "reasoning tokens",
            "tokens per call",
            "cost USD",
            "cost per game USD",
            "priced by",
        ],
    );
    for p in players {
        let Some(s) = sums.get(p.name.as_str()) else {
            continue;
        };
        let unknown = || Cell::from("unknown".to_string());
        let tokens = |n: u64| if s.unknown { unknown() } else { n.into() };
        let detail = |n: Option<u64>| match n {
            _ if s.unknown => unknown(),
            Some(n) => n.into(),
            None => Cell::Empty,
        };
        let (cost, per_game) = if s.cost_unknown {
            (unknown(), unknown())
        } else if s.unpriced {
            (Cell::Empty, Cell::Empty)
        } else {
            (
                Cell::Num(s.cost, 4),
                Cell::Num(s.cost / s.games.len().max(1) as f64, 4),
            )
        };
        let priced_by = [("provider", s.by_provider), ("table", s.by_table)]
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(who, n)| format!("{who} {n}"))
            .collect::<Vec<_>>()
            .join(", ");
        table.rows.push(vec![
            p.name.clone().into(),
            s.calls.into(),
            tokens(s.prompt),
            tokens(s.completion),
            detail(s.cached),
            detail(s.reasoning),
            if s.unknown {
                unknown()
            } else {
                Cell::Num((s.prompt + s.completion) as f64 / s.calls.max(1) as f64, 0)
            },
            cost,
            per_game,
            priced_by.into(),
        ]);
    }
    table.notes.push(
        "finished games only; cost is the provider's own price where its response carried one \
         (priced by: provider), else the built-in price table and the script's `prices` (priced \
         by: table), cached tokens at the table's cached rate; - where a model has no price; \
         cached and reasoning tokens - where no call reported them"
            .into(),
    );
    table_html(&table)
}

/// A [`Table`] as an HTML table, numbers right-aligned, notes under it.
pub fn table_html(table: &Table) -> Element {
    let mut head = el("tr");
    for c in &table.columns {
        head.push(el("th").text(c.clone()));
    }
    let mut body = el("tbody");
    for row in &table.rows {
        let mut tr = el("tr");
        for cell in row {
            tr.push(match cell {
                Cell::Text(s) => el("td").text(s.clone()),
                Cell::Int(i) => el("td").class("num").text(i.to_string()),
                Cell::Num(x, d) => el("td").class("num").text(format!("{x:.d$}", d = *d)),
                Cell::Empty => el("td").class("empty").text("-"),
            });
        }
        body.push(tr);
    }
    let mut div = el("div")
        .class("table")
        .child(el("h4").text(table.title.clone()));
    if table.rows.is_empty() {
        div.push(el("p").class("note").text("nothing to show yet"));
    } else {
        div.push(el("table").child(el("thead").child(head)).child(body));
    }
    for n in &table.notes {
        div.push(el("p").class("note").text(n.clone()));
    }
    div
}
