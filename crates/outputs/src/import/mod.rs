//! Reading the anchor systems' own game records into a store: ChessArena's `simulation_record`
//! trees ([`chessarena`]) and LLM Chess's `_logs` ([`llm_chess`]).
//!
//! Each importer walks a folder, reads every file it recognises into [`ImportedGame`]s, replays
//! every game on arena's board (a record whose moves are illegal, or whose result or termination
//! contradicts its own moves, is skipped and reported) and writes the games into one tournament
//! named after the source and the folder, through the store's ordinary API: players, the game,
//! its plies, its LLM calls with their outcomes, its result. Nothing is ever written for a record
//! that fails to read or replay.
//!
//! Imports are idempotent: every imported game carries an `imported` event whose message holds its
//! stable source id (ChessArena's `game_id` with both players, LLM Chess's run folder and file
//! name) and the source record itself, so importing the same tree again finds the games already
//! there and adds nothing; a game whose import was killed half-way is completed, not duplicated.
//! An importer refuses to write into a tournament that it did not create (a tournament `arena run`
//! played, or another importer's), so arena's own games are never touched.
//!
//! Every file an importer does not import is reported with the reason ([`Skip`]), malformed JSON
//! with its line.
//!
//! The folder walk and the record formats are hand-written: the formats are the anchors' own
//! JSON (read with serde), and the walk needs no more than `std::fs`.

pub mod chessarena;
pub mod llm_chess;

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    path::{Path, PathBuf},
};

use shakmaty::Color;

use crate::{
    board::{Game, GameResult, Termination},
    store::{
        GameStatus, LlmCallRecord, PlayerRecord, PlyRecord, ScheduledGame, Store, StoreError,
        TournamentRow,
    },
};

/// The event kind that marks an imported game and holds its source id and record.
pub(crate) const IMPORTED_EVENT: &str = "imported";

/// Why an import could not run at all (a file that cannot be imported is a [`Skip`] instead).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The folder to import does not exist or is not a folder.
    #[error("cannot import `{}`: it is not a folder", path.display())]
    NotAFolder {
        /// The path given.
        path: PathBuf,
    },
    /// A folder could not be listed.
    #[error("cannot list `{}`: {source}", path.display())]
    Io {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The target tournament exists and was not created by this importer.
    #[error(
        "refusing to import into tournament `{name}`: it was not created by `arena import {importer}` \
         (imports never touch games arena played itself; choose another name with --tournament)"
    )]
    NotAnImport {
        /// The tournament.
        name: String,
        /// The importer that was asked to write.
        importer: &'static str,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a skipped file is simply not a game record, or a record that is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipKind {
    /// Not a game record of this source (a log, an aggregate, a ratings file, ...).
    NotAGame,
    /// A game record (or run metadata) that cannot be read or does not replay.
    Invalid,
}

/// A file that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// The file.
    pub path: PathBuf,
    /// The line of a JSON syntax or type error.
    pub line: Option<usize>,
    /// What was wrong, or what the file is.
    pub reason: String,
    /// Broken record or simply another kind of file.
    pub kind: SkipKind,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The tournament the games went into.
    pub tournament: String,
    /// Games added by this import.
    pub imported: usize,
    /// Games found already imported (and left as they are).
    pub already: usize,
    /// Games an earlier, interrupted import had started and this one completed.
    pub completed: usize,
    /// Every file not imported, with the reason, in walk order.
    pub skipped: Vec<Skip>,
    /// Remarks on imported files (missing data, disagreements between a file and its summary).
    pub notes: Vec<String>,
}

impl Report {
    /// Whether a game record or metadata file was broken (not merely another kind of file).
    pub fn has_invalid(&self) -> bool {
        self.skipped.iter().any(|s| s.kind == SkipKind::Invalid)
    }
}

/// A player as a source names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedPlayer {
    /// The name, as the source's own tables name the player.
    pub name: String,
    /// `"llm"`, `"engine"`, `"random"` or `"moa"`.
    pub kind: &'static str,
    /// Model, mode, mode options and what the source said, as arena's reports read them.
    pub settings: serde_json::Value,
}

/// One model call of an imported game, with what the source made of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportedCall {
    /// The ply it was made for (0-based; a forfeited ply is the one after the last move).
    pub ply: u32,
    /// The player.
    pub player: String,
    /// The model.
    pub model: String,
    /// The request as JSON (`{"model", "messages"}`).
    pub request_json: String,
    /// The reply text; `None` when the call brought no reply.
    pub reply_text: Option<String>,
    /// Reasoning text returned beside the reply.
    pub reasoning: Option<String>,
    /// The source's own record of the call (and of the ply, on the ply's last call), as JSON.
    pub raw_body: Option<String>,
    /// The call's error, when it brought no reply.
    pub error: Option<String>,
    /// The reply's wall time, when the source recorded it.
    pub latency_ms: u64,
    /// What the reply led to, in arena's outcome names.
    pub outcome: String,
    /// The move played, or the source's feedback.
    pub outcome_detail: Option<String>,
}

/// One game read from a source, not yet replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedGame {
    /// The source's stable id of the game: the idempotency key.
    pub source_id: String,
    /// The file it came from.
    pub file: PathBuf,
    /// White.
    pub white: ImportedPlayer,
    /// Black.
    pub black: ImportedPlayer,
    /// The moves in UCI notation, from the standard start position.
    pub moves: Vec<String>,
    /// Attempts per ply where the source has them (1 otherwise).
    pub attempts: Vec<u32>,
    /// The mover's time per ply in milliseconds where the source has it (0 otherwise).
    pub elapsed_ms: Vec<u64>,
    /// The FEN the source gives before each ply, if any, checked against the replay.
    pub fens_before: Vec<Option<String>>,
    /// The final FEN the source gives, if any, checked against the replay.
    pub final_fen: Option<String>,
    /// The result the source gives.
    pub result: GameResult,
    /// The source's termination in arena's terms.
    pub termination: Termination,
    /// The source's own termination text.
    pub reason: String,
    /// The model calls the source recorded.
    pub calls: Vec<ImportedCall>,
    /// The source record, kept with the game's import event (large dialogs already left out,
    /// since they are stored as calls).
    pub record: serde_json::Value,
}

/// Replays `game` on arena's board: every move must be legal, the positions must be those the
/// source gives, and the end must agree with the result and termination the source gives.
///
/// # Errors
/// A sentence saying which ply or which field disagrees.
pub fn replay(game: &ImportedGame) -> Result<Vec<PlyRecord>, String> {
    let mut board = Game::new(None, 0).expect("the standard position is playable");
    let mut plies = Vec::with_capacity(game.moves.len());
    for (i, uci) in game.moves.iter().enumerate() {
        let ply = i as u32;
        let fen_before = board.fen();
        if let Some(Some(theirs)) = game.fens_before.get(i)
            && theirs.trim() != fen_before
        {
            return Err(format!(
                "ply {}: the record gives the position `{theirs}` but the moves before it give `{fen_before}`",
                ply + 1
            ));
        }
        let mover = if board.turn() == Color::White {
            &game.white.name
        } else {
            &game.black.name
        };
        let played = board.play_uci(uci).map_err(|e| {
            format!(
                "ply {} (`{uci}`) cannot be played in `{fen_before}`: {e}",
                ply + 1
            )
        })?;
        plies.push(PlyRecord {
            ply,
            fen_before,
            uci: played.uci,
            san: played.san,
            player: mover.clone(),
            attempts: game.attempts.get(i).copied().unwrap_or(1).max(1),
            elapsed_ms: game.elapsed_ms.get(i).copied().unwrap_or(0),
            clock_ms: None,
        });
    }
    if let Some(theirs) = &game.final_fen
        && theirs.trim() != board.fen()
    {
        return Err(format!(
            "the record's final position `{theirs}` is not the `{}` its moves give",
            board.fen()
        ));
    }
    check_end(&board, game.result, game.termination)?;
    Ok(plies)
}

/// Whether a result and termination can be the end of the replayed `board`.
fn check_end(board: &Game, result: GameResult, termination: Termination) -> Result<(), String> {
    if let Some(end) = board.end() {
        if end.termination != termination || end.result != Some(result) {
            return Err(format!(
                "the record says {result} by {termination}, but its last move ends the game {} by {}",
                end.result_token(),
                end.termination
            ));
        }
        return Ok(());
    }
    let on_the_board = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::InsufficientMaterial,
        Termination::FivefoldRepetition,
        Termination::SeventyFiveMoveRule,
    ];
    // A claimed draw (no record imported today carries one): the final position must allow it.
    if matches!(
        termination,
        Termination::ThreefoldRepetition | Termination::FiftyMoveRule
    ) {
        return if board.claimable_draw() == Some(termination) && result == GameResult::Draw {
            Ok(())
        } else {
            Err(format!(
                "the record says {result} by {termination}, but the final position is not one"
            ))
        };
    }
    if on_the_board.contains(&termination) {
        return Err(format!(
            "the record says {result} by {termination}, but the final position is not one"
        ));
    }
    let expected = match termination {
        Termination::MoveLimit => Some(GameResult::Draw),
        // The side to move is the one that failed to move.
        t if t.is_protocol_failure() => Some(GameResult::win_for(board.turn().other())),
        _ => None,
    };
    match expected {
        Some(expected) if expected != result => Err(format!(
            "the record says {result} by {termination}, but with {} to move that ending is {expected}",
            color_name(board.turn())
        )),
        _ => Ok(()),
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// The largest record file read, 64 MiB: a ChessArena or LLM Chess game record is a few hundred
/// kilobytes even with every prompt and reply in it. A larger file is skipped unread.
pub(crate) const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Reads a record file whole, or skips it when it cannot be read or is over
/// [`MAX_RECORD_BYTES`] (after reading at most one byte more).
fn read_record(path: &Path) -> Result<String, Skip> {
    use std::io::Read;
    let skip = |reason: String| Skip {
        path: path.to_owned(),
        line: None,
        reason,
        kind: SkipKind::Invalid,
    };
    let file = std::fs::File::open(path).map_err(|e| skip(format!("cannot read it: {e}")))?;
    let mut text = String::new();
    file.take(MAX_RECORD_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| skip(format!("cannot read it: {e}")))?;
    if u64::try_from(text.len()).map_or(true, |n| n > MAX_RECORD_BYTES) {
        return Err(skip(format!(
            "it is over the limit of {} MiB for a record; refused unread",
            MAX_RECORD_BYTES >> 20
        )));
    }
    Ok(text)
}

/// Reads a JSON file, turning a read or syntax error into a [`Skip`] that names the line.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, Skip> {
    let text = read_record(path)?;
    serde_json::from_str(&text).map_err(|e| json_skip(path, &e))
}

/// Reads a JSON file as `T` and as a plain value: a syntax error is malformed JSON, a value of the
/// wrong shape is "not `what`", both with the line serde reports.
pub(crate) fn read_typed<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
) -> Result<(T, serde_json::Value), Skip> {
    let text = read_record(path)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| json_skip(path, &e))?;
    let typed = serde_json::from_str(&text).map_err(|e| Skip {
        path: path.to_owned(),
        line: (e.line() > 0).then_some(e.line()),
        reason: format!("not {what}: {e}"),
        kind: SkipKind::Invalid,
    })?;
    Ok((typed, value))
}

/// A malformed-JSON skip with the line serde reports.
pub(crate) fn json_skip(path: &Path, e: &serde_json::Error) -> Skip {
    Skip {
        path: path.to_owned(),
        line: (e.line() > 0).then_some(e.line()),
        reason: format!("malformed JSON: {e}"),
        kind: SkipKind::Invalid,
    }
}

/// Every file under `root`, depth first, in name order (so imports are reproducible).
pub(crate) fn walk(root: &Path) -> Result<Vec<PathBuf>, ImportError> {
    if !root.is_dir() {
        return Err(ImportError::NotAFolder {
            path: root.to_owned(),
        });
    }
    let mut files = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let io = |source| ImportError::Io {
            path: dir.clone(),
            source,
        };
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(io)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(io)?;
        entries.sort();
        // Folders are pushed in reverse so the stack pops them in name order.
        let mut dirs = Vec::new();
        for entry in entries {
            if entry.is_dir() {
                dirs.push(entry);
            } else {
                files.push(entry);
            }
        }
        stack.extend(dirs.into_iter().rev());
    }
    Ok(files)
}

/// The default tournament name: `SOURCE:FOLDER`, after the folder's own name.
pub(crate) fn default_name(importer: &str, root: &Path) -> String {
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let folder = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_owned());
    format!("{importer}:{folder}")
}

/// Writes replayed games into a tournament, skipping those already there.
pub(crate) struct Writer<'a> {
    store: &'a Store,
    tournament: TournamentRow,
    importer: &'static str,
    root: PathBuf,
    /// Source id to game id, from the `imported` events.
    known: HashMap<String, i64>,
    next_index: u32,
    players: BTreeMap<String, ImportedPlayer>,
}

impl<'a> Writer<'a> {
    /// Opens (or creates) the import tournament `name`, refusing one this importer did not create.
    pub(crate) fn open(
        store: &'a Store,
        name: &str,
        importer: &'static str,
        root: &Path,
        mut settings: serde_json::Value,
    ) -> Result<Writer<'a>, ImportError> {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
        let tournament = match store.find_tournament(name)? {
            Some(t) => t,
            None => {
                settings["importer"] = importer.into();
                settings["source"] = root.display().to_string().into();
                settings["arena_version"] = env!("CARGO_PKG_VERSION").into();
                store.open_tournament(
                    name,
                    &format!("arena import {importer} {}", root.display()),
                    &settings.to_string(),
                )?
            }
        };
        let stored: serde_json::Value =
            serde_json::from_str(&tournament.settings_json).unwrap_or_default();
        if stored["importer"] != importer {
            return Err(ImportError::NotAnImport {
                name: name.to_owned(),
                importer,
            });
        }
        let mut known = HashMap::new();
        for event in store.events(tournament.id)? {
            let message: serde_json::Value =
                serde_json::from_str(&event.message).unwrap_or_default();
            if event.kind == IMPORTED_EVENT {
                if let (Some(id), Some(game)) = (message["source_id"].as_str(), event.game_id) {
                    known.insert(id.to_owned(), game);
                }
            } else if let Some(key) = message["key"].as_str() {
                // Run-level records (summaries, run metadata), see `record_once`.
                known.insert(format!("{}:{key}", event.kind), -1);
            }
        }
        let next_index = store
            .games(tournament.id)?
            .iter()
            .map(|g| g.index + 1)
            .max()
            .unwrap_or(0);
        Ok(Writer {
            store,
            tournament,
            importer,
            root,
            known,
            next_index,
            players: BTreeMap::new(),
        })
    }

    /// Replays and writes one game; a game that does not replay becomes a skip.
    pub(crate) fn write(
        &mut self,
        game: &ImportedGame,
        report: &mut Report,
    ) -> Result<(), ImportError> {
        let plies = match replay(game) {
            Ok(plies) => plies,
            Err(reason) => {
                report.skipped.push(Skip {
                    path: game.file.clone(),
                    line: None,
                    reason,
                    kind: SkipKind::Invalid,
                });
                return Ok(());
            }
        };
        let store = self.store;
        let game_id = match self.known.get(&game.source_id) {
            Some(&id) if store.game(id)?.status == GameStatus::Finished => {
                report.already += 1;
                return Ok(());
            }
            Some(&id) => {
                report.completed += 1;
                id
            }
            None => {
                for p in [&game.white, &game.black] {
                    self.player(p)?;
                }
                let index = self.next_index;
                self.next_index += 1;
                let t = self.tournament.id;
                store.schedule_games(
                    t,
                    &[ScheduledGame::new(
                        index,
                        0,
                        &game.white.name,
                        &game.black.name,
                    )],
                )?;
                let id = store
                    .games(t)?
                    .into_iter()
                    .find(|g| g.index == index)
                    .map(|g| g.id)
                    .expect("the game was just scheduled");
                // The key is stored first: a killed import leaves a keyed, unfinished game that
                // the next import completes.
                let message = serde_json::json!({
                    "source_id": game.source_id,
                    "importer": self.importer,
                    "file": self.relative(&game.file),
                    "record": game.record,
                });
                store.record_event(t, Some(id), "info", IMPORTED_EVENT, &message.to_string())?;
                self.known.insert(game.source_id.clone(), id);
                report.imported += 1;
                id
            }
        };
        let stored_plies = store.plies(game_id)?.len();
        for ply in plies.iter().skip(stored_plies) {
            store.record_ply(game_id, ply)?;
        }
        let mut seq: HashMap<u32, u32> = HashMap::new();
        let mut stored_calls = HashMap::new();
        for call in &game.calls {
            let n = seq.entry(call.ply).or_insert(0);
            let this_seq = *n;
            *n += 1;
            let stored = match stored_calls.entry(call.ply) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(store.llm_calls(game_id, call.ply)?)
                }
            };
            let existing = stored
                .iter()
                .find(|c| c.call.seq == this_seq)
                .map(|c| (c.id, c.outcome.is_some()));
            let id = match existing {
                Some((_, true)) => continue,
                Some((id, false)) => id,
                None => store.record_llm_call(&LlmCallRecord {
                    game_id: Some(game_id),
                    ply: call.ply,
                    seq: this_seq,
                    player: call.player.clone(),
                    model: call.model.clone(),
                    endpoint: format!("import:{}", self.importer),
                    request_json: call.request_json.clone(),
                    reply_text: call.reply_text.clone(),
                    reasoning: call.reasoning.clone(),
                    raw_body: call.raw_body.clone(),
                    latency_ms: call.latency_ms,
                    error: call.error.clone(),
                    ..LlmCallRecord::default()
                })?,
            };
            store.set_llm_call_outcome(id, &call.outcome, call.outcome_detail.as_deref())?;
        }
        store.finish_game(
            game_id,
            game.result.as_pgn(),
            game.termination.as_str(),
            Some(&game.reason),
        )?;
        Ok(())
    }

    /// Records a tournament-level event (a run's summary or metadata), once per key.
    pub(crate) fn record_once(
        &mut self,
        kind: &str,
        key: &str,
        content: serde_json::Value,
    ) -> Result<(), ImportError> {
        let marker = format!("{kind}:{key}");
        if self.known.contains_key(&marker) {
            return Ok(());
        }
        let message = serde_json::json!({ "key": key, "record": content });
        self.store
            .record_event(self.tournament.id, None, "info", kind, &message.to_string())?;
        self.known.insert(marker, -1);
        Ok(())
    }

    /// The path of `file` relative to the imported folder.
    pub(crate) fn relative(&self, file: &Path) -> String {
        let file = file.canonicalize().unwrap_or_else(|_| file.to_owned());
        file.strip_prefix(&self.root)
            .unwrap_or(&file)
            .display()
            .to_string()
    }

    /// The tournament's name.
    pub(crate) fn tournament_name(&self) -> &str {
        &self.tournament.name
    }

    fn player(&mut self, p: &ImportedPlayer) -> Result<(), ImportError> {
        if self.players.get(&p.name) == Some(p) {
            return Ok(());
        }
        self.store.upsert_player(
            self.tournament.id,
            &PlayerRecord {
                name: p.name.clone(),
                kind: p.kind.to_owned(),
                settings_json: p.settings.to_string(),
            },
        )?;
        self.players.insert(p.name.clone(), p.clone());
        Ok(())
    }
}

/// Removes every `api_key` field (the anchors write `"REDACTED"`, but a hand-made file may not).
pub(crate) fn without_keys(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| !k.to_ascii_lowercase().contains("api_key"));
            for v in map.values_mut() {
                without_keys(v);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(without_keys),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
