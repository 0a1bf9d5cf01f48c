//! Analysing stored games: the positions of a game (each ply's `fen_before`, then the final
//! position) are searched once each, and every ply gets its verdict.
//!
//! One search per position gives everything: its evaluation (line 1 of a `MultiPV` search) and its
//! top moves (all the lines). A ply reads two of them: the position before it (evaluation, best move,
//! top moves, the played move's rank) and the position after it (the evaluation after the move).
//! The played move's score is the score of its line in the search before it when it is among the
//! top moves (as ChessArena's `move_win_rate`), and otherwise the negated evaluation of the position
//! after it, from that position's own search at the same depth: what ChessArena gets from its extra
//! search of the position after the move, with `MultiPV` lines beside line 1, which changes the
//! score only by search noise. So no `go searchmoves` search is needed.
//!
//! **Warm hash, fixed order.** The positions of a game are cut into segments of
//! [`SEGMENT_POSITIONS`] consecutive positions; a segment is searched on one process, after one
//! `ucinewgame`, position after position in the settings' [`VisitOrder`] (forward by default), so each
//! search finds the hash filled by the searches of the positions next to it. Segments of one game
//! run on as many processes as the pool has. A position that occurs twice in a game is searched
//! once, at its first occurrence.
//!
//! **Determinism.** With `Threads = 1`, a segment's results depend only on the positions searched
//! in it, in order, from the cleared hash: the same game analysed with the same engine and settings
//! gives the same results however many processes there are, on whichever process each segment
//! lands, and whatever was analysed before. Forward, two games with the same start and the same
//! first moves get the same results for those positions while they share the first segment; the
//! same position reached by other moves may differ by search noise.
//!
//! **Cache.** Each searched position is stored in the store's analysis cache under its FEN (marked
//! as Chess960 in a Chess960 game, whose searches differ), the
//! engine and limits, and a digest of the positions searched before it in its segment (the hash's
//! history). A segment every position of which is cached (an interrupted analysis resumed, or a game
//! that repeats another's first segment) is read back and not searched: the search would give the
//! same. A segment only partly cached is searched whole, since its later searches depend on its
//! earlier ones.
//!
//! Resumable: plies already analysed are skipped, each ply is written as soon as both its positions
//! are known, and a game is marked analysed (with its game accuracy) only when every ply is.

use std::collections::{BTreeSet, HashMap, HashSet};

use futures_util::{StreamExt, stream::FuturesUnordered};
use sha2::{Digest, Sha256};
use shakmaty::{Chess, Color, Position};
use tracing::warn;

use super::{
    AnalysisError,
    pool::{AnalysisLimits, AnalysisPool, PositionAnalysis, RankedMove, parse_fen_in, play},
    winrate::{
        Classification, Phase, WinModel, game_accuracy, lichess_win_percent, move_accuracy,
        stored_cp_loss,
    },
};
use crate::{
    board::Variant,
    engine::Score,
    store::{Fence, GameAnalysisRecord, GameRow, GameStatus, PlyAnalysisRecord, Store},
};

/// How many consecutive positions of a game one process searches in a row with a warm hash. Fixed
/// (never derived from the number of processes), so how a game is cut, and thus every result, is the
/// same on any machine; long enough that the one cold search per segment costs little, short enough
/// that one long game keeps two processes busy.
pub const SEGMENT_POSITIONS: usize = 32;

/// In which order the positions of a segment are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VisitOrder {
    /// First to last: each search finds in the hash the subtree its predecessor searched, which
    /// holds this position; games that share their first moves get identical results for them.
    #[default]
    Forward,
    /// Last to first: each search finds the deeper results of its successor in the hash.
    Backward,
}

/// How games are analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnalysisSettings {
    /// Search limits and the number of top moves.
    pub limits: AnalysisLimits,
    /// The Win% formula behind the classes.
    pub win_model: WinModel,
    /// Also score every legal move of every position (for the move-advantage rate); one more search
    /// per ply, with `MultiPV` as large as the number of legal moves.
    pub all_moves: bool,
    /// The order in which a segment's positions are searched.
    pub order: VisitOrder,
}

/// What analysing one game did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GameReport {
    /// The game's stored plies.
    pub plies: u32,
    /// Plies analysed by this call (the others were already stored).
    pub analysed: u32,
    /// Positions answered by the cache.
    pub cached: u32,
    /// Positions searched by an engine.
    pub searched: u32,
    /// Whether the game is now fully analysed.
    pub complete: bool,
}

/// Analyses stored games with one pool and one set of settings.
#[derive(Debug)]
pub struct Analyser<'a> {
    store: &'a Store,
    pool: &'a AnalysisPool,
    settings: AnalysisSettings,
    engine_id: String,
}

/// What a segment's searches found for one position: its analysis and, with `all_moves`, every
/// legal move's score.
type Found = (PositionAnalysis, Option<Vec<RankedMove>>);

impl<'a> Analyser<'a> {
    /// An analyser; starts one engine to learn its name for the cache key.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Start`] when the engine cannot be started.
    pub async fn new(
        store: &'a Store,
        pool: &'a AnalysisPool,
        settings: AnalysisSettings,
    ) -> Result<Analyser<'a>, AnalysisError> {
        let engine_id = pool.engine_id().await?;
        Ok(Analyser {
            store,
            pool,
            settings,
            engine_id,
        })
    }

    /// The engine and options part of the cache key.
    pub fn engine_id(&self) -> &str {
        &self.engine_id
    }

    /// The finished games of a tournament that are not fully analysed yet, in index order.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Store`] on a store failure.
    pub fn pending(&self, tournament: i64) -> Result<Vec<GameRow>, AnalysisError> {
        let done: HashSet<i64> = self.store.analysed_games(tournament)?.into_iter().collect();
        Ok(self
            .store
            .games(tournament)?
            .into_iter()
            .filter(|g| g.status == GameStatus::Finished && !done.contains(&g.id))
            .collect())
    }

    /// Analyses the plies of `game` that are not analysed yet and, once all are, records the
    /// game's accuracy. With `lease` (the game's analysis lease), every write checks that this
    /// worker still holds it: a worker that stalled while another took the game over writes
    /// nothing more ([`crate::store::StoreError::LeaseLost`]).
    ///
    /// # Errors
    ///
    /// [`AnalysisError::BadFen`] or [`AnalysisError::BadPly`] for stored data that does not replay,
    /// the engine's errors (after one retry of the failed segment on a fresh process), and
    /// [`AnalysisError::Store`].
    pub async fn analyse_game(
        &self,
        game: &GameRow,
        lease: Option<&Fence>,
    ) -> Result<GameReport, AnalysisError> {
        let plies = self.store.plies(game.id)?;
        let done: HashSet<u32> = self
            .store
            .ply_analyses(game.id)?
            .iter()
            .map(|a| a.ply)
            .collect();

        // Position i is the one before ply i; the last one is after the last ply.
        let mut positions: Vec<(String, Chess)> = Vec::with_capacity(plies.len() + 1);
        for ply in &plies {
            positions.push((
                ply.fen_before.clone(),
                parse_fen_in(game.variant, &ply.fen_before)?,
            ));
        }
        if let Some(last) = plies.last() {
            let before = &positions[positions.len() - 1].1;
            let after = play(before, &last.uci).ok_or_else(|| AnalysisError::BadPly {
                game_id: game.id,
                ply: last.ply,
                uci: last.uci.clone(),
            })?;
            let fen = shakmaty::fen::Fen::from_position(&after, shakmaty::EnPassantMode::Legal);
            positions.push((fen.to_string(), after));
        }
        let final_index = plies.len();
        let draw_by_rule = matches!(
            game.termination.as_deref(),
            Some(
                "insufficient_material"
                    | "fivefold_repetition"
                    | "seventy_five_move_rule"
                    | "threefold_repetition"
                    | "fifty_move_rule"
            )
        );
        // Positions the rules settle are never searched; every other one is searched at its first
        // occurrence in the game.
        let settled: Vec<Option<PositionAnalysis>> = positions
            .iter()
            .enumerate()
            .map(|(i, (_, position))| settle(position, draw_by_rule && i == final_index))
            .collect();
        let keys: Vec<String> = positions
            .iter()
            .map(|(fen, _)| cache_key(game.variant, fen))
            .collect();
        let mut first_seen: HashMap<&str, usize> = HashMap::new();
        let first: Vec<usize> = (0..positions.len())
            .map(|i| {
                if settled[i].is_some() {
                    i
                } else {
                    *first_seen.entry(keys[i].as_str()).or_insert(i)
                }
            })
            .collect();

        let todo: Vec<usize> = (0..plies.len())
            .filter(|&i| !done.contains(&plies[i].ply))
            .collect();
        let needed: BTreeSet<usize> = todo
            .iter()
            .flat_map(|&i| [i, i + 1])
            .filter(|&j| settled[j].is_none())
            .map(|j| first[j] / SEGMENT_POSITIONS)
            .collect();
        let mut searches: FuturesUnordered<_> = needed
            .into_iter()
            .map(|segment| {
                let start = segment * SEGMENT_POSITIONS;
                let end = (start + SEGMENT_POSITIONS).min(positions.len());
                let mut order: Vec<usize> = (start..end)
                    .filter(|&j| settled[j].is_none() && first[j] == j)
                    .collect();
                if self.settings.order == VisitOrder::Backward {
                    order.reverse();
                }
                let segment_positions: Vec<(usize, &str, bool)> = order
                    .into_iter()
                    .map(|j| (j, positions[j].0.as_str(), j < final_index))
                    .collect();
                async move { self.segment(game.variant, &segment_positions).await }
            })
            .collect();

        let mut report = GameReport {
            plies: plies.len() as u32,
            ..GameReport::default()
        };
        let mut found: HashMap<usize, Found> = HashMap::new();
        let mut waiting: BTreeSet<usize> = todo.iter().copied().collect();
        loop {
            // Write every ply whose two positions are known, so a kill loses as little as possible.
            let analysis_at = |j: usize| {
                settled[j]
                    .as_ref()
                    .or_else(|| found.get(&first[j]).map(|(a, _)| a))
            };
            let ready: Vec<usize> = waiting
                .iter()
                .copied()
                .filter(|&i| analysis_at(i).is_some() && analysis_at(i + 1).is_some())
                .collect();
            for i in ready {
                waiting.remove(&i);
                let ply = &plies[i];
                let terminal = (i + 1 == plies.len())
                    .then(|| {
                        game.termination
                            .as_deref()
                            .and_then(Classification::terminal)
                    })
                    .flatten();
                let all = found.get(&first[i]).and_then(|(_, all)| all.clone());
                let (before, after) = (
                    analysis_at(i).expect("ready"),
                    analysis_at(i + 1).expect("ready"),
                );
                let record = self.verdict(
                    ply.ply,
                    &ply.uci,
                    &positions[i].1,
                    before,
                    after,
                    terminal,
                    all,
                )?;
                match lease {
                    Some(fence) => self.store.leased(fence).record_ply_analysis(&record)?,
                    None => self.store.record_ply_analysis(game.id, &record)?,
                }
                report.analysed += 1;
            }
            match searches.next().await {
                Some(result) => {
                    let (results, from_cache) = result?;
                    let count = results.len() as u32;
                    if from_cache {
                        report.cached += count;
                    } else {
                        report.searched += count;
                    }
                    found.extend(results);
                }
                None => break,
            }
        }

        if waiting.is_empty() && todo.len() + done.len() >= plies.len() {
            let records = self.store.ply_analyses(game.id)?;
            let first = positions.first().map_or(Color::White, |(_, p)| p.turn());
            let (white_accuracy, black_accuracy) = accuracies(&records, first);
            let verdict = GameAnalysisRecord {
                engine_id: self.engine_id.clone(),
                limits_key: self.settings.limits.key(),
                win_model: self.settings.win_model.as_str().to_owned(),
                white_accuracy,
                black_accuracy,
            };
            match lease {
                Some(fence) => self.store.leased(fence).record_game_analysis(&verdict)?,
                None => self.store.record_game_analysis(game.id, &verdict)?,
            }
            report.complete = true;
        }
        Ok(report)
    }

    /// One segment's positions (index, FEN, whether a move was played from it), in visiting order:
    /// read back from the cache when every one of them is there, else all searched on one process
    /// from a cleared hash (retried whole, once, on a fresh process after an engine fault) and
    /// cached. Says whether the answer came from the cache.
    async fn segment(
        &self,
        variant: Variant,
        segment: &[(usize, &str, bool)],
    ) -> Result<(Vec<(usize, Found)>, bool), AnalysisError> {
        let all_moves = self.settings.all_moves;
        // The cache keys: each position's limits key carries a digest of the searches before it.
        let base = self.settings.limits.key();
        let mut history = Sha256::new();
        history.update(format!("all_moves={all_moves}\n").as_bytes());
        let keys: Vec<(String, String, Option<String>)> = segment
            .iter()
            .map(|&(_, fen, played_from)| {
                let digest = format!("{:x}", history.clone().finalize());
                let seq = &digest[..16];
                let key = cache_key(variant, fen);
                history.update(key.as_bytes());
                history.update(b"\n");
                (
                    key,
                    format!("{base} seq={seq}"),
                    (all_moves && played_from).then(|| format!("{base} all-moves seq={seq}")),
                )
            })
            .collect();
        if let Some(results) = self.cached_segment(segment, &keys)? {
            return Ok((results, true));
        }
        let mut attempt = 0;
        let results = loop {
            match self.search_segment(variant, segment).await {
                Ok(results) => break results,
                Err(e) if attempt == 0 && e.is_engine_fault() => {
                    // The actor replaced the faulty process; the segment starts over on the new one.
                    warn!(error = %e, "analysis failed; the segment is searched again on a fresh process");
                    self.pool.count_retry();
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        for ((_, (analysis, all)), (key, limits_key, all_key)) in results.iter().zip(&keys) {
            let json = serde_json::to_string(analysis).expect("an analysis always serialises");
            self.store
                .analysis_cache_put(key, &self.engine_id, limits_key, &json)?;
            if let (Some(all), Some(all_key)) = (all, all_key) {
                let json = serde_json::to_string(all).expect("moves always serialise");
                self.store
                    .analysis_cache_put(key, &self.engine_id, all_key, &json)?;
            }
        }
        Ok((results, false))
    }

    /// A segment's answers from the cache, if every one of them is there.
    fn cached_segment(
        &self,
        segment: &[(usize, &str, bool)],
        keys: &[(String, String, Option<String>)],
    ) -> Result<Option<Vec<(usize, Found)>>, AnalysisError> {
        let mut results = Vec::with_capacity(segment.len());
        for (&(index, _, _), (key, limits_key, all_key)) in segment.iter().zip(keys) {
            let read = |limits_key: &str| -> Result<Option<String>, AnalysisError> {
                Ok(self
                    .store
                    .analysis_cache_get(key, &self.engine_id, limits_key)?)
            };
            let bad = |e: serde_json::Error| AnalysisError::BadCache {
                fen: key.clone(),
                reason: e.to_string(),
            };
            let Some(json) = read(limits_key)? else {
                return Ok(None);
            };
            let analysis: PositionAnalysis = serde_json::from_str(&json).map_err(bad)?;
            let all = match all_key {
                Some(all_key) => match read(all_key)? {
                    Some(json) => Some(serde_json::from_str(&json).map_err(bad)?),
                    None => return Ok(None),
                },
                None => None,
            };
            results.push((index, (analysis, all)));
        }
        Ok(Some(results))
    }

    /// Searches a segment's positions of a `variant` game in order on one session.
    async fn search_segment(
        &self,
        variant: Variant,
        segment: &[(usize, &str, bool)],
    ) -> Result<Vec<(usize, Found)>, AnalysisError> {
        let session = self.pool.session(variant).await?;
        let limits = &self.settings.limits;
        let mut results = Vec::with_capacity(segment.len());
        for &(index, fen, played_from) in segment {
            let analysis = session.analyse(fen, limits).await?;
            let all = if self.settings.all_moves && played_from {
                Some(session.score_all_moves(fen, limits).await?)
            } else {
                None
            };
            results.push((index, (analysis, all)));
        }
        Ok(results)
    }

    /// The verdict on one move from the analyses of the positions before and after it.
    #[allow(clippy::too_many_arguments)]
    fn verdict(
        &self,
        ply: u32,
        uci: &str,
        position: &Chess,
        before: &PositionAnalysis,
        after: &PositionAnalysis,
        terminal: Option<Classification>,
        all: Option<Vec<RankedMove>>,
    ) -> Result<PlyAnalysisRecord, AnalysisError> {
        let model = self.settings.win_model;
        let win_before = model.win_percent(before.score);
        // The score after the move is the opponent's; the model's Win% is symmetric around 50.
        let win_after = 100.0 - model.win_percent(after.score);
        let best_played = before.best.as_deref() == Some(uci);
        let classification = terminal
            .unwrap_or_else(|| Classification::from_drop(best_played, win_before - win_after));
        let top_rank = before.rank_of(uci);
        let (played_rank, played_score) = match &all {
            Some(all) => {
                let found = all.iter().position(|m| m.uci == uci);
                (found.map(|r| r as u32 + 1), found.map(|r| all[r].score))
            }
            // Among the top moves: its line's score; else the position after it, searched anyway.
            None => (
                top_rank,
                Some(top_rank.map_or_else(
                    || score_of_move_into(after.score),
                    |r| before.top[r as usize - 1].score,
                )),
            ),
        };
        let accuracy = move_accuracy(
            lichess_win_percent(before.score),
            100.0 - lichess_win_percent(after.score),
        );
        Ok(PlyAnalysisRecord {
            ply,
            engine_id: self.engine_id.clone(),
            limits_key: self.settings.limits.key(),
            win_model: model.as_str().to_owned(),
            eval_before: before.score,
            eval_after: after.score,
            best: before.best.clone(),
            pv: before.pv.clone(),
            top_json: serde_json::to_string(&before.top).expect("moves always serialise"),
            played_rank,
            in_top: top_rank.is_some(),
            played_score,
            all_moves_json: all
                .map(|all| serde_json::to_string(&all).expect("moves always serialise")),
            win_before,
            win_after,
            cp_loss: stored_cp_loss(before.score, after.score),
            accuracy,
            phase: Phase::of(position, ply).as_str().to_owned(),
            classification: classification.as_str().to_owned(),
        })
    }
}

/// The analysis the rules give a position where the game is over (mated, stalemated, or the final
/// position of a game drawn by a rule), or `None` when it must be searched. The engine's view of a
/// drawn-by-rule position (it may see winning chances) is not the game's.
fn settle(position: &Chess, drawn: bool) -> Option<PositionAnalysis> {
    if !drawn && !position.legal_moves().is_empty() {
        return None;
    }
    let score = if position.is_checkmate() {
        Score::Mate(0)
    } else {
        Score::Cp(0)
    };
    Some(PositionAnalysis {
        score,
        best: None,
        pv: Vec::new(),
        top: Vec::new(),
    })
}

/// The score of the move that led to a position, for the side that played it, from the position's
/// own evaluation (for the side to move there): negated, and a mate one move further away.
fn score_of_move_into(after: Score) -> Score {
    match after {
        Score::Cp(cp) => Score::Cp(-cp),
        // The opponent is mated in n (0: already mated): the mover mates in n + 1.
        Score::Mate(n) if n <= 0 => Score::Mate(1 - n),
        // The opponent mates in n: the mover is mated in n.
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// The cache key of a position of a `variant` game: [`cache_fen`], prefixed by `chess960 ` in a
/// Chess960 game, whose answers write castling as king takes rook (and whose FEN may read like a
/// standard one).
fn cache_key(variant: Variant, fen: &str) -> String {
    match variant {
        Variant::Standard => cache_fen(fen),
        Variant::Chess960 => format!("chess960 {}", cache_fen(fen)),
    }
}

/// The cache key of a position: its FEN without the move number, which no engine reads, so the same
/// position reached at another move number is found too.
fn cache_fen(fen: &str) -> String {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    fields[..fields.len().min(5)].join(" ")
}

/// Lichess's game accuracy per colour from a game's analysed plies, in ply order.
fn accuracies(records: &[PlyAnalysisRecord], first: Color) -> (Option<f64>, Option<f64>) {
    let Some(start) = records.first() else {
        return (None, None);
    };
    // White's Win% before the first move, then after every move. The side to move alternates.
    let white_view = |mover: Color, own: f64| match mover {
        Color::White => own,
        Color::Black => 100.0 - own,
    };
    let mut wins = vec![white_view(first, lichess_win_percent(start.eval_before))];
    let mut mover = first;
    for r in records {
        wins.push(white_view(mover, 100.0 - lichess_win_percent(r.eval_after)));
        mover = !mover;
    }
    game_accuracy(&wins, first)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{
        board::Game,
        engine::EngineSpec,
        store::{PlayerRecord, PlyRecord, ScheduledGame},
    };

    const STOCKFISH: &str = "/usr/games/stockfish";

    fn pool() -> Option<AnalysisPool> {
        if !Path::new(STOCKFISH).exists() {
            crate::test_parts::missing(
                "analysis::game tests",
                STOCKFISH,
                "apt-get install stockfish",
            );
            return None;
        }
        let spec = EngineSpec::new("sf", STOCKFISH)
            .option("Threads", "1")
            .option("Hash", "16");
        Some(AnalysisPool::new(spec, 2))
    }

    fn settings() -> AnalysisSettings {
        AnalysisSettings {
            limits: AnalysisLimits {
                depth: Some(8),
                nodes: None,
                movetime_ms: None,
                multipv: 3,
            },
            win_model: WinModel::Lichess,
            all_moves: false,
            order: VisitOrder::Forward,
        }
    }

    /// Stores a finished game between `w` and `b` with these moves from the start position.
    fn store_game(
        store: &Store,
        index: u32,
        moves: &[&str],
        result: &str,
        termination: &str,
    ) -> GameRow {
        store_game_in(store, Variant::Standard, index, moves, result, termination)
    }

    /// [`store_game`] for a game of `variant` (from Chess960's position 518, the standard one).
    fn store_game_in(
        store: &Store,
        variant: Variant,
        index: u32,
        moves: &[&str],
        result: &str,
        termination: &str,
    ) -> GameRow {
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        for name in ["w", "b"] {
            store
                .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
                .unwrap();
        }
        store
            .schedule_games(
                t.id,
                &[ScheduledGame {
                    variant,
                    ..ScheduledGame::new(index, 0, "w", "b")
                }],
            )
            .unwrap();
        let row = store
            .games(t.id)
            .unwrap()
            .into_iter()
            .find(|g| g.index == index)
            .unwrap();
        store.mark_game_started(row.id, "h", 1).unwrap();
        let mut game = Game::new_in(variant, None, 0).unwrap();
        for (n, uci) in moves.iter().enumerate() {
            let fen_before = game.fen();
            let played = game.play_uci(uci).unwrap();
            let player = if n % 2 == 0 { "w" } else { "b" };
            store
                .record_ply(
                    row.id,
                    &PlyRecord {
                        ply: n as u32,
                        fen_before,
                        uci: played.uci,
                        san: played.san,
                        player: player.into(),
                        attempts: 1,
                        elapsed_ms: 1,
                        clock_ms: None,
                    },
                )
                .unwrap();
        }
        store
            .finish_game(row.id, result, termination, None)
            .unwrap();
        store.game(row.id).unwrap()
    }

    #[tokio::test]
    async fn a_hung_mate_is_a_blunder_and_the_mate_is_labelled() {
        let Some(pool) = pool() else { return };
        let store = Store::open_in_memory().unwrap();
        // 1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6?? 4.Qxf7#
        let moves = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"];
        let game = store_game(&store, 0, &moves, "1-0", "checkmate");
        let analyser = Analyser::new(&store, &pool, settings()).await.unwrap();
        assert_eq!(analyser.pending(game.tournament).unwrap().len(), 1);
        let report = analyser.analyse_game(&game, None).await.unwrap();
        assert_eq!(
            (report.plies, report.analysed, report.complete),
            (7, 7, true)
        );
        // Eight positions; the mated one is settled by the rules.
        assert_eq!(report.searched + report.cached, 7);

        let plies = store.ply_analyses(game.id).unwrap();
        let nf6 = &plies[5];
        assert_eq!(nf6.classification, "blunder", "{nf6:?}");
        assert_eq!(
            nf6.eval_after,
            Score::Mate(1),
            "White mates in one after Nf6"
        );
        assert!(nf6.win_before - nf6.win_after >= 30.0);
        assert!(!nf6.in_top && nf6.played_rank.is_none());
        assert_eq!(nf6.cp_loss, 1000);
        // A drop of 40-odd Lichess Win% points scores around 10 of 100.
        assert!(
            nf6.accuracy > 0.0 && nf6.accuracy < 20.0,
            "{}",
            nf6.accuracy
        );

        let mate = &plies[6];
        assert_eq!(mate.classification, "checkmate_delivered");
        assert_eq!(
            (mate.eval_before, mate.eval_after),
            (Score::Mate(1), Score::Mate(0))
        );
        assert_eq!(mate.best.as_deref(), Some("h5f7"));
        assert_eq!((mate.played_rank, mate.in_top), (Some(1), true));
        assert_eq!(mate.played_score, Some(Score::Mate(1)));
        assert_eq!(mate.cp_loss, 0);
        assert!(plies.iter().all(|p| p.phase == "opening"));

        let verdict = store
            .game_analysis(game.id)
            .unwrap()
            .expect("the game is marked");
        let (white, black) = (
            verdict.white_accuracy.unwrap(),
            verdict.black_accuracy.unwrap(),
        );
        assert!(white > black, "white {white} black {black}");
        assert!(analyser.pending(game.tournament).unwrap().is_empty());

        let summary = store.analysis_summary(game.tournament).unwrap();
        let b = summary.iter().find(|r| r.player == "b").unwrap();
        assert_eq!((b.plies, b.blunder), (3, 1));
        pool.shutdown().await;
    }

    #[tokio::test]
    async fn games_sharing_their_first_moves_share_those_results() {
        let Some(pool) = pool() else { return };
        let store = Store::open_in_memory().unwrap();
        let moves = ["e2e4", "e7e5", "g1f3"];
        let first = store_game(&store, 0, &moves, "1/2-1/2", "move_limit");
        let second = store_game(
            &store,
            1,
            &["e2e4", "e7e5", "b1c3"],
            "1/2-1/2",
            "move_limit",
        );
        let again = store_game(&store, 2, &moves, "1/2-1/2", "move_limit");
        let analyser = Analyser::new(&store, &pool, settings()).await.unwrap();

        let one = analyser.analyse_game(&first, None).await.unwrap();
        assert_eq!((one.searched, one.cached), (4, 0));
        assert_eq!((pool.engine_requests(), pool.sessions()), (4, 1));

        // One segment, and its last position is new: searched whole, from a cleared hash, so the
        // three positions it shares with the first game, searched in the same order, come out the
        // same.
        let two = analyser.analyse_game(&second, None).await.unwrap();
        assert_eq!((two.searched, two.cached), (4, 0));
        assert_eq!((pool.engine_requests(), pool.sessions()), (8, 2));
        let plies = store.ply_analyses(second.id).unwrap();
        assert_eq!(plies[2].classification, "move_limit_reached");
        assert_eq!(
            store.ply_analyses(first.id).unwrap()[..2],
            plies[..2],
            "identical positions after identical moves give identical verdicts"
        );

        // The same game again: its one segment is all in the cache, and nothing is searched.
        let three = analyser.analyse_game(&again, None).await.unwrap();
        assert_eq!((three.searched, three.cached, three.complete), (0, 4, true));
        assert_eq!(pool.engine_requests(), 8);
        assert_eq!(
            store.ply_analyses(first.id).unwrap(),
            store.ply_analyses(again.id).unwrap()
        );

        // Nothing is left to do, and asking again changes nothing.
        let again = analyser.analyse_game(&second, None).await.unwrap();
        assert_eq!(
            (again.analysed, again.searched, again.complete),
            (0, 0, true)
        );
        assert_eq!(pool.engine_requests(), 8);
        pool.shutdown().await;
    }

    /// 44 plies of Stockfish at 300 nodes against itself: 45 positions, two segments.
    const LONG_GAME: [&str; 44] = [
        "d2d4", "d7d5", "c2c4", "d5c4", "e2e4", "c7c5", "d4d5", "b7b5", "a2a4", "g8f6", "b1c3",
        "b5b4", "c3b5", "a7a6", "f1c4", "a6b5", "c4b5", "c8d7", "d1e2", "d8a5", "b5d3", "d7g4",
        "f2f3", "g4d7", "b2b3", "e7e6", "g1h3", "e6e5", "h3f2", "g7g6", "f3f4", "f8d6", "c1b2",
        "a5c7", "f4e5", "d6e5", "a1c1", "e8g8", "d5d6", "c7d6", "b2e5", "d6e5", "g2g3", "f8e8",
    ];

    /// Analyses `LONG_GAME` into a fresh store with `processes` engines, after `warm_up` other
    /// games on the same engines (which leave their hash full), and returns its stored plies.
    async fn long_game_analysis(
        processes: usize,
        warm_up: &[&[&str]],
        order: VisitOrder,
    ) -> Vec<PlyAnalysisRecord> {
        let spec = EngineSpec::new("sf", STOCKFISH)
            .option("Threads", "1")
            .option("Hash", "16");
        let pool = AnalysisPool::new(spec, processes);
        let store = Store::open_in_memory().unwrap();
        let settings = AnalysisSettings {
            limits: AnalysisLimits {
                depth: Some(11),
                ..settings().limits
            },
            order,
            ..settings()
        };
        let analyser = Analyser::new(&store, &pool, settings).await.unwrap();
        for (n, moves) in warm_up.iter().enumerate() {
            let game = store_game(&store, 10 + n as u32, moves, "*", "move_limit");
            analyser.analyse_game(&game, None).await.unwrap();
        }
        let game = store_game(&store, 0, &LONG_GAME, "1/2-1/2", "move_limit");
        let report = analyser.analyse_game(&game, None).await.unwrap();
        assert_eq!((report.analysed, report.searched), (44, 45));
        let plies = store.ply_analyses(game.id).unwrap();
        pool.shutdown().await;
        plies
    }

    #[tokio::test]
    async fn the_same_game_gives_the_same_results_on_one_or_two_processes() {
        if pool().is_none() {
            return;
        }
        let alone = long_game_analysis(1, &[], VisitOrder::Forward).await;
        assert_eq!(alone.len(), 44);
        // Two processes, each of which has searched other positions first: the second segment
        // lands on another process than with one, after other searches, and the results are the
        // same to the last field.
        let busy = long_game_analysis(
            2,
            &[&LONG_GAME[..30], &["g1f3", "d7d5", "g2g3", "c7c5", "f1g2"]],
            VisitOrder::Forward,
        )
        .await;
        assert_eq!(alone, busy);
        // Backwards is as deterministic, and the same search depth gives the same kind of answers.
        let backward = long_game_analysis(2, &[], VisitOrder::Backward).await;
        assert_eq!(backward.len(), 44);
        assert_eq!(
            backward,
            long_game_analysis(1, &[], VisitOrder::Backward).await
        );
    }

    #[tokio::test]
    async fn every_search_of_a_chess960_game_is_a_chess960_one_with_its_own_cache_entries() {
        if pool().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stdin.log");
        let wrapper =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/engines/log_stdin.sh");
        let mut spec = EngineSpec::new("sf", wrapper.to_str().unwrap())
            .option("Threads", "1")
            .option("Hash", "16");
        spec.args = vec![log.to_str().unwrap().to_owned(), STOCKFISH.to_owned()];
        let pool = AnalysisPool::new(spec, 1);
        let store = Store::open_in_memory().unwrap();
        let analyser = Analyser::new(&store, &pool, settings()).await.unwrap();
        // Chess960's position 518 reads as the standard start, and so does every position of this
        // game (castling short lands where it does in chess): only the variant tells them apart.
        let opening = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"];
        let c960 = [&opening[..], &["e1h1", "f8c5"]].concat();
        let game = store_game_in(&store, Variant::Chess960, 0, &c960, "1/2-1/2", "move_limit");
        let report = analyser.analyse_game(&game, None).await.unwrap();
        assert_eq!((report.analysed, report.searched), (8, 9));

        let sent = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = sent.lines().collect();
        let on = "setoption name UCI_Chess960 value true";
        let first_go = lines.iter().position(|l| l.starts_with("go ")).unwrap();
        // The engine is switched to Chess960 before the session's first search, and stays so.
        assert!(lines[..first_go].contains(&on), "{sent}");
        assert!(!sent.contains("UCI_Chess960 value false"), "{sent}");
        assert_eq!(lines.iter().filter(|l| l.starts_with("go ")).count(), 9);
        // The castling ply, king takes rook, replayed in Chess960 castling mode and got a verdict.
        let plies = store.ply_analyses(game.id).unwrap();
        assert_eq!(plies.len(), 8);
        assert!(plies.iter().all(|p| p.best.is_some()), "{plies:?}");

        // The same positions in a standard game are searched again, in standard mode: a Chess960
        // answer (castling as king takes rook) is no standard one.
        let standard = [&opening[..], &["e1g1", "f8c5"]].concat();
        let game = store_game_in(
            &store,
            Variant::Standard,
            1,
            &standard,
            "1/2-1/2",
            "move_limit",
        );
        let report = analyser.analyse_game(&game, None).await.unwrap();
        pool.shutdown().await;
        assert_eq!((report.analysed, report.searched, report.cached), (8, 9, 0));
        let sent = std::fs::read_to_string(&log).unwrap();
        let switch = sent
            .lines()
            .position(|l| l == "setoption name UCI_Chess960 value false")
            .expect("switched back for the standard game");
        let new_games: Vec<usize> = (sent.lines().enumerate())
            .filter_map(|(i, l)| (l == "ucinewgame").then_some(i))
            .collect();
        let gos: Vec<usize> = (sent.lines().enumerate())
            .filter_map(|(i, l)| l.starts_with("go ").then_some(i))
            .collect();
        // Switched within the standard game's session, before its first search.
        assert!(new_games[1] < switch && switch < gos[9], "{sent}");
    }

    #[tokio::test]
    async fn one_search_per_position_gives_the_evaluation_and_the_top_moves() {
        if pool().is_none() {
            return;
        }
        // The engine's standard input is copied to a log on its way in.
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stdin.log");
        let wrapper =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/engines/log_stdin.sh");
        let mut spec = EngineSpec::new("sf", wrapper.to_str().unwrap())
            .option("Threads", "1")
            .option("Hash", "16");
        spec.args = vec![log.to_str().unwrap().to_owned(), STOCKFISH.to_owned()];
        let pool = AnalysisPool::new(spec, 1);
        let store = Store::open_in_memory().unwrap();
        let moves = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"];
        let game = store_game(&store, 0, &moves, "1-0", "checkmate");
        let analyser = Analyser::new(&store, &pool, settings()).await.unwrap();
        let report = analyser.analyse_game(&game, None).await.unwrap();
        pool.shutdown().await;
        assert_eq!((report.analysed, report.searched), (7, 7));

        let sent = std::fs::read_to_string(&log).unwrap();
        let gos: Vec<&str> = sent.lines().filter(|l| l.starts_with("go ")).collect();
        // Eight positions, the last one mated: seven searches, all plain depth-8 ones.
        assert_eq!(gos, ["go depth 8"; 7], "{sent}");
        assert_eq!(pool.engine_requests(), 7);
        assert_eq!(
            sent.lines().filter(|l| *l == "ucinewgame").count(),
            1,
            "one segment, one cleared hash: {sent}"
        );
        assert_eq!(
            sent.lines()
                .filter(|l| l.starts_with("setoption name MultiPV"))
                .collect::<Vec<_>>(),
            ["setoption name MultiPV value 3"]
        );
        let plies = store.ply_analyses(game.id).unwrap();
        for p in &plies[..6] {
            // Each ply's evaluation, best move and top three come from the one search before it.
            let top: Vec<RankedMove> = serde_json::from_str(&p.top_json).unwrap();
            assert_eq!(top.len(), 3, "{p:?}");
            assert_eq!(top[0].score, p.eval_before);
            assert_eq!(p.best.as_deref(), Some(top[0].uci.as_str()));
            assert_eq!(p.pv.first(), p.best.as_ref());
            // The played move's score: its line's, or the next search's, seen from the mover.
            let expected = top
                .iter()
                .find(|m| m.uci == moves[p.ply as usize])
                .map_or(score_of_move_into(p.eval_after), |m| m.score);
            assert_eq!(p.played_score, Some(expected), "{p:?}");
        }
        // Nf6?? is outside the top three: scored from the search after it, where White mates in 1.
        assert_eq!(plies[5].played_rank, None);
        assert_eq!(plies[5].played_score, Some(Score::Mate(-1)));
    }

    #[test]
    fn a_moves_score_is_its_successors_seen_from_the_mover() {
        assert_eq!(score_of_move_into(Score::Cp(35)), Score::Cp(-35));
        assert_eq!(score_of_move_into(Score::Mate(0)), Score::Mate(1));
        assert_eq!(score_of_move_into(Score::Mate(-2)), Score::Mate(3));
        assert_eq!(score_of_move_into(Score::Mate(1)), Score::Mate(-1));
    }

    #[test]
    fn cache_key_drops_the_move_number() {
        assert_eq!(
            cache_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0"
        );
        assert_eq!(
            cache_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 37"),
            cache_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
        );
    }
}
