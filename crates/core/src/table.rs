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
            Cell::Num(x, decimals) => fixed(*x, *decimals),
            Cell::Empty => "-".into(),
        }
    }

    fn json(&self) -> serde_json::Value {
        match self {
            Cell::Text(s) => s.clone().into(),
            Cell::Int(i) => (*i).into(),
            Cell::Num(x, decimals) => {
                let scale = 10f64.powi(*decimals as i32);
                serde_json::Number::from_f64(no_negative_zero((x * scale).round() / scale))
                    .map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
            Cell::Empty => serde_json::Value::Null,
        }
    }

    fn is_text(&self) -> bool {
        matches!(self, Cell::Text(_))
    }
}

/// `x`, or `0.0` for `-0.0`: JSON writes the sign of a negative zero (`"elo": -0.0`), which
/// reads as a loss where there is none.
pub(crate) fn no_negative_zero(x: f64) -> f64 {
    if x == 0.0 { 0.0 } else { x }
}

/// `x` with `decimals` decimals, where a value that rounds to zero is `0.0`, never `-0.0` (a
/// cost of `-0.0000 USD`, a difference of `-0.0`).
pub fn fixed(x: f64, decimals: usize) -> String {
    format!("{:.decimals$}", rounds_to_zero_as_zero(x, decimals))
}

/// [`fixed`] with its sign always written: `+1.5`, `-0.3`, and `+0.0` for what rounds to zero.
pub fn signed(x: f64, decimals: usize) -> String {
    format!("{:+.decimals$}", rounds_to_zero_as_zero(x, decimals))
}

/// `x`, or `0.0` when it shows as zero at `decimals` decimals.
fn rounds_to_zero_as_zero(x: f64, decimals: usize) -> f64 {
    let scale = 10f64.powi(decimals.min(300) as i32);
    if (x * scale).round() == 0.0 { 0.0 } else { x }
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

/// The version of the JSON document [`render`] writes for [`Format::Json`]; it changes only when
/// a name in it changes meaning or is removed (`docs/schema/tables.schema.json`).
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// A titled table with notes printed under it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Shown above the table.
    pub title: String,
    /// What the table is, as a stable snake_case name for programs (`standings`,
    /// `bradley_terry`, ...); the title is for people and may change.
    pub kind: String,
    /// The tournament (or evaluation run) the table describes, when it describes one.
    pub tournament: Option<String>,
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
    /// One JSON document: `schema_version` and a list of tables, each with its `kind`, its
    /// tournament, its columns and its rows keyed by snake_case column keys
    /// (`docs/schema/tables.schema.json`).
    Json,
    /// Markdown (GitHub's pipe tables): a bold title, the table, its notes as a list.
    #[value(name = "md", alias = "markdown")]
    Markdown,
    /// LaTeX: a `table` float holding a `tabular` with booktabs rules (`\usepackage{booktabs}`),
    /// the title as its caption, the notes under it; LaTeX's special characters escaped.
    Latex,
}

impl Table {
    /// A table with these columns and no rows yet.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        let title = title.into();
        Table {
            kind: snake_case(&title),
            title,
            tournament: None,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The same table under a stable `kind` (otherwise the kind is the title in snake_case).
    #[must_use]
    pub fn of_kind(mut self, kind: &str) -> Table {
        self.kind = kind.to_owned();
        self
    }

    /// Marks the table as `tournament`'s: its title is prefixed with the name for people, and
    /// the name is a field of its own in JSON.
    pub fn set_tournament(&mut self, tournament: &str) {
        self.title = format!("{tournament} · {}", self.title);
        self.tournament = Some(tournament.to_owned());
    }

    /// The JSON key of each column: its label in snake_case (`score %` is `score_pct`, `+/-` is
    /// `plus_minus`, `tokens/move` is `tokens_per_move`).
    pub(crate) fn column_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for label in &self.columns {
            let mut key = snake_case(label);
            if key.is_empty() {
                key = "value".to_owned();
            }
            // Two labels with one key (`Elo`, `elo`) keep apart by position.
            let base = key.clone();
            let mut n = 2;
            while keys.contains(&key) {
                key = format!("{base}_{n}");
                n += 1;
            }
            keys.push(key);
        }
        keys
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
        let left = self.text_columns();
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
    pub(crate) fn to_csv(&self) -> String {
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

    /// Which columns are text (aligned left); the others hold numbers (aligned right).
    fn text_columns(&self) -> Vec<bool> {
        (0..self.columns.len())
            .map(|c| {
                self.rows
                    .iter()
                    .all(|r| r[c].is_text() || r[c] == Cell::Empty)
            })
            .collect()
    }

    /// A Markdown pipe table under its title in bold, numbers aligned right, the notes as a
    /// list under it. A `|` in a cell is escaped and a line break becomes a space, so that a
    /// cell never breaks the table.
    pub(crate) fn to_markdown(&self) -> String {
        // `*` escaped too: a note such as "* provisional: ..." would otherwise open a list.
        let cell = |s: &str| {
            s.replace('\\', "\\\\")
                .replace('|', "\\|")
                .replace('*', "\\*")
                .replace(['\n', '\r'], " ")
        };
        let mut out = String::new();
        if !self.title.is_empty() {
            let _ = writeln!(out, "**{}**\n", cell(&self.title));
        }
        let header: Vec<String> = self.columns.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let rule: Vec<&str> = self
            .text_columns()
            .into_iter()
            .map(|left| if left { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for row in &self.rows {
            let values: Vec<String> = row.iter().map(|c| cell(&c.text())).collect();
            let _ = writeln!(out, "| {} |", values.join(" | "));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                let _ = writeln!(out, "- {}", cell(note));
            }
        }
        out
    }

    /// A LaTeX `table` float: the title as its caption, a `tabular` with booktabs rules (text
    /// columns `l`, numbers `r`), the notes in small type under it. Every cell, title and note
    /// is escaped ([`latex_escape`]); a negative number gets a true minus sign.
    pub(crate) fn to_latex(&self) -> String {
        let number = |c: &Cell| {
            let text = c.text();
            match (c, text.strip_prefix('-')) {
                (Cell::Num(..) | Cell::Int(_), Some(rest)) => format!("$-${}", latex_escape(rest)),
                (Cell::Empty, _) => "--".to_owned(),
                _ => latex_escape(&text),
            }
        };
        let spec: String = self
            .text_columns()
            .into_iter()
            .map(|left| if left { 'l' } else { 'r' })
            .collect();
        let mut out = String::new();
        let _ = writeln!(out, "\\begin{{table}}[htbp]");
        let _ = writeln!(out, "\\centering");
        if !self.title.is_empty() {
            let _ = writeln!(out, "\\caption{{{}}}", latex_escape(&self.title));
        }
        let _ = writeln!(out, "\\begin{{tabular}}{{{spec}}}");
        let _ = writeln!(out, "\\toprule");
        let header: Vec<String> = self.columns.iter().map(|c| latex_escape(c)).collect();
        let _ = writeln!(out, "{} \\\\", header.join(" & "));
        let _ = writeln!(out, "\\midrule");
        for row in &self.rows {
            let values: Vec<String> = row.iter().map(number).collect();
            let _ = writeln!(out, "{} \\\\", values.join(" & "));
        }
        let _ = writeln!(out, "\\bottomrule");
        let _ = writeln!(out, "\\end{{tabular}}");
        for note in &self.notes {
            let _ = writeln!(
                out,
                "\\par\\smallskip{{\\footnotesize {}}}",
                latex_escape(note)
            );
        }
        let _ = writeln!(out, "\\end{{table}}");
        out
    }

    /// The table as a JSON object: `kind`, `tournament` (or `null`), `title`, `columns` (each
    /// `key` and `label`), `rows` (objects keyed by column key; `null` where a value is unknown
    /// or not shown) and `notes`.
    pub fn to_json(&self) -> serde_json::Value {
        let keys = self.column_keys();
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|row| {
                let object: serde_json::Map<String, serde_json::Value> = keys
                    .iter()
                    .zip(row)
                    .map(|(k, v)| (k.clone(), v.json()))
                    .collect();
                serde_json::Value::Object(object)
            })
            .collect();
        let columns: Vec<serde_json::Value> = keys
            .iter()
            .zip(&self.columns)
            .map(|(key, label)| serde_json::json!({ "key": key, "label": label }))
            .collect();
        serde_json::json!({
            "kind": self.kind,
            "tournament": self.tournament,
            "title": self.title,
            "columns": columns,
            "rows": rows,
            "notes": self.notes,
        })
    }
}

/// `text` as a snake_case name: lower-case ASCII letters and digits joined by `_`, with the
/// signs tables use spelt out (`%` → `pct`, `/` → `per`, `+/-` and `±` → `plus_minus`,
/// `#` → `rank`).
pub fn snake_case(text: &str) -> String {
    let spelt = text
        .replace("+/-", " plus_minus ")
        .replace('±', " plus_minus ")
        .replace('%', " pct ")
        .replace('/', " per ")
        .replace('#', " rank ")
        .replace('Δ', " delta ");
    let mut out = String::new();
    for word in spelt.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// `text` for LaTeX's text mode: its ten special characters escaped (`\\ & % $ # _ { } ~ ^`),
/// and the signs arena's tables use that a plain LaTeX font lacks written as LaTeX commands
/// (`±` as `$\\pm$`, `Δ` as `$\\Delta$`, `√` as `$\\surd$`, `–` as `--`, ...).
pub(crate) fn latex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            '±' => out.push_str("$\\pm$"),
            'Δ' => out.push_str("$\\Delta$"),
            '×' => out.push_str("$\\times$"),
            '≤' => out.push_str("$\\leq$"),
            '≥' => out.push_str("$\\geq$"),
            '−' => out.push_str("$-$"),
            '√' => out.push_str("$\\surd$"),
            '≈' => out.push_str("$\\approx$"),
            '→' => out.push_str("$\\rightarrow$"),
            '∞' => out.push_str("$\\infty$"),
            '²' => out.push_str("$^2$"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '·' => out.push_str("\\textperiodcentered{}"),
            '…' => out.push_str("\\ldots{}"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
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
        Format::Markdown => tables
            .iter()
            .map(Table::to_markdown)
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Latex => tables
            .iter()
            .map(Table::to_latex)
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Json => {
            let document = serde_json::json!({
                "schema_version": SCHEMA_VERSION,
                "tables": tables.iter().map(Table::to_json).collect::<Vec<_>>(),
            });
            serde_json::to_string_pretty(&document).expect("tables serialize") + "\n"
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
    fn json_keeps_numbers_as_numbers_under_snake_case_keys() {
        let mut table = sample();
        table.set_tournament("quickstart");
        let json = render(&[table], Format::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        let t = &v["tables"][0];
        assert_eq!(t["kind"], "standings");
        assert_eq!(t["tournament"], "quickstart");
        assert_eq!(t["title"], "quickstart · standings");
        assert_eq!(t["columns"][2]["key"], "score_pct");
        assert_eq!(t["columns"][2]["label"], "score %");
        assert_eq!(t["rows"][0]["games"], 4);
        assert_eq!(t["rows"][0]["score_pct"], 87.5);
        assert!(t["rows"][1]["score_pct"].is_null());
    }

    #[test]
    fn a_zero_is_never_negative_in_text_or_json() {
        let mut t = Table::new("t", &["elo", "cost"]);
        t.rows
            .push(vec![Cell::Num(-0.0, 1), Cell::Num(-0.00001, 4)]);
        assert_eq!(t.rows[0][0].text(), "0.0");
        assert_eq!(t.rows[0][1].text(), "0.0000");
        let json = render(&[t], Format::Json);
        assert!(!json.contains("-0"), "{json}");
        assert!(json.contains("\"elo\": 0.0"), "{json}");
        assert_eq!(fixed(-0.00004, 4), "0.0000");
        assert_eq!(fixed(-0.00005, 4), "-0.0001");
        assert_eq!(signed(-0.04, 1), "+0.0");
        assert_eq!(signed(-0.06, 1), "-0.1");
        assert_eq!(signed(2.0, 0), "+2");
    }

    #[test]
    fn markdown_is_a_pipe_table_with_numbers_right_and_pipes_escaped() {
        let mut t = sample();
        t.rows
            .push(vec!["a|b".into(), Cell::Int(-3), Cell::Num(-0.0, 1)]);
        t.notes.push("* provisional".into());
        assert_eq!(
            t.to_markdown(),
            "**standings**\n\n\
             | player | games | score % |\n\
             | --- | ---: | ---: |\n\
             | stockfish | 4 | 87.5 |\n\
             | a, \"quoted\" name | 12 | - |\n\
             | a\\|b | -3 | 0.0 |\n\
             \n\
             - a note\n\
             - \\* provisional\n"
        );
    }

    #[test]
    fn latex_escapes_its_special_characters() {
        let mut t = Table::new("Elo ± 95% of m_1 & co", &["player", "Δ Elo", "games"]);
        t.rows.push(vec![
            "gpt_4o #1 {x} 50$ ~^\\".into(),
            Cell::Num(-12.34, 1),
            Cell::Empty,
        ]);
        t.notes.push("100% of games · 2–3".into());
        let latex = t.to_latex();
        assert_eq!(
            latex,
            "\\begin{table}[htbp]\n\
             \\centering\n\
             \\caption{Elo $\\pm$ 95\\% of m\\_1 \\& co}\n\
             \\begin{tabular}{lrl}\n\
             \\toprule\n\
             player & $\\Delta$ Elo & games \\\\\n\
             \\midrule\n\
             gpt\\_4o \\#1 \\{x\\} 50\\$ \\textasciitilde{}\\textasciicircum{}\\textbackslash{} & $-$12.3 & -- \\\\\n\
             \\bottomrule\n\
             \\end{tabular}\n\
             \\par\\smallskip{\\footnotesize 100\\% of games \\textperiodcentered{} 2--3}\n\
             \\end{table}\n"
        );
    }

    #[test]
    fn column_labels_become_snake_case_keys() {
        for (label, key) in [
            ("+/-", "plus_minus"),
            ("±95%", "plus_minus_95_pct"),
            ("tokens/move", "tokens_per_move"),
            ("#", "rank"),
            ("Rank held %", "rank_held_pct"),
            ("Elo (LLM Chess)", "elo_llm_chess"),
            ("1-0", "_1_0"),
        ] {
            assert_eq!(snake_case(label), key, "{label}");
        }
        let t = Table::new("t", &["Elo", "elo", "ELO"]);
        assert_eq!(t.column_keys(), ["elo", "elo_2", "elo_3"]);
    }
}
