//! The report's pictures as inline SVG, built with [`super::markup`]: the board's squares and
//! pieces (the viewer's script only places `<use>` references to the piece symbols), the ratings
//! plot with 95 % intervals and the bar charts.
//!
//! The pieces' outlines are [`crate::board::diagram`]'s, the same ones the board pictures sent to
//! vision models are drawn with. Plots are drawn here: a few rectangles, lines and labels do not
//! need a plotting crate (plotters is optional in the verified set and would add two dozen crates
//! for this).

use super::markup::{Element, el};

use crate::board::diagram::{self, PAINT, SHAPES, STROKE_WIDTH};

/// The side of one square in board units (the pieces are drawn on a 45 × 45 box).
pub const SQUARE: u32 = diagram::SQUARE;

/// `<symbol>`s `p-wK`, `p-bN`, ... for the twelve pieces, in a hidden `<svg>`.
pub(crate) fn piece_symbols() -> Element {
    let mut defs = el("defs");
    for (color, paint) in PAINT {
        for shape in &SHAPES {
            let id = format!("p-{}{}", color.char(), shape.letter);
            let mut symbol = el("symbol")
                .id(id)
                .attr("viewBox", format!("0 0 {SQUARE} {SQUARE}"));
            for d in shape.outline {
                symbol.push(
                    el("path")
                        .attr("d", d)
                        .attr("fill", paint.fill)
                        .attr("stroke", paint.stroke)
                        .attr("stroke-width", STROKE_WIDTH)
                        .attr("stroke-linejoin", "round"),
                );
            }
            for d in shape.details {
                symbol.push(
                    el("path")
                        .attr("d", d)
                        .attr("fill", "none")
                        .attr("stroke", paint.detail)
                        .attr("stroke-width", STROKE_WIDTH)
                        .attr("stroke-linecap", "round"),
                );
            }
            defs.push(symbol);
        }
    }
    el("svg")
        .attr("width", "0")
        .attr("height", "0")
        .attr("aria-hidden", "true")
        .attr("class", "symbols")
        .child(defs)
}

/// The empty board: 64 squares named by `data-sq`, coordinate labels and an empty layer for the
/// pieces and the last-move marks. The viewer places squares for the chosen orientation.
pub fn board() -> Element {
    let side = SQUARE * 8;
    let mut squares = el("g").class("squares");
    for rank in 0..8u32 {
        for file in 0..8u32 {
            let name = format!("{}{}", (b'a' + file as u8) as char, rank + 1);
            let light = (file + rank) % 2 == 1;
            squares.push(
                el("rect")
                    .class(if light { "sq light" } else { "sq dark" })
                    .attr("data-sq", name)
                    .attr("x", file * SQUARE)
                    .attr("y", (7 - rank) * SQUARE)
                    .attr("width", SQUARE)
                    .attr("height", SQUARE),
            );
        }
    }
    let mut coords = el("g").class("coords");
    for i in 0..8u32 {
        coords.push(
            el("text")
                .class("file")
                .attr("data-i", i)
                .attr("x", i * SQUARE + SQUARE - 3)
                .attr("y", side - 3)
                .attr("text-anchor", "end")
                .text(((b'a' + i as u8) as char).to_string()),
        );
        coords.push(
            el("text")
                .class("rank")
                .attr("data-i", i)
                .attr("x", 2)
                .attr("y", (7 - i) * SQUARE + 11)
                .text((i + 1).to_string()),
        );
    }
    el("svg")
        .id("board")
        .attr("viewBox", format!("0 0 {side} {side}"))
        .attr("role", "img")
        .attr("aria-label", "chess board")
        .child(squares)
        .child(el("g").id("marks"))
        .child(coords)
        .child(el("g").id("pieces"))
}

/// One player's rating with its interval, for [`ratings_plot`].
#[derive(Debug, Clone)]
pub(crate) struct RatingPoint {
    /// The player.
    pub name: String,
    /// The rating.
    pub rating: f64,
    /// The 95 % interval.
    pub low: f64,
    /// The 95 % interval.
    pub high: f64,
    /// Whether the RD is above the provisional threshold.
    pub provisional: bool,
}

/// Left margin of the horizontal charts, for the player names.
const LABEL_W: f64 = 190.0;
/// Height of one row of a horizontal chart.
const ROW_H: f64 = 26.0;
/// Width of the plotting area of a horizontal chart.
const PLOT_W: f64 = 460.0;

/// A horizontal dot-and-whisker plot: one row per player, the rating as a dot and the 95 %
/// interval as a bar, on a shared axis with ticks every 100 (or 200, 500) points.
pub(crate) fn ratings_plot(points: &[RatingPoint]) -> Element {
    let lo = points.iter().map(|p| p.low).fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.high)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(100.0);
    let step = [100.0, 200.0, 500.0, 1000.0]
        .into_iter()
        .find(|s| span / s <= 8.0)
        .unwrap_or(2000.0);
    let (lo, hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    let x = |v: f64| LABEL_W + (v - lo) / (hi - lo) * PLOT_W;
    let height = ROW_H * points.len() as f64 + 34.0;
    let mut svg = chart_frame(
        "ratings-plot",
        height,
        "Glicko-1 ratings with 95 % intervals",
    );
    let mut tick = lo;
    while tick <= hi + 0.5 {
        push_x_tick(&mut svg, x(tick), height, "grid", format!("{tick:.0}"));
        tick += step;
    }
    for (i, p) in points.iter().enumerate() {
        let y = ROW_H * i as f64 + ROW_H / 2.0 + 4.0;
        let class = if p.provisional {
            "series provisional"
        } else {
            "series"
        };
        svg.push(row_label(y, &p.name));
        svg.push(
            el("g")
                .class(class)
                .child(el("title").text(format!(
                    "{}: {:.0} (95 % interval {:.0} to {:.0}){}",
                    p.name,
                    p.rating,
                    p.low,
                    p.high,
                    if p.provisional { ", provisional" } else { "" }
                )))
                .child(
                    el("line")
                        .class("whisker")
                        .attr("x1", fmt(x(p.low)))
                        .attr("x2", fmt(x(p.high)))
                        .attr("y1", fmt(y))
                        .attr("y2", fmt(y)),
                )
                .child(
                    el("circle")
                        .class("dot")
                        .attr("cx", fmt(x(p.rating)))
                        .attr("cy", fmt(y))
                        .attr("r", 5),
                ),
        );
    }
    svg
}

/// One bar of a stacked bar: a label for the legend, its count.
pub type Segment = (String, u64);

/// A horizontal stacked bar chart: one row per name, one coloured segment per kind (colours in
/// order of `kinds`), the total at the end of the bar, and a legend. Rows with nothing are drawn
/// empty with a 0, so every player is listed.
pub(crate) fn stacked_bars(
    id: &str,
    title: &str,
    kinds: &[String],
    rows: &[(String, Vec<u64>)],
) -> Element {
    let max = rows
        .iter()
        .map(|(_, v)| v.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let legend_rows = kinds.len().div_ceil(3) as f64;
    let height = ROW_H * rows.len() as f64 + 12.0 + legend_rows * 18.0;
    let mut svg = chart_frame(id, height, title);
    for (i, (name, values)) in rows.iter().enumerate() {
        let y = ROW_H * i as f64 + ROW_H / 2.0 + 4.0;
        svg.push(row_label(y, name));
        let mut at = LABEL_W;
        for (k, v) in values.iter().enumerate() {
            if *v == 0 {
                continue;
            }
            let w = *v as f64 / max as f64 * (PLOT_W - 40.0);
            svg.push(
                el("rect")
                    .class(&format!("bar c{}", k % 8))
                    .attr("x", fmt(at))
                    .attr("y", fmt(y - 8.0))
                    .attr("width", fmt(w))
                    .attr("height", 16)
                    .child(el("title").text(format!("{name}: {v} {}", kinds[k]))),
            );
            at += w;
        }
        svg.push(
            el("text")
                .class("total")
                .attr("x", fmt(at + 4.0))
                .attr("y", fmt(y + 4.0))
                .text(values.iter().sum::<u64>().to_string()),
        );
    }
    let top = ROW_H * rows.len() as f64 + 14.0;
    for (k, kind) in kinds.iter().enumerate() {
        let (col, row) = ((k % 3) as f64, (k / 3) as f64);
        let (lx, ly) = (LABEL_W + col * 155.0, top + row * 18.0);
        svg.push(
            el("rect")
                .class(&format!("bar c{}", k % 8))
                .attr("x", fmt(lx))
                .attr("y", fmt(ly))
                .attr("width", 10)
                .attr("height", 10),
        );
        svg.push(
            el("text")
                .class("legend")
                .attr("x", fmt(lx + 14.0))
                .attr("y", fmt(ly + 9.0))
                .text(kind.clone()),
        );
    }
    svg
}

/// One arm of an experiment for [`llr_plot`]: its log-likelihood ratio after each unit and the
/// bounds its test stops at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LlrSeries {
    /// The arm's name.
    pub name: String,
    /// The LLR after unit 1, 2, ...
    pub path: Vec<f64>,
    /// Accept H0 at or below this.
    pub lower: f64,
    /// Accept H1 at or above this.
    pub upper: f64,
    /// `H0`, `H1` or `undecided`.
    pub verdict: String,
}

/// Height of the plotting area of [`llr_plot`].
const LLR_H: f64 = 220.0;
/// Left edge of the plotting area of [`llr_plot`] (room for the axis labels).
const LLR_LEFT: f64 = 50.0;

/// A line chart of each arm's LLR over the units played, from 0 at no unit, with each arm's
/// bounds as dashed lines in its colour (arms run at different alphas under Holm) and a legend
/// naming the arm and its verdict.
pub(crate) fn llr_plot(series: &[LlrSeries]) -> Element {
    let width = LABEL_W + PLOT_W - LLR_LEFT;
    let units = series
        .iter()
        .map(|s| s.path.len())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let values = series
        .iter()
        .flat_map(|s| s.path.iter().copied().chain([s.lower, s.upper, 0.0]))
        .filter(|v| v.is_finite());
    let (lo, hi) = values.fold((-1.0f64, 1.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = (lo - 0.2, hi + 0.2);
    let x = |unit: f64| LLR_LEFT + unit / units * width;
    let y = |v: f64| 10.0 + (hi - v) / (hi - lo) * LLR_H;
    let legend_rows = series.len() as f64;
    let height = LLR_H + 40.0 + legend_rows * 18.0;
    let mut svg = chart_frame(
        "llr-plot",
        height,
        "Each arm's LLR over game pairs, with its bounds",
    );
    let step = nice_step(hi - lo);
    let mut tick = (lo / step).ceil() * step;
    while tick <= hi {
        svg.push(
            el("line")
                .class("grid")
                .attr("x1", fmt(LLR_LEFT))
                .attr("x2", fmt(LLR_LEFT + width))
                .attr("y1", fmt(y(tick)))
                .attr("y2", fmt(y(tick))),
        );
        svg.push(
            el("text")
                .class("tick")
                .attr("x", fmt(LLR_LEFT - 6.0))
                .attr("y", fmt(y(tick) + 4.0))
                .attr("text-anchor", "end")
                .text(format!("{tick:.1}")),
        );
        tick += step;
    }
    let xstep = nice_step(units).max(1.0);
    let mut unit = 0.0;
    while unit <= units {
        svg.push(
            el("text")
                .class("tick")
                .attr("x", fmt(x(unit)))
                .attr("y", fmt(LLR_H + 26.0))
                .attr("text-anchor", "middle")
                .text(format!("{unit:.0}")),
        );
        unit += xstep;
    }
    for (i, s) in series.iter().enumerate() {
        let colour = format!("c{}", i % 8);
        for (bound, what) in [(s.upper, "H1"), (s.lower, "H0")] {
            svg.push(
                el("line")
                    .class(&format!("bound {colour}"))
                    .attr("x1", fmt(LLR_LEFT))
                    .attr("x2", fmt(LLR_LEFT + width))
                    .attr("y1", fmt(y(bound)))
                    .attr("y2", fmt(y(bound)))
                    .child(
                        el("title").text(format!("{}: accept {what} at LLR {bound:.2}", s.name)),
                    ),
            );
        }
        let points: Vec<String> = std::iter::once(0.0)
            .chain(s.path.iter().copied())
            .enumerate()
            .map(|(k, v)| format!("{},{}", fmt(x(k as f64)), fmt(y(v))))
            .collect();
        let last = s.path.last().copied().unwrap_or(0.0);
        svg.push(
            el("polyline")
                .class(&format!("llr {colour}"))
                .attr("data-arm", &s.name)
                .attr("points", points.join(" "))
                .child(el("title").text(format!(
                    "{}: LLR {last:.2} after {} pairs, bounds {:.2} and {:.2}: {}",
                    s.name,
                    s.path.len(),
                    s.lower,
                    s.upper,
                    s.verdict
                ))),
        );
        let ly = LLR_H + 40.0 + i as f64 * 18.0;
        svg.push(
            el("rect")
                .class(&format!("bar {colour}"))
                .attr("x", fmt(LLR_LEFT))
                .attr("y", fmt(ly - 9.0))
                .attr("width", 10)
                .attr("height", 10),
        );
        svg.push(
            el("text")
                .class("legend")
                .attr("x", fmt(LLR_LEFT + 14.0))
                .attr("y", fmt(ly))
                .text(format!(
                    "{}: {} after {} pairs, LLR {last:.2} (bounds {:.2}, {:.2})",
                    s.name,
                    s.verdict,
                    s.path.len(),
                    s.lower,
                    s.upper
                )),
        );
    }
    svg
}

/// One row of [`interval_plot`]: a name, an estimate and the half width of its interval (NaN
/// when there is none).
pub(crate) type IntervalPoint = (String, f64, f64);

/// A horizontal dot-and-whisker plot of differences: one row per name, the estimate as a dot,
/// its 95 % interval as a bar, and a line at zero (no difference).
pub(crate) fn interval_plot(id: &str, title: &str, points: &[IntervalPoint]) -> Element {
    let ends = points.iter().flat_map(|(_, m, h)| {
        let h = if h.is_finite() { *h } else { 0.0 };
        [m - h, m + h]
    });
    let (lo, hi) = ends
        .filter(|v| v.is_finite())
        .fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Every value zero (no difference at all) has no scale of its own: one unit either side,
    // not ticks a billionth apart that all read "0".
    let span = hi - lo;
    let step = if span > 0.0 { nice_step(span) } else { 1.0 };
    let (lo, hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - step, hi + step)
    };
    let x = |v: f64| LABEL_W + (v - lo) / (hi - lo) * PLOT_W;
    let height = ROW_H * points.len() as f64 + 34.0;
    let mut svg = chart_frame(id, height, title);
    let mut tick = lo;
    while tick <= hi + step / 2.0 {
        let class = if tick.abs() < step / 2.0 {
            "grid zero"
        } else {
            "grid"
        };
        push_x_tick(&mut svg, x(tick), height, class, tick_label(tick, step));
        tick += step;
    }
    for (i, (name, mean, half)) in points.iter().enumerate() {
        let y = ROW_H * i as f64 + ROW_H / 2.0 + 4.0;
        svg.push(row_label(y, name));
        let mut g = el("g")
            .class("series")
            .child(el("title").text(if half.is_finite() {
                format!("{name}: {} ± {}", value_label(*mean), value_label(*half))
            } else {
                format!("{name}: {} (no interval from one pair)", value_label(*mean))
            }));
        if half.is_finite() {
            g.push(
                el("line")
                    .class("whisker")
                    .attr("x1", fmt(x(mean - half)))
                    .attr("x2", fmt(x(mean + half)))
                    .attr("y1", fmt(y))
                    .attr("y2", fmt(y)),
            );
        }
        g.push(
            el("circle")
                .class("dot")
                .attr("cx", fmt(x(*mean)))
                .attr("cy", fmt(y))
                .attr("r", 5),
        );
        svg.push(g);
    }
    svg
}

/// One model of [`cost_rating_plot`]: what placing it cost and where it stands.
#[derive(Debug, Clone)]
pub(crate) struct CostPoint {
    /// The model.
    pub name: String,
    /// US dollars spent to reach its interval (above 0).
    pub usd: f64,
    /// Its Elo.
    pub elo: f64,
    /// The half width of its 95 % interval.
    pub margin: f64,
}

/// Height of the plotting area of [`cost_rating_plot`].
const SCATTER_H: f64 = 300.0;

/// Rating against cost: each model a dot at its dollars, on a log axis with a tick at every power
/// of ten, and its Elo, with its 95 % interval as a vertical bar and its name beside it.
pub(crate) fn cost_rating_plot(points: &[CostPoint]) -> Element {
    let (left, top) = (70.0, 12.0);
    let width = LABEL_W + PLOT_W - left;
    let decade = |v: f64| v.log10();
    let lo_x = points
        .iter()
        .map(|p| decade(p.usd))
        .fold(f64::INFINITY, f64::min)
        .floor();
    let hi_x = points
        .iter()
        .map(|p| decade(p.usd))
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(lo_x + 1.0);
    let lo_y = points
        .iter()
        .map(|p| p.elo - p.margin)
        .fold(f64::INFINITY, f64::min);
    let hi_y = points
        .iter()
        .map(|p| p.elo + p.margin)
        .fold(f64::NEG_INFINITY, f64::max);
    let step = nice_step((hi_y - lo_y).max(100.0));
    let (lo_y, hi_y) = ((lo_y / step).floor() * step, (hi_y / step).ceil() * step);
    let x = |usd: f64| left + (decade(usd) - lo_x) / (hi_x - lo_x) * width;
    let y = |elo: f64| top + (hi_y - elo) / (hi_y - lo_y) * SCATTER_H;
    let height = top + SCATTER_H + 52.0;
    let mut svg = chart_frame("cost-rating-plot", height, "Elo against cost, log axis");
    svg.push(
        el("text")
            .class("tick")
            .attr("x", fmt(left + width / 2.0))
            .attr("y", fmt(height - 4.0))
            .attr("text-anchor", "middle")
            .text("cost to place, US dollars (log scale)"),
    );
    svg.push(
        el("text")
            .class("tick")
            .attr("transform", "rotate(-90)")
            .attr("x", fmt(-(top + SCATTER_H / 2.0)))
            .attr("y", 14)
            .attr("text-anchor", "middle")
            .text("Elo, ladder scale"),
    );
    let mut power = lo_x;
    while power <= hi_x + 0.5 {
        let usd = 10f64.powf(power);
        push_x_tick(
            &mut svg,
            x(usd),
            top + SCATTER_H + 26.0,
            "grid",
            dollars(usd),
        );
        power += 1.0;
    }
    let mut tick = lo_y;
    while tick <= hi_y + step / 2.0 {
        svg.push(
            el("line")
                .class("grid")
                .attr("x1", fmt(left))
                .attr("x2", fmt(left + width))
                .attr("y1", fmt(y(tick)))
                .attr("y2", fmt(y(tick))),
        );
        svg.push(
            el("text")
                .class("tick")
                .attr("x", fmt(left - 6.0))
                .attr("y", fmt(y(tick) + 4.0))
                .attr("text-anchor", "end")
                .text(tick_label(tick, step)),
        );
        tick += step;
    }
    for p in points {
        svg.push(
            el("g")
                .class("series")
                .child(el("title").text(format!(
                    "{}: Elo {:.0} ± {:.0}, {} to place",
                    p.name,
                    p.elo,
                    p.margin,
                    dollars(p.usd)
                )))
                .child(
                    el("line")
                        .class("whisker")
                        .attr("x1", fmt(x(p.usd)))
                        .attr("x2", fmt(x(p.usd)))
                        .attr("y1", fmt(y(p.elo - p.margin)))
                        .attr("y2", fmt(y(p.elo + p.margin))),
                )
                .child(
                    el("circle")
                        .class("dot")
                        .attr("cx", fmt(x(p.usd)))
                        .attr("cy", fmt(y(p.elo)))
                        .attr("r", 5),
                )
                .child(
                    el("text")
                        .class("label")
                        .attr("x", fmt(x(p.usd) + 8.0))
                        .attr("y", fmt(y(p.elo) - 6.0))
                        .text(p.name.clone()),
                ),
        );
    }
    svg
}

/// Dollars as a tick or a tooltip shows them: `$0.001`, `$0.1`, `$10`.
fn dollars(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.0}")
    } else {
        let decimals = (-usd.log10()).ceil().max(1.0) as usize;
        format!("${usd:.decimals$}")
    }
}

/// A step of 1, 2 or 5 times a power of ten that cuts `span` into at most about eight parts.
fn nice_step(span: f64) -> f64 {
    let raw = span / 6.0;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power)
}

/// A tick at a multiple of `step` with as many decimals as the step needs, so that ticks
/// apart are labelled apart at any scale (`0.00002`, `0.00004`, not `0`, `0`), never `-0`.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10()).ceil().clamp(0.0, 12.0) as usize
    } else {
        0
    };
    trim_zeros(&crate::table::fixed(v, decimals))
}

/// An estimate with three significant digits (`0.0000312`, `12.5`, `1234`), never `-0`.
fn value_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return crate::table::fixed(v, 0);
    }
    let decimals = (2.0 - v.abs().log10().floor()).clamp(0.0, 12.0) as usize;
    trim_zeros(&crate::table::fixed(v, decimals))
}

/// `s` without the trailing zeros of its decimals (`0.50` → `0.5`, `2.0` → `2`).
fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s.to_owned()
    }
}

/// One vertical grid line of a row chart at `x`, and its label under the plot.
fn push_x_tick(svg: &mut Element, x: f64, height: f64, class: &str, label: String) {
    svg.push(
        el("line")
            .class(class)
            .attr("x1", fmt(x))
            .attr("x2", fmt(x))
            .attr("y1", 4)
            .attr("y2", fmt(height - 26.0)),
    );
    svg.push(
        el("text")
            .class("tick")
            .attr("x", fmt(x))
            .attr("y", fmt(height - 10.0))
            .attr("text-anchor", "middle")
            .text(label),
    );
}

fn chart_frame(id: &str, height: f64, title: &str) -> Element {
    el("svg")
        .id(id)
        .class("chart")
        .attr(
            "viewBox",
            format!("0 0 {} {}", fmt(LABEL_W + PLOT_W + 40.0), fmt(height)),
        )
        .attr("role", "img")
        .attr("aria-label", title)
}

fn row_label(y: f64, name: &str) -> Element {
    el("text")
        .class("label")
        .attr("x", fmt(LABEL_W - 8.0))
        .attr("y", fmt(y + 4.0))
        .attr("text-anchor", "end")
        .text(name)
}

/// A coordinate with at most one decimal, so the file stays small.
fn fmt(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_owned).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(e: Element) -> String {
        let mut out = String::new();
        e.render(&mut out);
        out
    }

    #[test]
    fn the_board_has_64_named_squares() {
        let svg = render(board());
        assert_eq!(svg.matches("data-sq=").count(), 64);
        assert!(svg.contains("data-sq=\"a1\" x=\"0\" y=\"315\""), "{svg}");
        assert!(svg.contains("data-sq=\"h8\" x=\"315\" y=\"0\""), "{svg}");
    }

    #[test]
    fn every_piece_has_a_symbol() {
        let svg = render(piece_symbols());
        for color in ['w', 'b'] {
            for piece in ['P', 'N', 'B', 'R', 'Q', 'K'] {
                assert!(
                    svg.contains(&format!("id=\"p-{color}{piece}\"")),
                    "{color}{piece}"
                );
            }
        }
    }

    /// The labels of a chart's ticks, left to right.
    fn tick_labels(svg: &str) -> Vec<String> {
        svg.split("class=\"tick\"")
            .skip(1)
            .filter_map(|rest| {
                let text = rest.split_once('>')?.1;
                Some(text.split_once('<')?.0.to_owned())
            })
            .collect()
    }

    #[test]
    fn ticks_at_small_ranges_are_labelled_apart() {
        // Costs per game a few hundred-thousandths of a dollar apart (as a small model's are).
        let cost = render(interval_plot(
            "c",
            "cost",
            &[
                ("a".into(), 0.000031, 0.000012),
                ("b".into(), -0.00002, 0.00001),
            ],
        ));
        let labels = tick_labels(&cost);
        assert!(labels.len() >= 3, "{labels:?}");
        let mut distinct = labels.clone();
        distinct.dedup();
        assert_eq!(distinct, labels, "{cost}");
        assert!(labels.contains(&"0".to_owned()), "{labels:?}");
        assert!(labels.iter().all(|l| l != "-0"), "{labels:?}");
        assert!(cost.contains("a: 0.000031 ± 0.000012"), "{cost}");
        // No difference at all: a unit either side of zero, not "0 0 0".
        let none = render(interval_plot("d", "difference", &[("a".into(), 0.0, 0.0)]));
        assert_eq!(tick_labels(&none), ["-1", "0", "1"], "{none}");
    }

    #[test]
    fn the_cost_plot_puts_dearer_models_right_and_stronger_ones_higher() {
        let plot = render(cost_rating_plot(&[
            CostPoint {
                name: "<a>".into(),
                usd: 0.05,
                elo: 800.0,
                margin: 60.0,
            },
            CostPoint {
                name: "b".into(),
                usd: 3.0,
                elo: 1200.0,
                margin: 40.0,
            },
        ]));
        assert!(
            plot.contains("&lt;a&gt;") && !plot.contains("<a>"),
            "{plot}"
        );
        for tick in ["$0.01", "$0.1", "$1", "$10"] {
            assert!(plot.contains(&format!(">{tick}</text>")), "{tick}: {plot}");
        }
        let attr = |name: &str| -> Vec<f64> {
            plot.split(&format!(" {name}=\""))
                .skip(1)
                .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
                .collect()
        };
        let (cx, cy) = (attr("cx"), attr("cy"));
        assert_eq!((cx.len(), cy.len()), (2, 2), "{plot}");
        assert!(cx[0] < cx[1] && cy[0] > cy[1], "{cx:?} {cy:?}");
    }

    #[test]
    fn dollars_are_shown_to_their_first_digit() {
        assert_eq!(dollars(0.001), "$0.001");
        assert_eq!(dollars(0.1), "$0.1");
        assert_eq!(dollars(1.0), "$1");
        assert_eq!(dollars(100.0), "$100");
    }

    #[test]
    fn names_in_charts_are_escaped() {
        let plot = render(ratings_plot(&[RatingPoint {
            name: "<b>x</b>".into(),
            rating: 1500.0,
            low: 1400.0,
            high: 1600.0,
            provisional: false,
        }]));
        assert!(
            plot.contains("&lt;b&gt;x&lt;/b&gt;") && !plot.contains("<b>"),
            "{plot}"
        );
        let bars = render(stacked_bars(
            "f",
            "failures",
            &["illegal".into()],
            &[("<i>".into(), vec![3])],
        ));
        assert!(
            bars.contains("&lt;i&gt;") && !bars.contains("<i>"),
            "{bars}"
        );
    }
}
