//! `arena score-recorded`: score predictions recorded by another program (ChessArena's
//! basic-understanding files).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use arena::{eval, report};

use super::common::write_stdout;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The task the predictions answer (only `basic_understanding` for now).
    #[arg(long)]
    task: String,
    /// The JSONL prediction file.
    #[arg(long)]
    predictions: PathBuf,
    /// `strict` or `chessarena`.
    #[arg(long, default_value = "chessarena")]
    scoring: String,
    /// How the answer is read: `chessarena` (last ```json block) or `tolerant`.
    #[arg(long, default_value = "chessarena")]
    parser: String,
    /// Questions the run asked; missing lines count as replies without an answer.
    #[arg(long)]
    total: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = report::Format::Text)]
    format: report::Format,
}

pub(super) fn run(args: Args) -> Result<u8> {
    let Args {
        task,
        predictions,
        scoring,
        parser,
        total,
        format,
    } = args;
    if task != "basic_understanding" {
        bail!("recorded predictions can be scored for basic_understanding only, not `{task}`");
    }
    let scoring = eval::basic::Scoring::from_name(&scoring)
        .with_context(|| format!("unknown scoring `{scoring}` (strict or chessarena)"))?;
    let parse = match parser.as_str() {
        "chessarena" => eval::basic::ReplyParse::LastJsonBlock,
        "tolerant" => eval::basic::ReplyParse::Tolerant,
        other => bail!("unknown parser `{other}` (chessarena or tolerant)"),
    };
    let metrics = eval::recorded::score_basic_predictions(&predictions, parse, scoring, total)?;
    let name = predictions.file_stem().map_or_else(
        || "predictions".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    let table = eval::recorded::basic_table(&name, &metrics);
    match format {
        // Full precision, keyed as ChessArena's metrics files, for comparison.
        report::Format::Json => write_stdout(&format!(
            "{}\n",
            serde_json::json!({
                "piece_match_rate": metrics.piece_match_rate,
                "precision": metrics.precision,
                "recall": metrics.recall,
                "f1": metrics.f1,
                "total_num": metrics.total,
                "counted": metrics.counted,
            })
        ))?,
        other => write_stdout(&report::render(&[table], other))?,
    }
    Ok(0)
}
