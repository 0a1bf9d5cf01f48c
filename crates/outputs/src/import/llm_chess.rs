//! LLM Chess's `_logs` trees: one JSON log per game (`<YYYY.MM.DD_HH:MM>.json`, the PGN embedded)
//! and a `_run.json` per run folder (the run's configuration and player types).
//!
//! What a game log holds and how it becomes arena's (facts from LLM Chess's `llm_chess.py`,
//! `utils.py` and `get_run_metadata.py`):
//! - Players are named as LLM Chess's tables name them: a model player by its `model`, the random
//!   mover `Random_Player`, an engine by its agent name without the colour (with `-lvl-N` when the
//!   run's `_run.json` gives the level). Model players play the `agentic` mode, so `arena
//!   leaderboard` shows the LLM Chess table. Komodo Dragon at level N carries LLM Chess's anchor
//!   Elo `125·(N+1)` and the random mover its calibrated −122.27 (LLM Chess's own computation on
//!   its Random-vs-Dragon games, reproduced by `rating::conformance`), so the table's Elo column
//!   works as LLM Chess's does.
//! - `winner` is a player's agent name or `NONE` (a draw); `reason` maps to arena's terminations
//!   (`Max moves reached` is `move_limit`, `Too many wrong actions` and `Max turns in single
//!   dialog` are lost by the side to move; `Unknown issue, failed to make a move` and `ERROR
//!   OCCURED` are `engine_failure`, draws as LLM Chess logs them), the text kept as the reason.
//! - The moves come from the embedded PGN, whose `Result` tag must agree with `winner`.
//! - A game log keeps per-game counters only (wrong moves and actions, action counts, tokens,
//!   reply time, material); the dialogs are in the run's `output.txt` transcript, which is not
//!   read. So no LLM calls are imported: the counters stay with the game's import event, and the
//!   call-based columns of the LLM Chess table (wrong actions, tokens) are empty for these games.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    ImportError, ImportedGame, ImportedPlayer, Report, Skip, SkipKind, Writer, default_name,
    read_typed, walk, without_keys,
};
use crate::{
    board::{GameResult, Termination, parse_pgn_openings},
    store::Store,
};

/// The importer's name, in tournament settings and CLI.
pub(crate) const IMPORTER: &str = "llm_chess";

/// The random mover's Elo as LLM Chess calibrates it against Komodo Dragon levels 1–4.
pub(crate) const RANDOM_PLAYER_ELO: f64 = -122.27;

/// Imports every LLM Chess game log under `root` into the tournament `name` (default
/// `llm_chess:<folder>`).
///
/// # Errors
/// [`ImportError`] when the folder cannot be walked, the tournament is not an import of this kind,
/// or the store fails; files that cannot be imported are reported in [`Report::skipped`].
pub fn import(store: &Store, root: &Path, name: Option<&str>) -> Result<Report, ImportError> {
    let files = walk(root)?;
    let name = name.map_or_else(|| default_name(IMPORTER, root), str::to_owned);
    let mut report = Report::default();
    // Run metadata first, so every game of a folder knows its run.
    let mut runs: BTreeMap<PathBuf, (Value, PathBuf)> = BTreeMap::new();
    for file in files.iter().filter(|f| file_name(f) == "_run.json") {
        match read_typed::<Value>(file, "run metadata") {
            Ok((run, _)) => {
                if let Some(dir) = file.parent() {
                    runs.insert(dir.to_owned(), (run, file.clone()));
                }
            }
            Err(skip) => report.skipped.push(skip),
        }
    }
    let max_plies = runs
        .values()
        .find_map(|(run, _)| run["config"]["max_game_moves"].as_u64())
        .unwrap_or(200);
    let mut writer = Writer::open(
        store,
        &name,
        IMPORTER,
        root,
        json!({ "max_plies": max_plies }),
    )?;
    report.tournament = writer.tournament_name().to_owned();

    let mut games = Vec::new();
    for file in &files {
        let name = file_name(file);
        let not_a_game = |reason: String| Skip {
            path: file.clone(),
            line: None,
            reason,
            kind: SkipKind::NotAGame,
        };
        if name == "_run.json" {
            continue;
        }
        if !name.ends_with(".json") {
            report
                .skipped
                .push(not_a_game("not a JSON game log".to_owned()));
            continue;
        }
        if name == "_aggregate_results.json" {
            report
                .skipped
                .push(not_a_game("a run's aggregate results: no moves".to_owned()));
            continue;
        }
        let value = match read_typed::<Value>(file, "JSON") {
            Ok((v, _)) => v,
            Err(skip) => {
                report.skipped.push(skip);
                continue;
            }
        };
        if value.get("pgn").is_none() {
            let reason = match value["total_games"].as_u64() {
                Some(n) => format!("aggregate results of {n} games: no moves"),
                None => "not an LLM Chess game log (no `pgn`)".to_owned(),
            };
            report.skipped.push(not_a_game(reason));
            continue;
        }
        let run = file.parent().and_then(|d| runs.get(d));
        match read_game(file, run.map(|(r, _)| r), root) {
            Ok(game) => games.push(game),
            Err(skip) => report.skipped.push(skip),
        }
    }
    games.sort_by(|a, b| a.source_id.cmp(&b.source_id));
    for game in &games {
        writer.write(game, &mut report)?;
    }
    for (run, file) in runs.values() {
        let mut run = run.clone();
        without_keys(&mut run);
        let key = writer.relative(file);
        writer.record_once("llm_chess_run", &key, run)?;
    }
    if !games.is_empty() {
        report.notes.push(
            "LLM Chess game logs keep per-game counters, not the dialogs: no LLM calls were imported (the counters are kept with each game's `imported` event)"
                .to_owned(),
        );
    }
    Ok(report)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[derive(Debug, Deserialize)]
struct GameLog {
    time_started: Option<String>,
    winner: String,
    reason: String,
    number_of_moves: Option<u64>,
    player_white: LogPlayer,
    player_black: LogPlayer,
    pgn: String,
}

#[derive(Debug, Deserialize)]
struct LogPlayer {
    name: String,
    #[serde(default)]
    model: Option<String>,
}

fn read_game(path: &Path, run: Option<&Value>, root: &Path) -> Result<ImportedGame, Skip> {
    let (log, mut record): (GameLog, Value) = read_typed(path, "an LLM Chess game log")?;
    let invalid = |reason: String| Skip {
        path: path.to_owned(),
        line: None,
        reason,
        kind: SkipKind::Invalid,
    };
    let termination = termination(&log.reason)
        .ok_or_else(|| invalid(format!("unknown termination reason `{}`", log.reason)))?;
    let result = if log.winner == "NONE" {
        GameResult::Draw
    } else if log.winner == log.player_white.name {
        GameResult::WhiteWins
    } else if log.winner == log.player_black.name {
        GameResult::BlackWins
    } else {
        return Err(invalid(format!(
            "the winner `{}` is neither player (`{}`, `{}`)",
            log.winner, log.player_white.name, log.player_black.name
        )));
    };
    if let Some(tag) = pgn_result(&log.pgn)
        && tag != "*"
        && tag != result.as_pgn()
    {
        return Err(invalid(format!(
            "the PGN's Result is `{tag}` but the winner is `{}` ({result})",
            log.winner
        )));
    }
    let label = PathBuf::from(format!("{} (field `pgn`)", path.display()));
    let mut games = parse_pgn_openings(&log.pgn, &label)
        .map_err(|e| invalid(format!("the embedded PGN does not replay: {e}")))?;
    if games.len() != 1 {
        return Err(invalid(format!(
            "the embedded PGN holds {} games, not one",
            games.len()
        )));
    }
    let pgn = games.remove(0);
    if pgn.fen.is_some() {
        return Err(invalid(
            "the embedded PGN starts from a FEN; LLM Chess games start from the initial position"
                .to_owned(),
        ));
    }
    let types = run.map(|r| &r["player_types"]);
    let white = player(
        &log.player_white,
        types.and_then(|t| t["white_player_type"].as_str()),
        run,
        "white",
    );
    let black = player(
        &log.player_black,
        types.and_then(|t| t["black_player_type"].as_str()),
        run,
        "black",
    );
    if white.name == black.name {
        return Err(invalid(format!(
            "both sides are `{}`: a player cannot be rated against itself",
            white.name
        )));
    }
    if let Some(n) = log.number_of_moves {
        // A game lost by a protocol failure counts the failed ply too.
        let expected = pgn.moves.len() as u64 + u64::from(termination.is_protocol_failure());
        if n != expected && termination != Termination::EngineFailure {
            return Err(invalid(format!(
                "`number_of_moves` is {n} but the PGN has {} moves",
                pgn.moves.len()
            )));
        }
    }
    let folder = run
        .and_then(|r| r["metadata"]["log_folder_relative"].as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            let dir = path.parent().unwrap_or(path);
            dir.strip_prefix(root).unwrap_or(dir).display().to_string()
        });
    let source_id = format!("{folder}/{}", file_name(path));
    if let Some(o) = record.as_object_mut() {
        o.remove("pgn");
    }
    let _ = log.time_started;
    let plies = pgn.moves.len();
    Ok(ImportedGame {
        source_id,
        file: path.to_owned(),
        white,
        black,
        moves: pgn.moves,
        attempts: vec![1; plies],
        elapsed_ms: vec![0; plies],
        fens_before: Vec::new(),
        final_fen: None,
        result,
        termination,
        reason: log.reason,
        calls: Vec::new(),
        record,
    })
}

/// LLM Chess's termination reasons in arena's terms.
pub fn termination(reason: &str) -> Option<Termination> {
    Some(match reason {
        "Checkmate" => Termination::Checkmate,
        "Stalemate" => Termination::Stalemate,
        "Insufficient material" => Termination::InsufficientMaterial,
        "Seventy-five moves rule" => Termination::SeventyFiveMoveRule,
        "Fivefold repetition" => Termination::FivefoldRepetition,
        "Max moves reached" => Termination::MoveLimit,
        "Too many wrong actions" => Termination::TooManyWrongActions,
        "Max turns in single dialog" => Termination::MaxTurns,
        "Unknown issue, failed to make a move" | "ERROR OCCURED" => Termination::EngineFailure,
        _ => return None,
    })
}

fn pgn_result(pgn: &str) -> Option<&str> {
    let start = pgn.find("[Result \"")? + "[Result \"".len();
    let end = pgn[start..].find('"')?;
    Some(&pgn[start..start + end])
}

/// A player as LLM Chess's tables name it, from the log and the run's player type.
fn player(p: &LogPlayer, kind: Option<&str>, run: Option<&Value>, side: &str) -> ImportedPlayer {
    let model = p
        .model
        .as_deref()
        .filter(|m| !m.is_empty() && *m != "N/A")
        .map(str::to_owned);
    let agent = p.name.as_str();
    let kind = match kind {
        Some("RANDOM_PLAYER") => "random",
        Some(k) if k.starts_with("CHESS_ENGINE") => "engine",
        Some("LLM_NON") => "moa",
        Some(_) => "llm",
        None if agent == "Random_Player" => "random",
        None if agent.starts_with("Chess_Engine") => "engine",
        None if agent.starts_with("Player_Non") => "moa",
        None => "llm",
    };
    let mut settings = json!({
        "kind": kind,
        "imported": { "from": IMPORTER, "agent": agent, "model": p.model },
    });
    let name = match kind {
        "random" => {
            settings["anchor_elo"] = RANDOM_PLAYER_ELO.into();
            agent.to_owned()
        }
        "engine" => {
            let base = agent
                .strip_suffix("_White")
                .or_else(|| agent.strip_suffix("_Black"))
                .unwrap_or(agent);
            let engine = ["dragon", "stockfish", "maia"]
                .into_iter()
                .find(|e| base.to_lowercase().contains(e));
            let level = engine.and_then(|e| run?["chess_engines"][e]["level"].as_u64());
            if let (Some("dragon"), Some(level)) = (engine, level) {
                settings["anchor_elo"] = (125.0 * (level as f64 + 1.0)).into();
            }
            match level {
                Some(level) => format!("{base}-lvl-{level}"),
                None => base.to_owned(),
            }
        }
        _ => {
            let config = run.map(|r| &r["config"]);
            let mut llm_config = run
                .map(|r| r["llm_configs"][side].clone())
                .unwrap_or_default();
            without_keys(&mut llm_config);
            settings["mode"] = "agentic".into();
            settings["model"] = model.clone().unwrap_or_else(|| agent.to_owned()).into();
            if let Some(c) = config {
                settings["mode_options"] = json!({
                    "reflection": c["enable_reflection"],
                    "max_turns": c["max_llm_turns"],
                    "max_attempts": c["max_failed_attempts"],
                });
                settings["imported"]["board_representation_mode"] =
                    c["board_representation_mode"].clone();
            }
            settings["imported"]["llm_config"] = llm_config;
            model.unwrap_or_else(|| agent.to_owned())
        }
    };
    settings["name"] = name.clone().into();
    ImportedPlayer {
        name,
        kind,
        settings,
    }
}
