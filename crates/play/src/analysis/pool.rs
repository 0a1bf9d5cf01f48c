//! A pool of persistent engine processes that answers analysis requests.
//!
//! Both anchors start a fresh Stockfish for every call, which costs more than the search itself; here
//! up to `processes` engines stay alive and serve requests in turn. A single request
//! ([`AnalysisPool::analyse`]) whose engine crashes, hangs or breaks the protocol is retried once: the
//! engine's actor has already replaced the faulty process, so the retry runs on a fresh one.
//!
//! A run of searches that should share one hash (the positions of a game) leases a process for the
//! whole run as an [`AnalysisSession`]: it starts with `ucinewgame`, which clears the hash and the
//! search histories, so with `Threads = 1` what the run yields depends only on the run itself, not on
//! what the process searched before. Such a run is retried whole by its caller, never search by
//! search, for the same reason.

use std::sync::{
    Mutex, PoisonError,
    atomic::{AtomicU64, Ordering},
};

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position, fen::Fen, uci::UciMove};
use tokio::sync::{Semaphore, SemaphorePermit};
use tracing::warn;

use super::AnalysisError;
use crate::board::Variant;
use crate::engine::{Analysis, EngineError, EngineHandle, EngineSpec, Score, SearchLimits};

/// How deep to analyse and how many lines to report. Defaults follow the papers: depth 20, 3 lines
/// (ChessArena's top 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AnalysisLimits {
    /// `go depth N`.
    pub depth: Option<u32>,
    /// `go nodes N`.
    pub nodes: Option<u64>,
    /// `go movetime N`, in milliseconds (not reproducible: the cache key records it anyway).
    pub movetime_ms: Option<u64>,
    /// How many best lines to report (`MultiPV`), at least 1.
    pub multipv: u32,
}

impl Default for AnalysisLimits {
    fn default() -> AnalysisLimits {
        AnalysisLimits {
            depth: Some(20),
            nodes: None,
            movetime_ms: None,
            multipv: 3,
        }
    }
}

impl AnalysisLimits {
    /// The search limits sent with `go`.
    pub fn search(&self) -> SearchLimits {
        SearchLimits {
            nodes: self.nodes,
            depth: self.depth,
            movetime_ms: self.movetime_ms,
        }
    }

    /// A stable text naming these limits, part of the analysis cache key (`depth=20 multipv=3`).
    pub fn key(&self) -> String {
        let mut key = String::new();
        if let Some(d) = self.depth {
            key.push_str(&format!("depth={d} "));
        }
        if let Some(n) = self.nodes {
            key.push_str(&format!("nodes={n} "));
        }
        if let Some(ms) = self.movetime_ms {
            key.push_str(&format!("movetime_ms={ms} "));
        }
        key.push_str(&format!("multipv={}", self.multipv.max(1)));
        key
    }
}

/// One candidate move and its score (side to move's view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankedMove {
    /// The move in UCI notation.
    pub uci: String,
    /// Its evaluation for the side to move.
    pub score: Score,
}

/// What the engine says about one position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PositionAnalysis {
    /// The evaluation for the side to move (`mate 0` when it is checkmated).
    pub score: Score,
    /// The best move, `None` when the position has no legal move.
    pub best: Option<String>,
    /// The principal variation, best move first.
    pub pv: Vec<String>,
    /// The best lines' first moves and scores, best first (up to `multipv`).
    pub top: Vec<RankedMove>,
}

impl PositionAnalysis {
    /// The 1-based rank of `uci` among the top moves, if it is there.
    pub fn rank_of(&self, uci: &str) -> Option<u32> {
        self.top
            .iter()
            .position(|m| m.uci == uci)
            .map(|i| i as u32 + 1)
    }

    fn from_engine(fen: &str, analysis: Analysis) -> Result<PositionAnalysis, AnalysisError> {
        let first = analysis
            .lines
            .first()
            .ok_or_else(|| AnalysisError::NoScore {
                fen: fen.to_owned(),
            })?;
        let score = first.score.ok_or_else(|| AnalysisError::NoScore {
            fen: fen.to_owned(),
        })?;
        let top = analysis
            .lines
            .iter()
            .filter_map(|line| {
                Some(RankedMove {
                    uci: line.pv.first()?.clone(),
                    score: line.score?,
                })
            })
            .collect();
        Ok(PositionAnalysis {
            score,
            best: analysis.best,
            pv: first.pv.clone(),
            top,
        })
    }
}

/// Up to `processes` persistent engines serving analysis requests.
#[derive(Debug)]
pub struct AnalysisPool {
    spec: EngineSpec,
    idle: Mutex<Vec<EngineHandle>>,
    permits: Semaphore,
    requests: AtomicU64,
    retries: AtomicU64,
    sessions: AtomicU64,
}

impl AnalysisPool {
    /// A pool of at most `processes` (at least 1) engines started from `spec` on demand.
    pub fn new(spec: EngineSpec, processes: usize) -> AnalysisPool {
        AnalysisPool {
            spec,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(processes.max(1)),
            requests: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
        }
    }

    /// How many sessions were opened, each with one `ucinewgame`.
    pub fn sessions(&self) -> u64 {
        self.sessions.load(Ordering::Relaxed)
    }

    /// Leases a process for a run of searches of positions of one `variant` game that share its
    /// hash, after `ucinewgame` (which clears the hash and the search histories). Every search of the
    /// session is in `variant`: for Chess960 with `UCI_Chess960` on, its moves king-takes-rook UCI.
    /// Waits while `processes` sessions or searches are under way.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Start`] when no engine can be started, [`AnalysisError::NewGame`] when the
    /// engine fails `ucinewgame`.
    pub async fn session(&self, variant: Variant) -> Result<AnalysisSession<'_>, AnalysisError> {
        let permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let handle = self.take().await?;
        self.sessions.fetch_add(1, Ordering::Relaxed);
        let cleared = handle.new_game().await;
        let session = AnalysisSession {
            pool: self,
            variant,
            handle: Some(handle),
            _permit: permit,
        };
        cleared.map_err(|source| AnalysisError::NewGame { source })?;
        Ok(session)
    }

    /// Counts a run of searches that is being retried after an engine fault.
    pub(crate) fn count_retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// How many searches were sent to engines (retries included): what the cache saves.
    pub fn engine_requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// How many requests were retried after an engine fault.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// A name for the engine and its settings, for the analysis cache: what the engine calls itself
    /// (starting one if none runs yet) followed by every option of the spec.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Engine`] when no engine can be started.
    pub async fn engine_id(&self) -> Result<String, AnalysisError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let handle = self.take().await?;
        let mut id = handle
            .id_name()
            .unwrap_or(self.spec.command.as_str())
            .to_owned();
        for (name, value) in &self.spec.options {
            id.push_str(&format!(" {name}={value}"));
        }
        self.give_back(handle);
        Ok(id)
    }

    /// Analyses `fen` within `limits`, reporting `limits.multipv` lines.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Engine`] when the engine fails twice (or cannot start),
    /// [`AnalysisError::NoScore`] when it answers without any scored line.
    pub async fn analyse(
        &self,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<PositionAnalysis, AnalysisError> {
        self.analyse_in(Variant::Standard, fen, limits).await
    }

    /// [`analyse`](AnalysisPool::analyse) of a position of a `variant` game: a Chess960 one is
    /// searched with `UCI_Chess960` on, and its moves are king-takes-rook UCI.
    ///
    /// # Errors
    ///
    /// As for [`analyse`](AnalysisPool::analyse).
    pub async fn analyse_in(
        &self,
        variant: Variant,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<PositionAnalysis, AnalysisError> {
        let analysis = self
            .search(variant, fen, limits, limits.multipv, &[])
            .await?;
        PositionAnalysis::from_engine(fen, analysis)
    }

    /// The score (side to move's view) of one move in `fen`, searched alone with `go searchmoves`;
    /// for a played move outside the top lines.
    ///
    /// # Errors
    ///
    /// As for [`analyse`](AnalysisPool::analyse).
    #[cfg(test)]
    pub(crate) async fn score_move(
        &self,
        fen: &str,
        uci: &str,
        limits: &AnalysisLimits,
    ) -> Result<Score, AnalysisError> {
        let analysis = self
            .search(Variant::Standard, fen, limits, 1, &[uci.to_owned()])
            .await?;
        Ok(PositionAnalysis::from_engine(fen, analysis)?.score)
    }

    /// Every legal move of `fen` with its score, best first: one search with `MultiPV` set to the
    /// number of legal moves (the move-advantage rate needs them all).
    ///
    /// # Errors
    ///
    /// [`AnalysisError::BadFen`] for an unreadable position; otherwise as for
    /// [`analyse`](AnalysisPool::analyse).
    pub(crate) async fn score_all_moves(
        &self,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<Vec<RankedMove>, AnalysisError> {
        self.score_all_moves_in(Variant::Standard, fen, limits)
            .await
    }

    /// [`score_all_moves`](AnalysisPool::score_all_moves) in a `variant` game.
    ///
    /// # Errors
    ///
    /// As for [`score_all_moves`](AnalysisPool::score_all_moves).
    pub(crate) async fn score_all_moves_in(
        &self,
        variant: Variant,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<Vec<RankedMove>, AnalysisError> {
        let legal = parse_fen_in(variant, fen)?.legal_moves().len() as u32;
        if legal == 0 {
            return Ok(Vec::new());
        }
        let analysis = self.search(variant, fen, limits, legal, &[]).await?;
        Ok(PositionAnalysis::from_engine(fen, analysis)?.top)
    }

    /// Quits every engine.
    pub async fn shutdown(&self) {
        let idle: Vec<EngineHandle> = self.idle().drain(..).collect();
        futures_util::future::join_all(idle.into_iter().map(EngineHandle::shutdown)).await;
    }

    async fn search(
        &self,
        variant: Variant,
        fen: &str,
        limits: &AnalysisLimits,
        multipv: u32,
        searchmoves: &[String],
    ) -> Result<Analysis, AnalysisError> {
        let search = limits.search();
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let handle = self.take().await?;
        self.requests.fetch_add(1, Ordering::Relaxed);
        let mut result = handle
            .analyse_in(variant, fen, &search, multipv, searchmoves)
            .await;
        if let Err(
            err @ (EngineError::Crashed { .. }
            | EngineError::Timeout { .. }
            | EngineError::Protocol { .. }),
        ) = &result
        {
            // The handle's actor discarded the faulty process; the retry starts a fresh one.
            warn!(engine = %self.spec.name, error = %err, fen, "analysis failed; retrying on a fresh process");
            self.retries.fetch_add(1, Ordering::Relaxed);
            self.requests.fetch_add(1, Ordering::Relaxed);
            result = handle
                .analyse_in(variant, fen, &search, multipv, searchmoves)
                .await;
        }
        self.give_back(handle);
        result.map_err(|source| AnalysisError::Engine {
            fen: fen.to_owned(),
            source,
        })
    }

    /// An idle engine, or a new one. The caller holds a permit, so at most `processes` exist.
    async fn take(&self) -> Result<EngineHandle, AnalysisError> {
        let idle = self.idle().pop();
        match idle {
            Some(handle) => Ok(handle),
            None => EngineHandle::spawn(self.spec.clone())
                .await
                .map_err(|source| AnalysisError::Start { source }),
        }
    }

    fn give_back(&self, handle: EngineHandle) {
        self.idle().push(handle);
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<EngineHandle>> {
        // Pushes and pops are atomic, so a panic elsewhere cannot leave the list inconsistent.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One process leased from an [`AnalysisPool`] for a run of searches that share its hash
/// ([`AnalysisPool::session`]); the process goes back to the pool when the session is dropped.
#[derive(Debug)]
pub struct AnalysisSession<'a> {
    pool: &'a AnalysisPool,
    /// The variant of the game whose positions the session searches: one per session, so that the
    /// engine's `UCI_Chess960` cannot change between two searches sharing a hash.
    variant: Variant,
    /// Always `Some` until dropped.
    handle: Option<EngineHandle>,
    _permit: SemaphorePermit<'a>,
}

impl AnalysisSession<'_> {
    /// Analyses `fen` (a position of the session's variant) within `limits`, reporting
    /// `limits.multipv` lines, on this session's process. Not retried: a fault fails the run, which its caller retries whole.
    ///
    /// # Errors
    ///
    /// [`AnalysisError::Engine`] when the engine fails, [`AnalysisError::NoScore`] when it answers
    /// without any scored line.
    pub async fn analyse(
        &self,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<PositionAnalysis, AnalysisError> {
        let analysis = self.search(fen, limits, limits.multipv).await?;
        PositionAnalysis::from_engine(fen, analysis)
    }

    /// Every legal move of `fen` with its score, best first, as
    /// [`AnalysisPool::score_all_moves_in`] in the session's variant but on this session's process.
    ///
    /// # Errors
    ///
    /// As for [`AnalysisPool::score_all_moves`], without its retry.
    pub(crate) async fn score_all_moves(
        &self,
        fen: &str,
        limits: &AnalysisLimits,
    ) -> Result<Vec<RankedMove>, AnalysisError> {
        let legal = parse_fen_in(self.variant, fen)?.legal_moves().len() as u32;
        if legal == 0 {
            return Ok(Vec::new());
        }
        let analysis = self.search(fen, limits, legal).await?;
        Ok(PositionAnalysis::from_engine(fen, analysis)?.top)
    }

    async fn search(
        &self,
        fen: &str,
        limits: &AnalysisLimits,
        multipv: u32,
    ) -> Result<Analysis, AnalysisError> {
        let handle = self.handle.as_ref().expect("set until drop");
        self.pool.requests.fetch_add(1, Ordering::Relaxed);
        handle
            .analyse_in(self.variant, fen, &limits.search(), multipv, &[])
            .await
            .map_err(|source| AnalysisError::Engine {
                fen: fen.to_owned(),
                source,
            })
    }
}

impl Drop for AnalysisSession<'_> {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            // A process whose search failed was already replaced by its actor, so it is reusable.
            self.pool.give_back(handle);
        }
    }
}

/// Reads a FEN of a standard game into a position.
#[cfg(test)]
pub(crate) fn parse_fen(fen: &str) -> Result<Chess, AnalysisError> {
    parse_fen_in(Variant::Standard, fen)
}

/// Reads a FEN of a `variant` game into a position.
pub(crate) fn parse_fen_in(variant: Variant, fen: &str) -> Result<Chess, AnalysisError> {
    let bad = |reason: String| AnalysisError::BadFen {
        fen: fen.to_owned(),
        reason,
    };
    fen.parse::<Fen>()
        .map_err(|e| bad(e.to_string()))?
        .into_position(variant.castling_mode())
        .map_err(|e| bad(e.to_string()))
}

/// Plays `uci` in `position`, or says why it cannot be played.
pub(crate) fn play(position: &Chess, uci: &str) -> Option<Chess> {
    let mv = uci.parse::<UciMove>().ok()?.to_move(position).ok()?;
    let mut next = position.clone();
    next.play_unchecked(mv);
    Some(next)
}

#[cfg(test)]
mod tests {
    use std::{path::Path, time::Duration};

    use shakmaty::CastlingMode;

    use super::*;

    const STOCKFISH: &str = "/usr/games/stockfish";

    fn stockfish() -> Option<EngineSpec> {
        if !Path::new(STOCKFISH).exists() {
            crate::test_parts::missing(
                "analysis::pool tests",
                STOCKFISH,
                "apt-get install stockfish",
            );
            return None;
        }
        Some(
            EngineSpec::new("sf-analysis", STOCKFISH)
                .option("Threads", "1")
                .option("Hash", "16"),
        )
    }

    fn depth(d: u32, multipv: u32) -> AnalysisLimits {
        AnalysisLimits {
            depth: Some(d),
            nodes: None,
            movetime_ms: None,
            multipv,
        }
    }

    #[test]
    fn limits_keys_name_every_limit() {
        assert_eq!(AnalysisLimits::default().key(), "depth=20 multipv=3");
        let limits = AnalysisLimits {
            depth: None,
            nodes: Some(5000),
            movetime_ms: Some(100),
            multipv: 0,
        };
        assert_eq!(limits.key(), "nodes=5000 movetime_ms=100 multipv=1");
    }

    #[tokio::test]
    async fn top_three_lines_are_ranked_and_legal() {
        let Some(spec) = stockfish() else { return };
        let pool = AnalysisPool::new(spec, 2);
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
        let a = pool.analyse(fen, &depth(8, 3)).await.expect("an analysis");
        assert_eq!(a.top.len(), 3, "{a:?}");
        let position = parse_fen(fen).unwrap();
        for m in &a.top {
            assert!(play(&position, &m.uci).is_some(), "{} is legal", m.uci);
        }
        // Best first: scores do not increase down the list, and line 1 is the best move and PV.
        let cps: Vec<i32> = a
            .top
            .iter()
            .map(|m| match m.score {
                Score::Cp(cp) => cp,
                Score::Mate(_) => panic!("no mate here"),
            })
            .collect();
        assert!(cps.windows(2).all(|w| w[0] >= w[1]), "{cps:?}");
        assert_eq!(a.best.as_deref(), Some(a.top[0].uci.as_str()));
        assert_eq!(a.pv.first(), a.best.as_ref());
        assert_eq!(a.score, a.top[0].score);
        assert_eq!(a.rank_of(&a.top[2].uci), Some(3));
        let outside = position
            .legal_moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .find(|uci| a.top.iter().all(|t| &t.uci != uci))
            .expect("more than three legal moves");
        assert_eq!(a.rank_of(&outside), None);
        assert_eq!(pool.engine_requests(), 1);
        pool.shutdown().await;
    }

    #[tokio::test]
    async fn mate_scores_and_mated_positions() {
        let Some(spec) = stockfish() else { return };
        let pool = AnalysisPool::new(spec, 1);
        // White mates in one with Ra8.
        let fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1";
        let a = pool.analyse(fen, &depth(6, 3)).await.expect("an analysis");
        assert_eq!(a.score, Score::Mate(1));
        assert_eq!(a.best.as_deref(), Some("a1a8"));
        // The position after the mate: Black to move, mated, no best move.
        let mated = "R5k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1";
        let m = pool
            .analyse(mated, &depth(6, 3))
            .await
            .expect("an analysis");
        assert_eq!((m.score, m.best), (Score::Mate(0), None));
        // Black to move: Kh8 walks into Ra8 mate, which a search of that move alone finds.
        let threatened = "6k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 1";
        let played = pool
            .score_move(threatened, "g8h8", &depth(6, 3))
            .await
            .expect("a score");
        assert_eq!(played, Score::Mate(-1));
        pool.shutdown().await;
    }

    #[tokio::test]
    async fn every_legal_move_is_scored() {
        let Some(spec) = stockfish() else { return };
        let pool = AnalysisPool::new(spec, 1);
        // King and pawn against king: White has 5 king moves and 1 pawn move.
        let fen = "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1";
        let all = pool
            .score_all_moves(fen, &depth(6, 3))
            .await
            .expect("scores");
        let mut moves: Vec<&str> = all.iter().map(|m| m.uci.as_str()).collect();
        moves.sort_unstable();
        let mut legal: Vec<String> = parse_fen(fen)
            .unwrap()
            .legal_moves()
            .iter()
            .map(|m| m.to_uci(CastlingMode::Standard).to_string())
            .collect();
        legal.sort_unstable();
        assert_eq!(moves, legal);
        // A move searched alone scores what it scores among all of them (same depth, same engine).
        let e2e4 = all.iter().find(|m| m.uci == "e2e4").unwrap();
        let alone = pool.score_move(fen, "e2e4", &depth(6, 1)).await.unwrap();
        assert!(
            matches!((alone, e2e4.score), (Score::Cp(a), Score::Cp(b)) if (a - b).abs() <= 60),
            "{alone:?} vs {:?}",
            e2e4.score
        );
        // The pool went back to single-line searches after the all-moves search.
        let one = pool.analyse(fen, &depth(6, 1)).await.unwrap();
        assert_eq!(one.top.len(), 1);
        pool.shutdown().await;
    }

    #[tokio::test]
    async fn a_crashed_request_is_retried_on_a_fresh_process() {
        let state = tempfile::tempdir().expect("temp dir");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/engines/crash_after_go.py");
        let mut spec = EngineSpec::new("crashy", path.to_str().unwrap());
        spec.args = vec![state.path().to_str().unwrap().to_owned(), "1".to_owned()];
        spec.move_timeout_margin = Duration::from_millis(400);
        let pool = AnalysisPool::new(spec, 1);
        // The first process dies on its first `go`; the retry runs on its replacement.
        let a = pool
            .analyse(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                &depth(1, 1),
            )
            .await
            .expect("the retry answers");
        assert_eq!(a.best.as_deref(), Some("e2e4"));
        assert_eq!(a.score, Score::Cp(12));
        assert_eq!((pool.engine_requests(), pool.retries()), (2, 1));
        let starts = std::fs::read_to_string(state.path().join("starts")).unwrap();
        assert_eq!(starts.trim(), "2");
        pool.shutdown().await;
    }
}
