//! Tables for people and programs: one [`Table`] type rendered as aligned text, CSV or JSON (the
//! HTML report renders the same tables as HTML, see `crate::report::html`).

use std::fmt::Write as _;

/// One cell: text, a whole number, or a number shown with a fixed number of decimals.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Left-aligned text.
    Text(String),
    /// A whole number.
    Int(i64),
    /// A number and how many decimals to show.
    Num(f64, usize),
    /// Nothing to show (e.g. a rate without attempts).
    Empty,
}

impl Cell {
    fn text(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(i) => i.to_string(),
            Cell::Num(x, decimals) => format!("{x:.decimals$}"),
            Cell::Empty => "-".into(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Cell::Text(s) => s.clone().into(),
            Cell::Int(i) => (*i).into(),
            Cell::Num(x, decimals) => {
                let scale = 10f64.powi(*decimals as i32);
                serde_json::Number::from_f64((x * scale).round() / scale)
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
            Cell::Empty => serde_json::Value::Null,
        }
    }

    fn is_text(&self) -> bool {
        matches!(self, Cell::Text(_))
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Self {
        Cell::Text(s.to_string())
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Self {
        Cell::Text(s)
    }
}

impl From<u32> for Cell {
    fn from(n: u32) -> Self {
        Cell::Int(i64::from(n))
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Self {
        Cell::Int(n.min(i64::MAX as u64) as i64)
    }
}

impl From<usize> for Cell {
    fn from(n: usize) -> Self {
        Cell::Int(n as i64)
    }
}

/// A titled table with notes printed under it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Shown above the table (and the key in JSON output).
    pub title: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
    /// Lines shown under the table in text output.
    pub notes: Vec<String>,
}

/// How to render tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for a terminal.
    #[default]
    Text,
    /// Comma-separated values, one header line per table.
    Csv,
    /// One JSON object: table title to a list of row objects.
    Json,
}

impl Table {
    /// A table with these columns and no rows yet.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Aligned text: text columns left, numbers right, a rule under the header.
    pub fn to_text(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::text).collect())
            .collect();
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.columns[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let left: Vec<bool> = (0..self.columns.len())
            .map(|c| {
                self.rows
                    .iter()
                    .all(|r| r[c].is_text() || r[c] == Cell::Empty)
            })
            .collect();
        let line = |values: &[String]| -> String {
            let parts: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    if left[c] {
                        format!("{v:<w$}", w = widths[c])
                    } else {
                        format!("{v:>w$}", w = widths[c])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = String::new();
        if !self.title.is_empty() {
            let _ = writeln!(out, "{}", self.title);
        }
        let _ = writeln!(out, "{}", line(&self.columns));
        let rule = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
        let _ = writeln!(out, "{}", "-".repeat(rule));
        for row in &cells {
            let _ = writeln!(out, "{}", line(row));
        }
        for note in &self.notes {
            let _ = writeln!(out, "{note}");
        }
        out
    }

    /// CSV with a header line; fields quoted when they need it.
    pub fn to_csv(&self) -> String {
        let field = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| field(c)).collect();
        let _ = writeln!(out, "{}", header.join(","));
        for row in &self.rows {
            let values: Vec<String> = row
                .iter()
                .map(|c| match c {
                    Cell::Empty => String::new(),
                    other => field(&other.text()),
                })
                .collect();
            let _ = writeln!(out, "{}", values.join(","));
        }
        out
    }

    /// The rows as JSON objects keyed by column name.
    pub fn to_json(&self) -> serde_json::Value {
        self.rows
            .iter()
            .map(|row| {
                let object: serde_json::Map<String, serde_json::Value> = self
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(c, v)| (c.clone(), v.json()))
                    .collect();
                serde_json::Value::Object(object)
            })
            .collect()
    }
}

/// Renders several tables in one format.
pub fn render(tables: &[Table], format: Format) -> String {
    match format {
        Format::Text => tables
            .iter()
            .map(Table::to_text)
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Csv => tables
            .iter()
            .map(|t| format!("# {}\n{}", t.title, t.to_csv()))
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Json => {
            let object: serde_json::Map<String, serde_json::Value> = tables
                .iter()
                .map(|t| (t.title.clone(), t.to_json()))
                .collect();
            serde_json::to_string_pretty(&serde_json::Value::Object(object))
                .expect("tables serialize")
                + "\n"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("standings", &["player", "games", "score %"]);
        t.rows
            .push(vec!["stockfish".into(), 4u32.into(), Cell::Num(87.5, 1)]);
        t.rows
            .push(vec!["a, \"quoted\" name".into(), 12u32.into(), Cell::Empty]);
        t.notes.push("a note".into());
        t
    }

    #[test]
    fn text_aligns_names_left_and_numbers_right() {
        let text = sample().to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "standings");
        assert!(lines[1].starts_with("player"), "{text}");
        assert!(
            lines[3].starts_with("stockfish ") && lines[3].ends_with(" 87.5"),
            "{text}"
        );
        assert!(lines[4].contains("   12"), "{text}");
        assert_eq!(lines[5], "a note");
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let csv = sample().to_csv();
        assert_eq!(
            csv,
            "player,games,score %\nstockfish,4,87.5\n\"a, \"\"quoted\"\" name\",12,\n"
        );
    }

    #[test]
    fn json_keeps_numbers_as_numbers() {
        let json = render(&[sample()], Format::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["standings"][0]["games"], 4);
        assert_eq!(v["standings"][0]["score %"], 87.5);
        assert!(v["standings"][1]["score %"].is_null());
    }
}
