//! Scores of stored answers and the per-task tables: each item's score is kept as JSON in the
//! store, and the tables are aggregated from those rows, so a report never needs a model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    EvalError,
    basic::{self, ItemScore, Scoring},
    datasets::{BasicItem, MoveSelectionItem},
    items::ReconstructionItem,
    move_selection::{self, ChosenMove, MoveScore, ReadAs},
    puzzles::{self, CHESSARENA_BANDS},
    reconstruction::{self, FenMatch},
    spec::TaskKind,
};
use crate::{
    store::EvalResultRow,
    table::{Cell, Table},
};

/// How a puzzle ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PuzzleResult {
    /// The puzzle's rating.
    pub rating: i64,
    /// Solved (every move found, or a mating alternative).
    pub solved: bool,
    /// Solved by a mate that is not the solution's move.
    pub by_alternative_mate: bool,
    /// The solver move at which it failed, 1-based.
    pub failed_step: Option<usize>,
    /// Why it failed: `no_valid_move` or `wrong_move`.
    pub failure: Option<String>,
    /// Solver moves in the solution.
    pub solver_moves: usize,
}

fn bad_item(task: TaskKind, e: serde_json::Error) -> EvalError {
    EvalError::Data {
        task: task.as_str().to_owned(),
        message: format!("a stored item does not read back: {e}"),
    }
}

/// Scores one single-answer item (every task but puzzles) from its parsed answer (`None` when
/// the reply held none).
///
/// # Errors
/// [`EvalError::Data`] when the stored item does not read back.
pub(crate) fn score_single(
    task: TaskKind,
    item_json: &str,
    answer: Option<&Value>,
    scoring: Scoring,
) -> Result<Value, EvalError> {
    let value = match task {
        TaskKind::BasicUnderstanding => {
            let item: BasicItem = serde_json::from_str(item_json).map_err(|e| bad_item(task, e))?;
            serde_json::to_value(basic::score(&item, answer, scoring))
        }
        TaskKind::MoveSelection => {
            let item: MoveSelectionItem =
                serde_json::from_str(item_json).map_err(|e| bad_item(task, e))?;
            let chosen = answer.and_then(|a| {
                Some(ChosenMove {
                    uci: a.get("uci")?.as_str()?.to_owned(),
                    read_as: match a.get("read_as").and_then(Value::as_str) {
                        Some("san") => ReadAs::San,
                        _ => ReadAs::Uci,
                    },
                })
            });
            serde_json::to_value(move_selection::score(&item, chosen.as_ref()))
        }
        TaskKind::BoardReconstruction => {
            let item: ReconstructionItem =
                serde_json::from_str(item_json).map_err(|e| bad_item(task, e))?;
            let stated = answer.and_then(|a| a.get("fen")).and_then(Value::as_str);
            serde_json::to_value(reconstruction::compare(&item.fen, stated))
        }
        TaskKind::Puzzles => {
            return Err(EvalError::Data {
                task: task.as_str().to_owned(),
                message: "puzzles are scored move by move, not from one answer".to_owned(),
            });
        }
    };
    Ok(value.expect("scores serialize"))
}

/// Results grouped by player, in the given player order (players without results are left out).
fn by_player<'a, T: serde::de::DeserializeOwned>(
    task: TaskKind,
    rows: &'a [EvalResultRow],
    players: &[String],
) -> Result<Vec<(&'a str, Vec<T>)>, EvalError> {
    let mut grouped: BTreeMap<&str, Vec<T>> = BTreeMap::new();
    for r in rows {
        let score: T = serde_json::from_str(&r.score_json).map_err(|e| bad_item(task, e))?;
        grouped.entry(r.player.as_str()).or_default().push(score);
    }
    let mut out = Vec::new();
    for p in players {
        if let Some((name, scores)) = grouped.remove_entry(p.as_str()) {
            out.push((name, scores));
        }
    }
    out.extend(grouped);
    Ok(out)
}

fn pct(x: f64) -> Cell {
    Cell::Num(x * 100.0, 2)
}

/// The table of one task: a row per player in the paper's layout (Table 2 for basic
/// understanding, Table 3 for move selection, Table 17 for puzzles, exact-FEN accuracy with the
/// per-field rates for board reconstruction). Rates are percentages.
///
/// # Errors
/// [`EvalError::Data`] when a stored score does not read back.
pub(crate) fn task_table(
    label: &str,
    task: TaskKind,
    rows: &[EvalResultRow],
    players: &[String],
) -> Result<Table, EvalError> {
    let title = if label == task.as_str() {
        label.to_owned()
    } else {
        format!("{label} ({})", task.as_str())
    };
    let table = match task {
        TaskKind::BasicUnderstanding => {
            let mut t = Table::new(
                title,
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
            for (player, scores) in by_player::<ItemScore>(task, rows, players)? {
                let m = basic::aggregate(&scores);
                t.rows.push(vec![
                    player.into(),
                    m.total.into(),
                    pct(m.piece_match_rate),
                    pct(m.precision),
                    pct(m.recall),
                    pct(m.f1),
                    (m.total - m.counted).into(),
                ]);
            }
            t
        }
        TaskKind::MoveSelection => {
            let mut t = Table::new(
                title,
                &["Model or Engine", "items", "LR", "TR", "MAR", "UCI", "SAN"],
            );
            for (player, scores) in by_player::<MoveScore>(task, rows, players)? {
                let m = move_selection::aggregate(&scores);
                t.rows.push(vec![
                    player.into(),
                    m.total.into(),
                    pct(m.legal_rate),
                    pct(m.top_rate),
                    Cell::Num(m.move_advantage_rate, 4),
                    m.uci_count.into(),
                    m.san_count.into(),
                ]);
            }
            t
        }
        TaskKind::Puzzles => {
            let mut columns = vec!["Model or Engine".to_owned()];
            columns.extend(CHESSARENA_BANDS.iter().map(|(lo, hi)| format!("{lo}-{hi}")));
            columns.extend(["Overall".to_owned(), "items".to_owned()]);
            let mut t = Table {
                title,
                columns,
                ..Table::default()
            };
            for (player, results) in by_player::<PuzzleResult>(task, rows, players)? {
                let report = puzzles::aggregate(results.iter().map(|r| (r.rating, r.solved)));
                let cell = |tally: &puzzles::Tally| {
                    tally
                        .accuracy()
                        .map_or(Cell::Empty, |a| Cell::Num(a * 100.0, 1))
                };
                let mut row: Vec<Cell> = vec![player.into()];
                row.extend(report.bands.iter().map(cell));
                row.push(cell(&report.overall));
                row.push(report.overall.total.into());
                t.rows.push(row);
            }
            t
        }
        TaskKind::BoardReconstruction => {
            let mut t = Table::new(
                title,
                &[
                    "Model or Engine",
                    "items",
                    "Accuracy",
                    "board",
                    "side",
                    "castling",
                    "en passant",
                    "halfmove",
                    "fullmove",
                ],
            );
            for (player, scores) in by_player::<FenMatch>(task, rows, players)? {
                let m = reconstruction::aggregate(&scores);
                t.rows.push(vec![
                    player.into(),
                    m.total.into(),
                    pct(m.exact),
                    pct(m.board),
                    pct(m.side),
                    pct(m.castling),
                    pct(m.en_passant),
                    pct(m.halfmove),
                    pct(m.fullmove),
                ]);
            }
            t
        }
    };
    // The kind names the task, whatever the label the run gave it.
    Ok(table.of_kind(task.as_str()))
}

/// The per-item rows of a task for inspection: item, player, calls, parsed answer and score.
pub(crate) fn items_table(label: &str, rows: &[ItemDetail<'_>]) -> Table {
    let mut t = Table::new(
        format!("{label} items"),
        &[
            "item", "key", "player", "calls", "prompt", "reply", "parsed", "score",
        ],
    )
    .of_kind("eval_items");
    for d in rows {
        let r = d.result;
        t.rows.push(vec![
            Cell::Int(i64::from(r.idx)),
            d.key.into(),
            r.player.as_str().into(),
            Cell::Int(i64::from(r.calls)),
            d.prompt.map_or(Cell::Empty, Cell::from),
            d.reply.map_or(Cell::Empty, Cell::from),
            r.parsed_json.as_str().into(),
            r.score_json.as_str().into(),
        ]);
    }
    t
}

/// One scored item with what it was asked and answered, for [`items_table`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct ItemDetail<'a> {
    /// The scored result.
    pub result: &'a EvalResultRow,
    /// The item's key (its FEN, square, puzzle id...).
    pub key: &'a str,
    /// The last message the player was sent, if it was sent one.
    pub prompt: Option<&'a str>,
    /// The player's last reply.
    pub reply: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(player: &str, idx: u32, score: Value) -> EvalResultRow {
        EvalResultRow {
            idx,
            player: player.into(),
            calls: 1,
            parsed_json: "null".into(),
            score_json: score.to_string(),
        }
    }

    #[test]
    fn single_answers_are_scored_and_tabulated() {
        let item = BasicItem::from_position("8/8/8/8/8/8/4P3/4K2k w - - 0 1", "e2").unwrap();
        let item_json = serde_json::to_string(&item).unwrap();
        let right = serde_json::json!({"piece": "P", "legal_moves": ["e2e3", "e2e4"]});
        let good = score_single(
            TaskKind::BasicUnderstanding,
            &item_json,
            Some(&right),
            Scoring::Strict,
        )
        .unwrap();
        let none = score_single(
            TaskKind::BasicUnderstanding,
            &item_json,
            None,
            Scoring::Strict,
        )
        .unwrap();
        let rows = vec![
            row("a", 0, good),
            row("a", 1, none.clone()),
            row("b", 0, none),
        ];
        let t = task_table(
            "basic",
            TaskKind::BasicUnderstanding,
            &rows,
            &["b".into(), "a".into()],
        )
        .unwrap();
        assert_eq!(t.rows[0][0], Cell::Text("b".into()));
        assert_eq!(t.rows[1][2], Cell::Num(50.0, 2));
        assert_eq!(t.rows[1][5], Cell::Num(50.0, 2));

        let recon = crate::eval::items::reconstruction_item(None, &["e2e4".into()]).unwrap();
        let s = score_single(
            TaskKind::BoardReconstruction,
            &serde_json::to_string(&recon).unwrap(),
            Some(&serde_json::json!({"fen": recon.fen})),
            Scoring::Strict,
        )
        .unwrap();
        assert_eq!(s["exact"], true);
    }
}
