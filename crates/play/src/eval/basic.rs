//! Basic understanding: given a FEN and a square, the model names the piece and lists its legal
//! moves as JSON (`{"piece": "N", "legal_moves": ["g1f3", "g1h3"]}`).
//!
//! Metrics: piece match accuracy (PMA) over all items; precision, recall and F1 of the move set,
//! zero when the piece is wrong. Two scorings are offered:
//!
//! - [`Scoring::ChessArena`] reproduces `chess_modeling_metric` (the version that wrote the
//!   published metrics files), quirks included:
//!   - a reply without a parsable ```` ```json ```` block is *skipped*: it counts as a piece
//!     mismatch in PMA but is left out of the precision/recall/F1 means;
//!   - the piece is stripped; JSON `null`, `""`, `false`, `0`, `[]` and `{}` mean "no piece", but
//!     the string `"None"` does not, so it never matches an empty square; a missing key is
//!     `"unknown"`;
//!   - an empty (or `null`) move list replaces the ground truth by the empty list too, so an empty
//!     prediction scores precision = recall = 1 whenever the piece matches;
//!   - predicted moves go through python-chess's SAN parser (`g1f3`, `Nf3`, `e2-e4` all become
//!     `g1f3`; anything unparsable is kept as written); non-string entries become Python's `str()`;
//!   - a missing `legal_moves` key becomes the string `"unknown"`, whose *characters* form the
//!     predicted set (precision and recall 0).
//!   - Where the Python code would crash (a non-string piece, a move "list" that is a string or
//!     an object), the item's moves score 0 here instead of aborting the run.
//! - [`Scoring::Strict`] is ours: every item counts in every mean; an unparsable reply scores 0;
//!   `"None"`, `"none"`, `"null"`, `"empty"` and `""` all mean no piece; the ground truth is never
//!   replaced, so an empty prediction for a piece that has moves has recall 0 (and precision 0),
//!   and listing moves for a piece that has none has precision 0.

use std::{collections::BTreeSet, sync::LazyLock};

use regex::Regex;
use serde_json::Value;

use super::{datasets::BasicItem, lenient_position};
use crate::board::{ExtractRule, Notation, Pick, Scope, SearchRule, extract_move};

/// Which scoring rules apply; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scoring {
    /// ChessArena's `chess_modeling_metric`, quirks included.
    ChessArena,
    /// Ours: empty predictions are not rewarded, every item counts.
    Strict,
}

impl Scoring {
    /// The stable name used in scripts and reports (`chessarena`, `strict`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Scoring::ChessArena => "chessarena",
            Scoring::Strict => "strict",
        }
    }

    /// The scoring with the given stable name.
    pub fn from_name(name: &str) -> Option<Scoring> {
        match name {
            "chessarena" => Some(Scoring::ChessArena),
            "strict" => Some(Scoring::Strict),
            _ => None,
        }
    }
}

/// How the JSON answer is found in a reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplyParse {
    /// ChessArena's rule: the last ```` ```json ... ``` ```` block, which must be valid JSON.
    LastJsonBlock,
    /// Ours: the last fenced block (any tag) holding a JSON object, else the last balanced
    /// `{...}` in the text that parses.
    Tolerant,
}

static JSON_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```json(.*?)```").expect("the json block pattern is valid"));
static ANY_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```[A-Za-z]*(.*?)```").expect("the block pattern is valid"));

/// Finds and parses the JSON answer in a reply; `None` when there is none.
pub fn parse_reply(reply: &str, mode: ReplyParse) -> Option<Value> {
    match mode {
        ReplyParse::LastJsonBlock => {
            let block = JSON_BLOCK.captures_iter(reply).last()?;
            super::datasets::parse_json_lenient(&block[1]).ok()
        }
        ReplyParse::Tolerant => {
            let blocks: Vec<_> = ANY_BLOCK.captures_iter(reply).collect();
            blocks
                .iter()
                .rev()
                .find_map(|b| {
                    super::datasets::parse_json_lenient::<Value>(&b[1])
                        .ok()
                        .filter(Value::is_object)
                })
                .or_else(|| {
                    object_spans(reply).into_iter().rev().find_map(|s| {
                        super::datasets::parse_json_lenient::<Value>(s)
                            .ok()
                            .filter(Value::is_object)
                    })
                })
        }
    }
}

/// The top-level balanced `{...}` spans of a text, ignoring braces inside JSON strings.
fn object_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if depth > 0 && in_string {
            match (c, escaped) {
                (_, true) => escaped = false,
                ('\\', false) => escaped = true,
                ('"', false) => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' if depth > 0 => in_string = true,
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    spans.push(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    spans
}

/// The score of one item.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ItemScore {
    /// False when ChessArena's scoring leaves the item out of the precision/recall/F1 means
    /// (no parsable JSON); the item still counts in PMA as a mismatch.
    pub counted: bool,
    /// Whether the predicted piece equals the true one.
    pub piece_match: bool,
    /// Precision of the predicted move set.
    pub precision: f64,
    /// Recall of the predicted move set.
    pub recall: f64,
    /// F1 of precision and recall.
    pub f1: f64,
    /// The predicted piece as compared (`None` = no piece).
    pub predicted_piece: Option<String>,
    /// The predicted moves as compared, in the reply's order.
    pub predicted_moves: Vec<String>,
}

impl ItemScore {
    fn skipped() -> ItemScore {
        ItemScore {
            counted: false,
            piece_match: false,
            precision: 0.0,
            recall: 0.0,
            f1: 0.0,
            predicted_piece: None,
            predicted_moves: Vec::new(),
        }
    }
}

/// Scores one reply's parsed JSON (`None` when none was found) against an item.
pub fn score(item: &BasicItem, parsed: Option<&Value>, scoring: Scoring) -> ItemScore {
    match scoring {
        Scoring::ChessArena => score_chessarena(item, parsed),
        Scoring::Strict => score_strict(item, parsed),
    }
}

/// Python truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python's `str()` of a JSON value, close enough to keep distinct values distinct.
fn python_str(v: &Value) -> String {
    match v {
        Value::Null => "None".to_owned(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn score_chessarena(item: &BasicItem, parsed: Option<&Value>) -> ItemScore {
    // The version that produced the published files skipped replies whose JSON was missing; a
    // JSON document that is not an object would have crashed on `.get`, and is skipped too.
    let Some(Value::Object(answer)) = parsed else {
        return ItemScore::skipped();
    };
    let unknown = Value::String("unknown".to_owned());
    let piece_value = answer.get("piece").unwrap_or(&unknown);
    let moves_value = answer.get("legal_moves").unwrap_or(&unknown);
    let predicted_piece = match piece_value {
        v if !truthy(v) => None,
        Value::String(s) => Some(s.trim().to_owned()),
        other => Some(other.to_string()),
    };
    let truth_piece = item
        .piece
        .as_deref()
        .filter(|p| !p.is_empty())
        .map(|p| p.trim().to_owned());
    let position = lenient_position(&item.fen).ok();
    let (predicted_moves, truth_moves): (Vec<String>, Vec<String>) = match moves_value {
        v if !truthy(v) => (Vec::new(), Vec::new()),
        Value::String(s) if s == "unknown" => (
            s.chars().map(String::from).collect(),
            item.legal_moves.clone(),
        ),
        Value::Array(list) => (
            list.iter()
                .map(|m| {
                    let text = python_str(m);
                    match &position {
                        Some(pos) => crate::board::san_compat::san_to_uci(&text, pos),
                        None => text,
                    }
                })
                .collect(),
            item.legal_moves.clone(),
        ),
        // Python raises here; nothing predicted can be right.
        _ => (Vec::new(), item.legal_moves.clone()),
    };
    let crashed = matches!(moves_value, v if truthy(v) && !v.is_array() && *v != unknown)
        || (truthy(piece_value) && !piece_value.is_string());
    let piece_match = predicted_piece == truth_piece;
    let (precision, recall, f1) = if piece_match && !crashed {
        set_scores(&predicted_moves, &truth_moves)
    } else {
        (0.0, 0.0, 0.0)
    };
    ItemScore {
        counted: true,
        piece_match,
        precision,
        recall,
        f1,
        predicted_piece,
        predicted_moves,
    }
}

fn strict_piece(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::String(s)) => {
            let s = s.trim();
            let none = ["", "none", "null", "empty", "nothing", "-"];
            (!none.contains(&s.to_ascii_lowercase().as_str())).then(|| s.to_owned())
        }
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

fn score_strict(item: &BasicItem, parsed: Option<&Value>) -> ItemScore {
    let Some(Value::Object(answer)) = parsed else {
        return ItemScore {
            counted: true,
            ..ItemScore::skipped()
        };
    };
    let predicted_piece = strict_piece(answer.get("piece"));
    let truth_piece = item
        .piece
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let position = lenient_position(&item.fen).ok();
    let rule = ExtractRule::Search(SearchRule {
        pick: Pick::Last,
        scope: Scope::Anywhere,
        notations: vec![Notation::Uci, Notation::San],
    });
    let predicted_moves: Vec<String> = match answer.get("legal_moves") {
        Some(Value::Array(list)) => list
            .iter()
            .map(|m| {
                let text = python_str(m);
                // A move the position does not allow stays as written and counts as wrong.
                position
                    .as_ref()
                    .and_then(|pos| extract_move(&text, pos, &rule).ok())
                    .filter(|found| found.matched.trim() == text.trim())
                    .map_or(text, |found| found.uci)
            })
            .collect(),
        _ => Vec::new(),
    };
    let piece_match = predicted_piece.as_deref() == truth_piece;
    let (precision, recall, f1) = if piece_match {
        set_scores(&predicted_moves, &item.legal_moves)
    } else {
        (0.0, 0.0, 0.0)
    };
    ItemScore {
        counted: true,
        piece_match,
        precision,
        recall,
        f1,
        predicted_piece,
        predicted_moves,
    }
}

/// ChessArena's `evaluate_sets`: precision, recall and F1 of two sets, with precision 1 for an
/// empty prediction of an empty truth and recall 1 for an empty truth predicted empty.
pub(crate) fn set_scores(predicted: &[String], truth: &[String]) -> (f64, f64, f64) {
    let predicted: BTreeSet<&str> = predicted.iter().map(String::as_str).collect();
    let truth: BTreeSet<&str> = truth.iter().map(String::as_str).collect();
    let hits = predicted.intersection(&truth).count() as f64;
    let precision = if predicted.is_empty() {
        if truth.is_empty() { 1.0 } else { 0.0 }
    } else {
        hits / predicted.len() as f64
    };
    let recall = if truth.is_empty() {
        if predicted.is_empty() { 1.0 } else { 0.0 }
    } else {
        hits / truth.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1)
}

/// Aggregate basic-understanding metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct BasicMetrics {
    /// Piece matches over all items.
    pub piece_match_rate: f64,
    /// Mean precision over counted items.
    pub precision: f64,
    /// Mean recall over counted items.
    pub recall: f64,
    /// Mean F1 over counted items.
    pub f1: f64,
    /// Number of items.
    pub total: usize,
    /// Number of items in the precision/recall/F1 means.
    pub counted: usize,
}

/// Aggregates item scores: PMA over all items, the set metrics over counted items (0 when none
/// is counted, where ChessArena would divide by zero). Sums run in item order, as Python's `sum`.
pub fn aggregate(scores: &[ItemScore]) -> BasicMetrics {
    let counted: Vec<&ItemScore> = scores.iter().filter(|s| s.counted).collect();
    let mean = |f: fn(&ItemScore) -> f64| {
        if counted.is_empty() {
            0.0
        } else {
            counted.iter().fold(0.0, |acc, s| acc + f(s)) / counted.len() as f64
        }
    };
    let matches = scores.iter().filter(|s| s.piece_match).count();
    BasicMetrics {
        piece_match_rate: if scores.is_empty() {
            0.0
        } else {
            matches as f64 / scores.len() as f64
        },
        precision: mean(|s| s.precision),
        recall: mean(|s| s.recall),
        f1: mean(|s| s.f1),
        total: scores.len(),
        counted: counted.len(),
    }
}

#[cfg(test)]
mod tests;
