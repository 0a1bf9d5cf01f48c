//! Analysing stored games: the positions of a game (each ply's `fen_before`, then the final
//! position) are searched once each, through the store's cache, and every ply gets its verdict.
//!
//! Resumable: plies already analysed are skipped, each ply is written as soon as both its positions
//! are known, and a game is marked analysed (with its game accuracy) only when every ply is.

use std::collections::{HashMap, HashSet};

use futures_util::future::try_join_all;
use shakmaty::{Chess, Color, Position};

use super::{
    AnalysisError,
    pool::{AnalysisLimits, AnalysisPool, PositionAnalysis, RankedMove, parse_fen_in, play},
    winrate::{
        Classification, Phase, WinModel, centipawn_loss, game_accuracy, lichess_win_percent,
        move_accuracy,
    },
};
use crate::{
    board::Variant,
    engine::Score,
    store::{GameAnalysisRecord, GameRow, GameStatus, PlyAnalysisRecord, Store},
};

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

/// Whether an answer came from the cache, an engine, or the rules alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Cache,
    Engine,
    Rules,
}

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
    /// game's accuracy.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::BadFen`] or [`AnalysisError::BadPly`] for stored data that does not replay,
    /// the engine's errors, and [`AnalysisError::Store`].
    pub async fn analyse_game(&self, game: &GameRow) -> Result<GameReport, AnalysisError> {
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

        let todo: Vec<usize> = (0..plies.len())
            .filter(|&i| !done.contains(&plies[i].ply))
            .collect();
        let mut wanted: Vec<usize> = todo.iter().flat_map(|&i| [i, i + 1]).collect();
        wanted.sort_unstable();
        wanted.dedup();
        // One search per distinct position, even when a game repeats one.
        let mut by_key: HashMap<String, usize> = HashMap::new();
        for &i in &wanted {
            by_key
                .entry(cache_key(game.variant, &positions[i].0))
                .or_insert(i);
        }
        let draw_by_rule = matches!(
            game.termination.as_deref(),
            Some("insufficient_material" | "fivefold_repetition" | "seventy_five_move_rule")
        );
        let final_index = plies.len();
        let answers = try_join_all(by_key.iter().map(|(key, &i)| {
            let (fen, position) = &positions[i];
            let drawn = draw_by_rule && i == final_index;
            async move {
                let answer = self.position(game.variant, fen, position, drawn).await?;
                Ok::<_, AnalysisError>((key.clone(), answer))
            }
        }))
        .await?;
        let mut report = GameReport {
            plies: plies.len() as u32,
            ..GameReport::default()
        };
        let mut analyses: HashMap<String, PositionAnalysis> = HashMap::new();
        for (key, (analysis, source)) in answers {
            match source {
                Source::Cache => report.cached += 1,
                Source::Engine => report.searched += 1,
                Source::Rules => {}
            }
            analyses.insert(key, analysis);
        }
        let analysis_at = |i: usize| &analyses[&cache_key(game.variant, &positions[i].0)];

        for &i in &todo {
            let ply = &plies[i];
            let (fen, position) = &positions[i];
            let before = analysis_at(i);
            let after = analysis_at(i + 1);
            let terminal = (i + 1 == plies.len())
                .then(|| {
                    game.termination
                        .as_deref()
                        .and_then(Classification::terminal)
                })
                .flatten();
            let all = if self.settings.all_moves {
                Some(self.all_moves(game.variant, fen).await?)
            } else {
                None
            };
            let record = self.verdict(ply.ply, &ply.uci, position, before, after, terminal, all)?;
            self.store.record_ply_analysis(game.id, &record)?;
            report.analysed += 1;
        }

        if todo.len() + done.len() >= plies.len() {
            let records = self.store.ply_analyses(game.id)?;
            let first = positions.first().map_or(Color::White, |(_, p)| p.turn());
            let (white_accuracy, black_accuracy) = accuracies(&records, first);
            self.store.record_game_analysis(
                game.id,
                &GameAnalysisRecord {
                    engine_id: self.engine_id.clone(),
                    limits_key: self.settings.limits.key(),
                    win_model: self.settings.win_model.as_str().to_owned(),
                    white_accuracy,
                    black_accuracy,
                },
            )?;
            report.complete = true;
        }
        Ok(report)
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
            None => (top_rank, top_rank.map(|r| before.top[r as usize - 1].score)),
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
            cp_loss: centipawn_loss(before.score, after.score),
            accuracy,
            phase: Phase::of(position, ply).as_str().to_owned(),
            classification: classification.as_str().to_owned(),
        })
    }

    /// One position's analysis: by the rules when the game is over there, else from the cache,
    /// else from an engine (and then cached).
    async fn position(
        &self,
        variant: Variant,
        fen: &str,
        position: &Chess,
        drawn: bool,
    ) -> Result<(PositionAnalysis, Source), AnalysisError> {
        if drawn || position.legal_moves().is_empty() {
            // Mated, stalemated or drawn by a rule: nothing to search, and the engine's view of a
            // drawn-by-rule position (it may see winning chances) is not the game's.
            let score = if position.is_checkmate() {
                Score::Mate(0)
            } else {
                Score::Cp(0)
            };
            let analysis = PositionAnalysis {
                score,
                best: None,
                pv: Vec::new(),
                top: Vec::new(),
            };
            return Ok((analysis, Source::Rules));
        }
        let key = cache_key(variant, fen);
        let limits_key = self.settings.limits.key();
        if let Some(json) = self
            .store
            .analysis_cache_get(&key, &self.engine_id, &limits_key)?
        {
            let analysis = serde_json::from_str(&json).map_err(|e| AnalysisError::BadCache {
                fen: key.clone(),
                reason: e.to_string(),
            })?;
            return Ok((analysis, Source::Cache));
        }
        let analysis = self
            .pool
            .analyse_in(variant, fen, &self.settings.limits)
            .await?;
        let json = serde_json::to_string(&analysis).expect("an analysis always serialises");
        self.store
            .analysis_cache_put(&key, &self.engine_id, &limits_key, &json)?;
        Ok((analysis, Source::Engine))
    }

    /// Every legal move of `fen` with its score, through the cache.
    async fn all_moves(
        &self,
        variant: Variant,
        fen: &str,
    ) -> Result<Vec<RankedMove>, AnalysisError> {
        let key = cache_key(variant, fen);
        let limits_key = format!("{} all-moves", self.settings.limits.key());
        if let Some(json) = self
            .store
            .analysis_cache_get(&key, &self.engine_id, &limits_key)?
        {
            return serde_json::from_str(&json).map_err(|e| AnalysisError::BadCache {
                fen: key,
                reason: e.to_string(),
            });
        }
        let all = self
            .pool
            .score_all_moves_in(variant, fen, &self.settings.limits)
            .await?;
        let json = serde_json::to_string(&all).expect("moves always serialise");
        self.store
            .analysis_cache_put(&key, &self.engine_id, &limits_key, &json)?;
        Ok(all)
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
        let t = store.open_tournament("t", "t.lua", "{}").unwrap();
        for name in ["w", "b"] {
            store
                .upsert_player(t.id, &PlayerRecord::new(name, "random", "{}"))
                .unwrap();
        }
        store
            .schedule_games(t.id, &[ScheduledGame::new(index, 0, "w", "b")])
            .unwrap();
        let row = store
            .games(t.id)
            .unwrap()
            .into_iter()
            .find(|g| g.index == index)
            .unwrap();
        store.mark_game_started(row.id, "h", 1).unwrap();
        let mut game = Game::new(None, 0).unwrap();
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
        let report = analyser.analyse_game(&game).await.unwrap();
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
    async fn positions_shared_by_games_are_searched_once() {
        let Some(pool) = pool() else { return };
        let store = Store::open_in_memory().unwrap();
        let first = store_game(
            &store,
            0,
            &["e2e4", "e7e5", "g1f3"],
            "1/2-1/2",
            "move_limit",
        );
        let second = store_game(
            &store,
            1,
            &["e2e4", "e7e5", "b1c3"],
            "1/2-1/2",
            "move_limit",
        );
        let analyser = Analyser::new(&store, &pool, settings()).await.unwrap();

        let one = analyser.analyse_game(&first).await.unwrap();
        assert_eq!((one.searched, one.cached), (4, 0));
        let requests = pool.engine_requests();
        assert_eq!(requests, 4);

        // The start position, after 1.e4 and after 1...e5 come from the cache; only Nc3 is new.
        let two = analyser.analyse_game(&second).await.unwrap();
        assert_eq!((two.searched, two.cached), (1, 3));
        assert_eq!(pool.engine_requests(), requests + 1);
        let plies = store.ply_analyses(second.id).unwrap();
        assert_eq!(plies[2].classification, "move_limit_reached");
        assert_eq!(
            store.ply_analyses(first.id).unwrap()[..2],
            plies[..2],
            "identical positions give identical verdicts"
        );

        // Nothing is left to do, and asking again changes nothing.
        let again = analyser.analyse_game(&second).await.unwrap();
        assert_eq!(
            (again.analysed, again.searched, again.complete),
            (0, 0, true)
        );
        assert_eq!(pool.engine_requests(), requests + 1);
        pool.shutdown().await;
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
