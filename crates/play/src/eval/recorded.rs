//! Scoring predictions recorded elsewhere: ChessArena's basic-understanding prediction files
//! (`{prompt, response, ground_truth, ...}` per line) scored with our readers and metrics, with
//! no model and no store involved.

use std::path::Path;

use serde_json::Value;

use super::{
    EvalError,
    basic::{self, BasicMetrics, ReplyParse, Scoring},
    datasets::{BasicItem, SquareKind, fen_from_prompt, parse_json_lenient},
};
use crate::table::{Cell, Table};

/// Scores a basic-understanding prediction file. `total` is the number of questions the run
/// asked: ChessArena wrote no line for a reply without JSON, so the missing lines are scored as
/// replies without an answer (which needs no item: such a reply scores the same on any item).
///
/// # Errors
/// [`EvalError::Io`] for an unreadable file; [`EvalError::Data`] naming the line of a row
/// without a prompt, a FEN, a square, a response or a ground truth.
pub fn score_basic_predictions(
    path: &Path,
    parse: ReplyParse,
    scoring: Scoring,
    total: Option<usize>,
) -> Result<BasicMetrics, EvalError> {
    let text = std::fs::File::open(path)
        .and_then(|file| {
            crate::lines::read_to_string_limited(file, super::datasets::MAX_DATASET_BYTES)
        })
        .map_err(|source| EvalError::Io {
            path: path.to_owned(),
            source,
        })?;
    let bad = |line: usize, message: &str| EvalError::Data {
        task: "basic_understanding".to_owned(),
        message: format!("{}:{line}: {message}", path.display()),
    };
    let mut scores = Vec::new();
    let mut first: Option<BasicItem> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row: Value = parse_json_lenient(line).map_err(|e| bad(i + 1, &e.to_string()))?;
        let prompt = row["prompt"]
            .as_str()
            .ok_or_else(|| bad(i + 1, "no `prompt`"))?;
        let fen = row["fen"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| fen_from_prompt(prompt))
            .ok_or_else(|| bad(i + 1, "no FEN in the row or its prompt"))?;
        let square = row["square"]
            .as_str()
            .or_else(|| {
                prompt
                    .rsplit("Position:")
                    .next()
                    .filter(|_| prompt.contains("Position:"))
            })
            .map(|s| s.trim().to_owned())
            .ok_or_else(|| bad(i + 1, "no square in the row or its prompt"))?;
        let truth = &row["ground_truth"];
        let item = BasicItem {
            fen,
            square,
            piece: truth["piece"].as_str().map(str::to_owned),
            legal_moves: serde_json::from_value(truth["legal_moves"].clone())
                .map_err(|_| bad(i + 1, "no `ground_truth.legal_moves` list"))?,
            kind: SquareKind::OwnPiece,
            system: None,
            prompt: None,
        };
        let response = row["response"]
            .as_str()
            .ok_or_else(|| bad(i + 1, "no `response`"))?;
        let parsed = basic::parse_reply(response, parse);
        scores.push(basic::score(&item, parsed.as_ref(), scoring));
        first.get_or_insert(item);
    }
    if let (Some(total), Some(item)) = (total, &first) {
        while scores.len() < total {
            scores.push(basic::score(item, None, scoring));
        }
    }
    Ok(basic::aggregate(&scores))
}

/// The metrics as a one-row table in Table 2's layout (percentages).
pub fn basic_table(name: &str, m: &BasicMetrics) -> Table {
    let mut t = Table::new(
        "recorded basic_understanding",
        &[
            "Model or Engine",
            "items",
            "PMA",
            "Precision",
            "Recall",
            "F1",
            "no answer",
        ],
    );
    let pct = |x: f64| Cell::Num(x * 100.0, 2);
    t.rows.push(vec![
        name.into(),
        m.total.into(),
        pct(m.piece_match_rate),
        pct(m.precision),
        pct(m.recall),
        pct(m.f1),
        (m.total - m.counted).into(),
    ]);
    t
}
