//! Exports of stored tournaments: PGN (here), and the datasets — SFT chats ([`sft`]), analysed
//! positions ([`positions`]), one JSON object per stored row ([`jsonl`]) — each with a
//! [`manifest`] written beside it. The dataset exports stream rows from the store (see
//! `Store::for_each_call`) and write them one line at a time, in constant memory.

mod annotate;
mod jsonl;
mod manifest;
mod positions;
mod sft;

use std::{collections::HashMap, io::Write};

use serde_json::{Value, json};

use crate::{
    board::{GameResult, PgnGame, Termination, clock::GameClocks, write_pgn},
    engine::Score,
    leaderboard::llm_chess,
    llm::PriceTable,
    store::{GameStatus, LlmCallRecord, Store, StoreError, StreamError, TournamentRow},
};

pub use crate::pairing::trf::write_trf as trf;
pub use annotate::{emt, white_eval};
pub use jsonl::{JsonlTable, jsonl};
pub use manifest::{GIT_COMMIT, manifest};
pub use positions::positions;
pub use sft::{SftCounts, SftFilter, SftOptions, sft};

/// Errors of the dataset exports.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The output could not be written.
    #[error("cannot write the export: {0}")]
    Write(#[from] std::io::Error),
}

impl From<StreamError<ExportError>> for ExportError {
    fn from(e: StreamError<ExportError>) -> Self {
        match e {
            StreamError::Store(e) => ExportError::Store(e),
            StreamError::Callback(e) => e,
        }
    }
}

/// Writes `value` as one line of JSON.
fn write_line(out: &mut impl Write, value: &Value) -> Result<(), ExportError> {
    serde_json::to_writer(&mut *out, value).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Every tournament's price table (the built-in one overlaid with its script's `prices`), read
/// before a stream starts, since the store cannot be queried while it streams.
struct Prices {
    by_tournament: HashMap<String, PriceTable>,
    built_in: PriceTable,
}

impl Prices {
    fn load(store: &Store) -> Result<Prices, StoreError> {
        let by_tournament = store
            .tournaments()?
            .iter()
            .map(|t| (t.name.clone(), llm_chess::prices(t)))
            .collect();
        Ok(Prices {
            by_tournament,
            built_in: PriceTable::built_in(),
        })
    }

    /// A call's usage and cost fields: the cached, cache-write and reasoning tokens (`null` when
    /// unreported), `cost_usd` and `cost_source` (`provider` when the provider priced the call
    /// itself, `table` when the price table did, `unknown`), and the provider's `cost_details`.
    fn fields(&self, tournament: Option<&str>, call: &LlmCallRecord) -> [(&'static str, Value); 6] {
        let table = tournament
            .and_then(|t| self.by_tournament.get(t))
            .unwrap_or(&self.built_in);
        let d = &call.details;
        let cost = call.cost(table);
        [
            ("cached_tokens", json!(d.cached_tokens)),
            ("cache_write_tokens", json!(d.cache_write_tokens)),
            ("reasoning_tokens", json!(d.reasoning_tokens)),
            ("cost_usd", json!(cost.usd)),
            ("cost_source", json!(cost.source.name())),
            (
                "cost_details",
                d.cost_details_json
                    .as_deref()
                    .map_or(Value::Null, jsonl::parsed),
            ),
        ]
    }
}

/// A score as `{"cp": n}` or `{"mate": n}`, the form of the stored top moves.
fn score_json(score: Score) -> Value {
    match score {
        Score::Cp(cp) => json!({ "cp": cp }),
        Score::Mate(n) => json!({ "mate": n }),
    }
}

/// The inverse of [`score_json`].
fn score_from_json(value: &Value) -> Option<Score> {
    let int = |k: &str| {
        value
            .get(k)
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
    };
    int("cp")
        .map(Score::Cp)
        .or_else(|| int("mate").map(Score::Mate))
}

/// What the exports say of a player, from its stored settings.
#[derive(Clone, Debug, Default)]
struct PlayerInfo {
    kind: String,
    model: Option<String>,
    mode: Option<String>,
    notation: Option<String>,
}

/// Every player of the store by tournament name and player name, read before a stream starts
/// (the store cannot be asked while it streams).
struct Players(HashMap<(String, String), PlayerInfo>);

impl Players {
    fn load(store: &Store) -> Result<Players, StoreError> {
        let mut map = HashMap::new();
        for t in store.tournaments()? {
            for p in store.players(t.id)? {
                let settings: Value = serde_json::from_str(&p.settings_json).unwrap_or_default();
                let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
                let info = PlayerInfo {
                    kind: p.kind,
                    model: text(settings.get("model")),
                    mode: text(settings.get("mode")),
                    notation: text(settings.pointer("/mode_options/notation")),
                };
                map.insert((t.name.clone(), p.name), info);
            }
        }
        Ok(Players(map))
    }

    fn get(&self, tournament: &str, player: &str) -> Option<&PlayerInfo> {
        self.0.get(&(tournament.to_owned(), player.to_owned()))
    }
}

/// What a PGN export writes beyond the moves and tags of [`pgn`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgnOptions {
    /// Annotate every move from the store: `[%eval]` from the engine analysis, NAGs from its move
    /// classes, `[%emt]` from the ply's time, the protocol failures of the ply in words, and the
    /// `ECO`, `Opening`, `TimeControl` and `Annotator` tags.
    pub annotate: bool,
    /// With `annotate`, add every reply of the model (and its separate reasoning text, if the
    /// provider returned one) to the move's comment.
    pub reasoning: bool,
}

/// Every game of `tournaments` as PGN, one after the other. Unfinished games are written with the
/// result `*`, so that what was played so far is not hidden.
///
/// # Errors
/// When the store cannot be read.
pub fn pgn(store: &Store, tournaments: &[TournamentRow]) -> Result<String, StoreError> {
    pgn_with(store, tournaments, PgnOptions::default())
}

/// [`pgn`] with options; `PgnOptions::default()` writes exactly what [`pgn`] writes.
///
/// # Errors
/// When the store cannot be read.
pub fn pgn_with(
    store: &Store,
    tournaments: &[TournamentRow],
    options: PgnOptions,
) -> Result<String, StoreError> {
    let mut out = String::new();
    for t in tournaments {
        let date = t
            .created_at
            .get(..10)
            .unwrap_or("????-??-??")
            .replace('-', ".");
        for game in store.games(t.id)? {
            let plies = store.plies(game.id)?;
            let finished = game.status == GameStatus::Finished;
            let result = finished
                .then(|| {
                    game.result
                        .as_deref()
                        .and_then(|r| r.parse::<GameResult>().ok())
                })
                .flatten();
            let termination = finished
                .then(|| {
                    game.termination
                        .as_deref()
                        .and_then(|r| r.parse::<Termination>().ok())
                })
                .flatten();
            let mut extra_tags = Vec::new();
            let mut annotations = None;
            let mut clock_commands = Vec::new();
            let mut comment = game.reason.clone();
            // A store of another arena may hold clocks it cannot read: the game is written
            // without them rather than not at all.
            let clocks: Option<GameClocks> = store
                .stored_time_control(game.id)?
                .and_then(|json| serde_json::from_str(&json).ok());
            if options.annotate {
                let notes =
                    annotate::game(store, &game, &plies, clocks.as_ref(), options.reasoning)?;
                extra_tags = notes.tags;
                annotations = Some(notes.moves);
                comment = match (comment, notes.unplayed) {
                    (Some(reason), Some(failures)) => Some(format!("{reason} | {failures}")),
                    (reason, failures) => reason.or(failures),
                };
            } else if let Some(clocks) = &clocks {
                extra_tags = clocks.pgn_tags();
                clock_commands = annotate::clock_commands(clocks, &plies);
            }
            extra_tags.push(("ArenaGame".to_string(), game.index.to_string()));
            if let Some(hash) = &game.script_hash {
                extra_tags.push(("ArenaScripts".into(), hash.clone()));
            }
            if let Some(label) = &game.opening_label {
                extra_tags.push(("ArenaOpening".into(), label.clone()));
            }
            let record = PgnGame {
                event: t.name.clone(),
                site: "arena".into(),
                date: date.clone(),
                round: game.round.to_string(),
                white: game.white.clone(),
                black: game.black.clone(),
                result,
                termination,
                start_fen: game.start_fen.clone(),
                variant: game.variant,
                san_moves: plies.iter().map(|p| p.san.clone()).collect(),
                extra_tags,
                comment,
                annotations,
                clock_commands,
            };
            out.push_str(&write_pgn(&record));
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{PlayerRecord, PlyRecord, ScheduledGame};

    #[test]
    fn pgn_counts_the_book_plies_and_the_played_ones() {
        // Two plies from the opening book, then four played (the move limit's count starts
        // after the book, but the game record holds them all).
        let store = Store::open_in_memory().unwrap();
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        store
            .upsert_player(t.id, &PlayerRecord::new("m", "llm", "{}"))
            .unwrap();
        store
            .upsert_player(t.id, &PlayerRecord::new("r", "random", "{}"))
            .unwrap();
        let mut scheduled = ScheduledGame::new(0, 1, "m", "r");
        scheduled.opening_moves = vec!["e2e4".into(), "e7e5".into()];
        store.schedule_games(t.id, &[scheduled]).unwrap();
        let game = store.games(t.id).unwrap()[0].id;
        store.mark_game_started(game, "hash", 1).unwrap();
        let mut position = shakmaty::Chess::default();
        let moves = [
            ("e2e4", "book"),
            ("e7e5", "book"),
            ("g1f3", "m"),
            ("b8c6", "r"),
            ("f1c4", "m"),
            ("g8f6", "r"),
        ];
        for (n, (uci, player)) in moves.into_iter().enumerate() {
            use shakmaty::{Position, fen::Fen, san::San, uci::UciMove};
            let fen_before =
                Fen::from_position(&position, shakmaty::EnPassantMode::Legal).to_string();
            let m = uci.parse::<UciMove>().unwrap().to_move(&position).unwrap();
            let san = San::from_move(&position, m).to_string();
            position = position.play(m).unwrap();
            store
                .record_ply(
                    game,
                    &PlyRecord {
                        ply: n as u32,
                        fen_before,
                        uci: uci.into(),
                        san,
                        player: player.into(),
                        attempts: 1,
                        elapsed_ms: 1,
                        clock_ms: None,
                    },
                )
                .unwrap();
        }
        store
            .finish_game(game, "1/2-1/2", "move_limit", None)
            .unwrap();
        let t = store.find_tournament("t").unwrap().unwrap();
        let pgn = pgn(&store, &[t]).unwrap();
        assert!(pgn.contains("[PlyCount \"6\"]"), "{pgn}");
        assert!(pgn.contains("1. e4 e5 2. Nf3"), "{pgn}");
    }
}
