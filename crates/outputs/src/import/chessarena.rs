//! ChessArena's `simulation_record` trees: `game_<ts>_<i>_results.json` (one game each) and
//! `simulation_summary.json` (one per simulation), in all four modes.
//!
//! What a results file holds and how it becomes arena's (facts from ChessArena's
//! `run_simulation.py` and `elo_calculate.py`, commit be1bc27e):
//! - Players are named as ChessArena's ratings name them: the file's `white_player` (already
//!   `<model>_<mode>`, blindfold written `blindfold`) plus `_True` or `_False` for the legal-moves
//!   flag (`white_player_provide_legal_moves`, which early records lack: ChessArena then assumes
//!   `True`, and so does the import, saying so in the player's settings). Any name containing
//!   `random` is `random_player_blitz_True`, as in ChessArena.
//! - The result is the file's; terminations map one to one (`75_move_rule` is
//!   `seventy_five_move_rule`), the file's own word kept as the game's reason.
//! - `move_details[i].chat_history` (absent from early records) is a list of attempt records,
//!   each the messages sent plus the reply with its `status`: every reply becomes an LLM call
//!   whose request is the messages before it, with outcome `move` (`successful move`),
//!   `no_move_found` (`parsing_error`), `unparseable` (`Invalid UCI format`), `illegal`
//!   (`illegal move`), `forbidden_reasoning` (`forbidden_thinking`) or `error` (`other error`:
//!   the call brought no usable reply, which ChessArena counts as an attempt and nothing else).
//! - The engine data of a ply (`position_win_rate_before`, `top_moves` with Win%,
//!   `move_win_rate`, `move_ranking`; Stockfish 8 at depth 20 with ChessArena's Win% model) is kept
//!   verbatim with the ply's last call (`raw_body`) and with the game's import event; `arena
//!   analyze` computes arena's own analysis of the same moves.
//! - No tokens are recorded by ChessArena, so the calls carry none; `response_time` (the
//!   successful call's only) becomes the accepted call's latency and the ply's time.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    ImportError, ImportedCall, ImportedGame, ImportedPlayer, Report, Skip, SkipKind, Writer,
    default_name, read_json, read_typed, walk,
};
use crate::{
    board::{GameResult, Termination},
    store::Store,
};

/// The importer's name, in tournament settings and CLI.
pub(crate) const IMPORTER: &str = "chessarena";

/// Imports every ChessArena record under `root` into the tournament `name` (default
/// `chessarena:<folder>`).
///
/// # Errors
/// [`ImportError`] when the folder cannot be walked, the tournament is not an import of this kind,
/// or the store fails; files that cannot be imported are reported in [`Report::skipped`].
pub fn import(store: &Store, root: &Path, name: Option<&str>) -> Result<Report, ImportError> {
    let files = walk(root)?;
    let name = name.map_or_else(|| default_name(IMPORTER, root), str::to_owned);
    let mut writer = Writer::open(
        store,
        &name,
        IMPORTER,
        root,
        json!({ "max_plies": 200, "rating": "glicko-1, one game per period, in game_id order" }),
    )?;
    let mut report = Report {
        tournament: writer.tournament_name().to_owned(),
        ..Report::default()
    };
    let mut games = Vec::new();
    let mut summaries = Vec::new();
    // Remarks that concern many records are counted, then reported once.
    let mut remarks: std::collections::BTreeMap<String, usize> = Default::default();
    for file in files {
        let file_name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let not_a_game = |reason: &str| Skip {
            path: file.clone(),
            line: None,
            reason: reason.to_owned(),
            kind: SkipKind::NotAGame,
        };
        if file_name.ends_with("_results.json") {
            match read_game(&file) {
                Ok((game, notes)) => {
                    for note in notes {
                        *remarks.entry(note).or_default() += 1;
                    }
                    games.push(game);
                }
                Err(skip) => report.skipped.push(skip),
            }
        } else if file_name == "simulation_summary.json" {
            match read_json::<Value>(&file) {
                Ok(summary) => summaries.push((file, summary)),
                Err(skip) => report.skipped.push(skip),
            }
        } else if file_name == "ratings.json" {
            report.skipped.push(not_a_game(
                "ChessArena's ratings, not a game record (`arena leaderboard --chessarena-compat` rates the imported games)",
            ));
        } else if file_name.ends_with(".log") {
            report.skipped.push(not_a_game(
                "a game's text log; its `_results.json` holds the record",
            ));
        } else {
            report.skipped.push(not_a_game(
                "not a ChessArena game record or simulation summary",
            ));
        }
    }
    for (remark, count) in remarks {
        report.notes.push(format!("{count} record(s): {remark}"));
    }
    // ChessArena rates games in `game_id` order; importing in that order makes arena's ratings
    // of one import follow the same order.
    games.sort_by(|a, b| a.source_id.cmp(&b.source_id).then(a.file.cmp(&b.file)));
    for game in &games {
        writer.write(game, &mut report)?;
    }
    for (file, summary) in summaries {
        check_summary(&file, &summary, &games, &mut report);
        let key = writer.relative(&file);
        writer.record_once("chessarena_summary", &key, summary)?;
    }
    Ok(report)
}

#[derive(Debug, Deserialize)]
struct ResultsFile {
    game_id: String,
    white_player: String,
    white_play_mode: Option<String>,
    white_player_provide_legal_moves: Option<bool>,
    black_player: String,
    black_play_mode: Option<String>,
    black_player_provide_legal_moves: Option<bool>,
    result: String,
    termination: String,
    moves: Vec<String>,
    #[serde(default)]
    move_details: Vec<Value>,
    final_fen: Option<String>,
}

/// Reads one results file into a game (not yet replayed), with remarks for the report.
fn read_game(path: &Path) -> Result<(ImportedGame, Vec<String>), Skip> {
    let (file, mut record): (ResultsFile, Value) = read_typed(path, "a ChessArena results record")?;
    let invalid = |reason: String| Skip {
        path: path.to_owned(),
        line: None,
        reason,
        kind: SkipKind::Invalid,
    };
    let result: GameResult = file
        .result
        .parse()
        .map_err(|_| invalid(format!("unknown result `{}`", file.result)))?;
    let termination = termination(&file.termination)
        .ok_or_else(|| invalid(format!("unknown termination `{}`", file.termination)))?;
    let mut notes = Vec::new();
    let white = player(
        &file.white_player,
        file.white_play_mode.as_deref(),
        file.white_player_provide_legal_moves,
    );
    let black = player(
        &file.black_player,
        file.black_play_mode.as_deref(),
        file.black_player_provide_legal_moves,
    );
    if white.name == black.name {
        return Err(invalid(format!(
            "both sides are `{}`: ChessArena leaves self-play out of its ratings, and so does the import",
            white.name
        )));
    }

    let plies = file.moves.len();
    let mut attempts = vec![1; plies];
    let mut elapsed_ms = vec![0; plies];
    let mut fens_before = vec![None; plies];
    let mut calls = Vec::new();
    let mut without_dialog = 0;
    for (index, detail) in file.move_details.iter().enumerate() {
        let Some(number) = detail["move_number"].as_u64().filter(|n| *n >= 1) else {
            return Err(invalid(format!(
                "move_details[{index}] has no `move_number`"
            )));
        };
        let ply = (number - 1) as usize;
        let mover = if ply.is_multiple_of(2) {
            &white
        } else {
            &black
        };
        if ply < plies {
            if detail["move"].as_str() != Some(file.moves[ply].as_str()) {
                return Err(invalid(format!(
                    "move_details[{index}] gives move {} for ply {number}, but `moves` has `{}`",
                    detail["move"], file.moves[ply]
                )));
            }
            attempts[ply] = detail["attempt_stats"]["total_attempts"]
                .as_u64()
                .unwrap_or(1) as u32;
            elapsed_ms[ply] = seconds_to_ms(&detail["response_time"]);
            fens_before[ply] = detail["fen_before"].as_str().map(str::to_owned);
        } else if ply > plies || detail["move"].as_str().is_some() {
            return Err(invalid(format!(
                "move_details[{index}] is for ply {number}, after the game's {plies} moves"
            )));
        }
        match detail.get("chat_history") {
            Some(Value::Array(records)) => {
                calls.extend(calls_of(ply as u32, mover, records, detail));
            }
            _ => without_dialog += 1,
        }
    }
    if without_dialog > 0 {
        notes.push(
            "plies without `chat_history` (the early schema): only their moves and statistics are imported, no replies"
                .to_owned(),
        );
    }
    if file.white_player_provide_legal_moves.is_none()
        || file.black_player_provide_legal_moves.is_none()
    {
        notes.push(
            "no `*_player_provide_legal_moves`: the player is named with ChessArena's default, `_True`"
                .to_owned(),
        );
    }

    // The dialogs are stored as calls; the event keeps the rest of the record.
    if let Some(details) = record["move_details"].as_array_mut() {
        for d in details {
            if let Some(d) = d.as_object_mut() {
                d.remove("chat_history");
            }
        }
    }
    let game = ImportedGame {
        // game_id is a simulation's start time and the game's number in it; two simulations can
        // start in the same second, so the players complete the key.
        source_id: format!(
            "{}|{}|{}",
            file.game_id, file.white_player, file.black_player
        ),
        file: path.to_owned(),
        white,
        black,
        moves: file.moves,
        attempts,
        elapsed_ms,
        fens_before,
        final_fen: file.final_fen,
        result,
        termination,
        reason: file.termination,
        calls,
        record,
    };
    Ok((game, notes))
}

/// ChessArena's termination words in arena's terms.
pub fn termination(word: &str) -> Option<Termination> {
    Some(match word {
        "checkmate" => Termination::Checkmate,
        "stalemate" => Termination::Stalemate,
        "insufficient_material" => Termination::InsufficientMaterial,
        "75_move_rule" => Termination::SeventyFiveMoveRule,
        "fivefold_repetition" => Termination::FivefoldRepetition,
        "move_limit" => Termination::MoveLimit,
        "forfeit" => Termination::Forfeit,
        _ => return None,
    })
}

/// ChessArena's mode names in ratings (`blindfold_multiTurn` is `blindfold`).
fn rated_mode(play_mode: &str) -> &str {
    match play_mode {
        "blindfold_multiTurn" | "blindfold_singleTurn" => "blindfold",
        other => other,
    }
}

/// The name ChessArena's ratings give a player, and its legal-moves flag: `elo_calculate.py`
/// appends the flag (default True) unless the name already ends with it, and renames random
/// movers.
pub(crate) fn rating_name(player: &str, legal_moves: Option<bool>) -> (String, bool) {
    let base = if player.to_lowercase().contains("random") {
        "random_player_blitz"
    } else {
        player
    };
    for (suffix, flag) in [("True", true), ("False", false)] {
        if base.ends_with(suffix) {
            return (base.to_owned(), flag);
        }
    }
    let flag = legal_moves.unwrap_or(true);
    let word = if flag { "True" } else { "False" };
    (format!("{base}_{word}"), flag)
}

fn player(raw: &str, play_mode: Option<&str>, legal_moves: Option<bool>) -> ImportedPlayer {
    let (name, legal) = rating_name(raw, legal_moves);
    let play_mode = play_mode.unwrap_or("blitz");
    let mode = rated_mode(play_mode);
    let model = raw
        .strip_suffix(&format!("_{mode}"))
        .unwrap_or(raw)
        .to_owned();
    let lower = raw.to_lowercase();
    let kind = if lower.contains("random") {
        "random"
    } else if lower.starts_with("maia") || lower.contains("stockfish") || lower.starts_with("lc0") {
        "engine"
    } else {
        "llm"
    };
    let mut mode_options = json!({ "legal_moves": legal });
    if mode == "blindfold" {
        mode_options["multi_turn"] = (play_mode != "blindfold_singleTurn").into();
    }
    let settings = json!({
        "kind": kind,
        "name": name,
        "model": model,
        "mode": mode,
        "mode_options": mode_options,
        "imported": {
            "from": IMPORTER,
            "player": raw,
            "play_mode": play_mode,
            "legal_moves": if legal_moves.is_some() { "file" } else { "ChessArena's default (absent from the file)" },
        },
    });
    ImportedPlayer {
        name,
        kind,
        settings,
    }
}

fn seconds_to_ms(v: &Value) -> u64 {
    v.as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(0, |s| (s * 1000.0).round() as u64)
}

/// The calls of one ply from its `chat_history`; the ply's engine data goes with the last one.
fn calls_of(
    ply: u32,
    mover: &ImportedPlayer,
    records: &[Value],
    detail: &Value,
) -> Vec<ImportedCall> {
    let model = mover.settings["model"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut calls = Vec::new();
    for record in records {
        let Some(messages) = record.as_array() else {
            continue;
        };
        for (i, message) in messages.iter().enumerate() {
            let Some(status) = message["status"].as_str() else {
                continue;
            };
            let is_reply = message["role"] == "assistant";
            // A failed call marks the last message sent (ChessArena appends no reply).
            let sent = if is_reply {
                &messages[..i]
            } else {
                &messages[..=i]
            };
            let request = json!({
                "model": model,
                "messages": sent.iter().map(|m| json!({
                    "role": m["role"], "content": m["content"],
                })).collect::<Vec<_>>(),
            });
            let feedback = message["feedback"]
                .as_str()
                .filter(|f| !f.is_empty())
                .map(str::to_owned);
            let outcome = outcome(status);
            let accepted = outcome == "move";
            calls.push(ImportedCall {
                ply,
                player: mover.name.clone(),
                model: model.clone(),
                request_json: request.to_string(),
                reply_text: is_reply
                    .then(|| message["content"].as_str().unwrap_or_default().to_owned()),
                reasoning: message["reasoning_content"]
                    .as_str()
                    .filter(|r| !r.is_empty())
                    .map(str::to_owned),
                raw_body: Some(json!({ "source": IMPORTER, "message": message }).to_string()),
                error: (!is_reply).then(|| feedback.clone().unwrap_or_else(|| status.to_owned())),
                latency_ms: if accepted {
                    seconds_to_ms(&detail["response_time"])
                } else {
                    0
                },
                outcome,
                outcome_detail: if accepted {
                    detail["move"].as_str().map(str::to_owned)
                } else {
                    feedback
                },
            });
        }
    }
    if let Some(last) = calls.last_mut() {
        let mut ply_record = detail.clone();
        if let Some(o) = ply_record.as_object_mut() {
            o.remove("chat_history");
        }
        let mut raw: Value =
            serde_json::from_str(last.raw_body.as_deref().unwrap_or("{}")).unwrap_or_default();
        raw["move_detail"] = ply_record;
        last.raw_body = Some(raw.to_string());
    }
    calls
}

/// A reply's `status` in arena's outcome names.
pub fn outcome(status: &str) -> String {
    match status {
        "successful move" => "move".to_owned(),
        "parsing_error" => "no_move_found".to_owned(),
        "Invalid UCI format" => "unparseable".to_owned(),
        "illegal move" => "illegal".to_owned(),
        "forbidden_thinking" => "forbidden_reasoning".to_owned(),
        "other error" => "error".to_owned(),
        other => other.to_lowercase().replace(' ', "_"),
    }
}

/// Compares a simulation summary with the games found beside it.
fn check_summary(file: &Path, summary: &Value, games: &[ImportedGame], report: &mut Report) {
    let Some(folder) = file.parent() else {
        return;
    };
    let found: Vec<&ImportedGame> = games
        .iter()
        .filter(|g| g.file.starts_with(folder))
        .collect();
    let listed = summary["num_games"].as_u64();
    if let Some(listed) = listed
        && listed != found.len() as u64
    {
        report.notes.push(format!(
            "{}: the summary lists {listed} games, the folder holds {} readable records",
            file.display(),
            found.len()
        ));
    }
}
