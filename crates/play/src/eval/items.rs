//! The item set of a task: read from a data file or built from real positions, each item as
//! `(key, JSON)` so the store keeps exactly what was asked.
//!
//! - Basic understanding: ChessArena's JSONL, or squares drawn (85 % own piece, 7 % opponent's,
//!   8 % empty) on positions of a book.
//! - Move selection: ChessArena's JSONL, or book positions analysed by the engine (every legal
//!   move scored, Win% by ChessArena's formula, the top 3 kept), balanced over game phase and
//!   difficulty.
//! - Puzzles: ChessArena's `puzzles_<lo>_<hi>.jsonl` folder, a JSONL file or the Lichess CSV;
//!   the rating bands are interleaved so that a `limit` keeps every band represented.
//! - Board reconstruction: a PGN book (its move lists from the start position), or seeded random
//!   move lists from the start position or from book positions.

use std::{collections::BTreeMap, path::Path};

use futures_util::{StreamExt, stream};
use rand::{RngExt, SeedableRng, rngs::StdRng, seq::SliceRandom};
use serde::{Deserialize, Serialize};
use shakmaty::{CastlingMode, Chess, Position, san::SanPlus, uci::UciMove};

use super::{
    EvalError,
    datasets::{self, MoveSelectionItem, SquareSampling},
    lenient_position, puzzles,
    spec::{BuildSpec, TaskKind, TaskSpec, resolve_data_path},
};
use crate::{
    analysis::{AnalysisLimits, AnalysisPool, winrate::Phase, winrate::WinModel},
    board::{book, game::fen_of},
    engine::EngineSpec,
};

/// A board-reconstruction question: the moves from a start position and the FEN they reach.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReconstructionItem {
    /// The start position; `None` for the standard initial position.
    pub start_fen: Option<String>,
    /// The moves in UCI.
    pub moves_uci: Vec<String>,
    /// The same moves in SAN.
    pub moves_san: Vec<String>,
    /// The FEN after the moves.
    pub fen: String,
}

/// A built move-selection item with how it was balanced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Balanced {
    #[serde(flatten)]
    item: MoveSelectionItem,
    phase: String,
    difficulty: String,
}

/// Loads (or builds) up to `limit` items of a task; rows of a file that could not be used are
/// returned as warnings.
///
/// # Errors
/// An unreadable file, a missing variable in a data path, or an engine failure while building.
pub async fn load(
    task: &TaskSpec,
    script_dir: &Path,
    seed: u64,
) -> Result<(Vec<(String, String)>, Vec<String>), EvalError> {
    let limit = task
        .limit
        .or(task.build.as_ref().map(|b| b.count))
        .unwrap_or(usize::MAX);
    let path = |p: &str| {
        resolve_data_path(p, script_dir).map_err(|message| EvalError::Data {
            task: task.label(),
            message,
        })
    };
    let build_seed = |b: &BuildSpec| b.seed.unwrap_or(seed);
    let mut warnings = Vec::new();
    let mut keep = |loaded_errors: Vec<datasets::RowError>| {
        warnings.extend(loaded_errors.iter().map(ToString::to_string));
    };
    let items: Vec<(String, String)> = match (task.task, &task.data, &task.build) {
        (TaskKind::BasicUnderstanding, Some(data), _) => {
            let loaded = datasets::read_basic_jsonl(path(data)?)?;
            keep(loaded.errors);
            loaded
                .rows
                .into_iter()
                .take(limit)
                .map(|i| (format!("{} {}", i.fen, i.square), json(&i)))
                .collect()
        }
        (TaskKind::BasicUnderstanding, None, Some(b)) => {
            let fens = book_fens(task, b, script_dir, limit, build_seed(b))?;
            let loaded =
                datasets::generate_basic_items(&fens, SquareSampling::default(), build_seed(b));
            keep(loaded.errors);
            loaded
                .rows
                .into_iter()
                .take(limit)
                .map(|i| (format!("{} {}", i.fen, i.square), json(&i)))
                .collect()
        }
        (TaskKind::MoveSelection, Some(data), _) => {
            let loaded = datasets::read_move_selection_jsonl(path(data)?)?;
            keep(loaded.errors);
            loaded
                .rows
                .into_iter()
                .take(limit)
                .map(|i| (i.fen.clone(), json(&i)))
                .collect()
        }
        (TaskKind::MoveSelection, None, Some(b)) => {
            // Three candidates per wanted item leave room for balancing.
            let fens = book_fens(task, b, script_dir, limit.saturating_mul(3), build_seed(b))?;
            build_move_selection(task, b, &fens, limit).await?
        }
        (TaskKind::Puzzles, Some(data), _) => {
            let p = path(data)?;
            let loaded = if p.is_dir() {
                datasets::read_puzzle_dir(&p)?
            } else if p.extension().is_some_and(|e| e == "csv") {
                datasets::read_puzzles_csv(&p)?
            } else {
                datasets::read_puzzles_jsonl(&p)?
            };
            keep(loaded.errors);
            interleave_bands(loaded.rows)
                .into_iter()
                .take(limit)
                .map(|p| (p.id.clone(), json(&p)))
                .collect()
        }
        (TaskKind::BoardReconstruction, Some(data), _) => {
            let openings = book::read_pgn_openings(path(data)?).map_err(|e| EvalError::Data {
                task: task.label(),
                message: e.to_string(),
            })?;
            let mut out = Vec::new();
            for o in openings.into_iter().take(limit) {
                let item = reconstruction_item(o.fen.as_deref(), &o.moves).map_err(|message| {
                    EvalError::Data {
                        task: task.label(),
                        message: format!("{}: {message}", o.source),
                    }
                })?;
                out.push((key_of(&item), json(&item)));
            }
            out
        }
        (TaskKind::BoardReconstruction, None, Some(b)) => {
            let starts: Vec<Option<String>> = match &b.book {
                Some(_) => book_fens(task, b, script_dir, limit, build_seed(b))?
                    .into_iter()
                    .map(Some)
                    .collect(),
                None => vec![None; limit.min(100_000)],
            };
            let mut rng = StdRng::seed_from_u64(build_seed(b));
            let plies = b.plies.unwrap_or(12);
            let mut out = Vec::new();
            for start in starts.into_iter().take(limit) {
                let moves = random_line(start.as_deref(), plies, &mut rng);
                let item = reconstruction_item(start.as_deref(), &moves).map_err(|message| {
                    EvalError::Data {
                        task: task.label(),
                        message,
                    }
                })?;
                out.push((key_of(&item), json(&item)));
            }
            out
        }
        (_, None, None) => {
            return Err(EvalError::Data {
                task: task.label(),
                message: "no `data` and no `build`".to_owned(),
            });
        }
        (TaskKind::Puzzles, None, Some(_)) => {
            return Err(EvalError::Data {
                task: task.label(),
                message: "puzzles are read from `data` (a folder, JSONL or the Lichess CSV); they cannot be built".to_owned(),
            });
        }
    };
    Ok((dedup(items), warnings))
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("items serialize")
}

/// Drops repeated keys (the same position twice in a book), keeping the first.
fn dedup(items: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .filter(|(k, _)| seen.insert(k.clone()))
        .collect()
}

fn key_of(item: &ReconstructionItem) -> String {
    format!(
        "{} {}",
        item.start_fen.as_deref().unwrap_or("startpos"),
        item.moves_uci.join(" ")
    )
}

/// Up to `count` distinct book positions as FENs, shuffled with `seed`.
fn book_fens(
    task: &TaskSpec,
    build: &BuildSpec,
    script_dir: &Path,
    count: usize,
    seed: u64,
) -> Result<Vec<String>, EvalError> {
    let data = |message: String| EvalError::Data {
        task: task.label(),
        message,
    };
    let mut fens: Vec<String> = match (&build.book, &build.games) {
        (Some(book), None) => {
            let path = resolve_data_path(book, script_dir).map_err(data)?;
            let openings = if path.extension().is_some_and(|e| e == "pgn") {
                book::read_pgn_openings(&path)
            } else {
                book::read_epd(&path)
            }
            .map_err(|e| data(e.to_string()))?;
            openings
                .iter()
                .filter_map(|o| {
                    let pos = opening_position(o.fen.as_deref(), &o.moves).ok()?;
                    (!pos.legal_moves().is_empty()).then(|| fen_of(&pos))
                })
                .collect()
        }
        (None, Some(games)) => {
            let path = resolve_data_path(games, script_dir).map_err(data)?;
            stored_game_fens(&path, build.player.as_deref()).map_err(data)?
        }
        _ => {
            return Err(data(
                "`build` needs either a `book` of positions or `games` (an arena store)".to_owned(),
            ));
        }
    };
    fens.sort();
    fens.dedup();
    fens.shuffle(&mut StdRng::seed_from_u64(seed));
    fens.truncate(count);
    Ok(fens)
}

/// The positions of every game stored in the arena store at `path` in which `player` (or anyone)
/// was to move; opening-book plies are left out, since nobody chose those moves.
fn stored_game_fens(path: &Path, player: Option<&str>) -> Result<Vec<String>, String> {
    if !path.is_file() {
        return Err(format!("no arena store at `{}`", path.display()));
    }
    let store = crate::store::Store::open(path).map_err(|e| e.to_string())?;
    let mut fens = Vec::new();
    for tournament in store.tournaments().map_err(|e| e.to_string())? {
        for game in store.games(tournament.id).map_err(|e| e.to_string())? {
            for ply in store.plies(game.id).map_err(|e| e.to_string())? {
                if ply.player == "book" || player.is_some_and(|p| p != ply.player) {
                    continue;
                }
                if let Ok(pos) = lenient_position(&ply.fen_before)
                    && !pos.legal_moves().is_empty()
                {
                    fens.push(fen_of(&pos));
                }
            }
        }
    }
    if fens.is_empty() {
        return Err(format!(
            "the store `{}` has no stored positions{}",
            path.display(),
            player
                .map(|p| format!(" of player `{p}`"))
                .unwrap_or_default()
        ));
    }
    Ok(fens)
}

fn opening_position(fen: Option<&str>, moves: &[String]) -> Result<Chess, String> {
    let mut pos = match fen {
        Some(f) => lenient_position(f).map_err(|e| e.to_string())?,
        None => Chess::default(),
    };
    for m in moves {
        let mv = crate::board::game::parse_uci_in(&pos, m).map_err(|e| e.to_string())?;
        pos.play_unchecked(mv);
    }
    Ok(pos)
}

/// Plays a seeded random line of up to `plies` moves (fewer when the game ends).
fn random_line(start: Option<&str>, plies: u32, rng: &mut StdRng) -> Vec<String> {
    let Ok(mut pos) = opening_position(start, &[]) else {
        return Vec::new();
    };
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal[rng.random_range(0..legal.len())];
        moves.push(UciMove::from_move(mv, CastlingMode::Standard).to_string());
        pos.play_unchecked(mv);
    }
    moves
}

/// The reconstruction item for moves played from `start`.
///
/// # Errors
/// A message for an unreadable start or an illegal move.
pub fn reconstruction_item(
    start: Option<&str>,
    moves: &[String],
) -> Result<ReconstructionItem, String> {
    let mut pos = opening_position(start, &[])?;
    let mut san = Vec::new();
    let mut uci = Vec::new();
    for m in moves {
        let mv = crate::board::game::parse_uci_in(&pos, m).map_err(|e| e.to_string())?;
        san.push(SanPlus::from_move(pos.clone(), mv).to_string());
        uci.push(UciMove::from_move(mv, CastlingMode::Standard).to_string());
        pos.play_unchecked(mv);
    }
    Ok(ReconstructionItem {
        start_fen: start.map(str::to_owned),
        moves_uci: uci,
        moves_san: san,
        fen: fen_of(&pos),
    })
}

/// Puzzles ordered band by band in turn (first of each band, then second of each...), so the
/// first N cover every rating band.
fn interleave_bands(rows: Vec<datasets::Puzzle>) -> Vec<datasets::Puzzle> {
    let mut bands: BTreeMap<usize, Vec<datasets::Puzzle>> = BTreeMap::new();
    for p in rows {
        bands.entry(puzzles::band_of(p.rating)).or_default().push(p);
    }
    let mut iters: Vec<_> = bands.into_values().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for it in &mut iters {
            out.extend(it.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

/// How hard choosing is: the share of legal moves within 5 Win% of the best.
fn difficulty(wins: &[f64]) -> &'static str {
    let best = wins.iter().copied().fold(f64::MIN, f64::max);
    let near = wins.iter().filter(|w| best - **w <= 5.0).count() as f64 / wins.len() as f64;
    if near > 0.5 {
        "easy"
    } else if near > 0.2 {
        "medium"
    } else {
        "hard"
    }
}

/// Analyses candidate positions and keeps `count`, drawn in turn from each (phase, difficulty)
/// group so that no group dominates.
async fn build_move_selection(
    task: &TaskSpec,
    build: &BuildSpec,
    fens: &[String],
    count: usize,
) -> Result<Vec<(String, String)>, EvalError> {
    let processes = build.processes.unwrap_or(1).max(1);
    let spec = EngineSpec::new(
        "move-selection-builder",
        build
            .engine
            .clone()
            .unwrap_or_else(|| "stockfish".to_owned()),
    )
    .option("Threads", "1")
    .option("Hash", "16");
    let pool = AnalysisPool::new(spec, processes);
    let limits = AnalysisLimits {
        depth: build.depth.or(if build.nodes.is_some() {
            None
        } else {
            Some(10)
        }),
        nodes: build.nodes,
        movetime_ms: None,
        multipv: 1,
    };
    let analysed: Vec<Result<Balanced, EvalError>> = stream::iter(fens.iter().cloned())
        .map(|fen| {
            let pool = &pool;
            async move {
                let scored =
                    pool.score_all_moves(&fen, &limits)
                        .await
                        .map_err(|e| EvalError::Data {
                            task: task.label(),
                            message: format!("analysing `{fen}`: {e}"),
                        })?;
                let pos = lenient_position(&fen)?;
                let legal = crate::board::render::legal_uci(&pos);
                let move_with_winrate: Vec<(String, f64)> = scored
                    .iter()
                    .map(|m| (m.uci.clone(), WinModel::ChessArena.win_percent(m.score)))
                    .collect();
                let wins: Vec<f64> = move_with_winrate.iter().map(|(_, w)| *w).collect();
                let fullmove: u32 = fen
                    .split_whitespace()
                    .nth(5)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                let ply = (fullmove.max(1) - 1) * 2 + u32::from(pos.turn().is_black());
                Ok(Balanced {
                    item: MoveSelectionItem {
                        fen: fen.clone(),
                        legal_moves: legal,
                        top_moves: scored.iter().take(3).map(|m| m.uci.clone()).collect(),
                        move_with_winrate,
                        system: None,
                        prompts: BTreeMap::new(),
                    },
                    phase: Phase::of(&pos, ply).as_str().to_owned(),
                    difficulty: difficulty(&wins).to_owned(),
                })
            }
        })
        .buffered(processes)
        .collect()
        .await;
    pool.shutdown().await;
    let mut groups: BTreeMap<(String, String), Vec<Balanced>> = BTreeMap::new();
    for b in analysed {
        let b = b?;
        if b.item.move_with_winrate.is_empty() {
            continue;
        }
        groups
            .entry((b.phase.clone(), b.difficulty.clone()))
            .or_default()
            .push(b);
    }
    let mut iters: Vec<_> = groups.into_values().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    while out.len() < count {
        let before = out.len();
        for it in &mut iters {
            if out.len() < count
                && let Some(b) = it.next()
            {
                out.push((b.item.fen.clone(), json(&b)));
            }
        }
        if out.len() == before {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconstruction_items_replay_their_moves() {
        let item = reconstruction_item(None, &["e2e4".into(), "c7c5".into(), "g1f3".into()])
            .expect("legal");
        assert_eq!(item.moves_san, ["e4", "c5", "Nf3"]);
        assert_eq!(
            item.fen,
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
        );
        assert!(reconstruction_item(None, &["e2e5".into()]).is_err());
        let mut rng = StdRng::seed_from_u64(3);
        let line = random_line(None, 10, &mut rng);
        assert_eq!(line.len(), 10);
        assert_eq!(line, random_line(None, 10, &mut StdRng::seed_from_u64(3)));
    }

    #[test]
    fn bands_are_interleaved_and_difficulty_is_graded() {
        let p = |id: &str, rating| datasets::Puzzle {
            id: id.into(),
            fen: String::new(),
            moves: vec![],
            rating,
            rating_deviation: None,
            popularity: None,
            nb_plays: None,
            themes: vec![],
            game_url: None,
            opening_tags: vec![],
        };
        let order: Vec<String> =
            interleave_bands(vec![p("a", 400), p("b", 450), p("c", 2000), p("d", 2100)])
                .into_iter()
                .map(|p| p.id)
                .collect();
        assert_eq!(order, ["a", "c", "b", "d"]);
        assert_eq!(difficulty(&[50.0, 49.0, 48.0]), "easy");
        assert_eq!(difficulty(&[80.0, 30.0, 20.0, 10.0, 5.0, 4.0]), "hard");
    }
}
