//! The report's pictures as inline SVG, built with [`super::markup`]: the board's squares and
//! pieces (the viewer's script only places `<use>` references to the piece symbols), the ratings
//! plot with 95 % intervals and the bar charts.
//!
//! The pieces are drawn here, simple silhouettes on a 45-unit square, rather than vendored: the
//! well-known SVG sets are CC BY-SA (Cburnett's, as redistributed in cm-chessboard), GPL or
//! non-commercial (lichess's others), and a glyph font would depend on the fonts of the reader's
//! machine. Plots are drawn here too: a few rectangles, lines and labels do not need a plotting
//! crate (plotters is optional in the verified set and would add two dozen crates for this).

use super::markup::{Element, el};

/// The side of one square in board units (the pieces are drawn on a 45 × 45 box).
pub const SQUARE: u32 = 45;

/// One piece: `(id, outline paths, detail paths drawn in the contrasting colour)`.
type PieceShape = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const BASE: &str = "M9.5 39.5h26v-3.5h-26z";

/// The six shapes; each is drawn once white and once black.
const SHAPES: &[PieceShape] = &[
    (
        "P",
        &[
            BASE,
            "M15 36c0-7 4-10 5-13h5c1 3 5 6 5 13z",
            "M22.5 9a5.5 5.5 0 1 0 0.01 0zM17 22.5h11v-2.5h-11z",
        ],
        &[],
    ),
    (
        "R",
        &[
            BASE,
            "M14 36l1.5-17h14l1.5 17z",
            "M12 19v-9h4v3.5h4v-3.5h5v3.5h4v-3.5h4v9z",
        ],
        &["M15.5 30h14M15 23h15"],
    ),
    (
        "N",
        &[
            BASE,
            "M13.5 36c0-6 3-10 7-13-4 0-7 2-9.5 1.5-2.5-1-2-4 0-6.5 3-3.5 6-7 8.5-9l1-4 2.5 3.5c7 1 11.5 7 11 17-.5 5-2 8-2 10.5z",
        ],
        &["M15.5 17.5a1.2 1.2 0 1 0 0.01 0zM24 12c3 1.5 5 5 5 10"],
    ),
    (
        "B",
        &[
            BASE,
            "M15 36c0-5 3-8 4.5-10h6c1.5 2 4.5 5 4.5 10z",
            "M22.5 9c-5 4.5-7.5 9-7.5 12.5 0 3 3 4.5 7.5 4.5s7.5-1.5 7.5-4.5c0-3.5-2.5-8-7.5-12.5z",
            "M22.5 4.5a2.2 2.2 0 1 0 0.01 0z",
        ],
        &["M19.5 18.5l6-5M22.5 29.5v0"],
    ),
    (
        "Q",
        &[
            BASE,
            "M11.5 36l2-11-5-10 7.5 7 2.5-11 4 10 4-10 2.5 11 7.5-7-5 10 2 11z",
            "M8.5 13a2 2 0 1 0 0.01 0zM18 9a2 2 0 1 0 0.01 0zM27 9a2 2 0 1 0 0.01 0zM36.5 13a2 2 0 1 0 0.01 0zM22.5 8a2 2 0 1 0 0.01 0z",
        ],
        &["M13.5 30h18"],
    ),
    (
        "K",
        &[
            BASE,
            "M12.5 36c0-6 2-10 3.5-14h13c1.5 4 3.5 8 3.5 14z",
            "M15.5 22c-2.5-5 1-9.5 7-9.5s9.5 4.5 7 9.5z",
            "M21 4h3v3.5h3.5v3h-3.5v3h-3v-3h-3.5v-3h3.5z",
        ],
        &["M14 30h17"],
    ),
];

/// `<symbol>`s `p-wK`, `p-bN`, ... for the twelve pieces, in a hidden `<svg>`.
pub fn piece_symbols() -> Element {
    let mut defs = el("defs");
    for (white, fill, stroke) in [(true, "#fafafa", "#1a1a1a"), (false, "#262626", "#1a1a1a")] {
        for (name, outline, details) in SHAPES {
            let id = format!("p-{}{name}", if white { 'w' } else { 'b' });
            let mut symbol = el("symbol")
                .id(id)
                .attr("viewBox", format!("0 0 {SQUARE} {SQUARE}"));
            for d in *outline {
                symbol.push(
                    el("path")
                        .attr("d", d)
                        .attr("fill", fill)
                        .attr("stroke", stroke)
                        .attr("stroke-width", "1.5")
                        .attr("stroke-linejoin", "round"),
                );
            }
            let detail = if white { "#1a1a1a" } else { "#e8e8e8" };
            for d in *details {
                symbol.push(
                    el("path")
                        .attr("d", d)
                        .attr("fill", "none")
                        .attr("stroke", detail)
                        .attr("stroke-width", "1.5")
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
pub struct RatingPoint {
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
pub fn ratings_plot(points: &[RatingPoint]) -> Element {
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
        svg.push(
            el("line")
                .class("grid")
                .attr("x1", fmt(x(tick)))
                .attr("x2", fmt(x(tick)))
                .attr("y1", 4)
                .attr("y2", fmt(height - 26.0)),
        );
        svg.push(
            el("text")
                .class("tick")
                .attr("x", fmt(x(tick)))
                .attr("y", fmt(height - 10.0))
                .attr("text-anchor", "middle")
                .text(format!("{tick:.0}")),
        );
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
pub fn stacked_bars(
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
